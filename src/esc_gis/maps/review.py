"""The compliance map of a plan review: the plan's layers over the Village's, and the unprotected edges."""

from __future__ import annotations

__all__ = ["review_map"]

import folium
import geopandas as gpd
import numpy as np
import shapely

from esc_gis.layers import LayerSet
from esc_gis.maps.render import _add_boundary, _add_layer, _display, _figure, _legend, _new_map, _popup, _shown, _tip
from esc_gis.review.checks import Check

#: Layer -> (label, style); drawn in this order, bottom to top.
_STYLE: dict[str, tuple[str, dict[str, object]]] = {
    "site_boundary": ("Property lines", {"color": "#000000", "weight": 2, "fill": False}),
    "disturbed_limits": (
        "Disturbed limits",
        {"color": "#e6550d", "weight": 2, "fillColor": "#fdae6b", "fillOpacity": 0.35},
    ),
    "streets": ("Streets", {"color": "#636363", "weight": 6, "opacity": 0.6, "fillOpacity": 0.3}),
    "drainage": ("Drainage", {"color": "#2171b5", "weight": 2, "dashArray": "4 4"}),
    "stockpiles": ("Stockpiles", {"color": "#8c510a", "weight": 1, "fillColor": "#bf812d", "fillOpacity": 0.6}),
    "bmps": ("BMPs", {"color": "#238b45", "weight": 3, "fillColor": "#74c476", "fillOpacity": 0.6}),
    "inlets": ("Inlets", {"color": "#000000", "weight": 2, "fillColor": "#ffffff", "fillOpacity": 1}),
    "downslope_unprotected": ("Downslope edge without perimeter control", {"color": "#e31a1c", "weight": 5}),
    "water_edge_unprotected": (
        "Edge facing water without a BMP",
        {"color": "#99000d", "weight": 5, "dashArray": "8 4"},
    ),
}
#: Map layer -> the check that found it: its label says the check's basis.
_FOUND_BY = {"downslope_unprotected": "perimeter", "water_edge_unprotected": "waters"}


def _label(name: str, checks: list[Check] | None) -> str:
    """Return the legend's label; an edge found by a check not resting on the ordinance is marked advisory."""
    label = _STYLE[name][0]
    check = next((c for c in checks or [] if c.code == _FOUND_BY.get(name)), None)
    if check is None:
        return label
    kind = "" if check.basis == "ordinance" else "advisory, "
    return f"{label} ({kind}{check.basis.replace('_', ' ')})"


def _feature_tip(name: str, row: dict[str, object]) -> str:
    """Return a plan feature's tooltip (``maps/popups.html.j2``, escaped): a BMP's standard, a stockpile's days."""
    if name == "bmps":
        return _popup(
            "bmp", standard=_shown(row.get("standard") or "?"), name=_shown(row.get("standard_name") or row.get("type"))
        )
    if name == "stockpiles":
        return _popup("stockpile", days=_shown(row.get("days", "?")))
    return _tip(_STYLE[name][0])  # the tooltip stays short; the legend gives the basis


def review_map(
    plan_layers: dict[str, gpd.GeoDataFrame],
    *,
    layers: LayerSet | None = None,
    basemap: str = "osm",
    offline: bool = False,
    checks: list[Check] | None = None,
) -> folium.Map:
    """Map a reviewed plan: its layers, the nearby waters, and the edges the checks found unprotected.

    Parameters
    ----------
    plan_layers : dict of str -> GeoDataFrame
        :attr:`esc_gis.review.Review.layers` (in the measuring CRS).
    layers : LayerSet, optional
        Adds the Village boundary and the waters near the plan.
    basemap : {"osm", "aerial", "none"}
    offline : bool
    checks : list of Check, optional
        :attr:`esc_gis.review.Review.checks`: the unprotected edges' labels then give the basis
        of the check that found them (an advisory when it is the toolkit's policy).

    Returns
    -------
    folium.Map

    Raises
    ------
    MapAssetsError
        If ``offline`` and the Leaflet bundled with esc_gis is missing.
    """
    shown = {k: v for k, v in plan_layers.items() if k in _STYLE and len(v)}
    frames = [gpd.GeoDataFrame(geometry=g.geometry.to_numpy(), crs=g.crs) for g in shown.values()]
    if frames:
        extent = gpd.GeoDataFrame(geometry=np.concatenate([f.geometry.to_numpy() for f in frames]), crs=frames[0].crs)
        bounds = extent.to_crs("EPSG:4326").total_bounds
    elif layers is not None:
        bounds = gpd.GeoSeries([layers.jurisdiction], crs=layers.crs).to_crs("EPSG:4326").total_bounds
    else:
        bounds = np.array([-88.8, 44.1, -88.7, 44.2])
    m = _new_map(tuple(bounds), basemap, offline)
    if layers is not None:
        _add_boundary(m, layers)
        if layers.waters is not None and len(layers.waters) and frames:
            near = layers.waters[
                shapely.dwithin(
                    layers.waters.geometry.to_numpy(), shapely.union_all(extent.geometry.to_numpy()), 1000.0
                )
            ]
            if len(near):
                _add_layer(
                    m,
                    "Waters",
                    _display(near, 0.5),
                    [
                        {"tip": _tip(r.get("water_name") or r.get("water_class")), "info": ""}
                        for r in near.drop(columns="geometry").to_dict("records")
                    ],
                    {"color": "#08519c", "weight": 3, "fillColor": "#6baed6", "fillOpacity": 0.5},
                    popup=False,
                )
    legend = []
    for name, (_, style) in _STYLE.items():
        if name not in shown:
            continue
        label = _label(name, checks)
        gdf = shown[name]
        rows = gdf.drop(columns=gdf.geometry.name).to_dict("records")
        props = [{"tip": _feature_tip(name, r), "info": _feature_tip(name, r)} for r in rows]
        geoms = _display(gdf, 0.1)
        points = shapely.get_type_id(geoms) == 0
        if points.any():
            fg = folium.FeatureGroup(name=f"{label} (points)")
            for g, p in zip(geoms[points], np.array(props, dtype=object)[points], strict=True):
                folium.CircleMarker(
                    [g.y, g.x], radius=6, tooltip=p["tip"], color=str(style["color"]), fill=True, fill_opacity=1.0
                ).add_to(fg)
            fg.add_to(m)
        if (~points).any():
            _add_layer(m, label, geoms[~points], list(np.array(props, dtype=object)[~points]), style, popup=False)
        legend.append((str(style.get("fillColor", style["color"])), label, f"{len(gdf):,}", label))
    _figure(m).html.add_child(_legend("Plan review", legend))
    folium.LayerControl(collapsed=True).add_to(m)
    return m
