"""Model tests of the whole office (issue 23, item 4): random sequences of the registry's commands.

A Hypothesis state machine (:class:`OfficeModel`) drives the registry's public commands in
random order, on a real GeoPackage file and on the real PostGIS server: applications and
active permits added, fees paid, information requested and received, every move of the life
cycle (review, approval, disapproval, deemed approval, work started, stop-work, retraction,
suspension, reinstatement, revocation, final stabilisation, closing), extensions,
inspections with deficiencies and their repairs, guarantees received, drawn on written
notice, released, enforcement cases with their costs recovered from the guarantee, appeals
filed and decided, and the plan's versions. The office's clock moves forward between steps.

A command the registry refuses (its refusal errors) is a refusal, recorded and counted; any
other exception is a defect. After every step the machine checks these invariants:

1. ``verify``: every projection (the tables people open) equals the history's fold.
2. ``clocks``: no clock starts before the event that starts it; the decision clock of
   § 540-8C(1) runs only for a complete application ("the receipt of a complete permit
   application, as required by § 540-8B", fee included) and starts on or after the day it
   was received, the application fee's day and the day requested information arrived
   (§ 540-8C(4) "from the date the additional information is received").
3. ``money``: no guarantee's balance is below zero, in the history or in the guarantees
   list; every final release pays what was held just before it, "less any costs incurred by
   the administering authority" (§ 540-8D(1)), that is net of draws, releases and the costs
   "recovered from the surety bond, cash escrow, or irrevocable letter of credit" (§ 540-12E).
4. ``orders``: a permit with an open order stands in that order's state (or closed), and a
   permit under a stop-work order becomes active again only by the order's retraction
   (§ 540-12D "may retract the stop-work order") or an appeal's reversal (§ 540-13A(1)).
5. ``grows``: the history only grows: the previous history is a prefix of the new one.
6. ``refusals``: a refused command appends nothing to the history.
7. ``reasons``: every move the profile's ``[lifecycle.written_reasons]`` names carries its
   written reasons, whichever route recorded it: the ordinance's (§ 540-8C(3) "the
   administering authority shall state in writing the reasons for disapproval") or the
   office's policy (a stop-work order and its retraction).

Each example uses a new registry (a GeoPackage in its own folder; a new PostGIS schema).
The settings profile ``office-model`` keeps a run short (``ESC_GIS_MODEL_EXAMPLES`` and
``ESC_GIS_MODEL_STEPS`` run more); the test prints the examples, steps, refusals and
invariant checks it ran.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)

from esc_gis.errors import IllegalTransitionError, PermitNotFoundError, RegistryError, ValidationError
from esc_gis.registry import Application, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.events import HistoryEvent
from esc_gis.registry.domain.fees import APPLICATION_FEE
from esc_gis.registry.domain.fold import PermitState, fold
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.domain.lifecycle import CLOSED_UNDECIDED, STATES, TRANSITIONS, UNDECIDED

from .conftest import CRS, fees_at, square_sqft

UTC = timezone.utc
#: The office's fee schedule in these scenarios (§ 540-10): every fee 150.00, checked against it (§ 540-8B).
FEES = fees_at(150.0, reinspection=150.0)
#: The office's first day in the model, and its last (the registry refuses days in the future).
FIRST = date(2026, 1, 5)
LAST = date(2026, 11, 25)
#: The states an open order stands for.
ORDER_STATES = {"stop_work": "stop_work", "suspension": "suspended", "revocation": "revoked"}
#: The invariants checked after every step (see the module's docstring).
INVARIANTS = ("verify", "clocks", "money", "orders", "grows", "refusals", "reasons")

settings.register_profile(
    "office-model",
    max_examples=int(os.environ.get("ESC_GIS_MODEL_EXAMPLES", "30")),
    stateful_step_count=int(os.environ.get("ESC_GIS_MODEL_STEPS", "40")),
    deadline=None,
    # Reproducible in `make test`; more examples (the variables above) explore further.
    derandomize=not os.environ.get("ESC_GIS_MODEL_EXAMPLES"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    print_blob=True,
)

#: What the runs did, for the closing note: examples, steps, refusals, invariant checks.
STATS: Counter[str] = Counter()

#: The registry's refusals: what a clerk sees for a command the office may not do.
REFUSALS = (ValidationError, IllegalTransitionError, PermitNotFoundError, RegistryError)
#: Messages of RegistryError that are the registry's own defects, never a refusal.
DEFECTS = ("Cannot record", "No history kind")


def _key(e: HistoryEvent) -> tuple[Any, ...]:
    return (e.stream, e.seq, e.kind, e.recorded_at, e.who, e.on, e.when, e.why, dict(e.data))


def _streams(events: list[HistoryEvent]) -> dict[str, list[HistoryEvent]]:
    out: dict[str, list[HistoryEvent]] = {}
    for e in events:
        out.setdefault(e.stream, []).append(e)
    return out


def clock_problems(events: list[HistoryEvent]) -> list[str]:
    """Return where a stream's clocks start before the events that start them (invariant 2)."""
    s = fold(events, application_fee=APPLICATION_FEE)
    out = []
    for name, c in s.clocks.items():
        if c.seq is None or not 1 <= c.seq <= len(events):
            out.append(f"{s.stream}: the {name} clock cites event {c.seq}, not in the history")
            continue
        e = events[c.seq - 1]
        if e.kind != c.event:
            out.append(f"{s.stream}: the {name} clock cites {c.event} #{c.seq}, which is a {e.kind}")
        if e.on is not None and c.start < e.on:
            out.append(f"{s.stream}: the {name} clock starts {c.start}, before its event {e.kind} of {e.on}")
    d = s.decision_clock
    if d is not None:
        if s.status not in ("application_received", "under_review"):
            out.append(f"{s.stream}: a decision clock runs in state {s.status}")
        if s.application_fee_on is None:
            out.append(f"{s.stream}: a decision clock runs without the application fee")
        for what, day in (
            ("received", s.received_on),
            ("fee paid", s.application_fee_on),
            ("information received", s.information_received_on),
        ):
            if day is not None and d.start < day:
                out.append(f"{s.stream}: the decision clock starts {d.start}, before the day {what} ({day})")
    return out


