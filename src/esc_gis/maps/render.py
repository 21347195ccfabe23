"""Folium maps of screening results: an overview of a run and a map of one site.

Display is the only place that leaves the measuring CRS: every layer is simplified there
(by a tolerance in feet, below what a screen shows), then transformed to EPSG:4326 with
coordinates rounded to 6 decimals (about 4 inches), which keeps a 10,000-parcel map small.

Every piece of text that came from a user (site ids, names, water names, findings) reaches
a popup or tooltip through the templates ``maps/popups.html.j2`` (macros, autoescaped by
:mod:`esc_gis._templates`): folium inserts property values into the page as HTML, so a site
named ``<img src=x onerror=alert(1)>`` would otherwise run as code. The legend and the page
head are templates too (``maps/legend.html.j2``, ``maps/head.html.j2``).

The maps load nothing but Leaflet (folium's jQuery, Bootstrap and icon fonts are not
needed for polygons, popups and a layer control), from the CDN or, with ``offline=True``,
inlined from the copy bundled with esc_gis (:mod:`esc_gis.maps.assets`). Features are drawn on a canvas
(``prefer_canvas``), which is what keeps 10,000 parcels fast.
"""

from __future__ import annotations

__all__ = ["BASEMAPS", "PERMIT_STYLE", "check_map_path", "overview_map", "site_map", "write_map"]

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import folium
import geopandas as gpd
import numpy as np
import shapely
from branca.element import Element, Figure
from markupsafe import Markup

from esc_gis import __version__
from esc_gis._outputs import atomic_output, check_output_file
from esc_gis._templates import macro, render
from esc_gis.errors import OutputFormatError, ValidationError
from esc_gis.maps.assets import LEAFLET_CSS_URL, LEAFLET_JS_URL, offline_assets
from esc_gis.maps.compact import CompactPolygons

if TYPE_CHECKING:
    from esc_gis.layers import LayerSet
    from esc_gis.profile import Profile

#: Basemaps by name: (tile URL, attribution). OpenStreetMap is the default.
BASEMAPS = {
    "osm": (
        "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
        '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors',
    ),
    "aerial": (
        "https://server.arcgisonline.com/ArcGIS/rest/services/World_Imagery/MapServer/tile/{z}/{y}/{x}",
        "Imagery &copy; Esri, Maxar, Earthstar Geographics",
    ),
}
#: Overview classes: (label, fill colour), in legend order. The labels are neutral; a profile's
#: ``[labels]`` table words them with their citations (:func:`_permit_style`).
PERMIT_STYLE = {
    "required": ("Permit required", "#d7301f"),
    "may_be_required": ("Not required, but may be required", "#fc8d59"),
    "not_required": ("Not required", "#1a9850"),
    "not_applicable": ("Not applicable (outside, exempt or excluded)", "#969696"),
}
#: Site-map layer styles (Leaflet path options).
STYLE: dict[str, dict[str, Any]] = {
    "protective": {"color": "#2171b5", "weight": 0.5, "fillColor": "#9ecae1", "fillOpacity": 0.45},
    "water": {"color": "#08519c", "weight": 2, "fillColor": "#4292c6", "fillOpacity": 0.6},
    "targeted": {"color": "#6a3d9a", "weight": 1, "fillColor": "#cab2d6", "fillOpacity": 0.25},
    "steep": {"color": "#8c510a", "weight": 0.3, "fillColor": "#d8b365", "fillOpacity": 0.6},
    "disturbed": {"color": "#b30000", "weight": 2, "dashArray": "4 3", "fillColor": "#fc4e2a", "fillOpacity": 0.35},
}
_NEEDED = ("site_id", "permit", "permit_may_be_required", "findings")
#: Map wording that a profile's ``[labels]`` table may replace with its own (naming its
#: sections and jurisdiction); these neutral defaults serve a profile without the table.
_DEFAULT_LABELS = {
    "may_be_required": PERMIT_STYLE["may_be_required"][0],
    "jurisdiction_boundary": "Jurisdiction boundary",
    "targeted_areas": "Targeted performance standard areas",
    "targeted_areas_section": "",
}


