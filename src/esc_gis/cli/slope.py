"""``esc-gis slope``: slope in percent from a DEM, as ``gdaldem slope -p`` computes it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from esc_gis._outputs import reads
from esc_gis.cli._catalogue import short_help
from esc_gis.cli._options import (
    creation_options_option,
    output_option,
    overwrite_option,
    progress_bar,
    quiet_option,
)
from esc_gis.terrain._formats import COMPRESSIONS

Z_UNIT = click.Choice(["m", "ft", "us_ft"])


def band_option() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--band N`` (or rio's ``--bidx N``): the DEM band holding the elevations (required for multi-band rasters)."""
    return click.option(
        "--bidx",
        "--band",
        "band",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="Band holding the elevations, as rio's --bidx (--band: the older name); required when the DEM "
        "has more than one band.",
    )


@click.command(short_help=short_help("slope"))
@click.argument("dem", type=click.Path())
@output_option("Output GeoTIFF (.tif).")
@click.option(
    "--z-unit", type=Z_UNIT, default=None, help="Unit of the elevations when the DEM's CRS and band do not say."
)
@click.option(
    "--compute-edges",
    is_flag=True,
    help="Compute edge cells and cells next to nodata, as gdaldem -compute_edges (default: nodata).",
)
@band_option()
@click.option("--cog", is_flag=True, help="Write a Cloud Optimized GeoTIFF (default: tiled GeoTIFF with overviews).")
@click.option(
    "--compress",
    type=click.Choice(COMPRESSIONS),
    default=COMPRESSIONS[0],
    show_default=True,
    help="Output compression: zstd is about 3x faster than deflate for the same size, but ArcMap "
    "and GDAL before 2.3 cannot read it; none is fastest and largest.",
)
@creation_options_option(cog=True)
@overwrite_option("Replace OUTPUT if it exists.")
@quiet_option("No progress bar.")
@reads("dem")
def slope(
    dem: str,
    output: str,
    z_unit: str | None,
    compute_edges: bool,
    band: int | None,
    cog: bool,
    compress: str,
    creation_options: dict[str, str],
    overwrite: bool,
    quiet: bool,
) -> None:
    """Write the slope of DEM in percent to OUTPUT (float32, nodata -9999).

    Horn's 3x3 method, with the same float32 arithmetic as gdaldem, so the values are
    identical to `gdaldem slope -p`. Cells whose 3x3 window has nodata or leaves the raster
    are nodata unless --compute-edges is given. Geographic DEMs are scaled row by row for
    latitude. DEM is any raster GDAL reads (GeoTIFF, COG, .vrt) or a folder of tiles on one
    grid; it is streamed in strips cut at its own blocks, so memory stays flat however large
    it is. OUTPUT is tiled and compressed (deflate unless --compress), with overviews (a COG
    with --cog), and
    records the DEM band used. Beside it goes a QGIS style of the same stem (.qml), which
    QGIS loads with the raster: slope classes cut at the profile's steep-slope threshold.
    """
    # Imported here, not at the top: `esc-gis slope --help` starts without rasterio and numpy.
    from esc_gis.profile import load_profile
    from esc_gis.terrain import write_slope

    with progress_bar("slope", quiet=quiet) as bar:
        task = bar.add_task("slope", total=1.0)
        info = write_slope(
            dem,
            output,
            z_unit=z_unit,
            band=band,
            compute_edges=compute_edges,
            cog=cog,
            compress=compress,
            creation_options=creation_options,
            overwrite=overwrite,
            progress=lambda f: bar.update(task, completed=f),
            style_steep_pct=float(load_profile().entry("thresholds.steep_slope").value),  # type: ignore[arg-type]
        )
    if not quiet:
        click.echo(
            f"Wrote {output}: {info.width} x {info.height} cells, slope in percent (Horn), "
            f"elevations in {info.z_unit} ({info.z_unit_source}), {info.band_label}."
        )
