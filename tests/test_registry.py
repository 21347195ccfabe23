"""The permit registry on both back ends: a real GeoPackage file and a real PostgreSQL + PostGIS server.

Every test in this file runs twice: the ``target`` fixture (conftest.py) is a GeoPackage
path, then a PostGIS schema of its own on a real server.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import date, datetime, timezone
from pathlib import Path

import geopandas as gpd
import pytest

from esc_gis.errors import (
    EscGisWarning,
    IllegalTransitionError,
    PermitNotFoundError,
    ProfileError,
    RegistryError,
    ValidationError,
)
from esc_gis.registry import Application, Party, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.service.registry import Registry
from esc_gis.registry.store.schema import SCHEMA_VERSION

from .conftest import CRS, K, box, square_sqft

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def reg(target: str, layer_set):
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as r:
        yield r


def app(x: float = 100, y: float = 100, area_sqft: float = 5000.0, **kw) -> Application:
    """An application for a square site at local (x, y) inside the test Village."""
    kw.setdefault("received_on", date(2026, 11, 2))  # a Monday
    return Application(
        kw.pop("site_address", f"{int(x)} Test St"), kw.pop("received_on"), square_sqft(x, y, area_sqft), CRS, **kw
    )


# --- Schema and migrations ------------------------------------------------------------


def test_init_is_idempotent_and_versioned(target: str, layer_set) -> None:
    assert init_registry(target, layers=layer_set) == list(range(1, SCHEMA_VERSION + 1))
    assert init_registry(target, layers=layer_set) == []


def test_a_version_1_registry_is_migrated_to_the_pause_and_plan_columns(target: str, layer_set, monkeypatch) -> None:
    from esc_gis.registry.store import backend, schema

    with monkeypatch.context() as m:  # a registry made by the esc_gis before migration 2
        m.setattr(backend, "MIGRATIONS", schema.MIGRATIONS[:1])
        m.setattr(backend, "SCHEMA_VERSION", 1)
        m.setattr(Registry, "_append", lambda self, cur, e: e)  # that esc_gis wrote no history
        m.setattr(Registry, "_select_states", lambda self, cur, by_number: None)  # nor read one
        assert init_registry(target, layers=layer_set) == [1]
    with pytest.raises(RegistryError, match=r"schema version 1.*permits init"):
        open_registry(target, layers=layer_set)
    assert init_registry(target, layers=layer_set) == list(range(2, SCHEMA_VERSION + 1))
    with open_registry(target, layers=layer_set) as r:
        n = r.add(
            app(
                plan_id="Meadow",
                issued_on=date(2026, 11, 3),
                status="active",
                started_at=datetime(2026, 11, 4, 8, tzinfo=timezone.utc),
            )
        )
        p = r.update(n, work_stopped_on=date(2026, 11, 10), resume_expected_on=date(2026, 12, 1))
        assert (p.plan_id, p.activity, p.resume_expected_on) == ("Meadow", "construction", date(2026, 12, 1))
        assert p.plan_disturbed_sqft == pytest.approx(5000.0, abs=0.01)


def test_opening_what_is_not_a_registry_says_how_to_make_one(tmp_path: Path, layer_set) -> None:
    with pytest.raises(RegistryError, match="permits init"):
        open_registry(tmp_path / "none.gpkg", layers=layer_set)


def test_a_newer_schema_is_refused(reg, target: str, layer_set) -> None:
    with reg.backend.write() as cur:
        cur.execute(
            f"INSERT INTO esc_gis_schema (version, description, applied_at) VALUES (99, 'future', {reg.backend.ph})",
            (reg.backend.dump("datetime", datetime.now(timezone.utc)),),
        )
    with pytest.raises(RegistryError, match=r"version 99.*Upgrade esc_gis"):
        open_registry(target, layers=layer_set)


def test_a_pending_migration_is_applied_by_init(reg, target: str, layer_set, monkeypatch) -> None:
    from esc_gis.registry.store import backend, schema

    v = schema.SCHEMA_VERSION
    extra = schema.Migration(v + 1, "a test column", lambda d, srid: ["ALTER TABLE permits ADD COLUMN note text"])
    monkeypatch.setattr(backend, "MIGRATIONS", (*schema.MIGRATIONS, extra))
    monkeypatch.setattr(backend, "SCHEMA_VERSION", v + 1)
    with pytest.raises(RegistryError, match=rf"schema version {v}.*permits init"):
        open_registry(target, layers=layer_set)
    assert init_registry(target, layers=layer_set) == [v + 1]
    open_registry(target, layers=layer_set).close()


# --- Adding: measured, validated, numbered ----------------------------------------------


def test_add_measures_the_disturbed_area_with_the_screening_engine(reg) -> None:
    n = reg.add(app(area_sqft=4001.0, parties=(Party("landowner", "Ann Owner", phone="920-555-0100"),)), who="clerk")
    p = reg.get(n)
    assert n == "ESC-2026-0001"
    assert p.disturbed_sqft == pytest.approx(4001.0, abs=0.01)  # just over the 4,000 sq ft threshold
    assert p.permit_decision == "required"
    assert p.status == "application_received"
    assert p.site.geom_type == "MultiPolygon" and p.site.area == pytest.approx(4001.0 / K)
    assert p.parties == [Party("landowner", "Ann Owner", phone="920-555-0100")]
    assert [(e.kind, e.who, e.to_status) for e in p.events] == [("received", "clerk", "application_received")]


def test_disturbed_limits_smaller_than_the_site_are_what_is_measured(reg) -> None:
    n = reg.add(app(area_sqft=20000.0, disturbed=square_sqft(100, 100, 3000.0)))
    p = reg.get(n)
    assert p.disturbed_sqft == pytest.approx(3000.0, abs=0.01)
    assert p.site_sqft == pytest.approx(20000.0, abs=0.01)
    assert p.permit_decision == "not_required"


def test_sites_sent_in_another_crs_are_measured_in_feet(reg) -> None:
    site = gpd.GeoSeries([square_sqft(300, 300, 5000.0)], crs=CRS).to_crs("EPSG:4326").iloc[0]
    n = reg.add(Application("300 Test St", date(2026, 11, 2), site, "EPSG:4326"))
    assert reg.get(n).disturbed_sqft == pytest.approx(5000.0, rel=1e-6)


def test_every_bad_field_is_reported_at_once_and_nothing_is_added(reg) -> None:
    bad = [
        app(site_address=" "),
        app(building_permit_expires=date(2026, 1, 1)),  # before it was received
        Application("Out St", date(2026, 11, 2), box(5000, 5000, 5100, 5100), CRS),  # outside the Village
        app(parties=(Party("landowner", "", email="not-an-address"),)),
        app(status="active", issued_on=None),
    ]
    with pytest.raises(ValidationError) as err:
        reg.add_many(bad, source="test")
    text = str(err.value)
    for row, words in [
        (1, "site_address is empty"),
        (2, "before received_on"),
        (3, "inside the Village"),  # outside it: within 1.5 miles, the reading says so
        (4, "has no name"),
        (4, "not an address"),
        (5, "needs issued_on"),
    ]:
        assert any(p.row == row and words in p.message for p in err.value.problems), (row, words, text)
    assert reg.permits() == []


def test_a_number_already_taken_is_refused(reg) -> None:
    reg.add(app(permit_number="ESC-2026-0042"))
    with pytest.raises(ValidationError, match="already taken"):
        reg.add(app(x=300, permit_number="ESC-2026-0042"))
    # Numbering skips a number an import already holds.
    reg.add(app(x=500, permit_number="ESC-2026-0001"))
    assert reg.add(app(x=700)) == "ESC-2026-0002"


# --- The life cycle and its dates -------------------------------------------------------


def _paid(reg, n: str) -> None:
    """Record the application fee, without which an application is not complete (§ 540-8B)."""
    reg.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt=f"R-{n}", who="clerk")


@pytest.mark.usefixtures("late_clock")
def test_life_cycle_with_dates_expiry_and_extensions(reg) -> None:
    n = reg.add(app(building_permit_expires=date(2027, 9, 1)))
    _paid(reg, n)
    reg.transition(n, "under_review", on=date(2026, 11, 3), who="rev")
    p = reg.transition(n, "approved", on=date(2026, 11, 20))
    # 180 days from issue is 2027-05-19; the building permit runs longer, so it governs (§ 540-8G).
    assert (p.issued_on, p.expires_on) == (date(2026, 11, 20), date(2027, 9, 1))
    p = reg.transition(n, "active", on=datetime(2026, 11, 23, 7, 30, tzinfo=timezone.utc))
    assert p.started_at == datetime(2026, 11, 23, 7, 30, tzinfo=timezone.utc)
    p = reg.extend(n, 180, on=date(2027, 8, 20))
    p = reg.extend(n, 30, on=date(2028, 2, 1))
    assert p.status == "extended" and p.expires_on == date(2028, 3, 29)  # 2027-09-01 + 180 + 30 days
    assert p.extensions_days == [180, 30]
    with pytest.raises(ProfileError, match="up to 180"):
        reg.extend(n, 181, on=date(2028, 3, 1))  # within the period: only the 180 days refuse it
    assert [e.kind for e in reg.get(n).events] == [
        "received",
        "fee",
        "transition",
        "transition",
        "transition",
        "extension",
        "extension",
    ]


def test_illegal_transition_lists_the_allowed_ones(reg) -> None:
    n = reg.add(app())
    with pytest.raises(IllegalTransitionError, match="allowed: under_review, incomplete"):
        reg.transition(n, "active")
    _paid(reg, n)
    reg.transition(n, "under_review", on=date(2026, 11, 3))
    with pytest.raises(IllegalTransitionError, match=r"written reasons \(basis ordinance: § 540-8C\(3\)\)"):
        reg.transition(n, "disapproved", on=date(2026, 11, 10))
    p = reg.transition(n, "disapproved", on=date(2026, 11, 10), reasons="No perimeter control on the east edge.")
    assert p.events[-1].detail == "No perimeter control on the east edge."
    assert reg.get(n).status == "disapproved"


@pytest.mark.usefixtures("late_clock")
def test_deemed_approval_only_after_the_20_business_days(reg) -> None:
    n = reg.add(app())  # received Monday 2026-11-02; no holidays in this calendar
    _paid(reg, n)
    reg.transition(n, "under_review", on=date(2026, 11, 3))
    with pytest.raises(IllegalTransitionError, match="due by 2026-11-30"):
        reg.transition(n, "deemed_approved", on=date(2026, 11, 30))
    p = reg.transition(n, "deemed_approved", on=date(2026, 12, 10), who="clerk")
    # Dated the day the 20 business days ran out, not the day staff wrote it down (§ 540-8C(5)).
    assert (p.decided_on, p.issued_on) == (date(2026, 11, 30), date(2026, 11, 30))
    assert p.expires_on == date(2027, 5, 29)  # 180 days from 2026-11-30
    assert (p.events[-1].on_date, p.events[-1].detail) == (date(2026, 11, 30), "recorded on 2026-12-10")


def test_an_application_never_taken_up_is_deemed_approved_when_its_period_runs_out(reg) -> None:
    """§ 540-8C(5): "Failure by the administering authority to inform the permit applicant of a decision within
    20 business days of a required submittal shall be deemed to mean approval of the submittal"."""
    n = reg.add(app())  # received and paid Monday 2026-11-02; never put under review
    _paid(reg, n)
    with pytest.raises(IllegalTransitionError, match="due by 2026-11-30"):
        reg.transition(n, "deemed_approved", on=date(2026, 11, 30))
    p = reg.transition(n, "deemed_approved", on=date(2026, 12, 2))
    assert (p.status, p.issued_on) == ("deemed_approved", date(2026, 11, 30))


