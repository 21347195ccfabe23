"""A password is shown nowhere (issue 47, item 2): every command that takes a registry, and the service.

Each command of ``esc-gis permits`` and each top-level command with a registry option (read from
the click group itself, so a new command cannot slip past: it fails here until it has an entry
in :func:`steps`) is run against PostGIS with the owner's password in its URL, once to succeed
and again with bad input so its error paths run too. ``serve`` writes its configuration
(``--write-config``) and then really serves, briefly, as a reader login with a password of its own;
the WSGI application built from a written folder serves too, its password in the environment.
Both passwords hold characters a URL must quote (``@ : / %`` and a space). The password, raw and in each
quoted form a URL may carry it, must appear in no standard output or error, no log record (every
logger at DEBUG, psycopg's and SQLAlchemy's included), no file the test's folder holds afterwards
(exports, reports, the inspection archive's members, the calendar, the maps, the service's state
folder and written configuration) and nothing the service process printed.

A password pasted into a URL without percent-encoding (``p@ss/w%rd`` as it is) is refused before
any connection: libpq ends the password at its first ``@`` or ``/`` and read the rest as the host,
port and database, which its error messages then showed.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import subprocess
import sys
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, unquote, urlsplit

import click
import geopandas as gpd
import numpy as np
import pytest
import shapely
from click.testing import CliRunner, Result

from esc_gis.cli.main import cli

from .conftest import CRS, X0, Y0, square_sqft, write_dem, write_layer_set
from .service import esc_gis_exe, free_port, get
from .test_inspections import tiny_png


def _secret(word: str) -> str:
    """A password with every character a URL must quote, a space, and a random tail that nothing else holds."""
    return f"{word}@ss:w/rd %Q{secrets.token_hex(6)}"


def forms(password: str) -> set[str]:
    """Every way a password may be written out: as typed, URL-quoted (with and without ``/``), form-quoted."""
    found = {password, quote(password, safe=""), quote(password), quote_plus(password)}
    # The random tail alone: a password cut at one of its quoted characters still shows it.
    return found | ({password.rsplit("%Q", 1)[1]} if "%Q" in password else set())


def leaks(text: str, passwords: list[str]) -> list[str]:
    """The forms of ``passwords`` that ``text`` holds (case-insensitive: a quoted form may be in lower case)."""
    low = text.lower()
    return sorted(f for p in passwords for f in forms(p) if f.lower() in low)


# --- The logins ---------------------------------------------------------------------------------


def _url(pg_url: str, user: str, password: str, *, dbname: str | None = None, schema: str | None = None) -> str:
    parts = urlsplit(pg_url)
    url = f"postgresql://{quote(user, safe='')}:{quote(password, safe='')}@{parts.hostname}:{parts.port}"
    url += f"/{dbname or parts.path.lstrip('/')}"
    return url + (f"?options={quote(f'-csearch_path={schema},public')}" if schema else "")


@pytest.fixture
def owner(pg_url: str) -> Iterator[dict[str, str]]:
    """A login that owns a schema of its own and may create roles, with a password a URL must quote.

    Yields its URL (``url``), its password, the schema, and other forms of its URL for the error
    paths: a schema holding no registry (``empty``) and the :func:`broken_forms`.
    """
    import psycopg
    from psycopg import sql

    name, schema, password = f"own_{uuid.uuid4().hex[:8]}", f"sec_{uuid.uuid4().hex[:10]}", _secret("p")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN CREATEROLE PASSWORD {}").format(sql.Identifier(name), sql.Literal(password))
        )
        for made in (schema, f"{schema}_empty"):
            conn.execute(
                sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(sql.Identifier(made), sql.Identifier(name))
            )
    url = _url(pg_url, name, password, schema=schema)
    try:
        yield {
            **broken_forms(pg_url, name, password, schema),
            "url": url,
            "password": password,
            "schema": schema,
            "empty": _url(pg_url, name, password, schema=f"{schema}_empty"),
        }
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '5s'")
            for made in (schema, f"{schema}_empty"):
                conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(made)))
            made = [r[0] for r in conn.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE %s", (f"%{schema}%",))]
            for role in [*made, name]:
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


#: The broken forms of a login's URL each command is run with too (its error paths).
BROKEN = ("nodb", "unreadable", "unquoted", "unquoted_readable", "keywords_unquoted")


def broken_forms(pg_url: str, user: str, password: str, schema: str) -> dict[str, str]:
    """A login's URL broken as people break it, the password in each.

    ``nodb``: a database that does not exist. ``unreadable``: a port libpq cannot read.
    ``unquoted``: the password pasted into the URL as it is (its ``%`` makes the URL unreadable);
    ``unquoted_readable``: the same without the ``%`` and the space, which libpq reads as a login ending
    at the password's first ``@``, its pieces taken for the host, port and database (and shown in their
    errors). ``keywords_unquoted``: ``key=value`` text with the password unquoted (its space ends it).
    """
    parts = urlsplit(pg_url)
    url = _url(pg_url, user, password, schema=schema)
    options = quote(f"-csearch_path={schema},public")
    raw = f"postgresql://{user}:{{}}@{parts.hostname}:{parts.port}/{parts.path.lstrip('/')}?options={options}"
    return {
        "nodb": _url(pg_url, user, password, dbname="no_such_db_here", schema=schema),
        "unreadable": url.replace(f":{parts.port}/", ":port/"),
        "unquoted": raw.format(password),
        "unquoted_readable": raw.format(password.replace("%", "").replace(" ", "")),
        "keywords_unquoted": f"host={parts.hostname} port={parts.port} dbname={parts.path.lstrip('/')} user={user} "
        f"password={password} options='-csearch_path={schema},public'",
    }


def make_reader(pg_url: str, owner: dict[str, str]) -> tuple[str, str]:
    """A login in the registry's reader role, with a password a URL must quote; return (URL, password)."""
    import psycopg
    from psycopg import sql

    from esc_gis.registry.store.roles import create_roles

    roles = create_roles(owner["url"])
    # Named after the schema, so the owner fixture drops it with the registry's roles.
    name, password = f"web_{owner['schema']}", _secret("r")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                sql.Identifier(name), sql.Literal(password), sql.Identifier(roles.reader)
            )
        )
    return _url(pg_url, name, password, schema=owner["schema"]), password


