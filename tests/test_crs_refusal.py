"""A CRS label the numbers contradict is refused, by every reader and by the service, in the same words (issue 34).

Feet of Winnebago County's grid in a GeoJSON without its ``crs`` member (RFC 7946 reads
degrees), metres labelled EPSG:4326, a DEM of projected metres labelled EPSG:4326: each was
screened or measured as nothing at all, with exit 0. Each is now refused with one message
naming the likely cause and the fix, exit 1, and nothing written.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
import shapely.geometry
from click.testing import CliRunner
from pyproj import CRS as ProjCRS
from pyproj import Geod, Transformer

from esc_gis.cli.main import cli
from esc_gis.crs import (
    AREA_MARGIN_KM,
    FIX_REQUEST,
    check_coordinates,
    coordinates_problem,
    coordinates_refusal,
)
from esc_gis.errors import CoordinatesNotInCRSError, CRSError, RequestError
from esc_gis.io import read_layer
from esc_gis.profile import load_profile
from esc_gis.serve.screen_request import Limits, screen_request

from .conftest import CRS, X0, Y0, box, write_dem

REFUSED = "has coordinates that cannot be in its CRS"
#: Two sites in Winneconne, in its county's grid (US survey feet): ~744,700 ft east, not degrees.
FEET = [box(100, 100, 300, 300), box(500, 500, 900, 700)]


def run(*args: object):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in r.output, r.output
    return r


def one_line(text: str) -> str:
    return " ".join(text.split())


def feet_geojson(path: Path) -> Path:
    """The sites as a GeoJSON of EPSG:7594 feet with no ``crs`` member: what a careless export writes."""
    feats = [
        {"type": "Feature", "properties": {"site_id": f"S{i}"}, "geometry": shapely.geometry.mapping(g)}
        for i, g in enumerate(FEET, 1)
    ]
    path.write_text(json.dumps({"type": "FeatureCollection", "features": feats}), encoding="utf-8")
    return path


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


# --- the decision, at its edges ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("bounds", "refused"),
    [
        ((-180.0, -90.0, 180.0, 90.0), False),  # the whole globe, exactly: degrees
        ((-180.000001, 0.0, 0.0, 1.0), True),
        ((0.0, 0.0, 180.000001, 1.0), True),
        ((0.0, -90.000001, 1.0, 0.0), True),
        ((0.0, 0.0, 1.0, 90.000001), True),
    ],
)
def test_degrees_are_refused_exactly_off_the_globe(bounds, refused):
    """Longitude runs from -180 to 180 and latitude from -90 to 90: a geographic CRS holds nothing else."""
    assert (coordinates_problem(bounds, "EPSG:4326") is not None) is refused


@pytest.mark.parametrize(("km", "refused"), [(AREA_MARGIN_KM - 1, False), (AREA_MARGIN_KM + 1, True)])
def test_projected_data_are_refused_just_past_the_margin_outside_the_area_of_use(km, refused):
    """Measured independently: a point due south of EPSG:7594's area of use, ``km`` away along the ellipsoid."""
    aou = ProjCRS(CRS).area_of_use
    lon = (aou.west + aou.east) / 2
    lon2, lat2, _ = Geod(ellps="WGS84").fwd(lon, aou.south, 180.0, km * 1000.0)
    x, y = Transformer.from_crs("EPSG:4326", CRS, always_xy=True).transform(lon2, lat2)
    bounds = (x - 1, y - 1, x + 1, y + 1)
    assert (coordinates_problem(bounds, CRS) is not None) is refused


def test_data_in_their_crs_pass_and_an_unplaceable_layer_is_not_judged():
    assert coordinates_problem(gpd.GeoSeries(FEET).total_bounds, CRS) is None
    lonlat = gpd.GeoSeries(FEET, crs=CRS).to_crs("EPSG:4326")
    assert coordinates_problem(lonlat.total_bounds, "EPSG:4326") is None
    assert coordinates_problem((np.nan, np.nan, np.nan, np.nan), "EPSG:4326") is None  # an empty layer
    check_coordinates(lonlat.total_bounds, "EPSG:4326", what="x")  # no raise


def test_the_error_is_a_crs_error_and_a_value_error():
    with pytest.raises(CoordinatesNotInCRSError) as err:
        check_coordinates(gpd.GeoSeries(FEET).total_bounds, "EPSG:4326", what="sites.geojson")
    assert isinstance(err.value, CRSError) and isinstance(err.value, ValueError)
    text = str(err.value)
    assert text.startswith("sites.geojson " + REFUSED + " EPSG:4326: they are off the globe")
    assert "crs member was dropped" in text and "Fix: " in text and 'assume_crs="EPSG:XXXX"' in text
    assert "--assume-crs" not in text  # a Python caller is told the keyword, not the flag


# --- the vector reader: every command -------------------------------------------------------------


