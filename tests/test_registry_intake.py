"""The registry's intake takes the screening it was made from (issue 34), on both back ends.

A screening of six sites, sent in degrees as users send them, with disturbed limits keyed by
site_id; then `permits add --site-layer`, `permits import`, `permits update --disturbed` and
`permits enforce --site-layer` of the same sites. Every number is checkable by hand:

    site  site sq ft  limits sq ft  plan  flags          screening decides
    S02   18,000      4,800         -     -              required (4,800 >= 4,000)
    G01   18,000      3,000         -     -              not_required (a garage)
    P1a   16,500      2,500         MR    -              required (plan 5,000, not 33,000)
    P1b   16,500      2,500         MR    -              required
    SA    20,000      20,000        -     state_agency   not_applicable (§ 540-4C)
    NX    40,000      20,000        -     npdes_exempt   not_required, § 540-7A (§ 540-4A(3))
    OUT   10,000      5,000         -     -              not_applicable (outside, within § 540-5's
                                                     extraterritorial area: a reading)
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import ValidationError
from esc_gis.registry import Application
from esc_gis.registry.service.imports import screened_limits

from .conftest import CRS, square_sqft

#: (site_id, name, x, y, site sq ft, limits sq ft, plan_id, state_agency, npdes_exempt)
SITES = (
    ("S02", "2 House St", 100, 1000, 18000, 4800, None, False, False),
    ("G01", "1 Garage St", 300, 1000, 18000, 3000, None, False, False),
    ("P1a", "Maple Ridge lot 1", 500, 1000, 16500, 2500, "MR", False, False),
    ("P1b", "Maple Ridge lot 2", 700, 1000, 16500, 2500, "MR", False, False),
    ("SA", "State Hwy ramp", 900, 1000, 20000, 20000, None, True, False),
    ("NX", "Federal project", 1100, 1000, 40000, 20000, None, False, True),
    ("OUT", "Over the line", 2100, 1000, 10000, 5000, None, False, False),
)
APPLIES = ("S02", "G01", "P1a", "P1b", "NX")


def _run(*args: str) -> object:
    r = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in r.output, r.output
    return r


@pytest.fixture
def screened(tmp_path: Path, layers_path: Path) -> dict[str, Path]:
    """`esc-gis screen` of :data:`SITES` sent in degrees, written as GeoPackage, GeoJSON and CSV."""
    rows = [
        {
            "site_id": s,
            "name": name,
            "plan_id": plan,
            "activity": "construction",
            "state_agency": agency,
            "npdes_exempt": npdes,
            "geometry": square_sqft(x, y, site),
        }
        for s, name, x, y, site, _, plan, agency, npdes in SITES
    ]
    sent = tmp_path / "sites.geojson"
    gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS).to_crs("EPSG:4326").to_file(sent)
    limits = tmp_path / "limits.geojson"
    gpd.GeoDataFrame(
        {"site_id": [s for s, *_ in SITES]},
        geometry=[square_sqft(x + 5, y + 5, lim) for _, _, x, y, _, lim, *_ in SITES],
        crs=CRS,
    ).to_crs("EPSG:4326").to_file(limits)
    out = {"limits": limits, "sites": sent}
    for fmt in ("gpkg", "geojson", "csv"):
        out[fmt] = tmp_path / f"screening.{fmt}"
        r = _run("screen", str(sent), "--disturbed", str(limits), "--layers", str(layers_path), "-o", str(out[fmt]))
        assert r.exit_code == 0, r.output
    return out


def _screening(path: Path) -> pd.DataFrame:
    frame = gpd.read_file(path, layer="screening") if path.suffix == ".gpkg" else gpd.read_file(path)
    return frame.set_index("site_id")


def _shown(target: str, number: str, lay: list[str]) -> dict:
    r = _run("permits", "show", target, number, "--json", *lay)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def _add(target: str, layer: Path, site: str, lay: list[str], *more: str) -> object:
    return _run(
        "permits", "add", target, "--site-layer", str(layer), "--site-id", site, "--address", f"{site} St",
        "--received", "2026-11-02", *lay, *more,
    )  # fmt: skip


# --- The screening output carries the limits it measured ------------------------------------------


def test_the_screening_output_carries_its_measured_limits_in_every_format(screened) -> None:
    """Each format holds the limits as EWKT in the measuring CRS, even a GeoJSON in degrees."""
    for fmt in ("gpkg", "geojson", "csv"):
        frame = _screening(screened[fmt])
        text = str(frame.loc["S02", "disturbed_limits"])
        assert text.startswith("SRID=7594;POLYGON"), (fmt, text[:40])
        geom = screened_limits(text, None, CRS)
        assert geom.area * 1.0000043**2 == pytest.approx(4800, rel=1e-4)  # US survey feet
        assert float(frame.loc["S02", "disturbed_sqft"]) == pytest.approx(4800, abs=0.5)
    with pytest.raises(ValueError, match="not an EPSG code"):
        screened_limits("SRID=x;POINT (1 2)", None, CRS)
    with pytest.raises(ValueError, match="not WKT"):
        screened_limits("SRID=7594;POLYGUN ((0 0, 1 0, 1 1, 0 0))", None, CRS)
    assert screened_limits(None, None, CRS) is None and screened_limits(float("nan"), None, CRS) is None


@pytest.mark.parametrize("fmt", ["gpkg", "csv"])
def test_the_streamed_writer_carries_the_same_limits(tmp_path: Path, layers_path: Path, screened, fmt: str) -> None:
    """`screen --batch-rows` writes the column as the whole-file writer does, batch by batch."""
    out = tmp_path / f"streamed.{fmt}"
    r = _run(
        "screen", str(screened["sites"]), "--disturbed", str(screened["limits"]), "--layers", str(layers_path),
        "-o", str(out), "--batch-rows", "3", "--quiet",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    streamed, whole = _screening(out), _screening(screened[fmt])
    assert list(streamed.columns) == list(whole.columns)
    assert streamed["disturbed_limits"].tolist() == whole["disturbed_limits"].tolist()
    assert streamed["disturbed_limits"].notna().all()


def test_a_screening_without_limits_has_no_limits_column(tmp_path: Path, layers_path: Path, screened) -> None:
    out = tmp_path / "whole.gpkg"
    r = _run("screen", str(screened["sites"]), "--layers", str(layers_path), "-o", str(out))
    assert r.exit_code == 0, r.output
    frame = _screening(out)
    assert "disturbed_limits" not in frame.columns
    assert frame.loc["S02", "disturbed_sqft"] == pytest.approx(18000, abs=0.5)


# --- permits add --site-layer ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["gpkg", "geojson"])
def test_add_from_a_screening_takes_its_limits_plan_and_flags(
    target: str, layers_path: Path, screened, fmt: str
) -> None:
    """§ 540-4A(1)(a): "A permit is required for a construction site with 4,000 square feet or
    greater of land disturbing construction activity"; (b) "A permit is not required for a
    construction site with less than 4,000 square feet". The registry measures the limits the
    screening measured, not the whole lot (issue 34)."""
    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0
    layer = screened[fmt]
    r = _add(target, layer, "S02", lay)
    assert r.exit_code == 0 and "WARNING" not in r.output, r.output
    p = _shown(target, "ESC-2026-0001", lay)
    # The limits are exact in every format (EWKT at full precision, in the measuring CRS); a
    # GeoJSON's site comes back from 7-decimal degrees, a few sq ft off.
    assert p["disturbed_sqft"] == pytest.approx(4800, abs=0.5) and p["site_sqft"] == pytest.approx(18000, abs=5)
    assert p["permit_decision"] == "required"
    r = _add(target, layer, "G01", lay)  # a 3,000 sq ft garage on an 18,000 sq ft lot
    assert r.exit_code == 0, r.output
    g = _shown(target, "ESC-2026-0002", lay)
    assert g["disturbed_sqft"] == pytest.approx(3000, abs=0.5) and g["permit_decision"] == "not_required"
    assert g["standards"] == "540-7A"


def test_add_one_site_of_a_common_plan_adds_up_its_screened_plan_mates(
    target: str, layers_path: Path, screened
) -> None:
    """§ 540-5 CONSTRUCTION SITE: "... where multiple separate and distinct land-disturbing
    construction activities may take place at different times on different schedules but under one
    plan." P1a's 2,500 sq ft with P1b's 2,500 sq ft: 5,000 sq ft, a permit (not 33,000 of whole lots)."""
    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0
    assert _add(target, screened["gpkg"], "P1a", lay).exit_code == 0
    a = _shown(target, "ESC-2026-0001", lay)
    assert a["plan_id"] == "MR" and a["disturbed_sqft"] == pytest.approx(2500, abs=0.5)
    assert a["plan_disturbed_sqft"] == pytest.approx(5000, abs=0.5) and a["permit_decision"] == "required"
    # Its mate added later: the plan still 5,000 (the same limits counted once), nothing re-decided.
    assert _add(target, screened["gpkg"], "P1b", lay).exit_code == 0
    b = _shown(target, "ESC-2026-0002", lay)
    assert b["plan_disturbed_sqft"] == pytest.approx(5000, abs=0.5) and b["permit_decision"] == "required"
    assert [e["kind"] for e in _shown(target, "ESC-2026-0001", lay)["events"]] == ["received"]


