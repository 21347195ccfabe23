"""``esc-gis permits``: applications: create a registry, add and import permits, update, list, show and export them.

Thin wrappers over :class:`esc_gis.registry.Registry`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time
from typing import TYPE_CHECKING, Any

import click

from esc_gis._outputs import reads
from esc_gis.cli._options import (
    VECTOR,
    assume_crs_option,
    output_option,
    overwrite_option,
    where_option,
)
from esc_gis.cli._permits import (
    _LAYERS,
    _REGISTRY,
    _WHO,
    _basis,
    _case_json,
    _date,
    _describe,
    _echo_cases,
    _open,
    _report_json,
    _time,
    _when_text,
)
from esc_gis.errors import Problem, ValidationError

if TYPE_CHECKING:
    from rich.table import Table


@click.command(short_help="Create a registry, or apply pending schema migrations.")
@_REGISTRY
@_LAYERS
@click.option(
    "--roles",
    is_flag=True,
    help="PostGIS: also create the reader, inspector and clerk group roles and grant each the least it needs.",
)
@click.option(
    "--role-prefix",
    default=None,
    help="The roles' prefix (PREFIX_reader, PREFIX_inspector, PREFIX_clerk); default the database's name "
    "and the schema's unless it is public.",
)
def init(registry: str, layers_path: str | None, roles: bool, role_prefix: str | None) -> None:
    """Create REGISTRY, or bring it up to this esc_gis's schema version.

    With --roles (PostGIS only), make the group roles people log in as members of, e.g.
    CREATE ROLE alice LOGIN IN ROLE <prefix>_inspector; running it again is harmless.
    """
    from esc_gis.registry import init_registry

    if role_prefix is not None and not roles:
        raise click.UsageError("--role-prefix goes with --roles.")
    if roles:
        from esc_gis.registry.store.roles import require_postgis

        require_postgis(registry)  # before anything is made
    applied = init_registry(registry, layers=layers_path)
    from esc_gis.registry.store.conninfo import shown

    click.echo(
        f"{shown(registry)}: "
        + (
            f"applied migration(s) {', '.join(map(str, applied))}."
            if applied
            else "already at the current schema version."
        )
    )
    if roles:
        from esc_gis.registry.store.roles import create_roles

        names = create_roles(registry, prefix=role_prefix)
        click.echo(
            f"Roles (NOLOGIN groups): {names.reader} reads the public views permits_public and permits_published "
            "only; "
            f"{names.inspector} records inspections and repairs; {names.clerk} does the office's work. "
            f"Add people as members: CREATE ROLE alice LOGIN IN ROLE {names.inspector};"
        )


#: § 540-8G "or other construction authorizations, whichever is longer": on add and update.
_AUTHORIZATION = click.option(
    "--authorization",
    "authorization_name",
    default=None,
    help="Another construction authorization the permit's period runs with, e.g. 'WDNR permit WI-S067831'; give "
    "--authorization-expires with it.",
)
_AUTHORIZATION_EXPIRES = click.option(
    "--authorization-expires",
    default=None,
    help="YYYY-MM-DD the --authorization ends: the permit runs to it if longer (the expiry is computed).",
)


def _authorization(name: str | None, expires: str | None) -> tuple[str, Any] | None:
    """Return (name, end) of --authorization and --authorization-expires, or None when neither is given.

    Raises
    ------
    click.UsageError
        If only one of the two is given.
    """
    if (name is None) != (expires is None):
        raise click.UsageError("--authorization and --authorization-expires go together: its name and its end.")
    ends = _date(expires, "authorization_expires")
    return (name, ends) if name is not None and ends is not None else None


@click.command(short_help="Add an application; the disturbed area is measured, never typed.")
@_REGISTRY
@click.option("--site", "site_path", type=VECTOR, default=None, help="Site boundary layer (one polygon).")
@click.option(
    "--site-layer",
    type=VECTOR,
    default=None,
    help="A layer of many sites (a screening output, `esc-gis screen -o`): the site is the one that "
    "--site-id and/or --where pick; its plan_id and activity are taken unless given, and its state_agency, "
    "npdes_exempt and the disturbed limits the screening measured (unless --disturbed).",
)
@click.option("--site-id", default=None, help="The site's site_id in --site-layer (e.g. S07).")
@where_option("OGR SQL WHERE clause picking the one site of --site-layer.")
@click.option("--layer", "site_layer_name", default=None, help="Layer name in a multi-layer --site-layer file.")
@click.option(
    "--disturbed",
    "disturbed_path",
    type=VECTOR,
    default=None,
    help="Disturbed-limits layer (one polygon, or with --site-id the one with that site_id); default the whole site.",
)
@click.option("--address", required=True, help="Site address.")
@click.option("--received", required=True, help="Day the complete application was received (YYYY-MM-DD).")
@click.option("--number", default=None, help="Permit number (default: the next in the profile's pattern).")
@click.option("--parcel-id", default=None)
@click.option("--legal", "legal_description", default=None, help="Legal description of the site.")
@click.option(
    "--plan-id",
    default=None,
    help="Common plan of development or sale: the permit is decided on the plan's total disturbance.",
)
@click.option(
    "--activity",
    default=None,
    help="construction (default), agricultural_activity, agricultural_production or silviculture.",
)
@click.option("--building-permit-expires", default=None, help="The building permit's end (YYYY-MM-DD), if longer.")
@_AUTHORIZATION
@_AUTHORIZATION_EXPIRES
@click.option("--landowner", default=None, help="Landowner's name (private).")
@click.option("--landowner-phone", default=None)
@click.option("--landowner-email", default=None)
@click.option("--responsible", default=None, help="Responsible party's name (private).")
@click.option("--responsible-phone", default=None)
@click.option("--responsible-email", default=None)
@assume_crs_option("CRS of layers that have none (e.g. EPSG:7594).")
@_LAYERS
@_WHO
def add(
    registry: str,
    site_path: str | None,
    site_layer: str | None,
    site_id: str | None,
    where: str | None,
    site_layer_name: str | None,
    disturbed_path: str | None,
    address: str,
    received: str,
    number: str | None,
    parcel_id: str | None,
    legal_description: str | None,
    plan_id: str | None,
    activity: str | None,
    building_permit_expires: str | None,
    authorization_name: str | None,
    authorization_expires: str | None,
    landowner: str | None,
    landowner_phone: str | None,
    landowner_email: str | None,
    responsible: str | None,
    responsible_phone: str | None,
    responsible_email: str | None,
    assume_crs: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Add a permit application to REGISTRY.

    The site is the one polygon of --site, or the site of a screening output (--site-layer)
    that --site-id and/or --where pick: the clerk's application for a site the screening
    found to need a permit. A site an open application or a permit in force already covers
    is refused, naming it; one whose earlier permit ended is taken and linked to it.
    """
    from esc_gis.registry import Application, Party
    from esc_gis.registry.service.imports import plan_mates, screened_site, screening_differences

    if (site_path is None) == (site_layer is None):
        raise click.UsageError("give the site: --site FILE (one polygon), or --site-layer FILE with --site-id/--where.")
    if site_path is not None and (site_id or where or site_layer_name):
        raise click.UsageError("--site-id, --where and --layer pick a site of --site-layer; --site has one.")
    facts: dict[str, Any] = {}
    context: list[Any] = []
    picked = None
    if site_layer is not None:
        picked, frame = _picked_site(site_layer, site_id, where, site_layer_name, assume_crs)
        site, crs = picked.geometry.iloc[0], picked.crs
        facts = screened_site(picked, site_layer)
        plan_id = plan_id or facts["plan_id"]
        parcel_id = parcel_id or facts["parcel_id"]  # a V10 parcel layer's screening names it
        activity = activity or facts["activity"]
        # Its plan-mates in the screening count toward its plan, as they did there (§ 540-5).
        rest = frame.drop(index=picked.index)
        context = plan_mates(rest, [plan_id]) if plan_id else []
    else:
        assert site_path is not None
        site, crs = _one_polygon(site_path, assume_crs)
    disturbed = (
        _disturbed_polygon(disturbed_path, assume_crs, crs, site_id) if disturbed_path else facts.get("disturbed")
    )
    parties = []
    if landowner or landowner_phone or landowner_email:
        parties.append(Party("landowner", landowner or "", phone=landowner_phone, email=landowner_email))
    if responsible or responsible_phone or responsible_email:
        parties.append(Party("responsible_party", responsible or "", phone=responsible_phone, email=responsible_email))
    app = Application(
        address,
        _date(received, "received"),
        site,
        crs,
        disturbed=disturbed,
        permit_number=number,
        parcel_id=parcel_id,
        legal_description=legal_description,
        building_permit_expires=_date(building_permit_expires, "building_permit_expires"),
        other_authorizations=tuple(x for x in [_authorization(authorization_name, authorization_expires)] if x),
        parties=tuple(parties),
        plan_id=plan_id,
        activity=activity,
        state_agency=facts.get("state_agency", False),
        npdes_exempt=facts.get("npdes_exempt", False),
        screened_disturbed_sqft=facts.get("screened_disturbed_sqft"),
    )
    with _open(registry, layers_path) as reg:
        n = reg.add(app, who=who, context=context)
        p = reg.get(n)
        click.echo(_describe(p))
    if picked is not None:
        _warn(screening_differences(picked, [p]))


