"""Order: a layer's sites put in spatial order for batching, and a run's rows put back in file order.

A streamed run measures each batch against the layers under it: a batch's DEM window is the
box around its sites. A layer in spatial order (a county's parcels by section, a serpentine
export) gives each batch a small patch; a layer whose rows are not (sorted by owner or id,
shuffled by an export) gives every batch a window over the whole county, read again for every
batch. :func:`spatial_order` says whether the file's order is spatial enough, from the
features' bounding boxes (:func:`pyogrio.read_bounds`, no geometry parsed: 0.45 s for
300,000 GeoPackage features), and else returns a Hilbert order of their centres, in which
consecutive features are neighbours.

Batches cut in that order screen sites from all over the file, and the output keeps the file's
order: :class:`FileOrder` spills each batch's rows to disk (Arrow IPC, LZ4), sorted by their
place in the file, and reads them back a window of places at a time, so memory stays a
window's rows plus one small chunk for each batch spilled.
"""

from __future__ import annotations

__all__ = ["SORT_WHEN_WINDOWS_OVER", "FileOrder", "hilbert_keys", "spatial_order", "windows_area"]

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

#: Sort when the batches' windows, cut in the file's order, add up to more than this many
#: times those cut in Hilbert order. Hilbert batches of synthetic county parcels cover 1.04x the
#: layer's box; the same parcels in serpentine file order 1.0x (bands as wide as the layer), so
#: an ordered file stays near 1 and keeps its own order (ranges read faster than ids, and no
#: spill). A shuffled file's windows are each the whole layer: the number of batches times,
#: 1.9x already at two batches, where sorting took a 100,000-parcel run from 9.2 s to 7.5 s.
#: 1.5 sorts from two batches on and leaves an ordered file half as much room again.
SORT_WHEN_WINDOWS_OVER = 1.5

#: Bits per axis of the Hilbert grid: 65,536 cells a side, finer than any parcel over a county.
_LEVEL = 16

#: Rows in a spilled chunk: one chunk per spilled batch is held while reading back, so the
#: held chunks are batches x this many rows (1,024 rows: about 1.3 MB of a county's findings
#: text; at 4,096 the 20 batches of a million parcels held 100 MB, and the run peaked at 1.54 GB).
_CHUNK = 1024

#: Most places handed back at a time: each window's rows are gathered from every batch and
#: copied once into file order, so a window is held twice while it is made (16,384 rows: about
#: 20 MB of them; a 50,000-row window cost 60 MB twice over, for no gain in speed).
_WINDOW = 16_384


def hilbert_keys(bounds: np.ndarray, level: int = _LEVEL) -> np.ndarray:
    """Return each box's place along a Hilbert curve over the boxes' extent, from its centre.

    Parameters
    ----------
    bounds : numpy.ndarray, shape (4, n)
        ``minx, miny, maxx, maxy`` of each feature (as :func:`pyogrio.read_bounds` gives them);
        a feature without a geometry (NaN) is placed at the extent's corner.
    level : int, default 16
        Bits per axis (at most 31).

    Returns
    -------
    numpy.ndarray of uint64

    Raises
    ------
    ValueError
        If ``level`` is not between 1 and 31.
    """
    if not 1 <= level <= 31:
        msg = f"level is {level}: give 1 to 31 bits per axis."
        raise ValueError(msg)
    cx = (bounds[0] + bounds[2]) / 2
    cy = (bounds[1] + bounds[3]) / 2
    side = (1 << level) - 1

    def cells(v: np.ndarray) -> np.ndarray:
        lo, hi = (np.nanmin(v), np.nanmax(v)) if np.isfinite(v).any() else (0.0, 1.0)
        scaled = np.nan_to_num((v - lo) / ((hi - lo) or 1.0) * side, nan=0.0)
        return np.clip(scaled, 0, side).astype(np.uint64)

    x, y = cells(cx), cells(cy)
    d = np.zeros(len(x), dtype=np.uint64)
    n1 = np.uint64(side)
    s = 1 << (level - 1)
    # The classic xy -> d walk, every feature at once: one pass per bit, not per feature.
    while s > 0:
        su = np.uint64(s)
        rx = (x & su) > 0
        ry = (y & su) > 0
        d += su * su * ((3 * rx.astype(np.uint64)) ^ ry.astype(np.uint64))
        flip = ~ry & rx
        x = np.where(flip, n1 - x, x)
        y = np.where(flip, n1 - y, y)
        swap = ~ry
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        s >>= 1
    return d


def windows_area(bounds: np.ndarray, order: np.ndarray, size: int) -> float:
    """Return the summed area of the boxes around each ``size`` features taken in ``order``.

    What a run's batches read of a raster under them, in the layer's units squared.

    Parameters
    ----------
    bounds : numpy.ndarray, shape (4, n)
        As :func:`hilbert_keys`.
    order : numpy.ndarray of int
        The features' positions in batch order.
    size : int
        Features a batch.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``size`` is under 1.
    """
    if size < 1:
        msg = f"size is {size}: give a positive number of features."
        raise ValueError(msg)
    if not len(order):
        return 0.0
    b = bounds[:, order]
    starts = np.arange(0, len(order), size)
    # fmin/fmax skip NaN: a feature without geometry widens no window.
    lo_x, lo_y = np.fmin.reduceat(b[0], starts), np.fmin.reduceat(b[1], starts)
    hi_x, hi_y = np.fmax.reduceat(b[2], starts), np.fmax.reduceat(b[3], starts)
    return float(np.nansum((hi_x - lo_x) * (hi_y - lo_y)))


