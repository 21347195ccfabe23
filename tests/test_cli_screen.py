"""`esc-gis screen` from the command line: formats, bad input, no tracebacks, no partial files."""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
import pytest
import shapely
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import FarFromZoneWarning
from esc_gis.io import read_layer

from .conftest import K, box, sites

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str):
    return CliRunner().invoke(cli, ["screen", *map(str, args)])


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "sites.gpkg"
    sites(
        [
            {"site_id": "A", "address": "1 Main St", "geometry": box(100, 100, 200, 200)},
            {"site_id": "B", "geometry": box(300, 100, 320, 120)},
        ],
        "EPSG:4326",
    ).to_file(path, engine="pyogrio")
    return path


@pytest.mark.parametrize("ext", [".gpkg", ".parquet", ".geojson", ".csv"])
def test_writes_each_format(good, tmp_path, layers_path, ext):
    out = tmp_path / f"out{ext}"
    r = run(good, "--layers", layers_path, "-o", out)
    assert r.exit_code == 0, r.output
    assert "permit required: 1" in r.output
    if ext == ".csv":
        df = pd.read_csv(out)
        raw = out.read_text(encoding="utf-8")
        assert "\\u00a7" not in raw and "§ 540-4B" in raw  # the character, not its escape
        lines = df["findings_text"].iloc[0].splitlines()
        assert len(lines) == len(json.loads(df["findings"].iloc[0]))
        assert lines[0].startswith("§ 540-4B (ordinance): ")
        assert list(df.columns).index("findings_text") == list(df.columns).index("findings") + 1
        assert shapely.area(shapely.from_wkt(df["WKT"].to_numpy()))[0] == pytest.approx(10_000, rel=1e-6)
    elif ext == ".parquet":
        df = gpd.read_parquet(out)
    else:
        df = gpd.read_file(out)
    assert list(df["site_id"].astype(str)) == ["A", "B"]
    assert list(df["permit"]) == ["required", "not_required"]
    assert df["disturbed_sqft"].iloc[0] == pytest.approx(10_000 * K, rel=1e-6)
    first = json.loads(df["findings"].iloc[0])[0]
    assert first["section"] == "§ 540-4B" and first["basis"] == "ordinance"


def test_refuses_to_overwrite(good, tmp_path, layers_path):
    out = tmp_path / "out.gpkg"
    out.write_bytes(b"precious")
    r = run(good, "--layers", layers_path, "-o", out)
    assert r.exit_code != 0 and "--overwrite" in r.output and "Traceback" not in r.output
    assert out.read_bytes() == b"precious"
    assert run(good, "--layers", layers_path, "-o", out, "--overwrite", "-q").exit_code == 0
    assert len(gpd.read_file(out)) == 2


def _assert_clean_failure(r, out, *needles):
    assert r.exit_code == 1, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "Traceback" not in r.output
    for n in needles:
        assert n in r.output, (n, r.output)
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.stem}.")]


#: A PNG's first bytes (the signature and the start of its header): an image renamed by mistake.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)
#: Python's and GDAL's words, which a user of esc-gis should never have to read (issue 34).
NOT_OURS = ("DataSourceError", "<DRIVER>", "prefixing the file path", "PosixPath", "Traceback", "None", "dict(")


@pytest.mark.parametrize("batch", [(), ("--batch-rows", "5")], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("empty.gpkg", b"", "cannot be read as a vector layer: the file is empty (0 bytes)."),
        ("empty.geojson", b"", "cannot be read as a vector layer: the file is empty (0 bytes)."),
        ("picture.gpkg", PNG, "cannot be read as a vector layer: it is a PNG image."),
        ("picture.geojson", PNG, "cannot be read as a vector layer: it is a PNG image."),
        (
            "notes.txt",
            b"Site visit, 4 May: silt fence down on the east side.\n",
            "cannot be read as a vector layer: it is a text file in no GIS format",
        ),
        (
            "cut.geojson",
            b'{"type": "FeatureCollection", "features": [{"type": "Fe',
            "cannot be read as a vector layer: it is JSON text that is no readable",
        ),
    ],
)
def test_an_empty_or_non_gis_file_gets_our_message_not_gdals(tmp_path, layers_path, name, content, words, batch):
    src = tmp_path / name
    src.write_bytes(content)
    out = tmp_path / "o.gpkg"
    r = run(src, "--layers", layers_path, "-o", out, *batch)
    said = " ".join(r.output.split())
    _assert_clean_failure(r, out, f"{src}: {words}")
    assert "Fix: give a GeoPackage (.gpkg)" in said and "export it again" in said
    assert not any(w in said for w in NOT_OURS), said
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing written beside it


