"""A password works in every form libpq reads it, for the commands and the service, on a server that checks it.

The test server checks every login's password (scram-sha-256, as a production server does:
``tests/pg_server.py``). A Village gives the password one of six ways, and every one must log
in, for the office's commands and for ``esc-gis serve`` (its check, pygeoapi's own connection,
the OpenAPI document, ``--write-config``):

- in the URL's userinfo: ``postgresql://web:PW@db/village`` (the service did not start: pygeoapi's
  providers, asked for the OpenAPI document, connected with the literal ``${ESC_GIS_SERVE_DB_PASSWORD}``);
- as a parameter: ``postgresql://web@db/village?password=PW``;
- in ``key=value`` text: ``host=db dbname=village user=web password=PW``;
- in ``PGPASSWORD``; in a password file (``PGPASSFILE``, ``~/.pgpass``); in a service file
  (``PGSERVICEFILE``, ``service=village_web``).

And once, a server that requires TLS, with a certificate made in the test: the login is checked
with ``sslmode=verify-full`` and pygeoapi's connection is encrypted too.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
import yaml
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import RegistryError
from esc_gis.registry.store.conninfo import parse
from esc_gis.serve.config import ServiceSettings, check_public_login, prepare_service

from .conftest import throwaway_pg
from .service import DEMO_LAYERS, fill_registry, get, pg_schema, public_login, served

FORMS = ("userinfo", "parameter", "keywords", "PGPASSWORD", "pgpass", "service")


def in_form(url: str, form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Return the login of ``url`` (userinfo form) given the ``form`` way; set the environment it needs."""
    p = parse(url)
    password = p.pop("password")
    parts = urlsplit(url)
    bare = parts._replace(netloc=f"{quote(p['user'])}@{parts.hostname}:{parts.port}").geturl()
    if form == "userinfo":
        return url
    if form == "parameter":
        return f"{bare}&password={quote(password, safe='')}" if "?" in bare else f"{bare}?password={quote(password)}"
    if form == "keywords":
        return " ".join(f"{k}='{v}'" for k, v in {**p, "password": password}.items())
    if form == "PGPASSWORD":
        monkeypatch.setenv("PGPASSWORD", password)
        return bare
    if form == "pgpass":
        passfile = tmp_path / f"pgpass_{uuid.uuid4().hex[:6]}"
        passfile.write_text(f"{p['host']}:{p['port']}:{p['dbname']}:{p['user']}:{password}\n", encoding="utf-8")
        passfile.chmod(0o600)  # libpq ignores a password file others may read
        monkeypatch.setenv("PGPASSFILE", str(passfile))
        return bare
    name = f"village_{uuid.uuid4().hex[:6]}"
    services = tmp_path / f"pg_service_{name}.conf"
    lines = [f"[{name}]", *(f"{k}={v}" for k, v in {**p, "password": password}.items())]
    services.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    return f"service={name}"


@pytest.fixture(scope="module")
def registry(pg_url: str):
    """(the office's URL, the reader's URL), both with their passwords, on a filled registry."""
    target = pg_schema(pg_url)
    fill_registry(target, n=2)
    with public_login(target) as reader:
        yield target, reader


