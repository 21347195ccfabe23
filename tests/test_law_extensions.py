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


# --- Item 6 of issue 34: no extension after the period ran out ------------------------------------


def expired_in_march(reg: Registry) -> str:
    """An active permit issued 2025-09-15: valid 180 days, to 2026-03-14 (§ 540-8G)."""
    from datetime import datetime, timezone

    return reg.add(
        Application(
            "300 Test St",
            date(2025, 9, 1),
            square_sqft(500, 100, 5000.0),
            CRS,
            status="active",
            issued_on=date(2025, 9, 15),
            started_at=datetime(2025, 9, 16, 8, tzinfo=timezone.utc),
        ),
        who="clerk",
    )


def test_a_period_that_ran_out_is_not_extended_after_the_fact(reg, target: str, layers_path) -> None:
    """§ 540-8G: "valid for a period of 180 days ... from the date of issuance. The administering authority may
    extend the period one or more times" (reading, ``extension_after_expiry``: a period still running). Expired
    2026-03-14 and extended on 2026-11-30, it would run to 2026-09-10 and make work done after the expiry
    (an A1 case) permitted after the fact: refused, and the A1 case still fits."""
    n = expired_in_march(reg)
    assert reg.get(n).expires_on == date(2026, 3, 14)
    case = reg.enforce(ground="A1", on=date(2026, 6, 1), reasons="grading after the expiry", permit_number=n)
    with pytest.raises(IllegalTransitionError, match=r"the period ended on 2026-03-14, so it cannot be extended on"):
        reg.extend(n, 180, on=date(2026, 11, 30))
    p = reg.get(n)
    assert p.expires_on == date(2026, 3, 14) and p.extensions_days == [] and p.status == "active"
    assert "extended" not in [e.kind for e in reg.history(n)]
    # The A1 ground still fits the day of the case: a second case on that day is not refused as "in force".
    again = reg.enforce(ground="A1", on=date(2026, 6, 1), reasons="still grading", permit_number=n)
    assert again.case_id != case.case_id
    # On the command line: the reading's words, no traceback, exit code not 0.
    r = run_permits("extend", target, n, "180", "--on", "2026-11-30", "--layers", str(layers_path))
    assert r.exit_code != 0 and "the period ended on 2026-03-14" in r.output and "Traceback" not in r.output
    f = reg.profile.finding("extension_after_expiry", day=date(2026, 11, 30), expired=date(2026, 3, 14))
    assert (f.section, f.basis) == ("§ 540-8G", "interpretation")


def test_a_period_may_be_extended_on_its_last_day(reg) -> None:
    """The edge: "valid for a period of 180 days" includes its last day, so the period still runs on 2026-03-14
    and "may extend the period" then; the extension adds its days to the expiry."""
    n = expired_in_march(reg)
    p = reg.extend(n, 30, on=date(2026, 3, 14))
    assert p.status == "extended" and p.expires_on == date(2026, 4, 13)
    # Recorded late with the day it was really given (--on), it is accepted: the day counts, not the writing.
    p = reg.extend(n, 10, on=date(2026, 4, 13))
    assert p.expires_on == date(2026, 4, 23)
    with pytest.raises(IllegalTransitionError, match="the period ended on 2026-04-23"):
        reg.extend(n, 10, on=date(2026, 4, 24))


# --- Item 7 of issue 34: other construction authorizations set the period ---------------------------


def test_an_other_construction_authorization_longer_than_180_days_sets_the_expiry(
    reg, target: str, layers_path
) -> None:
    """§ 540-8G: "valid for a period of 180 days, or the length of the building permit or other construction
    authorizations, whichever is longer, from the date of issuance". Issued 2026-04-19 (to 2026-10-16): a
    WDNR permit running to 2027-12-31 sets the expiry; one shorter than 180 days does not."""
    n = reg.add(Application("400 Test St", date(2026, 4, 1), square_sqft(700, 100, 5000.0), CRS), who="clerk")
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 4, 1), receipt="R", who="clerk")
    reg.transition(n, "under_review", on=date(2026, 4, 2))
    reg.transition(n, "approved", on=date(2026, 4, 19))
    assert reg.get(n).expires_on == date(2026, 10, 16)
    p = reg.update(n, authorization=("WDNR permit short", date(2026, 10, 1)))  # shorter: 180 days stand
    assert p.expires_on == date(2026, 10, 16) and p.other_authorizations == {"WDNR permit short": date(2026, 10, 1)}
    lay = ["--layers", str(layers_path)]
    r = run_permits("update", target, n, "--authorization", "WDNR permit WI-S067831",
                    "--authorization-expires", "2027-12-31", *lay)  # fmt: skip
    assert r.exit_code == 0, r.output
    p = reg.get(n)
    assert p.expires_on == date(2027, 12, 31)
    both = {"WDNR permit short": date(2026, 10, 1), "WDNR permit WI-S067831": date(2027, 12, 31)}
    assert p.other_authorizations == both
    # "whichever is longer": a building permit shorter than it does not shorten the period.
    assert reg.update(n, building_permit_expires=date(2027, 6, 30)).expires_on == date(2027, 12, 31)
    # An extension adds its days to the longest length.
    assert reg.extend(n, 30, on=date(2026, 5, 1)).expires_on == date(2028, 1, 30)
    # Its home is the history: an ``updated`` event the fold keeps, shown by ``permits show``.
    assert reg.state(n).fields["other_authorizations"]["WDNR permit WI-S067831"] == "2027-12-31"
    r = run_permits("show", target, n, *lay)
    assert r.exit_code == 0 and "WDNR permit WI-S067831: ends 2027-12-31" in r.output


