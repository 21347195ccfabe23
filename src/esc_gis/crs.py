"""Coordinate reference systems: assign (``set_crs``) versus transform (``to_crs``).

esc_gis measures in one projected CRS in feet, the profile's or the layer set's measuring
CRS (EPSG:7594, WISCRS Winnebago County ftUS, by default). Data arrive in anything: EPSG:4326
GeoJSON from a web form, EPSG:3857 from a web map, EPSG:3071 from the state. They are
transformed before anything is measured. Data without a CRS are never guessed at: assigning
one is the user's explicit choice (``assume_crs``), and it never overrides a CRS a file has.
"""

from __future__ import annotations

__all__ = [
    "AREA_MARGIN_KM",
    "FIX_LAYER",
    "FIX_RASTER",
    "FIX_REQUEST",
    "ZONE_REACH_KM",
    "assign_crs",
    "check_coordinates",
    "coordinates_not_in_crs_message",
    "coordinates_problem",
    "coordinates_refusal",
    "measuring_crs",
    "parse_crs",
    "reproject",
    "to_measuring_crs",
    "warn_if_far_from_zone",
    "zone_distance_km",
]

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pyproj import CRS, Geod, Transformer
from pyproj.exceptions import CRSError as _PyprojCRSError

from esc_gis.errors import CoordinatesNotInCRSError, CRSError, FarFromZoneWarning, UnitsError
from esc_gis.units import sqft_per_crs_area_unit

if TYPE_CHECKING:
    import geopandas as gpd


def parse_crs(value: Any, *, what: str = "CRS") -> CRS:
    """Parse anything :meth:`pyproj.CRS.from_user_input` accepts.

    Raises
    ------
    CRSError
        If ``value`` names no CRS.

    Examples
    --------
    >>> parse_crs("EPSG:7594").to_epsg()
    7594
    """
    try:
        return CRS.from_user_input(value)
    except _PyprojCRSError:
        msg = f"{what} {value!r} is not a coordinate reference system; use e.g. 'EPSG:7594'."
        raise CRSError(msg) from None


def measuring_crs(value: Any) -> CRS:
    """Return ``value`` as a CRS fit for measuring area and distance.

    Parameters
    ----------
    value : Any
        A CRS, or anything that names one.

    Returns
    -------
    pyproj.CRS
        The CRS itself; the horizontal part of a compound CRS (a grid plus heights).

    Raises
    ------
    CRSError
        If the CRS (the horizontal part of a compound one) is geographic (degrees), a normal
        Mercator projection (EPSG:3857 inflates area about 1.94 times at 44° N), or has no
        single linear unit. Transverse and oblique Mercator grids (WISCRS, UTM, WTM, EPSG:3078
        Michigan Oblique Mercator, EPSG:26931 Alaska zone 1) are conformal local grids whose
        scale stays within a few parts in ten thousand of true: they are accepted.

    Examples
    --------
    >>> measuring_crs("EPSG:3857")
    Traceback (most recent call last):
    ...
    esc_gis.errors.CRSError: EPSG:3857 is a Mercator projection ...
    """
    given = parse_crs(value, what="Measuring CRS")
    # A compound CRS (a grid plus heights, EPSG:7594+5703) measures in its horizontal part:
    # that part is judged, and returned, so a Web Mercator grid with heights is refused too.
    crs = _horizontal(given)
    name = given.to_string() if given.is_compound else crs.to_string()
    if not crs.is_projected:
        msg = (
            f"{name} is not projected: areas and distances are never measured in degrees. "
            "Use a projected CRS in feet, e.g. EPSG:7594 (WISCRS Winnebago County, ftUS)."
        )
        raise CRSError(msg)
    # A CRS bound to WGS 84 (+towgs84) names its datum shift as its operation: judge its projection.
    op = (crs.source_crs if crs.is_bound and crs.source_crs is not None else crs).coordinate_operation
    method = op.method_name.lower() if op is not None else ""
    # Transverse and oblique Mercator are conformal local grids (WISCRS, UTM, WTM) and fine;
    # the cylindrical Mercator family (incl. Web Mercator) inflates area away from the equator.
    if "mercator" in method and "transverse" not in method and "oblique" not in method:
        msg = (
            f"{name} is a Mercator projection ({method}): it misstates area (Web "
            "Mercator reads about 1.94x large at 44° N). Use EPSG:7594 or another local CRS."
        )
        raise CRSError(msg)
    try:
        sqft_per_crs_area_unit(crs)
    except UnitsError as exc:
        raise CRSError(str(exc)) from None
    return crs


