"""Output safety: every output is checked before any work and written atomically, never over an input.

One module every command's writes go through, so a long run never fails at its last step,
and no output ever eats an input:

- :func:`check_target` (which every format's own check calls: vector layers, rasters, maps,
  reports) refuses, before any work, a path that is a folder, an existing file without
  ``overwrite``, a missing folder, a folder that cannot be written to (probed by creating a
  file there, so it also catches root on a read-only file system), and, **whatever**
  ``overwrite`` says, a path that is one of the command's inputs or lies inside an input
  folder. The inputs are declared once per command with :func:`reads` (or, from Python,
  :func:`protected_inputs`); a layer set's or a profile's TOML brings the files it names.
- Sidecars (the files written beside an output: a screening's skipped features and run
  findings, soil loss's phases and windows) are named after the *whole* output file
  (:func:`sidecar_path`: ``screening.gpkg.skipped.gpkg``), so ``x.gpkg`` and ``x.csv`` never
  share one. A sidecar whose output is gone is stale and is replaced without ``overwrite``
  (:func:`check_sidecar`); one the run does not write again is removed (:func:`drop_sidecar`).
  A raster's QGIS style keeps the raster's stem (``slope.qml``), the only name QGIS loads
  with the raster (:func:`check_style`). A CSV's column types go in ``<stem>.csvt``
  (:func:`csvt_path`), the name GDAL reads; :func:`check_target` checks it with its CSV.

Every output is written by :func:`atomic_output`: under its final name in a private folder
beside the target, then given its mode and renamed into place. So a failure leaves nothing
behind, readers never see half a file, drivers that name a layer after the file (GeoJSON)
see the real name, and the file gets the mode the user expects: what ``open()`` would give
(``0o666`` less the umask), or ``0o600`` for anything holding personal data.

Kept free of heavy imports: ``esc-gis slope`` uses it without loading pandas or geopandas.
"""

from __future__ import annotations

__all__ = [
    "PRIVATE_MODE",
    "RASTER_SUFFIXES",
    "atomic_output",
    "check_output_file",
    "check_sidecar",
    "check_style",
    "check_target",
    "csvt_path",
    "drop_sidecar",
    "output_mode",
    "protected_inputs",
    "reads",
    "sidecar_path",
    "spreadsheet_text",
    "style_path",
]

import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from esc_gis._vsi import archive_of, beside
from esc_gis.errors import OutputExistsError, OutputFolderError, OutputFormatError, OutputIsInputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_F = TypeVar("_F", bound=Callable[..., Any])

#: The inputs of the command running now (resolved paths): no output may be written over them.
_INPUTS: ContextVar[tuple[Path, ...]] = ContextVar("esc_gis_inputs", default=())
#: Extensions of the rasters a QGIS style (``<stem>.qml``) is written beside.
RASTER_SUFFIXES = (".tif", ".tiff")


def _input_file(value: object) -> Path | None:
    """Return the file (or folder) an input names, resolved; None for what is no local path (a database URL)."""
    if value is None or isinstance(value, bool):
        return None
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    if not text or "://" in text or text.upper().startswith(("PG:", "POSTGRESQL:")):
        return None
    if text.upper().startswith("GPKG:"):  # GDAL's GPKG:file.gpkg:layer
        text = text[5:].rsplit(":", 1)[0] if text.count(":") > 1 else text[5:]
    if text.startswith("/vsi"):
        parts = archive_of(text)  # the archive on disk is the input; None for /vsicurl/ and kin
        if parts is None:
            return None
        text = parts[0]
    return Path(os.path.realpath(text))


