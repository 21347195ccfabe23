"""Exact cell-coverage sums of polygons over a grid, vectorised over every polygon at once.

For a polygon P and a grid of cell values ``g``, :func:`coverage_sums` returns
``sum over cells c of g[c] * area(P ∩ c) / area(c)``: what exactextract's ``sum`` gives (a cell
half inside counts half), and with ``g`` the 0/1 of valid cells, its ``count``.

How (Green's theorem, column by column)
---------------------------------------
In cell units, with ``u`` the column coordinate and ``z`` the height above the grid's bottom
edge, the area of P under any set S of cells is ``-∮_{∂P} F(u, z) du``, where ``F`` is the
length of S in the column through ``u`` below height ``z`` (for S = everything, F = z and this
is the shoelace formula). Weighting by values, ``F_j(z)`` in column ``j`` is the sum of the
column's values below row ``floor(z)``, plus the value of that row times ``z - floor(z)``:
linear inside a cell. So each ring's edges are cut where they cross a grid line, and each
piece, inside one cell, adds ``-du * F_j(z at its middle)`` exactly. No cell is visited that the
boundary does not cross, and the work is a handful of numpy operations over all pieces of all
polygons (a column's cumulative sums answer for the cells below).

Grids are taken a strip of rows at a time (:class:`EdgeSet.strip_sums`), so a DEM window is
never held whole: a polygon wholly above or below a strip adds nothing for it (a closed ring
moves net zero along each column), so only the polygons reaching into the strip are cut.
"""

from __future__ import annotations

__all__ = ["PIECES", "EdgeSet"]

from dataclasses import dataclass

import numpy as np
import shapely

#: Edge pieces handled at once (about 20 arrays of this many numbers: 40 MB).
PIECES = 250_000


