"""What the Village publishes to everyone: the permit states shown and the permit columns served.

One home for the public map (:mod:`esc_gis.maps.public`), the web service (:mod:`esc_gis.serve`)
and the registry's published view (:data:`esc_gis.registry.store.schema.PUBLISHED_VIEW`), which
holds these columns of the permits in these states and nothing else. Kept free of imports: the
registry's store reads it when it makes its views.
"""

from __future__ import annotations

__all__ = ["ACTIVE_STATUS", "OPTIONAL_PUBLIC_COLUMNS", "PUBLIC_COLUMNS", "PUBLIC_STATUS", "PUBLISHED_COLUMNS"]

#: The only permit fields the public map shows.
PUBLIC_COLUMNS = ("permit_number", "site_address", "disturbed_acres", "status", "expires_on")
#: Public fields shown when the frame has them: the current plan version's date
#: (:meth:`esc_gis.registry.Registry.frame`; a frame made elsewhere may lack it), and where the site lies
#: (a site partly outside the Village says so, issue 46).
OPTIONAL_PUBLIC_COLUMNS = ("plan_date", "jurisdiction")
#: Permit states shown, with their label and colour.
PUBLIC_STATUS = {
    "active": ("Active", "#d7301f"),
    "extended": ("Active (extended)", "#fc8d59"),
    "stop_work": ("Stop-work order", "#6a51a3"),
    # Work there is not permitted until the permit is reinstated: as public as a stop-work order.
    "suspended": ("Permit suspended", "#54278f"),
}
#: The shown states where work is permitted: the only ones counted as active permits. The
#: others of :data:`PUBLIC_STATUS` are sites where the office has halted work.
ACTIVE_STATUS = ("active", "extended")
#: The permit columns the web service publishes (besides its id and the site): the public map's,
#: the dates a permit's life is read by, and its disturbed area. No parcel, legal description,
#: decision, party, phone, fee, note or photo.
PUBLISHED_COLUMNS = (
    *PUBLIC_COLUMNS,
    *OPTIONAL_PUBLIC_COLUMNS,
    "received_on",
    "issued_on",
    "final_on",
    "disturbed_sqft",
)
