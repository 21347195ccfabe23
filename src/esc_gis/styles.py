"""QGIS styles for the toolkit's outputs, so they open in QGIS ready to read.

A GeoPackage layer carries its style in the GeoPackage's ``layer_styles`` table, the table
QGIS itself reads and writes (one row per style; QGIS applies the ``useAsDefault`` row
when the layer is loaded). A raster gets a ``.qml`` sidecar of the same stem, which QGIS
loads as the raster's default style.

The colours are the web maps' (:mod:`esc_gis.maps.render`, :mod:`esc_gis.maps.public`;
a test keeps them equal), so a decision reads the same on paper, in a browser and in QGIS.
The slope classes are cut at the profile's steep-slope threshold, passed in by the caller:
no number of the ordinance lives here.

Kept free of heavy imports: ``esc-gis slope`` writes a sidecar without loading geopandas.
"""

from __future__ import annotations

__all__ = [
    "LAYER_STYLES",
    "PERMIT_COLOURS",
    "STATUS_COLOURS",
    "STYLE_TABLE",
    "add_layer_style",
    "layer_style_qml",
    "slope_qml",
    "soil_loss_qml",
    "write_slope_qml",
    "write_soil_loss_qml",
]

import math
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from xml.sax.saxutils import quoteattr

from esc_gis._outputs import atomic_output

#: The table QGIS keeps a GeoPackage's styles in (and GDAL lists as a table without geometry).
STYLE_TABLE = "layer_styles"
#: The QGIS version the styles are written for (the oldest in use: Debian 12's 3.22 reads them).
QGIS_VERSION = "3.22.0"

#: Screening classes: (label, fill colour), as the overview map's legend.
PERMIT_COLOURS: dict[str, tuple[str, str]] = {
    "required": ("Permit required", "#d7301f"),
    "may_be_required": ("Not required, but may be required", "#fc8d59"),
    "not_required": ("Not required", "#1a9850"),
    "not_applicable": ("Not applicable (outside, exempt or excluded)", "#969696"),
}
#: The expression QGIS classifies screening sites by: ``permit``, with the discretionary
#: "may be required" split out of "not required", as the web maps do.
PERMIT_CLASS_EXPRESSION = (
    'CASE WHEN "permit" = \'not_required\' AND coalesce("permit_may_be_required", 0) '
    "THEN 'may_be_required' ELSE \"permit\" END"
)
#: Permit states of the registry: (label, fill colour). The public map's four first, with
#: its colours; the others in greys and blues, which read as "not (yet, or no longer) working".
STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "active": ("Active", "#d7301f"),
    "extended": ("Active (extended)", "#fc8d59"),
    "stop_work": ("Stop-work order", "#6a51a3"),
    "suspended": ("Permit suspended", "#54278f"),
    "application_received": ("Application received", "#c6dbef"),
    "incomplete": ("Incomplete application", "#9ecae1"),
    "under_review": ("Under review", "#6baed6"),
    "approved": ("Approved", "#fdd49e"),
    "deemed_approved": ("Deemed approved", "#fdbb84"),
    "disapproved": ("Disapproved", "#737373"),
    "revoked": ("Revoked", "#252525"),
    "final_stabilization": ("Final stabilisation", "#a1d99b"),
    "closed": ("Closed", "#d9d9d9"),
}
#: Protective-area classes (the profile's ``[protective_area.*]`` keys): (label, fill colour).
WATER_CLASS_COLOURS: dict[str, tuple[str, str]] = {
    "orw_erw": ("Outstanding / exceptional resource waters", "#08306b"),
    "lake": ("Lakes", "#2171b5"),
    "perennial_stream": ("Perennial streams", "#4292c6"),
    "intermittent_stream": ("Intermittent streams", "#6baed6"),
    "concentrated_flow_channel": ("Concentrated flow channels", "#9ecae1"),
    "wetland": ("Wetlands", "#006d2c"),
    "wetland_highly_susceptible": ("Highly susceptible wetlands", "#31a354"),
    "wetland_less_susceptible": ("Less susceptible wetlands", "#74c476"),
}
#: Steep land: the web maps' fill and outline.
STEEP_FILL, STEEP_OUTLINE = "#d8b365", "#8c510a"

