"""The ordinance as code: pure functions from measurements to decisions and findings.

Every function here takes measurements (numpy arrays or a DataFrame, one row per site) and
the :class:`~esc_gis.profile.Profile`, and returns decisions; none reads files, transforms
coordinates or measures geometry. Thresholds are compared on unrounded values; numbers are
rounded only inside messages. Every finding carries the section it rests on.

The measurement columns read by :func:`decide`:

==============================  ===========================================================
``jurisdiction``                ``inside``, ``partial`` or ``outside`` (§ 540-4B)
``activity``                    ``construction``, ``agricultural_activity``,
                                ``agricultural_production``, ``silviculture``
``state_agency``                bool (§ 540-4C)
``npdes_exempt``                bool (§ 540-4A(3))
``plan_id``                     str or None
``disturbed_sqft``              union of the site's disturbed limits
``disturbed_in_village_sqft``   the part inside the Village
``disturbed_parts_sqft``        sum of the disturbed-limit polygons before the union
``disturbed_outside_site_sqft`` disturbed limits drawn outside the site polygon
``disturbed_count``             number of disturbed-limit polygons
``plan_disturbed_sqft``         union over the common plan, inside the Village
``plan_site_count``             sites in the plan
``protective_disturbed_sqft``   NaN when no waters layer
``in_water_sqft``               disturbance inside water polygons; NaN when no waters layer
``nearest_water_ft``            NaN when no waters layer
``nearest_water``               label of the nearest water
``protective_waters``           labels of the waters whose protective area is disturbed
``targeted_areas``              names of targeted-standard areas hit; None when none or no
                                layer
``steep_disturbed_sqft``        disturbance on slopes at or above the threshold; NaN without DEM
``steep_uncovered_sqft``        disturbance the DEM does not cover (off it, or nodata)
``has_waters``, ``has_targeted``, ``has_dem``   bool, the same on every row
``repaired``                    bool, the site's geometry was repaired
==============================  ===========================================================
"""

from __future__ import annotations

__all__ = ["APPLICABILITY", "PERMIT", "applicability", "decide", "permit_decision"]

import json
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from esc_gis.units import SQFT_PER_ACRE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from esc_gis.profile import Profile

#: Values of the ``applicability`` column.
APPLICABILITY = (
    "applies", "outside_jurisdiction", "excluded_state_agency", "exempt_agricultural", "exempt_silviculture",
)  # fmt: skip
#: Values of the ``permit`` column.
PERMIT = ("required", "not_required", "not_applicable")


def applicability(
    jurisdiction: np.ndarray, activity: np.ndarray, state_agency: np.ndarray
) -> np.ndarray:
    """Decide whether the article applies to each site.

    Parameters
    ----------
    jurisdiction : numpy.ndarray of str
        ``inside``, ``partial`` or ``outside``.
    activity : numpy.ndarray of str
    state_agency : numpy.ndarray of bool

    Returns
    -------
    numpy.ndarray of str
        One of :data:`APPLICABILITY`, tested in that order of precedence: jurisdiction
        first (§ 540-4B), then the state-agency exclusion (§ 540-4C), then the agricultural
        and silviculture exemptions (§ 540-4A(2)). An agricultural *production* area is not
        exempt (§ 540-5).

    Examples
    --------
    >>> applicability(np.array(["inside", "outside"]), np.array(["silviculture", "construction"]),
    ...               np.array([False, False])).tolist()
    ['exempt_silviculture', 'outside_jurisdiction']
    """
    return np.select(
        [
            jurisdiction == "outside",
            state_agency.astype(bool),
            activity == "agricultural_activity",
            activity == "silviculture",
        ],
        ["outside_jurisdiction", "excluded_state_agency", "exempt_agricultural", "exempt_silviculture"],
        default="applies",
    ).astype(object)


