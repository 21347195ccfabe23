"""Fees paid (§ 540-8B, § 540-10) and financial guarantees with their draws and releases (§ 540-8D).

The fees are "established by the Village Board and may from time to time be modified by
resolution", their schedule available in the Village Hall (§ 540-10), so it is data: a TOML
file the office fills in (:func:`load_fee_schedule`), with the resolution that set it and its
date. The toolkit ships no amounts; the example file
under ``examples/`` is made up and says so.

A guarantee is a surety bond, cash escrow or irrevocable letter of credit, with its amount,
the day it was received and, for a letter of credit, its expiry (a deadline in ``permits
due``). Its events are a draw for work the office performed (amount, reason), a partial
prorated release by development stage (amount, stage), and the final release of what is
left on as-built plans by a licensed professional engineer (§ 540-8D(1)). What is held is
replayed from the events, never stored as an edited number.

Fees and guarantees are private: never on the public map or in a public export.
"""

from __future__ import annotations

__all__ = [
    "APPLICATION_FEE",
    "GUARANTEE_EVENTS",
    "GUARANTEE_TYPES",
    "Fee",
    "FeeSchedule",
    "Guarantee",
    "GuaranteeEvent",
    "check_guarantee_event",
    "load_fee_schedule",
]

from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import tomllib

from esc_gis._outputs import spreadsheet_text
from esc_gis.config._fee_kinds import APPLICATION_FEE
from esc_gis.errors import Problem, ProfileError, ValidationError
from esc_gis.registry.domain.dates import EffectiveDate, date_problems

#: The three forms of guarantee § 540-8D names.
GUARANTEE_TYPES = ("surety_bond", "cash_escrow", "letter_of_credit")
#: A guarantee's events: a draw for the office's work, a partial prorated release, the final release.
GUARANTEE_EVENTS = ("draw", "release", "final_release")


@dataclass(frozen=True)
class FeeSchedule:
    """The fee schedule set by resolution: kind -> amount in dollars."""

    resolution: str
    adopted_on: date
    amounts: dict[str, float]
    path: Path


