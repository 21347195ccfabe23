"""Replay a registry written before the history (schema 7 and older) into its history (migration 8).

Every fact such a registry holds is in its tables: the clerk's log (``events``) with the moves,
and the side tables with what each entry was about (fees, guarantees and their events,
inspections, deficiencies and repairs, cases and their events, appeals, plan versions). Each
log entry becomes its typed event (:func:`esc_gis.registry.domain.events.typed`), with the facts of its
kind taken from the row it was written with: the side tables' rows of a permit are matched to
its log entries of that kind in the order both were written. A case without a permit, whose
events were never in the log, gets a stream of its own from ``enforcement_events``. Events keep
the time they were recorded, so each stream is in the order the office wrote it.
"""

from __future__ import annotations

__all__ = ["replay_into_history"]

import re
from collections import defaultdict
from datetime import date, datetime
from typing import Any

from esc_gis.registry.domain.events import CASE_KINDS, HistoryEvent
from esc_gis.registry.domain.records import Event

#: Clerk's-log kinds and the side table whose rows (of the same permit, in order) they were written with.
_SIDE = {
    "fee": "fees",
    "guarantee": "guarantees",
    "guarantee_draw": "guarantee_events:draw",
    "guarantee_release": "guarantee_events:release",
    "guarantee_final_release": "guarantee_events:final_release",
    "enforcement": "enforcement_cases",
    "appeal": "appeals",
    "appeal_decision": "appeal_decisions",
    "plan_original": "plan_versions:approved",
    "plan_amendment": "plan_versions:approved",
    "plan_notice": "plan_versions:requested",
}
_REPORT = re.compile(r"^inspection report #(\d+)")
_REPAIRED = re.compile(r"#(\d+)")
_ISSUED = ("approved", "deemed_approved", "active", "extended", "stop_work", "suspended", "final_stabilization")


def _table(backend: Any, cur: Any, table: str, kinds: dict[str, str], order: str | None = None) -> list[dict[str, Any]]:
    cols = list(kinds)
    order = order or cols[0]  # the key, in the order rows were written
    cur.execute(f"SELECT {', '.join(chr(34) + c + chr(34) for c in cols)} FROM {table} ORDER BY {order}")
    return [{c: backend.load(kinds[c], v) for c, v in zip(cols, r, strict=True)} for r in cur.fetchall()]


def _kinds(table: str) -> dict[str, str]:
    from esc_gis.registry.store.schema import INSPECTION_COLUMNS_V9, PERMIT_COLUMNS_V12, TABLES

    # Columns of migrations that come after this replay (migration 8): not there yet.
    later = {"inspections": {c for c, _, _ in INSPECTION_COLUMNS_V9}, "permits": {c for c, _, _ in PERMIT_COLUMNS_V12}}
    return {
        c: ("int" if k == "serial" else k)
        for c, k, _ in TABLES[table]
        if k != "geom" and c != "data" and c not in later.get(table, ())
    }


def _value(text: str) -> Any:
    """Read back a value an ``update`` entry wrote with ``str()``: a date, a time, None or text."""
    text = text.strip()
    if text == "None":
        return None
    for parse in (date.fromisoformat, datetime.fromisoformat):
        try:
            return parse(text)
        except ValueError:
            continue
    return text


