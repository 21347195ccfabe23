"""A corpus of hostile requests: no 5xx, an OGC exception for each refusal, and nothing probed (issue 47, items 3-4).

PostGIS answered ``issued_on=x``, ``disturbed_sqft=abc``, ``updated_at=x`` and ``datetime=2026-01-01'--``
with a 500 and a SQLAlchemy traceback (with its SQL) in the log, where the GeoPackage answered 200
or 400; the screening answered 500 to a body ``[]`` and to deeply nested JSON (``RecursionError``).
And on PostGIS a client could probe the columns the service does not publish: ``?parcel_id=<guess>``
matched 1 for a right guess and 0 for a wrong one, ``sortby=legal_description`` sorted.

Each back end is served by a real ``esc-gis serve`` and sent every request below: SQL-ish text,
huge numbers, NaN and infinities, unicode, NUL, empty and repeated values in every parameter;
ids of every wrong kind; unpublished properties; process bodies that are no object, nest deep or
carry NaN. Every answer is below 500, every 4xx is OGC exception JSON (``code``, ``description``),
no answer holds a secret or an unpublished value, and the service's log has no traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from esc_gis.registry.store.schema import published_kinds
from esc_gis.serve.config import PERMIT_PROPERTIES

from .service import SECRETS, UNPUBLISHED, fill_registry, get, pg_schema, public_login, served

#: Values that have broken a parser or a database somewhere: quotes, SQL, numbers no column holds,
#: dates that are no dates, NUL, unicode, empty, very long.
NASTY = (
    "'",
    "' OR '1'='1",
    "1; DROP TABLE permits; --",
    "2026-01-01'--",
    "x",
    "",
    "\x00",
    "NaN",
    "inf",
    "-Infinity",
    "1e309",
    "1e-400",
    "-0",
    "99999999999999999999999",
    "0x10",
    "1_000",
    "2026-02-30",
    "2026-13-45",
    "20260101",
    "2026-11-03T10:00:00+99:00",
    "../..",
    "/",
    ",,,",
    "{}",
    "null",
    "ünïcødé ☃ 😀",
    "\u202e\ufeff",
    "9" * 500,
)
#: Every parameter the items endpoint reads, every published property, and unpublished ones.
PARAMETERS = (
    "bbox", "bbox-crs", "crs", "f", "lang", "limit", "offset", "resulttype", "datetime", "sortby", "properties",
    "skipGeometry", "q", "filter", "filter-lang", "filter-crs",
    *published_kinds(), "parcel_id", "legal_description", "permit_decision", "updated_at", "started_at",
)  # fmt: skip
#: The issue's 500s, and their neighbours: each a 400 on both back ends.
REFUSED = (
    "bbox=nan,nan,nan,nan",
    "offset=1e26",
    "datetime=2026-01-01'--",
    "datetime=2026-01-01/2025-01-01",
    "datetime=",
    "issued_on=x",
    "issued_on=2026-02-30",
    "disturbed_sqft=abc",
    "disturbed_sqft=1e-400",
    "disturbed_acres=NaN",
    "fid=abc",
    "sortby=",
    "sortby=legal_description",
    "sortby=-parcel_id",
    "properties=parcel_id",
    "filter=parcel_id='x'",
    "filter=legal_description LIKE '%'",
    "site_address=\x00",
)
#: Paths other than the permits' items query, GET.
PATHS = (
    "/ogc/collections/permits/items/abc",
    "/ogc/collections/permits/items/1e99",
    "/ogc/collections/permits/items/-1",
    "/ogc/collections/permits/items/9223372036854775808",
    "/ogc/collections/permits/items/1.5",
    "/ogc/collections/permits/items/%27--",
    "/ogc/collections/permits/items/%00",
    "/ogc/collections/permits/items/%F0%9F%98%80",
    "/ogc/collections/permits/items/1?f=xyz",
    "/ogc/collections/permits/items/1?f=html",
    "/ogc/collections/permits/queryables?f=json",
    "/ogc/collections/permits/schema?f=json",
    "/ogc/collections/permits?f=json",
    "/ogc/collections/%27--/items?f=json",
    "/ogc/collections/waters_polygons/items?f=json&water_name=%00",
    "/ogc/collections/waters_polygons/items?f=json&sortby=nope",
    "/ogc/collections/waters_polygons/items/abc?f=json",
    "/ogc/jobs/%27--?f=json",
    "/ogc/processes/%27--?f=json",
    "/ogc?f=%27--",
)


def _deep(n: int, opening: bytes = b"[") -> bytes:
    closing = b"]" if opening == b"[" else b"}"
    if opening == b"[":
        return opening * n + closing * n
    return b'{"a":' * n + b"1" + closing * n


#: Process bodies: not an object, nested deep, not JSON, NaN and infinities, strange inputs.
BODIES = (
    b"[]",
    b'"x"',
    b"1",
    b"null",
    b"true",
    b"",
    b"{",
    b"\xff\xfe{}",
    b"\xef\xbb\xbf{}",
    _deep(100_000),
    _deep(33),
    _deep(33, b"{"),
    _deep(5_000, b"{"),
    b'{"inputs": null}',
    b'{"inputs": []}',
    b'{"inputs": {"site": null}}',
    b'{"inputs": {"site": NaN}}',
    b'{"inputs": {"site": {"type": "Polygon", "coordinates": [[[1e400, 0], [0, 1], [1, 1], [1e400, 0]]]}}}',
    b'{"inputs": {"site": {"type": "Polygon", "coordinates": [[[NaN, 0], [0, 1], [1, 1], [NaN, 0]]]}}}',
    b'{"inputs": {"site": "\' OR 1=1 --"}}',
    b'{"inputs": {"site": {"type": "Point", "coordinates": [0, 0]}, "activity": "\\u0000"}}',
    b'{"inputs": {"site": {}}, "inputs": {"site": {}}}',
    b'{"inputs": {"site": {"type": "Polygon", "coordinates": [[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]}}}',
)


@pytest.fixture(scope="module", params=["gpkg", "postgis"])
def registry(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A registry to serve (GeoPackage, or PostGIS through a login in the reader role)."""
    if request.param == "gpkg":
        path = str(tmp_path_factory.mktemp("hostile") / "permits.gpkg")
        fill_registry(path)
        yield path
        return
    target = pg_schema(request.getfixturevalue("pg_url"))
    fill_registry(target)
    with public_login(target) as login:
        yield login


