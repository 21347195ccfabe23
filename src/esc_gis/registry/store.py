"""The permit registry: one API over a GeoPackage file or a PostGIS database.

Every change is one transaction that also appends to the permit's history, so a permit's
record and its history never disagree, and a failure part-way (a bad row, a crash, a lost
connection) leaves the registry as it was. Inputs are checked in full before the
transaction starts, and every problem is reported at once.

Examples
--------
>>> import tempfile, pathlib, shapely
>>> from datetime import date
>>> from esc_gis.registry import Application, init_registry, open_registry
>>> path = pathlib.Path(tempfile.mkdtemp()) / "permits.gpkg"
>>> init_registry(path)
[1, 2, 3, 4, 5]
>>> with open_registry(path) as reg:  # doctest: +SKIP
...     number = reg.add(Application("100 Main St", date(2026, 11, 2), site, "EPSG:7594"), who="staff")
"""

from __future__ import annotations

__all__ = ["Registry", "init_registry", "open_registry"]

import getpass
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from types import TracebackType
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from esc_gis.errors import (
    IllegalTransitionError,
    PermitNotFoundError,
    Problem,
    RegistryError,
    ValidationError,
)
from esc_gis.layers import LayerSet, load_layers
from esc_gis.profile import Profile, load_profile
from esc_gis.registry.appeals import Appeal, AppealDecision, appeal_terms
from esc_gis.registry.backend import Backend, now_utc, open_backend, rows
from esc_gis.registry.calendar import OfficeCalendar
from esc_gis.registry.deadlines import decision_due, expiry
from esc_gis.registry.enforcement import CaseEvent, EnforcementCase, check_action
from esc_gis.registry.enforcement import grounds as enforcement_grounds
from esc_gis.registry.fees import (
    APPLICATION_FEE,
    Fee,
    FeeSchedule,
    Guarantee,
    GuaranteeEvent,
    check_fee,
    check_guarantee,
    check_guarantee_event,
)
from esc_gis.registry.fees import problems as fee_problems
from esc_gis.registry.inspections import InspectionReport, check_report
from esc_gis.registry.lifecycle import BACK, STATES, check_back, check_transition, written_reasons
from esc_gis.registry.records import Application, Deficiency, Event, Inspection, Party, Permit, Photo
from esc_gis.registry.schema import PERMIT_COLUMNS, TABLES

_KINDS = {name: kind for name, kind, _ in PERMIT_COLUMNS}
_PERMIT_FIELDS = [name for name, _, _ in PERMIT_COLUMNS if name not in ("fid", "geom")]
#: States in which a permit has been issued (its expiry runs).
ISSUED = ("approved", "deemed_approved", "active", "extended", "stop_work", "suspended", "final_stabilization")
#: Fields the screening engine measures for a permit.
_MEASURED = ("site_sqft", "disturbed_sqft", "plan_disturbed_sqft", "permit_decision", "standards", "sediment_standard")
#: The fields a common plan's new member can change on the plan's other permits.
_DECIDED = ("plan_disturbed_sqft", "permit_decision", "standards", "sediment_standard")
#: Fields :meth:`Registry.update` may change, and their kinds.
UPDATABLE = {
    "parcel_id": "text",
    "site_address": "text",
    "legal_description": "text",
    "building_permit_expires": "date",
    "start_notice_at": "datetime",
    "work_stopped_on": "date",
    "stockpile_since": "date",
    "resume_expected_on": "date",
    "work_resumed_on": "date",
}
#: The activity whose area never counts toward a common plan's total (§ 540-4A(2)).
EXEMPT_ACTIVITY = "agricultural_activity"


def _path(p: str | os.PathLike[str] | None) -> Path | None:
    return None if p is None else Path(p)


def _who(who: str | None) -> str:
    if who and who.strip():
        return who.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name (a container): still say something
        return "unknown"


def init_registry(
    target: str | os.PathLike[str], *, layers: str | os.PathLike[str] | LayerSet | None = None
) -> list[int]:
    """Create a registry, or bring an existing one up to this esc_gis's schema version.

    Parameters
    ----------
    target : path or str
        A ``.gpkg`` path or a ``postgresql://`` URL.
    layers : path or LayerSet, optional
        The layer set whose measuring CRS the registry stores geometry in; default the Village's.

    Returns
    -------
    list of int
        The migrations applied (empty when the registry was already current).

    Raises
    ------
    RegistryError
        If the target cannot be opened, is in another CRS, or was written by a newer esc_gis.
    """
    ls = layers if isinstance(layers, LayerSet) else load_layers(_path(layers), profile=load_profile())
    epsg = ls.crs.to_epsg()
    if epsg is None:
        msg = "The layer set's CRS has no EPSG code; a registry needs one (its geometry columns are typed by it)."
        raise RegistryError(msg)
    backend = open_backend(target, create=True)
    try:
        return backend.migrate(epsg, ls.crs.to_wkt())
    finally:
        backend.close()


def open_registry(
    target: str | os.PathLike[str],
    *,
    layers: str | os.PathLike[str] | LayerSet | None = None,
    profile: Profile | None = None,
    calendar: OfficeCalendar | None = None,
) -> Registry:
    """Open a registry made by :func:`init_registry`.

    Raises
    ------
    RegistryError
        If there is no registry there, or its schema version is not this esc_gis's.
    """
    backend = open_backend(target)
    try:
        backend.check_version()
    except BaseException:
        backend.close()
        raise
    prof = profile or load_profile()
    ls = layers if isinstance(layers, LayerSet) else load_layers(_path(layers), profile=prof)
    return Registry(backend, layers=ls, profile=prof, calendar=calendar or OfficeCalendar())


