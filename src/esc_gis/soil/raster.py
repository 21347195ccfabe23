"""The per-cell soil-loss raster of ``esc-gis soil-loss --raster``.

One GeoTIFF on the DEM's grid (same CRS, cell size and cell alignment), cut to the bounding
box of the sites' DEM windows, float32, nodata -9999, tiled 512 x 512 and deflate-compressed
(floating-point predictor) with averaged overviews, as :func:`esc_gis.terrain.slope.write_slope`
writes. Three bands:

1. ``sediment_discharge_tpa``: each cell's sediment discharge, t/ac, over the site's
   *governing* window (the 12-month window the site table reports; t/ac/yr when the window is
   a full 12 months): K x LS(cell) x the sum over the window's phase pieces of
   R_period x C x (1 - efficiency).
2. ``soil_loss_tpa``: the same without the practices: K x LS(cell) x sum of R_period x C.
3. ``method_class``: 0 inside the method; 1 steeper than the profile's ``max_slope_pct``
   (outside the method: prescriptive practices, so bands 1 and 2 are nodata there); 2 slope
   length past the profile's cap (likely concentrated flow, which the sheet-and-rill method
   does not cover: also outside the method, bands 1 and 2 nodata, as the site table leaves it
   out of its numbers and counts it in ``outside_share``).

The style (``.qml``) colours band 1 in classes cut at the sediment standard's value. Where the
standard reaches none of the sites on the raster (all under the profile's sediment area, counting
their common plans), its classes say the standard does not apply and none is coloured as
exceeding it; where it reaches only some, the classes over the standard say "where it applies",
and the ``SEDIMENT_STANDARD_NOT_APPLICABLE`` tag names the sites it does not reach.

K is the site's (area-weighted over its disturbed area, or ``--k``), not a value per cell, so
the mean of bands 1 and 2 over a site's cells inside the method is exactly the site table's
``discharge_tpa`` and ``soil_loss_tpa``. Cells outside every disturbed area are nodata in all
bands. Where two sites' disturbed areas overlap, a cell takes the larger value of the two.
"""

from __future__ import annotations

__all__ = ["BANDS", "SiteCells", "check_raster_paths", "write_soil_loss_raster"]

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rasterio
from rasterio.enums import Resampling
from rasterio.windows import Window

from esc_gis._outputs import atomic_output, check_output_file, check_style
from esc_gis.soil.ls import LsGrid
from esc_gis.styles import write_soil_loss_qml
from esc_gis.terrain.dem import DemInfo
from esc_gis.terrain.slope import NODATA, TILE, overview_factors, raster_profile

#: Band names, in order (each band's description).
BANDS = ("sediment_discharge_tpa", "soil_loss_tpa", "method_class")
#: Values of the ``method_class`` band.
INSIDE, STEEP, CAPPED = 0.0, 1.0, 2.0


@dataclass(frozen=True)
class SiteCells:
    """One site's LS grid, where it lies on the DEM, and the factors that turn LS into t/ac.

    Attributes
    ----------
    window : rasterio.windows.Window
        The LS grid's place on the DEM (whole cells).
    grid : LsGrid
    loss_factor, discharge_factor : float
        K x sum of R_period x C (x (1 - efficiency)) over the governing window; NaN when the
        site has no governing window (nothing inside the method).
    """

    window: Window
    grid: LsGrid
    loss_factor: float
    discharge_factor: float


def check_raster_paths(path: str | os.PathLike[str], *, overwrite: bool) -> tuple[Path, Path]:
    """Check the raster and its ``.qml`` style before any work; return both paths.

    Raises
    ------
    OutputFormatError
        If the name is not a ``.tif`` or its folder does not exist.
    OutputExistsError
        If the raster exists and ``overwrite`` is false, or the style is another raster's
        (a stale style, its raster gone, is replaced: see :func:`esc_gis._outputs.check_style`).
    """
    out = check_output_file(
        path, suffixes=(".tif", ".tiff"), kind="soil-loss rasters are written as GeoTIFF", overwrite=overwrite
    )
    return out, check_style(out, overwrite=overwrite)


def _bands(cell: SiteCells) -> np.ndarray:
    """Return the three bands of one site's window, NaN where nothing is said."""
    g = cell.grid
    out = np.full((3, *g.ls.shape), np.nan, dtype=np.float64)
    ls = np.where(g.capped, np.nan, g.ls)  # NaN off the surface and outside the method
    out[0] = ls * cell.discharge_factor
    out[1] = ls * cell.loss_factor
    cls = np.where(g.outside_method, STEEP, np.where(g.capped, CAPPED, INSIDE))
    out[2] = np.where(g.surface, cls, np.nan)
    return out


