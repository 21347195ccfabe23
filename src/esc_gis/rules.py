"""The ordinance as code: pure functions from measurements to decisions and findings.

Every function here takes :class:`Measurements` (numpy arrays, one entry per site) and the
:class:`~esc_gis.profile.Profile`, and returns decisions; none reads files, transforms
coordinates or measures geometry. Thresholds are compared on unrounded values. The
wording, citation and basis of every finding are the profile's (``[findings.<code>]``):
this module decides *which* findings a site gets and with which values, one function per
section of the article:

=============================  =================================================================
:func:`applicability`          § 540-4B jurisdiction, § 540-4C state agencies, § 540-4A(2)
                               agricultural and silviculture exemptions
:func:`decision_area`          § 540-5 CONSTRUCTION SITE / COMMON PLAN, and the reading of
                               § 540-4B for a site partly inside (profile ``partial_jurisdiction``)
:func:`permit_decision`        § 540-4A(1)(a)/(b) and the profile's other permit triggers,
                               § 540-4A(3) NPDES-exempt sites, § 540-7B(3)(b) sediment standard
:func:`sediment_standard_reaches`  § 540-7B(3)(b) "one acre or more" (and § 540-8I, § 540-9C under
                               it): the acre tests screening, soil loss and plan review share
:func:`may_require_permit`     § 540-4A(1)(c)
:func:`decide`                 all of them, with the findings of § 540-7 for the sites those
                               duties apply to (§ 540-7B only to permitted sites)
=============================  =================================================================
"""

from __future__ import annotations

__all__ = [
    "APPLICABILITY",
    "DEPRECATED_MEASUREMENTS",
    "NOT_APPLICABLE_FINDING",
    "NOT_MEASURED",
    "PERMIT",
    "Decision",
    "Measurements",
    "applicability",
    "counts_toward_plan",
    "decide",
    "decision_area",
    "determined_decision",
    "extraterritorial_ft",
    "may_require_permit",
    "permit_decision",
    "run_findings",
    "screening_reasons",
    "sediment_standard_reaches",
]

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from esc_gis.findings import quantity_text
from esc_gis.profile import Profile, Trigger
from esc_gis.units import SQFT_PER_ACRE

#: Values of the ``applicability`` column.
APPLICABILITY = (
    "applies",
    "outside_jurisdiction",
    "excluded_state_agency",
    "exempt_agricultural",
    "exempt_silviculture",
)
#: The screening finding that says why the article does not apply, for each such ``applicability``
#: (§ 540-4B, § 540-4C, § 540-4A(2)); commands that take the screening's answer quote it.
NOT_APPLICABLE_FINDING = {
    "outside_jurisdiction": "outside_jurisdiction",
    "excluded_state_agency": "state_agency",
    "exempt_agricultural": "agricultural_activity_exempt",
    "exempt_silviculture": "silviculture_exempt",
}


def screening_reasons(finding: str) -> tuple[str, ...]:
    """Return the screening findings that may give the reason ``NOT_APPLICABLE_FINDING`` names.

    A site outside the boundary within § 540-5's extraterritorial area is told "does not apply" as a
    reading (``outside_jurisdiction_extraterritorial``, basis interpretation), not the ordinance's
    ``outside_jurisdiction``: a command quoting the screening's reason takes either, with its basis.

    Examples
    --------
    >>> screening_reasons("outside_jurisdiction")
    ('outside_jurisdiction', 'outside_jurisdiction_extraterritorial')
    >>> screening_reasons("state_agency")
    ('state_agency',)
    """
    if finding == "outside_jurisdiction":
        return (finding, "outside_jurisdiction_extraterritorial")
    return (finding,)


#: Values of the ``permit`` column.
PERMIT = ("required", "not_required", "not_applicable")
#: Activities § 540-4A(2) exempts: not land-disturbing construction activity under the article.
EXEMPT_ACTIVITIES = ("agricultural_activity", "silviculture")
#: Measurement names that said "village" under every profile (a Town's too), and their neutral
#: names. :meth:`Measurements.of` and :meth:`Measurements.from_frame` still take the old ones,
#: and the attributes still read under them, for one release (deprecated).
DEPRECATED_MEASUREMENTS = {
    "disturbed_in_village_sqft": "disturbed_in_jurisdiction_sqft",
    "plan_in_village_sqft": "plan_in_jurisdiction_sqft",
}


