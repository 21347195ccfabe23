"""The projectors, pure: each event's rows, by hand (issue 37).

A projector writes through :class:`~esc_gis.registry.store.projection.Rows`; here a stand-in
keeps the rows in memory, typed as the tables type them, so each rule is checked without a
database: which table an event writes, which columns, and that it writes nothing elsewhere.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
import shapely

from esc_gis.registry.domain.events import HistoryEvent
from esc_gis.registry.store.projection import PROJECTIONS, Context, _value, project, replay, wkb
from esc_gis.registry.store.schema import TABLES

AT = datetime(2026, 11, 2, 15, tzinfo=timezone.utc)
SITE = shapely.MultiPolygon([shapely.box(0, 0, 100, 50)])
LIMITS = shapely.MultiPolygon([shapely.box(0, 0, 60, 50)])


class MemoryRows:
    """The tables in memory: what :class:`Rows` would write, typed by the tables' column kinds."""

    def __init__(self) -> None:
        self.tables: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def _typed(self, table: str, values: dict[str, Any]) -> dict[str, Any]:
        kinds = {c: k for c, k, _ in TABLES[table]}
        assert set(values) <= set(kinds), set(values) - set(kinds)
        return {c: _value(kinds[c], v) for c, v in values.items()}

    def insert(self, table: str, values: dict[str, Any]) -> None:
        # A column not given is NULL, as in a table (a key not given would be the next one).
        self.tables[table].append({**dict.fromkeys(c for c, _, _ in TABLES[table]), **self._typed(table, values)})

    def _find(self, table: str, key: dict[str, Any]) -> list[dict[str, Any]]:
        return [r for r in self.tables[table] if all(r.get(k) == v for k, v in key.items())]

    def update(self, table: str, key: dict[str, Any], values: dict[str, Any]) -> None:
        for r in self._find(table, key):
            r.update(self._typed(table, values))

    def delete(self, table: str, key: dict[str, Any]) -> None:
        for r in self._find(table, key):
            self.tables[table].remove(r)

    def one(self, table: str, key: dict[str, Any], cols: Any) -> dict[str, Any] | None:
        found = self._find(table, key)
        return {c: found[0][c] for c in cols} if found else None  # a column the table lacks: an error


def ev(kind: str, on: date | None = None, *, stream: str = "ESC-1", at: datetime = AT, log: str | None = None,
       why: str | None = None, when: datetime | None = None, **data: Any) -> HistoryEvent:  # fmt: skip
    return HistoryEvent(stream, kind, at, "clerk", on=on, when=when, why=why, data=data, log=log)


def received(to: str = "application_received", **data: Any) -> HistoryEvent:
    facts = {"site_address": "1 A St", "site_sqft": 5000.0, "disturbed_sqft": 3000.0, "permit_decision": "required"}
    return ev("received", date(2026, 11, 2), log="received", why="received", to=to,
              **{"from": None, "permit": facts, "site": wkb(SITE), **data})  # fmt: skip


def run(*events: HistoryEvent) -> MemoryRows:
    w = MemoryRows()
    assert replay(w, _numbered(events)) == len(events)  # type: ignore[arg-type]
    return w


def _numbered(events: tuple[HistoryEvent, ...]) -> list[HistoryEvent]:
    from dataclasses import replace

    seq: dict[str, int] = defaultdict(int)
    out = []
    for e in events:
        seq[e.stream] += 1
        out.append(replace(e, seq=seq[e.stream]))
    return out


def only(w: MemoryRows, *tables: str) -> None:
    """Nothing is written outside ``tables``."""
    assert {t for t, rows in w.tables.items() if rows} == set(tables)


# --- The permit -------------------------------------------------------------------------------


def test_an_application_received_is_a_permit_row_its_limits_its_clock_and_a_log_line() -> None:
    w = run(received(disturbed=wkb(LIMITS)))
    only(w, "permits", "disturbed_limits", "decision_clocks", "events")
    [p] = w.tables["permits"]
    assert (p["permit_number"], p["site_address"], p["status"], p["received_on"]) == (
        "ESC-1", "1 A St", "application_received", date(2026, 11, 2))  # fmt: skip
    assert (p["site_sqft"], p["disturbed_sqft"], p["permit_decision"]) == (5000.0, 3000.0, "required")
    assert p["issued_on"] is None and p["expires_on"] is None and p["updated_at"] == AT
    assert p["geom"].equals(SITE) and w.tables["disturbed_limits"][0]["geom"].equals(LIMITS)
    [clock] = w.tables["decision_clocks"]
    assert (clock["permit_number"], clock["starts_on"], clock["seq"], clock["event"]) == ("ESC-1", None, None, None)
    [line] = w.tables["events"]
    assert (line["kind"], line["from_status"], line["to_status"], line["on_date"], line["detail"]) == (
        "received", None, "application_received", date(2026, 11, 2), "received")  # fmt: skip


