"""Measurements: areas, unions and overlays (vectorised shapely 2 and STRtree)."""

from esc_gis.measure.area import area_sqft, union_by_group
from esc_gis.measure.overlay import PolygonIndex, clip_to_region, nearest_distance, subdivide

__all__ = [
    "PolygonIndex",
    "area_sqft",
    "clip_to_region",
    "nearest_distance",
    "subdivide",
    "union_by_group",
]
