"""Enforcement rules read from the ordinance's words (§ 540-12), on both back ends (``reg``: a
GeoPackage file and the real PostGIS server): work without a permit on a revoked or expired
permit's site (§ 540-12A(1)); the referral "after being notified" (§ 540-12C); the interest and
the special assessment of § 540-12E.
"""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from esc_gis.errors import ValidationError
from esc_gis.registry import Application
from esc_gis.registry.service.registry import Registry

from .conftest import CRS, square_sqft

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
    c = reg.enforce(ground="A3", on=date(2026, 11, 20), reasons="fence down", permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted")
    assert reg.get(active).status == "stop_work" and reg.history(c.case_id) == []


# --- § 540-12C: "after being notified" --------------------------------------------------------------


def test_a_referral_without_a_permit_comes_after_the_notice_to_cease(reg) -> None:
    """§ 540-12C: "If the responsible party, where no permit has been issued, does not cease the activity
    after being notified by the administering authority ... the administering authority may request the
    Village Attorney to obtain a cease-and-desist order"."""
    c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading, no permit", address="9 Elm St")
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
    c = reg.enforce(ground="A3", on=date(2026, 11, 20), reasons="fence down", permit_number=active)
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
    c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading, no permit", address="9 Elm St")
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
