"""Serve the collections at the cost of a file: answers cached per registry version, with ETag and 304.

The permits change a few times a day; pygeoapi read the registry's view and reprojected every
feature in Python on every request (issue 35: 13x a static file from the same process). This
WSGI middleware keeps each GET answer under ``/ogc/collections`` keyed by the request (path,
query, the ``Accept`` and ``Accept-Language`` it varies on) and the registry's *version*, asked
on every request so the map stays live: a change shows on the next request.

The version is cheap to ask and changes whenever what is served can:

- a GeoPackage: the modification times of the file and its write-ahead log, and today's date
  (the public view's ``plan_date`` is computed on the reading machine's "today");
- PostGIS: an MD5 of the published view's rows (``md5(string_agg(...))``), one query that reads
  what the login may read, so a change by any office, a migration or midnight all count.

Each answer gets a strong ``ETag`` (a hash of its bytes), ``Last-Modified`` (when this version
was first served) and ``Cache-Control: no-cache`` (a client may keep it but must ask again); a
request whose ``If-None-Match`` names the current ETag gets ``304 Not Modified`` and no body.
Only 200 answers are kept, within a bound on entries and bytes (least recently used out first).
"""

from __future__ import annotations

__all__ = ["CollectionCache", "coalesced", "gpkg_version", "postgis_version"]

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any

LOG = logging.getLogger("esc_gis.serve")
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
#: What is cached: the collections' pages and items (not processes, jobs or the page).
PREFIX = "/ogc/collections"
#: The request headers an answer varies on (pygeoapi picks the format and language from them).
VARY = ("HTTP_ACCEPT", "HTTP_ACCEPT_LANGUAGE")


def gpkg_version(path: str | Path) -> Callable[[], str]:
    """Return a function giving a GeoPackage registry's version: its and its WAL's mtimes, and today."""
    p = Path(path)
    wal = p.with_name(p.name + "-wal")

    def version() -> str:
        stamps = [str(f.stat().st_mtime_ns) if f.exists() else "0" for f in (p, wal)]
        return ":".join([*stamps, date.today().isoformat()])

    return version


def postgis_version(url: str, schema: str, view: str) -> Callable[[], str]:
    """Return a function giving a PostGIS registry's version: an MD5 of its published view's rows.

    One connection, reopened if it breaks; a query that fails gives no version (nothing is
    cached for that request, and pygeoapi answers it as before).

    Requests arriving together share one query (one at a time, on the one connection), but
    never one that began before they arrived: a request waits for the next query to start, so a
    change committed before it arrived is in its answer (the map stays live) while 20 clients
    cost one query per round trip, not 20 in a row behind a lock (7x a static file, issue 47).
    """
    import psycopg
    from psycopg import sql

    query = sql.SQL("SELECT md5(coalesce(string_agg(v::text, '|' ORDER BY v.fid), '')) FROM {} v").format(
        sql.Identifier(schema, view)
    )
    state: dict[str, Any] = {"conn": None}

    def ask() -> str:
        for _ in range(2):  # one retry on a fresh connection: the server may have dropped ours
            try:
                if state["conn"] is None or state["conn"].closed:
                    state["conn"] = psycopg.connect(url, autocommit=True, connect_timeout=10)
                row = state["conn"].execute(query).fetchone()
                return str(row[0]) if row else ""
            except psycopg.Error:
                if state["conn"] is not None:
                    state["conn"].close()
                state["conn"] = None
        return ""

    return coalesced(ask)


def coalesced(ask: Callable[[], str]) -> Callable[[], str]:
    """Return ``ask`` shared by the requests arriving together: one call at a time, none begun before a request came.

    A caller waits for the first call of ``ask`` to *start* after it arrived, and takes that
    call's answer (or a later one's): what was true when it arrived is in its answer, and
    callers arriving during one call share the next.
    """
    turn = threading.Condition()
    state: dict[str, Any] = {"started": 0, "done": 0, "running": False, "value": ""}

    def version() -> str:
        with turn:
            need = state["started"] + 1  # the first call to start after this request arrived
            while state["done"] < need:
                if state["running"]:
                    turn.wait()
                    continue
                state["running"] = True
                state["started"] += 1
                mine = state["started"]
                value = ""
                turn.release()
                try:
                    value = ask()
                finally:
                    turn.acquire()
                    state["running"], state["done"], state["value"] = False, mine, value
                    turn.notify_all()
            return str(state["value"])

    return version


