"""Land at 20 % or more: polygons, exact-coverage areas, and steep disturbed area in screening."""

from __future__ import annotations

import json

import geopandas as gpd
import numpy as np
import pytest
import shapely
from click.testing import CliRunner

from esc_gis import load_layers, load_profile, screen
from esc_gis.cli.main import cli
from esc_gis.terrain import steep_area, steep_polygons

from .conftest import CRS, X0, Y0, K, box, sites, write_dem, write_layer_set

# A DEM over local x 0..400, y 0..400 (5 ftUS cells): 30 % slope where x < 200, flat beyond.
N, CELL = 80, 5.0


def half_steep() -> np.ndarray:
    x = (np.arange(N) + 0.5) * CELL
    z = np.where(x < 200, 0.3 * x, 0.3 * 200)
    return np.tile(z, (N, 1)).astype(np.float32)


@pytest.fixture
def dem(tmp_path):
    return write_dem(tmp_path / "dem.tif", half_steep(), x0=X0, y0=Y0 + 400, units="US survey foot")


def test_steep_polygons_of_a_half_steep_dem(dem):
    gdf = steep_polygons(dem, crs=CRS)
    assert len(gdf) == 1 and gdf.crs.to_epsg() == 7594
    # Where: columns 1..39 and rows 1..78 of the DEM whose corner is (X0, Y0 + 400).
    assert gdf.total_bounds == pytest.approx([X0 + 5, Y0 + 5, X0 + 200, Y0 + 395])
    # Steep cells: columns 1..39 (column 0 is the nodata border, 40 mixes both sides: 15 %),
    # rows 1..78 -> 39 x 78 cells of 25 sq ftUS.
    assert gdf["area_sqft"].iloc[0] == pytest.approx(39 * 78 * 25 * K)
    assert steep_polygons(dem, crs=CRS, min_area_sqft=1e9).empty
    assert steep_polygons(dem, crs=CRS, threshold_pct=31).empty


def test_steep_area_uses_exact_coverage(dem):
    # A square straddling the break at x = 200, off the cell grid. Cells up to x = 200 are
    # steep (the last one, 195..200, sees 22.5 %); the next sees 7.5 %. Exact coverage counts
    # the partly covered cell at 150..155 by its covered fraction.
    geoms = np.array([box(152.5, 100, 252.5, 200), box(300, 300, 350, 350), box(380, 100, 480, 200)], dtype=object)
    sa = steep_area(geoms, shapely_crs(), dem)
    assert sa.steep_sqft[0] == pytest.approx((200 - 152.5) * 100 * K, rel=1e-9)
    assert sa.steep_sqft[1] == 0 and sa.uncovered_sqft[1] == pytest.approx(0, abs=1e-6)
    # Half of the third square is off the DEM (x > 400), and x 395..400 is the nodata border.
    assert sa.uncovered_sqft[2] == pytest.approx((480 - 395) * 100 * K, rel=1e-9)


def shapely_crs():
    from pyproj import CRS as P

    return P(CRS)


def test_steep_area_from_a_geographic_dem_matches_projected(tmp_path):
    # The same half-steep terrain sampled in EPSG:4326 gives the same steep area.
    from pyproj import Transformer

    to_geo = Transformer.from_crs(CRS, "EPSG:4326", always_xy=True)
    to_prj = Transformer.from_crs("EPSG:4326", CRS, always_xy=True)
    lon0, lat1 = to_geo.transform(X0 - 50, Y0 + 450)
    lon1, lat0 = to_geo.transform(X0 + 450, Y0 - 50)
    d = 0.000005
    lons = np.arange(lon0, lon1, d) + d / 2
    lats = np.arange(lat1, lat0, -d) - d / 2
    lon, lat = np.meshgrid(lons, lats)
    x, _ = to_prj.transform(lon, lat)
    xl = x - X0
    z = np.where(xl < 200, 0.3 * xl, 60.0).astype(np.float32)
    geo = write_dem(tmp_path / "geo.tif", z, crs="EPSG:4326", x0=lon0, y0=lat1, cell=d, units="US survey foot")
    geoms = np.array([box(100, 100, 300, 300)], dtype=object)
    got = steep_area(geoms, shapely_crs(), geo).steep_sqft[0]
    assert got == pytest.approx(100 * 200 * K, rel=0.02)  # cells of ~1.3 ft blur the break a little


