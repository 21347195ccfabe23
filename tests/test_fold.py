"""The history's domain, pure and fast: events, the fold, and verify over a registry built in code.

Every test builds its ``HistoryEvent`` list by hand, so each answer can be checked by hand, and
quotes the ordinance's words the rule rests on. These tests are what ``make mutation`` runs
against ``esc_gis.registry.domain.events``, ``esc_gis.registry.domain.fold`` and
``esc_gis.registry.views.verify`` (see docs/explanation/mutation-survivors.md).
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta, timezone
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from esc_gis.errors import RegistryError
from esc_gis.profile import load_profile
from esc_gis.registry.domain.events import HistoryEvent, check_event, move_kind, typed
from esc_gis.registry.domain.fold import UNRECORDED_BY, Clock, GuaranteeState, InspectionFact, Order, PermitState, fold
from esc_gis.registry.domain.records import Event
from esc_gis.registry.views.verify import Difference, verify

UTC = timezone.utc
T = datetime(2026, 1, 5, 15, tzinfo=UTC)
D = date(2026, 1, 5)


def ev(kind: str, on: date | None = None, *, when: datetime | None = None, seq: int | None = None, **data: Any):
    return HistoryEvent("P", kind, T, "clerk", on=on, when=when, data=data, seq=seq)


def mv(kind: str, to: str, on: date | None = None, *, frm: str | None = None, **data: Any) -> HistoryEvent:
    return ev(kind, on, **{"from": frm, "to": to, **data})


def fee(on: date, kind: str = "application", amount: float = 150.0, receipt: str = "R1") -> HistoryEvent:
    return ev("fee_paid", on, fee_kind=kind, amount=amount, receipt=receipt)


RECEIVED = mv("received", "application_received", D)


# --- events.py ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frm", "to", "move", "kind"),
    [
        ("stop_work", "active", "retraction", "retracted"),
        ("suspended", "active", "retraction", "retracted"),
        ("suspended", "approved", "reinstatement", "reinstated"),
        ("stop_work", "active", "reinstatement", "reinstated"),
        ("incomplete", "under_review", None, "information_received"),
        ("application_received", "under_review", None, "under_review"),
        ("incomplete", "approved", None, "decided"),
        ("stop_work", "active", None, "retracted"),
        ("approved", "active", None, "work_started"),
        ("stop_work", "suspended", None, "suspended"),
        (None, "closed", None, "closed"),
        ("under_review", "incomplete", "other", "information_requested"),
    ],
)
def test_the_kind_of_each_move(frm, to, move, kind) -> None:
    """§ 540-12D "may retract the stop-work order"; § 540-8C(4) "the date the additional information
    is received": a lifted order is a retraction, arrived information its own kind."""
    assert move_kind(frm, to, move) == kind


def test_an_event_writes_its_facts_as_sorted_json_keeping_the_section_mark() -> None:
    e = ev(
        "updated", D, fields={"site_address": "1 § St"}, b=date(2026, 1, 2), a=datetime(2026, 1, 3, 4, 5, tzinfo=UTC)
    )
    text = e.data_json()
    assert text == ('{"a": "2026-01-03T04:05:00+00:00", "b": "2026-01-02", "fields": {"site_address": "1 § St"}}')
    assert HistoryEvent.from_json_data(text) == json.loads(text)
    assert HistoryEvent.from_json_data(None) == {} and HistoryEvent.from_json_data("") == {}


def test_only_dates_and_times_are_written_as_text() -> None:
    with pytest.raises(TypeError, match=r"^set is not JSON$"):
        ev("updated", D, fields={"x": {1}}).data_json()


def test_a_moving_event_says_where_it_goes_and_another_does_not() -> None:
    assert mv("closed", "closed").moves is True and mv("closed", "closed").to == "closed"
    other = ev("inspected", D, by="office", to="closed")
    assert other.moves is False and other.to is None
    assert mv("stop_work_posted", "stop_work").to == "stop_work"


def test_check_event_lists_every_missing_fact_once_and_a_naive_time() -> None:
    naive = HistoryEvent("P", "received", datetime(2026, 1, 5), "clerk")
    assert check_event(naive) == ["received needs 'to'.", "received: recorded_at has no time zone."]
    assert check_event(ev("guarantee_drawn", D)) == ["guarantee_drawn needs 'guarantee_id', 'amount'."]
    assert check_event(ev("decided", D)) == ["decided needs 'outcome', 'to'."]
    assert check_event(ev("inspected", D, by="holder")) == []
    assert check_event(ev("nonsense")) == ["'nonsense' is not an event kind."]
    # A naive time alone is reported without any missing fact.
    assert check_event(HistoryEvent("P", "inspected", datetime(2026, 1, 5), "c", data={"by": None})) == [
        "inspected: recorded_at has no time zone."
    ]


# --- fold.py: the decision clock ---------------------------------------------------------------


def test_the_decision_clock_runs_from_the_later_of_receipt_and_fee() -> None:
    """§ 540-8C(1): "Within 20 business days of the receipt of a complete permit application, as
    required by § 540-8B" (the application fee included)."""
    s = fold([RECEIVED, fee(date(2026, 1, 2))])  # a fee paid before the application came in
    assert s.decision_clock == Clock(D, 2, "fee_paid")
    assert s.application_fee_on == date(2026, 1, 2) and s.received_on == D
    s = fold([RECEIVED, fee(date(2026, 1, 9))])
    assert s.decision_clock == Clock(date(2026, 1, 9), 2, "fee_paid")
    # A second application fee changes nothing: the first completed the application.
    s = fold([RECEIVED, fee(date(2026, 1, 9)), fee(date(2026, 1, 20), receipt="R2")])
    assert s.decision_clock == Clock(date(2026, 1, 9), 2, "fee_paid") and s.application_fee_on == date(2026, 1, 9)
    assert [f["on"] for f in s.fees] == [date(2026, 1, 9), date(2026, 1, 20)] and s.fees[0]["receipt"] == "R1"
    # Another kind of fee completes nothing; the office's own name for its fee does.
    assert fold([RECEIVED, fee(date(2026, 1, 9), kind="reinspection")]).decision_clock is None
    s = fold([RECEIVED, fee(date(2026, 1, 9), kind="review")], application_fee="review")
    assert s.decision_clock == Clock(date(2026, 1, 9), 2, "fee_paid")


