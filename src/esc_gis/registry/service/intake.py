"""Intake: applications and imported layers, checked, measured, numbered and inserted.

Every application is checked in full, then measured with the screening engine (this module is
the registry's adapter to :func:`esc_gis.screening.screen`), numbered, and inserted in one
transaction.
"""

from __future__ import annotations

__all__ = ["add", "add_many", "decide_permit", "decide_screened", "import_frame", "remeasure"]

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from esc_gis._lazy import lazy_module
from esc_gis.errors import (
    EscGisWarning,
    Problem,
    ValidationError,
)
from esc_gis.registry.domain.dates import EffectiveDate, date_problems
from esc_gis.registry.domain.deadlines import deemed_approved_by
from esc_gis.registry.domain.events import typed
from esc_gis.registry.domain.lifecycle import STATES
from esc_gis.registry.domain.records import OTHER_AUTHORIZATIONS, Application, Event, Permit
from esc_gis.registry.service._core import (
    _DECIDED,
    _MEASURED,
    _PERMIT_FIELDS,
    ISSUED,
    _as_multi,
    _who,
)
from esc_gis.registry.store.attachments import store_parties
from esc_gis.registry.store.backend import now_utc
from esc_gis.registry.store.numbering import assign_numbers, taken_numbers
from esc_gis.registry.store.projection import FACTS, wkb

if TYPE_CHECKING:
    import geopandas as gpd
    import numpy as np
    import pandas as pd
    import shapely

    from esc_gis.registry.service.registry import Registry
else:
    # Loaded on first use: listing, showing and the due dates start without them.
    gpd = lazy_module("geopandas")
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    shapely = lazy_module("shapely")

#: The states of an application the office has not yet decided (§ 540-8C(1)-(4)): received,
#: waiting for information asked for, under review. Its disturbed limits may be measured anew.
UNDECIDED = ("application_received", "incomplete", "under_review")


def add(reg: Registry, application: Application, *, who: str | None = None, context: Sequence[Application] = ()) -> str:
    """Add one application; return its permit number.

    The application is measured as the screening measures a site (its disturbed area, what of
    it lies in the Village and near protective areas) and decided (permit required or not);
    the history gets its ``received`` event.

    Parameters
    ----------
    reg : Registry
        The registry (bound as :meth:`Registry.add`, so not passed there).
    application : Application
        The application: address, day received, site (and disturbed limits) in any CRS.
    who : str, optional
        Who records it, for the history; default the login name.
    context : sequence of Application, optional
        The other sites of the screening it came from, for its common plan (see
        :meth:`add_many`).

    Returns
    -------
    str
        Its permit number, e.g. ``"ESC-2026-0001"`` (the application's own, when it has one).

    Raises
    ------
    ValidationError
        With every problem in the application (dates, parties, geometry, a site outside
        the Village or otherwise outside the article's reach, a number already taken).
    """
    return reg.add_many([application], who=who, context=context)[0]


def add_many(
    reg: Registry,
    applications: Sequence[Application],
    *,
    who: str | None = None,
    source: str = "application",
    kind: str = "received",
    prior: Sequence[Problem] = (),
    context: Sequence[Application] = (),
) -> list[str]:
    """Add applications in one transaction: all of them, or, on any problem, none.

    ``context`` holds sites measured with them but not added: the rest of the screening
    they came from, so a common plan adds up over the plan-mates the screening added up
    (the registry's own permits on the plan are always added in).

    Returns
    -------
    list of str
        The permit numbers, in input order.

    Raises
    ------
    ValidationError
        With every problem in every application, each naming its row (1-based),
        together with ``prior`` problems (found while reading the rows).
    """
    who = _who(who)
    # Times typed without a zone are the office's (as `permits import` and the CLI pass them).
    applications = [
        replace(a, started_at=reg._office(a.started_at), start_notice_at=reg._office(a.start_notice_at))
        for a in applications
    ]
    applications = _repair_geometry(reg, applications, source)
    problems, drawn = _check_applications(reg, applications, source)
    problems = [*(prior or []), *problems]
    # Measured even when other fields are bad, so one run reports every problem.
    measured = _measure(reg, applications, source, problems, context) if drawn else []
    # A number or a site the registry holds already, with every other problem (issue 46).
    with reg.backend.read() as cur:
        problems.extend(_numbers_taken(reg, cur, applications, source))
        if measured:
            problems.extend(_sites_taken(reg, cur, applications, measured, source)[0])
    if problems:
        raise ValidationError(problems)
    now = now_utc()
    with reg.backend.write() as cur:
        # Asked again in the writing transaction: another clerk may have added them meanwhile.
        # Intake's writers queue here (PostGIS; SQLite has one writer), so each asks after the
        # last one's commit and two clerks cannot both take one site.
        reg.backend.lock_table(cur, "permits")
        taken = _numbers_taken(reg, cur, applications, source)
        if taken:
            raise ValidationError(taken)
        covered, links = _sites_taken(reg, cur, applications, measured, source)
        if covered:
            raise ValidationError(covered)
        numbers = assign_numbers(cur, reg.backend, reg.profile, applications)
        # A link to an earlier row of this import names the number it has just been given.
        earlier = [[numbers[int(x[1:])] if x.startswith("#") else x for x in found] for found in links]
        _insert(reg, cur, numbers, applications, measured, who, now, kind, earlier)
    return numbers


