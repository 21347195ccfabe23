"""Ordinance profiles: the ordinance's numbers, each with its § citation, read from TOML.

A profile is data, not code: thresholds, protective-area widths, design storms and
deadlines, each stored with the unit it is written in and the section it comes from. The
rules in :mod:`esc_gis.rules` read numbers only through a :class:`Profile`, so correcting a
number never means editing code. The Village's profile ships in the package
(``esc_gis/profiles/winneconne.toml``); ``load_profile(path)`` reads another.
"""

from __future__ import annotations

__all__ = ["DEFAULT_PROFILE", "HOLIDAY_SETS", "READINGS", "Entry", "Profile", "Trigger", "load_profile"]

import sys
from dataclasses import dataclass, field
from datetime import date, datetime, timezone, tzinfo
from importlib import resources
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from esc_gis.errors import Problem, ProfileError, ValidationError
from esc_gis.findings import BASES, CATALOGUE, Finding, FindingTemplate, check_template, quantity_text
from esc_gis.units import acres_to_sqft

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: The profile used when none is named.
DEFAULT_PROFILE = "winneconne"

#: Entries the screening rules cannot run without.
REQUIRED = (
    "thresholds.permit_area",
    "thresholds.sediment_area",
    "thresholds.npdes_exempt_area",
    "thresholds.less_stringent_area",
    "thresholds.steep_slope",
    "protective_area.lake",
    "policy.near_threshold",
    "policy.sliver",
)
_UNITS = {
    "sqft",
    "acres",
    "ft",
    "pct",
    "pct_of_average_width",
    "tons_per_acre_year",
    "business_days",
    "days",
    "hours",
    "inches",
    "cuyd",
}
_GROUPS = ("thresholds", "protective_area", "design_storms", "deadlines", "policy")
#: Readings of § 540-4B (jurisdiction) for a site partly inside the boundary.
PARTIAL_READINGS = ("whole", "inside_only")
#: Entries whose number the ordinance leaves open to two readings: entry -> its readings, the
#: first being the one taken when the profile names none (``reading = "..."`` in the entry).
#: § 540-8E(6) "at least once per week": seven days from the last inspection, or each calendar
#: week; § 540-8G "up to an additional 180 days": each extension, or all of them together.
READINGS: dict[str, tuple[str, ...]] = {
    "deadlines.inspection_interval": ("rolling_7_days", "calendar_week"),
    "deadlines.permit_extension": ("per_extension", "total"),
}
#: Named holiday sets ``[calendar] holidays`` may name instead of listing dates (the rules are
#: :func:`esc_gis.registry.domain.calendar.default_holidays`).
HOLIDAY_SETS = ("wisconsin_municipal",)
_DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
#: What a permit trigger measures, and the site field (or measurement) it reads.
TRIGGER_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "disturbed_area": ("plan_disturbed_sqft", ("sqft", "acres")),
    "fill_volume": ("fill_cuyd", ("cuyd",)),
    "utility_length": ("utility_ft", ("ft",)),
    "steep_disturbed_area": ("steep_disturbed_sqft", ("sqft", "acres")),
    "land_division": ("land_division", ()),
}


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
    # What a business day is taken to be (§ 540-5 BUSINESS DAY): the [calendar] table's words.
    calendar = p.tables.get("calendar") or {}
    out["business_days"] = str(calendar.get("words", "weekdays other than the office's holidays"))
    return out


def _readings(entries: dict[str, Entry], problems: list[str]) -> None:
    """Check each entry's ``reading`` (and its ``readings`` words, ``week_starts``) against :data:`READINGS`."""
    for key, known in READINGS.items():
        e = entries.get(key)
        if e is None:
            continue
        reading = e.extra.get("reading", known[0])
        if reading not in known:
            problems.append(f"[{key}] reading {reading!r} is not one of {', '.join(known)}")
        words = e.extra.get("readings", {})
        if not isinstance(words, dict) or any(k not in known or not str(v).strip() for k, v in words.items()):
            problems.append(f"[{key}] readings must be a table of {', '.join(known)} = words")
        start = e.extra.get("week_starts")
        if start is not None and str(start).lower()[:3] not in _DAY_NAMES:
            problems.append(f"[{key}] week_starts {start!r} is not a day name (e.g. 'sunday')")


