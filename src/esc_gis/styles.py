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
    "ALIASES",
    "LAYER_DESCRIPTIONS",
    "LAYER_STYLES",
    "PERMIT_COLOURS",
    "STATUS_COLOURS",
    "STYLE_TABLE",
    "add_layer_style",
    "aliases_qml",
    "describe_layer",
    "layer_style_qml",
    "slope_qml",
    "soil_loss_qml",
    "write_slope_qml",
    "write_soil_loss_qml",
]

import math
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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
#: Soil loss per site against the sediment-discharge standard: a site the standard does not
#: reach (``sediment_standard`` false: under its acre threshold, counting the common plan) is
#: not judged against it; a site without a number (null ``passes``) neither meets nor exceeds it.
SOIL_LOSS_CLASS_EXPRESSION = (
    'CASE WHEN "sediment_standard" IS NOT NULL AND NOT "sediment_standard" THEN \'not_applicable\' '
    "WHEN \"passes\" IS NULL THEN 'not_computed' WHEN \"passes\" THEN 'meets' ELSE 'exceeds' END"
)
#: The same for a soil-loss layer written before the ``sediment_standard`` column existed.
SOIL_LOSS_CLASS_EXPRESSION_OLD = (
    "CASE WHEN \"passes\" IS NULL THEN 'not_computed' WHEN \"passes\" THEN 'meets' ELSE 'exceeds' END"
)
SOIL_LOSS_COLOURS: dict[str, tuple[str, str]] = {
    "exceeds": ("Exceeds the standard", "#d7191c"),
    "meets": ("Meets the standard", "#1a9641"),
    "not_applicable": ("Standard does not apply (see its findings)", "#92c5de"),
    "not_computed": ("Not computed (see its findings)", "#bdbdbd"),
}
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

