"""How a streamed run cuts its layer into jobs, and how a job reads its features.

A common plan is screened whole in one batch (§ 540-5: "a common plan of development ...
shall be considered as one"), so the cutting decides which sites are added up: each case
here is small enough to check by hand. Layers are written in code (GeoPackage, whose feature
ids rise in reading order, and FlatGeobuf, which has no feature-id column).
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import shapely

from esc_gis.errors import LayerReadError
from esc_gis.screening.batches import Job, _batches, _jobs, _read_frame, plan_jobs

NONE = np.zeros(0, dtype=np.int64)


def _layer(tmp_path: Path, n: int = 6, ext: str = ".gpkg", *, decoy: bool = False) -> Path:
    """``n`` points ``s0`` ... along a line, in EPSG:7594; the file's own feature ids.

    With ``decoy``, the GeoPackage's first layer is another one (``roads``), so a read that
    forgets the layer's name reads the wrong features.
    """
    xy = np.arange(n) * 100.0
    frame = gpd.GeoDataFrame({"site_id": [f"s{i}" for i in range(n)]}, geometry=shapely.points(xy, xy), crs="EPSG:7594")
    path = tmp_path / f"sites{ext}"
    if decoy:
        roads = frame.assign(site_id=[f"road {i}" for i in range(n)])
        roads.to_file(path, layer="roads", engine="pyogrio")
    frame.to_file(path, layer="sites", engine="pyogrio")
    return path


def _pos(jobs: list[Job]) -> list[list[int]]:
    return [j.pos.tolist() for j in jobs]


def test_a_spatial_batching_takes_the_order_given_and_a_plan_goes_with_its_first_site_in_it(tmp_path):
    """Six sites batched two at a time in reverse order; sites 1 and 4 one plan, its first site in that order 4."""
    src = _layer(tmp_path)
    numbers = np.arange(1, 7)
    fids = np.array([11, 12, 13, 14, 15, 16])
    jobs = plan_jobs(
        src, "sites", None, numbers, 2, np.array([1, 4]), np.array([1, 1]), order=np.arange(6)[::-1], fids=fids
    )
    # Ranks 0-1 are sites 5 and 4, and 4 brings its plan's site 1; ranks 2-3 are 3 and 2;
    # ranks 4-5 are 1 (already screened with its plan) and 0. Each batch in file order.
    assert _pos(jobs) == [[1, 4, 5], [2, 3], [0]]
    assert [j.numbers.tolist() for j in jobs] == [[2, 5, 6], [3, 4], [1]]
    assert [j.fids.tolist() for j in jobs] == [[12, 15, 16], [13, 14], [11]]
    assert all((j.start, j.stop, j.fid_range, j.where) == (0, 0, None, None) for j in jobs)


def test_a_plan_counted_from_its_first_site_in_the_new_order_not_the_files(tmp_path):
    """Sites 0 and 5 one plan: in reverse order its first site is 5 (rank 0), so batch 1 holds both."""
    src = _layer(tmp_path)
    jobs = plan_jobs(
        src,
        "sites",
        None,
        np.arange(1, 7),
        2,
        np.array([0, 5]),
        np.array([0, 0]),
        order=np.arange(6)[::-1],
        fids=np.arange(1, 7),
    )
    assert _pos(jobs) == [[0, 4, 5], [2, 3], [1]]


def test_two_plans_each_with_its_own_first_site(tmp_path):
    """Plans {0, 3} and {1, 2} in the order 3, 2, 1, 0, one site a batch: each plan in the batch of its first."""
    src = _layer(tmp_path, 4)
    held, lead = np.array([0, 1, 2, 3]), np.array([0, 1, 1, 0])
    jobs = plan_jobs(
        src, "sites", None, np.arange(1, 5), 1, held, lead, order=np.array([3, 2, 1, 0]), fids=np.arange(4)
    )
    assert _pos(jobs) == [[0, 3], [1, 2]]


def test_a_batch_emptied_by_its_plans_is_left_out_and_the_batches_after_it_kept(tmp_path):
    """One site a batch; sites 0 and 1 one plan: batch 1 went whole with it to batch 0, batches 2 and 3 follow."""
    src = _layer(tmp_path, 4)
    jobs = plan_jobs(src, "sites", None, np.arange(1, 5), 1, np.array([0, 1]), np.array([0, 0]), order=np.arange(4))
    assert _pos(jobs) == [[0, 1], [2], [3]]


def test_without_ids_given_a_spatial_batching_reads_them_from_the_file_where_selected(tmp_path):
    """The ids of the features the where clause selects, not their positions: 1, 3, 4, 5, 6 (s1 left out);
    the layer named, not the file's first."""
    src = _layer(tmp_path, decoy=True)
    where = "site_id <> 's1'"
    jobs = plan_jobs(src, "sites", where, np.array([1, 3, 4, 5, 6]), 3, NONE, NONE, order=np.array([4, 3, 2, 1, 0]))
    assert _pos(jobs) == [[2, 3, 4], [0, 1]]
    assert [j.fids.tolist() for j in jobs] == [[4, 5, 6], [1, 3]]
    assert [j.numbers.tolist() for j in jobs] == [[4, 5, 6], [1, 3]]
    assert [j.where for j in jobs] == [where, where]
    frames = [_read_frame(j) for j in jobs]
    assert [f["site_id"].tolist() for f in frames] == [["s3", "s4", "s5"], ["s0", "s2"]]


