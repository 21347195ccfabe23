"""The PostGIS registry: a PostgreSQL database that several staff write at once.

Opened from a ``postgresql://user@host/db`` URL (libpq's other settings, such as
``PGPASSWORD`` or ``~/.pgpass``, apply). Each write is one transaction; the rows it
changes are locked (``SELECT ... FOR UPDATE``) and permit numbers come from an upsert on
``permit_counters``, so concurrent writers queue on the same row instead of overwriting
each other. The session runs in UTC so stored times read back the same everywhere.
"""

from __future__ import annotations

__all__ = ["PostGISBackend"]

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from esc_gis._lazy import lazy_module
from esc_gis.errors import RegistryError, install_hint
from esc_gis.registry.store.backend import Backend
from esc_gis.registry.store.conninfo import parse, redact, scrub
from esc_gis.registry.store.schema import (
    PLAN_VIEW,
    PUBLIC_VIEW,
    PUBLISHED_VIEW,
    SCHEMA_VERSION,
    TABLES,
    Migration,
    public_view,
)

_SCHEMA_TABLE = """CREATE TABLE IF NOT EXISTS esc_gis_schema (version integer PRIMARY KEY,
    description text NOT NULL, applied_at timestamptz NOT NULL)"""
#: Any fixed key for the advisory lock that serialises migrations.
_MIGRATION_LOCK = 5408

if TYPE_CHECKING:
    import shapely
else:
    # Loaded on first use: listing, showing and the due dates read no geometry, and start without it.
    shapely = lazy_module("shapely")


#: The columns of the named tables in the registry's schema, from the catalog by table name (its
#: (relname, relnamespace) index): information_schema.columns scans every schema's, which is slow
#: on a database of many registries.
_COLUMNS_OF = (
    "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
    "WHERE c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace "
    "AND a.attnum > 0 AND NOT a.attisdropped"
)


