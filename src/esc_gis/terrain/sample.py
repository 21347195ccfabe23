"""Elevations at points: the DEM read once over the points' window, then indexed (no loop per point)."""

from __future__ import annotations

__all__ = ["sample_dem"]

import os

import numpy as np
import rasterio
from pyproj import CRS, Transformer
from rasterio.windows import Window

from esc_gis.terrain.dem import DemInfo, check_raster_coordinates


def sample_dem(xy: np.ndarray, crs: CRS, dem: str | os.PathLike[str] | DemInfo) -> np.ndarray:
    """Return the DEM's value at each point (nearest cell), NaN outside the DEM or on nodata.

    Parameters
    ----------
    xy : numpy.ndarray, shape (n, 2)
        Points in ``crs``.
    crs : pyproj.CRS
    dem : path-like or DemInfo
        Any raster rasterio reads, in any CRS (points are transformed to it); band 1 of a
        path, the chosen band (and the mosaic of a folder of tiles) of a DemInfo.

    Returns
    -------
    numpy.ndarray of float, shape (n,)
        In the DEM's own vertical unit: compare values with one another, not with numbers.

    Raises
    ------
    CoordinatesNotInCRSError
        If a DEM given as a path has an extent that cannot be in its CRS.

    Examples
    --------
    >>> sample_dem(np.empty((0, 2)), CRS.from_epsg(7594), "any.tif").shape
    (0,)
    """
    out = np.full(len(xy), np.nan)
    if len(xy) == 0:
        return out
    band = dem.band if isinstance(dem, DemInfo) else 1
    with dem.open() if isinstance(dem, DemInfo) else rasterio.open(dem) as src:
        if not isinstance(dem, DemInfo) and src.crs is not None:
            # A DemInfo was checked by open_dem; a path is checked here, as every reader checks.
            own = CRS.from_user_input(src.crs)
            check_raster_coordinates(
                src.height, src.width, src.transform, own.sub_crs_list[0] if own.is_compound else own, what=str(dem)
            )
        x, y = xy[:, 0], xy[:, 1]
        if src.crs is not None and CRS.from_user_input(src.crs) != crs:
            x, y = Transformer.from_crs(crs, CRS.from_user_input(src.crs), always_xy=True).transform(x, y)
            x, y = np.asarray(x), np.asarray(y)
        rows, cols = (
            np.asarray(v, dtype=np.int64) for v in rasterio.transform.rowcol(src.transform, x, y, op=np.floor)
        )
        inside = (rows >= 0) & (rows < src.height) & (cols >= 0) & (cols < src.width)
        if not inside.any():
            return out
        row0, col0 = int(rows[inside].min()), int(cols[inside].min())
        window = Window(col0, row0, int(cols[inside].max()) - col0 + 1, int(rows[inside].max()) - row0 + 1)
        values = src.read(band, window=window, masked=True).astype(float).filled(np.nan)
    out[inside] = values[rows[inside] - row0, cols[inside] - col0]
    return out
