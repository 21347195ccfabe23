"""Exact cell-coverage sums (esc_gis.terrain.coverage): hand-checked cases, strips, and exactextract as oracle."""

from __future__ import annotations

import numpy as np
import pytest
import rasterio
import shapely
from rasterio.transform import from_origin

from esc_gis.terrain.coverage import EdgeSet

# A 10 ft grid whose top left corner is at (1000, 5000): cell (row r, col c) spans
# x 1000 + 10c .. 1000 + 10(c + 1), y 5000 - 10(r + 1) .. 5000 - 10r.
X0, Y0, CELL = 1000.0, 5000.0, 10.0


def cell_box(x0: float, y0: float, x1: float, y1: float) -> shapely.Geometry:
    """A box in grid-local feet (x right, y down from the top left corner)."""
    return shapely.box(X0 + x0, Y0 - y1, X0 + x1, Y0 - y0)


def sums(geoms: list[shapely.Geometry], grids: list[np.ndarray], strip: int | None = None) -> np.ndarray:
    edges = EdgeSet.from_geometries(np.array(geoms, dtype=object), X0, Y0, CELL, CELL)
    h = grids[0].shape[0]
    step = strip or h
    return sum(edges.strip_sums([g[r : r + step] for g in grids], r) for r in range(0, h, step))


def test_a_4000_sqft_rectangle_covers_40_cells_wherever_it_lies_on_the_grid() -> None:
    ones = np.ones((20, 20))
    on_lines = cell_box(20, 30, 60, 130)  # 40 x 100 ft on the grid lines
    off_lines = cell_box(23.3, 31.7, 63.3, 131.7)  # the same, off them
    got = sums([on_lines, off_lines], [ones])[0]
    assert got == pytest.approx([40.0, 40.0], rel=1e-12)


def test_a_cell_partly_covered_counts_by_the_share_covered() -> None:
    # Only cell (0, 0) is steep; a 20 x 20 ft square from (5, 5) covers a quarter of it (5 x 5 ft).
    steep = np.zeros((4, 4))
    steep[0, 0] = 1
    got = sums([cell_box(5, 5, 25, 25)], [steep])[0, 0]
    assert got == pytest.approx(0.25, rel=1e-12)
    # Weighted values: a cell worth 3 covered by a quarter adds 0.75.
    steep[0, 0] = 3
    assert sums([cell_box(5, 5, 25, 25)], [steep])[0, 0] == pytest.approx(0.75, rel=1e-12)


def test_holes_and_parts_add_their_signed_share_whatever_the_rings_direction() -> None:
    ones = np.ones((10, 10))
    outer = [(X0 + 10, Y0 - 10), (X0 + 10, Y0 - 90), (X0 + 90, Y0 - 90), (X0 + 90, Y0 - 10)]
    hole = [(X0 + 35, Y0 - 35), (X0 + 35, Y0 - 65), (X0 + 65, Y0 - 65), (X0 + 65, Y0 - 35)]
    cw = shapely.Polygon(outer, [hole])  # given clockwise, with a hole given counter-clockwise
    ccw = shapely.Polygon(outer[::-1], [hole[::-1]])
    two = shapely.MultiPolygon([cell_box(0, 0, 10, 10), cell_box(50, 0, 75, 10)])
    got = sums([cw, ccw, two], [ones])[0]
    assert got == pytest.approx([(6400 - 900) / 100, (6400 - 900) / 100, 1 + 2.5], rel=1e-12)


def test_the_part_off_the_grid_adds_nothing_and_empty_or_missing_geometries_measure_zero() -> None:
    ones = np.ones((10, 10))
    half_off = cell_box(-50, 20, 50, 40)  # x -50..50: half left of the grid
    above = cell_box(20, -40, 40, 10)  # y -40..10: four fifths above the grid
    got = sums([half_off, above, shapely.Polygon(), None], [ones])[0]
    assert got == pytest.approx([10.0, 2.0, 0.0, 0.0], rel=1e-12)


def test_strips_of_any_height_and_edges_in_chunks_add_up_to_the_whole_grid(monkeypatch) -> None:
    from esc_gis.terrain import coverage

    rng = np.random.default_rng(7)
    grid = (rng.random((37, 41)) < 0.4).astype(float)
    centres = shapely.points(X0 + rng.uniform(0, 410, 200), Y0 - rng.uniform(0, 370, 200))
    geoms = list(shapely.buffer(centres, rng.uniform(3, 80, 200), quad_segs=4))
    whole = sums(geoms, [grid])
    for strip in (1, 2, 5, 13, 36):
        assert sums(geoms, [grid], strip) == pytest.approx(whole, rel=1e-9, abs=1e-9)
    monkeypatch.setattr(coverage, "PIECES", 7)  # a few edges at a time; an edge longer than that alone
    assert sums(geoms, [grid]) == pytest.approx(whole, rel=1e-9, abs=1e-9)
    # A polygon wholly above or below a strip adds nothing for it.
    edges = EdgeSet.from_geometries(np.array([cell_box(0, 0, 30, 30)], dtype=object), X0, Y0, CELL, CELL)
    assert edges.strip_sums([grid[10:20]], 10)[0, 0] == 0