@dataclass(frozen=True)
class Measurements:
    """What screening measured, one entry per site (all arrays the same length).

    Areas are square feet, distances feet, unrounded. NaN marks a measurement that was not
    made (no waters layer, no DEM). ``plan_*`` are over the site's common plan (the site
    alone when it has none), leaving out § 540-4A(2)-exempt activity.

    Build one with :meth:`of` (defaults for whatever is not given) or :meth:`from_frame`.
    """

    jurisdiction: np.ndarray  # inside, partial, outside (§ 540-4B)
    activity: np.ndarray
    state_agency: np.ndarray
    npdes_exempt: np.ndarray
    plan_id: np.ndarray  # object, None without a plan
    disturbed_sqft: np.ndarray  # union of the site's disturbed limits
    disturbed_in_jurisdiction_sqft: np.ndarray  # the part inside the profile's jurisdiction
    disturbed_parts_sqft: np.ndarray  # sum before the union
    disturbed_outside_site_sqft: np.ndarray
    disturbed_count: np.ndarray
    plan_disturbed_sqft: np.ndarray  # union over the plan, whole disturbance
    plan_in_jurisdiction_sqft: np.ndarray  # union over the plan, the parts inside
    plan_site_count: np.ndarray
    plan_excluded_sqft: np.ndarray  # exempt activity in the plan, not counted
    plan_outside_sites: np.ndarray  # object: ids of the plan's sites partly or wholly outside ("S3, S4"); None
    protective_disturbed_sqft: np.ndarray
    in_water_sqft: np.ndarray
    nearest_water_ft: np.ndarray
    nearest_water: np.ndarray
    protective_waters: np.ndarray
    protective_from_centreline: np.ndarray
    channel_unverified: np.ndarray  # labels of concentrated-flow channels taken as classed; None
    targeted_areas: np.ndarray
    steep_disturbed_sqft: np.ndarray
    steep_uncovered_sqft: np.ndarray
    repaired: np.ndarray
    has_waters: bool = False
    has_targeted: bool = False
    has_dem: bool = False
    #: How far (ft) a site outside the boundary lies from it (NaN inside, or not measured): the
    #: extraterritorial area of § 540-5 turns on it (``thresholds.extraterritorial``).
    boundary_gap_ft: np.ndarray | None = None
    #: Site fields the profile's other permit triggers read (``fill_cuyd``, ``utility_ft``, ...).
    trigger_fields: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.jurisdiction)

    @property
    def disturbed_in_village_sqft(self) -> np.ndarray:
        """Deprecated name of :attr:`disturbed_in_jurisdiction_sqft`, kept for one release."""
        return self.disturbed_in_jurisdiction_sqft

    @property
    def plan_in_village_sqft(self) -> np.ndarray:
        """Deprecated name of :attr:`plan_in_jurisdiction_sqft`, kept for one release."""
        return self.plan_in_jurisdiction_sqft

    @classmethod
    def of(cls, n: int, **values: Any) -> Measurements:
        """Build measurements for ``n`` sites; anything not given takes a neutral default.

        Scalars are broadcast. Without ``plan_disturbed_sqft`` the plan is the site alone.

        Examples
        --------
        >>> m = Measurements.of(2, disturbed_sqft=[3999.0, 4000.0])
        >>> m.plan_disturbed_sqft.tolist(), m.jurisdiction.tolist()
        ([3999.0, 4000.0], ['inside', 'inside'])
        """
        nan = np.full(n, np.nan)
        none = np.full(n, None, dtype=object)
        dist = np.broadcast_to(np.asarray(values.get("disturbed_sqft", 0.0), float), (n,)).copy()
        # The names before the neutral ones (``*_in_village_sqft``) are still taken, for one release.
        for old, new in DEPRECATED_MEASUREMENTS.items():
            if old in values:
                values.setdefault(new, values.pop(old))
        inside = values.get("disturbed_in_jurisdiction_sqft", dist)
        # The plan inside, unless given: the plan less the site's own part outside (a plan given
        # larger than the site is not taken to lie across the Village line by default).
        whole = np.broadcast_to(np.asarray(values.get("plan_disturbed_sqft", dist), float), (n,))
        plan_inside = whole - (dist - np.broadcast_to(np.asarray(inside, float), (n,)))
        defaults: dict[str, Any] = {
            "jurisdiction": "inside",
            "activity": "construction",
            "state_agency": False,
            "npdes_exempt": False,
            "plan_id": none,
            "disturbed_sqft": dist,
            "disturbed_in_jurisdiction_sqft": inside,
            "disturbed_parts_sqft": dist,
            "disturbed_outside_site_sqft": 0.0,
            "disturbed_count": 1,
            "plan_disturbed_sqft": dist,
            "plan_in_jurisdiction_sqft": plan_inside,
            "plan_site_count": 1,
            "plan_excluded_sqft": 0.0,
            "plan_outside_sites": none,
            "protective_disturbed_sqft": nan,
            "in_water_sqft": nan,
            "nearest_water_ft": nan,
            "nearest_water": none,
            "protective_waters": none,
            "protective_from_centreline": False,
            "channel_unverified": none,
            "targeted_areas": none,
            "steep_disturbed_sqft": nan,
            "steep_uncovered_sqft": nan,
            "repaired": False,
            "boundary_gap_ft": nan,
        }
        kinds = {
            "jurisdiction": object,
            "activity": object,
            "plan_id": object,
            "plan_outside_sites": object,
            "nearest_water": object,
            "protective_waters": object,
            "channel_unverified": object,
            "targeted_areas": object,
            "state_agency": bool,
            "npdes_exempt": bool,
            "protective_from_centreline": bool,
            "repaired": bool,
            "disturbed_count": int,
            "plan_site_count": int,
        }
        arrays: dict[str, Any] = {}
        for name, default in defaults.items():
            v = values.get(name, default)
            dtype = kinds.get(name, float)
            arrays[name] = np.broadcast_to(np.asarray(v, dtype=dtype), (n,)).copy()
        flags: dict[str, Any] = {k: bool(values.get(k)) for k in ("has_waters", "has_targeted", "has_dem")}
        triggers = {k: np.asarray(v) for k, v in (values.get("trigger_fields") or {}).items()}
        return cls(**arrays, **flags, trigger_fields=triggers)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, **flags: Any) -> Measurements:
        """Build measurements from a frame with the attribute names as columns."""
        names = {f.name for f in fields(cls)} - {"has_waters", "has_targeted", "has_dem", "trigger_fields"}
        # A frame written before the neutral names (a screening output) still reads.
        names |= DEPRECATED_MEASUREMENTS.keys()
        values: dict[str, Any] = {c: df[c].to_numpy() for c in names if c in df.columns}
        return cls.of(len(df), **values, **flags)