def _picked_site(
    path: str, site_id: str | None, where: str | None, layer: str | None, assume_crs: str | None
) -> tuple[Any, Any]:
    """Return the picked site of a layer of many (a one-row frame), and the whole layer, with their CRS."""
    from esc_gis.crs import assign_crs
    from esc_gis.io import read_layer
    from esc_gis.registry.service.imports import pick_site

    one = assign_crs(pick_site(path, site_id=site_id, where=where, layer=layer), assume_crs=assume_crs, source=path)
    frame = assign_crs(read_layer(path, layer=layer), assume_crs=assume_crs, source=path)
    return one, frame


def _warn(lines: list[str]) -> None:
    """Say loudly, on stderr, where a permit differs from the screening it was made from (issue 34)."""
    for line in lines:
        click.echo(f"WARNING: {line}", err=True)


def _limits_layer(path: str, assume_crs: str | None, site_id: str | None) -> tuple[Any, Any]:
    """Return the disturbed limits of a layer (its one polygon, or the one keyed by ``site_id``) and their CRS."""
    from esc_gis.crs import assign_crs
    from esc_gis.io import read_layer
    from esc_gis.registry.service.imports import pick_site

    if site_id is not None:
        one = assign_crs(pick_site(path, site_id=site_id), assume_crs=assume_crs, source=path)
        return one.geometry.iloc[0], one.crs
    gdf = assign_crs(read_layer(path), assume_crs=assume_crs, source=path)
    if len(gdf) != 1:
        fix = "give a layer with the one disturbed-limits polygon, or pick it with --site-id ID (keyed by site_id)."
        raise ValidationError([Problem(path, None, f"has {len(gdf)} features; one polygon is expected.", fix)])
    return gdf.geometry.iloc[0], gdf.crs


