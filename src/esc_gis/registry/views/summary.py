"""The office's summary of a period: permits, inspections, repairs, enforcement, appeals, money.

One tidy table (section, measure, value), written as CSV or as a printable HTML page.
Counts and totals only: no names, notes or addresses.

After-rain inspections due and missed reuse the deadline rules of ``permits due``
(:func:`~esc_gis.registry.domain.deadlines.inspections_due`): one is *missed* when the rules, given
the inspections recorded up to its day, still list it as outstanding at the end of it. Weekly
ones are counted week by week: a deadline falls a week after the last inspection (or the
start), and one missed is followed by the next a week after it, so a site left uninspected
for five weeks has missed five weekly inspections (``permits due`` lists only the oldest).
States at the period's end are replayed from each permit's append-only history.
"""

from __future__ import annotations

__all__ = ["SUFFIXES", "SUMMARY_COLUMNS", "SummaryRow", "inspection_deadlines", "office_summary", "write_summary"]

import csv
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from esc_gis._templates import render
from esc_gis.registry.domain.appeals import Appeal
from esc_gis.registry.domain.deadlines import inspections_due, repair_due, weekly_record
from esc_gis.registry.domain.enforcement import EnforcementCase
from esc_gis.registry.domain.fees import GUARANTEE_TYPES, Fee, Guarantee
from esc_gis.registry.domain.inspections import counted_inspections
from esc_gis.registry.domain.lifecycle import STATES
from esc_gis.registry.domain.records import Permit
from esc_gis.registry.views.agenda import WORKING

if TYPE_CHECKING:
    from esc_gis.profile import Profile
    from esc_gis.registry.service.registry import Registry

#: The output formats.
SUFFIXES = (".csv", ".html")
#: The CSV's columns.
SUMMARY_COLUMNS = ("section", "measure", "value")


@dataclass(frozen=True)
class SummaryRow:
    """One measure of the summary: its section, name (units in the name) and value."""

    section: str
    measure: str
    value: int | float


def _in(d: date | None, start: date, end: date) -> bool:
    return d is not None and start <= d <= end


def _event_day(e: object, profile: Profile) -> date:
    on = getattr(e, "on_date", None)
    return on if on is not None else profile.day_of(getattr(e, "at"))  # noqa: B009


def state_on(p: Permit, day: date, profile: Profile) -> str | None:
    """Return the permit's state at the end of ``day``, replayed from its history (None: not yet received)."""
    state = None
    for e in p.events:
        if e.to_status is not None and _event_day(e, profile) <= day:
            state = e.to_status
    return state


def _working_until(p: Permit, profile: Profile) -> date | None:
    """Return the day the inspection duty ended (the permit left the working states), or None while it runs."""
    if p.status in WORKING:
        return None
    out = None
    for e in p.events:
        if e.from_status in WORKING and e.to_status is not None and e.to_status not in WORKING:
            out = _event_day(e, profile)
    return out


def inspection_deadlines(
    p: Permit,
    start: date,
    end: date,
    *,
    rain: Sequence[tuple[date | datetime, float]],
    profile: Profile,
) -> list[tuple[str, date | datetime, bool]]:
    """List the weekly and after-rain inspections that fell due from ``start`` to ``end``, and whether each was done.

    Returns
    -------
    list of (code, due, done)
        ``code`` is the profile's finding (``weekly_inspection`` or ``rain_inspection``);
        ``done`` whether an inspection recorded by the due day met it.

    Raises
    ------
    ProfileError
        If the profile lacks a number the inspection rules need.
    """
    if p.started_at is None:
        return []
    began = profile.day_of(p.started_at)  # as permits due counts it
    until = _working_until(p, profile)
    first, last = max(start, began), end if until is None else min(end, until)
    if last < first:
        return []
    # Only the holder's complete reports (and days alone) meet the duty, as in `permits due`.
    done = counted_inspections(p.state, profile)
    done_days = sorted(profile.day_of(t) for t in done)
    # Weekly (§ 540-8E(6), "at least once per week"), under the profile's reading: the rule is
    # deadlines.weekly_record's, as `permits due` applies it.
    out: list[tuple[str, date | datetime, bool]] = [
        ("weekly_inspection", day, met) for day, met in weekly_record(began, done_days, first, last, profile)
    ]
    # After rain: every event's deadline is known without inspections, and only inspections up to
    # its due day can meet it, so the rules run once without and once with all of them.
    if rain:
        every = inspections_due(began, [], rain, last, profile)
        still = {(d.code, d.due, d.what) for d in inspections_due(began, done, rain, last, profile)}
        out.extend(
            (d.code, d.due, (d.code, d.due, d.what) not in still)
            for d in every
            if d.code == "rain_inspection" and first <= profile.day_of(d.due) <= last
        )
    return sorted(out, key=lambda x: (profile.day_of(x[1]), x[0]))


