"""Enforcement cases (§ 540-12), on both back ends (the ``target`` fixture: a GeoPackage file
and the real PostGIS server): cases with and without a permit, a stop-work order moving the
permit and a retraction moving it back, costs, migration from schema 3, refusals that write
nothing, and nothing of a case in the public outputs.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

from esc_gis.errors import RegistryError, ValidationError
from esc_gis.registry import Application, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.service.registry import Registry
from esc_gis.registry.store.schema import SCHEMA_VERSION

from .conftest import CRS, add_active, square_sqft, written_by_an_earlier_esc_gis
from .public_outputs import assert_hidden, public_outputs, run_permits

UTC = timezone.utc
CAL = OfficeCalendar(holidays=frozenset())
STARTED = datetime(2026, 11, 9, 8, 0, tzinfo=UTC)


@pytest.fixture
def screening(tmp_path: Path) -> Path:
    """A screening output in WGS 84 (users send it so): S1 needs a permit, S2 (900 sq ft) does not.

    `permits enforce` decides each again with the screening function (issue 34): the columns agree.
    """
    frame = gpd.GeoDataFrame(
        {"site_id": ["S1", "S2"], "permit": ["required", "not_required"]},
        geometry=[square_sqft(1000, 1000, 6000.0), square_sqft(1500, 1000, 900.0)],
        crs=CRS,
    ).to_crs("EPSG:4326")
    path = tmp_path / "screening.gpkg"
    frame.to_file(path, layer="screening")
    return path


def count(reg: Registry, table: str) -> int:
    with reg.backend.read() as cur:
        cur.execute(f"SELECT count(*) FROM {table}")
        return int(cur.fetchone()[0])


def test_a_case_opens_on_an_unpermitted_screened_site(reg, screening: Path) -> None:
    c = reg.enforce(
        ground="A1",
        on=date(2026, 11, 20),
        reasons="grading seen, no permit",
        site_layer=screening,
        site_id="S1",
        who="ed",
    )
    assert c.case_id == "ENF-2026-0001" and c.permit_number is None and c.state == "open"
    assert c.site_ref == "screening.gpkg#S1" and c.opened_by == "ed"
    # Stored in the registry's CRS: the 6,000 sq ft square back from WGS 84, within a square foot.
    expected = square_sqft(1000, 1000, 6000.0)
    assert c.site is not None and abs(c.site.area - expected.area) < 1.0
    assert shapely.get_type_id(c.site) == 6  # MultiPolygon
    # A stop-work order on an unpermitted site, then referral (activity went on).
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="order posted at the gate")
    assert c.state == "stop_work"
    c = reg.case_action(c.case_id, "referral", on=date(2026, 11, 25))
    assert [e.kind for e in c.events] == ["stop_work", "referral"]
    assert reg.enforce(ground="A4", on=date(2026, 11, 26), reasons="x", address="9 Elm St").case_id == "ENF-2026-0002"


def test_a_site_that_needs_no_permit_is_refused_with_the_reason(reg, screening: Path) -> None:
    with pytest.raises(ValidationError, match=r"S2 does not need a permit \(screening: permit not_required, 900 sq ft"):
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="x", site_layer=screening, site_id="S2")
    with pytest.raises(ValidationError, match="has no site 'S9'"):
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="x", site_layer=screening, site_id="S9")
    assert count(reg, "enforcement_cases") == 0


def test_a_screening_output_its_crs_cannot_hold_or_no_gis_file_is_refused(reg, screening: Path) -> None:
    """Feet labelled as degrees (issue 34): refused with the readers' words, as is a PNG renamed .gpkg; no case."""
    feet = screening.with_name("feet.gpkg")
    frame = gpd.read_file(screening, layer="screening").to_crs(CRS)
    frame.set_crs("EPSG:4326", allow_override=True).to_file(feet, layer="screening")
    with pytest.raises(ValidationError) as err:
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="x", site_layer=feet, site_id="S1")
    text = str(err.value)
    assert "its layer screening has coordinates that cannot be in its CRS EPSG:4326: they are off the globe" in text
    assert "Fix: give the data their true CRS" in text
    png = screening.with_name("photo.gpkg")
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    with pytest.raises(ValidationError, match="cannot be read as a vector layer: it is a PNG image") as err:
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="x", site_layer=png, site_id="S1")
    assert "DataSourceError" not in str(err.value) and "<DRIVER>" not in str(err.value)
    assert count(reg, "enforcement_cases") == 0


