"""Measure: each site's disturbance, jurisdiction, common plan, waters, steep slopes and targeted areas.

The second stage of a screening (read -> measure -> decide -> write): :func:`measure` takes the
sites :func:`esc_gis.screening.read.read_run` read and gives the
:class:`esc_gis.rules.Measurements` the rules decide on, every site at once (vectorised).
"""

from __future__ import annotations

__all__ = ["Measured", "measure"]

import hashlib
import math
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from esc_gis.layers import LayerSet
from esc_gis.measure import (
    PolygonIndex,
    area_sqft,
    clip_to_region,
    edge_distance_within,
    nearest_distance,
    union_by_group,
)
from esc_gis.profile import Profile
from esc_gis.rules import Measurements, counts_toward_plan, extraterritorial_ft
from esc_gis.terrain import steep_area
from esc_gis.units import ft_to_crs_units, sqft_per_crs_area_unit
from esc_gis.validate import REPAIRED_COLUMN
from esc_gis.waters import ProtectiveAreas, protective_areas

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyproj import CRS

    from esc_gis.screening.read import ReadRun


def _labels(pairs: tuple[np.ndarray, np.ndarray], labels: np.ndarray, n: int) -> np.ndarray:
    """Join the labels hit by each row ('A, B'); None where nothing was hit."""
    out = np.full(n, None, dtype=object)
    rows, src = pairs
    if len(rows):
        # Names are text in the output (a layer's numeric name field too); a missing one is blank.
        text = np.array([v if isinstance(v, str) else "" if pd.isna(v) else str(v) for v in labels], dtype=object)
        df = pd.DataFrame({"row": rows, "label": text[src]}).drop_duplicates()
        many = np.bincount(df["row"].to_numpy(), minlength=n) > 1
        one = ~many[df["row"].to_numpy()]
        # Most rows hit one label: set directly; only the others are joined (in the order hit).
        out[df["row"].to_numpy()[one]] = df["label"].to_numpy()[one]
        if many.any():
            joined = df[~one].groupby("row", sort=True)["label"].agg(", ".join)
            out[joined.index.to_numpy()] = joined.to_numpy()
    return out


@dataclass
class _Disturbance:
    geoms: np.ndarray  # each site's disturbance: the union of its limits, or the site without them
    sqft: np.ndarray
    parts_sqft: np.ndarray
    outside_site_sqft: np.ndarray
    count: np.ndarray  # the limits drawn for the site (0: none, its whole site taken)
    limits: np.ndarray  # the union of the limits drawn (empty where none: written as null, never the site)


@dataclass
class _Jurisdiction:
    state: np.ndarray  # inside, partial, outside
    inside: np.ndarray  # the disturbance inside the boundary
    inside_sqft: np.ndarray
    gap_ft: np.ndarray  # how far a site outside lies from the boundary (NaN inside, or not measured)


@dataclass
class _Plans:
    ids: np.ndarray
    whole_sqft: np.ndarray
    inside_sqft: np.ndarray
    count: np.ndarray
    excluded_sqft: np.ndarray
    outside_sites: np.ndarray  # object: the plan's sites partly or wholly outside, by id; None


#: How many of a plan's sites outside the jurisdiction its finding names (then "...").
_OUTSIDE_NAMED = 10


@dataclass
class _Waters:
    protective_sqft: np.ndarray
    in_water_sqft: np.ndarray
    nearest_ft: np.ndarray
    nearest_label: np.ndarray
    protective_label: np.ndarray
    from_centreline: np.ndarray
    channel_unverified: np.ndarray


