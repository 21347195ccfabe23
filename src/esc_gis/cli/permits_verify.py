"""``esc-gis permits verify`` and ``permits rebuild``: the tables against the history, and remade from it.

Thin wrappers over :func:`esc_gis.registry.views.verify.verify` and
:meth:`esc_gis.registry.Registry.rebuild`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group.
"""

from __future__ import annotations

import click

from esc_gis.cli._options import layers_option


@click.command(short_help="Check that every table equals the permits' history (exit 1 on any difference).")
@click.argument("registry")
@layers_option("Layer set (default: the Village's); its CRS is the registry's.")
def verify(registry: str, layers_path: str | None) -> None:
    """Rebuild every table of REGISTRY from its history, aside, and compare; fold each history too.

    The permits layer, the fees, the guarantees and their balances, the inspection reports and
    open repairs, the cases, appeals, plan versions and decision clocks are projections of the
    history: each is rebuilt into temporary tables (the registry is only read) and each
    difference is listed, and the exit status is 1 if there is any. So is each event whose day is
    after today on the Village's clock (a typing mistake, 2062 for 2026, that would silence a deadline).
    """
    from esc_gis.cli._permits import _open

    with _open(registry, layers_path) as reg:
        differences = reg.verify()
        streams = len({e.stream for e in reg.history()})
    for d in differences:
        click.echo(str(d))
    if differences:
        future = sum(1 for d in differences if d.note is not None)
        text = f"{len(differences) - future} difference(s) between the tables and the history"
        raise click.ClickException(text + (f", {future} event(s) dated after today." if future else "."))
    from esc_gis.registry.store.conninfo import shown

    click.echo(f"{shown(registry)}: the tables equal the history of its {streams} permit(s) and case(s).")


@click.command(short_help="Rewrite every table from the permits' history (then verify shows no difference).")
@click.argument("registry")
@layers_option("Layer set (default: the Village's); its CRS is the registry's.")
def rebuild(registry: str, layers_path: str | None) -> None:
    """Clear every projection of REGISTRY and write it again from the history, in one transaction.

    The history, the parties and the photos are kept as they are: every other table is what
    the projectors make of the history, so a row changed behind it (by a database tool) is put
    back, and a failure part-way leaves the registry as it was. On PostGIS it needs the owner
    of the tables (it lifts and restores the append-only triggers of the projections).
    """
    from esc_gis.cli._permits import _open

    with _open(registry, layers_path) as reg:
        events = reg.rebuild()
    from esc_gis.registry.store.conninfo import shown

    click.echo(f"{shown(registry)}: every table rebuilt from its history's {events} event(s).")
