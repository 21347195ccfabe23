"""Deadlines pinned on their boundary days (§ 540-7A(2)(f), § 540-7A(4)(d), § 540-8C, § 540-8E, § 540-8G).

Each deadline is checked on the day it falls, the day before and the day after, over both
profiles: the Village's (20 business days, 180-day permits, 0.5 inch of rain, ...) and the
test profile "Town of Example" (10 and 15 business days, 365-day permits, 90-day
extensions, 1 inch of rain, 24-hour notice, 7-day stabilisation). The expected dates are
written by hand from a calendar, per profile.
"""

from __future__ import annotations

import dataclasses
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest

import esc_gis
from esc_gis.errors import ProfileError
from esc_gis.profile import load_profile
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.deadlines import (
    RainEvent,
    decision_due,
    deemed_approved_by,
    expiry,
    guarantee_expiry_due,
    inspections_due,
    pending_decision_due,
    rain_events,
    repair_due,
    stabilization_due,
    start_notice_due,
    stockpile_due,
    weekly_due,
    weekly_record,
)
from esc_gis.registry.domain.fold import Clock

D = date
W = load_profile()
CT = ZoneInfo("America/Chicago")  # the Village's clock (the profile's timezone)
X = load_profile(Path(__file__).parent / "profiles" / "example.toml")
BOTH = pytest.mark.parametrize("prof", [W, X], ids=["winneconne", "example"])
CAL = OfficeCalendar()  # the default holidays: Thanksgiving 2026 is Nov 26, the day after Nov 27


# --- Decision periods (§ 540-8C(1), (4), (5)) ------------------------------------------------


#: § 540-5: a BUSINESS DAY is "a day the office of the administering authority is routinely and
#: customarily open for business". Which days those are is the Village profile's reading
#: ([calendar], basis interpretation); the test profile keeps its deadlines as ordinance.
W_DAYS = ("; § 540-5 BUSINESS DAY", "interpretation")
X_DAYS = ("", "ordinance")


@pytest.mark.parametrize(
    "prof, after, received, due, section, days",
    [
        # Monday Nov 2, 2026 + 20 business days, over Thanksgiving and the day after.
        (W, False, D(2026, 11, 2), D(2026, 12, 2), "§ 540-8C(1)", W_DAYS),
        (W, True, D(2026, 11, 2), D(2026, 12, 2), "§ 540-8C(4)", W_DAYS),
        # Received on a Saturday: the count starts on Monday (day 1).
        (W, False, D(2026, 11, 28), D(2026, 12, 29), "§ 540-8C(1)", W_DAYS),  # Dec 24 and 25 closed
        (X, False, D(2026, 11, 2), D(2026, 11, 16), "§ 23-8C(1)", X_DAYS),  # 10 business days
        (
            X,
            True,
            D(2026, 11, 4),
            D(2026, 11, 25),
            "§ 23-8C(4)",
            X_DAYS,
        ),  # 15 business days: the day before Thanksgiving
        (X, True, D(2026, 11, 5), D(2026, 11, 30), "§ 23-8C(4)", X_DAYS),  # a day later: past the holidays and weekend
    ],
)
def test_decision_due_on_its_day(prof, after: bool, received: date, due: date, section: str, days: tuple) -> None:
    d = decision_due(received, CAL, prof, after_information=after)
    assert (d.due, d.section, d.basis) == (due, section + days[0], days[1])
    assert d.code == ("decision_due_after_information" if after else "decision_due")


def _waiting(start: date | None, information_on: date | None = None) -> SimpleNamespace:
    """The two things of a permit's fold the pending decision reads: its clock and the information day."""
    clock = Clock(start, 1, "application_received") if start is not None else None
    return SimpleNamespace(decision_clock=clock, information_received_on=information_on)


@pytest.mark.parametrize("status", ["application_received", "under_review"])
def test_a_waiting_application_s_decision_is_due_20_business_days_after_its_clock(status: str) -> None:
    # § 540-8C(1): "Within 20 business days of the receipt of a complete permit application".
    # Monday Nov 2, 2026 + 20 business days, over Thanksgiving and the day after: Wednesday Dec 2.
    d = pending_decision_due(status, _waiting(D(2026, 11, 2)), CAL, W)
    assert d is not None
    assert (d.due, d.code, d.section) == (D(2026, 12, 2), "decision_due", "§ 540-8C(1)" + W_DAYS[0])


def test_after_information_the_pending_decision_is_the_8c4_one() -> None:
    # § 540-8C(4): "20 business days from the date the additional information is received".
    # Test profile: 15 business days from Wednesday Nov 4, 2026 is Wednesday Nov 25.
    d = pending_decision_due("under_review", _waiting(D(2026, 11, 4), D(2026, 11, 4)), CAL, X)
    assert d is not None
    assert (d.due, d.code, d.section) == (D(2026, 11, 25), "decision_due_after_information", "§ 23-8C(4)")


@pytest.mark.parametrize(
    "status, state",
    [
        ("incomplete", _waiting(D(2026, 11, 2))),  # waiting for information: no period runs
        ("approved", _waiting(D(2026, 11, 2))),  # decided
        ("application_received", _waiting(None)),  # the application is not complete yet (no fee)
        ("application_received", None),  # no history folded
    ],
)
def test_no_decision_is_pending_unless_waiting_with_a_clock(status: str, state) -> None:
    assert pending_decision_due(status, state, CAL, W) is None
    assert deemed_approved_by(status, state, D(2027, 1, 4), CAL, W) is None


@pytest.mark.parametrize(
    "day, approved",
    [
        (D(2026, 12, 1), None),  # the day before the decision is due
        (D(2026, 12, 2), None),  # the due day: the office may still decide that day
        (D(2026, 12, 3), D(2026, 12, 2)),  # the day after: approved, dated the due day
    ],
)
def test_an_undecided_application_is_deemed_approved_the_day_after_its_due_day(day: date, approved) -> None:
    # § 540-8C(5): "Failure ... to inform the permit applicant of a decision within 20 business
    # days of a required submittal shall be deemed to mean approval of the submittal".
    assert deemed_approved_by("under_review", _waiting(D(2026, 11, 2)), day, CAL, W) == approved


def test_the_business_days_reading_is_said_in_the_decision() -> None:
    d = decision_due(D(2026, 11, 2), CAL, W)
    assert "reading: business days are Monday to Friday except the common Wisconsin municipal holidays" in d.what


# --- Permit validity and extensions (§ 540-8G) ------------------------------------------------


@pytest.mark.parametrize(
    "prof, issued, building, extensions, due",
    [
        (W, D(2026, 3, 1), None, (), D(2026, 8, 28)),  # 180 days
        (W, D(2026, 3, 1), D(2026, 8, 27), (), D(2026, 8, 28)),  # building permit ends a day earlier
        (W, D(2026, 3, 1), D(2026, 8, 28), (), D(2026, 8, 28)),  # the same day
        (W, D(2026, 3, 1), D(2026, 8, 29), (), D(2026, 8, 29)),  # a day later: the longer one
        (W, D(2026, 3, 1), None, (1,), D(2026, 8, 29)),  # the shortest extension
        (W, D(2026, 3, 1), None, (180,), D(2027, 2, 24)),  # the longest one
        (W, D(2026, 3, 1), None, (180, 180), D(2027, 8, 23)),  # "one or more times"
        (W, D(2026, 3, 1), D(2026, 9, 1), (10,), D(2026, 9, 11)),  # extended from the later end
        (X, D(2026, 3, 1), None, (), D(2027, 3, 1)),  # 365 days
        (X, D(2026, 3, 1), None, (90,), D(2027, 5, 30)),
    ],
)
def test_expiry_on_its_day(prof, issued: date, building: date | None, extensions: tuple, due: date) -> None:
    d = expiry(issued, prof, building_permit_expires=building, extensions_days=extensions)
    assert (d.due, d.code) == (due, "permit_expires")