def reasons_problems(events: list[HistoryEvent], needs: dict[str, str]) -> list[str]:
    """Return the moves without the written reasons the profile requires for them (invariant 7)."""
    out = []
    for i, e in enumerate(events):
        if not e.moves or e.kind == "received":
            continue
        move = {"retracted": "retraction", "reinstated": "reinstatement"}.get(e.kind, e.data["to"])
        if move == "closed" and e.data.get("from") in UNDECIDED:
            move = CLOSED_UNDECIDED  # closing an application before its decision (withdrawn or unanswered)
        if move in needs and not (e.why or "").strip():
            out.append(f"{e.stream}: {e.kind} #{e.seq or i + 1} to {e.data['to']} without the reasons ({needs[move]})")
    return out


def money_and_order_problems(events: list[HistoryEvent]) -> list[str]:
    """Fold each prefix of a stream; return where money or orders break invariants 3 and 4."""
    out = []
    prev: PermitState | None = None
    for i, e in enumerate(events):
        s = fold(events[: i + 1], application_fee=APPLICATION_FEE)
        n = e.seq or i + 1
        for gid, g in s.guarantees.items():
            if g.balance < -0.005:
                out.append(f"{s.stream}: guarantee #{gid} balance {g.balance} after {e.kind} #{n}")
        if e.kind == "guarantee_final_release" and prev is not None:
            gid = int(e.data["guarantee_id"])
            held = prev.guarantees[gid].balance
            if abs(float(e.data["amount"] or 0.0) - held) > 0.005:
                out.append(f"{s.stream}: final release of #{gid} paid {e.data['amount']}, {held} was held")
        if s.orders and s.status not in {*(ORDER_STATES[o.kind] for o in s.orders), "closed"}:
            out.append(f"{s.stream}: orders {[o.kind for o in s.orders]} open in state {s.status} (#{n})")
        if s.orders and s.status != "closed" and ORDER_STATES[s.orders[-1].kind] != s.status:
            out.append(f"{s.stream}: the last open order is {s.orders[-1].kind} in state {s.status} (#{n})")
        under = prev is not None and prev.order("stop_work") is not None
        if under and s.status in ("active", "extended") and e.kind != "retracted":
            out.append(f"{s.stream}: active again under a stop-work order by {e.kind} #{n}")
        prev = s
    return out


