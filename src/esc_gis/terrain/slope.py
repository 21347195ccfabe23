"""Slope in percent by Horn's method, computed exactly as ``gdaldem slope -p`` does.

The 3x3 window is numbered row by row, 0 1 2 / 3 4 5 / 6 7 8. As in GDAL, the neighbour
sums are added in float32, left to right, the doubled term as two additions::

    dx = ((z0 + z3 + z3 + z6) - (z2 + z5 + z5 + z8)) / (ewres * scale)
    dy = ((z6 + z7 + z7 + z8) - (z0 + z1 + z1 + z2)) / (nsres * scale)
    slope_pct = float32(100 * (sqrt(dx*dx + dy*dy) / 8))

with the division and square root in double, so the output is identical to gdaldem's.
``scale`` turns elevations into horizontal units (metres per horizontal unit over metres
per vertical unit), as gdaldem's ``-s`` does.

Edges and holes follow gdaldem. By default a cell is nodata when any cell of its 3x3 window
is nodata or off the raster: a one-cell nodata ring around holes and around the raster.
With ``compute_edges=True`` (gdaldem ``-compute_edges``) a nodata neighbour takes the centre
cell's value and cells off the raster are extrapolated linearly (``2a - b``).

Geographic DEMs (degrees, e.g. USGS 3DEP) are scaled row by row: each row's cell width and
height are converted to metres on the CRS's ellipsoid at that row's latitude, so the same
terrain gives the same slope in degrees as projected. (gdaldem applies one scale to the
whole raster, which is only right near one latitude.)

The raster is streamed in blocks of whole rows with a one-row halo, so memory stays flat
however large the DEM.
"""

from __future__ import annotations

__all__ = ["NODATA", "horn_slope_pct", "iter_slope_blocks", "write_slope"]

import math
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import rasterio
from rasterio.windows import Window

from esc_gis._outputs import atomic_output, check_output_file
from esc_gis.errors import LayerReadError
from esc_gis.terrain.dem import DemInfo, open_dem

#: Output nodata, as gdaldem writes it.
NODATA = -9999.0
#: Cells per block: 1 MB of float32 per array, ~10 MB of temporaries per block in flight.
#: Measured on 8000 x 8000: 2^18 with two threads is as fast as 2^20 and lighter.
BLOCK_CELLS = 1 << 18
#: GDAL's block cache, in bytes (16 MB). Its default (5 % of RAM) fills with written blocks: 1.2 GB
#: of RSS for a 16000 x 16000 slope (gdaldem too). Streaming needs little. (rasterio.Env
#: passes an integer straight to GDALSetCacheMax64, so it must be bytes, not MB.)
GDAL_CACHE_BYTES = 16 * 1024 * 1024


class _Scratch:
    """Per-thread work arrays for :func:`horn_slope_pct`, reused from block to block.

    Allocating the ~40 bytes per cell of temporaries afresh for every block costs as much
    as the arithmetic itself (page faults on new memory); reusing them makes the numpy
    kernel as fast as a compiled one, without a compiler in the dependencies.
    """

    def __init__(self, h: int, w: int) -> None:
        self.shape = (h, w)
        self.win = np.empty((h + 2, w + 2), dtype=np.float32)
        self.f32 = np.empty((3, h, w), dtype=np.float32)
        self.f64 = np.empty((2, h, w), dtype=np.float64)

    def fits(self, h: int, w: int) -> bool:
        return h <= self.shape[0] and w == self.shape[1]


