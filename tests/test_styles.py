"""QGIS styles travel with the outputs: a default row in each GeoPackage's ``layer_styles``, a ``.qml`` beside the slope.

The QML is checked as XML here; the last tests load the outputs in a real QGIS (Debian's
python3-qgis, run with /usr/bin/python3 as QGIS's Python is the system's) and read back the
renderer QGIS built from them.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
from click.testing import CliRunner

from esc_gis import styles
from esc_gis.cli.main import cli
from esc_gis.io import read_layer, write_layer
from esc_gis.profile import load_profile
from esc_gis.terrain import write_slope

from .conftest import CRS, box, write_dem

PERMITS = ["required", "not_required", "not_required", "not_applicable"]
SYSTEM_PYTHON = "/usr/bin/python3"
CHECK = Path(__file__).parent / "qgis" / "check_styles.py"


def screening_frame() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {
            "site_id": ["A", "B", "C", "D"],
            "permit": PERMITS,
            "permit_may_be_required": [False, True, False, False],
            "disturbed_sqft": [5000.0, 100.0, 50.0, 0.0],
        },
        geometry=[box(i * 100, 0, i * 100 + 50, 50) for i in range(4)],
        crs=CRS,
    )


def style_rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT f_table_name, f_geometry_column, styleName, styleQML, useAsDefault FROM layer_styles"
        ).fetchall()


def steep_pct() -> float:
    return float(load_profile().entry("thresholds.steep_slope").value)  # type: ignore[arg-type]


def test_screening_gpkg_carries_its_default_style(tmp_path):
    out = write_layer(screening_frame(), tmp_path / "s.gpkg")
    [(table, geom, name, qml, default)] = style_rows(out)
    assert (table, geom, name, default) == ("screening", "geom", "screening", 1)
    root = ET.fromstring(qml.split("\n", 1)[1])  # after the DOCTYPE line
    renderer = root.find("renderer-v2")
    assert renderer is not None and renderer.get("type") == "categorizedSymbol"
    # "May be required" is split out of "not required", as on the web maps.
    assert "permit_may_be_required" in renderer.get("attr", "")
    cats = {c.get("value"): c.get("symbol") for c in renderer.iter("category")}
    assert set(cats) == {"required", "may_be_required", "not_required", "not_applicable"}
    fills = {
        s.get("name"): o.get("value")
        for s in renderer.iter("symbol")
        for o in s.iter("Option")
        if o.get("name") == "color"
    }
    assert fills[cats["required"]] == "215,48,31,255"  # #d7301f
    assert fills[cats["not_required"]] == "26,152,80,255"  # #1a9850
    assert root.find("labeling/settings/text-style").get("fieldName") == "site_id"
    aliases = {a.get("field"): a.get("name") for a in root.iter("alias")}
    assert aliases["permit"] == "Permit decision"


def test_colours_are_the_web_maps(tmp_path):
    from esc_gis.maps.public import PUBLIC_STATUS
    from esc_gis.maps.render import PERMIT_STYLE
    from esc_gis.registry.domain.lifecycle import STATES

    assert styles.PERMIT_COLOURS == PERMIT_STYLE
    assert {k: styles.STATUS_COLOURS[k] for k in PUBLIC_STATUS} == PUBLIC_STATUS
    assert set(styles.STATUS_COLOURS) == set(STATES)
    classes = {k.split(".", 1)[1] for k in load_profile().entries if k.startswith("protective_area.")}
    assert classes <= set(styles.WATER_CLASS_COLOURS)


def test_styled_gpkg_reads_as_one_layer_without_warnings(tmp_path):
    out = write_layer(screening_frame(), tmp_path / "s.gpkg")
    assert [n for n, _ in pyogrio.list_layers(out)] == ["screening", "layer_styles"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gdf = read_layer(out)
        assert list(gdf["site_id"]) == ["A", "B", "C", "D"]
        assert len(read_layer(out, where="permit = 'required'")) == 1
    # A second data layer is still refused without --layer, the style table not counted.
    gpd.GeoDataFrame({"a": [1]}, geometry=[box(0, 0, 1, 1)], crs=CRS).to_file(out, layer="other", engine="pyogrio")
    with pytest.raises(Exception, match="holds 2 layers \\(screening, other\\)"):
        read_layer(out)


def test_layers_without_symbols_get_their_aliases_alone(tmp_path):
    def only_qml(path: Path) -> ET.Element:
        [(_, _, _, qml, default)] = style_rows(path)
        assert default == 1
        return ET.fromstring(qml.split("\n", 1)[1])

    skipped = write_layer(screening_frame().drop(columns="permit"), tmp_path / "k.gpkg", layer="skipped")
    # A "screening" layer without the column the style classifies by is not drawn all "other".
    bare = write_layer(screening_frame().drop(columns="permit"), tmp_path / "b.gpkg")
    for path in (skipped, bare):
        root = only_qml(path)
        # No symbols, and no geometry type: QGIS refuses a style of another geometry type.
        assert root.find("renderer-v2") is None and root.find("layerGeometryType") is None
        assert {a.get("field"): a.get("name") for a in root.iter("alias")}["disturbed_sqft"] == "Disturbed area (sq ft)"
    # A layer the toolkit does not know, or columns it has no words for: no style table at all.
    mine = write_layer(screening_frame(), tmp_path / "m.gpkg", layer="mine")
    other = write_layer(screening_frame()[["geometry"]].assign(n=1), tmp_path / "o.gpkg", layer="skipped")
    assert [n for n, _ in pyogrio.list_layers(mine)] == ["mine"]
    assert [n for n, _ in pyogrio.list_layers(other)] == ["skipped"]
    write_layer(screening_frame(), tmp_path / "s.geojson")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.gpkg", "k.gpkg", "m.gpkg", "o.gpkg", "s.geojson"]


def layer_metadata(path: Path, layer: str) -> dict:
    """What GDAL (and so QGIS) reads as the layer's title (IDENTIFIER) and abstract (DESCRIPTION)."""
    return pyogrio.read_info(path, layer=layer)["layer_metadata"] or {}


