"""Ordinance profiles: the ordinance's numbers, each with its § citation, read from TOML.

A profile is data, not code: thresholds, protective-area widths, design storms and
deadlines, each stored with the unit it is written in and the section it comes from. The
rules in :mod:`esc_gis.rules` read numbers only through a :class:`Profile`, so correcting a
number never means editing code. The Village's profile ships in the package
(``esc_gis/profiles/winneconne.toml``); ``load_profile(path)`` reads another.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_PROFILE",
    "HOLIDAY_SETS",
    "PARTIAL_READINGS",
    "READINGS",
    "REQUIRED",
    "TRIGGER_KINDS",
    "Entry",
    "Profile",
    "Trigger",
    "load_profile",
]

import sys
import warnings
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone, tzinfo
from importlib import resources
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

# What a profile may hold is said once, by its model (esc_gis.config); the names stay importable here.
from esc_gis.config.calendar import HOLIDAY_SETS, CalendarFile, read_calendar
from esc_gis.config.profile import (
    GROUPS,
    PARTIAL_READINGS,
    READINGS,
    REQUIRED,
    TRIGGER_KINDS,
    ProfileFile,
    profile_problems,
)
from esc_gis.errors import EscGisWarning, Problem, ProfileError, ValidationError
from esc_gis.findings import CATALOGUE, RENAMED, Finding, FindingTemplate, check_template, quantity_text
from esc_gis.units import acres_to_sqft

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: The profile used when none is named.
DEFAULT_PROFILE = "winneconne"


@dataclass(frozen=True)
class Entry:
    """One number of the ordinance with its unit and citation.

    Parameters
    ----------
    key : str
        ``group.name``, e.g. ``thresholds.permit_area``.
    value : float or None
        The number (None for tables such as design-storm depths, held in ``extra``).
    unit : str
        The unit the ordinance writes it in.
    section : str
        The citation, e.g. ``540-4A(1)(a)``.
    summary : str
        One line saying what it does.
    extra : dict
        Anything else the entry holds (``min_ft``, ``max_ft``, ``depths``).
    """

    key: str
    value: float | None
    unit: str
    section: str
    summary: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cite(self) -> str:
        """The section as printed on findings, written in the profile with its mark (``§ 540-4A(1)(a)``)."""
        return self.section

    def text(self) -> str:
        """Write the number as the ordinance does: ``4,000 sq ft``, ``1 acre``."""
        return quantity_text(float(self.value or 0), self.unit)


@dataclass(frozen=True)
class Trigger:
    """One thing that makes a permit required (kind, threshold, unit, section, finding).

    ``kind`` is one of :data:`TRIGGER_KINDS`: the disturbed area over the common plan, cubic
    yards of fill or excavation (site field ``fill_cuyd``), linear feet of utility or ditch
    work (``utility_ft``), disturbed area on steep slopes, or a land division (plat or
    certified survey map, ``land_division``). The permit is required when any trigger is met
    (value at or over the threshold; for a land division, the flag).
    """

    name: str
    kind: str
    value: float | None
    unit: str
    section: str
    finding: str
    label: str = ""

    @property
    def field(self) -> str:
        """The site field or measurement the trigger compares."""
        return TRIGGER_KINDS[self.kind][0]

    def threshold(self) -> float:
        """Return the threshold in the measurement's unit (square feet for areas)."""
        v = float(self.value or 0)
        return acres_to_sqft(v) if self.unit == "acres" else v