@pytest.mark.parametrize("move", ["disapproved", "incomplete"])
def test_after_the_period_ran_out_no_late_disapproval_or_request_takes_the_deemed_approval_back(reg, move) -> None:
    """§ 540-8C(5): "Failure by the administering authority to inform the permit applicant of a decision
    within 20 business days of a required submittal shall be deemed to mean approval of the submittal"."""
    n = reg.add(app())  # received and paid Monday 2026-11-02: the decision is due 2026-11-30
    _paid(reg, n)
    reg.transition(n, "under_review", on=date(2026, 11, 3))
    with pytest.raises(IllegalTransitionError, match=r"ran out on 2026-11-30 .*deemed_approved.*§ 540-8C\(5\)"):
        reg.transition(n, move, on=date(2026, 12, 1), reasons="Too late")
    assert reg.get(n).status == "under_review"
    # On the last day of the period the office may still decide or ask.
    p = reg.transition(n, move, on=date(2026, 11, 30), reasons="In time")
    assert p.status == move


@pytest.mark.usefixtures("late_clock")
def test_information_requested_restarts_the_decision_clock(reg) -> None:
    n = reg.add(app())
    reg.transition(n, "incomplete", on=date(2026, 11, 10))
    _paid(reg, n)
    p = reg.transition(n, "under_review", on=date(2026, 12, 7))  # a Monday
    assert reg.decision_due(p).due == date(2027, 1, 4)  # 20 business days later (no holidays here)
    assert "information" in reg.decision_due(p).section or reg.decision_due(p).section.startswith("§ 540-8C")


