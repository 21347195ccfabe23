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
        If libpq cannot read it (a bad port, an unknown keyword, an unclosed quote), or it is a
        URI whose password holds an ``@`` or ``/`` that is not percent-encoded (libpq would take
        the password's pieces for the host, port and database), naming the problem without the password.
    """
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = {k: str(v) for k, v in conninfo_to_dict(target).items() if v is not None}
    except ProgrammingError as exc:
        fix = _UNENCODED_FIX if _unencoded(target) else _FIX
        msg = f"Cannot read the registry's connection string {redact(target)}: {scrub(str(exc).strip(), target)}. {fix}"
        raise RegistryError(msg) from None
    if _cut_password(target):
        msg = f"Cannot read the registry's connection string {redact(target)}. {_UNENCODED_FIX}"
        raise RegistryError(msg)
    return parts


_FIX = (
    "Fix: give a libpq URI (postgresql://user@host:port/dbname?sslmode=require) or key=value pairs "
    "(dbname=village user=web)."
)
#: What to do about a URI's password that is not percent-encoded.
_UNENCODED_FIX = (
    "Its password holds an @, / or % that is not percent-encoded, so libpq cannot tell where it ends. "
    "Fix: encode them (p@ss/w%rd is p%40ss%2Fw%25rd; Python: urllib.parse.quote(password, safe='')), "
    "or leave the password out of the URL and give it in PGPASSWORD or ~/.pgpass."
)


def _meant_password(target: str) -> tuple[int, int] | None:
    """Return where a URI's password lies as its writer meant it: from the ``:`` after the user to the last ``@``.

    libpq ends a URI's user and password at the first ``@`` or ``/``; a password holding either
    unencoded is cut there, and its pieces are read as the host, port and database. The last
    ``@`` is where the writer ended it. None for ``key=value`` text, or a URI without a password.
    """
    if not target.startswith(SCHEMES):
        return None
    start = target.index("://") + 3
    end = target.rfind("@")
    colon = target.find(":", start, end) if end > start else -1
    return (colon + 1, end) if colon >= 0 else None


#: Where a ``key=value`` secret starts; its value runs to its closing quote, or to the next ``key=``.
_SECRET_KEY = re.compile(r"(?<![A-Za-z_])(?:ssl)?password\s*=\s*", re.IGNORECASE)
_NEXT_KEY = re.compile(r"\s+[A-Za-z_]+\s*=")


def _written_secrets(target: str) -> list[tuple[int, int]]:
    """Return where the text's passwords lie as its writer meant them, read without libpq.

    A URI's password runs from the ``:`` after the user to the last ``@`` (:func:`_meant_password`),
    and a ``password=`` parameter to the next ``&``. In ``key=value`` text a quoted value runs to its
    closing quote (or the end, if there is none) and an unquoted one to the next ``key=``: a password
    holding a space unquoted is read by libpq as a value and a stray word, which its message names.
    """
    spans: list[tuple[int, int]] = []
    if target.startswith(SCHEMES):
        meant = _meant_password(target)
        spans += [] if meant is None else [meant]
        spans += [m.span(1) for m in re.finditer(r"[?&](?:ssl)?password=([^&]*)", target, re.IGNORECASE)]
    else:
        for m in _SECRET_KEY.finditer(target):
            start = m.end()
            if target.startswith("'", start):
                end = start + 1
                while end < len(target) and target[end] != "'":
                    end += 2 if target[end] == "\\" else 1
                spans.append((start, min(end + 1, len(target))))
            else:
                after = _NEXT_KEY.search(target, start)
                spans.append((start, after.start() if after else len(target)))
    # One span where two overlap (a URI's password whose last @ is in a ?password= value).
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _unencoded(target: str) -> bool:
    """Whether a URI's password, as its writer meant it, holds an ``@``, ``/`` or ``%`` that is not percent-encoded."""
    meant = _meant_password(target)
    written = "" if meant is None else target[meant[0] : meant[1]]
    return bool(re.search(r"[@/]|%(?![0-9A-Fa-f]{2})", written))


def _cut_password(target: str) -> bool:
    """Whether libpq cuts a URI's password short: an ``@`` follows where libpq ends the user and password.

    An ``@`` after the first ``@`` or ``/`` of the authority (and before the query) belongs to a
    password (or a name) that was not percent-encoded.
    """
    if _meant_password(target) is None:
        return False
    start = target.index("://") + 3
    cut = min((i for i in (target.find("@", start), target.find("/", start)) if i >= 0), default=-1)
    if cut < 0:
        return False
    query = target.find("?", cut)
    return "@" in target[cut + 1 : query if query >= 0 else len(target)]


def redact(target: str) -> str:
    """Return the connection string as ``key=value`` pairs without its secrets, for messages and logs.

    Text libpq cannot read, and a URI whose password holds an unencoded ``@`` or ``/`` (libpq
    would read its pieces as the host, port and database), is shown as written, with each
    password as its writer meant it (:func:`_written_secrets`: a URI's up to its last ``@``, a
    ``password=`` value up to the next ``key=`` or its closing quote) replaced.

    Examples
    --------
    >>> redact("postgresql://web:s3cret@db.example:5433/village?sslmode=require")
    'user=web password=*** dbname=village host=db.example port=5433 sslmode=require'
    >>> redact("postgresql://web:p@ss/w0rd@db.example/village")
    'postgresql://web:***@db.example/village'
    """
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        parts = conninfo_to_dict(target)
    except ProgrammingError:
        parts = None
    if parts is None or _cut_password(target):
        text = target
        for start, end in sorted(_written_secrets(target), reverse=True):
            text = f"{text[:start]}***{text[end:]}"
        return text
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
    """Return ``text`` (a server's or driver's message) with the connection string's secrets masked.

    Besides the password libpq read: when libpq cannot read the text, or cuts a URI's password
    short at an ``@`` or ``/`` that is not percent-encoded, each password as its writer meant it
    (:func:`_written_secrets`) is masked, and so is each piece of it (3 characters or more, as
    written and percent-decoded) that libpq took for something else, as its messages name them
    ("failed to resolve host ...", 'missing "=" after ...').
    """
    from urllib.parse import unquote

    read = parse_quietly(target)
    secrets = [v for k, v in read.items() if k in SECRET_KEYS and v]
    # Only where libpq could not read the text, or read it wrongly: otherwise its password is the one it read.
    if not read or _cut_password(target):
        # What libpq took for the password is one more piece: masked only if as long (a lone "r" is every r).
        secrets = [s for s in secrets if len(s) >= 3]
        for start, end in _written_secrets(target):
            written = target[start:end]
            pieces = [p for p in re.split(r"[@/:?#&=\s']", written) if len(p) >= 3]
            secrets += [written, unquote(written), *pieces, *(unquote(p) for p in pieces)]
    # The longest first: a piece inside the whole must not leave the whole's other characters showing.
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
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
