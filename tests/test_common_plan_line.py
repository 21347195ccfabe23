"""A common plan across the Village line, through `screen` whole and streamed (issue 46, item 6).

§ 540-4B: "This article applies to land-disturbing construction activity on construction sites
located within the boundaries and jurisdiction of the Village of Winneconne." § 540-5
CONSTRUCTION SITE: "An area upon which one or more land disturbing construction activities
occur, including areas that are part of a larger common plan of development." § 540-5 COMMON
PLAN OF DEVELOPMENT OR SALE: "A development or sale where multiple separate and distinct land
disturbing construction activities may be taking place at different times on different schedules
but under one plan."

The article does not say whether a plan's lots outside the line count: the lot inside was
decided on the whole plan with every finding basis ``ordinance``. Now one rule decides it by the
profile's reading (the whole plan by default), labelled ``interpretation``, naming the part
outside and the sites there.
"""

from __future__ import annotations

import dataclasses
import json

import geopandas as gpd
import pandas as pd
import pytest
from click.testing import CliRunner

from esc_gis import load_profile, screen
from esc_gis.cli.main import cli

from .conftest import CRS, K, box, sites

#: Plan P: L1 inside (50 x 50 ft), L2 outside, west of the Village (50 x 50), L3 across the west line
#: (50 x 50, half inside). In sq ftUS: 7,500 in all, 3,750 inside, 3,750 outside. Q: a plan wholly inside.
LOTS = [
    {"site_id": "L1", "plan_id": "P", "geometry": box(100, 100, 150, 150)},
    {"site_id": "L2", "plan_id": "P", "geometry": box(-300, 100, -250, 150)},
    {"site_id": "L3", "plan_id": "P", "geometry": box(-25, 300, 25, 350)},
    {"site_id": "Q1", "plan_id": "Q", "geometry": box(500, 100, 550, 150)},
    {"site_id": "Q2", "plan_id": "Q", "geometry": box(600, 100, 650, 150)},
]


def _findings(row) -> dict[str, dict]:
    return {f["code"]: f for f in json.loads(row["findings"])}


def _check_whole_reading(out: pd.DataFrame) -> None:
    l1 = out.loc["L1"]
    assert l1["jurisdiction"] == "inside" and l1["disturbed_sqft"] == pytest.approx(2_500 * K, rel=1e-9)
    # Decided on the whole plan, 7,500 sq ft: over the 4,000 sq ft permit area.
    assert l1["plan_disturbed_sqft"] == pytest.approx(7_500 * K, rel=1e-9) and l1["permit"] == "required"
    f = _findings(l1)
    assert "common_plan" not in f
    g = f["common_plan_partial"]
    assert g["basis"] == "interpretation" and g["section"].startswith("§ 540-4B; § 540-5 CONSTRUCTION SITE")
    assert f"{3_750 * K:,.1f} sq ft of its {7_500 * K:,.1f} sq ft of disturbance is outside" in g["message"]
    assert "(sites partly or wholly outside: L2, L3)" in g["message"]
    assert "Reading: § 540-4B is silent on a plan partly outside" in g["message"]
    # The land outside may be regulated by nobody: the finding says only that it is outside the Village's
    # jurisdiction, and that the lot is decided on the plan's whole disturbance.
    assert "outside the Village of Winneconne's jurisdiction (§ 540-4B)" in g["message"]
    assert "another authority" not in g["message"]
    assert "this site is decided on the plan's whole disturbance" in g["message"]
    # The lot across the line gets its own reading and the plan's; the lot outside is not decided.
    assert {"jurisdiction_partial", "common_plan_partial"} <= set(_findings(out.loc["L3"]))
    assert out.loc["L2", "applicability"] == "outside_jurisdiction"
    assert not {"common_plan", "common_plan_partial"} & set(_findings(out.loc["L2"]))
    # A plan wholly inside keeps the ordinance's plain finding.
    q = _findings(out.loc["Q1"])["common_plan"]
    assert q["basis"] == "ordinance" and out.loc["Q1", "permit"] == "required"


def test_the_lot_inside_is_decided_on_the_whole_plan_as_a_reading_that_names_the_part_outside(layer_set):
    """§ 540-5: "including areas that are part of a larger common plan of development"; § 540-4B: "located
    within the boundaries and jurisdiction of the Village of Winneconne". The default reading counts the lots
    outside, and says it is a reading."""
    out = screen(sites(LOTS), layers=layer_set).set_index("site_id")
    _check_whole_reading(out)


def test_under_the_inside_only_reading_the_part_inside_decides_and_the_finding_says_what_is_left_out(layer_set):
    """§ 540-4B: "This article applies to land-disturbing construction activity on construction sites located
    within the boundaries and jurisdiction of the Village of Winneconne": read as the part inside only."""
    prof = dataclasses.replace(load_profile(), partial_jurisdiction="inside_only")
    out = screen(sites(LOTS), layers=layer_set, profile=prof).set_index("site_id")
    l1 = out.loc["L1"]
    # 3,750 sq ft inside: under the permit area.
    assert l1["plan_disturbed_sqft"] == pytest.approx(3_750 * K, rel=1e-9) and l1["permit"] == "not_required"
    g = _findings(l1)["common_plan_inside_only"]
    assert g["basis"] == "interpretation" and "(sites partly or wholly outside: L2, L3)" in g["message"]
    assert g["section"] == "§ 540-4B; § 540-5 CONSTRUCTION SITE; § 540-5 COMMON PLAN OF DEVELOPMENT OR SALE"
    assert "outside the Village of Winneconne's jurisdiction (§ 540-4B)" in g["message"]
    assert f"{3_750 * K:,.1f} sq ft of its {7_500 * K:,.1f} sq ft of disturbance is outside" in g["message"]


@pytest.mark.parametrize("extra", [[], ["--batch-rows", "1"]], ids=["whole", "streamed"])
def test_the_command_says_the_same_whole_and_streamed(tmp_path, layers_path, extra):
    """§ 540-5 CONSTRUCTION SITE "including areas that are part of a larger common plan of development": the
    streamed run adds the plan up in one batch and says the same."""
    src = tmp_path / "lots.gpkg"
    gpd.GeoDataFrame(LOTS, geometry="geometry", crs=CRS).to_file(src)
    out = tmp_path / "out.csv"
    r = CliRunner().invoke(cli, ["screen", str(src), "--layers", str(layers_path), "-o", str(out), "-q", *extra])
    assert r.exit_code == 0, r.output
    _check_whole_reading(pd.read_csv(out).set_index("site_id"))