def assign_crs(gdf: gpd.GeoDataFrame, *, assume_crs: Any | None, source: str) -> gpd.GeoDataFrame:
    """Assign ``assume_crs`` to a layer that has no CRS; never transform, never override.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        The layer as read.
    assume_crs : Any, optional
        The CRS the user says the coordinates are in.
    source : str
        The file name, for the message.

    Returns
    -------
    geopandas.GeoDataFrame
        ``gdf`` itself when it has a CRS, else a copy with ``assume_crs`` set.

    Raises
    ------
    CRSError
        If the layer has no CRS and none was assumed.
    CoordinatesNotInCRSError
        If the coordinates cannot be in the assumed CRS (:func:`check_coordinates`).
    """
    if gdf.crs is not None:
        return gdf
    if assume_crs is None:
        msg = (
            f"{source} has no coordinate reference system (no .prj or CRS in the file), so its "
            "coordinates cannot be placed on the ground. Fix: tell esc-gis what they are with "
            'assume_crs="EPSG:XXXX" (e.g. EPSG:7594 for Winnebago County feet, EPSG:4326 for '
            "longitude/latitude), or define the CRS in your GIS and export again."
        )
        raise CRSError(msg)
    crs = parse_crs(assume_crs, what="assume_crs=")
    # An assumed CRS is believed only where the numbers allow it, as a file's own is (read_layer).
    check_coordinates(gdf.total_bounds, crs, what=source)
    return gdf.set_crs(crs)


def to_measuring_crs(gdf: gpd.GeoDataFrame, crs: CRS) -> gpd.GeoDataFrame:
    """Transform a layer into the measuring CRS (a no-op when it is already there).

    Raises
    ------
    CRSError
        If the layer has no CRS (assign one first with :func:`assign_crs`).
    """
    if gdf.crs is None:
        msg = "Layer has no CRS; assign one with assign_crs(..., assume_crs=...) before measuring."
        raise CRSError(msg)
    if gdf.crs == crs:
        return gdf
    return gdf.to_crs(crs)


def reproject(geoms: np.ndarray, src: CRS, dst: CRS) -> np.ndarray:
    """Return ``geoms`` (an array of shapely geometries in ``src``) in ``dst``; themselves when the CRSs are equivalent.

    geopandas transforms unless the two are *exactly* the same, and a GeoTIFF's CRS never is
    the same object as its EPSG code (its WKT names things its own way): a DEM in the
    measuring CRS cost a full transform of every site in every batch, a tenth of the steep
    slope measure, to move nothing.

    Raises
    ------
    pyproj.exceptions.CRSError
        If no transformation between the two exists.
    """
    if src == dst:
        return geoms
    import geopandas as gpd

    return gpd.GeoSeries(geoms, crs=src).to_crs(dst).to_numpy()


#: Data farther than this outside the measuring CRS's area of use draw a warning. A county
#: zone (WISCRS) is about 50 km across; 50 km beyond it a transverse Mercator grid's scale
#: error is still under 0.01 %, so neighbouring counties pass and another state does not.
ZONE_REACH_KM = 50.0

_GEOD = Geod(ellps="WGS84")
_KM_PER_MILE = 1.609344


