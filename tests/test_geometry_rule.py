"""One rule for a polygon that is not valid, and one for a site missing from the limits (issue 46, items 3 and 5).

Every door (``screen`` whole-file and streamed, ``permits add``/``import``, ``review``, the
service's process) applies :func:`esc_gis.validate.check_polygons`: a repair that keeps the
area and the parts as drawn is made and said; one that would not is refused, naming the row,
where the ring crosses itself (in the layer's CRS) and the fix. Shapes checkable by hand, in
local feet of the test Village (conftest.py: EPSG:7594, offset to Winneconne):

    bow-tie   the 100 x 60 ft rectangle box(100, 100, 200, 160) with two corners swapped: the
              drafter meant 6,000 sq ft; make_valid makes two 1,500 sq ft triangles meeting at
              (150, 130), i.e. x 745150, y 505130
    spike     the same rectangle with a zero-width spike 30 ft up from (150, 160): 6,000 sq ft
              before and after the repair
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
import shapely
from click.testing import CliRunner
from pyproj import Transformer

from esc_gis import screen
from esc_gis.cli.main import cli
from esc_gis.errors import EscGisWarning, RequestError, ValidationError
from esc_gis.registry import Application
from esc_gis.serve.screen_request import Limits, screen_request
from esc_gis.validate import check_polygons

from .conftest import CRS, X0, Y0, K, box, sites
from .test_review import package, review_layers  # noqa: F401  (the fixture, used by name)

#: The crossing of the bow-tie, in EPSG:7594.
CROSS = (X0 + 150, Y0 + 130)


def _xy(*pts: tuple[float, float]) -> list[tuple[float, float]]:
    return [(X0 + x, Y0 + y) for x, y in pts]


def bowtie(dx: float = 0, dy: float = 0) -> shapely.Polygon:
    """The 100 x 60 rectangle with its two top corners swapped (a ring crossing itself at its middle)."""
    x, y = 100 + dx, 100 + dy
    return shapely.Polygon(_xy((x, y), (x + 100, y), (x, y + 60), (x + 100, y + 60)))


def spike(dx: float = 0) -> shapely.Polygon:
    """The 100 x 60 rectangle with a zero-width spike out of its top edge: invalid, 6,000 sq ft as drawn."""
    return shapely.Polygon(
        _xy((100 + dx, 100), (200 + dx, 100), (200 + dx, 160), (150 + dx, 160), (150 + dx, 190), (150 + dx, 160),
            (100 + dx, 160))
    )  # fmt: skip


def codes(row) -> list[str]:
    return [f["code"] for f in json.loads(row["findings"])]


def _point(message: str) -> tuple[float, float]:
    m = re.search(r"at x (\S+), y (\S+) \(", message)
    assert m, message
    return float(m[1]), float(m[2])


def _in(crs: str, xy: tuple[float, float]) -> tuple[float, float]:
    return Transformer.from_crs(CRS, crs, always_xy=True).transform(*xy)


def test_the_rule_by_hand() -> None:
    """The bow-tie: 0 sq ft by its rings as drawn (its lobes cancel), 3,000 sq ft in 2 parts made valid: refused.
    The spike: 6,000 sq ft either way, 1 part: repaired. A valid polygon is not looked at."""
    checks = check_polygons([bowtie(), spike(), box(0, 0, 10, 10)], CRS, tolerance_sqft=1.0)
    assert sorted(checks) == [0, 1]
    b, s = checks[0], checks[1]
    assert b.refused and (b.drawn_parts, b.repaired_parts) == (1, 2)
    assert b.repaired_sqft == pytest.approx(3_000 * K) and b.where == pytest.approx(CROSS)
    assert not s.refused and s.repaired_sqft == pytest.approx(6_000 * K) and s.drawn_sqft == pytest.approx(6_000 * K)
    message, fix = b.problem(CRS)
    assert "self-intersection at x 745150.00, y 505130.00 (EPSG:7594)" in message
    assert "split into 2 parts (3,000.0 sq ft in all) where 1 was drawn" in message
    assert "corners in order" in fix


def test_a_repair_that_moves_the_area_beyond_the_tolerance_is_refused() -> None:
    """A hole drawn across its shell: 5,800 sq ft as drawn, 5,900 made valid; refused at 1 sq ft, taken at 200."""
    holed = shapely.Polygon(box(0, 0, 100, 60).exterior.coords, [box(90, 10, 110, 20).exterior.coords])
    assert check_polygons([holed], CRS, tolerance_sqft=1.0)[0].refused
    assert not check_polygons([holed], CRS, tolerance_sqft=200.0)[0].refused


# --- esc-gis screen (whole file) -----------------------------------------------------------------


@pytest.mark.parametrize("crs", ["EPSG:7594", "EPSG:4326"])
def test_screen_refuses_the_bowtie_naming_the_row_and_where_in_the_layers_crs(layer_set, crs: str) -> None:
    gdf = sites([{"site_id": "A", "geometry": box(300, 100, 400, 200)}, {"site_id": "B", "geometry": bowtie()}], crs)
    with pytest.raises(ValidationError) as err:
        screen(gdf, layers=layer_set)
    (p,) = err.value.problems
    assert (p.row, p.site_id) == (2, "B") and "a shape nobody drew" in p.message and f"({crs})" in p.message
    assert _point(p.message) == pytest.approx(_in(crs, CROSS), abs=1e-5)  # 0.01 ft, or 1e-6 degrees
    # 3,000 sq ft in the county grid; 2,999.8 on the ellipsoid, as degrees are measured (the grid reads 0.006 % large)
    assert re.search(r"split into 2 parts \((3,000\.0|2,999\.8) sq ft in all\)", p.message), p.message


def test_screen_reports_every_bad_row_of_sites_and_limits_at_once(layer_set) -> None:
    s = sites([{"site_id": "A", "geometry": bowtie()}, {"site_id": "B", "geometry": box(300, 100, 400, 200)}])
    d = sites([{"site_id": "B", "geometry": bowtie(200)}, {"site_id": "B", "geometry": box(300, 100, 310, 110)}])
    with pytest.raises(ValidationError) as err:
        screen(s, disturbed=d, layers=layer_set)
    where = sorted((p.source, p.row) for p in err.value.problems)
    assert where == [("disturbed", 1), ("sites", 1)]


def test_screen_repairs_a_spike_as_drawn_and_says_so(layer_set) -> None:
    """The repair kept the area: 6,000 sq ft is "4,000 square feet or more" (§ 540-4A(1)(a)), permit required;
    the finding geometry_repaired (basis policy) says a polygon was repaired."""
    s = sites([{"site_id": "A", "geometry": spike()}, {"site_id": "B", "geometry": box(300, 100, 400, 200)}])
    d = sites([{"site_id": "A", "geometry": box(100, 100, 200, 160)}, {"site_id": "B", "geometry": spike(200)}])
    out = screen(s, disturbed=d, layers=layer_set).set_index("site_id")
    assert out.loc["A", "disturbed_sqft"] == pytest.approx(6_000 * K) and out.loc["A", "permit"] == "required"
    assert out.loc["B", "disturbed_sqft"] == pytest.approx(6_000 * K)
    for site in ("A", "B"):  # the site's own polygon, and a limit of the site
        found = {f["code"]: f for f in json.loads(out.loc[site, "findings"])}
        assert found["geometry_repaired"]["basis"] == "policy"
    assert shapely.is_valid(out.geometry).all()


def test_valid_multipart_and_3d_polygons_keep_working(layer_set) -> None:
    two = shapely.MultiPolygon([box(100, 100, 150, 160), box(300, 100, 350, 160)])  # 2 x 3,000
    z = shapely.Polygon([(x, y, 12.0) for x, y in box(100, 300, 200, 360).exterior.coords])
    touching = shapely.MultiPolygon([box(100, 500, 150, 560), box(150, 500, 200, 560)])  # one edge shared
    assert not touching.is_valid
    out = screen(
        sites([{"site_id": k, "geometry": g} for k, g in (("M", two), ("Z", z), ("T", touching))]),
        layers=layer_set,
    ).set_index("site_id")
    for site in ("M", "Z", "T"):
        assert out.loc[site, "disturbed_sqft"] == pytest.approx(6_000 * K), site
    assert "geometry_repaired" not in codes(out.loc["M"]) and "geometry_repaired" not in codes(out.loc["Z"])
    assert "geometry_repaired" in codes(out.loc["T"])  # merged as drawn: the same area, fewer parts


# --- esc-gis screen, streamed ----------------------------------------------------------------------


def test_the_streamed_run_refuses_and_repairs_as_the_whole_file_run(layer_set, tmp_path: Path) -> None:
    from esc_gis.screening.stream import screen_to_file

    rows = [{"site_id": f"S{i}", "geometry": box(300 + 120 * i, 100, 400 + 120 * i, 200)} for i in range(4)]
    rows[2]["geometry"] = bowtie(0)
    src = tmp_path / "sites.gpkg"
    sites(rows).to_file(src)
    with pytest.raises(ValidationError) as err:
        screen_to_file(src, tmp_path / "out.gpkg", layers=layer_set, batch_rows=2)
    (p,) = err.value.problems
    assert p.row == 3 and _point(p.message) == pytest.approx(CROSS, abs=1e-2)
    assert not (tmp_path / "out.gpkg").exists()
    rows[2]["geometry"] = spike(0)
    sites(rows).to_file(src)
    screen_to_file(src, tmp_path / "out.gpkg", layers=layer_set, batch_rows=2)
    out = gpd.read_file(tmp_path / "out.gpkg").set_index("site_id")
    assert out.loc["S2", "disturbed_sqft"] == pytest.approx(6_000 * K) and "geometry_repaired" in codes(out.loc["S2"])


# --- permits add / import ----------------------------------------------------------------------------


def _app(site: shapely.Geometry, crs: str = CRS, **kw) -> Application:
    from datetime import date

    return Application("1 Test St", date(2026, 11, 2), site, crs, **kw)


@pytest.mark.parametrize("crs", ["EPSG:7594", "EPSG:4326"])
def test_permits_add_refuses_the_bowtie_as_screen_does(reg, layer_set, crs: str) -> None:
    site = sites([{"geometry": bowtie()}], crs).geometry.iloc[0]
    with pytest.raises(ValidationError) as err:
        reg.add(_app(site, crs))
    with pytest.raises(ValidationError) as screened:
        screen(sites([{"site_id": "A", "geometry": bowtie()}], crs), layers=layer_set)
    (p,) = err.value.problems
    assert screened.value.problems[0].message in p.message  # the same words
    assert _point(p.message) == pytest.approx(_in(crs, CROSS), abs=1e-5)


def test_permits_add_repairs_a_spike_as_drawn_and_warns(reg) -> None:
    with pytest.warns(EscGisWarning, match=r"row 1: the site polygon was invalid .* repaired as drawn \(6,000\.0"):
        number = reg.add(_app(spike()))
    p = reg.get(number)
    assert p.disturbed_sqft == pytest.approx(6_000 * K) and p.permit_decision == "required"
    assert shapely.is_valid(p.site)


def test_permits_import_names_every_bad_row(reg) -> None:
    frame = gpd.GeoDataFrame(
        {"site_address": ["1 A St", "2 B St", "3 C St"], "received_on": ["2026-11-02"] * 3},
        geometry=[box(300, 100, 400, 200), bowtie(), box(600, 100, 700, 200)],
        crs=CRS,
    )
    limits = gpd.GeoDataFrame(
        {"permit_number": ["X1", "X2", "X3"]}, geometry=[box(310, 110, 390, 170), box(0, 0, 1, 1), bowtie(500)], crs=CRS
    )
    frame["permit_number"] = ["X1", "X2", "X3"]
    with pytest.raises(ValidationError) as err:
        reg.import_frame(frame, source="a.gpkg", disturbed=limits)
    bad = sorted((p.row, p.message.split(" is not")[0]) for p in err.value.problems)
    assert bad == [(2, "the site geometry"), (3, "the disturbed geometry")]


# --- the service's screen process ----------------------------------------------------------------------


def _lonlat(geom: shapely.Geometry) -> dict:
    return shapely.geometry.mapping(gpd.GeoSeries([geom], crs=CRS).to_crs("EPSG:4326").iloc[0])


def test_the_service_refuses_the_bowtie_in_the_command_lines_words(layer_set) -> None:
    from esc_gis.profile import load_profile

    prof = load_profile()
    with pytest.raises(RequestError) as err:
        screen_request({"site": _lonlat(bowtie())}, layers=layer_set, profile=prof, limits=Limits())
    text = str(err.value)
    assert text.startswith("Input 'site' is not a valid polygon (self-intersection at x -88.")
    assert "(OGC:CRS84)" in text and "split into 2 parts" in text and "Fix: redraw it" in text
    assert _point(text) == pytest.approx(_in("EPSG:4326", CROSS), abs=1e-6)
    answer = screen_request({"site": _lonlat(spike())}, layers=layer_set, profile=prof, limits=Limits())
    assert answer["measured"]["disturbed_sqft"] == pytest.approx(6_000 * K, rel=1e-6)
    assert "geometry_repaired" in [f["code"] for f in answer["findings"]]


# --- esc-gis review --------------------------------------------------------------------------------------


def test_review_refuses_a_package_whose_limits_are_a_bowtie(tmp_path: Path, review_layers: Path) -> None:  # noqa: F811
    from esc_gis.review import review_plan

    edit = {"disturbed_limits": gpd.GeoDataFrame(geometry=[bowtie(150, 1150)], crs=CRS)}  # inside the site
    plan = package(tmp_path / "p", edit=edit)
    with pytest.raises(ValidationError) as err:
        review_plan(plan, layers=review_layers)
    (p,) = err.value.problems
    assert p.row == 1 and "layer disturbed_limits" in p.message and "split into 2 parts" in p.message
    r = CliRunner().invoke(cli, ["review", str(plan), "-o", str(tmp_path / "r.html"), "--layers", str(review_layers)])
    assert r.exit_code == 1 and "layer disturbed_limits" in r.output and not (tmp_path / "r.html").exists()


# --- a site missing from the limits (item 5) ------------------------------------------------------------


def _missing(tmp_path: Path) -> tuple[Path, Path]:
    """Two sites of 18,000 sq ft; the limits name only the first (4,800 sq ft)."""
    s = tmp_path / "sites.gpkg"
    sites([{"site_id": k, "geometry": box(x, 100, x + 150, 220)} for k, x in (("S01", 100), ("S02", 300))]).to_file(s)
    d = tmp_path / "limits.gpkg"
    sites([{"site_id": "S01", "geometry": box(110, 110, 190, 170)}]).to_file(d)
    return s, d


def test_a_site_missing_from_the_limits_is_decided_on_its_whole_site_in_every_format(
    layer_set, layers_path: Path, tmp_path: Path
) -> None:
    """--help: "default: the whole site is disturbed". S02's 150 x 120 = 18,000 sq ft is "4,000 square feet or
    more" (§ 540-4A(1)(a)): required, with a policy finding and a warning naming it; its disturbed_limits null."""
    s, d = _missing(tmp_path)
    for stream, ext in [(False, "gpkg"), (False, "parquet"), (False, "csv"), (False, "geojson"),
                        (True, "gpkg"), (True, "parquet"), (True, "csv")]:  # fmt: skip
        out = tmp_path / f"{'streamed' if stream else 'whole'}.{ext}"
        args = ["screen", str(s), "--disturbed", str(d), "--layers", str(layers_path), "-o", str(out)]
        with warnings.catch_warnings():
            warnings.simplefilter("always", EscGisWarning)  # as outside the test suite, on every run
            r = CliRunner().invoke(cli, args + (["--batch-rows", "1"] if stream else []))
        assert r.exit_code == 0, r.output
        assert "Warning: The disturbed limits" in r.output and "no polygon for 1 site(s): S02." in " ".join(
            r.output.split()
        ), (ext, stream, r.output)
        frame = pd.read_parquet(out) if ext == "parquet" else gpd.read_file(out)
        frame = frame.set_index("site_id")
        assert float(frame.loc["S02", "disturbed_sqft"]) == pytest.approx(18_000 * K), (ext, stream)
        assert frame.loc["S02", "permit"] == "required"
        found = {f["code"]: f for f in json.loads(frame.loc["S02", "findings"])}
        taken = found["no_disturbed_limits"]
        assert taken["basis"] == "policy" and "18,000.1 sq ft" in taken["message"]
        limits = frame.loc["S02", "disturbed_limits"]
        assert pd.isna(limits) or limits == "", (ext, stream)  # a CSV reads a null back as ''""
        assert "EMPTY" not in str(frame.loc["S02", "disturbed_limits"])
        assert float(frame.loc["S01", "disturbed_sqft"]) == pytest.approx(4_800 * K)


