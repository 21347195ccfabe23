"""Inspection reports, deficiencies and 24-hour repairs (§ 540-8E(6)), on both back ends.

Every registry test here runs on a real GeoPackage file and on a real PostGIS server (the
``target`` fixture). Times are given in UTC so the answers do not depend on the machine's zone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import struct
import zlib
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import geopandas as gpd
import pytest
import shapely
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import RegistryError, ValidationError
from esc_gis.profile import load_profile
from esc_gis.registry import init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.deadlines import repair_due
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.store.schema import SCHEMA_VERSION
from esc_gis.registry.views.agenda import agenda
from esc_gis.registry.views.summary import inspection_deadlines

from .conftest import K, add_active, written_by_an_earlier_esc_gis
from .public_outputs import assert_hidden, public_outputs, run_permits

UTC = timezone.utc
STARTED = datetime(2026, 11, 9, 8, 0, tzinfo=UTC)
AT = datetime(2026, 11, 16, 15, 30, tzinfo=UTC)  # a Monday afternoon, in the past
CAL = OfficeCalendar(holidays=frozenset())


def tiny_png(rgb: tuple[int, int, int] = (200, 120, 40)) -> bytes:
    """A 2 x 2 PNG built from its chunks (no image library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + bytes(rgb) * 2 for _ in range(2))
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def report(tmp_path: Path | None = None, **kw) -> InspectionReport:
    kw.setdefault("inspected_at", AT)
    kw.setdefault("inspector", "Ina Inspector")
    kw.setdefault("assessment", "silt fence sagging on the north side")
    return InspectionReport(**kw)


def centre(reg, number: str) -> shapely.Point:
    return reg.get(number).site.centroid


def complete(reg, number: str, **kw) -> InspectionReport:
    """A report holding everything § 540-8E(6) says weekly reports "shall include"."""
    kw.setdefault("work_done", "re-staked the silt fence")
    kw.setdefault("phase", "rough grading")
    kw.setdefault("location", centre(reg, number))
    return report(**kw)


# --- Recording -----------------------------------------------------------------------


def test_an_inspection_with_two_deficiencies_and_a_photo_round_trips(reg, active, tmp_path: Path) -> None:
    png = tiny_png()
    photo = tmp_path / "north-fence.png"
    photo.write_bytes(png)
    where = centre(reg, active)
    r = reg.inspect(
        active,
        report(
            work_done="re-staked 40 ft of fence",
            phase="rough grading",
            deficiencies=["silt fence down at the north", "inlet protection clogged"],
            photos=[photo],
            location=where,
        ),
        who="ina",
    )
    assert (r.inspected_at, r.inspector, r.work_done, r.phase) == (
        AT,
        "Ina Inspector",
        "re-staked 40 ft of fence",
        "rough grading",
    )
    assert r.location.equals_exact(where, 1e-6)
    assert [d.description for d in r.deficiencies] == ["silt fence down at the north", "inlet protection clogged"]
    assert all(d.repaired_at is None and d.inspected_at == AT for d in r.deficiencies)
    (ph,) = r.photos
    assert (ph.filename, ph.content_type, ph.size_bytes) == ("north-fence.png", "image/png", len(png))
    assert ph.sha256 == hashlib.sha256(png).hexdigest() and ph.data is None  # listing: no bytes
    stored = reg.photo(ph.id)
    assert stored.data == png and hashlib.sha256(stored.data).hexdigest() == ph.sha256
    p = reg.get(active)
    assert [(e.kind, e.who, e.on_date) for e in p.events][-1] == ("inspection", "ina", AT.astimezone().date())
    assert "2 deficiency(ies), 1 photo(s)" in p.events[-1].detail
    # The weekly-inspection clock counts the report like an --inspected day.
    assert AT.astimezone().date() in p.inspections


def test_the_report_tables_are_append_only(reg, active) -> None:
    d = reg.inspect(active, report(deficiencies=["fence down"])).deficiencies[0]
    reg.repaired(active, [d.id], on=AT + timedelta(hours=2))
    for sql in (
        "UPDATE inspections SET inspector = 'x'",
        "DELETE FROM deficiencies",
        "UPDATE repairs SET detail = 'x'",
    ):
        with pytest.raises(RegistryError, match="append-only"), reg.backend.write() as cur:
            cur.execute(sql)
    assert reg.get(active).open_repairs == []


def test_weekly_inspection_counts_reports_and_update_inspected_days(reg, active) -> None:
    W = reg.profile
    on = date(2026, 11, 17)
    weekly = [
        i
        for i in agenda([reg.get(active)], on=on, calendar=CAL, profile=W, within_days=0)
        if i.code == "weekly_inspection"
    ]
    assert weekly and weekly[0].due == date(2026, 11, 16)  # started 11-09, none since
    reg.inspect(active, complete(reg, active))
    weekly = [
        i
        for i in agenda([reg.get(active)], on=on, calendar=CAL, profile=W, within_days=0)
        if i.code == "weekly_inspection"
    ]
    assert weekly == []
    # A day alone records that the holder inspected, not the report: the week is not met by it.
    reg.update(active, inspected_on=date(2026, 11, 18))
    got = agenda([reg.get(active)], on=date(2026, 11, 25), calendar=CAL, profile=W, within_days=0)
    assert [i.due for i in got if i.code == "weekly_inspection"] == [date(2026, 11, 23)]


