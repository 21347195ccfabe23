"""Errors and warnings of esc_gis.

Every exception raised on purpose by esc_gis derives from :class:`EscGisError`, and each
child also derives from the built-in that a caller would expect (``ValueError`` for bad
values, ``OSError`` for files), as rasterio does. The command line turns any
:class:`EscGisError` into a one-paragraph message and a non-zero exit, never a traceback.
"""

from __future__ import annotations

__all__ = [
    "BandError",
    "CRSError",
    "CoordinatesNotInCRSError",
    "EscGisError",
    "EscGisWarning",
    "FarFromZoneWarning",
    "IllegalTransitionError",
    "LayerReadError",
    "LayerSetError",
    "MapAssetsError",
    "NotAPlanPackageError",
    "OutputExistsError",
    "OutputFolderError",
    "OutputFormatError",
    "OutputIsInputError",
    "PermitNotFoundError",
    "Problem",
    "ProfileError",
    "RegistryError",
    "RequestError",
    "ServiceConfigError",
    "ToolError",
    "UnitsError",
    "ValidationError",
    "install_hint",
]

from dataclasses import dataclass


class EscGisError(Exception):
    """Raised for any error that esc_gis reports on purpose."""


class EscGisWarning(UserWarning):
    """Warned for anything esc_gis can do but a user should know about (the CLI shows it)."""


class FarFromZoneWarning(EscGisWarning):
    """Warned when data lie far outside the area the measuring CRS was designed for."""


class LayerReadError(EscGisError, OSError):
    """Raised when a layer file is missing, unreadable or empty."""


class NotAPlanPackageError(LayerReadError):
    """Raised when what ``esc-gis review`` is given cannot be a plan package at all.

    Not a broken package (which gets a report saying what is missing) but something else: a
    file GDAL cannot open (a picture renamed ``.gpkg``), an empty file or folder, a GeoPackage
    with none of the plan's layers. A verdict on it would mislead, so none is drawn.
    """


class CRSError(EscGisError, ValueError):
    """Raised when a layer has no CRS, or a CRS that must not be used for measuring."""


class CoordinatesNotInCRSError(CRSError, ValueError):
    """Raised when coordinates cannot be in the CRS they are labelled with (off the globe, or far from its area).

    A CRS label is believed only where the numbers allow it: feet labelled as degrees
    would otherwise be screened as "outside, 0 sq ft" everywhere, with exit 0.
    """


class UnitsError(EscGisError, ValueError):
    """Raised when a unit is unknown or cannot be converted."""


class BandError(EscGisError, ValueError):
    """Raised when a multi-band raster is given without saying which band to use, or a band it lacks."""


class ProfileError(EscGisError, ValueError):
    """Raised when an ordinance profile is missing a number or holds a bad one."""


class LayerSetError(EscGisError, ValueError):
    """Raised when a layer-set manifest (layers.toml) is missing or malformed."""


class OutputExistsError(EscGisError, FileExistsError):
    """Raised when an output file exists and overwriting was not asked for."""


class OutputFormatError(EscGisError, ValueError):
    """Raised when an output path has an extension esc_gis cannot write."""


class OutputIsInputError(EscGisError, ValueError):
    """Raised when an output would be written over (or inside) one of the command's inputs, whatever --overwrite."""


class OutputFolderError(EscGisError, PermissionError):
    """Raised when an output's folder cannot be written to (no permission, a read-only file system)."""


class MapAssetsError(EscGisError, FileNotFoundError):
    """Raised when an offline map cannot find the browser assets it must inline."""


class RegistryError(EscGisError, OSError):
    """Raised when a permit registry cannot be opened, is not one, or has an unknown schema version."""


class PermitNotFoundError(EscGisError, LookupError):
    """Raised when no permit in the registry has the given number."""


class IllegalTransitionError(EscGisError, ValueError):
    """Raised for a permit transition the life cycle does not allow, or one lacking its reasons."""


class RequestError(EscGisError, ValueError):
    """Raised when the web service refuses a request's input (malformed, too large, not a polygon).

    Its message goes to the public as it is: it names the input and the fix, never a path on
    the server or a traceback.
    """


class ServiceConfigError(EscGisError, ValueError):
    """Raised when the web service's own configuration (an overrides file, a written configuration) cannot be used."""


class ToolError(EscGisError, OSError):
    """Raised when a system program esc_gis runs (chromium, for PDF reports) is missing or fails."""


@dataclass(frozen=True)
class Problem:
    """One problem found in an input: where it is, what is wrong, and how to fix it.

    Parameters
    ----------
    source : str
        The file (and layer) the problem is in.
    row : int or None
        1-based feature number in the file, or None for a problem with the whole layer.
    message : str
        What is wrong, quoting the offending value.
    fix : str
        What the user can do about it.
    site_id : str or None
        The row's id, when it has one, to help find the row in a GIS.
    """

    source: str
    row: int | None
    message: str
    fix: str = ""
    site_id: str | None = None

    def __str__(self) -> str:
        # A problem with a whole input (a layer, a file, an option) names the input alone.
        where = "" if self.row is None else f", row {self.row}"
        if self.site_id is not None:
            where += f" (id {self.site_id!r})"
        text = f"{self.source}{where}: {self.message}"
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


class ValidationError(EscGisError, ValueError):
    """Raised once, after validating every row, with every problem found.

    Parameters
    ----------
    problems : list of Problem
        Every problem found, in file and row order.
    """

    #: At most this many problems are spelled out in the message; all are kept in ``problems``.
    max_listed = 50

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        n = len(self.problems)
        lines = [f"{n} problem{'s' if n != 1 else ''} found in the input:"]
        lines += [f"  - {p}" for p in self.problems[: self.max_listed]]
        if n > self.max_listed:
            lines.append(f"  ... and {n - self.max_listed} more of the same kinds.")
        super().__init__("\n".join(lines))


def install_hint(extra: str, packages: str) -> str:
    """Say how to add an optional part (a pyproject extra) to this installation, by the routes that exist.

    esc_gis is not published on PyPI, so ``pip install 'esc-gis[extra]'`` would find nothing:
    the part comes with ``make install`` in a clone, or with the wheel and its extra.

    Examples
    --------
    >>> install_hint("dask", "dask.distributed")  # doctest: +ELLIPSIS
    "Fix: in a clone, `make install` has it; from the wheel, pip install '.../esc_gis-...-py3-none-any.whl[dask]' ...
    """
    from esc_gis import __version__

    return (
        f"Fix: in a clone, `make install` has it; from the wheel, pip install "
        f"'.../esc_gis-{__version__}-py3-none-any.whl[{extra}]' (the wheel `make wheel` builds, with its "
        f"{extra} extra), or pip install {packages} into the same environment."
    )
