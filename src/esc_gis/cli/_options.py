"""Options shared by the commands, and their progress bar: one definition each, so every command looks alike.

Each is a factory returning a click decorator; a command passes the help text that says
what the option means for it.
"""

from __future__ import annotations

__all__ = [
    "FILE",
    "PROGRESS_MODE",
    "VECTOR",
    "PlainProgress",
    "assume_crs_option",
    "basemap_option",
    "creation_options_option",
    "dst_crs_option",
    "layers_option",
    "offline_option",
    "output_layer_option",
    "output_option",
    "overwrite_option",
    "profile_option",
    "progress_bar",
    "quiet_option",
    "update_option",
    "where_option",
]

import os
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    # rich is imported by the work that shows a bar: a command printing a few rows (permits show,
    # permits due) starts without it, a tenth of a second.
    from rich.console import Console
    from rich.progress import Progress, TaskID

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class _PathType(click.ParamType):
    """A path checked by the library, not by click: a bad path exits 1 with a message.

    click's own ``Path`` type refuses a folder or a missing file with a *usage* error (exit
    2), which the README promises never to use for paths. ``folder_ok`` says whether a
    folder is a valid value (a File Geodatabase, a folder of shapefiles); a folder where a
    file is wanted, or the folder that holds it missing, is refused here with exit 1;
    whether a file exists is for the reader to say, naming what it expected.
    """

    def __init__(self, *, folder_ok: bool) -> None:
        self.folder_ok = folder_ok
        self.name = "path" if folder_ok else "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = os.fspath(value)
        if not self.folder_ok and os.path.isdir(text):
            what = param.human_readable_name if param is not None else "the path"
            msg = f"{text!r} ({what}) is a folder; give a file."
            raise click.ClickException(msg)  # exit 1, not click's usage error
        return text


#: A vector input: a file, or a folder GDAL opens (``sites.gdb/``, a folder of shapefiles).
VECTOR = _PathType(folder_ok=True)
#: A path that must be a file (an output, a CSV, a TOML): a folder is refused with exit 1.
FILE = _PathType(folder_ok=False)


def where_option(
    help: str = "OGR SQL WHERE clause picking the features to read (e.g. \"CONAME = 'WINNEBAGO'\").",
) -> Decorator:
    """``--where SQL``: passed to GDAL while reading, so a statewide file is cut as it is read."""
    return click.option("--where", default=None, metavar="SQL", help=help)


def layers_option(help: str = "Layer-set manifest (layers.toml); default: the bundled set.") -> Decorator:
    """``--layers PATH`` (as ``layers_path``): the layer-set manifest."""
    return click.option("--layers", "layers_path", type=click.Path(), default=None, help=help)


def profile_option(help: str = "Ordinance profile TOML; default: the one shipped with esc_gis.") -> Decorator:
    """``--ordinance PATH`` (as ``profile_path``): the ordinance profile; ``--profile`` is its older name.

    rio's ``--profile`` names GDAL creation options, so the ordinance's file is ``--ordinance``;
    ``--profile`` stays accepted, so scripts and saved QGIS models keep working.
    """
    return click.option(
        "--ordinance",
        "--profile",
        "profile_path",
        type=FILE,
        default=None,
        help=f"{help} (--profile: its older name.)",
    )