def test_a_fee_recorded_before_receipt_waits_for_the_application() -> None:
    """§ 540-8C(1): the days count from "the receipt of a complete permit application"."""
    s = fold(
        [HistoryEvent("P", "fee_paid", T, "c", on=D, data={"fee_kind": "application", "amount": 1, "receipt": "R"})]
    )
    assert s.decision_clock is None and s.application_fee_on == D and s.received_on is None
    s = fold([mv("received", "application_received", D, fields={"parcel_id": "9"}), fee(D)])
    assert s.decision_clock == Clock(D, 2, "fee_paid") and s.fields == {"parcel_id": "9"}


def test_the_clock_started_by_the_fee_is_not_restamped_by_review() -> None:
    """§ 540-8C(1): one complete application, one clock, cited by the event that completed it."""
    events = [RECEIVED, fee(date(2026, 1, 20)), mv("under_review", "under_review", date(2026, 1, 21))]
    assert fold(events).decision_clock == Clock(date(2026, 1, 20), 2, "fee_paid")
    # Review before the fee: no clock; the fee then starts it in review.
    events = [RECEIVED, mv("under_review", "under_review", date(2026, 1, 6)), fee(date(2026, 1, 7))]
    assert fold(events).decision_clock == Clock(date(2026, 1, 7), 3, "fee_paid")


def test_requested_information_stops_the_clock_until_it_arrives() -> None:
    """§ 540-8C(4): "20 business days from the date the additional information is received"."""
    events = [RECEIVED, fee(D), mv("information_requested", "incomplete", date(2026, 1, 9))]
    s = fold(events)
    assert s.decision_clock is None and s.information_requested_on == date(2026, 1, 9) and s.status == "incomplete"
    # A fee recorded while incomplete starts nothing: the information is awaited.
    s = fold([RECEIVED, mv("information_requested", "incomplete", date(2026, 1, 9)), fee(date(2026, 1, 12))])
    assert s.decision_clock is None
    events.append(mv("information_received", "under_review", date(2026, 2, 2)))
    s = fold(events)
    assert s.decision_clock == Clock(date(2026, 2, 2), 4, "information_received")
    assert s.information_received_on == date(2026, 2, 2)


def test_the_decision_stops_the_clock_and_only_an_approval_issues() -> None:
    """§ 540-8C(1) "approved or disapproved"; § 540-8C(5) a deemed approval is an approval."""
    base = [RECEIVED, fee(D)]
    for outcome, issued in (("approved", True), ("deemed_approved", True), ("disapproved", False)):
        s = fold([*base, mv("decided", outcome, date(2026, 2, 3), outcome=outcome)])
        assert s.decision_clock is None and s.decided_on == date(2026, 2, 3) and s.status == outcome
        assert s.issued_on == (date(2026, 2, 3) if issued else None)
    # After the decision no move restarts the clock (an approved permit is no application).
    s = fold([*base, mv("decided", "approved", date(2026, 2, 3), outcome="approved"), fee(date(2026, 2, 4))])
    assert s.decision_clock is None


def test_an_application_received_active_carries_its_dates_and_its_work_clock() -> None:
    """§ 540-8G: the permit runs "from the date of issuance"; work began as imported."""
    started = "2026-11-09T08:00:00+00:00"
    e = mv("received", "active", D, issued_on="2026-11-03", started_at=started, fields={"a": 1})
    s = fold([e])
    assert (s.issued_on, s.decided_on, s.started_at) == (
        date(2026, 11, 3),
        date(2026, 11, 3),
        datetime.fromisoformat(started),
    )
    assert s.clocks["work"] == Clock(date(2026, 11, 9), 1, "received") and s.previous_status is None
    assert s.decision_clock is None  # an issued permit has no decision due
    s = fold(
        [
            mv(
                "received",
                "application_received",
                D,
                issued_on=date(2026, 1, 4),
                started_at=datetime(2026, 1, 5, 1, tzinfo=UTC),
            )
        ]
    )
    assert (s.issued_on, s.started_at) == (date(2026, 1, 4), datetime(2026, 1, 5, 1, tzinfo=UTC))


def test_work_started_once_sets_the_time_and_a_later_move_to_active_does_not() -> None:
    at = datetime(2026, 3, 2, 14, tzinfo=UTC)
    s = fold([RECEIVED, ev("work_started", date(2026, 3, 2), when=at, **{"from": "approved", "to": "active"})])
    assert s.started_at == at and s.clocks["work"] == Clock(date(2026, 3, 2), 2, "work_started")
    s = fold([RECEIVED, ev("work_started", None, when=at, **{"from": "approved", "to": "active"})])
    assert s.clocks["work"] == Clock(date(2026, 3, 2), 2, "work_started")
    later = ev("work_started", date(2026, 4, 1), when=at + timedelta(days=30), **{"from": "x", "to": "active"})
    s = fold([RECEIVED, ev("work_started", date(2026, 3, 2), when=at, **{"from": "a", "to": "active"}), later])
    assert s.started_at == at and s.clocks["work"].seq == 2
    s = fold([RECEIVED, ev("work_started", date(2026, 3, 2), **{"from": "approved", "to": "active"})])
    assert s.started_at is None and "work" not in s.clocks


def test_extensions_final_stabilization_and_updates() -> None:
    """§ 540-8G: "may extend the period one or more times for up to an additional 180 days"."""
    s = fold(
        [
            mv("received", "active", D),
            mv("extended", "extended", date(2026, 5, 1), days="30"),
            mv("extended", "extended", date(2026, 6, 1), days=180),
            ev("updated", date(2026, 6, 2), fields={"site_address": "2 B St", "parcel_id": "7"}),
            ev("remeasured", date(2026, 6, 3), fields={"site_address": "3 C St"}),
            mv("final_stabilization", "final_stabilization", date(2026, 7, 1)),
        ]
    )
    assert s.extensions_days == [30, 180] and s.final_on == date(2026, 7, 1)
    assert s.fields == {"site_address": "3 C St", "parcel_id": "7"}
    # The second extension keeps the state: no move, nothing pushed for a move back.
    assert s.before == ["active", "extended"] and s.previous_status == "extended"
    assert (s.events, s.seq) == (6, 6)


# --- fold.py: orders ---------------------------------------------------------------------------


