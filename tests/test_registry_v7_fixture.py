"""The schema-version-7 registry fixture (tests/data/registry_v7) is intact and says what expected.json says.

The file is read with sqlite3 alone, read-only, not through the registry API: later code opens
only registries at its own schema version, and a migration test must copy the file, never
migrate it in place. These tests fail if it is changed (migrated, rewritten, truncated).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "data" / "registry_v7"
GPKG = HERE / "registry_v7.gpkg"


@pytest.fixture(scope="module")
def expected() -> dict:
    return json.loads((HERE / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture
def db():
    con = sqlite3.connect(f"file:{GPKG}?mode=ro", uri=True)
    yield con
    con.close()


def test_fixture_is_small_and_at_schema_version_7(db):
    assert GPKG.stat().st_size < 1_000_000
    assert [v for (v,) in db.execute("SELECT version FROM esc_gis_schema ORDER BY version")] == [1, 2, 3, 4, 5, 6, 7]


def test_row_counts(db, expected):
    counts = {t: db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in expected["tables"]}
    assert counts == expected["tables"]
    assert counts["permits"] == len(expected["permits"]) == 14


def test_photos_keep_their_bytes(db, expected):
    rows = db.execute("SELECT id, filename, sha256, data FROM inspection_photos ORDER BY id").fetchall()
    got = {str(i): {"filename": f, "sha256": hashlib.sha256(data).hexdigest()} for i, f, _, data in rows}
    assert got == expected["photos"]
    assert all(hashlib.sha256(data).hexdigest() == sha for _, _, sha, data in rows)
    assert len({p["sha256"] for p in got.values()}) == 2  # two different photos


def test_every_state_and_its_dates(db, expected):
    from esc_gis.registry.domain.lifecycle import STATES

    cols = "permit_number, parcel_id, status, received_on, decided_on, issued_on, expires_on, started_at, final_on"
    got = {}
    for number, parcel, status, *dates in db.execute(f"SELECT {cols} FROM permits"):
        started = dates[4] and datetime.fromisoformat(dates[4].replace("Z", "+00:00")).astimezone(timezone.utc)
        got[number] = {
            "parcel_id": parcel,
            "status": status,
            "received_on": dates[0],
            "decided_on": dates[1],
            "issued_on": dates[2],
            "expires_on": dates[3],
            "started_at": started.isoformat() if started else None,
            "final_on": dates[5],
        }
    assert got == expected["permits"]
    assert {p["status"] for p in got.values()} == set(STATES)


def test_guarantee_balances_and_case_states(db, expected):
    balances = {}
    for gid, number, type_, amount in db.execute("SELECT id, permit_number, type, amount FROM guarantees"):
        events = db.execute("SELECT kind, amount FROM guarantee_events WHERE guarantee_id = ?", (gid,)).fetchall()
        left = 0.0 if any(k == "final_release" for k, _ in events) else amount - sum(a for _, a in events)
        balances[str(gid)] = {"permit_number": number, "type": type_, "balance": round(left, 2)}
    assert balances == expected["guarantees"]
    states = {}
    for case_id, number in db.execute("SELECT case_id, permit_number FROM enforcement_cases"):
        state = "open"
        for (kind,) in db.execute("SELECT kind FROM enforcement_events WHERE case_id = ? ORDER BY id", (case_id,)):
            state = {"stop_work": "stop_work", "retraction": "retracted", "closed": "closed"}.get(kind, state)
        states[case_id] = {"permit_number": number, "state": state}
    assert states == expected["cases"]
