"""A permit's life cycle as explicit states and allowed transitions (§ 540-8, § 540-12).

An application is received; it is complete (under review) or information is requested
(incomplete, § 540-8C(4)); the decision is approval, disapproval with written reasons
(§ 540-8C(3)), or deemed approval when the 20 business days pass (§ 540-8C(5)). An issued
permit becomes active when work starts, may be extended (§ 540-8G), stopped or revoked
(§ 540-12), and ends with final stabilisation and closing. Anything else is refused with
the transitions that are allowed from where the permit stands.
"""

from __future__ import annotations

__all__ = ["STATES", "TRANSITIONS", "IllegalTransitionError", "check_transition"]

from esc_gis.errors import IllegalTransitionError

#: Every state, in life-cycle order.
STATES = (
    "application_received", "incomplete", "under_review", "approved", "deemed_approved", "disapproved",
    "active", "extended", "stop_work", "revoked", "final_stabilization", "closed",
)  # fmt: skip
#: State -> the states it may move to.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "application_received": ("under_review", "incomplete"),
    "incomplete": ("under_review",),  # the requested information arrived (§ 540-8C(4))
    "under_review": ("approved", "disapproved", "incomplete", "deemed_approved"),
    "approved": ("active", "revoked"),
    "deemed_approved": ("active", "revoked"),
    "disapproved": ("closed",),  # a new submittal is a new application
    "active": ("extended", "stop_work", "revoked", "final_stabilization"),
    "extended": ("extended", "stop_work", "revoked", "final_stabilization"),
    "stop_work": ("active", "revoked"),  # the order lifted, or the permit revoked (§ 540-12)
    "revoked": ("closed",),
    "final_stabilization": ("closed",),
    "closed": (),
}
#: Transitions that must carry written reasons.
NEEDS_REASONS = {"disapproved": "§ 540-8C(3)", "stop_work": "§ 540-12", "revoked": "§ 540-12"}


def check_transition(current: str, new: str, *, reasons: str | None = None) -> None:
    """Refuse a transition that is not allowed, or that lacks the written reasons it needs.

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
    A permit in application_received cannot become active; allowed: under_review, incomplete.
    """
    for state in (current, new):
        if state not in TRANSITIONS:
            msg = f"{state!r} is not a permit state; the states are {', '.join(STATES)}."
            raise IllegalTransitionError(msg)
    allowed = TRANSITIONS[current]
    if new not in allowed:
        msg = f"A permit in {current} cannot become {new}; allowed: {', '.join(allowed) or 'none (it is closed)'}."
        raise IllegalTransitionError(msg)
    if new in NEEDS_REASONS and not (reasons or "").strip():
        msg = f"Moving a permit to {new} needs written reasons ({NEEDS_REASONS[new]})."
        raise IllegalTransitionError(msg)
