"""The office calendar pinned to dates written by hand (§ 540-8C's "business days").

Every expected date here was read off a printed calendar, not computed by the code under
test: a wrong holiday rule (Labor Day on the second Monday, Thanksgiving on the fourth
Thursday counted from the wrong day, a Saturday holiday observed on Monday) fails here.
"""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta
from pathlib import Path

import pytest

import esc_gis
from esc_gis.errors import ProfileError
from esc_gis.profile import load_profile
from esc_gis.registry.domain.calendar import OfficeCalendar, default_holidays, load_calendar, profile_calendar

D = date


@pytest.fixture(autouse=True)
def _fresh_holidays() -> None:
    # default_holidays is cached: computed afresh here, so each test checks the rules
    # themselves, not what an earlier test left in the cache.
    default_holidays.cache_clear()


#: The default holidays, as observed, year by year (New Year's Day, Memorial Day, July 4,
#: Labor Day, Thanksgiving and the day after, December 24 and 25). Years chosen so that
#: November 1 falls on a Sunday (2026), Monday (2027), Wednesday (2028) and Thursday (2029),
#: and July 4, December 24 and 25 fall on weekends in some of them.
HOLIDAYS = {
    2026: {
        D(2026, 1, 1),
        D(2026, 5, 25),
        D(2026, 7, 3),
        D(2026, 9, 7),
        D(2026, 11, 26),
        D(2026, 11, 27),
        D(2026, 12, 24),
        D(2026, 12, 25),
    },
    # July 4 on a Sunday -> Monday 5; Dec 25 on a Saturday -> Friday 24, the day Dec 24 is: two holidays stay
    # two closed days, so Dec 24 is observed the weekday before, Thursday 23 (issue 46).
    2027: {
        D(2027, 1, 1),
        D(2027, 5, 31),
        D(2027, 7, 5),
        D(2027, 9, 6),
        D(2027, 11, 25),
        D(2027, 11, 26),
        D(2027, 12, 23),
        D(2027, 12, 24),
    },
    # January 1 on a Saturday -> Friday, December 31 of 2027; Dec 24 on a Sunday -> Monday 25, the day of
    # Dec 25 itself: Dec 24 is observed the weekday before, Friday 22.
    2028: {
        D(2027, 12, 31),
        D(2028, 5, 29),
        D(2028, 7, 4),
        D(2028, 9, 4),
        D(2028, 11, 23),
        D(2028, 11, 24),
        D(2028, 12, 22),
        D(2028, 12, 25),
    },
    2029: {
        D(2029, 1, 1),
        D(2029, 5, 28),
        D(2029, 7, 4),
        D(2029, 9, 3),
        D(2029, 11, 22),
        D(2029, 11, 23),
        D(2029, 12, 24),
        D(2029, 12, 25),
    },
    # January 1 on a Saturday -> Friday, December 31 of 2032; November 1 on a Tuesday;
    # Dec 24 on a Saturday -> Friday 23, Dec 25 on a Sunday -> Monday 26.
    2033: {
        D(2032, 12, 31),
        D(2033, 5, 30),
        D(2033, 7, 4),
        D(2033, 9, 5),
        D(2033, 11, 24),
        D(2033, 11, 25),
        D(2033, 12, 23),
        D(2033, 12, 26),
    },
}


@pytest.mark.parametrize("year", sorted(HOLIDAYS))
def test_default_holidays_match_a_printed_calendar(year: int) -> None:
    assert default_holidays(year) == HOLIDAYS[year]


