"""Moves: a permit through its life cycle, its extensions and its updates.

Transitions, retractions, reinstatements, extensions and field and date updates each append
their history event in the same transaction.
"""

from __future__ import annotations

__all__ = ["decision_due", "extend", "reinstate", "retract", "transition", "update"]

from collections.abc import Sequence
from datetime import date, datetime, time, timezone
from typing import TYPE_CHECKING, Any

from esc_gis.errors import (
    IllegalTransitionError,
    Problem,
    ValidationError,
)
from esc_gis.registry.domain import deadlines
from esc_gis.registry.domain.dates import EffectiveDate
from esc_gis.registry.domain.deadlines import deemed_approved_by
from esc_gis.registry.domain.events import move_kind
from esc_gis.registry.domain.fees import (
    APPLICATION_FEE,
)
from esc_gis.registry.domain.lifecycle import (
    EXTENDABLE,
    check_back,
    check_notified,
    check_off_order,
    check_transition,
    notification_table,
)
from esc_gis.registry.domain.records import OTHER_AUTHORIZATIONS, Event, Permit
from esc_gis.registry.service._core import (
    UPDATABLE,
    _who,
)
from esc_gis.registry.store.backend import now_utc

if TYPE_CHECKING:
    from esc_gis.registry.service.registry import Registry


def transition(
    reg: Registry,
    permit_number: str,
    to: str,
    *,
    who: str | None = None,
    on: date | datetime | None = None,
    reasons: str | None = None,
    notified_on: date | None = None,
    conditions: Sequence[str] = (),
) -> Permit:
    """Move a permit to a new state, recording the dates the ordinance counts from.

    Parameters
    ----------
    reg : Registry
        The registry (bound as :meth:`Registry.transition`, so not passed there).
    permit_number : str
    to : str
        One of :data:`~esc_gis.registry.domain.lifecycle.STATES` allowed from the current one.
    who : str, optional
        Default: the login name.
    on : date or datetime, optional
        When it happened; default now. For ``active``, the time land disturbance began.
    reasons : str, optional
        Written reasons (the written notification); required for the moves the profile's
        ``[lifecycle.written_reasons]`` names: disapproval (§ 540-8C(3)), stop-work,
        suspension and revocation (§ 540-8E, § 540-12).
    notified_on : date, optional
        The day of the written notification a move must follow: a suspension or revocation
        comes "following written notification of the responsible party" (§ 540-8E; the
        profile's ``[lifecycle.written_notification]``). On or before the move's day.
    conditions : sequence of str, optional
        Conditions the administering authority sets with an approval (§ 540-8F), recorded on
        the decision's event; only with ``approved``. Later ones: :meth:`Registry.add_condition`.

    Returns
    -------
    Permit
        The permit as it is after the move.

    Notes
    -----
    A deemed approval (§ 540-8C(5)) is recorded on any day after the decision was due,
    and dated the day the 20 business days ran out (the decision-due day): that is when
    the applicant could proceed, whenever staff write it down. The day it was recorded
    goes into the history.

    Raises
    ------
    PermitNotFoundError
    IllegalTransitionError
        If the life cycle does not allow it, reasons or the written notification's day are
        missing, or a deemed approval is claimed before the 20 business days have passed.
    ValidationError
        If ``on`` is before the permit's earlier dates.
    """
    who = _who(who)
    # A time without a zone is the office's local time, as typed; its day is the office's.
    at = reg.profile.local(on).astimezone(timezone.utc) if isinstance(on, datetime) else None
    day = reg.profile.day_of(on) if on is not None else reg.profile.today()
    reg._check_dates(permit_number, EffectiveDate("on=", day), EffectiveDate("notified_on=", notified_on))
    said = [c.strip() for c in conditions]
    if said and (to != "approved" or not all(said)):
        # Conditions are the office's, set with the approval it gives (a deemed approval gives none).
        why = "an empty condition" if to == "approved" else f"conditions go with an approval, not with {to}"
        raise ValidationError(
            [Problem(permit_number, None, f"{why}.", "give the conditions (conditions=) with approved only.")]
        )
    with reg.backend.write() as cur:
        p = reg._locked(cur, permit_number)
        if p.status == "incomplete" and to == "deemed_approved":
            # § 540-8C(4): the clock restarts only "from the date the additional information is
            # received"; the profile's reading says so, and how the office ends the application.
            f = reg.profile.finding("information_unanswered", requested=p.information_requested_on)
            raise IllegalTransitionError(f"Permit {permit_number} {f.message} ({f.section}; basis {f.basis})")
        check_transition(p.status, to, reasons=reasons, needs=reg.written_reasons)
        check_notified(to, day, notified_on, notification_table(reg.profile.tables))
        _check_plain_move(reg, p, to, reasons)
        reg._check_order(p, day, to)
        if to == "under_review" and p.status in ("application_received", "incomplete"):
            _check_fee_paid(reg, cur, permit_number)
        _check_period_not_run_out(reg, p, to, day)
        changes, detail, day = _move_changes(reg, p, to, day, at, reasons)
        reg._event(
            cur,
            permit_number,
            Event(now_utc(), who, "transition", p.status, to, day, None, detail),
            when=changes.get("started_at"),
            **({"notified_on": notified_on.isoformat()} if notified_on is not None else {}),
            **({"permit_expires_on": changes["expires_on"]} if "expires_on" in changes else {}),
            **({"conditions": said} if said else {}),
        )
    return reg.get(permit_number)