def test_limits_not_drawn_make_no_row_and_a_remeasure_draws_or_clears_them() -> None:
    w = run(received())
    assert w.tables["disturbed_limits"] == []
    w = run(received(), ev("remeasured", fields={"disturbed_sqft": 2000.0}, disturbed=wkb(LIMITS)))
    assert w.tables["disturbed_limits"][0]["geom"].equals(LIMITS)
    assert w.tables["permits"][0]["disturbed_sqft"] == 2000.0
    w = run(received(disturbed=wkb(LIMITS)), ev("remeasured", fields={}, disturbed=None))
    assert [r["geom"] for r in w.tables["disturbed_limits"]] == [None]
    # A plan-mate's new total changes the decision, not the limits.
    w = run(received(disturbed=wkb(LIMITS)), ev("remeasured", fields={"plan_disturbed_sqft": 9e4}))
    assert w.tables["disturbed_limits"][0]["geom"].equals(LIMITS)
    assert w.tables["permits"][0]["plan_disturbed_sqft"] == 9e4


def test_an_imported_active_permit_is_issued_and_keeps_the_expiry_its_event_carries() -> None:
    """§ 540-8G: "valid for a period of 180 days ... from the date of issuance": the command computes it."""
    w = run(received("active", issued_on="2026-11-03", started_at="2026-11-09T08:00:00+00:00",
                     permit_expires_on="2027-05-02"))  # fmt: skip
    p = w.tables["permits"][0]
    assert (p["status"], p["decided_on"], p["issued_on"]) == ("active", date(2026, 11, 3), date(2026, 11, 3))
    assert p["expires_on"] == date(2026, 11, 3) + timedelta(days=180)
    assert p["started_at"] == datetime(2026, 11, 9, 8, tzinfo=timezone.utc)
    # A later event that does not set the period leaves it: no reading of the profile moves it.
    w = run(received("active", issued_on="2026-11-03", permit_expires_on="2027-05-02"),
            ev("fee_paid", date(2026, 11, 4), fee_id=1, fee_kind="application", amount=1.0, receipt="R-1"),
            ev("guarantee_received", date(2026, 11, 4), guarantee_id=1, type="letter_of_credit", amount=9.0,
               expires_on="2027-01-01"))  # fmt: skip
    assert w.tables["permits"][0]["expires_on"] == date(2027, 5, 2)


def test_an_imported_permit_issued_and_since_closed_keeps_its_day_of_issuance() -> None:
    """§ 540-8G counts the period "from the date of issuance": a closed permit was issued all the same."""
    w = run(received("closed", issued_on="2026-06-05", decided_on=None, permit_expires_on=None))
    p = w.tables["permits"][0]
    assert (p["status"], p["issued_on"], p["decided_on"], p["expires_on"]) == ("closed", date(2026, 6, 5), None, None)


def test_an_update_sets_its_fields_and_a_longer_building_permit_the_expiry() -> None:
    """§ 540-8G: "or the length of the building permit ..., whichever is longer"."""
    later = AT + timedelta(days=1)
    w = run(
        received("active", issued_on="2026-11-03"),
        ev("updated", at=later, log="update", fields={"building_permit_expires": "2027-12-31", "parcel_id": "P-7"},
           permit_expires_on="2027-12-31"),
    )  # fmt: skip
    p = w.tables["permits"][0]
    assert (p["building_permit_expires"], p["expires_on"], p["parcel_id"]) == (
        date(2027, 12, 31), date(2027, 12, 31), "P-7")  # fmt: skip
    assert p["updated_at"] == later
    # A field the table has no column for (an exemption) stays in the history only.
    w = run(received(), ev("updated", at=later, fields={"npdes_exempt": True}))
    assert "npdes_exempt" not in w.tables["permits"][0]


def test_updated_at_follows_the_permits_record_not_its_money() -> None:
    fee_day = AT + timedelta(days=2)
    w = run(received(), ev("fee_paid", date(2026, 11, 4), at=fee_day, fee_id=1, fee_kind="application", amount=1.0,
                           receipt="R-1"))  # fmt: skip
    assert w.tables["permits"][0]["updated_at"] == AT
    w = run(received(), ev("inspected", at=fee_day, by="holder"))
    assert w.tables["permits"][0]["updated_at"] == fee_day


