"""Slope in percent: hand-checkable planes, units, geographic DEMs, nodata, and real gdaldem."""

from __future__ import annotations

import itertools
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
import rasterio
from click.testing import CliRunner
from rasterio.windows import Window

from esc_gis.cli.main import cli
from esc_gis.errors import OutputExistsError, UnitsError
from esc_gis.terrain import NODATA, open_dem, write_slope
from esc_gis.terrain.slope import iter_slope_blocks

from .conftest import require_tool, write_dem

#: Real DEMs copied from the shared reference layers (see tests/data/dem/SOURCES.md).
DEM_DIR = Path(__file__).resolve().parent / "data" / "dem"


def plane(rise_per_cell: float, n: int = 12, *, dtype=np.float32) -> np.ndarray:
    """Elevations rising ``rise_per_cell`` per column eastwards."""
    return np.tile(np.arange(n, dtype=np.float64) * rise_per_cell, (n, 1)).astype(dtype)


def slope_of(path: Path, tmp_path: Path, **kw) -> np.ndarray:
    out = tmp_path / f"{path.stem}_slope.tif"
    write_slope(path, out, overwrite=True, **kw)
    with rasterio.open(out) as src:
        return src.read(1)


@pytest.mark.parametrize(("pct", "steep"), [(19.99, False), (20.00, True), (20.01, True)])
def test_tilted_planes_at_the_threshold(tmp_path, pct, steep):
    # 5 ftUS cells in EPSG:7594 (ftUS), elevations in ftUS: rise = pct / 100 * 5 per cell.
    dem = write_dem(tmp_path / "p.tif", plane(pct / 100 * 5), units="US survey foot")
    s = slope_of(dem, tmp_path)
    interior = s[1:-1, 1:-1]
    assert np.allclose(interior, pct, atol=2e-4)
    assert bool((interior >= 20.0).all()) is steep and bool((interior >= 20.0).any()) is steep
    if pct == 20.0:
        assert (interior == np.float32(20.0)).all()  # exact: integer elevations, exact sums


def test_border_is_nodata_unless_edges_are_computed(tmp_path):
    dem = write_dem(tmp_path / "p.tif", plane(1.0), units="US survey foot")
    s = slope_of(dem, tmp_path)
    border = np.ones_like(s, bool)
    border[1:-1, 1:-1] = False
    assert (s[border] == NODATA).all() and (s[~border] != NODATA).all()
    e = slope_of(dem, tmp_path, compute_edges=True)
    corners = np.zeros_like(e, bool)
    corners[[0, 0, -1, -1], [0, -1, 0, -1]] = True
    assert np.allclose(e[~corners], 20.0, atol=1e-5)  # a plane extrapolates to itself ...
    # ... except in the corners: on its first and last rows gdaldem clamps the columns
    # instead of extrapolating them, which halves the east-west difference there.
    assert np.allclose(e[corners], 10.0, atol=1e-5)


@pytest.mark.parametrize(
    ("crs", "cell", "z_unit", "rise"),
    [
        ("EPSG:3071", 2.0, "m", 0.4),  # metres both ways
        ("EPSG:7594", 5.0, "us_ft", 1.0),  # US survey feet both ways (county lidar)
        ("EPSG:7594", 5.0, "m", 1.0 * 1200 / 3937),  # ftUS grid, elevations in metres
        ("EPSG:3071", 2.0, "ft", 0.4 / 0.3048),  # metre grid, elevations in feet
        ("EPSG:2222", 5.0, "ft", 1.0),  # international feet both ways
    ],
)
def test_units_horizontal_and_vertical(tmp_path, crs, cell, z_unit, rise):
    dem = write_dem(tmp_path / "p.tif", plane(rise), crs=crs, x0=600_000, y0=400_000, cell=cell)
    s = slope_of(dem, tmp_path, z_unit=z_unit)
    assert np.allclose(s[1:-1, 1:-1], 20.0, atol=1e-4)


def test_a_wrong_vertical_unit_is_3_28_times_wrong(tmp_path):
    dem = write_dem(tmp_path / "p.tif", plane(1.0 * 1200 / 3937), crs="EPSG:7594")  # metres on a ftUS grid
    wrong = slope_of(dem, tmp_path, z_unit="us_ft")
    assert np.allclose(wrong[1:-1, 1:-1], 20.0 * 1200 / 3937, atol=1e-4)