# --- The scenario: every command, in an order that lets each succeed ------------------------------


def _inputs(tmp: Path) -> dict[str, Any]:
    """The files the commands read: a layer set with fees and a DEM, permits to import, sites, a photo, a plan."""
    from .test_review import _sized
    from .test_soil_loss import GOOD, _cli_inputs

    folder = tmp / "in"
    folder.mkdir()
    # As tests/test_review.py's review layers: a plane falling 5 % to the south, 5 ft cells over the Village.
    y = 2000 - 2.5 - 5 * np.arange(400)
    dem = (100 + 0.05 * y)[:, None].repeat(400, axis=1).astype("float32")
    (folder / "layers").mkdir()
    write_dem(folder / "layers" / "dem.tif", dem, y0=Y0 + 2000)
    creek = shapely.LineString([(X0, Y0 + 1150), (X0 + 2000, Y0 + 1150)])
    waters = gpd.GeoDataFrame({"water_class": ["perennial_stream"], "name": ["Test Creek"]}, geometry=[creek], crs=CRS)
    layers = write_layer_set(
        folder / "layers", waters=waters, extra='[dem]\npath = "dem.tif"\nz_unit = "us_ft"\n', fees=True
    )
    rows = [
        {
            "permit_number": "ESC-2026-0001",
            "site_address": "1 Main St",
            "received_on": "2026-09-01",
            "status": "active",
            "issued_on": "2026-09-20",
            "started_at": "2026-09-21T08:00",
            "landowner_name": "Ann Owner",
            "geometry": square_sqft(100, 100, 8000),
        },
        {
            "permit_number": "ESC-2026-0002",
            "site_address": "2 Oak St",
            "received_on": "2026-11-02",
            "geometry": square_sqft(400, 100, 5000),
        },
    ]
    gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS).to_file(folder / "import.gpkg", engine="pyogrio")
    gpd.GeoDataFrame(geometry=[square_sqft(700, 100, 4500)], crs=CRS).to_file(folder / "site.geojson")
    # The review's plan package lays its disturbed limits at local (250, 1210): this site holds them.
    gpd.GeoDataFrame(geometry=[square_sqft(250, 1210, 3000.0)], crs=CRS).to_file(folder / "small.geojson")
    (folder / "fence.png").write_bytes(tiny_png())
    soil = _cli_inputs(folder / "soil", GOOD)
    return {
        "layers": layers,
        "import": folder / "import.gpkg",
        "site": folder / "site.geojson",
        "small": folder / "small.geojson",
        "photo": folder / "fence.png",
        "plan": _sized(folder / "plan", 3_000.0),
        "soil": soil,  # soil-loss's own arguments (sites, DEM, soils, schedule), from tests/test_soil_loss.py
    }


#: One invocation: the command's words (``permits add``), its arguments (a callable given the
#: registry, so the registry goes where the command takes it), the exit it must end with, and
#: which of the login's URLs it is given (``url``; ``empty``: a schema that holds no registry).
Step = tuple[str, Callable[[str], list[str]], int] | tuple[str, Callable[[str], list[str]], int, str]