@pytest.mark.parametrize("prof, longest", [(W, 180), (X, 90)], ids=["winneconne", "example"])
@pytest.mark.parametrize("extra", [0, -1, 1])
def test_an_extension_outside_1_to_the_longest_is_refused(prof, longest: int, extra: int) -> None:
    days = {0: 0, -1: -1, 1: longest + 1}[extra]  # zero days, negative days, one day too long
    with pytest.raises(ProfileError) as exc:
        expiry(D(2026, 3, 1), prof, extensions_days=[30, days])
    f = prof.finding("extension_too_long", days=days, extended_days=30)
    assert str(exc.value) == f"{f.message} ({f.section})"
    expiry(D(2026, 3, 1), prof, extensions_days=[longest])  # the longest allowed is fine


# --- Notice of start, stockpiles, temporary stabilisation --------------------------------------


@pytest.mark.parametrize("prof, hours", [(W, 48), (X, 24)], ids=["winneconne", "example"])
def test_start_notice_counts_hours_from_the_start(prof, hours: int) -> None:
    started = datetime(2026, 5, 1, 7, 30)
    d = start_notice_due(started, prof)
    assert d.due == started + timedelta(hours=hours) and d.code == "start_notice"


@BOTH
def test_a_stockpile_needs_control_after_7_days(prof) -> None:
    d = stockpile_due(D(2026, 5, 1), prof)
    assert (d.due, d.code) == (D(2026, 5, 8), "stockpile")
    assert d.what == prof.finding("stockpile", since=D(2026, 5, 1)).message and "2026-05-01" in d.what


@pytest.mark.parametrize(
    "prof, resume, due, code",
    [
        (W, None, D(2026, 5, 1), "temporary_stabilization_unknown_resume"),
        (W, D(2026, 5, 1), D(2026, 5, 15), "temporary_stabilization_pause_overran"),  # resumes the same day
        (W, D(2026, 5, 15), D(2026, 5, 15), "temporary_stabilization_pause_overran"),  # exactly 14 days
        (W, D(2026, 5, 16), D(2026, 5, 1), "temporary_stabilization"),  # 15 days: due when work stops
        (X, D(2026, 5, 8), D(2026, 5, 8), "temporary_stabilization_pause_overran"),  # exactly 7 days
        (X, D(2026, 5, 9), D(2026, 5, 1), "temporary_stabilization"),  # 8 days
    ],
)
def test_temporary_stabilization_on_its_boundary(prof, resume: date | None, due: date, code: str) -> None:
    d = stabilization_due(D(2026, 5, 1), prof, resume_expected=resume)
    assert d is not None and (d.due, d.code) == (due, code)
    f = prof.finding(code, stopped=D(2026, 5, 1), resume_expected=resume)
    assert (d.what, d.section, d.basis) == (f.message, f.section, f.basis)
    assert "2026-05-01" in d.what and (resume is None or resume.isoformat() in d.what)


@pytest.mark.parametrize(
    "resumed, none",
    [(D(2026, 5, 1), True), (D(2026, 5, 2), True), (D(2026, 4, 30), False)],  # the same day resumes; a day before not
)
def test_temporary_stabilization_ends_when_work_resumes_on_or_after_the_stop(resumed: date, none: bool) -> None:
    d = stabilization_due(D(2026, 5, 1), W, resume_expected=D(2026, 5, 20), resumed=resumed)
    assert (d is None) is none


# --- Repairs after an inspection (§ 540-8E(6)) ------------------------------------------------


@pytest.mark.parametrize(
    "notified, start, counted_from",
    [
        (None, datetime(2026, 11, 30, 15, 30, tzinfo=timezone.utc), "inspection"),
        # Notified after the inspection (the next morning): the inspection already started the clock.
        (datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc), datetime(2026, 11, 30, 15, 30, tzinfo=timezone.utc),
         "inspection"),
        # Notified before the inspection's recorded time: the notification started it.
        (datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc), datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc),
         "notification"),
    ],
)  # fmt: skip
@BOTH
def test_a_repair_is_due_24_hours_after_the_inspection_or_notification(prof, notified, start, counted_from) -> None:
    """§ 540-8E(6): "Repair or replace erosion and sediment control BMPs as necessary within 24 hours of an
    inspection or notification that repair or replacement is needed": from whichever came first."""
    inspected = datetime(2026, 11, 30, 15, 30, tzinfo=timezone.utc)
    d = repair_due(inspected, prof, ids=[3, 4], notified_at=notified)
    assert d.due == start + timedelta(hours=24) and d.code == "repair_due"
    shown = f"{prof.local(start):%Y-%m-%d %H:%M %Z}"  # on the office's clock (the machine's without a zone)
    f = prof.finding("repair_due", ids="#3, #4", counted_from=counted_from, from_time=shown)
    assert (d.what, d.section, d.basis) == (f.message, f.section, f.basis)
    assert "#3, #4" in d.what


def test_a_notification_after_the_inspection_does_not_put_the_repair_off() -> None:
    """§ 540-8E(6): "within 24 hours of an inspection or notification that repair or replacement is needed". The
    inspection at 10:00 found the deficiency; the notice at 11:00 does not move the 24 hours to 11:00 the next
    day. The edges: a notice at the inspection's minute is the same start; one a minute before it starts the clock."""
    inspected = datetime(2026, 6, 8, 10, 0, tzinfo=CT)
    later = repair_due(inspected, W, ids=[1], notified_at=inspected + timedelta(hours=1))
    assert later.due == datetime(2026, 6, 9, 10, 0, tzinfo=CT) and "of the inspection at 2026-06-08 10:00" in later.what
    same = repair_due(inspected, W, ids=[1], notified_at=inspected)
    assert same.due == datetime(2026, 6, 9, 10, 0, tzinfo=CT) and "of the inspection" in same.what
    earlier = repair_due(inspected, W, ids=[1], notified_at=inspected - timedelta(minutes=1))
    assert (
        earlier.due == datetime(2026, 6, 9, 9, 59, tzinfo=CT)
        and "of the notification at 2026-06-08 09:59" in earlier.what
    )


@pytest.mark.parametrize(
    "inspection_ids, key",
    [((), ""), ((5,), "inspection:5"), ((5, 3, 5), "inspection:3,5"), ((12, 3), "inspection:3,12")],
)
def test_a_repair_is_keyed_by_its_inspections(inspection_ids: tuple, key: str) -> None:
    # Sorted and once each, as numbers: the key stays while any of the inspections' deficiencies is open.
    d = repair_due(datetime(2026, 11, 30, 15, 30), W, ids=[7, 8], inspection_ids=inspection_ids)
    assert d.key == key and "#7, #8" in d.what


def test_deadlines_without_a_record_have_no_key() -> None:
    assert inspections_due(START, [], [(D(2026, 5, 3), 0.6)], D(2026, 5, 4), W)[0].key == ""
    assert decision_due(D(2026, 11, 2), OfficeCalendar(holidays=frozenset()), W).key == ""


