"""The CRS checks pinned at their edges (issue 46 item 9): compound CRSs, custom CRSs, oblique grids, margins.

An independent mutation run over ``crs.py`` found these decisions unpinned: a compound CRS
(a county grid plus NAVD88 heights) judged by nothing, a custom CRS without an area of use,
oblique Mercator grids, and the refusal and warning distances (500 km, 50 km) that no test
held at their values. Every distance here is measured independently, with pyproj's
``Geod`` on the WGS 84 ellipsoid, from the area of use EPSG publishes for the CRS.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import geopandas as gpd
import numpy as np
import pytest
import shapely
from click.testing import CliRunner
from pyproj import CRS as ProjCRS
from pyproj import Geod, Transformer

from esc_gis import crs as crs_mod
from esc_gis.cli.main import cli
from esc_gis.crs import (
    AREA_MARGIN_KM,
    ZONE_REACH_KM,
    coordinates_problem,
    coordinates_refusal,
    measuring_crs,
    warn_if_far_from_zone,
    zone_distance_km,
)
from esc_gis.errors import CoordinatesNotInCRSError, CRSError, FarFromZoneWarning
from esc_gis.io import read_layer
from esc_gis.measure.area import area_sqft

from .conftest import CRS, box

REFUSED = "has coordinates that cannot be in its CRS"
GEOD = Geod(ellps="WGS84")
#: EPSG:7594's area of use as EPSG publishes it: Calumet, Fond du Lac, Outagamie and Winnebago counties.
WEST, SOUTH, EAST, NORTH = -88.89, 43.54, -88.04, 44.6
MID_LON, MID_LAT = (WEST + EAST) / 2, (SOUTH + NORTH) / 2
COMPOUND = "EPSG:7594+5703"  # the county grid plus NAVD88 heights, as a surveyor's CAD export labels it


def run(*args: object):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in r.output, r.output
    return r


def _point_km_out(direction: str, km: float) -> tuple[float, float]:
    """Return (lon, lat) ``km`` outside EPSG:7594's area of use, straight out of one side.

    South and north: along the middle meridian (a meridian is a geodesic). West and east:
    on the middle parallel, the longitude found by bisection so that the geodesic distance to
    the side's corner on that parallel is ``km``.
    """
    if direction in ("south", "north"):
        lat0, az = (SOUTH, 180.0) if direction == "south" else (NORTH, 0.0)
        lon, lat, _ = GEOD.fwd(MID_LON, lat0, az, km * 1000.0)
        return lon, lat
    edge, sign = (WEST, -1.0) if direction == "west" else (EAST, 1.0)
    lo, hi = 0.0, 20.0
    for _ in range(80):
        mid = (lo + hi) / 2
        _, _, d = GEOD.inv(edge, MID_LAT, edge + sign * mid, MID_LAT)
        lo, hi = (mid, hi) if d < km * 1000.0 else (lo, mid)
    return edge + sign * lo, MID_LAT


def _feet_bounds(lon: float, lat: float, crs: str = CRS) -> tuple[float, float, float, float]:
    """A 2 x 2 ft box around (lon, lat), in ``crs``'s grid."""
    x, y = Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(lon, lat)
    return (x - 1, y - 1, x + 1, y + 1)


# --- the margins, at their values ----------------------------------------------------------------


def test_the_margins_are_500_km_and_50_km():
    """The refusal's margin is the width of Wisconsin; the warning's a county zone's reach (their docs say why)."""
    assert AREA_MARGIN_KM == 500.0
    assert ZONE_REACH_KM == 50.0


@pytest.mark.parametrize("direction", ["south", "north", "west", "east"])
@pytest.mark.parametrize(("km", "refused"), [(499.0, False), (501.0, True)])
def test_projected_data_are_refused_past_500_km_out_of_each_side(direction, km, refused):
    """Feet of the county grid 499 km outside its area pass; 501 km are refused, whichever side they lie."""
    bounds = _feet_bounds(*_point_km_out(direction, km))
    problem = coordinates_problem(bounds, CRS)
    assert (problem is not None) is refused
    if refused:
        assert problem[0].startswith(f"they lie {km:,.0f} km (")


@pytest.mark.parametrize(("km", "warned"), [(49.5, False), (50.5, True)])
def test_the_far_from_zone_warning_starts_past_50_km(km, warned):
    """Sites in degrees 49.5 km south of the county grid's area are measured quietly; 50.5 km draw the warning."""
    lon, lat = _point_km_out("south", km)
    bounds = (lon - 1e-5, lat - 1e-5, lon + 1e-5, lat + 1e-5)
    assert zone_distance_km(bounds, "EPSG:4326", ProjCRS(CRS)) == pytest.approx(km, abs=0.01)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_far_from_zone(bounds, "EPSG:4326", ProjCRS(CRS), what="Sites s.gpkg")
    far = [w for w in caught if issubclass(w.category, FarFromZoneWarning)]
    assert bool(far) is warned
    if warned:
        assert str(far[0].message).startswith(f"Sites s.gpkg lies {km:,.0f} km")