def horn_slope_pct(
    win: np.ndarray,
    ew_div: float | np.ndarray,
    ns_div: float | np.ndarray,
    *,
    fill_with_centre: bool = False,
    out: np.ndarray | None = None,
    scratch: _Scratch | None = None,
) -> np.ndarray:
    """Slope in percent of the interior of a padded float32 block.

    Parameters
    ----------
    win : numpy.ndarray of float32, shape (h + 2, w + 2)
        Elevations with a one-cell halo; NaN marks nodata.
    ew_div, ns_div : float or numpy.ndarray of shape (h, 1)
        Cell width and height times the vertical-to-horizontal unit scale (per row for
        geographic DEMs).
    fill_with_centre : bool, default False
        Replace nodata neighbours with the centre value (gdaldem ``-compute_edges``);
        otherwise any nodata in the window gives nodata.
    out : numpy.ndarray of float32, shape (h, w), optional
        Where to write the result.
    scratch : _Scratch, optional
        Work arrays to reuse (the block streamer keeps one per thread).

    Returns
    -------
    numpy.ndarray of float32, shape (h, w)
        NaN where the slope is undefined.

    Raises
    ------
    ValueError
        If ``win`` has fewer than 3 rows or columns.

    Examples
    --------
    A plane rising 1 ft per 5 ft cell eastwards is a 20 % slope:

    >>> z = np.tile(np.arange(5, dtype=np.float32), (5, 1))
    >>> horn_slope_pct(z, 5.0, 5.0)
    array([[20., 20., 20.],
           [20., 20., 20.],
           [20., 20., 20.]], dtype=float32)
    """
    win = np.asarray(win, dtype=np.float32)
    h, w = win.shape[0] - 2, win.shape[1] - 2
    if h < 1 or w < 1:
        msg = f"a slope window needs at least 3 x 3 cells, got {win.shape[1]} x {win.shape[0]}"
        raise ValueError(msg)
    if scratch is None or not scratch.fits(h, w):
        scratch = _Scratch(h, w)
    if out is None:
        out = np.empty((h, w), dtype=np.float32)
    z = [win[r : r + h, c : c + w] for r in range(3) for c in range(3)]
    centre = z[4]
    if fill_with_centre and np.isnan(win).any():
        # Rare (holes, and the first and last rows under -compute_edges), so plain np.where.
        z = [np.where(np.isnan(v), centre, v) if k != 4 else v for k, v in enumerate(z)]
    a, b, c = (t[:h] for t in scratch.f32)
    dx, dy = (t[:h] for t in scratch.f64)
    # float32 sums in GDAL's order: ((a + b) + b) + c.
    np.add(z[0], z[3], out=a)
    a += z[3]
    a += z[6]
    np.add(z[2], z[5], out=b)
    b += z[5]
    b += z[8]
    a -= b
    np.add(z[6], z[7], out=c)
    c += z[7]
    c += z[8]
    np.add(z[0], z[1], out=b)
    b += z[1]
    b += z[2]
    c -= b
    # From here in double, as GDAL. dtype=float64 widens the float32 differences inside the
    # division loop (exactly), without a separate conversion pass.
    np.divide(a, ew_div, out=dx, dtype=np.float64)
    np.divide(c, ns_div, out=dy, dtype=np.float64)
    dx *= dx
    dy *= dy
    dx += dy
    np.sqrt(dx, out=dx)
    # GDAL's 100 * (sqrt / 8): dividing by 8 is exact in binary, so one multiplication by
    # 12.5 rounds the same real number once, as the two operations do: the same double.
    dx *= 12.5
    np.copyto(out, dx, casting="same_kind")  # rounded once to float32
    # Horn's sums skip the centre, so a nodata centre must be set nodata explicitly.
    np.copyto(out, np.float32(np.nan), where=np.isnan(centre))
    return out


def _divisors(info: DemInfo, row0: int, nrows: int) -> tuple[float | np.ndarray, float | np.ndarray]:
    """Cell width and height in vertical units (scalars, or per-row columns when geographic)."""
    ewres, nsres = info.cell_size
    if not info.geographic:
        scale = info.xy_unit_m / info.z_unit_m
        return ewres * scale, nsres * scale
    a, inv_f = info.ellipsoid
    e2 = 0.0 if math.isinf(inv_f) else (2 - 1 / inv_f) / inv_f
    t = info.transform
    lat = np.radians(t.f + (np.arange(row0, row0 + nrows) + 0.5) * t.e)[:, None]
    w = 1 - e2 * np.sin(lat) ** 2
    metres_per_deg_lon = math.pi / 180 * a * np.cos(lat) / np.sqrt(w)
    metres_per_deg_lat = math.pi / 180 * a * (1 - e2) / w**1.5
    return ewres * metres_per_deg_lon / info.z_unit_m, nsres * metres_per_deg_lat / info.z_unit_m


