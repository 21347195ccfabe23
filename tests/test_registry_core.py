"""Registry core: business days (property tests), the life cycle, and the deadlines."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esc_gis.errors import ProfileError
from esc_gis.profile import load_profile
from esc_gis.registry.calendar import OfficeCalendar, default_holidays, load_calendar
from esc_gis.registry.deadlines import decision_due, expiry, inspections_due, simple_due, start_notice_due
from esc_gis.registry.lifecycle import STATES, TRANSITIONS, IllegalTransitionError, check_transition

PROFILE = load_profile()
CAL = OfficeCalendar()
DAYS = st.dates(min_value=date(2020, 1, 1), max_value=date(2035, 12, 31))


@settings(deadline=None)  # correctness, not speed: no timing in tests
@given(DAYS, st.integers(min_value=1, max_value=60))
def test_a_deadline_is_never_on_a_weekend_or_holiday(start, n):
    due = CAL.add_business_days(start, n)
    assert due.weekday() < 5 and due not in default_holidays(due.year) | default_holidays(due.year + 1)
    assert CAL.business_days_between(start, due) == n


@settings(deadline=None)
@given(DAYS)
def test_twenty_business_days_forward_then_back_is_the_start(start):
    back = CAL.add_business_days(CAL.add_business_days(start, 20), -20)
    if CAL.is_business_day(start):
        assert back == start
    else:  # received on a closed day: counting back lands on the last open day before it
        assert back < start and CAL.is_business_day(back)
        assert all(not CAL.is_business_day(back + timedelta(days=k)) for k in range(1, (start - back).days + 1))


def test_holidays_by_hand():
    h = default_holidays(2027)
    assert date(2027, 7, 5) in h  # July 4 is a Sunday: observed Monday
    assert date(2027, 11, 25) in h and date(2027, 11, 26) in h  # Thanksgiving and the day after
    assert not CAL.is_business_day(date(2021, 12, 31))  # New Year's Day 2022 is a Saturday


def test_calendar_file(tmp_path):
    f = tmp_path / "office.toml"
    f.write_text('holidays = ["2026-12-31"]\nweekend = ["sun"]\n')
    cal = load_calendar(f)
    assert cal.is_business_day(date(2026, 11, 28))  # a Saturday: open
    assert not cal.is_business_day(date(2026, 12, 31)) and cal.is_business_day(date(2026, 12, 25))
    f.write_text('holidays = ["2026-13-01", "xmas"]\nweekend = ["caturday"]\n')
    with pytest.raises(ProfileError, match=r"2026-13-01.*xmas.*caturday"):
        load_calendar(f)


def test_decision_due_and_deemed_approval():
    # Received Friday 2026-11-20: Thanksgiving (26th) and the day after (27th) are closed.
    due = decision_due(date(2026, 11, 20), CAL, PROFILE)
    assert due.due == date(2026, 12, 22) and due.section == "§ 540-8C(1)"
    assert decision_due(date(2026, 11, 20), CAL, PROFILE, after_information=True).section == "§ 540-8C(4)"


def test_expiry_is_the_longer_of_180_days_and_the_building_permit_plus_extensions():
    issued = date(2026, 3, 1)
    assert expiry(issued, PROFILE).due == date(2026, 8, 28)
    assert expiry(issued, PROFILE, building_permit_expires=date(2027, 3, 1)).due == date(2027, 3, 1)
    assert expiry(issued, PROFILE, extensions_days=[180, 30]).due == date(2027, 3, 26)  # Aug 28 + 210 days
    with pytest.raises(ProfileError, match="up to 180 days"):
        expiry(issued, PROFILE, extensions_days=[181])


def test_simple_deadlines():
    assert start_notice_due(datetime(2026, 5, 1, 7, 30), PROFILE).due == datetime(2026, 5, 3, 7, 30)
    assert simple_due("temporary stabilisation", date(2026, 5, 1), "temporary_stabilization", PROFILE).due == date(
        2026, 5, 15)  # fmt: skip
    assert simple_due("stockpile", date(2026, 5, 1), "stockpile", PROFILE).due == date(2026, 5, 8)


def test_inspections_weekly_and_after_rain():
    start = date(2026, 5, 1)
    rain = [(date(2026, 5, 3), 0.6), (date(2026, 5, 5), 0.4), (date(2026, 5, 9), 1.2)]
    due = inspections_due(start, [date(2026, 5, 4)], rain, date(2026, 5, 12), PROFILE)
    # 0.6 in on the 3rd was inspected on the 4th; 0.4 in does not trigger; 1.2 in on the 9th is overdue.
    assert [(d.what, d.due) for d in due] == [("inspection after 1.2 in of rain on 2026-05-09", date(2026, 5, 10)),
                                               ("weekly inspection", date(2026, 5, 11))]  # fmt: skip
    assert all(d.section == "§ 540-8E(6)" for d in due)
    # Inspected on the 10th only: the rain of the 3rd was missed and stays listed (overdue).
    late = inspections_due(start, [date(2026, 5, 10)], rain, date(2026, 5, 12), PROFILE)
    assert [d.what for d in late] == ["inspection after 0.6 in of rain on 2026-05-03"]


def test_every_state_reaches_closed_and_illegal_moves_list_the_allowed():
    assert set(TRANSITIONS) == set(STATES)
    for state in STATES:  # closed is reachable from everywhere: no dead ends
        seen, todo = {state}, [state]
        while todo:
            for nxt in TRANSITIONS[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        assert "closed" in seen, state
    with pytest.raises(IllegalTransitionError, match="allowed: active, revoked"):
        check_transition("approved", "closed")
    with pytest.raises(IllegalTransitionError, match="written reasons"):
        check_transition("under_review", "disapproved", reasons="  ")
    check_transition("under_review", "disapproved", reasons="No sediment basin for 2.3 acres (§ 540-7B).")
    with pytest.raises(IllegalTransitionError, match="none"):
        check_transition("closed", "active")
    with pytest.raises(IllegalTransitionError, match="not a permit state"):
        check_transition("approved", "finished")
