"""Outputs that open cleanly everywhere: RFC 7946 GeoJSON, layer names, and file modes.

File modes are checked under a set umask: outputs get what ``open()`` would give (the user's
umask), and anything holding personal data is ``0o600`` whatever the umask.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
from click.testing import CliRunner

from esc_gis._outputs import atomic_output
from esc_gis.cli.main import cli
from esc_gis.errors import CRSError
from esc_gis.io import write_layer

from .conftest import CRS, K, box, sites, square_sqft, write_dem

ROOT = Path(__file__).resolve().parents[1]
DEMO_LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o022, 0o027])
def umask(request: pytest.FixtureRequest):
    """Run the test under this umask (two, so a hard-coded 0o644 cannot pass)."""
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _run(*args: object):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in r.output, r.output
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture
def sites_path(tmp_path: Path) -> Path:
    path = tmp_path / "sites.gpkg"
    sites(
        [
            {"site_id": "A", "geometry": box(100, 100, 200, 200)},
            {"site_id": "B", "geometry": box(300, 100, 320, 120)},
        ]
    ).to_file(path, engine="pyogrio")
    return path


# --- GeoJSON (RFC 7946) and layer names ---------------------------------------------------------


def test_geojson_is_rfc7946_wgs84_lon_lat_named_and_without_crs(sites_path, tmp_path, layers_path):
    out = tmp_path / "demo_screening.geojson"
    _run("screen", sites_path, "--layers", layers_path, "-o", out, "-q")
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert "crs" not in doc
    assert doc["name"] == "screening"  # not the temporary file's ".demo_screening.x1y2z3"
    ring = np.array(doc["features"][0]["geometry"]["coordinates"][0])
    # Winneconne is near 88.7 W, 44.1 N: longitude first.
    assert np.all((-88.8 < ring[:, 0]) & (ring[:, 0] < -88.6)), ring
    assert np.all((44.0 < ring[:, 1]) & (ring[:, 1] < 44.2)), ring
    # RFC 7946 3.1.6: exterior rings counter-clockwise (positive signed area).
    x, y = ring[:, 0], ring[:, 1]
    assert np.sum(x[:-1] * y[1:] - x[1:] * y[:-1]) > 0
    # The measured columns are those of the GeoPackage, measured in feet before reprojecting.
    gpkg = tmp_path / "same.gpkg"
    _run("screen", sites_path, "--layers", layers_path, "-o", gpkg, "-q")
    a, b = gpd.read_file(out), gpd.read_file(gpkg)
    assert a.crs.to_epsg() == 4326 and b.crs.to_epsg() == 7594
    assert a["disturbed_sqft"].iloc[0] == pytest.approx(10_000 * K, rel=1e-9)
    assert list(a["disturbed_sqft"]) == list(b["disturbed_sqft"])
    assert list(a["findings"]) == list(b["findings"])
    # Back in the measuring CRS, the geometry is the site, to RFC 7946's 7 decimals of a degree
    # (about 1 cm: 0.0002 of a 100 ft square's area at most).
    assert a.to_crs(CRS).area.iloc[0] == pytest.approx(b.area.iloc[0], rel=2e-4)


def test_geojson_of_a_layer_without_crs_is_refused(tmp_path):
    out = tmp_path / "plain.geojson"
    gdf = gpd.GeoDataFrame({"n": [1]}, geometry=[square_sqft(0, 0, 100)], crs=None)
    with pytest.raises(CRSError, match="no CRS to reproject from"):
        write_layer(gdf, out, layer="things")
    assert list(tmp_path.iterdir()) == []  # feet are never written as if they were degrees


@pytest.mark.parametrize("ext", [".gpkg", ".geojson"])
def test_layer_name_is_the_one_given_not_the_temporary_file(tmp_path, ext):
    out = tmp_path / f"steep_areas{ext}"
    gdf = gpd.GeoDataFrame({"n": [1]}, geometry=[square_sqft(0, 0, 100)], crs=CRS)
    write_layer(gdf, out, layer="steep")
    assert [str(n) for n in pyogrio.list_layers(out)[:, 0]] == ["steep"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # nothing left beside it


def test_permits_export_gpkg_layer_is_named_permits(tmp_path, layers_path):
    reg = tmp_path / "r.gpkg"
    _run("permits", "init", reg, "--layers", layers_path)
    out = tmp_path / "export.gpkg"
    _run("permits", "export", reg, "-o", out, "--layers", layers_path)
    # The data layer first, then QGIS's style table (the permits coloured by status).
    assert [str(n) for n in pyogrio.list_layers(out)[:, 0]] == ["permits", "layer_styles"]


# --- file modes -----------------------------------------------------------------------------


@pytest.mark.parametrize("ext", [".gpkg", ".parquet", ".geojson", ".csv"])
def test_screen_outputs_get_the_umask(umask, sites_path, tmp_path, layers_path, ext):
    out = tmp_path / f"out{ext}"
    _run("screen", sites_path, "--layers", layers_path, "-o", out, "-q")
    assert mode(out) == 0o666 & ~umask
    _run("screen", sites_path, "--layers", layers_path, "-o", out, "-q", "--overwrite")
    assert mode(out) == 0o666 & ~umask


def test_maps_reports_and_rasters_get_the_umask(umask, tmp_path):
    screening = tmp_path / "screening.gpkg"
    d = ROOT / "examples" / "demo"
    _run("screen", d / "sites.geojson", "--layers", DEMO_LAYERS, "-o", screening, "-q")
    site_map = tmp_path / "overview.html"
    _run("map", screening, "--layers", DEMO_LAYERS, "-o", site_map)
    report, findings = tmp_path / "review.html", tmp_path / "review.json"
    plan = ROOT / "examples" / "plans" / "complete" / "plan.gpkg"
    _run("review", plan, "--layers", DEMO_LAYERS, "-o", report, "--json", findings, "-q")
    dem = write_dem(tmp_path / "dem.tif", np.arange(100, dtype="float32").reshape(10, 10))
    slope = tmp_path / "slope.tif"
    _run("slope", dem, "-o", slope, "--z-unit", "us_ft", "-q")
    for path in (site_map, report, findings, slope):
        assert mode(path) == 0o666 & ~umask, path.name
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_personal_data_is_private_whatever_the_umask(umask, tmp_path, layers_path):
    reg = tmp_path / "r.gpkg"
    _run("permits", "init", reg, "--layers", layers_path)
    assert mode(reg) == 0o600  # the registry holds names and telephone numbers
    public, private = tmp_path / "public.csv", tmp_path / "private.csv"
    _run("permits", "export", reg, "-o", public, "--layers", layers_path)
    _run("permits", "export", reg, "-o", private, "--private", "--layers", layers_path)
    assert mode(public) == 0o666 & ~umask
    assert mode(private) == 0o600
    # Overwriting a public export with a private one makes it private, and back.
    _run("permits", "export", reg, "-o", public, "--private", "--overwrite", "--layers", layers_path)
    assert mode(public) == 0o600
    _run("permits", "export", reg, "-o", public, "--overwrite", "--layers", layers_path)
    assert mode(public) == 0o666 & ~umask
    page = tmp_path / "public.html"
    _run("permits", "map", reg, "--public", "-o", page, "--layers", layers_path)
    assert mode(page) == 0o666 & ~umask  # the public map is for a web server to serve


def test_an_existing_registry_keeps_its_mode(tmp_path, layers_path):
    reg = tmp_path / "shared.gpkg"
    _run("permits", "init", reg, "--layers", layers_path)
    reg.chmod(0o660)  # the office shares it with a group on purpose
    _run("permits", "init", reg, "--layers", layers_path)
    assert mode(reg) == 0o660


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError), atomic_output(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("the writer failed")
    assert list(tmp_path.iterdir()) == []


def test_a_private_file_is_never_readable_by_others_while_written(tmp_path):
    with atomic_output(tmp_path / "contacts.csv", private=True) as tmp:
        tmp.write_text("name,phone\n")
        assert mode(tmp.parent) == 0o700  # others cannot reach the file, whatever its mode
    assert mode(tmp_path / "contacts.csv") == 0o600


# --- Outputs never eat inputs (issue 24) ----------------------------------------------------


def _refused(r, *words: str) -> None:
    """One clean message, exit 1, no traceback."""
    assert "Traceback" not in r.output, r.output
    assert r.exit_code == 1, r.output
    text = " ".join(r.output.split())
    for w in words:
        assert w in text, text


def _invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _fingerprint(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_screen_never_writes_over_its_sites_whatever_overwrite(tmp_path, layers_path):
    src = tmp_path / "parcels.geojson"
    sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}]).to_file(src, engine="pyogrio")
    before = _fingerprint(tmp_path)
    r = _invoke("screen", src, "--layers", layers_path, "-o", src, "--overwrite")
    _refused(r, "parcels.geojson", "is an input of this command", "even with --overwrite")
    # The same file by another spelling, and through a symbolic link.
    (tmp_path / "sub").mkdir()
    _refused(_invoke("screen", src, "--layers", layers_path, "-o", tmp_path / "sub" / ".." / src.name, "--overwrite"))
    (tmp_path / "link.geojson").symlink_to(src)
    _refused(_invoke("screen", src, "--layers", layers_path, "-o", tmp_path / "link.geojson", "--overwrite"))
    (tmp_path / "link.geojson").unlink()
    assert _fingerprint(tmp_path) == before


def test_a_geopackage_input_is_the_file_whatever_its_layer(tmp_path, layers_path):
    src = tmp_path / "in.gpkg"
    one = sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}])
    one.to_file(src, layer="sites", engine="pyogrio")
    one.to_file(src, layer="other", engine="pyogrio")
    before = src.read_bytes()
    r = _invoke("screen", src, "--layer", "sites", "--layers", layers_path, "-o", src, "--overwrite")
    _refused(r, "is an input")
    # The disturbed limits and the layer set's own files are inputs too.
    d = tmp_path / "dist.gpkg"
    one.to_file(d, engine="pyogrio")
    r = _invoke("screen", src, "--layer", "sites", "--disturbed", d, "--layers", layers_path, "-o", d, "--overwrite")
    _refused(r, "dist.gpkg", "is an input")
    boundary = next(p for p in layers_path.parent.iterdir() if p.suffix == ".gpkg")
    r = _invoke("screen", src, "--layer", "sites", "--layers", layers_path, "-o", boundary, "--overwrite")
    _refused(r, boundary.name, "is an input")
    assert src.read_bytes() == before


def test_rasters_and_layers_from_a_dem_never_write_over_it_or_into_its_tiles(tmp_path):
    dem = write_dem(tmp_path / "dem.tif", np.arange(100, dtype="float32").reshape(10, 10))
    before = dem.read_bytes()
    _refused(_invoke("slope", dem, "-o", dem, "--z-unit", "us_ft", "--overwrite"), "dem.tif", "is an input")
    assert dem.read_bytes() == before and not (tmp_path / "dem.qml").exists()
    # A folder of tiles: an output inside it would be read as a tile next time.
    tiles = tmp_path / "tiles"
    tiles.mkdir()
    write_dem(tiles / "a.tif", np.arange(100, dtype="float32").reshape(10, 10))
    _refused(_invoke("slope", tiles, "-o", tiles / "slope.tif", "--z-unit", "us_ft"), "inside the input folder")
    _refused(_invoke("steep", tiles, "-o", tiles / "steep.gpkg", "--z-unit", "us_ft"), "inside the input folder")
    assert sorted(p.name for p in tiles.iterdir()) == ["a.tif"]


def test_soil_loss_never_writes_over_its_inputs(tmp_path):
    from .test_soil_loss import GOOD, _cli_inputs

    args = _cli_inputs(tmp_path, GOOD)
    before = _fingerprint(tmp_path)
    sites_in = str(tmp_path / "sites.gpkg")
    _refused(_invoke(*args[:-1], sites_in, "--overwrite"), "sites.gpkg", "is an input")
    # The raster over the DEM, and a sidecar over the schedule (named as OUT's phases table would be).
    _refused(_invoke(*args, "--raster", tmp_path / "dem.tif", "--overwrite"), "dem.tif", "is an input")
    sched = tmp_path / "out.csv.phases.csv"
    sched.write_text(GOOD, encoding="utf-8")
    args[args.index("--schedule") + 1] = str(sched)
    _refused(_invoke(*args, "--overwrite"), "out.csv.phases.csv", "is an input")
    assert _fingerprint(tmp_path) == {**before, sched.name: GOOD.encode()}


def test_protective_map_and_review_never_write_over_their_inputs(tmp_path, layers_path):
    waters = tmp_path / "waters.gpkg"
    gpd.GeoDataFrame({"water_class": ["lake"]}, geometry=[box(1500, 100, 1700, 300)], crs=CRS).to_file(waters)
    before = waters.read_bytes()
    _refused(_invoke("protective", waters, "-o", waters, "--overwrite"), "waters.gpkg", "is an input")
    assert waters.read_bytes() == before
    # A plan package folder: the report goes beside it, not into it.
    pkg = tmp_path / "package"
    pkg.mkdir()
    (pkg / "plan.toml").write_text("[site]\n", encoding="utf-8")
    r = _invoke("review", pkg, "--layers", layers_path, "-o", pkg / "report.html")
    _refused(r, "inside the input folder")
    assert sorted(p.name for p in pkg.iterdir()) == ["plan.toml"]


def test_permits_outputs_never_write_over_the_registry_or_its_inputs(tmp_path, layers_path):
    reg = tmp_path / "r.gpkg"
    _run("permits", "init", reg, "--layers", layers_path)
    before = reg.read_bytes()
    r = _invoke("permits", "export", reg, "-o", reg, "--overwrite", "--layers", layers_path)
    _refused(r, "r.gpkg", "is an input")
    assert reg.read_bytes() == before
    rain = tmp_path / "rain.csv"
    rain.write_text("date,precip_in\n2026-11-02,0.6\n", encoding="utf-8")
    r = _invoke(
        "permits", "summary", reg, "--from", "2026-11-01", "--to", "2026-11-30", "--rain", rain, "-o", rain,
        "--overwrite", "--layers", layers_path,
    )  # fmt: skip
    _refused(r, "rain.csv", "is an input")
    assert rain.read_text(encoding="utf-8").startswith("date,precip_in")


# --- Every output folder checked before the work (issue 24) ---------------------------------

PLAN = ROOT / "examples" / "plans" / "complete" / "plan.gpkg"


def _writers(tmp_path: Path, folder: Path, layers_path: Path) -> dict[str, list[object]]:
    """Each command that writes, with its output (and, for screen --map, only its map) in ``folder``."""
    from .test_soil_loss import GOOD, _cli_inputs

    src = tmp_path / "sites.gpkg"
    if not src.exists():
        sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}]).to_file(src, engine="pyogrio")
    dem = tmp_path / "dem.tif"
    if not dem.exists():
        write_dem(dem, np.arange(100, dtype="float32").reshape(10, 10))
    inputs = tmp_path / f"soil-inputs-{folder.name}"  # one set per call: its writer refuses to overwrite
    inputs.mkdir()
    soil = _cli_inputs(inputs, GOOD)
    return {
        "screen": ["screen", src, "--layers", layers_path, "-o", folder / "o.gpkg"],
        "screen --map": ["screen", src, "--layers", layers_path, "-o", tmp_path / "o.gpkg", "--map", folder / "m.html"],
        "slope": ["slope", dem, "--z-unit", "us_ft", "-o", folder / "s.tif"],
        "steep": ["steep", dem, "--z-unit", "us_ft", "-o", folder / "s.gpkg"],
        "soil-loss": [*soil[:-1], folder / "o.csv"],
        "protective": ["protective", "--layers", layers_path, "-o", folder / "p.gpkg"],
        "map": ["map", src, "--layers", layers_path, "-o", folder / "m.html"],
        "permits map": ["permits", "map", tmp_path / "r.gpkg", "--public", "-o", folder / "m.html"],
        "review": ["review", PLAN, "--layers", layers_path, "-o", folder / "r.html"],
    }


def _nothing_written(tmp_path: Path, before: set[str]) -> None:
    after = {p.name for p in tmp_path.iterdir()}
    assert after == before, after - before


@pytest.mark.parametrize(
    "command",
    ["screen", "screen --map", "slope", "steep", "soil-loss", "protective", "map", "permits map", "review"],
)
def test_an_unwritable_output_folder_is_one_message_before_any_work(command, tmp_path, layers_path, monkeypatch):
    """Tests run as root, whom a 0555 folder does not stop: the folder is made unwritable where the check probes."""
    import tempfile

    locked = tmp_path / "locked"
    locked.mkdir()
    args = _writers(tmp_path, locked, layers_path)[command]
    before = {p.name for p in tmp_path.iterdir()}
    real_mkstemp = tempfile.mkstemp

    def mkstemp(*a, **kw):
        if Path(kw.get("dir") or "") == locked:
            raise PermissionError(13, "Permission denied")
        return real_mkstemp(*a, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    r = _invoke(*args)
    _refused(r, "cannot write in the folder", "locked", "Permission denied", "Nothing was written")
    assert r.output.count("Error") <= 1
    _nothing_written(tmp_path, before)  # with --map: no GeoPackage either
    assert list(locked.iterdir()) == []


@pytest.mark.parametrize("command", ["screen", "screen --map", "slope", "soil-loss", "map", "permits map", "review"])
def test_an_output_folder_that_is_a_file_or_missing_is_one_message(command, tmp_path, layers_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("a file, not a folder", encoding="utf-8")
    in_file, in_missing = _writers(tmp_path, afile, layers_path), _writers(tmp_path, tmp_path / "missing", layers_path)
    before = {p.name for p in tmp_path.iterdir()}
    _refused(_invoke(*in_file[command]), "notes.txt", "is a file, not a folder")
    _refused(_invoke(*in_missing[command]), "missing", "does not exist")
    _nothing_written(tmp_path, before)


def test_the_folder_check_is_a_real_probe_that_root_obeys(tmp_path):
    """A place even root cannot create a file in (sysfs); os.access would say yes there."""
    import tempfile

    from esc_gis._outputs import check_target
    from esc_gis.errors import OutputFolderError

    try:
        os.close(tempfile.mkstemp(dir="/sys")[0])
        pytest.skip("/sys is writable here")
    except OSError:
        pass
    with pytest.raises(OutputFolderError, match="cannot write in the folder '/sys'"):
        check_target(Path("/sys/out.gpkg"), overwrite=False)
    if os.geteuid() != 0:  # an ordinary user is also stopped by a 0555 folder
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        with pytest.raises(OutputFolderError):
            check_target(ro / "out.gpkg", overwrite=False)


def test_promote_to_multi_only_a_mix_of_one_kind():
    """Points, lines and polygons each promoted when mixed with their multi type; nothing else changed."""
    import shapely

    from esc_gis.io import promote_to_multi

    pt, line, poly = shapely.Point(0, 0), shapely.LineString([(0, 0), (1, 1)]), shapely.box(0, 0, 1, 1)
    for single, multi in [
        (pt, shapely.MultiPoint([(5, 5), (6, 6)])),
        (line, shapely.MultiLineString([[(5, 5), (6, 6)]])),
        (shapely.Polygon([(0, 0, 1), (1, 0, 1), (1, 1, 1)]), shapely.MultiPolygon([shapely.box(5, 5, 6, 6)])),
    ]:
        out = promote_to_multi(np.array([single, multi, None], dtype=object))
        assert [g.geom_type for g in out[:2]] == [multi.geom_type] * 2 and out[2] is None
        assert out[0].equals(single) and out[1] is multi and out[0].has_z == single.has_z  # Z kept
    # All single parts, or parts of different kinds: as they are (no promotion makes the latter one type).
    for same in ([poly, poly], [pt, poly], [line, shapely.MultiPolygon([poly])], []):
        arr = np.array(same, dtype=object)
        assert promote_to_multi(arr) is arr


def test_write_layer_writes_a_mix_of_polygons_and_multipolygons_all_multi(tmp_path):
    import shapely

    mixed = sites([{"site_id": "A", "geometry": box(0, 0, 10, 10)},
                   {"site_id": "B", "geometry": shapely.MultiPolygon([box(20, 0, 30, 10), box(40, 0, 50, 10)])}])  # fmt: skip
    for ext in ("gpkg", "geojson", "parquet", "csv"):
        write_layer(mixed, tmp_path / f"m.{ext}", layer="sites")
        back = gpd.read_parquet(tmp_path / "m.parquet") if ext == "parquet" else gpd.read_file(tmp_path / f"m.{ext}")
        geoms = back.geometry if ext != "csv" else gpd.GeoSeries.from_wkt(back["WKT"])
        assert set(geoms.geom_type) == {"MultiPolygon"}, ext
    assert set(mixed.geom_type) == {"Polygon", "MultiPolygon"}  # the caller's frame untouched