def _check_period_not_run_out(reg: Registry, p: Permit, to: str, day: date) -> None:
    """Refuse a request for information, a disapproval or a closing once the § 540-8C period ran out.

    Raises
    ------
    IllegalTransitionError
        If ``day`` is after the decision was due.
    """
    if to in ("incomplete", "disapproved") and p.state.decision_clock is not None:
        # § 540-8C(5): after the period the submittal is deemed approved; neither a late
        # request for information nor a late disapproval takes that back.
        due = reg.decision_due(p).due
        if day > due:
            f = reg.profile.finding("decision_period_ran_out", move=to, day=day, due=due)
            raise IllegalTransitionError(f"Permit {p.permit_number} {f.message} ({f.section})")
    if to == "closed" and p.status in ("application_received", "under_review"):
        # Closing undecided is no way round § 540-8C(5) either: once the period ran out the
        # application stands approved, and "the applicant may proceed as if a permit had been
        # issued" (an incomplete one's clock is stopped, so it may still be closed).
        deemed = deemed_approved_by(p.status, p.state, day, reg.calendar, reg.profile)
        if deemed is not None:
            f = reg.profile.finding("decision_period_ran_out", move=to, day=day, due=deemed)
            raise IllegalTransitionError(f"Permit {p.permit_number} {f.message} ({f.section})")


def _move_changes(
    reg: Registry, p: Permit, to: str, day: date, at: datetime | None, reasons: str | None
) -> tuple[dict[str, Any], str | None, date]:
    """Return the move's changed facts, its event's detail and its day.

    A deemed approval's day is the day the period ran out, the day it is written down in the detail.

    Raises
    ------
    IllegalTransitionError
        A deemed approval without a running clock, or claimed before the period ran out.
    """
    changes: dict[str, Any] = {"status": to}
    detail = reasons
    if to == "incomplete":
        changes["information_requested_on"] = day
    elif to == "under_review" and p.status == "incomplete":
        changes["information_received_on"] = day
    elif to in ("approved", "deemed_approved", "disapproved"):
        if to == "deemed_approved":
            if p.state.decision_clock is None:
                f = reg.profile.finding("deemed_approval_not_complete", fee=APPLICATION_FEE)
                raise IllegalTransitionError(f"Permit {p.permit_number} {f.message} ({f.section})")
            due = reg.decision_due(p).due
            if day <= due:
                f = reg.profile.finding("deemed_approval_too_early", day=day, due=due)
                raise IllegalTransitionError(f"Permit {p.permit_number} {f.message} ({f.section})")
            # Dated the day the period ran out, not the day it is written down.
            detail = "; ".join(x for x in (f"recorded on {day}", reasons) if x)
            day = due
        changes["decided_on"] = day
        if to != "disapproved":
            changes["issued_on"] = day
            changes["expires_on"] = reg._expiry(
                day, p.building_permit_expires, p.extensions_days, p.other_authorizations.values()
            )
    elif to == "active" and p.status in ("approved", "deemed_approved"):
        # A day alone: work began that day on the office's clock (its midnight), so the
        # day counted from it is that day, not the one before in UTC-6.
        changes["started_at"] = at or reg.profile.local(datetime.combine(day, time(0)))
    elif to == "final_stabilization":
        changes["final_on"] = day
    return changes, detail, day