def test_screen_measures_steep_disturbed_area(tmp_path, dem):
    manifest = write_layer_set(tmp_path / "l", extra=f'[dem]\npath = "{dem}"\nz_unit = "us_ft"\n')
    ls = load_layers(manifest, profile=load_profile())
    out = screen(
        sites(
            [
                {"site_id": "A", "geometry": box(152.5, 100, 252.5, 200)},
                {"site_id": "B", "geometry": box(300, 300, 350, 350)},
                {"site_id": "C", "geometry": box(380, 100, 480, 200)},
            ]
        ),
        layers=ls,
    ).set_index("site_id")
    assert out.loc["A", "steep_disturbed_sqft"] == pytest.approx(47.5 * 100 * K, rel=1e-9)
    assert out.loc["A", "steep_share"] == pytest.approx(0.475, rel=1e-9)
    f = {x["code"]: x for x in json.loads(out.loc["A", "findings"])}
    assert f["steep_slopes"]["section"] == "§ 540-7B(3)(c)[3]" and "47.5%" in f["steep_slopes"]["message"]
    # B (2,500 sq ft) needs no permit: § 540-7B(3)(c)[3] is not its duty, so no steep finding at all.
    assert out.loc["B", "steep_disturbed_sqft"] == 0 and "steep" not in out.loc["B", "findings"]
    g = {x["code"]: x for x in json.loads(out.loc["C", "findings"])}
    assert out.loc["C", "steep_uncovered_sqft"] == pytest.approx(85 * 100 * K, rel=1e-9)
    assert "85.0%" in g["dem_not_covering"]["message"]


def test_layer_set_with_unreadable_or_unitless_dem(tmp_path):
    from esc_gis.errors import LayerReadError, UnitsError

    bare = write_dem(tmp_path / "bare.tif", half_steep())
    manifest = write_layer_set(tmp_path / "l", extra=f'[dem]\npath = "{bare}"\n')
    with pytest.raises(UnitsError, match=r"z_unit in layers\.toml"):
        load_layers(manifest, profile=load_profile())
    junk = tmp_path / "junk.tif"
    junk.write_text("not a raster")
    manifest.write_text(manifest.read_text().replace(str(bare), str(junk)))
    with pytest.raises(LayerReadError, match="cannot be read as a raster"):
        load_layers(manifest, profile=load_profile())


def test_steep_command(tmp_path, dem):
    out = tmp_path / "steep.gpkg"
    r = CliRunner().invoke(cli, ["steep", str(dem), "-o", str(out), "--min-area-sqft", "10"])
    assert r.exit_code == 0, r.output
    g = gpd.read_file(out)
    assert len(g) == 1 and g["threshold_pct"].iloc[0] == 20 and g.crs.to_epsg() == 7594
    assert shapely.area(g.geometry.iloc[0]) == pytest.approx(39 * 78 * 25)


def test_steep_area_in_strips_of_a_few_rows_is_the_same(dem, monkeypatch):
    # A wide window is measured strip by strip; polygons straddling strips add up the same.
    import functools

    from esc_gis.terrain import slope, steep

    geoms = np.array([box(152.5, 100, 252.5, 200), box(10, 3, 390, 397), box(380, 100, 480, 200)], dtype=object)
    whole = steep_area(geoms, shapely_crs(), dem)
    monkeypatch.setattr(steep, "iter_slope_blocks", functools.partial(slope.iter_slope_blocks, block_cells=3 * N))
    monkeypatch.setattr(steep, "COVER_CELLS", 7 * N)  # strips of 7 rows, blocks of 3: some strips of 9
    strips = steep_area(geoms, shapely_crs(), dem)
    assert strips.steep_sqft == pytest.approx(whole.steep_sqft, rel=1e-12)
    assert strips.uncovered_sqft == pytest.approx(whole.uncovered_sqft, rel=1e-12)
    assert strips.steep_sqft[0] == pytest.approx((200 - 152.5) * 100 * K, rel=1e-9)


