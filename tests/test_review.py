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
import pytest
import shapely
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.review import review_plan
from esc_gis.review.bmps import classify

from .browser import chromium_page, real_errors
from .conftest import CRS, Y0, box, write_dem, write_layer_set

XSS = '<img src=x onerror="alert(1)">'


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
    write_dem(folder / "dem.tif", np.repeat((100 + 0.05 * y)[:, None], 400, axis=1).astype("float32"),
              y0=Y0 + 2000)  # fmt: skip
    waters = gpd.GeoDataFrame({"water_class": ["perennial_stream"], "name": ["Test Creek"]},
                              geometry=[_line((0, 1150), (2000, 1150))], crs=CRS)  # fmt: skip
    return write_layer_set(folder, waters=waters, extra='[dem]\npath = "dem.tif"\nz_unit = "us_ft"\n')


FACTS = {
    "crs": "EPSG:7594",
    "plan": {"title": "Test house"},
    "landowner": {"name": "Ann Owner", "address": "1 Test St", "phone": "920-555-0100"},
    "responsible_parties": [{"name": "Dig Co", "address": "2 Test St", "phone": "920-555-0199"}],
    "site": {"legal_description": "Lot 1, Test Plat", "site_area_sqft": 40000, "disturbed_area_sqft": 10000,
             "performance_standards": ["540-7B"]},
    "schedule": {"start": "2027-04-01", "end": "2027-08-01", "sequence": ["fence", "dig", "build", "seed"]},
    "narrative": {"text": "Silt fence on the south, pad on the north.", "spill_procedures": "Spill kit on site."},
}  # fmt: skip


def _layers() -> dict[str, gpd.GeoDataFrame]:
    def g(geoms: list, **cols: list) -> gpd.GeoDataFrame:
        return gpd.GeoDataFrame(cols, geometry=geoms, crs=CRS)

    return {
        "site_boundary": g([box(200, 1200, 400, 1400)]),
        "disturbed_limits": g([box(250, 1250, 350, 1350)]),
        "drainage": g([_line((300, 1340), (300, 1260))]),
        "bmps": g([_line((245, 1350), (245, 1245), (355, 1245), (355, 1350)), box(290, 1350, 310, 1404),
                   _pt(330, 1406), shapely.get_exterior_ring(box(287, 1287, 313, 1313))],
                  type=["1056", "stone tracking pad", "1060", "fiber roll"]),
        "stockpiles": g([box(290, 1290, 310, 1310)], days=[30]),
        "streets": g([_line((100, 1405), (500, 1405))]),
        "inlets": g([_pt(330, 1405)]),
    }  # fmt: skip


def _toml(facts: dict) -> str:
    lines = []

    def val(v: object) -> str:
        if isinstance(v, str):
            return json.dumps(v) if not v[:4].isdigit() or "-" not in v else v  # dates bare, as TOML dates
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
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


def package(folder: Path, *, facts: dict | None = None, drop: tuple[str, ...] = (),
            edit: dict[str, gpd.GeoDataFrame] | None = None) -> Path:  # fmt: skip
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


def _status(review, code: str) -> tuple[str, str]:
    c = next(c for c in review.checks if c.code == code)
    return c.status, c.detail


def test_the_complete_plan_passes(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path / "ok"), layers=review_layers)
    bad = [(c.code, c.status, c.detail) for c in r.checks if c.status in ("fail", "look")]
    assert bad == [] and r.problems == [] and r.verdict == "approve"
    assert r.measured["disturbed_sqft"] == pytest.approx(10_000.04, abs=0.01)  # 100 x 100 US survey feet
    assert _status(r, "perimeter") == ("pass", "0 of 100 ft of downslope edge without perimeter control")
    assert _status(r, "waters")[1] == "0 of 100 ft of the edge facing the water without a BMP"
    assert _status(r, "stockpiles")[0] == "pass" and _status(r, "tracking")[0] == "pass"
    assert r.reasons == []


def _facts(**changes: dict) -> dict:
    f = copy.deepcopy(FACTS)
    for table, values in changes.items():
        for k, v in values.items():
            if v is None:
                f[table].pop(k, None)
            else:
                f[table][k] = v
    return f


