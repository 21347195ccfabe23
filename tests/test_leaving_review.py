"""How an application leaves review (issue 34, item 4 and the unanswered request of item 10), on both back
ends (``reg``: a GeoPackage file and the real PostGIS server; the fixture checks ``verify`` after each).

§ 540-8C(3): "If the permit application or plan is disapproved, the administering authority shall state in
writing the reasons for disapproval"; § 540-8C(4): "If additional information is submitted, the
administering authority shall have 20 business days from the date the additional information is received";
§ 540-8C(5): "Failure ... to inform the permit applicant of a decision within 20 business days of a required
submittal shall be deemed to mean approval". An application leaves review by a decision, or the office
closes it undecided with written reasons (withdrawn, or the information never came): never through a
false "information received", and a closed application is never deemed approved.
"""

from __future__ import annotations

from datetime import date

import pytest

from esc_gis.errors import IllegalTransitionError
from esc_gis.registry import Application
from esc_gis.registry.service.registry import Registry

from .conftest import CRS, square_sqft
from .public_outputs import run_permits


def received(reg: Registry, *, paid: bool = True) -> str:
    """An application received (and paid, so complete) Monday 2026-11-02: a decision is due 2026-11-30."""
    n = reg.add(Application("100 Test St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS), who="clerk")
    if paid:
        reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt=f"R-{n}", who="clerk")
    return n


def dues(reg: Registry, on: date) -> list:
    """What `permits due` lists on ``on`` (a deemed approval shows as an overdue decision)."""
    from esc_gis.registry.views.agenda import agenda

    return agenda(reg.permits(), on=on, calendar=reg.calendar, profile=reg.profile)


def incomplete(reg: Registry) -> str:
    """Information requested 2026-11-10 (§ 540-8C(4)) and never received."""
    n = received(reg)
    reg.transition(n, "under_review", on=date(2026, 11, 3))
    reg.transition(n, "incomplete", on=date(2026, 11, 10))
    return n


@pytest.mark.usefixtures("late_clock")
def test_an_incomplete_application_is_disapproved_with_written_reasons(reg) -> None:
    """§ 540-8C(3): "If the permit application or plan is disapproved, the administering authority shall state
    in writing the reasons for disapproval" -- on what the office has, without recording information that
    never came."""
    n = incomplete(reg)
    with pytest.raises(IllegalTransitionError, match=r"written reasons \(basis ordinance: § 540-8C\(3\)\)"):
        reg.transition(n, "disapproved", on=date(2027, 2, 1))
    p = reg.transition(n, "disapproved", on=date(2027, 2, 1), reasons="No erosion control plan sheet; asked 11-10.")
    assert (p.status, p.decided_on, p.issued_on) == ("disapproved", date(2027, 2, 1), None)
    assert p.information_received_on is None
    kinds = [e.kind for e in reg.history(n)]
    assert "information_received" not in kinds and kinds[-1] == "decided"
    assert reg.history(n)[-1].data["outcome"] == "disapproved"


@pytest.mark.parametrize("state", ["application_received", "under_review", "incomplete"])
def test_an_undecided_application_is_closed_only_with_written_reasons_and_never_deemed_approved(reg, state) -> None:
    """Withdrawn or left unanswered: § 540-8C says nothing of either, so the office's rule (basis policy) asks
    for written reasons. Closed, it is never "deemed to mean approval" (§ 540-8C(5)) when the 20 business days
    of its submittal pass."""
    n = received(reg)
    if state != "application_received":
        reg.transition(n, "under_review", on=date(2026, 11, 3))
    if state == "incomplete":
        reg.transition(n, "incomplete", on=date(2026, 11, 10))
    with pytest.raises(IllegalTransitionError) as exc:
        reg.transition(n, "closed", on=date(2026, 11, 20), reasons=" ")
    assert "Closing an application before its decision needs written reasons (basis policy: the office's rule" in str(
        exc.value
    )
    assert reg.get(n).status == state
    if state != "incomplete":  # open, it would be listed as deemed approved the day after the period
        assert [d.code for d in dues(reg, date(2026, 12, 1))] == ["deemed_approved"]
    p = reg.transition(n, "closed", on=date(2026, 11, 20), reasons="Withdrawn by the applicant's letter of 11-19.")
    assert (p.status, p.decided_on, p.issued_on) == ("closed", None, None)
    assert (
        reg.history(n)[-1].kind == "closed" and p.events[-1].detail == "Withdrawn by the applicant's letter of 11-19."
    )
    # The edge: the day after the period ran out (2026-11-30), nothing is deemed approved.
    with pytest.raises(IllegalTransitionError, match="allowed: none"):
        reg.transition(n, "deemed_approved", on=date(2026, 12, 1))
    assert not dues(reg, date(2026, 12, 1))


@pytest.mark.parametrize("state", ["application_received", "under_review"])
def test_closing_undecided_after_the_period_ran_out_is_refused_as_a_late_decision_would_be(reg, state) -> None:
    """§ 540-8C(5): "Failure by the administering authority to inform the permit applicant of a decision within
    20 business days of a required submittal shall be deemed to mean approval of the submittal and the applicant
    may proceed as if a permit had been issued." Closing it undecided after that would take back what the
    ordinance deems approved: refused from the day after the due day (2026-11-30), accepted on it."""
    n = received(reg)
    if state == "under_review":
        reg.transition(n, "under_review", on=date(2026, 11, 3))
    with pytest.raises(IllegalTransitionError) as exc:
        reg.transition(n, "closed", on=date(2026, 12, 1), reasons="Withdrawn.")
    text = str(exc.value)
    assert "cannot be closed on 2026-12-01" in text and "ran out on 2026-11-30" in text
    assert '"[F]ailure by the administering authority to inform the permit applicant of a decision' in text
    assert "(§ 540-8C(5))" in text and reg.get(n).status == state
    p = reg.transition(n, "closed", on=date(2026, 11, 30), reasons="Withdrawn by the applicant's letter of 11-29.")
    assert p.status == "closed"


@pytest.mark.usefixtures("late_clock")
def test_an_unanswered_request_stops_the_clock_and_is_never_deemed_approved(reg) -> None:
    """§ 540-8C(4): "If additional information is submitted, the administering authority shall have 20 business
    days from the date the additional information is received"; the text is silent on information never
    submitted. The profile's reading (basis interpretation): the clock stays stopped, nothing is deemed
    approved, and the refusal says how the office ends the application."""
    n = incomplete(reg)
    # Long past any 20 business days from the receipt or the request.
    with pytest.raises(IllegalTransitionError) as exc:
        reg.transition(n, "deemed_approved", on=date(2027, 6, 1))
    text = str(exc.value)
    assert "information was requested on 2026-11-10 and has not been received" in text
    assert '"from the date the additional information is received"' in text
    assert "(§ 540-8C(4); § 540-8C(5); basis interpretation)" in text
    assert "close the unanswered application (... closed --reasons)" in text
    p = reg.get(n)
    assert p.status == "incomplete" and p.state.decision_clock is None
    assert not dues(reg, date(2027, 6, 1))
    # The office records the end itself: closed as unanswered, with its reasons.
    p = reg.transition(n, "closed", on=date(2027, 6, 1), reasons="Information requested 2026-11-10 never received.")
    assert p.status == "closed" and p.information_received_on is None


def test_the_unanswered_reading_is_labelled_in_both_profiles() -> None:
    from pathlib import Path

    from esc_gis.profile import load_profile

    for prof in (load_profile(), load_profile(Path(__file__).parent / "profiles" / "example.toml")):
        t = prof.template("information_unanswered")
        assert t.basis == "interpretation" and "reading:" in t.message


def test_cli_closes_a_withdrawn_application(reg, target: str, layers_path) -> None:
    lay = ["--layers", str(layers_path)]
    n = received(reg)
    r = run_permits("transition", target, n, "closed", "--on", "2026-11-20", *lay)
    assert r.exit_code == 1 and "Closing an application before its decision needs written reasons" in r.output
    assert "Traceback" not in r.output
    r = run_permits("transition", target, n, "closed", "--on", "2026-11-20", "--reasons", "Withdrawn.", *lay)
    assert r.exit_code == 0, r.output
    assert reg.get(n).status == "closed"