def _own_bbox_crs(south: float) -> str:
    """EPSG:7594's WKT with its area of use moved: every longitude, from latitude ``south`` to 89."""
    wkt = ProjCRS(CRS).to_wkt()
    return re.sub(r"BBOX\[[^\]]*\]", f"BBOX[{south},-180,89,180]", wkt)


@pytest.mark.parametrize(("km", "refused"), [(49.5, False), (50.5, True)])
def test_degrees_under_a_projected_label_are_refused_past_50_km(km, refused):
    """Numbers that all fit as degrees (|x| <= 180, |y| <= 90) under a grid's label land near its false origin:
    refused past 50 km, not 500 (the degrees test's tighter margin)."""
    x0, y0, x1, y1 = -88.0, 44.0, -87.99, 44.01
    to_lonlat = Transformer.from_crs(CRS, "EPSG:4326", always_xy=True)
    lon, lat = to_lonlat.transform(x0, y1)  # near the grid's false origin, south-west of the county
    north_lat = max(to_lonlat.transform(x, y)[1] for x in (x0, x1) for y in (y0, y1))
    _, south, _ = GEOD.fwd(lon, north_lat, 0.0, km * 1000.0)
    problem = coordinates_problem((x0, y0, x1, y1), _own_bbox_crs(south))
    assert (problem is not None) is refused
    if refused:
        assert "labelled with a projected CRS" in problem[1]
    assert lat <= north_lat


# --- a compound CRS is judged by its horizontal part ---------------------------------------------


@pytest.mark.parametrize(("km", "refused"), [(499.0, False), (501.0, True)])
def test_a_compound_crs_is_judged_by_its_grid(km, refused):
    """EPSG:7594+5703: the county grid with NAVD88 heights. Its grid's area and margin judge it."""
    bounds = _feet_bounds(*_point_km_out("south", km))
    assert (coordinates_problem(bounds, COMPOUND) is not None) is refused


def test_degrees_off_the_globe_under_a_compound_label_are_refused():
    """EPSG:4326+5703: longitude/latitude with heights holds no 744,700 "degrees"."""
    problem = coordinates_problem((744_700.0, 503_200.0, 744_800.0, 503_300.0), "EPSG:4326+5703")
    assert problem is not None and problem[0].startswith("they are off the globe")
    assert coordinates_problem((-88.8, 44.1, -88.7, 44.2), "EPSG:4326+5703") is None
    # Latitude beyond 90 that swapped is on the globe: the question is asked there too.
    text = coordinates_refusal((44.1, -88.8, 44.2, 100.0), "EPSG:4326+5703", what="x")
    assert text is not None and "Did you swap them?" in text


def _write(path: Path, geoms: list, crs: str) -> Path:
    gpd.GeoDataFrame({"site_id": [f"S{i}" for i in range(1, len(geoms) + 1)]}, geometry=geoms, crs=crs).to_file(path)
    return path


def test_screen_refuses_a_compound_layer_629_km_out_and_screens_it_in_place(tmp_path, layers_path):
    """The grid's feet moved 629 km east (feet read as metres would do it): exit 1, nothing written, and the
    message names the CRS by its codes, not a page of WKT."""
    far = shapely.affinity.translate(box(100, 100, 300, 300), xoff=629_000 / 0.3048006096)
    src = _write(tmp_path / "far.gpkg", [far], COMPOUND)
    out = tmp_path / "out.gpkg"
    r = run("screen", src, "--layers", layers_path, "-o", out)
    text = " ".join(r.output.split())
    assert r.exit_code == 1, r.output
    assert f"{REFUSED} {COMPOUND}: they lie " in text and "COMPD_CS" not in text
    assert not out.exists()
    # The same lot where it is: read, measured in the grid, and screened.
    here = _write(tmp_path / "here.gpkg", [box(100, 100, 300, 300)], COMPOUND)
    assert read_layer(here).crs.is_compound
    r = run("screen", here, "--layers", layers_path, "-o", out, "-q")
    assert r.exit_code == 0, r.output
    got = gpd.read_file(out, layer="screening")
    assert got["disturbed_sqft"].iloc[0] == pytest.approx(200 * 200 * (1200 / 3937 / 0.3048) ** 2, rel=1e-6)


