"""Permit numbers: the ones applicants bring, and the next free ones in the profile's pattern."""

from __future__ import annotations

__all__ = ["assign_numbers", "taken_numbers"]

from collections.abc import Sequence
from typing import Any

from esc_gis.profile import Profile
from esc_gis.registry.backend import Backend
from esc_gis.registry.records import Application


def taken_numbers(cur: Any, backend: Backend, numbers: Sequence[str]) -> set[str]:
    """Return which of ``numbers`` the registry already holds (inside the caller's transaction)."""
    if not numbers:
        return set()
    ph = ", ".join([backend.ph] * len(numbers))
    cur.execute(f"SELECT permit_number FROM permits WHERE permit_number IN ({ph})", tuple(numbers))
    return {r[0] for r in cur.fetchall()}


def assign_numbers(cur: Any, backend: Backend, profile: Profile, apps: Sequence[Application]) -> list[str]:
    """Give each application its own number, or the next free one in the profile's pattern.

    One counter update per year takes a block of numbers for the whole batch; the counter
    row serialises concurrent writers. Numbers an earlier import holds, or this batch
    names, are skipped.

    Parameters
    ----------
    cur : cursor
        A cursor inside the write transaction that inserts the permits.
    backend : Backend
        The registry's back end (its placeholder style).
    profile : Profile
        The profile whose permit-number pattern new numbers follow.
    apps : sequence of Application
        The applications, each with ``received_on`` (its year picks the counter).

    Returns
    -------
    list of str
        One number per application, in input order.

    Raises
    ------
    ValueError
        If an application without a number has no ``received_on`` (checked before, by intake).
    """
    ph = backend.ph
    out = [a.permit_number or "" for a in apps]
    named = {n for n in out if n}
    years: dict[int, list[int]] = {}
    for i, a in enumerate(apps):
        if not a.permit_number:
            if a.received_on is None:
                msg = f"application {i + 1} has no received_on to number it by."
                raise ValueError(msg)
            years.setdefault(a.received_on.year, []).append(i)
    for year, wanting in sorted(years.items()):
        free: list[str] = []
        while len(free) < len(wanting):
            k = len(wanting) - len(free)
            cur.execute(
                f'INSERT INTO permit_counters ("year", "last") VALUES ({ph}, {ph}) '
                f'ON CONFLICT ("year") DO UPDATE SET "last" = permit_counters."last" + {ph} '
                'RETURNING "last"',
                (year, k, k),
            )
            last = int(cur.fetchone()[0])
            block = [profile.format_permit_number(year, n) for n in range(last - k + 1, last + 1)]
            held = taken_numbers(cur, backend, block) | named
            free += [n for n in block if n not in held]
        for i, number in zip(wanting, free, strict=True):
            out[i] = number
    return out