@dataclass(frozen=True)
class _Wording:
    """The profile's names and map labels, read once per map."""

    names: dict[str, str]
    labels: dict[str, str]

    @classmethod
    def of(cls, profile: Profile | None) -> _Wording:
        """Read ``profile`` (default: the bundled one)."""
        from esc_gis.profile import load_profile

        prof = profile if profile is not None else load_profile()
        table = prof.tables.get("labels", {})
        return cls(prof.names(), {**_DEFAULT_LABELS, **{k: str(v) for k, v in table.items()}})

    def permit_style(self) -> dict[str, tuple[str, str]]:
        """:data:`PERMIT_STYLE` with the profile's wording of the discretionary class."""
        return {**PERMIT_STYLE, "may_be_required": (self.labels["may_be_required"], PERMIT_STYLE["may_be_required"][1])}

    def steep(self, threshold_pct: float | None) -> str:
        """Name the steep-land layer: the profile's threshold and section, when it is the one drawn."""
        pct = self.names.get("steep_slope_value")
        if threshold_pct is None or (pct is not None and float(pct) == threshold_pct):
            return f"Land at {self.names.get('steep_slope', 'the threshold')} slope or more" + (
                f" ({self.names['steep_slope_section']})" if self.names.get("steep_slope_section") else ""
            )
        return f"Land at {threshold_pct:g} % slope or more"


#: Layer names shared by the maps and their legends.
WATERS_LAYER = "Waters of the state"
PROTECTIVE_LAYER = "Protective areas (NR 151.125 widths)"
#: The overview labels sites with their ids from this zoom on (about 1.7 m a pixel at 44° N,
#: where a 100 ft lot is some 18 pixels wide): at a whole village's zoom they would overlap.
LABEL_ZOOM = 16
#: ... and at any zoom when no more than this many sites of a class are in view.
LABEL_FEW = 30

#: Display simplification, in feet: below a screen pixel at the zoom each map opens at.
#: (The overview's coordinates are micro-degrees, about 4 inches, anyway.)
_SIMPLIFY_FT = {"overview": 3.0, "site": 0.5}


class _LeafletMap(folium.Map):
    """A folium map that loads Leaflet only (or nothing, when the page inlines it)."""

    default_js = [("leaflet", LEAFLET_JS_URL)]  # noqa: RUF012 (folium's own class attribute)
    default_css = [("leaflet_css", LEAFLET_CSS_URL)]  # noqa: RUF012


def _new_map(bounds: Sequence[float], basemap: str, offline: bool) -> folium.Map:
    """Make a canvas map fitted to (west, south, east, north), with the basemaps and the assets."""
    if basemap not in (*BASEMAPS, "none"):
        msg = f"basemap {basemap!r} is not one of {', '.join((*BASEMAPS, 'none'))}."
        raise OutputFormatError(msg)
    m = _LeafletMap(
        location=[(bounds[1] + bounds[3]) / 2, (bounds[0] + bounds[2]) / 2],
        tiles=None,
        prefer_canvas=True,
        control_scale=True,
    )
    order = [basemap, *(b for b in BASEMAPS if b != basemap)] if basemap != "none" else []
    for k, name in enumerate(order):
        url, attribution = BASEMAPS[name]
        label = {"osm": "OpenStreetMap", "aerial": "Aerial imagery (Esri)"}[name]
        folium.TileLayer(url, attr=attribution, name=label, max_zoom=19, show=k == 0, overlay=False).add_to(m)
    m.fit_bounds([[bounds[1], bounds[0]], [bounds[3], bounds[2]]])
    leaflet = None
    if offline:
        assets = offline_assets()
        # Instance attributes shadow the class's: folium then writes no <script src>/<link>.
        m.default_js, m.default_css = [], []
        # The bundled Leaflet's own code, inlined as it is: markup of ours, not text to escape.
        leaflet = {"version": assets.version, "css": Markup(assets.css), "js": Markup(assets.js)}
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = render("maps/head.html.j2", version=__version__, stamp=stamp, leaflet=leaflet)
    _figure(m).header.add_child(Element(head), name="esc_head")
    return m


def _figure(m: folium.Map) -> Figure:
    root = m.get_root()
    assert isinstance(root, Figure)  # folium maps always sit in a Figure
    return root


def _display(gdf: gpd.GeoDataFrame, tolerance_ft: float) -> np.ndarray:
    """Simplify in the layer's (projected, feet) CRS, then go to EPSG:4326, rounded to 1e-6°."""
    from esc_gis.units import ft_to_crs_units

    geoms = gdf.geometry.to_numpy()
    if gdf.crs is not None and gdf.crs.is_projected:
        geoms = shapely.simplify(geoms, ft_to_crs_units(tolerance_ft, gdf.crs), preserve_topology=True)
    out = gpd.GeoSeries(geoms, crs=gdf.crs).to_crs("EPSG:4326").to_numpy()
    return shapely.transform(out, lambda xy: np.round(xy, 6))