def test_add_refuses_a_state_agency_site_and_an_outside_one_with_the_screenings_reason(
    target: str, layers_path: Path, screened
) -> None:
    """§ 540-4C: "This article is not applicable to activities conducted by a state agency";
    § 540-4B: "This article applies to land-disturbing construction activity on construction sites
    located within the boundaries and jurisdiction of the Village". OUT lies within § 540-5's
    EXTRATERRITORIAL area ("within 1.5 miles of a ... Village"), which no rule of the article uses:
    the refusal quotes the screening's reading as a reading, never as the ordinance's words."""
    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0
    r = _add(target, screened["gpkg"], "SA", lay)
    assert r.exit_code == 1 and "takes no permit: Conducted by a state agency" in r.output, r.output
    assert "(§ 540-4C)" in r.output
    r = _add(target, screened["gpkg"], "OUT", lay)
    assert r.exit_code == 1 and "Reading: no disturbance lies inside the Village of Winneconne" in r.output, r.output
    assert "(§ 540-4B; § 540-5 EXTRATERRITORIAL; interpretation)" in r.output, r.output
    assert "where this article does not apply" not in r.output  # the ordinance's flat words are not borrowed
    assert _run("permits", "list", target, *lay).output.strip().endswith("0 permit(s).")


def test_an_npdes_exempt_site_gets_the_screenings_standards_and_keeps_its_exemption(
    target: str, layers_path: Path, screened, layer_set
) -> None:
    """§ 540-4A(3): "A construction site exempted by federal statutes or regulations from the
    requirement to have a national pollutant discharge elimination system permit ... shall comply
    with the performance standards of § 540-7A if less than one acre ... permit requirements of
    § 540-8 ... are not applicable." 20,000 sq ft: not 540-7B, not a permit."""
    from esc_gis.registry import open_registry

    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0
    r = _add(target, screened["gpkg"], "NX", lay, "--plan-id", "Fed")
    assert r.exit_code == 0, r.output
    p = _shown(target, "ESC-2026-0001", lay)
    assert (p["permit_decision"], p["standards"]) == ("not_required", "540-7A")
    assert "marked NPDES-exempt" in p["events"][0]["detail"]
    # A plan-mate added later re-decides the plan: the exemption, kept in the history, still holds
    # (20,000 + 3,000 sq ft is under one acre).
    with open_registry(target, layers=layer_set) as reg:
        reg.add(Application("2 Fed St", date(2026, 11, 2), square_sqft(1100, 1400, 3000), CRS, plan_id="Fed"))
        nx = reg.get("ESC-2026-0001")
        assert nx.plan_disturbed_sqft == pytest.approx(23000, abs=0.5)
        assert (nx.permit_decision, nx.standards) == ("not_required", "540-7A")
        assert reg.verify() == []


