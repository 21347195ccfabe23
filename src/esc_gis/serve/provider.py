"""A read-only pygeoapi feature provider for a GeoPackage layer or view.

pygeoapi's own SQLite provider opens the file for writing and needs SpatiaLite; the service
must only ever read the registry, so this provider reads through pyogrio (GDAL opens the file
read-only) and keeps the layer in memory until the file changes (the registry is small: a
Village's permits). It answers every query pygeoapi's items endpoint makes: paging, bbox,
property equality, sorting, property selection and hits, in OGC CRS84 (pygeoapi transforms to
any other CRS the client asks for).

Configured in pygeoapi's YAML as ``name: esc_gis.serve.provider.GeoPackageProvider`` with
``data`` the file and ``table`` the layer (:func:`esc_gis.serve.config.service_config`).
"""

from __future__ import annotations

__all__ = ["GeoPackageProvider", "PublicPermitsProvider", "sql_field"]

import json
import threading
from datetime import date
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely
from pygeoapi.provider.base import (
    BaseProvider,
    ProviderConnectionError,
    ProviderInvalidQueryError,
    ProviderItemNotFoundError,
)
from pygeoapi.provider.sql import PostgreSQLProvider
from pygeoapi.util import crs_transform

#: The CRS features leave this provider in (pygeoapi's default output).
STORAGE_CRS = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
_LOCK = threading.Lock()
#: (path, layer) -> (the file's stamp, the layer in CRS84 with ids as strings).
_CACHE: dict[tuple[str, str], tuple[tuple[float, ...], gpd.GeoDataFrame]] = {}


def _stamp(path: Path) -> tuple[float, ...]:
    """Return the modification times of the file and its write-ahead log: a change to either is a new version."""
    files = (path, path.with_name(path.name + "-wal"))
    return tuple(f.stat().st_mtime_ns if f.exists() else 0.0 for f in files)


def datetime_days(datetime_: str) -> tuple[str | None, str | None]:
    """Return the first and last day (ISO) of OGC API's ``datetime`` (an instant, or an interval with ``..``).

    None is an open end. A bound with a time of day counts by its date.

    Raises
    ------
    ProviderInvalidQueryError
        If a bound is not a date (a 400 for the client, not a database error).

    Examples
    --------
    >>> datetime_days("2026-11-01/..")
    ('2026-11-01', None)
    >>> datetime_days("2026-11-03T10:00:00Z")
    ('2026-11-03', '2026-11-03')
    """
    text = str(datetime_)
    begin, end = text.split("/", 1) if "/" in text else (text, text)
    days: list[str | None] = []
    for bound, side in ((begin, "start"), (end, "end")):
        if bound in ("", ".."):
            days.append(None)
            continue
        try:
            days.append(date.fromisoformat(bound[:10]).isoformat())
        except ValueError:
            raise ProviderInvalidQueryError(user_msg=f"datetime's {side} {bound!r} is not a date.") from None
    return days[0], days[1]