@pytest.mark.parametrize(
    ("layer", "title"),
    [
        ("screening", "Screening of sites"),
        ("skipped", "Features skipped as not sites"),
        ("steep", "Steep land"),
        ("protective_areas", "Protective areas"),
        ("soil_loss", "Soil loss per site"),
        ("permits", "Permits"),
    ],
)
def test_each_output_layer_has_a_title_and_an_abstract(tmp_path, layer, title):
    out = write_layer(screening_frame(), tmp_path / "x.gpkg", layer=layer)
    meta = layer_metadata(out, layer)
    assert meta["IDENTIFIER"] == title
    assert meta["DESCRIPTION"] == styles.LAYER_DESCRIPTIONS[layer][1] and len(meta["DESCRIPTION"]) > 40
    # The layer keeps its table name: esc-gis and GDAL open it by that, not by its title.
    assert next(n for n, _ in pyogrio.list_layers(out)) == layer


def test_an_unknown_layer_keeps_gdal_s_identifier_and_no_description(tmp_path):
    out = write_layer(screening_frame(), tmp_path / "x.gpkg", layer="mine")
    assert layer_metadata(out, "mine").get("IDENTIFIER", "mine") == "mine"
    assert not layer_metadata(out, "mine").get("DESCRIPTION")


def test_a_title_another_table_holds_is_left_alone(tmp_path):
    out = write_layer(screening_frame(), tmp_path / "x.gpkg", layer="mine")
    with sqlite3.connect(out) as conn:
        conn.execute("UPDATE gpkg_contents SET identifier = 'Steep land' WHERE table_name = 'mine'")
    gpd.GeoDataFrame({"area_sqft": [1.0]}, geometry=[box(0, 0, 1, 1)], crs=CRS).to_file(
        out, layer="steep", engine="pyogrio"
    )
    assert styles.describe_layer(out, "steep") is False  # identifiers are unique: no failure, no change
    assert layer_metadata(out, "steep").get("IDENTIFIER", "steep") == "steep"
    assert styles.describe_layer(out, "screening") is False  # no such table: nothing written


