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
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from esc_gis.errors import CRSError, EscGisWarning, LayerSetError, Problem, ProfileError, ValidationError
from esc_gis.io import read_layer
from esc_gis.layers import LayerSet, load_layers
from esc_gis.measure.area import area_sqft
from esc_gis.profile import Profile, load_profile

#: The ``permit`` and ``jurisdiction`` of a site no profiled municipality covers.
NOT_COVERED = "not_covered"
#: The bundled profiles a field may name by their file's stem (``winneconne``).
_BUNDLED = Path(__file__).resolve().parent.parent / "profiles"


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
        msg = f"profile_by={text!r} is not LAYER:FIELD (e.g. municipalities.gpkg:profile)."
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


def _profiles(values: pd.Series, folder: Path, source: str) -> tuple[dict[str, Profile], dict[str, str]]:
    """Load each distinct profile the field names, every problem at once.

    Returns the profiles by key, and each value's key: a profile named in two ways (``winneconne``,
    ``winneconne.toml``, its path) is one profile, keyed by the first value naming it.
    """
    problems: list[Problem] = []
    for row in np.flatnonzero(values.isna().to_numpy() | (values.astype(str).str.strip() == "").to_numpy()):
        problems.append(Problem(source, int(row) + 1, "names no profile.", "give the profile, or drop the feature."))
    loaded: dict[str, Profile] = {}
    keys: dict[str, str] = {}
    by_path: dict[Path, str] = {}
    for value in sorted({str(v).strip() for v in values.dropna() if str(v).strip()}):
        try:
            path = _resolve(value, folder).resolve()
            if path not in by_path:
                by_path[path] = value
                loaded[value] = load_profile(path)
            keys[value] = by_path[path]
        except ProfileError as err:
            problems.append(Problem(source, None, f"profile {value!r}: {err}"))
    if problems:
        raise ValidationError(problems)
    return loaded, keys


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
    field_map: dict[str, str] | None = None,
    assume_crs: Any | None = None,
    skip_ids: str | None = None,
    **screen_kwargs: Any,
) -> gpd.GeoDataFrame:
    """Screen each site under the profile of every municipality its disturbance touches.

    The sites and limits are read, validated and placed once, as :func:`esc_gis.screening.screen`
    does (their CRS or ``assume_crs``, the id field in any case, the parcel schema's skip rule,
    every problem at once, by feature number); then each municipality's sites are screened.

    Parameters
    ----------
    sites, disturbed : path or geopandas.GeoDataFrame
        As :func:`esc_gis.screening.screen`.
    profile_by : ProfileBy or str
        The jurisdictions layer and the field naming each feature's profile (``PATH:FIELD``).
        A profile is one municipality's ordinance (its name, sections and officers): the
        features naming one profile are that municipality (their union).
    name_field : str, optional
        The layer's field naming each municipality (a unique code such as TIGER's ``GEOID`` is
        safer than a name: a town and a village may share one). It labels the rows, and is
        checked: each municipality names one profile, and each profile one municipality.
    field_map, assume_crs, skip_ids
        As :func:`esc_gis.screening.screen`.
    layers : path or LayerSet, optional
        The shared layers (measuring CRS, waters, DEM); their jurisdiction is replaced.
    id_field : str
        The sites' id field.
    **screen_kwargs
        Passed to :func:`esc_gis.screening.screen_run`.

    Returns
    -------
    geopandas.GeoDataFrame
        The columns of :func:`~esc_gis.screening.screen`, then ``municipality`` (its name in
        ``name_field``, else the profile field's value) and ``profile`` (the profile's name):
        one row per site and municipality touched, in the sites' order; a site touching none
        has one row with ``permit`` and ``jurisdiction`` ``not_covered``, its id, plan and
        geometry. ``attrs["skipped"]`` holds the features skipped as not sites and
        ``attrs["run_findings"]`` the checks not made, as :func:`~esc_gis.screening.screen_run`.

    Raises
    ------
    LayerReadError, LayerSetError
        If the jurisdictions layer cannot be read or lacks a field.
    CRSError
        If the jurisdictions layer has no CRS.
    ValidationError
        If a feature names no profile, or a named profile cannot be loaded, or a municipality
        has no name, names two profiles or shares one with another, or two municipalities
        overlap; or as :func:`~esc_gis.screening.screen` for the sites (every one listed).
    ProfileError
        As :func:`esc_gis.screening.screen`.
    """
    from esc_gis.screening.decide import RUN_FINDINGS
    from esc_gis.screening.engines.whole import screen_run
    from esc_gis.screening.read import read_run
    from esc_gis.validate import repair_tolerance_sqft

    by = parse_profile_by(profile_by) if isinstance(profile_by, str) else profile_by
    munis = read_layer(by.path, layer=by.layer)
    for f, what in ((by.field, "the profiles"), (name_field, "the municipalities")):
        if f is not None and f not in munis.columns:
            fields = ", ".join(str(c) for c in munis.columns if c != munis.geometry.name)
            msg = f"{by.path} has no field {f!r} naming {what}; its fields: {fields}."
            raise LayerSetError(msg)
    if munis.crs is None:
        msg = f"{by.path} has no CRS; define it (ogr2ogr -a_srs EPSG:XXXX) and try again."
        raise CRSError(msg)
    values = munis[by.field].astype(str).str.strip()
    profiles, keys = _profiles(munis[by.field], by.path.parent, str(by.path))
    first = profiles[sorted(profiles)[0]]
    if not isinstance(layers, LayerSet):
        _check_shared(profiles, str(by.path))
    ls = (
        layers if isinstance(layers, LayerSet) else load_layers(None if layers is None else Path(layers), profile=first)
    )
    munis = munis.to_crs(ls.crs)
    places = _places(munis, values.map(keys), name_field, str(by.path))
    _check_overlaps(places, profiles, ls, str(by.path))

    inp = read_run(
        sites,
        disturbed,
        crs=ls.crs,
        assume_crs=assume_crs,
        id_field=id_field,
        field_map=field_map,
        skip_ids=skip_ids,
        repair_sqft=repair_tolerance_sqft(first),
    )
    site_gdf, dist_gdf = inp.sites, inp.disturbed  # validated, in the measuring CRS, ids as "site_id"
    foot = _footprints(site_gdf, dist_gdf, "site_id")

    parts: list[gpd.GeoDataFrame] = []
    found: dict[str, dict[str, str]] = {}
    touched = np.zeros(len(site_gdf), bool)
    for label, (key, bound) in places.items():
        prof = profiles[key]
        hit = np.asarray(shapely.intersects(foot, bound), dtype=bool)
        # A sliver along a shared boundary (digitising) is not a touch: the profile's sliver policy.
        hit[hit] = area_sqft(shapely.intersection(foot[hit], bound), ls.crs) > prof.area_sqft("policy.sliver")
        if not hit.any():
            continue
        touched |= hit
        # The sites of their common plans come along, wherever they lie: the plan is added up whole.
        rows = _with_their_plans(site_gdf, np.flatnonzero(hit), None)
        sub = site_gdf.iloc[rows]
        sub_dist = None if dist_gdf is None else dist_gdf[dist_gdf["site_id"].isin(sub["site_id"])]
        with warnings.catch_warnings():
            # Said once, of every site, by the run's own read above (a site its limits do not name,
            # data far from the zone): not again for each municipality's share of them.
            warnings.simplefilter("ignore", EscGisWarning)
            run = screen_run(
                sub,
                disturbed=sub_dist,  # limits for none of them: each is taken whole, as the run's read said
                layers=replace(ls, jurisdiction=bound),
                profile=prof,
                id_field="site_id",
                skip_ids="none",  # skipped above, once
                **screen_kwargs,
            )
        res = run.result
        for f in res.attrs.get(RUN_FINDINGS, []):
            found.setdefault(str(f.get("code")), f)
        res["municipality"] = label
        res["profile"] = prof.name
        res["_order"] = rows
        parts.append(res[hit[rows]])  # only the sites in this municipality get its decision
    missing = np.flatnonzero(~touched)
    if len(missing):
        parts.append(_not_covered(site_gdf.iloc[missing], missing, first, ls))
    out = pd.concat(parts, ignore_index=True).sort_values(["_order", "municipality"], kind="stable")
    out = out.drop(columns="_order").reset_index(drop=True)
    result = gpd.GeoDataFrame(out, geometry="geometry", crs=ls.crs)
    result.attrs[RUN_FINDINGS] = list(found.values())
    result.attrs["skipped"] = inp.skipped
    return result


