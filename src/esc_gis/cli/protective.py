"""``esc-gis protective``: the protective areas of a waters layer, for analysts to map."""

from __future__ import annotations

import click

from esc_gis.io import check_output_path, read_class_map, write_layer
from esc_gis.protective import protective_layer


def _class_map(values: tuple[str, ...]) -> dict[str, str] | None:
    """Merge ``--class-map`` values: files (.toml/.csv) and CODE=CLASS pairs, later ones winning."""
    out: dict[str, str] = {}
    for v in values:
        if "=" in v and not v.lower().endswith((".toml", ".csv")):
            code, cls = v.split("=", 1)
            out[code.strip()] = cls.strip()
        else:
            out.update(read_class_map(v))
    return out or None


@click.command(short_help="Protective areas of waters of the state (NR 151.125 widths).")
@click.argument("waters", type=click.Path(dir_okay=False), required=False)
@click.option("--layers", "layers_path", type=click.Path(), default=None,
              help="Use the waters of this layer set (layers.toml) instead of WATERS.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Output: .gpkg, .parquet, .geojson or .csv.")
@click.option("--class-field", default="water_class", show_default=True,
              help="Field holding each feature's water class (or the source's code, with --class-map).")
@click.option("--class-map", "class_maps", multiple=True, metavar="FILE|CODE=CLASS",
              help="Map the layer's own codes to water classes: a .toml/.csv file, or CODE=CLASS. Repeatable; "
                   "map a code to 'ignore' to drop its features.")
@click.option("--name-field", default=None, help="Field holding the water's name.")
@click.option("--channel-width-field", default=None,
              help="Field holding a line's channel width in feet (the strip is then measured from the banks).")
@click.option("--layer", default=None, help="Layer of WATERS to read, if it has several.")
@click.option("--assume-crs", default=None, metavar="CRS", help="CRS for WATERS if it has none.")
@click.option("--crs", default=None, help="Measuring and output CRS [default: the profile's, EPSG:7594].")
@click.option("--profile", "profile_path", type=click.Path(dir_okay=False), default=None,
              help="Ordinance profile TOML; default: the Village of Winneconne's.")
@click.option("--overwrite", is_flag=True, help="Replace OUTPUT if it exists.")
@click.option("-q", "--quiet", is_flag=True, help="No summary.")
def protective(waters: str | None, layers_path: str | None, output: str, class_field: str,
               class_maps: tuple[str, ...], name_field: str | None,
               channel_width_field: str | None, layer: str | None, assume_crs: str | None, crs: str | None,
               profile_path: str | None, overwrite: bool, quiet: bool) -> None:  # fmt: skip
    """Write the protective areas of WATERS (or of --layers' waters) to OUTPUT, by governing class and width.

    Widths come from the profile (NR 151.125(1), mirrored by § 540-20C(4)): lakes, streams and
    wetlands 50 ft, ORW/ERW and highly susceptible wetlands 75 ft, less susceptible wetlands 10 %
    of their average width (10-30 ft), concentrated-flow channels 10 ft. Where strips overlap
    the greatest width governs; the waters themselves are left out.
    """
    check_output_path(output, overwrite=overwrite)
    gdf = protective_layer(waters, layers=layers_path, profile=profile_path, crs=crs, class_field=class_field,
                           name_field=name_field, channel_width_field=channel_width_field,
                           class_map=_class_map(class_maps), layer=layer, assume_crs=assume_crs)  # fmt: skip
    write_layer(gdf, output, overwrite=overwrite, layer="protective_areas")
    if not quiet:
        for r in gdf.itertuples():
            line = " (from centrelines: approximates the top of channel)" if r.centreline else ""
            click.echo(f"{r.water_class:<28} {r.width_ft:>5g} ft  {r.area_sqft:>14,.0f} sq ft  {r.section}{line}")
        click.echo(f"Wrote {len(gdf)} protective-area part(s) to {output}.")
