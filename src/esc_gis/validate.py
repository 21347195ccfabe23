"""Validation of input layers: collect every problem, then report them all at once.

The screening contract's attributes (``site_id``, ``plan_id``, ``activity``,
``state_agency``, ``npdes_exempt``) are found by name, case-insensitively, under their
shapefile-truncated names (``state_agen``, ``npdes_exem``) or under any name the user maps
with ``field_map``. Each check is vectorised; only the rows that fail are visited, to word
their messages. Nothing here raises for a bad row: functions return the cleaned layer and a
list of :class:`~esc_gis.errors.Problem` for :func:`esc_gis.screening.screen` to raise at once.

An invalid polygon meets one rule, the same in every command and the service
(:func:`check_polygons`): a repair that leaves its area and its parts as drawn (a spike, a ring
touching itself, parts sharing an edge) is made with :func:`shapely.make_valid`
(``method="structure"``) and recorded for a finding; a repair that would change its area (beyond
the profile's ``policy.geometry_repair``) or split it into more parts (a bow-tie: a rectangle
drawn with two corners swapped) is refused, naming the row, where the ring crosses itself and
the fix. Non-polygon and empty geometries are refused by row.
"""

from __future__ import annotations

__all__ = [
    "ACTIVITIES",
    "DRAINAGE_FIELD",
    "FIELD_ALIASES",
    "IGNORE_CLASS",
    "PIPED_FIELD",
    "REPAIRED_COLUMN",
    "ROW_COLUMN",
    "PolygonCheck",
    "SiteTable",
    "check_polygons",
    "prepare_disturbed",
    "prepare_sites",
    "prepare_waters",
    "read_flags",
    "repair_tolerance_sqft",
]

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from esc_gis._fields import DRAINAGE_FIELD, PIPED_FIELD
from esc_gis.errors import CRSError, LayerSetError, Problem, ProfileError, UnitsError

#: The sites table's own columns: the feature number in the file and whether the geometry was
#: repaired. Named so that no user's field can be one of them: a parcel layer's own ``row`` or
#: ``repaired`` field is kept, and these never reach an output (issue 46).
ROW_COLUMN = "_esc_row"
REPAIRED_COLUMN = "_esc_repaired"

#: Allowed ``activity`` values (§ 540-4A(2), § 540-5).
ACTIVITIES = ("construction", "agricultural_activity", "agricultural_production", "silviculture")
#: Canonical field -> other names it is found under (shapefiles cut names to 10 characters).
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "site_id": (),
    "plan_id": ("plan",),
    "activity": (),
    "state_agency": ("state_agen",),
    "npdes_exempt": ("npdes_exem",),
}
_TRUE = {"true", "t", "yes", "y", "1", "1.0"}
_FALSE = {"false", "f", "no", "n", "0", "0.0", ""}
_POLYGONAL = (shapely.GeometryType.POLYGON, shapely.GeometryType.MULTIPOLYGON)


@dataclass(frozen=True)
class PolygonCheck:
    """What the one geometry rule made of one invalid polygon (:func:`check_polygons`).

    Attributes
    ----------
    geometry : shapely geometry
        The polygon repaired (when not ``refused``), or as given.
    reason : str
        Why it is invalid, in GEOS's words (``"Self-intersection"``, ``"Ring Self-intersection"``).
    where : tuple of float or None
        The point GEOS names, in the layer's CRS.
    drawn_sqft, repaired_sqft : float
        The area its rings enclose as drawn (each ring's signed area: a bow-tie's two lobes
        cancel) and the area made valid, in square feet (in the layer's own units without a CRS).
    drawn_parts, repaired_parts : int
        Its polygons as drawn and made valid.
    refused : bool
        The repair would change the area or split the polygon: a shape nobody drew.
    """

    geometry: Any
    reason: str
    where: tuple[float, float] | None
    drawn_sqft: float
    repaired_sqft: float
    drawn_parts: int
    repaired_parts: int
    refused: bool

    def problem(self, crs: Any) -> tuple[str, str]:
        """Return ``(message, fix)`` of a refused polygon: where it crosses itself, what a repair makes, the fix."""
        at = ""
        if self.where is not None:
            label = _crs_label(crs)
            geographic = label is not None and _is_geographic(crs)
            x, y = (f"{v:.6f}" if geographic else f"{v:.2f}" for v in self.where)
            at = f" at x {x}, y {y}" + (f" ({label})" if label else "")
        unit = "sq ft" if crs is not None else "square units"
        if self.repaired_parts > self.drawn_parts:
            made = (
                f"made valid it would split into {self.repaired_parts} parts ({self.repaired_sqft:,.1f} {unit} in all) "
                f"where {self.drawn_parts} {'was' if self.drawn_parts == 1 else 'were'} drawn"
            )
        else:
            made = (
                f"made valid it would measure {self.repaired_sqft:,.1f} {unit} where its rings as drawn enclose "
                f"{self.drawn_sqft:,.1f} {unit}"
            )
        message = (
            f"is not a valid polygon ({self.reason.lower()}{at}): {made}, a shape nobody drew, so it is not measured."
        )
        fix = (
            "redraw it so that no edge crosses another (the corners in order around the outline: a rectangle "
            "drawn with two corners swapped crosses at its middle); QGIS's Check Validity shows the point."
        )
        return message, fix


