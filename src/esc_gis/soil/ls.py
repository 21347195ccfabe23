"""RUSLE LS from a DEM: slope, flow routing over the disturbed surface, Desmet & Govers L.

Given an elevation window in memory (the later soil-loss step reads it from the DEM), compute
for every cell of the disturbed surface:

- slope in percent by Horn's method, exactly as :func:`esc_gis.terrain.slope.horn_slope_pct`
  (``gdaldem slope -p``) computes it; the window's outer edge is extrapolated linearly
  (gdaldem ``-compute_edges``) so a plane keeps its slope to the edge, and a nodata neighbour
  takes the centre cell's value;
- the upslope contributing area at the cell's inlet, by routing flow over the surface
  (see *Routing* below);
- L by :func:`~esc_gis.soil.rusle.slope_length_l_desmet_govers` (with the slope-length cap),
  S by :func:`~esc_gis.soil.rusle.slope_steepness_s`, LS = L · S, and the cells steeper than
  the method's limit flagged by :func:`~esc_gis.soil.rusle.mask_outside_method` (their LS is
  NaN: they need prescriptive practices, not a number).

Routing. Desmet & Govers (1996) turn the inlet area into a slope length by dividing it by the
cell's contour width D · x, with x = |sin a| + |cos a| for aspect a. That width is exactly the
flow width only when flow moves from a cell into its two downslope *cardinal* neighbours, split
in proportion to the x and y components of the gradient (an aspect-driven routing in the manner
of Lea 1992, as remembered, not re-read): on a plane at any aspect every cell then passes on
exactly λ · D · x of area, so L is exact. D8 puts diagonal flow into a tube D/√2 wide and halves
λ on a diagonal slope; Freeman's or Quinn's multiple-flow-direction routing lets part of the
flow skip a row of cells on a diagonal slope and underestimates λ there by a factor of 4/3
(Quinn) to 1.42 (Freeman, p = 1.1), worked out on the infinite diagonal plane. So this module
routes by gradient components, in numpy: the routing is a directed acyclic graph (flow goes
only to strictly lower cells), and the accumulation is computed in wavefronts (Kahn's
topological order): every cell whose donors are all done is processed in one numpy step, so
the Python loop runs once per cell of the longest flow path, not once per cell. pyflwdir and
pysheds offer D8, D-infinity and MFD (all of which mismatch x as above) and pull in numba and
scipy; neither is needed here. (Measured on 16 Mcells, ``benchmarks/bench_soil_loss.py``:
pyflwdir's D8 accumulation takes 0.9 s against 4.6 s here, but its pit fill and D8 take 5.9 s
before it, and the whole LS grid takes 0.4 of SAGA's "LS-Factor, Field Based" time.)

Memory. The full-size arrays are what the routing and the result need, about 23 bytes a cell
besides the caller's DEM (which is read, never copied, unless nodata cells must be made NaN):
the slope (float32), one byte of routing code a cell (the axis receivers and the donors still
to come), the two accumulators (LS then takes the slope accumulator's place) and the masks.
The shares of each cell's flow are not stored: they are recomputed from gathered gradients
when the cell's wavefront comes. Everything local (padded elevations, gradients, x, L, S, the
summary) is computed in row blocks of ``_BLOCK_CELLS``, large wavefronts in chunks of
``_WAVE_CELLS``, with results the same to the bit whatever the sizes. The routing itself
cannot be windowed exactly: contributing area has no bounded reach.

Flow is routed over the disturbed surface only: a cell outside the disturbed mask (or nodata)
neither contributes area nor receives flow, so run-on from undisturbed ground above the site is
not counted (the WDNR sheet's slope length is measured on the disturbed slope; run-on is meant
to be diverted). A share of flow whose cardinal neighbour is off the surface or off the window
leaves the surface there (so an edge does not turn into a gutter collecting flow along it); a
share whose neighbour is not lower goes to the other cardinal neighbour; if neither takes any
flow, the cell is an outlet:
slope length ends there, as RUSLE's does where flow concentrates, leaves the site, or deposits
(pits and flats). Pits and flats need no filling for this reason.

Representative slope. The WDNR sheet takes one slope length and one steepness. This module
gives the worst case over the disturbed surface inside the method: for every cell, the slope
length to its outlet edge λ_out = (A_in + D²) / (D · x) (capped) and the mean slope of its
contributing area (area-weighted, accumulated along the same routing: on a plane, the plane's
slope), scored with :func:`~esc_gis.soil.rusle.ls_factor`; the cell with the largest LS gives
the representative length, slope and LS. This is an approximation of "the longest, steepest
flow path" of the sheet's instructions (not retrieved, domain-reference § 3.2), documented as
such.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from esc_gis.errors import Problem, ValidationError
from esc_gis.soil.rusle import (
    DEFAULT_MAX_SLOPE_LENGTH_FT,
    flow_direction_factor_x,
    ls_desmet_govers,
    ls_factor,
    mask_outside_method,
)
from esc_gis.terrain.slope import horn_slope_pct

__all__ = ["LsGrid", "accumulate_cardinal", "ls_grid"]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

_SOURCE = "LS input"


@dataclass(frozen=True)
class LsGrid:
    """Per-cell LS of a DEM window and its summary over the disturbed surface.

    Attributes
    ----------
    slope_pct32 : numpy.ndarray of float32
        Horn slope, percent, for every cell with an elevation (NaN at nodata), as computed: in
        float32, as gdaldem does. :attr:`slope_pct` gives it as float64.
    inlet_area_sqft : numpy.ndarray of float64
        Upslope contributing area at each surface cell's inlet, sq ft, not counting the cell
        (NaN off the surface).
    ls : numpy.ndarray of float64
        RUSLE LS per surface cell inside the method; NaN off the surface and outside the method.
    surface : numpy.ndarray of bool
        The routed surface: cells with an elevation inside the disturbed area.
    outside_method : numpy.ndarray of bool
        Surface cells steeper than the method's limit.
    capped : numpy.ndarray of bool
        Surface cells whose inlet slope length reaches the cap (likely concentrated flow).
    cell_size_ft : float
    mean_ls : float
        Area-weighted mean LS over the surface inside the method (NaN if none). Cells are
        equal in area, so this is the cells' mean.
    outside_share : float
        Share of the surface area outside the method (0 to 1; NaN if no surface).
    representative_length_ft, representative_slope_pct, representative_ls : float
        The worst-case single slope (see the module notes); NaN if no cell qualifies.
    representative_cell : tuple of (int, int) or None
        Row and column of the cell that gives it.
    """

    slope_pct32: NDArray[np.float32]
    inlet_area_sqft: FloatArray
    ls: FloatArray
    surface: BoolArray
    outside_method: BoolArray
    capped: BoolArray
    cell_size_ft: float
    mean_ls: float
    outside_share: float
    representative_length_ft: float
    representative_slope_pct: float
    representative_ls: float
    representative_cell: tuple[int, int] | None

    @property
    def slope_pct(self) -> FloatArray:
        """Horn slope, percent, as float64 (a new array each time; the same values as ``slope_pct32``).

        The slope is held in float32, the precision it is computed in, to keep a whole-DEM
        grid within its memory (4 bytes a cell less).
        """
        return self.slope_pct32.astype(np.float64)

    @property
    def surface_area_sqft(self) -> float:
        """Area of the disturbed surface with elevations, sq ft."""
        return float(np.count_nonzero(self.surface)) * self.cell_size_ft**2

    @property
    def outside_area_sqft(self) -> float:
        """Area of the surface outside the method, sq ft: too steep, or past the slope-length cap.

        Both need prescriptive practices rather than a number: sheet-and-rill erosion is not
        what happens on them (cells past the cap most likely carry concentrated flow).
        """
        return float(np.count_nonzero(self.outside_method | self.capped)) * self.cell_size_ft**2


def _padded_rows(src: NDArray[np.floating], z_to_ft: float, r0: int, r1: int) -> FloatArray:
    """Rows ``r0 - 1 .. r1`` of the DEM in feet with gdaldem's ``-compute_edges`` ring, float64.

    The grid's rows ``r0 : r1`` with one row above and below and one column each side; outside
    the grid the ring is extrapolated linearly (2a - b), columns first, then the first and last
    rows over the full width (corners included), so every value is the same to the bit as in
    the whole grid padded at once. ``src`` holds the elevations in their own unit (float32 or
    float64, NaN at nodata): each is scaled as ``float64(z) * z_to_ft``.
    """
    h, w = src.shape
    a, b = max(r0 - 1, 0), min(r1 + 1, h)
    p = np.empty((r1 - r0 + 2, w + 2), dtype=np.float64)
    off = a - (r0 - 1)
    core = p[off : off + b - a]
    core[:, 1:-1] = src[a:b]
    core[:, 1:-1] *= z_to_ft  # in float64: float32 * a Python float would round in float32
    core[:, 0] = 2 * core[:, 1] - core[:, 2]
    core[:, -1] = 2 * core[:, -2] - core[:, -3]
    if r0 == 0:
        p[0] = 2 * p[1] - p[2]
    if r1 == h:
        p[-1] = 2 * p[-2] - p[-3]
    return p


#: Cells per block of the local passes (slope, gradient, routing codes; then L, S and the
#: summary): 0.5 MB per float64 temporary, so the temporaries stay small beside the full-size
#: arrays.
_BLOCK_CELLS = 1 << 16
#: Cells per chunk of a large wavefront: some twenty temporaries of 8 bytes a cell each.
_WAVE_CELLS = 1 << 16


def _gradients(padded: FloatArray, cell_size_ft: float) -> tuple[FloatArray, FloatArray]:
    """Horn's gradient (ft/ft) along +column and +row, a nodata neighbour taking the centre's value.

    The sums are written as in-place steps in the order of the expression
    ``((z2 + 2 z5 + z8) - (z0 + 2 z3 + z6)) / 8D``, so the result is the same to the bit while
    at most three temporaries of the block's size are alive.
    """
    h, w = padded.shape[0] - 2, padded.shape[1] - 2
    views = [padded[r : r + h, c : c + w] for r in range(3) for c in range(3)]
    centre = views[4]
    has_nan = bool(np.isnan(padded).any())  # rare (holes, a masked window)

    def z(k: int) -> FloatArray:
        # A copy only where there is a hole, and one neighbour at a time.
        return np.where(np.isnan(views[k]), centre, views[k]) if has_nan else views[k]

    return _horn_gradients(z, cell_size_ft)


def _horn_gradients(z: Callable[[int], FloatArray], cell_size_ft: float) -> tuple[FloatArray, FloatArray]:
    """Horn's two gradients from ``z(k)``, neighbour k = 3 * row + column of the 3 x 3 window.

    The one formula of both the row blocks (neighbours as shifted views) and the wavefronts
    (neighbours gathered), step for step, so both give the same bits.
    """
    d8 = 8.0 * cell_size_ft

    def side(a: int, b: int, c: int) -> FloatArray:
        out = np.multiply(z(b), 2)
        np.add(z(a), out, out=out)  # a + 2b, as (a + 2b) + c below
        out += z(c)
        return out

    g_col = side(2, 5, 8)
    g_col -= side(0, 3, 6)
    g_col /= d8
    g_row = side(6, 7, 8)
    g_row -= side(0, 1, 2)
    g_row /= d8
    return g_col, g_row


# A cell's routing in one byte: two bits per axis (bits 0-1 east/west, bits 2-3 south/north),
# a flag for the grid's outer ring (bit 4) and the cell's donors not yet done (bits 5-7, 0 to
# 4; counted down by _DONOR as the wavefronts pass: 0, so code < _DONOR, when ready). _NONE:
# no share on that axis; _LEAVES: a share that leaves the surface (it counts in the total,
# goes nowhere); _FWD / _BACK: a receiver at +1 / -1 step along the axis (east or south /
# west or north). The shares themselves are not
# stored (16 bytes a cell): they are recomputed from the gradients when the cell's wavefront
# comes, with the same operations, so they are the same to the bit.
_NONE, _LEAVES, _FWD, _BACK = 0, 1, 2, 3
_EDGE = 16
_DONOR = 32


def _codes_block(
    padded: FloatArray, surface: BoolArray, r0: int, g_col: FloatArray, g_row: FloatArray
) -> NDArray[np.uint8]:
    """Return the routing codes (see ``_FWD``) of the rows ``r0 : r0 + len(g_col)`` of the grid.

    ``padded`` is the block's elevations with their one-cell ring (:func:`_padded_rows`),
    ``surface`` the whole grid's routed cells.
    """
    h, w = surface.shape
    bh = g_col.shape[0]
    # The block's surface with a one-cell ring; the ring is off the surface where it is off
    # the grid, so flow there leaves (the neighbours are read by slicing, never gathered: a
    # receiver is always a cardinal neighbour).
    zp = padded
    sp = np.zeros((bh + 2, w + 2), dtype=bool)
    lo, hi = max(r0 - 1, 0), min(r0 + bh + 1, h)
    sp[lo - r0 + 1 : hi - r0 + 1, 1:-1] = surface[lo:hi]
    z = zp[1:-1, 1:-1]
    on = sp[1:-1, 1:-1]
    code = np.zeros((bh, w), dtype=np.uint8)
    neighbours = (
        (g_col, (zp[1:-1, 2:], sp[1:-1, 2:]), (zp[1:-1, :-2], sp[1:-1, :-2])),  # east / west
        (g_row, (zp[2:, 1:-1], sp[2:, 1:-1]), (zp[:-2, 1:-1], sp[:-2, 1:-1])),  # south / north
    )
    with np.errstate(invalid="ignore"):
        for k, (g, (z_fwd, on_fwd), (z_back, on_back)) in enumerate(neighbours):
            fwd = g < 0  # downhill is against the gradient
            target_on = np.where(fwd, on_fwd, on_back)
            downhill = on & (g != 0)
            # Off the window or off the surface: that share leaves (kept in the total, sent
            # nowhere), so the edge of the window or of the disturbed area does not become a
            # gutter collecting flow along it. A neighbour not lower takes no share.
            leaves = downhill & ~target_on
            ok = downhill & target_on & (np.where(fwd, z_fwd, z_back) < z)
            axis = np.where(ok, np.where(fwd, _FWD, _BACK), np.where(leaves, _LEAVES, _NONE))
            code |= axis.astype(np.uint8) << (2 * k)
    return code


def _in_degrees(code: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Donors of each cell (0 to 4) from the routing codes (bits 0-3)."""
    indeg = np.zeros(code.shape, dtype=np.uint8)
    ew = code & 3
    indeg[:, 1:] += ew[:, :-1] == _FWD  # from the west neighbour, flowing east
    indeg[:, :-1] += ew[:, 1:] == _BACK
    del ew
    sn = (code >> 2) & 3
    indeg[1:] += sn[:-1] == _FWD  # from the north neighbour, flowing south
    indeg[:-1] += sn[1:] == _BACK
    return indeg