def steps(tmp: Path, inputs: dict) -> tuple[list[Step], list[Step]]:
    """Every command with a registry, in an order in which each succeeds; and each with a bad argument.

    ``serve`` is given the reader's login (``serve (the owner)``: the owner's, which it refuses).
    """
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    lay = ["--layers", str(inputs["layers"])]
    a, b, c, small = "ESC-2026-0001", "ESC-2026-0002", "ESC-2026-0003", "ESC-2026-0004"

    def p(*args: str) -> Callable[[str], list[str]]:
        """``permits WORD REGISTRY ARGS --layers L``."""
        return lambda r: [args[0], r, *args[1:], *lay]

    fee = ["--kind", "application", "--amount", "1", "--paid-on", "2026-11-02", "--receipt", "R-3"]
    inspect = [
        "--by", "holder", "--at", "2026-11-16T15:30Z", "--inspector", "Ina Inspector", "--assessment", "fence sagging",
        "--work-done", "re-staked", "--phase", "grading", "--deficiency", "fence down", "--photo", str(inputs["photo"]),
        "--location", "North fence",
    ]  # fmt: skip
    appeal = [
        "--permit", a, "--appealed", "disapproval", "--kind", "permit_decision", "--appellant", "Pat",
        "--appellant-kind", "aggrieved_person", "--on", "2026-11-20", "--grounds", "error",
    ]  # fmt: skip
    review = ["review", str(inputs["plan"]), *lay, "-o", str(out / "review.html"), "--json", str(out / "review.json")]
    serve = ["serve", "--layers", str(inputs["layers"]), "--basemap", "none"]
    soil, bad_soil = list(inputs["soil"]), list(inputs["soil"])
    if soil:  # soil-loss's output, here (the good run's, and the bad one's)
        soil[soil.index("-o") + 1] = str(out / "soil.csv")
        bad_soil[soil.index("-o") + 1] = str(out / "bad-soil.csv")
    # fmt: off
    ok: list[Step] = [
        ("permits init", p("init", "--roles"), 0),
        ("permits import", p("import", str(inputs["import"]), "--who", "clerk"), 0),
        ("permits add", p("add", "--site", str(inputs["site"]), "--address", "3 Elm St", "--received", "2026-11-02"), 0),
        ("permits add", p("add", "--site", str(inputs["small"]), "--address", "4 Small St", "--received", "2026-11-02"),
         0),
        ("permits fee", p("fee", c, *fee), 0),
        ("permits transition", p("transition", c, "under_review", "--on", "2026-11-03"), 0),
        ("permits extend", p("extend", a, "90", "--on", "2026-12-01"), 0),
        ("permits update", p("update", a, "--inspected", "2026-11-25"), 0),
        ("permits determine", p("determine", small, "--on", "2026-11-10", "--reasons", "drains", "--purpose", "waters"),
         0),
        ("permits condition", p("condition", a, "sweep Main St daily", "--on", "2026-11-06"), 0),
        ("permits certificate", p("certificate", a, "-o", str(out / "certificate.html")), 0),
        ("permits inspect", p("inspect", a, *inspect), 0),
        ("permits repaired", p("repaired", a, "--deficiency", "1", "--on", "2026-11-17T09:00Z"), 0),
        ("permits report", p("report", a, "-o", str(out / "report.html")), 0),
        ("permits report", p("report", "--from", "2026-11-01", "--to", "2026-11-30", "-o", str(out / "log.csv")), 0),
        ("permits export-inspections", p("export-inspections", "-o", str(out / "inspections.zip")), 0),
        ("permits guarantee", p("guarantee", a, "--type", "letter_of_credit", "--amount", "1000",
                                "--received-on", "2026-11-03", "--expires", "2027-12-31"), 0),
        ("permits guarantee-event", p("guarantee-event", "1", "--on", "2026-11-20", "--draw", "100",
                                      "--reason", "sweeping", "--notice-on", "2026-11-19"), 0),
        ("permits guarantees", p("guarantees"), 0),
        ("permits receipts", p("receipts", "-o", str(out / "receipts.csv")), 0),
        ("permits enforce", p("enforce", "--address", "9 Elm St", "--ground", "A4", "--on", "2026-11-20",
                              "--reasons", "grading seen, no permit"), 0),
        ("permits case", p("case", "ENF-2026-0001", "--notified", "2026-11-21", "--reasons", "letter"), 0),
        ("permits cases", p("cases", "--json"), 0),
        ("permits appeal", p("appeal", *appeal), 0),
        ("permits decide", p("decide", "APL-2026-0001", "--body", "village_board", "--outcome", "upheld",
                             "--on", "2026-11-21"), 0),
        ("permits appeals", p("appeals"), 0),
        ("permits amend", p("amend", a, "--trigger", "B3", "--notified-on", "2026-11-12", "--description",
                            "Add inlet protection", "--requested-by", "Pat Inspector"), 0),
        ("permits amendments", p("amendments"), 0),
        ("permits transition", p("transition", a, "stop_work", "--on", "2026-11-22", "--reasons", "No fence."), 0),
        ("permits retract", p("retract", a, "--reasons", "Fence up.", "--on", "2026-11-23"), 0),
        ("permits transition", p("transition", a, "suspended", "--on", "2026-11-24", "--reasons", "Notice.",
                                 "--notified-on", "2026-11-23"), 0),
        ("permits reinstate", p("reinstate", a, "--reasons", "Complied.", "--on", "2026-11-25"), 0),
        ("permits list", p("list"), 0),
        ("permits show", p("show", a, "--json"), 0),
        ("permits due", p("due", "--on", "2026-11-30"), 0),
        ("permits calendar", p("calendar", "-o", str(out / "due.ics"), "--on", "2026-11-30"), 0),
        ("permits export", p("export", "-o", str(out / "public.gpkg")), 0),
        ("permits export", p("export", "-o", str(out / "private.csv"), "--private"), 0),
        ("permits map", p("map", "--public", "-o", str(out / "public.html")), 0),
        ("permits summary", p("summary", "--from", "2026-11-01", "--to", "2026-11-30", "-o", str(out / "sum.csv")), 0),
        ("permits verify", p("verify"), 0),
        ("permits rebuild", p("rebuild"), 0),
        ("permits copy", lambda r: ["copy", r, str(out / "copy.gpkg"), "--quiet"], 0),
        ("review", lambda r: [*review, "--registry", r, "--determined", small], 0),
        ("soil-loss", lambda r: [*soil, "--registry", r], 0),
        ("serve", lambda r: [*serve, "--registry", r, "--write-config", str(out / "service")], 0),
    ]
    # Bad input: each command once with an argument it refuses, or given a schema that holds no registry.
    bad: list[Step] = [
        ("permits init", p("init", "--roles", "--role-prefix", "x" * 70), 1),
        ("permits import", p("import", str(inputs["photo"])), 1),
        ("permits add", p("add", "--site", str(inputs["site"]), "--address", "3 Elm St", "--received", "2026-11-02"), 1),
        ("permits fee", p("fee", "ESC-2026-0999", *fee), 1),
        ("permits transition", p("transition", b, "aproved"), 1),
        ("permits extend", p("extend", a, "200"), 1),
        ("permits update", p("update", "ESC-2026-0999", "--inspected", "2026-11-25"), 1),
        ("permits determine", p("determine", "ESC-2026-0999", "--on", "2026-11-10", "--reasons", "x",
                                "--purpose", "waters"), 1),
        ("permits condition", p("condition", "ESC-2026-0999", "x", "--on", "2026-11-06"), 1),
        ("permits certificate", p("certificate", b, "-o", str(out / "bad-certificate.html")), 1),
        ("permits inspect", p("inspect", "ESC-2026-0999", *inspect), 1),
        ("permits repaired", p("repaired", a, "--deficiency", "99", "--on", "2026-11-17T09:00Z"), 1),
        ("permits report", p("report", "ESC-2026-0999", "-o", str(out / "bad-report.html")), 1),
        ("permits export-inspections", p("export-inspections", "-o", str(out / "bad.zip")), 1, "empty"),
        ("permits guarantee", p("guarantee", "ESC-2026-0999", "--type", "letter_of_credit", "--amount", "1",
                                "--received-on", "2026-11-03"), 1),
        ("permits guarantee-event", p("guarantee-event", "99", "--on", "2026-11-20", "--draw", "1"), 1),
        ("permits guarantees", p("guarantees"), 1, "empty"),
        ("permits receipts", p("receipts", "-o", str(out / "bad-receipts.csv")), 1, "empty"),
        ("permits enforce", p("enforce", "--address", "9 Elm St", "--ground", "a1", "--on", "2026-11-20",
                              "--reasons", "x"), 1),
        ("permits case", p("case", "ENF-2026-0099", "--notified", "2026-11-21"), 1),
        ("permits cases", p("cases"), 1, "empty"),
        ("permits appeal", p("appeal", *[x if x != a else "ESC-2026-0999" for x in appeal]), 1),
        ("permits decide", p("decide", "APL-2026-0001", "--body", "nobody", "--outcome", "upheld",
                             "--on", "2026-11-21"), 1),
        ("permits appeals", p("appeals"), 1, "empty"),
        ("permits amend", p("amend", a, "--trigger", "orignal", "--description", "x"), 1),
        ("permits amendments", p("amendments", "ESC-2026-0999"), 1),
        ("permits retract", p("retract", b, "--reasons", "x", "--on", "2026-11-23"), 1),
        ("permits reinstate", p("reinstate", b, "--reasons", "x", "--on", "2026-11-25"), 1),
        ("permits list", p("list", "--status", "activ"), 1),
        ("permits show", p("show", "ESC-2026-0999"), 1),
        ("permits due", p("due", "--rain", str(inputs["photo"])), 1),
        ("permits calendar", p("calendar", "-o", str(out / "bad.ics")), 1, "empty"),
        ("permits export", p("export", "-o", str(out / "bad.csv"), "--status", "activ"), 1),
        ("permits map", p("map", "--public", "-o", str(out / "bad.html")), 1, "empty"),
        ("permits summary", p("summary", "--from", "2026-11-30", "--to", "2026-11-01", "-o", str(out / "s.csv")), 1),
        ("permits verify", p("verify"), 1, "empty"),
        ("permits rebuild", p("rebuild"), 1, "empty"),
        # Back into the registry it came from: refused (not empty), naming it without its password.
        ("permits copy", lambda r: ["copy", str(out / "copy.gpkg"), r, "--quiet"], 1),
        ("review", lambda r: [*review, "--overwrite", "--registry", r, "--determined", b], 2),
        ("soil-loss", lambda r: [*bad_soil, "--registry", r], 1, "empty"),
        # The office's own login may not serve: refused, naming the login without its password.
        ("serve (the owner)", lambda r: [*serve, "--registry", r, "--write-config", str(out / "refused")], 1),
    ]
    # fmt: on
    return ok, bad


