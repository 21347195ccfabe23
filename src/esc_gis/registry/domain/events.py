"""The history's events: one typed, append-only record for every fact the office records.

A permit has one ordered history (its *stream*, named by the permit number); an enforcement
case on a site without a permit has one of its own (named by the case id). Every command of
the registry loads a stream, folds it into the permit's state (:mod:`.fold`), checks the
command against that state and appends its events, all in one transaction. The tables people
open (the ``permits`` layer, the inspection log, the guarantees) are projections of the history.

Each event says who recorded it and when (``recorded_at``, UTC), the Village-clock day it took
effect (``on``) and, where the ordinance counts hours, the time (``when``); ``why`` holds the
written reasons or the note typed with it; ``data`` holds the facts of its kind, as plain JSON.

Examples
--------
>>> from datetime import date, datetime, timezone
>>> e = HistoryEvent("ESC-2026-0001", "fee_paid", datetime(2026, 11, 2, tzinfo=timezone.utc), "clerk",
...                  on=date(2026, 11, 2), data={"fee_kind": "application", "amount": 150.0})
>>> HistoryEvent.from_json_data(e.data_json())["amount"]
150.0
"""

from __future__ import annotations

__all__ = [
    "CASE_KINDS",
    "KINDS",
    "MOVE_KINDS",
    "HistoryEvent",
    "Kind",
    "check_event",
    "move_kind",
    "typed",
]

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any


@dataclass(frozen=True)
class Kind:
    """What an event kind is about (its concern) and the facts it must carry."""

    concern: str
    needs: tuple[str, ...] = ()
    moves: bool = False  # carries from/to and sets the permit's status


#: Every event kind, by concern. A kind that ``moves`` carries ``from`` and ``to`` states.
KINDS: dict[str, Kind] = {
    # intake and life cycle
    "received": Kind("intake", ("to",), moves=True),
    "remeasured": Kind("intake", ("fields",)),
    "updated": Kind("intake", ("fields",)),
    # the administering authority determined that a site under the permit threshold needs a permit
    # (§ 540-4A(1)(c)): its decision fields become a permitted site's
    "determined": Kind("intake", ("fields",)),
    # the determination reversed on appeal (§ 540-13A(1)): the site's decision without it
    "determination_reversed": Kind("intake", ("fields",)),
    "information_requested": Kind("lifecycle", moves=True),
    "information_received": Kind("lifecycle", moves=True),
    "under_review": Kind("lifecycle", moves=True),
    "decided": Kind("lifecycle", ("outcome",), moves=True),
    "work_started": Kind("lifecycle", moves=True),
    "extended": Kind("lifecycle", ("days",), moves=True),
    "stop_work_posted": Kind("lifecycle", moves=True),
    "suspended": Kind("lifecycle", moves=True),
    "revoked": Kind("lifecycle", moves=True),
    "retracted": Kind("lifecycle", moves=True),
    "reinstated": Kind("lifecycle", moves=True),
    "final_stabilization": Kind("lifecycle", moves=True),
    "closed": Kind("lifecycle", moves=True),
    # a condition of the permit established by the administering authority (§ 540-8F)
    "condition_added": Kind("conditions", ("condition",)),
    # money
    "fee_paid": Kind("money", ("fee_kind", "amount", "receipt")),
    "guarantee_received": Kind("money", ("guarantee_id", "type", "amount")),
    "guarantee_drawn": Kind("money", ("guarantee_id", "amount")),
    "guarantee_released": Kind("money", ("guarantee_id", "amount")),
    "guarantee_final_release": Kind("money", ("guarantee_id", "amount")),
    # inspections
    "inspected": Kind("inspections", ("by",)),
    "repaired": Kind("inspections", ("deficiency_ids",)),
    # enforcement
    "case_opened": Kind("enforcement", ("case_id", "ground")),
    # the responsible party notified to cease (§ 540-12C "after being notified")
    "notified": Kind("enforcement", ("case_id",)),
    "notice_of_intent": Kind("enforcement", ("case_id",)),
    "costs_recorded": Kind("enforcement", ("case_id", "amount", "recovered_from")),
    # the responsible party paid (part of) the costs and interest billed (§ 540-12E "fails to pay the amount due")
    "costs_paid": Kind("enforcement", ("case_id", "amount")),
    "referred": Kind("enforcement", ("case_id",)),
    "case_closed": Kind("enforcement", ("case_id",)),
    # appeals
    "appeal_filed": Kind("appeals", ("appeal_id",)),
    "appeal_decided": Kind("appeals", ("appeal_id", "outcome", "body")),
    # a disapproval reversed (or modified to approve) on appeal: approved and issued (§ 540-8C(2))
    "approved_on_appeal": Kind("appeals", ("appeal_id", "outcome", "body"), moves=True),
    # the plan
    "plan_original": Kind("amendments", ("version",)),
    "plan_amendment": Kind("amendments", ("version",)),
    "plan_notice": Kind("amendments", ("notice_id",)),
}

