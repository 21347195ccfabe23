"""The screening rules end to end, on the test Village of conftest.py, in the CRSs users send."""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esc_gis import load_profile, screen
from esc_gis.errors import FarFromZoneWarning, ValidationError
from esc_gis.screening import CONTRACT_COLUMNS, run_findings

from .conftest import CRS, K, L, box, sites, square_sqft

DEMO_LAYERS = Path(__file__).resolve().parents[1] / "layers" / "winneconne-demo" / "layers.toml"

INPUT_CRSS = ["EPSG:7594", "EPSG:4326", "EPSG:3857", "EPSG:3071"]


def codes(row) -> list[str]:
    return [f["code"] for f in json.loads(row["findings"])]


def one(layer_set, geom, crs=CRS, **attrs):
    gdf = sites([{"site_id": "A", "geometry": geom, **attrs}], crs)
    return screen(gdf, layers=layer_set).iloc[0]


def test_contract_columns_and_types(layer_set):
    out = screen(sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}]), layers=layer_set)
    assert list(out.columns[: len(CONTRACT_COLUMNS)]) == list(CONTRACT_COLUMNS)
    assert out.geometry.name == "geometry" and out.crs.to_epsg() == 7594
    row = out.iloc[0]
    assert isinstance(row["site_id"], str)
    assert row["jurisdiction"] in ("inside", "partial", "outside")
    for col in (
        "disturbed_sqft",
        "disturbed_acres",
        "disturbed_in_jurisdiction_sqft",
        "disturbed_in_village_sqft",
        "plan_disturbed_sqft",
        "protective_disturbed_sqft",
        "nearest_water_ft",
    ):
        assert isinstance(row[col], float), col
    assert out["permit_may_be_required"].dtype == bool and out["sediment_standard"].dtype == bool
    for f in json.loads(row["findings"]):
        assert set(f) == {"code", "section", "basis", "message"} and f["section"] and f["message"]
        assert f["basis"] in ("ordinance", "interpretation", "policy", "technical_standard")


@pytest.mark.parametrize("crs", INPUT_CRSS)
def test_area_is_measured_in_county_feet_whatever_the_input_crs(layer_set, crs):
    # 100 x 100 ftUS = 10,000 sq ftUS = 10,000.04 sq ft, wherever it came from.
    row = one(layer_set, box(100, 100, 200, 200), crs)
    assert row["disturbed_sqft"] == pytest.approx(10_000 * K, rel=1e-6)
    assert row["disturbed_acres"] == pytest.approx(10_000 * K / 43_560, rel=1e-6)
    assert row["permit"] == "required" and row["standards"] == "540-7B"


def test_web_mercator_would_have_inflated_the_area(layer_set):
    gdf = sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}], "EPSG:3857")
    assert gdf.area.iloc[0] * 10.7639 > 1.9 * 10_000  # what a naive desktop measurement reads
    assert screen(gdf, layers=layer_set).iloc[0]["disturbed_sqft"] == pytest.approx(10_000 * K, rel=1e-6)


@pytest.mark.parametrize(
    ("area", "permit", "standards"),
    [(3_999.99, "not_required", "540-7A"), (4_000.01, "required", "540-7B"), (1_000, "not_required", "540-7A")],
)
def test_permit_threshold(layer_set, area, permit, standards):
    row = one(layer_set, square_sqft(100, 100, area))
    assert row["disturbed_sqft"] == pytest.approx(area, abs=1e-6)
    assert row["permit"] == permit and row["standards"] == standards
    cited = {f["code"]: f["section"] for f in json.loads(row["findings"])}
    assert cited.get("permit_required", cited.get("permit_not_required")) in ("§ 540-4A(1)(a)", "§ 540-4A(1)(b)")


def _exact_square(area_sqft: float, *, above: bool) -> shapely.Polygon:
    """A 50 ft wide rectangle whose measured area is within a few 1e-9 sq ft of ``area_sqft``,
    on the chosen side: its top edge is moved one float step at a time."""
    from pyproj import CRS as P

    from esc_gis.measure import area_sqft as measure

    x0, y0 = 745_100.0, 505_100.0
    y1 = y0 + area_sqft / K / 50.0
    step = np.inf if above else -np.inf
    for _ in range(10_000):
        g = shapely.box(x0, y0, x0 + 50.0, y1)
        a = measure([g], P(CRS))[0]
        if (a >= area_sqft) if above else (a < area_sqft):
            return g
        y1 = np.nextafter(y1, step)
    raise AssertionError("could not build the edge case")