def test_a_permit_measured_on_its_whole_site_against_its_screening_is_said_loudly(
    target: str, layers_path: Path, screened, tmp_path: Path
) -> None:
    """A screening written before its limits were kept: the permit falls back to its whole site,
    18,000 sq ft where the screening measured 4,800, on stderr and in its history."""
    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0
    old = tmp_path / "old.gpkg"
    gpd.read_file(screened["gpkg"], layer="screening").drop(columns=["disturbed_limits"]).to_file(
        old, layer="screening"
    )
    r = _add(target, old, "S02", lay)
    assert r.exit_code == 0, r.output
    assert "WARNING: ESC-2026-0001 (site_id S02) is measured on 18,000 sq ft (its whole site)" in r.stderr
    assert "where its screening measured 4,800 sq ft of disturbed limits" in r.stderr
    p = _shown(target, "ESC-2026-0001", lay)
    assert "ITS SCREENING MEASURED 4,800 sq ft of disturbed limits" in p["events"][0]["detail"]
    # Given the limits, it agrees and nothing is said.
    r = _add(target, old, "G01", lay, "--disturbed", str(screened["limits"]))
    assert r.exit_code == 0 and "WARNING" not in r.output, r.output
    assert "ITS SCREENING" not in _shown(target, "ESC-2026-0002", lay)["events"][0]["detail"]