def _disturbed_polygon(path: str, assume_crs: str | None, crs: Any, site_id: str | None) -> Any:
    """Return the disturbed limits: a layer's one polygon, or with a site id the one keyed by it (many)."""
    from esc_gis.crs import assign_crs
    from esc_gis.io import read_layer
    from esc_gis.registry.service.imports import pick_site

    if site_id is not None and len(read_layer(path)) > 1:
        one = assign_crs(pick_site(path, site_id=site_id), assume_crs=assume_crs, source=path)
        return one.to_crs(crs).geometry.iloc[0]
    fix = "give a layer with the one disturbed-limits polygon, or with --site-id one keyed by site_id."
    return _one_polygon(path, assume_crs, crs, fix=fix)[0]


_ONE_SITE = (
    "give a layer with the one site; for a layer of many (a screening output), pick the site with "
    "--site-layer FILE --site-id ID (or --where SQL), or import them all (esc-gis permits import)."
)


def _one_polygon(path: str, assume_crs: str | None, to_crs: Any = None, *, fix: str = _ONE_SITE) -> tuple[Any, Any]:
    from esc_gis.crs import assign_crs
    from esc_gis.io import read_layer

    gdf = assign_crs(read_layer(path), assume_crs=assume_crs, source=path)
    if len(gdf) != 1:
        raise ValidationError(
            [
                Problem(
                    path,
                    None,
                    f"has {len(gdf)} features; one polygon is expected.",
                    fix,
                )
            ]
        )
    if to_crs is not None:
        gdf = gdf.to_crs(to_crs)
    return gdf.geometry.iloc[0], gdf.crs


