"""Appeals' decisions that the ordinance gives effect (§ 540-13A), on both back ends (``reg``:
a GeoPackage file and the real PostGIS server): a disapproval reversed or modified on appeal is
an approval, and a variance is the Zoning Board of Appeals' alone and rests on its findings.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from esc_gis.errors import IllegalTransitionError, ProfileError, ValidationError
from esc_gis.registry import Application
from esc_gis.registry.service.registry import Registry

from .conftest import CRS, square_sqft
from .public_outputs import run_permits

ZBA = "zoning_board_of_appeals"
#: § 540-13A(2)'s words for the three findings, as the profile holds them.
PUBLIC_INTEREST = "not contrary to the public interest"
SPECIAL = "owing to special conditions"
HARDSHIP = "a literal enforcement of the provisions of the article will result in unnecessary hardship"
ALL_FINDINGS = ("public_interest", "special_conditions", "unnecessary_hardship")


def disapproved(reg: Registry, x: float = 100) -> str:
    """A permit disapproved on 2026-11-10 with its written reasons (§ 540-8C(3))."""
    n = reg.add(Application(f"{int(x)} Test St", date(2026, 11, 2), square_sqft(x, 100, 5000.0), CRS), who="clerk")
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt=f"R-{n}", who="clerk")
    reg.transition(n, "under_review", on=date(2026, 11, 3))
    reg.transition(n, "disapproved", on=date(2026, 11, 10), reasons="no perimeter control")
    return n


def appeal_of(
    reg: Registry,
    n: str,
    kind: str = "permit_decision",
    on: date = date(2026, 11, 12),
    appealed: str = "disapproval of 2026-11-10",
) -> str:
    """Record Pat Builder's appeal of ``appealed`` (a decision of ``kind`` on permit ``n``), filed ``on``."""
    return reg.appeal(
        appealed=appealed,
        kind=kind,
        appellant="Pat Builder",
        appellant_kind="aggrieved_person",
        on=on,
        grounds="the perimeter control is on sheet 3",
        permit_number=n,
    ).appeal_id


@pytest.mark.parametrize(("outcome", "body"), [("reversed", ZBA), ("modified", "village_board")])
def test_a_disapproval_reversed_or_modified_to_approve_on_appeal_is_approved_and_issued(
    reg, outcome: str, body: str
) -> None:
    """§ 540-13A(1): the board "Shall hear and decide appeals where it is alleged that there is error in any
    order, decision or determination made by the administering authority"; § 540-8C(2): "If the permit
    application and plan are approved, the administering authority shall issue the permit"."""
    n = disapproved(reg)
    # The edge: an upheld disapproval stays one, and then only closing is allowed.
    a = reg.decide_appeal(appeal_of(reg, n), body=ZBA, outcome="upheld", on=date(2026, 11, 16))
    assert a.decision is not None and a.decision.effect == "permit state unchanged"
    assert reg.get(n).status == "disapproved"
    with pytest.raises(IllegalTransitionError, match="allowed: closed"):
        reg.transition(n, "active", on=date(2026, 11, 17))
    approves = True if outcome == "modified" else None
    a = reg.decide_appeal(
        appeal_of(reg, n, on=date(2026, 11, 17)), body=body, outcome=outcome, on=date(2026, 11, 20), approves=approves
    )
    assert a.decision is not None and a.decision.effect == "permit disapproved -> approved"
    assert a.decision.approves is approves
    p = reg.get(n)
    # Issued the day of the board's decision; valid 180 days from it (§ 540-8G).
    assert (p.status, p.decided_on, p.issued_on) == ("approved", date(2026, 11, 20), date(2026, 11, 20))
    assert p.expires_on == date(2026, 11, 20) + timedelta(days=180)
    assert [e.kind for e in reg.history(n)[-2:]] == ["approved_on_appeal", "appeal_decided"]
    last = reg.history(n)[-2]
    assert (last.data["from"], last.data["to"], last.data["appeal_id"]) == ("disapproved", "approved", a.appeal_id)
    assert p.state.status == "approved" and p.state.issued_on == date(2026, 11, 20)
    # It is an approved permit now: work may start, as on any approved permit.
    assert reg.transition(n, "active", on=date(2026, 11, 23)).status == "active"


