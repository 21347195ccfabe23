"""Enforcement cases pinned action by action, pure (§ 540-12).

No registry here: the state replayed from a case's events, the profile's tables, and every
refusal of an action with its exact words, so a mutation of an order or a bound fails a test.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timezone

import pytest

from esc_gis.errors import ProfileError
from esc_gis.registry.domain.enforcement import (
    CaseEvent,
    EnforcementCase,
    action_sections,
    check_action,
    counted_orders,
    grounds,
    open_state,
    order_state,
    problems,
    without_permit_fits,
    without_permit_terms,
)
from esc_gis.registry.domain.fold import Order

AT = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)
OPENED = date(2026, 6, 1)
TODAY = date(2026, 6, 30)


def _e(kind: str, day: int = 2, costs: float | None = None, costs_from: str | None = None) -> CaseEvent:
    return CaseEvent(day, kind, date(2026, 6, day), "officer", AT, costs, costs_from)


def _case(*events: CaseEvent, permit: str | None = "ESC-1") -> EnforcementCase:
    return EnforcementCase(
        "C-1", permit, None, None, "no_controls", OPENED, "no silt fence", "officer", None, events,
        permit_issued=permit is not None,
    )  # fmt: skip


def _check(
    case: EnforcementCase,
    kind: str,
    day: date | None = date(2026, 6, 10),
    *,
    order_open: bool = False,
    order_posted: bool = False,
    **kw,
) -> list[str]:
    """Check an action; ``order_open``/``order_posted``: the permit's history holds a stop-work order
    standing, or posted and lifted, by the permit's own route (one order whichever route, § 540-12A)."""
    if order_open or order_posted:
        case = replace(case, permit_order="stop_work" if order_open else "retracted")
    kw.setdefault("costs", None)
    kw.setdefault("costs_from", None)
    return check_action(case, kind, day, today=TODAY, **kw)


# --- the state a case's events leave ---


def test_the_state_is_replayed_from_the_events_the_last_one_counting() -> None:
    assert open_state([]) == "open"
    assert open_state([_e("notified"), _e("notice"), _e("costs"), _e("referral")]) == "open"
    assert open_state([_e("stop_work")]) == "stop_work"
    assert open_state([_e("stop_work"), _e("retraction")]) == "retracted"
    assert open_state([_e("stop_work"), _e("retraction"), _e("stop_work")]) == "stop_work"
    assert open_state([_e("stop_work"), _e("closed")]) == "closed"
    assert open_state([_e("closed"), _e("notice")]) == "closed"
    assert _case(_e("stop_work")).state == "stop_work"


def test_costs_and_the_special_assessment_are_totalled_apart() -> None:
    """§ 540-12E: costs "billed to the responsible party or recovered from the surety bond, cash escrow, or
    irrevocable letter of credit"; an amount not paid is entered "on the tax rolls ... as a special assessment"."""
    case = _case(
        _e("notice", costs=100.5, costs_from="billed"),
        _e("costs", costs=20.0, costs_from="guarantee"),
        _e("costs", costs=None),
        _e("costs", costs=60.25, costs_from="special_assessment"),
    )
    assert case.costs_total == 120.5 and type(case.costs_total) is float
    assert case.assessed_total == 60.25 and type(case.assessed_total) is float
    assert _case().costs_total == 0.0 and _case().assessed_total == 0.0


# --- the profile's tables ---


def test_grounds_are_read_with_their_section_and_text() -> None:
    t = {"enforcement": {"grounds": {"no_controls": {"section": "§ 540-12A", "text": "no controls", "x": 1}}}}
    assert grounds(t) == {"no_controls": {"section": "§ 540-12A", "text": "no controls", "x": 1}}


@pytest.mark.parametrize(
    "tables", [{}, {"enforcement": None}, {"enforcement": {"grounds": {}}}, {"enforcement": {"grounds": []}}]
)
def test_a_profile_without_grounds_is_refused(tables) -> None:
    with pytest.raises(
        ProfileError,
        match=r"^The profile has no \[enforcement\.grounds\] table \(code = \{section, text\}\) for enforcement cases\.$",
    ):
        grounds(tables)


def test_a_ground_without_its_section_or_text_is_named() -> None:
    g = {"a": {"section": "s"}, "b": {"text": "t"}, "c": "x", "d": {"section": "s", "text": "t"}}
    with pytest.raises(ProfileError) as e:
        grounds({"enforcement": {"grounds": g}})
    assert str(e.value) == "[enforcement.grounds] entries 'a', 'b', 'c' need a section and a text."