def _argv(words: str, args: Callable[[str], list[str]], registry: str) -> list[str]:
    """The command line of a step: ``permits`` and the subcommand's own words, or a top-level command's."""
    return ["permits", *args(registry)] if words.startswith("permits ") else args(registry)


def _command(words: str) -> str:
    """The command a step runs (``serve (the owner)`` runs ``serve``)."""
    return words.split(" (")[0]


def _names_a_registry(param: click.Parameter) -> bool:
    """Whether a parameter takes a registry: named so, or its help offers a ``postgresql://`` URL."""
    return param.name == "registry" or "postgresql://" in (getattr(param, "help", None) or "")


def commands_with_a_registry() -> set[str]:
    """Every command of the click group that takes a registry: all of ``permits``, and each top-level
    command with a ``registry`` argument or option."""
    ctx = click.Context(cli)
    found = set()

    def walk(group: click.Group, prefix: str, ctx: click.Context) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if isinstance(command, click.Group):
                walk(command, f"{prefix}{name} ", click.Context(command, parent=ctx))
            elif prefix.startswith("permits") or any(_names_a_registry(p) for p in command.params):
                found.add(f"{prefix}{name}")

    walk(cli, "", ctx)
    return found


# --- Where a password could show -------------------------------------------------------------------


def _files(folder: Path) -> Iterator[tuple[str, bytes]]:
    """Every file under ``folder`` as (name, bytes), a zip's members opened too."""
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        yield str(path), data
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                for member in z.namelist():
                    yield f"{path}!{member}", z.read(member)