def test_moves_set_the_life_cycle_from_the_fold() -> None:
    """§ 540-8C(2): approved, the permit is issued that day."""
    w = run(
        received(),
        ev("fee_paid", date(2026, 11, 2), fee_id=1, fee_kind="application", amount=1.0, receipt="R-1"),
        ev("under_review", date(2026, 11, 3), to="under_review", **{"from": "application_received"}),
        ev("decided", date(2026, 11, 9), to="approved", outcome="approved", permit_expires_on="2027-05-08",
           **{"from": "under_review"}),
    )  # fmt: skip
    p = w.tables["permits"][0]
    assert (p["status"], p["decided_on"], p["issued_on"]) == ("approved", date(2026, 11, 9), date(2026, 11, 9))
    assert p["expires_on"] == date(2026, 11, 9) + timedelta(days=180)
    w = run(
        received(),
        ev("information_requested", date(2026, 11, 3), to="incomplete", **{"from": "application_received"}),
    )
    assert (w.tables["permits"][0]["status"], w.tables["permits"][0]["information_requested_on"]) == (
        "incomplete", date(2026, 11, 3))  # fmt: skip


def test_the_decision_clock_runs_from_the_application_fee_and_stops_at_the_decision() -> None:
    """§ 540-8C(1): the period counts from the complete application (its fee paid, § 540-8B)."""
    fee = ev("fee_paid", date(2026, 11, 4), fee_id=1, fee_kind="application", amount=1.0, receipt="R-1")
    w = run(received(), fee)
    clock = w.tables["decision_clocks"][0]
    assert (clock["starts_on"], clock["seq"], clock["event"]) == (date(2026, 11, 4), 2, "fee_paid")
    w = run(received(), ev("fee_paid", date(2026, 11, 4), fee_id=1, fee_kind="reinspection", amount=1.0,
                           receipt="R-1"))  # fmt: skip
    assert w.tables["decision_clocks"][0]["starts_on"] is None  # another fee starts nothing
    w = run(received(), fee, ev("decided", date(2026, 11, 9), to="approved", outcome="approved",
                                **{"from": "application_received"}))  # fmt: skip
    assert w.tables["decision_clocks"][0]["starts_on"] is None


def test_a_case_without_a_permit_writes_no_permit_row() -> None:
    w = run(ev("case_opened", date(2026, 11, 20), stream="ENF-1", why="ground A4: no permit", case_id="ENF-1",
               ground="A4", reasons="no permit", site_address="1 A St", site_ref="s.gpkg#S1"))  # fmt: skip
    only(w, "enforcement_cases", "enforcement_events")
    [c] = w.tables["enforcement_cases"]
    assert c == {"fid": None, "case_id": "ENF-1", "permit_number": None, "site_address": "1 A St",
                 "site_ref": "s.gpkg#S1", "ground": "A4", "opened_on": date(2026, 11, 20), "reasons": "no permit",
                 "opened_by": "clerk", "opened_at": AT, "geom": None}  # fmt: skip
    [e] = w.tables["enforcement_events"]
    assert (e["kind"], e["detail"], e["costs"]) == ("opened", "ground A4: no permit", None)
    # A case opened without reasons keeps an empty text, never NULL (the column is NOT NULL).
    w = run(ev("case_opened", date(2026, 11, 20), stream="ENF-1", case_id="ENF-1", ground="A4"))
    assert w.tables["enforcement_cases"][0]["reasons"] == ""


# --- The clerk's log --------------------------------------------------------------------------


def test_the_log_holds_only_events_with_a_line_and_an_extension_its_days() -> None:
    w = run(received("active", issued_on="2026-11-03"),
            ev("notified", date(2026, 11, 20), case_id="ENF-1"),
            ev("extended", date(2026, 11, 25), log="extension", why="wet", days=30, to="extended",
               **{"from": "active"}))  # fmt: skip
    lines = w.tables["events"]
    assert [line["kind"] for line in lines] == ["received", "extension"]
    assert (lines[1]["days"], lines[1]["from_status"], lines[1]["to_status"], lines[1]["detail"]) == (
        30, "active", "extended", "wet")  # fmt: skip
    w = run(received(), ev("updated", log="update", why="parcel_id: None -> P", fields={"parcel_id": "P"}, days=9))
    assert (w.tables["events"][1]["days"], w.tables["events"][1]["from_status"]) == (None, None)


# --- Money -----------------------------------------------------------------------------------------


