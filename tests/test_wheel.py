"""A wheel that works on its own: built by `python -m build`, installed in a fresh venv, run far from the clone.

The venv is a real, independent one: the wheel and its dependencies are installed by pip
(from the local wheel cache and the package index), not borrowed from the project's .venv,
so a dependency missing from pyproject.toml, or a file missing from the wheel, fails here.
It takes about a minute; deselect it while working with ``-m "not wheel"``. ``make test``
and CI run it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import geopandas as gpd
import pytest

from esc_gis.config import FORMATS
from esc_gis.maps.assets import BUNDLED, LEAFLET_VERSION

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = "Scripts" if os.name == "nt" else "bin"
TEMPLATES = ROOT / "src" / "esc_gis" / "templates"


def _vendor_files() -> list[str]:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from vendor_leaflet import files
    finally:
        sys.path.pop(0)
    return files(BUNDLED)


def test_bundled_leaflet_is_the_npm_package_the_lock_pins():
    locked = json.loads((ROOT / "package-lock.json").read_text())["packages"]["node_modules/leaflet"]["version"]
    bundled = json.loads((BUNDLED / "package.json").read_text())["version"]
    assert locked == bundled == LEAFLET_VERSION
    assert "BSD" in (BUNDLED / "LICENSE").read_text() or "Vladimir Agafonkin" in (BUNDLED / "LICENSE").read_text()
    npm = ROOT / "node_modules" / "leaflet"
    if not (npm / "package.json").is_file():
        msg = "node_modules/leaflet is not installed (run npm ci); .ci/run installs it"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: a missing system part is a failure here.")
        pytest.skip(msg)
    stale = [rel for rel in _vendor_files() if (npm / rel).read_bytes() != (BUNDLED / rel).read_bytes()]
    assert not stale, f"{stale} differ from node_modules: run `python scripts/vendor_leaflet.py`"


def test_the_service_s_copies_are_the_npm_packages_the_lock_pins():
    """Bootstrap and marker clustering for pygeoapi's pages (esc_gis/serve/vendor/): each the pinned npm package."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from vendor_leaflet import SERVICE
    finally:
        sys.path.pop(0)
    locked = json.loads((ROOT / "package-lock.json").read_text())["packages"]
    for name, (target, rels) in SERVICE.items():
        copy = ROOT / target
        assert json.loads((copy / "package.json").read_text())["version"] == locked[f"node_modules/{name}"]["version"]
        assert any("licen" in rel.lower() for rel in rels) and all((copy / rel).is_file() for rel in rels)
        npm = ROOT / "node_modules" / name
        if not (npm / "package.json").is_file():
            msg = f"node_modules/{name} is not installed (run npm ci); .ci/run installs it"
            if os.environ.get("CI") == "true":
                pytest.fail(f"{msg}, and CI=true: a missing system part is a failure here.")
            pytest.skip(msg)
        stale = [rel for rel in rels if (npm / rel).read_bytes() != (copy / rel).read_bytes()]
        assert not stale, f"{name}: {stale} differ from node_modules: run `python scripts/vendor_leaflet.py`"


