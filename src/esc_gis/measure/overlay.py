"""Overlays: area inside polygons, clipping to a region, distance to the nearest feature.

Large polygons (a dissolved protective area, a lake, a county) are split into pieces of at
most ``max_vertices`` vertices before they are indexed, as PostGIS ``ST_Subdivide`` does:
intersecting a parcel with one giant polygon costs time in proportion to the giant's vertex
count, so without subdividing an overlay of 100,000 parcels against dissolved stream buffers
takes minutes instead of seconds. Pieces never overlap, so areas add up exactly.
"""

from __future__ import annotations

__all__ = ["PolygonIndex", "clip_to_region", "nearest_distance", "subdivide"]

from typing import TYPE_CHECKING

import numpy as np
import shapely

if TYPE_CHECKING:
    import numpy.typing as npt

_POLYGON = shapely.GeometryType.POLYGON


def _polygon_parts(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Explode to Polygon parts, dropping empty and non-areal parts; return (parts, source index)."""
    parts, index = shapely.get_parts(geoms, return_index=True)
    keep = (shapely.get_type_id(parts) == _POLYGON) & ~shapely.is_empty(parts)
    return parts[keep], index[keep]


def subdivide(
    geoms: npt.ArrayLike, *, max_vertices: int = 256, max_depth: int = 24
) -> tuple[np.ndarray, np.ndarray]:
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
        boxes = np.concatenate([
            shapely.box(b[:, 0], b[:, 1], mx, my), shapely.box(mx, b[:, 1], b[:, 2], my),
            shapely.box(b[:, 0], my, mx, b[:, 3]), shapely.box(mx, my, b[:, 2], b[:, 3]),
        ])  # fmt: skip
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

    def pairs(self, geoms: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Return (input index, piece index) of every intersecting pair, in one bulk query."""
        left, right = self.tree.query(np.asarray(geoms, dtype=object), predicate="intersects")
        return left, right

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
        pairs = np.unique(np.stack([left, self.source[right]], axis=1), axis=0)
        return pairs[:, 0], pairs[:, 1]


def clip_to_region(
    geoms: npt.ArrayLike, region: shapely.Geometry
) -> tuple[np.ndarray, np.ndarray]:
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


def nearest_distance(geoms: npt.ArrayLike, tree: shapely.STRtree) -> tuple[np.ndarray, np.ndarray]:
    """Distance from each geometry to the nearest indexed geometry (0 where they meet).

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
    (i, j), d = tree.query_nearest(geoms, return_distance=True, all_matches=False)
    distance[i] = d
    nearest[i] = j
    return distance, nearest
