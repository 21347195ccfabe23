"""Versions of the erosion and sediment control plan: the original, amendments, and the office's notices.

The applicant amends the plan on one of the triggers the profile lists
(``[amendments.triggers]``, § 540-9B(1)-(3) in the Village's): a change at the site not
addressed in the plan, a plan whose actions fail to reduce the impacts, or the
administering authority's notice of changes needed. The permittee must have the
administering authority's written permission before the modification (the finding
``amendment_before_permission`` cites the section), so an amendment carries the day permission was given
and by whom, and the day it takes effect, never before the permission.

Version 0 is the plan approved with the permit; amendments are numbered 1, 2, ... in the
order recorded. The office's notice of changes needed (the trigger marked ``notice`` in the
profile) may be recorded first, without a plan (status ``requested``), and an amended plan
answers it later. The ordinance sets no deadline for the amended plan, so an open notice has
no due date (none is invented).

No amendment or notice once permit coverage is terminated: the plan and its amendments are
kept "until permit coverage is terminated" (§ 540-8E(7) in the Village's). Which states end
coverage, and whether the end of the period does, is the profile's reading
(``[amendments.coverage_ends]``; :func:`coverage_ended`).

Everything here is private except the current version's plan date, which the public record shows.
"""

from __future__ import annotations

__all__ = [
    "ORIGINAL",
    "CoverageEnds",
    "PlanVersion",
    "check_notice",
    "check_version",
    "coverage_ended",
    "coverage_ends",
    "current_version",
    "file_digest",
    "triggers",
]

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from esc_gis.errors import ProfileError
from esc_gis.registry.domain._tables import cited_codes
from esc_gis.registry.domain.dates import EffectiveDate, date_problems

#: The trigger code of the plan approved with the permit (version 0).
ORIGINAL = "original"


@dataclass(frozen=True)
class PlanVersion:
    """A version of a permit's plan, or (``status == "requested"``) the office's notice of changes needed."""

    id: int
    permit_number: str
    version: int | None
    trigger: str
    status: str
    description: str
    plan_date: date | None
    requested_by: str | None
    requested_on: date | None
    permission_on: date | None
    permission_by: str | None
    effective_on: date | None
    notice_id: int | None
    plan_file: str | None
    plan_sha256: str | None
    recorded_by: str
    recorded_at: datetime

    @property
    def is_notice(self) -> bool:
        """True for the office's notice of changes needed (no plan yet)."""
        return self.status == "requested"