@dataclass(frozen=True)
class Decision:
    """The ordinance's answer for each site."""

    applicability: np.ndarray
    permit: np.ndarray
    permit_may_be_required: np.ndarray
    standards: np.ndarray
    sediment_standard: np.ndarray
    #: The area the thresholds were applied to (whole plan, by the profile's reading).
    decision_sqft: np.ndarray
    findings: list[str]
    #: Findings about the whole run, not a site (an absent layer): see :func:`run_findings`.
    run_findings: list[dict[str, str]] = field(default_factory=list)

    def frame(self, index: Any = None) -> pd.DataFrame:
        """Return the decision as the screening output's columns (``plan_disturbed_sqft`` = the decision's area)."""
        return pd.DataFrame(
            {
                "applicability": self.applicability,
                "permit": self.permit,
                "permit_may_be_required": self.permit_may_be_required,
                "standards": self.standards,
                "sediment_standard": self.sediment_standard,
                "plan_disturbed_sqft": self.decision_sqft,
                "findings": self.findings,
            },
            index=index,
        )


# --- § 540-4: applicability --------------------------------------------------------------------


def applicability(jurisdiction: np.ndarray, activity: np.ndarray, state_agency: np.ndarray) -> np.ndarray:
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
            np.asarray(state_agency).astype(bool),
            activity == "agricultural_activity",
            activity == "silviculture",
        ],
        ["outside_jurisdiction", "excluded_state_agency", "exempt_agricultural", "exempt_silviculture"],
        default="applies",
    ).astype(object)


def counts_toward_plan(activity: np.ndarray) -> np.ndarray:
    """Which sites' disturbance counts toward a common plan's total.

    § 540-4A(2) exempts agricultural activity areas and silviculture: their area is not
    land-disturbing construction activity under the article, so it never adds to a plan.
    """
    return ~np.isin(np.asarray(activity, dtype=object), EXEMPT_ACTIVITIES)


def decision_area(m: Measurements, profile: Profile) -> np.ndarray:
    """Return the disturbed area each site is decided on (§ 540-5 CONSTRUCTION SITE, § 540-4B).

    The whole common plan's disturbance (the site's own without a plan). For a site partly
    inside the jurisdiction § 540-4B is silent; by default (``partial_jurisdiction =
    "whole"``, an interpretation) the whole disturbance counts; ``"inside_only"`` counts
    only the part inside.
    """
    if profile.partial_jurisdiction == "inside_only":
        return np.asarray(m.plan_in_jurisdiction_sqft, float)
    return np.asarray(m.plan_disturbed_sqft, float)


def plan_outside_sqft(m: Measurements, profile: Profile) -> np.ndarray:
    """Return the part of each site's common plan that lies outside the jurisdiction (sq ft; 0 without a plan).

    § 540-5 CONSTRUCTION SITE includes "areas that are part of a larger common plan of
    development", and § 540-4B reaches only "construction sites located within the boundaries
    and jurisdiction of the Village": a plan whose lots lie on both sides of the line is the
    silence the profile's ``partial_jurisdiction`` reading fills, as it does for one site partly
    outside (:func:`decision_area`). A part outside no larger than the profile's boundary sliver
    (``policy.sliver``, the same line digitised twice) is none, as it is for a site's jurisdiction.
    """
    whole = np.asarray(m.plan_disturbed_sqft, float)
    outside = np.where(pd.notna(m.plan_id), whole - np.asarray(m.plan_in_jurisdiction_sqft, float), 0.0)
    return np.where(outside > profile.area_sqft("policy.sliver"), outside, 0.0)