def test_the_sums_are_exactextracts_on_random_polygons(tmp_path) -> None:
    exactextract = pytest.importorskip("exactextract", reason="exactextract (the test extra) is the oracle")
    import geopandas as gpd

    rng = np.random.default_rng(540)
    h, w = 120, 150
    grid = (rng.random((h, w)) < 0.35).astype(np.uint8)
    grid[rng.random((h, w)) < 0.05] = 255  # undefined cells: in neither sum
    n = 600
    cx, cy = rng.uniform(-50, w * CELL + 50, n), rng.uniform(-50, h * CELL + 50, n)
    geoms = shapely.buffer(shapely.points(X0 + cx, Y0 - cy), rng.uniform(2, 150, n), quad_segs=3)
    geoms[:40] = shapely.difference(geoms[:40], shapely.buffer(shapely.points(X0 + cx[:40], Y0 - cy[:40]), 1.5))
    path = tmp_path / "grid.tif"
    profile = {"driver": "GTiff", "width": w, "height": h, "count": 1, "dtype": "uint8", "nodata": 255}
    with rasterio.open(path, "w", crs="EPSG:7594", transform=from_origin(X0, Y0, CELL, CELL), **profile) as dst:
        dst.write(grid, 1)
    vec = gpd.GeoDataFrame(geometry=geoms, crs="EPSG:7594")
    want = exactextract.exact_extract(str(path), vec, ["sum", "count"], output="pandas")
    got = sums(list(geoms), [(grid == 1).astype(float), (grid != 255).astype(float)], strip=17)
    # exactextract works partly in single precision: agreement to a millionth of a cell.
    assert got[0] == pytest.approx(want["sum"].to_numpy(), rel=1e-6, abs=1e-6)
    assert got[1] == pytest.approx(want["count"].to_numpy(), rel=1e-6, abs=1e-6)


def test_bad_cells_or_grids_are_refused() -> None:
    one = np.array([cell_box(0, 0, 1, 1)], dtype=object)
    for w, h in ((CELL, -CELL), (0.0, CELL), (CELL, 0.0)):
        with pytest.raises(ValueError, match=r"^cell sizes must be positive, got "):
            EdgeSet.from_geometries(one, X0, Y0, w, h)
    edges = EdgeSet.from_geometries(one, X0, Y0, CELL, CELL)
    with pytest.raises(ValueError, match=r"^the grids of a strip must have one shape$"):
        edges.strip_sums([np.ones((2, 2)), np.ones((2, 3))], 0)
    assert edges.strip_sums([], 0).shape == (0, 1)
    assert not edges.strip_sums([np.ones((0, 4))], 0).any() and not edges.strip_sums([np.ones((3, 0))], 0).any()


def test_a_grid_one_column_wide_or_one_row_high() -> None:
    # x 5..25 over a grid of one 10 ft column: half of it; y 5..25 over one row: half of it.
    wide = cell_box(5, 0, 25, 10)
    assert sums([wide], [np.ones((1, 1))])[0, 0] == pytest.approx(0.5, rel=1e-12)
    assert sums([cell_box(0, 5, 10, 25)], [np.ones((1, 3))])[0, 0] == pytest.approx(0.5, rel=1e-12)


def test_cuts_a_hair_apart_keep_their_order_at_large_edge_numbers() -> None:
    """An edge passing within 1e-10 of a grid corner, after 240,000 other edges (a county batch).

    Ordered by a real key (2 * edge + t) the two cuts swapped there, and a sliver of the edge
    counted in the next column: 2e-6 of a cell off. Checked against shapely's exact overlay.
    """
    h, w, j = 4000, 300, 150
    grid = np.zeros((h, w), dtype=bool)
    grid[:, j] = True  # only column j counts
    rng = np.random.default_rng(0)
    cx, cy = rng.integers(0, w, 60_000) + 0.25, rng.integers(0, h, 60_000) + 0.25
    dummies = list(shapely.box(cx, cy, cx + 0.5, cy + 0.5))
    worst = 0.0
    for _ in range(12):
        delta = rng.uniform(-1, 1) * 10 ** rng.uniform(-14, -9)
        s = rng.uniform(0.3, 3)
        a, b = (j + 1 - 100, 3000 + delta - 100 * s), (j + 1 + 50, 3000 + delta + 50 * s)
        tri = shapely.Polygon([a, b, (a[0], b[1])])
        edges = EdgeSet.from_geometries(np.array([*dummies, tri], dtype=object), 0.0, float(h), 1.0, 1.0)
        got = edges.strip_sums([grid], 0)[0, -1]
        worst = max(worst, abs(got - shapely.intersection(tri, shapely.box(j, 0, j + 1, h)).area))
    assert worst < 1e-9