def test_degrees_off_the_globe_in_a_compound_file_are_refused_by_every_reader(tmp_path, layers_path):
    src = _write(tmp_path / "deg.gpkg", [box(100, 100, 300, 300)], "EPSG:4326+5703")
    with pytest.raises(CoordinatesNotInCRSError, match="off the globe"):
        read_layer(src)
    r = run("screen", src, "--layers", layers_path, "--batch-rows", "1", "-o", tmp_path / "o.gpkg")
    assert r.exit_code == 1 and "off the globe" in " ".join(r.output.split()), r.output


def test_a_compound_measuring_crs_measures_in_its_grid_and_a_mercator_grid_with_heights_is_refused():
    got = measuring_crs(COMPOUND)
    assert got.to_epsg() == 7594 and not got.is_compound
    with pytest.raises(CRSError, match="Mercator"):
        measuring_crs("EPSG:3857+5703")
    with pytest.raises(CRSError, match="not projected"):
        measuring_crs("EPSG:4326+5703")
    # The zone check judges a compound measuring CRS by its grid's area, too (it judged nothing).
    utah = (-113.2, 37.1, -112.8, 37.5)
    assert zone_distance_km(utah, "EPSG:4326", ProjCRS(COMPOUND)) == pytest.approx(
        zone_distance_km(utah, "EPSG:4326", ProjCRS(CRS))
    )
    assert zone_distance_km(utah, "EPSG:4326", ProjCRS(COMPOUND)) > 2000


# --- a custom CRS: passes where nothing can be judged, checked where something can ----------------

CUSTOM_TM = (
    "+proj=tmerc +lat_0=42.7197 +lon_0=-88.5 +k=1.0000286569 +x_0=244754.8895 +y_0=0.0049 "
    "+ellps=GRS80 +units=us-ft +no_defs"
)


def test_a_proj_string_crs_with_no_area_of_use_passes_every_reader_without_a_crash(tmp_path, layers_path):
    """A PROJ string (EPSG:7594's grid without its code) declares no area: its data cannot be judged, and pass."""
    assert ProjCRS(CUSTOM_TM).area_of_use is None
    lot = gpd.GeoSeries([box(100, 100, 300, 300)], crs=CRS).to_crs(CUSTOM_TM)
    src = tmp_path / "custom.gpkg"
    gpd.GeoDataFrame({"site_id": ["S1"]}, geometry=lot.to_numpy(), crs=CUSTOM_TM).to_file(src)
    assert read_layer(src).crs.area_of_use is None
    assert run("screen", src, "--layers", layers_path, "-o", tmp_path / "o.gpkg", "-q").exit_code == 0
    assert (
        run("screen", src, "--layers", layers_path, "--batch-rows", "1", "-o", tmp_path / "b.gpkg", "-q").exit_code == 0
    )
    # Far away it is still not judged (no area to judge by), and nothing crashes.
    far = (10_000_000.0, 10_000_000.0, 10_000_010.0, 10_000_010.0)
    assert coordinates_problem(far, CUSTOM_TM) is None
    assert zone_distance_km(far, "EPSG:7594", ProjCRS(CUSTOM_TM)) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", FarFromZoneWarning)
        assert warn_if_far_from_zone(far, "EPSG:7594", ProjCRS(CUSTOM_TM), what="x") is None


def test_a_wkt_without_a_bbox_is_judged_by_its_code():
    """USAGE names the area but gives no BBOX: pyproj's placeholder box (-1000, ...) put data NaN km away, and
    they passed. The WKT's ID still names EPSG:7594, whose area judges it."""
    wkt = re.sub(r",\s*BBOX\[[^\]]*\]", "", ProjCRS(CRS).to_wkt())
    assert ProjCRS(wkt).area_of_use.west == -1000.0
    assert coordinates_problem(_feet_bounds(*_point_km_out("south", 501.0)), wkt) is not None
    assert coordinates_problem(_feet_bounds(*_point_km_out("south", 499.0)), wkt) is None
    # Without its ID as well, nothing names an area: it passes.
    bare = re.sub(r',\s*ID\["EPSG",7594\]\]$', "]", wkt)
    assert coordinates_problem((1e9, 1e9, 1e9 + 1, 1e9 + 1), bare) is None


def test_an_area_of_use_without_a_name_is_named_in_words(monkeypatch):
    """A BBOX with no AREA name (pyproj gives None or 'undefined'): the refusal still words itself."""
    for name in (None, "undefined"):
        aou = SimpleNamespace(west=WEST, south=SOUTH, east=EAST, north=NORTH, name=name)
        monkeypatch.setattr(crs_mod, "_area_of_use", lambda _c, a=aou: a)
        problem = coordinates_problem(_feet_bounds(*_point_km_out("south", 501.0)), CRS)
        assert problem is not None and "(its area of use; x from" in problem[0]
        with pytest.warns(FarFromZoneWarning, match=r"is made for \(its area of use\)"):
            warn_if_far_from_zone((-113.2, 37.1, -112.8, 37.5), "EPSG:4326", ProjCRS(CRS), what="x")


