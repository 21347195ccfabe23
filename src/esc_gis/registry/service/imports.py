"""Permits from a layer (a spreadsheet joined to a GIS export): every bad row reported at once.

The layer has one feature per permit, its geometry the site boundary, and the columns of
:data:`IMPORT_COLUMNS` (only ``site_address`` and ``received_on`` are required). Parties
come from ``landowner_*`` and ``responsible_*`` columns. Disturbed limits may come from a
second layer keyed by ``permit_number`` or by another id of the layer (``disturbed_id``, e.g. a
screening's ``site_id``), its polygons of one key taken together as screening takes them; a
screening output carries the limits it measured (``disturbed_limits``, EWKT), taken for a row
the second layer has none for. A permit with no limits counts its whole site.

A layer with other column names (a screening output, a county export) is read through a field
map (``--field site_address=ADDRESS``), and a day given once (``--received-on``) stands for
every row without its own ``received_on``: a screening has neither an address nor the day an
application came in. :func:`pick_site` reads the one site of such a layer for ``permits add``.
"""

from __future__ import annotations

__all__ = [
    "IMPORT_COLUMNS",
    "KNOWN_FIELDS",
    "SCREENED_LIMITS",
    "SCREENING_COLUMNS",
    "applications_from_frame",
    "parcel_column",
    "pick_site",
    "plan_mates",
    "screened_limits",
    "screened_site",
    "screening_differences",
]

import difflib
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import date
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS
from pyproj.exceptions import CRSError

from esc_gis.errors import LayerReadError, Problem, ValidationError
from esc_gis.registry.domain.records import Application, Party, parse_date, parse_datetime
from esc_gis.validate import read_flags

#: Column -> what it holds.
IMPORT_COLUMNS = {
    "permit_number": "optional; default the next number in the profile's pattern",
    "parcel_id": "the parcel's id (e.g. the statewide parcel PARCELID)",
    "site_address": "required",
    "legal_description": "optional",
    "plan_id": "optional; the common plan of development or sale the site is part of",
    "activity": "optional: construction (default), agricultural_activity, agricultural_production, silviculture",
    "state_agency": "optional, true/false: conducted by a state agency (refused: the article does not apply)",
    "npdes_exempt": "optional, true/false: exempt by federal law from an NPDES permit",
    "received_on": "required, YYYY-MM-DD",
    "building_permit_expires": "optional, YYYY-MM-DD",
    "status": "optional, default application_received",
    "issued_on": "required for issued states, YYYY-MM-DD",
    "started_at": "required for active states, YYYY-MM-DDTHH:MM",
    "start_notice_at": "optional, when the notice of start arrived, YYYY-MM-DDTHH:MM",
}
_PARTY_PREFIX = {"landowner": "landowner", "responsible": "responsible_party"}
_PARTY_FIELDS = ("name", "organization", "phone", "email", "address")
#: Every column an import reads: the permit's and the parties'.
KNOWN_FIELDS = (*IMPORT_COLUMNS, *(f"{prefix}_{f}" for prefix in _PARTY_PREFIX for f in _PARTY_FIELDS))
#: How to give a required column a layer lacks.
_REQUIRED_FIX = {
    "site_address": 'map the column that holds it with fields={"site_address": "COLUMN"}',
    "received_on": "give the day the applications came in with received_on=YYYY-MM-DD, or map the "
    'column that holds it with fields={"received_on": "COLUMN"}',
}


#: Columns that make a layer a screening output, whose measurements a permit is compared with.
SCREENING_COLUMNS = frozenset({"disturbed_sqft", "applicability", "permit"})
#: The screening output's column of the disturbed limits it measured (:data:`esc_gis.screening.OPTIONAL_COLUMNS`).
SCREENED_LIMITS = "disturbed_limits"


