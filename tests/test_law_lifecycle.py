"""The permit life cycle pinned move by move (§ 540-8C, § 540-8E, § 540-8G, § 540-12).

The allowed moves are written out here by hand, state by state, and every pair of states is
checked against them: adding or deleting one transition fails a test. So does dropping any
entry of the profile's written-reasons table, in either profile.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from esc_gis.errors import IllegalTransitionError, ProfileError
from esc_gis.profile import load_profile
from esc_gis.registry.domain.lifecycle import (
    BACK,
    STATES,
    TRANSITIONS,
    UNDECIDED,
    check_back,
    check_notified,
    check_transition,
    notification_table,
    previous_state,
    reasons_table,
    written_reasons,
)

EXAMPLE = Path(__file__).parent / "profiles" / "example.toml"

#: The life cycle as the ordinance describes it (see the module's docstring), by hand.
ALLOWED = {
    # § 540-8C(5): "Failure ... to inform the permit applicant of a decision within 20 business days of a
    # required submittal shall be deemed to mean approval", whether or not review was ever recorded.
    # Issue 34: an application leaves review by a decision or is closed undecided (withdrawn, or the information
    # requested never came); § 540-8C(3): "If the permit application or plan is disapproved, the administering
    # authority shall state in writing the reasons for disapproval" -- an incomplete one too.
    "application_received": {"under_review", "incomplete", "deemed_approved", "closed"},
    "incomplete": {"under_review", "disapproved", "closed"},
    "under_review": {"approved", "disapproved", "incomplete", "deemed_approved", "closed"},
    "approved": {"active", "suspended", "revoked"},
    "deemed_approved": {"active", "suspended", "revoked"},
    "disapproved": {"closed"},
    "active": {"extended", "stop_work", "suspended", "revoked", "final_stabilization"},
    "extended": {"extended", "stop_work", "suspended", "revoked", "final_stabilization"},
    "stop_work": {"active", "suspended", "revoked"},
    # § 540-12A: "The administering authority may post a stop-work order if ... (3) The conditions of the permit are
    # not being met. (4) Any land-disturbing construction activity is in violation of the article" -- suspended too.
    "suspended": {"stop_work", "revoked"},
    "revoked": {"closed"},
    "final_stabilization": {"closed"},
    "closed": set(),
}
#: State -> the move that undoes it.
UNDO = {"stop_work": "retraction", "revoked": "retraction", "suspended": "reinstatement"}
#: What needs written reasons, per profile: state or move -> (what requires them, basis). The
#: ordinance requires them for a disapproval, § 540-8C(3): "the administering authority shall
#: state in writing the reasons for disapproval", and for a suspension or revocation, § 540-8E:
#: "may suspend or revoke a permit ... following written notification of the responsible party".
#: It does not for a stop-work order (§ 540-12A: "may post a stop-work order if any of the
#: following occurs"), its retraction (§ 540-12D: "may retract the stop-work order") or a
#: reinstatement (no words): there they are the office's policy and cite it as such.
TABLES = {
    "winneconne": {
        "disapproved": ("§ 540-8C(3)", "ordinance"),
        "suspended": ("§ 540-8E", "ordinance"),
        "revoked": ("§ 540-8E", "ordinance"),
        "stop_work": ("the office's rule; § 540-12A requires none", "policy"),
        "retraction": ("the office's rule; § 540-12D requires none", "policy"),
        "reinstatement": ("the office's rule; the ordinance is silent on reinstatement", "policy"),
        "closed_undecided": (
            "the office's rule; § 540-8C is silent on an application withdrawn or left unanswered",
            "policy",
        ),
    },
    "example": {
        "disapproved": ("§ 23-8C(3)", "ordinance"),  # a plain string: a section, basis ordinance
        "suspended": ("§ 23-8E", "ordinance"),
        "revoked": ("§ 23-8E; § 23-12B", "ordinance"),
        "stop_work": ("the office's rule; § 23-12A requires none", "policy"),
        "retraction": ("the office's rule; § 23-12D requires none", "policy"),
        "reinstatement": ("the office's rule", "policy"),
        "closed_undecided": (
            "the office's rule; § 23-8C is silent on an application withdrawn or left unanswered",
            "policy",
        ),
    },
}
#: As the refusal cites them: the basis first.
REASONS = {name: {k: f"basis {b}: {s}" for k, (s, b) in t.items()} for name, t in TABLES.items()}
PROFILES = {"winneconne": load_profile(), "example": load_profile(EXAMPLE)}
PAIRS = [(a, b) for a in STATES for b in STATES]


def test_the_states_and_tables_are_the_ones_written_here() -> None:
    assert set(STATES) == set(ALLOWED) and len(STATES) == len(ALLOWED)
    assert {k: set(v) for k, v in TRANSITIONS.items()} == ALLOWED
    assert BACK == UNDO


@pytest.mark.parametrize("current, new", [p for p in PAIRS if p[1] in ALLOWED[p[0]]])
def test_each_allowed_move_is_allowed(current: str, new: str) -> None:
    check_transition(current, new, reasons="Written notice sent.", needs=REASONS["winneconne"])


@pytest.mark.parametrize("current, new", [p for p in PAIRS if p[1] not in ALLOWED[p[0]]])
def test_each_other_move_is_refused_naming_what_is_allowed(current: str, new: str) -> None:
    with pytest.raises(IllegalTransitionError) as exc:
        check_transition(current, new, reasons="Written notice sent.", needs=REASONS["winneconne"])
    allowed = ", ".join(TRANSITIONS[current]) or "none (it is closed)"
    back = f"; or {UNDO[current]} back to the state before" if current in UNDO else ""
    assert str(exc.value) == f"A permit in {current} cannot become {new}; allowed: {allowed}{back}."


@pytest.mark.parametrize("bad", ["finished", "", "Active"])
def test_an_unknown_state_is_refused_on_either_side(bad: str) -> None:
    for current, new in ((bad, "active"), ("active", bad)):
        with pytest.raises(IllegalTransitionError) as exc:
            check_transition(current, new, reasons="x")
        assert str(exc.value) == f"{bad!r} is not a permit state; the states are {', '.join(ALLOWED)}."


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_the_written_reasons_table_is_each_profiles(name: str) -> None:
    assert reasons_table(PROFILES[name].tables) == TABLES[name]
    assert written_reasons(PROFILES[name].tables) == REASONS[name]


@pytest.mark.parametrize("move", ["stop_work", "retraction", "reinstatement"])
def test_written_reasons_the_ordinance_does_not_require_cite_policy_not_a_section(move: str) -> None:
    # § 540-12A "may post a stop-work order"; § 540-12D "may retract": neither asks for written
    # reasons, so the refusal must not read as if either did.
    with pytest.raises(IllegalTransitionError) as exc:
        if move == "stop_work":
            check_transition("active", "stop_work", reasons=" ")
        else:
            check_back("stop_work" if move == "retraction" else "suspended", move, "active", reasons="")
    assert str(exc.value).startswith(
        f"Moving a permit to {move} needs written reasons (basis policy: the office's rule"
    )


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize("current, new", [p for p in PAIRS if p[1] in ALLOWED[p[0]]])
def test_a_move_needs_written_reasons_exactly_when_the_profile_says(name: str, current: str, new: str) -> None:
    needs = written_reasons(PROFILES[name].tables)
    for reasons in (None, "", " \n\t"):
        if new in REASONS[name]:
            with pytest.raises(IllegalTransitionError) as exc:
                check_transition(current, new, reasons=reasons, needs=needs)
            assert str(exc.value) == f"Moving a permit to {new} needs written reasons ({REASONS[name][new]})."
        elif new == "closed" and current in UNDECIDED:
            with pytest.raises(IllegalTransitionError) as exc:
                check_transition(current, new, reasons=reasons, needs=needs)
            assert str(exc.value) == (
                "Closing an application before its decision needs written reasons "
                f"({REASONS[name]['closed_undecided']}): say whether the applicant withdrew it or the information "
                "requested never came."
            )
        else:
            check_transition(current, new, reasons=reasons, needs=needs)
    check_transition(current, new, reasons="Silt fence down; sediment in the creek.", needs=needs)


def test_without_a_table_the_villages_profile_is_used() -> None:
    with pytest.raises(IllegalTransitionError, match=r"\(basis ordinance: § 540-8C\(3\)\)"):
        check_transition("under_review", "disapproved")
    with pytest.raises(IllegalTransitionError, match=r"§ 540-12A requires none\)"):
        check_transition("active", "stop_work")
    check_transition("active", "extended")


@pytest.mark.parametrize(
    "table, problem",
    [
        ({}, "has no [lifecycle.written_reasons] table"),
        ({"lifecycle": {}}, "has no [lifecycle.written_reasons] table"),
        ({"lifecycle": {"written_reasons": "§ 1"}}, "has no [lifecycle.written_reasons] table"),
        ({"lifecycle": {"written_reasons": {"stopwork": "§ 1"}}}, "entries 'stopwork' are not a state or move"),
        ({"lifecycle": {"written_reasons": {"stop_work": "  "}}}, "entries 'stop_work' are not a state or move"),
        (
            {"lifecycle": {"written_reasons": {"stop_work": {"section": "s 1", "basis": "office"}}}},
            "entries 'stop_work' are not a state or move",
        ),
        (
            {"lifecycle": {"written_reasons": {"stop_work": {"section": " ", "basis": "policy"}}}},
            "entries 'stop_work' are not a state or move",
        ),
        ({"lifecycle": {"written_reasons": {"stop_work": {"basis": "policy"}}}}, "entries 'stop_work' are not"),
        (
            {"lifecycle": {"written_reasons": {"x": "§ 1", "revoked": "§ 2", "y": ""}}},
            "entries 'x', 'y' are not a state or move",
        ),
    ],
)
def test_a_bad_written_reasons_table_is_refused(table: dict, problem: str) -> None:
    with pytest.raises(ProfileError) as exc:
        written_reasons(table)
    assert problem in str(exc.value)
    if "has no" in problem:
        assert str(exc.value) == (
            "The profile has no [lifecycle.written_reasons] table (state = {section, basis}) for the moves that "
            "need reasons."
        )
    if "entries" in problem:  # the fix names every state and move the table may use
        assert "use active, application_received, " in str(exc.value) and "reinstatement, retraction" in str(exc.value)
        # and every basis a reason may rest on
        assert "with a section and a basis (ordinance, interpretation, policy, technical_standard); use" in str(
            exc.value
        )


_NOTICE = {
    "section": "§ 540-8E",
    "basis": "ordinance",
    "words": "following written notification of the responsible party",
}


@pytest.mark.parametrize(
    ("entries", "named"),
    [
        ({"suspend": _NOTICE}, "suspend"),  # a mistyped state
        ({"reinstatement": _NOTICE}, "reinstatement"),  # a move, not a state
        ({"revoked": {**_NOTICE, "section": " "}}, "revoked"),
        ({"revoked": {**_NOTICE, "basis": "office"}}, "revoked"),
        ({"revoked": {k: v for k, v in _NOTICE.items() if k != "words"}}, "revoked"),
        ({"suspended": _NOTICE, "revokd": _NOTICE, "x": None}, "revokd, x"),
    ],
)
def test_a_bad_written_notification_table_is_refused(entries: dict, named: str) -> None:
    """§ 540-8E: "may suspend or revoke a permit ... following written notification of the responsible
    party": the table names the states that need it; a mistyped one would silently need none."""
    with pytest.raises(ProfileError) as exc:
        notification_table({"lifecycle": {"written_notification": entries}})
    assert str(exc.value) == (
        f"The profile's [lifecycle.written_notification] entries {named} need a known state and "
        "{section, basis, words} (basis one of ordinance, interpretation, policy, technical_standard)."
    )