def test_a_modified_decision_that_leaves_the_disapproval_standing_issues_nothing(reg) -> None:
    """§ 540-13A(3): the board uses "the rules, procedures, duties and powers authorized by statute", which
    let it "reverse or affirm, wholly or partly, or ... modify" (§ 62.23(7)(e)8, Wis. Stats.); § 540-8C(3):
    "If the permit application or plan is disapproved, the administering authority shall state in writing
    the reasons for disapproval". A decision "modified: disapproval stands on reasons B and C" approves
    nothing: the office records which a modification does (issue 34), and --stands leaves it disapproved."""
    n = disapproved(reg)
    a = appeal_of(reg, n)
    d = reg.decide_appeal(
        a, body=ZBA, outcome="modified", on=date(2026, 11, 20), approves=False,
        conditions="disapproval stands on reasons B and C",
    ).decision  # fmt: skip
    assert d is not None and (d.outcome, d.approves, d.effect) == ("modified", False, "permit state unchanged")
    assert reg.get(n).status == "disapproved" and reg.get(n).issued_on is None
    assert "approved_on_appeal" not in [e.kind for e in reg.history(n)]
    assert reg.history(n)[-1].data["approves"] is False


def test_a_modified_decision_needs_the_offices_record_of_what_it_does(reg, active) -> None:
    """The ordinance leaves what a modification does to the board (§ 540-13A(3)): the registry never
    guesses. Without --approves/--stands the decision is refused, quoting the profile's reading; the
    choice goes with `modified` alone, and --approves with the appeal of a disapproval alone."""
    n = disapproved(reg, x=400)  # another lot than the active permit's: a site takes one application
    a = appeal_of(reg, n)
    with pytest.raises(ValidationError) as info:
        reg.decide_appeal(a, body=ZBA, outcome="modified", on=date(2026, 11, 20))
    text = str(info.value)
    assert "a modified decision needs approves=True or approves=False" in text
    assert "only when the office records that it does;" in text and "basis interpretation" in text
    with pytest.raises(
        ValidationError, match="approves= is for a modified or variance decision; the outcome is upheld"
    ):
        reg.decide_appeal(a, body=ZBA, outcome="upheld", on=date(2026, 11, 20), approves=False)
    assert reg.appeals(appeal_id=a)[0].decision is None and reg.get(n).status == "disapproved"
    # A stop-work order's appeal modified: --approves would mean nothing there; --stands is recorded.
    s = appeal_of(reg, active, kind="stop_work_order")
    with pytest.raises(
        ValidationError,
        match=r"approves=True goes with the appeal of a disapproval .* stop work order: record approves=False",
    ):
        reg.decide_appeal(s, body=ZBA, outcome="modified", on=date(2026, 11, 20), approves=True)
    d = reg.decide_appeal(s, body=ZBA, outcome="modified", on=date(2026, 11, 20), approves=False).decision
    assert d is not None and d.approves is False and reg.get(active).status == "active"


def test_cli_decide_modified_requires_approves_or_stands(reg, target: str, layers_path) -> None:
    lay = ["--layers", str(layers_path)]
    n = disapproved(reg)
    a = appeal_of(reg, n)
    args = ("decide", target, a, "--body", ZBA, "--outcome", "modified", "--on", "2026-11-20")
    r = run_permits(*args, *lay)
    assert r.exit_code == 1 and "needs --approves or --stands" in r.output, r.output
    r = run_permits(*args, "--stands", *lay)
    assert r.exit_code == 0, r.output
    assert "modified (the decision appealed stands) by zoning_board_of_appeals" in r.output
    assert reg.get(n).status == "disapproved"