def test_a_fee_and_a_guarantee_with_its_draw_and_a_recovery_of_costs() -> None:
    """§ 540-12E: the office's costs "plus interest" recovered from the guarantee."""
    w = run(
        received("active", issued_on="2026-11-03"),
        ev("fee_paid", date(2026, 11, 2), fee_id=4, fee_kind="application", amount=150.0, receipt="R-1",
           schedule_resolution="2026-14"),
        ev("guarantee_received", date(2026, 11, 3), guarantee_id=2, type="letter_of_credit", amount=1000.0,
           expires_on="2027-06-30"),
        ev("guarantee_drawn", date(2026, 11, 20), guarantee_id=2, amount=150.0, event_id=7, reason="fence"),
        ev("costs_recorded", date(2026, 11, 22), case_id="ENF-1", amount=10.0, recovered_from="guarantee",
           guarantee_id=2, interest=1.5, recovery_id=8),
        ev("costs_recorded", date(2026, 11, 23), case_id="ENF-1", amount=5.0, recovered_from="billed"),
        ev("notice_of_intent", date(2026, 11, 24), case_id="ENF-1", amount=2.0, recovered_from="guarantee",
           guarantee_id=2, recovery_id=9),
        ev("costs_paid", date(2026, 11, 25), case_id="ENF-1", amount=5.0),
        ev("referred", date(2026, 11, 26), case_id="ENF-1", amount=7.0, costs_from="billed"),
    )  # fmt: skip
    [f] = w.tables["fees"]
    assert (f["id"], f["kind"], f["amount"], f["paid_on"], f["receipt"], f["schedule_resolution"]) == (
        4, "application", 150.0, date(2026, 11, 2), "R-1", "2026-14")  # fmt: skip
    [g] = w.tables["guarantees"]
    assert (g["id"], g["type"], g["amount"], g["received_on"], g["expires_on"]) == (
        2, "letter_of_credit", 1000.0, date(2026, 11, 3), date(2027, 6, 30))  # fmt: skip
    draw, recovered, noticed = w.tables["guarantee_events"]
    assert (draw["id"], draw["kind"], draw["amount"], draw["reason"]) == (7, "draw", 150.0, "fence")
    assert (recovered["id"], recovered["kind"], recovered["amount"], recovered["guarantee_id"]) == (
        8, "costs_recovered", 11.5, 2)  # fmt: skip
    assert recovered["reason"] == "case ENF-1: the office's costs plus interest 1.50"
    assert (noticed["id"], noticed["kind"], noticed["amount"], noticed["reason"]) == (
        9, "costs_recovered", 2.0, "case ENF-1: the office's costs")  # fmt: skip
    log = [(e["kind"], e["costs"], e["costs_from"]) for e in w.tables["enforcement_events"]]
    # Costs are a recorded cost's, a notice's and a payment's; a referral's amount is none of them.
    assert log == [("costs", 10.0, "guarantee"), ("costs", 5.0, "billed"), ("notice", 2.0, "guarantee"),
                   ("paid", 5.0, None), ("referral", None, "billed")]  # fmt: skip


def test_a_release_and_the_final_release_keep_their_kinds() -> None:
    w = run(
        received("active", issued_on="2026-11-03"),
        ev("guarantee_received", date(2026, 11, 3), guarantee_id=1, type="surety_bond", amount=500.0),
        ev("guarantee_released", date(2026, 11, 20), guarantee_id=1, amount=100.0, event_id=1, stage="one"),
        ev("guarantee_final_release", date(2026, 11, 30), guarantee_id=1, amount=400.0, event_id=2, engineer="E"),
    )
    assert [(e["kind"], e["stage"], e["engineer"], e["amount"]) for e in w.tables["guarantee_events"]] == [
        ("release", "one", None, 100.0), ("final_release", None, "E", 400.0)]  # fmt: skip
    # Costs recovered without an amount or interest recorded: nothing comes off, said as costs.
    w = run(received("active", issued_on="2026-11-03"),
            ev("costs_recorded", date(2026, 11, 22), case_id="ENF-1", recovered_from="guarantee", guarantee_id=1,
               recovery_id=3, amount=None))  # fmt: skip
    assert (w.tables["guarantee_events"][0]["amount"], w.tables["guarantee_events"][0]["reason"]) == (
        0.0, "case ENF-1: the office's costs")  # fmt: skip


# --- Inspections ------------------------------------------------------------------------------


def test_an_inspection_report_its_deficiencies_and_the_repairs_it_finds() -> None:
    at = datetime(2026, 11, 10, 15, tzinfo=timezone.utc)
    report = {"inspector": "Ina", "assessment": "sagging", "work_done": None, "phase": "grading",
              "geom": wkb(shapely.Point(5, 5)), "inspected_by": "holder", "pre_start": False,
              "adjoining_repairs": None, "on_site_documents": None, "certificate_posted": None}  # fmt: skip
    w = run(
        received("active", issued_on="2026-11-03"),
        ev("inspected", when=at, by="holder", inspection_id=3, report=report,
           deficiencies=[{"id": 5, "notified_at": "2026-11-10T16:00:00+00:00", "description": "fence down"},
                         {"id": 6, "notified_at": None, "description": "inlet"}], repaired=[]),
        ev("inspected", when=at + timedelta(days=1), by="holder", inspection_id=4, report=report, repaired=[5]),
        ev("repaired", when=at + timedelta(days=2), deficiency_ids=[6], detail="fixed"),
    )  # fmt: skip
    first = w.tables["inspections"][0]
    assert (first["fid"], first["inspected_at"], first["inspector"], first["phase"]) == (3, at, "Ina", "grading")
    assert first["geom"].equals(shapely.Point(5, 5)) and first["recorded_by"] == "clerk"
    d, _ = w.tables["deficiencies"]
    assert (d["id"], d["inspection_id"], d["description"], d["permit_number"]) == (5, 3, "fence down", "ESC-1")
    assert d["notified_at"] == datetime(2026, 11, 10, 16, tzinfo=timezone.utc)
    by_inspection, recorded = w.tables["repairs"]
    assert (by_inspection["deficiency_id"], by_inspection["inspection_id"], by_inspection["repaired_at"]) == (
        5, 4, at + timedelta(days=1))  # fmt: skip
    assert (recorded["deficiency_id"], recorded["inspection_id"], recorded["detail"]) == (6, None, "fixed")


