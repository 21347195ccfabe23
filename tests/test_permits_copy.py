"""``esc-gis permits copy``: a registry moved between a GeoPackage and PostGIS, whole.

A registry with a history of every kind that matters here (an application fee, an inspection
with a photo and a deficiency, a stop-work order, an extension, a case without a permit) is
copied GeoPackage -> PostGIS, PostGIS -> GeoPackage and file to file. Each copy holds the same
rows (keys, times, geometry, the photo's bytes) and the same history, verifies with no
difference, and numbers the next permit and case as its source would. A copy into a registry
holding anything is refused (the second run of the same copy is), as is a bad source; a copy
that fails part-way leaves nothing behind. The PostGIS half runs on CI's server
(ESC_GIS_TEST_PG_URL) or a throwaway one, and skips without one (fails in CI).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import uuid
from collections.abc import Callable, Iterator
from datetime import date, datetime, timezone
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import RegistryError
from esc_gis.registry import Application, copy_registry, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.store import copy as copy_store
from esc_gis.registry.store.backend import open_backend
from esc_gis.registry.store.conninfo import parse

from .conftest import CRS, add_active, pay_application_fee, require_tool, square_sqft
from .test_inspections import tiny_png

UTC = timezone.utc
AT = datetime(2026, 11, 16, 15, 30, tzinfo=UTC)
CAL = OfficeCalendar(holidays=frozenset())


@pytest.fixture
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str, str], str]]:
    """Make registry locations: ``place("gpkg", name)`` a path, ``place("postgis", name)`` a fresh schema's URL."""
    schemas: list[str] = []
    pg: list[str] = []

    def make(kind: str, name: str) -> str:
        if kind == "gpkg":
            return str(tmp_path / f"{name}.gpkg")
        import psycopg

        if not pg:
            pg.append(request.getfixturevalue("pg_url"))
        schema = f"c_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(pg[0], autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
            conn.execute(f"CREATE SCHEMA {schema}")
        schemas.append(schema)
        return f"{pg[0]}{'&' if '?' in pg[0] else '?'}options={quote(f'-csearch_path={schema},public')}"

    yield make
    if schemas:
        import psycopg

        with psycopg.connect(pg[0], autocommit=True) as conn:
            conn.execute("SET lock_timeout = '2s'")
            for schema in schemas:
                try:
                    conn.execute(f"DROP SCHEMA {schema} CASCADE")
                except psycopg.Error:
                    pass


def fill(target: str, layer_set, tmp_path: Path) -> dict:
    """A registry with a fee, an inspection with a photo and a deficiency, a stop-work, an extension and a case."""
    init_registry(target, layers=layer_set)
    png = tiny_png((10, 200, 30))
    photo = tmp_path / f"fence-{uuid.uuid4().hex[:6]}.png"
    photo.write_bytes(png)
    with open_registry(target, layers=layer_set, calendar=CAL) as reg:
        first = add_active(reg)
        second = add_active(reg, x=400, address="200 Test St")
        pay_application_fee(reg, first, 1.0)
        r = reg.inspect(
            first,
            InspectionReport(AT, "Ina Inspector", "silt fence down", deficiencies=["fence down"], photos=[photo]),
            who="ina",
        )
        reg.transition(first, "stop_work", on=date(2026, 11, 20), reasons="No perimeter control.", who="clerk")
        reg.extend(first, 90, on=date(2026, 11, 23), reasons="Wet autumn.", who="clerk")
        case = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="grading seen, no permit", address="9 Elm St")
        # The plan's versions: an amendment answers the office's notice (a row naming an earlier row).
        reg.amend(second, trigger="original", description="Plan as approved", plan_date=date(2026, 10, 28))
        reg.notify_amendment(second, trigger="B3", description="Add a basin", notified_on=date(2026, 11, 24))
        reg.amend(
            second,
            trigger="B3",
            description="Basin added",
            plan_date=date(2026, 11, 25),
            permission_on=date(2026, 11, 26),
            permission_by="J. Example, Director of Public Works",
        )
        assert len(reg.history()) == EVENTS
        assert reg.verify() == []
        return {"numbers": [first, second], "photo_id": r.photos[0].id, "png": png, "case": case.case_id}


def digests(target: str) -> dict[str, str]:
    """Every table's rows, keys included, as one SHA-256 each."""
    b = open_backend(target)
    try:
        with b.read() as cur:
            return {t: copy_store.table_digest(cur, b, t) for t in copy_store.TABLE_ORDER}
    finally:
        b.close()


