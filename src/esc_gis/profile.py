"""Ordinance profiles: the ordinance's numbers, each with its § citation, read from TOML.

A profile is data, not code: thresholds, protective-area widths, design storms and
deadlines, each stored with the unit it is written in and the section it comes from. The
rules in :mod:`esc_gis.rules` read numbers only through a :class:`Profile`, so correcting a
number never means editing code. The Village's profile ships in the package
(``esc_gis/profiles/winneconne.toml``); ``load_profile(path)`` reads another.
"""

from __future__ import annotations

__all__ = ["DEFAULT_PROFILE", "Entry", "Profile", "load_profile"]

import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from esc_gis.errors import ProfileError
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
    "sqft", "acres", "ft", "pct", "pct_of_average_width", "tons_per_acre_year",
    "business_days", "days", "hours", "inches",
}  # fmt: skip
_GROUPS = ("thresholds", "protective_area", "design_storms", "deadlines", "policy")


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
        """The section as printed on findings: ``§ 540-4A(1)(a)`` or a policy label."""
        # Each part of a list gets its own mark: "540-7A(4)(d); 540-7B(5)(d)" cites two
        # sections of the code; "NR ..." and toolkit policies are not sections of it.
        parts = [p.strip() for p in self.section.split(";")]
        return "; ".join(p if p.startswith(("toolkit", "NR ", "§")) else f"§ {p}" for p in parts)


@dataclass(frozen=True)
class Profile:
    """An ordinance profile: named, cited numbers and the measuring CRS.

    Use :func:`load_profile` to make one.
    """

    name: str
    ordinance: str
    adopted: str
    measure_crs: str
    entries: dict[str, Entry]
    source: str = ""
    contact: str = ""

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
            msg = f"Profile {self.source or self.name!r} has no entry {key!r}; add it with its § citation."
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

    def water_classes(self) -> list[str]:
        """Return the water classes that have a protective-area width."""
        return [k.split(".", 1)[1] for k in self.entries if k.startswith("protective_area.")]


def _builtin_path(name: str) -> Path:
    return Path(str(resources.files("esc_gis") / "profiles" / f"{name}.toml"))


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
        If the file is missing, is not TOML, or an entry lacks a value, unit or section.
        Every problem is listed at once.

    Examples
    --------
    >>> p = load_profile()
    >>> p.entry("thresholds.permit_area").value, p.entry("thresholds.permit_area").section
    (4000, '540-4A(1)(a)')
    """
    p = Path(path) if path is not None else _builtin_path(DEFAULT_PROFILE)
    if path is not None and not p.exists() and _builtin_path(str(path)).exists():
        p = _builtin_path(str(path))
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        msg = f"Ordinance profile {str(p)!r} does not exist. Give the path of a profile TOML file."
        raise ProfileError(msg) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        msg = f"Ordinance profile {str(p)!r} cannot be read as TOML: {exc}"
        raise ProfileError(msg) from None

    problems: list[str] = []
    head = data.get("profile", {})
    for k in ("name", "measure_crs"):
        if not isinstance(head.get(k), str):
            problems.append(f"[profile] needs a string {k!r}")
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
            entries[key] = Entry(key, value, str(raw.get("unit")), str(raw.get("section", "")),
                                 str(raw.get("summary", "")), extra)  # fmt: skip
    problems += [f"missing entry [{k}]" for k in REQUIRED if k not in entries]
    if problems:
        msg = f"Ordinance profile {str(p)!r} has {len(problems)} problem(s):\n  - " + "\n  - ".join(problems)
        raise ProfileError(msg)
    return Profile(
        name=head["name"],
        ordinance=str(head.get("ordinance", "")),
        adopted=str(head.get("adopted", "")),
        measure_crs=head["measure_crs"],
        entries=entries,
        source=str(p),
        contact=str(head.get("contact", "")),
    )