class Registry:
    """Permits and their history, in a GeoPackage or PostGIS back end.

    Use :func:`open_registry`; close it (or use ``with``) when done.
    """

    def __init__(self, backend: Backend, *, layers: LayerSet, profile: Profile, calendar: OfficeCalendar) -> None:
        self.backend = backend
        self.layers = layers
        self.profile = profile
        self.calendar = calendar
        self.crs = CRS.from_epsg(backend.srid)

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: tuple[type[BaseException] | None, BaseException | None, TracebackType | None]) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self.backend.close()

    # Reading --------------------------------------------------------------------------

    def _select(self, cur: Any, where: str = "", params: Sequence[Any] = ()) -> list[Permit]:
        b = self.backend
        cols = ", ".join(f'p."{c}"' for c in _PERMIT_FIELDS)
        cur.execute(
            f"SELECT {cols}, {b.geom_column('p.geom', 'site')}, {b.geom_column('d.geom', 'disturbed')} "
            f"FROM permits p LEFT JOIN disturbed_limits d ON d.permit_number = p.permit_number {where} "
            "ORDER BY p.permit_number",
            tuple(params),
        )
        out = []
        for row in cur.fetchall():
            values = {c: b.load(_KINDS[c], v) for c, v in zip(_PERMIT_FIELDS, row[:-2], strict=True)}
            out.append(Permit(**values, site=b.load_geom(row[-2]), disturbed=b.load_geom(row[-1])))
        if not out:
            return out
        by_number = {p.permit_number: p for p in out}
        ph = ", ".join([b.ph] * len(by_number))
        party_cols = [c for c, _, _ in TABLES["parties"] if c not in ("id", "permit_number")]
        cur.execute(
            f"SELECT permit_number, {', '.join(party_cols)} FROM parties WHERE permit_number IN ({ph}) ORDER BY id",
            tuple(by_number),
        )
        for r in rows(cur):
            by_number[r.pop("permit_number")].parties.append(Party(**r))
        event_cols = [(c, k) for c, k, _ in TABLES["events"] if c not in ("id", "permit_number")]
        cur.execute(
            f"SELECT permit_number, {', '.join(chr(34) + c + chr(34) for c, _ in event_cols)} FROM events "
            f"WHERE permit_number IN ({ph}) ORDER BY id",
            tuple(by_number),
        )
        for r in cur.fetchall():
            values = {c: b.load(k, v) for (c, k), v in zip(event_cols, r[1:], strict=True)}
            by_number[r[0]].events.append(Event(**values))
        self._select_reports(cur, by_number)
        self._select_letters_of_credit(cur, by_number)
        return out

    def _select_letters_of_credit(self, cur: Any, by_number: dict[str, Permit]) -> None:
        """Attach each permit's letters of credit with what is still held (after draws and releases)."""
        b = self.backend
        ph = ", ".join([b.ph] * len(by_number))
        cur.execute(
            "SELECT g.id, g.permit_number, g.expires_on, g.amount, "
            "(SELECT COALESCE(SUM(e.amount), 0) FROM guarantee_events e WHERE e.guarantee_id = g.id), "
            "(SELECT COUNT(*) FROM guarantee_events e WHERE e.guarantee_id = g.id AND e.kind = 'final_release') "
            f"FROM guarantees g WHERE g.expires_on IS NOT NULL AND g.permit_number IN ({ph}) ORDER BY g.id",
            tuple(by_number),
        )
        for r in cur.fetchall():
            held = 0.0 if int(r[5]) else round(float(r[3]) - float(r[4]), 2)
            by_number[r[1]].letters_of_credit.append((int(r[0]), b.load("date", r[2]), held))

    def _select_reports(self, cur: Any, by_number: dict[str, Permit]) -> None:
        """Attach each permit's inspection reports, with deficiencies, repairs and photo metadata (not bytes)."""
        b = self.backend
        ph = ", ".join([b.ph] * len(by_number))
        numbers = tuple(by_number)
        cur.execute(
            "SELECT fid, permit_number, inspected_at, inspector, assessment, work_done, phase, recorded_by, "
            f"{b.geom_column('geom', 'location')} FROM inspections WHERE permit_number IN ({ph}) "
            "ORDER BY inspected_at, fid",
            numbers,
        )
        reports = {
            int(r[0]): (
                r[1],
                Inspection(
                    int(r[0]), b.load("datetime", r[2]), r[3], r[4], r[5], r[6], r[7], location=b.load_geom(r[8])
                ),
            )
            for r in cur.fetchall()
        }
        if not reports:
            return
        cur.execute(
            "SELECT d.id, d.inspection_id, d.description, d.notified_at, r.repaired_at, r.detail "
            f"FROM deficiencies d LEFT JOIN repairs r ON r.deficiency_id = d.id WHERE d.permit_number IN ({ph}) "
            "ORDER BY d.id",
            numbers,
        )
        found: dict[int, list[Deficiency]] = {}
        for r in cur.fetchall():
            at = reports[int(r[1])][1].inspected_at
            d = Deficiency(int(r[0]), int(r[1]), r[2], at, b.load("datetime", r[3]), b.load("datetime", r[4]), r[5])
            found.setdefault(d.inspection_id, []).append(d)
        cur.execute(
            "SELECT p.id, p.inspection_id, p.filename, p.content_type, p.sha256, p.size_bytes "
            f"FROM inspection_photos p JOIN inspections i ON i.fid = p.inspection_id WHERE i.permit_number IN ({ph}) "
            "ORDER BY p.id",
            numbers,
        )
        photos: dict[int, list[Photo]] = {}
        for r in cur.fetchall():
            photos.setdefault(int(r[1]), []).append(Photo(int(r[0]), int(r[1]), r[2], r[3], r[4], int(r[5])))
        for fid, (number, report) in reports.items():
            by_number[number].reports.append(
                replace(report, deficiencies=tuple(found.get(fid, ())), photos=tuple(photos.get(fid, ())))
            )

    def get(self, permit_number: str) -> Permit:
        """Return one permit with its parties and history.

        Raises
        ------
        PermitNotFoundError
            If there is no such permit.
        """
        with self.backend.read() as cur:
            found = self._select(cur, f"WHERE p.permit_number = {self.backend.ph}", (permit_number,))
        if not found:
            msg = f"There is no permit {permit_number!r} in the registry."
            raise PermitNotFoundError(msg)
        return found[0]

    def permits(self, *, status: str | Iterable[str] | None = None) -> list[Permit]:
        """Return the permits (all, or those in the given states), ordered by number.

        Raises
        ------
        ValidationError
            If a state is unknown.
        """
        if status is None:
            with self.backend.read() as cur:
                return self._select(cur)
        states = [status] if isinstance(status, str) else list(status)
        bad = [s for s in states if s not in STATES]
        if bad:
            raise ValidationError(
                [
                    Problem("status", None, f"{s!r} is not a permit state.", f"use one of {', '.join(STATES)}.")
                    for s in bad
                ]
            )
        with self.backend.read() as cur:
            ph = ", ".join([self.backend.ph] * len(states))
            return self._select(cur, f"WHERE p.status IN ({ph})", states)

    # Adding ---------------------------------------------------------------------------

    def add(self, application: Application, *, who: str | None = None) -> str:
        """Add one application; return its permit number.

        Raises
        ------
        ValidationError
            With every problem in the application (dates, parties, geometry, a site outside
            the Village, a number already taken).
        """
        return self.add_many([application], who=who)[0]

    def add_many(
        self,
        applications: Sequence[Application],
        *,
        who: str | None = None,
        source: str = "application",
        kind: str = "received",
        prior: Sequence[Problem] = (),
    ) -> list[str]:
        """Add applications in one transaction: all of them, or, on any problem, none.

        Returns
        -------
        list of str
            The permit numbers, in input order.

        Raises
        ------
        ValidationError
            With every problem in every application, each naming its row (1-based),
            together with ``prior`` problems (found while reading the rows).
        """
        who = _who(who)
        problems, drawn = self._check_applications(applications, source)
        problems = [*(prior or []), *problems]
        # Measured even when other fields are bad, so one run reports every problem.
        measured = self._measure(applications, source, problems) if drawn else []
        if problems:
            raise ValidationError(problems)
        now = now_utc()
        with self.backend.write() as cur:
            taken = self._taken(cur, [a.permit_number for a in applications if a.permit_number])
            if taken:
                raise ValidationError(
                    [
                        Problem(
                            source,
                            i + 1,
                            f"permit number {a.permit_number!r} is already taken.",
                            "leave the number empty to have one assigned, or give a new one.",
                        )
                        for i, a in enumerate(applications)
                        if a.permit_number in taken
                    ]
                )
            numbers = self._numbers(cur, applications)
            self._insert(cur, numbers, applications, measured, who, now, kind)
        return numbers

    def _check_fields(self, a: Application, bad: Callable[..., None]) -> None:
        """Check one application's status, dates and parties."""
        if a.received_on is None:
            bad("received_on is empty.", "give the day the application came in (YYYY-MM-DD).")
        if not (a.site_address or "").strip():
            bad("site_address is empty.", "give the street address of the site.")
        if a.status not in STATES:
            bad(f"status {a.status!r} is not a permit state.", f"use one of {', '.join(STATES)}.")
        elif a.status in ISSUED and a.issued_on is None:
            bad(f"a permit in {a.status} needs issued_on.", "give the date the permit was issued (YYYY-MM-DD).")
        if a.issued_on and a.received_on and a.issued_on < a.received_on:
            bad(f"issued_on {a.issued_on} is before received_on {a.received_on}.", "check both dates.")
        if a.building_permit_expires and a.received_on and a.building_permit_expires < a.received_on:
            bad(
                f"building_permit_expires {a.building_permit_expires} is before received_on {a.received_on}.",
                "check both dates.",
            )
        if a.started_at and a.issued_on and a.started_at.date() < a.issued_on:
            f = self.profile.finding("work_before_permit", started=a.started_at.date(), issued=a.issued_on)
            bad(f"{f.message} ({f.section})", "check both dates.")
        if a.status in ("active", "extended", "stop_work") and a.started_at is None:
            bad(f"a permit in {a.status} needs started_at.", "give when land disturbance began.")
        for party in a.parties:
            for message, fix in party.problems():
                bad(message, fix)

    def _check_applications(self, apps: Sequence[Application], source: str) -> tuple[list[Problem], bool]:
        """Check every application; return the problems, and whether every geometry can be measured."""
        problems: list[Problem] = []
        drawn = True
        seen: dict[str, int] = {}
        for i, a in enumerate(apps, start=1):

            def bad(message: str, fix: str, row: int = i, site: str | None = a.permit_number) -> None:
                problems.append(Problem(source, row, message, fix, site))

            self._check_fields(a, bad)
            drawn = _check_geometry(a, bad) and drawn
            if a.permit_number:
                if a.permit_number in seen:
                    bad(
                        f"permit number {a.permit_number!r} is also on row {seen[a.permit_number]}.",
                        "give each permit its own number.",
                    )
                seen.setdefault(a.permit_number, i)
        return problems, drawn

    def _measure(self, apps: Sequence[Application], source: str, problems: list[Problem]) -> list[dict[str, Any]]:
        """Measure every application with the screening engine (in the registry's CRS).

        A site on a common plan (``plan_id``) is screened together with the registry's other
        permits on that plan, so it is decided on the plan's total disturbance, as screening
        decides (§ 540-5 CONSTRUCTION SITE). Agricultural-activity area is exempt
        (§ 540-4A(2)) and never counts toward a plan's total: such sites are screened without
        their plan. The plan members' new decisions come back under ``"members"`` (first
        row's dict) for :meth:`_insert` to record.
        """
        from esc_gis.screening import screen

        n = len(apps)
        site = self._to_registry_crs([a.site for a in apps], [a.crs for a in apps])
        has = np.array([a.disturbed is not None for a in apps], dtype=bool)
        limits = self._to_registry_crs(
            [a.disturbed for a in apps if a.disturbed is not None], [a.crs for a in apps if a.disturbed is not None]
        )
        plans = sorted({a.plan_id for a in apps if a.plan_id})
        members = self._plan_members(plans)
        ids = np.array([f"r{i}" for i in range(n)] + [f"e{k}" for k in range(len(members))], dtype=object)
        activity = [a.activity or "construction" for a in apps] + [m.activity or "construction" for m in members]
        plan_ids = [a.plan_id for a in apps] + [m.plan_id for m in members]
        counted = [
            p if str(act).strip().lower() != EXEMPT_ACTIVITY else None
            for p, act in zip(plan_ids, activity, strict=True)
        ]
        geoms = np.concatenate([site, np.array([m.site for m in members], dtype=object)])
        sites = gpd.GeoDataFrame(
            {"site_id": ids, "plan_id": pd.Series(counted, dtype=object), "activity": activity},
            geometry=geoms,
            crs=self.crs,
        )
        # Screening reads a site missing from a disturbed-limits layer as undisturbed (0 sq ft).
        # A permit without disturbed limits is decided on its whole site (as `permits add`
        # without --disturbed is), so once any site has limits, the others' sites stand in.
        d_geoms = np.array(geoms, dtype=object)
        d_geoms[:n][has] = limits
        m_has = np.array([m.disturbed is not None for m in members], dtype=bool)
        d_geoms[n:][m_has] = [m.disturbed for m in members if m.disturbed is not None]
        any_limits = bool(has.any() or m_has.any())
        disturbed = gpd.GeoDataFrame({"site_id": ids}, geometry=d_geoms, crs=self.crs) if any_limits else None
        try:
            out = screen(sites, disturbed=disturbed, layers=self.layers, profile=self.profile)
        except ValidationError as exc:
            problems.extend(
                Problem(
                    source, int(p.site_id[1:]) + 1 if p.site_id and p.site_id[:1] == "r" else p.row, p.message, p.fix
                )
                for p in exc.problems
            )
            return []
        outside = np.flatnonzero(out["jurisdiction"].to_numpy()[:n] == "outside")
        f = self.profile.finding("registry_outside_jurisdiction")
        problems.extend(
            Problem(source, int(i) + 1, f"{f.message} ({f.section})", "check the site's location and CRS.")
            for i in outside
        )
        site_multi = [_as_multi(g) for g in site]
        dist_multi: list[Any] = [None] * n
        for i, g in zip(np.flatnonzero(has), limits, strict=True):
            dist_multi[i] = _as_multi(g)
        site_sqft = np.asarray(_area_sqft(gpd.GeoSeries(site, crs=self.crs)))
        rows_ = list(out.itertuples(index=False))
        measured = [
            {
                "site": site_multi[i],
                "disturbed": dist_multi[i],
                "site_sqft": float(site_sqft[i]),
                "plan_id": apps[i].plan_id,
                "activity": str(r.activity),
                **_decision(r),
            }
            for i, r in enumerate(rows_[:n])
        ]
        if measured:
            measured[0]["members"] = [(m, _decision(r)) for m, r in zip(members, rows_[n:], strict=True)]
        return measured

    def _plan_members(self, plans: Sequence[str]) -> list[Permit]:
        """Return the registry's permits on any of ``plans`` (common plans of development or sale)."""
        if not plans:
            return []
        with self.backend.read() as cur:
            ph = ", ".join([self.backend.ph] * len(plans))
            return self._select(cur, f"WHERE p.plan_id IN ({ph})", plans)

    def _to_registry_crs(self, geoms: Sequence[Any], crss: Sequence[Any]) -> np.ndarray:
        """Transform geometries to the registry's CRS, one transform per distinct source CRS."""
        out = np.empty(len(geoms), dtype=object)
        keys = [CRS.from_user_input(c).to_wkt() for c in crss]
        for key in set(keys):
            idx = np.flatnonzero(np.array(keys, dtype=object) == key)
            group = gpd.GeoSeries(np.asarray(geoms, dtype=object)[idx], crs=CRS.from_wkt(key))
            out[idx] = group.to_crs(self.crs).to_numpy()
        return out

    def import_frame(
        self, frame: gpd.GeoDataFrame, *, source: str, disturbed: gpd.GeoDataFrame | None = None, who: str | None = None
    ) -> list[str]:
        """Import a layer of permits (:mod:`esc_gis.registry.imports`) in one transaction.

        Raises
        ------
        ValidationError
            With every bad row of the layer; nothing is imported then.
        """
        from esc_gis.registry.imports import applications_from_frame

        apps, problems = applications_from_frame(frame, source=source, disturbed=disturbed)
        if not apps:
            raise ValidationError(problems or [Problem(source, None, "has no rows.", "export the permits again.")])
        return self.add_many(apps, who=who, source=source, kind="imported", prior=problems)

    def _taken(self, cur: Any, numbers: list[str]) -> set[str]:
        if not numbers:
            return set()
        ph = ", ".join([self.backend.ph] * len(numbers))
        cur.execute(f"SELECT permit_number FROM permits WHERE permit_number IN ({ph})", tuple(numbers))
        return {r[0] for r in cur.fetchall()}

    def _numbers(self, cur: Any, apps: Sequence[Application]) -> list[str]:
        """Give each application its own number, or the next free one in the profile's pattern.

        One counter update per year takes a block of numbers for the whole batch; the counter
        row serialises concurrent writers. Numbers an earlier import holds, or this batch
        names, are skipped.
        """
        ph = self.backend.ph
        out = [a.permit_number or "" for a in apps]
        named = {n for n in out if n}
        years: dict[int, list[int]] = {}
        for i, a in enumerate(apps):
            if not a.permit_number:
                assert a.received_on is not None  # checked before
                years.setdefault(a.received_on.year, []).append(i)
        for year, wanting in sorted(years.items()):
            free: list[str] = []
            while len(free) < len(wanting):
                k = len(wanting) - len(free)
                cur.execute(
                    f'INSERT INTO permit_counters ("year", "last") VALUES ({ph}, {ph}) '
                    f'ON CONFLICT ("year") DO UPDATE SET "last" = permit_counters."last" + {ph} '
                    'RETURNING "last"',
                    (year, k, k),
                )
                last = int(cur.fetchone()[0])
                block = [self.profile.format_permit_number(year, n) for n in range(last - k + 1, last + 1)]
                taken = self._taken(cur, block) | named
                free += [n for n in block if n not in taken]
            for i, number in zip(wanting, free, strict=True):
                out[i] = number
        return out

    def _insert(
        self,
        cur: Any,
        numbers: Sequence[str],
        apps: Sequence[Application],
        measured: Sequence[dict[str, Any]],
        who: str,
        now: datetime,
        kind: str,
    ) -> None:
        """Insert the permits, their limits, parties and first event: one batched statement per table."""
        b = self.backend
        permits, limits, parties, events = [], [], [], []
        for number, app, m in zip(numbers, apps, measured, strict=True):
            record: dict[str, Any] = dict.fromkeys(_PERMIT_FIELDS)
            record.update(
                permit_number=number,
                parcel_id=app.parcel_id,
                site_address=app.site_address.strip(),
                legal_description=app.legal_description,
                status=app.status,
                received_on=app.received_on,
                building_permit_expires=app.building_permit_expires,
                issued_on=app.issued_on,
                started_at=app.started_at,
                start_notice_at=app.start_notice_at,
                updated_at=now,
                plan_id=m["plan_id"],
                activity=m["activity"],
                **{k: m[k] for k in _MEASURED},
            )
            if app.issued_on is not None and app.status in ISSUED:
                record["decided_on"] = app.issued_on
                record["expires_on"] = self._expiry(app.issued_on, app.building_permit_expires, [])
            permits.append((*(b.dump(_KINDS[c], v) for c, v in record.items()), b.dump_geom(m["site"])))
            if m["disturbed"] is not None:
                limits.append((number, b.dump_geom(m["disturbed"])))
            parties += [
                (number, p.role, p.name.strip(), p.organization, p.phone, p.email, p.address) for p in app.parties
            ]
            plan = f", {m['plan_disturbed_sqft']:,.0f} sq ft over common plan {app.plan_id}" if app.plan_id else ""
            detail = (
                f"{m['disturbed_sqft']:,.0f} sq ft disturbed{plan} (measured"
                f"{'' if m['disturbed'] is not None else ' on the whole site: no disturbed limits given'}); "
                f"screening: permit {m['permit_decision']}"
            )
            events.append(
                self._event_row(number, Event(now, who, kind, None, app.status, app.received_on, None, detail))
            )
        cols = ", ".join(f'"{c}"' for c in _PERMIT_FIELDS)
        vals = ", ".join([b.ph] * len(_PERMIT_FIELDS))
        # executemany: one round trip per table on PostGIS (psycopg pipelines it), one statement in SQLite.
        cur.executemany(f'INSERT INTO permits ({cols}, "geom") VALUES ({vals}, {b.geom_param()})', permits)
        if limits:
            cur.executemany(
                f"INSERT INTO disturbed_limits (permit_number, geom) VALUES ({b.ph}, {b.geom_param()})", limits
            )
        if parties:
            cur.executemany(
                "INSERT INTO parties (permit_number, role, name, organization, phone, email, address) "
                f"VALUES ({', '.join([b.ph] * 7)})",
                parties,
            )
        cur.executemany(self._event_sql(), events)
        self._redecide_members(cur, measured[0].get("members", []) if measured else [], who, now)

    def _redecide_members(
        self, cur: Any, members: Sequence[tuple[Permit, dict[str, Any]]], who: str, now: datetime
    ) -> None:
        """Record the new plan total (and decision, if it changed) on the plan's permits already in the registry."""
        for p, d in members:
            changes = {k: d[k] for k in _DECIDED if getattr(p, k) != d[k]}
            if not changes:
                continue
            self._set(cur, p.permit_number, changes)
            was = f" (was {p.permit_decision})" if p.permit_decision != d["permit_decision"] else ""
            detail = (
                f"common plan {p.plan_id}: {d['plan_disturbed_sqft']:,.0f} sq ft disturbed over the plan "
                f"(measured); screening: permit {d['permit_decision']}{was}"
            )
            self._event(cur, p.permit_number, Event(now, who, "remeasured", None, None, None, None, detail))

    def _event_sql(self) -> str:
        cols = [c for c, _, _ in TABLES["events"] if c != "id"]
        return (
            f"INSERT INTO events ({', '.join(chr(34) + c + chr(34) for c in cols)}) "
            f"VALUES ({', '.join([self.backend.ph] * len(cols))})"
        )

    def _event_row(self, number: str, e: Event) -> tuple[Any, ...]:
        kinds = {c: k for c, k, _ in TABLES["events"]}
        values = {"permit_number": number, **e.__dict__}
        return tuple(self.backend.dump(kinds[c], values[c]) for c in kinds if c != "id")

    def _event(self, cur: Any, number: str, e: Event) -> None:
        cur.execute(self._event_sql(), self._event_row(number, e))

    def _expiry(self, issued: date, building: date | None, extensions: list[int]) -> date:
        due = expiry(issued, self.profile, building_permit_expires=building, extensions_days=extensions).due
        assert isinstance(due, date)
        return due

    # Changing -------------------------------------------------------------------------

    def _locked(self, cur: Any, number: str) -> Permit:
        """Read a permit inside a write transaction, locking its row against other writers."""
        b = self.backend
        cur.execute(f"SELECT permit_number FROM permits WHERE permit_number = {b.ph}{b.for_update}", (number,))
        if cur.fetchone() is None:
            msg = f"There is no permit {number!r} in the registry."
            raise PermitNotFoundError(msg)
        return self._select(cur, f"WHERE p.permit_number = {b.ph}", (number,))[0]

    def _set(self, cur: Any, number: str, changes: dict[str, Any]) -> None:
        b = self.backend
        changes = {**changes, "updated_at": now_utc()}
        sets = ", ".join(f'"{c}" = {b.ph}' for c in changes)
        cur.execute(
            f"UPDATE permits SET {sets} WHERE permit_number = {b.ph}",
            (*(b.dump(_KINDS[c], v) for c, v in changes.items()), number),
        )

    def transition(
        self,
        permit_number: str,
        to: str,
        *,
        who: str | None = None,
        on: date | datetime | None = None,
        reasons: str | None = None,
    ) -> Permit:
        """Move a permit to a new state, recording the dates the ordinance counts from.

        Parameters
        ----------
        permit_number : str
        to : str
            One of :data:`~esc_gis.registry.lifecycle.STATES` allowed from the current one.
        who : str, optional
            Default: the login name.
        on : date or datetime, optional
            When it happened; default now. For ``active``, the time land disturbance began.
        reasons : str, optional
            Written reasons (the written notification); required for the moves the profile's
            ``[lifecycle.written_reasons]`` names: disapproval (§ 540-8C(3)), stop-work,
            suspension and revocation (§ 540-8E, § 540-12).

        Notes
        -----
        A deemed approval (§ 540-8C(5)) is recorded on any day after the decision was due,
        and dated the day the 20 business days ran out (the decision-due day): that is when
        the applicant could proceed, whenever staff write it down. The day it was recorded
        goes into the history.

        Raises
        ------
        PermitNotFoundError
        IllegalTransitionError
            If the life cycle does not allow it, reasons are missing, or a deemed approval
            is claimed before the 20 business days have passed.
        ValidationError
            If ``on`` is before the permit's earlier dates.
        """
        who = _who(who)
        # A time without a zone is the office's local time, as typed.
        at = (on if on.tzinfo else on.astimezone()).astimezone(timezone.utc) if isinstance(on, datetime) else None
        day = (on.date() if isinstance(on, datetime) else on) or date.today()
        with self.backend.write() as cur:
            p = self._locked(cur, permit_number)
            check_transition(p.status, to, reasons=reasons, needs=self.written_reasons)
            self._check_order(p, day, to)
            if to == "under_review" and p.status in ("application_received", "incomplete"):
                self._check_fee_paid(cur, permit_number)
            changes: dict[str, Any] = {"status": to}
            detail = reasons
            if to == "incomplete":
                changes["information_requested_on"] = day
            elif to == "under_review" and p.status == "incomplete":
                changes["information_received_on"] = day
            elif to in ("approved", "deemed_approved", "disapproved"):
                if to == "deemed_approved":
                    due = self.decision_due(p).due
                    if day <= due:
                        f = self.profile.finding("deemed_approval_too_early", day=day, due=due)
                        msg = f"Permit {permit_number} {f.message} ({f.section})"
                        raise IllegalTransitionError(msg)
                    # Dated the day the period ran out, not the day it is written down.
                    detail = "; ".join(x for x in (f"recorded on {day}", reasons) if x)
                    day = due
                changes["decided_on"] = day
                if to != "disapproved":
                    changes["issued_on"] = day
                    changes["expires_on"] = self._expiry(day, p.building_permit_expires, p.extensions_days)
            elif to == "active" and p.status in ("approved", "deemed_approved"):
                changes["started_at"] = at or datetime.combine(day, time(0), tzinfo=timezone.utc)
            elif to == "final_stabilization":
                changes["final_on"] = day
            self._set(cur, permit_number, changes)
            self._event(cur, permit_number, Event(now_utc(), who, "transition", p.status, to, day, None, detail))
        return self.get(permit_number)

    def _check_fee_paid(self, cur: Any, permit_number: str) -> None:
        # An application is complete only with its fee (§ 540-8B; the 20 business days of
        # § 540-8C(1) count from a complete application), so review waits for the fee.
        b = self.backend
        cur.execute(
            f"SELECT 1 FROM fees WHERE permit_number = {b.ph} AND kind = {b.ph}", (permit_number, APPLICATION_FEE)
        )
        if cur.fetchone() is None:
            msg = (
                f"Permit {permit_number}: the application is not complete without its {APPLICATION_FEE} fee, so it "
                f"cannot go under review. Record the fee first: esc-gis permits fee REGISTRY {permit_number} "
                f"--kind {APPLICATION_FEE} --amount N --paid-on YYYY-MM-DD --receipt R."
            )
            raise IllegalTransitionError(msg)

    @property
    def written_reasons(self) -> dict[str, str]:
        """The moves that need written reasons, and the sections requiring them (the profile's).

        Raises
        ------
        ProfileError
            If the profile lacks ``[lifecycle.written_reasons]``.
        """
        return written_reasons(self.profile.tables)

    def retract(
        self, permit_number: str, *, reasons: str | None, who: str | None = None, on: date | None = None
    ) -> Permit:
        """Retract a stop-work order or a revocation: back to the state before it (§ 540-12D).

        Raises
        ------
        PermitNotFoundError
        IllegalTransitionError
            If the permit is not under a stop-work order or revoked, its history shows no
            state before, or the written reasons are missing.
        ValidationError
            If ``on`` is before the permit's earlier dates.
        """
        return self._back(permit_number, "retraction", reasons=reasons, who=who, on=on)

    def reinstate(
        self, permit_number: str, *, reasons: str | None, who: str | None = None, on: date | None = None
    ) -> Permit:
        """Lift a suspension: back to the state before it (§ 540-8E).

        Raises
        ------
        PermitNotFoundError
        IllegalTransitionError
            If the permit is not suspended, its history shows no state before, or the
            written reasons are missing.
        ValidationError
            If ``on`` is before the permit's earlier dates.
        """
        return self._back(permit_number, "reinstatement", reasons=reasons, who=who, on=on)

    def _back(self, permit_number: str, move: str, *, reasons: str | None, who: str | None, on: date | None) -> Permit:
        """Undo the last stop-work order, suspension or revocation, as recorded in the history.

        The state to go back to is replayed from the append-only events inside the write
        transaction (the row is locked), so it is the same on every back end and no writer
        can slip a change in between.
        """
        who = _who(who)
        day = on or date.today()
        with self.backend.write() as cur:
            p = self._locked(cur, permit_number)
            before = check_back(p.status, move, p.previous_status, reasons=reasons, needs=self.written_reasons)
            self._check_order(p, day, before)
            self._set(cur, permit_number, {"status": before})
            self._event(cur, permit_number, Event(now_utc(), who, move, p.status, before, day, None, reasons))
        return self.get(permit_number)

    def _check_order(self, p: Permit, day: date, to: str) -> None:
        earlier = [("received_on", p.received_on), ("issued_on", p.issued_on if to not in ISSUED[:2] else None)]
        for name, d in earlier:
            if d is not None and day < d:
                raise ValidationError(
                    [
                        Problem(
                            p.permit_number,
                            None,
                            f"{to} on {day} is before {name} {d}.",
                            "give the date it really happened (--on YYYY-MM-DD).",
                        )
                    ]
                )

    def decision_due(self, p: Permit) -> Any:
        """When the decision on ``p`` is due (§ 540-8C(1), (4)); counted from added information if any."""
        start = p.information_received_on or p.received_on
        return decision_due(start, self.calendar, self.profile, after_information=p.information_received_on is not None)

    def extend(
        self,
        permit_number: str,
        days: int,
        *,
        who: str | None = None,
        on: date | None = None,
        reasons: str | None = None,
    ) -> Permit:
        """Extend an issued permit by up to 180 days (§ 540-8G); any number of times.

        Raises
        ------
        PermitNotFoundError
        IllegalTransitionError
            If the permit is not active or extended.
        ProfileError
            If ``days`` is not between 1 and the profile's limit (180).
        """
        who = _who(who)
        day = on or date.today()
        with self.backend.write() as cur:
            p = self._locked(cur, permit_number)
            check_transition(p.status, "extended")
            assert p.issued_on is not None  # active and extended permits were issued
            new_expiry = self._expiry(p.issued_on, p.building_permit_expires, [*p.extensions_days, int(days)])
            self._set(cur, permit_number, {"status": "extended", "expires_on": new_expiry})
            self._event(
                cur, permit_number, Event(now_utc(), who, "extension", p.status, "extended", day, int(days), reasons)
            )
        return self.get(permit_number)

    def update(
        self, permit_number: str, *, who: str | None = None, inspected_on: date | None = None, **changes: Any
    ) -> Permit:
        """Change a permit's descriptive fields or dates, or record an inspection.

        Parameters
        ----------
        permit_number : str
        who : str, optional
        inspected_on : date, optional
            Records a site inspection on that day (§ 540-8E(6)).
        **changes
            Fields of :data:`UPDATABLE`; ``None`` clears a date. A new ``work_stopped_on``
            starts a new pause: unless given with it, the expected resumption
            (``resume_expected_on``) and the resumption (``work_resumed_on``) of the last
            pause are cleared. Temporary stabilisation turns on them (§ 540-7A(4)(d)).

        Raises
        ------
        PermitNotFoundError
        ValidationError
            For an unknown field, a date before the permit's start, or a resumption
            (expected or actual) without a stop or before it.
        """
        who = _who(who)
        unknown = [k for k in changes if k not in UPDATABLE]
        if unknown:
            raise ValidationError(
                [
                    Problem(permit_number, None, f"{k!r} cannot be updated.", f"update one of {', '.join(UPDATABLE)}.")
                    for k in unknown
                ]
            )
        with self.backend.write() as cur:
            p = self._locked(cur, permit_number)
            problems = []
            for k, v in changes.items():
                d = v.date() if isinstance(v, datetime) else v
                if isinstance(d, date) and k != "building_permit_expires" and p.started_at and d < p.started_at.date():
                    problems.append(
                        Problem(
                            permit_number,
                            None,
                            f"{k} {d} is before the work started ({p.started_at.date()}).",
                            "give the real date.",
                        )
                    )
            if changes.get("work_stopped_on") is not None and changes["work_stopped_on"] != p.work_stopped_on:
                changes.setdefault("resume_expected_on", None)
                changes.setdefault("work_resumed_on", None)
            problems += self._pause_problems(p, changes)
            if inspected_on is not None and p.started_at is None:
                problems.append(
                    Problem(
                        permit_number,
                        None,
                        "an inspection cannot be recorded before work starts.",
                        "move the permit to active first (transition ... active).",
                    )
                )
            if problems:
                raise ValidationError(problems)
            if changes:
                if "building_permit_expires" in changes and p.issued_on is not None:
                    building = changes["building_permit_expires"]
                    changes["expires_on"] = self._expiry(p.issued_on, building, p.extensions_days)
                self._set(cur, permit_number, changes)
                detail = "; ".join(f"{k}: {getattr(p, k)} -> {v}" for k, v in changes.items() if k != "expires_on")
                self._event(cur, permit_number, Event(now_utc(), who, "update", None, None, None, None, detail))
            if inspected_on is not None:
                self._event(cur, permit_number, Event(now_utc(), who, "inspection", None, None, inspected_on))
                self._set(cur, permit_number, {})
        return self.get(permit_number)

    # Inspections ----------------------------------------------------------------------

    def inspect(self, permit_number: str, report: InspectionReport, *, who: str | None = None) -> Inspection:
        """Record a site inspection report, its deficiencies (each opens a repair) and photos (§ 540-8E(6)).

        Everything is checked first (the permit, the time, the names, every photo) and written
        in one transaction with an ``inspection`` event in the history, which the weekly
        inspection deadline counts like ``update(inspected_on=...)``. Deficiencies of earlier
        inspections named in ``report.repaired`` are closed as of this inspection.

        Returns
        -------
        Inspection
            The report as stored, with its number and its deficiencies' numbers.

        Raises
        ------
        ValidationError
            With every problem at once (no such permit, work not started, a time in the
            future or before the start, an empty name or assessment, a photo missing or not
            an image, a point off the site, a deficiency to close that is not open); nothing
            is written then.
        """
        who = _who(who)
        b = self.backend
        with b.read() as cur:
            found = self._select(cur, f"WHERE p.permit_number = {b.ph}", (permit_number,))
        problems, photos = check_report(report, found[0] if found else None, permit_number, now=now_utc())
        if problems:
            raise ValidationError(problems)
        at = report.inspected_at
        assert at is not None  # checked
        now = now_utc()
        with b.write() as cur:
            self._locked(cur, permit_number)
            cur.execute(
                "INSERT INTO inspections (permit_number, inspected_at, inspector, assessment, work_done, phase, "
                f"recorded_by, recorded_at, geom) VALUES ({', '.join([b.ph] * 8)}, {b.geom_param()}) RETURNING fid",
                (
                    permit_number,
                    b.dump("datetime", at),
                    report.inspector.strip(),
                    report.assessment.strip(),
                    (report.work_done or "").strip() or None,
                    (report.phase or "").strip() or None,
                    who,
                    b.dump("datetime", now),
                    b.dump_geom(report.location),
                ),
            )
            fid = int(cur.fetchone()[0])
            if report.deficiencies:
                cur.executemany(
                    "INSERT INTO deficiencies (inspection_id, permit_number, description, notified_at) "
                    f"VALUES ({', '.join([b.ph] * 4)})",
                    [
                        (fid, permit_number, text.strip(), b.dump("datetime", report.notified_at))
                        for text in report.deficiencies
                    ],
                )
            if photos:
                cur.executemany(
                    "INSERT INTO inspection_photos (inspection_id, filename, content_type, sha256, size_bytes, data) "
                    f"VALUES ({', '.join([b.ph] * 6)})",
                    [(fid, f.filename, f.content_type, f.sha256, f.size_bytes, f.data) for f in photos],
                )
            self._insert_repairs(cur, permit_number, report.repaired, at, fid, None, who, now)
            detail = (
                f"inspection report #{fid} by {report.inspector.strip()}: {len(report.deficiencies)} deficiency(ies), "
                f"{len(photos)} photo(s)"
                + (f"; repaired {', '.join(f'#{i}' for i in report.repaired)}" if report.repaired else "")
            )
            self._event(
                cur, permit_number, Event(now, who, "inspection", None, None, at.astimezone().date(), None, detail)
            )
            self._set(cur, permit_number, {})
        return next(r for r in self.get(permit_number).reports if r.id == fid)

    def repaired(
        self,
        permit_number: str,
        deficiencies: Sequence[int],
        *,
        on: datetime,
        who: str | None = None,
        detail: str | None = None,
    ) -> Permit:
        """Record that deficiencies were repaired (the BMPs repaired or replaced) at ``on``: their repairs close.

        Raises
        ------
        PermitNotFoundError
        ValidationError
            If no deficiency is given, one is not this permit's, already repaired, found
            after ``on``, or ``on`` is in the future; nothing is written then.
        """
        who = _who(who)
        now = now_utc()
        problems = []
        if not deficiencies:
            problems.append(Problem(permit_number, None, "no deficiency is named.", "give --deficiency ID."))
        if on > now + timedelta(minutes=5):
            problems.append(Problem(permit_number, None, f"the repair time {on} is in the future.", "give when."))
        with self.backend.write() as cur:
            p = self._locked(cur, permit_number)
            from esc_gis.registry.inspections import _repaired_problems

            probe = InspectionReport(on, "-", "-", repaired=deficiencies)
            problems += _repaired_problems(probe, p, permit_number)
            if problems:
                raise ValidationError(problems)
            self._insert_repairs(cur, permit_number, deficiencies, on, None, detail, who, now)
            text = f"repaired {', '.join(f'#{i}' for i in deficiencies)}" + (f": {detail}" if detail else "")
            self._event(cur, permit_number, Event(now, who, "repair", None, None, on.astimezone().date(), None, text))
            self._set(cur, permit_number, {})
        return self.get(permit_number)

    def _insert_repairs(
        self,
        cur: Any,
        number: str,
        ids: Sequence[int],
        at: datetime,
        inspection: int | None,
        detail: str | None,
        who: str,
        now: datetime,
    ) -> None:
        if not ids:
            return
        b = self.backend
        cur.executemany(
            "INSERT INTO repairs (deficiency_id, permit_number, repaired_at, inspection_id, detail, recorded_by, "
            f"recorded_at) VALUES ({', '.join([b.ph] * 7)})",
            [(int(i), number, b.dump("datetime", at), inspection, detail, who, b.dump("datetime", now)) for i in ids],
        )

    def photo(self, photo_id: int) -> Photo:
        """Return one inspection photo with its bytes.

        Raises
        ------
        RegistryError
            If there is no such photo, or its bytes no longer match the SHA-256 recorded.
        """
        import hashlib

        b = self.backend
        with b.read() as cur:
            cur.execute(
                "SELECT id, inspection_id, filename, content_type, sha256, size_bytes, data "
                f"FROM inspection_photos WHERE id = {b.ph}",
                (int(photo_id),),
            )
            row = cur.fetchone()
        if row is None:
            msg = f"There is no inspection photo #{photo_id} in the registry."
            raise RegistryError(msg)
        data = b.load("blob", row[6])
        if hashlib.sha256(data).hexdigest() != row[4]:
            msg = f"Inspection photo #{photo_id} ({row[2]}) does not match its recorded SHA-256: restore a backup."
            raise RegistryError(msg)
        return Photo(int(row[0]), int(row[1]), row[2], row[3], row[4], int(row[5]), data)

    @staticmethod
    def _pause_problems(p: Permit, changes: dict[str, Any]) -> list[Problem]:
        """List the problems of a resumption, expected or actual: it belongs to a stop and cannot precede it."""
        stopped = changes.get("work_stopped_on", p.work_stopped_on)
        out = []
        for k in ("resume_expected_on", "work_resumed_on"):
            v = changes.get(k)
            if v is None:
                continue
            if stopped is None:
                out.append(
                    Problem(
                        p.permit_number,
                        None,
                        f"{k} {v} is given, but no stop of work is recorded.",
                        "record the day work stopped too (--work-stopped YYYY-MM-DD).",
                    )
                )
            elif v < stopped:
                out.append(
                    Problem(
                        p.permit_number, None, f"{k} {v} is before work stopped ({stopped}).", "give the real date."
                    )
                )
        return out

    # Enforcement ----------------------------------------------------------------------

    def enforce(
        self,
        *,
        ground: str,
        on: date | None,
        reasons: str | None,
        permit_number: str | None = None,
        site_layer: str | os.PathLike[str] | None = None,
        site_id: str | None = None,
        address: str | None = None,
        who: str | None = None,
    ) -> EnforcementCase:
        """Open an enforcement case on a permit, a screened site, or an address (§ 540-12A).

        A screened site opens a case only if its screening row says a permit is
        ``required`` (the ground is then usually activity without a required permit).

        Raises
        ------
        ValidationError
            With every problem at once (no or several sites, an unknown ground, a ground
            that does not fit a permitted or unpermitted site, no reasons, a date in the
            future, a screened site that does not need a permit); nothing is written then.
        ProfileError
            If the profile lacks ``[enforcement.grounds]``.
        """
        who = _who(who)
        known = enforcement_grounds(self.profile.tables)
        src = "enforcement case"
        problems: list[Problem] = []

        def bad(message: str, fix: str) -> None:
            problems.append(Problem(src, None, message, fix))

        given = [x for x in (permit_number, site_layer, address) if x]
        if len(given) != 1:
            bad(
                "give exactly one site: a permit, a screened site, or an address.",
                "--permit, --site-layer or --address.",
            )
        if ground not in known:
            bad(f"ground {ground!r} is not one the profile lists.", f"use one of {', '.join(known)}.")
        if not (reasons or "").strip():
            bad("the reasons are empty.", "give the written reasons (--reasons).")
        if on is None:
            bad("the case has no date.", "give --on YYYY-MM-DD.")
        elif on > date.today():
            bad(f"the date {on} is in the future.", "give the day the case was opened.")
        site = None
        if permit_number:
            try:
                self.get(permit_number)
            except PermitNotFoundError:
                bad(f"there is no permit {permit_number!r} in the registry.", "check the number (`permits list`).")
        if site_layer is not None:
            site, ref_problems = self._screened_site(site_layer, site_id)
            problems += [Problem(str(site_layer), None, m, f) for m, f in ref_problems]
        problems += self._ground_problems(known.get(ground, {}), ground, permit_number, src)
        if problems:
            raise ValidationError(problems)
        return self._open_case(ground, on, reasons, permit_number, site_layer, site_id, address, site, who)

    @staticmethod
    def _ground_problems(g: dict[str, Any], ground: str, permit_number: str | None, src: str) -> list[Problem]:
        """Return the problems of a ground that does not fit the case's site (permitted or not)."""
        problems: list[Problem] = []

        def bad(message: str, fix: str) -> None:
            problems.append(Problem(src, None, message, fix))

        if g.get("without_permit") and permit_number:
            bad(
                f"ground {ground} is activity without a permit, but the case names permit {permit_number}.",
                "use another ground.",
            )
        if g.get("needs_permit") and not permit_number:
            bad(f"ground {ground} is about a permit's plan or conditions; the case names no permit.", "give --permit.")
        return problems

    def _open_case(
        self,
        ground: str,
        on: date | None,
        reasons: str | None,
        permit_number: str | None,
        site_layer: str | os.PathLike[str] | None,
        site_id: str | None,
        address: str | None,
        site: shapely.Geometry | None,
        who: str,
    ) -> EnforcementCase:
        """Write a checked case and its opening event in one transaction."""
        assert on is not None
        b = self.backend
        now = now_utc()
        ref = f"{Path(site_layer).name}#{site_id}" if site_layer is not None else None
        with b.write() as cur:
            if permit_number:
                self._locked(cur, permit_number)
            prefix = f"ENF-{on.year}-"
            cur.execute(f"SELECT case_id FROM enforcement_cases WHERE case_id LIKE {b.ph}", (prefix + "%",))
            taken = [int(r[0].rsplit("-", 1)[1]) for r in cur.fetchall() if r[0].rsplit("-", 1)[1].isdigit()]
            case_id = f"{prefix}{max(taken, default=0) + 1:04d}"
            cur.execute(
                "INSERT INTO enforcement_cases (case_id, permit_number, site_address, site_ref, ground, opened_on, "
                f"reasons, opened_by, opened_at, geom) VALUES ({', '.join([b.ph] * 9)}, {b.geom_param()})",
                (
                    case_id,
                    permit_number or None,
                    (address or "").strip() or None,
                    ref,
                    ground,
                    b.dump("date", on),
                    (reasons or "").strip(),
                    who,
                    b.dump("datetime", now),
                    b.dump_geom(site),
                ),
            )
            self._case_event(cur, case_id, "opened", on, who, now, detail=f"ground {ground}: {(reasons or '').strip()}")
            if permit_number:
                self._event(
                    cur, permit_number, Event(now, who, "enforcement", None, None, on, None, f"case {case_id} opened")
                )
        return self.case(case_id)

    def _screened_site(
        self, path: str | os.PathLike[str], site_id: str | None
    ) -> tuple[shapely.Geometry | None, list[tuple[str, str]]]:
        """Read one site of a screening output; refuse it unless a permit is required there."""
        import pyogrio

        if not site_id:
            return None, [("no site id is given.", "give --site-id.")]
        try:
            layers = [str(r[0]) for r in pyogrio.list_layers(path)]
            layer = "screening" if "screening" in layers else layers[0]
            frame = gpd.read_file(path, layer=layer)
        except Exception as exc:  # pyogrio raises several kinds for a bad file
            return None, [(f"cannot be read as a screening output: {exc}.", "give the file `esc-gis screen` wrote.")]
        missing = [c for c in ("site_id", "permit") if c not in frame.columns]
        if missing:
            return None, [(f"has no {', '.join(missing)} column.", "give the file `esc-gis screen` wrote.")]
        row = frame[frame["site_id"].astype(str) == str(site_id)]
        if row.empty:
            return None, [(f"has no site {site_id!r}.", "check the site id.")]
        decision = str(row["permit"].iloc[0])
        if decision != "required":
            return None, [
                (
                    f"site {site_id} does not need a permit (screening: permit {decision}); "
                    "a case for activity without a required permit cannot be opened on it.",
                    "open the case on another ground by --address, or re-screen the site.",
                )
            ]
        if frame.crs is None:
            return None, [("has no CRS.", "give the file `esc-gis screen` wrote.")]
        geom = _as_multi(self._to_registry_crs([row.geometry.iloc[0]], [frame.crs])[0])
        # A site a permit already covers has a permit: the case is the permit's.
        covering = [
            p.permit_number for p in self.permits() if p.site is not None and p.site.intersection(geom).area > 0
        ]
        if covering:
            return None, [
                (
                    f"site {site_id} lies on the site of permit {', '.join(covering)}.",
                    "open the case on the permit (--permit).",
                )
            ]
        return geom, []

    def _case_event(
        self,
        cur: Any,
        case_id: str,
        kind: str,
        on: date,
        who: str,
        at: datetime,
        *,
        costs: float | None = None,
        costs_from: str | None = None,
        detail: str | None = None,
    ) -> None:
        b = self.backend
        cur.execute(
            "INSERT INTO enforcement_events (case_id, at, who, kind, on_date, costs, costs_from, detail) "
            f"VALUES ({', '.join([b.ph] * 8)})",
            (case_id, b.dump("datetime", at), who, kind, b.dump("date", on), costs, costs_from, detail),
        )

    def case_action(
        self,
        case_id: str,
        kind: str,
        *,
        on: date | None,
        who: str | None = None,
        reasons: str | None = None,
        costs: float | None = None,
        costs_from: str | None = None,
    ) -> EnforcementCase:
        """Record an event of a case: stop-work order, notice of intent, costs, referral, retraction, closing.

        On a permitted site a stop-work order moves the permit to ``stop_work`` and a
        retraction moves it back to the state before, with the written reasons the life
        cycle requires, in the same transaction.

        Raises
        ------
        ValidationError
            With every problem at once; nothing is written then.
        RegistryError
            If there is no such case.
        """
        who = _who(who)
        case = self.case(case_id)
        messages = check_action(case, kind, on, costs=costs, costs_from=costs_from, today=date.today())
        needs = self.written_reasons
        move = {"stop_work": "stop_work", "retraction": "retraction"}.get(kind)
        permit = self.get(case.permit_number) if case.permit_number and move else None
        if move and move in needs and not (reasons or "").strip():
            messages.append(f"a {kind.replace('_', '-')} needs written reasons ({needs[move]}).")
        if permit is not None:
            try:
                if kind == "stop_work":
                    check_transition(permit.status, "stop_work", reasons=reasons or "-", needs=needs)
                else:
                    check_back(permit.status, "retraction", permit.previous_status, reasons=reasons or "-", needs=needs)
            except IllegalTransitionError as exc:
                messages.append(f"permit {permit.permit_number}: {exc}")
        if messages:
            raise ValidationError(
                [Problem(case_id, None, m, "see the case with `esc-gis permits case`.") for m in messages]
            )
        assert on is not None
        now = now_utc()
        text = (reasons or "").strip() or None
        with self.backend.write() as cur:
            if permit is not None:
                p = self._locked(cur, permit.permit_number)
                if kind == "stop_work":
                    to = "stop_work"
                    check_transition(p.status, to, reasons=text, needs=needs)
                    self._check_order(p, on, to)
                    ev = "transition"
                else:
                    to = check_back(p.status, "retraction", p.previous_status, reasons=text, needs=needs)
                    self._check_order(p, on, to)
                    ev = "retraction"
                self._set(cur, p.permit_number, {"status": to})
                self._event(
                    cur, p.permit_number, Event(now, who, ev, p.status, to, on, None, f"case {case_id}: {text}")
                )
            self._case_event(cur, case_id, kind, on, who, now, costs=costs, costs_from=costs_from, detail=text)
        return self.case(case_id)

    def case(self, case_id: str) -> EnforcementCase:
        """Return one enforcement case with its events.

        Raises
        ------
        RegistryError
            If there is no such case.
        """
        found = self.cases(case_id=case_id)
        if not found:
            msg = f"There is no enforcement case {case_id!r} in the registry (`esc-gis permits cases` lists them)."
            raise RegistryError(msg)
        return found[0]

    def cases(self, *, case_id: str | None = None, permit_number: str | None = None) -> list[EnforcementCase]:
        """Return the enforcement cases (all, one, or a permit's), oldest first, with their events."""
        b = self.backend
        where: str = ""
        params: tuple[str, ...] = ()
        if case_id is not None:
            where, params = f"WHERE case_id = {b.ph}", (case_id,)
        elif permit_number is not None:
            where, params = f"WHERE permit_number = {b.ph}", (permit_number,)
        with b.read() as cur:
            cur.execute(
                "SELECT case_id, permit_number, site_address, site_ref, ground, opened_on, reasons, opened_by, "
                f"{b.geom_column('geom', 'site')} FROM enforcement_cases {where} ORDER BY fid",
                params,
            )
            found = list(rows(cur))
            cur.execute(
                "SELECT id, case_id, kind, on_date, who, at, costs, costs_from, detail FROM enforcement_events "
                "WHERE kind <> 'opened' ORDER BY id"
            )
            events: dict[str, list[CaseEvent]] = {}
            for r in rows(cur):
                events.setdefault(r["case_id"], []).append(
                    CaseEvent(
                        int(r["id"]),
                        r["kind"],
                        b.load("date", r["on_date"]),
                        r["who"],
                        b.load("datetime", r["at"]),
                        None if r["costs"] is None else float(r["costs"]),
                        r["costs_from"],
                        r["detail"],
                    )
                )
        return [
            EnforcementCase(
                r["case_id"],
                r["permit_number"],
                r["site_address"],
                r["site_ref"],
                r["ground"],
                b.load("date", r["opened_on"]),
                r["reasons"],
                r["opened_by"],
                b.load_geom(r["site"]),
                tuple(events.get(r["case_id"], ())),
            )
            for r in found
        ]

    # Appeals --------------------------------------------------------------------------

    def appeal(
        self,
        *,
        appealed: str | None,
        appellant: str | None,
        appellant_kind: str,
        on: date | None,
        grounds: str | None,
        permit_number: str | None = None,
        case_id: str | None = None,
        who: str | None = None,
    ) -> Appeal:
        """Record an appeal of an order, decision or determination (§ 540-13).

        Raises
        ------
        ValidationError
            With every problem at once (no permit or case, an unknown permit or case, an
            appellant kind the profile does not list, empty texts, a date in the future);
            nothing is written then.
        """
        who = _who(who)
        terms = appeal_terms(self.profile.tables)
        problems: list[Problem] = []

        def bad(message: str, fix: str) -> None:
            problems.append(Problem("appeal", None, message, fix))

        if not permit_number and not case_id:
            bad("the appeal names no permit and no enforcement case.", "give --permit or --case.")
        if permit_number and permit_number not in {p.permit_number for p in self.permits()}:
            bad(f"there is no permit {permit_number!r} in the registry.", "check the number (`permits list`).")
        case = self.cases(case_id=case_id) if case_id else []
        if case_id and not case:
            bad(f"there is no enforcement case {case_id!r}.", "check the id (`permits cases`).")
        elif case and case[0].permit_number:
            if permit_number and permit_number != case[0].permit_number:
                bad(
                    f"case {case_id} is about permit {case[0].permit_number}, not {permit_number}.", "give one of them."
                )
            permit_number = case[0].permit_number  # the case's permit is what the appeal can change
        if appellant_kind not in terms["appellants"]:
            bad(
                f"appellant kind {appellant_kind!r} is not one the profile lists.",
                f"use {', '.join(terms['appellants'])}.",
            )
        for name, value in (("appealed decision", appealed), ("appellant", appellant), ("grounds", grounds)):
            if not (value or "").strip():
                bad(f"the {name} is empty.", f"give the {name}.")
        if on is None or on > date.today():
            bad(f"the filing date {on} is missing or in the future.", "give --on YYYY-MM-DD.")
        if problems:
            raise ValidationError(problems)
        assert on is not None
        b = self.backend
        now = now_utc()
        with b.write() as cur:
            prefix = f"APL-{on.year}-"
            cur.execute(f"SELECT appeal_id FROM appeals WHERE appeal_id LIKE {b.ph}", (prefix + "%",))
            taken = [int(r[0].rsplit("-", 1)[1]) for r in cur.fetchall()]
            appeal_id = f"{prefix}{max(taken, default=0) + 1:04d}"
            cur.execute(
                "INSERT INTO appeals (appeal_id, permit_number, case_id, appealed, appellant, appellant_kind, "
                f"filed_on, grounds, recorded_by, recorded_at) VALUES ({', '.join([b.ph] * 10)})",
                (
                    appeal_id,
                    permit_number or None,
                    case_id or None,
                    (appealed or "").strip(),
                    (appellant or "").strip(),
                    appellant_kind,
                    b.dump("date", on),
                    (grounds or "").strip(),
                    who,
                    b.dump("datetime", now),
                ),
            )
            if permit_number:
                detail = f"appeal {appeal_id} filed ({appellant_kind})"
                self._event(cur, permit_number, Event(now, who, "appeal", None, None, on, None, detail))
        return self.appeals(appeal_id=appeal_id)[0]

    def decide_appeal(
        self,
        appeal_id: str,
        *,
        body: str,
        outcome: str,
        on: date | None,
        conditions: str | None = None,
        who: str | None = None,
    ) -> Appeal:
        """Record the decision on an appeal and its effect on the permit (§ 540-13A).

        A reversal of a stop-work order or revocation retracts it, of a suspension lifts it:
        the permit goes back to the state before, in the same transaction.

        Raises
        ------
        ValidationError
            With every problem at once (no such appeal, already decided, a body or outcome
            the profile does not list, a variance without conditions, a date before the
            filing or in the future); nothing is written then.
        """
        who = _who(who)
        terms = appeal_terms(self.profile.tables)
        found = self.appeals(appeal_id=appeal_id)
        problems: list[str] = []
        if not found:
            problems.append("there is no such appeal.")
        elif found[0].decision is not None:
            problems.append(f"the appeal was already decided ({found[0].decision.decided_on}).")
        if body not in terms["bodies"]:
            problems.append(f"body {body!r} is not one the profile lists; use {', '.join(terms['bodies'])}.")
        if outcome not in terms["outcomes"]:
            problems.append(f"outcome {outcome!r} is not one the profile lists; use {', '.join(terms['outcomes'])}.")
        if outcome == "variance" and not (conditions or "").strip():
            problems.append("a variance is granted with its conditions; give --conditions.")
        if on is None or on > date.today() or (found and on < found[0].filed_on):
            problems.append(f"the decision date {on} is missing, in the future, or before the filing.")
        if problems:
            raise ValidationError([Problem(appeal_id, None, m, "see `esc-gis permits appeals`.") for m in problems])
        assert on is not None
        a = found[0]
        now = now_utc()
        b = self.backend
        # Read before the write transaction (a GeoPackage cannot nest one in it).
        retract_case = bool(a.case_id) and outcome == "reversed" and self.case(str(a.case_id)).state == "stop_work"
        with b.write() as cur:
            effect = "permit state unchanged" if a.permit_number else "no permit"
            if a.permit_number:
                p = self._locked(cur, a.permit_number)
                move = BACK.get(p.status) if outcome == "reversed" else None
                if move is not None:
                    reasons = f"appeal {appeal_id} reversed by {body}"
                    before = check_back(p.status, move, p.previous_status, reasons=reasons, needs=self.written_reasons)
                    self._set(cur, p.permit_number, {"status": before})
                    self._event(cur, p.permit_number, Event(now, who, move, p.status, before, on, None, reasons))
                    effect = f"permit {p.status} -> {before}"
                detail = f"appeal {appeal_id}: {outcome} by {body}; {effect}"
                self._event(cur, p.permit_number, Event(now, who, "appeal_decision", None, None, on, None, detail))
            if retract_case:
                self._case_event(cur, str(a.case_id), "retraction", on, who, now, detail=f"appeal {appeal_id} reversed")
                effect += "; case order retracted"
            cur.execute(
                "INSERT INTO appeal_decisions (appeal_id, decided_on, body, outcome, conditions, effect, recorded_by, "
                f"recorded_at) VALUES ({', '.join([b.ph] * 8)})",
                (
                    appeal_id,
                    b.dump("date", on),
                    body,
                    outcome,
                    (conditions or "").strip() or None,
                    effect,
                    who,
                    b.dump("datetime", now),
                ),
            )
        return self.appeals(appeal_id=appeal_id)[0]

    def appeals(self, *, appeal_id: str | None = None) -> list[Appeal]:
        """Return the appeals (all, or one), oldest first, with their decisions."""
        b = self.backend
        where: str = f"WHERE a.appeal_id = {b.ph}" if appeal_id else ""
        params: tuple[str, ...] = (appeal_id,) if appeal_id else ()
        with b.read() as cur:
            cur.execute(
                "SELECT a.appeal_id, a.permit_number, a.case_id, a.appealed, a.appellant, a.appellant_kind, "
                "a.filed_on, a.grounds, a.recorded_by, d.decided_on, d.body, d.outcome, d.conditions, d.effect, "
                f"d.recorded_by AS decided_by FROM appeals a LEFT JOIN appeal_decisions d ON d.appeal_id = a.appeal_id "
                f"{where} ORDER BY a.id",
                params,
            )
            found = list(rows(cur))
        return [
            Appeal(
                r["appeal_id"],
                r["permit_number"],
                r["case_id"],
                r["appealed"],
                r["appellant"],
                r["appellant_kind"],
                b.load("date", r["filed_on"]),
                r["grounds"],
                r["recorded_by"],
                None
                if r["decided_on"] is None
                else AppealDecision(
                    b.load("date", r["decided_on"]),
                    r["body"],
                    r["outcome"],
                    r["conditions"],
                    r["effect"],
                    r["decided_by"],
                ),
            )
            for r in found
        ]

    # Export ---------------------------------------------------------------------------

    # Fees and financial guarantees ------------------------------------------------------

    def record_fee(
        self,
        permit_number: str,
        *,
        kind: str,
        amount: float,
        paid_on: date | None,
        receipt: str,
        schedule: FeeSchedule | None = None,
        who: str | None = None,
    ) -> Fee:
        """Record a fee paid (§ 540-8B), with its receipt, and a history event, in one transaction.

        With ``schedule`` (the office's fee schedule set by resolution, § 540-10) the kind must
        be one it lists and the amount the one it sets.

        Raises
        ------
        PermitNotFoundError
        ValidationError
            With every problem at once (no date, a date in the future, no receipt, a receipt
            already recorded, a kind or amount the schedule does not set); nothing is written then.
        """
        who = _who(who)
        self.get(permit_number)
        messages = check_fee(kind, amount, paid_on, receipt, schedule)
        if receipt.strip() and any(f.receipt == receipt.strip() for f in self.fees()):
            messages.append(f"receipt {receipt!r} is already recorded.")
        if messages:
            raise fee_problems(permit_number, messages, "correct the fee and record it again (`permits fee`).")
        assert paid_on is not None
        b = self.backend
        now = now_utc()
        resolution = f"{schedule.resolution} ({schedule.adopted_on})" if schedule else None
        with b.write() as cur:
            self._locked(cur, permit_number)
            cur.execute(
                "INSERT INTO fees (permit_number, kind, amount, paid_on, receipt, schedule_resolution, recorded_by, "
                f"recorded_at) VALUES ({', '.join([b.ph] * 8)})",
                (
                    permit_number,
                    kind,
                    float(amount),
                    b.dump("date", paid_on),
                    receipt.strip(),
                    resolution,
                    who,
                    b.dump("datetime", now),
                ),
            )
            detail = f"{kind} fee {amount:,.2f}, receipt {receipt.strip()}" + (
                f"; schedule {resolution}" if resolution else ""
            )
            self._event(cur, permit_number, Event(now, who, "fee", None, None, paid_on, None, detail))
        return next(f for f in self.fees(permit_number) if f.receipt == receipt.strip())

    def fees(self, permit_number: str | None = None) -> list[Fee]:
        """Return the fees recorded (all, or a permit's), oldest first."""
        b = self.backend
        where, params = (f"WHERE permit_number = {b.ph}", (permit_number,)) if permit_number else ("", ())
        with b.read() as cur:
            cur.execute(
                "SELECT id, permit_number, kind, amount, paid_on, receipt, schedule_resolution, recorded_by, "
                f"recorded_at FROM fees {where} ORDER BY id",
                params,
            )
            return [
                Fee(
                    int(r["id"]),
                    r["permit_number"],
                    r["kind"],
                    float(r["amount"]),
                    b.load("date", r["paid_on"]),
                    r["receipt"],
                    r["schedule_resolution"],
                    r["recorded_by"],
                    b.load("datetime", r["recorded_at"]),
                )
                for r in rows(cur)
            ]

    def add_guarantee(
        self,
        permit_number: str,
        *,
        type: str,
        amount: float,
        received_on: date | None,
        expires_on: date | None = None,
        who: str | None = None,
    ) -> Guarantee:
        """Record a financial guarantee received (§ 540-8D) and a history event, in one transaction.

        Raises
        ------
        PermitNotFoundError
        ValidationError
            With every problem at once (unknown type, amount not above 0, a letter of credit
            without an expiry or another type with one); nothing is written then.
        """
        who = _who(who)
        self.get(permit_number)
        messages = check_guarantee(type, amount, received_on, expires_on)
        if messages:
            raise fee_problems(permit_number, messages, "correct the guarantee and record it again.")
        assert received_on is not None
        b = self.backend
        now = now_utc()
        with b.write() as cur:
            self._locked(cur, permit_number)
            cur.execute(
                "INSERT INTO guarantees (permit_number, type, amount, received_on, expires_on, recorded_by, "
                f"recorded_at) VALUES ({', '.join([b.ph] * 7)})",
                (
                    permit_number,
                    type,
                    float(amount),
                    b.dump("date", received_on),
                    b.dump("date", expires_on),
                    who,
                    b.dump("datetime", now),
                ),
            )
            until = f", expires {expires_on}" if expires_on else ""
            detail = f"guarantee received: {type.replace('_', ' ')} {amount:,.2f}{until}"
            self._event(cur, permit_number, Event(now, who, "guarantee", None, None, received_on, None, detail))
        return self.guarantees(permit_number)[-1]

    def guarantee_event(
        self,
        guarantee_id: int,
        kind: str,
        *,
        on: date | None,
        amount: float | None = None,
        reason: str | None = None,
        stage: str | None = None,
        engineer: str | None = None,
        who: str | None = None,
    ) -> Guarantee:
        """Record a draw, a partial prorated release or the final release of a guarantee (§ 540-8D(1)).

        The final release releases what is left; it needs the licensed engineer whose
        as-built plans were submitted. A history event goes with it in the same transaction.

        Raises
        ------
        RegistryError
            If there is no such guarantee.
        ValidationError
            With every problem at once; nothing is written then.
        """
        who = _who(who)
        found = [g for g in self.guarantees() if g.id == guarantee_id]
        if not found:
            msg = f"There is no guarantee #{guarantee_id} in the registry; see `esc-gis permits guarantees`."
            raise RegistryError(msg)
        g = found[0]
        messages = check_guarantee_event(g, kind, on, amount=amount, reason=reason, stage=stage, engineer=engineer)
        if messages:
            raise fee_problems(f"guarantee #{guarantee_id}", messages, "see `esc-gis permits guarantees`.")
        assert on is not None
        if kind == "final_release":
            amount = g.balance
        b = self.backend
        now = now_utc()
        with b.write() as cur:
            self._locked(cur, g.permit_number)
            cur.execute(
                "INSERT INTO guarantee_events (guarantee_id, permit_number, kind, on_date, amount, reason, stage, "
                f"engineer, recorded_by, recorded_at) VALUES ({', '.join([b.ph] * 10)})",
                (
                    guarantee_id,
                    g.permit_number,
                    kind,
                    b.dump("date", on),
                    amount,
                    reason,
                    stage,
                    engineer,
                    who,
                    b.dump("datetime", now),
                ),
            )
            why = {
                "draw": f"for {reason}",
                "release": f"stage {stage}",
                "final_release": f"as-built plans by {engineer}",
            }
            detail = f"guarantee #{guarantee_id} {kind.replace('_', ' ')} {amount or 0:,.2f}: {why[kind]}"
            self._event(cur, g.permit_number, Event(now, who, f"guarantee_{kind}", None, None, on, None, detail))
        return next(x for x in self.guarantees() if x.id == guarantee_id)

    def guarantees(self, permit_number: str | None = None) -> list[Guarantee]:
        """Return the guarantees (all, or a permit's), oldest first, with their events."""
        b = self.backend
        where, params = (f"WHERE permit_number = {b.ph}", (permit_number,)) if permit_number else ("", ())
        with b.read() as cur:
            cur.execute(
                "SELECT id, guarantee_id, kind, on_date, amount, reason, stage, engineer, recorded_by, recorded_at "
                "FROM guarantee_events ORDER BY id"
            )
            events: dict[int, list[GuaranteeEvent]] = {}
            for r in rows(cur):
                events.setdefault(int(r["guarantee_id"]), []).append(
                    GuaranteeEvent(
                        int(r["id"]),
                        r["kind"],
                        b.load("date", r["on_date"]),
                        None if r["amount"] is None else float(r["amount"]),
                        r["reason"],
                        r["stage"],
                        r["engineer"],
                        r["recorded_by"],
                        b.load("datetime", r["recorded_at"]),
                    )
                )
            cur.execute(
                "SELECT id, permit_number, type, amount, received_on, expires_on, recorded_by, recorded_at "
                f"FROM guarantees {where} ORDER BY id",
                params,
            )
            return [
                Guarantee(
                    int(r["id"]),
                    r["permit_number"],
                    r["type"],
                    float(r["amount"]),
                    b.load("date", r["received_on"]),
                    b.load("date", r["expires_on"]),
                    r["recorded_by"],
                    b.load("datetime", r["recorded_at"]),
                    tuple(events.get(int(r["id"]), ())),
                )
                for r in rows(cur)
            ]

    def frame(
        self, permits: Sequence[Permit] | None = None, *, private: bool = False, iso_dates: bool = False
    ) -> gpd.GeoDataFrame:
        """Return the permits as a GeoDataFrame (site geometry, registry CRS), without contacts unless ``private``.

        ``iso_dates`` gives dates and times as ISO text, which every output format writes the same.
        """
        permits = self.permits() if permits is None else permits

        # Object columns: pandas would turn dates into Timestamps and gaps into NaT.
        def value(p: Permit, f: str) -> Any:
            v = getattr(p, f)
            return v.isoformat() if iso_dates and isinstance(v, date) else v

        data: dict[str, Any] = {f: pd.Series([value(p, f) for p in permits], dtype=object) for f in _PERMIT_FIELDS}
        data["disturbed_acres"] = [round(p.disturbed_acres, 3) for p in permits]
        if private:
            for role in ("landowner", "responsible_party"):
                for attr in ("name", "organization", "phone", "email", "address"):
                    data[f"{role}_{attr}"] = [
                        next((getattr(q, attr) for q in p.parties if q.role == role), None) for p in permits
                    ]
        return gpd.GeoDataFrame(data, geometry=[p.site for p in permits], crs=self.crs)


