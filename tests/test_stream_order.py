"""A layer whose rows are not in spatial order is batched spatially and written in file order;
a large layer streams by itself.

Small layers made in code (EPSG:7594 feet, as tests/test_stream.py), batches of a few features.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyogrio
import pytest

from esc_gis.screening import order as order_mod
from esc_gis.screening import stream
from esc_gis.screening.batches import _plan_positions, plan_jobs
from esc_gis.screening.order import FileOrder, hilbert_keys, spatial_order, windows_area
from esc_gis.screening.stream import screen_to_file

from .test_stream import _read, _sites, _whole, same, screen_cli


def _shuffled(tmp_path: Path, n: int = 40, seed: int = 3) -> tuple[Path, Path]:
    """Write the same sites in their spatial order and shuffled; return both files."""
    sites = _sites(n)
    ordered, shuffled = tmp_path / "ordered.gpkg", tmp_path / "shuffled.gpkg"
    sites.to_file(ordered)
    sites.iloc[np.random.default_rng(seed).permutation(n)].to_file(shuffled)
    return ordered, shuffled


@pytest.mark.parametrize("ext", [".gpkg", ".parquet", ".csv"])
def test_a_shuffled_layer_gives_the_whole_file_runs_rows_in_its_own_order(tmp_path, layers_path, ext):
    """Batched in Hilbert order (a common plan across batches added up), written in the file's order."""
    _, shuffled = _shuffled(tmp_path)
    whole = _whole(shuffled, tmp_path / f"whole{ext}", layers_path)
    for spatial in (None, True):  # chosen by the layer's order, and forced
        out = tmp_path / f"s{spatial}{ext}"
        run = screen_to_file(shuffled, out, layers=layers_path, batch_rows=6, spatial=spatial)
        same(_read(out), whole)
        assert run.rows == 40 and run.batches == 7
    plan = _read(out).set_index("site_id").loc[["s02", "s17", "s33"]]
    assert list(plan["permit"]) == ["required"] * 3  # 1,500 sq ft each, 4,500 together (§ 540-5)
    assert not list(tmp_path.glob(".esc_gis-order-*"))  # the spill is removed


def test_a_shuffled_layer_gives_the_ordered_layers_rows_in_its_own_order(tmp_path, layers_path):
    ordered, shuffled = _shuffled(tmp_path)
    screen_to_file(ordered, tmp_path / "o.gpkg", layers=layers_path, batch_rows=6)
    screen_to_file(shuffled, tmp_path / "s.gpkg", layers=layers_path, batch_rows=6)
    a, b = _read(tmp_path / "o.gpkg"), _read(tmp_path / "s.gpkg")
    order = pyogrio.read_dataframe(shuffled)["site_id"].tolist()
    assert b["site_id"].tolist() == order  # the shuffled file's own order
    same(b.reset_index(drop=True), a.set_index("site_id").loc[order].reset_index()[list(a.columns)])


