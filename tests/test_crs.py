import geopandas as gpd
import pytest
import shapely

from esc_gis.crs import assign_crs, measuring_crs, parse_crs
from esc_gis.errors import CRSError


@pytest.mark.parametrize("bad", ["EPSG:4326", "EPSG:4269", "EPSG:3857", "EPSG:3395"])
def test_measuring_crs_refuses_degrees_and_mercator(bad):
    with pytest.raises(CRSError, match="EPSG:7594"):
        measuring_crs(bad)


@pytest.mark.parametrize("good", ["EPSG:7594", "EPSG:8206", "EPSG:3071", "EPSG:26916"])
def test_measuring_crs_accepts_local_grids(good):
    assert measuring_crs(good).is_projected


def test_parse_crs_message():
    with pytest.raises(CRSError, match="not a coordinate reference system"):
        parse_crs("EPSG:99999999")


def test_assign_never_overrides_and_never_guesses():
    naive = gpd.GeoDataFrame(geometry=[shapely.box(0, 0, 1, 1)])
    with pytest.raises(CRSError, match="--assume-crs"):
        assign_crs(naive, assume_crs=None, source="sites.shp")
    assert assign_crs(naive, assume_crs="EPSG:7594", source="x").crs.to_epsg() == 7594
    has = naive.set_crs("EPSG:3071")
    # set_crs assigns, to_crs transforms: an assumed CRS never replaces a file's own.
    assert assign_crs(has, assume_crs="EPSG:7594", source="x").crs.to_epsg() == 3071
