"""Screen each site under the ordinance of the municipality it lies in (``--profile-by LAYER:FIELD``).

A county screens parcels for every municipality that adopted an erosion-control ordinance,
each with its own numbers and words: its profile. A jurisdictions layer (municipal boundaries,
TIGER places) names each municipality's profile in a field. Each site is screened by the same
engine as :func:`esc_gis.screening.screen`, once for each municipality its disturbance
touches (its disturbed limits, or the site without any, as the engine places a site), under that
municipality's profile and with that municipality's boundary as the jurisdiction, together with
the other sites of its common plan wherever they lie (§ 540-5: a plan is added up whole):

- a site inside one municipality gets one row, decided under its profile;
- a site straddling two gets a row in each, each following its own profile's reading of a
  site partly inside (``partial_jurisdiction``);
- a site no profiled municipality touches gets one row saying so (``permit = "not_covered"``),
  never a decision under another municipality's law.

The layer set gives the measuring CRS, the waters, the DEM and the other shared layers; its
own jurisdiction is replaced by each municipality's boundary.
"""

from __future__ import annotations

__all__ = ["NOT_COVERED", "ProfileBy", "parse_profile_by", "screen_by_municipality"]

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from esc_gis.errors import LayerSetError, Problem, ProfileError, ValidationError
from esc_gis.io import read_layer
from esc_gis.layers import LayerSet, load_layers
from esc_gis.measure.area import area_sqft
from esc_gis.profile import Profile, load_profile

#: The ``permit`` and ``jurisdiction`` of a site no profiled municipality covers.
NOT_COVERED = "not_covered"
#: The bundled profiles a field may name by their file's stem (``winneconne``).
_BUNDLED = Path(__file__).resolve().parent / "profiles"


@dataclass(frozen=True)
class ProfileBy:
    """A jurisdictions layer and the field naming each feature's profile."""

    path: Path
    field: str
    layer: str | None = None


def parse_profile_by(text: str) -> ProfileBy:
    """Read ``PATH:FIELD`` (``PATH`` may be ``FILE|LAYER``); the last colon separates the field.

    Raises
    ------
    LayerSetError
        If there is no field after a colon.

    Examples
    --------
    >>> parse_profile_by("munis.gpkg|places:profile")
    ProfileBy(path=PosixPath('munis.gpkg'), field='profile', layer='places')
    """
    path, sep, field = text.rpartition(":")
    if not sep or not path or not field.strip():
        msg = f"--profile-by {text!r} is not LAYER:FIELD (e.g. municipalities.gpkg:profile)."
        raise LayerSetError(msg)
    file, _, layer = path.partition("|")
    return ProfileBy(Path(file), field.strip(), layer or None)


def _resolve(value: str, folder: Path) -> Path:
    """Find the profile a field's value names: a TOML path (beside the layer) or a bundled name."""
    candidates = [Path(value), folder / value, _BUNDLED / value, _BUNDLED / f"{value}.toml"]
    for c in candidates:
        if c.suffix == ".toml" and c.is_file():
            return c
    msg = f"no profile {value!r}: give a .toml path (absolute or beside the jurisdictions layer) or a bundled name"
    raise ProfileError(msg)


def _profiles(values: pd.Series, folder: Path, source: str) -> dict[str, Profile]:
    """Load each distinct profile the field names, every problem at once."""
    problems: list[Problem] = []
    for row in np.flatnonzero(values.isna().to_numpy() | (values.astype(str).str.strip() == "").to_numpy()):
        problems.append(Problem(source, int(row) + 1, "names no profile.", "give the profile, or drop the feature."))
    loaded: dict[str, Profile] = {}
    for value in sorted({str(v).strip() for v in values.dropna() if str(v).strip()}):
        try:
            loaded[value] = load_profile(_resolve(value, folder))
        except ProfileError as err:
            problems.append(Problem(source, None, f"profile {value!r}: {err}"))
    if problems:
        raise ValidationError(problems)
    return loaded


def _footprints(sites: gpd.GeoDataFrame, disturbed: gpd.GeoDataFrame | None, id_field: str) -> np.ndarray:
    """Return what places each site, as the engine places it: its disturbed limits, or the site without any."""
    geoms = sites.geometry.to_numpy()
    if disturbed is None:
        return geoms
    ids = sites[id_field].astype(str).to_numpy()
    limits = disturbed.dissolve(by=disturbed[id_field].astype(str)).geometry.reindex(ids).to_numpy()
    has = ~pd.isna(limits)
    out = geoms.copy()
    out[has] = limits[has]
    return out


