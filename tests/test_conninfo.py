"""Connection strings read one way, libpq's: the login checked is the login that serves (issue 35).

:mod:`esc_gis.registry.store.conninfo` reads every libpq form (URIs with the host as a socket
folder or an IPv6 address, parameters after ``?``, ``key=value`` pairs) with psycopg's
``conninfo_to_dict``; the service hands pygeoapi the login its check's live connection used, and
refuses to start if pygeoapi's own connection is anyone else. Passwords appear in no message.
The PostGIS half connects for real: over TCP and through the server's socket folder, with
``sslmode`` ``disable`` and ``prefer`` (the test server has no TLS, so ``require`` must fail).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import RegistryError
from esc_gis.registry.store.backend import is_url, open_backend
from esc_gis.registry.store.conninfo import is_conninfo, parse, redact
from esc_gis.serve.config import (
    PASSWORD_ENV,
    SESSION_OPTIONS,
    ServiceSettings,
    _pg_provider,
    _pg_srid,
    check_public_login,
    check_pygeoapi_login,
    prepare_service,
)

from .service import DEMO_LAYERS, fill_registry, pg_schema, public_login

SECRET = "s3cr3t-Pa55"


# -- reading: every form libpq reads, read as libpq reads it ---------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The socket folder and the user as parameters: the hand-split URL gave host=localhost, user=''.
        (
            "postgresql:///village?host=/var/run/postgresql&user=web",
            {"dbname": "village", "host": "/var/run/postgresql", "user": "web"},
        ),
        # sslmode was dropped: the service's connection lost its TLS requirement.
        (
            "postgresql://web@db.example:6543/village?sslmode=require&sslrootcert=/etc/ssl/ca.pem",
            {
                "user": "web",
                "host": "db.example",
                "port": "6543",
                "dbname": "village",
                "sslmode": "require",
                "sslrootcert": "/etc/ssl/ca.pem",
            },
        ),
        ("postgresql://web@[::1]:5433/village", {"user": "web", "host": "::1", "port": "5433", "dbname": "village"}),
        ("postgres://web@%2Ftmp%2Fpg/village", {"user": "web", "host": "/tmp/pg", "dbname": "village"}),
        (
            "postgresql://web@h/v?options=-csearch_path%3Dreg%2Cpublic",
            {"user": "web", "host": "h", "dbname": "v", "options": "-csearch_path=reg,public"},
        ),
        (
            "dbname=village user=web host=/var/run/postgresql sslmode=prefer",
            {"dbname": "village", "user": "web", "host": "/var/run/postgresql", "sslmode": "prefer"},
        ),
        ("service=village_web", {"service": "village_web"}),
    ],
)
def test_every_libpq_form_is_read_as_libpq_reads_it(text: str, expected: dict[str, str]) -> None:
    assert parse(text) == expected
    assert is_conninfo(text) and is_url(text)


@pytest.mark.parametrize("path", ["permits.gpkg", "data/permits.gpkg", "registry", "a=b.gpkg", "C:\\reg\\p.gpkg"])
def test_paths_are_files_not_databases(path: str) -> None:
    assert not is_conninfo(path)


def test_a_file_that_exists_is_a_file_even_if_its_name_looks_like_keywords(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("dbname=x").write_text("")
    assert not is_conninfo("dbname=x")
    assert is_conninfo("dbname=y")


@pytest.mark.parametrize(
    "text",
    [
        f"postgresql://web:{SECRET}@db.example:5432/village?sslmode=require",
        f"postgresql://db.example/village?user=web&password={SECRET}",
        f"host=db.example dbname=village user=web password={SECRET}",
        f"host=db.example dbname=village user=web password='{SECRET}'",
        f"postgresql://web:{SECRET}@db.example:notaport/village",  # libpq cannot read it: masked all the same
        f"host=db.example password={SECRET} dbname='unclosed",
    ],
)
def test_no_password_is_shown(text: str) -> None:
    shown = redact(text)
    assert SECRET not in shown
    assert "db.example" in shown


def test_a_string_libpq_cannot_read_is_refused_with_the_fix_and_no_password() -> None:
    with pytest.raises(RegistryError) as err:
        parse(f"postgresql://web:{SECRET}@db.example/village?sslmod=require")
    text = str(err.value)
    assert SECRET not in text and "Fix: give a libpq URI" in text and '"sslmod"' in text
    assert isinstance(err.value, OSError)  # errors also subclass a built-in, as rasterio's do
    with pytest.raises(RegistryError, match="Fix: give a libpq URI"):
        open_backend(f"host=db.example password={SECRET} dbname='unclosed")


def test_the_cli_refuses_a_bad_connection_string_without_a_traceback_or_a_password() -> None:
    res = CliRunner().invoke(cli, ["permits", "list", f"host=db.example password={SECRET} bogus=1"])
    assert res.exit_code == 1
    assert SECRET not in res.output and "Traceback" not in res.output and "Fix:" in res.output


# -- connecting for real --------------------------------------------------------------------------


def _socket_form(url: str, office: str) -> str:
    """The same login through the server's socket folder, with the user and password as parameters."""
    import psycopg

    with psycopg.connect(office) as conn:  # only the owner may read where the sockets are
        folders = conn.execute("SHOW unix_socket_directories").fetchone()[0]
    with psycopg.connect(url) as conn:
        port = conn.info.port
        user, dbname, options = conn.info.user, conn.info.dbname, parse(url).get("options", "")
    folder = folders.split(",")[0].strip()
    if not Path(folder, f".s.PGSQL.{port}").exists():
        msg = f"the test server's socket folder {folder} is not on this machine"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: .ci/run starts the server here.")
        pytest.skip(msg)
    password = parse(url).get("password", "")
    query = f"host={quote(folder, safe='')}&port={port}&user={quote(user)}&password={quote(password)}"
    return f"postgresql:///{dbname}?{query}&options={quote(options)}"