def sediment_standard_reaches(area_sqft: Any, profile: Profile) -> np.ndarray:
    """Which areas the sediment performance standard reaches (§ 540-7B(3)(b)).

    § 540-7B(3)(b): "For sites with one acre or more of land-disturbing construction
    activity, the plan shall meet the following sediment performance standards". ``area_sqft``
    is the construction site's disturbance, which § 540-5 (CONSTRUCTION SITE) makes the whole
    common plan's when the site is part of one: pass the plan's total (:func:`decision_area`).
    Under it, § 540-8I and § 540-9C let the authority prescribe less stringent requirements
    (``thresholds.less_stringent_area``, the same acre in the shipped profile).

    Screening (:func:`permit_decision`), ``esc-gis soil-loss`` and ``esc-gis review`` all
    decide the standard with this one test, on unrounded areas ("or more": equal reaches).

    Parameters
    ----------
    area_sqft : float or array_like of float
    profile : Profile
        Gives ``thresholds.sediment_area``.

    Returns
    -------
    numpy.ndarray of bool
        The shape of ``area_sqft``; NaN never reaches.

    Raises
    ------
    ProfileError
        If the profile lacks ``thresholds.sediment_area``.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> sediment_standard_reaches([43559.9, 43560.0], load_profile()).tolist()
    [False, True]
    """
    return np.asarray(np.asarray(area_sqft, float) >= profile.area_sqft("thresholds.sediment_area"), dtype=bool)


# --- § 540-4A(1), (3), § 540-7B(3)(b): the permit ------------------------------------------------


def _trigger_met(t: Trigger, m: Measurements, area_sqft: np.ndarray) -> np.ndarray:
    if t.kind == "disturbed_area":
        return area_sqft >= t.threshold()
    if t.kind == "steep_disturbed_area":
        return np.nan_to_num(m.steep_disturbed_sqft) >= t.threshold()
    raw = m.trigger_fields.get(t.field)
    if raw is None:
        return np.zeros(len(m), bool)
    if t.kind == "land_division":
        return np.asarray(raw).astype(bool)
    return np.nan_to_num(np.asarray(raw, float)) >= t.threshold()


def permit_decision(
    applies: np.ndarray,
    area_sqft: np.ndarray,
    npdes_exempt: np.ndarray,
    profile: Profile,
    m: Measurements | None = None,
) -> dict[str, Any]:
    """Decide the permit, the standards and the sediment standard for each site.

    Parameters
    ----------
    applies : numpy.ndarray of bool
        The article applies (see :func:`applicability`).
    area_sqft : numpy.ndarray of float
        The disturbance the thresholds apply to (see :func:`decision_area`), unrounded.
    npdes_exempt : numpy.ndarray of bool
    profile : Profile
    m : Measurements, optional
        For the profile's triggers other than the disturbed area (fill, utility length,
        ...); without it only area triggers count.

    Returns
    -------
    dict
        ``permit``, ``standards``, ``sediment_standard``, ``npdes_small`` (the § 540-4A(3)
        exemption took effect) and ``triggers`` (trigger name -> bool array of sites it
        made need a permit).

    Notes
    -----
    § 540-4A(1)(a): at or over the permit area a permit is required, and § 540-7B, 8 and 9
    apply. § 540-4A(1)(b): under it, no permit; § 540-7A applies. § 540-4A(3): an
    NPDES-exempt site under 1 acre follows § 540-7A only. § 540-7B(3)(b): at 1 acre or more
    the sediment performance standard applies.
    """
    applies = np.asarray(applies, bool)
    area_sqft = np.asarray(area_sqft, float)
    mm = m if m is not None else Measurements.of(len(area_sqft), disturbed_sqft=area_sqft)
    acre_sqft = profile.area_sqft("thresholds.npdes_exempt_area")
    npdes_small = applies & np.asarray(npdes_exempt).astype(bool) & (area_sqft < acre_sqft)
    met = {t.name: applies & ~npdes_small & _trigger_met(t, mm, area_sqft) for t in profile.triggers}
    required = np.logical_or.reduce(list(met.values())) if met else np.zeros(len(applies), bool)
    permit = np.where(~applies, "not_applicable", np.where(required, "required", "not_required"))
    standards = np.where(~applies, "", np.where(required, profile.standards_permitted, profile.standards_unpermitted))
    return {
        "permit": permit.astype(object),
        "standards": standards.astype(object),
        "sediment_standard": required & sediment_standard_reaches(area_sqft, profile),
        "npdes_small": npdes_small,
        "triggers": met,
    }


def may_require_permit(
    not_required: np.ndarray,
    npdes_small: np.ndarray,
    in_protective: np.ndarray,
    in_water: np.ndarray,
    in_targeted: np.ndarray,
) -> np.ndarray:
    """§ 540-4A(1)(c): under the permit threshold the authority may still require a permit.

    Flagged where the reasons the text names were found: waters of the state (disturbance
    in them or in their protective areas) or a targeted performance standard area. Not for
    § 540-4A(3) sites, to which § 540-8 does not apply.
    """
    return not_required & ~npdes_small & (in_protective | in_water | in_targeted)


