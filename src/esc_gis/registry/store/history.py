"""The history table: reading streams back and appending to them (the one home of every fact)."""

from __future__ import annotations

__all__ = ["append", "read"]

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from esc_gis.errors import RegistryError
from esc_gis.registry.domain.events import HistoryEvent, check_event

#: The columns read back, in :func:`_event`'s order.
_COLUMNS = "stream, kind, recorded_at, who, on_date, at, why, data, seq, log"


def _event(b: Any, r: Sequence[Any]) -> HistoryEvent:
    return HistoryEvent(
        r[0],
        r[1],
        b.load("datetime", r[2]),
        r[3],
        on=b.load("date", r[4]),
        when=b.load("datetime", r[5]),
        why=r[6],
        data=HistoryEvent.from_json_data(r[7]),
        seq=int(r[8]),
        log=r[9],
    )


def read(cur: Any, b: Any, streams: Sequence[str] | None = None) -> list[HistoryEvent]:
    """Return the events of ``streams`` (every stream if None), by stream, oldest first.

    Parameters
    ----------
    cur : cursor
        Inside a transaction of ``b``.
    b : Backend
        Its placeholders and how dates and times are stored.
    streams : sequence of str, optional
        Permit numbers or case ids.
    """
    if streams is not None and not streams:
        return []
    where = "" if streams is None else f"WHERE stream IN ({', '.join([b.ph] * len(streams))})"
    cur.execute(f"SELECT {_COLUMNS} FROM history {where} ORDER BY stream, seq", tuple(streams or ()))
    return [_event(b, r) for r in cur.fetchall()]


def read_in_order(cur: Any, b: Any) -> list[HistoryEvent]:
    """Return every event in the order stored (its id): the order a replay projects them in."""
    cur.execute(f"SELECT {_COLUMNS} FROM history ORDER BY id")
    return [_event(b, r) for r in cur.fetchall()]


def append(cur: Any, b: Any, e: HistoryEvent) -> HistoryEvent:
    """Store ``e`` at the end of its stream (inside the caller's write transaction); return it with its ``seq``.

    Raises
    ------
    RegistryError
        If the event lacks a fact its kind needs (a defect of the caller, never of input).
    """
    problems = check_event(e)
    if problems:
        raise RegistryError(f"Cannot record {e.kind} on {e.stream}: {' '.join(problems)}")
    cur.execute(f"SELECT COALESCE(MAX(seq), 0) FROM history WHERE stream = {b.ph}", (e.stream,))
    seq = int(cur.fetchone()[0]) + 1
    cur.execute(
        f"INSERT INTO history (stream, seq, kind, recorded_at, who, on_date, at, why, data, log) "
        f"VALUES ({', '.join([b.ph] * 10)})",
        (
            e.stream,
            seq,
            e.kind,
            b.dump("datetime", e.recorded_at),
            e.who,
            b.dump("date", e.on),
            b.dump("datetime", e.when),
            e.why,
            e.data_json(),
            e.log,
        ),
    )
    return replace(e, seq=seq)