#: Descriptions QGIS shows for fields (aliases), by column name.
ALIASES: dict[str, str] = {
    "site_id": "Site",
    "permit": "Permit decision",
    "permit_may_be_required": "May be required (discretionary)",
    "disturbed_sqft": "Disturbed area (sq ft)",
    "site_sqft": "Site area (sq ft)",
    "findings": "Findings (JSON)",
    "threshold_pct": "Slope threshold (%)",
    "area_sqft": "Area (sq ft)",
    "water_class": "Water class",
    "width_ft": "Protective-area width (ft)",
    "section": "Section",
    "permit_number": "Permit number",
    "site_address": "Site address",
    "status": "Status",
    "expires_on": "Expires on",
}


def _rgba(hex_colour: str, alpha: int = 255) -> str:
    """QGIS's colour text: ``r,g,b,a``."""
    h = hex_colour.lstrip("#")
    return ",".join(str(int(h[i : i + 2], 16)) for i in (0, 2, 4)) + f",{alpha}"


def _fill_symbol(name: str, fill: str, outline: str, *, alpha: float = 1.0, outline_width_mm: float = 0.26) -> str:
    props = {
        "color": _rgba(fill),
        "outline_color": _rgba(outline),
        "outline_style": "solid",
        "outline_width": f"{outline_width_mm:g}",
        "outline_width_unit": "MM",
        "style": "solid",
        "joinstyle": "bevel",
    }
    options = "".join(f'<Option type="QString" name="{k}" value="{v}"/>' for k, v in props.items())
    return (
        f'<symbol type="fill" name="{name}" alpha="{alpha:g}" clip_to_extent="1" force_rhr="0">'
        f'<layer class="SimpleFill" enabled="1" locked="0" pass="0"><Option type="Map">{options}</Option></layer>'
        "</symbol>"
    )


def _aliases(columns: Sequence[str]) -> str:
    rows = "".join(
        f"<alias field={quoteattr(c)} index={quoteattr(str(i))} name={quoteattr(ALIASES.get(c, ''))}/>"
        for i, c in enumerate(columns)
    )
    return f"<aliases>{rows}</aliases>"


def _labels(field: str) -> str:
    """Return simple labels of ``field``: black on a white halo, over the polygon's inside."""
    return (
        '<labeling type="simple"><settings calloutType="simple">'
        f'<text-style fieldName={quoteattr(field)} isExpression="0" fontSize="9" fontSizeUnit="Point" '
        'textColor="0,0,0,255" textOpacity="1" fontWeight="75" fontFamily="Sans Serif" namedStyle="Bold"/>'
        '<text-buffer bufferDraw="1" bufferSize="1" bufferSizeUnits="MM" bufferColor="255,255,255,255" '
        'bufferOpacity="1"/>'
        '<placement placement="1" fitInPolygonOnly="0" centroidInside="1"/>'
        '<rendering scaleVisibility="1" scaleMin="0" scaleMax="25000" obstacle="1"/>'
        "</settings></labeling>"
    )


def _document(body: str, *, columns: Sequence[str], labels: str = "") -> str:
    flag = ' labelsEnabled="1"' if labels else ' labelsEnabled="0"'
    return (
        "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>\n"
        f'<qgis version="{QGIS_VERSION}" styleCategories="AllStyleCategories"{flag}>'
        f"{body}{labels}{_aliases(columns)}<layerGeometryType>2</layerGeometryType></qgis>\n"
    )


