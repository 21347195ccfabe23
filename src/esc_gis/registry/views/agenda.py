"""What is due or overdue across the registry on a day: the staff's agenda (§ 540-8).

Pure: permits, a day, the office calendar, the profile and rain in; a list of
:class:`DueItem` out, earliest first, each carrying its citation and basis from the profile.
:func:`read_rain_csv` reads the precipitation a weather station publishes: daily (NOAA's
daily summaries: ``DATE`` and ``PRCP`` in inches) or timed (hourly readings with a date and time).
"""

from __future__ import annotations

__all__ = ["DueItem", "agenda", "read_rain_csv"]

import csv
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from esc_gis.errors import LayerReadError, Problem, ValidationError
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.deadlines import (
    Due,
    guarantee_expiry_due,
    inspections_due,
    pending_decision_due,
    repair_due,
    stabilization_due,
    start_notice_due,
    stockpile_due,
)
from esc_gis.registry.domain.inspections import counted_inspections, is_day_alone, missing_contents, report_contents
from esc_gis.registry.domain.records import Permit, parse_date

if TYPE_CHECKING:
    from esc_gis.profile import Profile

#: States in which work may be going on at the site.
WORKING = ("active", "extended", "stop_work", "suspended")
#: A trace of precipitation (NOAA's "T"): a wet day that adds nothing measurable to an event's total.
TRACE_INCHES = 1e-9
_INCH_COLUMNS = ("precip_in", "precipitation_in", "inches", "prcp")
_MM_COLUMNS = ("precip_mm", "precipitation_mm")


@dataclass(frozen=True)
class DueItem:
    """Something due for one permit: what, by when, the section and basis, and whether it is late."""

    permit_number: str
    site_address: str
    status: str
    what: str
    due: date | datetime
    section: str
    basis: str
    overdue: bool
    code: str = ""
    key: str = ""


def permit_dues(
    p: Permit,
    *,
    on: date,
    calendar: OfficeCalendar,
    profile: Profile,
    rain: Sequence[tuple[date | datetime, float]] = (),
) -> list[Due]:
    """Everything the ordinance has falling due for one permit, as of ``on`` (past or future).

    Raises
    ------
    ProfileError
        If the profile lacks a number or finding a deadline needs.
    """
    out: list[Due] = []
    # The 20 business days run from a complete application (its fee paid, § 540-8B, § 540-8C(1)):
    # the clock the history started, if it runs. No clock, no decision due and no deemed approval.
    pending = pending_decision_due(p.status, p.state, calendar, profile)
    if pending is not None:
        out.append(pending)
    if p.status in ("approved", "deemed_approved", *WORKING) and p.expires_on is not None:
        out.append(expiry_due(p, profile))
    if p.status in WORKING and p.started_at is not None:
        if p.start_notice_at is None:
            out.append(start_notice_due(p.started_at, profile))
        # Inspections go on under a stop-work order or a suspension: the site stays disturbed (§ 540-8E(6)).
        # Only the holder's complete reports meet the duty; the incomplete ones are listed as not meeting it.
        counted = counted_inspections(p.state, profile)
        out.extend(inspections_due(profile.day_of(p.started_at), counted, rain, on, profile))
        out.extend(incomplete_reports_due(p, counted, profile))
        if p.work_stopped_on is not None:
            d = stabilization_due(
                p.work_stopped_on, profile, resume_expected=p.resume_expected_on, resumed=p.work_resumed_on
            )
            if d is not None:
                out.append(d)
        if p.stockpile_since is not None:
            out.append(stockpile_due(p.stockpile_since, profile))
    out.extend(repairs_due(p, profile))
    out.extend(site_checks_due(p, profile))
    pre_start = pre_start_due(p, profile)
    if pre_start is not None:
        out.append(pre_start)
    # A letter of credit's expiry matters in any state: the guarantee is held until released.
    for gid, expires, held in p.letters_of_credit:
        d = guarantee_expiry_due(expires, profile, guarantee_id=gid, amount=held, balance=held)
        if d is not None:
            out.append(d)
    return out


def repairs_due(p: Permit, profile: Profile) -> list[Due]:
    """Return the open repairs of a permit's inspection deficiencies, one per deadline (§ 540-8E(6)).

    Open in any state: a deficiency found stays open until a repair is recorded. The
    deficiencies of one inspection (with the same notification) share a deadline, so they
    make one item (and one calendar event).

    Raises
    ------
    ProfileError
        If the profile lacks the repair period or its finding.
    """
    groups: dict[tuple[datetime, datetime | None], list[tuple[int, int]]] = {}
    for d in p.open_repairs:
        groups.setdefault((d.inspected_at, d.notified_at), []).append((d.id, d.inspection_id))
    return [
        repair_due(
            inspected,
            profile,
            ids=[i for i, _ in found],
            notified_at=notified,
            inspection_ids=[r for _, r in found],
        )
        for (inspected, notified), found in groups.items()
    ]


