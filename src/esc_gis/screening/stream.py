"""Screen a layer of any size in batches: read, screen and write a batch at a time, memory flat.

A county's parcels do not fit the whole-file run's memory (:func:`esc_gis.screening.screen`
holds the layer, its measurements and its result at once). :func:`screen_to_file` reads the
sites ``batch_rows`` features at a time (pyogrio, in file order), screens each batch with the
same engine, layer set and profile (loaded once), and appends its rows to the output, so the
peak memory is one batch's, whatever the layer's size. The output is the whole-file run's,
row for row and in the same order:

- the engine decides each row alone, except a **common plan** (§ 540-5), whose sites are added
  up together: the sites of a plan with more than one site are screened together in the batch
  of the plan's first site (its later sites read by feature id), and their rows are written at
  their places in the file's order (held until their batch is written: plans are neighbours,
  so little is held);
- a **duplicate id** across batches is found by sorting a hash of every id (8 bytes a row);
- problems, skipped features and generated ids name the **file's feature numbers**, as the
  whole-file run does; every problem of every batch is reported at once, and nothing is left
  behind (the output is written under a temporary name and renamed at the end).

The next batch is read (and checked and reprojected) on a thread while one is measured, and
a GeoPackage is written on another.

Outputs: GeoPackage (one GDAL session fed batch by batch), GeoParquet (one row group a batch)
and CSV; a batch's rows travel as an Arrow table (:mod:`esc_gis.batch_tables`).
GeoJSON (RFC 7946) is written whole only; its readers load it whole anyway.
"""

from __future__ import annotations

__all__ = [
    "STREAMABLE",
    "BatchOut",
    "Context",
    "Job",
    "StreamRun",
    "finish_job",
    "read_job",
    "screen_job",
    "screen_to_file",
]

import contextvars
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyogrio

from esc_gis._outputs import atomic_output
from esc_gis.batch_tables import batch_table, write_tables
from esc_gis.errors import LayerReadError, OutputFormatError, Problem, ValidationError
from esc_gis.io import check_output_path, csv_output, feature_numbers
from esc_gis.layers import LayerSet, load_layers
from esc_gis.profile import Profile, load_profile

if TYPE_CHECKING:
    from esc_gis.screening import ReadRun

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


def _plan_column(path: Path, layer: str | None, field_map: dict[str, str] | None) -> str | None:
    """Return the sites layer's column holding the common plan's id, if it has one."""
    from esc_gis.validate import _find_field

    fields = [str(f) for f in pyogrio.read_info(path, layer=layer)["fields"]]
    # The engine's own lookup, aliases included (a layer's PLAN is its plan_id too).
    return _find_field(fields, "plan_id", field_map or {})


def _read_fields(path: Path, layer: str | None, where: str | None, columns: list[str], n: int) -> Any:
    """Read fields (and the feature ids) of the ``n`` features selected, as an Arrow table; no geometry.

    Raises
    ------
    LayerReadError
        If GDAL gives another number of features than the ``n`` it selected before.
    """
    # Shapefile, FlatGeobuf and FileGDB evaluate a where clause on the fields read only (the
    # others are NULL to it): with a where, every field is read.
    table = pyogrio.read_arrow(
        path, layer=layer, where=where, read_geometry=False, columns=None if where else columns, return_fids=True
    )[1]
    if table.num_rows != n:
        msg = f"{path}: read {table.num_rows} features where {n} were selected before; is the file being written?"
        raise LayerReadError(msg)
    return table