def next_numbers(target: str, layer_set) -> tuple[str, str]:
    """The permit and case numbers the registry gives next."""
    with open_registry(target, layers=layer_set, calendar=CAL) as reg:
        number = reg.add(Application("300 Next St", date(2026, 11, 25), square_sqft(700, 100, 5000.0), CRS))
        case = reg.enforce(ground="A4", on=date(2026, 11, 26), reasons="grading seen, no permit", address="1 Oak St")
        return number, case.case_id


#: The history ``fill`` writes: 2 received, a fee, an inspection, a stop-work, an extension, a case, 3 plan events.
EVENTS = 10

WAYS = [("gpkg", "postgis"), ("postgis", "gpkg"), ("gpkg", "gpkg")]


@pytest.mark.usefixtures("late_clock")
@pytest.mark.parametrize(("src_kind", "dst_kind"), WAYS, ids=["gpkg-to-postgis", "postgis-to-gpkg", "gpkg-to-gpkg"])
def test_a_copy_holds_the_same_rows_history_and_photo_and_numbers_on(
    src_kind: str, dst_kind: str, place, layer_set, tmp_path: Path
) -> None:
    src, dst = place(src_kind, "source"), place(dst_kind, "copy")
    made = fill(src, layer_set, tmp_path)
    seen: list[tuple[int, int]] = []
    result = copy_registry(src, dst, progress=lambda done, total: seen.append((done, total)))
    # Every row: 2 permits, the history, the case, the fee, the plan's versions and the notice.
    assert (result.permits, result.photos, result.created) == (2, 1, True)
    assert result.events == EVENTS and result.rows["enforcement_cases"] == 1 and result.rows["fees"] == 1
    assert result.rows["plan_versions"] == 3
    assert result.source_differences == result.destination_differences == () and result.verified
    assert seen and seen[-1] == (sum(result.rows.values()), sum(result.rows.values()))
    # The same rows, key for key, and the same history, event for event.
    assert digests(dst) == digests(src)
    with open_registry(src, layers=layer_set) as a, open_registry(dst, layers=layer_set) as b:
        assert b.history() == a.history() and len(b.history()) == EVENTS
        assert [(p.permit_number, p.status, p.expires_on) for p in b.permits()] == [
            (p.permit_number, p.status, p.expires_on) for p in a.permits()
        ]
        assert b.get(made["numbers"][0]).status == "stop_work"
        got = b.photo(made["photo_id"])
        assert got.data == made["png"] and got.sha256 == hashlib.sha256(made["png"]).hexdigest()
        assert b.get(made["numbers"][1]).site.equals_exact(a.get(made["numbers"][1]).site, 1e-9)
        assert b.verify() == []
    # The numbering continues: the copy gives the next permit and case the numbers its source would.
    from_source = next_numbers(src, layer_set)
    assert next_numbers(dst, layer_set) == from_source
    assert from_source[0] not in made["numbers"] and from_source[1] != made["case"]
    if dst_kind == "gpkg":
        assert sorted(p.name for p in Path(dst).parent.iterdir() if ".part" in p.name) == []
        # It holds names and telephone numbers: readable by its owner only, as `permits init` makes a registry.
        from esc_gis._outputs import PRIVATE_MODE

        assert Path(dst).stat().st_mode & 0o777 == PRIVATE_MODE


@pytest.mark.usefixtures("late_clock")
@pytest.mark.parametrize(("src_kind", "dst_kind"), WAYS, ids=["gpkg-to-postgis", "postgis-to-gpkg", "gpkg-to-gpkg"])
def test_the_same_copy_run_twice_is_refused_and_changes_nothing(
    src_kind: str, dst_kind: str, place, layer_set, tmp_path: Path
) -> None:
    src, dst = place(src_kind, "source"), place(dst_kind, "copy")
    fill(src, layer_set, tmp_path)
    copy_registry(src, dst, verify=False)
    before = digests(dst)
    with pytest.raises(
        RegistryError,
        match=r"is not empty: it holds 2 permit\(s\), 10 history event\(s\), \d+ other row\(s\): a copy goes only into an empty",
    ):
        copy_registry(src, dst)
    assert digests(dst) == before


def test_a_copy_into_a_registry_made_empty_by_init_fills_it(place, layer_set, tmp_path: Path) -> None:
    src, dst = place("gpkg", "source"), place("gpkg", "copy")
    with pytest.MonkeyPatch.context() as mp:
        from esc_gis.profile import Profile

        mp.setattr(Profile, "today", lambda self: date(2029, 12, 31))
        fill(src, layer_set, tmp_path)
        init_registry(dst, layers=layer_set)
        # Batches of 2 rows (1 photo): every table is read in several, each after the last key read.
        mp.setattr(copy_store, "BATCH_ROWS", 2)
        mp.setattr(copy_store, "BATCH_BLOB_ROWS", 1)
        result = copy_registry(src, dst)
    assert (result.created, result.permits, result.verified) == (False, 2, True)
    assert digests(dst) == digests(src)