# --- permits import of a screening, and the chain test ---------------------------------------------


def test_import_refuses_every_excluded_or_outside_row_at_once(target: str, layers_path: Path, screened) -> None:
    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0
    r = _run(
        "permits", "import", target, str(screened["gpkg"]), "--field", "site_address=name",
        "--received-on", "2026-11-02", *lay,
    )  # fmt: skip
    assert r.exit_code == 1 and "2 problems" in r.output, r.output
    assert "row 5: this article does not apply to the site, so it takes no permit: Conducted by a state" in r.output
    assert "row 7: Reading: no disturbance lies inside the Village of Winneconne" in r.output
    assert "(§ 540-4B; § 540-5 EXTRATERRITORIAL; interpretation)" in r.output
    assert _run("permits", "list", target, *lay).output.strip().endswith("0 permit(s).")


@pytest.mark.parametrize("fmt", ["gpkg", "csv"])
def test_screen_then_add_and_import_give_the_screenings_answers_row_by_row(
    target: str, layers_path: Path, screened, fmt: str
) -> None:
    """The chain of issue 34: a screening, then `permits import` of the sites it says the article
    reaches, then `permits add` of each in a second registry: applicability, disturbed area, plan
    total, decision and standards equal the screening's on every row."""
    lay = ["--layers", str(layers_path)]
    layer = screened[fmt]
    screening = _screening(layer)
    for c in ("disturbed_sqft", "plan_disturbed_sqft"):
        screening[c] = screening[c].astype(float)  # a CSV reads back as text
    assert _run("permits", "init", target, *lay).exit_code == 0
    r = _run(
        "permits", "import", target, str(layer), "--where", "applicability = 'applies'",
        "--field", "site_address=name", "--field", "parcel_id=site_id", "--received-on", "2026-11-02", *lay,
    )  # fmt: skip
    assert r.exit_code == 0 and "Imported 5 permit(s)" in r.output and "WARNING" not in r.output, r.output
    imported = {p["parcel_id"]: p for p in (_shown(target, f"ESC-2026-000{i}", lay) for i in range(1, 6))}
    assert sorted(imported) == sorted(APPLIES)
    for site, p in imported.items():
        s = screening.loc[site]
        assert s["applicability"] == "applies"
        assert p["disturbed_sqft"] == pytest.approx(s["disturbed_sqft"], abs=0.01), site
        assert p["plan_disturbed_sqft"] == pytest.approx(s["plan_disturbed_sqft"], abs=0.01), site
        assert (p["permit_decision"], p["standards"]) == (s["permit"], s["standards"]), site
    # The numbers, by hand.
    assert imported["S02"]["disturbed_sqft"] == pytest.approx(4800, abs=0.5)
    assert imported["G01"]["permit_decision"] == "not_required"
    assert imported["P1a"]["plan_disturbed_sqft"] == pytest.approx(5000, abs=0.5)
    # `permits add` of the same sites, one by one, into a second registry: the same answers.
    second = target.replace("permits.gpkg", "second.gpkg") if target.endswith(".gpkg") else None
    if second is not None:
        assert _run("permits", "init", second, *lay).exit_code == 0
        for i, site in enumerate(APPLIES, start=1):
            assert _add(second, layer, site, lay).exit_code == 0
            p, s = _shown(second, f"ESC-2026-000{i}", lay), screening.loc[site]
            assert p["disturbed_sqft"] == pytest.approx(s["disturbed_sqft"], abs=0.01), site
            assert p["plan_disturbed_sqft"] == pytest.approx(s["plan_disturbed_sqft"], abs=0.01), site
            assert (p["permit_decision"], p["standards"]) == (s["permit"], s["standards"]), site