def load_fee_schedule(path: str | Path) -> FeeSchedule:
    """Read the office's fee schedule (TOML: ``[schedule]`` resolution and date, ``[fees]`` amounts).

    Raises
    ------
    ProfileError
        If the file is missing or unreadable, or lacks the resolution, its date, or the
        application fee, or an amount is not a number of zero or more; every problem at once.
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        msg = f"Cannot read the fee schedule {p}: {exc}. Give the TOML file the office keeps (see examples/)."
        raise ProfileError(msg) from exc
    # The schedule's model (pydantic) loads with the first schedule read, not with the registry.
    from esc_gis.config.fees import fee_problems

    schedule, problems = fee_problems(data)
    if schedule is None:
        msg = f"The fee schedule {p} is not usable: " + " ".join(problems)
        raise ProfileError(msg)
    amounts = {kind: float(amount) for kind, amount in schedule.fees.model_dump().items()}
    # In the file's order, as the office wrote it.
    amounts = {kind: amounts[kind] for kind in data["fees"]}
    return FeeSchedule(schedule.schedule.resolution, schedule.schedule.adopted_on, amounts, p)


@dataclass(frozen=True)
class Fee:
    """A fee paid, as recorded."""

    id: int
    permit_number: str
    kind: str
    amount: float
    paid_on: date
    receipt: str
    schedule_resolution: str | None
    recorded_by: str
    recorded_at: datetime


@dataclass(frozen=True)
class GuaranteeEvent:
    """A draw, a partial release or the final release of a guarantee."""

    id: int
    kind: str
    on_date: date
    amount: float | None
    reason: str | None
    stage: str | None
    engineer: str | None
    recorded_by: str
    recorded_at: datetime


@dataclass(frozen=True)
class Guarantee:
    """A financial guarantee and its events (oldest first)."""

    id: int
    permit_number: str
    type: str
    amount: float
    received_on: date
    expires_on: date | None
    recorded_by: str
    recorded_at: datetime
    events: tuple[GuaranteeEvent, ...] = field(default_factory=tuple)

    @property
    def balance(self) -> float:
        """What is still held: the amount less draws and releases; 0 after the final release."""
        if any(e.kind == "final_release" for e in self.events):
            return 0.0
        return round(self.amount - sum(e.amount or 0.0 for e in self.events), 2)


def check_fee(
    kind: str,
    amount: float,
    paid_on: date | None,
    receipt: str,
    schedule: FeeSchedule | None,
    *,
    today: date | None = None,
) -> list[str]:
    """Return what is wrong with a fee to record (empty if nothing); pure."""
    out = []
    if not kind.strip():
        out.append('the fee has no kind (kind="application", for one).')
    if amount < 0:
        out.append(f"the amount {amount} is negative.")
    if paid_on is None:
        out.append("the fee has no date paid (paid_on=YYYY-MM-DD).")
    else:
        out += date_problems([EffectiveDate("paid_on=", paid_on)], today or date.today())
    if not receipt.strip():
        out.append("the fee has no receipt number (receipt=).")
    if schedule is not None and kind.strip():
        if kind not in schedule.amounts:
            out.append(
                f"{kind!r} is not a fee in {schedule.resolution}'s schedule ({', '.join(sorted(schedule.amounts))})."
            )
        elif abs(schedule.amounts[kind] - amount) > 0.005:
            out.append(
                f"the amount {amount:,.2f} is not the {kind} fee of {schedule.amounts[kind]:,.2f} "
                f"set by {schedule.resolution} ({schedule.adopted_on})."
            )
    return out


def check_guarantee(
    type_: str, amount: float, received_on: date | None, expires_on: date | None, *, today: date | None = None
) -> list[str]:
    """Return what is wrong with a guarantee to record (empty if nothing); pure."""
    out = []
    if type_ not in GUARANTEE_TYPES:
        out.append(f"type {type_!r} is not one of {', '.join(GUARANTEE_TYPES)}.")
    if amount <= 0:
        out.append(f"the amount {amount} is not more than 0.")
    if received_on is None:
        out.append("the guarantee has no date received (received_on=).")
    else:
        # Not expires_on: a letter of credit's expiry is a day still to come.
        out += date_problems([EffectiveDate("received_on=", received_on)], today or date.today())
    if type_ == "letter_of_credit" and expires_on is None:
        out.append("a letter of credit needs its expiry date (expires_on=).")
    if type_ != "letter_of_credit" and expires_on is not None:
        out.append("only a letter of credit has an expiry date; leave out expires_on=.")
    if expires_on is not None and received_on is not None and expires_on <= received_on:
        out.append(f"the expiry {expires_on} is not after the date received {received_on}.")
    return out


def check_guarantee_event(
    g: Guarantee,
    kind: str,
    on: date | None,
    *,
    amount: float | None = None,
    reason: str | None = None,
    stage: str | None = None,
    engineer: str | None = None,
    today: date | None = None,
    notice_on: date | None = None,
) -> list[str]:
    """Return what is wrong with a draw, release or final release of ``g`` (empty if nothing); pure.

    A draw rests on the office's written notice that the plan was not properly implemented
    (§ 540-8D: "Improper implementation of the plan shall be upon written notice"): its day
    must be given and come no later than the draw.
    """
    out = []
    if kind not in GUARANTEE_EVENTS:
        return [f"{kind!r} is not one of {', '.join(GUARANTEE_EVENTS)}."]
    if g.balance <= 0:
        out.append(f"guarantee #{g.id} is released in full; nothing is left to draw or release.")
    if on is None:
        out.append("the event has no date (on=).")
    else:
        out += date_problems(
            [EffectiveDate("on=", on, g.received_on, "the day the guarantee was received")], today or date.today()
        )
    if kind in ("draw", "release"):
        if amount is None or amount <= 0:
            out.append(f"a {kind} needs an amount more than 0.")
        elif amount > g.balance + 0.005:
            out.append(f"the {kind} of {amount:,.2f} is more than the {g.balance:,.2f} still held.")
    if kind == "draw" and not (reason or "").strip():
        out.append("a draw needs the reason: the work the office performed (reason=).")
    if kind == "draw" and notice_on is None:
        out.append(
            "a draw needs the day of the office's written notice that the plan was not properly implemented "
            "(notice_on=YYYY-MM-DD)."
        )
    elif kind == "draw" and on is not None and notice_on is not None and notice_on > on:
        out.append(f"the written notice of {notice_on} comes after the draw of {on}; a draw follows the notice.")
    if kind == "release" and not (stage or "").strip():
        out.append("a partial release needs the development stage completed (stage=).")
    if kind == "final_release" and not (engineer or "").strip():
        out.append("the final release needs the licensed professional engineer of the as-built plans (engineer=).")
    return out


def problems(src: str, messages: list[str], fix: str) -> ValidationError:
    """Wrap messages into one :class:`ValidationError` naming ``src`` and the fix."""
    return ValidationError([Problem(src, None, m, fix) for m in messages])


def write_receipts(fees: list[Fee], path: str | Path, *, overwrite: bool = False) -> Path:
    """Write fee receipts to a CSV readable by its owner only (mode 0600): they are private.

    Raises
    ------
    OutputExistsError
        If ``path`` exists and ``overwrite`` is false.
    OutputFormatError
        If ``path`` does not end in ``.csv``.
    """
    import csv

    from esc_gis._csvt import csv_table_output, row_types, write_csvt
    from esc_gis._outputs import check_output_file

    p = check_output_file(path, suffixes=(".csv",), kind="receipts are written as CSV", overwrite=overwrite)
    cols = (
        "permit_number",
        "kind",
        "amount",
        "paid_on",
        "receipt",
        "schedule_resolution",
        "recorded_by",
        "recorded_at",
    )
    # Private (mode 0600, even while written), and whole or not at all.
    with csv_table_output(p, private=True) as tmp:
        with tmp.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(cols)
            for f in fees:
                w.writerow([f"{f.amount:.2f}" if c == "amount" else spreadsheet_text(getattr(f, c)) for c in cols])
        write_csvt(tmp, row_types(len(cols), ([getattr(f, c) for c in cols] for f in fees)))
    return p
