"""What the registry needs from a database, and how a path or a URL picks one.

A back end opens transactions, renders the schema for its dialect, and converts values
(dates, geometries) to and from its columns. Everything else, the registry's logic, is
written once in :mod:`esc_gis.registry.service.registry` and its parts against this interface, so the GeoPackage
and the PostGIS registries behave the same by construction.
"""

from __future__ import annotations

__all__ = ["Backend", "open_backend"]

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any

from esc_gis.errors import RegistryError
from esc_gis.registry.domain.records import Stored
from esc_gis.registry.store.schema import MIGRATIONS, SCHEMA_VERSION, Migration

if TYPE_CHECKING:
    import shapely


class Backend(ABC):
    """A registry database: transactions, placeholders and value conversion.

    Attributes
    ----------
    dialect : str
        "sqlite" (GeoPackage) or "postgis".
    ph : str
        The parameter placeholder, ``?`` or ``%s``.
    for_update : str
        The clause that locks the rows a write transaction reads ('' where the whole
        transaction is already exclusive).
    """

    dialect: str
    ph: str
    for_update: str
    srid: int

    @abstractmethod
    def write(self) -> AbstractContextManager[Any]:
        """Open a write transaction (yield a cursor): committed on success, rolled back on any error."""

    @abstractmethod
    def read(self) -> AbstractContextManager[Any]:
        """Open a read transaction (yield a cursor) that sees one consistent state."""

    @abstractmethod
    def geom_param(self) -> str:
        """Return the SQL for a geometry parameter."""

    @abstractmethod
    def geom_column(self, expr: str, alias: str) -> str:
        """Return SQL selecting a geometry expression as ``alias``, in the form :meth:`load_geom` reads."""

    @abstractmethod
    def dump_geom(self, geom: shapely.Geometry | None) -> Any:
        """Return a geometry as the value bound to :meth:`geom_param`."""

    @abstractmethod
    def load_geom(self, value: Any) -> shapely.Geometry | None:
        """Return a selected geometry value as shapely."""

    def stored_geom(self, value: Any) -> Stored | None:
        """Return a selected geometry value to be read by :meth:`load_geom` on first use, None as None.

        A command that never looks at a geometry (listing, showing, the due dates) imports no shapely.
        """
        return None if value is None else Stored(self.load_geom, value)

    @abstractmethod
    def create(self, srid: int, crs_wkt: str) -> None:
        """Make an empty database ready for the migrations (metadata tables, extensions)."""

    @abstractmethod
    def register_layers(self, cur: Any, migration: Migration) -> None:
        """Record the tables a migration made in the database's own catalogue, if it has one."""

    @abstractmethod
    def exists(self) -> bool:
        """Return whether the registry's tables exist."""

    def close(self) -> None:  # noqa: B027 (optional to override)
        """Release the connection."""

    # Values ---------------------------------------------------------------------------

    def dump(self, kind: str, value: Any) -> Any:
        """Return a Python value as the database stores a column of ``kind``."""
        return value

    def load(self, kind: str, value: Any) -> Any:
        """Return a stored value of a column of ``kind`` as Python."""
        return value

    # Migrations ----------------------------------------------------------------------

    def version(self, cur: Any) -> int:
        """Return the newest migration applied (0 for an empty database)."""
        cur.execute("SELECT max(version) FROM esc_gis_schema")
        row = cur.fetchone()
        return int(row[0] or 0)

    def migrate(self, srid: int, crs_wkt: str, *, timezone: str = "") -> list[int]:
        """Apply every migration not yet applied, each in its own transaction; return their versions.

        Then remake the views outside the migrations (:meth:`make_views`; ``timezone`` is the
        office's, for the public view's "today").

        Raises
        ------
        RegistryError
            If the registry was written by a newer esc_gis (a schema version this one does
            not know), or its CRS differs from ``srid``.
        """
        self.create(srid, crs_wkt)
        views = self.drop_views()  # a view would hold the tables a migration alters
        applied = []
        for migration in MIGRATIONS:
            with self.write() as cur:
                self._lock_schema(cur)
                current = self.version(cur)
                if current > SCHEMA_VERSION:
                    msg = (
                        f"This registry has schema version {current}; this esc_gis knows up to "
                        f"{SCHEMA_VERSION}. Upgrade esc_gis to use it."
                    )
                    raise RegistryError(msg)
                if migration.version <= current:
                    continue
                for statement in migration.statements(self.dialect, srid):
                    cur.execute(statement)
                if migration.data is not None:
                    migration.data(self, cur)
                self.register_layers(cur, migration)
                ph = self.ph
                cur.execute(
                    f"INSERT INTO esc_gis_schema (version, description, applied_at) VALUES ({ph}, {ph}, {ph})",
                    (migration.version, migration.description, self.dump("datetime", now_utc())),
                )
                applied.append(migration.version)
        self.make_views(views, timezone=timezone)
        return applied

    def drop_views(self) -> Any:
        """Drop the views :meth:`make_views` makes, if migrations are pending; return what to restore.

        The default (a GeoPackage: no views) does nothing.
        """
        return None

    def make_views(self, saved: Any, *, timezone: str = "") -> None:  # noqa: B027 (optional to override)
        """(Re)make the views outside the migrations, restoring what :meth:`drop_views` saved."""

    def can_read(self, table: str) -> bool:
        """Return whether this connection may read ``table`` (a GeoPackage's file mode decides: yes).

        The registry leaves out what a role may not read (an inspector reads no parties).
        """
        return True

    def next_ids(self, cur: Any, table: str, column: str = "id", n: int = 1) -> list[int]:
        """Take the next ``n`` keys of ``table.column`` (inside the caller's write transaction).

        A command names its rows' keys in its events before the projectors write them. PostgreSQL
        takes them from the column's sequence (two writers never get one key); SQLite has one
        writer at a time, and AUTOINCREMENT's rule: never a key used before, even by a row since
        removed.
        """
        if n <= 0:
            return []
        if self.dialect == "postgis":
            cur.execute(
                f"SELECT nextval(pg_get_serial_sequence({self.ph}, {self.ph})) FROM generate_series(1, {self.ph})",
                (table, column, n),
            )
            return [int(r[0]) for r in cur.fetchall()]
        cur.execute(f'SELECT COALESCE(MAX("{column}"), 0) FROM "{table}"')
        top = int(cur.fetchone()[0])
        cur.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,))
        row = cur.fetchone()
        top = max(top, int(row[0]) if row and row[0] is not None else 0)
        return list(range(top + 1, top + n + 1))

    def lock_table(self, cur: Any, table: str) -> None:  # noqa: B027 (optional to override)
        """Keep other writers out of ``table`` until the transaction ends (SQLite's writes already are).

        Numbering reads the highest number and inserts the next: two writers must not both read it.
        Readers are not blocked.
        """

    def _lock_schema(self, cur: Any) -> None:  # noqa: B027 (optional to override)
        """Serialise concurrent migrations (a write transaction already does in SQLite)."""

    def check_version(self) -> None:
        """Refuse a registry whose schema is older or newer than this esc_gis.

        Raises
        ------
        RegistryError
            Naming the fix: ``esc-gis permits init`` upgrades an older registry.
        """
        if not self.exists():
            msg = "This is not a permit registry (no esc_gis tables). Create one with `esc-gis permits init`."
            raise RegistryError(msg)
        with self.read() as cur:
            current = self.version(cur)
        if current < SCHEMA_VERSION:
            msg = (
                f"This registry has schema version {current}; this esc_gis uses {SCHEMA_VERSION}. "
                "Run `esc-gis permits init` on it to apply the migrations."
            )
            raise RegistryError(msg)
        if current > SCHEMA_VERSION:
            msg = (
                f"This registry has schema version {current}; this esc_gis knows up to {SCHEMA_VERSION}. "
                "Upgrade esc_gis to use it."
            )
            raise RegistryError(msg)


