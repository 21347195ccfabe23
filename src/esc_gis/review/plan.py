"""Review a plan package: read -> measuring CRS -> measure (screening, DEM, waters) -> checks -> verdict.

:func:`review_plan` never prints and never writes; ``esc-gis review`` wraps it and
:mod:`esc_gis.review.report` turns its :class:`Review` into the HTML page.
"""

from __future__ import annotations

__all__ = ["VERDICTS", "Review", "review_plan", "verdict"]

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

from esc_gis.crs import to_measuring_crs, warn_if_far_from_zone
from esc_gis.errors import EscGisError, Problem
from esc_gis.layers import LayerSet, load_layers
from esc_gis.measure import area_sqft
from esc_gis.profile import Profile, load_profile
from esc_gis.review.bmps import STANDARDS, classify, with_role
from esc_gis.review.checks import (
    Check,
    covered,
    downslope,
    edge_segments,
    make_check,
    plan_items,
    segments_geometry,
)
from esc_gis.review.package import PlanPackage, read_package
from esc_gis.review.scope import decision_check, scope_checks
from esc_gis.rules import determined_decision, permit_decision, sediment_standard_reaches
from esc_gis.units import SQFT_PER_ACRE, ft_to_crs_units

#: How an advisory names its basis.
BASIS_TEXT = {"policy": "toolkit policy", "technical_standard": "technical standard", "interpretation": "reading"}
#: The verdicts: see :func:`verdict`.
VERDICTS = ("approve", "needs a look", "disapprove")


def verdict(checks: list[Check], problems: list[Problem]) -> str:
    """Decide the review's verdict from its checks.

    "disapprove" only when a check fails on the ordinance: that failure is a written reason
    for disapproval (§ 540-8C(3)). Failures of the toolkit's review policy (the reaches and
    shares of ``policy.review_*``), of a WDNR technical standard or of a reading
    (``interpretation``) alone are advisories, so they make the verdict "needs a look", as does
    any ``look`` or a problem with the package. Otherwise "approve".

    Parameters
    ----------
    checks : list of Check
    problems : list of Problem

    Returns
    -------
    str
        One of :data:`VERDICTS`.
    """
    if any(c.status == "fail" and c.basis == "ordinance" for c in checks):
        return "disapprove"
    if problems or any(c.status in ("fail", "look") for c in checks):
        return "needs a look"
    return "approve"


@dataclass
class Review:
    """The outcome of a plan review.

    Attributes
    ----------
    source : str
    verdict : str
        "approve", "needs a look" or "disapprove" (see :func:`verdict`).
    checks : list of Check
    problems : list of Problem
        What is wrong with the package itself (missing layers, no CRS, ...).
    facts : dict
        ``plan.toml``.
    layers : dict of str -> GeoDataFrame
        The package's layers in the measuring CRS, plus ``downslope_unprotected`` and
        ``water_edge_unprotected`` when found (for the map).
    measured : dict
        The drawn areas and the screening's decision.
    profile : Profile, optional
        The profile the review ran under (the report's headings come from it).
    """

    source: str
    verdict: str
    checks: list[Check]
    problems: list[Problem]
    facts: dict[str, Any]
    layers: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    measured: dict[str, Any] = field(default_factory=dict)
    profile: Profile | None = None

    @property
    def reasons(self) -> list[str]:
        """A draft of the written reasons for disapproval (§ 540-8C(3)): every check failed on the ordinance, cited.

        Only a failure whose basis is ``ordinance`` is a reason: the toolkit's review heuristics
        and the technical standards are :attr:`advisories`.
        """
        return [
            f"{c.title}: {c.detail.rstrip('.')} ({c.section})."
            for c in self.checks
            if c.status == "fail" and c.basis == "ordinance"
        ]

    @property
    def advisories(self) -> list[str]:
        """Failed checks that rest on policy, a technical standard or a reading: each with its basis and policy keys."""
        out = []
        for c in self.checks:
            if c.status != "fail" or c.basis == "ordinance":
                continue
            keys = f": {', '.join(c.policy)}" if c.policy else ""
            out.append(f"{c.title}: {c.detail.rstrip('.')} ({c.section}; {BASIS_TEXT.get(c.basis, c.basis)}{keys}).")
        return out

    def to_dict(self) -> dict[str, Any]:
        """Return the review as JSON-ready data (no geometry); every check with its basis."""
        return {
            "source": self.source,
            "verdict": self.verdict,
            "measured": self.measured,
            "checks": [c.to_dict() for c in self.checks],
            "reasons": self.reasons,
            "advisories": self.advisories,
            "package_problems": [str(p) for p in self.problems],
        }


def _pol(profile: Profile, key: str) -> float:
    return float(profile.entry(f"policy.review_{key}").value or 0)


def _union(gdf: gpd.GeoDataFrame | None) -> shapely.Geometry | None:
    if gdf is None or len(gdf) == 0:
        return None
    return shapely.union_all(gdf.geometry.to_numpy())


