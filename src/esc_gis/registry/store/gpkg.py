"""The GeoPackage registry: one SQLite file, zero set-up, safe for several processes.

Written with the standard library's ``sqlite3``, not through GDAL, because the registry
needs what GDAL's vector API does not give: transactions spanning several tables, and a
write lock two processes can queue on. Every write is ``BEGIN IMMEDIATE`` (one writer at a
time; the others wait up to :data:`BUSY_TIMEOUT_S`), so two processes adding permits at
once lose nothing; SQLite's rollback journal leaves the file as it was if a process dies
mid-transaction.

The file is a real GeoPackage 1.3 (OGC 12-128r18): the required metadata tables, the CRS
in ``gpkg_spatial_ref_sys``, and geometries as GeoPackage binary (a small header with the
envelope, then ISO WKB), so QGIS and GDAL open ``permits`` and ``disturbed_limits`` as
layers. The spatial-index extension is left out: its triggers call functions only GDAL
registers, and a registry holds thousands of permits, not millions.
"""

from __future__ import annotations

__all__ = ["BUSY_TIMEOUT_S", "GeoPackageBackend"]

import os
import sqlite3
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esc_gis._lazy import lazy_module
from esc_gis._outputs import PRIVATE_MODE
from esc_gis.errors import RegistryError
from esc_gis.registry.store.backend import Backend, iso_date, iso_datetime, now_utc
from esc_gis.registry.store.schema import (
    LAYERS,
    PLAN_VIEW,
    PUBLIC_VIEW,
    PUBLISHED_VIEW,
    SCHEMA_VERSION,
    TABLES,
    Migration,
    public_view,
)
from esc_gis.units import SQFT_PER_ACRE

#: How long a writer waits for another one to finish, in seconds.
BUSY_TIMEOUT_S = 60.0
_APPLICATION_ID = 0x47504B47  # "GPKG"
_USER_VERSION = 10300  # GeoPackage 1.3.0
_ENVELOPE_BYTES = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}

_METADATA = (
    """CREATE TABLE IF NOT EXISTS gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER PRIMARY KEY,
       organization TEXT NOT NULL, organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL,
       description TEXT)""",
    """CREATE TABLE IF NOT EXISTS gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL,
       identifier TEXT UNIQUE, description TEXT DEFAULT '',
       last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
       min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE,
       srs_id INTEGER, CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id))""",
    """CREATE TABLE IF NOT EXISTS gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL,
       geometry_type_name TEXT NOT NULL, srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL,
       CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name),
       CONSTRAINT uk_gc_table_name UNIQUE (table_name),
       CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
       CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id))""",
    """CREATE TABLE IF NOT EXISTS esc_gis_schema (version INTEGER PRIMARY KEY, description TEXT NOT NULL,
       applied_at DATETIME NOT NULL)""",
)
_WGS84 = (
    'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],'
    'UNIT["degree",0.0174532925199433],AUTHORITY["EPSG","4326"]]'
)

if TYPE_CHECKING:
    import shapely
else:
    # Loaded on first use: listing, showing and the due dates read no geometry, and start without it.
    shapely = lazy_module("shapely")


def encode(geom: shapely.Geometry | None, srid: int) -> bytes | None:
    """Return GeoPackage binary: 'GP', version 0, flags, srs id, the xy envelope, ISO WKB (little-endian)."""
    if geom is None:
        return None
    if geom.is_empty:
        return b"GP\x00" + bytes([0x11]) + struct.pack("<i", srid) + shapely.to_wkb(geom, byte_order=1)
    x0, y0, x1, y1 = geom.bounds
    head = b"GP\x00" + bytes([0x03]) + struct.pack("<i4d", srid, x0, x1, y0, y1)
    return head + shapely.to_wkb(geom, byte_order=1, flavor="iso")


def decode(blob: bytes | None) -> shapely.Geometry | None:
    """Return the geometry of a GeoPackage binary blob (any envelope, either byte order)."""
    if blob is None:
        return None
    blob = bytes(blob)
    if blob[:2] != b"GP":
        msg = "A geometry in the registry is not GeoPackage binary (no 'GP' header)."
        raise RegistryError(msg)
    envelope = _ENVELOPE_BYTES.get((blob[3] >> 1) & 0x07, 0)
    return shapely.from_wkb(blob[8 + envelope :])


#: Tables a user has no reason to open: listed nowhere in ``gpkg_contents``.
_INTERNAL = ("permit_counters",)