def _plan_positions(
    path: Path, layer: str | None, where: str | None, column: str | None, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return the positions (0-based, in reading order) of the sites of multi-site plans, and their plans' first.

    The second array gives, for each of those sites, the position of its plan's first site.

    Raises
    ------
    LayerReadError
        As :func:`_read_fields`.
    """
    none = np.zeros(0, dtype=np.int64)
    if column is None:
        return none, none
    plans = _read_fields(path, layer, where, [column], n).column(column).to_pandas()
    text = plans.astype("string").str.strip()
    named = text.notna() & (text != "")
    counts = text[named].value_counts()
    shared = (named & text.isin(counts.index[counts > 1])).to_numpy(dtype=bool)
    held = np.flatnonzero(shared)
    if not len(held):
        return none, none
    codes = pd.factorize(text[shared])[0]
    first = np.full(codes.max() + 1, np.iinfo(np.int64).max)
    np.minimum.at(first, codes, held)  # positions ascend, but say what is meant
    return held, first[codes]


def _batches(n: int, size: int, held: np.ndarray, lead: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield (start, stop, positions to screen) of each batch in file order.

    A batch screens its own sites but the plan sites whose plan's first site is in an earlier
    batch, and all the sites of the plans whose first site is its own: first its positions in
    ``start:stop``, ascending, then the later ones, ascending.
    """
    in_plan = np.zeros(n, dtype=bool)
    in_plan[held] = True
    order = np.argsort(lead // size, kind="stable")  # the plan sites by their batch, ascending within it
    edges = np.searchsorted((lead // size)[order], np.arange(-(-n // size) + 1))
    for b, start in enumerate(range(0, n, size)):
        stop = min(n, start + size)
        pos = np.arange(start, stop)
        plans = held[order[edges[b] : edges[b + 1]]]  # ascending, all at or after start
        here = np.sort(np.concatenate([pos[~in_plan[pos]], plans[plans < stop]]))
        yield start, stop, np.concatenate([here, plans[plans >= stop]]).astype(np.int64)


@dataclass(frozen=True)
class Job:
    """One batch to screen: where its features are in the file, and their feature numbers.

    Picklable and small (no geometry), so a dask worker reads its own features from the file.
    """

    src: Path
    layer: str
    where: str | None
    start: int  # first position (0-based, in reading order) of the range read
    stop: int
    pos: np.ndarray  # positions screened: those in start:stop, then later sites of its plans
    numbers: np.ndarray  # their 1-based feature numbers in the file
    fids: np.ndarray | None = None  # the feature ids of the positions after stop (read by id)
    # Where the layer has a feature-id column and its ids rise in reading order (GeoPackage):
    # the range is read by id (``"fid" >= a AND "fid" <= b``), which SQLite finds at once, where
    # skipping ``start`` features makes it step through them (a county's last batch stepped
    # through its whole file).
    fid_range: tuple[str, int, int] | None = None


@dataclass(frozen=True)
class Context:
    """What every batch is screened with: the layer set, the profile, the disturbed limits, the options.

    ``fmt`` is the output's format: a batch's rows come back as the Arrow table it takes
    (:func:`esc_gis.batch_tables.batch_table`), made where the batch was screened.
    """

    layers: LayerSet
    profile: Profile
    disturbed: gpd.GeoDataFrame | None
    kwargs: dict[str, Any]
    fmt: str = "GeoPackage"


@dataclass
class BatchOut:
    """A batch's result (its rows and their positions) and what it found wrong or left out.

    ``result`` is the rows as the output's Arrow table, ``ids`` a hash of each row's id (for
    duplicates across batches) and ``columns`` the result's columns but its geometry.
    """

    result: pa.Table | None
    kept: np.ndarray
    skipped: gpd.GeoDataFrame | None
    problems: list[Problem]
    generated: int
    meta: dict[str, Any]
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    columns: list[str] = field(default_factory=list)
    packed: bytes | None = None  # the rows while they travel (the dask engine's Arrow IPC)


def screen_job(job: Job, ctx: Context) -> BatchOut:
    """Read and screen one batch (in this process or a dask worker's).

    Raises
    ------
    LayerReadError, LayerSetError, CRSError, ProfileError
        As :func:`esc_gis.screening.screen_run` (a row's problems are returned, not raised).
    """
    return finish_job(job, ctx, read_job(job, ctx))


def read_job(job: Job, ctx: Context) -> ReadRun | BatchOut:
    """Read and validate one batch's sites: their :class:`~esc_gis.screening.ReadRun`, or the batch's outcome.

    A batch with nothing to screen (no feature, rights of way only, a problem in a row) is
    its outcome already.

    Raises
    ------
    LayerReadError, CRSError
        As :func:`esc_gis.screening.read_run` (a row's problems are returned, not raised).
    """
    from esc_gis.screening import AllSkippedError, read_run

    frame = _read_frame(job)
    if not len(frame):
        return BatchOut(None, job.pos[:0], None, [], 0, {})
    try:
        return read_run(
            frame,
            crs=ctx.layers.crs,
            disturbed=_limits_for(ctx.disturbed, frame, ctx.kwargs.get("id_field", "site_id")),
            feature_numbers=job.numbers,
            sites_name=str(job.src),
            warn_far=False,  # once for the run, from every batch's reach (screen_to_file)
            **ctx.kwargs,
        )
    except AllSkippedError as err:  # a batch of rights of way only: listed, and the run goes on
        return BatchOut(None, job.pos[:0], err.skipped, [], 0, {"all_skipped": str(err)})
    except ValidationError as err:
        return BatchOut(None, job.pos[:0], None, list(err.problems), 0, {})


def finish_job(job: Job, ctx: Context, read: ReadRun | BatchOut) -> BatchOut:
    """Measure and decide a batch :func:`read_job` read; its rows as the output's Arrow table.

    Raises
    ------
    LayerSetError, CRSError, ProfileError
        As :func:`esc_gis.screening.measure_run`.
    """
    from esc_gis.screening import measure_run, run_findings

    if isinstance(read, BatchOut):
        return read
    r = measure_run(read, ctx.layers, ctx.profile)
    kept = job.pos
    skipped = None
    if len(r.skipped):
        skipped = r.skipped
        kept = job.pos[~np.isin(job.numbers, r.skipped["feature"].to_numpy())]
    meta = {
        "rule": r.rule,
        "schema": r.schema,
        "id_field": r.id_field,
        "run_findings": run_findings(r.result),
        "reach": read.reach,
        "generated_shown": r.generated_ids[:5],
    }
    ids = pd.util.hash_array(r.result["site_id"].astype(str).to_numpy(dtype=object))
    columns = [c for c in r.result.columns if c != r.result.geometry.name]
    table = batch_table(r.result, ctx.fmt)
    return BatchOut(table, kept, skipped, [], len(r.generated_ids), meta, ids, columns)


def _read_frame(job: Job) -> gpd.GeoDataFrame:
    """Read a batch's features: its range in the file's order, then the later sites of its plans.

    Raises
    ------
    LayerReadError
        If GDAL gives another number of features than were selected before.
    """
    later = 0 if job.fids is None else len(job.fids)
    if job.fid_range is not None:
        column, lo, hi = job.fid_range
        ids = f'"{column}" >= {lo} AND "{column}" <= {hi}'
        # A new line closes a -- comment the user's clause may end with.
        where = f"({job.where}\n) AND {ids}" if job.where else ids
        frame = pyogrio.read_dataframe(job.src, layer=job.layer, where=where, use_arrow=True, fid_as_index=True)
        frame = frame.sort_index()  # ids rise in reading order: the range's rows in the file's order
        if len(frame) != job.stop - job.start:
            msg = f"{job.src}: read {len(frame)} features where {job.stop - job.start} were selected before."
            raise LayerReadError(msg)
    else:
        frame = pyogrio.read_dataframe(
            job.src,
            layer=job.layer,
            where=job.where,
            skip_features=job.start,
            max_features=job.stop - job.start,
            use_arrow=True,
        )
    frame = frame.reset_index(drop=True).iloc[job.pos[: len(job.pos) - later] - job.start]
    if later:  # the later sites of plans starting in this batch, in the order asked
        more = pyogrio.read_dataframe(job.src, layer=job.layer, fids=job.fids, use_arrow=True, fid_as_index=True)
        frame = pd.concat([frame, more.loc[job.fids]], ignore_index=True)
    return frame.reset_index(drop=True)


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

    def summary(self, out: Path, rows: int, batches: int, not_selected: int) -> StreamRun:
        """Return what the run wrote and left out."""
        m = self.meta
        return StreamRun(
            out,
            rows,
            batches,
            pd.concat(self.skipped, ignore_index=True) if self.skipped else None,
            list(m.get("run_findings", [])),
            m.get("rule"),
            self.generated,
            m.get("schema"),
            not_selected,
            m.get("id_field", "site_id"),
            self.generated_shown,
        )


def _local(jobs: Iterable[Job], ctx: Context) -> Iterator[BatchOut]:
    """Screen the jobs one after another in this process, reading each while the one before is measured.

    Reading a batch (GDAL, the checks, the reprojection: about a seventh of a batch's work)
    and measuring the one before overlap on two cores; about 6 % came off a 100,000-parcel run
    in batches of 10,000 (three interleaved runs each, on a shared machine). One batch is read
    ahead, so one more batch's sites are held. The reader runs under the caller's thread cap
    (:func:`esc_gis._threads.at_most`).
    """
    todo = list(jobs)
    if not todo:
        return
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="esc_gis-read")
    try:
        ahead = pool.submit(contextvars.copy_context().run, read_job, todo[0], ctx)
        for i, job in enumerate(todo):
            read = ahead.result()
            if i + 1 < len(todo):
                ahead = pool.submit(contextvars.copy_context().run, read_job, todo[i + 1], ctx)
            yield finish_job(job, ctx, read)
    finally:
        # On an error or Ctrl-C, the batch being read is dropped, not waited for (under a second).
        pool.shutdown(wait=False, cancel_futures=True)


def screen_to_file(
    sites: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    disturbed: str | os.PathLike[str] | gpd.GeoDataFrame | None = None,
    layers: str | os.PathLike[str] | LayerSet | None = None,
    profile: str | os.PathLike[str] | Profile | None = None,
    sites_layer: str | None = None,
    sites_where: str | None = None,
    batch_rows: int = 50_000,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
    engine: Callable[[Iterable[Job], Context], Iterator[BatchOut]] | None = None,
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
        :func:`esc_gis.dask_engine.dask_engine` spreads them over a dask cluster.
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
    LayerReadError, ValidationError, LayerSetError, CRSError, ProfileError
        As :func:`esc_gis.screening.screen`; a ValidationError names every problem of every
        batch, by the file's feature numbers, and nothing is written.
    """
    if batch_rows < 1:
        msg = f"batch_rows is {batch_rows}: give a positive number of features."
        raise OutputFormatError(msg)
    out = Path(output)
    fmt = check_output_path(out, overwrite=overwrite)
    if fmt not in STREAMABLE:
        msg = f"{out.name}: {fmt} is written whole only; stream to .gpkg, .parquet or .csv."
        raise OutputFormatError(msg)
    src = Path(sites)
    prof = profile if isinstance(profile, Profile) else load_profile(None if profile is None else Path(profile))
    ls = layers if isinstance(layers, LayerSet) else load_layers(None if layers is None else Path(layers), profile=prof)
    if disturbed is not None and not isinstance(disturbed, gpd.GeoDataFrame):
        from esc_gis.io import read_layer

        disturbed = read_layer(
            disturbed,
            layer=screen_kwargs.pop("disturbed_layer", None),
            where=screen_kwargs.pop("disturbed_where", None),
        )
    layer, numbers, total = _open_sites(src, sites_layer, sites_where, screen_kwargs.get("assume_crs"))
    n = len(numbers)
    plan_column = _plan_column(src, layer, screen_kwargs.get("field_map"))
    held, lead = _plan_positions(src, layer, sites_where, plan_column, n)
    jobs = _jobs(src, layer, sites_where, numbers, batch_rows, held, lead)
    collector = _Collector(src, numbers)
    run_jobs = engine or _local

    def tables() -> Iterator[pa.Table]:
        """Take the batches' outcomes in order; yield the rows to write while no problem is found."""
        outcomes = run_jobs(jobs, Context(ls, prof, disturbed, screen_kwargs, fmt))
        ahead: tuple[pa.Table, np.ndarray] | None = None  # rows screened before their batch
        for job, outcome in zip(jobs, outcomes, strict=True):
            part, ahead = _merge(collector.take(outcome), ahead, job.stop)
            if part is not None and not collector.problems:
                yield part
            if progress is not None:
                progress(job.stop, n)

    # A CSV's CRS goes in the .prj beside it, put in place with it (esc_gis.io.csv_output).
    target = csv_output(out, ls.crs) if fmt.startswith("CSV") else atomic_output(out)
    with target as tmp:
        rows = write_tables(tmp, fmt, "screening", tables())
        collector.problems += collector.duplicates()
        if collector.problems:
            raise ValidationError(collector.problems)
        collector.warn_far(ls.crs)
        if not rows:  # every batch held rights of way and the like only: as the whole-file run says
            from esc_gis.screening import AllSkippedError

            skipped = pd.concat(collector.skipped, ignore_index=True) if collector.skipped else gpd.GeoDataFrame()
            msg = collector.all_skipped or f"{src}: no site was screened."
            raise AllSkippedError(f"{msg} (all {n} features, in batches of {batch_rows})", skipped)
        if fmt == "GeoPackage":
            from esc_gis.io import add_layer_style, describe_layer

            add_layer_style(tmp, "screening", collector.columns)
            describe_layer(tmp, "screening")
    return collector.summary(out, rows, -(-n // batch_rows), total - n)


def _jobs(
    src: Path, layer: str, where: str | None, numbers: np.ndarray, size: int, held: np.ndarray, lead: np.ndarray
) -> list[Job]:
    """Return the batches in file order, each with the later sites of the plans that start in it."""
    column = str(pyogrio.read_info(src, layer=layer).get("fid_column") or "")
    fids = None
    if column or (lead // size != held // size).any():  # ranges read by id, or plans reaching past a batch
        fids = _read_fields(src, layer, where, [], len(numbers)).column(0).to_numpy()
    by_id = column and fids is not None and bool(np.all(fids[1:] > fids[:-1]))
    jobs: list[Job] = []
    for start, stop, pos in _batches(len(numbers), size, held, lead):
        later = pos[pos >= stop]
        extra = fids[later] if fids is not None and len(later) else None
        ids = (column, int(fids[start]), int(fids[stop - 1])) if by_id and fids is not None else None
        jobs.append(Job(src, layer, where, start, stop, pos, numbers[pos], extra, ids))
    return jobs


def _open_sites(
    src: Path, layer: str | None, where: str | None, assume_crs: Any | None = None
) -> tuple[str, np.ndarray, int]:
    """Return the layer's name, the feature numbers of the features read (1-based), and the layer's count.

    Raises
    ------
    LayerReadError
        If the file cannot be read as a layer, or no feature is read.
    CoordinatesNotInCRSError
        If the layer's coordinates cannot be in its CRS (or the assumed one), as
        :func:`esc_gis.io.read_layer` refuses them for the whole-file run.
    """
    from esc_gis.crs import check_coordinates, parse_crs

    try:
        name = layer or str(pyogrio.list_layers(src)[0][0])
        info = pyogrio.read_info(src, layer=name, force_total_bounds=True)
        total = int(info["features"])
    except Exception as exc:  # GDAL's errors all mean: not readable as a layer
        from esc_gis.io import unreadable_message

        raise LayerReadError(unreadable_message(src, exc)) from None
    # The readers' one check, made once on the whole layer before any batch is read: a batch
    # cannot see what the file's bounds show (and would be measured as nothing, with exit 0).
    crs = info.get("crs") or (parse_crs(assume_crs, what="--assume-crs") if assume_crs is not None else None)
    if crs is not None and info.get("total_bounds") is not None:
        check_coordinates(info["total_bounds"], crs, what=str(src))
    numbers = feature_numbers(src, layer=name, where=where)[0] if where is not None else np.arange(1, total + 1)
    if len(numbers) == 0:
        msg = f"{src}: the layer is empty (no features{f' where {where}' if where else ''})."
        raise LayerReadError(msg)
    return name, numbers, total


def _limits_for(dist: gpd.GeoDataFrame | None, frame: gpd.GeoDataFrame, id_field: str) -> gpd.GeoDataFrame | None:
    """Return the disturbed limits of the batch's sites only (the engine refuses limits of unknown sites)."""
    if dist is None:
        return None
    key = id_field if id_field in frame.columns else "site_id"
    dkey = id_field if id_field in dist.columns else "site_id"
    if key not in frame.columns or dkey not in dist.columns:
        return dist
    # Limits for none of the batch's sites are still limits given: none of them disturbs anything.
    return dist[dist[dkey].astype(str).isin(frame[key].astype(str))]


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