def test_a_geojson_of_feet_without_its_crs_member_is_refused_by_screen(tmp_path, layers_path):
    src = feet_geojson(tmp_path / "sites.geojson")
    before = listing(tmp_path)
    r = run("screen", src, "--layers", layers_path, "-o", tmp_path / "out.gpkg")
    text = one_line(r.output)
    assert r.exit_code == 1, r.output
    assert f"{src} {REFUSED} EPSG:4326: they are off the globe (x from 745,1" in text
    assert "a GeoJSON whose crs member was dropped is read as longitude/latitude" in text
    assert "ogr2ogr -a_srs EPSG:7594" in text and "--assume-crs" in text
    assert listing(tmp_path) == before  # nothing written, no sidecar
    # The same sites with their true CRS are screened (the refusal is the label's, not the sites').
    good = tmp_path / "good.gpkg"
    gpd.GeoDataFrame({"site_id": ["S1", "S2"]}, geometry=FEET, crs=CRS).to_file(good)
    assert run("screen", good, "--layers", layers_path, "-o", tmp_path / "ok.gpkg", "-q").exit_code == 0


def test_a_geopackage_of_metres_labelled_4326_is_refused_by_every_reader(tmp_path, layers_path):
    # UTM 16N metres of the same sites (about 370,000 E, 4,880,000 N), labelled as degrees.
    metres = gpd.GeoSeries(FEET, crs=CRS).to_crs("EPSG:26916")
    src = tmp_path / "metres.gpkg"
    gpd.GeoDataFrame({"site_id": ["S1", "S2"]}, geometry=metres.to_numpy(), crs="EPSG:4326").to_file(src)
    with pytest.raises(CoordinatesNotInCRSError, match="off the globe"):
        read_layer(src)
    before = listing(tmp_path)
    r = run("screen", src, "--layers", layers_path, "-o", tmp_path / "out.gpkg")
    assert r.exit_code == 1 and REFUSED in one_line(r.output), r.output
    # The streamed screening reads through the same reader.
    r = run("screen", src, "--layers", layers_path, "--batch-rows", "1", "-o", tmp_path / "out.gpkg")
    assert r.exit_code == 1 and REFUSED in one_line(r.output), r.output
    # So does the registry's intake.
    reg = tmp_path / "reg.gpkg"
    assert run("permits", "init", reg, "--layers", layers_path).exit_code == 0
    before.add(reg.name)
    r = run("permits", "import", reg, src, "--layers", layers_path)
    assert r.exit_code == 1 and REFUSED in one_line(r.output), r.output
    assert listing(tmp_path) == before


def test_a_layer_far_outside_its_crs_area_of_use_is_refused(tmp_path, layers_path):
    """UTM metres labelled with the county's feet grid: ~1,500 km north of Winnebago County."""
    metres = gpd.GeoSeries(FEET, crs=CRS).to_crs("EPSG:26916")
    src = tmp_path / "feet_label.gpkg"
    gpd.GeoDataFrame({"site_id": ["S1", "S2"]}, geometry=metres.to_numpy(), crs=CRS).to_file(src)
    before = listing(tmp_path)
    r = run("screen", src, "--layers", layers_path, "-o", tmp_path / "out.gpkg")
    text = one_line(r.output)
    assert r.exit_code == 1, r.output
    assert REFUSED in text and "km (" in text and "outside the area" in text
    assert "another unit: feet read as metres" in text
    assert listing(tmp_path) == before


def test_an_assumed_crs_the_numbers_contradict_is_refused(tmp_path, layers_path):
    """--assume-crs is believed no more than a file's own label."""
    src = tmp_path / "sites.shp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "'crs' was not provided": the point here
        gpd.GeoDataFrame({"site_id": ["S1", "S2"]}, geometry=FEET).to_file(src)  # no .prj
    r = run("screen", src, "--assume-crs", "EPSG:4326", "--layers", layers_path, "-o", tmp_path / "out.gpkg")
    assert r.exit_code == 1 and "off the globe" in one_line(r.output), r.output
    assert not (tmp_path / "out.gpkg").exists()
    r = run("screen", src, "--assume-crs", CRS, "--layers", layers_path, "-o", tmp_path / "out.gpkg", "-q")
    assert r.exit_code == 0, r.output


# --- the DEM reader: slope, steep ------------------------------------------------------------------


def _steep_dem(path: Path, crs: str) -> Path:
    """A 20 x 20 DEM of 30 % slope (3 ft per 10 ft cell, north to south), at Winneconne in county feet."""
    z = np.add.outer(np.arange(20.0) * 3.0, np.zeros(20))
    return write_dem(path, z, crs=crs, x0=X0, y0=Y0 + 200, cell=10.0, units="US survey foot")


