"""Waters of the state and their protective areas (§ 540-5 PROTECTIVE AREA, NR 151.125(1)).

A protective area is the strip of land next to a water, measured horizontally from the
top of the channel or the delineated wetland boundary, as wide as the profile says for the
water's class. Where features touch, the greatest width applies: taking the union of every
feature's buffer gives exactly that. The water itself is not part of the strip.

Less susceptible wetlands get 10 % of their average width, clamped to 10-30 ft; the average
width of a polygon is taken as ``2 * area / perimeter`` (exact for a long strip of constant
width, and a fair measure for an elongated wetland).
"""

from __future__ import annotations

__all__ = ["ProtectiveAreas", "buffer_widths_ft", "protective_areas"]

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import shapely

from esc_gis.measure import PolygonIndex, subdivide
from esc_gis.units import ft_to_crs_units

if TYPE_CHECKING:
    import geopandas as gpd
    from pyproj import CRS

    from esc_gis.profile import Profile

_AREAL = (shapely.GeometryType.POLYGON, shapely.GeometryType.MULTIPOLYGON)


def buffer_widths_ft(waters: gpd.GeoDataFrame, profile: Profile, crs: CRS) -> np.ndarray:
    """Protective-area width of each water feature, in feet, from the profile.

    Parameters
    ----------
    waters : geopandas.GeoDataFrame
        With a ``water_class`` column, in ``crs``.
    profile : Profile
    crs : pyproj.CRS

    Returns
    -------
    numpy.ndarray of float
    """
    classes = waters["water_class"].to_numpy()
    widths = np.zeros(len(waters))
    for cls in np.unique(classes):
        e = profile.entry(f"protective_area.{cls}")
        m = classes == cls
        if e.unit == "pct_of_average_width":
            g = waters.geometry.to_numpy()[m]
            # Average width of a polygon ~ 2A/P, in CRS units -> feet.
            avg = 2 * shapely.area(g) / np.maximum(shapely.length(g), 1e-9)
            avg_ft = avg / ft_to_crs_units(1.0, crs)
            lo, hi = e.extra.get("min_ft", 0), e.extra.get("max_ft", np.inf)
            widths[m] = np.clip(avg_ft * float(e.value) / 100.0, lo, hi)  # type: ignore[arg-type]
        else:
            widths[m] = float(e.value or 0.0)
    return widths


@dataclass
class ProtectiveAreas:
    """The dissolved protective areas and the waters, indexed for fast overlays.

    Attributes
    ----------
    strip : PolygonIndex
        Land within the protective width of any water, less the waters themselves.
    water_polygons : PolygonIndex or None
        The areal waters (for disturbance inside a water); None when there are none.
    buffers : PolygonIndex
        Each feature's own buffer (source index = waters row), to name the waters whose
        protective area a site touches.
    nearest : shapely.STRtree
        Every water feature's pieces, for the distance to the nearest water.
    nearest_source : numpy.ndarray
        Waters row of each piece in ``nearest``.
    widths_ft : numpy.ndarray
        Width used for each feature.
    """

    strip: PolygonIndex
    water_polygons: PolygonIndex | None
    buffers: PolygonIndex
    nearest: shapely.STRtree
    nearest_source: np.ndarray
    widths_ft: np.ndarray


def protective_areas(waters: gpd.GeoDataFrame, profile: Profile, crs: CRS) -> ProtectiveAreas:
    """Build the protective areas of a waters layer.

    Parameters
    ----------
    waters : geopandas.GeoDataFrame
        ``water_class`` and geometry (polygons or lines), in the measuring CRS ``crs``.
    profile : Profile
        Supplies the width of each class.
    crs : pyproj.CRS

    Returns
    -------
    ProtectiveAreas

    Raises
    ------
    ProfileError
        If a class has no width in the profile.
    """
    geoms = waters.geometry.to_numpy()
    widths_ft = buffer_widths_ft(waters, profile, crs)
    buffers = shapely.buffer(geoms, widths_ft * ft_to_crs_units(1.0, crs), quad_segs=8)
    areal = np.isin(shapely.get_type_id(geoms), _AREAL)
    water_union = shapely.union_all(geoms[areal]) if areal.any() else None
    strip = shapely.union_all(buffers)
    if water_union is not None:
        strip = shapely.difference(strip, water_union)
    # Distances to lines and polygons alike; subdivided so a lake's thousands of vertices
    # are not walked for every site.
    pieces, source = [], []
    if areal.any():
        water_pieces, piece_source = subdivide(geoms[areal])
        pieces.append(water_pieces)
        source.append(np.flatnonzero(areal)[piece_source])
    if (~areal).any():
        pieces.append(geoms[~areal])
        source.append(np.flatnonzero(~areal))
    all_pieces = np.concatenate(pieces)
    return ProtectiveAreas(
        strip=PolygonIndex([strip]),
        water_polygons=PolygonIndex([water_union]) if water_union is not None else None,
        buffers=PolygonIndex(buffers),
        nearest=shapely.STRtree(all_pieces),
        nearest_source=np.concatenate(source),
        widths_ft=widths_ft,
    )
