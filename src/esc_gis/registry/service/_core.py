"""The registry's core: its connection, the SQL that reads permits back, and shared helpers.

The helpers write rows and history events for every part of
:class:`~esc_gis.registry.service.registry.Registry`.
"""

from __future__ import annotations

__all__ = ["ISSUED", "UPDATABLE", "RegistryBase"]

import getpass
import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from esc_gis._lazy import lazy_module
from esc_gis.errors import (
    PermitNotFoundError,
    Problem,
    ValidationError,
)
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.dates import EffectiveDate, date_problems
from esc_gis.registry.domain.deadlines import expiry
from esc_gis.registry.domain.events import HistoryEvent, typed
from esc_gis.registry.domain.fees import APPLICATION_FEE
from esc_gis.registry.domain.fold import PermitState, fold
from esc_gis.registry.domain.lifecycle import STATES, written_reasons
from esc_gis.registry.domain.records import Deficiency, Event, Inspection, Party, Permit, Photo
from esc_gis.registry.store import history as history_store
from esc_gis.registry.store.backend import Backend, rows
from esc_gis.registry.store.projection import Context, Rows, project
from esc_gis.registry.store.schema import PERMIT_COLUMNS, TABLES

if TYPE_CHECKING:
    import geopandas as gpd
    import numpy as np
    import pandas as pd
    import pyproj
    import shapely

    from esc_gis.layers import LayerSet
    from esc_gis.profile import Profile
    from esc_gis.registry.domain.fees import FeeSchedule
else:
    # Loaded on first use: listing, showing and the due dates start without them; a geometry
    # is read into shapely when it is first used (records.StoredGeometry).
    gpd = lazy_module("geopandas")
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    pyproj = lazy_module("pyproj")
    shapely = lazy_module("shapely")

_KINDS = {name: kind for name, kind, _ in PERMIT_COLUMNS}
_PERMIT_FIELDS = [name for name, _, _ in PERMIT_COLUMNS if name not in ("fid", "geom")]
#: States in which a permit has been issued (its expiry runs).
ISSUED = ("approved", "deemed_approved", "active", "extended", "stop_work", "suspended", "final_stabilization")
#: Fields the screening engine measures for a permit.
_MEASURED = (
    "site_sqft",
    "disturbed_sqft",
    "plan_disturbed_sqft",
    "permit_decision",
    "standards",
    "sediment_standard",
    "jurisdiction",
    "disturbed_in_village_sqft",
)
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


def _path(p: str | os.PathLike[str] | None) -> Path | None:
    return None if p is None else Path(p)


def _who(who: str | None) -> str:
    if who and who.strip():
        return who.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name (a container): still say something
        return "unknown"


