"""Enforcement rules read from the ordinance's words (§ 540-12), on both back ends (``reg``: a
GeoPackage file and the real PostGIS server): work without a permit on a revoked or expired
permit's site (§ 540-12A(1)); the referral "after being notified" (§ 540-12C); the interest and
the special assessment of § 540-12E.
"""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from esc_gis.errors import IllegalTransitionError, ValidationError
from esc_gis.registry import Application
from esc_gis.registry.service.registry import Registry

from .conftest import CRS, add_active, square_sqft

UTC = timezone.utc


def revoked(reg: Registry, active: str) -> str:
    reg.transition(
        active, "revoked", on=date(2026, 11, 18), reasons="plan not followed after the order",
        notified_on=date(2026, 11, 16),
    )  # fmt: skip
    return active


def expired(reg: Registry) -> str:
    """An active permit issued 2026-05-01: valid 180 days, to 2026-10-28 (§ 540-8G)."""
    return reg.add(
        Application(
            "200 Test St",
            date(2026, 4, 20),
            square_sqft(300, 100, 5000.0),
            CRS,
            status="active",
            issued_on=date(2026, 5, 1),
            started_at=datetime(2026, 5, 4, 8, tzinfo=UTC),
        ),
        who="clerk",
    )


def test_work_on_a_revoked_permits_site_is_work_without_a_permit(reg, active) -> None:
    """§ 540-12A(1): a stop-work order if "Any land-disturbing construction activity is being undertaken
    without a permit"; § 540-12B: "the administering authority may revoke the permit"."""
    n = revoked(reg, active)
    c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading goes on", permit_number=n, who="ed")
    assert c.permit_number == n and c.ground == "A1"
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted at the gate")
    # The order is the case's own: the permit stays revoked, its history moves nothing.
    assert c.state == "stop_work" and reg.get(n).status == "revoked"
    assert [e.kind for e in reg.history(c.case_id)] == ["stop_work_posted"]
    assert reg.state(c.case_id).status == "stop_work"
    # § 540-12C: "if a responsible party violates a stop-work order posted under § 540-12A", a referral.
    c = reg.case_action(c.case_id, "referral", on=date(2026, 11, 24))
    assert [e.kind for e in c.events] == ["stop_work", "referral"]


def test_an_own_order_recovers_costs_from_the_permits_guarantee(reg, active) -> None:
    """§ 540-12E: costs "recovered from the surety bond, cash escrow, or irrevocable letter of credit"."""
    g = reg.add_guarantee(active, type="cash_escrow", amount=1000.0, received_on=date(2026, 11, 4))
    n = revoked(reg, active)
    c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading goes on", permit_number=n)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted")
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 22), costs=200.0, costs_from="guarantee")
    assert reg.state(n).guarantees[g.id].balance == 800.0  # on the permit's stream, where the guarantee is


def test_a1_on_a_permit_in_force_is_refused_naming_when_it_fits(reg, active) -> None:
    """The edge: § 540-12A(1) "without a permit" does not fit a permit in force (active, within its period)."""
    with pytest.raises(ValidationError) as info:
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="x", permit_number=active)
    text = str(info.value)
    assert "ground A1 is activity without a permit, but the case names permit" in text
    assert "(it is active, valid to 2027-05-02)" in text
    assert "work goes on after the permit was revoked: a revoked permit permits no work" in text
    assert "basis interpretation" in text and "§ 540-12B" in text and "§ 540-8G" in text
    assert reg.cases() == []


def test_work_after_the_period_ran_out_is_work_without_a_permit_from_the_day_after(reg) -> None:
    """§ 540-8G: "Permits issued under this section shall be valid for a period of 180 days ... from the
    date of issuance": the last day is still within it (the edge), the day after is not."""
    n = expired(reg)
    assert reg.get(n).expires_on == date(2026, 10, 28)
    with pytest.raises(ValidationError, match=r"\(it is active, valid to 2026-10-28\)"):
        reg.enforce(ground="A1", on=date(2026, 10, 28), reasons="x", permit_number=n)
    c = reg.enforce(ground="A1", on=date(2026, 10, 29), reasons="grading after expiry", permit_number=n)
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 10, 30), reasons="posted")
    assert c.state == "stop_work" and reg.get(n).status == "active"  # the case's own order


def test_a_ground_about_the_permit_still_moves_it(reg, active) -> None:
    """The edge: A3 ("The conditions of the permit are not being met") on a permit stays the permit's order."""
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="fence down", permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted")
    assert reg.get(active).status == "stop_work" and reg.history(c.case_id) == []


# --- § 540-12C: "after being notified" --------------------------------------------------------------


def test_a_referral_without_a_permit_comes_after_the_notice_to_cease(reg) -> None:
    """§ 540-12C: "If the responsible party, where no permit has been issued, does not cease the activity
    after being notified by the administering authority ... the administering authority may request the
    Village Attorney to obtain a cease-and-desist order"."""
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="grading, no permit", address="9 Elm St")
    with pytest.raises(ValidationError) as info:
        reg.case_action(c.case_id, "referral", on=date(2026, 11, 21))
    text = str(info.value)
    assert '"does not cease the activity after being notified by the administering authority"' in text
    assert "(§ 540-12C)" in text and reg.case(c.case_id).events == ()
    c = reg.case_action(c.case_id, "notified", on=date(2026, 11, 21), reasons="letter to the owner")
    assert [e.kind for e in reg.history(c.case_id)] == ["case_opened", "notified"]
    assert reg.state(c.case_id).notified == [(c.case_id, date(2026, 11, 21))]
    c = reg.case_action(c.case_id, "referral", on=date(2026, 11, 25))
    assert [e.kind for e in c.events] == ["notified", "referral"]


