"""Plan versions: the original, amendments with their written permission, and the office's notices."""

from __future__ import annotations

__all__ = ["amend", "notify_amendment", "open_notices", "plan_versions"]

import os
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esc_gis.errors import Problem, ValidationError
from esc_gis.registry.domain.amendments import (
    ORIGINAL,
    PlanVersion,
    check_notice,
    check_version,
    coverage_ended,
    coverage_ends,
    file_digest,
    triggers,
)
from esc_gis.registry.domain.records import Event
from esc_gis.registry.service._core import ISSUED, _who
from esc_gis.registry.store.backend import now_utc, rows

_COLUMNS = (
    ("id", "int"),
    ("permit_number", "text"),
    ("version", "int"),
    ("trigger_code", "text"),
    ("status", "text"),
    ("description", "text"),
    ("plan_date", "date"),
    ("requested_by", "text"),
    ("requested_on", "date"),
    ("permission_on", "date"),
    ("permission_by", "text"),
    ("effective_on", "date"),
    ("notice_id", "int"),
    ("plan_file", "text"),
    ("plan_sha256", "text"),
    ("recorded_by", "text"),
    ("recorded_at", "datetime"),
)


if TYPE_CHECKING:
    from esc_gis.registry.service.registry import Registry


def amend(
    reg: Registry,
    permit_number: str,
    *,
    trigger: str,
    description: str,
    plan_date: date | None,
    permission_on: date | None = None,
    permission_by: str | None = None,
    effective_on: date | None = None,
    requested_by: str | None = None,
    notice_id: int | None = None,
    plan_file: str | os.PathLike[str] | None = None,
    who: str | None = None,
) -> PlanVersion:
    """Record a version of the permit's plan and a history event, in one transaction.

    ``trigger`` is ``original`` (version 0, the plan approved with the permit) or one of
    the profile's amendment triggers. An amendment needs the administering authority's
    written permission (``permission_on``, ``permission_by``) and takes effect on
    ``effective_on`` (default: the day of the permission), never before it. An amendment
    on the notice trigger answers the open notice ``notice_id`` (default: the only one open).

    Raises
    ------
    PermitNotFoundError
        If there is no such permit.
    ValidationError
        With every problem at once (unknown trigger, no description, a date missing or in
        the future, no written permission, a modification before its permission, a
        notice that is not open, an unreadable plan file, an amendment once permit
        coverage ended); nothing is written then.
    ProfileError
        If the profile lacks ``[amendments.triggers]`` or the findings amendments cite.
    """
    who = _who(who)
    known = triggers(reg.profile.tables)
    if trigger != ORIGINAL and effective_on is None:
        effective_on = permission_on
    refusal = reg.profile.finding("amendment_before_permission", effective=effective_on, permission=permission_on)
    path, digest = (None, None) if plan_file is None else file_digest(plan_file)
    now = now_utc()
    b = reg.backend
    # Checked inside the write transaction, on the permit's locked row: a second clerk amending
    # the same permit waits, then sees this version (the next number, the notice answered).
    with b.write() as cur:
        p = reg._locked(cur, permit_number)
        existing = _read_versions(reg, cur, permit_number)
        messages = check_version(
            trigger=trigger,
            description=description,
            plan_date=plan_date,
            permission_on=permission_on,
            permission_by=permission_by,
            effective_on=effective_on,
            known=known,
            existing=existing,
            received_on=p.received_on,
            issued=p.status in ISSUED or p.issued_on is not None,
            today=reg.profile.today(),
            before_permission=f"{refusal.message} ({refusal.section}).",
        )
        notice, notice_messages = _notice_answered(reg, known, trigger, notice_id, existing, permission_on)
        messages += notice_messages
        if trigger != ORIGINAL:  # the plan approved with the permit may still be put on record
            messages += _coverage_problems(reg, p, effective_on)
        if plan_file is not None and digest is None:
            messages.append(str(path))
        if messages:
            raise ValidationError(
                [Problem(permit_number, None, m, "correct it and run `permits amend` again.") for m in messages]
            )
        version = (
            0 if trigger == ORIGINAL else 1 + max((v.version or 0 for v in existing if not v.is_notice), default=0)
        )
        values: dict[str, Any] = {
            "permit_number": permit_number,
            "version": version,
            "trigger_code": trigger,
            "status": "approved",
            "description": description.strip(),
            "plan_date": plan_date,
            "requested_by": (requested_by or "").strip() or None,
            "requested_on": None,
            "permission_on": permission_on,
            "permission_by": (permission_by or "").strip() or None,
            "effective_on": effective_on,
            "notice_id": notice,
            # The file's name only: its bytes' SHA-256 is what identifies it, and a clerk's
            # folder (/home/clerk/...) is neither the plan's nor stable. Older rows keep theirs.
            "plan_file": Path(path).name if path is not None else None,
            "plan_sha256": digest,
            "recorded_by": who,
            "recorded_at": now,
        }
        if trigger == ORIGINAL:
            detail = f"plan version 0 (original) dated {plan_date}: {description.strip()}"
        else:
            answers = f", answering notice #{notice}" if notice is not None else ""
            detail = (
                f"plan version {version} ({trigger}, {known[trigger]['section']}) dated {plan_date}: "
                f"{description.strip()}; written permission {permission_on} by {permission_by}, "
                f"effective {effective_on}{answers}"
            )
        (version_id,) = reg.backend.next_ids(cur, "plan_versions")
        kind = "plan_original" if trigger == ORIGINAL else "plan_amendment"
        reg._event(
            cur,
            permit_number,
            Event(now, who, kind, None, None, effective_on or plan_date, None, detail),
            version=version,
            version_id=version_id,
            trigger=trigger,
            notice_id=notice,
            plan_sha256=digest,
            plan=_plan_facts(values),
        )
    return next(v for v in reg.plan_versions(permit_number) if v.version == version)