def test_a_variance_that_leaves_no_reason_standing_approves_the_disapproval(reg) -> None:
    """§ 540-13A(2): the Zoning Board of Appeals "Upon appeal, may authorize variances from the provisions of
    this article": when the provisions relieved were every reason for the disapproval, the plan stands
    approved (the office records it, --approves; the profile's [appeals.approval.relieved]), and "If the
    permit application and plan are approved, the administering authority shall issue the permit"
    (§ 540-8C(2))."""
    n = disapproved(reg)
    a = reg.decide_appeal(
        appeal_of(reg, n), body=ZBA, outcome="variance", on=date(2026, 11, 20), findings=ALL_FINDINGS,
        conditions="silt fence doubled on the east edge", approves=True,
    )  # fmt: skip
    assert a.decision is not None and a.decision.effect == "permit disapproved -> approved"
    assert a.decision.approves is True
    p = reg.get(n)
    assert (p.status, p.issued_on) == ("approved", date(2026, 11, 20))
    assert reg.history(n)[-1].data["conditions"] == "silt fence doubled on the east edge"
    # The issuance rests on the variance's reading, not on a reversal's (§ 540-13A(2), not § 540-13A(1)).
    (issued,) = [e for e in reg.history(n) if e.kind == "approved_on_appeal"]
    assert "a variance relieves only the provisions it names" in issued.why
    assert "(§ 540-13A(2); § 540-8C(2); basis interpretation)" in issued.why
    assert "reversed on appeal" not in issued.why


def test_a_variance_from_one_provision_leaves_the_other_reasons_for_disapproval_standing(reg) -> None:
    """§ 540-13A(2): the board "may authorize variances from the provisions of this article" -- from the
    provisions it names, no more; § 540-8C(2): "If the permit application and plan are approved, the
    administering authority shall issue the permit". A disapproval on three reasons, a variance from
    § 540-9A(9) alone: the other two still stand, so nothing is issued (--stands)."""
    n = disapproved(reg)
    a = appeal_of(reg, n)
    d = reg.decide_appeal(
        a, body=ZBA, outcome="variance", on=date(2026, 11, 20), findings=ALL_FINDINGS, approves=False,
        conditions="variance from § 540-9A(9) only; reasons 1 and 2 stand",
    ).decision  # fmt: skip
    assert d is not None and (d.outcome, d.approves, d.effect) == ("variance", False, "permit state unchanged")
    p = reg.get(n)
    assert (p.status, p.issued_on, p.expires_on) == ("disapproved", None, None)
    assert "approved_on_appeal" not in [e.kind for e in reg.history(n)]
    assert reg.history(n)[-1].data["approves"] is False and reg.history(n)[-1].data["findings"] == list(ALL_FINDINGS)


def test_a_variance_on_the_appeal_of_a_disapproval_needs_the_offices_record(reg, target: str, layers_path) -> None:
    """§ 540-8C(2) issues a permit only "If the permit application and plan are approved": whether a
    variance "from the provisions of this article" (§ 540-13A(2)) leaves a reason for the disapproval
    standing is the office's record, never a guess. Without --approves/--stands it is refused, quoting the
    profile's reading; the CLI records --stands and the permit stays disapproved."""
    n = disapproved(reg)
    a = appeal_of(reg, n)
    with pytest.raises(ValidationError) as info:
        reg.decide_appeal(a, body=ZBA, outcome="variance", on=date(2026, 11, 20), findings=ALL_FINDINGS)
    text = str(info.value)
    assert (
        "a variance decision needs approves=True or approves=False: a variance relieves only the provisions it names"
        in text
    )
    assert "(§ 540-13A(2); § 540-8C(2); basis interpretation)" in text
    assert reg.appeals(appeal_id=a)[0].decision is None and reg.get(n).status == "disapproved"
    finding = [x for f in ALL_FINDINGS for x in ("--finding", f)]
    args = ("decide", target, a, "--body", ZBA, "--outcome", "variance", "--on", "2026-11-20", *finding)
    r = run_permits(*args, "--stands", "--layers", str(layers_path))
    assert r.exit_code == 0, r.output
    assert "variance (the decision appealed stands) by zoning_board_of_appeals" in r.output
    assert reg.get(n).status == "disapproved" and reg.get(n).issued_on is None


