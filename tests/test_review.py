"""Plan review with small hand-made packages whose answers can be checked by hand.

The test Village (conftest.py) gets a DEM that is a plane falling 5 % to the south and a
perennial stream along local y = 1150. The complete plan's site is box(200, 1200, 400, 1400),
its disturbance box(250, 1250, 350, 1350) (10,000 sq US ft): only the south edge is
downslope, and only the south edge faces the stream (100 ft away, outside its 50 ft
protective area). The street runs 5 ft north of the site, where the tracking pad is.
Each failing test changes one thing in the complete plan.
"""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import shapely
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import LayerReadError
from esc_gis.profile import load_profile
from esc_gis.review import review_plan
from esc_gis.review.bmps import classify

from .browser import chromium_page, real_errors
from .conftest import CRS, Y0, box, write_dem, write_layer_set

XSS = '<img src=x onerror="alert(1)">'
#: The package's own format, which the applicant never reads in a reason or an advisory.
PACKAGE_WORDS = (
    "[site]",
    "[narrative]",
    "[rusle2]",
    "[schedule]",
    "_sqft",
    "legal_description",
    "spill_procedures",
    "sediment_tons_per_acre_year",
    "site_boundary",
    "disturbed_limits",
    "schedule_file",
    "ei_file",
)


def _pt(x: float, y: float) -> shapely.Point:
    from .conftest import X0

    return shapely.Point(X0 + x, Y0 + y)


def _line(*xy: tuple[float, float]) -> shapely.LineString:
    from .conftest import X0

    return shapely.LineString([(X0 + x, Y0 + y) for x, y in xy])


@pytest.fixture(scope="module")
def review_layers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("review_layers")
    # A plane falling 5 % to the south: rows run north to south, 5 ft cells over the Village.
    y = 2000 - 2.5 - 5 * np.arange(400)
    write_dem(folder / "dem.tif", np.repeat((100 + 0.05 * y)[:, None], 400, axis=1).astype("float32"), y0=Y0 + 2000)
    waters = gpd.GeoDataFrame(
        {"water_class": ["perennial_stream"], "name": ["Test Creek"]},
        geometry=[_line((0, 1150), (2000, 1150))],
        crs=CRS,
    )
    return write_layer_set(folder, waters=waters, extra='[dem]\npath = "dem.tif"\nz_unit = "us_ft"\n')


FACTS = {
    "crs": "EPSG:7594",
    "plan": {"title": "Test house"},
    "landowner": {"name": "Ann Owner", "address": "1 Test St", "phone": "920-555-0100"},
    "responsible_parties": [{"name": "Dig Co", "address": "2 Test St", "phone": "920-555-0199"}],
    "site": {
        "legal_description": "Lot 1, Test Plat",
        "site_area_sqft": 40000,
        "disturbed_area_sqft": 10000,
        "performance_standards": ["540-7B"],
    },
    "schedule": {"start": "2027-04-01", "end": "2027-08-01", "sequence": ["fence", "dig", "build", "seed"]},
    "narrative": {"text": "Silt fence on the south, pad on the north.", "spill_procedures": "Spill kit on site."},
    "rusle2": {"sediment_tons_per_acre_year": 2.1},
    "reference_guide": {"included": True},
}


def _layers() -> dict[str, gpd.GeoDataFrame]:
    def g(geoms: list, **cols: list) -> gpd.GeoDataFrame:
        return gpd.GeoDataFrame(cols, geometry=geoms, crs=CRS)

    return {
        "site_boundary": g([box(200, 1200, 400, 1400)]),
        "disturbed_limits": g([box(250, 1250, 350, 1350)]),
        "drainage": g([_line((300, 1340), (300, 1260))]),
        "bmps": g(
            [
                _line((245, 1350), (245, 1245), (355, 1245), (355, 1350)),
                box(290, 1350, 310, 1404),
                _pt(330, 1406),
                shapely.get_exterior_ring(box(287, 1287, 313, 1313)),
            ],
            type=["1056", "stone tracking pad", "1060", "fiber roll"],
        ),
        "stockpiles": g([box(290, 1290, 310, 1310)], days=[30]),
        "streets": g([_line((100, 1405), (500, 1405))]),
        "inlets": g([_pt(330, 1405)]),
    }


def _toml(facts: dict) -> str:
    lines = []

    def val(v: object) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v) if not v[:4].isdigit() or "-" not in v else v  # dates bare, as TOML dates
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, bool):
            return "true" if v else "false"  # TOML's booleans
        return repr(v)

    tables = {k: v for k, v in facts.items() if isinstance(v, dict)}
    arrays = {k: v for k, v in facts.items() if isinstance(v, list)}
    lines += [f"{k} = {val(v)}" for k, v in facts.items() if not isinstance(v, (dict, list))]
    for name, table in tables.items():
        lines.append(f"[{name}]")
        lines += [f"{k} = {val(v)}" for k, v in table.items()]
    for name, items in arrays.items():
        for item in items:
            lines.append(f"[[{name}]]")
            lines += [f"{k} = {val(v)}" for k, v in item.items()]
    return "\n".join(lines) + "\n"