def _check_plain_move(reg: Registry, p: Permit, to: str, reasons: str | None) -> None:
    """Refuse a plain move that is another command's: an extension, or a retraction without its reasons."""
    if to == "extended":
        # § 540-8G: "may extend the period one or more times for up to an additional 180
        # days": an extension has its days, so extend() records it, never a bare move.
        msg = (
            f"Permit {p.permit_number}: an extension needs its days; record it with "
            f"esc-gis permits extend REGISTRY {p.permit_number} DAYS."
        )
        raise IllegalTransitionError(msg)
    check_off_order(p.status, to, p.previous_status)
    needs = reg.written_reasons
    if move_kind(p.status, to) == "retracted" and "retraction" in needs and not (reasons or "").strip():
        # Lifting a stop-work order by a plain move is its retraction (§ 540-12D "may retract
        # the stop-work order"): it needs the reasons retract() needs, whichever route is taken.
        msg = (
            f"Permit {p.permit_number}: lifting the stop-work order is its retraction, which needs written "
            f"reasons ({needs['retraction']}); give reasons=."
        )
        raise IllegalTransitionError(msg)


def _check_fee_paid(reg: Registry, cur: Any, permit_number: str) -> None:
    # An application is complete only with its fee (§ 540-8B; the 20 business days of
    # § 540-8C(1) count from a complete application), so review waits for the fee.
    b = reg.backend
    cur.execute(f"SELECT 1 FROM fees WHERE permit_number = {b.ph} AND kind = {b.ph}", (permit_number, APPLICATION_FEE))
    if cur.fetchone() is None:
        msg = (
            f"Permit {permit_number}: the application is not complete without its {APPLICATION_FEE} fee, so it "
            f'cannot go under review. Record the fee first: kind="{APPLICATION_FEE}" amount=N paid_on=YYYY-MM-DD '
            "receipt=R (`esc-gis permits fee`; Registry.record_fee)."
        )
        raise IllegalTransitionError(msg)


def retract(
    reg: Registry, permit_number: str, *, reasons: str | None, who: str | None = None, on: date | None = None
) -> Permit:
    """Retract a stop-work order or a revocation: back to the state before it (§ 540-12D).

    Raises
    ------
    PermitNotFoundError
    IllegalTransitionError
        If the permit is not under a stop-work order or revoked, its history shows no
        state before, or the written reasons are missing.
    ValidationError
        If ``on`` is before the permit's earlier dates.
    """
    return _back(reg, permit_number, "retraction", reasons=reasons, who=who, on=on)


def reinstate(
    reg: Registry, permit_number: str, *, reasons: str | None, who: str | None = None, on: date | None = None
) -> Permit:
    """Lift a suspension: back to the state before it (§ 540-8E).

    Raises
    ------
    PermitNotFoundError
    IllegalTransitionError
        If the permit is not suspended, its history shows no state before, or the
        written reasons are missing.
    ValidationError
        If ``on`` is before the permit's earlier dates.
    """
    return _back(reg, permit_number, "reinstatement", reasons=reasons, who=who, on=on)


