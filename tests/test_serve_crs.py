"""``esc-gis serve`` offers the same CRSs on both back ends: OGC CRS84 and the layer set's (EPSG:7594).

The permits collection on a GeoPackage and on PostGIS, and the layer set's collections, list
CRS84 and the registry's CRS; ``?crs=`` answers the same coordinates from either back end, with
``Content-Crs``; ``bbox-crs`` reads a bbox in either. The permits are the made-up 150 x 100 ft
boxes of :func:`tests.service.box`, so the coordinates are checkable by hand.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

import pytest
import shapely
import shapely.geometry

from esc_gis.layers import load_layers
from esc_gis.profile import load_profile

from .service import DEMO_LAYERS, box, fill_registry, get, pg_schema, public_login, served

CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
WISCRS = "http://www.opengis.net/def/crs/EPSG/0/7594"
#: A foot in the state plane: two back ends agree to a hundredth of one.
TOLERANCE_FT = 0.01


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory, pg_url: str) -> Iterator[dict[str, str]]:
    """The same five permits served from a GeoPackage and from PostGIS: {"gpkg": url, "postgis": url}."""
    gpkg = str(tmp_path_factory.mktemp("crs") / "permits.gpkg")
    fill_registry(gpkg)
    target = pg_schema(pg_url)
    fill_registry(target)
    with public_login(target) as login, served(gpkg) as on_gpkg, served(login) as on_pg:
        yield {"gpkg": on_gpkg, "postgis": on_pg}


def _items(base: str, query: str) -> tuple[int, dict[str, str], dict]:
    status, headers, body = get(f"{base}/ogc/collections/permits/items?f=json&limit=1000&{query}")
    return status, headers, json.loads(body)


def _by_number(doc: dict) -> dict[str, shapely.Geometry]:
    return {f["properties"]["permit_number"]: shapely.geometry.shape(f["geometry"]) for f in doc["features"]}


@pytest.mark.parametrize("backend", ["gpkg", "postgis"])
def test_the_permits_and_the_layers_list_crs84_and_the_layer_sets_crs(bases, backend):
    base = bases[backend]
    for collection in ("permits", "jurisdiction", "waters_lines", "waters_polygons"):
        status, _, body = get(f"{base}/ogc/collections/{collection}?f=json")
        assert status == 200
        assert set(json.loads(body)["crs"]) == {CRS84, WISCRS}, collection


@pytest.mark.parametrize("backend", ["gpkg", "postgis"])
def test_crs_answers_the_registrys_own_feet_with_content_crs(bases, backend):
    """``?crs=EPSG:7594`` gives each permit the box it was registered with, to a hundredth of a foot."""
    status, headers, doc = _items(bases[backend], f"crs={quote(WISCRS)}")
    assert status == 200 and headers["Content-Crs"] == f"<{WISCRS}>"
    got = _by_number(doc)
    assert len(got) == 5
    for i, number in enumerate(sorted(got)):
        # fill_registry numbers the permits in order of box(i); each box is 150 x 100 ft
        assert got[number].bounds == pytest.approx(box(i).bounds, abs=TOLERANCE_FT), number
    status, headers, doc = _items(bases[backend], "")
    assert status == 200 and headers["Content-Crs"] == f"<{CRS84}>"
    lon, lat = shapely.geometry.shape(doc["features"][0]["geometry"]).centroid.coords[0]
    assert -88.8 < lon < -88.6 and 44.0 < lat < 44.2  # Winneconne in longitude, latitude


def test_both_back_ends_answer_the_same_coordinates(bases):
    """The same permit, asked in each CRS of either back end: equal coordinates within 0.01 ft (1e-7 degrees)."""
    for crs, tolerance in ((WISCRS, TOLERANCE_FT), (CRS84, 1e-7)):
        shapes = {name: _by_number(_items(base, f"crs={quote(crs)}")[2]) for name, base in bases.items()}
        assert set(shapes["gpkg"]) == set(shapes["postgis"])
        for number, geom in shapes["gpkg"].items():
            other = shapes["postgis"][number]
            assert shapely.get_num_coordinates(geom) == shapely.get_num_coordinates(other)
            assert geom.bounds == pytest.approx(other.bounds, abs=tolerance), (crs, number)
        # One feature by its id, too (pygeoapi's /items/{id}).
        for name, base in bases.items():
            fid = _items(base, "")[2]["features"][0]["id"]
            status, headers, body = get(f"{base}/ogc/collections/permits/items/{fid}?f=json&crs={quote(crs)}")
            assert status == 200 and headers["Content-Crs"] == f"<{crs}>", name
            number = json.loads(body)["properties"]["permit_number"]
            got = shapely.geometry.shape(json.loads(body)["geometry"])
            assert got.bounds == pytest.approx(shapes["gpkg"][number].bounds, abs=tolerance), (name, crs)


@pytest.mark.parametrize("backend", ["gpkg", "postgis"])
def test_bbox_crs_reads_a_bbox_in_the_layer_sets_feet(bases, backend):
    """A bbox around box(1) only, in feet with ``bbox-crs``: that permit and no other. Without ``bbox-crs``
    the same numbers are read as longitude/latitude, and match no permit (or are refused)."""
    x0, y0, x1, y1 = box(1).buffer(10).bounds  # 10 ft around the second permit; the others are 150 ft away
    bbox = f"bbox={x0},{y0},{x1},{y1}"
    status, _, doc = _items(bases[backend], f"{bbox}&bbox-crs={quote(WISCRS)}&crs={quote(WISCRS)}")
    assert status == 200 and doc["numberMatched"] == 1
    assert shapely.geometry.shape(doc["features"][0]["geometry"]).bounds == pytest.approx(box(1).bounds, abs=0.01)
    status, _, doc = _items(bases[backend], f"bbox={box(1).bounds[0]},0,{box(1).bounds[2]},1")
    assert status == 400 or doc["numberMatched"] == 0


@pytest.mark.parametrize("backend", ["gpkg", "postgis"])
def test_a_layer_in_the_layer_sets_crs_is_where_the_layer_set_has_it(bases, backend):
    """The Village's boundary asked in EPSG:7594 has the layer set's own bounds (to a hundredth of a foot)."""
    ls = load_layers(DEMO_LAYERS, profile=load_profile())
    status, headers, body = get(f"{bases[backend]}/ogc/collections/jurisdiction/items?f=json&crs={quote(WISCRS)}")
    assert status == 200 and headers["Content-Crs"] == f"<{WISCRS}>"
    got = shapely.union_all([shapely.geometry.shape(f["geometry"]) for f in json.loads(body)["features"]])
    assert got.bounds == pytest.approx(ls.jurisdiction.bounds, abs=TOLERANCE_FT)


@pytest.mark.parametrize("backend", ["gpkg", "postgis"])
def test_a_crs_not_offered_is_refused_alike(bases, backend):
    status, _, doc = _items(bases[backend], f"crs={quote('http://www.opengis.net/def/crs/EPSG/0/3857')}")
    assert status == 400 and "not supported" in doc["description"]
    assert CRS84 in doc["description"] and WISCRS in doc["description"]  # the two it offers