def _categorised(attr: str, classes: dict[str, tuple[str, str]], outline: str = "#333333") -> str:
    cats = "".join(
        f'<category render="true" symbol="{i}" value={quoteattr(value)} label={quoteattr(label)}/>'
        for i, (value, (label, _)) in enumerate(classes.items())
    )
    symbols = "".join(_fill_symbol(str(i), colour, outline) for i, (_, colour) in enumerate(classes.values()))
    return (
        f'<renderer-v2 type="categorizedSymbol" attr={quoteattr(attr)} symbollevels="0" enableorderby="0" '
        f'forceraster="0"><categories>{cats}</categories><symbols>{symbols}</symbols></renderer-v2>'
    )


def _single(fill: str, outline: str, *, alpha: float = 1.0) -> str:
    return (
        '<renderer-v2 type="singleSymbol" symbollevels="0" enableorderby="0" forceraster="0">'
        f"<symbols>{_fill_symbol('0', fill, outline, alpha=alpha)}</symbols></renderer-v2>"
    )


def screening_qml(columns: Sequence[str]) -> str:
    """Screening sites coloured by permit decision, labelled with their ``site_id``."""
    attr = PERMIT_CLASS_EXPRESSION if "permit_may_be_required" in columns else "permit"
    labels = _labels("site_id") if "site_id" in columns else ""
    return _document(_categorised(attr, PERMIT_COLOURS), columns=columns, labels=labels)


def steep_qml(columns: Sequence[str]) -> str:
    """Steep land: one translucent ochre fill, as on the web maps."""
    return _document(_single(STEEP_FILL, STEEP_OUTLINE, alpha=0.6), columns=columns)


def protective_qml(columns: Sequence[str]) -> str:
    """Protective areas by ``water_class``."""
    return _document(_categorised("water_class", WATER_CLASS_COLOURS), columns=columns)


def permits_qml(columns: Sequence[str]) -> str:
    """Return the style of the registry's permits: by ``status``, labelled with their permit number."""
    labels = _labels("permit_number") if "permit_number" in columns else ""
    return _document(_categorised("status", STATUS_COLOURS), columns=columns, labels=labels)


#: Layer name -> (the column the style needs, the QML maker, a description).
LAYER_STYLES: dict[str, tuple[str, Callable[[Sequence[str]], str], str]] = {
    "screening": ("permit", screening_qml, "Sites by permit decision, labelled with their site id"),
    "steep": ("area_sqft", steep_qml, "Land at or above the steep-slope threshold"),
    "protective_areas": ("water_class", protective_qml, "Protective areas by water class"),
    "permits": ("status", permits_qml, "Permits by status"),
}

_CREATE = f"""CREATE TABLE IF NOT EXISTS {STYLE_TABLE} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    f_table_catalog TEXT(256), f_table_schema TEXT(256), f_table_name TEXT(256),
    f_geometry_column TEXT(256), styleName TEXT(30), styleQML TEXT, styleSLD TEXT,
    useAsDefault BOOLEAN, description TEXT, owner TEXT(30), ui TEXT(30),
    update_time DATETIME DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"""


def layer_style_qml(layer: str, columns: Sequence[str]) -> str | None:
    """Return the QML of ``layer``'s style, or None when the toolkit has none for it.

    A layer gets its style only when it has the column the style classifies by (a
    ``permits`` export without ``status`` is left unstyled rather than drawn all "other").

    Examples
    --------
    >>> layer_style_qml("skipped", ["site_id"]) is None
    True
    >>> "categorizedSymbol" in layer_style_qml("screening", ["site_id", "permit"])
    True
    """
    entry = LAYER_STYLES.get(layer)
    if entry is None or entry[0] not in columns:
        return None
    return entry[1](columns)