class OfficeModel(RuleBasedStateMachine):
    """The office's year in random order; see the module's docstring for the invariants."""

    #: Set by the test: make a new registry location, return (target, cleanup).
    make_target: Callable[[], tuple[str, Callable[[], None]]]
    layer_set: Any

    permits = Bundle("permits")
    guarantees = Bundle("guarantees")
    cases = Bundle("cases")
    appeals = Bundle("appeals")
    deficiencies = Bundle("deficiencies")

    def __init__(self) -> None:
        super().__init__()
        target, self._cleanup = type(self).make_target()
        init_registry(target, layers=self.layer_set)
        self.reg = open_registry(target, layers=self.layer_set, calendar=OfficeCalendar(holidays=frozenset()))
        self.day = FIRST
        self.sites = 0
        self.receipts = 0
        self.seen: list[tuple[Any, ...]] = []
        STATS["examples"] += 1

    def teardown(self) -> None:
        try:
            self.reg.close()
        finally:
            self._cleanup()

    # Helpers -----------------------------------------------------------------------------

    def at(self, hour: int = 15) -> datetime:
        """The office's day at ``hour`` UTC (15:00 UTC is morning in Winneconne: the same day)."""
        return datetime.combine(self.day, time(hour), tzinfo=UTC)

    def do(self, name: str, command: Callable[[], Any]) -> Any:
        """Run a command; return its result, or None for a refusal, which must append nothing."""
        STATS["steps"] += 1
        before = [_key(e) for e in self.reg.history()]
        try:
            result = command()
        except REFUSALS as exc:
            if isinstance(exc, RegistryError) and str(exc).startswith(DEFECTS):
                raise
            STATS["refusals"] += 1
            STATS[f"refused {name}"] += 1
            after = [_key(e) for e in self.reg.history()]
            assert after == before, f"the refused {name} appended {after[len(before) :]}"
            STATS["checks refusals"] += 1
            return None
        STATS[f"did {name}"] += 1
        return result

    # The office's clock ------------------------------------------------------------------

    @rule(days=st.sampled_from([1, 2, 5, 12, 30]))  # 30: past the 20 business days of § 540-8C(1)
    def wait(self, days: int) -> None:
        self.day = min(self.day + timedelta(days=days), LAST)

    # Intake ------------------------------------------------------------------------------

    # Every example starts with an active permit holding a guarantee and a complete application,
    # so its steps reach orders, costs and decisions rather than only refusals.
    @initialize(target=permits)
    def an_active_permit(self) -> Any:
        number = self.add(active=True, fee=False)
        if isinstance(number, str):
            self.do(
                "guarantee",
                lambda: self.reg.add_guarantee(number, type="cash_escrow", amount=1000.0, received_on=self.day),
            )
        return number

    @initialize(target=permits)
    def a_complete_application(self) -> Any:
        return self.add(active=False, fee=True)

    @rule(target=permits, active=st.booleans(), fee=st.booleans())
    def add(self, active: bool, fee: bool) -> Any:
        if self.sites >= 4:
            return multiple()
        x = 100 + 300 * self.sites
        self.sites += 1
        extra = {"status": "active", "issued_on": self.day, "started_at": self.at()} if active else {}
        app = Application(f"{x} Model St", self.day, square_sqft(x, 1000, 5000.0), CRS, **extra)
        number = self.do("add", lambda: self.reg.add(app, who="clerk"))
        if number is None:
            return multiple()
        if fee and not active:  # the fee paid with the application: a complete application (§ 540-8B)
            self.pay_fee(number, APPLICATION_FEE, 0)
        return number

    @rule(p=permits, kind=st.sampled_from([APPLICATION_FEE, APPLICATION_FEE, "reinspection"]), back=st.integers(0, 2))
    def pay_fee(self, p: str, kind: str, back: int) -> None:
        self.receipts += 1
        paid = max(self.day - timedelta(days=back), FIRST)
        self.do(
            "fee",
            lambda: self.reg.record_fee(
                p, kind=kind, amount=150.0, paid_on=paid, receipt=f"R{self.receipts}", who="clerk", schedule=FEES
            ),
        )

    # The life cycle ----------------------------------------------------------------------

    @rule(p=permits, to=st.sampled_from(STATES), reasons=st.booleans())
    def transition(self, p: str, to: str, reasons: bool) -> None:
        on: date | datetime = self.at() if to == "active" else self.day
        why = "written reasons given" if reasons else None
        # § 540-8E's written notification: given with the reasons, so a move without both is a refusal.
        notified = self.day if reasons else None
        self.do(
            f"transition {to}",
            lambda: self.reg.transition(p, to, on=on, reasons=why, who="clerk", notified_on=notified),
        )

    @rule(p=permits, pick=st.integers(0, 4), reasons=st.booleans())
    def move(self, p: str, pick: int, reasons: bool) -> None:
        """A move the life cycle allows from where the permit stands (so the model gets far)."""
        try:
            allowed = TRANSITIONS[self.reg.get(p).status]
        except PermitNotFoundError:
            return
        if allowed:
            self.transition(p, allowed[pick % len(allowed)], reasons)

    @rule(p=permits, pick=st.integers(0, 4))
    def move_with_reasons(self, p: str, pick: int) -> None:
        """The same, with written reasons: twice as many moves as any other command."""
        self.move(p, pick, True)

    @rule(p=permits, reasons=st.booleans())
    def retract(self, p: str, reasons: bool) -> None:
        why = "order retracted" if reasons else None
        self.do("retract", lambda: self.reg.retract(p, reasons=why, on=self.day, who="clerk"))

    @rule(p=permits, reasons=st.booleans())
    def reinstate(self, p: str, reasons: bool) -> None:
        why = "suspension lifted" if reasons else None
        self.do("reinstate", lambda: self.reg.reinstate(p, reasons=why, on=self.day, who="clerk"))

    @rule(p=permits, days=st.sampled_from([1, 30, 180]), conditions=st.booleans())
    def extend(self, p: str, days: int, conditions: bool) -> None:
        bmps = ["a second silt fence"] if conditions else []
        self.do(
            "extend", lambda: self.reg.extend(p, days, on=self.day, reasons="more time", conditions=bmps, who="clerk")
        )

    @rule(p=permits)
    def holder_inspected(self, p: str) -> None:
        """The permit holder's inspection of a day, its report kept at the site (§ 540-8E(6))."""
        self.do("holder inspection", lambda: self.reg.update(p, inspected_on=self.day, who="holder"))

    # Inspections -------------------------------------------------------------------------

    @rule(target=deficiencies, p=permits, found=st.integers(0, 2), fix_open=st.booleans())
    def inspect(self, p: str, found: int, fix_open: bool) -> Any:
        try:
            open_ids = [d.id for d in self.reg.get(p).open_repairs]
        except PermitNotFoundError:
            open_ids = []
        report = InspectionReport(
            inspected_at=self.at(16),
            inspector="Ina Inspector",
            assessment="silt fence checked",
            work_done="re-staked fence",
            phase="rough grading",
            deficiencies=[f"deficiency {i}" for i in range(found)],
            repaired=open_ids[:1] if fix_open else (),
        )
        r = self.do("inspect", lambda: self.reg.inspect(p, report, who="ina"))
        if r is None or not r.deficiencies:
            return multiple()
        return multiple(*((p, d.id) for d in r.deficiencies))

    @rule(d=deficiencies, hours=st.integers(1, 30))
    def repair(self, d: tuple[str, int], hours: int) -> None:
        p, i = d
        on = min(self.at(16) + timedelta(hours=hours), datetime.combine(LAST, time(18), tzinfo=UTC))
        self.do("repair", lambda: self.reg.repaired(p, [i], on=on, who="ina", detail="fixed"))

    # Money -------------------------------------------------------------------------------

    @rule(target=guarantees, p=permits, kind=st.sampled_from(["cash_escrow", "surety_bond"]))
    def add_guarantee(self, p: str, kind: str) -> Any:
        g = self.do("guarantee", lambda: self.reg.add_guarantee(p, type=kind, amount=1000.0, received_on=self.day))
        return multiple() if g is None else g.id

    @rule(
        g=guarantees,
        kind=st.sampled_from(["draw", "release", "final_release"]),
        amount=st.sampled_from([100.0, 250.0, 2000.0]),
        notice=st.booleans(),
    )
    def guarantee_event(self, g: int, kind: str, amount: float, notice: bool) -> None:
        self.do(
            f"guarantee {kind}",
            lambda: self.reg.guarantee_event(
                g,
                kind,
                on=self.day,
                amount=amount,
                reason="the office replaced the fence",
                stage="rough grading done",
                engineer="E. Engineer, P.E.",
                notice_on=self.day if notice else None,
            ),
        )

    # Enforcement and appeals ---------------------------------------------------------------

    @rule(target=cases, p=permits, ground=st.sampled_from(["A2", "A4"]))
    def enforce(self, p: str, ground: str) -> Any:
        c = self.do(
            "enforce",
            lambda: self.reg.enforce(ground=ground, on=self.day, reasons="fence down", permit_number=p, who="ed"),
        )
        return multiple() if c is None else c.case_id

    @rule(
        c=cases,
        kind=st.sampled_from(
            ["notified", "stop_work", "stop_work", "notice", "costs", "referral", "retraction", "closed"]
        ),
        costs=st.sampled_from([None, 80.0, 5000.0]),
        costs_from=st.sampled_from(["guarantee", "guarantee", "billed"]),
        reasons=st.booleans(),
    )
    def case_action(self, c: str, kind: str, costs: float | None, costs_from: str, reasons: bool) -> None:
        self.do(
            f"case {kind}",
            lambda: self.reg.case_action(
                c,
                kind,
                on=self.day,
                reasons="written reasons" if reasons else None,
                costs=costs,
                costs_from=costs_from if costs is not None else None,
                who="ed",
            ),
        )

    @rule(c=cases, costs=st.sampled_from([80.0, 400.0]), pick=st.integers(0, 2))
    def case_next(self, c: str, costs: float, pick: int) -> None:
        """The case's next step (so the model reaches costs recovered from the guarantee, § 540-12E)."""
        kinds = [e.kind for e in self.reg.case(c).events]
        if "stop_work" not in kinds:
            kind = "stop_work"
        elif "notice" not in kinds:
            kind = "notice"
        else:
            kind = ("costs", "retraction", "referral")[pick]
        cost = costs if kind in ("notice", "costs") else None
        self.case_action(c, kind, cost, "guarantee", True)

    @rule(
        target=appeals,
        p=permits,
        c=st.none() | cases,
        kind=st.sampled_from(["stop_work_order", "revocation", "suspension", "permit_decision", "notice_of_intent"]),
    )
    def appeal(self, p: str, c: str | None, kind: str) -> Any:
        a = self.do(
            "appeal",
            lambda: self.reg.appeal(
                appealed=f"the {kind.replace('_', ' ')}",
                kind=kind,
                appellant="Pat Builder",
                appellant_kind="aggrieved_person",
                on=self.day,
                grounds="the fence was standing",
                permit_number=None if c else p,
                case_id=c,
                who="clerk",
            ),
        )
        return multiple() if a is None else a.appeal_id

    @rule(
        a=appeals,
        body=st.sampled_from(["zoning_board_of_appeals", "village_board"]),
        outcome=st.sampled_from(["reversed", "reversed", "upheld", "variance"]),
    )
    def decide_appeal(self, a: str, body: str, outcome: str) -> None:
        # A variance rests on § 540-13A(2)'s findings, named; other outcomes have none.
        found = ("public_interest", "special_conditions", "unnecessary_hardship") if outcome == "variance" else ()
        self.do(
            f"appeal {outcome}",
            lambda: self.reg.decide_appeal(
                a, body=body, outcome=outcome, on=self.day, conditions="keep the fence", findings=found, who="clerk"
            ),
        )

    # The plan ----------------------------------------------------------------------------

    @rule(p=permits, trigger=st.sampled_from(["original", "B1", "B2", "B3"]), notice=st.booleans())
    def amend(self, p: str, trigger: str, notice: bool) -> None:
        if notice:
            self.do(
                "notify amendment",
                lambda: self.reg.notify_amendment(
                    p, trigger=trigger, description="runoff leaves the site", notified_on=self.day, who="clerk"
                ),
            )
            return
        self.do(
            f"amend {trigger}",
            lambda: self.reg.amend(
                p,
                trigger=trigger,
                description="second basin at the west outlet",
                plan_date=self.day,
                permission_on=None if trigger == "original" else self.day,
                permission_by=None if trigger == "original" else "Director of Public Works",
                who="clerk",
            ),
        )

    # Invariants --------------------------------------------------------------------------

    @invariant()
    def projections_equal_the_fold(self) -> None:
        assert [str(d) for d in self.reg.verify()] == []
        STATS["checks verify"] += 1

    @invariant()
    def the_history_holds_the_law(self) -> None:
        history = self.reg.history()
        keys = [_key(e) for e in history]
        # 5. The history only grows: what was there is still there, in its order (per stream).
        old, new = _streams_keys(self.seen), _streams_keys(keys)
        for stream, evs in old.items():
            assert new.get(stream, [])[: len(evs)] == evs, f"the history of {stream} changed"
        self.seen = keys
        STATS["checks grows"] += 1
        problems: list[str] = []
        for events in _streams(history).values():
            problems += clock_problems(events)
            STATS["checks clocks"] += 1
            problems += money_and_order_problems(events)
            STATS["checks money"] += 1
            STATS["checks orders"] += 1
            problems += reasons_problems(events, self.reg.written_reasons)
            STATS["checks reasons"] += 1
        for g in self.reg.guarantees():
            if g.balance < -0.005:
                problems.append(f"guarantee #{g.id} balance {g.balance} in the guarantees list")
        assert problems == []


