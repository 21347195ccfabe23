"""One rule for every effective date (issue 34, item 4), on a GeoPackage file and on PostGIS.

A day a fact took effect (a fee paid, an inspection, a move, a case's action, an appeal's
decision) is never after today on the Village's clock, nor before the event it depends on. The
ordinance is silent on typing mistakes; the rule is the office's (``domain/dates.py``), and it
matters to the law: § 540-8E(6) "Conduct construction site inspections at least once per week",
and an inspection typed as 2062 for 2026 silenced that duty in ``permits due`` while
``permits verify`` passed.

The rule's own edges, pure, are in tests/test_law_dates.py. Today is the Village's
(``Profile.today``): the tests read it rather than fix it, and the fixtures' scenarios lie in
November 2026, before it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest

from esc_gis.errors import ValidationError
from esc_gis.registry import Application, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.domain.records import Event

from .conftest import CRS, add_active, square_sqft
from .public_outputs import run_permits

LATER = "is after today on the Village's clock"


# --- Every date-taking command, on both back ends ---------------------------------------------


def _today(reg: Any) -> date:
    return reg.profile.today()


def _at(reg: Any, day: date) -> datetime:
    """08:00 (or now, today) on the Village's clock of ``day``: a time that is not later than now."""
    at = datetime.combine(day, time(8, 0), tzinfo=reg.profile.tz)
    return min(at, datetime.now(reg.profile.tz) - timedelta(minutes=1)) if day == _today(reg) else at


def _history(reg: Any) -> int:
    return len(reg.history())


def _fee(reg: Any, n: str, day: date) -> Any:
    return reg.record_fee(n, kind="application", amount=1.0, paid_on=day, receipt=f"R-{day}")


def _guarantee(reg: Any, n: str, day: date) -> Any:
    return reg.add_guarantee(n, type="surety_bond", amount=5.0, received_on=day)


def _guarantee_event(reg: Any, n: str, day: date) -> Any:
    g = reg.add_guarantee(n, type="surety_bond", amount=5.0, received_on=date(2026, 11, 3))
    return lambda d: reg.guarantee_event(g.id, "final_release", on=d, engineer="E. Engineer")


def _stop_work(reg: Any, n: str, day: date) -> Any:
    return reg.transition(n, "stop_work", on=day, reasons="No perimeter control.")


def _retract(reg: Any, n: str, day: date) -> Any:
    reg.transition(n, "stop_work", on=date(2026, 11, 20), reasons="No perimeter control.")
    return lambda d: reg.retract(n, reasons="Perimeter control installed.", on=d)


def _reinstate(reg: Any, n: str, day: date) -> Any:
    reg.transition(n, "suspended", on=date(2026, 11, 20), reasons="Notice.", notified_on=date(2026, 11, 19))
    return lambda d: reg.reinstate(n, reasons="Complied.", on=d)


def _inspect(reg: Any, n: str, day: date) -> Any:
    return lambda d: reg.inspect(n, InspectionReport(_at(reg, d), "Ina Inspector", "silt fence sagging"))


def _repaired(reg: Any, n: str, day: date) -> Any:
    r = reg.inspect(
        n, InspectionReport(_at(reg, date(2026, 11, 20)), "Ina Inspector", "torn fence", deficiencies=["torn fence"])
    )
    return lambda d: reg.repaired(n, [r.deficiencies[0].id], on=_at(reg, d))


def _case(reg: Any, n: str, day: date) -> Any:
    return reg.enforce(ground="A4", on=day, reasons="grading seen, no permit", address="9 Elm St")


def _case_action(reg: Any, n: str, day: date) -> Any:
    c = reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="grading seen, no permit", address="9 Elm St")
    return lambda d: reg.case_action(c.case_id, "notified", on=d)


def _appeal_args(n: str) -> dict[str, Any]:
    return {
        "appealed": "stop-work order of 2026-11-20",
        "kind": "stop_work_order",
        "appellant": "Pat Builder",
        "appellant_kind": "aggrieved_person",
        "grounds": "the fence was up",
        "permit_number": n,
    }


