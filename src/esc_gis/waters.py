"""Waters of the state and their protective areas (§ 540-5 PROTECTIVE AREA, NR 151.125(1)).

A protective area is the strip of land next to a water, measured horizontally from the
top of the channel or the delineated wetland boundary, as wide as the profile says for the
water's class. Where features touch or overlap, the greatest width applies (NR 151.125(1)(j)):
a point is in the strip when it lies within *any* feature's own width of that feature, so
the union of every feature's buffer is exactly the strip. The water itself is not part of it.

How each kind of feature is measured:

- **Polygons** (lakes, wetlands, channels drawn at their banks) are buffered from their edge.
- **Lines with a channel width** (``channel_width_ft``) are the centre of a channel that
  wide: the channel (half the width either side) counts as water, and the strip is measured
  from its banks.
- **Lines without one** (hydrography centrelines) are buffered from the line itself. That
  approximates the top of the channel, slightly overstating the strip on the far side of a
  wide stream; screening says so in a finding.
- **Less susceptible wetlands** get 10 % of their average width, at least 10 ft and at most
  30 ft (NR 151.125(1)(f)). The average width of a polygon is ``2 * area / perimeter``: exact
  for a strip of constant width (a 400 x 60 ft wetland: 2 * 24,000 / 920 = 52.2 ft), and a fair
  measure of an elongated wetland. Holes count in the perimeter, as they are wetland edge too.
"""

from __future__ import annotations

__all__ = ["ProtectiveAreas", "buffer_widths_ft", "governing_parts", "protective_areas"]

from dataclasses import dataclass
from typing import TYPE_CHECKING

import geopandas as gpd
import numpy as np
import shapely

from esc_gis.measure import PolygonIndex, area_sqft, subdivide
from esc_gis.units import ft_to_crs_units

if TYPE_CHECKING:
    from pyproj import CRS

    from esc_gis.profile import Profile

