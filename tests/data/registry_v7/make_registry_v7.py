"""Make the schema-version-7 permit registry fixture with esc_gis's own API (run it at commit f1179c0).

The registry holds a small Village of Winneconne year in November 2026: a permit in every
state of the life cycle, each reached by real transitions (or imported straight into
``active``), inspection reports with deficiencies, repairs and photos, enforcement cases,
appeals, fees, financial guarantees and plan versions, and a common plan of two permits.
Everything is MADE UP (sites, people, amounts). A migration of the registry must keep what
``expected.json`` lists; this script writes that too.

Usage (from the repository root, with the code of commit f1179c0 installed)::

    .venv/bin/python tests/data/registry_v7/make_registry_v7.py tests/data/registry_v7/registry_v7.gpkg \\
        --expected tests/data/registry_v7/expected.json
    .venv/bin/python tests/data/registry_v7/make_registry_v7.py 'postgresql://...?options=-csearch_path%3Dfix,public'

Every fact is dated explicitly, between 2026-11-01 and 2026-11-30, and typed times carry their
offset (CST, UTC-6: daylight time ended on 2026-11-01). The registry refuses facts dated in the
future, so the machine's clock must be past 2026-11-30. The history's ``at`` and ``recorded_at``
columns are the clock at the time of the run (the API stamps them), so they differ run to run;
``expected.json`` holds only what does not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import geopandas as gpd
import shapely
from esc_gis.registry.calendar import OfficeCalendar
from esc_gis.registry.fees import load_fee_schedule
from esc_gis.registry.inspections import InspectionReport
from esc_gis.registry.schema import TABLES

from esc_gis import load_layers, load_profile
from esc_gis.registry import Application, Party, init_registry, open_registry
from esc_gis.screening import screen

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"
FEES = ROOT / "examples" / "fee-schedule.example.toml"
PHOTO_1 = ROOT / "examples" / "demo" / "inspection_photo_made_up.png"
PHOTO_2 = HERE / "inspection_photo_2_made_up.png"
UNPERMITTED = ROOT / "examples" / "demo" / "unpermitted_site.geojson"
CRS = "EPSG:7594"  # the demo layer set's measuring CRS (US feet)
CST = timezone(timedelta(hours=-6), "CST")
SIDE_FT = 5000.0**0.5  # a 5,000 sq ft square: over the 4,000 sq ft permit threshold
PLAN = "PLAN-MILL-RUN"  # the common plan of development of permits A and N


def d(day: int) -> date:
    """A day of November 2026."""
    return date(2026, 11, day)


def t(day: int, hour: int, minute: int = 0) -> datetime:
    """A time of November 2026 on the office's clock (CST), with its offset."""
    return datetime(2026, 11, day, hour, minute, tzinfo=CST)


def square(i: int) -> shapely.Polygon:
    """Site i: a 5,000 sq ft square on a row of sites inside the Village, clear of water and of each other."""
    x, y = 743300.0 + 110.0 * i, 503500.0
    return shapely.box(x, y, x + SIDE_FT, y + SIDE_FT)


def half(i: int) -> shapely.Polygon:
    """The western half of site i (2,500 sq ft): disturbed limits under the threshold on their own."""
    x0, y0, x1, y1 = square(i).bounds
    return shapely.box(x0, y0, (x0 + x1) / 2, y1)


def owners(n: int) -> tuple[Party, ...]:
    """A made-up landowner and responsible party."""
    return (
        Party("landowner", f"Made-up Owner {n}", phone="920-555-01{n:02d}", email=f"owner{n}@example.com"),
        Party("responsible_party", f"Made-up Builder {n}", organization=f"Example Builders {n} LLC"),
    )