def test_without_permit_terms_are_revoked_or_expired_each_with_text_section_and_basis() -> None:
    w = {"revoked": {"text": "revoked", "section": "§ 540-12B", "basis": "ordinance"}}
    assert without_permit_terms({"enforcement": {"without_permit": w}}) == {
        "revoked": ("revoked", "§ 540-12B", "ordinance")
    }
    both = {**w, "expired": {"text": "expired", "section": "§ 540-8G", "basis": "interpretation"}}
    assert without_permit_terms({"enforcement": {"without_permit": both}})["expired"] == (
        "expired",
        "§ 540-8G",
        "interpretation",
    )
    assert without_permit_terms({}) == {}
    assert without_permit_terms({"enforcement": None}) == {}
    msg = (
        r"^\[enforcement\.without_permit\.{k}\] must be one of not_issued, revoked, expired, closed, with a text, "
        r"a section and a basis\.$"
    )
    for k, v in [
        ("lapsed", {"text": "t", "section": "s", "basis": "b"}),
        ("expired", "t"),
        ("expired", {"text": " ", "section": "s", "basis": "b"}),
        ("expired", {"text": "t", "section": "s"}),
        ("expired", {"text": "t", "basis": "b"}),
    ]:
        with pytest.raises(ProfileError, match=msg.format(k=k)):
            without_permit_terms({"enforcement": {"without_permit": {k: v}}})


def test_a_permit_is_no_permit_once_revoked_or_after_its_last_day() -> None:
    both = {"revoked": ("", "", ""), "expired": ("", "", "")}
    last = date(2027, 5, 19)
    issued = ["active", "extended"]
    assert without_permit_fits(both, "revoked", last, date(2027, 1, 1), issued) == "revoked"
    assert without_permit_fits({"expired": both["expired"]}, "revoked", last, date(2027, 1, 1), issued) is None
    assert without_permit_fits(both, "active", last, last, issued) is None
    assert without_permit_fits(both, "extended", last, date(2027, 5, 20), issued) == "expired"
    assert without_permit_fits({"revoked": both["revoked"]}, "active", last, date(2027, 5, 20), issued) is None
    assert without_permit_fits(both, "suspended", last, date(2027, 5, 20), issued) is None
    assert without_permit_fits(both, "active", None, date(2027, 5, 20), issued) is None


def test_action_sections_are_the_profiles_as_text() -> None:
    assert action_sections({"enforcement": {"actions": {"stop_work": "§ 540-12A", 1: 2}}}) == {
        "stop_work": "§ 540-12A",
        "1": "2",
    }
    assert action_sections({}) == {}
    assert action_sections({"enforcement": None}) == {}


def test_problems_are_of_one_source() -> None:
    assert [(p.source, p.row, p.message, p.fix) for p in problems("C-1", ["a", "b"], "fix")] == [
        ("C-1", None, "a", "fix"),
        ("C-1", None, "b", "fix"),
    ]


# --- the order of the actions ---


def test_an_unknown_action_is_refused_alone() -> None:
    assert _check(_case(_e("closed")), "fine", None) == [
        "unknown action 'fine'; use one of notified, stop_work, notice, costs, paid, referral, retraction, closed."
    ]


def test_an_action_is_dated_between_the_cases_last_date_and_today() -> None:
    case = _case(_e("notified", day=5))
    assert _check(case, "notified", date(2026, 6, 5)) == []
    assert _check(case, "notified", TODAY) == []
    assert _check(case, "notified", date(2026, 6, 4)) == [
        "the notice's day 2026-06-04 is before the case's last date (2026-06-05): "
        "give the day it happened, on or after 2026-06-05."
    ]
    assert _check(_case(), "notified", date(2026, 5, 31)) == [
        "the notice's day 2026-05-31 is before the case's last date (2026-06-01): "
        "give the day it happened, on or after 2026-06-01."
    ]
    assert _check(_case(), "notified", OPENED) == []
    assert _check(case, "notified", date(2026, 7, 1)) == [
        "the notice's day 2026-07-01 is after today on the Village's clock (2026-06-30): "
        "give the day it happened, on or before 2026-06-30."
    ]
    assert _check(case, "notified", None) == ["the action has no date."]


def test_nothing_is_recorded_on_a_closed_case() -> None:
    assert _check(_case(_e("closed")), "notified") == ["the case is closed."]
    # A stop-work order standing on the permit does not reopen a closed case.
    assert _check(_case(_e("closed")), "retraction", order_open=True) == [
        "the case is closed.",
        "there is no stop-work order in effect to retract.",
    ]


