"""`esc-gis permits` end to end on both back ends; the agenda of what is due; the public map.

The public map is checked twice: in its HTML source, and in a real headless Chromium
(the DOM after Leaflet has drawn, and a click on a permit).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timezone
from pathlib import Path

import geopandas as gpd
import pytest
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import ValidationError
from esc_gis.maps import write_map
from esc_gis.maps.public import public_permit_map
from esc_gis.profile import load_profile
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.events import HistoryEvent
from esc_gis.registry.domain.fold import fold
from esc_gis.registry.domain.records import Event, Permit
from esc_gis.registry.views.agenda import agenda, read_rain_csv

from .browser import chromium_page, real_errors
from .conftest import CRS, square_sqft

#: Personal data that must never reach the public map.
PRIVATE = ("Ann Owner", "920-555-0100", "ann@example.com", "Dig Co", "920-555-0199", "dig@example.com")
XSS = '<img src=x onerror="alert(1)">'


def _run(*args: str) -> object:
    r = CliRunner().invoke(cli, ["permits", *args])
    assert "Traceback" not in r.output, r.output
    return r


@pytest.fixture
def permits_layer(tmp_path: Path) -> Path:
    rows = [
        {
            "permit_number": "ESC-2026-0001",
            "site_address": f"1 Main St {XSS}",
            "received_on": "2026-09-01",
            "status": "active",
            "issued_on": "2026-09-20",
            "started_at": "2026-09-21T08:00",
            "landowner_name": "Ann Owner",
            "landowner_phone": "920-555-0100",
            "landowner_email": "ann@example.com",
            "responsible_name": "Dig Co",
            "responsible_phone": "920-555-0199",
            "responsible_email": "dig@example.com",
            "geometry": square_sqft(100, 100, 8000),
        },
        {
            "permit_number": "ESC-2026-0002",
            "site_address": "2 Oak St",
            "received_on": "2026-11-02",
            "landowner_name": "Ann Owner",
            "landowner_email": "ann@example.com",
            "geometry": square_sqft(400, 100, 5000),
        },
    ]
    path = tmp_path / "to_import.gpkg"
    gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS).to_file(path, layer="permits", engine="pyogrio")
    return path


def test_cli_life_cycle_on_both_back_ends(target: str, layers_path: Path, permits_layer: Path, tmp_path: Path) -> None:
    lay = ["--layers", str(layers_path)]
    r = _run("init", target, *lay)
    assert r.exit_code == 0 and "applied migration(s) 1, 2" in r.output
    r = _run("import", target, str(permits_layer), *lay, "--who", "clerk")
    assert r.exit_code == 0, r.output
    assert "Imported 2 permit(s)" in r.output
    site = tmp_path / "site.geojson"
    gpd.GeoDataFrame(geometry=[square_sqft(700, 100, 4500)], crs=CRS).to_crs("EPSG:4326").to_file(site)
    r = _run(
        "add",
        target,
        "--site",
        str(site),
        "--address",
        "3 Elm St",
        "--received",
        "2026-11-02",
        "--landowner",
        "Bo Owner",
        "--landowner-email",
        "bo@example.com",
        *lay,
    )
    assert r.exit_code == 0, r.output
    assert "ESC-2026-0003" in r.output and "4,500 sq ft" in r.output  # measured, in feet, from degrees
    r = _run("transition", target, "ESC-2026-0003", "under_review", "--on", "2026-11-03", *lay)
    assert r.exit_code == 1 and "application fee" in r.output  # complete only with its fee (§ 540-8B)
    fee = ["--kind", "application", "--amount", "1", "--paid-on", "2026-11-02", "--receipt", "R-3"]
    assert _run("fee", target, "ESC-2026-0003", *fee, *lay).exit_code == 0
    assert _run("transition", target, "ESC-2026-0003", "under_review", "--on", "2026-11-03", *lay).exit_code == 0
    r = _run("transition", target, "ESC-2026-0003", "active", *lay)
    assert r.exit_code == 1 and "allowed: approved, disapproved, incomplete, deemed_approved" in r.output
    r = _run("extend", target, "ESC-2026-0001", "200", *lay)
    assert r.exit_code == 1 and "up to 180 days" in r.output
    r = _run("extend", target, "ESC-2026-0001", "90", "--on", "2026-12-01", *lay)
    assert r.exit_code == 0 and "extended" in r.output and "2027-06-17" in r.output  # 2026-09-20 + 180 + 90 days
    r = _run("update", target, "ESC-2026-0001", "--inspected", "2026-11-25", "--stockpile-since", "13/11/2026", *lay)
    assert r.exit_code == 2 and "YYYY-MM-DD" in r.output
    assert _run("update", target, "ESC-2026-0001", "--inspected", "2026-11-25", *lay).exit_code == 0
    r = _run("list", target, "--status", "extended", *lay)
    assert r.exit_code == 0 and "ESC-2026-0001" in r.output and "ESC-2026-0002" not in r.output
    r = _run("show", target, "ESC-2026-0001", "--json", *lay)
    shown = json.loads(r.output)
    assert shown["status"] == "extended" and [e["kind"] for e in shown["events"]] == [
        "imported",
        "extension",
        "inspection",
    ]
    assert shown["parties"][0]["email"] == "ann@example.com"  # staff see contacts; the public does not
    r = _run("due", target, "--on", "2026-11-30", "--json", *lay)
    items = json.loads(r.output)
    assert {(i["permit_number"], i["code"], i["basis"]) for i in items} >= {
        ("ESC-2026-0001", "start_notice", "interpretation"),  # never received: overdue since 2026-09-23 08:00
        ("ESC-2026-0003", "decision_due", "interpretation"),  # business days: a reading of § 540-5
    }
    r = _run("due", target, "--on", "2026-11-30", *lay)
    assert (
        "(§ 540-8E(1); interpretation)" in r.output
        and "(§ 540-8C(1); § 540-5 BUSINESS DAY; interpretation)" in r.output
    )
    out = tmp_path / "export.csv"
    assert _run("export", target, "-o", str(out), *lay).exit_code == 0
    text = out.read_text()
    assert "ESC-2026-0003" in text and not any(s in text for s in PRIVATE)
    assert _run("export", target, "-o", str(out), *lay).exit_code == 1  # no --overwrite
    assert _run("export", target, "-o", str(out), "--private", "--overwrite", *lay).exit_code == 0
    assert "ann@example.com" in out.read_text()
    page = tmp_path / "public.html"
    r = _run("map", target, "--public", "-o", str(page), *lay)
    assert r.exit_code == 0 and "1 active permit(s)" in r.output, r.output
    html = page.read_text()
    assert "ESC-2026-0001" in html and "ESC-2026-0002" not in html  # only active permits
    assert not any(s in html for s in PRIVATE) and "<img src=x" not in html


def test_cli_bad_import_reports_every_row_and_changes_nothing(tmp_path: Path, layers_path: Path) -> None:
    reg = str(tmp_path / "r.gpkg")
    lay = ["--layers", str(layers_path)]
    _run("init", reg, *lay)
    bad = tmp_path / "bad.geojson"
    gpd.GeoDataFrame(
        [
            {"site_address": "1 A St", "received_on": "2026-11-02", "geometry": square_sqft(100, 100, 5000)},
            {"site_address": "", "received_on": "2026-02-30", "geometry": square_sqft(300, 100, 5000)},
            {
                "site_address": "3 C St",
                "received_on": "2026-11-02",
                "landowner_email": "nope",
                "geometry": square_sqft(500, 100, 5000),
            },
        ],
        geometry="geometry",
        crs=CRS,
    ).to_file(bad)
    r = _run("import", reg, str(bad), *lay)
    assert r.exit_code == 1
    assert "row 2" in r.output and "row 3" in r.output and "2026-02-30" in r.output and "site_address" in r.output
    assert _run("list", reg, *lay).output.strip().endswith("0 permit(s).")


def test_cli_list_prints_a_table_one_row_a_permit(
    layers_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`permits list` is a rich table: one row a permit, its figures whole, an address printed as typed."""
    monkeypatch.setenv("COLUMNS", "100")
    lay = ["--layers", str(layers_path)]
    rows = [
        {
            "site_address": "1 Main St",
            "received_on": "2026-09-01",
            "status": "active",
            "issued_on": "2026-09-20",
            "started_at": "2026-09-21T08:00",
            "geometry": square_sqft(100, 100, 8000),
        },
        # Square brackets are rich's markup: the address must come out as typed, not as bold text.
        {"site_address": "2 [bold]Oak[/bold] St", "received_on": "2026-11-02", "geometry": square_sqft(400, 100, 5000)},
    ]
    layer = tmp_path / "to_import.gpkg"
    gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS).to_file(layer, layer="permits", engine="pyogrio")
    reg = str(tmp_path / "permits.gpkg")
    assert _run("init", reg, *lay).exit_code == 0
    assert _run("import", reg, str(layer), *lay).exit_code == 0
    r = _run("list", reg, *lay)
    assert r.exit_code == 0, r.output
    lines = [line.strip() for line in r.output.splitlines() if line.strip()]
    cells = [re.split(r"\s{2,}", line) for line in lines]
    # A two-line heading ("disturbed" above "sq ft"), the rule, a row a permit, the count on stderr.
    assert cells[1] == ["permit", "status", "site address", "sq ft", "expires"], lines[:3]
    assert set(lines[2]) == {"─"}
    # Issued 2026-09-20, it runs 180 days (§ 540-8G); the undecided application has no expiry.
    assert cells[3] == ["ESC-2026-0001", "active", "1 Main St", "8,000", "2027-03-19"]
    assert cells[4] == ["ESC-2026-0002", "application_received", "2 [bold]Oak[/bold] St", "5,000"]
    assert lines[5:] == ["2 permit(s)."]
    r = _run("list", reg, "--status", "approved", *lay)
    assert r.exit_code == 0 and r.output.strip() == "0 permit(s)."  # no table without a row


