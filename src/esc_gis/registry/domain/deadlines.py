"""Deadlines the ordinance sets, computed from a permit's dates (§ 540-8, § 540-7).

Pure functions: dates in, :class:`Due` out. Every number is read from the profile, and every
:class:`Due` is a finding the profile declares (``[findings.<code>]``): its wording, its
citation and its basis (``ordinance`` or ``interpretation``) come from there, not from here.
Business days come from an :class:`~esc_gis.registry.domain.calendar.OfficeCalendar`.
"""

from __future__ import annotations

__all__ = [
    "AWAITING_DECISION",
    "Due",
    "RainEvent",
    "decision_due",
    "deemed_approved_by",
    "expiry",
    "guarantee_expiry_due",
    "inspections_due",
    "pending_decision_due",
    "rain_events",
    "repair_due",
    "stabilization_due",
    "start_notice_due",
    "stockpile_due",
    "weekly_due",
    "weekly_record",
]

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from esc_gis.errors import ProfileError
from esc_gis.registry.domain.calendar import OfficeCalendar

if TYPE_CHECKING:
    from esc_gis.profile import Profile

#: Rain totals are compared after rounding to this many decimals: daily data come in
#: hundredths of an inch, and 0.1 + 0.2 + 0.2 must reach 0.5 inch, as it does on paper.
_RAIN_DECIMALS = 6


@dataclass(frozen=True)
class Due:
    """Something due by a date (or time): what, when, the section that says so, and on what basis.

    ``what``, ``section`` and ``basis`` are the profile's finding ``code`` rendered for the permit.
    ``key`` tells apart deadlines of one code and day on one permit (two letters of credit
    expiring the same day): the record it belongs to, e.g. ``guarantee:3``; empty when the
    code and day are enough.
    """

    what: str
    due: date | datetime
    section: str
    basis: str = "ordinance"
    code: str = ""
    key: str = ""


def _due(profile: Profile, code: str, when: date | datetime, key: str = "", **values: Any) -> Due:
    f = profile.finding(code, **values)
    return Due(f.message, when, f.section, f.basis, code, key)


def _number(profile: Profile, key: str) -> float:
    value = profile.entry(key if "." in key else f"deadlines.{key}").value
    if not isinstance(value, (int, float)):
        msg = f"{key} in the profile must be a number."
        raise ProfileError(msg)
    return float(value)


def decision_due(received: date, calendar: OfficeCalendar, profile: Profile, *, after_information: bool = False) -> Due:
    """Return the last day for the decision on a complete application (or on added information).

    The period runs out at the end of this day; a submittal still undecided then is deemed
    approved as of this day (§ 540-8C(5)).

    Raises
    ------
    ProfileError
        If the profile's decision period is not a number.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> cal = OfficeCalendar(holidays=frozenset())
    >>> decision_due(date(2026, 11, 2), cal, load_profile()).due  # a Monday + 20 business days
    datetime.date(2026, 11, 30)
    """
    key = "decision_after_information" if after_information else "decision"
    due = calendar.add_business_days(received, int(_number(profile, key)))
    return _due(profile, "decision_due_after_information" if after_information else "decision_due", due)


#: The states of an application waiting for its decision, whose period runs (§ 540-8C(1), (4)).
AWAITING_DECISION = ("application_received", "under_review")


def pending_decision_due(status: str, state: Any, calendar: OfficeCalendar, profile: Profile) -> Due | None:
    """Return the decision due on an application waiting for it, or None if no period runs.

    ``state`` is the permit's fold (:class:`~esc_gis.registry.domain.fold.PermitState`): the
    20 business days run from the clock its history started (a complete application, § 540-8B),
    or from the information received (§ 540-8C(4)). Incomplete (information requested), decided
    or closed: no period runs.

    Raises
    ------
    ProfileError
        If the profile's decision period is not a number.
    """
    clock = state.decision_clock if state is not None else None
    if status not in AWAITING_DECISION or clock is None:
        return None
    after = state.information_received_on is not None
    return decision_due(clock.start, calendar, profile, after_information=after)