@pytest.mark.parametrize("content", [b"", PNG], ids=["empty", "png"])
def test_a_dem_or_plan_package_that_is_no_gis_file_gets_our_message(tmp_path, layers_path, content):
    """The raster reader (slope, steep) and the plan review's package say it in the same words."""
    dem = tmp_path / "dem.tif"
    dem.write_bytes(content)
    for command, out in (("slope", "s.tif"), ("steep", "s.gpkg")):
        r = CliRunner().invoke(cli, [command, str(dem), "-o", str(tmp_path / out)])
        said = " ".join(r.output.split())
        assert r.exit_code == 1 and f"{dem}: cannot be read as a raster: " in said, said
        assert "Fix: give a GeoTIFF" in said and not any(w in said for w in NOT_OURS), said
    plan = tmp_path / "plan.gpkg"
    plan.write_bytes(content)
    report = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["review", str(plan), "--layers", str(layers_path), "-o", str(report)])
    # Not a plan package: said so, exit 1, no report and no verdict (issue 34), in our words.
    said = " ".join(r.output.split())
    assert r.exit_code == 1 and "this is not a plan package" in said and "disapprove" not in said, said
    assert not report.exists()
    assert not any(w in said for w in ("DataSourceError", "<DRIVER>", "prefixing the file path", "PosixPath"))


def test_no_crs_suggests_assume_crs(tmp_path, layers_path):
    src = tmp_path / "naive.shp"
    with warnings.catch_warnings():  # geopandas warns that the file will have no CRS: that is the point
        warnings.simplefilter("ignore", UserWarning)
        gpd.GeoDataFrame({"site_id": ["A"]}, geometry=[box(100, 100, 200, 200)]).to_file(src, engine="pyogrio")
    out = tmp_path / "o.gpkg"
    _assert_clean_failure(run(src, "--layers", layers_path, "-o", out), out, "naive.shp", "--assume-crs")
    r = run(src, "--layers", layers_path, "-o", out, "--assume-crs", "EPSG:7594", "-q")
    assert r.exit_code == 0, r.output
    assert gpd.read_file(out)["permit"].iloc[0] == "required"


def test_missing_unreadable_and_empty_files(tmp_path, layers_path):
    out = tmp_path / "o.gpkg"
    _assert_clean_failure(run(tmp_path / "nope.gpkg", "--layers", layers_path, "-o", out), out, "no such file")
    junk = tmp_path / "junk.geojson"
    junk.write_text("this is not geojson")
    _assert_clean_failure(run(junk, "--layers", layers_path, "-o", out), out, "junk.geojson", "cannot be read")
    empty = tmp_path / "empty.gpkg"
    gpd.GeoDataFrame({"site_id": []}, geometry=[], crs="EPSG:7594").to_file(empty, engine="pyogrio")
    _assert_clean_failure(run(empty, "--layers", layers_path, "-o", out), out, "empty")