def _output_value(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Keep standard output for the layer when OUTPUT is ``-`` (or ``/vsistdout/``): all else goes to stderr."""
    from esc_gis._vsi import is_stdout, release_stdout, reserve_stdout

    if is_stdout(value):
        reserve_stdout()
        ctx.call_on_close(release_stdout)
    return value


def output_option(help: str, *, stdout: bool = False) -> Decorator:
    """``-o/--output PATH``, required: the file to write (never a folder).

    ``stdout``: the command writes a vector layer, which ``-o -`` sends to standard output as
    GeoJSON; its messages then go to stderr (:func:`esc_gis._vsi.reserve_stdout`).
    """
    if stdout:
        help += " '-': GeoJSON to standard output (messages to stderr)."
        return click.option("-o", "--output", required=True, type=FILE, callback=_output_value, help=help)
    return click.option("-o", "--output", required=True, type=FILE, help=help)


def _name_values(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    """Read repeated ``NAME=VALUE`` into a dict (names upper-cased, as GDAL takes them)."""
    out: dict[str, str] = {}
    for pair in values:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{pair!r} is not NAME=VALUE (e.g. --co ZLEVEL=9).", ctx=ctx, param=param)
        out[name.strip().upper()] = value
    return out


def creation_options_option(what: str = "the output raster", *, cog: bool = False) -> Decorator:
    """``--co NAME=VALUE`` (repeatable): GDAL creation options, as rio and gdal_translate take them."""
    driver = "GTiff's; COG's with --cog" if cog else "GTiff's"
    return click.option(
        "--co",
        "creation_options",
        multiple=True,
        metavar="NAME=VALUE",
        callback=_name_values,
        help=f"A GDAL creation option of {what} ({driver}), over esc-gis's own, as rio's --co. Repeatable; "
        "a name the driver does not have is refused.",
    )


def output_layer_option(default: str) -> Decorator:
    """``--output-layer NAME``: the layer's name in a GeoPackage OUTPUT."""
    return click.option(
        "--output-layer",
        default=default,
        show_default=True,
        metavar="NAME",
        help="The layer's name in a GeoPackage OUTPUT (as ogr2ogr's -nln).",
    )


def dst_crs_option(*, old_name: bool = False) -> Decorator:
    """``--dst-crs CRS`` (as ``dst_crs``): the CRS the output is written in, as rio's; measuring never changes.

    ``old_name`` also takes ``--crs``, the older name in ``steep`` and ``protective``.
    """
    names = ("--dst-crs", "--crs") if old_name else ("--dst-crs",)
    return click.option(
        *names,
        "dst_crs",
        default=None,
        metavar="CRS",
        help="CRS the output is written in, as rio's --dst-crs: any CRS (EPSG:4326 too); areas and distances are "
        "measured in the profile's measuring CRS whatever it is [default: that CRS]."
        + (" --crs: the older name." if old_name else ""),
    )


def update_option() -> Decorator:
    """``--update``: add the layer to an existing GeoPackage OUTPUT instead of refusing or replacing it."""
    return click.option(
        "--update",
        is_flag=True,
        help="Add the layer to an existing GeoPackage OUTPUT, keeping its other layers (as ogr2ogr -update); "
        "a layer of the same name is refused, or with --overwrite replaced, the rest of the file untouched.",
    )


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


#: How long work shows its progress: ``bar`` (rich, on a terminal) or ``plain`` (``esc-gis --progress plain``).
PROGRESS_MODE: ContextVar[str] = ContextVar("esc_gis_progress", default="bar")


class PlainProgress:
    """Progress as plain lines on stderr, ``PROGRESS 42%``, one per whole percent (``--progress plain``).

    For a program reading esc-gis's output (QGIS's Processing provider, a script): no terminal
    codes, and each line says how far the work is. It answers the calls a rich ``Progress`` gets
    here (``add_task``, ``update``, the ``with`` block), so a command need not know which it has.
    """

    def __init__(self, *, disable: bool = False) -> None:
        self.disable = disable
        self._tasks: dict[int, dict[str, Any]] = {}
        self._said = -1

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self._say(100)

    def add_task(self, description: str, total: float | None = 1.0, **fields: Any) -> TaskID:
        """Start a task; its progress is ``completed / total``."""
        from rich.progress import TaskID

        # rich's task id type, so either bar's id goes to either bar's update.
        task = TaskID(len(self._tasks))
        self._tasks[task] = {"total": total, "completed": 0.0}
        return task

    def update(self, task: int, *, completed: float | None = None, total: float | None = None, **_: Any) -> None:
        """Record the task's progress, and say it when the whole percent changes."""
        state = self._tasks[task]
        if total is not None:
            state["total"] = total
        if completed is not None:
            state["completed"] = completed
        if state["total"]:
            self._say(int(100 * min(max(state["completed"] / state["total"], 0.0), 1.0)))

    def _say(self, pct: int) -> None:
        if not self.disable and pct > self._said:
            self._said = pct
            click.echo(f"PROGRESS {pct}%", err=True)


def progress_bar(label: str, *, quiet: bool, console: Console | None = None) -> Progress | PlainProgress:
    """Return the bar long work shows on stderr (gone when done; none with ``--quiet``).

    ``label`` is a rich format string; ``"{task.description}"`` shows each stage's name. With
    ``esc-gis --progress plain``, plain ``PROGRESS n%`` lines instead (:class:`PlainProgress`).
    """
    if PROGRESS_MODE.get() == "plain":
        return PlainProgress(disable=quiet)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn(label),
        BarColumn(),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        disable=quiet,
        transient=True,
    )