def add_layer_style(
    conn_or_path: sqlite3.Connection | sqlite3.Cursor | str | os.PathLike[str], layer: str, columns: Sequence[str]
) -> bool:
    """Store ``layer``'s style in a GeoPackage's ``layer_styles`` table as its default style.

    The table is created as QGIS creates it; any earlier default of the layer is replaced.
    Call it on a file being written (inside :func:`esc_gis._outputs.atomic_output`), or
    inside a connection's transaction.

    Parameters
    ----------
    conn_or_path : sqlite3.Connection, sqlite3.Cursor or path
        The GeoPackage: a connection or cursor in the caller's transaction, or a path
        (opened, committed and closed here).
    layer : str
        The layer's table name; it selects the style (:data:`LAYER_STYLES`).
    columns : sequence of str
        The layer's attribute columns (for the aliases, and to check the style applies).

    Returns
    -------
    bool
        Whether a style was written (False when the toolkit has none for the layer).

    Raises
    ------
    sqlite3.Error
        If the file is not an SQLite database or cannot be written.
    """
    qml = layer_style_qml(layer, columns)
    if qml is None:
        return False
    own = not isinstance(conn_or_path, (sqlite3.Connection, sqlite3.Cursor))
    conn: sqlite3.Connection | sqlite3.Cursor = (
        sqlite3.connect(os.fspath(conn_or_path)) if own else conn_or_path  # type: ignore[arg-type,assignment]
    )
    try:
        row = conn.execute("SELECT column_name FROM gpkg_geometry_columns WHERE table_name = ?", (layer,)).fetchone()
        geom = row[0] if row else "geom"
        conn.execute(_CREATE)
        # Listed in gpkg_contents, as QGIS (through GDAL) lists the table it creates: GDAL shows
        # unlisted tables only while a GeoPackage lists no attribute table, so QGIS would miss
        # the styles of a file that has one (the permit registry).
        conn.execute(
            "INSERT OR IGNORE INTO gpkg_contents (table_name, data_type, identifier, description, last_change) "
            "VALUES (?, 'attributes', ?, 'QGIS layer styles', strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
            (STYLE_TABLE, STYLE_TABLE),
        )
        conn.execute(f"DELETE FROM {STYLE_TABLE} WHERE f_table_name = ? AND styleName = ?", (layer, layer))
        conn.execute(f"UPDATE {STYLE_TABLE} SET useAsDefault = 0 WHERE f_table_name = ?", (layer,))
        conn.execute(
            f"INSERT INTO {STYLE_TABLE} (f_table_catalog, f_table_schema, f_table_name, f_geometry_column, "
            "styleName, styleQML, styleSLD, useAsDefault, description, owner, ui) "
            "VALUES ('', '', ?, ?, ?, ?, '', 1, ?, '', '')",
            (layer, geom, layer, qml, f"esc-gis: {LAYER_STYLES[layer][2]}"),
        )
        if isinstance(conn, sqlite3.Connection) and own:
            conn.commit()
    finally:
        if own:
            conn.close()
    return True


def _slope_classes(steep_pct: float) -> list[tuple[float, str, str]]:
    """(upper value, label, colour) of the slope classes, cut at fractions and multiples of ``steep_pct``.

    QGIS's discrete ramp puts a cell in the first class whose value is at or above it; each
    upper value is the float just below its break, so a cell at the break itself falls in
    the class above ("or more", as the profile words the threshold).
    """
    t = steep_pct
    below = math.nextafter  # the largest double under the break
    return [
        (below(t / 4, -math.inf), f"under {t / 4:g} %", "#ffffcc"),
        (below(t / 2, -math.inf), f"{t / 4:g} to under {t / 2:g} %", "#d9f0a3"),
        (below(t, -math.inf), f"{t / 2:g} to under {t:g} %", "#addd8e"),
        (below(2 * t, -math.inf), f"{t:g} % or more (steep)", "#e31a1c"),
        (math.inf, f"{2 * t:g} % or more (steep)", "#800026"),
    ]