def notify_amendment(
    reg: Registry,
    permit_number: str,
    *,
    trigger: str,
    description: str,
    notified_on: date | None,
    requested_by: str | None = None,
    who: str | None = None,
) -> PlanVersion:
    """Record the administering authority's notice to the applicant of changes needed in the plan.

    The notice comes before the amended plan, which answers it later (:meth:`amend`).

    Raises
    ------
    PermitNotFoundError
        If there is no such permit.
    ValidationError
        With every problem at once (a trigger that is not the notice, no description, no
        date or one in the future, a permit not issued, or its coverage ended); nothing is
        written then.
    ProfileError
        If the profile lacks ``[amendments.triggers]``.
    """
    who = _who(who)
    known = triggers(reg.profile.tables)
    p = reg.get(permit_number)
    messages = check_notice(
        trigger=trigger,
        description=description,
        notified_on=notified_on,
        known=known,
        received_on=p.received_on,
        issued=p.status in ISSUED or p.issued_on is not None,
        today=reg.profile.today(),
    )
    # § 540-9B(3) sets the notice no time limit: refusing it once coverage ended is the registry's choice.
    messages += _coverage_problems(reg, p, notified_on, finding="amendment_notice_after_coverage")
    if messages:
        raise ValidationError(
            [Problem(permit_number, None, m, "correct it and run `permits amend` again.") for m in messages]
        )
    now = now_utc()
    by = (requested_by or "").strip() or who
    values: dict[str, Any] = {
        "permit_number": permit_number,
        "version": None,
        "trigger_code": trigger,
        "status": "requested",
        "description": description.strip(),
        "plan_date": None,
        "requested_by": by,
        "requested_on": notified_on,
        "permission_on": None,
        "permission_by": None,
        "effective_on": None,
        "notice_id": None,
        "plan_file": None,
        "plan_sha256": None,
        "recorded_by": who,
        "recorded_at": now,
    }
    section = known[trigger]["section"]
    detail = f"notice of changes needed in the plan ({trigger}, {section}) by {by}: {description.strip()}"
    with reg.backend.write() as cur:
        reg._locked(cur, permit_number)
        (new_id,) = reg.backend.next_ids(cur, "plan_versions")
        reg._event(
            cur,
            permit_number,
            Event(now, who, "plan_notice", None, None, notified_on, None, f"#{new_id} {detail}"),
            notice_id=new_id,
            trigger=trigger,
            plan=_plan_facts(values),
        )
    return next(v for v in reg.plan_versions(permit_number) if v.id == new_id)


