"""Streamed screening (batches) writes what the whole-file run writes, row for row.

Small batches (a few features) over small layers made in code, so that every batch boundary,
a common plan spread over several batches, a where clause and the V10 skip rule are crossed,
with the answers checked against the whole-file run, which the rest of the suite pins to the law.
"""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest

from esc_gis.errors import EscGisWarning, FarFromZoneWarning, LayerReadError, OutputFormatError, ValidationError
from esc_gis.io import write_layer
from esc_gis.screening import screen_run
from esc_gis.screening.stream import screen_to_file

from .conftest import CRS, K, square_sqft

PARCELS = Path(__file__).parent / "data" / "parcels" / "vernon_v10_cut.fgb"


def _sites(n: int = 40) -> gpd.GeoDataFrame:
    """``n`` sites in the test Village (3,000 to 5,000 sq ft), three of them one common plan of 4,500 sq ft."""
    rng = np.random.default_rng(7)
    areas = rng.uniform(3000, 5000, n)
    plan = np.full(n, None, dtype=object)
    areas[[2, 17, 33]] = 1500.0  # 1,500 sq ft each: no permit alone, 4,500 sq ft together (§ 540-5)
    plan[[2, 17, 33]] = "P1"
    geoms = [square_sqft(50 + 90 * (i % 20), 50 + 120 * (i // 20), a) for i, a in enumerate(areas)]
    return gpd.GeoDataFrame({"site_id": [f"s{i:02d}" for i in range(n)], "plan_id": plan}, geometry=geoms, crs=CRS)


def _whole(src: Path, out: Path, layers, **kw) -> pd.DataFrame:
    run = screen_run(str(src), layers=layers, **kw)
    write_layer(run.result, out)
    return _read(out)


def screen_cli(src: Path, layers: Path, out: Path, *extra: object):
    """Run ``esc-gis screen SRC --layers LAYERS -o OUT EXTRA...`` in process; return click's result."""
    from click.testing import CliRunner

    from esc_gis.cli.main import cli

    return CliRunner().invoke(cli, ["screen", str(src), "--layers", str(layers), "-o", str(out), *map(str, extra)])


def same(streamed: pd.DataFrame, whole: pd.DataFrame) -> None:
    """Equal row for row; the types too, but for a column empty in the whole file (a GeoParquet
    written whole types it null; a streamed one as text, since a later batch may fill it)."""
    assert list(streamed.columns) == list(whole.columns)
    empty = [c for c in whole.columns if whole[c].isna().all()]
    assert all(streamed[c].isna().all() for c in empty)
    pd.testing.assert_frame_equal(streamed.drop(columns=empty), whole.drop(columns=empty))


def _read(path: Path) -> pd.DataFrame:
    if path.suffix == ".csv":
        return pd.read_csv(path)
    if path.suffix == ".parquet":
        return gpd.read_parquet(path)
    return pyogrio.read_dataframe(path)


@pytest.mark.parametrize("ext", [".gpkg", ".parquet", ".csv"])
def test_streamed_output_equals_the_whole_file_run(tmp_path, layers_path, ext):
    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    whole = _whole(src, tmp_path / f"whole{ext}", layers_path)
    run = screen_to_file(src, tmp_path / f"stream{ext}", layers=layers_path, batch_rows=7)
    streamed = _read(tmp_path / f"stream{ext}")
    same(streamed, whole)
    assert run.rows == 40 and run.batches == 6
    # The plan's three sites, in three batches, were added up: 4,500 sq ft needs a permit.
    plan = streamed.set_index("site_id").loc[["s02", "s17", "s33"]]
    assert list(plan["permit"]) == ["required"] * 3
    assert plan["plan_disturbed_sqft"].iloc[0] == pytest.approx(4500.0, rel=1e-6)


def test_where_clause_and_batch_sizes(tmp_path, layers_path):
    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    where = "site_id >= 's10'"
    whole = _whole(src, tmp_path / "whole.gpkg", layers_path, sites_where=where)
    for size in (1, 3, 30, 1000):
        out = tmp_path / f"s{size}.gpkg"
        run = screen_to_file(src, out, layers=layers_path, sites_where=where, batch_rows=size)
        same(_read(out), whole)
        assert run.not_selected == 10


# The Vernon County cut lies outside the Village's measuring zone (warned, and pinned in test_layers.py).
@pytest.mark.filterwarnings("ignore::esc_gis.errors.FarFromZoneWarning")
def test_real_v10_parcels_with_skipped_features(tmp_path):
    """The real Vernon County cut: non-parcels (rights of way, water) are skipped in every batch
    and listed by their feature numbers in the file, as the whole-file run lists them."""
    whole_run = screen_run(str(PARCELS))
    write_layer(whole_run.result, tmp_path / "whole.gpkg")
    # Batches of 20: one of them holds rights of way only, listed and passed over.
    run = screen_to_file(PARCELS, tmp_path / "stream.gpkg", batch_rows=20)
    same(_read(tmp_path / "stream.gpkg"), _read(tmp_path / "whole.gpkg"))
    assert run.skipped is not None and len(whole_run.skipped) > 0
    assert list(run.skipped["feature"]) == list(whole_run.skipped["feature"])
    assert run.schema == whole_run.schema == "v10"
    # What the run says of itself is what the whole-file run says.
    from esc_gis.screening import run_findings

    assert run.output == tmp_path / "stream.gpkg" and run.rows == len(whole_run.result)
    assert run.rule == whole_run.rule and run.rule
    assert run.id_field == whole_run.id_field and run.generated_ids == len(whole_run.generated_ids)
    assert run.run_findings == run_findings(whole_run.result)
    assert list(run.skipped.index) == list(range(len(run.skipped)))  # one table, numbered afresh


def test_every_problem_of_every_batch_at_once_and_nothing_written(tmp_path, layers_path):
    sites = _sites()
    sites.loc[3, "site_id"] = "s30"  # the same id as feature 31, two batches later
    sites.loc[8, "geometry"] = None  # no geometry, batch 2
    sites.loc[36, "geometry"] = None  # no geometry, batch 6
    src = tmp_path / "sites.gpkg"
    sites.to_file(src)
    out = tmp_path / "out.gpkg"
    with pytest.raises(ValidationError) as err:
        screen_to_file(src, out, layers=layers_path, batch_rows=7)
    rows = sorted(p.row for p in err.value.problems)
    assert rows == [9, 31, 37]
    # The id repeated across batches is told as such, with what to do (the batches' own repeats are the engine's).
    (dup,) = [p for p in err.value.problems if p.row == 31]
    assert (dup.message, dup.fix) == ("its id is also an earlier feature's.", "give each site its own id.")
    assert {p.source for p in err.value.problems} == {str(src)}  # each names the file, not a batch's frame
    with pytest.raises(ValidationError) as whole:
        screen_run(str(src), layers=layers_path)
    assert sorted(p.row for p in whole.value.problems) == rows  # the rows the whole-file run names
    assert not out.exists() and not list(tmp_path.glob("*.tmp*"))


def test_geojson_is_written_whole_only(tmp_path, layers_path):
    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    with pytest.raises(OutputFormatError, match="written whole only"):
        screen_to_file(src, tmp_path / "out.geojson", layers=layers_path)


def test_cli_batch_rows_writes_the_same_rows_and_sidecars(tmp_path, layers_path):

    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    whole, streamed = tmp_path / "whole.gpkg", tmp_path / "streamed.gpkg"
    for out, extra in ((whole, []), (streamed, ["--batch-rows", "9"])):
        res = screen_cli(src, layers_path, out, *extra)
        assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())  # the console wraps long lines
    assert "Wrote 40 rows to" in said and "in 5 batch(es) of up to 9" in said
    same(_read(streamed), _read(whole))
    # The checks not made (no DEM in the test layer set) are listed beside each output alike.
    notes = [
        p.read_text() for p in (tmp_path / "whole.gpkg.run_findings.csv", tmp_path / "streamed.gpkg.run_findings.csv")
    ]
    assert notes[0] == notes[1]
    res = screen_cli(src, layers_path, tmp_path / "m.gpkg", "--batch-rows", 9, "--map", tmp_path / "m.html")
    assert res.exit_code == 2 and "without --profile-by and --map" in res.output


def test_a_plan_column_under_its_alias_is_added_up_in_batches_too(tmp_path, layers_path):
    """The engine reads a layer's PLAN as its plan_id: batches of one site must add the plan up too."""
    sites = _sites().rename(columns={"plan_id": "PLAN"})
    src = tmp_path / "sites.gpkg"
    sites.to_file(src)
    whole = _whole(src, tmp_path / "whole.gpkg", layers_path)
    screen_to_file(src, tmp_path / "stream.gpkg", layers=layers_path, batch_rows=1)
    streamed = _read(tmp_path / "stream.gpkg")
    same(streamed, whole)
    assert list(streamed.set_index("site_id").loc[["s02", "s17", "s33"], "permit"]) == ["required"] * 3


def test_limits_for_some_sites_only_batches_without_any(tmp_path, layers_path):
    """Disturbed limits for two sites only: the batches holding neither still disturb nothing, as whole."""
    sites = _sites()
    src = tmp_path / "sites.gpkg"
    sites.to_file(src)
    limits = sites.iloc[[1, 3]][["site_id", "geometry"]].copy()
    limits["geometry"] = limits.geometry.buffer(-5)
    with pytest.warns(EscGisWarning, match=r"no polygon for 38 site\(s\): s00, s02, s04"):
        run = screen_run(str(src), disturbed=limits, layers=layers_path)
    write_layer(run.result, tmp_path / "whole.gpkg")
    # Said once for the run, not once a batch, naming the same sites.
    with pytest.warns(EscGisWarning, match=r"no polygon for 38 site\(s\): s00, s02, s04") as said:
        screen_to_file(src, tmp_path / "stream.gpkg", disturbed=limits, layers=layers_path, batch_rows=7)
    assert len([w for w in said if issubclass(w.category, EscGisWarning)]) == 1
    streamed = _read(tmp_path / "stream.gpkg")
    same(streamed, _read(tmp_path / "whole.gpkg"))
    # Issue 46: a site the limits do not name is taken whole (as without --disturbed), never as 0 sq ft.
    site_sqft = sites.geometry.area.to_numpy() * K
    assert streamed["disturbed_sqft"].iloc[7:].to_numpy() == pytest.approx(site_sqft[7:], rel=1e-9)
    assert streamed["disturbed_limits"].iloc[7:].isna().all()


def test_each_plan_is_screened_in_the_batch_of_its_first_site(tmp_path):
    """§ 540-5 adds a plan up whole: its sites go with its first site's batch, read there by id."""
    from esc_gis.screening.batches import _jobs, _plan_column, _plan_positions

    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    held, lead = _plan_positions(src, None, None, _plan_column(src, None, None), 40)
    assert list(held) == [2, 17, 33] and list(lead) == [2, 2, 2]
    jobs = _jobs(src, "sites", None, np.arange(1, 41), 7, held, lead)
    assert len(jobs) == 6  # no batch of its own
    assert list(jobs[0].pos) == [0, 1, 2, 3, 4, 5, 6, 17, 33] and list(jobs[0].numbers) == [1, 2, 3, 4, 5, 6, 7, 18, 34]
    assert jobs[0].fids is not None and len(jobs[0].fids) == 2
    assert 17 not in jobs[2].pos and 33 not in jobs[4].pos and jobs[2].fids is None
    assert sorted(np.concatenate([j.pos for j in jobs]).tolist()) == list(range(40))  # each site once
    # A plan within one batch needs no read by id.
    jobs = _jobs(src, "sites", None, np.arange(1, 41), 40, held, lead)
    assert len(jobs) == 1 and jobs[0].fids is None and list(jobs[0].pos) == list(range(40))


def test_geopackage_ranges_are_read_by_id_whatever_the_id_column_is_called(tmp_path, layers_path):
    """A GeoPackage converted from a geodatabase keys its rows by OBJECTID: ranges are read by it."""
    from esc_gis.screening.batches import _jobs

    src = tmp_path / "sites.gpkg"
    pyogrio.write_dataframe(_sites(), src, layer="sites", layer_options={"FID": "OBJECTID"})
    where = "site_id >= 's05'"
    whole = _whole(src, tmp_path / "whole.gpkg", layers_path, sites_where=where)
    out = tmp_path / "stream.gpkg"
    screen_to_file(src, out, layers=layers_path, sites_where=where, batch_rows=4)
    same(_read(out), whole)
    jobs = _jobs(src, "sites", where, np.arange(6, 41), 4, np.array([12, 28]), np.array([12, 12]))
    assert jobs[0].fid_range == ("OBJECTID", 6, 9)  # fids 1.. : the 6th to the 9th feature
    # A shapefile has no id column: its ranges are skipped to, as before.
    _sites().to_file(tmp_path / "sites.shp")
    assert (
        _jobs(tmp_path / "sites.shp", "sites", None, np.arange(1, 41), 4, held := np.zeros(0, int), held)[0].fid_range
        is None
    )


@pytest.mark.parametrize("ext", [".shp", ".fgb", ".gpkg"])
def test_a_where_clause_on_a_shapefile_or_flatgeobuf_keeps_plans_whole(tmp_path, layers_path, ext):
    """These drivers see the fields not read as NULL in a where clause: the plan must still add up."""
    sites = _sites()
    sites["zone"] = np.where(np.arange(40) % 5 == 4, "B", "A")  # the plan's sites 2, 17 and 33 are in A
    src = tmp_path / f"sites{ext}"
    sites.to_file(src)
    where = "zone = 'A'"
    whole = _whole(src, tmp_path / "whole.gpkg", layers_path, sites_where=where)
    out = tmp_path / "stream.gpkg"
    run = screen_to_file(src, out, layers=layers_path, sites_where=where, batch_rows=7)
    streamed = _read(out)
    same(streamed, whole)
    assert run.rows == 32
    plan = streamed.set_index("site_id").loc[["s02", "s17", "s33"]]
    assert list(plan["permit"]) == ["required"] * 3 and plan["plan_disturbed_sqft"].iloc[0] == pytest.approx(4500.0)
    # A clause on the plan field itself, ending in a comment, on a GeoPackage read by id range.
    sites.to_file(tmp_path / "sites.gpkg")
    where = "plan_id IS NULL OR plan_id <> 'Q3' -- all of them"
    whole = _whole(tmp_path / "sites.gpkg", tmp_path / "whole2.gpkg", layers_path, sites_where=where)
    screen_to_file(tmp_path / "sites.gpkg", tmp_path / "s2.gpkg", layers=layers_path, sites_where=where, batch_rows=7)
    same(_read(tmp_path / "s2.gpkg"), whole)


def test_plans_of_the_second_layer_of_a_geopackage_and_a_layer_changed_under_the_run(
    tmp_path, layers_path, monkeypatch
):
    """The plan and id reads take the layer asked for; a count that changes between reads is an error."""
    from esc_gis.screening import batches

    src = tmp_path / "two.gpkg"
    pyogrio.write_dataframe(_sites().iloc[:12], src, layer="other")
    pyogrio.write_dataframe(_sites(), src, layer="sites")
    whole = _whole(src, tmp_path / "whole.gpkg", layers_path, sites_layer="sites")
    screen_to_file(src, tmp_path / "s.gpkg", layers=layers_path, sites_layer="sites", batch_rows=7)
    same(_read(tmp_path / "s.gpkg"), whole)
    with pytest.raises(LayerReadError, match=r"read 39 features where 40 were selected before; is the file"):
        batches._read_fields(src, "sites", "site_id <> 's05'", ["plan_id"], 40)


@pytest.mark.filterwarnings("ignore::esc_gis.errors.FarFromZoneWarning")
def test_a_layer_of_rights_of_way_only_is_refused_as_the_whole_file_run_refuses_it(tmp_path):
    """Every batch held non-parcels only: the error the whole-file run gives, nothing written (was a FileNotFoundError)."""
    from esc_gis.screening import AllSkippedError

    skipped = screen_run(str(PARCELS)).skipped["feature"].to_numpy()
    src = tmp_path / "row_only.gpkg"
    pyogrio.write_dataframe(pyogrio.read_dataframe(PARCELS).iloc[skipped - 1], src)
    with pytest.raises(AllSkippedError) as whole:
        screen_run(str(src))
    out = tmp_path / "out.gpkg"
    with pytest.raises(AllSkippedError, match="every feature was skipped as not a site") as streamed:
        screen_to_file(src, out, batch_rows=3)
    assert f"(all {len(skipped)} features, in batches of 3)" in str(streamed.value)
    assert len(streamed.value.skipped) == len(whole.value.skipped) == len(skipped)
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_what_is_written_where(tmp_path, layers_path):
    """The GeoPackage's layer is "screening"; a GeoParquet's metadata has no first batch's box."""
    import pyarrow.parquet as pq

    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    screen_to_file(src, tmp_path / "s.gpkg", layers=layers_path, batch_rows=7)
    assert pyogrio.list_layers(tmp_path / "s.gpkg")[0][0] == "screening"
    screen_to_file(src, tmp_path / "s.parquet", layers=layers_path, batch_rows=7)
    geo = json.loads(pq.read_schema(tmp_path / "s.parquet").metadata[b"geo"])
    assert all("bbox" not in col for col in geo["columns"].values())
    assert set(pq.read_schema(tmp_path / "s.parquet").metadata) >= {b"geo"}


def test_a_batch_read_short_of_its_range_is_an_error(tmp_path, layers_path, monkeypatch):
    """A GeoPackage changed between the count and the read: said, not screened short."""
    from esc_gis.screening import batches

    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    real = batches.pyogrio.read_dataframe

    def short(*args, **kw):  # the second batch's range read (features 8-14) loses its first row
        frame = real(*args, **kw)
        return frame.iloc[1:] if kw.get("fid_as_index") and '"fid" >= 8 ' in str(kw.get("where")) else frame

    monkeypatch.setattr(batches.pyogrio, "read_dataframe", short)
    with pytest.raises(LayerReadError, match=r"sites\.gpkg: read 6 features where 7 were selected before\.$"):
        screen_to_file(src, tmp_path / "out.gpkg", layers=layers_path, batch_rows=7)


def base_of(table) -> int:
    return table.column(0).chunk(0).buffers()[1].address


def test_rows_are_put_in_file_order_by_slices_not_copies():
    """A batch's rows are its own, then its plans' later sites, with held rows between: a few runs."""
    import pyarrow as pa

    from esc_gis.screening.stream import _MAX_RUNS, _in_order

    rows = pa.table({"site_id": [f"s{i}" for i in range(10)], "n": list(range(10))})
    order = np.array([0, 1, 2, 8, 9, 3, 4, 5, 6, 7])
    got = _in_order(rows, order)
    assert got.equals(rows.take(order))
    assert got.column("n").num_chunks == 3  # three runs, three slices of the same buffers
    base = rows.column("n").chunk(0).buffers()[1].address
    assert {c.buffers()[1].address for c in got.column("n").chunks} == {base}
    # Runs in any order, the first starting anywhere (held rows first, then the batch's own).
    late = np.array([3, 4, 0, 1, 2, 5, 6, 7, 8, 9])
    assert _in_order(rows, late).equals(rows.take(late))
    # One run: the table itself, from where the run starts.
    assert _in_order(rows, np.arange(4, 10)).equals(rows.slice(4))
    # The rows held for a later batch are a copy: a slice would keep the whole batch alive.
    from esc_gis.screening.stream import _merge

    batch = pa.table({"n": list(range(10))})
    now, held = _merge((batch, np.arange(10)), None, 8)
    assert now is not None and now.num_rows == 8 and held is not None and held[0].column("n").to_pylist() == [8, 9]
    assert held[0].column("n").chunk(0).buffers()[1].address != base_of(batch)
    # Plans strewn over a batch: more runs than _MAX_RUNS, one copy.
    n = 2 * _MAX_RUNS + 2
    many = pa.table({"n": list(range(n))})
    strewn = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)])
    out = _in_order(many, strewn)
    assert out.equals(many.take(strewn)) and out.column("n").num_chunks == 1


