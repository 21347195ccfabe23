"""Screen a layer of any size in batches: read, screen and write a batch at a time, memory flat.

A county's parcels do not fit the whole-file run's memory (:func:`esc_gis.screening.screen`
holds the layer, its measurements and its result at once). :func:`screen_to_file` reads the
sites ``batch_rows`` features at a time (pyogrio), screens each batch with the same stages,
layer set and profile (loaded once), and appends its rows to the output, so the peak memory is
one batch's, whatever the layer's size. ``esc-gis screen`` streams by itself above
:data:`STREAM_ABOVE_ROWS` features (:func:`streams_by_itself`). The output is the whole-file
run's, row for row and in the same order:

- the engine decides each row alone, except a **common plan** (§ 540-5), whose sites are added
  up together: the sites of a plan with more than one site are screened together in the batch
  of the plan's first site (its later sites read by feature id), and their rows are written at
  their places in the file's order (held until their batch is written: plans are neighbours,
  so little is held);
- a layer whose rows are **not in spatial order** is batched in Hilbert order
  (:mod:`esc_gis.screening.order`), so each batch's DEM window stays a patch of the county;
  its rows are spilled to disk and written back in the file's order;
- a **duplicate id** across batches is found by sorting a hash of every id (8 bytes a row);
- problems, skipped features and generated ids name the **file's feature numbers**, as the
  whole-file run does; every problem of every batch is reported at once, and nothing is left
  behind (the output is written under a temporary name and renamed at the end).

The batches are planned by :mod:`esc_gis.screening.batches` and run by an engine
(:mod:`esc_gis.screening.engines.local` by default: the next batch is read, checked and
reprojected on a thread while one is measured); a GeoPackage is written on another.

Outputs: GeoPackage (one GDAL session fed batch by batch), GeoParquet (one row group a batch)
and CSV; a batch's rows travel as an Arrow table (:mod:`esc_gis.screening.write`).
GeoJSON (RFC 7946) is written whole only; its readers load it whole anyway.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "STREAMABLE",
    "STREAM_ABOVE_ROWS",
    "StreamRun",
    "screen_to_file",
    "streams_by_itself",
]

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyogrio

from esc_gis._outputs import atomic_output
from esc_gis._vsi import is_vsi
from esc_gis.crs import parse_crs
from esc_gis.errors import OutputFormatError, Problem, ValidationError
from esc_gis.io import check_output_path, csv_output
from esc_gis.layers import LayerSet, load_layers
from esc_gis.profile import Profile, load_profile
from esc_gis.screening.batches import BatchOut, Context, Job, _open_sites, _plan_column, _plan_positions, plan_jobs
from esc_gis.screening.order import FileOrder, spatial_order
from esc_gis.screening.write import write_tables

#: Features a batch when none is asked for (``--batch-rows``; the dask engine's too).
DEFAULT_BATCH_ROWS = 50_000

#: Above this many features ``esc-gis screen`` streams by itself, in batches of
#: :data:`DEFAULT_BATCH_ROWS`. The whole-file run's peak grows with the layer (393 MB at 10,000
#: parcels, 901 MB at 100,000, several GB at 1M: docs/explanation/benchmarks.md) where a
#: streamed run's is one batch's; at or under one batch's worth of features the streamed run
#: is that one batch, the same work and memory as the whole-file run, which also draws the
#: summary table and takes --map and --update. So the switch is where the whole-file run would
#: start to hold more than one batch: the default batch size.
STREAM_ABOVE_ROWS = DEFAULT_BATCH_ROWS

#: Output formats written batch by batch.
STREAMABLE = ("GeoPackage", "GeoParquet", "CSV (geometry as WKT)")


@dataclass
class StreamRun:
    """What a streamed screening wrote and left out (its rows are in the output file)."""

    output: Path
    rows: int
    batches: int
    skipped: gpd.GeoDataFrame | None
    run_findings: list[dict[str, str]] = field(default_factory=list)
    rule: str | None = None
    generated_ids: int = 0
    schema: str | None = None
    not_selected: int = 0
    id_field: str = "site_id"
    generated_shown: list[str] = field(default_factory=list)  # the first five generated ids
    spatial: bool = False  # batched in Hilbert order (the file's rows were not in spatial order)


class _Collector:
    """Gather, in file order, every batch's problems, skipped features and duplicate ids (by hash)."""

    def __init__(self, src: Path, numbers: np.ndarray) -> None:
        self.src, self.numbers = src, numbers
        self.problems: list[Problem] = []
        self.hashes: list[np.ndarray] = []  # each batch's ids, hashed (8 bytes a row, not the ids)
        self.rows: list[np.ndarray] = []  # and their feature numbers
        self.skipped: list[gpd.GeoDataFrame] = []
        self.generated = 0
        self.meta: dict[str, Any] = {}
        self.columns: list[str] = []
        self.all_skipped = ""  # the engine's words when a batch held no site
        self.generated_shown: list[str] = []  # the first few ids generated, in file order
        # Per input ("Sites x.gpkg"): the union of the batches' bounds, and their CRS, so that
        # the far-from-zone warning is given once, as the whole-file run gives it.
        self.reach: dict[str, tuple[np.ndarray, str]] = {}
        # The sites no limit names (measured whole), in the order their batches came: warned once.
        self.unmeasured: list[str] = []
        self.limits_source = ""

    def take(self, out: BatchOut) -> tuple[pa.Table, np.ndarray] | None:
        """Record a batch; return its rows and their positions, or None if it had problems."""
        self.problems += out.problems
        self.all_skipped = out.meta.get("all_skipped", self.all_skipped)
        if out.skipped is not None and out.result is None:
            self.skipped.append(out.skipped)
        if out.result is None:
            return None
        self.generated += out.generated
        self.meta = out.meta
        self.generated_shown += out.meta.get("generated_shown", [])[: 5 - len(self.generated_shown)]
        for what, bounds, crs in out.meta.get("reach", []):
            b = np.asarray(bounds, dtype=float)
            if what in self.reach:
                old = self.reach[what][0]
                b = np.concatenate([np.minimum(old[:2], b[:2]), np.maximum(old[2:], b[2:])])
            self.reach[what] = (b, crs)
        source, ids = out.meta.get("unmeasured", ("", []))
        self.limits_source = source or self.limits_source
        self.unmeasured += ids
        self.columns = out.columns
        if out.skipped is not None:
            self.skipped.append(out.skipped)
        self.hashes.append(out.ids)
        self.rows.append(self.numbers[out.kept])
        return out.result, out.kept

    def duplicates(self) -> list[Problem]:
        """Return a problem for each feature whose id an earlier feature of another batch has.

        Sorting the hashes with their feature numbers puts each id's features side by side,
        earliest first: every one after the first is a duplicate (a batch's own are the engine's).
        """
        if not self.hashes:
            return []
        h, r = np.concatenate(self.hashes), np.concatenate(self.rows)
        order = np.lexsort((r, h))
        later = np.flatnonzero(h[order][1:] == h[order][:-1]) + 1
        fix = "give each site its own id."
        return [
            Problem(str(self.src), int(row), "its id is also an earlier feature's.", fix)
            for row in np.sort(r[order][later])
        ]

    def warn_far(self, crs: Any) -> None:
        """Warn once per input when the run's data lie far from the measuring CRS's zone."""
        from esc_gis.crs import warn_if_far_from_zone

        for what, (bounds, src_crs) in self.reach.items():
            warn_if_far_from_zone(tuple(bounds), src_crs, crs, what=what)

    def warn_unmeasured(self) -> None:
        """Warn once, as the whole-file run does, of the sites no polygon of the limits names."""
        from esc_gis.screening.read import warn_unmeasured

        warn_unmeasured(self.unmeasured, self.limits_source)

    def summary(self, out: Path, rows: int, batches: int, not_selected: int) -> StreamRun:
        """Return what the run wrote and left out."""
        m = self.meta
        return StreamRun(
            out,
            rows,
            batches,
            # In file order whatever order the batches ran in (a spatial run's are strewn over it).
            pd.concat(self.skipped, ignore_index=True).sort_values("feature", kind="stable", ignore_index=True)
            if self.skipped
            else None,
            list(m.get("run_findings", [])),
            m.get("rule"),
            self.generated,
            m.get("schema"),
            not_selected,
            m.get("id_field", "site_id"),
            self.generated_shown,
        )