def test_unknown_or_contradicted_vertical_unit(tmp_path):
    dem = write_dem(tmp_path / "p.tif", plane(1.0))
    with pytest.raises(UnitsError, match="z_unit=m"):
        write_slope(dem, tmp_path / "s.tif")
    assert not (tmp_path / "s.tif").exists()
    labelled = write_dem(tmp_path / "l.tif", plane(1.0), units="metre")
    assert open_dem(labelled).z_unit == "m" and open_dem(labelled).z_unit_source == "band unit"
    with pytest.raises(UnitsError, match="contradicts"):
        open_dem(labelled, z_unit="ft")


def test_vertical_unit_from_a_compound_crs(tmp_path):
    dem = write_dem(tmp_path / "c.tif", plane(0.4), crs="EPSG:3071+5703", x0=600_000, y0=400_000, cell=2.0)
    info = open_dem(dem)
    if info.z_unit_source != "CRS":  # pragma: no cover - depends on GDAL keeping the vertical CRS
        pytest.skip("this GDAL did not keep the vertical CRS in the GeoTIFF")
    assert info.z_unit == "m"
    assert np.allclose(slope_of(dem, tmp_path)[1:-1, 1:-1], 20.0, atol=1e-4)


def test_geographic_dem_gives_the_same_slope_as_projected(tmp_path):
    # The same 20 % plane, rising eastwards, sampled in EPSG:4326 near Winneconne.
    from pyproj import Transformer

    n = 40
    lon0, lat0, d = -88.72, 44.11, 0.00002  # ~1.6 m by ~2.2 m cells
    lons = lon0 + (np.arange(n) + 0.5) * d
    lats = lat0 - (np.arange(n) + 0.5) * d
    lon, lat = np.meshgrid(lons, lats)
    x, _ = Transformer.from_crs("EPSG:4326", "EPSG:3071", always_xy=True).transform(lon, lat)
    z = (0.2 * (x - x.min())).astype(np.float32)  # metres
    dem = write_dem(tmp_path / "g.tif", z, crs="EPSG:4326", x0=lon0, y0=lat0, cell=d)
    s = slope_of(dem, tmp_path, z_unit="m")
    # WTM's scale at 88.7 W is ~0.99965: the true ground slope is within 0.1 % of 20.
    assert np.allclose(s[1:-1, 1:-1], 20.0, rtol=1e-3)


def test_nodata_hole_and_its_ring(tmp_path):
    z = plane(1.0, n=20)
    z[8:11, 8:11] = -9999
    dem = write_dem(tmp_path / "h.tif", z, units="US survey foot")
    s = slope_of(dem, tmp_path)
    assert (s[7:12, 7:12] == NODATA).all()  # the hole and its one-cell ring
    assert np.allclose(s[1:7, 1:-1], 20.0) and np.allclose(s[12:-1, 1:-1], 20.0)
    e = slope_of(dem, tmp_path, compute_edges=True)
    assert (e[8:11, 8:11] == NODATA).all()  # centre nodata stays nodata
    assert (e[7, 7:12] != NODATA).all()  # the ring is computed, with the centre for missing cells


def test_blocks_and_windows_do_not_change_values(tmp_path):
    rng = np.random.default_rng(1)
    z = (rng.normal(0, 3, (57, 43)).cumsum(axis=0).cumsum(axis=1) / 10).astype(np.float32)
    z[20:23, 5:9] = -9999
    dem = write_dem(tmp_path / "r.tif", z, units="metre", crs="EPSG:3071", x0=600_000, y0=400_000, cell=1.0)
    info = open_dem(dem)
    for edges in (False, True):
        whole = np.vstack([b for _, b in iter_slope_blocks(info, compute_edges=edges)])
        small = np.vstack([b for _, b in iter_slope_blocks(info, compute_edges=edges, block_cells=100, threads=2)])
        np.testing.assert_array_equal(whole, small)
        for win in (Window(0, 0, 43, 57), Window(5, 3, 20, 30), Window(0, 50, 43, 7), Window(30, 0, 13, 10)):
            part = np.vstack([b for _, b in iter_slope_blocks(info, compute_edges=edges, window=win, block_cells=64)])
            r, c = int(win.row_off), int(win.col_off)
            np.testing.assert_array_equal(part, whole[r : r + int(win.height), c : c + int(win.width)])