# --- Repairs ---------------------------------------------------------------------------


def test_repair_is_due_exactly_24_hours_after_the_inspection_or_the_notification() -> None:
    W = load_profile()
    d = repair_due(AT, W, ids=[3, 4])
    assert d.due == AT + timedelta(hours=24) and d.code == "repair_due" and d.section == "§ 540-8E(6)"
    assert "#3, #4" in d.what and "inspection" in d.what
    # § 540-8E(6) "within 24 hours of an inspection or notification": whichever came first. A notice
    # after the inspection that found it does not put the repair off; one before it starts the clock.
    told = AT + timedelta(hours=5)
    n = repair_due(AT, W, ids=[3], notified_at=told)
    assert n.due == AT + timedelta(hours=24) and "notification" not in n.what and "inspection" in n.what
    first = repair_due(AT, W, ids=[3], notified_at=AT - timedelta(hours=1))
    assert first.due == AT + timedelta(hours=23) and "notification" in first.what


def test_an_overdue_repair_is_listed_and_not_before_and_goes_when_repaired(reg, active) -> None:
    r = reg.inspect(active, report(deficiencies=["fence down", "inlet clogged"]))
    ids = [d.id for d in r.deficiencies]

    def repairs(on: date, within: int = 0) -> list:
        items = agenda([reg.get(active)], on=on, calendar=CAL, profile=reg.profile, within_days=within)
        return [i for i in items if i.code == "repair_due"]

    assert repairs(date(2026, 11, 16)) == []  # due tomorrow 15:30: not yet
    (item,) = repairs(date(2026, 11, 16), within=1)  # one item for the inspection's two deficiencies
    assert item.due == AT + timedelta(hours=24) and not item.overdue
    assert all(f"#{i}" in item.what for i in ids)
    assert "fence down" not in item.what  # the agenda (and the .ics feed) carry no inspector's text
    (late,) = repairs(date(2026, 11, 18))
    assert late.overdue
    reg.repaired(active, ids[:1], on=AT + timedelta(hours=30), who="contractor", detail="fence re-set")
    (late,) = repairs(date(2026, 11, 18))
    assert f"#{ids[1]}" in late.what and f"#{ids[0]}" not in late.what
    # A later inspection closes the other one.
    reg.inspect(active, report(inspected_at=AT + timedelta(days=2), repaired=[ids[1]]))
    assert repairs(date(2026, 11, 18)) == []
    p = reg.get(active)
    assert p.open_repairs == [] and [e.kind for e in p.events][-2:] == ["repair", "inspection"]


def test_permits_due_and_the_calendar_feed_list_the_repair(reg, active, target: str, layers_path, tmp_path) -> None:
    r = reg.inspect(active, report(deficiencies=["fence down"], notified_at=AT + timedelta(hours=2)))
    runner = CliRunner()
    out = runner.invoke(
        cli, ["permits", "due", target, "--on", "2026-11-19", "--within", "0", "--layers", str(layers_path)]
    )
    assert out.exit_code == 0, out.output
    line = next(x for x in out.output.splitlines() if "repair" in x)
    # 15:30 UTC on the 17th, on the Village clock: 24 hours from the inspection, which came before the
    # notification (§ 540-8E(6) "within 24 hours of an inspection or notification").
    assert line.startswith("OVERDUE 2026-11-17 09:30 CST") and f"#{r.deficiencies[0].id}" in line
    ics = tmp_path / "d.ics"
    out = runner.invoke(
        cli, ["permits", "calendar", target, "-o", str(ics), "--on", "2026-11-16", "--layers", str(layers_path)]
    )
    assert out.exit_code == 0, out.output
    text = ics.read_text()
    assert "of the inspection" in text.replace("\r\n ", "") and "fence down" not in text


# --- Refusals --------------------------------------------------------------------------