#: The event kind of a move to each state (from any state but those in :func:`move_kind`).
MOVE_KINDS: dict[str, str] = {
    "incomplete": "information_requested",
    "under_review": "under_review",
    "approved": "decided",
    "deemed_approved": "decided",
    "disapproved": "decided",
    "active": "work_started",
    "extended": "extended",
    "stop_work": "stop_work_posted",
    "suspended": "suspended",
    "revoked": "revoked",
    "final_stabilization": "final_stabilization",
    "closed": "closed",
}


def move_kind(from_status: str | None, to: str, move: str | None = None) -> str:
    """Return the event kind of a move from ``from_status`` to ``to``.

    ``move`` names a move back (``retraction`` or ``reinstatement``); the requested
    information arriving is a kind of its own, and a stop-work order lifted is its retraction.

    Examples
    --------
    >>> move_kind("incomplete", "under_review")
    'information_received'
    >>> move_kind("stop_work", "active")
    'retracted'
    """
    if move == "retraction":
        return "retracted"
    if move == "reinstatement":
        return "reinstated"
    if from_status == "incomplete" and to == "under_review":
        return "information_received"
    if from_status == "stop_work" and to == "active":
        # Lifting a stop-work order by a plain move is its retraction (§ 540-12D): one kind, so
        # both routes close the order the same way.
        return "retracted"
    return MOVE_KINDS[to]


@dataclass(frozen=True)
class HistoryEvent:
    """One event of a stream's history.

    Attributes
    ----------
    stream : str
        The permit number, or the case id of a case without a permit.
    kind : str
        One of :data:`KINDS`.
    recorded_at : datetime
        When it was written down (UTC).
    who : str
        Who recorded it.
    on : date, optional
        The Village-clock day it took effect.
    when : datetime, optional
        The time it took effect, where the ordinance counts hours (work started, an
        inspection, a repair).
    why : str, optional
        The written reasons or the note typed with it.
    data : mapping
        The facts of its kind (see :data:`KINDS`), JSON-safe once :meth:`data_json` writes them.
    seq : int, optional
        Its place in the stream (1, 2, ...), given when it is stored.
    log : str, optional
        The kind of its line in the clerk's log (``events``), which the log's projector writes
        (``transition``, ``fee``, ...); None for an event the log does not show (a case's own).
    """

    stream: str
    kind: str
    recorded_at: datetime
    who: str
    on: date | None = None
    when: datetime | None = None
    why: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    seq: int | None = None
    log: str | None = None

    def data_json(self) -> str:
        """Return ``data`` as JSON text (dates and times as ISO text, keys sorted)."""
        return json.dumps(dict(self.data), sort_keys=True, default=_iso, ensure_ascii=False)

    @staticmethod
    def from_json_data(text: str | None) -> dict[str, Any]:
        """Read back what :meth:`data_json` wrote (dates stay ISO text; :mod:`.fold` parses those it uses)."""
        return dict(json.loads(text)) if text else {}

    @property
    def moves(self) -> bool:
        """Whether the event changes the permit's status."""
        return KINDS[self.kind].moves

    @property
    def to(self) -> str | None:
        """The status the event moves to (a moving event), else None."""
        return self.data.get("to") if self.moves else None


