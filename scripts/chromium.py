"""Headless Chromium as the demo, the tests and the benchmarks drive it: one set of flags, local Leaflet.

Debian's ``chromium`` runs here as root with no screen and no network beyond the package
registries, so every caller launches it with :data:`ARGS` and answers Leaflet's CDN
addresses from the npm package (``npm ci``) with :func:`leaflet_file`. Standard library
only: ``scripts/screenshot_maps.py``, ``tests/browser.py`` and ``benchmarks/bench_maps.py``
import it by putting this folder on ``sys.path``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The npm Leaflet package's files.
LEAFLET = ROOT / "node_modules" / "leaflet" / "dist"
#: Chromium flags for a closed network, as root, with no screen.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_CDN = "https://cdn.jsdelivr.net/npm/leaflet@"


def leaflet_file(url: str) -> Path | None:
    """Return the local file for a Leaflet CDN address, or None for any other address.

    Examples
    --------
    >>> leaflet_file("https://cdn.jsdelivr.net/npm/leaflet@1.9.3/dist/leaflet.css").name
    'leaflet.css'
    >>> leaflet_file("https://tile.openstreetmap.org/1/0/0.png") is None
    True
    """
    if url.startswith(_CDN) and "/dist/" in url:
        return LEAFLET / url.split("/dist/", 1)[1]
    return None