def triggers(tables: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Return the profile's ``[amendments.triggers]``: code -> {section, text, notice}.

    Raises
    ------
    ProfileError
        If the table is missing, lacks the original plan, or a trigger lacks its section or wording.
    """
    raw = cited_codes(tables, "amendments", "triggers", "for plan amendments")
    if ORIGINAL not in raw:
        msg = f"[amendments.triggers] has no {ORIGINAL!r} entry (the plan approved with the permit)."
        raise ProfileError(msg)
    return raw


@dataclass(frozen=True)
class CoverageEnds:
    """When permit coverage is terminated (the profile's ``[amendments.coverage_ends]``)."""

    #: States in which coverage has ended (closed, revoked).
    states: frozenset[str]
    #: Whether an issued permit's coverage ends with its period (``expires_on``).
    expiry: bool


def coverage_ends(tables: Mapping[str, Any]) -> CoverageEnds:
    """Return the profile's ``[amendments.coverage_ends]``: the states that end coverage, and the expiry.

    Raises
    ------
    ProfileError
        If the table is missing, names a state that is not the life cycle's, or ``expiry`` is not a boolean.
    """
    from esc_gis.registry.domain.lifecycle import STATES

    raw = (tables.get("amendments") or {}).get("coverage_ends")
    if not isinstance(raw, dict) or not isinstance(raw.get("states"), list):
        msg = "The profile has no [amendments.coverage_ends] (states = [...], expiry = true|false)."
        raise ProfileError(msg)
    states = frozenset(str(x) for x in raw["states"])
    unknown = sorted(states - set(STATES))
    if unknown or not isinstance(raw.get("expiry"), bool):
        what = f"names {', '.join(unknown)}, not a permit state" if unknown else "needs expiry = true or false"
        msg = f"The profile's [amendments.coverage_ends] {what}."
        raise ProfileError(msg)
    return CoverageEnds(states, raw["expiry"])


def coverage_ended(
    ends: CoverageEnds,
    status: str,
    expires_on: date | None,
    day: date | None,
    issued: Sequence[str],
    since: date | None = None,
) -> str | None:
    """Return how the permit's coverage had ended on ``day`` (words for the refusal), or None if it runs.

    A state of ``ends.states`` ends it from ``since``, the day the permit moved into it (the
    closing's or the revocation's day): a ``day`` before it was still covered, as the permit was
    then; without ``since`` (a permit imported in that state) it ends it whatever the day. With
    ``ends.expiry``, an issued permit (``status`` in ``issued``) ends it from the day after
    ``expires_on``. Pure.

    Examples
    --------
    >>> ends = CoverageEnds(frozenset({"closed"}), expiry=True)
    >>> coverage_ended(ends, "closed", None, date(2027, 1, 4), ("active",))
    'the permit is closed'
    >>> coverage_ended(ends, "closed", None, date(2027, 1, 4), ("active",), since=date(2027, 1, 4))
    'the permit was closed on 2027-01-04'
    >>> coverage_ended(ends, "closed", None, date(2027, 1, 3), ("active",), since=date(2027, 1, 4)) is None
    True
    >>> coverage_ended(ends, "active", date(2027, 1, 4), date(2027, 1, 4), ("active",)) is None
    True
    >>> coverage_ended(ends, "active", date(2027, 1, 4), date(2027, 1, 5), ("active",))
    'the permit expired on 2027-01-04'
    """
    if status in ends.states:
        if since is None:
            return f"the permit is {status.replace('_', ' ')}"
        if day is None or day >= since:
            return f"the permit was {status.replace('_', ' ')} on {since}"
        # Before the closing or revocation the permit was issued (or not); its period still counts.
        if ends.expiry and expires_on is not None and day > expires_on:
            return f"the permit expired on {expires_on}"
        return None
    if ends.expiry and status in issued and expires_on is not None and day is not None and day > expires_on:
        return f"the permit expired on {expires_on}"
    return None


def current_version(versions: Sequence[PlanVersion], on: date) -> PlanVersion | None:
    """Return the version in effect on ``on``: the highest number that has taken effect (the original always has).

    Examples
    --------
    >>> current_version([], date(2026, 12, 1)) is None
    True
    """
    done = [
        v
        for v in versions
        if not v.is_notice and v.version is not None and (v.effective_on is None or v.effective_on <= on)
    ]
    return max(done, key=lambda v: v.version or 0, default=None)


def _day_problems(name: str, day: date | None, today: date, keyword: str, received_on: date | None = None) -> list[str]:
    # The one rule for effective dates (domain/dates.py): not after today, not before the receipt.
    if day is None:
        return [f"the {name} is missing ({keyword}YYYY-MM-DD)."]
    return date_problems([EffectiveDate(keyword, day, received_on, "the application's receipt")], today)


def check_version(
    *,
    trigger: str,
    description: str,
    plan_date: date | None,
    permission_on: date | None,
    permission_by: str | None,
    effective_on: date | None,
    known: Mapping[str, Mapping[str, Any]],
    existing: Sequence[PlanVersion],
    received_on: date,
    issued: bool,
    today: date,
    before_permission: str,
) -> list[str]:
    """Return every reason a plan version cannot be recorded (empty: it can); pure.

    ``before_permission`` is the profile's refusal (finding ``amendment_before_permission``)
    for a modification taking effect before the written permission, rendered with its section.
    """
    out: list[str] = []
    if trigger not in known:
        out.append(f"trigger {trigger!r} is not one the profile lists ({', '.join(known)}).")
    if not description.strip():
        out.append("the description is empty (description=: what the version changes).")
    out += _day_problems("plan date", plan_date, today, "plan_date=")
    if trigger == ORIGINAL and not issued:
        # Before approval there is no approved plan, and the public record would show its date.
        out.append("the permit has not been issued: the original plan is the one approved with the permit.")
    if trigger == ORIGINAL:
        if any(v.trigger == ORIGINAL for v in existing):
            out.append("the original plan (version 0) is already recorded; record a change as an amendment.")
        if permission_on is not None or permission_by or effective_on is not None:
            out.append(
                "the original plan is approved with the permit; leave out permission_on=, permission_by= "
                "and effective_on=."
            )
        return out
    if not issued:
        out.append("the permit has not been issued: before approval a revised plan is part of the review.")
    out += _day_problems("date of the written permission", permission_on, today, "permission_on=", received_on)
    if not (permission_by or "").strip():
        out.append("who gave the written permission is missing (permission_by=).")
    if permission_on is not None:
        if plan_date is not None and plan_date > permission_on:
            out.append(
                f"the permission {permission_on} is before the amended plan's date {plan_date}: "
                "the permission is for the plan it saw."
            )
        if effective_on is not None and effective_on < permission_on:
            out.append(before_permission)
    return out


def check_notice(
    *,
    trigger: str,
    description: str,
    notified_on: date | None,
    known: Mapping[str, Mapping[str, Any]],
    received_on: date,
    issued: bool,
    today: date,
) -> list[str]:
    """Return every reason the office's notice of changes needed cannot be recorded (empty: it can); pure."""
    out: list[str] = []
    notice_codes = [k for k, v in known.items() if v.get("notice")]
    if trigger not in notice_codes:
        out.append(
            f"only the administering authority's notice ({', '.join(notice_codes) or 'none in the profile'}) "
            f"is recorded before its plan; {trigger!r} is recorded with the amended plan."
        )
    if not description.strip():
        out.append("the description is empty (description=: the changes needed).")
    out += _day_problems("date of the notice", notified_on, today, "notified_on=", received_on)
    if not issued:
        out.append("the permit has not been issued: before approval, ask for information instead.")
    return out


def file_digest(path: str | os.PathLike[str]) -> tuple[str, str | None]:
    """Return (the path as recorded, its SHA-256), or (message, None) if the file cannot be read."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        return f"the plan file {p} cannot be read ({exc.strerror or exc}); give the file of the plan version.", None
    return str(p.resolve()), hashlib.sha256(data).hexdigest()
