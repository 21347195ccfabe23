"""Permit numbers: the ones applicants bring, and the next free ones in the profile's pattern."""

from __future__ import annotations

__all__ = ["assign_numbers", "next_number", "number_pattern", "taken_numbers"]

import re
from collections.abc import Sequence
from string import Formatter
from typing import TYPE_CHECKING, Any

from esc_gis.errors import ProfileError
from esc_gis.registry.domain.records import Application
from esc_gis.registry.store.backend import Backend

if TYPE_CHECKING:
    from esc_gis.profile import Profile


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


def number_pattern(pattern: str) -> re.Pattern[str]:
    """Return a regular expression that reads ``year`` and ``seq`` back from a numbering pattern.

    Parameters
    ----------
    pattern : str
        A profile's numbering pattern, e.g. ``ENF-{year}-{seq:04d}``.

    Raises
    ------
    ProfileError
        If the pattern names a field other than ``year`` and ``seq``, or lacks ``seq``.
    """
    parts: list[str] = []
    fields: set[str] = set()
    for literal, name, _spec, _conv in Formatter().parse(pattern):
        parts.append(re.escape(literal))
        if name is None:
            continue
        if name not in ("year", "seq") or name in fields:
            msg = f"The numbering pattern {pattern!r} may name {{year}} and {{seq}} once each, not {{{name}}}."
            raise ProfileError(msg)
        fields.add(name)
        parts.append(rf"(?P<{name}>\d+)")
    if "seq" not in fields:
        msg = f"The numbering pattern {pattern!r} has no {{seq}}: numbers would repeat."
        raise ProfileError(msg)
    return re.compile("".join(parts))


def next_number(cur: Any, backend: Backend, table: str, column: str, pattern: str, year: int) -> str:
    """Return the next free number of ``year`` in ``table.column`` by ``pattern``, keeping other writers out.

    The table stays locked against other writers until the caller's transaction ends, so two
    offices' clerks opening a case at once get two numbers (PostGIS), as SQLite's single writer
    already guarantees. Ids written by hand in another pattern are ignored.

    Raises
    ------
    ProfileError
        If the pattern cannot be read back (:func:`number_pattern`).
    """
    regex = number_pattern(pattern)
    backend.lock_table(cur, table)
    cur.execute(f"SELECT {column} FROM {table}")
    seqs = [0]
    for (value,) in cur.fetchall():
        m = regex.fullmatch(str(value))
        if m and int(m.group("year") if "year" in regex.groupindex else year) == year:
            seqs.append(int(m.group("seq")))
    return pattern.format(year=year, seq=max(seqs) + 1)
