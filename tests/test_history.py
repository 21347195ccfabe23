"""One permit, one history (issue 23): the typed events, the state folded from them, verify, migration.

Each rule's test quotes the ordinance's words it rests on.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from esc_gis.errors import IllegalTransitionError, RegistryError
from esc_gis.registry import Application, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.events import HistoryEvent, check_event, move_kind
from esc_gis.registry.domain.fold import fold
from esc_gis.registry.store.schema import SCHEMA_VERSION

from .conftest import CRS, square_sqft
from .public_outputs import run_permits

FIXTURE = Path(__file__).parent / "data" / "registry_v7"
DEMO_LAYERS = Path(__file__).resolve().parents[1] / "layers" / "winneconne-demo" / "layers.toml"
T = datetime(2026, 1, 5, 15, tzinfo=timezone.utc)


def ev(kind: str, on: date | None = None, **data) -> HistoryEvent:
    return HistoryEvent("P", kind, T, "clerk", on=on, data=data)


# --- The fold, pure ----------------------------------------------------------------------


def test_the_decision_clock_starts_when_the_fee_completes_the_application() -> None:
    """§ 540-8C(1): "Within 20 business days of the receipt of a complete permit application, as
    required by § 540-8B"; § 540-8B: the applicant "shall pay an application fee"."""
    received = [ev("received", date(2026, 1, 5), to="application_received")]
    assert fold(received).decision_clock is None  # no fee: not complete, no clock
    paid = [*received, ev("fee_paid", date(2026, 3, 2), fee_kind="application", amount=150.0, receipt="R1")]
    clock = fold(paid).decision_clock
    assert clock is not None and (clock.start, clock.seq, clock.event) == (date(2026, 3, 2), 2, "fee_paid")
    # A fee paid on receipt: the clock runs from the day received, not later.
    same_day = [*received, ev("fee_paid", date(2026, 1, 5), fee_kind="application", amount=1.0, receipt="R")]
    assert fold(same_day).decision_clock.start == date(2026, 1, 5)
    # Another kind of fee completes nothing.
    other = [*received, ev("fee_paid", date(2026, 1, 6), fee_kind="reinspection", amount=1.0, receipt="R")]
    assert fold(other).decision_clock is None


def test_requested_information_stops_the_clock_and_its_receipt_restarts_it() -> None:
    """§ 540-8C(4): "20 business days from the date the additional information is received"."""
    events = [
        ev("received", date(2026, 1, 5), to="application_received"),
        ev("fee_paid", date(2026, 1, 5), fee_kind="application", amount=1.0, receipt="R"),
        ev("information_requested", date(2026, 1, 9), to="incomplete"),
    ]
    assert fold(events).decision_clock is None
    events.append(ev("information_received", date(2026, 2, 2), to="under_review"))
    s = fold(events)
    assert s.decision_clock.start == date(2026, 2, 2) and s.decision_clock.event == "information_received"
    events.append(ev("decided", date(2026, 2, 10), to="approved", outcome="approved"))
    s = fold(events)
    assert s.decision_clock is None and s.issued_on == date(2026, 2, 10) and s.status == "approved"


def test_a_stop_work_order_by_either_route_is_one_order_that_a_retraction_closes() -> None:
    """§ 540-12D: "may retract the stop-work order issued under § 540-12A"."""
    base = [ev("received", date(2026, 1, 5), to="active")]
    posted = [*base, ev("stop_work_posted", date(2026, 2, 1), **{"from": "active", "to": "stop_work"})]
    s = fold(posted)
    assert [o.kind for o in s.orders] == ["stop_work"] and s.previous_status == "active"
    lifted = [*posted, ev(move_kind("stop_work", "active"), date(2026, 2, 3), **{"from": "stop_work", "to": "active"})]
    s = fold(lifted)
    assert s.orders == [] and s.status == "active" and [o.kind for o in s.orders_posted] == ["stop_work"]


