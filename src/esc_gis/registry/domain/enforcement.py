"""Enforcement cases: a site with or without a permit, its ground, and the office's actions on it.

A case is opened on a ground the profile lists (``[enforcement.grounds]``: code, section,
wording), for a permit, a site from a screening output, or an address. Its events are a
stop-work order posted, a notice of intent to do the work with the office's costs billed
or recovered from the financial guarantee, a referral for a cease-and-desist order, a
retraction of the stop-work order, and the closing. The sections each rests on are the
profile's (``[enforcement.actions]``).

An application whose decision period ran out is deemed approved (§ 540-8C(5)), recorded or
not: no case rests on its want of a permit from the day after.

On a permitted site a stop-work order moves the permit to ``stop_work`` and a retraction
moves it back, through the life cycle and in the same transaction as the case's event.
The ordinance sets no deadline for compliance after a notice of intent, so open cases have
no due date.

Cases are private: reasons, costs and the events never reach a public map or export.
"""

from __future__ import annotations

__all__ = [
    "ACTIONS",
    "CaseEvent",
    "EnforcementCase",
    "StandingCondition",
    "check_action",
    "counted_orders",
    "grounds",
    "not_in_force",
    "open_state",
    "order_state",
    "standing_conditions",
    "where_no_permit_required",
    "without_permit_fits",
    "without_permit_terms",
]

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from esc_gis.errors import Problem, ProfileError
from esc_gis.registry.domain._tables import cited_codes
from esc_gis.registry.domain.dates import EffectiveDate, date_problems
from esc_gis.registry.domain.fold import Order
from esc_gis.registry.domain.records import StoredGeometry

#: The events a case may record, in the order they usually come.
ACTIONS = ("notified", "stop_work", "notice", "costs", "paid", "referral", "retraction", "closed")
#: Each action's day as the messages of :func:`date_problems` name it. Python gives it as ``on=``
#: with the action's ``kind``, the command line by the action's own flag (``--notice DATE``), so
#: the message names the day by what it is, which both readers know.
ACTION_OPTIONS = {
    "notified": "the notice's day",
    "stop_work": "the stop-work order's day",
    "notice": "the notice of intent's day",
    "costs": "the costs' day",
    "paid": "the payment's day",
    "referral": "the referral's day",
    "retraction": "the retraction's day",
    "closed": "the closing day",
}
#: Where recovered costs come from (§ 540-12E: billed, or recovered from the guarantee; what is
#: billed and not paid, entered on the tax rolls as a special assessment).
COSTS_FROM = ("billed", "guarantee", "special_assessment")

if TYPE_CHECKING:
    import shapely


@dataclass(frozen=True)
class CaseEvent:
    """One event of a case, as recorded."""

    id: int
    kind: str
    on_date: date
    who: str
    at: datetime
    costs: float | None = None
    costs_from: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class EnforcementCase:
    """An enforcement case and its events (oldest first)."""

    case_id: str
    permit_number: str | None
    site_address: str | None
    site_ref: str | None
    ground: str
    opened_on: date
    reasons: str
    opened_by: str
    site: shapely.Geometry | None = StoredGeometry()  # noqa: RUF009 (a descriptor)
    events: Sequence[CaseEvent] = field(default_factory=tuple)
    #: For a case whose order is its permit's: the permit's stop-work order as it stands for the
    #: case, read off the permit's history (:func:`order_state`); None where the case's own
    #: events decide (no permit, or work without a permit on a permit's site).
    permit_order: str | None = None
    #: Whether a permit was ever issued for the case's site (§ 540-12C "where no permit has been issued").
    permit_issued: bool = False
    #: What the toolkit said of the case when it was opened (an assumed area it rests on): not a fact of
    #: the case, so not stored; ``permits enforce`` prints it.
    notes: tuple[str, ...] = ()

    @property
    def state(self) -> str:
        """``open``, ``stop_work`` (an order in effect), ``retracted`` or ``closed``.

        One order whichever route posted or lifted it: on a permit's order, the permit's history
        says whether it stands (a ``permits retract`` lifts it for the case too).
        """
        own = open_state(self.events)
        return own if own == "closed" or self.permit_order is None else self.permit_order

    @property
    def costs_total(self) -> float:
        """The office's costs recorded on the case (a special assessment is costs billed before, not new ones)."""
        return float(
            sum(e.costs or 0.0 for e in self.events if e.kind != "paid" and e.costs_from != "special_assessment")
        )

    @property
    def paid_total(self) -> float:
        """What the responsible party paid of the amount billed (§ 540-12E "fails to pay the amount due")."""
        return float(sum(e.costs or 0.0 for e in self.events if e.kind == "paid"))

    @property
    def assessed_total(self) -> float:
        """What was entered on the tax rolls as a special assessment (§ 540-12E)."""
        return float(sum(e.costs or 0.0 for e in self.events if e.costs_from == "special_assessment"))


