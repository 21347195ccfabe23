"""Every vector output opens as a layer in the GIS its users have: GDAL 3.6's ogrinfo and QGIS 3.22 .

Debian 12's GDAL (3.6) and QGIS (3.22, on that GDAL) are what a county's desktop has. Each
output the commands write, whole-file and streamed in batches, is opened by both, and each
must report the geometry type, the CRS and the feature count the command wrote, with no
warning (GDAL 3.6 warns on every open of a GeoPackage 1.4, the version newer GDALs write by
default). GeoParquet is checked with geopandas (pyarrow) only: Debian's GDAL 3.6 has no Parquet
driver, so neither ogrinfo nor QGIS 3.22 can open it there.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pyogrio
import pytest
from click.testing import CliRunner
from pyproj import CRS

from esc_gis.cli.main import cli
from esc_gis.errors import OutputExistsError
from esc_gis.io import prj_path, write_layer

from .conftest import require_tool
from .test_styles import require_pyqgis

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo"
LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"
SITES = 21


def _run(*args: object) -> None:
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == 0, r.output


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str | None, int, str]]:
    """Each output: (path, layer, features, CRS), written by the commands on the demo data."""
    out = tmp_path_factory.mktemp("outputs")
    screen = [
        "screen", DEMO / "sites.geojson", "--disturbed", DEMO / "disturbed.geojson", "--layers", LAYERS, "-q"
    ]  # fmt: skip
    found: dict[str, tuple[Path, str | None, int, str]] = {}
    for ext in ("gpkg", "csv", "geojson", "parquet"):
        _run(*screen, "-o", out / f"screening.{ext}")
        crs = "EPSG:4326" if ext == "geojson" else "EPSG:7594"
        found[f"screen .{ext}"] = (out / f"screening.{ext}", "screening" if ext == "gpkg" else None, SITES, crs)
    for ext in ("gpkg", "csv", "parquet"):
        _run(*screen, "--batch-rows", "5", "-o", out / f"streamed.{ext}")
        found[f"screen --batch-rows .{ext}"] = (out / f"streamed.{ext}", "screening" if ext == "gpkg" else None, SITES, "EPSG:7594")  # fmt: skip
    _run("steep", ROOT / "layers" / "winneconne-demo" / "dem_synthetic.tif", "-o", out / "steep.gpkg", "-q")
    found["steep"] = (out / "steep.gpkg", "steep", pyogrio.read_info(out / "steep.gpkg", layer="steep")["features"], "EPSG:7594")  # fmt: skip
    _run("protective", "--layers", LAYERS, "-o", out / "protective.gpkg")
    info = pyogrio.read_info(out / "protective.gpkg", layer="protective_areas")
    found["protective"] = (out / "protective.gpkg", "protective_areas", info["features"], "EPSG:7594")
    return found


def test_pyogrio_reads_each_output_with_its_crs_and_count(outputs) -> None:
    import geopandas as gpd

    for what, (path, layer, count, crs) in outputs.items():
        if path.suffix == ".parquet":  # read by pyarrow (pyogrio's GDAL would reach for ADBC's duckdb)
            frame = gpd.read_parquet(path)
            assert len(frame) == count and frame.crs.equals(CRS.from_user_input(crs)), what
            assert set(frame.geom_type) <= {"Polygon", "MultiPolygon"}, what
            continue
        info = pyogrio.read_info(path, layer=layer)
        assert info["features"] == count, what
        assert CRS.from_user_input(info["crs"]).equals(CRS.from_user_input(crs), ignore_axis_order=True), what
        if path.suffix != ".csv":  # GDAL's CSV driver does not know a layer's type before reading it
            assert info["geometry_type"] in ("Polygon", "MultiPolygon", "Unknown"), (what, info["geometry_type"])


def test_geopackages_are_version_1_3(outputs) -> None:
    """GeoPackage 1.3 (user_version 10300): GDAL 3.6 and QGIS 3.22 open it without a warning."""
    for what, (path, _, _, _) in outputs.items():
        if path.suffix == ".gpkg":
            with sqlite3.connect(path) as con:
                assert con.execute("PRAGMA user_version").fetchone()[0] == 10300, what


def test_gdal_36_ogrinfo_opens_each_output_without_a_warning(outputs) -> None:
    ogrinfo = require_tool("ogrinfo", "gdal-bin")
    for what, (path, layer, count, crs) in outputs.items():
        if path.suffix == ".parquet":
            continue  # Debian's GDAL 3.6 has no Parquet driver (see the module's docstring)
        r = subprocess.run(
            [ogrinfo, "-ro", "-al", "-so", str(path), *([layer] if layer else [])],
            capture_output=True,
            text=True,
            check=True,
        )
        assert "Warning" not in r.stderr and "Warning" not in r.stdout, (what, r.stderr)
        assert f"Feature Count: {count}" in r.stdout, (what, r.stdout[:400])
        srs = r.stdout[r.stdout.index("Layer SRS WKT:") :]
        assert ("WGS 84" if crs == "EPSG:4326" else "WISCRS Calumet") in srs, what
        if path.suffix == ".csv":
            # Typed by its rows: every feature's WKT is a polygon.
            rows = subprocess.run([ogrinfo, "-ro", "-al", "-q", str(path)], capture_output=True, text=True, check=True)
            assert len(re.findall(r"^\s+(?:MULTI)?POLYGON \(", rows.stdout, re.M)) == count, what
        else:
            assert re.search(r"^Geometry: (Multi )?Polygon$", r.stdout, re.M), (what, r.stdout[:400])


#: Every GeoPackage the repository ships as an input (the layer sets, the example plans).
SHIPPED = sorted([*(ROOT / "layers").rglob("*.gpkg"), *(ROOT / "examples").rglob("*.gpkg")])


def test_shipped_geopackages_are_1_3_and_open_in_gdal_36_without_a_warning() -> None:
    """The inputs we ship open as cleanly as the outputs we write: GeoPackage 1.3, no warning.

    GDAL 3.6 printed "This version of GeoPackage user_version=0x000028A0 (10400, v1.4.0) ...
    may only be partially supported" on every open of the bundled layers and plans, which the
    scripts under scripts/ wrote with a newer GDAL's default (1.4); they now write 1.3.
    """
    ogrinfo = require_tool("ogrinfo", "gdal-bin")
    assert len(SHIPPED) >= 8, SHIPPED  # the two layer sets and the three example plans
    for path in SHIPPED:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
            assert con.execute("PRAGMA user_version").fetchone()[0] == 10300, path
        r = subprocess.run([ogrinfo, "-ro", "-al", "-so", str(path)], capture_output=True, text=True, check=True)
        assert "Warning" not in r.stderr and "ERROR" not in r.stderr, (path, r.stderr)
        assert "Feature Count: " in r.stdout, path


_OPEN_IN_QGIS = """
import json, sys
from qgis.core import QgsApplication, QgsVectorLayer, QgsWkbTypes
app = QgsApplication([], False)
app.initQgis()
out = {}
for uri in sys.argv[1:]:
    layer = QgsVectorLayer(uri, "layer", "ogr")
    out[uri] = [layer.isValid(), layer.featureCount(), layer.crs().authid(),
                QgsWkbTypes.displayString(QgsWkbTypes.flatType(layer.wkbType()))]