@pytest.mark.parametrize("form", FORMS)
def test_every_form_logs_the_office_in_and_is_never_shown(
    form: str, registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    office, _ = registry
    password, login = parse(office)["password"], in_form(office, form, tmp_path, monkeypatch)
    for args in (["permits", "list", login], ["permits", "verify", login], ["permits", "init", login]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0, res.output
        assert password not in res.output
    assert "ESC-2026-0001" in CliRunner().invoke(cli, ["permits", "list", login]).output


@pytest.mark.parametrize("form", FORMS)
def test_every_form_starts_the_service_and_writes_no_password(
    form: str, registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check, pygeoapi's provider (asked who it is, and for the OpenAPI document) and
    ``--write-config`` all log in; the written folder holds no password."""
    _, reader = registry
    password, login = parse(reader)["password"], in_form(reader, form, tmp_path, monkeypatch)
    out = tmp_path / "deploy"
    res = CliRunner().invoke(cli, ["serve", "--registry", login, "--layers", str(DEMO_LAYERS), "--write-config", out])
    assert res.exit_code == 0, res.output
    assert password not in res.output
    assert json.loads((out / "openapi.json").read_text())["paths"]  # pygeoapi's providers connected
    for f in out.iterdir():
        assert password.encode() not in f.read_bytes(), f.name
    data = yaml.safe_load((out / "pygeoapi-config.yml").read_text())["resources"]["permits"]["providers"][0]["data"]
    assert data["user"] == parse(reader)["user"]


@pytest.mark.parametrize("form", ["userinfo", "service"])
def test_the_service_serves_the_permits_with_each_form(
    form: str, registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real ``esc-gis serve``: it started, and the permits come from PostGIS (the bug: it did not start)."""
    _, reader = registry
    password, login = parse(reader)["password"], in_form(reader, form, tmp_path, monkeypatch)
    logs: list[str] = []
    with served(login, logs=logs) as base:  # the PG* variables set here reach it in its environment
        status, _, body = get(f"{base}/ogc/collections/permits/items?f=json")
        assert status == 200 and json.loads(body)["numberMatched"] == 2  # active, and under a stop-work order
    assert password not in "".join(logs)


def test_a_wrong_password_is_refused_with_the_fix_and_without_it(registry) -> None:
    _, reader = registry
    password = parse(reader)["password"]
    wrong = reader.replace(f":{password}@", ":not-the-password@")
    with pytest.raises(RegistryError) as err:
        check_public_login(wrong)
    assert "password authentication failed" in str(err.value)
    assert "not-the-password" not in str(err.value) and password not in str(err.value)
    res = CliRunner().invoke(cli, ["permits", "list", wrong.replace(parse(reader)["user"], "esc")])
    assert res.exit_code == 1 and "not-the-password" not in res.output and "Traceback" not in res.output


# --- Once: a server that requires TLS ------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_url(tmp_path_factory: pytest.TempPathFactory):
    """A second throwaway cluster that takes TCP logins over TLS only (its own CA, made here by openssl)."""
    with throwaway_pg(tls=True) as url:
        yield url


def test_tls_verified_reaches_pygeoapi_and_no_tls_is_refused(tls_url: str, tmp_path: Path) -> None:
    target = pg_schema(tls_url)
    fill_registry(target, n=1)
    with public_login(target) as reader:
        assert parse(reader)["sslmode"] == "verify-full"
        login, _ = check_public_login(reader)
        assert login.ssl and login.keywords["sslrootcert"].endswith("ca.pem")
        # prepare_service asks pygeoapi's own connection who it is: TLS on both, or it refuses to start.
        files = prepare_service(ServiceSettings(registry=reader, state_dir=tmp_path / "s", layers=DEMO_LAYERS))
        options = yaml.safe_load(files.config.read_text())["resources"]["permits"]["providers"][0]["options"]
        assert options["sslmode"] == "verify-full"
        plain = reader.replace("sslmode=verify-full", "sslmode=disable")
        with pytest.raises(RegistryError) as err:
            check_public_login(plain)
        assert "no encryption" in str(err.value) and parse(reader)["password"] not in str(err.value)


def test_a_password_not_percent_encoded_is_refused_by_serve_with_the_fix(registry) -> None:
    """libpq cuts ``web:p@ss/word@db`` at the first ``@``: the service says how to write it, not "cannot resolve host"."""
    _, reader = registry
    broken = reader.replace(f":{parse(reader)['password']}@", ":q@rt/w0rd@")
    with pytest.raises(RegistryError) as err:
        check_public_login(broken)
    assert "q@rt" not in str(err.value) and "w0rd" not in str(err.value)
    assert "percent" in str(err.value).lower() or "encod" in str(err.value).lower()