def test_a_screened_site_a_permit_covers_is_refused(reg, screening: Path) -> None:
    reg.add(Application("1 Lot St", date(2026, 11, 2), square_sqft(1050, 1050, 500.0), CRS), who="clerk")
    with pytest.raises(ValidationError, match=r"S1 lies on the site of permit ESC-2026-\d{4}.*permit_number="):
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="x", site_layer=screening, site_id="S1")
    assert count(reg, "enforcement_cases") == 0


def test_stop_work_moves_the_permit_with_reasons_and_retraction_moves_it_back(reg, active) -> None:
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="fence down", permit_number=active)
    with pytest.raises(ValidationError, match="needs written reasons"):
        reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21))
    assert reg.get(active).status == "active"
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="sediment in the street", who="ed")
    p = reg.get(active)
    assert p.status == "stop_work"
    last = p.events[-1]
    assert (last.from_status, last.to_status, last.who) == ("active", "stop_work", "ed")
    assert c.case_id in (last.detail or "") and "sediment in the street" in (last.detail or "")
    c = reg.case_action(c.case_id, "retraction", on=date(2026, 11, 24), reasons="fence re-set")
    assert reg.get(active).status == "active" and c.state == "retracted"
    assert reg.get(active).events[-1].kind == "retraction"
    c = reg.case_action(c.case_id, "closed", on=date(2026, 11, 25))
    assert c.state == "closed"
    with pytest.raises(ValidationError, match="the case is closed"):
        reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 26), reasons="again")


def test_notice_of_intent_records_costs_billed_or_from_the_guarantee(reg, active) -> None:
    """§ 540-12E: costs "shall be billed to the responsible party or recovered from the surety bond, cash
    escrow, or irrevocable letter of credit"; § 540-8D(1): the release is "less any costs incurred by the
    administering authority". Recovered costs come off the guarantee, and its final release is net of them."""
    c = reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="plan ignored", permit_number=active)
    with pytest.raises(ValidationError, match="after a stop-work order"):
        reg.case_action(c.case_id, "notice", on=date(2026, 11, 21), costs=10.0, costs_from="billed")
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="r")
    with pytest.raises(ValidationError, match="none is held"):  # nothing to recover from yet
        reg.case_action(c.case_id, "notice", on=date(2026, 11, 22), costs=1250.5, costs_from="guarantee")
    g = reg.add_guarantee(active, type="cash_escrow", amount=2000.0, received_on=date(2026, 11, 20))
    with pytest.raises(ValidationError, match=r"more than the 2,000\.00 guarantee"):
        reg.case_action(c.case_id, "notice", on=date(2026, 11, 22), costs=2000.5, costs_from="guarantee")
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 22), costs=1250.5, costs_from="guarantee")
    assert reg.state(active).guarantees[g.id].balance == 749.5
    assert next(x for x in reg.guarantees() if x.id == g.id).balance == 749.5
    final = reg.guarantee_event(g.id, "final_release", on=date(2026, 11, 24), engineer="P.E. 1")
    assert final.events[-1].amount == 749.5  # the release pays out what is held, net of the costs
    c = reg.case_action(c.case_id, "costs", on=date(2026, 11, 23), costs=300.0, costs_from="billed")
    assert c.costs_total == 1550.5
    assert [(e.costs, e.costs_from) for e in c.events[1:]] == [(1250.5, "guarantee"), (300.0, "billed")]