def test_bad_input_is_refused_with_every_problem_and_nothing_written(reg, active, tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as exc:
        reg.inspect(
            "ESC-2026-9999",
            report(
                inspected_at=datetime.now(UTC) + timedelta(days=2),
                inspector=" ",
                photos=[tmp_path / "missing.jpg"],
            ),
        )
    text = str(exc.value)
    later = "is after today on the Village's clock"
    for part in ("no such permit", later, "inspector is empty", "missing.jpg' does not exist"):
        assert part in text
    not_image = tmp_path / "notes.txt"
    not_image.write_text("not a photo")
    with pytest.raises(ValidationError) as exc:
        reg.inspect(
            active,
            report(
                inspected_at=STARTED - timedelta(hours=1),
                photos=[not_image],
                location=shapely.Point(100 / K * 0 + 1e6, 1e6),
                repaired=[42],
            ),
        )
    text = str(exc.value)
    for part in ("before the work started", "not an image", "not on the site", "#42 is not one of this permit's"):
        assert part in text
    with reg.backend.read() as cur:
        for table in ("inspections", "deficiencies", "inspection_photos", "repairs"):
            cur.execute(f"SELECT count(*) FROM {table}")
            assert cur.fetchone()[0] == 0, table
    assert [e.kind for e in reg.get(active).events] == ["received"]


def test_a_repair_cannot_be_recorded_twice_or_for_another_permit(reg, active) -> None:
    d = reg.inspect(active, report(deficiencies=["fence down"])).deficiencies[0]
    reg.repaired(active, [d.id], on=AT + timedelta(hours=3))
    with pytest.raises(ValidationError, match="already repaired"):
        reg.repaired(active, [d.id], on=AT + timedelta(hours=4))
    with pytest.raises(ValidationError, match="found after this time"):
        d2 = reg.inspect(active, report(inspected_at=AT + timedelta(days=1), deficiencies=["x"])).deficiencies[0]
        reg.repaired(active, [d2.id], on=AT)


def test_a_photo_whose_bytes_changed_is_refused(tmp_path: Path, layer_set) -> None:
    target = tmp_path / "permits.gpkg"
    init_registry(target, layers=layer_set)
    photo = tmp_path / "p.png"
    photo.write_bytes(tiny_png())
    with open_registry(target, layers=layer_set) as reg:
        n = add_active(reg, address="1 A St", started=STARTED)
        pid = reg.inspect(n, report(photos=[photo])).photos[0].id
    con = sqlite3.connect(target)  # tampering behind the registry's back (the triggers stop UPDATE)
    con.execute("DROP TRIGGER inspection_photos_no_update")
    con.execute("UPDATE inspection_photos SET data = ? WHERE id = ?", (tiny_png((1, 2, 3)), pid))
    con.commit()
    con.close()
    with open_registry(target, layers=layer_set) as reg, pytest.raises(RegistryError, match="SHA-256"):
        reg.photo(pid)


# --- Migration -------------------------------------------------------------------------


def test_a_version_2_registry_migrates_and_takes_inspections(target: str, layer_set, monkeypatch, tmp_path) -> None:
    from esc_gis.registry.store import backend, schema

    with monkeypatch.context() as m:  # a registry made by the esc_gis before inspections
        m.setattr(backend, "MIGRATIONS", schema.MIGRATIONS[:2])
        m.setattr(backend, "SCHEMA_VERSION", 2)
        assert init_registry(target, layers=layer_set) == [1, 2]

    def write(r):
        n = add_active(r, address="1 A St", started=STARTED)
        r.update(n, inspected_on=date(2026, 11, 11))
        return n

    n = written_by_an_earlier_esc_gis(target, layer_set, write, tmp_path)
    with pytest.raises(RegistryError, match=r"schema version 2.*permits init"):
        open_registry(target, layers=layer_set)
    assert init_registry(target, layers=layer_set) == list(range(3, SCHEMA_VERSION + 1))
    with open_registry(target, layers=layer_set) as r:
        r.inspect(n, report(deficiencies=["fence down"]))
        p = r.get(n)
        assert len(p.reports) == 1 and len(p.open_repairs) == 1
        assert sorted(p.inspections) == [date(2026, 11, 11), AT.astimezone().date()]


def test_a_geopackage_lists_inspections_as_a_point_layer(tmp_path: Path, layer_set) -> None:
    target = tmp_path / "permits.gpkg"
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set) as reg:
        n = add_active(reg, address="1 A St", started=STARTED)
        reg.inspect(n, report(location=reg.get(n).site.centroid))
    layer = gpd.read_file(target, layer="inspections")
    assert len(layer) == 1 and layer.geometry.iloc[0].geom_type == "Point" and layer.crs == reg.crs


# --- Command line and privacy ----------------------------------------------------------

#: Inspectors' notes planted in a report: none may reach a public output.
NOTES = ("Assessment-Planted-7731", "WorkDone-Planted-7732", "Phase-Planted-7733", "Deficiency-Planted-7734")


_run = run_permits