@pytest.mark.parametrize(
    "year, month, weekday, n, expected",
    [
        (2026, 2, 6, -1, D(2026, 2, 22)),  # last Sunday of a month ending on a Saturday
        (2026, 2, 4, -1, D(2026, 2, 27)),  # last Friday
        (2026, 12, 3, -1, D(2026, 12, 31)),  # last Thursday of December: the month's last day
        (2028, 2, 1, -1, D(2028, 2, 29)),  # a leap day
        (2026, 11, 3, 1, D(2026, 11, 5)),  # first Thursday of a month starting on a Sunday
        (2026, 11, 6, 1, D(2026, 11, 1)),  # first Sunday: the 1st itself
        (2026, 11, 3, 4, D(2026, 11, 26)),
    ],
)
def test_nth_weekday_by_hand(year: int, month: int, weekday: int, n: int, expected: date) -> None:
    from esc_gis.registry.domain.calendar import _nth_weekday

    assert _nth_weekday(year, month, weekday, n) == expected


@pytest.mark.parametrize(
    "day, open_",
    [
        (D(2026, 11, 25), True),  # the Wednesday before Thanksgiving
        (D(2026, 11, 26), False),  # Thanksgiving
        (D(2026, 11, 27), False),  # the day after
        (D(2026, 11, 28), False),  # Saturday
        (D(2026, 11, 29), False),  # Sunday
        (D(2026, 11, 30), True),  # Monday
        (D(2027, 12, 31), False),  # New Year's Day 2028 (a Saturday), observed in 2027
        (D(2028, 1, 3), True),  # the first Monday of 2028
        (D(2027, 12, 22), True),  # the Wednesday before Christmas Eve as observed
        (D(2027, 12, 23), False),  # Christmas Eve, observed the day before Christmas Day's Friday
        (D(2027, 12, 24), False),
        (D(2028, 12, 21), True),
        (D(2028, 12, 22), False),  # Christmas Eve (a Sunday), observed the Friday before Christmas Day's Monday
        (D(2028, 12, 25), False),
        (D(2028, 12, 26), True),
        (D(2033, 12, 23), False),
        (D(2033, 12, 26), False),
        (D(2033, 12, 27), True),
    ],
)
def test_is_business_day_by_hand(day: date, open_: bool) -> None:
    assert OfficeCalendar().is_business_day(day) is open_


@pytest.mark.parametrize(
    "start, n, expected",
    [
        (D(2026, 11, 2), 20, D(2026, 12, 2)),  # Monday + 20 over Thanksgiving and the day after
        (D(2026, 11, 25), 1, D(2026, 11, 30)),  # Wednesday before Thanksgiving -> the Monday
        (D(2026, 11, 28), 1, D(2026, 11, 30)),  # received on a Saturday: day 1 is Monday
        (D(2026, 12, 23), 2, D(2026, 12, 29)),  # Dec 24, 25 and the weekend closed
        (D(2027, 12, 30), 1, D(2028, 1, 3)),  # Dec 31 2027 closed for New Year 2028
        (D(2026, 11, 30), 0, D(2026, 11, 30)),  # day 0 is the start itself
        (D(2026, 11, 28), 0, D(2026, 11, 28)),  # even on a closed day
        (D(2026, 11, 30), -1, D(2026, 11, 25)),  # backwards over the weekend and Thanksgiving
        (D(2026, 12, 2), -20, D(2026, 11, 2)),
        (D(2028, 1, 3), -1, D(2027, 12, 30)),
    ],
)
def test_add_business_days_by_hand(start: date, n: int, expected: date) -> None:
    assert OfficeCalendar().add_business_days(start, n) == expected


@pytest.mark.parametrize(
    "start, end, expected",
    [
        (D(2026, 11, 2), D(2026, 12, 2), 20),
        (D(2026, 12, 2), D(2026, 11, 2), -20),  # counted backwards: negative
        (D(2026, 11, 25), D(2026, 11, 30), 1),
        (D(2026, 11, 30), D(2026, 11, 25), -1),  # the start (Monday) is not counted, the end is
        (D(2026, 11, 30), D(2026, 11, 30), 0),
        (D(2026, 11, 26), D(2026, 11, 29), 0),  # Thursday to Sunday: all closed
        (D(2026, 11, 27), D(2026, 11, 30), 1),
        (D(2026, 11, 30), D(2026, 12, 1), 1),
    ],
)
def test_business_days_between_by_hand(start: date, end: date, expected: int) -> None:
    assert OfficeCalendar().business_days_between(start, end) == expected