def package(
    folder: Path,
    *,
    facts: dict | None = None,
    drop: tuple[str, ...] = (),
    edit: dict[str, gpd.GeoDataFrame] | None = None,
) -> Path:
    """Write the complete plan, changed as asked, as a GeoPackage with plan.toml; return the .gpkg."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "plan.gpkg"
    for name, gdf in {**_layers(), **(edit or {})}.items():
        if name not in drop:
            with warnings.catch_warnings():
                # A layer without a CRS is written on purpose here (pyogrio warns about it).
                warnings.simplefilter("ignore" if gdf.crs is None else "default", UserWarning)
                gdf.to_file(path, layer=name, engine="pyogrio")
    (folder / "plan.toml").write_text(_toml(FACTS if facts is None else facts))
    return path


def test_a_package_saved_from_qgis_with_its_styles_reviews_the_same(tmp_path: Path, review_layers: Path) -> None:
    from esc_gis.styles import add_layer_style

    path = package(tmp_path / "styled")
    assert add_layer_style(path, "screening", ["permit", "site_id"])  # a layer_styles table, as QGIS saves one
    assert "layer_styles" in [str(n) for n in pyogrio.list_layers(path)[:, 0]]
    r = review_plan(path, layers=review_layers)
    assert r.problems == [] and r.verdict == "approve"


def _status(review, code: str) -> tuple[str, str]:
    c = next(c for c in review.checks if c.code == code)
    return c.status, c.detail


def test_the_complete_plan_passes(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path / "ok"), layers=review_layers)
    bad = [(c.code, c.status, c.detail) for c in r.checks if c.status in ("fail", "look")]
    assert bad == [] and r.problems == [] and r.verdict == "approve"
    assert r.measured["disturbed_sqft"] == pytest.approx(10_000.04, abs=0.01)  # 100 x 100 US survey feet
    assert _status(r, "perimeter") == (
        "pass",
        "0 of 100 ft of downslope edge without perimeter control within 20 ft (at most 10 % may be open)",
    )
    assert _status(r, "waters")[1].startswith("0 of 100 ft of the edge facing the water without a BMP")
    assert _status(r, "plan_item_9") == (
        "pass",
        "RUSLE2 gives 2.1 t/ac/yr; 0.23 acres disturbed, under 1 acre, so the "
        "sediment standard of § 540-7B(3)(b) does not apply; the plan says it includes "
        "the Reference Guide's items, which the reviewer checks",
    )
    assert _status(r, "stockpiles")[0] == "pass" and _status(r, "tracking")[0] == "pass"
    assert r.reasons == []


def test_rusle2_alone_is_counted_to_look_at_not_passed(tmp_path: Path, review_layers: Path) -> None:
    """§ 540-9A(9): "at a minimum, the items specified in the ... Reference Guide and RUSLE2". A plan with
    RUSLE2 and nothing of the Guide: item 9 needs a look, the verdict is not "approve", and the summary
    counts it ("1 to look at", not "0 to look at")."""
    from esc_gis.review.report import render_report

    facts = copy.deepcopy(FACTS)
    del facts["reference_guide"]
    r = review_plan(package(tmp_path / "rusle_only", facts=facts), layers=review_layers)
    status, detail = _status(r, "plan_item_9")
    assert status == "look" and "does not say it includes the items of the Village of Winneconne" in detail
    assert r.verdict == "needs a look"
    looks = [c.code for c in r.checks if c.status == "look"]
    assert looks == ["plan_item_9", "less_stringent"]  # under the acre: the reviewer may relax it (§ 540-9C)
    assert f"{len(looks)} to look at" in render_report(r)


def _facts(**changes: dict) -> dict:
    f = copy.deepcopy(FACTS)
    for table, values in changes.items():
        for k, v in values.items():
            if v is None:
                f[table].pop(k, None)
            else:
                f[table][k] = v
    return f


@pytest.mark.parametrize(
    ("change", "code", "words"),
    [
        ({"landowner": {"phone": None}}, "plan_item_1", "Ann Owner has no phone"),
        ({"site": {"legal_description": None}}, "plan_item_2", "no legal description of the property is given"),
        (
            {"site": {"disturbed_area_sqft": None}},
            "plan_item_4",
            "state both the total area of the site and the area to be disturbed",
        ),
        (
            {"site": {"disturbed_area_sqft": 3900}},
            "area_disturbed",
            "the other side of the permit threshold (4,000 sq ft)",
        ),
        ({"site": {"performance_standards": ["540-7A"]}}, "plan_item_5", "makes § 540-7B apply"),
        ({"narrative": {"text": None}}, "plan_item_7", "no plan narrative is given"),
        ({"schedule": {"sequence": None}}, "plan_item_8", "give the construction sequence: the order of the work"),
        ({"narrative": {"spill_procedures": None}}, "spill", "no spill prevention and response procedures"),
        ({"rusle2": {"sediment_tons_per_acre_year": None}}, "plan_item_9", "no RUSLE2 sediment load"),
        ({"schedule": {"end": "2027-03-01"}}, "schedule", "ends (2027-03-01) before it starts"),
    ],
)
def test_each_missing_fact_fails_its_item(
    tmp_path: Path, review_layers: Path, change: dict, code: str, words: str
) -> None:
    r = review_plan(package(tmp_path, facts=_facts(**change)), layers=review_layers)
    status, detail = _status(r, code)
    assert status == "fail" and words in detail, detail
    assert r.verdict == "disapprove" and any(words in reason for reason in r.reasons)
    # In words the applicant reads: no package key; the key is in the JSON, for staff.
    assert not any(k in " ".join(r.reasons) for k in PACKAGE_WORDS), r.reasons
    [check] = [c for c in r.to_dict()["checks"] if c["code"] == code]
    assert check["package_key"] and check["finding"] and check["section"].startswith("§ 540-")


def test_missing_drainage_fails_the_site_map_item(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path, drop=("drainage",)), layers=review_layers)
    assert _status(r, "plan_item_3") == ("fail", "the site map does not show the drainage patterns")
    assert any("no drainage layer" in p.message for p in r.problems)


def test_no_bmps_fails_item_6(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path, drop=("bmps",)), layers=review_layers)
    assert _status(r, "plan_item_6") == ("fail", "no BMPs drawn")
    assert _status(r, "perimeter")[0] == "fail"


def test_disturbance_outside_the_property_lines(tmp_path: Path, review_layers: Path) -> None:
    edit = {"disturbed_limits": gpd.GeoDataFrame(geometry=[box(250, 1250, 450, 1350)], crs=CRS)}
    r = review_plan(package(tmp_path, edit=edit), layers=review_layers)
    status, detail = _status(r, "limits")
    # box(400..450) x 100 ft, in US survey feet. The article does not forbid it: a reading, so an advisory.
    assert status == "fail" and detail.startswith("reading: 5,000 sq ft")
    assert next(c for c in r.checks if c.code == "limits").basis == "interpretation"
    assert not any("property lines" in reason for reason in r.reasons)
    assert any("property lines" in a and "policy.sliver" in a for a in r.advisories)


def _without(*types: str, add: list | None = None) -> dict[str, gpd.GeoDataFrame]:
    bmps = _layers()["bmps"]
    keep = bmps[~bmps["type"].isin(types)]
    if add:
        keep = gpd.GeoDataFrame(gpd.pd.concat([keep, gpd.GeoDataFrame(add, geometry="geometry", crs=CRS)]), crs=CRS)
    return {"bmps": keep.reset_index(drop=True)}


def test_no_tracking_pad_where_the_site_meets_the_street(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path, edit=_without("stone tracking pad")), layers=review_layers)
    assert _status(r, "tracking")[0] == "fail"


def test_unprotected_inlet(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path, edit=_without("1060")), layers=review_layers)
    assert _status(r, "inlets") == (
        "fail",
        "1 of 1 inlet(s) within 100 ft without inlet protection (WDNR 1060) within 15 ft",
    )


def test_no_perimeter_control_on_the_downslope_edge(tmp_path: Path, review_layers: Path) -> None:
    # A sediment trap below the south edge still protects the stream, but is no perimeter control.
    trap = [{"type": "1063", "geometry": box(260, 1215, 340, 1240)}]
    r = review_plan(package(tmp_path, edit=_without("1056", add=trap)), layers=review_layers)
    assert _status(r, "perimeter") == (
        "fail",
        "100 of 100 ft of downslope edge without perimeter control within "
        "20 ft, more than 10 % (shown in red on the map)",
    )
    assert _status(r, "waters")[0] == "pass"
    assert r.layers["downslope_unprotected"].geometry.iloc[0].length == pytest.approx(100.0)


def test_no_bmp_between_the_disturbance_and_the_water(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path, edit=_without("1056")), layers=review_layers)
    assert _status(r, "waters")[0] == "fail" and _status(r, "waters")[1].startswith("100 of 100 ft")


def test_stockpile_without_cover_fails_unless_short_lived(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path / "a", edit=_without("fiber roll")), layers=review_layers)
    assert _status(r, "stockpiles")[0] == "fail"
    short = {
        **_without("fiber roll"),
        "stockpiles": gpd.GeoDataFrame({"days": [5]}, geometry=[box(290, 1290, 310, 1310)], crs=CRS),
    }
    r = review_plan(package(tmp_path / "b", edit=short), layers=review_layers)
    assert _status(r, "stockpiles")[0] == "pass"


def test_steep_disturbance_and_protective_area_need_a_look(tmp_path: Path, review_layers: Path) -> None:
    # Disturbance reaching into the creek's 50 ft protective area (y < 1200).
    edit = {
        "site_boundary": gpd.GeoDataFrame(geometry=[box(200, 1160, 400, 1400)], crs=CRS),
        "disturbed_limits": gpd.GeoDataFrame(geometry=[box(250, 1175, 350, 1350)], crs=CRS),
    }
    facts = _facts(site={"disturbed_area_sqft": 17500, "site_area_sqft": 48000})
    r = review_plan(package(tmp_path, edit=edit, facts=facts), layers=review_layers)
    status, detail = _status(r, "protective")
    assert status == "look" and detail.startswith("2,500 sq ft")  # 100 x 25 ft south of y = 1200


def test_bad_packages_get_a_report_not_a_crash(tmp_path: Path, review_layers: Path) -> None:
    # A mistyped path is not a package: refused, not disapproved.
    with pytest.raises(LayerReadError, match="no such plan package"):
        review_plan(tmp_path / "nothing_here", layers=review_layers)
    # Lines where polygons belong, and a layer with no CRS.
    edit = {
        "site_boundary": gpd.GeoDataFrame(geometry=[_line((200, 1200), (400, 1400))], crs=CRS),
        "drainage": gpd.GeoDataFrame(geometry=[_line((300, 1340), (300, 1260))], crs=None),
    }
    facts = {k: v for k, v in FACTS.items() if k != "crs"}
    r = review_plan(package(tmp_path / "bad", edit=edit, facts=facts), layers=review_layers)
    text = "\n".join(str(p) for p in r.problems)
    assert "layer site_boundary has 1 feature(s) of type LineString" in text
    assert "layer drainage has no CRS" in text
    assert r.verdict == "disapprove"
    # plan.toml missing altogether.
    path = package(tmp_path / "notoml")
    (path.parent / "plan.toml").unlink()
    r = review_plan(path, layers=review_layers)
    assert any("plan.toml" in str(p) and "is missing" in str(p) for p in r.problems)


def test_a_folder_of_geojson_and_a_dxf_with_a_layer_map(tmp_path: Path, review_layers: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    for name, gdf in _layers().items():
        gdf.to_file(folder / f"{name}.geojson")
    (folder / "plan.toml").write_text(_toml(FACTS))
    assert review_plan(folder, layers=review_layers).verdict == "approve"
    # The same plan from CAD: closed polylines on named layers, the types in the layer names.
    cad = {
        "site_boundary": "C-PROP",
        "disturbed_limits": "C-LIMITS",
        "drainage": "C-FLOW",
        "streets": "C-ROAD",
        "inlets": "C-INLET",
        "stockpiles": "C-PILE",
    }
    rows = []
    for name, layer in cad.items():
        for g in _layers()[name].geometry:
            rows.append({"Layer": layer, "geometry": g.exterior if g.geom_type == "Polygon" else g})
    bmps = _layers()["bmps"]
    types = {"1056": "C-ESC-SILT", "stone tracking pad": "C-ESC-PAD", "1060": "C-ESC-INLET", "fiber roll": "C-ESC-ROLL"}
    rows += [{"Layer": types[t], "geometry": g} for t, g in zip(bmps["type"], bmps.geometry, strict=True)]
    rows.append({"Layer": "A-ANNO-TEXT", "geometry": _pt(0, 0)})
    dxf = tmp_path / "cad" / "plan.dxf"
    dxf.parent.mkdir()
    gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS).to_file(dxf, driver="DXF", engine="pyogrio")
    mapping = {v: k for k, v in cad.items()} | {
        "C-ESC-SILT": "bmps:1056",
        "C-ESC-PAD": "bmps:1057",
        "C-ESC-INLET": "bmps:1060",
        "C-ESC-ROLL": "bmps:1071",
    }
    toml = _toml(FACTS) + "[dxf.layers]\n" + "".join(f'"{k}" = "{v}"\n' for k, v in mapping.items())
    (dxf.parent / "plan.toml").write_text(toml)
    r = review_plan(dxf, layers=review_layers)
    assert [c.code for c in r.checks if c.status == "fail"] == []
    assert any("A-ANNO-TEXT" in p.message for p in r.problems)  # unknown CAD layer: reported, left out
    assert r.verdict == "needs a look"


def test_bmp_types_by_number_name_or_common_name() -> None:
    assert [classify(v) for v in ("1056", 1057.0, "Storm drain inlet protection", "wattle", "straw", None)] == [
        "1056",
        "1057",
        "1060",
        "1071",
        None,
        None,
    ]


def test_review_command_and_report_in_chromium(tmp_path: Path, review_layers: Path) -> None:
    # A missing phone (the ordinance: a reason) and an unprotected inlet (the inlet reaches: an advisory).
    facts = _facts(landowner={"name": f"Ann {XSS}", "phone": None})
    plan = package(tmp_path / "p", facts=facts, edit=_without("1060"))
    out, js = tmp_path / "report.html", tmp_path / "report.json"
    r = CliRunner().invoke(
        cli, ["review", str(plan), "-o", str(out), "--json", str(js), "--layers", str(review_layers), "--offline"]
    )
    assert r.exit_code == 0, r.output
    assert "disapprove (2 failing: 1 reason(s) for disapproval, 1 advisory" in r.output
    data = json.loads(js.read_text())
    assert data["verdict"] == "disapprove" and len(data["reasons"]) == 1 and len(data["advisories"]) == 1
    assert "policy.review_inlet_reach" in data["advisories"][0]
    r = CliRunner().invoke(cli, ["review", str(plan), "-o", str(out), "--layers", str(review_layers)])
    assert r.exit_code == 1 and "--overwrite" in r.output
    with chromium_page(offline=True) as (page, errors, _):
        page.goto(out.as_uri())
        page.wait_for_load_state("load")
        assert page.inner_text("#verdict") == "Disapprove"
        assert page.locator("#checklist tr.check.fail").count() == 2
        assert page.locator("#reasons li").count() == 1 and page.locator("#advisories li").count() == 1
        assert page.locator("#checklist tr.check.fail[data-basis='policy']").count() == 1
        assert XSS in page.inner_text("#checklist") and page.locator("#checklist img").count() == 0
        frame = page.frame_locator("#map")
        frame.locator(".leaflet-container").wait_for()
        assert frame.locator("#esc-legend").inner_text().count("(1)") >= 3
        assert real_errors(errors) == []


# --- Issue 13: the law told apart from the toolkit's policy -------------------------------------------


def test_rusle2_is_required_under_one_acre_and_less_stringent_is_the_reviewers_call(
    tmp_path: Path, review_layers: Path
) -> None:
    """§ 540-9A(9): every plan includes RUSLE2; under one acre § 540-9C is a decision, not a pass."""
    r = review_plan(
        package(tmp_path / "no", facts=_facts(rusle2={"sediment_tons_per_acre_year": None})), layers=review_layers
    )
    item = next(c for c in r.checks if c.code == "plan_item_9")
    assert (item.status, item.basis, item.section) == ("fail", "ordinance", "§ 540-9A(9)")
    assert "0.23 acres disturbed" in item.detail
    less = next(c for c in r.checks if c.code == "less_stringent")
    assert (less.status, less.basis, less.section) == ("look", "ordinance", "§ 540-8I; § 540-9C")
    assert "under 1 acre" in less.detail and "Village Public Works Director may prescribe" in less.detail
    assert r.verdict == "disapprove" and any("RUSLE2" in reason for reason in r.reasons)
    # Given, the item passes and nothing is left to decide.
    r = review_plan(package(tmp_path / "yes"), layers=review_layers)
    assert _status(r, "plan_item_9")[0] == "pass" and not any(c.code == "less_stringent" for c in r.checks)


def _big(tmp_path: Path, review_layers: Path, rusle2: dict, profile: Path | None = None):
    """The complete plan with 50,000 sq ft of disturbance (over one acre)."""
    edit = {
        "site_boundary": gpd.GeoDataFrame(geometry=[box(200, 1200, 450, 1400)], crs=CRS),
        "disturbed_limits": gpd.GeoDataFrame(geometry=[box(200, 1200, 450, 1400)], crs=CRS),
    }
    facts = _facts(site={"disturbed_area_sqft": 50000, "site_area_sqft": 50000}, rusle2=rusle2)
    return review_plan(package(tmp_path, facts=facts, edit=edit), layers=review_layers, profile=profile)


@pytest.mark.parametrize(
    ("rusle2", "status", "finding"),
    [
        ({"sediment_tons_per_acre_year": 4.0}, "pass", "review_sediment_load_met"),
        ({"sediment_tons_per_acre_year": 7.0}, "fail", "review_sediment_load_over"),
        (
            {"sediment_tons_per_acre_year": 7.0, "explanation": "Clay soils; phased grading."},
            "look",
            "review_sediment_load_explained",
        ),
        ({"sediment_tons_per_acre_year": None}, "fail", "review_rusle2_missing"),
    ],
)
def test_sediment_standard_at_one_acre(
    tmp_path: Path, review_layers: Path, rusle2: dict, status: str, finding: str
) -> None:
    r = _big(tmp_path, review_layers, rusle2)
    item = next(c for c in r.checks if c.code == "plan_item_9")
    assert (item.status, item.finding) == (status, finding), item.detail
    assert "1.15 acres" in item.detail and not any(c.code == "less_stringent" for c in r.checks)


def _profile_copy(tmp_path: Path, **values: float) -> Path:
    """The shipped profile with some thresholds' values changed (``sediment_area=0.2``)."""
    from esc_gis.profile import _builtin_path

    text = _builtin_path("winneconne").read_text(encoding="utf-8")
    for name, value in values.items():
        head = f"[thresholds.{name}]\nvalue = "
        at = text.index(head) + len(head)
        text = text[:at] + str(value) + text[text.index("\n", at) :]
    path = tmp_path / "profile.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_acre_figures_come_from_the_profile(tmp_path: Path, review_layers: Path) -> None:
    """A profile whose sediment and less-stringent areas are 0.2 acre decides the 0.23-acre plan differently."""
    prof = _profile_copy(tmp_path, sediment_area=0.2, less_stringent_area=0.2)
    facts = _facts(rusle2={"sediment_tons_per_acre_year": 7.0})
    r = review_plan(package(tmp_path / "p", facts=facts), layers=review_layers, profile=prof)
    item = next(c for c in r.checks if c.code == "plan_item_9")
    assert item.finding == "review_sediment_load_over" and "over 5 tons per acre per year" in item.detail
    assert not any(c.code == "less_stringent" for c in r.checks)  # 0.23 acres is not under 0.2 acre
    facts = _facts(rusle2={"sediment_tons_per_acre_year": None})
    r = review_plan(
        package(tmp_path / "q", facts=facts),
        layers=review_layers,
        profile=_profile_copy(tmp_path, less_stringent_area=0.5),
    )
    assert "under 0.5 acre" in next(c for c in r.checks if c.code == "less_stringent").detail