def _measure_disturbance(inp: ReadRun, crs: CRS) -> _Disturbance:
    """Measure the union of each site's disturbed limits (§ 540-5: overlaps count once); the site without them.

    A site that no polygon of the limits names is taken as disturbed whole, as a run without
    limits takes every site (the ``--disturbed`` default): nobody measured its disturbance, and
    0 sq ft would decide it "not required" on a number nobody gave. Its finding
    (``no_disturbed_limits``, basis policy) says so; its ``limits`` stay empty.
    """
    site_geoms = inp.sites.geometry.to_numpy()
    n = len(site_geoms)
    site_sqft = area_sqft(site_geoms, crs)
    if inp.disturbed is None:
        empty = np.full(n, shapely.Polygon(), dtype=object)
        return _Disturbance(site_geoms, site_sqft, site_sqft.copy(), np.zeros(n), np.ones(n, int), empty)
    ids = inp.sites["site_id"].to_numpy(dtype=object)
    dgeoms = inp.disturbed.geometry.to_numpy()
    keys, unions, counts = union_by_group(dgeoms, inp.disturbed["site_id"].to_numpy(dtype=object))
    pos = pd.Index(ids).get_indexer(keys)
    limits = np.full(n, shapely.Polygon(), dtype=object)
    limits[pos] = unions
    count = np.zeros(n, int)
    count[pos] = counts
    site_pos = pd.Index(ids).get_indexer(inp.disturbed["site_id"].to_numpy(dtype=object))
    parts = np.bincount(site_pos, weights=area_sqft(dgeoms, crs), minlength=n)
    outside = area_sqft(shapely.difference(limits, site_geoms), crs)
    missing = count == 0
    geoms = np.where(missing, site_geoms, limits)
    sqft = np.where(missing, site_sqft, area_sqft(limits, crs))
    parts = np.where(missing, site_sqft, parts)
    return _Disturbance(geoms, sqft, parts, outside, count, limits)


def _jurisdiction(
    site_geoms: np.ndarray, dist: _Disturbance, boundary: Any, crs: CRS, sliver_sqft: float, reach_ft: float
) -> _Jurisdiction:
    """Class each site inside, partial or outside the boundary (§ 540-4B).

    Decided on the disturbance, which is what the article regulates; a site with no
    disturbance is placed by its own polygon. Boundary slivers (the same line digitised
    twice) do not make a site partial. A site outside is measured from the boundary, by the
    same geometry, when the profile has an extraterritorial area (``reach_ft`` finite: see
    :func:`esc_gis.rules.extraterritorial_ft`).
    """
    no_dist = dist.sqft == 0
    test_geoms = np.where(no_dist, site_geoms, dist.geoms)
    test_inside, state = clip_to_region(test_geoms, boundary)
    test_sqft = area_sqft(test_geoms, crs)
    test_in_sqft = area_sqft(test_inside, crs)
    jurisdiction = np.where(
        (state == 0) | (test_in_sqft <= sliver_sqft),
        "outside",
        np.where((state == 2) | (test_sqft - test_in_sqft <= sliver_sqft), "inside", "partial"),
    ).astype(object)
    inside = np.where(no_dist, shapely.Polygon(), test_inside)
    gap = np.full(len(test_geoms), np.nan)
    outside = jurisdiction == "outside"
    if math.isfinite(reach_ft) and outside.any():
        # Only a site within the reach needs its distance (the rules compare it with the reach
        # and word it); one beyond is measured inf, which the rules take as beyond it.
        ft = ft_to_crs_units(1.0, crs)
        with np.errstate(invalid="ignore"):
            gap[outside] = edge_distance_within(test_geoms[outside], boundary, reach_ft * ft) / ft
    return _Jurisdiction(jurisdiction, inside, np.where(no_dist, 0.0, test_in_sqft), gap)