def test_a_repair_time_without_a_zone_is_shown_without_one() -> None:
    d = repair_due(datetime(2026, 11, 30, 15, 30), W, ids=[7])
    assert d.due == datetime(2026, 12, 1, 15, 30)
    # A time without a zone is the office's: shown as typed, with the Village's zone.
    want = W.finding("repair_due", ids="#7", counted_from="inspection", from_time="2026-11-30 15:30 CST").message
    assert d.what == want


def test_a_repair_s_start_is_shown_on_the_village_clock() -> None:
    # 15:30 UTC is 09:30 in Winneconne in November (CST), and 10:30 in June (CDT).
    for at, shown in ((datetime(2026, 11, 30, 15, 30, tzinfo=timezone.utc), "2026-11-30 09:30 CST"),
                      (datetime(2026, 6, 30, 15, 30, tzinfo=timezone.utc), "2026-06-30 10:30 CDT")):  # fmt: skip
        d = repair_due(at, W, ids=[7])
        assert d.what == W.finding("repair_due", ids="#7", counted_from="inspection", from_time=shown).message


# --- Rain events (§ 540-8E(6): "a precipitation event"; a reading) ----------------------------


def test_daily_readings_in_any_order_make_the_same_events() -> None:
    rain = [(D(2026, 5, 2), 0.2), (D(2026, 5, 1), 0.3), (D(2026, 5, 4), 0.0), (D(2026, 5, 3), 0.1)]
    assert rain_events(rain, W) == [RainEvent(D(2026, 5, 1), D(2026, 5, 3), 0.6)]
    assert rain_events([], W) == []
    assert rain_events([(D(2026, 5, 1), 0.0)], W) == []  # a dry day alone is no event


def test_a_missing_day_ends_a_daily_event() -> None:
    got = rain_events([(D(2026, 5, 1), 0.3), (D(2026, 5, 3), 0.3)], W)
    assert got == [RainEvent(D(2026, 5, 1), D(2026, 5, 1), 0.3), RainEvent(D(2026, 5, 3), D(2026, 5, 3), 0.3)]


def test_hundredths_add_up_as_on_paper() -> None:
    # 0.1 + 0.2 + 0.2 is 0.5000000000000001 in floating point; the event is 0.5 inch exactly.
    (ev,) = rain_events([(D(2026, 5, 1), 0.1), (D(2026, 5, 2), 0.2), (D(2026, 5, 3), 0.2)], W)
    assert ev.inches == 0.5


def test_daily_event_ends_at_the_end_of_its_last_wet_day() -> None:
    assert RainEvent(D(2026, 5, 1), D(2026, 5, 2), 0.6).ends_at == datetime(2026, 5, 3)
    assert RainEvent(datetime(2026, 5, 1, 1), datetime(2026, 5, 1, 4), 0.6).ends_at == datetime(2026, 5, 1, 4)


@pytest.mark.parametrize(
    "dry_hours, events",
    [(4, 1), (5, 1), (6, 2), (7, 2)],  # the profile's gap is 6 hours of dry time
)
def test_hourly_readings_join_while_the_dry_time_is_under_the_gap(dry_hours: int, events: int) -> None:
    t0 = datetime(2026, 5, 1, 1)
    wet_again = t0 + timedelta(hours=dry_hours + 1)
    dry = [(t0 + timedelta(hours=k), 0.0) for k in range(1, dry_hours + 1)]  # hourly readings between
    got = rain_events([(t0, 0.3), *dry, (wet_again, 0.3)], W)
    assert len(got) == events
    if events == 1:
        assert got == [RainEvent(t0.replace(tzinfo=CT), wet_again.replace(tzinfo=CT), 0.6)]


def test_half_hourly_readings_are_measured_in_their_own_step() -> None:
    t0 = datetime(2026, 5, 1, 1)
    half = timedelta(minutes=30)
    # Readings every 30 min; wet at 01:00 and 07:00: 11 dry intervals of 30 min = 5.5 h: one event.
    readings = [(t0 + k * half, 0.3 if k in (0, 12) else 0.0) for k in range(13)]
    assert len(rain_events(readings, W)) == 1
    # Wet at 01:00 and 07:30: 6 h of dry time: two events.
    readings = [(t0 + k * half, 0.3 if k in (0, 13) else 0.0) for k in range(14)]
    assert len(rain_events(readings, W)) == 2


def test_a_repeated_timestamp_does_not_shrink_the_reading_interval() -> None:
    # Hourly data with 01:00 given twice: the step is still an hour, so wet at 01:00 and
    # 07:00 are 5 dry hours apart (one event), not 6.
    t0 = datetime(2026, 5, 1, 1)
    readings = [(t0, 0.3), (t0, 0.0), *((t0 + timedelta(hours=k), 0.0) for k in range(1, 6))]
    assert len(rain_events([*readings, (t0 + timedelta(hours=6), 0.3)], W)) == 1


def test_a_deadline_that_is_not_a_number_is_refused() -> None:
    # The loader refuses one in a file; a profile built in code is checked again where it is used.
    e = dataclasses.replace(X.entry("deadlines.decision"), value="ten")
    prof = dataclasses.replace(X, entries={**X.entries, "deadlines.decision": e})
    with pytest.raises(ProfileError) as exc:
        decision_due(D(2026, 11, 2), CAL, prof)
    assert str(exc.value) == "decision in the profile must be a number."


def test_daily_and_timed_readings_are_grouped_separately() -> None:
    got = rain_events([(datetime(2026, 5, 1, 3), 0.2), (D(2026, 5, 1), 0.4)], W)
    assert got == [
        RainEvent(D(2026, 5, 1), D(2026, 5, 1), 0.4),
        RainEvent(datetime(2026, 5, 1, 3, tzinfo=CT), datetime(2026, 5, 1, 3, tzinfo=CT), 0.2),
    ]


# --- Inspections (§ 540-8E(6)) ---------------------------------------------------------------

START = D(2026, 5, 1)


def _due(inspections, rain, today, prof=W):
    return [(d.code, d.due) for d in inspections_due(START, inspections, rain, today, prof)]


@pytest.mark.parametrize(
    "inspections, today, due",
    [
        # The next weekly inspection is listed ahead of its day (calendars need it), on its day, and late.
        ([], START, [D(2026, 5, 8)]),  # the start day: the first is 7 days on
        ([], D(2026, 5, 7), [D(2026, 5, 8)]),  # the day before the first weekly inspection is due
        ([], D(2026, 5, 8), [D(2026, 5, 8)]),  # due exactly today
        ([], D(2026, 5, 9), [D(2026, 5, 8)]),  # overdue
        ([START], D(2026, 5, 8), [D(2026, 5, 8)]),  # an inspection on the start day counts from that day
        ([D(2026, 5, 3)], D(2026, 5, 9), [D(2026, 5, 10)]),  # the last inspection resets the week
        ([D(2026, 5, 3)], D(2026, 5, 10), [D(2026, 5, 10)]),
        ([D(2026, 5, 9)], D(2026, 5, 9), [D(2026, 5, 16)]),  # inspected today: the next is a week on
        ([D(2026, 5, 3), D(2026, 5, 2)], D(2026, 5, 10), [D(2026, 5, 10)]),  # any order: the latest counts
        ([D(2026, 4, 29)], D(2026, 5, 8), [D(2026, 5, 8)]),  # before the start: does not count
    ],
)
def test_weekly_inspection_on_its_day(inspections: list, today: date, due: list) -> None:
    assert _due(inspections, [], today) == [("weekly_inspection", d) for d in due]


