"""``esc-gis permits``: enforcement cases (§ 540-12): open a case, act on it, list them.

Thin wrappers over :class:`esc_gis.registry.Registry`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group.
"""

from __future__ import annotations

import json

import click

from esc_gis.cli._permits import _LAYERS, _REGISTRY, _WHO, _case_json, _Choice, _date, _echo_case, _open


@click.command(short_help="Open an enforcement case (a permit, a screened site without one, or an address).")
@_REGISTRY
@click.option("--permit", "permit_number", default=None, help="The permit the case is about.")
@click.option("--site-layer", default=None, help="A screening output (`esc-gis screen -o`): the site is read from it.")
@click.option("--site-id", default=None, help="The site's id in --site-layer; its permit column must be 'required'.")
@click.option(
    "--address",
    default=None,
    help="The site's address, for a site neither permitted nor screened: an address measures nothing, so it "
    "takes ground A4, not A1 (give --site-layer or --permit for that).",
)
@click.option("--ground", required=True, help="The ground's code in the profile's [enforcement.grounds] (A1-A4).")
@click.option("--on", "on", required=True, help="Day the case is opened (YYYY-MM-DD).")
@click.option("--reasons", required=True, help="What was found: the written reasons.")
@click.option(
    "--condition",
    default=None,
    help="With a ground about the permit's conditions (A3): the condition not met, a code of the profile's "
    "standing conditions of every issued permit (E1-E8) or the number of one recorded on the permit, as "
    "`permits show` lists them.",
)
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
    condition: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Open an enforcement case in REGISTRY; a case needs no permit (activity without a required one).

    With --permit, the permit's site is decided as --site-layer decides a screened site (the
    screening function, with a determination recorded by `permits determine`): where it needs no
    permit, a ground the profile says does not fit there (activity without a required permit, the
    plan's or the conditions' grounds) is refused with the profile's words.
    """
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
            condition=condition,
        )
    _echo_case(c)
    for note in c.notes:
        click.echo(f"  note: {note}")


@click.command(short_help="Record a case's stop-work order, notice of intent and costs, referral, retraction, closing.")
@_REGISTRY
@click.argument("case_id")
@click.option("--notified", default=None, help="Day the responsible party was notified to cease (before a referral).")
@click.option("--stop-work", default=None, help="Day a stop-work order was posted (moves a permit to stop_work).")
@click.option("--notice", default=None, help="Day of the notice of intent to perform the work.")
@click.option("--costs-on", default=None, help="Day costs were billed or recovered, after the notice.")
@click.option("--paid", default=None, help="Day the responsible party paid (part of) the amount billed (--costs N).")
@click.option(
    "--costs",
    type=float,
    default=None,
    help="The office's costs (with --notice or --costs-on); with --paid, the amount.",
)
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
    paid: str | None,
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
        "paid": paid,
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


@click.command(short_help="List the enforcement cases (private).")
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
