"""soil-loss takes what it is not given from the layer set, and a plan's total only for a plan (issue 46).

Item 7: ``soil-loss`` took the DEM from the layer set but not its ``[soils]`` ("give either a
soils layer or one K"), where ``review`` takes both. Item 8, outcome 6: ``--plan-disturbed-sqft``
was applied to a site that names no plan. § 540-7B(3)(b): "For sites with one acre or more of
land-disturbing construction activity" (the example profile's figure: half an acre); § 540-5
CONSTRUCTION SITE: "An area upon which one or more land disturbing construction activities
occur, including areas that are part of a larger common plan of development". A site that is
part of no plan is its own disturbance: a plan's total is not its.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.profile import load_profile
from esc_gis.soil.judge import no_plan_total_problems, plan_total_problems

from .test_soil_loss import (
    CRS,
    EXAMPLE,
    GOOD,
    PLAN_AT_SEDIMENT_AREA_SQFT,
    _soil_loss_args,
    cell_box,
    plane_dem,
    sites,
    town_layers,
)

#: 100 x 100 ftUS in sq ft: the plane tests' site.
ONE = 100 * 100 * (1200 / 3937 / 0.3048) ** 2


def run(args: list[str]):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in r.output, r.output
    return r


def _layers_with_soils(folder: Path, k: float, *, dem: Path | None = None) -> Path:
    """The Town's layer set with a soils layer of one map unit (K in field ``kf``) over the plane, and a DEM."""
    manifest = town_layers(folder)
    gpd.GeoDataFrame({"kf": [k]}, geometry=[cell_box(-20, -20, 120, 120)], crs=CRS).to_file(folder / "soils.gpkg")
    text = manifest.read_text(encoding="utf-8") + '[soils]\npath = "soils.gpkg"\nk_field = "kf"\n'
    if dem is not None:
        text += f'[dem]\npath = "{dem.as_posix()}"\nz_unit = "us_ft"\n'
    manifest.write_text(text, encoding="utf-8")
    return manifest


