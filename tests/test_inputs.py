"""Inputs as analysts have them: statewide parcel layers, File Geodatabases, --where, bad paths, CSV round trips.

The parcels are a real cut of Wisconsin's V10 statewide parcel schema (tests/data/parcels,
MIT, Wisconsin State Cartographer's Office): 21 features, six of them rights of way whose
PARCELID is ``ROW``. The other non-parcel kinds (HYDRO, RAIL, a county-prefixed 123ROW) and
rows without an id are set here, on named features, so every count below is checkable.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
import pyproj
import pytest
import shapely
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import FarFromZoneWarning
from esc_gis.io import read_layer
from esc_gis.parcels import V10_FIELDS, V10_NON_PARCEL, SkipRule, detect_schema

from .conftest import CRS, K, box, lake_polygon, sites, write_layer_set

# The real parcels are in Vernon County, far from the Winnebago zone the Village measures in,
# and screening says so (FarFromZoneWarning, pinned in test_layers.py); here it is not the point.
pytestmark = pytest.mark.filterwarnings("ignore::esc_gis.errors.FarFromZoneWarning")

PARCELS = Path(__file__).parent / "data" / "parcels" / "vernon_v10_cut.fgb"
#: Fixture feature number -> the PARCELID set here (the file's own ROW rows are 9-13 and 21).
EDITS = {2: "HYDRO", 5: "123ROW", 7: "RAIL", 16: "", 18: None}
SKIPPED = [2, 5, 7, 9, 10, 11, 12, 13, 21]
GENERATED = ["row:16", "row:18"]


def run(*args: object):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in r.output, r.output
    return r


def as_delivered() -> gpd.GeoDataFrame:
    gdf = pyogrio.read_dataframe(PARCELS)
    for n, pid in EDITS.items():
        gdf.loc[n - 1, "PARCELID"] = pid
    return gdf


def as_shapefile(gdf: gpd.GeoDataFrame, path: Path) -> None:
    """Write a shapefile as GDAL and ArcGIS do: names over 10 characters cut (GDAL warns of each; muted)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        pyogrio.write_dataframe(gdf, path, driver="ESRI Shapefile")


@pytest.fixture
def parcels_gdb(tmp_path: Path) -> Path:
    """The parcels as the State delivers them: a File Geodatabase (a folder), one feature class."""
    path = tmp_path / "V10_Parcels.gdb"
    pyogrio.write_dataframe(as_delivered(), path, layer="V10_Parcels", driver="OpenFileGDB")
    assert path.is_dir()
    return path


def test_v10_schema_and_rule() -> None:
    cols = list(pyogrio.read_info(PARCELS)["fields"])
    assert detect_schema(cols) == "v10"
    assert detect_schema([c for c in cols if c != "TAXPARCELID"]) is None
    rule = SkipRule(V10_NON_PARCEL, "PARCELID", "test")
    ids = pd.Series(["ROW", "row", " HYDRO ", "123ROW", "ROW006", "RAIL", "GAP", "04WATER", None, ""])
    assert rule.mask(ids).tolist() == [True] * 8 + [False, False]
    # Real parcel numbers, and words that only contain a non-parcel word, are parcels.
    real = pd.Series(["291005950000", "004007410004", "ROWE FARM", "ARROWHEAD 2", "12-345-ROW-7A"])
    assert not rule.mask(real).any()


