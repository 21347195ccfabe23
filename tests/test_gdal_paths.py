"""GDAL's habits, run as users run them: virtual paths (``/vsizip/``...), ``-o -``, ``--update --overwrite``, ``--dst-crs``.

Every test runs the installed ``esc-gis`` in a subprocess, so what is checked is what a shell
pipeline sees: the exit code, stdout and stderr apart.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
import pytest

from .conftest import box, sites

ESC = str(Path(sys.executable).parent / "esc-gis")


def esc(*args: object, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``esc-gis ARGS`` in ``cwd``; stdout and stderr kept apart, as bytes."""
    return subprocess.run(
        [ESC, *map(str, args)], cwd=cwd, input=stdin, capture_output=True, env=os.environ.copy(), check=False
    )


@pytest.fixture
def sites_geojson(tmp_path: Path) -> Path:
    """Two sites: A of 10,000 sq ft (local feet), B of 400."""
    path = tmp_path / "sites.geojson"
    sites(
        [
            {"site_id": "A", "geometry": box(100, 100, 200, 200)},
            {"site_id": "B", "geometry": box(300, 100, 320, 120)},
        ],
        "EPSG:4326",
    ).to_file(path, engine="pyogrio")
    return path


def _rows(path: Path | str) -> pd.DataFrame:
    return pd.DataFrame(gpd.read_file(path).drop(columns="geometry")).sort_values("site_id").reset_index(drop=True)


# -- (a) virtual paths go to GDAL as given ------------------------------------------------------------------


def _archives(tmp_path: Path, src: Path) -> dict[str, str]:
    """The same layer in a zip (in a folder), a tar and a gzip, and the paths that read each."""
    with zipfile.ZipFile(tmp_path / "sites.zip", "w") as z:
        z.write(src, "in/sites.geojson")
    with tarfile.open(tmp_path / "sites.tar", "w") as t:
        t.add(src, "sites.geojson")
    (tmp_path / "sites.geojson.gz").write_bytes(gzip.compress(src.read_bytes()))
    return {
        "zip": "/vsizip/sites.zip/in/sites.geojson",
        "zip-absolute": f"/vsizip/{tmp_path}/sites.zip/in/sites.geojson",  # tmp_path starts with "/"
        "tar": "/vsitar/sites.tar/sites.geojson",
        "gzip": "/vsigzip/sites.geojson.gz",
        "plain-zip": "sites.zip",
    }