def test_dates_out_of_order_are_refused(reg) -> None:
    n = reg.add(app())
    with pytest.raises(ValidationError, match=r"on=2026-10-01 is before the application's receipt \(2026-11-02\)"):
        reg.transition(n, "under_review", on=date(2026, 10, 1))
    _paid(reg, n)
    assert reg.transition(n, "under_review", on=date(2026, 11, 2)).status == "under_review"  # the same day: fine


def test_unknown_permit(reg) -> None:
    with pytest.raises(PermitNotFoundError, match="ESC-1999-0001"):
        reg.get("ESC-1999-0001")


def test_update_records_inspections_and_dates_in_the_history(reg) -> None:
    n = reg.add(app())
    with pytest.raises(ValidationError, match="before work starts"):
        reg.update(n, inspected_on=date(2026, 11, 25))
    _paid(reg, n)
    for state, day in (
        ("under_review", date(2026, 11, 3)),
        ("approved", date(2026, 11, 10)),
        ("active", date(2026, 11, 16)),
    ):
        reg.transition(n, state, on=day)
    p = reg.update(n, inspected_on=date(2026, 11, 20), work_stopped_on=date(2026, 11, 25), who="insp")
    assert p.inspections == [date(2026, 11, 20)]
    assert p.work_stopped_on == date(2026, 11, 25)
    with pytest.raises(ValidationError, match="cannot be updated"):
        reg.update(n, disturbed_sqft=1.0)