def _streams_keys(keys: list[tuple[Any, ...]]) -> dict[str, list[tuple[Any, ...]]]:
    out: dict[str, list[tuple[Any, ...]]] = {}
    for k in keys:
        out.setdefault(k[0], []).append(k)
    return out


# --- The invariants' own checks: each catches the break it is for ----------------------------

T = datetime(2026, 1, 5, 15, tzinfo=UTC)


def ev(kind: str, on: date | None = None, **data: Any) -> HistoryEvent:
    return HistoryEvent("P", kind, T, "clerk", on=on, data=data)


def test_the_clock_invariant_catches_a_clock_before_its_event() -> None:
    """§ 540-8C(1): 20 business days "of the receipt of a complete permit application"."""
    good = [
        ev("received", date(2026, 1, 5), to="application_received"),
        ev("fee_paid", date(2026, 1, 9), fee_kind=APPLICATION_FEE, amount=1.0, receipt="R"),
    ]
    assert clock_problems(good) == []
    # A fee dated before the day it is recorded: the clock still starts on the fee's day or later.
    assert fold(good).decision_clock.start == date(2026, 1, 9)


def test_the_money_invariant_catches_a_release_not_net_of_recovered_costs() -> None:
    """§ 540-8D(1): the guarantee is released "less any costs incurred by the administering authority"."""
    events = [
        ev("received", date(2026, 1, 5), to="active"),
        ev("guarantee_received", date(2026, 1, 6), guarantee_id=1, type="cash_escrow", amount=1000.0),
        ev("costs_recorded", date(2026, 2, 1), case_id="C", amount=80.0, recovered_from="guarantee", guarantee_id=1),
    ]
    assert money_and_order_problems([*events, ev("guarantee_final_release", None, guarantee_id=1, amount=920.0)]) == []
    bad = money_and_order_problems([*events, ev("guarantee_final_release", None, guarantee_id=1, amount=1000.0)])
    assert bad == ["P: final release of #1 paid 1000.0, 920.0 was held"]


