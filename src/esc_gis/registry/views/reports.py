"""Printable inspection reports: a site's weekly reports, and the office's inspection log for a period.

The reports a site must keep (date, time and location of each inspection, the inspector,
the assessment of the controls, the BMP work done, the phase, deficiencies with their
repairs, and photos) are rendered from what the registry holds, one printed page (or more)
per inspection, photos embedded, so the file stands alone. PDF is that same page printed by
headless Chromium (the browser the map tests already use), so the two never differ.

Everything written here holds inspectors' notes and photos: private, so every file is
written readable by its owner only (mode ``0o600``), like the fee receipts. Times are
shown in the office's local time (the machine's zone), as they were entered.

Pure rendering (:func:`permit_report_html`, :func:`log_rows`, :func:`log_html`; the pages are the
templates ``registry/*.html.j2``, which escape every note and name) is kept apart
from the writing (:func:`write_permit_report`, :func:`write_inspection_log`), which reads a
:class:`~esc_gis.registry.service.registry.Registry` through its public methods only.
"""

from __future__ import annotations

__all__ = [
    "LOG_COLUMNS",
    "certificate_html",
    "find_chromium",
    "html_to_pdf",
    "log_html",
    "log_rows",
    "permit_report_html",
    "write_certificate",
    "write_inspection_log",
    "write_permit_report",
]

import base64
import csv
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esc_gis._outputs import spreadsheet_text
from esc_gis._templates import render
from esc_gis.errors import Problem, ToolError, ValidationError
from esc_gis.registry.domain.deadlines import repair_due
from esc_gis.registry.domain.records import Deficiency, Inspection, Permit, Photo

if TYPE_CHECKING:
    from esc_gis.profile import Profile
    from esc_gis.registry.service.registry import Registry

#: Columns of the inspection log (CSV and HTML), in order.
LOG_COLUMNS = (
    "permit_number",
    "site_address",
    "report",
    "date",
    "time",
    "inspector",
    "phase",
    "assessment",
    "work_done",
    "deficiencies",
    "open_repairs",
    "photos",
)
#: Chromium's names on Debian, Ubuntu and Google's packages, tried in order.
_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: A report of a few dozen photos prints in seconds; a hung browser must not hang the office.
_PDF_TIMEOUT_S = 180
#: Flags for a browser run as root, without a screen or network (as scripts/chromium.py).
_CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-pdf-header-footer",
    "--print-to-pdf-no-header",
)


def _local(t: datetime | None, profile: Profile) -> str:
    """Show a stored (UTC) time on the office's clock (the profile's zone), as it was entered."""
    return "" if t is None else f"{profile.local(t):%Y-%m-%d %H:%M %Z}"


def _repair_row(d: Deficiency, profile: Profile, now: datetime) -> dict[str, Any]:
    """Return a deficiency's row: its times on the office's clock and its state (``overdue`` if open past due).

    Raises
    ------
    ProfileError
        If the profile lacks the repair period.
    """
    due = repair_due(d.inspected_at, profile, ids=[d.id], notified_at=d.notified_at).due
    assert isinstance(due, datetime)  # a repair is due at a time, not a day
    if d.repaired_at is None:
        state = "overdue" if due < now else "open"
    else:
        state = "closed late" if d.repaired_at > due else "closed in time"
    return {
        "id": d.id,
        "description": d.description,
        "notified": _local(d.notified_at, profile),
        "due": _local(due, profile),
        "repaired": _local(d.repaired_at, profile),
        "repair_detail": d.repair_detail,
        "state": state,
    }


def _location(r: Inspection, crs: Any, words: str | None = None) -> str:
    """Return the report's location: its point (coordinates, and longitude/latitude) and/or its words."""
    if r.location is None or r.location.is_empty:
        return words or "not recorded"
    from pyproj import CRS, Transformer

    c = CRS.from_user_input(crs)
    lon, lat = Transformer.from_crs(c, "EPSG:4326", always_xy=True).transform(r.location.x, r.location.y)
    code = c.to_epsg()
    point = f"X {r.location.x:,.1f}, Y {r.location.y:,.1f} ({f'EPSG:{code}' if code else c.name}); {lat:.6f}, {lon:.6f}"
    return f"{words}; {point}" if words else point