def test_a_shuffled_layers_batches_are_spatially_compact(tmp_path):
    """The batches' windows (what each reads of the DEM) add up to a fraction of batches x the layer's."""
    n, size = 400, 20
    _, shuffled = _shuffled(tmp_path, n)
    fids, bounds = pyogrio.read_bounds(shuffled)
    whole = windows_area(bounds, np.arange(n), n)
    as_filed = windows_area(bounds, np.arange(n), size)
    order = spatial_order(bounds, size)
    assert order is not None and sorted(order.tolist()) == list(range(n))
    jobs = plan_jobs(
        shuffled,
        "shuffled",
        None,
        np.arange(1, n + 1),
        size,
        *_plan_positions(shuffled, "shuffled", None, "plan_id", n),
        order=order,
        fids=fids,
    )
    spatial = sum(windows_area(bounds, j.pos, len(j.pos)) for j in jobs)
    assert as_filed > 0.5 * (n // size) * whole  # shuffled: nearly every window is the whole layer
    assert spatial < 0.25 * (n // size) * whole
    assert spatial < as_filed / 4
    # Every feature screened once, by id (a spatial batch reads no range).
    assert sorted(np.concatenate([j.pos for j in jobs]).tolist()) == list(range(n))
    assert all(j.start == j.stop == 0 for j in jobs)


def test_an_ordered_layer_keeps_its_order_and_one_batch_is_never_sorted(tmp_path):
    ordered, _ = _shuffled(tmp_path, 400)
    _, bounds = pyogrio.read_bounds(ordered)
    assert spatial_order(bounds, 20) is None  # rows of sites, as filed: compact enough
    assert spatial_order(bounds[:, ::-1], 400) is None
    with pytest.raises(ValueError, match="size is 0"):
        spatial_order(bounds, 0)


def test_hilbert_keys_follow_neighbours():
    """Along the curve, consecutive cells of a 4 x 4 grid are neighbours; boxes without geometry go first."""
    x, y = np.meshgrid(np.arange(4.0), np.arange(4.0))
    b = np.stack([x.ravel(), y.ravel(), x.ravel(), y.ravel()])
    k = hilbert_keys(b, level=2)
    assert sorted(k.tolist()) == list(range(16))
    walk = b[:2, np.argsort(k)]
    assert (np.abs(np.diff(walk, axis=1)).sum(axis=0) == 1).all()
    with_nan = np.concatenate([b, np.full((4, 1), np.nan)], axis=1)
    assert hilbert_keys(with_nan, level=2)[-1] == 0
    with pytest.raises(ValueError, match="level is 0"):
        hilbert_keys(b, level=0)


def test_hilbert_keys_are_the_classic_curve_from_the_lower_left_corner():
    """The curve of Hilbert's 2 x 2 cell: up, right, down; at 4 x 4 it starts at (0, 0) and ends at (3, 0)."""
    pts = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]).T
    assert hilbert_keys(np.vstack([pts, pts]), level=1).tolist() == [0, 1, 2, 3]
    x, y = np.meshgrid(np.arange(4.0), np.arange(4.0))
    b = np.stack([x.ravel(), y.ravel(), x.ravel(), y.ravel()])
    walk = b[:2, np.argsort(hilbert_keys(b, level=2))].T.tolist()
    assert walk[:4] == [[0, 0], [1, 0], [1, 1], [0, 1]]  # the first quarter turned, as the curve turns it
    assert walk[-1] == [3, 0]
    # A box is placed by its centre: boxes around those cells' centres give the same keys.
    boxes = np.vstack([b[:2] - 0.5, b[2:] + 0.5])
    assert hilbert_keys(boxes, level=2).tolist() == hilbert_keys(b, level=2).tolist()
    # 1 to 31 bits per axis, the edges included.
    assert hilbert_keys(b, level=31).max() < 1 << 62
    with pytest.raises(ValueError, match="level is 32"):
        hilbert_keys(b, level=32)


def test_file_order_hands_spilled_rows_back_in_order(tmp_path, monkeypatch):
    import pyarrow as pa

    monkeypatch.setattr(order_mod, "_CHUNK", 3)  # several chunks a spill
    spill = FileOrder(tmp_path, window=4)
    rng = np.random.default_rng(0)
    pos = rng.permutation(23)
    for part in np.array_split(pos, 4):
        spill.add(pa.table({"p": part, "t": [f"row {p}" for p in part]}), part)
    spill.add(pa.table({"p": pa.array([], pa.int64()), "t": pa.array([], pa.string())}), np.zeros(0, int))
    out = pa.concat_tables(list(spill.tables(23)))
    assert out.column("p").to_pylist() == list(range(23))
    assert out.column("t").to_pylist() == [f"row {p}" for p in range(23)]
    spill.close()
    assert not spill.dir.exists()


def test_file_order_keeps_going_past_windows_without_rows(tmp_path, monkeypatch):
    """Places with no row (features skipped as not sites) leave whole windows empty; the rows after them still come back."""
    import pyarrow as pa

    monkeypatch.setattr(order_mod, "_CHUNK", 2)
    spill = FileOrder(tmp_path, window=4)
    kept = np.array([0, 1, 2, 3, 12, 13, 14, 21])  # windows [4, 8), [8, 12) and [16, 20) hold none
    # Two rows of each spill before place 4, a whole chunk each: no chunk is touched for [4, 8).
    for part in (kept[[4, 0, 7, 1]], kept[[2, 3, 5, 6]]):
        spill.add(pa.table({"p": part}), part)
    out = pa.concat_tables(list(spill.tables(22)))
    assert out.column("p").to_pylist() == kept.tolist()
    spill.close()