def test_output_columns_all_have_aliases():
    """Every column the toolkit writes has words in QGIS: screening's contract, steep, protective, soil loss, registry."""
    from esc_gis.registry.store.schema import LAYERS, TABLES
    from esc_gis.screening import CONTRACT_COLUMNS, DEPRECATED_COLUMNS, EXTRA_COLUMNS, OPTIONAL_COLUMNS

    written = {
        "screening": [*CONTRACT_COLUMNS, *EXTRA_COLUMNS, *DEPRECATED_COLUMNS, *OPTIONAL_COLUMNS],
        "steep": ["threshold_pct", "area_sqft"],
        "protective_areas": [
            "water_class",
            "width_ft",
            "section",
            "area_sqft",
            "features",
            "centreline",
            "channel_class_unverified",
        ],
        "soil_loss": [
            "site_id",
            "disturbed_sqft",
            "disturbed_acres",
            "k",
            "k_covered_share",
            "ls_mean",
            "ls_rep",
            "rep_length_ft",
            "rep_slope_pct",
            "dem_covered_share",
            "outside_share",
            "outside_sqft",
            "windows",
            "governing_window",
            "soil_loss_tpa",
            "discharge_tpa",
            "standard_tpa",
            "passes",
            "findings",
        ],
        **{t: [c for c, kind, _ in TABLES[t] if kind not in ("geom", "serial")] for t in LAYERS},
    }
    missing = {layer: [c for c in cols if c not in styles.ALIASES] for layer, cols in written.items()}
    assert {k: v for k, v in missing.items() if v} == {}
    assert set(written) <= set(styles.LAYER_DESCRIPTIONS)
    # And no alias says a number or cites a section: those are the profile's, in the rows.
    assert not [a for a in styles.ALIASES.values() if any(ch.isdigit() for ch in a.replace("12-month", ""))]


def test_registry_tables_are_described_and_its_layers_carry_aliases(tmp_path):
    reg = tmp_path / "reg.gpkg"
    assert CliRunner().invoke(cli, ["permits", "init", str(reg)]).exit_code == 0
    with sqlite3.connect(reg) as conn:
        contents = dict(conn.execute("SELECT table_name, description FROM gpkg_contents").fetchall())
    assert {t for t, d in contents.items() if not d} == set()  # layer_styles has QGIS's own words
    from esc_gis.registry.store.schema import PUBLIC_VIEW, PUBLISHED_VIEW, TABLES

    # Every table a user may open is listed, so QGIS offers it: a new migration's too, and the two views.
    assert set(contents) - {"layer_styles"} == set(TABLES) - {"permit_counters"} | {PUBLIC_VIEW, PUBLISHED_VIEW}
    assert contents["permits"] == styles.LAYER_DESCRIPTIONS["permits"][1]
    assert contents["parties"].endswith("Private.")
    rows = {table: qml for table, _, _, qml, default in style_rows(reg) if default}
    assert set(rows) == {"permits", "disturbed_limits", "inspections", "enforcement_cases"}
    assert "categorizedSymbol" in rows["permits"]
    # The point layer gets aliases alone: a polygon style would be refused by QGIS.
    assert "renderer-v2" not in rows["inspections"] and 'name="Inspector"' in rows["inspections"]


def test_overwrite_keeps_one_default_style(tmp_path):
    out = write_layer(screening_frame(), tmp_path / "s.gpkg")
    write_layer(screening_frame(), out, overwrite=True)
    assert [r[4] for r in style_rows(out)] == [1]