def now_utc() -> datetime:
    """Return the current time in UTC, to the millisecond (a GeoPackage DATETIME's precision)."""
    t = datetime.now(timezone.utc)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def is_url(target: str | os.PathLike[str]) -> bool:
    """Return whether ``target`` names a PostgreSQL database rather than a GeoPackage file.

    Any libpq connection string: a ``postgresql://`` URI or ``key=value`` pairs
    (:func:`esc_gis.registry.store.conninfo.is_conninfo`).
    """
    from esc_gis.registry.store.conninfo import is_conninfo

    return is_conninfo(target)


def open_backend(target: str | os.PathLike[str], *, create: bool = False) -> Backend:
    """Open the back end a path (GeoPackage) or a ``postgresql://`` URL names.

    Raises
    ------
    RegistryError
        If the file or server cannot be opened.
    """
    if is_url(target):
        from esc_gis.registry.store.postgis import PostGISBackend

        return PostGISBackend(str(target))
    from esc_gis.registry.store.gpkg import GeoPackageBackend

    return GeoPackageBackend(target, create=create)


def iso_date(value: Any) -> date | None:
    """Return a stored date (``date`` or ISO text) as a date."""
    if value is None or (isinstance(value, date) and not isinstance(value, datetime)):
        return value
    if isinstance(value, datetime):
        return value.date()
    return date.fromisoformat(str(value)[:10])


def iso_datetime(value: Any) -> datetime | None:
    """Return a stored datetime (aware ``datetime`` or ISO text, 'Z' for UTC) as an aware datetime."""
    if value is None or isinstance(value, datetime):
        return value
    t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def rows(cur: Any) -> Iterator[dict[str, Any]]:
    """Yield the cursor's remaining rows as dicts keyed by column name."""
    names = [d[0] for d in cur.description]
    for row in cur.fetchall():
        yield dict(zip(names, row, strict=True))