def test_file_order_batches_read_a_geopackage_range_by_id_and_plans_past_it_by_id(tmp_path):
    src = _layer(tmp_path, 7)
    held, lead = np.array([1, 5]), np.array([1, 1])
    jobs = _jobs(src, "sites", None, np.arange(1, 8), 3, held, lead)
    assert _pos(jobs) == [[0, 1, 2, 5], [3, 4], [6]]
    assert [(j.start, j.stop) for j in jobs] == [(0, 3), (3, 6), (6, 7)]
    assert [j.fid_range for j in jobs] == [("fid", 1, 3), ("fid", 4, 6), ("fid", 7, 7)]
    assert jobs[0].fids.tolist() == [6] and jobs[1].fids is None and jobs[2].fids is None
    assert [_read_frame(j)["site_id"].tolist() for j in jobs] == [["s0", "s1", "s2", "s5"], ["s3", "s4"], ["s6"]]


def test_file_order_batches_of_a_layer_without_id_column_skip_to_their_range(tmp_path):
    """FlatGeobuf: no feature-id column, so ranges are read by skipping; no plan, so no id is read."""
    src = _layer(tmp_path, 5, ".fgb")
    jobs = _jobs(src, "sites", None, np.arange(1, 6), 2, NONE, NONE)
    assert [(j.start, j.stop, j.fid_range, j.fids) for j in jobs] == [
        (0, 2, None, None),
        (2, 4, None, None),
        (4, 5, None, None),
    ]
    # FlatGeobuf's spatial index put the features in its own order: the file's reading order counts.
    s = pyogrio.read_dataframe(src)["site_id"].tolist()
    assert [_read_frame(j)["site_id"].tolist() for j in jobs] == [s[0:2], s[2:4], s[4:]]
    # A plan reaching past its batch: its later site is read by its id (FlatGeobuf's from 0).
    jobs = _jobs(src, "sites", None, np.arange(1, 6), 2, np.array([0, 3]), np.array([0, 0]))
    assert _pos(jobs) == [[0, 1, 3], [2], [4]]
    assert jobs[0].fids.tolist() == [3] and jobs[0].fid_range is None
    assert [_read_frame(j)["site_id"].tolist() for j in jobs] == [[s[0], s[1], s[3]], [s[2]], [s[4]]]


def test_a_range_by_id_keeps_the_where_clause_and_ends_its_comment(tmp_path):
    """The user's clause with a trailing -- comment still selects; the range is cut within it."""
    src = _layer(tmp_path, 6)
    where = "site_id <> 's2' -- not the school"
    numbers = np.array([1, 2, 4, 5, 6])
    jobs = _jobs(src, "sites", where, numbers, 2, NONE, NONE)
    assert [j.fid_range for j in jobs] == [("fid", 1, 2), ("fid", 4, 5), ("fid", 6, 6)]
    assert [_read_frame(j)["site_id"].tolist() for j in jobs] == [["s0", "s1"], ["s3", "s4"], ["s5"]]


def test_a_job_whose_range_no_longer_holds_its_features_is_refused(tmp_path):
    src = _layer(tmp_path, 4)
    job = Job(src, "sites", None, 0, 3, np.arange(3), np.arange(1, 4), None, ("fid", 1, 4))
    with pytest.raises(LayerReadError, match="read 4 features where 3 were selected before"):
        _read_frame(job)


def test_batches_screen_a_plan_in_the_batch_of_its_first_site():
    held, lead = np.array([1, 2, 6]), np.array([1, 1, 1])
    assert [(a, b, p.tolist()) for a, b, p in _batches(7, 3, held, lead)] == [
        (0, 3, [0, 1, 2, 6]),
        (3, 6, [3, 4, 5]),
        (6, 7, []),
    ]
