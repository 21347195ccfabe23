"""Screening: sites in, one row per site out, with decisions and cited findings.

The flow is one way: read -> validate -> transform to the measuring CRS -> measure ->
:func:`esc_gis.rules.decide` -> a GeoDataFrame. :func:`screen` never prints and never writes
files; the ``esc-gis screen`` command wraps it.
"""

from __future__ import annotations

__all__ = ["CONTRACT_COLUMNS", "screen"]

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from esc_gis.crs import assign_crs, to_measuring_crs
from esc_gis.errors import CRSError, LayerReadError, Problem, ValidationError
from esc_gis.io import read_layer
from esc_gis.layers import LayerSet, load_layers
from esc_gis.measure import PolygonIndex, area_sqft, clip_to_region, nearest_distance, union_by_group
from esc_gis.profile import Profile, load_profile
from esc_gis.rules import decide
from esc_gis.terrain import steep_area
from esc_gis.units import SQFT_PER_ACRE, ft_to_crs_units, sqft_per_crs_area_unit
from esc_gis.validate import prepare_disturbed, prepare_sites
from esc_gis.waters import protective_areas

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyproj import CRS

#: The screening contract's columns, in output order (DESIGN.md); the geometry follows.
CONTRACT_COLUMNS = (
    "site_id", "plan_id", "jurisdiction", "disturbed_sqft", "disturbed_acres",
    "disturbed_in_village_sqft", "plan_disturbed_sqft", "applicability", "permit",
    "permit_may_be_required", "standards", "sediment_standard", "steep_disturbed_sqft",
    "protective_disturbed_sqft", "nearest_water_ft", "findings",
)  # fmt: skip
#: Further columns esc_gis adds after the contract's.
EXTRA_COLUMNS = (
    "activity", "state_agency", "npdes_exempt", "steep_share", "steep_uncovered_sqft", "in_water_sqft", "nearest_water",
    "protective_waters", "targeted_areas",
)  # fmt: skip

def _source_name(obj: Any, default: str) -> str:
    return os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else default


