"""Read PostgreSQL connection strings the one way libpq does, and show them without their password.

A registry, ``esc-gis serve`` and every command that takes ``REGISTRY`` name a PostGIS database
with a libpq connection string: a URI (``postgresql://web@/village?host=/var/run/postgresql``,
``postgresql://[::1]:5433/village?sslmode=require``) or ``key=value`` pairs
(``dbname=village user=web``). psycopg's :func:`psycopg.conninfo.conninfo_to_dict` reads both as
libpq does; splitting a URI by hand lost the socket folder, the user given as a parameter and
``sslmode`` (issue 35). This module is the only place a connection string is read.

The login a live connection actually used (after libpq's defaults, ``PG*`` variables, a service
file and a password file) is :func:`effective_login`; the service hands pygeoapi exactly that
login, so the one checked is the one that serves.
"""

from __future__ import annotations

__all__ = ["Login", "effective_login", "is_conninfo", "parse", "redact", "scrub", "shown"]

import os
import re
from dataclasses import dataclass, field
from typing import Any

from esc_gis.errors import RegistryError

#: The URI schemes libpq accepts.
SCHEMES = ("postgresql://", "postgres://")
#: Keywords whose value is a secret, never shown.
SECRET_KEYS = frozenset({"password", "sslpassword"})
#: The keywords that say which login is used: pygeoapi is given them as the live connection saw them.
LOGIN_KEYS = frozenset({"host", "port", "dbname", "user", "password"})
#: ``key=value`` text opens with a libpq keyword and an equals sign (``dbname=village``, ``host = db``).
_KEYWORD_START = re.compile(r"^\s*[a-z_]+\s*=")


def is_conninfo(target: str | os.PathLike[str]) -> bool:
    """Return whether ``target`` names a PostgreSQL database rather than a GeoPackage file.

    A URI (``postgresql://``, ``postgres://``) or libpq ``key=value`` text (``dbname=village
    user=web``) names a database; any other text, or a file that exists, is a path.

    Examples
    --------
    >>> is_conninfo("postgresql:///village?host=/var/run/postgresql")
    True
    >>> is_conninfo("dbname=village user=web")
    True
    >>> is_conninfo("permits.gpkg")
    False
    """
    text = os.fspath(target)
    if not isinstance(text, str):
        return False
    if text.startswith(SCHEMES):
        return True
    return bool(_KEYWORD_START.match(text)) and not text.lower().endswith(".gpkg") and not os.path.exists(text)


def parse(target: str) -> dict[str, str]:
    """Return the libpq keywords of a connection string, as libpq reads them.

    Raises
    ------
    RegistryError
        If libpq cannot read it (a bad port, an unknown keyword, an unclosed quote), naming the
        problem without the password.
    """
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        return {k: str(v) for k, v in conninfo_to_dict(target).items() if v is not None}
    except ProgrammingError as exc:
        msg = (
            f"Cannot read the registry's connection string {redact(target)}: {scrub(str(exc).strip(), target)}. "
            "Fix: give a libpq URI (postgresql://user@host:port/dbname?sslmode=require) or key=value pairs "
            "(dbname=village user=web)."
        )
        raise RegistryError(msg) from None


def redact(target: str) -> str:
    """Return the connection string as ``key=value`` pairs without its secrets, for messages and logs.

    Text libpq cannot read is shown with anything after a ``:`` before an ``@`` and any
    ``password=`` value replaced, as it may hold one.

    Examples
    --------
    >>> redact("postgresql://web:s3cret@db.example:5433/village?sslmode=require")
    'user=web password=*** dbname=village host=db.example port=5433 sslmode=require'
    """
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        parts = conninfo_to_dict(target)
    except ProgrammingError:
        text = re.sub(r"(://[^:/@?]*):[^@/?]*@", r"\1:***@", target)
        return re.sub(r"(password\s*=\s*)('[^']*'|\S+)", r"\1***", text, flags=re.IGNORECASE)
    # A secret's place is kept (``password=***``): the reader sees one was given, not what it is.
    return make_conninfo("", **{k: ("***" if k in SECRET_KEYS else v) for k, v in parts.items() if v is not None})


def shown(target: str | os.PathLike[str]) -> str:
    """Return a registry as people are shown it: a file's path as given, a connection string without its secrets.

    The one way every command, log line and written file names a registry: a password given
    in a URL (``postgresql://web:PW@db/village``), as ``?password=`` or ``password=`` is
    masked (:func:`redact`).

    Examples
    --------
    >>> shown("permits.gpkg")
    'permits.gpkg'
    >>> shown("postgresql://clerk:s3cret@db.example/village")
    'user=clerk password=*** dbname=village host=db.example'
    >>> shown("dbname=village password=s3cret")
    'password=*** dbname=village'
    """
    text = os.fspath(target)
    return redact(text) if is_conninfo(text) else text


def scrub(text: str, target: str) -> str:
    """Return ``text`` (a server's or driver's message) with the connection string's secrets masked."""
    try:
        secrets = [v for k, v in parse_quietly(target).items() if k in SECRET_KEYS and v]
    except Exception:
        secrets = []
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def parse_quietly(target: str) -> dict[str, str]:
    """Return :func:`parse`'s keywords, or none when libpq cannot read the text (no message, so no recursion)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        return {k: str(v) for k, v in conninfo_to_dict(target).items() if v is not None}
    except Exception:
        return {}


@dataclass(frozen=True)
class Login:
    """The login a live connection used, and the connection string's other libpq keywords.

    Attributes
    ----------
    host, port, dbname, user : str or int
        As the server was reached: ``host`` is a name, an address or a socket folder.
    password : str or None
        The password the connection string gave (None: libpq found one itself, or none was needed).
    keywords : dict
        Every other libpq keyword of the connection string (``sslmode``, ``sslrootcert``,
        ``options``, ``hostaddr``, ``service``...), passed on unchanged.
    ssl : bool
        Whether the connection was encrypted.
    """

    host: str
    port: int
    dbname: str
    user: str
    password: str | None
    keywords: dict[str, str] = field(default_factory=dict)
    ssl: bool = False

    def describe(self) -> str:
        """Say who connects where, without the password (``web@/var/run/postgresql:5432/village, TLS``)."""
        return f"{self.user}@{self.host}:{self.port}/{self.dbname}" + (", TLS" if self.ssl else ", no TLS")


def effective_login(conn: Any, target: str) -> Login:
    """Return the login a live psycopg connection used, with ``target``'s other keywords.

    Parameters
    ----------
    conn : psycopg.Connection
        A connection opened from ``target``.
    target : str
        Its connection string.

    Returns
    -------
    Login

    Raises
    ------
    RegistryError
        If the connection string cannot be read (:func:`parse`).
    """
    keywords = parse(target)
    info = conn.info
    ssl = bool(conn.pgconn.ssl_in_use) if hasattr(conn.pgconn, "ssl_in_use") else False
    others = {k: v for k, v in keywords.items() if k not in LOGIN_KEYS}
    return Login(
        host=str(info.host),
        port=int(info.port),
        dbname=str(info.dbname),
        user=str(info.user),
        password=keywords.get("password"),
        keywords=others,
        ssl=ssl,
    )
