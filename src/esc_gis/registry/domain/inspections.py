"""Site inspection reports as entered, their photos, and the checks run before anything is written.

A report carries what § 540-8E(6) requires of the weekly written reports: date, time and
location of the inspection, the inspector's name, an assessment of the erosion and
sediment controls, the BMP work done, and the present phase of construction. Deficiencies
found open repairs (:func:`~esc_gis.registry.domain.deadlines.repair_due`).

Photos are read here, checked (the file exists, is an image whose type its first bytes
show, is not empty or too large) and hashed (SHA-256), so the registry stores exactly the
bytes whose checksum it records.
"""

from __future__ import annotations

__all__ = [
    "INSPECTORS",
    "MAX_PHOTO_BYTES",
    "InspectionReport",
    "PhotoFile",
    "check_report",
    "counted_inspections",
    "is_day_alone",
    "missing_contents",
    "read_photo",
    "report_contents",
]

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esc_gis._lazy import lazy_module
from esc_gis.errors import Problem, ProfileError
from esc_gis.registry.domain.dates import EffectiveDate, date_problems
from esc_gis.registry.domain.fold import InspectionFact, PermitState
from esc_gis.registry.domain.records import Permit

#: The largest photo the registry takes (a software limit, not the law): a phone's full-size
#: JPEG is 3-8 MB; a larger file is probably a video or a scan that belongs elsewhere.
MAX_PHOTO_BYTES = 25 * 1024 * 1024
#: Image types recognised from their first bytes (the extension is not trusted).
_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"ftypheic", 4, "image/heic"),
    (b"ftypheix", 4, "image/heic"),
    (b"ftypmif1", 4, "image/heif"),
    (b"II*\x00", 0, "image/tiff"),
    (b"MM\x00*", 0, "image/tiff"),
)

if TYPE_CHECKING:
    import shapely

    # For annotations only: importing the profile loads its calendar models (a fifth of a second),
    # which the registry's reading commands never need.
    from esc_gis.profile import Profile
else:
    # Loaded on first use: listing, showing and the due dates read no geometry, and start without it.
    shapely = lazy_module("shapely")


@dataclass(frozen=True)
class PhotoFile:
    """A photo read from disk: name, type, checksum and bytes."""

    filename: str
    content_type: str
    sha256: str
    data: bytes

    @property
    def size_bytes(self) -> int:
        """The photo's size in bytes."""
        return len(self.data)


