"""Terrain: slope in percent (Horn, as ``gdaldem slope -p``), land at 20 % or more, steep area.

Names are imported on first use: slope needs only numpy and rasterio, steep areas also
geopandas and shapely.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from esc_gis._lazy import lazy_getattr

__all__ = [
    "NODATA",
    "DemInfo",
    "horn_slope_pct",
    "open_dem",
    "sample_dem",
    "steep_area",
    "steep_polygons",
    "write_slope",
]

_LAZY = {
    "DemInfo": "esc_gis.terrain.dem",
    "open_dem": "esc_gis.terrain.dem",
    "NODATA": "esc_gis.terrain.slope",
    "horn_slope_pct": "esc_gis.terrain.slope",
    "write_slope": "esc_gis.terrain.slope",
    "sample_dem": "esc_gis.terrain.sample",
    "steep_area": "esc_gis.terrain.steep",
    "steep_polygons": "esc_gis.terrain.steep",
}

if TYPE_CHECKING:
    from esc_gis.terrain.dem import DemInfo, open_dem
    from esc_gis.terrain.sample import sample_dem
    from esc_gis.terrain.slope import NODATA, horn_slope_pct, write_slope
    from esc_gis.terrain.steep import steep_area, steep_polygons


__getattr__ = lazy_getattr(__name__, _LAZY)