# --- oblique Mercator grids measure right; normal Mercator is refused -----------------------------


@pytest.mark.parametrize(
    ("code", "lon", "lat"),
    [
        ("EPSG:3078", -84.55, 42.73),  # NAD83 / Michigan Oblique Mercator, at Lansing
        ("EPSG:26931", -134.42, 58.30),  # NAD83 / Alaska zone 1 (Hotine oblique Mercator), at Juneau
        ("EPSG:2056", 7.44, 46.95),  # CH1903+ / LV95 (Hotine variant B), at Bern
    ],
)
def test_oblique_mercator_grids_are_accepted_and_measure_true_area(code, lon, lat):
    """A conformal oblique grid's scale is within 0.1 % of true near its centre line, as a transverse one's:
    a 200 x 200 m lot measures its geodesic area within 0.2 %."""
    crs = measuring_crs(code)
    assert "oblique" in crs.coordinate_operation.method_name.lower()
    ring = [(lon, lat)]
    for az in (90.0, 0.0, 270.0):
        nxt = GEOD.fwd(*ring[-1], az, 200.0)
        ring.append((nxt[0], nxt[1]))
    lot = shapely.Polygon(ring)
    true_sqft = abs(GEOD.geometry_area_perimeter(lot)[0]) / 0.3048**2
    projected = gpd.GeoSeries([lot], crs="EPSG:4326").to_crs(crs).to_numpy()
    assert area_sqft(projected, crs)[0] == pytest.approx(true_sqft, rel=2e-3)


@pytest.mark.parametrize("code", ["EPSG:3857", "EPSG:3395", "EPSG:3994"])
def test_normal_mercator_is_still_refused_and_would_read_far_too_large(code):
    """Web Mercator (and Mercator variants A and B) inflate area by 1/cos(lat)^2: about 1.93x at 44 deg N."""
    with pytest.raises(CRSError, match="Mercator projection"):
        measuring_crs(code)
    lot = gpd.GeoSeries([box(100, 100, 300, 300)], crs=CRS)
    inflated = lot.to_crs("EPSG:3857").area.iloc[0] / 0.3048**2
    assert inflated / (200 * 200) == pytest.approx(1 / np.cos(np.radians(44.1)) ** 2, rel=1e-2)


# --- How a CRS and its area are named in a refusal (issue 46's mutation run) -----------------------------


def _custom_wkt(code: str, version: str) -> str:
    """``code``'s WKT renamed and moved just enough that no EPSG code matches it, led by spaces as files may be."""
    w = ProjCRS(code).to_wkt(version)
    w = w.replace("NAD83(HARN) / Wisconsin Transverse Mercator", "My Grid").replace("520000", "520123")
    w = re.sub(r'(GEOGC(?:S|RS))\["WGS 84"', r'\1["My Geo"', w).replace("298.257223563", "298.25")
    return "  " + w.replace('ID["EPSG",4326]', "").replace('AUTHORITY["EPSG","4326"]', "")


@pytest.mark.parametrize(
    "code, version, label",
    [
        ("EPSG:3071", "WKT1_GDAL", "My Grid"),  # PROJCS
        ("EPSG:3071", "WKT2_2019", "My Grid"),  # PROJCRS
        ("EPSG:4326", "WKT1_GDAL", "My Geo"),  # GEOGCS
        ("EPSG:4326", "WKT2_2019", "My Geo"),  # GEOGCRS
    ],
)
def test_a_crs_without_a_code_is_named_by_its_name_never_a_page_of_wkt(code: str, version: str, label: str) -> None:
    crs = ProjCRS(_custom_wkt(code, version))
    assert crs.to_string().startswith("  ") and crs_mod._crs_label(crs) == label


@pytest.mark.parametrize("version", ["WKT1_GDAL", "WKT2_2019"])  # COMPD_CS, COMPOUNDCRS
def test_a_compound_crs_given_as_wkt_is_named_by_its_codes(version: str) -> None:
    wkt = ProjCRS(COMPOUND).to_wkt(version)
    assert crs_mod._crs_label(ProjCRS(wkt)) == "EPSG:7594+5703"
    assert crs_mod._crs_label(ProjCRS("EPSG:3071")) == "EPSG:3071"  # a code is its own label


