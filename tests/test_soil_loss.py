"""Soil loss per site and phase: schedules, K, the arithmetic, the standard's edge, the findings.

The DEMs are tilted planes in WISCRS (EPSG:7594, US survey feet, elevations in US feet) as
Winnebago County lidar comes. On a plane sloping down the rows, with the disturbed area a
square of N x N cells aligned to the grid, the Desmet & Govers L of the cells in row i is
((i+1)D)^(m+1) - (iD)^(m+1) over D 72.6^m; its mean over the rows telescopes to (ND/72.6)^m,
so the site's mean LS is exactly the uniform-slope LS of length ND (hand formula below).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import rasterio
import shapely
from rasterio.transform import from_origin

from esc_gis.errors import LayerReadError, ProfileError, ValidationError
from esc_gis.profile import load_profile
from esc_gis.soil.k import k_by_site
from esc_gis.soil.rusle import erosivity_share
from esc_gis.soil.schedule import Phase, read_schedule, validate_schedule, windows
from esc_gis.soil.soil_loss import read_ei_distribution, soil_loss, soil_loss_tables

EXAMPLE = Path(__file__).parent / "profiles" / "example.toml"
CRS = "EPSG:7594"
X0, Y0 = 800_000.0, 500_000.0  # top-left of the DEM, ftUS
CELL = 10.0
UNIFORM = np.ones(365)  # each day the same share: a period's share is days / 365


def hand_ls(length_ft: float, slope_pct: float) -> float:
    """RUSLE LS of a uniform slope by hand (McCool 1987/1989): S above the 9 % breakpoint."""
    sin = math.sin(math.atan(slope_pct / 100))
    beta = (sin / 0.0896) / (3 * sin**0.8 + 0.56)
    m = beta / (1 + beta)
    s = 16.8 * sin - 0.50 if slope_pct >= 9 else 10.8 * sin + 0.03
    return (length_ft / 72.6) ** m * s


def plane_dem(path: Path, slope_pct: float = 10.0, rows: int = 30, cols: int = 30) -> Path:
    """A plane falling southward (down the rows) by slope_pct, elevations in US feet."""
    z = 500.0 - (np.arange(rows) * CELL * slope_pct / 100.0)[:, None] * np.ones((1, cols))
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=cols,
        height=rows,
        count=1,
        dtype="float32",
        crs=CRS,
        transform=from_origin(X0, Y0, CELL, CELL),
        nodata=-9999,
    ) as dst:
        dst.write(z.astype("float32"), 1)
    return path


#: The example profile's sediment area (0.5 acre) in sq ft. The plane tests' site is 100 x 100 ft,
#: under it; it is one lot of a common plan that disturbs exactly this much, so the standard
#: reaches it ("For sites with one acre [here 0.5] or more of land-disturbing construction
#: activity", counting "areas that are part of a larger common plan of development").
PLAN_AT_SEDIMENT_AREA_SQFT = 0.5 * 43_560.0


def plane_kw(schedule) -> dict:
    """The inputs every plane test shares: a schedule, uniform erosivity, R 100, K 0.3, elevations in US feet.

    And a common plan at the sediment area, so the standard reaches the small plane site.
    """
    return {
        "schedule": schedule,
        "ei_daily": UNIFORM,
        "r_annual": 100.0,
        "k": 0.3,
        "z_unit": "us_ft",
        "plan_disturbed_sqft": PLAN_AT_SEDIMENT_AREA_SQFT,
    }


def cell_box(c0: int, r0: int, c1: int, r1: int) -> shapely.Polygon:
    """A box on cell edges: columns c0..c1, rows r0..r1 (exclusive ends)."""
    return shapely.box(X0 + c0 * CELL, Y0 - r1 * CELL, X0 + c1 * CELL, Y0 - r0 * CELL)


def sites(*geoms: shapely.Geometry) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"site": [f"S{i + 1}" for i in range(len(geoms))]}, geometry=list(geoms), crs=CRS)


@pytest.fixture
def prof():
    return load_profile(EXAMPLE)


@pytest.fixture
def tables(prof):
    return soil_loss_tables(prof)


def two_phases(tables):
    rows = [
        {"phase": "grading", "start": "2027-04-01", "end": "2027-06-29", "cover": "bare", "practices": "sediment_trap"},
        {"phase": "seeded", "start": "2027-06-30", "end": "2027-09-29", "cover": "permanent_seeding", "practices": ""},
    ]
    return validate_schedule(rows, tables.covers, tables.practices)


# --- The profile's tables -------------------------------------------------------------------


def test_tables_come_from_the_profile_with_sources(tables, prof):
    assert tables.standard_tpa == prof.entry("thresholds.sediment_load").value == 3  # the example's, not 5
    assert tables.max_slope_pct == 33
    assert tables.covers["bare"].value == 1.0 and tables.covers["bare"].status == "confirmed"
    assert tables.practices["sediment_trap"].value == 0.8 and "1063" in tables.practices["sediment_trap"].source
    # The silt-fence figure is an estimate and must say so; no R is presented as a source value.
    assert tables.practices["silt_fence"].status == "not_confirmed"
    assert tables.r_annual is None
    assert all(v.source for v in [*tables.covers.values(), *tables.practices.values()])


def test_shipped_profile_has_the_5_ton_standard_and_no_r():
    t = soil_loss_tables(load_profile())
    assert t.standard_tpa == 5 and t.r_annual is None


def test_a_profile_without_soil_loss_tables_is_refused(tmp_path):
    text = EXAMPLE.read_text(encoding="utf-8")
    cut = text[: text.index("\n[soil_loss]")] + "\n" + text[text.index("[findings.soil_loss_meets]") :]
    p = tmp_path / "p.toml"
    p.write_text(cut, encoding="utf-8")
    with pytest.raises(ProfileError, match=r"no \[soil_loss\] table"):
        soil_loss_tables(load_profile(p))


# --- Schedules ------------------------------------------------------------------------------


def test_a_14_month_schedule_gives_two_windows(tables):
    rows = [
        {"phase": "a", "start": "2027-04-01", "end": "2027-10-31", "cover": "bare", "practices": ""},
        {"phase": "b", "start": "2027-11-01", "end": "2028-05-31", "cover": "straw_mulch", "practices": "silt_fence"},
    ]
    phases = validate_schedule(rows, tables.covers, tables.practices)
    got = windows(phases)
    assert [(w.start, w.end) for w in got] == [
        (dt.date(2027, 4, 1), dt.date(2028, 3, 31)),
        (dt.date(2028, 4, 1), dt.date(2028, 5, 31)),
    ]
    # Exactly 12 months is one window; one day more is two.
    one = [Phase("a", dt.date(2027, 4, 1), dt.date(2028, 3, 31), "bare", (), 1)]
    assert len(windows(one)) == 1
    assert len(windows([Phase("a", dt.date(2027, 4, 1), dt.date(2028, 4, 1), "bare", (), 1)])) == 2


def test_bad_schedule_lists_every_problem_at_once(tables, tmp_path):
    p = tmp_path / "schedule.csv"
    p.write_text(
        "phase,start,end,cover,practices\n"
        "grading,2027-05-01,2027-04-01,bare,silt_fence\n"  # out of order
        "rough,2027-04-01,2027-06-30,bare,\n"
        "overlap,2027-06-15,2027-07-31,gravel,silt_fence;hay_bales\n"  # overlap, unknown cover and practice
        "late,2027-08-01,2027-13-01,bare,\n",  # not a date
        encoding="utf-8",
    )
    with pytest.raises(ValidationError) as info:
        read_schedule(p, tables.covers, tables.practices)
    text = str(info.value)
    for needle in (
        "row 1",
        "end 2027-04-01 is before start 2027-05-01",
        "overlaps phase 'rough'",
        "cover 'gravel' is not in the profile",
        "practice 'hay_bales' is not in the profile",
        "'2027-13-01' is not a date",
    ):
        assert needle in text, needle
    assert len(info.value.problems) == 5


def test_a_gap_between_phases_is_refused_and_a_toml_schedule_reads(tables, tmp_path):
    rows = [
        {"phase": "a", "start": "2027-04-01", "end": "2027-04-30", "cover": "bare"},
        {"phase": "b", "start": "2027-05-03", "end": "2027-05-31", "cover": "bare"},
    ]
    with pytest.raises(ValidationError, match="a gap of 2 days"):
        validate_schedule(rows, tables.covers, tables.practices)
    p = tmp_path / "s.toml"
    p.write_text(
        '[[phase]]\nphase = "a"\nstart = 2027-04-01\nend = 2027-04-30\ncover = "bare"\npractices = ["silt_fence"]\n'
        '[[phase]]\nphase = "b"\nstart = 2027-05-01\nend = 2027-05-31\ncover = "sod"\n',
        encoding="utf-8",
    )
    got = read_schedule(p, tables.covers, tables.practices)
    assert [(x.name, x.cover, x.practices) for x in got] == [("a", "bare", ("silt_fence",)), ("b", "sod", ())]


def test_schedule_file_errors(tables, tmp_path):
    with pytest.raises(LayerReadError, match="does not exist"):
        read_schedule(tmp_path / "none.csv", tables.covers, tables.practices)
    p = tmp_path / "s.csv"
    p.write_text("name,from,to\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="no column phase, start, end, cover"):
        read_schedule(p, tables.covers, tables.practices)


# --- K -------------------------------------------------------------------------------------


def test_k_from_two_map_units_is_area_weighted():
    site = shapely.box(0, 0, 100, 100)
    soils = gpd.GeoDataFrame(
        {"kwfact": [".20", 0.40, None]},  # SSURGO writes kwfact as text; a blank polygon far away
        geometry=[shapely.box(-50, -50, 75, 150), shapely.box(75, -50, 150, 150), shapely.box(500, 500, 600, 600)],
        crs=CRS,
    )
    got = k_by_site(np.array([site, shapely.box(0, 0, 200, 100)]), soils, k_field="kwfact", k_max=0.7)
    # 75 % at 0.20 and 25 % at 0.40; the second site is 3/8 at 0.20, 3/8 at 0.40, 1/4 uncovered.
    assert got.k == pytest.approx([0.25, 0.30])
    assert got.covered_share == pytest.approx([1.0, 0.75])


def test_k_out_of_range_and_missing_field_are_refused_with_the_fix():
    site = np.array([shapely.box(0, 0, 100, 100)])
    soils = gpd.GeoDataFrame(
        {"kwfact": [0.9, None, 0.0]},
        geometry=[shapely.box(0, 0, 30, 100), shapely.box(30, 0, 60, 100), shapely.box(60, 0, 100, 100)],
        crs=CRS,
    )
    with pytest.raises(ValidationError) as info:
        k_by_site(site, soils, k_field="kwfact", k_max=0.7)
    assert [p.row for p in info.value.problems] == [1, 2, 3]
    assert "K 0.9" in str(info.value) and "no K" in str(info.value)
    with pytest.raises(ValidationError, match=r"no field 'kwfact'.*k_field="):
        k_by_site(site, soils.rename(columns={"kwfact": "k"}), k_field="kwfact", k_max=0.7)


# --- Soil loss on a tilted plane --------------------------------------------------------------


def test_two_phase_soil_loss_on_a_tilted_plane_is_the_hand_computed(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    site = cell_box(5, 5, 15, 15)  # 10 x 10 cells: 100 ft down the slope
    res = soil_loss(sites(site), dem, profile=prof, **plane_kw(two_phases(tables)), id_field="site")
    ls = hand_ls(100.0, 10.0)  # LS ≈ 1.30
    a1 = 100 * 90 / 365 * 0.3 * ls * 1.0  # 90 days bare
    a2 = 100 * 92 / 365 * 0.3 * ls * 0.01  # 92 days seeded
    d1, d2 = a1 * (1 - 0.8), a2  # the trap keeps 80 % of the first phase; nothing in the second
    row = res.sites.iloc[0]
    assert row["ls_mean"] == pytest.approx(ls, rel=1e-4)
    assert res.phases["soil_loss_tpa"].to_numpy() == pytest.approx([a1, a2], rel=1e-4)
    assert res.phases["discharge_tpa"].to_numpy() == pytest.approx([d1, d2], rel=1e-4)
    assert row["soil_loss_tpa"] == pytest.approx(a1 + a2, rel=1e-4)
    assert row["discharge_tpa"] == pytest.approx(d1 + d2, rel=1e-4)
    assert row["windows"] == 1 and row["governing_window"] == 1
    assert row["outside_share"] == 0 and row["site_id"] == "S1"
    assert row["dem_covered_share"] == pytest.approx(1.0, rel=1e-4)
    assert row["disturbed_sqft"] == pytest.approx(100 * 100 * (1200 / 3937 / 0.3048) ** 2)
    # The representative slope is the whole plane: 100 ft at 10 %.
    assert row["rep_length_ft"] == pytest.approx(100.0, rel=1e-4)
    assert row["rep_slope_pct"] == pytest.approx(10.0, rel=1e-4)


def test_steep_area_is_outside_the_method_and_reported(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 40.0)
    res = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, **plane_kw(two_phases(tables)))
    row = res.sites.iloc[0]
    # No number: it neither passes nor fails (null), and has no governing window.
    assert row["outside_share"] == 1.0 and pd.isna(row["passes"]) and math.isnan(row["discharge_tpa"])
    assert pd.isna(row["governing_window"])
    codes = [f["code"] for f in json.loads(row["findings"])]
    # Called alone, without a screening, the function says the article's reach was not decided.
    assert codes == [
        "soil_loss_not_computed",
        "soil_loss_outside_method",
        "soil_loss_not_confirmed",
        "soil_loss_applicability_not_screened",
    ]


def _profile_with_standard(tmp_path: Path, value: float) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    old = "[thresholds.sediment_load]\nvalue = 3\n"
    assert old in text
    p = tmp_path / f"p{value!r}.toml"
    p.write_text(text.replace(old, f"[thresholds.sediment_load]\nvalue = {value!r}\n"), encoding="utf-8")
    return p


def test_pass_and_fail_exactly_at_the_standard(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    kw = plane_kw(two_phases(tables))
    got = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, **kw).sites.iloc[0]["discharge_tpa"]
    at = load_profile(_profile_with_standard(tmp_path, float(got)))
    below = load_profile(_profile_with_standard(tmp_path, float(np.nextafter(got, 0))))
    row_at = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=at, **kw).sites.iloc[0]
    row_below = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=below, **kw).sites.iloc[0]
    assert row_at["passes"] and not row_below["passes"]  # "no more than": equal passes
    f_at, f_below = json.loads(row_at["findings"])[0], json.loads(row_below["findings"])[0]
    assert f_at["code"] == "soil_loss_meets" and f_below["code"] == "soil_loss_exceeds"


def test_findings_carry_section_and_basis_from_the_profile(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    res = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, **plane_kw(two_phases(tables)))
    found = {f["code"]: f for f in json.loads(res.sites.iloc[0]["findings"])}
    assert found["soil_loss_meets"]["section"] == "§ 23-7B(3)(b)[1]; WDNR EGAD 3800-2017-03"
    assert found["soil_loss_meets"]["basis"] == "technical_standard"
    assert (
        "3 tons per acre per year" in found["soil_loss_meets"]["message"] or "3 " in found["soil_loss_meets"]["message"]
    )
    # Every input without a confirmed source is named: R, the distribution and the secondary C.
    msg = found["soil_loss_not_confirmed"]["message"]
    assert "R annual 100" in msg and "erosivity distribution" in msg and "permanent_seeding" in msg
    assert "sediment_trap" not in msg  # confirmed (standard 1063)
    assert "soil_loss_outside_method" not in found  # a 10 % plane is all inside


def test_soils_layer_area_weights_into_the_site(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    site = cell_box(5, 5, 15, 15)
    x0, y0, x1, y1 = site.bounds
    mid = (x0 + x1) / 2
    soils = gpd.GeoDataFrame(
        {"kwfact": [0.2, 0.4]},
        geometry=[shapely.box(x0 - 50, y0 - 50, mid, y1 + 50), shapely.box(mid, y0 - 50, x1 + 50, y1 + 50)],
        crs=CRS,
    )
    common = {
        "schedule": two_phases(tables),
        "profile": prof,
        "ei_daily": UNIFORM,
        "r_annual": 100.0,
        "z_unit": "us_ft",
    }
    by_layer = soil_loss(sites(site), dem, soils=soils, **common).sites.iloc[0]
    by_value = soil_loss(sites(site), dem, k=0.3, **common).sites.iloc[0]
    assert by_layer["k"] == pytest.approx(0.3)
    assert by_layer["discharge_tpa"] == pytest.approx(by_value["discharge_tpa"])


def test_missing_r_and_bad_k_are_refused_together(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    with pytest.raises(ValidationError) as info:
        soil_loss(
            sites(cell_box(5, 5, 15, 15)), dem, schedule=two_phases(tables), profile=prof, ei_daily=UNIFORM, k=0.95
        )
    text = str(info.value)
    assert "r_annual=" in text and "--" not in text and "K 0.95 is out of range" in text


def test_a_14_month_schedule_sums_each_window(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    rows = [
        {"phase": "a", "start": "2027-04-01", "end": "2027-10-31", "cover": "bare", "practices": ""},
        {"phase": "b", "start": "2027-11-01", "end": "2028-05-31", "cover": "sod", "practices": ""},
    ]
    sched = validate_schedule(rows, tables.covers, tables.practices)
    res = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, **plane_kw(sched))
    base = 100 / 365 * 0.3 * hand_ls(100.0, 10.0)
    w1 = base * (214 * 1.0 + 152 * 0.01)  # Apr-Oct bare, Nov-Mar sod (2027-11-01..2028-03-31: 152 days)
    w2 = base * 61 * 0.01  # Apr-May 2028 sod
    assert res.windows["discharge_tpa"].to_numpy() == pytest.approx([w1, w2], rel=1e-4)
    assert res.windows["governs"].tolist() == [True, False]
    assert len(res.phases) == 3  # phase b is cut at the window boundary


def test_ei_distribution_files(tmp_path):
    monthly = tmp_path / "m.csv"
    monthly.write_text(
        "month,pct\n" + "\n".join(f"{m},{v}" for m, v in enumerate([0, 0, 0, 0, 0, 0, 31, 0, 0, 0, 0, 0], 1))
    )
    ei = read_ei_distribution(monthly)
    assert ei.shape == (365,) and ei.sum() == pytest.approx(31)
    # July's erosivity falls on July's days, read as the LEW method reads the year.
    assert erosivity_share(ei, dt.date(2027, 7, 1), dt.date(2027, 7, 31)) == pytest.approx(1.0)
    assert erosivity_share(ei, dt.date(2027, 7, 2), dt.date(2027, 7, 31)) == pytest.approx(30 / 31)
    assert erosivity_share(ei, dt.date(2027, 1, 1), dt.date(2027, 6, 30)) == 0
    halves = tmp_path / "h.csv"
    halves.write_text("\n".join("15" if i == 12 else "0" for i in range(24)))  # first half of July only
    ei = read_ei_distribution(halves)
    assert erosivity_share(ei, dt.date(2027, 7, 1), dt.date(2027, 7, 15)) == pytest.approx(1.0)
    bad = tmp_path / "b.csv"
    bad.write_text("1\n2\n3\n")
    with pytest.raises(ValidationError, match="3 values"):
        read_ei_distribution(bad)


# --- The command ----------------------------------------------------------------------------


def town_layers(folder: Path, jurisdiction: shapely.Geometry | None = None) -> Path:
    """A layer set whose jurisdiction covers the plane DEM (the sites here are the Town's): its manifest.

    ``esc-gis soil-loss`` screens its sites (issue 34): a site outside the layer set's
    jurisdiction is not judged, so the plane tests give one that holds them.
    """
    folder.mkdir(parents=True, exist_ok=True)
    geom = jurisdiction if jurisdiction is not None else cell_box(-20, -20, 120, 120)
    gpd.GeoDataFrame({"name": ["Town"]}, geometry=[geom], crs=CRS).to_file(folder / "town.gpkg", engine="pyogrio")
    manifest = folder / "layers.toml"
    manifest.write_text(f'crs = "{CRS}"\n[jurisdiction]\npath = "town.gpkg"\n', encoding="utf-8")
    return manifest


def _soil_loss_args(
    tmp_path: Path,
    frame: gpd.GeoDataFrame,
    schedule_text: str,
    manifest: Path,
    *,
    rows: int | None = None,
    extra: tuple[str, ...] = (),
) -> list[str]:
    """Write the sites, a plane DEM (rows x rows cells, or plane_dem's default), the schedule and a flat EI file;
    return soil-loss's arguments with ``extra`` before the layer set."""
    from esc_gis.io import write_layer

    size = {} if rows is None else {"rows": rows, "cols": rows}
    dem = plane_dem(tmp_path / "dem.tif", 10.0, **size)
    write_layer(frame, tmp_path / "sites.gpkg", layer="sites")
    (tmp_path / "schedule.csv").write_text(schedule_text, encoding="utf-8")
    (tmp_path / "ei.csv").write_text("month,share\n" + "\n".join(["1"] * 12), encoding="utf-8")
    return [
        "soil-loss", str(tmp_path / "sites.gpkg"), "--dem", str(dem), "--z-unit", "us_ft", "--k", "0.3",
        "--schedule", str(tmp_path / "schedule.csv"), "--ei-file", str(tmp_path / "ei.csv"), "--r-annual", "100",
        *extra, "--layers", str(manifest), "-o", str(tmp_path / "out.csv"),
    ]  # fmt: skip


def _cli_inputs(tmp_path: Path, schedule_text: str) -> list[str]:
    extra = ("--id-field", "site", "--profile", str(EXAMPLE))
    frame = sites(cell_box(5, 5, 15, 15))
    return _soil_loss_args(tmp_path, frame, schedule_text, town_layers(tmp_path / "layers"), extra=extra)


GOOD = "phase,start,end,cover,practices\ngrading,2027-04-01,2027-06-30,bare,sediment_trap\n"


def test_cli_writes_sites_phases_and_windows_and_refuses_overwrite(tmp_path):
    from click.testing import CliRunner

    from esc_gis.cli.main import cli

    # The 100 x 100 ft site is one lot of common plan P, at the sediment area: the standard reaches it.
    # (--plan-disturbed-sqft is a plan's total: only for sites that name the plan, issue 46.)
    extra = ("--id-field", "site", "--profile", str(EXAMPLE), "--plan-disturbed-sqft", str(PLAN_AT_SEDIMENT_AREA_SQFT))
    frame = sites(cell_box(5, 5, 15, 15)).assign(plan_id="P")
    args = _soil_loss_args(tmp_path, frame, GOOD, town_layers(tmp_path / "layers"), extra=extra)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "S1" in result.output and "passes" in result.output
    assert (tmp_path / "out.csv.phases.csv").exists() and (tmp_path / "out.csv.windows.csv").exists()
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 1 and "exists" in again.output
    assert CliRunner().invoke(cli, [*args, "--overwrite"]).exit_code == 0


def test_cli_bad_schedule_lists_every_problem_and_writes_nothing(tmp_path):
    from click.testing import CliRunner

    from esc_gis.cli.main import cli

    bad = (
        "phase,start,end,cover,practices\n"
        "a,2027-05-01,2027-04-01,bare,\n"
        "b,2027-04-01,2027-06-30,gravel,\n"
        "c,2027-06-01,2027-07-31,bare,\n"
    )
    result = CliRunner().invoke(cli, _cli_inputs(tmp_path, bad))
    assert result.exit_code == 1
    assert "before start" in result.output and "'gravel'" in result.output and "overlaps" in result.output
    assert "Traceback" not in result.output
    assert not list(tmp_path.glob("out*"))


def test_cli_disturbed_layer_cuts_each_site_and_a_missing_dem_is_refused(tmp_path):
    from click.testing import CliRunner

    from esc_gis.cli.main import cli
    from esc_gis.io import read_layer, write_layer

    args = _cli_inputs(tmp_path, GOOD)
    # Only the site's upper half (5 cells down the slope) is disturbed.
    write_layer(gpd.GeoDataFrame(geometry=[cell_box(0, 0, 30, 10)], crs=CRS), tmp_path / "dist.gpkg", layer="d")
    result = CliRunner().invoke(cli, [*args, "--disturbed", str(tmp_path / "dist.gpkg")])
    assert result.exit_code == 0, result.output
    row = read_layer(tmp_path / "out.csv").iloc[0]
    assert float(row["disturbed_sqft"]) == pytest.approx(100 * 50 * (1200 / 3937 / 0.3048) ** 2)
    assert float(row["ls_mean"]) == pytest.approx(hand_ls(50.0, 10.0), rel=1e-4)
    no_dem = [a for a in args if a not in ("--dem", str(tmp_path / "dem.tif"))]
    result = CliRunner().invoke(cli, [*no_dem, "-o", str(tmp_path / "other.csv")])
    # --layers names a layer set without a [dem]: refused all the same.
    assert result.exit_code == 1 and "give --dem" in result.output and not (tmp_path / "other.csv").exists()


# --- The per-cell raster (--raster) -----------------------------------------------------------


def hand_row_ls(i: int, slope_pct: float, d: float = CELL * 1200 / 3937 / 0.3048) -> float:
    """Desmet & Govers LS of the cells in row i (0 = the top) of a plane whose flow starts at row 0."""
    sin = math.sin(math.atan(slope_pct / 100))
    beta = (sin / 0.0896) / (3 * sin**0.8 + 0.56)
    m = beta / (1 + beta)
    s = 16.8 * sin - 0.50 if slope_pct >= 9 else 10.8 * sin + 0.03
    return ((((i + 1) * d) ** (m + 1) - (i * d) ** (m + 1)) / (d * 72.6**m)) * s


def test_raster_cells_are_the_hand_computed_on_a_tilted_plane(tmp_path, prof, tables):
    from esc_gis.errors import OutputExistsError
    from esc_gis.terrain.slope import NODATA

    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    kw = plane_kw(two_phases(tables))
    out = tmp_path / "cells.tif"
    res = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, raster=out, **kw)
    assert res.raster == out
    # The style's classes are cut at the profile's standard (the example's 3 t/ac/yr).
    assert 'label="over 3 to under 6 t/ac"' in out.with_suffix(".qml").read_text(encoding="utf-8")
    rc = 100 * 90 / 365 * 1.0 + 100 * 92 / 365 * 0.01  # sum of R_period x C over the window
    rce = 100 * 90 / 365 * 1.0 * (1 - 0.8) + 100 * 92 / 365 * 0.01  # ... x (1 - efficiency)
    with rasterio.open(out) as src, rasterio.open(dem) as d:
        assert src.count == 3 and src.dtypes == ("float32",) * 3 and src.nodata == NODATA
        assert src.descriptions == ("sediment_discharge_tpa", "soil_loss_tpa", "method_class")
        assert src.crs == d.crs and src.res == d.res
        assert src.profile["tiled"] and src.compression.name.lower() == "deflate"
        # On the DEM's grid: the origin is a whole number of DEM cells from the DEM's.
        col, row = ~d.transform * (src.transform.c, src.transform.f)
        assert (col, row) == (pytest.approx(round(col)), pytest.approx(round(row)))
        discharge, loss, cls = src.read()
        r0, c0 = src.index(X0 + 5.5 * CELL, Y0 - 5.5 * CELL)  # the site's top-left cell
    site = (slice(r0, r0 + 10), slice(c0, c0 + 10))
    want_ls = np.array([hand_row_ls(i, 10.0) for i in range(10)])[:, None] * np.ones((1, 10))
    assert loss[site] == pytest.approx(0.3 * want_ls * rc, rel=1e-4)
    assert discharge[site] == pytest.approx(0.3 * want_ls * rce, rel=1e-4)
    assert (cls[site] == 0).all()
    # The site table's numbers are the mean over its cells (the rows' LS telescope).
    row = res.sites.iloc[0]
    assert float(loss[site].mean()) == pytest.approx(row["soil_loss_tpa"], rel=1e-5)
    assert float(discharge[site].mean()) == pytest.approx(row["discharge_tpa"], rel=1e-5)
    # Cells outside the disturbed area say nothing.
    outside = np.ones(loss.shape, bool)
    outside[site] = False
    assert (loss[outside] == NODATA).all() and (cls[outside] == NODATA).all()
    # Refused without overwrite, before any work; replaced with it.
    with pytest.raises(OutputExistsError):
        soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, raster=out, **kw)
    soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, raster=out, overwrite=True, **kw)
    # A style whose raster is gone is stale: it never blocks a new run, and is replaced.
    out.unlink()
    out.with_suffix(".qml").write_text("stale", encoding="utf-8")
    soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, raster=out, **kw)
    assert out.exists() and "over 3 to under 6" in out.with_suffix(".qml").read_text(encoding="utf-8")


