"""Land at or above a slope threshold (20 % by § 540-7B(3)(c)[3]): polygons and areas.

Steep area inside a polygon is measured with exact cell-coverage fractions
(:mod:`esc_gis.terrain.coverage`, the sums exactextract gives): a cell half inside the polygon
counts half. Counting whole cells by their centres misstates
small areas by 0.4-1.6 %, enough to matter near a threshold.
"""

from __future__ import annotations

__all__ = ["SteepArea", "steep_area", "steep_polygons"]

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import geopandas as gpd
import numpy as np
import rasterio
import shapely
from rasterio.features import shapes
from rasterio.windows import Window

from esc_gis.crs import measuring_crs, reproject
from esc_gis.measure import area_sqft
from esc_gis.terrain.coverage import EdgeSet
from esc_gis.terrain.dem import DemInfo, open_dem, warn_if_dem_far
from esc_gis.terrain.slope import GDAL_CACHE_BYTES, iter_slope_blocks

if TYPE_CHECKING:
    from pyproj import CRS


def steep_polygons(
    dem: str | os.PathLike[str],
    *,
    crs: CRS | str,
    threshold_pct: float = 20.0,
    min_area_sqft: float = 0.0,
    z_unit: str | None = None,
    band: int | None = None,
    compute_edges: bool = False,
    progress: Callable[[float], None] | None = None,
) -> gpd.GeoDataFrame:
    """Polygons of land whose slope is at or above ``threshold_pct``, dissolved.

    Parameters
    ----------
    dem : path
    crs : pyproj.CRS or str
        The measuring CRS the polygons are returned in (areas are measured there).
    threshold_pct : float, default 20
        Compared with ``>=`` on the unrounded float32 slope.
    min_area_sqft : float, default 0
        Drop parts smaller than this (specks of one or two cells).
    z_unit : {"m", "ft", "us_ft"}, optional
    band : int, optional
        The band holding the elevations; required when the DEM has more than one.
    compute_edges : bool, default False
    progress : callable, optional
        Called with the fraction done.

    Returns
    -------
    geopandas.GeoDataFrame
        One row per separate steep part: ``threshold_pct``, ``area_sqft``, geometry.

    Raises
    ------
    LayerReadError, BandError, CRSError, UnitsError
        As :func:`esc_gis.terrain.open_dem`.
    """
    info = open_dem(dem, z_unit=z_unit, band=band)
    dst_crs = measuring_crs(crs)
    warn_if_dem_far(info, dst_crs)  # areas measured far from the CRS's zone are distorted
    pieces: list[shapely.Geometry] = []
    # GDAL's default block cache (5 % of RAM) would fill with tiles read once.
    with rasterio.Env(GDAL_CACHEMAX=GDAL_CACHE_BYTES):
        for r0, block in iter_slope_blocks(info, compute_edges=compute_edges):
            steep = block >= threshold_pct
            if steep.any():
                t = rasterio.windows.transform(Window(0, r0, info.width, block.shape[0]), info.transform)
                # rasterio merges touching steep cells of a block into polygons; blocks are
                # dissolved together below.
                shp = shapes(steep.view(np.uint8), mask=steep, transform=t)
                pieces.extend(shapely.geometry.shape(g) for g, _ in shp)
            if progress is not None:
                progress((r0 + block.shape[0]) / info.height)
    merged = shapely.union_all(pieces) if pieces else shapely.Polygon()
    parts = shapely.get_parts(merged)
    parts = gpd.GeoSeries(parts[~shapely.is_empty(parts)], crs=info.crs).to_crs(dst_crs)
    area = area_sqft(parts.to_numpy(), dst_crs)
    keep = area >= min_area_sqft
    return gpd.GeoDataFrame(
        {"threshold_pct": np.full(int(keep.sum()), float(threshold_pct)), "area_sqft": area[keep]},
        geometry=parts.to_numpy()[keep],
        crs=dst_crs,
    )


@dataclass
class SteepArea:
    """Steep area of polygons, and how much of them the DEM did not cover.

    Attributes
    ----------
    steep_sqft : numpy.ndarray
        Area on slopes at or above the threshold.
    uncovered_sqft : numpy.ndarray
        Area off the DEM or where the slope is undefined (nodata and its one-cell ring).
    dem : DemInfo
    """

    steep_sqft: np.ndarray
    uncovered_sqft: np.ndarray
    dem: DemInfo


#: Cells of a strip measured at once, at least (4 MB of each 0/1 grid, 16 MB of its sums).
COVER_CELLS = 1 << 22

#: Sums this close to none or all of a polygon's cells are rounding (a polygon's edges crossing
#: a strip of steep cells add and take away the same areas, about 1e-12 of a cell): a millionth
#: of a cell, far below a DEM's precision. Absolute, so a real sliver of a large site still counts.
_SNAP_CELLS = 1e-6