# --- the real gdaldem, on real DEMs ------------------------------------------------------


def _gdaldem(dem: Path, out: Path, *extra: str) -> np.ndarray:
    subprocess.run([require_tool("gdaldem", "gdal-bin"), "slope", "-p", "-q", *extra, str(dem), str(out)], check=True)
    with rasterio.open(out) as src:
        return src.read(1)


@pytest.mark.parametrize("name", ["lidar_pkg_dem_1m_MN.tif", "spDataLarge_dem_30m_mongon_peru.tif"])
@pytest.mark.parametrize("edges", [False, True])
def test_identical_to_gdaldem_on_real_dems(tmp_path, name, edges):
    dem = DEM_DIR / name
    extra = ("-compute_edges",) if edges else ()
    ref = _gdaldem(dem, tmp_path / "g.tif", *extra)
    ours = slope_of(dem, tmp_path, z_unit="m", compute_edges=edges)
    assert ours.shape == ref.shape
    assert (ours == ref).all(), f"{(ours != ref).sum()} cells differ from gdaldem"
    assert ((ours >= 20) & (ours != NODATA)).mean() > 0.2  # real relief, not a trivially flat test


def test_identical_to_gdaldem_on_an_integer_dem_with_nodata(tmp_path):
    # The real SRTM tile (uint16, nodata 65535), placed on a 30 m projected grid.
    with rasterio.open(DEM_DIR / "spDataLarge_srtm_3arcsec_zion.tif") as src:
        z = src.read(1)
    z[100:104, 200:230] = 65535
    z[50, 60] = z[300, 17] = 65535  # isolated nodata cells: Horn's sums skip the centre
    z[200:260, 100] = 65535  # a one-cell-wide gap
    dem = write_dem(tmp_path / "srtm_utm.tif", z, crs="EPSG:32612", x0=320_000, y0=4_130_000, cell=30.0, nodata=65535)
    for extra in ((), ("-compute_edges",)):
        ref = _gdaldem(dem, tmp_path / "g.tif", *extra)
        ours = slope_of(dem, tmp_path, z_unit="m", compute_edges=bool(extra))
        assert (ours == ref).all(), f"{(ours != ref).sum()} cells differ from gdaldem {extra}"


def test_identical_to_gdaldem_with_mixed_units_and_scale(tmp_path):
    rng = np.random.default_rng(3)
    z = (rng.normal(0, 1, (60, 60)).cumsum(axis=1) + 230).astype(np.float32)
    dem = write_dem(tmp_path / "mixed.tif", z, crs="EPSG:7594")  # ftUS grid, elevations in metres
    # gdaldem's -s is the horizontal unit in vertical units (111120 for degrees and metres):
    # here one US survey foot in metres.
    ref = _gdaldem(dem, tmp_path / "g.tif", "-s", repr(1200 / 3937))
    ours = slope_of(dem, tmp_path, z_unit="m")
    assert (ours == ref).all()


# --- the command line -------------------------------------------------------------------


