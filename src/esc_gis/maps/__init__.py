"""Maps of screening results (folium): the only part of esc_gis that works in EPSG:4326."""

from esc_gis.maps.render import BASEMAPS, PERMIT_STYLE, check_map_path, overview_map, site_map, write_map

__all__ = ["BASEMAPS", "PERMIT_STYLE", "check_map_path", "overview_map", "site_map", "write_map"]
