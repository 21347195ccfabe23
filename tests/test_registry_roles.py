"""Least privilege on PostGIS: ``permits init --roles`` and what each role cannot do.

The tests connect to the real PostGIS server as people who are members of each group role
(a LOGIN role with a one-off password, made here; the roles themselves never log in) and
prove what each may and may not do: the reader reads the public view only, the inspector
records inspections and repairs but changes no status and reads no phone number, the clerk
does the office's work but changes no table's shape. A refusal reaches the user as the
toolkit's RegistryError naming the missing privilege and the fix, never as a traceback.
"""

from __future__ import annotations

import secrets
from datetime import date, datetime, timezone
from pathlib import Path
from urllib.parse import SplitResult, quote, urlsplit, urlunsplit

import pytest
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import RegistryError
from esc_gis.registry import Application, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.domain.records import Party
from esc_gis.registry.store.roles import Roles, create_roles, role_names
from esc_gis.registry.store.schema import GRANTS, PUBLIC_VIEW, PUBLISHED_VIEW, TABLES

from .conftest import CRS, K, pay_application_fee, square_sqft

psycopg = pytest.importorskip("psycopg")

UTC = timezone.utc
AT = datetime(2026, 11, 16, 15, 30, tzinfo=UTC)  # a Monday afternoon, after the work started
PHONE = "920-555-0110"
#: The registry tests' PostGIS registry only: a GeoPackage has no roles.
POSTGIS = pytest.mark.parametrize("target", ["postgis"], indirect=True)