@pytest.mark.parametrize(
    "name, said",
    [
        ("Wisconsin - Winnebago County.", "Wisconsin - Winnebago County"),
        (" .Lake Poygan area. ", ".Lake Poygan area"),
        ("Zone X.", "Zone X"),  # only full stops come off the end
        ("undefined", "its area of use"),
        ("UNDEFINED", "its area of use"),
        ("", "its area of use"),
        (None, "its area of use"),
    ],
)
def test_an_area_of_use_is_named_without_its_full_stop_or_as_its_area_when_unnamed(name, said) -> None:
    assert crs_mod._area_name(SimpleNamespace(name=name)) == said
    assert crs_mod._area_name(None) == "its area of use"


def test_the_refusal_asks_about_swapped_axes_only_when_a_swap_would_place_them() -> None:
    args = ("sites.gpkg", "EPSG:4326", ("y 120 is beyond the pole", "Latitudes lie within ±90"))
    plain = crs_mod.coordinates_not_in_crs_message(*args, fix="Label it right.")
    assert plain == (
        "sites.gpkg has coordinates that cannot be in its CRS EPSG:4326: y 120 is beyond the pole. "
        "Latitudes lie within ±90 Fix: Label it right."
    )
    swapped = crs_mod.coordinates_not_in_crs_message(*args, fix="Label it right.", swapped=True)
    assert swapped == plain.replace(" Fix:", f" {crs_mod._SWAP} Fix:")


def test_a_layer_without_a_crs_is_refused_naming_the_file_and_the_fix_and_an_assumed_one_is_checked() -> None:
    no_crs = gpd.GeoDataFrame({"site_id": ["a"]}, geometry=[box(0, 0, 10, 10)])
    with pytest.raises(CRSError) as err:
        crs_mod.assign_crs(no_crs, assume_crs=None, source="sites.shp")
    assert str(err.value) == (
        "sites.shp has no coordinate reference system (no .prj or CRS in the file), so its coordinates cannot be "
        'placed on the ground. Fix: tell esc-gis what they are with assume_crs="EPSG:XXXX" (e.g. EPSG:7594 for '
        "Winnebago County feet, EPSG:4326 for longitude/latitude), or define the CRS in your GIS and export again."
    )
    with pytest.raises(CRSError, match=r"^assume_crs= 'EPSG:NOPE' is not a coordinate reference system"):
        crs_mod.assign_crs(no_crs, assume_crs="EPSG:NOPE", source="sites.shp")
    # Feet near the Village read as degrees: refused, naming the file (not the option).
    feet = gpd.GeoDataFrame({"site_id": ["a"]}, geometry=[box(745_000, 505_000, 745_100, 505_100)])
    with pytest.raises(CoordinatesNotInCRSError, match=r"^sites\.shp has coordinates that cannot be in its CRS"):
        crs_mod.assign_crs(feet, assume_crs="EPSG:4326", source="sites.shp")
    assert crs_mod.assign_crs(feet, assume_crs="EPSG:7594", source="sites.shp").crs == ProjCRS("EPSG:7594")


def test_a_layer_is_transformed_into_the_measuring_crs_only_when_it_is_not_there_already() -> None:
    no_crs = gpd.GeoDataFrame({"site_id": ["a"]}, geometry=[box(0, 0, 10, 10)])
    with pytest.raises(CRSError) as err:
        crs_mod.to_measuring_crs(no_crs, ProjCRS("EPSG:7594"))
    assert str(err.value) == "Layer has no CRS; assign one with assign_crs(..., assume_crs=...) before measuring."
    there = no_crs.set_crs("EPSG:7594")
    assert crs_mod.to_measuring_crs(there, ProjCRS("EPSG:7594")) is there
    moved = crs_mod.to_measuring_crs(there, ProjCRS("EPSG:3071"))
    assert moved.crs == ProjCRS("EPSG:3071") and not moved.geometry.iloc[0].equals(there.geometry.iloc[0])


@pytest.mark.parametrize("km, warned", [(ZONE_REACH_KM, False), (np.nextafter(ZONE_REACH_KM, np.inf), True)])
def test_far_from_the_zone_is_said_beyond_its_reach_in_km_and_miles(monkeypatch, km, warned) -> None:
    monkeypatch.setattr(crs_mod, "zone_distance_km", lambda *a: km)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert crs_mod.warn_if_far_from_zone((0, 0, 1, 1), "EPSG:7594", ProjCRS("EPSG:7594"), what="DEM dem.tif") == km
    assert len(seen) == int(warned)


