"""What is due or overdue across the registry on a day: the staff's agenda (§ 540-8).

Pure: permits, a day, the office calendar, the profile and daily rain in; a list of
:class:`DueItem` out, earliest first. :func:`read_rain_csv` reads the daily precipitation
a weather station publishes (NOAA's daily summaries: ``DATE`` and ``PRCP`` in inches).
"""

from __future__ import annotations

__all__ = ["DueItem", "agenda", "read_rain_csv"]

import csv
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from esc_gis.errors import LayerReadError, Problem, ValidationError
from esc_gis.profile import Profile
from esc_gis.registry.calendar import OfficeCalendar
from esc_gis.registry.deadlines import Due, decision_due, inspections_due, simple_due, start_notice_due
from esc_gis.registry.records import Permit, parse_date

#: States in which work may be going on at the site.
WORKING = ("active", "extended", "stop_work")
_INCH_COLUMNS = ("precip_in", "precipitation_in", "inches", "prcp")
_MM_COLUMNS = ("precip_mm", "precipitation_mm")


@dataclass(frozen=True)
class DueItem:
    """Something due for one permit: what, by when, the section, and whether it is late."""

    permit_number: str
    site_address: str
    status: str
    what: str
    due: date | datetime
    section: str
    overdue: bool


def _day(d: date | datetime) -> date:
    return d.date() if isinstance(d, datetime) else d


def permit_dues(p: Permit, *, on: date, calendar: OfficeCalendar, profile: Profile,
                rain: Sequence[tuple[date, float]] = ()) -> list[Due]:  # fmt: skip
    """Everything the ordinance has falling due for one permit, as of ``on`` (past or future)."""
    out: list[Due] = []
    if p.status in ("application_received", "under_review"):
        start = p.information_received_on or p.received_on
        d = decision_due(start, calendar, profile, after_information=p.information_received_on is not None)
        out.append(d)
    if p.status in ("approved", "deemed_approved", *WORKING) and p.expires_on is not None:
        out.append(Due("permit expires (extend it, up to 180 days at a time, § 540-8G)", p.expires_on,
                       profile.entry("deadlines.permit_validity").cite))  # fmt: skip
    if p.status in WORKING and p.started_at is not None:
        if p.start_notice_at is None:
            out.append(start_notice_due(p.started_at, profile))
        # Inspections go on under a stop-work order: the site stays disturbed (§ 540-8E(6), (H)).
        out.extend(inspections_due(p.started_at.date(), p.inspections, rain, on, profile))
        if p.work_stopped_on is not None:
            out.append(simple_due(f"temporary stabilization (work stopped {p.work_stopped_on})", p.work_stopped_on,
                                  "temporary_stabilization", profile))  # fmt: skip
        if p.stockpile_since is not None:
            out.append(simple_due(f"cover or stabilize the stockpile (since {p.stockpile_since})", p.stockpile_since,
                                  "stockpile", profile))  # fmt: skip
    return out


def agenda(permits: Iterable[Permit], *, on: date, calendar: OfficeCalendar, profile: Profile,
           rain: Sequence[tuple[date, float]] = (), within_days: int = 7) -> list[DueItem]:  # fmt: skip
    """List what is overdue on ``on`` or due within ``within_days`` after it, earliest first.

    A decision past its day is reported as a deemed approval (§ 540-8C(5)): the
    applicant may proceed as if the permit had been issued.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> agenda([], on=date(2026, 11, 30), calendar=OfficeCalendar(), profile=load_profile())
    []
    """
    horizon = on + timedelta(days=within_days)
    out = []
    for p in permits:
        for d in permit_dues(p, on=on, calendar=calendar, profile=profile, rain=rain):
            day = _day(d.due)
            if day > horizon:
                continue
            overdue = day < on
            what = d.what
            if overdue and what.startswith("decision"):
                what = "decision overdue: the application is deemed approved (§ 540-8C(5))"
            out.append(DueItem(p.permit_number, p.site_address, p.status, what, d.due, d.section, overdue))
    return sorted(out, key=lambda x: (_day(x.due), x.permit_number, x.what))


def read_rain_csv(path: str | os.PathLike[str]) -> list[tuple[date, float]]:
    """Read daily precipitation: a ``date`` column and inches (``precip_in``, or NOAA's ``PRCP``) or ``precip_mm``.

    Raises
    ------
    LayerReadError
        If the file is missing or unreadable.
    ValidationError
        With every bad row (a date not YYYY-MM-DD, a negative or non-numeric amount).
    """
    p = Path(path)
    try:
        with p.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            header = {h.strip().lower(): h for h in reader.fieldnames or []}
            table = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        msg = f"Cannot read the rain file {p}: {exc}."
        raise LayerReadError(msg) from None
    inch = next((header[c] for c in _INCH_COLUMNS if c in header), None)
    mm = next((header[c] for c in _MM_COLUMNS if c in header), None)
    date_col = header.get("date")
    if date_col is None or (inch is None and mm is None):
        raise ValidationError([Problem(str(p), None, f"has columns {', '.join(header.values()) or 'none'}.",
                                       "give a 'date' column and 'precip_in' (or NOAA's 'PRCP', in inches) "
                                       "or 'precip_mm'.")])  # fmt: skip
    out, problems = [], []
    for i, row in enumerate(table, start=2):  # row 1 is the header
        d, err = parse_date((row.get(date_col) or "").strip(), "date")
        raw = (row.get(inch or mm or "") or "").strip()
        if err or d is None:
            problems.append(Problem(str(p), i, err or "the date is empty.", "write dates as YYYY-MM-DD."))
            continue
        if raw in ("", "T", "M"):  # NOAA: T = trace, M = missing; neither reaches 0.5 in
            continue
        try:
            amount = float(raw)
        except ValueError:
            amount = -1.0
        if amount < 0:
            problems.append(Problem(str(p), i, f"precipitation {raw!r} is not a non-negative number.",
                                    "give the day's total as a number."))  # fmt: skip
            continue
        out.append((d, amount if inch else amount / 25.4))
    if problems:
        raise ValidationError(problems)
    return out