def permit_report_html(
    permit: Permit,
    reports: Sequence[Inspection],
    *,
    profile: Profile,
    crs: Any,
    photos: Mapping[int, bytes],
    now: datetime | None = None,
) -> str:
    """Render a permit's inspection reports as one printable HTML page, a printed page per report.

    Parameters
    ----------
    permit : Permit
    reports : sequence of Inspection
        The reports to print (oldest first), e.g. ``permit.reports`` or those of a period.
    profile : Profile
        Gives the section the reports are kept under and the repair period.
    crs : Any
        The registry's CRS (the inspection points' coordinates).
    photos : mapping of int to bytes
        Photo id -> its bytes (:meth:`Registry.photo`), embedded as images.
    now : datetime, optional
        The time of printing (aware; default now): an open repair past its due time is shown overdue.

    Returns
    -------
    str

    Raises
    ------
    ProfileError
        If the profile lacks the repair period or the inspection interval.
    """
    now = now or datetime.now(timezone.utc)
    section = profile.entry("deadlines.inspection_interval").section
    # A location given in words is kept in the report's history event (its one home).
    words = {f.inspection_id: f.location_words for f in (permit.state.inspections if permit.state else ())}
    shown = [
        {
            "id": r.id,
            "facts": (
                ("Date", f"{profile.local(r.inspected_at):%A %Y-%m-%d}"),
                ("Time", f"{profile.local(r.inspected_at):%H:%M %Z}"),
                ("Location on the site", _location(r, crs, words.get(r.id))),
                ("Inspector", r.inspector),
                ("Assessment of the controls", r.assessment),
                ("BMP work done", r.work_done),
                ("Phase of construction", r.phase),
                ("Recorded by", r.recorded_by),
            ),
            "deficiencies": [_repair_row(d, profile, now) for d in r.deficiencies],
            "photos": [_photo(ph, photos.get(ph.id)) for ph in r.photos],
        }
        for r in reports
    ]
    return render(
        "registry/inspection_reports.html.j2",
        permit_number=permit.permit_number,
        site_address=permit.site_address,
        office=profile.name,
        section=section,
        printed=_local(now, profile),
        reports=shown,
    )


def certificate_html(permit: Permit, *, profile: Profile, now: datetime | None = None) -> str:
    """Render a permit's certificate of coverage: the permit, its period, a determination, its conditions.

    The conditions are the permit's state's (:attr:`~esc_gis.registry.domain.fold.PermitState.permit_conditions`,
    folded from its history), numbered as `permits show` numbers them. The title, the section
    it is posted under and every heading's words are the profile's. No party, note or case.

    Raises
    ------
    ProfileError
        If the profile lacks one of the certificate's findings.
    """
    now = now or datetime.now(timezone.utc)
    cert = profile.finding("permit_certificate")
    terms = profile.finding("certificate_conditions")
    state = permit.state
    facts = (
        ("Permit", permit.permit_number),
        ("Site", permit.site_address),
        ("Parcel", permit.parcel_id),
        ("Status", permit.status.replace("_", " ")),
        ("Issued", permit.issued_on),
        ("Valid to", permit.expires_on),
        ("Land disturbance", f"{permit.disturbed_sqft:,.0f} sq ft"),
        ("Performance standards", permit.standards),
    )
    determination = None
    if state is not None and state.determination is not None:
        d = profile.finding("registry_determined")
        determination = {
            "title": f"Determination of {state.determination['on']}",
            "text": f"{_purposes_said(profile, state.determination)}{state.determination['reasons']}: {d.message}",
            "section": d.section,
        }
    return render(
        "registry/certificate.html.j2",
        title=profile.template("permit_certificate").title or "Certificate",
        permit_number=permit.permit_number,
        office=profile.name,
        section=cert.section,
        printed=_local(now, profile),
        facts=facts,
        determination=determination,
        conditions=state.permit_conditions if state is not None else [],
        conditions_title=profile.template("certificate_conditions").title or "Conditions",
        conditions_words=terms.message,
        conditions_section=terms.section,
        no_conditions=profile.finding("certificate_no_conditions").message,
        posting=cert.message,
    )


def write_certificate(
    reg: Registry, permit_number: str, target: str | os.PathLike[str], *, overwrite: bool = False
) -> Permit:
    """Write a permit's certificate of coverage (:func:`certificate_html`) to ``.html`` or ``.pdf``.

    Returns
    -------
    Permit

    Raises
    ------
    OutputFormatError, OutputExistsError
        If the path is not .html or .pdf, or exists without ``overwrite``.
    PermitNotFoundError
        If there is no such permit.
    ValidationError
        If the permit is not issued, no longer in force (revoked, closed), or past its period
        (``expires_on`` before today on the Village's clock).
    ToolError
        For a PDF, if Chromium is missing or fails.
    """
    from esc_gis._outputs import check_output_file
    from esc_gis.registry.service._core import ISSUED

    p = check_output_file(
        target, suffixes=(".html", ".pdf"), kind="a certificate is written as HTML or PDF", overwrite=overwrite
    )
    permit = reg.get(permit_number)
    if permit.status not in ISSUED:
        f = reg.profile.finding("certificate_not_issued", status=permit.status)
        raise ValidationError(
            [Problem(permit_number, None, f"{f.message} ({f.section}).", "check the permit's state.")]
        )
    today = reg.profile.today()
    if permit.expires_on is not None and today > permit.expires_on:
        # The state alone does not say the period ran out: an active permit past its expiry
        # covers nothing, and the certificate would say "Valid to" a day already past.
        f = reg.profile.finding("certificate_expired", expired=permit.expires_on, today=today)
        raise ValidationError(
            [Problem(permit_number, None, f"{f.message} ({f.section}).", "see the permit's period (`permits show`).")]
        )
    _write(certificate_html(permit, profile=reg.profile), p)
    return permit