@pytest.mark.parametrize(("threshold", "column"), [(4_000.0, "permit"), (43_560.0, "sediment_standard")])
def test_exact_threshold_edges_compare_unrounded(layer_set, threshold, column):
    at = one(layer_set, _exact_square(threshold, above=True))
    below = one(layer_set, _exact_square(threshold, above=False))
    assert at["disturbed_sqft"] >= threshold > below["disturbed_sqft"]
    assert threshold - below["disturbed_sqft"] < 1e-6
    if column == "permit":
        assert (at["permit"], below["permit"]) == ("required", "not_required")
    else:
        assert at["sediment_standard"] and not below["sediment_standard"]
        assert below["permit"] == "required"
    assert "near_threshold" in codes(at) and "near_threshold" in codes(below)


@pytest.mark.parametrize(
    ("area", "near"),
    [(3_960.5, True), (3_959, False), (4_039.5, True), (4_041, False), (43_200, True), (43_000, False)],
)
def test_near_threshold_within_one_percent(layer_set, area, near):
    assert ("near_threshold" in codes(one(layer_set, square_sqft(100, 100, area)))) is near


def test_sediment_standard_from_one_acre(layer_set):
    row = one(layer_set, square_sqft(100, 100, 50_000))
    assert row["sediment_standard"] and row["permit"] == "required"
    f = {x["code"]: x for x in json.loads(row["findings"])}
    assert f["sediment_standard"]["section"] == "§ 540-7B(3)(b)"
    assert "5 tons per acre per year" in f["sediment_standard"]["message"]
    small = one(layer_set, square_sqft(100, 100, 5_000))
    assert "less_stringent_possible" in codes(small) and not small["sediment_standard"]


@pytest.mark.parametrize("crs", INPUT_CRSS)
def test_partial_site_keeps_both_areas_and_is_decided_on_the_whole(layer_set, crs):
    # 200 x 100 ftUS straddling the west edge (x = 0): half inside.
    row = one(layer_set, box(-100, 100, 100, 200), crs)
    assert row["jurisdiction"] == "partial"
    assert row["disturbed_sqft"] == pytest.approx(20_000 * K, rel=1e-6)
    assert row["disturbed_in_village_sqft"] == pytest.approx(10_000 * K, rel=1e-5)
    # § 540-4B is silent on a site partly inside: by default the whole disturbance decides.
    assert row["plan_disturbed_sqft"] == row["disturbed_sqft"]
    assert "jurisdiction_partial" in codes(row) and row["permit"] == "required"


def test_partial_site_is_a_reading_not_the_text(layer_set):
    # 10,000 sq ftUS in all, 3,000 inside (issue 13, 2.2): a permit on the whole, as an interpretation.
    row = one(layer_set, box(-70, 100, 30, 200))
    assert row["jurisdiction"] == "partial" and row["permit"] == "required"
    f = {x["code"]: x for x in json.loads(row["findings"])}
    part = f["jurisdiction_partial"]
    assert part["basis"] == "interpretation" and part["section"] == "§ 540-4B"
    assert (
        part["message"].startswith("Reading:")
        and "beyond the boundaries and jurisdiction to which § 540-4B confines this article" in part["message"]
        and "another authority" not in part["message"]
    )
    assert "7,000.0" in part["message"] and "3,000.0" in part["message"]  # both figures kept
    assert "permit_not_required" not in f


def test_partial_site_inside_only_reading_is_a_profile_switch(layer_set, tmp_path):
    from esc_gis.profile import _builtin_path

    text = (
        _builtin_path("winneconne")
        .read_text()
        .replace('partial_jurisdiction = "whole"', 'partial_jurisdiction = "inside_only"')
    )
    (tmp_path / "inside.toml").write_text(text)
    row = screen(
        sites([{"site_id": "A", "geometry": box(-70, 100, 30, 200)}]),
        layers=layer_set,
        profile=tmp_path / "inside.toml",
    ).iloc[0]
    assert row["jurisdiction"] == "partial" and row["permit"] == "not_required"
    assert row["plan_disturbed_sqft"] == pytest.approx(3_000 * K, rel=1e-5)
    f = {x["code"]: x for x in json.loads(row["findings"])}
    assert f["jurisdiction_partial_inside_only"]["basis"] == "interpretation"
    assert "jurisdiction_partial" not in f


