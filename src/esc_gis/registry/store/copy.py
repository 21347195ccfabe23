"""Copy every row of a registry into an empty one on any back end, keys and counters included.

The history is the one home of facts, but a copy carries every table as it is, not a replay:
the parties and the photos live outside the history (:mod:`.attachments`), the numbering lives
in ``permit_counters`` and in the tables' keys (events name their rows' keys, :meth:`.Backend.next_ids`),
and a replay would give the projections' serial keys anew. So rows go across with their keys,
each value through its column's kind (dates, times, geometries, bytes: :meth:`.Backend.dump`),
each serial column's high-water mark after them, and every table is read back and compared with
the source, by a digest of its rows, before the caller's transaction commits.
"""

from __future__ import annotations

__all__ = ["TABLE_ORDER", "copy_tables", "occupied", "table_digest"]

import hashlib
import re
from collections.abc import Callable, Iterator
from datetime import date, datetime, timezone
from typing import Any

import shapely

from esc_gis.errors import RegistryError
from esc_gis.registry.store.schema import TABLES

#: Rows read and written per round trip.
BATCH_ROWS = 500

_REFERENCE = re.compile(r"REFERENCES (\w+)\(")


def _order() -> tuple[str, ...]:
    """Return every table after the tables it refers to (a foreign key is checked row by row on PostGIS)."""
    needs = {
        t: {m for _, _, c in cols for m in _REFERENCE.findall(c) if m != t and m in TABLES}
        for t, cols in TABLES.items()
    }
    out: list[str] = []
    while len(out) < len(needs):
        ready = [t for t in needs if t not in out and needs[t] <= set(out)]
        if not ready:  # a cycle between tables: a defect of the schema, not of input
            msg = f"The registry's tables refer to each other in a cycle: {sorted(set(needs) - set(out))}."
            raise RegistryError(msg)
        out += ready
    return tuple(out)


#: The tables in the order they are written: each after the ones it refers to.
TABLE_ORDER = _order()


def _present(cur: Any, b: Any, table: str) -> bool:
    if b.dialect == "sqlite":
        cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
        return cur.fetchone() is not None
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", (table,))
    return bool(cur.fetchone()[0])


def occupied(cur: Any, b: Any) -> dict[str, int]:
    """Return each registry table of the database that holds rows, with its number of rows.

    Tables not (yet) made are left out: an empty registry of an older schema is empty.
    """
    out = {}
    for table in TABLE_ORDER:
        if _present(cur, b, table):
            cur.execute(f'SELECT count(*) FROM "{table}"')
            n = int(cur.fetchone()[0])
            if n:
                out[table] = n
    return out


#: Rows of a table holding bytes (photos, megabytes each) read per round trip.
BATCH_BLOB_ROWS = 16


def _select(b: Any, table: str, after: bool) -> str:
    """Return the SELECT of a batch of ``table``'s rows by its key (the first column of every table)."""
    cols = TABLES[table]
    shown = [b.geom_column(f'"{c}"', c) if k == "geom" else f'"{c}"' for c, k, _ in cols]
    key = cols[0][0]
    where = f'WHERE "{key}" > {b.ph} ' if after else ""
    n = BATCH_BLOB_ROWS if any(k == "blob" for _, k, _ in cols) else BATCH_ROWS
    return f'SELECT {", ".join(shown)} FROM "{table}" {where}ORDER BY "{key}" LIMIT {n}'


def _rows(cur: Any, b: Any, table: str) -> Iterator[list[tuple[Any, ...]]]:
    """Yield ``table``'s rows as Python values (:meth:`.Backend.load`), a batch at a time, in key order.

    A batch is asked for by the key it follows, not fetched from one query: psycopg holds a whole
    result in memory, and a registry's photos may not fit there.
    """
    kinds = [k for _, k, _ in TABLES[table]]
    last: Any = None
    while True:
        if last is None:
            cur.execute(_select(b, table, after=False))
        else:
            cur.execute(_select(b, table, after=True), (last,))
        batch = cur.fetchall()
        if not batch:
            return
        last = batch[-1][0]
        yield [
            tuple(
                b.load_geom(v) if k == "geom" else b.load("int" if k == "serial" else k, v)
                for k, v in zip(kinds, r, strict=True)
            )
            for r in batch
        ]