def test_cli_inspect_and_repaired_on_both_back_ends(reg, active, target: str, layers_path, tmp_path: Path) -> None:
    lay = ["--layers", str(layers_path)]
    photo = tmp_path / "fence.png"
    photo.write_bytes(tiny_png())
    x, y = centre(reg, active).coords[0]
    r = _run(
        "inspect", target, active, "--by", "holder", "--at", "2026-11-16T15:30Z", "--inspector", "Ina Inspector",
        "--assessment", "fence sagging", "--work-done", "re-staked", "--phase", "grading",
        "--deficiency", "fence down", "--deficiency", "inlet clogged", "--photo", str(photo),
        "--point", str(x), str(y), "--who", "ina", *lay,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "2 deficiency(ies)" in r.output and "1 photo(s)" in r.output
    ids = [d.id for d in reg.get(active).deficiencies]
    r = _run("show", target, active, *lay)
    assert r.exit_code == 0 and "inspections (private)" in r.output and "fence down" in r.output
    assert hashlib.sha256(tiny_png()).hexdigest() in r.output
    r = _run("repaired", target, active, "--deficiency", str(ids[0]), "--on", "2026-11-17T09:00Z", "--who", "c", *lay)
    assert r.exit_code == 0 and "1 repair(s) still open" in r.output, r.output
    r = _run("show", target, active, "--json", *lay)
    data = json.loads(r.output)
    (report_,) = data["inspections"]
    assert report_["location"] == pytest.approx([x, y]) and report_["photos"][0]["filename"] == "fence.png"
    assert [d["repaired_at"] is not None for d in report_["deficiencies"]] == [True, False]
    # Bad input: one message with every problem, exit 1, nothing written.
    r = _run(
        "inspect", target, "ESC-2026-0999", "--by", "holder", "--at", "2026-11-16T15:30Z", "--inspector", "I",
        "--assessment", "a", "--photo", str(tmp_path / "nope.jpg"), *lay,
    )  # fmt: skip
    assert r.exit_code == 1 and "no such permit" in r.output and "nope.jpg" in r.output
    r = _run(
        "inspect", target, active, "--by", "holder", "--at", "2026-11-16", "--inspector", "I", "--assessment", "a", *lay
    )
    assert r.exit_code != 0 and "no time of day" in r.output
    assert len(reg.get(active).reports) == 1


def test_public_outputs_never_show_inspectors_notes_or_photos(reg, active, target: str, layers_path, tmp_path) -> None:
    lay = ["--layers", str(layers_path)]
    png = tiny_png((17, 34, 51))
    photo = tmp_path / "Photo-Planted-7735.png"
    photo.write_bytes(png)
    reg.inspect(
        active,
        report(
            inspector="Inspector-Planted-7730",
            assessment=NOTES[0],
            work_done=NOTES[1],
            phase=NOTES[2],
            deficiencies=[NOTES[3]],
            photos=[photo],
        ),
    )
    planted = (*NOTES, "Inspector-Planted-7730", "Photo-Planted-7735", hashlib.sha256(png).hexdigest())
    # Nor the photo's bytes.
    assert_hidden(public_outputs(target, lay, tmp_path, ics_on="2026-11-16"), active, (*planted, png[16:]))
    # The same notes are in the registry (the test plants what it greps for).
    assert NOTES[0] in {r.assessment for r in reg.get(active).reports}


def test_show_gives_inspection_times_on_the_village_clock_and_deadlines_in_date_order(
    reg, active, target: str, layers_path
) -> None:
    """The clerk types Village time (the profile's timezone, America/Chicago); show answers in it."""
    lay = ["--layers", str(layers_path)]
    args = ["--inspector", "Ina", "--assessment", "fence sagging", "--deficiency", "fence down", *lay]
    assert _run("inspect", target, active, "--by", "holder", "--at", "2026-11-16T09:30", *args).exit_code == 0
    (rep,) = reg.get(active).reports
    assert rep.inspected_at == datetime(2026, 11, 16, 15, 30, tzinfo=UTC)  # stored in UTC (CST is UTC-6)
    r = _run("show", target, active, *lay)
    assert r.exit_code == 0, r.output
    assert f"#{rep.id} 2026-11-16 09:30 CST Ina" in r.output and "15:30Z" not in r.output
    assert "started_at" in r.output and "2026-11-09 02:00 CST" in r.output  # 08:00 UTC, as the clerk's clock reads
    lines = [line.strip() for line in r.output.split("\ndeadlines:\n")[1].strip().splitlines()]
    days = [line.split()[0] for line in lines]
    # The permit's expiry (2027) is computed first, the 24-hour repair (2026-11-17 09:30 CST) among the
    # last: listed by date all the same, the repair at the time it falls due on the Village's clock.
    assert days == sorted(days) and len(days) >= 3 and days[-1] == "2027-05-02", lines
    assert any(line.startswith("2026-11-17 09:30 CST  repair") for line in lines), r.output
    shown = json.loads(_run("show", target, active, "--json", *lay).output)
    assert [d["due"][:10] for d in shown["deadlines"]] == days


def test_the_archive_quotes_formula_text_and_its_checksums_still_verify(
    reg, active, target: str, layers_path, tmp_path: Path
) -> None:
    """Free text that a spreadsheet runs as a formula starts with ' in the archive, as in the log."""
    import csv
    import io
    import subprocess
    import zipfile

    from esc_gis.registry.views.private_export import read_photos

    photo = tmp_path / "=cmd.png"
    photo.write_bytes(tiny_png())
    rep = reg.inspect(
        active,
        report(
            inspector='=HYPERLINK("http://x","y")',
            assessment="-2+3 controls",
            work_done="@SUM(A1)",
            phase="grading",
            deficiencies=["+1 fence down"],
            photos=[photo],
            location=centre(reg, active),
        ),
        who="=clerk",
    )
    reg.repaired(active, [rep.deficiencies[0].id], on=AT + timedelta(hours=2), who="c", detail="=re-set")
    out = tmp_path / "a.zip"
    assert _run("export-inspections", target, "-o", str(out), "--layers", str(layers_path)).exit_code == 0
    with zipfile.ZipFile(out) as z:
        insp, defs, photos = (list(csv.DictReader(io.StringIO(z.read(n).decode()))) for n in ARCHIVE_CSVS)
        z.extractall(tmp_path / "x")
    assert (insp[0]["inspector"], insp[0]["assessment"], insp[0]["work_done"], insp[0]["recorded_by"]) == (
        '\'=HYPERLINK("http://x","y")',
        "'-2+3 controls",
        "'@SUM(A1)",
        "'=clerk",
    )
    assert insp[0]["phase"] == "grading" and float(insp[0]["location_x"]) == centre(reg, active).x
    assert (defs[0]["description"], defs[0]["repair_detail"]) == ("'+1 fence down", "'=re-set")
    assert photos[0]["filename"] == "'=cmd.png" and photos[0]["file"] == f"photos/{photos[0]['id']}-_cmd.png"
    # The checksums still verify, with sha256sum itself and on reading back.
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path / "x", capture_output=True, text=True)
    assert check.returncode == 0 and ": OK" in check.stdout, check.stdout + check.stderr
    assert read_photos(out) == {int(photos[0]["id"]): tiny_png()}


