"""Options shared by the commands, and their progress bar: one definition each, so every command looks alike.

Each is a factory returning a click decorator; a command passes the help text that says
what the option means for it.
"""

from __future__ import annotations

__all__ = [
    "assume_crs_option",
    "basemap_option",
    "layers_option",
    "offline_option",
    "output_option",
    "overwrite_option",
    "profile_option",
    "progress_bar",
    "quiet_option",
]

from collections.abc import Callable
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def layers_option(help: str = "Layer-set manifest (layers.toml); default: the bundled set.") -> Decorator:
    """``--layers PATH`` (as ``layers_path``): the layer-set manifest."""
    return click.option("--layers", "layers_path", type=click.Path(), default=None, help=help)


def profile_option(help: str = "Ordinance profile TOML; default: the one shipped with esc_gis.") -> Decorator:
    """``--profile PATH`` (as ``profile_path``): the ordinance profile."""
    return click.option("--profile", "profile_path", type=click.Path(dir_okay=False), default=None, help=help)


def output_option(help: str) -> Decorator:
    """``-o/--output PATH``, required: the file to write (never a folder)."""
    return click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help=help)


def overwrite_option(help: str = "Replace OUTPUT if it exists.") -> Decorator:
    """``--overwrite``: without it an existing output is refused, as ``rio`` does."""
    return click.option("--overwrite", is_flag=True, help=help)


def quiet_option(help: str = "No summary.") -> Decorator:
    """``-q/--quiet``."""
    return click.option("-q", "--quiet", is_flag=True, help=help)


def assume_crs_option(help: str = "CRS of layers that have none (e.g. EPSG:7594).") -> Decorator:
    """``--assume-crs CRS``: assigned to inputs without one, never overriding a file's own."""
    return click.option("--assume-crs", default=None, metavar="CRS", help=help)


def basemap_option(help: str | None = None) -> Decorator:
    """``--basemap osm|aerial|none``."""
    choice = click.Choice(["osm", "aerial", "none"])
    return click.option("--basemap", type=choice, default="osm", show_default=True, help=help)


def offline_option(help: str = "Inline Leaflet in the map: it opens with no network.") -> Decorator:
    """``--offline``: a self-contained page."""
    return click.option("--offline", is_flag=True, help=help)


def progress_bar(label: str, *, quiet: bool, console: Console | None = None) -> Progress:
    """Return the bar long work shows on stderr (gone when done; none with ``--quiet``).

    ``label`` is a rich format string; ``"{task.description}"`` shows each stage's name.
    """
    return Progress(
        TextColumn(label),
        BarColumn(),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        disable=quiet,
        transient=True,
    )
