"""The commands of ``esc-gis``: the module defining each and its one-line help, in one place.

``esc-gis --help`` lists the commands from here without importing them (each imports geopandas,
rasterio or pygeoapi, a second or more at start), and each command takes its ``short_help``
from here, so the listing and the command never disagree.
"""

from __future__ import annotations

__all__ = ["COMMANDS", "short_help"]

#: Command name -> (module defining it, its one-line help).
COMMANDS: dict[str, tuple[str, str]] = {
    "screen": ("esc_gis.cli.screen", "Screen sites or parcels against Chapter 540, Article I."),
    "slope": ("esc_gis.cli.slope", "Slope in percent (Horn, as gdaldem slope -p)."),
    "steep": ("esc_gis.cli.steep", "Polygons of land at or above a slope threshold."),
    "protective": ("esc_gis.cli.protective", "Protective areas of waters of the state (NR 151.125 widths)."),
    "map": ("esc_gis.cli.map", "Map screening results (folium HTML), online or --offline."),
    "rules": (
        "esc_gis.cli.rules",
        "Print the ordinance profile: numbers, triggers and findings, each with its citation.",
    ),
    "permits": (
        "esc_gis.cli.permits",
        "The permit registry: add, move through the life cycle, due dates, public map.",
    ),
    "review": ("esc_gis.cli.review", "Review a plan package: plan checklist, BMP checks, HTML report."),
    "soil-loss": ("esc_gis.cli.soil_loss", "Soil loss and sediment discharge per site and phase (RUSLE, WDNR method)."),
    "serve": ("esc_gis.cli.serve", "Serve the public map and 'Do I need a permit?' as OGC API (pygeoapi)."),
}


def short_help(name: str) -> str:
    """Return the one-line help of command ``name``.

    Raises
    ------
    KeyError
        If there is no such command.
    """
    return COMMANDS[name][1]
