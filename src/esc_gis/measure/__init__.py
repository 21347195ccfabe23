"""Measurements: areas, unions and overlays (vectorised shapely 2 and STRtree)."""

from esc_gis.measure.area import area_sqft, union_by_group
from esc_gis.measure.overlay import (
    PolygonIndex,
    chunk_lines,
    clip_to_region,
    edge_distance_within,
    nearest_distance,
    parallel,
    subdivide,
    unique_pairs,
)

__all__ = [
    "PolygonIndex",
    "area_sqft",
    "chunk_lines",
    "clip_to_region",
    "edge_distance_within",
    "nearest_distance",
    "parallel",
    "subdivide",
    "union_by_group",
    "unique_pairs",
]
