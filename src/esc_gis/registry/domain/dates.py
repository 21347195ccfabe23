"""One rule for every effective date: not after today on the Village's clock, not before what it follows.

An event's effective date is the day a fact took effect (a fee paid, an inspection, a move):
a day later than today on the Village's clock is a typing mistake (``2062`` for ``2026``) that
would silence a deadline, and a day before the event it depends on (an inspection before the
application was received, a decision before the appeal was filed) cannot have happened. Every
command that takes such a date passes it here (:func:`date_problems`), by the name of its keyword
(``paid_on=``, which the command line shows as its flag), so the refusal reads the same whichever
command it came from.

Dates that are legitimately in the future are not effective dates and do not come here: a letter
of credit's expiry (``--expires``), a building permit's expiry (``--building-permit-expires``),
the expected resumption of work (``--resume-expected``) and a version's planned taking effect
(``--effective-on``) all name a day still to come.

Nothing here reads the clock: the caller passes today on the Village's clock
(:meth:`esc_gis.profile.Profile.today`).
"""

from __future__ import annotations

__all__ = ["CLOCK_SLACK", "DAY_TO_COME", "EffectiveDate", "date_problems", "future_events"]

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from esc_gis.registry.domain.events import HistoryEvent


#: The event kinds whose day may lie ahead: a plan amendment is dated the day it takes effect
#: (``--effective-on``), which may be a day still to come (§ 540-8E(2) asks only that it follow
#: the written permission).
DAY_TO_COME = frozenset({"plan_amendment"})

#: A time may be entered this far ahead of the office's clock (the clocks of phones and PCs differ).
CLOCK_SLACK = timedelta(minutes=5)


@dataclass(frozen=True)
class EffectiveDate:
    """One effective date a command was given.

    Parameters
    ----------
    option : str
        The keyword that gave it, as a Python caller types it (``inspected_on=``; the command line
        shows its flag, :mod:`esc_gis.cli._flags`), or a field's name (``received_on``).
    day : date, datetime or None
        The day on the Village's clock, or a time read off that clock (an inspection's
        ``inspected_at=``); None when the option was not given (nothing to check).
    after : date, datetime or None
        The day (or time) of the event it depends on; ``day`` may equal it, never precede it.
        A day and a time are compared by their days.
    after_name : str
        What ``after`` is, for the message (``the application's receipt``).
    """

    option: str
    day: date | datetime | None
    after: date | datetime | None = None
    after_name: str = ""


def _day(d: date | datetime) -> date:
    return d.date() if isinstance(d, datetime) else d


def _shown(d: date | datetime) -> str:
    return f"{d:%Y-%m-%d %H:%M %Z}".strip() if isinstance(d, datetime) else str(d)


def _named(d: EffectiveDate) -> str:
    """Return the date as given: ``on=2026-12-04`` for a keyword, ``received_on 2026-12-04`` for a field."""
    sep = "" if d.option.endswith("=") else " "
    return f"{d.option}{sep}{_shown(d.day)}" if d.day is not None else d.option


def date_problems(dates: Iterable[EffectiveDate], today: date, now: datetime | None = None) -> list[str]:
    """Return every reason the given effective dates cannot be recorded (empty: they can); pure.

    Today itself is accepted: the rule is "not after today", and the office records the day's
    events on the day. A time (an inspection's, a repair's) is held to the minute when ``now``
    is given: later today than now (beyond :data:`CLOCK_SLACK`) has not happened yet either.

    Parameters
    ----------
    dates : iterable of EffectiveDate
    today : date
        Today on the Village's clock.
    now : datetime, optional
        Now on the Village's clock (aware), for the dates given as times.

    Returns
    -------
    list of str
        One message per problem, naming the option, the date, today (or the earlier event) and
        the fix; all of them, not the first.

    Raises
    ------
    Nothing; a missing date (``day`` None) is the caller's to require or not.

    Examples
    --------
    >>> print(date_problems([EffectiveDate("paid_on=", date(2062, 1, 1))], date(2026, 12, 4))[0])
    ... # doctest: +NORMALIZE_WHITESPACE
    paid_on=2062-01-01 is after today on the Village's clock (2026-12-04):
    give the day it happened, on or before 2026-12-04.
    >>> date_problems([EffectiveDate("on=", date(2026, 12, 4))], date(2026, 12, 4))
    []
    """
    out = []
    for d in dates:
        if d.day is None:
            continue
        if _day(d.day) > today:
            out.append(
                f"{_named(d)} is after today on the Village's clock ({today}): "
                f"give the day it happened, on or before {today}."
            )
        elif isinstance(d.day, datetime) and now is not None and d.day > now + CLOCK_SLACK:
            out.append(
                f"{_named(d)} is later than now on the Village's clock ({_shown(now)}): give the time it happened."
            )
        if d.after is not None:
            both = isinstance(d.day, datetime) and isinstance(d.after, datetime)
            early = d.day < d.after if both else _day(d.day) < _day(d.after)
            if early:
                name = d.after_name or "the event it follows"
                out.append(
                    f"{_named(d)} is before {name} ({_shown(d.after)}): "
                    f"give the {'time' if both else 'day'} it happened, on or after {_shown(d.after)}."
                )
    # One date checked against two earlier events is after today once, not twice.
    return list(dict.fromkeys(out))


def future_events(
    events: Iterable[HistoryEvent], today: date, day_of: Callable[[datetime], date] | None = None
) -> list[HistoryEvent]:
    """Return the stored events whose effective day is after ``today``; pure.

    A registry written before :func:`date_problems`, or edited by hand, may hold them.

    An event's effective day is its ``on`` date, else the day of its ``when`` (``day_of``
    turns a stored time into the Village's day; default: the time's own date). The kinds of
    :data:`DAY_TO_COME` are left out: their day may lie ahead.

    Parameters
    ----------
    events : iterable of HistoryEvent
    today : date
        Today on the Village's clock.
    day_of : callable, optional
        The Village's day of a stored (UTC) time (:meth:`esc_gis.profile.Profile.day_of`).

    Returns
    -------
    list of HistoryEvent
        In the order given.

    Raises
    ------
    Nothing.
    """
    out = []
    for e in events:
        if e.kind in DAY_TO_COME:
            continue
        day = e.on
        if day is None and e.when is not None:
            day = day_of(e.when) if day_of is not None else e.when.date()
        if day is not None and day > today:
            out.append(e)
    return out