@dataclass(frozen=True)
class InspectionReport:
    """An inspection as the inspector reports it (what ``permits inspect`` takes).

    Attributes
    ----------
    inspected_at : datetime
        Date and time of the inspection (aware; UTC is stored).
    inspector : str
        The name of the individual who inspected.
    assessment : str
        The assessment of the condition of the erosion and sediment controls.
    work_done : str, optional
        BMP implementation and maintenance performed.
    phase : str, optional
        The present phase of land-disturbing construction activity.
    deficiencies : sequence of str
        Each deficiency found; each opens a repair.
    photos : sequence of path
        Photo files, stored in the registry.
    location : shapely Point, optional
        Where on the site, in the registry's CRS.
    location_words : str, optional
        Where on the site, in words ("north silt fence along Main St"): § 540-8E(6) asks for the
        "location of the construction site inspection", not a map point, so either one gives it.
    notified_at : datetime, optional
        When the permittee was notified that repair is needed (recorded; the repair is due from
        the inspection or the notification, whichever came first).
    repaired : sequence of int
        Open deficiencies (of earlier inspections) this inspection found repaired.
    by : str
        Who inspected: ``holder`` (the permit holder's own inspection, the duty of § 540-8E(6);
        the default, as every inspection was counted before who inspected was recorded) or
        ``office`` (the administering authority's, § 540-8E(7), § 540-11), which never meets the
        holder's duty.
    pre_start : bool
        Made before land disturbance began, to see the practices installed (§ 540-7B(5)(a)):
        allowed on an issued permit whose work has not started; it meets no weekly duty.
    adjoining_repairs : str, optional
        The repairs of siltation or erosion damage to adjoining surfaces and drainageways the
        report documents (§ 540-8E(5)).
    on_site_documents, certificate_posted : bool, optional
        An office inspection's findings: the plan, amendments, weekly reports and permit kept
        at the site (§ 540-8E(7)); the Certificate of Permit Coverage posted (§ 540-8E(8)).
        None: not checked.
    """

    inspected_at: datetime | None
    inspector: str
    assessment: str
    work_done: str | None = None
    phase: str | None = None
    deficiencies: Sequence[str] = ()
    photos: Sequence[str | os.PathLike[str]] = ()
    location: shapely.Geometry | None = None
    location_words: str | None = None
    notified_at: datetime | None = None
    repaired: Sequence[int] = ()
    by: str = "holder"
    pre_start: bool = False
    adjoining_repairs: str | None = None
    on_site_documents: bool | None = None
    certificate_posted: bool | None = None

    @property
    def contents(self) -> list[str]:
        """The items of § 540-8E(6)'s list the report holds beyond its time, inspector and assessment."""
        # The location is given as a point on the site or in words: either says where it was made.
        located = self.location is not None or bool((self.location_words or "").strip())
        given = (("location", located), ("work_done", self.work_done), ("phase", self.phase))
        return [k for k, v in given if v is not None and v is not False and (not isinstance(v, str) or v.strip())]

    @property
    def checklist(self) -> dict[str, bool]:
        """The office's checklist findings given (§ 540-8E(7), (8)): only those checked."""
        items = (("on_site_documents", self.on_site_documents), ("certificate_posted", self.certificate_posted))
        return {k: bool(v) for k, v in items if v is not None}


#: Who may have inspected: the permit holder (§ 540-8E(6)) or the office (§ 540-8E(7), § 540-11).
INSPECTORS = ("holder", "office")


