"""The cap on the threads esc_gis's array work uses in this process (one home for it).

The overlays (:func:`esc_gis.measure.overlay.parallel`) and the slope blocks
(:func:`esc_gis.terrain.slope.iter_slope_blocks`) run on threads, which helps a single
process use the machine's cores. Where the cores are already shared out between processes
(a dask worker runs one task per core), those threads only fight over the GIL: on two cores,
two workers with their own threads each ran batches 1.4x slower than with one.

GDAL's own thread pool (``NUM_THREADS`` when decoding or writing a raster) does not survive a
``fork``: a forked child (multiprocessing's default on Linux, mutmut's runner) finds GDAL's
pool without its threads and waits on it for ever. :func:`gdal_threads` gives 1 in a process
forked from one that had esc_gis loaded.
"""

from __future__ import annotations

__all__ = ["at_most", "cap", "few_malloc_arenas", "gdal_threads"]

import ctypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: The cap of the code running now: each thread (and each asyncio task) has its own, so a
#: dask worker running several tasks at once on threads caps each one alone.
_CAP: ContextVar[int | None] = ContextVar("esc_gis_threads_cap", default=None)


#: glibc's ``mallopt`` parameter for the number of arenas (malloc.h's ``M_ARENA_MAX``).
_M_ARENA_MAX = -8


def few_malloc_arenas(arenas: int = 2) -> bool:
    """Ask glibc's allocator for at most ``arenas`` arenas in this process, before threads start.

    glibc gives each thread that allocates an arena of its own, up to eight per core, and keeps
    what is freed there for that arena. A streamed screening allocates on three threads (the
    reader, the measuring, GDAL's writer), so a million parcels grew to 600-615 MB of which
    about 50 MB was freed memory held in the readers' and writers' arenas; with two arenas the
    same run peaked at 555 MB, no slower. It is the process's choice, not a library's: the
    commands call it, :mod:`esc_gis`'s functions never do. A ``MALLOC_ARENA_MAX`` the user set is
    left as it is, and other C libraries (musl, macOS) are left alone.

    Parameters
    ----------
    arenas : int, default 2
        The most arenas glibc may make.

    Returns
    -------
    bool
        Whether glibc took the setting.
    """
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_ARENA_MAX, arenas))
    except (OSError, AttributeError):  # not glibc
        return False


#: Set in a child forked after esc_gis was loaded: GDAL's thread pool may be the parent's.
_FORKED = [False]


def _forked() -> None:
    _FORKED[0] = True


os.register_at_fork(after_in_child=_forked)


def gdal_threads(n: int | str) -> str:
    """Return GDAL's ``NUM_THREADS`` value for ``n`` threads (or ``"ALL_CPUS"``): "1" in a forked child."""
    if _FORKED[0]:
        return "1"
    return n if isinstance(n, str) else str(cap(n))


def cap(n: int) -> int:
    """Return ``n`` threads, or fewer under :func:`at_most` (never less than 1)."""
    limit = _CAP.get()
    return max(1, n if limit is None else min(n, limit))


@contextmanager
def at_most(n: int) -> Iterator[None]:
    """Cap the threads of the array work done inside the ``with`` block, in this thread.

    A cap inside another is never looser than it.

    Raises
    ------
    ValueError
        If ``n`` is less than 1.
    """
    if n < 1:
        msg = f"at least one thread is needed, got {n}"
        raise ValueError(msg)
    token = _CAP.set(cap(n))
    try:
        yield
    finally:
        _CAP.reset(token)