#: Descriptions QGIS shows for fields (aliases, from the ``<aliases>`` of the default style),
#: by column name, the same in every layer. Plain words about the column: a threshold or a
#: section is never named here (the rows carry the profile's, in ``findings`` and ``section``).
ALIASES: dict[str, str] = {
    # screening
    "site_id": "Site",
    "plan_id": "Common plan",
    "jurisdiction": "Inside the boundary (inside, partial, outside)",
    "disturbed_sqft": "Disturbed area (sq ft)",
    "disturbed_acres": "Disturbed area (acres)",
    "disturbed_in_jurisdiction_sqft": "Disturbed area inside the boundary (sq ft)",
    "disturbed_in_village_sqft": "Disturbed area inside the boundary (sq ft; deprecated name)",
    "plan_disturbed_sqft": "Disturbed area the thresholds apply to (sq ft)",
    "applicability": "Applicability",
    "permit": "Permit decision",
    "permit_may_be_required": "May be required (discretionary)",
    "standards": "Performance standards that apply",
    "sediment_standard": "Sediment standard applies",
    "steep_disturbed_sqft": "Disturbed area on steep slopes (sq ft)",
    "protective_disturbed_sqft": "Disturbed area in protective areas (sq ft)",
    "nearest_water_ft": "Distance to the nearest water (ft)",
    "findings": "Findings (JSON)",
    "activity": "Activity",
    "state_agency": "Work by a state agency",
    "npdes_exempt": "Exempt from an NPDES permit",
    "steep_share": "Steep share of the disturbance",
    "steep_uncovered_sqft": "Disturbed area the DEM does not cover (sq ft)",
    "in_water_sqft": "Disturbed area in water (sq ft)",
    "nearest_water": "Nearest water",
    "protective_waters": "Waters whose protective areas are disturbed",
    "targeted_areas": "Targeted-standard areas",
    "name": "Name",
    "note": "Note",
    "site_sqft": "Site area (sq ft)",
    "earlier_permits": "Earlier permits on the site",
    # steep land, protective areas
    "threshold_pct": "Slope threshold (%)",
    "area_sqft": "Area (sq ft)",
    "water_class": "Water class",
    "width_ft": "Protective-area width (ft)",
    "section": "Section",
    "features": "Water features merged",
    "centreline": "Measured from centrelines",
    "channel_class_unverified": "Channel class taken as given",
    # soil loss
    "k": "Soil erodibility K",
    "k_covered_share": "Share of the area with a K",
    "ls_mean": "LS factor (mean over the disturbed area)",
    "ls_rep": "LS factor (representative slope)",
    "rep_length_ft": "Representative slope length (ft)",
    "rep_slope_pct": "Representative slope (%)",
    "dem_covered_share": "Share of the area the DEM covers",
    "outside_share": "Share outside the method (too steep, or past the slope-length cap)",
    "outside_sqft": "Area outside the method (sq ft; too steep, or past the slope-length cap)",
    "windows": "12-month windows",
    "governing_window": "Governing window",
    "soil_loss_tpa": "Soil loss (tons/acre)",
    "bare_soil_loss_tpa": "Bare-soil soil loss, screening estimate (tons/acre/year)",
    "disturbed_limits": "Disturbed limits measured (EWKT)",
    "discharge_tpa": "Sediment discharge (tons/acre)",
    "standard_tpa": "Sediment standard (tons/acre)",
    "passes": "Meets the standard",
    # permits (registry and exports)
    "permit_number": "Permit number",
    "parcel_id": "Parcel",
    "site_address": "Site address",
    "legal_description": "Legal description",
    "status": "Status",
    "permit_decision": "Permit decision (screening)",
    "building_permit_expires": "Building permit expires",
    "received_on": "Application received",
    "information_requested_on": "Information requested",
    "information_received_on": "Information received",
    "decided_on": "Decided",
    "issued_on": "Issued",
    "expires_on": "Expires on",
    "started_at": "Work started",
    "start_notice_at": "Start of work notified",
    "work_stopped_on": "Work stopped",
    "stockpile_since": "Stockpile in place since",
    "final_on": "Final stabilisation",
    "updated_at": "Last updated",
    "resume_expected_on": "Work expected to resume",
    "work_resumed_on": "Work resumed",
    # inspections, enforcement cases
    "inspected_at": "Inspected",
    "inspector": "Inspector",
    "assessment": "Assessment of the controls",
    "work_done": "Control work done",
    "phase": "Construction phase",
    "recorded_by": "Recorded by",
    "recorded_at": "Recorded",
    "inspected_by": "Inspected by (holder or office)",
    "pre_start": "Before work started",
    "adjoining_repairs": "Repairs to adjoining surfaces",
    "on_site_documents": "Plan, reports and permit on site",
    "certificate_posted": "Certificate of coverage posted",
    "case_id": "Case",
    "site_ref": "Site reference",
    "ground": "Ground for the case",
    "opened_on": "Opened",
    "reasons": "Reasons",
    "opened_by": "Opened by",
    "opened_at": "Case recorded",
}