def review_plan(
    path: str | os.PathLike[str],
    *,
    layers: str | os.PathLike[str] | LayerSet | None = None,
    profile: str | os.PathLike[str] | Profile | None = None,
    plan_totals: Mapping[str, float] | None = None,
    determined: str | None = None,
) -> Review:
    """Check a plan package against § 540-9A and § 540-7B.

    A site that is part of a larger common plan of development (``plan.toml``'s ``[site]
    plan_id``, with the plan's disturbed total in ``plan_disturbed_sqft`` or from
    ``plan_totals``) is decided on the plan's total (§ 540-5 CONSTRUCTION SITE): the permit, the
    sediment standard (§ 540-7B(3)(b)) and the less stringent look (§ 540-8I, § 540-9C).

    Parameters
    ----------
    path : path-like
        The package: a ``.gpkg``, a ``.dxf`` or a folder, with ``plan.toml`` (see
        :mod:`esc_gis.review.package`).
    layers : path or LayerSet, optional
        The Village's layers (boundary, waters, DEM); default the Village's own.
    profile : path or Profile, optional
    plan_totals : mapping of str to float, optional
        Each common plan's disturbed total (sq ft) by plan id, e.g. the permit registry's; the
        larger of it and the package's own ``plan_disturbed_sqft`` counts.
    determined : str, optional
        The administering authority's determination that the site needs a permit (§ 540-4A(1)(c)),
        in words (the registry's record: ``review --registry R --determined P``). A site the
        screening decides ``not_required`` (and not exempt under § 540-4A(3)) is then a permitted
        site, reviewed in full (:func:`esc_gis.rules.determined_decision`); any other decision stands.

    Returns
    -------
    Review
        Also for a broken package: its problems are in the review, not raised.

    Raises
    ------
    LayerSetError, ProfileError
        If the layer set or profile (the reviewer's own set-up) is unusable.
    LayerReadError
        If ``path`` does not exist: a mistyped path is not a plan package.
    NotAPlanPackageError
        If ``path`` cannot be a plan package (an empty file or folder, a file GDAL cannot open,
        none of the plan's layers): no verdict is drawn on it.
    ValidationError
        If a layer does not lie with the site boundary (a CRS label is wrong: the limits 157 km
        from the property lines), or a polygon is invalid in a way a repair would change
        (:func:`esc_gis.validate.check_polygons`): no verdict is drawn on a package that is not
        the plan drawn.
    """
    prof = profile if isinstance(profile, Profile) else load_profile(None if profile is None else Path(profile))
    ls = layers if isinstance(layers, LayerSet) else load_layers(None if layers is None else Path(layers), profile=prof)
    from esc_gis.validate import repair_tolerance_sqft

    pkg = read_package(path, repair_sqft=repair_tolerance_sqft(prof))
    lay: dict[str, gpd.GeoDataFrame] = {}
    for name, gdf in pkg.layers.items():
        try:
            if gdf.crs is not None:  # one without is the package's problem, said below
                warn_if_far_from_zone(gdf.total_bounds, gdf.crs, ls.crs, what=f"Plan layer {name}")
            lay[name] = to_measuring_crs(gdf, ls.crs)
        except EscGisError as exc:
            pkg.problems.append(Problem(pkg.source, None, f"layer {name}: {exc}", "check its CRS."))
    _refuse_apart(pkg, lay, ls)
    ft = ft_to_crs_units(1.0, ls.crs)
    site, dist = _union(lay.get("site_boundary")), _union(lay.get("disturbed_limits"))
    bmps = lay.get("bmps")
    codes: list[str | None] = []
    if bmps is not None:
        if "type" not in bmps.columns:
            pkg.problems.append(
                Problem(
                    pkg.source,
                    None,
                    "layer bmps has no `type` field.",
                    "give each BMP its WDNR standard, e.g. 1056 (silt fence).",
                )
            )
            codes = [None] * len(bmps)
        else:
            codes = [classify(v) for v in bmps["type"]]
        bmps = bmps.assign(
            standard=codes, standard_name=[STANDARDS[c][0] if c in STANDARDS else "unknown" for c in codes]
        )
        lay["bmps"] = bmps
    code_arr = np.array(codes, dtype=object)
    bmp_geoms = bmps.geometry.to_numpy() if bmps is not None else np.empty(0, dtype=object)

    measured: dict[str, Any] = {}
    checks: list[Check] = []
    res = None
    if site is not None and dist is not None:
        res = _screen(site, dist, pkg, ls, prof)
        if res is None:  # the package's facts were refused: said as its problems, no verdict drawn on them
            return Review(pkg.source, verdict([], pkg.problems), [], pkg.problems, pkg.facts, lay, measured, prof)
    if res is not None:
        measured = {
            "site_sqft": float(area_sqft(np.array([site]), ls.crs)[0]),
            "disturbed_sqft": float(area_sqft(np.array([dist]), ls.crs)[0]),
            "disturbed_in_jurisdiction_sqft": float(res["disturbed_in_jurisdiction_sqft"]),
            # Deprecated name of the same number, for one release (it said "village" under every profile).
            "disturbed_in_village_sqft": float(res["disturbed_in_jurisdiction_sqft"]),
            "jurisdiction": str(res["jurisdiction"]),
            "applicability": str(res["applicability"]),
            "permit": str(res["permit"]),
            "permit_may_be_required": bool(res["permit_may_be_required"]),
            "standards": str(res["standards"]),
            "sediment_standard": bool(res["sediment_standard"]),
            "steep_disturbed_sqft": float(res["steep_disturbed_sqft"]),
            "protective_disturbed_sqft": float(res["protective_disturbed_sqft"]),
        }
    plan_id, plan_given = _common_plan(pkg, plan_totals)
    own_sqft = float(res["plan_disturbed_sqft"]) if res is not None else measured.get("disturbed_sqft", 0.0)
    plan_sqft = max(own_sqft, plan_given) if plan_given is not None else own_sqft
    if res is not None:
        measured.update(plan_id=plan_id, plan_disturbed_sqft=plan_sqft)
        if plan_sqft > own_sqft:
            # The screening saw the lot alone: decide again on the plan's total (§ 540-5).
            d = permit_decision(
                np.array([res["applicability"] == "applies"]),
                np.array([plan_sqft]),
                np.array([bool(res["npdes_exempt"])]),
                prof,
            )
            measured.update(
                permit=str(d["permit"][0]),
                standards=str(d["standards"][0]),
                sediment_standard=bool(d["sediment_standard"][0]),
            )
    _apply_determination(res, measured, determined, prof)
    scope = scope_checks(res, measured, prof)
    if scope:
        # Not the article's, or a site that needs no permit: § 540-9 and § 540-7B are not reviewed.
        return Review(pkg.source, verdict(scope, pkg.problems), scope, pkg.problems, pkg.facts, lay, measured, prof)
    checks += plan_items(
        pkg.facts,
        set(lay),
        codes,
        computed_standards=measured.get("standards", prof.standards_permitted),
        disturbed_sqft=measured.get("disturbed_sqft", 0.0),
        profile=prof,
        plan_disturbed_sqft=plan_sqft if plan_id is not None else None,
    )
    if res is None:
        checks.append(make_check(prof, "map", "fail", "review_map_missing"))
    else:
        checks += _area_checks(pkg.facts, site, dist, measured, prof, ls)
        if plan_id is not None:
            checks.append(
                make_check(
                    prof,
                    "common_plan",
                    "pass",
                    "review_common_plan",
                    plan_id=plan_id,
                    plan_sqft=plan_sqft,
                    plan_acres=plan_sqft / SQFT_PER_ACRE,
                )
            )
        checks.append(decision_check(measured, prof))
        checks += _terrain_water_checks(measured, prof)
        checks += _bmp_checks(lay, site, dist, bmp_geoms, code_arr, ls, prof, ft)
    checks.append(_rusle_ls(pkg.facts, dist, ls, prof))
    checks.append(
        _soil_loss(pkg, dist, ls, prof, plan_sqft if plan_id is not None else None, measured.get("sediment_standard"))
    )
    checks.append(_schedule(pkg.facts, prof))
    return Review(pkg.source, verdict(checks, pkg.problems), checks, pkg.problems, pkg.facts, lay, measured, prof)


