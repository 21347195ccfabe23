"""The profile's ``[soil_loss]`` tables, read and checked (:func:`soil_loss_tables`).

Apart from :mod:`esc_gis.soil.soil_loss` so that a caller that needs only the tables (the
method's slope limit and slope-length cap for :func:`esc_gis.soil.ls.ls_grid`, say) does not
import the site machinery and with it geopandas, pandas and shapely (about 75 MB of a
process's memory; ``benchmarks/bench_soil_loss.py`` measures the LS grid's peak).
:mod:`esc_gis.soil.soil_loss` re-exports both names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from esc_gis.errors import ProfileError
from esc_gis.profile import Profile

__all__ = ["SoilLossTables", "TableValue", "soil_loss_tables"]

_STATUSES = ("confirmed", "secondary", "not_confirmed")
_COMBINATIONS = ("max", "series")


@dataclass(frozen=True)
class TableValue:
    """One value of the profile's soil-loss tables with where it comes from."""

    name: str
    value: float
    status: str
    source: str


@dataclass(frozen=True)
class SoilLossTables:
    """The profile's ``[soil_loss]`` data, checked.

    Attributes
    ----------
    standard_tpa : float
        The sediment-discharge standard, t/ac/yr (``[thresholds.sediment_load]``).
    covers, practices : dict of str to TableValue
        C by cover name, efficiency (0 to 1) by practice name.
    max_slope_pct, max_slope_length_ft, k_max : float
    window_months : int
    k_field : str
    practice_combination : {"max", "series"}
    r_annual : TableValue or None
        The profile's annual R, if it holds one.
    """

    standard_tpa: float
    covers: dict[str, TableValue]
    practices: dict[str, TableValue]
    max_slope_pct: float
    max_slope_length_ft: float
    window_months: int
    k_max: float
    k_field: str
    practice_combination: str
    r_annual: TableValue | None


def _number(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    return float(raw)


def _table(raw: dict[str, Any], group: str, field: str, problems: list[str]) -> dict[str, TableValue]:
    """Read ``[soil_loss.<group>.*]``: a value from 0 to 1 in ``field``, a status and a source each."""
    out: dict[str, TableValue] = {}
    items = raw.get(group)
    if not isinstance(items, dict) or not items:
        problems.append(f"[soil_loss.{group}] is missing: add its tables")
        return out
    for name, t in items.items():
        at = f"[soil_loss.{group}.{name}]"
        v = _number(t.get(field)) if isinstance(t, dict) else None
        if v is None or not 0 <= v <= 1:
            problems.append(f"{at} {field} must be a number from 0 to 1")
            continue
        status, source = str(t.get("status", "")), str(t.get("source", "")).strip()
        if status not in _STATUSES:
            problems.append(f"{at} status {status!r} is not one of {', '.join(_STATUSES)}")
        if not source:
            problems.append(f"{at} has no source: every value needs one")
        out[name] = TableValue(name, v, status, source)
    return out


def _r_annual(raw: dict[str, Any], problems: list[str]) -> TableValue | None:
    r_raw = raw.get("r_annual")
    if not isinstance(r_raw, dict) or _number(r_raw.get("value")) is None:
        return None
    r = TableValue("r_annual", float(r_raw["value"]), str(r_raw.get("status", "")), str(r_raw.get("source", "")))
    if r.status not in _STATUSES or not r.source:
        problems.append("[soil_loss.r_annual] a value needs its status and source")
    return r


def soil_loss_tables(profile: Profile) -> SoilLossTables:
    """Read and check the profile's ``[soil_loss]`` tables.

    Parameters
    ----------
    profile : Profile

    Returns
    -------
    SoilLossTables

    Raises
    ------
    ProfileError
        If the tables are missing or any value lacks its number, status or source (every
        problem listed at once).
    """
    where = profile.source or profile.name
    raw = profile.tables.get("soil_loss")
    if not isinstance(raw, dict):
        msg = f"Profile {where!r} has no [soil_loss] table: add it (see the shipped profile) to compute soil loss."
        raise ProfileError(msg)
    problems: list[str] = []
    std_key = str(raw.get("standard", "thresholds.sediment_load"))
    standard = profile.entries.get(std_key)
    if standard is None or _number(standard.value) is None or standard.unit != "tons_per_acre_year":
        problems.append(f"[soil_loss] standard {std_key!r} is not an entry in tons_per_acre_year")
    nums: dict[str, float] = {}
    for key in ("max_slope_pct", "max_slope_length_ft", "window_months", "k_max"):
        v = _number(raw.get(key))
        if v is None or v <= 0:
            problems.append(f"[soil_loss] {key} must be a number above 0")
        else:
            nums[key] = v
    combination = str(raw.get("practice_combination", "max"))
    if combination not in _COMBINATIONS:
        problems.append(f"[soil_loss] practice_combination {combination!r} is not one of {', '.join(_COMBINATIONS)}")

    covers = _table(raw, "cover", "c", problems)
    practices = _table(raw, "practice", "efficiency", problems)
    r_annual = _r_annual(raw, problems)
    if problems:
        msg = f"Profile {where!r} [soil_loss] has {len(problems)} problem(s):\n  - " + "\n  - ".join(problems)
        raise ProfileError(msg)
    assert standard is not None  # checked above
    return SoilLossTables(
        standard_tpa=float(standard.value),  # type: ignore[arg-type]
        covers=covers,
        practices=practices,
        max_slope_pct=nums["max_slope_pct"],
        max_slope_length_ft=nums["max_slope_length_ft"],
        window_months=int(nums["window_months"]),
        k_max=nums["k_max"],
        k_field=str(raw.get("k_field", "kwfact")),
        practice_combination=combination,
        r_annual=r_annual,
    )
