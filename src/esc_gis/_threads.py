"""The cap on the threads esc_gis's array work uses in this process (one home for it).

The overlays (:func:`esc_gis.measure.overlay.parallel`) and the slope blocks
(:func:`esc_gis.terrain.slope.iter_slope_blocks`) run on threads, which helps a single
process use the machine's cores. Where the cores are already shared out between processes
(a dask worker runs one task per core), those threads only fight over the GIL: on two cores,
two workers with their own threads each ran batches 1.4x slower than with one.
"""

from __future__ import annotations

__all__ = ["at_most", "cap"]

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: The cap of the code running now: each thread (and each asyncio task) has its own, so a
#: dask worker running several tasks at once on threads caps each one alone.
_CAP: ContextVar[int | None] = ContextVar("esc_gis_threads_cap", default=None)


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
