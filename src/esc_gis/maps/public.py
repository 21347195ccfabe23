"""The public map of erosion-control permits: where work is permitted or halted, and whom to ask.

Shown: permits where work is permitted (active, extended) and where the administering authority
has halted it (a stop-work order, § 540-12A; a suspended permit, § 540-8E). A halted site is not
active work, and is never counted as an active permit, but the public may need to know it: work
seen there should not be going on. A revoked permit is no permit any more and leaves the map.
The legend lists only the classes drawn, each with its count, and :func:`public_counts` gives
the same count to the command's message. The "data as of" stamp is on the Village's clock, with
its zone.

Only the columns of :data:`PUBLIC_COLUMNS` (and :data:`OPTIONAL_PUBLIC_COLUMNS`) are ever read from the
permits given, so no field that is not on those lists can reach the page, whatever the caller passes: the
responsible parties' names, phones and e-mails stay in the registry. The contact shown is
the Village's. All text reaches the page as JSON data shown with ``textContent``
(:class:`~esc_gis.maps.compact.CompactPolygons`), never as markup.
"""

from __future__ import annotations

__all__ = [
    "ACTIVE_STATUS",
    "OPTIONAL_PUBLIC_COLUMNS",
    "PUBLIC_COLUMNS",
    "PUBLIC_STATUS",
    "public_counts",
    "public_frame",
    "public_permit_map",
    "stamp_text",
]

from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING

import folium
import geopandas as gpd
import numpy as np
import shapely
from branca.element import Element

from esc_gis._templates import render
from esc_gis.errors import Problem, ValidationError
from esc_gis.layers import LayerSet
from esc_gis.maps.compact import CompactPolygons
from esc_gis.maps.render import _add_boundary, _display, _figure, _legend, _new_map, _Wording
from esc_gis.publication import ACTIVE_STATUS, OPTIONAL_PUBLIC_COLUMNS, PUBLIC_COLUMNS, PUBLIC_STATUS

if TYPE_CHECKING:
    from esc_gis.profile import Profile


def public_counts(statuses: Sequence[object]) -> str:
    """Say how many permits the public map shows: active ones, and halted ones apart.

    Parameters
    ----------
    statuses : sequence of str
        The permits' states; those not in :data:`PUBLIC_STATUS` are not shown and not counted.

    Returns
    -------
    str
        ``2 active permit(s); work halted at 1 (1 stop-work order)``; the halted part only
        when there is one.

    Examples
    --------
    >>> public_counts(["active", "extended", "suspended", "closed"])
    '2 active permit(s); work halted at 1 (1 permit suspended)'
    """
    values = list(statuses)
    active = sum(v in ACTIVE_STATUS for v in values)
    halted = {k: sum(v == k for v in values) for k in PUBLIC_STATUS if k not in ACTIVE_STATUS}
    text = f"{active:,} active permit(s)"
    if sum(halted.values()):
        parts = ", ".join(f"{n:,} {PUBLIC_STATUS[k][0].lower()}" for k, n in halted.items() if n)
        text += f"; work halted at {sum(halted.values()):,} ({parts})"
    return text


def _bundled_profile() -> Profile:
    from esc_gis.profile import load_profile

    return load_profile()


def stamp_text(as_of: datetime, profile: Profile) -> str:
    """Write ``as_of`` on the profile's clock with its zone: ``2026-11-30 03:15 CST (America/Chicago)``.

    A naive ``as_of`` is taken as read off that clock. A profile with no clock of its own writes
    this machine's time and the UTC offset.

    Raises
    ------
    ValidationError
        If a naive ``as_of`` does not exist on the office's clock (the hour the clocks spring over).

    Examples
    --------
    >>> from datetime import timezone
    >>> from esc_gis.profile import load_profile
    >>> stamp_text(datetime(2026, 11, 30, 9, 15, tzinfo=timezone.utc), load_profile())
    '2026-11-30 03:15 CST (America/Chicago)'
    """
    local = profile.local(as_of)
    zone = f" ({profile.timezone})" if profile.timezone else f" (UTC{local:%z})"
    return f"{local:%Y-%m-%d %H:%M %Z}".strip() + zone


def _date(v: object) -> str:
    if isinstance(v, (date, datetime)):
        return v.isoformat()[:10]
    return "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)[:10]


