"""The exact columns of every screening output, whole and streamed, and what they hold where nothing is inside.

Issue 46 item 9: no test pinned the output columns, so the sites table's own columns (the
feature number and the repaired flag) could leak into an output, and a user's own field named
``row`` or ``repaired`` was silently dropped in their place. Decided: the user's fields survive
under their names, after ours; the internal ones never leave. And ``steep_share`` is the steep
part of the disturbance inside the Village: with nothing disturbed inside it is null, not 0.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest

from esc_gis import load_layers, load_profile, screen

from .conftest import CRS, X0, Y0, K, box, sites, write_dem, write_layer_set
from .test_outputs import _run as run  # a command that must succeed, no traceback

#: The screening contract's columns (DESIGN.md), then esc_gis's own, in output order.
CONTRACT = [
    "site_id",
    "plan_id",
    "jurisdiction",
    "disturbed_sqft",
    "disturbed_acres",
    "disturbed_in_jurisdiction_sqft",
    "plan_disturbed_sqft",
    "applicability",
    "permit",
    "permit_may_be_required",
    "standards",
    "sediment_standard",
    "steep_disturbed_sqft",
    "protective_disturbed_sqft",
    "nearest_water_ft",
    "findings",
]
OURS = [
    "activity",
    "state_agency",
    "npdes_exempt",
    "steep_share",
    "steep_uncovered_sqft",
    "in_water_sqft",
    "nearest_water",
    "protective_waters",
    "targeted_areas",
]
#: The old names, written for one release after ours (deprecated; tests/test_neutral_columns.py).
DEPRECATED = ["disturbed_in_village_sqft"]
#: The user's own fields, as the sites file has them (a parcel layer's "row" and "repaired" too).
USER = ["row", "repaired", "addr"]
INTERNAL = ("_esc_row", "_esc_repaired")


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    """Two lots with the user's fields row (feature numbers of their own: 7, 8), repaired (text) and addr."""
    src = tmp_path / "sites.gpkg"
    gpd.GeoDataFrame(
        {"site_id": ["A", "B"], "row": [7, 8], "repaired": ["2019", "never"], "addr": ["1 Main St", "2 Main St"]},
        geometry=[box(100, 100, 300, 300), box(400, 100, 600, 300)],
        crs=CRS,
    ).to_file(src)
    limits = tmp_path / "limits.gpkg"
    gpd.GeoDataFrame(
        {"site_id": ["A", "B"]}, geometry=[box(100, 100, 200, 200), box(400, 100, 450, 150)], crs=CRS
    ).to_file(limits)
    return src, limits


def _read(out: Path) -> pd.DataFrame:
    if out.suffix == ".csv":
        return pd.read_csv(out, keep_default_na=True)
    if out.suffix == ".parquet":
        return gpd.read_parquet(out)
    layer = "screening" if out.suffix == ".gpkg" else None
    return pyogrio.read_dataframe(out, layer=layer)


def _expected(suffix: str, *, limits: bool) -> list[str]:
    head = CONTRACT + (["findings_text"] if suffix == ".csv" else []) + OURS + DEPRECATED
    head += ["disturbed_limits"] if limits else []
    return head + USER + ["WKT" if suffix == ".csv" else "geometry"]


#: Every format, whole and streamed (a .geojson output is written whole: screen --help).
FORMATS = [(s, False) for s in (".gpkg", ".parquet", ".csv", ".geojson")] + [
    (s, True) for s in (".gpkg", ".parquet", ".csv")
]


@pytest.mark.parametrize(("suffix", "streamed"), FORMATS)
@pytest.mark.parametrize("with_limits", [False, True], ids=["parcels", "limits"])
def test_every_format_has_exactly_these_columns_and_the_users_row_survives(
    inputs, tmp_path, layers_path, suffix, streamed, with_limits
):
    src, limits = inputs
    out = tmp_path / f"out{suffix}"
    args = ["screen", src, "--layers", layers_path, "-o", out, "-q"]
    args += ["--disturbed", limits] if with_limits else []
    args += ["--batch-rows", "1"] if streamed else []
    run(*args)
    got = _read(out)
    assert list(got.columns) == _expected(suffix, limits=with_limits)
    assert not any(c in got.columns for c in INTERNAL)
    # The user's values, as given: not the feature numbers (1, 2), not the repaired flags (False).
    assert got["row"].tolist() == [7, 8]
    assert got["repaired"].tolist() == ["2019", "never"]
    assert got["site_id"].tolist() == ["A", "B"]


