"""Inspection reports (HTML, PDF), the office's inspection log, the office summary and the
private archive of inspections, on both back ends (the ``target`` fixture).

Times are given in UTC; the pages show the office's clock (the profile's America/Chicago,
whatever this machine's zone), so expected texts are written on that clock.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import stat
import zipfile
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from esc_gis.errors import RegistryError, ToolError, ValidationError
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.views.private_export import read_photos
from esc_gis.registry.views.reports import permit_report_html, write_permit_report
from esc_gis.registry.views.summary import inspection_deadlines, office_summary

from .conftest import add_active, pay_application_fee, require_tool
from .public_outputs import assert_hidden, public_outputs, run_permits
from .test_inspections import tiny_png

UTC = timezone.utc
#: The Village's clock (the profile's timezone).
OFFICE = ZoneInfo("America/Chicago")
STARTED = datetime(2026, 11, 9, 8, 0, tzinfo=UTC)  # a Monday
AT = datetime(2026, 11, 16, 15, 30, tzinfo=UTC)
CAL = OfficeCalendar(holidays=frozenset())
INSPECTOR = "Quentin Plantedname"
NOTE = "planted-assessment-7731 fence sagging"


def _active(reg, x: float = 100, address: str = "100 Test St") -> str:
    return add_active(reg, x=x, address=address)


@pytest.fixture
def inspected(reg, tmp_path: Path) -> tuple[str, bytes]:
    """An active permit with one report (two deficiencies, one repaired; a photo; a point)."""
    number = _active(reg)
    png = tiny_png((10, 200, 30))
    (tmp_path / "east fence.png").write_bytes(png)
    reg.inspect(
        number,
        InspectionReport(
            AT,
            INSPECTOR,
            NOTE,
            work_done="tracking pad re-graveled",
            phase="rough grading",
            deficiencies=["silt fence down east", "inlet clogged"],
            photos=[tmp_path / "east fence.png"],
            location=reg.get(number).site.centroid,
        ),
        who="ina",
    )
    first = reg.get(number).deficiencies[0].id
    reg.repaired(number, [first], on=datetime(2026, 11, 17, 9, 0, tzinfo=UTC), detail="fence re-set", who="ina")
    return number, png


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


# --- A site's reports ---------------------------------------------------------------------


def test_the_report_shows_what_a_weekly_report_must_hold_and_embeds_the_photo(
    reg, inspected, target, layers_path, tmp_path: Path
) -> None:
    number, png = inspected
    out = tmp_path / "report.html"
    r = run_permits("report", target, number, "-o", str(out), "--layers", str(layers_path))
    assert r.exit_code == 0, r.output
    page = out.read_text(encoding="utf-8")
    local = AT.astimezone(OFFICE)
    for text in (
        f"{local:%Y-%m-%d}",
        f"{local:%H:%M}",
        INSPECTOR,
        NOTE,
        "tracking pad re-graveled",
        "rough grading",
        "silt fence down east",
        "inlet clogged",
        "fence re-set",
        "closed in time",  # repaired 9:00 next day, due 15:30: within 24 hours
        "OPEN, OVERDUE",  # the second one was never repaired
        # The repair due 24 hours after the inspection (no notification recorded).
        f"{datetime(2026, 11, 17, 15, 30, tzinfo=UTC).astimezone(OFFICE):%Y-%m-%d %H:%M}",
        "EPSG:7594",
        hashlib.sha256(png).hexdigest(),
        "article.report { break-after: page",  # each report on pages of its own when printed
    ):
        assert text in page, text
    assert f"data:image/png;base64,{base64.b64encode(png).decode()}" in page
    assert _mode(out) == 0o600  # inspectors' notes and photos: the owner's alone
    # Refuses to overwrite; a bad extension is exit 1 with the fix, nothing written.
    again = run_permits("report", target, number, "-o", str(out), "--layers", str(layers_path))
    assert again.exit_code == 1 and "--overwrite" in again.output
    bad = run_permits("report", target, number, "-o", str(tmp_path / "r.docx"), "--layers", str(layers_path))
    assert bad.exit_code == 1 and ".html" in bad.output and not (tmp_path / "r.docx").exists()


def test_one_printed_page_per_report_and_the_period_selects_them(reg, inspected, tmp_path: Path) -> None:
    number, _ = inspected
    reg.inspect(number, InspectionReport(datetime(2026, 11, 23, 14, 0, tzinfo=UTC), "Other Person", "all good"))
    p = reg.get(number)
    page = permit_report_html(p, p.reports, profile=reg.profile, crs=reg.crs, photos={})
    assert page.count('<article class="report"') == 2
    assert "No deficiencies found." in page and "No photos." in page
    out = tmp_path / "week.html"
    n = write_permit_report(reg, number, out, start=date(2026, 11, 20), end=date(2026, 11, 23))
    text = out.read_text(encoding="utf-8")
    assert n == 1 and "Other Person" in text and INSPECTOR not in text
    with pytest.raises(ValidationError, match="before it starts"):
        write_permit_report(reg, number, tmp_path / "x.html", start=date(2026, 11, 23), end=date(2026, 11, 20))
    assert not (tmp_path / "x.html").exists()


def test_a_pdf_report_is_printed_by_chromium(reg, inspected, target, layers_path, tmp_path: Path) -> None:
    require_tool("chromium", "chromium")
    number, _ = inspected
    for day in (23, 24):
        reg.inspect(number, InspectionReport(datetime(2026, 11, day, 14, 0, tzinfo=UTC), "Other Person", "all good"))
    out = tmp_path / "report.pdf"
    r = run_permits("report", target, number, "-o", str(out), "--layers", str(layers_path))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:5] == b"%PDF-" and _mode(out) == 0o600
    # A report without photos prints on one page, and the next one starts a new page. (Two such
    # reports do not fit one letter page anyway, so the page-break rule itself is pinned in the
    # HTML test.)
    short = tmp_path / "short.pdf"
    assert write_permit_report(reg, number, short, start=date(2026, 11, 21)) == 2
    assert len(re.findall(rb"/Type\s*/Page(?!s)", short.read_bytes())) == 2
    assert [q.name for q in tmp_path.iterdir() if q.name.startswith(".")] == []  # no staging left


def test_without_chromium_a_pdf_is_refused_with_the_fix(
    reg, inspected, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    number, _ = inspected
    monkeypatch.setattr("esc_gis.registry.views.reports.shutil.which", lambda name: None)
    with pytest.raises(ToolError, match="apt-get install chromium"):
        write_permit_report(reg, number, tmp_path / "r.pdf")
    assert not [q for q in tmp_path.iterdir() if "r.pdf" in q.name]  # nothing written, no staging left


# --- The office's inspection log ---------------------------------------------------------------


def test_the_log_lists_every_inspection_of_the_period_across_permits(
    reg, inspected, target, layers_path, tmp_path: Path
) -> None:
    number, _ = inspected
    other = _active(reg, x=600, address="600 Other St")
    reg.update(other, inspected_on=date(2026, 11, 20), who="clerk")  # a day-only inspection
    reg.update(other, inspected_on=date(2026, 11, 21), who="clerk")  # the day after the period: left out
    out = tmp_path / "log.csv"
    r = run_permits(
        "report", target, "--from", "2026-11-16", "--to", "2026-11-20", "-o", str(out), "--layers", str(layers_path)
    )
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert [(x["permit_number"], x["date"], x["inspector"]) for x in rows] == [
        (number, f"{AT.astimezone(OFFICE):%Y-%m-%d}", INSPECTOR),
        (other, "2026-11-20", ""),
    ]
    assert (rows[0]["deficiencies"], rows[0]["open_repairs"], rows[0]["photos"]) == ("2", "1", "1")
    assert _mode(out) == 0o600
    from .test_csvt import ogr_types  # its .csvt: GDAL reads the counts as numbers

    types = ogr_types(out)
    assert {types[c] for c in ("report", "deficiencies", "open_repairs", "photos")} == {"Integer64"}, types
    html_out = tmp_path / "log.html"
    args = ("--from", "2026-11-16", "--to", "2026-11-20", "-o", str(html_out), "--layers", str(layers_path))
    assert run_permits("report", target, *args).exit_code == 0
    assert "date only" in html_out.read_text(encoding="utf-8")
    # Without a permit, the period is required.
    r = run_permits("report", target, "-o", str(tmp_path / "l2.csv"), "--layers", str(layers_path))
    assert r.exit_code == 2 and "--from and --to" in r.output


# --- The office summary -------------------------------------------------------------------------


def _reported(reg, number: str, day: date) -> None:
    """A full written report of the holder's inspection, at 10:00 on the office's clock of ``day``.

    § 540-8E(6): "Weekly inspection reports shall include all of the following: date, time and location
    of the construction site inspection; the name of individual who performed the inspection; an
    assessment ...; a description of any ... maintenance performed; and a description of the present
    phase". A day alone (``update --inspected``) holds none of it and meets no duty.
    """
    at = datetime.combine(day, datetime.min.time().replace(hour=10), tzinfo=OFFICE)
    report = InspectionReport(
        at, "Ina Inspector", "controls hold", work_done="none", phase="grading", location_words="north fence"
    )
    reg.inspect(number, report, who="clerk")


def _values(rows) -> dict[tuple[str, str], float]:
    return {(r.section, r.measure): r.value for r in rows}


def test_inspections_due_and_missed_follow_the_deadline_rules(reg) -> None:
    number = _active(reg)
    _reported(reg, number, date(2026, 11, 16))
    rain = [(date(2026, 11, 19), 0.6)]  # due by the end of 11-20
    got = inspection_deadlines(reg.get(number), date(2026, 11, 9), date(2026, 11, 30), rain=rain, profile=reg.profile)
    # Weekly: 11-16 met; 11-23 missed, and the week after it, 11-30, missed too; rain 11-20 missed.
    assert [(c, d, done) for c, d, done in got] == [
        ("weekly_inspection", date(2026, 11, 16), True),
        ("rain_inspection", date(2026, 11, 20), False),
        ("weekly_inspection", date(2026, 11, 23), False),
        ("weekly_inspection", date(2026, 11, 30), False),
    ]
    _reported(reg, number, date(2026, 11, 20))  # meets the rain one, moves the weekly
    got = inspection_deadlines(reg.get(number), date(2026, 11, 9), date(2026, 11, 30), rain=rain, profile=reg.profile)
    # The 11-23 deadline (a week after 11-16) is met by 11-20's, and the next runs from it: 11-27.
    assert got == [
        ("weekly_inspection", date(2026, 11, 16), True),
        ("rain_inspection", date(2026, 11, 20), True),
        ("weekly_inspection", date(2026, 11, 23), True),
        ("weekly_inspection", date(2026, 11, 27), False),
    ]
    # A period after work ended has no inspection deadlines.
    reg.transition(number, "final_stabilization", on=date(2026, 11, 28), who="clerk")
    late = inspection_deadlines(reg.get(number), date(2026, 11, 29), date(2026, 12, 31), rain=[], profile=reg.profile)
    assert late == []


def test_every_week_a_site_goes_uninspected_is_a_missed_weekly_inspection(reg) -> None:
    number = _active(reg)
    p = reg.get(number)
    began = reg.profile.day_of(p.started_at)
    # No inspection at all: from a week after the start, every week of the period is missed.
    got = inspection_deadlines(p, date(2026, 11, 1), date(2026, 12, 31), rain=[], profile=reg.profile)
    weeks = [began + timedelta(days=7 * k) for k in range(1, 10) if began + timedelta(days=7 * k) <= date(2026, 12, 31)]
    assert got == [("weekly_inspection", d, False) for d in weeks]
    # Only the period's weeks are counted, whatever came before it.
    got = inspection_deadlines(p, date(2026, 12, 1), date(2026, 12, 31), rain=[], profile=reg.profile)
    assert [d for _, d, _ in got] == [d for d in weeks if d >= date(2026, 12, 1)]
    # An inspection three days early moves the chain: the next falls a week after it.
    _reported(reg, number, weeks[0] - timedelta(days=3))
    got = inspection_deadlines(reg.get(number), date(2026, 11, 1), weeks[1], rain=[], profile=reg.profile)
    assert got == [("weekly_inspection", weeks[0], True), ("weekly_inspection", weeks[1] - timedelta(days=3), False)]


def test_a_late_inspection_restarts_the_week_and_invents_no_deadline(reg) -> None:
    # Work began 11-09 (Monday). Inspected 11-16 (on time), then not until 11-25: the 11-23
    # deadline is missed, and the next falls a week after the late inspection, 12-02, as
    # `permits due` has it; no deadline falls on 11-30.
    number = _active(reg)
    for day in (date(2026, 11, 16), date(2026, 11, 25)):
        _reported(reg, number, day)
    got = inspection_deadlines(reg.get(number), date(2026, 11, 1), date(2026, 12, 10), rain=[], profile=reg.profile)
    assert got == [
        ("weekly_inspection", date(2026, 11, 16), True),
        ("weekly_inspection", date(2026, 11, 23), False),
        ("weekly_inspection", date(2026, 12, 2), False),
        ("weekly_inspection", date(2026, 12, 9), False),
    ]


def test_the_summary_counts_the_period_by_hand(reg, inspected, target, layers_path, tmp_path: Path) -> None:
    number, _ = inspected
    pay_application_fee(reg, number, 12.34)
    pay_application_fee(reg, number, 99.0, paid_on=date(2026, 10, 30), receipt="R-0")
    g = reg.add_guarantee(
        number,
        type="letter_of_credit",
        amount=2500,
        received_on=date(2026, 11, 20),
        expires_on=date(2027, 1, 15),
        who="clerk",
    )
    reg.guarantee_event(
        g.id,
        "draw",
        on=date(2026, 11, 25),
        amount=150,
        reason="office re-set fence",
        who="clerk",
        notice_on=date(2026, 11, 25),
    )
    # A case without a permit, by address: ground A4 (an address alone decides no § 540-4A requirement for A1).
    reg.enforce(ground="A4", on=date(2026, 11, 24), reasons="fill pad, no permit", address="9 Nowhere Rd", who="c")
    rows = office_summary(reg, date(2026, 11, 1), date(2026, 11, 30), rain=[(date(2026, 11, 19), 0.6)])
    v = _values(rows)
    assert v["permits", "state_active"] == 1 and v["permits", "total_at_end"] == 1
    assert v["permits", "received"] == 1 and v["permits", "issued"] == 1
    assert (
        v["inspections", "recorded"],
        v["inspections", "reports_recorded"],
        v["inspections", "photos_recorded"],
    ) == (
        1,
        1,
        1,
    )
    assert (v["inspections", "weekly_due"], v["inspections", "weekly_done"], v["inspections", "weekly_missed"]) == (
        3,
        1,
        2,
    )
    assert (v["inspections", "after_rain_due"], v["inspections", "after_rain_missed"]) == (1, 1)
    assert (v["repairs", "deficiencies_found"], v["repairs", "repaired"]) == (2, 1)
    assert (v["repairs", "open_at_end"], v["repairs", "overdue_at_end"]) == (1, 1)
    assert (v["enforcement", "cases_opened"], v["enforcement", "cases_opened_without_permit"]) == (1, 1)
    assert v["enforcement", "cases_open_at_end"] == 1
    assert v["guarantees", "letter_of_credit_held_usd"] == 2350.0 and v["guarantees", "drawn_usd"] == 150.0
    assert v["guarantees", "surety_bond_held_usd"] == 0.0
    assert (v["fees", "received"], v["fees", "received_usd"]) == (1, 12.34)  # the October fee is outside
    # Before the draw and the case: the guarantee held in full, no case yet.
    early = _values(office_summary(reg, date(2026, 11, 1), date(2026, 11, 22)))
    assert early["guarantees", "letter_of_credit_held_usd"] == 2500.0
    assert early["enforcement", "cases_open_at_end"] == 0
    assert early["repairs", "open_at_end"] == 1
    # Before the permit was received, it is in no state.
    assert _values(office_summary(reg, date(2026, 10, 1), date(2026, 10, 31)))["permits", "total_at_end"] == 0

    csv_out, html_out = tmp_path / "summary.csv", tmp_path / "summary.html"
    for out in (csv_out, html_out):
        args = ("--from", "2026-11-01", "--to", "2026-11-30", "-o", str(out), "--layers", str(layers_path))
        r = run_permits("summary", target, *args)
        assert r.exit_code == 0, r.output
    table = list(csv.reader(io.StringIO(csv_out.read_text(encoding="utf-8"))))
    assert table[0] == ["section", "measure", "value"]
    assert ["guarantees", "letter_of_credit_held_usd", "2350.00"] in table
    assert ["guarantees", "surety_bond_held_usd", "0.00"] in table  # money always in cents, even none
    assert _mode(csv_out) == 0o600  # totals can show one permit's guarantee
    page = html_out.read_text(encoding="utf-8")
    assert "letter of credit held usd" in page and "2,350.00" in page
    for out in (csv_out, html_out):  # counts only: no names or notes
        data = out.read_bytes()
        assert INSPECTOR.encode() not in data and NOTE.encode() not in data and b"9 Nowhere" not in data
    bad = run_permits("summary", target, "--from", "2026-11-30", "--to", "2026-11-01", "-o", str(tmp_path / "s.csv"))
    assert bad.exit_code == 1 and "before it starts" in bad.output and not (tmp_path / "s.csv").exists()


# --- The private archive -------------------------------------------------------------------------


def test_the_archive_keeps_every_photo_byte_for_byte_with_its_checksum(
    reg, inspected, target, layers_path, tmp_path: Path
) -> None:
    number, png = inspected
    out = tmp_path / "inspections.zip"
    r = run_permits("export-inspections", target, "-o", str(out), "--layers", str(layers_path))
    assert r.exit_code == 0, r.output
    assert _mode(out) == 0o600
    (ph,) = reg.get(number).reports[0].photos
    photos = read_photos(out)
    assert photos == {ph.id: png} and hashlib.sha256(photos[ph.id]).hexdigest() == ph.sha256
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        sums = z.read("SHA256SUMS").decode()
        defs = list(csv.DictReader(io.StringIO(z.read("deficiencies.csv").decode())))
        insp = list(csv.DictReader(io.StringIO(z.read("inspections.csv").decode())))
    assert {
        "inspections.csv",
        "inspections.csvt",
        "deficiencies.csv",
        "deficiencies.csvt",
        "photos.csv",
        "photos.csvt",
        "SHA256SUMS",
        f"photos/{ph.id}-east_fence.png",
    } == names
    assert sums == f"{ph.sha256}  photos/{ph.id}-east_fence.png\n"
    assert [(d["description"], bool(d["repaired_at_utc"]), d["repair_detail"]) for d in defs] == [
        ("silt fence down east", True, "fence re-set"),
        ("inlet clogged", False, ""),
    ]
    assert insp[0]["inspector"] == INSPECTOR and insp[0]["inspected_at_utc"] == AT.isoformat()
    assert float(insp[0]["location_x"]) == pytest.approx(reg.get(number).site.centroid.x)
    # Each table's .csvt beside it in the archive: GDAL reads it there with its numbers as numbers.
    from .test_csvt import ogr_types

    types = ogr_types(f"/vsizip/{out}/inspections.csv")
    assert (types["id"], types["location_x"], types["inspected_at_utc"]) == ("Integer64", "Real", "String"), types
    assert ogr_types(f"/vsizip/{out}/photos.csv")["size_bytes"] == "Integer64"
    # A damaged archive is caught on reading back.
    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(out) as z, zipfile.ZipFile(damaged, "w") as w:
        for name in z.namelist():
            data = z.read(name)
            w.writestr(name, data[:-1] + b"\x00" if name.startswith("photos/") else data)
    with pytest.raises(RegistryError, match="do not match their recorded SHA-256"):
        read_photos(damaged)


def test_public_outputs_show_none_of_the_reports(reg, inspected, target, layers_path, tmp_path: Path) -> None:
    """The private outputs exist beside the public ones; the public ones still show no notes or photos."""
    number, png = inspected
    lay = ["--layers", str(layers_path)]
    assert run_permits("report", target, number, "-o", str(tmp_path / "r.html"), *lay).exit_code == 0
    assert run_permits("export-inspections", target, "-o", str(tmp_path / "a.zip"), *lay).exit_code == 0
    folder = tmp_path / "public"
    folder.mkdir()
    outputs = public_outputs(target, lay, folder, ics_on="2026-11-30")
    assert_hidden(outputs, number, [INSPECTOR, NOTE, "tracking pad re-graveled", png, base64.b64encode(png)])
    assert os.path.exists(tmp_path / "r.html")


def test_the_log_csv_opens_in_a_spreadsheet_as_text(reg, target, layers_path, tmp_path: Path) -> None:
    number = _active(reg, x=900, address="900 Formula St")
    reg.inspect(
        number,
        InspectionReport(AT, '=HYPERLINK("http://x")', "-2+3 controls", work_done="@SUM(A1)", phase="grading"),
        who="clerk",
    )
    out = tmp_path / "log.csv"
    r = run_permits(
        "report", target, "--from", "2026-11-16", "--to", "2026-11-16", "-o", str(out), "--layers", str(layers_path)
    )
    assert r.exit_code == 0, r.output
    [row] = [x for x in csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))) if x["permit_number"] == number]
    # A leading formula character is quoted; the text itself is kept whole.
    assert row["inspector"] == '\'=HYPERLINK("http://x")'
    assert "'-2+3 controls" in row.values() and "'@SUM(A1)" in row.values() and row["date"] == "2026-11-16"
