"""Inspections: inspection reports with deficiencies and photos, and the repairs that close them."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["inspect", "photo", "repaired"]

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from esc_gis.errors import (
    Problem,
    RegistryError,
    ValidationError,
)
from esc_gis.registry.domain.dates import EffectiveDate, date_problems
from esc_gis.registry.domain.inspections import InspectionReport, check_report
from esc_gis.registry.domain.records import Event, Inspection, Permit, Photo
from esc_gis.registry.service._core import (
    _who,
)
from esc_gis.registry.store.attachments import store_photos
from esc_gis.registry.store.backend import now_utc
from esc_gis.registry.store.projection import wkb

if TYPE_CHECKING:
    from esc_gis.registry.service.registry import Registry


def inspect(reg: Registry, permit_number: str, report: InspectionReport, *, who: str | None = None) -> Inspection:
    """Record a site inspection report, its deficiencies (each opens a repair) and photos (§ 540-8E(6)).

    Everything is checked first (the permit, the time, the names, every photo) and written
    in one transaction with an ``inspection`` event in the history, which the weekly
    inspection deadline counts like ``update(inspected_on=...)`` when the permit holder made it
    (``report.by``) and it holds every item the weekly report "shall include" (an incomplete
    report is recorded, and listed by ``permits due`` as not meeting the duty). Deficiencies of earlier
    inspections named in ``report.repaired`` are closed as of this inspection.

    Parameters
    ----------
    reg : Registry
        The registry (bound as :meth:`Registry.inspect`, so not passed there).
    permit_number : str
        The permit inspected; its work must have started (unless ``report.pre_start``).
    report : InspectionReport
        What the inspection found: when, by whom, the assessment, deficiencies, photos, where.
    who : str, optional
        Who records it, for the history; default the login name.

    Returns
    -------
    Inspection
        The report as stored, with its number and its deficiencies' numbers.

    Raises
    ------
    ValidationError
        With every problem at once (no such permit, work not started, a time in the
        future or before the start, an empty name or assessment, a photo missing or not
        an image, a point off the site, a deficiency to close that is not open); nothing
        is written then.
    """
    who = _who(who)
    b = reg.backend
    report = replace(report, inspected_at=reg._office(report.inspected_at), notified_at=reg._office(report.notified_at))
    with b.read() as cur:
        found = reg._select(cur, f"WHERE p.permit_number = {b.ph}", (permit_number,))
    problems, photos = check_report(
        report, found[0] if found else None, permit_number, now=reg.profile.local(now_utc())
    )
    if problems:
        raise ValidationError(problems)
    at = report.inspected_at
    assert at is not None  # checked
    now = now_utc()
    with b.write() as cur:
        reg._locked(cur, permit_number)
        checklist = report.checklist
        (fid,) = b.next_ids(cur, "inspections", "fid")
        ids = b.next_ids(cur, "deficiencies", "id", len(report.deficiencies))
        defects = [
            {"id": i, "notified_at": report.notified_at, "description": text.strip()}
            for i, text in zip(ids, report.deficiencies, strict=True)
        ]
        detail = (
            f"inspection report #{fid} by {report.inspector.strip()} ({report.by}"
            + (", pre-start" if report.pre_start else "")
            + f"): {len(report.deficiencies)} deficiency(ies), "
            f"{len(photos)} photo(s)"
            + (f"; repaired {', '.join(f'#{i}' for i in report.repaired)}" if report.repaired else "")
        )
        reg._event(
            cur,
            permit_number,
            Event(now, who, "inspection", None, None, reg.profile.day_of(at), None, detail),
            when=at,
            by=report.by,
            inspection_id=fid,
            deficiencies=defects,
            repaired=list(report.repaired),
            photos=[f.sha256 for f in photos],
            contents=report.contents,
            # The location in words (§ 540-8E(6) "location of the construction site inspection").
            **({"location_words": words} if (words := (report.location_words or "").strip()) else {}),
            **({"pre_start": True} if report.pre_start else {}),
            **({"adjoining_repairs": True} if (report.adjoining_repairs or "").strip() else {}),
            **({"checklist": checklist} if checklist else {}),
            # The report as recorded: the inspections projection's row.
            report={
                "inspector": report.inspector.strip(),
                "assessment": report.assessment.strip(),
                "work_done": (report.work_done or "").strip() or None,
                "phase": (report.phase or "").strip() or None,
                "geom": wkb(report.location),
                "inspected_by": report.by,
                "pre_start": bool(report.pre_start),
                "adjoining_repairs": (report.adjoining_repairs or "").strip() or None,
                "on_site_documents": checklist.get("on_site_documents"),
                "certificate_posted": checklist.get("certificate_posted"),
            },
        )
        # The photos' bytes, beside the history that names them by their SHA-256.
        store_photos(cur, b, fid, photos)
    return next(r for r in reg.get(permit_number).reports if r.id == fid)


def repaired(
    reg: Registry,
    permit_number: str,
    deficiencies: Sequence[int],
    *,
    on: datetime,
    who: str | None = None,
    detail: str | None = None,
) -> Permit:
    """Record that deficiencies were repaired (the BMPs repaired or replaced) at ``on``: their repairs close.

    Raises
    ------
    PermitNotFoundError
    ValidationError
        If no deficiency is given, one is not this permit's, already repaired, found
        after ``on``, or ``on`` is after now on the Village's clock or before the
        application's receipt; nothing is written then.
    """
    who = _who(who)
    now = now_utc()
    on = reg.profile.local(on)
    problems = []
    if not deficiencies:
        problems.append(
            Problem(
                permit_number,
                None,
                "no deficiency is named.",
                "name the deficiencies repaired, by their ids (deficiencies=).",
            )
        )
    with reg.backend.write() as cur:
        p = reg._locked(cur, permit_number)
        # The one rule for effective dates: not after now on the Village's clock, nor before
        # the application's receipt (a deficiency's own inspection is checked below).
        problems += [
            Problem(permit_number, None, m)
            for m in date_problems(
                [EffectiveDate("on=", on, p.received_on, "the application's receipt")],
                reg.profile.today(),
                reg.profile.local(now),
            )
        ]
        from esc_gis.registry.domain.inspections import _repaired_problems

        probe = InspectionReport(on, "-", "-", repaired=deficiencies)
        problems += _repaired_problems(probe, p, permit_number)
        if problems:
            raise ValidationError(problems)
        text = f"repaired {', '.join(f'#{i}' for i in deficiencies)}" + (f": {detail}" if detail else "")
        reg._event(
            cur,
            permit_number,
            Event(now, who, "repair", None, None, reg.profile.day_of(on), None, text),
            when=on,
            deficiency_ids=[int(i) for i in deficiencies],
            detail=detail,
        )
    return reg.get(permit_number)


def photo(reg: Registry, photo_id: int) -> Photo:
    """Return one inspection photo with its bytes.

    Raises
    ------
    RegistryError
        If there is no such photo, or its bytes no longer match the SHA-256 recorded.
    """
    import hashlib

    b = reg.backend
    with b.read() as cur:
        cur.execute(
            "SELECT id, inspection_id, filename, content_type, sha256, size_bytes, data "
            f"FROM inspection_photos WHERE id = {b.ph}",
            (int(photo_id),),
        )
        row = cur.fetchone()
    if row is None:
        msg = f"There is no inspection photo #{photo_id} in the registry."
        raise RegistryError(msg)
    data = b.load("blob", row[6])
    if hashlib.sha256(data).hexdigest() != row[4]:
        msg = f"Inspection photo #{photo_id} ({row[2]}) does not match its recorded SHA-256: restore a backup."
        raise RegistryError(msg)
    return Photo(int(row[0]), int(row[1]), row[2], row[3], row[4], int(row[5]), data)