@pytest.mark.parametrize("crs", INPUT_CRSS)
def test_outside_and_enclave_are_outside_jurisdiction(layer_set, crs):
    for geom in (box(-500, 100, -300, 300), box(1650, 1650, 1750, 1750)):  # west of town; the enclave
        row = one(layer_set, geom, crs)
        assert row["jurisdiction"] == "outside"
        assert row["applicability"] == "outside_jurisdiction" and row["permit"] == "not_applicable"
        assert row["disturbed_in_village_sqft"] == pytest.approx(0, abs=1e-6)
        # Both lie within 1.5 miles of the limits (§ 540-5 EXTRATERRITORIAL): "does not apply" is then a reading.
        assert row["standards"] == "" and "outside_jurisdiction_extraterritorial" in codes(row)


def test_a_site_outside_is_measured_from_the_limits_for_the_extraterritorial_area(layer_set):
    """§ 540-5 EXTRATERRITORIAL: "The unincorporated area ... within 1.5 miles of a fourth-class city or Village"
    (7,920 ft), which no rule of Article I uses (§ 540-4B reaches sites "within the boundaries and jurisdiction of
    the Village"): within it "does not apply" is a reading, beyond it the ordinance's. By hand, in the
    measuring CRS: the Village is box(0, 0, 2000, 2000), its enclave box(1600, 1600, 1800, 1800)."""

    def outside(geom):
        row = one(layer_set, geom, CRS)
        (f,) = [f for f in json.loads(row["findings"]) if f["code"].startswith("outside_jurisdiction")]
        return f["code"], f["basis"], f["message"]

    code, basis, message = outside(box(-500, 100, -300, 300))  # 300 ft west of the line
    assert (code, basis) == ("outside_jurisdiction_extraterritorial", "interpretation") and "300 ft outside" in message
    assert "50 ft outside" in outside(box(1650, 1650, 1750, 1750))[2]  # the enclave, 50 ft from its edge
    # The edge: 7,920 international ft is 7,919.984 US survey ft (the CRS's unit, 1200/3937 m): 7,919.98 US ft
    # is inside it, 7,920.00 US ft (7,920.016 ft) just past it.
    assert outside(box(-8119.98, 100, -7919.98, 300))[:2] == ("outside_jurisdiction_extraterritorial", "interpretation")
    assert outside(box(-8120, 100, -7920, 300))[:2] == ("outside_jurisdiction", "ordinance")


def test_boundary_sliver_does_not_make_a_site_partial(layer_set):
    # Digitised 0.001 ft over the line: 0.1 sq ft outside is a sliver, not a partial site.
    row = one(layer_set, box(-0.001, 100, 100, 200))
    assert row["jurisdiction"] == "inside"


@pytest.mark.parametrize(
    ("attrs", "applicability", "code", "section"),
    [
        ({"state_agency": True}, "excluded_state_agency", "state_agency", "§ 540-4C"),
        (
            {"activity": "agricultural_activity"},
            "exempt_agricultural",
            "agricultural_activity_exempt",
            "§ 540-4A(2)(a)",
        ),
        (
            {"activity": "silviculture"},
            "exempt_silviculture",
            "silviculture_exempt",
            "§ 540-4A(2)(b); § 540-5 SILVICULTURE ACTIVITIES",
        ),
    ],
)
@pytest.mark.parametrize("crs", ["EPSG:7594", "EPSG:4326", "EPSG:3071"])
def test_exclusions_and_exemptions(layer_set, attrs, applicability, code, section, crs):
    row = one(layer_set, square_sqft(100, 100, 20_000), crs, **attrs)
    assert row["applicability"] == applicability and row["permit"] == "not_applicable"
    assert row["standards"] == "" and not row["sediment_standard"]
    assert {f["code"]: f["section"] for f in json.loads(row["findings"])}[code] == section


