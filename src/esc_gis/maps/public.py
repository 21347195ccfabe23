"""The public map of active erosion-control permits: where work is permitted, and whom to ask.

Only the columns of :data:`PUBLIC_COLUMNS` (and :data:`OPTIONAL_PUBLIC_COLUMNS`) are ever read from the
permits given, so no field that is not on those lists can reach the page, whatever the caller passes: the
responsible parties' names, phones and e-mails stay in the registry. The contact shown is
the Village's. All text reaches the page as JSON data shown with ``textContent``
(:class:`~esc_gis.maps.compact.CompactPolygons`), never as markup.
"""

from __future__ import annotations

__all__ = ["OPTIONAL_PUBLIC_COLUMNS", "PUBLIC_COLUMNS", "PUBLIC_STATUS", "public_permit_map"]

import html
from datetime import date, datetime
from typing import TYPE_CHECKING

import folium
import geopandas as gpd
import numpy as np
import shapely
from branca.element import Element

from esc_gis.errors import Problem, ValidationError
from esc_gis.layers import LayerSet
from esc_gis.maps.compact import CompactPolygons
from esc_gis.maps.render import _add_boundary, _display, _figure, _legend, _new_map, _Wording

if TYPE_CHECKING:
    from esc_gis.profile import Profile

#: The only permit fields the public map shows.
PUBLIC_COLUMNS = ("permit_number", "site_address", "disturbed_acres", "status", "expires_on")
#: Public fields shown when the frame has them: the current plan version's date
#: (:meth:`esc_gis.registry.Registry.frame`; a frame made elsewhere may lack it).
OPTIONAL_PUBLIC_COLUMNS = ("plan_date",)
#: Permit states shown, with their label and colour.
PUBLIC_STATUS = {
    "active": ("Active", "#d7301f"),
    "extended": ("Active (extended)", "#fc8d59"),
    "stop_work": ("Stop-work order", "#6a51a3"),
    # Work there is not permitted until the permit is reinstated: as public as a stop-work order.
    "suspended": ("Permit suspended", "#54278f"),
}


def _date(v: object) -> str:
    if isinstance(v, (date, datetime)):
        return v.isoformat()[:10]
    return "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)[:10]


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
    """Map the active permits for the public.

    Parameters
    ----------
    permits : geopandas.GeoDataFrame
        Permits with at least :data:`PUBLIC_COLUMNS` and a projected CRS (e.g. from
        :meth:`esc_gis.registry.Registry.frame`); rows not in :data:`PUBLIC_STATUS` are left out.
    as_of : datetime
        When the data was read from the registry: printed on the map ("data as of").
    contact : str
        The Village's contact for questions.
    layers : LayerSet, optional
        Adds the Village boundary, and frames the map on it when no permit is active.
    basemap : {"osm", "aerial", "none"}
    offline : bool
        Inline Leaflet so the file opens with no network.
    profile : Profile, optional
        Names the boundary layer and the jurisdiction; default the bundled profile.

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
    missing = [c for c in PUBLIC_COLUMNS if c not in permits.columns]
    if missing or permits.crs is None:
        what = f"has no column {', '.join(missing)}" if missing else "has no CRS"
        raise ValidationError([Problem("permits", None, f"{what}.", "pass Registry.frame() of the registry.")])
    # Copy out the public columns and nothing else, before anything is drawn.
    columns = [*PUBLIC_COLUMNS, *(c for c in OPTIONAL_PUBLIC_COLUMNS if c in permits.columns)]
    public = gpd.GeoDataFrame(permits[columns].copy(), geometry=permits.geometry.to_numpy(), crs=permits.crs)
    if "plan_date" not in public.columns:
        public["plan_date"] = None
    public = public[public["status"].isin(list(PUBLIC_STATUS)) & ~public.geometry.is_empty & public.geometry.notna()]
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
                    "has no active permit and no boundary to show.",
                    "pass the layer set, so the map shows the jurisdiction.",
                )
            ]
        )
    m = _new_map(tuple(bounds), basemap, offline)
    if layers is not None:
        _add_boundary(m, layers, _Wording.of(profile))
    status = public["status"].to_numpy(dtype=object)
    counts = []
    for key, (label, colour) in PUBLIC_STATUS.items():
        pick = np.flatnonzero(status == key)
        counts.append((colour, label, f"{len(pick):,}", f"{label} ({len(pick):,})"))
        if not len(pick):
            continue
        rows = public.iloc[pick]
        lines = [
            [
                str(r.site_address),
                f"Disturbed: {float(r.disturbed_acres):,.2f} acres",
                f"Status: {label}",
                f"Expires: {_date(r.expires_on) or 'n/a'}",
                *([f"Plan dated {_date(r.plan_date)}"] if _date(r.plan_date) else []),
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
    stamp = as_of.strftime("%Y-%m-%d %H:%M %Z").strip()
    _figure(m).html.add_child(_legend("Active erosion-control permits (Ch. 540, Art. I)", counts))
    _figure(m).html.add_child(
        Element(
            "<div id='esc-as-of' style='position:fixed;top:10px;left:50px;z-index:1000;background:white;"
            "padding:4px 8px;border:1px solid #999;border-radius:4px;font:12px sans-serif'>"
            f"Data as of {html.escape(stamp)} &middot; Questions: {html.escape(contact)}</div>"
        )
    )
    folium.LayerControl(collapsed=False).add_to(m)
    return m
