"""A permit's state as a pure fold of its history.

Nothing here reads a table or the clock: :func:`fold` takes the events of one stream, oldest
first, and returns its :class:`PermitState`: the status and the states before it, every
running clock with the event that started it, the guarantees' balances net of every draw,
release and recovered cost, the open orders, the open deficiencies and the plan's version.
Every rule of the registry reads this state; none reads another concern's table.

Examples
--------
>>> from datetime import date, datetime, timezone
>>> t = datetime(2026, 1, 5, tzinfo=timezone.utc)
>>> events = [
...     HistoryEvent("P", "received", t, "clerk", on=date(2026, 1, 5), data={"to": "application_received"}),
...     HistoryEvent("P", "fee_paid", t, "clerk", on=date(2026, 3, 2),
...                  data={"fee_kind": "application", "amount": 150, "receipt": "R1"}),
... ]
>>> fold(events, application_fee="application").decision_clock.start
datetime.date(2026, 3, 2)
"""

from __future__ import annotations

__all__ = ["UNRECORDED_BY", "Clock", "GuaranteeState", "InspectionFact", "Order", "PermitState", "fold"]

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from esc_gis.registry.domain.events import HistoryEvent

#: The order each state stands for, and the kinds of event that close it.
_ORDER_OF = {"stop_work": "stop_work", "suspended": "suspension", "revoked": "revocation"}


@dataclass(frozen=True)
class Clock:
    """A running clock: the day it runs from and the event (its ``seq``) that started it."""

    start: date
    seq: int | None
    event: str


@dataclass
class GuaranteeState:
    """A financial guarantee as its events leave it (§ 540-8D)."""

    id: int
    type: str
    amount: float
    received_on: date | None
    expires_on: date | None
    drawn: float = 0.0
    released: float = 0.0
    recovered: float = 0.0  # the office's costs recovered from it (§ 540-12E)
    final_release: float | None = None  # what the final release paid out (§ 540-8D(1))

    @property
    def balance(self) -> float:
        """What is still held: the amount less draws, releases and recovered costs; 0 after the final release."""
        if self.final_release is not None:
            return 0.0
        return round(self.amount - self.drawn - self.released - self.recovered, 2)


#: Who inspected, where the history does not say (an inspection recorded before migration 9, or
#: replayed from schema 7): the permit holder's, as the office counted it toward § 540-8E(6)
#: when it was recorded, so a migration does not turn a met week into a missed one.
UNRECORDED_BY = "holder"


@dataclass(frozen=True)
class InspectionFact:
    """An inspection as its ``inspected`` event records it.

    ``by`` is ``holder`` (the permit holder's inspection, the duty of § 540-8E(6)) or ``office``
    (the administering authority's, § 540-8E(7), § 540-11). ``contents`` names the items of
    § 540-8E(6)'s list the report holds beyond its time, inspector and assessment (``location``,
    ``work_done``, ``phase``); None for a day alone, whose report is kept at the site.
    ``checklist`` holds an office inspection's findings (``on_site_documents``,
    ``certificate_posted``: True or False), only those checked.
    """

    at: datetime | date
    by: str
    seq: int | None = None
    inspection_id: int | None = None
    contents: tuple[str, ...] | None = None
    pre_start: bool = False
    adjoining_repairs: bool = False
    checklist: Mapping[str, bool] = field(default_factory=dict)
    #: Where on the site, in words (§ 540-8E(6) "location of the construction site inspection"),
    #: when the report gave it so: the history is its one home (the report's point is a column).
    location_words: str | None = None


@dataclass(frozen=True)
class Order:
    """An order posted on the permit: a stop-work order, a suspension or a revocation.

    ``closed_on`` and ``closed_seq``: the day and the event that retracted it (or reinstated the
    permit), in :attr:`PermitState.orders_posted`; None while it stands.
    """

    kind: str
    since: date | None
    seq: int | None
    case_id: str | None = None
    closed_on: date | None = None
    closed_seq: int | None = None


