"""``esc-gis permits``: appeals and their decisions (§ 540-13).

Thin wrappers over :class:`esc_gis.registry.Registry`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group.
"""

from __future__ import annotations

from typing import Any

import click

from esc_gis.cli._permits import _LAYERS, _REGISTRY, _WHO, _date, _open


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
        what = {True: " (approves)", False: " (the decision appealed stands)", None: ""}[d.approves]
        click.echo(f"      {d.decided_on} {d.outcome}{what} by {d.body}{cond}{found}; {d.effect}")


@click.command(short_help="Record an appeal of an order, decision or determination (private).")
@_REGISTRY
@click.option("--permit", "permit_number", default=None, help="The permit the appealed decision concerns.")
@click.option("--case", "case_id", default=None, help="The enforcement case the appealed order belongs to.")
@click.option("--appealed", required=True, help="The order, decision or determination appealed.")
@click.option(
    "--kind",
    required=True,
    help="What kind of order or decision it is: the profile's [appeals.appealed] key, e.g. stop_work_order, "
    "revocation, permit_decision, determination, other. Only a reversal of the kind that put the permit in its "
    "state moves it back; a reversed determination is withdrawn.",
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


@click.command(short_help="Record the decision on an appeal: upheld, reversed, modified, or a variance.")
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
@click.option(
    "--approves/--stands",
    "approves",
    default=None,
    help="Required with --outcome modified, and with --outcome variance on the appeal of a permit decision: "
    "whether the decision approves the disapproval appealed (--approves issues the permit; for a variance, no "
    "reason for the disapproval is left standing) or leaves it standing in part (--stands).",
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
    approves: bool | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record the decision on appeal APPEAL_ID of REGISTRY; a reversal of an order sends the permit back.

    A disapproval appealed as a permit decision and reversed, or modified or relieved by a variance
    with --approves, is approved and issued; with --stands (a reason left standing), it stays a
    disapproval.
    """
    with _open(registry, layers_path) as reg:
        a = reg.decide_appeal(
            appeal_id,
            body=body,
            outcome=outcome,
            on=_date(on, "on"),
            conditions=conditions,
            findings=findings,
            approves=approves,
            who=who,
        )
    _echo_appeal(a)


@click.command(name="appeals", short_help="List the appeals and their decisions (private).")
@_REGISTRY
@_LAYERS
def appeals_(registry: str, layers_path: str | None) -> None:
    """List REGISTRY's appeals with the body that heard each and its decision."""
    with _open(registry, layers_path) as reg:
        found = reg.appeals()
    for a in found:
        _echo_appeal(a)