def test_raster_marks_cells_outside_the_method_and_leaves_them_without_a_value(tmp_path, prof, tables):
    from esc_gis.terrain.slope import NODATA

    dem = plane_dem(tmp_path / "dem.tif", 40.0)
    out = tmp_path / "steep.tif"
    kw = plane_kw(two_phases(tables))
    soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, raster=out, **kw)
    with rasterio.open(out) as src:
        discharge, loss, cls = src.read()
        r0, c0 = src.index(X0 + 5.5 * CELL, Y0 - 5.5 * CELL)
    site = (slice(r0, r0 + 10), slice(c0, c0 + 10))
    assert (cls[site] == 1).all()  # steeper than 33 %: prescriptive practices, no number
    assert (loss[site] == NODATA).all() and (discharge[site] == NODATA).all()


def test_a_site_without_disturbance_or_half_off_the_dem_says_so(tmp_path, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    kw = plane_kw(two_phases(tables))
    prof = load_profile(EXAMPLE)
    # Site b has no part of the disturbed layer in it (what `--disturbed` leaves of it is empty);
    # site c hangs half off the DEM's west edge.
    frame = gpd.GeoDataFrame(
        {"site_id": ["a", "b", "c"]},
        geometry=[cell_box(5, 5, 15, 15), shapely.Polygon(), cell_box(-5, 20, 5, 30)],
        crs=CRS,
    )
    res = soil_loss(frame, dem, profile=prof, id_field="site_id", **kw)
    rows = res.sites.set_index("site_id")
    found = {i: {f["code"]: f["message"] for f in json.loads(rows.loc[i, "findings"])} for i in "abc"}
    assert "the site has no disturbed area" in found["b"]["soil_loss_not_computed"]
    assert pd.isna(rows.loc["b", "passes"]) and math.isnan(rows.loc["b", "dem_covered_share"])
    assert rows.loc["c", "dem_covered_share"] == pytest.approx(0.5)
    assert found["c"]["soil_loss_dem_partial"].startswith("5,000 sq ft (50 %) of the disturbed area has no DEM cells")
    assert "soil_loss_dem_partial" not in found["a"] and rows.loc["a", "dem_covered_share"] == pytest.approx(1.0)
    assert rows.loc["a", "passes"] in (True, False)


def test_raster_class_2_marks_slope_lengths_at_the_cap(tmp_path, tables):
    # A profile capping slope length at 55 ft: on a 100 ft plane the lower half reaches the cap.
    text = EXAMPLE.read_text(encoding="utf-8").replace("max_slope_length_ft = 400\n", "max_slope_length_ft = 55\n")
    assert "max_slope_length_ft = 55\n" in text
    (tmp_path / "p.toml").write_text(text, encoding="utf-8")
    prof = load_profile(tmp_path / "p.toml")
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    out = tmp_path / "capped.tif"
    kw = plane_kw(two_phases(tables))
    soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, raster=out, **kw)
    with rasterio.open(out) as src:
        _, loss, cls = src.read()
        r0, c0 = src.index(X0 + 5.5 * CELL, Y0 - 5.5 * CELL)
    classes = cls[r0 : r0 + 10, c0]
    assert classes.tolist() == [0.0] * 5 + [2.0] * 5
    # Past the cap is outside the method (likely concentrated flow): no number, as the table says.
    assert (loss[r0 : r0 + 5, c0] > 0).all() and (loss[r0 + 5 : r0 + 10, c0] == -9999).all()
    res = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, **kw)
    assert res.sites["outside_share"].iloc[0] == 0.5
    [finding] = [f for f in json.loads(res.sites["findings"].iloc[0]) if f["code"] == "soil_loss_outside_method"]
    assert "or lies past the 55 ft slope-length cap (likely concentrated flow)" in finding["message"]


