"""``esc-gis soil-loss``: soil loss and sediment discharge per site over its construction schedule."""

from __future__ import annotations

from typing import Any

import click

from esc_gis._outputs import reads
from esc_gis.cli._catalogue import short_help
from esc_gis.cli._options import (
    FILE,
    VECTOR,
    creation_options_option,
    dst_crs_option,
    layers_option,
    output_option,
    overwrite_option,
    profile_option,
    quiet_option,
)
from esc_gis.cli.slope import Z_UNIT, band_option


@click.command("soil-loss", short_help=short_help("soil-loss"))
@click.argument("sites", type=VECTOR)
@click.option("--dem", type=click.Path(), default=None, help="Elevation raster [default: the layer set's DEM].")
@click.option(
    "--soils",
    type=VECTOR,
    default=None,
    help="Soil polygons with K (SSURGO map units with kwfact) [default: the layer set's [soils], unless --k].",
)
@click.option(
    "--k-field",
    default=None,
    help="Field of the soils holding K [default: the layer set's k_field for its soils, else the profile's, kwfact].",
)
@click.option("--k", "k_value", type=float, default=None, help="One K for every site, instead of any soils layer.")
@click.option("--schedule", required=True, type=FILE, help="Construction schedule: .csv or .toml.")
@click.option("--disturbed", type=VECTOR, default=None, help="Disturbed areas; each site's is its part of them.")
@click.option("--r-annual", type=float, default=None, help="Annual R factor (US units) [default: the profile's].")
@click.option(
    "--ei-file",
    required=True,
    type=FILE,
    help="Erosivity distribution CSV: 365 daily values (RUSLE2 EI_DAILY_AMOUNT), 24 half-month or 12 monthly.",
)
@click.option(
    "--id-field",
    default=None,
    help="Field of SITES naming each site [default: site_id, as screen reads it; row numbers if SITES has none].",
)
@click.option(
    "--plan-field",
    default=None,
    help="Field of SITES naming each site's common plan [default: plan_id when SITES has it]; sites sharing one "
    "are added up for the acre test.",
)
@click.option(
    "--plan-disturbed-sqft",
    type=click.FloatRange(min=0),
    default=None,
    help="The common plan's disturbed total (sq ft) when it holds land this layer lacks (a plan_disturbed_sqft "
    "field of SITES counts too, for sites that name a plan). Only for sites that name one plan (plan_id): refused "
    "for a site with none (when more than its own area), for sites of several plans, or below what the plan's "
    "sites here already disturb.",
)
@click.option(
    "--registry",
    default=None,
    help="Permit registry (GeoPackage or postgresql:// URL): each site's plan takes the registry's plan total.",
)
@click.option(
    "--raster",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write a per-cell GeoTIFF on the DEM's grid: the governing window's sediment discharge and soil "
    "loss (t/ac) and the method class, with a .qml style beside it.",
)
@creation_options_option("--raster")
@click.option("--z-unit", type=Z_UNIT, default=None, help="Unit of the elevations when the DEM does not say.")
@band_option()
@layers_option(
    "Layer-set manifest (layers.toml): the sites are screened on it as `esc-gis screen` does (the jurisdiction "
    "and the rest); it gives the DEM and the soils when --dem and --soils (or --k) are not given "
    "[default: the Village's]."
)
@profile_option()
@output_option(
    "Output per site: .gpkg, .parquet, .geojson or .csv (phases and windows go to OUTPUT.phases.csv and "
    "OUTPUT.windows.csv, e.g. soil_loss.gpkg.phases.csv)."
)
@dst_crs_option()
@overwrite_option("Replace OUTPUT with its .phases.csv and .windows.csv, and the --raster with its .qml.")
@quiet_option("No summary.")
@reads("sites", "dem", "soils", "schedule", "disturbed", "ei_file", "layers_path", "profile_path")
def soil_loss_(**options: Any) -> None:
    """Compute each site's soil loss and sediment discharge per phase and 12-month window; write them to OUTPUT.

    A = R x %R(period) x K x LS x C per phase; LS from the DEM over the disturbed area, C and
    practice efficiencies from the profile's [soil_loss] tables; the governing window is
    compared with the profile's sediment standard where it reaches. Whether it reaches is the
    screening's answer for the same sites, limits and contract fields (plan_id, activity,
    state_agency, npdes_exempt) on --layers: a site outside the jurisdiction, a state agency's,
    an agricultural or silviculture activity, or one under the sediment area counting its common
    plan, is not judged (passes is empty) and its finding says why. Nothing is written if any
    input is bad.
    """
    # The work and its imports (geopandas, rasterio, the soil modules) load only when it runs,
    # so `esc-gis soil-loss --help` starts at once.
    from esc_gis.cli._soil_loss_run import run

    run(**options)
