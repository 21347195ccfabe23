"""The profile's appeal terms read and checked, pure (§ 540-13).

§ 540-13A(1): the Zoning Board of Appeals "Shall hear and decide appeals where it is alleged that there is
error in any order, decision or determination made by the administering authority in administering this
article, except for cease-and-desist orders obtained under § 540-12C"; (2) "may authorize variances". The
bodies, appellants, outcomes, kinds appealed and a variance's findings are the profile's; a mistake in them
is a ProfileError that says which table and what it needs.
"""

from __future__ import annotations

import re

import pytest

from esc_gis.errors import Problem, ProfileError, ValidationError
from esc_gis.registry.domain.appeals import (
    AppealedKind,
    Approval,
    Cited,
    VarianceTerms,
    appeal_terms,
    appealed_kinds,
    approval_terms,
    approves_disapproval,
    variance_terms,
)

PARTS = {
    "bodies": {"zba": "§ 540-13A", "board": "§ 540-13B"},
    "appellants": {"aggrieved": "§ 540-13B"},
    "outcomes": {"upheld": "§ 540-13A(1)", "reversed": "§ 540-13A(1)"},
}
CITE = {"text": "t", "section": "s", "basis": "ordinance"}


def test_the_bodies_appellants_and_outcomes_are_read_as_text() -> None:
    tables = {"appeals": {**PARTS, "outcomes": {"upheld": 1}}}
    assert appeal_terms(tables) == {**PARTS, "outcomes": {"upheld": "1"}}


@pytest.mark.parametrize("part", ["bodies", "appellants", "outcomes"])
@pytest.mark.parametrize("value", [None, {}, ["zba"]])
def test_each_missing_part_of_the_appeal_terms_is_named(part: str, value) -> None:
    tables = {"appeals": {**PARTS, part: value}}
    with pytest.raises(
        ProfileError, match=rf"^The profile has no \[appeals\.{part}\] table \(name = section\) for appeals\.$"
    ):
        appeal_terms(tables)
    with pytest.raises(ProfileError, match=r"\[appeals\.bodies\]"):
        appeal_terms({"appeals": None})


def test_the_kinds_appealed_with_the_state_a_reversal_undoes_and_those_not_heard() -> None:
    tables = {
        "appeals": {
            "appealed": {
                "stop_work_order": {"section": "§ 540-12A", "undoes": "stop_work"},
                "revocation": {"section": "§ 540-12B", "undoes": "revoked"},
                "suspension": {"section": "§ 540-12B", "undoes": "suspended"},
                "disapproval": {"section": "§ 540-8C", "undoes": "disapproved"},
                "other": {"section": "§ 540-8", "undoes": ""},
                "order": {"section": "§ 540-11"},
            },
            "not_heard": {"cease_and_desist": "§ 540-13A(1)"},
        }
    }
    assert appealed_kinds(tables) == {
        "stop_work_order": AppealedKind("stop_work_order", "§ 540-12A", "stop_work"),
        "revocation": AppealedKind("revocation", "§ 540-12B", "revoked"),
        "suspension": AppealedKind("suspension", "§ 540-12B", "suspended"),
        "disapproval": AppealedKind("disapproval", "§ 540-8C", "disapproved"),
        "other": AppealedKind("other", "§ 540-8", None),
        "order": AppealedKind("order", "§ 540-11", None),
        "cease_and_desist": AppealedKind("cease_and_desist", "§ 540-13A(1)", None, not_heard="§ 540-13A(1)"),
    }


@pytest.mark.parametrize("appealed", [None, {}, ["x"]])
def test_a_profile_without_kinds_appealed_is_refused(appealed) -> None:
    with pytest.raises(
        ProfileError,
        match=r"^The profile has no \[appeals\.appealed\] tables \(kind = \{section, undoes\}\) for appeals\.$",
    ):
        appealed_kinds({"appeals": {"appealed": appealed}})
    with pytest.raises(ProfileError, match=r"\[appeals\.appealed\] tables"):
        appealed_kinds({})


@pytest.mark.parametrize("entry", ["§ 540-12A", {"section": " "}, {"undoes": "stop_work"}, {"section": None}])
def test_a_kind_appealed_needs_its_section(entry) -> None:
    with pytest.raises(ProfileError, match=r"^The profile's \[appeals\.appealed\.order\] needs a section\.$"):
        appealed_kinds({"appeals": {"appealed": {"order": entry}}})


