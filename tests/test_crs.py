import geopandas as gpd
import pytest
import shapely

from esc_gis.crs import assign_crs, measuring_crs, parse_crs, reproject
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
    from .conftest import box

    # Feet where Winneconne is: an assumed CRS is believed only where the numbers allow it.
    naive = gpd.GeoDataFrame(geometry=[box(0, 0, 1, 1)])
    with pytest.raises(CRSError, match='assume_crs="EPSG:XXXX"'):
        assign_crs(naive, assume_crs=None, source="sites.shp")
    assert assign_crs(naive, assume_crs="EPSG:7594", source="x").crs.to_epsg() == 7594
    has = naive.set_crs("EPSG:3071")
    # set_crs assigns, to_crs transforms: an assumed CRS never replaces a file's own.
    assert assign_crs(has, assume_crs="EPSG:7594", source="x").crs.to_epsg() == 3071


def test_reproject_moves_nothing_between_equivalent_crss(tmp_path):
    """A GeoTIFF's CRS is EPSG:7594 by another WKT: the sites are handed back as they are, not transformed."""
    import numpy as np
    import rasterio
    from pyproj import CRS

    tif = tmp_path / "dem.tif"
    profile = {"driver": "GTiff", "width": 2, "height": 2, "count": 1, "dtype": "float32", "crs": "EPSG:7594"}
    with rasterio.open(tif, "w", transform=rasterio.transform.from_origin(0, 2, 1, 1), **profile) as dst:
        dst.write(np.zeros((1, 2, 2), "float32"))
    with rasterio.open(tif) as src:
        dem_crs = CRS.from_user_input(src.crs)
    measure = CRS.from_epsg(7594)
    assert not dem_crs.is_exact_same(measure)  # what made geopandas transform
    geoms = np.array([shapely.box(2_000_000, 500_000, 2_000_100, 500_100)], dtype=object)
    assert reproject(geoms, measure, dem_crs) is geoms
    # Another CRS is transformed: WTM metres from the county's US survey feet.
    wtm = reproject(geoms, measure, CRS.from_epsg(3071))
    assert wtm is not geoms
    assert shapely.area(wtm)[0] == pytest.approx(100 * 100 * 0.3048006096**2, rel=1e-2)  # grid scales differ a little
