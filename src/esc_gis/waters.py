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
  approximates the top of the channel: the channel counts as strip and the strip ends half
  a channel width short of its true edge; screening says so in a finding.
- **Piped streams** (a true ``piped`` flag: a stream enclosed in a pipe or culvert) have no
  strip, as NR 151.125(2) excludes land beside them. They remain waters of the state, so
  the distance to the nearest water still counts them, but their channel is not counted
  as water under a site: the land above a pipe is land.
- **Concentrated-flow channels** are a class only when they drain more than the profile's
  ``min_drainage_acres`` (130 acres, NR 151.125(1)(i)). With a ``drainage_acres`` value at
  or under it the channel has no strip (it stays a water); without a value the class is
  taken as given and :attr:`ProtectiveAreas.channel_class_unverified` says so.
- **Less susceptible wetlands** get 10 % of their average width, at least 10 ft and at most
  30 ft (NR 151.125(1)(f)). The average width of a polygon is ``2 * area / perimeter``: exact
  for a strip of constant width (a 400 x 60 ft wetland: 2 * 24,000 / 920 = 52.2 ft), and a fair
  measure of an elongated wetland. Holes count in the perimeter, as they are wetland edge too.
"""

from __future__ import annotations

__all__ = ["Overlap", "ProtectiveAreas", "buffer_widths_ft", "governing_parts", "protective_areas"]

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import geopandas as gpd
import numpy as np
import shapely

from esc_gis.measure import PolygonIndex, area_sqft, chunk_lines, parallel, unique_pairs
from esc_gis.units import ft_to_crs_units
from esc_gis.validate import read_flags

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


def _flag(waters: gpd.GeoDataFrame, column: str) -> np.ndarray:
    """Return a boolean column of ``waters``, all False when absent (frames built by hand)."""
    if column not in waters:
        return np.zeros(len(waters), bool)
    # A frame built by hand may hold "no" or "0", which numpy would read as True.
    return read_flags(waters[column])[0]


def _channel_class(waters: gpd.GeoDataFrame, profile: Profile) -> tuple[np.ndarray, np.ndarray]:
    """Classes with a minimum drainage area: (at or under it, no value to check).

    Returns two boolean arrays aligned with ``waters``: ``small`` (a ``drainage_acres`` at or
    under the class's ``min_drainage_acres``: not of the class, no strip) and ``unverified``
    (the class has a minimum but the feature no drainage area: taken as given).
    """
    classes = waters["water_class"].to_numpy(dtype=object)
    minimum = np.full(len(waters), np.nan)
    for cls in np.unique(classes):
        v = profile.entry(f"protective_area.{cls}").extra.get("min_drainage_acres")
        if v is not None:
            minimum[classes == cls] = float(v)
    drainage = (
        waters["drainage_acres"].to_numpy(dtype=float) if "drainage_acres" in waters else np.full(len(waters), np.nan)
    )
    ruled = ~np.isnan(minimum)
    with np.errstate(invalid="ignore"):
        small = ruled & (drainage <= minimum)  # "more than 130 acres": 130 itself has no strip
    return small, ruled & np.isnan(drainage)


@dataclass(frozen=True)
class _Shapes:
    """Every feature's width, water shape and buffer, in CRS units."""

    widths_ft: np.ndarray  # 0 where the feature has no strip
    water: np.ndarray
    buffers: np.ndarray  # empty where the feature has no strip
    centreline: np.ndarray  # strip buffered from a line without a channel width
    areal: np.ndarray  # the water shape is a polygon (drawn so, or a channel)
    wet: np.ndarray  # areal and not piped: counts as water under a site
    piped: np.ndarray
    small_channel: np.ndarray
    unverified: np.ndarray


def _shapes(waters: gpd.GeoDataFrame, profile: Profile, crs: CRS) -> _Shapes:
    """Widths from the profile, then each feature's water shape and buffer."""
    piped = _flag(waters, "piped")
    small, unverified = _channel_class(waters, profile)
    strip = ~piped & ~small
    widths_ft = np.where(strip, buffer_widths_ft(waters, profile, crs), 0.0)
    ft = ft_to_crs_units(1.0, crs)
    geoms = waters.geometry.to_numpy()
    areal = np.isin(shapely.get_type_id(geoms), _AREAL)
    half = (
        np.nan_to_num(
            waters["channel_width_ft"].to_numpy(dtype=float) if "channel_width_ft" in waters else np.zeros(len(geoms))
        )
        / 2
        * ft
    )
    half[areal] = 0.0
    channel = ~areal & (half > 0)
    # A line with a channel width becomes its channel: flat ends, so the channel stops where
    # the mapped stream does.
    water = geoms.copy()
    if channel.any():
        water[channel] = parallel(
            partial(shapely.buffer, quad_segs=_QUAD_SEGS, cap_style="flat"), geoms[channel], half[channel]
        )
    # The strip is measured from the top of the channel: half the channel plus the width from
    # the centre line, so the channel's banks are the strip's inner edge (the channel itself
    # is water, cut out by the overlay). Buffering is most of the build: on threads, as GEOS
    # releases the GIL. A water without a strip gets an empty buffer, so no site is said to
    # meet its protective area.
    buffers = np.full(len(geoms), shapely.Polygon(), dtype=object)
    if strip.any():
        buffers[strip] = parallel(
            partial(shapely.buffer, quad_segs=_QUAD_SEGS), geoms[strip], half[strip] + widths_ft[strip] * ft
        )
    wet = (areal | channel) & ~piped
    return _Shapes(
        widths_ft, water, buffers, ~areal & ~channel & strip, areal | channel, wet, piped, small, unverified & ~piped
    )


@dataclass
class Overlap:
    """How each geometry meets the waters and their protective areas.

    Attributes
    ----------
    strip_area : numpy.ndarray of float
        Area inside the protective areas, waters excluded (CRS units squared).
    water_area : numpy.ndarray of float
        Area inside areal waters and channels.
    rows, sources : numpy.ndarray of int
        Unique (geometry index, waters row) pairs whose protective area the geometry meets.
    """

    strip_area: np.ndarray
    water_area: np.ndarray
    rows: np.ndarray
    sources: np.ndarray


@dataclass
class ProtectiveAreas:
    """Each water's own buffer and shape, indexed in small pieces for fast overlays.

    Nothing is dissolved: each geometry loses, one by one, the buffer pieces it meets
    (:meth:`PolygonIndex.uncovered`), so what it lost is its part in the union of the
    buffers. Where buffers of different widths overlap, that union keeps the greatest
    extent, which is the rule (NR 151.125(1)(j)).

    Attributes
    ----------
    buffers : PolygonIndex
        Each feature's buffer (water included); source index = waters row.
    water_polygons : PolygonIndex or None
        The areal waters and channels; None when there are none.
    nearest : shapely.STRtree
        Every water feature in small pieces, for the distance to the nearest water.
    nearest_source : numpy.ndarray
        Waters row of each piece in ``nearest``.
    widths_ft : numpy.ndarray
        Width used for each feature.
    widths_ft : numpy.ndarray
        Width used for each feature; 0 where it has no strip (``piped`` or
        ``small_channel``).
    centreline : numpy.ndarray of bool
        Features whose strip is buffered from a centreline (a line without a channel width).
    piped : numpy.ndarray of bool
        Streams enclosed in a pipe or culvert: no strip, not water under a site, still a
        water for ``nearest``.
    small_channel : numpy.ndarray of bool
        Features of a class with a minimum drainage area (concentrated-flow channels) whose
        ``drainage_acres`` is at or under it: no strip, still a water.
    channel_class_unverified : numpy.ndarray of bool
        Features of such a class with no ``drainage_acres``: the class and its strip are
        taken as given, and screening should say the drainage area was not checked.

    All arrays are aligned with the rows of the waters layer.
    """

    buffers: PolygonIndex
    water_polygons: PolygonIndex | None
    nearest: shapely.STRtree
    nearest_source: np.ndarray
    widths_ft: np.ndarray
    centreline: np.ndarray
    piped: np.ndarray
    small_channel: np.ndarray
    channel_class_unverified: np.ndarray

    def overlap(self, geoms: np.ndarray) -> Overlap:
        """Measure polygonal ``geoms`` (in the same CRS) against the protective areas.

        Parameters
        ----------
        geoms : numpy.ndarray of shapely.Geometry

        Returns
        -------
        Overlap
        """
        geoms = np.asarray(geoms, dtype=object)
        # With B the union of the buffers and W that of the waters, the strip is
        # area(g & B - W) = area(g - W) - area((g - W) - B). Only differences are computed,
        # never a union (see PolygonIndex.uncovered). The buffers are cut from the dry part,
        # so a parcel wholly in a lake costs no buffer overlay (14 % less time on the
        # 100,000-parcel bench), the buffers named are those the dry part meets, and a water
        # without a strip (empty buffer) needs no special case.
        dry = geoms if self.water_polygons is None else self.water_polygons.uncovered(geoms)[0]
        off_buffers, left, right = self.buffers.uncovered(dry)
        area = np.nan_to_num(shapely.area(geoms))
        dry_area = np.nan_to_num(shapely.area(dry))
        strip = dry_area - np.nan_to_num(shapely.area(off_buffers))
        water = area - dry_area
        # Differences of areas leave rounding noise (~1e-16 of the area): never a finding.
        noise = 1e-9 * area
        strip[strip <= noise] = 0.0
        water[water <= noise] = 0.0
        rows, sources = unique_pairs(left, self.buffers.source[right])
        return Overlap(strip, water, rows, sources)


def protective_areas(waters: gpd.GeoDataFrame, profile: Profile, crs: CRS) -> ProtectiveAreas:
    """Build the protective areas of a waters layer, indexed for screening.

    Parameters
    ----------
    waters : geopandas.GeoDataFrame
        ``water_class``, optionally ``channel_width_ft``, ``piped`` and ``drainage_acres``,
        and geometry (polygons or lines), in the measuring CRS ``crs`` (see
        :func:`esc_gis.validate.prepare_waters`).
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
    sh = _shapes(waters, profile, crs)
    water, areal, wet = sh.water, sh.areal, sh.wet
    water_index = PolygonIndex(water[wet]) if wet.any() else None
    if water_index is not None:
        water_index.source = np.flatnonzero(wet)[water_index.source]
    # Distances to lines and polygons alike, in small pieces so the index can prune. Piped
    # channels are waters of the state too: indexed for distance only.
    pieces, source = [], []
    if water_index is not None:
        pieces.append(water_index.pieces)
        source.append(water_index.source)
    dry_channel = areal & ~wet
    if dry_channel.any():
        piped_index = PolygonIndex(water[dry_channel])
        pieces.append(piped_index.pieces)
        source.append(np.flatnonzero(dry_channel)[piped_index.source])
    if (~areal).any():
        lp, ls = chunk_lines(water[~areal])
        pieces.append(lp)
        source.append(np.flatnonzero(~areal)[ls])
    return ProtectiveAreas(
        buffers=PolygonIndex(sh.buffers),
        water_polygons=water_index,
        nearest=shapely.STRtree(np.concatenate(pieces)),
        nearest_source=np.concatenate(source),
        widths_ft=sh.widths_ft,
        centreline=sh.centreline,
        piped=sh.piped,
        small_channel=sh.small_channel,
        channel_class_unverified=sh.unverified,
    )


def governing_parts(waters: gpd.GeoDataFrame, profile: Profile, crs: CRS) -> gpd.GeoDataFrame:
    """Dissolve the protective areas by the class and width that govern each part.

    Where buffers of different widths overlap, the part goes to the greatest width
    (NR 151.125(1)(j)); between equal widths, to the class listed first in the profile.
    The waters themselves are left out, and so are waters without a strip (piped streams,
    channels draining too little: see the module notes).

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
        width there), ``centreline`` (True when measured from centrelines),
        ``channel_class_unverified`` (True when a feature's class needs a drainage area the
        layer does not give) and the dissolved part as a MultiPolygon (even a part in one
        piece), widest first: one geometry type, so GDAL and QGIS declare a GeoJSON or
        GeoParquet of them MultiPolygon, not "Unknown".

    Raises
    ------
    ProfileError
        If a class has no width in the profile.
    """
    sh = _shapes(waters, profile, crs)
    water, buffers, centreline, wet = sh.water, sh.buffers, sh.centreline, sh.wet
    widths_ft = sh.widths_ft
    water_all = shapely.union_all(water[wet]) if wet.any() else shapely.Polygon()
    classes = waters["water_class"].to_numpy(dtype=object)
    rank = {c: k for k, c in enumerate(profile.water_classes())}
    width_key = np.round(widths_ft, 1)
    has_strip = widths_ft > 0
    groups = sorted(
        {(float(w), str(c)) for w, c in zip(width_key[has_strip], classes[has_strip], strict=True)},
        key=lambda wc: (-wc[0], rank.get(wc[1], len(rank))),
    )
    rows, covered = [], shapely.Polygon()
    # One union per (class, width) group, widest first; each keeps only what no wider group
    # has claimed. The loop is over groups (a handful), never over features.
    for w, c in groups:
        m = (width_key == w) & (classes == c) & has_strip
        union = shapely.union_all(buffers[m])
        part = shapely.difference(shapely.difference(union, covered), water_all)
        covered = shapely.union(covered, union)
        if shapely.is_empty(part) or shapely.area(part) == 0:
            continue
        rows.append(
            {
                "water_class": c,
                "width_ft": w,
                "section": profile.entry(f"protective_area.{c}").cite,
                "features": int(m.sum()),
                "centreline": bool(centreline[m].any()),
                "channel_class_unverified": bool(sh.unverified[m].any()),
                "geometry": part,
            }
        )
    cols = [
        "water_class",
        "width_ft",
        "section",
        "area_sqft",
        "features",
        "centreline",
        "channel_class_unverified",
        "geometry",
    ]
    if not rows:
        return gpd.GeoDataFrame({c: [] for c in cols}, geometry="geometry", crs=crs)
    out = gpd.GeoDataFrame(rows, geometry="geometry", crs=crs)
    out["geometry"] = _multipolygons(out.geometry.to_numpy())
    out["area_sqft"] = area_sqft(out.geometry.to_numpy(), crs)
    return out[cols]


def _multipolygons(geoms: np.ndarray) -> np.ndarray:
    """Return each polygonal geometry as a MultiPolygon (a Polygon becomes one of one part).

    A layer mixing Polygon and MultiPolygon is declared "Unknown" by GDAL's GeoJSON driver
    and lists two types in GeoParquet's metadata; a GeoPackage alone promotes it on writing.

    Examples
    --------
    >>> import shapely
    >>> g = _multipolygons(np.array([shapely.box(0, 0, 1, 1), shapely.MultiPolygon([shapely.box(2, 2, 3, 3)])]))
    >>> [x.geom_type for x in g], [len(x.geoms) for x in g]
    (['MultiPolygon', 'MultiPolygon'], [1, 1])
    """
    parts, index = shapely.get_parts(geoms, return_index=True)
    return shapely.multipolygons(parts, indices=index)