def _collection(geoms: np.ndarray, props: list[dict[str, Any]]) -> dict[str, Any]:
    """Build a GeoJSON FeatureCollection from geometries and (already escaped) properties."""
    feats = [
        {"type": "Feature", "properties": p, "geometry": json.loads(g)}
        for g, p in zip(shapely.to_geojson(geoms), props, strict=True)
        if g is not None
    ]
    return {"type": "FeatureCollection", "features": feats}


def _shown(value: Any) -> str:
    """Return a value as the text a map shows: empty for None or NaN (a missing cell of a layer)."""
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _popup(name: str, /, **values: Any) -> str:
    """Return the tooltip or popup fragment ``name`` of ``maps/popups.html.j2``, its values escaped.

    Raises
    ------
    AttributeError
        If the template has no such macro.
    """
    return str(macro("maps/popups.html.j2", name)(**values))


def _tip(value: Any) -> str:
    """Return a value as tooltip text (folium inserts it as HTML): escaped, empty for None or NaN."""
    return _popup("text", value=_shown(value))


def _class_of(results: gpd.GeoDataFrame) -> np.ndarray:
    permit = results["permit"].astype(str).to_numpy()
    may = results["permit_may_be_required"].fillna(False).astype(bool).to_numpy()
    return np.where((permit == "not_required") & may, "may_be_required", permit)


def _check(results: gpd.GeoDataFrame, source: str) -> None:
    from esc_gis.errors import Problem

    missing = [c for c in _NEEDED if c not in results.columns]
    if missing:
        raise ValidationError(
            [
                Problem(
                    source,
                    None,
                    f"has no column {', '.join(missing)}.",
                    "map the output of esc-gis screen (it has them all).",
                )
            ]
        )
    if results.crs is None:
        raise ValidationError([Problem(source, None, "has no CRS.", "map the output of esc-gis screen.")])


def _findings(findings: Any) -> list[dict[str, str]]:
    """Return a site's findings (the results' JSON column) as the popup lists them; none if unreadable."""
    try:
        items = json.loads(findings) if isinstance(findings, str) else []
    except json.JSONDecodeError:
        items = []
    # What a finding rests on shows beside its section unless it is the ordinance's own text.
    return [
        {
            "message": _shown(f.get("message")),
            "section": _shown(f.get("section")),
            "basis": "" if f.get("basis", "ordinance") == "ordinance" else str(f["basis"]).replace("_", " "),
        }
        for f in items
    ]


def _sqft(v: Any) -> str:
    return "n/a" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{float(v):,.0f} sq ft"


#: Legend rows: (swatch colour, or "" for the boundary's dashed outline; label; count or "";
#: the name of the map layer it stands for, so legend and layers can be checked against each other).
_LegendRow = tuple[str, str, str, str]


def _legend(title: str, rows: list[_LegendRow], note: str = "") -> Element:
    """Make a fixed legend box of the layers drawn (the template ``maps/legend.html.j2``)."""
    return Element(render("maps/legend.html.j2", title=title, rows=rows, note=note))


def _add_layer(
    m: folium.Map,
    name: str,
    geoms: np.ndarray,
    props: list[dict[str, Any]],
    style: dict[str, Any],
    *,
    tooltip: bool = True,
    popup: bool = True,
    show: bool = True,
) -> None:
    data = _collection(geoms, props)
    fg = folium.FeatureGroup(name=name, show=show)
    folium.GeoJson(
        data,
        style_function=lambda _f, s=style: s,
        tooltip=folium.GeoJsonTooltip(fields=["tip"], labels=False) if tooltip else None,
        popup=folium.GeoJsonPopup(fields=["info"], labels=False, max_width=420) if popup else None,
        smooth_factor=0.5,
    ).add_to(fg)
    fg.add_to(m)


