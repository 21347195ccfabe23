"""One "Do I need a permit?" request: GeoJSON in, the screening's decision and findings out.

The web service's ``screen`` process (:mod:`esc_gis.serve.process`) calls :func:`screen_request`;
so can any program. It is the same engine and profile as ``esc-gis screen``
(:func:`esc_gis.screening.screen`), so the answer equals the command line's for the same
geometry: this module only reads the request, bounds it, and writes the answer as JSON.

A public endpoint takes input from anyone, so every input is bounded before any work starts
(:class:`Limits`: vertices, features, area), only GeoJSON is read (no path, no URL), and every
refusal is a :class:`~esc_gis.errors.RequestError` whose message names the input and the fix.
A polygon far from the Village is not refused: it gets the article's "does not apply", as the
command line gives it, with its areas left unmeasured (they would be measured in a CRS made for
another place).
"""

from __future__ import annotations

__all__ = ["Limits", "ScreenInput", "parse_request", "screen_request", "service_notes"]

import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import shapely
from pyproj import CRS

from esc_gis.crs import FIX_REQUEST, coordinates_not_in_crs_message, coordinates_refusal
from esc_gis.errors import EscGisError, RequestError, ValidationError
from esc_gis.layers import LayerSet
from esc_gis.profile import Profile
from esc_gis.units import SQFT_PER_ACRE
from esc_gis.validate import ACTIVITIES, check_polygons, repair_tolerance_sqft

#: GeoJSON's only CRS (RFC 7946 § 4): longitude and latitude on WGS 84.
GEOJSON_CRS = "OGC:CRS84"
#: The numbers an answer reports for the site, in the order shown.
MEASURED = (
    "disturbed_sqft",
    "disturbed_acres",
    "disturbed_in_jurisdiction_sqft",
    "plan_disturbed_sqft",
    "protective_disturbed_sqft",
    "in_water_sqft",
    "steep_disturbed_sqft",
    "nearest_water_ft",
    # Deprecated, the same number as disturbed_in_jurisdiction_sqft, for one release (it said
    # "village" under every profile); last, so the page never shows it.
    "disturbed_in_village_sqft",
)