def _photo(ph: Photo, data: bytes | None) -> dict[str, Any]:
    """Return what a report shows of a photo: its record, and its bytes as base64 (None: not loaded)."""
    return {
        "id": ph.id,
        "filename": ph.filename,
        "content_type": ph.content_type,
        "size_bytes": ph.size_bytes,
        "sha256": ph.sha256,
        "data": None if data is None else base64.b64encode(data).decode("ascii"),
    }


def _in(day: date, start: date | None, end: date | None) -> bool:
    return (start is None or day >= start) and (end is None or day <= end)


def log_rows(permits: Sequence[Permit], start: date | None, end: date | None, profile: Profile) -> list[dict[str, Any]]:
    """Return the office's inspection log for a period: a row per inspection, earliest first.

    Reports (``permits inspect``) come with their contents; inspections recorded by day only
    (``permits update --inspected``) come as rows with ``report`` empty, so the log counts
    every inspection the weekly deadline counts.

    Parameters
    ----------
    permits : sequence of Permit
    start, end : date, optional
        The period, both days included (local days); None leaves that end open.
    """
    out = []
    for p in permits:
        reported: Counter[date] = Counter()
        for r in p.reports:
            day = profile.day_of(r.inspected_at)
            reported[day] += 1
            if not _in(day, start, end):
                continue
            out.append(
                {
                    "permit_number": p.permit_number,
                    "site_address": p.site_address,
                    "report": r.id,
                    "date": day.isoformat(),
                    "time": f"{profile.local(r.inspected_at):%H:%M}",
                    "inspector": r.inspector,
                    "phase": r.phase,
                    "assessment": r.assessment,
                    "work_done": r.work_done,
                    "deficiencies": len(r.deficiencies),
                    "open_repairs": sum(d.repaired_at is None for d in r.deficiencies),
                    "photos": len(r.photos),
                }
            )
        # Inspections recorded by day alone: every inspection event beyond the reports' own.
        for day, n in (Counter(p.inspections) - reported).items():
            if _in(day, start, end):
                row: dict[str, Any] = dict.fromkeys(LOG_COLUMNS)
                row.update(permit_number=p.permit_number, site_address=p.site_address, date=day.isoformat())
                out.extend(dict(row) for _ in range(n))
    return sorted(out, key=lambda r: (r["date"], r["time"] or "", r["permit_number"]))


def log_html(rows: Sequence[Mapping[str, Any]], start: date | None, end: date | None, *, profile: Profile) -> str:
    """Render the inspection log as a printable HTML page (landscape)."""
    period = f"{start or 'the first record'} to {end or 'the last record'}"
    return render(
        "registry/inspection_log.html.j2",
        period=period,
        office=profile.name,
        printed=_local(datetime.now(timezone.utc), profile),
        columns=LOG_COLUMNS,
        rows=rows,
    )


def find_chromium() -> str:
    """Return the path of a Chromium (or Chrome) to print PDFs with.

    Raises
    ------
    ToolError
        If none is installed, naming the fix.
    """
    for name in _CHROMIUM_NAMES:
        exe = shutil.which(name)
        if exe:
            return exe
    msg = (
        "PDF reports are printed by headless Chromium, which is not installed: install it "
        "(Debian/Ubuntu: apt-get install chromium), or write .html and print it from a browser."
    )
    raise ToolError(msg)


def html_to_pdf(page: str, pdf: Path, *, chromium: str | None = None) -> None:
    """Print an HTML page to ``pdf`` with headless Chromium (the page's own print CSS applies).

    The page is written beside ``pdf`` (give a path inside a private folder: it holds the
    same private contents), with Chromium's profile in a folder there too.

    Raises
    ------
    ToolError
        If Chromium is missing, fails, takes too long, or writes no PDF.
    """
    exe = chromium or find_chromium()
    src = pdf.with_name(pdf.stem + ".print.html")
    src.write_text(page, encoding="utf-8")
    profile_dir = pdf.with_name(pdf.stem + ".chromium")
    cmd = [exe, *_CHROMIUM_ARGS, f"--user-data-dir={profile_dir}", f"--print-to-pdf={pdf}", src.resolve().as_uri()]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=_PDF_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        msg = f"Chromium did not print the PDF within {_PDF_TIMEOUT_S} s; write .html and print it from a browser."
        raise ToolError(msg) from None
    except OSError as exc:
        msg = f"Chromium ({exe}) could not be run: {exc}."
        raise ToolError(msg) from None
    if not pdf.exists() or pdf.read_bytes()[:5] != b"%PDF-":
        tail = "\n".join((done.stderr or "").strip().splitlines()[-3:])
        msg = f"Chromium ({exe}) wrote no PDF (exit {done.returncode}): {tail or 'no message'}."
        raise ToolError(msg)