def _refuse_apart(pkg: PlanPackage, lay: dict[str, gpd.GeoDataFrame], ls: LayerSet) -> None:
    """Refuse a package whose layers do not lie with its site boundary: a CRS label is wrong (issue 46).

    The plan's disturbed limits 81 km from its property lines (county feet labelled as WTM
    metres) are not a plan to review: no answer is drawn on them, "needs a look" or any other.
    Every layer apart is named at once, with the CRS that would put it on the site
    (:func:`esc_gis.together.apart`).

    Raises
    ------
    ValidationError
        Naming each layer, the gap and the likely CRS mistake (exit 1, no report).
    """
    from esc_gis.errors import ValidationError
    from esc_gis.together import apart, apart_message

    site = lay.get("site_boundary")
    if site is None or not len(site):
        return
    partner = shapely.union_all(site.geometry.to_numpy())
    site_crs = pkg.layers["site_boundary"].crs
    problems = []
    others = [n for n, g in pkg.layers.items() if n != "site_boundary" and n in lay and g.crs is not None and len(g)]
    for name in others:
        gdf = pkg.layers[name]
        found = apart(gdf.geometry.to_numpy(), gdf.crs, [partner], ls.crs, partner_crs=site_crs)
        if found is not None:
            message, fix = apart_message(f"the features of layer {name}", "layer site_boundary", found)
            problems.append(Problem(pkg.source, None, message, fix))
    if len(others) > 1 and len(problems) == len(others):
        # Every other layer is apart from the site: the site boundary's label is the likely one wrong,
        # if the others lie together (it is then said of the site boundary alone).
        rest = shapely.union_all(np.concatenate([lay[n].geometry.to_numpy() for n in others]))
        raw = pkg.layers["site_boundary"]
        found = apart(raw.geometry.to_numpy(), site_crs, [rest], ls.crs, partner_crs=pkg.layers[others[0]].crs)
        if found is not None and found.likely is not None:
            message, fix = apart_message("the features of layer site_boundary", "the plan's other layers", found)
            problems = [Problem(pkg.source, None, message, fix)]
    if problems:
        raise ValidationError(problems)