def test_on_a_permits_site_the_notice_alone_does_not_lead_to_a_referral(reg, active) -> None:
    """§ 540-12C's first branch is "where no permit has been issued"; on a permit's site, "if a responsible
    party violates a stop-work order posted under § 540-12A"."""
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="fence down", permit_number=active)
    reg.case_action(c.case_id, "notified", on=date(2026, 11, 20))
    with pytest.raises(ValidationError, match=r'"violates a stop-work order posted under § 540-12A"'):
        reg.case_action(c.case_id, "referral", on=date(2026, 11, 21))
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted")
    assert reg.case_action(c.case_id, "referral", on=date(2026, 11, 24)).events[-1].kind == "referral"


# --- § 540-12E: interest and the special assessment ---------------------------------------------------


def test_interest_is_billed_with_the_costs_and_the_unpaid_amount_goes_on_the_tax_rolls(reg, active) -> None:
    """§ 540-12E: "The costs ... plus interest at the rate authorized by Village Board, shall be billed to
    the responsible party ... In the event a responsible party fails to pay the amount due, the
    Clerk-Treasurer shall enter the amount due on the tax rolls and collect as a special assessment"."""
    c = reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="plan ignored", permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 20), reasons="posted")
    # Nothing billed yet: nothing is due, so nothing goes on the tax rolls.
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 21))
    with pytest.raises(ValidationError, match=r'"fails to pay": 1\.00 is more than the 0\.00 billed'):
        reg.case_action(c.case_id, "costs", on=date(2026, 11, 22), costs=1.0, costs_from="special_assessment")
    c = reg.case_action(c.case_id, "costs", on=date(2026, 11, 22), costs=400.0, costs_from="billed", interest=20.0)
    e = reg.history(active)[-1]
    assert (e.kind, e.data["amount"], e.data["interest"], e.data["recovered_from"]) == (
        "costs_recorded",
        400.0,
        20.0,
        "billed",
    )
    assert c.events[-1].detail == "interest 20.00"
    # The edge: the amount due is the costs and the interest billed, 420.00, not a cent more.
    with pytest.raises(ValidationError, match=r"420\.01 is more than the 420\.00 billed \(costs plus interest\)"):
        reg.case_action(c.case_id, "costs", on=date(2026, 11, 23), costs=420.01, costs_from="special_assessment")
    c = reg.case_action(c.case_id, "costs", on=date(2026, 11, 23), costs=420.0, costs_from="special_assessment")
    # Not new costs: the same amount, moved to the tax rolls.
    assert (c.costs_total, c.assessed_total) == (400.0, 420.0)
    with pytest.raises(ValidationError, match=r"0\.01 is more than the 0\.00 billed"):
        reg.case_action(c.case_id, "costs", on=date(2026, 11, 24), costs=0.01, costs_from="special_assessment")


def test_interest_and_the_assessment_are_refused_where_they_do_not_belong(reg, active) -> None:
    c = reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="plan ignored", permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 20), reasons="posted")
    with pytest.raises(ValidationError) as info:
        reg.case_action(c.case_id, "notice", on=date(2026, 11, 21), interest=-1.0)
    text = str(info.value)
    assert "interest goes with the costs" in text and "the interest -1.0 is not an amount" in text
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 21), costs=100.0, costs_from="billed")
    with pytest.raises(ValidationError, match="the special assessment is the amount due"):
        reg.case_action(
            c.case_id, "costs", on=date(2026, 11, 22), costs=10.0, costs_from="special_assessment", interest=1.0
        )
    assert "interest" not in reg.history(active)[-1].data  # none recorded where none was given


def test_cli_notified_interest_and_special_assessment(reg, target: str, layers_path) -> None:
    from .public_outputs import run_permits

    lay = ["--layers", str(layers_path)]
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="grading, no permit", address="9 Elm St")
    r = run_permits("case", target, c.case_id, "--refer", "2026-11-21", *lay)
    assert r.exit_code == 1 and "after being notified" in r.output, r.output
    r = run_permits("case", target, c.case_id, "--notified", "2026-11-21", "--reasons", "letter", *lay)
    assert r.exit_code == 0 and "notified" in r.output, r.output
    r = run_permits("case", target, c.case_id, "--stop-work", "2026-11-22", "--reasons", "posted", *lay)
    assert r.exit_code == 0, r.output
    r = run_permits("case", target, c.case_id, "--notice", "2026-11-23", "--costs", "300", "--costs-from", "billed",
                    "--interest", "15", *lay)  # fmt: skip
    assert r.exit_code == 0 and "interest 15.00" in r.output, r.output
    r = run_permits("case", target, c.case_id, "--costs-on", "2026-11-24", "--costs", "315",
                    "--costs-from", "special_assessment", *lay)  # fmt: skip
    assert r.exit_code == 0 and "on the tax rolls 315.00" in r.output, r.output


