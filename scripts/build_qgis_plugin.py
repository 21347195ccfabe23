"""Zip the QGIS plugin (qgis/esc_gis_processing) as QGIS's "Install from ZIP" expects it.

The zip holds one top folder named as the plugin, with metadata.txt and __init__.py in it;
caches are left out. Usage: ``python scripts/build_qgis_plugin.py [OUTPUT.zip]``.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "qgis" / "esc_gis_processing"


def build(output: Path) -> Path:
    """Write the plugin zip to ``output`` (replacing it) and return its path.

    Raises
    ------
    FileNotFoundError
        When the plugin folder or its metadata.txt is missing.
    """
    if not (PLUGIN / "metadata.txt").is_file():
        raise FileNotFoundError(f"{PLUGIN / 'metadata.txt'} is missing; run this from an esc_gis checkout.")
    output.parent.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in PLUGIN.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as z:
        for p in files:
            z.write(p, Path(PLUGIN.name) / p.relative_to(PLUGIN))
    return output


if __name__ == "__main__":
    out = build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist" / "esc_gis_processing.zip")
    print(f"Wrote {out}")