def _problems(method: str, url: str, status: int, headers: dict[str, str], body: bytes) -> list[str]:
    """What is wrong with one answer: a 5xx, a 4xx that is not OGC exception JSON, a secret shown."""
    found = []
    text = body.decode("utf-8", "replace")
    if status >= 500:
        found.append(f"{method} {url}: {status} {text[:200]}")
    elif status >= 400 and "f=html" not in url:
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if not (isinstance(answer, dict) and isinstance(answer.get("code"), str) and "description" in answer):
            found.append(f"{method} {url}: {status} is not an OGC exception: {text[:200]}")
    leaked = [s for s in (*SECRETS, *UNPUBLISHED.values()) if s in text]
    if leaked:
        found.append(f"{method} {url}: holds {leaked}")
    return found


def _query(base: str, query: str) -> tuple[int, dict[str, Any], bytes, str]:
    url = f"{base}/ogc/collections/permits/items?{query}"
    status, headers, body = get(url)
    return status, headers, body, url


@pytest.mark.slow  # 30-40 s per back end on 2 busy cores (about 1,300 requests)
def test_no_hostile_request_is_a_server_error_or_a_traceback(registry: str) -> None:
    logs: list[str] = []
    problems: list[str] = []
    counts = {"requests": 0}

    def check(method: str, url: str, status: int, headers: dict[str, str], body: bytes) -> None:
        counts["requests"] += 1
        problems.extend(_problems(method, url, status, headers, body))

    with served(registry, logs=logs) as base:
        for name in PARAMETERS:
            for value in NASTY:
                status, headers, body, url = _query(base, urlencode({"f": "json", name: value}))
                check("GET", url, status, headers, body)
        for query in (
            "status=active&status=x",  # repeated
            "limit=1&limit=1000000",
            "sortby=status&sortby=nope",
            "datetime=2026-11-01/..&datetime='",
            "f=json&f=html",
            "bbox=-88.72,44.11,-88.70,44.13&bbox-crs=" + quote("' OR 1=1"),
            "filter-lang=cql-json&filter=" + quote('{"op": "=", "args": [{"property": "issued_on"}, "x"]}'),
            "filter=" + quote("issued_on = 'x'"),
            "filter=" + quote("disturbed_sqft > 'abc'"),
            "filter=" + quote("status = '\x00'"),
        ):
            status, headers, body, url = _query(base, query)
            check("GET", url, status, headers, body)
        for path in PATHS:
            status, headers, body = get(f"{base}{path}")
            check("GET", path, status, headers, body)
        for body_sent in BODIES:
            status, headers, body = get(
                f"{base}/ogc/processes/screen/execution",
                data=body_sent,
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            check("POST", f"screen {body_sent[:40]!r}", status, headers, body)
            if not body_sent.lstrip(b"\xef\xbb\xbf").startswith(b"{"):
                assert status == 400, (body_sent[:40], status, body[:200])
    problems += [f"the log holds a traceback:\n{log[-3000:]}" for log in logs if "Traceback" in log]
    assert counts["requests"] > len(PARAMETERS) * len(NASTY)
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def base(registry: str) -> Iterator[str]:
    with served(registry) as url:
        yield url


@pytest.mark.parametrize("query", REFUSED)
def test_what_no_collection_can_answer_is_a_400_before_any_database(base: str, query: str) -> None:
    name, _, value = query.partition("=")
    status, _, body, _ = _query(base, urlencode({"f": "json", name: value}))
    assert status == 400, body
    assert json.loads(body)["code"] == "InvalidParameterValue"


def _matched(base: str, **params: str) -> int:
    status, _, body, url = _query(base, urlencode({"f": "json", "resulttype": "hits", **params}))
    assert status == 200, (url, body)
    return int(json.loads(body)["numberMatched"])


def test_an_unpublished_column_cannot_be_probed(base: str) -> None:
    """A right guess of an unpublished value matches what a wrong one does: everything (the filter is ignored)."""
    shown = _matched(base)
    assert shown == 5  # the five permits in force or halted; not the undecided application
    for name, right in UNPUBLISHED.items():
        assert _matched(base, **{name: right}) == _matched(base, **{name: "wrong"}) == shown
    assert _matched(base, permit_decision="required") == _matched(base, permit_decision="not_required") == shown
    for name in UNPUBLISHED:
        status, _, body, _ = _query(base, f"f=json&sortby={name}")
        assert status == 400 and name in json.loads(body)["description"]
        cql = quote(f"{name} = '{UNPUBLISHED[name]}'")
        status, _, body, _ = _query(base, f"f=json&filter={cql}")
        assert status == 400 and name in json.loads(body)["description"]


def test_a_published_filter_filters_the_same_on_both_back_ends(base: str) -> None:
    """Typed as the column: a number equals a number (43560 is 43560.0), a day a day."""
    _, _, body, _ = _query(base, "f=json&limit=1")
    first = json.loads(body)["features"][0]["properties"]
    sqft = first["disturbed_sqft"]  # every box is 150 x 100 ft
    for written in {repr(sqft), f"{sqft:.0f}" if sqft == round(sqft) else repr(sqft)}:
        assert _matched(base, disturbed_sqft=written) == 5, written
    assert _matched(base, issued_on="2026-11-03") == 5
    assert _matched(base, issued_on="2026-11-04") == 0
    assert _matched(base, status="stop_work") == 1
    assert _matched(base, datetime="2026-11-03T23:00:00-06:00") == 5  # the day as written, as on the GeoPackage
    assert _matched(base, datetime="/") == _matched(base, datetime="../..") == 5


def test_the_queryables_and_the_fields_are_the_published_ones(base: str) -> None:
    status, _, body = get(f"{base}/ogc/collections/permits/queryables?f=json")
    assert status == 200
    names = set(json.loads(body)["properties"]) - {"geometry", "geom"}
    assert names <= {"fid", *PERMIT_PROPERTIES} and set(PERMIT_PROPERTIES) <= names
    for name in ("parcel_id", "legal_description", "permit_decision", "updated_at"):
        assert name not in body.decode()


def test_an_id_of_another_kind_is_not_found(base: str) -> None:
    for ident in ("abc", "1e99", "1.5", "9223372036854775808", "%27--"):
        status, _, body = get(f"{base}/ogc/collections/permits/items/{ident}?f=json")
        assert (status, json.loads(body)["code"]) == (404, "NotFound"), ident
    # The undecided application (the sixth row) is not in the published view: not found either.
    status, _, body = get(f"{base}/ogc/collections/permits/items/6?f=json")
    assert status == 404


def test_a_cql_filter_filters_or_is_refused_but_is_never_ignored(base: str) -> None:
    """PostGIS evaluates CQL; the GeoPackage provider does not, and answered every permit as if it had."""
    status, _, body, _ = _query(base, "f=json&filter=" + quote("status = 'stop_work'"))
    if status == 200:
        assert json.loads(body)["numberMatched"] == 1
    else:
        assert status == 400 and "CQL filter" in json.loads(body)["description"]


def test_a_bbox_with_heights_selects_as_its_horizontal_box(base: str) -> None:
    """OGC API's 6-number bbox: the collections are 2D, so the heights select nothing (PostGIS answered 500)."""
    village = "-88.9,43.9,-88.5,44.3"
    assert _matched(base, bbox=village) == 5
    assert _matched(base, bbox="-88.9,43.9,-100,-88.5,44.3,100") == 5
    assert _matched(base, bbox="0.0,0.0,0.0,0.0,0.0,0.0") == _matched(base, bbox="0.0,0.0,0.0,0.0") == 0