def test_only_an_appeal_of_the_permit_decision_approves_a_disapproval(reg) -> None:
    """The edge: only the appeal of the "decision" (§ 540-13A(1)) that disapproved turns it; another kind of
    appeal reversed leaves the disapproval standing."""
    n = disapproved(reg)
    a = reg.decide_appeal(appeal_of(reg, n, kind="other"), body=ZBA, outcome="reversed", on=date(2026, 11, 16))
    assert a.decision is not None and a.decision.effect == "permit state unchanged"
    assert reg.get(n).status == "disapproved" and "approved_on_appeal" not in [e.kind for e in reg.history(n)]


def test_a_variance_from_the_village_board_is_refused_with_the_power_it_lacks(reg, active) -> None:
    """§ 540-13A(2): the Zoning Board of Appeals "Upon appeal, may authorize variances from the provisions
    of this article"; § 540-13B's appeals to the Village Board carry no such power."""
    a = appeal_of(reg, active)
    with pytest.raises(ValidationError) as info:
        reg.decide_appeal(a, body="village_board", outcome="variance", on=date(2026, 11, 20), findings=ALL_FINDINGS)
    text = str(info.value)
    assert "the village board cannot grant a variance: only the Zoning Board of Appeals may authorize" in text
    assert "(§ 540-13A(2); basis ordinance)" in text
    assert reg.appeals(appeal_id=a)[0].decision is None
    # The same body may still decide the appeal itself.
    d = reg.decide_appeal(a, body="village_board", outcome="upheld", on=date(2026, 11, 20)).decision
    assert d is not None and d.findings == ()


def test_a_variance_rests_on_every_finding_and_needs_no_conditions(reg, active) -> None:
    """§ 540-13A(2): variances "which are not contrary to the public interest and where, owing to special
    conditions, a literal enforcement of the provisions of the article will result in unnecessary
    hardship": three findings, each recorded."""
    a = appeal_of(reg, active)
    with pytest.raises(ValidationError) as info:
        reg.decide_appeal(a, body=ZBA, outcome="variance", on=date(2026, 11, 20))
    text = str(info.value)
    for words in (PUBLIC_INTEREST, SPECIAL, HARDSHIP):
        assert f'"{words}"' in text, words
    assert "(§ 540-13A(2); basis ordinance; findings= key special_conditions)" in text
    assert "--conditions" not in text  # the ordinance never requires them
    with pytest.raises(ValidationError) as info:
        reg.decide_appeal(
            a, body=ZBA, outcome="variance", on=date(2026, 11, 20), findings=("public_interest", "unnecessary_hardship")
        )
    text = str(info.value)
    # Only the missing one is named.
    assert f'"{SPECIAL}"' in text and PUBLIC_INTEREST not in text and "unnecessary hardship" not in text
    with pytest.raises(ValidationError, match=r"finding\(s\) 'hardship' are not the profile's"):
        reg.decide_appeal(a, body=ZBA, outcome="variance", on=date(2026, 11, 20), findings=(*ALL_FINDINGS, "hardship"))
    assert reg.appeals(appeal_id=a)[0].decision is None
    d = reg.decide_appeal(a, body=ZBA, outcome="variance", on=date(2026, 11, 20), findings=ALL_FINDINGS).decision
    assert d is not None and d.findings == ALL_FINDINGS and d.conditions is None
    assert reg.get(active).status == "active" and d.effect == "permit state unchanged"
    assert reg.history(active)[-1].data["findings"] == list(ALL_FINDINGS)
    # The edge: a variance on an appeal that is not of a disapproval carries no choice and approves nothing.
    s = appeal_of(reg, active, kind="stop_work_order")
    with pytest.raises(
        ValidationError,
        match=r"approves=True goes with the appeal of a disapproval .* stop work order: record approves=False",
    ):
        reg.decide_appeal(s, body=ZBA, outcome="variance", on=date(2026, 11, 20), findings=ALL_FINDINGS, approves=True)