class Script:
    """The registry's steps, each dated; :meth:`run` replays them in date order, as an office records them.

    ``nums`` maps a permit's letter (A, B, ...) to the number the registry gives it, ``ids``
    holds the ids of what later steps refer to (deficiencies, guarantees, cases, appeals).
    """

    def __init__(self, reg: Any, schedule: Any) -> None:
        self.reg = reg
        self.schedule = schedule
        self.nums: dict[str, str] = {}
        self.ids: dict[str, Any] = {}
        self.steps: list[tuple[date, int, Callable[[], object]]] = []

    def on(self, day: date) -> Callable[[Callable[[], object]], Callable[[], object]]:
        """Decorate a step that happens on ``day``."""

        def deco(fn: Callable[[], object]) -> Callable[[], object]:
            self.steps.append((day, len(self.steps), fn))
            return fn

        return deco

    def run(self) -> None:
        """Run the steps in date order (same day: in the order written)."""
        for _day, _n, fn in sorted(self.steps, key=lambda s: (s[0], s[1])):
            fn()

    def add(self, key: str, i: int, received: date, *, plan: bool = False, parties: int = 0) -> None:
        """Permit ``key`` received on site i (on the common plan: only its western half disturbed)."""

        @self.on(received)
        def _() -> None:
            app = Application(
                f"{100 + i} Made-up Rd",
                received,
                square(i),
                CRS,
                disturbed=half(i) if plan else None,
                parcel_id=f"FIX-{key}",
                parties=owners(parties) if parties else (),
                plan_id=PLAN if plan else None,
            )
            self.nums[key] = self.reg.add(app, who="clerk")

    def fee(self, key: str, day: date, kind: str = "application") -> None:
        """A fee of the (made-up) schedule paid on ``day``; receipts numbered in the order paid."""

        @self.on(day)
        def _() -> None:
            receipt = f"FIX-R-{len(self.reg.fees()) + 1:04d}"
            amount = self.schedule.amounts[kind]
            self.reg.record_fee(
                self.nums[key],
                kind=kind,
                amount=amount,
                paid_on=day,
                receipt=receipt,
                schedule=self.schedule,
                who="clerk",
            )

    def move(self, key: str, to: str, on: date | datetime, reasons: str | None = None, who: str = "zoning") -> None:
        """A transition of permit ``key``."""

        @self.on(on.date() if isinstance(on, datetime) else on)
        def _() -> None:
            self.reg.transition(self.nums[key], to, on=on, reasons=reasons, who=who)

    def reviewed(self, key: str, i: int, received: date, review: date, *, parties: int = 0) -> None:
        """Received with its fee, then under review (an application is complete with its fee, § 540-8B)."""
        self.add(key, i, received, parties=parties)
        self.fee(key, received)
        self.move(key, "under_review", review, who="clerk")

    def started(self, key: str, i: int, approved: date, start: datetime) -> None:
        """Received 11-02 with its fee, under review 11-03, approved, and work begun at ``start``."""
        self.reviewed(key, i, d(2), d(3), parties=i)
        self.move(key, "approved", approved)
        self.move(key, "active", start)


def intake(s: Script) -> None:
    """A, N (a common plan), B, C, D, E, F: intake and review, up to the decision."""
    # A: received, on a common plan; N: the plan's second permit, which re-measures A (a
    # `remeasured` event: 5,000 sq ft over the plan, permit now required).
    s.add("A", 0, d(23), plan=True, parties=1)
    s.add("N", 1, d(24), plan=True)
    # B: incomplete (information requested, § 540-8C(4)).
    s.add("B", 2, d(16))
    s.fee("B", d(16))
    s.move("B", "incomplete", d(18), who="clerk")
    # C: information requested, then received: under review again.
    s.add("C", 3, d(9))
    s.fee("C", d(9))
    s.move("C", "incomplete", d(10), who="clerk")
    s.move("C", "under_review", d(12), who="clerk")
    # D: approved.
    s.reviewed("D", 4, d(2), d(3))
    s.move("D", "approved", d(10))
    # E: deemed approved (§ 540-8C(5)): received Sunday 11-01, its 20 business days ran out on
    # Friday 11-27; recorded Monday 11-30, the registry dates it 11-27.
    s.reviewed("E", 5, d(1), d(2))
    s.move("E", "deemed_approved", d(30))
    # F: disapproved with written reasons (§ 540-8C(3)).
    s.reviewed("F", 6, d(3), d(4))
    s.move("F", "disapproved", d(19), "The plan has no sediment controls on the downslope (south) edge.")