def _crossings(a0: np.ndarray, a1: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (edge index, t) of each integer strictly between ``a0`` and ``a1`` and within [lo, hi].

    ``t`` is where along the edge (0 at ``a0``, 1 at ``a1``) the integer is crossed; the
    crossings come edge by edge, each edge's in increasing ``t``.
    """
    amin, amax = np.minimum(a0, a1), np.maximum(a0, a1)
    first = np.maximum(np.floor(amin) + 1, lo)
    last = np.minimum(np.ceil(amax) - 1, hi)
    n = np.maximum(last - first + 1, 0).astype(np.int64)
    idx = np.repeat(np.arange(len(a0)), n)
    off = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    # Walking from a0 towards a1: up from the first integer, or down from the last.
    m = np.where(a1[idx] > a0[idx], first[idx] + off, last[idx] - off)
    t = (m - a0[idx]) / (a1[idx] - a0[idx])
    return idx, t


def _pieces(
    n: int, iu: np.ndarray, tu: np.ndarray, iz: np.ndarray, tz: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the pieces of ``n`` edges cut at their crossings: where each starts and ends along its edge, and the edge.

    Both crossing lists come edge by edge in increasing ``t``, so each edge's two runs are
    merged by rank (a binary search of one in the other) instead of a sort of all cuts.

    Returns
    -------
    a, b : numpy.ndarray
        Each piece's ends, as ``t`` along its edge (``a <= b``).
    edge : numpy.ndarray
        Each piece's edge.
    """
    nu, nz = np.bincount(iu, minlength=n), np.bincount(iz, minlength=n)
    size = nu + nz + 2
    start = np.cumsum(size) - size  # where each edge's cuts begin
    u_first, z_first = np.cumsum(nu) - nu, np.cumsum(nz) - nz
    # (edge, t) as one complex number orders the cuts of all edges at once, exactly (numpy
    # orders complex numbers by real part, then imaginary): a real key such as 2 * edge + t
    # loses t's last bits at large edge numbers and can swap two cuts a few 1e-11 apart.
    ku, kz = iu + 1j * tu, iz + 1j * tz
    t = np.empty(int(size.sum()))
    t[start] = 0.0
    t[start + size - 1] = 1.0
    t[start[iu] + 1 + (np.arange(len(iu)) - u_first[iu]) + (np.searchsorted(kz, ku, "left") - z_first[iu])] = tu
    t[start[iz] + 1 + (np.arange(len(iz)) - z_first[iz]) + (np.searchsorted(ku, kz, "right") - u_first[iz])] = tz
    starts = np.ones(len(t), dtype=bool)  # a piece starts at every cut but an edge's last
    starts[start + size - 1] = False
    return t[starts], t[np.roll(starts, 1)], np.repeat(np.arange(n), size - 1)


def _cut(
    u0: np.ndarray, z0: np.ndarray, u1: np.ndarray, z1: np.ndarray, w: int, h: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cut edges at the grid lines of a strip ``w`` columns wide and ``h`` rows high.

    Each edge is cut where it crosses a column line (F changes from column to column
    everywhere) and a row line inside the strip (above and below it F is constant).

    Returns
    -------
    col, k, frac, step, edge : numpy.ndarray
        For each piece on the grid's columns: its column, its row from the bottom (clamped to
        ``0..h``: below the strip F is 0, above it the column's total), how far up that row
        its middle is (0..1), its signed run ``du``, and its edge.
    """
    iu, tu = _crossings(u0, u1, 0, w)
    iz, tz = _crossings(z0, z1, 0, h)
    a, b, e = _pieces(len(u0), iu, tu, iz, tz)
    du = u1[e] - u0[e]
    mid = (a + b) / 2
    um = u0[e] + mid * du
    zm = z0[e] + mid * (z1[e] - z0[e])
    col = np.floor(um).astype(np.int64)
    on = (col >= 0) & (col < w)
    col, zm, e = col[on], zm[on], e[on]
    k = np.clip(np.floor(zm), 0, h).astype(np.int64)
    return col, k, np.clip(zm - k, 0.0, 1.0), ((b - a) * du)[on], e


@dataclass(frozen=True)
class EdgeSet:
    """The ring edges of polygons in a grid's cell coordinates (``u`` right, ``v`` down, 0 at the top left).

    Build with :meth:`from_geometries`; exteriors run counter-clockwise on the ground and holes
    clockwise, so each ring adds its signed share.
    """

    u0: np.ndarray
    v0: np.ndarray
    u1: np.ndarray
    v1: np.ndarray
    owner: np.ndarray  # the polygon each edge belongs to
    v_min: np.ndarray  # each polygon's top row coordinate
    v_max: np.ndarray  # and its bottom one
    count: int

    @classmethod
    def from_geometries(cls, geoms: np.ndarray, x0: float, y0: float, cell_w: float, cell_h: float) -> EdgeSet:
        """Return the edges of ``geoms`` (polygons or multipolygons) on the grid whose top left corner is (x0, y0).

        Parameters
        ----------
        geoms : numpy.ndarray of shapely.Geometry
            In the grid's CRS; empty or missing geometries have no edges (and measure 0).
        x0, y0 : float
            The grid's top left corner.
        cell_w, cell_h : float
            The cell's width and height, both positive (a north-up grid).

        Returns
        -------
        EdgeSet

        Raises
        ------
        ValueError
            If a cell size is not positive.
        """
        if not (cell_w > 0 and cell_h > 0):
            msg = f"cell sizes must be positive, got {cell_w} x {cell_h}"
            raise ValueError(msg)
        geoms = np.asarray(geoms, dtype=object)
        n = len(geoms)
        parts, part_of = shapely.get_parts(geoms, return_index=True)
        parts = shapely.orient_polygons(parts, exterior_cw=False)
        rings, ring_of = shapely.get_rings(parts, return_index=True)
        xy, vertex_of = shapely.get_coordinates(rings, return_index=True)
        u = (xy[:, 0] - x0) / cell_w
        v = (y0 - xy[:, 1]) / cell_h
        # Consecutive vertices of one ring make an edge (rings are closed: last = first).
        same = vertex_of[1:] == vertex_of[:-1]
        owner = part_of[ring_of[vertex_of[:-1][same]]]
        v_min = np.full(n, np.inf)
        v_max = np.full(n, -np.inf)
        if len(v):
            np.minimum.at(v_min, part_of[ring_of[vertex_of]], v)
            np.maximum.at(v_max, part_of[ring_of[vertex_of]], v)
        return cls(u[:-1][same], v[:-1][same], u[1:][same], v[1:][same], owner, v_min, v_max, n)

    def strip_sums(self, grids: list[np.ndarray], row0: int) -> np.ndarray:
        """Return each polygon's coverage-weighted sum of each grid's cells, for one strip of rows.

        Parameters
        ----------
        grids : list of numpy.ndarray
            Arrays of the same shape (rows, columns) holding rows ``row0 .. row0 + rows - 1`` of
            the grid, top first, and every column from 0. NaN is not allowed: give 0 where a
            cell should not count.
        row0 : int
            The strip's first row.

        Returns
        -------
        numpy.ndarray
            Shape ``(len(grids), count)``; in cells (a cell wholly inside adds its value).

        Raises
        ------
        ValueError
            If the grids' shapes differ.
        """
        out = np.zeros((len(grids), self.count))
        if not grids:
            return out
        shape = grids[0].shape
        if any(g.shape != shape for g in grids):
            msg = "the grids of a strip must have one shape"
            raise ValueError(msg)
        h, w = shape
        if h == 0 or w == 0 or not len(self.owner):
            return out
        # Heights z above the strip's bottom edge: z = row0 + h - v (north is up, as on the ground).
        base = row0 + h
        near = (self.v_max > row0) & (self.v_min < base)
        pick = near[self.owner]
        if not pick.any():
            return out
        u0, u1 = self.u0[pick], self.u1[pick]
        z0, z1 = base - self.v0[pick], base - self.v1[pick]
        owner = self.owner[pick]
        # below[k, j]: the sum of column j's bottom k rows (0/1 grids: exact in int32); a
        # piece at height z in column j adds -du * (below[floor z, j] + value * (z - floor z)).
        tables = []
        for g in grids:
            g = np.asarray(g)
            kind = np.int32 if g.dtype == bool else (np.float64 if g.dtype.kind == "f" else np.int64)
            below = np.zeros((h + 1, w), dtype=kind)
            np.cumsum(g[::-1], axis=0, out=below[1:])
            tables.append((g, below))
        # Edges in chunks of about PIECES pieces, so the pieces' arrays stay small (the sums add up).
        pieces = np.abs(np.floor(u1) - np.floor(u0)) + np.minimum(np.abs(np.floor(z1) - np.floor(z0)), h + 1) + 1
        total = np.cumsum(pieces)
        cuts = np.searchsorted(total, np.arange(PIECES, total[-1], PIECES), "right")
        bounds = np.unique(np.r_[0, cuts, len(u0)])
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            col, k, frac, step, edge = _cut(u0[lo:hi], z0[lo:hi], u1[lo:hi], z1[lo:hi], w, h)
            who = owner[lo:hi][edge]
            inside = k < h
            for i, (g, below) in enumerate(tables):
                value = np.zeros(len(k))
                value[inside] = g[h - 1 - k[inside], col[inside]]
                out[i] += np.bincount(who, weights=-step * (below[k, col] + value * frac), minlength=self.count)
        return out