class PostGISBackend(Backend):
    """A registry in a PostgreSQL + PostGIS database.

    Raises
    ------
    RegistryError
        If psycopg is not installed or the server cannot be reached.
    """

    dialect = "postgis"
    ph = "%s"
    for_update = " FOR UPDATE"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            msg = "A PostGIS registry needs psycopg. " + install_hint("postgis", "'psycopg[binary]'")
            raise RegistryError(msg) from None
        self.url = url
        self._readable: dict[str, bool] = {}
        parse(url)  # a string libpq cannot read is refused with the fix, before any connection
        try:
            self.conn = psycopg.connect(url, autocommit=True)
            self.conn.execute("SET TIME ZONE 'UTC'")
        except psycopg.Error as exc:
            msg = f"Cannot connect to {redact(url)}: {scrub(str(exc).strip(), self.url)}"
            raise RegistryError(msg) from None
        try:
            self._reach_postgis()
            self.srid = self._srid()
        except psycopg.Error as exc:
            self.conn.close()
            msg = f"Cannot open the registry at {redact(url)}: {scrub(str(exc).strip(), self.url)}"
            raise RegistryError(msg) from None
        except RegistryError:
            self.conn.close()
            raise

    def _reach_postgis(self) -> None:
        """Put the schema PostGIS was installed in on this session's search_path.

        PostGIS's types, functions, ``geometry_columns`` and ``spatial_ref_sys`` live in the
        schema the extension was created in (usually ``public``). A registry in a schema of
        its own (``options=-csearch_path=permits``) would not see them, so that schema is
        appended after the user's own: the registry's tables still go in the first.
        """
        row = self.conn.execute(
            "SELECT current_schema(), current_setting('search_path'), "
            "n.nspname, n.nspname = ANY(current_schemas(false)) "
            "FROM (SELECT 1) one LEFT JOIN pg_extension e ON e.extname = 'postgis' "
            "LEFT JOIN pg_namespace n ON n.oid = e.extnamespace"
        ).fetchone()
        if row is None or row[0] is None:
            # Without this check the schema PostGIS is in would take the registry's tables.
            path = row[1] if row else ""
            msg = (
                f"The registry at {redact(self.url)} has search_path {path!r}, which names no schema in "
                "this database; create the schema (CREATE SCHEMA name) or fix the URL's search_path."
            )
            raise RegistryError(msg)
        if row[2] is None or row[3]:
            return
        from psycopg import sql

        quoted = sql.Identifier(row[2]).as_string(self.conn)
        path = f"{row[1]}, {quoted}" if str(row[1]).strip() else quoted
        self.conn.execute("SELECT set_config('search_path', %s, false)", (path,))

    def _srid(self) -> int:
        row = (
            self.conn.execute(
                # The column's type modifier, as PostGIS's geometry_columns view reads it, found by name in
                # the catalog (the view scans every schema's tables).
                "SELECT postgis_typmod_srid(a.atttypmod) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                "WHERE c.relname = 'permits' AND c.relnamespace = current_schema()::regnamespace "
                "AND a.attname = 'geom' AND NOT a.attisdropped"
            ).fetchone()
            if self._has_postgis()
            else None
        )
        return int(row[0]) if row else 0

    def _has_postgis(self) -> bool:
        return self.conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'postgis'").fetchone() is not None

    @contextmanager
    def write(self) -> Iterator[Any]:
        """Open a write transaction (see :meth:`Backend.write`).

        Raises
        ------
        RegistryError
            If the server refuses a statement (the change is rolled back); a missing privilege
            is named with the roles that have it (:meth:`_denied`).
        """
        import psycopg

        watched = None
        try:
            with self.conn.transaction(), self.conn.cursor() as raw:
                watched = _Watched(raw)
                yield watched
        except psycopg.errors.InsufficientPrivilege as exc:
            msg = f"The registry at {redact(self.url)} refused the change, which was rolled back: "
            raise RegistryError(msg + self._denied(exc, watched.privilege if watched else "SELECT")) from None
        except psycopg.Error as exc:
            why = scrub(str(exc).strip(), self.url)
            msg = f"The registry at {redact(self.url)} refused the change, which was rolled back: {why}"
            raise RegistryError(msg) from exc

    @contextmanager
    def read(self) -> Iterator[Any]:
        """Open a read transaction (see :meth:`Backend.read`).

        Raises
        ------
        RegistryError
            If the server refuses a query; a missing privilege is named (:meth:`_denied`).
        """
        import psycopg

        # REPEATABLE READ: every query in the block sees the same snapshot.
        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                yield cur
        except psycopg.errors.InsufficientPrivilege as exc:
            msg = f"Cannot read the registry at {redact(self.url)}: "
            raise RegistryError(msg + self._denied(exc, "SELECT")) from None
        except psycopg.Error as exc:
            msg = f"Cannot read the registry at {redact(self.url)}: {scrub(str(exc).strip(), self.url)}"
            raise RegistryError(msg) from exc

    def _denied(self, exc: Exception, privilege: str) -> str:
        """Say which privilege this login lacks, on what, which roles have it, and the fix.

        Called after the transaction rolled back, so the connection can still ask the catalogue.
        """
        import re

        import psycopg

        text = str(getattr(getattr(exc, "diag", None), "message_primary", None) or exc).strip()
        m = re.fullmatch(r"permission denied for (table|view|sequence|schema) (.+)", text)
        if m is None:
            return (
                f"{text}. Ask the registry's owner for the privilege "
                "(see 'Roles on PostGIS' in the documentation, docs/guide/registry/storage.md)."
            )
        kind, name = m.groups()
        if kind in ("sequence", "schema"):
            privilege = "USAGE"
        check = {"sequence": "has_sequence_privilege", "schema": "has_schema_privilege"}.get(
            kind, "has_table_privilege"
        )
        who, holders = "this login", []
        try:
            row = self.conn.execute("SELECT current_user").fetchone()
            who = str(row[0]) if row else who
            # Group roles (NOLOGIN) that hold it: the office's roles, not a person's login.
            found = self.conn.execute(
                f"SELECT rolname FROM pg_roles WHERE NOT rolcanlogin AND rolname !~ '^pg_' "
                f"AND {check}(oid, %s, %s) ORDER BY rolname",
                (name, privilege),
            ).fetchall()
            holders = [str(r[0]) for r in found]
        except psycopg.Error:
            pass  # the message still names the privilege and the fix
        lacks = f"the role {who} may not {privilege} {kind} {name} (the server said: {text})."
        if holders:
            grant = f"GRANT {holders[0]} TO {who}"
            return (
                f"{lacks} Roles that may: {', '.join(holders)}. If this is {who}'s work, ask the registry's "
                f"owner to run `{grant}`; see 'Roles on PostGIS'"
                " in the documentation (docs/guide/registry/storage.md)."
            )
        return (
            f"{lacks} No role has that privilege: ask the registry's owner to run `esc-gis permits init "
            "--roles` and to grant you the role for this work; see 'Roles on PostGIS'"
            " in the documentation (docs/guide/registry/storage.md)."
        )

    def can_read(self, table: str) -> bool:
        """Return whether this login may SELECT ``table`` (asked once per table).

        Raises
        ------
        RegistryError
            If the server cannot answer.
        """
        import psycopg

        if table not in self._readable:
            try:
                row = self.conn.execute("SELECT has_table_privilege(to_regclass(%s), 'SELECT')", (table,)).fetchone()
            except psycopg.Error as exc:
                msg = f"Cannot read the registry at {redact(self.url)}: {scrub(str(exc).strip(), self.url)}"
                raise RegistryError(msg) from None
            # No such table (NULL): let the query that needs it say so.
            self._readable[table] = row is None or row[0] is None or bool(row[0])
        return self._readable[table]

    def drop_views(self) -> list[tuple[str, str, str]]:
        """Drop the public and published views if migrations are pending (they hold tables); return their grants.

        Raises
        ------
        RegistryError
            If the server refuses (the view belongs to another owner).
        """
        with self.write() as cur:
            self._lock_schema(cur)
            saved = self._view_grants(cur)
            if self.version(cur) < SCHEMA_VERSION:
                cur.execute(f"DROP VIEW IF EXISTS {PUBLISHED_VIEW}")
                cur.execute(f"DROP VIEW IF EXISTS {PUBLIC_VIEW}")
                cur.execute(f"DROP VIEW IF EXISTS {PLAN_VIEW}")
        return saved

    def make_views(self, saved: Any, *, timezone: str = "") -> None:
        """Remake the public and published views (:func:`~esc_gis.registry.store.schema.public_view`); give back grants.

        Dropping a view drops its grants, so the roles' privileges on it are read first and
        granted again: re-running ``permits init`` leaves the reader role able to read it. Whoever
        may read the public view may read the published one, which holds less.

        Raises
        ------
        RegistryError
            If the server refuses.
        """
        from psycopg import sql

        from esc_gis.styles import LAYER_DESCRIPTIONS
        from esc_gis.units import SQFT_PER_ACRE

        with self.write() as cur:
            self._lock_schema(cur)
            grants = {*(saved or []), *self._view_grants(cur)}
            # The published view holds less than the public one: whoever reads that reads this
            # (a registry upgraded to it keeps its reader's access without `--roles`).
            grants |= {(PUBLISHED_VIEW, g, p) for v, g, p in grants if v == PUBLIC_VIEW and p == "SELECT"}
            cur.execute(_COLUMNS_OF, (["permits", "plan_versions"],))
            made = cur.fetchall()
            present = {c for t, c in made if t == "permits"}
            if not present:
                return  # no registry here (yet)
            plans = any(t == "plan_versions" for t, _ in made)
            for statement in public_view(
                self.dialect, present=present, plan_versions=plans, timezone=timezone, sqft_per_acre=SQFT_PER_ACRE
            ):
                cur.execute(statement)
            title, abstract = LAYER_DESCRIPTIONS.get("permits", ("Permits", ""))
            text = f"{title} (public columns): {abstract}".rstrip(": ")
            cur.execute(sql.SQL("COMMENT ON VIEW {} IS {}").format(sql.Identifier(PUBLIC_VIEW), sql.Literal(text)))
            cur.execute("SELECT to_regclass(%s) IS NOT NULL", (PUBLISHED_VIEW,))
            published = bool(cur.fetchone()[0])  # not part-way through the migrations
            if published:
                text = "What the web service publishes: the permits the public map shows, its columns."
                cur.execute(
                    sql.SQL("COMMENT ON VIEW {} IS {}").format(sql.Identifier(PUBLISHED_VIEW), sql.Literal(text))
                )
            for view, grantee, privilege in sorted(grants):
                if view == PUBLISHED_VIEW and not published:
                    continue
                to = sql.SQL("PUBLIC") if grantee == "PUBLIC" else sql.Identifier(grantee)
                cur.execute(sql.SQL("GRANT {} ON {} TO {}").format(sql.SQL(privilege), sql.Identifier(view), to))

    @staticmethod
    def _view_grants(cur: Any) -> list[tuple[str, str, str]]:
        """Return the (view, grantee, privilege) granted on the public and published views to others than the owner."""
        # The views' ACL from the catalog (information_schema's views scan every schema's tables).
        cur.execute(
            "SELECT c.relname, CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(x.grantee) END, "
            "x.privilege_type FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) x "
            "WHERE c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace AND x.grantee <> c.relowner",
            ([PUBLIC_VIEW, PUBLISHED_VIEW],),
        )
        allowed = {"SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"}
        return [(str(v), str(g), str(p)) for v, g, p in cur.fetchall() if str(p) in allowed]

    def geom_param(self) -> str:
        """Return the SQL for a geometry parameter."""
        return f"ST_GeomFromWKB(%s, {self.srid})"

    def geom_column(self, expr: str, alias: str) -> str:
        """Return SQL selecting a geometry as ``alias``."""
        return f'ST_AsBinary({expr}) AS "{alias}"'

    def dump_geom(self, geom: shapely.Geometry | None) -> bytes | None:
        """Return a geometry as bound to :meth:`geom_param`."""
        return None if geom is None else shapely.to_wkb(geom, flavor="iso")

    def load_geom(self, value: Any) -> shapely.Geometry | None:
        """Return a selected geometry as shapely."""
        return None if value is None else shapely.from_wkb(bytes(value))

    def exists(self) -> bool:
        """Return whether the registry's tables exist.

        Raises
        ------
        RegistryError
            If the server cannot answer.
        """
        with self.read() as cur:
            cur.execute("SELECT to_regclass('esc_gis_schema')")
            row = cur.fetchone()
        return row is not None and row[0] is not None

    def create(self, srid: int, crs_wkt: str) -> None:
        """Enable PostGIS and make the schema-version table.

        Raises
        ------
        RegistryError
            If PostGIS cannot be enabled, does not know the CRS, or the registry is in another CRS.
        """
        import psycopg

        if self.srid and self.srid != srid:
            msg = (
                f"The registry at {redact(self.url)} is in EPSG:{self.srid}, not EPSG:{srid}; "
                "keep one CRS per registry."
            )
            raise RegistryError(msg)
        try:
            with self.write() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                cur.execute("CREATE EXTENSION IF NOT EXISTS postgis")
                cur.execute(_SCHEMA_TABLE)
                cur.execute("SELECT 1 FROM spatial_ref_sys WHERE srid = %s", (srid,))
                if cur.fetchone() is None:
                    msg = f"PostGIS on this server does not know EPSG:{srid}; add it to spatial_ref_sys first."
                    raise RegistryError(msg)
        except psycopg.Error as exc:
            msg = f"Cannot prepare {redact(self.url)} for a registry: {scrub(str(exc).strip(), self.url)}"
            raise RegistryError(msg) from None
        try:
            self._reach_postgis()  # just created, perhaps in a schema not on the path
        except psycopg.Error as exc:
            msg = f"Cannot prepare {redact(self.url)} for a registry: {scrub(str(exc).strip(), self.url)}"
            raise RegistryError(msg) from None
        self.srid = srid

    def load(self, kind: str, value: Any) -> Any:
        """Return a stored value of ``kind`` as Python (``bytea`` may come back as a memoryview)."""
        if kind == "blob" and value is not None:
            return bytes(value)
        return value

    def lock_table(self, cur: Any, table: str) -> None:
        """Queue the writers that number rows of ``table`` (this schema's) until the transaction ends.

        An advisory lock keyed by the table, not LOCK TABLE: that would need UPDATE on an
        append-only table, a privilege the clerk's role has no use for. Readers are not
        blocked; every numbering writer takes this lock first.
        """
        cur.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(current_schema() || '.' || %s))", (_MIGRATION_LOCK, table)
        )

    def _lock_schema(self, cur: Any) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))

    def register_layers(self, cur: Any, migration: Migration) -> None:
        """Comment the tables made so far and their columns, in the words a GeoPackage registry carries.

        PostGIS lists geometry columns in its ``geometry_columns`` view, so nothing else is
        needed. The comments are what psql's table listing, QGIS's Browser and DB Manager show:
        a table's title and abstract, and a column's alias (:mod:`esc_gis.styles`).
        """
        from psycopg import sql

        from esc_gis.styles import ALIASES, LAYER_DESCRIPTIONS

        # The catalog, not information_schema (a view that is slow on a database of many schemas), with
        # the comments already made: each migration comments only what it added or changed.
        cur.execute(
            "SELECT c.relname, a.attname, td.description, cd.description "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
            "LEFT JOIN pg_description td ON td.objoid = c.oid AND td.classoid = 'pg_class'::regclass "
            "AND td.objsubid = 0 "
            "LEFT JOIN pg_description cd ON cd.objoid = c.oid AND cd.classoid = 'pg_class'::regclass "
            "AND cd.objsubid = a.attnum "
            # By name within the schema: the catalog's (relname, relnamespace) index, not a scan of every schema's.
            "WHERE c.relname = ANY(%s) AND n.oid = current_schema()::regnamespace AND c.relkind IN ('r', 'p')",
            (list(TABLES),),
        )
        made: dict[str, dict[str, str | None]] = {}
        said: dict[str, str | None] = {}
        for table, column, table_comment, column_comment in cur.fetchall():
            made.setdefault(table, {})[column] = column_comment
            said[table] = table_comment
        for table in (t for t in TABLES if t in made):
            if table in LAYER_DESCRIPTIONS:
                title, abstract = LAYER_DESCRIPTIONS[table]
                if said.get(table) != f"{title}: {abstract}":
                    # COMMENT takes no parameters: the text goes in as a quoted literal.
                    text = sql.Literal(f"{title}: {abstract}")
                    cur.execute(sql.SQL("COMMENT ON TABLE {} IS {}").format(sql.Identifier(table), text))
            for column, comment in made[table].items():
                if column in ALIASES and comment != ALIASES[column]:
                    name = sql.Identifier(table, column)
                    cur.execute(sql.SQL("COMMENT ON COLUMN {} IS {}").format(name, sql.Literal(ALIASES[column])))

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


class _Watched:
    """A cursor that remembers the privilege its last statement needed, to name it if refused."""

    def __init__(self, cur: Any) -> None:
        self._cur = cur
        self.privilege = "SELECT"

    def execute(self, query: Any, params: Any = None) -> Any:
        self.privilege = _privilege(query)
        return self._cur.execute(query, params)

    def executemany(self, query: Any, params_seq: Any) -> Any:
        self.privilege = _privilege(query)
        return self._cur.executemany(query, params_seq)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


def _privilege(query: Any) -> str:
    """Return the privilege a statement needs: its verb; UPDATE for a row lock or LOCK TABLE."""
    text = query if isinstance(query, str) else ""
    words = text.split(None, 1)
    verb = words[0].upper() if words else "SELECT"
    if verb == "LOCK" or (verb == "SELECT" and " FOR UPDATE" in text.upper()):
        return "UPDATE"
    return verb if verb in ("SELECT", "INSERT", "UPDATE", "DELETE") else "SELECT"