def open_state(events: Sequence[CaseEvent]) -> str:
    """Return a case's state replayed from its events."""
    state = "open"
    for e in events:
        if e.kind == "closed":
            state = "closed"
        elif e.kind == "stop_work":
            state = "stop_work"
        elif e.kind == "retraction":
            state = "retracted"
    return state


def counted_orders(orders_posted: Sequence[Order], opened_on: date, opened_seq: int | None = None) -> list[Order]:
    """Return the permit's stop-work orders that count for a case opened on ``opened_on``.

    § 540-12E "After posting a stop-work order under § 540-12A" and § 540-12C "violates a
    stop-work order posted under § 540-12A": an order posted on or after the case was opened,
    or one still standing when it was opened. An order lifted before (an older case's) does
    not. Lifted on the day the case was opened: it counts if it was lifted after the case's
    opening in the permit's history (``opened_seq``; unknown: it counts).

    Examples
    --------
    >>> old = Order("stop_work", date(2026, 6, 1), 3, "ENF-1", date(2026, 6, 9), 4)
    >>> counted_orders([old], date(2026, 11, 20))
    []
    >>> len(counted_orders([old], date(2026, 6, 9)))
    1
    """
    out = []
    for o in orders_posted:
        if o.kind != "stop_work":
            continue
        lifted = o.closed_on
        same_day_after = lifted == opened_on and (opened_seq is None or (o.closed_seq or 0) > opened_seq)
        if o.closed_seq is None or (lifted is not None and lifted > opened_on) or same_day_after:
            out.append(o)
    return out


def order_state(orders_posted: Sequence[Order], opened_on: date, opened_seq: int | None = None) -> str:
    """Return the state the permit's stop-work orders give a case: ``stop_work``, ``retracted`` or ``open``.

    ``stop_work`` while a counted order (:func:`counted_orders`) stands, ``retracted`` once every
    counted one was lifted, ``open`` if none counts.
    """
    counted = counted_orders(orders_posted, opened_on, opened_seq)
    if any(o.closed_seq is None for o in counted):
        return "stop_work"
    return "retracted" if counted else "open"