def test_cli_raster_is_written_with_its_style_and_refused_without_overwrite(tmp_path):
    from click.testing import CliRunner

    from esc_gis.cli.main import cli

    args = [*_cli_inputs(tmp_path, GOOD), "--raster", str(tmp_path / "cells.tif")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cells.tif").exists() and (tmp_path / "cells.qml").exists()
    assert "per-cell raster" in result.output
    (tmp_path / "out.csv").unlink()
    again = CliRunner().invoke(cli, args)  # the raster exists: refused before anything is written
    assert again.exit_code == 1 and "exists" in again.output and not (tmp_path / "out.csv").exists()
    bad = CliRunner().invoke(cli, [*args[:-1], str(tmp_path / "cells.png"), "--overwrite"])
    assert bad.exit_code == 1 and "GeoTIFF" in bad.output


# --- Where the sediment standard reaches (§ 540-7B(3)(b), § 540-5 CONSTRUCTION SITE) -----------
#
# "For sites with one acre or more of land-disturbing construction activity, the plan shall meet
# the following sediment performance standards" (the example profile's figure: 0.5 acre), and a
# construction site includes "areas that are part of a larger common plan of development".


def _codes(row) -> list[str]:
    return [f["code"] for f in json.loads(row["findings"])]


def test_a_site_under_the_sediment_area_is_not_judged_against_the_standard(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    kw = {**plane_kw(two_phases(tables)), "plan_disturbed_sqft": None}
    row = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, **kw).sites.iloc[0]
    # 100 x 100 ftUS, alone: under 0.5 acre. The numbers are computed, but nothing passes or fails.
    assert row["disturbed_sqft"] < 21_780 and row["plan_disturbed_sqft"] == row["disturbed_sqft"]
    assert not row["sediment_standard"] and pd.isna(row["passes"]) and row["discharge_tpa"] > 0
    codes = _codes(row)
    assert "soil_loss_meets" not in codes and "soil_loss_exceeds" not in codes
    assert codes[:2] == ["soil_loss_standard_not_applicable", "soil_loss_for_information"]
    [na] = [f for f in json.loads(row["findings"]) if f["code"] == "soil_loss_standard_not_applicable"]
    assert na["basis"] == "ordinance" and na["section"].startswith("§ 23-7B(3)(b)")
    assert "under 0.5 acre" in na["message"] and "does not apply" in na["message"]


def test_the_common_plan_total_decides_exactly_at_the_sediment_area(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    base = plane_kw(two_phases(tables))
    at = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, **base).sites.iloc[0]
    under = {**base, "plan_disturbed_sqft": math.nextafter(PLAN_AT_SEDIMENT_AREA_SQFT, 0)}
    below = soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, **under).sites.iloc[0]
    assert at["sediment_standard"] and not pd.isna(at["passes"]) and "soil_loss_meets" in _codes(at)
    assert at["plan_disturbed_sqft"] == PLAN_AT_SEDIMENT_AREA_SQFT
    assert not below["sediment_standard"] and pd.isna(below["passes"])
    assert below["discharge_tpa"] == at["discharge_tpa"]  # the numbers do not depend on the plan