def test_real_parcels_with_repeated_row_ids_screen_cleanly(parcels_gdb: Path, tmp_path: Path, layers_path) -> None:
    out = tmp_path / "screened.gpkg"
    r = run("screen", parcels_gdb, "--id-field", "PARCELID", "--layers", layers_path, "-o", out)
    assert r.exit_code == 0, r.output
    res = read_layer(out)
    assert len(res) == 21 - len(SKIPPED) == 12
    side = tmp_path / "screened.gpkg.skipped.gpkg"
    skipped = read_layer(side)
    assert skipped["feature"].tolist() == SKIPPED
    assert skipped["PARCELID"].tolist() == ["HYDRO", "123ROW", "RAIL"] + ["ROW"] * 6
    assert skipped.crs == "EPSG:3071"  # as the file had it: the analyst's own layer
    assert all("PARCELID" in s and "skip rule" in s for s in skipped["skip_reason"])
    # Rows without an id are screened, under their feature number; no ROW is screened.
    assert sorted(i for i in res["site_id"] if i.startswith("row:")) == GENERATED
    assert not res["site_id"].isin(["ROW", "HYDRO", "RAIL", "123ROW"]).any()
    assert res["site_id"].is_unique
    text = " ".join(r.output.split())
    assert "Recognised the Wisconsin V10 parcel schema" in text
    assert "Skipped 9 feature(s) that are not parcels (ROW 6, HYDRO 1, 123ROW 1, RAIL 1)" in text
    assert "2 site(s) had no PARCELID; screened as row:<feature number> (row:16, row:18)" in text
    # Without --id-field the V10 layer's PARCELID is the id all the same.
    out2 = tmp_path / "again.gpkg"
    assert run("screen", parcels_gdb, "--layers", layers_path, "-q", "-o", out2).exit_code == 0
    assert read_layer(out2)["site_id"].tolist() == res["site_id"].tolist()


def test_v10_shapefile_with_cut_names_screens_with_no_options(tmp_path: Path) -> None:
    """The form most counties deliver: a shapefile, whose 10-character names cut TAXPARCELID to TAXPARCELI."""
    shp = tmp_path / "parcels.shp"
    as_shapefile(pyogrio.read_dataframe(PARCELS), shp)
    fields = list(pyogrio.read_info(shp)["fields"])
    # Every V10 field the detection uses, as the shapefile names it: only TAXPARCELID is cut.
    assert all(f[:10] in fields for f in V10_FIELDS)
    assert "TAXPARCELI" in fields and "TAXPARCELID" not in fields
    assert detect_schema(fields) == "v10"
    assert detect_schema([f.lower() for f in fields]) == "v10"  # as PostGIS delivers it
    out = tmp_path / "o.gpkg"
    r = run("screen", shp, "-o", out)  # no --id-field, no --skip-ids, the bundled layer set
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "Recognised the Wisconsin V10 parcel schema; site id: PARCELID" in text
    assert "Skipped 6 feature(s) that are not parcels (ROW 6)" in text
    res = read_layer(out)
    assert len(res) == 21 - 6 and res["site_id"].is_unique and "ROW" not in set(res["site_id"])
    assert read_layer(tmp_path / "o.gpkg.skipped.gpkg")["feature"].tolist() == [9, 10, 11, 12, 13, 21]


def test_id_field_parcelid_brings_the_rule_to_an_unrecognised_layer(tmp_path: Path, layers_path) -> None:
    """A cut-down export (PARCELID and little else) is not the V10 schema, but its ROW rows are still not parcels."""
    few = pyogrio.read_dataframe(PARCELS)[["PARCELID", "OWNERNME1", "geometry"]]
    assert detect_schema(list(few.columns)) is None
    src = tmp_path / "few.shp"
    as_shapefile(few, src)
    out = tmp_path / "few.gpkg"
    r = run("screen", src, "--layers", layers_path, "-o", out)
    assert r.exit_code == 1 and "has no id field 'site_id'" in " ".join(r.output.split())
    r = run("screen", src, "--id-field", "PARCELID", "--layers", layers_path, "-o", out)
    assert r.exit_code == 0, r.output
    assert "Skipped 6 feature(s) that are not parcels (ROW 6)" in " ".join(r.output.split())
    assert len(read_layer(out)) == 15
    # Another id field brings no rule: the layer is not known to be parcels.
    assert run("screen", src, "--id-field", "OWNERNME1", "--layers", layers_path, "-o", tmp_path / "x.gpkg").exit_code


