"""The review as one printable HTML page: verdict, measurements, checklist, map, draft reasons, advisories.

Every text from the package (names, notes, BMP types) is HTML-escaped; the compliance map
is its own document inside an ``iframe`` (``srcdoc``), so its scripts never mix with the
report's, and the page prints on letter paper.
"""

from __future__ import annotations

__all__ = ["render_report", "write_report"]

import html
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from esc_gis import __version__
from esc_gis._outputs import atomic_output
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
_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#222}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #ccc}
.verdict{display:inline-block;padding:6px 14px;border-radius:4px;color:#fff;font-weight:bold;font-size:16px}
table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;text-align:left}
th{background:#f0f0f0} .status{font-weight:bold;white-space:nowrap} .small{color:#555;font-size:12px}
iframe{width:100%;height:520px;border:1px solid #999}
@media print{body{margin:0;max-width:none} iframe{height:430px} tr,li{page-break-inside:avoid}
 h2{page-break-after:avoid} .noprint{display:none}}
"""


def _e(v: object) -> str:
    return html.escape("" if v is None else str(v))


def _basis(c: Check) -> str:
    """Return the basis cell: the basis, and the policy entries an outcome of the toolkit's policy rests on."""
    keys = f"<div class='small'>{_e(', '.join(c.policy))}</div>" if c.policy else ""
    return f"{_e(c.basis.replace('_', ' '))}{keys}"


def render_report(review: Review, *, map_html: str | None = None, reviewed_at: datetime | None = None) -> str:
    """Return the report page.

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
    facts = review.facts
    title = (facts.get("plan") or {}).get("title") or Path(review.source).name
    m = review.measured
    counts = {s: sum(c.status == s for c in review.checks) for s in _STATUS}
    reasons, advisories = review.reasons, review.advisories
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<meta name='generator' content='esc_gis {_e(__version__)}'>",
        f"<title>Plan review: {_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Erosion and sediment control plan review: {_e(title)}</h1>",
        # The package's name only: the reviewer's own folders are nobody else's business.
        f"<div class='small'>Package {_e(Path(review.source).name)} &middot; reviewed {_e(at)} "
        f"with esc_gis {_e(__version__)} "
        f"against the {_e(prof.jurisdiction_name)} {_e(prof.ordinance)}</div>",
        f"<p><span class='verdict' id='verdict' style='background:{_VERDICT[review.verdict]}'>"
        f"{_e(review.verdict.capitalize())}</span> &nbsp; {counts['fail']} failing ({len(reasons)} reason(s) for "
        f"disapproval, {len(advisories)} advisory), {counts['look']} to look at, {counts['pass']} passing, "
        f"{counts['n/a']} not applicable</p>",
    ]
    decision = next((c for c in review.checks if c.code == "decision"), None)
    if m:
        parts.append(
            "<h2>Measured from the drawing</h2><table>"
            f"<tr><th>Site</th><td>{m['site_sqft']:,.0f} sq ft</td>"
            f"<th>Disturbed</th><td>{m['disturbed_sqft']:,.0f} sq ft "
            f"({m['disturbed_sqft'] / SQFT_PER_ACRE:.2f} acres)</td></tr>"
            f"<tr><th>Decision</th><td colspan='3'>{_e(decision.detail if decision else m['permit'])}</td></tr>"
            f"<tr><th>On slopes of {_e(names.get('steep_slope', ''))} or more</th>"
            f"<td>{m['steep_disturbed_sqft']:,.0f} sq ft</td>"
            f"<th>In protective areas</th><td>{m['protective_disturbed_sqft']:,.0f} sq ft</td></tr></table>"
        )
    if review.problems:
        items = "".join(f"<li>{_e(p)}</li>" for p in review.problems)
        parts.append(f"<h2>Problems with the package</h2><ul id='problems'>{items}</ul>")
    rows = "".join(
        f"<tr class='check {c.status.replace('/', '')}' data-code='{_e(c.code)}' data-basis='{_e(c.basis)}' "
        f"data-finding='{_e(c.finding)}'>"
        f"<td class='status' style='color:{_STATUS[c.status][1]}'>{_STATUS[c.status][0]}</td><td>{_e(c.title)}</td>"
        f"<td>{_e(c.section)}</td><td class='basis'>{_basis(c)}</td><td>{_e(c.detail)}</td></tr>"
        for c in sorted(review.checks, key=lambda c: ("fail", "look", "pass", "n/a").index(c.status))
    )
    parts.append(
        "<h2>Checklist</h2><table id='checklist'><tr><th>Status</th><th>Item</th><th>Section</th>"
        f"<th>Basis</th><th>Finding</th></tr>{rows}</table>"
    )
    if map_html:
        parts.append(
            "<h2>Compliance map</h2><iframe id='map' title='Compliance map' "
            f'srcdoc="{html.escape(map_html)}"></iframe>'
        )
    # Reasons for disapproval cite their section and are numbered (a written list); advisories are not law.
    parts.append(_list_section(prof, "review_reasons", reasons, "ol", "reasons", cite=True))
    parts.append(_list_section(prof, "review_advisories", advisories, "ul", "advisories", cite=False))
    parts.append("</body></html>")
    return "\n".join(parts)


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


def _list_section(prof: Profile, code: str, items: list[str], tag: str, html_id: str, *, cite: bool) -> str:
    """Return a headed list of the report (empty without items): title, the finding's message, the items."""
    if not items:
        return ""
    head = prof.finding(code)
    title = _e(prof.template(code).title) + (f" ({_e(head.section)})" if cite else "")
    lis = "".join(f"<li>{_e(x)}</li>" for x in items)
    return f"<h2>{title}</h2><p class='small'>{_e(head.message)}</p><{tag} id='{html_id}'>{lis}</{tag}>"