def test_bad_input_lists_every_problem_and_writes_nothing(reg, active, screening: Path) -> None:
    with pytest.raises(ValidationError) as info:
        reg.enforce(ground="Z9", on=date(2999, 1, 1), reasons=" ", permit_number="ESC-0000-0000", address="1 A St")
    text = str(info.value)
    for part in (
        "exactly one site",
        "ground 'Z9'",
        "reasons are empty",
        "on=2999-01-01 is after today on the Village's clock",
        "no permit 'ESC-0000-0000'",
    ):
        assert part in text, part
    with pytest.raises(ValidationError, match="activity without a permit"):
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="x", permit_number=active)
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="x", permit_number=active)
    with pytest.raises(ValidationError) as info:
        reg.case_action(c.case_id, "notice", on=date(2026, 11, 1), costs=-5.0, costs_from="somewhere")
    text = str(info.value)
    for part in ("after a stop-work order", "before the case's last date", "not an amount", "costs_from="):
        assert part in text, part
    assert count(reg, "enforcement_events") == 1  # only the opening
    assert reg.get(active).status == "active"
    with pytest.raises(RegistryError, match="no enforcement case"):
        reg.case("ENF-1999-0001")


def test_the_case_tables_are_append_only(reg) -> None:
    reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="x", address="1 A St")
    for sql in ("UPDATE enforcement_cases SET reasons = 'y'", "DELETE FROM enforcement_events"):
        with pytest.raises(RegistryError, match="append-only"), reg.backend.write() as cur:
            cur.execute(sql)


def test_a_version_3_registry_migrates_and_takes_cases(target: str, layer_set, monkeypatch) -> None:
    from esc_gis.registry.store import backend, schema

    with monkeypatch.context() as m:
        m.setattr(backend, "MIGRATIONS", schema.MIGRATIONS[:3])
        m.setattr(backend, "SCHEMA_VERSION", 3)
        m.setattr(Registry, "_append", lambda self, cur, e: e)  # that esc_gis wrote no history
        m.setattr(Registry, "_select_states", lambda self, cur, by_number: None)  # nor read one
        assert init_registry(target, layers=layer_set) == [1, 2, 3]
    with pytest.raises(RegistryError, match=r"schema version 3.*permits init"):
        open_registry(target, layers=layer_set)
    assert init_registry(target, layers=layer_set) == list(range(4, SCHEMA_VERSION + 1))
    with open_registry(target, layers=layer_set) as r:
        assert r.enforce(ground="A4", on=date(2026, 11, 20), reasons="x", address="1 A St").state == "open"


_run = run_permits


def test_cli_enforce_case_and_cases(reg, active, target: str, layers_path, screening: Path) -> None:
    lay = ["--layers", str(layers_path)]
    r = _run("enforce", target, "--site-layer", str(screening), "--site-id", "S2", "--ground", "A1",
             "--on", "2026-11-20", "--reasons", "x", "--who", "ed", *lay)  # fmt: skip
    assert r.exit_code == 1 and "does not need a permit" in r.output
    r = _run("enforce", target, "--site-layer", str(screening), "--site-id", "S1", "--ground", "A1",
             "--on", "2026-11-20", "--reasons", "grading, no permit", "--who", "ed", *lay)  # fmt: skip
    assert r.exit_code == 0 and "ENF-2026-0001" in r.output, r.output
    r = _run("enforce", target, "--permit", active, "--ground", "A4", "--on", "2026-11-20", "--reasons", "r", *lay)
    assert r.exit_code == 0, r.output
    r = _run("case", target, "ENF-2026-0002", "--stop-work", "2026-11-21", "--reasons", "posted", "--who", "ed", *lay)
    assert r.exit_code == 0 and reg.get(active).status == "stop_work", r.output
    r = _run(
        "case", target, "ENF-2026-0002", "--notice", "2026-11-22", "--costs", "400", "--costs-from", "billed", *lay
    )
    assert r.exit_code == 0, r.output
    r = _run("case", target, "ENF-2026-0002", "--refer", "2026-11-23", "--close", "2026-11-23", *lay)
    assert r.exit_code == 1 and "one action" in r.output
    r = _run("cases", target, *lay)
    assert r.exit_code == 0 and "ENF-2026-0001" in r.output and "ENF-2026-0002" in r.output
    assert "400" in r.output
    r = _run("show", target, active, *lay)
    assert r.exit_code == 0 and "ENF-2026-0002" in r.output


