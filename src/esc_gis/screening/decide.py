"""Screening: sites in, one row per site out, with decisions and cited findings.

The flow is one way: read -> validate -> transform to the measuring CRS -> measure ->
:func:`esc_gis.rules.decide` -> a GeoDataFrame. :func:`screen` never prints and never writes
files; the ``esc-gis screen`` command wraps it.
"""

from __future__ import annotations

__all__ = [
    "CONTRACT_COLUMNS",
    "RUN_FINDINGS",
    "ReadRun",
    "ScreeningRun",
    "measure_run",
    "read_run",
    "run_findings",
    "screen",
    "screen_run",
]

import dataclasses
import hashlib
import json
import math
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from esc_gis.crs import assign_crs, to_measuring_crs, warn_if_far_from_zone
from esc_gis.errors import CRSError, LayerReadError, Problem, ValidationError
from esc_gis.io import feature_numbers, read_layer
from esc_gis.layers import LayerSet, load_layers
from esc_gis.measure import PolygonIndex, area_sqft, clip_to_region, nearest_distance, union_by_group
from esc_gis.parcels import V10_ID_FIELD, detect_schema, skip_rule
from esc_gis.profile import Profile, load_profile
from esc_gis.rules import Measurements, counts_toward_plan, decide, extraterritorial_ft
from esc_gis.terrain import steep_area
from esc_gis.units import SQFT_PER_ACRE, ft_to_crs_units, sqft_per_crs_area_unit
from esc_gis.validate import prepare_disturbed, prepare_sites
from esc_gis.waters import ProtectiveAreas, protective_areas

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyproj import CRS

#: The screening contract's columns, in output order (DESIGN.md); the geometry follows.
CONTRACT_COLUMNS = (
    "site_id",
    "plan_id",
    "jurisdiction",
    "disturbed_sqft",
    "disturbed_acres",
    "disturbed_in_village_sqft",
    "plan_disturbed_sqft",
    "applicability",
    "permit",
    "permit_may_be_required",
    "standards",
    "sediment_standard",
    "steep_disturbed_sqft",
    "protective_disturbed_sqft",
    "nearest_water_ft",
    "findings",
)
#: Further columns esc_gis adds after the contract's.
EXTRA_COLUMNS = (
    "activity",
    "state_agency",
    "npdes_exempt",
    "steep_share",
    "steep_uncovered_sqft",
    "in_water_sqft",
    "nearest_water",
    "protective_waters",
    "targeted_areas",
)

#: Columns added only when the run has what they need: ``bare_soil_loss_tpa`` (after
#: :data:`EXTRA_COLUMNS`) when the layer set has soils and a DEM (:mod:`esc_gis.soil.potential`);
#: ``disturbed_limits`` when disturbed limits were given: each site's measured limits (the union
#: of its polygons) as EWKT, ``SRID=<epsg>;<WKT>``, null for a site with none (0 sq ft).
#: A text column rather than a second layer: it rides in every format a screening is written to
#: (GeoPackage, GeoParquet, GeoJSON, CSV), whole-file or streamed, needs no file beside it that
#: could go astray, and keeps its own CRS where a GeoJSON's geometry is reprojected to
#: longitude/latitude. ``esc-gis permits add/import`` read it back (issue 34).
OPTIONAL_COLUMNS = ("bare_soil_loss_tpa", "disturbed_limits")


#: Key of the result's ``attrs`` holding the run's own findings (see :func:`run_findings`).
RUN_FINDINGS = "run_findings"


def run_findings(result: pd.DataFrame) -> list[dict[str, str]]:
    """Return the findings about a screening run as a whole, not about one site.

    Today these say which optional layers the layer set lacks, hence which checks were
    made for no site (``{code, section, basis, message, columns}``, ``columns`` naming the
    output columns left null). They are said once per run, never repeated on every row;
    :func:`esc_gis.io.write_run_findings` writes them beside the output.

    Parameters
    ----------
    result : pandas.DataFrame
        What :func:`screen` returned (they travel in ``result.attrs``).

    Returns
    -------
    list of dict
        Empty when every layer was there, or for a frame not made by :func:`screen`.
    """
    return list(result.attrs.get(RUN_FINDINGS, []))


def _source_name(obj: Any, default: str) -> str:
    return os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else default