_AREAL = (shapely.GeometryType.POLYGON, shapely.GeometryType.MULTIPOLYGON)
#: Buffer arcs: 8 segments per quarter circle keep the area within 0.3 % of a true circle.
_QUAD_SEGS = 8


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

    Raises
    ------
    ProfileError
        If a class has no width in the profile.

    Examples
    --------
    A 400 x 60 ft less susceptible wetland is 52.2 ft wide on average; 10 % of that is under
    the 10 ft minimum:

    >>> import geopandas as gpd, shapely
    >>> from esc_gis.profile import load_profile
    >>> w = gpd.GeoDataFrame({"water_class": ["wetland_less_susceptible", "lake"]},
    ...                      geometry=[shapely.box(0, 0, 400, 60), shapely.box(0, 0, 9, 9)], crs="EPSG:2222")
    >>> buffer_widths_ft(w, load_profile(), w.crs).tolist()
    [10.0, 50.0]
    """
    classes = waters["water_class"].to_numpy()
    widths = np.zeros(len(waters))
    for cls in np.unique(classes):
        e = profile.entry(f"protective_area.{cls}")
        m = classes == cls
        if e.unit == "pct_of_average_width":
            g = waters.geometry.to_numpy()[m]
            avg_ft = 2 * shapely.area(g) / np.maximum(shapely.length(g), 1e-9) / ft_to_crs_units(1.0, crs)
            lo, hi = e.extra.get("min_ft", 0), e.extra.get("max_ft", np.inf)
            widths[m] = np.clip(avg_ft * float(e.value) / 100.0, lo, hi)  # type: ignore[arg-type]
        else:
            widths[m] = float(e.value or 0.0)
    return widths


def _shapes(waters: gpd.GeoDataFrame, widths_ft: np.ndarray, crs: CRS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (water shape, buffer, centreline mask) of every feature, in CRS units."""
    ft = ft_to_crs_units(1.0, crs)
    geoms = waters.geometry.to_numpy()
    areal = np.isin(shapely.get_type_id(geoms), _AREAL)
    half = np.nan_to_num(waters["channel_width_ft"].to_numpy(dtype=float) if "channel_width_ft" in waters
                         else np.zeros(len(geoms))) / 2 * ft  # fmt: skip
    half[areal] = 0.0
    channel = ~areal & (half > 0)
    # A line with a channel width becomes its channel: flat ends, so the channel stops where
    # the mapped stream does.
    water = geoms.copy()
    if channel.any():
        water[channel] = shapely.buffer(geoms[channel], half[channel], quad_segs=_QUAD_SEGS, cap_style="flat")
    buffers = shapely.buffer(geoms, half + widths_ft * ft, quad_segs=_QUAD_SEGS)
    return water, buffers, ~areal & ~channel


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
    centreline : numpy.ndarray of bool
        Features buffered from a centreline (a line without a channel width).
    """

    strip: PolygonIndex
    water_polygons: PolygonIndex | None
    buffers: PolygonIndex
    nearest: shapely.STRtree
    nearest_source: np.ndarray
    widths_ft: np.ndarray
    centreline: np.ndarray


def protective_areas(waters: gpd.GeoDataFrame, profile: Profile, crs: CRS) -> ProtectiveAreas:
    """Build the protective areas of a waters layer, indexed for screening.

    Parameters
    ----------
    waters : geopandas.GeoDataFrame
        ``water_class``, optionally ``channel_width_ft``, and geometry (polygons or lines),
        in the measuring CRS ``crs`` (see :func:`esc_gis.validate.prepare_waters`).
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
    widths_ft = buffer_widths_ft(waters, profile, crs)
    water, buffers, centreline = _shapes(waters, widths_ft, crs)
    areal = np.isin(shapely.get_type_id(water), _AREAL)
    # Dissolve piecewise: subdividing first keeps every union and difference small (a
    # dissolved stream network is one polygon of 100k+ vertices otherwise).
    strip_pieces = _dissolve(buffers)
    water_pieces = _dissolve(water[areal]) if areal.any() else np.empty(0, dtype=object)
    if len(water_pieces):
        strip_pieces = _subtract(strip_pieces, water_pieces)
    # Distances to lines and polygons alike; subdivided so a lake's thousands of vertices
    # are not walked for every site.
    pieces, source = [], []
    if areal.any():
        wp, ws = subdivide(water[areal])
        pieces.append(wp)
        source.append(np.flatnonzero(areal)[ws])
    if (~areal).any():
        pieces.append(water[~areal])
        source.append(np.flatnonzero(~areal))
    return ProtectiveAreas(
        strip=PolygonIndex(strip_pieces),
        water_polygons=PolygonIndex(water_pieces) if len(water_pieces) else None,
        buffers=PolygonIndex(buffers),
        nearest=shapely.STRtree(np.concatenate(pieces)),
        nearest_source=np.concatenate(source),
        widths_ft=widths_ft,
        centreline=centreline,
    )


def _dissolve(geoms: np.ndarray, cell_count: int = 64) -> np.ndarray:
    """Union overlapping polygons into non-overlapping pieces, tile by tile.

    The extent is cut into a grid; each tile's union is computed on its own (all tiles at
    once, vectorised), so no union ever grows to the whole network's size. Pieces of
    neighbouring tiles only share edges, so their areas add up.
    """
    geoms = np.asarray(geoms, dtype=object)
    if len(geoms) == 0:
        return geoms
    x0, y0, x1, y1 = shapely.total_bounds(geoms)
    n = max(1, min(cell_count, int(np.sqrt(len(geoms)))))
    xs, ys = np.linspace(x0, x1, n + 1), np.linspace(y0, y1, n + 1)
    tiles = shapely.box(*(a.ravel() for a in (*np.meshgrid(xs[:-1], ys[:-1]), *np.meshgrid(xs[1:], ys[1:]))))
    t, g = shapely.STRtree(geoms).query(tiles, predicate="intersects")
    clipped = shapely.intersection(geoms[g], tiles[t])
    order = np.argsort(t, kind="stable")
    t, clipped = t[order], clipped[order]
    starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
    # union_all per tile: a loop over tiles (at most cell_count^2), not over features.
    unions = np.array([shapely.union_all(part) for part in np.split(clipped, starts[1:])], dtype=object)
    parts = shapely.get_parts(unions)
    return parts[(shapely.get_type_id(parts) == shapely.GeometryType.POLYGON) & (shapely.area(parts) > 0)]