def _numbers_taken(reg: Registry, cur: Any, apps: Sequence[Application], source: str) -> list[Problem]:
    """Return a problem for each application whose permit number the registry holds already."""
    taken = taken_numbers(cur, reg.backend, [a.permit_number for a in apps if a.permit_number])
    return [
        Problem(
            source,
            i + 1,
            f"permit number {a.permit_number!r} is already taken.",
            "leave the number empty to have one assigned, or give a new one.",
            a.permit_number,
        )
        for i, a in enumerate(apps)
        if a.permit_number in taken
    ]


def _sites_taken(
    reg: Registry, cur: Any, apps: Sequence[Application], measured: Sequence[dict[str, Any]], source: str
) -> tuple[list[Problem], list[list[str]]]:
    """Ask the one rule (:mod:`esc_gis.registry.domain.overlap`) of each new site; return the refusals and links.

    Each site is compared with every application and permit in the registry and with the rows
    before it in ``apps``. A new application that would cover its site (one not yet decided, or
    issued and in force) is refused where an earlier record covers it; otherwise it is linked to
    the earlier records on its site whose coverage has ended (disapproved, revoked, closed,
    expired). Links to a row of ``apps`` are ``"#<index>"``.
    """
    from esc_gis.registry.domain.overlap import Earlier, covers, same_parcel, sort_earlier

    profile = reg.profile
    share = float(profile.entry("policy.intake_same_site").value or 0) / 100
    today = profile.today()
    b = reg.backend
    cur.execute(f"SELECT permit_number, status, expires_on, parcel_id, {b.geom_column('geom', 'site')} FROM permits")
    known = {str(r[0]): Earlier(str(r[0]), r[1], b.load("date", r[2]), r[3], b.load_geom(r[4])) for r in cur.fetchall()}
    problems: list[Problem] = []
    links: list[list[str]] = []
    batch: list[Earlier] = []
    for i, (a, m) in enumerate(zip(apps, measured, strict=True)):
        expires = None
        if a.status in ISSUED and a.issued_on is not None:
            expires = reg._expiry(a.issued_on, a.building_permit_expires, [], [e for _, e in a.other_authorizations])
        site = m["site"]
        found = sort_earlier(site, a.parcel_id, [*known.values(), *batch], today, share=share)
        batch.append(Earlier(f"#{i}", a.status, expires, a.parcel_id, site))
        links.append(found.linked)
        if not found.covering or not covers(a.status, expires, today):
            continue  # nothing covers it, or it covers nothing itself (a closed permit's record)
        for number in found.covering:
            other = batch[int(number[1:])] if number.startswith("#") else known[number]
            if same_parcel(a.parcel_id, other.parcel_id):
                why = f"the same parcel {str(a.parcel_id).strip()}"
            else:
                common = site.intersection(other.site).area
                why = f"its boundary overlaps {100 * common / site.area:.0f} % of this site"
            if number.startswith("#"):
                f = profile.finding("registry_site_in_import", row=int(number[1:]) + 1, why=why)
                fix = "import the site once: drop one of the two rows, or correct its boundary or parcel id."
            else:
                state = f"{other.status}" + (f", in force to {other.expires_on}" if other.expires_on else "")
                f = profile.finding("registry_site_covered", covering=f"permit {number} ({state})", why=why)
                # The same work under a new applicant or a changed plan is the earlier record's, not a second one.
                fix = (
                    f"amend the earlier application or permit {number} (permits amend), or transfer it to the new "
                    "applicant if the site changed hands, rather than applying again; or decide or close it first; "
                    "if this is another site, correct its boundary or parcel id."
                )
            problems.append(Problem(source, i + 1, f"{f.message} ({f.section}; {f.basis})", fix, a.permit_number))
    return problems, links


def _check_fields(reg: Registry, a: Application, bad: Callable[..., None]) -> None:
    """Check one application's status, dates and parties."""
    if a.received_on is None:
        bad("received_on is empty.", "give the day the application came in (YYYY-MM-DD).")
    if not (a.site_address or "").strip():
        bad("site_address is empty.", "give the street address of the site.")
    if a.status not in STATES:
        bad(f"status {a.status!r} is not a permit state.", f"use one of {', '.join(STATES)}.")
    elif a.status in ISSUED and a.issued_on is None:
        bad(f"a permit in {a.status} needs issued_on.", "give the date the permit was issued (YYYY-MM-DD).")
    # The one rule for effective dates (domain/dates.py): none after today on the Village's
    # clock, the issuance not before the receipt. building_permit_expires is a day to come.
    for message in date_problems(
        [
            EffectiveDate("received_on", a.received_on),
            EffectiveDate("issued_on", a.issued_on, a.received_on, "received_on"),
            EffectiveDate("started_at", a.started_at),
            EffectiveDate("start_notice_at", a.start_notice_at),
        ],
        reg.profile.today(),
        reg.profile.local(now_utc()),
    ):
        bad(message, "")
    if a.building_permit_expires and a.received_on and a.building_permit_expires < a.received_on:
        bad(
            f"building_permit_expires {a.building_permit_expires} is before received_on {a.received_on}.",
            "check both dates.",
        )
    for name, ends in a.other_authorizations:
        if not str(name).strip():
            bad("an other construction authorization has no name.", "name it (e.g. 'WDNR permit WI-S067831').")
        if a.received_on and ends < a.received_on:
            bad(f"the authorization {name!r} ends {ends}, before received_on {a.received_on}.", "check both dates.")
    if a.started_at and a.issued_on and a.started_at.date() < a.issued_on:
        f = reg.profile.finding("work_before_permit", started=a.started_at.date(), issued=a.issued_on)
        bad(f"{f.message} ({f.section})", "check both dates.")
    if a.status in ("active", "extended", "stop_work") and a.started_at is None:
        bad(f"a permit in {a.status} needs started_at.", "give when land disturbance began.")
    for party in a.parties:
        for message, fix in party.problems():
            bad(message, fix)


