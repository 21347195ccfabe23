"""Overlays: area inside polygons, clipping to a region, distance to the nearest feature.

Large polygons (a dissolved protective area, a lake, a county) are split into pieces of at
most ``max_vertices`` vertices before they are indexed, as PostGIS ``ST_Subdivide`` does:
intersecting a parcel with one giant polygon costs time in proportion to the giant's vertex
count, so without subdividing an overlay of 100,000 parcels against dissolved stream buffers
takes minutes instead of seconds. Pieces never overlap, so areas add up exactly.
"""

from __future__ import annotations

__all__ = [
    "PolygonIndex",
    "chunk_lines",
    "clip_to_region",
    "edge_distance_within",
    "nearest_distance",
    "parallel",
    "subdivide",
    "unique_pairs",
]

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import shapely

from esc_gis._threads import cap

if TYPE_CHECKING:
    import numpy.typing as npt

_POLYGON = shapely.GeometryType.POLYGON


def _polygon_parts(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Explode to Polygon parts, dropping empty and non-areal parts; return (parts, source index)."""
    parts, index = shapely.get_parts(geoms, return_index=True)
    keep = (shapely.get_type_id(parts) == _POLYGON) & ~shapely.is_empty(parts)
    return parts[keep], index[keep]


def subdivide(geoms: npt.ArrayLike, *, max_vertices: int = 256, max_depth: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Split polygons into non-overlapping pieces of at most ``max_vertices`` vertices.

    Parameters
    ----------
    geoms : array_like of shapely.Geometry
        Polygonal geometries.
    max_vertices : int, default 256
    max_depth : int, default 24
        Stop splitting after this many halvings (a safeguard for degenerate input).

    Returns
    -------
    pieces : numpy.ndarray of Polygon
    source : numpy.ndarray of int
        The index in ``geoms`` each piece came from.

    Notes
    -----
    A quadtree: each polygon with too many vertices is cut by the four quarters of its
    bounding box, all polygons of one level at once (vectorised ``shapely.intersection``).

    Examples
    --------
    >>> circle = shapely.Point(0, 0).buffer(100, quad_segs=256)
    >>> pieces, src = subdivide([circle], max_vertices=64)
    >>> bool(shapely.get_num_coordinates(pieces).max() <= 64)
    True
    >>> bool(abs(shapely.area(pieces).sum() - circle.area) < 1e-6)
    True
    """
    parts, source = _polygon_parts(np.asarray(geoms, dtype=object))
    done_parts, done_source = [], []
    for _ in range(max_depth):
        small = shapely.get_num_coordinates(parts) <= max_vertices
        done_parts.append(parts[small])
        done_source.append(source[small])
        parts, source = parts[~small], source[~small]
        if len(parts) == 0:
            break
        b = shapely.bounds(parts)
        mx, my = (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2
        boxes = np.concatenate(
            [
                shapely.box(b[:, 0], b[:, 1], mx, my),
                shapely.box(mx, b[:, 1], b[:, 2], my),
                shapely.box(b[:, 0], my, mx, b[:, 3]),
                shapely.box(mx, my, b[:, 2], b[:, 3]),
            ]
        )
        cut = shapely.intersection(np.tile(parts, 4), boxes)
        parts, idx = _polygon_parts(cut)
        source = np.tile(source, 4)[idx]
    done_parts.append(parts)
    done_source.append(source)
    return np.concatenate(done_parts), np.concatenate(done_source)


class PolygonIndex:
    """A spatial index over subdivided polygons, for areas of overlap and hit tests.

    Parameters
    ----------
    geoms : array_like of shapely.Geometry
        Polygonal features (protective areas, waters, targeted areas).
    max_vertices : int, default 256
        Pieces are at most this large (see :func:`subdivide`).

    Examples
    --------
    >>> idx = PolygonIndex([shapely.box(0, 0, 10, 10)])
    >>> idx.overlap_area([shapely.box(5, 5, 20, 20), shapely.box(50, 50, 60, 60)]).tolist()
    [25.0, 0.0]
    """

    def __init__(self, geoms: npt.ArrayLike, *, max_vertices: int = 256) -> None:
        self.pieces, self.source = subdivide(geoms, max_vertices=max_vertices)
        self.tree = shapely.STRtree(self.pieces)
        shapely.prepare(self.pieces)

    def pairs(self, geoms: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Return (input index, piece index) of every intersecting pair, sorted by input.

        The pieces are prepared once, in ``__init__``; see :func:`_intersecting`.
        """
        left, right = _intersecting(self.tree, np.asarray(geoms, dtype=object))
        order = np.lexsort((right, left))
        return left[order], right[order]

    def uncovered(self, geoms: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cut the indexed polygons, which may overlap one another, out of each geometry.

        ``area(g) - area(uncovered)`` is the area of ``g`` inside the union of the polygons,
        found without building that union or any union at all: each geometry loses the
        pieces it meets one at a time, in rounds (round k removes every geometry's k-th
        piece, vectorised), and stops as soon as nothing is left.

        Returns
        -------
        uncovered : numpy.ndarray of shapely.Geometry
            What is left of each geometry (empty when wholly covered).
        left, right : numpy.ndarray of int
            The intersecting (input index, piece index) pairs, for reuse.
        """
        geoms = np.asarray(geoms, dtype=object)
        left, right = self.pairs(geoms)
        rest = geoms.copy()
        # Wholly inside one piece: nothing is left, and no overlay is needed (a prepared
        # containment test costs a fraction of an overlay, and overlays are the cost here).
        within = np.zeros(len(geoms), bool)
        by_piece = np.argsort(right, kind="stable")
        inside = parallel(
            shapely.contains_properly, self.pieces[right[by_piece]], geoms[left[by_piece]], groups=right[by_piece]
        )
        within[left[by_piece][inside]] = True
        rest[within] = shapely.Polygon()
        starts = np.flatnonzero(np.r_[True, left[1:] != left[:-1]]) if len(left) else np.empty(0, int)
        rank = np.arange(len(left)) - np.repeat(starts, np.diff(np.r_[starts, len(left)]))
        for k in range(int(rank.max()) + 1 if len(rank) else 0):
            sel = np.flatnonzero(rank == k)
            sel = sel[~shapely.is_empty(rest[left[sel]])]
            if len(sel):
                rest[left[sel]] = parallel(shapely.difference, rest[left[sel]], self.pieces[right[sel]])
        return rest, left, right

    def overlap_area(self, geoms: npt.ArrayLike) -> np.ndarray:
        """Area of each geometry that lies inside the indexed polygons (CRS units squared).

        Inputs are assumed polygonal; the indexed polygons are assumed not to overlap one
        another (dissolve them first), so piece areas add up.
        """
        geoms = np.asarray(geoms, dtype=object)
        left, right = self.pairs(geoms)
        inter = shapely.intersection(geoms[left], self.pieces[right])
        return np.bincount(left, weights=np.nan_to_num(shapely.area(inter)), minlength=len(geoms))

    def hit_sources(self, geoms: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Return unique (input index, source feature index) pairs that intersect with area."""
        geoms = np.asarray(geoms, dtype=object)
        left, right = self.pairs(geoms)
        return unique_pairs(left, self.source[right])


def unique_pairs(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the unique (left, right) pairs of non-negative ints, sorted by left then right.

    One 1-D ``np.unique`` of a combined key: ``np.unique(..., axis=0)`` on the stacked
    pairs sorts rows as structured records, several times slower for 200,000 pairs.

    Examples
    --------
    >>> [a.tolist() for a in unique_pairs(np.array([2, 0, 2, 0]), np.array([1, 5, 1, 3]))]
    [[0, 0, 2], [3, 5, 1]]
    """
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    if len(left) == 0:
        return left, right
    width = int(right.max()) + 1
    key = np.unique(left * width + right)
    return key // width, key % width


def clip_to_region(geoms: npt.ArrayLike, region: shapely.Geometry) -> tuple[np.ndarray, np.ndarray]:
    """Clip geometries to a region, computing intersections only where they cross its edge.

    Parameters
    ----------
    geoms : array_like of shapely.Geometry
    region : shapely.Geometry
        A (multi)polygon, e.g. the Village boundary (holes are outside it).

    Returns
    -------
    inside : numpy.ndarray of shapely.Geometry
        The part of each geometry inside the region (empty when none).
    state : numpy.ndarray of int
        2 when wholly inside, 0 when wholly outside, 1 when crossing the edge.
    """
    geoms = np.asarray(geoms, dtype=object)
    shapely.prepare(region)
    within = shapely.contains_properly(region, geoms)
    touches = shapely.intersects(region, geoms)
    crossing = touches & ~within
    inside = np.where(within, geoms, shapely.Polygon())
    if crossing.any():
        inside[crossing] = shapely.intersection(geoms[crossing], region)
    state = np.where(within, 2, np.where(crossing, 1, 0))
    return inside, state


def edge_distance_within(geoms: npt.ArrayLike, region: shapely.Geometry, reach: float) -> np.ndarray:
    """Distance from each geometry to a region, where it is at most ``reach``.

    What ``shapely.distance(geoms, region)`` gives for a geometry within ``reach`` of the
    region, the same float: a geometry that does not meet a polygon is as far from it as from
    its rings, and GEOS takes that minimum over the same segment pairs whether the rings come
    whole or in the short pieces (:func:`chunk_lines`) measured here. Measured whole, every one
    of a county's parcels walks every segment of the region's rings (a quarter of a
    100,000-parcel screening). Here a parcel is measured only to the pieces that can be
    nearest: the distance between bounding boxes bounds a piece's distance from below, so the
    piece whose box is nearest is measured first and then only the pieces whose boxes are no
    farther than that distance; a parcel whose boxes all lie beyond ``reach`` is not measured.

    Parameters
    ----------
    geoms : array_like of shapely.Geometry
    region : shapely.Geometry
        A (multi)polygon, e.g. the Village boundary.
    reach : float
        In CRS units; beyond it no distance is measured.

    Returns
    -------
    numpy.ndarray of float
        The distance where at most ``reach`` (0 where a geometry meets the region), a number
        over ``reach`` or ``inf`` beyond it, NaN for an empty geometry.

    Raises
    ------
    None

    Examples
    --------
    >>> village = shapely.box(0, 0, 10, 10)
    >>> edge_distance_within([shapely.Point(13, 14), shapely.Point(5, 5), shapely.Point(99, 0)], village, 20).tolist()
    [5.0, 0.0, inf]
    """
    geoms = np.asarray(geoms, dtype=object)
    out = np.full(len(geoms), np.inf)
    empty = shapely.is_empty(geoms) | shapely.is_missing(geoms)
    out[empty] = np.nan
    pieces, _ = chunk_lines(shapely.boundary(region), max_vertices=_EDGE_PIECE)
    if not len(pieces) or not math.isfinite(reach):  # nothing to index, or no reach to prune by
        out[~empty] = shapely.distance(geoms[~empty], region)
        return out
    rows = np.flatnonzero(~empty)
    box = shapely.bounds(geoms[rows])
    pbox = shapely.bounds(pieces)
    # Slack over the rounding of the boxes' distances: a piece left out is certainly not nearer.
    slack = 1 + 1e-9
    margin = reach * slack + 1e-9
    for start in range(0, len(rows), _EDGE_ROWS):
        r, b = rows[start : start + _EDGE_ROWS], box[start : start + _EDGE_ROWS]
        dx = np.maximum(np.maximum(pbox[:, 0] - b[:, 2:3], b[:, 0:1] - pbox[:, 2]), 0.0)
        dy = np.maximum(np.maximum(pbox[:, 1] - b[:, 3:4], b[:, 1:2] - pbox[:, 3]), 0.0)
        low = np.hypot(dx, dy)  # (rows, pieces): no piece is nearer than its box
        first = np.argmin(low, axis=1)
        near = np.flatnonzero(low[np.arange(len(r)), first] <= margin)
        if not len(near):
            continue
        g = geoms[r[near]]
        d = shapely.distance(g, pieces[first[near]])
        i, j = np.nonzero(low[near] <= d[:, np.newaxis] * slack)
        other = j != first[near][i]
        i, j = i[other], j[other]
        if len(i):
            np.minimum.at(d, i, shapely.distance(g[i], pieces[j]))
        out[r[near]] = d
    # A geometry meeting the region is 0 from it, as shapely says, though its rings may be far
    # from the region's (a speck inside): tested where the boxes overlap, the region prepared.
    x0, y0, x1, y1 = shapely.bounds(region)
    over = rows[(box[:, 0] <= x1) & (box[:, 2] >= x0) & (box[:, 1] <= y1) & (box[:, 3] >= y0)]
    shapely.prepare(region)
    out[over[shapely.intersects(region, geoms[over])]] = 0.0
    return out


#: Vertices of a piece of the region's rings, and rows measured at a time (:func:`edge_distance_within`):
#: a county's million parcels against a few dozen pieces are held a chunk of rows at a time.
_EDGE_PIECE = 16
_EDGE_ROWS = 4_096


def nearest_distance(geoms: npt.ArrayLike, tree: shapely.STRtree) -> tuple[np.ndarray, np.ndarray]:
    """Distance from each geometry to the nearest indexed geometry (0 where they meet).

    Geometries that meet an indexed one are found first with one bulk ``intersects`` query
    (distance 0). The others are searched in widening rings (:func:`_nearest_within`), and
    the few left after the rings by the tree's nearest-neighbour search. Index small
    pieces (:func:`subdivide`, :func:`chunk_lines`), not whole rivers and lakes, or the
    search cannot prune.

    Returns
    -------
    distance : numpy.ndarray of float
        In CRS units; NaN for empty inputs.
    nearest : numpy.ndarray of int
        Index into the tree's geometries; -1 for empty inputs.
    """
    geoms = np.asarray(geoms, dtype=object)
    distance = np.full(len(geoms), np.nan)
    nearest = np.full(len(geoms), -1)
    shapely.prepare(tree.geometries)
    left, right = _intersecting(tree, geoms)
    distance[left] = 0.0
    nearest[left] = right
    rest = np.flatnonzero(np.isnan(distance) & ~shapely.is_empty(geoms) & ~shapely.is_missing(geoms))
    if len(rest):
        d, j = _nearest_within(tree, geoms[rest])
        distance[rest], nearest[rest] = d, j
        rest = rest[np.isnan(d)]
    if len(rest):
        found = parallel(lambda g: _nearest(tree, g), geoms[rest])
        distance[rest] = found[:, 0]
        nearest[rest] = found[:, 1].astype(int)
    return distance, nearest


def _nearest_within(
    tree: shapely.STRtree, geoms: np.ndarray, *, rounds: int = 5, growth: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """Exact nearest item for each geometry found within widening rings; NaN / -1 if none.

    Each round takes the items whose bounding box lies within ``r`` of a geometry's own
    box (one bounding-box query, which costs next to nothing) and measures them with
    vectorised ``shapely.distance`` on threads. A minimum of at most ``r`` is exact: any
    item nearer than ``r`` has its box within ``r`` and was measured. Geometries whose
    minimum is over ``r`` go on to a ring ``growth`` times wider. The first ring is a
    quarter of the mean spacing of the items, so most geometries are settled by the first
    or second ring; doubling it (five rings reach 16 times as far) measured 36 % fewer pairs
    than quadrupling it (three rings) on a county's 50,000 parcels. Per geometry, this is
    ~5x faster here than the tree's own nearest search (``STRtree.query_nearest``), which
    walks the tree one geometry at a time.
    Ties go to the lowest item index.
    """
    items = tree.geometries
    distance = np.full(len(geoms), np.nan)
    nearest = np.full(len(geoms), -1)
    if len(items) == 0:
        return distance, nearest
    b = shapely.bounds(items)
    extent = (np.nanmax(b[:, 2]) - np.nanmin(b[:, 0])) * (np.nanmax(b[:, 3]) - np.nanmin(b[:, 1]))
    radius = 0.25 * float(np.sqrt(extent / len(items))) if extent > 0 else 1.0
    todo = np.arange(len(geoms))
    for _ in range(rounds):
        ring = shapely.bounds(geoms[todo]) + np.array([-radius, -radius, radius, radius])
        left, right = tree.query(shapely.box(*ring.T))
        d = parallel(shapely.distance, geoms[todo[left]], items[right])
        # The nearest of each geometry's candidates: sort by (geometry, distance, item).
        order = np.lexsort((right, d, left))
        first = order[np.r_[True, left[order][1:] != left[order][:-1]]] if len(order) else order
        settled = first[d[first] <= radius]
        distance[todo[left[settled]]] = d[settled]
        nearest[todo[left[settled]]] = right[settled]
        todo = todo[np.isnan(distance[todo])]
        if len(todo) == 0:
            break
        radius *= growth
    return distance, nearest


def _intersecting(tree: shapely.STRtree, geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (input index, tree index) of every intersecting pair, sorted by tree index.

    Candidates come from the tree (the inputs are the queries: a bounding-box query costs
    next to nothing); each is then tested with its tree geometry, which must be prepared,
    on :data:`THREADS` threads, one tree geometry per thread (see :func:`parallel`). An
    STRtree query with a predicate tests on one thread only, and the tests are the cost.
    """
    left, right = tree.query(geoms)
    by_item = np.argsort(right, kind="stable")
    left, right = left[by_item], right[by_item]
    hit = parallel(shapely.intersects, tree.geometries[right], geoms[left], groups=right)
    return left[hit], right[hit]


def _nearest(tree: shapely.STRtree, geoms: np.ndarray) -> np.ndarray:
    """Return ``(distance, index)`` rows of each geometry's nearest item (chunk-wise, for threads)."""
    out = np.full((len(geoms), 2), [np.nan, -1.0])
    (i, j), d = tree.query_nearest(geoms, return_distance=True, all_matches=False)
    out[i, 0] = d
    out[i, 1] = j
    return out


#: Threads for the overlays: shapely releases the GIL inside GEOS, so array operations
#: split in chunks run in parallel (fewer under :func:`esc_gis._threads.at_most`).
THREADS = max(1, min(4, os.cpu_count() or 1))
_CHUNK = 4096


def parallel(fn: Callable[..., np.ndarray], *arrays: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Apply a vectorised shapely function to aligned arrays, in chunks, on :data:`THREADS` threads.

    Parameters
    ----------
    fn : callable
        A vectorised shapely function (it releases the GIL inside GEOS).
    *arrays : numpy.ndarray
        Aligned arguments of ``fn``.
    groups : numpy.ndarray of int, optional
        Sorted keys (e.g. the index of a prepared geometry in ``arrays[0]``): chunks are
        cut only where the key changes. Pass it whenever an argument holds *prepared*
        geometries: GEOS builds a prepared geometry's indexes lazily, on its first
        predicate, and two threads doing that to the same geometry crash the process.

    Examples
    --------
    >>> a = np.array([shapely.box(0, 0, 2, 2)] * 3)
    >>> b = np.array([shapely.box(1, 1, 3, 3)] * 3)
    >>> shapely.area(parallel(shapely.intersection, a, b)).tolist()
    [1.0, 1.0, 1.0]
    """
    n = len(arrays[0])
    threads = cap(THREADS)
    if threads == 1 or n <= _CHUNK:
        return fn(*arrays)
    cuts = np.arange(0, n, _step(n, threads))
    if groups is not None:
        cuts = np.unique(np.searchsorted(groups, groups[cuts]))  # back to the start of each key
    ends = np.r_[cuts[1:], n]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        parts = list(pool.map(lambda i, j: fn(*(a[i:j] for a in arrays)), cuts, ends))
    return np.concatenate(parts)


def _step(n: int, threads: int) -> int:
    return max(_CHUNK, -(-n // (threads * 4)))


def chunk_lines(geoms: npt.ArrayLike, *, max_vertices: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Cut (multi)linestrings into consecutive pieces of at most ``max_vertices`` vertices.

    The linear counterpart of :func:`subdivide`: a long river centreline has a bounding box
    that covers half a county, so a spatial index cannot prune it; its short pieces can.
    Neighbouring pieces share their end vertex, so together they are the line.

    Returns
    -------
    pieces : numpy.ndarray of LineString
    source : numpy.ndarray of int
        The index in ``geoms`` each piece came from.

    Examples
    --------
    >>> line = shapely.LineString([(x, 0) for x in range(10)])
    >>> pieces, src = chunk_lines([line], max_vertices=4)
    >>> [len(p.coords) for p in pieces], src.tolist()
    ([4, 4, 4], [0, 0, 0])
    """
    parts, part_src = shapely.get_parts(np.asarray(geoms, dtype=object), return_index=True)
    keep = ~shapely.is_empty(parts) & (shapely.get_num_coordinates(parts) >= 2)
    parts, part_src = parts[keep], part_src[keep]
    coords, idx = shapely.get_coordinates(parts, return_index=True)
    if len(coords) == 0:
        return np.empty(0, dtype=object), np.empty(0, dtype=int)
    first = np.searchsorted(idx, idx)  # index of each coordinate's first vertex
    pos = np.arange(len(coords)) - first
    step = max(1, max_vertices - 1)
    n_vert = np.bincount(idx, minlength=len(parts))
    n_chunks = np.maximum(1, np.ceil((n_vert - 1) / step)).astype(int)
    chunk_base = np.r_[0, np.cumsum(n_chunks)[:-1]]
    # Each vertex goes to chunk pos // step; a vertex that starts a chunk (other than the
    # first) also ends the previous one.
    own = chunk_base[idx] + np.minimum(pos // step, n_chunks[idx] - 1)
    shared = (pos % step == 0) & (pos > 0) & (pos // step < n_chunks[idx])
    chunk = np.r_[own, own[shared] - 1]
    key = np.r_[pos, pos[shared]]
    allc = np.r_[coords, coords[shared]] if shared.any() else coords
    order = np.lexsort((key, chunk))
    pieces = shapely.linestrings(allc[order], indices=chunk[order])
    return pieces, part_src[np.repeat(np.arange(len(parts)), n_chunks)]