def test_an_inspection_on_a_day_alone_writes_no_report() -> None:
    """Its report is kept at the site (§ 540-8E(6)): the history has the day, no table a row."""
    w = run(received("active", issued_on="2026-11-03"), ev("inspected", date(2026, 11, 11), by="holder"))
    assert w.tables["inspections"] == [] and w.tables["deficiencies"] == [] and w.tables["repairs"] == []


# --- Enforcement, appeals, the plan -----------------------------------------------------------


def test_a_case_on_a_permit_keeps_the_cases_words_and_its_order_is_the_permits_move() -> None:
    w = run(
        received("active", issued_on="2026-11-03"),
        ev("case_opened", date(2026, 11, 20), log="enforcement", why="case ENF-1 opened", case_id="ENF-1",
           ground="A2", reasons="plan ignored", case_detail="ground A2: plan ignored", site=wkb(SITE)),
        ev("stop_work_posted", date(2026, 11, 21), log="transition", why="case ENF-1: posted", case_id="ENF-1",
           case_detail="posted", to="stop_work", **{"from": "active"}),
        ev("stop_work_posted", date(2026, 11, 22), log="transition", why="plain", to="stop_work",
           **{"from": "stop_work"}),
    )  # fmt: skip
    [c] = w.tables["enforcement_cases"]
    assert (c["permit_number"], c["ground"], c["reasons"]) == ("ESC-1", "A2", "plan ignored")
    assert c["geom"].equals(SITE)
    assert [(e["kind"], e["detail"]) for e in w.tables["enforcement_events"]] == [
        ("opened", "ground A2: plan ignored"), ("stop_work", "posted")]  # fmt: skip
    assert w.tables["permits"][0]["status"] == "stop_work"


def test_an_appeal_its_decision_and_the_case_order_it_retracts() -> None:
    w = run(
        ev("case_opened", date(2026, 11, 20), stream="ENF-1", case_id="ENF-1", ground="A4", reasons="r"),
        ev("appeal_filed", date(2026, 11, 21), stream="ENF-1", appeal_id="APL-1", case_id="ENF-1",
           appealed="the order", appellant="P", appellant_kind="aggrieved_person", grounds="g",
           appealed_kind="stop_work_order"),
        ev("appeal_decided", date(2026, 11, 24), stream="ENF-1", appeal_id="APL-1", outcome="reversed",
           body="village_board", effect="no permit; case order retracted", case_retraction="ENF-1",
           conditions="silt fence doubled"),
    )  # fmt: skip
    [a] = w.tables["appeals"]
    assert a == {"id": None, "appeal_id": "APL-1", "permit_number": None, "case_id": "ENF-1", "appealed": "the order",
                 "appellant": "P", "appellant_kind": "aggrieved_person", "filed_on": date(2026, 11, 21),
                 "grounds": "g", "recorded_by": "clerk", "recorded_at": AT, "appealed_kind": "stop_work_order"}  # fmt: skip
    [d] = w.tables["appeal_decisions"]
    assert d == {"id": None, "appeal_id": "APL-1", "decided_on": date(2026, 11, 24), "body": "village_board",
                 "outcome": "reversed", "conditions": "silt fence doubled", "effect": "no permit; case order retracted",
                 "recorded_by": "clerk", "recorded_at": AT}  # fmt: skip
    assert [(e["kind"], e["detail"]) for e in w.tables["enforcement_events"]] == [
        ("opened", None), ("retraction", "appeal APL-1 reversed")]  # fmt: skip


def test_the_plans_versions_and_the_offices_notice() -> None:
    plan = {"description": "basin", "plan_date": "2026-11-16", "permission_on": "2026-11-18", "effective_on": None}
    w = run(
        received("active", issued_on="2026-11-03"),
        ev("plan_notice", date(2026, 11, 12), notice_id=1, trigger="B3", plan={"description": "add a basin"}),
        ev("plan_amendment", date(2026, 11, 18), version=1, version_id=2, trigger="B3", notice_id=1, plan=plan,
           plan_sha256="ab"),
    )  # fmt: skip
    notice, version = w.tables["plan_versions"]
    assert (notice["id"], notice["version"], notice["status"], notice["trigger_code"]) == (1, None, "requested", "B3")
    assert (version["id"], version["version"], version["status"], version["notice_id"], version["plan_date"]) == (
        2, 1, "approved", 1, date(2026, 11, 16))  # fmt: skip
    assert (version["permission_on"], version["plan_sha256"]) == (date(2026, 11, 18), "ab")