def test_screen_streams_by_itself_above_the_threshold(tmp_path, layers_path, monkeypatch):
    """No --batch-rows: a layer over STREAM_ABOVE_ROWS features is streamed, its rows the whole-file run's."""
    _, shuffled = _shuffled(tmp_path)
    whole = _whole(shuffled, tmp_path / "whole.gpkg", layers_path)
    monkeypatch.setattr(stream, "STREAM_ABOVE_ROWS", 10)
    monkeypatch.setattr(stream, "DEFAULT_BATCH_ROWS", 6)
    out = tmp_path / "auto.gpkg"
    res = screen_cli(shuffled, layers_path, out)
    said = " ".join(res.output.split())  # unwrapped
    assert res.exit_code == 0, res.output
    assert "over 10 features: screened 6 at a time" in said
    assert "in 7 batch(es) of up to 6" in said
    same(_read(out), whole)
    # At or under the threshold, and where the whole result is needed, the whole-file run (its table).
    monkeypatch.setattr(stream, "STREAM_ABOVE_ROWS", 40)
    res = screen_cli(shuffled, layers_path, tmp_path / "small.gpkg")
    assert res.exit_code == 0 and "Screening: 40 site(s)" in res.output
    monkeypatch.setattr(stream, "STREAM_ABOVE_ROWS", 10)
    res = screen_cli(shuffled, layers_path, tmp_path / "small.geojson")
    assert res.exit_code == 0 and "Screening: 40 site(s)" in res.output
    # --batch-rows still chooses.
    res = screen_cli(shuffled, layers_path, tmp_path / "b.gpkg", "--batch-rows", 13)
    said = " ".join(res.output.split())
    assert res.exit_code == 0 and "in 4 batch(es) of up to 13" in said and "over 10" not in said
    assert not stream.streams_by_itself(tmp_path / "missing.gpkg")


def test_batch_order_sorts_a_shuffled_layer_only_when_asked_or_worth_it(tmp_path):
    """Auto: a shuffled layer of several batches is sorted, an ordered one or one batch is not; --no-spatial never."""
    import geopandas as gpd
    import shapely

    xy = np.arange(40.0) * 1000
    ordered = gpd.GeoDataFrame(
        {"site_id": [f"s{i}" for i in range(40)]}, geometry=shapely.points(xy, xy), crs="EPSG:7594"
    )
    shuffled = ordered.iloc[np.random.default_rng(3).permutation(40)]
    paths = {}
    for name, frame in (("ordered", ordered), ("shuffled", shuffled)):
        paths[name] = tmp_path / f"{name}.gpkg"
        frame.to_file(paths[name], layer="sites", engine="pyogrio")
    order, fids = stream._batch_order(paths["shuffled"], "sites", None, 40, 10, None)
    assert order is not None and sorted(order.tolist()) == list(range(40))
    assert fids is not None and len(fids) == 40
    # Sorted, the sites run along the line: consecutive ones are neighbours.
    at = shuffled["site_id"].str[1:].astype(int).to_numpy()[order]
    assert (np.abs(np.diff(at)) == 1).all()
    assert stream._batch_order(paths["ordered"], "sites", None, 40, 10, None) == (None, None)
    assert stream._batch_order(paths["shuffled"], "sites", None, 40, 40, None) == (None, None)  # one batch
    assert stream._batch_order(paths["shuffled"], "sites", None, 40, 40, True) == (None, None)  # even forced
    assert stream._batch_order(paths["shuffled"], "sites", None, 40, 10, False) == (None, None)
    forced, _ = stream._batch_order(paths["ordered"], "sites", None, 40, 10, True)
    assert forced is not None and forced.tolist() == list(range(40))
    # A layer changed since its features were counted is refused, not batched on stale positions.
    from esc_gis.errors import LayerReadError

    with pytest.raises(LayerReadError, match="read 40 features where 39 were selected before; is the file being"):
        stream._batch_order(paths["shuffled"], "sites", None, 39, 10, None)