def deemed_approved_by(status: str, state: Any, day: date, calendar: OfficeCalendar, profile: Profile) -> date | None:
    """Return the day an undecided application stands approved from, if it does on ``day``; else None.

    § 540-8C(5): "Failure by the administering authority to inform the permit applicant of a
    decision within 20 business days of a required submittal shall be deemed to mean approval of
    the submittal and the applicant may proceed as if a permit had been issued". From the day
    after the decision was due, whether or not the office has recorded the deemed approval; the
    approval is dated the due day (as ``permits transition ... deemed_approved`` dates it).

    Raises
    ------
    ProfileError
        If the profile's decision period is not a number.
    """
    due = pending_decision_due(status, state, calendar, profile)
    if due is None or not day > due.due:
        return None
    return due.due


def expiry(
    issued: date,
    profile: Profile,
    *,
    building_permit_expires: date | None = None,
    extensions_days: Iterable[int] = (),
    other_authorizations: Iterable[date] = (),
) -> Due:
    """Return the permit's expiry: its longest length (§ 540-8G), plus extensions.

    § 540-8G: "valid for a period of 180 days, or the length of the building permit or other
    construction authorizations, whichever is longer, from the date of issuance": the end of
    each authorization recorded (``other_authorizations``, e.g. a WDNR permit's) counts as the
    building permit's does.

    § 540-8G: "The administering authority may extend the period one or more times for up to
    an additional 180 days." The profile's reading of ``deadlines.permit_extension`` (basis
    ``interpretation``) says what the 180 days bound: ``per_extension``, each extension (any
    number of them); ``total``, all of them together.

    Raises
    ------
    ProfileError
        If an extension is not positive, or is longer than the profile allows (each, or with
        the extensions before it under the ``total`` reading).
    """
    validity = _number(profile, "permit_validity")
    longest = _number(profile, "permit_extension")
    total = profile.reading("deadlines.permit_extension") == "total"
    end = issued + timedelta(days=validity)
    for authorized in (building_permit_expires, *other_authorizations):
        if authorized is not None and authorized > end:
            end = authorized
    extended = 0
    for days in extensions_days:
        if not 0 < days <= longest - (extended if total else 0):
            f = profile.finding("extension_too_long", days=days, extended_days=extended)
            raise ProfileError(f"{f.message} ({f.section})")
        end += timedelta(days=days)
        extended += days
    return _due(profile, "permit_expires", end)


def start_notice_due(started: datetime, profile: Profile) -> Due:
    """Return when the notice of starting land disturbance is due (48 hours, § 540-8E(1)).

    "Within 48 hours of commencing" is read as counted from the start (basis ``interpretation``:
    the text does not say whether before or after).
    """
    return _due(profile, "start_notice", started + timedelta(hours=_number(profile, "start_notice")))


def stockpile_due(since: date, profile: Profile) -> Due:
    """Return when a soil stockpile needs sediment control: existing more than 7 days (§ 540-7A(2)(f))."""
    return _due(profile, "stockpile", since + timedelta(days=_number(profile, "stockpile")), since=since)


def stabilization_due(
    stopped: date, profile: Profile, *, resume_expected: date | None = None, resumed: date | None = None
) -> Due | None:
    """Return when temporary stabilisation must commence after work stopped (§ 540-7A(4)(d), § 540-7B(5)(d)).

    The ordinance: it "shall commence when land-disturbing activities have temporarily ceased
    and will not resume for a period exceeding 14 calendar days". So:

    - work resumed (on or after the stop): nothing is due;
    - the expected resumption is more than 14 days after the stop: due on the stop day;
    - no expected resumption recorded: due on the stop day (a reading, basis ``interpretation``:
      a pause of unknown length may exceed 14 days);
    - a shorter pause expected (resumption at most 14 days after the stop): due 14 days after
      the stop, the last day on which resuming keeps the pause within 14 days; overdue after it.

    Parameters
    ----------
    stopped : date
        The day land-disturbing activity stopped.
    profile : Profile
    resume_expected : date, optional
        When work is expected to resume, as recorded with the stop.
    resumed : date, optional
        When work did resume.

    Returns
    -------
    Due or None
        None when work has resumed.

    Raises
    ------
    ProfileError
        If the profile's period is not a number.
    """
    if resumed is not None and resumed >= stopped:
        return None
    days = _number(profile, "temporary_stabilization")
    if resume_expected is None:
        return _due(profile, "temporary_stabilization_unknown_resume", stopped, stopped=stopped)
    if (resume_expected - stopped).days > days:
        return _due(profile, "temporary_stabilization", stopped, stopped=stopped, resume_expected=resume_expected)
    return _due(
        profile,
        "temporary_stabilization_pause_overran",
        stopped + timedelta(days=days),
        stopped=stopped,
        resume_expected=resume_expected,
    )