# --- the edges of the measure (each pins a line of steep.py; make mutation runs them) ---------

#: A plane rising 1 ftUS per 5 ftUS cell: exactly 20 % (integer elevations, exact sums).
PLANE_20 = np.tile(np.arange(N, dtype=np.float32), (N, 1))


def test_exactly_20_pct_is_steep_by_default(tmp_path):
    """§ 540-7B(3)(c)[3] "slopes of 20 percent or more": 20.0 % exactly is steep, at the default threshold."""
    dem = write_dem(tmp_path / "p20.tif", PLANE_20, x0=X0, y0=Y0 + 400, units="US survey foot")
    sa = steep_area(np.array([box(100, 100, 200, 200)], dtype=object), shapely_crs(), dem)
    assert sa.steep_sqft[0] == pytest.approx(100 * 100 * K, rel=1e-9)
    polys = steep_polygons(dem, crs=CRS)
    assert len(polys) == 1 and polys["threshold_pct"].iloc[0] == 20.0
    assert polys["area_sqft"].iloc[0] == pytest.approx(78 * 78 * 25 * K)  # all but the nodata ring
    # An area exactly the smallest kept is kept.
    assert len(steep_polygons(dem, crs=CRS, min_area_sqft=float(polys["area_sqft"].iloc[0]))) == 1


def test_steep_area_edges_of_the_window(dem):
    """Polygons with sides off the grid lines, off the DEM to each side, empty, or smaller than a square foot."""
    geoms = np.array(
        [
            box(52.5, 52.5, 152.5, 152.5),  # wholly steep, edges mid-cell: every partial column counts
            box(405, 100, 480, 200),  # right of the DEM (x 0..400), by a cell
            box(100, -80, 150, -5),  # below it
            shapely.Polygon(),  # nothing to measure
            box(100, 100, 100.5, 101),  # half a square foot, steep
        ],
        dtype=object,
    )
    sa = steep_area(geoms, shapely_crs(), dem)
    assert sa.steep_sqft == pytest.approx([100 * 100 * K, 0, 0, 0, 0.5 * K], rel=1e-9)
    assert sa.uncovered_sqft == pytest.approx([0, 75 * 100 * K, 50 * 75 * K, 0, 0], rel=1e-9, abs=1e-9)
    assert sa.dem.width == N
    # Every polygon off the DEM (to its right; below it), or every one empty: the same arrays, nothing read.
    for i, uncovered in ((1, 75 * 100 * K), (2, 50 * 75 * K)):
        off = steep_area(geoms[i : i + 1], shapely_crs(), dem)
        assert list(off.steep_sqft) == [0] and off.uncovered_sqft == pytest.approx([uncovered])
        assert off.dem.width == N
    none = steep_area(geoms[3:4], shapely_crs(), dem)
    assert list(none.steep_sqft) == [0] and list(none.uncovered_sqft) == [0] and none.dem.width == N


def test_steep_area_with_computed_edges_counts_the_border(dem):
    # The DEM's outer ring of cells has no slope unless edges are computed (as gdaldem -compute_edges).
    geoms = np.array([box(0, 100, 50, 200), box(100, 350, 150, 400)], dtype=object)  # the west edge; the north
    plain = steep_area(geoms, shapely_crs(), dem)
    edges = steep_area(geoms, shapely_crs(), dem, compute_edges=True)
    assert plain.steep_sqft == pytest.approx([45 * 100 * K, 50 * 45 * K])
    assert plain.uncovered_sqft == pytest.approx([5 * 100 * K, 50 * 5 * K])
    assert edges.steep_sqft == pytest.approx([50 * 100 * K, 50 * 50 * K])
    assert edges.uncovered_sqft == pytest.approx([0, 0], abs=1e-9)
    # The polygons too: with edges computed, steep land reaches the DEM's west, north and south sides.
    ring = steep_polygons(dem, crs=CRS, compute_edges=True)
    grown = np.add(steep_polygons(dem, crs=CRS).total_bounds, np.array([-5, -5, 0, 5]))
    assert ring.total_bounds == pytest.approx(grown)