@pytest.mark.parametrize(
    "rain, inspections, today, due",
    [
        # Exactly 0.5 in on a day triggers; due by the end of the next day.
        ([(D(2026, 5, 3), 0.5)], [], D(2026, 5, 4), [D(2026, 5, 4)]),
        ([(D(2026, 5, 3), 0.49)], [], D(2026, 5, 4), []),
        # Rain on the start day counts; rain the day before the start does not.
        ([(START, 0.5)], [], D(2026, 5, 2), [D(2026, 5, 2)]),
        ([(D(2026, 4, 30), 0.5)], [], D(2026, 5, 2), []),
        # Rain today: its inspection is due tomorrow, and shown today (the look-ahead).
        ([(D(2026, 5, 5), 0.5)], [], D(2026, 5, 5), [D(2026, 5, 6)]),
        # Rain tomorrow (a forecast in the file) is not yet an event.
        ([(D(2026, 5, 6), 0.5)], [], D(2026, 5, 5), []),
        # Inspected the next day: done. On the day of the rain: it may have been before the
        # rain fell (daily totals have no time), so not done: the safe side.
        ([(D(2026, 5, 3), 0.5)], [D(2026, 5, 4)], D(2026, 5, 6), []),
        ([(D(2026, 5, 3), 0.5)], [D(2026, 5, 3)], D(2026, 5, 6), [D(2026, 5, 4)]),
        # Inspected the day before the rain, or two days after: not done (overdue).
        ([(D(2026, 5, 3), 0.5)], [D(2026, 5, 2)], D(2026, 5, 6), [D(2026, 5, 4)]),
        ([(D(2026, 5, 3), 0.5)], [D(2026, 5, 5)], D(2026, 5, 6), [D(2026, 5, 4)]),
    ],
)
def test_rain_inspection_on_its_day(rain: list, inspections: list, today: date, due: list) -> None:
    got = [d for code, d in _due(inspections, rain, today) if code == "rain_inspection"]
    assert got == due


@pytest.mark.parametrize(
    "end_hour, inspections, today, due",
    [
        # The event ends at 02:00 on May 4: due 02:00 May 5.
        # Station times are the Village's clock (America/Chicago): due 02:00 CDT, 07:00 UTC.
        (2, [], D(2026, 5, 4), [datetime(2026, 5, 5, 2, tzinfo=CT)]),  # ended today: due tomorrow, shown today
        (2, [D(2026, 5, 5)], D(2026, 5, 6), []),  # inspected the next day (a day alone): done
        # A day alone on the end's day may have been before the end: the safe side.
        (2, [D(2026, 5, 4)], D(2026, 5, 6), [datetime(2026, 5, 5, 2, tzinfo=CT)]),
        (2, [D(2026, 5, 6)], D(2026, 5, 6), [datetime(2026, 5, 5, 2, tzinfo=CT)]),  # too late
    ],
)
def test_timed_rain_inspection_on_its_day(end_hour: int, inspections: list, today: date, due: list) -> None:
    rain = [(datetime(2026, 5, 3, 22), 0.3), (datetime(2026, 5, 4, end_hour), 0.3)]
    got = [d for code, d in _due(inspections, rain, today) if code == "rain_inspection"]
    assert got == due


# § 540-8E(6): "Conduct construction site inspections ... within 24 hours after a precipitation
# event of 0.5 inch or greater." Judged by the hour where the rain and the inspection have times.
_ENDS = datetime(2026, 5, 4, 2, 0, tzinfo=CT)  # the last wet reading: 02:00 CDT, 07:00 UTC


@pytest.mark.parametrize(
    "after, met",
    [
        (timedelta(hours=-1), False),  # during the event: not after it
        (timedelta(0), True),  # at its end
        (timedelta(hours=18), True),  # 20:00 the same day: within 24 hours (by the day it was refused)
        (timedelta(hours=24), True),  # exactly 24 hours after
        (timedelta(hours=24, minutes=1), False),  # a minute late
        (timedelta(hours=45), False),  # 23:00 the next day (by the day it was accepted)
    ],
)
def test_an_hourly_events_inspection_is_judged_to_the_minute(after: timedelta, met: bool) -> None:
    rain = [(datetime(2026, 5, 3, 22), 0.3), (datetime(2026, 5, 4, 2), 0.3)]  # the station's clock: the Village's
    at = (_ENDS + after).astimezone(timezone.utc)  # as the registry stores it
    got = [d for code, d in _due([at], rain, D(2026, 5, 7)) if code == "rain_inspection"]
    assert got == ([] if met else [_ENDS + timedelta(hours=24)])


def test_two_timed_storms_in_one_series_each_get_their_own_24_hour_inspection() -> None:
    """§ 540-8E(6): "within 24 hours after a precipitation event of 0.5 inch or greater": each event,
    the first of a series as much as the last, starts and ends at its own first and last wet reading."""
    rain = [
        (datetime(2026, 5, 3, 20), 0.2),  # storm 1: 20:00 to 22:00
        (datetime(2026, 5, 3, 21), 0.2),
        (datetime(2026, 5, 3, 22), 0.2),
        *((datetime(2026, 5, 3, 22) + timedelta(hours=k), 0.0) for k in range(1, 10)),  # 9 dry hours
        (datetime(2026, 5, 4, 8), 0.3),  # storm 2: 08:00 to 10:00
        (datetime(2026, 5, 4, 9), 0.1),
        (datetime(2026, 5, 4, 10), 0.3),
    ]
    assert rain_events(rain, W) == [
        RainEvent(datetime(2026, 5, 3, 20, tzinfo=CT), datetime(2026, 5, 3, 22, tzinfo=CT), 0.6),
        RainEvent(datetime(2026, 5, 4, 8, tzinfo=CT), datetime(2026, 5, 4, 10, tzinfo=CT), 0.7),
    ]
    first, second = datetime(2026, 5, 4, 22, tzinfo=CT), datetime(2026, 5, 5, 10, tzinfo=CT)
    got = [d for code, d in _due([], rain, D(2026, 5, 6)) if code == "rain_inspection"]
    assert got == [first, second]
    dues = [d for d in inspections_due(START, [], rain, D(2026, 5, 6), W) if d.code == "rain_inspection"]
    assert ["2026-05-03 20:00" in d.what and "2026-05-03 22:00" in d.what for d in dues] == [True, False]
    assert ["2026-05-04 08:00" in d.what and "2026-05-04 10:00" in d.what for d in dues] == [False, True]
    # An inspection between the storms (an hour after the first ended) meets the first only.
    between = datetime(2026, 5, 3, 23, tzinfo=CT).astimezone(timezone.utc)
    assert [d for code, d in _due([between], rain, D(2026, 5, 6)) if code == "rain_inspection"] == [second]


def test_24_hours_after_rain_are_24_hours_across_the_change_of_the_clocks() -> None:
    # The event ends 01:30 CDT on 2026-11-01, the night the clocks fall back: 24 hours later is
    # 00:30 CST on 11-02 (06:30 UTC), not 01:30 CST.
    rain = [(datetime(2026, 11, 1, 1, 30), 0.6)]
    got = [d for code, d in _due([], rain, D(2026, 11, 3)) if code == "rain_inspection"]
    assert got == [datetime(2026, 11, 2, 6, 30, tzinfo=timezone.utc)]
    late = datetime(2026, 11, 2, 7, 0, tzinfo=timezone.utc)  # 01:00 CST: 24.5 hours after
    assert [c for c, _ in _due([late], rain, D(2026, 11, 3)) if c == "rain_inspection"] == ["rain_inspection"]


