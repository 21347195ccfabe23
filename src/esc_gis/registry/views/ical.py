"""The registry's deadlines as an RFC 5545 iCalendar feed, for staff's calendar apps.

Pure: the :class:`~esc_gis.registry.views.agenda.DueItem` list that ``permits due`` prints in, an
:class:`icalendar.Calendar` out (one ``VEVENT`` per deadline); nothing here reads the
registry, computes a deadline or prints. The feed may be shared beyond the office, so it is
built from the agenda's public fields only: permit number, site address, the finding's
wording, section and basis. Parties, contacts and notes never reach a :class:`DueItem`.

Calendar apps match events by ``UID``: a re-export updates an event rather than adding a
second one as long as the deadline keeps its identity (:func:`event_uid`).
"""

from __future__ import annotations

__all__ = ["deadline_calendar", "event_uid", "write_ics"]

import hashlib
import os
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING

import icalendar

from esc_gis import __version__
from esc_gis.registry.views.agenda import DueItem

if TYPE_CHECKING:
    from esc_gis.profile import Profile

#: Deadlines a permit has at most one of at a time: the event keeps its UID when the day
#: moves (an extension moves the expiry; added information moves the decision; the decision
#: past its day is reported as a deemed approval; an inspection recorded moves the next
#: weekly one). Others recur (rain inspections, repairs, stockpiles, stabilisation after each
#: stop) and are told apart by their day, and by their record's key where one day may hold
#: two (letters of credit, the repairs of different inspections).
_ONE_PER_PERMIT = {
    "decision_due": "decision",
    "decision_due_after_information": "decision",
    "deemed_approved": "decision",
    "permit_expires": "permit_expires",
    "start_notice": "start_notice",
    "weekly_inspection": "weekly_inspection",
}
#: A short title: the finding's wording up to its first clause break.
_TITLE_BREAKS = (" (", ": ", ", ")


def event_uid(item: DueItem, jurisdiction: str) -> str:
    """Return the deadline's stable UID: a digest of the office, permit number and the deadline's identity.

    The identity is the finding's code and its day, with the deadline's ``key`` (the
    guarantee or inspections it belongs to) when it has one, except for deadlines a permit
    has one of at a time (decision, expiry, notice of start, next weekly inspection), whose
    identity is the kind alone, so that a moved day updates the event in a calendar app.

    Examples
    --------
    >>> item = DueItem("ESC-2026-0001", "1 Main St", "active", "weekly inspection", date(2026, 12, 1),
    ...                "s", "ordinance", False, "weekly_inspection")
    >>> event_uid(item, "Town of Example") == event_uid(item, "Town of Example")
    True
    >>> event_uid(item, "Town of Example").endswith("@esc-gis")
    True
    """
    kind = _ONE_PER_PERMIT.get(item.code)
    identity = kind if kind is not None else f"{item.code}|{item.due.isoformat()}"
    if kind is None and item.key:
        # Appended only when present, so the UIDs of deadlines without a key stay as they were.
        identity += f"|{item.key}"
    digest = hashlib.sha256(f"{jurisdiction}|{item.permit_number}|{identity}".encode()).hexdigest()[:32]
    return f"{digest}@esc-gis"


def _title(what: str) -> str:
    cut = min((i for i in (what.find(b) for b in _TITLE_BREAKS) if i > 0), default=len(what))
    return what[:cut]


def deadline_calendar(
    items: Sequence[DueItem], *, profile: Profile, on: date, stamp: datetime | None = None
) -> icalendar.Calendar:
    """Build the iCalendar feed of ``items``: one event per deadline.

    A deadline that is a day is an all-day event (``DTSTART;VALUE=DATE``); one that is a
    time (the notice of start, an inspection after timed rain) is a timed event at that
    time, in UTC (a rain file's times are read on the Village's clock); a time without a zone
    would be floating. Events are transparent: a deadline does not block time.

    Parameters
    ----------
    items : sequence of DueItem
        What :func:`~esc_gis.registry.views.agenda.agenda` lists.
    profile : Profile
        Names the calendar (its jurisdiction).
    on : date
        The day the agenda was computed for; an overdue item says it was overdue then.
    stamp : datetime, optional
        ``DTSTAMP`` (when the feed was made); default now, in UTC.

    Returns
    -------
    icalendar.Calendar

    Raises
    ------
    ValueError
        If two items have the same identity (the same UID); the agenda never makes such a pair.
    """
    name = profile.jurisdiction_name or profile.name
    stamp = (stamp or datetime.now(timezone.utc)).astimezone(timezone.utc)
    cal = icalendar.Calendar()
    cal.add("prodid", f"-//esc_gis//esc_gis {__version__}//EN")
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("method", "PUBLISH")
    cal.add("x-wr-calname", f"{name}: permit deadlines")
    seen: dict[str, DueItem] = {}
    for item in items:
        uid = event_uid(item, name)
        if uid in seen:
            msg = f"two deadlines of {item.permit_number} have the same identity: {seen[uid].what!r} and {item.what!r}."
            raise ValueError(msg)
        seen[uid] = item
        ev = icalendar.Event()
        ev.add("uid", uid)
        ev.add("dtstamp", stamp)
        if isinstance(item.due, datetime):
            due = item.due.astimezone(timezone.utc) if item.due.tzinfo is not None else item.due
            ev.add("dtstart", due)
        else:
            ev.add("dtstart", item.due)
            ev.add("dtend", item.due + timedelta(days=1))
        ev.add("summary", f"{item.permit_number}: {_title(item.what)} ({item.section})")
        late = f"\nOverdue on {on.isoformat()}." if item.overdue else ""
        ev.add(
            "description",
            f"{item.what}.\nSection: {item.section}\nBasis: {item.basis.replace('_', ' ')}\n"
            f"Permit {item.permit_number} ({item.status}), {item.site_address}.{late}",
        )
        ev.add("location", item.site_address)
        ev.add("categories", [item.code])
        ev.add("transp", "TRANSPARENT")
        cal.add_component(ev)
    return cal


def write_ics(cal: icalendar.Calendar, path: str | os.PathLike[str]) -> None:
    """Write ``cal`` to ``path`` as bytes (RFC 5545: CRLF line ends, folded lines, UTF-8).

    Raises
    ------
    OSError
        If the file cannot be written.
    """
    with open(path, "wb") as f:
        f.write(cal.to_ical())
