"""Enforcement cases: opened on a permit, a screened site or an address, and their actions."""

from __future__ import annotations

__all__ = ["case", "case_action", "cases", "enforce"]

import os
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esc_gis._lazy import lazy_module
from esc_gis.errors import (
    IllegalTransitionError,
    PermitNotFoundError,
    Problem,
    RegistryError,
    ValidationError,
)
from esc_gis.registry.domain.dates import EffectiveDate
from esc_gis.registry.domain.deadlines import deemed_approved_by
from esc_gis.registry.domain.enforcement import (
    CaseEvent,
    EnforcementCase,
    check_action,
    not_in_force,
    order_state,
    standing_conditions,
    where_no_permit_required,
    without_permit_terms,
)
from esc_gis.registry.domain.enforcement import grounds as enforcement_grounds
from esc_gis.registry.domain.events import CASE_KINDS, HistoryEvent
from esc_gis.registry.domain.fold import PermitState
from esc_gis.registry.domain.lifecycle import check_back, check_transition
from esc_gis.registry.domain.records import Event, Permit
from esc_gis.registry.service._core import (
    ISSUED,
    _as_multi,
    _who,
)
from esc_gis.registry.store.backend import now_utc, rows
from esc_gis.registry.store.numbering import next_number
from esc_gis.registry.store.projection import wkb

if TYPE_CHECKING:
    import geopandas as gpd
    import shapely

    from esc_gis.registry.service.registry import Registry
else:
    # Loaded on first use: listing, showing and the due dates start without them.
    gpd = lazy_module("geopandas")
    shapely = lazy_module("shapely")

#: The order of a case without a permit, as the moves of its own stream.
_CASE_MOVES: dict[str, dict[str, Any]] = {
    "stop_work": {"from": None, "to": "stop_work"},
    "retraction": {"from": "stop_work", "to": "retracted"},
}


def enforce(
    reg: Registry,
    *,
    ground: str,
    on: date | None,
    reasons: str | None,
    permit_number: str | None = None,
    site_layer: str | os.PathLike[str] | None = None,
    site_id: str | None = None,
    address: str | None = None,
    who: str | None = None,
    condition: str | int | None = None,
) -> EnforcementCase:
    """Open an enforcement case on a permit, a screened site, or an address (§ 540-12A).

    A screened site is decided anew by the screening function
    (:func:`~esc_gis.registry.service.intake.decide_screened`), a permit's site by the same
    function (:func:`~esc_gis.registry.service.intake.decide_permit`, with a § 540-4A(1)(c)
    determination recorded on it), and the ground is judged on either by one rule
    (:func:`_ground_on_site`): where the site needs no permit, a ground the profile's
    ``[enforcement.where_no_permit_required]`` says does not fit (activity without a required
    permit; the plan's or the conditions' grounds) is refused with its words, and one it lets
    (A4) is taken. A ground without a permit (``without_permit``) by an address alone is
    refused (finding ``enforcement_site_undecided``): nothing decides that a permit is required
    there. A ground that rests on a permit in force (``in_force``: the plan's, the conditions')
    is refused on a permit never issued, issued after the case's day, revoked, closed or past
    its period on that day (finding ``enforcement_not_in_force``, naming the ground without a
    permit). A ground about the permit's conditions (``names_condition``) names the condition not
    met: ``condition``, the code of one every issued permit is subject to (the profile's
    ``[enforcement.standing_conditions]``, ``E1``...), or the number of one recorded on the permit,
    as `permits show` lists them. Where the site needs a permit only by a recorded determination,
    a case dated before the determination's day is decided as on a site that needs none.

    Raises
    ------
    ValidationError
        With every problem at once (no or several sites, an unknown ground, a ground
        that does not fit a permitted or unpermitted site or a permit not in force, a ground
        without a permit by an address alone, no reasons, a date in the future); nothing is
        written then.
    ProfileError
        If the profile lacks ``[enforcement.grounds]``.
    """
    who = _who(who)
    known = enforcement_grounds(reg.profile.tables)
    src = "enforcement case"
    problems: list[Problem] = []

    def bad(message: str, fix: str) -> None:
        problems.append(Problem(src, None, message, fix))

    given = [x for x in (permit_number, site_layer, address) if x]
    if len(given) != 1:
        bad(
            "give exactly one site: a permit, a screened site, or an address.",
            "give permit_number=, site_layer= or address=.",
        )
    if ground not in known:
        bad(f"ground {ground!r} is not one the profile lists.", f"use one of {', '.join(known)}.")
    if not (reasons or "").strip():
        bad("the reasons are empty.", "give the written reasons (reasons=).")
    if on is None:
        bad("the case has no date.", "give on=YYYY-MM-DD.")
    problems += reg._date_problems(src, EffectiveDate("on=", on))
    site = None
    permit = None
    notes: list[str] = []  # what the case rests on that the office should know (said once, when it opens)
    if permit_number:
        try:
            permit = reg.get(permit_number)
        except PermitNotFoundError:
            bad(f"there is no permit {permit_number!r} in the registry.", "check the number (`permits list`).")
    if site_layer is not None:
        site, ref_problems = _screened_site(reg, site_layer, site_id, ground, notes)
        problems += [Problem(str(site_layer), None, m, f) for m, f in ref_problems]
    g = known.get(ground, {})
    problems += _address_problems(reg, known, ground, src, alone=[address] == given)
    site_problems, condition_text = _permit_ground_problems(reg, known, ground, permit, condition, src, on, notes)
    problems += site_problems
    if any(p.message.startswith(_NO_PERMIT_NEEDED) for p in site_problems):
        pass  # the site needs no permit: whether the permit is in force says nothing more
    elif g.get("without_permit") and permit is not None and on is not None:
        # Work on an application never issued, after a revocation or the closing, or after the
        # period ran out, is work without a permit: whenever the permit is not in force.
        fits, deemed = _without_permit(reg, permit, on)
        if fits is None and deemed is not None:
            action = f"ground {ground} (activity without a permit) does not fit permit {permit_number}"
            bad(f"{_deemed_words(reg, deemed, action)}.", "use another ground (A3, A4).")
        elif fits is None:
            bad(
                f"ground {ground} is activity without a permit, but the case names permit {permit_number} "
                f"({_permit_text(permit)}); {_fits(without_permit_terms(reg.profile.tables))}.",
                "use another ground.",
            )
    else:
        problems += _ground_problems(g, ground, permit_number, src)
    if problems:
        raise ValidationError(problems)
    reasons = _naming_condition(reasons, condition, condition_text)
    case = _open_case(reg, ground, on, reasons, permit_number, site_layer, site_id, address, site, who)
    return replace(case, notes=tuple(notes)) if notes else case