def _named_in_toml(path: Path) -> list[Path]:
    """Return the files a TOML input names (a layer set's ``path = ...`` entries); none if unreadable."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return []  # the command's own reader reports a bad file
    found: list[Path] = []
    tables: list[Any] = [data]
    while tables:
        table = tables.pop()
        if isinstance(table, dict):
            for key, value in table.items():
                if key == "path" and isinstance(value, str):
                    named = _input_file(beside(path.parent, value))  # a /vsizip/ path: its archive
                    if named is not None:
                        found.append(named)
                else:
                    tables.append(value)
        elif isinstance(table, list):
            tables.extend(table)
    return found


def _input_files(values: Iterable[object]) -> tuple[Path, ...]:
    found: list[Path] = []
    for value in values:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            f = _input_file(item)
            if f is None:
                continue
            found.append(f)
            if f.suffix.lower() == ".toml" and f.is_file():
                found += _named_in_toml(f)
            elif f.suffix.lower() == ".csv":
                # GDAL reads a CSV with its CRS and column types beside it: part of the input.
                found += [f.with_suffix(".prj"), csvt_path(f)]
    return tuple(found)


@contextmanager
def protected_inputs(*inputs: object) -> Iterator[tuple[Path, ...]]:
    """Within the block, refuse any output written over one of ``inputs`` (or inside an input folder).

    Parameters
    ----------
    *inputs : path, str, list of them, or None
        The files and folders the work reads. A ``.toml`` input (a layer set, a profile)
        also protects every ``path = ...`` it names, and a ``.csv`` input the ``.prj`` and
        ``.csvt`` GDAL reads with it. Database URLs and None are ignored.

    Yields
    ------
    tuple of pathlib.Path
        Every input protected now (resolved).

    Examples
    --------
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "in.csv").write_text("a")
    1
    >>> with protected_inputs(folder / "in.csv"):
    ...     check_target(folder / "in.csv", overwrite=True)
    Traceback (most recent call last):
    ...
    esc_gis.errors.OutputIsInputError: ...
    """
    token = _INPUTS.set(_INPUTS.get() + _input_files(inputs))
    try:
        yield _INPUTS.get()
    finally:
        _INPUTS.reset(token)


def reads(*params: str) -> Callable[[_F], _F]:
    """Declare which parameters of a command are its inputs: its outputs may never be written over them.

    Put it just above the command's function (below the click decorators); the command runs
    inside :func:`protected_inputs` of those parameters' values.

    Parameters
    ----------
    *params : str
        The command function's parameter names holding input paths.

    Returns
    -------
    callable
        The decorator.
    """

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with protected_inputs(*(kwargs.get(p) for p in params)):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def _refuse_input(p: Path) -> None:
    """Refuse ``p`` if it is one of the protected inputs, the same file under another name, or inside an input folder.

    Raises
    ------
    OutputIsInputError
    """
    inputs = _INPUTS.get()
    if not inputs:
        return
    real = Path(os.path.realpath(p))
    for src in inputs:
        same = real == src
        if not same and real.exists() and src.exists():
            try:
                same = os.path.samefile(real, src)  # a hard link, or a case-insensitive file system
            except OSError:
                same = False
        inside = src.is_dir() and src in real.parents
        if same or inside:
            where = "is" if same else f"lies inside the input folder {str(src)!r}, so it would become part of"
            msg = (
                f"{str(p)!r} {where} an input of this command{'' if not same else f' ({str(src)!r})'}; "
                "esc-gis never writes over its inputs, even with overwrite=True. Name the output elsewhere. "
                "Nothing was written."
            )
            raise OutputIsInputError(msg)


def _probe_folder(folder: Path) -> None:
    """Create and remove a file in ``folder``: the only test of writability that root and read-only mounts obey.

    Raises
    ------
    OutputFolderError
    """
    try:
        fd, probe = tempfile.mkstemp(prefix=".esc-gis-probe.", dir=folder)
    except OSError as exc:
        msg = (
            f"cannot write in the folder {str(folder)!r} ({exc.strerror or exc}); choose a folder you can write "
            "to (or ask for write permission). Nothing was written."
        )
        raise OutputFolderError(msg) from None
    os.close(fd)
    os.unlink(probe)


def check_output_file(
    path: str | os.PathLike[str], *, suffixes: tuple[str, ...], kind: str, overwrite: bool = False
) -> Path:
    """Check the path of a non-vector output (a raster, a map) before any work is done.

    Parameters
    ----------
    path : path
    suffixes : tuple of str
        Allowed extensions, lower case, the first one named in the message.
    kind : str
        What is written, for the message ("slope rasters are written as GeoTIFF").
    overwrite : bool, default False

    Returns
    -------
    pathlib.Path

    Raises
    ------
    OutputFormatError
        If the extension is not one of ``suffixes``, or the folder does not exist.
    OutputExistsError
        If the file exists and ``overwrite`` is false.
    """
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        msg = f"{str(path)!r}: {kind}; name the output {suffixes[0]}."
        raise OutputFormatError(msg)
    check_target(p, overwrite=overwrite)
    return p


def check_target(p: Path, *, overwrite: bool) -> None:
    """Refuse a folder, an input, an existing file (unless ``overwrite``), and a missing or unwritable folder.

    A ``.csv``'s ``.csvt`` (:func:`csvt_path`, its column types) is checked with it: replaced
    with the CSV, and replaced without ``overwrite`` when its CSV is gone (it is stale).

    Parameters
    ----------
    p : pathlib.Path
        The output.
    overwrite : bool
        Replace an existing file (never an input).

    Raises
    ------
    OutputFormatError
        If ``p`` is a folder, or its folder does not exist or is a file.
    OutputIsInputError
        If ``p`` is one of the command's inputs (see :func:`protected_inputs`), whatever ``overwrite``.
    OutputExistsError
        If ``p`` exists and ``overwrite`` is false.
    OutputFolderError
        If nothing can be created in ``p``'s folder.
    """
    p = Path(p)
    if p.is_dir():
        msg = f"{str(p)!r} is a folder; name the output file (e.g. {str(p / 'out')!r} with its extension)."
        raise OutputFormatError(msg)
    _refuse_input(p)
    if p.exists() and not overwrite:
        msg = f"{str(p)!r} exists; pass overwrite=True to replace it."
        raise OutputExistsError(msg)
    folder = p.parent
    if not folder.exists():
        msg = f"{str(p)!r}: the folder {str(folder)!r} does not exist."
        raise OutputFormatError(msg)
    if not folder.is_dir():
        msg = f"{str(p)!r}: {str(folder)!r} is a file, not a folder; name the output in a folder."
        raise OutputFormatError(msg)
    _probe_folder(folder)
    if p.suffix.lower() == ".csv":
        # Its column types (esc_gis._csvt) are replaced with it; a stale one (its CSV gone) never blocks.
        check_target(csvt_path(p), overwrite=overwrite or not p.exists())


def sidecar_path(output: str | os.PathLike[str], role: str, suffix: str | None = None) -> Path:
    """Return the sidecar ``role`` of ``output``: named after the whole output file, beside it.

    Parameters
    ----------
    output : path
        The output the sidecar belongs to.
    role : str
        What it holds (``"skipped"``, ``"run_findings"``, ``"phases"``).
    suffix : str, optional
        Its extension; default the output's own (a sidecar in the output's format).

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> sidecar_path("out/screening.gpkg", "skipped").as_posix()
    'out/screening.gpkg.skipped.gpkg'
    >>> sidecar_path("out/screening.csv", "run_findings", ".csv").as_posix()
    'out/screening.csv.run_findings.csv'
    """
    p = Path(output)
    return p.with_name(f"{p.name}.{role}{p.suffix if suffix is None else suffix}")


def csvt_path(csv_file: str | os.PathLike[str]) -> Path:
    """Return where a CSV's column types go: ``<stem>.csvt``, the name GDAL's CSV driver reads beside it.

    Examples
    --------
    >>> csvt_path("out/screening.csv").as_posix()
    'out/screening.csvt'
    >>> csvt_path("out/screening.gpkg.run_findings.csv").as_posix()
    'out/screening.gpkg.run_findings.csvt'
    """
    return Path(csv_file).with_suffix(".csvt")


def check_sidecar(side: str | os.PathLike[str], output: str | os.PathLike[str], *, overwrite: bool) -> Path:
    """Check a sidecar before any work: as its output, but a stale one (its output gone) never blocks.

    Raises
    ------
    OutputFormatError, OutputIsInputError, OutputExistsError, OutputFolderError
        As :func:`check_target`.
    """
    s = Path(side)
    check_target(s, overwrite=overwrite or not Path(output).exists())
    return s


def drop_sidecar(side: str | os.PathLike[str]) -> None:
    """Remove a sidecar this run did not write again (checked by :func:`check_sidecar`): it describes another run.

    A CSV's ``.csvt`` (:func:`csvt_path`) goes with it.
    """
    Path(side).unlink(missing_ok=True)
    if Path(side).suffix.lower() == ".csv":
        csvt_path(side).unlink(missing_ok=True)


def style_path(raster: str | os.PathLike[str]) -> Path:
    """Return the QGIS style of a raster: ``<stem>.qml``, the one name QGIS loads with the raster.

    QGIS looks for a layer's default style at its file's complete base name plus ``.qml``
    (``slope.tif`` -> ``slope.qml``); ``slope.tif.qml`` would not be loaded.

    Examples
    --------
    >>> style_path("out/slope.tif").as_posix()
    'out/slope.qml'
    """
    return Path(raster).with_suffix(".qml")


def check_style(raster: str | os.PathLike[str], *, overwrite: bool) -> Path:
    """Check a raster's style path: a stale one is replaced; one styling another raster of the stem is kept.

    Raises
    ------
    OutputExistsError
        If the style belongs to another raster of the same stem (``slope.tiff`` beside
        ``slope.tif``) and ``overwrite`` is false.
    OutputFormatError, OutputIsInputError, OutputFolderError
        As :func:`check_target`.
    """
    out = Path(raster)
    style = style_path(out)
    others = [out.with_suffix(s) for s in RASTER_SUFFIXES if out.with_suffix(s) != out and out.with_suffix(s).exists()]
    if style.exists() and others and not overwrite:
        msg = (
            f"{str(style)!r} is the QGIS style of {str(others[0])!r}; pass overwrite=True or name the output otherwise."
        )
        raise OutputExistsError(msg)
    check_target(style, overwrite=overwrite or not out.exists() or bool(others))
    return style


#: The mode of an output holding personal data (names, telephone numbers): the owner's alone.
PRIVATE_MODE = 0o600


def _umask() -> int:
    """Return the process's umask without changing it (Linux reports it; elsewhere set and restore)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def output_mode(*, private: bool = False) -> int:
    """Return the mode an output is given: ``0o600`` if ``private``, else ``0o666`` less the umask.

    Examples
    --------
    >>> old = os.umask(0o022)
    >>> oct(output_mode()), oct(output_mode(private=True))
    ('0o644', '0o600')
    >>> _ = os.umask(old)
    """
    return PRIVATE_MODE if private else 0o666 & ~_umask()


