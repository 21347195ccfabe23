"""Construction schedules for the soil-loss calculation: phases, their cover and practices, and windows.

A schedule is a CSV or TOML file of phases, each with ``phase`` (a name), ``start`` and ``end``
(ISO dates, both days included), ``cover`` (a cover name of the profile's
``[soil_loss.cover.*]`` tables) and ``practices`` (names of ``[soil_loss.practice.*]``, separated
by ``;`` or ``+`` in a CSV, a list in TOML; empty for none). TOML holds them as an array of
tables::

    [[phase]]
    phase = "rough grading"
    start = 2027-04-01
    end = 2027-05-31
    cover = "bare"
    practices = ["silt_fence"]

Every row is checked before any is used, and every problem is reported at once with its row
number: a missing column, a date that is not a date, an end before its start, phases that
overlap or leave a gap (a gap would count no soil loss for ground that is still disturbed),
an unknown cover or practice.

The WDNR Soil Loss & Sediment Discharge Calculation Tool runs "one calculation for every
12-month window from the start date to the end date" (domain-reference § 3.2): the windows are
consecutive, the first starting on the day of initial grading (the first phase's start) and
the last ending on final stabilisation (the last phase's end), so a 14-month schedule has a
12-month window and a 2-month one.
"""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from esc_gis.config._base import errors
from esc_gis.config.schedule import COLUMNS, REQUIRED_COLUMNS, Day, PhaseRow, Practices
from esc_gis.errors import LayerReadError, Problem, ValidationError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Phase", "Window", "read_schedule", "validate_schedule", "windows"]

_COLUMNS, _REQUIRED = COLUMNS, REQUIRED_COLUMNS
# The row's own rules for its dates and practices, for a row whose other values are refused.
_DAY = TypeAdapter(Day)
_PRACTICES = TypeAdapter(Practices)


@dataclass(frozen=True)
class Phase:
    """One phase of a construction schedule.

    Attributes
    ----------
    name : str
    start, end : datetime.date
        First and last day of the phase, both included.
    cover : str
        Cover name (a key of the profile's ``[soil_loss.cover]``).
    practices : tuple of str
        Sediment-control practice names (keys of ``[soil_loss.practice]``).
    row : int
        1-based row of the schedule it came from.
    """

    name: str
    start: dt.date
    end: dt.date
    cover: str
    practices: tuple[str, ...]
    row: int

    @property
    def days(self) -> int:
        """Length of the phase in days, both ends included."""
        return (self.end - self.start).days + 1


@dataclass(frozen=True)
class Window:
    """A 12-month (or shorter, last) window of the schedule, both days included."""

    start: dt.date
    end: dt.date

    @property
    def label(self) -> str:
        """``2027-04-01 to 2028-03-31``."""
        return f"{self.start.isoformat()} to {self.end.isoformat()}"


def _check_row(
    i: int,
    raw: Mapping[str, Any],
    known_covers: Sequence[str],
    known_practices: Sequence[str],
    source: str,
    problems: list[Problem],
) -> Phase | None:
    """Append the problems of row ``i``; return its phase when its dates could be read."""
    row, errs = errors(PhaseRow, raw)
    failed = {str(e["loc"][0]): e for e in errs}
    missing = [c for c in _REQUIRED if c in failed and failed[c]["type"] in ("missing", "blank")]
    if missing:
        problems.append(
            Problem(source, i, f"no {', '.join(missing)}.", f"give every phase its {', '.join(_REQUIRED)}.")
        )
    name = str(raw.get("phase") or f"row {i}")
    dates = {}
    for col in ("start", "end"):
        if col not in failed:  # read by the row's own rule, whatever else the row lacks
            dates[col] = _DAY.validate_python(raw[col])
        elif col not in missing:
            problems.append(
                Problem(source, i, f"{col} {raw[col]!r} is not a date.", "write dates as YYYY-MM-DD.", name)
            )
    start, end = dates.get("start"), dates.get("end")
    if start is not None and end is not None and end < start:
        problems.append(
            Problem(
                source,
                i,
                f"end {end.isoformat()} is before start {start.isoformat()}.",
                "swap the dates or correct them.",
                name,
            )
        )
    cover = str(raw.get("cover") or "").strip()
    if cover and cover not in known_covers:
        problems.append(
            Problem(
                source,
                i,
                f"cover {cover!r} is not in the profile.",
                f"use one of {', '.join(known_covers)} (or add it with its C and source to [soil_loss.cover]).",
                name,
            )
        )
    prs = row.practices if row is not None else _PRACTICES.validate_python(raw.get("practices"))
    problems += [
        Problem(
            source,
            i,
            f"practice {pr!r} is not in the profile.",
            f"use one of {', '.join(known_practices)} (or add it with its efficiency and source to "
            "[soil_loss.practice]).",
            name,
        )
        for pr in prs
        if pr not in known_practices
    ]
    return Phase(name, start, end, cover, prs, i) if start is not None and end is not None else None