def test_slope_command(tmp_path):
    dem = write_dem(tmp_path / "p.tif", plane(1.0), units="US survey foot")
    out = tmp_path / "s.tif"
    r = CliRunner().invoke(cli, ["slope", str(dem), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "us_ft (band unit)" in r.output
    r = CliRunner().invoke(cli, ["slope", str(dem), "-o", str(out)])
    assert r.exit_code == 1 and "--overwrite" in r.output
    bare = write_dem(tmp_path / "bare.tif", plane(1.0))
    r = CliRunner().invoke(cli, ["slope", str(bare), "-o", str(tmp_path / "b.tif")])
    assert r.exit_code == 1 and "--z-unit" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["slope", str(dem), "-o", str(tmp_path / "s.png")])
    assert r.exit_code == 1 and ".tif" in r.output
    with pytest.raises(OutputExistsError):
        write_slope(dem, out)


def _horn_cell_by_cell(win: np.ndarray, ew: np.ndarray, ns: float, fill: bool) -> np.ndarray:
    """GDAL's GDALSlopeHornAlg written out cell by cell with numpy scalars (the reference)."""
    f32 = np.float32
    h, w = win.shape[0] - 2, win.shape[1] - 2
    out = np.empty((h, w), dtype=np.float32)
    for i in range(h):
        for j in range(w):
            z = [f32(win[i + r, j + c]) for r in range(3) for c in range(3)]
            if fill:
                z = [z[4] if np.isnan(v) else v for v in z]
            a = ((z[0] + z[3]) + z[3]) + z[6]
            b = ((z[2] + z[5]) + z[5]) + z[8]
            c = ((z[6] + z[7]) + z[7]) + z[8]
            d = ((z[0] + z[1]) + z[1]) + z[2]
            dx = float(f32(a - b)) / float(ew[i, 0])
            dy = float(f32(c - d)) / ns
            out[i, j] = np.nan if np.isnan(z[4]) else f32(100.0 * (math.sqrt(dx * dx + dy * dy) / 8.0))
    return out


@pytest.mark.parametrize("fill", [False, True])
def test_kernel_equals_gdal_arithmetic_cell_by_cell(fill):
    from esc_gis.terrain.slope import _Scratch, horn_slope_pct

    rng = np.random.default_rng(7)
    win = rng.normal(0, 5, (41, 37)).cumsum(axis=1).astype(np.float32)
    win[rng.random(win.shape) < 0.05] = np.nan
    ew = np.linspace(0.9, 1.3, 39)[:, None]  # per-row divisors, as for a geographic DEM
    expected = _horn_cell_by_cell(win, ew, 2.0, fill)
    np.testing.assert_array_equal(horn_slope_pct(win, ew, 2.0, fill_with_centre=fill), expected)
    assert np.isnan(expected).any() and not np.isnan(expected).all()
    # Work arrays reused from a larger block, dirty with its values, change nothing.
    scratch = _Scratch(60, 35)
    horn_slope_pct(rng.normal(size=(62, 37)).astype(np.float32), 1.0, 1.0, scratch=scratch)
    got = horn_slope_pct(win, ew, 2.0, fill_with_centre=fill, scratch=scratch)
    np.testing.assert_array_equal(got, expected)


# --- multi-band DEMs: the band is named, never assumed ------------------------------------

ECUADOR = DEM_DIR / "spDataLarge_ta_10m_ecuador_crop.tif"


def test_a_multiband_dem_is_refused_without_a_band(tmp_path):
    from esc_gis.errors import BandError

    with pytest.raises(
        BandError, match=r"5 bands: 1 \(slope\), 2 \(cplan\), 3 \(cprof\), 4 \(elev\), 5 \(log10_carea\)"
    ):
        write_slope(ECUADOR, tmp_path / "s.tif", z_unit="m")
    assert not (tmp_path / "s.tif").exists()
    with pytest.raises(BandError, match="band 6 does not exist"):
        open_dem(ECUADOR, band=6)
    r = CliRunner().invoke(cli, ["slope", str(ECUADOR), "-o", str(tmp_path / "s.tif"), "--z-unit", "m"])
    assert r.exit_code == 1 and "--band N" in r.output and "4 (elev)" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["steep", str(ECUADOR), "-o", str(tmp_path / "s.gpkg"), "--z-unit", "m"])
    assert r.exit_code == 1 and "--band N" in r.output
    # A single-band raster needs no --band, and band 1 of it is accepted.
    assert open_dem(DEM_DIR / "lidar_pkg_dem_1m_MN.tif", z_unit="m", band=1).band_count == 1