def test_every_table_has_its_projector_and_project_runs_them_all() -> None:
    from esc_gis.registry.store.projection import PROJECTORS

    assert tuple(PROJECTORS) == PROJECTIONS and set(PROJECTIONS) <= set(TABLES)
    w = MemoryRows()
    e = _numbered((received(),))[0]
    project(w, e, Context([e]))
    assert {t for t, rows in w.tables.items() if rows} == {"permits", "decision_clocks", "events"}


@pytest.mark.parametrize(("kind", "value", "want"), [
    ("date", "2026-11-02", date(2026, 11, 2)),
    ("datetime", "2026-11-02T15:00:00+00:00", AT),
    ("real", 1.5, 1.5),
    ("date", None, None),
])  # fmt: skip
def test_facts_read_back_from_json_are_typed_by_their_column(kind: str, value: Any, want: Any) -> None:
    assert _value(kind, value) == want


# --- verify: the rebuild's differences beside the fold's -------------------------------------


def _said_and_rebuilt(monkeypatch: pytest.MonkeyPatch, rebuilt: list[tuple[str, list[str], Any]]) -> list[str]:
    """What verify_all lists for a permit whose status differs from its fold, with ``rebuilt`` rows."""
    from tests.test_fold import FakeRegistry, mv, row

    from esc_gis.registry.views import verify as v

    reg = FakeRegistry([mv("received", "application_received", date(2026, 1, 5))], permits=[row(status="closed")],
                       fees=[], guarantees=[])  # fmt: skip

    def the_registrys(asked: Any) -> list[tuple[str, list[str], Any]]:
        assert asked is reg  # the rows are this registry's rebuild
        return rebuilt

    monkeypatch.setattr(v, "_rebuilt", the_registrys)
    return [str(d) for d in v.verify_all(reg)]


def _d(stream: str, what: str) -> Any:
    from esc_gis.registry.views.verify import Difference

    return Difference(stream, what, 1, 2)


def test_verify_all_leaves_out_a_rebuilt_row_the_fold_already_named_and_no_other(monkeypatch) -> None:
    status = "P: status is 'closed' in the table, 'application_received' in the history"
    # The permits row differs in its status only: said already, in the office's words.
    assert _said_and_rebuilt(monkeypatch, [("permits", ["status"], _d("P", "the permits row"))]) == [status]
    # The same row differs in another column too, or another table of the permit: listed.
    got = _said_and_rebuilt(monkeypatch, [("permits", ["parcel_id", "status"], _d("P", "the permits row")),
                                          ("fees", ["amount"], _d("P", "the fees row"))])  # fmt: skip
    assert got == [status, "P: the permits row is 1 in the table, 2 in the history",
                   "P: the fees row is 1 in the table, 2 in the history"]  # fmt: skip
    # Another permit's row is its own.
    got = _said_and_rebuilt(monkeypatch, [("permits", ["status"], _d("Q", "the permits row"))])
    assert got == [status, "Q: the permits row is 1 in the table, 2 in the history"]


@pytest.mark.parametrize(("what", "tables", "cols"), [
    ("status", ("permits",), {"status"}),
    ("expires_on", ("permits",), {"expires_on"}),
    ("fees paid", ("fees",), None),
    ("guarantee #2 balance", ("guarantees", "guarantee_events"), None),
    ("inspection report #3", ("inspections", "deficiencies", "repairs"), None),
    ("inspection reports", ("inspections", "deficiencies", "repairs"), None),
    ("open deficiencies", ("deficiencies", "repairs"), None),
    ("costs recorded", ("enforcement_events", "guarantee_events"), None),
    ("payments", ("enforcement_events",), None),
    ("notices to cease", ("enforcement_events",), None),
    ("case C1", ("enforcement_cases", "enforcement_events"), None),
    ("the permit's history", ("permits", "disturbed_limits", "decision_clocks", "events"), None),
    ("the stream", (), None),
])  # fmt: skip
def test_each_difference_the_fold_names_covers_its_concerns_tables(what: str, tables: tuple, cols: Any) -> None:
    from esc_gis.registry.views.verify import _covers

    assert _covers(_d("P", what)) == (tables, cols)