#: Where GEOS names the point that makes a geometry invalid: ``"Self-intersection[50 30]"``.
_WHERE = re.compile(r"^(?P<reason>[^\[]*)\[(?P<x>\S+) (?P<y>\S+)(?: \S+)?\]")


def repair_tolerance_sqft(profile: Any) -> float:
    """Return how far (sq ft) a repair may move a polygon's area and still be the shape drawn.

    The profile's ``policy.geometry_repair`` (basis policy); a profile without it falls back on
    its ``policy.sliver``, the other tolerance for digitising noise.

    Raises
    ------
    ProfileError
        If the profile has neither entry as an area.
    """
    try:
        return float(profile.area_sqft("policy.geometry_repair"))
    except ProfileError:
        return float(profile.area_sqft("policy.sliver"))


def _crs_label(crs: Any) -> str | None:
    if crs is None:
        return None
    from pyproj import CRS

    c = CRS.from_user_input(crs)
    auth = c.to_authority()
    return f"{auth[0]}:{auth[1]}" if auth else c.name


def _is_geographic(crs: Any) -> bool:
    from pyproj import CRS

    return bool(CRS.from_user_input(crs).is_geographic)


def _sqft(geoms: np.ndarray, crs: Any) -> np.ndarray:
    """Return each geometry's area (valid or not) in square feet, in any CRS; in its own units without one.

    A projected CRS fit for measuring gives its planar area (as the screening measures); degrees
    and Mercator are projected first on an equal-area projection centred on each geometry.
    """
    if crs is None:
        return np.asarray(shapely.area(geoms), dtype=float)
    from pyproj import CRS, Transformer

    from esc_gis.measure import area_sqft
    from esc_gis.units import SQFT_PER_M2

    c = CRS.from_user_input(crs)
    try:
        return np.asarray(area_sqft(geoms, c), dtype=float)
    except (CRSError, UnitsError):
        pass
    to_lonlat = Transformer.from_crs(c, "OGC:CRS84", always_xy=True)
    out = np.zeros(len(geoms))
    for i, g in enumerate(geoms):
        if g is None or shapely.is_empty(g):  # a repair that left nothing (a ring collapsed to a line)
            continue
        cx, cy = shapely.centroid(shapely.envelope(g)).coords[0]
        lon, lat = to_lonlat.transform(cx, cy)
        laea = CRS.from_proj4(f"+proj=laea +lat_0={lat} +lon_0={lon} +datum=WGS84 +units=m +no_defs")
        tr = Transformer.from_crs(c, laea, always_xy=True)
        projected = shapely.transform(g, lambda xy, tr=tr: np.column_stack(tr.transform(xy[:, 0], xy[:, 1])))
        out[i] = float(shapely.area(projected)) * SQFT_PER_M2
    return out


def _polygonal(g: Any) -> Any:
    """Keep the polygons of what make_valid returned (a collection may carry collapsed lines)."""
    if shapely.get_type_id(g) in (3, 6):
        return g
    parts = [p for p in shapely.get_parts(g) if shapely.get_type_id(p) in (3, 6)]
    return shapely.union_all(parts) if parts else shapely.Polygon()


def _parts(geoms: np.ndarray) -> np.ndarray:
    return np.where(shapely.is_empty(geoms), 0, shapely.get_num_geometries(geoms))


