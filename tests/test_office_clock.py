"""The office's clock: days the ordinance counts are the Village's days, on any server.

The profile names the office's time zone (``timezone = "America/Chicago"``). A time typed
without a zone is read off that clock, and every day derived from a stored (UTC) time, the
day work began, an inspection's day, a repair's, is the Village's day. The tests run the
registry on a "server" whose own zone is Tokyo's (``TZ``), so a result that leans on the
machine's zone, as the code once did, comes out a day off.
"""

from __future__ import annotations

import time
from datetime import date, datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from esc_gis.errors import ProfileError
from esc_gis.profile import load_profile
from esc_gis.registry import Application, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.views.agenda import permit_dues

from .conftest import CRS, add_active, pay_application_fee, square_sqft

UTC = timezone.utc
CHICAGO = ZoneInfo("America/Chicago")
CAL = OfficeCalendar(holidays=frozenset())


@pytest.fixture
def tokyo_server(monkeypatch: pytest.MonkeyPatch):
    """This machine's clock set to Tokyo's (UTC+9), far from the Village's (UTC-6 in winter)."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_the_profile_names_the_village_clock_and_reads_times_on_it() -> None:
    p = load_profile()
    assert p.timezone == "America/Chicago" and p.tz == CHICAGO
    # 03:00 UTC on the 28th is 21:00 on the 27th in Winneconne.
    late = datetime(2026, 11, 28, 3, 0, tzinfo=UTC)
    assert p.day_of(late) == date(2026, 11, 27)
    assert p.local(late) == datetime(2026, 11, 27, 21, 0, tzinfo=CHICAGO)
    # A time typed without a zone is the Village's, in summer time too (CDT, UTC-5).
    assert p.local(datetime(2026, 7, 1, 8, 0)).astimezone(UTC) == datetime(2026, 7, 1, 13, 0, tzinfo=UTC)
    assert p.day_of(date(2026, 7, 1)) == date(2026, 7, 1)


def test_a_profile_without_a_zone_keeps_this_machine_s_clock(tokyo_server) -> None:
    example = load_profile(Path(__file__).parent / "profiles" / "example.toml")
    assert example.timezone == "" and example.tz is None
    assert example.day_of(datetime(2026, 11, 28, 20, 0, tzinfo=UTC)) == date(2026, 11, 29)  # Tokyo's day


def test_an_unknown_zone_is_refused_with_the_fix(tmp_path: Path) -> None:
    src = (Path(__file__).parents[1] / "src" / "esc_gis" / "profiles" / "winneconne.toml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text(src.replace('timezone = "America/Chicago"', 'timezone = "Central"'), encoding="utf-8")
    with pytest.raises(
        ProfileError, match=r"timezone 'Central' is not an IANA time zone name \(e.g. 'America/Chicago'\)"
    ):
        load_profile(bad)


@pytest.fixture
def reg(target: str, layer_set, tokyo_server):
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set, calendar=CAL) as r:
        yield r


def test_work_begun_in_the_evening_counts_from_the_village_day(reg) -> None:
    # 20:00 on Monday 9 November in Winneconne is Tuesday already in UTC and in Tokyo.
    evening = datetime(2026, 11, 9, 20, 0)
    number = add_active(reg, address="1 Clock St", started=evening)
    p = reg.get(number)
    assert p.started_at == datetime(2026, 11, 10, 2, 0, tzinfo=UTC)
    weekly = [
        d
        for d in permit_dues(p, on=date(2026, 11, 12), calendar=CAL, profile=reg.profile)
        if d.code == "weekly_inspection"
    ]
    assert [d.due for d in weekly] == [date(2026, 11, 16)]  # a week after the 9th, not the 10th


def test_an_evening_inspection_is_recorded_on_its_village_day(reg) -> None:
    number = add_active(reg, x=300, address="2 Clock St", started=datetime(2026, 11, 9, 8, 0))
    # Typed as the inspector read their watch: 21:00 on Friday the 27th.
    reg.inspect(
        number,
        InspectionReport(
            datetime(2026, 11, 27, 21, 0),
            "Pat Inspector",
            "controls in place",
            work_done="none",
            phase="grading",
            deficiencies=["fence down"],
            location=reg.get(number).site.centroid,
        ),
    )
    p = reg.get(number)
    assert p.reports[0].inspected_at == datetime(2026, 11, 28, 3, 0, tzinfo=UTC)
    assert p.inspections == [date(2026, 11, 27)]
    # The repair clock runs in hours: due 21:00 the next evening, Village time.
    [repair] = [
        d for d in permit_dues(p, on=date(2026, 11, 28), calendar=CAL, profile=reg.profile) if d.code == "repair_due"
    ]
    assert repair.due == datetime(2026, 11, 29, 3, 0, tzinfo=UTC)
    weekly = [
        d
        for d in permit_dues(p, on=date(2026, 11, 28), calendar=CAL, profile=reg.profile)
        if d.code == "weekly_inspection"
    ]
    assert [d.due for d in weekly] == [date(2026, 12, 4)]


def test_work_begun_on_a_day_is_that_day_on_the_village_clock(reg) -> None:
    # No time given: work began that day, at the Village's midnight (06:00 UTC in November).
    number = reg.add(Application("3 Clock St", date(2026, 11, 2), square_sqft(500, 100, 5000.0), CRS))
    pay_application_fee(reg, number, 50)
    for state, day in (("under_review", 3), ("approved", 4), ("active", 9)):
        reg.transition(number, state, on=date(2026, 11, day), who="clerk")
    p = reg.get(number)
    assert p.started_at == datetime(2026, 11, 9, 6, 0, tzinfo=UTC) and reg.profile.day_of(p.started_at) == date(
        2026, 11, 9
    )
    weekly = [
        d
        for d in permit_dues(p, on=date(2026, 11, 10), calendar=CAL, profile=reg.profile)
        if d.code == "weekly_inspection"
    ]
    assert [d.due for d in weekly] == [date(2026, 11, 16)]


def test_a_time_the_clocks_spring_over_is_refused_and_a_repeated_one_is_the_first() -> None:
    from esc_gis.errors import ValidationError

    p = load_profile()
    with pytest.raises(
        ValidationError, match=r"2026-03-08 02:30 does not exist on the office's clock \(America/Chicago\)"
    ):
        p.local(datetime(2026, 3, 8, 2, 30))
    assert p.local(datetime(2026, 3, 8, 3, 30)).astimezone(UTC) == datetime(2026, 3, 8, 8, 30, tzinfo=UTC)
    # 01:30 on 1 November happens twice: the first, daylight time (UTC-5); an offset says otherwise.
    assert p.local(datetime(2026, 11, 1, 1, 30)).astimezone(UTC) == datetime(2026, 11, 1, 6, 30, tzinfo=UTC)
    second = datetime.fromisoformat("2026-11-01T01:30-06:00")
    assert p.local(second).astimezone(UTC) == datetime(2026, 11, 1, 7, 30, tzinfo=UTC)


def test_permits_due_shows_times_on_the_village_clock(reg, target: str, layers_path: Path) -> None:
    from .public_outputs import run_permits

    lay = ["--layers", str(layers_path)]
    number = add_active(reg, x=700, address="4 Clock St", started=datetime(2026, 11, 9, 8, 0))
    reg.inspect(number, InspectionReport(datetime(2026, 11, 27, 21, 0), "Pat", "fence down", deficiencies=["fence"]))
    out = run_permits("due", target, "--on", "2026-11-28", "--within", "3", *lay).output
    # The repair: 24 hours after 21:00 on the 27th, Village time (03:00 UTC on the 29th).
    assert "2026-11-28 21:00 CST" in out and "of the inspection at 2026-11-27 21:00 CST" in out, out
    assert "03:00" not in out


def test_a_start_notice_needs_its_time(reg, active: str, target: str, layers_path: Path) -> None:
    from esc_gis.errors import ValidationError

    from .public_outputs import run_permits

    with pytest.raises(ValidationError, match=r"start_notice_at is a time, not datetime.date\(2026, 11, 10\)"):
        reg.update(active, start_notice_at=date(2026, 11, 10))
    r = run_permits("update", target, active, "--start-notice", "2026-11-10", "--layers", str(layers_path))
    assert r.exit_code == 2 and "has no time of day" in r.output and "Traceback" not in r.output