def test_the_order_invariant_catches_work_resumed_under_a_stop_work_order() -> None:
    """§ 540-12D: "may retract the stop-work order"; nothing else lifts it."""
    events = [
        ev("received", date(2026, 1, 5), to="active"),
        ev("stop_work_posted", date(2026, 2, 1), **{"from": "active", "to": "stop_work"}),
    ]
    assert money_and_order_problems(events) == []
    resumed = [*events, ev("work_started", date(2026, 2, 2), **{"from": "stop_work", "to": "active"})]
    assert money_and_order_problems(resumed) == [
        "P: orders ['stop_work'] open in state active (#3)",
        "P: the last open order is stop_work in state active (#3)",
        "P: active again under a stop-work order by work_started #3",
    ]
    lifted = [*events, ev("retracted", date(2026, 2, 2), **{"from": "stop_work", "to": "active"})]
    assert money_and_order_problems(lifted) == []


# --- Defects the model found, each pinned on both back ends -----------------------------------


def test_a_bare_move_to_extended_is_refused_and_extend_records_the_days(reg) -> None:
    """§ 540-8G: "The administering authority may extend the period one or more times for up to an
    additional 180 days." The model found ``transition(P, "extended")`` crashing on an extension
    event without its days (``RegistryError: extended needs 'days'``); it is refused, naming extend."""
    from .conftest import add_active

    n = add_active(reg)
    with pytest.raises(IllegalTransitionError, match=r"needs its days.*permits extend REGISTRY .* DAYS"):
        reg.transition(n, "extended", on=date(2026, 11, 20))
    assert reg.get(n).status == "active" and [e.kind for e in reg.history(n)] == ["received"]
    p = reg.extend(n, 30, on=date(2026, 11, 20))
    assert p.status == "extended" and reg.state(n).extensions_days == [30]