def _permit_rows(permits: Sequence[Permit], start: date, end: date, profile: Profile) -> list[SummaryRow]:
    states = [state_on(p, end, profile) for p in permits]
    out = [SummaryRow("permits", f"state_{s}", sum(x == s for x in states)) for s in STATES]
    out.append(SummaryRow("permits", "total_at_end", sum(s is not None for s in states)))
    out.append(SummaryRow("permits", "received", sum(_in(p.received_on, start, end) for p in permits)))
    out.append(SummaryRow("permits", "issued", sum(_in(p.issued_on, start, end) for p in permits)))
    # Where the permits at the period's end lie, as the screening decided (§ 540-4B; issue 46): a
    # site partly outside the Village is counted apart, with the disturbance inside. A permit
    # received before the registry kept it (schema 12) is counted as not recorded.
    there = [p for p, s in zip(permits, states, strict=True) if s is not None]
    for where in ("inside", "partial"):
        out.append(SummaryRow("permits", f"jurisdiction_{where}", sum(p.jurisdiction == where for p in there)))
    out.append(SummaryRow("permits", "jurisdiction_not_recorded", sum(p.jurisdiction is None for p in there)))
    out.append(
        SummaryRow(
            "permits",
            "partial_disturbed_inside_sqft",
            round(float(sum(p.disturbed_in_village_sqft or 0.0 for p in there if p.jurisdiction == "partial")), 2),
        )
    )
    return out


def _inspection_rows(
    permits: Sequence[Permit], start: date, end: date, rain: Sequence[tuple[date | datetime, float]], profile: Profile
) -> list[SummaryRow]:
    deadlines = [x for p in permits for x in inspection_deadlines(p, start, end, rain=rain, profile=profile)]
    out = [
        SummaryRow("inspections", "recorded", sum(_in(d, start, end) for p in permits for d in p.inspections)),
        SummaryRow(
            "inspections",
            "reports_recorded",
            sum(_in(profile.day_of(r.inspected_at), start, end) for p in permits for r in p.reports),
        ),
        SummaryRow(
            "inspections",
            "photos_recorded",
            sum(len(r.photos) for p in permits for r in p.reports if _in(profile.day_of(r.inspected_at), start, end)),
        ),
    ]
    for code, name in (("weekly_inspection", "weekly"), ("rain_inspection", "after_rain")):
        mine = [done for c, _, done in deadlines if c == code]
        out += [
            SummaryRow("inspections", f"{name}_due", len(mine)),
            SummaryRow("inspections", f"{name}_done", sum(mine)),
            SummaryRow("inspections", f"{name}_missed", len(mine) - sum(mine)),
        ]
    return out


