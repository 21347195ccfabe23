"""Terrain: slope in percent (Horn, as ``gdaldem slope -p``), land at 20 % or more, steep area."""

from esc_gis.terrain.dem import DemInfo, open_dem
from esc_gis.terrain.slope import NODATA, horn_slope_pct, write_slope
from esc_gis.terrain.steep import steep_area, steep_polygons

__all__ = ["NODATA", "DemInfo", "horn_slope_pct", "open_dem", "steep_area", "steep_polygons", "write_slope"]
