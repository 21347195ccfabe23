"""The PostGIS registry's roles: the public's reader, the inspector and the clerk, each with the least it needs.

``esc-gis permits init REGISTRY --roles`` makes three group roles (NOLOGIN: esc_gis never
holds a password) and gives each the privileges :data:`esc_gis.registry.store.schema.GRANTS`
lists, table by table:

- the **reader** reads the public view (``permits_public``) and nothing else: no phone
  number, no inspectors' notes, no money;
- the **inspector** records inspections, deficiencies, repairs and photos and reads the
  permits to find them, but changes no permit's status and reads no party;
- the **clerk** does the office's work (applications, moves, enforcement, appeals, fees,
  guarantees, amendments); the schema's migrations stay with the registry's owner.

People log in as themselves and are made members: ``CREATE ROLE alice LOGIN IN ROLE
village_inspector`` (with a password or the server's other authentication). Each grant is
first revoked, so running it again gives exactly the privileges listed, no more: it is
idempotent, and re-running it after an upgrade grants the new tables.

A GeoPackage has no roles: it is one file, protected by its file permissions only.
"""

from __future__ import annotations

__all__ = ["Roles", "create_roles", "require_postgis", "role_names"]

import os
import re
from dataclasses import dataclass
from typing import Any

from esc_gis.errors import RegistryError
from esc_gis.registry.store.backend import is_url
from esc_gis.registry.store.schema import GRANTS, ROLE_KINDS

#: PostgreSQL's longest identifier, in bytes: a longer name would be cut and never found again.
_MAX_NAME = 63


@dataclass(frozen=True)
class Roles:
    """The names of the registry's three group roles."""

    reader: str
    inspector: str
    clerk: str

    def by_kind(self) -> dict[str, str]:
        """Return ``{"reader": name, "inspector": name, "clerk": name}``."""
        return {kind: getattr(self, kind) for kind in ROLE_KINDS}


def role_names(prefix: str) -> Roles:
    """Return the role names for ``prefix``: ``<prefix>_reader``, ``<prefix>_inspector``, ``<prefix>_clerk``.

    Raises
    ------
    RegistryError
        If the prefix is empty or a name would be longer than PostgreSQL keeps (63 bytes).
    """
    prefix = prefix.strip()
    if not prefix:
        msg = 'The role prefix is empty: give one (prefix="village") or leave it out for the default.'
        raise RegistryError(msg)
    names = Roles(*(f"{prefix}_{kind}" for kind in ROLE_KINDS))
    long = [n for n in names.by_kind().values() if len(n.encode()) > _MAX_NAME]
    if long:
        msg = f"The role name {long[0]!r} is longer than PostgreSQL's {_MAX_NAME} bytes: give a shorter prefix=."
        raise RegistryError(msg)
    return names


def _default_prefix(database: str, schema: str) -> str:
    """Return the database's name, and the schema's unless it is ``public``: two registries, two sets of roles."""
    raw = database if schema == "public" else f"{database}_{schema}"
    # Roles are the server's, not the database's: a name anyone can type without quotes.
    return re.sub(r"[^A-Za-z0-9_]+", "_", raw).strip("_").lower() or "esc_gis"


def require_postgis(target: str | os.PathLike[str]) -> None:
    """Refuse a GeoPackage, saying why it has no roles and what protects it instead.

    Raises
    ------
    RegistryError
        If ``target`` is not a ``postgresql://`` URL.
    """
    if not is_url(target):
        msg = (
            f"{target} is a GeoPackage: it has no roles. A GeoPackage is one file, protected by its "
            "file permissions only (keep it readable by the office alone); give the public an export "
            "(`esc-gis permits export`, whose columns hold no contacts) instead. Roles are for a postgresql:// "
            "registry."
        )
        raise RegistryError(msg)


def create_roles(target: str | os.PathLike[str], *, prefix: str | None = None) -> Roles:
    """Create the reader, inspector and clerk roles of a PostGIS registry, and grant each its privileges.

    Parameters
    ----------
    target : str
        The registry's ``postgresql://`` URL, made by :func:`esc_gis.registry.init_registry`.
        The login must own the registry's tables and may create roles (CREATEROLE), unless
        the roles exist already.
    prefix : str, optional
        The roles' prefix; default the database's name, followed by the schema's unless that
        is ``public`` (a Village may keep two registries on one server).

    Returns
    -------
    Roles
        The three roles' names.

    Raises
    ------
    RegistryError
        If ``target`` is a GeoPackage (no roles: say so and what to do instead), is not a
        registry at this esc_gis's schema version, or the login may not create the roles
        or grant on the tables (naming what it lacks); nothing is changed then.
    """
    require_postgis(target)
    from esc_gis.registry.store.postgis import PostGISBackend

    backend = PostGISBackend(str(target))
    try:
        backend.check_version()
        with backend.write() as cur:
            backend._lock_schema(cur)
            cur.execute("SELECT current_database(), current_schema(), current_user")
            database, schema, user = cur.fetchone()
            names = role_names(_default_prefix(database, schema) if prefix is None else prefix)
            _make_roles(cur, names, user)
            _grant(cur, names, schema, user)
        return names
    finally:
        backend.close()