def test_rows_write_and_read_back_each_kind_in_a_real_geopackage(tmp_path) -> None:
    """The projectors' one writer, on a real registry: typed values in, the same values out."""
    from pathlib import Path

    from esc_gis.registry import init_registry
    from esc_gis.registry.store.backend import open_backend
    from esc_gis.registry.store.projection import Rows
    from esc_gis.registry.store.schema import create_table

    path = tmp_path / "r.gpkg"
    init_registry(path, layers=Path(__file__).parents[1] / "layers" / "winneconne-demo" / "layers.toml")
    b = open_backend(path)
    try:
        with b.write() as cur:
            w = Rows(cur, b)
            w.insert("permits", {"permit_number": "P", "site_address": "1 A St", "status": "active", "site_sqft": 1.5,
                                 "disturbed_sqft": 1.0, "received_on": "2026-11-02", "updated_at": AT,
                                 "sediment_standard": False, "geom": wkb(SITE)})  # fmt: skip
            cols = ("received_on", "updated_at", "sediment_standard", "geom", "site_sqft", "final_on")
            got = w.one("permits", {"permit_number": "P"}, cols)
            assert got is not None and set(got) == set(cols)
            assert (got["received_on"], got["updated_at"], got["sediment_standard"], got["site_sqft"]) == (
                date(2026, 11, 2), AT, False, 1.5)  # fmt: skip
            assert got["geom"].equals(SITE) and got["final_on"] is None
            w.insert("permits", {"permit_number": "Q", "site_address": "2 A St", "status": "closed", "site_sqft": 2.0,
                                 "disturbed_sqft": 1.0, "received_on": date(2026, 11, 3), "updated_at": AT})  # fmt: skip
            w.update(
                "permits", {"permit_number": "P", "status": "active"}, {"status": "closed", "final_on": "2026-11-05"}
            )
            w.update("permits", {"permit_number": "P"}, {})  # nothing to set: nothing written
            assert w.one("permits", {"permit_number": "P"}, ("status", "final_on")) == {
                "status": "closed", "final_on": date(2026, 11, 5)}  # fmt: skip
            assert w.one("permits", {"permit_number": "Q"}, ("status", "geom")) == {"status": "closed", "geom": None}
            assert w.one("permits", {"permit_number": "R"}, ("status",)) is None
            w.delete("permits", {"permit_number": "Q"})
            assert w.one("permits", {"permit_number": "Q"}, ("status",)) is None
            assert w.one("permits", {"permit_number": "P"}, ("status",)) == {"status": "closed"}
            # A schema named in every statement: a temporary table, the registry's own untouched.
            cur.execute(
                create_table("sqlite", "permit_counters", b.srid).replace("CREATE TABLE", "CREATE TEMP TABLE", 1)
            )
            t = Rows(cur, b, "temp")
            t.insert("permit_counters", {"year": 2026, "last": 7})
            assert t.one("permit_counters", {"year": 2026}, ("last",)) == {"last": 7}
            cur.execute('SELECT COUNT(*) FROM main."permit_counters"')
            assert cur.fetchone()[0] == 0
            cur.execute('DROP TABLE temp."permit_counters"')
    finally:
        b.close()


def test_an_extension_that_keeps_the_state_is_no_move_in_the_log() -> None:
    """§ 540-8G: "may extend the period": a stop-work order stands through it, and its log line says no move."""
    w = run(received("active", issued_on="2026-11-03"),
            ev("stop_work_posted", date(2026, 11, 20), log="transition", to="stop_work", **{"from": "active"}),
            ev("extended", date(2026, 11, 21), log="extension", days=60, to="stop_work", **{"from": "stop_work"}))  # fmt: skip
    lines = w.tables["events"]
    assert [(x["kind"], x["from_status"], x["to_status"]) for x in lines] == [
        ("received", None, "active"), ("transition", "active", "stop_work"), ("extension", "stop_work", None)]  # fmt: skip


def test_the_case_log_takes_a_retraction_only_from_a_decision_that_names_it() -> None:
    w = run(
        ev("case_opened", date(2026, 11, 20), stream="ENF-1", case_id="ENF-1", ground="A4", reasons="r"),
        ev("appeal_decided", date(2026, 11, 24), stream="ENF-1", appeal_id="APL-1", outcome="upheld", body="b"),
        ev("notified", date(2026, 11, 25), stream="ENF-1", case_id="ENF-1", case_retraction="ENF-1",
           recovered_from="billed", why="told"),
    )  # fmt: skip
    assert [(x["kind"], x["costs_from"], x["detail"]) for x in w.tables["enforcement_events"]] == [
        ("opened", None, None), ("notified", None, "told")]  # fmt: skip


def test_costs_recovered_are_rounded_to_the_cent() -> None:
    w = run(received("active", issued_on="2026-11-03"),
            ev("guarantee_received", date(2026, 11, 3), guarantee_id=1, type="cash_escrow", amount=500.0),
            ev("costs_recorded", date(2026, 11, 22), case_id="ENF-1", amount=10.004, interest=1.0014,
               recovered_from="guarantee", guarantee_id=1, recovery_id=3))  # fmt: skip
    assert w.tables["guarantee_events"][0]["amount"] == 11.01


