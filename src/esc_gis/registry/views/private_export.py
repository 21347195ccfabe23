"""The private archive of inspections: reports, deficiencies, repairs and photo files, nothing lost.

One ``.zip`` (readable by its owner only) holds

- ``inspections.csv``: every report's contents, its time in UTC, its point (X, Y in the registry's CRS),
  who inspected (holder or office), whether before work started, and an office inspection's checklist;
  free text that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``) starts with ``'``;
- ``deficiencies.csv``: every deficiency, its repair's due time, when it was repaired and how;
- ``photos.csv``: every photo's id, report, name, type, size, SHA-256 and file in the archive;
- ``photos/<id>-<name>``: the photos' bytes, checked against their recorded SHA-256 on the way out;
- ``SHA256SUMS``: the photos' checksums in ``sha256sum -c`` form.

:func:`read_photos` reads the photos back and checks every checksum, so a restore knows it
has the bytes the registry recorded.
"""

from __future__ import annotations

__all__ = ["ARCHIVE_FILES", "export_inspections", "read_photos"]

import csv
import hashlib
import io
import os
import re
import zipfile
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esc_gis.errors import RegistryError
from esc_gis.registry.domain.deadlines import repair_due

if TYPE_CHECKING:
    from esc_gis.registry.service.registry import Registry

#: The tables in the archive, and their columns.
ARCHIVE_FILES: dict[str, tuple[str, ...]] = {
    "inspections.csv": (
        "id",
        "permit_number",
        "inspected_at_utc",
        "inspector",
        "assessment",
        "work_done",
        "phase",
        "recorded_by",
        "location_x",
        "location_y",
        "crs",
        "inspected_by",
        "pre_start",
        "adjoining_repairs",
        "on_site_documents",
        "certificate_posted",
    ),
    "deficiencies.csv": (
        "id",
        "inspection_id",
        "permit_number",
        "description",
        "notified_at_utc",
        "repair_due_utc",
        "repaired_at_utc",
        "repair_detail",
    ),
    "photos.csv": ("id", "inspection_id", "permit_number", "filename", "content_type", "size_bytes", "sha256", "file"),
}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


#: Columns the archive writes as they are: numbers, and the names a restore reads back (``file``
#: is listed in ``SHA256SUMS``). Every other column is free text, quoted for spreadsheets.
_AS_WRITTEN = frozenset({"location_x", "location_y", "sha256", "file"})


def _csv(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> bytes:
    from esc_gis._outputs import spreadsheet_text

    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=columns)
    w.writeheader()
    # An inspector's name typed as =HYPERLINK(...) must not run when the office opens the CSV,
    # as in the inspection log (a negative X, -123.4, stays a number).
    w.writerows({k: v if k in _AS_WRITTEN else spreadsheet_text(v) for k, v in row.items()} for row in rows)
    return buf.getvalue().encode("utf-8")


