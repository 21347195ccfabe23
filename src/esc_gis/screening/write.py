"""A streamed screening's batches as Arrow tables: made where a batch is screened, written in one pass.

A streamed run (:mod:`esc_gis.screening.stream`) writes a county's rows a batch at a time. Two costs of
that writing are moved or cut here:

- :func:`batch_table` turns a batch's result into the Arrow table its output format takes
  (geometry as WKB, the CSV's text columns), in the process that screened the batch. On the
  dask engine that is a worker, so the driver, which every batch passes through, only writes.
- :func:`write_tables` writes every batch's table to the output in one pass. A GeoPackage is
  written in one GDAL session fed by an Arrow stream: appending batch by batch reopened the
  file each time and made SQLite update the spatial index row by row (7.06 s for 400,000 rows,
  against 3.31 s in one session, where GDAL builds the index once at the end). The session
  runs on a writer thread (GDAL releases the GIL), so the next batch is screened while one is
  written.

Each table is what :func:`pyogrio.write_dataframe` (``use_arrow=True``), ``to_parquet`` or
the CSV writer of :func:`esc_gis.io.write_layer` would have made of the batch, so the output
is the whole-file run's.
"""

from __future__ import annotations

__all__ = ["batch_table", "write_tables"]

import contextlib
import json
import queue
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyogrio
import shapely

from esc_gis.errors import OutputFormatError
from esc_gis.io import GPKG_VERSION, promote_to_multi

# Where a GeoPackage batch says its geometry type and CRS (the layer is created with the first's).
_GEOMETRY_TYPE = b"esc_gis:geometry_type"
_CRS = b"esc_gis:crs"

#: GeoSeries.geom_type's names, by shapely's type id (0 to 7).
_TYPE_NAMES = [
    "Point",
    "LineString",
    "LinearRing",
    "Polygon",
    "MultiPoint",
    "MultiLineString",
    "MultiPolygon",
    "GeometryCollection",
]


def batch_table(gdf: gpd.GeoDataFrame, fmt: str, dst_crs: Any | None = None) -> pa.Table:
    """Return a batch's rows as the Arrow table :func:`write_tables` writes to a ``fmt`` output.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        A batch's screening result.
    fmt : str
        ``"GeoPackage"``, ``"GeoParquet"`` or ``"CSV (geometry as WKT)"``
        (:func:`esc_gis.io.check_output_path`'s names).
    dst_crs : optional
        The CRS the output is written in (``--dst-crs``, checked before the run): the batch's
        geometry alone is transformed, here, after it was measured in the profile's CRS, as
        :func:`esc_gis.io.write_layer` transforms a whole-file run's.

    Returns
    -------
    pyarrow.Table

    Raises
    ------
    OutputFormatError
        If ``fmt`` is not written batch by batch.
    """
    if dst_crs is not None and gdf.crs is not None:
        gdf = gdf.to_crs(dst_crs)
    # A batch mixing single and multi parts of one kind is written all multi, as
    # esc_gis.io.write_layer writes a whole-file run's (GDAL's GeoPackage takes no such mix).
    geoms = np.asarray(gdf.geometry.values, dtype=object)
    promoted = promote_to_multi(geoms)
    if promoted is not geoms:
        gdf = gdf.copy()
        gdf[gdf.geometry.name] = gpd.GeoSeries(promoted, index=gdf.index, crs=gdf.crs)
    if fmt == "GeoPackage":
        return _gpkg_table(gdf)
    if fmt == "GeoParquet":
        from geopandas.io.arrow import _geopandas_to_arrow

        return _geopandas_to_arrow(gdf, index=False)
    if fmt.startswith("CSV"):
        from esc_gis.io import _to_csv_frame

        return pa.Table.from_pandas(_to_csv_frame(gdf), preserve_index=False)
    msg = f"{fmt} is not written batch by batch: stream to .gpkg, .parquet or .csv."
    raise OutputFormatError(msg)


def _gpkg_table(gdf: gpd.GeoDataFrame) -> pa.Table:
    """Return the table pyogrio writes for ``gdf`` to a GeoPackage, with its geometry type and CRS."""
    geoms = np.asarray(gdf.geometry.values, dtype=object)  # promoted by batch_table
    # The types by shapely's ids, as GeoSeries.geom_type names them: the names themselves come
    # as pandas text, which a set walks a row at a time (a quarter of a second a 50,000-row batch).
    type_ids = shapely.get_type_id(geoms)
    kinds = {_TYPE_NAMES[int(i)] for i in np.unique(type_ids[type_ids >= 0])}
    geometry_type = kinds.pop() if len(kinds) == 1 else "Unknown"
    if geometry_type != "Unknown" and bool(shapely.has_z(geoms).any()):
        geometry_type += " Z"
    attrs = pd.DataFrame(gdf.drop(columns=gdf.geometry.name))
    table = pa.Table.from_pandas(attrs, preserve_index=False)
    table = table.append_column(gdf.geometry.name, pa.array(shapely.to_wkb(geoms), type=pa.binary()))
    table = _text_for_null(table)
    crs = ""
    if gdf.crs is not None:
        epsg = gdf.crs.to_epsg()
        crs = f"EPSG:{epsg}" if epsg else gdf.crs.to_wkt("WKT1_GDAL")
    return table.replace_schema_metadata({_GEOMETRY_TYPE: geometry_type.encode(), _CRS: crs.encode()})


