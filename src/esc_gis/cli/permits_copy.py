"""``esc-gis permits copy``: move a registry between a GeoPackage and PostGIS, history and photos and all.

A thin wrapper over :func:`esc_gis.registry.copy_registry`; :mod:`esc_gis.cli.permits` adds it
to the ``permits`` group.
"""

from __future__ import annotations

import click

from esc_gis.cli._options import quiet_option


@click.command(short_help="Copy a registry into a new or empty one (GeoPackage <-> PostGIS), then verify both.")
@click.argument("source")
@click.argument("destination")
@quiet_option("No progress bar (the summary line is still printed).")
def copy(source: str, destination: str, quiet: bool) -> None:
    """Copy the registry SOURCE into DESTINATION, a .gpkg path or a postgresql:// URL.

    Everything moves: the history (each event with its time, who and facts), the parties, the
    inspection photos' bytes, the numbering (the next permit and case numbers follow the
    source's), and every table with its keys. DESTINATION must not hold a registry with
    anything in it: an absent .gpkg is made, a PostgreSQL database or schema gets the tables
    as `permits init` makes them. The rows are written in one transaction (a GeoPackage to a
    temporary file renamed into place), so a failure leaves nothing half-copied. Then both are
    verified, as `permits verify` does; the exit status is 1 if the copy verifies otherwise
    than its source. SOURCE is only read.
    """
    from esc_gis.cli._options import progress_bar
    from esc_gis.registry import copy_registry

    with progress_bar("copying", quiet=quiet) as bar:
        task = bar.add_task("copying", total=None)

        def show(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        result = copy_registry(source, destination, progress=show)
    for d in result.destination_differences:
        click.echo(str(d))
    if not result.verified:
        msg = (
            f"{result.destination} verifies with {len(result.destination_differences)} difference(s), its source "
            f"with {len(result.source_differences)}: the copy is not its source's equal. Keep working on "
            f"{result.source}."
        )
        raise click.ClickException(msg)
    said = (
        "the tables equal the history"
        if not result.destination_differences
        else f"{len(result.destination_differences)} difference(s) of the source's own, as `permits verify` lists"
    )
    click.echo(
        f"{result.source} -> {result.destination}: {result.permits} permit(s), {result.events} event(s), "
        f"{result.photos} photo(s), {sum(result.rows.values())} row(s) in all; {said} on both sides."
    )
