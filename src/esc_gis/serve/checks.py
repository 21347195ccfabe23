"""What a request must be before pygeoapi or a database sees it: each refusal a sentence for a 400.

The service answers anyone, so a client's text never reaches a provider unchecked. Checked by
:class:`esc_gis.serve.app.Guard` before the request is passed on, the same on both back ends:

- ``bbox`` finite numbers, ordered; ``offset`` and ``limit`` whole numbers a database's integer holds;
- ``datetime`` an RFC 3339 instant (a date, or a date and time with its offset) or an interval of
  two, either end open (``..`` or empty), the start not after the end;
- ``sortby`` names, each one a published property where the collection's are known;
- each property filter of a collection whose properties are known (the permits': the registry's
  published view, :func:`esc_gis.registry.store.schema.published_kinds`) typed by its column: a
  number where the column is a number, a day (``2026-11-03``) where it is a date;
- ``filter`` (CQL) naming only published properties;
- no NUL character anywhere (PostgreSQL's text cannot hold one);
- a process's body a JSON object no deeper than :data:`JSON_DEPTH` (Python's parser recurses:
  a body of 100,000 ``[`` was a ``RecursionError``, a 500).

Before this, PostGIS answered ``issued_on=x``, ``disturbed_sqft=abc`` or ``datetime=2026-01-01'--``
with a 500 and a SQLAlchemy traceback in the log, where the GeoPackage answered 200 or 400.
"""

from __future__ import annotations

__all__ = ["JSON_DEPTH", "MAX_PAGE", "body_problem", "flat_bbox", "instant", "query_problem", "value_problem"]

import json
import math
import re
from collections.abc import Mapping
from datetime import date, datetime, timedelta, timezone
from typing import Any
from urllib.parse import parse_qs

#: The largest ``offset`` and ``limit`` passed on: a database's 32-bit integer (PostgreSQL's int4;
#: past it PostGIS answered 500 where GeoPackage answered 200).
MAX_PAGE = 2**31 - 1
#: The deepest JSON a process body may nest: a GeoJSON MultiPolygon in a FeatureCollection in the
#: inputs is 10 deep.
JSON_DEPTH = 32
#: The parameters pygeoapi's items endpoint reads itself; any other is a property filter.
RESERVED = frozenset(
    ("bbox", "bbox-crs", "crs", "f", "lang", "limit", "offset", "resulttype", "datetime", "sortby", "properties",
     "skipGeometry", "q", "filter", "filter-lang", "filter-crs")
)  # fmt: skip
#: A number as PostgreSQL's ``double precision`` and Python both read it (no ``1_000``, no ``0x10``).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# RFC 3339's date-time: full-date "T" partial-time time-offset ("t", "z" and a space are allowed too).
_DATE_TIME = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)  # fmt: skip
#: The widest offset from UTC a PostgreSQL timestamp takes (RFC 3339 allows to 23:59).
_MAX_OFFSET = timedelta(hours=15, minutes=59)
#: A number's magnitude both back ends hold (PostgreSQL refuses a double that underflows or overflows).
_SMALLEST, _LARGEST = 1e-300, 1e300


def instant(text: str) -> datetime | None:
    """Return an RFC 3339 date or date-time as an aware datetime (a date at 00:00 UTC); None if it is neither.

    Examples
    --------
    >>> instant("2026-11-03")
    datetime.datetime(2026, 11, 3, 0, 0, tzinfo=datetime.timezone.utc)
    >>> instant("2026-11-03T10:00:00-06:00").isoformat()
    '2026-11-03T10:00:00-06:00'
    >>> instant("2026-01-01'--"), instant("2026-02-30"), instant("2026-11-03T10:00:00+99:00")
    (None, None, None)
    """
    if _DAY.fullmatch(text):
        try:
            return datetime.combine(date.fromisoformat(text), datetime.min.time(), timezone.utc)
        except ValueError:
            return None
    m = _DATE_TIME.fullmatch(text)
    if m is None:
        return None
    day, hh, mm, ss, frac, zulu, sign, oh, om = m.groups()
    try:
        offset = timedelta(hours=int(oh), minutes=int(om)) if not zulu else timedelta(0)
        if offset > _MAX_OFFSET or int(om or 0) > 59:
            return None
        tz = timezone(-offset if sign == "-" else offset)
        # A leap second (:60) is RFC 3339's; no database here stores one.
        return datetime.combine(date.fromisoformat(day), datetime.min.time(), tz).replace(
            hour=int(hh), minute=int(mm), second=int(ss), microsecond=int(((frac or ".0") + "000000")[1:7])
        )
    except ValueError:
        return None


def _datetime_problem(value: str) -> str | None:
    """Say what is wrong with OGC API's ``datetime``: an instant, or an interval with an open end as ``..`` or ''."""
    fix = (
        "datetime must be an RFC 3339 date or date-time (2026-11-03, 2026-11-03T10:00:00Z) or an interval of two "
        "with '/' (either end '..' for open)."
    )
    ends = value.split("/")
    if len(ends) > 2 or (len(ends) == 1 and ends[0] in ("", "..")):
        return fix
    times = [None if e in ("", "..") else instant(e) for e in ends]
    if any(t is None and e not in ("", "..") for t, e in zip(times, ends, strict=True)):
        return fix
    if len(times) == 2 and times[0] is not None and times[1] is not None and times[0] > times[1]:
        return f"datetime's start {ends[0]} is after its end {ends[1]}."
    return None