@pytest.mark.parametrize("edges", [False, True])
def test_band_4_of_the_real_ecuador_stack_matches_gdaldem_b_4(tmp_path, edges):
    extra = ("-compute_edges",) if edges else ()
    ref = _gdaldem(ECUADOR, tmp_path / "g.tif", "-b", "4", *extra)
    out = tmp_path / "s.tif"
    r = CliRunner().invoke(
        cli,
        ["slope", str(ECUADOR), "-o", str(out), "--z-unit", "m", "--band", "4", "--quiet"]
        + (["--compute-edges"] if edges else []),
    )
    assert r.exit_code == 0, r.output
    with rasterio.open(out) as src:
        ours = src.read(1)
        assert src.tags()["SOURCE_BAND"] == "4" and src.tags(1)["SOURCE_BAND_DESCRIPTION"] == "elev"
        assert "band 4 (elev)" in src.descriptions[0]
    assert (ours == ref).all(), f"{(ours != ref).sum()} cells differ from gdaldem -b 4"
    valid = ours != NODATA
    assert 0.5 < valid.mean() < 0.95  # the crop's nodata corner is there, and real slopes around it
    # Band 1 (a slope in degrees) would give a very different "slope": the test can tell.
    wrong = _gdaldem(ECUADOR, tmp_path / "g1.tif", "-b", "1", *extra)
    assert (wrong != ref).mean() > 0.5


def test_band_4_of_a_stack_is_an_exact_20_percent_plane(tmp_path):
    n = 12
    z4 = plane(1.0, n)  # 1 ftUS per 5 ftUS cell: 20 %
    stack = np.stack([plane(3.0, n), plane(0.0, n), plane(2.0, n), z4])
    profile = {"driver": "GTiff", "width": n, "height": n, "count": 4, "dtype": "float32", "crs": "EPSG:7594"}
    profile["transform"] = rasterio.transform.from_origin(745_000, 506_000, 5.0, 5.0)
    dem = tmp_path / "stack.tif"
    with rasterio.open(dem, "w", **profile) as dst:
        dst.write(stack)
    s = slope_of(dem, tmp_path, z_unit="us_ft", band=4)
    assert (s[1:-1, 1:-1] == np.float32(20.0)).all()
    assert (slope_of(dem, tmp_path, z_unit="us_ft", band=1)[1:-1, 1:-1] == np.float32(60.0)).all()


def test_a_layer_set_dem_names_its_band(tmp_path):
    import shutil

    from esc_gis import load_layers, load_profile
    from esc_gis.errors import BandError, FarFromZoneWarning

    from .conftest import write_layer_set

    folder = tmp_path / "layers"
    folder.mkdir()
    shutil.copy(ECUADOR, folder / "ta.tif")
    manifest = write_layer_set(folder, extra='[dem]\npath = "ta.tif"\nz_unit = "m"\n')
    with pytest.raises(BandError, match=r"band = N in layers\.toml"):
        load_layers(manifest, profile=load_profile())
    manifest = write_layer_set(folder, extra='[dem]\npath = "ta.tif"\nz_unit = "m"\nband = 4\n')
    with pytest.warns(FarFromZoneWarning):  # Ecuador in a Wisconsin layer set, rightly warned
        ls = load_layers(manifest, profile=load_profile())
    assert ls.dem is not None and ls.dem.band == 4 and ls.dem.band_description == "elev"
    manifest = write_layer_set(folder, extra='[dem]\npath = "ta.tif"\nz_unit = "m"\nband = "4"\n')
    with pytest.raises(ValueError, match="is not a band number"):
        load_layers(manifest, profile=load_profile())


# --- DEMs as counties deliver them: tiled, compressed, in tiles, as a VRT ----------------------


def _relief(h: int = 150, w: int = 130) -> np.ndarray:
    rng = np.random.default_rng(11)
    z = (rng.normal(0, 2, (h, w)).cumsum(axis=0).cumsum(axis=1) / 20 + 240).astype(np.float32)
    z[60:64, 10:15] = -9999  # a hole, to carry nodata across strips and tiles
    return z