def _apply_determination(res: Any, measured: dict[str, Any], determined: str | None, prof: Profile) -> None:
    """Make ``measured`` a permitted site's where a § 540-4A(1)(c) determination changes its decision.

    The one rule the registry applies (:func:`esc_gis.rules.determined_decision`): only a site
    the screening decided ``not_required`` and § 540-4A(3) does not exempt; ``determined`` (the
    determination in words) is kept for the decision's check.
    """
    if res is None or determined is None:
        return
    npdes = any(f.get("code") == "npdes_exempt_under_1_acre" for f in json.loads(res["findings"] or "[]"))
    permit, standards = determined_decision(measured["permit"], measured["standards"], npdes, True, prof)
    if permit != measured["permit"]:
        measured.update(permit=permit, standards=standards, determined=determined)


#: plan.toml's ``[site]`` keys that are the screening contract's fields (DESIGN.md).
CONTRACT_FACTS = ("plan_id", "activity", "state_agency", "npdes_exempt")


def _screen(site: shapely.Geometry, dist: shapely.Geometry, pkg: PlanPackage, ls: LayerSet, prof: Profile) -> Any:
    """Screen the plan's site with its limits and contract facts: the site's one answer (issue 34).

    ``[site]`` ``plan_id``, ``activity``, ``state_agency`` and ``npdes_exempt`` go to
    :func:`esc_gis.screening.screen` as a screening's sites carry them, so jurisdiction, § 540-4C,
    § 540-4A(2), NPDES, the thresholds and the common plan are decided there, not here. A fact
    the screening refuses (an unknown activity) is a problem with the package; None is returned.
    """
    from esc_gis.errors import ValidationError
    from esc_gis.screening import screen

    facts = pkg.facts.get("site") or {}
    fields = {k: [facts[k]] for k in CONTRACT_FACTS if facts.get(k) is not None}
    sites = gpd.GeoDataFrame({"site_id": ["plan"], **fields}, geometry=[site], crs=ls.crs)
    disturbed = gpd.GeoDataFrame({"site_id": ["plan"]}, geometry=[dist], crs=ls.crs)
    try:
        return screen(sites, disturbed=disturbed, layers=ls, profile=prof).iloc[0]
    except ValidationError as exc:
        for p in exc.problems:
            pkg.problems.append(Problem(pkg.source, None, f"[site]: {p.message}", p.fix))
        return None


def _common_plan(pkg: PlanPackage, plan_totals: Mapping[str, float] | None) -> tuple[str | None, float | None]:
    """Return the site's common plan (``[site] plan_id``) and its disturbed total, if known.

    The total is the larger of ``[site] plan_disturbed_sqft`` and ``plan_totals[plan_id]``
    (the registry's). A total that is not an area is a problem with the package, not a crash.
    """
    site = pkg.facts.get("site") or {}
    raw_id = site.get("plan_id")
    plan_id = str(raw_id).strip() if raw_id is not None and str(raw_id).strip() else None
    given = site.get("plan_disturbed_sqft")
    totals: list[float] = []
    if given is not None:
        if _number(given) and given >= 0:
            totals.append(float(given))
        else:
            pkg.problems.append(
                Problem(
                    pkg.source,
                    None,
                    f"the common plan's disturbed total {given!r} is not an area.",
                    "give [site] plan_disturbed_sqft in square feet.",
                )
            )
    if plan_id is None:
        if totals:
            pkg.problems.append(
                Problem(
                    pkg.source,
                    None,
                    "a common plan's disturbed total is given without the plan.",
                    "name the plan in [site] plan_id.",
                )
            )
        return None, None
    if plan_totals and plan_id in plan_totals:
        totals.append(float(plan_totals[plan_id]))
    return plan_id, (max(totals) if totals else None)


def _area_checks(
    facts: dict[str, Any], site: Any, dist: Any, m: dict[str, Any], prof: Profile, ls: LayerSet
) -> list[Check]:
    outside = float(area_sqft(np.array([shapely.difference(dist, site)]), ls.crs)[0])
    sliver = float(prof.entry("policy.sliver").value or 0)
    out = [
        make_check(prof, "limits", "fail", "review_limits_outside", outside_sqft=outside)
        if outside > sliver
        else make_check(prof, "limits", "pass", "review_limits_inside")
    ]
    claimed_site = (facts.get("site") or {}).get("site_area_sqft")
    claimed_dist = (facts.get("site") or {}).get("disturbed_area_sqft")
    tol = _pol(prof, "area_tolerance") / 100
    # A claim on the other side of a threshold than the drawing misstates which rules apply.
    flips = [
        (prof.area_sqft("thresholds.permit_area"), "permit"),
        (prof.area_sqft("thresholds.sediment_area"), "sediment"),
    ]
    for check, label, claimed, drawn, limits in (
        ("area_site", "site", claimed_site, m["site_sqft"], []),
        ("area_disturbed", "disturbed", claimed_dist, m["disturbed_sqft"], flips),
    ):
        if isinstance(claimed, bool) or not isinstance(claimed, (int, float)):
            out.append(make_check(prof, check, "look", f"review_{label}_area_no_claim", drawn_sqft=drawn))
            continue
        values = {"claimed_sqft": claimed, "drawn_sqft": drawn}
        # In a common plan the thresholds are the plan's (§ 540-5 CONSTRUCTION SITE: "areas that are
        # part of a larger common plan of development"): the claim moves the plan's total by its error.
        plan = float(m.get("plan_disturbed_sqft") or drawn) if label == "disturbed" else drawn
        claimed_total, drawn_total = claimed - drawn + plan, plan
        flipped = [name for t, name in limits if (claimed_total >= t) != (drawn_total >= t)]
        if flipped:
            out.append(make_check(prof, check, "fail", f"review_{label}_area_flips_{flipped[0]}", **values))
        elif abs(claimed - drawn) > tol * max(drawn, 1.0):
            out.append(
                make_check(
                    prof,
                    check,
                    "look",
                    f"review_{label}_area_differs",
                    diff_share=(claimed - drawn) / max(drawn, 1.0),
                    **values,
                )
            )
        else:
            out.append(make_check(prof, check, "pass", f"review_{label}_area_agrees", **values))
    return out


