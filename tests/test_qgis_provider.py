"""The QGIS Processing provider (qgis/esc_gis_processing) in a real QGIS, headless, through qgis_process.

The plugin zip (``make qgis-plugin``) is unpacked into a fresh QGIS profile (a throwaway HOME),
the provider's esc-gis setting points at this venv's esc-gis (PATH does not: the setting is what
finds it), the plugin is enabled, and its algorithms run on the demo data; their outputs must be
the CLI's own (same rows and decisions, same slope values).

Debian 12's /usr/bin/qgis_process (QGIS 3.22) is a wrapper that passes --noversioncheck from
/etc/default/qgis, which qgis_process.bin rejects ("Command --noversioncheck not known!"), so
the binary is called directly.
"""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import rasterio

ROOT = Path(__file__).resolve().parents[1]
QGIS_PROCESS = Path("/usr/bin/qgis_process.bin")
ESC_GIS = Path(sys.executable).parent / "esc-gis"
DEMO = ROOT / "layers" / "winneconne-demo"
MANIFEST = DEMO / "layers.toml"
SITES = ROOT / "examples" / "demo" / "sites.geojson"
DISTURBED = ROOT / "examples" / "demo" / "disturbed.geojson"
ALGORITHMS = {"screen", "slope", "steep", "protective", "map", "review", "soil_loss"}


def require_qgis_process() -> Path:
    """qgis_process.bin; skip when missing, but fail in CI (CI=true), which installs it."""
    if not QGIS_PROCESS.exists():
        msg = f"{QGIS_PROCESS} is not installed (Debian package qgis); .ci/run installs it"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: a missing system part is a failure here.")
        pytest.skip(msg)
    return QGIS_PROCESS


class Qgis:
    """qgis_process in a fresh profile under ``home``."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = {
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_RUNTIME_DIR": str(home),
            "QT_QPA_PLATFORM": "offscreen",
            "PATH": "/usr/bin:/bin",  # not the venv's bin: the provider setting must find esc-gis
            "LANG": "C.UTF-8",
            "GDAL_PAM_ENABLED": "NO",  # no .aux.xml statistics written beside the inputs
        }

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run(
            [str(QGIS_PROCESS), *args], capture_output=True, text=True, env=self.env, cwd=self.home, timeout=600
        )
        if check:
            assert r.returncode == 0, r.stdout + r.stderr
        return r

    def run(self, algorithm: str, **params: object) -> dict:
        r = self("--json", "run", f"escgis:{algorithm}", "--", *(f"{k}={v}" for k, v in params.items()))
        return json.loads(r.stdout)


@pytest.fixture(scope="module")
def qgis(tmp_path_factory: pytest.TempPathFactory) -> Qgis:
    require_qgis_process()
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from build_qgis_plugin import build
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    home = tmp_path_factory.mktemp("qgis_home")
    zip_path = build(home / "esc_gis_processing.zip")
    profile = home / ".local" / "share" / "QGIS" / "QGIS3" / "profiles" / "default"
    # What QGIS's Install from ZIP does: unpack into the profile's python/plugins.
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(profile / "python" / "plugins")
    (profile / "QGIS").mkdir(parents=True)
    # The provider setting as QGIS stores it (Processing > Options > Providers > esc_gis).
    (profile / "QGIS" / "QGIS3.ini").write_text(f"[Processing]\nConfiguration\\ESC_GIS_EXECUTABLE={ESC_GIS}\n")
    q = Qgis(home)
    q("plugins", "enable", "esc_gis_processing")
    return q


def test_zip_holds_one_plugin_folder(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from build_qgis_plugin import build
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    names = zipfile.ZipFile(build(tmp_path / "p.zip")).namelist()
    assert {n.split("/")[0] for n in names} == {"esc_gis_processing"}
    assert {"esc_gis_processing/metadata.txt", "esc_gis_processing/__init__.py"} <= set(names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    meta = configparser.ConfigParser()
    meta.read_string(zipfile.ZipFile(tmp_path / "p.zip").read("esc_gis_processing/metadata.txt").decode())
    assert meta["general"]["hasProcessingProvider"] == "yes"  # qgis_process loads only such plugins


def test_plugin_enabled_in_the_fresh_profile_lists_its_algorithms(qgis):
    ini = configparser.ConfigParser(strict=False)
    ini.read(qgis.home / ".local/share/QGIS/QGIS3/profiles/default/QGIS/QGIS3.ini")
    assert ini["PythonPlugins"]["esc_gis_processing"] == "true"
    listed = qgis("list").stdout
    got = {line.split()[0].split(":")[1] for line in listed.splitlines() if line.strip().startswith("escgis:")}
    assert got == ALGORITHMS
    help_text = qgis("help", "escgis:screen").stdout
    # Native algorithms' names: INPUT and OUTPUT, upper case throughout (issue 36).
    for name in ("INPUT", "DISTURBED", "LAYERS", "ID_FIELD", "SKIP_IDS", "OUTPUT"):
        assert f"\n{name}:" in help_text, name


GROUPS = {
    "screen": "Screening",
    "protective": "Screening",
    "slope": "Terrain",
    "steep": "Terrain",
    "soil_loss": "Soil loss",
    "map": "Maps and review",
    "review": "Maps and review",
}
FIELDS = {"screen": {"ID_FIELD"}, "protective": {"CLASS_FIELD", "NAME_FIELD", "CHANNEL_WIDTH_FIELD", "PIPED_FIELD", "DRAINAGE_FIELD"}, "soil_loss": {"K_FIELD", "ID_FIELD"}}  # fmt: skip


def test_algorithms_follow_processings_conventions(qgis):
    """As QGIS's native algorithms: groups by task, INPUT and OUTPUT, upper-case names, field pickers."""
    for algorithm, group in GROUPS.items():
        doc = json.loads(qgis("--json", "help", f"escgis:{algorithm}").stdout)
        assert doc["algorithm_details"]["group"] == group, algorithm
        params = doc["parameters"]
        assert "INPUT" in params and "OUTPUT" in params, (algorithm, sorted(params))
        assert all(name == name.upper() for name in params), (algorithm, sorted(params))
        fields = {name for name, p in params.items() if p["type"]["id"] == "field"}
        assert fields == FIELDS.get(algorithm, set()), (algorithm, fields)