@pytest.mark.parametrize(
    ("edit", "code", "keys"),
    [
        (_without("1056"), "perimeter", ["policy.review_uncovered_share", "policy.review_bmp_reach"]),
        (_without("1060"), "inlets", ["policy.review_inlet_reach", "policy.review_inlet_bmp"]),
        (_without("stone tracking pad"), "tracking", ["policy.review_street_contact", "policy.review_tracking_reach"]),
        (_without("fiber roll"), "stockpiles", ["policy.review_bmp_reach"]),
    ],
)
def test_review_heuristics_are_advisories_not_reasons(
    tmp_path: Path, review_layers: Path, edit: dict, code: str, keys: list[str]
) -> None:
    """§ 540-8C(3): the draft reasons list only ordinance failures; the review reaches are policy."""
    r = review_plan(package(tmp_path, edit=edit), layers=review_layers)
    check = next(c for c in r.checks if c.code == code)
    assert (check.status, check.basis, list(check.policy)) == ("fail", "policy", keys)
    assert r.reasons == [] and r.verdict == "needs a look"
    assert len([a for a in r.advisories if check.title in a]) == 1
    assert all(k in next(a for a in r.advisories if check.title in a) for k in keys)
    data = r.to_dict()
    assert data["verdict"] == "needs a look" and data["reasons"] == [] and data["advisories"] == r.advisories
    assert {c["code"]: c["basis"] for c in data["checks"]}[code] == "policy"


