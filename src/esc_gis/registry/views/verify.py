"""Rebuild the projections from the history and report every difference from the tables.

The ``permits`` layer's life-cycle columns, the fees, the guarantees and their balances, the
inspection log (reports, deficiencies and their repairs), the enforcement cases, the appeals,
the plan's versions and the decision clocks are projections of the history, written by their
projectors (:mod:`esc_gis.registry.store.projection`). This module rebuilds every one into
temporary tables and compares them row by row with the registry's
(:func:`~esc_gis.registry.store.rebuild.rebuilt_rows`); first it folds every stream and says,
in the office's terms, where a reading of the tables (a status, a balance, a case's costs)
differs from the fold's. A row already named that way is not named again. ``esc-gis permits
verify`` prints the differences and exits 1 if there are any.
"""

from __future__ import annotations

__all__ = ["Difference", "rebuilt_differences", "verify", "verify_all"]

from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import Any

from esc_gis.registry.domain.dates import future_events
from esc_gis.registry.domain.deadlines import expiry
from esc_gis.registry.domain.fold import UNRECORDED_BY, PermitState, fold
from esc_gis.registry.domain.records import other_authorizations
from esc_gis.registry.store.projection import LIFECYCLE


@dataclass(frozen=True)
class Difference:
    """One place where a projection differs from the history's fold."""

    stream: str
    what: str
    table: Any
    history: Any
    #: Said instead of the table-and-history comparison, for a fault of the history itself.
    note: str | None = None

    def __str__(self) -> str:
        if self.note is not None:
            return f"{self.stream}: {self.what} {self.note}"
        return f"{self.stream}: {self.what} is {self.table!r} in the table, {self.history!r} in the history"


def verify(reg: Any) -> list[Difference]:
    """Fold every stream of ``reg``'s history and compare its projections with the tables; pure reading.

    Parameters
    ----------
    reg : Registry
        An open registry.

    Returns
    -------
    list of Difference
        Empty when every projection equals the fold and no event took effect after today on
        the Village's clock (a registry written before the one rule for effective dates,
        :mod:`esc_gis.registry.domain.dates`, or edited by hand: a day in 2062 for 2026
        would silence a deadline).
    """
    from esc_gis.registry.domain.fees import APPLICATION_FEE

    events = reg.history()
    today = reg.profile.today()
    out: list[Difference] = [
        Difference(
            e.stream,
            f"event {e.seq} ({e.kind})",
            None,
            None,
            note=(
                f"took effect on {e.on or reg.profile.day_of(e.when)}, after today on the Village's clock "
                f"({today}): a day not yet come (2062 typed for 2026?) silences the deadlines that count from it; "
                "correct the stored day."
            ),
        )
        for e in future_events(events, today, reg.profile.day_of)
    ]
    streams: dict[str, list[Any]] = {}
    for e in events:
        streams.setdefault(e.stream, []).append(e)
    states = {s: fold(evs, application_fee=APPLICATION_FEE) for s, evs in streams.items()}
    permits = {p.permit_number: p for p in reg.permits()}
    for number in sorted(set(permits) - set(states)):
        out.append(Difference(number, "the permit's history", "a row", "no event"))
    cases = reg.cases()
    case_ids = {c.case_id for c in cases}
    for stream in sorted(set(states) - set(permits) - case_ids):
        out.append(Difference(stream, "the stream", "no permit or case", f"{states[stream].events} event(s)"))
    fees = Counter(f.permit_number for f in reg.fees())
    guarantees = {g.id: g for g in reg.guarantees()}
    for number, p in sorted(permits.items()):
        s = states.get(number)
        if s is None:
            continue
        out += _permit(reg, number, p, s, fees[number], guarantees)
    by_case = {c.case_id: c for c in cases}
    for case_id, c in sorted(by_case.items()):
        stream = c.permit_number or case_id
        s = states.get(stream)
        opened = s is not None and case_id in s.cases
        if not opened:
            out.append(Difference(stream, f"case {case_id}", "opened", "not in the history"))
        out += _case(c, [states[x] for x in (c.permit_number, case_id) if x in states])
    return out


def verify_all(reg: Any) -> list[Difference]:
    """Return :func:`verify`'s differences, then each row a rebuild aside finds that they do not already name.

    What ``permits verify`` and :meth:`~esc_gis.registry.Registry.verify` report. A rebuilt row
    is left out only where :func:`verify` said the same thing in the office's words: the same
    permit's column, or the same concern's table of the same permit or case (a fee, a case's
    costs); any other difference of that permit is listed.
    """
    out = verify(reg)
    said = [(d.stream, *_covers(d)) for d in out if d.note is None]
    kept = []
    for table, cols, d in _rebuilt(reg):
        covered = any(
            stream == d.stream and table in tables and (named is None or set(cols) <= named)
            for stream, tables, named in said
        )
        if not covered:
            kept.append(d)
    return out + kept


#: The tables a difference :func:`verify` names is about, by the start of its ``what``.
_CONCERNS = (
    ("fees paid", ("fees",)),
    ("guarantee #", ("guarantees", "guarantee_events")),
    ("inspection report", ("inspections", "deficiencies", "repairs")),
    ("open deficiencies", ("deficiencies", "repairs")),
    ("costs recorded", ("enforcement_events", "guarantee_events")),
    ("payments", ("enforcement_events",)),
    ("notices to cease", ("enforcement_events",)),
    ("case ", ("enforcement_cases", "enforcement_events")),
    ("the permit's history", ("permits", "disturbed_limits", "decision_clocks", "events")),
)


def _covers(d: Difference) -> tuple[tuple[str, ...], set[str] | None]:
    """Return the tables a difference of :func:`verify` is about, and its ``permits`` column (None: any row)."""
    if d.what in LIFECYCLE or d.what == "expires_on":
        return ("permits",), {d.what}
    for start, tables in _CONCERNS:
        if d.what.startswith(start):
            return tables, None
    return (), None