def _comparable(kind: str, value: Any) -> Any:
    """Return a value as both back ends give it back: a time to the millisecond in UTC, bytes by their hash.

    A GeoPackage keeps times to the millisecond (its DATETIME); PostgreSQL to the microsecond.
    """
    if value is None:
        return None
    if kind == "datetime" and isinstance(value, datetime):
        t = value.astimezone(timezone.utc)
        return t.replace(microsecond=t.microsecond // 1000 * 1000).isoformat()
    if kind == "date" and isinstance(value, date):
        return value.isoformat()
    if kind == "geom":
        return shapely.to_wkb(value, hex=True, flavor="iso")
    if kind == "blob":
        return hashlib.sha256(bytes(value)).hexdigest()
    if kind == "bool":
        return bool(value)
    if kind in ("int", "serial"):
        return int(value)
    if kind == "real":
        return float(value)
    return value


def _digest_rows(h: Any, table: str, batch: list[tuple[Any, ...]]) -> None:
    kinds = [k for _, k, _ in TABLES[table]]
    for r in batch:
        h.update(repr(tuple(_comparable(k, v) for k, v in zip(kinds, r, strict=True))).encode())


def table_digest(cur: Any, b: Any, table: str) -> str:
    """Return a SHA-256 of ``table``'s rows, keys included, as :func:`_comparable` reads them."""
    h = hashlib.sha256()
    for batch in _rows(cur, b, table):
        _digest_rows(h, table, batch)
    return h.hexdigest()


def _high_water(cur: Any, b: Any, table: str, column: str) -> int:
    """Return the highest key a serial column has given (a removed row's included), 0 for none."""
    if b.dialect == "sqlite":
        cur.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,))
        row = cur.fetchone()
        return int(row[0]) if row and row[0] is not None else 0
    # USAGE on the sequence suffices (a clerk's INSERT grant gives it); NULL until a key was taken.
    cur.execute("SELECT pg_sequence_last_value(pg_get_serial_sequence(%s, %s)::regclass)", (table, column))
    row = cur.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _set_high_water(cur: Any, b: Any, table: str, column: str, value: int) -> None:
    """Make the next key of a serial column follow ``value`` (and every key already written)."""
    cur.execute(f'SELECT COALESCE(MAX("{column}"), 0) FROM "{table}"')
    value = max(value, int(cur.fetchone()[0]))
    if value <= 0:
        return
    if b.dialect == "sqlite":
        cur.execute("DELETE FROM sqlite_sequence WHERE name = ?", (table,))
        cur.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, value))
        return
    cur.execute("SELECT setval(pg_get_serial_sequence(%s, %s), %s, true)", (table, column, value))


def copy_tables(
    src_cur: Any,
    src: Any,
    dst_cur: Any,
    dst: Any,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Copy every row of every table from ``src`` into the empty ``dst``, then check each table reads back the same.

    Parameters
    ----------
    src_cur, dst_cur : cursor
        A read transaction of ``src`` and a write transaction of ``dst`` (the caller's: a failure
        rolls the whole copy back).
    src, dst : Backend
        The two back ends, of either dialect, in one CRS.
    progress : callable, optional
        Called with (rows written, rows in all) after each batch written.

    Returns
    -------
    dict of str to int
        The rows copied, by table (every table, 0 included).

    Raises
    ------
    RegistryError
        If the back ends' CRSs differ, the destination refuses a row, or a table does not read
        back as the source holds it (the caller's transaction is then rolled back).
    """
    if src.srid != dst.srid:
        msg = f"The registries are in EPSG:{src.srid} and EPSG:{dst.srid}; a copy keeps one CRS."
        raise RegistryError(msg)
    if dst.dialect == "sqlite":
        dst_cur.execute("PRAGMA defer_foreign_keys = ON")  # a plan's notice may follow the version naming it
    counts: dict[str, int] = {}
    digests: dict[str, str] = {}
    total = sum(occupied(src_cur, src).values()) if progress is not None else 0
    done = 0
    for table in TABLE_ORDER:
        cols = TABLES[table]
        kinds = [k for _, k, _ in cols]
        values = ", ".join(dst.geom_param() if k == "geom" else dst.ph for k in kinds)
        names = ", ".join(f'"{c}"' for c, _, _ in cols)
        insert = f'INSERT INTO "{table}" ({names}) VALUES ({values})'
        h = hashlib.sha256()
        n = 0
        for batch in _rows(src_cur, src, table):
            _digest_rows(h, table, batch)
            dst_cur.executemany(
                insert,
                [
                    tuple(
                        dst.dump_geom(v) if k == "geom" else dst.dump("int" if k == "serial" else k, v)
                        for k, v in zip(kinds, r, strict=True)
                    )
                    for r in batch
                ],
            )
            n += len(batch)
            done += len(batch)
            if progress is not None:
                progress(done, total)
        counts[table] = n
        digests[table] = h.hexdigest()
        for column, kind, _ in cols:
            if kind == "serial":
                _set_high_water(dst_cur, dst, table, column, _high_water(src_cur, src, table, column))
    differ = [t for t in TABLE_ORDER if table_digest(dst_cur, dst, t) != digests[t]]
    if differ:
        msg = (
            f"The copy of table(s) {', '.join(differ)} does not read back as the source holds it; nothing was "
            "written. Report this as a defect of esc_gis, with both back ends' versions."
        )
        raise RegistryError(msg)
    return counts