def read_photo(path: str | os.PathLike[str]) -> tuple[PhotoFile | None, tuple[str, str] | None]:
    """Read and hash one photo; return (photo, None) or (None, (problem, fix)).

    Never raises for a bad file: the caller lists every problem at once.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return None, (f"photo {str(p)!r} does not exist.", "give the path of the photo file.")
    except OSError as exc:
        return None, (f"photo {str(p)!r} cannot be read: {exc.strerror or exc}.", "check the file and its permissions.")
    if not data:
        return None, (f"photo {str(p)!r} is empty.", "give the photo file itself.")
    if len(data) > MAX_PHOTO_BYTES:
        return None, (
            f"photo {str(p)!r} is {len(data) / 1e6:.1f} MB, over the {MAX_PHOTO_BYTES / 1e6:.0f} MB limit.",
            "resize it (a photo of a site reads well at 2-3 MB).",
        )
    content_type = next((t for magic, at, t in _MAGIC if data[at : at + len(magic)] == magic), None)
    if content_type is None:
        return None, (
            f"photo {str(p)!r} is not an image the registry knows (PNG, JPEG, GIF, WebP, HEIC, TIFF).",
            "export it as JPEG or PNG.",
        )
    return PhotoFile(p.name, content_type, hashlib.sha256(data).hexdigest(), data), None


def check_report(
    report: InspectionReport, permit: Permit | None, permit_number: str, *, now: datetime
) -> tuple[list[Problem], list[PhotoFile]]:
    """Check a report against its permit; return every problem and the photos read.

    Parameters
    ----------
    report : InspectionReport
    permit : Permit or None
        The permit as the registry holds it (None: there is no such permit).
    permit_number : str
    now : datetime
        The present on the Village's clock (aware): a report from the future is refused
        (:func:`~esc_gis.registry.domain.dates.date_problems`).
    """
    problems: list[Problem] = []

    def bad(message: str, fix: str) -> None:
        problems.append(Problem(permit_number, None, message, fix))

    if permit is None:
        bad("there is no such permit in the registry.", "check the number (`esc-gis permits list`).")
    at = report.inspected_at
    if at is None:
        bad("the inspection has no date and time.", "give inspected_at=YYYY-MM-DDTHH:MM.")
    # The one rule for effective dates: not after now on the Village's clock, the notification
    # not before the inspection it reports on.
    problems += [
        Problem(permit_number, None, m)
        for m in date_problems(
            [
                EffectiveDate("inspected_at=", at),
                EffectiveDate("notified_at=", report.notified_at, at, "the inspection"),
            ],
            now.date(),
            now,
        )
    ]
    _check_texts(report, bad)
    if report.notified_at is not None and not report.deficiencies:
        bad("a notification time is given, but no deficiency.", "give the deficiencies (deficiencies=).")
    photos = []
    for path in report.photos:
        photo, err = read_photo(path)
        if err:
            bad(*err)
        elif photo is not None:
            photos.append(photo)
    _check_location(report.location, permit, bad)
    _check_who(report, bad)
    if permit is not None:
        _check_timing(report, permit, bad)
        problems += _repaired_problems(report, permit, permit_number)
    return problems, photos


def _check_timing(report: InspectionReport, permit: Permit, bad: Callable[[str, str], None]) -> None:
    """Check the time against the start of work: after it, or before it for a pre-start inspection."""
    at = report.inspected_at
    if report.pre_start:
        if permit.issued_on is None or permit.status not in _PRE_START_STATES:
            bad(
                f"a pre-start inspection needs an issued permit whose work has not started (it is {permit.status}).",
                "record it as a regular inspection (leave out pre_start=True).",
            )
        elif permit.started_at is not None and at is not None and at >= permit.started_at:
            bad(
                f"a pre-start inspection at {at:%Y-%m-%d %H:%M} is not before the work started "
                f"({permit.started_at:%Y-%m-%d %H:%M}).",
                "give the real time, or leave out pre_start=True.",
            )
    elif permit.started_at is None:
        bad(
            "an inspection cannot be recorded before work starts.",
            "move the permit to active first, or record a pre-start inspection (pre_start=True).",
        )
    elif at is not None and at < permit.started_at:
        bad(
            f"the inspection {at:%Y-%m-%d %H:%M} is before the work started ({permit.started_at:%Y-%m-%d %H:%M}).",
            "give the real date and time.",
        )


#: The states in which a pre-start inspection may be recorded: issued, and work not (yet) started.
_PRE_START_STATES = ("approved", "deemed_approved", "active", "extended")


def _check_who(report: InspectionReport, bad: Callable[[str, str], None]) -> None:
    """Check who inspected, and that only the office's inspection carries the office's checklist."""
    if report.by not in INSPECTORS:
        bad(f"who inspected is {report.by!r}.", f"give one of {', '.join(INSPECTORS)} (by=).")
    elif report.by != "office" and report.checklist:
        bad(
            "the checklist of documents on site and the posted certificate is the office's finding.",
            'record it with an office inspection (by="office").',
        )


def _check_texts(report: InspectionReport, bad: Callable[[str, str], None]) -> None:
    """Check the report's required texts are given and no deficiency is blank."""
    for name, value, fix in (
        ("inspector", report.inspector, "give the name of who inspected (inspector=)."),
        ("assessment", report.assessment, "give the assessment of the controls' condition (assessment=)."),
    ):
        if not (value or "").strip():
            bad(f"the {name} is empty.", fix)
    for i, text in enumerate(report.deficiencies, start=1):
        if not (text or "").strip():
            bad(f"deficiency {i} is empty.", "describe what is wrong, or leave it out.")


def _check_location(loc: shapely.Geometry | None, permit: Permit | None, bad: Callable[[str, str], None]) -> None:
    """Check the inspection's location: a finite point on the permit's site."""
    if loc is None:
        return
    if shapely.get_type_id(loc) != 0 or loc.is_empty or not all(map(_finite, loc.coords[0])):
        bad("the location is not a point.", "give a point (location=) in the registry's CRS.")
    elif permit is not None and permit.site is not None and not permit.site.covers(loc):
        bad(
            f"the location ({loc.x:.1f}, {loc.y:.1f}) is not on the site.",
            "give a point on the site, in the registry's CRS (the layer set's).",
        )


