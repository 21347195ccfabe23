import numpy as np
import pytest
import shapely

from esc_gis.measure import (
    PolygonIndex,
    chunk_lines,
    clip_to_region,
    nearest_distance,
    overlay,
    parallel,
    subdivide,
    union_by_group,
)


def test_subdivide_keeps_area_and_bounds_vertex_count():
    ring = shapely.Point(0, 0).buffer(1000, quad_segs=512).difference(shapely.Point(0, 0).buffer(400, quad_segs=256))
    pieces, src = subdivide([ring, shapely.box(0, 0, 1, 1)], max_vertices=64)
    assert shapely.get_num_coordinates(pieces).max() <= 64
    assert shapely.area(pieces[src == 0]).sum() == pytest.approx(ring.area, rel=1e-12)
    assert shapely.area(pieces[src == 1]).sum() == 1.0
    # Pieces never overlap: their union has the same area as their sum.
    assert shapely.union_all(pieces).area == pytest.approx(shapely.area(pieces).sum(), rel=1e-9)


def test_overlap_area_against_a_subdivided_giant():
    giant = shapely.Point(0, 0).buffer(1000, quad_segs=1024)
    idx = PolygonIndex([giant], max_vertices=32)
    assert len(idx.pieces) > 50
    squares = shapely.box(np.arange(-1100, 1100, 100.0), 0, np.arange(-1000, 1200, 100.0), 100)
    expected = shapely.area(shapely.intersection(squares, giant))
    np.testing.assert_allclose(idx.overlap_area(squares), expected, rtol=1e-9, atol=1e-9)


def test_union_by_group_counts_overlap_once():
    g = [shapely.box(0, 0, 2, 2), shapely.box(1, 0, 3, 2), shapely.box(10, 10, 11, 11)]
    keys, u, n = union_by_group(g, ["b", "b", "a"])
    assert keys.tolist() == ["a", "b"] and n.tolist() == [1, 2]
    assert shapely.area(u).tolist() == [1.0, 6.0]


def test_clip_to_region_states_and_hole():
    region = shapely.Polygon(shapely.box(0, 0, 10, 10).exterior.coords, [shapely.box(4, 4, 6, 6).exterior.coords])
    geoms = [
        shapely.box(1, 1, 2, 2),
        shapely.box(-1, 1, 1, 2),
        shapely.box(20, 20, 21, 21),
        shapely.box(4.5, 4.5, 5.5, 5.5),
    ]
    inside, state = clip_to_region(geoms, region)
    assert state.tolist() == [2, 1, 0, 0]
    assert shapely.area(inside).tolist() == [1.0, 1.0, 0.0, 0.0]


def test_nearest_distance():
    tree = shapely.STRtree([shapely.box(0, 0, 1, 1), shapely.LineString([(10, 0), (10, 10)])])
    d, j = nearest_distance([shapely.box(3, 0, 4, 1), shapely.box(0.5, 0.5, 2, 2), shapely.Polygon()], tree)
    assert d[:2].tolist() == [2.0, 0.0] and np.isnan(d[2])
    assert j.tolist() == [0, 0, -1]


def test_nearest_distance_rings_match_the_tree_search_near_and_far(monkeypatch):
    # Lines and ponds over 1,000 x 1,000 (spacing ~100, first ring ~25): sites near them are
    # settled in the rings; sites 20,000 away are not (rings of 25, 50, ... 400) and go to
    # the tree's own search. Distances must equal a brute-force minimum either way.
    rng = np.random.default_rng(11)
    lines = shapely.linestrings(rng.uniform(0, 1000, (60, 1, 2)) + np.cumsum(rng.uniform(-30, 30, (60, 5, 2)), axis=1))
    ponds = shapely.buffer(shapely.points(rng.uniform(0, 1000, (40, 2))), rng.uniform(3, 20, 40))
    items = np.r_[lines, ponds]
    lo = np.r_[rng.uniform(-200, 1200, (3000, 2)), rng.uniform(20_000, 21_000, (5, 2))]
    sites = shapely.box(*lo.T, *(lo + rng.uniform(1, 15, (len(lo), 2))).T)
    monkeypatch.setattr(overlay, "THREADS", 2)
    monkeypatch.setattr(overlay, "_CHUNK", 256)
    d, j = nearest_distance(sites, shapely.STRtree(items))
    brute = shapely.distance(sites[:, None], items[None, :])
    np.testing.assert_array_equal(d, brute.min(axis=1))
    np.testing.assert_array_equal(brute[np.arange(len(sites)), j], d)  # the index is a nearest one
    assert (d == 0).sum() > 100 and (d > 400).sum() >= 5


def test_nearest_distance_tie_goes_to_the_lowest_index():
    tree = shapely.STRtree([shapely.Point(10, 0), shapely.Point(-10, 0), shapely.Point(0, 10)])
    d, j = nearest_distance([shapely.box(-1, -1, 1, 1)], tree)
    assert d.tolist() == [9.0] and j.tolist() == [0]


def test_uncovered_removes_overlapping_polygons_once():
    # Two overlapping 10 x 10 boxes and a far one; a 20 x 4 site across both boxes.
    idx = PolygonIndex([shapely.box(0, 0, 10, 10), shapely.box(5, 0, 15, 10), shapely.box(100, 100, 110, 110)])
    sites = [shapely.box(-5, 3, 15, 7), shapely.box(6, 6, 8, 8), shapely.box(50, 50, 51, 51)]
    rest, left, right = idx.uncovered(sites)
    # 20 x 4 = 80; the boxes cover x 0..15 of it, 60, once (their 5 x 4 overlap is not counted twice).
    assert shapely.area(rest).tolist() == [20.0, 0.0, 1.0]
    assert sorted(zip(left.tolist(), right.tolist(), strict=True)) == [(0, 0), (0, 1), (1, 0), (1, 1)]


