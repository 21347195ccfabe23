"""The dask engine: a streamed screening's batches spread over a ``dask.distributed`` cluster.

:func:`esc_gis.screening.stream.screen_to_file` cuts the sites layer into batches and writes their rows
in file order; :func:`dask_engine` gives it a way to screen those batches on many processes or
machines. Each worker reads its own batch's features from the file (so the file must be where
every worker can read it: a local disk for a local cluster, shared storage for a remote one),
screens them with the layer set and profile sent once to every worker (scattered), and sends
back the rows as the output's Arrow table, compressed (zstd Arrow IPC: a tenth of the bytes;
the driver, which every row passes through, only unpacks and writes them). A task uses one
core, as dask counts them: the engine's own threads are capped at one inside it
(:func:`esc_gis._threads.at_most`; on two cores, two workers with threads of their own ran
each batch 1.4x slower). The driver keeps a bounded number of batches in flight and takes
their outcomes in order, so the output is the single-process engine's, row for row, and the
driver's memory stays a few batches' whatever the layer's size.

Without a scheduler address, a ``LocalCluster`` on this machine's cores is started (separate
processes, loopback only) and closed at the end.
"""

from __future__ import annotations

__all__ = ["dask_engine", "local_cluster"]

import functools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

import pyarrow as pa

from esc_gis._threads import at_most
from esc_gis.errors import EscGisError, install_hint
from esc_gis.screening.batches import BatchOut, Context, Job, screen_job

#: dask's housekeeping slowed to what a batch of tens of seconds needs. The statistical profiler
#: samples each worker's stack every 10 ms for the dashboard's profile page, the event loops
#: wake every 20 ms to check they are not blocked, and the memory monitors read /proc every
#: 100 ms: CPU on every worker and in the driver (scheduler and nannies) that a single process
#: does not spend. The memory monitor at 500 ms still pauses a worker long before a batch
#: (about 400 MB, built over seconds) could outgrow it.
_QUIET = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.memory.monitor-interval": "500ms",
    "distributed.admin.system-monitor.interval": "2s",
}


class DaskUnavailableError(EscGisError, ImportError):
    """Raised when ``--engine dask`` is asked for and dask.distributed is not installed."""


def local_cluster(workers: int | None = None) -> Any:
    """Start a ``LocalCluster`` of ``workers`` processes (default: the cores), one thread each, on 127.0.0.1.

    Raises
    ------
    DaskUnavailableError
        If dask.distributed is not installed.
    """
    try:
        import dask
        from distributed import LocalCluster
    except ImportError:
        msg = "The dask engine needs dask.distributed. " + install_hint("dask", "'dask[distributed]'")
        raise DaskUnavailableError(msg) from None
    # The cluster's own housekeeping, set for the cluster started here only (a scheduler given by
    # address keeps its owner's settings; the nannies hand this to their workers).
    with dask.config.set(_QUIET):
        return LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,  # the engine holds the GIL much of the time: processes, not threads
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            worker_dashboard_address="127.0.0.1:0",
        )


def _client(scheduler: str | None, workers: int | None) -> tuple[Any, Any]:
    """Connect to ``scheduler``, or start a local cluster of ``workers`` processes; return (client, cluster)."""
    try:
        from distributed import Client
    except ImportError:
        msg = "The dask engine needs dask.distributed. " + install_hint("dask", "'dask[distributed]'")
        raise DaskUnavailableError(msg) from None
    if scheduler:
        return Client(scheduler), None
    cluster = local_cluster(workers)
    return Client(cluster), cluster


def _screen_on_one_core(job: Job, ctx: Context) -> BatchOut:
    """Screen a batch on a worker, the engine's threads capped at one (dask gives a task one core).

    Its rows travel packed (:func:`_pack`).
    """
    with at_most(1):
        out = screen_job(job, ctx)
        packed = replace(out, result=None, packed=_pack(out.result))
    del out
    _give_back_freed_memory()
    return packed


def _give_back_freed_memory() -> None:
    """Return the memory a batch freed to the system (glibc's ``malloc_trim``; elsewhere nothing).

    A batch frees its working set in pieces that glibc keeps for reuse, and the next batch does
    not fit all of them: a worker's resident memory crept up by about 50 MB a batch. Handing
    them back after each batch keeps a worker's peak at one batch's.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None


def _pack(table: pa.Table | None) -> bytes | None:
    """Return ``table`` as a compressed Arrow IPC stream (or None).

    A county's rows are mostly findings text (about 850 bytes a row, much of it repeated):
    compressed with zstd, a 50,000-row batch of 59 MB is 5 MB, packed in 0.04 s on the worker and
    unpacked in 0.02 s by the driver, where sending it as it is cost the driver about 0.25 s of
    socket reads and unpickling. Every batch passes through the driver, so that is its time.
    """
    if table is None:
        return None
    codec = "zstd" if pa.Codec.is_available("zstd") else None
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(
        sink, table.schema, options=pa.ipc.IpcWriteOptions(compression=codec, use_threads=False)
    ) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _unpack(out: BatchOut) -> BatchOut:
    """Return a worker's outcome with its rows unpacked."""
    if out.packed is None:
        return out
    return replace(out, result=pa.ipc.open_stream(out.packed).read_all(), packed=None)


def dask_engine(
    scheduler: str | None = None, *, workers: int | None = None, in_flight: int | None = None
) -> Callable[[Iterable[Job], Context], Iterator[BatchOut]]:
    """Return an engine for :func:`esc_gis.screening.stream.screen_to_file` that runs the batches on dask.

    Parameters
    ----------
    scheduler : str, optional
        A ``dask.distributed`` scheduler's address (``tcp://10.0.0.5:8786``); default a local
        cluster of ``workers`` processes on 127.0.0.1.
    workers : int, optional
        The local cluster's processes; default this machine's cores.
    in_flight : int, optional
        Batches submitted ahead of the one being written; default twice the workers.

    Returns
    -------
    callable
        ``engine(jobs, context)`` yielding each job's :class:`~esc_gis.screening.batches.BatchOut` in order.

    Raises
    ------
    DaskUnavailableError
        When the engine runs, if dask.distributed is not installed.
    """

    def run(jobs: Iterable[Job], ctx: Context) -> Iterator[BatchOut]:
        client, cluster = _client(scheduler, workers)
        try:
            ahead = in_flight or 2 * max(1, len(client.scheduler_info().get("workers", {})))
            shared = client.scatter(ctx, broadcast=True)  # the layer set and profile, once per worker
            todo = iter(jobs)
            queue: deque[Any] = deque()
            for job in todo:
                queue.append(client.submit(_screen_on_one_core, job, shared, pure=False))
                if len(queue) >= ahead:
                    break
            while queue:
                outcome = _unpack(queue.popleft().result())
                nxt = next(todo, None)
                if nxt is not None:
                    queue.append(client.submit(_screen_on_one_core, nxt, shared, pure=False))
                yield outcome
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    return run