def _read(
    obj: Any,
    *,
    layer: str | None,
    where: str | None,
    default: str,
    numbers: np.ndarray | None = None,
    name: str | None = None,
) -> tuple[gpd.GeoDataFrame, str, np.ndarray, int]:
    """Read a layer; return it, its name, each row's feature number in the file, and how many ``where`` left out.

    A GeoDataFrame cut from a file (a batch of a streamed run) may bring its rows' ``numbers``
    in that file and the file's ``name``, so messages, skipped features and generated ids name
    the file's features.
    """
    if isinstance(obj, gpd.GeoDataFrame):
        label = name or default
        if where is not None:
            msg = f"{label}: a where clause applies to a file; filter the GeoDataFrame in pandas instead."
            raise LayerReadError(msg)
        if len(obj) == 0 and default != "disturbed":
            # An empty frame of disturbed limits is limits given for no site (a batch or a
            # municipality whose sites have none): each site then has no disturbance, as in a file
            # whose limits name other sites. An empty file is still refused (read_layer).
            msg = f"{label}: the layer is empty (no features)."
            raise LayerReadError(msg)
        rows = np.arange(1, len(obj) + 1) if numbers is None else np.asarray(numbers, dtype=int)
        return obj.reset_index(drop=True), label, rows, 0
    gdf = read_layer(obj, layer=layer, where=where)
    if where is None:
        return gdf, _source_name(obj, default), np.arange(1, len(gdf) + 1), 0
    numbers, total = feature_numbers(obj, layer=layer, where=where)
    return gdf, _source_name(obj, default), numbers, total - len(gdf)


def _renumber(problems: list[Problem], numbers: np.ndarray) -> list[Problem]:
    """Give problems worded by position the feature numbers of the file."""
    return [p if p.row is None else dataclasses.replace(p, row=int(numbers[p.row - 1])) for p in problems]


def _with_crs(gdf: gpd.GeoDataFrame, assume_crs: Any, source: str, problems: list[Problem]) -> gpd.GeoDataFrame:
    try:
        return assign_crs(gdf, assume_crs=assume_crs, source=source)
    except CRSError as exc:
        problems.append(Problem(source, None, str(exc)))
        return gdf


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


class AllSkippedError(LayerReadError):
    """Raised when the skip rule sets aside every feature read; carries the table of them.

    A batch of a streamed run (:mod:`esc_gis.stream`) may hold rights of way only: the run
    lists them and goes on, where a whole file of them is an error.
    """

    def __init__(self, msg: str, skipped: gpd.GeoDataFrame) -> None:
        super().__init__(msg)
        self.skipped = skipped


@dataclass
class ReadRun:
    """Sites (and disturbed limits) read, validated and in the measuring CRS: a run's first half.

    Made by :func:`read_run` and measured by :func:`measure_run`; a streamed run reads its next
    batch while this one is measured.
    """

    sites: gpd.GeoDataFrame  # validated, in the measuring CRS
    disturbed: gpd.GeoDataFrame | None
    skipped: gpd.GeoDataFrame  # features of the sites layer that are not sites, in its own CRS
    rule: str | None
    generated: list[str]
    schema: str | None
    not_selected: int
    id_field: str
    #: What the far-from-zone check looked at, ``(what, bounds, CRS WKT)`` of the sites (and
    #: limits) in their own CRS: a streamed run unites its batches' and warns once (issue 34).
    reach: list[tuple[str, tuple[float, ...], str]] = field(default_factory=list)


@dataclass
class ScreeningRun:
    """A screening's result, and what of the sites layer it left out and why.

    Attributes
    ----------
    result : geopandas.GeoDataFrame
        One row per screened site (see :func:`screen`).
    skipped : geopandas.GeoDataFrame
        Every feature of the sites layer skipped as not a site (empty when none), in the
        layer's own CRS: ``feature`` (1-based feature number in the file), ``skip_reason``,
        then the feature's own fields.
    rule : str or None
        The skip rule in force, in words (None when nothing is skipped by rule).
    generated_ids : list of str
        The ``row:<n>`` ids given to sites without an id.
    schema : str or None
        The parcel schema recognised (``"v10"``), if any.
    not_selected : int
        Features of the sites file the ``where`` clause left out (0 without one).
    id_field : str
        The id field used.
    run_findings : list of dict
        The findings about the run as a whole (checks made for no site: an optional layer
        the layer set lacks), ``{code, section, basis, message, columns}``. Returned here,
        where no DataFrame operation can drop them (``result.attrs`` holds a copy).
    """

    result: gpd.GeoDataFrame
    skipped: gpd.GeoDataFrame
    rule: str | None
    generated_ids: list[str]
    schema: str | None
    not_selected: int
    id_field: str
    run_findings: list[dict[str, str]] = field(default_factory=list)


