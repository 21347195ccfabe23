"""One projector per table: the only code that writes the tables people open.

A command checks itself against a stream's folded state and appends events (:mod:`.uow`);
nothing else. Each event, once stored, goes through every projector here, in the same
transaction and on both back ends, and each projector writes the rows of its one table that
the event makes. :func:`replay` sends a whole history through them: ``permits rebuild``
recreates every table that way, ``permits verify`` rebuilds into temporary tables and
compares (:mod:`esc_gis.registry.views.verify`), and migration 11 rebuilds a registry whose
events it has just completed (:mod:`.upcast`).

An event carries every fact its rows hold (:mod:`esc_gis.registry.domain.events`); where a
column is the history's reading (a permit's status and dates, its expiry, its decision
clock) the projector takes it from :func:`~esc_gis.registry.domain.fold.fold`.

Not projections, and written by the unit of work itself: ``history`` (the facts),
``parties`` (contact details: the inspector's role reads the history, never them),
``inspection_photos`` (a photo's bytes, checked by its SHA-256 in the event) and
``permit_counters`` (the numbers taken).
"""

from __future__ import annotations

__all__ = ["PROJECTIONS", "Context", "Rows", "project", "replay"]

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from esc_gis._lazy import lazy_module
from esc_gis.registry.domain.events import CASE_KINDS, HistoryEvent
from esc_gis.registry.domain.fold import PermitState, fold
from esc_gis.registry.store.schema import PERMIT_COLUMNS, TABLES

#: The tables the projectors write, parents before children (the order rows are written and
#: the reverse of the order they are cleared in).
PROJECTIONS = (
    "permits",
    "disturbed_limits",
    "decision_clocks",
    "events",
    "fees",
    "guarantees",
    "guarantee_events",
    "inspections",
    "deficiencies",
    "repairs",
    "enforcement_cases",
    "enforcement_events",
    "appeals",
    "appeal_decisions",
    "plan_versions",
)
#: The permit's columns the life cycle sets: the history's fold says each.
LIFECYCLE = (
    "status",
    "received_on",
    "information_requested_on",
    "information_received_on",
    "decided_on",
    "issued_on",
    "started_at",
    "final_on",
)
#: The permit's columns that ``received`` carries and ``updated``/``remeasured`` change.
FACTS = tuple(
    n for n, _, _ in PERMIT_COLUMNS if n not in (*LIFECYCLE, "fid", "permit_number", "geom", "expires_on", "updated_at")
)
#: The concerns whose events touch the permit's record (its ``updated_at``).
_TOUCHING = ("intake", "lifecycle", "inspections")
#: A case event's kind in ``enforcement_events``, by its history kind.
_CASE_ROW = {v: k for k, v in CASE_KINDS.items()}
#: A guarantee event's kind in ``guarantee_events``, by its history kind.
_GUARANTEE_ROW = {
    "guarantee_drawn": "draw",
    "guarantee_released": "release",
    "guarantee_final_release": "final_release",
}

if TYPE_CHECKING:
    import shapely
else:
    # Loaded on first use: listing, showing and the due dates read no geometry, and start without it.
    shapely = lazy_module("shapely")


def wkb(geom: shapely.Geometry | None) -> str | None:
    """Return ``geom`` as hex WKB, how an event carries a geometry (None stays None)."""
    return None if geom is None else shapely.to_wkb(geom, hex=True)


def _geom(text: str | None) -> shapely.Geometry | None:
    return None if text is None else shapely.from_wkb(text)


def _value(kind: str, v: Any) -> Any:
    """Return a fact as read back from an event's JSON as the column's kind wants it."""
    if v is None:
        return None
    if kind == "date" and isinstance(v, str):
        return date.fromisoformat(v)
    if kind == "datetime" and isinstance(v, str):
        return datetime.fromisoformat(v)
    if kind == "geom" and isinstance(v, str):
        return _geom(v)
    return v