def test_public_outputs_never_show_enforcement_or_appeal_details(
    reg, active, target: str, layers_path, tmp_path
) -> None:
    lay = ["--layers", str(layers_path)]
    planted: tuple[str, ...] = ("Reason-Planted-8811", "Order-Planted-8812", "Notice-Planted-8813", "Addr-Planted-8814")
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons=planted[0], permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons=planted[1])
    reg.case_action(c.case_id, "notice", on=date(2026, 11, 22), reasons=planted[2], costs=98765.0, costs_from="billed")
    reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="x", address=planted[3])
    reg.appeal(
        appealed="Appealed-Planted-8815",
        kind="stop_work_order",
        appellant="Appellant-Planted-8816",
        appellant_kind="aggrieved_person",
        on=date(2026, 11, 22),
        grounds="Grounds-Planted-8817",
        case_id=c.case_id,
    )
    planted += ("Appealed-Planted-8815", "Appellant-Planted-8816", "Grounds-Planted-8817")
    assert_hidden(public_outputs(target, lay, tmp_path), active, (*planted, "98765", c.case_id))
    assert b"stop_work" in (tmp_path / "public.csv").read_bytes()  # the public state is
    assert reg.case(c.case_id).reasons == planted[0]  # planted where the test greps


# --- Appeals (§ 540-13) -------------------------------------------------------------------


def test_a_reversed_appeal_of_a_stop_work_order_sends_the_permit_back(reg, active) -> None:
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="fence down", permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted")
    a = reg.appeal(
        appealed="stop-work order of 2026-11-21",
        kind="stop_work_order",
        appellant="Pat Builder",
        appellant_kind="aggrieved_person",
        on=date(2026, 11, 22),
        grounds="the fence was standing",
        case_id=c.case_id,
    )
    assert a.permit_number == active and a.decision is None  # the case's permit
    a = reg.decide_appeal(a.appeal_id, body="zoning_board_of_appeals", outcome="reversed", on=date(2026, 11, 24))
    assert a.decision is not None and a.decision.body == "zoning_board_of_appeals"
    assert a.decision.effect == "permit stop_work -> active; case order retracted"
    p = reg.get(active)
    assert p.status == "active" and [e.kind for e in p.events[-2:]] == ["retraction", "appeal_decision"]
    assert reg.case(c.case_id).state == "retracted"
    with pytest.raises(ValidationError, match="already decided"):
        reg.decide_appeal(a.appeal_id, body="village_board", outcome="upheld", on=date(2026, 11, 25))


