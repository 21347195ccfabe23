"""The web service as one WSGI application: the public page at ``/``, OGC API under ``/ogc``.

pygeoapi's Flask application serves the OGC API (it reads the configuration
:func:`esc_gis.serve.config.prepare_service` wrote, once, when first imported). A small Flask
application serves the public page and its files (Leaflet from the copy bundled with esc_gis, no
CDN). Around both, :class:`Guard` makes the endpoint safe to face the public:

- a request body larger than the limit is refused (413) without being passed on (waitress has read it,
  up to a bound, so that a client still uploading receives the answer: :func:`esc_gis.serve.server.reading_limit`);
- only GET, HEAD, POST and OPTIONS are answered;
- every error is OGC exception JSON (``{"code", "type", "description"}``), never a traceback or a path;
- every response carries security headers, and every HTML page a strict Content-Security-Policy:
  the public page's and pygeoapi's own pages (whose Bootstrap and Leaflet the service serves from
  its npm copies, through the frame of pygeoapi's pages it overrides, ``pygeoapi_templates/_base.html``);
- CORS is answered for the origins configured, and for none by default.
"""

from __future__ import annotations

__all__ = ["Guard", "make_app", "page_html", "query_problem", "tile_source"]

import io
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from typing import Any

from esc_gis._templates import render_string
from esc_gis.serve.cache import CollectionCache, gpkg_version, postgis_version
from esc_gis.serve.checks import body_problem, flat_bbox, query_problem, value_problem
from esc_gis.serve.config import ServiceFiles, ServiceSettings

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
LOG = logging.getLogger("esc_gis.serve")

#: Headers every response carries.
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}
#: The public page's policy: its own scripts and styles only, tiles from the base map's host.
PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: {tiles}; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'"
)
#: pygeoapi's own HTML pages under /ogc (``?f=html``): the public page's policy, plus the hashes
#: of the inline scripts pygeoapi's templates keep in pages the service does not override (the
#: page-size selector of the items list, pygeoapi/templates/collections/items/index.html, and of
#: the jobs list, jobs/index.html: the same code, indented differently), and of the one style
#: attribute of the items list ("overflow-x: scroll;" around its table; 'unsafe-hashes' lets a
#: hash match an attribute, and only that exact one). pygeoapi's other inline scripts and styles
#: are replaced by files (pygeoapi_templates/_base.html says how). tests/test_serve_ogc_pages.py
#: checks the hashes against the installed pygeoapi, and the pages in Chromium.
OGC_SCRIPT_HASHES = (
    "'sha256-FIJ9rnupcK2TdYjmOdnLHsN1ytu2lI1Xc744PS/8fKM='",
    "'sha256-3zg+KewLmQIfK0J6gFCdMI63PVTaFFYHcbKwGHV5bvY='",
)
OGC_STYLE_HASHES = ("'sha256-7RtOF5vM0kgQ7YDrQIsCZtl37DYA+TkHd4FSicZ8YM0='",)
OGC_PAGE_CSP = (
    "default-src 'self'; script-src 'self' {scripts}; style-src 'self' 'unsafe-hashes' {styles}; "
    "img-src 'self' data: {tiles}; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'none'; object-src 'none'"
)
#: JSON answers run nothing.
DATA_CSP = "default-src 'none'; frame-ancestors 'none'"
_ALLOWED_METHODS = ("GET", "HEAD", "POST", "OPTIONS")
#: Where :class:`Guard` keeps the path as requested, in the WSGI environment.
_PATH_KEY = "esc_gis.path"
#: A collection's items, or one of them, under the OGC API.
_ITEMS = re.compile(r"/ogc/collections/([^/]+)/items(?:/([^/]+))?/?")
#: A process's execution (its body is checked before pygeoapi parses it).
_EXECUTION = re.compile(r"/ogc/processes/[^/]+/execution/?")


def ogc_exception(status: int, code: str, description: str) -> tuple[str, list[tuple[str, str]], bytes]:
    """Return an OGC exception response: status line, headers and JSON body.

    The body is pygeoapi's own: ``code`` (OGC API - Features' exception) and ``type`` (required by
    OGC API - Processes' exception, which the published OpenAPI document gives every error of
    the processes and jobs paths), and ``description``.

    Examples
    --------
    >>> status, headers, body = ogc_exception(413, "PayloadTooLarge", "Too big.")
    >>> status, json.loads(body)
    ('413 Request Entity Too Large', {'code': 'PayloadTooLarge', 'type': 'PayloadTooLarge', 'description': 'Too big.'})
    """
    from http import HTTPStatus

    body = json.dumps({"code": code, "type": code, "description": description}).encode()
    line = f"{status} {HTTPStatus(status).phrase}"
    return line, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))], body


