import geopandas as gpd
import pytest

from esc_gis import load_layers, load_profile
from esc_gis.errors import CRSError, LayerReadError, LayerSetError, ValidationError
from esc_gis.layers import default_manifest

from .conftest import CRS, box, lake_polygon, write_layer_set


def test_default_manifest_is_the_villages():
    m = default_manifest()
    assert m.parts[-3:] == ("layers", "winneconne", "layers.toml")


def test_real_village_layers():
    ls = load_layers(profile=load_profile())
    assert ls.crs.to_epsg() == 7594
    # The Census polygon keeps its unincorporated enclave as a hole.
    assert len(ls.jurisdiction.interiors) == 1
    assert ls.jurisdiction.area * 1.000004 / 43_560 == pytest.approx(1_212.7, abs=0.1)
    assert set(ls.waters["water_class"]) == {"lake"}
    assert ls.dem_path is None and ls.targeted_areas is None


def test_manifest_errors(tmp_path):
    p = load_profile()
    with pytest.raises(LayerSetError, match="does not exist"):
        load_layers(tmp_path / "none.toml", profile=p)
    bad = tmp_path / "bad.toml"
    bad.write_text("crs = [")
    with pytest.raises(LayerSetError, match="not valid TOML"):
        load_layers(bad, profile=p)
    nojur = tmp_path / "nojur.toml"
    nojur.write_text('crs = "EPSG:7594"\n')
    with pytest.raises(LayerSetError, match=r"\[jurisdiction\] layer is required"):
        load_layers(nojur, profile=p)
    merc = tmp_path / "merc" / "layers.toml"
    write_layer_set(merc.parent)
    merc.write_text(merc.read_text().replace("EPSG:7594", "EPSG:3857"))
    with pytest.raises(CRSError, match="Mercator"):
        load_layers(merc, profile=p)


def test_named_but_unreadable_layer_is_an_error(tmp_path):
    m = write_layer_set(tmp_path, extra='[targeted_areas]\npath = "missing.gpkg"\n')
    with pytest.raises(LayerReadError, match="no such file"):
        load_layers(m, profile=load_profile())
    m.write_text(m.read_text().replace('[targeted_areas]\npath = "missing.gpkg"\n', '[dem]\npath = "dem.tif"\n'))
    with pytest.raises(LayerSetError, match="does not exist"):
        load_layers(m, profile=load_profile())


def test_unknown_water_class_lists_the_allowed(tmp_path):
    waters = gpd.GeoDataFrame(
        {"water_class": ["lake", "puddle"], "name": ["a", "b"]}, geometry=[lake_polygon(), box(0, 0, 10, 10)], crs=CRS
    )
    m = write_layer_set(tmp_path, waters=waters)
    with pytest.raises(ValidationError, match="row 2: water_class 'puddle'") as exc:
        load_layers(m, profile=load_profile())
    assert "perennial_stream" in str(exc.value)


def test_layers_are_transformed_once_to_the_measuring_crs(tmp_path):
    waters = gpd.GeoDataFrame({"water_class": ["lake"], "name": ["a"]}, geometry=[lake_polygon()], crs=CRS).to_crs(4326)
    ls = load_layers(write_layer_set(tmp_path, waters=waters), profile=load_profile())
    assert ls.waters.crs.to_epsg() == 7594
    assert ls.waters.geometry.iloc[0].area == pytest.approx(lake_polygon().area, rel=1e-6)