def test_orders_stand_until_retracted_or_the_suspension_lifted() -> None:
    """§ 540-12D: "may retract the stop-work order issued under § 540-12A or the permit revocation
    under § 540-12B"; § 540-8E: "may suspend or revoke a permit"."""
    events = [
        mv("received", "active", D),
        mv("stop_work_posted", "stop_work", date(2026, 2, 1), frm="active", case_id="ENF-1"),
        mv("suspended", "suspended", date(2026, 2, 2), frm="stop_work"),
    ]
    s = fold(events)
    assert s.orders == [Order("stop_work", date(2026, 2, 1), 2, "ENF-1"), Order("suspension", date(2026, 2, 2), 3)]
    assert s.order("stop_work").case_id == "ENF-1" and s.order("revocation") is None
    assert s.before == ["active", "stop_work"] and s.status == "suspended"
    events.append(mv("reinstated", "stop_work", date(2026, 2, 3), frm="suspended"))
    s = fold(events)
    assert [o.kind for o in s.orders] == ["stop_work"] and s.status == "stop_work" and s.before == ["active"]
    events.append(mv("retracted", "active", date(2026, 2, 4), frm="stop_work"))
    s = fold(events)
    assert s.orders == [] and s.status == "active" and s.before == []
    assert [o.kind for o in s.orders_posted] == ["stop_work", "suspension"]


def test_an_order_posted_keeps_the_day_and_event_that_lifted_it() -> None:
    """§ 540-12D: the order may be retracted; which case an order counts for needs when it was lifted."""
    events = [
        mv("received", "active", D),
        ev("case_opened", D, case_id="ENF-1", ground="A3"),
        mv("stop_work_posted", "stop_work", date(2026, 2, 1), case_id="ENF-1"),
        mv("suspended", "suspended", date(2026, 2, 2)),
        mv("reinstated", "stop_work", date(2026, 2, 3), frm="suspended"),
        mv("retracted", "active", date(2026, 2, 4), frm="stop_work"),
        ev("case_opened", date(2026, 2, 5), case_id="ENF-2", ground="A2"),
        mv("stop_work_posted", "stop_work", date(2026, 2, 6), case_id="ENF-2"),
    ]
    s = fold(events)
    assert s.orders_posted == [
        Order("stop_work", date(2026, 2, 1), 3, "ENF-1", date(2026, 2, 4), 6),
        Order("suspension", date(2026, 2, 2), 4, None, date(2026, 2, 3), 5),
        Order("stop_work", date(2026, 2, 6), 8, "ENF-2"),
    ]
    assert s.orders == [Order("stop_work", date(2026, 2, 6), 8, "ENF-2")]  # the open ones carry no closing
    assert s.case_seq == {"ENF-1": 2, "ENF-2": 7}


def test_a_suspension_reinstated_on_a_stop_work_order_leaves_the_order_standing() -> None:
    """§ 540-12D "may retract the stop-work order issued under § 540-12A": only a retraction lifts it;
    lifting the suspension posted on top of it (§ 540-8E "may suspend") closes the suspension alone,
    and an order closed once keeps the day and event that closed it."""
    events = [
        mv("received", "active", D),
        mv("stop_work_posted", "stop_work", date(2026, 2, 1), case_id="ENF-1"),
        mv("suspended", "suspended", date(2026, 2, 2)),
        mv("reinstated", "stop_work", date(2026, 2, 3), frm="suspended"),
    ]
    s = fold(events)
    assert s.orders_posted == [
        Order("stop_work", date(2026, 2, 1), 2, "ENF-1"),  # still standing: no closing day, no closing event
        Order("suspension", date(2026, 2, 2), 3, None, date(2026, 2, 3), 4),
    ]
    # A second suspension lifted later leaves the first one's closing as it was.
    events += [mv("suspended", "suspended", date(2026, 2, 5)), mv("reinstated", "stop_work", date(2026, 2, 6))]
    s = fold(events)
    assert s.orders_posted == [
        Order("stop_work", date(2026, 2, 1), 2, "ENF-1"),
        Order("suspension", date(2026, 2, 2), 3, None, date(2026, 2, 3), 4),
        Order("suspension", date(2026, 2, 5), 5, None, date(2026, 2, 6), 6),
    ]


def test_the_latest_order_of_a_kind_is_the_one_returned() -> None:
    s = PermitState("P", orders=[Order("stop_work", D, 1), Order("suspension", D, 2), Order("stop_work", D, 3)])
    assert s.order("stop_work").seq == 3 and s.order("suspension").seq == 2


def test_a_retraction_with_nothing_before_and_outside_an_order() -> None:
    s = fold([mv("received", "revoked", D), mv("retracted", "active", date(2026, 2, 1), frm="revoked")])
    assert s.orders == [] and s.before == [] and s.status == "active"  # imported revoked: no order was posted
    s = fold([mv("received", "active", D), mv("decided", "approved", D, outcome="approved"), mv("retracted", "x", D)])
    assert s.before == [] and s.status == "x"  # a retraction pops the state before, whatever it was


def test_a_revocation_retracted_returns_to_the_order_under_it() -> None:
    events = [
        mv("received", "active", D),
        mv("stop_work_posted", "stop_work", D),
        mv("revoked", "revoked", D),
        mv("retracted", "stop_work", D),
    ]
    s = fold(events)
    assert [o.kind for o in s.orders] == ["stop_work"] and [o.kind for o in s.orders_posted] == [
        "stop_work",
        "revocation",
    ]


def test_an_application_received_under_an_order_posts_none() -> None:
    """An import of a stopped permit says its state; no order event was recorded, so none stands."""
    s = fold([mv("received", "stop_work", D)])
    assert s.orders == [] and s.before == [] and s.status == "stop_work"
    s = fold([mv("stop_work_posted", "stop_work", D)])  # a stream without its receipt
    assert [o.kind for o in s.orders] == ["stop_work"] and s.before == []


# --- fold.py: money ----------------------------------------------------------------------------


def test_interest_recovered_from_the_guarantee_comes_off_its_balance() -> None:
    """§ 540-12E: "The costs ... plus interest at the rate authorized by Village Board, shall be billed to
    the responsible party or recovered from the surety bond, cash escrow, or irrevocable letter of credit"."""
    events = [
        mv("received", "active", D),
        ev("guarantee_received", D, guarantee_id=1, type="cash_escrow", amount=1000.0),
        ev("notice_of_intent", D, case_id="C", amount=200.0, recovered_from="guarantee", guarantee_id=1, interest=10.5),
        ev("costs_recorded", D, case_id="C", amount=100.0, recovered_from="billed", interest=7.0),
        ev("costs_recorded", D, case_id="C", amount=50.0, recovered_from="guarantee", guarantee_id=1),
    ]
    g = fold(events).guarantees[1]
    assert (g.recovered, g.balance) == (260.5, 739.5)  # 1000 - (200 + 10.5) - 50; the billed interest is not drawn