def value_problem(name: str, kind: str, value: str) -> str | None:
    """Say what is wrong with ``value`` as a filter on the column ``name`` of ``kind``; None when nothing is.

    ``kind`` is the registry schema's (``text``, ``int``, ``serial``, ``real``, ``bool``, ``date``,
    ``datetime``). A value passed is one both back ends read as that kind.

    Examples
    --------
    >>> value_problem("disturbed_sqft", "real", "43560")
    >>> value_problem("disturbed_sqft", "real", "abc")
    "disturbed_sqft is a number: 'abc' is not one (write 43560 or 1.5)."
    >>> value_problem("issued_on", "date", "x")
    "issued_on is a date: 'x' is not a day as YYYY-MM-DD."
    """
    shown = value if len(value) <= 40 else value[:40] + "..."
    if kind in ("int", "serial"):
        if not _INTEGER.fullmatch(value) or not -(2**63) <= int(value) < 2**63:
            return f"{name} is a whole number: {shown!r} is not one a database holds."
    elif kind == "real":
        number = float(value) if _NUMBER.fullmatch(value) else math.nan
        # Zero only when written as zero: 1e-400 is no zero, and PostgreSQL refuses its underflow.
        zero = number == 0 and not re.search(r"[1-9]", value.lower().split("e")[0])
        if not math.isfinite(number) or not (zero or _SMALLEST <= abs(number) <= _LARGEST):
            return f"{name} is a number: {shown!r} is not one (write 43560 or 1.5)."
    elif kind == "bool":
        if value not in ("true", "false"):
            return f"{name} is true or false, not {shown!r}."
    elif kind == "date":
        if not _DAY.fullmatch(value) or instant(value) is None:
            return f"{name} is a date: {shown!r} is not a day as YYYY-MM-DD."
    elif kind == "datetime" and instant(value) is None:
        return f"{name} is a date and time: {shown!r} is not one as RFC 3339 writes it (2026-11-03T10:00:00Z)."
    return None


def _filter_names(text: str, lang: str | None) -> set[str] | None:
    """Return the properties a CQL ``filter`` names; None if it does not parse (pygeoapi refuses it then)."""
    from pygeofilter import ast

    try:
        if lang == "cql-json":
            from pygeofilter.parsers.cql_json import parse as parse_json

            tree = parse_json(json.loads(text))
        else:
            from pygeofilter.parsers.ecql import parse as parse_text

            tree = parse_text(text)
    except Exception:  # any parser error: the request is pygeoapi's to refuse
        return None
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, ast.Attribute):
            names.add(str(node.name))
        elif isinstance(node, ast.Node):
            for child in node.get_sub_nodes():
                walk(child)
        elif isinstance(node, (list, tuple)):
            for child in node:
                walk(child)

    walk(tree)
    return names


def query_problem(query: str, kinds: Mapping[str, str] | None = None) -> str | None:
    """Say what is wrong with a request's query string; None when nothing is.

    Parameters
    ----------
    query : str
        The query string as it came (``bbox=...&offset=...``).
    kinds : mapping of str to str, optional
        The collection's published properties and their kinds (:func:`value_problem`), when the
        request is for a collection whose properties are known: its property filters, ``sortby``
        and ``filter`` are checked against them.

    Examples
    --------
    >>> query_problem("bbox=-88.8,44.0,-88.6,44.2&offset=10")
    >>> query_problem("bbox=nan,nan,nan,nan")
    'bbox must be 4 or 6 finite numbers (min x, min y, [min z,] max x, max y, [max z]).'
    >>> query_problem("offset=2684249407")
    'offset must be a whole number from 0 to 2147483647.'
    >>> query_problem("sortby=legal_description", {"status": "text"})
    'sortby names legal_description, which this collection does not publish (it publishes: status).'
    """
    args = parse_qs(query, keep_blank_values=True)
    checks = (_nul_problem, _page_problem, _bbox_args_problem, _datetime_args_problem, _sortby_problem)
    for check in checks:
        problem = check(args, kinds)
        if problem:
            return problem
    if kinds is None:
        return None
    return _properties_problem(args, kinds) or _filter_problem(args, kinds)


Args = dict[str, list[str]]


def _nul_problem(args: Args, kinds: Mapping[str, str] | None) -> str | None:
    for name, values in args.items():
        if "\x00" in name or any("\x00" in v for v in values):
            return f"{name.replace(chr(0), '')} holds a NUL character, which no text here may."
    return None


def _page_problem(args: Args, kinds: Mapping[str, str] | None) -> str | None:
    for name, low in (("offset", 0), ("limit", 1)):
        for value in args.get(name, []):
            n = int(value) if _INTEGER.fullmatch(value.strip()) else -1
            if not low <= n <= MAX_PAGE:
                return f"{name} must be a whole number from {low} to {MAX_PAGE}."
    return None