def test_history_is_append_only_in_the_database(reg) -> None:
    reg.add(app())
    with pytest.raises(Exception, match="append-only"), reg.backend.write() as cur:
        cur.execute("DELETE FROM events")
    with pytest.raises(Exception, match="append-only"), reg.backend.write() as cur:
        cur.execute("UPDATE events SET who = 'someone else'")
    assert len(reg.get("ESC-2026-0001").events) == 1


# --- Import: all or nothing ---------------------------------------------------------------


def _import_frame(rows: list[dict]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def test_import_reports_every_bad_row_and_imports_nothing(reg) -> None:
    rows = [
        {
            "site_address": "1 A St",
            "received_on": "2026-11-02",
            "landowner_name": "Ann",
            "geometry": square_sqft(100, 100, 5000),
        },
        {"site_address": "2 B St", "received_on": "11/02/2026", "geometry": square_sqft(300, 100, 5000)},
        {
            "site_address": "3 C St",
            "received_on": "2026-11-02",
            "status": "active",
            "issued_on": "2026-11-05",
            "started_at": "2026-11-01T08:00",
            "geometry": square_sqft(500, 100, 5000),
        },
        {"site_address": "4 D St", "received_on": "2026-11-02", "geometry": box(9000, 9000, 9100, 9100)},
    ]
    with pytest.raises(ValidationError) as err:
        reg.import_frame(_import_frame(rows), source="permits.csv")
    rows_named = {p.row for p in err.value.problems}
    assert rows_named == {2, 3, 4}, str(err.value)
    assert "YYYY-MM-DD" in str(err.value) and "before issued_on" in str(err.value)
    assert reg.permits() == []


def test_import_of_legacy_permits_in_their_states(reg) -> None:
    rows = [
        {
            "permit_number": "ESC-2025-0007",
            "site_address": "1 A St",
            "received_on": "2025-03-01",
            "status": "active",
            "issued_on": "2025-03-20",
            "started_at": "2025-04-01T08:00",
            "start_notice_at": "2025-04-02T09:15Z",
            "responsible_email": "gc@example.com",
            "responsible_name": "GC Inc",
            "geometry": square_sqft(100, 100, 50000),
        },
        {"site_address": "2 B St", "received_on": "2026-11-02", "geometry": square_sqft(400, 400, 3000)},
    ]
    numbers = reg.import_frame(_import_frame(rows), source="permits.gpkg", who="import")
    assert numbers == ["ESC-2025-0007", "ESC-2026-0001"]
    p = reg.get("ESC-2025-0007")
    assert p.status == "active" and p.expires_on == date(2025, 9, 16)  # 180 days from 2025-03-20
    assert p.sediment_standard is True  # 50,000 sq ft is over an acre
    assert p.parties[0].email == "gc@example.com"
    assert p.start_notice_at == datetime(2025, 4, 2, 9, 15, tzinfo=timezone.utc)


def test_an_imported_permit_missing_from_the_disturbed_layer_is_decided_on_its_whole_site(reg) -> None:
    rows = [
        {"permit_number": "ESC-2026-0101", "site_address": "1 A St", "received_on": "2026-11-02"},
        {"permit_number": "ESC-2026-0102", "site_address": "2 B St", "received_on": "2026-11-02"},
        {"site_address": "3 C St", "received_on": "2026-11-02"},  # numbered by the registry: no key to match
    ]
    sites = [square_sqft(100, 100, 20000), square_sqft(400, 400, 6000), square_sqft(700, 700, 5000)]
    frame = gpd.GeoDataFrame(rows, geometry=sites, crs=CRS)
    limits = gpd.GeoDataFrame({"permit_number": ["ESC-2026-0101"]}, geometry=[square_sqft(100, 100, 3000)], crs=CRS)
    # Warned, naming them, as `esc-gis screen --disturbed` warns of a site its limits do not name (issue 46).
    with pytest.warns(EscGisWarning, match=r"no polygon for 2 row\(s\) by permit_number: ESC-2026-0102, row 3\."):
        numbers = reg.import_frame(frame, source="permits.gpkg", disturbed=limits)
    got = {n: reg.get(n) for n in numbers}
    # The permit with limits is measured on them; the others count their whole site, as
    # `permits add` without --disturbed does, never 0 sq ft.
    assert got["ESC-2026-0101"].disturbed_sqft == pytest.approx(3000.0, abs=0.01)
    assert got["ESC-2026-0101"].permit_decision == "not_required"
    assert got["ESC-2026-0102"].disturbed_sqft == pytest.approx(6000.0, abs=0.01)
    assert got["ESC-2026-0102"].permit_decision == "required"
    assert got["ESC-2026-0102"].disturbed is None  # no disturbed-limits polygon is invented
    assert "whole site" in got["ESC-2026-0102"].events[0].detail
    assert "whole site" not in got["ESC-2026-0101"].events[0].detail
    assert got[numbers[2]].disturbed_sqft == pytest.approx(5000.0, abs=0.01)
    assert got[numbers[2]].permit_decision == "required"


def test_a_plan_member_without_limits_keeps_its_whole_site_when_one_with_limits_joins(reg) -> None:
    first = reg.add(app(100, 100, area_sqft=3000.0, plan_id="P1"))  # whole site, no limits
    second = reg.add(app(400, 400, area_sqft=20000.0, plan_id="P1", disturbed=square_sqft(400, 400, 2000.0)))
    assert reg.get(second).plan_disturbed_sqft == pytest.approx(5000.0, abs=0.01)  # 3,000 + 2,000, not 0 + 2,000
    assert reg.get(first).disturbed_sqft == pytest.approx(3000.0, abs=0.01)


# --- Reliability: crashes and concurrent writers -------------------------------------------

_CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {src!r})
    from datetime import date
    from esc_gis.registry import Application, open_registry
    from esc_gis.layers import load_layers
    from esc_gis.profile import load_profile
    import shapely
    target, manifest, who, mode = sys.argv[1:5]
    ls = load_layers(manifest, profile=load_profile())
    x0, y0 = {x0}, {y0}
    with open_registry(target, layers=ls) as reg:
        if mode == "add":
            dy = 400 * int(who[1:])  # each writer its own sites: a site takes one application (issue 46)
            for i in range(20):
                reg.add(Application(f"{{who}} {{i}}", date(2026, 11, 2), shapely.box(x0 + 20 * i, y0 + dy, x0 + 20 * i + 15, y0 + dy + 300), "EPSG:7594"), who=who)
        elif mode == "same":
            from esc_gis.errors import ValidationError
            try:
                reg.add(Application(who, date(2026, 11, 2), shapely.box(x0, y0, x0 + 100, y0 + 100), "EPSG:7594"), who=who)
            except ValidationError as exc:
                print(exc)
                sys.exit(3)
        elif mode == "inspect":
            for i in range(20):
                reg.update("ESC-2026-0001", inspected_on=date(2026, 11, 20), who=who)
        elif mode == "crash":
            import os
            from esc_gis.registry.service import intake
            real = intake._insert
            def dying(reg, *a, **k):
                real(reg, *a, **k)
                os._exit(9)  # every row is written; the process dies before the commit
            intake._insert = dying
            reg.add_many([Application(f"c {{i}}", date(2026, 11, 2), shapely.box(x0 + 20 * i, y0, x0 + 20 * i + 15, y0 + 300), "EPSG:7594") for i in range(5)])