def test_the_balance_is_net_of_draws_releases_and_costs_recovered_from_it() -> None:
    """§ 540-8D(1): release "less any costs incurred by the administering authority"; § 540-12E:
    costs "recovered from the surety bond, cash escrow, or irrevocable letter of credit"."""
    events = [
        mv("received", "active", D),
        ev("guarantee_received", D, guarantee_id=1, type="cash_escrow", amount="1000", expires_on="2027-01-05"),
        ev("guarantee_received", D, guarantee_id=2, type="surety_bond", amount=500.0),
        ev("guarantee_drawn", date(2026, 2, 1), guarantee_id=1, amount=100.25),
        ev("guarantee_released", date(2026, 3, 1), guarantee_id=1, amount=200.0),
        ev("costs_recorded", date(2026, 3, 2), case_id="C", amount=50.0, recovered_from="guarantee", guarantee_id="1"),
        ev("notice_of_intent", date(2026, 3, 2), case_id="C", amount=25.0, recovered_from="guarantee", guarantee_id=2),
        ev("costs_recorded", date(2026, 3, 3), case_id="C", amount=70.0, recovered_from="billed"),
        ev("costs_recorded", date(2026, 3, 3), case_id="C", amount=9.0, recovered_from="guarantee"),
        ev("notice_of_intent", date(2026, 3, 4), case_id="C"),
        ev("guarantee_drawn", date(2026, 3, 5), guarantee_id=2, amount=None),
    ]
    s = fold(events)
    g1, g2 = s.guarantees[1], s.guarantees[2]
    assert g1 == GuaranteeState(1, "cash_escrow", 1000.0, D, date(2027, 1, 5), 100.25, 200.0, 50.0, None)
    assert g1.balance == 649.75 and g2.balance == 475.0 and g2.expires_on is None
    assert s.held == 1124.75
    assert [(c["amount"], c["recovered_from"], c["on"]) for c in s.costs] == [
        (50.0, "guarantee", date(2026, 3, 2)),
        (25.0, "guarantee", date(2026, 3, 2)),
        (70.0, "billed", date(2026, 3, 3)),
        (9.0, "guarantee", date(2026, 3, 3)),
    ]
    events.append(ev("guarantee_final_release", date(2026, 4, 1), guarantee_id=1, amount=649.75))
    s = fold(events)
    assert s.guarantees[1].final_release == 649.75 and s.guarantees[1].balance == 0.0 and s.held == 475.0
    # A final release of nothing held is still a final release.
    s = fold([*events[:3], ev("guarantee_final_release", D, guarantee_id=2, amount=None)])
    assert s.guarantees[2].final_release == 0.0 and s.guarantees[2].balance == 0.0


def test_a_balance_is_rounded_to_the_cent() -> None:
    g = GuaranteeState(1, "cash_escrow", 0.3, D, None, drawn=0.1, released=0.1)
    assert g.balance == 0.1 and PermitState("P", guarantees={1: g, 2: GuaranteeState(2, "x", 0.2, D, None)}).held == 0.3


# --- fold.py: inspections, cases, appeals, the plan -------------------------------------------


def test_deficiencies_open_with_their_inspection_and_close_with_their_repair() -> None:
    """§ 540-8E(6): "Repair or replace erosion and sediment control BMPs as necessary within 24 hours
    of an inspection or notification that repair or replacement is needed"."""
    t1, t2, t3 = (datetime(2026, 3, d, 15, tzinfo=UTC) for d in (2, 3, 4))
    events = [
        mv("received", "active", D),
        ev(
            "inspected",
            t1.date(),
            when=t1,
            by="office",
            inspection_id="7",
            deficiencies=[{"id": "1", "notified_at": "2026-03-02T16:00:00+00:00"}, {"id": 2}],
        ),
        ev("inspected", date(2026, 3, 3), by="holder"),  # a day alone: no report
        ev("repaired", t2.date(), when=t2, deficiency_ids=["1"]),
    ]
    s = fold(events)
    assert s.inspections == [InspectionFact(t1, "office", 2, 7), InspectionFact(date(2026, 3, 3), "holder", 3)]
    assert s.inspection_ids == [7]
    assert s.deficiencies[1] == {
        "inspected_at": t1,
        "notified_at": datetime(2026, 3, 2, 16, tzinfo=UTC),
        "repaired_at": t2,
    }
    assert s.deficiencies[2]["notified_at"] is None and s.open_deficiencies == [2]
    events.append(ev("inspected", t3.date(), when=t3, inspection_id=8, repaired=["2"], deficiencies=[{"id": 3}]))
    s = fold(events)
    assert s.deficiencies[2]["repaired_at"] == t3 and s.open_deficiencies == [3] and s.inspection_ids == [7, 8]
    assert s.inspections[-1] == InspectionFact(t3, UNRECORDED_BY, 5, 8)


def test_cases_appeals_and_plan_versions() -> None:
    """§ 540-13A(1): appeals of orders "decided" by the board; the plan's versions only go up."""
    s = fold(
        [
            mv("received", "active", D),
            ev("case_opened", D, case_id=11, ground="A3"),
            ev("appeal_filed", D, appeal_id=5),
            ev("appeal_filed", D, appeal_id="A-2"),
            ev("appeal_decided", D, appeal_id=5, outcome="reversed", body="zba"),
            ev("plan_original", D, version="0"),
            ev("plan_amendment", D, version=2),
            ev("plan_amendment", D, version=1),
            ev("plan_notice", D, notice_id=3),
        ]
    )
    assert s.cases == ["11"] and s.appeals == {"5": "reversed", "A-2": None} and s.plan_version == 2
    assert fold([ev("plan_original", D, version=0)]).plan_version == 0


def test_a_payment_of_costs_is_kept_with_its_case_amount_and_day() -> None:
    """§ 540-12E: "In the event a responsible party fails to pay the amount due", so each payment is kept
    with the day it was made; costs recorded are not payments."""
    paid_on = date(2026, 2, 3)
    s = fold(
        [
            mv("received", "active", D),
            ev("costs_recorded", D, case_id="C1", amount=100.0, recovered_from="billed"),
            ev("costs_paid", paid_on, case_id="C1", amount=40.0),
        ]
    )
    assert s.payments == [{"case_id": "C1", "amount": 40.0, "on": paid_on}]
    assert [x["amount"] for x in s.costs] == [100.0]


# --- fold.py: streams and sequence -------------------------------------------------------------