def _write(path: Path, z: np.ndarray, x0: float, y0: float, **layout) -> Path:
    profile = {
        "driver": "GTiff",
        "width": z.shape[1],
        "height": z.shape[0],
        "count": 1,
        "dtype": "float32",
        "crs": "EPSG:3071",
        "transform": rasterio.transform.from_origin(x0, y0, 1.0, 1.0),
        "nodata": -9999.0,
        **layout,
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(z, 1)
    return path


TILED = {"tiled": True, "blockxsize": 32, "blockysize": 16, "compress": "deflate"}


@pytest.fixture
def small_strips(monkeypatch):
    """Strips of a few rows, so a small DEM is read in many strips and the halo is carried."""
    from esc_gis.terrain import slope as slope_mod

    monkeypatch.setattr(slope_mod, "STRIP_CELLS", 20 * 130)
    monkeypatch.setattr(slope_mod, "STRIP_MAX_CELLS", 40 * 130)


def _tiles(folder: Path, z: np.ndarray, rows: list[int], cols: list[int]) -> Path:
    folder.mkdir()
    for i, (r0, r1) in enumerate(itertools.pairwise(rows)):
        for j, (c0, c1) in enumerate(itertools.pairwise(cols)):
            _write(folder / f"t_{i}_{j}.tif", z[r0:r1, c0:c1], 600_000 + c0, 400_000 - r0, **TILED)
    (folder / "readme.txt").write_text("not a tile")
    return folder


@pytest.mark.usefixtures("small_strips")
@pytest.mark.parametrize("edges", [False, True])
def test_tiled_compressed_tiles_and_vrt_give_the_plain_dems_slope(tmp_path, edges):
    z = _relief()
    plain = _write(tmp_path / "plain.tif", z, 600_000, 400_000)
    tiled = _write(tmp_path / "tiled.tif", z, 600_000, 400_000, **TILED)
    folder = _tiles(tmp_path / "tiles", z, [0, 50, 101, 150], [0, 64, 130])
    info = open_dem(tiled, z_unit="m")
    assert info.block_rows == (*range(0, 150, 16), 150)
    tiles_info = open_dem(folder, z_unit="m")
    assert (tiles_info.width, tiles_info.height, tiles_info.transform) == (130, 150, info.transform)
    assert {0, 16, 48, 50, 66, 101, 117, 149, 150} <= set(tiles_info.block_rows)
    ref = slope_of(plain, tmp_path, z_unit="m", compute_edges=edges)
    # The hole (4 x 5 cells), its ring and the raster's border unless edges are computed.
    assert (ref == NODATA).sum() == (20 if edges else 6 * 7 + 2 * 130 + 2 * 148)
    for dem in (tiled, folder):
        np.testing.assert_array_equal(slope_of(dem, tmp_path, z_unit="m", compute_edges=edges), ref)
    # A window (as screening reads around sites) across strips and tiles: the same values.
    whole = np.vstack([b for _, b in iter_slope_blocks(open_dem(plain, z_unit="m"), compute_edges=edges)])
    win = Window(40, 37, 70, 90)
    part = np.vstack([b for _, b in iter_slope_blocks(tiles_info, compute_edges=edges, window=win, block_cells=200)])
    np.testing.assert_array_equal(part, whole[37:127, 40:110])
    # gdalbuildvrt's own VRT of the tiles reads the same, its blocks found in its XML.
    vrt = tmp_path / "tiles.vrt"
    tifs = sorted(str(p) for p in folder.glob("*.tif"))
    subprocess.run([require_tool("gdalbuildvrt", "gdal-bin"), "-q", str(vrt), *tifs], check=True)
    vrt_info = open_dem(vrt, z_unit="m")
    assert set(tiles_info.block_rows) <= set(vrt_info.block_rows)
    np.testing.assert_array_equal(slope_of(vrt, tmp_path, z_unit="m", compute_edges=edges), ref)
    # ... and gdaldem on that VRT agrees with us on it.
    np.testing.assert_array_equal(_gdaldem(vrt, tmp_path / "g.tif", *(("-compute_edges",) if edges else ())), ref)


@pytest.mark.usefixtures("small_strips")
def test_strips_end_where_the_sources_blocks_start(tmp_path):
    import dataclasses

    from esc_gis.terrain.slope import _strips

    info = open_dem(_write(tmp_path / "t.tif", _relief(), 600_000, 400_000, **TILED), z_unit="m")
    strips = _strips(info, 0, 150, 130)
    # At least 20 rows (STRIP_CELLS), on to the next 16-row tile start: no tile read twice.
    assert strips == [(0, 32), (32, 64), (64, 96), (96, 128), (128, 150)]
    assert _strips(info, 37, 90, 130) == [(37, 64), (64, 90)]  # a window's rows, cut at tile starts
    # A striped source stored as one block (larger than STRIP_MAX_CELLS) is read in plain strips.
    whole = dataclasses.replace(info, block_rows=(0, 150))
    # (the last 30 rows fit in STRIP_MAX_CELLS and are read whole)
    assert _strips(whole, 0, 150, 130) == [(s, s + 20) for s in range(0, 120, 20)] + [(120, 150)]


def test_tiles_off_one_grid_or_no_tiles_are_refused(tmp_path):
    from esc_gis.errors import CRSError, LayerReadError

    z = _relief(40, 40)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LayerReadError, match="holds no"):
        open_dem(empty, z_unit="m")
    off = tmp_path / "off"
    off.mkdir()
    _write(off / "a.tif", z, 600_000, 400_000)
    _write(off / "b.tif", z, 600_040.5, 400_000)  # half a cell off
    with pytest.raises(CRSError, match=r"b\.tif is off a\.tif.s grid"):
        open_dem(off, z_unit="m")
    r = CliRunner().invoke(cli, ["slope", str(off), "-o", str(tmp_path / "s.tif"), "--z-unit", "m"])
    assert r.exit_code == 1 and "gdalwarp" in r.output