def grounds(tables: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Return the profile's ``[enforcement.grounds]``: code -> {section, text, without_permit, needs_permit}.

    Raises
    ------
    ProfileError
        If the table is missing or a ground lacks its section or wording.
    """
    return cited_codes(tables, "enforcement", "grounds", "for enforcement cases")


@dataclass(frozen=True)
class NoPermitRule:
    """Whether a ground fits a permit's site that needs no permit, with the words, section and basis of why."""

    fits: bool
    text: str
    section: str
    basis: str
    #: Whether the ground fits all the same where a permit was issued and is in an issued state
    #: (the profile's ``fits_issued``; default false).
    fits_issued: bool = False


def where_no_permit_required(tables: Mapping[str, Any]) -> dict[str, NoPermitRule]:
    """Return the profile's ``[enforcement.where_no_permit_required]``: ground -> :class:`NoPermitRule`.

    A ground the table does not name fits (the profile says which grounds rest on a permit).

    Raises
    ------
    ProfileError
        If an entry lacks ``fits`` (true or false), its text, section or basis.
    """
    raw = (tables.get("enforcement") or {}).get("where_no_permit_required") or {}
    out: dict[str, NoPermitRule] = {}
    for k, v in raw.items():
        ok = isinstance(v, dict) and isinstance(v.get("fits"), bool)
        ok = ok and isinstance(v.get("fits_issued", False), bool)
        if not ok or not all(str(v.get(x) or "").strip() for x in ("text", "section", "basis")):
            msg = (
                f"[enforcement.where_no_permit_required.{k}] needs fits (true or false), a text, a section and a "
                "basis (fits_issued, if given, true or false)."
            )
            raise ProfileError(msg)
        out[str(k)] = NoPermitRule(
            bool(v["fits"]), str(v["text"]), str(v["section"]), str(v["basis"]), bool(v.get("fits_issued", False))
        )
    return out


@dataclass(frozen=True)
class StandingCondition:
    """A condition every issued permit is subject to (the profile's ``[enforcement.standing_conditions]``)."""

    code: str
    text: str
    section: str


def standing_conditions(tables: Mapping[str, Any]) -> dict[str, StandingCondition]:
    """Return the profile's ``[enforcement.standing_conditions]``: code (``E1``...) -> :class:`StandingCondition`.

    A profile without the table has none: ground A3 then names only the conditions recorded on the permit.

    Raises
    ------
    ProfileError
        If an entry lacks its text or section, or its code is a number (numbers are the recorded conditions').
    """
    raw = (tables.get("enforcement") or {}).get("standing_conditions") or {}
    out: dict[str, StandingCondition] = {}
    for k, v in raw.items():
        code = str(k).strip().upper()
        if (
            not isinstance(v, dict)
            or not all(str(v.get(x) or "").strip() for x in ("text", "section"))
            or code.isdigit()
        ):
            msg = (
                f"[enforcement.standing_conditions.{k}] needs a text and a section, under a code that is not a number."
            )
            raise ProfileError(msg)
        out[code] = StandingCondition(code, str(v["text"]).strip(), str(v["section"]).strip())
    return out


#: The readings ``[enforcement.without_permit]`` may hold: when a permit's site has no permit in force.
WITHOUT_PERMIT = ("not_issued", "revoked", "expired", "closed")


def without_permit_terms(tables: Mapping[str, Any]) -> dict[str, tuple[str, str, str]]:
    """Return the profile's ``[enforcement.without_permit]``: one of :data:`WITHOUT_PERMIT` -> (text, section, basis).

    Each names a permit (or an application) that does not permit the work, so a ground
    "without a permit" fits a case about it. A profile without the table allows none.

    Raises
    ------
    ProfileError
        If an entry is not one of :data:`WITHOUT_PERMIT`, or lacks its text, section or basis.
    """
    raw = (tables.get("enforcement") or {}).get("without_permit") or {}
    out: dict[str, tuple[str, str, str]] = {}
    for k, v in raw.items():
        ok = k in WITHOUT_PERMIT and isinstance(v, dict)
        if not ok or not all(str(v.get(x) or "").strip() for x in ("text", "section", "basis")):
            msg = (
                f"[enforcement.without_permit.{k}] must be one of {', '.join(WITHOUT_PERMIT)}, "
                "with a text, a section and a basis."
            )
            raise ProfileError(msg)
        out[str(k)] = (str(v["text"]), str(v["section"]), str(v["basis"]))
    return out


def not_in_force(
    status: str,
    expires_on: date | None,
    day: date,
    issued: Sequence[str],
    *,
    ever_issued: bool = True,
    issued_on: date | None = None,
) -> str | None:
    """Return why a permit in ``status`` is no permit in force on ``day`` (None: it is in force then).

    The one rule of "a permit in force", for the grounds that rest on one (§ 540-8E "All permits
    issued under this article") and for those that rest on none (work without a permit).
    ``not_issued``: none was ever issued (``ever_issued`` False), it was issued only after
    ``day`` (``issued_on``), or its state is not one of ``issued`` (the states of an issued
    permit) nor revoked nor closed. ``revoked`` and ``closed``: the status. ``expired``: an
    issued permit whose period ended before ``day`` (the expiry day itself is within it).

    Examples
    --------
    >>> not_in_force("active", date(2027, 5, 19), date(2027, 5, 19), ["active"]) is None
    True
    >>> not_in_force("active", date(2027, 5, 19), date(2027, 5, 20), ["active"])
    'expired'
    >>> not_in_force("active", None, date(2026, 11, 4), ["active"], issued_on=date(2026, 11, 5))
    'not_issued'
    >>> not_in_force("under_review", None, date(2026, 11, 4), ["active"], ever_issued=False)
    'not_issued'
    """
    if not ever_issued or (issued_on is not None and day < issued_on):
        return "not_issued"
    if status in ("revoked", "closed"):
        return status
    if status not in issued:
        return "not_issued"
    if expires_on is not None and day > expires_on:
        return "expired"
    return None


def without_permit_fits(
    terms: Mapping[str, tuple[str, str, str]],
    status: str,
    expires_on: date | None,
    day: date,
    issued: Sequence[str],
    *,
    ever_issued: bool = True,
    issued_on: date | None = None,
) -> str | None:
    """Return which of ``terms`` makes a permit in ``status`` no permit for work on ``day`` (None: it is in force).

    The reason :func:`not_in_force` gives, where the profile's ``terms`` hold it (a profile
    without a term lets no such permit be treated as none).

    Examples
    --------
    >>> t = {"revoked": ("", "", ""), "expired": ("", "", ""), "not_issued": ("", "", "")}
    >>> without_permit_fits(t, "active", date(2027, 5, 19), date(2027, 5, 19), ["active"]) is None
    True
    >>> without_permit_fits(t, "active", date(2027, 5, 19), date(2027, 5, 20), ["active"])
    'expired'
    >>> without_permit_fits(t, "under_review", None, date(2027, 5, 20), ["active"], ever_issued=False)
    'not_issued'
    >>> without_permit_fits({}, "revoked", None, date(2027, 5, 20), ["active"]) is None
    True
    """
    why = not_in_force(status, expires_on, day, issued, ever_issued=ever_issued, issued_on=issued_on)
    return why if why in terms else None


def action_sections(tables: Mapping[str, Any]) -> dict[str, str]:
    """Return the profile's ``[enforcement.actions]``: event kind -> section (empty if absent)."""
    raw = (tables.get("enforcement") or {}).get("actions") or {}
    return {str(k): str(v) for k, v in raw.items()}


def check_action(
    case: EnforcementCase,
    kind: str,
    day: date | None,
    *,
    costs: float | None,
    costs_from: str | None,
    today: date,
    refusals: Mapping[str, str] | None = None,
    interest: float | None = None,
    billed_due: float = 0.0,
) -> list[str]:
    """Return every reason an action cannot be recorded on a case (empty: it can).

    On a case whose order is its permit's, ``case.permit_order`` says, from the permit's history,
    whether a stop-work order that counts for the case (:func:`counted_orders`) stands or was
    posted, by whichever route it was recorded (the case's own ``--stop-work`` or the permit's
    ``transition ... stop_work``) and lifted: one order.

    The order the ordinance implies: a notice of intent comes after a stop-work order
    (§ 540-12E "after posting"); a retraction needs an order in effect (§ 540-12D); a
    referral needs an order (violated) or, without a permit, activity that goes on "after
    being notified" (§ 540-12C: a ``notified`` event, or the order); costs come with or after
    a notice. A payment (``paid``) and a special assessment (§ 540-12E "fails to pay the amount
    due") are each at most ``billed_due``, the costs and interest billed and not yet paid or assessed.

    ``refusals`` holds the profile's words for the refusals the ordinance words
    (``referral_not_notified``, ``referral_no_order``, ``special_assessment_over_due``).
    """
    says = dict(refusals or {})
    out: list[str] = []
    state = case.state
    kinds = [e.kind for e in case.events] + (["stop_work"] if case.permit_order in ("stop_work", "retracted") else [])
    if kind not in ACTIONS:
        out.append(f"unknown action {kind!r}; use one of {', '.join(ACTIONS)}.")
        return out
    if state == "closed":
        out.append("the case is closed.")
    if day is None:
        out.append("the action has no date.")
    else:
        last = max([case.opened_on, *(e.on_date for e in case.events)])
        out += date_problems([EffectiveDate(ACTION_OPTIONS[kind], day, last, "the case's last date")], today)
    if kind == "stop_work" and state == "stop_work":
        out.append(
            "a stop-work order is already in effect (posted on the permit); the case goes on from it "
            "(a notice of intent, a referral, a retraction)."
        )
    if kind == "retraction" and state != "stop_work":
        out.append("there is no stop-work order in effect to retract.")
    if kind in ("notice", "costs") and "stop_work" not in kinds:
        out.append("a notice of intent and its costs come after a stop-work order is posted.")
    if kind == "costs" and "notice" not in kinds:
        out.append("costs are recorded with or after the notice of intent.")
    if kind == "referral":
        out += _referral_problems(case.permit_issued, kinds, says)
    out += _due_problems(kind, costs, costs_from, billed_due, says)
    return out + _costs_problems(kind, costs, costs_from, interest)


def _due_problems(
    kind: str, costs: float | None, costs_from: str | None, billed_due: float, says: Mapping[str, str]
) -> list[str]:
    """Return why a payment or a special assessment exceeds the amount billed and not yet paid or assessed."""
    out: list[str] = []
    if kind == "paid" and costs is not None and costs > billed_due + 0.005:
        out.append(
            f"the payment of {costs:,.2f} is more than the {billed_due:,.2f} billed and not yet paid or assessed."
        )
    if costs_from == "special_assessment" and costs is not None:
        if kind != "costs":
            out.append("a special assessment is recorded as costs of their own, after the costs were billed.")
        elif costs > billed_due + 0.005:
            out.append(says.get("special_assessment_over_due", f"{costs:,.2f} is more than the {billed_due:,.2f} due."))
    return out


def _referral_problems(permitted: bool, kinds: Sequence[str], says: Mapping[str, str]) -> list[str]:
    """Return why a referral cannot be recorded yet.

    Where a permit was issued (``permitted``) it follows an order (violated); "where no permit has
    been issued" (§ 540-12C: no permit, or an application never issued), a notice to cease or an order.
    """
    if permitted and "stop_work" not in kinds:
        return [says.get("referral_no_order", "a referral follows a violated stop-work order; post one first.")]
    if not permitted and not {"stop_work", "notified"} & set(kinds):
        return [says.get("referral_not_notified", "a referral follows a notice or a stop-work order.")]
    return []


def _costs_problems(kind: str, costs: float | None, costs_from: str | None, interest: float | None = None) -> list[str]:
    """Return the problems of an action's costs: an amount, where it comes from, on a notice or costs event."""
    out: list[str] = []
    if kind == "paid":
        return _paid_problems(costs, costs_from, interest)
    if interest is not None:
        if costs is None:
            out.append("interest goes with the costs it is on (costs=N with interest=N).")
        if not interest == interest or interest < 0 or interest == float("inf"):
            out.append(f"the interest {interest} is not an amount (0 or more).")
        if costs_from == "special_assessment":
            out.append("interest is billed with the costs; the special assessment is the amount due (no interest=).")
    if costs is None:
        return [*out, "give the amount (costs=N)."] if kind == "costs" else out
    if kind not in ("notice", "costs"):
        out.append("costs go with a notice of intent or are recorded as costs of their own.")
    if not costs == costs or costs < 0 or costs == float("inf"):
        out.append(f"the costs {costs} are not an amount (0 or more).")
    if costs_from not in COSTS_FROM:
        out.append(f"say where the costs come from: costs_from={' or '.join(COSTS_FROM)}.")
    return out


def _paid_problems(costs: float | None, costs_from: str | None, interest: float | None) -> list[str]:
    """Return the problems of a payment: an amount above 0, of what was billed (no source, no interest)."""
    out: list[str] = []
    if costs is None:
        out.append("give the amount paid (costs=N).")
    elif not costs == costs or costs <= 0 or costs == float("inf"):
        out.append(f"the payment {costs} is not an amount (more than 0).")
    if costs_from is not None or interest is not None:
        out.append("a payment is of the costs and interest billed: give only its amount (no costs_from=, interest=).")
    return out


def problems(source: str, messages: Sequence[str], fix: str) -> list[Problem]:
    """Return messages as problems of one source."""
    return [Problem(source, None, m, fix) for m in messages]
