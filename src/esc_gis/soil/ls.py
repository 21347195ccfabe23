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

Memory. The routing needs its full-size arrays (about 68 bytes a cell at the peak: receivers,
shares, the two accumulators, x, slope, in-degrees); everything local (slope, gradients,
receivers, L, S, the summary) is computed in row blocks of ``_BLOCK_CELLS``, with results the
same to the bit whatever the block size. The routing itself cannot be windowed exactly:
contributing area has no bounded reach.

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

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
    slope_pct : numpy.ndarray of float64
        Horn slope, percent, for every cell with an elevation (NaN at nodata).
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

    slope_pct: FloatArray
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


def _pad_extrapolated(z: FloatArray) -> FloatArray:
    """Pad by one cell, extrapolating linearly (2a - b) as gdaldem ``-compute_edges`` does."""
    h, w = z.shape
    p = np.empty((h + 2, w + 2), dtype=np.float64)
    p[1:-1, 1:-1] = z
    p[1:-1, 0] = 2 * z[:, 0] - z[:, 1]
    p[1:-1, -1] = 2 * z[:, -1] - z[:, -2]
    p[0] = 2 * p[1] - p[2]
    p[-1] = 2 * p[-2] - p[-3]
    return p


#: Cells per block of the local passes (slope, gradient, routing; then L, S and the summary):
#: ~2 MB per float64 temporary, so the temporaries stay small beside the full-size arrays.
_BLOCK_CELLS = 1 << 18


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