def test_daily_drizzle_does_not_stretch_a_storm_into_a_ten_day_event() -> None:
    # A 1-inch storm on May 3, then nine days of drizzle (0.05 in, under the profile's wet day of
    # 0.1 in): the event is the storm's day (with the next day's tail of rain), and its inspection is
    # due by the end of May 4.
    rain = [(D(2026, 5, 3), 1.0), *((D(2026, 5, 3) + timedelta(days=k), 0.05) for k in range(1, 10))]
    assert rain_events(rain, W) == [RainEvent(D(2026, 5, 3), D(2026, 5, 3), 1.05)]
    assert [d for c, d in _due([], rain, D(2026, 5, 13)) if c == "rain_inspection"] == [D(2026, 5, 4)]
    # A trace (NOAA's T) ends an event too.
    assert rain_events([(D(2026, 5, 3), 0.3), (D(2026, 5, 4), 1e-9), (D(2026, 5, 5), 0.3)], W) == [
        RainEvent(D(2026, 5, 3), D(2026, 5, 3), 0.3),
        RainEvent(D(2026, 5, 5), D(2026, 5, 5), 0.3),
    ]


@pytest.mark.parametrize(
    "second_day, events",
    [
        (0.1, [RainEvent(D(2026, 5, 3), D(2026, 5, 4), 0.55)]),  # exactly the wet day: joins, and 0.55 in triggers
        # Under it: not a wet day, but a storm across midnight is still 0.54 in, over the 0.5 inch of
        # § 540-8E(6) ("within 24 hours after a precipitation event of 0.5 inch or greater"), and it is
        # that day's rain that brings it there: the event ends on it.
        (0.09, [RainEvent(D(2026, 5, 3), D(2026, 5, 4), 0.54)]),
    ],
)
def test_a_day_joins_an_event_at_the_profiles_wet_day(second_day: float, events: list) -> None:
    assert rain_events([(D(2026, 5, 3), 0.45), (D(2026, 5, 4), second_day)], W) == events
    assert W.entry("policy.rain_wet_day").extra["basis"] == "interpretation"


def test_a_small_day_counts_toward_one_event_only_and_never_joins_two() -> None:
    # Before a run: its rain counts, the event starts on the wet day.
    assert rain_events([(D(2026, 5, 2), 0.09), (D(2026, 5, 3), 0.45)], W) == [
        RainEvent(D(2026, 5, 3), D(2026, 5, 3), 0.54)
    ]
    # Between two runs a day apart from each other (two small days): it counts toward the first only.
    rain = [(D(2026, 5, 3), 0.3), (D(2026, 5, 4), 0.05), (D(2026, 5, 5), 0.05), (D(2026, 5, 6), 0.3)]
    assert rain_events(rain, W) == [
        RainEvent(D(2026, 5, 3), D(2026, 5, 3), 0.35),
        RainEvent(D(2026, 5, 6), D(2026, 5, 6), 0.35),
    ]
    # A small day a day apart from any run counts toward none.
    assert rain_events([(D(2026, 5, 1), 0.09), (D(2026, 5, 3), 0.45)], W) == [
        RainEvent(D(2026, 5, 3), D(2026, 5, 3), 0.45)
    ]


def test_a_small_day_of_measurable_rain_between_two_wet_days_is_part_of_the_storm() -> None:
    """§ 540-8E(6): "within 24 hours after a precipitation event of 0.5 inch or greater". 0.26, 0.07 and 0.28 in
    on three consecutive days are one storm of 0.61 in, its inspection due by the end of the day after the
    last: the 0.07 in day (measurable, NWS: 0.01 inch or more; the profile's policy.rain_measurable, a reading,
    basis interpretation) does not split it into two events each under 0.5 in."""
    rain = [(D(2026, 5, 3), 0.26), (D(2026, 5, 4), 0.07), (D(2026, 5, 5), 0.28)]
    assert rain_events(rain, W) == [RainEvent(D(2026, 5, 3), D(2026, 5, 5), 0.61)]
    assert [d for c, d in _due([], rain, D(2026, 5, 13)) if c == "rain_inspection"] == [D(2026, 5, 6)]
    e = W.entry("policy.rain_measurable")
    assert (e.value, e.extra["basis"]) == (0.01, "interpretation")
    assert "NWS 0.01 in" in e.section  # the number's source, kept with the reading
    # The edges: exactly measurable (0.01 in) joins; under it (a trace) ends the event, as a dry day does.
    assert rain_events([(D(2026, 5, 3), 0.26), (D(2026, 5, 4), 0.01), (D(2026, 5, 5), 0.28)], W) == [
        RainEvent(D(2026, 5, 3), D(2026, 5, 5), 0.55)
    ]
    for lull in (0.009, 0.0):
        assert rain_events([(D(2026, 5, 3), 0.26), (D(2026, 5, 4), lull), (D(2026, 5, 5), 0.28)], W) == [
            RainEvent(D(2026, 5, 3), D(2026, 5, 3), round(0.26 + lull, 6)),
            RainEvent(D(2026, 5, 5), D(2026, 5, 5), 0.28),
        ]
    # Absence: a small day after the storm with no wet day after it is its tail, never its day.
    assert rain_events([(D(2026, 5, 3), 0.26), (D(2026, 5, 4), 0.07), (D(2026, 5, 5), 0.05)], W) == [
        RainEvent(D(2026, 5, 3), D(2026, 5, 3), 0.33)
    ]
    # A missing day next to the small one: no wet day on that side, so nothing is bridged.
    assert rain_events([(D(2026, 5, 3), 0.26), (D(2026, 5, 4), 0.07), (D(2026, 5, 6), 0.28)], W) == [
        RainEvent(D(2026, 5, 3), D(2026, 5, 3), 0.33),
        RainEvent(D(2026, 5, 6), D(2026, 5, 6), 0.28),
    ]