def determined_decision(
    permit: str, standards: str, npdes_small: bool, determined: bool, profile: Profile
) -> tuple[str, str]:
    """§ 540-4A(1)(c): the permit decision and standards of a site once the authority's determination is known.

    "Notwithstanding the applicability requirements in § 540-4A(1)(a) and (b), a permit is
    required for a construction site with less than 4,000 square feet ... if the administering
    authority determines that permit coverage is needed"; then "the performance standards of
    § 540-7B, permit requirements of § 540-8, and plan requirements of § 540-9" apply. Only a
    site the screening decided ``not_required``, and not one § 540-4A(3) exempts (§ 540-4A(1)
    applies "unless the site is otherwise exempt under § 540-4A(2) or (3)"), is changed; every
    other decision stands as the screening took it. The one rule the registry, enforcement and
    plan review apply to a determination.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> p = load_profile()
    >>> determined_decision("not_required", p.standards_unpermitted, False, True, p)[0]
    'required'
    >>> determined_decision("not_required", "7A", True, True, p)
    ('not_required', '7A')
    >>> determined_decision("not_required", "7A", False, False, p)
    ('not_required', '7A')
    """
    if determined and permit == "not_required" and not npdes_small:
        return "required", profile.standards_permitted
    return permit, standards


# --- Findings ----------------------------------------------------------------------------------


class _Findings:
    """Accumulates JSON findings per row; each is rendered from the profile only for the rows it hits.

    Kept a finding at a time (the rows it hits and their texts), not a list per row: 100,000
    rows' lists and a Python append per row and finding were a tenth of a screening, and their
    garbage collection more. :meth:`json` puts each row's findings together in the order they
    were added, in Arrow.
    """

    def __init__(self, n: int, profile: Profile) -> None:
        self.n = n
        self.hits: list[np.ndarray] = []  # each finding's rows
        self.texts: list[str | list[str]] = []  # and its text: one for every row, or one a row
        self.profile = profile
        self.names = profile.names()

    def add(self, mask: np.ndarray, code: str, *, section: str | None = None, **columns: Any) -> None:
        """Add finding ``code`` to the rows of ``mask``; array values are taken per row.

        ``section`` overrides the declared one (a permit trigger cites its own).
        """
        t = self.profile.template(code)
        if section:
            t = replace(t, section=section)
        idx = np.flatnonzero(mask)
        if not len(idx):
            return
        head = t.json_head()
        # Only the names the message uses, and each per-row column as a list once: rendering
        # 100,000 rows stays a plain str.format per row.
        used = t.fields()
        per_row = {k: v[idx].tolist() for k, v in columns.items() if isinstance(v, np.ndarray) and k in used}
        fixed = {k: v for k, v in {**self.names, **columns}.items() if k in used and k not in per_row}
        if not per_row:
            self.hits.append(idx)
            self.texts.append(head + json.dumps(t.render(fixed).message, ensure_ascii=False) + "}")
            return
        t.render({**fixed, **{k: v[0] for k, v in per_row.items()}})  # a bad template fails here, with its name
        keys = list(per_row)
        positional = t.positional(fixed, keys)
        if positional is not None:
            # The rows' messages, their JSON and their items by C-level map: a third of the time
            # of a dictionary filled in a row at a time (1M rows carry about 2M findings).
            wrap = (head.replace("{", "{{").replace("}", "}}") + "{}}}").format
            texts = list(map(wrap, map(_encode, map(positional.format, *per_row.values()))))
        else:
            fmt, values = t.message.format_map, dict(fixed)
            texts = []
            for vals in zip(*per_row.values(), strict=True):
                values.update(zip(keys, vals, strict=True))
                texts.append(head + _encode(fmt(values)) + "}")
        self.hits.append(idx)
        self.texts.append(texts)

    def json(self) -> list[str]:
        """Return each row's findings as a JSON list, in the order they were added.

        The texts are sorted by row (stable: each row's in the order added) as references, not
        copies, and the rows holding ``k`` findings are written by one ``"[{}, ..., {}]".format``
        mapped over them, for each ``k``: no Python list per row, and one copy of the texts.
        """
        if not self.hits:
            return ["[]"] * self.n
        rows = np.concatenate(self.hits)
        texts = np.empty(len(rows), dtype=object)
        at = 0
        for h, t in zip(self.hits, self.texts, strict=True):
            texts[at : at + len(h)] = t  # a list a row, or one text for every row
            at += len(h)
        order = np.argsort(rows, kind="stable")
        texts = texts[order]
        counts = np.bincount(rows, minlength=self.n)
        starts = np.cumsum(counts) - counts
        out = np.full(self.n, "[]", dtype=object)
        for k in np.unique(counts[counts > 0]).tolist():
            where = np.flatnonzero(counts == k)
            first = starts[where]
            fmt = ("[" + ", ".join(["{}"] * k) + "]").format
            out[where] = list(map(fmt, *(texts[first + j] for j in range(k))))
        return out.tolist()


#: A message's JSON string: what ``json.dumps(message, ensure_ascii=False)`` gives, without its
#: Python-level dispatch (called once for each finding of each row).
_encode = json.encoder.encode_basestring


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    return np.where(whole > 0, part / np.where(whole > 0, whole, 1.0), 0.0)


def extraterritorial_ft(profile: Profile) -> float:
    """Return the reach (ft) of the extraterritorial area (§ 540-5), or -inf when the profile has none.

    § 540-5 EXTRATERRITORIAL: "The unincorporated area ... within 1.5 miles of a fourth-class city
    or Village". No rule of the article uses it: a site outside the boundary but within it gets
    "does not apply" as a reading, with the caveat (``outside_jurisdiction_extraterritorial``).
    A profile without ``thresholds.extraterritorial`` (a town has no such area) keeps the
    ordinance's ``outside_jurisdiction`` for every site outside.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> extraterritorial_ft(load_profile())
    7920.0
    """
    key = "thresholds.extraterritorial"
    if key not in profile.entries:
        return -math.inf
    return float(profile.entry(key).value)  # type: ignore[arg-type]