def test_licence_file_matches_pyproject():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["license"] == "MIT" and "LICENSE" in meta["license-files"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_the_readme_way_to_build_the_wheel_brings_build():
    """`python -m build` needs the `build` package: `make wheel`, as the README says, installs it first."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`make wheel`" in readme
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("build") for d in extras["dev"])
    # The recipe, as make would run it: the dev extra into the venv, then build with that venv's Python.
    r = subprocess.run(["make", "-n", "-C", str(ROOT), "wheel"], capture_output=True, text=True, check=True)
    steps = [line for line in r.stdout.splitlines() if ".venv/bin/python -m" in line]
    assert "pip install" in steps[-2] and "[dev]" in steps[-2] and "-m build" in steps[-1], r.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel built by `python -m build` (sdist first, the wheel from it)."""
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "build", "-o", str(dist), str(ROOT)], check=True, capture_output=True)
    (wheel,) = dist.glob("esc_gis-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    r = subprocess.run(
        [str(venv / SCRIPTS / "python"), "-m", "pip", "install", "--quiet", str(wheel)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return venv


def _clean_env() -> dict[str, str]:
    # Nothing may point back at the clone: no PYTHONPATH, no layer set or assets from the environment.
    drop = {"PYTHONPATH", "ESC_GIS_LAYERS", "ESC_GIS_ASSETS", "VIRTUAL_ENV"}
    return {k: v for k, v in os.environ.items() if k not in drop}


@pytest.mark.wheel
def test_wheel_carries_the_layer_set_leaflet_licences_and_schemas(installed):
    (wheel,) = (installed.parent / "dist").glob("esc_gis-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "esc_gis/layersets/winneconne/layers.toml",
        "esc_gis/layersets/winneconne/village_boundary.gpkg",
        "esc_gis/layersets/winneconne/waters.gpkg",
        "esc_gis/layersets/winneconne/README.md",  # the layers' sources and licences travel with them
        "esc_gis/maps/leaflet/dist/leaflet.js",
        "esc_gis/maps/leaflet/LICENSE",
        "esc_gis/serve/page/index.html",  # the service's public page and its script and style
        "esc_gis/serve/page/page.js",
        "esc_gis/serve/page/page.css",
        *(f"esc_gis/serve/page/{m}.js" for m in ("dom", "draw", "ask", "answer")),  # the page's modules
        # pygeoapi's pages: their frame, script and style, and Bootstrap and marker clustering with licences.
        "esc_gis/serve/pygeoapi_templates/_base.html",
        "esc_gis/serve/page/ogc.js",
        "esc_gis/serve/page/ogc.css",
        "esc_gis/serve/vendor/bootstrap/dist/css/bootstrap.min.css",
        "esc_gis/serve/vendor/bootstrap/LICENSE",
        "esc_gis/serve/vendor/leaflet.markercluster/dist/leaflet.markercluster.js",
        "esc_gis/serve/vendor/leaflet.markercluster/dist/MarkerCluster.css",
        "esc_gis/serve/vendor/leaflet.markercluster/dist/MarkerCluster.Default.css",
        "esc_gis/serve/vendor/leaflet.markercluster/MIT-LICENCE.txt",
        "esc_gis/maps/compact.js",  # the maps' site layer, read at run time
        # Every HTML template (esc_gis/_templates.py): the reports, pages, legends and popups.
        *(f"esc_gis/{p.relative_to(ROOT / 'src' / 'esc_gis').as_posix()}" for p in TEMPLATES.rglob("*.j2")),
        "esc_gis-0.1.0.dist-info/licenses/LICENSE",
        # The configuration files' JSON Schemas, for editors (issue 37).
        *(f"esc_gis/schemas/{name}.schema.json" for name in FORMATS),
    } <= names
    assert len(list(TEMPLATES.rglob("*.j2"))) >= 10
    assert not any("winneconne-demo" in n for n in names)  # made-up layers stay in the clone


@pytest.mark.wheel
def test_installed_wheel_screens_and_maps_offline_from_any_folder(installed, tmp_path):
    bin_ = installed / SCRIPTS
    env = _clean_env()
    work = tmp_path / "elsewhere"
    work.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r

    where = run(str(bin_ / "python"), "-c", "import esc_gis; print(esc_gis.__file__)").stdout
    assert Path(where.strip()).is_relative_to(installed)  # the wheel's copy, not the clone's
    demo = ROOT / "examples" / "demo"
    run(str(bin_ / "esc-gis"), "screen", str(demo / "sites.geojson"), "-o", "screening.gpkg", "-q")
    result = gpd.read_file(work / "screening.gpkg").set_index("site_id")
    assert len(result) == 21
    # The Village's real boundary, found by default: S06 and S07 lie outside it, S02 needs a permit.
    assert list(result.loc[["S02", "S06", "S07"], "jurisdiction"]) == ["inside", "outside", "outside"]
    assert result.loc["S02", "permit"] == "required"
    r = run(str(bin_ / "esc-gis"), "map", "screening.gpkg", "--offline", "-o", "overview.html")
    assert "offline" in r.stdout
    page = (work / "overview.html").read_text(encoding="utf-8")
    assert "<script src=" not in page and f'content="leaflet {LEAFLET_VERSION}' in page
    # The templates and compact.js came from the wheel: the legend, and the site layer's code.
    assert "id='esc-legend'" in page and "function escCompactPolygons(" in page
    # The shipped layer set has no DEM or targeted areas: the checks not made are listed beside the output.
    assert sorted(p.name for p in work.iterdir()) == [
        "overview.html",
        "screening.gpkg",
        "screening.gpkg.run_findings.csv",
        "screening.gpkg.run_findings.csvt",  # its column types, for GDAL and QGIS
    ]
    notes = (work / "screening.gpkg.run_findings.csv").read_text(encoding="utf-8")
    assert "no_targeted_layer" in notes and "steep_not_measured" in notes and "no_waters_layer" not in notes
    # Without the serve extra, `esc-gis serve` says what to install, and nothing else happens.
    r = subprocess.run(
        [str(bin_ / "esc-gis"), "serve", "--registry", "screening.gpkg"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and "py3-none-any.whl[serve]'" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "esc-gis[" not in r.stderr  # esc_gis is not on PyPI: the message names the wheel