def incomplete_reports_due(p: Permit, counted: Sequence[date | datetime], profile: Profile) -> list[Due]:
    """Return the holder's reports since the last one that counts which lack an item § 540-8E(6) requires.

    "Weekly inspection reports shall include all of the following": a report without one is
    recorded, but does not meet the weekly or after-rain duty. Each is listed, dated its
    inspection, naming what it lacks in the ordinance's words (the profile's
    ``[inspections.report_contents]``), until a complete report follows it. A day alone
    (``permits update --inspected``) is listed as an inspection whose report is not recorded.

    Raises
    ------
    ProfileError
        If the profile lacks the report's contents or the finding.
    """
    if p.state is None:
        return []
    last = max((profile.day_of(t) for t in counted), default=None)
    table = report_contents(profile)
    out = []
    for f in p.state.inspections:
        if f.by != "holder" or f.pre_start or (last is not None and profile.day_of(f.at) <= last):
            continue
        if is_day_alone(f):
            # A day alone: the inspection was made, its written report is not in the registry (a reading).
            out.append(
                _finding_due(profile, "report_day_alone", f.at, f"inspected:{f.seq}", at=_at_text(f.at, profile))
            )
            continue
        missing = missing_contents(f, profile)
        if missing:
            d = _finding_due(
                profile,
                "report_incomplete",
                f.at,
                f"inspection:{f.inspection_id}",
                inspection_id=f.inspection_id,
                at=_at_text(f.at, profile),
                missing="; ".join(str(table[k]["words"]) for k in missing),
            )
            # An item the profile requires on a reading (the location) makes the finding a reading too.
            reading = any(table[k].get("basis") == "interpretation" for k in missing)
            out.append(replace(d, basis="interpretation") if reading else d)
    return out


#: The checklist of an office inspection and the finding each "no" raises (§ 540-8E(7), (8)).
SITE_CHECKS = {"on_site_documents": "site_documents_missing", "certificate_posted": "certificate_not_posted"}
#: States in which the permit's conditions hold at the site (issued, coverage not terminated).
_COVERED = ("approved", "deemed_approved", *WORKING, "final_stabilization")


def site_checks_due(p: Permit, profile: Profile) -> list[Due]:
    """Return the permit conditions an office inspection last found unmet at the site (§ 540-8E(7), (8)).

    Each checklist item's latest office finding rules: "no" is listed, dated that inspection
    (the condition was not met then), until a later office inspection records "yes". The
    ordinance sets no period to correct it.

    Raises
    ------
    ProfileError
        If the profile lacks a finding.
    """
    if p.state is None or p.status not in _COVERED:
        return []
    out = []
    for item, code in SITE_CHECKS.items():
        last = next((f for f in reversed(p.state.inspections) if item in f.checklist), None)
        if last is not None and not last.checklist[item]:
            out.append(
                _finding_due(
                    profile,
                    code,
                    last.at,
                    f"inspection:{last.inspection_id}",
                    inspection_id=last.inspection_id,
                    at=_at_text(last.at, profile),
                )
            )
    return out


def pre_start_due(p: Permit, profile: Profile) -> Due | None:
    """Return a pre-start inspection for an issued permit whose work has not started, if the profile lists one.

    § 540-7B(5)(a) requires the practices "constructed or installed before land-disturbing
    construction activities begin"; it requires no inspection. So one is listed only where the
    profile's ``[inspections.pre_start] listed`` says the office makes one (its policy): due
    from the day the permit was issued, until one is recorded or work starts.

    Raises
    ------
    ProfileError
        If the profile lists it but lacks the finding.
    """
    policy = (profile.tables.get("inspections") or {}).get("pre_start") or {}
    if not policy.get("listed") or p.status not in ("approved", "deemed_approved") or p.started_at is not None:
        return None
    if p.issued_on is None or (p.state is not None and any(f.pre_start for f in p.state.inspections)):
        return None
    return _finding_due(profile, "pre_start_inspection", p.issued_on, issued=p.issued_on)


def _finding_due(profile: Profile, code: str, when: date | datetime, key: str = "", **values: object) -> Due:
    f = profile.finding(code, **values)
    return Due(f.message, when, f.section, f.basis, code, key)


def _at_text(t: date | datetime, profile: Profile) -> str:
    return f"{profile.local(t):%Y-%m-%d %H:%M %Z}".strip() if isinstance(t, datetime) else t.isoformat()