def rebuilt_differences(reg: Any) -> list[Difference]:
    """Rebuild every projection into temporary tables and name each row it does not share with the registry."""
    return [d for _, _, d in _rebuilt(reg)]


def _rebuilt(reg: Any) -> list[tuple[str, list[str], Difference]]:
    """Return (table, differing columns, difference) of each row a rebuild aside does not share with the registry."""
    from esc_gis.registry.store.rebuild import differences, rebuilt_rows

    b = reg.backend
    # PostgreSQL makes no temporary table in a read-only transaction; nothing but them is written.
    with b.read() if b.dialect == "sqlite" else b.write() as cur:
        stored, rebuilt = rebuilt_rows(cur, b)
    out = []
    for d in differences(stored, rebuilt):
        row = d.table_row or d.rebuilt_row or {}
        stream = row.get("permit_number") or row.get("case_id") or row.get("appeal_id") or d.table
        have, want = d.table_row or {}, d.rebuilt_row or {}
        cols = sorted(c for c in {*have, *want} if have.get(c) != want.get(c))
        shown = Difference(
            str(stream),
            f"the {d.table} row ({d.key})",
            {c: have[c] for c in cols} if d.table_row is not None else None,
            {c: want[c] for c in cols} if d.rebuilt_row is not None else None,
        )
        out.append((d.table, cols, shown))
    return out


def _case(c: Any, folded: list[PermitState]) -> list[Difference]:
    """Compare a case's costs (amount, where recovered), payments and notices to cease with its streams' fold.

    A case's facts lie on its permit's stream, or on its own (a case without a permit, or one of
    work without a permit on a permit's site: its order, and its costs not from the guarantee).
    """
    out = []
    table = sorted(
        (round(float(e.costs), 2), e.costs_from) for e in c.events if e.costs is not None and e.kind != "paid"
    )
    history = sorted(
        (round(float(x["amount"]), 2), x["recovered_from"])
        for s in folded
        for x in s.costs
        if x.get("case_id") == c.case_id
    )
    if table != history:
        out.append(Difference(c.case_id, "costs recorded", table, history))
    paid = sorted(round(float(e.costs or 0.0), 2) for e in c.events if e.kind == "paid")
    payments = sorted(round(float(x["amount"]), 2) for s in folded for x in s.payments if x["case_id"] == c.case_id)
    if paid != payments:
        out.append(Difference(c.case_id, "payments", paid, payments))
    notices = sum(1 for e in c.events if e.kind == "notified")
    notified = sum(1 for s in folded for case_id, _ in s.notified if case_id == c.case_id)
    if notices != notified:
        out.append(Difference(c.case_id, "notices to cease", notices, notified))
    return out


def _permit(reg: Any, number: str, p: Any, s: PermitState, fees: int, guarantees: dict[int, Any]) -> list[Difference]:
    out = []
    for column in LIFECYCLE:
        have, want = getattr(p, column), getattr(s, column)
        if have != want:
            out.append(Difference(number, column, have, want))
    # A permit imported issued and since closed (no decision recorded) was given no period.
    if s.issued_on is not None and s.decided_on is not None:
        due = expires_on(s, reg.profile, p.building_permit_expires)
        if p.expires_on != due:
            out.append(Difference(number, "expires_on", p.expires_on, due))
    if fees != len(s.fees):
        out.append(Difference(number, "fees paid", fees, len(s.fees)))
    for gid, g in s.guarantees.items():
        row = guarantees.get(gid)
        if row is None:
            out.append(Difference(number, f"guarantee #{gid}", None, "received"))
        elif abs(row.balance - g.balance) > 0.005:
            out.append(Difference(number, f"guarantee #{gid} balance", row.balance, g.balance))
    reports = [r.id for r in p.reports]
    if sorted(reports) != sorted(s.inspection_ids):
        out.append(Difference(number, "inspection reports", sorted(reports), sorted(s.inspection_ids)))
    out += _reports(number, p, s)
    open_rows = sorted(d.id for d in p.open_repairs)
    if open_rows != sorted(s.open_deficiencies):
        out.append(Difference(number, "open deficiencies", open_rows, sorted(s.open_deficiencies)))
    return out


def _reports(number: str, p: Any, s: PermitState) -> list[Difference]:
    """Compare each report's who, pre-start and checklist columns with its ``inspected`` event."""
    facts = {f.inspection_id: f for f in s.inspections if f.inspection_id is not None}
    out = []
    for r in p.reports:
        f = facts.get(r.id)
        if f is None:
            continue  # the report list itself is compared above
        table = (
            r.by or UNRECORDED_BY,
            bool(r.pre_start),
            bool(r.adjoining_repairs),
            {
                k: v
                for k, v in (("on_site_documents", r.on_site_documents), ("certificate_posted", r.certificate_posted))
                if v is not None
            },
        )
        history = (f.by, f.pre_start, f.adjoining_repairs, dict(f.checklist))
        if table != history:
            out.append(Difference(number, f"inspection report #{r.id}", table, history))
    return out


def expires_on(s: PermitState, profile: Any, building_permit_expires: date | None) -> date | None:
    """Return the day an issued permit's period ends (§ 540-8G), with its extensions and other authorizations.

    None for a permit never issued. What the table's expiry must be under the profile today:
    the commands compute it the same way when they set it.
    """
    if s.issued_on is None:
        return None
    due = expiry(
        s.issued_on,
        profile,
        building_permit_expires=building_permit_expires,
        extensions_days=s.extensions_days,
        other_authorizations=other_authorizations(s.fields).values(),
    ).due
    assert isinstance(due, date)
    return due
