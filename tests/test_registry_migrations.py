"""A registry of every earlier schema version migrates with nothing lost, and rebuilds from its history (issue 37).

For each version 1 to 10 a registry is made as the esc_gis of that version would have left it
after an office's weeks (only the commands that version had: inspections from 3, cases and
appeals from 4, fees and guarantees from 5, plan versions from 6), on both back ends; then
``permits init`` migrates it. Every table keeps its rows, every photo its bytes (SHA-256) and
every guarantee its balance; ``verify`` is clean, and so is it after ``permits rebuild``.
"""

from __future__ import annotations

import hashlib
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from esc_gis.registry import Application, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.store import backend, schema
from esc_gis.registry.store.backend import open_backend
from esc_gis.registry.store.schema import SCHEMA_VERSION, TABLES

from .conftest import CRS, add_active, pay_application_fee, square_sqft, written_by_an_earlier_esc_gis
from .test_inspections import tiny_png


def office_weeks(version: int, photo: Path):
    """The commands an office ran on the esc_gis of ``version`` (none that version lacked)."""

    def write(r) -> str:
        n = add_active(r)
        r.add(Application("200 Test St", date(2026, 11, 2), square_sqft(300, 100, 50_000.0), CRS,
                          disturbed=square_sqft(300, 100, 43_560.0)), who="clerk")  # fmt: skip
        r.update(n, stockpile_since=date(2026, 11, 12))
        if version >= 3:
            got = r.inspect(n, InspectionReport(datetime(2026, 11, 10, 15, tzinfo=timezone.utc), "Ina Inspector",
                                                "fence sagging", deficiencies=["fence down"], photos=[photo],
                                                location=r.get(n).site.centroid))  # fmt: skip
            r.repaired(n, [got.deficiencies[0].id], on=datetime(2026, 11, 11, 15, tzinfo=timezone.utc))
        if version >= 4:
            c = r.enforce(ground="A4", on=date(2026, 11, 20), reasons="no permit", address="1 A St")
            r.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted at the lot")
            r.case_action(c.case_id, "notice", on=date(2026, 11, 23), costs=75.0, costs_from="billed")
        if version >= 5:
            pay_application_fee(r, n, 150.0)
            g = r.add_guarantee(n, type="cash_escrow", amount=1000.0, received_on=date(2026, 11, 3), who="cl")
            r.guarantee_event(g.id, "draw", on=date(2026, 11, 20), amount=150.0, reason="silt fence replaced",
                              notice_on=date(2026, 11, 20))  # fmt: skip
        if version >= 6:
            r.amend(n, trigger="original", description="Plan as approved", plan_date=date(2026, 10, 28))
        r.transition(n, "stop_work", on=date(2026, 11, 24), reasons="posted at the gate")
        return n

    return write


def _facts(target: str) -> tuple[dict[str, int], dict[int, str], dict[int, float]]:
    """Row counts of every table there is, photos' SHA-256 of their bytes, guarantees' balances."""
    b = open_backend(target)
    try:
        with b.read() as cur:
            if b.dialect == "sqlite":
                cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            else:
                cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
            there = {r[0] for r in cur.fetchall()}
            counts = {}
            for table in (t for t in TABLES if t in there):  # the tables that version had
                cur.execute(f'SELECT COUNT(*) FROM "{table}"')
                counts[table] = int(cur.fetchone()[0])
    finally:
        b.close()
    b = open_backend(target)
    try:
        with b.read() as cur:
            photos, balances = {}, {}
            if "inspection_photos" in counts:
                cur.execute("SELECT id, data FROM inspection_photos")
                photos = {int(i): hashlib.sha256(b.load("blob", d)).hexdigest() for i, d in cur.fetchall()}
            if "guarantees" in counts:
                cur.execute("SELECT g.id, g.amount - COALESCE((SELECT SUM(e.amount) FROM guarantee_events e "
                            "WHERE e.guarantee_id = g.id), 0) FROM guarantees g")  # fmt: skip
                balances = {int(i): round(float(v), 2) for i, v in cur.fetchall()}
    finally:
        b.close()
    return counts, photos, balances


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_a_registry_of_every_earlier_version_migrates_with_nothing_lost(
    target: str, layer_set, tmp_path: Path, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    photo = tmp_path / "fence.png"
    photo.write_bytes(tiny_png())
    with monkeypatch.context() as m:  # the esc_gis of that version made it
        m.setattr(backend, "MIGRATIONS", schema.MIGRATIONS[:version])
        m.setattr(backend, "SCHEMA_VERSION", version)
        assert init_registry(target, layers=layer_set) == list(range(1, version + 1))
    n = written_by_an_earlier_esc_gis(target, layer_set, office_weeks(version, photo), tmp_path)
    counts, photos, balances = _facts(target)
    assert counts["permits"] == 2 and (version < 3 or len(photos) == 1) and (version < 5 or balances == {1: 850.0})
    assert init_registry(target, layers=layer_set) == list(range(version + 1, SCHEMA_VERSION + 1))
    after, photos_after, balances_after = _facts(target)
    assert {t: after[t] for t in counts if t != "esc_gis_schema"} == {
        t: c for t, c in counts.items() if t != "esc_gis_schema"
    }
    assert photos_after == photos and balances_after == balances
    with open_registry(target, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        assert [str(d) for d in reg.verify()] == []
        assert reg.get(n).status == "stop_work"
        reg.rebuild()
        assert [str(d) for d in reg.verify()] == []
    assert _facts(target)[1:] == (photos, balances)