def _check_applications(reg: Registry, apps: Sequence[Application], source: str) -> tuple[list[Problem], bool]:
    """Check every application; return the problems, and whether every geometry can be measured."""
    from esc_gis.validate import repair_tolerance_sqft

    problems: list[Problem] = []
    drawn = True
    seen: dict[str, int] = {}
    tolerance = repair_tolerance_sqft(reg.profile)
    for i, a in enumerate(apps, start=1):

        def bad(message: str, fix: str, row: int = i, site: str | None = a.permit_number) -> None:
            problems.append(Problem(source, row, message, fix, site))

        _check_fields(reg, a, bad)
        drawn = _check_geometry(a, bad, tolerance) and drawn
        if a.permit_number:
            if a.permit_number in seen:
                bad(
                    f"permit number {a.permit_number!r} is also on row {seen[a.permit_number]}.",
                    "give each permit its own number.",
                )
            seen.setdefault(a.permit_number, i)
    return problems, drawn


def _measure(
    reg: Registry,
    apps: Sequence[Application],
    source: str,
    problems: list[Problem],
    context: Sequence[Application] = (),
    *,
    remeasured: str | None = None,
) -> list[dict[str, Any]]:
    """Measure and decide every application with the screening function (in the registry's CRS).

    The registry takes no decision of its own (issue 34): each application goes to
    :func:`esc_gis.screening.screen` with the contract fields a screening reads (``plan_id``,
    ``activity``, ``state_agency``, ``npdes_exempt``) and its disturbed limits, so
    jurisdiction (§ 540-4B), the state-agency exclusion (§ 540-4C), the exemptions
    (§ 540-4A(2), (3)), the thresholds and the common plan are the screening's. A site on a
    common plan (``plan_id``) is screened together with the registry's other permits on that
    plan, and with ``context`` (the rest of the screening it came from: its plan-mates not
    yet in the registry), so it is decided on the plan's total disturbance as the screening
    decided it (§ 540-5 CONSTRUCTION SITE); overlapping limits count once. A site the
    article does not reach (outside, a state agency's, agricultural or silviculture
    activity) is a problem: it takes no permit. The plan members' new decisions come back
    under ``"members"`` (first row's dict) for :meth:`_insert` to record. ``remeasured``
    names the registry permit ``apps`` holds anew (:meth:`remeasure`).
    """
    from esc_gis.screening import screen

    n = len(apps)
    plans = sorted({a.plan_id for a in apps if a.plan_id})
    # A permit remeasured is one of the applications: its old limits are not a plan-mate.
    members = [m for m in _plan_members(reg, plans) if m.permit_number != remeasured]
    mates = [c for c in context if c.plan_id in plans]
    others = [*apps, *mates]
    site = reg._to_registry_crs([a.site for a in others], [a.crs for a in others])
    has = np.array([a.disturbed is not None for a in others], dtype=bool)
    limits = reg._to_registry_crs(
        [a.disturbed for a in others if a.disturbed is not None], [a.crs for a in others if a.disturbed is not None]
    )
    everyone: list[Application | Permit] = [*others, *members]
    ids = np.array(
        [f"r{i}" for i in range(n)] + [f"c{k}" for k in range(len(mates))] + [f"e{k}" for k in range(len(members))],
        dtype=object,
    )
    geoms = np.concatenate([site, np.array([m.site for m in members], dtype=object)])
    # A permit's flags are facts of its history (its received event); a state agency's site
    # is never added, so only npdes_exempt is ever found there.
    sites = gpd.GeoDataFrame(
        {
            "site_id": ids,
            "plan_id": pd.Series([a.plan_id for a in everyone], dtype=object),
            "activity": [a.activity or "construction" for a in everyone],
            "state_agency": [_flag(a, "state_agency") for a in everyone],
            "npdes_exempt": [_flag(a, "npdes_exempt") for a in everyone],
        },
        geometry=geoms,
        crs=reg.crs,
    )
    # Screening reads a site missing from a disturbed-limits layer as undisturbed (0 sq ft).
    # A permit without disturbed limits is decided on its whole site (as `permits add`
    # without --disturbed is), so once any site has limits, the others' sites stand in.
    d_geoms = np.array(geoms, dtype=object)
    k = len(others)
    d_geoms[:k][has] = limits
    m_has = np.array([m.disturbed is not None for m in members], dtype=bool)
    d_geoms[k:][m_has] = [m.disturbed for m in members if m.disturbed is not None]
    any_limits = bool(has.any() or m_has.any())
    disturbed = gpd.GeoDataFrame({"site_id": ids}, geometry=d_geoms, crs=reg.crs) if any_limits else None
    try:
        out = screen(sites, disturbed=disturbed, layers=reg.layers, profile=reg.profile)
    except ValidationError as exc:
        for p in exc.problems:
            own = bool(p.site_id) and str(p.site_id)[:1] == "r"
            # A plan-mate's problem (the screening's other rows, the registry's permits) is
            # reported too, as such: the site cannot be decided without its plan.
            mate = "" if own or not p.site_id else "a site of its common plan: "
            problems.append(
                Problem(
                    source, int(str(p.site_id)[1:]) + 1 if own else None if mate else p.row, mate + p.message, p.fix
                )
            )
        return []
    problems.extend(_not_governed(out.iloc[:n], source, reg.profile, apps))
    site_multi = [_as_multi(g) for g in site[:n]]
    dist_multi: list[Any] = [None] * n
    for i, g in zip(np.flatnonzero(has), limits, strict=True):
        if i < n:
            dist_multi[i] = _as_multi(g)
    site_sqft = np.asarray(_area_sqft(gpd.GeoSeries(site[:n], crs=reg.crs)))
    rows_ = list(out.itertuples(index=False))
    measured = [
        {
            "site": site_multi[i],
            "disturbed": dist_multi[i],
            "site_sqft": float(site_sqft[i]),
            "plan_id": apps[i].plan_id,
            "activity": str(r.activity),
            **_decision(r),
        }
        for i, r in enumerate(rows_[:n])
    ]
    if measured:
        # A plan-mate the authority determined needs a permit keeps it on the plan's new total.
        measured[0]["members"] = [
            (m, with_determination(reg, _decision(r), m.state)) for m, r in zip(members, rows_[k:], strict=True)
        ]
    return measured