def screened_limits(value: Any, crs: Any, to_crs: Any) -> Any:
    """Read a screening's ``disturbed_limits`` value (EWKT ``SRID=<epsg>;<WKT>``) in ``to_crs``.

    Parameters
    ----------
    value : str or None
        The cell; empty (None, NaN, '') when the screening measured no limits for the site.
    crs : Any
        The CRS of WKT without ``SRID=`` (the layer's own).
    to_crs : Any
        The CRS to return the geometry in (the layer's, which the application carries).

    Returns
    -------
    shapely geometry or None

    Raises
    ------
    ValueError
        If the text is not (E)WKT or its SRID is not an EPSG code.
    """
    text = _text(value)
    if text is None:
        return None
    if text[:5].upper() == "SRID=":
        head, _, text = text.partition(";")
        try:
            crs = CRS.from_epsg(int(head[5:]))
        except (ValueError, CRSError) as exc:  # int('x'); an unknown code
            raise ValueError(f"{head!r} is not an EPSG code") from exc
    try:
        geom = shapely.from_wkt(text)
    except shapely.errors.GEOSException as exc:
        raise ValueError(f"not WKT ({exc})") from exc
    if crs is not None and to_crs is not None and not CRS.from_user_input(crs).equals(CRS.from_user_input(to_crs)):
        geom = gpd.GeoSeries([geom], crs=crs).to_crs(to_crs).iloc[0]
    return geom


