"""Registry core: business days (property tests), the life cycle, and the deadlines."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esc_gis.errors import ProfileError
from esc_gis.profile import load_profile
from esc_gis.registry.calendar import OfficeCalendar, default_holidays, load_calendar
from esc_gis.registry.deadlines import (
    decision_due,
    expiry,
    inspections_due,
    rain_events,
    stabilization_due,
    start_notice_due,
    stockpile_due,
)
from esc_gis.registry.lifecycle import (
    STATES,
    TRANSITIONS,
    IllegalTransitionError,
    check_back,
    check_transition,
    previous_state,
)

PROFILE = load_profile()
CT = ZoneInfo("America/Chicago")  # the Village's clock (the profile's timezone)
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
    assert due.due == date(2026, 12, 22) and due.section == "§ 540-8C(1); § 540-5 BUSINESS DAY"
    assert decision_due(date(2026, 11, 20), CAL, PROFILE, after_information=True).section.startswith("§ 540-8C(4);")


def test_expiry_is_the_longer_of_180_days_and_the_building_permit_plus_extensions():
    issued = date(2026, 3, 1)
    assert expiry(issued, PROFILE).due == date(2026, 8, 28)
    assert expiry(issued, PROFILE, building_permit_expires=date(2027, 3, 1)).due == date(2027, 3, 1)
    assert expiry(issued, PROFILE, extensions_days=[180, 30]).due == date(2027, 3, 26)  # Aug 28 + 210 days
    with pytest.raises(ProfileError, match="up to 180 days"):
        expiry(issued, PROFILE, extensions_days=[181])


def test_simple_deadlines():
    notice = start_notice_due(datetime(2026, 5, 1, 7, 30), PROFILE)
    assert notice.due == datetime(2026, 5, 3, 7, 30)
    # "within 48 hours of commencing" counted after the start is a reading, and says so.
    assert notice.basis == "interpretation" and "reading:" in notice.what and notice.section == "§ 540-8E(1)"
    assert stockpile_due(date(2026, 5, 1), PROFILE).due == date(2026, 5, 8)


# --- Temporary stabilisation (§ 540-7A(4)(d), § 540-7B(5)(d)) --------------------------------

STOP = date(2026, 5, 1)


@pytest.mark.parametrize(
    ("resume", "due", "code"),
    [
        (None, STOP, "temporary_stabilization_unknown_resume"),  # unknown: may exceed 14 days
        (date(2026, 5, 16), STOP, "temporary_stabilization"),  # 15 days: exceeds 14, due the day work stops
        (date(2026, 5, 15), date(2026, 5, 15), "temporary_stabilization_pause_overran"),  # exactly 14: not exceeding
        (date(2026, 5, 4), date(2026, 5, 15), "temporary_stabilization_pause_overran"),  # short: due if it overruns
    ],
)
def test_temporary_stabilization_is_due_when_work_stops_if_the_pause_exceeds_14_days(resume, due, code):
    d = stabilization_due(STOP, PROFILE, resume_expected=resume)
    assert (d.due, d.code) == (due, code)
    assert d.section == "§ 540-7A(4)(d); § 540-7B(5)(d)"
    # "will not resume for a period exceeding 14 calendar days": an expected return is the text; what
    # follows when an expected short pause runs over is a reading, and so is an unknown return.
    assert d.basis == ("ordinance" if code == "temporary_stabilization" else "interpretation")


def test_temporary_stabilization_is_not_due_once_work_resumed():
    assert stabilization_due(STOP, PROFILE, resume_expected=date(2026, 5, 4), resumed=date(2026, 5, 4)) is None
    assert stabilization_due(STOP, PROFILE, resumed=date(2026, 5, 1)) is None
    # A resumption recorded before this stop belongs to an earlier pause.
    assert stabilization_due(STOP, PROFILE, resumed=date(2026, 4, 20)).due == STOP


# --- Inspections after a precipitation event (§ 540-8E(6)) -----------------------------------


def test_consecutive_wet_days_are_one_event():
    rain = [
        (date(2026, 5, 1), 0.3),
        (date(2026, 5, 2), 0.3),
        (date(2026, 5, 4), 0.1),
        (date(2026, 5, 5), 0.0),
        (date(2026, 5, 6), 0.2),
        (date(2026, 5, 7), 1e-9),
        (date(2026, 5, 8), 0.3),
    ]
    got = [(e.start, e.end, e.inches) for e in rain_events(rain, PROFILE)]
    assert got == [
        (date(2026, 5, 1), date(2026, 5, 2), 0.6),
        (date(2026, 5, 4), date(2026, 5, 4), 0.1),  # exactly the profile's wet day (0.1 in): an event
        (date(2026, 5, 6), date(2026, 5, 6), 0.2),
        (date(2026, 5, 8), date(2026, 5, 8), 0.3),
    ]  # a trace day is under the wet day: it ends the run and joins nothing


def test_hourly_rain_separated_by_6_dry_hours_is_two_events():
    t = datetime(2026, 5, 1, 1)
    h = [t + timedelta(hours=k) for k in range(12)]
    # Wet at 01:00 and 07:00 (5 dry hours between): one event. Wet at 01:00 and 08:00 (6 dry hours): two.
    one = rain_events([(h[0], 0.3), *((x, 0.0) for x in h[1:6]), (h[6], 0.3)], PROFILE)
    two = rain_events([(h[0], 0.3), *((x, 0.0) for x in h[1:7]), (h[7], 0.3)], PROFILE)
    # On the Village's clock: a station's times are read as the profile's timezone.
    assert [(e.start, e.end, e.inches) for e in one] == [(h[0].replace(tzinfo=CT), h[6].replace(tzinfo=CT), 0.6)]
    assert [e.inches for e in two] == [0.3, 0.3]


def test_inspections_weekly_and_after_rain_events():
    start = date(2026, 5, 1)
    rain = [(date(2026, 5, 3), 0.6), (date(2026, 5, 5), 0.4), (date(2026, 5, 9), 1.2)]
    due = inspections_due(start, [date(2026, 5, 4)], rain, date(2026, 5, 12), PROFILE)
    # 0.6 in on the 3rd was inspected on the 4th; 0.4 in does not trigger; 1.2 in on the 9th is overdue.
    assert [(d.code, d.due) for d in due] == [
        ("rain_inspection", date(2026, 5, 10)),
        ("weekly_inspection", date(2026, 5, 11)),
    ]
    assert all(d.section == "§ 540-8E(6)" for d in due)
    assert "1.20 in of rain from 2026-05-09 to 2026-05-09" in due[0].what and due[0].basis == "interpretation"
    # Inspected on the 10th only: the rain of the 3rd was missed and stays listed (overdue).
    late = inspections_due(start, [date(2026, 5, 10)], rain, date(2026, 5, 12), PROFILE)
    assert [d.code for d in late] == ["rain_inspection", "weekly_inspection"]
    assert late[0].what.startswith("inspection after 0.60 in of rain from")
    assert late[1].due == date(2026, 5, 17)  # the next weekly one, a week after the 10th: listed ahead


@pytest.mark.parametrize(
    ("rain", "inspected", "due"),
    [
        ([(date(2026, 5, 3), 0.3), (date(2026, 5, 4), 0.3)], [], date(2026, 5, 5)),  # one 0.6 in event, ends the 4th
        ([(date(2026, 5, 3), 0.25), (date(2026, 5, 4), 0.25)], [], date(2026, 5, 5)),  # exactly 0.5 in: triggers
        (
            [(date(2026, 5, 3), 0.1), (date(2026, 5, 4), 0.2), (date(2026, 5, 5), 0.2)],
            [],
            date(2026, 5, 6),
        ),  # sums to 0.5
        ([(date(2026, 5, 3), 0.3), (date(2026, 5, 4), 0.19)], [], None),  # 0.49 in: no event of 0.5 inch
        ([(date(2026, 5, 3), 0.3), (date(2026, 5, 5), 0.3)], [], None),  # a dry day between: two small events
        (
            [(date(2026, 5, 3), 0.3), (date(2026, 5, 4), 0.3)],
            [date(2026, 5, 4)],
            date(2026, 5, 5),
        ),  # during: not enough
        ([(date(2026, 5, 3), 0.3), (date(2026, 5, 4), 0.3)], [date(2026, 5, 5)], None),  # within 24 h after the end
    ],
)
def test_rain_inspection_edges(rain, inspected, due):
    got = [
        d.due
        for d in inspections_due(date(2026, 5, 1), inspected, rain, date(2026, 5, 6), PROFILE)
        if d.code == "rain_inspection"
    ]
    assert got == ([due] if due else [])


def test_hourly_event_is_due_24_hours_after_it_ends():
    rain = [(datetime(2026, 5, 3, 22), 0.3), (datetime(2026, 5, 4, 2), 0.3), (datetime(2026, 5, 4, 3), 0.0)]
    got = [
        d for d in inspections_due(date(2026, 5, 1), [], rain, date(2026, 5, 6), PROFILE) if d.code == "rain_inspection"
    ]
    assert [d.due for d in got] == [datetime(2026, 5, 5, 2, tzinfo=CT)]
    # Inspections are recorded by day: one on the day the event ended may have been before its end.
    assert [
        d.code
        for d in inspections_due(date(2026, 5, 1), [date(2026, 5, 4)], rain, date(2026, 5, 6), PROFILE)
        if d.code == "rain_inspection"
    ] == ["rain_inspection"]
    assert not [
        d
        for d in inspections_due(date(2026, 5, 1), [date(2026, 5, 5)], rain, date(2026, 5, 6), PROFILE)
        if d.code == "rain_inspection"
    ]


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
    with pytest.raises(IllegalTransitionError, match="allowed: active, suspended, revoked"):
        check_transition("approved", "closed")
    with pytest.raises(IllegalTransitionError, match="written reasons"):
        check_transition("under_review", "disapproved", reasons="  ")
    check_transition("under_review", "disapproved", reasons="No sediment basin for 2.3 acres (§ 540-7B).")
    with pytest.raises(IllegalTransitionError, match="none"):
        check_transition("closed", "active")
    with pytest.raises(IllegalTransitionError, match="not a permit state"):
        check_transition("approved", "finished")


def test_going_back_restores_the_state_before_from_the_history():
    h = [
        ("imported", None, "extended"),
        ("transition", "extended", "stop_work"),
        ("transition", "stop_work", "revoked"),
    ]
    assert previous_state(h) == "stop_work"
    h.append(("retraction", "revoked", "stop_work"))
    assert previous_state(h) == "extended"  # the order was made on an extended permit: back to extended
    h.append(("retraction", "stop_work", "extended"))
    assert previous_state(h) is None  # imported as extended: nothing before it on record
    assert (
        previous_state(
            [
                ("received", None, "application_received"),
                ("transition", "x", "under_review"),
                ("transition", "under_review", "approved"),
                ("transition", "approved", "suspended"),
                ("reinstatement", "suspended", "approved"),
                ("transition", "approved", "active"),
                ("transition", "active", "suspended"),
            ]
        )
        == "active"
    )


def test_retraction_and_reinstatement_need_written_reasons_from_the_profile():
    needs = {"retraction": "§ 540-12D", "reinstatement": "§ 540-8E", "suspended": "§ 540-8E"}
    assert check_back("revoked", "retraction", "active", reasons="Bond posted.", needs=needs) == "active"
    with pytest.raises(IllegalTransitionError, match=r"written reasons \(§ 540-12D\)"):
        check_back("stop_work", "retraction", "active", reasons=" ", needs=needs)
    with pytest.raises(IllegalTransitionError, match="nothing to undo"):
        check_back("suspended", "retraction", "active", reasons="x", needs=needs)
    with pytest.raises(IllegalTransitionError, match="does not show the state before"):
        check_back("suspended", "reinstatement", None, reasons="x", needs=needs)
    with pytest.raises(IllegalTransitionError, match=r"written reasons \(§ 540-8E\)"):
        check_transition("active", "suspended", needs=needs)
    # Another profile's sections, not Python's, are what the refusal cites.
    with pytest.raises(IllegalTransitionError, match=r"§ 23-7"):
        check_transition("active", "suspended", needs={"suspended": "§ 23-7"})


# --- No ordinance wording in the registry's Python ----------------------------------------------

_ORDINANCE_MARKS = ("§", "540-", "Winneconne", "4,000", "1 acre")


def _literals_citing_the_law(path) -> list[str]:
    """Non-docstring string literals of ``path`` holding a citation, ordinance number or the Village's name."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [
        f"{path.name}:{n.lineno}: {n.value!r}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in docstrings
        and any(m in n.value for m in _ORDINANCE_MARKS)
    ]


def test_registry_and_permits_cli_hold_no_ordinance_wording():
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "esc_gis"
    files = [*sorted((src / "registry").glob("*.py")), src / "cli" / "permits.py"]
    found = [hit for f in files for hit in _literals_citing_the_law(f)]
    assert found == [], "\n".join(found)
