"""Permit records: what an application carries, what the registry stores, and their checks.

Dates are checked on the way in, every problem at once (a date in the wrong format, an
end before its start, an unknown status), naming the row and the fix, as
:mod:`esc_gis.validate` does for layers.
"""

from __future__ import annotations

__all__ = [
    "OTHER_AUTHORIZATIONS",
    "PARTY_ROLES",
    "Application",
    "Deficiency",
    "Event",
    "Inspection",
    "Party",
    "Permit",
    "Photo",
    "Stored",
    "other_authorizations",
    "parse_date",
    "parse_datetime",
]

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import shapely

#: Who a party is to the permit (§ 540-5: landowner, responsible party).
PARTY_ROLES = ("landowner", "responsible_party", "applicant", "contractor")
#: The field of an ``updated`` event holding every "other construction authorization" recorded
#: (§ 540-8G), by name, with the day each ends: the whole set each time, so the fold keeps the last.
OTHER_AUTHORIZATIONS = "other_authorizations"
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class Stored(NamedTuple):
    """A geometry as the database returned it, read into shapely the first time it is used.

    Listing, showing and the due dates read permits but never their geometries: kept as the
    database's bytes, a registry command starts without importing shapely and numpy.

    Attributes
    ----------
    load : callable
        The back end's reader (``Backend.load_geom``).
    value : object
        The selected value, as the back end returned it (never None).
    """

    load: Callable[[Any], Any]
    value: Any