def test_file_order_spills_into_a_hidden_folder_of_the_output_compressed_and_clamps_its_window(tmp_path):
    """The spill sits beside the output (room for it there), hidden, LZ4 where Arrow has it; a window is 1 to 16,384 places."""
    import pyarrow as pa

    spill = FileOrder(tmp_path, window=0)
    assert spill.dir.parent == tmp_path and spill.dir.name.startswith(".esc_gis-order-")
    assert spill.options.compression == ("lz4" if pa.Codec.is_available("lz4") else None)
    assert spill.window == 1
    spill.add(pa.table({"p": [2, 0, 1]}), np.array([2, 0, 1]))
    assert [t.column("p").to_pylist() for t in spill.tables(3)] == [[0], [1], [2]]  # a place at a time
    spill.close()
    for asked, window in ((10**6, 16_384), (16_384, 16_384), (5, 5)):
        spill = FileOrder(tmp_path, window=asked)
        assert spill.window == window
        spill.close()


def test_file_order_gives_a_column_empty_in_one_batch_the_others_type(tmp_path):
    """A batch whose findings column is all empty (Arrow's null type) and one with text: one text column."""
    import pyarrow as pa

    spill = FileOrder(tmp_path, window=10)
    spill.add(pa.table({"p": [0, 2], "note": pa.nulls(2)}), np.array([0, 2]))
    spill.add(pa.table({"p": [1], "note": ["steep"]}), np.array([1]))
    (out,) = list(spill.tables(3))
    assert out.column("note").type == pa.string()
    assert out.column("note").to_pylist() == [None, "steep", None]
    spill.close()


@pytest.mark.filterwarnings("ignore::esc_gis.errors.FarFromZoneWarning")  # Vernon County: outside the zone
def test_spatial_batches_of_real_parcels_list_skipped_features_in_file_order_and_tell_progress(tmp_path):
    """The real Vernon County cut in spatial batches of one: a batch that is a right of way only is
    passed over; the skipped features come back in the file's order, the run says what the whole-file
    run says, and ``progress`` hears every feature done, of all 21."""
    from esc_gis.io import write_layer
    from esc_gis.screening import run_findings, screen_run

    from .test_stream import PARCELS

    whole_run = screen_run(str(PARCELS))
    write_layer(whole_run.result, tmp_path / "whole.gpkg")
    said: list[tuple[int, int]] = []
    run = screen_to_file(
        PARCELS, tmp_path / "s.gpkg", batch_rows=1, spatial=True, progress=lambda d, t: said.append((d, t))
    )
    assert run.spatial and run.batches == 21
    same(_read(tmp_path / "s.gpkg"), _read(tmp_path / "whole.gpkg"))
    assert run.skipped is not None
    assert run.skipped["feature"].tolist() == whole_run.skipped["feature"].tolist() == [9, 10, 11, 12, 13, 21]
    assert list(run.skipped.index) == list(range(6))
    assert run.rule == whole_run.rule and run.schema == whole_run.schema == "v10"
    assert run.id_field == whole_run.id_field and run.generated_ids == len(whole_run.generated_ids)
    assert run.run_findings == run_findings(whole_run.result)
    assert said == [(k, 21) for k in range(1, 22)]


def test_streams_by_itself_counts_the_layer_named_even_where_counting_is_dear(tmp_path, monkeypatch):
    """A GeoPackage's second layer is counted, not its first; a GML file's count is taken though GDAL
    must read it to count (it gives -1 unless forced)."""
    import geopandas as gpd
    import shapely

    monkeypatch.setattr(stream, "STREAM_ABOVE_ROWS", 10)

    def points(n: int) -> gpd.GeoDataFrame:
        return gpd.GeoDataFrame({"a": range(n)}, geometry=shapely.points(np.arange(n), np.arange(n)), crs="EPSG:7594")

    gpkg = tmp_path / "two.gpkg"
    points(3).to_file(gpkg, layer="few", engine="pyogrio")
    points(12).to_file(gpkg, layer="many", engine="pyogrio")
    assert not stream.streams_by_itself(gpkg)
    assert stream.streams_by_itself(gpkg, layer="many")
    assert not stream.streams_by_itself(gpkg, layer="few")
    gml = tmp_path / "sites.gml"
    points(12).to_file(gml, driver="GML", engine="pyogrio")
    assert stream.streams_by_itself(gml)
    points(10).to_file(tmp_path / "ten.gml", driver="GML", engine="pyogrio")
    assert not stream.streams_by_itself(tmp_path / "ten.gml")  # over, not at