def _plans(gdf: gpd.GeoDataFrame, dist: _Disturbance, jur: _Jurisdiction, crs: CRS) -> _Plans:
    """Add disturbance up over each common plan (§ 540-5), whole and inside the boundary.

    Exempt agricultural and silviculture activity (§ 540-4A(2)) is left out of the totals.
    """
    n = len(gdf)
    # pandas may hold missing text as NaN or None: normalise to None once, here.
    has_plan = gdf["plan_id"].notna().to_numpy()
    ids = gdf["plan_id"].to_numpy(dtype=object).copy()
    ids[~has_plan] = None
    whole, inside = dist.sqft.copy(), jur.inside_sqft.copy()
    count, excluded = np.ones(n, int), np.zeros(n)
    outside_sites = np.full(n, None, dtype=object)
    if has_plan.any():
        counts_in = counts_toward_plan(gdf["activity"].to_numpy(dtype=object))
        empty = shapely.Polygon()
        rows = np.flatnonzero(has_plan)
        keys, whole_u, counts = union_by_group(np.where(counts_in, dist.geoms, empty)[rows], ids[rows])
        _, inside_u, _ = union_by_group(np.where(counts_in, jur.inside, empty)[rows], ids[rows])
        k = pd.Index(keys).get_indexer(ids[rows])
        whole[rows], inside[rows], count[rows] = area_sqft(whole_u, crs)[k], area_sqft(inside_u, crs)[k], counts[k]
        left_out = np.bincount(k, weights=np.where(counts_in[rows], 0.0, dist.sqft[rows]), minlength=len(keys))
        excluded[rows] = left_out[k]
        # The sites whose counted disturbance lies partly or wholly outside: a plan across the
        # Village line names them in its finding (rules.plan_outside_sqft decides whether it is one).
        out_rows = rows[counts_in[rows] & (jur.state[rows] != "inside")]
        site_ids = gdf["site_id"].to_numpy(dtype=object)
        by_plan: dict[Any, list[str]] = {}
        for r in out_rows.tolist():
            by_plan.setdefault(ids[r], []).append(str(site_ids[r]))
        text = {
            p: ", ".join(v[:_OUTSIDE_NAMED]) + (", ..." if len(v) > _OUTSIDE_NAMED else "") for p, v in by_plan.items()
        }
        outside_sites[rows] = [text.get(ids[r]) for r in rows.tolist()]
    return _Plans(ids, whole, inside, count, excluded, outside_sites)


#: The protective areas last built, with what they were built from: a streamed run's batches
#: share one layer set and profile, and rebuilding them per batch cost 0.4 s each at a county's
#: 10,000 waters. The waters are matched by content (a hash of their rows and shapes, 10 ms
#: there), so waters changed in place are built anew; the profile (frozen) by identity.
_BUILT: list[tuple[bytes, weakref.ref[Any], str, ProtectiveAreas]] = []


def _fingerprint(waters: gpd.GeoDataFrame) -> bytes:
    """Return a hash of the waters' rows and shapes."""
    h = hashlib.blake2b(digest_size=16)
    fields = waters.drop(columns=waters.geometry.name)
    h.update(pd.util.hash_pandas_object(fields, index=True).to_numpy().tobytes())
    h.update(b"".join(shapely.to_wkb(waters.geometry.to_numpy()).tolist()))
    return h.digest()


def _protective_areas(waters: gpd.GeoDataFrame, prof: Profile, crs: CRS) -> ProtectiveAreas:
    """Return :func:`protective_areas` of these waters, built once for a run's batches."""
    key, wkt = _fingerprint(waters), crs.to_wkt()
    for w_key, p_ref, w_crs, built in _BUILT:
        if w_key == key and p_ref() is prof and w_crs == wkt:
            return built
    pa = protective_areas(waters, prof, crs)
    _BUILT[:] = [(key, weakref.ref(prof), wkt, pa)]
    return pa


