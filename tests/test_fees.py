"""Fees (§ 540-8B, § 540-10) and financial guarantees (§ 540-8D), on both back ends (the
``target`` fixture: a GeoPackage file and the real PostGIS server): an application goes under
review only with its fee, the schedule is data, guarantees are drawn on and released, a
letter of credit's expiry is a deadline in ``permits due`` and the .ics feed, every write
has its history event, refusals write nothing, the tables are append-only, and nothing of
a fee or guarantee reaches a public output.
"""

from __future__ import annotations

import csv
import stat
from datetime import date, timezone
from pathlib import Path

import pytest

from esc_gis.errors import IllegalTransitionError, ProfileError, RegistryError, ValidationError
from esc_gis.registry import Application, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.fees import load_fee_schedule
from esc_gis.registry.service.registry import Registry
from esc_gis.registry.store.schema import SCHEMA_VERSION

from .conftest import CRS, add_active, pay_application_fee, square_sqft, written_by_an_earlier_esc_gis
from .public_outputs import assert_hidden, public_outputs, run_permits

UTC = timezone.utc
CAL = OfficeCalendar(holidays=frozenset())
EXAMPLE = Path(__file__).parents[1] / "examples" / "fee-schedule.example.toml"


@pytest.fixture
def received(reg) -> str:
    return reg.add(Application("100 Test St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS), who="clerk")


@pytest.fixture
def active(reg) -> str:
    return add_active(reg, x=400, address="200 Test St")


def count(reg: Registry, table: str) -> int:
    with reg.backend.read() as cur:
        cur.execute(f"SELECT count(*) FROM {table}")
        return int(cur.fetchone()[0])


_run = run_permits


# --- Fees ---------------------------------------------------------------------------------


def test_review_waits_for_the_application_fee(reg, received: str) -> None:
    with pytest.raises(IllegalTransitionError, match=r"not complete without its application fee.*permits fee"):
        reg.transition(received, "under_review", on=date(2026, 11, 3))
    assert reg.get(received).status == "application_received"  # nothing written
    # The test layer set names its fee schedule ([fees]): application and plan amendment 1.00 each.
    reg.record_fee(received, kind="plan_amendment", amount=1.0, paid_on=date(2026, 11, 2), receipt="R-0")
    with pytest.raises(IllegalTransitionError, match="application fee"):  # another kind does not complete it
        reg.transition(received, "under_review", on=date(2026, 11, 3))
    f = reg.record_fee(received, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt="R-1", who="cl")
    assert (f.kind, f.amount, f.receipt, f.recorded_by) == ("application", 1.0, "R-1", "cl")
    assert f.schedule_resolution == "TEST resolution 1 (made up) (2000-01-01)"
    assert reg.transition(received, "under_review", on=date(2026, 11, 3)).status == "under_review"
    fee_events = [e for e in reg.get(received).events if e.kind == "fee"]
    assert [(e.who, e.on_date) for e in fee_events][-1] == ("cl", date(2026, 11, 2))
    assert "receipt R-1" in (fee_events[-1].detail or "")


def test_an_application_fee_without_a_schedule_is_refused_and_completes_nothing(target: str, tmp_path: Path) -> None:
    """§ 540-8B: "at least one responsible party ... shall pay an application fee according to the Fee Schedule";
    § 540-10: "The fees referred to in other sections of this article shall be established by the Village Board and
    may from time to time be modified by resolution." With no schedule (no --fees, none named in the layer set) no
    amount can be checked, not even $0: the fee is refused, nothing is written, and the application is still not
    complete. What to do with a fee that cannot be checked the ordinance does not say: the refusal is the
    toolkit's policy, and says so."""
    from .conftest import write_layer_set

    bare = write_layer_set(tmp_path / "bare")  # no [fees]
    init_registry(target, layers=bare)
    with open_registry(target, layers=bare, calendar=OfficeCalendar(holidays=frozenset())) as r:
        n = r.add(Application("1 Test St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS), who="clerk")
        for amount in (0.0, 12.34):
            with pytest.raises(ValidationError) as refused:
                r.record_fee(n, kind="application", amount=amount, paid_on=date(2026, 11, 2), receipt="R-1")
            text = str(refused.value)
            assert f"the application fee of {amount:,.2f} cannot be checked" in text
            assert 'it is paid "according to the Fee Schedule"' in text and "(§ 540-8B; § 540-10; basis policy)" in text
            assert '"established by the Village Board and may from time to time be modified by resolution"' in text
            assert "set by resolution" not in text
            assert "--fees FILE" in text and "[fees] path" in text
        assert r.fees(n) == []
        with pytest.raises(IllegalTransitionError, match="application fee"):
            r.transition(n, "under_review", on=date(2026, 11, 3))
        # Another kind is recorded as paid (it completes nothing); the schedule given checks the application fee.
        assert r.record_fee(n, kind="reinspection", amount=5.0, paid_on=date(2026, 11, 2), receipt="R-0").amount == 5.0
        f = r.record_fee(
            n,
            kind="application",
            amount=12.34,
            paid_on=date(2026, 11, 2),
            receipt="R-1",
            schedule=load_fee_schedule(EXAMPLE),
        )
        assert f.schedule_resolution is not None and "EXAMPLE" in f.schedule_resolution
        assert r.transition(n, "under_review", on=date(2026, 11, 3)).status == "under_review"


def test_the_layer_sets_schedule_checks_every_fee_and_a_missing_one_is_named(target: str, tmp_path: Path) -> None:
    """§ 540-10: "A schedule of the fees established by the Village Board shall be available for review in the
    Village Hall": the office names its file once, in the layer set ([fees] path), and every fee is checked
    against it (the edge: the schedule's amount to the cent; a cent off is refused with the resolution)."""
    from .conftest import write_layer_set

    layers = write_layer_set(tmp_path / "office", fees=True)
    init_registry(target, layers=layers)
    with open_registry(target, layers=layers, calendar=OfficeCalendar(holidays=frozenset())) as r:
        n = r.add(Application("1 Test St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS), who="clerk")
        with pytest.raises(ValidationError, match=r"the amount 0.99 is not the application fee of 1.00 set by TEST"):
            r.record_fee(n, kind="application", amount=0.99, paid_on=date(2026, 11, 2), receipt="R-1")
        with pytest.raises(ValidationError, match="'reinspection' is not a fee in TEST resolution 1"):
            r.record_fee(n, kind="reinspection", amount=5.0, paid_on=date(2026, 11, 2), receipt="R-0")
        f = r.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt="R-1")
        assert f.schedule_resolution == "TEST resolution 1 (made up) (2000-01-01)"
    (tmp_path / "office" / "fees.toml").unlink()
    with open_registry(target, layers=layers) as r, pytest.raises(ProfileError, match="Cannot read the fee schedule"):
        r.record_fee(n, kind="plan_amendment", amount=1.0, paid_on=date(2026, 11, 2), receipt="R-2")


def test_incomplete_back_to_review_also_needs_the_fee(reg, received: str) -> None:
    reg.transition(received, "incomplete", on=date(2026, 11, 3))  # asking for information needs no fee
    with pytest.raises(IllegalTransitionError, match="application fee"):
        reg.transition(received, "under_review", on=date(2026, 11, 10))


def test_the_schedule_sets_kind_and_amount(reg, received: str) -> None:
    s = load_fee_schedule(EXAMPLE)
    assert s.amounts["application"] == 12.34 and s.adopted_on == date(2000, 1, 1) and "EXAMPLE" in s.resolution
    with pytest.raises(ValidationError) as e:
        reg.record_fee(received, kind="application", amount=12.35, paid_on=date(2026, 11, 2), receipt="R", schedule=s)
    assert "not the application fee of 12.34" in str(e.value)
    with pytest.raises(ValidationError, match="'parking' is not a fee"):
        reg.record_fee(received, kind="parking", amount=1.0, paid_on=date(2026, 11, 2), receipt="R", schedule=s)
    f = reg.record_fee(received, kind="application", amount=12.34, paid_on=date(2026, 11, 2), receipt="R", schedule=s)
    assert f.schedule_resolution == f"{s.resolution} (2000-01-01)"


def test_a_fee_paid_before_the_schedules_adoption_is_refused_naming_the_day(reg, received: str) -> None:
    """§ 540-10: the fees "shall be established by the Village Board and may from time to time be modified by
    resolution". A schedule adopted on 2026-11-02 was not in force on 2026-11-01: a fee paid that day is not
    checked against it but refused, naming the adoption day and the fix (the schedule in force that day), and
    nothing is written. On the adoption day itself it is in force. That the schedule takes effect on its
    adoption day is the toolkit's policy, and says so."""
    from esc_gis.registry.domain.fees import FeeSchedule

    s = FeeSchedule("R-2026-11 (made up)", date(2026, 11, 2), {"application": 50.0}, Path("fees.toml"))
    before = (count(reg, "fees"), count(reg, "events"))
    with pytest.raises(ValidationError) as e:
        reg.record_fee(received, kind="application", amount=50.0, paid_on=date(2026, 11, 1), receipt="R", schedule=s)
    text = " ".join(str(e.value).split())
    assert "the application fee paid on 2026-11-01 cannot be checked against R-2026-11 (made up), adopted on " in text
    assert "2026-11-02" in text and "Give the schedule in force on 2026-11-01" in text
    assert "(§ 540-10; basis policy)" in text
    assert (count(reg, "fees"), count(reg, "events")) == before
    f = reg.record_fee(received, kind="application", amount=50.0, paid_on=date(2026, 11, 2), receipt="R", schedule=s)
    assert f.schedule_resolution == "R-2026-11 (made up) (2026-11-02)"


def test_every_fee_problem_at_once_and_nothing_written(reg, received: str) -> None:
    reg.record_fee(received, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt="R-1")
    before = (count(reg, "fees"), count(reg, "events"))
    with pytest.raises(ValidationError) as e:
        reg.record_fee(received, kind="application", amount=-1.0, paid_on=date(2999, 1, 1), receipt="R-1")
    text = str(e.value)
    assert "negative" in text and "paid_on=2999-01-01 is after today" in text and "already recorded" in text
    assert (count(reg, "fees"), count(reg, "events")) == before


@pytest.mark.parametrize(
    "body, problem",
    [
        ("[fees]\napplication = 1.0\n", "resolution is missing"),
        ('[schedule]\nresolution = "R 1"\nadopted_on = "2026-01-12"\n[fees]\napplication = 1.0\n', "not a date"),
        ('[schedule]\nresolution = "R 1"\nadopted_on = 2026-01-12\n[fees]\nreview = 1.0\n', "no 'application' fee"),
        ('[schedule]\nresolution = "R 1"\nadopted_on = 2026-01-12\n[fees]\napplication = -1\n', "0 or more"),
        ("not toml [", "Cannot read"),
    ],
)
def test_a_bad_schedule_is_refused_with_the_fix(tmp_path: Path, body: str, problem: str) -> None:
    p = tmp_path / "fees.toml"
    p.write_text(body)
    with pytest.raises(ProfileError, match=problem):
        load_fee_schedule(p)


# --- Guarantees ---------------------------------------------------------------------------


def test_guarantee_draw_partial_release_and_final_release(reg, active: str) -> None:
    g = reg.add_guarantee(active, type="cash_escrow", amount=1000.0, received_on=date(2026, 11, 3), who="cl")
    assert g.balance == 1000.0 and g.expires_on is None
    g = reg.guarantee_event(
        g.id, "draw", on=date(2026, 11, 20), amount=150.0, reason="silt fence replaced", notice_on=date(2026, 11, 20)
    )
    g = reg.guarantee_event(g.id, "release", on=date(2026, 11, 25), amount=250.0, stage="phase 1 graded and seeded")
    assert g.balance == 600.0
    with pytest.raises(ValidationError) as e:
        reg.guarantee_event(g.id, "release", on=date(2026, 11, 26), amount=600.01, stage="x")
    assert "more than the 600.00 still held" in str(e.value)
    with pytest.raises(ValidationError, match="licensed professional engineer"):
        reg.guarantee_event(g.id, "final_release", on=date(2026, 11, 27))
    g = reg.guarantee_event(g.id, "final_release", on=date(2026, 11, 27), engineer="Lee Engineer PE-12345")
    assert g.balance == 0.0 and g.events[-1].amount == 600.0 and g.events[-1].engineer == "Lee Engineer PE-12345"
    with pytest.raises(ValidationError, match="released in full"):
        reg.guarantee_event(g.id, "draw", on=date(2026, 11, 28), amount=1.0, reason="x", notice_on=date(2026, 11, 28))
    kinds = [e.kind for e in reg.get(active).events]
    assert kinds[-4:] == ["guarantee", "guarantee_draw", "guarantee_release", "guarantee_final_release"]


def test_guarantee_refusals_write_nothing(reg, active: str) -> None:
    before = (count(reg, "guarantees"), count(reg, "events"))
    with pytest.raises(ValidationError) as e:
        reg.add_guarantee(active, type="letter_of_credit", amount=0.0, received_on=date(2026, 11, 3))
    assert "needs its expiry" in str(e.value) and "not more than 0" in str(e.value)
    with pytest.raises(ValidationError, match="only a letter of credit has an expiry"):
        reg.add_guarantee(
            active, type="surety_bond", amount=5.0, received_on=date(2026, 11, 3), expires_on=date(2027, 1, 1)
        )
    with pytest.raises(ValidationError, match="not one of surety_bond"):
        reg.add_guarantee(active, type="cheque", amount=5.0, received_on=date(2026, 11, 3))
    assert (count(reg, "guarantees"), count(reg, "events")) == before
    g = reg.add_guarantee(active, type="surety_bond", amount=5.0, received_on=date(2026, 11, 3))
    with pytest.raises(ValidationError) as e:
        reg.guarantee_event(g.id, "draw", on=date(2026, 11, 1), amount=1.0)
    text = str(e.value)
    assert "on=2026-11-01 is before the day the guarantee was received" in text and "needs the reason" in text
    assert count(reg, "guarantee_events") == 0
    with pytest.raises(RegistryError, match="no guarantee #999"):
        reg.guarantee_event(999, "draw", on=date(2026, 11, 5), amount=1.0, reason="x")


def test_the_money_tables_are_append_only(reg, active: str) -> None:
    reg.record_fee(active, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt="R-1")
    g = reg.add_guarantee(active, type="cash_escrow", amount=10.0, received_on=date(2026, 11, 3))
    reg.guarantee_event(g.id, "draw", on=date(2026, 11, 5), amount=1.0, reason="x", notice_on=date(2026, 11, 5))
    for sql in ("UPDATE fees SET amount = 0", "DELETE FROM guarantees", "UPDATE guarantee_events SET amount = 0"):
        with pytest.raises(RegistryError, match="append-only"), reg.backend.write() as cur:
            cur.execute(sql)


def test_a_letter_of_credit_expiry_is_due_until_released(reg, active: str, target: str, layers_path, tmp_path) -> None:
    from esc_gis.registry.views.agenda import agenda

    g = reg.add_guarantee(
        active, type="letter_of_credit", amount=800.0, received_on=date(2026, 11, 3), expires_on=date(2027, 3, 31)
    )
    items = agenda(reg.permits(), on=date(2027, 3, 1), calendar=CAL, profile=reg.profile, within_days=60)
    loc = [i for i in items if i.code == "guarantee_expiry"]
    assert [(i.permit_number, i.due, i.overdue) for i in loc] == [(active, date(2027, 3, 31), False)]
    assert f"#{g.id}" in loc[0].what and "800.00" in loc[0].what
    ics = tmp_path / "d.ics"
    lay = ["--layers", str(layers_path)]
    r = _run("calendar", target, "-o", str(ics), "--on", "2027-03-01", "--within", "60", *lay)
    assert r.exit_code == 0, r.output
    assert "20270331" in ics.read_text() and f"#{g.id}" in ics.read_text()
    reg.guarantee_event(g.id, "final_release", on=date(2026, 11, 27), engineer="Lee Engineer PE-1")
    items = agenda(reg.permits(), on=date(2027, 3, 1), calendar=CAL, profile=reg.profile, within_days=60)
    assert not [i for i in items if i.code == "guarantee_expiry"]  # released: nothing left to lapse


def test_a_version_4_registry_migrates_and_takes_fees(target: str, layer_set, monkeypatch, tmp_path) -> None:
    from esc_gis.registry.store import backend, schema

    with monkeypatch.context() as m:
        m.setattr(backend, "MIGRATIONS", schema.MIGRATIONS[:4])
        m.setattr(backend, "SCHEMA_VERSION", 4)
        assert init_registry(target, layers=layer_set) == [1, 2, 3, 4]
    n = written_by_an_earlier_esc_gis(
        target,
        layer_set,
        lambda r: r.add(Application("1 Old St", date(2026, 11, 2), square_sqft(100, 100, 5000.0), CRS)),
        tmp_path,
    )
    with pytest.raises(RegistryError, match=r"schema version 4.*permits init"):
        open_registry(target, layers=layer_set)
    assert init_registry(target, layers=layer_set) == list(range(5, SCHEMA_VERSION + 1))
    with open_registry(target, layers=layer_set) as r:
        r.record_fee(n, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt="R-1")
        assert r.transition(n, "under_review", on=date(2026, 11, 3)).status == "under_review"


# --- CLI and privacy ----------------------------------------------------------------------


def test_cli_fee_guarantee_events_and_receipts(reg, received: str, target: str, layers_path, tmp_path) -> None:
    lay = ["--layers", str(layers_path)]
    r = _run("transition", target, received, "under_review", "--on", "2026-11-03", *lay)
    assert r.exit_code == 1 and "permits fee" in r.output
    r = _run("fee", target, received, "--kind", "application", "--amount", "12", "--paid-on", "2026-11-02",
             "--receipt", "R-9", "--fees", str(EXAMPLE), "--who", "cl", *lay)  # fmt: skip
    assert r.exit_code == 1 and "not the application fee of 12.34" in r.output
    r = _run("fee", target, received, "--kind", "application", "--amount", "12.34", "--paid-on", "2026-11-02",
             "--receipt", "R-9", "--fees", str(EXAMPLE), "--who", "cl", *lay)  # fmt: skip
    assert r.exit_code == 0 and "receipt R-9" in r.output, r.output
    assert _run("transition", target, received, "under_review", "--on", "2026-11-03", *lay).exit_code == 0
    r = _run("guarantee", target, received, "--type", "letter_of_credit", "--amount", "500",
             "--received-on", "2026-11-03", "--expires", "2027-06-30", "--who", "cl", *lay)  # fmt: skip
    assert r.exit_code == 0 and "guarantee #1" in r.output and "expires 2027-06-30" in r.output, r.output
    r = _run(
        "guarantee-event",
        target,
        "1",
        "--on",
        "2026-11-20",
        "--draw",
        "100",
        "--reason",
        "fence",
        "--notice-on",
        "2026-11-19",
        *lay,
    )
    assert r.exit_code == 0 and "held 400.00" in r.output, r.output
    r = _run("guarantee-event", target, "1", "--on", "2026-11-21", "--draw", "1", "--release", "1", *lay)
    assert r.exit_code == 1 and "one of --draw" in r.output
    r = _run("guarantee-event", target, "1", "--on", "2026-11-21", "--final-release", "--engineer", "Lee PE-1", *lay)
    assert r.exit_code == 0 and "held 0.00" in r.output and "as-built plans by Lee PE-1" in r.output, r.output
    out = tmp_path / "fees.csv"
    r = _run("receipts", target, "-o", str(out), *lay)
    assert r.exit_code == 0 and "1 receipt(s)" in r.output, r.output
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert [(x["permit_number"], x["receipt"], x["amount"]) for x in rows] == [(received, "R-9", "12.34")]
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert _run("receipts", target, "-o", str(out), *lay).exit_code == 1  # no overwrite without --overwrite


def test_public_outputs_never_show_fees_or_guarantees(reg, active: str, target: str, layers_path, tmp_path) -> None:
    lay = ["--layers", str(layers_path)]
    pay_application_fee(reg, active, 4321.98, receipt="Receipt-Planted-7711", who=None)
    g = reg.add_guarantee(
        active, type="letter_of_credit", amount=87654.32, received_on=date(2026, 11, 3), expires_on=date(2027, 3, 31)
    )
    reg.guarantee_event(
        g.id, "draw", on=date(2026, 11, 20), amount=1234.56, reason="Draw-Planted-7712", notice_on=date(2026, 11, 20)
    )
    planted = ("Receipt-Planted-7711", "Draw-Planted-7712", "4321.98", "4,321.98", "87654", "87,654", "1234.56",
               "letter_of_credit", "letter of credit")  # fmt: skip
    assert_hidden(public_outputs(target, lay, tmp_path), active, planted)
    assert reg.fees(active)[0].receipt == "Receipt-Planted-7711"  # planted where the test greps