def with_determination(reg: Registry, d: dict[str, Any], state: Any) -> dict[str, Any]:
    """Return a site's decision ``d`` with the permit's § 540-4A(1)(c) determination applied, if one is recorded.

    The one rule is :func:`esc_gis.rules.determined_decision`; ``state`` is the permit's folded
    state (None: an application not in the registry, which has none). ``determined`` says whether
    the determination made the permit required.
    """
    from esc_gis.rules import determined_decision

    recorded = state is not None and getattr(state, "determination", None) is not None
    permit, standards = determined_decision(
        d["permit_decision"], d["standards"], bool(d.get("npdes_small")), recorded, reg.profile
    )
    return {**d, "permit_decision": permit, "standards": standards, "determined": permit != d["permit_decision"]}


def remeasure(
    reg: Registry,
    permit_number: str,
    disturbed: Any,
    crs: Any,
    *,
    reasons: str | None = None,
    who: str | None = None,
) -> Permit:
    """Measure an application again on new disturbed limits, and decide it again.

    The limits go to the screening function with the permit's site, common plan, activity
    and flags, as at intake; the area, the plan's total and the decision change with a
    ``remeasured`` history event that says what changed and why (``reasons``), and the
    plan's other permits are decided again on the new total. Only while the application
    is undecided (received, incomplete, under review): the office decides on the
    application and its plan (§ 540-8C(1)-(3)); once decided, the limits are the approved
    plan's, and changing them is an amendment of the plan that needs the office's written
    permission first (§ 540-8E(2), § 540-9B: ``permits amend``). Reading: the profile's
    ``registry_remeasure_decided`` (``interpretation``). So is an application whose decision
    period ran out on the Village's clock today: it "shall be deemed" approved (§ 540-8C(5)),
    recorded or not (``registry_remeasure_deemed``).

    Parameters
    ----------
    permit_number : str
    disturbed : shapely Polygon or MultiPolygon
        The new disturbed limits, in ``crs``.
    crs : Any
        Their CRS (anything pyproj accepts).
    reasons : str, optional
        Why (a revised plan, a measurement corrected); kept in the history.
    who : str, optional

    Returns
    -------
    Permit
        As it is now.

    Raises
    ------
    PermitNotFoundError
    ValidationError
        If the application is decided or deemed approved, the limits are not polygons, or the screening
        finds the site outside the article's reach (it then takes no permit).
    """
    who = _who(who)
    p = reg.get(permit_number)
    amend = "record the amended plan with `esc-gis permits amend`; limits stay as approved."
    if p.status not in UNDECIDED:
        f = reg.profile.finding("registry_remeasure_decided", status=p.status)
        raise ValidationError([Problem(permit_number, None, f"{f.message} ({f.section})", amend)])
    # An application whose decision period ran out is approved whether or not the office has
    # recorded it (§ 540-8C(5)): its limits are the plan's as deemed approved, as the closing
    # check in moves.py reads the same day on the same clock.
    deemed = deemed_approved_by(p.status, p.state, reg.profile.today(), reg.calendar, reg.profile)
    if deemed is not None:
        f = reg.profile.finding("registry_remeasure_deemed", due=deemed)
        fix = "record the deemed approval (`permits transition ... deemed_approved`), then " + amend
        raise ValidationError([Problem(permit_number, None, f"{f.message} ({f.section})", fix)])
    limits = disturbed
    if disturbed is not None and crs is not None:
        limits = reg._to_registry_crs([disturbed], [crs])[0]
    app = Application(
        p.site_address,
        p.received_on,
        p.site,
        reg.crs,
        disturbed=limits,
        permit_number=permit_number,
        plan_id=p.plan_id,
        activity=p.activity,
        npdes_exempt=_flag(p, "npdes_exempt"),
    )
    problems: list[Problem] = []
    source = f"permit {permit_number}"
    from esc_gis.validate import repair_tolerance_sqft

    app = _repair_geometry(reg, [app], source)[0]
    tolerance = repair_tolerance_sqft(reg.profile)
    if not _check_geometry(app, lambda m, f: problems.append(Problem(source, None, m, f, permit_number)), tolerance):
        raise ValidationError(problems)
    measured = _measure(reg, [app], source, problems, remeasured=permit_number)
    if problems:
        raise ValidationError(problems)
    # A determination (§ 540-4A(1)(c)) outlives new limits: the site stays required under it.
    m = with_determination(reg, measured[0], p.state)
    now = now_utc()
    b = reg.backend
    with b.write() as cur:
        locked = reg._locked(cur, permit_number)
        if locked.status not in UNDECIDED:  # decided while it was being measured
            raise ValidationError([Problem(source, None, f"the application is now {locked.status}.", "try again.")])
        changes = {k: m[k] for k in _MEASURED if getattr(locked, k) != m[k]}
        was = (
            f" (was {locked.disturbed_sqft:,.0f} sq ft"
            f"{', on the whole site' if locked.disturbed is None else ''}"
            f"{f', permit {locked.permit_decision}' if locked.permit_decision != m['permit_decision'] else ''})"
        )
        plan = f", {m['plan_disturbed_sqft']:,.0f} sq ft over common plan {p.plan_id}" if p.plan_id else ""
        why = f"; reasons: {reasons.strip()}" if reasons and reasons.strip() else ""
        detail = (
            f"new disturbed limits: {m['disturbed_sqft']:,.0f} sq ft disturbed{plan} (measured){was}; "
            f"screening: permit {m['permit_decision']}{why}"
        )
        reg._event(
            cur,
            permit_number,
            Event(now, who, "remeasured", None, None, None, None, detail),
            fields=changes,
            disturbed=wkb(m["disturbed"]),  # the limits measured anew: their projection's row
        )
        _redecide_members(reg, cur, m.get("members", []), who, now)
    return reg.get(permit_number)