def test_far_from_the_zone_names_the_distance_the_crs_its_area_and_the_fix(monkeypatch) -> None:
    monkeypatch.setattr(crs_mod, "zone_distance_km", lambda *a: 160.9344)  # 100 miles
    grid = ProjCRS("EPSG:7594")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        crs_mod.warn_if_far_from_zone((0, 0, 1, 1), "EPSG:7594", grid, what="DEM dem.tif")
    (w,) = seen
    # Pointed at the caller, not at crs.py (under mutmut a trampoline frame sits between the two).
    assert w.category is FarFromZoneWarning and not w.filename.endswith("crs.py")
    area = crs_mod._area_name(grid.area_of_use)
    assert str(w.message) == (
        f"DEM dem.tif lies 161 km (100 mi) outside the area the measuring CRS {grid.name} is made for ({area}): "
        "areas and distances measured there are distorted, and the data are probably not of this place. Fix: use a "
        "layer set (crs = ...) and profile for the data's area, or check that this is the right file and that its "
        "CRS is right."
    )
    monkeypatch.setattr(crs_mod, "_area_of_use", lambda crs: None)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        crs_mod.warn_if_far_from_zone((0, 0, 1, 1), "EPSG:7594", grid, what="DEM dem.tif")
    assert f"{grid.name} is made for (its zone):" in str(seen[0].message)


def test_coordinates_refused_name_the_input_and_its_fix() -> None:
    with pytest.raises(CoordinatesNotInCRSError) as err:
        crs_mod.check_coordinates((745_000, 505_000, 745_100, 505_100), "EPSG:4326", what="x.gpkg", fix="Relabel it.")
    text = str(err.value)
    assert text.startswith("x.gpkg has coordinates that cannot be in its CRS EPSG:4326") and text.endswith(
        "Fix: Relabel it."
    )


def test_a_crs_named_by_an_alias_of_its_code_is_named_by_the_code_and_one_renamed_by_its_name() -> None:
    """PROJ matches a CRS to an EPSG code with a confidence: 90 where it differs only by an alias of the name
    (an ESRI export's), 70 where the name is another: the first is that code, the second is the user's own."""
    wkt = re.sub(r',\s*ID\["EPSG",3071\]', "", ProjCRS("EPSG:3071").to_wkt("WKT2_2019"))
    esri = ProjCRS(" " + wkt.replace("NAD83(HARN) / Wisconsin Transverse Mercator", "NAD_1983_HARN_Wisconsin_TM"))
    assert [a.confidence for a in esri.list_authority()] == [90]
    assert crs_mod._crs_label(esri) == "EPSG:3071"
    own = ProjCRS(" " + wkt.replace("NAD83(HARN) / Wisconsin Transverse Mercator", "Village grid"))
    assert crs_mod._crs_label(own) == "Village grid"


# --- The survivors of the second mutation run over crs.py, pinned at their edges. ---------------------------------


def test_a_name_that_is_no_crs_is_refused_as_a_crs_and_as_the_measuring_crs_when_it_is_that() -> None:
    with pytest.raises(CRSError) as err:
        crs_mod.parse_crs("EPSG:NOPE")
    assert str(err.value) == "CRS 'EPSG:NOPE' is not a coordinate reference system; use e.g. 'EPSG:7594'."
    with pytest.raises(CRSError) as err:
        measuring_crs("EPSG:NOPE")
    assert str(err.value) == "Measuring CRS 'EPSG:NOPE' is not a coordinate reference system; use e.g. 'EPSG:7594'."


def test_a_measuring_crs_in_degrees_is_refused_by_its_name_and_with_the_fix() -> None:
    """A compound CRS is named whole (its code with the heights'), not by its horizontal part alone."""
    expected = (
        "{} is not projected: areas and distances are never measured in degrees. "
        "Use a projected CRS in feet, e.g. EPSG:7594 (WISCRS Winnebago County, ftUS)."
    )
    for name in ("EPSG:4326", "EPSG:4326+5703"):
        with pytest.raises(CRSError) as err:
            measuring_crs(name)
        assert str(err.value) == expected.format(name)


def test_a_mercator_measuring_crs_is_refused_by_its_whole_name_and_method() -> None:
    with pytest.raises(CRSError) as err:
        measuring_crs("EPSG:3857+5703")
    assert str(err.value) == (
        "EPSG:3857+5703 is a Mercator projection (popular visualisation pseudo mercator): it misstates area (Web "
        "Mercator reads about 1.94x large at 44° N). Use EPSG:7594 or another local CRS."
    )


def test_a_measuring_crs_with_two_axis_units_is_refused_with_the_units_message() -> None:
    """Easting in metres, northing in US survey feet: no single linear unit (the units module words it)."""
    wkt = ProjCRS("EPSG:3071").to_wkt("WKT2_2019")
    at = wkt.rfind('LENGTHUNIT["metre",1]')  # the northing axis's unit, the last one in the WKT
    mixed = ProjCRS(wkt[:at] + 'LENGTHUNIT["US survey foot",0.304800609601219]' + wkt[at + 21 :])
    assert [a.unit_name for a in mixed.axis_info] == ["metre", "US survey foot"]
    with pytest.raises(CRSError) as err:
        measuring_crs(mixed)
    assert str(err.value) == (
        f"CRS {mixed.to_string()!r} has no single linear axis unit; measure in a projected CRS in feet or metres "
        "(the profile's measuring CRS, EPSG:7594 by default)."
    )