def _waters(ls: LayerSet, prof: Profile, dist: _Disturbance, jur: _Jurisdiction, crs: CRS) -> _Waters:
    """Disturbance in waters and in their protective areas, and the distance to the nearest water."""
    n = len(dist.sqft)
    nan = np.full(n, np.nan)
    none = np.full(n, None, dtype=object)
    if ls.waters is None or not len(ls.waters):
        return _Waters(nan, nan.copy(), nan.copy(), none, none.copy(), np.zeros(n, bool), none.copy())
    w = ls.waters
    pa = _protective_areas(w, prof, crs)
    sqft_factor = sqft_per_crs_area_unit(crs)
    ov = pa.overlap(jur.inside)
    prot_sqft = ov.strip_area * sqft_factor
    d, j = nearest_distance(dist.geoms, pa.nearest)
    names = w["water_name"].to_numpy(dtype=object)
    classes = w["water_class"].to_numpy(dtype=object)
    base = np.array([nm if nm else cls for nm, cls in zip(names, classes, strict=True)], dtype=object)
    near_label = none.copy()
    hit = j >= 0
    near_label[hit] = base[pa.nearest_source[j[hit]]]
    full = np.array(
        [f"{b} ({c}, {wd:g} ft)" for b, c, wd in zip(base, classes, pa.widths_ft, strict=True)], dtype=object
    )
    keep = (prot_sqft > 0)[ov.rows]
    rows, src = ov.rows[keep], ov.sources[keep]
    from_line = np.zeros(n, bool)
    # Strips measured from a hydrography centreline only approximate the top of channel.
    from_line[rows[pa.centreline[src]]] = True
    unverified = getattr(pa, "channel_class_unverified", None)
    channel = none.copy()
    if unverified is not None and np.any(unverified):
        u = np.asarray(unverified, bool)[src]
        channel = _labels((rows[u], src[u]), base, n)
    return _Waters(
        prot_sqft,
        ov.water_area * sqft_factor,
        d / ft_to_crs_units(1.0, crs),
        near_label,
        _labels((rows, src), full, n),
        from_line,
        channel,
    )


def _terrain(ls: LayerSet, prof: Profile, jur: _Jurisdiction, crs: CRS) -> tuple[np.ndarray, np.ndarray]:
    """Disturbance on slopes at or above the profile's steep threshold, and the part off the DEM."""
    n = len(jur.inside)
    if ls.dem is None:
        return np.full(n, np.nan), np.full(n, np.nan)
    sa = steep_area(jur.inside, crs, ls.dem, threshold_pct=float(prof.entry("thresholds.steep_slope").value or 20))
    return sa.steep_sqft, sa.uncovered_sqft


def _targeted(ls: LayerSet, jur: _Jurisdiction) -> np.ndarray:
    """Names of the targeted performance standard areas each disturbance meets."""
    n = len(jur.inside)
    if ls.targeted_areas is None or not len(ls.targeted_areas):
        return np.full(n, None, dtype=object)
    t = ls.targeted_areas
    raw = t["area_name"].to_numpy(dtype=object)
    names = np.array([nm if nm else f"targeted area {i + 1}" for i, nm in enumerate(raw)], dtype=object)
    return _labels(PolygonIndex(t.geometry.to_numpy()).hit_sources(jur.inside), names, n)


def _trigger_fields(gdf: gpd.GeoDataFrame, prof: Profile) -> dict[str, np.ndarray]:
    """Read the optional site fields the profile's permit triggers use (``fill_cuyd``, ``utility_ft``, ...)."""
    out = {}
    for t in prof.triggers:
        if t.field in gdf.columns:
            col = gdf[t.field]
            out[t.field] = (
                col.fillna(False).astype(bool).to_numpy()
                if t.kind == "land_division"
                else pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
            )
    return out


def _repaired(inp: ReadRun) -> np.ndarray:
    """Whether each site's polygon, or one of its disturbed limits, was repaired (the one rule kept its shape)."""
    repaired = inp.sites[REPAIRED_COLUMN].to_numpy(dtype=bool).copy()
    d = inp.disturbed
    if d is not None and REPAIRED_COLUMN in d.columns and d[REPAIRED_COLUMN].any():
        ids = set(d.loc[d[REPAIRED_COLUMN].to_numpy(dtype=bool), "site_id"])
        repaired |= inp.sites["site_id"].isin(ids).to_numpy()
    return repaired