def test_guarantee_balance_is_net_of_draws_releases_and_recovered_costs() -> None:
    """§ 540-8D(1): release "less any costs incurred by the administering authority"."""
    events = [
        ev("received", date(2026, 1, 5), to="active"),
        ev("guarantee_received", date(2026, 1, 6), guarantee_id=1, type="cash_escrow", amount=1000.0),
        ev("guarantee_drawn", date(2026, 2, 1), guarantee_id=1, amount=100.0),
        ev("guarantee_released", date(2026, 3, 1), guarantee_id=1, amount=200.0),
        ev("costs_recorded", date(2026, 3, 2), case_id="C", amount=50.0, recovered_from="guarantee", guarantee_id=1),
        ev("costs_recorded", date(2026, 3, 2), case_id="C", amount=70.0, recovered_from="billed"),
    ]
    assert fold(events).guarantees[1].balance == 650.0
    events.append(ev("guarantee_final_release", date(2026, 4, 1), guarantee_id=1, amount=650.0))
    assert fold(events).guarantees[1].balance == 0.0


def test_an_event_missing_its_facts_is_refused_before_it_is_stored() -> None:
    assert check_event(ev("fee_paid")) == ["fee_paid needs 'fee_kind', 'amount', 'receipt'."]
    assert check_event(ev("decided", outcome="approved")) == ["decided needs 'to'."]
    assert check_event(ev("nonsense")) == ["'nonsense' is not an event kind."]
    assert check_event(ev("closed", to="closed")) == []


def test_a_fold_of_two_streams_is_refused() -> None:
    with pytest.raises(ValueError, match="not of stream"):
        fold([ev("received", to="x"), HistoryEvent("Q", "closed", T, "c", data={"to": "closed"})])


# --- The registry: every command appends, every table is a projection -----------------


def test_no_fee_no_deemed_approval_and_permits_due_says_nothing_is_due(reg) -> None:
    """§ 540-8C(5): "Failure ... to inform the permit applicant of a decision within 20 business days of a
    required submittal shall be deemed to mean approval" — of a complete submittal, fee included (§ 540-8B)."""
    n = reg.add(Application("1 A St", date(2026, 1, 5), square_sqft(100, 100, 5000.0), CRS), who="c")
    with pytest.raises(
        IllegalTransitionError, match=r"cannot be deemed approved: the 20 business days run .*fee is paid"
    ):
        reg.transition(n, "deemed_approved", on=date(2026, 3, 3))
    from esc_gis.registry.views.agenda import permit_dues

    p = reg.get(n)
    assert [d.code for d in permit_dues(p, on=date(2026, 3, 3), calendar=reg.calendar, profile=reg.profile)] == []
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 3, 2), receipt="R-1")
    p = reg.transition(n, "under_review", on=date(2026, 3, 2))
    assert [d.code for d in permit_dues(p, on=date(2026, 3, 3), calendar=reg.calendar, profile=reg.profile)] == [
        "decision_due"
    ]
    due = reg.decision_due(p).due
    assert due == OfficeCalendar(holidays=frozenset()).add_business_days(date(2026, 3, 2), 20)
    # Counted from the fee's day: on 2026-03-03 the 20 business days have not run out.
    with pytest.raises(IllegalTransitionError, match="cannot be deemed approved on 2026-03-03"):
        reg.transition(n, "deemed_approved", on=date(2026, 3, 3))