@pytest.mark.parametrize("kind", ["zip", "zip-absolute", "tar", "gzip", "plain-zip"])
def test_screen_reads_an_archive_as_gdal_does(tmp_path, sites_geojson, layers_path, kind):
    path = _archives(tmp_path, sites_geojson)[kind]
    if kind == "zip-absolute":
        # GDAL's absolute form has "//" after the prefix, which pathlib would fold into a relative path.
        assert path.startswith("/vsizip//")
    plain = esc("screen", sites_geojson, "--layers", layers_path, "-o", "plain.gpkg", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr.decode()
    for _ in range(2):  # every write run twice
        r = esc("screen", path, "--layers", layers_path, "-o", "out.gpkg", "--overwrite", cwd=tmp_path)
        assert r.returncode == 0, r.stderr.decode()
        pd.testing.assert_frame_equal(_rows(tmp_path / "out.gpkg"), _rows(tmp_path / "plain.gpkg"))


def test_screen_streams_an_archive(tmp_path, sites_geojson, layers_path):
    path = _archives(tmp_path, sites_geojson)["zip-absolute"]
    r = esc("screen", path, "--layers", layers_path, "--batch-rows", 1, "-o", "out.gpkg", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert list(_rows(tmp_path / "out.gpkg")["site_id"]) == ["A", "B"]


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/vsizip/sites.zip/in/site.geojson", "no such file: 'sites.zip' holds no 'in/site.geojson' (it holds"),
        ("/vsizip/nowhere.zip/sites.geojson", "no such file: the archive 'nowhere.zip' is missing"),
        ("/vsitar/sites.tar/nope.shp", "no such file: 'sites.tar' holds no 'nope.shp'"),
        ("/vsigzip/nowhere.geojson.gz", "no such file: the archive 'nowhere.geojson.gz' is missing"),
        ("nowhere.zip", "no such file"),
    ],
)
def test_an_absent_file_in_or_of_an_archive_is_named(tmp_path, sites_geojson, layers_path, path, words):
    _archives(tmp_path, sites_geojson)
    r = esc("screen", path, "--layers", layers_path, "-o", "out.gpkg", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert f"{path}: " in err and words in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "out.gpkg").exists()


def test_protective_reads_waters_from_a_zip(tmp_path):
    from .conftest import CRS

    waters = gpd.GeoDataFrame(
        {"water_class": ["lake"], "name": ["Pond"]}, geometry=[box(1000, 1000, 1200, 1200)], crs=CRS
    )
    waters.to_file(tmp_path / "waters.gpkg", engine="pyogrio")
    with zipfile.ZipFile(tmp_path / "w.zip", "w") as z:
        z.write(tmp_path / "waters.gpkg", "waters.gpkg")
    a = esc("protective", "waters.gpkg", "-o", "a.gpkg", "-q", cwd=tmp_path)
    b = esc("protective", "/vsizip/w.zip/waters.gpkg", "-o", "b.gpkg", "-q", cwd=tmp_path)
    assert a.returncode == 0 and b.returncode == 0, (a.stderr + b.stderr).decode()
    assert (
        gpd.read_file(tmp_path / "a.gpkg")["area_sqft"].tolist()
        == gpd.read_file(tmp_path / "b.gpkg")["area_sqft"].tolist()
    )


def test_an_output_is_never_the_archive_read(tmp_path, sites_geojson, layers_path):
    """The archive behind a /vsizip/ input is the input: never written over, even with --overwrite."""
    # An archive whose name is an output's: GDAL's {...} form says where the archive's name ends.
    with zipfile.ZipFile(tmp_path / "odd.gpkg", "w") as z:
        z.write(sites_geojson, "sites.geojson")
    before = (tmp_path / "odd.gpkg").read_bytes()
    ok = esc("screen", "/vsizip/{odd.gpkg}/sites.geojson", "--layers", layers_path, "-o", "out.gpkg", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr.decode()
    r = esc(
        "screen",
        "/vsizip/{odd.gpkg}/sites.geojson",
        "--layers",
        layers_path,
        "-o",
        "odd.gpkg",
        "--overwrite",
        cwd=tmp_path,
    )
    assert r.returncode == 1 and "an input of this command" in r.stderr.decode(), r.stderr.decode()
    assert (tmp_path / "odd.gpkg").read_bytes() == before


# -- (c) --update --overwrite replaces one layer, nothing else ---------------------------------------------


def _table(gpkg: Path, table: str) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(gpkg) as con:
        return con.execute(f'SELECT * FROM "{table}" ORDER BY 1').fetchall()


def _waters(tmp_path: Path) -> Path:
    from .conftest import CRS

    path = tmp_path / "waters.gpkg"
    gpd.GeoDataFrame(
        {"water_class": ["lake"], "name": ["Pond"]}, geometry=[box(1000, 1000, 1200, 1200)], crs=CRS
    ).to_file(path, engine="pyogrio")
    return path


def test_update_overwrite_replaces_one_layer_and_nothing_else(tmp_path, sites_geojson, layers_path):
    out = tmp_path / "project.gpkg"
    _waters(tmp_path)
    assert esc("screen", sites_geojson, "--layers", layers_path, "-o", out, "-q", cwd=tmp_path).returncode == 0
    r = esc("protective", "waters.gpkg", "-o", out, "--update", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    other = _table(out, "protective_areas")
    other_style = [row for row in _table(out, "layer_styles") if "protective_areas" in row]
    assert len(_rows(out)) == 2
    for name in ("screening", "SCREENING"):  # twice, and in another case: the file's own layer is replaced
        r = esc(
            "screen", sites_geojson, "--where", "site_id = 'A'", "--layers", layers_path,
            "-o", out, "--update", "--overwrite", "--output-layer", name, "-q", cwd=tmp_path,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr.decode()
        assert list(gpd.read_file(out, layer="screening")["site_id"]) == ["A"]
        assert _table(out, "protective_areas") == other  # row for row, byte for byte
        assert [row for row in _table(out, "layer_styles") if "protective_areas" in row] == other_style
        names = sorted(str(n) for n, _ in pyogrio.list_layers(out))
        assert names == ["layer_styles", "protective_areas", "screening"], names
    # Without --overwrite, the layer is still refused, and the message names the way to replace it.
    r = esc("protective", "waters.gpkg", "-o", out, "--update", "-q", cwd=tmp_path)
    assert r.returncode == 1 and "--update and --overwrite" in r.stderr.decode(), r.stderr.decode()
    # The style table is no layer to replace.
    r = esc("protective", "waters.gpkg", "-o", out, "--update", "--overwrite", "--output-layer", "layer_styles",
            cwd=tmp_path)  # fmt: skip
    assert r.returncode == 1 and "style table" in r.stderr.decode(), r.stderr.decode()
    assert _table(out, "protective_areas") == other


# -- (d) --dst-crs: any CRS, only how the output is written -------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
DEMO_LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"
DEMO_DEM = ROOT / "layers" / "winneconne-demo" / "dem_synthetic.tif"


def _srs(gpkg: Path, layer: str) -> int:
    import sqlite3

    with sqlite3.connect(gpkg) as con:
        return con.execute("SELECT srs_id FROM gpkg_geometry_columns WHERE table_name = ?", (layer,)).fetchone()[0]


@pytest.mark.parametrize(
    ("command", "layer", "column"),
    [
        (("steep", DEMO_DEM), "steep", "area_sqft"),
        (("protective", "--layers", DEMO_LAYERS), "protective_areas", "area_sqft"),
        (("screen", ROOT / "examples" / "demo" / "sites.geojson", "--layers", DEMO_LAYERS), "screening", None),
    ],
)
def test_dst_crs_changes_the_geometry_never_the_measures(tmp_path, command, layer, column):
    plain = esc(*command, "-o", "plain.gpkg", "-q", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr.decode()
    for _ in range(2):  # every write run twice
        r = esc(*command, "-o", "wgs84.gpkg", "--dst-crs", "EPSG:4326", "--overwrite", "-q", cwd=tmp_path)
        assert r.returncode == 0, r.stderr.decode()
    a = gpd.read_file(tmp_path / "plain.gpkg", layer=layer)
    b = gpd.read_file(tmp_path / "wgs84.gpkg", layer=layer)
    assert a.crs.to_epsg() == 7594 and b.crs.to_epsg() == 4326
    assert _srs(tmp_path / "wgs84.gpkg", layer) == 4326  # the GeoPackage's own record says so
    # Every attribute identical, measured in the profile's CRS whatever the output's.
    pd.testing.assert_frame_equal(a.drop(columns="geometry"), b.drop(columns="geometry"))
    if column is not None:
        assert a[column].sum() > 0
    # The geometry is the same place: transformed back, it lies on the original.
    back = b.to_crs(a.crs)
    assert (back.geometry.symmetric_difference(a.geometry).area < 1e-3 * a.geometry.area + 1e-6).all()
    assert (b.total_bounds[[0, 2]] < -80).all() and (b.total_bounds[[1, 3]] > 40).all()  # degrees, Wisconsin
    from .conftest import require_tool

    info = subprocess.run(
        [require_tool("ogrinfo", "gdal-bin"), "-ro", "-so", str(tmp_path / "wgs84.gpkg"), layer],
        capture_output=True,
        text=True,
    )
    assert info.returncode == 0 and "Warning" not in info.stderr, info.stderr
    assert 'ID["EPSG",4326]' in info.stdout  # Debian's GDAL reads the CRS asked for


def test_dst_crs_csv_writes_its_prj(tmp_path, sites_geojson, layers_path):
    r = esc("screen", sites_geojson, "--layers", layers_path, "-o", "s.csv", "--dst-crs", "EPSG:3071", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    from pyproj import CRS

    assert CRS.from_wkt((tmp_path / "s.prj").read_text()).equals(CRS("EPSG:3071"))
    assert pyogrio.read_info(tmp_path / "s.csv")["crs"] is not None


@pytest.mark.parametrize(
    ("output", "crs", "words"),
    [
        ("out.gpkg", "EPSG:99999", "Output CRS 'EPSG:99999' is not a coordinate reference system"),
        ("out.gpkg", "nonsense", "is not a coordinate reference system"),
        ("out.geojson", "EPSG:3071", "GeoJSON is written in longitude/latitude"),
    ],
)
def test_a_bad_dst_crs_is_refused_before_any_work(tmp_path, sites_geojson, layers_path, output, crs, words):
    r = esc("screen", sites_geojson, "--layers", layers_path, "-o", output, "--dst-crs", crs, cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 1 and words in err and "Traceback" not in err, err
    assert not (tmp_path / output).exists()


@pytest.mark.parametrize(
    ("output", "crs"), [("o.gpkg", "EPSG:4326"), ("o.parquet", "EPSG:3857"), ("o.csv", "EPSG:3071")]
)
def test_a_streamed_run_writes_in_dst_crs_the_whole_file_runs_rows(tmp_path, sites_geojson, layers_path, output, crs):
    # The whole-file run is the reference: its rows, measured in the profile's CRS, its geometry transformed.
    whole = esc("screen", sites_geojson, "--layers", layers_path, "-o", f"whole{Path(output).suffix}",
                "--dst-crs", crs, cwd=tmp_path)  # fmt: skip
    assert whole.returncode == 0, whole.stderr.decode()
    for _ in range(2):  # every write run twice; one site a batch
        r = esc("screen", sites_geojson, "--layers", layers_path, "--batch-rows", 1, "-o", output,
                "--dst-crs", crs, "--overwrite", cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stderr.decode()
        assert "in 2 batch(es)" in r.stderr.decode() + r.stdout.decode()
    got, want = _read_any(tmp_path / output), _read_any(tmp_path / f"whole{Path(output).suffix}")
    if output.endswith(".csv"):  # the CRS is the .prj's, beside the file
        assert pyproj_crs(tmp_path / "o.prj") == pyproj_crs(tmp_path / "whole.prj") == pyproj_crs(crs)
        got, want = got.set_crs(crs), want.set_crs(crs)
    assert got.crs.to_epsg() == int(crs.split(":")[1])

    # Same values; a column empty in every batch is typed text by the stream (the whole file's, object).
    def values(gdf: gpd.GeoDataFrame) -> pd.DataFrame:
        frame = pd.DataFrame(gdf.drop(columns="geometry")).astype(object)
        return frame.where(frame.notna(), None)

    pd.testing.assert_frame_equal(values(got), values(want))
    assert got.geometry.geom_equals_exact(want.geometry, tolerance=1e-9).all()
    # The geometry is in the CRS asked for: site A's centre is the input's, transformed; the
    # area is measured in the profile's CRS (feet), not in the output's units.
    a = got.site_id == "A"
    src = gpd.read_file(sites_geojson).to_crs(crs)
    assert got.geometry[a].iloc[0].centroid.distance(src.geometry.iloc[0].centroid) < 1e-6 * abs(src.total_bounds).max()
    assert abs(got.loc[a, "disturbed_sqft"].iloc[0] - 10_000) < 1


def _read_any(path: Path) -> gpd.GeoDataFrame:
    """A written layer: GeoParquet, or a CSV with its WKT geometry (no CRS: that is the .prj's), or any GDAL file."""
    if path.suffix == ".parquet":
        return gpd.read_parquet(path)
    if path.suffix == ".csv":
        frame = pd.read_csv(path)
        return gpd.GeoDataFrame(frame.drop(columns="WKT"), geometry=gpd.GeoSeries.from_wkt(frame["WKT"]))
    return gpd.read_file(path)


def pyproj_crs(value: object) -> object:
    """The CRS a ``.prj`` file (or an authority code) names."""
    from pyproj import CRS

    return CRS.from_user_input(value.read_text() if isinstance(value, Path) else value)


# -- (b) GeoJSON to standard output ------------------------------------------------------------------------


@pytest.mark.parametrize("dash", ["-", "/vsistdout/"])
def test_screen_to_stdout_is_the_geojson_file_byte_for_byte(tmp_path, sites_geojson, layers_path, dash):
    import json

    f = esc("screen", sites_geojson, "--layers", layers_path, "-o", "out.geojson", cwd=tmp_path)
    assert f.returncode == 0, f.stderr.decode()
    for _ in range(2):  # run twice: nothing to overwrite, no --overwrite needed
        r = esc("screen", sites_geojson, "--layers", layers_path, "-o", dash, cwd=tmp_path)
        assert r.returncode == 0, r.stderr.decode()
        assert r.stdout == (tmp_path / "out.geojson").read_bytes()  # stdout carries the layer alone
        data = json.loads(r.stdout)
        assert data["name"] == "screening" and [x["properties"]["site_id"] for x in data["features"]] == ["A", "B"]
        assert "Wrote 2 rows to standard output" in r.stderr.decode()  # the summary went to stderr
    # No sidecar written for standard output: only the file run's own files are there.
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("out.geojson")) == ["sites.geojson"]


def test_quiet_stdout_still_says_the_checks_not_made_on_stderr(tmp_path, sites_geojson, layers_path):
    r = esc("screen", sites_geojson, "--layers", layers_path, "-o", "-", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.startswith(b"{")
    file_run = esc("screen", sites_geojson, "--layers", layers_path, "-o", "o.gpkg", "-q", cwd=tmp_path)
    findings = tmp_path / "o.gpkg.run_findings.csv"
    expected = len(pd.read_csv(findings)) if findings.exists() else 0
    assert file_run.returncode == 0
    assert r.stderr.decode().count("Not checked: ") == expected


def test_stdout_pipes_into_ogrinfo(tmp_path, sites_geojson, layers_path):
    from .conftest import require_tool

    ogrinfo = require_tool("ogrinfo", "gdal-bin")
    esc_run = subprocess.Popen(
        [ESC, "screen", str(sites_geojson), "--layers", str(layers_path), "-o", "/vsistdout/", "-q"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    info = subprocess.run(
        [ogrinfo, "-ro", "-so", "/vsistdin/", "screening"], stdin=esc_run.stdout, capture_output=True, text=True
    )
    esc_run.stdout.close()  # type: ignore[union-attr]
    assert esc_run.wait() == 0
    assert info.returncode == 0, info.stderr
    assert "Feature Count: 2" in info.stdout and "disturbed_sqft: Real" in info.stdout, info.stdout
    assert "Warning" not in info.stderr


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (("steep", DEMO_DEM), "steep"),
        (("protective", "--layers", DEMO_LAYERS), "protective_areas"),
    ],
)
def test_steep_and_protective_to_stdout(tmp_path, command, name):
    import json

    r = esc(*command, "-o", "-", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    data = json.loads(r.stdout)
    assert data["name"] == name and data["features"]
    assert "Wrote" in r.stderr.decode()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("--update",), 1, 'standard output ("-") takes one GeoJSON layer'),
        (("--dst-crs", "EPSG:3071"), 1, "GeoJSON is written in longitude/latitude"),
    ],
)
def test_stdout_refusals(tmp_path, sites_geojson, layers_path, args, code, words):
    r = esc("screen", sites_geojson, "--layers", layers_path, "-o", "-", *args, cwd=tmp_path)
    assert r.returncode == code and words in r.stderr.decode(), r.stderr.decode()
    assert r.stdout == b""


def test_soil_loss_refuses_stdout_naming_its_files(tmp_path, sites_geojson):
    r = esc("soil-loss", sites_geojson, "--schedule", "s.csv", "--ei-file", "ei.csv", "-o", "-", cwd=tmp_path)
    assert r.returncode == 2 and "phases and windows beside OUTPUT" in r.stderr.decode(), r.stderr.decode()
    assert r.stdout == b""


def test_a_layer_set_names_layers_inside_archives_beside_it(tmp_path, sites_geojson):
    """A manifest's /vsizip/ path is read with its archive beside the manifest, whatever the working folder."""
    from .conftest import write_layer_set

    plain = write_layer_set(tmp_path / "plain")
    zipped = write_layer_set(tmp_path / "zipped")
    folder = zipped.parent
    for name in ("village", "waters"):
        with zipfile.ZipFile(folder / f"{name}.zip", "w") as z:
            z.write(folder / f"{name}.gpkg", f"in/{name}.gpkg")
        (folder / f"{name}.gpkg").unlink()
    text = zipped.read_text().replace('"village.gpkg"', '"/vsizip/village.zip/in/village.gpkg"')
    zipped.write_text(text.replace('"waters.gpkg"', '"/vsizip/{waters.zip}/in/waters.gpkg"'))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    a = esc("screen", sites_geojson, "--layers", plain, "-o", "a.gpkg", "-q", cwd=elsewhere)
    b = esc("screen", sites_geojson, "--layers", zipped, "-o", "b.gpkg", "-q", cwd=elsewhere)
    assert a.returncode == 0 and b.returncode == 0, (a.stderr + b.stderr).decode()
    pd.testing.assert_frame_equal(_rows(elsewhere / "a.gpkg"), _rows(elsewhere / "b.gpkg"))
    assert _rows(elsewhere / "a.gpkg")["nearest_water_ft"].notna().all()  # the zipped waters were read
    # A member the archive lacks is named, with the manifest's words.
    zipped.write_text(text.replace('"waters.gpkg"', '"/vsizip/waters.zip/in/lake.gpkg"'))
    r = esc("screen", sites_geojson, "--layers", zipped, "-o", "c.gpkg", cwd=elsewhere)
    err = r.stderr.decode()
    assert r.returncode == 1 and "holds no 'in/lake.gpkg'" in err and "Traceback" not in err, err
    # The archives are inputs: an output may not replace one.
    zipped.write_text(text.replace('"waters.gpkg"', '"/vsizip/{waters.zip}/in/waters.gpkg"'))
    before = (folder / "village.zip").read_bytes()
    r = esc("protective", "--layers", zipped, "-o", folder / "village.zip", "--overwrite", cwd=elsewhere)
    assert r.returncode == 1 and (folder / "village.zip").read_bytes() == before


def test_permits_export_to_stdout(tmp_path):
    """The registry's export pipes as the other layers do: the same GeoJSON as the file, messages on stderr."""
    import json

    demo = ROOT / "examples" / "demo"
    lay = ("--layers", DEMO_LAYERS)
    assert esc("permits", "init", "r.gpkg", *lay, cwd=tmp_path).returncode == 0
    r = esc("permits", "import", "r.gpkg", demo / "permits.geojson", "--disturbed", demo / "permit_disturbed.geojson",
            *lay, "--who", "test", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr.decode()
    f = esc("permits", "export", "r.gpkg", "-o", "p.geojson", *lay, cwd=tmp_path)
    s = esc("permits", "export", "r.gpkg", "-o", "-", *lay, cwd=tmp_path)
    assert f.returncode == 0 and s.returncode == 0, (f.stderr + s.stderr).decode()
    assert s.stdout == (tmp_path / "p.geojson").read_bytes()
    numbers = [x["properties"]["permit_number"] for x in json.loads(s.stdout)["features"]]
    assert len(numbers) > 1 and "ESC-2026-0101" in numbers
    assert "Wrote" in s.stderr.decode()


def test_a_layer_set_reads_its_dem_from_a_zip(tmp_path):
    """[dem] path = "/vsizip/dem.zip/dem.tif": the same steep areas as the DEM itself; a missing one named."""
    import shutil

    folder = tmp_path / "set"
    shutil.copytree(DEMO_LAYERS.parent, folder)
    shutil.copytree(DEMO_LAYERS.parent.parent / "winneconne", tmp_path / "winneconne")
    with zipfile.ZipFile(folder / "dem.zip", "w") as z:
        z.write(folder / "dem_synthetic.tif", "dem.tif")
    (folder / "dem_synthetic.tif").unlink()
    text = (folder / "layers.toml").read_text()
    assert 'path = "dem_synthetic.tif"' in text
    (folder / "layers.toml").write_text(text.replace('path = "dem_synthetic.tif"', 'path = "/vsizip/dem.zip/dem.tif"'))
    sites_file = ROOT / "examples" / "demo" / "sites.geojson"
    a = esc("screen", sites_file, "--layers", DEMO_LAYERS, "-o", "a.gpkg", "-q", cwd=tmp_path)
    b = esc("screen", sites_file, "--layers", folder / "layers.toml", "-o", "b.gpkg", "-q", cwd=tmp_path)
    assert a.returncode == 0 and b.returncode == 0, (a.stderr + b.stderr).decode()
    steep_a, steep_b = _rows(tmp_path / "a.gpkg"), _rows(tmp_path / "b.gpkg")
    assert steep_a["steep_disturbed_sqft"].sum() > 0
    pd.testing.assert_series_equal(steep_a["steep_disturbed_sqft"], steep_b["steep_disturbed_sqft"])
    (folder / "layers.toml").write_text(text.replace('path = "dem_synthetic.tif"', 'path = "/vsizip/dem.zip/x.tif"'))
    r = esc("screen", sites_file, "--layers", folder / "layers.toml", "-o", "c.gpkg", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 1 and "[dem] names '/vsizip/dem.zip/x.tif': no such file" in err, err


# -- (e) a plan package sent as an archive -----------------------------------------------------------------


def _zipped_plan(tmp_path: Path, kind: str) -> None:
    """The phased example plan (its GeoPackage, plan.toml, and the schedule and EI files that names) in an archive."""
    src = ROOT / "examples" / "plans" / "phased"
    if kind == "zip":
        with zipfile.ZipFile(tmp_path / "plan.zip", "w") as z:
            for f in sorted(src.iterdir()):
                z.write(f, f"phased/{f.name}")
    else:
        with tarfile.open(tmp_path / "plan.tar", "w") as t:
            t.add(src, "phased")


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("zip", "/vsizip/plan.zip/phased/plan.gpkg"),
        ("zip", "/vsizip/plan.zip/phased"),  # the folder: its one GeoPackage is the package
        ("zip", "/vsizip/{TMP}/plan.zip/phased/plan.gpkg"),  # GDAL's absolute form, "//" kept
        ("tar", "/vsitar/plan.tar/phased/plan.gpkg"),
    ],
)
def test_review_reads_a_plan_package_inside_an_archive(tmp_path, kind, path):
    """The review of the zipped package is the folder's: layers, plan.toml, and the soil loss from its schedule."""
    import json

    _zipped_plan(tmp_path, kind)
    path = path.replace("{TMP}", str(tmp_path))
    # The demo layer set has a DEM and soils: the review recomputes the soil loss, reading the schedule.
    plain = esc("review", ROOT / "examples" / "plans" / "phased", "-o", "plain.html", "--json", "plain.json", "-q",
                "--layers", DEMO_LAYERS, cwd=tmp_path)  # fmt: skip
    assert plain.returncode == 0, plain.stderr.decode()
    for _ in range(2):  # every write run twice
        r = esc("review", path, "-o", "r.html", "--json", "r.json", "--overwrite", "--layers", DEMO_LAYERS,
                cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stderr.decode()
        assert f"{path}: " in r.stdout.decode()
    got, want = (json.loads((tmp_path / n).read_text()) for n in ("r.json", "plain.json"))
    assert got["source"].startswith("/vsi") and got["source"].endswith("plan.gpkg")
    got.pop("source"), want.pop("source")
    assert got == want
    # plan.toml was read from the archive (the parties, the schedule), and the soil loss recomputed
    # from the phases.csv and EI file it names, read from the archive too.
    assert not got["package_problems"], got["package_problems"]
    (soil,) = [c for c in got["checks"] if c["code"] == "soil_loss"]
    assert soil["finding"] != "review_soil_loss_not_computed" and "governing window" in soil["detail"], soil


def test_review_reads_a_folder_package_of_layer_files_inside_a_zip(tmp_path):
    """One GeoJSON a layer and plan.toml in a folder of the zip, with its folder entry (as zip -r writes it)."""
    import json

    src = ROOT / "examples" / "plans" / "complete" / "plan.gpkg"
    folder = tmp_path / "plan"
    folder.mkdir()
    for name in pyogrio.list_layers(src)[:, 0]:
        if name != "layer_styles":
            pyogrio.write_dataframe(pyogrio.read_dataframe(src, layer=name), folder / f"{name}.geojson")
    (folder / "plan.toml").write_bytes((src.parent / "plan.toml").read_bytes())
    with zipfile.ZipFile(tmp_path / "plan.zip", "w") as z:
        z.write(folder, "plan/")  # the folder's own entry: a folder, not an empty file
        for f in sorted(folder.iterdir()):
            z.write(f, f"plan/{f.name}")
    for path, out in (("plan", "a"), ("/vsizip/plan.zip/plan", "b"), ("/vsizip/plan.zip/plan/", "c")):
        r = esc("review", path, "-o", f"{out}.html", "--json", f"{out}.json", "-q", cwd=tmp_path)
        assert r.returncode == 0, (path, r.stderr.decode())
    a, b, c = (json.loads((tmp_path / f"{n}.json").read_text()) for n in "abc")
    for d in (a, b, c):
        d.pop("source")
    assert a == b == c and not a["package_problems"], a["package_problems"]


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/vsizip/plan.zip/phased/plan2.gpkg", "'plan.zip' holds no 'phased/plan2.gpkg' (it holds phased/"),
        ("/vsizip/none.zip/phased/plan.gpkg", "the archive 'none.zip' is missing"),
    ],
)
def test_review_names_an_absent_package_in_or_of_an_archive(tmp_path, path, words):
    _zipped_plan(tmp_path, "zip")
    r = esc("review", path, "-o", "r.html", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 1 and words in err and "Fix: check the path" in err, err
    assert "Traceback" not in err and not (tmp_path / "r.html").exists()


# -- (f) one geometry type a layer: single and multi parts of one kind written all multi --------------------


def _ogr_geometry(path: Path, layer: str) -> str:
    """The geometry type GDAL's ogrinfo (the system's, as users run it) declares for ``layer``; no warning said."""
    from .conftest import require_tool

    r = subprocess.run([require_tool("ogrinfo", "gdal-bin"), "-ro", "-so", str(path), layer],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 0 and "Warning" not in r.stdout + r.stderr, r.stdout + r.stderr
    return next(line.split(":", 1)[1].strip() for line in r.stdout.splitlines() if line.startswith("Geometry:"))


@pytest.mark.parametrize("mixed", [True, False])
def test_sites_drawn_as_polygons_and_multipolygons_are_written_one_type(tmp_path, layers_path, mixed):
    """A mixed layer is Multi Polygon to ogrinfo (it was Unknown in GeoJSON); a layer of polygons stays Polygon."""
    import pyarrow.parquet as pq
    import shapely

    b = shapely.MultiPolygon([box(300, 100, 320, 120), box(400, 100, 420, 120)]) if mixed else box(300, 100, 320, 120)
    # As GeoJSON: GDAL's GeoPackage would promote the input's parts itself (it takes no mix).
    rows = [{"site_id": "A", "geometry": box(100, 100, 200, 200)}, {"site_id": "B", "geometry": b}]
    sites(rows, "EPSG:4326").to_file(tmp_path / "sites.geojson", engine="pyogrio")
    assert _ogr_geometry(tmp_path / "sites.geojson", "sites") == ("Unknown (any)" if mixed else "Polygon")
    want = "Multi Polygon" if mixed else "Polygon"
    for out in ("out.geojson", "out.gpkg", "out.parquet"):
        for _ in range(2):  # every write run twice
            r = esc("screen", "sites.geojson", "--layers", layers_path, "-o", out, "-q", "--overwrite", cwd=tmp_path)
            assert r.returncode == 0, r.stderr.decode()
        if out.endswith(".parquet"):  # GDAL 3.6 reads no Parquet: the GeoParquet metadata says the type
            geo = json.loads(pq.read_schema(tmp_path / out).metadata[b"geo"])
            assert geo["columns"]["geometry"]["geometry_types"] == [want.replace(" ", "")]
        else:
            assert _ogr_geometry(tmp_path / out, "screening") == want
    got = gpd.read_file(tmp_path / "out.gpkg")
    # The measures are the parts': promoting changes the type, never the shape.
    assert got.geometry.area.tolist() == pytest.approx([10_000, 800 if mixed else 400], rel=1e-4)
    assert set(got.geom_type) == {want.replace(" ", "")}