def test_fold_numbers_events_and_refuses_two_streams() -> None:
    assert fold([]) == PermitState("")
    s = fold([RECEIVED, fee(D)])
    assert (s.stream, s.events, s.seq) == ("P", 2, 2) and s.decision_clock.seq == 2
    stored = [
        ev("received", D, seq=4, to="application_received"),
        ev("fee_paid", D, seq=9, fee_kind="application", amount=1, receipt="R"),
    ]
    s = fold(stored)
    assert (s.events, s.seq) == (2, 9) and s.decision_clock == Clock(D, 9, "fee_paid")
    with pytest.raises(ValueError, match=r"^event closed of 'Q' is not of stream 'P'$"):
        fold([RECEIVED, HistoryEvent("Q", "closed", T, "c", data={"to": "closed"})])


def test_dates_and_times_are_read_from_their_text() -> None:
    s = fold(
        [mv("received", "active", D, issued_on=datetime(2026, 1, 4, 23, tzinfo=UTC), started_at="2026-01-05T06:00:00")]
    )
    assert s.issued_on == date(2026, 1, 4) and s.started_at == datetime(2026, 1, 5, 6)
    s = fold([mv("received", "active", D, issued_on="2026-01-04T23:00:00+00:00")])
    assert s.issued_on == date(2026, 1, 4)


# --- verify.py over a registry built in code ---------------------------------------------------


class FakeRegistry:
    """What verify reads of a registry: its history and its tables, as plain objects."""

    def __init__(self, events, permits=(), cases=(), fees=(), guarantees=()) -> None:
        self.events, self._permits, self._cases = list(events), list(permits), list(cases)
        self._fees, self._guarantees = list(fees), list(guarantees)
        self.profile = load_profile()

    def history(self):
        return self.events

    def permits(self):
        return self._permits

    def cases(self):
        return self._cases

    def fees(self):
        return self._fees

    def guarantees(self):
        return self._guarantees


def row(number: str = "P", **kw: Any) -> SimpleNamespace:
    values = {
        "permit_number": number,
        "status": "application_received",
        "received_on": D,
        "information_requested_on": None,
        "information_received_on": None,
        "decided_on": None,
        "issued_on": None,
        "started_at": None,
        "final_on": None,
        "building_permit_expires": None,
        "expires_on": None,
        "reports": [],
        "open_repairs": [],
    }
    return SimpleNamespace(**{**values, **kw})


def report(i: int, **kw: Any) -> SimpleNamespace:
    values = {"by": None, "pre_start": None, "adjoining_repairs": None, "on_site_documents": None}
    return SimpleNamespace(id=i, **{**values, "certificate_posted": None, **kw})


def test_verify_finds_nothing_when_the_tables_equal_the_fold() -> None:
    issued = [
        mv("received", "application_received", D),
        fee(D),
        mv("decided", "approved", date(2026, 1, 20), outcome="approved"),
    ]
    reg = FakeRegistry(
        [*issued, ev("guarantee_received", D, guarantee_id=1, type="cash_escrow", amount=100.0)],
        permits=[
            row(
                status="approved",
                decided_on=date(2026, 1, 20),
                issued_on=date(2026, 1, 20),
                expires_on=date(2026, 7, 19),
            )
        ],
        fees=[SimpleNamespace(permit_number="P")],
        guarantees=[SimpleNamespace(id=1, balance=100.004)],
    )
    assert verify(reg) == []


def test_verify_reports_every_projection_that_differs() -> None:
    """Issue 23: "`esc-gis permits verify` rebuilds every projection from the history and reports any difference"."""
    t = datetime(2026, 3, 2, 15, tzinfo=UTC)
    events = [
        mv("received", "active", D, issued_on=D, started_at=t),
        fee(D),
        ev("guarantee_received", D, guarantee_id=1, type="cash_escrow", amount=100.0),
        ev("guarantee_received", D, guarantee_id=2, type="cash_escrow", amount=50.0),
        ev("inspected", t.date(), when=t, by="office", inspection_id=7, deficiencies=[{"id": 3}]),
        ev("case_opened", D, case_id="C1", ground="A3"),
        HistoryEvent("ENF-9", "case_opened", T, "c", on=D, data={"case_id": "ENF-9", "ground": "A1"}),
        HistoryEvent("GHOST", "received", T, "c", on=D, data={"to": "active"}),
    ]
    reg = FakeRegistry(
        events,
        permits=[
            row(
                status="stop_work",
                decided_on=D,
                issued_on=D,
                started_at=t,
                expires_on=date(2026, 7, 5),
                reports=[report(8)],
            ),
            row("NOHIST"),
        ],
        cases=[
            SimpleNamespace(case_id="C1", permit_number="P", events=[]),
            SimpleNamespace(case_id="ENF-9", permit_number=None, events=[]),
            SimpleNamespace(case_id="C2", permit_number="P", events=[]),
            SimpleNamespace(case_id="C3", permit_number="NOHIST", events=[]),
        ],
        fees=[],
        guarantees=[SimpleNamespace(id=1, balance=90.0)],
    )
    assert [str(d) for d in verify(reg)] == [
        "NOHIST: the permit's history is 'a row' in the table, 'no event' in the history",
        "GHOST: the stream is 'no permit or case' in the table, '1 event(s)' in the history",
        "P: status is 'stop_work' in the table, 'active' in the history",
        "P: expires_on is datetime.date(2026, 7, 5) in the table, datetime.date(2026, 7, 4) in the history",
        "P: fees paid is 0 in the table, 1 in the history",
        "P: guarantee #1 balance is 90.0 in the table, 100.0 in the history",
        "P: guarantee #2 is None in the table, 'received' in the history",
        "P: inspection reports is [8] in the table, [7] in the history",
        "P: open deficiencies is [] in the table, [3] in the history",
        "P: case C2 is 'opened' in the table, 'not in the history' in the history",
        "NOHIST: case C3 is 'opened' in the table, 'not in the history' in the history",
    ]
    assert verify(reg)[0] == Difference("NOHIST", "the permit's history", "a row", "no event")