def test_import_with_where_still_adds_up_the_plan_over_the_rows_left_out(
    target: str, layers_path: Path, screened
) -> None:
    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0
    r = _run(
        "permits", "import", target, str(screened["gpkg"]), "--where", "site_id = 'P1a'",
        "--field", "site_address=name", "--received-on", "2026-11-02", *lay,
    )  # fmt: skip
    assert r.exit_code == 0 and "WARNING" not in r.output, r.output
    p = _shown(target, "ESC-2026-0001", lay)
    assert p["plan_disturbed_sqft"] == pytest.approx(5000, abs=0.5) and p["permit_decision"] == "required"


def test_import_disturbed_limits_keyed_by_the_layers_own_id(
    target: str, layers_path: Path, screened, tmp_path: Path
) -> None:
    """A county's permit layer with its own site ids, and limits keyed by them (--disturbed-id)."""
    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0
    rows = [
        {"site_id": "S02", "site_address": "2 House St", "received_on": "2026-11-02", "geometry": square_sqft(100, 1000, 18000)},
        {"site_id": "G01", "site_address": "1 Garage St", "received_on": "2026-11-02", "geometry": square_sqft(300, 1000, 18000)},
    ]  # fmt: skip
    layer = tmp_path / "county.gpkg"
    gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS).to_file(layer)
    limits = str(screened["limits"])
    # Keyed by permit_number by default: these limits have none, and the fix names --disturbed-id.
    r = _run("permits", "import", target, str(layer), "--disturbed", limits, *lay)
    assert r.exit_code == 1 and "has no permit_number column" in r.output and "--disturbed-id" in r.output, r.output
    r = _run("permits", "import", target, str(layer), "--disturbed", limits, "--disturbed-id", "parcel", *lay)
    assert r.exit_code == 1 and "has no parcel column" in r.output, r.output
    # The limits of sites the layer does not have are named, all at once: nothing imported.
    r = _run("permits", "import", target, str(layer), "--disturbed", limits, "--disturbed-id", "site_id", *lay)
    assert r.exit_code == 1 and "site_id 'P1a' matches no row" in r.output and "5 problems" in r.output, r.output
    r = _run("permits", "import", target, str(layer), "--disturbed-id", "site_id", *lay)
    assert r.exit_code == 2 and "--disturbed-id keys --disturbed" in r.output
    two = tmp_path / "two.geojson"
    gpd.read_file(screened["limits"]).head(2).to_file(two)
    r = _run("permits", "import", target, str(layer), "--disturbed", str(two), "--disturbed-id", "site_id", *lay)
    assert r.exit_code == 0, r.output
    a, b = _shown(target, "ESC-2026-0001", lay), _shown(target, "ESC-2026-0002", lay)
    assert a["disturbed_sqft"] == pytest.approx(4800, abs=0.5) and a["permit_decision"] == "required"
    assert b["disturbed_sqft"] == pytest.approx(3000, abs=0.5) and b["permit_decision"] == "not_required"


def test_import_takes_a_sites_several_limit_polygons_together(reg, tmp_path: Path) -> None:
    """§ 540-5: overlapping limits count once, as screening counts them."""
    frame = gpd.GeoDataFrame(
        {"site_id": ["A"], "site_address": ["1 A St"], "received_on": ["2026-11-02"]},
        geometry=[square_sqft(100, 1000, 18000)],
        crs=CRS,
    )
    limits = gpd.GeoDataFrame(
        {"site_id": ["A", "A"]}, geometry=[square_sqft(110, 1010, 2500), square_sqft(110, 1010, 2500)], crs=CRS
    )
    (n,) = reg.import_frame(frame, source="a.gpkg", disturbed=limits, disturbed_id="site_id")
    assert reg.get(n).disturbed_sqft == pytest.approx(2500, abs=0.5)


# --- permits update --disturbed ------------------------------------------------------------------