def test_a_given_holiday_list_replaces_the_default_one() -> None:
    cal = OfficeCalendar(holidays=frozenset({D(2026, 12, 31)}))
    assert cal.is_business_day(D(2026, 11, 26))  # Thanksgiving is not in this office's list
    assert not cal.is_business_day(D(2026, 12, 31))
    assert cal.add_business_days(D(2026, 12, 30), 1) == D(2027, 1, 1)  # New Year's Day open here
    assert OfficeCalendar(holidays=frozenset()).add_business_days(D(2026, 11, 25), 1) == D(2026, 11, 26)


def test_another_weekend() -> None:
    cal = OfficeCalendar(holidays=frozenset(), weekend=frozenset({6}))  # open on Saturdays
    assert cal.add_business_days(D(2026, 11, 27), 1) == D(2026, 11, 28)
    assert cal.add_business_days(D(2026, 11, 28), 1) == D(2026, 11, 30)


def test_calendar_file_gives_holidays_and_weekend(tmp_path) -> None:
    f = tmp_path / "office.toml"
    f.write_text('holidays = ["2026-12-31", 2027-01-04]\nweekend = ["Friday", "SAT", "sun"]\n')
    cal = load_calendar(f)
    assert cal.holidays == frozenset({D(2026, 12, 31), D(2027, 1, 4)})
    assert cal.weekend == frozenset({4, 5, 6})
    assert cal.add_business_days(D(2026, 12, 30), 1) == D(2027, 1, 5)


def test_a_holiday_must_be_a_date_not_a_time(tmp_path) -> None:
    f = tmp_path / "office.toml"
    f.write_text("holidays = [2026-12-31T08:00:00]\n")
    with pytest.raises(ProfileError, match="is not a date"):
        load_calendar(f)


def test_calendar_file_without_holidays_keeps_the_default_ones(tmp_path) -> None:
    f = tmp_path / "office.toml"
    f.write_text("")
    cal = load_calendar(f)
    assert cal.holidays is None and cal.weekend == frozenset({5, 6})
    assert not cal.is_business_day(D(2026, 11, 26))
    assert load_calendar(None) == OfficeCalendar()


def test_calendar_file_problems_are_listed_together(tmp_path) -> None:
    f = tmp_path / "office.toml"
    f.write_text('holidays = ["2026-13-01", "xmas", "2026-12-31"]\nweekend = ["caturday", "sun"]\n')
    with pytest.raises(ProfileError) as exc:
        load_calendar(f)
    assert str(exc.value) == (
        f"office calendar {str(f)!r}: holiday '2026-13-01' is not a date (use YYYY-MM-DD); "
        "holiday 'xmas' is not a date (use YYYY-MM-DD); weekend day 'caturday' is not a day name."
    )
    f.write_text("holidays = [")
    with pytest.raises(ProfileError) as exc:
        load_calendar(f)
    assert str(exc.value).startswith(f"office calendar {str(f)!r} cannot be read: ")
    with pytest.raises(ProfileError, match="cannot be read"):
        load_calendar(tmp_path / "missing.toml")


# --- The profile's holidays: a reading of § 540-5 BUSINESS DAY --------------------------------
# § 540-5: "BUSINESS DAY: A day the office of the administering authority is routinely and
# customarily open for business." The ordinance lists no days: the profile's [calendar] holds
# the reading (basis interpretation), a named holiday set or the office's own list of dates.

VILLAGE = Path(esc_gis.__file__).parent / "profiles" / "winneconne.toml"


