"""Permits from a layer (a spreadsheet joined to a GIS export): every bad row reported at once.

The layer has one feature per permit, its geometry the site boundary, and the columns of
:data:`IMPORT_COLUMNS` (only ``site_address`` and ``received_on`` are required). Parties
come from ``landowner_*`` and ``responsible_*`` columns. Disturbed limits may come from a
second layer keyed by ``permit_number``; a permit with no polygon there counts its whole site.

A layer with other column names (a screening output, a county export) is read through a field
map (``--field site_address=ADDRESS``), and a day given once (``--received-on``) stands for
every row without its own ``received_on``: a screening has neither an address nor the day an
application came in. :func:`pick_site` reads the one site of such a layer for ``permits add``.
"""

from __future__ import annotations

__all__ = ["IMPORT_COLUMNS", "KNOWN_FIELDS", "applications_from_frame", "pick_site"]

import difflib
import os
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

import geopandas as gpd
import numpy as np

from esc_gis.errors import LayerReadError, Problem, ValidationError
from esc_gis.registry.domain.records import Application, Party, parse_date, parse_datetime

#: Column -> what it holds.
IMPORT_COLUMNS = {
    "permit_number": "optional; default the next number in the profile's pattern",
    "parcel_id": "the parcel's id (e.g. the statewide parcel PARCELID)",
    "site_address": "required",
    "legal_description": "optional",
    "plan_id": "optional; the common plan of development or sale the site is part of",
    "activity": "optional: construction (default), agricultural_activity, agricultural_production, silviculture",
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
    "site_address": "map the column that holds it with --field site_address=COLUMN",
    "received_on": "give the day the applications came in with --received-on YYYY-MM-DD, or map the "
    "column that holds it with --field received_on=COLUMN",
}


def _text(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    s = str(v).strip()
    return s or None


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
    """Check ``--field NAME=COLUMN`` items; return NAME -> the layer's column, and every problem."""
    mapped: dict[str, str] = {}
    problems: list[Problem] = []
    for name, column in fields.items():
        item = f"--field {name}={column}"
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
) -> tuple[list[Application], list[Problem]]:
    """Turn a layer's rows into applications; return them with every problem found.

    Parameters
    ----------
    frame : geopandas.GeoDataFrame
        One row per permit (see :data:`IMPORT_COLUMNS`), with a CRS.
    source : str
        The file's name, for messages.
    disturbed : geopandas.GeoDataFrame, optional
        Disturbed limits with a ``permit_number`` column.
    fields : mapping of str to str, optional
        Import column (:data:`KNOWN_FIELDS`) -> the layer's column holding it (any case); it
        wins over a layer column of the import column's own name.
    received_on : date, optional
        The day for every row without its own ``received_on`` (no such column, or an empty cell).

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
        problems.append(Problem(source, None, "has no CRS.", "set it in the file, or pass --assume-crs EPSG:xxxx."))
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
    limits: dict[str, Any] = {}
    if disturbed is not None:
        if "permit_number" not in disturbed.columns:
            problems.append(
                Problem(
                    "disturbed limits",
                    None,
                    "has no permit_number column.",
                    "key each disturbed-limit polygon by the permit_number of its row.",
                )
            )
        else:
            d = disturbed.to_crs(frame.crs) if disturbed.crs is not None and frame.crs is not None else disturbed
            limits = dict(zip(d["permit_number"].astype(str), d.geometry, strict=True))
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
        apps.append(
            Application(
                site_address=_text(get("site_address")) or "",
                received_on=fields["received_on"],
                site=geom,
                crs=frame.crs,
                disturbed=limits.get(number) if number else None,
                permit_number=number,
                parcel_id=_text(get("parcel_id")),
                legal_description=_text(get("legal_description")),
                building_permit_expires=fields["building_permit_expires"],
                parties=tuple(parties),
                status=_text(get("status")) or "application_received",
                issued_on=fields["issued_on"],
                started_at=fields["started_at"],
                start_notice_at=fields["start_notice_at"],
                plan_id=_text(get("plan_id")),
                activity=_text(get("activity")),
            )
        )
    if disturbed is not None and limits:
        known = {a.permit_number for a in apps}
        for k in sorted(set(limits) - known):
            problems.append(
                Problem(
                    "disturbed limits",
                    None,
                    f"permit_number {k!r} matches no row of {source}.",
                    "fix the number, or add the permit's row.",
                )
            )
    return apps, problems


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
        raise refuse("has no site picked.", "give --site-id ID (the screening's site_id) or --where SQL.")
    frame = read_layer(path, layer=layer)  # the whole layer: a screening output is small
    if where is not None:
        try:
            numbers, _ = feature_numbers(path, layer=layer, where=where)
        except LayerReadError:
            read_layer(path, layer=layer, where=where)  # says why the clause is refused, if it is
            raise
        frame = frame.iloc[numbers - 1]
    by = f"--where {where!r}" if where is not None else ""
    if site_id is not None:
        if id_field not in frame.columns:
            columns = ", ".join(c for c in frame.columns if c != frame.geometry.name)
            raise refuse(
                f"has no {id_field} column (columns: {columns}).",
                "give the file `esc-gis screen` wrote, or pick the site with --where SQL.",
            )
        ids = frame[id_field].astype(str).str.strip()
        typed = str(site_id).strip()
        picked = frame[ids.to_numpy() == typed]
        among = f"the {len(frame)} feature(s) {by} picks" if by else f"its {len(frame)} feature(s)"
        by = f"--site-id {site_id!r}" + (f" with {by}" if by else "")
        if picked.empty:
            # An id typed in another case ('s07' for 'S07') is named; others are not guessed at.
            same = [i for i in dict.fromkeys(ids) if i.lower() == typed.lower()]
            hint = f" Did you mean {same[0]!r}?" if same else ""
            raise refuse(
                f"--site-id {site_id!r} matches none of {among}.",
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
            "narrow it to the one site (--where SQL, or --site-id and --where together).",
        )
    return frame


def _some(values: Any, n: int = 5) -> str:
    """Name up to ``n`` distinct values: ``S01, S02, S03, ... (21 in all)``."""
    found = list(dict.fromkeys(str(v) for v in values))
    more = f", ... ({len(found)} in all)" if len(found) > n else ""
    return ", ".join(found[:n]) + more