def _decision(r: Any) -> dict[str, Any]:
    """Return the measured area and decision of one screened row, as the registry stores them."""
    return {
        "disturbed_sqft": float(r.disturbed_sqft),
        "plan_disturbed_sqft": float(r.plan_disturbed_sqft),
        "permit_decision": str(r.permit),
        "standards": str(r.standards),
        "sediment_standard": bool(r.sediment_standard),
    }


def _as_multi(g: shapely.Geometry) -> shapely.Geometry:
    """Return ``g`` as a 2-D MultiPolygon, the type the registry's layers declare, whatever was drawn."""
    return shapely.force_2d(shapely.multipolygons(shapely.get_parts(g)))


def _area_sqft(s: gpd.GeoSeries) -> np.ndarray:
    from esc_gis.measure import area_sqft

    return np.asarray(area_sqft(s.to_numpy(), s.crs))


def _check_geometry(a: Application, bad: Callable[..., None]) -> bool:
    """Check one application's site and disturbed limits; return whether they can be measured."""
    drawn = True
    for name, g in (("site", a.site), ("disturbed", a.disturbed)):
        if g is None and name == "disturbed":
            continue
        if g is None or g.is_empty:
            bad(f"the {name} geometry is empty.", "draw the site boundary.")
        elif shapely.get_type_id(g) not in (3, 6):
            bad(f"the {name} geometry is a {g.geom_type}, not a polygon.", "give polygons.")
        elif not g.is_valid:
            bad(
                f"the {name} geometry is invalid ({shapely.is_valid_reason(g)}).",
                "repair it (QGIS: Fix geometries; or shapely.make_valid).",
            )
        else:
            continue
        drawn = False
    if a.crs is None:
        bad("the geometry has no CRS.", "give the CRS it was drawn in, e.g. EPSG:7594.")
        drawn = False
    return drawn