def test_the_dialogs_bar_follows_the_clis_progress(qgis, tmp_path):
    """esc-gis --progress plain's lines move Processing's progress (qgis_process prints it as 0...10...)."""
    dem = tmp_path / "dem.tif"
    dem.write_bytes((DEMO / "dem_synthetic.tif").read_bytes())
    r = qgis("run", "escgis:slope", "--", f"INPUT={dem}", f"OUTPUT={tmp_path / 'q.tif'}")
    ticks = r.stdout + r.stderr
    assert "50..." in ticks and "PROGRESS" not in ticks, ticks[-2000:]


def cli(*args: str) -> None:
    r = subprocess.run([str(ESC_GIS), *args, "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_screen_matches_the_cli(qgis, tmp_path):
    got = qgis.run("screen", INPUT=SITES, DISTURBED=DISTURBED, LAYERS=MANIFEST, OUTPUT=tmp_path / "q.gpkg")
    assert got["results"]["OUTPUT"] == str(tmp_path / "q.gpkg")
    # GeoJSON is no file esc-gis is handed as is: QGIS exports it to a GeoPackage first.
    command = got["log"]["info"][0]
    assert command.startswith(f"{ESC_GIS} --progress plain screen ") and str(SITES) not in command, command
    assert any(line.startswith("Wrote 21 rows to") for line in got["log"]["info"])  # the CLI's summary
    cli("screen", str(SITES), "--disturbed", str(DISTURBED), "--layers", str(MANIFEST), "-o", str(tmp_path / "c.gpkg"))
    q, c = gpd.read_file(tmp_path / "q.gpkg"), gpd.read_file(tmp_path / "c.gpkg")
    assert len(q) == 21 and set(q["permit"]) == {"required", "not_required", "not_applicable"}
    pd.testing.assert_frame_equal(q.drop(columns="geometry"), c.drop(columns="geometry"))
    assert q.geometry.normalize().geom_equals_exact(c.geometry.normalize(), tolerance=1e-6).all()


def test_slope_values_match_the_cli(qgis, tmp_path):
    dem = tmp_path / "dem.tif"
    dem.write_bytes((DEMO / "dem_synthetic.tif").read_bytes())
    qgis.run("slope", INPUT=dem, OUTPUT=tmp_path / "q.tif")
    cli("slope", str(dem), "-o", str(tmp_path / "c.tif"))
    with rasterio.open(tmp_path / "q.tif") as q, rasterio.open(tmp_path / "c.tif") as c:
        a, b = q.read(1), c.read(1)
        assert q.crs == c.crs and q.transform == c.transform and q.nodata == c.nodata == -9999
    np.testing.assert_array_equal(a, b)
    assert (a > 20).any() and (a == -9999).any()  # steep cells and the nodata edge are both there
    assert (tmp_path / "q.qml").exists()  # the CLI's QGIS style came along


#: The band pickers, each listing the bands of its raster input (as gdaldem's Processing algorithms do).
BAND_PARENTS = {"slope": "INPUT", "steep": "INPUT", "soil_loss": "DEM"}


def test_band_is_a_picker_of_the_dems_bands_and_slope_takes_creation_options(qgis):
    """Not a number box: QgsProcessingParameterBand tied to the DEM. Slope's creation options are
    declared as QGIS's GDAL slope declares its own: an advanced string with the GTiff options widget."""
    for algorithm, parent in BAND_PARENTS.items():
        band = json.loads(qgis("--json", "help", f"escgis:{algorithm}").stdout)["parameters"]["BAND"]
        assert band["type"]["id"] == "band" and band["optional"], algorithm
        assert band["raw_definition"]["parent_layer"] == parent, algorithm
        assert band["raw_definition"]["allow_multiple"] is False, algorithm
    params = json.loads(qgis("--json", "help", "escgis:slope").stdout)["parameters"]
    co = params["CREATION_OPTIONS"]
    assert co["type"]["id"] == "string" and co["optional"] and co["is_advanced"]
    widget = co["raw_definition"]["metadata"]["widget_wrapper"]["class"]
    assert widget == "processing.algs.gdal.ui.RasterOptionsWidget.RasterOptionsWidgetWrapper"
    assert "CREATION_OPTIONS" not in json.loads(qgis("--json", "help", "escgis:steep").stdout)["parameters"]


def _two_band_dem(tmp_path: Path) -> Path:
    """The demo DEM as band 2 of a GeoTIFF whose band 1 is flat (0 everywhere): band 1's slope is all 0."""
    dem = tmp_path / "two_bands.tif"
    with rasterio.open(DEMO / "dem_synthetic.tif") as src:
        z = src.read(1)
        profile = {**src.profile, "count": 2, "driver": "GTiff"}
        with rasterio.open(dem, "w", **profile) as dst:
            dst.write(np.where(z == src.nodata, z, 0).astype(z.dtype), 1)
            dst.write(z, 2)
            dst.units = (src.units[0], src.units[0])  # the elevations' unit, as the demo DEM says it
    return dem


def test_the_picked_band_reaches_the_cli(qgis, tmp_path):
    dem = _two_band_dem(tmp_path)
    got = qgis.run("slope", INPUT=dem, BAND=2, OUTPUT=tmp_path / "q.tif")
    assert " --band 2 " in got["log"]["info"][0], got["log"]["info"][0]
    cli("slope", str(dem), "--band", "2", "-o", str(tmp_path / "c.tif"))
    with rasterio.open(tmp_path / "q.tif") as q, rasterio.open(tmp_path / "c.tif") as c:
        a, b = q.read(1), c.read(1)
    np.testing.assert_array_equal(a, b)
    assert (a > 20).any()  # band 2's slopes, not flat band 1's
    # No band picked on a DEM of two: esc-gis asks for one, and the dialog's log says so.
    r = qgis("run", "escgis:slope", "--", f"INPUT={dem}", f"OUTPUT={tmp_path / 'n.tif'}", check=False)
    assert r.returncode != 0 and "--band" in r.stdout + r.stderr and "Traceback" not in r.stdout + r.stderr


def test_slope_creation_options_reach_the_cli_as_co(qgis, tmp_path):
    """``NAME=VALUE|NAME=VALUE`` (what QGIS's options widget writes; ``;`` too) is esc-gis slope's --co."""
    dem = tmp_path / "dem.tif"
    dem.write_bytes((DEMO / "dem_synthetic.tif").read_bytes())
    for sep, name in (("|", "q.tif"), (";", "s.tif")):
        got = qgis.run(
            "slope", INPUT=dem, CREATION_OPTIONS=f"BLOCKXSIZE=128{sep}BLOCKYSIZE=128", OUTPUT=tmp_path / name
        )
        assert " --co BLOCKXSIZE=128 --co BLOCKYSIZE=128 " in got["log"]["info"][0], got["log"]["info"][0]
    cli("slope", str(dem), "--co", "BLOCKXSIZE=128", "--co", "BLOCKYSIZE=128", "-o", str(tmp_path / "c.tif"))
    cli("slope", str(dem), "-o", str(tmp_path / "d.tif"))
    with rasterio.open(tmp_path / "d.tif") as d:
        assert d.block_shapes != [(128, 128)]  # so the option is what made the blocks 128
    with rasterio.open(tmp_path / "q.tif") as q, rasterio.open(tmp_path / "s.tif") as s:
        with rasterio.open(tmp_path / "c.tif") as c:
            assert q.block_shapes == s.block_shapes == c.block_shapes == [(128, 128)]
            np.testing.assert_array_equal(q.read(1), c.read(1))
    # An option GTiff does not have is refused by esc-gis, in the log, and nothing is written.
    r = qgis(
        "run", "escgis:slope", "--", f"INPUT={dem}", "CREATION_OPTIONS=NOSUCH=1", f"OUTPUT={tmp_path / 'x.tif'}",
        check=False,
    )  # fmt: skip
    assert r.returncode != 0 and "--co NOSUCH=1: GDAL's GTiff driver has no such creation option" in r.stdout + r.stderr
    assert not (tmp_path / "x.tif").exists()


def test_steep_parameters_reach_the_cli(qgis, tmp_path):
    dem = tmp_path / "dem.tif"
    dem.write_bytes((DEMO / "dem_synthetic.tif").read_bytes())
    qgis.run("steep", INPUT=dem, MIN_AREA_SQFT=200, THRESHOLD_PCT=15, OUTPUT=tmp_path / "q.gpkg")
    cli("steep", str(dem), "--min-area-sqft", "200", "--threshold-pct", "15", "-o", str(tmp_path / "c.gpkg"))
    q, c = gpd.read_file(tmp_path / "q.gpkg"), gpd.read_file(tmp_path / "c.gpkg")
    assert len(q) > 0 and q["area_sqft"].min() >= 200
    pd.testing.assert_frame_equal(q.drop(columns="geometry"), c.drop(columns="geometry"))


def test_protective_areas_match_the_cli(qgis, tmp_path):
    got = qgis.run("protective", LAYERS=MANIFEST, OUTPUT=tmp_path / "q.gpkg")
    cli("protective", "--layers", str(MANIFEST), "-o", str(tmp_path / "c.gpkg"))
    q, c = gpd.read_file(tmp_path / "q.gpkg"), gpd.read_file(tmp_path / "c.gpkg")
    assert len(q) > 0 and "--layers" in got["log"]["info"][0]
    pd.testing.assert_frame_equal(q.drop(columns="geometry"), c.drop(columns="geometry"))
    assert q.geometry.normalize().geom_equals_exact(c.geometry.normalize(), tolerance=1e-6).all()


def test_a_geopackage_layer_is_passed_by_its_path_and_layer_name(qgis, tmp_path):
    waters = DEMO / "waters_illustrative.gpkg"
    source = f"{waters}|layername=waters_illustrative"  # a GeoPackage layer as QGIS names it
    got = qgis.run("protective", INPUT=source, CHANNEL_WIDTH_FIELD="channel_width_ft", OUTPUT=tmp_path / "q.gpkg")
    command = got["log"]["info"][0]
    # Not exported: the file itself, with the layer's name.
    assert f"protective {waters} --layer waters_illustrative " in command, command
    cli("protective", str(waters), "--channel-width-field", "channel_width_ft", "-o", str(tmp_path / "c.gpkg"))
    q, c = gpd.read_file(tmp_path / "q.gpkg"), gpd.read_file(tmp_path / "c.gpkg")
    pd.testing.assert_frame_equal(q.drop(columns="geometry"), c.drop(columns="geometry"))


def test_review_and_map_run(qgis, tmp_path):
    plan = ROOT / "examples" / "plans" / "flawed" / "plan.gpkg"
    got = qgis.run("review", INPUT=plan, LAYERS=MANIFEST, OUTPUT=tmp_path / "q.html", JSON=tmp_path / "q.json")
    assert got["results"] == {"OUTPUT": str(tmp_path / "q.html"), "JSON": str(tmp_path / "q.json")}
    cli(
        "review",
        str(plan),
        "--layers",
        str(MANIFEST),
        "-o",
        str(tmp_path / "c.html"),
        "--json",
        str(tmp_path / "c.json"),
    )
    assert json.loads((tmp_path / "q.json").read_text()) == json.loads((tmp_path / "c.json").read_text())
    # A folder package (the CLI takes one: one file per layer beside plan.toml), through its own
    # parameter: the same findings as the GeoPackage's, which it was cut from.
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "plan.toml").write_bytes((plan.parent / "plan.toml").read_bytes())
    for name, _ in pyogrio.list_layers(plan):
        gpd.read_file(plan, layer=name).to_file(folder / f"{name}.gpkg")
    got = qgis.run("review", INPUT_FOLDER=folder, LAYERS=MANIFEST, OUTPUT=tmp_path / "f.html", JSON=tmp_path / "f.json")
    assert f"review {folder} -o " in got["log"]["info"][0]
    from_folder, from_gpkg = (
        json.loads((tmp_path / "f.json").read_text()),
        json.loads((tmp_path / "c.json").read_text()),
    )
    assert from_folder.pop("source") == str(folder) and from_gpkg.pop("source") == str(plan)
    assert from_folder == from_gpkg
    r = qgis("run", "escgis:review", "--", f"OUTPUT={tmp_path / 'n.html'}", check=False)
    assert r.returncode != 0 and "not both" in r.stdout + r.stderr and not (tmp_path / "n.html").exists()
    cli("screen", str(SITES), "--layers", str(MANIFEST), "-o", str(tmp_path / "s.gpkg"))
    qgis.run("map", INPUT=tmp_path / "s.gpkg", LAYERS=MANIFEST, SITE="S16", OUTPUT=tmp_path / "m.html")
    assert "S16" in (tmp_path / "m.html").read_text()


def test_soil_loss_matches_the_cli(qgis, tmp_path):
    # The demo target's inputs (made-up soils, schedule and erosivity; R = 120 a placeholder).
    soils = DEMO / "soils_made_up.gpkg"
    inputs = {
        "DEM": DEMO / "dem_synthetic.tif",
        "SOILS": soils,
        "SCHEDULE": ROOT / "examples" / "demo" / "schedule_made_up.csv",
        "DISTURBED": DISTURBED,
        "R_ANNUAL": 120,
        "EI_FILE": ROOT / "examples" / "demo" / "ei_monthly_made_up.csv",
        "ID_FIELD": "site_id",
    }
    got = qgis.run("soil_loss", INPUT=SITES, **inputs, OUTPUT=tmp_path / "q.gpkg")
    assert got["results"] == {
        "OUTPUT": str(tmp_path / "q.gpkg"),
        "PHASES": str(tmp_path / "q.gpkg.phases.csv"),
        "WINDOWS": str(tmp_path / "q.gpkg.windows.csv"),
    }
    command = got["log"]["info"][0]
    # A one-layer GeoPackage goes as it is (the CLI has no --layer here); the GeoJSON is exported.
    assert f" --soils {soils} " in command and str(SITES) not in command, command
    assert " --r-annual 120.0 " in command and " --id-field site_id " in command, command
    assert command.startswith(f"{ESC_GIS} --progress plain soil-loss "), command  # progress for the dialog
    args = [f"--{k.lower().replace('_', '-')}={v}" for k, v in inputs.items()]
    cli("soil-loss", str(SITES), *args, "-o", str(tmp_path / "c.gpkg"))
    q, c = gpd.read_file(tmp_path / "q.gpkg"), gpd.read_file(tmp_path / "c.gpkg")
    assert not (tmp_path / "q.tif").exists()  # the per-cell raster is only on request
    assert len(q) == len(c) > 0 and np.isfinite(q["discharge_tpa"]).any()
    pd.testing.assert_frame_equal(q.drop(columns="geometry"), c.drop(columns="geometry"))
    assert q.geometry.normalize().geom_equals_exact(c.geometry.normalize(), tolerance=1e-6).all()
    for table in ("phases", "windows"):
        qt, ct = pd.read_csv(tmp_path / f"q.gpkg.{table}.csv"), pd.read_csv(tmp_path / f"c.gpkg.{table}.csv")
        assert len(qt) > 0, table
        pd.testing.assert_frame_equal(qt, ct)


def test_screen_and_soil_loss_take_dst_crs_as_the_cli(qgis, tmp_path):
    """DST_CRS, an optional CRS picker as steep's and protective's, goes as --dst-crs: the output in that CRS,
    its rows (measured in the profile's CRS) the CLI's."""
    soil = {
        "DEM": DEMO / "dem_synthetic.tif",
        "SOILS": DEMO / "soils_made_up.gpkg",
        "SCHEDULE": ROOT / "examples" / "demo" / "schedule_made_up.csv",
        "R_ANNUAL": 120,
        "EI_FILE": ROOT / "examples" / "demo" / "ei_monthly_made_up.csv",
        "ID_FIELD": "site_id",
    }
    for algorithm, command, params in [("screen", "screen", {"LAYERS": MANIFEST}), ("soil_loss", "soil-loss", soil)]:
        doc = json.loads(qgis("--json", "help", f"escgis:{algorithm}").stdout)["parameters"]["DST_CRS"]
        assert doc["type"]["id"] == "crs" and doc["optional"], doc
        got = qgis.run(algorithm, INPUT=SITES, **params, DST_CRS="EPSG:4326", OUTPUT=tmp_path / f"q_{algorithm}.gpkg")
        assert " --dst-crs EPSG:4326 " in got["log"]["info"][0], got["log"]["info"][0]
        args = [f"--{k.lower().replace('_', '-')}={v}" for k, v in params.items()]
        cli(command, str(SITES), *args, "--dst-crs", "EPSG:4326", "-o", str(tmp_path / f"c_{algorithm}.gpkg"))
        q, c = gpd.read_file(tmp_path / f"q_{algorithm}.gpkg"), gpd.read_file(tmp_path / f"c_{algorithm}.gpkg")
        assert q.crs.to_epsg() == 4326 and len(q) > 0, algorithm
        assert -90 < q.total_bounds[1] < q.total_bounds[3] < 90  # longitude/latitude, not feet
        pd.testing.assert_frame_equal(q.drop(columns="geometry"), c.drop(columns="geometry"))
        assert q.geometry.normalize().geom_equals_exact(c.geometry.normalize(), tolerance=1e-9).all()


def test_soil_loss_raster_matches_the_cli(qgis, tmp_path):
    import rasterio

    inputs = {
        "DEM": DEMO / "dem_synthetic.tif",
        "SOILS": DEMO / "soils_made_up.gpkg",
        "SCHEDULE": ROOT / "examples" / "demo" / "schedule_made_up.csv",
        "DISTURBED": DISTURBED,
        "R_ANNUAL": 120,
        "EI_FILE": ROOT / "examples" / "demo" / "ei_monthly_made_up.csv",
        "ID_FIELD": "site_id",
    }
    got = qgis.run("soil_loss", INPUT=SITES, **inputs, OUTPUT=tmp_path / "q.gpkg", RASTER=tmp_path / "q.tif")
    assert got["results"]["RASTER"] == str(tmp_path / "q.tif")
    args = [f"--{k.lower().replace('_', '-')}={v}" for k, v in inputs.items()]
    cli("soil-loss", str(SITES), *args, "-o", str(tmp_path / "c.gpkg"), "--raster", str(tmp_path / "c.tif"))
    with rasterio.open(tmp_path / "q.tif") as q, rasterio.open(tmp_path / "c.tif") as c:
        assert q.count == c.count == 3 and q.transform == c.transform
        qa, ca = q.read(masked=True), c.read(masked=True)
    assert qa.count() > 0
    np.testing.assert_array_equal(qa.mask, ca.mask)
    np.testing.assert_array_equal(qa.filled(0), ca.filled(0))


def test_cli_error_reaches_the_log_as_written(qgis, tmp_path):
    r = qgis(
        "run",
        "escgis:screen",
        "--",
        f"INPUT={SITES}",
        "LAYERS=/nowhere/layers.toml",
        f"OUTPUT={tmp_path / 'q.gpkg'}",
        check=False,
    )
    assert r.returncode != 0
    said = "Error: Layer-set manifest '/nowhere/layers.toml' does not exist; give the path of a layers.toml."
    assert said in r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert not (tmp_path / "q.gpkg").exists()


FAKE = """#!/bin/sh
# The provider runs esc-gis --progress plain ...: the stand-in takes that option as esc-gis does.
if [ "$1" = --progress ]; then shift 2; fi
echo "PROGRESS 50%" >&2
echo "working on $1"
echo "Warning 1: GeoPackage user_version is only partially supported" >&2
echo "Error: 2 problems found in the input:" >&2
echo "  - schedule row 2: phases overlap." >&2
echo "  - --k: K 1.5 is out of range." >&2
if [ "$1" = cancel ]; then sleep 60; fi
exit "${2:-0}"
"""


def run_runner(tmp_path: Path, *args: str) -> dict:
    """The plugin's runner in QGIS's Python (PyQGIS) on a stand-in esc-gis (a shell script)."""
    from .test_styles import require_pyqgis

    python = require_pyqgis()
    fake = tmp_path / "esc-gis"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": str(tmp_path), "HOME": str(tmp_path)}
    check = Path(__file__).parent / "qgis" / "check_runner.py"
    r = subprocess.run([python, str(check), str(fake), *args], capture_output=True, text=True, env=env, timeout=120)
    assert r.stdout.strip(), r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_runner_streams_stdout_and_stderr_and_fails_on_exit_status(tmp_path):
    ok = run_runner(tmp_path, "x", "0")
    assert ok["exception"] is None
    assert ["info", "working on x"] in ok["lines"] and ["error", "Error: 2 problems found in the input:"] in ok["lines"]
    assert ok["lines"][0] == ["command", f"{tmp_path / 'esc-gis'} --progress plain x 0"]
    # A plain progress line moves the dialog's bar and is not logged (neither as info nor as an error).
    assert ["progress", 50] in ok["lines"] and not [x for x in ok["lines"] if "PROGRESS" in str(x[1])]
    # GDAL's warning is a warning in QGIS, not an error.
    assert ["warning", "Warning 1: GeoPackage user_version is only partially supported"] in ok["lines"]
    assert not [x for x in ok["lines"] if x[0] == "error" and "Warning" in x[1]]
    # The failure's message carries every problem the CLI listed, not its last line only.
    bad = run_runner(tmp_path, "x", "1")
    assert bad["exception"] == (
        "esc-gis exited with status 1: Error: 2 problems found in the input:\n"
        "  - schedule row 2: phases overlap.\n  - --k: K 1.5 is out of range."
    )


def test_cancel_kills_the_subprocess(tmp_path):
    got = run_runner(tmp_path, "cancel")
    assert got["exception"] == "Cancelled: esc-gis was stopped."
    assert got["seconds"] < 20  # not the 60 s the stand-in sleeps
    assert ["info", "working on cancel"] in got["lines"]
