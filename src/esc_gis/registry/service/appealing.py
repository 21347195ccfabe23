"""Appeals of orders, decisions and determinations, and the decisions on them."""

from __future__ import annotations

__all__ = ["appeal", "appeals", "decide_appeal"]

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from esc_gis.errors import (
    Problem,
    ValidationError,
)
from esc_gis.registry.domain.appeals import (
    DETERMINATION,
    Appeal,
    AppealDecision,
    AppealedKind,
    Approval,
    VarianceTerms,
    appeal_terms,
    appealed_kinds,
    approval_terms,
    approves_disapproval,
    variance_terms,
)
from esc_gis.registry.domain.dates import EffectiveDate, date_problems
from esc_gis.registry.domain.events import HistoryEvent
from esc_gis.registry.domain.lifecycle import BACK, ON_APPEAL, check_back
from esc_gis.registry.domain.records import Event
from esc_gis.registry.service import enforcing
from esc_gis.registry.service._core import (
    _who,
)
from esc_gis.registry.store.backend import now_utc, rows
from esc_gis.registry.store.numbering import next_number

if TYPE_CHECKING:
    from esc_gis.registry.service.registry import Registry


def appeal(
    reg: Registry,
    *,
    appealed: str | None,
    appellant: str | None,
    appellant_kind: str,
    on: date | None,
    grounds: str | None,
    permit_number: str | None = None,
    case_id: str | None = None,
    kind: str | None = None,
    who: str | None = None,
) -> Appeal:
    """Record an appeal of an order, decision or determination (§ 540-13).

    ``kind`` is what is appealed, one of the profile's ``[appeals.appealed]`` (a stop-work
    order, a revocation, a permit decision, ...); its reversal moves the permit back only
    from the state that kind undoes. A kind in ``[appeals.not_heard]`` (a cease-and-desist
    order obtained in court, § 540-13A(1)) is refused with the profile's reason.

    Raises
    ------
    ValidationError
        With every problem at once (no permit or case, an unknown permit or case, an
        appellant kind the profile does not list, empty texts, a date in the future);
        nothing is written then.
    """
    who = _who(who)
    terms = appeal_terms(reg.profile.tables)
    kinds = appealed_kinds(reg.profile.tables)
    problems: list[Problem] = []

    def bad(message: str, fix: str) -> None:
        problems.append(Problem("appeal", None, message, fix))

    if not permit_number and not case_id:
        bad("the appeal names no permit and no enforcement case.", "give permit_number= or case_id=.")
    if permit_number and permit_number not in {p.permit_number for p in reg.permits()}:
        bad(f"there is no permit {permit_number!r} in the registry.", "check the number (`permits list`).")
    case = reg.cases(case_id=case_id) if case_id else []
    if case_id and not case:
        bad(f"there is no enforcement case {case_id!r}.", "check the id (`permits cases`).")
    elif case and case[0].permit_number:
        if permit_number and permit_number != case[0].permit_number:
            bad(f"case {case_id} is about permit {case[0].permit_number}, not {permit_number}.", "give one of them.")
        permit_number = case[0].permit_number  # the case's permit is what the appeal can change
    for message, fix in _kind_problems(reg, kind, kinds, permit_number):
        bad(message, fix)
    if appellant_kind not in terms["appellants"]:
        bad(
            f"appellant kind {appellant_kind!r} is not one the profile lists.",
            f"use {', '.join(terms['appellants'])}.",
        )
    for name, value in (("appealed decision", appealed), ("appellant", appellant), ("grounds", grounds)):
        if not (value or "").strip():
            bad(f"the {name} is empty.", f"give the {name}.")
    if on is None:
        bad("the filing date is missing.", "give on=YYYY-MM-DD.")
    problems += reg._date_problems(permit_number or case_id or "appeal", EffectiveDate("on=", on))
    if problems:
        raise ValidationError(problems)
    assert on is not None
    b = reg.backend
    now = now_utc()
    with b.write() as cur:
        appeal_id = next_number(cur, b, "appeals", "appeal_id", reg.profile.appeal_number, on.year)
        detail = f"appeal {appeal_id} of a {str(kind).replace('_', ' ')} filed ({appellant_kind})"
        facts: dict[str, Any] = {
            "appeal_id": appeal_id,
            "appealed_kind": kind,
            "case_id": case_id or None,
            # The appeal as filed: its projection's row.
            "permit_number": permit_number or None,
            "appealed": (appealed or "").strip(),
            "appellant": (appellant or "").strip(),
            "appellant_kind": appellant_kind,
            "grounds": (grounds or "").strip(),
        }
        if permit_number:
            reg._event(cur, permit_number, Event(now, who, "appeal", None, None, on, None, detail), **facts)
        else:  # a case without a permit: the case's own stream
            reg._append(cur, HistoryEvent(str(case_id), "appeal_filed", now, who, on=on, why=detail, data=facts))
    return reg.appeals(appeal_id=appeal_id)[0]


