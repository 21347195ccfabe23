"""A streamed run's batches as Arrow tables, written in one pass (esc_gis.screening.write).

Each file written from batch tables must be the file the whole-file writer
(:func:`esc_gis.io.write_layer`) makes of the same rows: the same layer, geometry type, CRS,
columns and values, and for CSV the same bytes.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyogrio
import pytest
import shapely
from pyproj import CRS

from esc_gis.errors import OutputFormatError
from esc_gis.io import write_layer
from esc_gis.screening.write import batch_table, write_tables

GPKG, PARQUET, CSV = "GeoPackage", "GeoParquet", "CSV (geometry as WKT)"


def _frame(n: int, start: int = 0, *, crs: object = "EPSG:7594", plan: bool = True) -> gpd.GeoDataFrame:
    """``n`` 100 ft squares in a row: ids, a number, a flag, a text column empty unless ``plan``."""
    x = np.arange(start, start + n) * 200.0
    return gpd.GeoDataFrame(
        {
            "site_id": [f"s{i:03d}" for i in range(start, start + n)],
            "plan_id": [f"p{i // 2}" if plan else None for i in range(start, start + n)],
            "disturbed_sqft": x + 0.25,
            "sediment_standard": [i % 2 == 0 for i in range(n)],
        },
        geometry=shapely.box(x, 0.0, x + 100.0, 100.0),
        crs=crs,
    )


def _write(tmp_path: Path, fmt: str, parts: list[gpd.GeoDataFrame], name: str) -> Path:
    ext = {GPKG: ".gpkg", PARQUET: ".parquet", CSV: ".csv"}[fmt]
    out = tmp_path / f"{name}{ext}"
    assert write_tables(out, fmt, "screening", (batch_table(p, fmt) for p in parts)) == sum(map(len, parts))
    return out


def _whole(tmp_path: Path, parts: list[gpd.GeoDataFrame], ext: str) -> Path:
    out = tmp_path / f"whole{ext}"
    write_layer(pd.concat(parts, ignore_index=True), out)
    return out


def _layer(path: Path) -> tuple[dict, str]:
    info = pyogrio.read_info(path, layer="screening")
    with sqlite3.connect(path) as db:
        (kind,) = db.execute("SELECT geometry_type_name FROM gpkg_geometry_columns").fetchone()
    keep = ("crs", "fields", "dtypes", "geometry_type", "features", "fid_column", "geometry_name")
    return {k: str(info[k]) for k in keep}, kind


def test_geopackage_batches_make_the_whole_file_writers_layer(tmp_path):
    parts = [_frame(3, plan=False), _frame(4, 3), _frame(2, 7)]  # the first batch's plan_id empty
    streamed = _write(tmp_path, GPKG, parts, "streamed")
    whole = _whole(tmp_path, parts, ".gpkg")
    assert _layer(streamed) == _layer(whole)
    assert _layer(streamed)[1] == "POLYGON"
    got = pyogrio.read_dataframe(streamed, layer="screening")
    pd.testing.assert_frame_equal(got, pyogrio.read_dataframe(whole, layer="screening"))
    # The column empty in the first batch is text, filled by the later ones.
    assert got["plan_id"].isna().tolist() == [True] * 3 + [False] * 6
    assert got["plan_id"].iloc[3:].tolist() == ["p1", "p2", "p2", "p3", "p3", "p4"]


def test_a_batch_mixing_polygons_and_multipolygons_is_written_multi(tmp_path):
    """GDAL's GeoPackage takes no mix of single and multi types: as pyogrio writes such a frame."""
    part = _frame(3)
    part.loc[1, "geometry"] = shapely.multipolygons([shapely.box(200, 0, 250, 50), shapely.box(260, 0, 300, 50)])
    table = batch_table(part, GPKG)
    assert table.schema.metadata[b"esc_gis:geometry_type"] == b"MultiPolygon"
    assert set(shapely.get_type_id(shapely.from_wkb(table.column("geometry").to_numpy(zero_copy_only=False)))) == {6}
    streamed = _write(tmp_path, GPKG, [part], "streamed")
    assert _layer(streamed) == _layer(_whole(tmp_path, [part], ".gpkg"))
    assert _layer(streamed)[1] == "MULTIPOLYGON"