def _address_problems(
    reg: Registry, known: dict[str, dict[str, Any]], ground: str, src: str, *, alone: bool
) -> list[Problem]:
    """Return why ``ground`` does not fit a case opened by an address alone (``alone``; empty: it fits).

    § 540-12A(1)'s order rests on "pursuant to § 540-4A ... a permit is required": an address
    measures nothing, so the toolkit has no decision to rest a ground without a permit
    (``without_permit``) on (finding ``enforcement_site_undecided``).

    Raises
    ------
    ProfileError
        If the profile lacks the finding ``enforcement_site_undecided``.
    """
    g = known.get(ground, {})
    if not alone or not g.get("without_permit"):
        return []
    f = reg.profile.finding("enforcement_site_undecided", ground=ground, ground_section=g["section"])
    other = [k for k, v in known.items() if not v.get("without_permit") and not v.get("needs_permit")]
    fix = (
        "open the case on the site's screening row (site_layer=FILE site_id=ID, as esc-gis screen wrote it) "
        "or on its application (permit_number=)" + (f", or by address= on ground {', '.join(other)}." if other else ".")
    )
    return [Problem(src, None, f"{f.message} ({f.section}; basis {f.basis}).", fix)]


def _permit_ground_problems(
    reg: Registry,
    known: dict[str, dict[str, Any]],
    ground: str,
    permit: Permit | None,
    condition: str | int | None,
    src: str,
    day: date | None = None,
    notes: list[str] | None = None,
) -> tuple[list[Problem], str | None]:
    """Return why ``ground`` does not fit the permit's site or names no condition of it, and the condition's text."""
    if ground not in known:
        return [], None
    site = _site_problems(reg, permit, ground, src, day, notes) if permit is not None else []
    if site:
        return site, None
    if permit is not None:
        # A ground on the plan or the conditions rests on a permit issued and in force that day.
        late = _in_force_problems(reg, known, ground, permit, day, src)
        if late:
            return late, None
    text, found = _condition_named(reg, known[ground], ground, permit, condition, src)
    return found, text


def _naming_condition(reasons: str | None, number: str | int | None, text: str | None) -> str | None:
    """Return the case's reasons, saying first which condition is not met (its one row and log line hold them)."""
    if text is None:
        return reasons
    return f"condition {str(number).strip().upper()} not met ({text}): {(reasons or '').strip()}"


#: How a refusal of a ground on a site that needs no permit (or the article does not reach) begins.
_NO_PERMIT_NEEDED = "the site of permit "


def _site_problems(
    reg: Registry, permit: Permit, ground: str, src: str, day: date | None = None, notes: list[str] | None = None
) -> list[Problem]:
    """Return why ``ground`` does not fit ``permit``'s site as the one decision decides it now (empty: it fits).

    The site is decided as `--site-layer` decides a screened one (:meth:`Registry.decide_permit`,
    the screening function, then a recorded § 540-4A(1)(c) determination), and the ground is
    judged on it by the one rule :func:`_ground_on_site`. A site the article does not reach
    fits no ground (the screening's reason).

    Raises
    ------
    ProfileError
        If ``[enforcement.where_no_permit_required]`` is malformed.
    """
    try:
        d = reg.decide_permit(permit)
    except ValidationError as exc:
        return [
            Problem(src, None, f"{_NO_PERMIT_NEEDED}{permit.permit_number}: {p.message}", p.fix or "check the site.")
            for p in exc.problems
        ]
    determined = permit.state.determination if permit.state is not None else None
    found = _ground_on_site(
        reg,
        d,
        ground,
        subject=f"{_NO_PERMIT_NEEDED}{permit.permit_number} needs no permit",
        issued=permit.status in ISSUED,
        determined=None if determined is None else determined["on"],
        day=day,
        permit_number=permit.permit_number,
        notes=notes,
    )
    return [] if found is None else [Problem(src, None, *found)]