@pytest.mark.parametrize(("command", "out"), [("slope", "slope.tif"), ("steep", "steep.gpkg")])
def test_a_dem_of_projected_coordinates_labelled_4326_is_refused(tmp_path, command, out):
    """Labelled EPSG:4326, 744,700 "degrees" east: slope read as 0.15 % at most, steep as 0 sq ft."""
    dem = _steep_dem(tmp_path / "dem.tif", "EPSG:4326")
    before = listing(tmp_path)
    r = run(command, dem, "-o", tmp_path / out)
    text = one_line(r.output)
    assert r.exit_code == 1, r.output
    assert f"{dem} {REFUSED} EPSG:4326: they are off the globe" in text
    assert "gdal_edit.py -a_srs EPSG:XXXX" in text
    assert listing(tmp_path) == before
    # With its true CRS the same grid is measured.
    true = _steep_dem(tmp_path / "true.tif", CRS)
    assert run(command, true, "-o", tmp_path / ("t_" + out), "-q").exit_code == 0


def test_sample_dem_checks_a_dem_given_as_a_path(tmp_path):
    from esc_gis.terrain import sample_dem

    dem = _steep_dem(tmp_path / "dem.tif", "EPSG:4326")
    with pytest.raises(CoordinatesNotInCRSError, match="off the globe"):
        sample_dem(np.array([[X0 + 5, Y0 + 5]]), ProjCRS(CRS), dem)
    true = _steep_dem(tmp_path / "true.tif", CRS)
    assert sample_dem(np.array([[X0 + 5, Y0 + 195]]), ProjCRS(CRS), true)[0] == 0.0  # the top row's z


# --- the service: the same words ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_layers():
    from esc_gis.layers import load_layers

    from .service import DEMO_LAYERS

    return load_layers(DEMO_LAYERS, profile=load_profile())


def _request(coords: list) -> dict:
    return {"site": {"type": "Polygon", "coordinates": [coords]}}


def test_the_service_refuses_feet_with_the_command_lines_words(demo_layers, tmp_path, layers_path):
    ring = [list(p) for p in FEET[0].exterior.coords]
    with pytest.raises(RequestError) as err:
        screen_request(_request(ring), layers=demo_layers, profile=load_profile(), limits=Limits())
    served = str(err.value)
    # GeoJSON's CRS is longitude first (OGC:CRS84); a file's is EPSG:4326 as GDAL reads it.
    assert served.startswith("Input 'site' " + REFUSED + " OGC:CRS84: they are off the globe")
    assert served.endswith("Fix: " + FIX_REQUEST)
    # The what-and-why is word for word the command line's, for a file of the same polygon.
    src = tmp_path / "one.geojson"
    src.write_text(json.dumps({"type": "Polygon", "coordinates": [ring]}), encoding="utf-8")
    cli_text = one_line(run("screen", src, "--layers", layers_path, "-o", tmp_path / "o.gpkg").output)
    why = served.split(" OGC:CRS84: ", 1)[1].split(" Fix: ", 1)[0]
    assert why in cli_text
    assert "Did you swap them?" not in served  # feet swapped are as far off


def test_the_service_asks_whether_latitude_and_longitude_were_swapped(demo_layers):
    """Winneconne latitude first: (44.1, -88.7) is on the globe, near the South Pole, and far from the Village."""
    lonlat = gpd.GeoSeries([FEET[0]], crs=CRS).to_crs("EPSG:4326").iloc[0]
    swapped = [[y, x] for x, y in lonlat.exterior.coords]
    with pytest.raises(RequestError) as err:
        screen_request(_request(swapped), layers=demo_layers, profile=load_profile(), limits=Limits())
    text = str(err.value)
    assert REFUSED in text and "Did you swap them?" in text and text.endswith("Fix: " + FIX_REQUEST)
    # The right way round, it is screened.
    right = [list(p) for p in lonlat.exterior.coords]
    assert screen_request(_request(right), layers=demo_layers, profile=load_profile(), limits=Limits())["permit"]


def test_latitude_off_the_globe_that_swapped_is_on_it_asks_too():
    """(44.1, -188.7)-like: latitude beyond 90 when x and y are the other way round."""
    text = coordinates_refusal((44.1, -88.8, 44.2, 100.0), "EPSG:4326", what="Input 'site'", fix=FIX_REQUEST)
    assert text is not None and "off the globe" in text and "Did you swap them?" in text


def test_the_review_refuses_a_plan_layer_its_crs_cannot_hold(tmp_path, layers_path):
    """As every reader does: exit 1, the one message, no report (never a "disapprove" drafted on a label)."""
    plan = tmp_path / "plan"
    plan.mkdir()
    feet_geojson(plan / "site_boundary.geojson")
    report = tmp_path / "r.html"
    r = run("review", plan, "--layers", layers_path, "-o", report)
    assert r.exit_code == 1, r.output
    said = one_line(r.output)
    assert f"layer site_boundary {REFUSED} EPSG:4326: they are off the globe" in said
    assert "crs member was dropped" in said and "disapprove" not in said
    assert not report.exists()