def screen_to_file(
    sites: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    disturbed: str | os.PathLike[str] | gpd.GeoDataFrame | None = None,
    layers: str | os.PathLike[str] | LayerSet | None = None,
    profile: str | os.PathLike[str] | Profile | None = None,
    sites_layer: str | None = None,
    sites_where: str | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
    engine: Callable[[Iterable[Job], Context], Iterator[BatchOut]] | None = None,
    spatial: bool | None = None,
    dst_crs: Any | None = None,
    **screen_kwargs: Any,
) -> StreamRun:
    """Screen the sites file ``sites`` in batches of ``batch_rows`` and write ``output``.

    Parameters
    ----------
    sites : path
        Any layer GDAL reads (GeoPackage, shapefile, FlatGeobuf, File Geodatabase, ...).
    output : path
        ``.gpkg``, ``.parquet`` or ``.csv``.
    disturbed : path or geopandas.GeoDataFrame, optional
        The disturbed limits, read whole (a project list, not a county's parcels).
    layers, profile, sites_layer, sites_where
        As :func:`esc_gis.screening.screen`.
    batch_rows : int
        Features read and screened at a time.
    overwrite : bool
        Replace an existing output.
    progress : callable, optional
        Called as ``progress(rows_done, rows_total)`` after each batch.
    engine : callable, optional
        Runs the batches and yields their outcomes in the order given: this process by default;
        :func:`esc_gis.screening.engines.dask.dask_engine` spreads them over a dask cluster.
    spatial : bool, optional
        Batch in Hilbert order (True), in the file's order (False), or, by default, in Hilbert
        order when the file's order would give the batches much larger windows
        (:func:`esc_gis.screening.order.spatial_order`). The rows are written in the file's
        order either way.
    dst_crs : optional
        The CRS the output's geometry is written in (any CRS pyproj reads, as
        :func:`esc_gis.io.write_layer`'s): each batch is measured in the profile's CRS, then its
        geometry alone is transformed, so the rows are the whole-file run's with ``dst_crs``.
    **screen_kwargs
        ``id_field``, ``field_map``, ``assume_crs``, ``disturbed_layer``, ``disturbed_where``,
        ``skip_ids``: as :func:`esc_gis.screening.screen`.

    Returns
    -------
    StreamRun

    Raises
    ------
    OutputFormatError
        If the output is GeoJSON (written whole only) or an unknown format, or ``batch_rows`` < 1.
    OutputExistsError
        If the output exists and ``overwrite`` is not given.
    CRSError
        If ``dst_crs`` names no CRS (checked before any batch is read).
    LayerReadError, ValidationError, LayerSetError, CRSError, ProfileError
        As :func:`esc_gis.screening.screen`; a ValidationError names every problem of every
        batch, by the file's feature numbers, and nothing is written.
    """
    if batch_rows < 1:
        msg = f"batch_rows is {batch_rows}: give a positive number of features."
        raise OutputFormatError(msg)
    out = Path(output)
    fmt = check_output_path(out, overwrite=overwrite, dst_crs=dst_crs)
    if fmt not in STREAMABLE:
        msg = f"{out.name}: {fmt} is written whole only; stream to .gpkg, .parquet or .csv."
        raise OutputFormatError(msg)
    # A GDAL virtual path (/vsizip//abs/sites.zip/x) goes to GDAL as given: Path() would fold its "//".
    # Every reader below hands it to pyogrio, which takes a str as well as a Path.
    src = cast(Path, os.fspath(sites)) if is_vsi(sites) else Path(sites)
    prof = profile if isinstance(profile, Profile) else load_profile(None if profile is None else Path(profile))
    ls = layers if isinstance(layers, LayerSet) else load_layers(None if layers is None else Path(layers), profile=prof)
    if disturbed is not None and not isinstance(disturbed, gpd.GeoDataFrame):
        from esc_gis.io import read_layer

        # Messages name the file, as the whole-file run's do, though the batches get it read.
        screen_kwargs["disturbed_name"] = os.fspath(disturbed)
        disturbed = read_layer(
            disturbed,
            layer=screen_kwargs.pop("disturbed_layer", None),
            where=screen_kwargs.pop("disturbed_where", None),
        )
    layer, numbers, total = _open_sites(src, sites_layer, sites_where, screen_kwargs.get("assume_crs"))
    n = len(numbers)
    plan_column = _plan_column(src, layer, screen_kwargs.get("field_map"))
    held, lead = _plan_positions(src, layer, sites_where, plan_column, n)
    order, fids = _batch_order(src, layer, sites_where, n, batch_rows, spatial)
    jobs = plan_jobs(src, layer, sites_where, numbers, batch_rows, held, lead, order=order, fids=fids)
    collector = _Collector(src, numbers)
    if engine is None:
        from esc_gis.screening.engines.local import local_engine

        engine = local_engine

    # Parsed once here (pyproj CRS): each batch, on this process or a dask worker, transforms to it.
    to_crs = None if dst_crs is None else parse_crs(dst_crs, what="Output CRS")
    ctx = Context(ls, prof, disturbed, screen_kwargs, fmt, to_crs)
    # A CSV's CRS goes in the .prj beside it, put in place with it (esc_gis.io.csv_output).
    target = csv_output(out, to_crs or ls.crs) if fmt.startswith("CSV") else atomic_output(out)
    with target as tmp:
        if order is None:
            rows = write_tables(tmp, fmt, "screening", _in_file_order(jobs, engine(jobs, ctx), collector, progress, n))
        else:
            spill = FileOrder(out.parent, batch_rows)
            try:
                outcomes = engine(jobs, ctx)
                rows = write_tables(tmp, fmt, "screening", _spilled(jobs, outcomes, collector, progress, n, spill))
            finally:
                spill.close()
        collector.problems += collector.duplicates()
        if collector.problems:
            # A problem of the whole limits file (they lie apart from their sites) is found by every
            # batch: said once.
            raise ValidationError(_once(collector.problems))
        collector.warn_far(ls.crs)
        collector.warn_unmeasured()
        if not rows:  # every batch held rights of way and the like only: as the whole-file run says
            from esc_gis.screening.read import AllSkippedError

            skipped = pd.concat(collector.skipped, ignore_index=True) if collector.skipped else gpd.GeoDataFrame()
            msg = collector.all_skipped or f"{src}: no site was screened."
            raise AllSkippedError(f"{msg} (all {n} features, in batches of {batch_rows})", skipped)
        if fmt == "GeoPackage":
            from esc_gis.io import add_layer_style, describe_layer

            add_layer_style(tmp, "screening", collector.columns)
            describe_layer(tmp, "screening")
    run = collector.summary(out, rows, -(-n // batch_rows), total - n)
    run.spatial = order is not None
    return run


def _once(problems: list[Problem]) -> list[Problem]:
    """Drop repeats: a problem of a whole input (its limits lie apart from their sites) is found by every batch.

    Such a problem (no row) is said once per input and fix; its gap, measured per batch, is the first batch's.
    """
    seen: set[tuple[str, str]] = set()
    out = []
    for p in dict.fromkeys(problems):
        if p.row is None:
            if (p.source, p.fix) in seen:
                continue
            seen.add((p.source, p.fix))
        out.append(p)
    return out


def _in_file_order(
    jobs: list[Job],
    outcomes: Iterator[BatchOut],
    collector: _Collector,
    progress: Callable[[int, int], None] | None,
    n: int,
) -> Iterator[pa.Table]:
    """Take the file-order batches' outcomes in order; yield the rows to write while no problem is found.

    Raises
    ------
    LayerReadError, LayerSetError, CRSError, ProfileError
        As the engine running the batches raises them.
    """
    ahead: tuple[pa.Table, np.ndarray] | None = None  # rows screened before their batch
    for job, outcome in zip(jobs, outcomes, strict=True):
        part, ahead = _merge(collector.take(outcome), ahead, job.stop)
        if part is not None and not collector.problems:
            yield part
        if progress is not None:
            progress(job.stop, n)


def _spilled(
    jobs: list[Job],
    outcomes: Iterator[BatchOut],
    collector: _Collector,
    progress: Callable[[int, int], None] | None,
    n: int,
    spill: FileOrder,
) -> Iterator[pa.Table]:
    """Spill the spatial batches' rows; once every batch is screened, yield them in the file's order.

    Raises
    ------
    LayerReadError, LayerSetError, CRSError, ProfileError
        As the engine running the batches raises them.
    OSError
        If the spill cannot be written or read back.
    """
    done = 0
    for job, outcome in zip(jobs, outcomes, strict=True):
        taken = collector.take(outcome)
        if taken is not None and not collector.problems:
            spill.add(*taken)
        done += len(job.pos)
        if progress is not None:
            progress(done, n)
    if not collector.problems:
        yield from spill.tables(n)


def _batch_order(
    src: Path, layer: str, where: str | None, n: int, size: int, spatial: bool | None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Return the order to batch the selected features in (None: the file's) and their feature ids.

    Raises
    ------
    LayerReadError
        If GDAL gives another number of features than were selected before.
    """
    if spatial is False or n <= size:
        return None, None
    from esc_gis.errors import LayerReadError
    from esc_gis.screening.order import hilbert_keys

    fids, bounds = _read_bounds(src, layer, where)
    if len(fids) != n:
        msg = f"{src}: read {len(fids)} features where {n} were selected before; is the file being written?"
        raise LayerReadError(msg)
    if spatial:
        return np.argsort(hilbert_keys(bounds), kind="stable").astype(np.int64), fids
    order = spatial_order(bounds, size)
    return order, (fids if order is not None else None)


def _read_bounds(src: Path, layer: str, where: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Return the selected features' ids and boxes (4 x n) as :func:`pyogrio.read_bounds` gives them.

    Read as WKB through Arrow in chunks and boxed by shapely: GDAL's own envelope, a feature at a
    time, took 2.8 s of CPU for a million parcels, this 1.9 s (the same numbers: an empty geometry
    boxed 0, a null one NaN). A geometry shapely cannot parse (a curve) falls back on GDAL's,
    and so does a where clause: its fields must be read (a shapefile's filter on a field left
    unread selects nothing).

    Raises
    ------
    LayerReadError
        As :func:`pyogrio.read_bounds`, for a layer GDAL cannot read.
    """
    import shapely
    from pyogrio.raw import open_arrow

    if where:
        return pyogrio.read_bounds(src, layer=layer, where=where)
    fids, boxes = [], []
    try:
        with open_arrow(src, layer=layer, columns=[], return_fids=True, batch_size=16_384, use_pyarrow=True) as (
            _,
            reader,
        ):
            for batch in reader:
                fids.append(batch.column(0).to_numpy())
                geoms = shapely.from_wkb(batch.column(1).to_numpy(zero_copy_only=False))
                box = shapely.bounds(geoms)
                box[shapely.is_empty(geoms)] = 0.0  # GDAL's envelope of an empty geometry
                boxes.append(box)
    except (shapely.errors.ShapelyError, NotImplementedError):  # curves: GDAL's envelope is the arcs'
        return pyogrio.read_bounds(src, layer=layer, where=where)
    pa.default_memory_pool().release_unused()  # the WKB chunks, not held through the run
    if not fids:
        return np.empty(0, np.int64), np.empty((4, 0))
    return np.concatenate(fids).astype(np.int64, copy=False), np.concatenate(boxes).T


def streams_by_itself(sites: str | os.PathLike[str], *, layer: str | None = None) -> bool:
    """Say whether ``esc-gis screen`` streams ``sites`` without being asked: over :data:`STREAM_ABOVE_ROWS` features.

    Counted from the layer's header (GeoPackage, shapefile, FlatGeobuf: no feature read); a
    file GDAL cannot open is left to the whole-file run, which says why.

    Parameters
    ----------
    sites : path
        The sites file.
    layer : str, optional
        Its layer (default the first).

    Returns
    -------
    bool

    Raises
    ------
    None
        A file that cannot be read is answered False.
    """
    try:
        count = int(pyogrio.read_info(sites, layer=layer, force_feature_count=True)["features"])
    except Exception:  # GDAL's errors all mean: not readable as a layer; the whole-file run says so
        return False
    return count > STREAM_ABOVE_ROWS


_MAX_RUNS = 256


def _in_order(rows: pa.Table, order: np.ndarray) -> pa.Table:
    """Return ``rows.take(order)`` as slices of ``rows``, without copying them.

    ``order`` is a few runs of rising positions (a batch's own, then its plans' later sites, and
    the rows held from earlier batches between them): a county's batch is 60 MB, mostly text.
    """
    starts = np.flatnonzero(np.diff(order, prepend=-2) != 1)  # where a run of consecutive rows begins
    if len(starts) == 1:
        return rows.slice(int(order[0]), len(order))
    if len(starts) > _MAX_RUNS:  # plans strewn over the file: a copy beats thousands of slices
        return rows.take(order)
    stops = np.append(starts[1:], len(order))
    return pa.concat_tables([rows.slice(int(order[a]), int(b - a)) for a, b in zip(starts, stops, strict=True)])


def _merge(
    batch: tuple[pa.Table, np.ndarray] | None,
    ahead: tuple[pa.Table, np.ndarray] | None,
    stop: int,
) -> tuple[pa.Table | None, tuple[pa.Table, np.ndarray] | None]:
    """Return the rows to write now (positions before ``stop``, in file order) and those to hold.

    ``batch`` is a batch's rows and positions, ``ahead`` the rows screened with an earlier
    batch's plans and not yet written.
    """
    parts = [p for p in (ahead, batch) if p is not None and p[0].num_rows]
    if not parts:
        return None, None
    # A column empty in one part (Arrow's null type) takes the other's type.
    rows = pa.concat_tables([p[0] for p in parts], promote_options="permissive") if len(parts) > 1 else parts[0][0]
    pos = np.concatenate([p[1] for p in parts])
    order = np.argsort(pos, kind="stable")
    rows, pos = _in_order(rows, order), pos[order]
    now = int(np.searchsorted(pos, stop))
    # The held rows are copied: a slice would keep their whole batch's buffers alive until
    # they are written, one batch more for every batch that holds a row.
    held = (rows.take(np.arange(now, len(pos))), pos[now:]) if now < len(pos) else None
    return (rows.slice(0, now) if now else None), held
