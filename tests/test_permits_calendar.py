"""`esc-gis permits calendar`: the deadlines as an iCalendar feed, parsed back with icalendar.

The feed must list exactly what `permits due --within N` lists, keep each event's UID
across exports (so a re-import updates, not duplicates), tell days from times, and carry
no personal data (it may be shared outside the office).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import date, datetime, timezone
from pathlib import Path

import geopandas as gpd
import icalendar
import pytest
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.profile import load_profile
from esc_gis.registry.views.agenda import DueItem
from esc_gis.registry.views.ical import deadline_calendar, event_uid

from .conftest import CRS, add_active, pay_application_fee, square_sqft

#: Planted personal data and office notes: none may reach the feed.
PRIVATE = (
    "Ann Owner",
    "920-555-0100",
    "ann@example.com",
    "Dig Co",
    "920-555-0199",
    "dig@example.com",
    "Fence down by the neighbour",
)
EXAMPLE = load_profile(Path(__file__).parent / "profiles" / "example.toml")


def _run(*args: str) -> object:
    r = CliRunner().invoke(cli, ["permits", *args])
    assert "Traceback" not in r.output, r.output
    return r


@pytest.fixture
def registry(target: str, layers_path: Path, tmp_path: Path) -> str:
    """Three permits: active with no notice of start, under review, active and stopped; timed rain."""
    base = {
        "landowner_name": "Ann Owner",
        "landowner_phone": "920-555-0100",
        "landowner_email": "ann@example.com",
        "responsible_name": "Dig Co",
        "responsible_phone": "920-555-0199",
        "responsible_email": "dig@example.com",
    }
    rows = [
        {
            **base,
            "permit_number": "ESC-2026-0001",
            "site_address": "1 Main St",
            "received_on": "2026-09-01",
            "status": "active",
            "issued_on": "2026-09-20",
            "started_at": "2026-09-21T08:00",
            "geometry": square_sqft(100, 100, 8000),
        },
        {
            **base,
            "permit_number": "ESC-2026-0002",
            "site_address": "2 Oak St",
            "received_on": "2026-11-02",
            "geometry": square_sqft(400, 100, 5000),
        },
        {
            **base,
            "permit_number": "ESC-2026-0003",
            "site_address": "3 Elm St",
            "received_on": "2026-10-01",
            "status": "active",
            "issued_on": "2026-10-20",
            "started_at": "2026-10-26T07:00",
            "start_notice_at": "2026-10-26T09:00",
            "geometry": square_sqft(700, 100, 6000),
        },
    ]
    layer = tmp_path / "to_import.gpkg"
    gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS).to_file(layer, layer="permits", engine="pyogrio")
    lay = ["--layers", str(layers_path)]
    assert _run("init", target, *lay).exit_code == 0
    assert _run("import", target, str(layer), *lay).exit_code == 0
    # Complete with its fee (§ 540-8B): the decision's 20 business days run from then.
    r = _run("fee", target, "ESC-2026-0002", "--kind", "application", "--amount", "1", "--paid-on", "2026-11-02",
             "--receipt", "R-2", *lay)  # fmt: skip
    assert r.exit_code == 0, r.output
    r = _run("update", target, "ESC-2026-0003", "--inspected", "2026-11-27", "--work-stopped", "2026-11-20", *lay)
    assert r.exit_code == 0, r.output
    r = _run("transition", target, "ESC-2026-0003", "stop_work", "--on", "2026-11-21", "--reasons", PRIVATE[-1], *lay)
    assert r.exit_code == 0, r.output
    return target


@pytest.fixture
def rain(tmp_path: Path) -> Path:
    """Hourly readings: one 0.6 in event ending 2026-11-28 11:00, its inspection due at 11:00 the next day."""
    path = tmp_path / "rain.csv"
    path.write_text("date,precip_in\n2026-11-28T09:00,0.3\n2026-11-28T10:00,0\n2026-11-28T11:00,0.3\n")
    return path


def _feed(path: Path) -> tuple[icalendar.Calendar, list[icalendar.Event]]:
    cal = icalendar.Calendar.from_ical(path.read_bytes())
    return cal, list(cal.walk("VEVENT"))


def _due_value(text: str) -> date | datetime:
    return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)


def test_feed_equals_permits_due(registry: str, layers_path: Path, rain: Path, tmp_path: Path) -> None:
    opts = ["--on", "2026-11-30", "--rain", str(rain), "--within", "200", "--layers", str(layers_path)]
    out = tmp_path / "deadlines.ics"
    r = _run("calendar", registry, "-o", str(out), *opts)
    assert r.exit_code == 0, r.output
    items = json.loads(_run("due", registry, "--json", *opts).output)
    cal, events = _feed(out)
    assert str(cal["X-WR-CALNAME"]) == f"{load_profile().jurisdiction_name}: permit deadlines"
    assert "esc_gis" in str(cal["PRODID"]) and str(cal["VERSION"]) == "2.0"
    # Every item once, with its day or time and its code; nothing more.
    assert len(events) == len(items) >= 8
    want = sorted((i["permit_number"], i["code"], _due_value(i["due"])) for i in items)
    got = sorted((str(e["SUMMARY"]).split(":")[0], str(e["CATEGORIES"].cats[0]), e["DTSTART"].dt) for e in events)
    assert got == want
    codes = {c for _, c, _ in got}
    assert {"start_notice", "rain_inspection", "weekly_inspection", "decision_due", "permit_expires"} <= codes
    assert {"temporary_stabilization_unknown_resume"} <= codes
    by_code = {(str(e["SUMMARY"]).split(":")[0], str(e["CATEGORIES"].cats[0])): e for e in events}
    # The notice of start is a time (stored in UTC); so is the hourly rain's inspection.
    # Work began at 08:00 as typed in the import, on the Village's clock (CDT, UTC-5), whatever
    # this machine's zone: the notice is due 48 hours later, 13:00 UTC.
    notice = by_code[("ESC-2026-0001", "start_notice")]["DTSTART"].dt
    assert notice == datetime(2026, 9, 23, 13, 0, tzinfo=timezone.utc)
    rain_due = by_code[("ESC-2026-0001", "rain_inspection")]
    # The station's 11:00 is the Village's clock (CST, UTC-6): due 24 hours on, 17:00 UTC.
    assert rain_due["DTSTART"].dt == datetime(2026, 11, 29, 17, 0, tzinfo=timezone.utc) and "DTEND" not in rain_due
    # A day is an all-day event: VALUE=DATE, ending the next day.
    decision = by_code[("ESC-2026-0002", "decision_due")]
    assert type(decision["DTSTART"].dt) is date and decision["DTSTART"].params["VALUE"] == "DATE"
    assert (decision["DTEND"].dt - decision["DTSTART"].dt).days == 1
    # The summary names the section; the description the message, section and basis.
    assert "(§ 540-8C(1); § 540-5 BUSINESS DAY)" in str(decision["SUMMARY"])
    text = str(by_code[("ESC-2026-0001", "start_notice")]["DESCRIPTION"])
    assert "Section: § 540-8E(1)" in text and "Basis: interpretation" in text and "notice of start" in text
    assert "Overdue on 2026-11-30." in text and "Overdue" not in str(decision["DESCRIPTION"])
    for e in events:
        assert isinstance(e["DTSTAMP"].dt, datetime) and e["DTSTAMP"].dt.tzinfo is not None
    raw = out.read_bytes().decode()
    assert "DTSTART;VALUE=DATE:" in raw and "DTSTART:20260923T130000Z" in raw and "\r\n" in raw
    # No personal data, no office notes (the written reasons of the stop-work order).
    assert not any(s in raw for s in PRIVATE)
    # The telephone numbers in any spelling; not "555" alone, which a DTSTAMP's time can hold (05:55:48).
    assert raw.count("Owner") == 0 and "920-555" not in raw and "9205550" not in raw


def test_uids_are_stable_and_unique(registry: str, layers_path: Path, rain: Path, tmp_path: Path) -> None:
    lay = ["--layers", str(layers_path)]
    opts = ["--on", "2026-11-30", "--rain", str(rain), *lay]
    out = tmp_path / "deadlines.ics"
    assert _run("calendar", registry, "-o", str(out), *opts).exit_code == 0
    first = {str(e["UID"]): e for e in _feed(out)[1]}
    assert len(first) == len(_feed(out)[1])  # unique within one export
    before = out.read_bytes()
    r = _run("calendar", registry, "-o", str(out), *opts)
    assert r.exit_code == 1 and "--overwrite" in r.output and out.read_bytes() == before
    assert _run("calendar", registry, "-o", str(out), "--overwrite", *opts).exit_code == 0
    second = {str(e["UID"]): e for e in _feed(out)[1]}
    assert second.keys() == first.keys()
    # An extension moves the expiry: the same event (UID) on its new day, not a second one.
    expiry = next(u for u, e in first.items() if str(e["SUMMARY"]).startswith("ESC-2026-0001: permit expires"))
    assert _run("extend", registry, "ESC-2026-0001", "90", "--on", "2026-11-30", *lay).exit_code == 0
    assert _run("calendar", registry, "-o", str(out), "--overwrite", *opts).exit_code == 0
    third = {str(e["UID"]): e for e in _feed(out)[1]}
    assert third.keys() == first.keys()
    assert (third[expiry]["DTSTART"].dt - first[expiry]["DTSTART"].dt).days == 90


def test_bad_outputs_exit_1_and_write_nothing(registry: str, layers_path: Path, tmp_path: Path) -> None:
    lay = ["--layers", str(layers_path)]
    for bad, says in (
        (tmp_path / "missing" / "d.ics", "does not exist"),
        (tmp_path / "d.txt", "iCalendar"),
        (tmp_path, "folder"),
    ):
        r = _run("calendar", registry, "-o", str(bad), *lay)
        assert r.exit_code == 1 and says in r.output, r.output
    assert not (tmp_path / "d.txt").exists() and not list(tmp_path.glob(".d.*"))


def test_uid_identity_and_example_profile() -> None:
    def item(code: str, due: date | datetime, number: str = "N-1") -> DueItem:
        return DueItem(number, "1 Main St", "active", "weekly inspection", due, "§ 23-8E(6)", "ordinance", False, code)

    day = date(2026, 12, 1)
    # Recurring deadlines differ by day; one-per-permit ones (decision, expiry, notice, the next
    # weekly inspection) do not: an inspection recorded moves the weekly event, not adds one.
    assert event_uid(item("rain_inspection", day), "X") != event_uid(item("rain_inspection", date(2026, 12, 8)), "X")
    assert event_uid(item("weekly_inspection", day), "X") == event_uid(
        item("weekly_inspection", date(2026, 12, 8)), "X"
    )
    # Two letters of credit (or two inspections' repairs) due the same day differ by their key;
    # a deadline without a key keeps the UID it had before keys existed.
    loc = item("guarantee_expiry", day)
    assert event_uid(replace(loc, key="guarantee:1"), "X") != event_uid(replace(loc, key="guarantee:2"), "X")
    assert event_uid(replace(loc, key="guarantee:1"), "X") == event_uid(replace(loc, key="guarantee:1"), "X")
    assert event_uid(loc, "X") == "{}@esc-gis".format(
        hashlib.sha256(b"X|N-1|guarantee_expiry|2026-12-01").hexdigest()[:32]
    )
    assert event_uid(replace(item("weekly_inspection", day), key="k"), "X") == event_uid(
        item("weekly_inspection", day), "X"
    )
    assert event_uid(item("permit_expires", day), "X") == event_uid(item("permit_expires", date(2027, 3, 1)), "X")
    assert event_uid(item("decision_due", day), "X") == event_uid(item("deemed_approved", day), "X")
    assert event_uid(item("permit_expires", day), "X") != event_uid(item("permit_expires", day, "N-2"), "X")
    assert event_uid(item("permit_expires", day), "X") != event_uid(item("permit_expires", day), "Y")
    stamp = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    cal = deadline_calendar([item("weekly_inspection", day)], profile=EXAMPLE, on=day, stamp=stamp)
    assert str(cal["X-WR-CALNAME"]) == "Town of Example: permit deadlines"
    (ev,) = cal.walk("VEVENT")
    assert str(ev["SUMMARY"]) == "N-1: weekly inspection (§ 23-8E(6))" and ev["DTSTAMP"].dt == stamp
    assert deadline_calendar([], profile=EXAMPLE, on=day).walk("VEVENT") == []
    with pytest.raises(ValueError, match="same identity"):
        deadline_calendar([item("permit_expires", day), item("permit_expires", day)], profile=EXAMPLE, on=day)


# --- Every kind of deadline, and the ones a day may hold twice ---------------------------------


def test_the_feed_carries_every_kind_of_deadline(target: str, layer_set, layers_path: Path, tmp_path: Path) -> None:
    """Decisions, deemed approval, notice of start, the next weekly inspection (ahead of its day), rain
    inspections, 24-hour repairs, stabilisation, stockpiles, expiry and two letters of credit expiring
    on one day, each parsed back once with a UID that a re-export keeps."""
    from esc_gis.registry import Application, init_registry, open_registry
    from esc_gis.registry.domain.calendar import OfficeCalendar
    from esc_gis.registry.domain.inspections import InspectionReport

    utc = timezone.utc
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        review = reg.add(Application("1 Review St", date(2026, 11, 16), square_sqft(100, 100, 5000.0), CRS))
        late = reg.add(Application("2 Late St", date(2026, 10, 1), square_sqft(400, 100, 5000.0), CRS))
        # Each complete with its fee, the day it was received: decision due, and deemed approved.
        for number, day in ((review, date(2026, 11, 16)), (late, date(2026, 10, 1))):
            pay_application_fee(reg, number, 10.0, paid_on=day, receipt=f"R-{number}", who=None)
        n = add_active(
            reg, x=700, address="3 Work St", started=datetime(2026, 11, 27, 8, 0, tzinfo=utc)
        )  # no notice of start yet
        reg.update(n, stockpile_since=date(2026, 11, 27), work_stopped_on=date(2026, 11, 28))
        reg.inspect(
            n,
            InspectionReport(
                datetime(2026, 11, 29, 15, 0, tzinfo=utc),
                "Pat",
                "fence down",
                work_done="none",
                phase="grading",
                deficiencies=("silt fence down",),
                location=reg.get(n).site.centroid,
            ),
        )
        for _ in range(2):  # two letters of credit, one day: one event each
            reg.add_guarantee(
                n, type="letter_of_credit", amount=500.0, received_on=date(2026, 11, 3), expires_on=date(2027, 2, 1)
            )
    rain = tmp_path / "rain.csv"
    rain.write_text("date,precip_in\n2026-11-29,0.7\n")
    out = tmp_path / "d.ics"
    opts = ["--on", "2026-11-30", "--rain", str(rain), "--layers", str(layers_path)]
    r = _run("calendar", target, "-o", str(out), *opts)
    assert r.exit_code == 0, r.output
    _, events = _feed(out)
    got = {(str(e["CATEGORIES"].cats[0]), e["DTSTART"].dt) for e in events}
    assert {
        ("decision_due", date(2026, 12, 16)),  # 20 business days from 2026-11-16, Thanksgiving and the day after off
        ("deemed_approved", date(2026, 10, 29)),
        ("start_notice", datetime(2026, 11, 29, 8, 0, tzinfo=utc)),
        ("weekly_inspection", date(2026, 12, 6)),  # a week after the inspection of the 29th: ahead of its day
        ("rain_inspection", date(2026, 11, 30)),
        ("repair_due", datetime(2026, 11, 30, 15, 0, tzinfo=utc)),  # 24 hours after the inspection
        ("temporary_stabilization_unknown_resume", date(2026, 11, 28)),
        ("stockpile", date(2026, 12, 4)),
        ("permit_expires", date(2027, 5, 2)),
    } <= got
    locs = [e for e in events if str(e["CATEGORIES"].cats[0]) == "guarantee_expiry"]
    assert [e["DTSTART"].dt for e in locs] == [date(2027, 2, 1)] * 2
    assert sorted("#1" in str(e["SUMMARY"]) + str(e["DESCRIPTION"]) for e in locs) == [False, True]
    uids = [str(e["UID"]) for e in events]
    assert (
        len(set(uids)) == len(uids) == len(json.loads(_run("due", target, "--json", "--within", "365", *opts).output))
    )
    weekly = next(str(e["UID"]) for e in events if str(e["CATEGORIES"].cats[0]) == "weekly_inspection")
    after_rain = next(str(e["UID"]) for e in events if str(e["CATEGORIES"].cats[0]) == "rain_inspection")
    # Re-exported after the next inspection: the same UIDs, the weekly event moved (not a second
    # one), the rain inspection done (the day after the rain) and gone.
    # A full written report (§ 540-8E(6): "date, time and location ... name ... assessment ...
    # description of ... maintenance performed; and a description of the present phase"): a bare
    # `update --inspected` holds none of it and no longer meets the weekly duty.
    full = ["--by", "holder", "--at", "2026-11-30T09:00Z", "--inspector", "Pat", "--assessment", "fixed"]
    full += ["--work-done", "fence reset", "--phase", "grading", "--location", "north fence"]
    r = _run("inspect", target, n, *full, "--layers", str(layers_path))
    assert r.exit_code == 0, r.output
    assert _run("calendar", target, "-o", str(out), "--overwrite", *opts).exit_code == 0
    _, again = _feed(out)
    moved = {str(e["UID"]): e["DTSTART"].dt for e in again}
    assert moved[weekly] == date(2026, 12, 7) and set(moved) == set(uids) - {after_rain}


def test_repairs_of_two_inspections_due_at_one_time_are_two_events(target: str, layer_set) -> None:
    """Found at 10:00 and notified at 12:00, and found at 10:00 by another inspector: both due 10:00 the next day.

    § 540-8E(6) "within 24 hours of an inspection or notification": the later notice does not move the first.
    """
    from esc_gis.registry import init_registry, open_registry
    from esc_gis.registry.domain.inspections import InspectionReport
    from esc_gis.registry.views.agenda import agenda

    utc = timezone.utc
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set) as reg:
        n = add_active(reg, x=700, address="3 Work St", started=datetime(2026, 11, 9, 8, 0, tzinfo=utc))
        at = datetime(2026, 11, 27, 10, 0, tzinfo=utc)
        noon = datetime(2026, 11, 27, 12, 0, tzinfo=utc)
        reg.inspect(n, InspectionReport(at, "Pat", "a", deficiencies=("fence",), notified_at=noon))
        reg.inspect(n, InspectionReport(at, "Lee", "b", deficiencies=("inlet",)))
        items = agenda(reg.permits(), on=date(2026, 11, 27), calendar=reg.calendar, profile=reg.profile)
    repairs = [i for i in items if i.code == "repair_due"]
    assert [i.due for i in repairs] == [at.replace(day=28)] * 2
    cal = deadline_calendar(repairs, profile=load_profile(), on=date(2026, 11, 27))
    assert len({str(e["UID"]) for e in cal.walk("VEVENT")}) == 2
