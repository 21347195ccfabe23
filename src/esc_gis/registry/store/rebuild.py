"""Rebuild the projections from the history: in place (``permits rebuild``), or into temporary tables to compare.

:func:`rebuild` clears every projection (:data:`~.projection.PROJECTIONS`) and replays the whole
history through the projectors in one transaction: a failure leaves the tables as they were.
:func:`rebuilt_rows` replays it into temporary tables of the same definitions, which shadow the
registry's own in name lookup (SQLite's ``temp`` schema and PostgreSQL's ``pg_temp`` come first;
the projectors name the schema all the same), reads both back and drops them: the registry is
only read. :func:`differences` compares two such readings table by table.
"""

from __future__ import annotations

__all__ = ["TableDifference", "differences", "rebuild", "rebuilt_rows", "table_rows"]

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import shapely

from esc_gis.registry.store.history import read_in_order
from esc_gis.registry.store.projection import PROJECTIONS, Rows, replay
from esc_gis.registry.store.schema import APPEND_ONLY, TABLES, append_only_triggers, create_table

#: Serial keys no one refers to, given anew when a row is written again: compared without them.
#: Every other key (a fee's, a guarantee's, an inspection report's, a deficiency's, a plan
#: version's) is carried by its event, so a rebuild gives it back.
_FRESH_KEYS = {
    "permits": "fid",
    "disturbed_limits": "fid",
    "decision_clocks": "fid",
    "events": "id",
    "repairs": "id",
    "enforcement_cases": "fid",
    "enforcement_events": "id",
    "appeals": "id",
    "appeal_decisions": "id",
}
#: Each table's natural order, so two readings line up whatever keys they were given.
_ORDER = {
    "permits": "permit_number",
    "disturbed_limits": "permit_number",
    "decision_clocks": "permit_number",
    "events": "permit_number, at, id",
    "repairs": "deficiency_id",
    "enforcement_cases": "case_id",
    "enforcement_events": "case_id, at, id",
    "appeals": "appeal_id",
    "appeal_decisions": "appeal_id",
}


@dataclass(frozen=True)
class TableDifference:
    """A row of a projection that the table and its rebuild from the history do not share."""

    table: str
    key: str
    table_row: dict[str, Any] | None
    rebuilt_row: dict[str, Any] | None

    def __str__(self) -> str:
        if self.rebuilt_row is None:
            return f"{self.table} {self.key}: a row the history does not make"
        if self.table_row is None:
            return f"{self.table} {self.key}: missing, the history makes it"
        changed = sorted(k for k in self.rebuilt_row if self.table_row.get(k) != self.rebuilt_row[k])
        shown = "; ".join(
            f"{k} is {self.table_row.get(k)!r}, the history says {self.rebuilt_row[k]!r}" for k in changed
        )
        return f"{self.table} {self.key}: {shown}"


def _columns(table: str) -> list[tuple[str, str]]:
    skip = _FRESH_KEYS.get(table)
    return [(c, k) for c, k, _ in TABLES[table] if c != skip]


def table_rows(cur: Any, b: Any, table: str, schema: str) -> list[dict[str, Any]]:
    """Return every row of ``schema.table`` as comparable values (geometry as WKB hex), in natural order."""
    cols = _columns(table)
    shown = [b.geom_column(f'"{c}"', c) if k == "geom" else f'"{c}"' for c, k in cols]
    order = _ORDER.get(table, next(c for c, _ in cols))
    cur.execute(f'SELECT {", ".join(shown)} FROM {schema}."{table}" ORDER BY {order}')
    out = []
    for r in cur.fetchall():
        row = {}
        for (c, k), v in zip(cols, r, strict=True):
            if k == "geom":
                g = b.load_geom(v)
                row[c] = None if g is None else shapely.to_wkb(shapely.normalize(g), hex=True)
            elif k == "real":
                row[c] = None if v is None else round(float(v), 6)
            else:
                row[c] = b.load("int" if k == "serial" else k, v)
        out.append(row)
    return out


def _key(table: str, row: dict[str, Any]) -> str:
    first = _ORDER.get(table, next(iter(row))).split(",")[0].strip()
    return f"{first} {row.get(first)}"


def differences(
    tables: dict[str, list[dict[str, Any]]], rebuilt: dict[str, list[dict[str, Any]]], *, ignore: Iterable[str] = ()
) -> list[TableDifference]:
    """Return every row two readings of the projections do not share, table by table.

    ``ignore`` names ``table.column`` pairs left out (a migration's rebuild gives each permit's
    ``updated_at`` by the projectors' rule, not by the clock that once wrote it).
    """
    skip = {tuple(x.split(".", 1)) for x in ignore}
    out = []
    for table in PROJECTIONS:
        have = [{k: v for k, v in r.items() if (table, k) not in skip} for r in tables.get(table, [])]
        want = [{k: v for k, v in r.items() if (table, k) not in skip} for r in rebuilt.get(table, [])]
        unmatched = list(want)
        extra = []
        for r in have:
            if r in unmatched:
                unmatched.remove(r)
            else:
                extra.append(r)
        # Pair a changed row with its rebuild by the table's natural key.
        for r in extra:
            k = _key(table, r)
            twin = next((x for x in unmatched if _key(table, x) == k), None)
            if twin is not None:
                unmatched.remove(twin)
            out.append(TableDifference(table, k, r, twin))
        out += [TableDifference(table, _key(table, r), None, r) for r in unmatched]
    return out


def _defer_references(cur: Any, b: Any) -> None:
    """Check references at the end of the transaction: projections are cleared under rows that refer to them."""
    if b.dialect == "sqlite":
        cur.execute("PRAGMA defer_foreign_keys = ON")
    else:
        cur.execute("SET CONSTRAINTS ALL DEFERRED")


def rebuild(cur: Any, b: Any) -> int:
    """Clear every projection and replay the history into it (inside the caller's write transaction).

    The append-only triggers of the projections are lifted for the clearing and put back: the
    history keeps its own throughout. Returns the number of events replayed.

    Raises
    ------
    RegistryError
        If the back end refuses (a role that does not own the tables).
    """
    _defer_references(cur, b)
    lifted = [t for t in APPEND_ONLY if t in PROJECTIONS]
    for statement in append_only_triggers(b.dialect, lifted, drop=True):
        cur.execute(statement)
    for table in reversed(PROJECTIONS):
        cur.execute(f'DELETE FROM "{table}"')
    n = replay(Rows(cur, b), read_in_order(cur, b))
    for statement in append_only_triggers(b.dialect, lifted):
        cur.execute(statement)
    return n


def _schema(cur: Any, b: Any) -> str:
    if b.dialect == "sqlite":
        return "main"
    cur.execute("SELECT current_schema()")
    return f'"{cur.fetchone()[0]}"'


def rebuilt_rows(cur: Any, b: Any) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """Return the projections as stored and as the history rebuilds them (in temporary tables, then dropped).

    Raises
    ------
    RegistryError
        If the back end refuses temporary tables.
    """
    live = _schema(cur, b)
    temp = "temp" if b.dialect == "sqlite" else "pg_temp"
    try:
        for table in PROJECTIONS:
            cur.execute(create_table(b.dialect, table, b.srid).replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
        replay(Rows(cur, b, temp), read_in_order(cur, b))
        stored = {t: table_rows(cur, b, t, live) for t in PROJECTIONS}
        rebuilt = {t: table_rows(cur, b, t, temp) for t in PROJECTIONS}
    finally:
        for table in reversed(PROJECTIONS):
            cur.execute(f'DROP TABLE IF EXISTS {temp}."{table}"')
    return stored, rebuilt
