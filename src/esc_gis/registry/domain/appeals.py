"""Appeals and variances: an appeal of an order, decision or determination, and its decision.

An appeal names what was appealed, who appealed (an aggrieved person or a Village body,
§ 540-13B), when, and on what grounds; it may concern a permit, an enforcement case, or
both. Its decision records the body that heard it, the outcome (upheld, reversed, or a
variance granted with conditions, § 540-13A) and the effect on the permit.

The ordinance names two bodies: § 540-13A the Zoning Board of Appeals, § 540-13B "appeals to
the Village Board". The registry does not choose: each decision records which body heard it.
The bodies, appellants and outcomes, with their sections, are the profile's (``[appeals]``).

A ``modified`` decision may approve a disapproval or leave it standing in part: the office
records which (``approves``; the profile's ``[appeals.approval.recorded]``), never a guess. So
does a variance on the appeal of a disapproval: it relieves the provisions it names, and the
permit is issued only when no reason for the disapproval is left standing
(``[appeals.approval.relieved]``).

A reversal of a stop-work order or a revocation sends the permit back to the state before
(as a retraction, § 540-12D), and a reversal of a suspension lifts it (reinstatement), in the
same transaction as the decision. A reversal of a § 540-4A(1)(c) determination (§ 540-13A(1):
"any order, decision or determination") withdraws it: the site is decided again without it.
Other outcomes leave the permit's state as it is.
"""

from __future__ import annotations

__all__ = [
    "DETERMINATION",
    "Appeal",
    "AppealDecision",
    "AppealedKind",
    "Approval",
    "Cited",
    "VarianceTerms",
    "appeal_terms",
    "appealed_kinds",
    "approval_terms",
    "approves_disapproval",
    "variance_terms",
]

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from esc_gis.errors import Problem, ProfileError, ValidationError
from esc_gis.registry.domain.lifecycle import BACK, ON_APPEAL

#: What the reversal of a § 540-4A(1)(c) determination undoes: the determination, not a state of the permit.
DETERMINATION = "determination"


@dataclass(frozen=True)
class AppealDecision:
    """The decision on an appeal."""

    decided_on: date
    body: str
    outcome: str
    conditions: str | None
    effect: str | None
    recorded_by: str
    #: The findings a variance rests on, by name (the profile's ``[appeals.variance.findings]``).
    findings: tuple[str, ...] = ()
    #: The office's record of what a modified decision does: True approves, False the decision stands.
    approves: bool | None = None


@dataclass(frozen=True)
class AppealedKind:
    """A kind of order or decision an appeal can be of (the profile's ``[appeals.appealed]``)."""

    name: str
    section: str
    #: The permit state a reversal undoes (``stop_work``, ``revoked``, ``suspended``, or
    #: ``disapproved``, which an approving decision turns into ``approved``), or
    #: :data:`DETERMINATION` (the permit's § 540-4A(1)(c) determination), if any.
    undoes: str | None = None
    #: Why the board does not hear it (``[appeals.not_heard]``), if it does not.
    not_heard: str | None = None


@dataclass(frozen=True)
class Appeal:
    """An appeal as filed, and its decision once made."""

    appeal_id: str
    permit_number: str | None
    case_id: str | None
    appealed: str
    appellant: str
    appellant_kind: str
    filed_on: date
    grounds: str
    recorded_by: str
    decision: AppealDecision | None = None
    #: The kind of order or decision appealed; None for appeals recorded before kinds were.
    appealed_kind: str | None = None