def _receivers_block(
    padded: FloatArray,
    surface: BoolArray,
    r0: int,
    g_col: FloatArray,
    g_row: FloatArray,
    recv: NDArray[np.signedinteger],
    shares: FloatArray,
) -> None:
    """Each cell's two cardinal receivers (flat index, -1 for none) and their shares of its flow.

    For the rows ``r0 : r0 + len(g_col)`` of the grid; written into ``recv`` and ``shares``
    (shape (2, rows, cols) of the block). ``padded`` is the elevation grid with its one-cell
    ring, ``surface`` the whole grid's routed cells.
    """
    h, w = surface.shape
    bh = g_col.shape[0]
    # The block's elevations and surface with a one-cell ring; the ring is off the surface
    # where it is off the grid, so flow there leaves (the neighbours are read by slicing,
    # never gathered: a receiver is always a cardinal neighbour).
    zp = padded[r0 : r0 + bh + 2]
    sp = np.zeros((bh + 2, w + 2), dtype=bool)
    lo, hi = max(r0 - 1, 0), min(r0 + bh + 1, h)
    sp[lo - r0 + 1 : hi - r0 + 1, 1:-1] = surface[lo:hi]
    z = zp[1:-1, 1:-1]
    on = sp[1:-1, 1:-1]
    base = np.arange(r0 * w, (r0 + bh) * w, dtype=np.int64).reshape(bh, w)
    weight = np.zeros((2, bh, w), dtype=np.float64)
    neighbours = (
        (g_col, (zp[1:-1, 2:], sp[1:-1, 2:]), (zp[1:-1, :-2], sp[1:-1, :-2]), 1),  # east / west
        (g_row, (zp[2:, 1:-1], sp[2:, 1:-1]), (zp[:-2, 1:-1], sp[:-2, 1:-1]), w),  # south / north
    )
    with np.errstate(invalid="ignore"):
        for k, (g, (z_fwd, on_fwd), (z_back, on_back), delta) in enumerate(neighbours):
            fwd = g < 0  # downhill is against the gradient
            target_on = np.where(fwd, on_fwd, on_back)
            downhill = on & (g != 0)
            # Off the window or off the surface: that share leaves (kept in the total, sent
            # nowhere), so the edge of the window or of the disturbed area does not become a
            # gutter collecting flow along it.
            leaves = downhill & ~target_on
            ok = downhill & target_on & (np.where(fwd, z_fwd, z_back) < z)
            recv[k] = np.where(ok, base + np.where(fwd, delta, -delta), -1)
            weight[k] = np.where(ok | leaves, np.abs(g), 0.0)
    total = weight.sum(axis=0)
    # A share whose neighbour is not lower goes to the other; none: the cell is an outlet.
    np.divide(weight, total, out=shares, where=total > 0)
    shares[recv < 0] = 0.0


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
    z = np.array(dem, dtype=np.float64)
    problems = _validate(z, cell_size_ft, z_to_ft, nodata_mask, disturbed)
    if problems:
        raise ValidationError(problems)
    if nodata_mask is not None:
        z[np.asarray(nodata_mask, dtype=bool)] = np.nan
    z *= z_to_ft
    surface = ~np.isnan(z)
    if disturbed is not None:
        surface &= np.asarray(disturbed, dtype=bool)
    d = float(cell_size_ft)
    h, w = z.shape
    n = h * w
    cell_area = d * d

    # Memory is what limits the window (a site, or a 4000 x 4000 benchmark): the full-size
    # arrays are kept to what the routing needs (about 57 bytes a cell at the peak, from
    # ~150), and everything local is computed in row blocks. Every value is the same to the
    # bit as computing each step on the whole grid at once.
    padded = _pad_extrapolated(z)
    del z
    index_type = np.int32 if n < 2**31 else np.int64
    slope32 = np.empty((h, w), dtype=np.float32)
    recv = np.empty((2, h, w), dtype=index_type)
    shares = np.zeros((2, h, w), dtype=np.float64)
    x = np.empty((h, w), dtype=np.float64)
    rows_per_block = max(1, _BLOCK_CELLS // w)
    for r0 in range(0, h, rows_per_block):
        r1 = min(h, r0 + rows_per_block)
        win = padded[r0 : r1 + 2]
        horn_slope_pct(win.astype(np.float32), d, d, fill_with_centre=True, out=slope32[r0:r1])
        g_col, g_row = _gradients(win, d)
        _receivers_block(padded, surface, r0, g_col, g_row, recv[:, r0:r1], shares[:, r0:r1])
        flat = (g_col == 0) & (g_row == 0)
        aspect = np.degrees(np.arctan2(g_row, g_col))
        off = flat | ~surface[r0:r1]
        x[r0:r1] = np.where(off, 1.0, flow_direction_factor_x(np.where(flat, 0.0, aspect)))
        del g_col, g_row, flat, aspect, off
    del padded, win  # win is a view: padded is freed only with it

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
    _accumulate(recv.reshape(2, -1), shares.reshape(2, -1), surface_flat, own, (inlet_area, inflow_slope))
    del recv, shares, own
    inflow_area = inlet_area  # the same array: off-surface cells become NaN below, never read there
    inlet_area[~surface_flat] = np.nan

    x_flat = x.reshape(-1)
    ls = np.empty(n, dtype=np.float64)
    outside = np.empty(n, dtype=bool)
    capped = np.empty(n, dtype=bool)
    # Representative (worst-case) slope: the outlet length and upslope mean slope of each cell
    # inside the method, scored block by block; the first largest wins, as np.argmax over all.
    rep_k, rep_value = -1, -np.inf
    rep_len = rep_slope = rep_ls = float("nan")
    step = rows_per_block * w
    for c0 in range(0, n, step):
        blk = slice(c0, min(n, c0 + step))
        on = surface_flat[blk]
        slope_on = np.where(on, slope_flat[blk].astype(np.float64), np.nan)
        x_b = x_flat[blk]
        a_in = inlet_area[blk]
        ls_all = ls_desmet_govers(
            a_in,
            d,
            slope_on,
            x=x_b,
            rill_interrill_ratio=rill_interrill_ratio,
            max_slope_length_ft=max_slope_length_ft,
        )
        ls[blk], outside[blk] = mask_outside_method(ls_all, slope_on, max_slope_pct)
        del ls_all
        with np.errstate(invalid="ignore"):
            # Strictly past: a cell whose inlet is exactly at cap - D/x is the slope's last, uncapped.
            capped[blk] = on & (a_in / (d * x_b) > max_slope_length_ft - d / x_b)

        # Past the cap is outside the method too (likely concentrated flow): not a candidate.
        idx = np.flatnonzero(on & ~outside[blk] & ~capped[blk])
        up_area = inflow_area[blk][idx] + cell_area
        mean_up_slope = (inflow_slope[blk][idx] + cell_area * slope_on[idx]) / up_area
        length_out = np.minimum(up_area / (d * x_b[idx]), max_slope_length_ft)
        keep = mean_up_slope <= max_slope_pct
        idx, mean_up_slope, length_out = idx[keep], mean_up_slope[keep], length_out[keep]
        if idx.size and not np.isnan(rep_value):
            profile_ls = ls_factor(length_out, mean_up_slope, rill_interrill_ratio=rill_interrill_ratio)
            k = int(np.argmax(profile_ls))
            if np.isnan(profile_ls[k]) or profile_ls[k] > rep_value:
                rep_k, rep_value = c0 + int(idx[k]), float(profile_ls[k])
                rep_len, rep_slope, rep_ls = float(length_out[k]), float(mean_up_slope[k]), rep_value
    del x, x_flat, inflow_slope

    n_surface = int(np.count_nonzero(surface_flat))
    # The summary leaves out cells past the slope-length cap too (likely concentrated flow: not
    # sheet-and-rill erosion); their LS stays in the grid, at the capped length, to look at.
    beyond = outside | capped
    inside = surface_flat & ~beyond
    mean_ls = float(ls[inside].mean()) if inside.any() else float("nan")
    del inside
    outside_share = float(np.count_nonzero(beyond)) / n_surface if n_surface else float("nan")
    del beyond
    rep_cell: tuple[int, int] | None = None
    if rep_k >= 0:
        r, c = divmod(rep_k, w)
        rep_cell = (r, c)
    slope = slope32.astype(np.float64)
    del slope32
    shape = (h, w)
    inlet_area, ls, outside, capped = (a.reshape(shape) for a in (inlet_area, ls, outside, capped))

    return LsGrid(
        slope_pct=slope,
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