def _repair_rows(permits: Sequence[Permit], start: date, end: date, profile: Profile) -> list[SummaryRow]:
    # The period's end is the midnight after its last day, in the office's zone.
    end_at = profile.local(datetime.combine(end + timedelta(days=1), datetime.min.time()))
    found = [d for p in permits for d in p.deficiencies]
    open_at_end = [d for d in found if d.inspected_at < end_at and (d.repaired_at is None or d.repaired_at >= end_at)]
    overdue = [
        d
        for d in open_at_end
        if repair_due(d.inspected_at, profile, ids=[d.id], notified_at=d.notified_at).due < end_at
    ]
    return [
        SummaryRow(
            "repairs",
            "deficiencies_found",
            sum(_in(profile.day_of(d.inspected_at), start, end) for d in found),
        ),
        SummaryRow(
            "repairs",
            "repaired",
            sum(d.repaired_at is not None and _in(profile.day_of(d.repaired_at), start, end) for d in found),
        ),
        SummaryRow("repairs", "open_at_end", len(open_at_end)),
        SummaryRow("repairs", "overdue_at_end", len(overdue)),
    ]


def _enforcement_rows(cases: Sequence[EnforcementCase], start: date, end: date) -> list[SummaryRow]:
    def closed_by(c: EnforcementCase, day: date) -> bool:
        return any(e.kind == "closed" and e.on_date <= day for e in c.events)

    events = [e for c in cases for e in c.events if _in(e.on_date, start, end)]
    return [
        SummaryRow("enforcement", "cases_opened", sum(_in(c.opened_on, start, end) for c in cases)),
        SummaryRow(
            "enforcement",
            "cases_opened_without_permit",
            sum(_in(c.opened_on, start, end) and c.permit_number is None for c in cases),
        ),
        SummaryRow("enforcement", "cases_closed", sum(e.kind == "closed" for e in events)),
        SummaryRow(
            "enforcement", "cases_open_at_end", sum(c.opened_on <= end and not closed_by(c, end) for c in cases)
        ),
        SummaryRow("enforcement", "stop_work_orders", sum(e.kind == "stop_work" for e in events)),
        # New costs only: a payment, or a special assessment of costs billed before, is not new costs.
        SummaryRow(
            "enforcement",
            "costs_recorded_usd",
            round(
                float(sum(e.costs or 0.0 for e in events if e.kind != "paid" and e.costs_from != "special_assessment")),
                2,
            ),
        ),
    ]


def _appeal_rows(appeals: Sequence[Appeal], start: date, end: date) -> list[SummaryRow]:
    decided = [a.decision for a in appeals if a.decision is not None and _in(a.decision.decided_on, start, end)]
    out = [
        SummaryRow("appeals", "filed", sum(_in(a.filed_on, start, end) for a in appeals)),
        SummaryRow("appeals", "decided", len(decided)),
    ]
    out += [
        SummaryRow("appeals", f"decided_{o}", sum(d.outcome == o for d in decided))
        for o in sorted({d.outcome for d in decided})
    ]
    out.append(
        SummaryRow(
            "appeals",
            "pending_at_end",
            sum(a.filed_on <= end and (a.decision is None or a.decision.decided_on > end) for a in appeals),
        )
    )
    return out


def _held_on(g: Guarantee, day: date) -> float:
    """Return what a guarantee held at the end of ``day`` (after the draws and releases by then)."""
    if g.received_on > day:
        return 0.0
    events = [e for e in g.events if e.on_date <= day]
    if any(e.kind == "final_release" for e in events):
        return 0.0
    return round(g.amount - sum(e.amount or 0.0 for e in events), 2)