def _fields(detail: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in (detail or "").split("; "):
        name, sep, change = part.partition(": ")
        if sep and " -> " in change:
            out[name.strip()] = _value(change.split(" -> ", 1)[1])
    return out


def replay_into_history(backend: Any, cur: Any) -> None:  # noqa: C901 (one pass per table)
    """Append, to each stream, the typed events its tables recorded, in the order recorded.

    Raises
    ------
    RegistryError
        If a row cannot be placed (the registry was changed by hand); the migration rolls back.
    """
    from esc_gis.registry.domain.events import typed  # the one translation live writes use too

    tables = {t: _table(backend, cur, t, _kinds(t)) for t in (
        "fees", "guarantees", "guarantee_events", "enforcement_cases", "enforcement_events", "appeals",
        "appeal_decisions", "plan_versions", "inspections", "deficiencies", "repairs", "inspection_photos",
    )}  # fmt: skip
    permits = {r["permit_number"]: r for r in _table(backend, cur, "permits", _kinds("permits"), "fid")}
    log = _table(backend, cur, "events", _kinds("events"))
    # Side rows per permit and log kind, oldest first: popped as their log entries come.
    side: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    guarantee_of = {g["id"]: g["permit_number"] for g in tables["guarantees"]}
    appeals = {a["appeal_id"]: a for a in tables["appeals"]}
    for kind, spec in _SIDE.items():
        table, _, sub = spec.partition(":")
        for r in tables[table]:
            if table == "guarantee_events" and r["kind"] != sub:
                continue
            if table == "plan_versions" and r["status"] != sub:
                continue
            if (
                table == "plan_versions"
                and sub == "approved"
                and (r["trigger_code"] == "original") != (kind == "plan_original")
            ):
                continue
            number = r.get("permit_number") or appeals.get(r.get("appeal_id"), {}).get("permit_number")
            if number:
                side[(number, kind)].append(r)
    defs = defaultdict(list)
    for d in tables["deficiencies"]:
        defs[d["inspection_id"]].append(d)
    repairs_by_inspection = defaultdict(list)
    repairs_by_id = {r["deficiency_id"]: r for r in tables["repairs"]}
    for r in tables["repairs"]:
        if r["inspection_id"] is not None:
            repairs_by_inspection[r["inspection_id"]].append(r["deficiency_id"])
    photos = defaultdict(list)
    for ph in tables["inspection_photos"]:
        photos[ph["inspection_id"]].append(ph["sha256"])
    inspections = {i["fid"]: i for i in tables["inspections"]}
    cur.execute("SELECT fid FROM inspections WHERE geom IS NOT NULL")
    located = {int(r[0]) for r in cur.fetchall()}
    decided = {d["appeal_id"]: d for d in tables["appeal_decisions"]}

    out: list[tuple[datetime, int, HistoryEvent]] = []
    for row in log:
        number = row["permit_number"]
        e = Event(**{k: row[k] for k in ("at", "who", "kind", "from_status", "to_status", "on_date", "days", "detail")})
        data: dict[str, Any] = {}
        when = None
        p = permits.get(number, {})
        if e.kind in ("received", "imported"):
            issued = e.to_status in _ISSUED
            data = {"issued_on": p.get("issued_on") if issued else None}
            data["started_at"] = (
                p.get("started_at") if e.to_status not in ("approved", "deemed_approved") and issued else None
            )
            when = data["started_at"]
        elif e.kind == "transition" and e.to_status == "active" and e.from_status in ("approved", "deemed_approved"):
            when = p.get("started_at")
        elif e.kind == "update":
            data = {"fields": _fields(e.detail)}
        elif e.kind == "remeasured":
            data = {"fields": {}}
        elif e.kind == "inspection":
            m = _REPORT.match(e.detail or "")
            # Who inspected was not recorded before migration 9: None, which the fold reads as the
            # permit holder's (fold.UNRECORDED_BY), as the office counted it when recorded.
            data = {"by": None}
            if m:
                fid = int(m.group(1))
                i = inspections[fid]
                when = i["inspected_at"]
                data.update(
                    inspection_id=fid,
                    deficiencies=[{"id": d["id"], "notified_at": d["notified_at"]} for d in defs[fid]],
                    repaired=repairs_by_inspection[fid],
                    photos=photos[fid],
                    # What the report holds of § 540-8E(6)'s list beyond its time, name and assessment.
                    contents=[k for k, v in (("location", fid in located), ("work_done", i["work_done"]),
                              ("phase", i["phase"])) if v],
                )  # fmt: skip
        elif e.kind == "repair":
            ids = [int(x) for x in _REPAIRED.findall((e.detail or "").split(":", 1)[0])]
            data = {"deficiency_ids": ids}
            when = repairs_by_id[ids[0]]["repaired_at"] if ids and ids[0] in repairs_by_id else None
        elif e.kind in _SIDE:
            rows = side[(number, e.kind)]
            r = rows.pop(0) if rows else {}
            data = _side_data(e.kind, r, decided)
        if e.detail and e.detail.startswith("case ") and e.kind in ("transition", "retraction"):
            data["case_id"] = e.detail[5:].split(":", 1)[0]
        out.append((e.at, row["id"], typed(number, e, when=when, **data)))

    # What the clerk's log never held: a permitted case's own events (but its order's moves,
    # which the log has), and everything of a case without a permit, on the case's stream.
    case_permit = {c["case_id"]: c["permit_number"] for c in tables["enforcement_cases"]}
    grounds = {c["case_id"]: c["ground"] for c in tables["enforcement_cases"]}
    state: dict[str, str | None] = {}
    for ce in tables["enforcement_events"]:
        case_id, kind = ce["case_id"], ce["kind"]
        number = case_permit.get(case_id)
        if number and kind in ("opened", "stop_work", "retraction"):
            continue
        data = {"case_id": case_id}
        if kind == "opened":
            data["ground"] = grounds[case_id]
        if kind == "costs" or (kind == "notice" and ce["costs"] is not None):
            data.update(amount=ce["costs"], recovered_from=ce["costs_from"])
        if not number and kind in ("stop_work", "retraction"):
            data.update({"from": state.get(case_id), "to": "stop_work" if kind == "stop_work" else "retracted"})
            state[case_id] = data["to"]
        h = HistoryEvent(number or case_id, CASE_KINDS[kind], ce["at"], ce["who"], on=ce["on_date"],
                         why=ce["detail"], data=data)  # fmt: skip
        out.append((ce["at"], 10**9 + ce["id"], h))
    for a in tables["appeals"]:
        if a["permit_number"]:
            continue
        facts = {"appeal_id": a["appeal_id"], "appealed_kind": a.get("appealed_kind"), "case_id": a["case_id"]}
        out.append((a["recorded_at"], 2 * 10**9 + a["id"], HistoryEvent(
            a["case_id"], "appeal_filed", a["recorded_at"], a["recorded_by"], on=a["filed_on"], why=a["grounds"],
            data=facts)))  # fmt: skip
        dec = decided.get(a["appeal_id"])
        if dec:
            d = dec
            facts = {"appeal_id": a["appeal_id"], "outcome": d["outcome"], "body": d["body"]}
            out.append((d["recorded_at"], 3 * 10**9 + d["id"], HistoryEvent(
                a["case_id"], "appeal_decided", d["recorded_at"], d["recorded_by"], on=d["decided_on"],
                why=d.get("effect"), data=facts)))  # fmt: skip

    out.sort(key=lambda t: (t[0], t[1]))
    seqs: dict[str, int] = defaultdict(int)
    ph = backend.ph
    rows_out = []
    for _, _, h in out:
        seqs[h.stream] += 1
        rows_out.append((
            h.stream, seqs[h.stream], h.kind, backend.dump("datetime", h.recorded_at), h.who,
            backend.dump("date", h.on), backend.dump("datetime", h.when), h.why, h.data_json(),
        ))  # fmt: skip
    if rows_out:
        cur.executemany(
            "INSERT INTO history (stream, seq, kind, recorded_at, who, on_date, at, why, data) "
            f"VALUES ({', '.join([ph] * 9)})",
            rows_out,
        )
    _ = guarantee_of


def _side_data(kind: str, r: dict[str, Any], decided: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Return the facts of a log entry of ``kind`` from the side-table row ``r`` it was written with."""
    if kind == "fee":
        return {
            "fee_id": r.get("id"),
            "fee_kind": r.get("kind"),
            "amount": r.get("amount"),
            "receipt": r.get("receipt"),
        }
    if kind == "guarantee":
        return {"guarantee_id": r.get("id"), "type": r.get("type"), "amount": r.get("amount"),
                "expires_on": r.get("expires_on")}  # fmt: skip
    if kind.startswith("guarantee_"):
        return {"guarantee_id": r.get("guarantee_id"), "amount": r.get("amount")}
    if kind == "enforcement":
        return {"case_id": r.get("case_id"), "ground": r.get("ground")}
    if kind == "appeal":
        return {"appeal_id": r.get("appeal_id"), "appealed_kind": r.get("appealed_kind"), "case_id": r.get("case_id")}
    if kind == "appeal_decision":
        return {"appeal_id": r.get("appeal_id"), "outcome": r.get("outcome"), "body": r.get("body")}
    if kind == "plan_notice":
        return {"notice_id": r.get("id"), "trigger": r.get("trigger_code")}
    return {"version": r.get("version"), "version_id": r.get("id"), "trigger": r.get("trigger_code"),
            "notice_id": r.get("notice_id"), "plan_sha256": r.get("plan_sha256")}  # fmt: skip