def _read(src: rasterio.io.DatasetReader, info: DemInfo, window: Window) -> np.ndarray:
    arr = src.read(1, window=window, out_dtype=np.float32)
    if info.nodata is not None and not math.isnan(info.nodata):
        arr[arr == np.float32(info.nodata)] = np.nan
    return arr


def _edge_row(lines: np.ndarray, ew: float | np.ndarray, ns: float | np.ndarray) -> np.ndarray:
    """Slope of a first or last raster row under -compute_edges, from its 3-line window."""
    return horn_slope_pct(lines, ew, ns, fill_with_centre=True)[0]


def _row_divisors(
    ew: float | np.ndarray, ns: float | np.ndarray, i: int
) -> tuple[float | np.ndarray, float | np.ndarray]:
    """Return the divisors of row ``i`` of a block (per-row arrays indexed, scalars kept)."""
    return tuple(v[[i]] if isinstance(v, np.ndarray) else v for v in (ew, ns))  # type: ignore[return-value]


def _block(
    src: rasterio.io.DatasetReader,
    info: DemInfo,
    r0: int,
    r1: int,
    c0: int,
    c1: int,
    compute_edges: bool,
    scratch: _Scratch,
) -> np.ndarray:
    """Slope of rows ``r0:r1`` and columns ``c0:c1`` of the DEM (absolute indices)."""
    H, W = info.height, info.width
    clo, chi = max(0, c0 - 1), min(W, c1 + 1)
    lo, hi = max(0, r0 - 1), min(H, r1 + 1)
    win = scratch.win[: r1 - r0 + 2]
    # Off the raster is NaN: without -compute_edges, NaN makes the edge ring nodata. Only
    # the halo can be off the raster, so only the halo is reset (the buffer is reused).
    win[[0, -1]] = np.nan
    win[:, [0, -1]] = np.nan
    win[lo - (r0 - 1) : hi - (r0 - 1), clo - (c0 - 1) : chi - (c0 - 1)] = _read(
        src, info, Window(clo, lo, chi - clo, hi - lo)
    )
    ew, ns = _divisors(info, r0, r1 - r0)
    if compute_edges:
        # At the raster's left and right edges, columns are extrapolated (2a - b) ...
        if c0 == 0:
            win[:, 0] = 2 * win[:, 1] - win[:, 2]
        if c1 == W:
            win[:, -1] = 2 * win[:, -2] - win[:, -3]
    out = horn_slope_pct(win, ew, ns, fill_with_centre=compute_edges, scratch=scratch)
    if compute_edges and (r0 == 0 or r1 == H):
        # ... but on its first and last rows, gdaldem extrapolates the missing row and
        # clamps the columns instead.
        for k, (near, far) in ((0, (1, 2)), (-1, (-2, -3))):
            if (k == 0 and r0 != 0) or (k == -1 and r1 != H):
                continue
            lines = win[[near, far]].copy()
            if c0 == 0:
                lines[:, 0] = lines[:, 1]
            if c1 == W:
                lines[:, -1] = lines[:, -2]
            extra = 2 * lines[0] - lines[1]
            trio = np.stack([extra, lines[0], lines[1]] if k == 0 else [lines[1], lines[0], extra])
            out[k] = _edge_row(trio, *_row_divisors(ew, ns, k))
    return out