def test_an_absent_or_unregistered_source_is_refused_with_the_fix(place, layer_set, tmp_path: Path) -> None:
    dst = place("gpkg", "copy")
    with pytest.raises(RegistryError, match=r"Cannot copy from .*missing\.gpkg: No registry at"):
        copy_registry(tmp_path / "missing.gpkg", dst)
    plain = tmp_path / "plain.gpkg"
    sqlite3.connect(plain).close()  # an empty SQLite file: not a registry
    with pytest.raises(RegistryError, match=r"Cannot copy from .*plain\.gpkg: This is not a permit registry"):
        copy_registry(plain, dst)
    assert not Path(dst).exists()


def test_a_copy_onto_itself_or_over_another_file_is_refused(place, layer_set, tmp_path: Path) -> None:
    src = place("gpkg", "source")
    init_registry(src, layers=layer_set)
    with pytest.raises(RegistryError, match="the same registry"):
        copy_registry(src, src)
    other = tmp_path / "other.gpkg"
    sqlite3.connect(other).close()
    with pytest.raises(RegistryError, match="is not a permit registry; a copy never writes over a file"):
        copy_registry(src, other)
    assert other.stat().st_size == 0
    with pytest.raises(RegistryError, match=r"must end in \.gpkg"):
        copy_registry(src, tmp_path / "permits.sqlite")


