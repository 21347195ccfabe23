"""``esc-gis --help`` starts at once (issue 36, item 5): it lists the commands without importing them.

A clerk's day is dozens of short commands, and the QGIS provider and the tests pay the start on
every call. The listing comes from :mod:`esc_gis.cli._catalogue`, the one home of each
command's module and one-line help; each command takes its ``short_help`` from there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


#: What the registry's reading commands must not import: they print rows, and measure nothing.
MEASURING = ("shapely", "numpy", "pyproj", "geopandas", "pandas", "pyogrio", "rasterio")
ROOT = Path(__file__).resolve().parents[1]
DEMO_LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"


@pytest.fixture(scope="module")
def demo_registry(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The demo's seven made-up permits in a GeoPackage registry, as ``benchmarks/bench_start.py`` times them."""
    reg = str(tmp_path_factory.mktemp("start") / "permits.gpkg")
    lay = ["--layers", str(DEMO_LAYERS)]
    for args in (["init", reg], ["import", reg, str(ROOT / "examples" / "demo" / "permits.geojson"), "--who", "t"]):
        res = CliRunner().invoke(cli, ["permits", *args, *lay])
        assert res.exit_code == 0, res.output
    return reg


@pytest.mark.parametrize(
    ("args", "shown", "also"),
    [
        # A listing reads no profile either: pydantic and the profile's models are a third of a start.
        (["list"], "ESC-2026-0107", ("pydantic",)),
        (["show", "ESC-2026-0101"], "101 Example St", ()),
        (["due", "--on", "2026-11-30"], "weekly inspection", ()),
    ],
    ids=["list", "show", "due"],
)
def test_the_registry_reading_commands_import_no_measuring_library(
    demo_registry: str, args: list[str], shown: str, also: tuple[str, ...]
) -> None:
    """`permits list`, `show` and `due` read rows: shapely, numpy and pyproj load only once a geometry is used."""
    argv = ["permits", args[0], demo_registry, *args[1:], "--layers", str(DEMO_LAYERS)]
    unwanted = (*MEASURING, *also)
    # A module made lazy (esc_gis._lazy.lazy_module) sits in sys.modules unrun, as a subclass of
    # ModuleType: only a module that ran is a plain ModuleType.
    code = (
        "import sys, types\nfrom esc_gis.cli.main import cli\n"
        f"try:\n    cli({argv!r})\nexcept SystemExit as exc:\n    print('EXIT=' + str(exc.code))\n"
        f"print('IMPORTED=' + ','.join(m for m in {unwanted!r} if type(sys.modules.get(m)) is types.ModuleType))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert shown in out.stdout and lines[-2] == "EXIT=0", out.stdout + out.stderr
    assert lines[-1] == "IMPORTED=", lines[-1]


def test_a_permits_geometry_is_still_read_when_used(demo_registry: str) -> None:
    """The geometry a listing leaves unread is there, as shapely, for the code that uses it."""
    import shapely

    from esc_gis.registry import open_registry

    with open_registry(demo_registry, layers=DEMO_LAYERS) as reg:
        p = reg.get("ESC-2026-0101")
    assert isinstance(p.site, shapely.Geometry) and p.site.area > 0
    assert p.disturbed is None or isinstance(p.disturbed, shapely.Geometry)
    assert p == p  # dataclass equality compares the read geometries