def _args_without(args: list[str], *options: str) -> list[str]:
    """soil-loss's arguments without these options (and their values)."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in options:
            skip = True
            continue
        out.append(a)
    return out


def _k_of(tmp_path: Path) -> float:
    return float(pd.read_csv(tmp_path / "out.csv")["k"].iloc[0])


# --- item 7: the layer set's soils and DEM ------------------------------------------------------------


def test_soil_loss_takes_the_layer_sets_soils_and_dem_when_not_given(tmp_path):
    dem = plane_dem(tmp_path / "ls_dem.tif", 10.0)
    manifest = _layers_with_soils(tmp_path / "layers", 0.28, dem=dem)
    base = _soil_loss_args(tmp_path, sites(cell_box(5, 5, 15, 15)), GOOD, manifest, extra=("--profile", str(EXAMPLE)))
    # Neither --dem, --soils nor --k: the layer set's DEM and soils (K in its k_field, kf).
    r = run(_args_without(base, "--dem", "--k", "--z-unit"))
    assert r.exit_code == 0, r.output
    assert _k_of(tmp_path) == pytest.approx(0.28)
    with_dem = pd.read_csv(tmp_path / "out.csv")
    # The same DEM given by hand gives the same numbers: the default is the layer set's, not another.
    r = run([*_args_without(base, "--k"), "--overwrite"])
    assert r.exit_code == 0, r.output
    assert pd.read_csv(tmp_path / "out.csv")["discharge_tpa"].tolist() == pytest.approx(
        with_dem["discharge_tpa"].tolist()
    )


def test_a_given_k_or_soils_layer_wins_over_the_layer_sets(tmp_path):
    manifest = _layers_with_soils(tmp_path / "layers", 0.28)
    base = _soil_loss_args(tmp_path, sites(cell_box(5, 5, 15, 15)), GOOD, manifest, extra=("--profile", str(EXAMPLE)))
    r = run(base)  # --k 0.3 is given
    assert r.exit_code == 0, r.output
    assert _k_of(tmp_path) == pytest.approx(0.3)
    own = tmp_path / "own_soils.gpkg"
    gpd.GeoDataFrame({"kwfact": [0.17]}, geometry=[cell_box(-20, -20, 120, 120)], crs=CRS).to_file(own)
    r = run([*_args_without(base, "--k"), "--soils", own, "--overwrite"])
    assert r.exit_code == 0, r.output
    assert _k_of(tmp_path) == pytest.approx(0.17)
    # A --k-field given wins over the layer set's k_field (its soils have no such field: refused).
    r = run([*_args_without(base, "--k"), "--k-field", "kwfact", "--overwrite"])
    assert r.exit_code == 1 and "kwfact" in r.output, r.output


def test_without_any_k_the_message_names_the_layer_set_too(tmp_path):
    base = _soil_loss_args(
        tmp_path,
        sites(cell_box(5, 5, 15, 15)),
        GOOD,
        town_layers(tmp_path / "layers"),
        extra=("--profile", str(EXAMPLE)),
    )
    r = run(_args_without(base, "--k"))
    text = " ".join(r.output.split())
    assert r.exit_code == 1 and "give either a soils layer or one K" in text
    assert "use --soils or --k, or a layer set's [soils] as the soils layer" in text
    assert not (tmp_path / "out.csv").exists()


def test_without_a_dem_anywhere_the_message_says_where_none_was_found(tmp_path):
    manifest = town_layers(tmp_path / "layers")
    base = _soil_loss_args(tmp_path, sites(cell_box(5, 5, 15, 15)), GOOD, manifest, extra=("--profile", str(EXAMPLE)))
    r = run(_args_without(base, "--dem"))
    assert r.exit_code == 1 and f"no DEM: {manifest} has no [dem]" in " ".join(r.output.split()), r.output


# --- item 8, outcome 6: a plan's total, only for a plan ---------------------------------------------


def _plan_args(tmp_path: Path, frame: gpd.GeoDataFrame, total: float) -> list[str]:
    extra = ("--id-field", "site", "--profile", str(EXAMPLE), "--plan-disturbed-sqft", str(total))
    return _soil_loss_args(tmp_path, frame, GOOD, town_layers(tmp_path / "layers"), extra=extra)


def test_a_plan_total_for_a_site_that_names_no_plan_is_refused(tmp_path):
    """The issue's case, at the example's scale: a 10,000 sq ft site with an empty plan_id was judged against
    the half-acre standard on the 21,780 sq ft given. Refused, naming the site; nothing written."""
    frame = sites(cell_box(5, 5, 15, 15)).assign(plan_id=[None])
    r = run(_plan_args(tmp_path, frame, PLAN_AT_SEDIMENT_AREA_SQFT))
    text = " ".join(r.output.split())
    assert r.exit_code == 1, r.output
    assert "site 'S1' names no common plan (its plan_id is empty)" in text
    assert "give the site its plan_id (or --plan-field)" in text
    assert not (tmp_path / "out.csv").exists()


def test_a_plan_total_for_a_site_of_that_plan_reaches_it(tmp_path):
    """§ 540-7B(3)(b) "For sites with one acre or more of land-disturbing construction activity" (half an acre
    in the example), the site "including areas that are part of a larger common plan of development" (§ 540-5)."""
    frame = sites(cell_box(5, 5, 15, 15)).assign(plan_id=["P"])
    r = run(_plan_args(tmp_path, frame, PLAN_AT_SEDIMENT_AREA_SQFT))
    assert r.exit_code == 0, r.output
    row = pd.read_csv(tmp_path / "out.csv").iloc[0]
    assert row["plan_id"] == "P" and row["plan_disturbed_sqft"] == PLAN_AT_SEDIMENT_AREA_SQFT
    assert bool(row["sediment_standard"])


def test_a_plan_total_below_what_the_plans_sites_disturb_is_refused(tmp_path):
    """§ 540-5: the construction site includes "areas that are part of a larger common plan of development", so
    the plan's total holds at least its own sites. Two 10,000 sq ft lots of plan P disturb 20,000 sq ft here: a total of 15,000 disagrees with them."""
    frame = sites(cell_box(5, 5, 15, 15), cell_box(16, 5, 26, 15)).assign(plan_id=["P", "P"])
    r = run(_plan_args(tmp_path, frame, 15_000.0))
    text = " ".join(r.output.split())
    assert r.exit_code == 1, r.output
    assert f"15,000.0 sq ft is less than the {2 * ONE:,.1f} sq ft common plan 'P' already disturbs" in text