def imported_active(s: Script) -> None:
    """G: imported already active; field updates, an inspection day, two reports, plan versions, other fees."""
    reg, nums, ids = s.reg, s.nums, s.ids
    corner = shapely.Point(square(7).bounds[0] + 10.0, square(7).bounds[1] + 10.0)

    @s.on(d(4))
    def _() -> None:
        app = Application(
            "107 Made-up Rd",
            d(2),
            square(7),
            CRS,
            parcel_id="FIX-G",
            parties=owners(7),
            status="active",
            issued_on=d(3),
            started_at=t(4, 7, 30),
        )
        nums["G"] = reg.add_many([app], who="clerk", source="fixture import", kind="imported")[0]

    @s.on(d(4))
    def _() -> None:
        reg.amend(
            nums["G"], trigger="original", description="Plan as approved with the permit", plan_date=d(2), who="zoning"
        )

    @s.on(d(9))
    def _() -> None:
        reg.update(nums["G"], start_notice_at=t(4, 6, 45), stockpile_since=d(9), who="clerk")

    @s.on(d(10))
    def _() -> None:
        reg.amend(
            nums["G"],
            trigger="B1",
            description="Construction entrance moved to the east side",
            plan_date=d(9),
            permission_on=d(10),
            permission_by="Made-up Zoning Administrator",
            requested_by="Made-up Builder 7",
            who="zoning",
        )

    s.fee("G", d(10), "plan_amendment")

    @s.on(d(11))
    def _() -> None:
        reg.update(nums["G"], inspected_on=d(11), who="inspector")

    @s.on(d(12))
    def _() -> None:
        report = InspectionReport(
            t(12, 10),
            "Made-up Inspector",
            "Silt fence sagging on the south side; inlet protection full of sediment",
            work_done="Tracking pad re-graveled",
            phase="Rough grading",
            deficiencies=("Silt fence down along the south edge", "Inlet protection at the catch basin clogged"),
            photos=(PHOTO_1,),
            location=corner,
            notified_at=t(12, 11),
        )
        ids["deficiencies"] = [x.id for x in reg.inspect(nums["G"], report, who="inspector").deficiencies]

    @s.on(d(13))  # the first deficiency repaired, recorded on its own
    def _() -> None:
        reg.repaired(
            nums["G"], [ids["deficiencies"][0]], on=t(13, 9), detail="Fence re-set and staked", who="inspector"
        )

    @s.on(d(19))  # the second found repaired by the next inspection, which finds a new one
    def _() -> None:
        report = InspectionReport(
            t(19, 10),
            "Made-up Inspector",
            "Inlet protection replaced; a stockpile left uncovered",
            work_done="Inlet protection replaced",
            phase="Foundations",
            deficiencies=("Stockpile on the north side not covered",),
            photos=(PHOTO_2,),
            repaired=(ids["deficiencies"][1],),
        )
        reg.inspect(nums["G"], report, who="inspector")

    s.fee("G", d(19), "reinspection")

    @s.on(d(19))
    def _() -> None:
        reg.notify_amendment(
            nums["G"],
            trigger="B3",
            notified_on=d(19),
            requested_by="Made-up Inspector",
            description="Add inlet protection at the new catch basin",
            who="zoning",
        )

    @s.on(d(20))
    def _() -> None:
        reg.update(nums["G"], work_stopped_on=d(20), resume_expected_on=d(30), who="clerk")

    @s.on(d(24))  # answers the notice of 11-19
    def _() -> None:
        reg.amend(
            nums["G"],
            trigger="B3",
            description="Inlet protection at the new catch basin",
            plan_date=d(23),
            permission_on=d(24),
            permission_by="Made-up Zoning Administrator",
            requested_by="Made-up Builder 7",
            who="zoning",
        )


