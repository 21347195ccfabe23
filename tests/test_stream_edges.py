"""Edges of the streamed engine (esc_gis.screening.stream): the layer's checks before any batch, the plans'
positions, the batches' contents, the limits given to each batch, and what the run reports.

Tiny layers made in tmp_path (EPSG:7594 feet, as tests/test_stream.py), or the private helpers
called directly with arrays, so each test is fast and names one behaviour.
"""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyogrio
import pytest
import shapely

from esc_gis.errors import CoordinatesNotInCRSError, CRSError, LayerReadError
from esc_gis.screening import batches, stream
from esc_gis.screening.batches import BatchOut
from esc_gis.screening.stream import screen_to_file

from .conftest import CRS, X0, Y0

_SIDE = 60.0


def _frame(ids: list[str | None], *, crs: str | None = CRS, **cols: list) -> gpd.GeoDataFrame:
    """Squares of 60 ft in a row, inside the test Village, one per id."""
    geoms = [shapely.box(X0 + 50 + 90 * i, Y0 + 50, X0 + 50 + 90 * i + _SIDE, Y0 + 50 + _SIDE) for i in range(len(ids))]
    return gpd.GeoDataFrame({"site_id": ids, **cols}, geometry=geoms, crs=crs)


def _write(frame: gpd.GeoDataFrame, path: Path, **kw) -> Path:
    """Write with pyogrio, quietly (a frame without a CRS is meant)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pyogrio.write_dataframe(frame, path, **kw)
    return path


# --- _open_sites: the layer's checks, once, before any batch ---------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_an_unreadable_file_is_refused_in_the_readers_words_keeping_gdals(tmp_path):
    """A SQLite file named .gpkg without GeoPackage tables: LayerReadError with the one unreadable
    message, naming the file and keeping GDAL's own words (the format was recognised)."""
    src = tmp_path / "sites.gpkg"
    with sqlite3.connect(src) as db:
        db.execute("CREATE TABLE x (a)")
    fix = (
        "Fix: give a GeoPackage (.gpkg), a shapefile (.shp with its .shx, .dbf and .prj), GeoJSON, FlatGeobuf, "
        "GeoParquet, a CSV with a WKT column, or a File Geodatabase (.gdb); if it is one, it may be cut short or "
        "damaged: export it again."
    )
    expected = (
        f"{src}: cannot be read as a vector layer (At least one of the required GeoPackage tables, "
        f"gpkg_spatial_ref_sys or gpkg_contents, is missing). {fix}"
    )
    with pytest.raises(LayerReadError) as err:
        batches._open_sites(src, None, None)
    assert str(err.value) == expected
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_a_layer_whose_coordinates_cannot_be_in_its_own_crs_is_refused(tmp_path):
    """Feet labelled EPSG:4326 (degrees) by the file itself, no --assume-crs: the layer's own CRS is
    read and the coordinates refused, naming the file, before any batch."""
    src = _write(_frame(["a", "b"], crs="EPSG:4326"), tmp_path / "sites.gpkg")
    with pytest.raises(CoordinatesNotInCRSError, match=str(src)):
        batches._open_sites(src, None, None)


def test_the_total_bounds_are_computed_where_the_driver_has_none_at_hand(tmp_path):
    """A CSV (no bounds in a header) without a CRS, given assume_crs="EPSG:4326": its bounds are
    computed (forced) and its feet refused as degrees, naming the file."""
    src = _write(_frame(["a", "b", "c"], crs=None), tmp_path / "sites.csv", GEOMETRY="AS_WKT")
    assert pyogrio.read_info(src).get("total_bounds") is None  # the driver's fast answer: none
    with pytest.raises(CoordinatesNotInCRSError, match=str(src)):
        batches._open_sites(src, None, None, "EPSG:4326")


def test_a_layer_without_crs_and_no_assumed_one_is_opened_unchecked(tmp_path):
    """No CRS in the file and no --assume-crs: nothing to check the coordinates against here (the
    engine says what is missing later); the layer's name, feature numbers and count come back."""
    src = _write(_frame(["a", "b", "c"], crs=None), tmp_path / "sites.gpkg", layer="parcels")
    name, numbers, total = batches._open_sites(src, None, None)
    assert name == "parcels" and total == 3
    assert numbers.tolist() == [1, 2, 3]


def test_an_assumed_crs_that_is_none_is_refused_naming_the_option(tmp_path):
    """A file without a CRS and assume_crs="nonsense": CRSError naming the keyword, word for word."""
    src = _write(_frame(["a"], crs=None), tmp_path / "sites.gpkg")
    with pytest.raises(CRSError) as err:
        batches._open_sites(src, None, None, "nonsense")
    assert str(err.value) == "assume_crs= 'nonsense' is not a coordinate reference system; use e.g. 'EPSG:7594'."


