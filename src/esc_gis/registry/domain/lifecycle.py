"""A permit's life cycle as explicit states and allowed transitions (§ 540-8, § 540-12).

An application is received; it is complete (under review) or information is requested
(incomplete, § 540-8C(4)); the decision is approval, disapproval with written reasons
(§ 540-8C(3), from incomplete too), or deemed approval when the 20 business days pass
(§ 540-8C(5)). An application not decided may be closed with written reasons (withdrawn, or
the information never came). An issued permit becomes active when work starts, may be
extended (§ 540-8G), stopped (§ 540-12A, on a suspended permit too: the order lies over the
suspension), suspended or revoked after written notification (§ 540-8E, § 540-12B), and ends
with final stabilisation and closing. A stop-work order and a revocation can be retracted (§ 540-12D)
and a suspension lifted (reinstatement): each goes back to the state before it, which
:func:`previous_state` recovers from the append-only history. Anything else is refused with
the transitions that are allowed from where the permit stands.

Which moves need written reasons, and what requires them (a section of the ordinance, or the
office's policy where the ordinance requires none), is the profile's
(``[lifecycle.written_reasons]``), not this module's.
"""

from __future__ import annotations

__all__ = [
    "BACK",
    "CLOSED_UNDECIDED",
    "EXTENDABLE",
    "ON_APPEAL",
    "STATES",
    "TRANSITIONS",
    "UNDECIDED",
    "IllegalTransitionError",
    "check_back",
    "check_notified",
    "check_off_order",
    "check_transition",
    "notification_table",
    "previous_state",
    "reasons_table",
    "written_reasons",
]

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from esc_gis.errors import IllegalTransitionError, ProfileError
from esc_gis.findings import BASES

#: Every state, in life-cycle order.
STATES = (
    "application_received",
    "incomplete",
    "under_review",
    "approved",
    "deemed_approved",
    "disapproved",
    "active",
    "extended",
    "stop_work",
    "suspended",
    "revoked",
    "final_stabilization",
    "closed",
)
#: State -> the states it may move to.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    # A complete application the office never took up is deemed approved when its period runs out (§ 540-8C(5)).
    # An application leaves review by a decision, or is closed undecided with written reasons: withdrawn
    # by the applicant, or the information requested never came (issue 34; see CLOSED_UNDECIDED).
    "application_received": ("under_review", "incomplete", "deemed_approved", "closed"),
    # The requested information arrived (§ 540-8C(4)); or the office decides on what it has: a
    # disapproval "shall state in writing the reasons" (§ 540-8C(3)); or the application is closed.
    "incomplete": ("under_review", "disapproved", "closed"),
    "under_review": ("approved", "disapproved", "incomplete", "deemed_approved", "closed"),
    "approved": ("active", "suspended", "revoked"),
    "deemed_approved": ("active", "suspended", "revoked"),
    "disapproved": ("closed",),  # a new submittal is a new application
    "active": ("extended", "stop_work", "suspended", "revoked", "final_stabilization"),
    "extended": ("extended", "stop_work", "suspended", "revoked", "final_stabilization"),
    "stop_work": ("active", "suspended", "revoked"),  # the order lifted, or the permit suspended or revoked
    # Reinstatement goes back to the state before (see BACK). A stop-work order may be posted on a
    # suspended permit: § 540-12A(3), (4) "The conditions of the permit are not being met", "in violation
    # of the article" (issue 34); it lies over the suspension, and its retraction goes back to it.
    "suspended": ("stop_work", "revoked"),
    "revoked": ("closed",),
    "final_stabilization": ("closed",),
    "closed": (),
}
#: States that can be undone, and the name of the move back: a stop-work order and a
#: revocation are retracted (§ 540-12D), a suspension is lifted by reinstatement (§ 540-8E).
BACK: dict[str, str] = {"stop_work": "retraction", "revoked": "retraction", "suspended": "reinstatement"}
#: States an appeal's decision can turn, and the state it gives: a disapproval reversed (or
#: modified to approve) on appeal is an approval, and the permit is issued (§ 540-13A(1),
#: § 540-8C(2)). Not a transition: only the board's decision makes this move.
ON_APPEAL: dict[str, str] = {"disapproved": "approved"}
#: Issued states whose period may be extended without a move (§ 540-8G "may extend the period
#: one or more times", with no state excluded): approved but not started, under a stop-work
#: order, and suspended (the order or suspension stands). An active or extended permit moves to
#: ``extended`` (see TRANSITIONS).
EXTENDABLE = ("approved", "deemed_approved", "stop_work", "suspended")
#: States of an application not yet decided (§ 540-8C): closing one is no decision.
UNDECIDED = ("application_received", "incomplete", "under_review")
#: The written-reasons key of closing an undecided application (withdrawn, or the information
#: requested never came): the reasons say which, so the record never shows a decision or an
#: information received that did not happen.
CLOSED_UNDECIDED = "closed_undecided"
#: Event kinds that change the state (they carry from_status and to_status).
_MOVES_BACK = frozenset(BACK.values())