def _with_their_plans(sites: gpd.GeoDataFrame, rows: np.ndarray, field_map: dict[str, str] | None) -> np.ndarray:
    """Return ``rows`` and every other site of their common plans (§ 540-5: the plan is added up whole)."""
    from esc_gis.validate import _find_field

    column = _find_field([str(c) for c in sites.columns], "plan_id", field_map or {})
    if column is None:
        return rows
    plans = sites[column].astype("string").str.strip()
    mine = set(plans.iloc[rows].dropna()) - {""}
    if not mine:
        return rows
    return np.union1d(rows, np.flatnonzero(plans.isin(mine).fillna(False).to_numpy(dtype=bool)))


def screen_by_municipality(
    sites: str | os.PathLike[str] | gpd.GeoDataFrame,
    *,
    profile_by: ProfileBy | str,
    disturbed: str | os.PathLike[str] | gpd.GeoDataFrame | None = None,
    layers: str | os.PathLike[str] | LayerSet | None = None,
    id_field: str = "site_id",
    name_field: str | None = None,
    **screen_kwargs: Any,
) -> gpd.GeoDataFrame:
    """Screen each site under the profile of every municipality its disturbance touches.

    Parameters
    ----------
    sites, disturbed : path or geopandas.GeoDataFrame
        As :func:`esc_gis.screening.screen`.
    profile_by : ProfileBy or str
        The jurisdictions layer and the field naming each feature's profile (``PATH:FIELD``).
    name_field : str, optional
        The layer's field naming each municipality (TIGER's ``NAME``): the features of one name
        are one municipality (their union), and must name one profile. Without it each feature
        is a municipality of its own, even where two share a profile: two municipalities that
        adopted the same model ordinance are still two jurisdictions, each deciding its own part
        of a site across their line.
    layers : path or LayerSet, optional
        The shared layers (measuring CRS, waters, DEM); their jurisdiction is replaced.
    id_field : str
        The sites' id field.
    **screen_kwargs
        Passed to :func:`esc_gis.screening.screen` (``field_map``, ``assume_crs``, ...).

    Returns
    -------
    geopandas.GeoDataFrame
        The columns of :func:`~esc_gis.screening.screen`, then ``municipality`` (its name in
        ``name_field``; without one, the profile field's value, followed by `` #N``, the
        feature's number, where several features name that profile) and ``profile`` (the
        profile's name): one row per site and municipality touched, in the sites' order; a site
        touching none has one row with ``permit`` and ``jurisdiction`` ``not_covered``, its own
        fields and its geometry.

    Raises
    ------
    LayerReadError, LayerSetError
        If the jurisdictions layer cannot be read or lacks the field.
    ValidationError
        If a feature names no profile, or a named profile cannot be loaded, or a municipality
        has no name or names two profiles (every one listed).
    ProfileError, CRSError
        As :func:`esc_gis.screening.screen`.
    """
    from esc_gis.screening import screen

    by = parse_profile_by(profile_by) if isinstance(profile_by, str) else profile_by
    munis = read_layer(by.path, layer=by.layer)
    if by.field not in munis.columns:
        fields = ", ".join(str(c) for c in munis.columns if c != munis.geometry.name)
        msg = f"{by.path} has no field {by.field!r} naming the profiles; its fields: {fields}."
        raise LayerSetError(msg)
    if name_field is not None and name_field not in munis.columns:
        fields = ", ".join(str(c) for c in munis.columns if c != munis.geometry.name)
        msg = f"{by.path} has no field {name_field!r} naming the municipalities; its fields: {fields}."
        raise LayerSetError(msg)
    profiles = _profiles(munis[by.field], by.path.parent, str(by.path))
    first = profiles[sorted(profiles)[0]]
    ls = (
        layers if isinstance(layers, LayerSet) else load_layers(None if layers is None else Path(layers), profile=first)
    )
    munis = munis.to_crs(ls.crs)
    values = munis[by.field].astype(str).str.strip()
    labels = _labels(munis, values, name_field, str(by.path))
    places = {
        label: (values[labels == label].iloc[0], shapely.union_all(munis.geometry[labels == label].to_numpy()))
        for label in sorted(set(labels))
    }

    site_gdf = sites if isinstance(sites, gpd.GeoDataFrame) else read_layer(sites)
    site_gdf = site_gdf.reset_index(drop=True)
    dist_gdf = None
    if disturbed is not None:
        dist_gdf = disturbed if isinstance(disturbed, gpd.GeoDataFrame) else read_layer(disturbed)
    key = id_field if id_field in site_gdf.columns else "site_id"
    in_crs = site_gdf.to_crs(ls.crs) if site_gdf.crs is not None else site_gdf
    dist_crs = None if dist_gdf is None else (dist_gdf.to_crs(ls.crs) if dist_gdf.crs is not None else dist_gdf)
    foot = _footprints(in_crs, dist_crs, key) if key in in_crs.columns else in_crs.geometry.to_numpy()

    parts: list[gpd.GeoDataFrame] = []
    touched = np.zeros(len(site_gdf), bool)
    for label, (value, bound) in places.items():
        prof = profiles[value]
        hit = np.asarray(shapely.intersects(foot, bound), dtype=bool)
        # A sliver along a shared boundary (digitising) is not a touch: the profile's sliver policy.
        hit[hit] = area_sqft(shapely.intersection(foot[hit], bound), ls.crs) > prof.area_sqft("policy.sliver")
        if not hit.any():
            continue
        touched |= hit
        # The sites of their common plans come along, wherever they lie: the plan is added up whole.
        rows = _with_their_plans(site_gdf, np.flatnonzero(hit), screen_kwargs.get("field_map"))
        sub = site_gdf.iloc[rows]
        sub_dist = None
        if dist_gdf is not None and key in sub.columns:
            sub_dist = dist_gdf[dist_gdf[key].astype(str).isin(sub[key].astype(str))]
        res = screen(
            sub,
            disturbed=sub_dist,  # limits for none of them: none of them disturbs anything
            layers=replace(ls, jurisdiction=bound),
            profile=prof,
            id_field=id_field,
            **screen_kwargs,
        )
        res["municipality"] = label
        res["profile"] = prof.name
        res["_order"] = rows
        parts.append(res[hit[rows]])  # only the sites in this municipality get its decision
    missing = np.flatnonzero(~touched)
    if len(missing):
        parts.append(_not_covered(in_crs.iloc[missing], missing, first, ls, key))
    out = pd.concat(parts, ignore_index=True).sort_values(["_order", "municipality"], kind="stable")
    out = out.drop(columns="_order").reset_index(drop=True)
    return gpd.GeoDataFrame(out, geometry="geometry", crs=ls.crs)