def test_verify_compares_a_cases_costs_and_notices_with_the_history(target: str, layer_set) -> None:
    """The case's table is a projection: a row written behind the history is a difference."""
    from esc_gis.registry import init_registry, open_registry
    from esc_gis.registry.domain.calendar import OfficeCalendar

    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="mud on the road", address="9 Elm St")
        reg.case_action(c.case_id, "notified", on=date(2026, 11, 20))
        reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted")
        reg.case_action(c.case_id, "notice", on=date(2026, 11, 22), costs=50.0, costs_from="billed", interest=2.5)
        assert reg.verify() == []
        b = reg.backend
        with b.write() as cur:  # rows written behind the history, as a database tool might
            for kind, costs in (("costs", 75.0), ("notified", None)):
                cur.execute(
                    "INSERT INTO enforcement_events (case_id, at, who, kind, on_date, costs, costs_from, detail) "
                    f"VALUES ({', '.join([b.ph] * 8)})",
                    (c.case_id, b.dump("datetime", datetime(2026, 11, 23, tzinfo=UTC)), "x", kind,
                     b.dump("date", date(2026, 11, 23)), costs, "billed" if costs else None, None),
                )  # fmt: skip
        found = [str(d) for d in reg.verify()]
        assert found == [
            f"{c.case_id}: costs recorded is [(50.0, 'billed'), (75.0, 'billed')] in the table, "
            "[(50.0, 'billed')] in the history",
            f"{c.case_id}: notices to cease is 2 in the table, 1 in the history",
        ]


def test_a_reversed_appeal_retracts_a_cases_own_order_in_its_history(reg, active) -> None:
    """§ 540-12D: the order may be retracted; § 540-13A(1): the board hears appeals of "any order"."""
    n = revoked(reg, active)
    c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading goes on", permit_number=n)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted")
    a = reg.appeal(appealed="the order", kind="stop_work_order", appellant="P", appellant_kind="aggrieved_person",
                   on=date(2026, 11, 22), grounds="g", case_id=c.case_id)  # fmt: skip
    reg.decide_appeal(a.appeal_id, body="zoning_board_of_appeals", outcome="reversed", on=date(2026, 11, 24))
    assert reg.case(c.case_id).state == "retracted" and reg.get(n).status == "revoked"
    assert [e.kind for e in reg.history(c.case_id)] == ["stop_work_posted", "retracted"]
    assert reg.state(c.case_id).status == "retracted"


# --- § 540-12A(1): "without a permit" wherever no permit is in force ----------------------------------


def applications(reg: Registry) -> dict[str, str]:
    """An application in each state where no permit was ever issued: status -> its number."""
    out: dict[str, str] = {}
    for i, status in enumerate(("application_received", "incomplete", "under_review", "disapproved", "closed")):
        n = reg.add(Application(f"{300 + i} Test St", date(2026, 11, 2), square_sqft(300 + 80 * i, 100, 5000.0), CRS))
        if status != "application_received":
            reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt=f"R-{n}")
        if status == "incomplete":
            reg.transition(n, "incomplete", on=date(2026, 11, 3), reasons="no plan map")
        if status in ("under_review", "disapproved", "closed"):
            reg.transition(n, "under_review", on=date(2026, 11, 3))
        if status in ("disapproved", "closed"):
            reg.transition(n, "disapproved", on=date(2026, 11, 10), reasons="no perimeter control")
        if status == "closed":
            reg.transition(n, "closed", on=date(2026, 11, 12), reasons="withdrawn")
        assert reg.get(n).status == status
        out[status] = n
    return out


def test_work_on_an_application_never_issued_is_work_without_a_permit(reg) -> None:
    """§ 540-12A(1): a stop-work order if "Any land-disturbing construction activity is being undertaken
    without a permit"; § 540-8A: "no responsible party may commence a land-disturbing construction activity
    subject to this article without receiving prior approval of an erosion and sediment control plan for the
    site and a permit". An application received, incomplete, under review, disapproved or closed without a
    permit is no permit; § 540-12C: "where no permit has been issued", the referral comes "after being
    notified"."""
    for status, n in applications(reg).items():
        c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading before the permit", permit_number=n)
        assert (c.ground, c.permit_number, c.permit_issued) == ("A1", n, False), status
        c = reg.case_action(c.case_id, "notified", on=date(2026, 11, 20), reasons="letter")
        c = reg.case_action(c.case_id, "referral", on=date(2026, 11, 23))
        assert [e.kind for e in c.events] == ["notified", "referral"], status
        c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 23), reasons="posted at the gate")
        # The order is the case's own: no move of the application's status.
        assert c.state == "stop_work" and reg.get(n).status == status, status
        assert [e.kind for e in reg.history(c.case_id)] == ["notified", "referred", "stop_work_posted"]


def test_the_refusal_on_a_permit_in_force_names_every_reading_with_its_basis(reg, active) -> None:
    """The edge: an active permit within its period is a permit; the refusal names when A1 fits, the
    ordinance's words (basis ordinance) apart from the readings (basis interpretation). § 540-8A is
    quoted from its first words (issue 46): "When a permit is required, no responsible party may commence
    a land-disturbing construction activity subject to this article without receiving prior approval"."""
    with pytest.raises(ValidationError) as info:
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="x", permit_number=active)
    text = str(info.value)
    assert '"When a permit is required, no responsible party may commence a land-disturbing construction' in text
    assert "(§ 540-12A(1); § 540-8A; basis ordinance)" in text
    assert "a closed permit permits no work (§ 540-12A(1); basis interpretation)" in text


def test_work_after_the_permit_was_closed_is_work_without_a_permit(reg, active) -> None:
    """§ 540-12A(1) "without a permit": a permit closed after final stabilization permits no more work (the
    reading, basis interpretation); a permit was issued, so a referral follows "a stop-work order posted
    under § 540-12A" (§ 540-12C), not the notice alone."""
    reg.transition(active, "final_stabilization", on=date(2026, 11, 16))
    reg.transition(active, "closed", on=date(2026, 11, 18))
    c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="new grading", permit_number=active)
    assert c.permit_issued
    reg.case_action(c.case_id, "notified", on=date(2026, 11, 20))
    with pytest.raises(ValidationError, match=r'"violates a stop-work order posted under § 540-12A"'):
        reg.case_action(c.case_id, "referral", on=date(2026, 11, 21))
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted")
    assert c.state == "stop_work" and reg.get(active).status == "closed"


