"""``esc-gis permits``: the permit registry from the command line.

REGISTRY is a GeoPackage path (``permits.gpkg``) or a ``postgresql://`` URL; every
subcommand works the same on both. Each is a thin wrapper over
:class:`esc_gis.registry.Registry`; the library never prints, this module does.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import date, datetime, time, timezone
from typing import Any

import click

from esc_gis._outputs import reads
from esc_gis.cli._options import (
    FILE,
    VECTOR,
    assume_crs_option,
    basemap_option,
    layers_option,
    offline_option,
    output_option,
    overwrite_option,
    where_option,
)
from esc_gis.errors import EscGisError, Problem, ValidationError

_REGISTRY = click.argument("registry")
_LAYERS = layers_option("Layer set (default: the Village's); sites are measured in its CRS.")
_WHO = click.option("--who", default=None, help="Who makes the change (default: your login name).")


def _date(value: str | None, name: str) -> date | None:
    from esc_gis.registry.records import parse_date

    d, err = parse_date(value, name)
    if err:
        raise click.BadParameter(err, param_hint=f"--{name.replace('_', '-')}")
    return d


def _when(value: str | None, name: str) -> date | datetime | None:
    """Parse a date (YYYY-MM-DD) or a date and time (YYYY-MM-DDTHH:MM)."""
    if value is None or len(value.strip()) == 10:
        return _date(value, name)
    from esc_gis.registry.records import parse_datetime

    t, err = parse_datetime(value, name, as_typed=True)  # the registry puts it on the office's clock
    if err:
        raise click.BadParameter(err, param_hint=f"--{name}")
    return t


def _when_text(due: Any, profile: Any) -> str:
    """Return a due day as it is, a due time on the office's clock with its zone."""
    if isinstance(due, datetime):
        t = profile.local(due) if due.tzinfo is not None else due
        return f"{t:%Y-%m-%d %H:%M %Z}".strip()
    return str(due)


@contextmanager
def _open(registry: str, layers_path: str | None) -> Iterator[Any]:
    """Open REGISTRY; a refused value of an enumerated option (state, ground, trigger, ...) gets its nearest."""
    from esc_gis.registry import open_registry

    reg = open_registry(registry, layers=layers_path)
    try:
        yield reg
    except ValidationError as exc:
        problems = [_suggested_problem(p) for p in exc.problems]
        if problems == exc.problems:
            raise
        raise ValidationError(problems) from None
    except EscGisError as exc:
        hint = _nearest_hint(str(exc))
        if not hint or len(exc.args) != 1:
            raise
        raise type(exc)(f"{exc}{hint}") from None
    finally:
        reg.close()


#: "one of a, b", "use a, b", "the states are a, b", "(a, b)": the options a refused value was checked against.
_OPTIONS = re.compile(
    r"(?:(?:one of|the states are|use)\s+(?P<opts>[\w-]+(?:,\s*[\w-]+)+))|\((?P<listed>[\w-]+(?:,\s*[\w-]+)+)\)"
)
_QUOTED = re.compile(r"'([^']*)'")


def _nearest_hint(text: str) -> str:
    """Return `` Did you mean 'x'?`` for the first quoted value of ``text`` near one of the options it lists.

    Click suggests the nearest option *name* (``--stauts``); option *values* are checked by the
    registry and the profile, whose messages quote the value and list the options.

    Examples
    --------
    >>> _nearest_hint("'aproved' is not a permit state; the states are approved, active.")
    " Did you mean 'approved'?"
    >>> _nearest_hint("'xyz' is not a permit state; the states are approved, active.")
    ''
    >>> _nearest_hint("'aplication' is not a fee in the schedule (application, reinspection).")
    " Did you mean 'application'?"
    """
    found, value = _OPTIONS.search(text), _QUOTED.search(text)
    if not found or not value:
        return ""
    # Case aside, as a typed 'a1' is meant as the ground 'A1'.
    listed = found.group("opts") or found.group("listed")
    options = {o.strip().lower(): o.strip() for o in listed.split(",")}
    typed = value.group(1)
    near = difflib.get_close_matches(typed.lower(), list(options), n=1)
    return f" Did you mean {options[near[0]]!r}?" if near and options[near[0]] != typed else ""


def _suggested_problem(p: Problem) -> Problem:
    hint = "" if "Did you mean" in p.fix else _nearest_hint(f"{p.message} {p.fix}")
    return replace(p, fix=f"{p.fix}{hint}" if p.fix else hint.strip()) if hint else p


class _Choice(click.Choice):
    """A click choice whose refusal names the nearest choice (click names the choices only)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            near = difflib.get_close_matches(str(value), [str(c) for c in self.choices], n=1)
            if not near:
                raise
            self.fail(f"{exc.message} Did you mean {near[0]!r}?", param, ctx)


def _basis(basis: str) -> str:
    """Write a finding's basis as words: ``technical_standard`` -> ``technical standard``."""
    return basis.replace("_", " ")


def _describe(p: Any) -> str:
    return (
        f"{p.permit_number}  {p.status:<20} {p.site_address}  {p.disturbed_sqft:,.0f} sq ft"
        f"{f'  expires {p.expires_on}' if p.expires_on else ''}"
    )


@click.group(name="permits", short_help="The permit registry: add, move through the life cycle, due dates, public map.")
def permits() -> None:
    """Keep the erosion-control permits: applications, decisions, deadlines, enforcement.

    REGISTRY is a GeoPackage file (e.g. permits.gpkg) or a postgresql:// URL. Every deadline
    shown carries the section it rests on and its basis (ordinance or a stated reading), both
    from the ordinance profile.
    """


@permits.command(short_help="Create a registry, or apply pending schema migrations.")
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
        from esc_gis.registry.roles import require_postgis

        require_postgis(registry)  # before anything is made
    applied = init_registry(registry, layers=layers_path)
    click.echo(
        f"{registry}: "
        + (
            f"applied migration(s) {', '.join(map(str, applied))}."
            if applied
            else "already at the current schema version."
        )
    )
    if roles:
        from esc_gis.registry.roles import create_roles

        names = create_roles(registry, prefix=role_prefix)
        click.echo(
            f"Roles (NOLOGIN groups): {names.reader} reads the public view permits_public only; "
            f"{names.inspector} records inspections and repairs; {names.clerk} does the office's work. "
            f"Add people as members: CREATE ROLE alice LOGIN IN ROLE {names.inspector};"
        )