def _text_for_null(table: pa.Table) -> pa.Table:
    """Type text the columns empty in this batch (Arrow's null type): a later batch may fill them."""
    for i, f in enumerate(table.schema):
        if pa.types.is_null(f.type):
            table = table.set_column(i, f.with_type(pa.string()), table.column(i).cast(pa.string()))
    return table


def write_tables(path: Path, fmt: str, layer: str, tables: Iterable[pa.Table]) -> int:
    """Write ``tables`` (from :func:`batch_table`, in order) to one new file; return the rows written.

    Nothing is written when ``tables`` yields none. The columns and their types are the first
    table's; a column empty in it is text.

    Parameters
    ----------
    path : Path
        The file to create.
    fmt : str
        As :func:`batch_table`.
    layer : str
        The GeoPackage's layer.
    tables : iterable of pyarrow.Table
        Pulled one at a time as the file is written (a streamed run screens as it goes).

    Returns
    -------
    int

    Raises
    ------
    OutputFormatError
        If ``fmt`` is not written batch by batch.
    Exception
        Whatever ``tables`` raises, as it raised it.
    """
    if fmt not in ("GeoPackage", "GeoParquet") and not fmt.startswith("CSV"):
        msg = f"{fmt} is not written batch by batch: stream to .gpkg, .parquet or .csv."
        raise OutputFormatError(msg)
    it = iter(tables)
    try:
        first = next(it, None)
        if first is None:
            return 0
        box = [first]  # handed on in a box: the first batch is not held for the whole run
        del first
        if fmt == "GeoPackage":
            return _write_gpkg(path, layer, box, it)
        if fmt == "GeoParquet":
            return _write_parquet(path, box, it)
        return _write_csv(path, box, it)
    finally:
        # On an error, stop the batches' source now (a dask cluster is closed, not left to the
        # garbage collector).
        close = getattr(it, "close", None)
        if close is not None:
            close()


def _write_gpkg(path: Path, layer: str, box: list[pa.Table], rest: Iterator[pa.Table]) -> int:
    """Write the tables in one GDAL session on a writer thread, the layer typed by the first.

    GDAL writes with the GIL released, so the calling thread screens batch k+1 (it pulls
    ``rest``) while batch k is written: at 1M parcels the writing, about a tenth of the run,
    is hidden. One table waits between them, so memory grows by one batch at most.
    """
    meta = box[0].schema.metadata or {}
    schema = _text_for_null(box[0]).schema.remove_metadata()
    handoff: queue.Queue[Any] = queue.Queue(maxsize=1)
    errors: list[BaseException] = []

    def batches() -> Iterator[pa.RecordBatch]:
        while (item := handoff.get()) is not _DONE:
            if item is _ABORT:
                raise _Aborted  # the caller failed: GDAL stops, the file is the caller's to drop
            yield from item.to_batches()

    def write() -> None:
        try:
            pyogrio.write_arrow(
                pa.RecordBatchReader.from_batches(schema, batches()),
                path,
                layer=layer,
                driver="GPKG",
                geometry_name=schema.names[-1],
                dataset_options={"VERSION": GPKG_VERSION},
                geometry_type=meta.get(_GEOMETRY_TYPE, b"Unknown").decode(),
                crs=meta.get(_CRS, b"").decode() or None,
            )
        except BaseException as err:  # reported by the calling thread
            errors.append(err)
        finally:
            # Waited on rather than Thread.join: a Ctrl-C inside join() makes Python 3.11 take
            # the thread for ended while it still runs (bpo-45274's fix).
            ended.set()

    ended = threading.Event()
    threading.Thread(target=write, name="esc_gis GeoPackage writer", daemon=True).start()
    count = 0
    kinds: set[str] = set()  # each batch's geometry type
    try:
        for table in _chain(box, rest):
            kinds.add((table.schema.metadata or {}).get(_GEOMETRY_TYPE, b"Unknown").decode())
            _hand(handoff, table.replace_schema_metadata(None).select(schema.names).cast(schema), ended)
            count += table.num_rows
        _hand(handoff, _DONE, ended)
        ended.wait()  # GDAL builds the spatial index at the end: seconds at 1M rows
    except _WriterStopped:
        raise errors[0] if errors else OSError(f"{path}: the GeoPackage writer stopped") from None
    except BaseException:  # the caller's own error (a batch, Ctrl-C): GDAL is stopped, then it is raised
        _stop(handoff, ended)
        raise
    if errors:
        raise errors[0]
    _widen_geometry_type(path, layer, meta.get(_GEOMETRY_TYPE, b"Unknown").decode(), kinds)
    return count