def _back(
    reg: Registry, permit_number: str, move: str, *, reasons: str | None, who: str | None, on: date | None
) -> Permit:
    """Undo the last stop-work order, suspension or revocation, as recorded in the history.

    The state to go back to is replayed from the append-only events inside the write
    transaction (the row is locked), so it is the same on every back end and no writer
    can slip a change in between.
    """
    who = _who(who)
    day = on or reg.profile.today()
    reg._check_dates(permit_number, EffectiveDate("on=", day))
    with reg.backend.write() as cur:
        p = reg._locked(cur, permit_number)
        before = check_back(p.status, move, p.previous_status, reasons=reasons, needs=reg.written_reasons)
        reg._check_order(p, day, before)
        reg._event(cur, permit_number, Event(now_utc(), who, move, p.status, before, day, None, reasons))
    return reg.get(permit_number)


def decision_due(reg: Registry, p: Permit) -> Any:
    """When the decision on ``p`` is due (§ 540-8C(1), (4)), from the day its history made it complete.

    Raises
    ------
    IllegalTransitionError
        If the clock is not running (no complete application: the fee is missing).
    """
    clock = p.state.decision_clock
    if clock is None:
        msg = f"Permit {p.permit_number}: no decision is due; the application is not complete."
        raise IllegalTransitionError(msg)
    after = p.state.information_received_on is not None
    return deadlines.decision_due(clock.start, reg.calendar, reg.profile, after_information=after)


def extend(
    reg: Registry,
    permit_number: str,
    days: int,
    *,
    who: str | None = None,
    on: date | None = None,
    reasons: str | None = None,
    conditions: Sequence[str] = (),
    authorizations: Sequence[str] = (),
) -> Permit:
    """Extend an issued permit's period by up to 180 days (§ 540-8G); any number of times.

    § 540-8G: "The administering authority may extend the period one or more times": the
    period of an issued permit, whether work has started or not, and under a stop-work
    order. An active or extended permit becomes ``extended``; an approved one whose work
    has not started, or one under a stop-work order, keeps its state (the order stands).
    The period counts from issuance either way, so the extension adds its days to the
    expiry date.

    Parameters
    ----------
    reg : Registry
        The registry (bound as :meth:`Registry.extend`, so not passed there).
    permit_number : str
    days : int
        The days added to the period, 1 to the profile's limit (180).
    who : str, optional
        Who records it, for the history; default the login name.
    on : date, optional
        The day the extension is granted; default today on the Village's clock.
    reasons : str, optional
        Why it is granted, for the history.
    conditions : sequence of str
        Additional BMPs required as a condition of the extension (§ 540-8G "may require
        additional BMPs as a condition of the extension").
    authorizations : sequence of str
        The "other construction authorizations" the extension rests on (§ 540-8G).

    Returns
    -------
    Permit
        The permit with its new expiry date (``expires_on``) and ``extensions_days``.

    Raises
    ------
    PermitNotFoundError
    IllegalTransitionError
        If the permit is not issued or is in a state whose period cannot be extended, or
        its period ended before ``on`` (a reading, ``extension_after_expiry``: no period is
        left to extend, and none is revived after the fact).
    ProfileError
        If ``days`` is not between 1 and the profile's limit (180).
    """
    who = _who(who)
    day = on or reg.profile.today()
    cond = [c.strip() for c in conditions if c.strip()]
    auth = [a.strip() for a in authorizations if a.strip()]
    with reg.backend.write() as cur:
        p = reg._locked(cur, permit_number)
        reg._check_dates(permit_number, EffectiveDate("on=", day, p.issued_on, "the permit's issuance"))
        keeps = p.status in EXTENDABLE  # the period runs on, the state stays
        if not keeps:
            try:
                check_transition(p.status, "extended")
            except IllegalTransitionError as exc:
                msg = f"{exc} An extension is possible in {', '.join(('active', 'extended', *EXTENDABLE))}."
                raise IllegalTransitionError(msg) from None
        assert p.issued_on is not None  # every state an extension is allowed in was issued
        if p.expires_on is not None and day > p.expires_on:
            # § 540-8G "may extend the period": read as a period still running. Extending one
            # that ran out would make the permit valid again for days already past, and work
            # done then (an A1 case of work after expiry) permitted after the fact.
            f = reg.profile.finding("extension_after_expiry", day=day, expired=p.expires_on)
            raise IllegalTransitionError(f"Permit {permit_number}: {f.message} ({f.section})")
        to = p.status if keeps else "extended"
        # The new end of the period (§ 540-8G), as the extension sets it.
        new_expiry = reg._expiry(
            p.issued_on, p.building_permit_expires, [*p.extensions_days, int(days)], p.other_authorizations.values()
        )
        facts: dict[str, Any] = {"to": to, "permit_expires_on": new_expiry}
        if cond:
            facts["conditions"] = cond
        if auth:
            facts["authorizations"] = auth
        # A state kept is no move in the clerk's log (no to_status): retracting a stop-work
        # order later must still go back past it.
        log = Event(now_utc(), who, "extension", p.status, None if keeps else to, day, int(days), reasons)
        reg._event(cur, permit_number, log, **facts)
    return reg.get(permit_number)