def test_review_after_the_fee_keeps_the_event_that_started_the_decision_clock(reg) -> None:
    """§ 540-8C(1): "Within 20 business days of the receipt of a complete permit application". The
    model found the clock, started by the fee on 2026-01-20, re-stamped by the move under review on
    2026-01-21 (a clock citing an event dated after its start)."""
    n = reg.add(Application("1 Clock St", date(2026, 1, 5), square_sqft(100, 1000, 5000.0), CRS), who="c")
    reg.record_fee(n, kind=APPLICATION_FEE, amount=150.0, paid_on=date(2026, 1, 20), receipt="R1", schedule=FEES)
    reg.transition(n, "under_review", on=date(2026, 1, 21))
    clock = reg.state(n).decision_clock
    assert clock is not None and (clock.start, clock.seq, clock.event) == (date(2026, 1, 20), 2, "fee_paid")
    assert clock_problems(reg.history(n)) == []


def test_lifting_a_stop_work_order_by_a_plain_move_needs_the_retractions_reasons(reg) -> None:
    """§ 540-12D: "may retract the stop-work order issued under § 540-12A"; the office's policy asks
    written reasons of a retraction. The model found ``transition(P, "active")`` from stop_work, the
    same retraction in the history, recorded without them while ``retract`` refuses."""
    from .conftest import add_active

    n = add_active(reg)
    reg.transition(n, "stop_work", on=date(2026, 11, 20), reasons="fence down")
    with pytest.raises(IllegalTransitionError, match=r"is its retraction, which needs written reasons \(basis policy"):
        reg.transition(n, "active", on=date(2026, 11, 21))
    assert reg.get(n).status == "stop_work" and reasons_problems(reg.history(n), reg.written_reasons) == []
    p = reg.transition(n, "active", on=date(2026, 11, 21), reasons="fence restored")
    assert p.status == "active" and [e.kind for e in reg.history(n)][-1] == "retracted"
    assert reg.state(n).orders == []