# --- what is written: tiled, compressed, with overviews; a COG when asked ----------------------


def test_output_is_tiled_compressed_with_overviews_and_a_cog_on_request(tmp_path):
    z = np.tile(np.arange(600, dtype=np.float32) * 0.2, (600, 1))  # 20 % on 1 m cells
    dem = _write(tmp_path / "big.tif", z, 600_000, 400_000)
    out = tmp_path / "s.tif"
    write_slope(dem, out, z_unit="m")
    with rasterio.open(out) as src:
        assert src.block_shapes[0] == (512, 512) and src.profile["tiled"]
        assert src.compression.value == "DEFLATE" and src.tags(ns="IMAGE_STRUCTURE").get("PREDICTOR") == "3"
        assert src.overviews(1) == [2]
        assert src.tags(ns="IMAGE_STRUCTURE").get("LAYOUT") != "COG"
        assert np.allclose(src.read(1, out_shape=(300, 300))[1:-1, 1:-1], 20.0)  # read from the overview
        assert src.tags(1)["SOURCE_BAND"] == "1"
    cog = tmp_path / "c.tif"
    r = CliRunner().invoke(cli, ["slope", str(dem), "-o", str(cog), "--z-unit", "m", "--cog", "--quiet"])
    assert r.exit_code == 0, r.output
    with rasterio.open(cog) as src:
        assert src.tags(ns="IMAGE_STRUCTURE")["LAYOUT"] == "COG"
        assert src.block_shapes[0] == (512, 512) and src.overviews(1) == [2]
        assert src.compression.value == "DEFLATE"
        assert src.tags(1)["ALGORITHM"].startswith("Horn") and src.tags()["SOURCE_BAND"] == "1"
        with rasterio.open(out) as plain:
            np.testing.assert_array_equal(src.read(1), plain.read(1))
    # No temp left; the command writes QGIS's style beside its raster (write_slope alone does not).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.tif", "c.qml", "c.tif", "s.tif"]