def decide_screened(reg: Registry, one: gpd.GeoDataFrame, rest: gpd.GeoDataFrame, source: str) -> dict[str, Any]:
    """Decide one site of a screening output as intake decides it, without adding it.

    Its limits, plan, activity and flags as the screening recorded them go to the screening
    function with its plan-mates (``rest``, the screening's other rows) and the registry's
    permits on its plan, under the registry's layers and profile: the one decision that
    `permits add` would take (`permits enforce --site-layer`, issue 34).

    Returns
    -------
    dict
        ``disturbed_sqft``, ``plan_disturbed_sqft``, ``permit_decision``, ``standards``,
        ``sediment_standard`` and the rest :meth:`_measure` gives.

    Raises
    ------
    ValidationError
        If the row cannot be read, or the article does not reach the site (outside, a state
        agency's, agricultural or silviculture activity), with the screening's reason.
    """
    from esc_gis.registry.service.imports import plan_mates, screened_site

    facts = screened_site(one, source)
    app = Application(
        "",
        None,
        one.geometry.iloc[0],
        one.crs,
        disturbed=facts["disturbed"],
        plan_id=facts["plan_id"],
        activity=facts["activity"],
        state_agency=facts["state_agency"],
        npdes_exempt=facts["npdes_exempt"],
    )
    problems: list[Problem] = []
    context = plan_mates(rest, [app.plan_id]) if app.plan_id else []
    measured = _measure(reg, [app], source, problems, context)
    if problems or not measured:
        raise ValidationError(problems or [Problem(source, None, "the site cannot be measured.", "re-screen it.")])
    return _whole_site(measured[0], facts["disturbed"])


def _whole_site(d: dict[str, Any], disturbed: Any) -> dict[str, Any]:
    """Return ``d`` with ``whole_site``: decided on its whole site, as nobody drew its disturbed limits."""
    return {**d, "whole_site": bool(d.get("whole_site")) or disturbed is None or shapely.is_empty(disturbed)}