@pytest.mark.parametrize("crs", ["EPSG:7594", "EPSG:4326", "EPSG:3857"])
def test_agricultural_production_area_is_not_exempt(layer_set, crs):
    row = one(layer_set, square_sqft(100, 100, 6_000), crs, activity="agricultural_production")
    assert row["applicability"] == "applies" and row["permit"] == "required"
    assert "agricultural_production_not_exempt" in codes(row)


@pytest.mark.parametrize(
    ("area", "permit", "standards"), [(20_000, "not_required", "540-7A"), (43_560, "required", "540-7B")]
)
@pytest.mark.parametrize("crs", ["EPSG:7594", "EPSG:4326", "EPSG:3071"])
def test_npdes_exempt_under_one_acre_follows_7a_only(layer_set, area, permit, standards, crs):
    row = one(layer_set, square_sqft(100, 100, area + (0.01 if crs == "EPSG:7594" else 1.0)), crs, npdes_exempt=True)
    assert row["permit"] == permit and row["standards"] == standards
    expected = "npdes_exempt_under_1_acre" if permit == "not_required" else "npdes_exemption_not_applicable"
    assert expected in codes(row)


def test_npdes_exempt_near_water_is_not_a_discretionary_permit(layer_set):
    row = one(layer_set, box(1700, 100, 1780, 120), npdes_exempt=True)
    assert row["protective_disturbed_sqft"] > 0 and not row["permit_may_be_required"]


@pytest.mark.parametrize("crs", ["EPSG:7594", "EPSG:4326", "EPSG:3857"])
def test_common_plan_adds_up_lots(layer_set, crs):
    gdf = sites(
        [
            {"site_id": "L1", "plan_id": "P", "geometry": square_sqft(100, 100, 2_500)},
            {"site_id": "L2", "plan_id": "P", "geometry": square_sqft(300, 100, 2_500)},
            {"site_id": "L3", "plan_id": None, "geometry": square_sqft(500, 100, 2_500)},
        ],
        crs,
    )
    out = screen(gdf, layers=layer_set).set_index("site_id")
    assert out.loc["L1", "plan_disturbed_sqft"] == pytest.approx(5_000, rel=1e-6)
    assert out.loc["L1", "disturbed_in_village_sqft"] == pytest.approx(2_500, rel=1e-6)
    assert list(out["permit"]) == ["required", "required", "not_required"]
    assert pd.isna(out.loc["L3", "plan_id"]) and out.loc["L3", "plan_disturbed_sqft"] == pytest.approx(2_500, rel=1e-6)
    assert "common_plan" in codes(out.loc["L1"]) and "common_plan" not in codes(out.loc["L3"])


def test_common_plan_counts_overlap_once_and_the_whole_of_a_partial_site(layer_set):
    gdf = sites(
        [
            {"site_id": "L1", "plan_id": "P", "geometry": box(-50, 100, 50, 150)},  # 5,000, 2,500 inside
            {"site_id": "L2", "plan_id": "P", "geometry": box(25, 100, 75, 150)},  # overlaps L1 by 1,250
        ]
    )
    out = screen(gdf, layers=layer_set)
    assert out["plan_disturbed_sqft"].iloc[0] == pytest.approx(6_250 * K)
    assert list(out["permit"]) == ["required", "required"]


def test_exempt_agricultural_area_never_counts_toward_a_plan(layer_set):
    gdf = sites(
        [
            {"site_id": "H", "plan_id": "P", "geometry": square_sqft(100, 100, 3_000)},
            {
                "site_id": "F",
                "plan_id": "P",
                "activity": "agricultural_activity",
                "geometry": square_sqft(300, 100, 2_000),
            },
        ]
    )
    out = screen(gdf, layers=layer_set).set_index("site_id")
    assert out.loc["H", "plan_disturbed_sqft"] == pytest.approx(3_000, rel=1e-6)
    assert out.loc["H", "permit"] == "not_required"
    assert "agricultural_area_not_counted" in codes(out.loc["H"])
    assert out.loc["F", "applicability"] == "exempt_agricultural" and out.loc["F", "permit"] == "not_applicable"