def test_file_order_spills_each_row_once_a_chunk_at_a_time_compressed_and_closes_twice(tmp_path, monkeypatch):
    """Seven rows in chunks of three: one file of three record batches; a column of one long text
    repeated is stored in a fraction of its size where LZ4 is there; closing again is harmless."""
    import pyarrow as pa

    monkeypatch.setattr(order_mod, "_CHUNK", 3)
    spill = FileOrder(tmp_path, window=7)
    text = "Disturbs 4,000 sq ft or more of land: an erosion control permit is required. " * 20
    spill.add(pa.table({"p": range(7), "t": [text] * 7}), np.arange(7))
    ((path, places),) = spill.spills
    assert places.tolist() == list(range(7))
    with pa.ipc.open_file(pa.OSFile(str(path), "rb")) as f:
        assert [f.get_batch(i).num_rows for i in range(f.num_record_batches)] == [3, 3, 1]
    if pa.Codec.is_available("lz4"):
        assert path.stat().st_size < 7 * len(text) / 4
    assert pa.concat_tables(list(spill.tables(7))).column("t").to_pylist() == [text] * 7
    spill.close()
    spill.close()
    assert not spill.dir.exists()


def test_hilbert_keys_follow_neighbours_at_every_level_of_an_8_x_8_grid():
    """Three bits per axis: the turns of every level (not only the last one's) keep neighbours together."""
    x, y = np.meshgrid(np.arange(8.0), np.arange(8.0))
    b = np.stack([x.ravel(), y.ravel(), x.ravel(), y.ravel()])
    k = hilbert_keys(b, level=3)
    assert sorted(k.tolist()) == list(range(64))
    walk = b[:2, np.argsort(k)]
    assert (np.abs(np.diff(walk, axis=1)).sum(axis=0) == 1).all()
    assert walk[:, 0].tolist() == [0, 0] and walk[:, -1].tolist() == [7, 0]


def test_windows_area_adds_the_box_of_each_batch():
    """Unit boxes at x = 0, 1, 2 and 10: in batches of two, boxes of 2 x 1 and 9 x 1; all at once, 11 x 1."""
    b = np.array([[0.0, 1, 2, 10], [0, 0, 0, 0], [1, 2, 3, 11], [1, 1, 1, 1]])
    assert windows_area(b, np.arange(4), 2) == 2 + 9
    assert windows_area(b, np.arange(4), 4) == 11
    assert windows_area(b, np.array([3, 0, 1, 2]), 2) == 11 + 2  # 10 with 0, then 1 with 2
    assert windows_area(b, np.zeros(0, int), 2) == 0.0
    with pytest.raises(ValueError, match="size is 0: give a positive number of features"):
        windows_area(b, np.arange(4), 0)


def test_a_spatial_run_writes_the_screening_layer_and_a_csvs_crs_beside_it(tmp_path, layers_path):
    """A spatial run writes the same layer name as a file-order one; a streamed CSV has its .prj, a GeoPackage none."""
    _, shuffled = _shuffled(tmp_path)
    gpkg = tmp_path / "s.gpkg"
    run = screen_to_file(shuffled, gpkg, layers=layers_path, batch_rows=6, spatial=True)
    assert run.spatial and pyogrio.list_layers(gpkg)[0, 0] == "screening"
    assert not list(tmp_path.glob("*.prj"))
    csv = tmp_path / "s.csv"
    run = screen_to_file(shuffled, csv, layers=layers_path, batch_rows=6, spatial=False)
    assert not run.spatial
    assert "WISCRS Calumet" in pyogrio.read_info(csv)["crs"] and csv.with_suffix(".prj").exists()


def test_the_batch_order_reads_the_boxes_gdal_gives(tmp_path):
    """_read_bounds gives what pyogrio.read_bounds gives: ids and boxes, an empty geometry 0, a null NaN, a where clause kept."""
    import geopandas as gpd
    import shapely

    from esc_gis.screening.stream import _read_bounds

    geoms = [shapely.box(0, 0, 1, 1), None, shapely.Polygon(), shapely.box(2, 2, 5, 6.5), shapely.box(-3, 1, -2, 9)]
    path = tmp_path / "s.gpkg"
    gpd.GeoDataFrame({"a": range(5)}, geometry=geoms, crs=3071).to_file(path, layer="sites")
    for where in (None, "a >= 2"):
        fids, boxes = pyogrio.read_bounds(path, layer="sites", where=where)
        got_fids, got_boxes = _read_bounds(path, "sites", where)
        assert np.array_equal(got_fids, fids)
        assert np.array_equal(got_boxes, boxes, equal_nan=True)
