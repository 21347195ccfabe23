"""Plan versions pinned at their edges, pure (§ 540-9B).

§ 540-9B: "The applicant shall amend the plan if ..."; the permittee must have the administering
authority's written permission before the modification. No registry here: the checks run before
a version or a notice is written, each with its exact words.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from esc_gis.errors import ProfileError
from esc_gis.registry.domain.amendments import (
    ORIGINAL,
    CoverageEnds,
    PlanVersion,
    check_notice,
    check_version,
    coverage_ended,
    coverage_ends,
    current_version,
    file_digest,
    triggers,
)

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
TODAY = date(2026, 6, 30)
RECEIVED = date(2026, 3, 2)
KNOWN = {
    ORIGINAL: {"section": "§ 540-9A", "text": "plan approved with the permit"},
    "site_change": {"section": "§ 540-9B(1)", "text": "change at the site"},
    "notice": {"section": "§ 540-9B(3)", "text": "notice of changes", "notice": True},
}
BEFORE = "MODIFICATION BEFORE PERMISSION (§ 540-9B)"


def _v(version: int | None, effective_on: date | None, status: str = "recorded", trigger: str = "site_change"):
    return PlanVersion(
        version or 0, "ESC-1", version, trigger, status, "d", None, None, None, None, None, effective_on,
        None, None, None, "clerk", AT,
    )  # fmt: skip


def _version(**kw) -> list[str]:
    args = {
        "trigger": "site_change",
        "description": "new basin",
        "plan_date": date(2026, 6, 1),
        "permission_on": date(2026, 6, 2),
        "permission_by": "Administrator",
        "effective_on": date(2026, 6, 2),
        "known": KNOWN,
        "existing": [],
        "received_on": RECEIVED,
        "issued": True,
        "today": TODAY,
        "before_permission": BEFORE,
    }
    return check_version(**{**args, **kw})


def _notice(**kw) -> list[str]:
    args = {
        "trigger": "notice",
        "description": "add a basin",
        "notified_on": date(2026, 6, 2),
        "known": KNOWN,
        "received_on": RECEIVED,
        "issued": True,
        "today": TODAY,
    }
    return check_notice(**{**args, **kw})


def test_the_triggers_are_read_with_the_original_plan() -> None:
    assert triggers({"amendments": {"triggers": KNOWN}}) == KNOWN
    for tables in ({}, {"amendments": None}, {"amendments": {"triggers": {}}}, {"amendments": {"triggers": [1]}}):
        with pytest.raises(
            ProfileError,
            match=r"^The profile has no \[amendments\.triggers\] table \(code = \{section, text\}\) for plan amendments\.$",
        ):
            triggers(tables)
    bad = {**KNOWN, "a": {"section": "s"}, "b": {"text": "t"}, "c": "x"}
    with pytest.raises(ProfileError) as e:
        triggers({"amendments": {"triggers": bad}})
    assert str(e.value) == "[amendments.triggers] entries 'a', 'b', 'c' need a section and a text."
    with pytest.raises(ProfileError) as e:
        triggers({"amendments": {"triggers": {"site_change": KNOWN["site_change"]}}})
    assert str(e.value) == "[amendments.triggers] has no 'original' entry (the plan approved with the permit)."


def test_the_version_in_effect_is_the_highest_that_has_taken_effect() -> None:
    v0, v1, v2 = _v(0, None, trigger=ORIGINAL), _v(1, date(2026, 6, 10)), _v(2, date(2026, 6, 20))
    notice = _v(3, None, status="requested")
    assert current_version([v0, v1, v2, notice], date(2026, 6, 9)) == v0
    assert current_version([v2, v1, v0], date(2026, 6, 10)) == v1
    assert current_version([v0, v2, v1], date(2026, 6, 20)) == v2
    assert current_version([v0, v1], date(2026, 6, 10)) == v1  # the original is version 0, below every amendment
    assert current_version([v0, _v(None, None)], date(2026, 6, 20)) == v0
    assert current_version([notice], date(2026, 6, 20)) is None
    assert notice.is_notice and not v1.is_notice


def test_an_amendment_with_its_permission_before_it_takes_effect_is_accepted() -> None:
    assert _version() == []
    assert _version(plan_date=date(2026, 6, 2), permission_on=date(2026, 6, 2), effective_on=None) == []
    assert _version(permission_on=RECEIVED, plan_date=RECEIVED, effective_on=TODAY) == []


def test_a_modification_before_the_written_permission_is_refused_in_the_profiles_words() -> None:
    assert _version(effective_on=date(2026, 6, 1)) == [BEFORE]


def test_the_permission_is_for_the_plan_it_saw_after_the_application() -> None:
    assert _version(plan_date=date(2026, 6, 3)) == [
        "the permission 2026-06-02 is before the amended plan's date 2026-06-03: the permission is for the plan it saw."
    ]
    assert _version(permission_on=date(2026, 3, 1), plan_date=date(2026, 3, 1), effective_on=None) == [
        "permission_on=2026-03-01 is before the application's receipt (2026-03-02): "
        "give the day it happened, on or after 2026-03-02."
    ]


def test_every_problem_of_an_amendment_is_reported_at_once() -> None:
    assert _version(
        trigger="whim", description=" ", plan_date=None, permission_on=None, permission_by=" ", issued=False
    ) == [
        "trigger 'whim' is not one the profile lists (original, site_change, notice).",
        "the description is empty (description=: what the version changes).",
        "the plan date is missing (plan_date=YYYY-MM-DD).",
        "the permit has not been issued: before approval a revised plan is part of the review.",
        "the date of the written permission is missing (permission_on=YYYY-MM-DD).",
        "who gave the written permission is missing (permission_by=).",
    ]
    assert _version(permission_by=None) == ["who gave the written permission is missing (permission_by=)."]
    assert _version(plan_date=date(2026, 7, 1), permission_on=date(2026, 7, 1), effective_on=None) == [
        "plan_date=2026-07-01 is after today on the Village's clock (2026-06-30): "
        "give the day it happened, on or before 2026-06-30.",
        "permission_on=2026-07-01 is after today on the Village's clock (2026-06-30): "
        "give the day it happened, on or before 2026-06-30.",
    ]
    assert _version(plan_date=TODAY, permission_on=TODAY, effective_on=None) == []


def test_the_original_plan_is_the_one_approved_with_the_permit_once() -> None:
    orig = {"trigger": ORIGINAL, "permission_on": None, "permission_by": None, "effective_on": None}
    assert _version(**orig) == []
    assert _version(**{**orig, "issued": False}) == [
        "the permit has not been issued: the original plan is the one approved with the permit."
    ]
    assert _version(**orig, existing=[_v(0, None, trigger=ORIGINAL)]) == [
        "the original plan (version 0) is already recorded; record a change as an amendment."
    ]
    assert _version(**orig, existing=[_v(1, None)]) == []
    leave_out = [
        "the original plan is approved with the permit; leave out permission_on=, permission_by= and effective_on=."
    ]
    assert _version(**{**orig, "permission_on": date(2026, 6, 2)}) == leave_out
    assert _version(**{**orig, "permission_by": "A"}) == leave_out
    assert _version(**{**orig, "permission_by": ""}) == []
    assert _version(**{**orig, "effective_on": date(2026, 6, 2)}) == leave_out


def test_the_offices_notice_of_changes_needed_comes_first_and_only_for_the_notice_trigger() -> None:
    """§ 540-9B(3): the administering authority notifies the permittee of changes needed."""
    assert _notice() == []
    assert _notice(notified_on=RECEIVED) == []
    assert _notice(notified_on=TODAY) == []
    assert _notice(trigger="site_change") == [
        "only the administering authority's notice (notice) is recorded before its plan; "
        "'site_change' is recorded with the amended plan."
    ]
    assert _notice(known={ORIGINAL: KNOWN[ORIGINAL]}, trigger="notice") == [
        "only the administering authority's notice (none in the profile) is recorded before its plan; "
        "'notice' is recorded with the amended plan."
    ]
    two = {**KNOWN, "order": {"section": "§ 540-9B(3)", "text": "order", "notice": True}}
    assert _notice(known=two, trigger="site_change") == [
        "only the administering authority's notice (notice, order) is recorded before its plan; "
        "'site_change' is recorded with the amended plan."
    ]
    assert _notice(description=" ", notified_on=None, issued=False) == [
        "the description is empty (description=: the changes needed).",
        "the date of the notice is missing (notified_on=YYYY-MM-DD).",
        "the permit has not been issued: before approval, ask for information instead.",
    ]
    assert _notice(notified_on=date(2026, 3, 1)) == [
        "notified_on=2026-03-01 is before the application's receipt (2026-03-02): "
        "give the day it happened, on or after 2026-03-02."
    ]
    assert _notice(notified_on=date(2026, 7, 1)) == [
        "notified_on=2026-07-01 is after today on the Village's clock (2026-06-30): "
        "give the day it happened, on or before 2026-06-30."
    ]


def test_a_plan_file_is_recorded_by_its_resolved_path_and_checksum(tmp_path: Path) -> None:
    p = tmp_path / "plan.pdf"
    p.write_bytes(b"abc")
    assert file_digest(p) == (
        str(p.resolve()),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    )
    msg, digest = file_digest(tmp_path / "nope.pdf")
    assert digest is None
    assert msg == (
        f"the plan file {tmp_path / 'nope.pdf'} cannot be read (No such file or directory); "
        "give the file of the plan version."
    )


ENDS = CoverageEnds(frozenset({"closed", "revoked"}), expiry=True)
ISSUED = ("approved", "active", "extended", "suspended", "final_stabilization")


def test_coverage_ends_with_the_permit_closed_revoked_or_past_its_period() -> None:
    """§ 540-8E(7): the plan and amendments are kept "until permit coverage is terminated"; § 540-8G: "valid
    for a period of 180 days ... from the date of issuance". The day after the period, not on it."""
    end = date(2027, 5, 2)
    assert coverage_ended(ENDS, "active", end, end, ISSUED) is None
    assert coverage_ended(ENDS, "active", end, date(2027, 5, 3), ISSUED) == "the permit expired on 2027-05-02"
    assert coverage_ended(ENDS, "closed", None, date(2026, 1, 1), ISSUED) == "the permit is closed"
    assert coverage_ended(ENDS, "revoked", end, end, ISSUED) == "the permit is revoked"
    # With the day of the closing or revocation: terminated from that day, not before it ("until permit
    # coverage is terminated"); before it the period still counts.
    shut = date(2026, 11, 27)
    assert coverage_ended(ENDS, "closed", end, shut, ISSUED, shut) == "the permit was closed on 2026-11-27"
    assert coverage_ended(ENDS, "closed", end, date(2026, 11, 26), ISSUED, shut) is None
    assert coverage_ended(ENDS, "revoked", end, date(2026, 11, 12), ISSUED, shut) is None
    assert coverage_ended(ENDS, "revoked", date(2026, 11, 1), date(2026, 11, 12), ISSUED, shut) == (
        "the permit expired on 2026-11-01"
    )
    # Absence: a suspension or final stabilization does not end it; no period (not issued) none to pass;
    # a profile that does not read expiry as the end keeps it running.
    for status in ("suspended", "final_stabilization", "stop_work"):
        assert coverage_ended(ENDS, status, end, end, (*ISSUED, "stop_work")) is None
    assert coverage_ended(ENDS, "under_review", end, date(2027, 6, 1), ISSUED) is None
    assert coverage_ended(ENDS, "active", None, date(2027, 6, 1), ISSUED) is None
    assert coverage_ended(CoverageEnds(frozenset(), expiry=False), "active", end, date(2027, 6, 1), ISSUED) is None


def test_the_profile_names_the_states_that_end_coverage() -> None:
    from esc_gis.profile import load_profile

    assert coverage_ends(load_profile().tables) == ENDS
    with pytest.raises(ProfileError, match=r"no \[amendments\.coverage_ends\]"):
        coverage_ends({})
    with pytest.raises(ProfileError, match=r"coverage_ends\] names finished, not a permit state"):
        coverage_ends({"amendments": {"coverage_ends": {"states": ["closed", "finished"], "expiry": True}}})
    with pytest.raises(ProfileError, match=r"coverage_ends\] needs expiry = true or false"):
        coverage_ends({"amendments": {"coverage_ends": {"states": ["closed"], "expiry": "yes"}}})
