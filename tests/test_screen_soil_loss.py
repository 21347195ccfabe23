"""Screening's optional bare-soil soil-loss column: present only with soils and a DEM, hand-checked on a plane.

The DEM is a tilted plane in WISCRS (EPSG:7594, US survey feet), 10 % down the rows; the site
is a square of 10 x 10 cells aligned to the grid, so its mean LS is the uniform-slope LS of
its 100 ft length (see tests/test_soil_loss.py), and the estimate is R x K x LS with C = 1.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

from esc_gis.errors import LayerSetError
from esc_gis.layers import LayerSet, load_layers
from esc_gis.profile import load_profile
from esc_gis.screening import DEPRECATED_COLUMNS, run_findings, screen
from esc_gis.terrain.dem import open_dem

# The plane, the grid and the boxes on its cells are soil loss's own (one DEM for both tests).
from .test_soil_loss import CRS, cell_box, plane_dem

EXAMPLE = Path(__file__).parent / "profiles" / "example.toml"
R_BLOCK = '[soil_loss.r_annual]\nstatus = "not_confirmed"\n'


def hand_ls(length_ft: float, slope_pct: float) -> float:
    """RUSLE LS of a uniform slope by hand (McCool 1987/1989), S above the 9 % breakpoint."""
    sin = math.sin(math.atan(slope_pct / 100))
    beta = (sin / 0.0896) / (3 * sin**0.8 + 0.56)
    m = beta / (1 + beta)
    return (length_ft / 72.6) ** m * (16.8 * sin - 0.50)


def profile_with_r(tmp_path: Path, r: float = 100.0):
    text = EXAMPLE.read_text(encoding="utf-8")
    assert R_BLOCK in text
    p = tmp_path / "with_r.toml"
    p.write_text(
        text.replace(
            R_BLOCK, f'[soil_loss.r_annual]\nvalue = {r!r}\nsource = "made up for the test"\nstatus = "not_confirmed"\n'
        ),
        encoding="utf-8",
    )
    return load_profile(p)


def soils(*parts: tuple[shapely.Geometry, object]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"kwfact": [k for _, k in parts]}, geometry=[g for g, _ in parts], crs=CRS)


def layer_set(dem: Path | None, soil: gpd.GeoDataFrame | None) -> LayerSet:
    ls = LayerSet(manifest=Path("none"), crs=gpd.GeoSeries(crs=CRS).crs, jurisdiction=cell_box(0, 0, 30, 30))
    if dem is not None:
        ls.dem_path, ls.dem = dem, open_dem(dem, z_unit="us_ft")
    ls.soils, ls.soils_k_field = soil, "kwfact" if soil is not None else None
    return ls


def sites() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"site_id": ["A"]}, geometry=[cell_box(5, 5, 15, 15)], crs=CRS)


def test_bare_soil_loss_is_r_times_k_times_ls_on_a_plane(tmp_path):
    prof = profile_with_r(tmp_path)
    # Two map units, each under half the site: K area-weights to 0.3; a water unit with no K
    # lies outside the site and is left out without a word.
    soil = soils((cell_box(0, 0, 10, 30), 0.2), (cell_box(10, 0, 20, 30), ".40"), (cell_box(20, 0, 30, 30), None))
    res = screen(sites(), layers=layer_set(plane_dem(tmp_path / "dem.tif"), soil), profile=prof)
    row = res.iloc[0]
    want = 100.0 * 0.3 * hand_ls(100.0, 10.0)  # ≈ 39.1 t/ac/yr
    assert row["bare_soil_loss_tpa"] == pytest.approx(want, rel=1e-4)
    cols = list(res.columns)
    # After esc_gis's own columns and the old names kept for one release (DEPRECATED_COLUMNS).
    assert cols.index("bare_soil_loss_tpa") == cols.index("targeted_areas") + 1 + len(DEPRECATED_COLUMNS)
    assert cols[cols.index("targeted_areas") + 1] == "disturbed_in_village_sqft"
    f = [x for x in json.loads(row["findings"]) if x["code"] == "screening_bare_soil_loss"]
    assert len(f) == 1 and f[0]["basis"] == "policy"
    assert f"{want:.1f} t/ac/yr" in f[0]["message"] and "not a test of" in f[0]["message"]
    assert "K 0.30 over the 100 %" in f[0]["message"]
    # A screening estimate: no pass or fail of the standard rides on it.
    assert not {"passes", "discharge_tpa"} & set(cols)
    assert not any(x["code"].startswith("soil_loss_") for x in json.loads(row["findings"]))
    assert not run_findings(res) or all("bare_soil" not in x["code"] for x in run_findings(res))


def test_a_site_half_on_a_soil_without_k_reports_the_share_with_k(tmp_path):
    prof = profile_with_r(tmp_path)
    soil = soils((cell_box(0, 0, 10, 30), 0.2), (cell_box(10, 0, 30, 30), None))
    row = screen(sites(), layers=layer_set(plane_dem(tmp_path / "dem.tif"), soil), profile=prof).iloc[0]
    assert row["bare_soil_loss_tpa"] == pytest.approx(100.0 * 0.2 * hand_ls(100.0, 10.0), rel=1e-4)
    msg = next(x["message"] for x in json.loads(row["findings"]) if x["code"] == "screening_bare_soil_loss")
    assert "K 0.20 over the 50 %" in msg


def test_column_absent_without_soils_or_without_a_dem(tmp_path):
    prof = profile_with_r(tmp_path)
    dem = plane_dem(tmp_path / "dem.tif")
    soil = soils((cell_box(0, 0, 30, 30), 0.3))
    for ls in (layer_set(dem, None), layer_set(None, soil)):
        res = screen(sites(), layers=ls, profile=prof)
        assert "bare_soil_loss_tpa" not in res.columns
        assert "screening_bare_soil_loss" not in res.iloc[0]["findings"]
        assert all("bare_soil" not in x["code"] for x in run_findings(res))


def test_without_r_in_the_profile_the_column_is_null_and_the_run_says_why(tmp_path):
    prof = load_profile(EXAMPLE)  # no R: not confirmed for the Town
    ls = layer_set(plane_dem(tmp_path / "dem.tif"), soils((cell_box(0, 0, 30, 30), 0.3)))
    res = screen(sites(), layers=ls, profile=prof)
    assert "bare_soil_loss_tpa" in res.columns and res["bare_soil_loss_tpa"].isna().all()
    runs = [x for x in run_findings(res) if x["code"] == "screening_bare_soil_loss_no_r"]
    assert len(runs) == 1 and runs[0]["columns"] == "bare_soil_loss_tpa" and runs[0]["basis"] == "policy"
    assert "screening_bare_soil_loss" not in res.iloc[0]["findings"]


def test_manifest_soils_table_reads_and_checks_its_k_field(tmp_path):
    from esc_gis.io import write_layer

    write_layer(gpd.GeoDataFrame(geometry=[cell_box(0, 0, 30, 30)], crs=CRS), tmp_path / "b.gpkg", layer="b")
    write_layer(soils((cell_box(0, 0, 30, 30), 0.3)).rename(columns={"kwfact": "K"}), tmp_path / "s.gpkg", layer="s")
    manifest = tmp_path / "layers.toml"
    base = '[jurisdiction]\npath = "b.gpkg"\n[soils]\npath = "s.gpkg"\n'
    manifest.write_text(base + 'k_field = "K"\n', encoding="utf-8")
    ls = load_layers(manifest, profile=load_profile(EXAMPLE))
    assert ls.soils is not None and len(ls.soils) == 1 and ls.soils_k_field == "K"
    manifest.write_text(base, encoding="utf-8")  # the profile's kwfact is not a field of this layer
    with pytest.raises(LayerSetError, match=r"no K field 'kwfact'.*K"):
        load_layers(manifest, profile=load_profile(EXAMPLE))
    manifest.write_text(base + 'k_feild = "K"\n', encoding="utf-8")
    with pytest.raises(LayerSetError, match="did you mean 'k_field'"):
        load_layers(manifest, profile=load_profile(EXAMPLE))


def test_the_estimates_finding_is_the_profiles_words_with_each_sites_own_figures(tmp_path):
    """Each site gets one finding, appended after its others, in the profile's words with its R (and the R's
    status), K, the share with a K, its LS and the share left out; a site with nothing inside gets none."""
    prof = profile_with_r(tmp_path, r=120.0)
    soil = soils((cell_box(0, 0, 10, 30), 0.2), (cell_box(10, 0, 20, 30), ".40"), (cell_box(20, 0, 30, 30), None))
    two = gpd.GeoDataFrame(
        {"site_id": ["A", "B", "OUT"]},
        geometry=[cell_box(5, 5, 15, 15), cell_box(15, 5, 25, 15), cell_box(40, 40, 45, 45)],
        crs=CRS,
    )
    res = screen(two, layers=layer_set(plane_dem(tmp_path / "dem.tif"), soil), profile=prof).set_index("site_id")
    ls = hand_ls(100.0, 10.0)
    for site, k, covered in (("A", 0.3, 100.0), ("B", 0.4, 50.0)):
        found = json.loads(res.loc[site, "findings"])
        assert [x["code"] for x in found].count("screening_bare_soil_loss") == 1
        assert found[-1]["code"] == "screening_bare_soil_loss" and len(found) > 1  # appended after the others
        want = prof.finding(
            "screening_bare_soil_loss",
            bare_soil_loss_tpa=120.0 * k * ls,
            r_annual=120.0,
            r_status="not confirmed",
            k=k,
            k_covered_pct=covered,
            ls=ls,
            outside_pct=0.0,
        )
        assert {key: found[-1][key] for key in ("section", "basis", "message")} == {
            "section": want.section,
            "basis": want.basis,
            "message": want.message,
        }
        assert "R 120, not confirmed;" in want.message
    assert "screening_bare_soil_loss" not in res.loc["OUT", "findings"]
    assert math.isnan(res.loc["OUT", "bare_soil_loss_tpa"])


def test_a_measured_run_reports_its_stages_and_keeps_what_the_read_found(tmp_path):
    """The run's progress goes through each stage in order to "done" at 1.0, and the run carries what the
    read found (skip rule, schema, features left out, id field), its limits as text and its run findings."""
    import dataclasses

    from esc_gis.screening.decide import RUN_FINDINGS, measure_run
    from esc_gis.screening.read import read_run

    prof = profile_with_r(tmp_path)
    soil = soils((cell_box(0, 0, 30, 30), 0.2))
    ls = layer_set(plane_dem(tmp_path / "dem.tif"), soil)
    limits = gpd.GeoDataFrame({"site_id": ["A"]}, geometry=[cell_box(6, 6, 14, 14)], crs=CRS)
    read = read_run(sites(), limits, crs=ls.crs)
    read = dataclasses.replace(read, rule="rights of way", schema="v10", not_selected=3, id_field="PARCELID")
    seen: list[tuple[str, float]] = []
    run = measure_run(read, ls, prof, progress=lambda stage, frac: seen.append((stage, frac)))
    assert seen[-3:] == [("applying the ordinance", 0.85), ("estimating bare-soil soil loss", 0.9), ("done", 1.0)]
    assert len(seen) > 3 and all(0 <= f <= 1 for _, f in seen)  # the measuring stages come first
    assert [f for _, f in seen] == sorted(f for _, f in seen)
    assert (run.rule, run.schema, run.not_selected, run.id_field) == ("rights of way", "v10", 3, "PARCELID")
    assert run.run_findings == list(run.result.attrs[RUN_FINDINGS])
    assert run.result["disturbed_limits"].iloc[0].startswith("SRID=7594;POLYGON")
    # Without a progress callback the run is the same.
    quiet = measure_run(read, ls, prof)
    assert quiet.result.drop(columns="geometry").equals(run.result.drop(columns="geometry"))


def test_the_layer_sets_k_field_is_the_one_read_even_beside_a_field_of_a_known_name(tmp_path):
    """The layer set names the soils layer's K field (``k_field``); a column with a name K is often found
    under (kwfact) beside it holds something else and is not read."""
    prof = profile_with_r(tmp_path)
    soil = gpd.GeoDataFrame({"kwfact": [0.9], "K_OURS": [0.3]}, geometry=[cell_box(0, 0, 30, 30)], crs=CRS)
    ls = layer_set(plane_dem(tmp_path / "dem.tif"), soil)
    ls.soils_k_field = "K_OURS"
    row = screen(sites(), layers=ls, profile=prof).iloc[0]
    assert row["bare_soil_loss_tpa"] == pytest.approx(100.0 * 0.3 * hand_ls(100.0, 10.0), rel=1e-4)