class Guard:
    """WSGI middleware: body limit, methods, CORS, security headers, and no traceback ever.

    Parameters
    ----------
    app : WSGI application
    body_bytes : int
        The largest request body accepted.
    cors_origins : tuple of str
        Origins allowed to call from a browser (``*`` for any); none by default.
    tiles_host : str
        The base map's tile host (:func:`tile_source`), allowed as an image source on the HTML pages.
    published : mapping of str to mapping of str to str, optional
        Per collection whose properties are known, each published property and its kind (the
        registry schema's: ``text``, ``real``, ``date``...; :func:`esc_gis.serve.checks.value_problem`);
        ``fid`` is the id's. Its property filters, ``sortby`` and ``filter`` are checked against
        them, and an id of another kind is not found.
    """

    def __init__(
        self,
        app: WSGIApp,
        *,
        body_bytes: int,
        cors_origins: tuple[str, ...] = (),
        tiles_host: str = "",
        published: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.app = app
        self.body_bytes = body_bytes
        self.published = dict(published or {})
        self.cors_origins = cors_origins
        self.page_csp = PAGE_CSP.format(tiles=tiles_host).replace("  ", " ")
        self.ogc_page_csp = OGC_PAGE_CSP.format(
            scripts=" ".join(OGC_SCRIPT_HASHES), styles=" ".join(OGC_STYLE_HASHES), tiles=tiles_host
        ).replace("  ", " ")

    def _cors(self, environ: dict[str, Any]) -> list[tuple[str, str]]:
        origin = environ.get("HTTP_ORIGIN")
        if not origin or not self.cors_origins:
            return []
        if "*" in self.cors_origins:
            return [("Access-Control-Allow-Origin", "*")]
        if origin in self.cors_origins:
            return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
        return []

    def _headers(self, environ: dict[str, Any], headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        names = {k.lower() for k, _ in headers}
        out = [h for h in headers if h[0].lower() not in ("server", "x-powered-by")]
        out += [(k, v) for k, v in SECURITY_HEADERS.items() if k.lower() not in names]
        if "content-security-policy" not in names:
            kind = next((v for k, v in headers if k.lower() == "content-type"), "")
            # The path as requested: the dispatcher moves "/ogc" into SCRIPT_NAME, a cached answer does not.
            path = environ.get(_PATH_KEY, environ.get("PATH_INFO", ""))
            if not kind.startswith("text/html"):
                out.append(("Content-Security-Policy", DATA_CSP))
            elif path == "/ogc" or path.startswith("/ogc/"):  # pygeoapi's own pages (?f=html)
                out.append(("Content-Security-Policy", self.ogc_page_csp))
            else:
                out.append(("Content-Security-Policy", self.page_csp))
        return out + self._cors(environ)

    def _refuse(
        self, environ: dict[str, Any], start_response: Callable[..., Any], status: int, code: str, text: str
    ) -> list[bytes]:
        line, headers, body = ogc_exception(status, code, text)
        if status == 405:
            headers.append(("Allow", ", ".join(_ALLOWED_METHODS)))
        start_response(line, self._headers(environ, headers))
        return [body]

    def _request_problem(self, environ: dict[str, Any], method: str, length: int) -> tuple[int, str, str] | None:
        """Return (status, code, text) refusing a request no provider or parser should see; None to pass it on.

        The query string (:func:`esc_gis.serve.checks.query_problem`, typed by the collection's
        published properties), an item's id by its kind, and a process's body
        (:func:`esc_gis.serve.checks.body_problem`), read here and handed on again.
        """
        path = environ.get("PATH_INFO", "")
        items = _ITEMS.fullmatch(path)
        kinds = self.published.get(items.group(1)) if items else None
        if method in ("GET", "HEAD") and environ.get("QUERY_STRING"):
            problem = query_problem(environ["QUERY_STRING"], kinds)
            if problem is not None:
                return 400, "InvalidParameterValue", problem
            environ["QUERY_STRING"] = flat_bbox(environ["QUERY_STRING"])  # the collections have no heights
        # An id of another kind names no feature (the database would refuse to compare it: a 500).
        if items and items.group(2) and kinds and "fid" in kinds:
            if value_problem("id", kinds["fid"], items.group(2)) is not None:
                return 404, "NotFound", "No such feature."
        if method == "POST" and _EXECUTION.fullmatch(path):
            stream = environ["wsgi.input"]
            body = stream.read(length) if length else stream.read(self.body_bytes + 1)
            if len(body) > self.body_bytes:
                return 413, "PayloadTooLarge", f"The request body is over {self.body_bytes:,} bytes, the most taken."
            problem = body_problem(body)
            if problem is not None:
                return 400, "InvalidParameterValue", problem
            environ["wsgi.input"] = io.BytesIO(body)  # read once here: pygeoapi reads it again
            environ["CONTENT_LENGTH"] = str(len(body))
        return None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """Answer one request: refuse what the service never takes, else pass it on and guard the answer."""
        environ[_PATH_KEY] = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET").upper()
        if method not in _ALLOWED_METHODS:
            return self._refuse(environ, start_response, 405, "MethodNotAllowed", f"{method} is not answered here.")
        if method == "OPTIONS" and environ.get("HTTP_ACCESS_CONTROL_REQUEST_METHOD"):
            headers = [("Content-Length", "0")]
            if self._cors(environ):
                headers += [
                    ("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS"),
                    ("Access-Control-Allow-Headers", "Content-Type, Accept, Prefer"),
                    ("Access-Control-Max-Age", "600"),
                ]
            start_response("204 No Content", self._headers(environ, headers))
            return [b""]
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return self._refuse(
                environ, start_response, 400, "InvalidParameterValue", "Content-Length is not a number."
            )
        if length > self.body_bytes:
            text = f"The request body is {length:,} bytes; this service takes at most {self.body_bytes:,}."
            return self._refuse(environ, start_response, 413, "PayloadTooLarge", text)

        refusal = self._request_problem(environ, method, length)
        if refusal is not None:
            return self._refuse(environ, start_response, *refusal)

        def guarded_start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            return start_response(status, self._headers(environ, headers), exc_info)

        try:
            return self.app(environ, guarded_start)
        except Exception:
            LOG.exception("unhandled error on %s %s", method, environ.get("PATH_INFO"))
            text = "The server could not answer this request. Please try again; if it persists, tell the office."
            line, headers, body = ogc_exception(500, "NoApplicableCode", text)
            start_response(line, self._headers(environ, headers))
            return [body]


def tile_source(basemap: str | None) -> str:
    """Return the Content-Security-Policy source of a tile URL template's host: its scheme and host.

    Leaflet's ``{s}`` (the server's letter) becomes the policy's ``*`` for that one label.

    Examples
    --------
    >>> tile_source("https://tile.openstreetmap.org/{z}/{x}/{y}.png")
    'https://tile.openstreetmap.org'
    >>> tile_source("https://{s}.tile.example.org/{z}/{x}/{y}.png")
    'https://*.tile.example.org'
    >>> tile_source("http://127.0.0.1:8088/{z}/{x}/{y}.png"), tile_source(None)
    ('http://127.0.0.1:8088', '')
    """
    from urllib.parse import urlsplit

    if not basemap:
        return ""
    parts = urlsplit(basemap)
    host = parts.netloc.rsplit("@", 1)[-1].replace("{s}.", "*.")
    return f"{parts.scheme or 'https'}://{host}" if host else ""


def _page_folder() -> Any:
    return resources.files("esc_gis.serve") / "page"


def _vendor_folder() -> Any:
    return resources.files("esc_gis.serve") / "vendor"


def page_html(settings: dict[str, Any]) -> str:
    r"""Return the public page, with the service's settings in a JSON island (no inline script runs).

    Raises
    ------
    jinja2.TemplateSyntaxError
        If the installed ``index.html`` is not a valid template (a broken install).

    Examples
    --------
    >>> page = page_html({"village": "Village of Winneconne", "basemap": "https://t.example/{z}?a=1&b=2</script>"})
    >>> "Do I need a permit?" in page, "a=1\\u0026b=2\\u003c/script\\u003e" in page
    (True, True)
    """
    template = (_page_folder() / "index.html").read_text(encoding="utf-8")
    # The page is a template of esc_gis._templates (autoescaped), kept beside its scripts. A
    # <script> element's text is not HTML-decoded, so the settings go in as JSON (tojson): no
    # "</script>" or "<!--" can end the island, and "&" arrives as "&" (JSON.parse reads \u0026 back).
    return render_string(template, settings=settings, village=settings.get("village", ""))


def _json_errors(flask_app: Any) -> None:
    """Answer every HTTP error of ``flask_app`` as OGC exception JSON."""
    from werkzeug.exceptions import HTTPException

    def handle(err: Exception) -> Any:
        from flask import Response

        if isinstance(err, HTTPException):
            code = (err.name or "Error").replace(" ", "")
            line, headers, body = ogc_exception(err.code or 500, code, err.description or err.name)
        else:
            LOG.exception("unhandled error")
            text = "The server could not answer this request. Please try again; if it persists, tell the office."
            line, headers, body = ogc_exception(500, "NoApplicableCode", text)
        return Response(body, status=int(line.split()[0]), headers=headers)

    flask_app.register_error_handler(HTTPException, handle)
    flask_app.register_error_handler(Exception, handle)


def _page_app(page_settings: dict[str, Any]) -> Any:
    from flask import Flask, Response, abort, send_from_directory

    from esc_gis.maps.assets import leaflet_folder

    app = Flask("esc_gis.serve.page", static_folder=None)
    text = page_html(page_settings)
    folder = str(_page_folder())
    leaflet = str(leaflet_folder() / "dist")
    vendor = str(_vendor_folder())

    @app.get("/")
    def index() -> Any:
        return Response(text, mimetype="text/html")

    @app.get("/static/esc/<name>")
    def own(name: str) -> Any:
        if name not in ("page.js", "page.css", "dom.js", "draw.js", "ask.js", "answer.js", "ogc.js", "ogc.css"):
            abort(404)
        return send_from_directory(folder, name, max_age=300)

    # Bootstrap's style sheet and Leaflet's marker clustering, for pygeoapi's own pages (scripts/vendor_leaflet.py).
    @app.get("/static/vendor/<path:name>")
    def vendor_files(name: str) -> Any:
        return send_from_directory(vendor, name, max_age=86400)

    @app.get("/static/leaflet/<path:name>")
    def leaflet_files(name: str) -> Any:
        return send_from_directory(leaflet, name, max_age=86400)

    @app.get("/health")
    def health() -> Any:
        return {"status": "ok"}

    _json_errors(app)
    return app


def _quiet_pygeoapi() -> None:
    """Keep pygeoapi's log for ``-v``: normal use logs no traceback.

    pygeoapi logs every client error (an unknown id, a bad bbox, a body that is not JSON) at ERROR
    with its traceback, and a warning per untranslated word of every page: a log full of them
    hides a real fault. The client gets its 4xx all the same; a fault of the service itself is
    logged, with its traceback, by :class:`Guard` under ``esc_gis.serve``. ``esc-gis -v serve``
    shows pygeoapi's warnings and errors, ``-vv`` everything.
    """
    root = logging.getLogger().getEffectiveLevel()
    level = logging.CRITICAL if root > logging.INFO else logging.WARNING if root > logging.DEBUG else logging.DEBUG
    logging.getLogger("pygeoapi").setLevel(level)


def _registry_version(settings: ServiceSettings, files: ServiceFiles) -> Callable[[], str]:
    """Return how the cache asks the registry's version (:mod:`esc_gis.serve.cache`)."""
    from esc_gis.registry.store.backend import is_url
    from esc_gis.registry.store.schema import PUBLISHED_VIEW

    if is_url(settings.registry):
        return postgis_version(settings.registry, files.registry_schema or "public", PUBLISHED_VIEW)
    return gpkg_version(settings.registry)


def make_app(settings: ServiceSettings, files: ServiceFiles, *, basemap: str | None = None) -> Guard:
    """Build the service's WSGI application from what :func:`prepare_service` wrote.

    pygeoapi reads its configuration when first imported, so one process serves one configuration.

    Parameters
    ----------
    settings : ServiceSettings
    files : ServiceFiles
    basemap : str, optional
        A tile URL template for the page's base map (``https://tile.openstreetmap.org/{z}/{x}/{y}.png``);
        None for none.

    Returns
    -------
    Guard
        The WSGI application.
    """
    from werkzeug.middleware.dispatcher import DispatcherMiddleware

    from esc_gis.registry.store.schema import published_kinds

    os.environ["PYGEOAPI_CONFIG"] = str(files.config)
    os.environ["PYGEOAPI_OPENAPI"] = str(files.openapi)
    os.environ.update(files.environment)
    import pygeoapi.flask_app as pygeoapi_app

    _quiet_pygeoapi()
    api = pygeoapi_app.APP
    api.config["MAX_CONTENT_LENGTH"] = settings.limits.body_bytes
    _json_errors(api)
    page = dict(files.page_settings, basemap=basemap or "")
    app = CollectionCache(DispatcherMiddleware(_page_app(page), {"/ogc": api}), _registry_version(settings, files))
    return Guard(
        app,
        body_bytes=settings.limits.body_bytes,
        cors_origins=settings.cors_origins,
        tiles_host=tile_source(basemap),
        published={"permits": published_kinds()},
    )