def test_a_where_clause_on_a_second_layer_numbers_that_layers_features(tmp_path):
    """A GeoPackage of two layers, the sites in the second, with a where clause: the feature
    numbers are the second layer's (the first layer is not read, nor is the file refused as ambiguous)."""
    src = tmp_path / "two.gpkg"
    _write(_frame(["x1", "b", "x3", "x4", "x5"]), src, layer="other")
    _write(_frame(["a", "b", "c", "d"]), src, layer="sites")
    name, numbers, total = batches._open_sites(src, "sites", "site_id IN ('b', 'd')")
    assert (name, numbers.tolist(), total) == ("sites", [2, 4], 4)


def test_a_layer_of_one_feature_is_not_empty(tmp_path):
    """One feature is a layer to screen: feature number 1 of 1."""
    src = _write(_frame(["a"]), tmp_path / "one.gpkg")
    _, numbers, total = batches._open_sites(src, None, None)
    assert numbers.tolist() == [1] and total == 1


def test_an_empty_layer_is_refused_saying_so_with_and_without_a_where_clause(tmp_path):
    """No feature read: LayerReadError "<file>: the layer is empty (no features)." and, when a where
    clause picked none, "(no features where <clause>)"."""
    src = _write(_frame(["a", "b"]), tmp_path / "sites.gpkg")
    with pytest.raises(LayerReadError) as err:
        batches._open_sites(src, None, "site_id = 'zz'")
    assert str(err.value) == f"{src}: the layer is empty (no features where site_id = 'zz')."
    empty = _write(_frame([]), tmp_path / "empty.gpkg")
    with pytest.raises(LayerReadError) as err:
        batches._open_sites(empty, None, None)
    assert str(err.value) == f"{empty}: the layer is empty (no features)."


# --- _limits_for: each batch gets the limits of its own sites ----------------------------------


def test_limits_keyed_by_the_id_field_are_matched_to_site_ids_of_a_batch():
    """id_field names the limits' column but the batch has site_id: the limits are matched on
    their id_field to the batch's site_id, keeping only the batch's sites' limits."""
    frame = pd.DataFrame({"site_id": ["a", "b"]})
    dist = pd.DataFrame({"PID": ["a", "z", "b"], "v": [1, 2, 3]})
    assert batches._limits_for(dist, frame, "PID")["v"].tolist() == [1, 3]


def test_limits_with_site_id_are_matched_to_a_batch_keyed_by_its_id_field():
    """The batch has the id_field column, the limits only site_id: matched across, the batch's only."""
    frame = pd.DataFrame({"PID": ["a", "b"]})
    dist = pd.DataFrame({"site_id": ["z", "b", "a"], "v": [1, 2, 3]})
    assert batches._limits_for(dist, frame, "PID")["v"].tolist() == [2, 3]


def test_limits_that_cannot_be_matched_are_passed_whole():
    """A batch with neither the id field nor site_id: the limits go whole to the engine (which
    says what is wrong), not a KeyError here."""
    frame = pd.DataFrame({"name": ["a"]})
    dist = pd.DataFrame({"site_id": ["a", "z"]})
    assert batches._limits_for(dist, frame, "PID") is dist
    assert batches._limits_for(None, frame, "PID") is None


# --- _plan_positions: which sites are common plans ----------------------------------------------


def test_only_named_plans_of_more_than_one_site_are_held(tmp_path):
    """Plan ids compared stripped; blank and missing ids are no plan (however many), a plan of one
    site is no common plan: held are the sites of A (1st, 3rd) and C (8th, 9th), each with its first."""
    plans = ["A", "", "A", "  ", "B", None, "", "C", " C", "D"]
    src = _write(_frame([f"s{i}" for i in range(10)], plan_id=plans), tmp_path / "sites.gpkg")
    held, lead = batches._plan_positions(src, "sites", None, "plan_id", 10)
    assert held.tolist() == [0, 2, 7, 8] and lead.tolist() == [0, 0, 7, 7]


def test_no_plan_column_holds_no_site(tmp_path):
    """Without a plan column, and with plans of one site only, no position is held."""
    for held, lead in [
        batches._plan_positions(tmp_path / "unread.gpkg", None, None, None, 5),
        batches._plan_positions(
            _write(_frame(["a", "b"], plan_id=["P", "Q"]), tmp_path / "s.gpkg"), "s", None, "plan_id", 2
        ),
    ]:
        assert len(held) == 0 and len(lead) == 0 and held.dtype == np.int64


