"""Coordinate reference systems: assign (``set_crs``) versus transform (``to_crs``).

esc_gis measures in one projected CRS in feet, the profile's or the layer set's measuring
CRS (EPSG:7594, WISCRS Winnebago County ftUS, by default). Data arrive in anything: EPSG:4326
GeoJSON from a web form, EPSG:3857 from a web map, EPSG:3071 from the state. They are
transformed before anything is measured. Data without a CRS are never guessed at: assigning
one is the user's explicit choice (``assume_crs``), and it never overrides a CRS a file has.
"""

from __future__ import annotations

__all__ = ["assign_crs", "measuring_crs", "parse_crs", "to_measuring_crs"]

from typing import TYPE_CHECKING, Any

from pyproj import CRS
from pyproj.exceptions import CRSError as _PyprojCRSError

from esc_gis.errors import CRSError, UnitsError
from esc_gis.units import sqft_per_crs_area_unit

if TYPE_CHECKING:
    import geopandas as gpd


def parse_crs(value: Any, *, what: str = "CRS") -> CRS:
    """Parse anything :meth:`pyproj.CRS.from_user_input` accepts.

    Raises
    ------
    CRSError
        If ``value`` names no CRS.

    Examples
    --------
    >>> parse_crs("EPSG:7594").to_epsg()
    7594
    """
    try:
        return CRS.from_user_input(value)
    except _PyprojCRSError:
        msg = f"{what} {value!r} is not a coordinate reference system; use e.g. 'EPSG:7594'."
        raise CRSError(msg) from None


def measuring_crs(value: Any) -> CRS:
    """Return ``value`` as a CRS fit for measuring area and distance.

    Parameters
    ----------
    value : Any
        A CRS, or anything that names one.

    Returns
    -------
    pyproj.CRS

    Raises
    ------
    CRSError
        If the CRS is geographic (degrees), a Mercator projection (EPSG:3857 inflates area
        about 1.94 times at 44° N), or has no single linear unit.

    Examples
    --------
    >>> measuring_crs("EPSG:3857")
    Traceback (most recent call last):
    ...
    esc_gis.errors.CRSError: EPSG:3857 is a Mercator projection ...
    """
    crs = parse_crs(value, what="Measuring CRS")
    name = crs.to_string()
    if not crs.is_projected:
        msg = (
            f"{name} is not projected: areas and distances are never measured in degrees. "
            "Use a projected CRS in feet, e.g. EPSG:7594 (WISCRS Winnebago County, ftUS)."
        )
        raise CRSError(msg)
    op = crs.coordinate_operation
    method = op.method_name.lower() if op is not None else ""
    # Transverse and oblique Mercator are conformal local grids (WISCRS, UTM, WTM) and fine;
    # the cylindrical Mercator family (incl. Web Mercator) inflates area away from the equator.
    if "mercator" in method and "transverse" not in method and "oblique" not in method:
        msg = (
            f"{name} is a Mercator projection ({method}): it misstates area (Web "
            "Mercator reads about 1.94x large at 44° N). Use EPSG:7594 or another local CRS."
        )
        raise CRSError(msg)
    try:
        sqft_per_crs_area_unit(crs)
    except UnitsError as exc:
        raise CRSError(str(exc)) from None
    return crs


def assign_crs(gdf: gpd.GeoDataFrame, *, assume_crs: Any | None, source: str) -> gpd.GeoDataFrame:
    """Assign ``assume_crs`` to a layer that has no CRS; never transform, never override.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        The layer as read.
    assume_crs : Any, optional
        The CRS the user says the coordinates are in.
    source : str
        The file name, for the message.

    Returns
    -------
    geopandas.GeoDataFrame
        ``gdf`` itself when it has a CRS, else a copy with ``assume_crs`` set.

    Raises
    ------
    CRSError
        If the layer has no CRS and none was assumed.
    """
    if gdf.crs is not None:
        return gdf
    if assume_crs is None:
        msg = (
            f"{source} has no coordinate reference system (no .prj or CRS in the file), so its "
            "coordinates cannot be placed on the ground. Fix: tell esc-gis what they are with "
            "--assume-crs EPSG:XXXX (e.g. EPSG:7594 for Winnebago County feet, EPSG:4326 for "
            "longitude/latitude), or define the CRS in your GIS and export again."
        )
        raise CRSError(msg)
    return gdf.set_crs(parse_crs(assume_crs, what="--assume-crs"))


def to_measuring_crs(gdf: gpd.GeoDataFrame, crs: CRS) -> gpd.GeoDataFrame:
    """Transform a layer into the measuring CRS (a no-op when it is already there).

    Raises
    ------
    CRSError
        If the layer has no CRS (assign one first with :func:`assign_crs`).
    """
    if gdf.crs is None:
        msg = "Layer has no CRS; assign one with assign_crs(..., assume_crs=...) before measuring."
        raise CRSError(msg)
    if gdf.crs == crs:
        return gdf
    return gdf.to_crs(crs)