ARCHIVE_CSVS = ("inspections.csv", "deficiencies.csv", "photos.csv")


# --- Who inspected, a complete report, the site checklist, pre-start (§ 540-8E, § 540-7B(5)(a)) ----


def _codes(reg, number: str, on: date, **kw) -> dict[str, list]:
    """The agenda's items for one permit on ``on`` (overdue, or due that day), by code."""
    out: dict[str, list] = {}
    for i in agenda(
        [reg.get(number)], on=on, calendar=CAL, profile=kw.pop("profile", reg.profile), within_days=0, **kw
    ):
        out.setdefault(i.code, []).append(i)
    return out


def test_only_the_holders_inspection_meets_the_weekly_duty(reg, active) -> None:
    # § 540-8E(6): permit holders shall "Conduct construction site inspections at least once per
    # week"; § 540-8E(7): "Allow the administering authority to enter the site for the purpose of
    # inspecting compliance": the office's inspection is its power, not the holder's duty.
    on = date(2026, 11, 17)
    reg.inspect(active, complete(reg, active, by="office"))
    p = reg.get(active)
    assert p.reports[0].by == "office" and [f.by for f in p.state.inspections] == ["office"]
    assert [i.due for i in _codes(reg, active, on)["weekly_inspection"]] == [date(2026, 11, 16)]  # still overdue
    # The office's summary counts the week as missed too.
    week = inspection_deadlines(p, date(2026, 11, 9), date(2026, 11, 16), rain=[], profile=reg.profile)
    assert week == [("weekly_inspection", date(2026, 11, 16), False)]
    reg.inspect(active, complete(reg, active, inspected_at=AT + timedelta(minutes=30)))  # the holder's, by default
    assert "weekly_inspection" not in _codes(reg, active, on)
    assert [f.by for f in reg.get(active).state.inspections] == ["office", "holder"]


def test_only_the_holders_inspection_meets_the_duty_after_rain(reg, active) -> None:
    # § 540-8E(6): "within 24 hours after a precipitation event of 0.5 inch or greater".
    rain = [(datetime(2026, 11, 16, 6, 0), 0.6)]  # ends 06:00 CST (12:00 UTC) on the 16th
    reg.inspect(active, complete(reg, active, by="office"))  # 15:30 UTC: 3.5 hours after it ended
    got = _codes(reg, active, date(2026, 11, 18), rain=rain)
    assert [i.due for i in got["rain_inspection"]] == [datetime(2026, 11, 17, 12, 0, tzinfo=UTC)]
    reg.inspect(active, complete(reg, active, inspected_at=AT + timedelta(minutes=5)))
    assert "rain_inspection" not in _codes(reg, active, date(2026, 11, 18), rain=rain)


def test_who_inspected_is_holder_or_office_and_the_checklist_is_the_offices(reg, active) -> None:
    with pytest.raises(ValidationError) as exc:
        reg.inspect(active, complete(reg, active, by="contractor"))
    assert "give one of holder, office (by=)" in str(exc.value)
    with pytest.raises(ValidationError) as exc:
        reg.inspect(active, complete(reg, active, certificate_posted=True))  # by the holder
    assert "the office's finding" in str(exc.value)
    assert reg.get(active).reports == []