def write_soil_loss_raster(
    path: str | os.PathLike[str],
    dem: DemInfo,
    cells: Sequence[SiteCells],
    *,
    standard_tpa: float,
    standard_reaches: str = "all",
    overwrite: bool = False,
    tags: dict[str, str] | None = None,
    creation_options: Mapping[str, str] | None = None,
) -> Path | None:
    """Write the soil-loss raster (see the module notes) and its QGIS style.

    Parameters
    ----------
    path : path
        A ``.tif``; the style goes beside it as ``.qml`` (QGIS loads it with the raster).
    dem : DemInfo
        The DEM the LS grids were computed on: the raster is on its grid.
    cells : sequence of SiteCells
        The sites on the DEM.
    standard_tpa : float
        The sediment standard's value (the profile's): the style's classes are cut at it.
    standard_reaches : {"all", "some", "none"}, default "all"
        Whether the standard reaches all, some or none of the sites on the raster: the style's
        labels and colours say so (:func:`esc_gis.styles.soil_loss_qml`).
    overwrite : bool, default False
    tags : dict, optional
        Dataset tags to record (R, the profile, ...).
    creation_options : mapping, optional
        GDAL GTiff creation options over ours (``--co``; see :func:`esc_gis.terrain.slope.raster_profile`).

    Returns
    -------
    pathlib.Path or None
        The raster; None (nothing written) when no site lies on the DEM.

    Raises
    ------
    OutputExistsError, OutputFormatError
        As :func:`check_raster_paths`.
    """
    out, style = check_raster_paths(path, overwrite=overwrite)
    if not cells:
        return None
    c0 = min(int(c.window.col_off) for c in cells)
    r0 = min(int(c.window.row_off) for c in cells)
    c1 = max(int(c.window.col_off + c.window.width) for c in cells)
    r1 = max(int(c.window.row_off + c.window.height) for c in cells)
    extent = Window(c0, r0, c1 - c0, r1 - r0)
    profile = raster_profile(dem, "float32", NODATA, creation_options=creation_options)
    profile.update(
        width=c1 - c0, height=r1 - r0, count=len(BANDS), transform=rasterio.windows.transform(extent, dem.transform)
    )
    # Each site's window relative to the output, as arrays: tiles are matched to sites at once.
    offs = np.array([(int(c.window.row_off) - r0, int(c.window.col_off) - c0) for c in cells])
    sizes = np.array([(int(c.window.height), int(c.window.width)) for c in cells])
    bands = [_bands(c) for c in cells]
    with atomic_output(out) as tmp, rasterio.open(tmp, "w", **profile) as dst:
        for b, name in enumerate(BANDS, start=1):
            dst.set_band_description(b, name)
        dst.update_tags(
            SOURCE_DEM=Path(dem.path).name,
            UNITS="t/ac over each site's governing window (bands 1-2); class (band 3)",
            METHOD_CLASS=(
                "0 inside the method; 1 steeper than the method's limit (no value); "
                "2 past the slope-length cap (no value)"
            ),
            **(tags or {}),
        )
        height, width = r1 - r0, c1 - c0
        # Tile by tile, only tiles some site touches: memory stays one tile however far apart
        # the sites are, and tiles never written read as nodata (SPARSE_OK).
        for tr in range(0, height, TILE):
            th = min(TILE, height - tr)
            for tc in range(0, width, TILE):
                tw = min(TILE, width - tc)
                hit = np.flatnonzero(
                    (offs[:, 0] < tr + th)
                    & (offs[:, 0] + sizes[:, 0] > tr)
                    & (offs[:, 1] < tc + tw)
                    & (offs[:, 1] + sizes[:, 1] > tc)
                )
                if not hit.size:
                    continue
                tile = np.full((3, th, tw), np.nan)
                for i in hit.tolist():
                    (orow, ocol), (h, w) = offs[i], sizes[i]
                    ar0, ar1 = max(tr, orow), min(tr + th, orow + h)
                    ac0, ac1 = max(tc, ocol), min(tc + tw, ocol + w)
                    src = bands[i][:, ar0 - orow : ar1 - orow, ac0 - ocol : ac1 - ocol]
                    dst_view = tile[:, ar0 - tr : ar1 - tr, ac0 - tc : ac1 - tc]
                    # Overlapping sites: the larger value (fmax keeps a number over NaN).
                    np.fmax(dst_view, src, out=dst_view)
                dst.write(np.nan_to_num(tile, nan=NODATA).astype(np.float32), window=Window(tc, tr, tw, th))
        factors = overview_factors(width, height)
        if factors:
            dst.build_overviews(factors, Resampling.average)
    write_soil_loss_qml(style, standard_tpa, reaches=standard_reaches)
    return out