def test_update_disturbed_remeasures_an_undecided_application(
    target: str, layers_path: Path, screened, tmp_path: Path
) -> None:
    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0
    old = tmp_path / "old.gpkg"
    gpd.read_file(screened["gpkg"], layer="screening").drop(columns=["disturbed_limits"]).to_file(
        old, layer="screening"
    )
    assert _add(target, old, "S02", lay).exit_code == 0  # measured on its whole site: 18,000
    r = _run(
        "permits", "update", target, "ESC-2026-0001", "--disturbed", str(screened["limits"]), "--site-id", "S02",
        "--reasons", "limits from the plan sheet", *lay,
    )  # fmt: skip
    assert r.exit_code == 0 and "4,800 sq ft" in r.output, r.output
    p = _shown(target, "ESC-2026-0001", lay)
    assert p["disturbed_sqft"] == pytest.approx(4800, abs=0.5) and p["permit_decision"] == "required"
    e = p["events"][-1]
    assert e["kind"] == "remeasured" and "reasons: limits from the plan sheet" in e["detail"]
    assert "(was 18,000 sq ft, on the whole site)" in e["detail"]
    r = _run("permits", "verify", target, *lay)
    assert r.exit_code == 0, r.output
    # Measured again on a smaller area: the decision changes, and the history says from what.
    r = _run(
        "permits", "update", target, "ESC-2026-0001", "--disturbed", str(screened["limits"]), "--site-id", "G01", *lay
    )
    assert r.exit_code == 0, r.output
    p = _shown(target, "ESC-2026-0001", lay)
    assert p["disturbed_sqft"] == pytest.approx(3000, abs=0.5) and p["permit_decision"] == "not_required"
    assert "(was 4,800 sq ft, permit required)" in p["events"][-1]["detail"]
    assert _run("permits", "verify", target, *lay).exit_code == 0
    r = _run("permits", "update", target, "ESC-2026-0001", "--reasons", "x", *lay)
    assert r.exit_code == 2 and "go with --disturbed" in r.output
    r = _run("permits", "update", target, "ESC-2026-0001", "--disturbed", str(screened["limits"]), *lay)
    assert r.exit_code == 1 and "has 7 features" in r.output and "--site-id" in r.output


def test_remeasuring_redecides_the_plan_and_is_refused_once_decided(reg) -> None:
    """§ 540-8C(1): the office "shall inform the applicant whether the application and plan are
    approved or disapproved"; § 540-8E(2): "Obtain permission in writing from the administering
    authority prior to any modification ... of the erosion and sediment control plan." Read: the
    limits may be measured anew until the decision; after it, a change is a plan amendment."""
    site_a, site_b = square_sqft(100, 1000, 18000), square_sqft(400, 1000, 18000)
    a = reg.add(
        Application("1 A St", date(2026, 11, 2), site_a, CRS, disturbed=square_sqft(110, 1010, 2500), plan_id="P")
    )
    b = reg.add(
        Application("2 B St", date(2026, 11, 2), site_b, CRS, disturbed=square_sqft(410, 1010, 1000), plan_id="P")
    )
    assert reg.get(a).permit_decision == "not_required"  # 3,500 sq ft over the plan
    # B at 1,499.99 sq ft: the plan 3,999.99, just under 4,000 ("4,000 square feet or greater").
    # The new limits lie apart from the old: the old are replaced, not added to the plan.
    p = reg.remeasure(b, square_sqft(450, 1060, 1499.99), CRS, reasons="revised plan", who="clerk")
    assert p.plan_disturbed_sqft == pytest.approx(3999.99, abs=0.01) and p.permit_decision == "not_required"
    p = reg.remeasure(b, square_sqft(450, 1060, 1500.0), CRS, reasons="revised plan", who="clerk")
    assert p.plan_disturbed_sqft == pytest.approx(4000.0, abs=0.01) and p.permit_decision == "required"
    pa = reg.get(a)
    assert pa.permit_decision == "required" and "(was not_required)" in pa.events[-1].detail
    # The site stays its own: B's old limits are not counted with its new ones.
    assert reg.get(b).disturbed_sqft == pytest.approx(1500.0, abs=0.01)
    decided = reg.add(
        Application(
            "3 C St",
            date(2026, 11, 2),
            square_sqft(700, 1000, 9000),
            CRS,
            status="approved",
            issued_on=date(2026, 11, 3),
        )
    )
    with pytest.raises(ValidationError, match=r"is decided \(approved\); reading: .*written permission.*§ 540-8E\(2\)"):
        reg.remeasure(decided, square_sqft(710, 1010, 1000), CRS, reasons="smaller")
    assert reg.get(decided).disturbed_sqft == pytest.approx(9000, abs=0.5)
    with pytest.raises(ValidationError, match="not a polygon"):
        reg.remeasure(a, square_sqft(110, 1010, 100).centroid, CRS)