def check_polygons(geoms: np.ndarray, crs: Any, *, tolerance_sqft: float) -> dict[int, PolygonCheck]:
    """Apply the one rule for invalid polygons: repair what stays as drawn, refuse what would not.

    A repair (:func:`shapely.make_valid`, ``method="structure"``) that leaves the polygon's area
    (within ``tolerance_sqft``) and does not split it into more parts keeps the shape drawn: a
    spike, a duplicate vertex GEOS counts as a crossing, a ring touching itself, parts sharing an
    edge (merged, the area unchanged). One that changes the area or splits it is a shape nobody
    drew: a bow-tie (a rectangle drawn with two corners swapped) is made two triangles of half
    the area. The same function serves every door: ``screen`` (whole-file and streamed),
    ``permits add``/``import``, ``review`` and the service.

    Parameters
    ----------
    geoms : numpy.ndarray of shapely Polygon or MultiPolygon
        Polygons (others are passed over: the caller refuses them).
    crs : Any
        Their CRS, for the areas (sq ft) and the point named; None when unknown.
    tolerance_sqft : float
        How far the area may move (:func:`repair_tolerance_sqft`).

    Returns
    -------
    dict of int to PolygonCheck
        One entry per invalid polygon, by position; empty when all are valid.

    Examples
    --------
    >>> bowtie = shapely.Polygon([(0, 0), (100, 0), (0, 60), (100, 60)])
    >>> c = check_polygons(np.array([bowtie]), "EPSG:2222", tolerance_sqft=1.0)[0]
    >>> c.refused, c.repaired_parts, round(c.repaired_sqft), c.where
    (True, 2, 3000, (50.0, 30.0))
    """
    geoms = np.asarray(geoms, dtype=object)
    polygonal = np.isin(shapely.get_type_id(geoms), _POLYGONAL) & ~shapely.is_empty(geoms)
    invalid = np.flatnonzero(polygonal & ~shapely.is_valid(geoms))
    if not len(invalid):
        return {}
    drawn = geoms[invalid]
    fixed = np.array(
        [_polygonal(g) for g in shapely.make_valid(drawn, method="structure", keep_collapsed=False)], dtype=object
    )
    drawn_sqft = np.abs(_sqft(drawn, crs))
    fixed_sqft = _sqft(fixed, crs)
    out = {}
    for k, i in enumerate(invalid.tolist()):
        text = shapely.is_valid_reason(drawn[k]) or "invalid"
        m = _WHERE.match(text)
        reason, where = text, None
        if m:
            reason = m["reason"].strip()
            try:
                where = (float(m["x"]), float(m["y"]))
            except ValueError:
                where = None
        parts_drawn, parts_fixed = int(_parts(drawn[k : k + 1])[0]), int(_parts(fixed[k : k + 1])[0])
        changed = abs(float(fixed_sqft[k]) - float(drawn_sqft[k])) > tolerance_sqft
        out[i] = PolygonCheck(
            fixed[k],
            reason,
            where,
            float(drawn_sqft[k]),
            float(fixed_sqft[k]),
            parts_drawn,
            parts_fixed,
            bool(changed or parts_fixed > parts_drawn),
        )
    return out


@dataclass
class SiteTable:
    """Sites after validation, with canonical columns and repaired geometry.

    Attributes
    ----------
    gdf : geopandas.GeoDataFrame
        Columns ``site_id`` (str), ``plan_id`` (str or None), ``activity`` (str),
        ``state_agency`` (bool), ``npdes_exempt`` (bool), :data:`ROW_COLUMN` (1-based feature number),
        :data:`REPAIRED_COLUMN` (bool) and the geometry. Other input columns are kept, a
        field of the user's named ``row`` or ``repaired`` too.
    problems : list of Problem
    generated : list of str
        The ``row:<n>`` ids given to rows that had none (``generate_ids=True``).
    """

    gdf: gpd.GeoDataFrame
    problems: list[Problem]
    generated: list[str] = dataclasses.field(default_factory=list)


def _find_field(columns: list[str], canonical: str, field_map: dict[str, str]) -> str | None:
    if canonical in field_map:
        return field_map[canonical]
    lower = {c.lower(): c for c in columns}
    for name in (canonical, *FIELD_ALIASES.get(canonical, ())):
        if name.lower() in lower:
            return lower[name.lower()]
    return None