def test_units_and_band_are_passed_to_the_dem(tmp_path):
    import rasterio

    from esc_gis.errors import BandError, UnitsError

    bare = write_dem(tmp_path / "bare.tif", PLANE_20, x0=X0, y0=Y0 + 400)  # no vertical unit
    geoms = np.array([box(100, 100, 200, 200)], dtype=object)
    with pytest.raises(UnitsError):
        steep_area(geoms, shapely_crs(), bare)
    assert steep_area(geoms, shapely_crs(), bare, z_unit="us_ft").steep_sqft[0] == pytest.approx(1e4 * K)
    assert len(steep_polygons(bare, crs=CRS, z_unit="us_ft")) == 1
    two = tmp_path / "two.tif"
    with rasterio.open(bare) as src:
        profile = {**src.profile, "count": 2}
        with rasterio.open(two, "w", **profile) as dst:
            dst.write(np.zeros((N, N), np.float32), 1)  # flat: band 1 is not the elevations
            dst.write(PLANE_20, 2)
    with pytest.raises(BandError):
        steep_area(geoms, shapely_crs(), two, z_unit="us_ft")
    assert steep_area(geoms, shapely_crs(), two, z_unit="us_ft", band=2).steep_sqft[0] == pytest.approx(1e4 * K)
    assert len(steep_polygons(two, crs=CRS, z_unit="us_ft", band=2)) == 1


def test_steep_polygons_in_blocks_of_a_few_rows_and_its_progress(dem, monkeypatch):
    import functools

    from esc_gis.terrain import slope, steep

    whole = steep_polygons(dem, crs=CRS)
    monkeypatch.setattr(steep, "iter_slope_blocks", functools.partial(slope.iter_slope_blocks, block_cells=7 * N))
    seen: list[float] = []
    blocks = steep_polygons(dem, crs=CRS, progress=seen.append)
    assert len(blocks) == 1 and blocks["area_sqft"].iloc[0] == pytest.approx(whole["area_sqft"].iloc[0])
    assert shapely.equals(blocks.geometry.iloc[0], whole.geometry.iloc[0])
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) > 5 and 0 < seen[0] < 0.2


def test_steep_polygons_warn_when_the_dem_is_far_from_the_measuring_zone(tmp_path):
    from esc_gis.errors import FarFromZoneWarning

    far = write_dem(tmp_path / "far.tif", PLANE_20, crs="EPSG:4326", x0=10.0, y0=50.0, cell=0.0001, units="metre")
    with pytest.warns(FarFromZoneWarning):
        steep_polygons(far, crs=CRS)


def test_shares_snap_only_within_a_millionth_of_a_cell():
    from esc_gis.terrain.steep import _SNAP_CELLS, _share

    cells = np.array([0.0, 0.5, 160.0, 160.0, 160.0, 160.0, 160.0, 0.5])
    part = np.array([0.0, 0.5, 1e-12, _SNAP_CELLS, 80.0, 160.0 - 1e-12, 160.0 - _SNAP_CELLS, 0.25])
    got = _share(part, cells)
    assert got[0] == 0 and got[1] == 1.0 and got[7] == 0.5  # no cells; half a cell wholly, and half, steep
    assert got[2] == 0  # rounding
    assert got[3] == _SNAP_CELLS / 160 and got[4] == 0.5  # a real sliver counts; a half is a half
    assert got[5] == 1.0 and got[6] == (160.0 - _SNAP_CELLS) / 160