def test_every_check_carries_its_basis_from_the_profile(tmp_path: Path, review_layers: Path) -> None:
    from esc_gis.findings import BASES
    from esc_gis.profile import load_profile

    r = review_plan(package(tmp_path), layers=review_layers)
    prof = load_profile()
    for c in r.checks:
        t = prof.template(c.finding)
        assert c.basis in BASES and (c.section, c.basis) == (t.section, t.basis), c
        assert c.title
    assert {c.basis for c in r.checks} >= {"ordinance", "policy", "technical_standard"}


def test_json_and_html_show_the_basis_and_part_reasons_from_advisories(tmp_path: Path, review_layers: Path) -> None:
    from esc_gis.review.report import render_report

    facts = _facts(landowner={"phone": None})
    plan = package(tmp_path / "p", facts=facts, edit=_without("1056"))
    out, js = tmp_path / "report.html", tmp_path / "report.json"
    r = CliRunner().invoke(
        cli,
        [
            "review",
            str(plan),
            "-o",
            str(out),
            "--json",
            str(js),
            "--layers",
            str(review_layers),
            "--basemap",
            "none",
            "-q",
        ],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(js.read_text())
    assert all(set(c) >= {"code", "title", "section", "basis", "status", "detail", "policy"} for c in data["checks"])
    basis = {c["code"]: c["basis"] for c in data["checks"]}
    assert basis["plan_item_1"] == "ordinance" and basis["perimeter"] == basis["waters"] == "policy"
    assert [x.split(":")[0] for x in data["reasons"]] == [
        "Names, addresses and phones of the landowner and responsible parties"
    ]
    assert len(data["advisories"]) == 2 and all("policy.review_uncovered_share" in a for a in data["advisories"])
    page = render_report(review_plan(plan, layers=review_layers))
    reasons = page[page.index("id='reasons'") : page.index("id='advisories'")]
    advisories = page[page.index("id='advisories'") :]
    assert "landowner" in reasons and "perimeter control" not in reasons
    assert "perimeter control" in advisories and "policy.review_bmp_reach" in advisories
    assert "<th>Basis</th>" in page and "data-basis='policy'" in page
    assert "Draft written reasons for disapproval (§ 540-8C(3))" in page
    assert "against the Village of Winneconne Code Chapter 540" in page
    # The map's unprotected edges say which basis found them.
    from esc_gis.maps.render import _figure
    from esc_gis.maps.review import review_map

    done = review_plan(plan, layers=review_layers)
    legend = _figure(review_map(done.layers, basemap="none", checks=done.checks)).render()
    assert "Downslope edge without perimeter control (advisory, policy)" in legend


def test_every_check_has_a_title_in_the_profile() -> None:
    from esc_gis.findings import REVIEW
    from esc_gis.profile import load_profile
    from esc_gis.review.checks import TITLES

    prof = load_profile()
    assert all(prof.template(code).title for code in TITLES.values())
    assert set(TITLES.values()) <= set(REVIEW)


def test_review_sources_hold_no_ordinance_literal() -> None:
    """The review's user-facing strings come from the profile: no citation, name or threshold in a literal."""
    import ast

    import esc_gis

    src = Path(esc_gis.__file__).parent
    banned = ("\N{SECTION SIGN}", "540-", "Winneconne", "4,000", "1 acre")
    files = [*sorted((src / "review").glob("*.py")), src / "maps" / "review.py", src / "cli" / "review.py"]
    found = []
    for f in files:
        tree = ast.parse(f.read_text(encoding="utf-8"))
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
                found += [f"{f.name}:{n.lineno}: {b!r}" for b in banned if b in n.value]
    assert found == []


def test_applicant_ls_is_compared_with_the_dem(tmp_path: Path, review_layers: Path) -> None:
    # The layer set's DEM is a plane falling 5 % to the south; the 100 x 100 ft disturbed area
    # drains 100 ft down it, so the DEM's LS is far from the applicant's 0.2 on a 1 % slope.
    facts = _facts(rusle2={"ls": 0.2, "slope_length_ft": 100, "slope_pct": 1})
    r = review_plan(package(tmp_path / "ls", facts=facts), layers=review_layers)
    status, detail = _status(r, "rusle_ls")
    assert status == "look"
    assert detail.startswith("applicant LS 0.2, slope length 100 ft, steepness 1 %; the DEM gives LS ")
    assert "at 5.0 % over" in detail  # the representative slope is the plane's
    dem_ls = float(detail.split("the DEM gives LS ")[1].split(" ")[0])
    assert 0.3 < dem_ls < 0.7  # USLE: 100 ft at 5 % is LS 0.5 or so; not the applicant's 0.2
    assert _status(r, "plan_item_9")[0] == "pass"  # item 9 rests on the items being present


def test_ls_not_computed_says_why_and_never_crashes(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path / "none"), layers=review_layers)  # no LS figures: nothing to compare
    assert _status(r, "rusle_ls") == (
        "n/a",
        "LS on the DEM not computed: the plan gives no RUSLE2 LS, slope length or steepness; "
        "check the applicant's slope length and steepness by eye",
    )
    facts = _facts(rusle2={"ls": 0.8})
    r = review_plan(package(tmp_path / "nolimits", facts=facts, drop=("disturbed_limits",)), layers=review_layers)
    status, detail = _status(r, "rusle_ls")
    assert status == "look" and "the plan draws no limits of land disturbance" in detail