def _coverage_problems(
    reg: Registry, p: Any, day: date | None, *, finding: str = "amendment_after_coverage"
) -> list[str]:
    """Return the refusal of an amendment or notice on ``day`` once the permit's coverage ended (else none).

    ``finding`` words it: an amendment's (a reading of § 540-8E(7)) or a notice's (the registry's
    policy, § 540-9B(3) setting the notice no time limit).
    """
    since = p.state.status_on if p.state is not None else None
    ended = coverage_ended(coverage_ends(reg.profile.tables), p.status, p.expires_on, day, ISSUED, since)
    if ended is None:
        return []
    f = reg.profile.finding(finding, ended=ended)
    return [f"{f.message} ({f.section}; basis {f.basis})."]


def plan_versions(reg: Registry, permit_number: str | None = None) -> list[PlanVersion]:
    """Return the plan versions and notices (all, or a permit's), in the order recorded.

    Raises
    ------
    PermitNotFoundError
        If ``permit_number`` is given and there is no such permit.
    """
    if permit_number is not None:
        reg.get(permit_number)
    with reg.backend.read() as cur:
        return _read_versions(reg, cur, permit_number)


def _read_versions(reg: Registry, cur: Any, permit_number: str | None) -> list[PlanVersion]:
    """Read the plan versions (all, or a permit's) with the caller's cursor, in the order recorded."""
    b = reg.backend
    where, params = (f"WHERE permit_number = {b.ph}", (permit_number,)) if permit_number else ("", ())
    cur.execute(f"SELECT {', '.join(c for c, _ in _COLUMNS)} FROM plan_versions {where} ORDER BY id", params)
    out = []
    for r in rows(cur):
        v: dict[str, Any] = {
            c: (None if r[c] is None else int(r[c])) if k == "int" else b.load(k, r[c]) for c, k in _COLUMNS
        }
        v["trigger"] = v.pop("trigger_code")
        out.append(PlanVersion(**v))
    return out


def open_notices(reg: Registry, permit_number: str | None = None) -> list[PlanVersion]:
    """Return the office's notices of changes needed that no amended plan answers yet."""
    found = reg.plan_versions(permit_number)
    answered = {v.notice_id for v in found if v.notice_id is not None}
    return [v for v in found if v.is_notice and v.id not in answered]


# Helpers ----------------------------------------------------------------------------


def _notice_answered(
    reg: Registry,
    known: dict[str, dict[str, Any]],
    trigger: str,
    notice_id: int | None,
    existing: list[PlanVersion],
    permission_on: date | None,
) -> tuple[int | None, list[str]]:
    """Return the notice an amendment answers (or None) and the problems of that choice."""
    answered = {v.notice_id for v in existing if v.notice_id is not None}
    open_ = [v for v in existing if v.is_notice and v.id not in answered]
    if not known.get(trigger, {}).get("notice"):
        if notice_id is not None:
            return None, [f"notice #{notice_id} is answered by an amendment on the notice's trigger, not {trigger!r}."]
        return None, []
    if notice_id is None:
        if len(open_) > 1:
            ids = ", ".join(f"#{v.id}" for v in open_)
            return None, [f"notices {ids} are open; say which one the amended plan answers (notice_id=N)."]
        notice = open_[0] if open_ else None
    else:
        notice = next((v for v in open_ if v.id == notice_id), None)
        if notice is None:
            return None, [f"there is no open notice #{notice_id} for this permit; see `permits amendments`."]
    if notice is not None and permission_on is not None and notice.requested_on and permission_on < notice.requested_on:
        return notice.id, [f"the permission {permission_on} is before the notice it answers ({notice.requested_on})."]
    return (notice.id if notice else None), []


def _plan_facts(values: dict[str, Any]) -> dict[str, Any]:
    """Return what a plan event carries of its version's row (dates as ISO text, as the history keeps them)."""
    from esc_gis.registry.store.projection import PLAN_FACTS

    return {k: (v.isoformat() if isinstance(v, date) else v) for k, v in values.items() if k in PLAN_FACTS}