@pytest.mark.parametrize(("change", "code", "words"), [
    ({"landowner": {"phone": None}}, "540-9A(1)", "Ann Owner has no phone"),
    ({"site": {"legal_description": None}}, "540-9A(2)", "no legal_description"),
    ({"site": {"disturbed_area_sqft": None}}, "540-9A(4)", "state site_area_sqft and disturbed_area_sqft"),
    ({"site": {"disturbed_area_sqft": 3900}}, "area_disturbed", "the other side of the permit threshold (4,000 sq ft)"),
    ({"site": {"performance_standards": ["540-7A"]}}, "540-9A(5)", "makes § 540-7B apply"),
    ({"narrative": {"text": None}}, "540-9A(7)", "no [narrative] text"),
    ({"schedule": {"sequence": None}}, "540-9A(8)", "needs start, end and sequence"),
    ({"narrative": {"spill_procedures": None}}, "540-7B(3)(c)[4]", "no spill_procedures"),
    ({"schedule": {"end": "2027-03-01"}}, "schedule", "ends (2027-03-01) before it starts"),
])  # fmt: skip
def test_each_missing_fact_fails_its_item(tmp_path: Path, review_layers: Path, change: dict, code: str,
                                          words: str) -> None:  # fmt: skip
    r = review_plan(package(tmp_path, facts=_facts(**change)), layers=review_layers)
    status, detail = _status(r, code)
    assert status == "fail" and words in detail, detail
    assert r.verdict == "disapprove" and any(words in reason for reason in r.reasons)


def test_missing_drainage_fails_the_site_map_item(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path, drop=("drainage",)), layers=review_layers)
    assert _status(r, "540-9A(3)") == ("fail", "missing drainage")
    assert any("no drainage layer" in p.message for p in r.problems)


def test_no_bmps_fails_item_6(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path, drop=("bmps",)), layers=review_layers)
    assert _status(r, "540-9A(6)") == ("fail", "no BMPs drawn")
    assert _status(r, "perimeter")[0] == "fail"


def test_disturbance_outside_the_property_lines(tmp_path: Path, review_layers: Path) -> None:
    edit = {"disturbed_limits": gpd.GeoDataFrame(geometry=[box(250, 1250, 450, 1350)], crs=CRS)}
    r = review_plan(package(tmp_path, edit=edit), layers=review_layers)
    status, detail = _status(r, "limits")
    assert status == "fail" and detail.startswith("5,000 sq ft")  # box(400..450) x 100 ft, in US survey feet


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
    assert _status(r, "inlets") == ("fail", "1 of 1 inlet(s) without inlet protection (1060)")


def test_no_perimeter_control_on_the_downslope_edge(tmp_path: Path, review_layers: Path) -> None:
    # A sediment trap below the south edge still protects the stream, but is no perimeter control.
    trap = [{"type": "1063", "geometry": box(260, 1215, 340, 1240)}]
    r = review_plan(package(tmp_path, edit=_without("1056", add=trap)), layers=review_layers)
    assert _status(r, "perimeter") == ("fail", "100 of 100 ft of downslope edge without perimeter control "
                                               "(shown in red on the map)")  # fmt: skip
    assert _status(r, "waters")[0] == "pass"
    assert r.layers["downslope_unprotected"].geometry.iloc[0].length == pytest.approx(100.0)


def test_no_bmp_between_the_disturbance_and_the_water(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path, edit=_without("1056")), layers=review_layers)
    assert _status(r, "waters")[0] == "fail" and _status(r, "waters")[1].startswith("100 of 100 ft")