def files_leaking(folder: Path, passwords: list[str]) -> dict[str, list[str]]:
    # latin-1 reads any bytes: a GeoPackage's text, a photo's, as they lie on disk.
    return {name: found for name, data in _files(folder) if (found := leaks(data.decode("latin-1"), passwords))}


def registry_text(pg_url: str, schema: str) -> str:
    """Every row of every table and view in ``schema``, as JSON text: a registry must not record a password either."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(pg_url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchall()
        return "\n".join(
            str(row[0])
            for (table,) in tables
            for row in conn.execute(
                sql.SQL("SELECT row_to_json(t)::text FROM {}.{} t").format(
                    sql.Identifier(schema), sql.Identifier(table)
                )
            )
        )


def _log_text(caplog: pytest.LogCaptureFixture) -> str:
    """Every record: its message, its arguments and its exception (formatted as a handler would)."""
    parts = []
    formatter = logging.Formatter("%(name)s %(message)s")
    for record in caplog.records:
        parts.append(formatter.format(record))
        parts.append(repr(record.args))
    return "\n".join(parts)


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Every logger at DEBUG: a driver that logs its connection string is caught too."""
    caplog.set_level(logging.DEBUG)
    for name in (
        "psycopg",
        "psycopg.pool",
        "sqlalchemy",
        "sqlalchemy.engine",
        "sqlalchemy.pool",
        "pygeoapi",
        "esc_gis",
    ):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def invoke(args: list[str]) -> Result:
    """Run ``esc-gis -vvv ARGS`` (DEBUG logging, as a user chasing a problem runs it) in this process."""
    return CliRunner().invoke(cli, ["-vvv", *args])


# --- The tests -------------------------------------------------------------------------------------------