class StoredGeometry:
    """A dataclass field holding a shapely geometry, or a :class:`Stored` one read on first access.

    The value stays in the instance's ``__dict__`` under the field's own name (so code reading
    ``__dict__`` sees the same keys); a data descriptor is looked up first, so every attribute
    access, ``dataclasses.replace`` and ``==`` see the shapely geometry.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Thing:
    ...     geom: object = StoredGeometry()
    >>> Thing().geom is None
    True
    >>> Thing(Stored(lambda raw: raw.upper(), "wkb")).geom
    'WKB'
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:  # the class's default (dataclasses read it here)
            return None
        value = obj.__dict__.get(self.name)
        if isinstance(value, Stored):
            value = obj.__dict__[self.name] = value.load(value.value)
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value


@dataclass(frozen=True)
class Party:
    """A landowner or responsible party, with contact details (private: never published).

    Parameters
    ----------
    role : str
        One of :data:`PARTY_ROLES`: ``landowner``, ``responsible_party``, ``applicant``, ``contractor``.
    name : str
    organization, phone, email, address : str, optional
        How to reach them; an email must look like one.
    """

    role: str
    name: str
    organization: str | None = None
    phone: str | None = None
    email: str | None = None
    address: str | None = None

    def problems(self) -> list[tuple[str, str]]:
        """Return (message, fix) for each thing wrong with the party."""
        out = []
        if self.role not in PARTY_ROLES:
            out.append((f"party role {self.role!r} is unknown.", f"use one of {', '.join(PARTY_ROLES)}."))
        if not (self.name or "").strip():
            out.append((f"the {self.role} has no name.", "give the name."))
        if self.email and not _EMAIL.match(self.email):
            out.append((f"e-mail {self.email!r} of the {self.role} is not an address.", "give name@domain."))
        return out


@dataclass(frozen=True)
class Application:
    """A permit application as entered: the facts staff type in, and the drawn geometry.

    The disturbed area is never typed in: the registry measures ``disturbed`` (or the
    whole site) with the screening engine.

    Attributes
    ----------
    site_address : str
    received_on : date
        The day the application (with plan and fee, § 540-8B) was received.
    site : shapely Polygon or MultiPolygon
        The site boundary, in ``crs``.
    crs : Any
        The CRS of ``site`` and ``disturbed`` (anything pyproj accepts).
    disturbed : shapely geometry, optional
        The disturbed limits; default the whole site.
    permit_number : str, optional
        Default: the next number in the profile's pattern (``ESC-<year>-<nnnn>``).
    plan_id : str, optional
        The larger common plan of development or sale the site is part of (§ 540-5): the
        permit is decided on the plan's total disturbance.
    activity : str, optional
        ``construction`` (default), ``agricultural_activity``, ``agricultural_production`` or
        ``silviculture``, as screening reads it (§ 540-4A(2)).
    state_agency : bool, default False
        Conducted by a state agency (§ 540-4C): the article does not apply, and the registry
        refuses the application, as screening finds it excluded.
    npdes_exempt : bool, default False
        Exempt by federal law from an NPDES permit (§ 540-4A(3)): decided as screening decides it.
    screened_disturbed_sqft : float, optional
        The disturbed area the screening this application came from measured (a screening
        output's ``disturbed_sqft``): a permit measured otherwise is noted in its history and
        reported (issue 34).
    other_authorizations : tuple of (str, date), default ()
        The "other construction authorizations" (§ 540-8G), by name, with the day each ends
        (e.g. a WDNR permit's): the period runs to the longest of them, the building permit's
        and 180 days. Kept in the history (the ``received`` event), as ``permits update
        --authorization`` keeps them later.
    status : str, default "application_received"
        Imports of older permits may start further on; the dates must fit.
    """

    site_address: str
    received_on: date | None  # None only as read from a bad row, which the registry refuses
    site: shapely.Geometry
    crs: Any
    disturbed: shapely.Geometry | None = None
    permit_number: str | None = None
    parcel_id: str | None = None
    legal_description: str | None = None
    building_permit_expires: date | None = None
    parties: tuple[Party, ...] = ()
    status: str = "application_received"
    issued_on: date | None = None
    started_at: datetime | None = None
    start_notice_at: datetime | None = None
    plan_id: str | None = None
    activity: str | None = None
    state_agency: bool = False
    npdes_exempt: bool = False
    screened_disturbed_sqft: float | None = None
    other_authorizations: tuple[tuple[str, date], ...] = ()


@dataclass(frozen=True)
class Event:
    """One entry of a permit's append-only history."""

    at: datetime
    who: str
    kind: str
    from_status: str | None = None
    to_status: str | None = None
    on_date: date | None = None
    days: int | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Deficiency:
    """A deficiency an inspection found; it opens a repair (§ 540-8E(6)) until ``repaired_at``.

    ``notified_at`` is when the permittee was notified that repair is needed, if recorded
    (the repair is due from the inspection or the notification, whichever came first).
    """

    id: int
    inspection_id: int
    description: str
    inspected_at: datetime
    notified_at: datetime | None = None
    repaired_at: datetime | None = None
    repair_detail: str | None = None

    @property
    def counted_from(self) -> datetime:
        """The time the repair period runs from: the inspection or the notification, whichever came first."""
        if self.notified_at is not None and self.notified_at < self.inspected_at:
            return self.notified_at
        return self.inspected_at


@dataclass(frozen=True)
class Photo:
    """A photo of an inspection: its name, type, size and SHA-256 (``data`` only when asked for)."""

    id: int
    inspection_id: int
    filename: str
    content_type: str
    sha256: str
    size_bytes: int
    data: bytes | None = None


@dataclass(frozen=True)
class Inspection:
    """One site inspection report, with the contents § 540-8E(6) requires (private: never published)."""

    id: int
    inspected_at: datetime
    inspector: str
    assessment: str
    work_done: str | None
    phase: str | None
    recorded_by: str
    location: shapely.Geometry | None = StoredGeometry()
    deficiencies: tuple[Deficiency, ...] = ()
    photos: tuple[Photo, ...] = ()
    #: Who inspected: ``holder`` (§ 540-8E(6)) or ``office`` (§ 540-8E(7), § 540-11); None before migration 9.
    by: str | None = None
    pre_start: bool = False
    adjoining_repairs: str | None = None
    #: An office inspection's checklist (§ 540-8E(7), (8)): None where not checked.
    on_site_documents: bool | None = None
    certificate_posted: bool | None = None


@dataclass
class Permit:
    """A permit as the registry holds it (fields follow :data:`~esc_gis.registry.store.schema.PERMIT_COLUMNS`)."""

    permit_number: str
    parcel_id: str | None
    site_address: str
    legal_description: str | None
    status: str
    site_sqft: float
    disturbed_sqft: float
    permit_decision: str | None
    standards: str | None
    sediment_standard: bool | None
    building_permit_expires: date | None
    received_on: date
    information_requested_on: date | None
    information_received_on: date | None
    decided_on: date | None
    issued_on: date | None
    expires_on: date | None
    started_at: datetime | None
    start_notice_at: datetime | None
    work_stopped_on: date | None
    stockpile_since: date | None
    final_on: date | None
    updated_at: datetime
    plan_id: str | None = None
    activity: str | None = None
    plan_disturbed_sqft: float | None = None
    resume_expected_on: date | None = None
    work_resumed_on: date | None = None
    #: Where the site lies (``inside``, ``partial``, ``outside``, § 540-4B) and its disturbance inside
    #: the Village, as the screening engine decided them (issue 46); None for a permit received
    #: before the registry kept them (schema 12).
    jurisdiction: str | None = None
    disturbed_in_village_sqft: float | None = None
    #: The earlier applications or permits on the same site, whose coverage had ended when this
    #: one was received (:mod:`esc_gis.registry.domain.overlap`): their numbers, comma-separated.
    earlier_permits: str | None = None
    site: shapely.Geometry | None = StoredGeometry()
    disturbed: shapely.Geometry | None = StoredGeometry()
    parties: list[Party] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    reports: list[Inspection] = field(default_factory=list)
    #: Letters of credit held as the financial guarantee: (guarantee id, expiry, amount still held).
    #: Private, like the guarantee itself; read for the expiry deadline in ``permits due``.
    letters_of_credit: list[tuple[int, date, float]] = field(default_factory=list)
    #: The permit's state folded from its history (:mod:`esc_gis.registry.domain.fold`): the
    #: clocks, balances and orders every rule reads.
    state: Any = None

    @property
    def disturbed_acres(self) -> float:
        """The disturbed area in acres."""
        from esc_gis.units import SQFT_PER_ACRE

        return self.disturbed_sqft / SQFT_PER_ACRE

    @property
    def inspections(self) -> list[date]:
        """Dates of the recorded site inspections.

        Both kinds are ``inspection`` events: ``permits update --inspected DAY`` writes one with
        the day alone, and a full report (``permits inspect``) writes one dated its local day.
        """
        return [e.on_date for e in self.events if e.kind == "inspection" and e.on_date is not None]

    @property
    def deficiencies(self) -> list[Deficiency]:
        """Every deficiency the inspection reports found, oldest first (open and repaired)."""
        return [d for r in self.reports for d in r.deficiencies]

    @property
    def open_repairs(self) -> list[Deficiency]:
        """The deficiencies not yet repaired."""
        return [d for d in self.deficiencies if d.repaired_at is None]

    @property
    def other_authorizations(self) -> dict[str, date]:
        """The "other construction authorizations" recorded (§ 540-8G), by name: the day each ends.

        Their home is the history (an ``updated`` event's ``other_authorizations``, folded into
        the state); a permit read without its state has none.
        """
        return other_authorizations(self.state.fields if self.state is not None else {})

    @property
    def extensions_days(self) -> list[int]:
        """Lengths of the extensions granted (§ 540-8G), in order."""
        return [int(e.days) for e in self.events if e.kind == "extension" and e.days]

    @property
    def previous_status(self) -> str | None:
        """The state before the current one, from the history (what a retraction or reinstatement restores)."""
        from esc_gis.registry.domain.lifecycle import previous_state

        return previous_state((e.kind, e.from_status, e.to_status) for e in self.events)


def _plain(value: Any) -> Any:
    """None for any missing value (None, NaN, NaT, ''); pandas timestamps as datetime."""
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    if type(value).__name__ == "NaTType":
        return None
    if hasattr(value, "to_pydatetime"):  # pandas.Timestamp, as GeoJSON and GPKG readers give
        return value.to_pydatetime()
    return value


def other_authorizations(fields: dict[str, Any]) -> dict[str, date]:
    """Return the other construction authorizations (§ 540-8G) a state's folded ``fields`` hold, by name.

    Examples
    --------
    >>> other_authorizations({"other_authorizations": {"WDNR permit": "2027-12-31"}})
    {'WDNR permit': datetime.date(2027, 12, 31)}
    >>> other_authorizations({})
    {}
    """
    held = fields.get(OTHER_AUTHORIZATIONS) or {}
    return {str(k): date.fromisoformat(str(v)[:10]) for k, v in held.items()}


def parse_date(value: Any, name: str) -> tuple[date | None, str | None]:
    """Parse an ISO date (``YYYY-MM-DD``); return (date, None) or (None, the problem).

    Examples
    --------
    >>> parse_date("2026-11-02", "received_on")
    (datetime.date(2026, 11, 2), None)
    >>> parse_date("11/02/2026", "received_on")[1]
    "received_on '11/02/2026' is not a date in the form YYYY-MM-DD."
    """
    value = _plain(value)
    if value is None:
        return None, None
    if isinstance(value, datetime):
        return value.date(), None
    if isinstance(value, date):
        return value, None
    text = str(value).strip()
    try:
        if len(text) != 10:
            raise ValueError(text)
        return date.fromisoformat(text), None
    except ValueError:
        return None, f"{name} {text!r} is not a date in the form YYYY-MM-DD."


def parse_datetime(value: Any, name: str, *, as_typed: bool = False) -> tuple[datetime | None, str | None]:
    """Parse an ISO date and time (``YYYY-MM-DDTHH:MM``); a time with an offset comes back in UTC.

    A time without an offset is on the office's clock. With ``as_typed`` it comes back naive, for
    the registry to place on its profile's clock (:meth:`~esc_gis.profile.Profile.local`);
    otherwise it is taken as this machine's local time.
    """
    value = _plain(value)
    if value is None:
        return None, None
    if isinstance(value, datetime):
        t = value
    else:
        text = str(value).strip()
        try:
            t = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None, f"{name} {text!r} is not a date and time in the form YYYY-MM-DDTHH:MM."
    if t.tzinfo is None:
        if as_typed:
            return t, None
        t = t.astimezone()  # this machine's local time
    return t.astimezone(timezone.utc), None
