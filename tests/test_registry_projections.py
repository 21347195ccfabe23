"""One writer per table (issue 37): commands append events, one projector per table writes the rows.

- No module of the service layer holds SQL that writes a projection (read in its source), and
  in a scenario that runs every command no statement writing one comes from anywhere but the
  projectors (watched as SQLite runs them).
- ``permits rebuild`` recreates every projection from the history: the tables are the same
  after it, a row changed behind the history is put back, and ``verify`` (a rebuild into
  temporary tables, compared) is clean after it on both back ends.
- The decision clock has its projection, and ``verify`` covers it.
- Migration 11 completes a schema-7 registry's events and rebuilds; it refuses a registry whose
  tables were changed behind their history, naming the row.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import traceback
from datetime import date, datetime, timezone
from pathlib import Path

import pytest
from tests.conftest import CRS, add_active, pay_application_fee, square_sqft
from tests.public_outputs import run_permits
from tests.test_inspections import tiny_png

import esc_gis.registry.service as service_package
from esc_gis.errors import RegistryError
from esc_gis.registry import Application, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.store.projection import PROJECTIONS
from esc_gis.registry.store.rebuild import rebuilt_rows

FIXTURE = Path(__file__).parent / "data" / "registry_v7" / "registry_v7.gpkg"
DEMO_LAYERS = Path(__file__).parents[1] / "layers" / "winneconne-demo" / "layers.toml"
_WRITE = re.compile(r'\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)', re.IGNORECASE)


def test_no_service_module_writes_a_projection_in_its_sql() -> None:
    root = Path(service_package.__file__).parent
    found = []
    for path in sorted(root.glob("*.py")):
        for table in _WRITE.findall(path.read_text(encoding="utf-8")):
            if table in PROJECTIONS:
                found.append(f"{path.name}: {table}")
    assert found == []
    # The check itself reads what it should: a projector's own statement is a write it sees.
    assert _WRITE.findall('cur.execute(f"INSERT INTO {table} ...") ; "UPDATE permits SET x"') == ["permits"]


def every_command(reg, tmp_path: Path) -> str:
    """Run each kind of command once on ``reg``; return the permit most of them touch."""
    n = add_active(reg)
    other = reg.add(Application("200 Test St", date(2026, 11, 2), square_sqft(300, 100, 50_000.0), CRS,
                                disturbed=square_sqft(300, 100, 43_560.0)), who="clerk")  # fmt: skip
    pay_application_fee(reg, other, 150.0, receipt="R-2")
    reg.transition(other, "under_review", on=date(2026, 11, 3))
    reg.transition(other, "disapproved", on=date(2026, 11, 10), reasons="no perimeter control")
    a = reg.appeal(
        appealed="disapproval of 2026-11-10",
        kind="permit_decision",
        appellant="Pat Builder",
        appellant_kind="aggrieved_person",
        on=date(2026, 11, 12),
        grounds="sheet 3",
        permit_number=other,
    )
    reg.decide_appeal(a.appeal_id, body="zoning_board_of_appeals", outcome="reversed", on=date(2026, 11, 20))
    pay_application_fee(reg, n, 150.0)
    g = reg.add_guarantee(n, type="cash_escrow", amount=1000.0, received_on=date(2026, 11, 3), who="cl")
    reg.guarantee_event(g.id, "draw", on=date(2026, 11, 20), amount=150.0, reason="silt fence replaced",
                        notice_on=date(2026, 11, 20))  # fmt: skip
    reg.guarantee_event(g.id, "release", on=date(2026, 11, 25), amount=250.0, stage="phase 1 seeded")
    photo = tmp_path / "fence.png"
    photo.write_bytes(tiny_png())
    r = reg.inspect(n, InspectionReport(datetime(2026, 11, 10, 15, tzinfo=timezone.utc), "Ina Inspector",
                                        "silt fence sagging", deficiencies=["fence down", "inlet clogged"],
                                        photos=[photo], location=reg.get(n).site.centroid, work_done="re-staked"))  # fmt: skip
    reg.repaired(n, [r.deficiencies[0].id], on=datetime(2026, 11, 11, 15, tzinfo=timezone.utc), detail="fence up")
    reg.update(n, stockpile_since=date(2026, 11, 12))
    reg.amend(n, trigger="original", description="Plan as approved", plan_date=date(2026, 10, 28))
    reg.notify_amendment(n, trigger="B3", description="add a basin", notified_on=date(2026, 11, 13))
    c = reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="plan ignored", permit_number=n)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted at the gate")
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 22), costs=10.0, costs_from="guarantee", interest=1.0)
    reg.case_action(c.case_id, "retraction", on=date(2026, 11, 24), reasons="fence restored")
    free = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="no permit", address="1 A St")
    reg.case_action(free.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted at the lot")
    reg.case_action(free.case_id, "notice", on=date(2026, 11, 23), costs=75.0, costs_from="billed")
    reg.case_action(free.case_id, "paid", on=date(2026, 11, 24), costs=75.0)
    reg.extend(n, 30, on=date(2026, 11, 25), reasons="wet autumn")
    return n


@pytest.mark.parametrize("target", ["gpkg"], indirect=True)
def test_every_projection_write_comes_from_its_projector(reg, target: str, tmp_path: Path) -> None:
    writes: list[tuple[str, str]] = []

    def watch(sql: str) -> None:
        m = _WRITE.match(sql.strip())
        if m and m.group(1) in PROJECTIONS:
            files = [Path(f.filename).name for f in traceback.extract_stack() if "esc_gis" in f.filename]
            writes.append((m.group(1), files[-1] if files else "?"))

    reg.backend.conn.set_trace_callback(watch)
    try:
        every_command(reg, tmp_path)
    finally:
        reg.backend.conn.set_trace_callback(None)
    tables = {t for t, _ in writes}
    assert {f for _, f in writes} == {"projection.py"}
    # The scenario reached every projection, so the check saw each one's writer.
    assert tables == set(PROJECTIONS)


def test_rebuild_then_verify_is_clean_and_leaves_the_tables_as_they_were(reg, tmp_path: Path) -> None:
    every_command(reg, tmp_path)
    assert [str(d) for d in reg.verify()] == []
    b = reg.backend
    with b.read() if b.dialect == "sqlite" else b.write() as cur:
        stored, rebuilt = rebuilt_rows(cur, b)
    assert stored == rebuilt and all(stored[t] for t in PROJECTIONS)
    events = len(reg.history())
    assert reg.rebuild() == events
    with b.read() if b.dialect == "sqlite" else b.write() as cur:
        again = rebuilt_rows(cur, b)[0]
    assert again == stored
    assert [str(d) for d in reg.verify()] == []


def test_verify_names_a_row_changed_behind_the_history_and_rebuild_puts_it_back(
    reg, target: str, layers_path: Path
) -> None:
    n = add_active(reg)
    pay_application_fee(reg, n, 150.0)
    b = reg.backend
    with b.write() as cur:  # a hand edit, as a user with a database tool might make
        cur.execute(
            "DROP TRIGGER IF EXISTS fees_no_update"
            if b.dialect == "sqlite"
            else "DROP TRIGGER fees_append_only ON fees"
        )
        cur.execute("UPDATE fees SET amount = 15.0")
    found = [str(d) for d in reg.verify()]
    assert found == [f"{n}: the fees row (id 1) is {{'amount': 15.0}} in the table, {{'amount': 150.0}} in the history"]
    r = run_permits("rebuild", target, "--layers", str(layers_path))
    assert r.exit_code == 0 and "every table rebuilt from its history's 2 event(s)" in r.output, r.output
    assert reg.fees(n)[0].amount == 150.0 and reg.verify() == []
    # The append-only trigger the edit removed is back: a rebuild restores the projections' own.
    with pytest.raises(RegistryError, match="append-only"), b.write() as cur:
        cur.execute("UPDATE fees SET amount = 15.0")


def test_the_decision_clock_is_a_projection_verify_covers(reg, late_clock) -> None:
    """§ 540-8C(1): the period runs from the complete application (the fee paid, § 540-8B)."""
    n = reg.add(Application("1 A St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS), who="c")
    b = reg.backend

    def clock() -> tuple:
        with b.read() as cur:
            cur.execute(f"SELECT starts_on, seq, event FROM decision_clocks WHERE permit_number = {b.ph}", (n,))
            r = cur.fetchone()
        return (b.load("date", r[0]), r[1], r[2])

    assert clock() == (None, None, None)  # no fee: no clock (the edge: not complete)
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 4), receipt="R-1", who="c")
    assert clock() == (date(2026, 11, 4), 2, "fee_paid")
    reg.transition(n, "under_review", on=date(2026, 11, 5))
    reg.transition(n, "approved", on=date(2026, 11, 9))
    assert clock() == (None, None, None)  # decided: the clock stops
    with b.write() as cur:
        cur.execute(f"UPDATE decision_clocks SET starts_on = {b.ph}", (b.dump("date", date(2026, 11, 1)),))
    assert [str(d) for d in reg.verify()] == [
        f"{n}: the decision_clocks row (permit_number {n}) is {{'starts_on': datetime.date(2026, 11, 1)}} in the "
        "table, {'starts_on': None} in the history"
    ]
    reg.rebuild()


def test_a_schema_7_registry_migrates_rebuilds_and_verifies(tmp_path: Path) -> None:
    path = tmp_path / "registry.gpkg"
    shutil.copy(FIXTURE, path)
    with sqlite3.connect(path) as conn:
        before = {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in PROJECTIONS[:2]}
    init_registry(path, layers=DEMO_LAYERS)
    with open_registry(path, layers=DEMO_LAYERS, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        assert [str(d) for d in reg.verify()] == []
        reg.rebuild()
        assert [str(d) for d in reg.verify()] == []
        with sqlite3.connect(path) as conn:
            after = {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in PROJECTIONS[:2]}
            logged = conn.execute("SELECT COUNT(*) FROM history WHERE log IS NOT NULL").fetchone()[0]
            lines = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    assert after == before and logged == lines > 0


def test_migration_11_refuses_a_registry_changed_behind_its_history(tmp_path: Path, monkeypatch) -> None:
    from esc_gis.registry.store import backend, schema

    path = tmp_path / "registry.gpkg"
    shutil.copy(FIXTURE, path)
    with monkeypatch.context() as m:  # the esc_gis of schema 10: the history replayed from the tables
        m.setattr(backend, "MIGRATIONS", schema.MIGRATIONS[:10])
        m.setattr(backend, "SCHEMA_VERSION", 10)
        assert init_registry(path, layers=DEMO_LAYERS) == [8, 9, 10]
    with sqlite3.connect(path) as conn:  # a fee's amount edited by hand: its event says otherwise
        conn.execute("DROP TRIGGER fees_no_update")
        conn.execute("UPDATE fees SET amount = amount + 1 WHERE id = 1")
    with pytest.raises(RegistryError, match=r"Migration 11 would change 1 row\(s\).*fees.*amount"):
        init_registry(path, layers=DEMO_LAYERS)
    with sqlite3.connect(path) as conn:  # left as it was: migrations 8 to 10 applied, 11 not
        assert conn.execute("SELECT MAX(version) FROM esc_gis_schema").fetchone()[0] == 10


def test_verify_still_names_a_second_difference_of_a_permit_it_already_named(reg) -> None:
    """A status and a fee both changed behind the history: each is listed, neither hides the other."""
    n = add_active(reg)
    pay_application_fee(reg, n, 150.0)
    b = reg.backend
    with b.write() as cur:
        cur.execute("DROP TRIGGER IF EXISTS fees_no_update" if b.dialect == "sqlite" else
                    "DROP TRIGGER fees_append_only ON fees")  # fmt: skip
        cur.execute("UPDATE fees SET amount = 15.0")
        cur.execute(f"UPDATE permits SET status = 'closed' WHERE permit_number = {b.ph}", (n,))
    found = [str(d) for d in reg.verify()]
    assert found == [
        f"{n}: status is 'closed' in the table, 'active' in the history",
        f"{n}: the fees row (id 1) is {{'amount': 15.0}} in the table, {{'amount': 150.0}} in the history",
    ]
    reg.rebuild()


def test_migration_11_keeps_an_update_whose_value_holds_a_semicolon(tmp_path: Path) -> None:
    """Migration 8 read an old update back from the log's text, split at "; ": the table's value is kept."""
    path = tmp_path / "registry.gpkg"
    shutil.copy(FIXTURE, path)
    with sqlite3.connect(path) as conn:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'permits'"):
            conn.execute(f'DROP TRIGGER "{name}"')
        conn.execute(
            "INSERT INTO events (permit_number, at, who, kind, detail) VALUES ('ESC-2026-0001', "
            "'2026-12-01T16:00:00.000Z', 'clerk', 'update', 'legal_description: None -> Lot 5; Block 2 of Plat 7')"
        )
        conn.execute("UPDATE permits SET legal_description = 'Lot 5; Block 2 of Plat 7' "
                     "WHERE permit_number = 'ESC-2026-0001'")  # fmt: skip
    init_registry(path, layers=DEMO_LAYERS)
    with open_registry(path, layers=DEMO_LAYERS, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        assert reg.get("ESC-2026-0001").legal_description == "Lot 5; Block 2 of Plat 7"
        assert [str(d) for d in reg.verify()] == []


def test_an_imported_permit_issued_and_since_closed_keeps_its_issuance(reg) -> None:
    """§ 540-8G counts the period "from the date of issuance": a permit issued and closed was issued."""
    n = reg.add(Application("1 A St", date(2026, 6, 1), square_sqft(100, 100, 5000.0), CRS, status="closed",
                            issued_on=date(2026, 6, 5)), who="clerk")  # fmt: skip
    p = reg.get(n)
    assert (p.status, p.issued_on, p.decided_on, p.expires_on) == ("closed", date(2026, 6, 5), None, None)
    assert reg.state(n).issued_on == date(2026, 6, 5)