def validate_schedule(
    rows: Sequence[Mapping[str, Any]],
    covers: Iterable[str],
    practices: Iterable[str],
    *,
    source: str = "schedule",
) -> list[Phase]:
    """Check every row of a schedule and return its phases in date order.

    Parameters
    ----------
    rows : sequence of mapping
        One mapping per phase with the keys ``phase``, ``start``, ``end``, ``cover`` and
        optionally ``practices`` (dates as ``datetime.date`` or ISO strings).
    covers : iterable of str
        The cover names the profile knows.
    practices : iterable of str
        The practice names the profile knows.
    source : str, default "schedule"
        Name of the file, for messages.

    Returns
    -------
    list of Phase
        Sorted by start date.

    Raises
    ------
    ValidationError
        Listing every problem at once with its row: a missing value, a bad date, an end before
        its start, overlapping phases, a gap between phases, an unknown cover or practice, an
        empty schedule.
    """
    known_covers, known_practices = sorted(set(covers)), sorted(set(practices))
    problems: list[Problem] = []
    if not rows:
        raise ValidationError([Problem(source, None, "the schedule has no phases.", "add one row per phase.")])
    phases: list[Phase] = []
    for i, raw in enumerate(rows, start=1):
        phase = _check_row(i, raw, known_covers, known_practices, source, problems)
        if phase is not None:
            phases.append(phase)
    # Order and continuity, over the phases whose dates could be read.
    ordered = sorted((p for p in phases if p.end >= p.start), key=lambda p: (p.start, p.row))
    for a, b in itertools.pairwise(ordered):
        if b.start <= a.end:
            problems.append(
                Problem(
                    source,
                    b.row,
                    f"phase {b.name!r} ({b.start.isoformat()} to {b.end.isoformat()}) overlaps phase {a.name!r} "
                    f"(row {a.row}, to {a.end.isoformat()}).",
                    "one phase at a time: start each phase the day after the one before ends.",
                    b.name,
                )
            )
        elif (b.start - a.end).days > 1:
            problems.append(
                Problem(
                    source,
                    b.row,
                    f"a gap of {(b.start - a.end).days - 1} days between phase {a.name!r} (row {a.row}, to "
                    f"{a.end.isoformat()}) and phase {b.name!r} (from {b.start.isoformat()}).",
                    "cover every day from initial grading to final stabilisation: add a phase for the gap.",
                    b.name,
                )
            )
    if problems:
        raise ValidationError(problems)
    return ordered


def read_schedule(path: str | os.PathLike[str], covers: Iterable[str], practices: Iterable[str]) -> list[Phase]:
    """Read and check a schedule file (CSV or TOML).

    Parameters
    ----------
    path : path-like
        A ``.csv`` with a header row naming the columns, or a ``.toml`` with ``[[phase]]``
        tables (see the module notes).
    covers, practices : iterable of str
        Names the profile knows (see :func:`validate_schedule`).

    Returns
    -------
    list of Phase

    Raises
    ------
    LayerReadError
        If the file is missing, unreadable, or neither CSV nor TOML.
    ValidationError
        As :func:`validate_schedule`; also for a CSV without the required columns.
    """
    from esc_gis._vsi import read_text

    name = os.fspath(path)  # a path inside an archive (a plan package sent zipped) as written
    try:
        text = read_text(name, encoding="utf-8-sig")
    except FileNotFoundError:
        msg = f"{name}: the schedule file does not exist."
        raise LayerReadError(msg) from None
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"{name}: cannot read the schedule ({exc})."
        raise LayerReadError(msg) from None
    suffix = os.path.splitext(name)[1].lower()
    rows: list[dict[str, Any]]
    if suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            msg = f"{name}: not valid TOML ({exc})."
            raise LayerReadError(msg) from None
        raw = data.get("phase", [])
        rows = [dict(r) for r in raw] if isinstance(raw, list) else []
    elif suffix == ".csv":
        reader = csv.DictReader(text.splitlines())
        header = [h.strip().lower() for h in (reader.fieldnames or [])]
        missing = [c for c in _REQUIRED if c not in header]
        if missing:
            problem = Problem(
                name,
                None,
                f"the schedule has no column {', '.join(missing)} (it has {', '.join(header) or 'none'}).",
                f"give a header row with {', '.join(_COLUMNS)}.",
            )
            raise ValidationError([problem])
        rows = [{(k or "").strip().lower(): v for k, v in r.items()} for r in reader]
    else:
        msg = f"{name}: a schedule must be a .csv or .toml file."
        raise LayerReadError(msg)
    return validate_schedule(rows, covers, practices, source=name)


def _add_months(day: dt.date, months: int) -> dt.date:
    y, m = divmod(day.month - 1 + months, 12)
    year, month = day.year + y, m + 1
    # 31 Jan + 1 month: the last day of February, as a calendar reader would take it.
    for d in range(day.day, 27, -1):
        try:
            return dt.date(year, month, d)
        except ValueError:
            continue
    return dt.date(year, month, day.day)


def windows(phases: Sequence[Phase], months: int = 12) -> list[Window]:
    """Consecutive windows of ``months`` from initial grading to final stabilisation.

    Parameters
    ----------
    phases : sequence of Phase
        Checked phases (:func:`validate_schedule`).
    months : int, default 12
        Window length (the profile's ``window_months``).

    Returns
    -------
    list of Window
        The first starts on the first phase's start; each ends the day before the next starts;
        the last ends on the last phase's end (shorter than ``months`` unless the schedule is a
        whole number of windows).

    Raises
    ------
    ValueError
        If there are no phases or ``months`` is below 1.

    Examples
    --------
    >>> p = [Phase("a", dt.date(2027, 4, 1), dt.date(2028, 5, 31), "bare", (), 1)]
    >>> [w.label for w in windows(p)]
    ['2027-04-01 to 2028-03-31', '2028-04-01 to 2028-05-31']
    """
    if not phases or months < 1:
        msg = "windows need at least one phase and a length of 1 month or more"
        raise ValueError(msg)
    first, last = min(p.start for p in phases), max(p.end for p in phases)
    out: list[Window] = []
    k = 0
    start = first
    while start <= last:
        k += 1
        nxt = _add_months(first, months * k)
        out.append(Window(start, min(nxt - dt.timedelta(days=1), last)))
        start = nxt
    return out