def _jurisdiction(f: _Findings, m: Measurements, profile: Profile) -> None:
    """§ 540-4B: where the disturbance lies; a partial site says which reading decided it.

    Outside, within the extraterritorial area (at its edge too: "within"), the article's
    "does not apply" is a reading (:func:`extraterritorial_ft`).
    """
    jur = m.jurisdiction
    f.add(jur == "inside", "jurisdiction_inside")
    partial = "jurisdiction_partial" if profile.partial_jurisdiction == "whole" else "jurisdiction_partial_inside_only"
    dist, inside = m.disturbed_sqft, m.disturbed_in_jurisdiction_sqft
    f.add(jur == "partial", partial, disturbed_sqft=dist, inside_sqft=inside, outside_sqft=dist - inside)
    gap = np.full(len(m), np.nan) if m.boundary_gap_ft is None else np.asarray(m.boundary_gap_ft, float)
    with np.errstate(invalid="ignore"):
        near = (jur == "outside") & (gap <= extraterritorial_ft(profile))
    f.add((jur == "outside") & ~near, "outside_jurisdiction")
    f.add(near, "outside_jurisdiction_extraterritorial", distance_ft=gap)


def _exemptions(f: _Findings, m: Measurements, appl: np.ndarray) -> None:
    """§ 540-4C, § 540-4A(2), § 540-5 AGRICULTURAL PRODUCTION AREA."""
    for value in ("excluded_state_agency", "exempt_agricultural", "exempt_silviculture"):
        f.add(appl == value, NOT_APPLICABLE_FINDING[value])
    f.add((m.activity == "agricultural_production") & (appl == "applies"), "agricultural_production_not_exempt")


def _disturbance(f: _Findings, m: Measurements, applies: np.ndarray, area: np.ndarray, profile: Profile) -> None:
    """§ 540-5: the union of the disturbed limits, added up over the common plan.

    A plan with lots on both sides of the Village line (:func:`plan_outside_sqft`) is decided by
    the profile's reading of § 540-4B, and its finding is that reading (basis
    ``interpretation``), naming the part outside and the sites there; only a plan wholly
    inside gets the ordinance's plain ``common_plan``.
    """
    dist = m.disturbed_sqft
    f.add(applies, "disturbed_area", disturbed_sqft=dist, disturbed_acres=dist / SQFT_PER_ACRE)
    f.add(
        m.disturbed_parts_sqft > dist * (1 + 1e-9) + 1e-6,
        "overlaps_counted_once",
        disturbed_sqft=dist,
        parts_sqft=m.disturbed_parts_sqft,
    )
    in_plan = pd.notna(m.plan_id) & applies
    n_sites = m.plan_site_count
    whole = np.asarray(m.plan_disturbed_sqft, float)
    outside = plan_outside_sqft(m, profile)
    across = in_plan & (outside > 0)
    # Text only where a site is named: most rows hold none, and are not walked one by one.
    sites = np.asarray(m.plan_outside_sites, dtype=object)
    named = np.full(len(sites), "?", dtype=object)
    given = np.flatnonzero(pd.notna(sites))
    named[given] = [s if isinstance(s, str) and s else "?" for s in sites[given].tolist()]
    plan: dict[str, Any] = {
        "plan_id": m.plan_id,
        "plan_sites": n_sites,
        "plan_sites_s": np.where(n_sites == 1, "", "s").astype(object),
        "plan_sqft": whole,
        "plan_acres": whole / SQFT_PER_ACRE,
        "inside_sqft": np.asarray(m.plan_in_jurisdiction_sqft, float),
        "outside_sqft": outside,
        "outside_sites": named,
    }
    f.add(in_plan & ~across, "common_plan", **plan)
    # The plan across the line, by the profile's reading: the whole plan, or (inside_only) the
    # part inside, which is then the area decided on (decision_area).
    reading = "common_plan_partial" if profile.partial_jurisdiction == "whole" else "common_plan_inside_only"
    f.add(across, reading, **plan)
    f.add(
        in_plan & (m.plan_excluded_sqft > 0),
        "agricultural_area_not_counted",
        plan_id=m.plan_id,
        excluded_sqft=m.plan_excluded_sqft,
    )