def spatial_order(bounds: np.ndarray, size: int) -> np.ndarray | None:
    """Return the features' positions in Hilbert order, or None when the file's order serves.

    Sorted when the file's batches' windows add up to more than
    :data:`SORT_WHEN_WINDOWS_OVER` times the Hilbert order's; a layer of one batch is never
    sorted (there is one window either way).

    Parameters
    ----------
    bounds : numpy.ndarray, shape (4, n)
        As :func:`hilbert_keys`.
    size : int
        Features a batch.

    Returns
    -------
    numpy.ndarray of int64 or None

    Raises
    ------
    ValueError
        If ``size`` is under 1.
    """
    n = bounds.shape[1]
    if size < 1:
        msg = f"size is {size}: give a positive number of features."
        raise ValueError(msg)
    if n <= size:
        return None
    order = np.argsort(hilbert_keys(bounds), kind="stable").astype(np.int64)
    as_filed = windows_area(bounds, np.arange(n), size)
    if as_filed <= SORT_WHEN_WINDOWS_OVER * windows_area(bounds, order, size):
        return None
    return order


class FileOrder:
    """Rows screened in spatial batches, spilled to disk, read back in the file's order.

    Parameters
    ----------
    folder : Path
        Where the spill goes (a temporary folder inside it, removed by :meth:`close`): the
        output's folder, which has room for the output.
    window : int
        Places handed back at a time (the run's batch size; at most 16,384).

    Raises
    ------
    OSError
        If the spill folder cannot be made.
    """

    def __init__(self, folder: Path, window: int) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=".esc_gis-order-", dir=folder))
        self.window = max(1, min(window, _WINDOW))
        self.spills: list[tuple[Path, np.ndarray]] = []  # each batch's file and its rows' places, ascending
        codec = "lz4" if pa.Codec.is_available("lz4") else None
        # LZ4: a county batch's findings text shrinks several times, at a few ms a batch.
        self.options = pa.ipc.IpcWriteOptions(compression=codec)

    def add(self, rows: pa.Table, pos: np.ndarray) -> None:
        """Spill a batch's rows, ``pos`` their places in the file (0-based), sorted by place.

        Raises
        ------
        OSError
            If the spill cannot be written.
        """
        if not rows.num_rows:
            return
        pos = np.asarray(pos)
        if np.any(pos[1:] < pos[:-1]):  # a spatial batch comes sorted (batches.plan_jobs): no copy then
            order = np.argsort(pos, kind="stable")
            rows, pos = rows.take(order), pos[order]
        path = self.dir / f"{len(self.spills):06d}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, rows.schema, options=self.options) as w:
            for start in range(0, rows.num_rows, _CHUNK):
                w.write_table(rows.slice(start, _CHUNK), max_chunksize=_CHUNK)
        self.spills.append((path, pos))
        pa.default_memory_pool().release_unused()  # the compressed copies, not held until the next batch

    def tables(self, n: int) -> Iterator[pa.Table]:
        """Yield the spilled rows in file order, a window of ``n`` places' rows at a time.

        Raises
        ------
        OSError
            If a spill cannot be read.
        """
        readers = [pa.ipc.open_file(pa.OSFile(str(path), "rb")) for path, _ in self.spills]
        held: list[tuple[int, pa.Table | None]] = [(-1, None)] * len(readers)
        for a in range(0, n, self.window):
            b = a + self.window
            parts: list[pa.Table] = []
            places: list[np.ndarray] = []
            for k, (_, pos) in enumerate(self.spills):
                i0, i1 = np.searchsorted(pos, [a, b])
                for c in range(int(i0) // _CHUNK, -(-int(i1) // _CHUNK)):
                    if held[k][0] != c:  # one chunk a spill is held: the windows advance through it
                        held[k] = (c, pa.Table.from_batches([readers[k].get_batch(c)]))
                    chunk = held[k][1]
                    assert chunk is not None
                    lo, hi = max(int(i0), c * _CHUNK), min(int(i1), (c + 1) * _CHUNK)
                    parts.append(chunk.slice(lo - c * _CHUNK, hi - lo))
                    places.append(pos[lo:hi])
            if not parts:
                continue
            # A column empty in one batch (Arrow's null type) takes the others' type.
            rows = pa.concat_tables(parts, promote_options="permissive")
            yield rows.take(np.argsort(np.concatenate(places), kind="stable"))
            del rows, parts
            # Arrow's allocator keeps what a window freed for reuse; the next window's chunks
            # come in other sizes, so hand it back rather than let the pool grow by a window.
            pa.default_memory_pool().release_unused()

    def close(self) -> None:
        """Remove the spill."""
        shutil.rmtree(self.dir, ignore_errors=True)