def public_frame(permits: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Return the permits the public map draws: its columns only, the shown states, with a shape.

    Raises
    ------
    ValidationError
        If a public column or the CRS is missing.
    """
    missing = [c for c in PUBLIC_COLUMNS if c not in permits.columns]
    if missing or permits.crs is None:
        what = f"has no column {', '.join(missing)}" if missing else "has no CRS"
        raise ValidationError([Problem("permits", None, f"{what}.", "pass Registry.frame() of the registry.")])
    # Copy out the public columns and nothing else, before anything is drawn.
    columns = [*PUBLIC_COLUMNS, *(c for c in OPTIONAL_PUBLIC_COLUMNS if c in permits.columns)]
    public = gpd.GeoDataFrame(permits[columns].copy(), geometry=permits.geometry.to_numpy(), crs=permits.crs)
    for c in OPTIONAL_PUBLIC_COLUMNS:
        if c not in public.columns:
            public[c] = None
    return public[public["status"].isin(list(PUBLIC_STATUS)) & ~public.geometry.is_empty & public.geometry.notna()]


def public_permit_map(
    permits: gpd.GeoDataFrame,
    *,
    as_of: datetime,
    contact: str,
    layers: LayerSet | None = None,
    basemap: str = "osm",
    offline: bool = False,
    profile: Profile | None = None,
) -> folium.Map:
    """Map the permits where work is permitted or halted, for the public.

    Parameters
    ----------
    permits : geopandas.GeoDataFrame
        Permits with at least :data:`PUBLIC_COLUMNS` and a projected CRS (e.g. from
        :meth:`esc_gis.registry.Registry.frame`); rows not in :data:`PUBLIC_STATUS` are left out.
    as_of : datetime
        When the data was read from the registry: printed on the map ("data as of") on the
        profile's clock, with its zone (a naive time is taken as read off that clock).
    contact : str
        The Village's contact for questions.
    layers : LayerSet, optional
        Adds the Village boundary, and frames the map on it when no permit is active.
    basemap : {"osm", "aerial", "none"}
    offline : bool
        Inline Leaflet so the file opens with no network.
    profile : Profile, optional
        Names the boundary layer and the jurisdiction, titles the legend and keeps the clock;
        default the bundled profile.

    Returns
    -------
    folium.Map

    Raises
    ------
    ValidationError
        If a public column or the CRS is missing, or there is nothing to frame the map on.
    MapAssetsError
        If ``offline`` and the Leaflet bundled with esc_gis is missing.
    """
    public = public_frame(permits)
    geoms = _display(public, 1.0) if len(public) else np.empty(0, dtype=object)
    if len(public):
        bounds = shapely.total_bounds(geoms)
    elif layers is not None:
        bounds = gpd.GeoSeries([layers.jurisdiction], crs=layers.crs).to_crs("EPSG:4326").total_bounds
    else:
        raise ValidationError(
            [
                Problem(
                    "permits",
                    None,
                    "has no permit to show (active, extended, stop-work or suspended) and no boundary.",
                    "pass the layer set, so the map shows the jurisdiction.",
                )
            ]
        )
    m = _new_map(tuple(bounds), basemap, offline)
    wording = _Wording.of(profile)
    if layers is not None:
        _add_boundary(m, layers, wording)
    status = public["status"].to_numpy(dtype=object)
    counts = []
    for key, (label, colour) in PUBLIC_STATUS.items():
        pick = np.flatnonzero(status == key)
        if not len(pick):
            continue  # the legend explains what is drawn: no class with nothing in it
        counts.append((colour, label, f"{len(pick):,}", f"{label} ({len(pick):,})"))
        rows = public.iloc[pick]
        lines = [
            [
                str(r.site_address),
                f"Disturbed: {float(r.disturbed_acres):,.2f} acres",
                f"Status: {label}",
                f"Expires: {_date(r.expires_on) or 'n/a'}",
                *([f"Plan dated {_date(r.plan_date)}"] if _date(r.plan_date) else []),
                # Where the screening found the site (issue 46): a site across the line says so.
                *([f"Partly outside the {wording.names['jurisdiction_name']}"] if r.jurisdiction == "partial" else []),
                f"Questions: {contact}",
            ]
            for r in rows.itertuples(index=False)
        ]
        CompactPolygons(
            geoms[pick],
            [f"Permit {n}" for n in rows["permit_number"]],
            lines,
            {"color": "#333333", "weight": 1, "fillColor": colour, "fillOpacity": 0.6},
            name=f"{label} ({len(pick):,})",
        ).add_to(m)
    prof = profile if profile is not None else _bundled_profile()
    stamp = stamp_text(as_of, prof)
    note = public_counts(status) if len(public) else "No permit where work is permitted or halted."
    _figure(m).html.add_child(_legend(wording.labels.get("public_map_title", "Erosion-control permits"), counts, note))
    _figure(m).html.add_child(Element(render("maps/as_of.html.j2", stamp=stamp, contact=contact)))
    folium.LayerControl(collapsed=False).add_to(m)
    return m