""")


def _children(target: str, layers_path: Path, mode: str, n: int) -> list[subprocess.CompletedProcess]:
    from .conftest import X0, Y0

    code = _CHILD.format(src=str(SRC), x0=X0 + 100, y0=Y0 + 1000)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, target, str(layers_path), f"w{k}", mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(n)
    ]
    return [subprocess.CompletedProcess(p.args, p.wait(timeout=300), *p.communicate()) for p in procs]


def test_two_processes_adding_at_once_lose_nothing(reg, target: str, layers_path: Path) -> None:
    done = _children(target, layers_path, "add", 2)
    assert [d.returncode for d in done] == [0, 0], [d.stderr[-2000:] for d in done]
    permits = reg.permits()
    assert len(permits) == 40
    assert sorted(p.permit_number for p in permits) == [f"ESC-2026-{i:04d}" for i in range(1, 41)]
    assert sorted(p.site_address for p in permits) == sorted(f"w{k} {i}" for k in range(2) for i in range(20))
    assert all(len(p.events) == 1 for p in permits)


def test_two_processes_adding_one_site_at_once_make_one_permit(reg, target: str, layers_path: Path) -> None:
    """Two clerks send the same lot at once: one application is taken, the other refused naming it (issue 46)."""
    done = _children(target, layers_path, "same", 2)
    assert sorted(d.returncode for d in done) == [0, 3], [d.stderr[-2000:] for d in done]
    assert "covered by permit ESC-2026-0001" in next(d.stdout for d in done if d.returncode == 3)
    assert [p.permit_number for p in reg.permits()] == ["ESC-2026-0001"]


def test_two_processes_updating_one_permit_lose_no_event(reg, target: str, layers_path: Path) -> None:
    n = reg.add(app())
    _paid(reg, n)
    for state, day in (
        ("under_review", date(2026, 11, 3)),
        ("approved", date(2026, 11, 10)),
        ("active", date(2026, 11, 16)),
    ):
        reg.transition(n, state, on=day)
    done = _children(target, layers_path, "inspect", 2)
    assert [d.returncode for d in done] == [0, 0], [d.stderr[-2000:] for d in done]
    events = reg.get(n).events
    assert sum(e.kind == "inspection" for e in events) == 40
    assert {e.who for e in events if e.kind == "inspection"} == {"w0", "w1"}


def test_a_crash_mid_transaction_leaves_the_registry_as_it_was(reg, target: str, layers_path: Path) -> None:
    reg.add(app())
    done = _children(target, layers_path, "crash", 1)
    assert done[0].returncode == 9, done[0].stderr[-2000:]
    assert [p.permit_number for p in reg.permits()] == ["ESC-2026-0001"]
    # ... and it still takes writes, numbering where it left off.
    assert reg.add(app(x=300)) == "ESC-2026-0002"


# --- Export frame: no contacts unless asked ------------------------------------------------


def test_frame_leaves_contacts_out_unless_private(reg) -> None:
    reg.add(app(parties=(Party("landowner", "Ann Owner", phone="920-555-0100", email="ann@example.com"),)))
    public = reg.frame()
    assert not [c for c in public.columns if c.startswith(("landowner", "responsible"))]
    private = reg.frame(private=True)
    assert private.loc[0, "landowner_email"] == "ann@example.com"
    assert public.crs == CRS and public.loc[0, "disturbed_acres"] == pytest.approx(5000 / 43560, abs=1e-3)


# --- Suspension, retraction and reinstatement (§ 540-8E, § 540-12D) ---------------------------


def _active(reg, **kw) -> str:
    n = reg.add(app(**kw))
    _paid(reg, n)
    for state, day in (
        ("under_review", date(2026, 11, 3)),
        ("approved", date(2026, 11, 10)),
        ("active", date(2026, 11, 16)),
    ):
        reg.transition(n, state, on=day)
    return n


@pytest.mark.usefixtures("late_clock")
def test_retraction_goes_back_to_the_state_before_through_the_history(reg) -> None:
    n = _active(reg)
    reg.extend(n, 30, on=date(2026, 12, 1))
    reg.transition(n, "stop_work", on=date(2026, 12, 2), reasons="Silt fence down along the lake.")
    with pytest.raises(IllegalTransitionError, match=r"written reasons \(basis ordinance: § 540-8E\)"):
        reg.transition(n, "revoked", on=date(2026, 12, 9))
    reg.transition(
        n, "revoked", on=date(2026, 12, 9), reasons="Stop-work order ignored.", notified_on=date(2026, 12, 7)
    )
    with pytest.raises(
        IllegalTransitionError, match=r"written reasons \(basis policy: the office's rule; § 540-12D requires none\)"
    ):
        reg.retract(n, reasons=" ", on=date(2026, 12, 10))
    p = reg.retract(n, reasons="Village Board: fence repaired, revocation retracted.", on=date(2026, 12, 10))
    assert p.status == "stop_work"
    p = reg.retract(n, reasons="Order retracted after inspection.", on=date(2026, 12, 11), who="pwd")
    assert p.status == "extended"  # the order was made on an extended permit
    assert [(e.kind, e.from_status, e.to_status) for e in p.events[-2:]] == [
        ("retraction", "revoked", "stop_work"),
        ("retraction", "stop_work", "extended"),
    ]
    assert p.events[-1].detail == "Order retracted after inspection." and p.events[-1].who == "pwd"
    with pytest.raises(IllegalTransitionError, match="nothing to undo"):
        reg.retract(n, reasons="again")


def test_suspension_and_reinstatement_with_written_notification(reg) -> None:
    n = _active(reg)
    with pytest.raises(IllegalTransitionError, match=r"written reasons \(basis ordinance: § 540-8E\)"):
        reg.transition(n, "suspended", on=date(2026, 11, 20))
    why = "Notice of 2026-11-18: no inspection reports."
    # § 540-8E: "may suspend or revoke a permit ... following written notification of the responsible party".
    with pytest.raises(
        IllegalTransitionError, match=r"following written notification .*not given.*notified_on=YYYY-MM-DD"
    ):
        reg.transition(n, "suspended", on=date(2026, 11, 20), reasons=why)
    with pytest.raises(IllegalTransitionError, match=r"dated 2026-11-21, after the move \(2026-11-20\)"):
        reg.transition(n, "suspended", on=date(2026, 11, 20), reasons=why, notified_on=date(2026, 11, 21))
    assert reg.get(n).status == "active"
    # Notified the same day as the move: it follows the notification (the edge).
    p = reg.transition(n, "suspended", on=date(2026, 11, 20), reasons=why, notified_on=date(2026, 11, 20))
    assert reg.history(n)[-1].data["notified_on"] == "2026-11-20"
    assert p.status == "suspended" and p.previous_status == "active"
    with pytest.raises(IllegalTransitionError, match="nothing to undo"):
        reg.retract(n, reasons="x")
    p = reg.reinstate(n, reasons="Reports delivered.", on=date(2026, 11, 24))
    assert p.status == "active" and p.events[-1].kind == "reinstatement"
    # The history stays append-only: every move, there and back, is on record.
    assert [e.to_status for e in p.events if e.to_status][-2:] == ["suspended", "active"]


def test_a_permit_imported_in_a_state_has_nothing_before_it_to_go_back_to(reg) -> None:
    n = reg.add(
        app(status="stop_work", issued_on=date(2026, 11, 3), started_at=datetime(2026, 11, 4, 8, tzinfo=timezone.utc))
    )
    with pytest.raises(IllegalTransitionError, match="does not show the state before"):
        reg.retract(n, reasons="Order retracted.")


# --- Work pauses: expected and actual resumption ----------------------------------------------


def test_a_new_stop_clears_the_last_pause_and_resumption_needs_a_stop(reg) -> None:
    n = _active(reg)
    with pytest.raises(ValidationError, match="no stop of work is recorded"):
        reg.update(n, resume_expected_on=date(2026, 12, 1))
    p = reg.update(n, work_stopped_on=date(2026, 11, 20), resume_expected_on=date(2026, 11, 25))
    with pytest.raises(ValidationError, match="before work stopped"):
        reg.update(n, work_resumed_on=date(2026, 11, 19))
    p = reg.update(n, work_resumed_on=date(2026, 11, 24))
    assert (p.work_stopped_on, p.resume_expected_on, p.work_resumed_on) == (
        date(2026, 11, 20),
        date(2026, 11, 25),
        date(2026, 11, 24),
    )
    p = reg.update(n, work_stopped_on=date(2026, 12, 1))
    assert (p.work_stopped_on, p.resume_expected_on, p.work_resumed_on) == (date(2026, 12, 1), None, None)


# --- Common plans and exempt agricultural area (§ 540-5, § 540-4A(2)) -------------------------


def test_a_permit_on_a_common_plan_is_decided_on_the_plan_total(reg) -> None:
    a = reg.add(app(x=100, area_sqft=3000.0, plan_id="Meadow"))
    assert reg.get(a).permit_decision == "not_required"  # 3,000 sq ft alone
    b = reg.add(app(x=400, area_sqft=3000.0, plan_id="Meadow"))
    pb, pa = reg.get(b), reg.get(a)
    assert pb.plan_disturbed_sqft == pytest.approx(6000.0, abs=0.01) and pb.permit_decision == "required"
    # The plan's first permit is decided again on the plan's total, and the history says so.
    assert pa.plan_disturbed_sqft == pytest.approx(6000.0, abs=0.01) and pa.permit_decision == "required"
    assert pa.events[-1].kind == "remeasured" and "(was not_required)" in pa.events[-1].detail
    # Another plan, and no plan, are not added in.
    c = reg.add(app(x=700, area_sqft=3000.0, plan_id="Other"))
    d = reg.add(app(x=1000, area_sqft=3000.0))
    assert reg.get(c).permit_decision == "not_required" and reg.get(d).permit_decision == "not_required"


def test_exempt_agricultural_area_is_refused_and_never_counts_toward_a_plan(reg) -> None:
    """§ 540-4A(2): "This article does not apply to the following: (a) Nonpoint discharges from
    agricultural activity areas." Screening finds it so; the registry takes that decision (issue 34):
    the farm takes no permit, and an agricultural *production* site on its plan is not exempt."""
    with pytest.raises(ValidationError, match=r"takes no permit: Nonpoint discharges from an agricultural"):
        reg.add(app(x=100, area_sqft=20000.0, plan_id="Farm", activity="agricultural_activity"))
    barn = reg.add(app(x=400, y=400, area_sqft=2000.0, plan_id="Farm", activity="agricultural_production"))
    p = reg.get(barn)
    assert p.plan_disturbed_sqft == pytest.approx(2000.0, abs=0.01) and p.permit_decision == "not_required"
    # The farm measured with the barn as the rest of its screening (context) adds nothing to the plan.
    farm = app(x=100, area_sqft=20000.0, plan_id="Farm", activity="agricultural_activity")
    shed = reg.add(app(x=700, y=700, area_sqft=1500.0, plan_id="Farm"), context=[farm])
    assert reg.get(shed).plan_disturbed_sqft == pytest.approx(3500.0, abs=0.01)


def test_permit_numbers_follow_the_profile_pattern(target: str, layer_set, tmp_path: Path) -> None:
    from esc_gis.profile import _builtin_path, load_profile

    text = _builtin_path("winneconne").read_text(encoding="utf-8")
    other = tmp_path / "other.toml"
    other.write_text(text.replace('permit_number = "ESC-{year}-{seq:04d}"', 'permit_number = "EC/{year}/{seq:03d}"'))
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set, profile=load_profile(other)) as r:
        assert r.add(app()) == "EC/2026/001"
