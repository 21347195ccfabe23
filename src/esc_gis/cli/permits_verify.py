"""``esc-gis permits verify``: rebuild every projection from the history and report any difference.

A thin wrapper over :func:`esc_gis.registry.views.verify.verify`; :mod:`esc_gis.cli.permits` adds it
to the ``permits`` group.
"""

from __future__ import annotations

import click

from esc_gis.cli._options import layers_option


@click.command(short_help="Check that every table equals the permits' history (exit 1 on any difference).")
@click.argument("registry")
@layers_option("Layer set (default: the Village's); its CRS is the registry's.")
def verify(registry: str, layers_path: str | None) -> None:
    """Fold each permit's (and case's) history and compare it with REGISTRY's tables.

    The permits layer's life-cycle dates and status, the fees, the guarantees' balances, the
    inspection reports and open repairs, and the cases are projections of the history: each
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
    click.echo(f"{registry}: the tables equal the history of its {streams} permit(s) and case(s).")
