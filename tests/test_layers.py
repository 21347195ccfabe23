import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely

from esc_gis import load_layers, load_profile
from esc_gis.errors import CRSError, FarFromZoneWarning, LayerReadError, LayerSetError, ValidationError
from esc_gis.layers import default_manifest

from .conftest import CRS, box, lake_polygon, write_dem, write_layer_set


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


# --- Manifests that cannot be misread (issue 14) ----------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
PLACES = ROOT / "tests" / "data" / "places" / "tl_2019_55_place_winnebago_cut.shp"
ZION = ROOT / "tests" / "data" / "dem" / "spDataLarge_srtm_3arcsec_zion.tif"


def test_typo_in_a_section_and_a_key_is_refused_naming_every_one_with_the_fix(tmp_path):
    m = write_layer_set(tmp_path, extra='[targeted_area]\npath = "tmdl.gpkg"\n')
    m.write_text('crss = "EPSG:7594"\n' + m.read_text().replace("class_field", "class_feild"))
    with pytest.raises(LayerSetError) as exc:
        load_layers(m, profile=load_profile())
    text = str(exc.value)
    assert str(m) in text and "3 unknown names" in text
    assert "[targeted_area]; did you mean [targeted_areas]?" in text
    assert "[waters]: unknown key 'class_feild'; did you mean 'class_field'?" in text
    assert "'crss'; did you mean 'crs'?" in text


def test_typo_in_the_second_waters_table_and_dem_are_named(tmp_path):
    m = write_layer_set(tmp_path)
    m.write_text(
        m.read_text().replace("[waters]", "[[waters]]")
        + '[[waters]]\npath = "waters.gpkg"\nchanel_width_field = "w"\n[dem]\npath = "d.tif"\nz_units = "m"\n'
    )
    with pytest.raises(LayerSetError) as exc:
        load_layers(m, profile=load_profile())
    assert "[[waters]] number 2: unknown key 'chanel_width_field'; did you mean 'channel_width_field'?" in str(
        exc.value
    )
    assert "[dem]: unknown key 'z_units'; did you mean 'z_unit'?" in str(exc.value)
    assert "[[waters]] number 1" not in str(exc.value)


def test_every_documented_key_is_accepted(tmp_path):
    dem = write_dem(tmp_path / "dem.tif", np.zeros((4, 4), dtype="float32"))
    m = write_layer_set(
        tmp_path,
        extra=(
            f'[dem]\npath = "{dem.name}"\nz_unit = "us_ft"\nband = 1\n'
            '[targeted_areas]\npath = "village.gpkg"\nlayer = "village"\nwhere = "name = \'Testville\'"\n'
            'name_field = "name"\n'
        ),
    )
    m.write_text(
        m.read_text().replace('name_field = "name"\n', 'name_field = "name"\nwhere = "name = \'Test Lake\'"\n', 1)
    )
    ls = load_layers(m, profile=load_profile())
    assert ls.dem_band == 1 and list(ls.targeted_areas["area_name"]) == ["Testville"]
    m.write_text(m.read_text().replace("band = 1", "band = 0"))
    with pytest.raises(LayerSetError, match="band 0 is not a band number"):
        load_layers(m, profile=load_profile())


def _places_manifest(folder: Path, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    m = folder / "layers.toml"
    m.write_text(f'crs = "EPSG:7594"\n[jurisdiction]\npath = "{PLACES.as_posix()}"\n{extra}')
    return m


def _village() -> shapely.Geometry:
    return load_layers(profile=load_profile()).jurisdiction  # the Census polygon, as shipped


def test_a_layer_of_several_places_is_refused_with_the_keys_and_some_names(tmp_path):
    with pytest.raises(LayerSetError) as exc:
        load_layers(_places_manifest(tmp_path), profile=load_profile())
    text = str(exc.value)
    assert "holds 6 features" in text and "will not merge them" in text
    assert 'name_field = "NAME"' in text and "where = \"NAME = '...'\"" in text
    assert "Values of NAME: 'Omro'" in text and "(6 in all)" in text


@pytest.mark.parametrize("select", ['name_field = "NAME"\nname = "Winneconne"\n', "where = \"GEOID = '5587900'\"\n"])
def test_a_selected_place_is_that_place(tmp_path, select):
    jur = load_layers(_places_manifest(tmp_path, select), profile=load_profile()).jurisdiction
    village = _village()
    assert jur.area == pytest.approx(village.area, rel=1e-9)
    assert shapely.symmetric_difference(jur, village).area < 1e-6 * village.area


def test_several_picked_features_are_merged_as_one_places_parts(tmp_path):
    both = load_layers(
        _places_manifest(tmp_path, "where = \"NAME IN ('Winneconne', 'Omro')\"\n"), profile=load_profile()
    ).jurisdiction
    omro = load_layers(_places_manifest(tmp_path / "o", "where = \"NAME = 'Omro'\"\n"), profile=load_profile())
    assert both.area == pytest.approx(_village().area + omro.jurisdiction.area, rel=1e-9)


def test_one_feature_of_several_parts_needs_no_selection(tmp_path):
    folder = tmp_path / "multi"
    folder.mkdir()
    parts = shapely.MultiPolygon([box(0, 0, 100, 100), box(500, 500, 600, 600)])
    gpd.GeoDataFrame({"name": ["Split Village"]}, geometry=[parts], crs=CRS).to_file(folder / "v.gpkg")
    (folder / "layers.toml").write_text(f'crs = "{CRS}"\n[jurisdiction]\npath = "v.gpkg"\n')
    jur = load_layers(folder / "layers.toml", profile=load_profile()).jurisdiction
    assert jur.area == pytest.approx(20_000)


def test_bad_selections_say_what_is_wrong(tmp_path):
    p = load_profile()
    with pytest.raises(LayerSetError, match="needs both name_field"):
        load_layers(_places_manifest(tmp_path / "a", 'name_field = "NAME"\n'), profile=p)
    with pytest.raises(LayerSetError, match=r"'NAM' is not a field of .*GEOID, NAME, NAMELSAD"):
        load_layers(_places_manifest(tmp_path / "b", 'name_field = "NAM"\nname = "Omro"\n'), profile=p)
    with pytest.raises(LayerSetError, match=r"no feature .* has NAME = 'Winneconn'\. Nearest: 'Winneconne'"):
        load_layers(_places_manifest(tmp_path / "c", 'name_field = "NAME"\nname = "Winneconn"\n'), profile=p)
    with pytest.raises(LayerReadError, match="no features where NAME = 'Nowhere'"):
        load_layers(_places_manifest(tmp_path / "d", "where = \"NAME = 'Nowhere'\"\n"), profile=p)


def test_a_dem_far_outside_the_measuring_zone_warns_with_the_distance(tmp_path):
    m = write_layer_set(tmp_path, extra=f'[dem]\npath = "{ZION.as_posix()}"\nz_unit = "m"\n')
    with pytest.warns(FarFromZoneWarning, match=r"DEM .*zion.tif lies 2,1\d\d km \(1,3\d\d mi\) outside") as rec:
        load_layers(m, profile=load_profile())
    assert len(rec) == 1 and "Fix: use a layer set" in str(rec[0].message)


def test_the_villages_own_layers_draw_no_zone_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_layers(profile=load_profile())
        load_layers(ROOT / "layers" / "winneconne-demo" / "layers.toml", profile=load_profile())