def export_inspections(reg: Registry, target: str | os.PathLike[str], *, overwrite: bool = False) -> tuple[int, int]:
    """Write every inspection report, deficiency, repair and photo of the registry to a private ``.zip``.

    Returns
    -------
    (int, int)
        The numbers of reports and photos written.

    Raises
    ------
    OutputFormatError, OutputExistsError
        If the path is not .zip, or exists without ``overwrite``.
    RegistryError
        If a photo's bytes no longer match their recorded SHA-256 (nothing is written then).
    """
    from esc_gis._outputs import atomic_output, check_output_file

    p = check_output_file(
        target, suffixes=(".zip",), kind="the inspections' archive is written as .zip", overwrite=overwrite
    )
    code = reg.crs.to_epsg()
    crs = f"EPSG:{code}" if code else reg.crs.to_wkt()
    inspections: list[dict[str, Any]] = []
    deficiencies: list[dict[str, Any]] = []
    photos: list[dict[str, Any]] = []
    for permit in reg.permits():
        for r in permit.reports:
            loc = r.location if r.location is not None and not r.location.is_empty else None
            inspections.append(
                {
                    "id": r.id,
                    "permit_number": permit.permit_number,
                    "inspected_at_utc": _iso(r.inspected_at),
                    "inspector": r.inspector,
                    "assessment": r.assessment,
                    "work_done": r.work_done,
                    "phase": r.phase,
                    "recorded_by": r.recorded_by,
                    "location_x": None if loc is None else loc.x,
                    "location_y": None if loc is None else loc.y,
                    "crs": crs,
                    # Who inspected (holder or office; empty before it was recorded) and the checklist.
                    "inspected_by": r.by,
                    "pre_start": "yes" if r.pre_start else "no",
                    "adjoining_repairs": r.adjoining_repairs,
                    "on_site_documents": _yes_no(r.on_site_documents),
                    "certificate_posted": _yes_no(r.certificate_posted),
                }
            )
            for d in r.deficiencies:
                due = repair_due(d.inspected_at, reg.profile, ids=[d.id], notified_at=d.notified_at).due
                deficiencies.append(
                    {
                        "id": d.id,
                        "inspection_id": r.id,
                        "permit_number": permit.permit_number,
                        "description": d.description,
                        "notified_at_utc": _iso(d.notified_at),
                        "repair_due_utc": due.isoformat(),
                        "repaired_at_utc": _iso(d.repaired_at),
                        "repair_detail": d.repair_detail,
                    }
                )
            for ph in r.photos:
                photos.append(
                    {
                        "id": ph.id,
                        "inspection_id": r.id,
                        "permit_number": permit.permit_number,
                        "filename": ph.filename,
                        "content_type": ph.content_type,
                        "size_bytes": ph.size_bytes,
                        "sha256": ph.sha256,
                        "file": f"photos/{ph.id}-{_UNSAFE.sub('_', ph.filename) or 'photo'}",
                    }
                )
    from esc_gis._csvt import csvt_text, row_types

    with atomic_output(p, private=True) as tmp, zipfile.ZipFile(tmp, "w") as z:
        for name, rows in (
            ("inspections.csv", inspections),
            ("deficiencies.csv", deficiencies),
            ("photos.csv", photos),
        ):
            columns = ARCHIVE_FILES[name]
            z.writestr(name, _csv(rows, columns), compress_type=zipfile.ZIP_DEFLATED)
            # Its column types beside it, as GDAL reads them (ogrinfo /vsizip/inspections.zip/photos.csv).
            types = row_types(len(columns), ([row.get(c) for c in columns] for row in rows))
            z.writestr(name.replace(".csv", ".csvt"), csvt_text(types))
        for row in photos:
            data = reg.photo(int(row["id"])).data or b""  # checked against its SHA-256 by the registry
            z.writestr(row["file"], data, compress_type=zipfile.ZIP_STORED)  # photos are compressed already
        z.writestr("SHA256SUMS", "".join(f"{r['sha256']}  {r['file']}\n" for r in photos))
    return len(inspections), len(photos)


def read_photos(archive: str | os.PathLike[str]) -> dict[int, bytes]:
    """Read an archive's photos back: photo id -> bytes, each checked against its recorded SHA-256.

    Raises
    ------
    RegistryError
        If the archive cannot be read, lacks a photo it lists, or a photo does not match its checksum.
    """
    p = Path(archive)
    try:
        with zipfile.ZipFile(p) as z:
            listed = list(csv.DictReader(io.StringIO(z.read("photos.csv").decode("utf-8"))))
            found = [(row, z.read(row["file"])) for row in listed]
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        msg = f"Cannot read the inspections' archive {p}: {exc}."
        raise RegistryError(msg) from None
    bad = [row["file"] for row, data in found if hashlib.sha256(data).hexdigest() != row["sha256"]]
    if bad:
        msg = f"{p}: photo(s) {', '.join(bad)} do not match their recorded SHA-256; the archive is damaged."
        raise RegistryError(msg)
    return {int(row["id"]): data for row, data in found}


def _yes_no(v: bool | None) -> str | None:
    return None if v is None else ("yes" if v else "no")