@pytest.fixture
def reader(pg_url: str):
    """(the reader's TCP URL, the office's URL) on a filled registry."""
    target = pg_schema(pg_url)
    fill_registry(target, n=3)
    with public_login(target) as url:
        yield url, target


def _served_features(provider: dict, env: dict[str, str]) -> int:
    from pygeoapi.plugin import load_plugin

    filled = dict(provider, data=dict(provider["data"]))
    if "password" in filled["data"]:
        filled["data"]["password"] = env[PASSWORD_ENV]
    return int(load_plugin("provider", filled).query(resulttype="hits")["numberMatched"])


def _provider(url: str) -> tuple[dict, dict[str, str]]:
    login, schema = check_public_login(url)
    return _pg_provider(login, schema, _pg_srid(url))


def test_the_socket_folder_form_reaches_pygeoapi_as_the_checked_login(reader) -> None:
    """``postgresql:///village?host=/var/run/postgresql&user=web``: the check verified ``web``; pygeoapi
    connected as libpq's default user on localhost. Now both are ``web`` through the socket folder."""
    url, office = reader
    sock = _socket_form(url, office)
    login, _schema = check_public_login(sock)
    assert login.host.startswith("/") and login.user.startswith("web_")
    provider, env = _provider(sock)
    assert provider["data"]["host"] == login.host and provider["data"]["user"] == login.user
    assert provider["data"]["password"] == "${" + PASSWORD_ENV + "}" and env[PASSWORD_ENV]
    check_pygeoapi_login(provider, env, sock)
    assert _served_features(provider, env) >= 1


@pytest.mark.parametrize("mode", ["disable", "prefer"])
def test_sslmode_reaches_pygeoapis_connection(reader, mode: str) -> None:
    url, _ = reader
    with_mode = f"{url}&sslmode={mode}"
    provider, env = _provider(with_mode)
    assert provider["options"]["sslmode"] == mode
    # The registry's own options come first, then the service's session settings.
    assert provider["options"]["options"].startswith("-csearch_path=")
    assert provider["options"]["options"].endswith(SESSION_OPTIONS)
    check_pygeoapi_login(provider, env, with_mode)


def test_sslmode_require_is_kept_so_a_server_without_tls_is_refused(reader) -> None:
    url, _ = reader
    with pytest.raises(RegistryError) as err:
        check_public_login(f"{url}&sslmode=require")
    assert "SSL" in str(err.value) and "sslmode=require" in str(err.value)
    assert parse(url)["password"] not in str(err.value)


def test_the_key_value_form_serves_the_same(reader) -> None:
    url, _ = reader
    p = parse(url)
    kv = " ".join(f"{k}='{v}'" for k, v in p.items())
    provider, env = _provider(kv)
    check_pygeoapi_login(provider, env, kv)
    assert provider["data"]["user"] == p["user"]


def test_the_service_refuses_to_start_when_pygeoapis_login_is_not_the_one_checked(reader) -> None:
    url, office = reader
    provider, env = _provider(url)
    owner = parse(office)["user"]
    # The server checks passwords: the swapped login is the owner's, with the owner's password.
    swapped = dict(provider, data=dict(provider["data"], user=owner))
    with pytest.raises(RegistryError) as err:
        check_pygeoapi_login(swapped, {PASSWORD_ENV: parse(office)["password"]}, url)
    text = str(err.value)
    assert "refuses to start" in text and f"user {parse(url)['user']!r} (checked) vs {owner!r} (pygeoapi)" in text
    assert env[PASSWORD_ENV] not in text
    writable = dict(provider, options=dict(provider["options"], options=parse(url)["options"]))
    with pytest.raises(RegistryError, match="not read-only"):
        check_pygeoapi_login(writable, env, url)


def test_a_password_is_in_no_message_and_not_in_the_written_configuration(reader, tmp_path) -> None:
    url, office = reader
    password = parse(url)["password"]
    wrong = url.replace(parse(url)["dbname"], f"no_{uuid.uuid4().hex[:6]}")
    with pytest.raises(RegistryError) as err:
        check_public_login(wrong)
    assert password not in str(err.value) and "user=" in str(err.value)
    with pytest.raises(RegistryError) as err:
        open_backend(wrong)
    assert password not in str(err.value)
    sock = _socket_form(url, office)
    files = prepare_service(ServiceSettings(registry=sock, state_dir=tmp_path / "s", layers=DEMO_LAYERS))
    text = files.config.read_text()
    assert password not in text
    data = yaml.safe_load(text)["resources"]["permits"]["providers"][0]["data"]
    assert data["user"] == parse(url)["user"] and data["host"].startswith("/")
    assert files.environment == {PASSWORD_ENV: password}


def test_a_registry_opens_from_key_value_pairs(reader) -> None:
    _, office = reader
    kv = " ".join(f"{k}='{v}'" for k, v in parse(office).items())
    res = CliRunner().invoke(cli, ["permits", "list", kv])
    assert res.exit_code == 0, res.output
    assert "EC-" in res.output or "permit" in res.output.lower()
