"""Read: a run's sites (and disturbed limits) read, checked and put in the measuring CRS.

The first stage of a screening (read -> measure -> decide -> write). :func:`read_run` touches
nothing but its arguments, so a streamed run reads its next batch on a thread while an
earlier one is measured (:mod:`esc_gis.screening.engines.local`).
"""

from __future__ import annotations

__all__ = ["AllSkippedError", "ReadRun", "read_run", "warn_unmeasured"]

import dataclasses
import os
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd

from esc_gis.crs import assign_crs, to_measuring_crs, warn_if_far_from_zone
from esc_gis.errors import CRSError, EscGisWarning, LayerReadError, Problem, ValidationError
from esc_gis.io import feature_numbers, read_layer
from esc_gis.parcels import V10_ID_FIELD, detect_schema, skip_rule
from esc_gis.validate import prepare_disturbed, prepare_sites

if TYPE_CHECKING:
    from pyproj import CRS


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


class AllSkippedError(LayerReadError):
    """Raised when the skip rule sets aside every feature read; carries the table of them.

    A batch of a streamed run (:mod:`esc_gis.screening.stream`) may hold rights of way only: the run
    lists them and goes on, where a whole file of them is an error.
    """

    def __init__(self, msg: str, skipped: gpd.GeoDataFrame) -> None:
        super().__init__(msg)
        self.skipped = skipped


@dataclass
class ReadRun:
    """Sites (and disturbed limits) read, validated and in the measuring CRS: a run's first half.

    Made by :func:`read_run` and measured by :func:`~esc_gis.screening.decide.measure_run`; a
    streamed run reads its next batch while this one is measured.
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
    #: The ids of the sites no polygon of the disturbed limits names (measured on their whole
    #: site), and the limits file's name: warned once for the run (:func:`warn_unmeasured`).
    unmeasured: list[str] = field(default_factory=list)
    limits_source: str = ""


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
    repair_sqft: float = 1.0,
    disturbed_name: str | None = None,
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
        As for :func:`~esc_gis.screening.screen_run`.
    crs : pyproj.CRS
        The measuring CRS (the layer set's).
    warn_far : bool, default True
        Warn when the data lie far from the measuring CRS's zone; a streamed run passes False
        and warns once for all its batches, from :attr:`ReadRun.reach`.
    repair_sqft : float, default 1.0
        How far a repair may move an invalid polygon's area and still be the shape drawn: the
        profile's (:func:`esc_gis.validate.repair_tolerance_sqft`).
    disturbed_name : str, optional
        The limits file's name, for messages, when ``disturbed`` is a GeoDataFrame read from it.

    Returns
    -------
    ReadRun

    Raises
    ------
    LayerReadError, ValidationError, CRSError
        As :func:`~esc_gis.screening.screen`; AllSkippedError (a LayerReadError) when every feature is skipped.
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
        tolerance_sqft=repair_sqft,
    )
    problems += table.problems
    dist_table = None
    if disturbed is not None:
        raw_dist, d_source, d_numbers, _ = _read(
            disturbed, layer=disturbed_layer, where=disturbed_where, default="disturbed", name=disturbed_name
        )
        raw_dist = _with_crs(raw_dist, assume_crs, d_source, problems)
        dist_table = prepare_disturbed(
            raw_dist, source=d_source, site_ids=table.gdf["site_id"], id_field=id_field, tolerance_sqft=repair_sqft
        )
        problems += _renumber(dist_table.problems, d_numbers) if disturbed_where else dist_table.problems
    if problems:
        raise ValidationError(problems)
    sites_m = to_measuring_crs(table.gdf, crs)
    if dist_table is not None:
        _refuse_apart(dist_table.gdf, d_source, sites_m, table.gdf.crs, crs)
    # Sites from another state measured in a county grid: warned, with the distance and the fix.
    reach = [(f"Sites {s_source}", tuple(map(float, table.gdf.total_bounds)), table.gdf.crs.to_wkt())]
    if dist_table is not None:
        d = dist_table.gdf
        reach.append((f"Disturbed limits {d_source}", tuple(map(float, d.total_bounds)), d.crs.to_wkt()))
    unmeasured: list[str] = []
    if dist_table is not None:
        named = set(dist_table.gdf["site_id"].dropna())
        unmeasured = [str(i) for i in table.gdf["site_id"] if i not in named]
    if warn_far:
        for what, bounds, src_crs in reach:
            warn_if_far_from_zone(bounds, src_crs, crs, what=what)
        warn_unmeasured(unmeasured, d_source if dist_table is not None else "")
    return ReadRun(
        sites_m,
        None if dist_table is None else to_measuring_crs(dist_table.gdf, crs),
        skipped,
        None if rule is None else rule.describe(),
        table.generated,
        schema,
        not_selected,
        id_field,
        reach,
        unmeasured,
        d_source if dist_table is not None else "",
    )


def _refuse_apart(limits: gpd.GeoDataFrame, source: str, sites_m: gpd.GeoDataFrame, sites_crs: Any, crs: CRS) -> None:
    """Refuse disturbed limits none of which lies near its own site: a CRS label is wrong (issue 46).

    Each polygon is measured from its site, in the measuring CRS; one within
    :data:`esc_gis.together.APART_KM` of its site is enough (a limit keyed to the wrong site is
    the drawing's problem, said by the finding ``disturbed_outside_site``). The refusal names the
    file and the likely CRS (:func:`esc_gis.together.apart`).

    Raises
    ------
    ValidationError
        Naming the file, the gap and the likely CRS mistake.
    """
    from esc_gis.together import apart, apart_message

    if not len(limits) or limits.crs is None:
        return
    pos = pd.Index(sites_m["site_id"]).get_indexer(limits["site_id"])
    keep = pos >= 0
    if not keep.any():
        return
    partners = sites_m.geometry.to_numpy()[pos[keep]]
    found = apart(limits.geometry.to_numpy()[keep], limits.crs, partners, crs, partner_crs=sites_crs)
    if found is not None:
        message, fix = apart_message("the disturbed limits", "their own sites", found)
        raise ValidationError([Problem(source, None, message, fix)])


def warn_unmeasured(ids: list[str], source: str) -> None:
    """Warn, naming them, of the sites no polygon of the limits ``source`` names: taken as disturbed whole.

    The one rule for a site missing from the limits (issue 46): it is decided on its whole
    site, as a run without limits decides every site, never on 0 sq ft; each such site also
    carries the finding ``no_disturbed_limits``. A streamed run gathers its batches' ids and
    warns once.
    """
    if not ids:
        return
    shown = ", ".join(ids[:10]) + (f", ... ({len(ids)} in all)" if len(ids) > 10 else "")
    named = f" {source}" if source and source != "disturbed" else ""
    msg = (
        f"The disturbed limits{named} have no polygon for {len(ids)} site(s): {shown}. Each is decided on its "
        "whole site as disturbed (the default without limits). Fix: add their limits, or screen them without "
        "disturbed= if the whole site is meant."
    )
    warnings.warn(msg, EscGisWarning, stacklevel=2)


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