# --- The applicant's sediment discharge against the review's own (the package's schedule) --------

SCHEDULE = (
    "phase,start,end,cover,practices\n"
    "grading,2027-04-01,2027-06-29,bare,sediment_trap\n"
    "seeded,2027-06-30,2028-03-31,permanent_seeding,\n"
)


@pytest.fixture(scope="module")
def soil_layers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The review layer set's 5 % plane, with a soils layer of K 0.3 over the whole Village."""
    folder = tmp_path_factory.mktemp("soil_layers")
    y = 2000 - 2.5 - 5 * np.arange(400)
    write_dem(folder / "dem.tif", np.repeat((100 + 0.05 * y)[:, None], 400, axis=1).astype("float32"), y0=Y0 + 2000)
    gpd.GeoDataFrame({"kwfact": [0.3]}, geometry=[box(0, 0, 2000, 2000)], crs=CRS).to_file(
        folder / "soils.gpkg", engine="pyogrio"
    )
    extra = '[dem]\npath = "dem.tif"\nz_unit = "us_ft"\n[soils]\npath = "soils.gpkg"\n'
    return write_layer_set(folder, extra=extra)


def _hand_discharge() -> tuple[float, float]:
    """Discharge and soil loss of the 100 x 100 ft disturbance on the 5 % plane, by hand (t/ac).

    LS of a uniform 100 ft slope at 5 % (under the 9 % breakpoint: S = 10.8 sin + 0.03);
    %R = days / 365 (a flat erosivity file); R = 100 (the plan's); K = 0.3 (the soils layer).
    """
    import math

    sin = math.sin(math.atan(0.05))
    beta = (sin / 0.0896) / (3 * sin**0.8 + 0.56)
    ls = (100 / 72.6) ** (beta / (1 + beta)) * (10.8 * sin + 0.03)
    a1 = 100 * 90 / 365 * 0.3 * ls * 1.0  # bare, 90 days, behind a sediment trap (80 %)
    a2 = 100 * 275 / 365 * 0.3 * ls * 0.01  # permanent seeding to the end of March
    return a1 * 0.2 + a2, a1 + a2


def _soil_package(folder: Path, *, rusle2: dict, schedule: str = SCHEDULE) -> Path:
    path = package(folder, facts=_facts(rusle2=rusle2))
    (folder / "schedule.csv").write_text(schedule, encoding="utf-8")
    (folder / "ei.csv").write_text("ei\n" + "1\n" * 365, encoding="utf-8")
    return path


RUSLE2 = {"r_annual": 100, "schedule_file": "schedule.csv", "ei_file": "ei.csv"}


def test_review_recomputes_the_discharge_with_the_packages_schedule(tmp_path: Path, soil_layers: Path) -> None:
    discharge, loss = _hand_discharge()  # ≈ 1.10 and 4.93 t/ac
    # Within 25 % of the review's figure: pass; the standard's item 9 is untouched.
    near = _soil_package(tmp_path / "near", rusle2={**RUSLE2, "sediment_tons_per_acre_year": round(discharge * 1.2, 2)})
    r = review_plan(near, layers=soil_layers)
    status, detail = _status(r, "soil_loss")
    assert status == "pass", detail
    assert f"the DEM and soils give {discharge:.1f} (+" in detail and "within 25 %" in detail
    assert f"soil loss {loss:.1f} t/ac" in detail and "2027-04-01 to 2028-03-31" in detail
    assert "R 100 from the plan, K 0.30 from the layer set's soils" in detail
    assert _status(r, "plan_item_9")[0] == "pass" and r.verdict == "approve"
    # Three times the applicant's figure: a look, never a failure or a reason.
    far = _soil_package(tmp_path / "far", rusle2={**RUSLE2, "sediment_tons_per_acre_year": discharge / 3})
    r = review_plan(far, layers=soil_layers)
    status, detail = _status(r, "soil_loss")
    assert (
        status == "look"
        and "more than 25 %" in detail
        and detail.startswith(f"applicant {discharge / 3:.1f} t/ac/yr, the DEM and soils give {discharge:.1f} (-67%")
    )
    assert r.reasons == [] and r.verdict == "needs a look"


