"""Move a registry between a GeoPackage and PostGIS (either way, or file to file): ``esc-gis permits copy``.

A Village that starts on a file and grows moves its registry whole: the history, the parties,
the photos' bytes, the numbering, every projection with its keys (:mod:`esc_gis.registry.store.copy`).
The destination is made as ``permits init`` makes one, in the source's CRS, and must hold
nothing: a copy never merges two registries. The rows are written in one transaction of the
destination and read back before it commits; a GeoPackage is written to a temporary file
beside the destination and renamed into place, so a failure part-way leaves no half registry.
Then both registries are verified (:meth:`~esc_gis.registry.Registry.verify`): the copy's
differences are the source's, none when the source verifies.
"""

from __future__ import annotations

__all__ = ["CopyResult", "copy_registry"]

import errno
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esc_gis.errors import RegistryError
from esc_gis.registry.store.conninfo import is_conninfo

if TYPE_CHECKING:
    # For annotations only: the profile loads its calendar models, which a listing never needs.
    from esc_gis.profile import Profile
    from esc_gis.registry.store.backend import Backend


@dataclass(frozen=True)
class CopyResult:
    """What :func:`copy_registry` moved, and what verifying either side found.

    Attributes
    ----------
    source : str
        The registry copied, as people are shown it (no password).
    destination : str
        The copy, shown the same way.
    rows : dict of str to int
        The rows copied, by table.
    created : bool
        Whether the destination was made by the copy (False: an empty registry was there).
    source_differences : tuple of str
        What :meth:`~esc_gis.registry.Registry.verify` says of the source (empty: the tables equal the history).
    destination_differences : tuple of str
        What it says of the copy: the source's, when the copy is its equal.
    """

    source: str
    destination: str
    rows: dict[str, int] = field(default_factory=dict)
    created: bool = True
    source_differences: tuple[str, ...] = ()
    destination_differences: tuple[str, ...] = ()

    @property
    def events(self) -> int:
        """The history's events copied."""
        return self.rows.get("history", 0)

    @property
    def permits(self) -> int:
        """The permits copied."""
        return self.rows.get("permits", 0)

    @property
    def photos(self) -> int:
        """The inspection photos copied, bytes and all."""
        return self.rows.get("inspection_photos", 0)

    @property
    def verified(self) -> bool:
        """Whether the copy verifies as its source does (True: the same differences, usually none)."""
        return self.source_differences == self.destination_differences


def _open_source(source: str | os.PathLike[str]) -> Backend:
    """Open the registry to copy, refusing one that is absent, not a registry, or of another schema version."""
    from esc_gis.registry.store.backend import open_backend
    from esc_gis.registry.store.conninfo import shown

    try:
        b = open_backend(source)
    except RegistryError as exc:
        raise RegistryError(f"Cannot copy from {shown(source)}: {exc}") from None
    try:
        b.check_version()
    except BaseException as exc:
        b.close()
        if isinstance(exc, RegistryError):
            raise RegistryError(f"Cannot copy from {shown(source)}: {exc}") from None
        raise
    return b


def _refuse_occupied(b: Backend, where: str, cur: Any | None = None) -> None:
    """Refuse a destination holding any row, naming what it holds and the fix."""
    from esc_gis.registry.store.copy import occupied

    if cur is None:
        with b.read() as c:
            held = occupied(c, b)
    else:
        held = occupied(cur, b)
    if held:
        rest = sum(n for t, n in held.items() if t not in ("permits", "history"))
        what = f"{held.get('permits', 0)} permit(s), {held.get('history', 0)} history event(s), {rest} other row(s)"
        msg = (
            f"{where} is not empty: it holds {what}: a copy goes only into an empty registry, never over one or into "
            "one. Give a new .gpkg path or an empty PostgreSQL database or schema (see 'When the registry "
            "outgrows a file' in the documentation)."
        )
        raise RegistryError(msg)


def _same(source: str | os.PathLike[str], destination: str | os.PathLike[str]) -> bool:
    if is_conninfo(source) or is_conninfo(destination):
        return str(source) == str(destination)
    return Path(source).resolve() == Path(destination).resolve()


def copy_registry(
    source: str | os.PathLike[str],
    destination: str | os.PathLike[str],
    *,
    profile: Profile | None = None,
    progress: Callable[[int, int], None] | None = None,
    verify: bool = True,
) -> CopyResult:
    """Copy the registry at ``source`` into ``destination``, an empty or absent registry on either back end.

    Parameters
    ----------
    source : path or str
        A ``.gpkg`` path or a PostgreSQL connection string: a registry of this esc_gis's schema version.
    destination : path or str
        A ``.gpkg`` path that does not exist (or is an empty registry), or a PostgreSQL database
        or schema without a registry (one is made, as ``permits init`` does) or with an empty one.
    profile : Profile, optional
        The ordinance profile verifying uses (its clock and deadlines); default the Village's.
    progress : callable, optional
        Called with (rows written, rows in all) after each batch written, for a progress bar.
    verify : bool, default True
        Verify both registries afterwards (:meth:`~esc_gis.registry.Registry.verify`).

    Returns
    -------
    CopyResult
        The rows copied by table, and each side's differences.

    Raises
    ------
    RegistryError
        If the source is absent, not a registry, or of another schema version; the destination
        is the source, holds any row, is a file that is not a registry, or is in another CRS;
        or either database refuses. A failure leaves no row at the destination: no file for a new
        GeoPackage, at most the empty registry made for it on PostGIS (a copy run again fills it).

    Examples
    --------
    >>> from esc_gis.registry import copy_registry
    >>> result = copy_registry("permits.gpkg", "postgresql://clerk@db.village.example/village")  # doctest: +SKIP
    >>> result.events, result.photos, result.destination_differences  # doctest: +SKIP
    (1260, 48, ())
    """
    from esc_gis.profile import load_profile
    from esc_gis.registry.store.conninfo import shown

    prof = profile or load_profile()
    if _same(source, destination):
        msg = f"The source and the destination are the same registry ({shown(source)}); give another destination."
        raise RegistryError(msg)
    src = _open_source(source)
    try:
        if is_conninfo(destination):
            rows, created = _into_postgis(src, str(destination), prof, progress)
        else:
            rows, created = _into_geopackage(src, Path(destination), prof, progress)
    finally:
        src.close()
    result = CopyResult(shown(source), shown(destination), rows, created)
    if not verify:
        return result
    return CopyResult(
        result.source,
        result.destination,
        rows,
        created,
        _verified(source, prof),
        _verified(destination, prof),
    )