print(json.dumps(out))
app.exitQgis()
"""


def test_qgis_322_opens_each_output_as_a_layer(outputs) -> None:
    python = require_pyqgis()
    uris = {
        what: f"{path}|layername={layer}" if layer else str(path)
        for what, (path, layer, _, _) in outputs.items()
        if path.suffix != ".parquet"  # no Parquet driver in Debian's GDAL 3.6
    }
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": "/tmp"}
    r = subprocess.run(
        [python, "-c", _OPEN_IN_QGIS, *uris.values()], capture_output=True, text=True, env=env, timeout=300
    )
    got = json.loads(r.stdout.strip().splitlines()[-1])
    for what, uri in uris.items():
        _, _, count, crs = outputs[what]
        valid, features, authid, kind = got[uri]
        assert valid and features == count and authid == crs, (what, got[uri])
        assert kind in ("Polygon", "MultiPolygon"), (what, kind)


def test_a_csv_never_replaces_a_shapefiles_projection(tmp_path) -> None:
    """A CSV's CRS goes in ``<stem>.prj``; beside a shapefile of that stem it is refused, even with overwrite."""
    import geopandas as gpd
    from shapely.geometry import box

    frame = gpd.GeoDataFrame({"site_id": ["A"]}, geometry=[box(0, 0, 10, 10)], crs="EPSG:7594")
    frame.to_file(tmp_path / "parcels.shp")
    before = (tmp_path / "parcels.prj").read_text()
    for overwrite in (False, True):
        with pytest.raises(OutputExistsError, match="projection of the shapefile"):
            write_layer(frame, tmp_path / "parcels.csv", overwrite=overwrite)
    assert (tmp_path / "parcels.prj").read_text() == before and not (tmp_path / "parcels.csv").exists()


def test_a_stale_prj_is_replaced_and_a_layer_without_crs_leaves_none(tmp_path) -> None:
    import geopandas as gpd
    from shapely.geometry import box

    frame = gpd.GeoDataFrame({"site_id": ["A"]}, geometry=[box(0, 0, 10, 10)], crs="EPSG:3071")
    prj_path(tmp_path / "a.csv").write_text("stale")  # its CSV is gone: replaced without --overwrite
    write_layer(frame, tmp_path / "a.csv")
    assert CRS.from_wkt(prj_path(tmp_path / "a.csv").read_text()).to_epsg() == 3071
    write_layer(frame.set_crs(None, allow_override=True), tmp_path / "a.csv", overwrite=True)
    assert not prj_path(tmp_path / "a.csv").exists()  # no CRS: no .prj claiming the old one