def test_every_bad_row_reported_at_once(tmp_path, layers_path):
    src = tmp_path / "bad.gpkg"
    gdf = sites(
        [
            {"site_id": "A", "activity": "construction", "state_agency": "no", "geometry": box(0, 0, 10, 10)},
            {"site_id": "A", "activity": "farming", "state_agency": "no", "geometry": box(20, 0, 30, 10)},
            {"site_id": None, "activity": "construction", "state_agency": "maybe", "geometry": box(40, 0, 50, 10)},
            {
                "site_id": "D",
                "activity": "construction",
                "state_agency": "yes",
                "geometry": shapely.Point(745_000, 505_000),
            },
            {"site_id": "E", "activity": "construction", "state_agency": "no", "geometry": None},
        ]
    )
    pyogrio.write_dataframe(gdf, src, geometry_type="Unknown")
    out = tmp_path / "o.gpkg"
    r = run(src, "--layers", layers_path, "-o", out)
    _assert_clean_failure(
        r,
        out,
        "6 problems",
        "row 2",
        "repeats the id 'A' (first at row 1)",
        "activity 'farming' is not known",
        "construction, agricultural_activity",
        "row 3",
        "has no 'site_id'",
        "'maybe' is not true or false",
        "row 4",
        "is a Point, not a polygon",
        "row 5",
        "has no geometry",
    )


def test_missing_id_field_names_the_fix(tmp_path, layers_path):
    src = tmp_path / "noid.gpkg"
    sites([{"PARCELID": "1", "geometry": box(0, 0, 10, 10)}]).to_file(src, engine="pyogrio")
    out = tmp_path / "o.gpkg"
    _assert_clean_failure(run(src, "--layers", layers_path, "-o", out), out, "--id-field", "PARCELID")
    assert run(src, "--layers", layers_path, "-o", out, "--id-field", "PARCELID", "-q").exit_code == 0


def test_disturbed_limits_for_unknown_sites(tmp_path, layers_path):
    s, d = tmp_path / "s.gpkg", tmp_path / "d.gpkg"
    sites([{"site_id": "A", "geometry": box(0, 0, 100, 100)}]).to_file(s, engine="pyogrio")
    sites([{"site_id": "Z", "geometry": box(0, 0, 10, 10)}]).to_file(d, engine="pyogrio")
    out = tmp_path / "o.gpkg"
    _assert_clean_failure(
        run(s, "--disturbed", d, "--layers", layers_path, "-o", out), out, "d.gpkg, row 1", "'Z' is not a site"
    )


def test_bad_output_extension_fails_before_work(good, tmp_path, layers_path):
    out = tmp_path / "o.xlsx"
    _assert_clean_failure(run(good, "--layers", layers_path, "-o", out), out, ".xlsx", ".gpkg")


def test_zipped_shapefile_with_truncated_field_names(tmp_path, layers_path):
    shp = tmp_path / "shp"
    shp.mkdir()
    sites(
        [
            {"site_id": "A", "state_agency": 1, "npdes_exempt": 0, "geometry": box(100, 100, 200, 200)},
            {"site_id": "B", "state_agency": 0, "npdes_exempt": 1, "geometry": box(300, 100, 400, 200)},
        ]
    ).rename(columns={"state_agency": "state_agen", "npdes_exempt": "npdes_exem"}).to_file(
        shp / "sites.shp", engine="pyogrio"
    )
    assert "state_agen" in pyogrio.read_info(shp / "sites.shp")["fields"]
    z = tmp_path / "sites.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in shp.iterdir():
            zf.write(f, f.name)
    out = tmp_path / "o.gpkg"
    r = run(z, "--layers", layers_path, "-o", out, "-q")
    assert r.exit_code == 0, r.output
    df = gpd.read_file(out)
    assert list(df["applicability"]) == ["excluded_state_agency", "applies"]
    assert list(df["permit"]) == ["not_applicable", "not_required"]  # B: NPDES-exempt under 1 acre


def test_field_mapping(tmp_path, layers_path):
    src = tmp_path / "s.gpkg"
    sites(
        [{"PARCEL": "7", "LANDUSE": "silviculture", "SUBDIV": "Oak Hills", "geometry": box(100, 100, 200, 200)}]
    ).to_file(src, engine="pyogrio")
    out = tmp_path / "o.gpkg"
    r = run(
        src,
        "--layers",
        layers_path,
        "--id-field",
        "PARCEL",
        "--field",
        "activity=LANDUSE",
        "--field",
        "plan_id=SUBDIV",
        "-o",
        out,
        "-q",
    )
    assert r.exit_code == 0, r.output
    row = gpd.read_file(out).iloc[0]
    assert (row["site_id"], row["plan_id"], row["applicability"]) == ("7", "Oak Hills", "exempt_silviculture")
    bad = run(src, "--layers", layers_path, "--field", "activity=NOPE", "-o", out, "--overwrite")
    assert bad.exit_code == 1 and "there is no field 'NOPE'" in bad.output
    assert run(src, "--field", "oops", "-o", out).exit_code == 2