def test_the_next_batch_is_read_while_this_one_is_measured(monkeypatch):
    """Batch 2's read starts before batch 1's measuring ends, under the caller's thread cap."""
    import threading

    from esc_gis._threads import at_most, cap
    from esc_gis.screening.engines import local as stream

    started = [threading.Event() for _ in range(3)]
    caps: list[int] = []
    threads: list[str] = []

    def read(job, ctx):
        caps.append(cap(8))
        threads.append(threading.current_thread().name)
        started[job].set()
        return job

    def finish(job, ctx, read_out):
        # Measuring batch `job` waits for the read of the next one: it never comes if reads wait.
        if job + 1 < 3:
            assert started[job + 1].wait(10), f"batch {job + 1} was not read while batch {job} was measured"
        return ("out", read_out)

    monkeypatch.setattr(stream, "read_job", read)
    monkeypatch.setattr(stream, "finish_job", finish)
    with at_most(1):
        outs = list(stream.local_engine([0, 1, 2], None))
    assert outs == [("out", 0), ("out", 1), ("out", 2)]
    assert caps == [1, 1, 1]
    # In the reader thread, named for py-spy and debuggers.
    assert all(name.startswith("esc_gis-read") for name in threads) and len(threads) == 3


def test_a_run_stopped_early_does_not_read_on(monkeypatch):
    """An error in a batch stops the reads: at most the batch read ahead is read after it."""
    from esc_gis.screening.engines import local as stream

    reads: list[int] = []

    def read(job, ctx):
        reads.append(job)
        return job

    def finish(job, ctx, read_out):
        if job == 1:
            raise RuntimeError("the disk is full")
        return job

    monkeypatch.setattr(stream, "read_job", read)
    monkeypatch.setattr(stream, "finish_job", finish)
    with pytest.raises(RuntimeError, match="the disk is full"):
        list(stream.local_engine(range(20), None))
    import time

    time.sleep(0.2)  # a read the pool had started would land by now
    assert reads[:2] == [0, 1] and len(reads) <= 3  # batch 2's read is dropped if not yet started
    assert list(stream.local_engine([], None)) == []