def _determination_problems(reg: Registry, permit_number: str | None) -> list[tuple[str, str]]:
    """Return why a determination cannot be appealed on ``permit_number``: no permit, or none recorded on it."""
    if not permit_number:
        return [
            ("the appeal of a determination names no permit.", "give permit_number=: the permit it is recorded on.")
        ]
    if permit_number not in {p.permit_number for p in reg.permits()}:
        return []  # said already: no such permit
    state = reg.get(permit_number).state
    if state is None or state.determination is None:
        return [
            (
                f"permit {permit_number} has no determination that a permit is needed to appeal.",
                "check the permit (`permits show`), or give another kind=.",
            )
        ]
    return []


def _kind_problems(
    reg: Registry, kind: str | None, kinds: dict[str, AppealedKind], permit_number: str | None
) -> list[tuple[str, str]]:
    """Return what is wrong with the kind of order appealed: missing, unknown, not heard, or nothing to appeal."""
    heard = ", ".join(k for k, v in kinds.items() if v.not_heard is None)
    if kind is None or kind not in kinds:
        what = "missing" if kind is None else f"{kind!r}, not one the profile lists"
        return [(f"the kind of order or decision appealed is {what}.", f"give kind=: one of {heard}.")]
    if kinds[kind].not_heard is not None:
        f = reg.profile.finding("appeal_not_heard", kind=kind.replace("_", " "))
        return [(f"{f.message} ({f.section}).", f"nothing to record here: the board hears only {heard}.")]
    if kinds[kind].undoes == DETERMINATION:
        return _determination_problems(reg, permit_number)
    return []


