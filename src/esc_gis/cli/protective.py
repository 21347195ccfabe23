"""``esc-gis protective``: the protective areas of a waters layer, for analysts to map."""

from __future__ import annotations

import click

from esc_gis._fields import DRAINAGE_FIELD, PIPED_FIELD
from esc_gis._outputs import reads
from esc_gis.cli._catalogue import short_help
from esc_gis.cli._options import (
    VECTOR,
    assume_crs_option,
    dst_crs_option,
    layers_option,
    output_layer_option,
    output_option,
    overwrite_option,
    profile_option,
    quiet_option,
    update_option,
)


def _class_map(values: tuple[str, ...]) -> dict[str, str] | None:
    """Merge ``--class-map`` values: files (.toml/.csv) and CODE=CLASS pairs, later ones winning."""
    from esc_gis.io import read_class_map

    out: dict[str, str] = {}
    for v in values:
        if "=" in v and not v.lower().endswith((".toml", ".csv")):
            code, cls = v.split("=", 1)
            out[code.strip()] = cls.strip()
        else:
            out.update(read_class_map(v))
    return out or None


@click.command(short_help=short_help("protective"))
@click.argument("waters", type=VECTOR, required=False)
@layers_option("Use the waters of this layer set (layers.toml) instead of WATERS.")
@output_option("Output: .gpkg, .parquet, .geojson or .csv.", stdout=True)
@output_layer_option("protective_areas")
@update_option()
@click.option(
    "--class-field",
    default="water_class",
    show_default=True,
    help="Field holding each feature's water class (or the source's code, with --class-map).",
)
@click.option(
    "--class-map",
    "class_maps",
    multiple=True,
    metavar="FILE|CODE=CLASS",
    help="Map the layer's own codes to water classes: a .toml/.csv file, or CODE=CLASS. Repeatable; "
    "map a code to 'ignore' to drop its features.",
)
@click.option("--name-field", default=None, help="Field holding the water's name.")
@click.option(
    "--channel-width-field",
    default=None,
    help="Field holding a line's channel width in feet (the strip is then measured from the banks).",
)
@click.option(
    "--piped-field",
    default=PIPED_FIELD,
    show_default=True,
    help="Field flagging a stream in a pipe or culvert (no strip); used when the layer has it.",
)
@click.option(
    "--drainage-field",
    default=DRAINAGE_FIELD,
    show_default=True,
    help="Field holding the acres a channel drains (concentrated-flow channels at or under the "
    "profile's minimum get no strip); used when the layer has it.",
)
@click.option("--layer", default=None, help="Layer of WATERS to read, if it has several.")
@assume_crs_option("CRS for WATERS if it has none.")
@dst_crs_option(old_name=True)
@profile_option("Ordinance profile TOML; default: the bundled profile.")
@overwrite_option("Replace OUTPUT if it exists.")
@quiet_option("No summary.")
@reads("waters", "layers_path", "class_maps", "profile_path")
def protective(
    waters: str | None,
    layers_path: str | None,
    output: str,
    output_layer: str,
    update: bool,
    class_field: str,
    class_maps: tuple[str, ...],
    name_field: str | None,
    channel_width_field: str | None,
    piped_field: str,
    drainage_field: str,
    layer: str | None,
    assume_crs: str | None,
    dst_crs: str | None,
    profile_path: str | None,
    overwrite: bool,
    quiet: bool,
) -> None:
    """Write the protective areas of WATERS (or of --layers' waters) to OUTPUT, by governing class and width.

    Widths come from the profile's protective_area entries (the NR 151.125(1) technical
    standard), measured from the top of the channel (a line's channel width) or the water's
    outline. Where strips overlap the greatest width governs; the waters themselves are left
    out, and piped streams and concentrated-flow channels draining too little get no strip.
    """
    # Imported here, not at the top: `esc-gis protective --help` starts without geopandas.
    from esc_gis.io import check_output_path, write_layer
    from esc_gis.protective import protective_layer

    check_output_path(output, overwrite=overwrite, update=update, layer=output_layer, dst_crs=dst_crs)
    gdf = protective_layer(
        waters,
        layers=layers_path,
        profile=profile_path,
        class_field=class_field,
        name_field=name_field,
        channel_width_field=channel_width_field,
        piped_field=piped_field,
        drainage_field=drainage_field,
        class_map=_class_map(class_maps),
        layer=layer,
        assume_crs=assume_crs,
    )
    write_layer(
        gdf, output, overwrite=overwrite, layer=output_layer, update=update, kind="protective_areas", dst_crs=dst_crs
    )
    if not quiet:
        for r in gdf.itertuples():
            line = " (from centrelines: approximates the top of channel)" if r.centreline else ""
            if r.channel_class_unverified:
                line += " (class taken as given: no drainage area to check)"
            click.echo(f"{r.water_class:<28} {r.width_ft:>5g} ft  {r.area_sqft:>14,.0f} sq ft  {r.section}{line}")
        click.echo(f"Wrote {len(gdf)} protective-area part(s) to {output}.")