def _discrete_raster_qml(classes: list[tuple[float, str, str]], hi: float, *, precision: int = 1) -> str:
    """QML of band 1 of a raster in discrete colour classes ``(upper value, label, colour)``, from 0 to ``hi``."""
    items = "".join(
        f'<item alpha="255" value="{"inf" if math.isinf(v) else repr(v)}" label={quoteattr(label)} color="{colour}"/>'
        for v, label, colour in classes
    )
    return (
        "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>\n"
        f'<qgis version="{QGIS_VERSION}" styleCategories="AllStyleCategories">'
        "<pipe>"
        f'<rasterrenderer type="singlebandpseudocolor" band="1" opacity="1" alphaBand="-1" '
        f'classificationMin="0" classificationMax="{hi:g}" nodataColor="">'
        "<rasterTransparency/>"
        "<minMaxOrigin><limits>None</limits><extent>WholeRaster</extent><statAccuracy>Estimated</statAccuracy>"
        "<cumulativeCutLower>0.02</cumulativeCutLower><cumulativeCutUpper>0.98</cumulativeCutUpper>"
        "<stdDevFactor>2</stdDevFactor></minMaxOrigin>"
        "<rastershader>"
        f'<colorrampshader colorRampType="DISCRETE" classificationMode="3" clip="0" minimumValue="0" '
        f'maximumValue="{hi:g}" labelPrecision="{precision}">{items}</colorrampshader>'
        "</rastershader></rasterrenderer>"
        '<brightnesscontrast brightness="0" contrast="0" gamma="1"/>'
        '<huesaturation saturation="0" grayscaleMode="0" colorizeOn="0"/>'
        '<rasterresampler maxOversampling="2"/>'
        "</pipe><blendMode>0</blendMode></qgis>\n"
    )


def slope_qml(steep_pct: float) -> str:
    """Return the QML of a slope-percent raster: discrete classes, those at ``steep_pct`` or more in red.

    Examples
    --------
    >>> "colorrampshader" in slope_qml(12.5)
    True
    """
    return _discrete_raster_qml(_slope_classes(steep_pct), 4 * steep_pct)


def write_slope_qml(path: str | os.PathLike[str], steep_pct: float) -> Path:
    """Write :func:`slope_qml` to ``path`` atomically (the caller checks the path first).

    Raises
    ------
    OSError
        If the folder cannot be written to; nothing is left behind.
    """
    p = Path(path)
    with atomic_output(p) as tmp:
        tmp.write_text(slope_qml(steep_pct), encoding="utf-8")
    return p


def _soil_loss_classes(standard_tpa: float) -> list[tuple[float, str, str]]:
    """(upper value, label, colour) of the soil-loss raster's classes, cut at fractions and multiples of the standard.

    As for the slope classes, a cell exactly at a break falls in the class above.
    """
    t = standard_tpa
    below = math.nextafter
    return [
        (below(t / 4, -math.inf), f"under {t / 4:g} t/ac", "#ffffcc"),
        (below(t / 2, -math.inf), f"{t / 4:g} to under {t / 2:g} t/ac", "#c2e699"),
        (below(t, -math.inf), f"{t / 2:g} to under {t:g} t/ac", "#78c679"),
        (below(2 * t, -math.inf), f"{t:g} to under {2 * t:g} t/ac", "#fd8d3c"),
        (math.inf, f"{2 * t:g} t/ac or more", "#bd0026"),
    ]


def soil_loss_qml(standard_tpa: float) -> str:
    """Return the QML of a soil-loss raster (band 1, t/ac): discrete classes cut at the sediment standard's value.

    The classes only help reading the cells: the standard applies to a site's discharge over
    its schedule, not to a cell, and the caller passes its value from the profile.

    Examples
    --------
    >>> 'label="5 to under 10 t/ac"' in soil_loss_qml(5.0)
    True
    """
    return _discrete_raster_qml(_soil_loss_classes(standard_tpa), 4 * standard_tpa, precision=2)


def write_soil_loss_qml(path: str | os.PathLike[str], standard_tpa: float) -> Path:
    """Write :func:`soil_loss_qml` to ``path`` atomically (the caller checks the path first).

    Raises
    ------
    OSError
        If the folder cannot be written to; nothing is left behind.
    """
    p = Path(path)
    with atomic_output(p) as tmp:
        tmp.write_text(soil_loss_qml(standard_tpa), encoding="utf-8")
    return p