def test_on_a_revoked_permit_the_notice_alone_does_not_lead_to_a_referral(reg, active) -> None:
    """§ 540-12C's first branch is "where no permit has been issued": a revoked permit was issued."""
    n = revoked(reg, active)
    c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading goes on", permit_number=n)
    reg.case_action(c.case_id, "notified", on=date(2026, 11, 20))
    with pytest.raises(ValidationError, match=r'"violates a stop-work order posted under § 540-12A"'):
        reg.case_action(c.case_id, "referral", on=date(2026, 11, 21))


# --- § 540-12E / § 540-12C: the order "posted under § 540-12A" is the case's -------------------------


def test_an_order_lifted_before_a_case_was_opened_does_not_count_for_it(reg, active) -> None:
    """§ 540-12E: "After posting a stop-work order under § 540-12A, the administering authority may issue a
    notice of intent"; § 540-12C: "if a responsible party violates a stop-work order posted under § 540-12A".
    An older case's order, retracted before the new case was opened, is not the new case's order."""
    old = reg.enforce(ground="A4", on=date(2026, 11, 5), reasons="fence down", permit_number=active)
    reg.case_action(old.case_id, "stop_work", on=date(2026, 11, 6), reasons="posted")
    reg.case_action(old.case_id, "retraction", on=date(2026, 11, 9), reasons="fence repaired")
    reg.case_action(old.case_id, "closed", on=date(2026, 11, 9))
    c = reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="plan ignored", permit_number=active)
    assert c.state == "open"
    with pytest.raises(ValidationError, match="a notice of intent and its costs come after a stop-work order"):
        reg.case_action(c.case_id, "notice", on=date(2026, 11, 21))
    with pytest.raises(ValidationError, match=r'"violates a stop-work order posted under § 540-12A"'):
        reg.case_action(c.case_id, "referral", on=date(2026, 11, 21))
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted again")
    c = reg.case_action(c.case_id, "notice", on=date(2026, 11, 22))
    assert [e.kind for e in c.events] == ["stop_work", "notice"]


def test_an_order_standing_when_a_case_is_opened_counts_until_lifted_even_that_day(reg, active) -> None:
    """The edges: an order standing when the case is opened is the case's (one order); lifted the same day
    after the case was opened, it was still posted for the case; lifted the day before, it was not."""
    reg.transition(active, "stop_work", on=date(2026, 11, 16), reasons="posted by the inspector")
    c = reg.enforce(ground="A2", on=date(2026, 11, 18), reasons="plan ignored", permit_number=active)
    assert c.state == "stop_work"
    reg.retract(active, reasons="fence repaired", on=date(2026, 11, 18))
    c = reg.case(c.case_id)
    assert c.state == "retracted"
    assert reg.case_action(c.case_id, "notice", on=date(2026, 11, 19)).events[-1].kind == "notice"
    later = reg.enforce(ground="A2", on=date(2026, 11, 19), reasons="plan ignored again", permit_number=active)
    assert later.state == "open"
    with pytest.raises(ValidationError, match="a notice of intent and its costs come after a stop-work order"):
        reg.case_action(later.case_id, "notice", on=date(2026, 11, 19))


# --- one order whichever route: posted and lifted ----------------------------------------------------


def test_a_permits_retraction_lifts_the_cases_order_and_a_new_one_can_be_posted(reg, active) -> None:
    """§ 540-12D: "The administering authority or the Village Board may retract the stop-work order issued
    under § 540-12A": lifted on the permit (`permits retract`), it is lifted for the case that posted it;
    § 540-12A: a new order "may" then be posted on the case."""
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="fence down", permit_number=active)
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 20), reasons="posted")
    assert c.state == "stop_work"
    reg.retract(active, reasons="fence repaired", on=date(2026, 11, 23))
    c = reg.case(c.case_id)
    assert c.state == "retracted" and reg.get(active).status == "active"
    with pytest.raises(ValidationError, match="there is no stop-work order in effect to retract"):
        reg.case_action(c.case_id, "retraction", on=date(2026, 11, 24), reasons="again")
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 24), reasons="fence down again")
    assert c.state == "stop_work" and reg.get(active).status == "stop_work"
    # The notice of intent rests on an order posted for the case, either of the two.
    assert reg.case_action(c.case_id, "notice", on=date(2026, 11, 25)).state == "stop_work"


# --- § 540-12E: "costs ... plus interest" recovered from the guarantee ---------------------------------


def test_interest_recovered_from_the_guarantee_comes_off_its_balance(reg, active) -> None:
    """§ 540-12E: "The costs of the work performed under this article by the administering authority, plus
    interest at the rate authorized by Village Board, shall be billed to the responsible party or recovered
    from the surety bond, cash escrow, or irrevocable letter of credit"; § 540-8D(1): the final release is
    net of the costs."""
    g = reg.add_guarantee(active, type="cash_escrow", amount=1000.0, received_on=date(2026, 11, 4))
    c = reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="plan ignored", permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 20), reasons="posted")
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 21), costs=200.0, costs_from="guarantee", interest=10.0)
    assert reg.state(active).guarantees[g.id].balance == 790.0
    assert next(x for x in reg.guarantees() if x.id == g.id).balance == 790.0
    # The edge: costs and interest together, not a cent more than held.
    with pytest.raises(ValidationError, match=r"the costs \(with interest\) of 790\.01 are more than the 790\.00"):
        reg.case_action(c.case_id, "costs", on=date(2026, 11, 22), costs=780.0, costs_from="guarantee",
                        interest=10.01)  # fmt: skip
    reg.case_action(c.case_id, "costs", on=date(2026, 11, 22), costs=700.0, costs_from="guarantee", interest=5.0)
    final = reg.guarantee_event(g.id, "final_release", on=date(2026, 11, 24), engineer="P.E. 1")
    assert final.events[-1].amount == 85.0  # 1000 - (200 + 10) - (700 + 5)
    assert reg.state(active).guarantees[g.id].final_release == 85.0