def test_a_storm_of_the_trigger_is_not_bridged_into_the_rain_that_follows() -> None:
    """§ 540-8E(6): "within 24 hours after a precipitation event of 0.5 inch or greater". 0.6 in on May 3,
    then 0.05, 0.3, 0.05, 0.3, 0.05 and 0.3 in: the May 3 storm has reached 0.5 in on its day, so it ends
    there (with its 0.05 in tail, 0.65 in) and its inspection is due by the end of May 4, not put off to
    May 10 by bridging the small days into one 1.65 in event from May 3 to May 9. The days after it are
    bridged only while their own event is under 0.5 in: 0.3 + 0.05 + 0.3 (May 5-7, with the May 8 tail,
    0.7 in) is one event, due by the end of May 8; May 9's 0.3 in is its own, under the trigger."""
    rain = [(D(2026, 5, 3) + timedelta(days=k), v) for k, v in enumerate((0.6, 0.05, 0.3, 0.05, 0.3, 0.05, 0.3))]
    assert rain_events(rain, W) == [
        RainEvent(D(2026, 5, 3), D(2026, 5, 3), 0.65),
        RainEvent(D(2026, 5, 5), D(2026, 5, 7), 0.7),
        RainEvent(D(2026, 5, 9), D(2026, 5, 9), 0.3),
    ]
    assert [d for c, d in _due([], rain, D(2026, 5, 13)) if c == "rain_inspection"] == [D(2026, 5, 4), D(2026, 5, 8)]
    # The edge: an event exactly at the trigger (0.26 + 0.24 = 0.5 in) has reached it, so the next small
    # day ends it; just under (0.49 in) it is still bridged.
    assert rain_events([(D(2026, 5, 3), 0.26), (D(2026, 5, 4), 0.24), (D(2026, 5, 5), 0.05), (D(2026, 5, 6), 0.2)],
                       W) == [RainEvent(D(2026, 5, 3), D(2026, 5, 4), 0.55), RainEvent(D(2026, 5, 6), D(2026, 5, 6), 0.2)]  # fmt: skip
    assert rain_events([(D(2026, 5, 3), 0.26), (D(2026, 5, 4), 0.23), (D(2026, 5, 5), 0.05), (D(2026, 5, 6), 0.2)],
                       W) == [RainEvent(D(2026, 5, 3), D(2026, 5, 6), 0.74)]  # fmt: skip
    # A small lead-in counts toward the event so far: 0.09 + 0.45 in is 0.54 in, so May 4's 0.05 in ends it.
    assert rain_events([(D(2026, 5, 2), 0.09), (D(2026, 5, 3), 0.45), (D(2026, 5, 4), 0.05), (D(2026, 5, 5), 0.3)],
                       W) == [RainEvent(D(2026, 5, 3), D(2026, 5, 3), 0.59), RainEvent(D(2026, 5, 5), D(2026, 5, 5), 0.3)]  # fmt: skip
    # Each profile's trigger: the Town's is 1 inch, so 0.6 in is still under it and the lull is bridged.
    assert rain_events(rain[:3], X) == [RainEvent(D(2026, 5, 3), D(2026, 5, 5), 0.95)]


def test_a_run_counts_both_its_small_lead_in_and_its_small_tail() -> None:
    # 0.09 in on May 1 (under the wet day of 0.1 in), 0.2 and 0.2 on May 2 and 3, 0.09 on May 4:
    # the event is May 2-3 and its rain 0.09 + 0.2 + 0.2 + 0.09 = 0.58 in, over the 0.5 inch of
    # § 540-8E(6) ("a precipitation event of 0.5 inch or greater"), though its wet days alone
    # (0.4 in) are not.
    # (0.4 in) are not. The tail's 0.09 in takes it from 0.49 in to 0.58 in: it ends on the tail's day.
    rain = [(D(2026, 5, 1), 0.09), (D(2026, 5, 2), 0.2), (D(2026, 5, 3), 0.2), (D(2026, 5, 4), 0.09)]
    assert rain_events(rain, W) == [RainEvent(D(2026, 5, 2), D(2026, 5, 4), 0.58)]


def test_an_event_that_reaches_the_trigger_on_its_small_tail_ends_on_the_tail_day() -> None:
    """§ 540-8E(6): "within 24 hours after a precipitation event of 0.5 inch or greater". 0.45 in on May 4 and
    0.09 in on May 5 are one 0.54 in event, but it was not "of 0.5 inch or greater" until May 5's rain fell:
    its 24 hours run from the end of May 5, so the inspection is due by the end of May 6, and one on May 6
    meets it (it is not listed as missed)."""
    rain = [(D(2026, 5, 4), 0.45), (D(2026, 5, 5), 0.09)]
    assert rain_events(rain, W) == [RainEvent(D(2026, 5, 4), D(2026, 5, 5), 0.54)]
    assert [d for c, d in _due([], rain, D(2026, 5, 13)) if c == "rain_inspection"] == [D(2026, 5, 6)]
    assert [c for c, _ in _due([D(2026, 5, 6)], rain, D(2026, 5, 13)) if c == "rain_inspection"] == []
    # The edge: 0.49 in, then 0.01 in reaches exactly 0.5 in on the tail day; the event ends there.
    assert rain_events([(D(2026, 5, 4), 0.49), (D(2026, 5, 5), 0.01)], W) == [
        RainEvent(D(2026, 5, 4), D(2026, 5, 5), 0.5)
    ]
    # Absence: a storm that reached 0.5 in on its own day ends there, whatever its tail adds (0.5 + 0.05),
    # and a tail that leaves the event under the trigger (0.49 + 0.009) moves nothing.
    assert rain_events([(D(2026, 5, 4), 0.5), (D(2026, 5, 5), 0.05)], W) == [
        RainEvent(D(2026, 5, 4), D(2026, 5, 4), 0.55)
    ]
    assert rain_events([(D(2026, 5, 4), 0.49), (D(2026, 5, 5), 0.009)], W) == [
        RainEvent(D(2026, 5, 4), D(2026, 5, 4), 0.499)
    ]
    # A lead-in that already brought the event to the trigger leaves the tail where it was (0.09 + 0.45 + 0.05).
    assert rain_events([(D(2026, 5, 3), 0.09), (D(2026, 5, 4), 0.45), (D(2026, 5, 5), 0.05)], W) == [
        RainEvent(D(2026, 5, 4), D(2026, 5, 4), 0.59)
    ]


def test_timed_readings_do_not_need_the_daily_wet_day() -> None:
    # The wet day is a reading of daily data only: a profile that leaves it out (it is not a
    # required entry) still groups hourly readings, by its 6-hour gap.
    entries = {k: v for k, v in W.entries.items() if k != "policy.rain_wet_day"}
    hourly = dataclasses.replace(W, entries=entries)
    t = datetime(2026, 7, 1, 10, tzinfo=CT)
    got = rain_events([(t, 0.3), (t + timedelta(hours=1), 0.3)], hourly)
    assert [(e.start, e.end, e.inches) for e in got] == [(t, t + timedelta(hours=1), 0.6)]


def test_the_rain_trigger_is_each_profiles() -> None:
    rain = [(D(2026, 5, 3), 0.99)]

    def after_rain(rain: list, prof: object) -> list:
        return [c for c, _ in _due([], rain, D(2026, 5, 4), prof) if c != "weekly_inspection"]

    assert after_rain(rain, W) == ["rain_inspection"]
    assert after_rain(rain, X) == []  # the Town's trigger is 1 inch
    assert after_rain([(D(2026, 5, 3), 1.0)], X) == ["rain_inspection"]


def test_inspections_are_listed_by_day_then_by_name() -> None:
    rain = [(D(2026, 5, 7), 0.6), (D(2026, 5, 8), 0.0), (D(2026, 5, 10), 0.7)]
    got = inspections_due(START, [], rain, D(2026, 5, 12), W)
    assert [(d.code, d.due) for d in got] == [
        ("rain_inspection", D(2026, 5, 8)),
        ("weekly_inspection", D(2026, 5, 8)),
        ("rain_inspection", D(2026, 5, 11)),
    ]
    assert got[0].what < got[1].what  # the same day: in the order of their wording


@BOTH
@pytest.mark.parametrize("balance", [None, 0.01, 2500.0])
def test_a_letter_of_credit_is_due_on_its_expiry_day(prof, balance: float | None) -> None:
    d = guarantee_expiry_due(date(2027, 3, 31), prof, guarantee_id=4, amount=2500.0, balance=balance)
    assert d is not None and d.due == date(2027, 3, 31) and d.code == "guarantee_expiry"
    assert d.section == prof.finding("guarantee_expiry", guarantee_id=4, amount="2,500.00").section
    assert "#4" in d.what and "2,500.00" in d.what and d.basis == "interpretation"
    # The guarantee is the deadline's key: two letters of credit expiring one day are two deadlines.
    assert d.key == "guarantee:4"