def _calendar(raw: Any, problems: list[str]) -> None:
    """Check the ``[calendar]`` table: a named holiday set or a list of dates, weekend day names, the basis."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        problems.append("[calendar] must be a table with holidays, weekend, section, basis and words")
        return
    holidays = raw.get("holidays", HOLIDAY_SETS[0])
    if isinstance(holidays, str):
        if holidays not in HOLIDAY_SETS:
            problems.append(
                f"[calendar] holidays {holidays!r} is not a named set ({', '.join(HOLIDAY_SETS)}) nor a list of dates"
            )
    elif isinstance(holidays, list):
        for v in holidays:
            # A TOML date reads as a date; a quoted "YYYY-MM-DD" is taken too; a date-time is not a day.
            if isinstance(v, datetime) or not isinstance(v, (date, str)) or not _is_day(str(v)):
                problems.append(f"[calendar] holiday {v!r} is not a date (use YYYY-MM-DD)")
    else:
        problems.append(f"[calendar] holidays {holidays!r} is not a named set nor a list of dates")
    weekend = raw.get("weekend", ["sat", "sun"])
    if not isinstance(weekend, list) or any(str(v).lower()[:3] not in _DAY_NAMES for v in weekend):
        problems.append(f"[calendar] weekend {weekend!r} must be a list of day names (e.g. ['sat', 'sun'])")
    if not str(raw.get("section", "")).strip():
        problems.append("[calendar] has no section: cite what defines a business day")
    if raw.get("basis") not in BASES:
        problems.append(f"[calendar] basis {raw.get('basis')!r} is not one of {', '.join(BASES)}")


def _is_day(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


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


def _entries(data: dict[str, Any], problems: list[str]) -> dict[str, Entry]:
    entries: dict[str, Entry] = {}
    for group in _GROUPS:
        for name, raw in (data.get(group) or {}).items():
            key = f"{group}.{name}"
            if not isinstance(raw, dict):
                problems.append(f"[{key}] must be a table with value, unit, section, summary")
                continue
            value = raw.get("value")
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                problems.append(f"[{key}] value {value!r} is not a number")
            if value is None and "depths" not in raw:
                problems.append(f"[{key}] has no value")
            if raw.get("unit") not in _UNITS:
                problems.append(f"[{key}] unit {raw.get('unit')!r} is not one of {sorted(_UNITS)}")
            if not str(raw.get("section", "")).strip():
                problems.append(f"[{key}] has no section: every number needs its citation")
            extra = {k: v for k, v in raw.items() if k not in ("value", "unit", "section", "summary")}
            if "basis" in extra and extra["basis"] not in BASES:
                problems.append(f"[{key}] basis {extra['basis']!r} is not one of {', '.join(BASES)}")
            entries[key] = Entry(
                key, value, str(raw.get("unit")), str(raw.get("section", "")), str(raw.get("summary", "")), extra
            )
    return entries


def _findings(data: dict[str, Any], problems: list[str]) -> dict[str, FindingTemplate]:
    out: dict[str, FindingTemplate] = {}
    for code, raw in (data.get("findings") or {}).items():
        if not isinstance(raw, dict) or not isinstance(raw.get("message"), str):
            problems.append(f"[findings.{code}] must be a table with section, basis and a message string")
            continue
        out[code] = FindingTemplate(
            code, str(raw.get("section", "")), str(raw.get("basis", "")), raw["message"], str(raw.get("title", ""))
        )
    return out


def _triggers(
    data: dict[str, Any], entries: dict[str, Entry], findings: dict[str, FindingTemplate], problems: list[str]
) -> tuple[Trigger, ...]:
    out = []
    for name, raw in (data.get("permit_triggers") or {}).items():
        where = f"[permit_triggers.{name}]"
        if not isinstance(raw, dict):
            problems.append(f"{where} must be a table with kind, value, unit, section, finding")
            continue
        if "threshold" in raw:  # value, unit and section from a numbered entry
            e = entries.get(str(raw["threshold"]))
            if e is None:
                problems.append(f"{where} threshold {raw['threshold']!r} is not an entry of this profile")
                continue
            raw = {"value": e.value, "unit": e.unit, "section": e.section, **raw}
        kind = raw.get("kind")
        if kind not in TRIGGER_KINDS:
            problems.append(f"{where} kind {kind!r} is not one of {', '.join(TRIGGER_KINDS)}")
            continue
        units = TRIGGER_KINDS[kind][1]
        value = raw.get("value")
        if units and (isinstance(value, bool) or not isinstance(value, (int, float))):
            problems.append(f"{where} needs a numeric value")
        if units and raw.get("unit") not in units:
            problems.append(f"{where} unit {raw.get('unit')!r} is not one of {', '.join(units)} for {kind}")
        if not str(raw.get("section", "")).strip():
            problems.append(f"{where} has no section")
        code = str(raw.get("finding", ""))
        if code not in findings:
            problems.append(f"{where} finding {code!r} is not declared under [findings]")
        out.append(
            Trigger(
                name,
                kind,
                value,
                str(raw.get("unit", "")),
                str(raw.get("section", "")),
                code,
                str(raw.get("label", name)),
            )
        )
    if not out:
        problems.append("[permit_triggers] declares no trigger: name at least the disturbed area")
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
    problems: list[str] = []
    head = data.get("profile", {})
    for k in ("name", "measure_crs"):
        if not isinstance(head.get(k), str):
            problems.append(f"[profile] needs a string {k!r}")
    partial = str(head.get("partial_jurisdiction", "whole"))
    if partial not in PARTIAL_READINGS:
        problems.append(f"[profile] partial_jurisdiction {partial!r} is not one of {', '.join(PARTIAL_READINGS)}")
    zone = str(head.get("timezone", ""))
    if zone:
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            problems.append(f"[profile] timezone {zone!r} is not an IANA time zone name (e.g. 'America/Chicago')")
            zone = ""
    entries = _entries(data, problems)
    problems += [f"missing entry [{k}]" for k in REQUIRED if k not in entries]
    _readings(entries, problems)
    _calendar(data.get("calendar"), problems)
    findings = _findings(data, problems)
    triggers = _triggers(data, entries, findings, problems)
    prof = Profile(
        name=str(head.get("name", "")),
        ordinance=str(head.get("ordinance", "")),
        adopted=str(head.get("adopted", "")),
        measure_crs=str(head.get("measure_crs", "")),
        entries=entries,
        source=str(p),
        contact=str(head.get("contact", "")),
        jurisdiction_name=str(head.get("jurisdiction_name", head.get("name", ""))),
        authority=str(head.get("authority", "")),
        authority_section=str(head.get("authority_section", "")),
        permit_number=str(head.get("permit_number", "{year}-{seq:04d}")),
        case_number=str(head.get("case_number", "ENF-{year}-{seq:04d}")),
        appeal_number=str(head.get("appeal_number", "APL-{year}-{seq:04d}")),
        timezone=zone,
        standards_permitted=str(head.get("standards_permitted", "")),
        standards_unpermitted=str(head.get("standards_unpermitted", "")),
        partial_jurisdiction=partial,
        findings=findings,
        triggers=triggers,
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


_KNOWN_TABLES = {"profile", "findings", "permit_triggers", *_GROUPS}