def permit_decision(
    applies: np.ndarray, plan_sqft: np.ndarray, npdes_exempt: np.ndarray, profile: Profile
) -> dict[str, np.ndarray]:
    """Decide the permit, the standards and the sediment standard for each site.

    Parameters
    ----------
    applies : numpy.ndarray of bool
        The article applies (see :func:`applicability`).
    plan_sqft : numpy.ndarray of float
        Disturbance inside the Village over the whole common plan, unrounded.
    npdes_exempt : numpy.ndarray of bool
    profile : Profile

    Returns
    -------
    dict of numpy.ndarray
        ``permit``, ``standards``, ``sediment_standard`` and ``npdes_small`` (the
        § 540-4A(3) exemption took effect).

    Notes
    -----
    § 540-4A(1)(a): 4,000 sq ft or more needs a permit, and § 540-7B, 8 and 9 apply.
    § 540-4A(1)(b): under 4,000 sq ft, no permit; § 540-7A applies.
    § 540-4A(3): an NPDES-exempt site under 1 acre follows § 540-7A only.
    § 540-7B(3)(b): 1 acre or more, the sediment performance standard applies.
    """
    permit_sqft = profile.area_sqft("thresholds.permit_area")
    acre_sqft = profile.area_sqft("thresholds.npdes_exempt_area")
    sediment_sqft = profile.area_sqft("thresholds.sediment_area")
    npdes_small = applies & npdes_exempt.astype(bool) & (plan_sqft < acre_sqft)
    required = applies & ~npdes_small & (plan_sqft >= permit_sqft)
    permit = np.where(~applies, "not_applicable", np.where(required, "required", "not_required"))
    standards = np.where(~applies, "", np.where(required, "540-7B", "540-7A"))
    sediment = required & (plan_sqft >= sediment_sqft)
    return {
        "permit": permit.astype(object),
        "standards": standards.astype(object),
        "sediment_standard": sediment,
        "npdes_small": npdes_small,
    }


def _sqft(x: float) -> str:
    return f"{x:,.1f} sq ft"


def _acres(x: float) -> str:
    return f"{x / SQFT_PER_ACRE:,.3f} acres"


class _Findings:
    """Accumulates JSON findings per row; each kind is worded only for the rows it hits."""

    def __init__(self, n: int) -> None:
        self.rows: list[list[str]] = [[] for _ in range(n)]

    def add(self, mask: np.ndarray, code: str, section: str,
            message: str | Callable[[int], str]) -> None:  # fmt: skip
        head = f'{{"code": {json.dumps(code)}, "section": {json.dumps(section)}, "message": '
        idx: list[int] = np.flatnonzero(mask).tolist()
        if isinstance(message, str):
            item = head + json.dumps(message, ensure_ascii=False) + "}"
            for i in idx:
                self.rows[i].append(item)
        else:
            for i in idx:
                self.rows[i].append(head + json.dumps(message(i), ensure_ascii=False) + "}")

    def json(self) -> list[str]:
        return ["[" + ", ".join(r) + "]" for r in self.rows]


def _col(m: pd.DataFrame, name: str) -> np.ndarray:
    return m[name].to_numpy()


def _join(values: Iterable[str]) -> str:
    return ", ".join(values)