def test_cli_messages_for_a_missing_registry_and_no_public_flag(tmp_path: Path) -> None:
    r = _run("list", str(tmp_path / "none.gpkg"))
    assert r.exit_code == 1 and "permits init" in r.output
    r = _run("map", str(tmp_path / "none.gpkg"), "-o", str(tmp_path / "m.html"))
    assert r.exit_code == 2 and "--public" in r.output


# --- The agenda -------------------------------------------------------------------------


def _schema_url(pg_url: str, path: str) -> str:
    from urllib.parse import quote

    return f"{pg_url}?options={quote(f'-csearch_path={path}')}"


def test_cli_postgis_registry_in_a_schema_of_its_own(pg_url: str, layers_path: Path, tmp_path: Path) -> None:
    # The README's set-up: a search_path naming only the registry's schema, while PostGIS
    # was created in public. init and add used to crash on "geometry_columns" there.
    import uuid

    import psycopg

    schema = f"own_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        conn.execute(f"CREATE SCHEMA {schema}")
    url, lay = _schema_url(pg_url, schema), ["--layers", str(layers_path)]
    site = tmp_path / "site.gpkg"
    gpd.GeoDataFrame(geometry=[square_sqft(100, 100, 5000)], crs=CRS).to_file(site)
    r = _run("init", url, *lay)
    assert r.exit_code == 0 and "applied migration(s) 1, 2" in r.output, r.output
    r = _run("add", url, "--site", str(site), "--address", "1 Main St", "--received", "2026-11-02", *lay)
    assert r.exit_code == 0, r.output
    r = _run("show", url, "ESC-2026-0001", "--json", *lay)  # a new session finds the CRS again
    assert r.exit_code == 0 and json.loads(r.output)["disturbed_sqft"] == pytest.approx(5000.0, abs=0.01)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        where = conn.execute(
            "SELECT table_schema FROM information_schema.tables WHERE table_name IN ('permits', 'events')"
            " AND table_schema IN (%s, 'public')",
            (schema,),
        ).fetchall()
        srid = conn.execute(
            "SELECT srid FROM public.geometry_columns WHERE f_table_schema = %s AND f_table_name = 'permits'",
            (schema,),
        ).fetchone()
    assert sorted(w[0] for w in where) == [schema, schema]  # nothing landed in public
    assert srid == (7594,)