def _village_with(tmp_path: Path, calendar: str) -> Path:
    """The Village's profile with its [calendar] lines for holidays and weekend replaced."""
    text = VILLAGE.read_text(encoding="utf-8")
    old = 'holidays = "wisconsin_municipal"\nweekend = ["sat", "sun"]\n'
    assert old in text
    f = tmp_path / "profile.toml"
    f.write_text(text.replace(old, calendar), encoding="utf-8")
    return f


def test_the_villages_calendar_is_the_named_set_and_says_it_is_a_reading() -> None:
    prof = load_profile()
    assert prof.tables["calendar"]["basis"] == "interpretation"
    assert prof.tables["calendar"]["section"] == "§ 540-5 BUSINESS DAY"
    cal = profile_calendar(prof)
    assert cal == OfficeCalendar(holidays=None, weekend=frozenset({5, 6}))
    assert not cal.is_business_day(D(2026, 11, 27))  # the day after Thanksgiving, in the named set
    assert not cal.is_business_day(D(2026, 12, 24))
    assert cal.is_business_day(D(2026, 12, 23))


def test_a_profile_given_holiday_list_replaces_the_named_set(tmp_path: Path) -> None:
    f = _village_with(tmp_path, 'holidays = [2026-11-26, "2026-12-25"]\nweekend = ["sat", "sun"]\n')
    cal = profile_calendar(load_profile(f))
    assert cal.holidays == frozenset({D(2026, 11, 26), D(2026, 12, 25)})
    assert not cal.is_business_day(D(2026, 11, 26)) and not cal.is_business_day(D(2026, 12, 25))
    # The days the named set closes, this office keeps open:
    assert cal.is_business_day(D(2026, 11, 27)) and cal.is_business_day(D(2026, 12, 24))
    assert cal.is_business_day(D(2027, 1, 1))  # a year the list does not cover has no holidays
    # "within 20 business days" of Monday Nov 2, 2026: Nov 26 closed only, so Dec 1 (the named set: Dec 2).
    assert cal.add_business_days(D(2026, 11, 2), 20) == D(2026, 12, 1)
    assert profile_calendar(load_profile()).add_business_days(D(2026, 11, 2), 20) == D(2026, 12, 2)


def test_a_profile_may_keep_another_weekend(tmp_path: Path) -> None:
    f = _village_with(tmp_path, 'holidays = []\nweekend = ["Sunday"]\n')
    cal = profile_calendar(load_profile(f))
    assert cal == OfficeCalendar(holidays=frozenset(), weekend=frozenset({6}))
    assert cal.add_business_days(D(2026, 11, 27), 1) == D(2026, 11, 28)  # open on Saturdays


def test_a_profile_without_a_calendar_takes_the_named_set() -> None:
    prof = dataclasses.replace(
        load_profile(), tables={k: v for k, v in load_profile().tables.items() if k != "calendar"}
    )
    assert profile_calendar(prof) == OfficeCalendar()


@pytest.mark.parametrize(
    "calendar, problem",
    [
        ('holidays = "federal"\nweekend = ["sat", "sun"]\n', "[calendar] holidays 'federal' is not a named set"),
        ('holidays = ["2026-13-01"]\nweekend = ["sat", "sun"]\n', "[calendar] holiday '2026-13-01' is not a date"),
        ("holidays = [2026-12-24T08:00:00]\nweekend = []\n", "is not a date (use YYYY-MM-DD)"),
        ("holidays = 3\nweekend = []\n", "[calendar] holidays 3 is not a named set nor a list of dates"),
        ("holidays = [1]\nweekend = []\n", "[calendar] holiday 1 is not a date"),
        ('holidays = []\nweekend = ["caturday"]\n', "[calendar] weekend ['caturday'] must be a list of day names"),
        ('holidays = []\nweekend = "sat"\n', "[calendar] weekend 'sat' must be a list of day names"),
    ],
)
def test_a_bad_calendar_is_refused_when_the_profile_loads(tmp_path: Path, calendar: str, problem: str) -> None:
    with pytest.raises(ProfileError) as exc:
        load_profile(_village_with(tmp_path, calendar))
    assert problem in str(exc.value)