def _ground_on_site(
    reg: Registry,
    d: dict[str, Any],
    ground: str,
    *,
    subject: str,
    issued: bool = False,
    determined: date | None = None,
    day: date | None = None,
    permit_number: str | None = None,
    notes: list[str] | None = None,
) -> tuple[str, str] | None:
    """Return why ``ground`` does not fit a site decided ``d`` (the message and its fix; None: it fits).

    The one rule both doors ask (`--permit` and `--site-layer`): a site that needs a permit fits
    every ground; one that needs none fits only the grounds ``[enforcement.where_no_permit_required]``
    lets (its words, section, basis), and those it lets where a permit is in an issued state
    (``fits_issued``, ``issued``) on such a permit. A site required only by a determination
    (``determined``, its day) needed no permit on a ``day`` before it (finding
    ``determination_later``): it is decided so for that day. ``subject`` begins the message. A ground
    that rests on the site needing a permit, on a site decided on its whole area because nobody drew
    its limits, fits with a note appended to ``notes`` (finding ``enforcement_assumed_area``).

    Raises
    ------
    ProfileError
        If ``[enforcement.where_no_permit_required]`` is malformed.
    """
    # The determination makes the site required from its day on, not before (§ 540-4A(1)(c) "if the
    # administering authority determines"): a case dated earlier is on a site that needed none.
    late = bool(d.get("determined")) and determined is not None and day is not None and day < determined
    rule = where_no_permit_required(reg.profile.tables).get(ground)
    if d["permit_decision"] == "required" and not late:
        if notes is not None and d.get("whole_site") and not d.get("determined") and rule is not None and not rule.fits:
            # The ground rests on "a permit is required", decided on an area nobody measured: say so.
            f = reg.profile.finding("enforcement_assumed_area", sqft=float(d["disturbed_sqft"]), ground=ground)
            notes.append(f"{f.message} ({f.section}; basis {f.basis}).")
        return None
    if rule is None or rule.fits or (rule.fits_issued and issued):
        return None
    fitting = [k for k, r in where_no_permit_required(reg.profile.tables).items() if r.fits]
    other = f"use another ground ({', '.join(fitting)})" if fitting else "use another ground"
    exempt = d.get("npdes_small")
    if late:
        assert determined is not None
        f = reg.profile.finding("determination_later", determined=determined, day=day)
        why = f"; {f.message} ({f.section})"
        decision = "not_required"
        fix = f"date the case on or after {determined}, or {other}."
    else:
        why = "; exempt from an NPDES permit" if exempt else "; no determination that it needs one is recorded"
        decision = d["permit_decision"]
        if exempt:
            fix = f"{other}."
        elif permit_number is not None:
            fix = (
                f"{other}, or record the administering authority's determination that a permit is needed "
                f"(determine permit {permit_number} with on=DATE and reasons=TEXT)."
            )
        else:
            fix = (
                f"{other}, re-screen the site, or add it as an application from its screening output and "
                "record the administering authority's determination that a permit is needed (permits determine)."
            )
    return (
        f"{subject} (screening: permit {decision}, {d['plan_disturbed_sqft']:,.0f} sq ft{why}): ground {ground} "
        f"does not fit it: {rule.text} ({rule.section}; basis {rule.basis}).",
        fix,
    )


def _condition_named(
    reg: Registry, g: dict[str, Any], ground: str, permit: Permit | None, condition: str | int | None, src: str
) -> tuple[str | None, list[Problem]]:
    """Return the text of the condition a case on ``ground`` names, or the problems (none named, no such one).

    A ground that ``names_condition`` (the conditions of the permit not met) names one of the
    conditions every issued permit is subject to, by its code (the profile's
    ``[enforcement.standing_conditions]``: ``E1``...), or one recorded on the permit (§ 540-8F,
    § 540-8G) by its number; another ground names none.
    """
    if not g.get("names_condition"):
        if condition is None:
            return None, []
        return None, [
            Problem(src, None, f"ground {ground} is not about a condition of the permit.", "leave out condition=.")
        ]
    if permit is None:
        return None, []  # the ground needs a permit: said by its own problem
    standing = standing_conditions(reg.profile.tables)
    conditions = permit.state.permit_conditions if permit.state is not None else []
    named = None if condition is None else str(condition).strip().upper()
    if named in standing:
        c = standing[named]
        return f"{c.text} ({c.section})", []
    if named is not None and named.isdigit() and 1 <= int(named) <= len(conditions):
        return conditions[int(named) - 1]["text"], []
    listed = (
        "; ".join(
            [f"{c.code}. {c.text} ({c.section})" for c in standing.values()]
            + [f"{i}. {c['text']} ({c['on']})" for i, c in enumerate(conditions, start=1)]
        )
        or "none is recorded"
    )
    f = reg.profile.finding("enforcement_no_condition", listed=listed)
    fix = (
        "give condition= with one of them."
        if conditions or standing
        else f"record it first (esc-gis permits condition REGISTRY {permit.permit_number} TEXT)."
    )
    said = f"there is no condition {condition}; " if condition is not None else ""
    return None, [Problem(src, None, f"{said}{f.message} ({f.section}).", fix)]


