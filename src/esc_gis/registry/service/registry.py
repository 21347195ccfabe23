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
[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]

A permit added, moved and inspected: :class:`Registry`'s example.
"""

from __future__ import annotations

__all__ = ["Registry", "init_registry", "open_registry"]

import os
from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING

from esc_gis.errors import RegistryError
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.service import amending, appealing, determining, enforcing, inspecting, intake, money, moves
from esc_gis.registry.service._core import RegistryBase, _path
from esc_gis.registry.store.backend import open_backend
from esc_gis.registry.views.verify import Difference, verify_all

if TYPE_CHECKING:
    from esc_gis.layers import LayerSet
    from esc_gis.profile import Profile
    from esc_gis.registry.views.agenda import DueItem


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
    from esc_gis.layers import LayerSet, load_layers
    from esc_gis.profile import load_profile

    profile = load_profile()
    ls = layers if isinstance(layers, LayerSet) else load_layers(_path(layers), profile=profile)
    epsg = ls.crs.to_epsg()
    if epsg is None:
        msg = "The layer set's CRS has no EPSG code; a registry needs one (its geometry columns are typed by it)."
        raise RegistryError(msg)
    backend = open_backend(target, create=True)
    try:
        # The office's clock: the public view's plan date is the plan in effect today there.
        return backend.migrate(epsg, ls.crs.to_wkt(), timezone=profile.timezone)
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

    Parameters
    ----------
    target : path or str
        A ``.gpkg`` path or a ``postgresql://`` URL.
    layers : path or LayerSet, optional
        The layer set a command measures with (adding or remeasuring a permit); default the
        Village's. Read only when a command first measures.
    profile : Profile, optional
        The ordinance profile; default the Village's.
    calendar : OfficeCalendar, optional
        The days the office is closed, for business-day deadlines; default the profile's.

    Returns
    -------
    Registry
        Close it when done (``with open_registry(...) as reg:`` does).

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
    # The layer set is read when a command first measures with it (Registry.layers): listing,
    # showing and moving permits never need it, and reading it costs geopandas and a second. The
    # profile and its calendar are read when first used (Registry.profile): a listing needs neither.
    return Registry(backend, layers=layers, profile=profile, calendar=calendar)


class Registry(RegistryBase):
    r"""Permits and their history, in a GeoPackage or PostGIS back end: a thin facade.

    Use :func:`open_registry`; close it (or use ``with``) when done. The connection, the
    reading SQL and the one way to change anything (appending events, which the projectors of
    :mod:`esc_gis.registry.store.projection` turn into rows) are :class:`RegistryBase`'s. Each
    command is a function of its concern's module, taking the registry first, bound here as a
    method: intake (:mod:`~esc_gis.registry.service.intake`), the life cycle
    (:mod:`~esc_gis.registry.service.moves`), inspections
    (:mod:`~esc_gis.registry.service.inspecting`), enforcement and appeals
    (:mod:`~esc_gis.registry.service.enforcing`, :mod:`~esc_gis.registry.service.appealing`),
    fees and guarantees (:mod:`~esc_gis.registry.service.money`), the plan's versions
    (:mod:`~esc_gis.registry.service.amending`).

    Every method takes Python values: dates as :class:`datetime.date`, times as
    :class:`datetime.datetime` (one without a zone is the office's local time), geometry as
    shapely in any CRS. Its errors name the keyword to fix (``on=``, ``paid_on=``); the
    command line shows the same errors with its flags.

    Examples
    --------
    A permit from its application to its first inspection, and what is then due:

    >>> import tempfile
    >>> from datetime import date, datetime
    >>> from pathlib import Path
    >>> import shapely
    >>> from esc_gis.registry import Application, InspectionReport, Party, init_registry, open_registry
    >>> folder = Path(tempfile.mkdtemp())
    >>> path = folder / "permits.gpkg"
    >>> _ = init_registry(path)
    >>> site = shapely.box(743_819, 503_199, 743_939, 503_349)  # EPSG:7594, US survey feet
    >>> limits = shapely.box(743_829, 503_240, 743_909, 503_300)  # 80 by 60 ft disturbed
    >>> application = Application(
    ...     "102 Example St", date(2026, 11, 2), site, "EPSG:7594", disturbed=limits,
    ...     parties=(Party("landowner", "Pat Example", phone="920-555-0110"),),
    ... )
    >>> with open_registry(path) as reg:
    ...     number = reg.add(application, who="clerk")
    ...     p = reg.get(number)
    >>> number, p.status, round(p.disturbed_sqft)
    ('ESC-2026-0001', 'application_received', 4800)

    The fee (checked against the fee schedule, here a path), the review, the permit:

    >>> schedule = folder / "fees.toml"
    >>> _ = schedule.write_text(
    ...     '[schedule]\nresolution = "Res. 1"\nadopted_on = 2026-01-01\n[fees]\napplication = 12.34\n'
    ... )
    >>> with open_registry(path) as reg:
    ...     fee = reg.record_fee(number, kind="application", amount=12.34, paid_on=date(2026, 11, 2),
    ...                          receipt="R-0001", schedule=schedule)
    ...     _ = reg.transition(number, "under_review", on=date(2026, 11, 3))
    ...     _ = reg.transition(number, "approved", on=date(2026, 11, 20))
    ...     p = reg.transition(number, "active", on=datetime(2026, 11, 23, 7, 30))
    >>> p.status, p.issued_on, p.expires_on
    ('active', datetime.date(2026, 11, 20), datetime.date(2027, 5, 19))

    An inspection that finds a deficiency, and what is due a week later:

    >>> report = InspectionReport(
    ...     inspected_at=datetime(2026, 11, 27, 10, 0), inspector="Pat Inspector",
    ...     assessment="Silt fence sagging", deficiencies=("Silt fence down, east edge",),
    ... )
    >>> with open_registry(path) as reg:
    ...     inspection = reg.inspect(number, report)
    ...     due = reg.due(on=date(2026, 11, 30))
    >>> len(inspection.deficiencies)
    1
    >>> sorted({item.code for item in due})  # doctest: +ELLIPSIS
    [...'weekly_inspection'...]

    A mistake is refused with every problem and the keyword to fix; nothing is written:

    >>> with open_registry(path) as reg:
    ...     reg.extend(number, 30, on=date(2062, 1, 1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    esc_gis.errors.ValidationError: 1 problem found in the input:
      - ESC-2026-0001: on=2062-01-01 is after today on the Village's clock (...): give the day it happened, ...
    """

    # Intake: applications and imported layers, measured by the screening engine.
    add = intake.add
    add_many = intake.add_many
    import_frame = intake.import_frame
    remeasure = intake.remeasure
    decide_screened = intake.decide_screened
    decide_permit = intake.decide_permit
    # The authority's terms: a determination that a permit is needed (§ 540-4A(1)(c)), conditions (§ 540-8F).
    determine = determining.determine
    add_condition = determining.add_condition
    plan_site_problems = determining.plan_site_problems
    # The life cycle.
    transition = moves.transition
    retract = moves.retract
    reinstate = moves.reinstate
    extend = moves.extend
    update = moves.update
    decision_due = moves.decision_due
    # Inspections.
    inspect = inspecting.inspect
    repaired = inspecting.repaired
    photo = inspecting.photo
    # Enforcement and appeals.
    enforce = enforcing.enforce
    case_action = enforcing.case_action
    case = enforcing.case
    cases = enforcing.cases
    appeal = appealing.appeal
    decide_appeal = appealing.decide_appeal
    appeals = appealing.appeals
    # Fees and guarantees.
    record_fee = money.record_fee
    fees = money.fees
    add_guarantee = money.add_guarantee
    guarantee_event = money.guarantee_event
    guarantees = money.guarantees
    # The plan's versions.
    amend = amending.amend
    notify_amendment = amending.notify_amendment
    plan_versions = amending.plan_versions
    open_notices = amending.open_notices

    def __enter__(self) -> Registry:
        return self

    def due(
        self,
        on: date | None = None,
        *,
        permit_number: str | None = None,
        rain: str | os.PathLike[str] | Sequence[tuple[date | datetime, float]] = (),
        within_days: int = 7,
    ) -> list[DueItem]:
        """List what is overdue on ``on`` or due within ``within_days`` after it, earliest first (``permits due``).

        Parameters
        ----------
        on : date, optional
            The day to look from; default today on the Village's clock.
        permit_number : str, optional
            Only this permit's; default every permit's.
        rain : path, str or sequence of (date or datetime, inches), optional
            Precipitation, for the inspections due after rain: the CSV
            :func:`~esc_gis.registry.views.agenda.read_rain_csv` reads, or its rows.
        within_days : int, default 7
            How far ahead of ``on`` to look.

        Returns
        -------
        list of DueItem
            Each with the permit, what is due, by when, its section and basis, and ``overdue``.

        Raises
        ------
        PermitNotFoundError
            If ``permit_number`` is not in the registry.
        LayerReadError, ValidationError
            If the rain file is missing, unreadable or holds a bad row.
        """
        # The agenda's rules are read only when asked for: opening a registry stays quick.
        from esc_gis.registry.views.agenda import agenda, read_rain_csv

        if isinstance(rain, (str, os.PathLike)):
            rain = read_rain_csv(rain)
        permits = [self.get(permit_number)] if permit_number is not None else self.permits()
        day = on or self.profile.today()
        return agenda(permits, on=day, calendar=self.calendar, profile=self.profile, rain=rain, within_days=within_days)

    def rebuild(self) -> int:
        """Clear every projection and replay the whole history into it, in one transaction; return the events replayed.

        Raises
        ------
        RegistryError
            If the back end refuses (on PostGIS, a role that does not own the tables).
        """
        from esc_gis.registry.store.rebuild import rebuild

        with self.backend.write() as cur:
            return rebuild(cur, self.backend)

    def verify(self) -> list[Difference]:
        """Rebuild every projection from the history and return each difference (empty: all agree).

        See :func:`esc_gis.registry.views.verify.verify_all`.
        """
        return verify_all(self)