def _z(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT z FROM gpkg_geometry_columns").fetchone()[0]


def test_a_later_batch_of_another_geometry_type_makes_the_layer_geometry(tmp_path):
    """A layer typed POLYGON by its first batch is widened to GEOMETRY when a later batch is made multi."""
    later = _frame(3, 3)
    later.loc[1, "geometry"] = shapely.multipolygons([shapely.box(800, 0, 850, 50), shapely.box(860, 0, 900, 50)])
    parts = [_frame(3), later]
    streamed = _write(tmp_path, GPKG, parts, "streamed")
    assert _layer(streamed)[1] == "GEOMETRY" and _z(streamed) == 0
    got = pyogrio.read_dataframe(streamed, layer="screening")
    assert got.geom_type.tolist() == ["Polygon"] * 3 + ["MultiPolygon"] * 3
    assert shapely.equals(got.geometry.values, pd.concat(parts).geometry.values).all()
    # Batches of one type keep it, first-batch empties (Unknown) aside.
    same = _write(tmp_path, GPKG, [_frame(2), _frame(2, 2)], "same")
    assert _layer(same)[1] == "POLYGON"
    # Z in some batches only: optional (2).
    flat = gpd.GeoDataFrame({"site_id": ["a"]}, geometry=[shapely.Point(0, 0)], crs=7594)
    high = gpd.GeoDataFrame({"site_id": ["b"]}, geometry=[shapely.Point(0, 0, 5)], crs=7594)
    mixed_z = _write(tmp_path, GPKG, [flat, high], "mixed_z")
    assert _layer(mixed_z)[1] == "GEOMETRY" and _z(mixed_z) == 2


def test_z_points_and_other_mixes(tmp_path):
    z = gpd.GeoDataFrame({"site_id": ["a", "b"]}, geometry=shapely.points([[0, 0, 1], [1, 1, 2]]), crs=7594)
    assert batch_table(z, GPKG).schema.metadata[b"esc_gis:geometry_type"] == b"Point Z"
    lines = gpd.GeoDataFrame(
        {"site_id": ["a", "b"]},
        geometry=[shapely.LineString([(0, 0), (1, 1)]), shapely.MultiLineString([[(0, 0), (1, 0)]])],
        crs=7594,
    )
    assert batch_table(lines, GPKG).schema.metadata[b"esc_gis:geometry_type"] == b"MultiLineString"
    # A point and a polygon have no common type: the layer is of any geometry, nothing is changed.
    mixed = gpd.GeoDataFrame({"site_id": ["a", "b"]}, geometry=[shapely.Point(0, 0), shapely.box(0, 0, 1, 1)], crs=7594)
    table = batch_table(mixed, GPKG)
    assert table.schema.metadata[b"esc_gis:geometry_type"] == b"Unknown"
    wkb = table.column("geometry").to_numpy(zero_copy_only=False)
    assert list(shapely.get_type_id(shapely.from_wkb(wkb))) == [0, 3]
    streamed = _write(tmp_path, GPKG, [mixed], "streamed")
    assert _layer(streamed) == _layer(_whole(tmp_path, [mixed], ".gpkg"))


def test_a_crs_without_an_epsg_code_is_written_as_its_wkt(tmp_path):
    custom = CRS.from_proj4(
        "+proj=tmerc +lat_0=0 +lon_0=-88.5 +k=0.9999 +x_0=152400 +y_0=0 +ellps=GRS80 +units=us-ft +no_defs"
    )
    assert custom.to_epsg() is None
    part = _frame(2, crs=custom)
    assert batch_table(part, GPKG).schema.metadata[b"esc_gis:crs"].startswith(b"PROJCS[")
    streamed = _write(tmp_path, GPKG, [part], "streamed")
    assert CRS.from_user_input(pyogrio.read_info(streamed, layer="screening")["crs"]).equals(custom)
    assert batch_table(_frame(1), GPKG).schema.metadata[b"esc_gis:crs"] == b"EPSG:7594"


def test_csv_batches_are_the_whole_file_writers_bytes(tmp_path):
    parts = [_frame(3, plan=False), _frame(4, 3)]
    streamed = _write(tmp_path, CSV, parts, "streamed")
    assert streamed.read_bytes() == _whole(tmp_path, parts, ".csv").read_bytes()
    assert streamed.read_text().count("site_id") == 1  # one header


def test_parquet_batches_are_one_row_group_each(tmp_path):
    import pyarrow.parquet as pq

    parts = [_frame(3, plan=False), _frame(4, 3)]
    streamed = _write(tmp_path, PARQUET, parts, "streamed")
    assert pq.ParquetFile(streamed).num_row_groups == 2
    # The first batch's types are not the file's: the GeoParquet specification's "unknown".
    geo = json.loads(pq.read_schema(streamed).metadata[b"geo"])
    assert geo["columns"]["geometry"]["geometry_types"] == [] and "bbox" not in geo["columns"]["geometry"]
    got = gpd.read_parquet(streamed)
    assert got["plan_id"].isna().tolist() == [True] * 3 + [False] * 4
    assert got["plan_id"].iloc[3:].tolist() == ["p1", "p2", "p2", "p3"]
    pd.testing.assert_frame_equal(
        got.drop(columns="plan_id"), gpd.read_parquet(_whole(tmp_path, parts, ".parquet")).drop(columns="plan_id")
    )


@pytest.mark.parametrize("fmt", [GPKG, PARQUET, CSV])
def test_no_table_writes_no_file(tmp_path, fmt):
    assert write_tables(tmp_path / "out", fmt, "screening", iter([])) == 0
    assert not (tmp_path / "out").exists()


def test_what_the_tables_raise_comes_through_gdal_as_raised(tmp_path):
    """GDAL says only "Error while accessing batch from stream": the run's own error is the one raised."""

    class Boom(ValueError):
        pass

    def tables():
        yield batch_table(_frame(2), GPKG)
        raise Boom("batch 2: the layer set changed under the run")

    with pytest.raises(Boom, match="batch 2"):
        write_tables(tmp_path / "out.gpkg", GPKG, "screening", tables())


def test_geojson_is_not_written_batch_by_batch(tmp_path):
    with pytest.raises(OutputFormatError, match=r"\.gpkg, \.parquet or \.csv"):
        batch_table(_frame(1), "GeoJSON")
    with pytest.raises(OutputFormatError, match="GeoJSON is not written batch by batch"):
        write_tables(tmp_path / "x.geojson", "GeoJSON", "screening", [pa.table({"a": [1]})])


def _writers() -> list[str]:
    import threading
    import time

    time.sleep(0.05)  # the writer's last lines after it said it ended
    return [t.name for t in threading.enumerate() if t.name == "esc_gis GeoPackage writer"]


def test_the_writers_own_error_is_raised_and_screening_stops(tmp_path, monkeypatch):
    """GDAL failing on the writer thread (a full disk): its error comes out, and the run stops
    screening instead of handing batches to no one."""
    import esc_gis.screening.write as bt

    def failing_write_arrow(reader, *args, **kwargs):
        reader.read_next_batch()
        raise OSError("No space left on device")

    monkeypatch.setattr(bt.pyogrio, "write_arrow", failing_write_arrow)
    pulled, closed = [], []

    def tables():
        try:
            for i in range(50):
                pulled.append(i)
                yield batch_table(_frame(2, 2 * i), GPKG)
        finally:
            closed.append(True)  # the source is stopped at once (a dask cluster closed)

    with pytest.raises(OSError, match="No space left on device"):
        write_tables(tmp_path / "out.gpkg", GPKG, "screening", tables())
    assert len(pulled) < 50 and closed and not _writers()


def test_ctrl_c_while_gdal_finishes_the_file_waits_for_the_writer(tmp_path, monkeypatch):
    """GDAL builds the spatial index after the last batch (seconds at 1M rows): a Ctrl-C then
    must not leave the writer writing into a folder about to be removed."""
    import signal
    import time

    import esc_gis.screening.write as bt

    finished = []

    def slow_close(reader, *args, **kwargs):
        for _ in reader:
            pass
        time.sleep(0.6)  # the index being built
        finished.append(True)

    def interrupt(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(bt.pyogrio, "write_arrow", slow_close)
    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(KeyboardInterrupt):
            write_tables(tmp_path / "out.gpkg", GPKG, "screening", iter([batch_table(_frame(2), GPKG)]))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert finished and not _writers()


def test_a_batchs_error_stops_the_writer(tmp_path):
    def tables():
        yield batch_table(_frame(2), GPKG)
        yield batch_table(_frame(2, 2), GPKG)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_tables(tmp_path / "out.gpkg", GPKG, "screening", tables())
    assert not _writers()
