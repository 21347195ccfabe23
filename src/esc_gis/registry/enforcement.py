"""Enforcement cases: a site with or without a permit, its ground, and the office's actions on it.

A case is opened on a ground the profile lists (``[enforcement.grounds]``: code, section,
wording), for a permit, a site from a screening output, or an address. Its events are a
stop-work order posted, a notice of intent to do the work with the office's costs billed
or recovered from the financial guarantee, a referral for a cease-and-desist order, a
retraction of the stop-work order, and the closing. The sections each rests on are the
profile's (``[enforcement.actions]``).

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
    "check_action",
    "grounds",
    "open_state",
    "without_permit_fits",
    "without_permit_terms",
]

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import shapely

from esc_gis.errors import Problem, ProfileError

#: The events a case may record, in the order they usually come.
ACTIONS = ("notified", "stop_work", "notice", "costs", "referral", "retraction", "closed")
#: Where recovered costs come from (§ 540-12E: billed, or recovered from the guarantee; what is
#: billed and not paid, entered on the tax rolls as a special assessment).
COSTS_FROM = ("billed", "guarantee", "special_assessment")


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
    site: shapely.Geometry | None = None
    events: Sequence[CaseEvent] = field(default_factory=tuple)

    @property
    def state(self) -> str:
        """``open``, ``stop_work`` (an order in effect), ``retracted`` or ``closed``."""
        return open_state(self.events)

    @property
    def costs_total(self) -> float:
        """The office's costs recorded on the case (a special assessment is costs billed before, not new ones)."""
        return float(sum(e.costs or 0.0 for e in self.events if e.costs_from != "special_assessment"))

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