def flat_bbox(query: str) -> str:
    """Return ``query`` with a ``bbox`` of 6 numbers given as its 4 horizontal ones (its heights dropped).

    Every collection is two-dimensional, so a height range selects nothing more or less; the
    GeoPackage provider used the first four numbers, while pygeoapi's PostgreSQL provider handed
    all six to ``ST_MakeEnvelope`` and the database failed (a 500, found by schemathesis). A query
    :func:`query_problem` passed is assumed; any other query is returned as it came.

    Examples
    --------
    >>> flat_bbox("f=json&bbox=0,1,-5,2,3,5")
    'f=json&bbox=0%2C1%2C2%2C3'
    >>> flat_bbox("bbox=0,1,2,3&limit=5")
    'bbox=0,1,2,3&limit=5'
    """
    from urllib.parse import parse_qsl, urlencode

    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(k == "bbox" and len(v.split(",")) == 6 for k, v in pairs):
        return query
    flat = [
        (k, ",".join(v.split(",")[i] for i in (0, 1, 3, 4)) if k == "bbox" and len(v.split(",")) == 6 else v)
        for k, v in pairs
    ]
    return urlencode(flat)


def _bbox_args_problem(args: Args, kinds: Mapping[str, str] | None) -> str | None:
    return next((p for v in args.get("bbox", []) if (p := _bbox_problem(v, "bbox-crs" in args))), None)


def _datetime_args_problem(args: Args, kinds: Mapping[str, str] | None) -> str | None:
    return next((p for v in args.get("datetime", []) if (p := _datetime_problem(v))), None)


def _published(kinds: Mapping[str, str]) -> str:
    return f"which this collection does not publish (it publishes: {', '.join(sorted(kinds))})"


def _sortby_problem(args: Args, kinds: Mapping[str, str] | None) -> str | None:
    for value in args.get("sortby", []):
        for item in value.split(","):
            name = item[1:] if item[:1] in ("+", "-") else item
            if not name.strip():
                return "sortby must name properties, comma-separated, each optionally after + or -."
            if kinds is not None and name not in kinds:
                return f"sortby names {name}, {_published(kinds)}."
    return None


def _properties_problem(args: Args, kinds: Mapping[str, str]) -> str | None:
    for name, values in args.items():
        if name in RESERVED or name not in kinds:
            continue  # not a property this collection publishes: pygeoapi ignores it
        problem = next((p for v in values if (p := value_problem(name, kinds[name], v))), None)
        if problem:
            return problem
    return None


def _filter_problem(args: Args, kinds: Mapping[str, str]) -> str | None:
    for value in args.get("filter", []):
        names = _filter_names(value, (args.get("filter-lang") or [None])[0])
        unknown = sorted((names or set()) - set(kinds))
        if unknown:
            return f"filter names {', '.join(unknown)}, {_published(kinds)}."
    return None


def _bbox_problem(value: str, has_crs: bool) -> str | None:
    try:
        nums = [float(v) for v in value.split(",")]
    except ValueError:
        nums = []
    if len(nums) not in (4, 6) or not all(math.isfinite(v) for v in nums):
        return "bbox must be 4 or 6 finite numbers (min x, min y, [min z,] max x, max y, [max z])."
    half = len(nums) // 2
    lows, highs = nums[:half], nums[half:]
    if not has_crs and not (all(abs(v) <= 180 for v in nums) and all(abs(v) <= 90 for v in (lows[1], highs[1]))):
        return "bbox is longitude and latitude in degrees (CRS84) unless bbox-crs names another CRS."
    if lows[1] > highs[1] or (half == 3 and lows[2] > highs[2]):
        return "bbox's minimums must not be above its maximums (x may cross the antimeridian)."
    return None


def body_problem(body: bytes, *, max_depth: int = JSON_DEPTH) -> str | None:
    """Say what is wrong with a process's request body; None when it is a JSON object no deeper than ``max_depth``.

    The depth is counted on the bytes (strings left out) before anything parses them: Python's
    JSON parser recurses once per level, and a deep enough body ends in ``RecursionError``.

    Examples
    --------
    >>> body_problem(b'{"inputs": {"site": {"type": "Point"}}}')
    >>> body_problem(b"[]")
    'The request body must be a JSON object: {"inputs": {"site": ...}}.'
    >>> body_problem(b"[" * 1000 + b"]" * 1000)
    'The request body nests deeper than 32 levels; a screening needs about 10.'
    """
    bare = re.sub(rb'"(?:[^"\\]|\\.)*"', b'""', body)
    depth = deepest = 0
    for m in re.finditer(rb"[\[\]{}]", bare):
        depth += 1 if m.group() in (b"[", b"{") else -1
        deepest = max(deepest, depth)
        if deepest > max_depth:
            return f"The request body nests deeper than {max_depth} levels; a screening needs about 10."
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return 'The request body is not JSON. Fix: send a JSON object: {"inputs": {"site": ...}}.'
    if not isinstance(data, dict):
        return 'The request body must be a JSON object: {"inputs": {"site": ...}}.'
    return None