def overview_map(
    results: gpd.GeoDataFrame,
    *,
    layers: LayerSet | None = None,
    basemap: str = "osm",
    offline: bool = False,
    source: str = "results",
    profile: Profile | None = None,
) -> folium.Map:
    """Map a whole screening run: every site coloured by its permit decision.

    Parameters
    ----------
    results : geopandas.GeoDataFrame
        The output of :func:`esc_gis.screen` (read back from any format).
    layers : LayerSet, optional
        Adds the Village boundary.
    basemap : {"osm", "aerial", "none"}
        The basemap shown first; the other is one click away in the layer control.
    offline : bool
        Inline Leaflet so the file opens with no network.
    source : str
        Name of the results in messages.
    profile : Profile, optional
        Words the legend and the boundary (jurisdiction name, citations); default the
        bundled profile.

    Returns
    -------
    folium.Map

    Raises
    ------
    ValidationError
        If ``results`` lacks the screening columns or a CRS.
    MapAssetsError
        If ``offline`` and the Leaflet bundled with esc_gis is missing.
    """
    _check(results, source)
    if len(results) == 0:
        from esc_gis.errors import Problem

        raise ValidationError([Problem(source, None, "has no sites to map.", "screen some sites first.")])
    geoms = _display(results, _SIMPLIFY_FT["overview"])
    west, south, east, north = shapely.total_bounds(geoms)
    m = _new_map((west, south, east, north), basemap, offline)
    wording = _Wording.of(profile)
    keys: list[_LegendRow] = []
    if layers is not None:
        keys.append(_add_boundary(m, layers, wording))
        if layers.waters is not None:
            # The lake and streams the sites sit by: what a reviewer finds their way by.
            frame = _frame(results.to_crs(layers.waters.crs))  # results read from GeoJSON are in degrees
            keys += _add_waters(m, layers.waters, frame, _SIMPLIFY_FT["overview"], popup=False)
    classes = _class_of(results)
    ids = results["site_id"].to_numpy(dtype=object)
    dist = results["disturbed_sqft"].to_numpy(dtype=float) if "disturbed_sqft" in results else np.full(len(ids), np.nan)
    for key, (label, colour) in wording.permit_style().items():
        pick = np.flatnonzero(classes == key)
        if not len(pick):
            continue  # no sites of this class: no layer, no legend entry
        name = f"{label} ({len(pick):,})"
        keys.append((colour, label, f"{len(pick):,}", name))
        # Thousands of sites: the compact layer (ids and lines are text, never markup).
        lines = [[label, f"Disturbed: {_sqft(dist[i])}"] for i in pick]
        CompactPolygons(
            geoms[pick],
            [str(ids[i]) for i in pick],
            lines,
            {"color": "#333333", "weight": 0.5, "fillColor": colour, "fillOpacity": 0.7},
            name=name,
            label_zoom=LABEL_ZOOM,
            label_few=LABEL_FEW,
        ).add_to(m)
    note = f"Site ids show from zoom {LABEL_ZOOM}, or when {LABEL_FEW} or fewer of a class are in view."
    _figure(m).html.add_child(_legend(f"Erosion-control permit, {len(results):,} sites", keys, note))
    folium.LayerControl(collapsed=False).add_to(m)
    return m


def _frame(results: gpd.GeoDataFrame, margin_ft: float = 500.0) -> shapely.Geometry:
    """Return the results' bounding box grown by ``margin_ft``, in their (projected) CRS."""
    from esc_gis.units import ft_to_crs_units

    x0, y0, x1, y1 = results.total_bounds
    pad = ft_to_crs_units(margin_ft, results.crs)
    return shapely.box(x0 - pad, y0 - pad, x1 + pad, y1 + pad)


def _add_waters(
    m: folium.Map, waters: gpd.GeoDataFrame, window: shapely.Geometry, simplify_ft: float, *, popup: bool = True
) -> list[_LegendRow]:
    """Draw the waters that reach ``window`` (in the results' CRS), clipped to it; return the legend row (if drawn)."""
    from esc_gis.units import ft_to_crs_units

    crs = waters.crs
    near = waters[waters.intersects(window.buffer(ft_to_crs_units(100, crs)))]
    if not len(near):
        return []
    clipped = near.set_geometry(near.geometry.intersection(window))
    clipped = clipped[~clipped.geometry.is_empty]
    if not len(clipped):
        return []
    _add_layer(
        m,
        WATERS_LAYER,
        _display(clipped, simplify_ft),
        [
            {"tip": _tip(n) or _tip(c), "info": _popup("water", name=_shown(n), water_class=_shown(c))}
            for n, c in zip(clipped["water_name"], clipped["water_class"], strict=True)
        ],
        STYLE["water"],
        popup=popup,
    )
    return [(STYLE["water"]["fillColor"], WATERS_LAYER, "", WATERS_LAYER)]