def test_agreeing_with_the_applicant_is_not_a_pass_above_the_standard(tmp_path: Path, soil_layers: Path) -> None:
    # Discharge is proportional to R: scale it to put the review's figure just under and just over
    # the standard (5 t/ac/yr), the applicant claiming the review's own figure. The package's
    # 10,000 sq ft disturbance is under the Village's 1 acre, where the standard does not apply
    # (§ 540-7B(3)(b)); a profile whose sediment area is 0.2 acre brings it in.
    text = (Path(load_profile(None).source)).read_text(encoding="utf-8")
    small_area = tmp_path / "small_area.toml"
    a = "[thresholds.sediment_area]\nvalue = 1\n"
    assert a in text
    small_area.write_text(text.replace(a, "[thresholds.sediment_area]\nvalue = 0.2\n"), encoding="utf-8")
    discharge, _ = _hand_discharge()
    cases = (
        (4.99, small_area, "pass", "within 25 %"),
        (5.01, small_area, "look", "more than the standard of 5 tons"),
        (5.01, None, "pass", "within 25 %"),  # the Village's profile: under 1 acre, no standard
    )
    for r_scale, prof, status, words in cases:
        r_annual = 100 * r_scale / discharge
        pkg = _soil_package(
            tmp_path / f"r{r_scale}{prof is None}",
            rusle2={**RUSLE2, "r_annual": r_annual, "sediment_tons_per_acre_year": r_scale},
        )
        got, detail = _status(review_plan(pkg, layers=soil_layers, profile=prof), "soil_loss")
        assert (got, words in detail) == (status, True), detail
        if status == "look":
            assert detail.startswith("the DEM and soils give 5.0 t/ac/yr") and "maximum extent practicable" in detail


def test_the_tolerance_edge_comes_from_the_profile(tmp_path: Path, soil_layers: Path) -> None:
    discharge, _ = _hand_discharge()
    prof = load_profile(None)
    exact = _soil_package(tmp_path / "at", rusle2={**RUSLE2, "sediment_tons_per_acre_year": discharge * 1.25})
    text = prof.source and Path(prof.source).read_text(encoding="utf-8")
    assert text and "[policy.review_soil_loss_tolerance]\nvalue = 25\n" in text
    p = tmp_path / "tol.toml"
    p.write_text(text.replace("[policy.review_soil_loss_tolerance]\nvalue = 25\n",
                              "[policy.review_soil_loss_tolerance]\nvalue = 26\n"), encoding="utf-8")  # fmt: skip
    assert _status(review_plan(exact, layers=soil_layers, profile=p), "soil_loss")[0] == "pass"
    p.write_text(text.replace("[policy.review_soil_loss_tolerance]\nvalue = 25\n",
                              "[policy.review_soil_loss_tolerance]\nvalue = 24\n"), encoding="utf-8")  # fmt: skip
    assert _status(review_plan(exact, layers=soil_layers, profile=p), "soil_loss")[0] == "look"


def test_soil_loss_without_soils_takes_the_plans_k_and_says_so(tmp_path: Path, review_layers: Path) -> None:
    discharge, _ = _hand_discharge()
    path = _soil_package(tmp_path / "k", rusle2={**RUSLE2, "k": 0.3, "sediment_tons_per_acre_year": discharge})
    status, detail = _status(review_plan(path, layers=review_layers), "soil_loss")
    assert status == "pass" and "K 0.30 from the plan" in detail and "0%, within 25 %" in detail


def test_soil_loss_not_recomputed_says_why(tmp_path: Path, soil_layers: Path, review_layers: Path) -> None:
    def status(rusle2: dict, layers: Path = soil_layers, schedule: str = SCHEDULE) -> tuple[str, str]:
        folder = tmp_path / f"p{len(list(tmp_path.iterdir()))}"
        return _status(review_plan(_soil_package(folder, rusle2=rusle2, schedule=schedule), layers=layers), "soil_loss")

    load = {"sediment_tons_per_acre_year": 1.0}
    # Nothing to recompute with, or nothing to compare: n/a (the existing examples carry neither).
    assert status(load) == ("n/a", "sediment discharge not recomputed: the plan names no phased construction "
                                   "schedule file for RUSLE2")  # fmt: skip
    assert status({**RUSLE2, "sediment_tons_per_acre_year": None}) == (
        "n/a",
        "sediment discharge not recomputed: the plan gives no RUSLE2 sediment load to compare",
    )
    # Missing inputs: a look naming what is missing.
    assert status({**RUSLE2, "ei_file": None, **load}) == ("look", "sediment discharge not recomputed: the plan names no "
                                         "erosivity distribution file (where its share of the annual R comes from), "
                                         "and the profile holds none")  # fmt: skip
    assert "no annual R" in status({**RUSLE2, "r_annual": None, **load})[1]
    assert "no soil erodibility K" in status({**RUSLE2, **load}, layers=review_layers)[1]
    # A bad schedule in the package: every problem listed, never a crash.
    bad = "phase,start,end,cover,practices\na,2027-05-01,2027-04-01,bare,\nb,2027-04-01,2027-06-30,gravel,\n"
    st, detail = status({**RUSLE2, **load}, schedule=bad)
    assert st == "look" and "is before start" in detail and "'gravel'" in detail


# --- The common plan (§ 540-5 CONSTRUCTION SITE) and the acre tests decided on it ----------------
#
# A construction site is "An area upon which one or more land disturbing construction activities
# occur, including areas that are part of a larger common plan of development"; § 540-7B(3)(b):
# "For sites with one acre or more of land-disturbing construction activity"; § 540-9C: "less
# stringent for applicants seeking a permit for a construction site with less than one acre".

FIVE_ACRES = 5 * 43_560.0


def test_a_lot_in_a_five_acre_subdivision_gets_the_sediment_standard(tmp_path: Path, review_layers: Path) -> None:
    site = {"plan_id": "Meadow Ridge", "plan_disturbed_sqft": FIVE_ACRES}
    r = review_plan(package(tmp_path / "lot", facts=_facts(site=site)), layers=review_layers)
    assert r.measured["disturbed_sqft"] == pytest.approx(10_000.04, abs=0.01)  # the lot alone: 0.23 acre
    assert r.measured["plan_disturbed_sqft"] == FIVE_ACRES and r.measured["sediment_standard"]
    assert _status(r, "common_plan") == (
        "pass",
        "part of the common plan Meadow Ridge: the construction site includes the whole plan, 217,800 sq ft "
        "(5.00 acres) of disturbance, and the permit, the sediment standard and the less stringent requirements are "
        "decided on that total",
    )
    assert next(c for c in r.checks if c.code == "decision").finding == "review_decision_sediment"
    # The load is tested against the standard; no less stringent look.
    assert next(c for c in r.checks if c.code == "plan_item_9").finding == "review_sediment_load_met"
    assert "less_stringent" not in {c.code for c in r.checks}
    # The same lot alone: the standard does not reach it.
    alone = review_plan(package(tmp_path / "alone"), layers=review_layers)
    assert not alone.measured["sediment_standard"] and "common_plan" not in {c.code for c in alone.checks}
    assert next(c for c in alone.checks if c.code == "plan_item_9").finding == "review_rusle2_given"