def test_an_order_lifted_the_day_a_case_was_opened_counts_only_if_lifted_after_the_opening() -> None:
    """The edge of "After posting a stop-work order under § 540-12A" (§ 540-12E) on one day: the history's
    order of events tells whether the order stood when the case was opened."""
    from esc_gis.registry.domain.enforcement import counted_orders, order_state
    from esc_gis.registry.domain.fold import Order

    lifted = Order("stop_work", date(2026, 11, 2), 3, None, date(2026, 11, 18), 5)
    assert order_state([lifted], date(2026, 11, 18), 4) == "retracted"  # opened at 4, lifted at 5
    assert order_state([lifted], date(2026, 11, 18), 6) == "open"  # lifted at 5, opened at 6
    assert order_state([lifted], date(2026, 11, 17), 6) == "retracted"  # a backdated case: the days decide
    assert order_state([lifted], date(2026, 11, 19), 2) == "open"
    standing = Order("stop_work", date(2026, 11, 2), 3)
    assert order_state([lifted, standing], date(2026, 11, 30), 9) == "stop_work"
    assert counted_orders([Order("suspension", date(2026, 11, 2), 3)], date(2026, 11, 1)) == []


def test_only_the_unpaid_amount_goes_on_the_tax_rolls(reg, active) -> None:
    """§ 540-12E: "In the event a responsible party fails to pay the amount due, the Clerk-Treasurer shall
    enter the amount due on the tax rolls and collect as a special assessment": a payment (`--paid`) leaves
    only the rest due."""
    c = reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="plan ignored", permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 20), reasons="posted")
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 21), costs=400.0, costs_from="billed", interest=20.0)
    with pytest.raises(ValidationError) as info:
        reg.case_action(c.case_id, "paid", on=date(2026, 11, 23), costs=-1.0, costs_from="billed", interest=1.0)
    text = str(info.value)
    assert "the payment -1.0 is not an amount" in text and "give only its amount" in text
    # The edge: at most what is due, 420.00.
    with pytest.raises(ValidationError, match=r"the payment of 420\.01 is more than the 420\.00 billed"):
        reg.case_action(c.case_id, "paid", on=date(2026, 11, 23), costs=420.01)
    c = reg.case_action(c.case_id, "paid", on=date(2026, 11, 23), costs=100.0)
    e = reg.history(active)[-1]
    assert (e.kind, e.data["amount"], e.data["case_id"]) == ("costs_paid", 100.0, c.case_id)
    assert reg.state(active).payments[0]["amount"] == 100.0
    assert (c.costs_total, c.paid_total, c.assessed_total) == (400.0, 100.0, 0.0)
    with pytest.raises(ValidationError, match=r"320\.01 is more than the 320\.00 billed \(costs plus interest\)"):
        reg.case_action(c.case_id, "costs", on=date(2026, 11, 24), costs=320.01, costs_from="special_assessment")
    c = reg.case_action(c.case_id, "costs", on=date(2026, 11, 24), costs=320.0, costs_from="special_assessment")
    assert (c.costs_total, c.paid_total, c.assessed_total) == (400.0, 100.0, 320.0)
    with pytest.raises(ValidationError, match=r"the payment of 0\.01 is more than the 0\.00 billed"):
        reg.case_action(c.case_id, "paid", on=date(2026, 11, 25), costs=0.01)
    # The office's summary counts the costs once: not the payment, nor the assessment of what was billed.
    from esc_gis.registry.views.summary import office_summary

    rows = office_summary(reg, date(2026, 11, 1), date(2026, 11, 30))
    assert [r.value for r in rows if (r.section, r.measure) == ("enforcement", "costs_recorded_usd")] == [400.0]


def test_a_payment_of_exactly_the_amount_due_settles_it(reg, active) -> None:
    """§ 540-12E: "In the event a responsible party fails to pay the amount due": paying exactly the amount
    due (costs plus interest) leaves nothing due, and a payment with a source or interest alone is refused."""
    c = reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="plan ignored", permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 20), reasons="posted")
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 21), costs=400.0, costs_from="billed", interest=20.0)
    for extra in ({"costs_from": "billed"}, {"interest": 1.0}):
        with pytest.raises(ValidationError, match="give only its amount"):
            reg.case_action(c.case_id, "paid", on=date(2026, 11, 23), costs=10.0, **extra)
    c = reg.case_action(c.case_id, "paid", on=date(2026, 11, 23), costs=420.0)
    assert c.paid_total == 420.0
    with pytest.raises(ValidationError, match=r"the payment of 0\.01 is more than the 0\.00 billed"):
        reg.case_action(c.case_id, "paid", on=date(2026, 11, 24), costs=0.01)
    with pytest.raises(ValidationError, match=r"0\.01 is more than the 0\.00 billed"):
        reg.case_action(c.case_id, "costs", on=date(2026, 11, 24), costs=0.01, costs_from="special_assessment")


