"""``esc-gis steep``: polygons of land at or above a slope threshold (20 % by default)."""

from __future__ import annotations

import click

from esc_gis._outputs import reads
from esc_gis.cli._catalogue import short_help
from esc_gis.cli._options import (
    dst_crs_option,
    output_layer_option,
    output_option,
    overwrite_option,
    progress_bar,
    quiet_option,
    update_option,
)
from esc_gis.cli.slope import Z_UNIT, band_option


@click.command(short_help=short_help("steep"))
@click.argument("dem", type=click.Path())
@output_option("Output: .gpkg, .parquet, .geojson or .csv.", stdout=True)
@output_layer_option("steep")
@update_option()
@click.option(
    "--threshold-pct",
    type=float,
    default=None,
    help="Slope threshold in percent [default: the profile's steep-slope threshold].",
)
@click.option("--min-area-sqft", type=float, default=0.0, show_default=True, help="Drop smaller specks.")
@click.option("--z-unit", type=Z_UNIT, default=None, help="Unit of the elevations when the DEM does not say.")
@dst_crs_option(old_name=True)
@click.option("--compute-edges", is_flag=True, help="As gdaldem -compute_edges.")
@band_option()
@overwrite_option("Replace OUTPUT if it exists.")
@quiet_option("No progress bar.")
@reads("dem")
def steep(
    dem: str,
    output: str,
    output_layer: str,
    update: bool,
    threshold_pct: float | None,
    min_area_sqft: float,
    z_unit: str | None,
    dst_crs: str | None,
    compute_edges: bool,
    band: int | None,
    overwrite: bool,
    quiet: bool,
) -> None:
    """Write dissolved polygons of DEM's land at or above the threshold slope to OUTPUT."""
    # Imported here, not at the top: `esc-gis steep --help` starts without geopandas and rasterio.
    from esc_gis.io import check_output_path, write_layer
    from esc_gis.profile import load_profile
    from esc_gis.terrain import steep_polygons

    check_output_path(output, overwrite=overwrite, update=update, layer=output_layer, dst_crs=dst_crs)
    profile = load_profile()
    threshold = threshold_pct if threshold_pct is not None else float(profile.entry("thresholds.steep_slope").value)  # type: ignore[arg-type]
    with progress_bar("steep land", quiet=quiet) as bar:
        task = bar.add_task("steep", total=1.0)
        gdf = steep_polygons(
            dem,
            crs=profile.measure_crs,  # measured there; --dst-crs is only how the output is written
            threshold_pct=threshold,
            min_area_sqft=min_area_sqft,
            z_unit=z_unit,
            band=band,
            compute_edges=compute_edges,
            progress=lambda f: bar.update(task, completed=f),
        )
    write_layer(gdf, output, overwrite=overwrite, layer=output_layer, update=update, kind="steep", dst_crs=dst_crs)
    if not quiet:
        click.echo(
            f"Wrote {len(gdf)} polygon(s), {gdf['area_sqft'].sum():,.0f} sq ft at {threshold:g} % or more, to {output}."
        )
