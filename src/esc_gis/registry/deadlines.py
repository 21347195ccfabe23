"""Deadlines the ordinance sets, computed from a permit's dates (§ 540-8, § 540-7).

Pure functions: dates in, :class:`Due` out, every number read from the profile with its
citation. Business days come from an :class:`~esc_gis.registry.calendar.OfficeCalendar`.
"""

from __future__ import annotations

__all__ = ["Due", "decision_due", "expiry", "inspections_due", "simple_due", "start_notice_due"]

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from esc_gis.errors import ProfileError
from esc_gis.profile import Profile
from esc_gis.registry.calendar import OfficeCalendar


@dataclass(frozen=True)
class Due:
    """Something due by a date (or time), and the section that says so."""

    what: str
    due: date | datetime
    section: str


def _number(profile: Profile, key: str) -> float:
    value = profile.entry(f"deadlines.{key}").value
    if not isinstance(value, (int, float)):
        msg = f"deadlines.{key} in the profile must be a number."
        raise ProfileError(msg)
    return float(value)


def decision_due(received: date, calendar: OfficeCalendar, profile: Profile, *, after_information: bool = False) -> Due:
    """Return the last day for the decision on a complete application (or on added information).

    Past it, the submittal is deemed approved (§ 540-8C(5)).

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> cal = OfficeCalendar(holidays=frozenset())
    >>> decision_due(date(2026, 11, 2), cal, load_profile()).due  # a Monday + 20 business days
    datetime.date(2026, 11, 30)
    """
    key = "decision_after_information" if after_information else "decision"
    e = profile.entry(f"deadlines.{key}")
    due = calendar.add_business_days(received, int(_number(profile, key)))
    return Due("decision (deemed approved after this day)", due, e.cite)


def expiry(issued: date, profile: Profile, *, building_permit_expires: date | None = None,
           extensions_days: Iterable[int] = ()) -> Due:  # fmt: skip
    """Return the permit's expiry: 180 days or the building permit's end, whichever is later, plus extensions.

    Raises
    ------
    ProfileError
        If an extension is longer than the profile allows (180 days, § 540-8G) or not positive.
    """
    validity = _number(profile, "permit_validity")
    longest = _number(profile, "permit_extension")
    end = issued + timedelta(days=validity)
    if building_permit_expires is not None and building_permit_expires > end:
        end = building_permit_expires
    for days in extensions_days:
        if not 0 < days <= longest:
            msg = f"An extension of {days} days is not allowed: each is up to {longest:g} days (§ 540-8G)."
            raise ProfileError(msg)
        end += timedelta(days=days)
    return Due("permit expires", end, profile.entry("deadlines.permit_validity").cite)


def start_notice_due(started: datetime, profile: Profile) -> Due:
    """Return when the notice of starting land disturbance is due (48 hours, § 540-8E(1))."""
    return Due("notice of start", started + timedelta(hours=_number(profile, "start_notice")),
               profile.entry("deadlines.start_notice").cite)  # fmt: skip


def simple_due(what: str, since: date, key: str, profile: Profile) -> Due:
    """Return ``since`` plus the profile's days for ``key`` (temporary_stabilization, stockpile)."""
    return Due(what, since + timedelta(days=_number(profile, key)), profile.entry(f"deadlines.{key}").cite)


def inspections_due(started: date, inspections: Iterable[date], rain: Iterable[tuple[date, float]],
                    today: date, profile: Profile) -> list[Due]:  # fmt: skip
    """Inspections that are due or overdue on ``today`` (§ 540-8E(6)).

    Weekly: 7 days after the last inspection (or the start). After rain: within 24 hours of
    each day with 0.5 inch or more since the start, unless an inspection took place on that
    day or the next.

    Parameters
    ----------
    started : date
        Land disturbance began.
    inspections : iterable of date
    rain : iterable of (date, inches)
        Daily precipitation, e.g. from a weather station's CSV.
    today : date
    profile : Profile

    Returns
    -------
    list of Due
        Sorted by date; only those due by ``today``.
    """
    done = sorted(d for d in inspections if d >= started)
    cite = profile.entry("deadlines.inspection_interval").cite
    weekly = (done[-1] if done else started) + timedelta(days=_number(profile, "inspection_interval"))
    out = [Due("weekly inspection", weekly, cite)] if weekly <= today else []
    trigger = _number(profile, "rain_trigger")
    # Dates, not times: 24 hours after a rainy day ends with the next day.
    window = timedelta(days=max(1, math.ceil(_number(profile, "rain_inspection") / 24)))
    for day, inches in sorted(rain):
        if day < started or day > today or inches < trigger:
            continue
        due = day + window
        if not any(day <= d <= due for d in done) and due <= today + timedelta(days=1):
            out.append(Due(f"inspection after {inches:g} in of rain on {day.isoformat()}", due,
                           profile.entry("deadlines.rain_inspection").cite))  # fmt: skip
    return sorted(out, key=lambda x: (x.due, x.what))
