"""The service's waters: two collections, lines and polygons, each of one geometry type GDAL and QGIS declare.

One collection mixing streams (lines) and lakes (polygons) was declared Polygon with LineStrings
inside by QGIS and "Unknown" by GDAL. Here a layer set whose waters mix all four kinds
(LineString, MultiLineString, Polygon, MultiPolygon) is prepared and served: each collection
holds its own features and no other, GDAL's ``ogrinfo`` declares the GeoPackage the service
reads and the served collection one type, and a layer set of one kind gets one collection.
"""

from __future__ import annotations

import json
import re
import subprocess
import warnings
from pathlib import Path

import geopandas as gpd
import pyogrio
import pytest
import shapely
import yaml

from esc_gis.errors import EscGisWarning, ProfileError
from esc_gis.profile import load_profile
from esc_gis.serve.config import WATERS_COLLECTIONS, ServiceSettings, prepare_service, split_waters

from .conftest import require_tool
from .service import CRS, ROOT, fill_registry, get, served

BOUNDARY = ROOT / "layers" / "winneconne" / "village_boundary.gpkg"
#: Inside the Village, in WISCRS Winnebago feet (the service tests' sites lie here too).
X, Y = 744_700.0, 503_200.0


def _line(dx: float) -> shapely.LineString:
    return shapely.LineString([(X + dx, Y), (X + dx, Y + 400)])


def _box(dx: float) -> shapely.Polygon:
    return shapely.box(X + dx, Y + 1000, X + dx + 200, Y + 1200)


#: Two of each kind, single and multi: what a county's hydrography layer holds.
MIXED = gpd.GeoDataFrame(
    {
        "water_class": ["perennial_stream", "intermittent_stream", "lake", "wetland_highly_susceptible"],
        "name": ["Line Creek", "Two-Arm Creek", "Square Pond", "Twin Marsh"],
    },
    geometry=[
        _line(0),
        shapely.MultiLineString([_line(300), _line(600)]),
        _box(0),
        shapely.MultiPolygon([_box(400), _box(800)]),
    ],
    crs=CRS,
)


def _layer_set(folder: Path, waters: gpd.GeoDataFrame) -> Path:
    folder.mkdir(parents=True)
    waters.to_file(folder / "waters.gpkg", engine="pyogrio")
    manifest = folder / "layers.toml"
    manifest.write_text(
        f'crs = "{CRS}"\n[jurisdiction]\npath = "{BOUNDARY.as_posix()}"\n'
        '[waters]\npath = "waters.gpkg"\nclass_field = "water_class"\nname_field = "name"\n'
    )
    return manifest


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reg = tmp_path_factory.mktemp("waters") / "permits.gpkg"
    fill_registry(str(reg), n=1)
    return reg