def test_an_upheld_appeal_and_a_variance_leave_the_state_and_bad_input_writes_nothing(reg, active) -> None:
    with pytest.raises(ValidationError) as info:
        reg.appeal(appealed=" ", appellant="", appellant_kind="neighbour", on=date(2999, 1, 1), grounds="g")
    text = str(info.value)
    for part in (
        "no permit and no enforcement case",
        "'neighbour'",
        "appealed decision is empty",
        "on=2999-01-01 is after today on the Village's clock",
        "kind of order or decision appealed is missing",
        "give kind=: one of stop_work_order, revocation, suspension, permit_decision, determination, notice_of_intent, other.",
    ):
        assert part in text, part
    assert count(reg, "appeals") == 0
    a = reg.appeal(
        appealed="permit condition 3",
        kind="permit_decision",
        appellant="Public Works",
        appellant_kind="village_body",
        on=date(2026, 11, 20),
        grounds="hardship",
        permit_number=active,
    )
    with pytest.raises(ValidationError) as info:
        reg.decide_appeal(a.appeal_id, body="town_council", outcome="variance", on=date(2026, 11, 19))
    text = str(info.value)
    for part in ("'town_council'", "findings not recorded", "before the filing"):
        assert part in text, part
    assert count(reg, "appeal_decisions") == 0
    findings = ("public_interest", "special_conditions", "unnecessary_hardship")
    a = reg.decide_appeal(
        a.appeal_id,
        body="zoning_board_of_appeals",
        outcome="variance",
        on=date(2026, 11, 25),
        conditions="fence 2 ft back",
        findings=findings,
    )
    assert a.decision is not None and a.decision.conditions == "fence 2 ft back"
    assert reg.get(active).status == "active" and a.decision.effect == "permit state unchanged"
    for sql in ("UPDATE appeals SET grounds = 'y'", "DELETE FROM appeal_decisions"):
        with pytest.raises(RegistryError, match="append-only"), reg.backend.write() as cur:
            cur.execute(sql)


def test_cli_appeal_decide_appeals(reg, active, target: str, layers_path) -> None:
    lay = ["--layers", str(layers_path)]
    r = _run("appeal", target, "--permit", active, "--appealed", "disapproval", "--kind", "permit_decision", "--appellant", "Pat",
             "--appellant-kind", "aggrieved_person", "--on", "2026-11-20", "--grounds", "error", *lay)  # fmt: skip
    assert r.exit_code == 0 and "APL-2026-0001" in r.output, r.output
    r = _run("decide", target, "APL-2026-0001", "--body", "nobody", "--outcome", "upheld", "--on", "2026-11-21", *lay)
    assert r.exit_code == 1 and "'nobody'" in r.output
    r = _run("decide", target, "APL-2026-0001", "--body", "village_board", "--outcome", "upheld", "--on", "2026-11-21",
             *lay)  # fmt: skip
    assert r.exit_code == 0, r.output
    r = _run("appeals", target, *lay)
    assert r.exit_code == 0 and "upheld by village_board" in r.output


def test_case_and_appeal_numbers_follow_the_profile_and_restart_each_year(target: str, layer_set) -> None:
    from esc_gis.profile import load_profile

    example = load_profile(Path(__file__).parent / "profiles" / "example.toml")
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set, profile=example, calendar=CAL) as reg:
        ids = [
            reg.enforce(ground="A4", on=date(y, 3, 1), reasons="r", address="1 A St").case_id
            for y in (2025, 2025, 2026)
        ]
        assert ids == ["EX-C/001/2025", "EX-C/002/2025", "EX-C/001/2026"]
        a = reg.appeal(
            appealed="stop-work order",
            kind="stop_work_order",
            appellant="A. Owner",
            appellant_kind="aggrieved_person",
            on=date(2026, 3, 2),
            grounds="g",
            case_id=ids[2],
        )
        assert a.appeal_id == "EX-A/001/2026"