def test_steep_protective_and_registry_styles(tmp_path):
    steep = gpd.GeoDataFrame({"threshold_pct": [1.0], "area_sqft": [2.0]}, geometry=[box(0, 0, 1, 1)], crs=CRS)
    [(table, *_rest)] = style_rows(write_layer(steep, tmp_path / "st.gpkg", layer="steep"))
    assert table == "steep"
    prot = gpd.GeoDataFrame({"water_class": ["lake"], "width_ft": [1.0]}, geometry=[box(0, 0, 1, 1)], crs=CRS)
    [(_, _, _, qml, _)] = style_rows(write_layer(prot, tmp_path / "p.gpkg", layer="protective_areas"))
    root = ET.fromstring(qml.split("\n", 1)[1])
    assert root.find("renderer-v2").get("attr") == "water_class"
    reg = tmp_path / "reg.gpkg"
    r = CliRunner().invoke(cli, ["permits", "init", str(reg)])
    assert r.exit_code == 0, r.output
    [(table, geom, _, qml, default)] = [r for r in style_rows(reg) if r[0] == "permits"]
    assert (table, geom, default) == ("permits", "geom", 1)
    root = ET.fromstring(qml.split("\n", 1)[1])
    assert root.find("renderer-v2").get("attr") == "status"
    assert {c.get("value") for c in root.iter("category")} >= {"active", "stop_work", "suspended", "closed"}


def slope_dem(tmp_path: Path) -> Path:
    return write_dem(tmp_path / "dem.tif", np.tile(np.arange(10, dtype=np.float32), (10, 1)), units="US survey foot")


def test_slope_sidecar_has_the_steep_break(tmp_path):
    t = steep_pct()
    out = tmp_path / "slope.tif"
    write_slope(slope_dem(tmp_path), out, style_steep_pct=t)
    root = ET.fromstring((tmp_path / "slope.qml").read_text().split("\n", 1)[1])
    shader = root.find("pipe/rasterrenderer/rastershader/colorrampshader")
    assert shader.get("colorRampType") == "DISCRETE"
    items = [(float(i.get("value")), i.get("label"), i.get("color")) for i in shader.iter("item")]
    # The class below the threshold ends just under it, so a cell at the threshold is steep.
    below = [v for v, _, _ in items if v < t]
    assert below[-1] == np.nextafter(t, -np.inf)
    steep = next(i for i in items if i[0] >= t)
    assert steep[1] == f"{t:g} % or more (steep)" and steep[2] == "#e31a1c"
    # Without the threshold, no sidecar.
    write_slope(slope_dem(tmp_path), tmp_path / "plain.tif")
    assert not (tmp_path / "plain.qml").exists()