@permits.command(short_help="Add an application; the disturbed area is measured, never typed.")
@_REGISTRY
@click.option("--site", "site_path", type=VECTOR, default=None, help="Site boundary layer (one polygon).")
@click.option(
    "--site-layer",
    type=VECTOR,
    default=None,
    help="A layer of many sites (a screening output, `esc-gis screen -o`): the site is the one that "
    "--site-id and/or --where pick; its plan_id and activity are taken unless given.",
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
    found to need a permit.
    """
    from esc_gis.registry import Application, Party

    if (site_path is None) == (site_layer is None):
        raise click.UsageError("give the site: --site FILE (one polygon), or --site-layer FILE with --site-id/--where.")
    if site_path is not None and (site_id or where or site_layer_name):
        raise click.UsageError("--site-id, --where and --layer pick a site of --site-layer; --site has one.")
    if site_layer is not None:
        site, crs, row = _picked_site(site_layer, site_id, where, site_layer_name, assume_crs)
        plan_id = plan_id or row.get("plan_id")
        activity = activity or row.get("activity")
    else:
        assert site_path is not None
        site, crs = _one_polygon(site_path, assume_crs)
    disturbed = _disturbed_polygon(disturbed_path, assume_crs, crs, site_id) if disturbed_path else None
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
        parties=tuple(parties),
        plan_id=plan_id,
        activity=activity,
    )
    with _open(registry, layers_path) as reg:
        n = reg.add(app, who=who)
        click.echo(_describe(reg.get(n)))


def _picked_site(
    path: str, site_id: str | None, where: str | None, layer: str | None, assume_crs: str | None
) -> tuple[Any, Any, dict[str, Any]]:
    """Return the picked site of a layer of many: geometry, CRS, and its non-empty text fields."""
    from esc_gis.crs import assign_crs
    from esc_gis.registry.imports import pick_site

    one = assign_crs(pick_site(path, site_id=site_id, where=where, layer=layer), assume_crs=assume_crs, source=path)
    row = {k: v.strip() for k, v in one.drop(columns=one.geometry.name).iloc[0].items() if isinstance(v, str)}
    return one.geometry.iloc[0], one.crs, {k: v for k, v in row.items() if v}


def _disturbed_polygon(path: str, assume_crs: str | None, crs: Any, site_id: str | None) -> Any:
    """Return the disturbed limits: a layer's one polygon, or with a site id the one keyed by it (many)."""
    from esc_gis.crs import assign_crs
    from esc_gis.io import read_layer
    from esc_gis.registry.imports import pick_site

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


@permits.command(short_help="Show one permit: record, parties, history, deadlines.")
@_REGISTRY
@click.argument("number")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_LAYERS
def show(registry: str, number: str, as_json: bool, layers_path: str | None) -> None:
    """Show permit NUMBER of REGISTRY."""
    from esc_gis.registry.agenda import permit_dues

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
    if p.reports:
        click.echo("\ninspections (private):")
    for r in p.reports:
        where = f" at ({r.location.x:.1f}, {r.location.y:.1f})" if r.location is not None else ""
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
    _echo_cases(cases)
    click.echo("\ndeadlines:")
    for d in dues:
        click.echo(f"  {_when_text(d.due, prof)}  {d.what} ({d.section}; {_basis(d.basis)})")


def _yes_no(v: bool | None) -> str | None:
    return None if v is None else ("yes" if v else "no")


def _standing(r: Any, p: Any, profile: Any) -> str:
    """Say who inspected and whether the report meets the holder's weekly and after-rain duty, and why not."""
    from esc_gis.registry.inspections import missing_contents, report_contents

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


def _echo_cases(cases: list[Any]) -> None:
    if cases:
        click.echo("\nenforcement (private):")
    for c in cases:
        _echo_case(c)


def _case_json(c: Any) -> dict[str, Any]:
    out = {k: v for k, v in c.__dict__.items() if k not in ("site", "events")}
    return {
        **out,
        "state": c.state,
        "costs_total": c.costs_total,
        "assessed_total": c.assessed_total,
        "events": [e.__dict__ for e in c.events],
    }


def _echo_case(c: Any) -> None:
    where = c.permit_number or c.site_ref or c.site_address
    costs = f", costs {c.costs_total:,.2f}" if c.costs_total else ""
    costs += f", on the tax rolls {c.assessed_total:,.2f}" if c.assessed_total else ""
    click.echo(f"  {c.case_id}  {c.state:<10} {where}  ground {c.ground} opened {c.opened_on}{costs}: {c.reasons}")
    for e in c.events:
        money = f" {e.costs:,.2f} ({e.costs_from})" if e.costs is not None else ""
        click.echo(f"      {e.on_date} {e.kind}{money} by {e.who}" + (f": {e.detail}" if e.detail else ""))


@permits.command(short_help="Open an enforcement case (a permit, a screened site without one, or an address).")
@_REGISTRY
@click.option("--permit", "permit_number", default=None, help="The permit the case is about.")
@click.option("--site-layer", default=None, help="A screening output (`esc-gis screen -o`): the site is read from it.")
@click.option("--site-id", default=None, help="The site's id in --site-layer; its permit column must be 'required'.")
@click.option("--address", default=None, help="The site's address, for a site neither permitted nor screened.")
@click.option("--ground", required=True, help="The ground's code in the profile's [enforcement.grounds] (A1-A4).")
@click.option("--on", "on", required=True, help="Day the case is opened (YYYY-MM-DD).")
@click.option("--reasons", required=True, help="What was found: the written reasons.")
@_LAYERS
@_WHO
def enforce(
    registry: str,
    permit_number: str | None,
    site_layer: str | None,
    site_id: str | None,
    address: str | None,
    ground: str,
    on: str,
    reasons: str,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Open an enforcement case in REGISTRY; a case needs no permit (activity without a required one)."""
    with _open(registry, layers_path) as reg:
        c = reg.enforce(
            ground=ground,
            on=_date(on, "on"),
            reasons=reasons,
            permit_number=permit_number,
            site_layer=site_layer,
            site_id=site_id,
            address=address,
            who=who,
        )
    _echo_case(c)


@permits.command(
    short_help="Record a case's stop-work order, notice of intent and costs, referral, retraction, closing."
)
@_REGISTRY
@click.argument("case_id")
@click.option("--notified", default=None, help="Day the responsible party was notified to cease (before a referral).")
@click.option("--stop-work", default=None, help="Day a stop-work order was posted (moves a permit to stop_work).")
@click.option("--notice", default=None, help="Day of the notice of intent to perform the work.")
@click.option("--costs-on", default=None, help="Day costs were billed or recovered, after the notice.")
@click.option("--costs", type=float, default=None, help="The office's costs (with --notice or --costs-on).")
@click.option(
    "--costs-from",
    type=_Choice(["billed", "guarantee", "special_assessment"]),
    default=None,
    help="Billed, from the guarantee, or (billed and unpaid) entered on the tax rolls as a special assessment.",
)
@click.option(
    "--interest", type=float, default=None, help="Interest billed with the costs, at the Village Board's rate."
)
@click.option(
    "--guarantee",
    "guarantee_id",
    type=int,
    default=None,
    help="With --costs-from guarantee: which guarantee (default: the permit's one guarantee still held).",
)
@click.option("--refer", default=None, help="Day of the referral for a cease-and-desist order.")
@click.option("--retract", default=None, help="Day the stop-work order was retracted (a permit goes back).")
@click.option("--close", "close_on", default=None, help="Day the case was closed.")
@click.option("--reasons", default=None, help="Written reasons (required for a stop-work order and a retraction).")
@_LAYERS
@_WHO
def case(
    registry: str,
    case_id: str,
    notified: str | None,
    stop_work: str | None,
    notice: str | None,
    costs_on: str | None,
    costs: float | None,
    costs_from: str | None,
    interest: float | None,
    guarantee_id: int | None,
    refer: str | None,
    retract: str | None,
    close_on: str | None,
    reasons: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record one event of enforcement case CASE_ID of REGISTRY, or show the case."""
    actions = {
        "notified": notified,
        "stop_work": stop_work,
        "notice": notice,
        "costs": costs_on,
        "referral": refer,
        "retraction": retract,
        "closed": close_on,
    }
    given = {k: v for k, v in actions.items() if v}
    if len(given) > 1:
        raise click.ClickException(f"give one action at a time (got {', '.join(given)}).")
    with _open(registry, layers_path) as reg:
        if given:
            ((kind, day),) = given.items()
            c = reg.case_action(
                case_id,
                kind,
                on=_date(day, kind),
                who=who,
                reasons=reasons,
                costs=costs,
                costs_from=costs_from,
                guarantee_id=guarantee_id,
                interest=interest,
            )
        else:
            c = reg.case(case_id)
    _echo_case(c)


@permits.command(short_help="List the enforcement cases (private).")
@_REGISTRY
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_LAYERS
def cases(registry: str, as_json: bool, layers_path: str | None) -> None:
    """List REGISTRY's enforcement cases with their events.

    The ordinance sets no compliance deadline after a notice of intent, so cases have no due
    date in `permits due`.
    """
    with _open(registry, layers_path) as reg:
        found = reg.cases()
    if as_json:
        click.echo(json.dumps([_case_json(c) for c in found], default=str, indent=2))
        return
    for c in found:
        _echo_case(c)


def _report_json(r: Any) -> dict[str, Any]:
    return {
        **{k: v for k, v in r.__dict__.items() if k not in ("location", "deficiencies", "photos")},
        "location": None if r.location is None else [r.location.x, r.location.y],
        "deficiencies": [d.__dict__ for d in r.deficiencies],
        "photos": [{k: v for k, v in ph.__dict__.items() if k != "data"} for ph in r.photos],
    }


@permits.command(short_help="Record a site inspection report: deficiencies open 24-hour repairs; photos kept.")
@_REGISTRY
@click.argument("number")
@click.option("--at", "at", required=True, help="Date and time of the inspection (YYYY-MM-DDTHH:MM, local time).")
@click.option("--inspector", required=True, help="Name of the individual who inspected.")
@click.option("--assessment", required=True, help="Assessment of the condition of the erosion and sediment controls.")
@click.option("--work-done", default=None, help="BMP implementation and maintenance performed.")
@click.option("--phase", default=None, help="The present phase of land-disturbing construction activity.")
@click.option("--deficiency", "deficiencies", multiple=True, help="A deficiency found (repeatable); opens a repair.")
@click.option(
    "--notified", default=None, help="When the permittee was notified of the deficiencies (YYYY-MM-DDTHH:MM)."
)
@click.option("--repaired", "repaired", multiple=True, type=int, help="Number of an open deficiency found repaired.")
@click.option("--photo", "photos", multiple=True, help="A photo file (PNG, JPEG, ...), stored in the registry.")
@click.option("--point", nargs=2, type=float, default=None, help="Where on the site: X Y in the layer set's CRS.")
@click.option(
    "--by",
    "by",
    type=click.Choice(["holder", "office"]),
    default="holder",
    show_default=True,
    help="Who inspected: the permit holder (whose weekly and after-rain inspections are the permit's "
    "duty) or the office (its own inspection, which never meets the holder's duty).",
)
@click.option(
    "--adjoining-repairs",
    default=None,
    help="Repairs of siltation or erosion damage to adjoining surfaces and drainageways the report documents.",
)
@click.option(
    "--pre-start",
    is_flag=True,
    help="An inspection before land disturbance began (the practices installed first), on an issued permit.",
)
@click.option(
    "--on-site-documents",
    type=click.Choice(["yes", "no"]),
    default=None,
    help="Office inspection: the plan, amendments, weekly reports and permit kept at the site?",
)
@click.option(
    "--certificate-posted",
    type=click.Choice(["yes", "no"]),
    default=None,
    help="Office inspection: the certificate of permit coverage posted in a conspicuous location?",
)
@_LAYERS
@_WHO
def inspect(
    registry: str,
    number: str,
    at: str,
    inspector: str,
    assessment: str,
    work_done: str | None,
    phase: str | None,
    deficiencies: tuple[str, ...],
    notified: str | None,
    repaired: tuple[int, ...],
    photos: tuple[str, ...],
    point: tuple[float, float] | None,
    by: str,
    adjoining_repairs: str | None,
    pre_start: bool,
    on_site_documents: str | None,
    certificate_posted: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record an inspection of permit NUMBER in REGISTRY (the weekly report's contents).

    Each --deficiency opens a repair, due within the profile's repair period of the
    inspection (or of --notified), listed by `permits due` until a later inspection
    (--repaired ID) or `permits repaired` closes it. Only the permit holder's inspections
    (--by holder, the default) whose report holds every item the profile's
    [inspections.report_contents] requires (--point, --work-done, --phase) meet the weekly and
    after-rain duty; an incomplete one is recorded and listed by `permits due` with what it
    lacks. An office inspection (--by office) may record the site checklist; a "no" is listed
    by `permits due` until a later office inspection records "yes". Inspectors' notes and
    photos are private: never on the public map or in a public export.
    """
    import shapely

    from esc_gis.registry.inspections import InspectionReport

    report = InspectionReport(
        inspected_at=_time(at, "at"),
        inspector=inspector,
        assessment=assessment,
        work_done=work_done,
        phase=phase,
        deficiencies=deficiencies,
        photos=photos,
        location=shapely.Point(point) if point else None,
        notified_at=_time(notified, "notified") if notified else None,
        repaired=repaired,
        by=by,
        pre_start=pre_start,
        adjoining_repairs=adjoining_repairs,
        on_site_documents=None if on_site_documents is None else on_site_documents == "yes",
        certificate_posted=None if certificate_posted is None else certificate_posted == "yes",
    )
    with _open(registry, layers_path) as reg:
        r = reg.inspect(number, report, who=who)
    opened = ", ".join(f"#{d.id}" for d in r.deficiencies)
    click.echo(
        f"{number}: inspection #{r.id} recorded ({_when_text(r.inspected_at, reg.profile)}, {r.inspector}, "
        f"{r.by}{', pre-start' if r.pre_start else ''}); "
        f"{len(r.deficiencies)} deficiency(ies){f' ({opened}) open repairs' if opened else ''}, "
        f"{len(r.photos)} photo(s)."
    )


@permits.command(short_help="Record the repair of inspection deficiencies: closes their repairs.")
@_REGISTRY
@click.argument("number")
@click.option("--deficiency", "ids", multiple=True, type=int, required=True, help="Deficiency number (repeatable).")
@click.option("--on", "on", required=True, help="When the repair was done (YYYY-MM-DDTHH:MM, local time).")
@click.option("--detail", default=None, help="What was repaired or replaced.")
@_LAYERS
@_WHO
def repaired(
    registry: str,
    number: str,
    ids: tuple[int, ...],
    on: str,
    detail: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record in REGISTRY that deficiencies of permit NUMBER were repaired."""
    when = _time(on, "on")
    assert when is not None
    with _open(registry, layers_path) as reg:
        p = reg.repaired(number, ids, on=when, who=who, detail=detail)
    click.echo(f"{number}: repaired {', '.join(f'#{i}' for i in ids)}; {len(p.open_repairs)} repair(s) still open.")


def _time(value: str | None, name: str) -> datetime | None:
    """Parse a date and time (YYYY-MM-DDTHH:MM; a day alone is refused: the repair clock runs in hours)."""
    from esc_gis.registry.records import parse_datetime

    if value is not None and len(value.strip()) == 10:
        raise click.BadParameter(f"{value!r} has no time of day; give YYYY-MM-DDTHH:MM.", param_hint=f"--{name}")
    t, err = parse_datetime(value, name, as_typed=True)  # the registry puts it on the office's clock
    if err:
        raise click.BadParameter(err, param_hint=f"--{name}")
    return t


@permits.command(name="list", short_help="List permits, optionally by status.")
@_REGISTRY
@click.option("--status", multiple=True, help="Only permits in this state (repeatable).")
@_LAYERS
def list_(registry: str, status: tuple[str, ...], layers_path: str | None) -> None:
    """List the permits of REGISTRY."""
    with _open(registry, layers_path) as reg:
        found = reg.permits(status=status or None)
    for p in found:
        click.echo(_describe(p))
    click.echo(f"{len(found)} permit(s).", err=True)


@permits.command(short_help="Change fields or dates, or record an inspection.")
@_REGISTRY
@click.argument("number")
@click.option("--address", "site_address", default=None)
@click.option("--parcel-id", default=None)
@click.option("--legal", "legal_description", default=None)
@click.option("--building-permit-expires", default=None, help="YYYY-MM-DD; the expiry is recomputed.")
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
    help="Record the permit holder's site inspection on this day (YYYY-MM-DD; its report kept at the site).",
)
@_LAYERS
@_WHO
def update(
    registry: str,
    number: str,
    site_address: str | None,
    parcel_id: str | None,
    legal_description: str | None,
    building_permit_expires: str | None,
    start_notice: str | None,
    work_stopped: str | None,
    resume_expected: str | None,
    resumed: str | None,
    stockpile_since: str | None,
    inspected: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Update permit NUMBER of REGISTRY."""
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
    with _open(registry, layers_path) as reg:
        p = reg.update(number, who=who, inspected_on=_date(inspected, "inspected"), **changes)
    click.echo(_describe(p))


@permits.command(short_help="Move a permit through its life cycle.")
@_REGISTRY
@click.argument("number")
@click.argument("state")
@click.option(
    "--on", "on", default=None, help="When (YYYY-MM-DD, or YYYY-MM-DDTHH:MM for the start of work); default now."
)
@click.option(
    "--reasons",
    default=None,
    help="Written reasons, the text of the written notification (required for disapproved, stop_work, "
    "suspended, revoked).",
)
@_LAYERS
@_WHO
def transition(
    registry: str,
    number: str,
    state: str,
    on: str | None,
    reasons: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Move permit NUMBER of REGISTRY to STATE."""
    with _open(registry, layers_path) as reg:
        p = reg.transition(number, state, who=who, on=_when(on, "on"), reasons=reasons)
    click.echo(_describe(p))


def _back_command(move: str, short: str, doc: str) -> None:
    """Register ``permits retract`` / ``permits reinstate``: back to the state before, with written reasons."""

    @permits.command(name=move, short_help=short, help=doc)
    @_REGISTRY
    @click.argument("number")
    @click.option("--reasons", required=True, help="Written reasons, the text of the written notification.")
    @click.option("--on", default=None, help="Day of the decision (YYYY-MM-DD); default today.")
    @_LAYERS
    @_WHO
    def command(
        registry: str, number: str, reasons: str, on: str | None, layers_path: str | None, who: str | None
    ) -> None:
        with _open(registry, layers_path) as reg:
            method = reg.retract if move == "retract" else reg.reinstate
            p = method(number, reasons=reasons, who=who, on=_date(on, "on"))
        click.echo(_describe(p))


_back_command(
    "retract",
    "Retract a stop-work order or a revocation: back to the state before.",
    "Retract the stop-work order or revocation of permit NUMBER of REGISTRY; it goes back to the state "
    "it was in before.",
)
_back_command(
    "reinstate",
    "Lift a suspension: back to the state before.",
    "Reinstate the suspended permit NUMBER of REGISTRY; it goes back to the state it was in before.",
)


@permits.command(short_help="Extend a permit (each extension up to the profile's longest).")
@_REGISTRY
@click.argument("number")
@click.argument("days", type=click.IntRange(min=1))
@click.option("--on", default=None, help="Day of the decision (YYYY-MM-DD); default today.")
@click.option("--reasons", default=None, help="Reasons of the extension.")
@click.option(
    "--condition", "conditions", multiple=True, help="An additional BMP required as a condition (repeatable)."
)
@click.option(
    "--authorization",
    "authorizations",
    multiple=True,
    help="Another construction authorization the extension rests on (repeatable).",
)
@_LAYERS
@_WHO
def extend(
    registry: str,
    number: str,
    days: int,
    on: str | None,
    reasons: str | None,
    conditions: tuple[str, ...],
    authorizations: tuple[str, ...],
    layers_path: str | None,
    who: str | None,
) -> None:
    """Extend permit NUMBER of REGISTRY by DAYS (approved, active, extended, or under a stop-work order)."""
    with _open(registry, layers_path) as reg:
        p = reg.extend(
            number,
            days,
            who=who,
            on=_date(on, "on"),
            reasons=reasons,
            conditions=conditions,
            authorizations=authorizations,
        )
    click.echo(_describe(p))


@permits.command(name="import", short_help="Import a layer of permits; every bad row is reported, nothing half-done.")
@_REGISTRY
@click.argument("layer_path", metavar="LAYER", type=VECTOR)
@click.option("--layer", default=None, help="Layer name in a multi-layer file.")
@where_option("OGR SQL WHERE clause picking the rows of LAYER to import.")
@click.option(
    "--disturbed",
    "disturbed_path",
    type=VECTOR,
    default=None,
    help="Disturbed limits keyed by permit_number; a permit with none counts its whole site.",
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
    field_items: tuple[str, ...],
    received_on: str | None,
    assume_crs: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Import the permits of LAYER into REGISTRY (columns: see the README).

    A screening output goes in as it is, with the two things a screening does not know: the
    site's address (--field site_address=COLUMN) and the day the applications came in
    (--received-on). Pick the sites that need a permit with --where "permit = 'required'".
    """
    from esc_gis.crs import assign_crs
    from esc_gis.io import read_layer

    fields = _field_items(field_items)
    day = _date(received_on, "received_on")

    frame = assign_crs(
        read_layer(layer_path, layer=layer, where=where, dates_as_text=True), assume_crs=assume_crs, source=layer_path
    )
    disturbed = (
        assign_crs(read_layer(disturbed_path), assume_crs=assume_crs, source=disturbed_path) if disturbed_path else None
    )
    with _open(registry, layers_path) as reg:
        numbers = reg.import_frame(
            frame, source=layer_path, disturbed=disturbed, who=who, fields=fields, received_on=day
        )
    click.echo(
        f"Imported {len(numbers)} permit(s) into {registry}: {', '.join(numbers[:5])}"
        f"{', ...' if len(numbers) > 5 else ''}."
    )


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


@permits.command(short_help="Export the permits as a layer (public fields unless --private).")
@_REGISTRY
@output_option(".gpkg, .geojson, .parquet or .csv")
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


@permits.command(short_help="What is due or overdue: decisions, expiries, notices, inspections.")
@_REGISTRY
@click.option("--on", default=None, help="The day to look from (YYYY-MM-DD); default today.")
@click.option(
    "--rain",
    "rain_path",
    type=FILE,
    default=None,
    help="Precipitation CSV (date or date and time, precip_in or NOAA PRCP) for the inspections after "
    "rain; daily totals or timed (hourly) readings.",
)
@click.option(
    "--within", default=7, show_default=True, type=click.IntRange(min=0), help="Also list what falls due within DAYS."
)
@click.option(
    "--calendar",
    "calendar_path",
    type=FILE,
    default=None,
    help="Office calendar TOML (holidays, weekend); default the common Wisconsin municipal one.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_LAYERS
def due(
    registry: str,
    on: str | None,
    rain_path: str | None,
    within: int,
    calendar_path: str | None,
    as_json: bool,
    layers_path: str | None,
) -> None:
    """List what is due or overdue in REGISTRY."""
    from esc_gis.registry.agenda import agenda, read_rain_csv
    from esc_gis.registry.calendar import load_calendar

    rain = read_rain_csv(rain_path) if rain_path else []
    with _open(registry, layers_path) as reg:
        day = _date(on, "on") or reg.profile.today()
        cal = load_calendar(calendar_path) if calendar_path else reg.calendar
        items = agenda(reg.permits(), on=day, calendar=cal, profile=reg.profile, rain=rain, within_days=within)
        prof = reg.profile
    if as_json:
        click.echo(json.dumps([i.__dict__ for i in items], default=str, indent=2))
        return
    for i in items:
        flag = "OVERDUE" if i.overdue else "due    "
        click.echo(
            f"{flag} {_when_text(i.due, prof):<20} {i.permit_number}  {i.what} ({i.section}; {_basis(i.basis)})  "
            f"[{i.site_address}]"
        )
    click.echo(
        f"{sum(i.overdue for i in items)} overdue, {sum(not i.overdue for i in items)} due by "
        f"{day.fromordinal(day.toordinal() + within)}.",
        err=True,
    )


@permits.command(name="calendar", short_help="The deadlines as an iCalendar (.ics) feed for calendar apps.")
@_REGISTRY
@output_option("Output iCalendar file (.ics).")
@click.option("--on", default=None, help="The day to look from (YYYY-MM-DD); default today.")
@click.option(
    "--rain",
    "rain_path",
    type=FILE,
    default=None,
    help="Precipitation CSV for the inspections after rain, as for `permits due`.",
)
@click.option(
    "--within",
    default=365,
    show_default=True,
    type=click.IntRange(min=0),
    help="Include what falls due within DAYS (overdue items are always included).",
)
@click.option(
    "--calendar",
    "calendar_path",
    type=FILE,
    default=None,
    help="Office calendar TOML (holidays, weekend); default the common Wisconsin municipal one.",
)
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "rain_path", "calendar_path", "layers_path")
def calendar_feed(
    registry: str,
    output: str,
    on: str | None,
    rain_path: str | None,
    within: int,
    calendar_path: str | None,
    overwrite: bool,
    layers_path: str | None,
) -> None:
    """Write REGISTRY's deadlines to OUTPUT, one event per deadline (what `permits due --within DAYS` lists).

    UIDs are stable, so importing a re-export updates events instead of duplicating them.
    No personal data: permit numbers, site addresses and the deadlines only.
    """
    from esc_gis._outputs import atomic_output, check_output_file
    from esc_gis.registry.agenda import agenda, read_rain_csv
    from esc_gis.registry.calendar import load_calendar
    from esc_gis.registry.ical import deadline_calendar, write_ics

    check_output_file(output, suffixes=(".ics",), kind="the deadline feed is written as iCalendar", overwrite=overwrite)
    rain = read_rain_csv(rain_path) if rain_path else []
    with _open(registry, layers_path) as reg:
        day = _date(on, "on") or reg.profile.today()
        cal = load_calendar(calendar_path) if calendar_path else reg.calendar
        items = agenda(reg.permits(), on=day, calendar=cal, profile=reg.profile, rain=rain, within_days=within)
        feed = deadline_calendar(items, profile=reg.profile, on=day)
    with atomic_output(output) as tmp:
        write_ics(feed, tmp)
    click.echo(
        f"Wrote {output}: {len(items)} deadline(s), {sum(i.overdue for i in items)} overdue on {day}, "
        f"through {day.fromordinal(day.toordinal() + within)}."
    )


@permits.command(name="map", short_help="The public map of permits: active, stop-work, suspended (no personal data).")
@_REGISTRY
@output_option("Output map (.html).")
@click.option("--public", is_flag=True, help="The public map: active permits, no personal data (required).")
@basemap_option()
@offline_option("Inline Leaflet: the file opens with no network.")
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "layers_path")
def map_(
    registry: str, output: str, public: bool, basemap: str, offline: bool, overwrite: bool, layers_path: str | None
) -> None:
    """Write the public map of REGISTRY's permits where work is permitted or halted to OUTPUT."""
    from esc_gis.maps import check_map_path, write_map
    from esc_gis.maps.public import PUBLIC_STATUS, public_counts, public_frame, public_permit_map, stamp_text

    if not public:
        raise click.UsageError("Only the public map is available: pass --public.")
    check_map_path(output, overwrite=overwrite)
    with _open(registry, layers_path) as reg:
        as_of = datetime.now(timezone.utc)
        frame = reg.frame(reg.permits(status=list(PUBLIC_STATUS)))
        m = public_permit_map(
            frame,
            as_of=as_of,
            contact=reg.profile.contact,
            layers=reg.layers,
            basemap=basemap,
            offline=offline,
            profile=reg.profile,
        )
        # The map's own count and clock, so the message and the legend agree.
        said = f"{public_counts(public_frame(frame)['status'])}, data as of {stamp_text(as_of, reg.profile)}"
    write_map(m, output, overwrite=overwrite)
    click.echo(f"Wrote {output}: {said}.")


def _echo_appeal(a: Any) -> None:
    about = ", ".join(x for x in (a.permit_number, a.case_id) if x)
    of = f" [{a.appealed_kind.replace('_', ' ')}]" if a.appealed_kind else ""
    click.echo(f"  {a.appeal_id}  {about}  filed {a.filed_on} by {a.appellant} ({a.appellant_kind}): {a.appealed}{of}")
    d = a.decision
    if d is None:
        click.echo("      undecided")
    else:
        cond = f"; conditions: {d.conditions}" if d.conditions else ""
        found = f"; findings: {', '.join(d.findings)}" if d.findings else ""
        click.echo(f"      {d.decided_on} {d.outcome} by {d.body}{cond}{found}; {d.effect}")


@permits.command(short_help="Record an appeal of an order, decision or determination (private).")
@_REGISTRY
@click.option("--permit", "permit_number", default=None, help="The permit the appealed decision concerns.")
@click.option("--case", "case_id", default=None, help="The enforcement case the appealed order belongs to.")
@click.option("--appealed", required=True, help="The order, decision or determination appealed.")
@click.option(
    "--kind",
    required=True,
    help="What kind of order or decision it is: the profile's [appeals.appealed] key, e.g. stop_work_order, "
    "revocation, permit_decision, other. Only a reversal of the kind that put the permit in its state moves it back.",
)
@click.option("--appellant", required=True, help="Who appealed (name or Village body).")
@click.option("--appellant-kind", required=True, help="The profile's [appeals.appellants] key, e.g. aggrieved_person.")
@click.option("--on", "on", required=True, help="Day the appeal was filed (YYYY-MM-DD).")
@click.option("--grounds", required=True, help="The alleged error, or the hardship a variance would relieve.")
@_LAYERS
@_WHO
def appeal(
    registry: str,
    permit_number: str | None,
    case_id: str | None,
    appealed: str,
    kind: str,
    appellant: str,
    appellant_kind: str,
    on: str,
    grounds: str,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record an appeal in REGISTRY of a decision or order about a permit or an enforcement case."""
    with _open(registry, layers_path) as reg:
        a = reg.appeal(
            appealed=appealed,
            appellant=appellant,
            appellant_kind=appellant_kind,
            on=_date(on, "on"),
            grounds=grounds,
            permit_number=permit_number,
            case_id=case_id,
            kind=kind,
            who=who,
        )
    _echo_appeal(a)


@permits.command(short_help="Record the decision on an appeal: upheld, reversed, modified, or a variance.")
@_REGISTRY
@click.argument("appeal_id")
@click.option("--body", required=True, help="Who heard it: the profile's [appeals.bodies] key.")
@click.option(
    "--outcome", required=True, help="upheld, reversed, modified or variance (the profile's [appeals.outcomes])."
)
@click.option("--on", "on", required=True, help="Day of the decision (YYYY-MM-DD).")
@click.option("--conditions", default=None, help="The board's conditions, if it set any.")
@click.option(
    "--finding",
    "findings",
    multiple=True,
    help="A finding a variance rests on (repeatable): the profile's [appeals.variance.findings] key.",
)
@_LAYERS
@_WHO
def decide(
    registry: str,
    appeal_id: str,
    body: str,
    outcome: str,
    on: str,
    conditions: str | None,
    findings: tuple[str, ...],
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record the decision on appeal APPEAL_ID of REGISTRY; a reversal of an order sends the permit back.

    A disapproval appealed as a permit decision and reversed or modified is approved and issued.
    """
    with _open(registry, layers_path) as reg:
        a = reg.decide_appeal(
            appeal_id,
            body=body,
            outcome=outcome,
            on=_date(on, "on"),
            conditions=conditions,
            findings=findings,
            who=who,
        )
    _echo_appeal(a)


@permits.command(name="appeals", short_help="List the appeals and their decisions (private).")
@_REGISTRY
@_LAYERS
def appeals_(registry: str, layers_path: str | None) -> None:
    """List REGISTRY's appeals with the body that heard each and its decision."""
    with _open(registry, layers_path) as reg:
        found = reg.appeals()
    for a in found:
        _echo_appeal(a)


@permits.command(short_help="Record a fee paid, with its receipt (an application is complete only with its fee).")
@_REGISTRY
@click.argument("number")
@click.option("--kind", required=True, help="The fee's kind in the schedule, e.g. application.")
@click.option("--amount", type=float, required=True, help="Amount paid, in dollars.")
@click.option("--paid-on", required=True, help="Day paid (YYYY-MM-DD).")
@click.option("--receipt", required=True, help="The receipt number.")
@click.option(
    "--fees",
    "fees_path",
    type=FILE,
    default=None,
    help="The fee schedule set by resolution (TOML): the kind and amount must be the ones it sets.",
)
@_LAYERS
@_WHO
def fee(
    registry: str,
    number: str,
    kind: str,
    amount: float,
    paid_on: str,
    receipt: str,
    fees_path: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record a fee paid for permit NUMBER of REGISTRY (private: never on the public map or export)."""
    from esc_gis.registry.fees import load_fee_schedule

    schedule = load_fee_schedule(fees_path) if fees_path else None
    with _open(registry, layers_path) as reg:
        f = reg.record_fee(
            number,
            kind=kind,
            amount=amount,
            paid_on=_date(paid_on, "paid_on"),
            receipt=receipt,
            schedule=schedule,
            who=who,
        )
    click.echo(f"{f.permit_number}: {f.kind} fee {f.amount:,.2f} paid {f.paid_on}, receipt {f.receipt}.")


def _echo_guarantee(g: Any) -> None:
    until = f", expires {g.expires_on}" if g.expires_on else ""
    click.echo(
        f"guarantee #{g.id} {g.permit_number}: {g.type.replace('_', ' ')} {g.amount:,.2f} received {g.received_on}"
        f"{until}; held {g.balance:,.2f}"
    )
    for e in g.events:
        why = (
            e.reason
            or (f"stage {e.stage}" if e.stage else "")
            or (f"as-built plans by {e.engineer}" if e.engineer else "")
        )
        click.echo(f"  {e.on_date} {e.kind.replace('_', ' ')} {e.amount or 0:,.2f}: {why} ({e.recorded_by})")


@permits.command(short_help="Record a financial guarantee: surety bond, cash escrow or letter of credit.")
@_REGISTRY
@click.argument("number")
@click.option(
    "--type",
    "type_",
    type=_Choice(["surety_bond", "cash_escrow", "letter_of_credit"]),
    required=True,
    help="The form of the guarantee.",
)
@click.option("--amount", type=float, required=True, help="Amount, in dollars.")
@click.option("--received-on", required=True, help="Day received (YYYY-MM-DD).")
@click.option("--expires", default=None, help="A letter of credit's expiry date (a deadline in `permits due`).")
@_LAYERS
@_WHO
def guarantee(
    registry: str,
    number: str,
    type_: str,
    amount: float,
    received_on: str,
    expires: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record a financial guarantee for permit NUMBER of REGISTRY (private)."""
    with _open(registry, layers_path) as reg:
        g = reg.add_guarantee(
            number,
            type=type_,
            amount=amount,
            received_on=_date(received_on, "received_on"),
            expires_on=_date(expires, "expires"),
            who=who,
        )
    _echo_guarantee(g)


@permits.command(name="guarantee-event", short_help="A guarantee's draw, partial release or final release.")
@_REGISTRY
@click.argument("guarantee_id", type=int)
@click.option("--on", "on", required=True, help="Day of the draw or release (YYYY-MM-DD).")
@click.option("--draw", type=float, default=None, help="Amount drawn for work the office performed (with --reason).")
@click.option("--reason", default=None, help="The work the office performed.")
@click.option("--notice-on", default=None, help="Day of the written notice of improper implementation a draw rests on.")
@click.option("--release", type=float, default=None, help="Amount of a partial prorated release (with --stage).")
@click.option("--stage", default=None, help="The development stage completed.")
@click.option("--final-release", is_flag=True, help="Release what is left on as-built plans (with --engineer).")
@click.option(
    "--engineer", default=None, help="The licensed professional engineer of the as-built plans (and licence)."
)
@_LAYERS
@_WHO
def guarantee_event(
    registry: str,
    guarantee_id: int,
    on: str,
    draw: float | None,
    reason: str | None,
    notice_on: str | None,
    release: float | None,
    stage: str | None,
    final_release: bool,
    engineer: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record a draw or release of guarantee GUARANTEE_ID of REGISTRY (see `permits guarantees`)."""
    given = [k for k, v in (("draw", draw), ("release", release), ("final_release", final_release or None)) if v]
    if len(given) != 1:
        raise click.ClickException("give one of --draw, --release or --final-release.")
    kind = given[0]
    with _open(registry, layers_path) as reg:
        g = reg.guarantee_event(
            guarantee_id,
            kind,
            on=_date(on, "on"),
            amount=draw if kind == "draw" else release,
            reason=reason,
            stage=stage,
            engineer=engineer,
            who=who,
            notice_on=_date(notice_on, "notice-on"),
        )
    _echo_guarantee(g)


@permits.command(name="guarantees", short_help="List the financial guarantees and what is held (private).")
@_REGISTRY
@_LAYERS
def guarantees_(registry: str, layers_path: str | None) -> None:
    """List REGISTRY's guarantees with their draws and releases."""
    with _open(registry, layers_path) as reg:
        for g in reg.guarantees():
            _echo_guarantee(g)


@permits.command(short_help="Export the fee receipts as CSV (private: written readable by you only).")
@_REGISTRY
@output_option(".csv")
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "layers_path")
def receipts(registry: str, output: str, overwrite: bool, layers_path: str | None) -> None:
    """Write every fee recorded in REGISTRY to OUTPUT (CSV), one receipt a row."""
    from esc_gis.registry.fees import write_receipts

    with _open(registry, layers_path) as reg:
        found = reg.fees()
    write_receipts(found, output, overwrite=overwrite)
    click.echo(f"Wrote {len(found)} receipt(s) to {output}.")


def _echo_version(v: Any) -> None:
    if v.is_notice:
        click.echo(f"  notice #{v.id}  {v.trigger}  {v.requested_on} by {v.requested_by}: {v.description}")
        return
    label = "original" if v.version == 0 else f"{v.trigger}"
    permission = (
        f"; permission {v.permission_on} by {v.permission_by}, effective {v.effective_on}" if v.permission_on else ""
    )
    answers = f"; answers notice #{v.notice_id}" if v.notice_id is not None else ""
    file = f"; file {v.plan_file} (sha256 {v.plan_sha256[:12]}...)" if v.plan_file and v.plan_sha256 else ""
    click.echo(f"  version {v.version}  {label}  plan dated {v.plan_date}: {v.description}{permission}{answers}{file}")


@permits.command(
    short_help="Record a plan version: the original, an amendment with its written permission, or a notice."
)
@_REGISTRY
@click.argument("number")
@click.option(
    "--trigger",
    required=True,
    help="original (the plan approved with the permit), or what makes the plan amended: "
    "B1, B2 or B3 (the profile's [amendments.triggers]).",
)
@click.option(
    "--description", required=True, help="What the version changes (or, with --notified-on, the changes needed)."
)
@click.option("--plan-date", default=None, help="The date on the plan version (YYYY-MM-DD).")
@click.option("--permission-on", default=None, help="Day of the administering authority's written permission.")
@click.option("--permission-by", default=None, help="Who gave the written permission.")
@click.option("--effective-on", default=None, help="Day the modification takes effect (default: the permission's day).")
@click.option("--requested-by", default=None, help="Who asked for the amendment (or who sent the notice).")
@click.option("--notice", "notice_id", type=int, default=None, help="The open notice the amended plan answers.")
@click.option("--plan-file", type=FILE, default=None, help="The plan version's file: its name and SHA-256 are kept.")
@click.option(
    "--notified-on",
    default=None,
    help="Record the office's notice of changes needed, sent on this day (trigger B3), before the amended plan.",
)
@_LAYERS
@_WHO
def amend(
    registry: str,
    number: str,
    trigger: str,
    description: str,
    plan_date: str | None,
    permission_on: str | None,
    permission_by: str | None,
    effective_on: str | None,
    requested_by: str | None,
    notice_id: int | None,
    plan_file: str | None,
    notified_on: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record a version of permit NUMBER's erosion and sediment control plan in REGISTRY (private but its date).

    An amendment needs the written permission given before the modification takes effect.
    """
    with _open(registry, layers_path) as reg:
        if notified_on is not None:
            if any(
                x is not None for x in (plan_date, permission_on, permission_by, effective_on, notice_id, plan_file)
            ):
                raise click.ClickException(
                    "a notice (--notified-on) has no plan yet: record the amended plan with its own `permits amend`."
                )
            v = reg.notify_amendment(
                number,
                trigger=trigger,
                description=description,
                notified_on=_date(notified_on, "notified_on"),
                requested_by=requested_by,
                who=who,
            )
        else:
            v = reg.amend(
                number,
                trigger=trigger,
                description=description,
                plan_date=_date(plan_date, "plan_date"),
                permission_on=_date(permission_on, "permission_on"),
                permission_by=permission_by,
                effective_on=_date(effective_on, "effective_on"),
                requested_by=requested_by,
                notice_id=notice_id,
                plan_file=plan_file,
                who=who,
            )
        keep = reg.profile.finding("plan_at_site")
    click.echo(f"{v.permit_number}:")
    _echo_version(v)
    if not v.is_notice:
        click.echo(f"  {keep.message} ({keep.section}).")


@permits.command(name="amendments", short_help="List the plan versions, amendments and open notices (private).")
@_REGISTRY
@click.argument("number", required=False)
@_LAYERS
def amendments_(registry: str, number: str | None, layers_path: str | None) -> None:
    """List REGISTRY's plan versions (or permit NUMBER's), with the notices no amended plan answers yet."""
    with _open(registry, layers_path) as reg:
        found = reg.plan_versions(number)
        open_ = reg.open_notices(number)
        notes = [
            reg.profile.finding("amendment_notice_open", notice_id=n.id, notified_on=n.requested_on) for n in open_
        ]
    permits_: dict[str, list[Any]] = {}
    for v in found:
        permits_.setdefault(v.permit_number, []).append(v)
    for n, versions in permits_.items():
        click.echo(n)
        for v in versions:
            _echo_version(v)
    for n, f in zip(open_, notes, strict=True):
        click.echo(f"OPEN {n.permit_number}: {f.message} ({f.section}; {_basis(f.basis)})")
    if not found:
        click.echo("No plan versions recorded.", err=True)


# The office's printed and exported records (reports, the summary, the inspections' archive)
# live in their own module; they join the group here.
from esc_gis.cli.permits_report import export_inspections, report, summary  # noqa: E402
from esc_gis.cli.permits_verify import verify  # noqa: E402

for _command in (report, summary, export_inspections, verify):
    permits.add_command(_command)