def test_clerks_opening_cases_at_once_get_distinct_numbers(target: str, layer_set) -> None:
    # Each clerk has their own connection; without the table lock on PostGIS two of them read the
    # same highest number and one insert fails on the unique key.
    import threading

    init_registry(target, layers=layer_set)
    n_clerks, per_clerk = 6, 3
    barrier = threading.Barrier(n_clerks)
    got: list[str] = []
    errors: list[BaseException] = []

    def clerk(k: int) -> None:
        try:
            with open_registry(target, layers=layer_set, calendar=CAL) as reg:
                barrier.wait()
                for _ in range(per_clerk):
                    got.append(
                        reg.enforce(ground="A4", on=date(2026, 5, 1), reasons=f"clerk {k}", address="1 A St").case_id
                    )
        except BaseException as exc:  # reported below, with the thread's error
            errors.append(exc)

    threads = [threading.Thread(target=clerk, args=(k,)) for k in range(n_clerks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(got) == [f"ENF-2026-{i:04d}" for i in range(1, n_clerks * per_clerk + 1)]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("ENF-{year}", "has no {seq}"), ("{seq}-{month}", "not {month}"), ("{seq}-{seq}", "not {seq}")],
)
def test_a_numbering_pattern_that_cannot_be_read_back_is_refused(pattern: str, message: str) -> None:
    from esc_gis.errors import ProfileError
    from esc_gis.registry.store.numbering import number_pattern

    with pytest.raises(ProfileError, match=re.escape(message)):
        number_pattern(pattern)
    assert number_pattern("ENF-{year}-{seq:04d}").fullmatch("ENF-2026-0012").group("seq") == "0012"
    assert number_pattern("ENF-{year}-{seq:04d}").fullmatch("ENF-2026-x") is None


# --- What is appealed (§ 540-13A(1)) --------------------------------------------------------------


def test_an_appeal_of_a_cease_and_desist_order_is_not_heard(reg, active) -> None:
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="fence down", permit_number=active)
    with pytest.raises(ValidationError) as info:
        reg.appeal(
            appealed="the court's cease-and-desist order",
            kind="cease_and_desist_order",
            appellant="Pat Builder",
            appellant_kind="aggrieved_person",
            on=date(2026, 11, 22),
            grounds="g",
            case_id=c.case_id,
        )
    assert (
        "the board does not hear an appeal of a cease and desist order: it hears appeals of the administering "
        "authority's orders, decisions and determinations, except for cease-and-desist orders obtained under "
        "§ 540-12C (the court's order, contested in that court) (§ 540-13A(1))."
    ) in str(info.value)
    assert count(reg, "appeals") == 0
    with pytest.raises(
        ValidationError, match=r"'ruling', not one the profile lists.*give kind=: one of stop_work_order"
    ):
        reg.appeal(appealed="x", kind="ruling", appellant="P", appellant_kind="aggrieved_person",
                   on=date(2026, 11, 22), grounds="g", permit_number=active)  # fmt: skip


def test_only_a_reversal_of_the_order_behind_the_state_moves_the_permit(reg, active) -> None:
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="fence down", permit_number=active)
    reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted")
    # A permit condition reversed while a stop-work order stands: the order stands.
    a = reg.appeal(appealed="condition 3", kind="permit_decision", appellant="P", appellant_kind="aggrieved_person",
                   on=date(2026, 11, 22), grounds="g", case_id=c.case_id)  # fmt: skip
    assert a.appealed_kind == "permit_decision"
    a = reg.decide_appeal(a.appeal_id, body="zoning_board_of_appeals", outcome="reversed", on=date(2026, 11, 23))
    assert a.decision is not None and a.decision.effect == "permit state unchanged"
    assert reg.get(active).status == "stop_work" and reg.case(c.case_id).state == "stop_work"
    # The stop-work order's own appeal, reversed: retracted, the case's order too.
    a = reg.appeal(appealed="the order", kind="stop_work_order", appellant="P", appellant_kind="aggrieved_person",
                   on=date(2026, 11, 23), grounds="g", case_id=c.case_id)  # fmt: skip
    a = reg.decide_appeal(a.appeal_id, body="zoning_board_of_appeals", outcome="reversed", on=date(2026, 11, 24))
    assert a.decision is not None and a.decision.effect == "permit stop_work -> active; case order retracted"


