"""The decision's table (screening/decide.py) pinned at its edges (issue 46 item 9: 79 % of its mutants killed).

What the table says is the screening contract (DESIGN.md): ``disturbed_acres`` is the square
feet over 43,560; ``plan_disturbed_sqft`` is the area the thresholds were applied to;
``steep_share`` the steep part of the disturbance inside, null where nothing is inside; the
measured limits ride along as EWKT, null for a site with none; the user's own fields follow ours,
and a field named like one of ours is ours.
"""

from __future__ import annotations

import dataclasses
import json

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from pyproj import CRS as ProjCRS

from esc_gis.profile import load_profile
from esc_gis.rules import Measurements, decide
from esc_gis.screening.decide import _report, limits_text
from esc_gis.validate import REPAIRED_COLUMN, ROW_COLUMN

PROF = load_profile()


def test_limits_are_ewkt_at_full_precision_and_null_where_there_are_none():
    geoms = np.array([shapely.box(745_000.123456789, 505_000, 745_100, 505_050), shapely.Polygon(), None], dtype=object)
    got = limits_text(geoms, ProjCRS("EPSG:7594"))
    assert got[0].startswith("SRID=7594;POLYGON ((745100 505000, 745100 505050, 745000.123456789 505050")
    assert shapely.from_wkt(got[0].split(";", 1)[1]).equals_exact(geoms[0], 0)
    assert got[1] is None and got[2] is None
    # A CRS without an EPSG code: the WKT alone, no SRID to misread.
    custom = ProjCRS("+proj=tmerc +lat_0=42.7197 +lon_0=-88.5 +k=1.0000286569 +x_0=244754.8895 +units=us-ft")
    assert limits_text(geoms[:1], custom)[0].startswith("POLYGON ((")
    # Text in an object column even when every site has limits (a fixed-width string column would clip none
    # today, but a table column of str objects is what every writer is given).
    assert limits_text(geoms[:1], ProjCRS("EPSG:7594")).dtype == object


def test_a_result_without_run_findings_has_none():
    """A table from another source (no run findings in its attrs) has none, not an error."""
    from esc_gis.screening.decide import run_findings

    assert run_findings(pd.DataFrame({"site_id": ["a"]})) == []


def _table(m: Measurements, prof=PROF, **user):
    n = len(m)
    gdf = gpd.GeoDataFrame(
        {"site_id": [f"S{i}" for i in range(n)], ROW_COLUMN: np.arange(1, n + 1), REPAIRED_COLUMN: [False] * n, **user},
        geometry=[shapely.box(0, 0, 1, 1)] * n,
        crs="EPSG:7594",
    )
    return _report(gdf, m, decide(m, prof))


def test_acres_are_square_feet_over_43560_and_the_plan_column_is_the_area_decided_on():
    m = Measurements.of(
        2,
        jurisdiction=["partial", "inside"],
        disturbed_sqft=[43_560.0, 21_780.0],
        disturbed_in_village_sqft=[10_000.0, 21_780.0],
    )
    out = _table(m)
    assert out["disturbed_acres"].tolist() == [1.0, 0.5]
    assert out["plan_disturbed_sqft"].tolist() == [43_560.0, 21_780.0]  # the whole reading: the whole site
    inside_only = _table(m, dataclasses.replace(PROF, partial_jurisdiction="inside_only"))
    assert inside_only["plan_disturbed_sqft"].tolist() == [10_000.0, 21_780.0]
    assert inside_only["disturbed_sqft"].tolist() == [43_560.0, 21_780.0]  # measured, whatever the reading


@pytest.mark.parametrize(("inside", "share"), [(0.0, None), (1e-9, 0.25e-9 / 1e-9), (400.0, 0.25e-9 / 400.0)])
def test_steep_share_is_the_steep_part_of_the_disturbance_inside_and_null_with_none_inside(inside, share):
    m = Measurements.of(1, disturbed_sqft=400.0, disturbed_in_village_sqft=inside, steep_disturbed_sqft=0.25e-9)
    got = _table(m)["steep_share"].iloc[0]
    assert np.isnan(got) if share is None else got == pytest.approx(share, rel=1e-12)


def test_the_users_fields_follow_ours_and_one_named_like_ours_is_ours():
    m = Measurements.of(1, disturbed_sqft=5_000.0)
    out = _table(m, permit=["theirs"], row=[42], owner=["A. Smith"])
    assert out["permit"].tolist() == ["required"]
    assert list(out.columns)[-2:] == ["row", "owner"] and out["row"].tolist() == [42]
    assert ROW_COLUMN not in out.columns and REPAIRED_COLUMN not in out.columns
    assert json.loads(out["findings"].iloc[0])[0]["code"] == "jurisdiction_inside"
