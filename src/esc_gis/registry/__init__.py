"""The permit registry: permits, their life cycle and history, and the ordinance's deadlines.

:mod:`calendar` counts business days, :mod:`lifecycle` holds the states and allowed
transitions, :mod:`deadlines` computes what is due from a permit's dates, :mod:`agenda`
lists what is due across the registry. :mod:`store` keeps permits in a GeoPackage
(:mod:`gpkg`) or PostGIS (:mod:`postgis`) database with the same API, over the schema and
migrations of :mod:`schema`.
"""

from esc_gis.registry.records import Application, Event, Party, Permit
from esc_gis.registry.store import Registry, init_registry, open_registry

__all__ = ["Application", "Event", "Party", "Permit", "Registry", "init_registry", "open_registry"]