def decide_appeal(
    reg: Registry,
    appeal_id: str,
    *,
    body: str,
    outcome: str,
    on: date | None,
    conditions: str | None = None,
    findings: Sequence[str] = (),
    approves: bool | None = None,
    who: str | None = None,
) -> Appeal:
    """Record the decision on an appeal and its effect on the permit (§ 540-13A).

    A reversal of a stop-work order or revocation retracts it, of a suspension lifts it:
    the permit goes back to the state before, in the same transaction. A disapproval
    appealed (kind ``permit_decision``) and reversed by the board is an approval (the
    profile's ``[appeals.approval]``): the permit is approved and issued that day
    (§ 540-8C(2)). A ``modified`` decision may approve or leave the disapproval standing in
    part: the office records which (``approves``, required with it; True only on the appeal
    of a permit decision), and only True approves (``[appeals.approval.recorded]``). A
    variance is the Zoning Board of Appeals' alone (§ 540-13A(2)) and rests on every finding
    of ``[appeals.variance.findings]``, named in ``findings``; on the appeal of a disapproval
    it relieves the provisions it names and may leave other reasons standing, so the office
    records whether it approves (``approves``, required there) and only True issues the
    permit (``[appeals.approval.relieved]``); ``conditions`` are the board's, if it set any.

    Raises
    ------
    ValidationError
        With every problem at once (no such appeal, already decided, a body or outcome
        the profile does not list, a variance from another body or without all its
        findings, findings on another outcome, a modified decision (or a variance on the
        appeal of a disapproval) without ``approves``, or ``approves`` on another outcome
        or kind, a date before the filing or in the future); nothing is written then.
    ProfileError
        If the profile lacks ``[appeals.approval]`` or ``[appeals.variance]``.
    """
    who = _who(who)
    approval = approval_terms(reg.profile.tables)
    known = appealed_kinds(reg.profile.tables)
    a, named = _check_decision(reg, appeal_id, body, outcome, on, findings, approves, approval, known)
    assert on is not None
    now = now_utc()
    b = reg.backend
    # Only a reversal of the order that put the permit in its state moves it back: a reversed
    # permit decision leaves a stop-work order standing. Appeals recorded before kinds were
    # (None) keep the earlier reading: a reversal undoes whichever of those states it finds.
    undoes = known[a.appealed_kind].undoes if a.appealed_kind in known else None
    legacy = a.appealed_kind is None
    # Read before the write transaction (a GeoPackage cannot nest one in it).
    case = reg.case(str(a.case_id)) if a.case_id else None
    retract_case = (
        case is not None and outcome == "reversed" and (legacy or undoes == "stop_work") and case.state == "stop_work"
    )
    # A case's own order (no permit, or work without one on a permit's site) is retracted on its stream.
    own = case is not None and (not case.permit_number or enforcing._own_order(reg, case))
    withdrawn = _without_determination(reg, a, outcome, undoes)
    with b.write() as cur:
        effect = "permit state unchanged" if a.permit_number else "no permit"
        if a.permit_number:
            p = reg._locked(cur, a.permit_number)
            undone = outcome == "reversed" and (legacy or undoes == p.status)
            move = BACK.get(p.status) if undone else None
            # Asked only where it has an effect: a variance on another appeal carries no choice.
            approving = (
                undoes == p.status and p.status in ON_APPEAL and approves_disapproval(approval, outcome, approves)
            )
            if withdrawn is not None and p.state is not None and p.state.determination is not None:
                effect = _withdraw_determination(reg, cur, p, appeal_id, body, on, who, now, withdrawn)
            elif not legacy and approving:
                # The reading the approval rests on: a reversal's, or the recorded choice of a modification or variance.
                cited = approval.chosen().get(outcome, approval.cited)
                effect = _approve_on_appeal(reg, cur, p, appeal_id, body, outcome, on, who, now, str(cited))
            elif move is not None:
                reasons = f"appeal {appeal_id} reversed by {body}"
                before = check_back(p.status, move, p.previous_status, reasons=reasons, needs=reg.written_reasons)
                reg._event(
                    cur,
                    p.permit_number,
                    Event(now, who, move, p.status, before, on, None, reasons),
                    appeal_id=appeal_id,
                )
                effect = f"permit {p.status} -> {before}"
        facts: dict[str, Any] = {"appeal_id": appeal_id, "outcome": outcome, "body": body}
        if named:
            facts["findings"] = named
        if approves is not None:
            # The office's record of what the modification does (issue 34): in the history, read back by appeals().
            facts["approves"] = approves
        if (conditions or "").strip():
            facts["conditions"] = (conditions or "").strip()
        # The log line says the permit's effect; the decision's row, the case order's too.
        said = effect
        if retract_case:
            effect += "; case order retracted"
            if not own:  # the case's log line, from the decision itself (no event of the case's own)
                facts["case_retraction"] = str(a.case_id)
        facts["effect"] = effect
        if a.permit_number:
            detail = f"appeal {appeal_id}: {outcome} by {body}; {said}"
            reg._event(cur, a.permit_number, Event(now, who, "appeal_decision", None, None, on, None, detail), **facts)
        else:
            detail = f"appeal {appeal_id}: {outcome} by {body}"
            reg._append(cur, HistoryEvent(str(a.case_id), "appeal_decided", now, who, on=on, why=detail, data=facts))
        if retract_case:
            enforcing._case_event(
                reg,
                cur,
                str(a.case_id),
                "retraction",
                on,
                who,
                now,
                detail=f"appeal {appeal_id} reversed",
                stream=str(a.case_id) if own else None,
            )
    return reg.appeals(appeal_id=appeal_id)[0]


