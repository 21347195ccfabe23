"""Elevation rasters: what their cells and elevations are measured in.

Slope is rise over run, so both must be in one unit. The horizontal unit comes from the
raster's CRS (metres, international feet, US survey feet, or degrees for a geographic DEM
such as USGS 3DEP). The vertical unit comes, in this order, from a vertical part of the CRS
(a compound CRS), the band's unit, or the user (``--z-unit``, the manifest's ``z_unit``). A
DEM whose vertical unit is unknown is refused: Wisconsin county lidar is often in US survey
feet both ways, state data in metres, and a wrong guess makes every slope 3.28x wrong.
"""

from __future__ import annotations

__all__ = ["DemInfo", "open_dem"]

import os
from dataclasses import dataclass

import numpy as np
import rasterio
from pyproj import CRS
from rasterio.errors import RasterioIOError

from esc_gis.errors import CRSError, LayerReadError, UnitsError
from esc_gis.units import LENGTH_UNITS_M, length_unit


@dataclass(frozen=True)
class DemInfo:
    """What a DEM is and the units it is in.

    Attributes
    ----------
    path : str
    crs : pyproj.CRS
        The horizontal CRS.
    width, height : int
    transform : affine.Affine
    nodata : float or None
    geographic : bool
        Cells are in degrees; slopes are scaled row by row for latitude.
    xy_unit_m : float
        Metres per horizontal unit (1.0 for degrees: scaled by latitude instead).
    z_unit : str
        ``m``, ``ft`` or ``us_ft``.
    z_unit_source : str
        Where the vertical unit came from (``CRS``, ``band unit``, ``user``).
    ellipsoid : tuple of float
        Semi-major axis (m) and inverse flattening of the CRS's ellipsoid.
    """

    path: str
    crs: CRS
    width: int
    height: int
    transform: rasterio.Affine
    nodata: float | None
    geographic: bool
    xy_unit_m: float
    z_unit: str
    z_unit_source: str
    ellipsoid: tuple[float, float]

    @property
    def z_unit_m(self) -> float:
        """Metres per vertical unit."""
        return LENGTH_UNITS_M[self.z_unit]

    @property
    def cell_size(self) -> tuple[float, float]:
        """Cell width and height in CRS units (both positive)."""
        return abs(self.transform.a), abs(self.transform.e)


def _vertical_unit(crs: CRS) -> str | None:
    for sub in crs.sub_crs_list or []:
        if sub.is_vertical:
            return length_unit(sub.axis_info[0].unit_name)
    return None


def open_dem(path: str | os.PathLike[str], *, z_unit: str | None = None) -> DemInfo:
    """Open a DEM's header and settle its units.

    Parameters
    ----------
    path : str or PathLike
        Any single-band raster GDAL reads.
    z_unit : {"m", "ft", "us_ft"}, optional
        The elevations' unit, when the raster does not say.

    Returns
    -------
    DemInfo

    Raises
    ------
    LayerReadError
        If the file is missing or not a raster.
    CRSError
        If the raster has no CRS, or is rotated.
    UnitsError
        If the vertical unit is unknown, or ``z_unit`` contradicts the raster's own.
    """
    name = os.fspath(path)
    try:
        with rasterio.open(path) as src:
            if src.crs is None:
                msg = f"{name}: the DEM has no CRS; define it (gdal_edit.py -a_srs EPSG:XXXX) and try again."
                raise CRSError(msg)
            crs = CRS.from_wkt(src.crs.to_wkt())
            t = src.transform
            if t.b != 0 or t.d != 0:
                msg = f"{name}: the DEM's grid is rotated; warp it to a north-up grid first (gdalwarp)."
                raise CRSError(msg)
            band_unit = (src.units or (None,))[0] or None
            info = {"width": src.width, "height": src.height, "transform": t, "nodata": src.nodata}
    except RasterioIOError as exc:
        msg = f"{name}: cannot be read as a raster ({exc})."
        raise LayerReadError(msg) from None

    horizontal = crs.sub_crs_list[0] if crs.is_compound else crs
    geographic = horizontal.is_geographic
    if geographic:
        xy_unit_m = 1.0
    else:
        factors = {ax.unit_conversion_factor for ax in horizontal.axis_info}
        if len(factors) != 1:
            msg = f"{name}: the DEM's CRS has no single horizontal unit."
            raise UnitsError(msg)
        xy_unit_m = float(factors.pop())

    given = length_unit(z_unit) if z_unit is not None else None
    own, source = _vertical_unit(crs), "CRS"
    if own is None and band_unit:
        try:
            own, source = length_unit(band_unit), "band unit"
        except UnitsError:
            own = None
    if own is not None and given is not None and own != given:
        msg = f"{name}: --z-unit {given} contradicts the DEM's own vertical unit ({own}, from its {source})."
        raise UnitsError(msg)
    if own is None and given is None:
        msg = (
            f"{name}: the unit of the elevations is unknown (the raster's CRS has no vertical part and "
            "its band has no unit). Fix: give it with --z-unit m|ft|us_ft (or z_unit in layers.toml); "
            "Wisconsin county lidar is often us_ft, state and USGS data m."
        )
        raise UnitsError(msg)
    ell = horizontal.ellipsoid
    if ell is None:
        msg = f"{name}: the DEM's CRS names no ellipsoid."
        raise CRSError(msg)
    return DemInfo(
        path=name,
        crs=horizontal,
        geographic=geographic,
        xy_unit_m=xy_unit_m,
        z_unit=own or given or "m",
        z_unit_source=source if own else "user",
        ellipsoid=(float(ell.semi_major_metre), float(ell.inverse_flattening or np.inf)),
        **info,
    )