def test_cli_paid_and_a_payment_written_behind_the_history(target: str, layer_set, layers_path) -> None:
    from esc_gis.registry import init_registry, open_registry
    from esc_gis.registry.domain.calendar import OfficeCalendar

    from .public_outputs import run_permits

    lay = ["--layers", str(layers_path)]
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="mud on the road", address="9 Elm St")
        reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 20), reasons="posted")
        reg.case_action(c.case_id, "notice", on=date(2026, 11, 21), costs=50.0, costs_from="billed")
    r = run_permits("case", target, c.case_id, "--paid", "2026-11-23", "--costs", "30", *lay)
    assert r.exit_code == 0 and "costs 50.00, paid 30.00" in r.output and "paid 30.00 by" in r.output, r.output
    with open_registry(target, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        assert reg.verify() == []
        b = reg.backend
        with b.write() as cur:  # a payment written behind the history, as a database tool might
            cur.execute(
                "INSERT INTO enforcement_events (case_id, at, who, kind, on_date, costs, costs_from, detail) "
                f"VALUES ({', '.join([b.ph] * 8)})",
                (c.case_id, b.dump("datetime", datetime(2026, 11, 24, tzinfo=UTC)), "x", "paid",
                 b.dump("date", date(2026, 11, 24)), 20.0, None, None),
            )  # fmt: skip
        found = [str(d) for d in reg.verify()]
    assert found == [f"{c.case_id}: payments is [20.0, 30.0] in the table, [30.0] in the history"]


# --- § 540-8C(5): a deemed approval is a permit for enforcement, recorded or not (issue 34) ----------


def undecided(reg: Registry) -> str:
    """An application received and paid Monday 2026-11-02, under review, never decided: due 2026-11-30."""
    n = reg.add(Application("400 Test St", date(2026, 11, 2), square_sqft(700, 100, 5000.0), CRS))
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt=f"R-{n}")
    reg.transition(n, "under_review", on=date(2026, 11, 3))
    return n


DEEMED = '"the applicant may proceed as if a permit had been issued"'


def test_a1_is_refused_on_an_application_deemed_approved_from_the_day_after_its_period(reg) -> None:
    """§ 540-8C(5): "Failure by the administering authority to inform the permit applicant of a decision within
    20 business days of a required submittal shall be deemed to mean approval of the submittal and the applicant
    may proceed as if a permit had been issued"; § 540-12A(1) is work "undertaken without a permit"."""
    n = undecided(reg)
    # The edge: on the last day of the period no approval is deemed yet: work without a permit.
    c = reg.enforce(ground="A1", on=date(2026, 11, 30), reasons="grading before any decision", permit_number=n)
    assert (c.ground, c.permit_issued) == ("A1", False)
    with pytest.raises(ValidationError) as info:
        reg.enforce(ground="A1", on=date(2026, 12, 1), reasons="grading", permit_number=n)
    text = str(info.value)
    assert DEEMED in text and "ran out on 2026-11-30" in text
    assert "ground A1 (activity without a permit) does not fit permit" in text
    assert "(§ 540-8C(5); § 540-12A(1); § 540-12C; basis interpretation)" in text
    assert len(reg.cases(permit_number=n)) == 1
    # A ground that does not rest on the want of a permit still fits.
    assert reg.enforce(ground="A4", on=date(2026, 12, 1), reasons="mud on the road", permit_number=n).ground == "A4"
    # Recorded, the deemed approval is refused the same way (one answer, recorded or not).
    reg.transition(n, "deemed_approved", on=date(2026, 12, 2))
    with pytest.raises(ValidationError, match="ground A1 is activity without a permit"):
        reg.enforce(ground="A1", on=date(2026, 12, 2), reasons="grading", permit_number=n)


def test_no_order_notice_or_referral_for_want_of_a_permit_once_an_approval_is_deemed(reg) -> None:
    """§ 540-8C(5) "the applicant may proceed as if a permit had been issued"; § 540-12C: "If the responsible
    party, where no permit has been issued, does not cease the activity after being notified": neither a stop-work
    order on the ground of no permit nor that referral fits once the approval is deemed. The order posted before
    may still be retracted (§ 540-12D)."""
    n = undecided(reg)
    c = reg.enforce(ground="A1", on=date(2026, 11, 30), reasons="grading before any decision", permit_number=n)
    c = reg.case_action(c.case_id, "notified", on=date(2026, 11, 30), reasons="letter")
    for kind in ("stop_work", "notified", "referral"):
        with pytest.raises(ValidationError) as info:
            reg.case_action(c.case_id, kind, on=date(2026, 12, 1), reasons="posted")
        assert DEEMED in str(info.value), kind
    assert [e.kind for e in reg.case(c.case_id).events] == ["notified"]
    # On the last day of the period, the order is the case's own, as on any application never issued.
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 30), reasons="posted at the gate")
    assert c.state == "stop_work" and reg.get(n).status == "under_review"
    with pytest.raises(ValidationError, match="may proceed as if a permit had been issued"):
        reg.case_action(c.case_id, "referral", on=date(2026, 12, 1))
    c = reg.case_action(c.case_id, "retraction", on=date(2026, 12, 1), reasons="approval deemed 11-30")
    assert c.state == "retracted"


