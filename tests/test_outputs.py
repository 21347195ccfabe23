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