def test_stockpile_without_cover_fails_unless_short_lived(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(package(tmp_path / "a", edit=_without("fiber roll")), layers=review_layers)
    assert _status(r, "stockpiles")[0] == "fail"
    short = {**_without("fiber roll"), "stockpiles": gpd.GeoDataFrame({"days": [5]}, geometry=[box(290, 1290, 310, 1310)], crs=CRS)}
    r = review_plan(package(tmp_path / "b", edit=short), layers=review_layers)
    assert _status(r, "stockpiles")[0] == "pass"


def test_steep_disturbance_and_protective_area_need_a_look(tmp_path: Path, review_layers: Path) -> None:
    # Disturbance reaching into the creek's 50 ft protective area (y < 1200).
    edit = {"site_boundary": gpd.GeoDataFrame(geometry=[box(200, 1160, 400, 1400)], crs=CRS),
            "disturbed_limits": gpd.GeoDataFrame(geometry=[box(250, 1175, 350, 1350)], crs=CRS)}  # fmt: skip
    facts = _facts(site={"disturbed_area_sqft": 17500, "site_area_sqft": 48000})
    r = review_plan(package(tmp_path, edit=edit, facts=facts), layers=review_layers)
    status, detail = _status(r, "protective")
    assert status == "look" and detail.startswith("2,500 sq ft")  # 100 x 25 ft south of y = 1200


def test_bad_packages_get_a_report_not_a_crash(tmp_path: Path, review_layers: Path) -> None:
    r = review_plan(tmp_path / "nothing_here", layers=review_layers)
    assert r.verdict == "disapprove" and "does not exist" in str(r.problems[0])
    # Lines where polygons belong, and a layer with no CRS.
    edit = {"site_boundary": gpd.GeoDataFrame(geometry=[_line((200, 1200), (400, 1400))], crs=CRS),
            "drainage": gpd.GeoDataFrame(geometry=[_line((300, 1340), (300, 1260))], crs=None)}  # fmt: skip
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
    cad = {"site_boundary": "C-PROP", "disturbed_limits": "C-LIMITS", "drainage": "C-FLOW", "streets": "C-ROAD",
           "inlets": "C-INLET", "stockpiles": "C-PILE"}  # fmt: skip
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
    mapping = {v: k for k, v in cad.items()} | {"C-ESC-SILT": "bmps:1056", "C-ESC-PAD": "bmps:1057",
                                                 "C-ESC-INLET": "bmps:1060", "C-ESC-ROLL": "bmps:1071"}  # fmt: skip
    toml = _toml(FACTS) + "[dxf.layers]\n" + "".join(f'"{k}" = "{v}"\n' for k, v in mapping.items())
    (dxf.parent / "plan.toml").write_text(toml)
    r = review_plan(dxf, layers=review_layers)
    assert [c.code for c in r.checks if c.status == "fail"] == []
    assert any("A-ANNO-TEXT" in p.message for p in r.problems)  # unknown CAD layer: reported, left out
    assert r.verdict == "needs a look"


def test_bmp_types_by_number_name_or_common_name() -> None:
    assert [classify(v) for v in ("1056", 1057.0, "Storm drain inlet protection", "wattle", "straw", None)] == [
        "1056", "1057", "1060", "1071", None, None]


def test_review_command_and_report_in_chromium(tmp_path: Path, review_layers: Path) -> None:
    facts = _facts(landowner={"name": f"Ann {XSS}", "phone": None})
    plan = package(tmp_path / "p", facts=facts, edit=_without("1060"))
    out, js = tmp_path / "report.html", tmp_path / "report.json"
    r = CliRunner().invoke(cli, ["review", str(plan), "-o", str(out), "--json", str(js), "--layers",
                                 str(review_layers), "--offline"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "disapprove (2 failing" in r.output
    data = json.loads(js.read_text())
    assert data["verdict"] == "disapprove" and len(data["reasons"]) == 2
    r = CliRunner().invoke(cli, ["review", str(plan), "-o", str(out), "--layers", str(review_layers)])
    assert r.exit_code == 1 and "--overwrite" in r.output
    with chromium_page(offline=True) as (page, errors, _):
        page.goto(out.as_uri())
        page.wait_for_load_state("load")
        assert page.inner_text("#verdict") == "Disapprove"
        assert page.locator("#checklist tr.check.fail").count() == 2
        assert page.locator("#reasons li").count() == 2
        assert XSS in page.inner_text("#checklist") and page.locator("#checklist img").count() == 0
        frame = page.frame_locator("#map")
        frame.locator(".leaflet-container").wait_for()
        assert frame.locator("#esc-legend").inner_text().count("(1)") >= 3
        assert real_errors(errors) == []