def _repaired_problems(report: InspectionReport, permit: Permit, permit_number: str) -> list[Problem]:
    """Return the problems of closing deficiencies: each must be this permit's, open, and found before."""
    found = {d.id: d for d in permit.deficiencies}
    out = []
    for i in report.repaired:
        d = found.get(i)
        if d is None:
            out.append(Problem(permit_number, None, f"deficiency #{i} is not one of this permit's.", _SEE))
        elif d.repaired_at is not None:
            out.append(Problem(permit_number, None, f"deficiency #{i} was already repaired ({d.repaired_at}).", _SEE))
        elif report.inspected_at is not None and report.inspected_at < d.inspected_at:
            out.append(
                Problem(permit_number, None, f"deficiency #{i} was found after this time.", "give the real time.")
            )
    return out


_SEE = "see the open ones with `esc-gis permits show`."


def _finite(v: float) -> bool:
    return v == v and abs(v) != float("inf")


#: The report items the profile's ``[inspections.report_contents]`` may require (the rest of
#: § 540-8E(6)'s list, date, time, inspector and assessment, every report must hold to be recorded).
_CONTENT_ITEMS = ("location", "work_done", "phase")


def report_contents(profile: Profile) -> dict[str, dict[str, Any]]:
    """Return the report items the weekly report must hold to count, with their words and basis.

    The profile's ``[inspections.report_contents]``: item -> ``{words, section, basis}``, the
    ordinance's words for each item of § 540-8E(6)'s list that a report may be recorded without.

    Raises
    ------
    ProfileError
        If the table is missing or names an item the registry does not record.
    """
    table = (profile.tables.get("inspections") or {}).get("report_contents")
    if not isinstance(table, dict) or not table:
        msg = (
            f"Profile {profile.source or profile.name!r} has no [inspections.report_contents]: the items a "
            "weekly inspection report must include, with their words and section."
        )
        raise ProfileError(msg)
    bad = [k for k in table if k not in _CONTENT_ITEMS or not isinstance(table[k], dict) or "words" not in table[k]]
    if bad:
        msg = f"[inspections.report_contents] {', '.join(bad)}: give items of {', '.join(_CONTENT_ITEMS)} with words."
        raise ProfileError(msg)
    return table


def is_day_alone(fact: InspectionFact) -> bool:
    """Return whether an inspection is a day alone (``permits update --inspected``): no report recorded."""
    return fact.inspection_id is None and fact.contents is None


def missing_contents(fact: InspectionFact, profile: Profile) -> list[str]:
    """Return the items the profile requires that an inspection's report lacks.

    A day alone (:func:`is_day_alone`) has no report in the registry: it lacks every item.

    Raises
    ------
    ProfileError
        As :func:`report_contents`.
    """
    if fact.contents is None:
        return list(report_contents(profile))
    return [k for k in report_contents(profile) if k not in fact.contents]


def counted_inspections(state: PermitState | None, profile: Profile) -> list[datetime | date]:
    """Return the inspections that meet the permit holder's duty of § 540-8E(6), oldest first.

    "Conduct construction site inspections at least once per week and within 24 hours after a
    precipitation event" is the holder's duty: the office's own inspections (§ 540-8E(7),
    § 540-11) do not meet it. A report counts when it holds every item "Weekly inspection
    reports shall include" (the profile's ``[inspections.report_contents]``); an incomplete
    one is recorded but does not count. A day alone (``permits update --inspected``) says an
    inspection was made but not what its report holds, so it does not count either (a reading,
    the profile's ``[findings.report_day_alone]``): ``permits due`` lists it until a complete
    report is recorded. A pre-start inspection (§ 540-7B(5)(a)) is before the
    duty begins. Each is its time, or its day where only the day was recorded.

    Raises
    ------
    ProfileError
        As :func:`report_contents`.
    """
    if state is None:
        return []
    return [
        f.at
        for f in state.inspections
        if f.by == "holder" and not f.pre_start and not missing_contents(f, profile) and f.at is not None
    ]