@click.command(short_help="Show one permit: record, parties, history, deadlines.")
@_REGISTRY
@click.argument("number")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_LAYERS
def show(registry: str, number: str, as_json: bool, layers_path: str | None) -> None:
    """Show permit NUMBER of REGISTRY."""
    from esc_gis.registry.views.agenda import permit_dues

    with _open(registry, layers_path) as reg:
        p = reg.get(number)
        prof = reg.profile
        dues = permit_dues(p, on=prof.today(), calendar=reg.calendar, profile=prof)
        cases = reg.cases(permit_number=number)
    # In date order, as `permits due` lists them; a day's timed deadlines before its end-of-day ones.
    dues.sort(key=lambda d: (prof.day_of(d.due), _time_of_day(d.due, prof), d.what))
    fields = {
        k: v
        for k, v in p.__dict__.items()
        if k not in ("site", "disturbed", "parties", "events", "reports", "letters_of_credit", "state")
    }
    if as_json:
        out = {
            **fields,
            "disturbed_acres": p.disturbed_acres,
            "parties": [q.__dict__ for q in p.parties],
            "events": [e.__dict__ for e in p.events],
            "extensions": p.state.extensions,
            "determination": p.state.determination,
            "conditions": p.state.permit_conditions,
            "inspections": [{**_report_json(r), "standing": _standing(r, p, prof)} for r in p.reports],
            "deadlines": [d.__dict__ for d in dues],
            "enforcement": [_case_json(c) for c in cases],
        }
        click.echo(json.dumps(out, default=str, indent=2))
        return
    width = max(map(len, fields))
    for k, v in fields.items():
        if isinstance(v, datetime) and k != "updated_at":  # times the clerk typed, on the Village's clock
            v = _when_text(v, prof)
        if v is not None:
            click.echo(f"{k:<{width}}  {v:,.0f}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    click.echo("\nparties (private):")
    for q in p.parties:
        click.echo("  " + ", ".join(str(x) for x in (q.role, q.name, q.organization, q.phone, q.email) if x))
    click.echo("\nhistory:")
    for e in p.events:
        move = f" {e.from_status or ''} -> {e.to_status}" if e.to_status else ""
        extra = "".join(f" {x}" for x in (e.on_date, f"+{e.days} days" if e.days else None, e.detail) if x)
        click.echo(f"  {e.at:%Y-%m-%d %H:%M}Z {e.who}: {e.kind}{move}{extra}")
    _echo_extensions(p.state.extensions)
    _echo_terms(p.state, prof)
    if p.other_authorizations:
        click.echo("\nother construction authorizations (the period runs to the longest):")
    for name, ends in p.other_authorizations.items():
        click.echo(f"  {name}: ends {ends}")
    _echo_inspections(p, prof)
    _echo_cases(cases)
    click.echo("\ndeadlines:")
    for d in dues:
        click.echo(f"  {_when_text(d.due, prof)}  {d.what} ({d.section}; {_basis(d.basis)})")


def _echo_inspections(p: Any, prof: Any) -> None:
    """Echo a permit's inspection reports: where, who, what was found and repaired, the photos."""
    if p.reports:
        click.echo("\ninspections (private):")
    words = {f.inspection_id: f.location_words for f in (p.state.inspections if p.state else ())}
    for r in p.reports:
        where = f" at ({r.location.x:.1f}, {r.location.y:.1f})" if r.location is not None else ""
        where += f" at {words[r.id]}" if words.get(r.id) else ""
        click.echo(f"  #{r.id} {_when_text(r.inspected_at, prof)} {r.inspector}{where}: {r.assessment}")
        for label, text in (
            ("work done", r.work_done),
            ("phase", r.phase),
            ("adjoining repairs", r.adjoining_repairs),
            ("documents on site", _yes_no(r.on_site_documents)),
            ("certificate posted", _yes_no(r.certificate_posted)),
        ):
            if text:
                click.echo(f"      {label}: {text}")
        click.echo(f"      {_standing(r, p, prof)}")
        for d in r.deficiencies:
            state = f"repaired {_when_text(d.repaired_at, prof)}" if d.repaired_at else "OPEN"
            click.echo(f"      deficiency #{d.id} ({state}): {d.description}")
        for ph in r.photos:
            click.echo(f"      photo #{ph.id} {ph.filename} {ph.content_type} {ph.size_bytes} bytes sha256 {ph.sha256}")


def _yes_no(v: bool | None) -> str | None:
    return None if v is None else ("yes" if v else "no")


def _standing(r: Any, p: Any, profile: Any) -> str:
    """Say who inspected and whether the report meets the holder's weekly and after-rain duty, and why not."""
    from esc_gis.registry.domain.inspections import missing_contents, report_contents

    fact = next((f for f in (p.state.inspections if p.state else ()) if f.inspection_id == r.id), None)
    by = fact.by if fact is not None else (r.by or "holder")
    if by != "holder":
        return f"by {by}: the office's own inspection, not the holder's weekly or after-rain one"
    if fact is not None and fact.pre_start:
        return "by holder, before work started: before the weekly and after-rain duty begins"
    missing = missing_contents(fact, profile) if fact is not None else []
    if missing:
        words = report_contents(profile)
        lacks = "; ".join(str(words[k]["words"]) for k in missing)
        return f"by holder, INCOMPLETE: lacks {lacks}; does not meet the weekly or after-rain inspection"
    return "by holder: meets the weekly and after-rain inspection"


def _echo_terms(state: Any, prof: Any) -> None:
    """Echo the office's determination that a permit is needed, and the permit's conditions, numbered."""
    if state.determination is not None:
        d = state.determination
        f = prof.finding("registry_determined")
        from esc_gis.registry.domain.determinations import purpose_words

        to = purpose_words(prof.tables, d.get("purposes") or ())
        to = f" (to {to})" if to else ""
        click.echo(f"\ndetermination of {d['on']}{to}: {d['reasons']}\n  {f.message} ({f.section}; basis {f.basis})")
    if state.permit_conditions:
        click.echo(
            "\nconditions of the permit (ground A3 names one by its number, or a standing one by its code E1-E8):"
        )
    for i, c in enumerate(state.permit_conditions, start=1):
        src = " (with an extension)" if c["source"] == "extension" else ""
        click.echo(f"  {i}. {c['text']} ({c['on']}{src})")


def _echo_extensions(extensions: list[dict[str, Any]]) -> None:
    """Print each extension with the conditions and other construction authorizations recorded with it."""
    if extensions:
        click.echo("\nextensions:")
    for x in extensions:
        click.echo(f"  {x['on']} +{x['days']} days")
        for label, items in (("condition", x["conditions"]), ("authorization", x["authorizations"])):
            for item in items:
                click.echo(f"      {label}: {item}")


def _time_of_day(due: date | datetime, profile: Any) -> time:
    """Return a timed deadline's time on the office's clock; a day's deadline runs to the day's end."""
    return profile.local(due).time() if isinstance(due, datetime) else time.max


@click.command(name="list", short_help="List permits, optionally by status.")
@_REGISTRY
@click.option("--status", multiple=True, help="Only permits in this state (repeatable).")
@_LAYERS
def list_(registry: str, status: tuple[str, ...], layers_path: str | None) -> None:
    """List the permits of REGISTRY."""
    with _open(registry, layers_path) as reg:
        found = reg.permits(status=status or None)
    if found:
        from esc_gis.cli._console import console

        console().print(_permits_table(found))
    click.echo(f"{len(found)} permit(s).", err=True)


def _permits_table(found: list[Any]) -> Table:
    """Build the table ``permits list`` prints: one row a permit, the address folding to fit the console."""
    # rich's tables are imported by the one command that prints one (show and due start without).
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    # rich measures the columns (a hand-padded status column went out of line past 20 characters).
    sqft = [f"{p.disturbed_sqft:,.0f}" for p in found]
    # Two spaces between columns (the box's one and a left pad), none at the edges.
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0, 0, 1))
    # Numbers, states and dates never fold or crop (a clerk copies them); the address folds to fit.
    table.add_column("permit", no_wrap=True, min_width=max(len(p.permit_number) for p in found))
    table.add_column("status", no_wrap=True, min_width=max(len(p.status) for p in found))
    table.add_column("site address", overflow="fold", min_width=8)
    table.add_column("disturbed\nsq ft", justify="right", no_wrap=True, min_width=max(map(len, sqft)))
    table.add_column("expires", no_wrap=True, min_width=10)
    for p, area in zip(found, sqft, strict=True):
        table.add_row(
            escape(p.permit_number),
            p.status,
            escape(p.site_address or ""),
            area,
            "" if p.expires_on is None else str(p.expires_on),
        )
    return table