def test_verify_names_each_rebuilt_row_by_its_permit_or_case_with_the_columns_that_differ(monkeypatch) -> None:
    from contextlib import nullcontext
    from types import SimpleNamespace

    from esc_gis.registry.store import rebuild
    from esc_gis.registry.views import verify as v

    stored = {"fees": [{"id": 1, "permit_number": "P", "amount": 15.0, "kind": "application"}],
              "enforcement_events": [{"case_id": "C", "at": AT, "kind": "paid", "costs": 5.0}],
              "appeals": [], "permits": []}  # fmt: skip
    rebuilt = {"fees": [{"id": 1, "permit_number": "P", "amount": 150.0, "kind": "application"}],
               "enforcement_events": [], "appeals": [{"appeal_id": "A", "permit_number": None, "case_id": None}],
               "permits": []}  # fmt: skip
    seen = []

    def fake(cur, b):
        seen.append((cur, b.dialect))
        return stored, rebuilt

    monkeypatch.setattr(rebuild, "rebuilt_rows", fake)
    for dialect, txn in (("sqlite", "read"), ("postgis", "write")):
        backend = SimpleNamespace(dialect=dialect, read=lambda: nullcontext("R"), write=lambda: nullcontext("W"))
        reg = SimpleNamespace(backend=backend)
        got = v._rebuilt(reg)
        assert seen[-1] == ("R" if txn == "read" else "W", dialect)
        assert [(t, cols, str(d)) for t, cols, d in got] == [
            ("fees", ["amount"], "P: the fees row (id 1) is {'amount': 15.0} in the table, {'amount': 150.0} in the history"),
            ("enforcement_events", ["at", "case_id", "costs", "kind"],
             f"C: the enforcement_events row (case_id C) is {{'at': {AT!r}, 'case_id': 'C', 'costs': 5.0, 'kind': 'paid'}}"
             " in the table, None in the history"),
            # Columns NULL on both sides are not named.
            ("appeals", ["appeal_id"], "A: the appeals row (appeal_id A) is None in the table, {'appeal_id': 'A'} "
             "in the history"),
        ]  # fmt: skip
        assert [str(d) for d in v.rebuilt_differences(reg)] == [str(d) for _, _, d in got]


def test_an_appeal_of_a_permits_decision_and_the_original_plan() -> None:
    w = run(
        received("active", issued_on="2026-11-03"),
        ev("appeal_filed", date(2026, 11, 12), appeal_id="APL-1", permit_number="ESC-1", case_id=None,
           appealed="disapproval", appellant="P", appellant_kind="aggrieved_person", grounds="g"),
        ev("plan_original", date(2026, 10, 28), version=0, version_id=1, trigger="original",
           plan={"description": "as approved", "plan_date": "2026-10-28"}),
    )  # fmt: skip
    assert (w.tables["appeals"][0]["permit_number"], w.tables["appeals"][0]["case_id"]) == ("ESC-1", None)
    [v] = w.tables["plan_versions"]
    assert (v["id"], v["version"], v["trigger_code"], v["status"], v["plan_date"]) == (
        1, 0, "original", "approved", date(2026, 10, 28))  # fmt: skip


def test_verify_reads_the_expiry_with_other_construction_authorizations() -> None:
    """§ 540-8G: "or the length of the building permit or other construction authorizations, whichever is longer"."""
    from tests.test_fold import FakeRegistry, mv, row

    from esc_gis.registry.views.verify import verify

    issued = date(2026, 1, 20)
    events = [mv("received", "active", issued, issued_on=issued,
                 fields={"other_authorizations": {"WDNR WI-S067831": "2027-12-31"}})]  # fmt: skip
    reg = FakeRegistry(events, permits=[row(status="active", received_on=issued, decided_on=issued, issued_on=issued,
                                             expires_on=date(2027, 12, 31))], fees=[], guarantees=[])  # fmt: skip
    assert verify(reg) == []


def test_each_stream_is_folded_apart() -> None:
    """Two permits' events interleaved: each clock counts its own events (§ 540-8C(1), the fee's day)."""
    b = received()
    b = HistoryEvent("ESC-2", b.kind, b.recorded_at, b.who, on=b.on, why=b.why, data=b.data, log=b.log)
    w = run(received(), b, ev("fee_paid", date(2026, 11, 4), fee_id=1, fee_kind="application", amount=1.0,
                              receipt="R-1"))  # fmt: skip
    clocks = {c["permit_number"]: (c["starts_on"], c["seq"]) for c in w.tables["decision_clocks"]}
    assert clocks == {"ESC-1": (date(2026, 11, 4), 2), "ESC-2": (None, None)}