# --- The model, on both back ends ---------------------------------------------------------------


@pytest.fixture(params=["gpkg", "postgis"])
def make_target(request: pytest.FixtureRequest) -> Callable[[], tuple[str, Callable[[], None]]]:
    """A factory of new registry locations on one back end, each with its cleanup."""
    if request.param == "gpkg":

        def gpkg() -> tuple[str, Callable[[], None]]:
            folder = Path(tempfile.mkdtemp(prefix="esc_model_"))
            return str(folder / "permits.gpkg"), lambda: shutil.rmtree(folder, ignore_errors=True)

        return gpkg
    url = request.getfixturevalue("pg_url")
    import psycopg

    def postgis() -> tuple[str, Callable[[], None]]:
        schema = f"m_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
            conn.execute(f"CREATE SCHEMA {schema}")

        def drop() -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")

        return f"{url}?options={quote(f'-csearch_path={schema},public')}", drop

    return postgis


def test_the_office_holds_its_invariants_under_random_commands(make_target, layer_set) -> None:
    """Every invariant of the module's docstring holds after every step of every example."""
    STATS.clear()
    OfficeModel.make_target = staticmethod(make_target)  # type: ignore[assignment]
    OfficeModel.layer_set = layer_set
    run_state_machine_as_test(OfficeModel, settings=settings.get_profile("office-model"))
    checks = sum(v for k, v in STATS.items() if k.startswith("checks "))
    print(
        f"\noffice model: {STATS['examples']} examples, {STATS['steps']} commands "
        f"({STATS['refusals']} refused), {len(INVARIANTS)} invariants, {checks} invariant checks"
    )
    print("  " + ", ".join(f"{k}: {v}" for k, v in sorted(STATS.items()) if k.startswith(("did ", "refused "))))
    assert STATS["examples"] >= 1 and STATS["steps"] > STATS["refusals"]  # the model did things, not only refusals
