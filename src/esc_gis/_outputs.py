"""Output paths: checked before any work, so a long run never fails at its last step.

Kept free of heavy imports: ``esc-gis slope`` uses it without loading pandas or geopandas.
"""

from __future__ import annotations

__all__ = ["check_output_file", "check_target"]

import os
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