@dataclass(frozen=True)
class Profile:
    """An ordinance profile: named, cited numbers, the wording of every finding, and the measuring CRS.

    Use :func:`load_profile` to make one.
    """

    name: str
    ordinance: str
    adopted: str
    measure_crs: str
    entries: dict[str, Entry]
    source: str = ""
    contact: str = ""
    jurisdiction_name: str = ""
    authority: str = ""
    authority_section: str = ""
    permit_number: str = "{year}-{seq:04d}"
    case_number: str = "ENF-{year}-{seq:04d}"
    appeal_number: str = "APL-{year}-{seq:04d}"
    #: The office's clock, an IANA zone name (``America/Chicago``); empty: this machine's.
    timezone: str = ""
    standards_permitted: str = ""
    standards_unpermitted: str = ""
    partial_jurisdiction: str = "whole"
    findings: dict[str, FindingTemplate] = field(default_factory=dict)
    triggers: tuple[Trigger, ...] = ()
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    _names: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def entry(self, key: str) -> Entry:
        """Return the entry ``key`` (``group.name``).

        Raises
        ------
        ProfileError
            If the profile has no such entry.
        """
        try:
            return self.entries[key]
        except KeyError:
            msg = f"Profile {self.source or self.name!r} has no entry {key!r}; add it with its section."
            raise ProfileError(msg) from None

    def area_sqft(self, key: str) -> float:
        """Return an area threshold in square feet, whatever unit the profile writes it in.

        Raises
        ------
        ProfileError
            If the entry is missing or is not an area.

        Examples
        --------
        >>> load_profile().area_sqft("thresholds.sediment_area")
        43560.0
        """
        e = self.entry(key)
        if e.unit == "sqft":
            return float(e.value)  # type: ignore[arg-type]
        if e.unit == "acres":
            return acres_to_sqft(e.value)  # type: ignore[arg-type]
        msg = f"Profile entry {key!r} is in {e.unit!r}, not an area (sqft or acres)."
        raise ProfileError(msg)

    def reading(self, key: str) -> str:
        """Return the reading the profile takes of entry ``key`` (one of :data:`READINGS`).

        Raises
        ------
        ProfileError
            If the profile has no such entry.

        Examples
        --------
        >>> load_profile().reading("deadlines.permit_extension")
        'per_extension'
        """
        return str(self.entry(key).extra.get("reading", READINGS[key][0]))

    def water_classes(self) -> list[str]:
        """Return the water classes that have a protective-area width."""
        return [k.split(".", 1)[1] for k in self.entries if k.startswith("protective_area.")]

    def names(self) -> dict[str, str]:
        """Return the profile-wide values every finding's message may use.

        ``jurisdiction_name``, ``authority``, ``authority_section``, the standards' codes, and
        each threshold and deadline as the ordinance writes it (``permit_area`` is
        ``4,000 sq ft``), with its citation as ``<name>_section``.
        """
        if not self._names:
            self._names.update(_names(self))
        return self._names

    def template(self, code: str) -> FindingTemplate:
        """Return the declared finding ``code``.

        Raises
        ------
        ProfileError
            If the profile does not declare it.
        """
        try:
            return self.findings[code]
        except KeyError:
            msg = (
                f"Profile {self.source or self.name!r} declares no finding {code!r}; add [findings.{code}] "
                "with its section, basis and message."
            )
            raise ProfileError(msg) from None

    def finding(self, code: str, **values: Any) -> Finding:
        """Render the declared finding ``code`` with row ``values``.

        Raises
        ------
        ProfileError
            If the finding is not declared or its message needs a value that is not given.

        Examples
        --------
        >>> f = load_profile().finding("outside_jurisdiction")
        >>> f.section, f.basis
        ('§ 540-4B', 'ordinance')
        """
        return self.template(code).render({**self.names(), **values})

    def standards_for(self, permitted: bool) -> str:
        """Return the standards code that applies to a permitted (or non-permitted) site."""
        return self.standards_permitted if permitted else self.standards_unpermitted

    @property
    def tz(self) -> tzinfo | None:
        """The office's time zone, or None for this machine's (:attr:`timezone`)."""
        return ZoneInfo(self.timezone) if self.timezone else None

    def local(self, t: datetime) -> datetime:
        """Return ``t`` on the office's clock; a naive ``t`` is taken as read off that clock.

        Days the ordinance counts (an inspection's day, a repair's, the day work began) are the
        office's days, not UTC's nor the server's: 9 p.m. in Winneconne is already tomorrow in UTC.
        In the hour the clocks fall back, a time is taken as its first occurrence (daylight time);
        give an offset (``-06:00``) for the second.

        Raises
        ------
        ValidationError
            If a naive ``t`` does not exist on the office's clock (the hour the clocks spring
            over).
        """
        if t.tzinfo is None:
            if self.tz is None:
                return t.astimezone()
            placed = t.replace(tzinfo=self.tz)
            if placed.astimezone(timezone.utc).astimezone(self.tz).replace(tzinfo=None) != t:
                problem = Problem(
                    "time",
                    None,
                    f"{t:%Y-%m-%d %H:%M} does not exist on the office's clock ({self.timezone}): the clocks "
                    "spring over that hour.",
                    "give the time an hour later, or with its offset (e.g. 2026-03-08T02:30-06:00).",
                )
                raise ValidationError([problem])
            return placed
        return t.astimezone(self.tz)

    def day_of(self, d: date | datetime) -> date:
        """Return the office's day of ``d`` (a date is its own day)."""
        return self.local(d).date() if isinstance(d, datetime) else d

    def today(self) -> date:
        """Return today on the office's clock."""
        return datetime.now(self.tz).date()

    def format_permit_number(self, year: int, seq: int) -> str:
        """Format a permit number by the profile's pattern (``ESC-{year}-{seq:04d}``)."""
        return self.permit_number.format(year=year, seq=seq)