def _check_decision(
    reg: Registry,
    appeal_id: str,
    body: str,
    outcome: str,
    on: date | None,
    findings: Sequence[str],
    approves: bool | None,
    approval: Approval,
    known: dict[str, AppealedKind],
) -> tuple[Appeal, list[str]]:
    """Return the undecided appeal and the variance findings named, once every problem is checked.

    Raises
    ------
    ValidationError
        With every problem at once (see :func:`decide_appeal`).
    """
    terms = appeal_terms(reg.profile.tables)
    variance = variance_terms(reg.profile.tables)
    found = reg.appeals(appeal_id=appeal_id)
    problems: list[str] = []
    if not found:
        problems.append("there is no such appeal.")
    elif found[0].decision is not None:
        problems.append(f"the appeal was already decided ({found[0].decision.decided_on}).")
    if body not in terms["bodies"]:
        problems.append(f"body {body!r} is not one the profile lists; use {', '.join(terms['bodies'])}.")
    if outcome not in terms["outcomes"]:
        problems.append(f"outcome {outcome!r} is not one the profile lists; use {', '.join(terms['outcomes'])}.")
    named = list(dict.fromkeys(f.strip() for f in findings if f.strip()))
    problems += _variance_problems(variance, body, outcome, named, known_body=body in terms["bodies"])
    kind = found[0].appealed_kind if found else None
    status = None
    if found and found[0].permit_number:
        status = reg.get(found[0].permit_number).status
    problems += _recorded_problems(approval, outcome, approves, known.get(kind or ""), status)
    if on is None:
        problems.append("the decision date is missing (on=YYYY-MM-DD).")
    filed = found[0].filed_on if found else None
    problems += date_problems([EffectiveDate("on=", on, filed, "the filing of the appeal")], reg.profile.today())
    if problems:
        raise ValidationError([Problem(appeal_id, None, m, "see `esc-gis permits appeals`.") for m in problems])
    return found[0], named


def _without_determination(reg: Registry, a: Appeal, outcome: str, undoes: str | None) -> dict[str, Any] | None:
    """Return the site's decision without its determination, where a reversal withdraws one (else None).

    Decided before the write (a GeoPackage cannot nest a read in it) by the one function.

    Raises
    ------
    ValidationError
        If the site can no longer be decided (the screening's reason).
    """
    if outcome != "reversed" or undoes != DETERMINATION or not a.permit_number:
        return None
    return reg.decide_permit(reg.get(a.permit_number), determination=False)


def _withdraw_determination(
    reg: Registry, cur: Any, p: Any, appeal_id: str, body: str, on: date, who: str, now: Any, d: dict[str, Any]
) -> str:
    """Withdraw a permit's § 540-4A(1)(c) determination reversed on appeal; return the effect's words.

    The permit's decision becomes the site's without it (``d``, from the one function).
    """
    fields = {"permit_decision": d["permit_decision"], "standards": d["standards"]}
    reasons = f"appeal {appeal_id} reversed by {body}: the determination of {p.state.determination['on']} is withdrawn"
    reg._event(
        cur,
        p.permit_number,
        Event(now, who, "determination_reversal", None, None, on, None, reasons),
        fields=fields,
        appeal_id=appeal_id,
    )
    return f"determination withdrawn; permit {d['permit_decision']}"


def _approve_on_appeal(
    reg: Registry,
    cur: Any,
    p: Any,
    appeal_id: str,
    body: str,
    outcome: str,
    on: date,
    who: str,
    now: Any,
    reading: str,
) -> str:
    """Approve and issue a disapproved permit on the board's decision; return the effect's words."""
    to = ON_APPEAL[p.status]
    # Issued the day of the board's decision: the period of validity runs from it (§ 540-8G).
    reg._event(
        cur,
        p.permit_number,
        Event(
            now,
            who,
            "appeal_approval",
            p.status,
            to,
            on,
            None,
            f"appeal {appeal_id} {outcome} by {body}: {reading}",
        ),
        appeal_id=appeal_id,
        body=body,
        outcome=outcome,
        permit_expires_on=reg._expiry(
            on, p.building_permit_expires, p.extensions_days, p.other_authorizations.values()
        ),
    )
    return f"permit {p.status} -> {to}"


