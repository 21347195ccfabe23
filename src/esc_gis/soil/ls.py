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
scipy; neither is needed here.

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
        """Area of the surface outside the method, sq ft (prescriptive practices required)."""
        return float(np.count_nonzero(self.outside_method)) * self.cell_size_ft**2


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


def _gradients(padded: FloatArray, cell_size_ft: float) -> tuple[FloatArray, FloatArray]:
    """Horn's gradient (ft/ft) along +column and +row, a nodata neighbour taking the centre's value."""
    h, w = padded.shape[0] - 2, padded.shape[1] - 2
    z = [padded[r : r + h, c : c + w] for r in range(3) for c in range(3)]
    centre = z[4]
    if np.isnan(padded).any():  # rare (holes, a masked window): copy only then
        z = [np.where(np.isnan(v), centre, v) for v in z]
    d8 = 8.0 * cell_size_ft
    g_col = ((z[2] + 2 * z[5] + z[8]) - (z[0] + 2 * z[3] + z[6])) / d8
    g_row = ((z[6] + 2 * z[7] + z[8]) - (z[0] + 2 * z[1] + z[2])) / d8
    return g_col, g_row


def _receivers(
    z: FloatArray, surface: BoolArray, g_col: FloatArray, g_row: FloatArray
) -> tuple[NDArray[np.int64], FloatArray]:
    """Each cell's two cardinal receivers (flat index, -1 for none) and their shares of its flow."""
    h, w = z.shape
    # Sparse int32 indices broadcast: no full-size index grids (memory is the limit on a county).
    rows, cols = np.indices((h, w), dtype=np.int32, sparse=True)
    zf = np.where(surface, z, np.inf)  # off-surface neighbours are never lower
    recv = np.full((2, h, w), -1, dtype=np.int64)
    weight = np.zeros((2, h, w), dtype=np.float64)
    with np.errstate(invalid="ignore"):
        for k, (g, r_step, c_step) in enumerate(((g_col, 0, 1), (g_row, 1, 0))):
            step = np.where(g < 0, np.int32(1), np.int32(-1))  # downhill is against the gradient
            tr = rows + r_step * step
            tc = cols + c_step * step
            inside = (tr >= 0) & (tr < h) & (tc >= 0) & (tc < w)
            np.clip(tr, 0, h - 1, out=tr)
            np.clip(tc, 0, w - 1, out=tc)
            target = tr * np.int32(w) + tc
            del tr, tc, step
            downhill = surface & (g != 0)
            # Off the window or off the surface: that share leaves (kept in the total, sent
            # nowhere), so the edge of the window or of the disturbed area does not become a
            # gutter collecting flow along it.
            leaves = downhill & ~(inside & surface.ravel()[target])
            ok = downhill & ~leaves & (zf.ravel()[target] < z)
            recv[k] = np.where(ok, target, -1)
            weight[k] = np.where(ok | leaves, np.abs(g), 0.0)
    total = weight.sum(axis=0)
    # A share whose neighbour is not lower goes to the other; none: the cell is an outlet.
    weight = np.divide(weight, total, out=np.zeros_like(weight), where=total > 0)
    weight[recv < 0] = 0.0
    return recv.reshape(2, -1), weight.reshape(2, -1)


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
    n = receivers.shape[1]
    inflow = np.zeros_like(values)
    linked = receivers >= 0
    indeg = np.bincount(receivers[linked], minlength=n)
    frontier = np.flatnonzero(surface & (indeg == 0))
    done = 0
    while frontier.size:
        done += frontier.size
        out = values[:, frontier] + inflow[:, frontier]
        r = receivers[:, frontier]
        ok = r >= 0
        targets = r[ok]
        share = shares[:, frontier][ok]
        # Each quantity's flow, split between the receivers (ok flattens receivers x cells).
        for q in range(values.shape[0]):
            sent = np.broadcast_to(out[q], r.shape)[ok] * share
            np.add.at(inflow[q], targets, sent)
        np.subtract.at(indeg, targets, 1)
        cand = np.unique(targets)
        frontier = cand[indeg[cand] == 0]
    if done != int(np.count_nonzero(surface)):
        msg = "the flow graph has a cycle; receivers must be strictly lower cells"
        raise ValueError(msg)
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
    has_z = ~np.isnan(z)
    surface = has_z if disturbed is None else has_z & np.asarray(disturbed, dtype=bool)
    d = float(cell_size_ft)

    padded = _pad_extrapolated(z)
    slope = horn_slope_pct(padded.astype(np.float32), d, d, fill_with_centre=True).astype(np.float64)
    g_col, g_row = _gradients(padded, d)
    del padded  # intermediates are dropped as soon as done: memory bounds the window size
    recv, shares = _receivers(z, surface, g_col, g_row)
    cell_area = d * d
    slope_on = np.where(surface, slope, np.nan)
    own = np.stack([np.full(z.size, cell_area), cell_area * np.nan_to_num(slope_on).ravel()])
    inflow = accumulate_cardinal(recv, shares, surface.ravel(), own).reshape(2, *z.shape)
    del recv, shares, own
    inlet_area = np.where(surface, inflow[0], np.nan)

    flat = (g_col == 0) & (g_row == 0)
    aspect = np.degrees(np.arctan2(g_row, g_col))
    x = np.where(flat | ~surface, 1.0, flow_direction_factor_x(np.where(flat, 0.0, aspect)))
    del flat, aspect, g_col, g_row
    ls_all = ls_desmet_govers(
        inlet_area,
        d,
        slope_on,
        x=x,
        rill_interrill_ratio=rill_interrill_ratio,
        max_slope_length_ft=max_slope_length_ft,
    )
    ls, outside = mask_outside_method(ls_all, slope_on, max_slope_pct)
    del ls_all
    with np.errstate(invalid="ignore"):
        # Strictly past: a cell whose inlet is exactly at cap - D/x is the slope's last, uncapped.
        capped = surface & (inlet_area / (d * x) > max_slope_length_ft - d / x)

    n_surface = int(np.count_nonzero(surface))
    inside = surface & ~outside
    mean_ls = float(ls[inside].mean()) if inside.any() else float("nan")
    outside_share = float(np.count_nonzero(outside)) / n_surface if n_surface else float("nan")

    # Representative (worst-case) slope: the outlet length and upslope mean slope of each cell
    # inside the method (flat indices: only those cells are computed).
    idx = np.flatnonzero(inside)
    up_area = inflow[0].ravel()[idx] + cell_area
    mean_up_slope = (inflow[1].ravel()[idx] + cell_area * slope_on.ravel()[idx]) / up_area
    length_out = np.minimum(up_area / (d * x.ravel()[idx]), max_slope_length_ft)
    keep = mean_up_slope <= max_slope_pct
    idx, mean_up_slope, length_out = idx[keep], mean_up_slope[keep], length_out[keep]
    rep_len = rep_slope = rep_ls = float("nan")
    rep_cell: tuple[int, int] | None = None
    if idx.size:
        profile_ls = ls_factor(length_out, mean_up_slope, rill_interrill_ratio=rill_interrill_ratio)
        k = int(np.argmax(profile_ls))
        r, c = divmod(int(idx[k]), z.shape[1])
        rep_cell = (r, c)
        rep_len, rep_slope, rep_ls = float(length_out[k]), float(mean_up_slope[k]), float(profile_ls[k])

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
