"""The plan-review checks: pure functions from a package's facts and measurements to findings.

Each check returns a :class:`Check` with a status:

``pass``   the plan shows it;
``fail``   the plan does not meet the check; a written reason for disapproval (§ 540-8C(3))
           only when the check's basis is ``ordinance`` (see :attr:`esc_gis.review.Review.reasons`);
``look``   the reviewer must decide (a judgement, or data the package lacks);
``n/a``    the item does not apply to this site.

A check's title, section, basis and wording are the profile's (``[findings.review_*]``):
:func:`make_check` renders one outcome of a check from its finding code. The geometric
helpers (:func:`edge_segments`, :func:`downslope`, :func:`covered`) work on the disturbed
limits cut into short segments, vectorised over the segments.
"""

from __future__ import annotations

__all__ = [
    "PACKAGE_KEYS",
    "POLICY_KEYS",
    "STATUSES",
    "TITLES",
    "Check",
    "edge_segments",
    "make_check",
    "plan_items",
]

import re
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import shapely

from esc_gis.errors import ProfileError
from esc_gis.profile import Profile
from esc_gis.rules import sediment_standard_reaches
from esc_gis.units import SQFT_PER_ACRE

STATUSES = ("fail", "look", "pass", "n/a")

#: Check -> the finding whose profile template carries the check's title (its other outcomes
#: may leave the title out). Items of § 540-9A are ``plan_item_<n>``.
TITLES: dict[str, str] = {
    "plan_item_1": "review_parties_given",
    "plan_item_2": "review_legal_description_given",
    "plan_item_3": "review_site_map_given",
    "plan_item_4": "review_areas_stated",
    "plan_item_5": "review_standards_match",
    "plan_item_6": "review_bmps_given",
    "plan_item_7": "review_narrative_given",
    "plan_item_8": "review_sequence_given",
    "plan_item_9": "review_rusle2_given",
    "less_stringent": "review_less_stringent",
    "spill": "review_spill_given",
    "map": "review_map_missing",
    "limits": "review_limits_inside",
    "area_site": "review_site_area_agrees",
    "area_disturbed": "review_disturbed_area_agrees",
    "decision": "review_decision",
    "steep": "review_steep",
    "protective": "review_protective",
    "tracking": "review_tracking_pad",
    "inlets": "review_inlets_protected",
    "perimeter": "review_perimeter_covered",
    "waters": "review_waters_covered",
    "stockpiles": "review_stockpiles_covered",
    "schedule": "review_schedule_within",
    "rusle_ls": "review_rusle_ls_compared",
    "soil_loss": "review_soil_loss_agrees",
    "common_plan": "review_common_plan",
    "non_permitted": "review_non_permitted",
}

#: The site map's three layers in the words of the plan's contents: property lines, disturbed
#: limits and drainage patterns (§ 540-9A(3)), in that order.
SITE_MAP_WORDS: dict[str, str] = {
    "site_boundary": "the property lines",
    "disturbed_limits": "the disturbed limits",
    "drainage": "the drainage patterns",
}

#: Check -> where the package holds what it checks (``plan.toml``'s tables and keys, the map
#: layers). For staff, in the JSON only: what the applicant reads (the detail, the reasons and
#: the advisories) names things in plain words, never the package's keys.
PACKAGE_KEYS: dict[str, str] = {
    "plan_item_1": "plan.toml [landowner], [[responsible_parties]]: name, address, phone",
    "plan_item_2": "plan.toml [site] legal_description",
    "plan_item_3": "layers site_boundary, disturbed_limits, drainage",
    "plan_item_4": "plan.toml [site] site_area_sqft, disturbed_area_sqft",
    "plan_item_5": "plan.toml [site] performance_standards",
    "plan_item_6": "layer bmps (type)",
    "plan_item_7": "plan.toml [narrative] text",
    "plan_item_8": "plan.toml [schedule] start, end, sequence",
    "plan_item_9": "plan.toml [rusle2] sediment_tons_per_acre_year, explanation; plan.toml [reference_guide] included",
    "less_stringent": "plan.toml [rusle2] sediment_tons_per_acre_year",
    "spill": "plan.toml [narrative] spill_procedures",
    "map": "layers site_boundary, disturbed_limits",
    "limits": "layers site_boundary, disturbed_limits",
    "area_site": "plan.toml [site] site_area_sqft; layer site_boundary",
    "area_disturbed": "plan.toml [site] disturbed_area_sqft; layer disturbed_limits",
    "decision": "layers site_boundary, disturbed_limits; plan.toml [site] plan_id, plan_disturbed_sqft, activity, "
    "state_agency, npdes_exempt",
    "common_plan": "plan.toml [site] plan_id, plan_disturbed_sqft (or the registry's plan)",
    "non_permitted": "layer disturbed_limits; plan.toml [site] plan_id, plan_disturbed_sqft",
    "steep": "layer disturbed_limits",
    "protective": "layer disturbed_limits",
    "tracking": "layers streets, bmps (type)",
    "inlets": "layers inlets, bmps (type)",
    "perimeter": "layers disturbed_limits, bmps (type)",
    "waters": "layers disturbed_limits, bmps (type)",
    "stockpiles": "layer stockpiles (days, cover)",
    "schedule": "plan.toml [schedule] start, end",
    "rusle_ls": "plan.toml [rusle2] ls, slope_length_ft, slope_pct",
    "soil_loss": "plan.toml [rusle2] schedule_file, ei_file, sediment_tons_per_acre_year, r_annual, k",
}