def repair_due(
    inspected_at: datetime,
    profile: Profile,
    *,
    ids: Sequence[int],
    notified_at: datetime | None = None,
    inspection_ids: Sequence[int] = (),
) -> Due:
    """Return when BMPs must be repaired or replaced after an inspection found deficiencies (§ 540-8E(6)).

    "Within 24 hours of an inspection or notification that repair or replacement is
    needed": counted from whichever came first. The inspection that found the deficiency
    starts the clock, and a notification recorded later does not put it back (the holder
    knew from the inspection); a notification before the inspection starts it then. The
    holder's inspections and the office's are counted alike: the clock is the ordinance's
    "inspection or notification", not the weekly duty's (which only the holder's meet).
    The deadline is a time, exactly the profile's ``deadlines.repair`` later.

    Parameters
    ----------
    inspected_at : datetime
        When the inspection that found the deficiencies took place.
    profile : Profile
    ids : sequence of int
        The deficiencies' numbers in the registry (no inspector's text: the agenda and the
        calendar feed show no notes).
    notified_at : datetime, optional
        When the permittee was notified that repair is needed; it starts the clock only when
        it came before the inspection.
    inspection_ids : sequence of int, optional
        The inspections that found them: the deadline's ``key``, which stays the same while
        any of their deficiencies is open (the deficiency numbers change as each is repaired).

    Raises
    ------
    ProfileError
        If the profile's repair period is not a number.

    Examples
    --------
    >>> from datetime import timezone
    >>> from esc_gis.profile import load_profile
    >>> repair_due(datetime(2026, 11, 30, 15, 30, tzinfo=timezone.utc), load_profile(), ids=[3]).due
    datetime.datetime(2026, 12, 1, 15, 30, tzinfo=datetime.timezone.utc)
    """
    # The earlier of the two: "within 24 hours of an inspection or notification", whichever
    # told first that repair is needed; a later notice never extends the 24 hours.
    notice_first = notified_at is not None and _utc(notified_at) < _utc(inspected_at)
    start = notified_at if notice_first and notified_at is not None else inspected_at
    return _due(
        profile,
        "repair_due",
        start + timedelta(hours=_number(profile, "repair")),
        "inspection:" + ",".join(str(i) for i in sorted(set(inspection_ids))) if inspection_ids else "",
        ids=", ".join(f"#{i}" for i in ids),
        counted_from="notification" if notice_first else "inspection",
        # On the office's clock, as the clerk reads it (stored times are UTC).
        from_time=f"{profile.local(start):%Y-%m-%d %H:%M %Z}".strip(),
    )


def guarantee_expiry_due(
    expires_on: date | None, profile: Profile, *, guarantee_id: int, amount: float, balance: float | None = None
) -> Due | None:
    """Return the expiry of a letter of credit held as the financial guarantee (§ 540-8D), if it is one.

    The guarantee must give the office the funds to complete the practices; a letter of
    credit that lapses gives none, so its expiry is a deadline to renew it or draw on it
    (a reading of § 540-8D: the finding's basis says so). A guarantee with no expiry (a
    surety bond, cash escrow) or one released in full (``balance`` 0) has no deadline.

    Parameters
    ----------
    expires_on : date or None
        The letter of credit's expiry date.
    profile : Profile
    guarantee_id : int
        The guarantee's number in the registry.
    amount : float
        The amount still held (shown in the finding).
    balance : float, optional
        What is left after draws and releases; 0 or less means nothing is left to expire.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> guarantee_expiry_due(date(2027, 3, 31), load_profile(), guarantee_id=2, amount=5000.0).due
    datetime.date(2027, 3, 31)
    """
    if expires_on is None or (balance is not None and balance <= 0):
        return None
    return _due(
        profile,
        "guarantee_expiry",
        expires_on,
        f"guarantee:{guarantee_id}",
        guarantee_id=guarantee_id,
        amount=f"{amount:,.2f}",
    )


