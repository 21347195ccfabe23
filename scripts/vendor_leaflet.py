"""Copy the pinned browser assets from node_modules into the package, for use without npm.

    npm ci && python scripts/vendor_leaflet.py

Leaflet (src/esc_gis/maps/leaflet/: package.json, LICENSE, dist/leaflet.{js,css},
dist/images/*.png) for --offline maps, the service's public page and pygeoapi's own pages; and,
for pygeoapi's pages only (src/esc_gis/serve/vendor/), the Bootstrap style sheet and Leaflet's
marker clustering that pygeoapi's templates would load from CDNs, which the service's
Content-Security-Policy refuses. The copies are committed, so every way of installing esc_gis
(a wheel, an sdist, an editable clone, `pip install git+...`) carries them without Node.js. Run
this after changing a version in package.json (and LEAFLET_VERSION in src/esc_gis/maps/assets.py);
tests/test_wheel.py checks that each copy is byte for byte the npm package package-lock.json pins.
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
#: The service's other assets: npm package -> (folder in the package, files copied). Each with its licence.
SERVICE = {
    "bootstrap": ("src/esc_gis/serve/vendor/bootstrap", ("package.json", "LICENSE", "dist/css/bootstrap.min.css")),
    "leaflet.markercluster": (
        "src/esc_gis/serve/vendor/leaflet.markercluster",
        (
            "package.json",
            "MIT-LICENCE.txt",
            "dist/leaflet.markercluster.js",
            "dist/MarkerCluster.css",
            "dist/MarkerCluster.Default.css",
        ),
    ),
}


def files(folder: Path) -> list[str]:
    """The vendored files of Leaflet, relative to the package folder."""
    return [*FILES, *(f"dist/images/{p.name}" for p in sorted((folder / "dist" / "images").glob("*.png")))]


def copies() -> list[tuple[str, Path, Path, list[str]]]:
    """Every vendored package: (npm name, node_modules folder, folder in esc_gis, files)."""
    out = [("leaflet", SOURCE, TARGET, files(SOURCE if SOURCE.is_dir() else TARGET))]
    for name, (target, rels) in SERVICE.items():
        out.append((name, ROOT / "node_modules" / name, ROOT / target, list(rels)))
    return out


def main() -> int:
    locked = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    for name, source, _, _ in copies():
        pinned = locked[f"node_modules/{name}"]["version"]
        if not (source / "package.json").is_file():
            print(f"node_modules/{name} is missing: run `npm ci` first.", file=sys.stderr)
            return 1
        have = json.loads((source / "package.json").read_text(encoding="utf-8"))["version"]
        if have != pinned:
            print(f"node_modules holds {name} {have}, package-lock.json pins {pinned}: run `npm ci`.", file=sys.stderr)
            return 1
    for name, source, target, rels in copies():
        shutil.rmtree(target, ignore_errors=True)
        for rel in rels:
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / rel, target / rel)
        version = locked[f"node_modules/{name}"]["version"]
        print(f"Copied {name} {version} ({len(rels)} files) to {target.relative_to(ROOT)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