def _read(obj: Any, *, layer: str | None, default: str) -> tuple[gpd.GeoDataFrame, str]:
    if isinstance(obj, gpd.GeoDataFrame):
        if len(obj) == 0:
            msg = f"{default}: the layer is empty (no features)."
            raise LayerReadError(msg)
        return obj.reset_index(drop=True), default
    return read_layer(obj, layer=layer), _source_name(obj, default)


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
        df = pd.DataFrame({"row": rows, "label": labels[src]}).drop_duplicates()
        joined = df.groupby("row", sort=True)["label"].agg(", ".join)
        out[joined.index.to_numpy()] = joined.to_numpy()
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
    progress : callable, optional
        Called as ``progress(stage, fraction_done)`` as the run advances.

    Returns
    -------
    geopandas.GeoDataFrame
        One row per site, in input order: the columns of :data:`CONTRACT_COLUMNS`, then
        :data:`EXTRA_COLUMNS`, then the sites' other fields; geometry is the site in the
        measuring CRS.

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
    >>> village = gpd.GeoDataFrame(geometry=[shapely.box(0, 0, 1000, 1000)], crs="EPSG:7594")
    >>> ls = LayerSet(manifest=None, crs=village.crs, jurisdiction=village.geometry[0])
    >>> sites = gpd.GeoDataFrame({"site_id": ["a"]}, geometry=[shapely.box(10, 10, 110, 60)], crs="EPSG:7594")
    >>> row = screen(sites, layers=ls).iloc[0]
    >>> row["jurisdiction"], round(row["disturbed_sqft"]), row["permit"]
    ('inside', 5000, 'required')
    """
    report = progress or (lambda stage, frac: None)
    prof = profile if isinstance(profile, Profile) else load_profile(None if profile is None else Path(profile))
    report("reading layers", 0.0)
    ls = layers if isinstance(layers, LayerSet) else load_layers(None if layers is None else Path(layers), profile=prof)
    crs: CRS = ls.crs

    raw_sites, s_source = _read(sites, layer=sites_layer, default="sites")
    problems: list[Problem] = []
    raw_sites = _with_crs(raw_sites, assume_crs, s_source, problems)
    table = prepare_sites(raw_sites, source=s_source, id_field=id_field, field_map=field_map)
    problems += table.problems
    dist_table = None
    if disturbed is not None:
        raw_dist, d_source = _read(disturbed, layer=disturbed_layer, default="disturbed")
        raw_dist = _with_crs(raw_dist, assume_crs, d_source, problems)
        dist_table = prepare_disturbed(raw_dist, source=d_source, site_ids=table.gdf["site_id"], id_field=id_field)
        problems += dist_table.problems
    if problems:
        raise ValidationError(problems)

    report("transforming to the measuring CRS", 0.15)
    gdf = to_measuring_crs(table.gdf, crs)
    site_geoms = gdf.geometry.to_numpy()
    n = len(gdf)
    ids = gdf["site_id"].to_numpy(dtype=object)

    report("measuring disturbed areas", 0.3)
    if dist_table is None:
        dist_geoms = site_geoms
        count = np.ones(n, int)
        parts_sqft = area_sqft(site_geoms, crs)
        outside_site_sqft = np.zeros(n)
    else:
        dgdf = to_measuring_crs(dist_table.gdf, crs)
        dgeoms = dgdf.geometry.to_numpy()
        keys, unions, counts = union_by_group(dgeoms, dgdf["site_id"].to_numpy(dtype=object))
        pos = pd.Index(ids).get_indexer(keys)
        dist_geoms = np.full(n, shapely.Polygon(), dtype=object)
        dist_geoms[pos] = unions
        count = np.zeros(n, int)
        count[pos] = counts
        site_pos = pd.Index(ids).get_indexer(dgdf["site_id"].to_numpy(dtype=object))
        parts_sqft = np.bincount(site_pos, weights=area_sqft(dgeoms, crs), minlength=n)
        outside_site_sqft = area_sqft(shapely.difference(dist_geoms, site_geoms), crs)
    dist_sqft = area_sqft(dist_geoms, crs)

    report("clipping to the Village", 0.45)
    # Jurisdiction is decided on the disturbance (§ 540-4B regulates the activity); a site
    # with no disturbance is placed by its own polygon.
    no_dist = dist_sqft == 0
    test_geoms = np.where(no_dist, site_geoms, dist_geoms)
    test_inside, state = clip_to_region(test_geoms, ls.jurisdiction)
    test_sqft = area_sqft(test_geoms, crs)
    test_in_sqft = area_sqft(test_inside, crs)
    inside = np.where(no_dist, shapely.Polygon(), test_inside)
    in_sqft = np.where(no_dist, 0.0, test_in_sqft)
    # Boundary slivers (different digitising of the same line) do not make a site partial.
    sliver = prof.area_sqft("policy.sliver")
    jurisdiction = np.where(
        (state == 0) | (test_in_sqft <= sliver), "outside",
        np.where((state == 2) | (test_sqft - test_in_sqft <= sliver), "inside", "partial"),
    ).astype(object)  # fmt: skip

    report("adding up common plans", 0.55)
    # pandas may hold missing text as NaN or None: normalise to None once, here.
    has_plan = gdf["plan_id"].notna().to_numpy()
    plan_ids = np.where(has_plan, gdf["plan_id"].to_numpy(dtype=object), None)
    plan_sqft = in_sqft.copy()
    plan_count = np.ones(n, int)
    if has_plan.any():
        keys, unions, counts = union_by_group(inside[has_plan], plan_ids[has_plan])
        k = pd.Index(keys).get_indexer(plan_ids[has_plan])
        plan_sqft[has_plan] = area_sqft(unions, crs)[k]
        plan_count[has_plan] = counts[k]

    report("measuring waters and protective areas", 0.65)
    nan = np.full(n, np.nan)
    prot_sqft, water_sqft, near_ft = nan.copy(), nan.copy(), nan.copy()
    near_label = np.full(n, None, dtype=object)
    prot_label = np.full(n, None, dtype=object)
    from_line = np.zeros(n, bool)
    if ls.waters is not None and len(ls.waters):
        w = ls.waters
        pa = protective_areas(w, prof, crs)
        sqft_factor = sqft_per_crs_area_unit(crs)
        ov = pa.overlap(inside)
        prot_sqft = ov.strip_area * sqft_factor
        water_sqft = ov.water_area * sqft_factor
        d, j = nearest_distance(dist_geoms, pa.nearest)
        near_ft = d / ft_to_crs_units(1.0, crs)
        names = w["water_name"].to_numpy(dtype=object)
        classes = w["water_class"].to_numpy(dtype=object)
        base = np.array([nm if nm else cls for nm, cls in zip(names, classes, strict=True)], dtype=object)
        hit = j >= 0
        near_label[hit] = base[pa.nearest_source[j[hit]]]
        full = np.array(
            [f"{b} ({c}, {wd:g} ft)" for b, c, wd in zip(base, classes, pa.widths_ft, strict=True)], dtype=object
        )
        in_strip = prot_sqft > 0
        keep = in_strip[ov.rows]
        rows, src = ov.rows[keep], ov.sources[keep]
        prot_label = _labels((rows, src), full, n)
        # Strips measured from a hydrography centreline only approximate the top of channel.
        from_line[rows[pa.centreline[src]]] = True

    report("measuring steep slopes", 0.75)
    steep_sqft, steep_uncovered = nan.copy(), nan.copy()
    if ls.dem is not None:
        sa = steep_area(inside, crs, ls.dem, threshold_pct=float(prof.entry("thresholds.steep_slope").value or 20))
        steep_sqft, steep_uncovered = sa.steep_sqft, sa.uncovered_sqft

    targeted = np.full(n, None, dtype=object)
    if ls.targeted_areas is not None and len(ls.targeted_areas):
        t = ls.targeted_areas
        tnames = np.array(
            [nm if nm else f"targeted area {i + 1}" for i, nm in enumerate(t["area_name"].to_numpy(dtype=object))],
            dtype=object,
        )
        tidx = PolygonIndex(t.geometry.to_numpy())
        targeted = _labels(tidx.hit_sources(inside), tnames, n)

    report("applying the ordinance", 0.85)
    m = pd.DataFrame(
        {
            "jurisdiction": jurisdiction,
            "activity": gdf["activity"].to_numpy(dtype=object),
            "state_agency": gdf["state_agency"].to_numpy(dtype=bool),
            "npdes_exempt": gdf["npdes_exempt"].to_numpy(dtype=bool),
            "plan_id": plan_ids,
            "disturbed_sqft": dist_sqft,
            "disturbed_in_village_sqft": in_sqft,
            "disturbed_parts_sqft": parts_sqft,
            "disturbed_outside_site_sqft": outside_site_sqft,
            "disturbed_count": count,
            "plan_disturbed_sqft": plan_sqft,
            "plan_site_count": plan_count,
            "protective_disturbed_sqft": prot_sqft,
            "in_water_sqft": water_sqft,
            "nearest_water_ft": near_ft,
            "nearest_water": near_label,
            "protective_waters": prot_label,
            "protective_from_centreline": from_line,
            "targeted_areas": targeted,
            "has_waters": ls.waters is not None,
            "has_targeted": ls.targeted_areas is not None,
            "has_dem": ls.dem is not None,
            "steep_disturbed_sqft": steep_sqft,
            "steep_uncovered_sqft": steep_uncovered,
            "repaired": gdf["repaired"].to_numpy(dtype=bool),
        }
    )
    decided = decide(m, prof)

    out = pd.DataFrame(
        {
            "site_id": ids,
            "plan_id": plan_ids,
            "jurisdiction": jurisdiction,
            "disturbed_sqft": dist_sqft,
            "disturbed_acres": dist_sqft / SQFT_PER_ACRE,
            "disturbed_in_village_sqft": in_sqft,
            "plan_disturbed_sqft": plan_sqft,
            "applicability": decided["applicability"].to_numpy(),
            "permit": decided["permit"].to_numpy(),
            "permit_may_be_required": decided["permit_may_be_required"].to_numpy(),
            "standards": decided["standards"].to_numpy(),
            "sediment_standard": decided["sediment_standard"].to_numpy(),
            "steep_disturbed_sqft": steep_sqft,
            "protective_disturbed_sqft": prot_sqft,
            "nearest_water_ft": near_ft,
            "findings": decided["findings"].to_numpy(),
            "activity": m["activity"].to_numpy(),
            "state_agency": m["state_agency"].to_numpy(),
            "npdes_exempt": m["npdes_exempt"].to_numpy(),
            "steep_share": np.where(in_sqft > 0, steep_sqft / np.where(in_sqft > 0, in_sqft, 1), np.nan),
            "steep_uncovered_sqft": steep_uncovered,
            "in_water_sqft": water_sqft,
            "nearest_water": near_label,
            "protective_waters": prot_label,
            "targeted_areas": targeted,
        }
    )
    # Keep the user's own fields (addresses, parcel numbers) after ours.
    internal = {"row", "repaired", gdf.geometry.name}
    user = [c for c in gdf.columns if c not in out.columns and c not in internal]
    for c in user:
        out[c] = gdf[c].to_numpy()
    report("done", 1.0)
    return gpd.GeoDataFrame(out, geometry=site_geoms, crs=crs)