def as_login(url: str, user: str, password: str) -> str:
    """Return ``url`` connecting as ``user`` with ``password`` (same server, database and schema)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{quote(user)}:{quote(password)}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class Office:
    """A PostGIS registry with an active permit (a landowner with a phone), its roles and three people."""

    def __init__(self, target: str, number: str, roles: Roles) -> None:
        self.target = target
        self.number = number
        self.roles = roles
        self.urls: dict[str, str] = {}
        self.logins: list[str] = []

    def person(self, kind: str) -> str:
        """Make a login member of the ``kind`` role and return the URL to connect as them."""
        if kind not in self.urls:
            name = f"{getattr(self.roles, kind)}_p"
            password = secrets.token_hex(12)  # made here, for this test only
            with psycopg.connect(self.target, autocommit=True) as conn:
                conn.execute(
                    psycopg.sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                        psycopg.sql.Identifier(name),
                        psycopg.sql.Literal(password),
                        psycopg.sql.Identifier(getattr(self.roles, kind)),
                    )
                )
            self.logins.append(name)
            self.urls[kind] = as_login(self.target, name, password)
        return self.urls[kind]

    def connect(self, kind: str):
        return psycopg.connect(self.person(kind), autocommit=True)

    def open(self, kind: str, layer_set):
        return open_registry(self.person(kind), layers=layer_set, calendar=OfficeCalendar(holidays=frozenset()))


def drop_roles(target: str, names: list[str]) -> None:
    """Remove the test's roles from the server (roles outlive a schema: they are the server's)."""
    with psycopg.connect(target, autocommit=True) as conn:
        for name in names:
            ident = psycopg.sql.Identifier(name)
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone():
                conn.execute(psycopg.sql.SQL("DROP OWNED BY {}").format(ident))
                conn.execute(psycopg.sql.SQL("DROP ROLE {}").format(ident))


def add_with_phone(reg) -> str:
    """Add an active permit whose landowner has a phone number."""
    return reg.add(
        Application(
            "100 Test St",
            date(2026, 11, 2),
            square_sqft(100, 100, 5000.0),
            CRS,
            parties=(Party("landowner", "Pat Owner", phone=PHONE, email="pat@example.com"),),
            status="active",
            issued_on=date(2026, 11, 3),
            started_at=datetime(2026, 11, 9, 8, 0, tzinfo=UTC),
        ),
        who="clerk",
    )


@pytest.fixture
def office(reg, target: str):
    """The registry with an active permit whose landowner has a phone, and the roles made."""
    number = add_with_phone(reg)
    roles = create_roles(target)
    o = Office(target, number, roles)
    yield o
    drop_roles(target, [*o.logins, *roles.by_kind().values()])


def denied(conn, statement: str) -> bool:
    """Return whether the server refuses ``statement`` for lack of a privilege."""
    try:
        conn.execute(statement)
    except psycopg.errors.InsufficientPrivilege:
        return True
    return False


def tables_here(target: str) -> set[str]:
    with psycopg.connect(target) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
    return {r[0] for r in rows}


# --- The grants in one place ----------------------------------------------------------------------


def test_every_table_has_its_line_in_the_grants() -> None:
    # A table without a line would be the owner's alone: the clerk's work on it would fail.
    assert set(TABLES) | {"esc_gis_schema", PUBLIC_VIEW, PUBLISHED_VIEW} <= set(GRANTS)
    assert {kind for grants in GRANTS.values() for kind in grants} == {"reader", "inspector", "clerk"}


def test_the_inspector_and_the_reader_are_never_granted_the_private_tables() -> None:
    private = ("parties", "fees", "guarantees", "guarantee_events", "enforcement_cases", "appeals", "plan_versions")
    for table in private:
        assert set(GRANTS[table]) == {"clerk"}, table
    assert [t for t, g in GRANTS.items() if "reader" in g] == [PUBLIC_VIEW, PUBLISHED_VIEW]
    # The inspector may touch the permit's updated_at only (the row lock needs an UPDATE privilege).
    assert GRANTS["permits"]["inspector"] == "SELECT, UPDATE (updated_at)"


def test_role_names_take_the_prefix_and_refuse_what_postgresql_would_cut() -> None:
    assert role_names("village") == Roles("village_reader", "village_inspector", "village_clerk")
    with pytest.raises(RegistryError, match="63 bytes"):
        role_names("x" * 60)
    with pytest.raises(RegistryError, match="empty"):
        role_names("  ")


# --- The reader -----------------------------------------------------------------------------------


@POSTGIS
def test_the_reader_reads_the_public_and_published_views_and_nothing_else(office: Office, target: str) -> None:
    with office.connect("reader") as conn:
        rows = conn.execute(f"SELECT permit_number, status, site_address FROM {PUBLIC_VIEW}").fetchall()
        assert rows == [(office.number, "active", "100 Test St")]
        rows = conn.execute(f"SELECT permit_number, status, site_address FROM {PUBLISHED_VIEW}").fetchall()
        assert rows == [(office.number, "active", "100 Test St")]
        with pytest.raises(psycopg.errors.UndefinedColumn):  # not published: not there
            conn.execute(f"SELECT parcel_id FROM {PUBLISHED_VIEW}")
        assert denied(conn, "SELECT phone FROM parties")
        assert denied(conn, "SELECT status FROM permits")
        for table in sorted(tables_here(target) - {PUBLIC_VIEW, PUBLISHED_VIEW}):
            assert denied(conn, f'SELECT 1 FROM "{table}"'), f"the reader can read {table}"
        for view in (PUBLIC_VIEW, PUBLISHED_VIEW):
            assert denied(conn, f"UPDATE {view} SET status = 'closed'")
            assert denied(conn, f"DELETE FROM {view}")


@POSTGIS
def test_the_reader_opening_the_registry_is_told_what_it_lacks(office: Office, layer_set) -> None:
    with pytest.raises(RegistryError) as err:
        office.open("reader", layer_set)
    text = str(err.value)
    assert "may not SELECT table esc_gis_schema" in text
    assert office.roles.clerk in text and "Roles on PostGIS" in text
    assert "***" in text  # the one-off password is not printed


@POSTGIS
def test_the_public_view_has_the_public_exports_columns_and_values(office: Office, reg, target: str) -> None:
    reg.amend(office.number, trigger="original", description="plan as approved", plan_date=date(2026, 10, 30))
    frame = reg.frame()
    with psycopg.connect(target) as conn:
        cur = conn.execute(f"SELECT * FROM {PUBLIC_VIEW}")
        names = [d.name for d in cur.description]
        row = dict(zip(names, cur.fetchone(), strict=True))
        kind = conn.execute(
            "SELECT type, srid FROM geometry_columns WHERE f_table_schema = current_schema() AND f_table_name = %s",
            (PUBLIC_VIEW,),
        ).fetchone()
    # The export's columns (no contacts), the key QGIS takes and the site: no more, no less.
    assert names[0] == "fid" and names[-1] == "geom"
    assert set(names) - {"fid", "geom"} == set(frame.columns) - {"geometry"}
    assert not {"phone", "email", "name", "landowner_phone"} & set(names)
    assert row["disturbed_acres"] == pytest.approx(frame.loc[0, "disturbed_acres"]) == round(5000.0 / 43_560, 3)
    assert row["plan_date"] == frame.loc[0, "plan_date"] == date(2026, 10, 30)
    # QGIS lists it as a layer of multipolygons in the registry's CRS.
    assert kind == ("MULTIPOLYGON", reg.backend.srid)


@pytest.mark.parametrize("target", ["gpkg"], indirect=True)
def test_a_geopackage_lists_the_public_view_as_a_layer(reg, target: str, layer_set) -> None:
    import pyogrio

    from esc_gis.registry import init_registry

    number = add_with_phone(reg)
    reg.amend(number, trigger="original", description="plan as approved", plan_date=date(2026, 10, 30))
    init_registry(target, layers=layer_set)  # again: the view is remade, listed once
    frame = reg.frame()
    layers = [name for name, _ in pyogrio.list_layers(target)]
    assert layers.count(PUBLIC_VIEW) == 1
    view = pyogrio.read_dataframe(target, layer=PUBLIC_VIEW)
    assert set(view.columns) == set(frame.columns) - {"fid"}  # GDAL takes fid as the key
    assert view.loc[0, "disturbed_acres"] == frame.loc[0, "disturbed_acres"] == round(5000.0 / 43_560, 3)
    assert str(view.loc[0, "plan_date"])[:10] == "2026-10-30" and view.geometry[0].equals(frame.geometry[0])
    assert not {"phone", "landowner_phone"} & set(view.columns)


#: Opens a PostGIS layer in QGIS's own Python (Debian's python3-qgis), as QGIS's Browser does.
_QGIS_OPEN = """
import json, sys
from qgis.core import QgsApplication, QgsDataSourceUri, QgsVectorLayer
app = QgsApplication([], False)
app.initQgis()
host, port, db, user, password, schema, table = sys.argv[1:8]
uri = QgsDataSourceUri()
uri.setConnection(host, port, db, user, password)
uri.setDataSource(schema, table, "geom", "", "fid")
layer = QgsVectorLayer(uri.uri(False), table, "postgres")
print(json.dumps({
    "valid": layer.isValid(),
    "crs": layer.crs().authid(),
    "fields": [f.name() for f in layer.fields()],
    "features": [[f["permit_number"], f.geometry().area()] for f in layer.getFeatures()],
}))
app.exitQgis()
"""


def qgis_python() -> str:
    """Debian's Python with QGIS's bindings; skip when missing, but fail in CI (CI=true), which installs it."""
    import os
    import subprocess

    python = "/usr/bin/python3"
    ok = (
        Path(python).exists()
        and subprocess.run([python, "-c", "import qgis.core"], capture_output=True).returncode == 0
    )
    if not ok:
        msg = "QGIS's Python bindings are not installed (Debian package python3-qgis); .ci/run installs them"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: a missing system part is a failure here.")
        pytest.skip(msg)
    return python


@POSTGIS
def test_qgis_opens_the_public_view_as_the_reader_and_not_the_permits(office: Office, tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    from urllib.parse import parse_qs, unquote

    python = qgis_python()
    script = tmp_path / "open_layer.py"
    script.write_text(_QGIS_OPEN, encoding="utf-8")
    url = urlsplit(office.person("reader"))
    schema = parse_qs(url.query)["options"][0].split("=", 1)[1].split(",")[0]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)}

    def open_in_qgis(table: str, login: SplitResult = url) -> dict:
        who = [unquote(login.username or ""), unquote(login.password or "")]
        args = [url.hostname, str(url.port), url.path.lstrip("/"), *who]
        r = subprocess.run(
            [python, str(script), *args, schema, table], capture_output=True, text=True, env=env, timeout=300
        )
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    view = open_in_qgis(PUBLIC_VIEW)
    assert view["valid"] and view["crs"] == CRS
    assert "status" in view["fields"] and "phone" not in view["fields"]
    assert [n for n, _ in view["features"]] == [office.number]
    assert view["features"][0][1] == pytest.approx(5000.0 / K, rel=1e-6)  # the site, in square US survey feet
    assert not open_in_qgis("permits")["valid"]  # the table itself is not the reader's...
    assert open_in_qgis("permits", urlsplit(office.target))["valid"]  # ...but the owner's


# --- The inspector --------------------------------------------------------------------------------


@POSTGIS
def test_the_inspector_records_an_inspection_and_a_repair_through_the_toolkit(
    office: Office, reg, layer_set, tmp_path: Path
) -> None:
    photo = tmp_path / "fence.png"
    from .test_inspections import tiny_png

    photo.write_bytes(tiny_png())
    with office.open("inspector", layer_set) as ins:
        r = ins.inspect(
            office.number,
            InspectionReport(AT, "Ina Inspector", "silt fence down", deficiencies=["fence down, east"], photos=[photo]),
            who="ina",
        )
        after = ins.repaired(
            office.number, [r.deficiencies[0].id], on=datetime(2026, 11, 17, 9, 0, tzinfo=UTC), who="ina"
        )
        assert after.parties == []  # not the inspector's to read
    # The office sees what the inspector recorded, and the landowner the inspector did not.
    p = reg.get(office.number)
    assert [x.assessment for x in p.reports] == ["silt fence down"]
    assert p.reports[0].deficiencies[0].repaired_at is not None and len(p.reports[0].photos) == 1
    assert [q.phone for q in p.parties] == [PHONE]
    assert [e.kind for e in p.events][-2:] == ["inspection", "repair"]


@POSTGIS
def test_the_inspector_cannot_change_a_status(office: Office, reg, layer_set) -> None:
    with office.open("inspector", layer_set) as ins, pytest.raises(RegistryError) as err:
        ins.transition(office.number, "stop_work", reasons="silt fence down (notice of 2026-11-16)", who="ina")
    text = str(err.value)
    assert "may not UPDATE table permits" in text and "rolled back" in text
    assert f"Roles that may: {office.roles.clerk}" in text and f"GRANT {office.roles.clerk} TO" in text
    # Nothing was written: the status and the history are as they were.
    p = reg.get(office.number)
    assert p.status == "active" and p.events[-1].kind != "transition"
    with office.connect("inspector") as conn:
        assert denied(conn, f"UPDATE permits SET status = 'closed' WHERE permit_number = '{office.number}'")
        assert conn.execute("SELECT count(*) FROM permits").fetchone() == (1,)  # it finds the permits


@POSTGIS
def test_the_inspector_cannot_read_a_phone_number_nor_the_money(office: Office) -> None:
    with office.connect("inspector") as conn:
        assert denied(conn, "SELECT phone FROM parties")
        assert denied(conn, "SELECT amount FROM guarantees")
        assert denied(conn, "SELECT amount FROM fees")
        assert denied(conn, "SELECT reasons FROM enforcement_cases")
        assert denied(conn, "DELETE FROM inspections")


@POSTGIS
def test_the_inspector_on_the_command_line_inspects_but_changing_a_status_is_an_error_not_a_traceback(
    office: Office, layers_path
) -> None:
    url = office.person("inspector")
    inspect = [
        "permits",
        "inspect",
        url,
        office.number,
        "--by",
        "office",
        "--at",
        "2026-11-16T09:30",
        "--inspector",
        "Ina",
    ]
    r = CliRunner().invoke(cli, [*inspect, "--assessment", "all good", "--layers", str(layers_path)])
    assert r.exit_code == 0, r.output
    args = ["permits", "transition", url, office.number, "stop_work", "--reasons", "silt fence down"]
    r = CliRunner().invoke(cli, [*args, "--layers", str(layers_path)])
    assert r.exit_code == 1, r.output
    assert "may not UPDATE table permits" in r.output and "Traceback" not in r.output


# --- The clerk ------------------------------------------------------------------------------------


@POSTGIS
def test_the_clerk_does_the_offices_work(office: Office, reg, layer_set) -> None:
    with office.open("clerk", layer_set) as clerk:
        n = clerk.add(
            Application(
                "200 Test St",
                date(2026, 11, 4),
                square_sqft(400, 100, 5000.0),
                CRS,
                parties=(Party("landowner", "Lee Owner", phone="920-555-0199"),),
            ),
            who="clerk",
        )
        pay_application_fee(clerk, n, 50, paid_on=date(2026, 11, 4))
        clerk.transition(n, "under_review", on=date(2026, 11, 5), who="clerk")
        clerk.transition(office.number, "stop_work", reasons="silt fence down (notice of 2026-11-16)", who="clerk")
        case = clerk.enforce(ground="A4", on=date(2026, 11, 20), reasons="mud on the street", address="9 Elm St")
        assert [q.phone for q in clerk.get(office.number).parties] == [PHONE]
    assert reg.get(n).status == "under_review" and reg.get(office.number).status == "stop_work"
    assert case.case_id.startswith("ENF-2026-")
    with office.connect("clerk") as conn:
        # The office's work, not the schema's: no deleting, no dropping, no new tables.
        assert denied(conn, "DELETE FROM permits")
        assert denied(conn, "DROP TABLE events")
        assert denied(conn, "TRUNCATE parties")


# --- Making the roles -----------------------------------------------------------------------------


def grants_of(target: str, roles: Roles) -> set[tuple[str, str, str]]:
    with psycopg.connect(target) as conn:
        rows = conn.execute(
            "SELECT grantee, table_name, privilege_type FROM information_schema.role_table_grants "
            "WHERE table_schema = current_schema() AND grantee = ANY(%s) "
            "UNION SELECT grantee, table_name || '.' || column_name, privilege_type "
            "FROM information_schema.column_privileges WHERE table_schema = current_schema() AND grantee = ANY(%s)",
            (list(roles.by_kind().values()),) * 2,
        ).fetchall()
    return {tuple(r) for r in rows}


@POSTGIS
def test_init_roles_again_is_idempotent_and_exact(office: Office, target: str, layers_path) -> None:
    before = grants_of(target, office.roles)
    assert (office.roles.reader, PUBLIC_VIEW, "SELECT") in before
    assert (office.roles.reader, PUBLISHED_VIEW, "SELECT") in before
    assert (office.roles.inspector, "permits.updated_at", "UPDATE") in before
    assert not any(g[0] == office.roles.inspector and g[1] == "parties" for g in before)
    with psycopg.connect(target, autocommit=True) as conn:  # a privilege granted by hand, not in GRANTS
        conn.execute(f'GRANT DELETE ON permits TO "{office.roles.clerk}"')
    r = CliRunner().invoke(cli, ["permits", "init", target, "--roles", "--layers", str(layers_path)])
    assert r.exit_code == 0, r.output
    assert office.roles.inspector in r.output and "LOGIN IN ROLE" in r.output
    assert grants_of(target, office.roles) == before
    # A plain init remakes the public view; the reader keeps it.
    r = CliRunner().invoke(cli, ["permits", "init", target, "--layers", str(layers_path)])
    assert r.exit_code == 0, r.output
    assert grants_of(target, office.roles) == before
    with office.connect("reader") as conn:
        assert conn.execute(f"SELECT count(*) FROM {PUBLIC_VIEW}").fetchone() == (1,)
        assert conn.execute(f"SELECT count(*) FROM {PUBLISHED_VIEW}").fetchone() == (1,)


@POSTGIS
def test_a_registry_upgraded_to_the_published_view_lets_its_reader_read_it(
    office: Office, target: str, layers_path
) -> None:
    """Before migration 13 there was no published view: `permits init` makes it, and the reader reads it, no `--roles`."""
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(f"DROP VIEW {PUBLISHED_VIEW}")
        conn.execute("DELETE FROM esc_gis_schema WHERE version = 13")
    with office.connect("reader") as conn:
        conn.execute(f"SELECT count(*) FROM {PUBLIC_VIEW}")
    r = CliRunner().invoke(cli, ["permits", "init", target, "--layers", str(layers_path)])
    assert r.exit_code == 0, r.output
    with office.connect("reader") as conn:
        assert conn.execute(f"SELECT count(*) FROM {PUBLISHED_VIEW}").fetchone() == (1,)


@POSTGIS
def test_a_role_prefix_names_the_roles(reg, target: str, layers_path) -> None:
    prefix = f"v_{secrets.token_hex(4)}"
    try:
        r = CliRunner().invoke(
            cli, ["permits", "init", target, "--roles", "--role-prefix", prefix, "--layers", str(layers_path)]
        )
        assert r.exit_code == 0, r.output
        with psycopg.connect(target) as conn:
            made = conn.execute(
                "SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname LIKE %s ORDER BY 1", (f"{prefix}%",)
            ).fetchall()
        assert made == [(f"{prefix}_clerk", False), (f"{prefix}_inspector", False), (f"{prefix}_reader", False)]
    finally:
        drop_roles(target, list(role_names(prefix).by_kind().values()))


@POSTGIS
def test_a_login_role_of_the_same_name_is_refused(reg, target: str) -> None:
    prefix = f"v_{secrets.token_hex(4)}"
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{prefix}_clerk" LOGIN')
    try:
        with pytest.raises(RegistryError, match="can log in"):
            create_roles(target, prefix=prefix)
    finally:
        drop_roles(target, list(role_names(prefix).by_kind().values()))


def test_roles_on_a_geopackage_is_a_clear_error(tmp_path: Path, layers_path) -> None:
    gpkg = tmp_path / "permits.gpkg"
    r = CliRunner().invoke(cli, ["permits", "init", str(gpkg), "--roles", "--layers", str(layers_path)])
    assert r.exit_code == 1
    assert "has no roles" in r.output and "file permissions" in r.output and "export" in r.output
    assert "Traceback" not in r.output
    assert not gpkg.exists()  # refused before anything was made


def test_a_role_prefix_without_roles_is_a_usage_error(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["permits", "init", str(tmp_path / "p.gpkg"), "--role-prefix", "v"])
    assert r.exit_code == 2 and "--roles" in r.output