def test_cli_postgis_search_path_naming_no_schema_is_refused(pg_url: str, layers_path: Path) -> None:
    import psycopg

    url, lay = _schema_url(pg_url, "no_such_schema_here"), ["--layers", str(layers_path)]
    for args in (("init", url), ("list", url)):
        r = CliRunner().invoke(cli, ["permits", *args, *lay])
        assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (r.output, r.exception)
        assert "no_such_schema_here" in r.output and "CREATE SCHEMA" in r.output
    with psycopg.connect(pg_url, autocommit=True) as conn:  # not quietly made in PostGIS's schema instead
        assert conn.execute("SELECT to_regclass('public.esc_gis_schema')").fetchone() == (None,)


def test_cli_postgis_database_errors_are_messages_not_tracebacks(pg_url: str, layers_path: Path) -> None:
    import uuid

    import psycopg

    schema = f"broken_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url, lay = _schema_url(pg_url, schema), ["--layers", str(layers_path)]
    assert _run("init", url, *lay).exit_code == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {schema}.disturbed_limits CASCADE")  # a registry damaged outside esc_gis
    r = CliRunner().invoke(cli, ["permits", "list", url, *lay])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert "disturbed_limits" in r.output and "Traceback" not in r.output


def _permit(**kw) -> Permit:
    base = dict(  # noqa: C408 (keyword style reads like the record)
        permit_number="P1",
        parcel_id=None,
        site_address="1 A St",
        legal_description=None,
        status="active",
        site_sqft=5000.0,
        disturbed_sqft=5000.0,
        permit_decision="required",
        standards="540-7B",
        sediment_standard=False,
        building_permit_expires=None,
        received_on=date(2026, 10, 1),
        information_requested_on=None,
        information_received_on=None,
        decided_on=date(2026, 10, 20),
        issued_on=date(2026, 10, 20),
        expires_on=date(2027, 4, 18),
        started_at=datetime(2026, 11, 2, 8, tzinfo=timezone.utc),
        start_notice_at=datetime(2026, 11, 2, 9, tzinfo=timezone.utc),
        work_stopped_on=None,
        stockpile_since=None,
        final_on=None,
        updated_at=datetime(2026, 11, 2, tzinfo=timezone.utc),
    )
    base.update(kw)
    return Permit(**base)