def test_a_kind_that_undoes_a_state_no_reversal_undoes_is_refused_with_the_states_that_can_be() -> None:
    with pytest.raises(ProfileError) as e:
        appealed_kinds({"appeals": {"appealed": {"order": {"section": "s", "undoes": "stopwork"}}}})
    assert str(e.value) == (
        "The profile's [appeals.appealed.order] undoes 'stopwork', not a state a reversal undoes "
        "(stop_work, revoked, suspended, disapproved) nor 'determination'."
    )


def test_cited_words_say_their_section_and_basis() -> None:
    assert str(Cited("the words", "§ 540-13A(2)", "ordinance")) == "the words (§ 540-13A(2); basis ordinance)"


def test_the_outcomes_that_approve_a_disapproval_appealed() -> None:
    tables = {"appeals": {"approval": {**CITE, "outcomes": ["reversed", "variance"]}}}
    assert approval_terms(tables) == Approval(frozenset({"reversed", "variance"}), Cited("t", "s", "ordinance"))
    with pytest.raises(ProfileError, match=r"^The profile's \[appeals\.approval\] lists no outcomes\.$"):
        approval_terms({"appeals": {"approval": CITE}})
    for bad in ({}, {"appeals": {"approval": {"text": "t", "section": "s", "outcomes": ["x"]}}}):
        with pytest.raises(
            ProfileError, match=r"^The profile's \[appeals\.approval\] needs a text, a section and a basis\.$"
        ):
            approval_terms(bad)


@pytest.mark.parametrize("missing", ["text", "section", "basis"])
def test_cited_words_need_each_of_text_section_and_basis(missing: str) -> None:
    for value in (None, " "):
        with pytest.raises(ProfileError, match=re.escape("[appeals.approval] needs a text, a section and a basis.")):
            approval_terms({"appeals": {"approval": {**CITE, missing: value, "outcomes": ["x"]}}})


def test_the_bodies_with_the_power_to_grant_a_variance_and_the_findings_it_rests_on() -> None:
    """§ 540-13A(2): variances "which are not contrary to the public interest and where, owing to special
    conditions, a literal enforcement of the provisions of the article will result in unnecessary hardship"."""
    tables = {
        "appeals": {
            "variance": {
                "power": {**CITE, "bodies": ["zba"]},
                "findings": {"public_interest": CITE, "hardship": {**CITE, "text": "h"}},
            }
        }
    }
    assert variance_terms(tables) == VarianceTerms(
        frozenset({"zba"}),
        Cited("t", "s", "ordinance"),
        {"public_interest": Cited("t", "s", "ordinance"), "hardship": Cited("h", "s", "ordinance")},
    )
    need = r"^The profile's \[appeals\.variance\] needs the power's bodies and the findings a variance rests on\.$"
    for variance in (
        {"power": CITE, "findings": {"x": CITE}},
        {"power": {**CITE, "bodies": ["zba"]}},
        {"power": {**CITE, "bodies": ["zba"]}, "findings": {}},
        {"power": {**CITE, "bodies": ["zba"]}, "findings": ["x"]},
    ):
        with pytest.raises(ProfileError, match=need):
            variance_terms({"appeals": {"variance": variance}})
    with pytest.raises(ProfileError, match=re.escape("[appeals.variance.power] needs a text, a section and a basis.")):
        variance_terms({})
    with pytest.raises(
        ProfileError, match=re.escape("[appeals.variance.findings.hardship] needs a text, a section and a basis.")
    ):
        variance_terms({"appeals": {"variance": {"power": {**CITE, "bodies": ["zba"]}, "findings": {"hardship": {}}}}})


def test_a_modified_decision_approves_only_on_the_offices_record() -> None:
    """§ 540-13A(3): the board uses "the rules, procedures, duties and powers authorized by statute", to
    "reverse or affirm, wholly or partly, or ... modify": a modification may approve or leave the
    disapproval standing, so the office's record decides (the profile's [appeals.approval.recorded])."""
    rec = {**CITE, "outcome": "modified", "basis": "interpretation"}
    terms = approval_terms({"appeals": {"approval": {**CITE, "outcomes": ["reversed"], "recorded": rec}}})
    assert (terms.recorded, terms.recorded_cited) == ("modified", Cited("t", "s", "interpretation"))
    assert approves_disapproval(terms, "reversed", None) is True
    assert approves_disapproval(terms, "modified", True) is True
    assert approves_disapproval(terms, "modified", False) is False
    assert approves_disapproval(terms, "upheld", None) is False
    with pytest.raises(ValidationError, match="a modified decision needs the office's record"):
        approves_disapproval(terms, "modified", None)
    # Without the table (an older profile) a modification is no approval: nothing is issued on a guess.
    assert approves_disapproval(approval_terms({"appeals": {"approval": {**CITE, "outcomes": ["reversed"]}}}),
                                "modified", None) is False  # fmt: skip