@dataclass(frozen=True)
class RainEvent:
    """One precipitation event: first and last wet reading and the total in inches.

    For daily data ``start`` and ``end`` are dates, the event ending with its last wet day (or
    the small day after it whose rain brought the event to the trigger, :func:`rain_events`);
    for timed data they are the times of the first and last wet readings, on the Village's
    clock (the profile's ``timezone``).
    """

    start: date | datetime
    end: date | datetime
    inches: float

    @property
    def ends_at(self) -> datetime:
        """When the event is over: the end of its last day (naive midnight), or its last wet reading."""
        if isinstance(self.end, datetime):
            return self.end
        return datetime.combine(self.end + timedelta(days=1), datetime.min.time())


def _step(times: Sequence[datetime]) -> timedelta:
    """Return the readings' interval: the smallest gap between consecutive timestamps (an hour for hourly data)."""
    gaps = [b - a for a, b in pairwise(times) if b > a]
    return min(gaps) if gaps else timedelta(hours=1)


def _village(t: datetime, profile: Profile) -> datetime:
    """Return a reading's time on the Village's clock: a naive one is as read off it.

    Unlike :meth:`Profile.local` a station's reading in the hour the clocks spring over is
    kept (placed by its offset before the change), not refused: the station wrote it.
    """
    if t.tzinfo is not None:
        return t.astimezone(profile.tz)
    return t.replace(tzinfo=profile.tz) if profile.tz is not None else t.astimezone()


def _utc(t: datetime) -> datetime:
    # Elapsed time across a change of the clocks: aware datetimes of one zone subtract by the wall clock.
    return t.astimezone(timezone.utc)


def rain_events(rain: Iterable[tuple[date | datetime, float]], profile: Profile) -> list[RainEvent]:
    """Group precipitation readings into events (§ 540-8E(6) "a precipitation event").

    The ordinance does not define an event; the reading taken (basis ``interpretation``):

    - daily data (dates): a run of consecutive days each with at least the profile's
      ``policy.rain_wet_day`` (0.1 inch); a day with less (a trace, drizzle) or none, or a
      missing day, ends the run, so days of drizzle after a storm do not stretch it, and move
      its 24-hour inspection, by days: 0.3 in and 0.3 in on consecutive days are one 0.6 in
      event. One exception: a day of measurable rain (at least ``policy.rain_measurable``,
      0.01 inch) under the wet day but between two wet days is part of the storm (0.26, 0.07
      and 0.28 in on three days are one 0.61 in event) while the event before it is still
      under the rain trigger (``deadlines.rain_trigger``, 0.5 inch): an event that has
      reached it ends on its last wet day, so its 24-hour inspection is not put off by the
      rain that follows; a trace or a dry day there still ends
      it. The rain of a small day right before or after a run still counts toward its
      total (a storm across midnight, 0.45 in and 0.09 in, is 0.54 in), without joining two
      runs or moving its start. Nor its end, unless the small day after it is what brings
      the event to the trigger: 0.45 in and 0.09 in reach 0.5 inch only on the second day,
      so the event ends then (its inspection due by the end of the day after it), while
      1 in followed by days of 0.05 in still ends on the storm's day;
    - timed data (datetimes, e.g. hourly, on the Village's clock): readings with precipitation,
      joined while the dry time between them is shorter than the profile's
      ``policy.rain_event_gap`` (6 hours). A timestamp is the end of the interval its amount
      fell in, so two wet readings one interval apart have no dry time between them.

    Raises
    ------
    ProfileError
        If the profile's gap, wet-day, measurable amount or rain trigger is not a number.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> rain_events([(date(2026, 5, 1), 0.3), (date(2026, 5, 2), 0.3), (date(2026, 5, 4), 0.1)], load_profile())[0]
    RainEvent(start=datetime.date(2026, 5, 1), end=datetime.date(2026, 5, 2), inches=0.6)
    """
    readings = list(rain)
    timed = sorted(
        ((_village(t, profile), v) for t, v in readings if isinstance(t, datetime)), key=lambda r: _utc(r[0])
    )
    daily = sorted((t, v) for t, v in readings if not isinstance(t, datetime))
    events = (
        _daily_events(
            daily,
            _number(profile, "policy.rain_wet_day"),
            _number(profile, "policy.rain_measurable"),
            _number(profile, "rain_trigger"),
        )
        if daily
        else []
    )
    if timed:
        events += _timed_events(timed, timedelta(hours=_number(profile, "policy.rain_event_gap")))
    return events