#: Title and abstract of each table the toolkit writes, by table name: the GeoPackage's
#: ``gpkg_contents`` identifier and description, which QGIS shows as the layer's title and
#: abstract (Layer Properties > Information and Metadata) and GDAL as IDENTIFIER and
#: DESCRIPTION. Plain words about the data; a number or a section of the law is never named.
LAYER_DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "screening": (
        "Screening of sites",
        "One row per site: where it lies against the boundary, its disturbed area, the permit "
        "decision, the performance standards that apply, the disturbance on steep slopes, in "
        "protective areas and in water, and the findings as JSON, each with the section of the "
        "ordinance profile it rests on and its basis. Written by esc-gis screen.",
    ),
    "skipped": (
        "Features skipped as not sites",
        "Features of the sites layer that esc-gis screen left out as not sites (by the skip "
        "rule), with their attributes as read.",
    ),
    "steep": (
        "Steep land",
        "Dissolved polygons of land whose slope is at or above the threshold in threshold_pct, "
        "with their area. Written by esc-gis steep.",
    ),
    "protective_areas": (
        "Protective areas",
        "Strips of land along waters, by the water class that governs and its width (the "
        "greatest where strips overlap), with the section of the profile the width comes "
        "from; the waters themselves are left out. Written by esc-gis protective.",
    ),
    "soil_loss": (
        "Soil loss per site",
        "One row per site: K, LS, the soil loss and sediment discharge of its governing "
        "12-month window of the construction schedule, the standard and whether the site meets "
        "it, and the findings as JSON. Written by esc-gis soil-loss.",
    ),
    "permits": (
        "Permits",
        "One row per permit: number, site address, status, dates and the disturbed area, with "
        "the site boundary as geometry. Written by esc-gis permits.",
    ),
    "disturbed_limits": ("Disturbed limits of permits", "The disturbed-limit polygon of each permit."),
    "inspections": (
        "Inspections",
        "Site inspection reports: when, where on the site (a point, when recorded), the "
        "inspector, the assessment of the controls, the work done and the phase. Private.",
    ),
    "enforcement_cases": (
        "Enforcement cases",
        "Enforcement cases, with or without a permit: the site, the ground, when and by whom "
        "the case was opened, and why. Private.",
    ),
    "parties": ("Permit parties", "Landowners and responsible parties of each permit, with contact details. Private."),
    "events": ("Permit history", "Who did what to each permit, and when. Append-only."),
    "deficiencies": ("Inspection deficiencies", "What each inspection found wrong, one row each."),
    "repairs": ("Repairs", "The repair of each deficiency, by a later inspection or a record of it."),
    "inspection_photos": ("Inspection photos", "Photos taken at inspections, with file name, type and SHA-256."),
    "enforcement_events": ("Enforcement history", "What happened in each enforcement case, and when. Append-only."),
    "appeals": ("Appeals", "Appeals of orders and decisions: what was appealed, by whom and when."),
    "appeal_decisions": ("Appeal decisions", "The decision on each appeal, the body that heard it and its effect."),
    "fees": ("Fees", "Fees paid: kind, amount, date paid and receipt number. Private."),
    "guarantees": ("Financial guarantees", "Financial guarantees held for permits, with amount and expiry. Private."),
    "guarantee_events": ("Guarantee history", "Draws on and releases of each financial guarantee. Append-only."),
    "plan_versions": (
        "Plan versions",
        "Each permit's erosion and sediment control plan: the original, every amendment with what "
        "triggered it and the written permission before it took effect, and the office's notices "
        "of changes needed. Append-only. Only the current version's date is public.",
    ),
    "decision_clocks": (
        "Decision clocks",
        "Each permit's decision clock: the day the office's time to decide runs from (the application "
        "complete, its fee paid) and the history event that started it; empty once decided. A "
        "projection of the history.",
    ),
    "history": (
        "Typed history",
        "Every fact the office recorded, one typed event a row, in each permit's (or case's) order: "
        "the one record every other table is rebuilt from. Append-only. Private.",
    ),
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