def test_a_projected_measuring_crs_that_declares_no_operation_is_judged_by_its_unit_alone() -> None:
    """pyproj may give a projected CRS no coordinate operation: nothing names Mercator, so its unit decides."""

    class NoOperation(ProjCRS):
        @property
        def coordinate_operation(self) -> None:  # pyproj's own property, overridden
            return None

    grid = NoOperation("EPSG:7594")
    assert measuring_crs(grid) is grid


@pytest.mark.parametrize(
    "west, south, east, north, usable",
    [
        (-180.0, -90.0, 180.0, 90.0, True),  # the whole globe, exactly at its edges
        (-88.9, 44.0, -88.9, 44.0, True),  # a point: south == north
        (-180.5, 40.0, -100.0, 45.0, False),  # a degree beyond the antimeridian
        (-100.0, 40.0, 180.5, 45.0, False),
        (-200.0, 40.0, -100.0, 45.0, False),  # off in longitude, fine in latitude
        (-100.0, 40.0, -90.0, 90.5, False),
        (-100.0, -90.5, -90.0, 40.0, False),
        (-100.0, 45.0, -90.0, 44.999, False),  # south above north
        (-1000.0, -1000.0, -1000.0, -1000.0, False),  # pyproj's placeholder for an area without a BBOX
    ],
)
def test_an_area_of_use_is_usable_only_as_a_box_on_the_globe(west, south, east, north, usable) -> None:
    aou = SimpleNamespace(west=west, south=south, east=east, north=north)
    assert (crs_mod._usable_area(aou) is aou) is usable


def test_a_renamed_crs_without_an_area_is_judged_by_the_area_of_the_code_it_matches_at_confidence_70() -> None:
    """PROJ matches WTM renamed ('Village grid', no ID, no USAGE) to EPSG:3071 at confidence 70: its area is WTM's."""
    wkt = re.sub(r',\s*ID\["EPSG",3071\]', "", ProjCRS("EPSG:3071").to_wkt("WKT2_2019"))
    wkt = re.sub(r",\s*USAGE\[.*\]\s*\]\s*$", "]", wkt, flags=re.S)  # the area of use, the WKT's last member
    own = ProjCRS(wkt.replace("NAD83(HARN) / Wisconsin Transverse Mercator", "Village grid"))
    assert own.area_of_use is None and [a.confidence for a in own.list_authority()] == [70]
    aou = crs_mod._area_of_use(own)
    assert aou is not None and aou.bounds == ProjCRS("EPSG:3071").area_of_use.bounds


def test_data_inside_the_area_of_use_are_0_km_away_and_bounds_that_cannot_be_placed_are_not_judged() -> None:
    grid = ProjCRS("EPSG:7594")
    assert zone_distance_km((-88.8, 44.1, -88.7, 44.2), "EPSG:4326", grid) == 0.0  # Winneconne
    assert zone_distance_km((-88.8, float("nan"), -88.7, 44.2), "EPSG:4326", grid) is None


def test_a_lonlat_box_follows_the_curved_edges_at_21_points_between_corners() -> None:
    """A UTM box 4000 km wide bows north along its top edge; its north is the highest of 23 points on that edge."""
    x0, y0, x1, y1 = -2e6, 3e6, 2e6, 7e6
    to_lonlat = Transformer.from_crs("EPSG:26916", "EPSG:4326", always_xy=True)
    _, lat = to_lonlat.transform(np.linspace(x0, x1, 23), np.full(23, y1))
    assert crs_mod._lonlat_box((x0, y0, x1, y1), ProjCRS("EPSG:26916"))[3] == lat.max()


@pytest.mark.parametrize("bounds", [(1.0, 2.0, 3.0), (0.0, 0.0, 500.0, float("nan")), (float("nan"), 0.0, 500.0, 10.0)])
def test_bounds_that_are_not_four_numbers_are_not_judged(bounds) -> None:
    """An empty layer's bounds are NaN: nothing to judge, even where one number is off the globe."""
    assert coordinates_problem(bounds, "EPSG:4326") is None
    assert coordinates_problem(bounds, "EPSG:7594") is None