def _terrain_water_checks(m: dict[str, Any], prof: Profile) -> list[Check]:
    steep = m["steep_disturbed_sqft"]
    if np.isnan(steep):
        s = make_check(prof, "steep", "look", "review_steep_not_measured")
    elif steep > 0:
        s = make_check(prof, "steep", "look", "review_steep", steep_sqft=steep)
    else:
        s = make_check(prof, "steep", "pass", "review_steep_none")
    prot = m["protective_disturbed_sqft"]
    p = (
        make_check(prof, "protective", "look", "review_protective", protective_sqft=prot)
        if prot > 0
        else make_check(prof, "protective", "pass", "review_protective_none")
    )
    return [s, p]


def _tracking(
    lay: dict[str, gpd.GeoDataFrame], site: Any, bmp: np.ndarray, codes: np.ndarray, prof: Profile, ft: float
) -> Check:
    """Tracking onto streets (§ 540-7B(3)(a)[1]), with the street-contact and tracking reaches of the policy."""
    streets = _union(lay.get("streets"))
    if streets is None:
        return make_check(prof, "tracking", "look", "review_tracking_no_layer")
    contact = shapely.intersection(shapely.boundary(site), shapely.buffer(streets, _pol(prof, "street_contact") * ft))
    if shapely.is_empty(contact):
        return make_check(prof, "tracking", "n/a", "review_tracking_no_street")
    pads = bmp[with_role(codes, "tracking")]
    pad_near = bool(len(pads)) and bool(shapely.dwithin(pads, contact, _pol(prof, "tracking_reach") * ft).any())
    return (
        make_check(prof, "tracking", "pass", "review_tracking_pad")
        if pad_near
        else make_check(prof, "tracking", "fail", "review_tracking_missing")
    )


def _inlets(
    lay: dict[str, gpd.GeoDataFrame], site: Any, bmp: np.ndarray, codes: np.ndarray, prof: Profile, ft: float
) -> Check:
    """Inlets (§ 540-7B(3)(a)[2]) in the site or within the policy's inlet reach, each with protection near it."""
    inlets = lay.get("inlets")
    if inlets is None:
        return make_check(prof, "inlets", "look", "review_inlets_no_layer")
    g = inlets.geometry.to_numpy()
    near = g[shapely.dwithin(g, site, _pol(prof, "inlet_reach") * ft)]
    guards = bmp[with_role(codes, "inlet")]
    bare = [x for x in near if not (len(guards) and shapely.dwithin(guards, x, _pol(prof, "inlet_bmp") * ft).any())]
    if len(near) == 0:
        return make_check(prof, "inlets", "n/a", "review_inlets_none_near")
    if bare:
        return make_check(prof, "inlets", "fail", "review_inlets_unprotected", bare=len(bare), inlets=len(near))
    return make_check(prof, "inlets", "pass", "review_inlets_protected", inlets=len(near))


@dataclass(frozen=True)
class _Edges:
    """The disturbance's edge cut into segments: ends, lengths in feet, CRS."""

    a: np.ndarray
    b: np.ndarray
    length_ft: np.ndarray
    crs: Any


def _edge_check(
    prof: Profile,
    check: str,
    edges: _Edges,
    facing: np.ndarray,
    bare: np.ndarray,
    share: float,
    lay: dict[str, gpd.GeoDataFrame],
    layer: str,
) -> Check:
    """Judge the edges that need a BMP (``facing``) by the share left ``bare``; map the bare ones.

    The check fails when more than ``share`` of the facing length is bare (its
    ``review_<check>_open`` finding), else passes (``review_<check>_covered``).
    """
    total, open_ft = float(edges.length_ft[facing].sum()), float(edges.length_ft[bare].sum())
    if open_ft:
        lay[layer] = gpd.GeoDataFrame(geometry=[segments_geometry(edges.a[bare], edges.b[bare])], crs=edges.crs)
    fail = total > 0 and open_ft > share * total
    finding = f"review_{check}_open" if fail else f"review_{check}_covered"
    return make_check(prof, check, "fail" if fail else "pass", finding, open_ft=open_ft, total_ft=total)