def _add_boundary(m: folium.Map, layers: LayerSet, wording: _Wording | None = None) -> _LegendRow:
    """Draw the jurisdiction's boundary, named and tipped from the profile (default: the bundled one).

    Returns its legend row.
    """
    wording = wording if wording is not None else _Wording.of(None)
    g = gpd.GeoDataFrame(geometry=[layers.jurisdiction], crs=layers.crs)
    tip = _tip(wording.names.get("jurisdiction_name", ""))
    name = wording.labels["jurisdiction_boundary"]
    _add_layer(
        m,
        name,
        _display(g, 1.0),
        [{"tip": tip, "info": ""}],
        {"color": "#000000", "weight": 2, "fill": False, "dashArray": "6 4"},
        popup=False,
    )
    return ("", name, "", name)


def site_map(
    results: gpd.GeoDataFrame,
    site_id: str,
    *,
    layers: LayerSet | None = None,
    disturbed: gpd.GeoDataFrame | None = None,
    steep: gpd.GeoDataFrame | None = None,
    basemap: str = "osm",
    offline: bool = False,
    margin_ft: float = 300.0,
    source: str = "results",
    profile: Profile | None = None,
) -> folium.Map:
    """Map one site with everything the ordinance looks at around it.

    Layers, each toggleable: the site (popup: decision, areas and every finding with its §
    citation), its disturbed limits, the Village boundary, waters, protective areas (by
    governing class and width), targeted areas and land at 20 % or more.

    Parameters
    ----------
    results : geopandas.GeoDataFrame
        The output of :func:`esc_gis.screen`.
    site_id : str
        The site to map.
    layers : LayerSet, optional
        Boundary, waters (with their protective areas) and targeted areas.
    disturbed : geopandas.GeoDataFrame, optional
        Disturbed-limit polygons with ``site_id``.
    steep : geopandas.GeoDataFrame, optional
        Steep land (``esc-gis steep``).
    basemap, offline
        As :func:`overview_map`.
    margin_ft : float
        How far around the site layers are drawn.
    source : str
        Name of the results in messages.
    profile : Profile, optional
        Protective-area widths and the map's wording; default the bundled profile.

    Returns
    -------
    folium.Map

    Raises
    ------
    ValidationError
        If ``results`` lacks the screening columns, or ``site_id`` is not in it.
    MapAssetsError
        If ``offline`` and the Leaflet bundled with esc_gis is missing.
    """
    from esc_gis.errors import Problem
    from esc_gis.units import ft_to_crs_units

    _check(results, source)
    row = results[results["site_id"].astype(str) == str(site_id)]
    if row.empty:
        raise ValidationError([Problem(source, None, f"has no site {site_id!r}.", "give one of its site_id values.")])
    r = row.iloc[0]
    crs = results.crs
    site = row.geometry.iloc[0]
    x0, y0, x1, y1 = site.bounds
    pad = ft_to_crs_units(margin_ft, crs)
    window = shapely.box(x0 - pad, y0 - pad, x1 + pad, y1 + pad)
    w4326 = gpd.GeoSeries([window], crs=crs).to_crs("EPSG:4326").total_bounds
    m = _new_map(w4326, basemap, offline)
    wording = _Wording.of(profile)

    def clipped(gdf: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        gdf = gdf.to_crs(crs)
        hit = gdf[gdf.intersects(window)]
        return hit.set_geometry(hit.geometry.intersection(window))

    keys: list[_LegendRow] = []  # one per layer drawn, so the legend names nothing absent
    if layers is not None:
        boundary = _add_boundary(m, layers, wording)
        if layers.targeted_areas is not None:
            t = clipped(layers.targeted_areas)
            if len(t):
                names = [_shown(v) or "Targeted area" for v in t["area_name"]]
                cite = wording.labels["targeted_areas_section"]
                _add_layer(
                    m,
                    wording.labels["targeted_areas"],
                    _display(t, 1.0),
                    [{"tip": _tip(n), "info": _popup("targeted", name=n, cite=cite)} for n in names],
                    STYLE["targeted"],
                )
                keys.append((STYLE["targeted"]["fillColor"], "Targeted area", "", wording.labels["targeted_areas"]))
        if layers.waters is not None:
            near = layers.waters[layers.waters.intersects(window.buffer(ft_to_crs_units(100, crs)))]
            if len(near):
                from esc_gis.profile import load_profile
                from esc_gis.waters import governing_parts

                parts = clipped(governing_parts(near, profile if profile is not None else load_profile(), crs))
                if len(parts):
                    _add_layer(
                        m,
                        PROTECTIVE_LAYER,
                        _display(parts, 0.5),
                        [
                            {
                                "tip": _popup("protective_tip", water_class=_shown(c), width_ft=w),
                                "info": _popup("protective", water_class=_shown(c), width_ft=w, section=_shown(s)),
                            }
                            for c, w, s in zip(parts["water_class"], parts["width_ft"], parts["section"], strict=True)
                        ],
                        STYLE["protective"],
                    )
                    keys.append((STYLE["protective"]["fillColor"], "Protective area", "", PROTECTIVE_LAYER))
                keys += _add_waters(m, near.to_crs(crs), window, 0.5)
    steep_label = wording.steep(None)
    if steep is not None:
        st = clipped(steep)
        if len(st):
            # Steep land drawn at another threshold than the profile's is named by its own.
            pct = st["threshold_pct"].to_numpy(dtype=float) if "threshold_pct" in st else np.array([])
            steep_label = wording.steep(float(pct[0]) if len(pct) and (pct == pct[0]).all() else None)
            _add_layer(
                m,
                steep_label,
                _display(st, 0.5),
                [{"tip": _tip(steep_label), "info": _popup("steep", label=steep_label)}] * len(st),
                STYLE["steep"],
            )
            keys.append((STYLE["steep"]["fillColor"], steep_label, "", steep_label))
    label, colour = wording.permit_style()[str(_class_of(row)[0])]
    info = _popup(
        "site",
        site_id=_shown(r["site_id"]),
        name=_shown(r["name"]) if "name" in row else "",
        label=label,
        jurisdiction=wording.names.get("jurisdiction_name") or "the jurisdiction",
        disturbed=_sqft(r.get("disturbed_in_jurisdiction_sqft", r.get("disturbed_in_village_sqft"))),
        protective=_sqft(r.get("protective_disturbed_sqft")),
        steep=_sqft(r.get("steep_disturbed_sqft")),
        items=_findings(r["findings"]),
    )
    _add_layer(
        m,
        "Site",
        _display(row, _SIMPLIFY_FT["site"]),
        [{"tip": _tip(r["site_id"]), "info": info}],
        {"color": "#000000", "weight": 2, "fillColor": colour, "fillOpacity": 0.25},
    )
    if disturbed is not None and "site_id" in disturbed:
        d = disturbed[disturbed["site_id"].astype(str) == str(site_id)]
        if len(d):
            _add_layer(
                m,
                "Disturbed limits",
                _display(d.to_crs(crs), _SIMPLIFY_FT["site"]),
                [{"tip": "Disturbed limits", "info": _popup("disturbed", site_id=_shown(site_id))}] * len(d),
                STYLE["disturbed"],
            )
            keys.insert(0, (STYLE["disturbed"]["fillColor"], "Disturbed limits", "", "Disturbed limits"))
    # The site first (its colour is its decision), then what is drawn around it, the boundary last.
    legend = [(colour, f"Site: {label}", "", "Site"), *keys]
    if layers is not None:
        legend.append(boundary)
    _figure(m).html.add_child(_legend(f"Site {r['site_id']}", legend))
    folium.LayerControl(collapsed=False).add_to(m)
    return m


def check_map_path(path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Check a map's output path before any work: ``.html``, and not there unless ``overwrite``.

    Raises
    ------
    OutputExistsError
        If the file exists and ``overwrite`` is False.
    OutputFormatError
        If the name does not end in ``.html``.
    """
    return check_output_file(path, suffixes=(".html", ".htm"), kind="maps are written as HTML", overwrite=overwrite)


def write_map(m: folium.Map, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write a map as one HTML file, atomically (temporary file, then rename).

    Raises
    ------
    OutputExistsError
        If the file exists and ``overwrite`` is False.
    OutputFormatError
        If the name does not end in ``.html``.
    """
    out = check_map_path(path, overwrite=overwrite)
    # The user's umask, not the temporary file's 0o600: a map is made to be served and shared.
    with atomic_output(out) as tmp:
        tmp.write_text(_figure(m).render(), encoding="utf-8")
    return out