def test_every_command_appends_and_the_history_only_grows(reg) -> None:
    n = reg.add(Application("1 A St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS), who="c")
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt="R-1", who="c")
    reg.transition(n, "under_review", on=date(2026, 11, 3), who="c")
    kinds = [e.kind for e in reg.history(n)]
    assert kinds == ["received", "fee_paid", "under_review"]
    assert [e.seq for e in reg.history(n)] == [1, 2, 3]
    for sql in ("UPDATE history SET who = 'x'", "DELETE FROM history"):
        with pytest.raises(RegistryError, match="append-only"), reg.backend.write() as cur:
            cur.execute(sql)
    assert reg.state(n).status == "under_review" == reg.get(n).status


def test_verify_finds_a_table_changed_behind_the_history(reg, target: str, layers_path: Path) -> None:
    n = reg.add(Application("1 A St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS), who="c")
    ok = run_permits("verify", target, "--layers", str(layers_path))
    assert ok.exit_code == 0 and "the tables equal the history of its 1 permit(s)" in ok.output, ok.output
    with reg.backend.write() as cur:  # a hand edit, as a user with a database tool might make
        cur.execute(f"UPDATE permits SET status = 'active' WHERE permit_number = {reg.backend.ph}", (n,))
    bad = run_permits("verify", target, "--layers", str(layers_path))
    assert bad.exit_code == 1
    assert f"{n}: status is 'active' in the table, 'application_received' in the history" in bad.output
    with reg.backend.write() as cur:  # put it back, so the fixture's own verify passes
        cur.execute(f"UPDATE permits SET status = 'application_received' WHERE permit_number = {reg.backend.ph}", (n,))


# --- Migration: a registry written by the esc_gis before the history --------------------


def test_a_schema_7_registry_migrates_into_its_history_with_nothing_lost(tmp_path: Path) -> None:
    """The fixture was written by the esc_gis of schema 7 (tests/data/registry_v7/README.md)."""
    expected = json.loads((FIXTURE / "expected.json").read_text())
    path = tmp_path / "registry.gpkg"
    shutil.copy(FIXTURE / "registry_v7.gpkg", path)
    assert init_registry(path, layers=DEMO_LAYERS) == list(range(8, SCHEMA_VERSION + 1))
    with sqlite3.connect(path) as conn:
        counts = {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in expected["tables"]}
        photos = {
            str(i): hashlib.sha256(data).hexdigest()
            for i, data in conn.execute("SELECT id, data FROM inspection_photos").fetchall()
        }
    assert {t: c for t, c in counts.items() if t != "esc_gis_schema"} == {
        t: c for t, c in expected["tables"].items() if t != "esc_gis_schema"
    }
    assert photos == {k: v["sha256"] for k, v in expected["photos"].items()}
    with open_registry(path, layers=DEMO_LAYERS, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        assert [str(d) for d in reg.verify()] == []
        for number, want in expected["permits"].items():
            s = reg.state(number)
            assert s.status == want["status"], number
            assert (str(s.issued_on) if s.issued_on else None) == want["issued_on"], number
        for gid, g in expected["guarantees"].items():
            assert reg.state(g["permit_number"]).guarantees[int(gid)].balance == g["balance"]
        # Every stream: each permit and the case without a permit.
        streams = {e.stream for e in reg.history()}
        assert streams == set(expected["permits"]) | {c for c, v in expected["cases"].items() if not v["permit_number"]}


def test_a_stop_work_order_posted_by_transition_is_the_case_s_order_too(reg) -> None:
    """§ 540-12E: "After posting a stop-work order under § 540-12A, the administering authority may issue a
    notice of intent"; § 540-12C: "if a responsible party violates a stop-work order posted under § 540-12A"."""
    from tests.conftest import add_active

    n = add_active(reg)
    c = reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="plan ignored", permit_number=n)
    reg.transition(n, "stop_work", on=date(2026, 11, 21), reasons="posted at the gate")  # the README's route
    with pytest.raises(Exception, match="already in effect"):
        reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 22), reasons="again")
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 22), costs=10.0, costs_from="billed")
    reg.case_action(c.case_id, "referral", on=date(2026, 11, 23))
    reg.case_action(c.case_id, "retraction", on=date(2026, 11, 24), reasons="fence restored")
    s = reg.state(n)
    assert s.status == "active" and s.orders == [] and [o.kind for o in s.orders_posted] == ["stop_work"]
    kinds = [e.kind for e in reg.history(n)]
    assert kinds.count("stop_work_posted") == 1 and kinds.count("retracted") == 1