def decide_permit(reg: Registry, permit: Permit, *, determination: bool = True) -> dict[str, Any]:
    """Decide a registry permit's site now, as :func:`decide_screened` decides a screened site.

    Its site, limits, plan, activity and flags as the registry holds them go to the same
    screening function (:func:`_measure`) with the registry's other permits on its plan, under
    the registry's layers and profile; a § 540-4A(1)(c) determination recorded on it is then
    applied (:func:`with_determination`), unless ``determination`` is False (the decision a
    reversal of it on appeal leaves). The one decision `permits enforce --permit`,
    `permits determine` and `--site-layer` share (issue 46).

    Returns
    -------
    dict
        As :func:`decide_screened`, with ``npdes_small`` (§ 540-4A(3) took effect) and
        ``determined`` (the determination made it required).

    Raises
    ------
    ValidationError
        If the article does not reach the site (outside, a state agency's, agricultural or
        silviculture activity), with the screening's reason, or its geometry cannot be measured.
    """
    source = f"permit {permit.permit_number}"
    app = Application(
        permit.site_address,
        permit.received_on,
        permit.site,
        reg.crs,
        disturbed=permit.disturbed,
        permit_number=permit.permit_number,
        plan_id=permit.plan_id,
        activity=permit.activity,
        npdes_exempt=_flag(permit, "npdes_exempt"),
    )
    problems: list[Problem] = []
    if not _check_geometry(app, lambda m, f: problems.append(Problem(source, None, m, f, permit.permit_number))):
        raise ValidationError(problems)
    measured = _measure(reg, [app], source, problems, remeasured=permit.permit_number)
    if problems or not measured:
        raise ValidationError(problems or [Problem(source, None, "the site cannot be measured.", "re-screen it.")])
    return _whole_site(with_determination(reg, measured[0], permit.state if determination else None), permit.disturbed)


def _plan_members(reg: Registry, plans: Sequence[str]) -> list[Permit]:
    """Return the registry's permits on any of ``plans`` (common plans of development or sale)."""
    if not plans:
        return []
    with reg.backend.read() as cur:
        ph = ", ".join([reg.backend.ph] * len(plans))
        return reg._select(cur, f"WHERE p.plan_id IN ({ph})", plans)


def import_frame(
    reg: Registry,
    frame: gpd.GeoDataFrame,
    *,
    source: str,
    disturbed: gpd.GeoDataFrame | None = None,
    who: str | None = None,
    fields: Mapping[str, str] | None = None,
    received_on: date | None = None,
    disturbed_id: str | None = None,
    context: Sequence[Application] = (),
) -> list[str]:
    """Import a layer of permits (:mod:`esc_gis.registry.service.imports`) in one transaction.

    ``fields`` maps import columns to the layer's (``{"site_address": "ADDRESS"}``);
    ``received_on`` is the day of every row without its own (a screening output has none);
    ``disturbed_id`` names the layer's column that keys ``disturbed`` (default
    ``permit_number``); ``context``: the screening's rows not imported (see :meth:`add_many`).

    Raises
    ------
    ValidationError
        With every bad row of the layer, and every bad field-map item; nothing is imported then.
    """
    from esc_gis.registry.service.imports import applications_from_frame

    apps, problems = applications_from_frame(
        frame,
        source=source,
        disturbed=disturbed,
        fields=fields,
        received_on=received_on,
        disturbed_id=disturbed_id,
    )
    if not apps:
        raise ValidationError(problems or [Problem(source, None, "has no rows.", "export the permits again.")])
    return reg.add_many(apps, who=who, source=source, kind="imported", prior=problems, context=context)