def test_verify_compares_every_life_cycle_column_and_the_expiry_with_a_building_permit() -> None:
    """§ 540-8G: "valid for a period of 180 days, or the length of the building permit ..., whichever
    is longer, from the date of issuance", extended "one or more times"."""
    t = datetime(2026, 2, 2, 15, tzinfo=UTC)
    events = [
        mv("received", "application_received", D),
        fee(D),
        mv("information_requested", "incomplete", date(2026, 1, 6)),
        mv("information_received", "under_review", date(2026, 1, 7)),
        mv("decided", "approved", date(2026, 1, 8), outcome="approved"),
        ev("work_started", date(2026, 2, 2), when=t, **{"from": "approved", "to": "active"}),
        mv("extended", "extended", date(2026, 5, 1), days=30),
        mv("final_stabilization", "final_stabilization", date(2026, 6, 1)),
    ]
    good = row(
        status="final_stabilization",
        information_requested_on=date(2026, 1, 6),
        information_received_on=date(2026, 1, 7),
        decided_on=date(2026, 1, 8),
        issued_on=date(2026, 1, 8),
        started_at=t,
        final_on=date(2026, 6, 1),
        building_permit_expires=date(2026, 12, 31),
        expires_on=date(2027, 1, 30),
    )
    reg = FakeRegistry(events, permits=[good], fees=[SimpleNamespace(permit_number="P")])
    assert verify(reg) == []
    wrong = {
        "received_on": date(2026, 1, 4),
        "information_requested_on": None,
        "information_received_on": None,
        "decided_on": None,
        "issued_on": date(2026, 1, 9),
        "started_at": None,
        "final_on": None,
        "expires_on": date(2027, 1, 31),
    }
    reg = FakeRegistry(
        events, permits=[SimpleNamespace(**{**good.__dict__, **wrong})], fees=[SimpleNamespace(permit_number="P")]
    )
    assert [d.what for d in verify(reg)] == [*list(wrong)]
    assert verify(reg)[-1].history == date(2027, 1, 30) and verify(reg)[0].table == date(2026, 1, 4)


# --- Edges the mutation run asked for ----------------------------------------------------------


def test_a_move_with_its_state_is_a_complete_event() -> None:
    assert check_event(mv("closed", "closed")) == []
    assert check_event(mv("decided", "approved", outcome="approved")) == []


def test_every_draw_release_and_recovered_cost_adds_up() -> None:
    """§ 540-8D(1): "less any costs incurred by the administering authority", each of them."""
    events = [
        mv("received", "active", D),
        ev("guarantee_received", D, guarantee_id=1, type="cash_escrow", amount=1000.0),
        ev("guarantee_drawn", D, guarantee_id=1, amount=100.0),
        ev("guarantee_drawn", D, guarantee_id=1, amount=10.0),
        ev("guarantee_released", D, guarantee_id=1, amount=200.0),
        ev("guarantee_released", D, guarantee_id=1, amount=20.0),
        ev("costs_recorded", D, case_id="C", amount=50.0, recovered_from="guarantee", guarantee_id=1),
        ev("costs_recorded", D, case_id="C", amount=5.0, recovered_from="guarantee", guarantee_id=1),
    ]
    g = fold(events).guarantees[1]
    assert (g.drawn, g.released, g.recovered, g.balance) == (110.0, 220.0, 55.0, 615.0)


def test_the_receipt_of_an_application_whose_fee_came_first_starts_the_clock() -> None:
    """§ 540-8C(1): "the receipt of a complete permit application": the receipt completes it."""
    events = [fee(date(2026, 1, 2)), RECEIVED]
    assert fold(events).decision_clock == Clock(D, 2, "received")


def test_a_move_under_review_of_a_complete_application_starts_the_clock_when_none_runs() -> None:
    """§ 540-8C(1): an application received incomplete, its fee paid, then taken under review."""
    events = [
        mv("received", "incomplete", D),
        fee(date(2026, 1, 6)),
        mv("under_review", "under_review", date(2026, 1, 8)),
    ]
    assert fold(events[:2]).decision_clock is None
    assert fold(events).decision_clock == Clock(date(2026, 1, 6), 3, "under_review")


def test_the_first_move_of_a_stream_and_a_second_receipt_leave_no_state_before() -> None:
    assert fold([mv("under_review", "under_review", D)]).before == []
    s = fold([mv("received", "active", D), mv("received", "active", D)])
    assert s.before == [] and s.status == "active"


def test_verify_allows_half_a_cent_and_no_more() -> None:
    events = [
        mv("received", "active", D),
        ev("guarantee_received", D, guarantee_id=1, type="cash_escrow", amount=100.0),
        ev("guarantee_final_release", D, guarantee_id=1, amount=100.0),
    ]
    rows = [row(status="active")]
    assert verify(FakeRegistry(events, permits=rows, guarantees=[SimpleNamespace(id=1, balance=0.005)])) == []
    differs = verify(FakeRegistry(events, permits=rows, guarantees=[SimpleNamespace(id=1, balance=0.01)]))
    assert [str(d) for d in differs] == ["P: guarantee #1 balance is 0.01 in the table, 0.0 in the history"]


# --- The facts main's law fixes added to the history ------------------------------------------


def test_an_extension_records_its_conditions_and_authorizations_and_may_keep_the_state() -> None:
    """§ 540-8G: "the length of the building permit or other construction authorizations"; "may
    require additional BMPs as a condition of the extension"; "may extend the period one or more times"."""
    events = [
        mv("received", "approved", D, issued_on=D),
        mv("extended", "approved", date(2026, 5, 1), days=30, conditions=["second silt fence"], authorizations=["DNR"]),
        mv("extended", "approved", date(2026, 6, 1), days=60),
    ]
    s = fold(events)
    assert s.extensions == [
        {"on": date(2026, 5, 1), "days": 30, "conditions": ["second silt fence"], "authorizations": ["DNR"]},
        {"on": date(2026, 6, 1), "days": 60, "conditions": [], "authorizations": []},
    ]
    assert s.status == "approved" and s.before == [] and s.extensions_days == [30, 60]
    # Under a stop-work order the order stands and its retraction still goes back past the extension.
    stopped = [
        mv("received", "active", D),
        mv("stop_work_posted", "stop_work", D),
        mv("extended", "stop_work", D, days=10),
        mv("retracted", "active", D),
    ]
    s = fold(stopped[:3])
    assert s.before == ["active"] and [o.kind for o in s.orders] == ["stop_work"]
    assert fold(stopped).status == "active" and fold(stopped).orders == []


def test_an_inspection_records_who_its_contents_and_the_office_checklist() -> None:
    """§ 540-8E(6): weekly reports "shall include all of the following"; § 540-8E(7) the plan, reports
    and permit kept on site; § 540-8E(8) the certificate posted."""
    t = datetime(2026, 3, 2, 15, tzinfo=UTC)
    e = ev(
        "inspected",
        t.date(),
        when=t,
        by="office",
        inspection_id=4,
        contents=["location", "phase"],
        pre_start=True,
        adjoining_repairs=1,
        checklist={"on_site_documents": 1, "certificate_posted": 0},
    )
    (fact,) = fold([e]).inspections
    assert fact == InspectionFact(
        t, "office", 1, 4, ("location", "phase"), True, True, {"on_site_documents": True, "certificate_posted": False}
    )
    (bare,) = fold([ev("inspected", D, by="", contents=[])]).inspections
    assert bare == InspectionFact(D, UNRECORDED_BY, 1, None, (), False, False, {})