@dataclass
class PermitState:
    """What a stream's history adds up to. See :func:`fold`."""

    stream: str
    status: str | None = None
    #: The day of the move into ``status`` (None: the permit was received or imported in it).
    status_on: date | None = None
    before: list[str] = field(default_factory=list)  # the states before, for a move back
    received_on: date | None = None
    application_fee_on: date | None = None
    information_requested_on: date | None = None
    information_received_on: date | None = None
    decided_on: date | None = None
    issued_on: date | None = None
    started_at: datetime | None = None
    final_on: date | None = None
    extensions_days: list[int] = field(default_factory=list)
    #: Each extension: its day, days, and the conditions and other construction authorizations
    #: recorded with it (§ 540-8G).
    extensions: list[dict[str, Any]] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    fees: list[dict[str, Any]] = field(default_factory=list)
    guarantees: dict[int, GuaranteeState] = field(default_factory=dict)
    costs: list[dict[str, Any]] = field(default_factory=list)
    #: The payments of costs billed, by case (§ 540-12E: only the amount not paid is assessed).
    payments: list[dict[str, Any]] = field(default_factory=list)
    orders: list[Order] = field(default_factory=list)
    orders_posted: list[Order] = field(default_factory=list)  # every order ever posted, with when it closed
    inspections: list[InspectionFact] = field(default_factory=list)
    inspection_ids: list[int] = field(default_factory=list)  # the reports (a day alone has none)
    deficiencies: dict[int, dict[str, Any]] = field(default_factory=dict)
    plan_version: int | None = None
    appeals: dict[str, str | None] = field(default_factory=dict)
    cases: list[str] = field(default_factory=list)
    #: The place (``seq``) of each case's opening in the stream, so an order lifted earlier the same day is told apart.
    case_seq: dict[str, int] = field(default_factory=dict)
    #: The notices to cease, by case and day (§ 540-12C "after being notified").
    notified: list[tuple[str, date | None]] = field(default_factory=list)
    #: The administering authority's determination that the site needs a permit (§ 540-4A(1)(c)):
    #: its day and reasons; None if none was recorded.
    determination: dict[str, Any] | None = None
    #: The conditions of the permit (§ 540-8F; an extension's, § 540-8G), in the order recorded: each
    #: its day, text, event and source (``condition`` or ``extension``).
    conditions: list[dict[str, Any]] = field(default_factory=list)
    clocks: dict[str, Clock] = field(default_factory=dict)
    seq: int = 0
    events: int = 0

    @property
    def previous_status(self) -> str | None:
        """The state a retraction or reinstatement goes back to."""
        return self.before[-1] if self.before else None

    @property
    def decision_clock(self) -> Clock | None:
        """The 20 business days of § 540-8C(1) or (4), if running: None until the application is complete."""
        return self.clocks.get("decision")

    @property
    def open_deficiencies(self) -> list[int]:
        """The deficiencies not yet repaired, oldest first."""
        return [i for i, d in self.deficiencies.items() if d.get("repaired_at") is None]

    @property
    def held(self) -> float:
        """What all the guarantees still hold."""
        return round(sum(g.balance for g in self.guarantees.values()), 2)

    @property
    def permit_conditions(self) -> list[dict[str, Any]]:
        """The conditions of the permit, in the order recorded: each ``on``, ``text`` and ``source``.

        ``source`` is ``condition`` (set by the administering authority, § 540-8F, with the approval
        or later) or ``extension`` (additional BMPs required as a condition of an extension,
        § 540-8G). Numbered 1, 2, ... in this order by `permits show` and ground A3.
        """
        return [{"on": c["on"], "text": c["text"], "source": c["source"]} for c in self.conditions]

    def order(self, kind: str) -> Order | None:
        """Return the open order of ``kind`` (``stop_work``, ``suspension``, ``revocation``), if any."""
        return next((o for o in reversed(self.orders) if o.kind == kind), None)


def _date(v: Any) -> date | None:
    if v is None or (isinstance(v, date) and not isinstance(v, datetime)):
        return v
    if isinstance(v, datetime):
        return v.date()
    return date.fromisoformat(str(v)[:10])


def _datetime(v: Any) -> datetime | None:
    if v is None or isinstance(v, datetime):
        return v
    return datetime.fromisoformat(str(v))


def _restart_decision(s: PermitState, e: HistoryEvent) -> None:
    """Start (or restart) the decision clock where the application is complete (§ 540-8B, § 540-8C(1), (4)).

    The 20 business days run from "the receipt of a complete permit application, as required by
    § 540-8B", which includes the application fee; after information is requested they run from
    "the date the additional information is received". Whichever of the two comes last starts it.
    """
    if s.application_fee_on is None or s.received_on is None:
        return
    if s.status not in ("application_received", "under_review"):
        return  # decided already, or incomplete: waiting for the information, no decision is due
    start = max(s.information_received_on or s.received_on, s.application_fee_on)
    running = s.clocks.get("decision")
    if running is not None and running.start == start:
        # Still the same complete application (a move under review changes nothing): the clock
        # keeps the event that started it, never one dated after its start.
        return
    s.clocks["decision"] = Clock(start, e.seq, e.kind)