#: Check -> the profile entries of the toolkit's own policy its test uses. A check whose outcome
#: does not rest on the ordinance names them, so an advisory says which choice it rests on.
POLICY_KEYS: dict[str, tuple[str, ...]] = {
    "limits": ("policy.sliver",),
    "area_site": ("policy.review_area_tolerance",),
    "area_disturbed": ("policy.review_area_tolerance",),
    "tracking": ("policy.review_street_contact", "policy.review_tracking_reach"),
    "inlets": ("policy.review_inlet_reach", "policy.review_inlet_bmp"),
    "perimeter": ("policy.review_uncovered_share", "policy.review_bmp_reach"),
    "waters": ("policy.review_water_reach", "policy.review_uncovered_share", "policy.review_bmp_reach"),
    "stockpiles": ("policy.review_bmp_reach",),
    "soil_loss": ("policy.review_soil_loss_tolerance",),
}
#: Outcomes of those checks that do not use their policy: nothing computed, or a test of the
#: ordinance's own number.
NO_POLICY: frozenset[str] = frozenset({"review_soil_loss_not_computed", "review_soil_loss_over_standard"})


@dataclass(frozen=True)
class Check:
    """One line of the review's checklist.

    Attributes
    ----------
    code : str
        The check (``plan_item_1``, ``perimeter``, ...).
    title, section, basis : str
        From the profile's finding ``finding``; ``basis`` is one of
        :data:`esc_gis.findings.BASES`.
    status : str
        One of :data:`STATUSES`.
    detail : str
        The finding's message.
    finding : str
        The profile's finding code for this outcome.
    policy : tuple of str
        The ``policy.*`` entries the outcome rests on (empty when its basis is the ordinance).
    package_key : str
        Where the package holds what is checked (:data:`PACKAGE_KEYS`), for staff: in the
        JSON, never in the text the applicant reads.
    """

    code: str
    title: str
    section: str
    basis: str
    status: str
    detail: str
    finding: str = ""
    policy: tuple[str, ...] = ()
    package_key: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the check as JSON-ready data."""
        d = asdict(self)
        d["policy"] = list(self.policy)
        return d


def make_check(profile: Profile, check: str, status: str, finding: str, **values: Any) -> Check:
    """Render one outcome of a check from the profile's finding.

    Parameters
    ----------
    profile : Profile
    check : str
        A key of :data:`TITLES`.
    status : str
        One of :data:`STATUSES`.
    finding : str
        The profile's finding code (``review_*``).
    **values
        The finding's row values.

    Returns
    -------
    Check

    Raises
    ------
    ProfileError
        If the profile does not declare the finding, its message needs a value not given, or
        neither the finding nor the check's first finding gives a title.
    """
    f = profile.finding(finding, **values)
    title = profile.template(finding).title or profile.template(TITLES[check]).title
    if not title:
        msg = (
            f"Profile {profile.source or profile.name!r}: [findings.{TITLES[check]}] needs a title "
            f"(the checklist's name of the {check!r} check)."
        )
        raise ProfileError(msg)
    policy = POLICY_KEYS.get(check, ()) if f.basis != "ordinance" and finding not in NO_POLICY else ()
    return Check(check, title, f.section, f.basis, status, f.message, finding, policy, PACKAGE_KEYS[check])


def _has(d: dict[str, Any], *keys: str) -> bool:
    return all(str(d.get(k) or "").strip() for k in keys)


def _given(profile: Profile, check: str, ok: bool, name: str) -> Check:
    """Check a plain "given or missing" item: ``review_<name>_given`` passes, ``review_<name>_missing`` fails."""
    return make_check(profile, check, "pass" if ok else "fail", f"review_{name}_{'given' if ok else 'missing'}")


def _sequence(profile: Profile, has_sequence: bool, dated: bool) -> Check:
    """§ 540-9A(8) "Construction sequence and construction schedule": a sequence is required.

    The text names no calendar dates, so a sequence without start and end dates is not failed:
    it is left to the reviewer (``review_sequence_undated``, a reading), who checks that it
    gives its schedule in relative terms.
    """
    if not has_sequence:
        return make_check(profile, "plan_item_8", "fail", "review_sequence_missing")
    if not dated:
        return make_check(profile, "plan_item_8", "look", "review_sequence_undated")
    return make_check(profile, "plan_item_8", "pass", "review_sequence_given")


def _parties(facts: dict[str, Any], profile: Profile) -> Check:
    owner = facts.get("landowner") or {}
    parties = facts.get("responsible_parties") or []
    people = [owner, *parties] if owner else list(parties)
    complete = [p for p in people if _has(p, "name", "address", "phone")]
    if owner and parties and len(complete) == len(people):
        return make_check(
            profile,
            "plan_item_1",
            "pass",
            "review_parties_given",
            parties=len(parties),
            party_word="party" if len(parties) == 1 else "parties",
        )
    if owner and not parties and len(complete) == 1:
        # The landowner is a responsible party (§ 540-5, § 540-7B(1)): alone, it is the one.
        return make_check(profile, "plan_item_1", "pass", "review_parties_landowner_only")
    if not people:
        return make_check(profile, "plan_item_1", "fail", "review_parties_none")
    lacking = [
        f"{p.get('name') or '(unnamed)'} has no {', '.join(k for k in ('name', 'address', 'phone') if not _has(p, k))}"
        for p in people
        if p not in complete
    ]
    missing = [] if owner else ["no landowner"]
    return make_check(profile, "plan_item_1", "fail", "review_parties_incomplete", lacking="; ".join(missing + lacking))


def _standards(site: dict[str, Any], computed: str, profile: Profile) -> Check:
    # Plans write "540-7B" or "§ 540-7B"; compare the codes without the section mark.
    stated = [re.sub(r"^\W+", "", str(s).strip()) for s in (site.get("performance_standards") or [])]
    if not stated:
        return make_check(profile, "plan_item_5", "fail", "review_standards_none", computed=computed)
    if computed not in stated:
        return make_check(
            profile, "plan_item_5", "fail", "review_standards_differ", stated=", ".join(stated), computed=computed
        )
    return make_check(profile, "plan_item_5", "pass", "review_standards_match", computed=computed)


def _bmp_item(layers: set[str], bmp_codes: list[str | None], profile: Profile) -> Check:
    known = [c for c in bmp_codes if c is not None]
    unknown = len(bmp_codes) - len(known)
    if "bmps" not in layers or not bmp_codes:
        return make_check(profile, "plan_item_6", "fail", "review_bmps_none")
    if unknown:
        return make_check(profile, "plan_item_6", "look", "review_bmps_unknown", known=len(known), unknown=unknown)
    return make_check(
        profile, "plan_item_6", "pass", "review_bmps_given", known=len(known), standards=", ".join(sorted(set(known)))
    )


def plan_items(
    facts: dict[str, Any],
    layers: set[str],
    bmp_codes: list[str | None],
    *,
    computed_standards: str,
    disturbed_sqft: float,
    profile: Profile,
    plan_disturbed_sqft: float | None = None,
) -> list[Check]:
    """Check the nine items of § 540-9A (and the spill procedures of § 540-7B(3)(c)[4]) against the package.

    Parameters
    ----------
    facts : dict
        ``plan.toml``.
    layers : set of str
        The usable layers of the package.
    bmp_codes : list
        Each BMP's standard number (:func:`esc_gis.review.bmps.classify`); None when unknown.
    computed_standards : str
        The standards code the screening engine found (the profile's ``standards_permitted`` or
        ``standards_unpermitted``).
    disturbed_sqft : float
        The drawn disturbance, for RUSLE2 and the sediment standard (§ 540-9A(9), § 540-7B(3)(b)).
    profile : Profile
    plan_disturbed_sqft : float, optional
        The construction site's disturbance when the site is part of a larger common plan
        (§ 540-5 CONSTRUCTION SITE): the acre tests of item 9 and § 540-9C are decided on it.
        Default ``disturbed_sqft``.

    Returns
    -------
    list of Check
        One per item, plus a ``less_stringent`` look when item 9 is not met under the profile's
        ``thresholds.less_stringent_area`` (§ 540-9C).

    Raises
    ------
    ProfileError
        If the profile lacks a ``review_*`` finding or its title.
    """
    site = facts.get("site") or {}
    narrative = facts.get("narrative") or {}
    schedule = facts.get("schedule") or {}
    # Named as the site map shows them, not by the package's layer names.
    lacking = [text for n, text in SITE_MAP_WORDS.items() if n not in layers]
    lacking_layers = ", ".join(lacking[:-1]) + (" and " if len(lacking) > 1 else "") + lacking[-1] if lacking else ""
    # bool is an int in Python: a yes/no field is not a stated area.
    claimed = [
        k
        for k in ("site_area_sqft", "disturbed_area_sqft")
        if isinstance(site.get(k), (int, float)) and not isinstance(site.get(k), bool)
    ]
    has_sequence = bool(schedule.get("sequence"))
    dated = bool(schedule.get("start")) and bool(schedule.get("end"))
    out = [
        _parties(facts, profile),
        _given(profile, "plan_item_2", _has(site, "legal_description"), "legal_description"),
        make_check(profile, "plan_item_3", "fail", "review_site_map_missing", missing_layers=lacking_layers)
        if lacking_layers
        else make_check(profile, "plan_item_3", "pass", "review_site_map_given"),
        make_check(profile, "plan_item_4", "pass", "review_areas_stated")
        if len(claimed) == 2
        else make_check(profile, "plan_item_4", "fail", "review_areas_missing"),
        _standards(site, computed_standards, profile),
        _bmp_item(layers, bmp_codes, profile),
        _given(profile, "plan_item_7", _has(narrative, "text"), "narrative"),
        _sequence(profile, has_sequence, dated),
        *_rusle(facts, disturbed_sqft if plan_disturbed_sqft is None else plan_disturbed_sqft, profile),
        _given(profile, "spill", _has(narrative, "spill_procedures"), "spill"),
    ]
    return out


def _rusle(facts: dict[str, Any], disturbed_sqft: float, profile: Profile) -> list[Check]:
    """§ 540-9A(9): every plan shall include the Reference Guide's items and RUSLE2; at the sediment area, the standard.

    ``disturbed_sqft`` is the construction site's: the whole common plan's when the site is
    part of one. The sediment standard's acre test is screening's and soil loss's
    (:func:`esc_gis.rules.sediment_standard_reaches`).

    The text asks for RUSLE2 whatever the site's size, so a plan without it fails here even on a
    small site. It asks for the Reference Guide's items too ("the items specified in the ...
    Reference Guide and RUSLE2"): RUSLE2 alone never passes. The Guide is not part of the
    article, so the review cannot check its items; the plan states whether it includes them
    (``[reference_guide] included``). Stated false, the item fails (beside RUSLE2's own failure,
    if any: both reasons are drafted); not stated, a RUSLE2 that would pass is a ``look`` (a
    reading, ``review_reference_guide_unstated``).

    Under ``thresholds.less_stringent_area`` the authority may prescribe less stringent
    requirements (§ 540-8I, § 540-9C): that is the reviewer's decision, so it is added
    as a ``look`` beside the failure, never turned into a pass.
    """
    rusle = facts.get("rusle2") or {}
    load = rusle.get("sediment_tons_per_acre_year")
    limit = float(profile.entry("thresholds.sediment_load").value or 0)
    acres = disturbed_sqft / SQFT_PER_ACRE
    if isinstance(load, bool) or not isinstance(load, (int, float)):
        item = make_check(profile, "plan_item_9", "fail", "review_rusle2_missing", disturbed_acres=acres)
    elif not sediment_standard_reaches(disturbed_sqft, profile):
        item = make_check(profile, "plan_item_9", "pass", "review_rusle2_given", disturbed_acres=acres, load=load)
    elif load <= limit:
        item = make_check(profile, "plan_item_9", "pass", "review_sediment_load_met", disturbed_acres=acres, load=load)
    elif not str(rusle.get("explanation") or "").strip():
        item = make_check(profile, "plan_item_9", "fail", "review_sediment_load_over", disturbed_acres=acres, load=load)
    else:
        item = make_check(
            profile, "plan_item_9", "look", "review_sediment_load_explained", disturbed_acres=acres, load=load
        )
    guide = (facts.get("reference_guide") or {}).get("included")
    items = [item]
    if guide is False:
        # § 540-8C(3) asks for "the reasons": a plan lacking the Guide's items and failing on RUSLE2
        # too gets both reasons, not only the first.
        missing = make_check(profile, "plan_item_9", "fail", "review_reference_guide_missing", disturbed_acres=acres)
        # A look (an explained load over the standard) stays beside it: the reviewer must still judge it.
        items = [missing] if item.status == "pass" else [item, missing]
    elif guide is not True and item.status == "pass":
        items = [make_check(profile, "plan_item_9", "look", "review_reference_guide_unstated", disturbed_acres=acres)]
    if items[0].status == "pass" or disturbed_sqft >= profile.area_sqft("thresholds.less_stringent_area"):
        return items
    return [*items, make_check(profile, "less_stringent", "look", "review_less_stringent", disturbed_acres=acres)]


# --- Edges of the disturbance -----------------------------------------------------------------


def edge_segments(polygons: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cut the outer edges of polygons into segments of at most ``step``.

    Returns
    -------
    a, b : numpy.ndarray, shape (n, 2)
        Segment ends, each ring counter-clockwise (so the outward normal is to the right).
    normal : numpy.ndarray, shape (n, 2)
        Unit outward normals.
    """
    parts = shapely.get_parts(np.asarray(polygons, dtype=object))
    parts = parts[shapely.get_type_id(parts) == 3]
    rings = shapely.get_exterior_ring(shapely.orient_polygons(parts, exterior_cw=False))
    rings = shapely.segmentize(rings, step)
    coords, index = shapely.get_coordinates(rings, return_index=True)
    same = index[1:] == index[:-1]
    a, b = coords[:-1][same], coords[1:][same]
    d = b - a
    length = np.hypot(d[:, 0], d[:, 1])
    keep = length > 0
    a, b, d, length = a[keep], b[keep], d[keep], length[keep]
    normal = np.stack([d[:, 1], -d[:, 0]], axis=1) / length[:, None]
    return a, b, normal