def aliases_qml(columns: Sequence[str]) -> str | None:
    """Return a style of field aliases alone (QGIS keeps its own renderer), or None when no column has one.

    It names no geometry type, so QGIS applies it to points, polygons and tables alike.

    Examples
    --------
    >>> "Disturbed area (sq ft)" in aliases_qml(["disturbed_sqft", "mine"])
    True
    >>> aliases_qml(["mine"]) is None
    True
    """
    if not any(c in ALIASES for c in columns):
        return None
    return (
        "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>\n"
        f'<qgis version="{QGIS_VERSION}" styleCategories="Fields">{_aliases(columns)}</qgis>\n'
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


def soil_loss_sites_qml(columns: Sequence[str]) -> str:
    """Return the style of soil loss per site, labelled by site.

    By the standard: meets, exceeds, standard does not apply (``sediment_standard`` false),
    not computed. A layer without ``sediment_standard`` (written by an older esc_gis) gets the
    three classes it can tell apart.
    """
    labels = _labels("site_id") if "site_id" in columns else ""
    if "sediment_standard" in columns:
        return _document(_categorised(SOIL_LOSS_CLASS_EXPRESSION, SOIL_LOSS_COLOURS), columns=columns, labels=labels)
    old = {k: v for k, v in SOIL_LOSS_COLOURS.items() if k != "not_applicable"}
    return _document(_categorised(SOIL_LOSS_CLASS_EXPRESSION_OLD, old), columns=columns, labels=labels)


#: Layer name -> (the column the style needs, the QML maker, a description).
LAYER_STYLES: dict[str, tuple[str, Callable[[Sequence[str]], str], str]] = {
    "screening": ("permit", screening_qml, "Sites by permit decision, labelled with their site id"),
    "steep": ("area_sqft", steep_qml, "Land at or above the steep-slope threshold"),
    "protective_areas": ("water_class", protective_qml, "Protective areas by water class"),
    "permits": ("status", permits_qml, "Permits by status"),
    "soil_loss": (
        "passes",
        soil_loss_sites_qml,
        "Sites by the sediment-discharge standard, labelled with their site id",
    ),
}

_CREATE = f"""CREATE TABLE IF NOT EXISTS {STYLE_TABLE} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    f_table_catalog TEXT(256), f_table_schema TEXT(256), f_table_name TEXT(256),
    f_geometry_column TEXT(256), styleName TEXT(30), styleQML TEXT, styleSLD TEXT,
    useAsDefault BOOLEAN, description TEXT, owner TEXT(30), ui TEXT(30),
    update_time DATETIME DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"""


def layer_style_qml(layer: str, columns: Sequence[str]) -> str | None:
    """Return the QML of ``layer``'s style, or None when the toolkit has none for it.

    A layer gets its symbols only when it has the column the style classifies by (a
    ``permits`` export without ``status`` is not drawn all "other"). Any other layer the
    toolkit writes (:data:`LAYER_DESCRIPTIONS`) gets the aliases of its columns alone.

    Examples
    --------
    >>> layer_style_qml("mine", ["site_id"]) is None
    True
    >>> "renderer-v2" in layer_style_qml("skipped", ["site_id"])
    False
    >>> "categorizedSymbol" in layer_style_qml("screening", ["site_id", "permit"])
    True
    """
    entry = LAYER_STYLES.get(layer)
    if entry is not None and entry[0] in columns:
        return entry[1](columns)
    return aliases_qml(columns) if layer in LAYER_DESCRIPTIONS else None


@contextmanager
def _connection(
    conn_or_path: sqlite3.Connection | sqlite3.Cursor | str | os.PathLike[str],
) -> Iterator[sqlite3.Connection | sqlite3.Cursor]:
    """Yield the caller's connection or cursor as it is, or a path's own (committed and closed after)."""
    if isinstance(conn_or_path, (sqlite3.Connection, sqlite3.Cursor)):
        yield conn_or_path
        return
    conn = sqlite3.connect(os.fspath(conn_or_path))
    try:
        yield conn
        conn.commit()
    finally:
        conn.close()


def describe_layer(
    conn_or_path: sqlite3.Connection | sqlite3.Cursor | str | os.PathLike[str], table: str, kind: str | None = None
) -> bool:
    """Give a GeoPackage table its title and abstract (:data:`LAYER_DESCRIPTIONS`) in ``gpkg_contents``.

    QGIS 3.22 reads them (through GDAL's IDENTIFIER and DESCRIPTION) as the layer's title
    and abstract; it reads no aliases from ``gpkg_data_columns`` (GDAL 3.6 does not), so the
    field aliases travel in the style (:func:`add_layer_style`).

    Parameters
    ----------
    conn_or_path : sqlite3.Connection, sqlite3.Cursor or path
        The GeoPackage, as for :func:`add_layer_style`.
    table : str
        The table's name in ``gpkg_contents``.
    kind : str, optional
        What the table is when its name is the user's: it gets ``kind``'s description, its
        title followed by its name (titles are unique in a GeoPackage). Default ``table``.

    Returns
    -------
    bool
        Whether a description was written (False for a table the toolkit has none for, or
        when another table of the file already has the title as its identifier).

    Raises
    ------
    sqlite3.Error
        If the file is not a GeoPackage or cannot be written.
    """
    entry = LAYER_DESCRIPTIONS.get(kind or table)
    if entry is None:
        return False
    if kind and kind != table:
        entry = (f"{entry[0]} ({table})", *entry[1:])
    with _connection(conn_or_path) as conn:
        # OR IGNORE: identifiers are unique in a GeoPackage; a file that already uses the title
        # for another table (a user's own) keeps its names rather than failing the write.
        cur = conn.execute(
            "UPDATE OR IGNORE gpkg_contents SET identifier = ?, description = ? WHERE table_name = ?",
            (entry[0], entry[1], table),
        )
        return cur.rowcount == 1


def add_layer_style(
    conn_or_path: sqlite3.Connection | sqlite3.Cursor | str | os.PathLike[str],
    layer: str,
    columns: Sequence[str],
    *,
    keep_user_default: bool = False,
    kind: str | None = None,
) -> bool:
    """Store ``layer``'s style in a GeoPackage's ``layer_styles`` table as its default style.

    The style is the layer's symbols and field aliases, or its aliases alone for a layer the
    toolkit draws no symbols for (:func:`layer_style_qml`). The table is created as QGIS
    creates it; any earlier default of the layer is replaced. Call it on a file being written
    (inside :func:`esc_gis._outputs.atomic_output`), or inside a connection's transaction.

    Parameters
    ----------
    conn_or_path : sqlite3.Connection, sqlite3.Cursor or path
        The GeoPackage: a connection or cursor in the caller's transaction, or a path
        (opened, committed and closed here).
    layer : str
        The layer's table name; it selects the style (:data:`LAYER_STYLES`).
    columns : sequence of str
        The layer's attribute columns (for the aliases, and to check the style applies).
    keep_user_default : bool, default False
        Leave a default style the user saved (another name than the layer's) as the default;
        the toolkit's is stored beside it. For files users keep styling, as the registry.
    kind : str, optional
        What the layer is, when its name is the user's (``--output-layer``): the style of
        ``kind`` (``"screening"``, ``"steep"``, ...) is stored for ``layer``. Default ``layer``.

    Returns
    -------
    bool
        Whether a style was written (False when the toolkit has neither symbols nor aliases
        for the layer).

    Raises
    ------
    sqlite3.Error
        If the file is not an SQLite database or cannot be written.
    """
    kind = kind or layer
    qml = layer_style_qml(kind, columns)
    if qml is None:
        return False
    entry = LAYER_STYLES.get(kind)
    what = entry[2] if entry is not None and entry[0] in columns else "field aliases"
    with _connection(conn_or_path) as conn:
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
        users = conn.execute(
            f"SELECT count(*) FROM {STYLE_TABLE} WHERE f_table_name = ? AND styleName <> ? AND useAsDefault",
            (layer, layer),
        ).fetchone()[0]
        keep = bool(keep_user_default and users)
        conn.execute(f"DELETE FROM {STYLE_TABLE} WHERE f_table_name = ? AND styleName = ?", (layer, layer))
        if not keep:
            conn.execute(f"UPDATE {STYLE_TABLE} SET useAsDefault = 0 WHERE f_table_name = ?", (layer,))
        conn.execute(
            f"INSERT INTO {STYLE_TABLE} (f_table_catalog, f_table_schema, f_table_name, f_geometry_column, "
            "styleName, styleQML, styleSLD, useAsDefault, description, owner, ui) "
            "VALUES ('', '', ?, ?, ?, ?, '', ?, ?, '', '')",
            (layer, geom, layer, qml, int(not keep), f"esc-gis: {what}"),
        )
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


def _write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write a sidecar's text atomically: nothing is left behind on failure."""
    p = Path(path)
    with atomic_output(p) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return p


def write_slope_qml(path: str | os.PathLike[str], steep_pct: float) -> Path:
    """Write :func:`slope_qml` to ``path`` atomically (the caller checks the path first).

    Raises
    ------
    OSError
        If the folder cannot be written to; nothing is left behind.
    """
    return _write_text(path, slope_qml(steep_pct))


#: What the soil-loss raster's classes over the standard add to their labels, by whether the
#: standard reaches all, some or none of the sites on the raster.
SOIL_LOSS_REACH_NOTE = {"all": "", "some": " (over the standard where it applies)", "none": ""}
#: Label suffix of every class of a raster whose sites the standard does not reach.
SOIL_LOSS_NOT_APPLICABLE_NOTE = " (standard does not apply)"


def _soil_loss_classes(standard_tpa: float, reaches: str = "all") -> list[tuple[float, str, str]]:
    """(upper value, label, colour) of the soil-loss raster's classes, cut at fractions and multiples of the standard.

    As for the slope classes, a cell exactly at a break falls in the class above, except at the
    standard itself: "no more than" the standard meets it, so a cell at it is in the class below.
    Where the standard reaches none of the raster's sites (``reaches="none"``), every label says
    it does not apply and the classes over it are blues, not the reds of exceeding it.
    """
    if reaches not in SOIL_LOSS_REACH_NOTE:
        msg = f"reaches must be one of {', '.join(SOIL_LOSS_REACH_NOTE)}, not {reaches!r}"
        raise ValueError(msg)
    t = standard_tpa
    below = math.nextafter
    over = SOIL_LOSS_REACH_NOTE[reaches]
    high = ("#fd8d3c", "#bd0026") if reaches != "none" else ("#6baed6", "#2171b5")
    classes = [
        (below(t / 4, -math.inf), f"under {t / 4:g} t/ac", "#ffffcc"),
        (below(t / 2, -math.inf), f"{t / 4:g} to under {t / 2:g} t/ac", "#c2e699"),
        (t, f"{t / 2:g} to {t:g} t/ac", "#78c679"),
        (below(2 * t, -math.inf), f"over {t:g} to under {2 * t:g} t/ac{over}", high[0]),
        (math.inf, f"{2 * t:g} t/ac or more{over}", high[1]),
    ]
    if reaches == "none":
        classes = [(v, label + SOIL_LOSS_NOT_APPLICABLE_NOTE, colour) for v, label, colour in classes]
    return classes


def soil_loss_qml(standard_tpa: float, reaches: str = "all") -> str:
    """Return the QML of a soil-loss raster (band 1, t/ac): discrete classes cut at the sediment standard's value.

    The classes only help reading the cells: the standard applies to a site's discharge over
    its schedule, not to a cell, and the caller passes its value from the profile.

    Parameters
    ----------
    standard_tpa : float
    reaches : {"all", "some", "none"}, default "all"
        Whether the standard reaches all, some or none of the raster's sites.

    Raises
    ------
    ValueError
        If ``reaches`` is not one of those.

    Examples
    --------
    >>> 'label="over 5 to under 10 t/ac"' in soil_loss_qml(5.0)
    True
    >>> 'label="over 5 to under 10 t/ac (standard does not apply)"' in soil_loss_qml(5.0, "none")
    True
    """
    return _discrete_raster_qml(_soil_loss_classes(standard_tpa, reaches), 4 * standard_tpa, precision=2)


def write_soil_loss_qml(path: str | os.PathLike[str], standard_tpa: float, *, reaches: str = "all") -> Path:
    """Write :func:`soil_loss_qml` to ``path`` atomically (the caller checks the path first).

    Raises
    ------
    OSError
        If the folder cannot be written to; nothing is left behind.
    """
    return _write_text(path, soil_loss_qml(standard_tpa, reaches))