def test_agenda_rain_inspections_stabilization_and_deemed_approval(tmp_path: Path) -> None:
    rain = tmp_path / "rain.csv"
    rain.write_text("DATE,PRCP\n2026-11-10,0.49\n2026-11-12,0.50\n2026-11-20,T\n2026-11-21,1.2\n")
    inspected = [
        Event(datetime(2026, 11, 13, tzinfo=timezone.utc), "i", "inspection", on_date=date(2026, 11, 13)),
        Event(datetime(2026, 11, 20, tzinfo=timezone.utc), "i", "inspection", on_date=date(2026, 11, 20)),
    ]
    working = _permit(events=inspected, work_stopped_on=date(2026, 11, 14))
    # The rules read the history's fold: the holder's inspections of those days, each with a full
    # report (§ 540-8E(6) "Weekly inspection reports shall include all of the following"; a day
    # alone holds none of it and meets no duty).
    full = {"by": "holder", "contents": ["location", "work_done", "phase"]}
    working.state = fold(
        [
            HistoryEvent("P1", "inspected", e.at, e.who, on=e.on_date, data={**full, "inspection_id": i})
            for i, e in enumerate(inspected, start=1)
        ]
    )
    waiting = _permit(
        permit_number="P2",
        status="under_review",
        received_on=date(2026, 11, 2),
        issued_on=None,
        expires_on=None,
        started_at=None,
    )
    # Its history: received and its fee paid the same day, so the decision clock runs from 2026-11-02.
    t = datetime(2026, 11, 2, tzinfo=timezone.utc)
    waiting.state = fold([
        HistoryEvent("P2", "received", t, "c", on=date(2026, 11, 2), data={"to": "application_received"}),
        HistoryEvent("P2", "fee_paid", t, "c", on=date(2026, 11, 2),
                     data={"fee_kind": "application", "amount": 1.0, "receipt": "R"}),
        HistoryEvent("P2", "under_review", t, "c", on=date(2026, 11, 2), data={"to": "under_review"}),
    ])  # fmt: skip
    items = agenda(
        [working, waiting],
        on=date(2026, 12, 3),
        calendar=OfficeCalendar(),
        profile=load_profile(),
        rain=read_rain_csv(rain),
        within_days=0,
    )
    got = {(i.permit_number, i.code, str(i.due), i.overdue) for i in items}
    # 0.49 in is under the trigger; 0.50 on the 12th was inspected on the 13th; the trace on the 20th is
    # under the profile's wet day (0.1 in), so 1.2 in on the 21st is an event of its own, ending the 21st:
    # the inspection on the 20th came before it.
    assert ("P1", "rain_inspection", "2026-11-22", True) in got
    assert [i.what for i in items if i.code == "rain_inspection"] == [
        "inspection after 1.20 in of rain from 2026-11-21 to 2026-11-21, due within 24 hours after the event of "
        "0.5 inch or more ended (reading: an event is a run of consecutive days of 0.1 inch or more, with a day of "
        "measurable rain (0.01 inch or more) between two of them while the event is under 0.5 inch, or in timed "
        "data rain separated by less than 6 "
        "hours without rain, on the Village's clock)"
    ]
    assert ("P1", "weekly_inspection", "2026-11-27", True) in got
    # Work stopped the 14th with no resumption expected on record: stabilisation was due that day, not the 28th.
    assert ("P1", "temporary_stabilization_unknown_resume", "2026-11-14", True) in got
    # Received Mon 2026-11-02: 20 business days skip Thanksgiving and the day after, so due Wed 2026-12-02.
    assert ("P2", "deemed_approved", "2026-12-02", True) in got
    deemed = next(i for i in items if i.code == "deemed_approved")
    assert (deemed.section, deemed.basis) == ("§ 540-8C(5); § 540-5 BUSINESS DAY", "interpretation")
    assert "ran out on 2026-12-02" in deemed.what


@pytest.mark.parametrize(
    ("resume", "resumed", "expected"),
    [
        (date(2026, 11, 20), None, ("temporary_stabilization_pause_overran", "2026-11-28", True)),
        (date(2026, 12, 1), None, ("temporary_stabilization", "2026-11-14", True)),
        (date(2026, 11, 20), date(2026, 11, 20), None),
    ],
)
def test_agenda_temporary_stabilization_follows_the_expected_resumption(resume, resumed, expected) -> None:
    p = _permit(work_stopped_on=date(2026, 11, 14), resume_expected_on=resume, work_resumed_on=resumed)
    items = agenda([p], on=date(2026, 12, 3), calendar=OfficeCalendar(), profile=load_profile(), within_days=0)
    got = [(i.code, str(i.due), i.overdue) for i in items if i.code.startswith("temporary")]
    assert got == ([expected] if expected else [])


def test_rain_csv_reads_hourly_readings(tmp_path: Path) -> None:
    rain = tmp_path / "hourly.csv"
    rain.write_text("datetime,precip_in\n2026-11-10T22:00,0.3\n2026-11-11T02:00,0.25\n2026-11-11 03:00,0\n")
    got = read_rain_csv(rain)
    assert got[0] == (datetime(2026, 11, 10, 22), 0.3) and got[2] == (datetime(2026, 11, 11, 3), 0.0)
    (tmp_path / "mixed.csv").write_text("date,precip_in\n2026-11-10,0.3\n2026-11-11T02:00,0.25\n")
    with pytest.raises(ValidationError, match="mixes days"):
        read_rain_csv(tmp_path / "mixed.csv")