def _json_ready(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Make dates ISO text and missing values None, as GeoJSON wants them."""
    out = frame.copy()
    for name in out.columns:
        if name == out.geometry.name:
            continue
        col = out[name]
        if pd.api.types.is_datetime64_any_dtype(col):
            text = col.dt.strftime("%Y-%m-%dT%H:%M:%S").str.replace("T00:00:00", "", regex=False)
            out[name] = text.astype(object).where(col.notna(), None)
        else:
            out[name] = col.astype(object).where(col.notna(), None)
    return out


def _load(path: Path, layer: str) -> gpd.GeoDataFrame:
    """Read the layer (cached until the file changes), in CRS84."""
    key = (str(path), layer)
    try:
        stamp = _stamp(path)
    except OSError as err:
        raise ProviderConnectionError(user_msg="The layer's data cannot be read.") from err
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    try:
        frame = pyogrio.read_dataframe(path, layer=layer, fid_as_index=True)  # GDAL opens it read-only
    except Exception as err:
        raise ProviderConnectionError(user_msg="The layer's data cannot be read.") from err
    if frame.crs is not None:
        frame = frame.to_crs(STORAGE_CRS)
    frame = _json_ready(frame)
    with _LOCK:
        _CACHE[key] = (stamp, frame)
    return frame


class GeoPackageProvider(BaseProvider):
    """Serve one layer or view of a GeoPackage, read-only.

    Parameters
    ----------
    provider_def : dict
        pygeoapi's provider definition: ``data`` (the file), ``table`` (the layer),
        ``id_field`` and, optionally, ``properties`` (the only columns served).

    Raises
    ------
    ProviderConnectionError
        If the file or layer cannot be read.
    """

    def __init__(self, provider_def: dict[str, Any]) -> None:
        super().__init__(provider_def)
        self.table = provider_def["table"]
        self.path = Path(self.data)
        self.get_fields()

    def _frame(self) -> gpd.GeoDataFrame:
        return _load(self.path, self.table)

    def get_fields(self) -> dict[str, dict[str, str]]:
        """Return the served columns and their JSON types."""
        if self._fields:
            return self._fields
        try:
            info = pyogrio.read_info(self.path, layer=self.table)
        except Exception as err:
            raise ProviderConnectionError(user_msg="The layer's data cannot be read.") from err
        kinds = {"int": "integer", "float": "number", "bool": "boolean", "datetime": "string", "object": "string"}
        # A GeoPackage DATE is a day (served as 2026-11-03), a DATETIME an instant: as PostGIS's are typed.
        formats = {"OFTDate": "date", "OFTDateTime": "date-time", "OFTTime": "time"}
        for name, dtype, ogr_type in zip(info["fields"], info["dtypes"], info["ogr_types"], strict=True):
            if self.properties and name not in self.properties:
                continue
            kind = next((v for k, v in kinds.items() if str(dtype).startswith(k)), "string")
            self._fields[str(name)] = {"type": kind}
            if ogr_type in formats or str(dtype).startswith("datetime"):
                self._fields[str(name)]["format"] = formats.get(ogr_type, "date-time")
        return self._fields

    def _columns(self, select_properties: list[str] | None) -> list[str]:
        names = list(self.get_fields())
        if select_properties:
            names = [n for n in names if n in select_properties]
        return names

    def _ids(self, frame: gpd.GeoDataFrame) -> np.ndarray:
        """Return the ids: the id field, or the GeoPackage's feature id (``fid``, read as the index)."""
        return frame[self.id_field].to_numpy() if self.id_field in frame.columns else frame.index.to_numpy()

    def _features(self, frame: gpd.GeoDataFrame, names: list[str], skip_geometry: bool) -> list[dict[str, Any]]:
        geoms = frame.geometry.to_numpy()
        ids = self._ids(frame)
        records = frame[[n for n in names if n in frame.columns]].to_dict("records")
        shapes = [None] * len(frame) if skip_geometry else shapely.to_geojson(geoms).tolist()

        return [
            {
                "type": "Feature",
                "id": ident.item() if hasattr(ident, "item") else ident,
                "properties": props,
                "geometry": None if shape is None or shape == "null" else json.loads(shape),
            }
            for ident, props, shape in zip(ids, records, shapes, strict=True)
        ]

    @crs_transform
    def query(
        self,
        offset: int = 0,
        limit: int = 10,
        resulttype: str = "results",
        bbox: list[float] | None = None,
        datetime_: str | None = None,
        properties: list[tuple[str, str]] | None = None,
        sortby: list[dict[str, str]] | None = None,
        select_properties: list[str] | None = None,
        skip_geometry: bool = False,
        q: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Return a FeatureCollection page of the layer, as pygeoapi's items endpoint asks.

        Raises
        ------
        ProviderConnectionError
            If the file cannot be read.
        ProviderInvalidQueryError
            If a property filtered or sorted on is not served, a number's filter is no number, or a
            CQL ``filter`` is given (this provider does not evaluate one: ignoring it answered every feature).
        """
        if kwargs.get("filterq") is not None:
            raise ProviderInvalidQueryError(
                user_msg="This collection takes no CQL filter; filter by a property instead (?status=active)."
            )
        frame = self._frame()
        fields = self.get_fields()
        keep = np.ones(len(frame), dtype=bool)
        if bbox:
            keep &= shapely.intersects(frame.geometry.to_numpy(), shapely.box(*bbox[:4]))
        keep &= self._in_time(frame, datetime_)
        for name, value in properties or []:
            if name not in fields:
                raise ProviderInvalidQueryError(user_msg=f"Unknown property {name!r}.")
            column = frame[name]
            if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
                # A number equals a number, as the database compares it (43560 is 43560.0).
                try:
                    number = float(value)
                except ValueError:
                    raise ProviderInvalidQueryError(user_msg=f"{name} is a number, not {value!r}.") from None
                keep &= column.to_numpy(dtype=float, na_value=np.nan) == number
            else:
                keep &= column.astype(str).to_numpy() == str(value)
        chosen = frame[keep]
        for order in reversed(sortby or []):
            if order["property"] not in fields:
                raise ProviderInvalidQueryError(user_msg=f"Unknown property {order['property']!r}.")
            chosen = chosen.sort_values(order["property"], ascending=order["order"] == "+", kind="stable")
        out: dict[str, Any] = {"type": "FeatureCollection", "features": [], "numberMatched": len(chosen)}
        if resulttype == "hits":
            return out
        page = chosen.iloc[offset : offset + limit]
        out["features"] = self._features(page, self._columns(select_properties), skip_geometry)
        out["numberReturned"] = len(out["features"])
        return out

    def _in_time(self, frame: gpd.GeoDataFrame, datetime_: str | None) -> np.ndarray:
        """Return which rows' ``time_field`` date is in ``datetime_`` (an instant, or an interval with ``..``).

        The permits' dates are days: a bound with a time of day counts by its date, and an
        interval includes both ends, as pygeoapi's SQL provider compares on PostGIS.

        Raises
        ------
        ProviderInvalidQueryError
            If the collection has no time field, or a bound is not a date.
        """
        if datetime_ in (None, "", "../.."):
            return np.ones(len(frame), dtype=bool)
        if not self.time_field or self.time_field not in frame.columns:
            raise ProviderInvalidQueryError(user_msg="This collection has no time to filter by.")
        # ISO text (dates were made text for JSON): the first ten characters are the day; none is "".
        days = frame[self.time_field].fillna("").astype(str).str.slice(0, 10).to_numpy(dtype=str)
        begin, end = datetime_days(datetime_)
        keep = days != ""
        if begin is not None:
            keep &= days >= begin
        if end is not None:
            keep &= days <= end
        return np.asarray(keep, dtype=bool)

    @crs_transform
    def get(self, identifier: Any, **kwargs: Any) -> dict[str, Any]:
        """Return the feature whose id is ``identifier``.

        Raises
        ------
        ProviderItemNotFoundError
            If there is none.
        """
        frame = self._frame()
        hit = frame[np.asarray([str(i) for i in self._ids(frame)]) == str(identifier)]
        if hit.empty:
            raise ProviderItemNotFoundError(user_msg="No such feature.")
        return self._features(hit.iloc[:1], self._columns(None), False)[0]

    def __repr__(self) -> str:
        return f"<GeoPackageProvider> {self.table}"


def sql_field(column_type: Any) -> dict[str, Any]:
    """Return the JSON type and format (or None) of a database column, as pygeoapi's SQL provider words them.

    Examples
    --------
    >>> import sqlalchemy as sa
    >>> sql_field(sa.Date()), sql_field(sa.DateTime())
    ({'type': 'string', 'format': 'date'}, {'type': 'string', 'format': 'date-time'})
    >>> sql_field(sa.Float())
    {'type': 'number', 'format': None}
    """
    from datetime import datetime, time
    from decimal import Decimal

    try:
        python_type = column_type.python_type
    except NotImplementedError:  # a type with no Python counterpart (PostGIS's, an enum...): text
        python_type = str
    kinds = {bool: "boolean", int: "integer", float: "number", Decimal: "number", dict: "object"}
    # datetime before date: a datetime is a date too.
    formats = ((datetime, "date-time"), (date, "date"), (time, "time"))
    fmt = next((f for t, f in formats if isinstance(python_type, type) and issubclass(python_type, t)), None)
    return {"type": kinds.get(python_type, "string"), "format": fmt}


class PublicPermitsProvider(PostgreSQLProvider):
    """pygeoapi's PostgreSQL provider over the registry's published view, refusing what the database would fail on.

    The view (:data:`esc_gis.registry.store.schema.PUBLISHED_VIEW`) holds only the published
    columns of the permits the public map shows: pygeoapi lists, filters and sorts by those
    alone, and its ``prev``/``next`` links name only permits shown. :class:`esc_gis.serve.app.Guard`
    checks a client's values before they arrive here; this class keeps the database from
    parsing a client's text where pygeoapi would pass it on as it came (an id, ``datetime``).

    Raises
    ------
    ProviderConnectionError, ProviderQueryError
        As pygeoapi's PostgreSQL provider.
    """

    def get_fields(self) -> dict[str, dict[str, Any]]:
        """Return the view's columns and their JSON types (:func:`sql_field`), dates as ``string`` ``format: date``.

        pygeoapi's own mapping knows no ``datetime.date``: it typed the dates right but logged
        ``Unsupported column type DATE`` at WARNING for each date column every time the provider
        was built (26 lines at each start), in a log that must stay quiet.
        """
        if not self._fields:
            for column in self.table_model.__table__.columns:
                if column.name != self.geom:
                    self._fields[str(column.name)] = sql_field(column.type)
        return self._fields

    def get(self, identifier: Any, crs_transform_spec: Any = None, **kwargs: Any) -> dict[str, Any]:
        """Return the permit ``identifier``.

        pygeoapi hands the id in ``/items/{featureId}`` to the database as it came; the view's
        ``fid`` is a bigint, so any other text (``/items/abc``, found by schemathesis) made the
        database refuse the query and the client got a 500: it is not found.

        Raises
        ------
        ProviderItemNotFoundError
            If the id is not a 64-bit integer or no permit shown has it.
        """
        try:
            fid = int(str(identifier))
        except ValueError:
            fid = None
        if fid is None or not -(2**63) <= fid < 2**63:
            raise ProviderItemNotFoundError(user_msg="No such feature.")
        return dict(super().get(fid, crs_transform_spec=crs_transform_spec, **kwargs))

    def query(self, *args: Any, datetime_: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """Return pygeoapi's page of permits, ``datetime_`` given to the database as days.

        The time field is a date: an instant or a bound with a time of day counts by its date,
        as on the GeoPackage (:func:`datetime_days`), and the database compares days it did not
        have to parse from a client's text.

        Raises
        ------
        ProviderInvalidQueryError
            If ``datetime_`` is not a date or an interval of dates, or the database refuses a
            value as not of its column's type (a 400, never a 500).
        """
        from sqlalchemy.exc import DataError

        if datetime_ not in (None, "", "../.."):
            begin, end = datetime_days(datetime_)
            datetime_ = f"{begin or '..'}/{end or '..'}" if (begin, end) != (None, None) else None
        elif datetime_ == "":
            datetime_ = None
        try:
            return dict(super().query(*args, datetime_=datetime_, **kwargs))
        except DataError:
            # SQLSTATE class 22: a value of the client's the column's type cannot hold (the guard
            # checks each before; this is for what it cannot foresee, such as a CQL literal).
            raise ProviderInvalidQueryError(user_msg="A value in the query is not of its property's type.") from None
