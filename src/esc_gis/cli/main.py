"""The ``esc-gis`` click group: logging, version, and library errors turned into messages.

Any :class:`~esc_gis.errors.EscGisError` ends the command with ``Error: <message>`` on
standard error and exit status 1 (2 for usage errors, as click does); a user never sees a
traceback for bad input.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import click

from esc_gis import __version__
from esc_gis.errors import EscGisError


class _Group(click.Group):
    """A click group that reports library errors as one message, without a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EscGisError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="esc-gis")
@click.option("-v", "--verbose", count=True, help="More log output (repeatable).")
def cli(verbose: int) -> None:
    """GIS screening for the Village of Winneconne's erosion-control ordinance (Ch. 540, Art. I)."""
    level = logging.WARNING - 10 * verbose
    logging.basicConfig(stream=sys.stderr, level=level, format="%(levelname)s %(name)s: %(message)s")


def _register() -> None:
    from esc_gis.cli.rules import rules
    from esc_gis.cli.screen import screen
    from esc_gis.cli.slope import slope
    from esc_gis.cli.steep import steep

    for command in (screen, slope, steep, rules):
        cli.add_command(command)


_register()