def update(
    reg: Registry,
    permit_number: str,
    *,
    who: str | None = None,
    inspected_on: date | None = None,
    authorization: tuple[str, date] | None = None,
    **changes: Any,
) -> Permit:
    """Change a permit's descriptive fields or dates, or record an inspection.

    Parameters
    ----------
    permit_number : str
    who : str, optional
    inspected_on : date, optional
        Records that the permit holder inspected on that day (§ 540-8E(6)) without its
        report: the registry holds none of what the weekly report "shall include", so it
        does not meet the weekly or after-rain duty (a reading; ``permits due`` lists it)
        until the report is recorded with :meth:`inspect`.
    authorization : (str, date), optional
        An "other construction authorization" (§ 540-8G), by name, and the day it ends (e.g.
        a WDNR permit's): the period is "the length of the building permit or other
        construction authorizations, whichever is longer", so an issued permit's expiry is
        recomputed. Recorded again under the same name, its end is replaced.
    **changes
        Fields of :data:`UPDATABLE`; ``None`` clears a date. A new ``work_stopped_on``
        starts a new pause: unless given with it, the expected resumption
        (``resume_expected_on``) and the resumption (``work_resumed_on``) of the last
        pause are cleared. Temporary stabilisation turns on them (§ 540-7A(4)(d)).

    Raises
    ------
    PermitNotFoundError
    ValidationError
        For an unknown field, a date before the permit's start, a resumption (expected or
        actual) without a stop or before it, or an authorization without a name.
    """
    who = _who(who)
    if authorization is not None and not str(authorization[0]).strip():
        fix = "name the authorization (e.g. 'WDNR permit WI-S067831')."
        raise ValidationError([Problem(permit_number, None, "an authorization needs its name.", fix)])
    unknown = [k for k in changes if k not in UPDATABLE]
    if unknown:
        raise ValidationError(
            [
                Problem(permit_number, None, f"{k!r} cannot be updated.", f"update one of {', '.join(UPDATABLE)}.")
                for k in unknown
            ]
        )
    untimed = [
        k for k, v in changes.items() if UPDATABLE[k] == "datetime" and v is not None and not isinstance(v, datetime)
    ]
    if untimed:
        raise ValidationError(
            [
                Problem(permit_number, None, f"{k} is a time, not {changes[k]!r}.", "give YYYY-MM-DDTHH:MM.")
                for k in untimed
            ]
        )
    # A time typed without a zone is the office's; days compare on the office's calendar.
    changes = {k: reg.profile.local(v) if isinstance(v, datetime) else v for k, v in changes.items()}
    with reg.backend.write() as cur:
        p = reg._locked(cur, permit_number)
        problems = []
        began = reg.profile.day_of(p.started_at) if p.started_at else None
        for k, v in changes.items():
            d = reg.profile.day_of(v) if isinstance(v, datetime) else v
            if isinstance(d, date) and k != "building_permit_expires" and began and d < began:
                problems.append(
                    Problem(
                        permit_number,
                        None,
                        f"{k} {d} is before the work started ({began}).",
                        "give the real date.",
                    )
                )
        if changes.get("work_stopped_on") is not None and changes["work_stopped_on"] != p.work_stopped_on:
            changes.setdefault("resume_expected_on", None)
            changes.setdefault("work_resumed_on", None)
        problems += _pause_problems(p, changes)
        if inspected_on is not None and p.started_at is None:
            problems.append(
                Problem(
                    permit_number,
                    None,
                    "an inspection cannot be recorded before work starts.",
                    "move the permit to active first (transition ... active).",
                )
            )
        problems += reg._date_problems(permit_number, *_update_dates(reg, p, changes, inspected_on))
        if problems:
            raise ValidationError(problems)
        authorized = dict(p.other_authorizations)
        facts: dict[str, Any] = {}
        if authorization is not None:
            name, ends = str(authorization[0]).strip(), authorization[1]
            authorized[name] = ends
            # The whole set, so the fold (which keeps a field's last value) holds every one.
            facts[OTHER_AUTHORIZATIONS] = {k: v.isoformat() for k, v in sorted(authorized.items())}
        if changes or facts:
            if ("building_permit_expires" in changes or facts) and p.issued_on is not None:
                building = changes.get("building_permit_expires", p.building_permit_expires)
                changes["expires_on"] = reg._expiry(p.issued_on, building, p.extensions_days, authorized.values())
            said = [f"{k}: {getattr(p, k)} -> {v}" for k, v in changes.items() if k != "expires_on"]
            if authorization is not None:
                name = str(authorization[0]).strip()
                was = p.other_authorizations.get(name)
                said.append(f"other construction authorization {name}: {was} -> {authorization[1]}")
            reg._event(
                cur,
                permit_number,
                Event(now_utc(), who, "update", None, None, None, None, "; ".join(said)),
                fields={**{k: v for k, v in changes.items() if k != "expires_on"}, **facts},
                **({"permit_expires_on": changes["expires_on"]} if "expires_on" in changes else {}),
            )
        if inspected_on is not None:
            # A day alone: the holder inspected that day; its report, which § 540-8E(6) says
            # "shall include all of the following", is not recorded (see inspections.is_day_alone).
            reg._event(cur, permit_number, Event(now_utc(), who, "inspection", None, None, inspected_on), by="holder")
    return reg.get(permit_number)