def test_findings_belong_to_a_variance_only(reg, active) -> None:
    a = appeal_of(reg, active)
    with pytest.raises(ValidationError, match="findings go with a variance; the outcome is upheld"):
        reg.decide_appeal(a, body=ZBA, outcome="upheld", on=date(2026, 11, 20), findings=("public_interest",))


def test_cli_decide_a_variance_with_findings(reg, active, target: str, layers_path) -> None:
    lay = ["--layers", str(layers_path)]
    a = appeal_of(reg, active)
    r = run_permits("decide", target, a, "--body", ZBA, "--outcome", "variance", "--on", "2026-11-20",
                    "--finding", "public_interest", *lay)  # fmt: skip
    assert r.exit_code == 1 and HARDSHIP in r.output and PUBLIC_INTEREST not in r.output, r.output
    finds = [x for f in ALL_FINDINGS for x in ("--finding", f)]
    r = run_permits("decide", target, a, "--body", ZBA, "--outcome", "variance", "--on", "2026-11-20", *finds, *lay)
    assert r.exit_code == 0, r.output
    assert "findings: public_interest, special_conditions, unnecessary_hardship" in r.output


def test_the_variance_and_approval_tables_are_checked() -> None:
    from esc_gis.registry.domain.appeals import approval_terms, variance_terms

    with pytest.raises(ProfileError, match=r"\[appeals.variance.power\] needs a text, a section and a basis"):
        variance_terms({"appeals": {"variance": {"power": {"section": "s", "basis": "ordinance"}}}})
    with pytest.raises(ProfileError, match="lists no outcomes"):
        approval_terms({"appeals": {"approval": {"text": "t", "section": "s", "basis": "interpretation"}}})


def test_the_fold_of_an_approval_on_appeal() -> None:
    """Pure: the history's approved_on_appeal moves the state and issues the permit that day (§ 540-8C(2))."""
    from datetime import datetime, timezone

    from esc_gis.registry.domain.events import HistoryEvent, check_event
    from esc_gis.registry.domain.fold import fold

    t = datetime(2026, 11, 20, tzinfo=timezone.utc)

    def ev(kind: str, on: date, **data: object) -> HistoryEvent:
        return HistoryEvent("P", kind, t, "clerk", on=on, data=data)

    events = [
        ev("received", date(2026, 11, 2), to="application_received"),
        ev("under_review", date(2026, 11, 3), to="under_review"),
        ev("decided", date(2026, 11, 10), to="disapproved", outcome="disapproved"),
        ev("approved_on_appeal", date(2026, 11, 20), to="approved", appeal_id="A", outcome="reversed", body="z"),
    ]
    assert check_event(replace_data(events[-1], {"to": "approved"})) == [
        "approved_on_appeal needs 'appeal_id', 'outcome', 'body'."
    ]
    s = fold(events)
    assert (s.status, s.decided_on, s.issued_on) == ("approved", date(2026, 11, 20), date(2026, 11, 20))
    assert s.previous_status == "disapproved"
    # An extension in a state that stays is no move: the state and the states before are unchanged.
    s = fold([*events, ev("extended", date(2026, 11, 21), to="approved", days=30, conditions=["silt fence"])])
    assert (s.status, s.previous_status, s.extensions_days) == ("approved", "disapproved", [30])
    assert s.extensions[-1]["conditions"] == ["silt fence"]


def replace_data(e, data):
    from dataclasses import replace

    return replace(e, data=data)