@pytest.mark.parametrize(
    "expires, balance", [(None, None), (None, 100.0), (date(2027, 3, 31), 0.0), (date(2027, 3, 31), -1.0)]
)
def test_no_expiry_or_nothing_left_is_no_deadline(expires: date | None, balance: float | None) -> None:
    assert guarantee_expiry_due(expires, W, guarantee_id=1, amount=100.0, balance=balance) is None


# --- Readings the profile switches (basis interpretation) --------------------------------------

VILLAGE_TOML = Path(esc_gis.__file__).parent / "profiles" / "winneconne.toml"


def _switched(tmp_path_factory, *swaps: tuple[str, str]):
    """The Village's profile with lines swapped, loaded from a file as a user's would be."""
    text = VILLAGE_TOML.read_text(encoding="utf-8")
    for old, new in swaps:
        assert old in text, old
        text = text.replace(old, new)
    f = tmp_path_factory.mktemp("profile") / "village.toml"
    f.write_text(text, encoding="utf-8")
    return load_profile(f)


@pytest.fixture(scope="module")
def total(tmp_path_factory):
    return _switched(tmp_path_factory, ('reading = "per_extension"', 'reading = "total"'))


@pytest.fixture(scope="module")
def calendar_week(tmp_path_factory):
    return _switched(tmp_path_factory, ('reading = "rolling_7_days"', 'reading = "calendar_week"'))


@pytest.fixture(scope="module")
def monday_weeks(tmp_path_factory):
    return _switched(
        tmp_path_factory,
        ('reading = "rolling_7_days"', 'reading = "calendar_week"'),
        ('week_starts = "sunday"', 'week_starts = "Monday"'),
    )


def test_the_length_of_the_building_permit_is_read_as_its_end_date_and_labelled() -> None:
    """§ 540-8G: "valid for a period of 180 days, or the length of the building permit or other construction
    authorizations, whichever is longer, from the date of issuance". The building permit's "length" is read as
    the day it ends (issue 34): the reading is labelled in the profile and said with the expiry."""
    assert W.entry("deadlines.permit_validity").extra["basis"] == "interpretation"
    summary = W.entry("deadlines.permit_validity").summary
    assert "the building permit's length is the day it ends" in summary
    # The text's whole alternative is said, not the building permit alone.
    assert "the length of the building permit or other construction authorizations, whichever is longer" in summary
    # The edge: a building permit ending on the 180th day changes nothing; one ending a day later governs.
    assert expiry(D(2026, 3, 1), W, building_permit_expires=D(2026, 8, 28)).due == D(2026, 8, 28)
    d = expiry(D(2026, 3, 1), W, building_permit_expires=D(2026, 8, 29))
    assert (d.due, d.basis) == (D(2026, 8, 29), "interpretation")
    assert "a building permit's length is read as the day it ends" in d.what


def test_the_villages_readings_are_labelled_as_readings() -> None:
    # The text: § 540-8G "may extend the period one or more times for up to an additional 180
    # days"; § 540-8E(6) "at least once per week". Neither says which: both are readings.
    assert W.reading("deadlines.permit_extension") == "per_extension"
    assert W.reading("deadlines.inspection_interval") == "rolling_7_days"
    for key in ("deadlines.permit_extension", "deadlines.inspection_interval"):
        assert W.entry(key).extra["basis"] == "interpretation"
    for code in ("permit_expires", "extension_too_long", "weekly_inspection"):
        assert W.template(code).basis == "interpretation", code
    assert expiry(D(2026, 3, 1), W).what == (
        "permit expires (extend it; reading: each extension is up to 180 days, one or more times; a building "
        "permit's length is read as the day it ends)"
    )
    weekly = inspections_due(START, [], [], START, W)[0]
    assert (weekly.basis, weekly.section) == ("interpretation", "§ 540-8E(6)")
    assert weekly.what == (
        "weekly inspection (at least once per week; reading: within 7 days of the last inspection, or of the start)"
    )


@pytest.mark.parametrize(
    "extensions, due",
    [
        ((1,), D(2026, 8, 29)),
        ((180,), D(2027, 2, 24)),  # "up to an additional 180 days": all of it at once
        ((90, 90), D(2027, 2, 24)),  # or in two: together exactly 180
        ((179, 1), D(2027, 2, 24)),
    ],
)
def test_extensions_in_total_up_to_180_days(total, extensions: tuple, due: date) -> None:
    # § 540-8G "one or more times for up to an additional 180 days", read as 180 days in all.
    d = expiry(D(2026, 3, 1), total, extensions_days=extensions)
    assert (d.due, d.basis) == (due, "interpretation")
    assert d.what == (
        "permit expires (extend it; reading: all extensions together add up to 180 days at most; a building permit's "
        "length is read as the day it ends)"
    )


@pytest.mark.parametrize("extensions, refused, before", [((180, 1), 1, 180), ((90, 91), 91, 90), ((181,), 181, 0)])
def test_extensions_past_180_days_in_total_are_refused(total, extensions: tuple, refused: int, before: int) -> None:
    with pytest.raises(ProfileError) as exc:
        expiry(D(2026, 3, 1), total, extensions_days=extensions)
    assert str(exc.value) == (
        f"An extension of {refused} days is not allowed after {before} days of extensions (reading: all extensions "
        "together add up to 180 days at most). (§ 540-8G)"
    )


def test_per_extension_each_may_be_180_days_however_many_came_before() -> None:
    # § 540-8G read per extension: "one or more times", each "up to an additional 180 days".
    assert expiry(D(2026, 3, 1), W, extensions_days=(180, 180, 180)).due == D(2028, 2, 19)
    with pytest.raises(ProfileError, match="An extension of 181 days is not allowed after 360 days of extensions"):
        expiry(D(2026, 3, 1), W, extensions_days=(180, 180, 181))


# START is Friday May 1, 2026; with weeks from Sunday its week is Sunday Apr 26 to Saturday May 2.
@pytest.mark.parametrize(
    "inspections, today, due",
    [
        ([], START, D(2026, 5, 2)),  # the start's own week needs an inspection, by its Saturday
        ([], D(2026, 5, 3), D(2026, 5, 2)),  # overdue the next day
        ([START], START, D(2026, 5, 9)),  # inspected in the start's week: due by the next week's end
        ([D(2026, 5, 2)], D(2026, 5, 2), D(2026, 5, 9)),  # the week's last day still counts for it
        ([D(2026, 5, 3)], D(2026, 5, 3), D(2026, 5, 16)),  # a day later is the next week: due the week after
        ([D(2026, 5, 9)], D(2026, 5, 10), D(2026, 5, 16)),
        ([D(2026, 5, 10)], D(2026, 5, 10), D(2026, 5, 23)),
        ([D(2026, 4, 30)], START, D(2026, 5, 2)),  # before the start: does not count
    ],
)
def test_calendar_week_inspections_on_their_day(calendar_week, inspections: list, today: date, due: date) -> None:
    # § 540-8E(6) "Conduct construction site inspections at least once per week", read as every
    # calendar week in which work goes on.
    got = inspections_due(START, inspections, [], today, calendar_week)
    assert [(d.code, d.due, d.basis) for d in got] == [("weekly_inspection", due, "interpretation")]
    assert got[0].what == (
        "weekly inspection (at least once per week; reading: in every calendar week (Sunday to Saturday) in which "
        "work goes on)"
    )


