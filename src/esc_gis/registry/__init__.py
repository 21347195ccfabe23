"""The permit registry: permits, their life cycle and history, and the ordinance's deadlines.

Its folders show its design (the domain model, unit of work and service layer of
"Architecture Patterns with Python"; ``docs/explanation/registry-design.md``):

:mod:`~esc_gis.registry.domain`
    The pure domain: the history's typed events (:mod:`~esc_gis.registry.domain.events`),
    the state folded from them (:mod:`~esc_gis.registry.domain.fold`), and the rules per
    concern: life cycle, deadlines, the office calendar, enforcement, appeals, amendments,
    fees and guarantees, inspections; the records they pass around. No database, file or clock.
:mod:`~esc_gis.registry.store`
    Where the history and its projections are kept: the back-end interface
    (:mod:`~esc_gis.registry.store.backend`), GeoPackage and PostGIS, the schema and its
    migrations, the replay of older registries into the history, the PostGIS roles.
:mod:`~esc_gis.registry.service`
    The service layer: :class:`Registry`, whose commands (one module per concern) load a
    permit's history, check themselves against its folded state and append their events in
    one transaction.
:mod:`~esc_gis.registry.views`
    What is read out: the agenda of what is due, its calendar feed, the reports, the office
    summary, the private archive, and :func:`~esc_gis.registry.views.verify.verify`.
"""

from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.domain.records import Application, Event, Party, Permit
from esc_gis.registry.service.copying import CopyResult, copy_registry
from esc_gis.registry.service.registry import Registry, init_registry, open_registry

__all__ = [
    "Application",
    "CopyResult",
    "Event",
    "InspectionReport",
    "Party",
    "Permit",
    "Registry",
    "copy_registry",
    "init_registry",
    "open_registry",
]