def _without_permit(reg: Registry, permit: Permit, day: date) -> tuple[str | None, date | None]:
    """Return which ``[enforcement.without_permit]`` term makes ``permit`` no permit on ``day``, and its deemed day.

    :func:`_not_in_force`'s reason, where the profile's terms hold it.

    Raises
    ------
    ProfileError
        If ``[enforcement.without_permit]`` or the decision period is malformed.
    """
    why, deemed = _not_in_force(reg, permit, day)
    return (why if why in without_permit_terms(reg.profile.tables) else None), deemed


def _not_in_force(reg: Registry, permit: Permit, day: date) -> tuple[str | None, date | None]:
    """Return why ``permit`` is no permit in force on ``day`` (None: it is), and the day an approval is deemed.

    The one rule (:func:`~esc_gis.registry.domain.enforcement.not_in_force`) for the grounds
    without a permit and those that rest on one. An application whose decision period ran out
    is approved (§ 540-8C(5)), recorded or not
    (:func:`~esc_gis.registry.domain.deadlines.deemed_approved_by`): it is taken as the deemed
    approval it is, issued on the day the period ran out, with that permit's period. The second
    value is that day (None: no approval is deemed).

    Raises
    ------
    ProfileError
        If the decision period is malformed.
    """
    deemed = deemed_approved_by(permit.status, permit.state, day, reg.calendar, reg.profile)
    if deemed is None:
        ever = _ever_issued(permit.state)
        issued_on = permit.state.issued_on if permit.state is not None else None
        return not_in_force(permit.status, permit.expires_on, day, ISSUED, ever_issued=ever, issued_on=issued_on), None
    expires = reg._expiry(deemed, permit.building_permit_expires, list(permit.extensions_days))
    return not_in_force("deemed_approved", expires, day, ISSUED, ever_issued=True), deemed


def _in_force_problems(
    reg: Registry, known: dict[str, dict[str, Any]], ground: str, permit: Permit, day: date | None, src: str
) -> list[Problem]:
    """Return why ``ground``, one that rests on a permit in force (``in_force``), does not fit ``permit`` on ``day``.

    § 540-8E's conditions are those of "All permits issued under this article", and a plan is
    approved with the permit (§ 540-8C(2)): on an application never issued, or a permit revoked,
    closed or past its period on the case's day, the grounds on the plan and the conditions
    do not fit; work there without a permit is the ground without one (the profile's finding
    ``enforcement_not_in_force``, with the ``[enforcement.without_permit]`` term that says why
    the permit is none, where the profile has it).

    Raises
    ------
    ProfileError
        If the profile lacks the finding ``enforcement_not_in_force``.
    """
    g = known.get(ground, {})
    if not g.get("in_force") or day is None:
        return []
    why, _ = _not_in_force(reg, permit, day)
    if why is None:
        return []
    term = without_permit_terms(reg.profile.tables).get(why)
    said = _permit_text(permit) + (f"; {term[0]} ({term[1]}; basis {term[2]})" if term else "")
    without = [k for k, v in known.items() if v.get("without_permit")]
    other = [k for k, v in known.items() if not v.get("without_permit") and not v.get("needs_permit")]
    f = reg.profile.finding(
        "enforcement_not_in_force",
        ground=ground,
        ground_text=g["text"],
        ground_section=g["section"],
        permit=permit.permit_number,
        day=day,
        state=said,
        without=", ".join(without) or "none",
        without_section=", ".join(known[k]["section"] for k in without) or "-",
    )
    fix = "use another ground" + (f" ({', '.join([*without, *other])})." if without or other else ".")
    return [Problem(src, None, f"{f.message} ({f.section}; basis {f.basis}).", fix)]


def _deemed_words(reg: Registry, deemed: date, action: str) -> str:
    """Say why ``action`` is refused on an application deemed approved on ``deemed`` (the profile's words)."""
    f = reg.profile.finding("deemed_approval_in_force", due=deemed, action=action)
    return f"{f.message} ({f.section}; basis {f.basis})"


def _ground_problems(g: dict[str, Any], ground: str, permit_number: str | None, src: str) -> list[Problem]:
    """Return the problems of a ground that does not fit the case's site (permitted or not)."""
    problems: list[Problem] = []

    def bad(message: str, fix: str) -> None:
        problems.append(Problem(src, None, message, fix))

    if g.get("without_permit") and permit_number:
        bad(
            f"ground {ground} is activity without a permit, but the case names permit {permit_number}.",
            "use another ground.",
        )
    if g.get("needs_permit") and not permit_number:
        bad(
            f"ground {ground} is about a permit's plan or conditions; the case names no permit.", "give permit_number=."
        )
    return problems