@pytest.mark.parametrize("outcome", [None, "", "reversed"])
def test_the_recorded_outcome_must_be_one_that_does_not_always_approve(outcome) -> None:
    rec = {**CITE, "outcome": outcome}
    with pytest.raises(ProfileError, match=r"\[appeals\.approval\.recorded\] needs an outcome that is not one of"):
        approval_terms({"appeals": {"approval": {**CITE, "outcomes": ["reversed"], "recorded": rec}}})


def test_the_shipped_profile_records_what_a_modified_decision_does() -> None:
    from esc_gis.profile import load_profile

    terms = approval_terms(load_profile().tables)
    assert "modified" not in terms.outcomes and terms.recorded == "modified"
    assert terms.recorded_cited is not None and terms.recorded_cited.basis == "interpretation"
    # § 540-13A(2) "variances from the provisions of this article": a variance relieves what it names, and
    # § 540-8C(2) issues a permit only "If the permit application and plan are approved" (issue 46).
    assert "variance" not in terms.outcomes and terms.relieved == "variance"
    assert terms.relieved_cited is not None and terms.relieved_cited.basis == "interpretation"
    assert "§ 540-8C(2)" in terms.relieved_cited.section


def test_a_variance_approves_only_on_the_offices_record() -> None:
    """§ 540-13A(2): the board "may authorize variances from the provisions of this article"; § 540-8C(2):
    "If the permit application and plan are approved, the administering authority shall issue the permit".
    A variance from one provision may leave other reasons standing: the office's record decides."""
    rel = {**CITE, "outcome": "variance", "basis": "interpretation", "text": "v"}
    rec = {**CITE, "outcome": "modified", "basis": "interpretation"}
    terms = approval_terms(
        {"appeals": {"approval": {**CITE, "outcomes": ["reversed"], "recorded": rec, "relieved": rel}}}
    )
    assert (terms.relieved, terms.relieved_cited) == ("variance", Cited("v", "s", "interpretation"))
    assert terms.chosen() == {
        "modified": Cited("t", "s", "interpretation"),
        "variance": Cited("v", "s", "interpretation"),
    }
    assert approves_disapproval(terms, "variance", True) is True
    assert approves_disapproval(terms, "variance", False) is False
    with pytest.raises(ValidationError) as refused:
        approves_disapproval(terms, "variance", None)
    msg = "a variance decision needs the office's record of whether it approves: v (s; basis interpretation)."
    assert refused.value.problems == [Problem("decision", None, msg, "record approves=True or approves=False.")]
    for outcome in ("reversed", "modified", ""):
        with pytest.raises(ProfileError, match=r"\[appeals\.approval\.relieved\] needs an outcome that is not one of"):
            approval_terms(
                {"appeals": {"approval": {**CITE, "outcomes": ["reversed"], "recorded": rec,
                                          "relieved": {**rel, "outcome": outcome}}}}
            )  # fmt: skip


def test_the_recorded_outcome_is_cited_and_a_missing_choice_says_how_to_record_it() -> None:
    """§ 540-13A(3) "reverse or affirm, wholly or partly, or ... modify": the reading that a modification
    approves only on the office's record is cited like every other, and its absence is named exactly."""
    rec = {**CITE, "outcome": "modified", "basis": "interpretation"}
    terms = approval_terms({"appeals": {"approval": {**CITE, "outcomes": ["reversed"], "recorded": rec}}})
    assert terms == Approval(
        frozenset({"reversed"}), Cited("t", "s", "ordinance"), "modified", Cited("t", "s", "interpretation")
    )
    with pytest.raises(
        ProfileError, match=r"^The profile's \[appeals\.approval\.recorded\] needs a text, a section and a basis\.$"
    ):
        approval_terms({"appeals": {"approval": {**CITE, "outcomes": ["reversed"], "recorded": {"outcome": "m"}}}})
    with pytest.raises(ProfileError) as exc:
        approval_terms({"appeals": {"approval": {**CITE, "outcomes": ["x"], "recorded": {**rec, "outcome": ""}}}})
    assert str(exc.value) == (
        "The profile's [appeals.approval.recorded] needs an outcome that is not one of [appeals.approval]'s."
    )
    with pytest.raises(ValidationError) as refused:
        approves_disapproval(terms, "modified", None)
    msg = "a modified decision needs the office's record of whether it approves: t (s; basis interpretation)."
    assert refused.value.problems == [Problem("decision", None, msg, "record approves=True or approves=False.")]