def appeals(reg: Registry, *, appeal_id: str | None = None) -> list[Appeal]:
    """Return the appeals (all, or one), oldest first, with their decisions."""
    b = reg.backend
    where: str = f"WHERE a.appeal_id = {b.ph}" if appeal_id else ""
    params: tuple[str, ...] = (appeal_id,) if appeal_id else ()
    with b.read() as cur:
        cur.execute(
            "SELECT a.appeal_id, a.permit_number, a.case_id, a.appealed, a.appellant, a.appellant_kind, "
            "a.filed_on, a.grounds, a.recorded_by, a.appealed_kind, "
            "d.decided_on, d.body, d.outcome, d.conditions, d.effect, "
            f"d.recorded_by AS decided_by FROM appeals a LEFT JOIN appeal_decisions d ON d.appeal_id = a.appeal_id "
            f"{where} ORDER BY a.id",
            params,
        )
        found = list(rows(cur))
        # The findings a variance rests on live in the history alone (the decision's event).
        findings: dict[str, tuple[str, ...]] = {}
        recorded: dict[str, bool] = {}
        if b.can_read("history"):
            cur.execute("SELECT data FROM history WHERE kind = 'appeal_decided'")
            for (text,) in cur.fetchall():
                data = HistoryEvent.from_json_data(text)
                findings[str(data.get("appeal_id"))] = tuple(data.get("findings") or ())
                if data.get("approves") is not None:
                    recorded[str(data.get("appeal_id"))] = bool(data["approves"])
    return [
        Appeal(
            r["appeal_id"],
            r["permit_number"],
            r["case_id"],
            r["appealed"],
            r["appellant"],
            r["appellant_kind"],
            b.load("date", r["filed_on"]),
            r["grounds"],
            r["recorded_by"],
            None
            if r["decided_on"] is None
            else AppealDecision(
                b.load("date", r["decided_on"]),
                r["body"],
                r["outcome"],
                r["conditions"],
                r["effect"],
                r["decided_by"],
                findings.get(r["appeal_id"], ()),
                recorded.get(r["appeal_id"]),
            ),
            r["appealed_kind"],
        )
        for r in found
    ]


def _variance_problems(
    terms: VarianceTerms, body: str, outcome: str, named: list[str], *, known_body: bool
) -> list[str]:
    """Return what is wrong with a variance's body and findings (or with findings on another outcome)."""
    if outcome != "variance":
        return [f"findings go with a variance; the outcome is {outcome}."] if named else []
    out = []
    if known_body and body not in terms.bodies:
        out.append(f"the {body.replace('_', ' ')} cannot grant a variance: {terms.power}.")
    unknown = [f for f in named if f not in terms.findings]
    if unknown:
        out.append(
            f"finding(s) {', '.join(map(repr, unknown))} are not the profile's; use {', '.join(terms.findings)}."
        )
    missing = [(k, c) for k, c in terms.findings.items() if k not in named]
    if missing:
        out.append(
            "a variance rests on findings not recorded: "
            + "; ".join(f'"{c.text}" ({c.section}; basis {c.basis}; findings= key {k})' for k, c in missing)
            + "."
        )
    return out


def _recorded_problems(
    terms: Approval, outcome: str, approves: bool | None, kind: AppealedKind | None, status: str | None = None
) -> list[str]:
    """Return what is wrong with the office's record of what a modified decision or a variance does.

    Required with the recorded outcome (``modified``), and with the relieving one (``variance``) on the
    appeal of a disapproval while the permit (``status``) is still disapproved, where a variance from one
    provision may leave other reasons standing; refused with any other outcome; ``approves`` only on the
    appeal of a decision an approval undoes (a disapproval), where it has an effect.
    """
    chosen = terms.chosen()
    if outcome not in chosen:
        if approves is None:
            return []
        if not chosen:
            # A profile without [appeals.approval.recorded] has no outcome whose effect the office records.
            return ["approves= is for no outcome of the profile's appeals."]
        return [f"approves= is for a {' or '.join(chosen)} decision; the outcome is {outcome}."]
    on_disapproval = kind is not None and kind.undoes in ON_APPEAL
    if approves is None:
        if outcome == terms.relieved and not (on_disapproval and kind is not None and status == kind.undoes):
            return []  # a variance with nothing disapproved to approve carries no choice
        return [f"a {outcome} decision needs approves=True or approves=False: {chosen[outcome]}."]
    if approves and not on_disapproval:
        what = kind.name.replace("_", " ") if kind else "appeal recorded without a kind"
        return [
            f"approves=True goes with the appeal of a disapproval (a permit decision), not of a {what}: record "
            "approves=False, or reversed if the board set the order aside."
        ]
    return []