def test_the_registry_takes_the_screening_of_a_site_missing_from_the_limits(
    target: str, layers_path: Path, tmp_path: Path
) -> None:
    """`permits import` of that screening takes both rows and records what the screening decided: S02 on its
    whole site (18,000 sq ft, required), no POLYGON EMPTY refused, no warning that the two differ."""
    s, d = _missing(tmp_path)
    out = tmp_path / "screening.gpkg"
    lay = ["--layers", str(layers_path)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EscGisWarning)  # said above
        assert CliRunner().invoke(cli, ["screen", str(s), "--disturbed", str(d), *lay, "-o", str(out)]).exit_code == 0
    assert CliRunner().invoke(cli, ["permits", "init", target, *lay]).exit_code == 0
    r = CliRunner().invoke(
        cli,
        ["permits", "import", target, str(out), "--field", "site_address=site_id", "--field", "parcel_id=site_id",
         "--received-on", "2026-11-02", *lay],
    )  # fmt: skip
    assert r.exit_code == 0 and "Imported 2 permit(s)" in r.output and "WARNING" not in r.output, r.output
    shown = json.loads(CliRunner().invoke(cli, ["permits", "show", target, "ESC-2026-0002", "--json", *lay]).output)
    assert shown["disturbed_sqft"] == pytest.approx(18_000 * K, abs=0.5) and shown["permit_decision"] == "required"
    with warnings.catch_warnings():
        warnings.simplefilter("error", EscGisWarning)
        row = gpd.read_file(out, layer="screening").set_index("site_id").loc["S02"]
    assert row["permit"] == shown["permit_decision"]