@dataclass
class Measured:
    """What :func:`measure` measured: the rules' measurements and the shapes later stages need.

    Attributes
    ----------
    measurements : esc_gis.rules.Measurements
        One value per site for every measurement the rules read.
    limits : numpy.ndarray of shapely geometries
        Each site's disturbed limits as drawn (their union; empty for a site that has none,
        which is measured on its whole site).
    inside : numpy.ndarray of shapely geometries
        The part of it inside the jurisdiction (empty for a site without disturbance).
    """

    measurements: Measurements
    limits: np.ndarray
    inside: np.ndarray


def measure(
    read: ReadRun, layers: LayerSet, profile: Profile, *, progress: Callable[[str, float], None] | None = None
) -> Measured:
    """Measure the sites of ``read`` with ``layers`` under ``profile``'s thresholds.

    Parameters
    ----------
    read : ReadRun
        The sites (and limits) read, in the layer set's CRS.
    layers : LayerSet
        The jurisdiction, waters, DEM and the other layers measured against.
    profile : Profile
        The ordinance's numbers (sliver, steep-slope threshold, buffer widths, ...).
    progress : callable, optional
        Called as ``progress(stage, fraction_done)``.

    Returns
    -------
    Measured

    Raises
    ------
    LayerSetError, CRSError, ProfileError
        If the layer set or the profile is unusable for a measurement.
    """
    report = progress or (lambda stage, frac: None)
    ls, prof, inp = layers, profile, read
    crs: CRS = ls.crs
    gdf = inp.sites
    site_geoms = gdf.geometry.to_numpy()

    report("measuring disturbed areas", 0.3)
    dist = _measure_disturbance(inp, crs)
    report("clipping to the jurisdiction", 0.45)
    jur = _jurisdiction(
        site_geoms, dist, ls.jurisdiction, crs, prof.area_sqft("policy.sliver"), extraterritorial_ft(prof)
    )
    report("adding up common plans", 0.55)
    plans = _plans(gdf, dist, jur, crs)
    report("measuring waters and protective areas", 0.65)
    wat = _waters(ls, prof, dist, jur, crs)
    report("measuring steep slopes", 0.75)
    steep_sqft, steep_uncovered = _terrain(ls, prof, jur, crs)
    targeted = _targeted(ls, jur)
    m = Measurements.of(
        len(gdf),
        jurisdiction=jur.state,
        activity=gdf["activity"].to_numpy(dtype=object),
        state_agency=gdf["state_agency"].to_numpy(dtype=bool),
        npdes_exempt=gdf["npdes_exempt"].to_numpy(dtype=bool),
        plan_id=plans.ids,
        disturbed_sqft=dist.sqft,
        disturbed_in_jurisdiction_sqft=jur.inside_sqft,
        disturbed_parts_sqft=dist.parts_sqft,
        disturbed_outside_site_sqft=dist.outside_site_sqft,
        disturbed_count=dist.count,
        plan_disturbed_sqft=plans.whole_sqft,
        plan_in_jurisdiction_sqft=plans.inside_sqft,
        plan_site_count=plans.count,
        plan_excluded_sqft=plans.excluded_sqft,
        plan_outside_sites=plans.outside_sites,
        protective_disturbed_sqft=wat.protective_sqft,
        in_water_sqft=wat.in_water_sqft,
        nearest_water_ft=wat.nearest_ft,
        nearest_water=wat.nearest_label,
        protective_waters=wat.protective_label,
        protective_from_centreline=wat.from_centreline,
        channel_unverified=wat.channel_unverified,
        targeted_areas=targeted,
        steep_disturbed_sqft=steep_sqft,
        steep_uncovered_sqft=steep_uncovered,
        repaired=_repaired(inp),
        has_waters=ls.waters is not None,
        has_targeted=ls.targeted_areas is not None,
        has_dem=ls.dem is not None,
        boundary_gap_ft=jur.gap_ft,
        trigger_fields=_trigger_fields(gdf, prof),
    )
    return Measured(m, dist.limits, jur.inside)