def test_a_notice_to_cease_and_an_approval_on_appeal() -> None:
    """§ 540-12C: "after being notified"; § 540-8C(2) and § 540-13A(1): a disapproval reversed on appeal."""
    s = fold(
        [
            mv("received", "application_received", D),
            ev("notified", date(2026, 2, 1), case_id=12),
            mv("decided", "disapproved", date(2026, 2, 2), outcome="disapproved"),
            mv("approved_on_appeal", "approved", date(2026, 3, 3), appeal_id="A1", outcome="reversed", body="zba"),
        ]
    )
    assert s.notified == [("12", date(2026, 2, 1))]
    assert (s.status, s.decided_on, s.issued_on) == ("approved", date(2026, 3, 3), date(2026, 3, 3))


def test_verify_compares_each_cases_costs_and_notices_with_the_history() -> None:
    """§ 540-12E: costs "recovered from the surety bond, cash escrow, or irrevocable letter of credit" or billed."""
    events = [
        mv("received", "active", D),
        ev("case_opened", D, case_id="C1", ground="A3"),
        ev("notified", D, case_id="C1"),
        ev("notice_of_intent", D, case_id="C1", amount="80.0", recovered_from="billed"),
        ev("costs_recorded", D, case_id="C1", amount=20.004, recovered_from="billed"),  # cents on both sides
        ev("costs_recorded", D, case_id="OTHER", amount=5.0, recovered_from="billed"),
    ]
    own = [
        HistoryEvent(
            "C1", "costs_recorded", T, "c", on=D, data={"case_id": "C1", "amount": 1.0, "recovered_from": "billed"}
        )
    ]

    def case(*evs: tuple[str, float | None, str | None]) -> SimpleNamespace:
        kinds = [SimpleNamespace(kind=k, costs=c, costs_from=f) for k, c, f in evs]
        return SimpleNamespace(case_id="C1", permit_number="P", events=kinds)

    good = case(
        ("notified", None, None), ("notice", 80.004, "billed"), ("costs", 20.0, "billed"), ("costs", 1.0, "billed")
    )
    assert verify(FakeRegistry([*events, *own], permits=[row(status="active")], cases=[good])) == []
    bad = case(
        ("notice", 80.0, "guarantee"), ("costs", 20.0, "billed"), ("notified", None, None), ("notified", None, None)
    )
    assert [str(d) for d in verify(FakeRegistry(events, permits=[row(status="active")], cases=[bad]))] == [
        "C1: costs recorded is [(20.0, 'billed'), (80.0, 'guarantee')] in the table, "
        "[(20.0, 'billed'), (80.0, 'billed')] in the history",
        "C1: notices to cease is 2 in the table, 1 in the history",
    ]


def test_verify_compares_each_reports_who_pre_start_repairs_and_checklist() -> None:
    """§ 540-8E(6) is the holder's duty, § 540-8E(7) and § 540-11 the office's power: who inspected is kept."""
    t = datetime(2026, 3, 2, 15, tzinfo=UTC)
    events = [
        mv("received", "active", D),
        ev("inspected", t.date(), when=t, by="holder", inspection_id=1),
        ev("inspected", t.date(), when=t, by="office", inspection_id=2, pre_start=True, adjoining_repairs=True,
           checklist={"on_site_documents": True, "certificate_posted": False}),
    ]  # fmt: skip
    good = [
        report(1),
        report(2, by="office", pre_start=1, adjoining_repairs=1, on_site_documents=True, certificate_posted=False),
    ]
    assert verify(FakeRegistry(events, permits=[row(status="active", reports=good)])) == []
    bad = [report(1, by="office"), report(2, by="office", pre_start=0, adjoining_repairs=1, on_site_documents=True)]
    assert [str(d) for d in verify(FakeRegistry(events, permits=[row(status="active", reports=bad)]))] == [
        "P: inspection report #1 is ('office', False, False, {}) in the table, ('holder', False, False, {}) in the history",
        "P: inspection report #2 is ('office', False, True, {'on_site_documents': True}) in the table, "
        "('office', True, True, {'on_site_documents': True, 'certificate_posted': False}) in the history",
    ]
    # A report the history lacks is reported once, as a report list that differs; the others still compared.
    extra = [report(3), *bad]
    assert [d.what for d in verify(FakeRegistry(events, permits=[row(status="active", reports=extra)]))] == [
        "inspection reports",
        "inspection report #1",
        "inspection report #2",
    ]


def test_verify_compares_each_cases_payments_with_the_history() -> None:
    """§ 540-12E: costs not paid are assessed, so the payments table must equal the history's ``costs_paid``.

    By hand: the history pays 40.254 on C1 (40.25 to the cent) and 7.00 on another case; the
    table's payment of 40.246 is 40.25 too, and is a payment, not a cost.
    """
    events = [
        mv("received", "active", D),
        ev("case_opened", D, case_id="C1", ground="A3"),
        ev("costs_recorded", D, case_id="C1", amount=100.0, recovered_from="billed"),
        ev("costs_paid", D, case_id="C1", amount=40.254),
        ev("costs_paid", D, case_id="OTHER", amount=7.0),
    ]

    def case(*evs: tuple[str, float | None, str | None]) -> SimpleNamespace:
        kinds = [SimpleNamespace(kind=k, costs=c, costs_from=f) for k, c, f in evs]
        return SimpleNamespace(case_id="C1", permit_number="P", events=kinds)

    good = case(("costs", 100.0, "billed"), ("paid", 40.246, None))
    assert verify(FakeRegistry(events, permits=[row(status="active")], cases=[good])) == []
    # A payment row without an amount counts as 0.00, and one more or less than the history differs.
    bad = case(("costs", 100.0, "billed"), ("paid", None, None))
    assert [str(d) for d in verify(FakeRegistry(events, permits=[row(status="active")], cases=[bad]))] == [
        "C1: payments is [0.0] in the table, [40.25] in the history",
    ]