def _names(p: Profile) -> dict[str, str]:
    out = {
        "jurisdiction_name": p.jurisdiction_name or p.name,
        "authority": p.authority,
        "authority_section": p.authority_section,
        "standards_permitted": p.standards_permitted,
        "standards_unpermitted": p.standards_unpermitted,
    }
    for key, e in p.entries.items():
        group, name = key.split(".", 1)
        if group in ("thresholds", "deadlines", "policy") and isinstance(e.value, (int, float)):
            out[name] = e.text()
            out[f"{name}_value"] = f"{e.value:g}"
            out[f"{name}_section"] = e.cite
        if key in READINGS:
            # The reading taken, in the profile's words ({inspection_interval_reading}).
            reading = p.reading(key)
            out[f"{name}_reading"] = str((e.extra.get("readings") or {}).get(reading, reading.replace("_", " ")))
    for key in READINGS:
        group, name = key.split(".", 1)
        out.setdefault(f"{name}_reading", READINGS[key][0].replace("_", " "))
    # What a business day is taken to be (§ 540-5 BUSINESS DAY): the [calendar] table's words,
    # read by the one reader of [calendar] (a table it refuses has the default words).
    calendar, _ = read_calendar(p.tables.get("calendar") or {})
    out["business_days"] = (calendar or CalendarFile.model_validate({})).words
    return out


def _builtin_path(name: str) -> Path:
    return Path(str(resources.files("esc_gis") / "profiles" / f"{name}.toml"))


def _read_toml(path: str | Path | None) -> tuple[Path, dict[str, Any]]:
    p = Path(path) if path is not None else _builtin_path(DEFAULT_PROFILE)
    if path is not None and not p.exists() and _builtin_path(str(path)).exists():
        p = _builtin_path(str(path))
    try:
        return p, tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        msg = f"Ordinance profile {str(p)!r} does not exist. Give the path of a profile TOML file."
        raise ProfileError(msg) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        msg = f"Ordinance profile {str(p)!r} cannot be read as TOML: {exc}"
        raise ProfileError(msg) from None


def _entries(m: ProfileFile, data: dict[str, Any]) -> dict[str, Entry]:
    """Return the numbered entries of every group, with what else each holds (``min_ft``, ``depths``) as ``extra``.

    ``extra`` keeps the file's order of keys (``esc-gis rules`` and the reference show them so).
    """
    out = {}
    for group in GROUPS:
        for name, e in getattr(m, group).items():
            given = e.model_dump(exclude_unset=True, exclude={"value", "unit", "section", "summary"})
            extra = {k: given[k] for k in data[group][name] if k in given}
            out[f"{group}.{name}"] = Entry(f"{group}.{name}", e.value, e.unit, e.section, e.summary, extra)
    return out