def undone(s: Script) -> None:
    """H and J: a stop-work order reversed on appeal, one retracted, a suspension lifted."""
    reg, nums, ids = s.reg, s.nums, s.ids
    # H: a stop-work order appealed and reversed by the Zoning Board of Appeals, then extended.
    s.started("H", 8, d(5), t(6, 7))
    s.move("H", "stop_work", d(9), "No silt fence on the south edge; sediment in the street (540-12A).")

    @s.on(d(10))
    def _() -> None:
        ids["appeal_H"] = reg.appeal(
            appealed="Stop-work order of 2026-11-09",
            appellant="Made-up Builder 8",
            appellant_kind="aggrieved_person",
            on=d(10),
            grounds="The fence was up; a storm knocked it down",
            permit_number=nums["H"],
            kind="stop_work_order",
            who="clerk",
        ).appeal_id

    @s.on(d(16))
    def _() -> None:
        reg.decide_appeal(ids["appeal_H"], body="zoning_board_of_appeals", outcome="reversed", on=d(16), who="clerk")

    @s.on(d(20))
    def _() -> None:
        reg.extend(nums["H"], 120, on=d(20), reasons="Paving moved to spring", who="zoning")

    # J: a stop-work order retracted, a suspension lifted (reinstatement), then final stabilisation.
    s.started("J", 10, d(4), t(5, 8))
    s.move("J", "stop_work", d(10), "Sediment tracked onto the road (540-12A).")

    @s.on(d(11))
    def _() -> None:
        reg.retract(nums["J"], reasons="Road swept and a tracking pad built", on=d(11), who="zoning")

    s.move("J", "suspended", d(16), "Plan not implemented in good faith: no stabilisation (540-8E).")

    @s.on(d(18))
    def _() -> None:
        reg.reinstate(nums["J"], reasons="Site seeded and mulched", on=d(18), who="zoning")

    s.move("J", "final_stabilization", d(27))


def case_on_permit(s: Script) -> None:
    """I: a letter of credit, partly released; an enforcement case on the permit (§ 540-12A(3)).

    The case's stop-work order moves the permit to stop_work; a notice of intent follows, and
    the office's costs are recovered from the guarantee (a draw for them).
    """
    reg, nums, ids = s.reg, s.nums, s.ids
    s.started("I", 9, d(4), t(5, 7))

    @s.on(d(4))
    def _() -> None:
        ids["loc"] = reg.add_guarantee(
            nums["I"],
            type="letter_of_credit",
            amount=5000.0,
            received_on=d(4),
            expires_on=date(2027, 6, 30),
            who="clerk",
        ).id

    @s.on(d(12))
    def _() -> None:
        reg.guarantee_event(
            ids["loc"], "release", on=d(12), amount=1000.0, stage="Phase 1 lots stabilised", who="zoning"
        )

    @s.on(d(16))
    def _() -> None:
        reasons = "Inlet protection missing for two weeks despite notice"
        ids["case_I"] = reg.enforce(
            ground="A3", on=d(16), reasons=reasons, permit_number=nums["I"], who="zoning"
        ).case_id

    @s.on(d(17))
    def _() -> None:
        reg.case_action(
            ids["case_I"], "stop_work", on=d(17), reasons="Stop-work order posted at the entrance", who="zoning"
        )

    @s.on(d(18))
    def _() -> None:
        reasons = "Notice of intent: the office will install the inlet protection"
        reg.case_action(ids["case_I"], "notice", on=d(18), reasons=reasons, who="zoning")

    @s.on(d(25))
    def _() -> None:
        reasons = "Inlet protection installed by the office"
        reg.case_action(
            ids["case_I"], "costs", on=d(25), costs=400.0, costs_from="guarantee", reasons=reasons, who="zoning"
        )
        reasons = "Office installed the inlet protection (notice of intent)"
        reg.guarantee_event(ids["loc"], "draw", on=d(25), amount=400.0, reason=reasons, who="zoning")