def test_overlapping_disturbed_limits_are_one_area(layer_set, tmp_path):
    s = sites([{"site_id": "A", "geometry": box(0, 0, 300, 300)}])
    d = sites(
        [{"site_id": "A", "geometry": box(100, 100, 150, 150)}, {"site_id": "A", "geometry": box(128, 100, 178, 150)}]
    )
    row = screen(s, disturbed=d, layers=layer_set).iloc[0]
    assert row["disturbed_sqft"] == pytest.approx(78 * 50 * K)  # 3,900, not 5,000
    assert row["permit"] == "not_required" and "overlaps_counted_once" in codes(row)


def test_site_without_disturbed_limits(layer_set):
    """A site no limit names is decided on its whole site, as --help says ("default: the whole site is
    disturbed"), never on 0 sq ft: B's 100 x 100 ft = 10,000 sq ft ("4,000 square feet or more") needs a permit."""
    s = sites([{"site_id": "A", "geometry": box(0, 0, 300, 300)}, {"site_id": "B", "geometry": box(400, 0, 500, 100)}])
    d = sites([{"site_id": "A", "geometry": box(10, 10, 110, 110)}])
    with pytest.warns(UserWarning, match=r"no polygon for 1 site\(s\): B\."):
        out = screen(s, disturbed=d, layers=layer_set).set_index("site_id")
    assert out.loc["B", "disturbed_sqft"] == pytest.approx(10_000 * K) and out.loc["B", "jurisdiction"] == "inside"
    assert "no_disturbed_limits" in codes(out.loc["B"]) and out.loc["B", "permit"] == "required"
    assert pd.isna(out.loc["B", "disturbed_limits"])  # nothing drawn: null, never the site nor POLYGON EMPTY
    assert out.loc["A", "disturbed_sqft"] == pytest.approx(10_000 * K)
    assert "no_disturbed_limits" not in codes(out.loc["A"])


def test_disturbance_drawn_outside_the_site_is_flagged(layer_set):
    s = sites([{"site_id": "A", "geometry": box(0, 0, 100, 100)}])
    d = sites([{"site_id": "A", "geometry": box(50, 50, 150, 100)}])
    row = screen(s, disturbed=d, layers=layer_set).iloc[0]
    assert row["disturbed_sqft"] == pytest.approx(5_000 * K) and "disturbed_outside_site" in codes(row)


@pytest.mark.parametrize("crs", INPUT_CRSS)
def test_protective_area_and_distance_to_the_lake(layer_set, crs):
    # Lake's west shore is x = 1800; the 50 ft strip is 1750..1800 (50 ft = 49.9999 ftUS).
    row = one(layer_set, box(1700, 100, 1780, 150), crs)  # 80 x 50 = 4,000 sq ftUS
    strip_w = 1780 - (1800 - 50 / L)
    assert row["protective_disturbed_sqft"] == pytest.approx(strip_w * 50 * K, rel=1e-5)
    assert row["nearest_water_ft"] == pytest.approx(20 * L, rel=1e-5)
    assert row["permit"] == "required"  # 4,000.016 sq ft
    assert not row["permit_may_be_required"]  # § 540-4A(1)(c) is for sites under 4,000 sq ft
    f = {x["code"]: x for x in json.loads(row["findings"])}
    # The widths are NR 151.125's (Article II), not an Article I requirement.
    assert f["protective_area"]["section"].startswith("NR 151.125")
    assert f["protective_area"]["basis"] == "technical_standard"
    assert "Test Lake (lake, 50 ft)" in f["protective_area"]["message"]


def test_small_site_in_protective_area_may_need_a_permit(layer_set):
    row = one(layer_set, box(1760, 100, 1790, 150))  # 1,500 sq ftUS, all in the strip
    assert row["permit"] == "not_required" and row["permit_may_be_required"]
    assert row["protective_disturbed_sqft"] == pytest.approx(1_500 * K, rel=1e-6)
    f = {x["code"]: x for x in json.loads(row["findings"])}
    assert f["permit_may_be_required"]["section"] == "§ 540-4A(1)(c)"
    assert "protective-area width" in f["permit_may_be_required"]["message"]
    # § 540-7B binds only if a permit is required: worded so, never as the site's duty.
    assert "protective_area" not in f and "If a permit is required" in f["protective_area_if_permit"]["message"]


