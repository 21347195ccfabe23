"""Fees and financial guarantees pinned at their edges, pure (§ 540-8D, § 540-10).

No registry here: the checks the commands run before writing, each with its exact refusal, so
a mutation of a bound or a message fails a test (`make mutation`).
"""

from __future__ import annotations

import csv
import os
import stat
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from esc_gis.errors import OutputExistsError, OutputFormatError, ProfileError, ValidationError
from esc_gis.registry.domain.fees import (
    Fee,
    Guarantee,
    GuaranteeEvent,
    check_fee,
    check_guarantee,
    check_guarantee_event,
    load_fee_schedule,
    problems,
    write_receipts,
)

TODAY = date(2026, 6, 15)
AT = datetime(2026, 6, 15, 12, tzinfo=timezone.utc)
GOOD = '[schedule]\nresolution = "R-2026-3"\nadopted_on = 2026-01-12\n[fees]\napplication = 150\nreinspection = 75.5\n'


def _schedule(tmp_path: Path, body: str = GOOD):
    p = tmp_path / "fees.toml"
    p.write_text(body, encoding="utf-8")
    return load_fee_schedule(p)


def _event(kind: str, amount: float | None, on: date = date(2026, 5, 1)) -> GuaranteeEvent:
    return GuaranteeEvent(1, kind, on, amount, None, None, None, "clerk", AT)


def _guarantee(*events: GuaranteeEvent, amount: float = 1000.0) -> Guarantee:
    return Guarantee(7, "ESC-1", "cash_escrow", amount, date(2026, 4, 1), None, "clerk", AT, events)


# --- § 540-10 "fees ... as established by resolution of the Village Board": the schedule is data ---


def test_a_schedule_is_read_with_its_resolution_date_and_amounts_as_floats(tmp_path: Path) -> None:
    s = _schedule(tmp_path)
    assert (s.resolution, s.adopted_on, s.path) == ("R-2026-3", date(2026, 1, 12), tmp_path / "fees.toml")
    assert s.amounts == {"application": 150.0, "reinspection": 75.5}
    assert all(type(v) is float for v in s.amounts.values())


def test_a_zero_fee_is_an_amount_and_a_non_ascii_kind_is_read_as_utf8(tmp_path: Path) -> None:
    s = _schedule(tmp_path, GOOD.replace("reinspection = 75.5", '"réinspection" = 0'))
    assert s.amounts["réinspection"] == 0.0


def test_every_problem_of_a_schedule_is_reported_at_once(tmp_path: Path) -> None:
    body = '[schedule]\nresolution = "  "\nadopted_on = 2026-01-12T10:00:00\n[fees]\nx = -0.01\ny = true\nz = "5"\n'
    with pytest.raises(ProfileError) as e:
        _schedule(tmp_path, body)
    p = tmp_path / "fees.toml"
    assert str(e.value) == (
        f"The fee schedule {p} is not usable: "
        "[schedule] resolution is missing (the resolution that set the fees). "
        "[schedule] adopted_on is missing or not a date (write 2026-01-12, unquoted). "
        "[fees] x = -0.01 is not an amount of 0 or more. "
        "[fees] y = True is not an amount of 0 or more. "
        "[fees] z = '5' is not an amount of 0 or more. "
        "[fees] has no 'application' fee (the application fee)."
    )