def test_the_screening_options_reach_every_batch(tmp_path, layers_path):
    """An id field of the user's, disturbed limits keyed by it and a CRS assumed for a file without one."""
    sites = _sites().iloc[:12].rename(columns={"site_id": "PARCEL"})
    limits = gpd.GeoDataFrame(
        {"PARCEL": ["s01", "s05", "s09"]},
        geometry=[square_sqft(50 + 90 * i, 50, 500.0) for i in (1, 5, 9)],
        crs=CRS,
    )
    src, dist = tmp_path / "sites.gpkg", tmp_path / "limits.gpkg"
    with pytest.warns(UserWarning, match="'crs' was not provided"):
        sites.set_crs(None, allow_override=True).to_file(src)  # no CRS: --assume-crs gives it
    limits.to_file(dist)
    kw = {"id_field": "PARCEL", "assume_crs": CRS}
    with pytest.warns(EscGisWarning, match="no polygon for 9 site"):
        whole = _whole(src, tmp_path / "whole.gpkg", layers_path, disturbed=str(dist), **kw)
    with pytest.warns(EscGisWarning, match="no polygon for 9 site"):
        screen_to_file(src, tmp_path / "s.gpkg", layers=layers_path, disturbed=dist, batch_rows=5, **kw)
    streamed = _read(tmp_path / "s.gpkg")
    same(streamed, whole)
    by_id = streamed.set_index("site_id")
    assert by_id.loc[["s01", "s05", "s09"], "disturbed_sqft"].tolist() == pytest.approx([500.0] * 3, rel=1e-6)
    # Limits given for none of the others: each taken whole (issue 46), as the --help says.
    others = by_id.drop(index=["s01", "s05", "s09"])
    areas = sites.set_index("PARCEL").geometry.area.loc[others.index].to_numpy() * K
    assert others["disturbed_sqft"].to_numpy() == pytest.approx(areas, rel=1e-9)