def test_slope_sidecar_stale_is_replaced_another_rasters_is_refused(tmp_path):
    """A style whose raster is gone never blocks a rerun; one styling another raster of the stem needs --overwrite."""
    dem = slope_dem(tmp_path)
    (tmp_path / "slope.qml").write_text("stale")  # slope.tif was deleted, its style left behind
    r = CliRunner().invoke(cli, ["slope", str(dem), "-o", str(tmp_path / "slope.tif"), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "colorrampshader" in (tmp_path / "slope.qml").read_text()
    # slope.qml now styles slope.tif: writing slope.tiff beside it would restyle that raster.
    r = CliRunner().invoke(cli, ["slope", str(dem), "-o", str(tmp_path / "slope.tiff"), "--quiet"])
    assert r.exit_code == 1 and "slope.qml" in r.output and "slope.tif'" in r.output and "--overwrite" in r.output
    assert not (tmp_path / "slope.tiff").exists()
    r = CliRunner().invoke(cli, ["slope", str(dem), "-o", str(tmp_path / "slope.tiff"), "--quiet", "--overwrite"])
    assert r.exit_code == 0, r.output


def require_pyqgis() -> str:
    """/usr/bin/python3 when it imports qgis.core; skip when not, but fail in CI (CI=true)."""
    ok = (
        os.path.exists(SYSTEM_PYTHON)
        and subprocess.run([SYSTEM_PYTHON, "-c", "import qgis.core"], capture_output=True).returncode == 0
    )
    if not ok:
        msg = f"{SYSTEM_PYTHON} cannot import qgis.core (Debian packages python3-qgis, qgis-providers); .ci/run installs them"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: a missing system part is a failure here.")
        pytest.skip(msg)
    return SYSTEM_PYTHON


def run_qgis(python: str, *args: str) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": "/tmp"}
    r = subprocess.run([python, str(CHECK), *args], capture_output=True, text=True, env=env, timeout=300)
    assert r.stdout.strip(), r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_real_qgis_applies_the_styles(tmp_path):
    python = require_pyqgis()
    s = write_layer(screening_frame(), tmp_path / "s.gpkg")
    reg = tmp_path / "reg.gpkg"
    assert CliRunner().invoke(cli, ["permits", "init", str(reg)]).exit_code == 0
    slope = tmp_path / "slope.tif"
    write_slope(slope_dem(tmp_path), slope, style_steep_pct=steep_pct())
    # D is under the sediment area: "For sites with one acre or more of land-disturbing
    # construction activity" (§ 540-7B(3)(b)) does not reach it, so it is neither met nor exceeded.
    loss = gpd.GeoDataFrame(
        {
            "site_id": ["A", "B", "C", "D"],
            "soil_loss_tpa": [3.5, 9.0, None, 9.0],
            "sediment_standard": [True, True, True, False],
            "passes": pd.array([True, False, None, None], dtype="boolean"),
        },
        geometry=[box(0, 0, 50, 50), box(60, 0, 110, 50), box(120, 0, 170, 50), box(180, 0, 230, 50)],
        crs=CRS,
    )
    soil = write_layer(loss, tmp_path / "loss.gpkg", layer="soil_loss")
    got = run_qgis(python, f"{s}:screening", f"{reg}:permits", f"{reg}:inspections", f"{soil}:soil_loss", str(slope))
    scr = got[f"{s}:screening"]
    assert scr["valid"] and scr["features"] == 4 and scr["renderer"] == "categorizedSymbol"
    assert {v: c for v, _, c in scr["categories"]} == {k: c for k, (_, c) in styles.PERMIT_COLOURS.items()}
    assert scr["label_field"] == "site_id" and scr["aliases"]["permit"] == "Permit decision"
    # Its title and abstract, in the metadata QGIS edits and on the Information tab.
    title, abstract = styles.LAYER_DESCRIPTIONS["screening"]
    assert (scr["title"], scr["abstract"]) == (title, abstract)
    assert title in scr["information"] and abstract[:40] in scr["information"]
    assert scr["aliases"]["disturbed_sqft"] == "Disturbed area (sq ft)"
    assert scr["aliases"]["permit_may_be_required"] == "May be required (discretionary)"
    # Soil loss by the standard: each site falls in its class (a null passes is "not computed").
    sl = got[f"{soil}:soil_loss"]
    assert sl["valid"] and sl["renderer"] == "categorizedSymbol" and sl["title"] == "Soil loss per site"
    assert {v: c for v, _, c in sl["categories"]} == {k: c for k, (_, c) in styles.SOIL_LOSS_COLOURS.items()}
    assert sl["label_field"] == "site_id"
    assert sl["classes"] == ["meets", "exceeds", "not_computed", "not_applicable"]
    assert sl["aliases"] == {
        "site_id": "Site",
        "soil_loss_tpa": "Soil loss (tons/acre)",
        "sediment_standard": "Sediment standard applies",
        "passes": "Meets the standard",
    }
    insp = got[f"{reg}:inspections"]  # points: the aliases-only style names no geometry type
    assert insp["valid"] and insp["renderer"] == "singleSymbol" and insp["title"] == "Inspections"
    assert insp["aliases"]["inspector"] == "Inspector"
    perm = got[f"{reg}:permits"]
    assert perm["renderer"] == "categorizedSymbol" and perm["attr"] == "status" and perm["title"] == "Permits"
    assert {v for v, _, _ in perm["categories"]} == set(styles.STATUS_COLOURS)
    ras = got[str(slope)]
    assert ras["valid"] and ras["renderer"] == "singlebandpseudocolor" and ras["ramp_type"] == 1  # Discrete
    t = steep_pct()
    assert next(c for v, _, c in ras["items"] if v >= t) == "#e31a1c"
    assert max(v for v, _, _ in ras["items"] if v < t) == np.nextafter(t, -np.inf)


def test_a_postgis_registry_carries_the_same_words_as_comments(pg_url: str):
    """What QGIS's Browser and DB Manager show for a PostGIS registry: table and column comments."""
    import uuid
    from urllib.parse import quote

    import psycopg

    from esc_gis.registry import init_registry

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        conn.execute(f"CREATE SCHEMA {schema}")
    init_registry(f"{pg_url}?options={quote(f'-csearch_path={schema},public')}")
    with psycopg.connect(pg_url) as conn:
        table = conn.execute("SELECT obj_description(%s::regclass, 'pg_class')", (f"{schema}.permits",)).fetchone()[0]
        column = conn.execute(
            "SELECT col_description(%s::regclass, a.attnum) FROM pg_attribute a "
            "WHERE a.attrelid = %s::regclass AND a.attname = 'disturbed_sqft'",
            (f"{schema}.permits", f"{schema}.permits"),
        ).fetchone()[0]
        parties = conn.execute("SELECT obj_description(%s::regclass, 'pg_class')", (f"{schema}.parties",)).fetchone()[0]
    title, abstract = styles.LAYER_DESCRIPTIONS["permits"]
    assert table == f"{title}: {abstract}"
    assert column == styles.ALIASES["disturbed_sqft"]
    assert parties.endswith("Private.")


def test_a_registry_migration_keeps_the_users_own_default_style(tmp_path):
    from esc_gis.registry.store.backend import open_backend
    from esc_gis.registry.store.schema import MIGRATIONS

    reg = tmp_path / "reg.gpkg"
    assert CliRunner().invoke(cli, ["permits", "init", str(reg)]).exit_code == 0
    # The office saves its own style for the inspections from QGIS, as the layer's default.
    with sqlite3.connect(reg) as conn:
        conn.execute("UPDATE layer_styles SET useAsDefault = 0 WHERE f_table_name = 'inspections'")
        conn.execute(
            "INSERT INTO layer_styles (f_table_catalog, f_table_schema, f_table_name, f_geometry_column, styleName, "
            "styleQML, styleSLD, useAsDefault, description, owner, ui) "
            "VALUES ('', '', 'inspections', 'geom', 'office', '<qgis/>', '', 1, 'ours', '', '')"
        )
    backend = open_backend(reg)
    try:
        with backend.write() as cur:  # what the next migration does
            backend.register_layers(cur, MIGRATIONS[-1])
    finally:
        backend.close()
    defaults = {(t, name) for t, name, _, _, default in _style_names(reg) if default}
    assert ("inspections", "office") in defaults and ("inspections", "inspections") not in defaults
    # The toolkit's style is still there, refreshed; other layers keep the toolkit's as default.
    assert ("inspections", "inspections") in {(t, name) for t, name, *_ in _style_names(reg)}
    assert ("permits", "permits") in defaults


def _style_names(path):
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT f_table_name, styleName, description, styleQML, useAsDefault FROM layer_styles"
        ).fetchall()


def test_the_soil_loss_raster_classes_put_the_standard_with_those_that_meet_it():
    # "No more than" the standard meets it (§ 540-7B(3)(b)): a cell at 5 t/ac is green, just over is not.
    classes = styles._soil_loss_classes(5.0)
    first_at = next(label for upper, label, _ in classes if upper >= 5.0)
    first_over = next(label for upper, label, _ in classes if upper >= math.nextafter(5.0, math.inf))
    assert (first_at, first_over) == ("2.5 to 5 t/ac", "over 5 to under 10 t/ac")