def _daily_events(daily: list[tuple[Any, float]], wet_day: float, measurable: float, trigger: float) -> list[RainEvent]:
    """Group daily readings into runs of wet days (see :func:`rain_events`)."""
    amount = {d: round(v, _RAIN_DECIMALS) for d, v in daily}
    one = timedelta(days=1)
    events: list[RainEvent] = []
    run: list[tuple[Any, float]] = []
    # A day under the wet day next to a run counts its rain toward that run's total (a storm
    # across midnight: 0.45 in and 0.09 in is 0.54 in), but never moves its start and never joins
    # two runs, so drizzle cannot stretch an event by days. It moves the end in one case only: a
    # tail whose rain is what brings the event to the trigger. The event was not "of 0.5 inch or
    # greater" until that day's rain fell, so its 24 hours cannot run from the day before (0.45 in
    # on May 4 and 0.09 in on May 5: due by the end of May 6, not May 5).
    spare: tuple[Any, float] | None = None  # the last small day, not yet counted
    extra = 0.0  # small days' rain counted toward the open run (lead-in and tail)
    tail: tuple[Any, float] | None = None  # the small day right after the run, counted in extra

    def flush() -> None:
        nonlocal extra, tail
        if run:
            total = round(sum(v for _, v in run) + extra, _RAIN_DECIMALS)
            end = run[-1][0]
            if tail is not None and total >= trigger and round(total - tail[1], _RAIN_DECIMALS) < trigger:
                end = tail[0]  # the tail's rain reached the trigger: the event is of the trigger from that day
            events.append(RainEvent(run[0][0], end, total))
        extra = 0.0
        tail = None

    def bridges(d: Any, v: float) -> bool:
        # A small day with wet days on both sides carries the storm through: without it, 0.26, 0.07
        # and 0.28 in would be two events under the trigger. Only there (after a storm, drizzle still
        # ends it), and only while the event so far is under the trigger: one that has reached it is
        # an event that triggers the inspection, due after its last wet day, and the rain of the
        # days after it must not put that off (0.6, 0.05, 0.3, ... in is not one week-long event).
        return (
            measurable <= round(v, _RAIN_DECIMALS) < wet_day
            and bool(run)
            and run[-1][0] == d - one
            and amount[d - one] >= wet_day
            and amount.get(d + one, 0.0) >= wet_day
            and round(sum(x for _, x in run) + extra, _RAIN_DECIMALS) < trigger
        )

    for d, v in daily:
        if round(v, _RAIN_DECIMALS) < wet_day and not bridges(d, v):  # dry, a trace or drizzle: ends the run
            if run and (d - run[-1][0]).days == 1 and v > 0:
                extra += v  # the run's tail
                tail = (d, v)
                spare = None
            else:
                spare = (d, v) if v > 0 else None
            flush()
            run = []
            continue
        if run and (d - run[-1][0]).days > 1:
            flush()
            run = []
        if not run and spare is not None and (d - spare[0]).days == 1:
            extra += spare[1]  # the run's lead-in
        spare = None
        run.append((d, v))
    flush()
    return events


def _timed_events(timed: list[tuple[datetime, float]], gap: timedelta) -> list[RainEvent]:
    """Wet readings joined while the dry time between them is shorter than ``gap`` (see :func:`rain_events`)."""
    events: list[RainEvent] = []
    step = _step([_utc(t) for t, _ in timed])
    run: list[tuple[datetime, float]] = []
    for t, v in timed:
        if v <= 0:  # a dry reading: only the time between wet readings matters
            continue
        if run and _utc(t) - _utc(run[-1][0]) - step >= gap:
            events.append(RainEvent(run[0][0], run[-1][0], round(sum(x for _, x in run), _RAIN_DECIMALS)))
            run = []
        run.append((t, v))
    if run:
        events.append(RainEvent(run[0][0], run[-1][0], round(sum(x for _, x in run), _RAIN_DECIMALS)))
    return events