def test_a_streamed_geopackage_carries_the_whole_file_runs_style(tmp_path, layers_path):
    """The layer's default style (symbols and field aliases) names the same columns as the whole file's."""
    import sqlite3

    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    _whole(src, tmp_path / "whole.gpkg", layers_path)
    screen_to_file(src, tmp_path / "s.gpkg", layers=layers_path, batch_rows=7)

    def style(path: Path) -> str:
        with sqlite3.connect(path) as db:
            return db.execute("SELECT styleQML FROM layer_styles WHERE f_table_name = 'screening'").fetchone()[0]

    assert style(tmp_path / "s.gpkg") == style(tmp_path / "whole.gpkg")
    assert 'field="findings"' in style(tmp_path / "s.gpkg")


def test_screen_job_reads_and_screens_one_batch(tmp_path, layers_path):
    """What a dask worker runs: one job, read and screened, its rows as the output's table."""
    from esc_gis.layers import load_layers
    from esc_gis.profile import load_profile
    from esc_gis.screening.batches import Context, _jobs, _open_sites, screen_job

    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    layer, numbers, _ = _open_sites(src, None, None)
    none = np.zeros(0, dtype=np.int64)
    jobs = _jobs(src, layer, None, numbers, 7, none, none)
    prof = load_profile()
    out = screen_job(jobs[1], Context(load_layers(layers_path, profile=prof), prof, None, {}))
    assert out.result is not None and out.problems == []
    assert out.result.column("site_id").to_pylist() == [f"s{i:02d}" for i in range(7, 14)]
    assert out.kept.tolist() == list(range(7, 14)) and "findings" in out.columns