def expiry_due(p: Permit, profile: Profile) -> Due:
    """Return the permit's recorded expiry as a :class:`Due` (§ 540-8G)."""
    f = profile.finding("permit_expires")
    assert p.expires_on is not None
    return Due(f.message, p.expires_on, f.section, f.basis, f.code)


def agenda(
    permits: Iterable[Permit],
    *,
    on: date,
    calendar: OfficeCalendar,
    profile: Profile,
    rain: Sequence[tuple[date | datetime, float]] = (),
    within_days: int = 7,
) -> list[DueItem]:
    """List what is overdue on ``on`` or due within ``within_days`` after it, earliest first.

    A decision past its day is reported as a deemed approval (§ 540-8C(5)), dated the day
    the period ran out: the applicant may proceed as if the permit had been issued.

    Raises
    ------
    ProfileError
        If the profile lacks a number or finding a deadline needs.

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
            day = profile.day_of(d.due)
            if day > horizon:
                continue
            overdue = day < on
            if overdue and d.code.startswith("decision_due"):
                f = profile.finding("deemed_approved", due=day)
                d = Due(f.message, d.due, f.section, f.basis, f.code, d.key)
            out.append(
                DueItem(
                    p.permit_number, p.site_address, p.status, d.what, d.due, d.section, d.basis, overdue, d.code, d.key
                )
            )
    return sorted(out, key=lambda x: (profile.day_of(x.due), x.permit_number, x.what))


def _when(text: str) -> tuple[date | datetime | None, str | None]:
    """Parse a reading's day (``YYYY-MM-DD``) or time (``YYYY-MM-DDTHH:MM``), as the station wrote it."""
    if len(text) == 10:
        return parse_date(text, "date")
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return None, f"date {text!r} is not YYYY-MM-DD or YYYY-MM-DDTHH:MM."
    # The station's clock, as written: events are compared with each other, not across zones.
    return t.replace(tzinfo=None), None


def read_rain_csv(path: str | os.PathLike[str]) -> list[tuple[date | datetime, float]]:
    """Read precipitation: a ``date`` (or ``datetime``) column and inches (``precip_in``, ``PRCP``) or ``precip_mm``.

    Daily data give a day per row (``YYYY-MM-DD``); timed data (hourly readings) a date and
    time per row (``YYYY-MM-DDTHH:MM``), each amount the precipitation of the interval ending
    then. NOAA's ``T`` (trace) is a wet reading of no measurable amount; ``M`` (missing) and
    empty amounts are left out.

    Raises
    ------
    LayerReadError
        If the file is missing or unreadable.
    ValidationError
        With every bad row (a date not YYYY-MM-DD or YYYY-MM-DDTHH:MM, days and times mixed,
        a negative or non-numeric amount).
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
    date_col = header.get("date") or header.get("datetime")
    if date_col is None or (inch is None and mm is None):
        raise ValidationError(
            [
                Problem(
                    str(p),
                    None,
                    f"has columns {', '.join(header.values()) or 'none'}.",
                    "give a 'date' column and 'precip_in' (or NOAA's 'PRCP', in inches) or 'precip_mm'.",
                )
            ]
        )
    out: list[tuple[date | datetime, float]] = []
    problems = []
    kinds: set[bool] = set()
    for i, row in enumerate(table, start=2):  # row 1 is the header
        d, err = _when((row.get(date_col) or "").strip())
        raw = (row.get(inch or mm or "") or "").strip()
        if err or d is None:
            problems.append(
                Problem(
                    str(p), i, err or "the date is empty.", "write days as YYYY-MM-DD, or times as YYYY-MM-DDTHH:MM."
                )
            )
            continue
        if raw in ("", "M"):  # NOAA: M = missing
            continue
        if raw == "T":  # NOAA: a trace; wet, so it joins the days around it into one event
            out.append((d, TRACE_INCHES))
            kinds.add(isinstance(d, datetime))
            continue
        try:
            amount = float(raw)
        except ValueError:
            amount = -1.0
        if amount < 0:
            problems.append(
                Problem(
                    str(p),
                    i,
                    f"precipitation {raw!r} is not a non-negative number.",
                    "give the day's total as a number.",
                )
            )
            continue
        kinds.add(isinstance(d, datetime))
        out.append((d, amount if inch else amount / 25.4))
    if len(kinds) > 1:
        problems.append(
            Problem(
                str(p),
                None,
                "mixes days (YYYY-MM-DD) and times (YYYY-MM-DDTHH:MM).",
                "give daily totals or timed readings, one kind per file.",
            )
        )
    if problems:
        raise ValidationError(problems)
    return out