def test_an_authorization_recorded_before_issuance_counts_at_issuance(reg) -> None:
    """ "whichever is longer, from the date of issuance": recorded on the application, the period is set when
    the permit is issued."""
    n = reg.add(Application("500 Test St", date(2026, 4, 1), square_sqft(900, 100, 5000.0), CRS), who="clerk")
    p = reg.update(n, authorization=("WDNR permit", date(2027, 12, 31)))
    assert p.expires_on is None  # not issued: no period yet
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 4, 1), receipt="R", who="clerk")
    reg.transition(n, "under_review", on=date(2026, 4, 2))
    assert reg.transition(n, "approved", on=date(2026, 4, 19)).expires_on == date(2027, 12, 31)


def test_an_authorization_needs_its_name_and_its_end(reg, active, target: str, layers_path) -> None:
    """Bad input is refused with the fix, nothing written, and no traceback."""
    from esc_gis.errors import ValidationError

    before = len(reg.history(active))
    with pytest.raises(ValidationError, match="needs its name"):
        reg.update(active, authorization=("  ", date(2027, 12, 31)))
    lay = ["--layers", str(layers_path)]
    r = run_permits("update", target, active, "--authorization", "WDNR permit", *lay)
    assert r.exit_code != 0 and "go together" in r.output
    r = run_permits("update", target, active, "--authorization", "WDNR", "--authorization-expires", "12/31/27", *lay)
    assert r.exit_code != 0 and "Traceback" not in r.output
    assert len(reg.history(active)) == before


def test_an_authorization_given_with_the_application_sets_the_period(reg, target: str, layers_path, tmp_path) -> None:
    """ "or the length of the building permit or other construction authorizations, whichever is longer, from the
    date of issuance": given on `permits add` (kept in its ``received`` event), and on an imported issued permit."""
    import geopandas as gpd

    # An issued permit brought in with a WDNR permit to 2027-12-31: issued 2026-04-19, 180 days end 2026-10-16.
    issued = Application(
        "600 Test St", date(2026, 4, 1), square_sqft(1100, 100, 5000.0), CRS, status="approved",
        issued_on=date(2026, 4, 19), other_authorizations=(("WDNR permit WI-S067831", date(2027, 12, 31)),),
    )  # fmt: skip
    n = reg.add(issued, who="clerk")
    p = reg.get(n)
    assert p.expires_on == date(2027, 12, 31)
    assert p.other_authorizations == {"WDNR permit WI-S067831": date(2027, 12, 31)}
    assert reg.history(n)[0].data["fields"]["other_authorizations"] == {"WDNR permit WI-S067831": "2027-12-31"}
    # On the command line, with the application: the period is set when it is issued.
    site = tmp_path / "site.gpkg"
    gpd.GeoDataFrame(geometry=[square_sqft(1400, 100, 5000.0)], crs=CRS).to_file(site)
    lay = ["--layers", str(layers_path)]
    r = run_permits("add", target, "--site", str(site), "--address", "700 Test St", "--received", "2026-04-01",
                    "--authorization", "WDNR permit", "--authorization-expires", "2027-06-30", *lay)  # fmt: skip
    assert r.exit_code == 0, r.output
    m = next(x.permit_number for x in reg.permits() if x.site_address == "700 Test St")
    reg.record_fee(m, kind="application", amount=1.0, paid_on=date(2026, 4, 1), receipt="R7", who="clerk")
    reg.transition(m, "under_review", on=date(2026, 4, 2))
    assert reg.transition(m, "approved", on=date(2026, 4, 19)).expires_on == date(2027, 6, 30)
    # An authorization ending before the application came in is refused, naming both dates.
    from esc_gis.errors import ValidationError

    bad = Application("800 Test St", date(2026, 4, 1), square_sqft(1700, 100, 5000.0), CRS,
                      other_authorizations=(("WDNR permit", date(2026, 3, 1)),))  # fmt: skip
    with pytest.raises(ValidationError, match="ends 2026-03-01, before received_on 2026-04-01"):
        reg.add(bad)
