"""Extensions of a permit's period (§ 540-8G), on both back ends (``reg``: a GeoPackage file and the
real PostGIS server): "Permits issued under this section shall be valid for a period of 180 days, or
the length of the building permit or other construction authorizations, whichever is longer, from
the date of issuance. The administering authority may extend the period one or more times for up to
an additional 180 days. The administering authority may require additional BMPs as a condition of
the extension if they are necessary to meet the requirements of this article."
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from esc_gis.errors import IllegalTransitionError
from esc_gis.registry import Application
from esc_gis.registry.service.registry import Registry

from .conftest import CRS, square_sqft
from .public_outputs import run_permits

ISSUED = date(2026, 11, 20)


def approved(reg: Registry) -> str:
    """A permit approved (issued) on 2026-11-20 whose work has not started."""
    n = reg.add(Application("100 Test St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS), who="clerk")
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt=f"R-{n}", who="clerk")
    reg.transition(n, "under_review", on=date(2026, 11, 3))
    reg.transition(n, "approved", on=ISSUED)
    return n


def test_an_approved_permit_whose_work_has_not_started_may_be_extended(reg) -> None:
    """The period runs "from the date of issuance", started or not; "may extend the period one or more times"."""
    n = approved(reg)
    assert reg.get(n).expires_on == ISSUED + timedelta(days=180)
    p = reg.extend(n, 90, on=date(2026, 11, 25), who="dpw")
    # The state stays approved (no work started); the period is 180 + 90 days from issuance.
    assert p.status == "approved" and p.expires_on == ISSUED + timedelta(days=270)
    p = reg.extend(n, 30, on=date(2026, 11, 26))  # "one or more times"
    assert p.status == "approved" and p.expires_on == ISSUED + timedelta(days=300)
    assert p.state.status == "approved" and p.state.extensions_days == [90, 30]
    # Still an approved permit: work may start, and the period stays.
    p = reg.transition(n, "active", on=date(2026, 11, 30))
    assert p.status == "active" and p.expires_on == ISSUED + timedelta(days=300)


def test_a_permit_under_a_stop_work_order_may_be_extended_and_the_order_stands(reg, active) -> None:
    """ "may extend the period one or more times": a stop-work order (§ 540-12A) stops the work, not the period."""
    reg.transition(active, "stop_work", on=date(2026, 11, 20), reasons="sediment in the street")
    before = reg.get(active).expires_on
    p = reg.extend(active, 60, on=date(2026, 11, 21))
    assert p.status == "stop_work" and p.expires_on == before + timedelta(days=60)
    assert p.state.order("stop_work") is not None  # the order is not lifted by an extension
    # Its retraction still goes back to the state before the order, not to the order again.
    p = reg.retract(active, reasons="fence re-set", on=date(2026, 11, 24))
    assert p.status == "active" and p.expires_on == before + timedelta(days=60)


def test_a_suspended_permit_may_be_extended_and_stays_suspended(reg, active) -> None:
    """§ 540-8G: "The administering authority may extend the period one or more times": no state is excluded,
    so a suspension (§ 540-8E) stops the work, not the period."""
    reg.transition(
        active, "suspended", on=date(2026, 11, 20), reasons="notice of 2026-11-18: no reports",
        notified_on=date(2026, 11, 18),
    )  # fmt: skip
    before = reg.get(active).expires_on
    p = reg.extend(active, 45, on=date(2026, 11, 21))
    assert p.status == "suspended" and p.expires_on == before + timedelta(days=45)
    p = reg.reinstate(active, reasons="reports delivered", on=date(2026, 11, 24))
    assert p.status == "active" and p.expires_on == before + timedelta(days=45)


def test_an_active_permit_extended_becomes_extended_as_before(reg, active) -> None:
    p = reg.extend(active, 30, on=date(2026, 11, 20))
    assert p.status == "extended" and [e.to_status for e in p.events if e.kind == "extension"] == ["extended"]


@pytest.mark.parametrize("state", ["under_review", "disapproved"])
def test_a_permit_not_issued_cannot_be_extended(reg, state: str) -> None:
    """Only an issued permit has a period to extend (the edge: no extension before issuance)."""
    n = reg.add(Application("100 Test St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS), who="clerk")
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt="R", who="clerk")
    reg.transition(n, "under_review", on=date(2026, 11, 3))
    if state == "disapproved":
        reg.transition(n, state, on=date(2026, 11, 10), reasons="no plan")
    with pytest.raises(IllegalTransitionError, match="An extension is possible in active, extended, approved"):
        reg.extend(n, 30, on=date(2026, 11, 20))
    assert "extended" not in [e.kind for e in reg.history(n)]


def test_conditions_and_other_authorizations_are_kept_in_the_history_and_shown(
    reg, active, target: str, layers_path
) -> None:
    """ "The administering authority may require additional BMPs as a condition of the extension"; the period
    runs with "the building permit or other construction authorizations"."""
    lay = ["--layers", str(layers_path)]
    r = run_permits("extend", target, active, "60", "--on", "2026-11-20", "--condition", "silt fence on the east edge",
                    "--condition", "inlet protection at MH-3", "--authorization", "WPDES permit WI-S067831",
                    *lay)  # fmt: skip
    assert r.exit_code == 0, r.output
    e = reg.history(active)[-1]
    assert e.kind == "extended" and e.data["conditions"] == ["silt fence on the east edge", "inlet protection at MH-3"]
    assert e.data["authorizations"] == ["WPDES permit WI-S067831"]
    x = reg.get(active).state.extensions[-1]
    assert (x["days"], x["on"], x["conditions"][1]) == (60, date(2026, 11, 20), "inlet protection at MH-3")
    r = run_permits("show", target, active, *lay)
    assert r.exit_code == 0, r.output
    assert "condition: silt fence on the east edge" in r.output
    assert "authorization: WPDES permit WI-S067831" in r.output
    # An extension without them records none (the edge: nothing invented).
    reg.extend(active, 10, on=date(2026, 11, 21))
    assert "conditions" not in reg.history(active)[-1].data
    assert reg.get(active).state.extensions[-1]["conditions"] == []