def iter_slope_blocks(
    info: DemInfo,
    *,
    compute_edges: bool = False,
    window: Window | None = None,
    block_cells: int = BLOCK_CELLS,
    threads: int = 2,
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first_row, slope_pct)`` blocks of whole rows, top to bottom.

    Parameters
    ----------
    info : DemInfo
    compute_edges : bool, default False
    window : rasterio.windows.Window, optional
        Compute only this part of the DEM. Its halo is read from the DEM around it, so the
        values are the ones the whole DEM would give.
    block_cells : int
        About how many cells each block holds.
    threads : int, default 2
        Blocks computed at once (numpy and GDAL release the GIL). At most ``threads + 1``
        blocks are in memory, so memory stays flat.

    Yields
    ------
    tuple of (int, numpy.ndarray of float32)
        The block's first row (relative to ``window``) and its slopes, NaN where undefined.

    Raises
    ------
    LayerReadError
        If the DEM is smaller than 3 x 3 cells.
    """
    H, W = info.height, info.width
    if H < 3 or W < 3:
        msg = f"{info.path}: a DEM of {W} x {H} cells is too small for a 3 x 3 slope window."
        raise LayerReadError(msg)
    if window is None:
        window = Window(0, 0, W, H)
    c0, R0 = int(window.col_off), int(window.row_off)
    c1, R1 = c0 + int(window.width), R0 + int(window.height)
    rows = max(1, min(R1 - R0, block_cells // max(c1 - c0, 1)))
    starts = list(range(R0, R1, rows))
    local = threading.local()
    handles: list[rasterio.io.DatasetReader] = []

    def work(r0: int) -> np.ndarray:
        # One dataset handle and one set of work arrays per thread: GDAL handles are not
        # shared between threads, and reusing the arrays saves allocating them per block.
        src = getattr(local, "src", None)
        if src is None:
            src = local.src = rasterio.open(info.path)
            local.scratch = _Scratch(rows, c1 - c0)
            handles.append(src)
        return _block(src, info, r0, min(R1, r0 + rows), c0, c1, compute_edges, local.scratch)

    try:
        with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            pending: deque[tuple[int, Future[np.ndarray]]] = deque()
            for r0 in starts:
                pending.append((r0, pool.submit(work, r0)))
                if len(pending) > threads:
                    first, fut = pending.popleft()
                    yield first - R0, fut.result()
            while pending:
                first, fut = pending.popleft()
                yield first - R0, fut.result()
    finally:
        for h in handles:
            h.close()


def write_slope(
    dem: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    z_unit: str | None = None,
    compute_edges: bool = False,
    overwrite: bool = False,
    progress: Callable[[float], None] | None = None,
    block_cells: int = BLOCK_CELLS,
) -> DemInfo:
    """Write a slope raster in percent (float32 GeoTIFF, nodata -9999), streaming.

    Parameters
    ----------
    dem : path
        The elevation raster (band 1).
    output : path
        A ``.tif`` to write.
    z_unit : {"m", "ft", "us_ft"}, optional
        The elevations' unit when the raster does not say (see :func:`open_dem`).
    compute_edges : bool, default False
        As gdaldem ``-compute_edges``.
    overwrite : bool, default False
    progress : callable, optional
        Called with the fraction done after each block.
    block_cells : int
        Cells per block (memory is about 40 bytes per cell of one block).

    Returns
    -------
    DemInfo
        The DEM's description, units included.

    Raises
    ------
    OutputExistsError, OutputFormatError
        If the output exists (without ``overwrite``) or is not a ``.tif``.
    LayerReadError, CRSError, UnitsError
        As :func:`open_dem`.
    """
    out = check_output_file(
        output, suffixes=(".tif", ".tiff"), kind="slope rasters are written as GeoTIFF", overwrite=overwrite
    )
    info = open_dem(dem, z_unit=z_unit)
    profile = {
        "driver": "GTiff",
        "width": info.width,
        "height": info.height,
        "count": 1,
        "dtype": "float32",
        "nodata": NODATA,
        "crs": rasterio.crs.CRS.from_wkt(info.crs.to_wkt()),
        "transform": info.transform,
        "BIGTIFF": "IF_SAFER",
    }
    with atomic_output(out) as tmp:
        with rasterio.Env(GDAL_CACHEMAX=GDAL_CACHE_BYTES), rasterio.open(tmp, "w", **profile) as dst:
            dst.update_tags(
                1,
                ALGORITHM="Horn (as gdaldem slope -p)",
                UNITS="percent",
                Z_UNIT=info.z_unit,
                COMPUTE_EDGES=str(compute_edges),
            )
            for r0, block in iter_slope_blocks(info, compute_edges=compute_edges, block_cells=block_cells):
                np.nan_to_num(block, copy=False, nan=NODATA)
                dst.write(block, 1, window=Window(0, r0, info.width, block.shape[0]))
                if progress is not None:
                    progress((r0 + block.shape[0]) / info.height)
    return info
