"""``esc-gis --help`` starts at once (issue 36, item 5): it lists the commands without importing them.

A clerk's day is dozens of short commands, and the QGIS provider and the tests pay the start on
every call. The listing comes from :mod:`esc_gis.cli._catalogue`, the one home of each
command's module and one-line help; each command takes its ``short_help`` from there.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from esc_gis.cli._catalogue import COMMANDS
from esc_gis.cli.main import cli

HEAVY = ("geopandas", "rasterio", "pyogrio", "dask", "pygeoapi", "pandas", "shapely", "pyproj", "folium")


def test_the_top_help_imports_no_heavy_library() -> None:
    code = (
        "import sys\nfrom esc_gis.cli.main import cli\n"
        "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print('IMPORTED=' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Commands:" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "IMPORTED="


def test_the_listing_names_every_command_in_order() -> None:
    res = CliRunner().invoke(cli, ["--help"])
    assert res.exit_code == 0 and "Commands:" in res.output, res.output
    section = res.output.split("Commands:")[1]
    listed = [line.split()[0] for line in section.splitlines() if line[:2] == "  " and line[2:3].strip()]
    assert listed == list(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_takes_its_one_line_help_from_the_catalogue(name: str) -> None:
    command = cli.get_command(None, name)  # type: ignore[arg-type]
    assert command is not None and command.short_help == COMMANDS[name][1]


def _permits_subcommands() -> list[str]:
    group = cli.get_command(None, "permits")  # type: ignore[arg-type]
    return sorted(group.list_commands(None))  # type: ignore[union-attr, arg-type]


@pytest.mark.parametrize(
    "args",
    [[name, "--help"] for name in COMMANDS] + [["permits", sub, "--help"] for sub in _permits_subcommands()],
    ids=lambda a: " ".join(a[:-1]),
)
def test_every_commands_help_imports_no_heavy_library(args: list[str]) -> None:
    """Each command's options are declared without its work's imports (they load when it runs)."""
    code = (
        "import sys\nfrom esc_gis.cli.main import cli\n"
        f"try:\n    cli({args!r})\nexcept SystemExit:\n    pass\n"
        f"print('IMPORTED=' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage:" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "IMPORTED=", out.stdout.strip().splitlines()[-1]