@pytest.mark.parametrize("lacks", ["location", "work_done", "phase"])
def test_a_report_without_an_item_the_law_lists_is_recorded_but_does_not_count(reg, active, lacks: str) -> None:
    # § 540-8E(6): "Weekly inspection reports shall include all of the following: date, time and
    # location of the construction site inspection; ... a description of any erosion and sediment
    # control BMP implementation and maintenance performed; and a description of the present phase
    # of land disturbing construction activity at the construction site."
    words = {
        "location": "the location of the construction site inspection",
        "work_done": "a description of any erosion and sediment control BMP implementation and maintenance performed",
        "phase": "a description of the present phase of land disturbing construction activity at the construction site",
    }
    r = reg.inspect(active, complete(reg, active, **{lacks: None}))
    assert r.id in reg.get(active).state.inspection_ids  # recorded
    got = _codes(reg, active, date(2026, 11, 17))
    assert [i.due for i in got["weekly_inspection"]] == [date(2026, 11, 16)]  # not met
    [item] = got["report_incomplete"]
    assert f"inspection report #{r.id} of 2026-11-16 09:30 CST" in item.what
    assert item.what.endswith(f"it lacks {words[lacks]}") and item.section == "§ 540-8E(6)"
    # The location is a reading (where on the site); the phase and the BMP work are the text's.
    assert item.basis == ("interpretation" if lacks == "location" else "ordinance")
    # A complete report later: the weekly duty is met and the incomplete one is no longer listed.
    reg.inspect(active, complete(reg, active, inspected_at=AT + timedelta(hours=1)))
    got = _codes(reg, active, date(2026, 11, 17))
    assert "weekly_inspection" not in got and "report_incomplete" not in got


def test_a_complete_report_is_not_listed_and_a_day_alone_is_listed_as_without_its_report(reg, active) -> None:
    # § 540-8E(6): "Weekly inspection reports shall include all of the following: date, time and
    # location of the construction site inspection; ...". A day alone (`update --inspected`) holds
    # none of it: read as an inspection whose report is not recorded, it does not meet the duty.
    reg.inspect(active, complete(reg, active))
    reg.update(active, inspected_on=date(2026, 11, 20))
    got = _codes(reg, active, date(2026, 11, 21))
    assert "report_incomplete" not in got and "weekly_inspection" not in got  # the report of 11-16 meets the week
    [item] = got["report_day_alone"]
    assert item.due == date(2026, 11, 20) and item.section == "§ 540-8E(6)" and item.basis == "interpretation"
    assert "the inspection of 2026-11-20 is recorded by its day alone and does not meet" in item.what
    assert [(f.by, f.contents) for f in reg.get(active).state.inspections] == [
        ("holder", ("location", "work_done", "phase")),
        ("holder", None),
    ]
    # The week after the complete report (11-23) is not met by the day alone: overdue on 11-24.
    got = _codes(reg, active, date(2026, 11, 24))
    assert [i.due for i in got["weekly_inspection"]] == [date(2026, 11, 23)]
    # A complete report of the same day: the day alone is no longer listed and the week is met.
    reg.inspect(active, complete(reg, active, inspected_at=datetime(2026, 11, 20, 16, 0, tzinfo=UTC)))
    got = _codes(reg, active, date(2026, 11, 24))
    assert "report_day_alone" not in got and "weekly_inspection" not in got


def test_a_day_alone_alone_never_meets_the_weekly_duty(reg, active) -> None:
    # § 540-8E(6): "Conduct construction site inspections at least once per week" and "Maintain
    # ... weekly written reports of all inspections. Weekly inspection reports shall include all of
    # the following". Days alone, however many, leave the week due from the start (11-09 + 7).
    for day in (10, 12, 14, 16):
        reg.update(active, inspected_on=date(2026, 11, day))
    got = _codes(reg, active, date(2026, 11, 17))
    assert [i.due for i in got["weekly_inspection"]] == [date(2026, 11, 16)]
    assert [i.due for i in got["report_day_alone"]] == [date(2026, 11, d) for d in (10, 12, 14, 16)]


@pytest.mark.parametrize("words", ["north silt fence along Main St", "  at the inlet  "])
def test_a_complete_report_giving_the_location_in_words_counts(reg, active, words: str) -> None:
    # § 540-8E(6): "Weekly inspection reports shall include all of the following: date, time and
    # location of the construction site inspection". The location in words gives it: no map point needed.
    r = reg.inspect(active, complete(reg, active, location=None, location_words=words))
    assert reg.get(active).state.inspections[0].contents == ("location", "work_done", "phase")
    got = _codes(reg, active, date(2026, 11, 17))
    assert "weekly_inspection" not in got and "report_incomplete" not in got
    # The words are kept with the report's event (its history), as given.
    data = [e.data for e in reg.history(active) if e.kind == "inspected"]
    assert [d.get("location_words") for d in data] == [words.strip()] and r.id == data[0]["inspection_id"]


