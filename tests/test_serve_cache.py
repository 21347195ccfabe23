"""Collections served at the cost of a file, and still live (issue 35, item 2).

:class:`esc_gis.serve.cache.CollectionCache` is pinned in-process on a counting application
(what is kept, for which version, what a client's ``If-None-Match`` gets), then on a real
``esc-gis serve`` on both back ends: the second request is answered from memory with the same
bytes, a validator gets ``304``, and a change to the registry shows on the very next request.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import date
from typing import Any

import pytest

from esc_gis.serve.cache import CollectionCache, coalesced, gpkg_version

from .service import DEMO_LAYERS, fill_registry, get, pg_schema, public_login, served


class Counting:
    """A WSGI application answering ``body`` with ``status``, counting its calls."""

    def __init__(self, status: str = "200 OK", body: bytes = b'{"features": []}') -> None:
        self.status, self.body, self.calls = status, body, 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        self.calls += 1
        start_response(self.status, [("Content-Type", "application/json"), ("Content-Length", str(len(self.body)))])
        return [self.body]


def ask(app: Any, path: str = "/ogc/collections/permits/items", **headers: str) -> tuple[str, dict[str, str], bytes]:
    got: dict[str, Any] = {}

    def start(status: str, hdrs: list[tuple[str, str]], exc_info: Any = None) -> None:
        got["status"], got["headers"] = status, dict(hdrs)

    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": "f=json", "SCRIPT_NAME": ""}
    environ.update(headers)
    body = b"".join(app(environ, start))
    return got["status"], got["headers"], body


def test_a_second_request_for_the_same_version_is_answered_from_memory() -> None:
    inner = Counting()
    app = CollectionCache(inner, lambda: "v1")
    first, second = ask(app), ask(app)
    assert inner.calls == 1
    assert first == second and first[2] == inner.body
    status, headers, _ = first
    assert status == "200 OK" and headers["Cache-Control"] == "no-cache"
    assert headers["ETag"].startswith('"') and headers["Last-Modified"].endswith("GMT")
    assert headers["Content-Length"] == str(len(inner.body))


def test_a_new_version_is_asked_again_so_the_map_stays_live() -> None:
    inner, version = Counting(), {"v": "v1"}
    app = CollectionCache(inner, lambda: version["v"])
    ask(app)
    version["v"] = "v2"
    inner.body = b'{"features": [1]}'
    assert ask(app)[2] == b'{"features": [1]}' and inner.calls == 2


def test_a_client_holding_the_current_etag_gets_304_without_a_body() -> None:
    app = CollectionCache(Counting(), lambda: "v1")
    etag = ask(app)[1]["ETag"]
    status, headers, body = ask(app, HTTP_IF_NONE_MATCH=etag)
    assert (status, body, headers["ETag"]) == ("304 Not Modified", b"", etag)
    assert ask(app, HTTP_IF_NONE_MATCH=f'"other", W/{etag}')[0] == "304 Not Modified"  # weak comparison
    assert ask(app, HTTP_IF_NONE_MATCH='"other"')[0] == "200 OK"


def test_answers_differ_by_format_and_language_and_head_has_no_body() -> None:
    inner = Counting()
    app = CollectionCache(inner, lambda: "v1")
    ask(app)
    ask(app, HTTP_ACCEPT="text/html")
    ask(app, HTTP_ACCEPT_LANGUAGE="fr")
    assert inner.calls == 3
    status, headers, body = ask(app, REQUEST_METHOD="HEAD")
    assert status == "200 OK" and body == b"" and inner.calls == 3
    assert headers["Content-Length"] == str(len(inner.body))


@pytest.mark.parametrize("path", ["/", "/ogc/processes/screen/execution", "/ogc/jobs", "/static/esc/page.js"])
def test_only_the_collections_are_kept(path: str) -> None:
    inner = Counting()
    app = CollectionCache(inner, lambda: "v1")
    ask(app, path)
    ask(app, path)
    assert inner.calls == 2


def test_an_error_a_post_or_an_unknown_version_is_never_kept() -> None:
    inner = Counting("404 Not Found", b'{"code": "NotFound"}')
    app = CollectionCache(inner, lambda: "v1")
    assert ask(app)[0] == "404 Not Found" and ask(app)[2] == b'{"code": "NotFound"}'
    assert inner.calls == 2
    inner2 = Counting()
    unknown = CollectionCache(inner2, lambda: "")
    ask(unknown)
    ask(unknown)
    posted = CollectionCache(inner2, lambda: "v1")
    ask(posted, REQUEST_METHOD="POST")
    ask(posted, REQUEST_METHOD="POST")
    assert inner2.calls == 4


def test_what_is_kept_is_bounded_least_recently_used_out_first() -> None:
    inner = Counting(body=b"x" * 100)
    app = CollectionCache(inner, lambda: "v1", max_entries=2)
    for p in ("/ogc/collections/a", "/ogc/collections/b", "/ogc/collections/a", "/ogc/collections/c"):
        ask(app, p)
    assert inner.calls == 3
    ask(app, "/ogc/collections/a")  # kept: it was used after b
    assert inner.calls == 3
    ask(app, "/ogc/collections/b")  # b went out first
    assert inner.calls == 4
    big = CollectionCache(Counting(body=b"x" * 1000), lambda: "v1", max_bytes=1000)
    ask(big)
    ask(big)
    assert big.app.calls == 2  # one answer may take at most a quarter of the bound


def test_a_geopackages_version_moves_with_its_file_and_the_day(tmp_path, monkeypatch) -> None:
    import esc_gis.serve.cache as cache

    path = tmp_path / "permits.gpkg"
    path.write_bytes(b"a")
    version = gpkg_version(path)
    v1 = version()
    assert version() == v1 and v1.endswith(date.today().isoformat())
    path.with_name("permits.gpkg-wal").write_bytes(b"w")
    v2 = version()
    assert v2 != v1

    class Tomorrow(date):
        @classmethod
        def today(cls) -> date:
            return date(2099, 1, 1)

    monkeypatch.setattr(cache, "date", Tomorrow)
    assert version() != v2 and version().endswith("2099-01-01")


# -- a real service -----------------------------------------------------------------------------------


@pytest.fixture(params=["gpkg", "postgis"])
def registry(request, tmp_path):
    """(registry to serve, the office's own access to it) on each back end."""
    if request.param == "gpkg":
        path = str(tmp_path / "permits.gpkg")
        fill_registry(path, n=3)
        yield path, path
        return
    target = pg_schema(request.getfixturevalue("pg_url"))
    fill_registry(target, n=3)
    with public_login(target) as reader:
        yield reader, target


def _get(url: str, **kw: Any) -> tuple[int, dict[str, str], bytes]:
    """:func:`get` with the headers' names in lower case (HTTP's are case-insensitive)."""
    status, headers, body = get(url, **kw)
    return status, {k.lower(): v for k, v in headers.items()}, body


def test_a_served_collection_is_validated_and_a_change_shows_on_the_next_request(registry) -> None:
    from esc_gis.registry import open_registry

    served_reg, office = registry
    with served(served_reg) as base:
        url = f"{base}/ogc/collections/permits/items?f=json&limit=1000"
        status, headers, body = _get(url)
        assert status == 200 and headers["cache-control"] == "no-cache"
        again = _get(url)
        assert again[2] == body and again[1]["etag"] == headers["etag"]
        status304, headers304, body304 = _get(url, headers={"If-None-Match": headers["etag"]})
        assert (status304, body304) == (304, b"")
        assert headers304["x-content-type-options"] == "nosniff"  # the guard's headers on a 304 too
        number = sorted(f["properties"]["permit_number"] for f in json.loads(body)["features"])[0]
        with open_registry(office, layers=DEMO_LAYERS) as reg:
            reg.transition(number, "stop_work", on=date(2026, 11, 25), reasons="Silt fence down", who="clerk")
        status, fresh_headers, fresh = _get(url, headers={"If-None-Match": headers["etag"]})
        assert status == 200 and fresh_headers["etag"] != headers["etag"]
        moved = {f["properties"]["permit_number"]: f["properties"]["status"] for f in json.loads(fresh)["features"]}
        assert moved[number] == "stop_work"


def test_requests_together_share_one_version_query_but_never_one_begun_before_they_came() -> None:
    """The registry's version (one PostGIS query) is shared by the requests waiting for it: 20 clients
    cost one query per round trip, not 20 in a row (the collection was 7x a static file). A query
    that began before a request arrived may predate a change it must see: it waits for the next."""
    db = {"value": "v1"}
    began, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def ask() -> str:
        seen = db["value"]  # what the query reads is what was committed when it began
        calls.append(seen)
        if len(calls) == 1:
            began.set()
            release.wait(10)
        return seen

    version = coalesced(ask)
    got: dict[str, str] = {}
    first = threading.Thread(target=lambda: got.setdefault("first", version()))
    first.start()
    assert began.wait(10)
    db["value"] = "v2"  # a change committed while the first query runs
    later = [threading.Thread(target=lambda i=i: got.setdefault(f"later{i}", version())) for i in range(5)]
    for t in later:
        t.start()
    time.sleep(0.5)  # time for the five to be waiting (each asks a query begun after it came)
    release.set()
    for t in (first, *later):
        t.join(10)
    assert got["first"] == "v1"
    assert all(got[f"later{i}"] == "v2" for i in range(5))  # not the first query's v1
    assert calls == ["v1", "v2"]  # the five that came during the first query shared one