def _horizontal(crs: CRS) -> CRS:
    """Return the horizontal part of a compound CRS (a grid plus heights); any other CRS itself."""
    return crs.sub_crs_list[0] if crs.is_compound and crs.sub_crs_list else crs


def _usable_area(aou: Any) -> Any:
    """Return ``aou`` when its box is a box on the globe; None otherwise.

    A WKT whose USAGE names an area without a BBOX gives pyproj's placeholder box
    (-1000, -1000, -1000, -1000): judged as a box, it put every datum NaN km away.
    """
    if aou is None:
        return None
    try:
        w, s, e, n = (float(aou.west), float(aou.south), float(aou.east), float(aou.north))
    except (AttributeError, TypeError, ValueError):
        return None
    on_globe = all(math.isfinite(v) for v in (w, s, e, n)) and max(abs(w), abs(e)) <= 180 and max(abs(s), abs(n)) <= 90
    return aou if on_globe and s <= n else None


def _area_of_use(crs: CRS) -> Any:
    """Return the CRS's area of use (its horizontal part's), looking its code up when the WKT left it out.

    A GeoTIFF's WKT and a WKT without a BBOX leave it out; a custom CRS (a PROJ string, a
    WKT of no code) has none, and None is returned: nothing can be judged by it.
    """
    crs = _horizontal(crs)
    own = _usable_area(crs.area_of_use)
    if own is not None:
        return own
    try:
        code = crs.to_epsg(min_confidence=70)
        return None if code is None else _usable_area(CRS.from_epsg(code).area_of_use)
    except Exception:  # pyproj cannot identify it: no area to judge by
        return None


def _area_name(aou: Any) -> str:
    """Return the area's name for a message (pyproj leaves it None or 'undefined' when the WKT gave none)."""
    name = str(getattr(aou, "name", None) or "").strip().rstrip(".")
    return name if name and name.lower() != "undefined" else "its area of use"


def zone_distance_km(bounds: Sequence[float], bounds_crs: Any, crs: CRS) -> float | None:
    """Return how far data lie outside ``crs``'s area of use, in kilometres (0 when they meet it).

    Parameters
    ----------
    bounds : sequence of float
        ``(minx, miny, maxx, maxy)`` of the data, in ``bounds_crs``.
    bounds_crs : Any
        The CRS the bounds are in (the data's own, not yet transformed).
    crs : pyproj.CRS
        The measuring CRS.

    Returns
    -------
    float or None
        The geodesic distance between the nearest points of the data's and the area of
        use's longitude/latitude boxes; None when the CRS declares no area of use or the
        bounds cannot be placed.

    Raises
    ------
    CRSError
        If ``bounds_crs`` names no CRS.

    Examples
    --------
    >>> zone_distance_km((-88.8, 44.1, -88.7, 44.2), "EPSG:4326", CRS("EPSG:7594"))
    0.0
    >>> round(zone_distance_km((-113.2, 37.1, -112.8, 37.5), "EPSG:4326", CRS("EPSG:7594")), -2)
    2100.0
    """
    aou = _area_of_use(crs)
    if aou is None:
        return None
    box = _lonlat_box(bounds, parse_crs(bounds_crs))
    return None if box is None else _box_km(box, aou)


def _lonlat_box(bounds: Sequence[float], src: CRS) -> tuple[float, float, float, float] | None:
    """Return ``bounds`` (in ``src``) as a WGS 84 ``(west, south, east, north)`` box.

    None when they cannot be placed.
    """
    if len(bounds) != 4 or not all(math.isfinite(float(b)) for b in bounds):
        return None
    try:
        to_lonlat = Transformer.from_crs(src, CRS("EPSG:4326"), always_xy=True)
        x0, y0, x1, y1 = (float(b) for b in bounds)
        w, s, e, n = to_lonlat.transform_bounds(x0, y0, x1, y1, densify_pts=21)
    except Exception:  # bounds pyproj cannot place are not this check's to judge
        return None
    if not all(math.isfinite(v) for v in (w, s, e, n)):
        return None
    return w, s, e, n


