"""The office calendar: business days for the ordinance's deadlines (§ 540-8C).

"Within 20 business days" counts the days the Village office is open: not weekends, not
the Village's holidays. The receipt day is day 0; the deadline is the 20th business day
after it. § 540-5 defines a business day as "a day the office of the administering authority
is routinely and customarily open for business" and lists no days, so which days those are is
a reading (basis ``interpretation``), the profile's ``[calendar]``: a named holiday set (the
common Wisconsin municipal one, observed on the nearest weekday, with Christmas Eve moved to the
weekday before Christmas Day when both would fall on one day: an assumption) or the office's own
list of dates (:func:`profile_calendar`), which the Village should supply. A TOML file can
replace it for one run (:func:`load_calendar`).
"""

from __future__ import annotations

__all__ = ["OfficeCalendar", "default_holidays", "load_calendar", "profile_calendar"]

import calendar
import functools
import sys
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from esc_gis.errors import ProfileError

if TYPE_CHECKING:
    from esc_gis.profile import Profile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_DAY = timedelta(days=1)


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """Return the n-th (1-based; -1 for the last) given weekday of a month."""
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = date(year, month, calendar.monthrange(year, month)[1])
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _observed(d: date) -> date:
    """Move a Saturday holiday to Friday and a Sunday one to Monday, as observed."""
    return d - _DAY if d.weekday() == 5 else d + _DAY if d.weekday() == 6 else d


@functools.lru_cache(maxsize=64)
def default_holidays(year: int) -> frozenset[date]:
    """Return the common Wisconsin municipal office holidays of one year, as observed.

    New Year's Day, Memorial Day, Independence Day, Labor Day, Thanksgiving and the day
    after, Christmas Eve and Christmas Day. An assumption: give the Village's own list
    with :func:`load_calendar` when it differs.

    Each is observed on the nearest weekday. When Christmas Eve and Christmas Day would be
    observed on one day (2027: Friday and Saturday, both on Friday the 24th; 2028: Sunday and
    Monday, both on Monday the 25th), Christmas Eve is observed on the weekday before the day
    Christmas Day is (Thursday the 23rd; Friday the 22nd), so the pair stays two closed days.
    That is an assumption of this toolkit, not a rule of law (Wis. Stat. § 230.35(4)(a) moves
    only a Sunday holiday to Monday) nor the Village's practice, as the whole set is: a
    business day is a day the office "is routinely and customarily open for business"
    (§ 540-5), so supply the Village's own holiday list (the profile's ``[calendar]`` or
    :func:`load_calendar`).

    Examples
    --------
    >>> sorted(d.isoformat() for d in default_holidays(2026))[:3]
    ['2026-01-01', '2026-05-25', '2026-07-03']
    >>> sorted(d.isoformat() for d in default_holidays(2027) if d.month == 12)
    ['2027-12-23', '2027-12-24']
    """
    christmas = _observed(date(year, 12, 25))
    eve = _observed(date(year, 12, 24))
    if eve >= christmas:  # one day for two holidays: the eve goes to the weekday before
        eve = christmas - _DAY
        while eve.weekday() >= 5:
            eve -= _DAY
    fixed = [_observed(date(year, 1, 1)), _observed(date(year, 7, 4)), eve, christmas]
    thanksgiving = _nth_weekday(year, 11, 3, 4)
    rules = [_nth_weekday(year, 5, 0, -1), _nth_weekday(year, 9, 0, 1), thanksgiving, thanksgiving + _DAY]
    return frozenset(set(fixed) | set(rules))


@dataclass(frozen=True)
class OfficeCalendar:
    """Which days the office works, and arithmetic in those days.

    Parameters
    ----------
    holidays : frozenset of date, optional
        Closed days besides the weekend; default: :func:`default_holidays` of every year.
    weekend : frozenset of int
        Weekday numbers (Monday 0) the office is closed.
    """

    holidays: frozenset[date] | None = None
    weekend: frozenset[int] = field(default_factory=lambda: frozenset({5, 6}))

    def is_business_day(self, d: date) -> bool:
        """Return True when the office is open on ``d``."""
        if d.weekday() in self.weekend:
            return False
        if self.holidays is not None:
            return d not in self.holidays
        # Next year's New Year's Day is observed on December 31 when it falls on a Saturday.
        return d not in default_holidays(d.year) | default_holidays(d.year + 1)

    def add_business_days(self, start: date, n: int) -> date:
        """Return the ``n``-th business day after ``start`` (before it when ``n`` < 0).

        ``start`` itself is day 0 and is never counted, so ``add_business_days(d, 20)`` is
        the last day of "within 20 business days of d".

        Examples
        --------
        >>> cal = OfficeCalendar(holidays=frozenset())
        >>> cal.add_business_days(date(2026, 11, 27), 1)  # a Friday -> the Monday
        datetime.date(2026, 11, 30)
        """
        step = _DAY if n >= 0 else -_DAY
        d, left = start, abs(n)
        while left:
            d += step
            if self.is_business_day(d):
                left -= 1
        return d

    def business_days_between(self, start: date, end: date) -> int:
        """Count business days after ``start`` up to and including ``end`` (negative if before)."""
        sign, (a, b) = (1, (start, end)) if end >= start else (-1, (end, start))
        return sign * sum(self.is_business_day(a + timedelta(days=k)) for k in range(1, (b - a).days + 1))


def load_calendar(path: str | Path | None = None) -> OfficeCalendar:
    """Read an office calendar from TOML: ``holidays`` (ISO dates) and ``weekend`` (day names).

    The file holds what a profile's ``[calendar]`` does (:class:`esc_gis.config.calendar.CalendarFile`),
    read by the same reader.

    Raises
    ------
    ProfileError
        If the file is unreadable, or a date or day name is malformed (all listed at once).
    """
    if path is None:
        return OfficeCalendar()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        msg = f"office calendar {str(path)!r} cannot be read: {exc}"
        raise ProfileError(msg) from None
    return _calendar(data, f"office calendar {str(path)!r}: ")


def profile_calendar(profile: Profile) -> OfficeCalendar:
    """Return the office calendar the profile's ``[calendar]`` describes (§ 540-5 BUSINESS DAY).

    ``holidays`` is a named set (``"wisconsin_municipal"``: :func:`default_holidays`, every
    year) or a list of dates, the office's own, which replaces the named set entirely (a year it
    does not list has no holidays); ``weekend`` names the closed weekdays. A profile without
    ``[calendar]`` takes the named set and a Saturday-Sunday weekend.

    Raises
    ------
    ProfileError
        If the holidays are neither a known set nor a list of dates, or a weekend day is not a
        day name (:func:`esc_gis.profile.load_profile` refuses such a profile already).

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> profile_calendar(load_profile()).is_business_day(date(2026, 11, 27))  # the day after Thanksgiving
    False
    """
    raw = profile.tables.get("calendar") or {}
    return _calendar(raw, f"[calendar] of profile {profile.source or profile.name!r}: ")


def _calendar(raw: object, where: str) -> OfficeCalendar:
    """Read the days of a calendar table with the one reader (:func:`esc_gis.config.calendar.read_calendar`).

    Raises
    ------
    ProfileError
        Naming every problem, after ``where``.
    """
    from esc_gis.config.calendar import read_calendar

    table, problems = read_calendar(raw)
    if table is None:
        msg = where + "; ".join(problems) + "."
        raise ProfileError(msg)
    holidays, weekend = table.days()
    return OfficeCalendar(holidays=holidays, weekend=weekend)