def _places(
    munis: gpd.GeoDataFrame, keys: pd.Series, name_field: str | None, source: str
) -> dict[str, tuple[str, shapely.Geometry]]:
    """Return each municipality's label, profile and boundary: by profile, or by ``name_field``.

    Raises
    ------
    ValidationError
        If a feature has no name, a name's features name two profiles, or a profile is named by
        two names (every one listed).
    """
    if name_field is None:
        return {k: (k, shapely.union_all(munis.geometry[keys == k].to_numpy())) for k in sorted(set(keys))}
    names = munis[name_field]
    labels = names.astype(str).str.strip()
    blank = names.isna().to_numpy() | (labels == "").to_numpy()
    problems = [
        Problem(source, int(row) + 1, f"has no {name_field}.", "name its municipality, or drop the feature.")
        for row in np.flatnonzero(blank)
    ]
    named = pd.DataFrame({"name": labels[~blank], "profile": keys[~blank]})
    for (col, other), fix in (
        (("name", "profile"), "give each municipality one profile."),
        (("profile", "name"), "a profile is one municipality's ordinance: copy it for each, with its own name."),
    ):
        for value, group in named.groupby(col, sort=True):
            if group[other].nunique() > 1:
                rows = ", ".join(str(i + 1) for i in group.index)
                listed = ", ".join(repr(v) for v in sorted(set(group[other])))
                if col == "name":
                    msg = f"municipality {value!r} (rows {rows}) names the profiles {listed}."
                else:
                    msg = f"profile {value!r} (rows {rows}) is named by the municipalities {listed}."
                problems.append(Problem(source, None, msg, fix))
    if problems:
        raise ValidationError(problems)
    return {
        n: (
            str(named.loc[named["name"] == n, "profile"].iloc[0]),
            shapely.union_all(munis.geometry[labels == n].to_numpy()),
        )
        for n in sorted(set(named["name"]))
    }