def test_a_written_notification_table_of_states_is_accepted_and_none_needs_none() -> None:
    table = {"lifecycle": {"written_notification": {"suspended": _NOTICE, "revoked": _NOTICE}}}
    words = ("§ 540-8E", "ordinance", "following written notification of the responsible party")
    assert notification_table(table) == {"suspended": words, "revoked": words}
    assert notification_table({"lifecycle": {}}) == {} == notification_table({})
    assert notification_table(PROFILES["winneconne"].tables) == {"suspended": words, "revoked": words}


def test_a_table_of_states_and_moves_is_accepted() -> None:
    table = {
        "lifecycle": {"written_reasons": {"closed": "§ 9", "retraction": {"section": "rule 10", "basis": "policy"}}}
    }
    assert written_reasons(table) == {"closed": "basis ordinance: § 9", "retraction": "basis policy: rule 10"}


@pytest.mark.parametrize("current", STATES)
@pytest.mark.parametrize("move", ["retraction", "reinstatement"])
def test_going_back_is_possible_only_from_the_states_that_can_be_undone(current: str, move: str) -> None:
    needs = REASONS["winneconne"]
    if UNDO.get(current) == move:
        assert check_back(current, move, "approved", reasons="Corrected.", needs=needs) == "approved"
        with pytest.raises(IllegalTransitionError) as exc:
            check_back(current, move, None, reasons="Corrected.", needs=needs)
        assert str(exc.value) == (
            f"The history does not show the state before {current} (the permit was imported in it): "
            "move it on with a transition instead."
        )
        with pytest.raises(IllegalTransitionError) as exc:
            check_back(current, move, "approved", reasons=" ", needs=needs)
        assert str(exc.value) == f"Moving a permit to {move} needs written reasons ({needs[move]})."
        assert check_back(current, move, "approved", needs={}) == "approved"  # a profile asking no reasons
    else:
        with pytest.raises(IllegalTransitionError) as exc:
            check_back(current, move, "approved", reasons="Corrected.", needs=needs)
        assert str(exc.value) == (
            f"A permit in {current} has nothing to undo by {move}; possible: "
            "retraction of stop_work, retraction of revoked, reinstatement of suspended."
        )