def _bmp_checks(
    lay: dict[str, gpd.GeoDataFrame],
    site: Any,
    dist: Any,
    bmp: np.ndarray,
    codes: np.ndarray,
    ls: LayerSet,
    prof: Profile,
    ft: float,
) -> list[Check]:
    out = [_tracking(lay, site, bmp, codes, prof, ft), _inlets(lay, site, bmp, codes, prof, ft)]
    perimeter = bmp[with_role(codes, "perimeter")]
    reach = _pol(prof, "bmp_reach") * ft
    share = _pol(prof, "uncovered_share") / 100
    a, b, normal = edge_segments(np.array([dist]), 10 * ft)
    seg_len = np.hypot(*(b - a).T) / ft
    # Perimeter control on the downslope edges, from the DEM (§ 540-7B(3)(a)[3], [4]).
    if ls.dem_path is None:
        out.append(make_check(prof, "perimeter", "look", "review_perimeter_no_dem"))
    else:
        from esc_gis.terrain import sample_dem

        down = downslope(a, b, normal, lambda xy: sample_dem(xy, ls.crs, ls.dem or ls.dem_path), 10 * ft)
        bare = down & ~covered(a, b, perimeter, reach)
        if float(seg_len[down].sum()) == 0:
            out.append(make_check(prof, "perimeter", "look", "review_perimeter_flat"))
        else:
            edges = _Edges(a, b, seg_len, ls.crs)
            out.append(_edge_check(prof, "perimeter", edges, down, bare, share, lay, "downslope_unprotected"))
    # BMPs between the disturbance and any water (§ 540-7B(4)).
    waters = ls.waters.geometry.to_numpy() if ls.waters is not None and len(ls.waters) else np.empty(0, dtype=object)
    near = waters[shapely.dwithin(waters, dist, _pol(prof, "water_reach") * ft)] if len(waters) else waters
    if len(near) == 0:
        out.append(make_check(prof, "waters", "n/a", "review_waters_none_near"))
    else:
        wet = shapely.union_all(near)
        mid = (a + b) / 2
        to_water = shapely.get_coordinates(shapely.shortest_line(shapely.points(mid), wet))[1::2] - mid
        dist_ft = np.hypot(*to_water.T) / ft
        facing = ((to_water * normal).sum(axis=1) > 0) & (dist_ft <= _pol(prof, "water_reach"))
        guards = np.concatenate([perimeter, bmp[with_role(codes, "trap") | with_role(codes, "buffer")]])
        bare = facing & ~covered(a, b, guards, reach)
        edges = _Edges(a, b, seg_len, ls.crs)
        out.append(_edge_check(prof, "waters", edges, facing, bare, share, lay, "water_edge_unprotected"))
    out.append(_stockpiles(lay, bmp, codes, perimeter, reach, prof))
    return out


def _stockpiles(
    lay: dict[str, gpd.GeoDataFrame],
    bmp: np.ndarray,
    codes: np.ndarray,
    perimeter: np.ndarray,
    reach: float,
    prof: Profile,
) -> Check:
    """Stockpiles kept longer than the stockpile deadline: cover or perimeter control (§ 540-7B(3)(a)[6])."""
    piles = lay.get("stockpiles")
    if piles is None:
        return make_check(prof, "stockpiles", "n/a", "review_stockpiles_none")
    limit = float(prof.entry("deadlines.stockpile").value or 0)
    days = piles["days"].to_numpy(dtype=float) if "days" in piles else np.full(len(piles), np.nan)
    said_cover = (
        piles["cover"].fillna(False).astype(bool).to_numpy() if "cover" in piles else np.zeros(len(piles), bool)
    )
    g = piles.geometry.to_numpy()
    shield = np.concatenate([perimeter, bmp[with_role(codes, "cover")]])
    guarded = shapely.dwithin(g[:, None], shield[None, :], reach).any(axis=1) if len(shield) else np.zeros(len(g), bool)
    long = ~(days <= limit)  # unknown durations count as long
    bare = long & ~(said_cover | guarded)
    if bare.any():
        return make_check(
            prof, "stockpiles", "fail", "review_stockpiles_bare", bare=int(bare.sum()), long=int(long.sum())
        )
    return make_check(prof, "stockpiles", "pass", "review_stockpiles_covered", long=int(long.sum()))


def _schedule(facts: dict[str, Any], prof: Profile) -> Check:
    """Check the schedule against the permit's validity (§ 540-8G) and the inspections it implies (§ 540-8E(6))."""
    sched = facts.get("schedule") or {}
    start, end = sched.get("start"), sched.get("end")
    if not isinstance(start, date) or not isinstance(end, date):
        return make_check(prof, "schedule", "n/a", "review_schedule_no_dates")
    if end < start:
        return make_check(prof, "schedule", "fail", "review_schedule_reversed", start=start, end=end)
    days = (end - start).days
    validity = float(prof.entry("deadlines.permit_validity").value or 0)
    step = float(prof.entry("deadlines.permit_extension").value or 0)
    interval = float(prof.entry("deadlines.inspection_interval").value or 7)
    weeks = int(np.ceil(days / interval))
    if days > validity:
        n = int(np.ceil((days - validity) / step)) if step > 0 else 1
        return make_check(prof, "schedule", "look", "review_schedule_long", days=days, weeks=weeks, extensions=n)
    return make_check(prof, "schedule", "pass", "review_schedule_within", days=days, weeks=weeks)