def inspections_due(
    started: date,
    inspections: Iterable[date | datetime],
    rain: Iterable[tuple[date | datetime, float]],
    today: date,
    profile: Profile,
) -> list[Due]:
    """Inspections that are due, overdue or next on ``today`` (§ 540-8E(6)).

    Weekly (:func:`weekly_due`): 7 days after the last inspection (or the start), or by the end
    of the calendar week, by the profile's reading; listed whether it falls due
    before ``today`` or after it: there is always a next one while work goes on, and
    staff's calendars need it ahead of the day (the agenda's look-ahead picks what to show).

    After rain: "within 24 hours after a precipitation event of 0.5 inch or greater"
    (:func:`rain_events`) that ended after the start, unless an inspection took place after
    the event ended and by then. Judged by the time where both carry one: a timed event ends
    at its last wet reading and its inspection is due 24 hours later, to the minute, on the
    Village's clock; an inspection from its end to that time counts, one during the event or
    after the deadline does not. A daily event ends at the end of its last day, so its
    inspection is due by the end of the next day, and one on the next day counts. An
    inspection recorded by its day alone meets a timed event only on a later day than the
    event's end (one on the end's day may have been before it: the safe side).

    Parameters
    ----------
    started : date
        Land disturbance began.
    inspections : iterable of date or datetime
        The inspections that meet the duty (:func:`~esc_gis.registry.domain.inspections.counted_inspections`):
        a time where recorded, else a day.
    rain : iterable of (date or datetime, inches)
        Daily or timed precipitation, e.g. from a weather station's CSV
        (:func:`~esc_gis.registry.views.agenda.read_rain_csv`).
    today : date
    profile : Profile

    Returns
    -------
    list of Due
        Sorted by day, then wording; the next weekly one (past or future), and one for each
        event of enough rain that fell from ``started`` to ``today`` and was not inspected
        (so rain today is listed today, due tomorrow).

    Raises
    ------
    ProfileError
        If a number the rule needs is missing from the profile.
    """
    done = [t for t in inspections if profile.day_of(t) >= started]
    days = sorted(profile.day_of(t) for t in done)
    out = [_due(profile, "weekly_inspection", weekly_due(started, days[-1] if days else None, profile))]
    trigger = _number(profile, "rain_trigger")
    window = timedelta(hours=_number(profile, "rain_inspection"))
    for ev in rain_events(rain, profile):
        # An event counts when its last wet reading is on or after the start and not after
        # today (rain today is listed today, due tomorrow). Not its end: a daily event ends
        # at the midnight after its last day, which would pull in rain the day before work began.
        if not started <= _day(ev.end) <= today or ev.inches < trigger:
            continue
        if _met(ev, done, window, profile):
            continue
        if isinstance(ev.end, datetime):
            due: date | datetime = _utc(ev.end) + window
        else:
            # The end of the event's last day plus 24 hours: the end of the next day.
            due = ev.end + timedelta(days=1)
        out.append(_due(profile, "rain_inspection", due, inches=ev.inches, event_start=_text(ev.start, profile),
                        event_end=_text(ev.end, profile)))  # fmt: skip
    return sorted(out, key=lambda x: (profile.day_of(x.due), x.what))


def _met(ev: RainEvent, done: Sequence[date | datetime], window: timedelta, profile: Profile) -> bool:
    """Whether an inspection in ``done`` took place after ``ev`` ended and within ``window`` of its end."""
    if isinstance(ev.end, datetime):
        ended = _utc(ev.end)
        deadline = ended + window
        first_day = profile.day_of(ev.end) + timedelta(days=1)  # a day alone: only a later day is surely after
        last_day = profile.day_of(deadline)
        return any(
            ended <= _utc(t) <= deadline if isinstance(t, datetime) else first_day <= t <= last_day for t in done
        )
    # A daily event: its end is the midnight after its last day; 24 hours on, the end of the next day.
    next_day = ev.end + timedelta(days=1)
    return any(profile.day_of(t) == next_day for t in done)


