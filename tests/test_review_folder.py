"""A folder holding the plan's one GeoPackage beside plan.toml is that package, as applicants send it.

``examples/plans/flawed/`` is such a folder: reviewing it gives the GeoPackage's review, and a
folder with two plan files is refused naming both rather than guessing which is meant.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from esc_gis.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
FLAWED = ROOT / "examples" / "plans" / "flawed"
LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"


def _review(target: Path, out: Path):
    return CliRunner().invoke(
        cli, ["review", str(target), "--layers", str(LAYERS), "-o", str(out.with_suffix(".html")), "--json", str(out)]
    )


def test_a_folder_with_one_geopackage_is_reviewed_as_that_geopackage(tmp_path) -> None:
    r = _review(FLAWED, tmp_path / "folder.json")
    assert r.exit_code == 0, r.output
    r = _review(FLAWED / "plan.gpkg", tmp_path / "file.json")
    assert r.exit_code == 0, r.output
    folder, file = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("folder", "file"))
    assert folder["source"] == file["source"] == str(FLAWED / "plan.gpkg")
    assert folder == file and folder["verdict"] == "disapprove"


def test_a_folder_with_two_plan_files_is_refused_naming_them(tmp_path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    shutil.copy(FLAWED / "plan.toml", pkg / "plan.toml")
    shutil.copy(FLAWED / "plan.gpkg", pkg / "plan.gpkg")
    shutil.copy(FLAWED / "plan.gpkg", pkg / "plan_rev1.gpkg")
    r = _review(pkg, tmp_path / "x.json")
    assert r.exit_code == 1 and "2 plan files (plan.gpkg, plan_rev1.gpkg)" in r.output, r.output
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "x.html").exists()