class _Neighbourhoods:
    """Gathers the 3 x 3 elevations (ft, float64) around given cells, as :func:`_padded_rows` has them.

    Used by the wavefronts, which need the gradients of a scattered set of cells.
    """

    def __init__(self, src: NDArray[np.floating], z_to_ft: float) -> None:
        h, w = src.shape
        self.src, self.flat, self.z_to_ft, self.h, self.w = src, src.reshape(-1), z_to_ft, h, w
        # Then a NaN neighbour takes the centre's value. Row by row: no full-size temporary.
        self.has_nan = any(bool(np.isnan(row).any()) for row in src)
        # The extrapolated ring: rows -1 and h (corners included), columns -1 and w.
        self.top = _padded_rows(src, z_to_ft, 0, 1)[0]
        self.bottom = _padded_rows(src, z_to_ft, h - 1, h)[-1]
        edge = src[:, [0, 1, w - 1, w - 2]].astype(np.float64)
        edge *= z_to_ft
        self.left = 2 * edge[:, 0] - edge[:, 1]
        self.right = 2 * edge[:, 2] - edge[:, 3]
        # The 3 x 3 window of every cell on the grid's outer ring, looked up by its flat index
        # (sorted): the wavefronts meet them in most chunks, one lookup each.
        r = np.arange(h)
        c = np.arange(w)
        self.ring_cells = np.unique(np.concatenate([c, (h - 1) * w + c, r * w, r * w + w - 1]))
        rr, cc = np.divmod(self.ring_cells, w)
        self.ring_windows = np.stack([self._ring_aware(rr + (k // 3 - 1), cc + (k % 3 - 1)) for k in range(9)], axis=1)

    def _scaled(self, idx: NDArray[np.intp]) -> FloatArray:
        v = np.take(self.flat, idx, mode="wrap")  # wrapped: cells on the ring are redone after
        v = v.astype(np.float64, copy=False)
        v *= self.z_to_ft
        return v

    def _ring_aware(self, rows: NDArray[np.intp], cols: NDArray[np.intp]) -> FloatArray:
        h, w = self.h, self.w
        out = np.empty(rows.size, dtype=np.float64)
        inside = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)
        out[inside] = self._scaled(rows[inside] * w + cols[inside])
        top, bottom = rows < 0, rows >= h
        out[top] = self.top[cols[top] + 1]
        out[bottom] = self.bottom[cols[bottom] + 1]
        mid = ~(top | bottom)
        left, right = mid & (cols < 0), mid & (cols >= w)
        out[left] = self.left[rows[left]]
        out[right] = self.right[rows[right]]
        return out

    def gradients(
        self, cells: NDArray[np.intp], on_ring: BoolArray, cell_size_ft: float
    ) -> tuple[FloatArray, FloatArray]:
        """Horn's gradients of ``cells`` (flat indices), as :func:`_gradients` gives them."""
        w = self.w
        ring = np.flatnonzero(on_ring)
        if ring.size:
            at = np.searchsorted(self.ring_cells, cells[ring])
        centre: FloatArray | None = None
        cache: dict[int, FloatArray] = {}

        def z(k: int) -> FloatArray:
            nonlocal centre
            if k in cache:
                return cache[k]
            dr, dc = divmod(k, 3)
            v = self._scaled(cells + ((dr - 1) * w + dc - 1))
            if ring.size:
                v[ring] = self.ring_windows[at, k]
            if self.has_nan:
                nan = np.isnan(v)
                if nan.any():
                    if centre is None:
                        centre = self._scaled(cells)  # cells on the surface: never NaN
                    v[nan] = centre[nan]
            if k in (0, 2, 6, 8):  # the corners serve both gradients
                cache[k] = v
            return v

        return _horn_gradients(z, cell_size_ft)


def _accumulate(
    receivers: NDArray[np.signedinteger],
    shares: FloatArray,
    surface: BoolArray,
    own: Callable[[NDArray[np.intp]], Sequence[FloatArray | float]],
    inflow: Sequence[FloatArray],
) -> None:
    """Add each cell's own values down the flow graph into ``inflow`` (see :func:`accumulate_cardinal`).

    ``own(cells)`` gives the values of those cells, one array (or one number for all) per
    array of ``inflow``: they are made per wavefront, so no full-size array of them is needed.
    """
    n = receivers.shape[1]
    indeg = np.zeros(n, dtype=np.int32)
    # ufunc.at takes its fast path only with intp indices and a value of the array's own type
    # (measured: 50-80x faster than an int32 index or a Python int 1 into int32).
    one = np.int32(1)
    step = max(1, _BLOCK_CELLS)
    for row in receivers:
        for c0 in range(0, n, step):  # in blocks: a bincount of the whole row is 8 bytes a cell
            part = row[c0 : c0 + step]
            np.add.at(indeg, part[part >= 0].astype(np.intp), one)
    frontier = np.flatnonzero(surface & (indeg == 0))
    done = 0
    while frontier.size:
        done += frontier.size
        values = own(frontier)
        r = receivers[:, frontier]
        # (receiver, position) of each link, receivers first: the order of r[r >= 0].
        k, pos = np.nonzero(r >= 0)
        targets = r[k, pos].astype(np.intp)
        share = shares[k, frontier[pos]]
        # Each quantity's flow, split between the receivers.
        for q, into in enumerate(inflow):
            out = values[q] + into[frontier]
            np.add.at(into, targets, out[pos] * share)
        np.subtract.at(indeg, targets, one)
        # The receivers all of whose donors are now done, once each and in index order (what
        # np.unique gives, by a plain sort: its hash table is several times slower here).
        ready = np.sort(targets[indeg[targets] == 0])
        frontier = ready[np.concatenate(([True], ready[1:] != ready[:-1]))] if ready.size else ready
    if done != int(np.count_nonzero(surface)):
        msg = "the flow graph has a cycle; receivers must be strictly lower cells"
        raise ValueError(msg)


def _route_coded(
    code: NDArray[np.uint8],
    surface: BoolArray,
    hood: _Neighbourhoods,
    cell_size_ft: float,
    own: Callable[[NDArray[np.intp]], Sequence[FloatArray | float]],
    inflow: Sequence[FloatArray],
) -> None:
    """:func:`_accumulate` over routing codes, each wavefront's shares made from its gradients.

    The same wavefronts, links in the same order (east-west links of the wavefront in index
    order, then south-north ones) and the same share arithmetic as ``_receivers_block`` of
    earlier versions with :func:`_accumulate`, so every sum is the same to the bit; but no
    full-size receivers (8 bytes a cell) or shares (16 bytes a cell) are held. A large
    wavefront (the first one holds every source cell) is taken in chunks of ``_WAVE_CELLS``,
    axis by axis (the gradients made twice), so its temporaries stay small; no cell of a wavefront receives from another
    of it, so the chunks read the inflow each cell had when the wavefront began.

    ``code`` and ``surface`` are flat; the donor counts in ``code`` are used up (all zero at
    the end).

    Raises
    ------
    ValueError
        If the graph has a cycle (some surface cells are never reached).
    """
    w = hood.w
    one = np.uint8(_DONOR)  # ufunc.at's fast path wants intp indices and a value of the array's type
    step = max(1, _WAVE_CELLS)
    # Wavefronts are held as int32 where the grid allows (half the memory of intp); each chunk
    # is made intp, which ufunc.at's fast path wants.
    index_type = np.int32 if code.size < 2**31 else np.intp
    # The sources, block by block (a whole-grid test would take two full-size temporaries).
    spans = range(0, code.size, step)
    frontier = np.empty(
        sum(int(np.count_nonzero(surface[c0 : c0 + step] & (code[c0 : c0 + step] < _DONOR))) for c0 in spans),
        dtype=index_type,
    )
    at = 0
    for c0 in spans:
        part = np.flatnonzero(surface[c0 : c0 + step] & (code[c0 : c0 + step] < _DONOR))
        frontier[at : at + part.size] = part + c0
        at += part.size
    done = 0
    while frontier.size:
        done += frontier.size
        ready: list[NDArray[np.signedinteger]] = []
        chunks = [frontier[c0 : c0 + step] for c0 in range(0, frontier.size, step)]
        kept: tuple[NDArray[np.intp], NDArray[np.uint8], FloatArray, FloatArray, list[FloatArray]] | None = None
        for axis, delta in ((0, 1), (1, w)):
            for chunk in chunks:
                if kept is not None:
                    cells, codes, share0, share1, out = kept
                else:
                    cells = chunk.astype(np.intp)
                    codes = code[cells]
                    ew, sn = codes & 3, (codes >> 2) & 3
                    sends = np.flatnonzero((ew >= _FWD) | (sn >= _FWD))
                    # Each sending cell's shares, as the block pass made them: |g| on every
                    # axis with a receiver or a share leaving, divided by their sum.
                    g_col, g_row = hood.gradients(cells[sends], (codes[sends] & _EDGE) != 0, cell_size_ft)
                    w0 = np.where(ew[sends] != _NONE, np.abs(g_col), 0.0)
                    w1 = np.where(sn[sends] != _NONE, np.abs(g_row), 0.0)
                    del g_col, g_row
                    total = w0 + w1
                    good = total > 0  # NaN gradients (overflowing elevations) send nothing
                    s0, s1 = np.zeros(sends.size), np.zeros(sends.size)
                    np.divide(w0, total, out=s0, where=good)
                    np.divide(w1, total, out=s1, where=good)
                    del w0, w1, total, good
                    share0, share1 = np.zeros(cells.size), np.zeros(cells.size)
                    share0[sends], share1[sends] = s0, s1
                    del s0, s1
                    values = own(cells)
                    out = [values[q] + into[cells] for q, into in enumerate(inflow)]
                    if len(chunks) == 1:
                        kept = (cells, codes, share0, share1, out)
                link = (codes >> (2 * axis)) & 3
                pos = np.flatnonzero(link >= _FWD)
                targets = cells[pos] + np.where(link[pos] == _FWD, delta, -delta)
                share = (share0 if axis == 0 else share1)[pos]
                for q, into in enumerate(inflow):
                    np.add.at(into, targets, out[q][pos] * share)
                np.subtract.at(code, targets, one)
                # A receiver reaches 0 at its last donor's link: once in this wavefront.
                ready.append(targets[code[targets] < _DONOR].astype(index_type))
        # The receivers all of whose donors are now done, once each and in index order (what
        # np.unique gives, by a plain sort: its hash table is several times slower here).
        del frontier, chunks, chunk, cells, codes, share0, share1, out, kept
        nxt = np.concatenate(ready) if ready else np.empty(0, dtype=index_type)
        del ready
        nxt.sort()
        first = np.empty(nxt.size, dtype=bool)
        first[:1] = True
        np.not_equal(nxt[1:], nxt[:-1], out=first[1:])
        frontier = nxt[first]
        del nxt, first
    if done != int(np.count_nonzero(surface)):
        msg = "the flow graph has a cycle; receivers must be strictly lower cells"
        raise ValueError(msg)


def accumulate_cardinal(
    receivers: NDArray[np.int64], shares: FloatArray, surface: BoolArray, values: FloatArray
) -> FloatArray:
    """Sum ``values`` down a flow graph in topological wavefronts: inflow to each cell.

    Parameters
    ----------
    receivers : numpy.ndarray of int64, shape (k, n)
        Up to k receivers per cell (flat indices), -1 for none. Must form an acyclic graph
        (flow only to lower cells).
    shares : numpy.ndarray of float64, shape (k, n)
        The share of each cell's flow sent to each receiver.
    surface : numpy.ndarray of bool, shape (n,)
        Cells taking part; others neither send nor receive.
    values : numpy.ndarray of float64, shape (c, n)
        Quantities each cell adds (its area, area times slope, ...).

    Returns
    -------
    numpy.ndarray of float64, shape (c, n)
        Inflow of each quantity into each cell from all its donors, the cell's own value not
        included.

    Raises
    ------
    ValueError
        If the graph has a cycle (some surface cells are never reached).
    """
    values = np.asarray(values, dtype=np.float64)
    inflow = np.zeros_like(values)

    def own(cells: NDArray[np.intp]) -> list[FloatArray]:
        return list(values[:, cells])

    _accumulate(np.asarray(receivers), np.asarray(shares), np.asarray(surface), own, list(inflow))
    return inflow


#: Values per leaf of :func:`_pairwise_sum` (each leaf summed by numpy itself).
_SUM_LEAF = 1 << 16


def _pairwise_sum(n: int, take: Callable[[int], FloatArray], leaf: int) -> float:
    """Sum ``n`` values read in order by ``take`` as numpy would sum them in one array.

    numpy sums a contiguous float64 array by splitting it in two at ``n // 2`` rounded down to
    a multiple of 8, recursively (``pairwise_sum`` in numpy's loops); each half is again such
    an array, so summing the halves with numpy and adding the two gives the same bits. (numpy
    sums up to 128 values in one go, eight running sums: those are never split.)
    """
    if n <= max(leaf, 128):
        return float(np.add.reduce(take(n)))
    half = n // 2
    half -= half % 8
    return _pairwise_sum(half, take, leaf) + _pairwise_sum(n - half, take, leaf)


class _Reader:
    """Reads a stream of arrays ``take(m)`` values at a time."""

    def __init__(self, pieces: Iterable[FloatArray]) -> None:
        self._pieces = iter(pieces)
        self._head: FloatArray = np.empty(0)

    def take(self, m: int) -> FloatArray:
        parts = []
        while m:
            if not self._head.size:
                self._head = next(self._pieces)
                continue
            part, self._head = self._head[:m], self._head[m:]
            parts.append(part)
            m -= part.size
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


@cache
def _pairwise_is_numpys() -> bool:
    """Whether :func:`_pairwise_sum` gives numpy's sum here (checked once, on awkward sizes)."""
    rng = np.random.default_rng(48)
    for n in (1, 7, 129, 1000, 4099, 10007):
        a = rng.normal(size=n) * np.exp(rng.normal(scale=8.0, size=n))
        if _pairwise_sum(n, _Reader(np.array_split(a, 7)).take, 64) != float(np.add.reduce(a)):
            return False
    return True


def _mean_of_pieces(n: int, pieces: Iterable[FloatArray]) -> float:
    """``np.concatenate(pieces).mean()`` (``n`` values) to the bit, never holding the concatenation.

    NaN when ``n`` is 0. If numpy's summation were ever not the pairwise one assumed, the pieces
    are concatenated (the same result, for more memory).
    """
    if n == 0:
        return float("nan")
    if not _pairwise_is_numpys():
        return float(np.concatenate(list(pieces)).mean())
    return _pairwise_sum(n, _Reader(pieces).take, _SUM_LEAF) / n


def _validate(
    z: FloatArray,
    cell_size_ft: float,
    z_to_ft: float,
    nodata_mask: ArrayLike | None,
    disturbed: ArrayLike | None,
) -> list[Problem]:
    problems: list[Problem] = []
    if z.ndim != 2 or min(z.shape) < 2:
        problems.append(
            Problem(_SOURCE, None, f"the DEM window has shape {z.shape}.", "pass a 2-D window of at least 2 x 2 cells.")
        )
    for name, v in (("cell_size_ft", cell_size_ft), ("z_to_ft", z_to_ft)):
        if not (np.isfinite(v) and v > 0):
            problems.append(Problem(_SOURCE, None, f"{name} is {v!r}.", f"pass {name} as a number above 0."))
    for name, mask in (("nodata_mask", nodata_mask), ("disturbed", disturbed)):
        if mask is not None and np.shape(mask) != z.shape:
            problems.append(
                Problem(
                    _SOURCE,
                    None,
                    f"{name} has shape {np.shape(mask)}, the DEM window {z.shape}.",
                    f"pass {name} on the DEM's grid (the same window).",
                )
            )
    if np.isinf(z).any():
        problems.append(Problem(_SOURCE, None, "the DEM window has infinite elevations.", "mark them as nodata."))
    return problems


def _elevations(
    dem: ArrayLike,
    cell_size_ft: float,
    z_to_ft: float,
    nodata_mask: ArrayLike | None,
    disturbed: ArrayLike | None,
) -> NDArray[np.floating]:
    """Check the DEM window; return it as a C-ordered float32 or float64 array, NaN at nodata.

    The elevations stay in the caller's float32 or float64 array (never written to): every
    value is read as ``float64(z) * z_to_ft`` where it is needed, which is what scaling a
    float64 copy gave. A copy only for other types, or when nodata cells are not NaN yet.

    Raises
    ------
    ValidationError
        As :func:`ls_grid`.
    """
    src = np.asarray(dem)
    if src.dtype not in (np.float32, np.float64):
        src = np.asarray(dem, dtype=np.float64)
    problems = _validate(src, cell_size_ft, z_to_ft, nodata_mask, disturbed)
    if problems:
        raise ValidationError(problems)
    src = np.ascontiguousarray(src)
    if nodata_mask is not None:
        nodata = np.asarray(nodata_mask, dtype=bool)
        if nodata.any() and not np.isnan(src[nodata]).all():
            src = src.copy()
            src[nodata] = np.nan
    return src


def ls_grid(
    dem: ArrayLike,
    cell_size_ft: float,
    *,
    max_slope_pct: float,
    z_to_ft: float = 1.0,
    nodata_mask: ArrayLike | None = None,
    disturbed: ArrayLike | None = None,
    max_slope_length_ft: float = DEFAULT_MAX_SLOPE_LENGTH_FT,
    rill_interrill_ratio: float | str = "moderate",
) -> LsGrid:
    """Per-cell RUSLE LS of a DEM window over the disturbed surface, and its summary.

    See the module notes for the slope, the routing, the disturbed surface and the
    representative slope.

    Parameters
    ----------
    dem : array_like, shape (rows, cols)
        Elevations, rows running north to south; NaN is nodata.
    cell_size_ft : float
        Cell size, ft (square cells, in the projected CRS).
    max_slope_pct : float
        Steepest slope the method covers, percent (from the profile; see
        :func:`~esc_gis.soil.rusle.outside_method`).
    z_to_ft : float, default 1.0
        Feet per elevation unit (0.3048 for metres).
    nodata_mask : array_like of bool, optional
        True where the DEM has no data (besides NaN).
    disturbed : array_like of bool, optional
        True in the disturbed area; the whole window when omitted.
    max_slope_length_ft : float, default 400.0
        Cap on slope length, ft.
    rill_interrill_ratio : {"moderate", "low", "high"} or float, default "moderate"
        See :func:`~esc_gis.soil.rusle.slope_length_exponent_m`.

    Returns
    -------
    LsGrid

    Raises
    ------
    ValidationError
        If the window is not 2-D of at least 2 x 2 cells, a mask is on another grid, the cell
        size or unit factor is not a positive number, an elevation is infinite, or the limits
        are out of range (one message for all).
    """
    src = _elevations(dem, cell_size_ft, z_to_ft, nodata_mask, disturbed)
    surface = ~np.isnan(src)
    if disturbed is not None:
        surface &= np.asarray(disturbed, dtype=bool)
    d = float(cell_size_ft)
    h, w = src.shape
    n = h * w
    cell_area = d * d

    # Memory is what limits the window (a site, or a 4000 x 4000 benchmark). Full-size arrays
    # are only what the routing and the result need: the slope (float32), a routing code with
    # the donor count (1 byte), the two accumulators and then LS (8 bytes each, LS in the slope
    # accumulator's place), the masks; about 23 bytes a cell besides the caller's DEM (see the
    # module notes). Everything local (the padded DEM, gradients, x, L, S, the summary) is computed in
    # row blocks, the wavefronts' shares from gathered gradients. Every value is the same to
    # the bit as computing each step on the whole grid at once.
    rows_per_block = max(1, _BLOCK_CELLS // w)
    blocks = [(r0, min(h, r0 + rows_per_block)) for r0 in range(0, h, rows_per_block)]
    slope32 = np.empty((h, w), dtype=np.float32)
    code = np.empty((h, w), dtype=np.uint8)
    for r0, r1 in blocks:
        win = _padded_rows(src, z_to_ft, r0, r1)
        horn_slope_pct(win.astype(np.float32), d, d, fill_with_centre=True, out=slope32[r0:r1])
        g_col, g_row = _gradients(win, d)
        code[r0:r1] = _codes_block(win, surface, r0, g_col, g_row)
        del win, g_col, g_row
    for edge in (code[0], code[-1], code[:, 0], code[:, -1]):
        edge |= _EDGE
    del edge  # a view: it would keep the codes alive past the routing
    donors = _in_degrees(code)
    donors <<= 5  # in bits 5-7: one byte a cell for the routing and the count (see _DONOR)
    code |= donors
    del donors

    slope_flat = slope32.reshape(-1)
    surface_flat = surface.reshape(-1)

    def own(cells: NDArray[np.intp]) -> tuple[float, FloatArray]:
        # Each cell adds its area and its area times its slope (for the upslope mean slope);
        # a slope is never infinite, so zeroing NaN is what np.nan_to_num did, for less.
        slope_cells = slope_flat[cells].astype(np.float64)
        slope_cells[np.isnan(slope_cells)] = 0.0
        slope_cells *= cell_area
        return cell_area, slope_cells

    inlet_area = np.zeros(n, dtype=np.float64)
    inflow_slope = np.zeros(n, dtype=np.float64)
    hood = _Neighbourhoods(src, z_to_ft)
    _route_coded(code.reshape(-1), surface_flat, hood, d, own, (inlet_area, inflow_slope))
    del code, own, hood
    inflow_area = inlet_area  # the same array: off-surface cells become NaN below, never read there
    inlet_area[~surface_flat] = np.nan

    # LS takes the slope accumulator's place, block by block, once the block's representative
    # candidates have read it.
    ls = inflow_slope
    outside = np.empty(n, dtype=bool)
    capped = np.empty(n, dtype=bool)
    # Representative (worst-case) slope: the outlet length and upslope mean slope of each cell
    # inside the method, scored block by block; the first largest wins, as np.argmax over all.
    rep_k, rep_value = -1, -np.inf
    rep_len = rep_slope = rep_ls = float("nan")
    for r0, r1 in blocks:
        c0 = r0 * w
        blk = slice(c0, r1 * w)
        # x from the block's gradients (recomputed: keeping it would cost 8 bytes a cell).
        g_col, g_row = _gradients(_padded_rows(src, z_to_ft, r0, r1), d)
        flat = (g_col == 0) & (g_row == 0)
        aspect = np.degrees(np.arctan2(g_row, g_col))
        off = flat | ~surface[r0:r1]
        x_b = np.where(off, 1.0, flow_direction_factor_x(np.where(flat, 0.0, aspect))).reshape(-1)
        del g_col, g_row, flat, aspect, off
        on = surface_flat[blk]
        slope_on = np.where(on, slope_flat[blk].astype(np.float64), np.nan)
        a_in = inlet_area[blk]
        ls_all = ls_desmet_govers(
            a_in,
            d,
            slope_on,
            x=x_b,
            rill_interrill_ratio=rill_interrill_ratio,
            max_slope_length_ft=max_slope_length_ft,
        )
        ls_b, outside[blk] = mask_outside_method(ls_all, slope_on, max_slope_pct)
        del ls_all
        with np.errstate(invalid="ignore"):
            # Strictly past: a cell whose inlet is exactly at cap - D/x is the slope's last, uncapped.
            capped[blk] = on & (a_in / (d * x_b) > max_slope_length_ft - d / x_b)

        # Past the cap is outside the method too (likely concentrated flow): not a candidate.
        idx = np.flatnonzero(on & ~outside[blk] & ~capped[blk])
        up_area = inflow_area[blk][idx] + cell_area
        mean_up_slope = (inflow_slope[blk][idx] + cell_area * slope_on[idx]) / up_area
        ls[blk] = ls_b  # inflow_slope of this block is read: LS takes its place
        del ls_b
        length_out = np.minimum(up_area / (d * x_b[idx]), max_slope_length_ft)
        keep = mean_up_slope <= max_slope_pct
        idx, mean_up_slope, length_out = idx[keep], mean_up_slope[keep], length_out[keep]
        if idx.size and not np.isnan(rep_value):
            profile_ls = ls_factor(length_out, mean_up_slope, rill_interrill_ratio=rill_interrill_ratio)
            k = int(np.argmax(profile_ls))
            if np.isnan(profile_ls[k]) or profile_ls[k] > rep_value:
                rep_k, rep_value = c0 + int(idx[k]), float(profile_ls[k])
                rep_len, rep_slope, rep_ls = float(length_out[k]), float(mean_up_slope[k]), rep_value
    del inflow_slope, src

    n_surface = int(np.count_nonzero(surface_flat))
    # The summary leaves out cells past the slope-length cap too (likely concentrated flow: not
    # sheet-and-rill erosion); their LS stays in the grid, at the capped length, to look at.
    # Block by block: LS of the cells inside would be a full-size copy (8 bytes a cell).
    spans = [slice(r0 * w, r1 * w) for r0, r1 in blocks]
    n_beyond = sum(int(np.count_nonzero(outside[b] | capped[b])) for b in spans)

    def inside_ls() -> Iterator[FloatArray]:
        for b in spans:
            yield ls[b][surface_flat[b] & ~(outside[b] | capped[b])]

    mean_ls = _mean_of_pieces(n_surface - n_beyond, inside_ls())
    outside_share = float(n_beyond) / n_surface if n_surface else float("nan")
    rep_cell: tuple[int, int] | None = None
    if rep_k >= 0:
        r, c = divmod(rep_k, w)
        rep_cell = (r, c)
    shape = (h, w)
    inlet_area, ls, outside, capped = (a.reshape(shape) for a in (inlet_area, ls, outside, capped))

    return LsGrid(
        slope_pct32=slope32,
        inlet_area_sqft=inlet_area,
        ls=ls,
        surface=surface,
        outside_method=outside,
        capped=capped,
        cell_size_ft=d,
        mean_ls=mean_ls,
        outside_share=outside_share,
        representative_length_ft=rep_len,
        representative_slope_pct=rep_slope,
        representative_ls=rep_ls,
        representative_cell=rep_cell,
    )