def _box_km(box: tuple[float, float, float, float], aou: Any) -> float:
    """Return the geodesic distance in km between the nearest points of a lon/lat box and an area of use."""
    w, s, e, n = box
    # The nearest points of two lon/lat boxes: where they overlap on an axis, any common value.
    if e < aou.west:
        x_data, x_zone = e, aou.west
    elif w > aou.east:
        x_data, x_zone = w, aou.east
    else:
        x_data = x_zone = max(w, aou.west)
    if n < aou.south:
        y_data, y_zone = n, aou.south
    elif s > aou.north:
        y_data, y_zone = s, aou.north
    else:
        y_data = y_zone = max(s, aou.south)
    if x_data == x_zone and y_data == y_zone:
        return 0.0
    _, _, metres = _GEOD.inv(x_data, y_data, x_zone, y_zone)
    return float(metres) / 1000.0


def warn_if_far_from_zone(bounds: Sequence[float], bounds_crs: Any, crs: CRS, *, what: str) -> float | None:
    """Warn (:class:`~esc_gis.errors.FarFromZoneWarning`) when data lie far outside the measuring CRS's zone.

    A local grid such as WISCRS Winnebago County measures true only near its county: a DEM
    from Utah measured there is distorted by percents, and is most likely the wrong file or
    the wrong layer set. Nothing is refused; the user is told the distance and the fix.

    Parameters
    ----------
    bounds : sequence of float
        ``(minx, miny, maxx, maxy)`` in ``bounds_crs``.
    bounds_crs : Any
        The data's own CRS.
    crs : pyproj.CRS
        The measuring CRS.
    what : str
        The data, for the message (``"DEM dem.tif"``, ``"sites sites.gpkg"``).

    Returns
    -------
    float or None
        The distance outside the zone in km, as :func:`zone_distance_km`.

    Raises
    ------
    CRSError
        If ``bounds_crs`` names no CRS.
    """
    km = zone_distance_km(bounds, bounds_crs, crs)
    if km is not None and km > ZONE_REACH_KM:
        aou = _area_of_use(crs)
        msg = (
            f"{what} lies {km:,.0f} km ({km / _KM_PER_MILE:,.0f} mi) outside the area the measuring CRS "
            f"{crs.name} is made for ({_area_name(aou) if aou else 'its zone'}): areas and distances measured there "
            "are distorted, and the data are probably not of this place. Fix: use a layer set (crs = ...) "
            "and profile for the data's area, or check that this is the right file and that its CRS is right."
        )
        warnings.warn(msg, FarFromZoneWarning, stacklevel=2)
    return km


#: Data farther than this outside the area of use of *their own* CRS are refused: the label
#: cannot be true. Ten times the warning's reach (:data:`ZONE_REACH_KM`) and the width of
#: Wisconsin: no neighbouring county or zone is that far, so only data of another region
#: or numbers in another unit or CRS land there. (A layer that overlaps the area at all,
#: a statewide layer in a county grid, is 0 km outside and passes.)
AREA_MARGIN_KM = 500.0

#: The fix for a vector layer whose coordinates cannot be in its CRS.
FIX_LAYER = (
    "give the data their true CRS: set it (assign, do not reproject) in your GIS and export again, "
    "e.g. ogr2ogr -a_srs EPSG:7594 fixed.gpkg <file>; for a file without a CRS (no .prj, a GeoJSON "
    'without its crs member read as degrees), export it without the wrong one and give assume_crs="EPSG:XXXX" '
    "(e.g. EPSG:7594 for Winnebago County feet)."
)
#: The fix for a raster (a DEM, a soil grid) whose coordinates cannot be in its CRS.
FIX_RASTER = (
    "give the raster its true CRS (assign, do not warp): gdal_edit.py -a_srs EPSG:XXXX <file> "
    "(e.g. EPSG:7594 for Winnebago County feet), and try again."
)
#: The fix for a web request (GeoJSON is longitude/latitude only).
FIX_REQUEST = "send WGS 84 longitude/latitude, longitude first (RFC 7946), not projected feet or metres."