def test_the_skip_rule_is_overridable(parcels_gdb: Path, tmp_path: Path, layers_path) -> None:
    # none: every row is a site again, and the repeated ROW ids are what they were: errors.
    r = run("screen", parcels_gdb, "--id-field", "PARCELID", "--skip-ids", "none", "-o", tmp_path / "a.gpkg")
    assert r.exit_code == 1 and "repeats the id 'ROW' (first at row 9)" in r.output and "row 21" in r.output
    assert "has no 'PARCELID'" in r.output and "row 16" in r.output  # no ids generated without a rule
    assert not (tmp_path / "a.gpkg").exists()
    # An own rule: only ROW is skipped; HYDRO, RAIL and 123ROW are unique ids, so screened.
    out = tmp_path / "b.csv"
    r = run("screen", parcels_gdb, "--skip-ids", "ROW", "--layers", layers_path, "-q", "-o", out)
    assert r.exit_code == 0, r.output
    assert read_layer(tmp_path / "b.csv.skipped.csv")["feature"].astype(int).tolist() == [9, 10, 11, 12, 13, 21]
    assert {"HYDRO", "RAIL", "123ROW"} <= set(read_layer(out)["site_id"])
    r = run("screen", parcels_gdb, "--skip-ids", "ROW(", "-o", tmp_path / "c.gpkg")
    assert r.exit_code == 1 and "--skip-ids 'ROW('" in r.output


def test_where_picks_rows_and_keeps_feature_numbers(parcels_gdb: Path, tmp_path: Path, layers_path) -> None:
    out = tmp_path / "westby.gpkg"
    # 8 picked: the six ROW, 291005810000 (19) and the null id (18); the empty id (16) is not NULL.
    where = "PARCELID LIKE '2910058%' OR PARCELID IS NULL OR PARCELID = 'ROW'"
    r = run("screen", parcels_gdb, "--where", where, "--layers", layers_path, "-o", out)
    assert r.exit_code == 0, r.output
    res = read_layer(out)
    assert sorted(res["site_id"]) == ["291005810000", "row:18"]
    assert read_layer(tmp_path / "westby.gpkg.skipped.gpkg")["feature"].tolist() == [9, 10, 11, 12, 13, 21]
    assert "--where left out 13 feature(s)" in " ".join(r.output.split())
    r = run("screen", parcels_gdb, "--where", "PARCELID = = 'x'", "-o", tmp_path / "bad.gpkg")
    assert r.exit_code == 1 and "--where clause \"PARCELID = = 'x'\" is not valid" in r.output
    r = run("screen", parcels_gdb, "--where", "NOSUCHFIELD = 1", "-o", tmp_path / "bad.gpkg")
    assert r.exit_code == 1 and "NOSUCHFIELD = 1" in r.output
    r = run("screen", parcels_gdb, "--where", "PARCELID = 'nothing'", "-o", tmp_path / "bad.gpkg")
    assert r.exit_code == 1 and "no features where PARCELID = 'nothing'" in r.output


def test_fgdb_sites_and_waters(tmp_path: Path) -> None:
    """A File Geodatabase for the sites, and for a layers.toml waters layer, gives the GeoPackage's answers."""
    lake = gpd.GeoDataFrame({"water_class": ["lake"], "name": ["Test Lake"]}, geometry=[lake_polygon()], crs=CRS)
    pyogrio.write_dataframe(lake, tmp_path / "hydro.gdb", layer="lakes", driver="OpenFileGDB")
    extra = '[waters]\npath = "hydro.gdb"\nlayer = "lakes"\nclass_field = "water_class"\nname_field = "name"\n'
    gdb_set = write_layer_set(tmp_path / "gdbset", with_waters=False, extra=extra.replace("hydro.gdb", "../hydro.gdb"))
    gpkg_set = write_layer_set(tmp_path / "gpkgset")
    site = sites([{"site_id": "A", "geometry": box(1500, 100, 1700, 300)}])
    pyogrio.write_dataframe(site, tmp_path / "sites.gdb", layer="sites", driver="OpenFileGDB")
    site.to_file(tmp_path / "sites.gpkg", engine="pyogrio")
    outs = []
    for sites_path, layer_set, name in (
        (tmp_path / "sites.gdb", gdb_set, "a"),
        (tmp_path / "sites.gpkg", gpkg_set, "b"),
    ):
        out = tmp_path / f"{name}.gpkg"
        r = run("screen", sites_path, "--layers", layer_set, "-q", "-o", out)
        assert r.exit_code == 0, r.output
        outs.append(read_layer(out).iloc[0])
    assert outs[0]["nearest_water_ft"] == pytest.approx(100, abs=0.01)  # 1800 - 1700 ft
    assert outs[0]["nearest_water"] == outs[1]["nearest_water"] == "Test Lake"
    assert outs[0]["protective_disturbed_sqft"] == pytest.approx(outs[1]["protective_disturbed_sqft"])
    assert outs[0]["disturbed_sqft"] == pytest.approx(200 * 200 * K)