def _permit(
    f: _Findings, m: Measurements, profile: Profile, applies: np.ndarray, area: np.ndarray, d: dict[str, Any]
) -> None:
    """§ 540-4A(1)(a)/(b), § 540-4A(3), the profile's triggers, the near-threshold policy."""
    values: dict[str, Any] = {"plan_sqft": area, "plan_acres": area / SQFT_PER_ACRE}
    permit, npdes_small = d["permit"], d["npdes_small"]
    for t in profile.triggers:
        hit = d["triggers"][t.name]
        if t.kind == "disturbed_area":
            f.add(hit, t.finding, section=t.section, **values)
        else:
            measured = _trigger_values(t, m)
            f.add(hit, t.finding, section=t.section, trigger=t.label, measured=measured, threshold=_trigger_text(t))
    f.add((permit == "not_required") & ~npdes_small, "permit_not_required", **values)
    f.add(npdes_small, "npdes_exempt_under_1_acre", **values)
    f.add(applies & m.npdes_exempt & ~npdes_small, "npdes_exemption_not_applicable", **values)
    margin = float(profile.entry("policy.near_threshold").value or 0) / 100.0
    for key in ("thresholds.permit_area", "thresholds.sediment_area"):
        thr = profile.area_sqft(key)
        e = profile.entry(key)
        f.add(
            applies & (np.abs(area - thr) <= margin * thr),
            "near_threshold",
            threshold=quantity_text(float(e.value or 0), e.unit),
            margin_pct=margin * 100,
            **values,
        )


def _trigger_values(t: Trigger, m: Measurements) -> np.ndarray:
    raw = m.trigger_fields.get(t.field)
    if t.kind == "steep_disturbed_area":
        raw = m.steep_disturbed_sqft
    if raw is None:
        return np.full(len(m), "", dtype=object)
    if t.kind == "land_division":
        return np.full(len(m), t.label, dtype=object)
    unit = "sqft" if t.unit == "acres" else t.unit
    return np.array([quantity_text(float(v), unit) for v in np.nan_to_num(np.asarray(raw, float))], dtype=object)


def _trigger_text(t: Trigger) -> str:
    return quantity_text(float(t.value), t.unit) if t.value is not None else t.label


def _standards(f: _Findings, d: dict[str, Any], area: np.ndarray) -> None:
    """§ 540-7B(3)(b) sediment standard; § 540-8I, § 540-9C less stringent under 1 acre."""
    values: dict[str, Any] = {"plan_sqft": area, "plan_acres": area / SQFT_PER_ACRE}
    f.add(d["sediment_standard"], "sediment_standard", **values)
    f.add((d["permit"] == "required") & ~d["sediment_standard"], "less_stringent_possible", **values)


def _waters(f: _Findings, m: Measurements, permitted: np.ndarray, unpermitted: np.ndarray, may_be: np.ndarray) -> None:
    """Waters of the state: the § 540-7A or § 540-7B duty that applies to the site, no other.

    ``permitted`` sites carry § 540-7B; ``unpermitted`` sites (no permit, the article
    applying) § 540-7A; ``may_be`` sites are told what applies "if a permit is required".
    Excluded and exempt sites keep the measurements in their columns, without a duty.
    """
    if not m.has_waters:
        return  # said once for the run (run_findings), not on every site
    prot, water = np.nan_to_num(m.protective_disturbed_sqft), np.nan_to_num(m.in_water_sqft)
    in_prot, in_wat = prot > 0, water > 0
    pv: dict[str, Any] = {"protective_sqft": prot, "waters": m.protective_waters}
    f.add(permitted & in_prot, "protective_area", **pv)
    f.add(may_be & in_prot, "protective_area_if_permit", **pv)
    measured_from_line = (permitted | may_be) & in_prot & m.protective_from_centreline.astype(bool)
    f.add(measured_from_line, "protective_area_from_centreline")
    unverified = (permitted | may_be) & in_prot & pd.notna(m.channel_unverified)
    f.add(unverified, "protective_channel_class_unverified", waters=m.channel_unverified)
    f.add(permitted & in_wat, "in_water", in_water_sqft=water)
    f.add(unpermitted & in_wat, "in_water_unpermitted", in_water_sqft=water)
    near = ~in_prot & ~in_wat & np.isfinite(m.nearest_water_ft)
    nv: dict[str, Any] = {"water": m.nearest_water, "distance_ft": m.nearest_water_ft}
    f.add(permitted & near, "nearest_water", **nv)
    f.add(unpermitted & near, "nearest_water_unpermitted", **nv)


def _reasons(
    profile: Profile, in_prot: np.ndarray, in_wat: np.ndarray, in_targ: np.ndarray, targeted: np.ndarray
) -> Callable[[int], str]:
    def text(code: str, **values: Any) -> str:
        t = profile.finding(code, **values)
        return f"{t.message} ({t.section})"

    def reasons(i: int) -> str:
        r = []
        if in_prot[i]:
            r.append(text("reason_protective_area"))
        if in_wat[i]:
            r.append(text("reason_in_water"))
        if in_targ[i]:
            r.append(text("reason_targeted_area", areas=targeted[i]))
        return "; ".join(r)

    return reasons