def discs_and_boxes(seed: int, n_discs: int, n_boxes: int, side: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Random discs (radius 2-12) and boxes over 100 x 100: overlapping shapes to test overlays."""
    rng = np.random.default_rng(seed)
    discs = shapely.buffer(shapely.points(rng.uniform(0, 100, (n_discs, 2))), rng.uniform(2, 12, n_discs))
    lo = rng.uniform(0, 100, (n_boxes, 2))
    return discs, shapely.box(*lo.T, *(lo + rng.uniform(*side, (n_boxes, 2))).T)


def test_uncovered_matches_a_union_reference_in_threads(monkeypatch):
    polys, sites = discs_and_boxes(3, 60, 5000, (1, 8))
    monkeypatch.setattr(overlay, "THREADS", 2)
    monkeypatch.setattr(overlay, "_CHUNK", 256)  # many chunks, so the threads really split the work
    rest, _, _ = PolygonIndex(polys).uncovered(sites)
    expected = shapely.area(shapely.intersection(sites, shapely.union_all(polys)))
    np.testing.assert_allclose(shapely.area(sites) - shapely.area(rest), expected, atol=1e-6)
    assert (expected > 0).sum() > 1000


def test_parallel_keeps_order(monkeypatch):
    monkeypatch.setattr(overlay, "THREADS", 3)
    a = shapely.points(np.arange(10_000), 0)
    b = shapely.points(0, np.arange(10_000))
    np.testing.assert_allclose(
        parallel(shapely.distance, a, b), np.hypot(np.arange(10_000), np.arange(10_000)), rtol=1e-15
    )


def test_parallel_never_splits_a_group(monkeypatch):
    # Prepared geometries must not reach two threads at once (GEOS builds their indexes
    # lazily): with ``groups``, chunks are cut only where the key changes.
    monkeypatch.setattr(overlay, "THREADS", 2)
    monkeypatch.setattr(overlay, "_CHUNK", 100)
    groups = np.repeat(np.arange(40), np.arange(40) * 7 % 23 + 1)  # ragged runs, sorted
    seen: list[np.ndarray] = []

    def record(g: np.ndarray) -> np.ndarray:
        seen.append(g.copy())
        return g * 2

    out = parallel(record, groups, groups=groups)
    np.testing.assert_array_equal(out, groups * 2)
    assert len(seen) > 1
    assert sum(len(c) for c in seen) == len(groups)
    firsts = [set(c.tolist()) for c in seen]
    assert all(a.isdisjoint(b) for i, a in enumerate(firsts) for b in firsts[i + 1 :])


def test_pairs_match_a_brute_force_test_in_threads(monkeypatch):
    polys, sites = discs_and_boxes(5, 40, 6000, (0.5, 4))
    monkeypatch.setattr(overlay, "THREADS", 2)
    monkeypatch.setattr(overlay, "_CHUNK", 128)
    idx = PolygonIndex(polys)
    left, right = idx.pairs(sites)
    hit = shapely.intersects(sites[:, None], idx.pieces[None, :])
    expected_left, expected_right = np.nonzero(hit)
    np.testing.assert_array_equal(left, expected_left)
    np.testing.assert_array_equal(right, expected_right)
    assert len(left) > 1000


def test_chunk_lines_covers_the_line_exactly():
    line = shapely.LineString(np.c_[np.arange(1000.0), np.sin(np.arange(1000.0))])
    multi = shapely.MultiLineString([[(0, 0), (1, 1)], [(5, 5), (6, 6), (7, 7)]])
    pieces, src = chunk_lines([line, multi, shapely.LineString()], max_vertices=64)
    assert shapely.get_num_coordinates(pieces).max() <= 64
    assert set(src.tolist()) == {0, 1}
    assert shapely.length(pieces[src == 0]).sum() == pytest.approx(line.length, rel=1e-12)
    assert shapely.equals(shapely.line_merge(shapely.union_all(pieces[src == 0])), line)


def test_edge_distance_within_is_shapely_distance_within_the_reach():
    """The indexed distance to a region is shapely's, float for float, wherever it is within the reach.

    A ragged region with a hole and an island; parcels all around, in the hole, a speck inside
    (0, though its ring is far from the region's), an empty geometry (NaN) and a missing one.
    """
    from esc_gis.measure import edge_distance_within

    rng = np.random.default_rng(540)
    ang = np.sort(rng.uniform(0, 2 * np.pi, 300))
    r = 1000 + rng.uniform(-200, 200, 300)
    hole = shapely.Point(0, 0).buffer(300, quad_segs=16)
    region = shapely.MultiPolygon(
        [
            shapely.Polygon(np.c_[r * np.cos(ang), r * np.sin(ang)], [hole.exterior.coords[::-1]]),
            shapely.Point(3000, 0).buffer(200, quad_segs=2),
        ]
    )
    sites = shapely.buffer(shapely.points(rng.uniform(-4000, 4000, (5000, 2))), rng.uniform(5, 60, 5000), quad_segs=2)
    sites = np.r_[sites, [shapely.Polygon(), shapely.Point(0, 0).buffer(10), shapely.Point(0, 800).buffer(1), None]]
    expected = shapely.distance(sites, region)
    for reach in (0.0, 50.0, 500.0, 3000.0, 1e9):
        got = edge_distance_within(sites, region, reach)
        within = expected <= reach
        assert np.array_equal(np.isnan(got), np.isnan(expected))
        assert np.array_equal(got[within], expected[within])
        assert np.array_equal(got <= reach, within)
    assert edge_distance_within(sites, region, 0.0)[-2] == 0.0  # the speck inside