def _insert(
    reg: Registry,
    cur: Any,
    numbers: Sequence[str],
    apps: Sequence[Application],
    measured: Sequence[dict[str, Any]],
    who: str,
    now: datetime,
    kind: str,
    earlier: Sequence[Sequence[str]] = (),
) -> None:
    """Append each permit's first event (its projections write the permit and its limits), and store its parties.

    ``earlier``: for each, the numbers of the earlier records on its site it follows (issue 46).
    """
    parties: list[tuple[str, Any]] = []
    earlier = list(earlier) or [[] for _ in numbers]
    for number, app, m, follows in zip(numbers, apps, measured, earlier, strict=True):
        record: dict[str, Any] = dict.fromkeys(_PERMIT_FIELDS)
        record.update(
            permit_number=number,
            parcel_id=app.parcel_id,
            site_address=app.site_address.strip(),
            legal_description=app.legal_description,
            status=app.status,
            received_on=app.received_on,
            building_permit_expires=app.building_permit_expires,
            issued_on=app.issued_on,
            started_at=app.started_at,
            start_notice_at=app.start_notice_at,
            plan_id=m["plan_id"],
            activity=m["activity"],
            earlier_permits=", ".join(follows) or None,
            **{k: m[k] for k in _MEASURED},
        )
        if app.issued_on is not None and app.status in ISSUED:
            record["decided_on"] = app.issued_on
            authorized = [ends for _, ends in app.other_authorizations]
            record["expires_on"] = reg._expiry(app.issued_on, app.building_permit_expires, [], authorized)
        parties += [(number, p) for p in app.parties]
        plan = f", {m['plan_disturbed_sqft']:,.0f} sq ft over common plan {app.plan_id}" if app.plan_id else ""
        screened = (
            f"; ITS SCREENING MEASURED {app.screened_disturbed_sqft:,.0f} sq ft of disturbed limits"
            if screening_differs(app.screened_disturbed_sqft, m["disturbed_sqft"])
            else ""
        )
        exempt = "; marked NPDES-exempt" if app.npdes_exempt else ""
        inside = (
            f" ({m['disturbed_in_village_sqft']:,.0f} sq ft disturbed inside the "
            f"{reg.profile.names()['jurisdiction_name']})"
            if m["jurisdiction"] == "partial"
            else ""
        )
        follows_text = f"; follows {', '.join(follows)} on the same site" if follows else ""
        detail = (
            f"{m['disturbed_sqft']:,.0f} sq ft disturbed{plan} (measured"
            f"{'' if m['disturbed'] is not None else ' on the whole site: no disturbed limits given'}"
            f"{screened}); screening: permit {m['permit_decision']}{exempt}; site {m['jurisdiction']}{inside}"
            f"{follows_text}"
        )
        e = Event(now, who, kind, None, app.status, app.received_on, None, detail)
        started = record["started_at"]
        # The exemption is a fact of the application the permits table has no column for:
        # the received event keeps it, and the fold gives it back to a later re-decision.
        # So are the other construction authorizations (§ 540-8G), as `update` records them.
        facts: dict[str, Any] = {"npdes_exempt": True} if app.npdes_exempt else {}
        if app.other_authorizations:
            named = {str(k).strip(): v.isoformat() for k, v in app.other_authorizations}
            facts[OTHER_AUTHORIZATIONS] = dict(sorted(named.items()))
        flags = {"fields": facts} if facts else {}
        # The application as received: the permits and disturbed limits projections' rows.
        shown = {k: (v.isoformat() if isinstance(v, (date, datetime)) else v) for k, v in record.items()}
        rows = {"permit": {k: shown[k] for k in FACTS}, "site": wkb(m["site"])}
        if m["disturbed"] is not None:
            rows["disturbed"] = wkb(m["disturbed"])
        reg._append(
            cur,
            typed(
                number,
                e,
                when=started,
                issued_on=record["issued_on"],
                decided_on=record["decided_on"],
                # The period of validity as computed on receipt (§ 540-8G); the events that change
                # it carry it anew, so a later reading of the profile moves no permit's expiry.
                permit_expires_on=record["expires_on"],
                started_at=started,
                **flags,
                **rows,
            ),
        )
    store_parties(cur, reg.backend, parties)
    _redecide_members(reg, cur, measured[0].get("members", []) if measured else [], who, now)


def _redecide_members(
    reg: Registry, cur: Any, members: Sequence[tuple[Permit, dict[str, Any]]], who: str, now: datetime
) -> None:
    """Record the new plan total (and decision, if it changed) on the plan's permits already in the registry."""
    for p, d in members:
        changes = {k: d[k] for k in _DECIDED if getattr(p, k) != d[k]}
        if not changes:
            continue
        was = f" (was {p.permit_decision})" if p.permit_decision != d["permit_decision"] else ""
        detail = (
            f"common plan {p.plan_id}: {d['plan_disturbed_sqft']:,.0f} sq ft disturbed over the plan "
            f"(measured); screening: permit {d['permit_decision']}{was}"
        )
        reg._event(cur, p.permit_number, Event(now, who, "remeasured", None, None, None, None, detail), fields=changes)


def _flag(a: Application | Permit, name: str) -> bool:
    """Return an application's flag, or a registry permit's from its history (False if never set)."""
    if isinstance(a, Application):
        return bool(getattr(a, name))
    return bool(a.state.fields.get(name, False)) if a.state is not None else False


#: How far (sq ft) a permit's measured area may be from its screening's before it is called
#: different: both are measured by one function in one CRS, so only rounding separates them.
_SAME_SQFT = 0.5


def screening_differs(screened_sqft: float | None, disturbed_sqft: float) -> bool:
    """Whether a permit measured ``disturbed_sqft`` where its screening measured ``screened_sqft``.

    The one test behind the history note :meth:`Intake._insert` writes and the warning
    :func:`esc_gis.registry.service.imports.screening_differences` gives (issue 34): typically
    a permit measured on its whole site while its screening measured disturbed limits.
    """
    s = screened_sqft
    return s is not None and not np.isnan(s) and abs(float(disturbed_sqft) - float(s)) > _SAME_SQFT


def _not_governed(out: pd.DataFrame, source: str, profile: Any, apps: Sequence[Application]) -> list[Problem]:
    """Return a problem for each screened site the article does not reach: it takes no permit.

    The screening decided it (``permit`` is ``not_applicable``); the reason is the screening's
    own finding (§ 540-4B outside, § 540-4C a state agency, § 540-4A(2) agricultural or
    silviculture activity), so the refusal says what `esc-gis screen` says of the site.
    """
    import json

    problems = []
    outside = profile.finding("registry_outside_jurisdiction")
    for i, r in enumerate(out.itertuples(index=False)):
        if r.permit != "not_applicable":
            continue
        found = json.loads(r.findings)
        near = [f for f in found if f["code"] == "outside_jurisdiction_extraterritorial"]
        if near:
            # Within § 540-5's extraterritorial area "does not apply" is a reading: the screening's own
            # words say so ("Reading: ..."), never the ordinance's flat "outside, where this article does not apply".
            message = f"{near[0]['message']} ({near[0]['section']}; {near[0]['basis']})"
            fix = "check the site's location and CRS; take no permit under this article."
        elif r.jurisdiction == "outside":
            message, fix = f"{outside.message} ({outside.section})", "check the site's location and CRS."
        else:
            # The finding that excluded it: jurisdiction_* says where it lies, which is not the reason.
            why = [f for f in found if not str(f["code"]).startswith("jurisdiction_")]
            reason = "; ".join(f"{f['message']} ({f['section']})" for f in why) or str(r.applicability)
            f = profile.finding("registry_not_governed", reason=reason)
            # The reason carries its own section, which says more than the finding's own (§ 540-4).
            message, fix = f.message, "check the site's activity and state_agency; take no permit."
        problems.append(Problem(source, i + 1, message, fix, apps[i].permit_number))
    return problems