def _open_case(
    reg: Registry,
    ground: str,
    on: date | None,
    reasons: str | None,
    permit_number: str | None,
    site_layer: str | os.PathLike[str] | None,
    site_id: str | None,
    address: str | None,
    site: shapely.Geometry | None,
    who: str,
) -> EnforcementCase:
    """Write a checked case and its opening event in one transaction."""
    assert on is not None
    b = reg.backend
    now = now_utc()
    ref = f"{Path(site_layer).name}#{site_id}" if site_layer is not None else None
    with b.write() as cur:
        if permit_number:
            reg._locked(cur, permit_number)
        case_id = next_number(cur, b, "enforcement_cases", "case_id", reg.profile.case_number, on.year)
        # The case as opened: its projection's row.
        site_facts: dict[str, Any] = {
            "site_address": (address or "").strip() or None,
            "site_ref": ref,
            "reasons": (reasons or "").strip(),
            "site": wkb(site),
        }
        said = f"ground {ground}: {(reasons or '').strip()}"
        if permit_number:
            # On the permit's stream, with its line in the clerk's log; the case's log keeps its own words.
            reg._event(
                cur,
                permit_number,
                Event(now, who, "enforcement", None, None, on, None, f"case {case_id} opened"),
                case_id=case_id,
                ground=ground,
                case_detail=said,
                **site_facts,
            )
        else:
            _case_event(reg, cur, case_id, "opened", on, who, now, detail=said, stream=case_id, ground=ground,
                             **site_facts)  # fmt: skip
    return reg.case(case_id)


def _screened_site(
    reg: Registry, path: str | os.PathLike[str], site_id: str | None, ground: str, notes: list[str] | None = None
) -> tuple[shapely.Geometry | None, list[tuple[str, str]]]:
    """Read one site of a screening output; refuse it unless ``ground`` fits the site as decided anew.

    The site is decided by the screening function (:meth:`Registry.decide_screened`) and the
    ground judged on it by the rule `--permit` asks (:func:`_ground_on_site`): where it needs no
    permit, only the grounds ``[enforcement.where_no_permit_required]`` lets fit (A4, not A1).
    """
    import pyogrio

    if not site_id:
        return None, [("no site id is given.", "give site_id=.")]
    try:
        layers = [str(r[0]) for r in pyogrio.list_layers(path)]
        layer = "screening" if "screening" in layers else layers[0]
        frame = gpd.read_file(path, layer=layer)
    except Exception as exc:  # pyogrio raises several kinds for a bad file
        from esc_gis.io import unreadable_reason

        # The readers' words for a file that is no layer, never GDAL's or Python's (issue 34).
        why, _ = unreadable_reason(Path(path), exc)
        return None, [(why, "give the file `esc-gis screen` wrote.")]
    missing = [c for c in ("site_id", "permit") if c not in frame.columns]
    if missing:
        return None, [(f"has no {', '.join(missing)} column.", "give the file `esc-gis screen` wrote.")]
    row = frame[frame["site_id"].astype(str) == str(site_id)]
    if row.empty:
        return None, [(f"has no site {site_id!r}.", "check the site id.")]
    if frame.crs is None:
        return None, [("has no CRS.", "give the file `esc-gis screen` wrote.")]
    from esc_gis.crs import coordinates_refusal

    # The readers' one check: a site whose coordinates its CRS cannot hold would be stored nowhere.
    refusal = coordinates_refusal(frame.total_bounds, frame.crs, what=f"its layer {layer}")
    if refusal is not None:
        why, _, fix = refusal.partition(" Fix: ")
        return None, [(why, fix)]
    # Decided again as `permits add` would decide it, by the screening function on the row's
    # limits, plan and flags (issue 34): not taken on trust from the file's permit column.
    try:
        d = reg.decide_screened(row.iloc[:1], frame.drop(index=row.index[:1]), str(path))
    except ValidationError as exc:
        return None, [(p.message, p.fix) for p in exc.problems]
    # The same per-ground rule `--permit` asks (one function): A1 does not fit a site that needs no
    # permit, A4 does (§ 540-4A(1)(b): such a site "shall comply with ... § 540-7A").
    found = _ground_on_site(reg, d, ground, subject=f"site {site_id} does not need a permit", notes=notes)
    if found is not None:
        return None, [found]
    geom = _as_multi(reg._to_registry_crs([row.geometry.iloc[0]], [frame.crs])[0])
    # A site a permit already covers has a permit: the case is the permit's.
    # The one rule of "the same site" (domain/overlap.py), at any overlap: the case is the permit's.
    from esc_gis.registry.domain.overlap import same_site

    covering = [p.permit_number for p in reg.permits() if same_site(geom, None, p.site, p.parcel_id, share=0.0)]
    if covering:
        return None, [
            (
                f"site {site_id} lies on the site of permit {', '.join(covering)}.",
                "open the case on the permit (permit_number=).",
            )
        ]
    return geom, []