def test_an_error_does_not_wait_for_the_batch_being_read(monkeypatch):
    """The read under way when a batch fails is dropped, not waited for: the error comes out at once."""
    import threading
    import time

    from esc_gis.screening.engines import local as stream

    release, reading = threading.Event(), threading.Event()

    def read(job, ctx):
        if job == 1:
            reading.set()
            release.wait(10)  # a slow disk
        return job

    def finish(job, ctx, read_out):
        assert reading.wait(10)  # batch 1's read is under way (not merely queued) when batch 0 fails
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(stream, "read_job", read)
    monkeypatch.setattr(stream, "finish_job", finish)
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match="the disk is full"):
        list(stream.local_engine([0, 1, 2], None))
    assert time.perf_counter() - start < 5
    release.set()


def test_the_ids_given_to_sites_without_one_are_counted_and_the_first_five_shown(tmp_path, layers_path):
    """Seven sites without an id, over several batches, under a skip rule (``--skip-ids``; without
    one, a missing id is a problem): the streamed run counts the seven and keeps the first five ids
    given, in file order, as the whole-file run gives them (``row:<n>``)."""
    sites = _sites()
    blank = [1, 4, 8, 9, 15, 22, 38]
    sites.loc[blank, "site_id"] = None
    src = tmp_path / "sites.gpkg"
    sites.to_file(src)
    whole_run = screen_run(str(src), layers=layers_path, skip_ids="ROW")
    run = screen_to_file(src, tmp_path / "stream.gpkg", layers=layers_path, batch_rows=3, skip_ids="ROW")
    assert run.generated_ids == len(whole_run.generated_ids) == 7
    assert run.generated_shown == whole_run.generated_ids[:5]
    # Rows 1, 4, 8, 9, 15 counted from 0: features 2, 5, 9, 10 and 16 of the file.
    assert run.generated_shown == ["row:2", "row:5", "row:9", "row:10", "row:16"]


