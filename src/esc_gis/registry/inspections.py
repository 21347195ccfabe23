"""Site inspection reports as entered, their photos, and the checks run before anything is written.

A report carries what § 540-8E(6) requires of the weekly written reports: date, time and
location of the inspection, the inspector's name, an assessment of the erosion and
sediment controls, the BMP work done, and the present phase of construction. Deficiencies
found open repairs (:func:`~esc_gis.registry.deadlines.repair_due`).

Photos are read here, checked (the file exists, is an image whose type its first bytes
show, is not empty or too large) and hashed (SHA-256), so the registry stores exactly the
bytes whose checksum it records.
"""

from __future__ import annotations

__all__ = ["MAX_PHOTO_BYTES", "InspectionReport", "PhotoFile", "check_report", "read_photo"]

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import shapely

from esc_gis.errors import Problem
from esc_gis.registry.records import Permit

#: The largest photo the registry takes (a software limit, not the law): a phone's full-size
#: JPEG is 3-8 MB; a larger file is probably a video or a scan that belongs elsewhere.
MAX_PHOTO_BYTES = 25 * 1024 * 1024
#: A report may be entered this long after its clock says (clocks of phones and PCs differ).
_CLOCK_SLACK = timedelta(minutes=5)
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
    notified_at : datetime, optional
        When the permittee was notified that repair is needed (the repair is due from then).
    repaired : sequence of int
        Open deficiencies (of earlier inspections) this inspection found repaired.
    """

    inspected_at: datetime | None
    inspector: str
    assessment: str
    work_done: str | None = None
    phase: str | None = None
    deficiencies: Sequence[str] = ()
    photos: Sequence[str | os.PathLike[str]] = ()
    location: shapely.Geometry | None = None
    notified_at: datetime | None = None
    repaired: Sequence[int] = ()


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
        The present (aware): a report from the future is refused.
    """
    problems: list[Problem] = []

    def bad(message: str, fix: str) -> None:
        problems.append(Problem(permit_number, None, message, fix))

    if permit is None:
        bad("there is no such permit in the registry.", "check the number (`esc-gis permits list`).")
    at = report.inspected_at
    if at is None:
        bad("the inspection has no date and time.", "give --at YYYY-MM-DDTHH:MM.")
    elif at > now + _CLOCK_SLACK:
        bad(f"the inspection time {at:%Y-%m-%d %H:%M %Z} is in the future.", "give when it took place.")
    _check_texts(report, bad)
    if report.notified_at is not None:
        if not report.deficiencies:
            bad("a notification time is given, but no deficiency.", "give the deficiencies (--deficiency).")
        elif at is not None and report.notified_at < at:
            bad(
                f"the notification {report.notified_at:%Y-%m-%d %H:%M} is before the inspection {at:%Y-%m-%d %H:%M}.",
                "give when the permittee was told.",
            )
    photos = []
    for path in report.photos:
        photo, err = read_photo(path)
        if err:
            bad(*err)
        elif photo is not None:
            photos.append(photo)
    _check_location(report.location, permit, bad)
    if permit is not None:
        if permit.started_at is None:
            bad("an inspection cannot be recorded before work starts.", "move the permit to active first.")
        elif at is not None and at < permit.started_at:
            bad(
                f"the inspection {at:%Y-%m-%d %H:%M} is before the work started ({permit.started_at:%Y-%m-%d %H:%M}).",
                "give the real date and time.",
            )
        problems += _repaired_problems(report, permit, permit_number)
    return problems, photos


def _check_texts(report: InspectionReport, bad: Callable[[str, str], None]) -> None:
    """Check the report's required texts are given and no deficiency is blank."""
    for name, value, fix in (
        ("inspector", report.inspector, "give the name of who inspected (--inspector)."),
        ("assessment", report.assessment, "give the assessment of the controls' condition (--assessment)."),
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
        bad("the location is not a point.", "give --point X Y in the registry's CRS.")
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
