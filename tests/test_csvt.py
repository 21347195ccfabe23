"""Every CSV esc-gis writes has its ``.csvt`` beside it: GDAL 3.6 and QGIS read its numbers as numbers.

Without a ``.csvt``, GDAL's CSV driver (ogrinfo, ogr2ogr, QGIS's Add Layer) reads every column
as ``String``: a screening's ``disturbed_sqft`` could not be summed or styled by size. Each
command that writes a CSV is run here, twice (the second time with ``--overwrite``), and the
real ``ogrinfo`` must report the columns' types by name, with no warning.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from shapely.geometry import box

from esc_gis._csvt import csv_table_output, frame_types, row_types, write_csvt
from esc_gis._outputs import csvt_path, protected_inputs
from esc_gis.cli.main import cli
from esc_gis.errors import OutputExistsError, OutputIsInputError
from esc_gis.io import write_layer

from .conftest import require_tool
from .public_outputs import run_permits

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo"
LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"
DEM = ROOT / "layers" / "winneconne-demo" / "dem_synthetic.tif"


def ogr_types(path: str | Path) -> dict[str, str]:
    """Return each field's type as GDAL 3.6's ogrinfo reports it (``{"disturbed_sqft": "Real"}``).

    Fails on any warning or error GDAL prints while opening and reading the file.
    """
    ogrinfo = require_tool("ogrinfo", "gdal-bin")
    r = subprocess.run([ogrinfo, "-ro", "-al", "-so", str(path)], capture_output=True, text=True, check=True)
    assert "Warning" not in r.stderr and "ERROR" not in r.stderr, (path, r.stderr)
    fields = r.stdout[r.stdout.index("Layer SRS WKT:") :]
    return dict(re.findall(r"^(\w+): (\w+(?:\(\w+\))?) \(", fields, re.M))


def _run(*args: object) -> str:
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.output


def _twice(*args: object) -> None:
    """Run a command, then again: refused without --overwrite, replaced with it."""
    _run(*args)
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == 1 and "exists" in r.output, r.output
    _run(*args, "--overwrite")


# --- The types ----------------------------------------------------------------------------


def test_each_kind_of_column_gets_its_gdal_type() -> None:
    frame = pd.DataFrame(
        {
            "count64": np.array([1, 2], dtype="int64"),
            "count32": np.array([1, 2], dtype="int32"),
            "count_or_none": pd.array([1, None], dtype="Int64"),
            "sqft": [2.5, np.nan],
            "whole_sqft": [2.0, 3.0],  # floats stay Real: written "2.0"
            "flag": [True, False],
            "flag_or_none": pd.array([True, None], dtype="boolean"),
            "text": ["a", None],
            "empty": [None, None],  # no value: String
            "day": [dt.date(2024, 5, 1), None],
            "at": pd.to_datetime(["2024-05-01 10:00", None]),
            "ints_as_objects": pd.Series([1, None], dtype=object),
            "WKT": ["POINT (1 2)", "POINT (3 4)"],
        }
    )
    assert frame_types(frame, wkt="WKT") == [
        "Integer64", "Integer", "Integer64", "Real", "Real", "Integer(Boolean)", "Integer(Boolean)",
        "String", "String", "Date", "DateTime", "Integer64", "WKT",
    ]  # fmt: skip


def test_rows_are_typed_by_their_values_and_mixed_kinds_widen() -> None:
    rows = [
        (1, 1, "a", dt.date(2024, 5, 1), dt.date(2024, 5, 1), True, None),
        (2, 2.5, 3, None, dt.datetime(2024, 5, 2, 9, 30), False, None),
    ]
    assert row_types(7, rows) == ["Integer64", "Real", "String", "Date", "DateTime", "Integer(Boolean)", "String"]


def test_the_types_read_back_with_their_values_in_gdal(tmp_path: Path) -> None:
    """What pandas writes for each kind is what GDAL parses as that type: the values come back, no warning."""
    frame = gpd.GeoDataFrame(
        {
            "n": pd.array([3, None], dtype="Int64"),
            "sqft": [2.5, np.nan],
            "ok": [True, False],
            "on": [dt.date(2024, 5, 1), None],
            "at": pd.to_datetime(["2024-05-01 10:00:00", None]),
            "site_id": ["A", "B"],
        },
        geometry=[box(0, 0, 10, 10), box(10, 0, 20, 10)],
        crs="EPSG:7594",
    )
    out = write_layer(frame, tmp_path / "typed.csv")
    assert ogr_types(out) == {
        "n": "Integer64", "sqft": "Real", "ok": "Integer(Boolean)", "on": "Date", "at": "DateTime",
        "site_id": "String", "WKT": "String",
    }  # fmt: skip
    ogrinfo = require_tool("ogrinfo", "gdal-bin")
    r = subprocess.run([ogrinfo, "-ro", "-al", "-q", str(out)], capture_output=True, text=True, check=True)
    assert "Warning" not in r.stderr, r.stderr
    first = r.stdout[: r.stdout.index("OGRFeature(typed):2")]
    for line in ("n (Integer64) = 3", "sqft (Real) = 2.5", "ok (Integer(Boolean)) = 1", "on (Date) = 2024/05/01",
                 "at (DateTime) = 2024/05/01 10:00:00"):  # fmt: skip
        assert line in first, first
    assert "ok (Integer(Boolean)) = 0" in r.stdout


def test_a_csv_reads_back_with_its_types_ids_still_text(tmp_path: Path) -> None:
    """read_layer (so map, permits import) reads the .csvt: ids keep leading zeros, numbers and flags are typed."""
    from esc_gis.io import read_layer

    site = box(746000, 505000, 746100, 505100)  # in the Village's CRS's area
    frame = gpd.GeoDataFrame(
        {"site_id": ["007", "8"], "area_sqft": [1.5, 2.0], "ok": [True, False], "lots": [3, 4]},
        geometry=[site, site],
        crs="EPSG:7594",
    )
    back = read_layer(write_layer(frame, tmp_path / "r.csv"))
    assert back["site_id"].tolist() == ["007", "8"] and back["area_sqft"].tolist() == [1.5, 2.0]
    assert back["ok"].tolist() == [True, False] and back["lots"].tolist() == [3, 4]
    assert pd.api.types.is_integer_dtype(back["lots"]) and back.crs.to_epsg() == 7594


def test_batches_are_typed_together_so_the_csvt_matches_every_row(tmp_path: Path) -> None:
    """A column empty in the first batch is typed by a later one; integers then floats are Real."""
    from esc_gis.io import csv_output
    from esc_gis.screening.write import batch_table, write_tables

    fmt = "CSV (geometry as WKT)"
    first = gpd.GeoDataFrame({"later": [None], "n": [1]}, geometry=[box(0, 0, 1, 1)], crs="EPSG:7594")
    second = gpd.GeoDataFrame({"later": [2.5], "n": [1.5]}, geometry=[box(0, 0, 1, 1)], crs="EPSG:7594")
    out = tmp_path / "b.csv"
    with csv_output(out, "EPSG:7594") as tmp:
        assert write_tables(tmp, fmt, "screening", iter([batch_table(first, fmt), batch_table(second, fmt)])) == 2
    assert csvt_path(out).read_text() == '"Real","Real","WKT"\n'
    assert ogr_types(out) == {"later": "Real", "n": "Real", "WKT": "String"}


# --- A sidecar like the .prj: checked, replaced with its CSV, never stale ------------------


def test_the_csvt_is_replaced_with_its_csv_and_never_left_stale(tmp_path: Path) -> None:
    frame = gpd.GeoDataFrame({"area_sqft": [1.5]}, geometry=[box(0, 0, 1, 1)], crs="EPSG:7594")
    out = tmp_path / "a.csv"
    csvt_path(out).write_text('"String"\n')  # its CSV is gone: stale, replaced without --overwrite
    write_layer(frame, out)
    assert csvt_path(out).read_text() == '"Real","WKT"\n'
    with pytest.raises(OutputExistsError):
        write_layer(frame, out)
    write_layer(frame.assign(area_sqft=["text now"]), out, overwrite=True)
    assert csvt_path(out).read_text() == '"String","WKT"\n'  # the new run's types, not the old


def test_a_csvt_that_is_an_input_is_never_written_over(tmp_path: Path) -> None:
    frame = gpd.GeoDataFrame({"area_sqft": [1.5]}, geometry=[box(0, 0, 1, 1)], crs="EPSG:7594")
    mine = csvt_path(tmp_path / "a.csv")
    mine.write_text('"Integer"\n')
    with protected_inputs(mine), pytest.raises(OutputIsInputError, match="is an input"):
        write_layer(frame, tmp_path / "a.csv", overwrite=True)
    assert mine.read_text() == '"Integer"\n' and not (tmp_path / "a.csv").exists()


def test_an_input_csvs_own_csvt_is_part_of_the_input(tmp_path: Path) -> None:
    """``-o sites.CSV`` beside the input ``sites.csv`` (another file on Linux) would share its .csvt: refused."""
    frame = gpd.GeoDataFrame({"area_sqft": [1.5]}, geometry=[box(0, 0, 1, 1)], crs="EPSG:7594")
    (tmp_path / "sites.csv").write_text("site_id,WKT\n")
    theirs = csvt_path(tmp_path / "sites.csv")
    theirs.write_text('"String","WKT"\n')
    with protected_inputs(tmp_path / "sites.csv"), pytest.raises(OutputIsInputError, match=r"sites\.csvt"):
        write_layer(frame, tmp_path / "sites.CSV")
    assert theirs.read_text() == '"String","WKT"\n' and not (tmp_path / "sites.CSV").exists()


def test_a_failed_write_leaves_neither_the_csv_nor_its_csvt(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    with pytest.raises(RuntimeError), csv_table_output(out) as tmp:
        tmp.write_text("a\n1\n")
        write_csvt(tmp, ["Integer64"])
        raise RuntimeError("the writer failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# --- Every command that writes a CSV ------------------------------------------------------


def test_screen_whole_and_streamed_csvs_are_typed_alike(tmp_path: Path) -> None:
    screen = ["screen", DEMO / "sites.geojson", "--disturbed", DEMO / "disturbed.geojson", "--layers", LAYERS, "-q"]
    _twice(*screen, "-o", tmp_path / "whole.csv")
    _twice(*screen, "--batch-rows", "5", "-o", tmp_path / "streamed.csv")
    types = ogr_types(tmp_path / "whole.csv")
    assert types["disturbed_sqft"] == types["nearest_water_ft"] == types["steep_share"] == "Real", types
    assert types["permit_may_be_required"] == "Integer(Boolean)" and types["site_id"] == "String", types
    # The batches, typed together, give the whole-file run's types.
    assert csvt_path(tmp_path / "streamed.csv").read_text() == csvt_path(tmp_path / "whole.csv").read_text()
    assert ogr_types(tmp_path / "streamed.csv") == types
    findings = tmp_path / "whole.csv.run_findings.csv"
    assert findings.exists() and ogr_types(findings) == dict.fromkeys(
        ("code", "section", "basis", "message", "columns"), "String"
    )


def test_steep_and_protective_csvs_are_typed(tmp_path: Path) -> None:
    _twice("steep", DEM, "-o", tmp_path / "steep.csv", "-q")
    assert ogr_types(tmp_path / "steep.csv") == {"threshold_pct": "Real", "area_sqft": "Real", "WKT": "String"}
    _twice("protective", "--layers", LAYERS, "-o", tmp_path / "protective.csv")
    types = ogr_types(tmp_path / "protective.csv")
    assert types["width_ft"] == types["area_sqft"] == "Real" and types["features"] == "Integer64", types


def test_soil_loss_phases_and_windows_are_typed(tmp_path: Path) -> None:
    from .test_soil_loss import GOOD, _cli_inputs

    args = _cli_inputs(tmp_path, GOOD)
    _twice(*args)
    out = Path(args[args.index("-o") + 1]) if "-o" in args else Path(args[-1])
    for side in (out.with_name(f"{out.name}.phases.csv"), out.with_name(f"{out.name}.windows.csv")):
        types = ogr_types(side)
        frame = pd.read_csv(side)
        numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and frame[c].notna().any()]
        assert numeric, (side, frame.dtypes)
        for column in numeric:  # every column of numbers is a number type for GDAL too
            assert types[column] in ("Integer", "Integer64", "Real", "Integer(Boolean)"), (side, column, types)


def test_registry_csvs_are_typed(reg, target: str, layers_path, tmp_path: Path) -> None:
    """The export, fee receipts and the office summary: amounts Real, days Date (the archive's: test_reports)."""
    from .conftest import add_active, pay_application_fee

    number = add_active(reg)
    pay_application_fee(reg, number, 12.34, receipt="R-9")
    lay = ["--layers", str(layers_path)]
    receipts = tmp_path / "fees.csv"
    assert run_permits("receipts", target, "-o", str(receipts), *lay).exit_code == 0
    assert run_permits("receipts", target, "-o", str(receipts), *lay).exit_code == 1
    assert run_permits("receipts", target, "-o", str(receipts), "--overwrite", *lay).exit_code == 0
    types = ogr_types(receipts)
    assert (types["amount"], types["paid_on"], types["recorded_at"], types["receipt"]) == (
        "Real", "Date", "DateTime", "String",
    )  # fmt: skip
    public = tmp_path / "permits.csv"  # the registry's export: a layer, written as screen's CSV is
    assert run_permits("export", target, "-o", str(public), *lay).exit_code == 0
    types = ogr_types(public)
    assert types["permit_number"] == "String" and "Real" in types.values(), types
    summary = tmp_path / "summary.csv"
    args = ("--from", "2026-11-01", "--to", "2026-11-30", "-o", str(summary), *lay)
    assert run_permits("summary", target, *args).exit_code == 0
    assert ogr_types(summary) == {"section": "String", "measure": "String", "value": "Real"}