@contextmanager
def atomic_output(target: str | os.PathLike[str], *, private: bool = False) -> Iterator[Path]:
    """Yield a path to write ``target`` at; on success give it its mode and rename it into place.

    The yielded path has ``target``'s own name, inside a folder beside it that only the
    user can enter (so a private file is never readable by others, even while written),
    and on the same file system (so the rename is atomic). Whatever the writer leaves
    beside the file (a GeoPackage's ``-wal``) is removed with the folder.

    Parameters
    ----------
    target : path
        The output's final path (its folder must exist: see :func:`check_target`).
    private : bool, default False
        The output holds personal data: mode ``0o600`` instead of the umask's.

    Yields
    ------
    pathlib.Path

    Raises
    ------
    OutputIsInputError
        If ``target`` is an input of the running command (:func:`protected_inputs`).
    OutputFolderError
        If the folder cannot be written to; nothing is left behind.

    Examples
    --------
    >>> folder = Path(tempfile.mkdtemp())
    >>> with atomic_output(folder / "a.txt", private=True) as tmp:
    ...     _ = tmp.write_text("names")
    >>> oct((folder / "a.txt").stat().st_mode & 0o777), sorted(p.name for p in folder.iterdir())
    ('0o600', ['a.txt'])
    """
    final = Path(target)
    _refuse_input(final)  # checked again here, so a writer that skipped check_target cannot eat an input
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))  # mode 0o700
    except OSError as exc:
        msg = f"cannot write {str(final)!r} ({exc.strerror or exc}); choose a folder you can write to."
        raise OutputFolderError(msg) from None
    try:
        tmp = staging / final.name
        yield tmp
        os.chmod(tmp, output_mode(private=private))
        os.replace(tmp, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


#: Characters that make a spreadsheet read a cell as a formula (or a command, in old Excel).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(value: object) -> object:
    """Return free text safe to open in a spreadsheet: a leading formula character is quoted with ``'``.

    An inspector's note or a receipt number typed as ``=HYPERLINK(...)`` or ``-2+3`` would run as a
    formula when the office opens the CSV in Excel or LibreOffice; the leading ``'`` makes it text
    there (OWASP's CSV injection advice). Non-text values pass unchanged.

    Examples
    --------
    >>> spreadsheet_text("=1+2"), spreadsheet_text("silt fence"), spreadsheet_text(3)
    ("'=1+2", 'silt fence', 3)
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
