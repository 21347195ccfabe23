"""``esc-gis permits``: fees, financial guarantees and receipts (§ 540-8B, § 540-8D, § 540-10).

Thin wrappers over :class:`esc_gis.registry.Registry`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group.
"""

from __future__ import annotations

from typing import Any

import click

from esc_gis._outputs import reads
from esc_gis.cli._options import (
    FILE,
    output_option,
    overwrite_option,
)
from esc_gis.cli._permits import _LAYERS, _REGISTRY, _WHO, _Choice, _date, _open


@click.command(short_help="Record a fee paid, with its receipt (an application is complete only with its fee).")
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
    help="The fee schedule the Village Board established (TOML): the kind and amount must be the ones it sets. "
    "Default: the one the layer set names ([fees] path); an application fee with no schedule at all is refused.",
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
    from esc_gis.registry.domain.fees import load_fee_schedule

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


@click.command(short_help="Record a financial guarantee: surety bond, cash escrow or letter of credit.")
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


@click.command(name="guarantee-event", short_help="A guarantee's draw, partial release or final release.")
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


@click.command(name="guarantees", short_help="List the financial guarantees and what is held (private).")
@_REGISTRY
@_LAYERS
def guarantees_(registry: str, layers_path: str | None) -> None:
    """List REGISTRY's guarantees with their draws and releases."""
    with _open(registry, layers_path) as reg:
        for g in reg.guarantees():
            _echo_guarantee(g)


@click.command(short_help="Export the fee receipts as CSV (private: written readable by you only).")
@_REGISTRY
@output_option(".csv")
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "layers_path")
def receipts(registry: str, output: str, overwrite: bool, layers_path: str | None) -> None:
    """Write every fee recorded in REGISTRY to OUTPUT (CSV), one receipt a row."""
    from esc_gis.registry.domain.fees import write_receipts

    with _open(registry, layers_path) as reg:
        found = reg.fees()
    write_receipts(found, output, overwrite=overwrite)
    click.echo(f"Wrote {len(found)} receipt(s) to {output}.")