def test_site_touching_and_inside_water(layer_set):
    touching = one(layer_set, box(1700, 100, 1800, 120))
    assert touching["nearest_water_ft"] == 0 and touching["protective_disturbed_sqft"] > 0
    wet = one(layer_set, box(1850, 100, 1900, 120))  # a dock inside the lake polygon
    assert wet["nearest_water_ft"] == 0 and wet["protective_disturbed_sqft"] == pytest.approx(0, abs=1e-6)
    assert wet["in_water_sqft"] == pytest.approx(1_000 * K) and wet["permit_may_be_required"]
    # Not permitted: § 540-7A(3) applies, not § 540-7B(4).
    assert "in_water_unpermitted" in codes(wet) and "in_water" not in codes(wet)


def test_far_site_has_distance_but_no_protective_overlap(layer_set):
    row = one(layer_set, box(100, 100, 200, 200))
    assert row["protective_disturbed_sqft"] == 0
    assert row["nearest_water_ft"] == pytest.approx(1600 * L, rel=1e-6)
    assert not row["permit_may_be_required"] and "nearest_water" in codes(row)
    f = {x["code"]: x for x in json.loads(row["findings"])}
    assert f["nearest_water"]["section"] == "§ 540-7B(3)(a)[3]"  # a permitted site: § 540-7B only


def test_steep_area_is_null_with_one_run_finding(layer_set):
    out = screen(
        sites([{"site_id": s, "geometry": box(100 + 300 * i, 100, 200 + 300 * i, 200)} for i, s in enumerate("ABC")]),
        layers=layer_set,
    )
    assert out["steep_disturbed_sqft"].isna().all()
    assert not any("steep_not_measured" in codes(r) for _, r in out.iterrows())  # not repeated per site
    found = [f for f in run_findings(out) if f["code"] == "steep_not_measured"]
    assert len(found) == 1 and found[0]["basis"] == "policy" and "§ 540-7B(3)(c)[3]" in found[0]["message"]
    assert found[0]["columns"] == "steep_disturbed_sqft, steep_share, steep_uncovered_sqft"


def test_without_waters_layer_columns_are_null_and_explained(tmp_path):
    from .conftest import write_layer_set

    manifest = write_layer_set(tmp_path / "l", with_waters=False)
    out = screen(sites([{"site_id": "A", "geometry": box(1760, 100, 1790, 150)}]), layers=manifest)
    row = out.iloc[0]
    assert np.isnan(row["protective_disturbed_sqft"]) and np.isnan(row["nearest_water_ft"])
    assert "no_waters_layer" not in codes(row) and not row["permit_may_be_required"]
    assert [f["code"] for f in run_findings(out)] == ["no_waters_layer", "no_targeted_layer", "steep_not_measured"]


def test_targeted_area_is_a_discretionary_reason(tmp_path):
    from .conftest import write_layer_set

    folder = tmp_path / "l"
    manifest = write_layer_set(folder, extra='[targeted_areas]\npath = "tmdl.gpkg"\nname_field = "name"\n')
    gpd.GeoDataFrame({"name": ["Upper Fox-Wolf TMDL"]}, geometry=[box(0, 0, 500, 500)], crs=CRS).to_file(
        folder / "tmdl.gpkg", engine="pyogrio"
    )
    out = screen(
        sites(
            [
                {"site_id": "A", "geometry": box(100, 100, 120, 120)},
                {"site_id": "B", "geometry": box(900, 900, 920, 920)},
            ]
        ),
        layers=manifest,
    )
    assert list(out["permit_may_be_required"]) == [True, False]
    assert out["targeted_areas"].iloc[0] == "Upper Fox-Wolf TMDL"
    f = {x["code"]: x for x in json.loads(out["findings"].iloc[0])}
    # Under the permit area: § 540-7B(6) binds permitted sites only, so the area is a § 540-4A(1)(c) reason.
    assert "targeted_area" not in f and "Upper Fox-Wolf TMDL" in f["permit_may_be_required"]["message"]
    big = screen(sites([{"site_id": "C", "geometry": box(100, 100, 200, 200)}]), layers=manifest).iloc[0]
    g = {x["code"]: x for x in json.loads(big["findings"])}
    assert g["targeted_area"]["section"] == "§ 540-7B(6)" and "permit_may_be_required" not in g