@dataclass
class _Disturbance:
    geoms: np.ndarray  # the union of each site's disturbed limits
    sqft: np.ndarray
    parts_sqft: np.ndarray
    outside_site_sqft: np.ndarray
    count: np.ndarray


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


@dataclass
class _Waters:
    protective_sqft: np.ndarray
    in_water_sqft: np.ndarray
    nearest_ft: np.ndarray
    nearest_label: np.ndarray
    protective_label: np.ndarray
    from_centreline: np.ndarray
    channel_unverified: np.ndarray


def read_run(
    sites: str | os.PathLike[str] | gpd.GeoDataFrame,
    disturbed: str | os.PathLike[str] | gpd.GeoDataFrame | None = None,
    *,
    crs: CRS,
    assume_crs: Any | None = None,
    id_field: str = "site_id",
    field_map: dict[str, str] | None = None,
    sites_layer: str | None = None,
    disturbed_layer: str | None = None,
    sites_where: str | None = None,
    disturbed_where: str | None = None,
    skip_ids: str | None = None,
    feature_numbers: np.ndarray | None = None,
    sites_name: str | None = None,
    warn_far: bool = True,
) -> ReadRun:
    """Read and validate a run's sites and disturbed limits, every problem at once, and transform them.

    Features the skip rule names (a parcel layer's rights of way, hydrography, ...) are set
    aside, with their reason, before validation; see :mod:`esc_gis.parcels`. Touches nothing
    but its arguments, so a streamed run reads its next batch on another thread while an
    earlier one is measured.

    Parameters
    ----------
    sites, disturbed, assume_crs, id_field, field_map, sites_layer, disturbed_layer, sites_where, \
disturbed_where, skip_ids, feature_numbers, sites_name
        As for :func:`screen_run`.
    crs : pyproj.CRS
        The measuring CRS (the layer set's).
    warn_far : bool, default True
        Warn when the data lie far from the measuring CRS's zone; a streamed run passes False
        and warns once for all its batches, from :attr:`ReadRun.reach`.

    Returns
    -------
    ReadRun

    Raises
    ------
    LayerReadError, ValidationError, CRSError
        As :func:`screen`; AllSkippedError (a LayerReadError) when every feature is skipped.
    """
    raw_sites, s_source, numbers, not_selected = _read(
        sites, layer=sites_layer, where=sites_where, default="sites", numbers=feature_numbers, name=sites_name
    )
    problems: list[Problem] = []
    raw_sites = _with_crs(raw_sites, assume_crs, s_source, problems)
    columns = [str(c) for c in raw_sites.columns if c != raw_sites.geometry.name]
    schema = detect_schema(columns)
    if schema == "v10" and id_field == "site_id" and "site_id" not in {c.lower() for c in columns}:
        id_field = next(c for c in columns if c.upper() == V10_ID_FIELD)  # the schema's parcel id
    rule = skip_rule(skip_ids, columns=columns, id_field=(field_map or {}).get("site_id", id_field), source=s_source)
    skip = np.zeros(len(raw_sites), bool)
    if rule is not None and rule.field in raw_sites.columns:
        skip = rule.mask(raw_sites[rule.field])
    skipped = _skipped_table(raw_sites, skip, numbers, None if rule is None else rule)
    kept = raw_sites[~skip].reset_index(drop=True) if skip.any() else raw_sites
    if len(kept) == 0:
        msg = f"{s_source}: every feature was skipped as not a site ({rule.describe() if rule else ''})."
        raise AllSkippedError(msg, skipped)
    table = prepare_sites(
        kept,
        source=s_source,
        id_field=id_field,
        field_map=field_map,
        rows=numbers[~skip],
        generate_ids=rule is not None,
    )
    problems += table.problems
    dist_table = None
    if disturbed is not None:
        raw_dist, d_source, d_numbers, _ = _read(
            disturbed, layer=disturbed_layer, where=disturbed_where, default="disturbed"
        )
        raw_dist = _with_crs(raw_dist, assume_crs, d_source, problems)
        dist_table = prepare_disturbed(raw_dist, source=d_source, site_ids=table.gdf["site_id"], id_field=id_field)
        problems += _renumber(dist_table.problems, d_numbers) if disturbed_where else dist_table.problems
    if problems:
        raise ValidationError(problems)
    # Sites from another state measured in a county grid: warned, with the distance and the fix.
    reach = [(f"Sites {s_source}", tuple(map(float, table.gdf.total_bounds)), table.gdf.crs.to_wkt())]
    if dist_table is not None:
        d = dist_table.gdf
        reach.append((f"Disturbed limits {d_source}", tuple(map(float, d.total_bounds)), d.crs.to_wkt()))
    if warn_far:
        for what, bounds, src_crs in reach:
            warn_if_far_from_zone(bounds, src_crs, crs, what=what)
    return ReadRun(
        to_measuring_crs(table.gdf, crs),
        None if dist_table is None else to_measuring_crs(dist_table.gdf, crs),
        skipped,
        None if rule is None else rule.describe(),
        table.generated,
        schema,
        not_selected,
        id_field,
        reach,
    )


