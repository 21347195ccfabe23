"""Leaflet for the maps: CDN addresses online, the bundled copy inlined offline.

The version is pinned once, in the repository's ``package.json`` (and ``package-lock.json``);
:data:`LEAFLET_VERSION` must match it (a test checks). Online maps load Leaflet from
jsDelivr. ``--offline`` maps carry it inline, read from the copy of the npm package that
ships inside esc_gis (``esc_gis/maps/leaflet/``, with Leaflet's licence; made by
``scripts/vendor_leaflet.py`` from ``node_modules``), so they need neither npm nor a clone.
The images its CSS refers to become data URIs, because a self-contained file has no folder
beside it to resolve ``images/layers.png`` against.
"""

from __future__ import annotations

__all__ = ["LEAFLET_CSS_URL", "LEAFLET_JS_URL", "LEAFLET_VERSION", "OfflineAssets", "leaflet_folder", "offline_assets"]

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path

from esc_gis.errors import MapAssetsError

#: The Leaflet release the maps use (folium 0.20's own, so folium's plugins agree with it).
LEAFLET_VERSION = "1.9.3"
LEAFLET_JS_URL = f"https://cdn.jsdelivr.net/npm/leaflet@{LEAFLET_VERSION}/dist/leaflet.js"
LEAFLET_CSS_URL = f"https://cdn.jsdelivr.net/npm/leaflet@{LEAFLET_VERSION}/dist/leaflet.css"
#: The bundled npm package (its package.json, LICENSE and the dist files a map inlines).
BUNDLED = Path(__file__).resolve().parent / "leaflet"


@dataclass(frozen=True)
class OfflineAssets:
    """Leaflet's JavaScript and CSS, ready to inline, and where they came from."""

    js: str
    css: str
    version: str
    source: Path


def leaflet_folder() -> Path:
    """Return the Leaflet package bundled with esc_gis.

    Raises
    ------
    MapAssetsError
        If it is missing (an installation that lost its package data).
    """
    if (BUNDLED / "dist" / "leaflet.js").is_file():
        return BUNDLED
    msg = (
        f"Offline maps inline Leaflet from {BUNDLED}, which is missing: this installation of esc_gis is "
        "incomplete. Fix: reinstall esc_gis (in a clone: run `npm ci` and `python scripts/vendor_leaflet.py`)."
    )
    raise MapAssetsError(msg)


def offline_assets() -> OfflineAssets:
    """Read Leaflet from its npm package, with the CSS's images as data URIs.

    Raises
    ------
    MapAssetsError
        If the package is missing, or is not the pinned :data:`LEAFLET_VERSION`.
    """
    folder = leaflet_folder()
    version = json.loads((folder / "package.json").read_text(encoding="utf-8"))["version"]
    if version != LEAFLET_VERSION:
        msg = (
            f"{folder} holds Leaflet {version}, but the maps are built for {LEAFLET_VERSION}. "
            "Fix: in the esc_gis repository, run `npm ci` and `python scripts/vendor_leaflet.py`."
        )
        raise MapAssetsError(msg)
    dist = folder / "dist"

    def data_uri(match: re.Match[str]) -> str:
        path = dist / match.group(1)
        return f"url(data:image/png;base64,{base64.b64encode(path.read_bytes()).decode('ascii')})"

    css = re.sub(r"url\((images/[\w.-]+\.png)\)", data_uri, (dist / "leaflet.css").read_text(encoding="utf-8"))
    js = (dist / "leaflet.js").read_text(encoding="utf-8")
    # A literal "</script>" inside inlined code would end the element early.
    return OfflineAssets(js.replace("</script", "<\\/script"), css, version, folder)
