"""Complete a registry's events with the facts of their rows, then rebuild the projections (migration 11).

Before migration 11 every command wrote its rows and its event side by side, and the event held
only what the fold reads; from then on the rows are the projection of the events
(:mod:`.projection`), so each event must carry what its rows hold. Every fact is in the tables,
written in the same transaction as the event: this step copies each into its event (a fee's
resolution, an inspection's report, a case's site and reasons, an appeal's parties, a plan
version's dates, the kind of each event's line in the clerk's log) by the ids the events carry,
or, for rows the events name no id of, in the order both were written. Then it rebuilds every
projection and compares: the migration rolls back, naming them, if any row differs in anything
but a permit's ``updated_at`` (which the projectors take from the last event that touched it).

A permit's ``received`` event gets the permit's facts as the registry holds them at the
migration: their earlier values, where ``permits update`` changed them, are in the update
events' text, as they were.
"""

from __future__ import annotations

__all__ = ["upcast_and_rebuild"]

import json
from collections import defaultdict
from typing import Any

import shapely

from esc_gis.errors import RegistryError
from esc_gis.registry.domain.events import CASE_KINDS, HistoryEvent
from esc_gis.registry.store.projection import FACTS, PLAN_FACTS, PROJECTIONS, REPORT_FACTS, wkb
from esc_gis.registry.store.rebuild import differences, rebuild, table_rows
from esc_gis.registry.store.schema import HISTORY_TABLES, TABLES, append_only_triggers


def _rows(cur: Any, b: Any, table: str, order: str = "") -> list[dict[str, Any]]:
    kinds = {c: ("int" if k == "serial" else k) for c, k, _ in TABLES[table]}
    shown = [b.geom_column(f'"{c}"', c) if k == "geom" else f'"{c}"' for c, k in kinds.items()]
    cur.execute(f'SELECT {", ".join(shown)} FROM "{table}" ORDER BY {order or next(iter(kinds))}')
    return [
        {c: (b.load_geom(v) if kinds[c] == "geom" else b.load(kinds[c], v)) for c, v in zip(kinds, r, strict=True)}
        for r in cur.fetchall()
    ]


def _json(v: Any) -> Any:
    """Return a value as an event's JSON keeps it: dates and times as ISO text, geometry as hex WKB."""
    if isinstance(v, shapely.Geometry):
        return wkb(v)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def _defer_references(cur: Any, b: Any) -> None:
    """PostgreSQL: make every reference of the registry's schema deferrable (a rebuild clears under them)."""
    if b.dialect == "sqlite":
        return
    # The registry's tables by name (the catalog's index), not a scan of every schema's constraints.
    cur.execute(
        "SELECT c.conname, t.relname FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid "
        "WHERE c.contype = 'f' AND t.relname = ANY(%s) AND t.relnamespace = current_schema()::regnamespace "
        "AND NOT c.condeferrable",
        (list(TABLES),),
    )
    for name, table in cur.fetchall():
        cur.execute(f'ALTER TABLE "{table}" ALTER CONSTRAINT "{name}" DEFERRABLE INITIALLY IMMEDIATE')