def test_one_stop_work_order_at_a_time_whichever_route_posted_it() -> None:
    """§ 540-12A: the order is posted once; the case goes on from it."""
    twice = [
        "a stop-work order is already in effect (posted on the permit); the case goes on from it "
        "(a notice of intent, a referral, a retraction)."
    ]
    assert _check(_case(), "stop_work") == []
    assert _check(_case(_e("stop_work")), "stop_work") == twice
    assert _check(_case(), "stop_work", order_open=True) == twice
    assert _check(_case(_e("stop_work"), _e("retraction", 3)), "stop_work") == []


def test_a_retraction_needs_an_order_in_effect() -> None:
    """§ 540-12D: "may retract the stop-work order issued under § 540-12A"."""
    none = ["there is no stop-work order in effect to retract."]
    assert _check(_case(_e("stop_work")), "retraction") == []
    assert _check(_case(), "retraction", order_open=True) == []
    assert _check(_case(), "retraction") == none
    assert _check(_case(_e("stop_work"), _e("retraction", 3)), "retraction") == none


def test_a_notice_of_intent_and_its_costs_come_after_posting() -> None:
    """§ 540-12E: "After posting a stop-work order under § 540-12A, the administering authority may issue a
    notice of intent"."""
    after = ["a notice of intent and its costs come after a stop-work order is posted."]
    assert _check(_case(), "notice") == after
    assert _check(_case(_e("stop_work")), "notice") == []
    assert _check(_case(), "notice", order_posted=True) == []
    # The permit's own order, standing (its own route, § 540-12A): posted, so the notice may follow.
    assert _check(_case(), "notice", order_open=True) == []
    # Retracted since: it was posted, so the notice may still follow.
    assert _check(_case(_e("stop_work"), _e("retraction", 3)), "notice") == []
    with_notice = _case(_e("stop_work"), _e("notice", 3))
    assert _check(with_notice, "costs", costs=10.0, costs_from="billed") == []
    assert _check(_case(_e("stop_work")), "costs", costs=10.0, costs_from="billed") == [
        "costs are recorded with or after the notice of intent."
    ]
    assert _check(_case(_e("notice")), "costs", costs=10.0, costs_from="billed") == after
    assert _check(_case(), "costs", costs=10.0, costs_from="billed") == [
        *after,
        "costs are recorded with or after the notice of intent.",
    ]


def test_a_referral_follows_a_violated_order_or_without_a_permit_a_notice() -> None:
    """§ 540-12C: "where no permit has been issued, does not cease the activity after being notified ..., or if a
    responsible party violates a stop-work order posted under § 540-12A"."""
    says = {"referral_no_order": "ORDER FIRST", "referral_not_notified": "NOTIFY FIRST"}
    assert _check(_case(), "referral") == ["a referral follows a violated stop-work order; post one first."]
    assert _check(_case(), "referral", refusals=says) == ["ORDER FIRST"]
    assert _check(_case(_e("notified")), "referral", refusals=says) == ["ORDER FIRST"]
    assert _check(_case(_e("stop_work")), "referral", refusals=says) == []
    assert _check(_case(), "referral", order_posted=True) == []
    # The referral's own refusal comes with the others, not instead of them.
    assert _check(_case(_e("closed")), "referral", date(2026, 7, 1)) == [
        "the case is closed.",
        "the referral's day 2026-07-01 is after today on the Village's clock (2026-06-30): "
        "give the day it happened, on or before 2026-06-30.",
        "a referral follows a violated stop-work order; post one first.",
    ]
    bare = _case(permit=None)
    assert _check(bare, "referral") == ["a referral follows a notice or a stop-work order."]
    assert _check(bare, "referral", refusals=says) == ["NOTIFY FIRST"]
    assert _check(_case(_e("notified"), permit=None), "referral") == []
    assert _check(_case(_e("stop_work"), permit=None), "referral") == []


# --- costs, interest and the special assessment (§ 540-12E) ---


def test_costs_go_with_a_notice_or_on_their_own_and_say_where_they_come_from() -> None:
    posted = _case(_e("stop_work"))
    assert _check(posted, "notice", costs=0.0, costs_from="guarantee") == []
    assert _check(posted, "notice", costs=10.0, costs_from=None) == [
        "say where the costs come from: costs_from=billed or guarantee or special_assessment."
    ]
    assert _check(posted, "notice", costs=-0.01, costs_from="billed") == [
        "the costs -0.01 are not an amount (0 or more)."
    ]
    assert _check(posted, "notice", costs=float("nan"), costs_from="billed") == [
        "the costs nan are not an amount (0 or more)."
    ]
    assert _check(posted, "notice", costs=float("inf"), costs_from="billed") == [
        "the costs inf are not an amount (0 or more)."
    ]
    assert _check(posted, "closed", costs=5.0, costs_from="billed") == [
        "costs go with a notice of intent or are recorded as costs of their own."
    ]
    assert _check(_case(_e("stop_work"), _e("notice", 3)), "costs") == ["give the amount (costs=N)."]
    assert _check(posted, "notice") == []


