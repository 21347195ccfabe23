"""The office calendar (§ 540-5 BUSINESS DAY): the ``[calendar]`` table of a profile and a calendar file.

The one reader of ``[calendar]``: :func:`esc_gis.profile.load_profile` checks a profile's table
with :class:`ProfileCalendar`, :func:`esc_gis.registry.domain.calendar.profile_calendar` and
:func:`~esc_gis.registry.domain.calendar.load_calendar` read the days with :func:`read_calendar`.
"""

from __future__ import annotations

__all__ = ["DAY_NAMES", "HOLIDAY_SETS", "CalendarFile", "ProfileCalendar", "calendar_problems", "read_calendar"]

import datetime as dt
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BeforeValidator, Discriminator, Field, Tag, field_validator

from esc_gis.config._base import Open, Text, errors, fail
from esc_gis.findings import BASES, Basis

#: Named holiday sets ``holidays`` may name instead of listing dates (the rules are
#: :func:`esc_gis.registry.domain.calendar.default_holidays`).
HolidaySet = Literal["wisconsin_municipal"]
HOLIDAY_SETS: tuple[str, ...] = get_args(HolidaySet)
#: Day names by their first three letters, any case (``Sunday``, ``sun``), Monday 0.
DAY_NAMES = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
# The same for an editor: any case, three letters or more.
_DAY_PATTERN = "^(" + "|".join("".join(f"[{c.upper()}{c}]" for c in d) for d in DAY_NAMES) + ")"


def _day(v: Any) -> Any:
    # A TOML date reads as a date; a quoted "YYYY-MM-DD" is taken too; a date-time is not a day,
    # and a number is not a date (pydantic would read 1 as 1970-01-01).
    if isinstance(v, dt.datetime) or not isinstance(v, (dt.date, str)):
        raise fail("")  # worded by the caller (holiday ... is not a date)
    if isinstance(v, str):
        try:
            return dt.date.fromisoformat(v)
        except ValueError:
            raise fail("") from None
    return v


def _day_name(v: str) -> str:
    if v.lower()[:3] not in DAY_NAMES:
        raise fail("")
    return v


Holiday = Annotated[dt.date, BeforeValidator(_day), Field(description="A closed day, YYYY-MM-DD.")]
DayName = Annotated[
    str,
    AfterValidator(_day_name),
    Field(
        description="A day name: mon, tue, ... (or Monday, Sunday: the first three letters count).",
        json_schema_extra={"pattern": _DAY_PATTERN},
    ),
]


def _holidays_form(v: Any) -> str:
    return "set" if isinstance(v, str) else "dates"


def _holidays(v: Any) -> Any:
    if isinstance(v, str) and v not in HOLIDAY_SETS:
        raise fail(f"holidays {v!r} is not a named set ({', '.join(HOLIDAY_SETS)}) nor a list of dates")
    if not isinstance(v, (str, list)):
        raise fail(f"holidays {v!r} is not a named set nor a list of dates")
    return v


Holidays = Annotated[
    Annotated[HolidaySet, Tag("set")] | Annotated[list[Holiday], Tag("dates")],
    Discriminator(_holidays_form),
    BeforeValidator(_holidays),
]


class CalendarFile(Open):
    """The days the office is closed: a calendar file (``--calendar``) or the base of a profile's ``[calendar]``."""

    holidays: Holidays = Field(
        "wisconsin_municipal",
        description=(
            "A named holiday set (wisconsin_municipal: the common Wisconsin municipal holidays, observed on the "
            "nearest weekday, every year, except that Christmas Eve moves to the weekday before Christmas Day when "
            "both would fall on one day; an assumption, not the Village's list) or the office's own list of dates, "
            "which replaces the set entirely (a year it does not list has no holidays). Supply the office's own "
            "list: a business day is a day its office is routinely and customarily open for business."
        ),
    )
    weekend: list[DayName] = Field(["sat", "sun"], description="The weekdays the office is closed.")
    words: Text = Field(
        "weekdays other than the office's holidays",
        description="What a business day is taken to be, in words: findings say it as {business_days}.",
    )

    def days(self) -> tuple[frozenset[dt.date] | None, frozenset[int]]:
        """Return the holidays (None: the named set) and the weekend's weekday numbers (Monday 0)."""
        holidays = None if isinstance(self.holidays, str) else frozenset(self.holidays)
        return holidays, frozenset(DAY_NAMES[d.lower()[:3]] for d in self.weekend)


