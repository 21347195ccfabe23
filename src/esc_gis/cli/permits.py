"""``esc-gis permits``: the permit registry from the command line.

REGISTRY is a GeoPackage path (``permits.gpkg``) or a ``postgresql://`` URL; every
subcommand works the same on both. Each is a thin wrapper over
:class:`esc_gis.registry.Registry`; the library never prints, the commands do. They live
one module per concern (as rasterio's ``rio`` keeps one per command) and join the group here:

- :mod:`esc_gis.cli.permits_intake`
- :mod:`esc_gis.cli.permits_lifecycle`
- :mod:`esc_gis.cli.permits_inspections`
- :mod:`esc_gis.cli.permits_enforcement`
- :mod:`esc_gis.cli.permits_appeals`
- :mod:`esc_gis.cli.permits_money`
- :mod:`esc_gis.cli.permits_amendments`
- :mod:`esc_gis.cli.permits_deadlines`
- :mod:`esc_gis.cli.permits_report`
- :mod:`esc_gis.cli.permits_verify`
- :mod:`esc_gis.cli.permits_copy`
"""

from __future__ import annotations

__all__ = ["permits"]

import click

from esc_gis.cli import (
    permits_amendments,
    permits_appeals,
    permits_copy,
    permits_deadlines,
    permits_enforcement,
    permits_inspections,
    permits_intake,
    permits_lifecycle,
    permits_money,
    permits_report,
    permits_verify,
)
from esc_gis.cli._catalogue import short_help


@click.group(name="permits", short_help=short_help("permits"))
def permits() -> None:
    """Keep the erosion-control permits: applications, decisions, deadlines, enforcement.

    REGISTRY is a GeoPackage file (e.g. permits.gpkg) or a postgresql:// URL. Every deadline
    shown carries the section it rests on and its basis (ordinance or a stated reading), both
    from the ordinance profile.
    """


#: Every subcommand, by concern.
COMMANDS = (
    permits_intake.init,
    permits_intake.add,
    permits_intake.import_,
    permits_intake.export,
    permits_intake.list_,
    permits_intake.update,
    permits_intake.show,
    permits_lifecycle.transition,
    permits_lifecycle.retract,
    permits_lifecycle.reinstate,
    permits_lifecycle.extend,
    permits_lifecycle.determine,
    permits_lifecycle.condition,
    permits_inspections.inspect,
    permits_inspections.repaired,
    permits_enforcement.enforce,
    permits_enforcement.case,
    permits_enforcement.cases,
    permits_appeals.appeal,
    permits_appeals.decide,
    permits_appeals.appeals_,
    permits_money.fee,
    permits_money.guarantee,
    permits_money.guarantee_event,
    permits_money.guarantees_,
    permits_money.receipts,
    permits_amendments.amend,
    permits_amendments.amendments_,
    permits_deadlines.due,
    permits_deadlines.calendar_feed,
    permits_deadlines.map_,
    permits_report.report,
    permits_report.certificate,
    permits_report.summary,
    permits_report.export_inspections,
    permits_verify.verify,
    permits_verify.rebuild,
    permits_copy.copy,
)
for _command in COMMANDS:
    permits.add_command(_command)
