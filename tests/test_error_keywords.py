"""Errors name what their reader types: the keyword for a Python caller, the flag on the command line.

The library's messages name keywords (``assume_crs="EPSG:XXXX"``, ``overwrite=True``,
``on=2062-01-01``); the command line respells them from one table
(:data:`esc_gis.cli._flags.FLAGS`). Each pair of tests below makes the same mistake from
Python and from ``esc-gis``, and checks each names its own spelling and not the other's.
"""

from __future__ import annotations

import ast
import re
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
from esc_gis.registry.views.reports import _CHROMIUM_ARGS  # the browser's own flags, allowed where they are

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
        # A mapping is one NAME=VALUE flag per item; a value the shell would split keeps its quotes.
        ('with fields={"site_address": "COLUMN"} (its', "with --field site_address=COLUMN (its"),
        ("field_map={'activity': 'NOPE'}: there is", "--field activity=NOPE: there is"),
        ("creation_options={'NOSUCH': '1'}: GDAL's", "--co NOSUCH=1: GDAL's"),
        ("where=\"permit = 'required'\" matches 2", "--where \"permit = 'required'\" matches 2"),
        ("site_id='S09' matches none", "--site-id S09 matches none"),
        ("skip_ids='ROW(' is not valid", "--skip-ids 'ROW(' is not valid"),
        # Rasters, soils, roles, amendments, enforcement and appeals.
        ("Say which with band=N (band = N in", "Say which with --band N (band = N in"),
        ("give it with z_unit=m|ft|us_ft (or z_unit in", "give it with --z-unit m|ft|us_ft (or z_unit in"),
        (
            "name the K field with k_field=, or give one K with k=.",
            "name the K field with --k-field, or give one K with --k.",
        ),
        ("plan_disturbed_sqft=: 50,000.0 sq ft", "--plan-disturbed-sqft: 50,000.0 sq ft"),
        ('give one (prefix="village") or', "give one (--role-prefix village) or"),
        ("which one the amended plan answers (notice_id=N).", "which one the amended plan answers (--notice N)."),
        ("come from: costs_from=billed or guarantee", "come from: --costs-from billed or guarantee"),
        ("record approves=True or approves=False.", "record --approves or --stands."),
        ("approves= is for a modified decision", "--approves/--stands is for a modified decision"),
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
    flags = {flag for pair in FLAGS.values() for flag in pair.split("/")}  # a boolean's pair: both exist
    assert sorted(flags - options) == []


#: Every module of the library: the command line's modules (cli/) are the only ones that name flags.
LIBRARY_MODULES = sorted(
    p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] != "cli"
)

#: The few strings outside cli/ that name flags on purpose, by module: each is text for a program
#: or for the command line's reference, never a message a Python caller is asked to act on.
FLAGS_ALLOWED: dict[str, set[str]] = {
    # Chromium's own command line, run to print a report to PDF.
    "registry/views/reports.py": {*_CHROMIUM_ARGS, "--user-data-dir", "--print-to-pdf"},
    # The file formats' reference (esc-gis formats, the docs): which command-line option reads each file.
    "config/__init__.py": {
        "--profile",
        "--layers",
        "--calendar",
        "--fees",
        "--schedule",
        "--class-map",
        "--write-config",
        "--pygeoapi-overrides",
    },
    "config/layers.py": {"--fees"},
    "config/plan.py": {"--schedule", "--ei-file"},
    "config/service.py": {"--max-body-bytes", "--max-vertices", "--max-site-acres", "--timeout", "--write-config"},
}

#: A whole command for a shell, in backticks (`esc-gis permits init --roles`): a person runs it, from
#: Python's side too (the registry's owner, an administrator), so its flags are the command's own.
_SHELL_COMMAND = re.compile(r"`esc-gis [^`]*`")
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Each string of the code that is not a docstring, an f-string's parts joined (``{}`` for a value)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and ast.get_docstring(node) is not None
    }
    joined = [node for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)]
    parts = {id(v) for node in joined for v in node.values}
    out = [
        (node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)) for node in joined
    ]
    out += [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and id(node) not in parts
    ]
    return out


@pytest.mark.parametrize("module", LIBRARY_MODULES)
def test_library_messages_name_no_flag(module: str) -> None:
    """A string of the module's code (not a docstring) never holds ``--flag``: a Python caller cannot type one."""
    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    allowed = FLAGS_ALLOWED.get(module, set())
    flags = [
        (line, m.group())
        for line, text in _strings(tree)
        for m in _FLAG.finditer(_SHELL_COMMAND.sub("", text))
        if m.group() not in allowed
    ]
    assert flags == []


def test_the_scan_finds_a_flag_in_a_message_and_not_in_a_shell_command() -> None:
    """The scan above would pass on a module it cannot read right: here it must find the one flag."""
    tree = ast.parse(
        'def f(x):\n    """Docstring: --ok."""\n'
        '    raise ValueError(f"{x}: give --band N, or run `esc-gis permits init --roles`.")\n'
    )
    found = [m.group() for _, text in _strings(tree) for m in _FLAG.finditer(_SHELL_COMMAND.sub("", text))]
    assert found == ["--band"]


def test_every_allowed_flag_is_still_there() -> None:
    """An allowance no string needs any more is removed with it, so the list stays the few real exceptions."""
    for module, allowed in FLAGS_ALLOWED.items():
        text = " ".join(t for _, t in _strings(ast.parse((SRC / module).read_text(encoding="utf-8"))))
        assert sorted(f for f in allowed if not re.search(rf"{re.escape(f)}(?![\w-])", text)) == [], module


def test_picking_and_importing_sites_name_keywords_in_python_and_flags_on_the_command_line(tmp_path: Path) -> None:
    """``pick_site`` and ``applications_from_frame`` tell a Python caller ``site_id=`` and ``fields={...}``;
    the command line shows the same mistakes as ``--site-id``, ``--where`` and ``--field NAME=COLUMN``."""
    from esc_gis.registry.service.imports import applications_from_frame, pick_site

    layer = tmp_path / "screening.gpkg"
    gpd.GeoDataFrame({"site_id": ["S01", "S02"]}, geometry=[box(0, 0, 10, 10), box(20, 0, 30, 10)], crs=7594).to_file(
        layer
    )
    with pytest.raises(ValidationError) as none:
        pick_site(layer)
    with pytest.raises(ValidationError) as wrong:
        pick_site(layer, site_id="s01")
    frame = gpd.GeoDataFrame({"ADDR": ["1 A St"]}, geometry=[box(0, 0, 10, 10)], crs=7594)
    _, problems = applications_from_frame(frame, source="county.gpkg", fields={"site_adress": "ADDR"})
    said = [str(none.value), str(wrong.value), "\n".join(f"{p.message} {p.fix}" for p in problems), problems[0].source]
    assert "give site_id=ID (the screening's site_id) or where=SQL." in said[0]
    assert "site_id='s01' matches none of its 2 feature(s)" in said[1] and "Did you mean 'S01'?" in said[1]
    assert 'with fields={"received_on": "COLUMN"}' in said[2] and said[3] == "fields={'site_adress': 'ADDR'}"
    assert not any("--" in s for s in said), said
    shown = [cli_text(s) for s in said]
    assert "give --site-id ID (the screening's site_id) or --where SQL." in shown[0]
    assert "--site-id s01 matches none" in shown[1]
    assert "with --field received_on=COLUMN" in shown[2] and shown[3] == "--field site_adress=ADDR"