def test_data_far_from_the_zone_are_warned_of_once_for_the_run_naming_them(tmp_path):
    """The Vernon County cut lies far outside the Village's measuring zone: a run in batches of 20
    warns once, as the whole-file run does, naming the sites file (not once per batch, nor nameless)."""
    with pytest.warns(FarFromZoneWarning) as streamed:
        screen_to_file(PARCELS, tmp_path / "stream.gpkg", batch_rows=20)
    with pytest.warns(FarFromZoneWarning) as whole:
        screen_run(str(PARCELS))
    said = [str(w.message) for w in streamed if issubclass(w.category, FarFromZoneWarning)]
    assert len(said) == 1 and said[0].startswith("Sites ") and PARCELS.name in said[0].split(" lies ")[0]
    assert said == [str(w.message) for w in whole if issubclass(w.category, FarFromZoneWarning)]


def test_the_run_s_own_options_profile_layers_output_and_batch_size(tmp_path, layers_path, layer_set):
    """A profile and layer set given as objects or as paths, the disturbed limits' layer and where
    clause, an output that exists (refused unless ``overwrite``), and a batch size under 1."""
    from esc_gis.errors import OutputExistsError
    from esc_gis.profile import load_profile

    sites = _sites().iloc[:12]
    src, dist = tmp_path / "sites.gpkg", tmp_path / "limits.gpkg"
    sites.to_file(src)
    limits = sites[["site_id", "geometry"]].copy()
    limits["geometry"] = limits.geometry.buffer(-5)
    pyogrio.write_dataframe(limits.iloc[:2], dist, layer="other")  # the first layer: not the one asked for
    pyogrio.write_dataframe(limits, dist, layer="limits")
    kw = {"disturbed_layer": "limits", "disturbed_where": "site_id IN ('s01', 's05')"}
    with pytest.warns(EscGisWarning, match="no polygon for 10 site"):
        whole = _whole(src, tmp_path / "whole.gpkg", layers_path, disturbed=str(dist), **kw)
    out = tmp_path / "s.gpkg"
    with pytest.warns(EscGisWarning, match=f"The disturbed limits {dist} have no polygon for 10 site"):
        screen_to_file(src, out, disturbed=dist, layers=layer_set, profile=load_profile(), batch_rows=5, **kw)
    streamed = _read(out)
    same(streamed, whole)
    # Only the two the where clause kept are measured on their limits (5 ft in from the site's edge).
    assert streamed["disturbed_limits"].notna().tolist() == [i in (1, 5) for i in range(12)]
    measured = streamed["disturbed_sqft"] < sites.geometry.area.to_numpy() * K - 1
    assert measured.tolist() == [i in (1, 5) for i in range(12)]
    with pytest.raises(OutputExistsError):
        screen_to_file(src, out, layers=layers_path, batch_rows=5)
    # Replaced when asked: the example profile (a path) is read, not the Village's.
    example = Path(__file__).parent / "profiles" / "example.toml"
    screen_to_file(src, out, layers=layers_path, profile=example, batch_rows=5, overwrite=True)
    same(_read(out), _whole(src, tmp_path / "whole_x.gpkg", layers_path, profile=str(example)))
    assert not _read(out).equals(streamed)
    with pytest.raises(OutputFormatError, match=r"^batch_rows is 0: give a positive number of features\.$"):
        screen_to_file(src, tmp_path / "z.gpkg", layers=layers_path, batch_rows=0)