class GeoPackageBackend(Backend):
    """A registry in a GeoPackage file.

    Parameters
    ----------
    path : path-like
    create : bool, default False
        Allow a missing file (``permits init``); otherwise a missing file is an error.

    Raises
    ------
    RegistryError
        If the file is missing (and ``create`` is false) or is not an SQLite database.
    """

    dialect = "sqlite"
    ph = "?"
    for_update = ""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = False) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            msg = f"No registry at {self.path}. Create one with `esc-gis permits init {self.path}`."
            raise RegistryError(msg)
        if self.path.suffix.lower() != ".gpkg":
            msg = (
                f"A GeoPackage registry's name must end in .gpkg, not {self.path.name!r} (or give a postgresql:// URL)."
            )
            raise RegistryError(msg)
        if create and not self.path.exists():
            self._create_private_file()
        try:
            # Autocommit mode: transactions are begun explicitly, so that writers take the
            # lock up front (BEGIN IMMEDIATE) instead of failing half-way on an upgrade.
            self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute("PRAGMA application_id").fetchone()
        except sqlite3.DatabaseError as exc:
            msg = f"Cannot open {self.path} as a GeoPackage: {exc}."
            raise RegistryError(msg) from None
        self.srid = self._srid()

    def _create_private_file(self) -> None:
        """Create the empty database file readable by its owner only: it holds names and telephone numbers.

        SQLite gives its journal and WAL files the database file's mode, so they stay private too.

        Raises
        ------
        RegistryError
            If the file cannot be created.
        """
        try:
            os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_MODE))
        except FileExistsError:  # created meanwhile by another process: theirs to keep
            pass
        except OSError as exc:
            msg = f"Cannot create the registry {self.path}: {exc.strerror or exc}."
            raise RegistryError(msg) from None

    def _srid(self) -> int:
        try:
            row = self.conn.execute("SELECT srs_id FROM gpkg_geometry_columns WHERE table_name = 'permits'").fetchone()
        except sqlite3.OperationalError:
            return 0
        return int(row[0]) if row else 0

    @contextmanager
    def write(self) -> Iterator[sqlite3.Cursor]:
        """Open a write transaction (see :meth:`Backend.write`)."""
        cur = self.conn.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            msg = f"The registry {self.path} stayed locked by another writer for {BUSY_TIMEOUT_S:g} s: {exc}."
            raise RegistryError(msg) from None
        try:
            yield cur
            cur.execute("COMMIT")
        except BaseException as exc:
            if self.conn.in_transaction:
                cur.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                msg = f"The registry {self.path} refused the change, which was rolled back: {exc}."
                raise RegistryError(msg) from exc
            raise
        finally:
            cur.close()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Cursor]:
        """Open a read transaction (see :meth:`Backend.read`)."""
        cur = self.conn.cursor()
        cur.execute("BEGIN")
        try:
            yield cur
        except sqlite3.Error as exc:
            msg = f"Cannot read the registry {self.path}: {exc}."
            raise RegistryError(msg) from exc
        finally:
            if self.conn.in_transaction:
                cur.execute("COMMIT")
            cur.close()

    def geom_param(self) -> str:
        """Return the SQL for a geometry parameter."""
        return "?"

    def geom_column(self, expr: str, alias: str) -> str:
        """Return SQL selecting a geometry as ``alias``."""
        return f'{expr} AS "{alias}"'

    def dump_geom(self, geom: shapely.Geometry | None) -> bytes | None:
        """Return a geometry as bound to :meth:`geom_param`."""
        return encode(geom, self.srid)

    def load_geom(self, value: Any) -> shapely.Geometry | None:
        """Return a selected geometry as shapely."""
        return decode(value)

    def dump(self, kind: str, value: Any) -> Any:
        """Return a value as stored in a column of ``kind``."""
        if value is None:
            return None
        if kind == "date":
            return value.isoformat()
        if kind == "datetime":
            return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        if kind == "bool":
            return int(bool(value))
        return value

    def load(self, kind: str, value: Any) -> Any:
        """Return a stored value of ``kind`` as Python."""
        if value is None:
            return None
        if kind == "date":
            return iso_date(value)
        if kind == "datetime":
            return iso_datetime(value)
        if kind == "bool":
            return bool(value)
        if kind == "blob":
            return bytes(value)
        return value

    def exists(self) -> bool:
        """Return whether the registry's tables exist."""
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'esc_gis_schema'"
        row = self.conn.execute(sql).fetchone()
        return row is not None

    def create(self, srid: int, crs_wkt: str) -> None:
        """Make the file a GeoPackage with the registry's CRS (nothing changes if it already is one).

        Raises
        ------
        RegistryError
            If the file is a registry in another CRS.
        """
        if self.srid and self.srid != srid:
            msg = f"The registry {self.path} is in EPSG:{self.srid}, not EPSG:{srid}; keep one CRS per registry."
            raise RegistryError(msg)
        with self.write() as cur:
            cur.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
            cur.execute(f"PRAGMA user_version = {_USER_VERSION}")
            for statement in _METADATA:
                cur.execute(statement)
            srs = [
                ("Undefined cartesian SRS", -1, "NONE", -1, "undefined", "undefined cartesian CRS"),
                ("Undefined geographic SRS", 0, "NONE", 0, "undefined", "undefined geographic CRS"),
                ("WGS 84 geodetic", 4326, "EPSG", 4326, _WGS84, "longitude/latitude in degrees on WGS 84"),
                (f"EPSG:{srid}", srid, "EPSG", srid, crs_wkt, "the registry's measuring CRS"),
            ]
            cur.executemany("INSERT OR IGNORE INTO gpkg_spatial_ref_sys VALUES (?, ?, ?, ?, ?, ?)", srs)
        self.srid = srid

    def register_layers(self, cur: Any, migration: Migration) -> None:
        """List the tables in ``gpkg_contents`` (features with their geometry column, or attributes)."""
        now = self.dump("datetime", now_utc())
        # Only the tables made so far: a later migration's tables are listed by that migration.
        made = {r[0] for r in cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
        for table in (t for t in TABLES if t in made):
            if table in LAYERS:
                cur.execute(
                    "INSERT OR IGNORE INTO gpkg_contents (table_name, data_type, identifier, last_change, "
                    "srs_id) VALUES (?, 'features', ?, ?, ?)",
                    (table, table, now, self.srid),
                )
                cur.execute(
                    "INSERT OR IGNORE INTO gpkg_geometry_columns VALUES (?, 'geom', ?, ?, 0, 0)",
                    (table, LAYERS[table], self.srid),
                )
            elif table not in _INTERNAL:
                cur.execute(
                    "INSERT OR IGNORE INTO gpkg_contents (table_name, data_type, identifier, last_change) "
                    "VALUES (?, 'attributes', ?, ?)",
                    (table, table, now),
                )
        # QGIS opens the permits coloured by status (the style table QGIS itself reads), every
        # layer with its fields' aliases, and every table with its title and abstract. Imported
        # here: its XML escaping pulls in urllib and ssl, which a registry that is only read skips.
        from esc_gis.styles import add_layer_style, describe_layer

        for table in (t for t in LAYERS if t in made):
            columns = [row[1] for row in cur.execute(f"PRAGMA table_info({table})").fetchall() if row[1] != "geom"]
            # A user's own default style (saved from QGIS) survives the next migration.
            add_layer_style(cur, table, columns, keep_user_default=True)
        for table in (t for t in TABLES if t in made):
            describe_layer(cur, table)

    def drop_views(self) -> None:
        """Drop the public view if migrations are pending: SQLite checks views when a table is altered.

        Raises
        ------
        RegistryError
            If the file cannot be written.
        """
        with self.write() as cur:
            if not self.exists() or self.version(cur) >= SCHEMA_VERSION:
                return
            self._drop_view(cur)

    def make_views(self, saved: Any, *, timezone: str = "") -> None:
        """Remake the public view (:func:`~esc_gis.registry.store.schema.public_view`) and list it as a layer.

        Raises
        ------
        RegistryError
            If the file cannot be written.
        """
        with self.write() as cur:
            made = {r[0] for r in cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
            if "permits" not in made:
                return
            # table_xinfo: table_info leaves out generated columns (disturbed_acres, migration 10).
            present = {row[1] for row in cur.execute("PRAGMA table_xinfo(permits)").fetchall()}
            self._drop_view(cur)
            for statement in public_view(
                self.dialect,
                present=present,
                plan_versions="plan_versions" in made,
                timezone=timezone,
                sqft_per_acre=SQFT_PER_ACRE,
            ):
                cur.execute(statement)
            # A view is a GeoPackage layer once gpkg_contents and gpkg_geometry_columns list it.
            made_views = {r[0] for r in cur.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall()}
            for view, description in (
                (PUBLIC_VIEW, "The permits' public columns (what a public export holds); no contacts."),
                (PUBLISHED_VIEW, "What the web service publishes: the permits the public map shows, its columns."),
            ):
                if view not in made_views:
                    continue  # a registry part-way through its migrations has no published view yet
                cur.execute(
                    "INSERT INTO gpkg_contents (table_name, data_type, identifier, description, last_change, srs_id) "
                    "VALUES (?, 'features', ?, ?, ?, ?)",
                    (view, view, description, self.dump("datetime", now_utc()), self.srid),
                )
                cur.execute(
                    "INSERT INTO gpkg_geometry_columns VALUES (?, 'geom', ?, ?, 0, 0)",
                    (view, LAYERS["permits"], self.srid),
                )

    @staticmethod
    def _drop_view(cur: Any) -> None:
        for view in (PUBLISHED_VIEW, PUBLIC_VIEW):
            cur.execute("DELETE FROM gpkg_geometry_columns WHERE table_name = ?", (view,))
            cur.execute("DELETE FROM gpkg_contents WHERE table_name = ?", (view,))
            cur.execute(f"DROP VIEW IF EXISTS {view}")
        cur.execute(f"DROP VIEW IF EXISTS {PLAN_VIEW}")

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()