def test_one_total_for_sites_of_two_plans_is_refused(tmp_path):
    """§ 540-5 "a larger common plan of development": one total is one plan's, not two plans'."""
    frame = sites(cell_box(5, 5, 15, 15), cell_box(16, 5, 26, 15)).assign(plan_id=["P", "Q"])
    r = run(_plan_args(tmp_path, frame, PLAN_AT_SEDIMENT_AREA_SQFT))
    assert r.exit_code == 1 and "the sites name 2 common plans (P, Q)" in " ".join(r.output.split()), r.output


@pytest.mark.parametrize(("given", "refused"), [(20_000.0 - 1.0, False), (np.nextafter(20_000.0 - 1.0, 0), True)])
def test_a_total_short_of_the_measured_one_by_the_sliver_is_the_same_and_by_more_is_refused(given, refused):
    """The boundary sliver (1 sq ft, policy.sliver) is the rounding allowed: exactly 1 sq ft short is the same."""
    prof = load_profile()
    assert prof.area_sqft("policy.sliver") == 1.0
    problems = plan_total_problems(given, ["A", "B"], ["P", "P"], [20_000.0, 20_000.0], prof)
    assert bool(problems) is refused


def test_every_conflict_is_said_at_once_and_none_for_a_right_total():
    prof = load_profile()
    problems = plan_total_problems(50_000.0, ["A", "B", "C", "D"], ["P", None, np.nan, "Q"], [60_000.0, 1, 1, 5], prof)
    texts = [p.message for p in problems]
    assert [t.split(" names")[0].split("site ")[-1] for t in texts[:2]] == ["'B'", "'C'"]
    assert "2 common plans (P, Q)" in texts[2] and "less than the 60,000.0 sq ft common plan 'P'" in texts[3]
    assert len(problems) == 4 and all(p.source == "plan_disturbed_sqft=" for p in problems)
    assert plan_total_problems(60_000.0, ["A", "B"], ["P", "P"], [60_000.0, 60_000.0], prof) == []


# --- the same rule for a SITES layer's plan_disturbed_sqft field ----------------------------------


def _field_args(tmp_path: Path, frame: gpd.GeoDataFrame) -> list[str]:
    extra = ("--id-field", "site", "--profile", str(EXAMPLE))
    return _soil_loss_args(tmp_path, frame, GOOD, town_layers(tmp_path / "layers"), extra=extra)


def test_a_plan_total_field_on_sites_that_name_no_plan_is_refused_row_by_row(tmp_path):
    """§ 540-7B(3)(b): "For sites with one acre or more of land-disturbing construction activity" (half an acre in
    the example); § 540-5 CONSTRUCTION SITE: "including areas that are part of a larger common plan of
    development". A 10,000 sq ft site with an empty plan_id whose plan_disturbed_sqft field says 50,000 was judged
    against the standard on 50,000 sq ft: a plan's total is not a site's that is part of no plan. Both such rows
    are refused at once, each named with its row and the fix, and nothing is written."""
    frame = sites(cell_box(5, 5, 15, 15), cell_box(16, 5, 26, 15)).assign(
        plan_id=[None, ""], plan_disturbed_sqft=[50_000.0, 30_000.0]
    )
    r = run(_field_args(tmp_path, frame))
    text = " ".join(r.output.split())
    assert r.exit_code == 1, r.output
    for row, sid, total in ((1, "S1", "50,000.0"), (2, "S2", "30,000.0")):
        assert f"sites, row {row} (id {sid!r}): its plan_disturbed_sqft field gives {total} sq ft" in text
    assert f"names no common plan (its plan_id is empty) and disturbs {ONE:,.1f} sq ft itself" in text
    assert "give the site its plan_id (or --plan-field), or empty its plan_disturbed_sqft field." in text
    assert not (tmp_path / "out.csv").exists()


def test_a_plan_total_field_counts_for_a_site_of_a_plan_and_its_own_area_for_one_of_none(tmp_path):
    """§ 540-5: the construction site includes "areas that are part of a larger common plan of development": the
    field reaches the site of plan P with the standard. A site of no plan whose field is its own area (as a
    screening output carries it for every row) is no conflict, and is decided on its own 10,000 sq ft: the
    standard does not reach it."""
    frame = sites(cell_box(5, 5, 15, 15), cell_box(16, 5, 26, 15)).assign(
        plan_id=["P", None], plan_disturbed_sqft=[50_000.0, ONE]
    )
    r = run(_field_args(tmp_path, frame))
    assert r.exit_code == 0, r.output
    got = pd.read_csv(tmp_path / "out.csv").set_index("site_id")
    assert got.loc["S1", "plan_disturbed_sqft"] == 50_000.0 and bool(got.loc["S1", "sediment_standard"])
    assert got.loc["S2", "plan_disturbed_sqft"] == pytest.approx(ONE) and not bool(got.loc["S2", "sediment_standard"])