def _make_roles(cur: Any, names: Roles, user: str) -> None:
    """Create the roles that do not exist yet, NOLOGIN: a person logs in as a member."""
    from psycopg import sql

    wanted = list(names.by_kind().values())
    cur.execute("SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname = ANY(%s)", (wanted,))
    found = {str(name): bool(login) for name, login in cur.fetchall()}
    logins = [n for n, login in found.items() if login]
    if logins:
        # A login with the office's privileges is a person or a shared password: refuse it.
        msg = (
            f"The role {logins[0]} exists and can log in; the registry's roles are groups (NOLOGIN). "
            f"Give another prefix=, or ALTER ROLE {logins[0]} NOLOGIN and make people its members."
        )
        raise RegistryError(msg)
    missing = [n for n in wanted if n not in found]
    if not missing:
        return
    cur.execute("SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user")
    row = cur.fetchone()
    if not (row and row[0]):
        msg = (
            f"The login {user} may not create roles (it lacks CREATEROLE), and {', '.join(missing)} do not exist: "
            f"ask an administrator to run `CREATE ROLE <name> NOLOGIN` for each, or to run `esc-gis permits init "
            "--roles` as a login with CREATEROLE."
        )
        raise RegistryError(msg)
    for name in missing:
        cur.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(name)))


def _grant(cur: Any, names: Roles, schema: str, user: str) -> None:
    """Revoke every privilege of the roles on the registry's tables, then grant those of :data:`GRANTS`."""
    from psycopg import sql

    roles = names.by_kind()
    everyone = sql.SQL(", ").join(sql.Identifier(n) for n in roles.values())
    present = {}
    for table in GRANTS:
        cur.execute(
            "SELECT c.oid, pg_get_userbyid(c.relowner), pg_has_role(current_user, c.relowner, 'USAGE') "
            "FROM pg_class c WHERE c.oid = to_regclass(%s)",
            (table,),
        )
        row = cur.fetchone()
        if row is None:
            continue  # not made yet (an older or newer registry): skipped, granted when it exists
        if not row[2]:
            msg = (
                f"The login {user} does not own {table} (its owner is {row[1]}), so it cannot grant on it: "
                f"run `esc-gis permits init --roles` as {row[1]}."
            )
            raise RegistryError(msg)
        present[table] = int(row[0])
    # The roles reach the registry's schema (and PostGIS's, where its functions and types live).
    cur.execute(
        "SELECT DISTINCT n.nspname FROM pg_namespace n LEFT JOIN pg_extension e ON e.extnamespace = n.oid "
        "WHERE n.nspname = %s OR e.extname = 'postgis'",
        (schema,),
    )
    for (space,) in cur.fetchall():
        cur.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(space), everyone))
    for table, oid in present.items():
        cur.execute(sql.SQL("REVOKE ALL ON TABLE {} FROM {}").format(sql.Identifier(table), everyone))
        # A serial id's sequence: INSERT needs it.
        cur.execute(
            "SELECT s.oid::regclass::text FROM pg_class s JOIN pg_depend d ON d.classid = 'pg_class'::regclass "
            "AND d.objid = s.oid AND d.deptype IN ('a', 'i') WHERE s.relkind = 'S' AND d.refobjid = %s",
            (oid,),
        )
        sequences = [sql.SQL(str(r[0])) for r in cur.fetchall()]  # regclass text: quoted as needed
        for sequence in sequences:
            cur.execute(sql.SQL("REVOKE ALL ON SEQUENCE {} FROM {}").format(sequence, everyone))
        for kind, privileges in GRANTS[table].items():
            role = sql.Identifier(roles[kind])
            # The privileges are the code's own text (GRANTS), never a user's.
            cur.execute(sql.SQL("GRANT {} ON TABLE {} TO {}").format(sql.SQL(privileges), sql.Identifier(table), role))
            if "INSERT" in privileges:
                for sequence in sequences:
                    cur.execute(sql.SQL("GRANT USAGE ON SEQUENCE {} TO {}").format(sequence, role))