def standing(s: Script) -> None:
    """K and L: a suspension and a revocation that stand, their appeals pending and upheld."""
    reg, nums, ids = s.reg, s.nums, s.ids
    # K: suspended, its appeal pending (no decision).
    s.started("K", 11, d(5), t(9, 7))
    s.move("K", "suspended", d(23), "Conditions of the permit not met: no weekly inspections (540-8E).")

    @s.on(d(25))
    def _() -> None:
        reg.appeal(
            appealed="Suspension of 2026-11-23",
            appellant="Made-up Owner 11",
            appellant_kind="aggrieved_person",
            on=d(25),
            grounds="The inspections were done but not filed",
            permit_number=nums["K"],
            kind="suspension",
            who="clerk",
        )

    # L: revoked; the appeal of the revocation upheld.
    s.started("L", 12, d(5), t(6, 7))
    s.move("L", "revoked", d(20), "Repeated violations after written notification (540-8E, 540-12B).")

    @s.on(d(23))
    def _() -> None:
        ids["appeal_L"] = reg.appeal(
            appealed="Revocation of 2026-11-20",
            appellant="Made-up Owner 12",
            appellant_kind="aggrieved_person",
            on=d(23),
            grounds="The violations were repaired",
            permit_number=nums["L"],
            kind="revocation",
            who="clerk",
        ).appeal_id

    @s.on(d(30))
    def _() -> None:
        reg.decide_appeal(ids["appeal_L"], body="zoning_board_of_appeals", outcome="upheld", on=d(30), who="clerk")


def closed(s: Script) -> None:
    """M: stabilised and closed; its cash escrow released in full on the as-built plans."""
    reg, nums, ids = s.reg, s.nums, s.ids
    s.started("M", 13, d(4), t(5, 7))

    @s.on(d(4))
    def _() -> None:
        ids["escrow"] = reg.add_guarantee(
            nums["M"], type="cash_escrow", amount=1500.0, received_on=d(4), who="clerk"
        ).id

    s.move("M", "final_stabilization", d(24))

    @s.on(d(27))
    def _() -> None:
        reg.guarantee_event(ids["escrow"], "final_release", on=d(27), engineer="Made-up Engineer, P.E.", who="zoning")

    s.move("M", "closed", d(30))


def unpermitted(s: Script, folder: Path) -> None:
    """U: a case on a screened site with no permit (§ 540-12A(1)): appealed, billed, referred, closed."""
    reg, ids = s.reg, s.ids

    @s.on(d(9))
    def _() -> None:
        # The case opens on a screening output that says a permit is required there.
        out = screen(gpd.read_file(UNPERMITTED), layers=reg.layers, profile=reg.profile)
        path = folder / "unpermitted_screening.gpkg"
        out[["site_id", "permit", "geometry"]].to_file(path, layer="screening")
        reasons = "Fill pad graded, about 6,400 sq ft; no permit applied for"
        ids["case_U"] = reg.enforce(
            ground="A1", on=d(9), reasons=reasons, site_layer=path, site_id="U01", who="zoning"
        ).case_id

    @s.on(d(10))
    def _() -> None:
        reg.case_action(ids["case_U"], "stop_work", on=d(10), reasons="Stop-work order posted at the pad", who="zoning")

    @s.on(d(11))
    def _() -> None:
        ids["appeal_U"] = reg.appeal(
            appealed="Stop-work order of 2026-11-10",
            appellant="Made-up Landowner U",
            appellant_kind="aggrieved_person",
            on=d(11),
            grounds="Says the pad is under the permit threshold",
            case_id=ids["case_U"],
            kind="stop_work_order",
            who="clerk",
        ).appeal_id

    @s.on(d(16))
    def _() -> None:
        reg.decide_appeal(ids["appeal_U"], body="village_board", outcome="upheld", on=d(16), who="clerk")

    @s.on(d(17))
    def _() -> None:
        reasons = "Notice of intent: the office will stabilise the pad"
        reg.case_action(ids["case_U"], "notice", on=d(17), reasons=reasons, who="zoning")

    @s.on(d(24))
    def _() -> None:
        reasons = "Pad seeded and mulched by the office"
        reg.case_action(
            ids["case_U"], "costs", on=d(24), costs=850.0, costs_from="billed", reasons=reasons, who="zoning"
        )

    @s.on(d(25))
    def _() -> None:
        reasons = "Referred for a cease-and-desist order: grading went on"
        reg.case_action(ids["case_U"], "referral", on=d(25), reasons=reasons, who="zoning")

    @s.on(d(30))
    def _() -> None:
        reg.case_action(ids["case_U"], "closed", on=d(30), reasons="Costs paid; the pad is stabilised", who="zoning")