@pytest.mark.parametrize(
    "history, before",
    [
        ([], None),
        ([("received", None, "application_received")], None),
        (
            [("received", None, "application_received"), ("transition", "application_received", "incomplete")],
            "application_received",
        ),
        # Events without a new state (an inspection, a note) are not states.
        ([("imported", None, "active"), ("inspection", None, None), ("transition", "active", "stop_work")], "active"),
        (
            [
                ("imported", None, "active"),
                ("transition", "active", "stop_work"),
                ("retraction", "stop_work", "active"),
            ],
            None,
        ),
        # A move back recorded to a state other than the one before: the recorded state is
        # trusted as the current one, and the state before the undone one stays before it.
        (
            [
                ("received", None, "application_received"),
                ("transition", "application_received", "under_review"),
                ("transition", "under_review", "approved"),
                ("transition", "approved", "suspended"),
                ("reinstatement", "suspended", "active"),
            ],
            "approved",
        ),
        # A move back with nothing on record before it.
        ([("retraction", "revoked", "active"), ("transition", "active", "stop_work")], "active"),
        ([("reinstatement", "suspended", "approved")], None),
        # A chain undone in order.
        (
            [
                ("imported", None, "active"),
                ("transition", "active", "stop_work"),
                ("transition", "stop_work", "suspended"),
                ("transition", "suspended", "revoked"),
                ("retraction", "revoked", "suspended"),
                ("reinstatement", "suspended", "stop_work"),
            ],
            "active",
        ),
    ],
)
def test_previous_state_replays_the_history(history: list, before: str | None) -> None:
    assert previous_state(history) == before