def test_a_claim_in_a_common_plan_is_tested_against_the_thresholds_on_the_plans_total(
    tmp_path: Path, review_layers: Path
) -> None:
    """The claim errs by its difference from the drawing; in a plan the thresholds are the plan's, § 540-5
    CONSTRUCTION SITE: "including areas that are part of a larger common plan of development"."""

    def area_check(claim: float, plan_sqft: float, name: str) -> tuple[str, str]:
        site = {"plan_id": "Meadow Ridge", "plan_disturbed_sqft": plan_sqft, "disturbed_area_sqft": claim}
        r = review_plan(package(tmp_path / name, facts=_facts(site=site)), layers=review_layers)
        c = next(c for c in r.checks if c.code == "area_disturbed")
        return c.status, c.finding

    # The lot is drawn at 10,000 sq ft. A claim of 3,900 is under the permit threshold for the lot
    # alone, but in a five-acre plan a permit is required either way: a look, not a flip.
    assert area_check(3_900, FIVE_ACRES, "five") == ("look", "review_disturbed_area_differs")
    # In a 45,000 sq ft plan, 2,000 sq ft claimed short puts the plan under one acre (43,000): a flip.
    assert area_check(8_000, 45_000.0, "under") == ("fail", "review_disturbed_area_flips_sediment")
    # The same claim in a 50,000 sq ft plan leaves it over the acre (48,000): a look.
    assert area_check(8_000, 50_000.0, "over") == ("look", "review_disturbed_area_differs")


def test_a_lot_in_a_plan_without_a_load_gets_no_less_stringent_look(tmp_path: Path, review_layers: Path) -> None:
    facts = _facts(
        site={"plan_id": "Meadow Ridge", "plan_disturbed_sqft": FIVE_ACRES},
        rusle2={"sediment_tons_per_acre_year": None},
    )
    r = review_plan(package(tmp_path, facts=facts), layers=review_layers)
    assert _status(r, "plan_item_9")[0] == "fail" and "less_stringent" not in {c.code for c in r.checks}
    lone = review_plan(
        package(tmp_path / "lone", facts=_facts(rusle2={"sediment_tons_per_acre_year": None})), layers=review_layers
    )
    assert "less_stringent" in {c.code for c in lone.checks}  # under the acre alone: the reviewer's decision