def reasons_table(tables: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Return the profile's ``[lifecycle.written_reasons]``: state or move -> (section, basis).

    An entry is ``{section = "...", basis = "..."}``: the ordinance requires written reasons for
    some moves (basis ``ordinance``); for others they are the office's policy (basis ``policy``),
    and the refusal must not cite a section as if it required them. A plain string is a section
    of the ordinance (basis ``ordinance``).

    Raises
    ------
    ProfileError
        If the table is missing, names an unknown state or move, a section is empty or a basis
        is not one of :data:`esc_gis.findings.BASES`.

    Examples
    --------
    >>> reasons_table({"lifecycle": {"written_reasons": {"stop_work": {"section": "s 1", "basis": "policy"}}}})
    {'stop_work': ('s 1', 'policy')}
    """
    raw = (tables.get("lifecycle") or {}).get("written_reasons")
    if not isinstance(raw, dict):
        msg = (
            "The profile has no [lifecycle.written_reasons] table (state = {section, basis}) for the moves that "
            "need reasons."
        )
        raise ProfileError(msg)
    known = set(STATES) | _MOVES_BACK | {CLOSED_UNDECIDED}
    out: dict[str, tuple[str, str]] = {}
    bad = []
    for k, v in raw.items():
        section, basis = (v.get("section"), v.get("basis")) if isinstance(v, dict) else (v, "ordinance")
        if k not in known or not str(section or "").strip() or basis not in BASES:
            bad.append(k)
        else:
            out[str(k)] = (str(section), str(basis))
    if bad:
        msg = (
            f"[lifecycle.written_reasons] entries {', '.join(map(repr, bad))} are not a state or move with a "
            f"section and a basis ({', '.join(BASES)}); use {', '.join(sorted(known))}."
        )
        raise ProfileError(msg)
    return out


def written_reasons(tables: Mapping[str, Any]) -> dict[str, str]:
    """Return state or move -> what requires its written reasons, as the refusal cites it.

    ``basis ordinance: § 540-8C(3)``, or for the office's own rule ``basis policy: ...``: the
    basis comes first, so no reader takes a policy for the law (:func:`reasons_table`).

    Raises
    ------
    ProfileError
        As :func:`reasons_table`.
    """
    return {k: f"basis {basis}: {section}" for k, (section, basis) in reasons_table(tables).items()}


def notification_table(tables: Mapping[str, Any]) -> dict[str, tuple[str, str, str]]:
    """Return the profile's ``[lifecycle.written_notification]``: state -> (section, basis, words).

    The states a permit may be moved to only after the responsible party was notified in writing
    (§ 540-8E: "may suspend or revoke a permit ... following written notification of the
    responsible party"). A profile without the table needs none.

    Raises
    ------
    ProfileError
        If an entry names an unknown state, or lacks its section, basis or words.

    Examples
    --------
    >>> notification_table({"lifecycle": {"written_notification": {
    ...     "suspended": {"section": "s 8E", "basis": "ordinance", "words": "following written notification"}}}})
    {'suspended': ('s 8E', 'ordinance', 'following written notification')}
    """
    raw = (tables.get("lifecycle") or {}).get("written_notification") or {}
    out: dict[str, tuple[str, str, str]] = {}
    bad = []
    for k, v in raw.items():
        parts = tuple(str((v or {}).get(f) or "").strip() for f in ("section", "basis", "words"))
        if k not in STATES or not all(parts) or parts[1] not in BASES:
            bad.append(str(k))
            continue
        out[str(k)] = (parts[0], parts[1], parts[2])
    if bad:
        msg = (
            f"The profile's [lifecycle.written_notification] entries {', '.join(bad)} need a known state and "
            f"{{section, basis, words}} (basis one of {', '.join(BASES)})."
        )
        raise ProfileError(msg)
    return out


def check_notified(to: str, day: date, notified_on: date | None, table: Mapping[str, tuple[str, str, str]]) -> None:
    """Refuse a move to ``to`` that comes before the written notification it must follow.

    Raises
    ------
    IllegalTransitionError
        If ``to`` needs a written notification and none is given, or it is dated after ``day``.

    Examples
    --------
    >>> t = {"suspended": ("§ 8E", "ordinance", "following written notification of the responsible party")}
    >>> check_notified("suspended", date(2026, 11, 20), date(2026, 11, 18), t)  # notified first: fine
    >>> check_notified("active", date(2026, 11, 20), None, t)  # not a move that needs one
    """
    if to not in table:
        return
    section, basis, words = table[to]
    if notified_on is not None and notified_on <= day:
        return
    when = "is not given" if notified_on is None else f"is dated {notified_on}, after the move ({day})"
    msg = (
        f'A permit may be {to} only "{words}" ({section}; basis {basis}): the written notification {when}. '
        f"Give its day with notified_on=YYYY-MM-DD (on or before {day})."
    )
    raise IllegalTransitionError(msg)


def _need_reasons(move: str, reasons: str | None, needs: Mapping[str, str] | None) -> None:
    if needs is None:
        from esc_gis.profile import load_profile

        needs = written_reasons(load_profile().tables)
    if move in needs and not (reasons or "").strip():
        if move == CLOSED_UNDECIDED:
            msg = (
                f"Closing an application before its decision needs written reasons ({needs[move]}): say whether "
                "the applicant withdrew it or the information requested never came."
            )
        else:
            msg = f"Moving a permit to {move} needs written reasons ({needs[move]})."
        raise IllegalTransitionError(msg)


def check_transition(
    current: str, new: str, *, reasons: str | None = None, needs: Mapping[str, str] | None = None
) -> None:
    """Refuse a transition that is not allowed, or that lacks the written reasons it needs.

    Parameters
    ----------
    current, new : str
        States.
    reasons : str, optional
        The written reasons (the text of the written notification).
    needs : mapping, optional
        :func:`written_reasons` of the profile in use; default the Village's profile.

    Raises
    ------
    IllegalTransitionError
        Naming the transitions that are allowed from ``current``.

    Examples
    --------
    >>> check_transition("under_review", "approved")
    >>> try:
    ...     check_transition("application_received", "active")
    ... except IllegalTransitionError as exc:
    ...     print(exc)
    A permit in application_received cannot become active; allowed: under_review, incomplete, deemed_approved, closed.
    """
    for state in (current, new):
        if state not in TRANSITIONS:
            msg = f"{state!r} is not a permit state; the states are {', '.join(STATES)}."
            raise IllegalTransitionError(msg)
    allowed = TRANSITIONS[current]
    if new not in allowed:
        back = f"; or {BACK[current]} back to the state before" if current in BACK else ""
        msg = (
            f"A permit in {current} cannot become {new}; allowed: {', '.join(allowed) or 'none (it is closed)'}{back}."
        )
        raise IllegalTransitionError(msg)
    _need_reasons(new, reasons, needs)
    if new == "closed" and current in UNDECIDED:
        _need_reasons(CLOSED_UNDECIDED, reasons, needs)


def check_off_order(current: str, new: str, before: str | None) -> None:
    """Refuse a plain move off a stop-work order that lies over a suspension, other than revocation.

    A stop-work order posted on a suspended permit (§ 540-12A(3), (4)) leaves the suspension
    standing under it: lifting the order is its retraction, back to ``suspended`` (§ 540-12D), and
    the suspension is lifted by its own reinstatement. A plain move to ``active`` (or a second
    ``suspended``) would skip one of the two.

    Raises
    ------
    IllegalTransitionError
        If ``current`` is ``stop_work`` over ``before`` ``suspended`` and ``new`` is not ``revoked``.

    Examples
    --------
    >>> check_off_order("stop_work", "revoked", "suspended")
    >>> check_off_order("stop_work", "active", "active")
    """
    if current == "stop_work" and before == "suspended" and new != "revoked":
        msg = (
            f"A permit in stop_work over its suspension cannot become {new}: retract the order (back to suspended), "
            "then reinstate the permit; or revoke it."
        )
        raise IllegalTransitionError(msg)


def previous_state(history: Iterable[tuple[str, str | None, str | None]]) -> str | None:
    """Return the state a permit was in before its current one, replaying its history.

    Each state change pushes the new state; a retraction or reinstatement pops the state it
    undoes. So a chain undoes in order: active -> stop_work -> revoked, retracted twice, is
    active again. Works on what every back end stores: (kind, from_status, to_status) events.

    Parameters
    ----------
    history : iterable of (kind, from_status, to_status)
        The permit's events, oldest first.

    Returns
    -------
    str or None
        None when the history does not show a state before the current one (a permit
        imported straight into its state).

    Examples
    --------
    >>> previous_state([("received", None, "application_received"), ("transition", "x", "under_review")])
    'application_received'
    >>> h = [("imported", None, "active"), ("transition", "active", "stop_work"),
    ...      ("transition", "stop_work", "revoked")]
    >>> previous_state(h), previous_state([*h, ("retraction", "revoked", "stop_work")])
    ('stop_work', 'active')
    """
    stack: list[str] = []
    for kind, _from, to in history:
        if to is None:
            continue
        if kind in _MOVES_BACK:
            if stack:
                stack.pop()
            if not stack or stack[-1] != to:  # a history written otherwise: trust the recorded state
                stack.append(to)
        else:
            stack.append(to)
    return stack[-2] if len(stack) >= 2 else None


def check_back(
    current: str, move: str, before: str | None, *, reasons: str | None = None, needs: Mapping[str, str] | None = None
) -> str:
    """Check a retraction or reinstatement; return the state it goes back to.

    Raises
    ------
    IllegalTransitionError
        If ``current`` cannot be undone by ``move``, the history shows no state before, or
        the written reasons are missing.
    """
    if BACK.get(current) != move:
        can = ", ".join(f"{m} of {s}" for s, m in BACK.items())
        msg = f"A permit in {current} has nothing to undo by {move}; possible: {can}."
        raise IllegalTransitionError(msg)
    if before is None:
        msg = (
            f"The history does not show the state before {current} (the permit was imported in it): "
            "move it on with a transition instead."
        )
        raise IllegalTransitionError(msg)
    _need_reasons(move, reasons, needs)
    return before