class Rows:
    """Typed rows on one cursor: what a projector writes with, and nothing else does.

    Parameters
    ----------
    cur : cursor
        Inside the caller's write transaction.
    backend : Backend
        For the placeholders and how each kind of value is stored.
    schema : str, optional
        The schema the tables are in (``temp`` or ``pg_temp`` for a rebuild aside); default the
        registry's. Named in every statement, never left to name lookup: a driver that prepares
        statements (psycopg) must not reuse one made for the other tables.
    """

    def __init__(self, cur: Any, backend: Any, schema: str | None = None) -> None:
        self.cur = cur
        self.b = backend
        self.schema = schema

    def _table(self, table: str) -> str:
        return f'{self.schema}."{table}"' if self.schema else f'"{table}"'

    def _kinds(self, table: str) -> dict[str, str]:
        return {c: ("int" if k == "serial" else k) for c, k, _ in TABLES[table]}

    def _param(self, kind: str) -> str:
        return self.b.geom_param() if kind == "geom" else self.b.ph

    def _dump(self, kind: str, v: Any) -> Any:
        v = _value(kind, v)
        return self.b.dump_geom(v) if kind == "geom" else self.b.dump(kind, v)

    def insert(self, table: str, values: Mapping[str, Any]) -> None:
        """Insert one row of ``table`` (columns left out are NULL, or the next id)."""
        kinds = self._kinds(table)
        cols = [c for c in values if c in kinds]
        self.cur.execute(
            f"INSERT INTO {self._table(table)} ({', '.join(chr(34) + c + chr(34) for c in cols)}) "
            f"VALUES ({', '.join(self._param(kinds[c]) for c in cols)})",
            tuple(self._dump(kinds[c], values[c]) for c in cols),
        )

    def update(self, table: str, key: Mapping[str, Any], values: Mapping[str, Any]) -> None:
        """Set ``values`` on the rows of ``table`` whose columns equal ``key``."""
        if not values:
            return
        kinds = self._kinds(table)
        sets = ", ".join(f'"{c}" = {self._param(kinds[c])}' for c in values)
        where = " AND ".join(f'"{c}" = {self.b.ph}' for c in key)
        self.cur.execute(
            f"UPDATE {self._table(table)} SET {sets} WHERE {where}",
            (*(self._dump(kinds[c], v) for c, v in values.items()), *(self._dump(kinds[c], v) for c, v in key.items())),
        )

    def delete(self, table: str, key: Mapping[str, Any]) -> None:
        """Remove the rows of ``table`` whose columns equal ``key``."""
        where = " AND ".join(f'"{c}" = {self.b.ph}' for c in key)
        kinds = self._kinds(table)
        self.cur.execute(
            f"DELETE FROM {self._table(table)} WHERE {where}", tuple(self._dump(kinds[c], v) for c, v in key.items())
        )

    def one(self, table: str, key: Mapping[str, Any], cols: Iterable[str]) -> dict[str, Any] | None:
        """Return the columns ``cols`` of the one row of ``table`` with ``key``, read back, or None."""
        kinds = self._kinds(table)
        cols = list(cols)
        where = " AND ".join(f'"{c}" = {self.b.ph}' for c in key)
        shown = [self.b.geom_column(f'"{c}"', c) if kinds[c] == "geom" else f'"{c}"' for c in cols]
        self.cur.execute(
            f"SELECT {', '.join(shown)} FROM {self._table(table)} WHERE {where}",
            tuple(self._dump(kinds[c], v) for c, v in key.items()),
        )
        row = self.cur.fetchone()
        if row is None:
            return None
        return {
            c: self.b.load_geom(v) if kinds[c] == "geom" else self.b.load(kinds[c], v)
            for c, v in zip(cols, row, strict=True)
        }


@dataclass
class Context:
    """What a projector may read besides the event: the stream's fold.

    ``events`` holds the stream's events up to and including the one projected (the unit of
    work keeps them); :attr:`state` folds them once. Nothing of the profile: every figure the
    law sets (an expiry) comes in the event that set it, so a later reading moves no row.
    """

    events: list[HistoryEvent] = field(default_factory=list)
    _state: PermitState | None = None

    @property
    def state(self) -> PermitState:
        """The stream's state after the event projected."""
        if self._state is None:
            from esc_gis.registry.domain.fees import APPLICATION_FEE

            self._state = fold(self.events, application_fee=APPLICATION_FEE)
        return self._state


# --- The permit -------------------------------------------------------------------------------


