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

The raster is read in strips of whole rows cut where the source's blocks start (a 512-row
tile row of a county GeoTIFF is decompressed once, not once per dozen rows), the last two
rows of a strip carried into the next as its halo rather than read again. The next strip is
read (GDAL decoding its tiles on several threads) while the slope of this one is computed
in blocks of rows on a thread pool, so memory stays flat however large the DEM. The
compressed writing, the longest part, runs from a writer thread on GDAL's compression
threads, and the pool works up to LOOKAHEAD strips ahead of it, so it is never left waiting.

The output is a tiled (512 x 512), deflate-compressed (floating-point predictor) GeoTIFF
with overviews, or a Cloud Optimized GeoTIFF on request, written to a temporary file and
renamed.
"""

from __future__ import annotations

__all__ = [
    "COMPRESSIONS",
    "NODATA",
    "check_creation_options",
    "horn_slope_pct",
    "iter_slope_blocks",
    "raster_profile",
    "write_slope",
]

import math
import os
import tempfile
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import rasterio
import rasterio.shutil
from rasterio.enums import Resampling
from rasterio.windows import Window

from esc_gis._outputs import atomic_output, check_output_file, check_style
from esc_gis._threads import cap, gdal_threads
from esc_gis.errors import LayerReadError, OutputFormatError
from esc_gis.styles import write_slope_qml
from esc_gis.terrain._formats import COMPRESSIONS
from esc_gis.terrain.dem import DemInfo, open_dem, warn_if_dem_far

#: Output nodata, as gdaldem writes it.
NODATA = -9999.0
#: Cells per block: 1 MB of float32 per array, ~10 MB of temporaries per block in flight.
#: Measured on 8000 x 8000: 2^18 with two threads is as fast as 2^20 and lighter.
BLOCK_CELLS = 1 << 18
#: Cells of a read strip, at least: the strip is then extended to the next block start.
STRIP_CELLS = 1 << 22
#: Cells of a read strip, at most (64 MB of float32): sources with larger blocks (one strip
#: for the whole file) are read in strips of STRIP_CELLS and leave block caching to GDAL.
STRIP_MAX_CELLS = 1 << 24
#: Strips whose blocks may be queued for computing at once (the consumer's lag, at most).
LOOKAHEAD = 2
#: Tile side of written rasters (and the rows gathered before each write: whole tile rows).
TILE = 512
#: Overviews are made down to about this many cells on the longer side.
OVERVIEW_MIN_SIDE = 256
#: GDAL's block cache, in bytes (16 MB). Its default (5 % of RAM) fills with written blocks: 1.2 GB
#: of RSS for a 16000 x 16000 slope (gdaldem too). Streaming needs little. (rasterio.Env
#: passes an integer straight to GDALSetCacheMax64, so it must be bytes, not MB.)
GDAL_CACHE_BYTES = 16 * 1024 * 1024
#: GDAL's GTIFF_DIRECT_IO: an uncompressed GeoTIFF DEM (a striped one as most tools write) is
#: read straight into the strip, not through GDAL's block cache: a third of the read's CPU time.
#: Compressed DEMs are decoded as before (GDAL ignores it for them).
DIRECT_IO = "YES"


class _Scratch:
    """Per-thread work arrays for :func:`horn_slope_pct`, reused from block to block.

    Allocating the ~40 bytes per cell of temporaries afresh for every block costs as much
    as the arithmetic itself (page faults on new memory); reusing them makes the numpy
    kernel as fast as a compiled one, without a compiler in the dependencies.
    """

    def __init__(self, h: int, w: int) -> None:
        self.shape = (h, w)
        # Padded by the halo: the shared column sums span w + 2 columns, the row sums h + 2 rows.
        self.f32 = np.empty((3, h + 2, w + 2), dtype=np.float32)
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
    centre = win[1 : h + 1, 1 : w + 1]
    f32 = scratch.f32
    if fill_with_centre and np.isnan(win).any():
        # Rare (holes, and the first and last rows under -compute_edges): each window's
        # neighbours depend on its centre, so the nine shifted views are summed one by one.
        z = [win[r : r + h, c : c + w] for r in range(3) for c in range(3)]
        z = [np.where(np.isnan(v), centre, v) if k != 4 else v for k, v in enumerate(z)]
        a, b, c = (t[:h, :w] for t in f32)
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
    else:
        # GDAL's left sum z0 + z3 + z3 + z6 is the weighted (1, 2, 1) sum of the column left of
        # the centre, its right sum the same of the column right of it: both are one array of
        # column sums, shifted. Likewise the top and bottom sums are one array of row sums.
        # The same float32 additions in the same order, so the same values, in 8 passes
        # over the block instead of 14.
        cols = f32[0, :h, :]  # (h, w + 2): rows r-1, r, r, r+1 of every column
        np.add(win[0:h], win[1 : h + 1], out=cols)
        cols += win[1 : h + 1]
        cols += win[2 : h + 2]
        a = f32[2, :h, :w]
        np.subtract(cols[:, :w], cols[:, 2:], out=a)
        rows = f32[1, : h + 2, :w]  # (h + 2, w): columns c-1, c, c, c+1 of every row
        np.add(win[:, 0:w], win[:, 1 : w + 1], out=rows)
        rows += win[:, 1 : w + 1]
        rows += win[:, 2 : w + 2]
        c = f32[0, :h, :w]
        np.subtract(rows[2 : h + 2], rows[0:h], out=c)
    dx, dy = (t[:h] for t in scratch.f64)
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


def _edge_row(lines: np.ndarray, ew: float | np.ndarray, ns: float | np.ndarray) -> np.ndarray:
    """Slope of a first or last raster row under -compute_edges, from its 3-line window."""
    return horn_slope_pct(lines, ew, ns, fill_with_centre=True)[0]


def _row_divisors(
    ew: float | np.ndarray, ns: float | np.ndarray, i: int
) -> tuple[float | np.ndarray, float | np.ndarray]:
    """Return the divisors of row ``i`` of a block (per-row arrays indexed, scalars kept)."""
    return tuple(v[[i]] if isinstance(v, np.ndarray) else v for v in (ew, ns))  # type: ignore[return-value]


def _block(
    win: np.ndarray,
    info: DemInfo,
    r0: int,
    r1: int,
    first_col: bool,
    last_col: bool,
    compute_edges: bool,
    scratch: _Scratch,
) -> np.ndarray:
    """Slope of rows ``r0:r1`` (absolute) from their padded window ``win`` (rows r0-1 .. r1).

    ``win`` is a view into a read strip, NaN off the raster; its edge columns are already
    extrapolated under ``compute_edges`` (see :func:`_read_strip`).
    """
    H = info.height
    ew, ns = _divisors(info, r0, r1 - r0)
    out = horn_slope_pct(win, ew, ns, fill_with_centre=compute_edges, scratch=scratch)
    if compute_edges and (r0 == 0 or r1 == H):
        # On its first and last rows, gdaldem extrapolates the missing row and clamps the
        # columns instead of extrapolating them.
        for k, (near, far) in ((0, (1, 2)), (-1, (-2, -3))):
            if (k == 0 and r0 != 0) or (k == -1 and r1 != H):
                continue
            lines = win[[near, far]].copy()
            if first_col:
                lines[:, 0] = lines[:, 1]
            if last_col:
                lines[:, -1] = lines[:, -2]
            extra = 2 * lines[0] - lines[1]
            trio = np.stack([extra, lines[0], lines[1]] if k == 0 else [lines[1], lines[0], extra])
            out[k] = _edge_row(trio, *_row_divisors(ew, ns, k))
    return out


def _strips(info: DemInfo, lo: int, hi: int, cols: int) -> list[tuple[int, int]]:
    """Row ranges ``[s, e)`` covering ``lo:hi``, each ending where a source block starts.

    A strip holds at least STRIP_CELLS cells and runs on to the next block start, so no block
    of a tiled or striped source is split between two strips (and decompressed twice).
    """
    breaks = np.asarray(info.block_rows or (0, info.height), dtype=np.int64)
    target = max(1, STRIP_CELLS // max(cols, 1))
    longest = max(target, STRIP_MAX_CELLS // max(cols, 1))
    out = []
    s = lo
    while s < hi:
        i = int(np.searchsorted(breaks, s + target))
        e = min(hi, int(breaks[i]) if i < len(breaks) else hi)
        if e - s > longest:  # blocks too large to hold whole: plain strips
            e = min(hi, s + target)
        out.append((s, e))
        s = e
    return out


class _Feed:
    """The strips of :func:`iter_slope_blocks`: read one ahead, cut into blocks for the pool.

    Each strip's array has two spare rows above and one below (see :func:`_read_strip`); the
    last two rows of a strip are carried into the next as its halo, rows off the raster are NaN.
    """

    def __init__(
        self,
        strips: list[tuple[int, int]],
        height: int,
        R0: int,
        R1: int,
        rows: int,
        read: Callable[[int, int], np.ndarray],
        work: Callable[[np.ndarray, int, int], np.ndarray],
    ) -> None:
        self.strips, self.height, self.R1, self.rows = strips, height, R1, rows
        self.read, self.work = read, work
        self.reads: deque[Future[np.ndarray]] = deque()
        #: (strip, first row, slope future), in row order.
        self.pending: deque[tuple[int, int, Future[np.ndarray]]] = deque()
        self.next = 0  # the next strip to cut into blocks
        self.done = R0  # the first row not handed to the pool
        self.tail: np.ndarray | None = None  # the last two rows read, the next strip's halo

    def start(self, reader: ThreadPoolExecutor, pool: ThreadPoolExecutor) -> None:
        self.reader, self.pool = reader, pool
        self.reads.append(reader.submit(self.read, *self.strips[0]))

    def ahead(self) -> bool:
        """Whether to cut the next strip now: nothing else to wait for, or read and room for it."""
        if self.next >= len(self.strips):
            return False
        return not self.pending or (self.next - self.pending[0][0] < LOOKAHEAD and self.reads[0].done())

    def submit_next(self) -> None:
        """Hand the next strip's blocks to the pool (waiting for its read); start reading the one after."""
        k, H = self.next, self.height
        s, e = self.strips[k]
        full = self.reads.popleft().result()
        if k + 1 < len(self.strips):  # read the strip after it while its blocks are computed
            self.reads.append(self.reader.submit(self.read, *self.strips[k + 1]))
        # full's rows: 2 spare, rows s..e-1, 1 spare. Fill the halo rows above.
        if self.tail is not None:
            full[2 - len(self.tail) : 2] = self.tail
            top = 2 - len(self.tail)
        else:
            top = 1 if s == 0 else 2  # row -1 (off the raster, NaN) above row 0
            full[1] = np.nan
        bottom = len(full) if e == H else len(full) - 1  # row H (NaN) below the last
        full[-1] = np.nan
        buf = full[top:bottom]
        first = s - (2 - top)  # the absolute row of buf[0]
        end = min(self.R1, first + len(buf) - 1)
        for r0 in range(self.done, end, self.rows):
            r1 = min(end, r0 + self.rows)
            win = buf[r0 - 1 - first : r1 + 1 - first]
            self.pending.append((k, r0, self.pool.submit(self.work, win, r0, r1)))
        self.done = max(self.done, end)
        self.tail = buf[max(0, self.done - 1 - first) :].copy()[-2:]
        self.next = k + 1


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
        About how many cells each computed block holds (the reads are in larger strips,
        aligned to the source's blocks; see :func:`_strips`).
    threads : int, default 2
        Blocks computed at once (numpy and GDAL release the GIL); GDAL also decodes a
        strip's tiles on this many threads (fewer under :func:`esc_gis._threads.at_most`).
        Two strips (the one computed and the next, being read) and the blocks of one strip
        are in memory at most, so memory stays flat.

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
    threads = cap(threads)
    if window is None:
        window = Window(0, 0, W, H)
    c0, R0 = int(window.col_off), int(window.row_off)
    c1, R1 = c0 + int(window.width), R0 + int(window.height)
    rows = max(1, min(R1 - R0, block_cells // max(c1 - c0, 1)))
    strips = _strips(info, max(0, R0 - 1), min(H, R1 + 1), c1 - c0 + 2)
    local = threading.local()
    handles: list[rasterio.io.DatasetReader] = []

    def read(s: int, e: int) -> np.ndarray:
        # Two spare rows on top for the halo carried from the previous strip, one below for
        # the row off the raster after the last one. One handle per thread: GDAL handles are
        # not shared between threads.
        src = getattr(local, "src", None)
        if src is None:
            src = local.src = info.open(NUM_THREADS=gdal_threads(threads))
            handles.append(src)
        return _read_strip(src, info, s, e, c0, c1, compute_edges)

    def work(win: np.ndarray, r0: int, r1: int) -> np.ndarray:
        scratch = getattr(local, "scratch", None)
        if scratch is None:
            scratch = local.scratch = _Scratch(rows, c1 - c0)
        return _block(win, info, r0, r1, c0 == 0, c1 == W, compute_edges, scratch)

    feed = _Feed(strips, H, R0, R1, rows, read, work)
    try:
        with ThreadPoolExecutor(max_workers=1) as reader, ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            feed.start(reader, pool)
            while feed.pending or feed.next < len(strips):
                # The next strip's blocks go to the pool as soon as it is read, not once this
                # strip's blocks are consumed: the pool keeps computing while the consumer
                # writes (compresses). At most LOOKAHEAD strips of blocks are outstanding, so
                # memory stays flat.
                while feed.ahead():
                    feed.submit_next()
                if feed.pending:
                    _, r0, fut = feed.pending.popleft()
                    yield r0 - R0, fut.result()
    finally:
        for h in handles:
            h.close()


def _read_strip(
    src: rasterio.io.DatasetReader, info: DemInfo, s: int, e: int, c0: int, c1: int, compute_edges: bool
) -> np.ndarray:
    """Rows ``s:e`` of columns ``c0 - 1 .. c1`` as float32, NaN for nodata and off the raster.

    The array has two spare rows above and one below (filled by the caller). Under
    ``compute_edges`` the columns off the raster are extrapolated (``2a - b``), as gdaldem does.
    """
    W = info.width
    clo, chi = max(0, c0 - 1), min(W, c1 + 1)
    full = np.empty((e - s + 3, c1 - c0 + 2), dtype=np.float32)
    full[:, 0] = np.nan
    full[:, -1] = np.nan
    part = full[2 : 2 + e - s, clo - (c0 - 1) : chi - (c0 - 1)]
    src.read(info.band, window=Window(clo, s, chi - clo, e - s), out=part)
    if info.nodata is not None and not math.isnan(info.nodata):
        part[part == np.float32(info.nodata)] = np.nan
    if compute_edges:
        if c0 == 0:
            full[2:-1, 0] = 2 * full[2:-1, 1] - full[2:-1, 2]
        if c1 == W:
            full[2:-1, -1] = 2 * full[2:-1, -2] - full[2:-1, -3]
    return full


def _check_compress(compress: str) -> None:
    if compress not in COMPRESSIONS:
        msg = f"compress must be one of {', '.join(COMPRESSIONS)}, not {compress!r}."
        raise ValueError(msg)


def raster_profile(
    info: DemInfo,
    dtype: str,
    nodata: float,
    *,
    compress: str = "deflate",
    creation_options: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Creation options of the rasters esc_gis writes: tiled 512 x 512, compressed, BigTIFF if needed.

    Floating-point rasters use the floating-point predictor (3), integers horizontal
    differencing (2). Deflate level 1 by default: every GIS reads it, and on a slope raster
    (float noise in every mantissa) level 6 makes the file about 1 % smaller for twice the
    time. ZSTD level 1 gives the same size in about a third of deflate's time, but older
    readers (ArcMap, GDAL before 2.3) cannot open it, so it is asked for by name.

    Parameters
    ----------
    info : DemInfo
        The grid to write on.
    dtype : str
    nodata : float
    compress : {"deflate", "zstd", "lzw", "none"}, default "deflate"
    creation_options : mapping, optional
        GDAL GTiff creation options (``--co NAME=VALUE``, as rio takes them), over the ones
        above: a name given here replaces ours in any case (``zlevel`` and ``ZLEVEL`` are one).

    Returns
    -------
    dict
        A rasterio profile for ``rasterio.open(path, "w", **profile)``.

    Raises
    ------
    ValueError
        If ``compress`` is not one of :data:`COMPRESSIONS`.
    """
    _check_compress(compress)
    codec: dict[str, Any] = {"compress": compress, "predictor": 3 if np.dtype(dtype).kind == "f" else 2}
    if compress == "deflate":
        codec["zlevel"] = 1
    elif compress == "zstd":
        codec["zstd_level"] = 1
    elif compress == "none":
        codec = {}
    profile: dict[str, Any] = {
        "driver": "GTiff",
        "width": info.width,
        "height": info.height,
        "count": 1,
        "dtype": dtype,
        "nodata": nodata,
        "crs": rasterio.crs.CRS.from_wkt(info.crs.to_wkt()),
        "transform": info.transform,
        "tiled": True,
        "blockxsize": TILE,
        "blockysize": TILE,
        **codec,
        "BIGTIFF": "IF_SAFER",
        "NUM_THREADS": gdal_threads("ALL_CPUS"),
        # Blocks never written (the overviews until they are filled, all-nodata tiles) take
        # no space and read as nodata.
        "SPARSE_OK": True,
    }
    return _with_options(profile, creation_options)


def _creation(options: Mapping[str, str] | None) -> dict[str, str]:
    """Return the user's creation options with upper-case names, as GDAL takes them."""
    return {str(k).upper(): str(v) for k, v in (options or {}).items()}


def _named(options: Mapping[str, str], names: Sequence[str]) -> dict[str, str]:
    """Return the items of ``options`` GDAL named in ``names`` (all of them if it named none we know)."""
    wanted = {n.upper() for n in names}
    return {k: v for k, v in options.items() if k in wanted} or dict(options)


def _with_options(base: dict[str, Any], options: Mapping[str, str] | None) -> dict[str, Any]:
    """Merge the user's creation options over ``base``: one entry per name, whatever its case."""
    user = _creation(options)
    return {k: v for k, v in base.items() if k.upper() not in user} | user


def check_creation_options(options: Mapping[str, str] | None, driver: str = "GTiff") -> None:
    """Refuse a creation option GDAL's ``driver`` does not have, before any work.

    GDAL only warns about an unknown creation option and writes the file without it, so a typo
    (``--co ZLEVLE=9``) would pass unseen; here a one-cell raster is made in memory with the
    options and GDAL's warning becomes the error.

    Raises
    ------
    OutputFormatError
        If the driver has no such option, naming it and where the driver's options are listed.
    """
    import logging

    from rasterio.io import MemoryFile

    names = _creation(options)
    if not names:
        return
    said: list[str] = []

    class _Heard(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    heard, log = _Heard(), logging.getLogger("rasterio")
    level, propagate = log.level, log.propagate
    log.addHandler(heard)
    log.setLevel(logging.DEBUG)
    log.propagate = False  # GDAL's warning becomes our error, not a line on the console too
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a one-cell raster in memory has no georeferencing
            with MemoryFile() as mem:
                if driver == "COG":  # the COG driver only copies: from a one-cell GeoTIFF
                    with mem.open(driver="GTiff", width=1, height=1, count=1, dtype="float32") as one:
                        one.write(np.zeros((1, 1, 1), dtype="float32"))
                    rasterio.shutil.copy(mem.name, "/vsimem/esc_gis_co_check.tif", driver="COG", **names)
                    rasterio.shutil.delete("/vsimem/esc_gis_co_check.tif")
                else:
                    with mem.open(driver=driver, width=1, height=1, count=1, dtype="float32", **names):
                        pass
    except rasterio.errors.RasterioError as exc:
        msg = f"creation_options={names!r}: GDAL's {driver} driver refused it ({exc})."
        raise OutputFormatError(msg) from None
    finally:
        log.removeHandler(heard)
        log.setLevel(level)
        log.propagate = propagate
    unknown = [m.rsplit(" ", 1)[-1] for m in said if "does not support creation option" in m]
    if unknown:
        page = "cog" if driver == "COG" else "gtiff"
        msg = (
            f"creation_options={_named(names, unknown)!r}: GDAL's {driver} driver has no such creation option; see "
            f"https://gdal.org/drivers/raster/{page}.html#creation-options."
        )
        raise OutputFormatError(msg)


#: The largest float32: where np.nan_to_num put an infinite slope (from elevations near 1e38).
_FLOAT32_MAX = np.float32(np.finfo(np.float32).max)


def _to_nodata(a: np.ndarray) -> None:
    """Write NODATA over NaN in place, and the largest float32 over +inf, as ``np.nan_to_num`` did.

    nan_to_num makes six passes (NaN, then +inf and -inf through isinf and signbit); a slope
    is never negative, so one clamp and one masked copy give the same cells for half the time.
    """
    np.minimum(a, _FLOAT32_MAX, out=a)  # NaN stays NaN
    np.copyto(a, np.float32(NODATA), where=np.isnan(a))


def overview_factors(width: int, height: int) -> list[int]:
    """Overview levels 2, 4, 8, ... down to about OVERVIEW_MIN_SIDE cells on the longer side."""
    out, f = [], 2
    while max(width, height) / f >= OVERVIEW_MIN_SIDE:
        out.append(f)
        f *= 2
    return out


def halve(a: np.ndarray) -> np.ndarray:
    """Average 2 x 2 cells into one, ignoring NaN (GDAL's ``average``); NaN where all four are.

    Odd last rows and columns are averaged over the cells there are, as GDAL does.

    Examples
    --------
    >>> halve(np.array([[1, 3, 5], [np.nan, 2, 7]], dtype=np.float32))
    array([[2., 6.]], dtype=float32)
    """
    h, w = a.shape
    if h % 2 or w % 2:
        padded = np.full((h + h % 2, w + w % 2), np.nan, dtype=np.float32)
        padded[:h, :w] = a
        a = padded
    quads = [a[i::2, j::2] for i in (0, 1) for j in (0, 1)]
    out = quads[0] + quads[1]
    out += quads[2]
    out += quads[3]
    out *= np.float32(0.25)
    # NaN is rare (nodata, its ring, the raster's border): average those cells again, over
    # the valid ones only.
    bad = np.nonzero(np.isnan(out))
    if len(bad[0]):
        q = np.stack([v[bad] for v in quads])
        valid = ~np.isnan(q)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[bad] = np.where(valid, q, 0).sum(axis=0) / valid.sum(axis=0)  # 0 / 0 = NaN
    return out


class _Overviews:
    """Overviews made from the slope as it is written, instead of GDAL re-reading the file.

    GDAL's ``BuildOverviews`` after the fact decompresses the whole full-resolution raster
    again: on a tiled, deflate-compressed output it cost as much as computing the slope.
    Here the overview levels are allocated empty (sparse, so nearly free) when the output is
    created; each tile row written is halved into a raw temporary file (the first level);
    once the full resolution is closed, each level is written into its overview through a
    dataset opened on that level, and halved again into the next. Memory stays one strip.
    """

    def __init__(self, path: Path, factors: list[int]) -> None:
        self.path, self.factors = path, factors
        self.raw = tempfile.TemporaryFile(dir=path.parent)  # closed by finish()
        self.width = 0

    def add(self, rows: np.ndarray) -> None:
        """Halve a strip of full-resolution rows (an even count, except the last strip)."""
        half = halve(rows)
        self.width = half.shape[1]
        self.raw.write(half.tobytes())

    def finish(self) -> None:
        """Write every level into the closed output's overviews."""
        try:
            for level in range(len(self.factors)):
                last = level + 1 == len(self.factors)
                nxt = None if last else tempfile.TemporaryFile(dir=self.path.parent)
                self.raw.seek(0)
                width = self.width
                # As the full resolution: written from a thread of its own, so reading and
                # halving the next strip never keep GDAL's compression threads waiting.
                with (
                    rasterio.open(self.path, "r+", overview_level=level) as ov,
                    ThreadPoolExecutor(max_workers=1) as writer,
                ):
                    if ov.width != width:  # pragma: no cover - GDAL sizes overviews by ceil, as halve
                        msg = f"overview {level} is {ov.width} wide, expected {width}"
                        raise RuntimeError(msg)
                    writing: deque[Future[None]] = deque()
                    for r0 in range(0, ov.height, TILE):
                        n = min(TILE, ov.height - r0)
                        strip = np.fromfile(self.raw, dtype=np.float32, count=n * width).reshape(n, width)
                        if nxt is not None:
                            half = halve(strip)
                            self.width = half.shape[1]
                            nxt.write(half.tobytes())
                        _to_nodata(strip)
                        writing.append(writer.submit(ov.write, strip, 1, window=Window(0, r0, width, n)))
                        if len(writing) > 1:
                            writing.popleft().result()
                    for done in writing:
                        done.result()
                self.raw.close()
                if nxt is not None:
                    self.raw = nxt
        finally:
            self.raw.close()


#: Tile-row buffers the writer thread takes in turn. Two (one written while the next is filled)
#: measured no faster than one, in alternating pairs on 8,000 and 12,000 square DEMs (0.96x and
#: 0.98x wall), and held one more tile row (15-30 MB at 12,000 columns): one it is.
_WRITE_BUFFERS = 1


def _write_tile_rows(
    dst: rasterio.io.DatasetWriter,
    blocks: Iterator[tuple[int, np.ndarray]],
    overviews: _Overviews | None,
    progress: Callable[[float], None] | None,
) -> None:
    """Write the slope blocks (NaN for nodata) into ``dst`` as whole tile rows, on a writer thread.

    Rows are gathered into whole tile rows before writing: a partial tile row would be
    compressed, then read back and compressed again. Compression is the longest part of the
    run, and ``dst.write`` waits on GDAL's compression threads; writing from a thread of its
    own lets the next tile row be gathered, halved for the overviews and filled with nodata
    meanwhile, so the compression threads are never left waiting for it. The dataset is
    used by one thread only.
    """
    height, width = dst.height, dst.width
    rows = min(TILE, height)
    free = [np.empty((rows, width), dtype=np.float32) for _ in range(_WRITE_BUFFERS)]
    writing: deque[tuple[Future[None], np.ndarray]] = deque()
    with ThreadPoolExecutor(max_workers=1) as writer:
        acc = free.pop()
        acc_r0 = filled = 0
        for r0, block in blocks:
            i = 0
            while i < len(block):
                n = min(len(block) - i, rows - filled)
                acc[filled : filled + n] = block[i : i + n]
                filled, i = filled + n, i + n
                if filled == rows or acc_r0 + filled == height:
                    part = acc[:filled]
                    if overviews is not None:
                        overviews.add(part)
                    _to_nodata(part)
                    window = Window(0, acc_r0, width, filled)
                    writing.append((writer.submit(dst.write, part, 1, window=window), acc))
                    acc_r0, filled = acc_r0 + filled, 0
                    if free:
                        acc = free.pop()
                    else:  # reuse the buffer written before, once written
                        done, acc = writing.popleft()
                        done.result()
            if progress is not None:
                progress((r0 + block.shape[0]) / height)
        for done, _ in writing:
            done.result()


def write_slope(
    dem: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    z_unit: str | None = None,
    band: int | None = None,
    compute_edges: bool = False,
    cog: bool = False,
    compress: str = "deflate",
    overwrite: bool = False,
    progress: Callable[[float], None] | None = None,
    block_cells: int = BLOCK_CELLS,
    threads: int = 2,
    style_steep_pct: float | None = None,
    creation_options: Mapping[str, str] | None = None,
) -> DemInfo:
    """Write a slope raster in percent (float32 GeoTIFF, nodata -9999), streaming.

    The output is tiled 512 x 512, deflate-compressed with the floating-point predictor,
    with overviews (averaged), so a GIS opens a county's slope at once; or a Cloud Optimized
    GeoTIFF with ``cog=True``. Its band description and tags say which DEM band it came
    from, the algorithm, the units and the edge rule.

    Parameters
    ----------
    dem : path
        The elevation raster: any raster GDAL reads, or a folder of tiles on one grid.
    output : path
        A ``.tif`` to write.
    z_unit : {"m", "ft", "us_ft"}, optional
        The elevations' unit when the raster does not say (see :func:`open_dem`).
    band : int, optional
        The band holding the elevations; required when the DEM has more than one.
    compute_edges : bool, default False
        As gdaldem ``-compute_edges``.
    cog : bool, default False
        Write a Cloud Optimized GeoTIFF (GDAL's COG driver: overviews first, then tiles).
    compress : {"deflate", "zstd", "lzw", "none"}, default "deflate"
        The output's compression (see :func:`raster_profile`).
    overwrite : bool, default False
    creation_options : mapping, optional
        GDAL creation options over ours (``--co NAME=VALUE``): the GTiff driver's, or the COG
        driver's with ``cog``. An option the driver does not have is refused before any work.
    progress : callable, optional
        Called with the fraction done after each block.
    block_cells : int
        Cells per computed block (memory is about 40 bytes per cell of one block per thread).
    threads : int, default 2
        Threads computing blocks, and decoding the DEM's tiles (see :func:`iter_slope_blocks`).
    style_steep_pct : float, optional
        Also write a QGIS style beside the raster (same stem, ``.qml``: QGIS loads it with
        the raster) whose slope classes are cut at this threshold, the steep class in red
        (:func:`esc_gis.styles.slope_qml`). Refused if it styles another raster of the stem.

    Returns
    -------
    DemInfo
        The DEM's description, units and band included.

    Raises
    ------
    OutputExistsError, OutputFormatError
        If the output exists (without ``overwrite``), is not a ``.tif``, or a creation option
        is not the driver's.
    LayerReadError, BandError, CRSError, UnitsError
        As :func:`open_dem`.
    ValueError
        If ``compress`` is not one of :data:`COMPRESSIONS`.
    """
    _check_compress(compress)  # before any work: a typo must not cost a county's run
    co = _creation(creation_options)
    check_creation_options(co, "COG" if cog else "GTiff")
    out = check_output_file(
        output, suffixes=(".tif", ".tiff"), kind="slope rasters are written as GeoTIFF", overwrite=overwrite
    )
    # The style keeps the raster's stem, the name QGIS loads; a stale one (its raster gone) is replaced.
    style = check_style(out, overwrite=overwrite) if style_steep_pct is not None else None
    info = open_dem(dem, z_unit=z_unit, band=band)
    warn_if_dem_far(info)  # measured in its own CRS: a DEM far from that CRS's zone has the wrong one
    with (
        atomic_output(out) as final,
        rasterio.Env(GDAL_CACHEMAX=GDAL_CACHE_BYTES, GDAL_NUM_THREADS=gdal_threads(threads), GTIFF_DIRECT_IO=DIRECT_IO),
    ):
        # A COG is copied from a tiled GeoTIFF written beside it (the COG driver only copies).
        tmp = final.with_name(f".tiled.{final.name}") if cog else final
        profile = raster_profile(info, "float32", NODATA, compress=compress, creation_options=None if cog else co)
        with rasterio.open(tmp, "w", **profile) as dst:
            dst.set_band_description(1, f"slope_pct (Horn) of {info.band_label} of {Path(info.path).name}")
            dst.update_tags(SOURCE_DEM=Path(info.path).name, SOURCE_BAND=str(info.band))
            dst.update_tags(
                1,
                ALGORITHM="Horn (as gdaldem slope -p)",
                UNITS="percent",
                Z_UNIT=info.z_unit,
                COMPUTE_EDGES=str(compute_edges),
                SOURCE_BAND=str(info.band),
                SOURCE_BAND_DESCRIPTION=info.band_description or "",
            )
            factors = overview_factors(info.width, info.height)
            if factors:
                # Allocated empty (sparse: nearly free); filled by _Overviews below.
                dst.build_overviews(factors, Resampling.nearest)
                dst.update_tags(ns="rio_overview", resampling="average")
                overviews = _Overviews(tmp, factors)
            blocks = iter_slope_blocks(info, compute_edges=compute_edges, block_cells=block_cells, threads=threads)
            _write_tile_rows(dst, blocks, overviews if factors else None, progress)
        if factors:
            overviews.finish()
        if cog:
            cog_options = {
                "COMPRESS": "NONE" if compress == "none" else compress.upper(),
                "PREDICTOR": "NO" if compress == "none" else "YES",
                "BLOCKSIZE": str(TILE),
                "OVERVIEW_RESAMPLING": "AVERAGE",
                "BIGTIFF": "IF_SAFER",
                "NUM_THREADS": gdal_threads("ALL_CPUS"),
            }
            # With --cog, --co are the COG driver's options (as rio passes them to its output's driver).
            rasterio.shutil.copy(tmp, final, driver="COG", **_with_options(cog_options, co))
            tmp.unlink()
    if style is not None and style_steep_pct is not None:
        # After the raster: a style never appears beside a raster that failed.
        write_slope_qml(style, style_steep_pct)
    return info