def fold(events: Iterable[HistoryEvent], *, application_fee: str = "application") -> PermitState:
    """Fold a stream's events, oldest first, into its state; pure.

    Parameters
    ----------
    events : iterable of HistoryEvent
        One stream's events in their order.
    application_fee : str
        The fee kind that completes an application (§ 540-8B).

    Returns
    -------
    PermitState

    Raises
    ------
    ValueError
        If the events belong to more than one stream.
    """
    s: PermitState | None = None
    for e in events:
        if s is None:
            s = PermitState(e.stream)
        elif e.stream != s.stream:
            msg = f"event {e.kind} of {e.stream!r} is not of stream {s.stream!r}"
            raise ValueError(msg)
        s.events += 1
        s.seq = e.seq if e.seq is not None else s.seq + 1
        _apply(s, replace(e, seq=s.seq), application_fee)  # an event not yet stored gets its place
    return s if s is not None else PermitState("")


def _apply(s: PermitState, e: HistoryEvent, application_fee: str) -> None:  # noqa: C901 (one branch a kind)
    d = e.data
    k = e.kind
    if e.moves:
        _move(s, e)
        if s.status not in ("application_received", "under_review"):
            # § 540-8C(1): the 20 business days are for the decision on an application waiting for
            # it; one closed undecided (withdrawn) or otherwise moved on has none running.
            s.clocks.pop("decision", None)
    if k == "received":
        s.received_on = e.on
        s.issued_on = _date(d.get("issued_on"))
        # An imported permit issued and since closed (or revoked, disapproved) keeps its day of
        # issuance; its decision is recorded where the import says it was.
        s.decided_on = _date(d["decided_on"]) if "decided_on" in d else s.issued_on
        s.started_at = _datetime(d.get("started_at"))
        s.fields.update(d.get("fields") or {})
        if s.started_at is not None:
            s.clocks["work"] = Clock(s.started_at.date(), e.seq, k)
        _restart_decision(s, e)
    elif k in ("updated", "remeasured", "determined", "determination_reversed"):
        s.fields.update(d["fields"])
        if k == "determination_reversed":
            s.determination = None  # withdrawn on appeal: a new one may be recorded
        if k == "determined":
            # The § 540-4A(1)(c) purposes it names (none on a determination recorded before they were).
            s.determination = {"on": e.on, "reasons": e.why, "seq": e.seq, "purposes": list(d.get("purposes") or ())}
    elif k == "condition_added":
        s.conditions.append({"on": e.on, "text": str(d["condition"]), "seq": e.seq, "source": "condition"})
    elif k == "information_requested":
        s.information_requested_on = e.on
        s.clocks.pop("decision", None)
    elif k == "information_received":
        s.information_received_on = e.on
        _restart_decision(s, e)
    elif k == "under_review":
        _restart_decision(s, e)
    elif k == "decided":
        s.decided_on = e.on
        s.clocks.pop("decision", None)
        if d["outcome"] != "disapproved":
            s.issued_on = e.on
        # Conditions set with the approval (§ 540-8F): facts of the decision's one event.
        s.conditions += [
            {"on": e.on, "text": str(c), "seq": e.seq, "source": "condition"} for c in d.get("conditions") or ()
        ]
    elif k == "work_started" and s.started_at is None:
        s.started_at = e.when
        if e.when is not None:
            s.clocks["work"] = Clock(e.on or e.when.date(), e.seq, k)
    elif k == "extended":
        s.extensions_days.append(int(d["days"]))
        s.extensions.append(
            {
                "on": e.on,
                "days": int(d["days"]),
                "conditions": list(d.get("conditions") or ()),
                "authorizations": list(d.get("authorizations") or ()),
            }
        )
        # § 540-8G "additional BMPs as a condition of the extension": conditions of the permit too.
        s.conditions += [
            {"on": e.on, "text": str(c), "seq": e.seq, "source": "extension"} for c in d.get("conditions") or ()
        ]
    elif k == "final_stabilization":
        s.final_on = e.on
    elif k == "fee_paid":
        s.fees.append(dict(d, on=e.on))
        if d["fee_kind"] == application_fee and s.application_fee_on is None:
            s.application_fee_on = e.on
            _restart_decision(s, e)
    elif k == "guarantee_received":
        gid = int(d["guarantee_id"])
        s.guarantees[gid] = GuaranteeState(gid, d["type"], float(d["amount"]), e.on, _date(d.get("expires_on")))
    elif k in ("guarantee_drawn", "guarantee_released", "guarantee_final_release"):
        g = s.guarantees[int(d["guarantee_id"])]
        amount = float(d["amount"] or 0.0)
        if k == "guarantee_drawn":
            g.drawn += amount
        elif k == "guarantee_released":
            g.released += amount
        else:
            g.final_release = amount
    elif k in ("costs_recorded", "notice_of_intent") and d.get("amount") is not None:
        s.costs.append(dict(d, on=e.on))
        if d["recovered_from"] == "guarantee" and d.get("guarantee_id") is not None:
            # § 540-12E: "The costs ... plus interest" are recovered from the guarantee, both.
            s.guarantees[int(d["guarantee_id"])].recovered += float(d["amount"]) + float(d.get("interest") or 0.0)
    elif k == "costs_paid":
        s.payments.append(dict(d, on=e.on))
    elif k == "inspected":
        contents = d.get("contents")
        s.inspections.append(
            InspectionFact(
                e.when or e.on,  # type: ignore[arg-type]
                str(d.get("by") or UNRECORDED_BY),
                e.seq,
                None if d.get("inspection_id") is None else int(d["inspection_id"]),
                None if contents is None else tuple(contents),
                bool(d.get("pre_start")),
                bool(d.get("adjoining_repairs")),
                {k: bool(v) for k, v in (d.get("checklist") or {}).items()},
                d.get("location_words"),
            )
        )
        if d.get("inspection_id") is not None:
            s.inspection_ids.append(int(d["inspection_id"]))
        for item in d.get("deficiencies") or ():
            s.deficiencies[int(item["id"])] = {
                "inspected_at": e.when,
                "notified_at": _datetime(item.get("notified_at")),
                "repaired_at": None,
            }
        for i in d.get("repaired") or ():
            s.deficiencies[int(i)]["repaired_at"] = e.when
    elif k == "repaired":
        for i in d["deficiency_ids"]:
            s.deficiencies[int(i)]["repaired_at"] = e.when
    elif k == "case_opened":
        s.cases.append(str(d["case_id"]))
        s.case_seq[str(d["case_id"])] = e.seq or 0
    elif k == "notified":
        s.notified.append((str(d["case_id"]), e.on))
    elif k == "appeal_filed":
        s.appeals[str(d["appeal_id"])] = None
    elif k == "appeal_decided":
        s.appeals[str(d["appeal_id"])] = str(d["outcome"])
    elif k == "approved_on_appeal":
        # The board's decision stands for the disapproval: approved, and the permit issued that day.
        s.decided_on = e.on
        s.issued_on = e.on
    elif k in ("plan_original", "plan_amendment"):
        s.plan_version = max(int(d["version"]), s.plan_version or 0)


def _move(s: PermitState, e: HistoryEvent) -> None:
    """Apply a move: the new status, the order it posts or closes, and the states before it."""
    to = e.data["to"]
    was = s.status
    if e.kind == "extended" and to == was:
        return  # the period extended in a state that stays (approved, under an order): no move
    case_id = e.data.get("case_id")
    if e.kind in ("retracted", "reinstated"):
        closing = _ORDER_OF.get(was or "")
        s.orders = [o for o in s.orders if o.kind != closing] if closing else s.orders
        s.orders_posted = [
            replace(o, closed_on=e.on, closed_seq=e.seq) if o.kind == closing and o.closed_seq is None else o
            for o in s.orders_posted
        ]
        if s.before:
            s.before.pop()
    elif to in _ORDER_OF and e.kind != "received":
        order = Order(_ORDER_OF[to], e.on, e.seq, case_id)
        s.orders.append(order)
        s.orders_posted.append(order)
        if was is not None:
            s.before.append(was)
    elif was is not None and e.kind != "received":
        s.before.append(was)
    s.status = to
    # An imported permit's state has no day of its own in the history (its receipt is not it).
    s.status_on = None if e.kind == "received" else e.on
