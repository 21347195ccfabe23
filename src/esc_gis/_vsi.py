"""GDAL's virtual paths (``/vsizip/``, ``/vsigzip/``, ``/vsitar/``): recognised, split, and checked for absence.

An input such as ``/vsizip/sites.zip/sites.geojson`` goes to GDAL exactly as given (a
``pathlib.Path`` would fold the ``//`` of ``/vsizip//abs/sites.zip/x`` and make it relative).
Only one question is answered here, in Python, before GDAL is asked: is the archive there,
and is the member in it? So an absent file still gets "no such file" with the path named,
not GDAL's own words. Anything else about a virtual path (a damaged archive, a member GDAL
cannot read) is left to GDAL and reported as for any file. A reader that looks around its
input (a plan package: its folder, the ``plan.toml`` beside it) walks the archive with
:class:`ArchivePath`, as it walks the disk with :class:`pathlib.Path`.

Kept free of heavy imports (the standard library's, and its archives' only when one is read):
``_outputs`` and the CLI use it.
"""

from __future__ import annotations

__all__ = [
    "STDOUT",
    "ArchivePath",
    "archive_of",
    "as_path",
    "beside",
    "is_stdout",
    "is_vsi",
    "layer_stream",
    "missing_reason",
    "read_text",
    "release_stdout",
    "reserve_stdout",
]

import os
import sys
from pathlib import Path
from typing import BinaryIO, TextIO

#: The prefixes of a file read through an archive; the archive is a local file.
_ARCHIVE_PREFIXES = ("/vsizip/", "/vsigzip/", "/vsitar/")
#: Extensions that end the archive's part of a ``/vsizip/`` or ``/vsitar/`` path.
_ARCHIVE_ENDS = {
    "/vsizip/": (".zip", ".kmz", ".ods", ".xlsx", ".docx"),
    "/vsitar/": (".tar.gz", ".tgz", ".tar"),
}
#: The names of standard output for a written layer: ``-`` (as fio and rio take it) and GDAL's own.
STDOUT = ("-", "/vsistdout/")


def is_stdout(path: str | os.PathLike[str] | None) -> bool:
    """Whether an output path names standard output (``-`` or ``/vsistdout/``).

    Examples
    --------
    >>> is_stdout("-"), is_stdout("/vsistdout/"), is_stdout("out.geojson")
    (True, True, False)
    """
    return path is not None and os.fspath(path) in STDOUT


#: Standard output as it was before :func:`reserve_stdout` sent everything else to stderr.
_RESERVED: list[TextIO] = []


def reserve_stdout() -> None:
    """Keep standard output for the layer alone: whatever else is printed goes to stderr until released.

    A command writing its layer to ``-`` calls it before any work (``-o``'s callback), so its
    summaries, notes and progress (``click.echo``, rich's consoles, all resolving ``sys.stdout``
    when they print) land on stderr, and a pipeline reading stdout gets the GeoJSON alone.
    """
    _RESERVED.append(sys.stdout)
    sys.stdout = sys.stderr


def release_stdout() -> None:
    """Give standard output back, as :func:`reserve_stdout` found it."""
    if _RESERVED:
        sys.stdout = _RESERVED.pop()


def layer_stream() -> BinaryIO:
    """Return the binary stream a layer written to ``-`` goes to: the reserved standard output, else the current."""
    out = _RESERVED[-1] if _RESERVED else sys.stdout
    out.flush()  # text printed before, if any, goes first
    return out.buffer


