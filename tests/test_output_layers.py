"""``--output-layer NAME`` and ``--update``: layers added to one GeoPackage, as ``ogr2ogr -update -nln`` (issue 36).

A GIS analyst keeps a project's screening, steep land and protective areas in one GeoPackage.
``--update`` adds the command's layer to an existing GeoPackage and keeps every other layer as
it was; only a layer of the same name is refused (any case: SQLite's names are). Nothing is
written when it is refused, an input is never written over, and a file only its owner reads
stays so.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import geopandas as gpd
import pyogrio
import pytest
from click.testing import CliRunner
from shapely.geometry import box

from esc_gis.cli.main import cli
from esc_gis.errors import LayerReadError, OutputExistsError, OutputFormatError
from esc_gis.io import write_layer

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo"
LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"
DEM = ROOT / "layers" / "winneconne-demo" / "dem_synthetic.tif"


def _run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_three_commands_fill_one_geopackage(tmp_path) -> None:
    out = tmp_path / "project.gpkg"
    assert _run("screen", DEMO / "sites.geojson", "--layers", LAYERS, "-o", out, "-q").exit_code == 0
    first = gpd.read_file(out, layer="screening")
    for args in (
        ("steep", DEM, "-o", out, "--update", "-q"),
        ("protective", "--layers", LAYERS, "-o", out, "--update", "-q"),
        ("screen", DEMO / "sites.geojson", "--disturbed", DEMO / "disturbed.geojson", "--layers", LAYERS),
    ):
        extra = ("-o", out, "--update", "--output-layer", "screening_limits", "-q") if args[0] == "screen" else ()
        r = _run(*args, *extra)
        assert r.exit_code == 0, r.output
    names = [str(n) for n, _ in pyogrio.list_layers(out)]
    assert {"screening", "steep", "protective_areas", "screening_limits"} <= set(names)
    # The first layer is untouched, the added screening is the run with limits.
    assert gpd.read_file(out, layer="screening").equals(first)
    limits = gpd.read_file(out, layer="screening_limits")
    assert len(limits) == len(first) and limits["disturbed_sqft"].sum() < first["disturbed_sqft"].sum()
    # Each layer has its QGIS style, and the file stays GeoPackage 1.3.
    with sqlite3.connect(out) as con:
        styled = {r[0] for r in con.execute("SELECT f_table_name FROM layer_styles")}
        assert con.execute("PRAGMA user_version").fetchone()[0] == 10300
    assert {"screening", "steep", "protective_areas", "screening_limits"} <= styled
    # GDAL 3.6 (Debian's, QGIS 3.22's) lists the four layers without a warning.
    import subprocess

    from .conftest import require_tool

    info = subprocess.run([require_tool("ogrinfo", "gdal-bin"), "-ro", "-q", str(out)], capture_output=True, text=True)
    assert info.returncode == 0 and "Warning" not in info.stderr + info.stdout, info.stderr
    assert all(f": {n} (" in info.stdout for n in ("screening", "steep", "protective_areas", "screening_limits"))
    # The added screening's run findings are its own, beside the first one's.
    assert (tmp_path / "project.gpkg.screening_limits.run_findings.csv").exists()
    assert (tmp_path / "project.gpkg.run_findings.csv").exists()


def test_a_layer_of_the_same_name_is_refused_and_nothing_changes(tmp_path) -> None:
    out = tmp_path / "project.gpkg"
    assert _run("steep", DEM, "-o", out, "-q").exit_code == 0
    before = _digest(out)
    for name in ("steep", "STEEP"):  # SQLite's table names know no case
        r = _run("steep", DEM, "-o", out, "--update", "--output-layer", name, "-q")
        assert r.exit_code == 1 and "already has a layer" in r.output and "--update and --overwrite" in r.output, (
            r.output
        )
    assert _digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project.gpkg"]  # no staging folder left


def test_update_creates_a_missing_geopackage_and_refuses_other_formats(tmp_path) -> None:
    r = _run("steep", DEM, "-o", tmp_path / "new.gpkg", "--update", "--output-layer", "steep_20", "-q")
    assert r.exit_code == 0, r.output
    assert [str(n) for n, _ in pyogrio.list_layers(tmp_path / "new.gpkg")] == ["steep_20", "layer_styles"]
    r = _run("steep", DEM, "-o", tmp_path / "steep.csv", "--update", "-q")
    assert r.exit_code == 1 and "--update adds a layer to a GeoPackage" in r.output


def test_update_of_a_file_that_is_not_a_geopackage_is_refused(tmp_path) -> None:
    fake = tmp_path / "photo.gpkg"
    fake.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    frame = gpd.GeoDataFrame({"a": [1]}, geometry=[box(0, 0, 1, 1)], crs="EPSG:7594")
    with pytest.raises(LayerReadError, match="cannot add a layer"):
        write_layer(frame, fake, update=True, layer="x")
    assert fake.read_bytes().startswith(b"\x89PNG")


def test_update_never_writes_over_an_input(tmp_path) -> None:
    sites = tmp_path / "sites.gpkg"
    gpd.read_file(DEMO / "sites.geojson").to_file(sites, layer="sites")
    before = _digest(sites)
    r = _run("screen", sites, "--layers", LAYERS, "-o", sites, "--update", "-q")
    assert r.exit_code == 1 and "input" in r.output.lower(), r.output
    assert _digest(sites) == before


def test_a_private_geopackage_stays_private(tmp_path) -> None:
    frame = gpd.GeoDataFrame({"a": [1]}, geometry=[box(0, 0, 1, 1)], crs="EPSG:7594")
    out = write_layer(frame, tmp_path / "permits.gpkg", layer="permits", private=True)
    assert os.stat(out).st_mode & 0o777 == 0o600
    write_layer(frame, out, layer="more", update=True)  # not private itself
    assert os.stat(out).st_mode & 0o777 == 0o600
    with pytest.raises(OutputExistsError):
        write_layer(frame, out, layer="Permits", update=True)
    with pytest.raises(OutputFormatError):
        write_layer(frame, tmp_path / "x.parquet", update=True)
