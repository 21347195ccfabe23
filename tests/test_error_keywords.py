"""Errors name what their reader types: the keyword for a Python caller, the flag on the command line.

The library's messages name keywords (``assume_crs="EPSG:XXXX"``, ``overwrite=True``,
``on=2062-01-01``); the command line respells them from one table
(:data:`esc_gis.cli._flags.FLAGS`). Each pair of tests below makes the same mistake from
Python and from ``esc-gis``, and checks each names its own spelling and not the other's.
"""

from __future__ import annotations

import ast
import warnings
from datetime import date
from pathlib import Path

import click
import geopandas as gpd
import pytest
from click.testing import CliRunner

import esc_gis
from esc_gis._outputs import check_target
from esc_gis.cli._catalogue import COMMANDS
from esc_gis.cli._flags import FLAGS, cli_text
from esc_gis.cli.main import cli
from esc_gis.errors import OutputExistsError, ValidationError
from esc_gis.registry import init_registry, open_registry

from .conftest import add_active, box

SRC = Path(esc_gis.__file__).resolve().parent


def _no_crs(tmp_path: Path) -> Path:
    src = tmp_path / "naive.shp"
    with warnings.catch_warnings():  # geopandas warns that the file will have no CRS: that is the point
        warnings.simplefilter("ignore", UserWarning)
        gpd.GeoDataFrame({"site_id": ["A"]}, geometry=[box(100, 100, 200, 200)]).to_file(src, engine="pyogrio")
    return src


def test_a_layer_without_a_crs_names_the_keyword_in_python_and_the_flag_on_the_command_line(tmp_path, layers_path):
    src = _no_crs(tmp_path)
    with pytest.raises(ValueError) as err:  # the screening's ValidationError, every problem at once
        esc_gis.screen(src, layers=layers_path)
    assert 'assume_crs="EPSG:XXXX"' in str(err.value) and "--assume-crs" not in str(err.value)
    r = CliRunner().invoke(cli, ["screen", str(src), "--layers", str(layers_path), "-o", str(tmp_path / "o.gpkg")])
    assert r.exit_code == 1 and "--assume-crs EPSG:XXXX" in r.output and "assume_crs" not in r.output, r.output


def test_an_existing_output_names_overwrite_true_in_python_and_the_flag_on_the_command_line(tmp_path, layers_path):
    out = tmp_path / "out.gpkg"
    out.write_bytes(b"")
    with pytest.raises(OutputExistsError) as err:
        check_target(out, overwrite=False)
    assert "pass overwrite=True to replace it" in str(err.value) and "--overwrite" not in str(err.value)
    sites = tmp_path / "sites.gpkg"
    gpd.GeoDataFrame({"site_id": ["A"]}, geometry=[box(100, 100, 200, 200)], crs="EPSG:7594").to_file(sites)
    r = CliRunner().invoke(cli, ["screen", str(sites), "--layers", str(layers_path), "-o", str(out)])
    assert r.exit_code == 1 and "pass --overwrite to replace it" in r.output and "overwrite=" not in r.output, r.output


def test_a_registry_date_names_the_keyword_in_python_and_the_flag_on_the_command_line(tmp_path, layer_set, layers_path):
    target = str(tmp_path / "permits.gpkg")
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set) as reg:
        n = add_active(reg)
        with pytest.raises(ValidationError) as err:
            reg.extend(n, 30, on=date(2062, 1, 1))
        with pytest.raises(ValidationError) as fee:
            reg.record_fee(n, kind=" ", amount=1.0, paid_on=None, receipt="")
    assert "on=2062-01-01 is after today" in str(err.value) and "--on" not in str(err.value)
    said = str(fee.value)
    assert "(kind=" in said and "(paid_on=YYYY-MM-DD)" in said and "(receipt=)" in said and "--" not in said
    args = ["permits", "extend", target, n, "30", "--on", "2062-01-01", "--layers", str(layers_path)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 1 and "--on 2062-01-01 is after today" in r.output and "on=" not in r.output, r.output


@pytest.mark.parametrize(
    ("python", "command_line"),
    [
        ('give assume_crs="EPSG:XXXX" (e.g. EPSG:7594).', "give --assume-crs EPSG:XXXX (e.g. EPSG:7594)."),
        ("exists; pass overwrite=True to replace it.", "exists; pass --overwrite to replace it."),
        ("inspected_at=2026-11-27 10:00 CST is later", "--at 2026-11-27 10:00 CST is later"),
        ("give inspected_at=YYYY-MM-DDTHH:MM.", "give --at YYYY-MM-DDTHH:MM."),
        ('record it with an office inspection (by="office").', "record it with an office inspection (--by office)."),
        ("leave out pre_start=True.", "leave out --pre-start."),
        ("the fee has no receipt number (receipt=).", "the fee has no receipt number (--receipt)."),
        # Words, values and other keywords stay as they are.
        ("the layer's owner= and a field=x, on the day", "the layer's owner= and a field=x, on the day"),
        ("--where \"site_id='S9'\" matches no feature", "--where \"site_id='S9'\" matches no feature"),
        ("map it with --field received_on=COLUMN", "map it with --field received_on=COLUMN"),
    ],
)
def test_the_command_line_respells_each_keyword_as_its_flag(python: str, command_line: str) -> None:
    assert cli_text(python) == command_line


def test_every_flag_of_the_table_is_an_option_of_a_command() -> None:
    """A flag the table names that no command takes would send a reader to an option that does not exist."""
    ctx = click.Context(cli)
    options: set[str] = set()
    stack = [cli.get_command(ctx, name) for name in COMMANDS]
    while stack:
        command = stack.pop()
        if isinstance(command, click.Group):
            stack += [command.get_command(ctx, name) for name in command.list_commands(ctx)]
        for param in command.params:
            options.update(o for o in [*param.opts, *param.secondary_opts] if o.startswith("--"))
    assert sorted(set(FLAGS.values()) - options) == []


#: The modules a Python caller of the registry meets first, whose messages name keywords only.
KEYWORD_MODULES = [
    "_outputs.py",
    "crs.py",
    "layers.py",
    "registry/domain/amendments.py",
    "registry/domain/dates.py",
    "registry/domain/fees.py",
    "registry/domain/inspections.py",
    "registry/domain/lifecycle.py",
    "registry/service/_core.py",
    "registry/service/inspecting.py",
    "registry/service/money.py",
    "registry/service/moves.py",
]


@pytest.mark.parametrize("module", KEYWORD_MODULES)
def test_library_messages_name_no_flag(module: str) -> None:
    """A string of the module's code (not a docstring) never holds ``--flag``: a Python caller cannot type one."""
    import re

    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node) is not None
    }
    flags = [
        (node.lineno, m.group())
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        for m in re.finditer(r"(?<![\w-])--[a-z][a-z-]*", node.value)
    ]
    assert flags == []
