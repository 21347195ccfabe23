"""Copy the pinned Leaflet from node_modules into the package, for --offline maps without npm.

    npm ci && python scripts/vendor_leaflet.py

The copy (src/esc_gis/maps/leaflet/: package.json, LICENSE, dist/leaflet.{js,css},
dist/images/*.png) is committed, so every way of installing esc_gis (a wheel, an sdist, an
editable clone, `pip install git+...`) carries it without Node.js. Run this after changing
Leaflet's version in package.json (and LEAFLET_VERSION in src/esc_gis/maps/assets.py);
tests/test_wheel.py checks that the copy is byte for byte the npm package package-lock.json pins.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "node_modules" / "leaflet"
TARGET = ROOT / "src" / "esc_gis" / "maps" / "leaflet"
#: What an offline map inlines, and the licence that must travel with it.
FILES = ("package.json", "LICENSE", "dist/leaflet.js", "dist/leaflet.css")


def files(folder: Path) -> list[str]:
    """The vendored files, relative to the package folder."""
    return [*FILES, *(f"dist/images/{p.name}" for p in sorted((folder / "dist" / "images").glob("*.png")))]


def main() -> int:
    locked = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    pinned = locked["packages"]["node_modules/leaflet"]["version"]
    if not (SOURCE / "package.json").is_file():
        print("node_modules/leaflet is missing: run `npm ci` first.", file=sys.stderr)
        return 1
    have = json.loads((SOURCE / "package.json").read_text(encoding="utf-8"))["version"]
    if have != pinned:
        print(f"node_modules holds Leaflet {have}, package-lock.json pins {pinned}: run `npm ci`.", file=sys.stderr)
        return 1
    shutil.rmtree(TARGET, ignore_errors=True)
    for rel in files(SOURCE):
        (TARGET / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SOURCE / rel, TARGET / rel)
    print(f"Copied Leaflet {pinned} ({len(files(SOURCE))} files) to {TARGET.relative_to(ROOT)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