def test_multi_layer_geopackage_needs_layer(tmp_path, layers_path):
    src = tmp_path / "multi.gpkg"
    g = sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}])
    g.to_file(src, layer="one", engine="pyogrio")
    g.to_file(src, layer="two", engine="pyogrio")
    out = tmp_path / "o.gpkg"
    _assert_clean_failure(run(src, "--layers", layers_path, "-o", out), out, "2 layers", "--layer")
    assert run(src, "--layers", layers_path, "--layer", "two", "-o", out, "-q").exit_code == 0


def test_bad_layer_set_is_a_clean_error(good, tmp_path):
    out = tmp_path / "o.gpkg"
    _assert_clean_failure(run(good, "--layers", tmp_path / "missing.toml", "-o", out), out, "does not exist")


# --- Run findings and tables that fit a log (issue 14) -----------------------------------------


def test_absent_layers_are_said_once_per_run_beside_the_output(good, tmp_path, layers_path):
    out = tmp_path / "out.csv"
    r = run(good, "--layers", layers_path, "-o", out)
    assert r.exit_code == 0, r.output
    notes = pd.read_csv(tmp_path / "out.csv.run_findings.csv")
    assert list(notes["code"]) == ["no_targeted_layer", "steep_not_measured"]  # the test set has waters
    assert list(notes.columns) == ["code", "section", "basis", "message", "columns"]
    assert set(notes["basis"]) == {"policy"}
    assert r.output.count("Not checked:") == 2 and "out.csv.run_findings.csv" in r.output
    rows = pd.read_csv(out)
    assert not rows["findings"].str.contains("steep_not_measured|no_targeted_layer").any()
    # A run with nothing absent removes the stale file (with --overwrite), and refuses without it.
    # (The demo set has soils, so the profile needs an annual R for nothing to be left unchecked.)
    demo = ROOT / "layers" / "winneconne-demo" / "layers.toml"
    text = (ROOT / "src" / "esc_gis" / "profiles" / "winneconne.toml").read_text(encoding="utf-8")
    no_r = '[soil_loss.r_annual]\nstatus = "not_confirmed"\n'
    assert no_r in text
    with_r = tmp_path / "with_r.toml"
    with_r.write_text(text.replace(no_r, no_r + 'value = 120.0\nsource = "made up for the test"\n'), encoding="utf-8")
    r = run(good, "--layers", demo, "--profile", with_r, "-o", out)
    assert r.exit_code == 1 and "exists" in r.output
    r = run(good, "--layers", demo, "--profile", with_r, "-o", out, "--overwrite")
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "out.csv.run_findings.csv").exists() and "Not checked" not in r.output


def _lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


def test_screen_summary_wraps_to_100_columns_with_a_long_id(tmp_path, layers_path):
    long_id = "parcel-" + "0123456789" * 5 + "-end"  # 61 characters
    path = tmp_path / "sites.gpkg"
    sites(
        [
            {"site_id": long_id, "geometry": box(100, 100, 200, 200)},
            {"site_id": "B", "geometry": box(1700, 100, 1790, 150)},
        ]
    ).to_file(path, engine="pyogrio")
    r = CliRunner().invoke(
        cli, ["screen", str(path), "--layers", str(layers_path), "-o", str(tmp_path / "o.gpkg")], env={"COLUMNS": "100"}
    )
    assert r.exit_code == 0, r.output
    lines = _lines(r.output)
    assert max(len(line) for line in lines) <= 100
    rule = next(i for i, line in enumerate(lines) if line.lstrip().startswith("───"))
    table = lines[: next(i for i, line in enumerate(lines) if line.startswith("Other findings"))]
    # The id folds down the first column; read back in order, it is whole.
    first = "".join(line.split()[0] for line in table[rule + 1 :] if line[:1] == " " and line[1:2] != " ")
    assert long_id + "B" == first
    # The last column (distance to water) is all there for both sites, not cropped.
    result = gpd.read_file(tmp_path / "o.gpkg")
    for d in result["nearest_water_ft"]:
        assert any(line.rstrip().endswith(f"{d:,.0f}") for line in table)
    assert "Not measured in this run: steep" in " ".join(" ".join(table).split())  # the caption says which
    assert " ".join(r.output.split()).count("Not checked: The layer set has no DEM") == 1