def _skipped_table(raw: gpd.GeoDataFrame, skip: np.ndarray, numbers: np.ndarray, rule: Any) -> gpd.GeoDataFrame:
    """Build the table of skipped features: feature number and reason first, then their own fields."""
    rows = raw[skip]
    own = rows.drop(columns=[c for c in ("feature", "skip_reason") if c in rows.columns])
    reason = (
        [f"not a parcel: {rule.field} {str(v).strip()!r} matches the skip rule" for v in rows[rule.field]]
        if rule is not None and len(rows)
        else []
    )
    front = pd.DataFrame({"feature": numbers[skip].astype(int), "skip_reason": pd.Series(reason, dtype=object)})
    out = pd.concat([front, own.reset_index(drop=True)], axis=1)
    return gpd.GeoDataFrame(out, geometry=raw.geometry.name, crs=raw.crs)


def _measure_disturbance(inp: ReadRun, crs: CRS) -> _Disturbance:
    """Measure the union of each site's disturbed limits (§ 540-5: overlaps count once); the site without them."""
    site_geoms = inp.sites.geometry.to_numpy()
    n = len(site_geoms)
    if inp.disturbed is None:
        return _Disturbance(
            site_geoms, area_sqft(site_geoms, crs), area_sqft(site_geoms, crs), np.zeros(n), np.ones(n, int)
        )
    ids = inp.sites["site_id"].to_numpy(dtype=object)
    dgeoms = inp.disturbed.geometry.to_numpy()
    keys, unions, counts = union_by_group(dgeoms, inp.disturbed["site_id"].to_numpy(dtype=object))
    pos = pd.Index(ids).get_indexer(keys)
    geoms = np.full(n, shapely.Polygon(), dtype=object)
    geoms[pos] = unions
    count = np.zeros(n, int)
    count[pos] = counts
    site_pos = pd.Index(ids).get_indexer(inp.disturbed["site_id"].to_numpy(dtype=object))
    parts = np.bincount(site_pos, weights=area_sqft(dgeoms, crs), minlength=n)
    outside = area_sqft(shapely.difference(geoms, site_geoms), crs)
    return _Disturbance(geoms, area_sqft(geoms, crs), parts, outside, count)


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
        with np.errstate(invalid="ignore"):
            gap[outside] = shapely.distance(test_geoms[outside], boundary) / ft_to_crs_units(1.0, crs)
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
    return _Plans(ids, whole, inside, count, excluded)


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