def _widen_geometry_type(path: Path, layer: str, declared: str, kinds: set[str]) -> None:
    """Declare the layer GEOMETRY when a later batch's type is not the first's (the specification's general type).

    The layer is typed by its first batch, before the others are screened: a county's first
    50,000 parcels may all be polygons and a later batch hold multipolygons (made multi as
    pyogrio does). A POLYGON layer holding MULTIPOLYGONs breaks the GeoPackage specification,
    so once GDAL has closed the file the type is widened where GDAL keeps it: in
    ``gpkg_geometry_columns`` and in the table's column declaration. The latter is SQLite's
    documented schema edit (``writable_schema``) for changes that leave the stored rows as they
    are: both names give the column the same (NUMERIC) affinity. Z becomes optional when
    batches differ in it.
    """
    seen = kinds - {"Unknown"}
    if declared == "Unknown" or seen <= {declared}:
        return
    z = {k.endswith(" Z") for k in seen}
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        column, old_type = db.execute(
            "SELECT column_name, geometry_type_name FROM gpkg_geometry_columns WHERE lower(table_name) = lower(?)",
            (layer,),
        ).fetchone()
        (sql,) = db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND lower(name) = lower(?)", (layer,)
        ).fetchone()
        old = f'"{column}" {old_type}'
        if old in sql:
            (version,) = db.execute("PRAGMA schema_version").fetchone()
            try:
                db.execute("PRAGMA writable_schema = ON")
                db.execute(
                    "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND lower(name) = lower(?)",
                    (sql.replace(old, f'"{column}" GEOMETRY', 1), layer),
                )
                db.execute(f"PRAGMA schema_version = {int(version) + 1}")
            except sqlite3.DatabaseError:  # an SQLite built defensive: GDAL then warns of the mismatch, and reads on
                pass
            finally:
                db.execute("PRAGMA writable_schema = OFF")
        db.execute(
            "UPDATE gpkg_geometry_columns SET geometry_type_name = 'GEOMETRY', z = ? "
            "WHERE lower(table_name) = lower(?)",
            (1 if z == {True} else 2 if len(z) > 1 else 0, layer),
        )


def _stop(handoff: queue.Queue[Any], ended: threading.Event) -> None:
    """Stop the writer and wait for it, through further Ctrl-Cs: it must not write on unseen.

    The table waiting for it, if any, is taken back first, so that it stops at once.
    """
    while not ended.is_set():
        try:
            try:
                handoff.get_nowait()
            except queue.Empty:
                pass
            _hand(handoff, _ABORT, ended)
            ended.wait()
        except KeyboardInterrupt:
            continue


class _Aborted(Exception):
    """Raised into GDAL's reading of the batches when the caller failed."""


class _WriterStopped(Exception):
    """The writer thread ended before taking what it was handed (its error is in ``errors``)."""


_DONE, _ABORT = object(), object()


def _hand(handoff: queue.Queue[Any], item: object, ended: threading.Event) -> None:
    """Put ``item`` for the writer, waiting while it writes.

    Raises
    ------
    _WriterStopped
        If the writer has ended (GDAL failed) before taking ``item``, unless ``item`` is the abort.
    """
    while not ended.is_set():
        try:
            handoff.put(item, timeout=0.2)
            return
        except queue.Full:
            continue
    if item is not _ABORT:
        raise _WriterStopped


def _write_parquet(path: Path, box: list[pa.Table], rest: Iterator[pa.Table]) -> int:
    """Write one row group a table, with the first's GeoParquet metadata less what only it knows."""
    import pyarrow.parquet as pq

    metadata = dict(box[0].schema.metadata or {})
    geo = json.loads(metadata[b"geo"])
    for col in geo["columns"].values():
        col.pop("bbox", None)  # the first batch's box is not the file's
        col["geometry_types"] = []  # nor its types: the specification's "unknown"
    metadata[b"geo"] = json.dumps(geo).encode()
    schema = _text_for_null(box[0]).schema.with_metadata(metadata)
    count = 0
    with pq.ParquetWriter(path, schema) as writer:
        for table in _chain(box, rest):
            writer.write_table(table.replace_schema_metadata(None).cast(schema))
            count += table.num_rows
    return count


def _write_csv(path: Path, box: list[pa.Table], rest: Iterator[pa.Table]) -> int:
    """Append each table's rows as the whole-file run's CSV writes them, the header once; then the ``.csvt``.

    The columns' types are every batch's together (a column empty in the first batch is typed
    by the later ones, one of integers in one batch and floats in another is Real), so the
    ``.csvt`` is written last, beside the file (:func:`esc_gis.io.csv_output` puts both in place).
    """
    from esc_gis._csvt import column_kinds, merge_kinds, types_of, write_csvt

    count = 0
    kinds: list[str | None] = []
    with path.open("w", newline="") as f:
        for i, table in enumerate(_chain(box, rest)):
            frame = table.to_pandas()
            frame.to_csv(f, index=False, header=i == 0)
            batch = column_kinds(frame, wkt="WKT")
            kinds = [merge_kinds(a, b) for a, b in zip(kinds, batch, strict=False)] if kinds else batch
            count += table.num_rows
    write_csvt(path, types_of(kinds))
    return count


def _chain(box: list[Any], rest: Iterator[Any]) -> Iterator[Any]:
    """Yield the boxed table (taken out of its box) and then the rest."""
    while box:
        yield box.pop()
    yield from rest