def test_rules_tables_fit_100_columns_and_lose_nothing():
    from esc_gis.profile import load_profile

    r = CliRunner().invoke(cli, ["rules"], env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    assert max(len(line) for line in r.output.splitlines()) <= 100
    text = "".join(r.output.split())  # words folded across lines join up again within a cell
    prof = load_profile()
    for code in prof.findings:
        assert any(code in line for line in r.output.splitlines()) or code[:20] in text, code
    assert r.output.count("│") > 0 and "Measuring CRS: EPSG:7594" in r.output


def test_a_far_dem_is_warned_about_on_the_command_line(good, tmp_path):
    from .conftest import write_layer_set

    zion = ROOT / "tests" / "data" / "dem" / "spDataLarge_srtm_3arcsec_zion.tif"
    manifest = write_layer_set(tmp_path / "l", extra=f'[dem]\npath = "{zion.as_posix()}"\nz_unit = "m"\n')
    with warnings.catch_warnings():
        warnings.simplefilter("default", FarFromZoneWarning)  # as outside the test suite
        r = run(good, "--layers", manifest, "-o", tmp_path / "o.gpkg", "-q")
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "Warning: DEM /" in text and "km (" in text and "Fix: use a layer set" in text
    assert "Traceback" not in r.output and "FarFromZoneWarning" not in r.output


# --- Sidecars named after the whole output (issue 24) ---------------------------------------


def test_two_formats_of_one_result_side_by_side_keep_their_own_sidecars(good, tmp_path, layers_path):
    """`-o screening.gpkg` then `-o screening.csv` in one folder: neither blocks nor overwrites the other's."""
    gpkg, csv = tmp_path / "screening.gpkg", tmp_path / "screening.csv"
    for out in (gpkg, csv):
        r = run(good, "--layers", layers_path, "--skip-ids", "B", "-o", out, "-q")
        assert r.exit_code == 0, r.output
    names = {p.name for p in tmp_path.iterdir()}
    assert {
        "screening.gpkg",
        "screening.gpkg.skipped.gpkg",
        "screening.gpkg.run_findings.csv",
        "screening.csv",
        "screening.csv.skipped.csv",
        "screening.csv.run_findings.csv",
    } <= names
    assert not {"screening.run_findings.csv", "screening.skipped.gpkg", "screening.skipped.csv"} & names
    assert read_layer(tmp_path / "screening.csv.skipped.csv")["site_id"].tolist() == ["B"]


def test_a_sidecar_whose_output_is_gone_never_blocks_a_rerun(good, tmp_path, layers_path):
    out = tmp_path / "screening.gpkg"
    skipped, notes = tmp_path / "screening.gpkg.skipped.gpkg", tmp_path / "screening.gpkg.run_findings.csv"
    assert run(good, "--layers", layers_path, "--skip-ids", "B", "-o", out, "-q").exit_code == 0
    assert skipped.exists() and notes.exists()
    # While the output is there, its sidecars are its own: refused without --overwrite.
    r = run(good, "--layers", layers_path, "-o", out, "-q")
    assert r.exit_code == 1 and "exists" in r.output
    # The analyst deletes the output and runs again, without --overwrite and skipping nothing:
    # the stale list of skipped features is removed, the run findings replaced.
    out.unlink()
    notes.write_text("stale", encoding="utf-8")
    r = run(good, "--layers", layers_path, "-o", out, "-q")
    assert r.exit_code == 0, r.output
    assert out.exists() and not skipped.exists()
    assert pd.read_csv(notes)["code"].tolist() == ["no_targeted_layer", "steep_not_measured"]


def test_overwrite_replaces_an_output_and_its_sidecars_together(good, tmp_path, layers_path):
    out = tmp_path / "screening.csv"
    assert run(good, "--layers", layers_path, "--skip-ids", "B", "-o", out, "-q").exit_code == 0
    assert read_layer(tmp_path / "screening.csv.skipped.csv")["site_id"].tolist() == ["B"]
    r = run(good, "--layers", layers_path, "--skip-ids", "A", "-o", out, "-q", "--overwrite")
    assert r.exit_code == 0, r.output
    assert read_layer(out)["site_id"].tolist() == ["B"]
    assert read_layer(tmp_path / "screening.csv.skipped.csv")["site_id"].tolist() == ["A"]
    assert run(good, "--layers", layers_path, "-o", out, "-q", "--overwrite").exit_code == 0
    assert not (tmp_path / "screening.csv.skipped.csv").exists()  # this run skipped nothing


def test_the_summary_gives_the_whole_disturbed_area_and_the_part_inside(tmp_path, layers_path):
    """A site outside the Village is not 0 sq ft of disturbance: its area shows, marked, the part inside below."""
    path = tmp_path / "sites.gpkg"
    sites(
        [
            {"site_id": "in", "geometry": box(100, 100, 200, 200)},  # 10,000 sq ft, all inside
            {"site_id": "edge", "geometry": box(-100, 300, 100, 400)},  # 20,000, half inside
            {"site_id": "out", "geometry": box(-500, 100, -400, 200)},  # 10,000, none inside
        ]
    ).to_file(path, engine="pyogrio")
    r = CliRunner().invoke(
        cli, ["screen", str(path), "--layers", str(layers_path), "-o", str(tmp_path / "o.gpkg")], env={"COLUMNS": "200"}
    )
    assert r.exit_code == 0, r.output
    rows = {line.split()[0]: line for line in _lines(r.output) if line.split()[:1] in (["in"], ["edge"], ["out"])}
    assert " 10,000 " in rows["in"] and "10,000*" not in rows["in"]
    assert " 20,000* " in rows["edge"] and " 10,000* " in rows["out"]  # marked, and said under the table
    notes = [line for line in _lines(r.output) if line.startswith("* ")]
    assert notes == [
        "* edge: 20,000 sq ft disturbed, 10,000 inside the jurisdiction.",
        "* out: 10,000 sq ft disturbed, 0 inside the jurisdiction.",
    ]


def test_the_summary_fits_80_columns_with_every_column_and_whole_ids(tmp_path, layers_path):
    """At 80 columns (a terminal's default) all ten columns show, and ids of a county's length stay whole."""
    ids = ["91-2-1234-56-789", "B", "WINNEBAGO 00123"]  # PARCELID-like ids, 16 and 15 characters
    path = tmp_path / "sites.gpkg"
    sites(
        [
            {"site_id": ids[0], "plan_id": "Meadow Ridge", "geometry": box(100, 100, 200, 200)},
            {"site_id": ids[1], "geometry": box(1700, 100, 1790, 150)},
            {"site_id": ids[2], "plan_id": "Meadow Ridge", "geometry": box(300, 100, 340, 150)},
        ]
    ).to_file(path, engine="pyogrio")
    r = CliRunner().invoke(
        cli, ["screen", str(path), "--layers", str(layers_path), "-o", str(tmp_path / "o.gpkg")], env={"COLUMNS": "80"}
    )
    assert r.exit_code == 0, r.output
    lines = _lines(r.output)
    assert max(len(line.rstrip()) for line in lines) <= 80
    rule = next(i for i, line in enumerate(lines) if line.lstrip().startswith("───"))
    heads = " ".join(lines[rule - 2 : rule])
    for head in ("site", "plan", "where", "area", "sq ft", "decision", "stds", "steep", "prot.", "water"):
        assert head in heads, head
    rows = [line for line in lines[rule + 1 :] if line[1:2] != " "]
    for site in ids:  # each id whole, at the start of its row
        assert any(line[1:].startswith(site + " ") for line in rows), (site, rows)