def screen(
    sites: str | os.PathLike[str] | gpd.GeoDataFrame,
    *,
    disturbed: str | os.PathLike[str] | gpd.GeoDataFrame | None = None,
    layers: str | os.PathLike[str] | LayerSet | None = None,
    profile: str | os.PathLike[str] | Profile | None = None,
    id_field: str = "site_id",
    field_map: dict[str, str] | None = None,
    assume_crs: Any | None = None,
    sites_layer: str | None = None,
    disturbed_layer: str | None = None,
    sites_where: str | None = None,
    disturbed_where: str | None = None,
    skip_ids: str | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> gpd.GeoDataFrame:
    """Screen construction sites against Chapter 540, Article I.

    Parameters
    ----------
    sites : path or geopandas.GeoDataFrame
        Site (or parcel) polygons with a unique id and, optionally, ``plan_id``,
        ``activity``, ``state_agency`` and ``npdes_exempt``. Any CRS.
    disturbed : path or geopandas.GeoDataFrame, optional
        Disturbed-limit polygons carrying the site id. Without it, each whole site is
        taken as disturbed (parcel screening).
    layers : path or LayerSet, optional
        The layer-set manifest; default the Village's (``layers/winneconne/layers.toml``).
    profile : path or Profile, optional
        The ordinance profile; default the Village's.
    id_field : str, default "site_id"
        The id field of ``sites`` (and of ``disturbed``, which may also use ``site_id``).
    field_map : dict, optional
        Contract field -> field in the file, e.g. ``{"activity": "LANDUSE"}``.
    assume_crs : optional
        CRS for input layers that have none. Never overrides a layer's own CRS.
    sites_layer, disturbed_layer : str, optional
        Layer names in multi-layer files.
    sites_where, disturbed_where : str, optional
        OGR SQL ``WHERE`` clauses picking the features to read (GDAL applies them while
        reading). Rows keep their feature numbers in the file.
    skip_ids : str, optional
        Which features of ``sites`` are not sites: ``None``/``"auto"`` (the schema's rule:
        for a Wisconsin V10 parcel layer, :data:`esc_gis.parcels.V10_NON_PARCEL` on the
        id; for other layers, nothing), ``"none"``, or a regular expression the whole id
        must match. While a rule is in force, a site without an id gets ``row:<n>``. The
        skipped features are returned by :func:`screen_run`, which this wraps.
    progress : callable, optional
        Called as ``progress(stage, fraction_done)`` as the run advances.

    Returns
    -------
    geopandas.GeoDataFrame
        One row per site, in input order: the columns of :data:`CONTRACT_COLUMNS`, then
        :data:`EXTRA_COLUMNS`, then :data:`OPTIONAL_COLUMNS` when the layer set has what
        they need, then the sites' other fields; geometry is the site in the
        measuring CRS. Findings about the run as a whole (absent layers) are in
        ``attrs["run_findings"]``, read with :func:`run_findings`.

    Raises
    ------
    LayerReadError
        If an input file is missing, unreadable or empty.
    ValidationError
        With every problem in the inputs (no CRS, missing or duplicate ids, unknown
        activities, bad flags, non-polygon or empty geometry), all at once.
    LayerSetError, CRSError, ProfileError
        If the layer set or profile is unusable.

    Examples
    --------
    >>> import geopandas as gpd, shapely
    >>> prof = load_profile()
    >>> x, y = 745_000, 505_000  # the Village, in WISCRS Winnebago feet
    >>> village = gpd.GeoDataFrame(geometry=[shapely.box(x, y, x + 1000, y + 1000)], crs="EPSG:7594")
    >>> ls = LayerSet(manifest=None, crs=village.crs, jurisdiction=village.geometry[0])
    >>> site = shapely.box(x + 10, y + 10, x + 110, y + 60)
    >>> sites = gpd.GeoDataFrame({"site_id": ["a"]}, geometry=[site], crs="EPSG:7594")
    >>> row = screen(sites, layers=ls).iloc[0]
    >>> row["jurisdiction"], round(row["disturbed_sqft"]), row["permit"]
    ('inside', 5000, 'required')
    """
    return screen_run(
        sites,
        disturbed=disturbed,
        layers=layers,
        profile=profile,
        id_field=id_field,
        field_map=field_map,
        assume_crs=assume_crs,
        sites_layer=sites_layer,
        disturbed_layer=disturbed_layer,
        sites_where=sites_where,
        disturbed_where=disturbed_where,
        skip_ids=skip_ids,
        progress=progress,
    ).result


def screen_run(
    sites: str | os.PathLike[str] | gpd.GeoDataFrame,
    *,
    disturbed: str | os.PathLike[str] | gpd.GeoDataFrame | None = None,
    layers: str | os.PathLike[str] | LayerSet | None = None,
    profile: str | os.PathLike[str] | Profile | None = None,
    id_field: str = "site_id",
    field_map: dict[str, str] | None = None,
    assume_crs: Any | None = None,
    sites_layer: str | None = None,
    disturbed_layer: str | None = None,
    sites_where: str | None = None,
    disturbed_where: str | None = None,
    skip_ids: str | None = None,
    progress: Callable[[str, float], None] | None = None,
    feature_numbers: np.ndarray | None = None,
    sites_name: str | None = None,
) -> ScreeningRun:
    """Screen as :func:`screen` does; return the result with what was skipped and why.

    Parameters
    ----------
    sites, disturbed, layers, profile, id_field, field_map, assume_crs, sites_layer, disturbed_layer, \
sites_where, disturbed_where, skip_ids, progress
        As for :func:`screen`.
    feature_numbers : numpy.ndarray of int, optional
        For ``sites`` given as a GeoDataFrame cut from a file (a batch of
        :func:`esc_gis.stream.screen_to_file`): each row's 1-based feature number in that file.
    sites_name : str, optional
        That file's name, for messages.

    Returns
    -------
    ScreeningRun

    Raises
    ------
    LayerReadError, ValidationError, LayerSetError, CRSError, ProfileError
        As :func:`screen`; LayerReadError also when every feature is skipped.
    """
    report = progress or (lambda stage, frac: None)
    prof = profile if isinstance(profile, Profile) else load_profile(None if profile is None else Path(profile))
    report("reading layers", 0.0)
    ls = layers if isinstance(layers, LayerSet) else load_layers(None if layers is None else Path(layers), profile=prof)
    read = read_run(
        sites,
        disturbed,
        crs=ls.crs,
        assume_crs=assume_crs,
        id_field=id_field,
        field_map=field_map,
        sites_layer=sites_layer,
        disturbed_layer=disturbed_layer,
        sites_where=sites_where,
        disturbed_where=disturbed_where,
        skip_ids=skip_ids,
        feature_numbers=feature_numbers,
        sites_name=sites_name,
    )
    return measure_run(read, ls, prof, progress=report)


def measure_run(
    read: ReadRun, layers: LayerSet, profile: Profile, *, progress: Callable[[str, float], None] | None = None
) -> ScreeningRun:
    """Measure and decide the sites of ``read`` (:func:`read_run`) with ``layers`` under ``profile``.

    Returns
    -------
    ScreeningRun

    Raises
    ------
    LayerSetError, CRSError, ProfileError
        As :func:`screen`.
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

    report("applying the ordinance", 0.85)
    m = Measurements.of(
        len(gdf),
        jurisdiction=jur.state,
        activity=gdf["activity"].to_numpy(dtype=object),
        state_agency=gdf["state_agency"].to_numpy(dtype=bool),
        npdes_exempt=gdf["npdes_exempt"].to_numpy(dtype=bool),
        plan_id=plans.ids,
        disturbed_sqft=dist.sqft,
        disturbed_in_village_sqft=jur.inside_sqft,
        disturbed_parts_sqft=dist.parts_sqft,
        disturbed_outside_site_sqft=dist.outside_site_sqft,
        disturbed_count=dist.count,
        plan_disturbed_sqft=plans.whole_sqft,
        plan_in_village_sqft=plans.inside_sqft,
        plan_site_count=plans.count,
        plan_excluded_sqft=plans.excluded_sqft,
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
        repaired=gdf["repaired"].to_numpy(dtype=bool),
        has_waters=ls.waters is not None,
        has_targeted=ls.targeted_areas is not None,
        has_dem=ls.dem is not None,
        boundary_gap_ft=jur.gap_ft,
        trigger_fields=_trigger_fields(gdf, prof),
    )
    d = decide(m, prof)
    optional: dict[str, np.ndarray] = {}
    if ls.soils is not None and ls.dem is not None:
        report("estimating bare-soil soil loss", 0.9)
        optional["bare_soil_loss_tpa"] = _bare_soil_loss(ls, prof, jur, d)
    if inp.disturbed is not None:
        optional["disturbed_limits"] = limits_text(dist.geoms, crs)
    result = gpd.GeoDataFrame(_report(gdf, m, d, optional), geometry=site_geoms, crs=crs)
    result.attrs[RUN_FINDINGS] = d.run_findings
    report("done", 1.0)
    return ScreeningRun(
        result,
        inp.skipped,
        inp.rule,
        inp.generated,
        inp.schema,
        inp.not_selected,
        inp.id_field,
        list(d.run_findings),
    )


def limits_text(geoms: np.ndarray, crs: CRS) -> np.ndarray:
    """Return each geometry as EWKT (``SRID=<epsg>;<WKT>``, full precision); None for an empty one.

    The form of :data:`OPTIONAL_COLUMNS`' ``disturbed_limits``, read back by
    :func:`esc_gis.registry.service.imports.screened_limits`.
    """
    epsg = crs.to_epsg()
    prefix = f"SRID={epsg};" if epsg else ""
    wkt = shapely.to_wkt(geoms, rounding_precision=-1)
    empty = shapely.is_empty(geoms) | shapely.is_missing(geoms)
    return np.array([None if e else prefix + w for w, e in zip(wkt, empty, strict=True)], dtype=object)


def _bare_soil_loss(ls: LayerSet, prof: Profile, jur: _Jurisdiction, d: Any) -> np.ndarray:
    """Estimate each site's bare-soil soil loss (its disturbance in the Village) and add its findings.

    Not a rule of the ordinance but a measurement with its caveat, so its finding is added here
    (appended to each site's findings) rather than by :func:`esc_gis.rules.decide`; a profile
    without R gets the run finding that the column is null, once.
    """
    from esc_gis.soil.potential import bare_soil_loss

    assert ls.soils is not None and ls.dem is not None  # checked by the caller
    est = bare_soil_loss(jur.inside, ls.crs, ls.dem, ls.soils, profile=prof, k_field=ls.soils_k_field)
    if est.r_annual is None:
        d.run_findings.append(
            {**prof.finding("screening_bare_soil_loss_no_r").to_dict(), "columns": "bare_soil_loss_tpa"}
        )
        return est.tpa
    ok = np.isfinite(est.tpa)
    if ok.any():
        t = prof.template("screening_bare_soil_loss")
        values = {
            **prof.names(),
            "r_annual": est.r_annual.value,
            "r_status": est.r_annual.status.replace("_", " "),
        }
        head = t.json_head()
        for i in np.flatnonzero(ok).tolist():
            msg = t.render(
                {
                    **values,
                    "bare_soil_loss_tpa": est.tpa[i],
                    "k": est.k[i],
                    "k_covered_pct": 100 * est.k_covered_share[i],
                    "ls": est.ls[i],
                    "outside_pct": 100 * est.outside_share[i],
                }
            ).message
            item = head + json.dumps(msg, ensure_ascii=False) + "}"
            f = d.findings[i]
            d.findings[i] = f[:-1] + (", " if f != "[]" else "") + item + "]"
    return est.tpa


def _report(
    gdf: gpd.GeoDataFrame, m: Measurements, d: Any, optional: dict[str, np.ndarray] | None = None
) -> pd.DataFrame:
    """Build the output table: the contract's columns, ours, the optional ones, then the user's own fields."""
    inside = m.disturbed_in_village_sqft
    out = pd.DataFrame(
        {
            "site_id": gdf["site_id"].to_numpy(dtype=object),
            "plan_id": m.plan_id,
            "jurisdiction": m.jurisdiction,
            "disturbed_sqft": m.disturbed_sqft,
            "disturbed_acres": m.disturbed_sqft / SQFT_PER_ACRE,
            "disturbed_in_village_sqft": inside,
            "plan_disturbed_sqft": d.decision_sqft,
            "applicability": d.applicability,
            "permit": d.permit,
            "permit_may_be_required": d.permit_may_be_required,
            "standards": d.standards,
            "sediment_standard": d.sediment_standard,
            "steep_disturbed_sqft": m.steep_disturbed_sqft,
            "protective_disturbed_sqft": m.protective_disturbed_sqft,
            "nearest_water_ft": m.nearest_water_ft,
            "findings": d.findings,
            "activity": m.activity,
            "state_agency": m.state_agency,
            "npdes_exempt": m.npdes_exempt,
            "steep_share": np.where(inside > 0, m.steep_disturbed_sqft / np.where(inside > 0, inside, 1), np.nan),
            "steep_uncovered_sqft": m.steep_uncovered_sqft,
            "in_water_sqft": m.in_water_sqft,
            "nearest_water": m.nearest_water,
            "protective_waters": m.protective_waters,
            "targeted_areas": m.targeted_areas,
            **(optional or {}),
        }
    )
    # Keep the user's own fields (addresses, parcel numbers) after ours.
    internal = {"row", "repaired", gdf.geometry.name}
    for c in [c for c in gdf.columns if c not in out.columns and c not in internal]:
        out[c] = gdf[c].to_numpy()
    return out