def test_a_schedule_without_its_tables_names_each_missing_part(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as e:
        _schedule(tmp_path, "")
    assert "resolution is missing" in str(e.value)
    assert "adopted_on is missing" in str(e.value)
    assert "has no 'application' fee" in str(e.value)


def test_an_application_fee_that_is_bad_is_not_also_reported_missing(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as e:
        _schedule(tmp_path, GOOD.replace("application = 150", "application = -1"))
    assert "has no 'application' fee" not in str(e.value)


@pytest.mark.parametrize("body", ["[schedule\n", b"\xff\xfe[schedule]"])
def test_an_unreadable_schedule_is_a_profile_error_naming_the_file(tmp_path: Path, body) -> None:
    p = tmp_path / "fees.toml"
    p.write_bytes(body.encode() if isinstance(body, str) else body)
    with pytest.raises(
        ProfileError,
        match=r"^Cannot read the fee schedule .*fees\.toml: .*Give the TOML file the office keeps \(see examples/\)\.$",
    ):
        load_fee_schedule(p)
    with pytest.raises(ProfileError, match="Cannot read the fee schedule"):
        load_fee_schedule(tmp_path / "missing.toml")


# --- a fee paid (§ 540-8B, § 540-10) ---


def test_a_fee_that_is_the_schedules_amount_within_half_a_cent_is_accepted(tmp_path: Path) -> None:
    s = _schedule(tmp_path)
    assert check_fee("application", 150.0, TODAY, "R1", s, today=TODAY) == []
    assert check_fee("application", 150.004, TODAY, "R1", s, today=TODAY) == []
    assert check_fee("application", 149.996, TODAY, "R1", s, today=TODAY) == []
    assert check_fee("anything", 0.0, TODAY, "R1", None, today=TODAY) == []
    # Exactly half a cent (0.005 - 0.0 is exact in binary) still rounds to the scheduled amount.
    free = _schedule(tmp_path, GOOD.replace("reinspection = 75.5", "reinspection = 0"))
    assert check_fee("reinspection", 0.005, TODAY, "R1", free, today=TODAY) == []


def test_a_fee_off_the_schedule_by_more_than_half_a_cent_is_refused_with_the_resolution(tmp_path: Path) -> None:
    s = _schedule(tmp_path)
    assert check_fee("application", 150.01, TODAY, "R1", s, today=TODAY) == [
        "the amount 150.01 is not the application fee of 150.00 set by R-2026-3 (2026-01-12)."
    ]
    assert check_fee("application", 1500.0, TODAY, "R1", s, today=TODAY) == [
        "the amount 1,500.00 is not the application fee of 150.00 set by R-2026-3 (2026-01-12)."
    ]
    assert check_fee("late", 1.0, TODAY, "R1", s, today=TODAY) == [
        "'late' is not a fee in R-2026-3's schedule (application, reinspection)."
    ]


def test_every_problem_of_a_fee_is_reported_at_once() -> None:
    assert check_fee(" ", -0.01, None, " ", None, today=TODAY) == [
        'the fee has no kind (kind="application", for one).',
        "the amount -0.01 is negative.",
        "the fee has no date paid (paid_on=YYYY-MM-DD).",
        "the fee has no receipt number (receipt=).",
    ]


def test_a_blank_kind_is_not_looked_up_in_the_schedule(tmp_path: Path) -> None:
    s = _schedule(tmp_path)
    assert check_fee(" ", 150.0, TODAY, "R1", s, today=TODAY) == ['the fee has no kind (kind="application", for one).']


def test_a_fee_paid_today_is_accepted_and_tomorrow_is_the_future() -> None:
    assert check_fee("application", 1.0, TODAY, "R1", None, today=TODAY) == []
    tomorrow = date(2026, 6, 16)
    assert check_fee("application", 1.0, tomorrow, "R1", None, today=TODAY) == [
        "paid_on=2026-06-16 is after today on the Village's clock (2026-06-15): "
        "give the day it happened, on or before 2026-06-15."
    ]
    # Without ``today`` the clock's day counts: a day far ahead is always in the future.
    assert check_fee("application", 1.0, date(2999, 1, 1), "R1", None)[0].startswith(
        "paid_on=2999-01-01 is after today on the Village's clock"
    )
    assert check_fee("application", 1.0, date(2000, 1, 1), "R1", None) == []


# --- § 540-8D "a surety bond, cash escrow, or irrevocable letter of credit" ---


@pytest.mark.parametrize("type_", ["surety_bond", "cash_escrow"])
def test_a_bond_or_escrow_has_no_expiry(type_: str) -> None:
    assert check_guarantee(type_, 0.01, TODAY, None, today=TODAY) == []
    assert check_guarantee(type_, 10.0, TODAY, date(2027, 1, 1), today=TODAY) == [
        "only a letter of credit has an expiry date; leave out expires_on=."
    ]


def test_a_letter_of_credit_needs_an_expiry_after_the_day_received() -> None:
    loc = "letter_of_credit"
    assert check_guarantee(loc, 10.0, TODAY, date(2026, 6, 16), today=TODAY) == []
    assert check_guarantee(loc, 10.0, TODAY, None, today=TODAY) == [
        "a letter of credit needs its expiry date (expires_on=)."
    ]
    assert check_guarantee(loc, 10.0, TODAY, TODAY, today=TODAY) == [
        "the expiry 2026-06-15 is not after the date received 2026-06-15."
    ]
    assert check_guarantee(loc, 10.0, None, TODAY, today=TODAY) == [
        "the guarantee has no date received (received_on=)."
    ]


def test_every_problem_of_a_guarantee_is_reported_at_once() -> None:
    assert check_guarantee("cheque", 0.0, date(2026, 6, 16), None, today=TODAY) == [
        "type 'cheque' is not one of surety_bond, cash_escrow, letter_of_credit.",
        "the amount 0.0 is not more than 0.",
        "received_on=2026-06-16 is after today on the Village's clock (2026-06-15): "
        "give the day it happened, on or before 2026-06-15.",
    ]
    assert check_guarantee("cash_escrow", 1.0, date(2999, 1, 1), None)[0].startswith(
        "received_on=2999-01-01 is after today on the Village's clock"
    )
    assert check_guarantee("cash_escrow", 1.0, date(2000, 1, 1), None) == []


# --- what is held: "release the portion ... less any costs incurred", "partial prorated release" ---


def test_the_balance_is_the_amount_less_draws_and_releases_and_zero_after_the_final_release() -> None:
    assert _guarantee().balance == 1000.0
    assert _guarantee(_event("draw", 100.10), _event("release", 200.0), _event("draw", None)).balance == 699.9
    assert _guarantee(_event("draw", 0.1), _event("draw", 0.2), amount=0.3).balance == 0.0
    assert _guarantee(_event("release", 100.0), _event("final_release", None)).balance == 0.0


def test_a_draw_needs_the_written_notice_before_it() -> None:
    """§ 540-8D: "Improper implementation of the plan shall be upon written notice by the administering authority"."""
    g, on = _guarantee(), date(2026, 6, 1)
    ok = {"amount": 50.0, "reason": "silt fence", "today": TODAY}
    assert check_guarantee_event(g, "draw", on, notice_on=on, **ok) == []
    assert check_guarantee_event(g, "draw", on, notice_on=date(2026, 6, 2), **ok) == [
        "the written notice of 2026-06-02 comes after the draw of 2026-06-01; a draw follows the notice."
    ]
    assert check_guarantee_event(g, "draw", on, **ok) == [
        "a draw needs the day of the office's written notice that the plan was not properly implemented "
        "(notice_on=YYYY-MM-DD)."
    ]
    note = {"reason": "silt fence", "notice_on": on, "today": TODAY}
    assert check_guarantee_event(g, "draw", on, amount=None, **note) == ["a draw needs an amount more than 0."]
    assert check_guarantee_event(g, "draw", on, amount=1000.01, **note) == [
        "the draw of 1,000.01 is more than the 1,000.00 still held."
    ]
    assert check_guarantee_event(g, "draw", on, amount=50.0, reason=" ", notice_on=on, today=TODAY) == [
        "a draw needs the reason: the work the office performed (reason=)."
    ]
    assert check_guarantee_event(g, "draw", on, amount=50.0, notice_on=on, today=TODAY) == [
        "a draw needs the reason: the work the office performed (reason=)."
    ]


def test_a_draw_or_release_is_at_most_what_is_held_within_half_a_cent() -> None:
    g, on = _guarantee(_event("draw", 400.0)), date(2026, 6, 1)
    rel = {"stage": "grading", "today": TODAY}
    assert check_guarantee_event(g, "release", on, amount=600.0, **rel) == []
    assert check_guarantee_event(g, "release", on, amount=600.004, **rel) == []
    assert check_guarantee_event(g, "release", on, amount=600.01, **rel) == [
        "the release of 600.01 is more than the 600.00 still held."
    ]
    assert check_guarantee_event(g, "release", on, amount=6000.0, **rel) == [
        "the release of 6,000.00 is more than the 600.00 still held."
    ]
    # Exactly half a cent over (600.0 + 0.005 is 600.005 in binary too) is still what is held.
    assert check_guarantee_event(g, "release", on, amount=600.005, **rel) == []
    half = _guarantee(_event("draw", 999.5))
    assert check_guarantee_event(half, "release", on, amount=0.505, **rel) == []
    assert check_guarantee_event(g, "release", on, amount=0.0, **rel) == ["a release needs an amount more than 0."]
    assert check_guarantee_event(g, "release", on, amount=None, **rel) == ["a release needs an amount more than 0."]
    assert check_guarantee_event(g, "release", on, amount=0.01, today=TODAY) == [
        "a partial release needs the development stage completed (stage=)."
    ]
    assert check_guarantee_event(g, "release", on, amount=0.01, stage=" ", today=TODAY) == [
        "a partial release needs the development stage completed (stage=)."
    ]


def test_the_final_release_needs_the_engineer_of_the_as_built_plans() -> None:
    """§ 540-8D(1): release "upon submission of 'as-built plans' by a licensed professional engineer"."""
    g, on = _guarantee(), date(2026, 6, 1)
    assert check_guarantee_event(g, "final_release", on, engineer="P. Eng", today=TODAY) == []
    need = ["the final release needs the licensed professional engineer of the as-built plans (engineer=)."]
    assert check_guarantee_event(g, "final_release", on, today=TODAY) == need
    assert check_guarantee_event(g, "final_release", on, engineer=" ", today=TODAY) == need


def test_nothing_is_drawn_or_released_once_the_guarantee_is_released_in_full() -> None:
    done = _guarantee(_event("final_release", None))
    assert check_guarantee_event(done, "final_release", date(2026, 6, 1), engineer="E", today=TODAY) == [
        "guarantee #7 is released in full; nothing is left to draw or release."
    ]
    spent = _guarantee(_event("draw", 1000.0))
    assert check_guarantee_event(spent, "final_release", date(2026, 6, 1), engineer="E", today=TODAY) == [
        "guarantee #7 is released in full; nothing is left to draw or release."
    ]
    left = _guarantee(_event("draw", 999.99))
    assert check_guarantee_event(left, "final_release", date(2026, 6, 1), engineer="E", today=TODAY) == []


def test_an_events_date_is_between_the_day_received_and_today() -> None:
    g = _guarantee()
    kw = {"engineer": "E", "today": TODAY}
    assert check_guarantee_event(g, "final_release", date(2026, 4, 1), **kw) == []
    assert check_guarantee_event(g, "final_release", TODAY, **kw) == []
    assert check_guarantee_event(g, "final_release", date(2026, 3, 31), **kw) == [
        "on=2026-03-31 is before the day the guarantee was received (2026-04-01): "
        "give the day it happened, on or after 2026-04-01."
    ]
    assert check_guarantee_event(g, "final_release", date(2026, 6, 16), **kw) == [
        "on=2026-06-16 is after today on the Village's clock (2026-06-15): "
        "give the day it happened, on or before 2026-06-15."
    ]
    assert check_guarantee_event(g, "final_release", None, **kw) == ["the event has no date (on=)."]
    assert check_guarantee_event(g, "final_release", date(2999, 1, 1), engineer="E")[0].startswith(
        "on=2999-01-01 is after today on the Village's clock"
    )
    assert check_guarantee_event(g, "final_release", date(2026, 5, 1), engineer="E") == []
    # A draw without its day cannot be compared with its notice: only the missing day is said.
    assert check_guarantee_event(g, "draw", None, amount=1.0, reason="r", notice_on=TODAY, today=TODAY) == [
        "the event has no date (on=)."
    ]


def test_an_unknown_event_is_refused_alone() -> None:
    assert check_guarantee_event(_guarantee(), "refund", None, today=TODAY) == [
        "'refund' is not one of draw, release, final_release."
    ]


def test_problems_name_the_source_and_the_fix() -> None:
    err = problems("ESC-1", ["a", "b"], "fix it")
    assert isinstance(err, ValidationError)
    assert [(p.source, p.row, p.message, p.fix) for p in err.problems] == [
        ("ESC-1", None, "a", "fix it"),
        ("ESC-1", None, "b", "fix it"),
    ]


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def test_receipts_are_written_private_with_two_decimals_and_never_over_a_file(tmp_path: Path) -> None:
    fee = Fee(1, "ESC-1", "application", 150.0, TODAY, "=R1", "R-2026-3", "clerk", AT)
    out = write_receipts([fee], tmp_path / "r.csv")
    rows = _rows(out)
    assert rows[0] == [
        "permit_number",
        "kind",
        "amount",
        "paid_on",
        "receipt",
        "schedule_resolution",
        "recorded_by",
        "recorded_at",
    ]
    assert rows[1][:4] == ["ESC-1", "application", "150.00", "2026-06-15"]
    assert rows[1][4] != "=R1" and rows[1][4].endswith("=R1")  # a formula is quoted as text
    if os.name == "posix":
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with pytest.raises(OutputFormatError) as e:
        write_receipts([fee], tmp_path / "r.xlsx")
    assert "receipts are written as CSV; name the output .csv." in str(e.value)
    with pytest.raises(OutputExistsError):
        write_receipts([fee], out)
    assert write_receipts([], out, overwrite=True) == out
    assert len(_rows(out)) == 1
