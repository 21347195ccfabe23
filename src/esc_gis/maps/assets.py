"""Leaflet for the maps: CDN addresses online, the npm package inlined offline.

The version is pinned once, in the repository's ``package.json``; :data:`LEAFLET_VERSION`
must match it (a test checks). Online maps load Leaflet from jsDelivr. ``--offline`` maps
carry it inline, read from the npm package (``npm ci`` installs it into
``node_modules/``), with the images its CSS refers to turned into data URIs, because a
self-contained file has no folder beside it to resolve ``images/layers.png`` against.
"""

from __future__ import annotations

__all__ = ["LEAFLET_CSS_URL", "LEAFLET_JS_URL", "LEAFLET_VERSION", "OfflineAssets", "leaflet_folder", "offline_assets"]

import base64
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from esc_gis.errors import MapAssetsError

#: The Leaflet release the maps use (folium 0.20's own, so folium's plugins agree with it).
LEAFLET_VERSION = "1.9.3"
LEAFLET_JS_URL = f"https://cdn.jsdelivr.net/npm/leaflet@{LEAFLET_VERSION}/dist/leaflet.js"
LEAFLET_CSS_URL = f"https://cdn.jsdelivr.net/npm/leaflet@{LEAFLET_VERSION}/dist/leaflet.css"
#: Environment variable naming a ``node_modules`` folder that holds ``leaflet/``.
ENV_ASSETS = "ESC_GIS_ASSETS"


@dataclass(frozen=True)
class OfflineAssets:
    """Leaflet's JavaScript and CSS, ready to inline, and where they came from."""

    js: str
    css: str
    version: str
    source: Path


def leaflet_folder() -> Path:
    """Return the installed npm package ``leaflet/`` (``$ESC_GIS_ASSETS``, the repository, or the cwd).

    Raises
    ------
    MapAssetsError
        If no installed Leaflet package is found.
    """
    candidates = []
    if os.environ.get(ENV_ASSETS):
        candidates.append(Path(os.environ[ENV_ASSETS]))
    candidates += [Path(__file__).resolve().parents[3] / "node_modules", Path.cwd() / "node_modules"]
    for c in candidates:
        if (c / "leaflet" / "dist" / "leaflet.js").is_file():
            return c / "leaflet"
    msg = (
        "Offline maps inline Leaflet from its npm package, which is not installed. Fix: run `npm ci` in the "
        f"esc_gis repository (needs Node.js), or set {ENV_ASSETS} to a node_modules folder holding leaflet/."
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
            "Fix: run `npm ci` in the esc_gis repository."
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