def _text(t: date | datetime, profile: Profile) -> str:
    """Return a reading's day as it is, or its time on the Village's clock with the zone."""
    if isinstance(t, datetime):
        return f"{profile.local(t):%Y-%m-%d %H:%M %Z}".strip()
    return t.isoformat()


def _week_end(d: date, profile: Profile) -> date:
    """Return the last day of the calendar week holding ``d`` (weeks start on the profile's ``week_starts``)."""
    starts = str(profile.entry("deadlines.inspection_interval").extra.get("week_starts", "sunday")).lower()[:3]
    first = ("mon", "tue", "wed", "thu", "fri", "sat", "sun").index(starts)
    return d + timedelta(days=(first - 1 - d.weekday()) % 7)


def weekly_due(started: date, last_inspection: date | None, profile: Profile) -> date:
    """Return the day the next weekly inspection is due (§ 540-8E(6) "at least once per week").

    The text does not say which week; the profile's reading of ``deadlines.inspection_interval``
    (basis ``interpretation``) does:

    - ``rolling_7_days``: 7 days after the last inspection, or after the start when there is
      none yet;
    - ``calendar_week``: every calendar week in which work goes on has an inspection, so it is
      due on the last day of the start's week when there is none yet, and on the last day of the
      week after the last inspection's otherwise (weeks start on ``week_starts``, default Sunday).

    Parameters
    ----------
    started : date
        Land disturbance began.
    last_inspection : date or None
        The latest inspection on or after ``started``.
    profile : Profile

    Raises
    ------
    ProfileError
        If the profile's interval is not a number.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> weekly_due(date(2026, 5, 1), date(2026, 5, 3), load_profile())  # rolling: a week after the last
    datetime.date(2026, 5, 10)
    """
    interval = timedelta(days=_number(profile, "inspection_interval"))
    if profile.reading("deadlines.inspection_interval") == "calendar_week":
        if last_inspection is None:
            return _week_end(started, profile)
        return _week_end(last_inspection, profile) + interval
    return (last_inspection or started) + interval


def weekly_record(
    started: date, inspections: Iterable[date], first: date, last: date, profile: Profile
) -> list[tuple[date, bool]]:
    """Every weekly inspection that fell due from ``first`` to ``last``, and whether it was met.

    The office's record of the period (``permits summary``), under the reading of
    :func:`weekly_due`:

    - ``rolling_7_days``: each deadline falls an interval after the last inspection, or after
      the start. One met by an inspection on or before its day moves the next to a week after
      the latest such inspection. One missed counts; a late inspection within the following
      week restarts the clock from its own day (as :func:`inspections_due` does), and a week
      more without one is a second miss: a site left uninspected for five weeks has missed five;
    - ``calendar_week``: each calendar week from the start's to ``last``'s is one deadline, on
      its last day, met by an inspection in that week (on or after the start).

    Parameters
    ----------
    started : date
        Land disturbance began.
    inspections : iterable of date
    first, last : date
        The period: deadlines falling in it are listed.
    profile : Profile

    Returns
    -------
    list of (date, bool)
        Each deadline's day and whether it was met, oldest first.

    Raises
    ------
    ProfileError
        If the profile's interval is not a number.
    """
    done = sorted(inspections)
    interval = timedelta(days=_number(profile, "inspection_interval"))
    out: list[tuple[date, bool]] = []
    if profile.reading("deadlines.inspection_interval") == "calendar_week":
        due_day = _week_end(started, profile)
        while interval and due_day <= last:
            if due_day >= first:
                # The week's days from its first (or the start) to its last.
                opens = max(started, due_day - interval + timedelta(days=1))
                out.append((due_day, any(opens <= d <= due_day for d in done)))
            due_day += interval
        return out
    anchor = started
    due_day = anchor + interval
    while interval and due_day <= last:
        met = [d for d in done if anchor < d <= due_day]
        if due_day >= first:
            out.append((due_day, bool(met)))
        late = [d for d in done if due_day < d <= due_day + interval]
        anchor = max(met) if met else (max(late) if late else due_day)
        due_day = anchor + interval
    return out


def _day(d: date | datetime) -> date:
    return d.date() if isinstance(d, datetime) else d