def _iso(value: Any) -> str:
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    msg = f"{type(value).__name__} is not JSON"
    raise TypeError(msg)


def check_event(e: HistoryEvent) -> list[str]:
    """Return what is wrong with an event before it is stored (empty if nothing); pure.

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> check_event(HistoryEvent("P", "fee_paid", datetime(2026, 1, 1, tzinfo=timezone.utc), "x"))
    ["fee_paid needs 'fee_kind', 'amount', 'receipt'."]
    """
    kind = KINDS.get(e.kind)
    if kind is None:
        return [f"{e.kind!r} is not an event kind."]
    out = []
    missing = [k for k in kind.needs if k not in e.data]
    if kind.moves and "to" not in e.data:
        missing.append("to")
    if missing:
        out.append(f"{e.kind} needs {', '.join(repr(k) for k in dict.fromkeys(missing))}.")
    if e.recorded_at.tzinfo is None:
        out.append(f"{e.kind}: recorded_at has no time zone.")
    return out


#: The clerk's-log kinds (``events.kind``) that are not moves, and their typed history kinds.
_TYPED = {
    "update": "updated",
    "determination": "determined",
    "determination_reversal": "determination_reversed",
    "condition": "condition_added",
    "remeasured": "remeasured",
    "inspection": "inspected",
    "repair": "repaired",
    "fee": "fee_paid",
    "guarantee": "guarantee_received",
    "guarantee_draw": "guarantee_drawn",
    "guarantee_release": "guarantee_released",
    "guarantee_final_release": "guarantee_final_release",
    "enforcement": "case_opened",
    "appeal": "appeal_filed",
    "appeal_decision": "appeal_decided",
    "plan_original": "plan_original",
    "plan_amendment": "plan_amendment",
    "plan_notice": "plan_notice",
}


def typed(number: str, e: Any, *, when: datetime | None = None, **data: Any) -> HistoryEvent:
    """Return the typed history event of a clerk's-log entry ``e`` with the facts ``data``.

    Raises
    ------
    RegistryError
        If ``e.kind`` has no typed kind (a defect of the caller).
    """
    from esc_gis.errors import RegistryError

    if e.kind in ("received", "imported", "transition", "retraction", "reinstatement", "extension", "appeal_approval"):
        move = e.kind if e.kind in ("retraction", "reinstatement") else None
        if e.kind in ("received", "imported"):
            kind = "received"
        elif e.kind == "appeal_approval":
            kind = "approved_on_appeal"
        elif e.kind == "extension":
            kind = "extended"
            data.setdefault("days", e.days)
        else:
            kind = move_kind(e.from_status, str(e.to_status), move)
        data = {"from": e.from_status, "to": e.to_status, **data}
        if kind == "decided":
            data.setdefault("outcome", e.to_status)
    elif e.kind in _TYPED:
        kind = _TYPED[e.kind]
    else:
        raise RegistryError(f"No history kind for the log entry {e.kind!r}.")
    return HistoryEvent(number, kind, e.at, e.who, on=e.on_date, when=when, why=e.detail, data=data, log=e.kind)


#: A case's event kinds (``enforcement_events.kind``) and their typed history kinds: one table for
#: the live writes and the replay of older registries.
CASE_KINDS = {
    "opened": "case_opened",
    "notified": "notified",
    "stop_work": "stop_work_posted",
    "notice": "notice_of_intent",
    "costs": "costs_recorded",
    "paid": "costs_paid",
    "referral": "referred",
    "retraction": "retracted",
    "closed": "case_closed",
}