_CAUSE_PROJECTED = (
    "Most likely they are projected coordinates (feet or metres) given without their CRS or with a wrong one: "
    "a GeoJSON whose crs member was dropped is read as longitude/latitude in degrees (RFC 7946)."
)
_CAUSE_DEGREES = (
    "Most likely they are longitude/latitude in degrees labelled with a projected CRS (a wrong .prj or label)."
)
_CAUSE_AREA = (
    "Most likely the data are labelled with the wrong CRS (another zone, or another unit: feet read as "
    "metres), or given without their CRS."
)
_SWAP = "Did you swap them? Longitude (x) comes first, latitude (y) second."


def _span(bounds: Sequence[float]) -> str:
    x0, y0, x1, y1 = (float(b) for b in bounds)
    return f"x from {x0:,.6g} to {x1:,.6g}, y from {y0:,.6g} to {y1:,.6g}"


def coordinates_problem(bounds: Sequence[float], crs: Any) -> tuple[str, str] | None:
    """Say why coordinates cannot be in ``crs``: what is wrong and its likely cause; None when they can be.

    The one decision behind :func:`check_coordinates` and the web service's refusal. Refused:
    a geographic CRS with coordinates off the globe (|longitude| > 180 or |latitude| > 90);
    a projected CRS with data more than :data:`AREA_MARGIN_KM` outside its area of use, or
    more than :data:`ZONE_REACH_KM` outside it when every number would fit as degrees
    (longitude/latitude under a projected label land near the grid's false origin, a few
    hundred km off). A geographic CRS's area of use is not judged: degrees labelled NAD 83
    instead of WGS 84 are misplaced by a metre or two, not refused. Unknown areas, empty
    layers (NaN bounds) and coordinates pyproj cannot place pass, as nothing can be judged.

    Parameters
    ----------
    bounds : sequence of float
        ``(minx, miny, maxx, maxy)`` in ``crs``.
    crs : Any
        The CRS the coordinates are labelled with.

    Returns
    -------
    tuple of str or None
        ``(what is wrong, likely cause)``.

    Raises
    ------
    CRSError
        If ``crs`` names no CRS.

    Examples
    --------
    >>> coordinates_problem((744700, 503200, 744800, 503300), "EPSG:4326")[0][:30]
    'they are off the globe (x from'
    >>> coordinates_problem((-88.8, 44.1, -88.7, 44.2), "EPSG:4326") is None
    True
    """
    if len(bounds) != 4 or not all(math.isfinite(float(b)) for b in bounds):
        return None
    src = parse_crs(crs)
    horizontal = _horizontal(src)
    x0, y0, x1, y1 = (float(b) for b in bounds)
    if horizontal.is_geographic:
        if max(abs(x0), abs(x1)) > 180 or max(abs(y0), abs(y1)) > 90:
            what = (
                f"they are off the globe ({_span(bounds)}; longitude runs from -180 to 180 and latitude from -90 to 90)"
            )
            return what, _CAUSE_PROJECTED
        return None
    aou = _area_of_use(horizontal)
    box = _lonlat_box(bounds, horizontal)
    if aou is None or box is None:
        return None
    km = _box_km(box, aou)
    degrees = max(abs(x0), abs(x1)) <= 180 and max(abs(y0), abs(y1)) <= 90
    if km > (ZONE_REACH_KM if degrees else AREA_MARGIN_KM):
        what = (
            f"they lie {km:,.0f} km ({km / _KM_PER_MILE:,.0f} mi) outside the area {horizontal.name} is made "
            f"for ({_area_name(aou)}; {_span(bounds)})"
        )
        return what, _CAUSE_DEGREES if degrees else _CAUSE_AREA
    return None