# The applicant's RUSLE2 slope figures in plan.toml's [rusle2] table, and how each is written.
_APPLICANT_LS = (("ls", "LS {:g}"), ("slope_length_ft", "slope length {:g} ft"), ("slope_pct", "steepness {:g} %"))


def applicant_ls_text(rusle2: dict[str, Any]) -> str:
    """Write the applicant's LS, slope length and steepness (those given as numbers), or "".

    Examples
    --------
    >>> applicant_ls_text({"ls": 0.8, "slope_length_ft": 60, "slope_pct": True})
    'LS 0.8, slope length 60 ft'
    >>> applicant_ls_text({})
    ''
    """
    parts = []
    for key, fmt in _APPLICANT_LS:
        v = rusle2.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            parts.append(fmt.format(v))
    return ", ".join(parts)


def _rusle_ls(facts: dict[str, Any], dist: shapely.Geometry | None, ls: LayerSet, prof: Profile) -> Check:
    """Compare the applicant's RUSLE2 LS / slope length / steepness with LS computed on the DEM.

    A ``look`` when compared or not computable: the DEM's LS (the mean over the disturbed area inside the method,
    and the WDNR sheet's representative worst-case slope) is evidence for the reviewer, not a
    ruling; item 9 (``plan_item_9``) still rests only on the items being present. When the
    package or layer set lacks what is needed, the check says why; it never raises for that.
    A plan giving no LS figures gets ``n/a`` (nothing to compare).
    """
    applicant = applicant_ls_text(facts.get("rusle2") or {})
    if not applicant:
        # Nothing to compare: n/a rather than a look, so a plan giving only the load (all item 9
        # asks) is not held up; the reason is still shown.
        reason = "the plan gives no RUSLE2 LS, slope length or steepness"
        return make_check(prof, "rusle_ls", "n/a", "review_rusle_ls_not_computed", reason=reason)
    reason = ""
    if dist is None:
        reason = "the plan draws no limits of land disturbance"
    elif ls.dem is None and ls.dem_path is None:
        reason = "the Village's layers have no elevation model (DEM)"
    if reason:
        return make_check(prof, "rusle_ls", "look", "review_rusle_ls_not_computed", reason=reason)
    from esc_gis.soil.soil_loss import site_ls, soil_loss_tables
    from esc_gis.terrain.dem import open_dem

    try:
        tables = soil_loss_tables(prof)
        info = ls.dem or open_dem(ls.dem_path or "", z_unit=ls.dem_z_unit, band=ls.dem_band)
        grid = site_ls(
            np.array([dist], dtype=object),
            ls.crs,
            info,
            max_slope_pct=tables.max_slope_pct,
            max_slope_length_ft=tables.max_slope_length_ft,
        )[0]
    except EscGisError as exc:
        return make_check(prof, "rusle_ls", "look", "review_rusle_ls_not_computed", reason=str(exc))
    if grid is None or not np.isfinite(grid.mean_ls):
        return make_check(
            prof, "rusle_ls", "look", "review_rusle_ls_not_computed", reason="the DEM does not cover the disturbed area"
        )
    return make_check(
        prof,
        "rusle_ls",
        "look",
        "review_rusle_ls_compared",
        applicant=applicant,
        dem_ls=grid.mean_ls,
        rep_ls=grid.representative_ls,
        rep_slope_pct=grid.representative_slope_pct,
        rep_length_ft=grid.representative_length_ft,
        outside_pct=100 * grid.outside_share,
    )


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(v))


def _soil_loss_inputs(pkg: PlanPackage, ls: LayerSet, prof: Profile) -> tuple[dict[str, Any], float, str, str] | str:
    """Gather the recomputation's inputs: keyword arguments of soil_loss, R, and where R and K came from.

    Returns the reason it cannot be done instead, when something is missing.
    """
    from esc_gis.soil.schedule import read_schedule
    from esc_gis.soil.soil_loss import read_ei_distribution, soil_loss_tables

    rusle = pkg.facts.get("rusle2") or {}
    tables = soil_loss_tables(prof)
    # R: the profile's when it holds one, else the applicant's own (named as such in the finding).
    r_annual: float | None
    if tables.r_annual is not None:
        r_annual, r_value, r_from = None, tables.r_annual.value, "the profile"
    elif _number(rusle.get("r_annual")) and rusle["r_annual"] > 0:
        r_annual, r_from = float(rusle["r_annual"]), "the plan"
        r_value = r_annual
    else:
        return "no annual R factor: the profile holds none and the plan gives none"
    ei_file = rusle.get("ei_file")
    if not isinstance(ei_file, str) or not ei_file.strip():
        return (
            "the plan names no erosivity distribution file (where its share of the annual R comes from), "
            "and the profile holds none"
        )
    kw: dict[str, Any] = {"r_annual": r_annual, "r_source": r_from, "ei_source": f"the plan's {ei_file}"}
    if ls.soils is not None:
        kw.update(soils=ls.soils, k_field=ls.soils_k_field, soils_source="the layer set's soils")
        k_from = "the layer set's soils"
    elif _number(rusle.get("k")):
        kw["k"], k_from = float(rusle["k"]), "the plan"
    else:
        return "no soil erodibility K: the Village's layers have no soils and the plan gives no K"
    # Beside plan.toml, inside the package's archive when it came as one.
    kw["ei_daily"] = read_ei_distribution(pkg.file(ei_file))
    kw["schedule"] = read_schedule(pkg.file(str(rusle["schedule_file"])), tables.covers, tables.practices)
    return kw, r_value, r_from, k_from