def test_on_another_case_a_deemed_approval_is_a_permit_issued_for_the_referral(reg) -> None:
    """§ 540-12C: the referral "where no permit has been issued" follows the notice alone; a deemed approval is
    "as if a permit had been issued" (§ 540-8C(5)), so the referral follows a violated stop-work order."""
    n = undecided(reg)
    c = reg.enforce(ground="A4", on=date(2026, 11, 30), reasons="mud on the road", permit_number=n)
    c = reg.case_action(c.case_id, "notified", on=date(2026, 11, 30), reasons="letter")
    with pytest.raises(ValidationError, match="violates a stop-work order posted under"):
        reg.case_action(c.case_id, "referral", on=date(2026, 12, 1))
    # The edge: on the last day of the period no permit had been issued, and the notice was enough.
    assert [e.kind for e in reg.case_action(c.case_id, "referral", on=date(2026, 11, 30)).events] == [
        "notified",
        "referral",
    ]


# --- § 540-12A(3), (4) on a suspended permit (issue 34) ----------------------------------------------


@pytest.mark.parametrize("ground", ["A3", "A4"])
def test_a_stop_work_order_on_a_suspended_permit_and_then_a_referral(reg, active, ground: str) -> None:
    """§ 540-12A: "The administering authority may post a stop-work order if any of the following occurs: ...
    (3) The conditions of the permit are not being met. (4) Any land-disturbing construction activity is in
    violation of the article"; § 540-12C: "or if a responsible party violates a stop-work order posted under
    § 540-12A, the administering authority may request the Village Attorney to obtain a cease-and-desist
    order". A suspension (§ 540-8E) does not take that power away; the order lies over it."""
    reg.transition(
        active, "suspended", on=date(2026, 11, 16), reasons="silt fence down", notified_on=date(2026, 11, 13)
    )  # fmt: skip
    # Ground A3 names the condition not met (§ 540-8F: "Permits ... may include conditions").
    named = {}
    if ground == "A3":
        reg.add_condition(active, "keep the silt fence standing", on=date(2026, 11, 10))
        named = {"condition": 1}
    c = reg.enforce(
        ground=ground, on=date(2026, 11, 18), reasons="grading while suspended", permit_number=active, **named
    )
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 18), reasons="posted at the gate")
    p = reg.get(active)
    assert (c.state, p.status, p.previous_status) == ("stop_work", "stop_work", "suspended")
    c = reg.case_action(c.case_id, "referral", on=date(2026, 11, 20))
    assert [e.kind for e in c.events] == ["stop_work", "referral"]
    # Lifting the order is its retraction, back to the suspension, never straight to active.
    with pytest.raises(IllegalTransitionError, match="over its suspension cannot become active: retract the order"):
        reg.transition(active, "active", on=date(2026, 11, 23), reasons="order lifted")
    with pytest.raises(IllegalTransitionError, match="over its suspension cannot become suspended"):
        reg.transition(active, "suspended", on=date(2026, 11, 23), reasons="again", notified_on=date(2026, 11, 20))
    c = reg.case_action(c.case_id, "retraction", on=date(2026, 11, 23), reasons="work ceased")
    assert (c.state, reg.get(active).status) == ("retracted", "suspended")
    assert reg.reinstate(active, reasons="fence repaired", on=date(2026, 11, 24)).status == "active"


def test_a_stop_work_order_over_a_suspension_may_end_in_revocation(reg, active) -> None:
    """§ 540-12B: "If the responsible party does not cease activity as required in a stop-work order posted
    under this section ... the administering authority may revoke the permit"."""
    reg.transition(
        active, "suspended", on=date(2026, 11, 16), reasons="silt fence down", notified_on=date(2026, 11, 13)
    )  # fmt: skip
    reg.transition(active, "stop_work", on=date(2026, 11, 18), reasons="posted at the gate")
    p = reg.transition(
        active, "revoked", on=date(2026, 11, 20), reasons="did not cease", notified_on=date(2026, 11, 19)
    )  # fmt: skip
    assert (p.status, p.previous_status) == ("revoked", "stop_work")


# --- § 540-12A(2), (3) rest on a permit issued and in force (issue 46, enf2) ------------------------------


def _refused_not_in_force(reg: Registry, ground: str, n: str, day: date) -> str:
    """Open a case on ``ground`` (A3 naming § 540-8E(6)) on permit ``n`` dated ``day``; return the refusal."""
    named = {"condition": "E6"} if ground == "A3" else {}
    with pytest.raises(ValidationError) as info:
        reg.enforce(ground=ground, on=day, reasons="no weekly reports", permit_number=n, **named)
    return str(info.value)


def test_a2_and_a3_are_refused_on_an_application_never_issued_naming_a1(reg) -> None:
    """§ 540-12A(3): a stop-work order if "The conditions of the permit are not being met"; § 540-8E: "All
    permits issued under this article shall be subject to the following conditions"; § 540-8C(2): "If the
    permit application and plan are approved, the administering authority shall issue the permit". An
    application received, incomplete, under review, disapproved or closed without a permit has neither an
    approved plan nor conditions: A2 and A3 are refused, naming A1 (§ 540-12A(1) "undertaken without a
    permit"), which fits the same application. Nothing is written."""
    apps = applications(reg)
    for status, n in apps.items():
        for ground in ("A2", "A3"):
            text = _refused_not_in_force(reg, ground, n, date(2026, 11, 20))
            assert f"ground {ground} (§ 540-12A({ground[1]}): " in text, (status, text)
            assert "rests on a permit issued under this article and in force on 2026-11-20" in text
            assert '"All permits issued under this article shall be subject to the following conditions"' in text
            assert f"permit {n} is none in force then (it is {status}; no permit was issued on the application" in text
            assert "is ground A1 (§ 540-12A(1))" in text
            assert "(§ 540-12A(2), (3); § 540-8C(2); § 540-8E; § 540-8G; basis ordinance)" in text
            assert "Fix: use another ground (A1, A4)." in text
    assert reg.cases() == []
    c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading", permit_number=apps["under_review"])
    assert c.ground == "A1"


