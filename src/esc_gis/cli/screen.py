"""``esc-gis screen``: screen sites or parcels against the ordinance; the options, and the work on demand."""

from __future__ import annotations

import gc
from typing import Any

import click

from esc_gis._outputs import reads
from esc_gis.cli._catalogue import short_help
from esc_gis.cli._options import (
    FILE,
    VECTOR,
    assume_crs_option,
    dst_crs_option,
    layers_option,
    offline_option,
    output_layer_option,
    output_option,
    overwrite_option,
    profile_option,
    quiet_option,
    update_option,
    where_option,
)


@click.command(short_help=short_help("screen"))
@click.argument("sites", type=VECTOR)
@click.option(
    "--disturbed",
    type=VECTOR,
    default=None,
    help="Disturbed-limit polygons carrying the site id; default: the whole site is disturbed "
    "(so is a site the limits do not name: warned, with a finding).",
)
@layers_option("Layer-set manifest (layers.toml); default: the Village's bundled set.")
@profile_option("Ordinance profile TOML; default: the one shipped with esc_gis.")
@click.option(
    "--ordinance-by",
    "--profile-by",
    "profile_by",
    default=None,
    metavar="LAYER:FIELD",
    help="Screen each site under the profile of the municipality it lies in: a jurisdictions layer and the "
    "field naming each feature's profile (a .toml beside the layer, or a bundled name). Sites in no "
    "municipality are reported not_covered; a site across two gets a row in each. The features naming "
    "one profile are one municipality. (--profile-by: its older name.)",
)
@click.option(
    "--municipality-field",
    default=None,
    metavar="FIELD",
    help="With --ordinance-by: the field naming each municipality (a unique code such as TIGER's GEOID) to "
    "label the rows; each municipality must name one profile, and each profile one municipality.",
)
@click.option(
    "--batch-rows",
    type=click.IntRange(1),
    default=None,
    metavar="N",
    help="Read, screen and write N features at a time: memory stays flat whatever the layer's size (a "
    "county's or the state's parcels). Same rows as the whole-file run. Outputs .gpkg, .parquet or .csv. "
    "Without it, a layer of over 50,000 features is streamed in batches of 50,000 (not with --map, "
    "--ordinance-by, --update, --output-layer or a .geojson output).",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="local: this process. dask: the batches on a dask.distributed cluster (same rows; implies "
    "--batch-rows, default 50000): this machine's cores, or --scheduler's.",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="tcp://HOST:PORT",
    help="With --engine dask: a running scheduler (its workers must read SITES at the same path).",
)
@click.option(
    "--workers",
    type=click.IntRange(1),
    default=None,
    help="With --engine dask: local worker processes (default: the cores).",
)
@click.option(
    "--id-field",
    default="site_id",
    show_default=True,
    help="Field holding the unique site id (a Wisconsin V10 parcel layer without site_id: PARCELID).",
)
@click.option(
    "--field",
    "fields",
    multiple=True,
    metavar="NAME=SOURCE",
    help="Read contract field NAME (plan_id, activity, state_agency, npdes_exempt) from SOURCE. Repeatable.",
)
@assume_crs_option("CRS for inputs that have none (e.g. EPSG:7594). Never overrides a file's own CRS.")
@click.option("--layer", "sites_layer", default=None, help="Layer of SITES to read, if it has several.")
@click.option("--disturbed-layer", default=None, help="Layer of --disturbed to read, if it has several.")
@where_option("OGR SQL WHERE clause picking the SITES to read, e.g. \"CONAME = 'WINNEBAGO'\".")
@click.option("--disturbed-where", default=None, metavar="SQL", help="OGR SQL WHERE clause for --disturbed.")
@click.option(
    "--skip-ids",
    default="auto",
    show_default=True,
    metavar="auto|none|REGEX",
    help="Features that are not sites, by id: auto = the parcel schema's rule (V10: ROW, HYDRO, RAIL, GAP, "
    "123ROW, ...), none, or a regular expression the whole id matches. Skipped features go to "
    "OUTPUT.skipped.EXT beside OUTPUT (screening.gpkg.skipped.gpkg); while a rule is in force a site "
    "without an id is screened as row:<n>.",
)
@output_option("Output: .gpkg, .parquet, .geojson or .csv (geometry as WKT).", stdout=True)
@click.option(
    "--map",
    "map_path",
    type=FILE,
    default=None,
    help="Also write an overview map of the run (HTML), sites coloured by permit decision.",
)
@offline_option("With --map: inline Leaflet so the map opens with no network.")
@output_layer_option("screening")
@update_option()
@dst_crs_option()
@overwrite_option("Replace OUTPUT with its sidecars (OUTPUT.skipped.EXT, OUTPUT.run_findings.csv), and the map.")
@quiet_option("No progress bar or summary.")
@reads("sites", "disturbed", "layers_path", "profile_path")
def screen(**options: Any) -> None:
    """Screen SITES (any polygon layer GDAL reads, zipped shapefiles too) and write OUTPUT.

    One row per site: jurisdiction, disturbed area (a union: overlaps count once; common
    plans added up), permit decision, standards, protective-area overlap, distance to water,
    and findings citing their sections.
    """
    # Before any thread allocates: a streamed run's reader and writer threads would each keep
    # an arena of freed memory (about 50 MB at a million parcels).
    from esc_gis._threads import few_malloc_arenas

    few_malloc_arenas()
    # The work and its imports (geopandas, the screening, rich's tables) load only when it runs,
    # so `esc-gis screen --help` starts at once.
    from esc_gis.cli._screen_run import run

    # The modules just imported live as long as the process: set apart from the garbage
    # collector, its full passes no longer walk them (a tenth of a second each, several a run).
    gc.freeze()
    run(**options)
