"""Build step: ship the Village's layer set inside the wheel (all other metadata is in pyproject.toml).

The layer set lives in ``layers/winneconne/`` (made by scripts/prepare_winneconne_layers.py,
used in place by a clone and by ``make demo``). A wheel has no clone beside it, so the build
copies the folder, README with its sources and licences included, to
``esc_gis/layersets/winneconne/`` where :func:`esc_gis.layers.default_manifest` finds it.
An editable install (``pip install -e``) reads it from the clone and copies nothing.
The sdist carries the folder (MANIFEST.in), so a wheel built from it has it too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: Layer sets shipped in the wheel. Only the real one: the demo's waters, targeted area and
#: DEM are made up, and an installed package is where they could be mistaken for real data.
LAYER_SETS = ("winneconne",)


class BuildPyWithLayers(build_py):
    """``build_py`` that also copies the layer sets into the built package."""

    def run(self) -> None:
        """Build the package, then add the layer sets (unless the install is editable)."""
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in LAYER_SETS:
            source = ROOT / "layers" / name
            if not (source / "layers.toml").is_file():
                msg = f"{source / 'layers.toml'} is missing: a wheel without the Village's layer set would not work."
                raise FileNotFoundError(msg)
            target = Path(self.build_lib) / "esc_gis" / "layersets" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target)


setup(cmdclass={"build_py": BuildPyWithLayers})
