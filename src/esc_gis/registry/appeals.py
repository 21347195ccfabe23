"""Appeals and variances: an appeal of an order, decision or determination, and its decision.

An appeal names what was appealed, who appealed (an aggrieved person or a Village body,
§ 540-13B), when, and on what grounds; it may concern a permit, an enforcement case, or
both. Its decision records the body that heard it, the outcome (upheld, reversed, or a
variance granted with conditions, § 540-13A) and the effect on the permit.

The ordinance names two bodies: § 540-13A the Zoning Board of Appeals, § 540-13B "appeals to
the Village Board". The registry does not choose: each decision records which body heard it.
The bodies, appellants and outcomes, with their sections, are the profile's (``[appeals]``).

A reversal of a stop-work order or a revocation sends the permit back to the state before
(as a retraction, § 540-12D), and a reversal of a suspension lifts it (reinstatement), in the
same transaction as the decision. Other outcomes leave the permit's state as it is.
"""

from __future__ import annotations

__all__ = ["Appeal", "AppealDecision", "appeal_terms"]

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from esc_gis.errors import ProfileError


@dataclass(frozen=True)
class AppealDecision:
    """The decision on an appeal."""

    decided_on: date
    body: str
    outcome: str
    conditions: str | None
    effect: str | None
    recorded_by: str


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