def _ogrinfo(*args: str) -> str:
    r = subprocess.run([require_tool("ogrinfo", "gdal-bin"), *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Warning" not in r.stderr, r.stderr
    return r.stdout


def _declared(gpkg: Path) -> dict[str, str]:
    """``ogrinfo``'s layer list of a GeoPackage: layer name -> declared geometry type (the last brackets:
    a layer ogr2ogr copied from the service has its title in brackets before them)."""
    listing = _ogrinfo("-ro", "-q", str(gpkg))
    return dict(re.findall(r"^\d+: (\w+) .*?\(([^()]+)\)$", listing, flags=re.MULTILINE))


def test_split_waters_puts_each_kind_in_its_collection_single_and_multi_together() -> None:
    parts = dict(split_waters(MIXED))
    assert list(parts) == ["waters_lines", "waters_polygons"]
    assert list(parts["waters_lines"]["name"]) == ["Line Creek", "Two-Arm Creek"]
    assert list(parts["waters_polygons"]["name"]) == ["Square Pond", "Twin Marsh"]
    assert [name for name, _ in split_waters(MIXED.iloc[2:])] == ["waters_polygons"]
    assert [name for name, _ in split_waters(MIXED.iloc[:2])] == ["waters_lines"]
    assert split_waters(MIXED.iloc[:0]) == []


def test_prepare_service_writes_two_collections_of_one_declared_type_each(registry: Path, tmp_path: Path) -> None:
    manifest = _layer_set(tmp_path / "set", MIXED)
    state = tmp_path / "state"
    for _ in range(2):  # a restart writes the same
        files = prepare_service(ServiceSettings(registry=str(registry), state_dir=state, layers=manifest))
        conf = yaml.safe_load(files.config.read_text())
        assert "waters" not in conf["resources"]
        assert {"waters_lines", "waters_polygons"} <= set(conf["resources"])
        assert conf["resources"]["waters_lines"]["providers"][0]["table"] == "waters_lines"
        assert conf["resources"]["waters_lines"]["title"] == "Waters of the state: streams and channels (lines)"
        assert conf["resources"]["waters_polygons"]["title"].startswith("Waters of the state: lakes")
        page = [n["name"] for n in files.page_settings["layers"]]
        assert page[:3] == ["jurisdiction", "waters_lines", "waters_polygons"]
        # GDAL declares each one type: single and multi of a kind are written as the multi type.
        declared = _declared(files.layers_gpkg)
        assert declared["waters_lines"] == "Multi Line String"
        assert declared["waters_polygons"] == "Multi Polygon"
        lines = pyogrio.read_dataframe(files.layers_gpkg, layer="waters_lines")
        polygons = pyogrio.read_dataframe(files.layers_gpkg, layer="waters_polygons")
        assert list(lines["water_name"]) == ["Line Creek", "Two-Arm Creek"]
        assert list(polygons["water_name"]) == ["Square Pond", "Twin Marsh"]
        assert set(lines.geom_type) == {"MultiLineString"} and set(polygons.geom_type) == {"MultiPolygon"}
        # The parts are the layer's own: the Two-Arm Creek keeps both its arms.
        assert len(lines.geometry.iloc[1].geoms) == 2 and len(polygons.geometry.iloc[1].geoms) == 2


@pytest.mark.parametrize(
    ("rows", "present", "absent"),
    [(slice(2, 4), "waters_polygons", "waters_lines"), (slice(0, 2), "waters_lines", "waters_polygons")],
    ids=["polygons only", "lines only"],
)
def test_a_layer_set_of_one_kind_gets_that_one_collection(registry, tmp_path, rows, present, absent) -> None:
    manifest = _layer_set(tmp_path / "set", MIXED.iloc[rows])
    files = prepare_service(ServiceSettings(registry=str(registry), state_dir=tmp_path / "state", layers=manifest))
    conf = yaml.safe_load(files.config.read_text())
    assert present in conf["resources"] and absent not in conf["resources"]
    assert absent not in [n["name"] for n in files.page_settings["layers"]]
    assert present in _declared(files.layers_gpkg) and absent not in _declared(files.layers_gpkg)


def test_the_served_collections_hold_one_geometry_type_and_gdal_declares_it(registry: Path, tmp_path: Path) -> None:
    manifest = _layer_set(tmp_path / "set", MIXED)
    with served(str(registry), layers=manifest) as base:
        listed = {c["id"] for c in json.loads(get(f"{base}/ogc/collections?f=json")[2])["collections"]}
        assert {"waters_lines", "waters_polygons"} <= listed and "waters" not in listed
        assert get(f"{base}/ogc/collections/waters/items?f=json")[0] == 404
        for name, kind, names in (
            ("waters_lines", "MultiLineString", {"Line Creek", "Two-Arm Creek"}),
            ("waters_polygons", "MultiPolygon", {"Square Pond", "Twin Marsh"}),
        ):
            status, _, body = get(f"{base}/ogc/collections/{name}/items?f=json")
            assert status == 200
            features = json.loads(body)["features"]
            assert {f["geometry"]["type"] for f in features} == {kind}, name
            assert {f["properties"]["water_name"] for f in features} == names
            info = _ogrinfo("-ro", "-so", f"OAPIF:{base}/ogc", name)
            assert f"Geometry: {kind.replace('Multi', 'Multi ').replace('LineString', 'Line String')}\n" in info
            assert "Unknown" not in info
        # As the service page says: ogr2ogr copies both collections, one layer of one type each.
        copy = tmp_path / "waters.gpkg"
        r = subprocess.run(
            [require_tool("ogr2ogr", "gdal-bin"), "-f", "GPKG", str(copy), f"OAPIF:{base}/ogc", *WATERS_COLLECTIONS],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
    assert _declared(copy) == {"waters_lines": "Multi Line String", "waters_polygons": "Multi Polygon"}


def _profile_with(tmp_path: Path, section: str) -> Path:
    """The Village's profile with its two waters findings replaced by ``section`` (TOML text)."""
    text = (ROOT / "src" / "esc_gis" / "profiles" / "winneconne.toml").read_text(encoding="utf-8")
    start = text.index("[findings.service_layer_waters_lines]")
    end = text.index("[findings.service_layer_protective_areas]")
    path = tmp_path / "older.toml"
    path.write_text(text[:start] + section + "\n" + text[end:], encoding="utf-8")
    return path


OLD_SECTION = """[findings.service_layer_waters]
title = "Our waters"
section = "§ 1-5"
basis = "ordinance"
message = "Lakes and streams."
"""


def test_a_profile_with_the_old_waters_finding_loads_for_one_release_with_a_warning(tmp_path: Path) -> None:
    path = _profile_with(tmp_path, OLD_SECTION)
    with pytest.warns(EscGisWarning, match=r"service_layer_waters\].*Fix: add \[findings.service_layer_waters_lines\]"):
        prof = load_profile(path)
    for code in ("service_layer_waters_lines", "service_layer_waters_polygons"):
        assert (prof.template(code).title, prof.finding(code).section) == ("Our waters", "§ 1-5")
    assert "service_layer_waters" not in prof.findings


def test_a_profile_with_the_new_waters_findings_loads_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prof = load_profile()
    assert "service_layer_waters" not in prof.findings


def test_a_profile_with_neither_is_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as err:
        load_profile(_profile_with(tmp_path, ""))
    assert "[findings.service_layer_waters_lines]" in str(err.value)
    assert "[findings.service_layer_waters_polygons]" in str(err.value)