def test_rain_csv_reports_every_bad_row(tmp_path: Path) -> None:
    rain = tmp_path / "rain.csv"
    rain.write_text("date,precip_in\n2026-11-01,0.1\n11/02/2026,0.2\n2026-11-03,-1\n2026-11-04,lots\n")
    with pytest.raises(ValidationError) as err:
        read_rain_csv(rain)
    assert [p.row for p in err.value.problems] == [3, 4, 5]
    (tmp_path / "mm.csv").write_text("date,precip_mm\n2026-11-01,25.4\n")
    assert read_rain_csv(tmp_path / "mm.csv") == [(date(2026, 11, 1), 1.0)]


# --- The public map ------------------------------------------------------------------------


def _public_frame(layer_set) -> gpd.GeoDataFrame:
    """What Registry.frame(private=True) gives, contacts included: the map must drop them itself."""
    return gpd.GeoDataFrame(
        {
            "permit_number": ["ESC-2026-0001", "ESC-2026-0002", "ESC-2026-0003"],
            "site_address": [f"1 Main St {XSS}", "2 Oak St", "3 Elm St"],
            "disturbed_acres": [0.184, 0.115, 2.0],
            "status": ["active", "stop_work", "under_review"],
            "expires_on": [date(2027, 3, 19), date(2027, 5, 1), None],
            "landowner_name": ["Ann Owner"] * 3,
            "landowner_phone": ["920-555-0100"] * 3,
            "landowner_email": ["ann@example.com"] * 3,
            "responsible_party_name": ["Dig Co"] * 3,
            "responsible_party_phone": ["920-555-0199"] * 3,
            "responsible_party_email": ["dig@example.com"] * 3,
        },
        geometry=[square_sqft(100, 100, 8000), square_sqft(400, 100, 5000), square_sqft(700, 100, 87120)],
        crs=CRS,
    )


def test_public_map_source_has_no_personal_data_and_a_stamp(layer_set) -> None:
    m = public_permit_map(
        _public_frame(layer_set),
        as_of=datetime(2026, 11, 30, 9, 15, tzinfo=timezone.utc),
        contact="Village Hall, 920-582-0000",
        layers=layer_set,
    )
    html = m.get_root().render()
    assert not any(s in html for s in PRIVATE)
    assert (
        "ESC-2026-0001" in html and "ESC-2026-0002" in html and "ESC-2026-0003" not in html
    )  # under review: not public
    # On the Village's clock, with its zone (9:15 UTC is 3:15 in Winneconne in November).
    assert "Data as of 2026-11-30 03:15 CST (America/Chicago)" in html and "Village Hall, 920-582-0000" in html
    assert "<img src=x" not in html  # the address is JSON data shown as text


@pytest.mark.parametrize(
    "status, shown",
    [("active", True), ("extended", True), ("stop_work", True), ("suspended", True)]
    + [(s, False) for s in ("application_received", "under_review", "approved", "revoked", "closed")],
)
def test_public_map_shows_the_states_where_work_is_permitted_or_halted(layer_set, status: str, shown: bool) -> None:
    frame = _public_frame(layer_set).assign(status=[status, "closed", "closed"])
    html = public_permit_map(frame, as_of=datetime(2026, 11, 30), contact="Village Hall", layers=layer_set)
    html = html.get_root().render()
    assert ("ESC-2026-0001" in html) is shown
    if status == "suspended":
        assert "Permit suspended (1)" in html


def test_public_map_in_chromium_shows_permits_and_no_personal_data(layer_set, tmp_path: Path) -> None:
    frame = _public_frame(layer_set)
    path = write_map(
        public_permit_map(
            frame,
            as_of=datetime(2026, 11, 30, 9, 15, tzinfo=timezone.utc),
            contact="Village Hall",
            layers=layer_set,
            offline=True,
        ),
        tmp_path / "p.html",
    )
    with chromium_page(offline=True) as (page, errors, _):
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        source = page.content()  # the page as the browser holds it, after every script ran
        assert not any(s in source for s in PRIVATE)
        assert "Data as of 2026-11-30 03:15 CST (America/Chicago)" in page.inner_text("#esc-as-of")
        overlays = page.eval_on_selector_all(
            ".leaflet-control-layers-overlays label", "els => els.map(e => e.innerText.trim())"
        )
        assert "Active (1)" in overlays and "Stop-work order (1)" in overlays
        g = frame.to_crs("EPSG:4326").geometry.iloc[0].representative_point()
        x, y = page.evaluate(
            """([lat, lng]) => {
            const m = Object.values(window).find(v => v instanceof L.Map);
            const p = m.latLngToContainerPoint([lat, lng]); const r = m.getContainer().getBoundingClientRect();
            return [r.left + p.x, r.top + p.y]; }""",
            [g.y, g.x],
        )
        page.mouse.click(x, y)
        page.wait_for_selector(".leaflet-popup-content")
        popup = page.inner_text(".leaflet-popup-content")
        assert "Permit ESC-2026-0001" in popup and XSS in popup and "Expires: 2027-03-19" in popup
        assert "Questions: Village Hall" in popup and page.locator(".leaflet-popup-content img").count() == 0
        assert real_errors(errors) == []