def test_a_version_6_registry_migrates_and_its_appeals_keep_the_earlier_reading(
    target: str, layer_set, layers_path, tmp_path
) -> None:
    from esc_gis.registry.store import backend, schema
    from esc_gis.registry.store.backend import open_backend

    with pytest.MonkeyPatch.context() as m:  # made by the esc_gis before appeals had kinds
        m.setattr(backend, "MIGRATIONS", schema.MIGRATIONS[:6])
        m.setattr(backend, "SCHEMA_VERSION", 6)
        assert init_registry(target, layers=layer_set) == [1, 2, 3, 4, 5, 6]

    def write(r):
        n = add_active(r, address="1 Old St", started=STARTED)
        r.transition(n, "stop_work", on=date(2026, 11, 20), reasons="posted", who="ed")
        return n

    n = written_by_an_earlier_esc_gis(target, layer_set, write, tmp_path)
    b = open_backend(target)
    try:
        with b.write() as cur:  # the row as that esc_gis wrote it: no kind
            cur.execute(
                "INSERT INTO appeals (appeal_id, permit_number, appealed, appellant, appellant_kind, filed_on, "
                f"grounds, recorded_by, recorded_at) VALUES ({', '.join([b.ph] * 9)})",
                (
                    "APL-2026-0001",
                    n,
                    "the order",
                    "P",
                    "aggrieved_person",
                    b.dump("date", date(2026, 11, 21)),
                    "g",
                    "ed",
                    b.dump("datetime", datetime(2026, 11, 21, tzinfo=UTC)),
                ),
            )
    finally:
        b.close()
    assert run_permits("init", target, "--layers", str(layers_path)).exit_code == 0
    with open_registry(target, layers=layer_set, calendar=CAL) as r:
        [a] = r.appeals()
        assert a.appealed_kind is None
        a = r.decide_appeal(a.appeal_id, body="village_board", outcome="reversed", on=date(2026, 11, 22))
        assert a.decision is not None and a.decision.effect == "permit stop_work -> active"


def test_a_kind_that_undoes_no_state_is_a_profile_error() -> None:
    from esc_gis.errors import ProfileError
    from esc_gis.registry.domain.appeals import appealed_kinds

    tables = {"appeals": {"appealed": {"stop_work_order": {"section": "§ 1", "undoes": "stopwork"}}}}
    with pytest.raises(ProfileError, match=r"undoes 'stopwork', not a state a reversal undoes \(stop_work, revoked"):
        appealed_kinds(tables)
    tables["appeals"]["appealed"]["stop_work_order"]["undoes"] = "stop_work"
    assert appealed_kinds(tables)["stop_work_order"].undoes == "stop_work"


def test_a_screened_site_that_needs_no_permit_takes_a4_as_a_permits_site_does(reg, screening: Path) -> None:
    """§ 540-12A(4): a stop-work order if "Any land-disturbing construction activity is in violation of the
    article"; § 540-4A(1)(b): "A permit is not required for a construction site with less than 4,000 square feet",
    yet such a site "shall comply with ... the performance standards of § 540-7A". S2 (900 sq ft) is judged by the
    rule `--permit` asks: A4 is taken, A1 refused with the profile's words (§ 540-12A(1) "a permit is required for
    the construction site"), A2 refused (no permit issued on it)."""
    with pytest.raises(ValidationError) as err:
        reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="x", site_layer=screening, site_id="S2")
    text = str(err.value)
    assert "site S2 does not need a permit (screening: permit not_required, 900 sq ft" in text
    assert "ground A1 does not fit it" in text and "(§ 540-12A(1); § 540-4A; § 540-8A; basis ordinance)" in text
    with pytest.raises(ValidationError, match="ground A2 does not fit it: reading: the ground presupposes"):
        reg.enforce(ground="A2", on=date(2026, 11, 20), reasons="x", site_layer=screening, site_id="S2")
    assert count(reg, "enforcement_cases") == 0
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="mud on the street", site_layer=screening, site_id="S2")
    assert (c.ground, c.site_ref, c.permit_number) == ("A4", "screening.gpkg#S2", None)
    assert c.site is not None and abs(c.site.area - square_sqft(1500, 1000, 900.0).area) < 1.0
