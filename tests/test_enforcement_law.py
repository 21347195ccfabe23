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
from esc_gis.registry.store import Registry

from .conftest import CRS, square_sqft

UTC = timezone.utc


def revoked(reg: Registry, active: str) -> str:
    reg.transition(active, "revoked", on=date(2026, 11, 18), reasons="plan not followed after the order")
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