def _triggers(m: ProfileFile, entries: dict[str, Entry]) -> tuple[Trigger, ...]:
    """Return the permit triggers, a trigger naming an entry taking its value, unit and section."""
    out = []
    for name, t in m.permit_triggers.items():
        e = entries.get(t.threshold) if t.threshold is not None else None
        given = t.model_fields_set
        value = t.value if e is None or "value" in given else e.value
        unit = t.unit if e is None or "unit" in given else e.unit
        section = t.section if e is None or "section" in given else e.section
        label = name if t.label is None else t.label
        out.append(Trigger(name, t.kind, value, str(unit or ""), str(section or ""), t.finding, label))
    return tuple(out)


def load_profile(path: str | Path | None = None) -> Profile:
    """Load and check an ordinance profile.

    Parameters
    ----------
    path : str or Path, optional
        A TOML file, or the name of a profile shipped with esc_gis. Default: the Village of
        Winneconne's.

    Returns
    -------
    Profile

    Raises
    ------
    ProfileError
        If the file is missing, is not TOML, an entry lacks a value, unit or section, a
        finding lacks its section, basis or a usable message, or a trigger is malformed.
        Every problem is listed at once.

    Examples
    --------
    >>> p = load_profile()
    >>> p.entry("thresholds.permit_area").value, p.entry("thresholds.permit_area").section
    (4000, '§ 540-4A(1)(a)')
    """
    p, data = _read_toml(path)
    # A refused profile's usable tables still go through the checks below: every problem in one pass.
    model, problems = profile_problems(data)
    head = model.profile
    entries = _entries(model, data)
    findings = {
        code: FindingTemplate(code, f.section, f.basis, f.message, f.title) for code, f in model.findings.items()
    }
    _renamed(findings, p)
    prof = Profile(
        name=head.name,
        ordinance=head.ordinance,
        adopted=head.adopted,
        measure_crs=head.measure_crs,
        entries=entries,
        source=str(p),
        contact=head.contact,
        jurisdiction_name=head.name if head.jurisdiction_name is None else head.jurisdiction_name,
        authority=head.authority,
        authority_section=head.authority_section,
        permit_number=head.permit_number,
        case_number=head.case_number,
        appeal_number=head.appeal_number,
        timezone=head.timezone,
        standards_permitted=head.standards_permitted,
        standards_unpermitted=head.standards_unpermitted,
        partial_jurisdiction=head.partial_jurisdiction,
        findings=findings,
        triggers=_triggers(model, entries),
        tables={k: v for k, v in data.items() if isinstance(v, dict) and k not in _KNOWN_TABLES},
    )
    names = set(prof.names())
    for t in findings.values():
        problems += check_template(t, names)
    problems += [
        f"missing finding [findings.{c}]: every finding esc_gis can emit needs its wording"
        for c in CATALOGUE
        if c not in findings
    ]
    if problems:
        msg = f"Ordinance profile {str(p)!r} has {len(problems)} problem(s):\n  - " + "\n  - ".join(problems)
        raise ProfileError(msg)
    return prof


_KNOWN_TABLES = {"profile", "findings", "permit_triggers", *GROUPS}


def _renamed(findings: dict[str, FindingTemplate], path: Path | str) -> None:
    """Let a renamed finding's old code stand in for its new ones (:data:`esc_gis.findings.RENAMED`), warning.

    A profile written for an older esc_gis keeps loading for one release; the warning names the
    sections to add. A profile declaring both the old and the new codes uses the new ones.
    """
    for old, new in RENAMED.items():
        if old not in findings:
            continue
        template = findings.pop(old)
        lacking = [code for code in new if code not in findings]
        for code in lacking:
            findings[code] = replace(template, code=code)
        adds = f"add {', '.join(f'[findings.{c}]' for c in lacking)} and " if lacking else ""
        msg = (
            f"Profile {str(path)!r} declares [findings.{old}], which esc_gis no longer emits: it became "
            f"{' and '.join(new)}. Its wording is used for them in this release only. "
            f"Fix: {adds}delete [findings.{old}]."
        )
        warnings.warn(msg, EscGisWarning, stacklevel=3)