@dataclass(frozen=True)
class _Entry:
    status: str
    headers: list[tuple[str, str]]
    body: bytes
    etag: str
    modified: str


def _strip(headers: list[tuple[str, str]], *names: str) -> list[tuple[str, str]]:
    drop = {n.lower() for n in names}
    return [(k, v) for k, v in headers if k.lower() not in drop]


class CollectionCache:
    """WSGI middleware answering repeated collection requests from memory while the registry is unchanged.

    Parameters
    ----------
    app : WSGI application
        pygeoapi (with the page), behind this.
    version : callable
        Returns the registry's current version; "" when it cannot tell (nothing is cached then).
    max_entries, max_bytes : int
        Bounds on what is kept.
    """

    def __init__(
        self, app: WSGIApp, version: Callable[[], str], *, max_entries: int = 512, max_bytes: int = 64 * 2**20
    ) -> None:
        self.app = app
        self.version = version
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, ...], _Entry] = OrderedDict()
        self._bytes = 0
        self._first_seen: dict[str, str] = {}
        self.hits = 0
        self.misses = 0

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """Answer from the cache, or pass on and keep a 200 answer."""
        method = environ.get("REQUEST_METHOD", "GET").upper()
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        if method not in ("GET", "HEAD") or not path.startswith(PREFIX):
            return self.app(environ, start_response)
        version = self.version()
        if not version:
            return self.app(environ, start_response)
        key = (version, path, environ.get("QUERY_STRING", ""), *(environ.get(h, "") for h in VARY))
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
        if entry is None:
            entry = self._fill(environ, key, version)
            if entry is None:  # not a 200: answered as it came, nothing kept
                return self._passed(environ, start_response)
        return self._answer(environ, start_response, entry, method)

    def _fill(self, environ: dict[str, Any], key: tuple[str, ...], version: str) -> _Entry | None:
        """Run the request through the application; keep its answer if it is a 200."""
        got: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
            got["status"], got["headers"] = status, headers
            return lambda data: got.setdefault("written", []).append(data)

        # A GET is asked in full even for a HEAD: the cached body serves both.
        inner = dict(environ, REQUEST_METHOD="GET")
        result = self.app(inner, capture)
        try:
            body = b"".join([*got.get("written", []), *result])
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        self.misses += 1
        if not got.get("status", "").startswith("200"):
            environ["esc_gis.cache.passed"] = (
                got.get("status", "500 Internal Server Error"),
                got.get("headers", []),
                body,
            )
            return None
        modified = self._first_seen.setdefault(version, format_datetime(datetime.now(timezone.utc), usegmt=True))
        etag = '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'
        headers = _strip(got["headers"], "Content-Length", "ETag", "Last-Modified", "Cache-Control")
        entry = _Entry(got["status"], headers, body, etag, modified)
        with self._lock:
            if key not in self._entries and len(body) <= self.max_bytes // 4:
                self._entries[key] = entry
                self._bytes += len(body)
                while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                    _, old = self._entries.popitem(last=False)
                    self._bytes -= len(old.body)
            if len(self._first_seen) > 64:  # versions seen long ago are never asked for again
                for v in list(self._first_seen)[:-8]:
                    self._first_seen.pop(v, None)
        return entry

    @staticmethod
    def _passed(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        status, headers, body = environ.pop("esc_gis.cache.passed")
        headers = [*_strip(headers, "Content-Length"), ("Content-Length", str(len(body)))]
        start_response(status, headers)
        return [b"" if environ.get("REQUEST_METHOD", "GET").upper() == "HEAD" else body]

    @staticmethod
    def _answer(
        environ: dict[str, Any], start_response: Callable[..., Any], entry: _Entry, method: str
    ) -> Iterable[bytes]:
        validators = [
            ("ETag", entry.etag),
            ("Last-Modified", entry.modified),
            ("Cache-Control", "no-cache"),
            ("Vary", "Accept, Accept-Language"),
        ]
        # If-None-Match compares weakly (RFC 9110 13.1.2): W/"x" matches "x".
        wanted = [t.strip().removeprefix("W/") for t in environ.get("HTTP_IF_NONE_MATCH", "").split(",") if t.strip()]
        if entry.etag in wanted or "*" in wanted:
            start_response("304 Not Modified", validators)
            return [b""]
        headers = _strip(entry.headers, "Vary") + validators + [("Content-Length", str(len(entry.body)))]
        start_response(entry.status, headers)
        return [b"" if method == "HEAD" else entry.body]