def _share(part_cells: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Return ``part_cells / cells``, exactly 0 or 1 within _SNAP_CELLS of none or all (0 for no cells)."""
    share = np.divide(part_cells, cells, out=np.zeros(len(cells)), where=cells > 0)
    return np.where(part_cells < _SNAP_CELLS, 0.0, np.where(part_cells > cells - _SNAP_CELLS, 1.0, share))


def steep_area(
    geoms: np.ndarray,
    crs: CRS,
    dem: str | os.PathLike[str] | DemInfo,
    *,
    threshold_pct: float = 20.0,
    z_unit: str | None = None,
    band: int | None = None,
    compute_edges: bool = False,
) -> SteepArea:
    """Area of each polygon on slopes at or above ``threshold_pct``, by exact coverage.

    Parameters
    ----------
    geoms : numpy.ndarray of shapely.Geometry
        Polygons in the measuring CRS ``crs`` (empty ones measure 0).
    crs : pyproj.CRS
    dem : path or DemInfo
    threshold_pct : float, default 20
    z_unit : {"m", "ft", "us_ft"}, optional
    band : int, optional
        For a path: the band holding the elevations (a DemInfo carries its own).
    compute_edges : bool, default False

    Returns
    -------
    SteepArea

    Notes
    -----
    The slope is computed for the DEM window around the polygons (plus a margin), a strip of
    rows at a time, and each polygon's cell coverage fractions are summed over the steep cells
    and over the cells where the slope is defined (:class:`~esc_gis.terrain.coverage.EdgeSet`):
    ``steep_sqft = area_sqft * steep_cells / polygon_cells``, where ``polygon_cells`` is the
    polygon's area in cells. The same ratio serves geographic DEMs,
    whose cells are not square in feet.
    """
    info = dem if isinstance(dem, DemInfo) else open_dem(dem, z_unit=z_unit, band=band)
    geoms = np.asarray(geoms, dtype=object)
    poly_sqft = area_sqft(geoms, crs)
    steep = np.zeros(len(geoms))
    uncovered = poly_sqft.copy()
    live = poly_sqft > 0
    if not live.any():
        return SteepArea(steep, uncovered, info)
    in_dem = reproject(geoms[live], crs, info.crs)
    left, bottom, right, top = shapely.total_bounds(in_dem)
    t = info.transform  # north-up (open_dem refuses rotated grids)
    c0, r0 = (left - t.c) / t.a, (top - t.f) / t.e
    c1, r1 = (right - t.c) / t.a, (bottom - t.f) / t.e
    # One cell of margin; the slope window reads its own halo from the DEM around it.
    col0, row0 = max(0, int(np.floor(c0)) - 1), max(0, int(np.floor(r0)) - 1)
    col1, row1 = min(info.width, int(np.ceil(c1)) + 1), min(info.height, int(np.ceil(r1)) + 1)
    if col1 <= col0 or row1 <= row0:  # every polygon is off the DEM
        return SteepArea(steep, uncovered, info)
    window = Window(col0, row0, col1 - col0, row1 - row0)
    cell_area = abs(t.a * t.e)
    edges = EdgeSet.from_geometries(in_dem, t.c + col0 * t.a, t.f + row0 * t.e, t.a, -t.e)
    # Each polygon's steep cells and defined cells, weighted by how much of each it covers,
    # a strip of slopes at a time (the window is never held whole).
    sums = np.zeros((2, edges.count))
    # Slope blocks are a few rows of a wide window; they are gathered into strips of at least
    # COVER_CELLS, so that few polygons straddle two strips (each is cut once per strip).
    tall = max(1, -(-COVER_CELLS // int(window.width)))
    held: list[tuple[int, np.ndarray, np.ndarray]] = []

    def measure() -> None:
        grids = [np.concatenate([h[1] for h in held]), np.concatenate([h[2] for h in held])]
        sums[:] += edges.strip_sums(grids, held[0][0])
        held.clear()

    with rasterio.Env(GDAL_CACHEMAX=GDAL_CACHE_BYTES):
        for first, block in iter_slope_blocks(info, compute_edges=compute_edges, window=window):
            held.append((first, block >= threshold_pct, ~np.isnan(block)))
            if first + len(block) - held[0][0] >= tall:
                measure()
    if held:
        measure()
    cells = shapely.area(in_dem) / cell_area
    frac_steep = _share(sums[0], cells)
    frac_cov = _share(sums[1], cells)
    steep[live] = frac_steep * poly_sqft[live]
    uncovered[live] = (1 - frac_cov) * poly_sqft[live]
    return SteepArea(steep, uncovered, info)