def _verified(target: str | os.PathLike[str], profile: Profile) -> tuple[str, ...]:
    from esc_gis.registry.service.registry import open_registry

    with open_registry(target, profile=profile) as reg:
        return tuple(str(d) for d in reg.verify())


def _crs_wkt(src: Backend) -> str:
    """Return the CRS definition the destination records: a GeoPackage's own, word for word; else EPSG's."""
    if src.dialect == "sqlite":
        with src.read() as cur:
            cur.execute("SELECT definition FROM gpkg_spatial_ref_sys WHERE srs_id = ?", (src.srid,))
            row = cur.fetchone()
        if row and row[0] and row[0] != "undefined":
            return str(row[0])
    from pyproj import CRS

    return CRS.from_epsg(src.srid).to_wkt()  # as `permits init` writes it (PostGIS keeps only the SRID)


def _fill(src: Backend, dst: Backend, where: str, progress: Callable[[int, int], None] | None) -> dict[str, int]:
    """Copy every row in one write transaction of ``dst``, refusing it if it holds any row by then."""
    from esc_gis.registry.store.copy import copy_tables

    with src.read() as src_cur, dst.write() as dst_cur:
        _refuse_occupied(dst, where, dst_cur)  # again, in the transaction: a writer may have come meanwhile
        return copy_tables(src_cur, src, dst_cur, dst, progress=progress)


def _into_postgis(
    src: Backend, url: str, profile: Profile, progress: Callable[[int, int], None] | None
) -> tuple[dict[str, int], bool]:
    """Make (or upgrade) an empty registry at ``url`` and fill it in one transaction.

    A failure while filling rolls back every row; the empty registry made stays, and a copy run
    again goes into it.
    """
    from esc_gis.registry.store.backend import open_backend
    from esc_gis.registry.store.conninfo import shown

    dst = open_backend(url)
    try:
        created = not dst.exists()
        if not created:
            _refuse_occupied(dst, shown(url))  # before a migration touches someone's registry
        dst.migrate(src.srid, _crs_wkt(src), timezone=profile.timezone)
        return _fill(src, dst, shown(url), progress), created
    finally:
        dst.close()


def _into_geopackage(
    src: Backend, path: Path, profile: Profile, progress: Callable[[int, int], None] | None
) -> tuple[dict[str, int], bool]:
    """Write a new GeoPackage beside ``path`` and rename it into place, or fill the empty registry there.

    Raises
    ------
    RegistryError
        If ``path`` exists and is not an empty registry, or its folder cannot be written.
    """
    from esc_gis.registry.store.backend import open_backend

    if path.suffix.lower() != ".gpkg":
        msg = f"A GeoPackage registry's name must end in .gpkg, not {path.name!r} (or give a postgresql:// URL)."
        raise RegistryError(msg)
    if path.exists():
        dst = open_backend(path)
        try:
            if not dst.exists():
                msg = (
                    f"{path} exists and is not a permit registry; a copy never writes over a file. "
                    "Give a new .gpkg path."
                )
                raise RegistryError(msg)
            _refuse_occupied(dst, str(path))
            dst.migrate(src.srid, _crs_wkt(src), timezone=profile.timezone)
            return _fill(src, dst, str(path), progress), False
        finally:
            dst.close()
    if not path.parent.is_dir():
        msg = f"Cannot write {path}: the folder {path.parent} does not exist."
        raise RegistryError(msg)
    # Hidden, beside the destination (one file system: the rename is atomic), and removed on failure.
    part = path.with_name(f".{path.stem}.{uuid.uuid4().hex[:8]}.part.gpkg")
    try:
        dst = open_backend(part, create=True)
        try:
            dst.migrate(src.srid, _crs_wkt(src), timezone=profile.timezone)
            rows = _fill(src, dst, str(path), progress)
        finally:
            dst.close()
        try:
            os.link(part, path)  # never over a file made meanwhile (os.replace would be)
        except FileExistsError:
            msg = f"{path} was made by someone else while copying; nothing was written. Give a new .gpkg path."
            raise RegistryError(msg) from None
        except OSError as exc:
            if path.exists() or exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
                msg = f"Cannot write {path}: {exc.strerror or exc}."
                raise RegistryError(msg) from None
            os.replace(part, path)  # a file system without hard links: checked absent just now
    finally:
        for leftover in (part, part.with_name(part.name + "-journal")):
            leftover.unlink(missing_ok=True)
    return rows, True