@pytest.mark.parametrize("new", ["active", "suspended", "revoked"])
def test_off_a_stop_work_order_over_a_suspension_only_by_retraction_or_revocation(new: str) -> None:
    """§ 540-12A(3), (4) let a stop-work order be posted on a suspended permit; § 540-12D: the office "may retract
    the stop-work order", which goes back to the suspension. A plain move to active or suspended would skip the
    retraction or the reinstatement; revocation (§ 540-12B) ends both."""
    from esc_gis.registry.domain.lifecycle import check_off_order

    if new == "revoked":
        check_off_order("stop_work", new, "suspended")
    else:
        with pytest.raises(IllegalTransitionError, match=f"over its suspension cannot become {new}"):
            check_off_order("stop_work", new, "suspended")
    # The edge: the same moves off an order over an active permit are the life cycle's as before.
    check_off_order("stop_work", new, "active")
    if new != "revoked":
        with pytest.raises(IllegalTransitionError) as exc:
            check_off_order("stop_work", new, "suspended")
        assert str(exc.value) == (
            f"A permit in stop_work over its suspension cannot become {new}: retract the order (back to suspended), "
            "then reinstate the permit; or revoke it."
        )
    assert check_back("stop_work", "retraction", "suspended", reasons="x") == "suspended"


def test_a_suspension_or_revocation_follows_the_written_notification() -> None:
    """§ 540-8E: "The administering authority may suspend or revoke a permit for violation of a permit condition,
    following written notification of the responsible party": notified on or before the move, never after."""
    table = notification_table(PROFILES["winneconne"].tables)
    nov20 = date(2026, 11, 20)
    # Notified before the move, or the same day: the move may be recorded.
    assert check_notified("suspended", nov20, date(2026, 11, 18), table) is None
    assert check_notified("revoked", nov20, nov20, table) is None
    # A move the table does not name (a stop-work order, § 540-12A) needs no notification.
    assert check_notified("stop_work", nov20, None, table) is None
    assert check_notified("suspended", nov20, None, {}) is None
    words = "following written notification of the responsible party"
    with pytest.raises(IllegalTransitionError) as exc:
        check_notified("suspended", nov20, None, table)
    assert str(exc.value) == (
        f'A permit may be suspended only "{words}" (§ 540-8E; basis ordinance): the written notification '
        "is not given. Give its day with notified_on=YYYY-MM-DD (on or before 2026-11-20)."
    )
    # Notified the day after the move: the notification did not come first.
    with pytest.raises(IllegalTransitionError) as exc:
        check_notified("revoked", nov20, date(2026, 11, 21), table)
    assert str(exc.value) == (
        f'A permit may be revoked only "{words}" (§ 540-8E; basis ordinance): the written notification '
        "is dated 2026-11-21, after the move (2026-11-20). Give its day with notified_on=YYYY-MM-DD "
        "(on or before 2026-11-20)."
    )