def test_interest_goes_with_the_costs_billed() -> None:
    """§ 540-12E: "The costs of the work ..., plus interest at the rate authorized by Village Board"."""
    billed = _case(_e("stop_work"), _e("notice", 3))
    ok = {"costs": 10.0, "costs_from": "billed"}
    assert _check(billed, "costs", interest=0.0, **ok) == []
    assert _check(billed, "costs", interest=-0.01, **ok) == ["the interest -0.01 is not an amount (0 or more)."]
    assert _check(billed, "costs", interest=float("nan"), **ok) == ["the interest nan is not an amount (0 or more)."]
    assert _check(billed, "costs", interest=float("inf"), **ok) == ["the interest inf is not an amount (0 or more)."]
    assert _check(billed, "costs", interest=1.0) == [
        "interest goes with the costs it is on (costs=N with interest=N).",
        "give the amount (costs=N).",
    ]
    assert _check(billed, "notice", interest=1.0) == [
        "interest goes with the costs it is on (costs=N with interest=N)."
    ]
    assert _check(billed, "costs", costs=5.0, costs_from="special_assessment", interest=1.0, billed_due=5.0) == [
        "interest is billed with the costs; the special assessment is the amount due (no interest=)."
    ]


def test_a_payment_is_judged_against_the_amount_billed_and_not_yet_paid() -> None:
    """§ 540-12E: "In the event a responsible party fails to pay the amount due, the Clerk-Treasurer shall
    enter the amount due on the tax rolls": a payment is of the amount due, at most all of it."""
    billed = _case(_e("stop_work"), _e("notice", 3, costs=100.0, costs_from="billed"))
    assert _check(billed, "paid", costs=100.0, billed_due=100.0) == []  # exactly the amount due settles it
    assert _check(billed, "paid", costs=100.005, billed_due=100.0) == []  # half a cent over is still the amount
    assert _check(billed, "paid", costs=100.01, billed_due=100.0) == [
        "the payment of 100.01 is more than the 100.00 billed and not yet paid or assessed."
    ]
    assert _check(billed, "paid", costs=0.01, billed_due=100.0) == []  # a part payment
    # $1 and $0 by the same rule: $1 of $1 due is the amount due; $1 with nothing due is too much.
    assert _check(billed, "paid", costs=1.0, billed_due=1.0) == []
    assert _check(billed, "paid", costs=1.0) == [
        "the payment of 1.00 is more than the 0.00 billed and not yet paid or assessed."
    ]
    assert _check(billed, "paid", costs=0.0, billed_due=1.0) == ["the payment 0.0 is not an amount (more than 0)."]
    assert _check(billed, "paid", costs=-1.0, billed_due=1.0) == ["the payment -1.0 is not an amount (more than 0)."]
    assert _check(billed, "paid", billed_due=1.0) == ["give the amount paid (costs=N)."]


def test_a_payment_with_a_source_or_interest_alone_is_refused() -> None:
    """§ 540-12E: the costs are billed "plus interest at the rate authorized by Village Board"; what is paid
    is of that bill, so a payment names neither where costs come from nor interest of its own."""
    billed = _case(_e("stop_work"), _e("notice", 3, costs=100.0, costs_from="billed"))
    alone = "a payment is of the costs and interest billed: give only its amount (no costs_from=, interest=)."
    assert _check(billed, "paid", costs=10.0, billed_due=100.0, costs_from="billed") == [alone]
    assert _check(billed, "paid", costs=10.0, billed_due=100.0, interest=1.0) == [alone]
    assert _check(billed, "paid", costs=10.0, billed_due=100.0, interest=0.0) == [alone]
    assert _check(billed, "paid", costs=10.0, billed_due=100.0, costs_from="billed", interest=1.0) == [alone]