def decide(m: pd.DataFrame, profile: Profile) -> pd.DataFrame:
    """Apply the ordinance to measured sites.

    Parameters
    ----------
    m : pandas.DataFrame
        Measurements, one row per site (columns in the module docstring).
    profile : Profile

    Returns
    -------
    pandas.DataFrame
        ``applicability``, ``permit``, ``permit_may_be_required``, ``standards``,
        ``sediment_standard`` and ``findings`` (a JSON list of {code, section, message}),
        indexed like ``m``.
    """
    n = len(m)
    e = profile.entry
    permit_sqft = profile.area_sqft("thresholds.permit_area")
    acre_sqft = profile.area_sqft("thresholds.sediment_area")
    near_frac = float(e("policy.near_threshold").value) / 100.0  # type: ignore[arg-type]

    jur = _col(m, "jurisdiction")
    activity = _col(m, "activity")
    agency = _col(m, "state_agency").astype(bool)
    npdes = _col(m, "npdes_exempt").astype(bool)
    dist = _col(m, "disturbed_sqft").astype(float)
    dist_in = _col(m, "disturbed_in_village_sqft").astype(float)
    parts = _col(m, "disturbed_parts_sqft").astype(float)
    plan = _col(m, "plan_disturbed_sqft").astype(float)
    plan_id = _col(m, "plan_id")
    plan_n = _col(m, "plan_site_count").astype(int)
    prot = _col(m, "protective_disturbed_sqft").astype(float)
    in_water = _col(m, "in_water_sqft").astype(float)
    near_ft = _col(m, "nearest_water_ft").astype(float)
    near_name = _col(m, "nearest_water")
    prot_names = _col(m, "protective_waters")
    targeted = _col(m, "targeted_areas")
    has_waters = bool(m["has_waters"].iloc[0]) if n else False
    has_targeted = bool(m["has_targeted"].iloc[0]) if n else False
    has_dem = bool(m["has_dem"].iloc[0]) if n else False

    appl = applicability(jur, activity, agency)
    applies = appl == "applies"
    d = permit_decision(applies, plan, npdes, profile)
    permit, npdes_small = d["permit"], d["npdes_small"]
    required = permit == "required"
    not_required = permit == "not_required"

    # § 540-4A(1)(c): under 4,000 sq ft the authority may still require a permit, to protect
    # waters of the state or meet targeted performance standards. Not for § 540-4A(3) sites,
    # to which § 540-8 does not apply.
    in_prot = np.nan_to_num(prot) > 0
    in_wat = np.nan_to_num(in_water) > 0
    in_targ = pd.notna(targeted) & (targeted != "")
    may_be = not_required & ~npdes_small & (in_prot | in_wat | in_targ)

    f = _Findings(n)
    s = e("thresholds.permit_area").cite
    # Jurisdiction (§ 540-4B).
    f.add(jur == "inside", "jurisdiction_inside", "§ 540-4B",
          "The disturbance lies inside the Village of Winneconne: the article applies to it.")
    f.add(jur == "partial", "jurisdiction_partial", "§ 540-4B",
          lambda i: f"{_sqft(dist[i] - dist_in[i])} of the {_sqft(dist[i])} of disturbance lies outside the "
                    f"Village boundary; only the {_sqft(dist_in[i])} inside is measured against the thresholds.")
    f.add(jur == "outside", "outside_jurisdiction", "§ 540-4B",
          "No disturbance lies inside the Village boundary: this article does not apply "
          "(county or town rules may).")
    # Exclusions and exemptions (§ 540-4C, § 540-4A(2)).
    f.add(appl == "excluded_state_agency", "state_agency", "§ 540-4C",
          "Conducted by a state agency: this article does not apply (the state plan or an MOU under "
          "§ 281.33(2), Wis. Stats., governs).")
    f.add(appl == "exempt_agricultural", "agricultural_activity_exempt", "§ 540-4A(2)(a)",
          "Nonpoint discharges from an agricultural activity area are not subject to this article.")
    f.add((activity == "agricultural_production") & (jur != "outside") & ~agency,
          "agricultural_production_not_exempt", "§ 540-5 AGRICULTURAL PRODUCTION AREA; § 540-4A(2)(a)",
          "An agricultural production area (buildings, driveways, feed and manure storage, other impervious "
          "surfaces) is not part of the exempt agricultural activity area: the article applies.")
    f.add(appl == "exempt_silviculture", "silviculture_exempt", "§ 540-4A(2)(b); § 540-5 SILVICULTURE ACTIVITIES",
          "Nonpoint discharges from silviculture activities are not subject to this article; clearing and "
          "grubbing for construction is not silviculture.")
    # What is measured: union, common plan.
    f.add(applies, "disturbed_area", "§ 540-5 LAND-DISTURBING CONSTRUCTION ACTIVITY",
          lambda i: f"{_sqft(dist_in[i])} ({_acres(dist_in[i])}) of land-disturbing construction activity "
                    "inside the Village.")
    f.add(parts > dist * (1 + 1e-9) + 1e-6, "overlaps_counted_once", "§ 540-5 LAND-DISTURBING CONSTRUCTION ACTIVITY",
          lambda i: f"Disturbed-limit polygons overlap; the area is their union, {_sqft(dist[i])}, "
                    f"not their sum, {_sqft(parts[i])}.")
    has_plan = pd.notna(plan_id)
    f.add(has_plan & (jur != "outside"), "common_plan",
          "§ 540-5 CONSTRUCTION SITE; § 540-5 COMMON PLAN OF DEVELOPMENT OR SALE",
          lambda i: f"Part of common plan {plan_id[i]!r} ({plan_n[i]} site{'s' if plan_n[i] != 1 else ''}): the "
                    f"construction site includes the whole plan, {_sqft(plan[i])} of disturbance inside the "
                    "Village, and the thresholds apply to that total.")
    # Permit decision (§ 540-4A(1), § 540-4A(3)).
    f.add(required, "permit_required", s,
          lambda i: f"{_sqft(plan[i])} is 4,000 sq ft or more: a permit is required; the § 540-7B performance "
                    "standards, § 540-8 permit requirements and § 540-9 plan requirements apply.")
    f.add(not_required & ~npdes_small, "permit_not_required", "§ 540-4A(1)(b)",
          lambda i: f"{_sqft(plan[i])} is under 4,000 sq ft: no permit is required; the § 540-7A performance "
                    "standards apply.")
    f.add(npdes_small, "npdes_exempt_under_1_acre", e("thresholds.npdes_exempt_area").cite,
          lambda i: f"Exempt by federal law from an NPDES permit and under 1 acre ({_sqft(plan[i])}): the § 540-7A "
                    "performance standards apply; § 540-7B, § 540-8 and § 540-9 do not.")
    f.add(applies & npdes & ~npdes_small, "npdes_exemption_not_applicable", e("thresholds.npdes_exempt_area").cite,
          lambda i: f"Marked NPDES-exempt, but {_acres(plan[i])} is 1 acre or more: § 540-4A(3) does not apply.")
    def _near(thr: float) -> Callable[[int], str]:
        return lambda i: (f"{_sqft(plan[i])} is within {near_frac:.0%} of the {_sqft(thr)} threshold: "
                          "check the digitised limits, a small error flips the decision.")  # fmt: skip

    for thr, entry in ((permit_sqft, e("thresholds.permit_area")), (acre_sqft, e("thresholds.sediment_area"))):
        f.add(applies & (np.abs(plan - thr) <= near_frac * thr), "near_threshold", entry.cite, _near(thr))
    # Standards (§ 540-7B(3)(b), § 540-8I, § 540-9C).
    f.add(d["sediment_standard"], "sediment_standard", e("thresholds.sediment_area").cite,
          lambda i: f"{_acres(plan[i])} is 1 acre or more: BMPs must by design discharge no more than "
                    f"{e('thresholds.sediment_load').value} tons per acre per year of sediment, or the maximum "
                    "extent practicable (§ 540-7B(3)(b)[1]).")
    f.add(required & ~d["sediment_standard"], "less_stringent_possible", e("thresholds.less_stringent_area").cite,
          "A permitted site under 1 acre: the administering authority may prescribe less stringent requirements.")
    # Waters and protective areas.
    live = jur != "outside"
    if has_waters:
        f.add(live & in_prot, "protective_area", "§ 540-7B(3)(c)[1]; § 540-5 PROTECTIVE AREA",
              lambda i: f"{_sqft(prot[i])} of the disturbance lies in the protective area of {prot_names[i]}: "
                        "maintain existing vegetation next to surface waters.")
        from_line = (_col(m, "protective_from_centreline").astype(bool) if "protective_from_centreline" in m
                     else np.zeros(n, bool))  # fmt: skip
        f.add(live & in_prot & from_line, "protective_area_from_centreline", "§ 540-5 PROTECTIVE AREA",
              "Part of this protective area is measured from a stream centreline, which approximates the top of "
              "the channel: the channel itself counts as strip, and the strip ends half a channel width short "
              "of its true outer edge. A channel width or the surveyed top of bank gives the exact strip.")
        f.add(live & in_wat, "in_water", "§ 540-7A(3); § 540-7B(4)",
              lambda i: f"{_sqft(in_water[i])} of the disturbance lies inside waters of the state; BMPs must treat "
                        "runoff before it enters them (placement in water only where the project needs it).")
        f.add(live & ~in_prot & ~in_wat & np.isfinite(near_ft), "nearest_water", "§ 540-7A(2)(c)",
              lambda i: f"Nearest water of the state: {near_name[i]}, {near_ft[i]:,.0f} ft from the disturbance.")
    else:
        f.add(np.ones(n, bool), "no_waters_layer", "§ 540-5 PROTECTIVE AREA",
              "The layer set has no waters layer: protective areas and distances to water were not measured.")
    if has_targeted:
        f.add(live & in_targ, "targeted_area", "§ 540-7B(6)",
              lambda i: f"Inside targeted performance standard area {targeted[i]}: stricter numeric requirements "
                        "may apply whatever the size.")

    def _reasons(i: int) -> str:
        r = []
        if in_prot[i]:
            r.append("disturbance in a protective area (§ 540-7B(3)(c)[1])")
        if in_wat[i]:
            r.append("disturbance in waters of the state (§ 540-7A(3))")
        if in_targ[i]:
            r.append(f"a targeted performance standard area, {targeted[i]} (§ 540-7B(6))")
        return ("Under 4,000 sq ft, but the administering authority may require a permit to protect waters of the "
                "state or meet targeted performance standards: " + _join(r) + ".")  # fmt: skip

    f.add(may_be, "permit_may_be_required", "§ 540-4A(1)(c)", _reasons)
    # Slopes (§ 540-7B(3)(c)[3]), Horn's method as gdaldem computes it.
    steep = e("thresholds.steep_slope")
    f.add(live & np.full(n, not has_dem), "steep_not_measured", steep.cite,
          f"No DEM in the layer set: disturbance on slopes of {steep.value:g} % or more was not measured.")
    if has_dem:
        st = _col(m, "steep_disturbed_sqft").astype(float)
        unc = _col(m, "steep_uncovered_sqft").astype(float)
        f.add(live & (st > 0), "steep_slopes", steep.cite,
              lambda i: f"{_sqft(st[i])} ({st[i] / dist_in[i]:.1%}) of the disturbance is on slopes of "
                        f"{steep.value:g} % or more (Horn, as gdaldem): minimise land disturbance there.")
        f.add(live & (st == 0) & (dist_in > 0), "no_steep_slopes", steep.cite,
              f"None of the disturbance is on slopes of {steep.value:g} % or more.")
        f.add(live & (unc > 1.0), "dem_not_covering", steep.cite,
              lambda i: f"{_sqft(unc[i])} ({unc[i] / dist_in[i]:.1%}) of the disturbance is off the DEM or where "
                        "its slope is undefined (nodata): the steep area counts only the covered part.")
    # Input quality.
    f.add(_col(m, "repaired").astype(bool), "geometry_repaired", "toolkit policy",
          "The input polygon was invalid and was repaired (shapely make_valid) before measuring.")
    out_site = _col(m, "disturbed_outside_site_sqft").astype(float)
    f.add(out_site > 1.0, "disturbed_outside_site", "§ 540-9A(3)",
          lambda i: f"{_sqft(out_site[i])} of the disturbed limits lie outside the site polygon.")
    f.add(_col(m, "disturbed_count").astype(int) == 0, "no_disturbed_limits", "§ 540-4A(1)(b)",
          "No disturbed-limit polygon names this site: its disturbed area is 0.")

    return pd.DataFrame(
        {
            "applicability": appl,
            "permit": permit,
            "permit_may_be_required": may_be,
            "standards": d["standards"],
            "sediment_standard": d["sediment_standard"],
            "findings": f.json(),
        },
        index=m.index,
    )
