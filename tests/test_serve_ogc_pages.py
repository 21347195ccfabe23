"""pygeoapi's own HTML pages (``/ogc/...?f=html``) in real headless Chromium, under the service's policy.

pygeoapi's templates load Bootstrap and Leaflet from CDNs and draw their maps with inline
scripts; the service's Content-Security-Policy refuses both, so the pages were unstyled and
drew no map (issue 47). The service overrides the frame of every page
(esc_gis/serve/pygeoapi_templates/_base.html) and serves those files from its npm copies. Here a
real ``esc-gis serve`` on each back end, with a base map from a tile server stub on loopback,
serves the pages; Chromium opens each and must report no refusal of the policy (``securitypolicyviolation`` events and console
errors), no request leaving the machine, Bootstrap's styles applied, and, on the pages with a
map, its tiles and features drawn.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pygeoapi
import pytest
from playwright import sync_api

from esc_gis.serve.app import OGC_SCRIPT_HASHES, OGC_STYLE_HASHES, Guard, tile_source

from .browser import chromium_browser, require_leaflet
from .service import fill_registry, get, pg_schema, public_login, served

TEMPLATES = Path(pygeoapi.__file__).parent / "templates"
#: Records every policy refusal before any of the page's own scripts runs.
WATCH = """
window.__refused = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__refused.push(`${e.violatedDirective} ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`));
"""


def _png() -> bytes:
    """A 1 x 1 grey PNG: the stub's every tile."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b"")
    )


class TileStub:
    """A tile server on loopback that answers every tile and counts what it was asked."""

    def __init__(self) -> None:
        requested: list[str] = []
        png = _png()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requested.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(png)))
                self.end_headers()
                self.wfile.write(png)

            def log_message(self, *args: object) -> None:
                pass

        self.requested = requested
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/{{z}}/{{x}}/{{y}}.png"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def tiles() -> Iterator[TileStub]:
    stub = TileStub()
    yield stub
    stub.close()


@pytest.fixture(scope="module", params=["gpkg", "postgis"])
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tiles: TileStub) -> Iterator[str]:
    """The service on each back end, with the stub's tiles as its base map."""
    require_leaflet()
    if request.param == "gpkg":
        target = str(tmp_path_factory.mktemp("ogc-pages") / "r.gpkg")
        fill_registry(target)
        with served(target, "--basemap", tiles.url) as url:
            yield url
        return
    target = pg_schema(request.getfixturevalue("pg_url"))
    fill_registry(target)
    with public_login(target) as login, served(login, "--basemap", tiles.url) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium_browser() as b:
        yield b


class Opened:
    """One of pygeoapi's pages in a fresh context: the page, its policy's refusals, its errors, what left."""

    def __init__(self, browser: sync_api.Browser, url: str) -> None:
        self.errors: list[str] = []
        self.left: list[str] = []
        self.context = browser.new_context(viewport={"width": 1100, "height": 760})
        self.context.route("**/*", self._route)
        self.context.add_init_script(WATCH)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.goto(url)
        self.page.wait_for_load_state("networkidle")

    def _route(self, route: sync_api.Route) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:  # no CDN, no font, no tile from elsewhere
            self.left.append(route.request.url)
            route.abort()

    @property
    def refused(self) -> list[str]:
        return self.page.evaluate("window.__refused")


def _first_permit(base: str) -> str:
    status, _, body = get(f"{base}/ogc/collections/permits/items?f=json&limit=1")
    assert status == 200
    return str(json.loads(body)["features"][0]["id"])


#: The pages, and how many vector shapes each map draws (None: the page has no map).
#: tests/service.py serves five permits; a collection's map draws its extent as one box.
PAGES = {
    "landing": ("/ogc", None),
    "collections": ("/ogc/collections", None),
    "collection": ("/ogc/collections/permits", 1),
    "items": ("/ogc/collections/permits/items", 5),
    "item": ("/ogc/collections/permits/items/{id}", 1),
    "queryables": ("/ogc/collections/permits/queryables", None),
    "schema": ("/ogc/collections/permits/schema", None),
    "tilematrixsets": ("/ogc/TileMatrixSets", None),  # linked from nowhere here (the service has no tiles)
    "processes": ("/ogc/processes", None),
    "process": ("/ogc/processes/screen", None),
    "jobs": ("/ogc/jobs", None),
    "conformance": ("/ogc/conformance", None),
    "openapi": ("/ogc/openapi", None),
    "openapi-redoc": ("/ogc/openapi?ui=redoc", None),
}