def _decision(r: Any) -> dict[str, Any]:
    """Return the measured area and decision of one screened row, as the registry stores them.

    ``npdes_small``: the § 540-4A(3) exemption took effect (the screening's own finding says so).
    """
    import json

    found = json.loads(r.findings or "[]") if isinstance(r.findings, str) else []
    return {
        "disturbed_sqft": float(r.disturbed_sqft),
        "plan_disturbed_sqft": float(r.plan_disturbed_sqft),
        "permit_decision": str(r.permit),
        "standards": str(r.standards),
        "sediment_standard": bool(r.sediment_standard),
        "npdes_small": any(f.get("code") == "npdes_exempt_under_1_acre" for f in found),
        # Nobody drew this site's disturbed limits: its whole site was taken as disturbed.
        "whole_site": any(f.get("code") == "no_disturbed_limits" for f in found),
        # Where the site lies and how much of its disturbance is inside (§ 540-4B), as decided.
        "jurisdiction": str(r.jurisdiction),
        # Stored under the registry's column name (schema.py keeps it); the screening's is neutral.
        "disturbed_in_village_sqft": float(r.disturbed_in_jurisdiction_sqft),
    }


def _area_sqft(s: gpd.GeoSeries) -> np.ndarray:
    from esc_gis.measure import area_sqft

    return np.asarray(area_sqft(s.to_numpy(), s.crs))


def _repair_geometry(reg: Registry, apps: Sequence[Application], source: str) -> list[Application]:
    """Repair each application's invalid polygons that the one rule keeps as drawn, warning of each by row.

    The rule is the screening's (:func:`esc_gis.validate.check_polygons`): a repair that keeps
    the area and the parts (a spike, a ring touching itself) is made, and the repaired shape is
    what is measured and stored; one that would not is left for :func:`_check_geometry` to refuse.
    """
    from esc_gis.validate import check_polygons, repair_tolerance_sqft

    tolerance = repair_tolerance_sqft(reg.profile)
    out = []
    for i, a in enumerate(apps, start=1):
        changes: dict[str, Any] = {}
        for name in ("site", "disturbed"):
            g = getattr(a, name)
            if g is None or a.crs is None or shapely.get_type_id(g) not in (3, 6) or g.is_valid:
                continue
            check = check_polygons(np.array([g], dtype=object), a.crs, tolerance_sqft=tolerance).get(0)
            if check is None or check.refused or shapely.is_empty(check.geometry):
                continue
            changes[name] = check.geometry
            who = f"{source}, row {i}" + (f" ({a.permit_number})" if a.permit_number else "")
            warnings.warn(
                f"{who}: the {name} polygon was invalid ({check.reason.lower()}) and was repaired as drawn "
                f"({check.repaired_sqft:,.1f} sq ft, {check.repaired_parts} part(s)).",
                EscGisWarning,
                stacklevel=3,
            )
        out.append(replace(a, **changes) if changes else a)
    return out


def _check_geometry(a: Application, bad: Callable[..., None], tolerance_sqft: float = 1.0) -> bool:
    """Check one application's site and disturbed limits; return whether they can be measured.

    An invalid polygon left here is one the one rule refuses (:func:`_repair_geometry` made the
    others valid): named with where it crosses itself and the fix, as `esc-gis screen` names it.
    """
    drawn = True
    for name, g in (("site", a.site), ("disturbed", a.disturbed)):
        if g is None and name == "disturbed":
            continue
        if g is None or g.is_empty:
            bad(f"the {name} geometry is empty.", "draw the site boundary.")
        elif shapely.get_type_id(g) not in (3, 6):
            bad(f"the {name} geometry is a {g.geom_type}, not a polygon.", "give polygons.")
        elif not g.is_valid:
            # Still invalid after _repair_geometry: the one rule refused it (esc_gis.validate).
            from esc_gis.validate import check_polygons

            check = check_polygons(np.array([g], dtype=object), a.crs, tolerance_sqft=tolerance_sqft).get(0)
            message, fix = check.problem(a.crs) if check is not None else ("is invalid.", "redraw it.")
            bad(f"the {name} geometry {message}", fix)
        else:
            continue
        drawn = False
    if a.crs is None:
        bad("the geometry has no CRS.", "give the CRS it was drawn in, e.g. EPSG:7594.")
        drawn = False
    return drawn