def test_a_folder_of_shapefiles_needs_its_layer(tmp_path: Path, layers_path) -> None:
    folder = tmp_path / "shapes"
    folder.mkdir()
    sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}]).to_file(folder / "sites.shp")
    sites([{"site_id": "Z", "geometry": box(300, 100, 400, 200)}]).to_file(folder / "other.shp")
    r = run("screen", folder, "--layers", layers_path, "-o", tmp_path / "o.gpkg")
    assert r.exit_code == 1 and "holds 2 layers" in r.output and "--layer NAME" in r.output
    r = run("screen", folder, "--layer", "sites", "--layers", layers_path, "-q", "-o", tmp_path / "o.gpkg")
    assert r.exit_code == 0, r.output
    assert read_layer(tmp_path / "o.gpkg")["site_id"].tolist() == ["A"]


def test_bad_paths_exit_1_with_a_message(tmp_path: Path, layers_path) -> None:
    good = tmp_path / "sites.gpkg"
    sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}]).to_file(good, engine="pyogrio")
    folder = tmp_path / "a_folder"
    folder.mkdir()
    junk = tmp_path / "junk.gpkg"
    junk.write_bytes(b"not a geopackage at all")
    cases = [
        (("screen", good, "-o", folder), "is a folder"),
        (("screen", tmp_path / "nope.gpkg", "-o", tmp_path / "o.gpkg"), "no such file"),
        (("screen", folder, "-o", tmp_path / "o.gpkg"), "is a folder esc-gis cannot read as vector data"),
        (("screen", junk, "-o", tmp_path / "o.gpkg"), "cannot be read"),
        (("screen", good, "--disturbed", tmp_path / "nope.gpkg", "-o", tmp_path / "o.gpkg"), "no such file"),
        (("screen", good, "--map", folder, "-o", tmp_path / "o.gpkg"), "is a folder"),
        (("screen", good, "--profile", folder, "-o", tmp_path / "o.gpkg"), "is a folder"),
        (("map", tmp_path / "nope.gpkg", "-o", tmp_path / "m.html"), "no such file"),
        (("map", good, "-o", folder), "is a folder"),
        (("permits", "import", tmp_path / "r.gpkg", tmp_path / "nope.gpkg"), "no such file"),
        (("permits", "due", tmp_path / "r.gpkg", "--rain", folder), "is a folder"),
        (("permits", "export", tmp_path / "r.gpkg", "-o", folder), "is a folder"),
        (("review", tmp_path / "plan.gdb", "-o", folder), "is a folder"),
    ]
    for args, words in cases:
        r = run(*args, "--layers", layers_path) if args[0] in ("screen", "map") else run(*args)
        assert r.exit_code == 1, (args, r.output)
        assert words in r.output, (args, r.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_folder", "junk.gpkg", "sites.gpkg"]


def test_review_refuses_a_path_that_does_not_exist(tmp_path: Path, layers_path) -> None:
    out, js = tmp_path / "report.html", tmp_path / "report.json"
    r = run("review", tmp_path / "plan_typo.gpkg", "-o", out, "--json", js, "--layers", layers_path)
    assert r.exit_code == 1 and "no such plan package" in r.output
    assert not out.exists() and not js.exists()


def test_screening_csv_goes_back_to_map_and_permits_import(tmp_path: Path, layers_path) -> None:
    src = tmp_path / "sites.gpkg"
    rows = [
        {
            "site_id": "007",
            "site_address": "1 Main St",
            "received_on": "2026-09-01",
            "geometry": box(100, 100, 200, 150),
        },
        {
            "site_id": "008",
            "site_address": "2 Oak St",
            "received_on": "2026-09-02",
            "geometry": box(300, 100, 400, 200),
        },
    ]
    sites(rows, "EPSG:4326").to_file(src, engine="pyogrio")  # sent in degrees, measured in feet
    csv = tmp_path / "screened.csv"
    assert run("screen", src, "--layers", layers_path, "-q", "-o", csv).exit_code == 0
    # GDAL's CSV layout: the geometry in WKT, the measuring CRS in the .prj beside it.
    assert "WKT" in pd.read_csv(csv, dtype=str).columns and "crs" not in pd.read_csv(csv, dtype=str).columns
    assert pyproj.CRS.from_wkt((tmp_path / "screened.prj").read_text()).equals(pyproj.CRS(CRS))
    back = read_layer(csv)
    assert back.crs == CRS and "crs" not in back.columns
    assert back["site_id"].tolist() == ["007", "008"]  # text ids keep their zeros
    assert back["disturbed_sqft"].dtype == float and back["permit_may_be_required"].dtype == bool
    assert back.geometry.area.round().tolist() == [5000, 10000]  # US survey sq ft, where screened

    r = run("map", csv, "-o", tmp_path / "m.html", "--layers", layers_path)
    assert r.exit_code == 0 and "2 sites" in r.output, r.output
    r = run("map", csv, "--site", "008", "-o", tmp_path / "s.html", "--layers", layers_path)
    assert r.exit_code == 0, r.output

    reg = tmp_path / "r.gpkg"
    assert run("permits", "init", reg, "--layers", layers_path).exit_code == 0
    r = run("permits", "import", reg, csv, "--where", "site_id = '008'", "--layers", layers_path)
    assert r.exit_code == 0 and "Imported 1 permit(s)" in r.output, r.output
    r = run("permits", "show", reg, "ESC-2026-0001", "--json", "--layers", layers_path)
    assert r.exit_code == 0 and "2 Oak St" in r.output and "1 Main St" not in r.output

    # An older screening CSV (geometry in `geometry`, its CRS in a `crs` column) still reads.
    old = pd.read_csv(csv, dtype=str).rename(columns={"WKT": "geometry"}).assign(crs="EPSG:7594")
    old.to_csv(tmp_path / "old.csv", index=False)
    was = read_layer(tmp_path / "old.csv")
    assert was.crs == CRS and was.geometry.area.round().tolist() == [5000, 10000] and "crs" not in was.columns
    assert run("permits", "init", tmp_path / "r_old.gpkg", "--layers", layers_path).exit_code == 0
    r = run("permits", "import", tmp_path / "r_old.gpkg", tmp_path / "old.csv", "--layers", layers_path)
    assert r.exit_code == 0 and "Imported 2 permit(s)" in r.output, r.output

    # Without its .prj, the CSV has no CRS, and the command says so (no silent guess).
    pd.read_csv(csv, dtype=str).to_csv(tmp_path / "nocrs.csv", index=False)
    r = run("map", tmp_path / "nocrs.csv", "-o", tmp_path / "n.html", "--layers", layers_path)
    assert r.exit_code == 1 and "CRS" in r.output


# --- One distance warning for every command that measures (issue 24) ------------------------

#: Zion, Utah, in its own UTM zone (12N), 10 m cells: about 2,000 km from Winnebago County's grid.
UTAH = {"crs": "EPSG:32612", "x0": 330_000.0, "y0": 4_130_000.0, "cell": 10.0}


def _warned(*args: object) -> str:
    """Run a command as outside the test suite (far-from-zone warnings shown); return its output on one line."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", FarFromZoneWarning)
        r = run(*args)
    assert r.exit_code == 0, r.output
    return " ".join(r.output.split())


def test_far_data_are_warned_by_every_command_that_measures(tmp_path: Path, layers_path) -> None:
    import numpy as np

    from .conftest import write_dem
    from .test_soil_loss import GOOD, _cli_inputs

    z = np.add.outer(np.arange(20.0) * 3.0, np.zeros(20))  # 30 % slope, north to south
    utah = write_dem(tmp_path / "utah.tif", z, units="metre", **UTAH)  # type: ignore[arg-type]
    far = "lies 2,"  # "... lies 2,0xx km (1,2xx mi) outside the area the measuring CRS ..."
    # steep measures in the profile's CRS (Winnebago County's grid): 12 % more area in Utah, said.
    text = _warned("steep", utah, "-o", tmp_path / "steep.gpkg")
    assert "Warning: DEM utah.tif " + far in text and "Fix: use a layer set" in text
    # --dst-crs (--crs) is only how the output is written: measured in the profile's CRS, still warned.
    assert far in _warned("steep", utah, "--crs", "EPSG:32612", "-o", tmp_path / "own.gpkg")
    # slope measures in the DEM's own CRS: right for this DEM, wrong for one labelled with another place's grid.
    assert "Warning" not in _warned("slope", utah, "-o", tmp_path / "slope.tif", "-q")
    # About 200 km east of Winnebago County in its own grid: plausible numbers, another place; warned only.
    east = write_dem(tmp_path / "east.tif", z, x0=745_000.0 + 656_000.0, units="metre")
    assert "Warning: DEM east.tif lies" in _warned("slope", east, "-o", tmp_path / "s2.tif", "-q")
    # Thousands of km out of the grid's area (beyond crs.AREA_MARGIN_KM): the label cannot be
    # true, so it is refused (issue 34), with nothing written.
    mislabelled = write_dem(tmp_path / "mislabelled.tif", z, crs="EPSG:7594", x0=-9e6, y0=9e6, units="metre")
    r = run("slope", mislabelled, "-o", tmp_path / "s3.tif", "-q")
    assert r.exit_code == 1, r.output
    assert "cannot be in its CRS" in r.output and "gdal_edit.py -a_srs" in r.output
    assert not (tmp_path / "s3.tif").exists()
    # protective: waters given as a file.
    waters = tmp_path / "waters.gpkg"
    lake = shapely.box(331_000, 4_129_000, 331_500, 4_129_500)
    gpd.GeoDataFrame({"water_class": ["lake"]}, geometry=[lake], crs=UTAH["crs"]).to_file(waters)
    assert "Warning: Waters " in _warned("protective", waters, "-o", tmp_path / "p.gpkg", "-q")
    # soil-loss: its DEM (and sites) measured in the profile's CRS.
    (tmp_path / "soil").mkdir()
    args = _cli_inputs(tmp_path / "soil", GOOD)
    utah_ft = write_dem(tmp_path / "utah_ft.tif", z, **UTAH)  # type: ignore[arg-type]  # the test's --z-unit us_ft
    args[args.index("--dem") + 1] = str(utah_ft)
    assert f"Warning: DEM {utah_ft} " + far in _warned(*args, "-q")
    # review: a plan package drawn in Utah.
    plan = tmp_path / "plan"
    plan.mkdir()
    gpd.GeoDataFrame(geometry=[lake], crs=UTAH["crs"]).to_file(plan / "site_boundary.geojson")
    text = _warned("review", plan, "--layers", layers_path, "-o", tmp_path / "r.html", "-q")
    assert "Warning: Plan layer site_boundary " + far in text


def test_batch_rows_says_what_it_left_out_as_the_whole_file_run_does(parcels_gdb: Path, tmp_path: Path) -> None:
    """--batch-rows: the same skipped list, the same lines about it, and the far-from-zone warning once (issue 34).

    The parcels lie in Vernon County, 159 km from the bundled layer set's county zone; each
    batch saw its own part of them, and warned of it, once per batch.
    """
    whole, streamed = tmp_path / "whole.gpkg", tmp_path / "streamed.gpkg"
    said = {
        out: _warned("screen", parcels_gdb, "-o", out, *extra)
        for out, extra in ((whole, ()), (streamed, ("--batch-rows", "4")))
    }
    assert "in 6 batch(es) of up to 4" in said[streamed]  # 21 features: several batches crossed
    # The sidecars list the same features, numbered by the file, with the same fields.
    a, b = (read_layer(tmp_path / f"{p.name}.skipped.gpkg") for p in (whole, streamed))
    pd.testing.assert_frame_equal(a, b)
    assert a["feature"].tolist() == SKIPPED
    for out, text in said.items():
        assert text.count("Warning: Sites") == 1, text
        assert "Recognised the Wisconsin V10 parcel schema" in text
        assert (
            "Skipped 9 feature(s) that are not parcels (ROW 6, HYDRO 1, 123ROW 1, RAIL 1)" in text
            and f"listed with their feature numbers in {out}.skipped.gpkg" in text
        )
        assert "2 site(s) had no PARCELID; screened as row:<feature number> (row:16, row:18)" in text
        assert "Not checked: The layer set has no DEM" in text
    # The warning is word for word the whole-file run's (the union of the batches' extents).
    warning = said[whole].split("Warning: ")[1].split(". Fix:")[0]
    assert warning in said[streamed]