def _permits(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    d = e.data
    if e.kind == "received":
        facts = dict(d.get("permit") or {})
        w.insert(
            "permits",
            {
                "permit_number": e.stream,
                **{k: facts.get(k) for k in FACTS},
                "status": d["to"],
                "received_on": e.on,
                "updated_at": e.recorded_at,
                "geom": d.get("site"),
            },
        )
    row = w.one("permits", {"permit_number": e.stream}, (*LIFECYCLE, *FACTS, "expires_on"))
    if row is None:
        return  # a case without a permit
    s = ctx.state
    want: dict[str, Any] = {c: getattr(s, c) for c in LIFECYCLE}
    kinds = {n: k for n, k, _ in PERMIT_COLUMNS}
    if e.kind in ("updated", "remeasured", "determined", "determination_reversed"):
        want.update({k: _value(kinds[k], v) for k, v in d["fields"].items() if k in FACTS})
    if "permit_expires_on" in d:
        # The period of validity as the command that set it computed it (§ 540-8G): a later reading
        # of the profile moves no permit's expiry; verify names one that reads otherwise now.
        want["expires_on"] = d["permit_expires_on"]
    changes = {c: v for c, v in want.items() if row[c] != v}
    from esc_gis.registry.domain.events import KINDS

    # Only a move or an event of the permit's record changes its row (the fold's columns, its facts).
    if e.moves or KINDS[e.kind].concern in _TOUCHING:
        w.update("permits", {"permit_number": e.stream}, {**changes, "updated_at": e.recorded_at})


def _disturbed_limits(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    """Write the limits drawn with the application, or measured anew (``remeasured`` with its ``disturbed``)."""
    d = e.data
    if e.kind == "received" and d.get("disturbed") is not None:
        w.insert("disturbed_limits", {"permit_number": e.stream, "geom": d["disturbed"]})
    elif e.kind == "remeasured" and "disturbed" in d:
        if w.one("disturbed_limits", {"permit_number": e.stream}, ("permit_number",)):
            w.update("disturbed_limits", {"permit_number": e.stream}, {"geom": d["disturbed"]})
        else:
            w.insert("disturbed_limits", {"permit_number": e.stream, "geom": d["disturbed"]})


def _decision_clocks(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    """Write the decision clock of § 540-8C: the day it runs from and the event that started it, or none."""
    if e.kind == "received":
        w.insert("decision_clocks", {"permit_number": e.stream})
    row = w.one("decision_clocks", {"permit_number": e.stream}, ("starts_on", "seq", "event"))
    if row is None:
        return
    c = ctx.state.decision_clock
    want = {"starts_on": None, "seq": None, "event": None} if c is None else {"starts_on": c.start, "seq": c.seq,
                                                                            "event": c.event}  # fmt: skip
    if want != row:
        w.update("decision_clocks", {"permit_number": e.stream}, want)


def _events(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    """Write the clerk's log: one line for each event the log holds (``log``), as the office read it."""
    if e.log is None:
        return
    # Only a move carries its states ("from", "to"); one that keeps the state (an extension of a
    # suspended permit) is no move in the log: a later retraction goes back past it.
    to = e.data.get("to")
    if to is not None and to == e.data.get("from"):
        to = None
    w.insert(
        "events",
        {
            "permit_number": e.stream,
            "at": e.recorded_at,
            "who": e.who,
            "kind": e.log,
            "from_status": e.data.get("from"),
            "to_status": to,
            "on_date": e.on,
            "days": e.data.get("days") if e.log == "extension" else None,
            "detail": e.why,
        },
    )


# --- Money ---------------------------------------------------------------------------------------


def _fees(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    if e.kind != "fee_paid":
        return
    d = e.data
    w.insert(
        "fees",
        {
            "id": d["fee_id"],
            "permit_number": e.stream,
            "kind": d["fee_kind"],
            "amount": float(d["amount"]),
            "paid_on": e.on,
            "receipt": d["receipt"],
            "schedule_resolution": d.get("schedule_resolution"),
            "recorded_by": e.who,
            "recorded_at": e.recorded_at,
        },
    )


def _guarantees(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    if e.kind != "guarantee_received":
        return
    d = e.data
    w.insert(
        "guarantees",
        {
            "id": d["guarantee_id"],
            "permit_number": e.stream,
            "type": d["type"],
            "amount": float(d["amount"]),
            "received_on": e.on,
            "expires_on": d.get("expires_on"),
            "recorded_by": e.who,
            "recorded_at": e.recorded_at,
        },
    )


def _guarantee_events(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    d = e.data
    base = {"guarantee_id": d.get("guarantee_id"), "permit_number": e.stream, "on_date": e.on,
            "recorded_by": e.who, "recorded_at": e.recorded_at}  # fmt: skip
    if e.kind in _GUARANTEE_ROW:
        w.insert(
            "guarantee_events",
            {**base, "id": d.get("event_id"), "kind": _GUARANTEE_ROW[e.kind], "amount": d.get("amount"),
             "reason": d.get("reason"), "stage": d.get("stage"), "engineer": d.get("engineer")},
        )  # fmt: skip
    elif e.kind in ("costs_recorded", "notice_of_intent") and d.get("recovery_id") is not None:
        # § 540-12E: the office's costs and their interest recovered from the guarantee, beside its
        # draws and releases (the fold takes them off its balance from the costs event itself).
        interest = d.get("interest")
        w.insert(
            "guarantee_events",
            {**base, "id": d["recovery_id"], "kind": "costs_recovered",
             "amount": round(float(d.get("amount") or 0.0) + float(interest or 0.0), 2),
             "reason": f"case {d['case_id']}: the office's costs"
             + (f" plus interest {float(interest):,.2f}" if interest is not None else "")},
        )  # fmt: skip


# --- Inspections ------------------------------------------------------------------------------


def _inspections(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    d = e.data
    if e.kind != "inspected" or d.get("inspection_id") is None:
        return  # a day alone: the report stays at the site
    r = d.get("report") or {}
    w.insert(
        "inspections",
        {"fid": d["inspection_id"], "permit_number": e.stream, "inspected_at": e.when, "recorded_by": e.who,
         "recorded_at": e.recorded_at, **{k: r.get(k) for k in REPORT_FACTS}},
    )  # fmt: skip


#: The inspection report's columns an ``inspected`` event carries in its ``report``.
REPORT_FACTS = ("inspector", "assessment", "work_done", "phase", "geom", "inspected_by", "pre_start",
                "adjoining_repairs", "on_site_documents", "certificate_posted")  # fmt: skip


def _deficiencies(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    if e.kind != "inspected":
        return
    for item in e.data.get("deficiencies") or ():
        w.insert(
            "deficiencies",
            {"id": item["id"], "inspection_id": e.data["inspection_id"], "permit_number": e.stream,
             "description": item.get("description"), "notified_at": item.get("notified_at")},
        )  # fmt: skip


def _repairs(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    if e.kind == "inspected":
        ids, inspection, detail = e.data.get("repaired") or (), e.data.get("inspection_id"), None
    elif e.kind == "repaired":
        ids, inspection, detail = e.data["deficiency_ids"], None, e.data.get("detail")
    else:
        return
    for i in ids:
        w.insert(
            "repairs",
            {"deficiency_id": int(i), "permit_number": e.stream, "repaired_at": e.when, "inspection_id": inspection,
             "detail": detail, "recorded_by": e.who, "recorded_at": e.recorded_at},
        )  # fmt: skip


# --- Enforcement and appeals ------------------------------------------------------------------


def _enforcement_cases(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    if e.kind != "case_opened":
        return
    d = e.data
    w.insert(
        "enforcement_cases",
        {"case_id": d["case_id"], "permit_number": None if e.stream == d["case_id"] else e.stream,
         "site_address": d.get("site_address"), "site_ref": d.get("site_ref"), "ground": d["ground"],
         "opened_on": e.on, "reasons": d.get("reasons") or "", "opened_by": e.who, "opened_at": e.recorded_at,
         "geom": d.get("site")},
    )  # fmt: skip


def _enforcement_events(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    """Write a case's log: its events on its stream or its permit's, and an order an appeal's reversal retracted."""
    d = e.data
    if e.kind == "appeal_decided" and d.get("case_retraction"):
        w.insert("enforcement_events", {"case_id": d["case_retraction"], "at": e.recorded_at, "who": e.who,
                                        "kind": "retraction", "on_date": e.on,
                                        "detail": f"appeal {d['appeal_id']} reversed"})  # fmt: skip
        return
    kind = _CASE_ROW.get(e.kind)
    if kind is None or d.get("case_id") is None:
        return
    costs = d.get("amount") if kind in ("costs", "notice", "paid") else None
    w.insert(
        "enforcement_events",
        {"case_id": d["case_id"], "at": e.recorded_at, "who": e.who, "kind": kind, "on_date": e.on,
         "costs": None if costs is None else float(costs),
         "costs_from": d.get("recovered_from") if kind in ("costs", "notice") and "recovered_from" in d
         else d.get("costs_from"),
         # A permit's own event (its move, the case opened on it) says it in the permit's words.
         "detail": d["case_detail"] if "case_detail" in d else e.why},
    )  # fmt: skip


def _appeals(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    if e.kind != "appeal_filed":
        return
    d = e.data
    w.insert(
        "appeals",
        {"appeal_id": d["appeal_id"], "permit_number": d.get("permit_number"), "case_id": d.get("case_id"),
         "appealed": d.get("appealed"), "appellant": d.get("appellant"), "appellant_kind": d.get("appellant_kind"),
         "filed_on": e.on, "grounds": d.get("grounds"), "recorded_by": e.who, "recorded_at": e.recorded_at,
         "appealed_kind": d.get("appealed_kind")},
    )  # fmt: skip


def _appeal_decisions(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    if e.kind != "appeal_decided":
        return
    d = e.data
    w.insert(
        "appeal_decisions",
        {"appeal_id": d["appeal_id"], "decided_on": e.on, "body": d["body"], "outcome": d["outcome"],
         "conditions": d.get("conditions"), "effect": d.get("effect"), "recorded_by": e.who,
         "recorded_at": e.recorded_at},
    )  # fmt: skip


# --- The plan ------------------------------------------------------------------------------------

#: The plan version's columns a plan event carries in its ``plan``.
PLAN_FACTS = ("description", "plan_date", "requested_by", "requested_on", "permission_on", "permission_by",
              "effective_on", "plan_file")  # fmt: skip


def _plan_versions(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    d = e.data
    if e.kind in ("plan_original", "plan_amendment"):
        row = {"id": d["version_id"], "version": d["version"], "trigger_code": d["trigger"], "status": "approved",
               "notice_id": d.get("notice_id"), "plan_sha256": d.get("plan_sha256")}  # fmt: skip
    elif e.kind == "plan_notice":
        row = {"id": d["notice_id"], "version": None, "trigger_code": d["trigger"], "status": "requested"}
    else:
        return
    plan = d.get("plan") or {}
    w.insert("plan_versions", {**row, "permit_number": e.stream, **{k: plan.get(k) for k in PLAN_FACTS},
                               "recorded_by": e.who, "recorded_at": e.recorded_at})  # fmt: skip


#: One projector per table, in :data:`PROJECTIONS`' order.
PROJECTORS: dict[str, Callable[[Rows, HistoryEvent, Context], None]] = {
    "permits": _permits,
    "disturbed_limits": _disturbed_limits,
    "decision_clocks": _decision_clocks,
    "events": _events,
    "fees": _fees,
    "guarantees": _guarantees,
    "guarantee_events": _guarantee_events,
    "inspections": _inspections,
    "deficiencies": _deficiencies,
    "repairs": _repairs,
    "enforcement_cases": _enforcement_cases,
    "enforcement_events": _enforcement_events,
    "appeals": _appeals,
    "appeal_decisions": _appeal_decisions,
    "plan_versions": _plan_versions,
}
assert tuple(PROJECTORS) == PROJECTIONS


def project(w: Rows, e: HistoryEvent, ctx: Context) -> None:
    """Write the rows ``e`` makes in every projection (``ctx.events`` ends with ``e``)."""
    for projector in PROJECTORS.values():
        projector(w, e, ctx)


def replay(w: Rows, events: Iterable[HistoryEvent]) -> int:
    """Project every event of a history, oldest first (by the order stored); return how many.

    The caller clears the projections first (``permits rebuild``) or writes into empty ones
    (``verify``'s temporary tables, a migration).
    """
    streams: dict[str, list[HistoryEvent]] = {}
    n = 0
    for e in events:
        seen = streams.setdefault(e.stream, [])
        seen.append(e)
        project(w, e, Context(list(seen)))
        n += 1
    return n