def upcast_and_rebuild(b: Any, cur: Any) -> None:  # noqa: C901 (one pass per table)
    """Complete every event with its rows' facts, rebuild the projections, and refuse a rebuild that differs.

    Raises
    ------
    RegistryError
        Naming the rows that differ (the registry was changed by hand); the migration rolls back.
    """
    _defer_references(cur, b)
    cur.execute("SELECT id, stream, kind, recorded_at, who, why, data FROM history ORDER BY id")
    events = [
        {"id": int(r[0]), "stream": r[1], "kind": r[2], "at": b.load("datetime", r[3]), "who": r[4], "why": r[5],
         "data": HistoryEvent.from_json_data(r[6]), "log": None}
        for r in cur.fetchall()
    ]  # fmt: skip
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        by_kind[e["kind"]].append(e)

    # The clerk's log: each line is the event written with it (same stream, time, clerk and words).
    waiting: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        waiting[(e["stream"], e["at"], e["who"], e["why"])].append(e)
    for r in _rows(cur, b, "events", "id"):
        found = waiting.get((r["permit_number"], r["at"], r["who"], r["detail"]))
        if found:
            found.pop(0)["log"] = r["kind"]

    permits = {r["permit_number"]: r for r in _rows(cur, b, "permits", "fid")}
    issuing = {e["stream"] for e in events if e["kind"] in ("decided", "approved_on_appeal")}
    limits = {r["permit_number"]: r["geom"] for r in _rows(cur, b, "disturbed_limits", "fid")}
    done: set[str] = set()
    for e in by_kind["received"]:
        p = permits.get(e["stream"])
        if p is None or e["stream"] in done:
            continue
        done.add(e["stream"])
        e["data"]["permit"] = {k: _json(p[k]) for k in FACTS}
        e["data"]["site"] = wkb(p["geom"])
        if limits.get(e["stream"]) is not None:
            e["data"]["disturbed"] = wkb(limits[e["stream"]])
        # The period of validity as the registry holds it (§ 540-8G): the events before migration 11
        # did not carry it, so the permit's first event does, and no later one moves it.
        e["data"]["permit_expires_on"] = _json(p["expires_on"])
        # A permit imported issued and since closed (or revoked, disapproved) kept its day of
        # issuance in the table only: its first event carries it, with its decision's day.
        if e["data"].get("issued_on") is None and p["issued_on"] is not None and e["stream"] not in issuing:
            e["data"].update(issued_on=_json(p["issued_on"]), decided_on=_json(p["decided_on"]))
    # An update that migration 8 read back from the log's text (split at "; ") may hold part of a
    # value: each field's last update takes the value the table holds, which it wrote.
    last: dict[tuple[str, str], dict[str, Any]] = {}
    for e in events:
        if e["kind"] in ("updated", "remeasured"):
            for k in e["data"].get("fields") or {}:
                last[(e["stream"], k)] = e
    for (stream, k), e in last.items():
        p = permits.get(stream)
        if p is not None and k in FACTS:
            e["data"]["fields"][k] = _json(p[k])

    fees = {r["id"]: r for r in _rows(cur, b, "fees")}
    for e in by_kind["fee_paid"]:
        fee = fees.get(e["data"].get("fee_id"))
        if fee is not None:
            e["data"]["schedule_resolution"] = fee["schedule_resolution"]

    # A guarantee's draws and releases, and the costs recovered from it, in the order written.
    moves: dict[tuple[Any, str], list[dict[str, Any]]] = defaultdict(list)
    for r in _rows(cur, b, "guarantee_events"):
        moves[(r["guarantee_id"], r["kind"])].append(r)
    for kind, row_kind in (("guarantee_drawn", "draw"), ("guarantee_released", "release"),
                           ("guarantee_final_release", "final_release")):  # fmt: skip
        for e in by_kind[kind]:
            found = moves.get((e["data"].get("guarantee_id"), row_kind))
            if found:
                r = found.pop(0)
                e["data"].update(event_id=r["id"], reason=r["reason"], stage=r["stage"], engineer=r["engineer"])
    for e in by_kind["costs_recorded"] + by_kind["notice_of_intent"]:
        d = e["data"]
        if d.get("recovered_from") == "guarantee" and d.get("guarantee_id") is not None:
            found = moves.get((d["guarantee_id"], "costs_recovered"))
            if found:
                d["recovery_id"] = found.pop(0)["id"]

    inspections = {r["fid"]: r for r in _rows(cur, b, "inspections")}
    defects = {r["id"]: r for r in _rows(cur, b, "deficiencies")}
    for e in by_kind["inspected"]:
        report = inspections.get(e["data"].get("inspection_id"))
        if report is None:
            continue
        e["data"]["report"] = {k: _json(report[k]) for k in REPORT_FACTS}
        for item in e["data"].get("deficiencies") or ():
            if item.get("id") in defects:
                item["description"] = defects[item["id"]]["description"]
    repairs = {r["deficiency_id"]: r for r in _rows(cur, b, "repairs")}
    for e in by_kind["repaired"]:
        ids = e["data"].get("deficiency_ids") or []
        if ids and ids[0] in repairs:
            e["data"]["detail"] = repairs[ids[0]]["detail"]

    cases = {r["case_id"]: r for r in _rows(cur, b, "enforcement_cases", "fid")}
    for e in by_kind["case_opened"]:
        case = cases.get(e["data"].get("case_id"))
        if case is not None:
            e["data"].update(site_address=case["site_address"], site_ref=case["site_ref"], reasons=case["reasons"],
                             site=wkb(case["geom"]))  # fmt: skip
    # Each line of a case's log is the event written with it; where its words are not the event's
    # (a permit's own move, the case opened on a permit), the event keeps the case's words.
    case_events: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        if e["data"].get("case_id") is not None:
            case_events[(e["data"]["case_id"], e["at"], e["who"], e["kind"])].append(e)
    decided = {e["data"].get("appeal_id"): e for e in by_kind["appeal_decided"]}
    for r in _rows(cur, b, "enforcement_events"):
        found = case_events.get((r["case_id"], r["at"], r["who"], CASE_KINDS[r["kind"]]))
        if found:
            e = found.pop(0)
            if e["why"] != r["detail"]:
                e["data"]["case_detail"] = r["detail"]
            continue
        reversed_by = (r["detail"] or "").removeprefix("appeal ").removesuffix(" reversed")
        if r["kind"] == "retraction" and reversed_by in decided:
            decided[reversed_by]["data"]["case_retraction"] = r["case_id"]

    appeals = {r["appeal_id"]: r for r in _rows(cur, b, "appeals")}
    for e in by_kind["appeal_filed"]:
        appeal = appeals.get(e["data"].get("appeal_id"))
        if appeal is not None:
            e["data"].update(
                {k: appeal[k] for k in ("permit_number", "appealed", "appellant", "appellant_kind", "grounds")}
            )
    # An appeal the tables hold and the history does not (written without its line in the clerk's
    # log): its event is appended now, from its row, so the rebuild keeps it.
    filed = {e["data"].get("appeal_id") for e in by_kind["appeal_filed"]}
    orphans = [r for r in appeals.values() if r["appeal_id"] not in filed and (r["permit_number"] or r["case_id"])]
    for r in orphans:
        stream = r["permit_number"] or r["case_id"]
        facts = {k: r[k] for k in ("appeal_id", "appealed_kind", "case_id", "permit_number", "appealed", "appellant",
                                   "appellant_kind", "grounds")}  # fmt: skip
        cur.execute(f"SELECT COALESCE(MAX(seq), 0) FROM history WHERE stream = {b.ph}", (stream,))
        seq = int(cur.fetchone()[0]) + 1
        cur.execute(
            "INSERT INTO history (stream, seq, kind, recorded_at, who, on_date, at, why, data) "
            f"VALUES ({', '.join([b.ph] * 9)})",
            (stream, seq, "appeal_filed", b.dump("datetime", r["recorded_at"]), r["recorded_by"],
             b.dump("date", r["filed_on"]), None, r["grounds"], json.dumps(facts, sort_keys=True, default=_json)),
        )  # fmt: skip
    decisions = {r["appeal_id"]: r for r in _rows(cur, b, "appeal_decisions")}
    for e in by_kind["appeal_decided"]:
        decision = decisions.get(e["data"].get("appeal_id"))
        if decision is not None:
            e["data"].update(conditions=decision["conditions"], effect=decision["effect"])

    versions = {r["id"]: r for r in _rows(cur, b, "plan_versions")}
    for e in by_kind["plan_original"] + by_kind["plan_amendment"] + by_kind["plan_notice"]:
        key = e["data"].get("notice_id") if e["kind"] == "plan_notice" else e["data"].get("version_id")
        version = versions.get(key)
        if version is not None:
            e["data"]["plan"] = {k: _json(version[k]) for k in PLAN_FACTS}

    # The history is append-only to every command; a migration completes it, in its transaction.
    for statement in append_only_triggers(b.dialect, HISTORY_TABLES, drop=True):
        cur.execute(statement)
    cur.executemany(
        f"UPDATE history SET data = {b.ph}, log = {b.ph} WHERE id = {b.ph}",
        [(json.dumps(e["data"], sort_keys=True, default=_json, ensure_ascii=False), e["log"], e["id"]) for e in events],
    )
    for statement in append_only_triggers(b.dialect, HISTORY_TABLES):
        cur.execute(statement)

    schema = "main" if b.dialect == "sqlite" else "public"
    if b.dialect != "sqlite":
        cur.execute("SELECT current_schema()")
        schema = f'"{cur.fetchone()[0]}"'
    before = {t: table_rows(cur, b, t, schema) for t in PROJECTIONS if t != "decision_clocks"}
    rebuild(cur, b)
    after = {t: table_rows(cur, b, t, schema) for t in PROJECTIONS if t != "decision_clocks"}
    changed = differences(before, after, ignore=("permits.updated_at",))
    if changed:
        shown = "; ".join(str(d) for d in changed[:10])
        more = f" (and {len(changed) - 10} more)" if len(changed) > 10 else ""
        msg = (
            f"Migration 11 would change {len(changed)} row(s) of the tables rebuilding them from the history: "
            f"{shown}{more}. The registry was changed behind its history; it is left as it was."
        )
        raise RegistryError(msg)