def _cited(v: str) -> str:
    if not v.strip():
        raise fail("")
    return v


class ProfileCalendar(CalendarFile):
    """A profile's ``[calendar]``: the office's days as a reading of the ordinance's business day, cited."""

    section: Annotated[Text, AfterValidator(_cited)] = Field(description="The citation of what defines a business day.")
    basis: Basis = Field(description="What the table rests on: " + ", ".join(BASES) + ".")
    summary: Text = Field("", description="One line saying what the table does.")

    @field_validator("section", mode="before")
    @classmethod
    def _no_section(cls, v: Any) -> Any:
        return "" if v is None else v


#: The words of each problem, by the key it is about (a weekend day and a holiday one by one).
_WORDS = {
    "holiday": "holiday {input!r} is not a date (use YYYY-MM-DD)",
    "weekend_day": "weekend day {input!r} is not a day name",
    "weekend": "weekend {input!r} must be a list of day names (e.g. ['sat', 'sun'])",
    "section": "has no section: cite what defines a business day",
    "basis": "basis {input!r} is not one of " + ", ".join(BASES),
}


def calendar_problems(errs: list[dict[str, Any]], raw: Any, *, whole_weekend: bool = False) -> list[str]:
    """Word the errors of a calendar (locations relative to the table) as esc_gis says them.

    ``whole_weekend`` names a bad weekend once, as a whole (a profile's words), instead of day by day
    (a calendar file's and :func:`esc_gis.registry.domain.calendar.profile_calendar`'s).
    """
    out: list[str] = []
    weekend_said = False
    for e in errs:
        loc, value = e["loc"], None if e["type"] == "missing" else e.get("input")
        if e["type"] == "esc" and e["ctx"]["text"]:
            out.append(str(e["ctx"]["text"]))
        elif loc[:1] == ("holidays",):
            out.append(_WORDS["holiday"].format(input=value))
        elif loc[:1] == ("weekend",) and (whole_weekend or len(loc) == 1):
            if not weekend_said:
                out.append(_WORDS["weekend"].format(input=raw.get("weekend")))
            weekend_said = True
        elif loc[:1] == ("weekend",):
            out.append(_WORDS["weekend_day"].format(input=value))
        elif loc and loc[0] in _WORDS:
            out.append(_WORDS[str(loc[0])].format(input=value))
        else:
            out.append(f"{'.'.join(map(str, loc))} {value!r}: {e['msg']}")
    return out


def read_calendar(raw: Any) -> tuple[CalendarFile | None, list[str]]:
    """Read a calendar's holidays and weekend: the one reader of ``[calendar]`` and of calendar files.

    Parameters
    ----------
    raw : mapping
        The table as parsed from TOML (a profile's ``[calendar]``, or a whole calendar file).

    Returns
    -------
    CalendarFile or None, list of str
        The calendar, or None and every problem in the office's words.

    Raises
    ------
    TypeError
        Never for bad data: problems are returned.

    Examples
    --------
    >>> read_calendar({"holidays": ["2026-12-25"], "weekend": ["sun"]})[0].days()
    (frozenset({datetime.date(2026, 12, 25)}), frozenset({6}))
    >>> read_calendar({"weekend": ["fri", "funday"]})[1]
    ["weekend day 'funday' is not a day name"]
    """
    model, errs = errors(CalendarFile, raw)
    return model, calendar_problems(errs, raw)