def test_cli_pause_retraction_suspension_and_plans(tmp_path: Path, layers_path: Path) -> None:
    reg = str(tmp_path / "r.gpkg")
    lay = ["--layers", str(layers_path)]
    assert _run("init", reg, *lay).exit_code == 0
    for x, num in ((100, "1"), (400, "2")):
        site = tmp_path / f"s{num}.geojson"
        gpd.GeoDataFrame(geometry=[square_sqft(x, 100, 3000)], crs=CRS).to_file(site)
        r = _run(
            "add",
            reg,
            "--site",
            str(site),
            "--address",
            f"{num} Plan St",
            "--received",
            "2026-11-02",
            "--plan-id",
            "Meadow",
            *lay,
        )
        assert r.exit_code == 0, r.output
    shown = json.loads(_run("show", reg, "ESC-2026-0001", "--json", *lay).output)
    assert shown["plan_id"] == "Meadow" and shown["permit_decision"] == "required"  # 6,000 sq ft over the plan
    n = "ESC-2026-0002"
    fee = ["--kind", "application", "--amount", "1", "--paid-on", "2026-11-02", "--receipt", "R-2"]
    assert _run("fee", reg, n, *fee, *lay).exit_code == 0
    for state, on in (("under_review", "2026-11-03"), ("approved", "2026-11-10"), ("active", "2026-11-16")):
        assert _run("transition", reg, n, state, "--on", on, *lay).exit_code == 0
    r = _run("update", reg, n, "--work-stopped", "2026-11-20", "--resume-expected", "2026-12-15", *lay)
    assert r.exit_code == 0, r.output
    items = json.loads(_run("due", reg, "--on", "2026-11-21", "--within", "0", "--json", *lay).output)
    stab = [i for i in items if i["code"].startswith("temporary")]
    assert [(i["code"], i["due"], i["basis"]) for i in stab] == [("temporary_stabilization", "2026-11-20", "ordinance")]
    assert _run("update", reg, n, "--resumed", "2026-11-30", *lay).exit_code == 0
    items = json.loads(_run("due", reg, "--on", "2026-12-01", "--within", "0", "--json", *lay).output)
    assert not [i for i in items if i["code"].startswith("temporary")]
    r = _run("transition", reg, n, "stop_work", "--on", "2026-12-02", *lay)
    # § 540-12A "may post a stop-work order": written reasons are the office's rule, cited as policy.
    assert r.exit_code == 1 and "written reasons (basis policy: the office's rule; § 540-12A requires none)" in r.output
    assert (
        _run(
            "transition", reg, n, "stop_work", "--on", "2026-12-02", "--reasons", "No perimeter control.", *lay
        ).exit_code
        == 0
    )
    r = _run("retract", reg, n, *lay)
    assert r.exit_code == 2 and "--reasons" in r.output
    r = _run("retract", reg, n, "--reasons", "Perimeter control installed.", "--on", "2026-12-03", *lay)
    assert r.exit_code == 0 and "active" in r.output, r.output
    assert (
        _run(
            "transition",
            reg,
            n,
            "suspended",
            "--on",
            "2026-12-04",
            "--reasons",
            "Written notice 12-01.",
            "--notified-on",
            "2026-12-01",
            *lay,
        ).exit_code
        == 0
    )
    r = _run("reinstate", reg, n, "--reasons", "Complied.", "--on", "2026-12-04", *lay)
    assert r.exit_code == 0 and "active" in r.output, r.output


# --- A permit from a screening output (issue 24) ----------------------------------------------


@pytest.fixture
def screening(tmp_path: Path, layers_path: Path) -> dict[str, Path]:
    """`esc-gis screen` of three sites sent in degrees, written as GeoPackage and as CSV.

    S01 6,000 sq ft and S02 5,000 sq ft (on common plan P1) need a permit (4,000 sq ft or more,
    § 540-4A(1)(a)); S03 1,000 sq ft does not. Disturbed limits keyed by site_id: S01 2,000 sq ft,
    S02 3,000 sq ft.
    """
    rows = [
        {"site_id": "S01", "name": "1 Screened St", "plan_id": None, "geometry": square_sqft(100, 100, 6000)},
        {"site_id": "S02", "name": "2 Screened St", "plan_id": "P1", "geometry": square_sqft(400, 100, 5000)},
        {"site_id": "S03", "name": "3 Screened St", "plan_id": None, "geometry": square_sqft(700, 100, 1000)},
    ]
    sent = tmp_path / "sites.geojson"
    gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS).to_crs("EPSG:4326").to_file(sent)
    limits = tmp_path / "limits.gpkg"
    gpd.GeoDataFrame(
        {"site_id": ["S01", "S02"]}, geometry=[square_sqft(110, 110, 2000), square_sqft(410, 110, 3000)], crs=CRS
    ).to_file(limits)
    out = {"gpkg": tmp_path / "screening.gpkg", "csv": tmp_path / "screened.csv", "limits": limits}
    for fmt in ("gpkg", "csv"):
        r = CliRunner().invoke(cli, ["screen", str(sent), "--layers", str(layers_path), "-o", str(out[fmt])])
        assert r.exit_code == 0, r.output
    return out