def _appeal(reg: Any, n: str, day: date) -> Any:
    reg.transition(n, "stop_work", on=date(2026, 11, 20), reasons="No perimeter control.")
    return lambda d: reg.appeal(on=d, **_appeal_args(n))


def _decide(reg: Any, n: str, day: date) -> Any:
    reg.transition(n, "stop_work", on=date(2026, 11, 20), reasons="No perimeter control.")
    a = reg.appeal(on=date(2026, 11, 23), **_appeal_args(n))
    return lambda d: reg.decide_appeal(a.appeal_id, body="zoning_board_of_appeals", outcome="upheld", on=d)


def _amend(reg: Any, n: str, day: date) -> Any:
    return reg.amend(
        n,
        trigger="B1",
        description="Second basin",
        plan_date=date(2026, 11, 16),
        permission_on=day,
        permission_by="J. Example",
        effective_on=day,
    )


def _notice(reg: Any, n: str, day: date) -> Any:
    return reg.notify_amendment(n, trigger="B3", description="Fence the stockpile", notified_on=day)


def _update(key: str) -> Callable[[Any, str, date], Any]:
    def call(reg: Any, n: str, day: date) -> Any:
        return reg.update(n, **{key: day})

    return call


def _add(reg: Any, n: str, day: date) -> Any:
    return reg.add(Application("2 New St", day, square_sqft(400, 100, 5000.0), CRS))


def _extend(reg: Any, n: str, day: date) -> Any:
    return reg.extend(n, 30, on=day, reasons="Wet autumn.")


#: The commands whose call sets up first and returns the recording call.
SET_UP_FIRST = ("guarantee-event", "retract", "reinstate", "inspect", "repaired", "case --notified", "appeal", "decide")