def build(target: str) -> dict[str, Any]:
    """Create the registry at ``target`` and fill it; return the facts a migration must keep."""
    layers = load_layers(LAYERS, profile=load_profile())
    applied = init_registry(target, layers=layers)
    if applied != [1, 2, 3, 4, 5, 6, 7]:
        msg = f"{target} is not a new registry (migrations applied: {applied}); give a new file or an empty schema."
        raise SystemExit(msg)
    with (
        open_registry(target, layers=layers, calendar=OfficeCalendar(holidays=frozenset())) as reg,
        tempfile.TemporaryDirectory() as folder,
    ):
        s = Script(reg, load_fee_schedule(FEES))
        intake(s)
        imported_active(s)
        undone(s)
        case_on_permit(s)
        standing(s)
        closed(s)
        unpermitted(s, Path(folder))
        s.run()
        return expected(reg)


def expected(reg: Any) -> dict[str, Any]:
    """Return what a migration must keep: row counts, photo checksums, permits' states and dates, balances, cases."""
    b = reg.backend
    counts = {}
    with b.read() as cur:
        for table in [*TABLES, "esc_gis_schema"]:
            cur.execute(f'SELECT COUNT(*) FROM "{table}"')
            counts[table] = int(cur.fetchone()[0])
        cur.execute("SELECT id FROM inspection_photos ORDER BY id")
        photo_ids = [int(r[0]) for r in cur.fetchall()]
    photos = {}
    for pid in photo_ids:
        ph = reg.photo(pid)  # checks the bytes against the recorded SHA-256
        assert ph.data is not None
        photos[str(pid)] = {"filename": ph.filename, "sha256": hashlib.sha256(ph.data).hexdigest()}

    def iso(v: Any) -> str | None:
        if isinstance(v, datetime):
            return v.astimezone(timezone.utc).isoformat()
        return None if v is None else v.isoformat()

    fields = ("parcel_id", "status", "received_on", "decided_on", "issued_on", "expires_on", "started_at", "final_on")
    return {
        "schema_version": 7,
        "tables": counts,
        "photos": photos,
        "permits": {
            p.permit_number: {
                f: iso(getattr(p, f)) if f not in ("parcel_id", "status") else getattr(p, f) for f in fields
            }
            for p in reg.permits()
        },
        "guarantees": {
            str(g.id): {"permit_number": g.permit_number, "type": g.type, "balance": round(g.balance, 2)}
            for g in reg.guarantees()
        },
        "cases": {c.case_id: {"permit_number": c.permit_number, "state": c.state} for c in reg.cases()},
        "appeals": {a.appeal_id: None if a.decision is None else a.decision.outcome for a in reg.appeals()},
    }


def main(argv: list[str] | None = None) -> int:
    """Make the registry; print (or write) the expected facts as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", help="a new .gpkg path, or a postgresql:// URL of an empty schema")
    ap.add_argument("--expected", type=Path, help="write the expected facts here (default: print them)")
    args = ap.parse_args(argv)
    if "://" not in args.target and Path(args.target).exists():
        ap.error(f"{args.target} exists; the fixture is made in a new file (remove it first).")
    facts = build(args.target)
    text = json.dumps(facts, indent=2, sort_keys=True) + "\n"
    if args.expected:
        args.expected.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