def grounds(tables: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Return the profile's ``[enforcement.grounds]``: code -> {section, text, without_permit, needs_permit}.

    Raises
    ------
    ProfileError
        If the table is missing or a ground lacks its section or wording.
    """
    raw = (tables.get("enforcement") or {}).get("grounds")
    if not isinstance(raw, dict) or not raw:
        msg = "The profile has no [enforcement.grounds] table (code = {section, text}) for enforcement cases."
        raise ProfileError(msg)
    bad = [k for k, v in raw.items() if not isinstance(v, dict) or not v.get("section") or not v.get("text")]
    if bad:
        msg = f"[enforcement.grounds] entries {', '.join(map(repr, bad))} need a section and a text."
        raise ProfileError(msg)
    return {str(k): dict(v) for k, v in raw.items()}


def without_permit_terms(tables: Mapping[str, Any]) -> dict[str, tuple[str, str, str]]:
    """Return the profile's ``[enforcement.without_permit]``: ``revoked`` / ``expired`` -> (text, section, basis).

    Each names a permit that no longer permits the work, so a ground "without a permit" fits a
    case about it. A profile without the table allows none.

    Raises
    ------
    ProfileError
        If an entry is not ``revoked`` or ``expired``, or lacks its text, section or basis.
    """
    raw = (tables.get("enforcement") or {}).get("without_permit") or {}
    out: dict[str, tuple[str, str, str]] = {}
    for k, v in raw.items():
        ok = k in ("revoked", "expired") and isinstance(v, dict)
        if not ok or not all(str(v.get(x) or "").strip() for x in ("text", "section", "basis")):
            msg = f"[enforcement.without_permit.{k}] must be revoked or expired, with a text, a section and a basis."
            raise ProfileError(msg)
        out[str(k)] = (str(v["text"]), str(v["section"]), str(v["basis"]))
    return out


def without_permit_fits(
    terms: Mapping[str, tuple[str, str, str]], status: str, expires_on: date | None, day: date, issued: Sequence[str]
) -> str | None:
    """Return which of ``terms`` makes a permit in ``status`` no permit for work on ``day`` (None: neither).

    ``expired``: an issued permit (``issued`` lists those states) whose period ended before ``day``.

    Examples
    --------
    >>> t = {"revoked": ("", "", ""), "expired": ("", "", "")}
    >>> without_permit_fits(t, "active", date(2027, 5, 19), date(2027, 5, 19), ["active"]) is None
    True
    >>> without_permit_fits(t, "active", date(2027, 5, 19), date(2027, 5, 20), ["active"])
    'expired'
    """
    if status == "revoked" and "revoked" in terms:
        return "revoked"
    if "expired" in terms and status in issued and expires_on is not None and day > expires_on:
        return "expired"
    return None


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
    order_open: bool = False,
    order_posted: bool = False,
    refusals: Mapping[str, str] | None = None,
    interest: float | None = None,
    billed_due: float = 0.0,
) -> list[str]:
    """Return every reason an action cannot be recorded on a case (empty: it can).

    ``order_open`` and ``order_posted`` say, from the permit's history, whether a stop-work order
    stands on the case's permit, or was ever posted there, by whichever route it was recorded
    (the case's own ``--stop-work`` or the permit's ``transition ... stop_work``): one order.

    The order the ordinance implies: a notice of intent comes after a stop-work order
    (§ 540-12E "after posting"); a retraction needs an order in effect (§ 540-12D); a
    referral needs an order (violated) or, without a permit, activity that goes on "after
    being notified" (§ 540-12C: a ``notified`` event, or the order); costs come with or after
    a notice. A special assessment (§ 540-12E) is at most ``billed_due``, the costs and interest
    billed and not yet assessed.

    ``refusals`` holds the profile's words for the refusals the ordinance words
    (``referral_not_notified``, ``referral_no_order``, ``special_assessment_over_due``).
    """
    says = dict(refusals or {})
    out: list[str] = []
    state = "stop_work" if order_open and case.state != "closed" else case.state
    kinds = [e.kind for e in case.events] + (["stop_work"] if order_posted else [])
    if kind not in ACTIONS:
        out.append(f"unknown action {kind!r}; use one of {', '.join(ACTIONS)}.")
        return out
    if state == "closed":
        out.append("the case is closed.")
    if day is None:
        out.append("the action has no date.")
    else:
        if day > today:
            out.append(f"the date {day} is in the future.")
        last = max([case.opened_on, *(e.on_date for e in case.events)])
        if day < last:
            out.append(f"the date {day} is before the case's last date ({last}).")
    if kind == "stop_work" and state == "stop_work":
        out.append(
            "a stop-work order is already in effect (posted on the permit); the case goes on from it "
            "(--notice, --refer, --retract)."
        )
    if kind == "retraction" and state != "stop_work":
        out.append("there is no stop-work order in effect to retract.")
    if kind in ("notice", "costs") and "stop_work" not in kinds:
        out.append("a notice of intent and its costs come after a stop-work order is posted.")
    if kind == "costs" and "notice" not in kinds:
        out.append("costs are recorded with or after the notice of intent.")
    if kind == "referral":
        out += _referral_problems(case.permit_number is not None, kinds, says)
    if costs_from == "special_assessment" and costs is not None:
        if kind != "costs":
            out.append("a special assessment is recorded on its own (--costs-on), after the costs were billed.")
        elif costs > billed_due + 0.005:
            out.append(says.get("special_assessment_over_due", f"{costs:,.2f} is more than the {billed_due:,.2f} due."))
    return out + _costs_problems(kind, costs, costs_from, interest)


def _referral_problems(permitted: bool, kinds: Sequence[str], says: Mapping[str, str]) -> list[str]:
    """Return why a referral cannot be recorded yet.

    On a permit's site it follows an order (violated); without a permit, a notice to cease or an order.
    """
    if permitted and "stop_work" not in kinds:
        return [says.get("referral_no_order", "a referral follows a violated stop-work order; post one first.")]
    if not permitted and not {"stop_work", "notified"} & set(kinds):
        return [says.get("referral_not_notified", "a referral follows a notice or a stop-work order.")]
    return []


def _costs_problems(kind: str, costs: float | None, costs_from: str | None, interest: float | None = None) -> list[str]:
    """Return the problems of an action's costs: an amount, where it comes from, on a notice or costs event."""
    out: list[str] = []
    if interest is not None:
        if costs is None:
            out.append("interest goes with the costs it is on (--costs N --interest N).")
        if not interest == interest or interest < 0 or interest == float("inf"):
            out.append(f"the interest {interest} is not an amount (0 or more).")
        if costs_from == "special_assessment":
            out.append("interest is billed with the costs; the special assessment is the amount due (no --interest).")
    if costs is None:
        return [*out, "give the amount (--costs N)."] if kind == "costs" else out
    if kind not in ("notice", "costs"):
        out.append("costs go with a notice of intent (--notice) or on their own (--costs-on).")
    if not costs == costs or costs < 0 or costs == float("inf"):
        out.append(f"the costs {costs} are not an amount (0 or more).")
    if costs_from not in COSTS_FROM:
        out.append(f"say where the costs come from: --costs-from {' or '.join(COSTS_FROM)}.")
    return out


def problems(source: str, messages: Sequence[str], fix: str) -> list[Problem]:
    """Return messages as problems of one source."""
    return [Problem(source, None, m, fix) for m in messages]