@pytest.mark.parametrize(
    "bounds, refused",
    [
        ((170.0, 10.0, 180.0, 20.0), False),  # exactly at the antimeridian: on the globe
        ((-180.0, 10.0, -170.0, 20.0), False),
        ((170.0, 10.0, 180.5, 20.0), True),
        ((10.0, 80.0, 20.0, 90.0), False),  # exactly at the pole
        ((10.0, -90.0, 20.0, -80.0), False),
        ((10.0, 80.0, 20.0, 90.5), True),
    ],
)
def test_degrees_are_off_the_globe_only_beyond_180_and_90(bounds, refused) -> None:
    assert (coordinates_problem(bounds, "EPSG:4326") is not None) is refused


@pytest.mark.parametrize(
    "bounds, refused",
    [
        ((170.0, 80.0, 180.0, 90.0), True),  # fits as degrees (to the edge): refused beyond 50 km
        ((170.0, 80.0, 180.5, 90.0), False),  # not degrees: allowed to 500 km
        ((170.0, 80.0, 180.0, 90.5), False),
        ((0.0, 0.0, 100.0, 1_000_000.0), False),  # x fits as degrees, y does not: not degrees
    ],
)
def test_numbers_under_a_grid_are_taken_for_degrees_only_when_all_fit_as_degrees(bounds, refused) -> None:
    """Each of these lies about 210-232 km west of the WISCRS zone (near its false origin): between the two reaches."""
    km = zone_distance_km(bounds, "EPSG:7594", ProjCRS("EPSG:7594"))
    assert ZONE_REACH_KM < km < AREA_MARGIN_KM
    problem = coordinates_problem(bounds, "EPSG:7594")
    assert (problem is not None) is refused
    if refused:
        assert problem[1] == crs_mod._CAUSE_DEGREES


@pytest.mark.parametrize(
    "bounds, reach", [((170.0, 80.0, 180.0, 90.0), ZONE_REACH_KM), ((0, 0, 100, 1e6), AREA_MARGIN_KM)]
)
def test_numbers_under_a_grid_are_refused_only_beyond_the_reach(monkeypatch, bounds, reach) -> None:
    monkeypatch.setattr(crs_mod, "_box_km", lambda box, aou: reach)
    assert coordinates_problem(bounds, "EPSG:7594") is None
    monkeypatch.setattr(crs_mod, "_box_km", lambda box, aou: float(np.nextafter(reach, np.inf)))
    assert coordinates_problem(bounds, "EPSG:7594") is not None


def test_numbers_under_a_grid_are_refused_naming_km_miles_the_crs_its_area_and_the_numbers(monkeypatch) -> None:
    monkeypatch.setattr(crs_mod, "_box_km", lambda box, aou: 160.9344)  # 100 miles
    grid = ProjCRS("EPSG:7594")
    what, cause = coordinates_problem((170, 80, 180, 90), "EPSG:7594")
    assert what == (
        f"they lie 161 km (100 mi) outside the area {grid.name} is made for "
        "(United States (USA) - Wisconsin - counties of Calumet, Fond du Lac, Outagamie and Winnebago; "
        "x from 170 to 180, y from 80 to 90)"
    )
    assert cause == crs_mod._CAUSE_DEGREES


def test_grid_coordinates_swapped_are_refused_as_another_crs_without_asking_about_a_swap() -> None:
    """Winneconne in UTM 16N (362279 E, 4884935 N) given northing first: 4321 km off, and not degrees."""
    bounds = (4_884_934.5, 362_278.9, 4_885_034.5, 362_378.9)
    what, cause = coordinates_problem(bounds, "EPSG:26916")
    assert what.startswith("they lie 4,321 km (2,685 mi) outside the area NAD83 / UTM zone 16N is made for")
    assert cause == crs_mod._CAUSE_AREA
    assert coordinates_problem((bounds[1], bounds[0], bounds[3], bounds[2]), "EPSG:26916") is None
    text = coordinates_refusal(bounds, "EPSG:26916", what="utm.gpkg", fix="Relabel it.")
    assert text == (f"utm.gpkg has coordinates that cannot be in its CRS EPSG:26916: {what}. {cause} Fix: Relabel it.")
    assert crs_mod._SWAP not in text


def test_a_mercator_bound_to_wgs84_is_refused_as_any_mercator_and_a_bound_local_grid_is_not() -> None:
    """A PROJ string with +towgs84 makes a bound CRS, whose operation is the datum shift: its projection is
    judged, so a cylindrical Mercator that misstates area is refused however it is written."""
    with pytest.raises(CRSError, match=r"is a Mercator projection \(mercator"):
        measuring_crs("+proj=merc +ellps=GRS80 +towgs84=1,2,3 +units=m +type=crs")
    tm = "+proj=tmerc +lat_0=0 +lon_0=-90 +k=0.9996 +x_0=520000 +y_0=-4480000 +ellps=GRS80 +towgs84=0,0,0 +units=us-ft"
    assert measuring_crs(tm + " +type=crs").is_projected