def test_every_command_with_a_registry_has_an_invocation_here(tmp_path: Path) -> None:
    """A command added later fails here until :func:`steps` runs it, to success and to a refusal."""
    inputs = dict.fromkeys(("layers", "import", "site", "small", "photo", "plan"), tmp_path)
    ok, bad = steps(tmp_path, {**inputs, "soil": []})
    every = commands_with_a_registry()
    assert {"permits init", "permits verify", "review", "soil-loss", "serve"} <= every  # the walk finds them
    for table, what in ((ok, "successful"), (bad, "failing")):
        missing = every - {_command(step[0]) for step in table}
        assert not missing, f"no {what} invocation in test_secrets.steps for: {sorted(missing)}; add one"


def _check(r: Result, shown: str, code: int | None, passwords: list[str]) -> list[str]:
    """What is wrong with one run: an unexpected exit (``code`` None: any but 0), a traceback, a password shown."""
    problems = []
    if (r.exit_code != code) if code is not None else r.exit_code == 0:
        problems.append(f"{shown}, expected {code if code is not None else 'a failure'}:\n{r.stdout}\n{r.stderr}")
    for where, text in (("stdout", r.stdout), ("stderr", r.stderr)):
        if found := leaks(text, passwords):
            problems.append(f"{shown}: the password ({found}) on {where}:\n{text}")
    if "Traceback" in r.output or (r.exception is not None and not isinstance(r.exception, SystemExit)):
        problems.append(f"{shown}: a traceback or an exception ({r.exception!r}):\n{r.output}")
    return problems


@pytest.mark.slow  # tens of seconds on 2 cores
def test_no_command_shows_a_password(pg_url: str, owner, tmp_path: Path, all_logs) -> None:
    """Every command, to success and to refusal, with the owner's password in the registry's URL
    (``serve``: the reader's); then each again with its URL broken (:func:`broken_forms`); then the
    logs, every file written and the registry's own tables."""
    inputs = _inputs(tmp_path)
    passwords = [owner["password"], urlsplit(pg_url).password or "-"]
    logins: dict[str, dict[str, str]] = {"owner": owner}

    def login(words: str) -> dict[str, str]:
        if words != "serve":
            return owner
        if "reader" not in logins:  # its role exists once `init --roles` has run
            url, password = make_reader(pg_url, owner)
            passwords.append(password)
            user = unquote(urlsplit(url).username or "")
            logins["reader"] = {"url": url, **broken_forms(pg_url, user, password, owner["schema"])}
        return logins["reader"]

    problems: list[str] = []
    ok, bad = steps(tmp_path, inputs)
    for words, args, code, *which in ok + bad:
        r = invoke(_argv(words, args, login(words)[which[0] if which else "url"]))
        problems += _check(r, f"{words} -> exit {r.exit_code}", code, passwords)
    # Into a folder of their own: an output left by the runs above would be refused before the registry is read.
    (tmp_path / "broken").mkdir()
    for words, args, *_ in steps(tmp_path / "broken", inputs)[0]:
        for broken in BROKEN:
            r = invoke(_argv(words, args, login(words)[broken]))
            problems += _check(r, f"{words} with the {broken} URL -> exit {r.exit_code}", None, passwords)
    if found := leaks(_log_text(all_logs), passwords):
        problems.append(f"the password ({found}) in the log records")
    for name, found in files_leaking(tmp_path, passwords).items():
        problems.append(f"the password ({found}) in the file {name}")
    if found := leaks(registry_text(pg_url, owner["schema"]), passwords):
        problems.append(f"the password ({found}) in the registry's own tables")
    assert not problems, "\n\n".join(problems)