@dataclass(frozen=True)
class Limits:
    """The bounds a public request must keep (the toolkit's policy; ``esc-gis serve`` options change them).

    Parameters
    ----------
    body_bytes : int
        Largest request body.
    vertices : int
        Most vertices in the site and the disturbed limits together.
    disturbed_features : int
        Most disturbed-limit polygons.
    site_acres : float
        Largest site screened (a square mile is 640 acres); measured in the measuring CRS,
        so only for sites in the area that CRS is made for.
    seconds : float
        Longest a screening may run before it is stopped.
    """

    body_bytes: int = 1_000_000
    vertices: int = 20_000
    disturbed_features: int = 100
    site_acres: float = 640.0
    seconds: float = 30.0

    def check(self) -> None:
        """Refuse a limit that is not a positive number.

        Raises
        ------
        RequestError
            Naming the limit.
        """
        for name in ("body_bytes", "vertices", "disturbed_features", "site_acres", "seconds"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                msg = f"The service's limit {name} is {value!r}: give a positive number."
                raise RequestError(msg)


@dataclass(frozen=True)
class ScreenInput:
    """A request read and bounded: the site, the disturbed limits and the activity, in lon/lat."""

    site: shapely.Geometry
    disturbed: tuple[shapely.Geometry, ...] | None
    activity: str | None


def _geometries(value: Any, name: str) -> list[shapely.Geometry]:
    """Read a GeoJSON geometry, Feature or FeatureCollection into shapely geometries."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            msg = f"Input {name!r} is not JSON. Fix: give a GeoJSON Polygon, Feature or FeatureCollection."
            raise RequestError(msg) from None
    if not isinstance(value, Mapping):
        msg = f"Input {name!r} is not a GeoJSON object. Fix: give a Polygon, Feature or FeatureCollection."
        raise RequestError(msg)
    kind = value.get("type")
    if kind == "FeatureCollection":
        features = value.get("features")
        if not isinstance(features, list):
            msg = f"Input {name!r} is a FeatureCollection without a list of features."
            raise RequestError(msg)
        return [g for f in features for g in _geometries(f, name)]
    if kind == "Feature":
        return _geometries(value.get("geometry"), name)
    if kind not in ("Polygon", "MultiPolygon"):
        msg = f"Input {name!r} is a GeoJSON {kind!r}: only Polygon and MultiPolygon are screened (an area, not a line)."
        raise RequestError(msg)
    try:
        geom = shapely.from_geojson(json.dumps(dict(value)))
    except (shapely.errors.GEOSException, ValueError, TypeError):
        msg = f"Input {name!r} is not a well-formed GeoJSON {kind}: check its coordinates' nesting."
        raise RequestError(msg) from None
    return [geom]


def _check_geometry(geoms: list[shapely.Geometry], name: str, tolerance_sqft: float = 1.0) -> None:
    """Refuse empty or off-the-globe polygons, and invalid ones a repair would change, saying which and why."""
    if not geoms:
        msg = f"Input {name!r} has no polygon."
        raise RequestError(msg)
    arr = np.asarray(geoms, dtype=object)
    if shapely.is_empty(arr).any():
        msg = f"Input {name!r} has an empty polygon."
        raise RequestError(msg)
    xy = shapely.get_coordinates(arr)
    if not np.isfinite(xy).all():
        msg = (
            f"Input {name!r} has coordinates off the globe (not numbers): GeoJSON is longitude then latitude "
            f"in degrees (RFC 7946). Fix: {FIX_REQUEST}"
        )
        raise RequestError(msg)
    # The command line's check and words (esc_gis.crs), so a file and a request are refused alike.
    bounds = (xy[:, 0].min(), xy[:, 1].min(), xy[:, 0].max(), xy[:, 1].max())
    refusal = coordinates_refusal(bounds, GEOJSON_CRS, what=f"Input {name!r}", fix=FIX_REQUEST)
    if refusal is not None:
        raise RequestError(refusal)
    # The one rule for an invalid polygon (esc_gis.validate.check_polygons), in the command line's
    # words: a repair that keeps the shape drawn is left to the screening (which makes it and
    # says so in a finding); one that would change the area or split it is refused here.
    for i, check in sorted(check_polygons(arr, GEOJSON_CRS, tolerance_sqft=tolerance_sqft).items()):
        if check.refused or shapely.is_empty(check.geometry):
            message, fix = check.problem(GEOJSON_CRS)
            which = f" (polygon {i + 1})" if len(arr) > 1 else ""
            raise RequestError(f"Input {name!r}{which} {message} Fix: {fix}")


def parse_request(data: Mapping[str, Any], limits: Limits, *, profile: Profile | None = None) -> ScreenInput:
    """Read and bound a request's inputs: ``site`` (required), ``disturbed`` and ``activity``.

    Parameters
    ----------
    data : mapping
        The process inputs: ``site`` a GeoJSON Polygon, MultiPolygon, Feature or FeatureCollection
        (one polygon part or several, taken as one site); ``disturbed`` the same, the area to be
        disturbed (default the whole site); ``activity`` a word of the profile's activities.
    limits : Limits
    profile : Profile, optional
        Its ``policy.geometry_repair`` bounds the repair of an invalid polygon (default 1 sq ft).

    Returns
    -------
    ScreenInput

    Raises
    ------
    RequestError
        If an input is missing, not GeoJSON, not a polygon, invalid, off the globe, or past a limit;
        or an unknown input is given (a typo should not be ignored silently).

    Examples
    --------
    >>> req = parse_request({"site": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}}, Limits())
    >>> req.site.geom_type, req.disturbed, req.activity
    ('Polygon', None, None)
    """
    if not isinstance(data, Mapping):
        msg = 'The request\'s inputs are not a JSON object. Fix: send {"inputs": {"site": <GeoJSON>}}.'
        raise RequestError(msg)
    unknown = sorted(set(data) - {"site", "disturbed", "activity"})
    if unknown:
        msg = f"Unknown input(s) {', '.join(map(repr, unknown))}: the inputs are site, disturbed and activity."
        raise RequestError(msg)
    if data.get("site") is None:
        msg = "Input 'site' is missing. Fix: send the site as a GeoJSON Polygon (longitude/latitude)."
        raise RequestError(msg)
    tolerance = 1.0 if profile is None else repair_tolerance_sqft(profile)
    site_parts = _geometries(data["site"], "site")
    _check_geometry(site_parts, "site", tolerance)
    disturbed = None
    if data.get("disturbed") is not None:
        disturbed = _geometries(data["disturbed"], "disturbed")
        _check_geometry(disturbed, "disturbed", tolerance)
        if len(disturbed) > limits.disturbed_features:
            most = limits.disturbed_features
            msg = f"Input 'disturbed' has {len(disturbed):,} polygons; at most {most:,} are screened."
            raise RequestError(msg)
    vertices = int(shapely.get_num_coordinates(np.asarray(site_parts + (disturbed or []), dtype=object)).sum())
    if vertices > limits.vertices:
        msg = (
            f"The request has {vertices:,} vertices; at most {limits.vertices:,} are screened. "
            "Fix: simplify the polygons."
        )
        raise RequestError(msg)
    activity = data.get("activity")
    if activity is not None and (not isinstance(activity, str) or not activity.strip() or len(activity) > 100):
        msg = f"Input 'activity' must be one of {', '.join(ACTIVITIES)}."
        raise RequestError(msg)
    if activity is not None and activity not in ACTIVITIES:
        msg = f"Input 'activity' is {activity[:40]!r}; use one of {', '.join(ACTIVITIES)}."
        raise RequestError(msg)
    if len(site_parts) > 1:
        # Parts united into one site: an invalid one is repaired first, as drawn (refused above otherwise).
        site_parts = [shapely.make_valid(g, method="structure", keep_collapsed=False) for g in site_parts]
    site = shapely.union_all(np.asarray(site_parts, dtype=object)) if len(site_parts) > 1 else site_parts[0]
    return ScreenInput(site, None if disturbed is None else tuple(disturbed), activity)


def _far_from(req: ScreenInput, crs: CRS) -> bool:
    """Tell whether the site and its disturbed limits (lon/lat) all miss the area the measuring CRS is made for."""
    area = crs.area_of_use
    if area is None:
        return False
    parts = [req.site, *(req.disturbed or ())]
    return not shapely.intersects(np.asarray(parts, dtype=object), shapely.box(*area.bounds)).any()


def _refuse_swapped(req: ScreenInput, crs: CRS) -> None:
    """Refuse a site far from the measuring CRS's area that would lie in it with latitude and longitude swapped.

    Winneconne latitude first (44.1, -88.7) is on the globe, near the South Pole, and would be
    answered "does not apply": a wrong answer that looks right. Swapped into the area, it is
    refused with the command line's words and the question.

    Raises
    ------
    RequestError
        If the site swapped lies in the area the measuring CRS is made for.
    """
    area = crs.area_of_use
    if area is None:
        return
    swapped = shapely.transform(req.site, lambda xy: xy[:, ::-1])
    if not shapely.intersects(swapped, shapely.box(*area.bounds)):
        return
    problem = (
        f"they lie far outside the area {crs.name} is made for ({area.name.rstrip('.')}), and with x and y "
        "swapped they lie in it",
        "Most likely latitude was given first: GeoJSON is longitude then latitude (RFC 7946).",
    )
    raise RequestError(
        coordinates_not_in_crs_message("Input 'site'", GEOJSON_CRS, problem, fix=FIX_REQUEST, swapped=True)
    )


def service_notes(
    *, permit: str, jurisdiction: str, activity: str | None, disturbed_given: bool, profile: Profile
) -> list[dict[str, str]]:
    """Return what a public answer adds for a resident, as findings worded by the profile.

    A pure function of the answer: what the screening could not know (a common plan, the
    exclusions it does not ask about), what the office may still decide (§ 540-4A(1)(c) in the
    Village's profile), what comes next when a permit is required, and how the request was read.

    Parameters
    ----------
    permit, jurisdiction : str
        The screening's ``permit`` and ``jurisdiction``.
    activity : str or None
        The activity given, or None when none was.
    disturbed_given : bool
        Whether the area to be disturbed was drawn.
    profile : Profile

    Returns
    -------
    list of dict
        ``{code, section, basis, message}`` of each note, in reading order.

    Raises
    ------
    ProfileError
        If the profile lacks a ``service_*`` finding.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> notes = service_notes(permit="not_required", jurisdiction="inside", activity=None,
    ...                       disturbed_given=True, profile=load_profile())
    >>> for n in notes:
    ...     print(n["code"])
    service_activity_default
    service_common_plan_unknown
    service_may_still_require
    service_exclusions_not_asked
    service_other_permits
    """
    codes: list[tuple[str, dict[str, Any]]] = []
    if activity is None:
        codes.append(("service_activity_default", {}))
    elif activity != "construction":
        codes.append(("service_activity_as_described", {"activity": activity}))
    if not disturbed_given and jurisdiction != "outside":
        codes.append(("service_whole_site_disturbed", {}))
    if jurisdiction != "outside" and permit != "not_applicable":
        codes.append(("service_common_plan_unknown", {}))
    if permit == "not_required":
        codes.append(("service_may_still_require", {}))
    if permit == "required":
        codes.append(("service_next_steps", {}))
    if jurisdiction != "outside":
        # Where the article already does not apply (an exempt activity), an exclusion changes
        # nothing: the note would contradict the answer.
        if permit != "not_applicable":
            codes.append(("service_exclusions_not_asked", {}))
        codes.append(("service_other_permits", {}))
    return [profile.finding(code, **values).to_dict() for code, values in codes]


def _beyond_zone(geoms: list[shapely.Geometry], crs: CRS) -> bool:
    """Tell whether any of ``geoms`` (lon/lat) reaches outside the area the measuring CRS is made for."""
    area = crs.area_of_use
    if area is None:
        return False
    return not bool(shapely.within(np.asarray(geoms, dtype=object), shapely.box(*area.bounds)).all())


def _number(value: Any) -> float | None:
    """Return a finite float, or None for a missing measurement (JSON has no NaN)."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def screen_request(data: Mapping[str, Any], *, layers: LayerSet, profile: Profile, limits: Limits) -> dict[str, Any]:
    """Screen one site from a request's inputs, as ``esc-gis screen`` would.

    Parameters
    ----------
    data : mapping
        The inputs (see :func:`parse_request`).
    layers : LayerSet
        The Village's layers, loaded once by the service.
    profile : Profile
        The ordinance profile.
    limits : Limits

    Returns
    -------
    dict
        JSON-ready: ``permit`` (required, not_required, not_applicable), ``applicability``,
        ``jurisdiction``, ``sediment_standard``, ``standards``, ``findings`` (code, section, basis,
        message; the profile's words), ``run_findings`` (absent layers), ``measured`` (the numbers
        of :data:`MEASURED`, None where not measured), ``measured_note``, ``notes``
        (:func:`service_notes`), ``notice`` (the profile's ``service_notice``) and ``profile``.

    Raises
    ------
    RequestError
        If the inputs are bad or past a limit (:func:`parse_request`), the site is larger than
        ``limits.site_acres``, the polygons reach far outside the measuring CRS's zone so that
        they cannot be measured, or the engine refuses them (an unknown activity), with its words.
    """
    from esc_gis.screening import run_findings, screen

    req = parse_request(data, limits, profile=profile)
    far = _far_from(req, layers.crs)
    if far:
        _refuse_swapped(req, layers.crs)
    sites = gpd.GeoDataFrame(
        {"site_id": ["site"], "activity": [req.activity or "construction"]}, geometry=[req.site], crs=GEOJSON_CRS
    )
    disturbed = None
    if req.disturbed is not None:
        disturbed = gpd.GeoDataFrame(
            {"site_id": ["site"] * len(req.disturbed)}, geometry=list(req.disturbed), crs=GEOJSON_CRS
        )
    # Polygons reaching far past the measuring CRS's zone (a continent drawn as the disturbed area)
    # project to nonsense: no area (NaN), or rings GEOS cannot overlay. Fuzzing the process found
    # both as server errors (tests/test_serve_fuzz.py); they are refused with this, not measured.
    beyond = _beyond_zone([req.site, *(req.disturbed or ())], layers.crs)
    zone = (
        f"The polygons reach far outside the area {layers.crs.name} is made for, where they cannot be "
        "measured. Fix: draw the site and the area to be disturbed where the work is."
    )
    if not far:
        with np.errstate(invalid="ignore"):  # NaN is the answer for such a polygon, refused below
            site_sqft = float(sites.to_crs(layers.crs).geometry.area.iloc[0])
        if not math.isfinite(site_sqft):
            raise RequestError(zone)
        if site_sqft > limits.site_acres * SQFT_PER_ACRE:
            msg = (
                f"The site is {site_sqft / SQFT_PER_ACRE:,.1f} acres; this service screens sites up to "
                f"{limits.site_acres:,g} acres. Fix: draw the site alone, or ask the office to screen a larger area."
            )
            raise RequestError(msg)
    try:
        with warnings.catch_warnings():
            # A site far from the measuring CRS's zone warns; the answer says so in measured_note.
            warnings.simplefilter("ignore")
            result = screen(sites, disturbed=disturbed, layers=layers, profile=profile)
    except shapely.errors.GEOSException:
        if beyond:
            raise RequestError(zone) from None
        raise
    except ValidationError as err:
        if beyond:
            # Polygons reaching past the zone are refused for that (the layers-apart check, which
            # may see them first, names a CRS label a request in lon/lat cannot have wrong).
            raise RequestError(zone) from None
        raise RequestError("; ".join(f"{p.message} {p.fix}".strip() for p in err.problems)) from None
    except EscGisError as err:
        raise RequestError(str(err)) from None
    row = result.iloc[0]
    # A site outside but within the extraterritorial area gets the screening's reading
    # (rules.extraterritorial_ft): the answer is esc-gis screen's, one decision for both.
    findings = json.loads(row["findings"])
    measured = {name: (None if far else _number(row.get(name))) for name in MEASURED}
    note = (
        "Not measured: the site lies outside the area the measuring CRS is made for, far from the Village."
        if far
        else f"Measured in {layers.crs.name}, in US survey feet."
    )
    return {
        "permit": str(row["permit"]),
        "applicability": str(row["applicability"]),
        "jurisdiction": str(row["jurisdiction"]),
        "sediment_standard": bool(row["sediment_standard"]),
        "standards": ""
        if row.get("standards") is None or row.get("standards") != row.get("standards")
        else str(row["standards"]),
        "findings": findings,
        "run_findings": run_findings(result),
        "measured": measured,
        "measured_note": note,
        "notes": service_notes(
            permit=str(row["permit"]),
            jurisdiction=str(row["jurisdiction"]),
            activity=req.activity,
            disturbed_given=req.disturbed is not None,
            profile=profile,
        ),
        "notice": profile.finding("service_notice").message,
        "profile": profile.name,
    }