def test_remeasuring_is_refused_once_the_decision_period_ran_out(reg, monkeypatch) -> None:
    """§ 540-8C(5): "Failure by the administering authority to inform the permit applicant of a decision
    within 20 business days of a required submittal shall be deemed to mean approval of the submittal and the
    applicant may proceed as if a permit had been issued"; § 540-8E(2): "Obtain permission in writing from
    the administering authority prior to any modification pursuant to § 540-9B of the erosion and sediment
    control plan". Received and paid Monday 2026-11-02, the decision is due 2026-11-30: on that day the
    limits may still be measured again; from the next, the application stands approved (recorded or not),
    and new limits are an amendment with permission, as a late closing is refused on the same day."""
    from esc_gis.errors import IllegalTransitionError
    from esc_gis.profile import Profile

    n = reg.add(Application("1 A St", date(2026, 11, 2), square_sqft(100, 1000, 18000), CRS,
                            disturbed=square_sqft(110, 1010, 5400)))  # fmt: skip
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt="R-1", who="clerk")
    reg.transition(n, "under_review", on=date(2026, 11, 3))
    assert reg.get(n).permit_decision == "required"
    monkeypatch.setattr(Profile, "today", lambda self: date(2026, 12, 1))
    with pytest.raises(ValidationError) as refused:
        reg.remeasure(n, square_sqft(110, 1010, 3000), CRS, reasons="smaller")
    text = str(refused.value)
    assert "the decision was due by 2026-11-30 and none was made" in text
    assert "shall be deemed to mean approval of the submittal" in text
    assert "(§ 540-8C(5); § 540-8E(2); § 540-9B)" in text and "`esc-gis permits amend`" in text
    p = reg.get(n)
    assert (p.status, p.permit_decision) == ("under_review", "required")
    assert p.disturbed_sqft == pytest.approx(5400, abs=0.5)
    # The same day, the same clock: a late closing is refused too (§ 540-8C(5)).
    with pytest.raises(IllegalTransitionError, match=r"ran out on 2026-11-30"):
        reg.transition(n, "closed", on=date(2026, 12, 1), reasons="Withdrawn.")
    # The edge: on the last day of the period the application is still undecided and may be remeasured.
    monkeypatch.setattr(Profile, "today", lambda self: date(2026, 11, 30))
    p = reg.remeasure(n, square_sqft(110, 1010, 3000), CRS, reasons="smaller")
    assert (p.disturbed_sqft, p.permit_decision) == (pytest.approx(3000, abs=0.5), "not_required")


# --- permits enforce --site-layer -------------------------------------------------------------------


def test_enforce_on_a_screened_site_decides_it_as_intake_does(target: str, layers_path: Path, screened) -> None:
    """§ 540-8A: "When a permit is required, no responsible party may commence a land-disturbing
    construction activity ... without ... a permit". Only a site that needs one opens a case of
    activity without a permit; a state agency's site is outside the article (§ 540-4C)."""
    lay = ["--layers", str(layers_path)]
    assert _run("permits", "init", target, *lay).exit_code == 0

    def enforce(site: str) -> object:
        return _run(
            "permits", "enforce", target, "--site-layer", str(screened["gpkg"]), "--site-id", site, "--ground", "A1",
            "--on", "2026-11-20", "--reasons", "seen from the road", *lay,
        )  # fmt: skip

    r = enforce("G01")
    assert r.exit_code == 1 and "site G01 does not need a permit (screening: permit not_required, " in r.output
    r = enforce("SA")
    assert r.exit_code == 1 and "Conducted by a state agency" in r.output and "(§ 540-4C)" in r.output, r.output
    r = enforce("P1a")  # 2,500 sq ft alone, 5,000 with its plan-mate: a permit is required
    assert r.exit_code == 0 and "ENF-2026-0001" in r.output, r.output