def _labels(munis: gpd.GeoDataFrame, values: pd.Series, name_field: str | None, source: str) -> pd.Series:
    """Name each feature's municipality: by ``name_field``, else the profile value (``#N`` where shared).

    Raises
    ------
    ValidationError
        If a feature has no name, or one name's features name two profiles (every one listed).
    """
    if name_field is None:
        shared = values.map(values.value_counts()).to_numpy() > 1
        numbers = pd.Series(np.arange(1, len(values) + 1), index=values.index).astype(str)
        return values.where(~shared, values + " #" + numbers)
    names = munis[name_field]
    labels = names.astype(str).str.strip()
    problems = [
        Problem(source, int(row) + 1, f"has no {name_field}.", "name its municipality, or drop the feature.")
        for row in np.flatnonzero(names.isna().to_numpy() | (labels == "").to_numpy())
    ]
    named = labels[names.notna().to_numpy() & (labels != "").to_numpy()]
    for label, group in values[named.index].groupby(named, sort=True):
        if group.nunique() > 1:
            rows = ", ".join(str(i + 1) for i in group.index)
            listed = ", ".join(repr(v) for v in sorted(set(group)))
            msg = f"municipality {label!r} (rows {rows}) names the profiles {listed}."
            problems.append(Problem(source, None, msg, "give each municipality one profile."))
    if problems:
        raise ValidationError(problems)
    return labels


def _not_covered(
    sites: gpd.GeoDataFrame, order: np.ndarray, wording: Profile, ls: LayerSet, key: str
) -> gpd.GeoDataFrame:
    """Rows for sites no profiled municipality touches: not decided under anyone's law.

    The finding cites no law; its words are the run's first profile's (every profile has them).
    """
    finding = wording.finding("not_covered").to_dict()
    out = gpd.GeoDataFrame(sites.reset_index(drop=True), geometry=sites.geometry.name, crs=ls.crs)
    if key in out.columns and "site_id" not in out.columns:
        out["site_id"] = out[key].astype(str)
    out["permit"] = NOT_COVERED
    out["jurisdiction"] = NOT_COVERED
    out["applicability"] = NOT_COVERED
    out["findings"] = json.dumps([finding])
    out["municipality"] = None
    out["profile"] = None
    out["_order"] = order
    if out.geometry.name != "geometry":
        out = out.rename_geometry("geometry")
    return out
