"""Batches: a streamed run's sites layer cut into jobs, and one job read, measured and decided.

:func:`plan_jobs` cuts the layer into batches of ``batch_rows`` features, in the file's order
or, for a layer whose rows are not in spatial order, in the spatial order of
:mod:`esc_gis.screening.order` (each batch a compact patch, so its DEM window is small). A
**common plan** (§ 540-5) is screened whole in the batch of its first site: its later sites
are read by feature id. :func:`screen_job` screens one :class:`Job` with the same stages as the
whole-file run (:mod:`~esc_gis.screening.read`, :mod:`~esc_gis.screening.decide`) and hands
back its rows as the output's Arrow table (:func:`esc_gis.screening.write.batch_table`). The
engines (:mod:`esc_gis.screening.engines`) run the jobs; :mod:`esc_gis.screening.stream` writes
their rows.
"""

from __future__ import annotations

__all__ = ["BatchOut", "Context", "Job", "finish_job", "plan_jobs", "read_job", "screen_job"]

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyogrio

from esc_gis.errors import LayerReadError, Problem, ValidationError
from esc_gis.io import feature_numbers
from esc_gis.layers import LayerSet
from esc_gis.profile import Profile
from esc_gis.screening.write import batch_table

if TYPE_CHECKING:
    from esc_gis.screening.read import ReadRun


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
    (:func:`esc_gis.screening.write.batch_table`), made where the batch was screened, its
    geometry in ``dst_crs`` when one is given (a pyproj CRS: pickled to a dask worker as is).
    """

    layers: LayerSet
    profile: Profile
    disturbed: gpd.GeoDataFrame | None
    kwargs: dict[str, Any]
    fmt: str = "GeoPackage"
    dst_crs: Any | None = None


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
    from esc_gis.screening.read import AllSkippedError, read_run
    from esc_gis.validate import repair_tolerance_sqft

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
            repair_sqft=repair_tolerance_sqft(ctx.profile),
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
    from esc_gis.screening.decide import measure_run, run_findings

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
        "unmeasured": (read.limits_source, read.unmeasured),
        "generated_shown": r.generated_ids[:5],
    }
    ids = pd.util.hash_array(r.result["site_id"].astype(str).to_numpy(dtype=object))
    columns = [c for c in r.result.columns if c != r.result.geometry.name]
    table = batch_table(r.result, ctx.fmt, ctx.dst_crs)
    return BatchOut(table, kept, skipped, [], len(r.generated_ids), meta, ids, columns)


def _read_frame(job: Job) -> gpd.GeoDataFrame:
    """Read a batch's features: its range in the file's order, then the later sites of its plans.

    A spatial batch (an empty range) reads all its sites by feature id.

    Raises
    ------
    LayerReadError
        If GDAL gives another number of features than were selected before.
    """
    later = 0 if job.fids is None else len(job.fids)
    if job.stop == job.start:  # a spatial batch: every site read by id
        frame = None
    elif job.fid_range is not None:
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
    if later:  # the later sites of plans starting in this batch (or a spatial batch's), in the order asked
        # Read in ascending ids (a GeoPackage then walks its table once), put in the order asked.
        ascending = np.sort(job.fids) if job.fids is not None else None
        more = pyogrio.read_dataframe(job.src, layer=job.layer, fids=ascending, use_arrow=True, fid_as_index=True)
        more = more.loc[job.fids]
        if frame is None:
            return more.reset_index(drop=True)
        frame = frame.reset_index(drop=True).iloc[job.pos[: len(job.pos) - later] - job.start]
        return pd.concat([frame, more], ignore_index=True)
    assert frame is not None  # a batch with no range has every site read by id
    return frame.reset_index(drop=True).iloc[job.pos - job.start].reset_index(drop=True)


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


def plan_jobs(
    src: Path,
    layer: str,
    where: str | None,
    numbers: np.ndarray,
    size: int,
    held: np.ndarray,
    lead: np.ndarray,
    *,
    order: np.ndarray | None = None,
    fids: np.ndarray | None = None,
) -> list[Job]:
    """Cut the selected features into batches of ``size``: in the file's order, or in ``order``.

    Parameters
    ----------
    src, layer, where
        The sites file, its layer and the user's where clause.
    numbers : numpy.ndarray of int
        The selected features' 1-based feature numbers, in reading order.
    size : int
        Features a batch.
    held, lead : numpy.ndarray of int
        The positions of the sites of multi-site plans and of their plan's first site
        (:func:`_plan_positions`).
    order : numpy.ndarray of int, optional
        The positions in the order to batch them (:func:`esc_gis.screening.order.spatial_order`);
        default the file's order, each batch a range read at once.
    fids : numpy.ndarray of int, optional
        Each position's feature id, when already read (with ``order``).

    Returns
    -------
    list of Job
        In file order, each batch's positions in ``start:stop``; with ``order``, each batch's
        positions read by feature id (``start == stop``) and a plan screened whole in the batch
        of its first site in that order.

    Raises
    ------
    LayerReadError
        If GDAL gives another number of features than were selected before.
    """
    if order is None:
        return _jobs(src, layer, where, numbers, size, held, lead)
    n = len(numbers)
    if fids is None:
        fids = _read_fields(src, layer, where, [], n).column(0).to_numpy()
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    # The batching is the file-order one's, on ranks: a plan's sites go to the batch of its
    # first site in the new order (plans are neighbours, so mostly that batch is their own).
    held_rank = rank[held]
    plan = np.unique(lead, return_inverse=True)[1]
    first = np.full(plan.max() + 1 if len(plan) else 0, np.iinfo(np.int64).max)
    np.minimum.at(first, plan, held_rank)
    keep = np.argsort(held_rank, kind="stable")  # _batches takes the plan sites ascending
    jobs: list[Job] = []
    for _, _, ranks in _batches(n, size, held_rank[keep], first[plan][keep]):
        if not len(ranks):  # every site of its range went with its plan to an earlier batch
            continue
        # In file order within the batch: its rows then come out sorted by place, as the spill
        # keeps them (esc_gis.screening.order.FileOrder), with no copy to sort them.
        pos = np.sort(order[ranks])
        jobs.append(Job(src, layer, where, 0, 0, pos, numbers[pos], fids[pos], None))
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
    crs = info.get("crs") or (parse_crs(assume_crs, what="assume_crs=") if assume_crs is not None else None)
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