def _text(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    s = str(v).strip()
    return s or None


def _limits_by_key(
    disturbed: gpd.GeoDataFrame | None,
    key: str,
    disturbed_id: str | None,
    frame: gpd.GeoDataFrame,
    source: str,
    layer_cols: Mapping[str, str],
    problems: list[Problem],
) -> dict[str, Any]:
    """Return the disturbed limits by ``key`` (in ``frame``'s CRS), adding a problem if they cannot be keyed."""
    limits: dict[str, Any] = {}
    if disturbed is None:
        return limits
    if key not in disturbed.columns:
        also = "." if disturbed_id else ", or name the column that keys them with disturbed_id=FIELD."
        problems.append(
            Problem(
                "disturbed limits", None, f"has no {key} column.", f"key each polygon by the {key} of its row{also}"
            )
        )
    elif disturbed_id and disturbed_id.lower() not in layer_cols:
        problems.append(
            Problem(
                source,
                None,
                f"has no {disturbed_id} column to match the disturbed limits by.",
                f"name a column of both layers as disturbed_id= (its columns: {', '.join(layer_cols.values())}).",
            )
        )
    else:
        d = disturbed.to_crs(frame.crs) if disturbed.crs is not None and frame.crs is not None else disturbed
        # A site's several polygons are taken together, as screening takes them (§ 540-5: overlaps once).
        keys = d[key].map(_text)
        for k, geoms in d.geometry.groupby(keys.to_numpy(), sort=False):
            limits[str(k)] = shapely.union_all(geoms.to_numpy()) if len(geoms) > 1 else geoms.iloc[0]
    return limits


def parcel_column(layer_cols: Mapping[str, str]) -> str | None:
    """Return the layer's column that holds each site's parcel id, or None (issue 46).

    ``parcel_id`` itself; else a Wisconsin V10 parcel layer's ``PARCELID`` (a screening of a V10
    layer keeps it among the layer's own fields when another field was its id); else, in a
    screening output of a V10 parcel layer (its other V10 fields kept, ``PARCELID`` gone), the
    ``site_id``: the screening took ``PARCELID`` as the site id (its default for that schema, or
    ``--id-field PARCELID``). ``layer_cols`` maps lower-case names to the layer's.

    Examples
    --------
    >>> parcel_column({"parcel_id": "parcel_id", "site_id": "site_id"})
    'parcel_id'
    >>> v10 = ["STATEID", "TAXPARCELID", "SITEADRESS", "CONAME", "PARCELFIPS"]
    >>> parcel_column({c.lower(): c for c in [*v10, "site_id", "disturbed_sqft", "applicability", "permit"]})
    'site_id'
    >>> parcel_column({"site_id": "site_id", "disturbed_sqft": "disturbed_sqft"}) is None
    True
    """
    from esc_gis.parcels import V10_ID_FIELD, detect_schema

    if "parcel_id" in layer_cols:
        return layer_cols["parcel_id"]
    if V10_ID_FIELD.lower() in layer_cols:
        return layer_cols[V10_ID_FIELD.lower()]
    if (
        "site_id" in layer_cols
        and SCREENING_COLUMNS <= set(layer_cols)
        and detect_schema([*layer_cols.values(), V10_ID_FIELD]) == "v10"
    ):
        return layer_cols["site_id"]
    return None


def _screening_facts(
    get: Callable[[str], Any],
    layer_cols: Mapping[str, str],
    crs: Any,
    bad: Callable[[str, str], Any],
    *,
    limit: Any = None,
) -> dict[str, Any]:
    """Read what a screening row carries for intake: flags, the limits it measured, its area.

    ``state_agency`` and ``npdes_exempt`` in any usual spelling (true/false, yes/no, 1/0);
    the limits from ``disturbed_limits`` unless ``limit`` (from a limits layer) is given; the
    screening's ``disturbed_sqft`` only from a screening output (one that has ``applicability``:
    another layer's area column is not a measurement of the registry's).
    """
    facts: dict[str, Any] = {}
    for name in ("state_agency", "npdes_exempt"):
        flag, unreadable = read_flags(pd.Series([get(name)], dtype=object))
        facts[name] = bool(flag[0])
        if unreadable[0]:
            bad(f"{name} {get(name)!r} is not true or false.", "use true/false, yes/no or 1/0.")
    if limit is None and SCREENED_LIMITS in layer_cols:
        try:
            limit = screened_limits(get(SCREENED_LIMITS), crs, crs)
        except ValueError as exc:
            bad(f"{SCREENED_LIMITS} is not readable: {exc}.", "write the screening again (esc-gis screen -o).")
    facts["disturbed"] = limit
    sqft = None
    if SCREENING_COLUMNS <= set(layer_cols):
        sqft = pd.to_numeric(pd.Series([get("disturbed_sqft")]), errors="coerce").iloc[0]
    facts["screened_disturbed_sqft"] = float(sqft) if sqft is not None and pd.notna(sqft) else None
    return facts


def screened_site(one: gpd.GeoDataFrame, source: str) -> dict[str, Any]:
    """Return what intake takes from the one screening row ``one`` (``permits add --site-layer``).

    Returns
    -------
    dict
        ``plan_id``, ``activity`` (None when empty), ``state_agency``, ``npdes_exempt``,
        ``disturbed`` (the limits the screening measured, in ``one``'s CRS, or None) and
        ``screened_disturbed_sqft``.

    Raises
    ------
    ValidationError
        If a flag or the limits cannot be read, naming the column and the fix.
    """
    cols = {c.lower(): c for c in one.columns if c != one.geometry.name}
    row = one.iloc[0]
    problems: list[Problem] = []

    def get(name: str) -> Any:
        return row[cols[name]] if name in cols else None

    def bad(message: str, fix: str) -> None:
        problems.append(Problem(source, int(one.index[0]) + 1, message, fix))

    facts = _screening_facts(get, cols, one.crs, bad)
    if problems:
        raise ValidationError(problems)
    parcel = parcel_column(cols)
    return {
        "plan_id": _text(get("plan_id")),
        "activity": _text(get("activity")),
        "parcel_id": _text(row[parcel]) if parcel is not None else None,
        **facts,
    }


def _dates(get: Callable[[str], Any], bad: Callable[[str, str], Any]) -> dict[str, Any]:
    """Parse one row's dates and times, reporting each bad one."""
    fields: dict[str, Any] = {}
    for name in ("received_on", "building_permit_expires", "issued_on"):
        fields[name], err = parse_date(get(name), name)
        if err:
            bad(err, "write dates as YYYY-MM-DD.")
    for name in ("started_at", "start_notice_at"):
        fields[name], err = parse_datetime(get(name), name, as_typed=True)
        if err:
            bad(err, "write it as YYYY-MM-DDTHH:MM.")
    return fields


def _parties(get: Callable[[str], Any]) -> list[Party]:
    """Read one row's landowner and responsible parties."""
    parties = []
    for prefix, role in _PARTY_PREFIX.items():
        values = {f: _text(get(f"{prefix}_{f}")) for f in _PARTY_FIELDS}
        if any(values.values()):
            parties.append(Party(role, values["name"] or "", **{k: values[k] for k in _PARTY_FIELDS[1:]}))
    return parties


def _field_map(
    fields: Mapping[str, str], layer_cols: Mapping[str, str], source: str
) -> tuple[dict[str, str], list[Problem]]:
    """Check ``fields`` items (``NAME: COLUMN``); return NAME -> the layer's column, and every problem."""
    mapped: dict[str, str] = {}
    problems: list[Problem] = []
    for name, column in fields.items():
        item = f"fields={{{name!r}: {column!r}}}"
        key = name.strip().lower()
        if key not in KNOWN_FIELDS:
            near = difflib.get_close_matches(key, KNOWN_FIELDS, n=1)
            hint = f" Did you mean {near[0]!r}?" if near else ""
            problems.append(
                Problem(
                    item, None, f"{name!r} is not an import column.", f"use one of {', '.join(KNOWN_FIELDS)}.{hint}"
                )
            )
        elif column.strip().lower() not in layer_cols:
            near = difflib.get_close_matches(column.strip().lower(), list(layer_cols), n=1)
            hint = f" Did you mean {layer_cols[near[0]]!r}?" if near else ""
            problems.append(
                Problem(
                    item,
                    None,
                    f"{source} has no column {column!r}.",
                    f"name one of its columns: {', '.join(layer_cols.values())}.{hint}",
                )
            )
        else:
            mapped[key] = layer_cols[column.strip().lower()]
    return mapped, problems


def applications_from_frame(
    frame: gpd.GeoDataFrame,
    *,
    source: str,
    disturbed: gpd.GeoDataFrame | None = None,
    fields: Mapping[str, str] | None = None,
    received_on: date | None = None,
    disturbed_id: str | None = None,
) -> tuple[list[Application], list[Problem]]:
    """Turn a layer's rows into applications; return them with every problem found.

    Parameters
    ----------
    frame : geopandas.GeoDataFrame
        One row per permit (see :data:`IMPORT_COLUMNS`), with a CRS.
    source : str
        The file's name, for messages.
    disturbed : geopandas.GeoDataFrame, optional
        Disturbed limits with a ``permit_number`` column (or ``disturbed_id``'s).
    fields : mapping of str to str, optional
        Import column (:data:`KNOWN_FIELDS`) -> the layer's column holding it (any case); it
        wins over a layer column of the import column's own name.
    received_on : date, optional
        The day for every row without its own ``received_on`` (no such column, or an empty cell).
    disturbed_id : str, optional
        The column of both the layer and ``disturbed`` that keys the limits (``site_id`` of a
        screening output); default ``permit_number``.

    Returns
    -------
    applications : list of Application
        Complete only when ``problems`` is empty.
    problems : list of Problem
    """
    problems: list[Problem] = []
    layer_cols = {c.lower(): c for c in frame.columns if c != frame.geometry.name}
    mapped, problems = _field_map(fields or {}, layer_cols, source)
    cols = {**layer_cols, **mapped}
    if frame.crs is None:
        problems.append(Problem(source, None, "has no CRS.", 'set it in the file, or pass assume_crs="EPSG:XXXX".'))
    asked = {k.strip().lower() for k in fields or {}}  # a mapping refused above is reported once
    for need in ("site_address", "received_on"):
        if need not in cols and need not in asked and not (need == "received_on" and received_on is not None):
            problems.append(
                Problem(
                    source,
                    None,
                    f"has no {need} column.",
                    f"{_REQUIRED_FIX[need]} (its columns: {', '.join(layer_cols.values())}).",
                )
            )
    if problems:
        return [], problems
    key = disturbed_id or "permit_number"
    # The parcel id: a mapped or parcel_id column, else the one a parcel layer's screening carries.
    parcel = None if "parcel_id" in cols else parcel_column(layer_cols)
    limits = _limits_by_key(disturbed, key, disturbed_id, frame, source, layer_cols, problems)
    own_key = cols.get("permit_number") if not disturbed_id else layer_cols.get(disturbed_id.lower())
    apps = []
    for i, (row, geom) in enumerate(zip(frame.to_dict("records"), frame.geometry, strict=True), start=1):

        def get(name: str, row: dict[str, Any] = row) -> Any:
            value = row.get(cols[name]) if name in cols else None
            if name == "received_on" and received_on is not None and _text(value) is None:
                return received_on  # the day given once, for a row without its own
            return value

        number = _text(get("permit_number"))

        def bad(err: str, fix: str, i: int = i, number: str | None = number) -> None:
            problems.append(Problem(source, i, err, fix, number))

        fields = _dates(get, bad)
        parties = _parties(get)
        own = _text(row.get(own_key)) if own_key else None
        facts = _screening_facts(get, layer_cols, frame.crs, bad, limit=limits.get(own) if own is not None else None)
        apps.append(
            Application(
                site_address=_text(get("site_address")) or "",
                received_on=fields["received_on"],
                site=geom,
                crs=frame.crs,
                disturbed=facts["disturbed"],
                permit_number=number,
                parcel_id=_text(get("parcel_id")) if parcel is None else _text(row.get(parcel)),
                legal_description=_text(get("legal_description")),
                building_permit_expires=fields["building_permit_expires"],
                parties=tuple(parties),
                status=_text(get("status")) or "application_received",
                issued_on=fields["issued_on"],
                started_at=fields["started_at"],
                start_notice_at=fields["start_notice_at"],
                plan_id=_text(get("plan_id")),
                activity=_text(get("activity")),
                state_agency=facts["state_agency"],
                npdes_exempt=facts["npdes_exempt"],
                screened_disturbed_sqft=facts["screened_disturbed_sqft"],
            )
        )
    if disturbed is not None and not problems:
        _warn_unmeasured(apps, key, [_text(r.get(own_key)) if own_key else None for r in frame.to_dict("records")])
    if disturbed is not None and limits:
        known = {_text(r.get(own_key)) for r in frame.to_dict("records")} if own_key else set()
        for k in sorted(set(limits) - known):
            problems.append(
                Problem(
                    "disturbed limits",
                    None,
                    f"{key} {k!r} matches no row of {source}.",
                    "fix the id, or add the permit's row.",
                )
            )
    return apps, problems


def _warn_unmeasured(apps: Sequence[Application], key: str, keys: Sequence[str | None]) -> None:
    """Warn, naming them, of the rows the limits layer has no polygon for: each is decided on its whole site.

    The screening's one rule for a site missing from the limits (issue 46; ``esc-gis screen
    --disturbed`` warns in the same words), so the registry and the screening agree.
    """
    import warnings

    from esc_gis.errors import EscGisWarning

    missing = [k or f"row {i}" for i, (a, k) in enumerate(zip(apps, keys, strict=True), start=1) if a.disturbed is None]
    if not missing:
        return
    shown = ", ".join(missing[:10]) + (f", ... ({len(missing)} in all)" if len(missing) > 10 else "")
    warnings.warn(
        f"The disturbed limits have no polygon for {len(missing)} row(s) by {key}: {shown}. Each is decided on "
        "its whole site as disturbed (the default without limits). Fix: add their limits, or import them "
        "without disturbed= if the whole site is meant.",
        EscGisWarning,
        stacklevel=3,
    )


def plan_mates(frame: gpd.GeoDataFrame, plans: Collection[str]) -> list[Application]:
    """Return the rows of ``frame`` on one of ``plans``, as applications measured but never added.

    They are the rest of a screening a site (or some sites) came from: its plan-mates, with
    the limits the screening measured (``disturbed_limits``), activity and flags, so the
    registry adds the common plan up as the screening did (:meth:`Intake.add_many`'s
    ``context``). Rows whose values cannot be read are left out: they were read by the
    screening that wrote them, and a plan-mate is not what is being added.
    """
    cols = {c.lower(): c for c in frame.columns if c != frame.geometry.name}
    if "plan_id" not in cols or not plans:
        return []
    wanted = {str(p) for p in plans}
    out = []
    for row, geom in zip(frame.to_dict("records"), frame.geometry, strict=True):
        plan = _text(row.get(cols["plan_id"]))
        if plan not in wanted:
            continue

        def get(name: str, row: dict[str, Any] = row) -> Any:
            return row.get(cols[name]) if name in cols else None

        facts = _screening_facts(get, cols, frame.crs, lambda message, fix: None)
        activity = _text(row.get(cols["activity"])) if "activity" in cols else None
        out.append(
            Application(
                "",
                None,
                geom,
                frame.crs,
                disturbed=facts["disturbed"],
                plan_id=plan,
                activity=activity,
                state_agency=facts["state_agency"],
                npdes_exempt=facts["npdes_exempt"],
            )
        )
    return out


def screening_differences(
    screened: gpd.GeoDataFrame, permits: Sequence[Any], *, id_field: str = "site_id"
) -> list[str]:
    """Say, for each permit, how it differs from the screening row it was made from (issue 34).

    Parameters
    ----------
    screened : geopandas.GeoDataFrame
        The screening rows, in the order of ``permits`` (a screening output has
        ``disturbed_sqft``, ``permit`` and ``applicability``; another layer gives nothing).
    permits : sequence of Permit
        The permits made from them.
    id_field : str, default "site_id"

    Returns
    -------
    list of str
        One line per difference: a permit measured on another area (on its whole site while
        the screening measured limits), or decided otherwise (its common plan added up
        otherwise). Empty when every permit agrees with its screening.
    """
    from esc_gis.registry.service.intake import screening_differs

    cols = {c.lower(): c for c in screened.columns if c != screened.geometry.name}
    if not SCREENING_COLUMNS <= set(cols):
        return []
    lines = []
    for row, p in zip(screened.to_dict("records"), permits, strict=True):
        site = _text(row.get(cols.get(id_field, ""))) if id_field in cols else None
        who = f"{p.permit_number}" + (f" ({id_field} {site})" if site else "")
        sqft = pd.to_numeric(pd.Series([row.get(cols["disturbed_sqft"])]), errors="coerce").iloc[0]
        if screening_differs(None if pd.isna(sqft) else float(sqft), p.disturbed_sqft):
            whole = " (its whole site)" if not screening_differs(p.site_sqft, p.disturbed_sqft) else ""
            lines.append(
                f"{who} is measured on {p.disturbed_sqft:,.0f} sq ft{whole} where its screening measured "
                f"{sqft:,.0f} sq ft of disturbed limits: give the limits the screening measured "
                "(disturbed=LIMITS, or a screening output written with its disturbed_limits column)."
            )
        decided = _text(row.get(cols["permit"]))
        if decided is not None and decided != p.permit_decision:
            lines.append(
                f"{who} is decided permit {p.permit_decision} where its screening decided {decided}: "
                "check its common plan's other sites and its disturbed limits."
            )
    return lines


def pick_site(
    path: str | os.PathLike[str],
    *,
    site_id: str | None = None,
    where: str | None = None,
    layer: str | None = None,
    id_field: str = "site_id",
) -> gpd.GeoDataFrame:
    """Read the one site of a layer of many (a screening output) that ``site_id`` and ``where`` pick.

    Parameters
    ----------
    path : str or PathLike
        Any layer GDAL reads; a screening output (``esc-gis screen -o``) has ``site_id``.
    site_id : str, optional
        The value of ``id_field`` of the site, compared as text.
    where : str, optional
        An OGR SQL ``WHERE`` clause (``"parcel_id = '0123'"``); with ``site_id``, both must hold.
    layer : str, optional
        The layer of a multi-layer source.
    id_field : str, default "site_id"

    Returns
    -------
    geopandas.GeoDataFrame
        One row, indexed by its 0-based feature number in the file, with its CRS as read.

    Raises
    ------
    ValidationError
        If neither is given, the layer has no ``id_field``, or they pick no feature or several
        (naming the ids picked, or the nearest id).
    LayerReadError
        If the file cannot be read or the ``where`` clause is not valid.
    """
    from esc_gis.io import feature_numbers, read_layer

    source = str(path)

    def refuse(message: str, fix: str) -> ValidationError:
        return ValidationError([Problem(source, None, message, fix)])

    if site_id is None and where is None:
        raise refuse("has no site picked.", "give site_id=ID (the screening's site_id) or where=SQL.")
    frame = read_layer(path, layer=layer)  # the whole layer: a screening output is small
    if where is not None:
        try:
            numbers, _ = feature_numbers(path, layer=layer, where=where)
        except LayerReadError:
            read_layer(path, layer=layer, where=where)  # says why the clause is refused, if it is
            raise
        frame = frame.iloc[numbers - 1]
    by = f"where={where!r}" if where is not None else ""
    if site_id is not None:
        if id_field not in frame.columns:
            columns = ", ".join(c for c in frame.columns if c != frame.geometry.name)
            raise refuse(
                f"has no {id_field} column (columns: {columns}).",
                "give the file `esc-gis screen` wrote, or pick the site with where=SQL.",
            )
        ids = frame[id_field].astype(str).str.strip()
        typed = str(site_id).strip()
        picked = frame[ids.to_numpy() == typed]
        among = f"the {len(frame)} feature(s) {by} picks" if by else f"its {len(frame)} feature(s)"
        by = f"site_id={site_id!r}" + (f" with {by}" if by else "")
        if picked.empty:
            # An id typed in another case ('s07' for 'S07') is named; others are not guessed at.
            same = [i for i in dict.fromkeys(ids) if i.lower() == typed.lower()]
            hint = f" Did you mean {same[0]!r}?" if same else ""
            raise refuse(
                f"site_id={site_id!r} matches none of {among}.",
                f"check the id ({id_field} holds {_some(ids)}).{hint}",
            )
        frame = picked
    if frame.empty:
        raise refuse(f"{by} matches no feature.", "check the clause's field names and values.")
    if len(frame) > 1:
        rows = ", ".join(str(i + 1) for i in frame.index[:10])
        named = f" ({id_field} {_some(frame[id_field].astype(str))})" if id_field in frame.columns else ""
        raise refuse(
            f"{by} matches {len(frame)} features (rows {rows}{', ...' if len(frame) > 10 else ''}){named}; "
            "one site is expected.",
            "narrow it to the one site (where=SQL, or site_id= and where= together).",
        )
    return frame


def _some(values: Any, n: int = 5) -> str:
    """Name up to ``n`` distinct values: ``S01, S02, S03, ... (21 in all)``."""
    found = list(dict.fromkeys(str(v) for v in values))
    more = f", ... ({len(found)} in all)" if len(found) > n else ""
    return ", ".join(found[:n]) + more