def _case_event(
    reg: Registry,
    cur: Any,
    case_id: str,
    kind: str,
    on: date,
    who: str,
    at: datetime,
    *,
    costs: float | None = None,
    costs_from: str | None = None,
    detail: str | None = None,
    stream: str | None = None,
    **data: Any,
) -> None:
    """Append a case's typed event to ``stream``'s history: its projection writes the case's log line.

    ``stream`` is None where the caller records the fact in the history itself (a permit's
    move that the case's order made, with its ``case_detail``): nothing is appended then.
    """
    if stream is None:
        return
    facts: dict[str, Any] = {"case_id": case_id, **data}
    if kind == "paid":
        facts.update(amount=costs)
    elif kind == "costs" or (kind == "notice" and costs is not None):  # a notice may carry the costs
        facts.update(amount=costs, recovered_from=costs_from)
    elif costs_from is not None:  # said without costs: the case's log keeps it, as it always did
        facts["costs_from"] = costs_from
    if kind in _CASE_MOVES:  # a case without a permit: its own order, from the case's state
        facts.update(_CASE_MOVES[kind])
    reg._append(cur, HistoryEvent(stream, CASE_KINDS[kind], at, who, on=on, why=detail, data=facts))


def case_action(
    reg: Registry,
    case_id: str,
    kind: str,
    *,
    on: date | None,
    who: str | None = None,
    reasons: str | None = None,
    costs: float | None = None,
    costs_from: str | None = None,
    guarantee_id: int | None = None,
    interest: float | None = None,
) -> EnforcementCase:
    """Record an event of a case: notice, stop-work order, notice of intent, costs, referral, retraction, closing.

    ``notified``: the administering authority notified the responsible party to cease; on a
    site without a permit a referral comes "after being notified" (§ 540-12C), or after a
    stop-work order. ``interest``: the interest billed with the costs, at the Village
    Board's rate (§ 540-12E; the ordinance gives no rate). ``paid``: what the responsible
    party paid of the costs and interest billed (``costs``, the amount). ``costs_from=
    "special_assessment"``: the amount due that the responsible party failed to pay, entered
    on the tax rolls (§ 540-12E), at most the costs and interest billed and not yet paid or
    assessed.

    Costs recovered from the guarantee (§ 540-12E: "The costs ... plus interest ... recovered
    from the surety bond, cash escrow, or irrevocable letter of credit"), with their interest,
    come off that guarantee's balance, so its final release is net of them (§ 540-8D(1)):
    ``guarantee_id`` names it, or the permit's one guarantee still held is taken.

    On a permitted site a stop-work order moves the permit to ``stop_work`` and a
    retraction moves it back to the state before, with the written reasons the life
    cycle requires, in the same transaction. A case of work without a permit on a
    permit's site (none in force: ``[enforcement.without_permit]``) has its own order on
    the case's stream, and the permit's state is left as it is.

    Raises
    ------
    ValidationError
        With every problem at once; nothing is written then.
    RegistryError
        If there is no such case.
    """
    who = _who(who)
    case = reg.case(case_id)
    # A case of work without a permit on a permit's site (no permit in force there) has an
    # order of its own, on the case's stream: the permit's state is the permit's.
    own = _own_order(reg, case)
    # The permit's orders, whichever route posted or lifted them, are the case's too: `case`
    # reads them off the permit's history (case.permit_order).
    deemed_problems: list[str] = []
    if case.permit_number and on is not None and kind in _NO_PERMIT_ACTIONS:
        # § 540-8C(5): an application whose period ran out is approved, recorded or not. A case of
        # work without a permit on it has no ground left for an order, a notice to cease or a
        # referral; on another case the permit counts as issued (§ 540-12C "where no permit has
        # been issued" no longer fits: a referral follows a violated order).
        fits, deemed = _without_permit(reg, reg.get(case.permit_number), on)
        if deemed is not None and own and fits is None:
            action = f"no {_NO_PERMIT_ACTIONS[kind]} rests on work without a permit on it"
            deemed_problems.append(f"{_deemed_words(reg, deemed, action)}.")
        elif deemed is not None:
            case = replace(case, permit_issued=True)
    due = _billed_due(reg, case) if costs_from == "special_assessment" or kind == "paid" else 0.0
    refusals = {
        code: f"{f.message} ({f.section})"
        for code, f in (
            (c, reg.profile.finding(c, amount=f"{costs or 0:,.2f}", due=f"{due:,.2f}"))
            for c in ("referral_not_notified", "referral_no_order", "special_assessment_over_due")
        )
    }
    messages = check_action(
        case,
        kind,
        on,
        costs=costs,
        costs_from=costs_from,
        today=reg.profile.today(),
        refusals=refusals,
        interest=interest,
        billed_due=due,
    )
    messages += deemed_problems
    if case.permit_number and own and on is not None and kind in _NO_PERMIT_ACTIONS:
        # § 540-12A(1): an order (or a notice, a referral) resting on work without a required
        # permit needs a site that requires one, decided now as the case's opening was.
        found = _site_problems(reg, reg.get(case.permit_number), case.ground, case_id, on)
        messages += [f"no {_NO_PERMIT_ACTIONS[kind]} on this case: {p.message}" for p in found]
    needs = reg.written_reasons
    move = {"stop_work": "stop_work", "retraction": "retraction"}.get(kind)
    permit = reg.get(case.permit_number) if case.permit_number and move and not own else None
    if move and move in needs and not (reasons or "").strip():
        messages.append(f"a {kind.replace('_', '-')} needs written reasons ({needs[move]}).")
    if permit is not None:
        messages += _permit_move_problems(permit, kind, reasons, needs)
    recovered_from = None
    if kind in ("notice", "costs") and costs is not None and costs_from == "guarantee":
        # § 540-12E: "The costs ... plus interest" are what the guarantee gives up.
        recovered_from, shortfalls = _guarantee_for_costs(reg, case, costs + (interest or 0.0), guarantee_id)
        messages += shortfalls
    if messages:
        raise ValidationError(
            [Problem(case_id, None, m, "see the case with `esc-gis permits case`.") for m in messages]
        )
    assert on is not None
    now = now_utc()
    text = (reasons or "").strip() or None
    # The case's table has no interest column: its log line says it; the history holds the amount.
    said = "; ".join(x for x in (f"interest {interest:,.2f}" if interest is not None else None, text) if x)
    with reg.backend.write() as cur:
        if permit is not None:
            p = reg._locked(cur, permit.permit_number)
            if kind == "stop_work":
                to = "stop_work"
                check_transition(p.status, to, reasons=text, needs=needs)
                reg._check_order(p, on, to)
                ev = "transition"
            else:
                to = check_back(p.status, "retraction", p.previous_status, reasons=text, needs=needs)
                reg._check_order(p, on, to)
                ev = "retraction"
            reg._event(
                cur,
                p.permit_number,
                Event(now, who, ev, p.status, to, on, None, f"case {case_id}: {text}"),
                case_id=case_id,
                # The case's log line of the move, in the case's words.
                case_detail=said or None,
            )
        # The fact goes once into the history: a permit's move above, or the case's own event
        # on the permit's stream (or on the case's, without a permit).
        stream = None if permit is not None else (case.permit_number or case_id)
        if own and recovered_from is None:
            stream = case_id  # costs from the guarantee go where the guarantee is: the permit's stream
        facts: dict[str, Any] = {} if recovered_from is None else {"guarantee_id": recovered_from}
        if recovered_from is not None:
            # The guarantees list shows the recovery beside its draws and releases: the
            # projection of the one costs event, which verify checks against its balance.
            (facts["recovery_id"],) = reg.backend.next_ids(cur, "guarantee_events")
        if interest is not None:
            facts["interest"] = interest
        _case_event(
            reg,
            cur,
            case_id,
            kind,
            on,
            who,
            now,
            costs=costs,
            costs_from=costs_from,
            detail=said or None,
            stream=stream,
            **facts,
        )
    return reg.case(case_id)