def _serve(args: list[str], log: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """Start ``esc-gis -vvv serve ARGS`` on a free port, its output into ``log``; wait until it answers."""
    port = free_port()
    cmd = [esc_gis_exe(), "-vvv", "serve", *args, "--port", str(port)]
    with log.open("w") as out:  # the process holds its own copy of the file
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if get(f"{base}/health")[0] == 200:
                return proc, base
        except OSError:
            pass
        time.sleep(0.3)
    proc.kill()
    proc.wait()
    raise AssertionError(f"esc-gis serve did not start:\n{log.read_text()}")


@pytest.mark.slow  # tens of seconds on 2 cores
def test_the_service_shows_no_password(pg_url: str, owner, tmp_path: Path) -> None:
    """A real ``esc-gis serve`` with the reader's password in its URL, logging at DEBUG: not in its
    output, its state folder, nor any answer, a refusal's included."""
    from .service import DEMO_LAYERS, fill_registry

    fill_registry(owner["url"], n=2)
    reader, password = make_reader(pg_url, owner)
    passwords = [password, owner["password"], urlsplit(pg_url).password or "-"]
    env = dict(os.environ, ESC_GIS_SERVE_WORKERS="1")
    state, log = tmp_path / "state", tmp_path / "serve.log"
    args = ["--registry", reader, "--layers", str(DEMO_LAYERS), "--basemap", "none", "--state-dir", str(state)]
    proc, base = _serve(args, log, env)
    answers = []
    try:
        site = {
            "type": "Polygon",
            "coordinates": [[[-88.75, 44.11], [-88.749, 44.11], [-88.749, 44.111], [-88.75, 44.11]]],
        }
        for path in (
            "/", "/ogc", "/ogc/openapi?f=json", "/ogc/collections", "/ogc/collections/permits",
            "/ogc/collections/permits/items?f=json",
            "/ogc/collections/permits/items?limit=x", "/ogc/collections/permits/items/ESC-0000-0000?f=json",
            "/ogc/collections/permits/queryables?f=json",
        ):  # fmt: skip
            status, _, body = get(f"{base}{path}")
            answers.append((path, status, body.decode("utf-8", "replace")))
        first = json.loads(answers[5][2])["features"][0]["id"]
        status, _, body = get(f"{base}/ogc/collections/permits/items/{first}?f=json")
        answers.append(("one permit", status, body.decode("utf-8", "replace")))
        body = json.dumps({"inputs": {"site": site}}).encode()
        for data in (body, b"[]", b"{"):
            status, _, got = get(f"{base}/ogc/processes/screen/execution", data=data, method="POST",
                                 headers={"Content-Type": "application/json"})  # fmt: skip
            answers.append(("screen", status, got.decode("utf-8", "replace")))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    problems = [f"{path} ({status}): {found}" for path, status, text in answers if (found := leaks(text, passwords))]
    assert [a[1] for a in answers if a[0] in ("/", "/ogc/collections/permits/items?f=json", "one permit")] == [200] * 3
    if found := leaks(log.read_text(), passwords):
        problems.append(f"the password ({found}) in the service's output:\n{log.read_text()}")
    problems += [
        f"the password ({found}) in the file {name}" for name, found in files_leaking(tmp_path, passwords).items()
    ]
    assert list(state.iterdir()), "the state folder was kept, and is searched"
    assert not problems, "\n\n".join(problems)


#: A WSGI server of the deployment's own, in a process of its own (pygeoapi reads its configuration once
#: per process): the application ``--write-config`` wrote, asked for pages, its log at DEBUG on stderr.
_WSGI = """
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
from werkzeug.test import Client
from esc_gis.serve.wsgi import load_application
client = Client(load_application(sys.argv[1]))
for path in sys.argv[2:]:
    answer = client.get(path)
    print(path, answer.status_code, answer.get_data(as_text=True))
"""


@pytest.mark.slow  # tens of seconds on 2 cores
def test_the_written_configuration_serves_without_showing_the_password(pg_url: str, owner, tmp_path: Path) -> None:
    """``serve --write-config`` with a ``key=value`` login, then the WSGI application built from that folder
    with the password in ``ESC_GIS_SERVE_DB_PASSWORD``, as the service guide deploys it: the folder, the
    application's answers and its DEBUG log hold no password."""
    from .service import DEMO_LAYERS, fill_registry

    fill_registry(owner["url"], n=2)
    reader, password = make_reader(pg_url, owner)
    passwords = [password, owner["password"], urlsplit(pg_url).password or "-"]
    folder = tmp_path / "service"
    args = ["serve", "--registry", _keywords(reader), "--layers", str(DEMO_LAYERS), "--write-config", str(folder)]
    r = invoke([*args, "--basemap", "none"])
    problems = _check(r, "serve --write-config", 0, passwords)
    env = dict(os.environ, ESC_GIS_SERVE_DB_PASSWORD=password)
    env.pop("PGPASSWORD", None)
    paths = ["/", "/ogc/collections/permits/items?f=json", "/ogc/collections/permits/items?limit=x", "/health"]
    ran = subprocess.run(
        [sys.executable, "-c", _WSGI, str(folder), *paths], capture_output=True, text=True, env=env, timeout=180
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "/ogc/collections/permits/items?f=json 200" in ran.stdout, ran.stdout[:2000]  # it served, logged in
    for where, text in (("answers", ran.stdout), ("log", ran.stderr)):
        if found := leaks(text, passwords):
            problems.append(f"the password ({found}) in the WSGI application's {where}")
    problems += [
        f"the password ({found}) in the file {name}" for name, found in files_leaking(tmp_path, passwords).items()
    ]
    assert not problems, "\n\n".join(problems)


def _keywords(url: str) -> str:
    """The libpq ``key=value`` form of a URL (values quoted as libpq reads them)."""
    from esc_gis.registry.store.conninfo import parse

    def quoted(v: str) -> str:
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"

    return " ".join(f"{k}={quoted(v)}" for k, v in parse(url).items())


def _query(url: str) -> str:
    """The URL with its password given as ``?password=`` instead of in its userinfo."""
    parts = urlsplit(url)
    password = quote(unquote(parts.password or ""), safe="")
    return f"postgresql://{parts.username}@{parts.hostname}:{parts.port}{parts.path}?password={password}&{parts.query}"


@pytest.mark.slow
@pytest.mark.parametrize("form", ["query", "keywords"])
def test_other_forms_of_the_password_are_shown_nowhere(form: str, pg_url: str, owner, tmp_path: Path, all_logs) -> None:
    """``?password=`` and a ``key=value`` string: a few commands, their refusals and ``serve --write-config``."""
    shape = {"query": _query, "keywords": _keywords}[form]
    inputs = _inputs(tmp_path)
    ok, bad = steps(tmp_path, inputs)
    wanted = {"permits init", "permits add", "permits list", "permits show", "permits verify", "permits rebuild",
              "permits export", "serve", "serve (the owner)"}  # fmt: skip
    owner_url = shape(owner["url"])
    passwords = [owner["password"]]
    problems: list[str] = []
    reader = ""
    for words, args, code, *which in ok + bad:
        if words not in wanted or which:
            continue
        if words == "serve" and not reader:
            url, password = make_reader(pg_url, owner)
            reader = shape(url)
            passwords.append(password)
        r = invoke(_argv(words, args, reader if words == "serve" else owner_url))
        problems += _check(r, f"{words} ({form}) -> exit {r.exit_code}", code, passwords)
    if found := leaks(_log_text(all_logs), passwords):
        problems.append(f"the password ({found}) in the log records")
    problems += [
        f"the password ({found}) in the file {name}" for name, found in files_leaking(tmp_path, passwords).items()
    ]
    assert not problems, "\n\n".join(problems)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        # libpq cannot read it; its message quotes the token it could not decode.
        (
            "postgresql://web:p@ss:w/rd%Qk7x9z2@db.example:5432/village",
            'invalid percent-encoded token: "rd%Qk7x9z2@db.example:5432/village"',
        ),
        # Read as host "ss", port "w" and database "rdQk7x9z2@db.example:5432/village".
        (
            "postgresql://web:p@ss:w/rdQk7x9z2@db.example:5432/village",
            'database "rdQk7x9z2@db.example:5432/village" does not exist',
        ),
        # Read as host "ssQk7x9z2@db.example".
        ("postgresql://web:p@ssQk7x9z2@db.example/village", "failed to resolve host 'ssQk7x9z2@db.example'"),
        # Read as host "web", port "pa", database "ssQk7x9z2@db.example/village".
        ("postgresql://web:pa/ssQk7x9z2@db.example/village", 'database "ssQk7x9z2@db.example/village"'),
    ],
    ids=["unreadable", "cut at @ and /", "cut at @", "cut at /"],
)
def test_a_password_not_percent_encoded_is_refused_and_shown_nowhere(url: str, said: str) -> None:
    """libpq ends a URI's password at its first ``@`` or ``/``: the rest became the host, port or database,
    and the errors naming them showed the password's pieces. Refused before any connection, with the fix."""
    from esc_gis.errors import RegistryError
    from esc_gis.registry.store.conninfo import parse, redact, scrub

    with pytest.raises(RegistryError) as err:
        parse(url)
    assert "Qk7x9z2" not in str(err.value) and "not percent-encoded" in str(err.value)
    assert "p%40ss%2Fw%25rd" in str(err.value) and "PGPASSWORD" in str(err.value)
    assert redact(url).startswith("postgresql://web:***@db.example") and "Qk7x9z2" not in redact(url)
    # A driver's message naming what libpq made of it (the service connects before it parses).
    assert "Qk7x9z2" not in scrub(said, url) and "***" in scrub(said, url)