def _subtract(pieces: np.ndarray, holes: np.ndarray) -> np.ndarray:
    """Remove ``holes`` from each piece, touching only the pieces they meet."""
    i, j = shapely.STRtree(holes).query(pieces, predicate="intersects")
    out = pieces.copy()
    if len(i):
        order = np.argsort(i, kind="stable")
        i, j = i[order], j[order]
        starts = np.flatnonzero(np.r_[True, i[1:] != i[:-1]])
        uniq = i[starts]
        cut = np.array([shapely.union_all(holes[k]) for k in np.split(j, starts[1:])], dtype=object)
        out[uniq] = shapely.difference(pieces[uniq], cut)
    parts = shapely.get_parts(out)
    return parts[(shapely.get_type_id(parts) == shapely.GeometryType.POLYGON) & (shapely.area(parts) > 0)]


def governing_parts(waters: gpd.GeoDataFrame, profile: Profile, crs: CRS) -> gpd.GeoDataFrame:
    """Dissolve the protective areas by the class and width that govern each part.

    Where buffers of different widths overlap, the part goes to the greatest width
    (NR 151.125(1)(j)); between equal widths, to the class listed first in the profile.
    The waters themselves are left out.

    Parameters
    ----------
    waters : geopandas.GeoDataFrame
        As for :func:`protective_areas`.
    profile : Profile
    crs : pyproj.CRS

    Returns
    -------
    geopandas.GeoDataFrame
        One row per (class, width): ``water_class``, ``width_ft`` (rounded to 0.1 ft),
        ``section`` (the citation), ``area_sqft``, ``features`` (how many waters give that
        width there), ``centreline`` (True when measured from centrelines) and the
        dissolved (multi)polygon, widest first.

    Raises
    ------
    ProfileError
        If a class has no width in the profile.
    """
    widths_ft = buffer_widths_ft(waters, profile, crs)
    water, buffers, centreline = _shapes(waters, widths_ft, crs)
    areal = np.isin(shapely.get_type_id(water), _AREAL)
    water_all = shapely.union_all(water[areal]) if areal.any() else shapely.Polygon()
    classes = waters["water_class"].to_numpy(dtype=object)
    rank = {c: k for k, c in enumerate(profile.water_classes())}
    width_key = np.round(widths_ft, 1)
    groups = sorted({(float(w), str(c)) for w, c in zip(width_key, classes, strict=True)},
                    key=lambda wc: (-wc[0], rank.get(wc[1], len(rank))))  # fmt: skip
    rows, covered = [], shapely.Polygon()
    # One union per (class, width) group, widest first; each keeps only what no wider group
    # has claimed. The loop is over groups (a handful), never over features.
    for w, c in groups:
        m = (width_key == w) & (classes == c)
        union = shapely.union_all(buffers[m])
        part = shapely.difference(shapely.difference(union, covered), water_all)
        covered = shapely.union(covered, union)
        if shapely.is_empty(part) or shapely.area(part) == 0:
            continue
        rows.append({"water_class": c, "width_ft": w, "section": profile.entry(f"protective_area.{c}").cite,
                     "features": int(m.sum()), "centreline": bool(centreline[m].any()), "geometry": part})  # fmt: skip
    cols = ["water_class", "width_ft", "section", "area_sqft", "features", "centreline", "geometry"]
    if not rows:
        return gpd.GeoDataFrame({c: [] for c in cols}, geometry="geometry", crs=crs)
    out = gpd.GeoDataFrame(rows, geometry="geometry", crs=crs)
    out["area_sqft"] = area_sqft(out.geometry.to_numpy(), crs)
    return out[cols]
