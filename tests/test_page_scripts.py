"""The JavaScript esc_gis ships, as files: the service's page modules (serve/page/*.js) and the maps'
compact site layer (maps/compact.js, issue 37).

Each parses in Node (the page's modules as ES modules, compact.js as the classic script it is
inlined as), and none writes markup: text reaches the DOM as ``textContent``, never through
``innerHTML``, ``insertAdjacentHTML``, ``document.write`` or code built from strings. In the
browser the page is tested by tests/test_serve_page.py and the maps by tests/test_maps.py; here
compact.js is also run on its own in Chromium, with Leaflet and nothing of folium.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from esc_gis._templates import render
from esc_gis.maps.assets import LEAFLET_CSS_URL, LEAFLET_JS_URL
from esc_gis.maps.compact import encode_polygons, layer_script

from .browser import chromium_page, real_errors
from .conftest import require_tool

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "esc_gis"
PAGE_MODULES = sorted((PACKAGE / "serve" / "page").glob("*.js"))
COMPACT = PACKAGE / "maps" / "compact.js"
SCRIPTS = [*PAGE_MODULES, COMPACT]
#: Ways of turning a string into markup or code.
SINKS = re.compile(
    r"\.(?:inner|outer)HTML\s*\+?=(?!=)|insertAdjacentHTML|document\.write|\beval\s*\(|new\s+Function\b|"
    r"setTimeout\s*\(\s*[\"'`]|\.html\s*\("
)
XSS = "<img src=x onerror=alert(1)>"


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_each_script_parses_in_node(path: Path) -> None:
    node = require_tool("node", "nodejs")
    if path == COMPACT:  # inlined in a map's <head>: a classic script
        r = subprocess.run([node, "--check", str(path)], capture_output=True, text=True, check=False)
    else:  # loaded by the page as <script type="module">
        r = subprocess.run(
            [node, "--check", "--input-type=module"],
            input=path.read_text(encoding="utf-8"),
            capture_output=True,
            text=True,
            check=False,
        )
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_no_script_writes_markup(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert [m.group(0) for m in SINKS.finditer(text)] == []


def test_compact_js_can_be_inlined_and_is_what_the_maps_load() -> None:
    text = COMPACT.read_text(encoding="utf-8")
    # Inlined in a <script> element: nothing in it may end the element or open a comment there.
    assert "</script" not in text.lower() and "<!--" not in text
    assert layer_script() == text  # read at run time from the package, as it is
    assert text.count("function escCompactPolygons(d, style, labelZoom, labelFew)") == 1


def test_compact_js_alone_in_chromium_draws_labels_and_shows_text_in_its_popup(tmp_path: Path) -> None:
    import shapely

    geoms = np.array([shapely.box(-88.75, 44.10, -88.74, 44.11), shapely.box(-88.73, 44.10, -88.72, 44.11)])
    data = {**encode_polygons(geoms), "id": [XSS, "B"], "lines": [["A & B", XSS], ["C"]]}
    data["lp"] = np.round(shapely.get_coordinates(shapely.point_on_surface(geoms)) * 1e6).astype(int).ravel().tolist()
    style = {"color": "#333333", "weight": 1, "fillColor": "#d7301f", "fillOpacity": 0.6}
    page_file = tmp_path / "compact.html"
    page_file.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<link rel='stylesheet' href='{LEAFLET_CSS_URL}'><script src='{LEAFLET_JS_URL}'></script>"
        f"<script>{layer_script()}</script></head>"
        "<body><div id='map' style='width:800px;height:600px'></div>"
        + render("maps/compact_data.html.j2", name="sites_data", data=data)
        + "<script>const map = L.map('map').setView([44.105, -88.735], 14);"
        "const layer = escCompactPolygons(JSON.parse(document.getElementById('sites_data').textContent), "
        f"{json.dumps(style)}, 13, 30).addTo(map); window.layer = layer;</script></body></html>",
        encoding="utf-8",
    )
    with chromium_page() as (page, errors, _):
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate("window.layer.escSites") == 2
        assert page.evaluate("window.layer.escLabels") == 2  # zoom 14 >= label zoom 13: both ids drawn
        x, y = page.evaluate(
            """() => { const p = map.latLngToContainerPoint([44.105, -88.745]);
                       const r = map.getContainer().getBoundingClientRect(); return [r.left + p.x, r.top + p.y]; }"""
        )
        page.mouse.click(x, y)
        page.wait_for_selector(".leaflet-popup-content")
        text = page.inner_text(".leaflet-popup-content")
        assert text.splitlines() == [XSS, "A & B", XSS]  # id, then each line: text, never markup
        assert page.locator(".leaflet-popup-content img").count() == 0
        assert real_errors(errors) == []