def test_a2_and_a3_fit_a_permit_to_the_last_day_of_its_period_and_not_after(reg) -> None:
    """§ 540-8G: "Permits issued under this section shall be valid for a period of 180 days ... from the date of
    issuance"; § 540-12A(3): "The conditions of the permit are not being met". Valid to 2026-10-28: a case of
    that day fits (the edge), one of the day after is refused (the permit is none in force), and so is one
    dated before the issuance on 2026-05-01 (§ 540-8E "All permits issued")."""
    n = expired(reg)
    c = reg.enforce(ground="A3", on=date(2026, 10, 28), reasons="no weekly reports", permit_number=n, condition="E6")
    assert c.reasons.startswith("condition E6 not met")
    assert reg.enforce(ground="A2", on=date(2026, 10, 28), reasons="plan ignored", permit_number=n).ground == "A2"
    for ground in ("A2", "A3"):
        text = _refused_not_in_force(reg, ground, n, date(2026, 10, 29))
        assert "in force on 2026-10-29" in text and "(it is active, valid to 2026-10-28; work goes on after the" in text
        assert "an expired permit permits no work (§ 540-12A(1); § 540-8G; basis interpretation)" in text
        text = _refused_not_in_force(reg, ground, n, date(2026, 4, 30))
        assert "in force on 2026-04-30" in text and "no permit was issued on the application" in text
    assert len(reg.cases()) == 2


def test_a2_and_a3_are_refused_on_a_revoked_or_closed_permit(reg, active) -> None:
    """§ 540-12B: "the administering authority may revoke the permit"; § 540-8E: "All permits issued under this
    article shall be subject to the following conditions". A revoked permit (and a closed one) is no permit in
    force (the profile's reading, labelled interpretation): A2 and A3 are refused, A4 still fits (§ 540-12A(4)
    "in violation of the article")."""
    n = revoked(reg, active)
    for ground in ("A2", "A3"):
        text = _refused_not_in_force(reg, ground, n, date(2026, 11, 20))
        assert "(it is revoked, valid to 2027-05-02; work goes on after the permit was revoked" in text
        assert "(§ 540-12A(1); § 540-12B; § 540-4A; basis interpretation)" in text
    assert reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="mud", permit_number=n).ground == "A4"
    closed = add_active(reg, x=700, address="7 Closed St")
    reg.transition(closed, "final_stabilization", on=date(2026, 11, 16))
    reg.transition(closed, "closed", on=date(2026, 11, 18))
    for ground in ("A2", "A3"):
        text = _refused_not_in_force(reg, ground, closed, date(2026, 11, 20))
        assert "(it is closed, valid to 2027-05-02; work goes on after the permit was closed" in text
    assert len(reg.cases()) == 1


def test_a3_fits_an_application_deemed_approved_from_the_day_after_its_period(reg) -> None:
    """§ 540-8C(5): a decision not given in time "shall be deemed to mean approval of the submittal and the
    applicant may proceed as if a permit had been issued"; § 540-8E: "All permits issued under this article shall
    be subject to the following conditions". On the period's last day no approval is deemed (A3 refused, A1 is the
    ground); from the day after, A3 fits, recorded or not (one rule with A1's refusal there)."""
    n = undecided(reg)
    text = _refused_not_in_force(reg, "A3", n, date(2026, 11, 30))
    assert "is ground A1" in text and "no permit was issued on the application" in text
    c = reg.enforce(ground="A3", on=date(2026, 12, 1), reasons="no weekly reports", permit_number=n, condition="E6")
    assert c.reasons.startswith("condition E6 not met")


def test_a1_by_address_alone_is_refused_and_a4_is_taken(reg) -> None:
    """§ 540-12A(1): a stop-work order if "Any land-disturbing construction activity is being undertaken without a
    permit and, pursuant to § 540-4A of this article, a permit is required for the construction site". An address
    measures nothing: no decision under § 540-4A rests the case, so A1 is refused there, pointing to the doors that
    decide it; § 540-12A(4) "in violation of the article" needs no such decision and is taken. Nothing is written
    on the refusal."""
    with pytest.raises(ValidationError) as info:
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading, no permit", address="9 Elm St")
    text = str(info.value)
    assert 'ground A1 (§ 540-12A(1)) rests on work "undertaken without a permit and, pursuant to § 540-4A' in text
    assert "an address alone does not decide that § 540-4A requires a permit there" in text
    assert "(§ 540-12A(1); § 540-4A; basis ordinance)" in text
    assert "site_layer=FILE site_id=ID" in text and "(permit_number=)" in text and "on ground A4" in text
    assert reg.cases() == []
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="grading, mud on Elm St", address="9 Elm St")
    assert (c.ground, c.site_address, c.permit_number) == ("A4", "9 Elm St", None)


def test_the_revoked_reading_cites_section_4a_as_section_12a1_does() -> None:
    """§ 540-12A(1): "a permit is required for the construction site" "pursuant to § 540-4A of this article": a
    site may need one by § 540-4A(1)(a) (4,000 sq ft or more) or by a § 540-4A(1)(c) determination, so the
    reading on a revoked permit cites § 540-4A, not its subsection (a)."""
    from esc_gis.profile import load_profile
    from esc_gis.registry.domain.enforcement import without_permit_terms

    _, section, basis = without_permit_terms(load_profile().tables)["revoked"]
    assert (section, basis) == ("§ 540-12A(1); § 540-12B; § 540-4A", "interpretation")