def _update_dates(reg: Registry, p: Permit, changes: dict[str, Any], inspected_on: date | None) -> list[EffectiveDate]:
    """Return the effective dates an update was given, for the one rule (:func:`date_problems`).

    Two dates of an update are not effective dates and may lie ahead: the building permit's
    expiry (``--building-permit-expires``) and the day work is expected to resume
    (``--resume-expected``). Every other one says something happened, so cannot be after
    today; an inspection cannot precede the application's receipt (and, above, the start).
    """
    options = {
        "start_notice_at": "start_notice_at=",
        "work_stopped_on": "work_stopped_on=",
        "work_resumed_on": "work_resumed_on=",
        "stockpile_since": "stockpile_since=",
    }
    out = [
        EffectiveDate(opt, reg.profile.day_of(changes[k]) if changes.get(k) is not None else None)
        for k, opt in options.items()
    ]
    return [*out, EffectiveDate("inspected_on=", inspected_on, p.received_on, "the application's receipt")]


def _pause_problems(p: Permit, changes: dict[str, Any]) -> list[Problem]:
    """List the problems of a resumption, expected or actual: it belongs to a stop and cannot precede it."""
    stopped = changes.get("work_stopped_on", p.work_stopped_on)
    out = []
    for k in ("resume_expected_on", "work_resumed_on"):
        v = changes.get(k)
        if v is None:
            continue
        if stopped is None:
            out.append(
                Problem(
                    p.permit_number,
                    None,
                    f"{k} {v} is given, but no stop of work is recorded.",
                    "record the day work stopped too (work_stopped_on=YYYY-MM-DD).",
                )
            )
        elif v < stopped:
            out.append(
                Problem(p.permit_number, None, f"{k} {v} is before work stopped ({stopped}).", "give the real date.")
            )
    return out