@pytest.mark.usefixtures("late_clock")
@pytest.mark.parametrize("dst_kind", ["gpkg", "postgis"])
def test_a_copy_that_fails_part_way_leaves_no_half_registry(
    dst_kind: str, place, layer_set, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, dst = place("gpkg", "source"), place(dst_kind, "copy")
    fill(src, layer_set, tmp_path)
    real = copy_store.table_digest

    def broken(cur, b, table):  # the destination's read-back disagrees: the transaction must roll back
        return (
            "not the source's"
            if b.dialect == ("postgis" if dst_kind == "postgis" else "sqlite")
            else real(cur, b, table)
        )

    monkeypatch.setattr(copy_store, "table_digest", broken)
    with pytest.raises(RegistryError, match="does not read back as the source holds it; nothing was written"):
        copy_registry(src, dst)
    monkeypatch.setattr(copy_store, "table_digest", real)
    if dst_kind == "gpkg":
        assert sorted(p.name for p in Path(dst).parent.iterdir() if ".gpkg" in p.name) == ["source.gpkg"]
    else:
        b = open_backend(dst)
        try:
            with b.read() as cur:
                assert copy_store.occupied(cur, b) == {}
        finally:
            b.close()
    assert copy_registry(src, dst).verified  # run again, it goes through


@pytest.mark.usefixtures("late_clock")
def test_the_command_copies_to_postgis_and_back_and_never_prints_the_password(
    place, layer_set, layers_path: Path, tmp_path: Path
) -> None:
    src, pg, back = place("gpkg", "source"), place("postgis", "copy"), place("gpkg", "back")
    fill(src, layer_set, tmp_path)
    password = parse(pg).get("password", "")
    runner = CliRunner()
    res = runner.invoke(cli, ["permits", "copy", src, pg, "--quiet"])
    assert res.exit_code == 0, res.output
    assert f"2 permit(s), {EVENTS} event(s), 1 photo(s)" in res.output and "the tables equal the history" in res.output
    assert not password or password not in res.output
    again = runner.invoke(cli, ["permits", "copy", src, pg, "--quiet"])
    assert again.exit_code == 1 and "is not empty" in again.output
    assert not password or password not in again.output
    res = runner.invoke(cli, ["permits", "copy", pg, back, "--quiet"])
    assert res.exit_code == 0, res.output
    assert digests(back) == digests(src)
    verify = runner.invoke(cli, ["permits", "verify", back, "--layers", str(layers_path)])
    assert verify.exit_code == 0, verify.output


@pytest.mark.usefixtures("late_clock")
def test_a_copied_geopackage_opens_in_ogrinfo_without_a_warning(place, layer_set, tmp_path: Path) -> None:
    ogrinfo = require_tool("ogrinfo", "gdal-bin")
    src, dst = place("gpkg", "source"), place("gpkg", "copy")
    fill(src, layer_set, tmp_path)
    copy_registry(src, dst, verify=False)
    out = subprocess.run(
        [ogrinfo, "-ro", "-so", "-al", dst], capture_output=True, text=True, check=True, env={**os.environ}
    )
    assert "Warning" not in out.stderr and "ERROR" not in out.stderr, out.stderr
    assert "Layer name: permits" in out.stdout and "Feature Count: 2" in out.stdout
    # The CRS recorded is the source's, word for word.
    srs = "SELECT definition FROM gpkg_spatial_ref_sys WHERE srs_id = 7594"
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        one = a.execute(srs).fetchone()
        assert one is not None and "7594" in one[0] and b.execute(srs).fetchone() == one


@pytest.mark.usefixtures("late_clock")
def test_a_clerk_login_copies_a_postgis_registry_out(
    place, layer_set, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The office's clerk, not only the tables' owner, can move the registry to a file (USAGE on its sequences)."""
    from .service import public_login

    src, dst = place("postgis", "source"), place("gpkg", "copy")
    fill(src, layer_set, tmp_path)
    monkeypatch.setattr(copy_store, "BATCH_ROWS", 3)  # several batches from PostGIS, each by the key it follows
    with public_login(src, "clerk") as clerk:
        result = copy_registry(clerk, dst)
        assert clerk.split("@")[0].rsplit(":", 1)[1] not in result.source  # the password is not shown
    assert result.verified and result.destination_differences == ()
    assert digests(dst) == digests(src)


def test_every_table_is_read_by_its_key_after_the_tables_it_names() -> None:
    """The copy pages through each table by its first column, so that must be its key; and writes referred tables first."""
    from esc_gis.registry.store.schema import TABLES

    assert {t: cols[0][2] for t, cols in TABLES.items()} == dict.fromkeys(TABLES, "PRIMARY KEY")
    order = copy_store.TABLE_ORDER
    assert sorted(order) == sorted(TABLES)
    assert order.index("permits") < order.index("inspections") < order.index("inspection_photos")
    assert order.index("enforcement_cases") < order.index("appeals") < order.index("appeal_decisions")


@pytest.mark.usefixtures("late_clock")
def test_an_inspector_login_may_not_copy_out_and_leaves_no_file(place, layer_set, tmp_path: Path) -> None:
    """The inspector's role may not read everything: refused, naming what it lacks and the clerk's role; no file."""
    from .service import public_login

    src, dst = place("postgis", "source"), place("gpkg", "copy")
    fill(src, layer_set, tmp_path)
    with public_login(src, "inspector") as inspector:
        with pytest.raises(
            RegistryError, match=r"may not \w+ (table|sequence) \w+.*Roles that may: \w+_clerk"
        ) as refused:
            copy_registry(inspector, dst)
        assert inspector.split("@")[0].rsplit(":", 1)[1] not in str(refused.value)
    assert sorted(p.name for p in Path(dst).parent.iterdir() if ".gpkg" in p.name) == []


def next_key(target: str, table: str, column: str) -> int:
    """The key the registry gives the next row of ``table`` (taken in a transaction rolled back)."""
    b = open_backend(target)
    try:
        with pytest.raises(_Undo) as undo, b.write() as cur:
            raise _Undo(b.next_ids(cur, table, column)[0])
        return undo.value.key
    finally:
        b.close()


class _Undo(Exception):
    def __init__(self, key: int) -> None:
        self.key = key


@pytest.mark.usefixtures("late_clock")
@pytest.mark.parametrize("dst_kind", ["gpkg", "postgis"])
def test_keys_once_given_are_never_given_again_by_the_copy(dst_kind: str, place, layer_set, tmp_path: Path) -> None:
    """PostgreSQL gives a key up for good when its transaction fails: the copy's next key follows the source's."""
    import psycopg

    src, dst = place("postgis", "source"), place(dst_kind, "copy")
    fill(src, layer_set, tmp_path)
    with psycopg.connect(src, autocommit=True) as conn:
        top = conn.execute("SELECT max(fid) FROM permits").fetchone()[0]
        # Three writers took a key each and rolled back: the keys are spent, no row holds them.
        conn.execute("SELECT nextval(pg_get_serial_sequence('permits', 'fid')) FROM generate_series(1, 3)")
        spent = conn.execute("SELECT pg_sequence_last_value(pg_get_serial_sequence('permits', 'fid'))").fetchone()[0]
    assert spent == top + 3
    copy_registry(src, dst, verify=False)
    assert next_key(dst, "permits", "fid") == spent + 1
    assert next_key(dst, "history", "id") == next_key(src, "history", "id") == EVENTS + 1