def _permit_move_problems(permit: Permit, kind: str, reasons: str | None, needs: dict[str, str]) -> list[str]:
    """Return why the permit's life cycle refuses a case's stop-work order or retraction (none: it allows it).

    Raises
    ------
    Nothing; the refusal is returned, with the other problems of the action.
    """
    try:
        if kind == "stop_work":
            check_transition(permit.status, "stop_work", reasons=reasons or "-", needs=needs)
        else:
            check_back(permit.status, "retraction", permit.previous_status, reasons=reasons or "-", needs=needs)
    except IllegalTransitionError as exc:
        return [f"permit {permit.permit_number}: {exc}"]
    return []


def _own_order(reg: Registry, case: EnforcementCase) -> bool:
    """Whether ``case``'s order is its own though it names a permit (work without a permit on its site)."""
    ground = enforcement_grounds(reg.profile.tables).get(case.ground, {})
    return bool(case.permit_number) and bool(ground.get("without_permit"))


def _billed_due(reg: Registry, case: EnforcementCase) -> float:
    """Return the costs and interest billed on ``case`` and not yet paid nor assessed (on the tax rolls).

    Read from the history of the case's streams.
    """
    streams = {x for x in (case.permit_number, case.case_id) if x}
    with reg.backend.read() as cur:
        states = [reg._state(cur, st) for st in streams]
    entries = [c for s in states for c in s.costs if c.get("case_id") == case.case_id]
    paid = sum(float(x["amount"]) for s in states for x in s.payments if x["case_id"] == case.case_id)
    billed = sum(
        float(c["amount"]) + float(c.get("interest") or 0.0) for c in entries if c["recovered_from"] == "billed"
    )
    assessed = sum(float(c["amount"]) for c in entries if c["recovered_from"] == "special_assessment")
    return round(billed - assessed - paid, 2)


