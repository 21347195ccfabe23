"""The one rule for every effective date (issue 34), pure: ``esc_gis.registry.domain.dates``.

Not after today on the Village's clock, not before the event it depends on. The ordinance is
silent on typing mistakes; the rule is the office's, and it matters to the law: § 540-8E(6)
"Conduct construction site inspections at least once per week", and an inspection typed as 2062
for 2026 silenced that duty. The commands that go through it are tested on both back ends in
tests/test_effective_dates.py; these tests are what ``make mutation`` runs against the module.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from esc_gis.registry.domain.dates import DAY_TO_COME, EffectiveDate, date_problems, future_events
from esc_gis.registry.domain.events import HistoryEvent

T = date(2026, 6, 15)
LATER = "is after today on the Village's clock"


def test_today_is_accepted_and_tomorrow_refused_with_the_option_the_day_today_and_the_fix() -> None:
    assert date_problems([EffectiveDate("--paid-on", T)], T) == []
    assert date_problems([EffectiveDate("--paid-on", T + timedelta(days=1))], T) == [
        "--paid-on 2026-06-16 is after today on the Village's clock (2026-06-15): "
        "give the day it happened, on or before 2026-06-15."
    ]
    assert date_problems([EffectiveDate("--paid-on", None)], T) == []  # not given: the caller's to require


def test_not_before_the_event_it_depends_on_the_same_day_being_fine() -> None:
    filed = date(2026, 6, 1)
    assert date_problems([EffectiveDate("--on", filed, filed, "the filing of the appeal")], T) == []
    assert date_problems([EffectiveDate("--on", filed - timedelta(days=1), filed, "the filing of the appeal")], T) == [
        "--on 2026-05-31 is before the filing of the appeal (2026-06-01): "
        "give the day it happened, on or after 2026-06-01."
    ]


def test_every_problem_of_several_dates_at_once() -> None:
    got = date_problems(
        [
            EffectiveDate("--start-notice", date(2062, 1, 1)),
            EffectiveDate("--inspected", date(2026, 1, 1), date(2026, 3, 2), "the application's receipt"),
            EffectiveDate("--work-stopped", T),
        ],
        T,
    )
    assert [m.split(" is ")[0] for m in got] == ["--start-notice 2062-01-01", "--inspected 2026-01-01"]


def test_a_time_is_held_to_the_minute_with_five_minutes_for_clocks_that_differ() -> None:
    now = datetime(2026, 6, 15, 12, 0)
    assert date_problems([EffectiveDate("--at", now + timedelta(minutes=5))], T, now) == []
    assert date_problems([EffectiveDate("--at", now + timedelta(minutes=5, seconds=1))], T, now) == [
        "--at 2026-06-15 12:05 is later than now on the Village's clock (2026-06-15 12:00): give the time it happened."
    ]
    # Tomorrow is after today whatever the minute; a time and a day compare by their days.
    tomorrow = datetime.combine(T + timedelta(days=1), time(0, 1))
    assert date_problems([EffectiveDate("--at", tomorrow)], T, now)[0].startswith(f"--at 2026-06-16 00:01 {LATER}")
    assert date_problems([EffectiveDate("--on", datetime(2026, 6, 1, 8), date(2026, 6, 1), "the receipt")], T) == []


def test_stored_events_after_today_are_found_but_not_an_amendment_taking_effect_later() -> None:
    def ev(kind: str, on: date | None = None, when: datetime | None = None) -> HistoryEvent:
        return HistoryEvent("ESC-1", kind, datetime(2026, 6, 1), "c", on=on, when=when)

    future = [ev("inspection", on=date(2062, 1, 1)), ev("repair", when=datetime(2026, 6, 16, 1))]
    fine = [
        ev("inspection", on=T),
        ev("repair", when=datetime(2026, 6, 15, 23)),
        ev("plan_amendment", on=date(2026, 7, 1)),
    ]
    assert "plan_amendment" in DAY_TO_COME
    assert future_events([*fine, *future], T) == future


def test_a_time_before_the_time_it_follows_is_refused_to_the_minute() -> None:
    inspected = datetime(2026, 6, 8, 9, 0)
    told = EffectiveDate("--notified", inspected - timedelta(minutes=1), inspected, "the inspection")
    assert date_problems([told], T) == [
        "--notified 2026-06-08 08:59 is before the inspection (2026-06-08 09:00): "
        "give the time it happened, on or after 2026-06-08 09:00."
    ]
    assert date_problems([EffectiveDate("--notified", inspected, inspected, "the inspection")], T) == []


def test_a_day_checked_against_two_earlier_events_is_after_today_once() -> None:
    tomorrow = T + timedelta(days=1)
    got = date_problems(
        [
            EffectiveDate("--on", tomorrow, date(2026, 6, 1), "a"),
            EffectiveDate("--on", tomorrow, date(2026, 6, 2), "b"),
        ],
        T,
    )
    assert got == [f"--on 2026-06-16 {LATER} (2026-06-15): give the day it happened, on or before 2026-06-15."]


def test_a_date_not_given_is_skipped_and_the_next_still_checked_and_an_unnamed_event_is_named() -> None:
    assert date_problems([EffectiveDate("--paid-on", None), EffectiveDate("--on", T + timedelta(days=1))], T) == [
        f"--on 2026-06-16 {LATER} (2026-06-15): give the day it happened, on or before 2026-06-15."
    ]
    assert date_problems([EffectiveDate("--on", date(2026, 5, 31), date(2026, 6, 1))], T) == [
        "--on 2026-05-31 is before the event it follows (2026-06-01): give the day it happened, on or after 2026-06-01."
    ]


def test_a_stored_time_is_dated_by_the_villages_day_and_a_stored_day_wins_over_the_time() -> None:
    """A Village clock six hours behind UTC (America/Chicago in winter) puts the stored time 2026-06-16 01:00
    on June 15, today; its own date, June 16, is tomorrow. 07:00 UTC is 01:00 on the 16th there: tomorrow."""

    def ev(on: date | None = None, when: datetime | None = None) -> HistoryEvent:
        return HistoryEvent("ESC-1", "repair", datetime(2026, 6, 1), "c", on=on, when=when)

    def village_day(t: datetime) -> date:
        return (t - timedelta(hours=6)).date()

    late_evening = ev(when=datetime(2026, 6, 16, 1))
    assert future_events([late_evening], T, village_day) == []
    assert future_events([late_evening], T) == [late_evening]  # no day_of: the time's own date
    # A stored day is the effective day, whatever the time; an event with neither is not dated.
    both = ev(on=T, when=datetime(2026, 6, 16, 1))
    assert future_events([both, ev()], T) == []
    assert future_events([ev(when=datetime(2026, 6, 16, 7))], T, village_day) == [ev(when=datetime(2026, 6, 16, 7))]
