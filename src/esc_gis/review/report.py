"""The review as one printable HTML page: verdict, measurements, checklist, map, draft reasons, advisories.

The page is the template ``review/report.html.j2`` (:mod:`esc_gis._templates`), which escapes
every text from the package (names, notes, BMP types); the compliance map is its own
document inside an ``iframe`` (``srcdoc``), so its scripts never mix with the report's, and
the page prints on letter paper.
"""

from __future__ import annotations

__all__ = ["render_report", "write_report"]

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from esc_gis import __version__
from esc_gis._outputs import atomic_output
from esc_gis._templates import render
from esc_gis.profile import Profile, load_profile
from esc_gis.review.checks import Check
from esc_gis.review.plan import Review
from esc_gis.units import SQFT_PER_ACRE

_STATUS = {
    "fail": ("Fails", "#b2182b"),
    "look": ("Needs a look", "#b35806"),
    "pass": ("Passes", "#1a9850"),
    "n/a": ("Not applicable", "#666666"),
}
_VERDICT = {"approve": "#1a9850", "needs a look": "#b35806", "disapprove": "#b2182b"}


def _text(v: object) -> object:
    """Show a missing value as an empty cell (the template escapes the rest)."""
    return "" if v is None else v


def _check_row(c: Check) -> dict[str, object]:
    """Return what the checklist's row of ``c`` shows: its fields, and its status's words and colour."""
    label, colour = _STATUS[c.status]
    return {
        "status": c.status,
        "label": label,
        "colour": colour,
        "code": _text(c.code),
        "basis": _text(c.basis),
        "finding": _text(c.finding),
        "title": _text(c.title),
        "section": _text(c.section),
        # The policy entries an outcome of the toolkit's policy rests on, under its basis.
        "policy": list(c.policy),
        "detail": _text(c.detail),
    }


def render_report(review: Review, *, map_html: str | None = None, reviewed_at: datetime | None = None) -> str:
    """Return the report page (the template ``review/report.html.j2``).

    The checklist gives each check's basis. Failures on the ordinance are the draft written
    reasons for disapproval; failures on the toolkit's policy, a technical standard or a reading
    are listed apart, as advisories, with the policy entries they rest on.

    Parameters
    ----------
    review : Review
    map_html : str, optional
        A complete HTML document (the compliance map), embedded in an iframe.
    reviewed_at : datetime, optional
        Default now.

    Returns
    -------
    str

    Raises
    ------
    ProfileError
        If the review carries no profile and the default one cannot be loaded, or it lacks the
        report's ``review_reasons`` / ``review_advisories`` findings.
    """
    prof = review.profile or load_profile()
    names = prof.names()
    at = (reviewed_at or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M %Z").strip()
    title = (review.facts.get("plan") or {}).get("title") or Path(review.source).name
    m = review.measured
    decision = next((c for c in review.checks if c.code == "decision"), None)
    order = ("fail", "look", "pass", "n/a")
    return render(
        "review/report.html.j2",
        version=__version__,
        title=title,
        package=Path(review.source).name,
        reviewed_at=at,
        jurisdiction=prof.jurisdiction_name,
        ordinance=prof.ordinance,
        verdict=review.verdict,
        verdict_colour=_VERDICT[review.verdict],
        counts={s: sum(c.status == s for c in review.checks) for s in _STATUS},
        n_reasons=len(review.reasons),
        n_advisories=len(review.advisories),
        measured=m,
        disturbed_acres=m["disturbed_sqft"] / SQFT_PER_ACRE if m else 0.0,
        decision=_text(decision.detail if decision else (m or {}).get("permit")),
        steep_slope=names.get("steep_slope", ""),
        problems=[_text(p) for p in review.problems],
        checks=[_check_row(c) for c in sorted(review.checks, key=lambda c: order.index(c.status))],
        map_html=map_html,
        sections=[
            # Reasons for disapproval cite their section and are numbered; advisories are not law.
            _list_section(prof, "review_reasons", review.reasons, "ol", "reasons", cite=True),
            _list_section(prof, "review_advisories", review.advisories, "ul", "advisories", cite=False),
        ],
    )


def write_report(
    review: Review,
    path: str | os.PathLike[str],
    *,
    map_html: str | None = None,
    json_path: str | os.PathLike[str] | None = None,
) -> Path:
    """Write the HTML report (and the JSON, if asked) atomically; return the HTML path.

    Check the paths first with :func:`esc_gis.maps.check_map_path` (it refuses to overwrite).
    """
    out = Path(path)
    outputs = [(out, render_report(review, map_html=map_html))]
    if json_path is not None:
        outputs.append((Path(json_path), json.dumps(review.to_dict(), indent=2, default=str)))
    for target, text in outputs:
        with atomic_output(target) as tmp:
            tmp.write_text(text, encoding="utf-8")
    return out


def _list_section(prof: Profile, code: str, items: list[str], tag: str, html_id: str, *, cite: bool) -> dict[str, Any]:
    """Return a headed list of the report (not shown without items): title, the finding's message, the items.

    Raises
    ------
    ProfileError
        If the profile lacks the finding ``code`` or its template.
    """
    if not items:
        return {"items": []}  # the finding is not looked up for a list not shown
    head = prof.finding(code)
    return {
        "title": prof.template(code).title,
        "section": head.section if cite else "",
        "message": _text(head.message),
        "tag": tag,
        "id": html_id,
        "items": [_text(x) for x in items],
    }
