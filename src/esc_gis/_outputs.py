"""Output paths: checked before any work, so a long run never fails at its last step; written atomically.

Every output is written by :func:`atomic_output`: under its final name in a private folder
beside the target, then given its mode and renamed into place. So a failure leaves nothing
behind, readers never see half a file, drivers that name a layer after the file (GeoJSON)
see the real name, and the file gets the mode the user expects: what ``open()`` would give
(``0o666`` less the umask), or ``0o600`` for anything holding personal data.

Kept free of heavy imports: ``esc-gis slope`` uses it without loading pandas or geopandas.
"""

from __future__ import annotations

__all__ = ["PRIVATE_MODE", "atomic_output", "check_output_file", "check_target", "output_mode", "spreadsheet_text"]

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from esc_gis.errors import OutputExistsError, OutputFormatError


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
    """Refuse a folder, an existing file (unless ``overwrite``) and a missing folder.

    Raises
    ------
    OutputExistsError, OutputFormatError
    """
    if p.is_dir():
        msg = f"{str(p)!r} is a folder; name the output file (e.g. {str(p / 'out')!r} with its extension)."
        raise OutputFormatError(msg)
    if p.exists() and not overwrite:
        msg = f"{str(p)!r} exists; pass --overwrite (overwrite=True) to replace it."
        raise OutputExistsError(msg)
    if not p.parent.exists():
        msg = f"{str(p)!r}: the folder {str(p.parent)!r} does not exist."
        raise OutputFormatError(msg)


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
    OSError
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
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))  # mode 0o700
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