def test_a_plan_total_that_is_not_an_area_is_a_package_problem(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(
        package(tmp_path, facts=_facts(site={"plan_id": "P", "plan_disturbed_sqft": "five acres"})),
        layers=review_layers,
    )
    assert any("plan_disturbed_sqft" in p.fix for p in r.problems) and not r.measured["sediment_standard"]
    orphan = review_plan(
        package(tmp_path / "o", facts=_facts(site={"plan_disturbed_sqft": FIVE_ACRES})), layers=review_layers
    )
    assert any("plan_id" in p.fix for p in orphan.problems) and not orphan.measured["sediment_standard"]


def test_review_takes_the_registrys_plan_total(tmp_path: Path, review_layers: Path) -> None:
    from datetime import date

    from esc_gis.registry import Application, init_registry, open_registry

    from .conftest import square_sqft

    reg_path = tmp_path / "reg.gpkg"
    init_registry(reg_path, layers=review_layers)
    with open_registry(reg_path, layers=review_layers) as reg:
        for x in (600, 1000):  # two 30,000 sq ft lots of the plan: 60,000 sq ft, over the acre
            reg.add(
                Application(f"{x} Test St", date(2026, 11, 2), square_sqft(x, 600, 30_000.0), CRS, plan_id="Meadow")
            )
    plan = package(tmp_path / "p", facts=_facts(site={"plan_id": "Meadow"}))
    out = tmp_path / "r.html"
    args = ["review", str(plan), "--layers", str(review_layers), "-o", str(out), "--json", str(tmp_path / "r.json")]
    assert CliRunner().invoke(cli, [*args, "--registry", str(reg_path)]).exit_code == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["measured"]["plan_disturbed_sqft"] == pytest.approx(60_000.0, abs=0.1)
    assert data["measured"]["sediment_standard"] is True
    [plan_check] = [c for c in data["checks"] if c["code"] == "common_plan"]
    assert plan_check["package_key"].startswith("plan.toml [site] plan_id") and plan_check["section"].startswith(
        "§ 540-5"
    )
    # The report's header names the package, not the reviewer's folders.
    page = out.read_text(encoding="utf-8")
    header = page[page.index("<div class='small'>Package") :].split("</div>")[0]
    assert "plan.gpkg" in header and str(tmp_path) not in header


def test_reasons_and_advisories_name_no_package_key(tmp_path: Path, review_layers: Path) -> None:
    facts = copy.deepcopy(FACTS)
    facts["site"] = {"performance_standards": ["540-7B"]}  # no legal description, no areas
    facts["narrative"] = {}
    facts["schedule"] = {}
    facts["rusle2"] = {"sediment_tons_per_acre_year": 9.0}
    r = review_plan(package(tmp_path, facts=facts, drop=("drainage",)), layers=review_layers)
    text = " ".join(r.reasons + r.advisories)
    assert len(r.reasons) >= 6 and not [k for k in PACKAGE_WORDS if k in text], text
    keys = {c.code: c.package_key for c in r.checks}
    assert keys["plan_item_2"] == "plan.toml [site] legal_description"
    assert keys["spill"] == "plan.toml [narrative] spill_procedures"


# --- One site, one answer: the review takes the screening's (issue 34) ---------------------------


def _sized(tmp_path: Path, area_sqft: float, **site: object):
    """The complete plan with ``area_sqft`` disturbed, no RUSLE2 figure and no spill procedures.

    The limits are 64 ft wide: a 4,000 sq ft rectangle of that width measures 4,000 to the last bit
    (a square measures a hair under it in floating point).
    """
    from .conftest import X0, K

    height = area_sqft / K / 64.0
    limits = shapely.box(X0 + 250, Y0 + 1210, X0 + 314, Y0 + 1210 + height)
    facts = _facts(
        site={"disturbed_area_sqft": area_sqft, **site},
        rusle2={"sediment_tons_per_acre_year": None},
        narrative={"spill_procedures": None},
    )
    edit = {"disturbed_limits": gpd.GeoDataFrame(geometry=[limits], crs=CRS)}
    return package(tmp_path, facts=facts, edit=edit)


def test_a_3000_sq_ft_plan_is_held_to_section_7a_only(tmp_path: Path, review_layers: Path) -> None:
    """§ 540-4A(1)(b): "A permit is not required for a construction site with less than 4,000 square feet
    of land-disturbing construction activity. The responsible party shall comply with all applicable
    provisions of this article for a non-permitted site, including the performance standards of
    § 540-7A." No § 540-9A(9) (RUSLE2) nor § 540-7B(3)(c)[4] (spills) reason is drafted."""
    r = review_plan(_sized(tmp_path / "small", 3_000.0), layers=review_layers)
    assert r.measured["permit"] == "not_required" and r.measured["disturbed_sqft"] == pytest.approx(3_000.0)
    assert r.verdict != "disapprove" and r.reasons == []
    assert not [c.section for c in r.checks if "540-9" in c.section or "540-7B" in c.section]
    [seven_a] = [c for c in r.checks if c.code == "non_permitted"]
    assert seven_a.section == "§ 540-4A(1)(b); § 540-7A" and seven_a.basis == "ordinance"
    assert "3,000 sq ft" in seven_a.detail and "no permit is required" in seven_a.detail
    assert _status(r, "decision")[0] == "pass" and "permit not required" in _status(r, "decision")[1]


def test_an_npdes_exempt_plan_over_4000_sq_ft_is_held_to_section_7a_under_section_4a3(
    tmp_path: Path, review_layers: Path
) -> None:
    """§ 540-4A(3): "A construction site exempted by federal statutes or regulations from the requirement to have
    a national pollutant discharge elimination system permit ... shall comply with the performance standards of
    § 540-7A if less than one acre of land disturbing construction activity. The performance standards of
    § 540-7B, permit requirements of § 540-8, and plan requirements of § 540-9 are not applicable." 10,000 sq ft
    is not "less than 4,000 square feet": the check cites § 540-4A(3), never § 540-4A(1)(b)."""
    r = review_plan(_sized(tmp_path / "npdes", 10_000.0, npdes_exempt=True), layers=review_layers)
    assert r.measured["permit"] == "not_required" and r.measured["standards"] == "540-7A"
    assert r.verdict != "disapprove" and r.reasons == []
    [seven_a] = [c for c in r.checks if c.code == "non_permitted"]
    assert (seven_a.finding, seven_a.section, seven_a.basis) == (
        "review_non_permitted_npdes",
        "§ 540-4A(3); § 540-7A",
        "ordinance",
    )
    assert "10,000 sq ft" in seven_a.detail and "exempted by federal law from an NPDES permit" in seven_a.detail
    assert not [c.section for c in r.checks if "540-4A(1)(b)" in c.section or "540-9" in c.section]


def test_exactly_4000_sq_ft_is_reviewed_in_full(tmp_path: Path, review_layers: Path) -> None:
    """§ 540-4A(1)(a): "A permit is required for a construction site with 4,000 square feet or greater
    of land disturbing construction activity. The responsible party shall comply with ... the
    performance standards of § 540-7, permit requirements of § 540-8, and plan requirements of
    § 540-9." At exactly 4,000 sq ft the missing RUSLE2 figure and spill procedures are reasons."""
    r = review_plan(_sized(tmp_path / "edge", 4_000.0), layers=review_layers)
    assert r.measured["disturbed_sqft"] >= 4_000.0 and r.measured["permit"] == "required"
    assert not any(c.code == "non_permitted" for c in r.checks)
    assert r.verdict == "disapprove"
    assert any("§ 540-9A(9)" in x for x in r.reasons) and any("§ 540-7B(3)(c)[4]" in x for x in r.reasons)


def test_a_state_agencys_plan_is_told_the_article_does_not_apply(tmp_path: Path, review_layers: Path) -> None:
    """§ 540-4C: "This article is not applicable to activities conducted by a state agency": the screening
    decides it from plan.toml's [site] state_agency, and the review says so and reviews nothing."""
    r = review_plan(_sized(tmp_path / "state", 10_000.0, state_agency=True), layers=review_layers)
    assert r.measured["applicability"] == "excluded_state_agency" and r.measured["permit"] == "not_applicable"
    [only] = r.checks
    assert (only.code, only.status, only.finding) == ("decision", "look", "review_decision_not_applicable")
    assert only.section.startswith("§ 540-4C") and "does not apply" in only.detail
    assert r.verdict == "needs a look" and r.reasons == []
    # An activity the screening does not know is the package's problem, not a verdict.
    bad = review_plan(_sized(tmp_path / "bad", 10_000.0, activity="mining"), layers=review_layers)
    assert bad.checks == [] and bad.verdict == "needs a look"
    assert any("mining" in str(p) for p in bad.problems)


def test_a_plan_outside_within_the_extraterritorial_area_is_told_so_as_a_reading(
    tmp_path: Path, review_layers: Path
) -> None:
    """§ 540-4B: "This article applies to land-disturbing construction activity on construction sites located
    within the boundaries and jurisdiction of the Village"; § 540-5 defines EXTRATERRITORIAL ("within 1.5 miles
    of a fourth-class city or Village") and no rule of the article uses it. A plan 400 ft west of the line is
    told "does not apply" as the screening's reading (basis interpretation, with its caveat), never as the
    ordinance's flat "the article does not apply here" (review_decision_outside, basis ordinance)."""
    # The site: x from -600 to -400, 400 ft west of the Village (x 0 to 2,000).
    west = {n: g.set_geometry(g.geometry.translate(xoff=-800.0)) for n, g in _layers().items()}
    r = review_plan(package(tmp_path / "west", edit=west), layers=review_layers)
    assert r.measured["applicability"] == "outside_jurisdiction" and r.measured["permit"] == "not_applicable"
    [only] = r.checks
    assert (only.finding, only.basis) == ("review_decision_not_applicable", "interpretation")
    assert only.section == "§ 540-4B; § 540-5 EXTRATERRITORIAL"
    assert only.detail.startswith(
        "the article does not apply to this site (outside jurisdiction; a reading): Reading: no disturbance lies inside"
    )
    assert "450 ft outside" in only.detail  # measured from the disturbed limits (x -550 to -450)
    assert r.verdict == "needs a look" and r.reasons == []


def _not_a_package_inputs(tmp_path: Path) -> dict[str, Path]:
    """A PNG renamed .gpkg, an empty folder, an empty file, a GeoPackage with none of the plan's layers."""
    png = tmp_path / "png" / "plan.gpkg"
    png.parent.mkdir()
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(64))
    empty_dir = tmp_path / "empty_folder"
    empty_dir.mkdir()
    empty_file = tmp_path / "empty" / "plan.gpkg"
    empty_file.parent.mkdir()
    empty_file.write_bytes(b"")
    other = tmp_path / "other" / "roads.gpkg"
    other.parent.mkdir()
    gpd.GeoDataFrame({"name": ["Main St"]}, geometry=[_line((0, 0), (100, 0))], crs=CRS).to_file(
        other, layer="roads", engine="pyogrio"
    )
    (other.parent / "plan.toml").write_text(_toml(FACTS))
    return {"png": png, "empty folder": empty_dir, "empty file": empty_file, "other layers": other}


@pytest.mark.parametrize("kind", ["png", "empty folder", "empty file", "other layers"])
def test_what_is_not_a_plan_package_is_refused_with_no_verdict(tmp_path: Path, review_layers: Path, kind: str) -> None:
    """Not a broken package but something else: the review says "this is not a plan package" with what
    was expected, exit 1, and writes no report (never "disapprove" with a list of draft reasons)."""
    from esc_gis.errors import NotAPlanPackageError

    path = _not_a_package_inputs(tmp_path)[kind]
    with pytest.raises(NotAPlanPackageError, match="this is not a plan package") as info:
        review_plan(path, layers=review_layers)
    assert "site_boundary, disturbed_limits, drainage, bmps" in str(info.value) and "plan.toml" in str(info.value)
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        cli, ["review", str(path), "-o", str(out), "--json", str(tmp_path / "r.json"), "--layers", str(review_layers)]
    )
    assert result.exit_code == 1, result.output
    assert "this is not a plan package" in result.output and "disapprove" not in result.output
    assert "Traceback" not in result.output
    assert not out.exists() and not (tmp_path / "r.json").exists()