class RegistryBase:
    """The registry's connection, its reading SQL, and the event and row helpers every part shares.

    The parts of :class:`~esc_gis.registry.service.registry.Registry` (intake, moves, inspections,
    enforcement and appeals, fees and guarantees) each subclass this in their own module.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        layers: LayerSet | str | os.PathLike[str] | None,
        profile: Profile | None = None,
        calendar: OfficeCalendar | None = None,
    ) -> None:
        self.backend = backend
        self._layers = layers
        self._profile = profile
        self._calendar = calendar
        self._crs: pyproj.CRS | None = None

    @property
    def profile(self) -> Profile:
        """The ordinance profile the registry counts its deadlines by (the bundled one unless given), read on first use.

        Listing permits never reads it: their rows and folded states need no deadline.

        Raises
        ------
        ProfileError
            If the bundled profile cannot be read (a broken installation).
        """
        if self._profile is None:
            from esc_gis.profile import load_profile

            self._profile = load_profile()
        return self._profile

    @property
    def calendar(self) -> OfficeCalendar:
        """The office calendar business days are counted on (the profile's unless given), made on first use."""
        if self._calendar is None:
            from esc_gis.registry.domain.calendar import profile_calendar

            self._calendar = profile_calendar(self.profile)
        return self._calendar

    @property
    def crs(self) -> pyproj.CRS:
        """The registry's CRS (its back end's SRID), made on first use: listing permits needs no pyproj."""
        if self._crs is None:
            self._crs = pyproj.CRS.from_epsg(self.backend.srid)
        return self._crs

    @property
    def layers(self) -> LayerSet:
        """The layer set the registry measures with, read on first use (the bundled one by default).

        Raises
        ------
        LayerSetError
            If the manifest given to :func:`~esc_gis.registry.open_registry` cannot be read.
        """
        from esc_gis.layers import LayerSet, load_layers

        if not isinstance(self._layers, LayerSet):
            self._layers = load_layers(_path(self._layers), profile=self.profile)
        return self._layers

    @property
    def fee_schedule(self) -> FeeSchedule | None:
        """The office's fee schedule the layer set names (``[fees]``), or None if it names none.

        Raises
        ------
        LayerSetError
            If the layer set cannot be read.
        ProfileError
            If the schedule it names is missing or not usable.
        """
        from esc_gis.registry.domain.fees import load_fee_schedule

        path = self.layers.fee_schedule
        return load_fee_schedule(path) if path is not None else None

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
            out.append(Permit(**values, site=b.stored_geom(row[-2]), disturbed=b.stored_geom(row[-1])))
        if not out:
            return out
        by_number = {p.permit_number: p for p in out}
        ph = ", ".join([b.ph] * len(by_number))
        party_cols = [c for c, _, _ in TABLES["parties"] if c not in ("id", "permit_number")]
        if b.can_read("parties"):  # a role that may not (the inspector's, on PostGIS) gets none
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
        self._select_states(cur, by_number)
        return out

    def _select_states(self, cur: Any, by_number: dict[str, Permit]) -> None:
        """Attach each permit's state, folded from its history."""
        streams: dict[str, list[HistoryEvent]] = {}
        for e in history_store.read(cur, self.backend, list(by_number)):
            streams.setdefault(e.stream, []).append(e)
        for number, p in by_number.items():
            p.state = fold(streams.get(number, ()), application_fee=APPLICATION_FEE)

    def _select_letters_of_credit(self, cur: Any, by_number: dict[str, Permit]) -> None:
        """Attach each permit's letters of credit with what is still held (after draws and releases)."""
        b = self.backend
        if not b.can_read("guarantees"):  # the office's money: not the inspector's to read
            return
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
            "inspected_by, pre_start, adjoining_repairs, on_site_documents, certificate_posted, "
            f"{b.geom_column('geom', 'location')} FROM inspections WHERE permit_number IN ({ph}) "
            "ORDER BY inspected_at, fid",
            numbers,
        )
        reports = {
            int(r[0]): (
                r[1],
                Inspection(
                    int(r[0]),
                    b.load("datetime", r[2]),
                    r[3],
                    r[4],
                    r[5],
                    r[6],
                    r[7],
                    location=b.stored_geom(r[13]),
                    by=r[8],
                    pre_start=bool(b.load("bool", r[9])),
                    adjoining_repairs=r[10],
                    on_site_documents=b.load("bool", r[11]),
                    certificate_posted=b.load("bool", r[12]),
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

        Parameters
        ----------
        permit_number : str
            E.g. ``"ESC-2026-0001"``.

        Returns
        -------
        Permit
            Its record: status, dates, areas, parties, ``events`` (the clerk's log), ``reports``
            (the inspections) and ``state`` (the fold of its history).

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

        Parameters
        ----------
        status : str or iterable of str, optional
            Only the permits in this state (or these states), e.g. ``"active"``.

        Returns
        -------
        list of Permit

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

    # Writing: events only --------------------------------------------------------------

    def _event(self, cur: Any, number: str, e: Event, when: datetime | None = None, **data: Any) -> HistoryEvent:
        """Append ``e`` to the permit's history as its typed event, with its line in the clerk's log.

        ``data`` holds the facts of the typed kind (:data:`~esc_gis.registry.domain.events.KINDS`)
        and of the rows it makes (:mod:`~esc_gis.registry.store.projection`); ``when`` the time it
        took effect, where the ordinance counts hours.
        """
        return self._append(cur, typed(number, e, when=when, **data))

    def _append(self, cur: Any, e: HistoryEvent) -> HistoryEvent:
        """Append ``e`` at the end of its stream and have every projection follow, in the caller's transaction.

        The one way a command changes the registry: the history takes the event, and the
        projectors (:func:`~esc_gis.registry.store.projection.project`) write its rows.

        Raises
        ------
        RegistryError
            If the event lacks a fact its kind needs (a defect of the caller, never of input).
        """
        b = self.backend
        stored = history_store.append(cur, b, e)
        # The stream up to this event, for the fold the permit's projection reads (a new stream: itself).
        events = [stored] if stored.seq == 1 else history_store.read(cur, b, [e.stream])
        project(Rows(cur, b), stored, Context(events))
        return stored

    def _stream(self, cur: Any, stream: str) -> list[HistoryEvent]:
        """Read one stream's events, oldest first."""
        return history_store.read(cur, self.backend, [stream])

    def _state(self, cur: Any, stream: str) -> PermitState:
        """Fold one stream's history into its state."""
        return fold(self._stream(cur, stream), application_fee=APPLICATION_FEE)

    def state(self, stream: str) -> PermitState:
        """Return the state of a permit (or of a case without a permit) folded from its history.

        Parameters
        ----------
        stream : str
            The permit's number, or a case's id.

        Returns
        -------
        PermitState

        Raises
        ------
        PermitNotFoundError
            If the stream has no history.
        """
        with self.backend.read() as cur:
            s = self._state(cur, stream)
        if not s.events:
            msg = f"There is no permit or case {stream!r} in the registry."
            raise PermitNotFoundError(msg)
        return s

    def history(self, stream: str | None = None) -> list[HistoryEvent]:
        """Return the history of one stream, or of every stream (by stream, oldest first).

        Parameters
        ----------
        stream : str, optional
            A permit's number (or a case's id); default every stream.

        Returns
        -------
        list of HistoryEvent
            The typed events (``kind``, ``at``, ``who`` and their facts), as appended.
        """
        with self.backend.read() as cur:
            return history_store.read(cur, self.backend, [stream] if stream else None)

    def _expiry(
        self, issued: date, building: date | None, extensions: list[int], authorizations: Iterable[date] = ()
    ) -> date:
        """Return the expiry of a permit issued on ``issued`` (§ 540-8G), with its lengths and extensions."""
        due = expiry(
            issued,
            self.profile,
            building_permit_expires=building,
            extensions_days=extensions,
            other_authorizations=authorizations,
        ).due
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

    def _office(self, t: datetime | None) -> datetime | None:
        """Return ``t`` on the office's clock (a naive time is as read off it): see :meth:`Profile.local`."""
        return None if t is None else self.profile.local(t)

    def _to_registry_crs(self, geoms: Sequence[Any], crss: Sequence[Any]) -> np.ndarray:
        """Transform geometries to the registry's CRS, one transform per distinct source CRS."""
        out = np.empty(len(geoms), dtype=object)
        keys = [pyproj.CRS.from_user_input(c).to_wkt() for c in crss]
        for key in set(keys):
            idx = np.flatnonzero(np.array(keys, dtype=object) == key)
            group = gpd.GeoSeries(np.asarray(geoms, dtype=object)[idx], crs=pyproj.CRS.from_wkt(key))
            out[idx] = group.to_crs(self.crs).to_numpy()
        return out

    @property
    def written_reasons(self) -> dict[str, str]:
        """The moves that need written reasons, and the sections requiring them (the profile's).

        Raises
        ------
        ProfileError
            If the profile lacks ``[lifecycle.written_reasons]``.
        """
        return written_reasons(self.profile.tables)

    def _date_problems(self, source: str, *dates: EffectiveDate) -> list[Problem]:
        """Return the problems of a command's effective dates, by the one rule (:func:`date_problems`).

        Today is the Village's (:meth:`Profile.today`), not the server's nor UTC's.
        """
        return [Problem(source, None, m) for m in date_problems(dates, self.profile.today())]

    def _check_dates(self, source: str, *dates: EffectiveDate) -> None:
        """Refuse a command whose effective dates break the one rule, every problem at once.

        Raises
        ------
        ValidationError
            If a date is after today on the Village's clock or before the event it follows.
        """
        problems = self._date_problems(source, *dates)
        if problems:
            raise ValidationError(problems)

    def _check_order(self, p: Permit, day: date, to: str) -> None:
        """Refuse a move to ``to`` dated before the application's receipt or the permit's issuance.

        The one rule for effective dates (:func:`date_problems`); the issuance does not bind
        the move that issues the permit.

        Raises
        ------
        ValidationError
            Naming ``--on``, the day and the event it precedes.
        """
        self._check_dates(
            p.permit_number,
            EffectiveDate("on=", day, p.received_on, "the application's receipt"),
            EffectiveDate("on=", day, p.issued_on if to not in ISSUED[:2] else None, "the permit's issuance"),
        )

    def _plan_dates(self, on: date) -> dict[str, date]:
        """Return each permit's current plan version's date: the highest version in effect on ``on``."""
        b = self.backend
        with b.read() as cur:
            cur.execute(
                "SELECT permit_number, version, plan_date, effective_on FROM plan_versions "
                "WHERE status = 'approved' ORDER BY permit_number, version"
            )
            out: dict[str, date] = {}
            for number, _version, plan_date, effective in cur.fetchall():
                effective_on = b.load("date", effective)
                if effective_on is None or effective_on <= on:
                    out[number] = b.load("date", plan_date)
        return out

    # Export ---------------------------------------------------------------------------

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
        # The current plan version's date is public (what the plan at the site should be);
        # nothing else of the plan's versions is.
        plan_dates = self._plan_dates(self.profile.today())
        data["plan_date"] = pd.Series(
            [value_of(plan_dates.get(p.permit_number), iso_dates) for p in permits], dtype=object
        )
        if private:
            for role in ("landowner", "responsible_party"):
                for attr in ("name", "organization", "phone", "email", "address"):
                    data[f"{role}_{attr}"] = [
                        next((getattr(q, attr) for q in p.parties if q.role == role), None) for p in permits
                    ]
        return gpd.GeoDataFrame(data, geometry=[p.site for p in permits], crs=self.crs)


def value_of(v: Any, iso_dates: bool) -> Any:
    """Return a date as ISO text when ``iso_dates``, else as it is."""
    return v.isoformat() if iso_dates and isinstance(v, date) else v


def _as_multi(g: shapely.Geometry) -> shapely.Geometry:
    """Return ``g`` as a 2-D MultiPolygon, the type the registry's layers declare, whatever was drawn."""
    return shapely.force_2d(shapely.multipolygons(shapely.get_parts(g)))
