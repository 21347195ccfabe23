"""The ``esc-gis`` click group: logging, version, and library errors turned into messages.

Any :class:`~esc_gis.errors.EscGisError` ends the command with ``Error: <message>`` on
standard error and exit status 1 (2 for usage errors, as click does); a user never sees a
traceback for bad input. The Python keywords a library message names (``overwrite=True``)
are shown as their flags (``--overwrite``): :mod:`esc_gis.cli._flags`.
"""

from __future__ import annotations

import importlib
import logging
import sys
import warnings
from typing import Any, TextIO

import click

from esc_gis import __version__
from esc_gis.cli._catalogue import COMMANDS
from esc_gis.cli._flags import cli_text
from esc_gis.cli._options import PROGRESS_MODE
from esc_gis.errors import EscGisError, EscGisWarning


class _Group(click.Group):
    """A click group with lazily imported commands that reports library errors as one message."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        # A command named like a builtin (map) is defined with a trailing underscore.
        # A hyphenated command (soil-loss) is defined as soil_loss_.
        attr = cmd_name.replace("-", "_")
        command: click.Command = getattr(module, attr, None) or getattr(module, f"{attr}_")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands from the catalogue, importing none of them (see :mod:`esc_gis.cli._catalogue`)."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        # A stand-in command shortens each line exactly as click shortens a real one's.
        rows = [
            (name, click.Command(name, short_help=text).get_short_help_str(limit))
            for name, (_, text) in COMMANDS.items()
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EscGisError as exc:
            raise click.ClickException(cli_text(str(exc))) from None


_python_showwarning = warnings.showwarning


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Show esc_gis's own warnings as one ``Warning: ...`` paragraph on stderr, others as Python does."""
    if issubclass(category, EscGisWarning):
        click.echo(f"Warning: {cli_text(str(message))}", err=True)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="esc-gis")
@click.option("-v", "--verbose", count=True, help="More log output (repeatable).")
@click.option(
    "--progress",
    type=click.Choice(["bar", "plain"]),
    default="bar",
    show_default=True,
    help="How long work shows its progress: a bar on the terminal, or plain 'PROGRESS n%' lines on stderr "
    "for a program reading them (QGIS's Processing provider does).",
)
def cli(verbose: int, progress: str) -> None:
    """GIS screening for the Village of Winneconne's erosion-control ordinance (Ch. 540, Art. I)."""
    PROGRESS_MODE.set(progress)
    level = logging.WARNING - 10 * verbose
    warnings.showwarning = _show_warning
    logging.basicConfig(stream=sys.stderr, level=level, format="%(levelname)s %(name)s: %(message)s")
    # The level is also the handlers': a library that sets its own loggers to INFO (dask's
    # distributed does, about 24 lines a run) stays quiet unless -v asks for it.
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)