def test_blank_location_words_do_not_give_the_location(reg, active) -> None:
    # "location of the construction site inspection": blank words say nowhere.
    reg.inspect(active, complete(reg, active, location=None, location_words="   "))
    got = _codes(reg, active, date(2026, 11, 17))
    [item] = got["report_incomplete"]
    assert item.what.endswith("it lacks the location of the construction site inspection")


def test_repairs_of_damage_to_adjoining_surfaces_are_documented_in_the_report(reg, active) -> None:
    # § 540-8E(5): "Repair any siltation or erosion damage to adjoining surfaces and drainageways
    # resulting from land-disturbing construction activities and document repairs in weekly
    # inspection reports."
    r = reg.inspect(active, complete(reg, active, adjoining_repairs="swept sediment off Main St"))
    p = reg.get(active)
    assert (
        p.reports[0].adjoining_repairs == "swept sediment off Main St"
        and r.adjoining_repairs == p.reports[0].adjoining_repairs
    )
    assert p.state.inspections[0].adjoining_repairs is True


def test_the_office_checklist_no_is_listed_until_a_later_yes(reg, active) -> None:
    # § 540-8E(7): "Keep a copy of the erosion and sediment control plan, stormwater management plan,
    # amendments, weekly inspection reports, and permit at the construction site until permit
    # coverage is terminated." § 540-8E(8): "The permit applicant shall post the "Certificate of
    # Permit Coverage" in a conspicuous location at the construction site."
    on = date(2026, 11, 20)
    reg.inspect(active, complete(reg, active, by="office"))  # nothing checked: nothing listed
    got = _codes(reg, active, on)
    assert "site_documents_missing" not in got and "certificate_not_posted" not in got
    r = reg.inspect(
        active,
        complete(reg, active, by="office", inspected_at=AT + timedelta(hours=1), on_site_documents=False,
                 certificate_posted=False),
    )  # fmt: skip
    got = _codes(reg, active, on)
    [docs], [cert] = got["site_documents_missing"], got["certificate_not_posted"]
    assert (docs.section, docs.basis, cert.section, cert.basis) == (
        "§ 540-8E(7)",
        "ordinance",
        "§ 540-8E(8)",
        "ordinance",
    )
    assert f"inspection #{r.id}" in docs.what and "Certificate of Permit Coverage" in cert.what and docs.overdue
    assert reg.get(active).reports[-1].on_site_documents is False
    # The documents found at a later office inspection: that item closes, the other stands.
    reg.inspect(
        active, complete(reg, active, by="office", inspected_at=AT + timedelta(hours=2), on_site_documents=True)
    )
    got = _codes(reg, active, on)
    assert "site_documents_missing" not in got and len(got["certificate_not_posted"]) == 1
    reg.inspect(
        active, complete(reg, active, by="office", inspected_at=AT + timedelta(hours=3), certificate_posted=True)
    )
    assert "certificate_not_posted" not in _codes(reg, active, on)


def _approved(reg) -> str:
    from esc_gis.registry import Application

    from .conftest import CRS, square_sqft

    return reg.add(
        Application("7 Soon St", date(2026, 11, 2), square_sqft(400, 100, 5000.0), CRS, status="approved",
                    issued_on=date(2026, 11, 3)),
        who="clerk",
    )  # fmt: skip


def test_a_pre_start_inspection_is_recorded_but_not_required(reg) -> None:
    # § 540-7B(5)(a): "the erosion and sediment control practices shall be constructed or installed
    # before land-disturbing construction activities begin". The text requires the practices, not
    # an inspection: one is recorded when made, and listed as due only under the office's policy.
    n = _approved(reg)
    with pytest.raises(ValidationError, match="before work starts"):
        reg.inspect(n, report())  # a regular inspection needs work started
    on = date(2026, 11, 20)
    assert "pre_start_inspection" not in _codes(reg, n, on)  # the default: not listed
    listing = dataclasses.replace(
        reg.profile,
        tables={
            **reg.profile.tables,
            "inspections": {**reg.profile.tables["inspections"], "pre_start": {"listed": True}},
        },
    )
    [item] = _codes(reg, n, on, profile=listing)["pre_start_inspection"]
    assert (item.due, item.section, item.basis) == (date(2026, 11, 3), "§ 540-7B(5)(a)", "policy")
    r = reg.inspect(n, report(by="office", pre_start=True, on_site_documents=True, certificate_posted=True))
    assert r.pre_start and reg.get(n).state.inspections[0].pre_start
    assert "pre_start_inspection" not in _codes(reg, n, on, profile=listing)
    # Work starts the next day: the pre-start inspection meets no weekly duty.
    reg.transition(n, "active", on=datetime(2026, 11, 17, 8, 0, tzinfo=UTC), who="clerk")
    assert [i.due for i in _codes(reg, n, date(2026, 11, 24))["weekly_inspection"]] == [date(2026, 11, 24)]
    with pytest.raises(ValidationError, match="not before the work started"):
        reg.inspect(n, report(pre_start=True, inspected_at=datetime(2026, 11, 17, 9, 0, tzinfo=UTC)))


