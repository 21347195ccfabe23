"""``esc-gis map``: an overview map of a screening run, or a map of one site."""

from __future__ import annotations

from pathlib import Path

import click

from esc_gis._outputs import reads
from esc_gis.cli._catalogue import short_help
from esc_gis.cli._options import (
    VECTOR,
    basemap_option,
    layers_option,
    offline_option,
    output_option,
    overwrite_option,
    profile_option,
    quiet_option,
    where_option,
)


@click.command(name="map", short_help=short_help("map"))
@click.argument("results", type=VECTOR)
@output_option("Output map (.html).")
@where_option("OGR SQL WHERE clause picking the rows of RESULTS to map, e.g. \"permit = 'required'\".")
@click.option("--site", "site_id", default=None, help="Map this one site with its surroundings (default: overview).")
@layers_option("Layer set for the boundary, waters, protective and targeted areas (default: the bundled one).")
@click.option("--disturbed", type=VECTOR, default=None, help="Disturbed limits, for --site.")
@click.option("--steep", type=VECTOR, default=None, help="Steep-land polygons (esc-gis steep), for --site.")
@basemap_option("Basemap shown first; the other stays one click away.")
@offline_option("Inline Leaflet: the file opens with no network (records, e-mail).")
@profile_option("Ordinance profile TOML (widths, names and citations); default: the bundled profile.")
@overwrite_option("Replace OUTPUT if it exists.")
@quiet_option("No summary.")
@reads("results", "layers_path", "disturbed", "steep", "profile_path")
def map_(
    results: str,
    output: str,
    where: str | None,
    site_id: str | None,
    layers_path: str | None,
    disturbed: str | None,
    steep: str | None,
    basemap: str,
    offline: bool,
    profile_path: str | None,
    overwrite: bool,
    quiet: bool,
) -> None:
    """Write an HTML map of RESULTS (the output of esc-gis screen) to OUTPUT.

    Without --site: every site coloured by its permit decision, with a legend and a count per
    class. With --site ID: that site, its disturbed limits, the jurisdiction's boundary, waters,
    protective areas, targeted areas and steep land, each a layer; the site's popup lists
    its decision, areas and findings with their citations.
    """
    # Imported here, not at the top: `esc-gis map --help` starts without geopandas and folium.
    from esc_gis.io import read_layer
    from esc_gis.layers import load_layers
    from esc_gis.maps import check_map_path, overview_map, site_map, write_map
    from esc_gis.profile import load_profile

    check_map_path(output, overwrite=overwrite)
    res = read_layer(results, where=where)
    prof = load_profile(None if profile_path is None else Path(profile_path))
    ls = load_layers(layers_path, profile=prof)
    if site_id is None:
        m = overview_map(res, layers=ls, basemap=basemap, offline=offline, source=results, profile=prof)
    else:
        m = site_map(
            res,
            site_id,
            layers=ls,
            disturbed=read_layer(disturbed) if disturbed else None,
            steep=read_layer(steep) if steep else None,
            basemap=basemap,
            offline=offline,
            source=results,
            profile=prof,
        )
    write_map(m, output, overwrite=overwrite)
    if not quiet:
        what = f"site {site_id}" if site_id else f"{len(res):,} sites"
        click.echo(f"Wrote {output}: {what}{', offline (Leaflet inlined)' if offline else ''}.")