def test_a_special_assessment_is_at_most_the_amount_due_and_recorded_on_its_own() -> None:
    """§ 540-12E: "the Clerk-Treasurer shall enter the amount due on the tax rolls"."""
    billed = _case(_e("stop_work"), _e("notice", 3, costs=100.0, costs_from="billed"))
    sa = {"costs_from": "special_assessment", "billed_due": 100.0}
    assert _check(billed, "costs", costs=100.0, **sa) == []
    assert _check(billed, "costs", costs=100.004, **sa) == []
    assert _check(billed, "costs", costs=100.005, **sa) == []  # half a cent over is still the amount due
    assert _check(billed, "costs", costs=100.01, **sa) == ["100.01 is more than the 100.00 due."]
    assert _check(billed, "costs", costs=1000.0, **sa) == ["1,000.00 is more than the 100.00 due."]
    assert _check(billed, "costs", costs=100.01, refusals={"special_assessment_over_due": "OVER"}, **sa) == ["OVER"]
    assert _check(billed, "costs", costs=1.0, costs_from="special_assessment") == ["1.00 is more than the 0.00 due."]
    assert _check(billed, "notice", costs=1.0, **sa) == [
        "a special assessment is recorded as costs of their own, after the costs were billed."
    ]


# --- which of the permit's stop-work orders count for a case (counted_orders, order_state) ---

#: The case was opened on June 9, as the 5th event of its permit's history.
CASE_DAY, CASE_SEQ = date(2026, 6, 9), 5


def _order(lifted: date | None = None, lifted_seq: int | None = None, kind: str = "stop_work") -> Order:
    return Order(kind, date(2026, 6, 1), 2, None, lifted, lifted_seq)


def test_an_order_counts_if_standing_or_lifted_after_the_case_was_opened() -> None:
    """§ 540-12E "After posting a stop-work order under § 540-12A" and § 540-12C "violates a stop-work order
    posted under § 540-12A": an order standing when the case was opened, or lifted after it, is the case's;
    one lifted before is an older case's. Other orders of the permit (a suspension, § 540-12B) are not."""
    standing = _order()
    after = _order(date(2026, 6, 10), 8)
    before = _order(date(2026, 6, 8), 4)
    same_day_after = _order(CASE_DAY, 6)
    same_day_before = _order(CASE_DAY, 4)
    suspension = _order(kind="suspension")
    orders = [suspension, before, standing, after, same_day_after, same_day_before]
    assert counted_orders(orders, CASE_DAY, CASE_SEQ) == [standing, after, same_day_after]
    # The case's place in the history unknown: an order lifted on its day counts.
    assert counted_orders(orders, CASE_DAY) == [standing, after, same_day_after, same_day_before]
    assert counted_orders([same_day_before], CASE_DAY, None) == [same_day_before]
    assert counted_orders([suspension, before], CASE_DAY, CASE_SEQ) == []
    assert counted_orders([], CASE_DAY, CASE_SEQ) == []


def test_the_state_the_permits_orders_give_a_case() -> None:
    """A counted order standing: ``stop_work``; every counted one lifted: ``retracted``; none: ``open``."""
    assert order_state([_order(date(2026, 6, 10), 8), _order()], CASE_DAY, CASE_SEQ) == "stop_work"
    assert order_state([_order(date(2026, 6, 10), 8)], CASE_DAY, CASE_SEQ) == "retracted"
    # Lifted on the case's day before it was opened (seq 4 < 5): an older case's order.
    assert order_state([_order(CASE_DAY, 4)], CASE_DAY, CASE_SEQ) == "open"
    assert order_state([_order(CASE_DAY, 4)], CASE_DAY) == "retracted"
    assert order_state([_order(date(2026, 6, 8), 4), _order(kind="suspension")], CASE_DAY, CASE_SEQ) == "open"
    assert order_state([], CASE_DAY, CASE_SEQ) == "open"


def test_a_site_is_without_a_permit_while_none_was_ever_issued_or_once_closed() -> None:
    """§ 540-12C "where no permit has been issued": an application never issued is no permit; nor is a
    permit closed, where the profile says so (``[enforcement.without_permit]``)."""
    every = dict.fromkeys(("not_issued", "revoked", "expired", "closed"), ("", "", ""))
    last, day, issued = date(2027, 5, 19), date(2027, 1, 1), ["active", "extended"]
    assert without_permit_fits(every, "under_review", None, day, issued, ever_issued=False) == "not_issued"
    # A permit was issued (the default): an active one in its period is in force.
    assert without_permit_fits(every, "active", last, day, issued) is None
    assert without_permit_fits(every, "active", last, day, issued, ever_issued=True) is None
    # Without the profile's "not_issued" term, an application never issued does not fit it.
    revoked_only = {"revoked": every["revoked"]}
    assert without_permit_fits(revoked_only, "under_review", None, day, issued, ever_issued=False) is None
    assert without_permit_fits(every, "closed", last, day, issued) == "closed"
    assert without_permit_fits(revoked_only, "closed", last, day, issued) is None