def _slopes(f: _Findings, m: Measurements, permitted: np.ndarray, may_be: np.ndarray) -> None:
    """§ 540-7B(3)(c)[3]: a duty of permitted sites ("if a permit is required" where one may be)."""
    duty = permitted | may_be
    if not m.has_dem:
        return  # said once for the run (run_findings), not on every site
    inside = m.disturbed_in_jurisdiction_sqft
    steep, unc = m.steep_disturbed_sqft, m.steep_uncovered_sqft
    sv: dict[str, Any] = {"steep_sqft": steep, "steep_share": _share(steep, inside)}
    f.add(permitted & (steep > 0), "steep_slopes", **sv)
    f.add(may_be & (steep > 0), "steep_slopes_if_permit", **sv)
    f.add(permitted & (steep == 0) & (inside > 0), "no_steep_slopes")
    f.add(duty & (unc > 1.0), "dem_not_covering", uncovered_sqft=unc, uncovered_share=_share(unc, inside))


def _input_quality(f: _Findings, m: Measurements) -> None:
    f.add(m.repaired.astype(bool), "geometry_repaired")
    out_site = m.disturbed_outside_site_sqft
    f.add(out_site > 1.0, "disturbed_outside_site", outside_sqft=out_site)
    f.add(m.disturbed_count == 0, "no_disturbed_limits", disturbed_sqft=m.disturbed_sqft)


#: Run finding of an absent optional layer -> the output columns left null for want of it.
NOT_MEASURED: dict[str, tuple[str, ...]] = {
    "no_waters_layer": (
        "protective_disturbed_sqft",
        "nearest_water_ft",
        "in_water_sqft",
        "nearest_water",
        "protective_waters",
    ),
    "no_targeted_layer": ("targeted_areas",),
    "steep_not_measured": ("steep_disturbed_sqft", "steep_share", "steep_uncovered_sqft"),
}


def run_findings(m: Measurements, profile: Profile) -> list[dict[str, str]]:
    """Return the findings about the run itself: one per optional layer the layer set lacks.

    An absent layer switches a check off for every site alike, so it is said once, not on
    each row: ``{code, section, basis, message, columns}``, ``columns`` naming the output
    columns left null.

    Raises
    ------
    ProfileError
        If the profile lacks one of these findings.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> [f["code"] for f in run_findings(Measurements.of(1, has_waters=True), load_profile())]
    ['no_targeted_layer', 'steep_not_measured']
    """
    absent = {"no_waters_layer": not m.has_waters, "no_targeted_layer": not m.has_targeted}
    absent["steep_not_measured"] = not m.has_dem
    return [
        {**profile.finding(code).to_dict(), "columns": ", ".join(NOT_MEASURED[code])}
        for code, missing in absent.items()
        if missing
    ]


def decide(m: Measurements | pd.DataFrame, profile: Profile) -> Decision:
    """Apply the ordinance to measured sites.

    Parameters
    ----------
    m : Measurements or pandas.DataFrame
        One entry per site (a frame is read with :meth:`Measurements.from_frame`).
    profile : Profile

    Returns
    -------
    Decision
        Applicability, permit, standards, the area decided on and the findings (a JSON list
        of ``{code, section, basis, message}`` per site).

    Raises
    ------
    ProfileError
        If the profile lacks a finding the sites need, or a message cannot be filled in.

    Examples
    --------
    >>> from esc_gis.profile import load_profile
    >>> d = decide(Measurements.of(3, disturbed_sqft=[3999.0, 4000.0, 43560.0]), load_profile())
    >>> d.permit.tolist(), d.sediment_standard.tolist()
    (['not_required', 'required', 'required'], [False, False, True])
    """
    if isinstance(m, pd.DataFrame):
        m = Measurements.from_frame(m)
    n = len(m)
    appl = applicability(m.jurisdiction, m.activity, m.state_agency)
    applies = appl == "applies"
    area = decision_area(m, profile)
    d = permit_decision(applies, area, m.npdes_exempt, profile, m)
    permitted = d["permit"] == "required"
    unpermitted = d["permit"] == "not_required"
    in_prot = np.nan_to_num(m.protective_disturbed_sqft) > 0
    in_wat = np.nan_to_num(m.in_water_sqft) > 0
    in_targ = (pd.notna(m.targeted_areas) & (m.targeted_areas != "")).astype(bool)
    may_be = may_require_permit(unpermitted, d["npdes_small"], in_prot, in_wat, in_targ)

    f = _Findings(n, profile)
    _jurisdiction(f, m, profile)
    _exemptions(f, m, appl)
    _disturbance(f, m, applies, area, profile)
    _permit(f, m, profile, applies, area, d)
    _standards(f, d, area)
    _waters(f, m, permitted, unpermitted, may_be)
    if m.has_targeted:
        f.add(permitted & in_targ, "targeted_area", areas=m.targeted_areas)
    reasons = _reasons(profile, in_prot, in_wat, in_targ, m.targeted_areas)
    listed = np.full(n, "", dtype=object)
    for i in np.flatnonzero(may_be).tolist():
        listed[i] = reasons(i)
    f.add(may_be, "permit_may_be_required", reasons=listed)
    _slopes(f, m, permitted, may_be)
    _input_quality(f, m)
    return Decision(
        applicability=appl,
        permit=d["permit"],
        permit_may_be_required=may_be,
        standards=d["standards"],
        sediment_standard=d["sediment_standard"],
        decision_sqft=area,
        findings=f.json(),
        run_findings=run_findings(m, profile),
    )