def _write(page: str, target: Path) -> None:
    """Write a page as .html or print it to .pdf; private (mode 0600), atomically."""
    from esc_gis._outputs import atomic_output

    exe = find_chromium() if target.suffix.lower() == ".pdf" else None  # before any work: the fix first
    with atomic_output(target, private=True) as tmp:
        if exe is None:
            tmp.write_text(page, encoding="utf-8")
        else:
            html_to_pdf(page, tmp, chromium=exe)


def write_permit_report(
    reg: Registry,
    permit_number: str,
    target: str | os.PathLike[str],
    *,
    start: date | None = None,
    end: date | None = None,
    overwrite: bool = False,
) -> int:
    """Write a permit's inspection reports (those of a period, or all) to ``.html`` or ``.pdf``, private.

    Returns
    -------
    int
        The number of reports written.

    Raises
    ------
    OutputFormatError, OutputExistsError
        If the path is not .html or .pdf, or exists without ``overwrite``.
    ValidationError
        If the period ends before it starts.
    PermitNotFoundError
        If there is no such permit.
    RegistryError
        If a photo's bytes no longer match their recorded checksum.
    ToolError
        For a PDF, if Chromium is missing or fails.
    """
    from esc_gis._outputs import check_output_file

    p = check_output_file(
        target, suffixes=(".html", ".pdf"), kind="inspection reports are written as HTML or PDF", overwrite=overwrite
    )
    if p.suffix.lower() == ".pdf":
        find_chromium()
    _period_check(start, end)
    permit = reg.get(permit_number)
    reports = [r for r in permit.reports if _in(reg.profile.day_of(r.inspected_at), start, end)]
    photos = {ph.id: reg.photo(ph.id).data or b"" for r in reports for ph in r.photos}
    _write(permit_report_html(permit, reports, profile=reg.profile, crs=reg.crs, photos=photos), p)
    return len(reports)


def write_inspection_log(
    reg: Registry,
    target: str | os.PathLike[str],
    *,
    start: date | None,
    end: date | None,
    overwrite: bool = False,
) -> int:
    """Write the office's inspection log for a period (all permits) to ``.html``, ``.pdf`` or ``.csv``, private.

    Returns
    -------
    int
        The number of inspections in the log.

    Raises
    ------
    OutputFormatError, OutputExistsError
        If the path is not .html, .pdf or .csv, or exists without ``overwrite``.
    ValidationError
        If the period ends before it starts.
    ToolError
        For a PDF, if Chromium is missing or fails.
    """
    from esc_gis._outputs import check_output_file

    p = check_output_file(
        target,
        suffixes=(".html", ".csv", ".pdf"),
        kind="the inspection log is written as HTML, PDF or CSV",
        overwrite=overwrite,
    )
    if p.suffix.lower() == ".pdf":
        find_chromium()
    _period_check(start, end)
    rows = log_rows(reg.permits(), start, end, reg.profile)
    if p.suffix.lower() == ".csv":
        from esc_gis._csvt import csv_table_output, row_types, write_csvt

        with csv_table_output(p, private=True) as tmp:
            with tmp.open("w", newline="", encoding="utf-8") as fh:
                w = csv.DictWriter(fh, fieldnames=LOG_COLUMNS)
                w.writeheader()
                w.writerows({k: spreadsheet_text(v) for k, v in row.items()} for row in rows)
            write_csvt(tmp, row_types(len(LOG_COLUMNS), ([row.get(c) for c in LOG_COLUMNS] for row in rows)))
    else:
        _write(log_html(rows, start, end, profile=reg.profile), p)
    return len(rows)


def _period_check(start: date | None, end: date | None) -> None:
    """Refuse a period that ends before it starts (ValidationError)."""
    if start is not None and end is not None and end < start:
        raise ValidationError(
            [Problem("period", None, f"it ends ({end}) before it starts ({start}).", "swap the two days.")]
        )


def _purposes_said(profile: Any, determination: dict[str, Any]) -> str:
    """Return "To protect waters of the state. " for a determination's § 540-4A(1)(c) purposes ("" for none)."""
    from esc_gis.registry.domain.determinations import purpose_words

    words = purpose_words(profile.tables, determination.get("purposes") or ())
    return f"To {words}. " if words else ""
