"""Fees with their receipts, and financial guarantees with their draws and releases."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["add_guarantee", "fees", "guarantee_event", "guarantees", "record_fee"]

import os
from datetime import date

from esc_gis.errors import (
    RegistryError,
)
from esc_gis.registry.domain.fees import (
    APPLICATION_FEE,
    Fee,
    FeeSchedule,
    Guarantee,
    GuaranteeEvent,
    check_fee,
    check_guarantee,
    check_guarantee_event,
    load_fee_schedule,
)
from esc_gis.registry.domain.fees import problems as fee_problems
from esc_gis.registry.domain.records import Event
from esc_gis.registry.service._core import (
    _who,
)
from esc_gis.registry.store.backend import now_utc, rows

if TYPE_CHECKING:
    from esc_gis.registry.service.registry import Registry


def record_fee(
    reg: Registry,
    permit_number: str,
    *,
    kind: str,
    amount: float,
    paid_on: date | None,
    receipt: str,
    schedule: FeeSchedule | str | os.PathLike[str] | None = None,
    who: str | None = None,
) -> Fee:
    """Record a fee paid (§ 540-8B), with its receipt, and a history event, in one transaction.

    With a schedule (the office's fee schedule, established by the Village Board and modified
    by resolution, § 540-10: ``schedule``, or
    the one the layer set names, ``[fees]``) the kind must be one it lists and the amount the
    one it sets. An application fee completes the application, and § 540-8B has it paid
    "according to the Fee Schedule": without a schedule to check it against it is refused
    (finding ``application_fee_no_schedule``, basis ``policy``), whatever the amount. A fee
    paid before the schedule's adoption is refused too (finding ``fee_schedule_not_in_force``,
    basis ``policy``): that schedule was not yet in force on the day paid.

    Parameters
    ----------
    reg : Registry
        The registry (bound as :meth:`Registry.record_fee`, so not passed there).
    permit_number : str
        The permit the fee is paid for, e.g. ``"ESC-2026-0001"``.
    kind : str
        The fee's kind in the schedule, e.g. ``"application"``.
    amount : float
        The amount paid, in dollars.
    paid_on : date
        The day it was paid, on the Village's clock; not after today.
    receipt : str
        The receipt's number; one fee per receipt.
    schedule : FeeSchedule, path or str, optional
        The fee schedule (a :class:`~esc_gis.registry.domain.fees.FeeSchedule`, or the TOML file
        :func:`~esc_gis.registry.domain.fees.load_fee_schedule` reads); default the one the layer
        set names.
    who : str, optional
        Who records it, for the history; default the login name.

    Returns
    -------
    Fee
        The fee as recorded.

    Raises
    ------
    PermitNotFoundError
    ValidationError
        With every problem at once (no date, a date in the future, no receipt, a receipt
        already recorded, a kind or amount the schedule does not set, an application fee
        without a schedule, a fee paid before the schedule's adoption); nothing is written then.
    ProfileError
        If the schedule given or the one the layer set names is missing or not usable.
    """
    who = _who(who)
    reg.get(permit_number)
    if isinstance(schedule, (str, os.PathLike)):
        schedule = load_fee_schedule(os.fspath(schedule))
    if schedule is None:
        schedule = reg.fee_schedule
    messages = check_fee(kind, amount, paid_on, receipt, schedule, today=reg.profile.today())
    if schedule is None and kind.strip() == APPLICATION_FEE:
        f = reg.profile.finding("application_fee_no_schedule", amount=f"{amount:,.2f}")
        messages.append(f"{f.message} ({f.section}; basis {f.basis}).")
    if schedule is not None and paid_on is not None and kind.strip() and paid_on < schedule.adopted_on:
        # A resolution modifies the fees from its adoption (§ 540-10): before it, another schedule was in force.
        f = reg.profile.finding(
            "fee_schedule_not_in_force",
            kind=kind.strip(),
            paid_on=paid_on,
            resolution=schedule.resolution,
            adopted_on=schedule.adopted_on,
        )
        messages.append(f"{f.message} ({f.section}; basis {f.basis}).")
    if receipt.strip() and any(f.receipt == receipt.strip() for f in reg.fees()):
        messages.append(f"receipt {receipt!r} is already recorded.")
    if messages:
        raise fee_problems(permit_number, messages, "correct the fee and record it again (`permits fee`).")
    assert paid_on is not None
    b = reg.backend
    now = now_utc()
    resolution = f"{schedule.resolution} ({schedule.adopted_on})" if schedule else None
    with b.write() as cur:
        reg._locked(cur, permit_number)
        (fee_id,) = b.next_ids(cur, "fees")
        detail = f"{kind} fee {amount:,.2f}, receipt {receipt.strip()}" + (
            f"; schedule {resolution}" if resolution else ""
        )
        reg._event(
            cur,
            permit_number,
            Event(now, who, "fee", None, None, paid_on, None, detail),
            fee_id=fee_id,
            fee_kind=kind,
            amount=float(amount),
            receipt=receipt.strip(),
            schedule_resolution=resolution,
        )
    return next(f for f in reg.fees(permit_number) if f.receipt == receipt.strip())


def fees(reg: Registry, permit_number: str | None = None) -> list[Fee]:
    """Return the fees recorded (all, or a permit's), oldest first."""
    b = reg.backend
    where, params = (f"WHERE permit_number = {b.ph}", (permit_number,)) if permit_number else ("", ())
    with b.read() as cur:
        cur.execute(
            "SELECT id, permit_number, kind, amount, paid_on, receipt, schedule_resolution, recorded_by, "
            f"recorded_at FROM fees {where} ORDER BY id",
            params,
        )
        return [
            Fee(
                int(r["id"]),
                r["permit_number"],
                r["kind"],
                float(r["amount"]),
                b.load("date", r["paid_on"]),
                r["receipt"],
                r["schedule_resolution"],
                r["recorded_by"],
                b.load("datetime", r["recorded_at"]),
            )
            for r in rows(cur)
        ]


def add_guarantee(
    reg: Registry,
    permit_number: str,
    *,
    type: str,
    amount: float,
    received_on: date | None,
    expires_on: date | None = None,
    who: str | None = None,
) -> Guarantee:
    """Record a financial guarantee received (§ 540-8D) and a history event, in one transaction.

    Raises
    ------
    PermitNotFoundError
    ValidationError
        With every problem at once (unknown type, amount not above 0, a letter of credit
        without an expiry or another type with one); nothing is written then.
    """
    who = _who(who)
    reg.get(permit_number)
    messages = check_guarantee(type, amount, received_on, expires_on, today=reg.profile.today())
    if messages:
        raise fee_problems(permit_number, messages, "correct the guarantee and record it again.")
    assert received_on is not None
    b = reg.backend
    now = now_utc()
    with b.write() as cur:
        reg._locked(cur, permit_number)
        (guarantee_id,) = b.next_ids(cur, "guarantees")
        until = f", expires {expires_on}" if expires_on else ""
        detail = f"guarantee received: {type.replace('_', ' ')} {amount:,.2f}{until}"
        reg._event(
            cur,
            permit_number,
            Event(now, who, "guarantee", None, None, received_on, None, detail),
            guarantee_id=guarantee_id,
            type=type,
            amount=float(amount),
            expires_on=expires_on,
        )
    return reg.guarantees(permit_number)[-1]


def guarantee_event(
    reg: Registry,
    guarantee_id: int,
    kind: str,
    *,
    on: date | None,
    amount: float | None = None,
    reason: str | None = None,
    stage: str | None = None,
    engineer: str | None = None,
    who: str | None = None,
    notice_on: date | None = None,
) -> Guarantee:
    """Record a draw, a partial prorated release or the final release of a guarantee (§ 540-8D(1)).

    A draw needs ``notice_on``, the day of the office's written notice of improper
    implementation (§ 540-8D). The final release pays out what is held: the amount less
    every draw, release and cost of the office recovered from it (§ 540-8D(1), § 540-12E).

    The final release releases what is left; it needs the licensed engineer whose
    as-built plans were submitted. A history event goes with it in the same transaction.

    Raises
    ------
    RegistryError
        If there is no such guarantee.
    ValidationError
        With every problem at once; nothing is written then.
    """
    who = _who(who)
    found = [g for g in reg.guarantees() if g.id == guarantee_id]
    if not found:
        msg = f"There is no guarantee #{guarantee_id} in the registry; see `esc-gis permits guarantees`."
        raise RegistryError(msg)
    g = found[0]
    messages = check_guarantee_event(
        g,
        kind,
        on,
        amount=amount,
        reason=reason,
        stage=stage,
        engineer=engineer,
        today=reg.profile.today(),
        notice_on=notice_on,
    )
    if messages:
        raise fee_problems(f"guarantee #{guarantee_id}", messages, "see `esc-gis permits guarantees`.")
    assert on is not None
    if kind == "final_release":
        amount = g.balance
    b = reg.backend
    now = now_utc()
    with b.write() as cur:
        reg._locked(cur, g.permit_number)
        (event_id,) = b.next_ids(cur, "guarantee_events")
        why = {
            "draw": f"for {reason} (written notice {notice_on})",
            "release": f"stage {stage}",
            "final_release": f"as-built plans by {engineer}",
        }
        detail = f"guarantee #{guarantee_id} {kind.replace('_', ' ')} {amount or 0:,.2f}: {why[kind]}"
        reg._event(
            cur,
            g.permit_number,
            Event(now, who, f"guarantee_{kind}", None, None, on, None, detail),
            guarantee_id=guarantee_id,
            amount=amount,
            notice_on=notice_on,
            event_id=event_id,
            reason=reason,
            stage=stage,
            engineer=engineer,
        )
    return next(x for x in reg.guarantees() if x.id == guarantee_id)


def guarantees(reg: Registry, permit_number: str | None = None) -> list[Guarantee]:
    """Return the guarantees (all, or a permit's), oldest first, with their events."""
    b = reg.backend
    where, params = (f"WHERE permit_number = {b.ph}", (permit_number,)) if permit_number else ("", ())
    with b.read() as cur:
        cur.execute(
            "SELECT id, guarantee_id, kind, on_date, amount, reason, stage, engineer, recorded_by, recorded_at "
            "FROM guarantee_events ORDER BY id"
        )
        events: dict[int, list[GuaranteeEvent]] = {}
        for r in rows(cur):
            events.setdefault(int(r["guarantee_id"]), []).append(
                GuaranteeEvent(
                    int(r["id"]),
                    r["kind"],
                    b.load("date", r["on_date"]),
                    None if r["amount"] is None else float(r["amount"]),
                    r["reason"],
                    r["stage"],
                    r["engineer"],
                    r["recorded_by"],
                    b.load("datetime", r["recorded_at"]),
                )
            )
        cur.execute(
            "SELECT id, permit_number, type, amount, received_on, expires_on, recorded_by, recorded_at "
            f"FROM guarantees {where} ORDER BY id",
            params,
        )
        return [
            Guarantee(
                int(r["id"]),
                r["permit_number"],
                r["type"],
                float(r["amount"]),
                b.load("date", r["received_on"]),
                b.load("date", r["expires_on"]),
                r["recorded_by"],
                b.load("datetime", r["recorded_at"]),
                tuple(events.get(int(r["id"]), ())),
            )
            for r in rows(cur)
        ]