@pytest.mark.parametrize(
    "started, last, due",
    [
        (D(2026, 5, 1), None, D(2026, 5, 3)),  # Friday: the week Monday Apr 27 to Sunday May 3
        (D(2026, 5, 3), None, D(2026, 5, 3)),  # started on the week's last day: due that day
        (D(2026, 5, 4), None, D(2026, 5, 10)),  # the next Monday: a new week
        (D(2026, 5, 1), D(2026, 5, 3), D(2026, 5, 10)),
        (D(2026, 5, 1), D(2026, 5, 4), D(2026, 5, 17)),
    ],
)
def test_calendar_weeks_start_on_the_profiles_day(monday_weeks, started: date, last, due: date) -> None:
    assert weekly_due(started, last, monday_weeks) == due


@pytest.mark.parametrize(
    "started, last, due",
    [(D(2026, 5, 1), None, D(2026, 5, 8)), (D(2026, 5, 1), D(2026, 5, 3), D(2026, 5, 10))],
)
def test_rolling_weeks_count_7_days(started: date, last, due: date) -> None:
    assert weekly_due(started, last, W) == due


@pytest.mark.parametrize(
    "inspections, first, last, record",
    [
        # Week ends May 2, 9, 16, 23. Inspected May 2 and May 12; May 9 and 23 missed.
        ([D(2026, 5, 2), D(2026, 5, 12)], START, D(2026, 5, 23), [(2, True), (9, False), (16, True), (23, False)]),
        ([START], START, D(2026, 5, 8), [(2, True)]),  # the start day counts for its week
        ([D(2026, 4, 30)], START, D(2026, 5, 2), [(2, False)]),  # before the start: does not
        ([D(2026, 5, 3)], D(2026, 5, 3), D(2026, 5, 16), [(9, True), (16, False)]),  # only deadlines in the period
        ([], START, D(2026, 5, 1), []),  # the first week's end not reached
        ([D(2026, 5, 9)], D(2026, 5, 9), D(2026, 5, 9), [(9, True)]),  # a deadline on the period's first day is in it
    ],
)
def test_the_calendar_week_record_of_a_period(calendar_week, inspections, first, last, record) -> None:
    got = weekly_record(START, inspections, first, last, calendar_week)
    assert got == [(D(2026, 5, day), met) for day, met in record]


@pytest.mark.parametrize(
    "inspections, last, record",
    [
        ([], D(2026, 5, 21), [(8, False), (15, False)]),  # a week more without one is a second miss
        ([D(2026, 5, 8)], D(2026, 5, 15), [(8, True), (15, False)]),  # met on its day; the next not
        ([D(2026, 5, 10)], D(2026, 5, 17), [(8, False), (17, False)]),  # late: the clock restarts from May 10
        ([D(2026, 5, 6), D(2026, 5, 12)], D(2026, 5, 18), [(8, True), (13, True)]),  # early: a week from each
        # Late by exactly a week (May 15 is "within the following week"): the clock restarts from May 15,
        # so no deadline falls on May 15 itself.
        ([D(2026, 5, 15)], D(2026, 5, 22), [(8, False), (22, False)]),
    ],
)
def test_the_rolling_record_of_a_period(inspections, last, record) -> None:
    assert weekly_record(START, inspections, START, last, W) == [(D(2026, 5, day), met) for day, met in record]


def test_a_rolling_deadline_on_the_periods_first_day_is_in_it() -> None:
    assert weekly_record(START, [], D(2026, 5, 8), D(2026, 5, 8), W) == [(D(2026, 5, 8), False)]


# Wednesday May 6, 2026 lies in a different calendar week for each day a week may start on.
@pytest.mark.parametrize(
    "week_starts, week_end",
    [
        ('"Monday"', D(2026, 5, 10)),
        ('"tuesday"', D(2026, 5, 11)),
        ('"WED"', D(2026, 5, 12)),
        ('"thursday"', D(2026, 5, 6)),
        ('"Friday"', D(2026, 5, 7)),
        ('"saturday"', D(2026, 5, 8)),
        ('"sunday"', D(2026, 5, 9)),
        (None, D(2026, 5, 9)),  # not given: weeks start on Sunday
    ],
)
def test_a_calendar_week_ends_the_day_before_the_profiles_week_starts(tmp_path_factory, week_starts, week_end) -> None:
    # § 540-8E(6) "at least once per week": the first week is the start's, due by its last day.
    start_line = "" if week_starts is None else f"week_starts = {week_starts}"
    prof = _switched(
        tmp_path_factory,
        ('reading = "rolling_7_days"', 'reading = "calendar_week"'),
        ('week_starts = "sunday"', start_line),
    )
    assert weekly_due(D(2026, 5, 6), None, prof) == week_end


@pytest.mark.parametrize(
    "swap, problem",
    [
        (('reading = "rolling_7_days"', 'reading = "fortnightly"'), "reading 'fortnightly' is not one of"),
        (('reading = "per_extension"', 'reading = "each"'), "reading 'each' is not one of per_extension, total"),
        (('week_starts = "sunday"', 'week_starts = "someday"'), "week_starts 'someday' is not a day name"),
        (("readings = { per_extension =", "readings = { each ="), "readings must be a table of per_extension, total"),
        (('readings = { rolling_7_days = "within', 'readings = { rolling_7_days = " ", x = "within'), "readings must"),
        (('basis = "interpretation"\nsummary = "Inspect', 'basis = "reading"\nsummary = "Inspect'), "basis 'reading'"),
    ],
)
def test_a_bad_reading_is_refused_when_the_profile_loads(tmp_path_factory, swap, problem: str) -> None:
    with pytest.raises(ProfileError) as exc:
        _switched(tmp_path_factory, swap)
    assert problem in str(exc.value)


def test_a_timed_readings_time_is_on_the_village_clock() -> None:
    # 15:00 UTC on July 1 is 10:00 in Winneconne (CDT, five hours behind): the event is the Village's.
    got = rain_events([(datetime(2026, 7, 1, 15, tzinfo=timezone.utc), 0.6)], W)
    assert [(e.start, e.start.utcoffset()) for e in got] == [
        (datetime(2026, 7, 1, 10, tzinfo=ZoneInfo("America/Chicago")), timedelta(hours=-5))
    ]


def test_readings_in_the_hour_the_clocks_repeat_are_ordered_by_the_instant() -> None:
    # On 2026-11-01 the clocks fall back: 01:30 CDT (06:30 UTC) comes before 01:15 CST (07:15 UTC),
    # though its wall-clock time is later. The event starts at the earlier instant.
    first, then = datetime(2026, 11, 1, 6, 30, tzinfo=timezone.utc), datetime(2026, 11, 1, 7, 15, tzinfo=timezone.utc)
    got = rain_events([(then, 0.3), (first, 0.3)], W)
    assert [(e.start.astimezone(timezone.utc), e.end.astimezone(timezone.utc), e.inches) for e in got] == [
        (first, then, 0.6)
    ]


def test_without_a_profile_time_zone_a_naive_reading_is_on_this_machines_clock() -> None:
    # A profile that names no time zone reads a station's naive time as this machine's, made aware
    # so it compares with the inspections' times.
    local = dataclasses.replace(W, timezone=None)
    t = datetime(2026, 7, 1, 10)
    assert [e.start for e in rain_events([(t, 0.6)], local)] == [t.astimezone()]
    assert all(e.start.tzinfo is not None for e in rain_events([(t, 0.6)], local))