def test_the_library_result_has_the_same_columns_without_the_internal_ones(layer_set):
    frame = sites(
        [
            {"site_id": "A", "row": 7, "repaired": True, "geometry": box(100, 100, 300, 300)},
            {"site_id": "B", "row": 8, "repaired": False, "geometry": box(400, 100, 600, 300)},
        ]
    )
    out = screen(frame, layers=layer_set)
    assert list(out.columns) == [*CONTRACT, *OURS, *DEPRECATED, "row", "repaired", "geometry"]
    assert out["row"].tolist() == [7, 8] and out["repaired"].tolist() == [True, False]
    # The user's "repaired" is not the repair flag: both shapes are valid, nothing was repaired.
    assert all("geometry_repaired" not in f for f in out["findings"])


# --- steep_share: null where nothing is disturbed inside ---------------------------------------------


@pytest.fixture
def steep_layers(tmp_path: Path) -> Path:
    """The test Village with a DEM of 30 % slope over local x 0..200, flat to 400 (5 ft cells, y 0..400)."""
    x = (np.arange(80) + 0.5) * 5.0
    z = np.tile(np.where(x < 200, 0.3 * x, 60.0), (80, 1)).astype(np.float32)
    dem = write_dem(tmp_path / "dem.tif", z, x0=X0, y0=Y0 + 400, units="US survey foot")
    return write_layer_set(tmp_path / "l", extra=f'[dem]\npath = "{dem.as_posix()}"\nz_unit = "us_ft"\n')


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_steep_share_is_null_where_nothing_is_disturbed_inside(tmp_path, steep_layers, streamed):
    """S: 100 x 100 ft, all on the 30 % slope: share 1. O: outside the Village (west of it), 0 sq ft inside.
    A share of nothing is no number: null, not 0. (A site the limits do not name is measured whole,
    so it is no case of nothing disturbed: tests/test_geometry_rule.py.)"""
    src = tmp_path / "sites.gpkg"
    gpd.GeoDataFrame(
        {"site_id": ["S", "O"]},
        geometry=[box(50, 100, 150, 200), box(-150, 100, -50, 200)],
        crs=CRS,
    ).to_file(src)
    limits = tmp_path / "limits.gpkg"
    gpd.GeoDataFrame(
        {"site_id": ["S", "O"]}, geometry=[box(50, 100, 150, 200), box(-150, 100, -50, 200)], crs=CRS
    ).to_file(limits)
    out = tmp_path / "out.csv"
    args = ["screen", src, "--disturbed", limits, "--layers", steep_layers, "-o", out, "-q"]
    run(*args, *(["--batch-rows", "1"] if streamed else []))
    got = pd.read_csv(out).set_index("site_id")
    assert got.loc["S", "disturbed_in_jurisdiction_sqft"] == pytest.approx(100 * 100 * K, rel=1e-9)
    assert got.loc["S", "steep_share"] == pytest.approx(1.0, rel=1e-9)
    assert got.loc["O", "jurisdiction"] == "outside" and got.loc["O", "disturbed_in_jurisdiction_sqft"] == 0
    assert pd.isna(got.loc["O", "steep_share"])
    # Measured, it is measured: 0 sq ft steep inside, a number.
    assert got.loc["O", "steep_disturbed_sqft"] == 0


def test_steep_share_in_the_library_result_is_null_where_nothing_is_inside(steep_layers):
    ls = load_layers(steep_layers, profile=load_profile())
    out = screen(
        sites(
            [
                {"site_id": "S", "geometry": box(50, 100, 150, 200)},
                {"site_id": "O", "geometry": box(-150, 100, -50, 200)},
            ]
        ),
        layers=ls,
    ).set_index("site_id")
    assert out.loc["S", "steep_share"] == pytest.approx(1.0)
    assert np.isnan(out.loc["O", "steep_share"])
