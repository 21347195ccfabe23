"""``--co NAME=VALUE`` on every raster output, as rio and gdal_translate take it (issue 36, item 3).

GDAL only warns about a creation option its driver does not have and writes the file without
it; esc-gis refuses it before any work, so a typo never costs a county's run or leaves a file
that is not what was asked.
"""

from __future__ import annotations

import numpy as np
import pytest
import rasterio
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import OutputFormatError
from esc_gis.terrain.slope import check_creation_options

from .conftest import write_dem


@pytest.fixture()
def dem(tmp_path):
    z = np.tile(np.arange(64, dtype="float32") * 5.0 * 0.1, (64, 1))  # a 10 % plane, 5 ft cells
    return write_dem(tmp_path / "dem.tif", z, units="ft")


def _run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_co_reaches_the_geotiff_over_our_own(dem, tmp_path) -> None:
    out = tmp_path / "slope.tif"
    r = _run("slope", dem, "-o", out, "--co", "blockxsize=256", "--co", "BLOCKYSIZE=256", "--co", "ZLEVEL=9", "-q")
    assert r.exit_code == 0, r.output
    with rasterio.open(out) as src:
        assert src.profile["blockxsize"] == 256 and src.compression.name == "deflate"
        assert np.nanmax(src.read(1, masked=True)) == pytest.approx(10.0, abs=1e-4)  # the values are the same


def test_co_replaces_our_option_of_the_same_name_in_any_case(dem, tmp_path) -> None:
    out = tmp_path / "slope.tif"
    assert _run("slope", dem, "-o", out, "--co", "compress=LZW", "-q").exit_code == 0
    with rasterio.open(out) as src:
        assert src.compression.name == "lzw"


def test_an_option_the_driver_does_not_have_is_refused_before_any_work(dem, tmp_path) -> None:
    out = tmp_path / "slope.tif"
    r = _run("slope", dem, "-o", out, "--co", "ZLEVLE=9", "-q")
    assert r.exit_code == 1 and "ZLEVLE" in r.output and "gtiff.html" in r.output, r.output
    assert "WARNING" not in r.output  # GDAL's warning became the error, not a second line
    assert not out.exists() and not (tmp_path / "slope.qml").exists()
    r = _run("slope", dem, "-o", out, "--co", "NOEQUALS", "-q")
    assert r.exit_code == 2 and "NAME=VALUE" in r.output


def test_with_cog_the_options_are_the_cog_drivers(dem, tmp_path) -> None:
    out = tmp_path / "slope_cog.tif"
    r = _run("slope", dem, "-o", out, "--cog", "--co", "LEVEL=9", "-q")
    assert r.exit_code == 0, r.output
    with rasterio.open(out) as src:
        assert src.tags(ns="IMAGE_STRUCTURE").get("LAYOUT") == "COG"
    r = _run("slope", dem, "-o", tmp_path / "x.tif", "--cog", "--co", "ZLEVEL=9", "-q")  # GTiff's name, not COG's
    assert r.exit_code == 1 and "COG" in r.output and "ZLEVEL" in r.output


def test_check_creation_options_is_quiet_for_good_names_and_nothing() -> None:
    check_creation_options(None)
    check_creation_options({"zlevel": "9", "BIGTIFF": "YES"})
    with pytest.raises(OutputFormatError, match="no such creation option"):
        check_creation_options({"NOT_AN_OPTION": "1"})


def test_soil_loss_raster_takes_co_and_refuses_a_wrong_one_before_any_work(tmp_path) -> None:
    from .test_soil_loss import GOOD, _cli_inputs

    args = _cli_inputs(tmp_path, GOOD)
    raster = tmp_path / "cells.tif"
    r = _run(*args, "--raster", raster, "--co", "ZLEVLE=9")
    assert r.exit_code == 1 and "ZLEVLE" in r.output, r.output
    assert not raster.exists() and not (tmp_path / "out.csv").exists()  # refused before the work
    r = _run(*args, "--raster", raster, "--co", "COMPRESS=LZW")
    assert r.exit_code == 0, r.output
    with rasterio.open(raster) as src:
        assert src.compression.name == "lzw"