def test_overviews_are_gdals_average_of_the_slope(tmp_path):
    from rasterio.enums import Resampling

    rng = np.random.default_rng(5)
    # Even sides: for odd ones GDAL's overview cells span 2 * (1 - 1/n) cells, not 2, and its
    # averaging windows drift by up to a cell towards the far edge; ours are plain 2 x 2.
    z = (rng.normal(0, 1, (700, 612)).cumsum(axis=1) + 240).astype(np.float32)
    z[100:140, 200:260] = -9999
    dem = _write(tmp_path / "r.tif", z, 600_000, 400_000)
    out = tmp_path / "s.tif"
    write_slope(dem, out, z_unit="m")
    ref = tmp_path / "ref.tif"
    with rasterio.open(out) as src:
        profile = {**src.profile, "compress": "none"}
        full = src.read(1)
        levels = src.overviews(1)
        ours = [src.read(1, out_shape=(-(-700 // f), -(-612 // f))) for f in levels]
    assert levels == [2]
    with rasterio.open(ref, "w", **profile) as dst:
        dst.write(full, 1)
        dst.build_overviews(levels, Resampling.average)
    with rasterio.open(ref) as src:
        theirs = [src.read(1, out_shape=o.shape) for o in ours]
    for a, b in zip(ours, theirs, strict=True):
        assert ((a == NODATA) == (b == NODATA)).all() and (a == NODATA).any()
        np.testing.assert_allclose(a[a != NODATA], b[b != NODATA], rtol=1e-6)


def test_the_commands_take_a_folder_of_tiles(tmp_path):
    z = _relief()
    plain = _write(tmp_path / "plain.tif", z, 600_000, 400_000)
    folder = _tiles(tmp_path / "tiles", z, [0, 70, 150], [0, 64, 130])
    out = tmp_path / "s.tif"
    r = CliRunner().invoke(cli, ["slope", str(folder), "-o", str(out), "--z-unit", "m"])
    assert r.exit_code == 0, r.output
    with rasterio.open(out) as src:
        np.testing.assert_array_equal(src.read(1), slope_of(plain, tmp_path, z_unit="m"))
        assert src.tags()["SOURCE_DEM"] == "tiles"
    r = CliRunner().invoke(cli, ["steep", str(folder), "-o", str(tmp_path / "st.gpkg"), "--z-unit", "m", "--quiet"])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("compress, codec", [("zstd", "ZSTD"), ("lzw", "LZW"), ("none", None)])
@pytest.mark.parametrize("cog", [False, True])
def test_compression_on_request_keeps_the_values(tmp_path, compress, codec, cog):
    z = np.tile(np.arange(600, dtype=np.float32) * 0.2, (600, 1))
    dem = _write(tmp_path / "big.tif", z, 600_000, 400_000)
    write_slope(dem, tmp_path / "deflate.tif", z_unit="m")
    out = tmp_path / "other.tif"
    args = ["slope", str(dem), "-o", str(out), "--z-unit", "m", "--compress", compress, "--quiet"]
    r = CliRunner().invoke(cli, [*args, "--cog"] if cog else args)
    assert r.exit_code == 0, r.output
    with rasterio.open(out) as src, rasterio.open(tmp_path / "deflate.tif") as ref:
        assert (src.compression.value if src.compression else None) == codec
        assert src.block_shapes[0] == (512, 512) and src.overviews(1) == [2]
        np.testing.assert_array_equal(src.read(1), ref.read(1))


def test_an_unknown_compression_is_refused_before_any_work(tmp_path):
    dem = _write(tmp_path / "d.tif", np.zeros((10, 10), np.float32), 600_000, 400_000)
    with pytest.raises(ValueError, match="compress must be one of deflate, zstd, lzw, none, not 'jpeg'"):
        write_slope(dem, tmp_path / "s.tif", z_unit="m", compress="jpeg")
    assert not (tmp_path / "s.tif").exists()
    r = CliRunner().invoke(cli, ["slope", str(dem), "-o", str(tmp_path / "s.tif"), "--compress", "jpeg"])
    assert r.exit_code == 2 and "jpeg" in r.output  # click's usage error for a bad choice


@pytest.mark.parametrize(
    "transform",
    [
        rasterio.Affine(1.0, 0.0, 600_000, 0.0, 1.0, 400_000),  # south-up: rows run north
        rasterio.Affine(-1.0, 0.0, 600_040, 0.0, -1.0, 400_040),  # columns run west
    ],
)
def test_a_south_up_or_east_left_grid_is_refused_with_the_fix(tmp_path, transform):
    """Such a grid was taken and every site came out uncovered: refused, naming gdalwarp."""
    from esc_gis.errors import CRSError

    z = _relief(40, 40)
    path = tmp_path / "flipped.tif"
    with rasterio.open(
        path, "w", driver="GTiff", width=40, height=40, count=1, dtype="float32", crs="EPSG:3071", transform=transform
    ) as dst:
        dst.write(z, 1)
    with pytest.raises(CRSError, match="north-up grid first \\(gdalwarp\\)"):
        open_dem(path, z_unit="m")
    north_up = _write(tmp_path / "n.tif", z, 600_000, 400_040)
    assert open_dem(north_up, z_unit="m").width == 40