def _shown(target: str, number: str, lay: list[str]) -> dict:
    r = _run("show", target, number, "--json", *lay)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_cli_add_a_permit_from_a_screening_output(target: str, layers_path: Path, screening) -> None:
    lay = ["--layers", str(layers_path)]
    assert _run("init", target, *lay).exit_code == 0
    app = ["--address", "2 Screened St", "--received", "2026-11-02", *lay]
    gpkg, csv_ = str(screening["gpkg"]), str(screening["csv"])
    r = _run("add", target, "--site", gpkg, *app)  # a layer of many is not one site
    assert r.exit_code == 1 and "has 3 features" in r.output and "--site-layer FILE --site-id ID" in r.output
    r = _run("add", target, "--site-layer", gpkg, "--site-id", "S02", *app)
    assert r.exit_code == 0, r.output
    p = _shown(target, "ESC-2026-0001", lay)
    # Measured from the screened site (never typed); the screening's common plan comes with it.
    assert p["disturbed_sqft"] == pytest.approx(5000, abs=0.5) and p["plan_id"] == "P1"
    assert p["permit_decision"] == "required" and p["site_address"] == "2 Screened St"
    # --where alone, on the CSV the screening wrote (it reads back with its CRS).
    r = _run("add", target, "--site-layer", csv_, "--where", "site_id = 'S01'", *app)
    assert r.exit_code == 0, r.output
    assert _shown(target, "ESC-2026-0002", lay)["disturbed_sqft"] == pytest.approx(6000, abs=0.5)
    # The same site again while its application is open: refused, naming it (issue 46).
    r = _run("add", target, "--site-layer", gpkg, "--site-id", "S02", *app)
    assert r.exit_code == 1 and "covered by permit ESC-2026-0001 (application_received)" in r.output, r.output
    # Once that application is closed (withdrawn), the site takes a new one, linked to it.
    r = _run("transition", target, "ESC-2026-0002", "closed", "--on", "2026-11-03", "--reasons", "withdrawn", *lay)
    assert r.exit_code == 0, r.output
    # The disturbed limits of a layer keyed by site_id: the picked site's.
    r = _run("add", target, "--site-layer", gpkg, "--site-id", "S01", "--disturbed", str(screening["limits"]), *app)
    assert r.exit_code == 0, r.output
    third = _shown(target, "ESC-2026-0003", lay)
    assert third["disturbed_sqft"] == pytest.approx(2000, abs=0.5) and third["earlier_permits"] == "ESC-2026-0002"
    assert third["jurisdiction"] == "inside"
    # None or several picked: one clear message each, exit 1, nothing added.
    refusals = {
        ("--site-id", "S09"): "--site-id S09 matches none of its 3 feature(s)",
        ("--site-id", "s01"): "Did you mean 'S01'?",
        ("--where", "permit = 'required'"): "matches 2 features (rows 1, 2) (site_id S01, S02); one site is expected",
        ("--where", "permit = 'revoked'"): "--where \"permit = 'revoked'\" matches no feature",
        ("--where", "site_id = 'S03'", "--site-id", "S01"): "--site-id S01 matches none of the 1 feature(s)",
    }
    for args, said in refusals.items():
        r = _run("add", target, "--site-layer", gpkg, *args, *app)
        assert r.exit_code == 1 and said in r.output, r.output
    r = _run("add", target, "--site-layer", gpkg, "--where", "permt = 'x'", *app)
    assert r.exit_code == 1 and "not valid SQL" in r.output
    for args in (["--site", gpkg, "--site-layer", gpkg], ["--site", gpkg, "--site-id", "S01"], []):
        r = _run("add", target, *args, *app)
        assert r.exit_code == 2 and "--site-layer" in r.output, r.output
    assert _run("list", target, *lay).output.strip().endswith("3 permit(s).")