def _soil_loss(
    pkg: PlanPackage,
    dist: shapely.Geometry | None,
    ls: LayerSet,
    prof: Profile,
    plan_sqft: float | None = None,
    sediment: bool | None = None,
) -> Check:
    """Recompute the applicant's sediment discharge on the DEM and soils, with the package's own schedule.

    The package's ``[rusle2]`` names its phased schedule (``schedule_file``, the format of
    ``esc-gis soil-loss --schedule``) and the erosivity distribution its %R came from
    (``ei_file``); R is the profile's, else the applicant's ``r_annual``; K the layer set's
    soils, else the applicant's ``k``. The governing window's discharge is compared with the
    applicant's ``sediment_tons_per_acre_year``: ``pass`` within the profile's
    ``policy.review_soil_loss_tolerance`` of the review's figure, else ``look``. Never a
    ``fail``: item 9 (``plan_item_9``) still rests only on the items being present. ``n/a``
    when the plan gives no schedule file or no figure (nothing to compare); a ``look`` with the
    reason when the layer set or the package lacks something else.
    """
    from esc_gis.soil.soil_loss import soil_loss

    rusle = pkg.facts.get("rusle2") or {}
    claimed = rusle.get("sediment_tons_per_acre_year")

    def not_computed(status: str, reason: str) -> Check:
        return make_check(prof, "soil_loss", status, "review_soil_loss_not_computed", reason=reason)

    if not isinstance(rusle.get("schedule_file"), str) or not str(rusle["schedule_file"]).strip():
        return not_computed("n/a", "the plan names no phased construction schedule file for RUSLE2")
    if not _number(claimed):
        return not_computed("n/a", "the plan gives no RUSLE2 sediment load to compare")
    if dist is None:
        return not_computed("look", "the plan draws no limits of land disturbance")
    if ls.dem is None and ls.dem_path is None:
        return not_computed("look", "the Village's layers have no elevation model (DEM)")
    try:
        got = _soil_loss_inputs(pkg, ls, prof)
        if isinstance(got, str):
            return not_computed("look", got)
        kw, r_value, r_from, k_from = got
        sites = gpd.GeoDataFrame({"site_id": ["plan"]}, geometry=[dist], crs=ls.crs)
        dem = ls.dem or ls.dem_path or ""
        res = soil_loss(
            sites, dem, profile=prof, z_unit=ls.dem_z_unit, band=ls.dem_band, plan_disturbed_sqft=plan_sqft, **kw
        )
    except EscGisError as exc:
        return not_computed("look", " ".join(str(exc).split()))
    row = res.sites.iloc[0]
    if not np.isfinite(row["k"]):
        return not_computed("look", "the soils layer gives no K for the disturbed area")
    if not np.isfinite(row["discharge_tpa"]):
        return not_computed("look", "the DEM gives no LS inside the method for the disturbed area")
    computed, applicant = float(row["discharge_tpa"]), float(claimed or 0)  # a number: checked above
    tol = _pol(prof, "soil_loss_tolerance") / 100
    gov = res.windows[res.windows["governs"]].iloc[0]
    diff = (applicant - computed) / computed if computed > 0 else (0.0 if applicant == 0 else float("inf"))
    agrees = abs(applicant - computed) <= tol * computed
    # Agreeing with the applicant is not enough: the review's own figure must meet the standard,
    # where the standard applies (§ 540-7B(3)(b): sites of the sediment area or more, counting
    # the common plan, the one acre test screening and soil loss use).
    # ``sediment`` is the review's decision (the screening's, on the plan's total when larger).
    applies = (
        bool(sediment) if sediment is not None else bool(sediment_standard_reaches(row["plan_disturbed_sqft"], prof))
    )
    over = applies and computed > float(prof.entry("thresholds.sediment_load").value or 0)
    finding = (
        "review_soil_loss_over_standard"
        if over
        else ("review_soil_loss_agrees" if agrees else "review_soil_loss_differs")
    )
    return make_check(
        prof,
        "soil_loss",
        "pass" if agrees and not over else "look",
        finding,
        applicant_tpa=applicant,
        computed_tpa=computed,
        diff_share=diff,
        soil_loss_tpa=float(row["soil_loss_tpa"]),
        window_start=gov["start"],
        window_end=gov["end"],
        r_annual=r_value,
        r_from=r_from,
        k=float(row["k"]),
        k_from=k_from,
        ls=float(row["ls_mean"]),
        outside_pct=100 * float(row["outside_share"]),
    )
