"""What ``esc-gis soil-loss`` does, apart from its options: imported when it runs, not for ``--help``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
import shapely

from esc_gis._csvt import csv_table_output
from esc_gis._outputs import check_sidecar, sidecar_path, style_path
from esc_gis._vsi import is_stdout
from esc_gis.crs import measuring_crs, warn_if_far_from_zone
from esc_gis.errors import LayerReadError, ValidationError
from esc_gis.io import check_output_path, read_layer, write_csv, write_layer
from esc_gis.profile import load_profile
from esc_gis.soil.raster import check_raster_paths
from esc_gis.soil.schedule import read_schedule
from esc_gis.soil.soil_loss import read_ei_distribution, soil_loss_tables
from esc_gis.soil.soil_loss import soil_loss as compute_soil_loss
from esc_gis.terrain.dem import open_dem, warn_if_dem_far


def _sidecars(output: str) -> tuple[Path, Path]:
    """Name the phases and windows tables after the whole OUTPUT: ``OUTPUT.phases.csv``, ``OUTPUT.windows.csv``."""
    return sidecar_path(output, "phases", ".csv"), sidecar_path(output, "windows", ".csv")


def registry_plan_totals(registry: str, layers_path: str | None) -> dict[str, float]:
    """Return each common plan's disturbed total as the registry holds it (read only; review uses it too).

    A plan's total is the largest any of its permits records (``plan_disturbed_sqft``, else the
    permit's own ``disturbed_sqft``): permits taken in at different times may hold older totals.
    """
    from esc_gis.registry import open_registry

    totals: dict[str, float] = {}
    with open_registry(registry, layers=layers_path) as reg:
        for p in reg.permits():
            if not p.plan_id:
                continue
            v = p.plan_disturbed_sqft if p.plan_disturbed_sqft is not None else p.disturbed_sqft
            totals[str(p.plan_id)] = max(totals.get(str(p.plan_id), 0.0), float(v or 0.0))
    return totals


def run(
    *,
    sites: str,
    dem: str | None,
    soils: str | None,
    k_field: str | None,
    k_value: float | None,
    schedule: str,
    disturbed: str | None,
    r_annual: float | None,
    ei_file: str,
    id_field: str | None,
    plan_field: str | None,
    plan_disturbed_sqft: float | None,
    registry: str | None,
    raster: str | None,
    creation_options: dict[str, str],
    z_unit: str | None,
    band: int | None,
    layers_path: str | None,
    profile_path: str | None,
    output: str,
    dst_crs: str | None,
    overwrite: bool,
    quiet: bool,
) -> None:
    """Run ``esc-gis soil-loss`` with its options (:func:`esc_gis.cli.soil_loss.soil_loss_` documents them)."""
    if is_stdout(output):
        # Its phases and windows are files beside OUTPUT: standard output cannot carry them.
        msg = "soil-loss writes its phases and windows beside OUTPUT (OUTPUT.phases.csv): name a file, not -."
        raise click.UsageError(msg)
    check_output_path(output, overwrite=overwrite, dst_crs=dst_crs)
    phases_out, windows_out = _sidecars(output)
    check_sidecar(phases_out, output, overwrite=overwrite)  # stale ones (their output gone) are replaced
    check_sidecar(windows_out, output, overwrite=overwrite)
    if raster is not None:
        check_raster_paths(raster, overwrite=overwrite)
    profile = load_profile(profile_path)
    tables = soil_loss_tables(profile)
    phases = read_schedule(schedule, tables.covers, tables.practices)
    ei = read_ei_distribution(ei_file)
    gdf = read_layer(sites)
    # Sites and a DEM far from the profile's measuring CRS: warned, as screen warns (one check).
    measure = measuring_crs(profile.measure_crs)
    if gdf.crs is not None:
        warn_if_far_from_zone(gdf.total_bounds, gdf.crs, measure, what=f"Sites {sites}")
    # Every input not given is the layer set's, as review takes them: the DEM, the soils (with
    # their K field). An option given wins; --k given means no soils layer at all.
    layer_set = _layer_set(layers_path, profile) if dem is None or (soils is None and k_value is None) else None
    dem_source = _dem_source(dem, layers_path, layer_set, measure, z_unit=z_unit, band=band)
    # Sites are named as screen names them (site_id) when the layer has that field; a layer
    # without ids is named by row number (1, 2, ...), which the screening needs as ids too.
    if id_field is None:
        if "site_id" not in gdf.columns:
            gdf = gdf.assign(site_id=[str(i + 1) for i in range(len(gdf))])
        id_field = "site_id"
    dist = None
    if disturbed is not None:
        dist = read_layer(disturbed)
        if dist.crs is not None and gdf.crs is not None:
            dist = dist.to_crs(gdf.crs)
    # The article's reach, the permit and the sediment standard (§ 540-4, § 540-7B(3)(b)) are the
    # screening's, on the same sites, limits and contract fields (issue 34): decided once.
    screening = _screening(gdf, dist, id_field, plan_field, layers_path, profile)
    if plan_disturbed_sqft is not None:
        _check_plan_total(plan_disturbed_sqft, gdf[id_field], screening, profile)
    if dist is not None:
        # The soil loss itself is computed where site and limits meet; the acre test counts the
        # whole disturbance (limits drawn past the line too), as the screening measured it.
        gdf = gdf.set_geometry(
            shapely.intersection(gdf.geometry.to_numpy(), shapely.union_all(dist.geometry.to_numpy()))
        )
    soils_gdf, soils_source, k_field = _soils(soils, k_value, k_field, layer_set)
    plan_totals: float | dict[str, float] | None = plan_disturbed_sqft
    if registry is not None:
        plan_totals = registry_plan_totals(registry, layers_path)
        if plan_disturbed_sqft is not None:
            # Both: the number given counts for every site, as a field of SITES would.
            own = pd.to_numeric(gdf.get("plan_disturbed_sqft", np.nan), errors="coerce")
            gdf = gdf.assign(plan_disturbed_sqft=np.fmax(own, plan_disturbed_sqft))
    res = compute_soil_loss(
        gdf,
        dem_source,  # type: ignore[arg-type]
        schedule=phases,
        profile=profile,
        ei_daily=ei,
        r_annual=r_annual,
        soils=soils_gdf,
        k=k_value,
        k_field=k_field,
        id_field=id_field,
        plan_field=plan_field,
        plan_disturbed_sqft=plan_totals,
        z_unit=z_unit,
        band=band,
        r_source="--r-annual" if r_annual is not None else "profile",
        ei_source=f"--ei-file {Path(ei_file).name}",
        soils_source=soils_source,
        raster=raster,
        raster_options=creation_options,
        overwrite=overwrite,
        screening=screening,
    )
    write_layer(res.sites, output, overwrite=overwrite, layer="soil_loss", dst_crs=dst_crs)
    for table, side in ((res.phases, phases_out), (res.windows, windows_out)):
        with csv_table_output(side) as tmp:
            write_csv(table, tmp)  # with its .csvt: GDAL and QGIS read its numbers as numbers
    if not quiet:
        _summary(res, output, phases_out, windows_out, raster)


def _layer_set(layers_path: str | None, profile: Any) -> Any:
    """Return the layer set (``--layers``, or the Village's), read as screen and review read it.

    Raises
    ------
    LayerSetError, LayerReadError, CRSError
        As :func:`esc_gis.layers.load_layers`.
    """
    from esc_gis.layers import load_layers

    return load_layers(layers_path, profile=profile)


def _soils(
    soils: str | None, k_value: float | None, k_field: str | None, layer_set: Any
) -> tuple[Any, str, str | None]:
    """Return the soils layer, where it came from and its K field: ``--soils``, else (without ``--k``) the layer set's.

    Raises
    ------
    LayerReadError, CoordinatesNotInCRSError
        As :func:`esc_gis.io.read_layer`.
    """
    if soils is not None:
        return read_layer(soils), soils, k_field
    if k_value is None and layer_set is not None and layer_set.soils is not None:
        # The layer set names its K field; a --k-field given still wins.
        return layer_set.soils, "the layer set's soils", k_field or layer_set.soils_k_field
    return None, "soils", k_field


def _check_plan_total(given: float, ids: pd.Series, screening: pd.DataFrame, profile: Any) -> None:
    """Refuse one plan's total given for sites that name no plan, several plans, or a plan measured larger.

    Raises
    ------
    ValidationError
        With every conflict (:func:`esc_gis.soil.judge.plan_total_problems`).
    """
    from esc_gis.soil.judge import plan_total_problems

    problems = plan_total_problems(
        given,
        ids.astype(str).tolist(),
        _by_site(screening, ids, "plan_id"),
        _by_site(screening, ids, "plan_disturbed_sqft"),
        profile,
    )
    if problems:
        raise ValidationError(problems)


def _by_site(screening: pd.DataFrame, ids: pd.Series, column: str) -> np.ndarray:
    """Return the screening's ``column`` for each site of ``ids``, in their order."""
    by_id = screening.assign(site_id=screening["site_id"].astype(str)).drop_duplicates("site_id").set_index("site_id")
    return by_id[column].reindex(ids.astype(str)).to_numpy(dtype=object)


def _dem_source(
    dem: str | None, layers_path: str | None, layer_set: Any, measure: Any, *, z_unit: str | None, band: int | None
) -> object:
    """Return the DEM given (opened, checked for distance) or the layer set's.

    Raises
    ------
    LayerReadError
        If there is neither: the layer set has no [dem].
    """
    if dem is not None:
        source = open_dem(dem, z_unit=z_unit, band=band)  # the layer set's DEM was checked with it
        warn_if_dem_far(source, measure, what=f"DEM {dem}")
        return source
    if layer_set is None or layer_set.dem is None:
        where = layers_path or "the Village's layer set"
        msg = f"no DEM: {where} has no [dem]; give --dem, or --layers with a [dem] section."
        raise LayerReadError(msg)
    return layer_set.dem


def _summary(res: Any, output: str, phases_out: Path, windows_out: Path, raster: str | None) -> None:
    """Echo one line per site and what was written."""
    for r in res.sites.itertuples():
        if not np.isfinite(r.discharge_tpa):
            why = [f["message"] for f in json.loads(r.findings) if f["code"] == "soil_loss_not_computed"]
            click.echo(f"{r.site_id:<12} {why[0] if why else 'No soil loss computed.'}")
            continue
        verdict = ("passes" if r.passes else "fails") if r.sediment_standard else "the standard does not apply"
        if r.applicability not in (None, "applies") and isinstance(r.applicability, str):
            verdict = f"the article does not apply ({r.applicability.replace('_', ' ')})"
            na = [f for f in json.loads(r.findings) if f["code"] == "soil_loss_article_not_applicable"]
            if na and na[0]["basis"] != "ordinance":
                # The extraterritorial area (§ 540-5): a reading, never the law's words.
                verdict = f"the article is read as not applying ({r.applicability.replace('_', ' ')}; a reading)"
        click.echo(
            f"{r.site_id:<12} discharge {r.discharge_tpa:8.2f} t/ac in window {r.governing_window} of "
            f"{r.windows} (standard {r.standard_tpa:g}): {verdict}; "
            f"{100 * r.outside_share:.1f} % outside the method"
        )
    click.echo(f"Wrote {len(res.sites)} site(s) to {output}, phases to {phases_out}, windows to {windows_out}.")
    if raster is not None:
        click.echo(
            f"Wrote the per-cell raster to {res.raster} (style {style_path(raster)})."
            if res.raster is not None
            else "No site lies on the DEM: no raster written."
        )


def _screening(
    gdf: Any, dist: Any | None, id_field: str, plan_field: str | None, layers_path: str | None, profile: Any
) -> pd.DataFrame:
    """Screen the sites with their limits and contract fields, as ``esc-gis screen`` would.

    Limits carrying a site id are matched by it (as screen matches them); limits without one
    belong, each whole, to every site they touch (a limit drawn past the site line is still that
    site's disturbance, § 540-5 CONSTRUCTION SITE).

    Raises
    ------
    ValidationError, LayerReadError, LayerSetError
        As :func:`esc_gis.screening.screen`: bad contract fields, no CRS, an unusable layer set.
    """
    from esc_gis.screening import screen

    limits = dist
    if dist is not None and id_field not in dist.columns and "site_id" not in dist.columns:
        limits = _limits_by_touch(gdf, dist, id_field)
    field_map = {"plan_id": plan_field} if plan_field else None
    return screen(gdf, disturbed=limits, layers=layers_path, profile=profile, id_field=id_field, field_map=field_map)


def _limits_by_touch(gdf: Any, dist: Any, id_field: str) -> Any:
    """Give each limit without an id the id of every site it touches (one row per site and limit)."""
    import geopandas as gpd

    site_i, dist_i = shapely.STRtree(gdf.geometry.to_numpy()).query(dist.geometry.to_numpy(), predicate="intersects")[
        ::-1
    ]
    ids = gdf[id_field].astype(str).to_numpy()[site_i]
    return gpd.GeoDataFrame({id_field: ids}, geometry=dist.geometry.to_numpy()[dist_i], crs=dist.crs)