def _money_rows(guarantees: Sequence[Guarantee], fees: Sequence[Fee], start: date, end: date) -> list[SummaryRow]:
    out = []
    for t in GUARANTEE_TYPES:
        mine = [g for g in guarantees if g.type == t]
        held = [_held_on(g, end) for g in mine]
        out += [
            SummaryRow("guarantees", f"{t}_held", sum(h > 0 for h in held)),
            SummaryRow("guarantees", f"{t}_held_usd", round(float(sum(held)), 2)),
        ]
    events = [e for g in guarantees for e in g.events if _in(e.on_date, start, end)]
    out += [
        SummaryRow("guarantees", "received", sum(_in(g.received_on, start, end) for g in guarantees)),
        SummaryRow(
            "guarantees", "drawn_usd", round(float(sum(e.amount or 0.0 for e in events if e.kind == "draw")), 2)
        ),
        SummaryRow(
            "guarantees", "released_usd", round(float(sum(e.amount or 0.0 for e in events if e.kind != "draw")), 2)
        ),
    ]
    paid = [f for f in fees if _in(f.paid_on, start, end)]
    out += [
        SummaryRow("fees", "received", len(paid)),
        SummaryRow("fees", "received_usd", round(float(sum(f.amount for f in paid)), 2)),
    ]
    out += [
        SummaryRow("fees", f"{k}_usd", round(float(sum(f.amount for f in paid if f.kind == k)), 2))
        for k in sorted({f.kind for f in paid})
    ]
    return out


def office_summary(
    reg: Registry,
    start: date,
    end: date,
    *,
    rain: Sequence[tuple[date | datetime, float]] = (),
) -> list[SummaryRow]:
    """Summarise the office's period from ``start`` to ``end`` (both included).

    ``rain`` is precipitation as :func:`~esc_gis.registry.views.agenda.read_rain_csv` reads it;
    without it no inspection after rain is counted as due.

    Raises
    ------
    ValidationError
        If the period ends before it starts.
    ProfileError
        If the profile lacks a number a deadline needs.
    """
    from esc_gis.registry.views.reports import _period_check

    _period_check(start, end)
    permits = reg.permits()
    return [
        *_permit_rows(permits, start, end, reg.profile),
        *_inspection_rows(permits, start, end, rain, reg.profile),
        *_repair_rows(permits, start, end, reg.profile),
        *_enforcement_rows(reg.cases(), start, end),
        *_appeal_rows(reg.appeals(), start, end),
        *_money_rows(reg.guarantees(), reg.fees(), start, end),
    ]


def _html(rows: Sequence[SummaryRow], start: date, end: date, profile: Profile) -> str:
    """Return the summary's printable page (the template ``registry/office_summary.html.j2``): a table per section."""
    sections = [
        (section, [r for r in rows if r.section == section]) for section in dict.fromkeys(r.section for r in rows)
    ]
    return render(
        "registry/office_summary.html.j2",
        start=start,
        end=end,
        office=profile.name,
        printed=f"{datetime.now(profile.tz).astimezone(profile.tz):%Y-%m-%d %H:%M %Z}",
        sections=sections,
    )


def write_summary(
    rows: Sequence[SummaryRow],
    target: str | os.PathLike[str],
    *,
    start: date,
    end: date,
    profile: Profile,
    overwrite: bool = False,
) -> None:
    """Write the summary as CSV (section, measure, value) or a printable HTML page.

    Written readable by its owner only: guarantee and fee totals can show one permit's amount.

    Raises
    ------
    OutputFormatError, OutputExistsError
        If the path is not .csv or .html, or exists without ``overwrite``.
    """
    from esc_gis._csvt import csv_table_output, row_types, write_csvt
    from esc_gis._outputs import atomic_output, check_output_file

    p = check_output_file(
        target, suffixes=SUFFIXES, kind="the office summary is written as CSV or HTML", overwrite=overwrite
    )
    if p.suffix.lower() == ".csv":
        with csv_table_output(p, private=True) as tmp:
            with tmp.open("w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh)
                w.writerow(SUMMARY_COLUMNS)
                for r in rows:
                    w.writerow([r.section, r.measure, f"{r.value:.2f}" if isinstance(r.value, float) else r.value])
            # Typed by the values, not their text: counts and amounts together are Real.
            write_csvt(tmp, row_types(len(SUMMARY_COLUMNS), ((r.section, r.measure, r.value) for r in rows)))
    else:
        with atomic_output(p, private=True) as tmp:
            tmp.write_text(_html(rows, start, end, profile), encoding="utf-8")