def is_vsi(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is one of GDAL's virtual paths (``/vsi...``), to be given to GDAL as it is.

    Examples
    --------
    >>> is_vsi("/vsizip/sites.zip/sites.geojson"), is_vsi("sites.zip")
    (True, False)
    """
    return os.fspath(path).startswith("/vsi")


def archive_of(path: str | os.PathLike[str]) -> tuple[str, str] | None:
    """Split an archive path into the archive on disk and the member inside it.

    Parameters
    ----------
    path : str or PathLike
        ``/vsizip/ARCHIVE/MEMBER``, ``/vsitar/ARCHIVE/MEMBER`` or ``/vsigzip/FILE``; the archive
        may be written ``{ARCHIVE}`` as GDAL allows, and is relative to the working folder
        unless it starts with ``/`` (``/vsizip//abs/sites.zip/x``).

    Returns
    -------
    tuple of str, or None
        ``(archive, member)`` (``member`` is ``""`` for the whole archive and for ``/vsigzip/``);
        None for any other path, and for an archive that is itself virtual (``/vsicurl/``...),
        which only GDAL can look into.

    Examples
    --------
    >>> archive_of("/vsizip/data/sites.zip/a/sites.shp")
    ('data/sites.zip', 'a/sites.shp')
    >>> archive_of("/vsizip//tmp/s.zip")
    ('/tmp/s.zip', '')
    >>> archive_of("/vsigzip/x.geojson.gz")
    ('x.geojson.gz', '')
    """
    text = os.fspath(path)
    prefix = next((p for p in _ARCHIVE_PREFIXES if text.startswith(p)), None)
    if prefix is None:
        return None
    rest = text[len(prefix) :]
    if rest.startswith("/vsi"):
        return None
    if rest.startswith("{") and "}" in rest:
        archive, _, member = rest[1:].partition("}")
        return archive, member.lstrip("/")
    if prefix == "/vsigzip/":
        return rest, ""
    low = rest.lower()
    for i in range(len(rest)):
        # The first component ending in an archive extension (sites.zip/sites.shp; a folder
        # named x.zip.d is not one).
        if (i + 1 == len(rest) or rest[i + 1] == "/") and low[: i + 1].endswith(_ARCHIVE_ENDS[prefix]):
            return rest[: i + 1], rest[i + 1 :].strip("/")
    return rest, ""


def beside(folder: str | os.PathLike[str], text: str) -> str:
    """Resolve a path written in a file (a layer set's ``path = ...``) against that file's folder, GDAL's too.

    A plain path is joined to ``folder`` and resolved; a virtual one keeps its prefix and its
    member, its archive joined to ``folder`` (``/vsizip/w.zip/w.shp`` beside ``/data/layers.toml``
    is ``/vsizip//data/w.zip/w.shp``). A path already absolute, or a virtual path GDAL alone
    can look into (``/vsicurl/``), is returned as it is.

    Examples
    --------
    >>> beside("/data", "/vsizip/w.zip/w.shp")
    '/vsizip//data/w.zip/w.shp'
    >>> beside("/data", "/vsizip/{w.gpkg}/w.shp")
    '/vsizip/{/data/w.gpkg}/w.shp'
    >>> beside("/data", "w/w.shp")
    '/data/w/w.shp'
    """
    if not is_vsi(text):
        return os.path.realpath(os.path.join(folder, text))
    parts = archive_of(text)
    if parts is None or os.path.isabs(parts[0]):
        return text
    archive, member = parts
    prefix = text[: text.index("/", 1) + 1]
    where = os.path.realpath(os.path.join(folder, archive))
    if text[len(prefix) :].startswith("{"):
        where = "{" + where + "}"
    return prefix + where + (f"/{member}" if member else "")


def _members(archive: str) -> list[str] | None:
    """Return the names in a zip or tar archive (folders end with ``/``); None if it cannot be listed."""
    # Imported here: _outputs (so every command's start) imports this module.
    import tarfile
    import zipfile

    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                return z.namelist()
        if tarfile.is_tarfile(archive):
            with tarfile.open(archive) as t:
                return [m.name + ("/" if m.isdir() else "") for m in t.getmembers()]
    except (OSError, zipfile.BadZipFile, tarfile.TarError):
        return None
    return None


def missing_reason(path: str | os.PathLike[str]) -> str | None:
    """Say why a virtual path names nothing (the archive, or the member in it, absent); None if it may be there.

    Parameters
    ----------
    path : str or PathLike
        A ``/vsizip/``, ``/vsitar/`` or ``/vsigzip/`` path.

    Returns
    -------
    str or None
        The words after ``"<path>: "``, ending with the fix, e.g. ``"no such file: sites.zip
        holds no 'site.geojson' (it holds sites.geojson). Fix: check the path."``; None when
        the member is there, or when only GDAL can tell (a damaged or unlisted archive).

    Examples
    --------
    >>> missing_reason("/vsizip/nowhere.zip/sites.geojson")
    "no such file: the archive 'nowhere.zip' is missing. Fix: check the path."
    """
    parts = archive_of(path)
    if parts is None:
        return None
    archive, member = parts
    if not os.path.isfile(archive):
        return f"no such file: the archive {archive!r} is missing. Fix: check the path."
    if not member:
        return None
    names = _members(archive)
    if names is None:
        return None  # GDAL will say what is wrong with it
    wanted = member.strip("/")
    clean = [n.lstrip("./") for n in names]
    if any(n.rstrip("/") == wanted or n.startswith(wanted + "/") for n in clean):
        return None
    shown = [n for n in clean if n and not n.endswith("/")][:5]
    held = f" (it holds {', '.join(shown)}{', ...' if len(clean) > len(shown) else ''})" if shown else " (it is empty)"
    return f"no such file: {archive!r} holds no {wanted!r}{held}. Fix: check the path."


def _clean(name: str) -> str:
    """Return an archive member's name as a path inside it: no ``./`` before it, no ``/`` after."""
    while name.startswith("./"):
        name = name[2:]
    return name.strip("/")


class ArchivePath(os.PathLike[str]):
    """A path into a local archive (``/vsizip/``, ``/vsitar/``, ``/vsigzip/``), walked as a :class:`pathlib.Path` is.

    A reader that takes a folder or a file and looks around it (a plan package: its layers,
    the ``plan.toml`` beside them, the files that names) walks an archive with it as it walks
    the disk: :meth:`exists`, :meth:`is_dir`, :meth:`iterdir`, :meth:`read_text`... answer from
    the archive's listing, in Python; GDAL is given :meth:`__fspath__`, the path as written.
    The archive's root is a folder (``/vsizip/plan.zip``); a ``/vsigzip/`` file is one file,
    its folder the archive's on disk. A virtual path only GDAL can look into (``/vsicurl/``)
    is taken to be there, a file, with nothing beside it.

    Examples
    --------
    >>> ArchivePath("/vsizip//data/plan.zip/complete/plan.gpkg").name
    'plan.gpkg'
    >>> str(ArchivePath("/vsizip//data/plan.zip/complete") / "plan.toml")
    '/vsizip//data/plan.zip/complete/plan.toml'
    """

    def __init__(self, text: str) -> None:
        self._text = text
        parts = archive_of(text)
        self._archive: str | None = parts[0] if parts is not None else None
        self._member = _clean(parts[1]) if parts is not None else ""
        self._gzip = text.startswith("/vsigzip/")

    def __fspath__(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"ArchivePath({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArchivePath) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)

    def __lt__(self, other: ArchivePath) -> bool:
        return self._text < other._text

    def __truediv__(self, name: str) -> ArchivePath:
        return ArchivePath(self._text.rstrip("/") + "/" + name)

    @property
    def name(self) -> str:
        """The last part: the member's, else the archive's (``plan.zip``)."""
        import posixpath

        return posixpath.basename(self._member or (self._archive or self._text).rstrip("/"))

    @property
    def suffix(self) -> str:
        import posixpath

        return posixpath.splitext(self.name)[1]

    @property
    def stem(self) -> str:
        import posixpath

        return posixpath.splitext(self.name)[0]

    @property
    def parent(self) -> ArchivePath | Path:
        """The folder holding it: in the archive, or, for the archive's root and a ``/vsigzip/`` file, on disk."""
        if self._archive is None:
            import posixpath

            return ArchivePath(posixpath.dirname(self._text.rstrip("/")))
        if self._gzip or not self._member:
            return Path(self._archive).parent
        return ArchivePath(self._text.rstrip("/").rsplit("/", 1)[0])

    def _listing(self) -> tuple[set[str], set[str]]:
        """Return the archive's files and its folders (those listed, and those its files lie in), as paths in it."""
        names = _members(self._archive) if self._archive is not None and not self._gzip else None
        files = {_clean(n) for n in names or [] if not n.endswith("/")}
        folders = {_clean(n) for n in names or [] if n.endswith("/")}
        for f in files:
            parts = f.split("/")[:-1]
            folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        return files - folders, folders - {""}

    def exists(self) -> bool:
        """Whether the archive is on disk and holds the member (a file or a folder)."""
        if self._archive is None:
            return True  # only GDAL can tell
        return os.path.isfile(self._archive) and (self._gzip or missing_reason(self._text) is None)

    def is_file(self) -> bool:
        if self._archive is None:
            return True
        if self._gzip:
            return os.path.isfile(self._archive)
        return self._member != "" and self._member in self._listing()[0]

    def is_dir(self) -> bool:
        if self._archive is None or self._gzip or not os.path.isfile(self._archive):
            return False
        return not self._member or self._member in self._listing()[1]

    def iterdir(self) -> list[ArchivePath]:
        """Return the files and folders directly in this folder of the archive."""
        if not self.is_dir():
            return []
        prefix = self._member + "/" if self._member else ""
        files, folders = self._listing()
        children = {n[len(prefix) :].split("/", 1)[0] for n in files | folders if n.startswith(prefix)}
        return [self / c for c in sorted(children) if c]

    def read_bytes(self) -> bytes:
        """Return the member's bytes, read from the archive.

        Raises
        ------
        FileNotFoundError
            If the archive, or the member in it, is absent.
        OSError
            If the archive cannot be read, or is one only GDAL can look into.
        """
        import errno
        import gzip
        import tarfile
        import zipfile

        if self._archive is None:
            raise OSError(errno.EIO, "only GDAL can read this virtual path", self._text)
        if not self.exists() or self.is_dir():
            raise FileNotFoundError(errno.ENOENT, "no such file in the archive", self._text)
        try:
            if self._gzip:
                with gzip.open(self._archive) as g:
                    return g.read()
            if zipfile.is_zipfile(self._archive):
                with zipfile.ZipFile(self._archive) as z:
                    name = next(n for n in z.namelist() if _clean(n) == self._member)
                    return z.read(name)
            with tarfile.open(self._archive) as t:
                member = next(m for m in t.getmembers() if _clean(m.name) == self._member)
                f = t.extractfile(member)
                if f is None:
                    raise FileNotFoundError(errno.ENOENT, "not a file in the archive", self._text)
                return f.read()
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, StopIteration) as exc:
            raise OSError(errno.EIO, f"the archive cannot be read ({exc})", self._text) from None

    def read_text(self, encoding: str = "utf-8") -> str:
        """Return the member's text (see :meth:`read_bytes`; UnicodeDecodeError if it is not in ``encoding``)."""
        return self.read_bytes().decode(encoding)

    def stat(self) -> os.stat_result:
        """Return a ``stat`` whose ``st_size`` is the member's size as the archive lists it (the rest zero).

        Nothing is read but the listing, except for ``/vsigzip/``, whose size is untold
        without reading it all: its ``st_size`` is 0 when it is empty, else 1.
        """
        import gzip
        import tarfile
        import zipfile

        size = 0
        if self._archive is not None and self.is_file():
            try:
                if self._gzip:
                    with gzip.open(self._archive) as g:
                        size = len(g.read(1))
                elif zipfile.is_zipfile(self._archive):
                    with zipfile.ZipFile(self._archive) as z:
                        size = next(i.file_size for i in z.infolist() if _clean(i.filename) == self._member)
                else:
                    with tarfile.open(self._archive) as t:
                        size = next(m.size for m in t.getmembers() if _clean(m.name) == self._member)
            except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError, StopIteration):
                size = 1  # not empty as far as can be told: GDAL says what is wrong with it
        return os.stat_result((0, 0, 0, 0, 0, 0, size, 0, 0, 0))


def as_path(path: str | os.PathLike[str]) -> Path | ArchivePath:
    """Return ``path`` as a :class:`pathlib.Path`, or an :class:`ArchivePath` when it is virtual.

    Examples
    --------
    >>> as_path("/vsizip/plan.zip/plan.gpkg"), as_path("plan.gpkg")
    (ArchivePath('/vsizip/plan.zip/plan.gpkg'), PosixPath('plan.gpkg'))
    """
    return ArchivePath(os.fspath(path)) if is_vsi(path) else Path(path)


def read_text(path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
    """Read a small text file (a ``plan.toml``, a schedule), on disk or inside an archive.

    Raises
    ------
    FileNotFoundError
        If it, or its archive, is absent.
    OSError, UnicodeDecodeError
        As :meth:`pathlib.Path.read_text`.
    """
    return as_path(path).read_text(encoding=encoding)