def appeal_terms(tables: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Return the profile's ``[appeals]``: bodies, appellants and outcomes, each name -> section.

    Raises
    ------
    ProfileError
        If a part is missing or empty.
    """
    raw = tables.get("appeals") or {}
    out: dict[str, dict[str, str]] = {}
    for part in ("bodies", "appellants", "outcomes"):
        entries = raw.get(part)
        if not isinstance(entries, dict) or not entries:
            msg = f"The profile has no [appeals.{part}] table (name = section) for appeals."
            raise ProfileError(msg)
        out[part] = {str(k): str(v) for k, v in entries.items()}
    return out


def appealed_kinds(tables: Mapping[str, Any]) -> dict[str, AppealedKind]:
    """Return the profile's kinds of appealed orders and decisions, heard or not.

    ``[appeals.appealed.<kind>]`` tables give ``section`` and, for an order whose reversal
    moves the permit back, ``undoes`` (the state it undoes); ``[appeals.not_heard]`` maps a
    kind the board does not hear to the section that says so (§ 540-13A(1) excepts
    cease-and-desist orders obtained in court under § 540-12C).

    Raises
    ------
    ProfileError
        If ``[appeals.appealed]`` is missing or empty, or a kind lacks its section.
    """
    raw = tables.get("appeals") or {}
    heard = raw.get("appealed")
    if not isinstance(heard, dict) or not heard:
        msg = "The profile has no [appeals.appealed] tables (kind = {section, undoes}) for appeals."
        raise ProfileError(msg)
    out: dict[str, AppealedKind] = {}
    for name, entry in heard.items():
        if not isinstance(entry, dict) or not str(entry.get("section") or "").strip():
            msg = f"The profile's [appeals.appealed.{name}] needs a section."
            raise ProfileError(msg)
        undoes = entry.get("undoes")
        if undoes and undoes not in BACK and undoes not in ON_APPEAL and undoes != DETERMINATION:
            # A typo here would quietly stop every reversal of this kind from moving the permit.
            msg = (
                f"The profile's [appeals.appealed.{name}] undoes {undoes!r}, not a state a reversal undoes "
                f"({', '.join([*BACK, *ON_APPEAL])}) nor {DETERMINATION!r}."
            )
            raise ProfileError(msg)
        out[str(name)] = AppealedKind(str(name), str(entry["section"]), str(undoes) if undoes else None)
    for name, section in (raw.get("not_heard") or {}).items():
        out[str(name)] = AppealedKind(str(name), str(section), None, not_heard=str(section))
    return out


@dataclass(frozen=True)
class Cited:
    """Words of the profile with their section and basis."""

    text: str
    section: str
    basis: str

    def __str__(self) -> str:
        return f"{self.text} ({self.section}; basis {self.basis})"


@dataclass(frozen=True)
class Approval:
    """The outcomes that turn a disapproval appealed into an approval (``[appeals.approval]``)."""

    outcomes: frozenset[str]
    cited: Cited
    #: The outcome whose effect the office records with each decision (``[appeals.approval.recorded]``):
    #: a board may "modify" a decision, which can approve or leave the disapproval standing in part.
    recorded: str | None = None
    #: The reading that says so, quoted when the choice is missing.
    recorded_cited: Cited | None = None
    #: The outcome that relieves provisions (``variance``, ``[appeals.approval.relieved]``): on the appeal
    #: of a disapproval the office records whether any reason is left standing.
    relieved: str | None = None
    #: The reading that says so, quoted when the choice is missing.
    relieved_cited: Cited | None = None

    def chosen(self) -> dict[str, Cited]:
        """Return the outcomes whose effect the office records, each with the reading that says so."""
        out: dict[str, Cited] = {}
        for outcome, cited in ((self.recorded, self.recorded_cited), (self.relieved, self.relieved_cited)):
            if outcome is not None and cited is not None:
                out[outcome] = cited
        return out


@dataclass(frozen=True)
class VarianceTerms:
    """Who may grant a variance, and the findings it rests on (``[appeals.variance]``)."""

    bodies: frozenset[str]
    power: Cited
    findings: dict[str, Cited]


def _cited(entry: Any, where: str) -> Cited:
    if not isinstance(entry, dict) or not all(str(entry.get(k) or "").strip() for k in ("text", "section", "basis")):
        msg = f"The profile's [{where}] needs a text, a section and a basis."
        raise ProfileError(msg)
    return Cited(str(entry["text"]), str(entry["section"]), str(entry["basis"]))


def approval_terms(tables: Mapping[str, Any]) -> Approval:
    """Return the profile's ``[appeals.approval]``: the outcomes that approve a disapproval appealed.

    Raises
    ------
    ProfileError
        If the table is missing, has no outcomes, or lacks its text, section or basis.
    """
    raw = (tables.get("appeals") or {}).get("approval") or {}
    cited = _cited(raw, "appeals.approval")
    outcomes = frozenset(str(o) for o in raw.get("outcomes") or ())
    if not outcomes:
        msg = "The profile's [appeals.approval] lists no outcomes."
        raise ProfileError(msg)
    chosen: dict[str, tuple[str | None, Cited | None]] = {}
    for part in ("recorded", "relieved"):
        rec = raw.get(part)
        if rec is None:
            chosen[part] = (None, None)
            continue
        words = _cited(rec, f"appeals.approval.{part}")
        outcome = str(rec.get("outcome") or "").strip()
        taken = {o for o, _ in chosen.values() if o}
        if not outcome or outcome in outcomes or outcome in taken:
            # An outcome both always approving and chosen case by case would make the choice meaningless.
            msg = (
                f"The profile's [appeals.approval.{part}] needs an outcome that is not one of [appeals.approval]'s"
                + (" nor [appeals.approval.recorded]'s." if part == "relieved" else ".")
            )
            raise ProfileError(msg)
        chosen[part] = (outcome, words)
    return Approval(outcomes, cited, *chosen["recorded"], *chosen["relieved"])


def approves_disapproval(terms: Approval, outcome: str, approved: bool | None) -> bool:
    """Return whether a decision with ``outcome`` approves a disapproval appealed.

    An outcome of ``terms.outcomes`` always does; the recorded outcome (``modified``: the board may
    "reverse or affirm, wholly or partly, or ... modify") and the relieving one (``variance``: "variances
    from the provisions of this article", which may leave other reasons for the disapproval standing) do
    when the office recorded that the decision approves (``approved``), and never on a guess.

    Raises
    ------
    ValidationError
        If a recorded or relieving outcome comes without the office's choice (the service checks it first).
    """
    if outcome in terms.outcomes:
        return True
    cited = terms.chosen().get(outcome)
    if cited is not None:
        if approved is None:
            msg = f"a {outcome} decision needs the office's record of whether it approves: {cited}."
            raise ValidationError([Problem("decision", None, msg, "record approves=True or approves=False.")])
        return approved
    return False


def variance_terms(tables: Mapping[str, Any]) -> VarianceTerms:
    """Return the profile's ``[appeals.variance]``: the bodies with the power, and the findings required.

    Raises
    ------
    ProfileError
        If the power or the findings are missing, or an entry lacks its text, section or basis.
    """
    raw = (tables.get("appeals") or {}).get("variance") or {}
    power = raw.get("power") or {}
    cited = _cited(power, "appeals.variance.power")
    bodies = frozenset(str(b) for b in power.get("bodies") or ())
    findings = raw.get("findings")
    if not bodies or not isinstance(findings, dict) or not findings:
        msg = "The profile's [appeals.variance] needs the power's bodies and the findings a variance rests on."
        raise ProfileError(msg)
    return VarianceTerms(
        bodies, cited, {str(k): _cited(v, f"appeals.variance.findings.{k}") for k, v in findings.items()}
    )