def test_every_finding_cites_a_section(layer_set):
    gdf = sites(
        [
            {"site_id": str(i), "geometry": g, **a}
            for i, (g, a) in enumerate(
                [
                    (box(100, 100, 200, 200), {}),
                    (box(-100, 100, 100, 200), {}),
                    (box(-500, 0, -400, 100), {}),
                    (box(1760, 100, 1790, 150), {}),
                    (box(100, 300, 400, 600), {"state_agency": True}),
                    (box(100, 700, 400, 900), {"activity": "silviculture"}),
                    (box(500, 100, 800, 400), {"npdes_exempt": True}),
                ]
            )
        ]
    )
    for row in screen(gdf, layers=layer_set).itertuples():
        for f in json.loads(row.findings):
            assert f["section"].startswith(("§ 540-", "toolkit", "NR 151")), f
            assert f["basis"] in ("ordinance", "interpretation", "policy", "technical_standard"), f


def test_invalid_geometry_that_a_repair_would_split_is_refused(layer_set):
    # A 100 x 100 square drawn as a bow-tie: make_valid would measure two 2,500 sq ft triangles.
    bowtie = shapely.Polygon([(745100, 505100), (745200, 505200), (745200, 505100), (745100, 505200)])
    with pytest.raises(ValidationError, match=r"row 1 \(id 'A'\).*at x 745150\.00, y 505150\.00 \(EPSG:7594\)"):
        one(layer_set, bowtie)


def test_invalid_geometry_repaired_as_drawn_is_recorded(layer_set):
    # A 100 x 100 square with a zero-width spike out of its top edge: 10,000 sq ft before and after.
    spike = shapely.Polygon(
        [
            (745100, 505100),
            (745200, 505100),
            (745200, 505200),
            (745150, 505200),
            (745150, 505250),
            (745150, 505200),
            (745100, 505200),
        ]
    )
    assert not spike.is_valid
    row = one(layer_set, spike)
    assert row["disturbed_sqft"] == pytest.approx(10_000 * K)
    assert "geometry_repaired" in codes(row)


def test_user_fields_are_kept(layer_set):
    row = one(layer_set, box(100, 100, 200, 200), address="123 Main St")
    assert row["address"] == "123 Main St"


# --- properties ------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    x=st.floats(50, 1500),
    y=st.floats(50, 1500),
    w=st.floats(5, 400),
    h=st.floats(5, 400),
    crs=st.sampled_from(INPUT_CRSS),
)
def test_area_invariant_under_reprojection(layer_set, x, y, w, h, crs):
    g = box(x, y, x + w, y + h)
    native = one(layer_set, g)["disturbed_sqft"]
    assert one(layer_set, g, crs)["disturbed_sqft"] == pytest.approx(native, rel=1e-6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.floats(0, 300), st.floats(0, 300), st.floats(1, 200), st.floats(1, 200)), min_size=1, max_size=6
    )
)
def test_union_never_larger_than_sum(layer_set, rects):
    s = sites([{"site_id": "A", "geometry": box(-10, -10, 600, 600)}])
    d = sites([{"site_id": "A", "geometry": box(x, y, x + w, y + h)} for x, y, w, h in rects])
    row = screen(s, disturbed=d, layers=layer_set).iloc[0]
    total = sum(w * h for _, _, w, h in rects) * K
    assert row["disturbed_sqft"] <= total * (1 + 1e-9)
    assert row["disturbed_sqft"] >= max(w * h for _, _, w, h in rects) * K * (1 - 1e-9)


def test_package_screen_is_the_function_even_after_the_cli_is_imported():
    # A submodule named like a facade name would rebind esc_gis.screen to the module.
    import esc_gis
    import esc_gis.cli.screen  # imports the screening module

    assert callable(esc_gis.screen) and esc_gis.screen.__name__ == "screen"