#: Each command, the keyword its date comes by (as the refusal names it), and how to call it: ``call(reg, n, day)`` records
#: with ``day``, or sets up and returns the recording call (a second day must not need setting up again).
COMMANDS: dict[str, tuple[str, Callable[[Any, str, date], Any]]] = {
    "fee": ("paid_on=", _fee),
    "guarantee": ("received_on=", _guarantee),
    "guarantee-event": ("on=", _guarantee_event),
    "transition": ("on=", _stop_work),
    "retract": ("on=", _retract),
    "reinstate": ("on=", _reinstate),
    "extend": ("on=", _extend),
    "update --inspected": ("inspected_on=", _update("inspected_on")),
    "update --work-stopped": ("work_stopped_on=", _update("work_stopped_on")),
    "update --stockpile-since": ("stockpile_since=", _update("stockpile_since")),
    "inspect": ("inspected_at=", _inspect),
    "repaired": ("on=", _repaired),
    "case": ("on=", _case),
    "case --notified": ("the notice's day", _case_action),
    "appeal": ("on=", _appeal),
    "decide": ("on=", _decide),
    "amend": ("permission_on=", _amend),
    "amend --notice": ("notified_on=", _notice),
    "add/import": ("received_on", _add),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_refuses_tomorrow_writes_nothing_and_accepts_today(reg, active: str, command: str) -> None:
    option, call = COMMANDS[command]
    today = _today(reg)
    tomorrow = today + timedelta(days=1)
    record = call
    if command in SET_UP_FIRST:
        made = call(reg, active, today)
        record = lambda reg, n, d: made(d)  # noqa: E731
    before = _history(reg)
    with pytest.raises(ValidationError) as e:
        record(reg, active, tomorrow)
    shown = f"{tomorrow} 08:00" if option == "inspected_at=" or command == "repaired" else str(tomorrow)
    # A keyword is named as Python takes it (on=2026-...); a case's action by its day (the notice's day
    # 2026-...), which Python gives as on= and the command line by the action's own flag.
    named = f"{option}{shown}" if option.endswith("=") else f"{option} {shown}"
    assert named in str(e.value) and f"{LATER} ({today})" in str(e.value), str(e.value)
    assert _history(reg) == before  # nothing written
    record(reg, active, today)  # the edge: today itself
    assert _history(reg) > before


def test_a_date_before_the_application_s_receipt_is_refused(reg, active: str) -> None:
    """An inspection cannot have been made before the application came in (2026-11-02)."""
    refused = r"inspected_on=2026-11-01 is before the application's receipt \(2026-11-02\)"
    with pytest.raises(ValidationError, match=refused):
        reg.update(active, inspected_on=date(2026, 11, 1))


def test_several_dates_of_one_update_are_refused_together(reg, active: str) -> None:
    tomorrow = _today(reg) + timedelta(days=1)
    with pytest.raises(ValidationError) as e:
        reg.update(active, inspected_on=tomorrow, work_stopped_on=tomorrow)
    assert f"inspected_on={tomorrow} {LATER}" in str(e.value) and f"work_stopped_on={tomorrow} {LATER}" in str(e.value)


def test_dates_still_to_come_are_not_effective_dates(reg, active: str) -> None:
    """A letter of credit's expiry and the expected resumption of work name days to come."""
    later = _today(reg) + timedelta(days=60)
    g = reg.add_guarantee(active, type="letter_of_credit", amount=5.0, received_on=date(2026, 11, 3), expires_on=later)
    assert g.expires_on == later
    p = reg.update(active, work_stopped_on=date(2026, 11, 20), resume_expected_on=later)
    assert p.resume_expected_on == later


# --- The 2062 typo of the issue, through the CLI, and verify ----------------------------------


@pytest.fixture
def cli_registry(target: str, layer_set) -> str:
    init_registry(target, layers=layer_set)
    return target


def _weekly(target: str, lay: list[str], today: date) -> list[dict[str, Any]]:
    r = run_permits("due", target, "--on", str(today), "--within", "0", "--json", *lay)
    assert r.exit_code == 0, r.output
    return [i for i in json.loads(r.output) if i["code"] == "weekly_inspection"]


def test_the_2062_typo_is_refused_and_the_overdue_weekly_inspection_stays_listed(
    cli_registry: str, layer_set, layers_path: Path
) -> None:
    """§ 540-8E(6) "Conduct construction site inspections at least once per week": work began
    2026-11-09 and no inspection since, so the weekly inspection is overdue today."""
    lay = ["--layers", str(layers_path)]
    with open_registry(cli_registry, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        n = add_active(reg)
        today = _today(reg)
    assert [i["permit_number"] for i in _weekly(cli_registry, lay, today)] == [n]
    r = run_permits("update", cli_registry, n, "--inspected", "2062-01-01", *lay)
    assert r.exit_code == 1
    assert f"--inspected 2062-01-01 {LATER} ({today})" in r.output and f"on or before {today}" in r.output
    assert [i["permit_number"] for i in _weekly(cli_registry, lay, today)] == [n]
    # The right day, with the report the week asks for (a day alone no longer counts:
    # [findings.report_day_alone]), meets the weekly inspection.
    r = run_permits(
        "inspect", cli_registry, n, "--by", "holder", "--at", f"{today}T00:05", "--inspector", "Pat Inspector",
        "--assessment", "Fences standing", "--work-done", "None needed", "--phase", "Rough grading",
        "--location", "North silt fence along the street", *lay,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert _weekly(cli_registry, lay, today) == []  # inspected today: nothing due within 0 days


def test_verify_flags_an_event_dated_after_today_written_by_hand(
    cli_registry: str, layer_set, layers_path: Path
) -> None:
    lay = ["--layers", str(layers_path)]
    with open_registry(cli_registry, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        n = add_active(reg)
        today = _today(reg)
        ok = run_permits("verify", cli_registry, *lay)
        assert ok.exit_code == 0, ok.output
        # As `update --inspected 2062-01-01` wrote it before the rule (or a hand edit would).
        with reg.backend.write() as cur:
            now = datetime.now(reg.profile.tz)
            reg._event(cur, n, Event(now, "c", "inspection", None, None, date(2062, 1, 1)), by="holder")
        seq = reg.history(n)[-1].seq
    bad = run_permits("verify", cli_registry, *lay)
    assert bad.exit_code == 1
    assert (
        f"{n}: event {seq} (inspected) took effect on 2062-01-01, after today on the Village's clock ({today})"
        in bad.output
    ), bad.output
    assert "0 difference(s) between the tables and the history, 1 event(s) dated after today." in bad.output