def test_an_encoded_password_is_read_and_a_readable_message_keeps_its_words() -> None:
    """The same password percent-encoded is read whole; a message is masked where it holds it, nowhere else."""
    from esc_gis.registry.store.conninfo import parse, scrub

    password = "p@ss:w/rd%Qk7x9z2"
    url = f"postgresql://web:{quote(password, safe='')}@db.example/village?sslmode=require"
    assert parse(url)["password"] == password and parse(url)["host"] == "db.example"
    assert scrub(f"no pg_hba.conf entry for host 'db.example', user 'web' ({password})", url) == (
        "no pg_hba.conf entry for host 'db.example', user 'web' (***)"
    )


def test_a_key_value_password_with_a_space_left_unquoted_is_shown_nowhere() -> None:
    """libpq reads ``password=p@ss w/rd`` as the password ``p@ss`` and a stray word, which its message quoted."""
    from esc_gis.errors import RegistryError
    from esc_gis.registry.store.conninfo import parse, redact

    text = "host=db.example dbname=village password=p@ss w/rdQk7x9z2 port=5432"
    with pytest.raises(RegistryError) as err:
        parse(text)
    assert "Qk7x9z2" not in str(err.value) and "Fix:" in str(err.value)
    assert redact(text) == "host=db.example dbname=village password=*** port=5432"