def test_cli_import_a_screening_output_as_it_is(target: str, layers_path: Path, screening) -> None:
    lay = ["--layers", str(layers_path)]
    assert _run("init", target, *lay).exit_code == 0
    csv_ = str(screening["csv"])
    # What a screening lacks is named with the option that supplies it, both at once.
    r = _run("import", target, csv_, *lay)
    assert r.exit_code == 1 and "2 problems" in r.output, r.output
    assert "has no site_address column. Fix: map the column that holds it with --field site_address=COLUMN" in r.output
    assert "has no received_on column. Fix: give the day the applications came in with --received-on" in r.output
    # Every bad mapping at once, each with its nearest.
    r = _run("import", target, csv_, "--field", "site_adress=name", "--field", "parcel_id=parcel", *lay)
    assert r.exit_code == 1 and "4 problems" in r.output, r.output
    assert "'site_adress' is not an import column" in r.output and "Did you mean 'site_address'?" in r.output
    assert "has no column 'parcel'" in r.output and "--received-on" in r.output
    r = _run("import", target, csv_, "--field", "site_address=adress", "--received-on", "2026-11-02", *lay)
    assert r.exit_code == 1 and "1 problem found" in r.output, r.output  # the refused mapping, once
    assert "has no column 'adress'" in r.output
    r = _run("import", target, csv_, "--field", "site_address", *lay)
    assert r.exit_code == 2 and "NAME=COLUMN" in r.output
    r = _run(
        "import", target, csv_, "--where", "permit = 'required'", "--field", "SITE_ADDRESS=Name",
        "--field", "parcel_id=site_id", "--received-on", "2026-11-02", *lay,
    )  # fmt: skip
    assert r.exit_code == 0 and "Imported 2 permit(s)" in r.output, r.output
    first, second = _shown(target, "ESC-2026-0001", lay), _shown(target, "ESC-2026-0002", lay)
    assert (first["site_address"], first["parcel_id"], first["received_on"]) == ("1 Screened St", "S01", "2026-11-02")
    assert first["disturbed_sqft"] == pytest.approx(6000, abs=0.5) and first["status"] == "application_received"
    assert (second["site_address"], second["plan_id"]) == ("2 Screened St", "P1")
    # The GeoPackage the screening wrote goes in the same way.
    gpkg = str(screening["gpkg"])
    r = _run("import", target, gpkg, "--where", "site_id = 'S03'", "--field", "site_address=name",
             "--received-on", "2026-11-03", *lay)  # fmt: skip
    assert r.exit_code == 0 and "Imported 1 permit(s)" in r.output, r.output
    third = _shown(target, "ESC-2026-0003", lay)
    assert (third["site_address"], third["received_on"], third["permit_decision"]) == (
        "3 Screened St",
        "2026-11-03",
        "not_required",  # 1,000 sq ft: under the § 540-4A(1)(a) thresholds
    )


def test_import_received_on_stands_for_rows_without_their_own() -> None:
    from esc_gis.registry.service.imports import applications_from_frame

    frame = gpd.GeoDataFrame(
        {"ADDR": ["1 A St", "2 B St"], "Recvd": ["2026-10-01", None]},
        geometry=[square_sqft(100, 100, 5000), square_sqft(400, 100, 5000)],
        crs=CRS,
    )
    apps, problems = applications_from_frame(
        frame, source="x", fields={"site_address": "addr", "received_on": "RECVD"}, received_on=date(2026, 11, 2)
    )
    assert problems == [] and [(a.site_address, a.received_on) for a in apps] == [
        ("1 A St", date(2026, 10, 1)),  # its own day wins
        ("2 B St", date(2026, 11, 2)),
    ]
    apps, problems = applications_from_frame(frame, source="x", fields={"site_address": "addr", "received_on": "Recvd"})
    assert problems == [] and apps[1].received_on is None  # refused later, by the registry, naming the row


def test_cli_a_mistyped_option_value_names_the_nearest(target: str, layers_path: Path, permits_layer: Path) -> None:
    lay = ["--layers", str(layers_path)]
    assert _run("init", target, *lay).exit_code == 0
    assert _run("import", target, str(permits_layer), *lay).exit_code == 0
    r = _run("transition", target, "ESC-2026-0002", "aproved", *lay)
    assert r.exit_code == 1 and "'aproved' is not a permit state" in r.output and "Did you mean 'approved'?" in r.output
    r = _run("transition", target, "ESC-2026-0002", "xyzzy", *lay)
    assert r.exit_code == 1 and "is not a permit state" in r.output and "Did you mean" not in r.output
    r = _run("list", target, "--status", "activ", *lay)
    assert r.exit_code == 1 and "Did you mean 'active'?" in r.output
    enforce = ["--address", "9 X St", "--on", "2026-11-20", "--reasons", "graded", *lay]
    r = _run("enforce", target, "--ground", "a1", *enforce)
    assert r.exit_code == 1 and "Did you mean 'A1'?" in r.output
    r = _run("amend", target, "ESC-2026-0001", "--trigger", "orignal", "--description", "x", *lay)
    assert r.exit_code == 1 and "Did you mean 'original'?" in r.output
    schedule = Path(__file__).parents[1] / "examples" / "fee-schedule.example.toml"
    fee = ["--amount", "1", "--paid-on", "2026-11-02", "--receipt", "R-1", "--fees", str(schedule), *lay]
    r = _run("fee", target, "ESC-2026-0002", "--kind", "aplication", *fee)
    assert r.exit_code == 1 and "Did you mean 'application'?" in r.output, r.output
    r = _run("case", target, "ENF-2026-0001", "--costs-from", "biled", *lay)  # click's own choice
    assert r.exit_code == 2 and "Did you mean 'billed'?" in r.output
