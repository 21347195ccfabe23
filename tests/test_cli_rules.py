"""``esc-gis rules`` lists every citation of the registry's tables, so each can be audited.

The life cycle's written reasons, the enforcement grounds and actions, the appeals' bodies,
appellants, outcomes and kinds, the plan-amendment triggers and the office calendar each cite
a section on a basis; the command prints them beside the numbers and findings.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.cli.rules import citation_rows
from esc_gis.profile import load_profile

EXAMPLE = Path(__file__).parent / "profiles" / "example.toml"


def _rows(profile=None) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["table"], r["key"]): r for r in citation_rows(profile or load_profile())}


def test_every_cited_table_is_listed_with_section_basis_and_words() -> None:
    rows = _rows()
    tables = {t for t, _ in rows}
    assert tables == {
        "lifecycle.written_reasons",
        "lifecycle.written_notification",
        "enforcement.grounds",
        "enforcement.actions",
        "enforcement.without_permit",
        "enforcement.where_no_permit_required",
        "enforcement.standing_conditions",
        "appeals.bodies",
        "appeals.appellants",
        "appeals.outcomes",
        "appeals.appealed",
        "appeals.not_heard",
        "appeals",
        "appeals.approval",
        "appeals.variance",
        "appeals.variance.findings",
        "amendments.triggers",
        "amendments",
        "calendar",
        "inspections.report_contents",
        "inspections",
    }
    # enforcement.actions 5 (notified); enforcement.without_permit 4; appeals.outcomes 4 (modified);
    # appeals: approval; appeals.variance: power; its 3 findings.
    # inspections.report_contents 3; inspections 1; lifecycle.written_notification 2.
    # Issue 34: lifecycle.written_reasons closed_undecided; appeals.approval.recorded (a modified decision).
    # Issue 46: enforcement.where_no_permit_required A1-A4 (§ 540-12A where no permit is required);
    # appeals.approval.relieved (a variance that leaves no reason standing, § 540-13A(2); § 540-8C(2));
    # amendments.coverage_ends (when permit coverage ends, a reading of § 540-8E(7) and § 540-8G);
    # enforcement.standing_conditions E1-E8 (§ 540-8E(1)-(8), which ground A3 may name);
    # appeals.appealed determination (§ 540-13A(1) "any order, decision or determination": the 7).
    assert len(rows) == 7 + 4 + 5 + 4 + 2 + 2 + 4 + 6 + 1 + 1 + 1 + 3 + 4 + 1 + 3 + 1 + 2 + 1 + 1 + 4 + 1 + 1 + 8
    assert rows["appeals.approval", "relieved"]["basis"] == "interpretation"
    # The board may "reverse or affirm, wholly or partly, or ... modify": what a modification does is recorded.
    assert rows["appeals.approval", "recorded"]["basis"] == "interpretation"
    # § 540-8E: "may suspend or revoke a permit ... following written notification of the responsible party".
    assert rows["lifecycle.written_notification", "revoked"] == {
        "table": "lifecycle.written_notification",
        "key": "revoked",
        "section": "§ 540-8E",
        "basis": "ordinance",
        "words": "following written notification of the responsible party",
    }
    # § 540-8E(6): "Weekly inspection reports shall include all of the following: ... a description
    # of the present phase of land disturbing construction activity at the construction site."
    assert rows["inspections.report_contents", "phase"]["basis"] == "ordinance"
    assert rows["inspections.report_contents", "location"]["basis"] == "interpretation"
    # § 540-7B(5)(a) requires the practices installed first, not an inspection: the office's policy.
    assert (rows["inspections", "pre_start"]["section"], rows["inspections", "pre_start"]["basis"]) == (
        "§ 540-7B(5)(a)",
        "policy",
    )
    # § 540-12A(1): "Any land-disturbing construction activity is being undertaken without a permit ..."
    assert rows["enforcement.grounds", "A1"] == {
        "table": "enforcement.grounds",
        "key": "A1",
        "section": "§ 540-12A(1)",
        "basis": "ordinance",
        "words": "Land-disturbing construction activity undertaken without a permit where one is required",
    }
    assert rows["appeals.bodies", "zoning_board_of_appeals"]["section"] == "§ 540-13A"
    assert rows["appeals.appealed", "revocation"]["words"] == "revocation (a reversal undoes revoked)"
    assert rows["amendments.triggers", "B3"]["section"] == "§ 540-9B(3)"
    # The three findings are § 540-13A(2)'s words, each on the ordinance.
    assert rows["appeals.variance.findings", "public_interest"]["words"] == "not contrary to the public interest"
    assert rows["appeals.variance.findings", "special_conditions"]["words"] == "owing to special conditions"
    assert {r["basis"] for (t, _), r in rows.items() if t == "appeals.variance.findings"} == {"ordinance"}
    assert rows["enforcement.without_permit", "revoked"]["basis"] == "interpretation"
    # § 540-8A: "no responsible party may commence ... without receiving prior approval ... and a permit".
    assert rows["enforcement.without_permit", "not_issued"]["basis"] == "ordinance"
    assert rows["enforcement.without_permit", "closed"]["basis"] == "interpretation"
    assert rows["appeals", "approval"]["section"] == "§ 540-13A(1); § 540-8C(2)"
    assert rows["calendar", "calendar"]["basis"] == "interpretation"
    assert rows["calendar", "calendar"]["words"].endswith("; holidays: wisconsin_municipal")


def test_when_permit_coverage_ends_is_listed_as_a_reading() -> None:
    """§ 540-8E(7): the plan and "amendments" are kept at the site "until permit coverage is terminated"; § 540-8G:
    permits "shall be valid for a period of 180 days, or the length of the building permit or other construction
    authorizations, whichever is longer, from the date of issuance". Neither says what terminates coverage: the
    states the profile takes ([amendments.coverage_ends]) are a reading, listed with their sections."""
    ends = _rows()["amendments", "coverage_ends"]
    assert (ends["section"], ends["basis"]) == ("§ 540-8E(7); § 540-8G", "interpretation")
    assert ends["words"].endswith("; states: closed, revoked; expiry: True")
    r = CliRunner().invoke(cli, ["rules"], env={"COLUMNS": "400"})
    assert r.exit_code == 0 and "coverage_ends" in r.output


def test_written_reasons_the_ordinance_does_not_require_are_listed_as_policy() -> None:
    rows = _rows()
    bases = {k: r["basis"] for (t, k), r in rows.items() if t == "lifecycle.written_reasons"}
    # § 540-8C(3) "shall state in writing the reasons for disapproval"; § 540-8E "following
    # written notification"; § 540-12A and § 540-12D ask for none.
    assert bases == {
        "disapproved": "ordinance",
        "suspended": "ordinance",
        "revoked": "ordinance",
        "stop_work": "policy",
        "retraction": "policy",
        "reinstatement": "policy",
        # § 540-8C says nothing of an application withdrawn or left unanswered (issue 34).
        "closed_undecided": "policy",
    }
    assert rows["lifecycle.written_reasons", "stop_work"]["words"] == "written reasons needed for stop_work"
    # A plain string is a section on the ordinance's basis (the test profile's disapproval).
    assert _rows(load_profile(EXAMPLE))["lifecycle.written_reasons", "disapproved"]["basis"] == "ordinance"


def test_a_profile_without_those_tables_lists_none() -> None:
    import dataclasses

    bare = dataclasses.replace(load_profile(), tables={})
    assert citation_rows(bare) == []


def test_the_command_prints_them_and_its_json_has_them() -> None:
    r = CliRunner().invoke(cli, ["rules"], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    assert "Registry citations" in r.output
    for text in ("[lifecycle.written_reasons]", "[enforcement.grounds]", "[appeals.appealed]", "[amendments.triggers]"):
        assert text in r.output, text
    assert "§ 540-12A requires none" in r.output
    r = CliRunner().invoke(cli, ["rules", "--json"])
    data = json.loads(r.output)
    assert data["citations"] == citation_rows(load_profile())
    ext = next(e for e in data["entries"] if e["entry"] == "deadlines.permit_extension")
    assert (ext["reading"], ext["basis"]) == ("per_extension", "interpretation")


def test_bracketed_text_in_sections_and_messages_is_printed_not_taken_for_markup() -> None:
    """ "§ 540-7B(3)(b)[1]" and "[soil_loss.r_annual]" are the profile's words; rich would drop them as tags."""
    r = CliRunner().invoke(cli, ["rules"], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "[soil_loss.r_annual]" in text
    assert "under [policy]" in text
    assert "§ 540-9A(9); § 540-7B(3)(b)[1]" in text