# --- _batches: what each batch screens ------------------------------------------------------------


def _reference(n: int, size: int, held: np.ndarray, lead: np.ndarray) -> list[tuple[int, int, list[int]]]:
    """The batches as the docstring says them: own free sites and the plans it leads, ascending,
    those before stop first."""
    plan_of = dict(zip(held.tolist(), lead.tolist(), strict=True))
    out = []
    for start in range(0, n, size):
        stop = min(n, start + size)
        mine = [p for p in range(start, stop) if p not in plan_of]
        mine += [p for p, f in plan_of.items() if start <= f < stop]
        out.append((start, stop, sorted(p for p in mine if p < stop) + sorted(p for p in mine if p >= stop)))
    return out


def _got(n: int, size: int, held: np.ndarray, lead: np.ndarray) -> list[tuple[int, int, list[int]]]:
    return [(a, b, pos.tolist()) for a, b, pos in batches._batches(n, size, held, lead)]


def test_each_batch_screens_its_sites_and_the_plans_it_leads_in_order():
    """Two interleaved plans led from batch 0 (sites 0, 15 and 1, 12) and one from batch 1 (site 10,
    reaching 20 = batch 2's start): batch 0 screens 0-9 and 12, 15 (ascending); batch 1 screens 10,
    its free sites and 20, not 12 or 15; batch 2 does not screen 20 again."""
    held = np.array([0, 1, 10, 12, 15, 20])
    lead = np.array([0, 1, 10, 1, 0, 10])
    got = _got(25, 10, held, lead)
    assert got == [
        (0, 10, [*range(10), 12, 15]),
        (10, 20, [10, 11, 13, 14, 16, 17, 18, 19, 20]),
        (20, 25, [21, 22, 23, 24]),
    ]
    assert got == _reference(25, 10, held, lead)


def test_a_plan_site_at_the_next_batchs_start_is_screened_once_with_its_plan():
    """A plan led by site 3 with a site at position 4, in batches of 4: 4 is screened with batch 0,
    after its own sites, once, and not by batch 1."""
    held, lead = np.array([3, 4]), np.array([3, 3])
    assert _got(8, 4, held, lead) == [(0, 4, [0, 1, 2, 3, 4]), (4, 8, [5, 6, 7])]


def test_many_plans_sharing_batches_keep_their_later_sites_ascending():
    """Dozens of plans whose sites alternate between two leading batches (sorting their batch
    numbers must keep file order): every batch's later sites come ascending, as the reference."""
    rng = np.random.default_rng(3)
    n, size = 400, 20
    lead_of = {}
    for p in range(60):  # plans led from batch 0 or 1, reaching anywhere after
        first = int(rng.integers(0, 40))
        if first in lead_of:
            continue
        lead_of[first] = first
        for s in rng.choice(np.arange(40, n), 3, replace=False):
            lead_of.setdefault(int(s), first)
        del p
    held = np.array(sorted(lead_of))
    lead = np.array([lead_of[h] for h in held])
    assert _got(n, size, held, lead) == _reference(n, size, held, lead)


# --- _jobs: what each job reads -----------------------------------------------------------------


def test_a_layer_without_ids_and_plans_within_a_batch_is_not_read_for_ids(tmp_path, monkeypatch):
    """A FlatGeobuf (no feature-id column) whose plan (sites 2, 3) lies in one batch of 4: no
    feature ids are read (no second pass over the file), and no job reads by id."""
    src = _write(_frame([f"s{i}" for i in range(8)]), tmp_path / "sites.fgb")

    def no(*a, **k):
        raise AssertionError("feature ids read")

    monkeypatch.setattr(batches, "_read_fields", no)
    jobs = batches._jobs(src, "sites", None, np.arange(1, 9), 4, np.array([1, 2]), np.array([1, 1]))
    assert [(j.start, j.stop, j.pos.tolist(), j.fids, j.fid_range) for j in jobs] == [
        (0, 4, [0, 1, 2, 3], None, None),
        (4, 8, [4, 5, 6, 7], None, None),
    ]


def test_a_plan_site_at_the_next_batchs_start_is_read_by_its_id(tmp_path):
    """A GeoPackage plan led by the 2nd feature with a site at the 5th, in batches of 4: batch 0
    reads features 1-4 by id range and the 5th by its id; batch 1 reads 5-8."""
    src = _write(_frame([f"s{i}" for i in range(8)]), tmp_path / "sites.gpkg")
    jobs = batches._jobs(src, "sites", None, np.arange(1, 9), 4, np.array([1, 4]), np.array([1, 1]))
    assert jobs[0].pos.tolist() == [0, 1, 2, 3, 4] and jobs[0].numbers.tolist() == [1, 2, 3, 4, 5]
    assert jobs[0].fids.tolist() == [5] and jobs[0].fid_range == ("fid", 1, 4)
    assert jobs[1].fids is None and jobs[1].fid_range == ("fid", 5, 8)