def test_a_schema_7_registrys_inspections_are_read_as_the_holders(tmp_path: Path) -> None:
    """Who inspected was never recorded before migration 9: the documented default is the holder."""
    import shutil

    from esc_gis.registry.domain.fold import UNRECORDED_BY

    from .test_history import DEMO_LAYERS, FIXTURE

    path = tmp_path / "registry.gpkg"
    shutil.copy(FIXTURE / "registry_v7.gpkg", path)
    assert init_registry(path, layers=DEMO_LAYERS) == list(range(8, SCHEMA_VERSION + 1))
    with open_registry(path, layers=DEMO_LAYERS) as r:
        reports = [(p, x) for p in r.permits() for x in p.reports]
        assert reports and all(x.by is None for _, x in reports)  # the column says nothing
        facts = [f for p, _ in reports for f in p.state.inspections]
        assert facts and {f.by for f in facts} == {UNRECORDED_BY} == {"holder"}
        assert r.verify() == []


def test_cli_records_who_inspected_and_the_checklist(reg, active, target: str, layers_path) -> None:
    # § 540-8E(6) (the holder's weekly report, which "shall include all of the following") and
    # § 540-8E(8) ("post the "Certificate of Permit Coverage"") through `permits inspect`.
    lay = ["--layers", str(layers_path)]
    x, y = centre(reg, active).coords[0]
    r = _run(
        "inspect", target, active, "--at", "2026-11-16T15:30Z", "--inspector", "Otto Office",
        "--assessment", "controls in place", "--work-done", "none", "--phase", "grading",
        "--point", str(x), str(y), "--by", "office", "--certificate-posted", "no", *lay,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "Otto Office, office)" in r.output
    r = _run(
        "inspect", target, active, "--at", "2026-11-17T15:30Z", "--inspector", "Hal Holder",
        "--assessment", "fence sagging", "--adjoining-repairs", "swept the street", *lay,
    )  # fmt: skip
    # Who inspected is never assumed: an office visit must not be taken for the holder's duty.
    assert r.exit_code == 2 and "--by" in r.output, r.output
    r = _run(
        "inspect", target, active, "--at", "2026-11-17T15:30Z", "--inspector", "Hal Holder", "--by", "holder",
        "--assessment", "fence sagging", "--adjoining-repairs", "swept the street", *lay,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    show = _run("show", target, active, *lay).output
    assert "certificate posted: no" in show and "adjoining repairs: swept the street" in show
    assert "by office: the office's own inspection" in show
    assert "by holder, INCOMPLETE: lacks the location of the construction site inspection;" in show
    due = json.loads(_run("due", target, "--on", "2026-11-18", "--within", "0", "--json", *lay).output)
    assert {"certificate_not_posted", "report_incomplete", "weekly_inspection"} <= {i["code"] for i in due}
    bad = _run("inspect", target, active, "--at", "2026-11-17T16:00Z", "--inspector", "H", "--assessment", "a",
               "--by", "nobody", *lay)  # fmt: skip
    assert bad.exit_code != 0 and "nobody" in bad.output


def test_verify_reports_a_report_whose_columns_differ_from_its_event(reg, active) -> None:
    from esc_gis.registry.views.verify import _reports

    reg.inspect(active, complete(reg, active, by="office", certificate_posted=False))
    p = reg.get(active)
    assert _reports(active, p, p.state) == []
    p.reports[0] = dataclasses.replace(p.reports[0], by="holder", certificate_posted=True)
    [d] = _reports(active, p, p.state)
    assert d.what == f"inspection report #{p.reports[0].id}" and d.history[0] == "office"


def test_cli_inspect_takes_the_location_in_words(reg, active, target: str, layers_path) -> None:
    # § 540-8E(6): "date, time and location of the construction site inspection": `--location`
    # gives it in words, and the report then meets the weekly inspection (`permits due`).
    lay = ["--layers", str(layers_path)]
    r = _run(
        "inspect", target, active, "--at", "2026-11-16T15:30Z", "--inspector", "Hal Holder", "--by", "holder",
        "--assessment", "controls in place", "--work-done", "none", "--phase", "grading",
        "--location", "south-east corner, by the inlet", *lay,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    due = json.loads(_run("due", target, "--on", "2026-11-17", "--within", "0", "--json", *lay).output)
    codes = {i["code"] for i in due}
    assert "weekly_inspection" not in codes and "report_incomplete" not in codes
    shown = _run("show", target, active, *lay).output
    assert "by holder: meets the weekly and after-rain inspection" in shown
    # The words are the report's location wherever the report is read: `permits show` and the printed report.
    assert "Hal Holder at south-east corner, by the inlet: controls in place" in shown
    from esc_gis.registry.views.reports import permit_report_html

    p = reg.get(active)
    page = permit_report_html(p, p.reports, profile=reg.profile, crs=reg.crs, photos={})
    assert "south-east corner, by the inlet" in page and "not recorded" not in page