def test_sites_sharing_a_plan_id_are_added_up_and_a_plan_total_by_id_counts(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    kw = {**plane_kw(two_phases(tables)), "plan_disturbed_sqft": None}
    frame = gpd.GeoDataFrame(
        {"site_id": ["a", "b", "c", "d", "e"], "plan_id": ["P", "P", "P", None, "Q"]},
        geometry=[
            cell_box(0, 0, 10, 10),
            cell_box(10, 0, 20, 10),
            cell_box(20, 0, 30, 10),
            cell_box(0, 15, 10, 25),
            cell_box(15, 15, 25, 25),
        ],
        crs=CRS,
    )
    one = 100 * 100 * (1200 / 3937 / 0.3048) ** 2  # 100 x 100 ftUS in sq ft
    rows = soil_loss(frame, dem, profile=prof, id_field="site_id", **kw).sites.set_index("site_id")
    # a, b and c: one plan of three 10,000 sq ft lots, 30,000 sq ft: the standard reaches each.
    assert rows.loc[["a", "b", "c"], "plan_disturbed_sqft"].tolist() == pytest.approx([3 * one] * 3)
    assert rows.loc[["a", "b", "c"], "sediment_standard"].all()
    assert not rows.loc["d", "sediment_standard"] and not rows.loc["e", "sediment_standard"]
    assert rows.loc["a", "plan_id"] == "P" and pd.isna(rows.loc["d", "plan_id"])
    # The registry's total for plan Q (lots this layer lacks) makes the standard reach e, not d.
    by_id = soil_loss(frame, dem, profile=prof, id_field="site_id", **{**kw, "plan_disturbed_sqft": {"Q": 40_000.0}})
    got = by_id.sites.set_index("site_id")
    assert got.loc["e", "sediment_standard"] and got.loc["e", "plan_disturbed_sqft"] == 40_000.0
    assert not got.loc["d", "sediment_standard"]
    with pytest.raises(ValidationError, match="not an area"):
        soil_loss(frame, dem, profile=prof, id_field="site_id", **{**kw, "plan_disturbed_sqft": {"Q": -1.0}})


def test_a_raster_of_sites_the_standard_does_not_reach_is_styled_so(tmp_path, prof, tables):
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    out = tmp_path / "small.tif"
    kw = {**plane_kw(two_phases(tables)), "plan_disturbed_sqft": None}
    soil_loss(sites(cell_box(5, 5, 15, 15)), dem, profile=prof, raster=out, **kw)
    qml = out.with_suffix(".qml").read_text(encoding="utf-8")
    assert 'label="over 3 to under 6 t/ac (standard does not apply)"' in qml and "#bd0026" not in qml
    with rasterio.open(out) as src:
        assert src.tags()["SEDIMENT_STANDARD_NOT_APPLICABLE"] == "1"  # no id field: row numbers
    # Where it reaches some sites only, the classes over it say so.
    both = tmp_path / "both.tif"
    two = sites(cell_box(5, 5, 15, 15), cell_box(16, 5, 26, 15)).assign(
        plan_id=[None, "P"], plan_disturbed_sqft=[None, 30_000.0]
    )
    soil_loss(two, dem, profile=prof, raster=both, **kw)
    qml = both.with_suffix(".qml").read_text(encoding="utf-8")
    assert 'label="over 3 to under 6 t/ac (over the standard where it applies)"' in qml


def test_cli_names_sites_by_site_id_and_takes_the_registrys_plan(tmp_path, layer_set):
    from click.testing import CliRunner

    from esc_gis.cli.main import cli
    from esc_gis.io import write_layer
    from esc_gis.registry import Application, init_registry, open_registry

    from .conftest import square_sqft

    args = _cli_inputs(tmp_path, GOOD)
    i = args.index("--id-field")
    args = args[:i] + args[i + 2 :]  # the default id field, as screen's
    write_layer(
        sites(cell_box(5, 5, 15, 15)).assign(site_id="S01", plan_id="Meadow"),
        tmp_path / "sites.gpkg",
        layer="sites",
        overwrite=True,
    )
    alone = CliRunner().invoke(cli, args)
    assert alone.exit_code == 0, alone.output
    assert "S01" in alone.output and "the standard does not apply" in alone.output
    # The registry holds two 15,000 sq ft permits of plan Meadow: 30,000 sq ft, over 0.5 acre.
    reg_path = tmp_path / "reg.gpkg"
    init_registry(reg_path, layers=layer_set)
    with open_registry(reg_path, layers=layer_set) as reg:
        for x in (100, 400):
            reg.add(
                Application(f"{x} Test St", dt.date(2026, 11, 2), square_sqft(x, 100, 15_000.0), CRS, plan_id="Meadow")
            )
    with_reg = CliRunner().invoke(cli, [*args, "--registry", str(reg_path), "--overwrite"])
    assert with_reg.exit_code == 0, with_reg.output
    assert "S01" in with_reg.output and ("passes" in with_reg.output or "fails" in with_reg.output)
    got = pd.read_csv(tmp_path / "out.csv")
    assert got["plan_disturbed_sqft"].iloc[0] == pytest.approx(30_000.0, abs=0.01)
    assert bool(got["sediment_standard"].iloc[0])


@pytest.mark.parametrize(
    ("rows", "with_id", "applies"),
    [(8, False, True), (7, False, False), (8, True, True)],
    ids=["24,000 drawn past the line", "21,000", "matched by id"],
)
def test_cli_the_acre_test_counts_disturbance_drawn_past_the_site_line(tmp_path, rows, with_id, applies):
    """§ 23-7B(3)(b) (the example's § 540-7B(3)(b)): "For sites with one acre [here 0.5 acre, 21,780 sq ft] or more
    of land-disturbing construction activity". Limits drawn past the site polygon are still the site's
    disturbance, as screening counts them; the soil loss is computed where site and limits meet."""
    from click.testing import CliRunner

    from esc_gis.cli.main import cli
    from esc_gis.io import read_layer, write_layer

    args = _cli_inputs(tmp_path, GOOD)  # the site: 100 x 100 ft (10,000 sq ft)
    limits = [cell_box(0, 0, 30, rows)]  # 300 ft wide, crossing the site's top rows
    if with_id:  # a second, separate polygon named for the site counts too
        limits = [cell_box(0, 0, 30, 7), cell_box(20, 20, 30, 21)]  # 21,000 + 1,000
    frame = gpd.GeoDataFrame({"site": ["S1"] * len(limits)} if with_id else {}, geometry=limits, crs=CRS)
    write_layer(frame, tmp_path / "dist.gpkg", layer="d")
    result = CliRunner().invoke(cli, [*args, "--disturbed", str(tmp_path / "dist.gpkg")])
    assert result.exit_code == 0, result.output
    row = read_layer(tmp_path / "out.csv").iloc[0]
    whole = (3_000 * rows if not with_id else 22_000) * (1200 / 3937 / 0.3048) ** 2
    assert float(row["plan_disturbed_sqft"]) == pytest.approx(whole)
    assert float(row["disturbed_sqft"]) < 10_001  # the soil loss itself: the site's part only
    assert str(row["sediment_standard"]).lower() in (("true", "1") if applies else ("false", "0"))


# --- The article's reach is the screening's (issue 34; DESIGN.md "One site, one answer") --------
#
# § 540-4B: the article applies to land-disturbing construction activity "within the boundaries and
# jurisdiction of the Village"; § 540-4C: it does not apply to "activities conducted by a state
# agency"; § 540-4A(2): agricultural activity areas and silviculture are exempt. soil-loss takes
# each site's answer from screen(), on the same sites, limits and contract fields, and judges
# nothing the article does not reach.

YEAR_BARE = "phase,start,end,cover,practices\ngrading,2027-01-01,2027-12-31,bare,none\n"
#: International square feet per square US survey foot (EPSG:7594's unit).
K_US = (1200 / 3937) ** 2 / 0.3048**2


def _screened_cli(tmp_path: Path, frame: gpd.GeoDataFrame, jurisdiction: shapely.Geometry, rows: int) -> list[str]:
    """Write the sites, a plane DEM of rows x rows cells and the layer set; return soil-loss's arguments."""
    return _soil_loss_args(tmp_path, frame, YEAR_BARE, town_layers(tmp_path / "layers", jurisdiction), rows=rows)


def test_sites_of_9_to_11_acres_the_article_does_not_reach_are_not_judged_as_screen_says(tmp_path):
    """§ 540-4B ("This article applies to land-disturbing construction activity on construction sites located
    within the boundaries and jurisdiction of the Village"), § 540-4C ("This article is not applicable to
    activities conducted by a state agency"), § 540-4A(2) ("This article does not apply to ... (a) Nonpoint
    discharges from agricultural activity areas"): a 9- to 11-acre site of each is not judged against "[1] BMPs
    that, by design, discharge no more than five tons per acre per year, or to the maximum extent practicable,
    of the sediment load" (§ 540-7B(3)(b)). OUT lies a few hundred feet outside, within § 540-5's
    EXTRATERRITORIAL area ("within 1.5 miles of a ... Village"), which no rule of the article uses: there
    "does not apply" is a reading, and soil-loss quotes it as one (basis interpretation), as screen does."""
    from click.testing import CliRunner

    from esc_gis.cli.main import cli
    from esc_gis.screening import screen

    frame = gpd.GeoDataFrame(
        {
            "site_id": ["OUT", "STATE", "FARM"],
            "activity": ["construction", "construction", "agricultural_activity"],
            "state_agency": [False, True, False],
        },
        # 630 x 630 ft (9.1 acres), 700 x 700 ft (11.2 acres), 660 x 660 ft (10.0 acres).
        geometry=[cell_box(80, 0, 143, 63), cell_box(0, 0, 70, 70), cell_box(0, 75, 66, 141)],
        crs=CRS,
    )
    west = cell_box(-5, -5, 75, 150)  # the jurisdiction: the west half of the plane; OUT lies east of it
    args = _screened_cli(tmp_path, frame, west, 150)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "passes" not in result.output and "fails" not in result.output
    assert "the article does not apply (excluded state agency)" in result.output
    assert "the article is read as not applying (outside jurisdiction; a reading)" in result.output
    got = pd.read_csv(tmp_path / "out.csv").set_index("site_id")
    want = screen(frame, layers=str(tmp_path / "layers" / "layers.toml")).set_index("site_id")
    expected = {
        "OUT": ("outside_jurisdiction", "§ 540-4B; § 540-5 EXTRATERRITORIAL", "interpretation"),
        "STATE": ("excluded_state_agency", "§ 540-4C", "ordinance"),
        "FARM": ("exempt_agricultural", "§ 540-4A(2)", "ordinance"),
    }
    for sid, (appl, section, basis) in expected.items():
        row = got.loc[sid]
        assert 9.0 <= row["disturbed_acres"] <= 11.3
        # The same answer as screen for the same polygon: applicability, permit, standard.
        assert row["applicability"] == want.loc[sid, "applicability"] == appl
        assert row["permit"] == want.loc[sid, "permit"] == "not_applicable"
        assert not bool(row["sediment_standard"]) and not bool(want.loc[sid, "sediment_standard"])
        assert pd.isna(row["passes"])
        fs = json.loads(row["findings"])
        codes = [f["code"] for f in fs]
        assert "soil_loss_meets" not in codes and "soil_loss_exceeds" not in codes
        assert "soil_loss_standard_not_applicable" not in codes  # not "under one acre": the article's reach
        [na] = [f for f in fs if f["code"] == "soil_loss_article_not_applicable"]
        assert na["basis"] == basis and na["section"].startswith(section), na
        assert "does not apply" in na["message"] and appl.replace("_", " ") in na["message"]
        assert ("Reading:" in na["message"]) == (basis == "interpretation"), na
    # Inside the Village the bare year would fail the 5 t/ac standard: the numbers are there for
    # information (soil_loss_for_information), never as a verdict.
    assert (got.loc[["STATE", "FARM"], "discharge_tpa"] > 5).all()


@pytest.mark.parametrize(("area_sqft", "judged"), [(43_560.0, True), (43_559.0, False)], ids=["43,560", "43,559"])
def test_a_site_inside_is_judged_from_exactly_one_acre_as_screen_decides(tmp_path, area_sqft, judged):
    """§ 540-7B(3)(b): "For sites with one acre or more of land-disturbing construction activity, the
    plan shall meet the following sediment performance standards". 43,560 sq ft is judged; 43,559 is
    not. The library function given screen()'s answer takes it, and says so as screen does."""
    from esc_gis.screening import screen

    prof = load_profile()  # the Village's: one acre
    tables = soil_loss_tables(prof)
    width = 250.0  # ftUS: a rectangle whose measured area is not a hair under 43,560 in floating point
    site = shapely.box(X0 + 20, Y0 - 20 - area_sqft / K_US / width, X0 + 20 + width, Y0 - 20)
    frame = gpd.GeoDataFrame({"site_id": ["S"]}, geometry=[site], crs=CRS)
    from esc_gis.layers import load_layers

    ls = load_layers(town_layers(tmp_path / "layers"), profile=prof)
    screening = screen(frame, layers=ls, profile=prof)
    measured = screening.iloc[0]["disturbed_sqft"]
    assert measured == pytest.approx(area_sqft, abs=1e-6)
    assert bool(measured >= 43_560.0) is judged
    dem = plane_dem(tmp_path / "dem.tif", 10.0, rows=40, cols=40)
    kw = {**plane_kw(two_phases(tables)), "plan_disturbed_sqft": None}
    row = soil_loss(frame, dem, profile=prof, id_field="site_id", screening=screening, **kw).sites.iloc[0]
    assert bool(row["sediment_standard"]) is judged is bool(screening.iloc[0]["sediment_standard"])
    assert row["applicability"] == "applies" and row["permit"] == "required"
    codes = _codes(row)
    assert ("soil_loss_meets" in codes or "soil_loss_exceeds" in codes) is judged
    assert ("soil_loss_standard_not_applicable" in codes) is not judged
    assert pd.isna(row["passes"]) is not judged
    assert "soil_loss_applicability_not_screened" not in codes


def test_a_plan_total_from_outside_never_reaches_a_site_the_article_does_not_and_ids_must_match(tmp_path):
    """§ 540-4C: "This article is not applicable to activities conducted by a state agency": a common
    plan total from the registry (lots the layer lacks) extends the acre test only to sites the
    article applies to; and the screening must hold every site, by id."""
    from esc_gis.layers import load_layers
    from esc_gis.screening import screen

    prof = load_profile()
    tables = soil_loss_tables(prof)
    frame = gpd.GeoDataFrame(
        {"site_id": ["A", "B"], "state_agency": [False, True], "plan_id": ["P", "Q"]},
        geometry=[cell_box(2, 2, 12, 12), cell_box(15, 2, 25, 12)],  # 10,000 sq ftUS each
        crs=CRS,
    )
    screening = screen(frame, layers=load_layers(town_layers(tmp_path / "layers"), profile=prof), profile=prof)
    dem = plane_dem(tmp_path / "dem.tif", 10.0)
    kw = {**plane_kw(two_phases(tables)), "plan_disturbed_sqft": {"P": 50_000.0, "Q": 50_000.0}}
    rows = soil_loss(frame, dem, profile=prof, id_field="site_id", screening=screening, **kw).sites.set_index("site_id")
    assert rows.loc["A", "sediment_standard"] and not pd.isna(rows.loc["A", "passes"])
    assert not rows.loc["B", "sediment_standard"] and pd.isna(rows.loc["B", "passes"])
    assert rows.loc["B", "applicability"] == "excluded_state_agency"
    with pytest.raises(ValidationError, match="has no row for site 'B'"):
        soil_loss(frame, dem, profile=prof, id_field="site_id", screening=screening.iloc[[0]], **kw)