@click.command(short_help="Change fields or dates, or record an inspection.")
@_REGISTRY
@click.argument("number")
@click.option("--address", "site_address", default=None)
@click.option("--parcel-id", default=None)
@click.option("--legal", "legal_description", default=None)
@click.option("--building-permit-expires", default=None, help="YYYY-MM-DD; the expiry is recomputed.")
@_AUTHORIZATION
@_AUTHORIZATION_EXPIRES
@click.option("--start-notice", default=None, help="When the notice of start arrived (YYYY-MM-DDTHH:MM).")
@click.option(
    "--work-stopped",
    default=None,
    help="Day land-disturbing activity stopped (YYYY-MM-DD); give --resume-expected with it.",
)
@click.option(
    "--resume-expected",
    default=None,
    help="Day work is expected to resume (YYYY-MM-DD). A long or unknown pause needs temporary "
    "stabilization from the day work stopped; see `permits due`.",
)
@click.option("--resumed", default=None, help="Day work resumed (YYYY-MM-DD): ends the pause.")
@click.option("--stockpile-since", default=None, help="Day the oldest unstabilized stockpile was made (YYYY-MM-DD).")
@click.option(
    "--inspected",
    default=None,
    help="Record that the permit holder inspected on this day (YYYY-MM-DD) without its report: it does not meet "
    "the weekly duty until the report is recorded (`permits inspect`); `permits due` lists it.",
)
@click.option(
    "--disturbed",
    "disturbed_path",
    type=VECTOR,
    default=None,
    help="Measure an undecided application again on these disturbed limits (one polygon, or with --site-id the "
    "one keyed by site_id): its area and decision change, with a history event.",
)
@click.option("--site-id", default=None, help="The limits' site_id in a --disturbed layer of many.")
@click.option("--reasons", default=None, help="Why the limits are measured again (kept in the history).")
@assume_crs_option("CRS of a --disturbed layer that has none (e.g. EPSG:7594).")
@_LAYERS
@_WHO
def update(
    registry: str,
    number: str,
    site_address: str | None,
    parcel_id: str | None,
    legal_description: str | None,
    building_permit_expires: str | None,
    authorization_name: str | None,
    authorization_expires: str | None,
    start_notice: str | None,
    work_stopped: str | None,
    resume_expected: str | None,
    resumed: str | None,
    stockpile_since: str | None,
    inspected: str | None,
    disturbed_path: str | None,
    site_id: str | None,
    reasons: str | None,
    assume_crs: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Update permit NUMBER of REGISTRY.

    --disturbed measures an application the office has not yet decided on new limits: once
    decided, the limits are the approved plan's, and a change is a plan amendment (permits amend).
    """
    if (site_id or reasons) and disturbed_path is None:
        raise click.UsageError("--site-id and --reasons go with --disturbed.")
    authorization = _authorization(authorization_name, authorization_expires)
    texts = (("site_address", site_address), ("parcel_id", parcel_id), ("legal_description", legal_description))
    changes: dict[str, Any] = {k: v for k, v in texts if v is not None}
    for key, raw in (
        ("building_permit_expires", building_permit_expires),
        ("work_stopped_on", work_stopped),
        ("resume_expected_on", resume_expected),
        ("work_resumed_on", resumed),
        ("stockpile_since", stockpile_since),
    ):
        if raw is not None:
            changes[key] = _date(raw, key)
    if start_notice is not None:
        changes["start_notice_at"] = _time(start_notice, "start-notice")  # a time: the notice clock runs in hours
    day = _date(inspected, "inspected")
    with _open(registry, layers_path) as reg:
        if disturbed_path is not None:
            limits, crs = _limits_layer(disturbed_path, assume_crs, site_id)
            p = reg.remeasure(number, limits, crs, reasons=reasons, who=who)
        if changes or day is not None or authorization is not None or disturbed_path is None:
            p = reg.update(number, who=who, inspected_on=day, authorization=authorization, **changes)
    click.echo(_describe(p))


@click.command(name="import", short_help="Import a layer of permits; every bad row is reported, nothing half-done.")
@_REGISTRY
@click.argument("layer_path", metavar="LAYER", type=VECTOR)
@click.option("--layer", default=None, help="Layer name in a multi-layer file.")
@where_option("OGR SQL WHERE clause picking the rows of LAYER to import.")
@click.option(
    "--disturbed",
    "disturbed_path",
    type=VECTOR,
    default=None,
    help="Disturbed limits keyed by permit_number (or by --disturbed-id); a permit with none takes the limits "
    "its screening measured (a screening output's disturbed_limits), else counts its whole site.",
)
@click.option(
    "--disturbed-id",
    default=None,
    metavar="FIELD",
    help="Key --disturbed by this column of both layers (e.g. site_id of a screening output) instead of permit_number.",
)
@click.option(
    "--field",
    "field_items",
    multiple=True,
    metavar="NAME=COLUMN",
    help="Read the import column NAME from LAYER's COLUMN (repeatable), e.g. site_address=ADDRESS.",
)
@click.option(
    "--received-on",
    default=None,
    help="The day the applications came in (YYYY-MM-DD), for every row without its own received_on "
    "(a screening output has none).",
)
@assume_crs_option("CRS of layers that have none.")
@_LAYERS
@_WHO
def import_(
    registry: str,
    layer_path: str,
    layer: str | None,
    where: str | None,
    disturbed_path: str | None,
    disturbed_id: str | None,
    field_items: tuple[str, ...],
    received_on: str | None,
    assume_crs: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Import the permits of LAYER into REGISTRY (columns: docs/guide/registry/import.md).

    A screening output goes in as it is, with the two things a screening does not know: the
    site's address (--field site_address=COLUMN) and the day the applications came in
    (--received-on). Pick the sites that need a permit with --where "permit = 'required'".
    A site an open application or a permit in force covers is refused with every other
    problem, and nothing is imported: the same layer imported twice adds nothing.
    """
    import numpy as np

    from esc_gis.crs import assign_crs
    from esc_gis.io import feature_numbers, read_layer
    from esc_gis.registry.service.imports import SCREENING_COLUMNS, plan_mates, screening_differences

    if disturbed_id is not None and disturbed_path is None:
        raise click.UsageError("--disturbed-id keys --disturbed: give the limits layer too.")
    fields = _field_items(field_items)
    day = _date(received_on, "received_on")

    whole = assign_crs(
        read_layer(layer_path, layer=layer, dates_as_text=True), assume_crs=assume_crs, source=layer_path
    )
    frame, rest = whole, whole.iloc[:0]
    if where is not None:
        read_layer(layer_path, layer=layer, where=where)  # says why a clause is refused, if it is
        picked = np.isin(np.arange(1, len(whole) + 1), feature_numbers(layer_path, layer=layer, where=where)[0])
        frame, rest = whole[picked], whole[~picked]
    disturbed = (
        assign_crs(read_layer(disturbed_path), assume_crs=assume_crs, source=disturbed_path) if disturbed_path else None
    )
    # The rows --where leaves out still count toward the common plans of the rows it picks, as
    # they did in the screening (§ 540-5): measured with them, never added.
    plans = {str(v).strip() for v in frame.get("plan_id", []) if isinstance(v, str) and v.strip()}
    context = plan_mates(rest, plans)
    with _open(registry, layers_path) as reg:
        numbers = reg.import_frame(
            frame,
            source=layer_path,
            disturbed=disturbed,
            who=who,
            fields=fields,
            received_on=day,
            disturbed_id=disturbed_id,
            context=context,
        )
        screening = SCREENING_COLUMNS <= {str(c).lower() for c in frame.columns}
        permits = [reg.get(n) for n in numbers] if screening else []
    from esc_gis.registry.store.conninfo import shown

    click.echo(
        f"Imported {len(numbers)} permit(s) into {shown(registry)}: {', '.join(numbers[:5])}"
        f"{', ...' if len(numbers) > 5 else ''}."
    )
    if screening:
        _warn(screening_differences(frame, permits))


def _field_items(items: tuple[str, ...]) -> dict[str, str]:
    """Parse ``--field NAME=COLUMN`` items (the names are checked against the layer by the registry)."""
    fields: dict[str, str] = {}
    for item in items:
        name, sep, column = item.partition("=")
        if not sep or not name.strip() or not column.strip():
            raise click.BadParameter(f"{item!r} is not NAME=COLUMN, e.g. site_address=ADDRESS.", param_hint="--field")
        if name.strip().lower() in fields:
            raise click.BadParameter(f"{name.strip()!r} is mapped twice.", param_hint="--field")
        fields[name.strip().lower()] = column.strip()
    return fields


@click.command(short_help="Export the permits as a layer (public fields unless --private).")
@_REGISTRY
@output_option(".gpkg, .geojson, .parquet or .csv.", stdout=True)
@click.option("--status", multiple=True, help="Only permits in this state (repeatable).")
@click.option("--private", is_flag=True, help="Include the parties' names and contact details.")
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "layers_path")
def export(
    registry: str, output: str, status: tuple[str, ...], private: bool, overwrite: bool, layers_path: str | None
) -> None:
    """Write the permits of REGISTRY to OUTPUT."""
    from esc_gis.io import check_output_path, write_layer

    check_output_path(output, overwrite=overwrite)
    with _open(registry, layers_path) as reg:
        frame = reg.frame(reg.permits(status=status or None), private=private, iso_dates=True)
    # Names and telephone numbers are for the owner's eyes: --private output is mode 0600.
    write_layer(frame, output, overwrite=overwrite, layer="permits", private=private)
    click.echo(f"Wrote {len(frame)} permit(s) to {output}{' (with private contacts)' if private else ''}.")
