"""One rule for every effective date: not after today on the Village's clock, not before what it follows.

An event's effective date is the day a fact took effect (a fee paid, an inspection, a move):
a day later than today on the Village's clock is a typing mistake (``2062`` for ``2026``) that
would silence a deadline, and a day before the event it depends on (an inspection before the
application was received, a decision before the appeal was filed) cannot have happened. Every
command that takes such a date passes it here (:func:`date_problems`), by the name of its option,
so the refusal reads the same whichever command it came from.

Dates that are legitimately in the future are not effective dates and do not come here: a letter
of credit's expiry (``--expires``), a building permit's expiry (``--building-permit-expires``),
the expected resumption of work (``--resume-expected``) and a version's planned taking effect
(``--effective-on``) all name a day still to come.

Nothing here reads the clock: the caller passes today on the Village's clock
(:meth:`esc_gis.profile.Profile.today`).
"""

from __future__ import annotations

__all__ = ["EffectiveDate", "date_problems", "future_events"]

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from esc_gis.registry.domain.events import HistoryEvent


@dataclass(frozen=True)
class EffectiveDate:
    """One effective date a command was given.

    Parameters
    ----------
    option : str
        The option that gave it, as the user typed it (``--inspected``).
    day : date or None
        The day on the Village's clock; None when the option was not given (nothing to check).
    after : date or None
        The day of the event it depends on; ``day`` may equal it, never precede it.
    after_name : str
        What ``after`` is, for the message (``the application's receipt``).
    """

    option: str
    day: date | None
    after: date | None = None
    after_name: str = ""


def date_problems(dates: Iterable[EffectiveDate], today: date) -> list[str]:
    """Return every reason the given effective dates cannot be recorded (empty: they can); pure.

    Today itself is accepted: the rule is "not after today", and the office records the day's
    events on the day.

    Parameters
    ----------
    dates : iterable of EffectiveDate
    today : date
        Today on the Village's clock.

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
    >>> date_problems([EffectiveDate("--paid-on", date(2062, 1, 1))], date(2026, 12, 4))[0][:58]
    '--paid-on 2062-01-01 is after today on the Village\\'s clock'
    >>> date_problems([EffectiveDate("--on", date(2026, 12, 4))], date(2026, 12, 4))
    []
    """
    out = []
    for d in dates:
        if d.day is None:
            continue
        if d.day > today:
            out.append(
                f"{d.option} {d.day} is after today on the Village's clock ({today}): "
                f"give the day it happened, on or before {today}."
            )
        if d.after is not None and d.day < d.after:
            name = d.after_name or "the event it follows"
            out.append(
                f"{d.option} {d.day} is before {name} ({d.after}): give the day it happened, on or after {d.after}."
            )
    return out


def future_events(events: Iterable[HistoryEvent], today: date, day_of: object = None) -> list[HistoryEvent]:
    """Return the stored events whose effective day is after ``today`` (a registry written before
    :func:`date_problems`, or edited by hand); pure.

    An event's effective day is its ``on`` date, else the day of its ``when`` (``day_of``
    turns a stored time into the Village's day; default: the time's own date).

    Raises
    ------
    Nothing.
    """
    out = []
    for e in events:
        day = e.on
        if day is None and e.when is not None:
            day = day_of(e.when) if callable(day_of) else e.when.date()
        if day is not None and day > today:
            out.append(e)
    return out