def downslope(a: np.ndarray, b: np.ndarray, normal: np.ndarray, z: Any, offset: float) -> np.ndarray:
    """Which segments runoff leaves across: the ground falls from inside to outside.

    ``z`` maps an (n, 2) array of points to elevations (NaN off the DEM).
    """
    mid = (a + b) / 2
    inside, outside = z(mid - normal * offset), z(mid + normal * offset)
    return np.nan_to_num(outside - inside, nan=0.0) < 0


def covered(a: np.ndarray, b: np.ndarray, geoms: np.ndarray, reach: float) -> np.ndarray:
    """Which segments have one of ``geoms`` within ``reach`` of their midpoint."""
    if len(a) == 0 or len(geoms) == 0:
        return np.zeros(len(a), dtype=bool)
    mid = shapely.points((a + b) / 2)
    tree = shapely.STRtree(geoms)
    hit, _ = tree.query(mid, predicate="dwithin", distance=reach)
    out = np.zeros(len(a), dtype=bool)
    out[hit] = True
    return out


def segments_geometry(a: np.ndarray, b: np.ndarray) -> shapely.Geometry:
    """Return the segments as one MultiLineString (for the map)."""
    if len(a) == 0:
        return shapely.MultiLineString()
    lines = shapely.linestrings(np.stack([a, b], axis=1))
    return shapely.line_merge(shapely.multilinestrings(lines))