def _ids_as_str(values: pd.Series) -> pd.Series:
    """Ids as text (object dtype, None for missing); integral floats lose their '.0'."""
    present = values.notna().to_numpy()
    out = np.full(len(values), None, dtype=object)
    if pd.api.types.is_float_dtype(values):
        v = values.to_numpy(dtype=float)
        whole = present & (np.mod(v, 1) == 0)
        out[whole] = v[whole].astype("int64").astype(str)
        out[present & ~whole] = v[present & ~whole].astype(str)
    else:
        text = values[present].astype(str).str.strip().to_numpy(dtype=object)
        text[text == ""] = None
        out[present] = text
    return pd.Series(out, index=values.index, dtype=object)


def _parse_bool(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Return (parsed, bad): booleans from bool, 0/1 or yes/no text; nulls are False."""
    if pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=bool), np.zeros(len(values), bool)
    text = values.astype(object).where(values.notna(), "").astype(str).str.strip().str.lower()
    is_true = text.isin(_TRUE).to_numpy()
    bad = ~(is_true | text.isin(_FALSE).to_numpy())
    return is_true, bad


def _check_geometry(
    gdf: gpd.GeoDataFrame, source: str, ids: pd.Series | None, problems: list[Problem], tolerance_sqft: float
) -> np.ndarray:
    """Refuse missing, empty and non-polygon geometry; repair invalid polygons in place by the one rule.

    Returns the boolean mask of repaired rows (:func:`check_polygons`: a repair that keeps the
    shape drawn is made; one that would not is a problem naming the row and where).
    """
    geoms = gdf.geometry.to_numpy()
    missing = shapely.is_missing(geoms) | shapely.is_empty(geoms)
    types = shapely.get_type_id(geoms)
    not_poly = ~missing & ~np.isin(types, _POLYGONAL)
    for i in np.flatnonzero(missing):
        problems.append(
            Problem(
                source,
                int(i) + 1,
                "has no geometry (null or empty).",
                "draw the polygon or delete the row.",
                _id(ids, int(i)),
            )
        )
    for i in np.flatnonzero(not_poly):
        kind = shapely.GeometryType(types[i]).name.title().replace("string", "String")
        fix = "give the area as a Polygon or MultiPolygon (buffer lines or points in your GIS first)."
        problems.append(Problem(source, int(i) + 1, f"is a {kind}, not a polygon.", fix, _id(ids, int(i))))
    repaired = np.zeros(len(geoms), bool)
    checks = check_polygons(np.where(missing | not_poly, None, geoms), gdf.crs, tolerance_sqft=tolerance_sqft)
    if checks:
        geoms = geoms.copy()
    for i, c in checks.items():
        if shapely.is_empty(c.geometry) or c.repaired_sqft == 0:
            problems.append(
                Problem(
                    source,
                    i + 1,
                    "is an invalid polygon with no area left after repair.",
                    "redraw it.",
                    _id(ids, i),
                )
            )
        elif c.refused:
            problems.append(Problem(source, i + 1, *c.problem(gdf.crs), _id(ids, i)))
        else:
            geoms[i] = c.geometry
            repaired[i] = True
    if checks:
        gdf[gdf.geometry.name] = geoms
    return repaired


def _id(ids: pd.Series | None, i: int) -> str | None:
    if ids is None:
        return None
    v = ids.iloc[i]
    return None if v is None else str(v)


def _site_ids(
    gdf: gpd.GeoDataFrame,
    field: str | None,
    field_map: dict[str, str],
    columns: list[str],
    source: str,
    numbers: np.ndarray,
    generate_ids: bool,
    problems: list[Problem],
) -> tuple[pd.Series | None, list[str]]:
    """Read the site ids, generating ``row:<n>`` for blank ones if asked; report missing and repeated ids."""
    from esc_gis.parcels import GENERATED_ID_PREFIX

    if field is None:
        fix = f"name the id field with id_field=NAME (fields: {', '.join(columns) or 'none'})."
        problems.append(Problem(source, None, f"has no id field {field_map.get('site_id', 'site_id')!r}.", fix))
        return None, []
    ids = _ids_as_str(gdf[field])
    blank = ids.isna().to_numpy()
    generated: list[str] = []
    if generate_ids and blank.any():
        generated = [f"{GENERATED_ID_PREFIX}{n}" for n in numbers[blank]]
        ids[blank] = generated
    for i in np.flatnonzero(ids.isna().to_numpy()):
        problems.append(Problem(source, int(i) + 1, f"has no {field!r}.", "give every site a unique id."))
    dup = ids.notna() & ids.duplicated(keep="first")
    fix = "ids must be unique; renumber one of them, use id_field=, or skip features that are not sites with skip_ids=."
    for i in np.flatnonzero(dup.to_numpy()):
        first = int(numbers[np.flatnonzero((ids == ids.iloc[i]).to_numpy())[0]])
        problems.append(
            Problem(source, int(i) + 1, f"repeats the id {ids.iloc[i]!r} (first at row {first}).", fix, None)
        )
    return ids, generated


def prepare_sites(
    gdf: gpd.GeoDataFrame,
    *,
    source: str,
    id_field: str = "site_id",
    field_map: dict[str, str] | None = None,
    rows: np.ndarray | None = None,
    generate_ids: bool = False,
    tolerance_sqft: float = 1.0,
) -> SiteTable:
    """Validate the sites layer and bring its attributes to the screening contract.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        Sites as read (0-based RangeIndex).
    source : str
        The file name, for messages.
    id_field : str, default "site_id"
        The field holding the unique site id.
    field_map : dict, optional
        Canonical field -> field in the file, e.g. ``{"activity": "LANDUSE"}``.
    rows : numpy.ndarray of int, optional
        Each row's 1-based feature number in the file (default ``1..n``): a layer read
        with a ``where`` clause, or with features skipped, keeps its file's numbering.
    generate_ids : bool, default False
        Give a row without an id the id ``row:<n>`` (its feature number) instead of
        reporting it: parcel layers as delivered have such rows.
    tolerance_sqft : float, default 1.0
        How far a repair may move a polygon's area (:func:`repair_tolerance_sqft`).

    Returns
    -------
    SiteTable
        The cleaned sites and every problem found (an empty list when all is well); rows
        in problems are feature numbers in the file.
    """
    from dataclasses import replace

    numbers = np.arange(1, len(gdf) + 1) if rows is None else np.asarray(rows, dtype=int)
    field_map = dict(field_map or {})
    if id_field != "site_id":
        field_map.setdefault("site_id", id_field)
    gdf = gdf.copy()
    problems: list[Problem] = []
    columns = [c for c in gdf.columns if c != gdf.geometry.name]
    for canonical, src in field_map.items():
        if canonical not in FIELD_ALIASES:
            msg = f"field_map={{{canonical!r}: {src!r}}}: {canonical!r} is not a field esc-gis reads."
            problems.append(Problem(source, None, msg, f"map one of {', '.join(FIELD_ALIASES)}."))
        elif src not in columns:
            problems.append(
                Problem(
                    source,
                    None,
                    f"field_map={{{canonical!r}: {src!r}}}: there is no field {src!r}.",
                    f"use one of {', '.join(columns) or '(no fields)'}.",
                )
            )
    found = {c: _find_field(columns, c, field_map) for c in FIELD_ALIASES}
    found = {c: (f if f in columns else None) for c, f in found.items()}

    ids, generated = _site_ids(gdf, found["site_id"], field_map, columns, source, numbers, generate_ids, problems)

    n = len(gdf)
    if found["activity"] is None:
        activity = pd.Series(["construction"] * n, dtype=object)
    else:
        raw = gdf[found["activity"]]
        activity = raw.astype(object).where(raw.notna(), "").astype(str).str.strip().str.lower()
        activity = activity.str.replace(" ", "_").str.replace("-", "_")
        activity[activity == ""] = "construction"
        for i in np.flatnonzero(~activity.isin(ACTIVITIES).to_numpy()):
            problems.append(
                Problem(
                    source,
                    int(i) + 1,
                    f"activity {raw.iloc[i]!r} is not known.",
                    f"use one of {', '.join(ACTIVITIES)} (or map the field that holds them with field_map=).",
                    _id(ids, int(i)),
                )
            )

    flags = {}
    for name in ("state_agency", "npdes_exempt"):
        if found[name] is None:
            flags[name] = np.zeros(n, bool)
            continue
        parsed, bad = _parse_bool(gdf[found[name]])
        flags[name] = parsed
        for i in np.flatnonzero(bad):
            msg = f"{found[name]} {gdf[found[name]].iloc[i]!r} is not true or false."
            problems.append(Problem(source, int(i) + 1, msg, "use true/false, yes/no or 1/0.", _id(ids, int(i))))

    repaired = _check_geometry(gdf, source, ids, problems, tolerance_sqft)
    plan = None if found["plan_id"] is None else _ids_as_str(gdf[found["plan_id"]])

    used = {f for f in found.values() if f is not None}
    keep = gdf[[c for c in gdf.columns if c not in used and c not in FIELD_ALIASES]]
    out = keep.assign(
        site_id=ids if ids is not None else pd.Series([None] * n, dtype=object),
        plan_id=plan if plan is not None else pd.Series([None] * n, dtype=object),
        activity=activity.to_numpy(),
        state_agency=flags["state_agency"],
        npdes_exempt=flags["npdes_exempt"],
        **{ROW_COLUMN: numbers, REPAIRED_COLUMN: repaired},
    )
    if rows is not None:  # problems were worded by position: give them the file's numbers
        problems = [p if p.row is None else replace(p, row=int(numbers[p.row - 1])) for p in problems]
    problems.sort(key=lambda p: p.row or 0)
    return SiteTable(out, problems, generated)


def prepare_disturbed(
    gdf: gpd.GeoDataFrame,
    *,
    source: str,
    site_ids: pd.Series,
    id_field: str = "site_id",
    tolerance_sqft: float = 1.0,
) -> SiteTable:
    """Validate disturbed-limit polygons: each carries the id of a site in the sites layer.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        Disturbed limits as read.
    source : str
        The file name, for messages.
    site_ids : pandas.Series
        The valid site ids.
    id_field : str, default "site_id"
        The id field (``site_id`` is tried too).
    tolerance_sqft : float, default 1.0
        How far a repair may move a polygon's area (:func:`repair_tolerance_sqft`).

    Returns
    -------
    SiteTable
        Columns ``site_id``, :data:`ROW_COLUMN`, :data:`REPAIRED_COLUMN` and the geometry, with every problem.
    """
    gdf = gdf.copy()
    problems: list[Problem] = []
    columns = [c for c in gdf.columns if c != gdf.geometry.name]
    field = next((f for name in (id_field, "site_id") if (f := _find_field(columns, name, {})) is not None), None)
    ids = None
    if field is None:
        problems.append(
            Problem(
                source,
                None,
                f"has no {id_field!r} field saying which site each polygon belongs to.",
                f"add it (fields: {', '.join(columns) or 'none'}).",
            )
        )
    else:
        ids = _ids_as_str(gdf[field])
        known = set(site_ids.dropna())
        unknown = ids.notna() & ~ids.isin(known)
        for i in np.flatnonzero(ids.isna().to_numpy()):
            problems.append(Problem(source, int(i) + 1, f"has no {field!r}.", "say which site the polygon belongs to."))
        for i in np.flatnonzero(unknown.to_numpy()):
            problems.append(
                Problem(
                    source,
                    int(i) + 1,
                    f"{field} {ids.iloc[i]!r} is not a site in the sites layer.",
                    "fix the id, or add the site.",
                )
            )
    repaired = _check_geometry(gdf, source, ids, problems, tolerance_sqft)
    n = len(gdf)
    out = gdf[[gdf.geometry.name]].assign(
        site_id=ids if ids is not None else pd.Series([None] * n, dtype=object),
        **{ROW_COLUMN: np.arange(1, n + 1), REPAIRED_COLUMN: repaired},
    )
    problems.sort(key=lambda p: p.row or 0)
    return SiteTable(out, problems)


def read_flags(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Read a yes/no column as booleans: (flag, unreadable); missing values are False.

    Shapefiles and CSVs carry flags as text or numbers, GeoPackages as integers, so the
    usual spellings are all accepted (as for the sites' ``state_agency``).

    Parameters
    ----------
    values : pandas.Series

    Returns
    -------
    flag, unreadable : numpy.ndarray of bool

    Examples
    --------
    >>> import pandas as pd
    >>> flag, bad = read_flags(pd.Series(["yes", "N", None, 1, "maybe"]))
    >>> flag.tolist(), bad.tolist()
    ([True, False, False, True, False], [False, False, False, False, True])
    """
    return _parse_bool(values)


#: ``class_map`` value that drops a source code (a feature that is not a water of the state).
IGNORE_CLASS = "ignore"
_LINEAL = (shapely.GeometryType.LINESTRING, shapely.GeometryType.MULTILINESTRING)


def _water_columns(
    gdf: gpd.GeoDataFrame,
    source: str,
    class_field: str,
    name_field: str | None,
    channel_width_field: str | None,
    piped_field: str,
    drainage_field: str,
) -> tuple[str | None, str | None]:
    """Check that the configured columns exist; return the piped and drainage columns to read.

    Raises
    ------
    LayerSetError
        If a configured column is missing.
    """
    # The default flag columns are optional: a layer without them has no piped streams and
    # no drainage areas. A name the user chose must exist, or a typo would go unnoticed.
    piped_col = piped_field if piped_field in gdf.columns or piped_field != PIPED_FIELD else None
    drainage_col = drainage_field if drainage_field in gdf.columns or drainage_field != DRAINAGE_FIELD else None
    for what, col in (
        ("class_field", class_field),
        ("name_field", name_field),
        ("channel_width_field", channel_width_field),
        ("piped_field", piped_col),
        ("drainage_field", drainage_col),
    ):
        if col is not None and col not in gdf.columns:
            have = ", ".join(str(c) for c in gdf.columns if c != gdf.geometry.name)
            msg = f"{source}: no field {col!r} for {what}; the layer has {have}."
            raise LayerSetError(msg)
    return piped_col, drainage_col


def prepare_waters(
    gdf: gpd.GeoDataFrame,
    source: str,
    *,
    allowed_classes: list[str],
    class_field: str = "water_class",
    name_field: str | None = None,
    channel_width_field: str | None = None,
    piped_field: str = PIPED_FIELD,
    drainage_field: str = DRAINAGE_FIELD,
    class_map: dict[str, str] | None = None,
) -> tuple[gpd.GeoDataFrame, list[Problem]]:
    """Check a waters layer and give it the canonical water-class columns.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        Waters of the state: polygons (lakes, wetlands, channels as drawn) or lines (stream
        centrelines).
    source : str
        Name of the layer in messages.
    allowed_classes : list of str
        The profile's water classes.
    class_field : str, default "water_class"
        Column holding each feature's class, or the source's own code when ``class_map``
        is given.
    name_field : str, optional
        Column holding the water's name.
    channel_width_field : str, optional
        Column holding a line's channel width in feet: the line is then taken as the
        channel's centre, the channel (width / 2 either side) as water, and the protective
        area measured from its banks.
    piped_field : str, default "piped"
        Column flagging a stream enclosed in a pipe or culvert (true/false, yes/no, 1/0;
        empty is false). Such a water has no protective area (NR 151.125(2)) and its
        channel is not counted as water under a site, but it stays a water for the
        distance to the nearest water. The default name is used only when the layer has
        that column; another name must exist.
    drainage_field : str, default "drainage_acres"
        Column holding the acres a channel drains. A class whose profile entry has
        ``min_drainage_acres`` (the concentrated-flow channel) gets its strip only above
        that area. Used only when present, as ``piped_field``.
    class_map : dict of str to str, optional
        Source codes to water classes (``"ignore"`` drops the code's features). Codes not
        in the map must already be water classes.

    Returns
    -------
    waters : geopandas.GeoDataFrame
        Columns ``water_class``, ``water_name`` (str or None), ``channel_width_ft`` (float,
        NaN when not given), ``piped`` (bool), ``drainage_acres`` (float, NaN when not
        given), ``source_code``, ``row`` (1-based feature number) and the geometry; ignored
        and bad rows are dropped.
    problems : list of Problem
        Every bad row and every bad ``class_map`` entry.

    Raises
    ------
    LayerSetError
        If ``class_field``, ``name_field``, ``channel_width_field`` or a non-default
        ``piped_field`` / ``drainage_field`` is not a column (a configuration error, not a
        bad row).
    """
    piped_col, drainage_col = _water_columns(
        gdf, source, class_field, name_field, channel_width_field, piped_field, drainage_field
    )
    problems: list[Problem] = []
    allowed = list(allowed_classes)
    mapping = dict(class_map or {})
    for code, cls in mapping.items():
        if cls not in allowed and cls != IGNORE_CLASS:
            problems.append(
                Problem(
                    source,
                    None,
                    f"class_map maps {code!r} to {cls!r}, which is not a water class.",
                    f"map it to one of {', '.join(allowed)}, or to {IGNORE_CLASS!r}.",
                )
            )
    raw = gdf[class_field]
    code = raw.astype(object).where(raw.notna(), "").astype(str).str.strip()
    # Integer codes read as floats (shapefiles) would otherwise not match "46600".
    code = code.str.replace(r"^(-?\d+)\.0$", r"\1", regex=True)
    cls = code.map(lambda c: mapping.get(c, c)).to_numpy(dtype=object)
    bad = ~np.isin(cls, [*allowed, IGNORE_CLASS])
    for i in np.flatnonzero(bad):
        what = f"{class_field} {code.iloc[i]!r} is not a water class" + (" and not in class_map." if mapping else ".")
        fix = f"use one of {', '.join(allowed)}" + ("" if mapping else ", or map the layer's codes with class_map")
        problems.append(Problem(source, int(i) + 1, what, fix + "."))

    geoms = gdf.geometry.to_numpy().copy()
    missing = shapely.is_missing(geoms) | shapely.is_empty(geoms)
    types = shapely.get_type_id(geoms)
    areal, lineal = np.isin(types, _POLYGONAL), np.isin(types, _LINEAL)
    for i in np.flatnonzero(missing):
        problems.append(Problem(source, int(i) + 1, "has no geometry (null or empty).", "draw it or delete the row."))
    for i in np.flatnonzero(~missing & ~areal & ~lineal):
        kind = shapely.GeometryType(types[i]).name.title()
        problems.append(
            Problem(
                source,
                int(i) + 1,
                f"is a {kind}; waters must be polygons or lines.",
                "draw the water's outline (or a stream's centreline).",
            )
        )
    for i in np.flatnonzero(lineal & (cls == "wetland_less_susceptible")):
        what = (
            "is a less susceptible wetland drawn as a line: its protective width (10 % of the average "
            "wetland width) needs the delineated polygon."
        )
        problems.append(Problem(source, int(i) + 1, what, "give the wetland's boundary polygon."))

    width = np.full(len(gdf), np.nan)
    if channel_width_field is not None:
        width = np.array(pd.to_numeric(gdf[channel_width_field], errors="coerce"), dtype=float)
        given = gdf[channel_width_field].notna().to_numpy()
        for i in np.flatnonzero(given & ~(width > 0)):
            what = f"{channel_width_field} {gdf[channel_width_field].iloc[i]!r} is not a width in feet."
            problems.append(Problem(source, int(i) + 1, what, "give a positive number of feet, or leave it empty."))
        width[~lineal] = np.nan  # a polygon is drawn at its banks already
    piped = np.zeros(len(gdf), bool)
    if piped_col is not None:
        piped, bad_flag = read_flags(gdf[piped_col])
        for i in np.flatnonzero(bad_flag):
            what = f"{piped_col} {gdf[piped_col].iloc[i]!r} is not true or false."
            problems.append(Problem(source, int(i) + 1, what, "give true/false, yes/no or 1/0, or leave it empty."))
    drainage = np.full(len(gdf), np.nan)
    if drainage_col is not None:
        drainage = np.array(pd.to_numeric(gdf[drainage_col], errors="coerce"), dtype=float)
        given = gdf[drainage_col].notna().to_numpy()
        for i in np.flatnonzero(given & ~(drainage >= 0)):
            what = f"{drainage_col} {gdf[drainage_col].iloc[i]!r} is not a drainage area in acres."
            problems.append(Problem(source, int(i) + 1, what, "give a number of acres (0 or more), or leave it empty."))
    invalid = areal & ~missing & ~shapely.is_valid(geoms)
    if invalid.any():
        geoms[invalid] = shapely.make_valid(geoms[invalid], method="structure", keep_collapsed=False)

    names = (
        gdf[name_field].astype(object).where(gdf[name_field].notna(), None).to_numpy(dtype=object)
        if name_field
        else np.full(len(gdf), None, dtype=object)
    )
    keep = ~bad & ~missing & (areal | lineal) & (cls != IGNORE_CLASS)
    waters = gpd.GeoDataFrame(
        {
            "water_class": cls[keep],
            "water_name": names[keep],
            "channel_width_ft": width[keep],
            "piped": piped[keep],
            "drainage_acres": drainage[keep],
            "source_code": code.to_numpy(dtype=object)[keep],
            "row": np.flatnonzero(keep) + 1,
        },
        geometry=geoms[keep],
        crs=gdf.crs,
    )
    problems.sort(key=lambda p: p.row or 0)
    return waters, problems