def test_concentrated_flow_channel_without_drainage_is_taken_as_classed_and_says_so(tmp_path):
    from .conftest import X0, Y0, write_layer_set

    def run(drainage):
        w = gpd.GeoDataFrame(
            {
                "water_class": ["concentrated_flow_channel"],
                "name": ["Swale"],
                **({"drainage_acres": [drainage]} if drainage is not None else {}),
            },
            geometry=[shapely.LineString([(X0 + 100, Y0 + 300), (X0 + 900, Y0 + 300)])],
            crs=CRS,
        )
        manifest = write_layer_set(tmp_path / f"l{drainage}", waters=w)
        gdf = sites([{"site_id": "A", "geometry": box(400, 295, 500, 345)}])  # 5,000 sq ftUS over the swale
        return screen(gdf, layers=manifest).iloc[0]

    unknown = run(None)
    f = {x["code"]: x for x in json.loads(unknown["findings"])}
    assert unknown["protective_disturbed_sqft"] > 0
    assert f["protective_channel_class_unverified"]["basis"] == "technical_standard"
    assert "Swale" in f["protective_channel_class_unverified"]["message"]
    small = run(100.0)  # drains 130 acres or less: no strip (NR 151.125), and nothing to verify
    assert small["protective_disturbed_sqft"] == 0
    assert "protective_channel_class_unverified" not in small["findings"]


def test_run_findings_name_only_the_layers_that_are_absent(tmp_path):
    from .conftest import write_dem, write_layer_set

    folder = tmp_path / "l"
    folder.mkdir()
    dem = write_dem(folder / "dem.tif", np.zeros((400, 400), dtype="float32"), y0=505_000 + 2000)
    manifest = write_layer_set(folder, extra=f'[dem]\npath = "{dem.name}"\nz_unit = "us_ft"\n')
    out = screen(sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}]), layers=manifest)
    assert [f["code"] for f in run_findings(out)] == ["no_targeted_layer"]
    assert out["steep_disturbed_sqft"].iloc[0] == 0
    demo = screen(sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}]), layers=DEMO_LAYERS)
    # Every layer is there; only the shipped profile's annual R is not (the bare-soil column's).
    assert [f["code"] for f in run_findings(demo)] == ["screening_bare_soil_loss_no_r"]


def test_sites_far_outside_the_measuring_zone_warn_and_local_ones_do_not(layer_set):
    utah = gpd.GeoDataFrame({"site_id": ["Z"]}, geometry=[shapely.box(-113.0, 37.2, -112.99, 37.21)], crs=4326)
    with pytest.warns(FarFromZoneWarning, match=r"Sites sites lies 2,\d\d\d km .* outside .*Winnebago"):
        screen(utah, layers=layer_set)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", FarFromZoneWarning)
        screen(sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}]).to_crs(4326), layers=layer_set)


def test_labels_join_each_rows_hits_once_in_the_order_hit():
    from esc_gis.screening.measure import _labels

    labels = np.array(["Lake A", "Creek B", "Pond C"], dtype=object)
    rows, src = np.array([0, 2, 2, 2, 3]), np.array([1, 2, 0, 2, 1])
    got = _labels((rows, src), labels, 5)
    assert list(got) == ["Creek B", None, "Pond C, Lake A", "Creek B", None]
    assert list(_labels((rows[:0], src[:0]), labels, 2)) == [None, None]
    # A layer's numeric name field is text too, alone or joined; a missing name is blank.
    numbers = np.array([7, 12.5, None], dtype=object)
    assert list(_labels((np.array([0, 1, 1, 2]), np.array([0, 0, 1, 2])), numbers, 3)) == ["7", "7, 12.5", ""]


def test_protective_areas_are_built_once_for_the_batches_of_a_run(layers_path, monkeypatch):
    from esc_gis import load_layers
    from esc_gis.screening import measure as screening

    layer_set_obj = load_layers(layers_path, profile=load_profile())

    calls = []
    real = screening.protective_areas
    monkeypatch.setattr(screening, "protective_areas", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(screening, "_BUILT", [])
    prof = load_profile()
    first = screening._protective_areas(layer_set_obj.waters, prof, layer_set_obj.crs)
    assert screening._protective_areas(layer_set_obj.waters, prof, layer_set_obj.crs) is first
    assert len(calls) == 1
    # The same waters in another frame are the same waters; another profile (its own widths),
    # or waters moved in place, build anew.
    assert screening._protective_areas(layer_set_obj.waters.copy(), prof, layer_set_obj.crs) is first
    screening._protective_areas(layer_set_obj.waters, load_profile(), layer_set_obj.crs)
    assert len(calls) == 2
    moved = layer_set_obj.waters.copy()
    moved["geometry"] = moved.geometry.translate(5000, 0)
    assert screening._protective_areas(moved, prof, layer_set_obj.crs) is not first
    assert len(calls) == 3