def test_verify_reports_an_event_dated_after_today_first_with_its_village_day() -> None:
    """Issue 34: a stored day after today on the Village's clock (2062 for 2026) is reported, with the fix.

    By hand: 2062-01-01 03:00 UTC is 2061-12-31 21:00 in Chicago (UTC-6), so that event, stored
    with a time only, took effect on 2061-12-31; the one stored with its day took effect on 2062-01-02.
    """
    late = datetime(2062, 1, 1, 3, tzinfo=UTC)
    events = [
        HistoryEvent("P", "received", T, "clerk", on=D, data={"from": None, "to": "active"}, seq=1),
        HistoryEvent("P", "fee_paid", T, "clerk", on=date(2062, 1, 2), seq=2,
                     data={"fee_kind": "application", "amount": 150.0, "receipt": "R1"}),
        HistoryEvent("P", "inspected", T, "clerk", when=late, data={"by": "office"}, seq=3),
    ]  # fmt: skip
    reg = FakeRegistry(events, permits=[row(status="active")], fees=[SimpleNamespace(permit_number="P")])
    today = reg.profile.today()
    # 22:00 today in Chicago is already tomorrow in UTC: its Village day is today, not after it.
    tonight = datetime.combine(today, time(22), tzinfo=ZoneInfo("America/Chicago")).astimezone(UTC)
    assert tonight.date() > today
    reg.events.append(HistoryEvent("P", "inspected", T, "clerk", when=tonight, data={"by": "office"}, seq=4))
    said = [str(d) for d in verify(reg)]
    assert sum(1 for d in verify(reg) if d.note is not None) == 2
    assert said[:2] == [
        f"P: event 2 (fee_paid) took effect on 2062-01-02, after today on the Village's clock ({today}): "
        "a day not yet come (2062 typed for 2026?) silences the deadlines that count from it; correct the stored day.",
        f"P: event 3 (inspected) took effect on 2061-12-31, after today on the Village's clock ({today}): "
        "a day not yet come (2062 typed for 2026?) silences the deadlines that count from it; correct the stored day.",
    ]
    assert verify(reg)[0] == Difference("P", "event 2 (fee_paid)", None, None, note=verify(reg)[0].note)


# --- The clerk's log entry translated into its typed history event (typed) ------------------------

_AT = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)
_WHEN = datetime(2026, 6, 1, 8, tzinfo=timezone.utc)


def _log(kind: str, frm: str | None = None, to: str | None = None, days: int | None = None) -> Event:
    return Event(_AT, "clerk", kind, frm, to, date(2026, 6, 1), days, "why")


def _typed(e: Event, **data: Any) -> tuple[str, dict[str, Any]]:
    h = typed("ESC-1", e, when=_WHEN, **data)
    assert (h.stream, h.recorded_at, h.who, h.on, h.when, h.why) == (
        "ESC-1",
        _AT,
        "clerk",
        date(2026, 6, 1),
        _WHEN,
        "why",
    )
    return h.kind, dict(h.data)


@pytest.mark.parametrize(
    ("log", "kind", "data"),
    [
        (_log("received", None, "application_received"), "received", {"from": None, "to": "application_received"}),
        (_log("imported", None, "active"), "received", {"from": None, "to": "active"}),
        (_log("transition", "under_review", "approved"), "decided", {"from": "under_review", "to": "approved", "outcome": "approved"}),
        (_log("transition", "under_review", "disapproved"), "decided", {"from": "under_review", "to": "disapproved", "outcome": "disapproved"}),
        (_log("transition", "incomplete", "under_review"), "information_received", {"from": "incomplete", "to": "under_review"}),
        (_log("transition", "stop_work", "active"), "retracted", {"from": "stop_work", "to": "active"}),
        (_log("transition", "active", "stop_work"), "stop_work_posted", {"from": "active", "to": "stop_work"}),
        (_log("retraction", "revoked", "active"), "retracted", {"from": "revoked", "to": "active"}),
        (_log("reinstatement", "suspended", "active"), "reinstated", {"from": "suspended", "to": "active"}),
        (_log("extension", "active", "extended", days=30), "extended", {"from": "active", "to": "extended", "days": 30}),
        (_log("appeal_approval", "disapproved", "approved"), "approved_on_appeal", {"from": "disapproved", "to": "approved"}),
    ],
)  # fmt: skip
def test_a_logged_move_is_typed_with_where_it_came_from_and_went(log: Event, kind: str, data: dict) -> None:
    assert _typed(log) == (kind, data)


def test_a_moves_own_facts_are_kept_and_win_over_the_defaults() -> None:
    assert _typed(_log("extension", "active", "extended", days=30), days=60, conditions="more BMPs") == (
        "extended",
        {"from": "active", "to": "extended", "days": 60, "conditions": "more BMPs"},
    )
    assert _typed(_log("transition", "under_review", "approved"), outcome="approved_with_conditions") == (
        "decided",
        {"from": "under_review", "to": "approved", "outcome": "approved_with_conditions"},
    )


@pytest.mark.parametrize(
    ("log_kind", "kind"),
    [
        ("update", "updated"),
        ("remeasured", "remeasured"),
        ("inspection", "inspected"),
        ("repair", "repaired"),
        ("fee", "fee_paid"),
        ("guarantee", "guarantee_received"),
        ("guarantee_draw", "guarantee_drawn"),
        ("guarantee_release", "guarantee_released"),
        ("guarantee_final_release", "guarantee_final_release"),
        ("enforcement", "case_opened"),
        ("appeal", "appeal_filed"),
        ("appeal_decision", "appeal_decided"),
        ("plan_original", "plan_original"),
        ("plan_amendment", "plan_amendment"),
        ("plan_notice", "plan_notice"),
    ],
)
def test_a_logged_fact_is_typed_with_its_facts_alone(log_kind: str, kind: str) -> None:
    assert _typed(_log(log_kind, "active", "active"), amount=5) == (kind, {"amount": 5})


def test_a_log_entry_without_a_typed_kind_is_a_defect_of_the_caller() -> None:
    with pytest.raises(RegistryError, match=r"^No history kind for the log entry 'gossip'\.$"):
        typed("ESC-1", _log("gossip"))
    assert typed("ESC-1", _log("update")).when is None


def test_an_application_closed_undecided_has_no_decision_clock() -> None:
    """§ 540-8C(1): "Within 20 business days of the receipt of a complete permit application ... the
    administering authority shall approve, approve conditionally or disapprove the application"; one closed
    before a decision (withdrawn) waits for none, so no deemed approval (§ 540-8C(5)) can run out on it.
    The office model found the clock still running in ``closed`` (issue 46)."""
    complete = [RECEIVED, fee(D)]
    assert fold(complete).decision_clock is not None
    closed = fold([*complete, mv("closed", "closed", date(2026, 1, 6), frm="application_received")])
    assert closed.status == "closed" and closed.decision_clock is None
    # A move that keeps it waiting keeps the clock where it started.
    review = fold([*complete, mv("under_review", "under_review", date(2026, 1, 6), frm="application_received")])
    assert review.decision_clock is not None and review.decision_clock.start == D