@pytest.mark.parametrize(("total", "refused"), [(10_001.0, False), (np.nextafter(10_001.0, np.inf), True)])
def test_a_field_over_the_sites_own_area_by_the_sliver_is_the_same_and_by_more_is_refused(total, refused):
    """The boundary sliver (1 sq ft, policy.sliver) is the rounding allowed: exactly 1 sq ft over is the site's own."""
    prof = load_profile()
    problems = no_plan_total_problems(
        [total], ["A"], [None], [10_000.0], prof, what="plan_disturbed_sqft", per_row=True
    )
    assert bool(problems) is refused
    assert no_plan_total_problems([np.nan], ["A"], [None], [10_000.0], prof, per_row=True) == []  # none given
    assert no_plan_total_problems([50_000.0], ["A"], ["P"], [10_000.0], prof, per_row=True) == []  # a plan's site
    # One rule for the option too: a total no more than the site's own area is its own, not a plan's.
    assert bool(plan_total_problems(total, ["A"], [None], [10_000.0], prof)) is refused
    assert plan_total_problems(10_000.0, ["A"], [None], [10_000.0], prof) == []


def test_each_refusal_of_a_plan_total_is_said_exactly_with_its_fix():
    """Every problem whole, message and fix, for the option and for the field: § 540-5 CONSTRUCTION SITE
    "including areas that are part of a larger common plan of development" (a plan's total is for a plan's
    sites), a site of no plan with no own area known held against nothing (0 sq ft), ids read as the screening
    wrote them (blank and NaN are no plan)."""
    from esc_gis.errors import Problem

    prof = load_profile()
    rule = "a site that is not part of a larger plan is decided on its own disturbance."
    got = plan_total_problems(50_000, ["A", "B", "C", "D"], ["P", " ", np.nan, "Q"], [60_000, 1, np.nan, 5], prof)
    assert got == [
        Problem(
            "plan_disturbed_sqft=",
            None,
            f"50,000.0 sq ft is a common plan's total, but site 'B' names no common plan (its plan_id is empty): {rule}",
            "give the site its plan_id (or plan_field=), or leave the option out.",
        ),
        Problem(
            "plan_disturbed_sqft=",
            None,
            f"50,000.0 sq ft is a common plan's total, but site 'C' names no common plan (its plan_id is empty): {rule}",
            "give the site its plan_id (or plan_field=), or leave the option out.",
        ),
        Problem(
            "plan_disturbed_sqft=",
            None,
            "one total is given for every site, but the sites name 2 common plans (P, Q).",
            "give the sites of one plan, or each site its plan's total in a plan_disturbed_sqft field.",
        ),
        Problem(
            "plan_disturbed_sqft=",
            None,
            "50,000.0 sq ft is less than the 60,000.0 sq ft common plan 'P' already disturbs in this layer, as "
            "measured: the total disagrees with the plan's own sites.",
            "give the plan's whole disturbed total (at least what its sites here disturb), or leave the option out.",
        ),
    ]
    # The option's name is the one given; a site of no plan whose own area is unknown is held against 0 sq ft.
    (named,) = plan_total_problems(1.5, ["C"], [None], [np.nan], prof, what="plan total")
    assert named.source == "plan total" and named.message.startswith("1.5 sq ft is a common plan's total")
    assert plan_total_problems(1.0, ["C"], [None], [np.nan], prof) == []  # within the sliver of 0
    assert plan_total_problems(2_000, ["C"], ["7"], [np.int64(1_000)], prof) == []  # ints, and a numeric id
    (field,) = no_plan_total_problems(["50000"], ["S9"], [None], ["10000"], prof, per_row=True)
    assert field == Problem(
        "sites",
        1,
        "its plan_disturbed_sqft field gives 50,000.0 sq ft, a common plan's total, but the site names no common "
        f"plan (its plan_id is empty) and disturbs 10,000.0 sq ft itself: {rule}",
        "give the site its plan_id (or plan_field=), or empty its plan_disturbed_sqft field.",
        site_id="S9",
    )