#: pygeoapi 0.21's tiles.py renders the tile matrix sets' pages with the whole configuration as
#: their template settings (``render_j2_template(api.tpl_config, api.tpl_config, ...)``), so
#: ``server.templates`` is not read for them: they keep pygeoapi's frame, and Bootstrap from unpkg.com.
PYGEOAPI_IGNORES_OUR_TEMPLATES = pytest.mark.xfail(
    reason="pygeoapi 0.21 ignores server.templates for the TileMatrixSets pages (api/tiles.py)", strict=True
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=PYGEOAPI_IGNORES_OUR_TEMPLATES) if n == "tilematrixsets" else n for n in PAGES],
)
def test_pygeoapi_page_runs_under_the_policy_styled_and_mapped(
    browser: sync_api.Browser, base: str, tiles: TileStub, name: str
) -> None:
    path, shapes = PAGES[name]
    path = path.format(id=_first_permit(base))
    url = f"{base}{path}{'&' if '?' in path else '?'}f=html"
    status, headers, _ = get(url)
    assert status == 200
    policy = headers["Content-Security-Policy"]
    assert "script-src 'self' 'sha256-" in policy and "'unsafe-inline'" not in policy
    assert "img-src 'self' data: http://127.0.0.1:" in policy  # the base map's host, and no other
    before = len(tiles.requested)
    opened = Opened(browser, url)
    try:
        page = opened.page
        if shapes is not None:
            page.wait_for_selector(".leaflet-tile-loaded", timeout=30_000)
        assert opened.refused == []
        assert opened.errors == []
        assert opened.left == []
        # Bootstrap's style sheet applied: its .d-flex makes the header a flex box (pygeoapi's
        # default.css alone leaves it inline-block), and its .container is 960 px wide at this width.
        assert page.eval_on_selector("header", "h => getComputedStyle(h).display") == "flex"
        assert page.eval_on_selector("main .container", "c => getComputedStyle(c).maxWidth") == "960px"
        assert page.eval_on_selector("img.esc-logo", "i => getComputedStyle(i).height") == "40px"
        if name.startswith("openapi"):  # the service's page in place of Swagger UI and ReDoc links the document
            href = page.locator("#openapi a").get_attribute("href")
            assert href.endswith("/ogc/openapi?f=json") and get(href)[0] == 200
        if shapes is None:
            assert page.locator(".leaflet-container").count() == 0
            return
        # The map drew: the stub's tiles loaded, the shapes are on it, and the credit is the page's.
        assert len(tiles.requested) > before
        assert page.locator("img.leaflet-tile-loaded").count() > 0
        assert page.locator("path.leaflet-interactive").count() == shapes
        assert "127.0.0.1" in page.locator(".leaflet-control-attribution").inner_text()
        if name == "items":
            # pygeoapi's page-size selector, the one inline script left (allowed by its hash), ran.
            assert page.locator("#limits").input_value() == "100"
    finally:
        opened.context.close()


@pytest.mark.slow
def test_an_items_popup_links_its_item(browser: sync_api.Browser, base: str) -> None:
    opened = Opened(browser, f"{base}/ogc/collections/permits/items?f=html")
    try:
        page = opened.page
        page.wait_for_selector("path.leaflet-interactive", timeout=30_000)
        page.locator("path.leaflet-interactive").first.click(force=True)
        link = page.locator(".leaflet-popup-content a")
        assert re.search(r"/ogc/collections/permits/items/\d+\?f=html$", link.get_attribute("href"))
        assert opened.refused == [] and opened.errors == []
    finally:
        opened.context.close()


def _hash(text: str) -> str:
    return f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'"


def test_the_policy_allows_exactly_the_inline_code_pygeoapi_keeps() -> None:
    """The hashes in the policy are those of the installed pygeoapi's inline code that the service does not replace.

    A new pygeoapi that changes them fails here (and in Chromium above): look at what changed first.
    """
    kept = {}
    for rel in ("collections/items/index.html", "jobs/index.html"):
        # The extrafoot block (the items page's map) is not rendered: _base.html draws the map from a file.
        text = (TEMPLATES / rel).read_text(encoding="utf-8").split("{% block extrafoot %}")[0]
        (script,) = re.findall(r"<script>(.*?)</script>", text, re.S)
        assert "{{" not in script and "{%" not in script  # no template data: the same text on every page
        kept[rel] = _hash(script)
    assert sorted(OGC_SCRIPT_HASHES) == sorted(kept.values())
    styles = re.findall(r'style="([^"]*)"', (TEMPLATES / "collections/items/index.html").read_text(encoding="utf-8"))
    assert [_hash(s) for s in styles] == list(OGC_STYLE_HASHES)


@pytest.mark.parametrize("rel", ["_base.html", "openapi/swagger.html", "openapi/redoc.html"])
def test_the_overridden_templates_load_nothing_from_elsewhere(rel: str) -> None:
    """The templates the service overrides name no CDN and have no inline script or style left."""
    ours = (Path(__file__).resolve().parents[1] / "src/esc_gis/serve/pygeoapi_templates" / rel).read_text()
    ours = re.sub(r"{#.*?#}", "", ours, flags=re.S)  # their comments say what changed
    assert not re.search(r'(src|href)="https?://(?!pygeoapi\.io)', ours)
    assert "<script>" not in ours and "style=" not in ours and "<style" not in ours


@pytest.mark.parametrize(
    ("path", "kind", "policy"),
    [
        ("/", "text/html", "page"),
        ("/ogc", "text/html", "pygeoapi"),
        ("/ogc/collections/permits/items", "text/html; charset=utf-8", "pygeoapi"),
        ("/ogcx", "text/html", "page"),
        ("/ogc/collections/permits/items", "application/geo+json", "data"),
        ("/static/esc/ogc.js", "text/javascript", "data"),
    ],
)
def test_each_answer_gets_its_policy_by_the_path_requested(path: str, kind: str, policy: str) -> None:
    """The policy follows the path as requested, whether or not the answer passed the dispatcher
    (a cached collection's answer does not: its SCRIPT_NAME never becomes /ogc)."""
    from werkzeug.test import Client
    from werkzeug.wrappers import Response

    def app(environ, start_response):  # answers as the cache does: the environment untouched
        return Response("<p>x</p>", content_type=kind)(environ, start_response)

    guard = Guard(app, body_bytes=100, tiles_host=tile_source("https://{s}.tiles.example.org/{z}/{x}/{y}.png"))
    got = Client(guard).get(path).headers["Content-Security-Policy"]
    expected = {
        "page": guard.page_csp,
        "pygeoapi": guard.ogc_page_csp,
        "data": "default-src 'none'; frame-ancestors 'none'",
    }
    assert got == expected[policy]
    if policy != "data":
        assert "img-src 'self' data: https://*.tiles.example.org;" in got and "'unsafe-inline'" not in got