def test_a_calendar_must_cite_and_say_its_basis(tmp_path: Path) -> None:
    text = VILLAGE.read_text(encoding="utf-8")
    f = tmp_path / "profile.toml"
    f.write_text(
        text.replace('section = "§ 540-5 BUSINESS DAY"\nbasis = "interpretation"\n', 'basis = "reading"\n'),
        encoding="utf-8",
    )
    with pytest.raises(ProfileError) as exc:
        load_profile(f)
    assert "[calendar] has no section" in str(exc.value)
    assert "[calendar] basis 'reading' is not one of ordinance, interpretation, policy, technical_standard" in str(
        exc.value
    )


def test_a_calendar_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    text = VILLAGE.read_text(encoding="utf-8")
    start = text.index("[calendar]\n")
    end = text.index("\n\n", start)
    f = tmp_path / "profile.toml"
    f.write_text('calendar = "every weekday"\n' + text[:start] + text[end:], encoding="utf-8")
    with pytest.raises(ProfileError, match=r"\[calendar\] must be a table with holidays, weekend, section, basis"):
        load_profile(f)


@pytest.mark.parametrize(
    "tables, problem",
    [
        (
            {"calendar": {"holidays": "federal"}},
            "holidays 'federal' is not a named set (wisconsin_municipal) nor a list of dates",
        ),
        (
            {"calendar": {"holidays": ["2026-02-30", "2026-12-24"]}},
            "holiday '2026-02-30' is not a date (use YYYY-MM-DD)",
        ),
        ({"calendar": {"holidays": [], "weekend": ["sat", "funday"]}}, "weekend day 'funday' is not a day name"),
    ],
)
def test_profile_calendar_refuses_what_it_cannot_read(tables: dict, problem: str) -> None:
    # load_profile refuses these first; a profile made in code meets the same refusal here.
    prof = dataclasses.replace(load_profile(), tables=tables, source="p.toml")
    with pytest.raises(ProfileError) as exc:
        profile_calendar(prof)
    assert str(exc.value) == f"[calendar] of profile 'p.toml': {problem}."


def test_every_problem_of_a_profiles_calendar_is_said_at_once() -> None:
    # § 540-5 BUSINESS DAY: the holidays and the closed days are the office's; each wrong one is named.
    prof = load_profile()
    odd = dataclasses.replace(
        prof, tables={**prof.tables, "calendar": {"holidays": "federal", "weekend": ["fri", "funday"]}}
    )
    with pytest.raises(ProfileError) as exc:
        profile_calendar(odd)
    assert str(exc.value) == (
        f"[calendar] of profile {prof.source!r}: holidays 'federal' is not a named set (wisconsin_municipal) nor a "
        "list of dates; weekend day 'funday' is not a day name."
    )


@pytest.mark.parametrize("year", range(2020, 2060))
def test_christmas_eve_and_christmas_day_are_two_closed_days_every_year(year: int) -> None:
    """§ 540-5: "BUSINESS DAY: A day the office of the administering authority is routinely and customarily open
    for business". The default set (a reading, the profile's [calendar]) closes the office for Christmas Eve and
    Christmas Day, observed on the nearest weekday: two holidays are two closed weekdays in late December every
    year, never one (2027 and 2028 put both on one day by the nearest weekday alone). The pair is an assumption,
    not a rule of law nor the Village's list, and the profile says so."""
    late = sorted(d for d in default_holidays(year) if d.month == 12 and d.day >= 20 and d.day <= 27)
    assert len(late) == 2 and all(d.weekday() < 5 for d in late), late
    assert late[1] - late[0] <= timedelta(days=3) and late[1].day in (24, 25, 26)
    cal = load_profile().tables["calendar"]
    assert cal["basis"] == "interpretation" and "assumed" in cal["words"]
    assert "Village's own holiday list" in cal["words"] and "public employers" not in cal["words"]
