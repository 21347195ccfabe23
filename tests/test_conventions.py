"""The conventions GIS users bring from rio, GDAL and pandas (issue 36, item 3).

- ``--ordinance`` names the ordinance's profile (rio's ``--profile`` means GDAL creation
  options); ``--profile`` is still taken, so scripts and saved models keep working.
- ``--bidx`` is rio's name for the band, beside ``--band``; ``--dst-crs`` is the output's CRS in
  every command that has one (``steep``, ``protective``), beside the older ``--crs``.
- :func:`esc_gis.findings_frame` gives one row per finding, and :func:`esc_gis.screen_run`
  returns the run's own findings rather than leaving them in ``DataFrame.attrs`` (which many
  pandas operations drop).
"""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
from click.testing import CliRunner

import esc_gis
from esc_gis.cli.main import cli

from .conftest import CRS, box, sites, write_dem


def _run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_ordinance_and_profile_name_the_same_file(tmp_path) -> None:
    shipped = esc_gis.load_profile().source
    town = tmp_path / "town.toml"
    text = (
        Path(shipped)
        .read_text(encoding="utf-8")
        .replace('name = "Village of Winneconne"', 'name = "Town of Example"', 1)
    )
    town.write_text(text, encoding="utf-8")
    for option in ("--ordinance", "--profile"):
        r = _run("rules", option, town, "--json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["profile"] == "Town of Example", option
    help_text = _run("screen", "--help").output
    assert "--ordinance, --profile FILE" in help_text and "--ordinance-by, --profile-by" in help_text


@pytest.fixture()
def two_band_dem(tmp_path):
    """A two-band raster: band 1 flat, band 2 a plane rising 25 ft per 100 ft eastward (25 %: steep)."""
    import rasterio

    cols = np.arange(40, dtype="float32")
    plane = np.tile(cols * 5.0 * 0.25, (40, 1)).astype("float32")  # 5 ft cells
    path = write_dem(tmp_path / "dem.tif", plane, units="ft")
    with rasterio.open(path) as src:
        profile = src.profile | {"count": 2}
    two = tmp_path / "two.tif"
    with rasterio.open(two, "w", **profile) as dst:
        dst.write(np.zeros_like(plane), 1)
        dst.write(plane, 2)
        dst.units = ("ft", "ft")
    return two


@pytest.mark.parametrize("option", ["--bidx", "--band"])
def test_bidx_and_band_pick_the_same_band(two_band_dem, tmp_path, option) -> None:
    out = tmp_path / f"steep{option}.gpkg"
    r = _run("steep", two_band_dem, "-o", out, option, 2, "--quiet")
    assert r.exit_code == 0, r.output
    steep = gpd.read_file(out, layer="steep")
    assert steep["area_sqft"].sum() > 0  # band 2, the 25 % plane: steep (band 1 is flat)
    r = _run("steep", two_band_dem, "-o", tmp_path / "flat.gpkg", option, 1, "--quiet")
    assert r.exit_code == 0 and gpd.read_file(tmp_path / "flat.gpkg", layer="steep")["area_sqft"].sum() == 0
    r = _run("steep", two_band_dem, "-o", tmp_path / "none.gpkg", "--quiet")
    assert r.exit_code == 1 and "band" in r.output.lower()  # two bands: never band 1 by default


@pytest.mark.parametrize("option", ["--dst-crs", "--crs"])
def test_dst_crs_and_crs_give_the_output_crs(two_band_dem, tmp_path, option) -> None:
    out = tmp_path / "steep.gpkg"
    r = _run("steep", two_band_dem, "-o", out, "--bidx", 2, option, "EPSG:3071", "--quiet")
    assert r.exit_code == 0, r.output
    assert pyogrio.read_info(out, layer="steep")["crs"] == "EPSG:3071"


def test_findings_frame_is_one_row_per_finding(layer_set) -> None:
    gdf = sites(
        [
            {"site_id": "big", "geometry": box(100, 100, 200, 200)},
            {"site_id": "small", "geometry": box(300, 100, 310, 110)},
        ],
        CRS,
    )
    run = esc_gis.screen_run(gdf, layers=layer_set)
    frame = esc_gis.findings_frame(run.result)
    assert list(frame.columns) == ["site_id", "code", "section", "basis", "message"]
    for site, text in zip(run.result["site_id"], run.result["findings"], strict=True):
        mine = frame[frame["site_id"] == site]
        assert mine["code"].tolist() == [f["code"] for f in json.loads(text)]  # every finding, in order
    assert "permit_required" in frame.loc[frame.site_id == "big", "code"].tolist()
    assert "permit_required" not in frame.loc[frame.site_id == "small", "code"].tolist()
    with pytest.raises(KeyError, match="findings"):
        esc_gis.findings_frame(pd.DataFrame({"site_id": ["a"]}))


def test_run_findings_are_returned_where_pandas_cannot_drop_them(layer_set) -> None:
    gdf = sites([{"site_id": "A", "geometry": box(100, 100, 200, 200)}], CRS)
    run = esc_gis.screen_run(gdf, layers=layer_set)
    assert run.run_findings == esc_gis.screening.run_findings(run.result)
    assert all({"code", "section", "basis", "message"} <= set(f) for f in run.run_findings)
    assert run.run_findings  # the test layer set has no DEM: at least one check made for no site