def _check_shared(profiles: dict[str, Profile], source: str) -> None:
    """Refuse profiles that disagree on what the one layer set is loaded with.

    The layer set is loaded once, with the first profile: its measuring CRS (where the manifest
    names none), its water classes and its soils' K field. Profiles that differ there would have
    a municipality measured or classed under another's terms. Their slivers must agree too.

    Raises
    ------
    ValidationError
        Naming each setting and the profiles' values.
    """

    def k_field(p: Profile) -> str:
        raw = p.tables.get("soil_loss")
        return str(raw.get("k_field", "kwfact")) if isinstance(raw, dict) else "kwfact"

    problems = []
    for what, get in (
        ("measure_crs", lambda p: p.measure_crs),
        ("water classes", lambda p: ", ".join(sorted(p.water_classes()))),
        ("soil_loss k_field", k_field),
        # A site reaching a sliver over a shared line: one side must not call it "outside,
        # governed by another" where the other never decides it.
        ("policy.sliver", lambda p: f"{p.area_sqft('policy.sliver'):g} sq ft"),
    ):
        seen = {name: str(get(p)) for name, p in profiles.items()}
        if len(set(seen.values())) > 1:
            listed = "; ".join(f"{name!r}: {v}" for name, v in sorted(seen.items()))
            msg = f"the profiles differ in {what} ({listed}), and one layer set serves them all."
            problems.append(Problem(source, None, msg, "give them one value, or screen each municipality apart."))
    if problems:
        raise ValidationError(problems)


def _check_overlaps(
    places: dict[str, tuple[str, shapely.Geometry]], profiles: dict[str, Profile], ls: LayerSet, source: str
) -> None:
    """Refuse municipalities that overlap by more than a sliver: land lies in one municipality.

    Raises
    ------
    ValidationError
        Naming each pair.
    """
    labels = list(places)
    geoms = np.array([places[k][1] for k in labels], dtype=object)
    left, right = shapely.STRtree(geoms).query(geoms, predicate="intersects")
    pair = left < right
    left, right = left[pair], right[pair]
    shared = area_sqft(shapely.intersection(geoms[left], geoms[right]), ls.crs)
    problems = []
    for i, j, a in zip(left.tolist(), right.tolist(), shared.tolist(), strict=True):
        sliver = max(
            profiles[places[labels[i]][0]].area_sqft("policy.sliver"),
            profiles[places[labels[j]][0]].area_sqft("policy.sliver"),
        )
        if a > sliver:
            msg = f"municipalities {labels[i]!r} and {labels[j]!r} overlap by {a:,.1f} sq ft."
            problems.append(Problem(source, None, msg, "fix the boundaries: land lies in one municipality."))
    if problems:
        raise ValidationError(problems)


def _not_covered(sites: gpd.GeoDataFrame, order: np.ndarray, wording: Profile, ls: LayerSet) -> gpd.GeoDataFrame:
    """Rows for sites no profiled municipality touches: not decided under anyone's law.

    The finding cites no law; its words are the run's first profile's (every profile has them).
    """
    finding = wording.finding("not_covered").to_dict()
    keep = [c for c in ("site_id", "plan_id") if c in sites.columns]
    out = gpd.GeoDataFrame(sites[keep].reset_index(drop=True), geometry=sites.geometry.to_numpy(), crs=ls.crs)
    out["permit"] = NOT_COVERED
    out["jurisdiction"] = NOT_COVERED
    out["applicability"] = NOT_COVERED
    out["findings"] = json.dumps([finding])
    out["municipality"] = None
    out["profile"] = None
    out["_order"] = order
    return out