def test_ids_that_do_not_rise_in_reading_order_are_not_read_by_range(tmp_path, monkeypatch):
    """Feature ids 10, 30, 20, 40 in reading order (all after the first, not rising): the batches are
    read by position, not by id range; ids rising 10, 20, 30, 40 are read by range."""
    src = _write(_frame(["a", "b", "c", "d"]), tmp_path / "sites.gpkg")
    none = np.zeros(0, dtype=np.int64)
    for ids, ranges in [([10, 30, 20, 40], [None, None]), ([10, 20, 30, 40], [("fid", 10, 20), ("fid", 30, 40)])]:
        monkeypatch.setattr(batches, "_read_fields", lambda *a, ids=ids: pa.table({"fid": ids}))
        jobs = batches._jobs(src, "sites", None, np.arange(1, 5), 2, none, none)
        assert [j.fid_range for j in jobs] == ranges


# --- _Collector.take: the run's reach ----------------------------------------------------------


def test_the_reach_of_the_run_is_the_union_of_its_batches_bounds():
    """Two batches' bounds (0, 0, 10, 100) and (5, -5, 50, 20) of the same input: the run's reach
    is (0, -5, 50, 100), each corner taken from its own side."""
    c = stream._Collector(Path("s.gpkg"), np.arange(1, 5))
    rows = pa.table({"a": [1]})
    for bounds, kept in [((0, 0, 10, 100), [0]), ((5, -5, 50, 20), [1])]:
        meta = {"reach": [("Sites s.gpkg", bounds, CRS)]}
        assert c.take(BatchOut(rows, np.array(kept), None, [], 0, meta)) is not None
    b, crs = c.reach["Sites s.gpkg"]
    assert b.tolist() == [0.0, -5.0, 50.0, 100.0] and crs == CRS


# --- screen_to_file: a run with nothing screened, and the GeoPackage's description -------------


def _all_skipped(tmp_path, layers_path, skipped):
    from esc_gis.screening import AllSkippedError

    src = _write(_frame(["a", "b", "c", "d"]), tmp_path / "sites.gpkg")

    def engine(jobs, ctx):
        for j in jobs:
            yield BatchOut(None, j.pos[:0], skipped(j), [], 0, {})

    with pytest.raises(AllSkippedError) as err:
        screen_to_file(src, tmp_path / "out.gpkg", layers=layers_path, batch_rows=2, engine=engine)
    return src, err.value


def test_no_site_screened_and_none_skipped_is_said_with_an_empty_list(tmp_path, layers_path):
    """Every batch came back with no row and nothing skipped: AllSkippedError "<file>: no site was
    screened. (all 4 features, in batches of 2)", with an empty list of skipped features."""
    src, err = _all_skipped(tmp_path, layers_path, lambda j: None)
    assert str(err) == f"{src}: no site was screened. (all 4 features, in batches of 2)"
    assert len(err.skipped) == 0


def test_the_skipped_features_of_every_batch_are_listed_numbered_afresh(tmp_path, layers_path):
    """Each batch skipped its two features: the error lists the four, indexed 0-3 (not 0, 1, 0, 1)."""
    _, err = _all_skipped(
        tmp_path, layers_path, lambda j: pd.DataFrame({"feature": (j.pos + 1).tolist()}, index=[0, 1])
    )
    assert err.skipped["feature"].tolist() == [1, 2, 3, 4]
    assert err.skipped.index.tolist() == [0, 1, 2, 3]


def test_a_streamed_geopackage_gives_its_layer_the_screenings_title_and_abstract(tmp_path, layers_path):
    """The output's "screening" table carries the toolkit's title and abstract in gpkg_contents."""
    from esc_gis.styles import LAYER_DESCRIPTIONS

    src = _write(_frame(["a", "b", "c"]), tmp_path / "sites.gpkg")
    out = tmp_path / "out.gpkg"
    screen_to_file(src, out, layers=layers_path, batch_rows=2)
    with sqlite3.connect(out) as db:
        row = db.execute("SELECT identifier, description FROM gpkg_contents WHERE table_name = 'screening'").fetchone()
    assert row == LAYER_DESCRIPTIONS["screening"]