def coordinates_not_in_crs_message(
    what: str, crs_name: str, problem: tuple[str, str], *, fix: str, swapped: bool = False
) -> str:
    """Word the refusal of coordinates that cannot be in their CRS: the one text the CLI and the service give.

    Parameters
    ----------
    what : str
        The input (a file name, ``Input 'site'``).
    crs_name : str
        The CRS it is labelled with.
    problem : tuple of str
        As :func:`coordinates_problem` returns.
    fix : str
        :data:`FIX_LAYER`, :data:`FIX_RASTER` or :data:`FIX_REQUEST`.
    swapped : bool, default False
        Swapping x and y would place them: ask whether they were swapped.

    Returns
    -------
    str
    """
    text = f"{what} has coordinates that cannot be in its CRS {crs_name}: {problem[0]}. {problem[1]}"
    if swapped:
        text += f" {_SWAP}"
    return f"{text} Fix: {fix}"


def coordinates_refusal(bounds: Sequence[float], crs: Any, *, what: str, fix: str = FIX_LAYER) -> str | None:
    """Return the message refusing coordinates that cannot be in ``crs``; None when they can be.

    The decision (:func:`coordinates_problem`) and its words in one place, for the readers
    (:func:`check_coordinates`) and the web service alike; it asks whether latitude and
    longitude were swapped when degrees swapped would be on the globe.

    Parameters
    ----------
    bounds, crs, what, fix
        As :func:`check_coordinates`.

    Returns
    -------
    str or None

    Raises
    ------
    CRSError
        If ``crs`` names no CRS.
    """
    problem = coordinates_problem(bounds, crs)
    if problem is None:
        return None
    x0, y0, x1, y1 = (float(b) for b in bounds)
    src = parse_crs(crs)
    # Only degrees are swapped in practice (latitude first, as spoken); a projected grid's
    # numbers swapped are as far off as before, and the question would mislead.
    swapped = _horizontal(src).is_geographic and coordinates_problem((y0, x0, y1, x1), src) is None
    return coordinates_not_in_crs_message(what, _crs_label(src), problem, fix=fix, swapped=swapped)


def _crs_label(crs: CRS) -> str:
    """Name a CRS in a message: its code (EPSG:7594, EPSG:7594+5703) or its name, never a page of WKT."""
    text = crs.to_string()
    if not text.lstrip().upper().startswith(("COMPD_CS", "COMPOUNDCRS", "PROJCS", "GEOGCS", "PROJCRS", "GEOGCRS")):
        return text
    parts = [_horizontal(crs), *crs.sub_crs_list[1:]] if crs.is_compound else [crs]
    codes = [p.to_epsg(min_confidence=90) for p in parts]
    if all(codes):
        return "EPSG:" + "+".join(str(c) for c in codes)
    return crs.name or text


def check_coordinates(bounds: Sequence[float], crs: Any, *, what: str, fix: str = FIX_LAYER) -> None:
    """Refuse coordinates that cannot be in the CRS they are labelled with (:func:`coordinates_problem`).

    Called by every reader of data (:func:`esc_gis.io.read_layer`, :func:`assign_crs`,
    :func:`esc_gis.terrain.dem.open_dem`), so no command measures feet as degrees.

    Parameters
    ----------
    bounds : sequence of float
        ``(minx, miny, maxx, maxy)`` in ``crs``.
    crs : Any
        The CRS the data are labelled with.
    what : str
        The data, for the message (the file name).
    fix : str, default FIX_LAYER
        The fix to name.

    Raises
    ------
    CoordinatesNotInCRSError
        If they cannot be in it.
    CRSError
        If ``crs`` names no CRS.
    """
    msg = coordinates_refusal(bounds, crs, what=what, fix=fix)
    if msg is not None:
        raise CoordinatesNotInCRSError(msg)
