"""The local engine: a streamed run's batches screened one after another in this process.

:func:`local_engine` is :func:`esc_gis.screening.stream.screen_to_file`'s default engine; the
dask engine (:mod:`esc_gis.screening.engines.dask`) runs the same jobs on a cluster.
"""

from __future__ import annotations

__all__ = ["local_engine"]

import contextvars
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

from esc_gis.screening.batches import BatchOut, Context, Job, finish_job, read_job


def local_engine(jobs: Iterable[Job], ctx: Context) -> Iterator[BatchOut]:
    """Screen the jobs one after another in this process, reading each while the one before is measured.

    Reading a batch (GDAL, the checks, the reprojection: about a seventh of a batch's work)
    and measuring the one before overlap on two cores; about 6 % came off a 100,000-parcel run
    in batches of 10,000 (three interleaved runs each, on a shared machine). One batch is read
    ahead, so one more batch's sites are held. The reader runs under the caller's thread cap
    (:func:`esc_gis._threads.at_most`).

    Parameters
    ----------
    jobs : iterable of Job
        The batches, in the order their outcomes are wanted.
    ctx : Context
        What every batch is screened with.

    Yields
    ------
    BatchOut
        Each job's outcome, in the order given.

    Raises
    ------
    LayerReadError, LayerSetError, CRSError, ProfileError
        As :func:`esc_gis.screening.batches.screen_job`; the batch being read ahead is dropped.
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
        # One read at most is outstanding, and the one reader takes it up at once: there is no
        # queued read to cancel.
        pool.shutdown(wait=False)