def test_coordinates_the_assumed_crs_cannot_hold_are_refused_before_any_batch(tmp_path, layers_path):
    """A file without a CRS, its coordinates in feet, given ``assume_crs="EPSG:4326"`` (degrees): the
    run refuses the layer once, naming the file, before a batch is read or anything written."""
    from esc_gis.errors import CoordinatesNotInCRSError

    src = tmp_path / "sites.gpkg"
    with pytest.warns(UserWarning, match="'crs' was not provided"):
        _sites().iloc[:6].set_crs(None, allow_override=True).to_file(src)
    out = tmp_path / "s.gpkg"
    with pytest.raises(CoordinatesNotInCRSError, match=str(src)):
        screen_to_file(src, out, layers=layers_path, batch_rows=2, assume_crs="EPSG:4326")
    assert not out.exists()


def test_a_plan_column_named_by_field_map_is_added_up_in_batches_and_progress_is_told(tmp_path, layers_path):
    """A plan column only ``field_map`` names (``{"plan_id": "PROJ_X"}``): batches of one site add the
    plan up as the whole-file run does (§ 540-5 common plan: 3 x 1,500 = 4,500 sq ft needs a permit);
    and ``progress`` hears the features done of the 40 after each batch of 16."""
    sites = _sites().rename(columns={"plan_id": "PROJ_X"})
    src = tmp_path / "sites.gpkg"
    sites.to_file(src)
    kw = {"field_map": {"plan_id": "PROJ_X"}}
    whole = _whole(src, tmp_path / "whole.gpkg", layers_path, **kw)
    screen_to_file(src, tmp_path / "stream.gpkg", layers=layers_path, batch_rows=1, **kw)
    streamed = _read(tmp_path / "stream.gpkg")
    same(streamed, whole)
    assert list(streamed.set_index("site_id").loc[["s02", "s17", "s33"], "permit"]) == ["required"] * 3
    said: list[tuple[int, int]] = []
    tell = lambda done, total: said.append((done, total))  # noqa: E731
    screen_to_file(src, tmp_path / "p.gpkg", layers=layers_path, batch_rows=16, progress=tell, **kw)
    assert said == [(16, 40), (32, 40), (40, 40)]