def _guarantee_for_costs(
    reg: Registry, case: EnforcementCase, costs: float, guarantee_id: int | None
) -> tuple[int | None, list[str]]:
    """Return the guarantee costs are recovered from, read off the permit's state, or the problems."""
    if case.permit_number is None:
        return None, ['costs are recovered from a guarantee only on a permit\'s site; bill them (costs_from="billed").']
    held = {i: g for i, g in reg.get(case.permit_number).state.guarantees.items() if g.balance > 0}
    if guarantee_id is None and len(held) == 1:
        guarantee_id = next(iter(held))
    if guarantee_id is None:
        listed = ", ".join(f"#{i} ({g.balance:,.2f} held)" for i, g in held.items()) or "none is held"
        return None, [f"say which guarantee the costs come from (guarantee_id=ID): {listed}."]
    g = held.get(guarantee_id)
    if g is None:
        return None, [f"guarantee #{guarantee_id} of permit {case.permit_number} holds nothing to recover from."]
    if costs > g.balance + 0.005:
        return None, [
            f"the costs (with interest) of {costs:,.2f} are more than the {g.balance:,.2f} "
            f"guarantee #{guarantee_id} holds."
        ]
    return guarantee_id, []


def case(reg: Registry, case_id: str) -> EnforcementCase:
    """Return one enforcement case with its events.

    Raises
    ------
    RegistryError
        If there is no such case.
    """
    found = reg.cases(case_id=case_id)
    if not found:
        msg = f"There is no enforcement case {case_id!r} in the registry (`esc-gis permits cases` lists them)."
        raise RegistryError(msg)
    return found[0]


def cases(reg: Registry, *, case_id: str | None = None, permit_number: str | None = None) -> list[EnforcementCase]:
    """Return the enforcement cases (all, one, or a permit's), oldest first, with their events."""
    b = reg.backend
    where: str = ""
    params: tuple[str, ...] = ()
    if case_id is not None:
        where, params = f"WHERE case_id = {b.ph}", (case_id,)
    elif permit_number is not None:
        where, params = f"WHERE permit_number = {b.ph}", (permit_number,)
    with b.read() as cur:
        cur.execute(
            "SELECT case_id, permit_number, site_address, site_ref, ground, opened_on, reasons, opened_by, "
            f"{b.geom_column('geom', 'site')} FROM enforcement_cases {where} ORDER BY fid",
            params,
        )
        found = list(rows(cur))
        # The permits' histories: whether an order stands for each case, and whether a permit was issued.
        states = {n: reg._state(cur, n) for n in {r["permit_number"] for r in found if r["permit_number"]}}
        cur.execute(
            "SELECT id, case_id, kind, on_date, who, at, costs, costs_from, detail FROM enforcement_events "
            "WHERE kind <> 'opened' ORDER BY id"
        )
        events: dict[str, list[CaseEvent]] = {}
        for r in rows(cur):
            events.setdefault(r["case_id"], []).append(
                CaseEvent(
                    int(r["id"]),
                    r["kind"],
                    b.load("date", r["on_date"]),
                    r["who"],
                    b.load("datetime", r["at"]),
                    None if r["costs"] is None else float(r["costs"]),
                    r["costs_from"],
                    r["detail"],
                )
            )
    known = enforcement_grounds(reg.profile.tables)
    out = []
    for r in found:
        opened_on = b.load("date", r["opened_on"])
        ps = states.get(r["permit_number"])
        # A case of work without a permit has its own order; another case on a permit, the permit's.
        own = ps is None or bool(known.get(r["ground"], {}).get("without_permit"))
        out.append(
            EnforcementCase(
                r["case_id"],
                r["permit_number"],
                r["site_address"],
                r["site_ref"],
                r["ground"],
                opened_on,
                r["reasons"],
                r["opened_by"],
                b.stored_geom(r["site"]),
                tuple(events.get(r["case_id"], ())),
                permit_order=None
                if own or ps is None
                else order_state(ps.orders_posted, opened_on, ps.case_seq.get(r["case_id"])),
                permit_issued=ps is not None and _ever_issued(ps),
            )
        )
    return out


#: The case actions that rest on there being no permit (§ 540-12A(1), § 540-12C), and their names.
_NO_PERMIT_ACTIONS = {"stop_work": "stop-work order", "notified": "notice to cease", "referral": "referral"}


def _ever_issued(s: PermitState) -> bool:
    """Whether a permit was ever issued on a stream (§ 540-12C "where no permit has been issued")."""
    return s.issued_on is not None or s.status in (*ISSUED, "revoked")


def _permit_text(p: Any) -> str:
    """Say a permit's state and period, as a refusal of a ground without a permit reads it."""
    return f"it is {p.status}" + (f", valid to {p.expires_on}" if p.expires_on is not None else "")


def _fits(terms: dict[str, tuple[str, str, str]]) -> str:
    """Say when a ground without a permit fits a permitted site (the profile's words), or that it never does."""
    if not terms:
        return "the profile lets no permit be treated as none"
    return "it fits a permit only where " + "; or ".join(f"{t} ({s}; basis {b})" for t, s, b in terms.values())
