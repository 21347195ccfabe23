"""Review a plan package: read -> measuring CRS -> measure (screening, DEM, waters) -> checks -> verdict.

:func:`review_plan` never prints and never writes; ``esc-gis review`` wraps it and
:mod:`esc_gis.review.report` turns its :class:`Review` into the HTML page.
"""

from __future__ import annotations

__all__ = ["Review", "review_plan"]

import os
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

from esc_gis.crs import to_measuring_crs
from esc_gis.errors import EscGisError, Problem
from esc_gis.layers import LayerSet, load_layers
from esc_gis.measure import area_sqft
from esc_gis.profile import Profile, load_profile
from esc_gis.review.bmps import STANDARDS, classify, with_role
from esc_gis.review.checks import Check, covered, downslope, edge_segments, plan_items, segments_geometry
from esc_gis.review.package import read_package
from esc_gis.units import SQFT_PER_ACRE, ft_to_crs_units

#: The verdicts, from the checks' worst status.
VERDICTS = {"fail": "disapprove", "look": "needs a look", "pass": "approve"}


@dataclass
class Review:
    """The outcome of a plan review.

    Attributes
    ----------
    source : str
    verdict : str
        "approve", "needs a look" or "disapprove".
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
    """

    source: str
    verdict: str
    checks: list[Check]
    problems: list[Problem]
    facts: dict[str, Any]
    layers: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    measured: dict[str, Any] = field(default_factory=dict)

    @property
    def reasons(self) -> list[str]:
        """A draft of the written reasons for disapproval (§ 540-8C(3)): every failed check, cited."""
        return [f"{c.title}: {c.detail} ({c.section})." for c in self.checks if c.status == "fail"]

    def to_dict(self) -> dict[str, Any]:
        """Return the review as JSON-ready data (no geometry)."""
        return {"source": self.source, "verdict": self.verdict, "measured": self.measured,
                "checks": [c.__dict__ for c in self.checks], "reasons": self.reasons,
                "package_problems": [str(p) for p in self.problems]}  # fmt: skip


def _pol(profile: Profile, key: str) -> float:
    return float(profile.entry(f"policy.review_{key}").value or 0)


def _union(gdf: gpd.GeoDataFrame | None) -> shapely.Geometry | None:
    if gdf is None or len(gdf) == 0:
        return None
    return shapely.union_all(gdf.geometry.to_numpy())


def review_plan(path: str | os.PathLike[str], *, layers: str | os.PathLike[str] | LayerSet | None = None,
                profile: str | os.PathLike[str] | Profile | None = None) -> Review:  # fmt: skip
    """Check a plan package against § 540-9A and § 540-7B.

    Parameters
    ----------
    path : path-like
        The package: a ``.gpkg``, a ``.dxf`` or a folder, with ``plan.toml`` (see
        :mod:`esc_gis.review.package`).
    layers : path or LayerSet, optional
        The Village's layers (boundary, waters, DEM); default the Village's own.
    profile : path or Profile, optional

    Returns
    -------
    Review
        Also for a broken package: its problems are in the review, not raised.

    Raises
    ------
    LayerSetError, ProfileError
        If the layer set or profile (the reviewer's own set-up) is unusable.
    """
    prof = profile if isinstance(profile, Profile) else load_profile(None if profile is None else Path(profile))
    ls = layers if isinstance(layers, LayerSet) else load_layers(None if layers is None else Path(layers), profile=prof)
    pkg = read_package(path)
    lay: dict[str, gpd.GeoDataFrame] = {}
    for name, gdf in pkg.layers.items():
        try:
            lay[name] = to_measuring_crs(gdf, ls.crs)
        except EscGisError as exc:
            pkg.problems.append(Problem(pkg.source, None, f"layer {name}: {exc}", "check its CRS."))
    ft = ft_to_crs_units(1.0, ls.crs)
    site, dist = _union(lay.get("site_boundary")), _union(lay.get("disturbed_limits"))
    bmps = lay.get("bmps")
    codes: list[str | None] = []
    if bmps is not None:
        if "type" not in bmps.columns:
            pkg.problems.append(Problem(pkg.source, None, "layer bmps has no `type` field.",
                                        "give each BMP its WDNR standard, e.g. 1056 (silt fence)."))  # fmt: skip
            codes = [None] * len(bmps)
        else:
            codes = [classify(v) for v in bmps["type"]]
        bmps = bmps.assign(standard=codes,
                           standard_name=[STANDARDS[c][0] if c in STANDARDS else "unknown" for c in codes])  # fmt: skip
        lay["bmps"] = bmps
    code_arr = np.array(codes, dtype=object)
    bmp_geoms = bmps.geometry.to_numpy() if bmps is not None else np.empty(0, dtype=object)

    measured: dict[str, Any] = {}
    checks: list[Check] = []
    res = None
    if site is not None and dist is not None:
        from esc_gis.screening import screen

        sites = gpd.GeoDataFrame({"site_id": ["plan"]}, geometry=[site], crs=ls.crs)
        disturbed = gpd.GeoDataFrame({"site_id": ["plan"]}, geometry=[dist], crs=ls.crs)
        res = screen(sites, disturbed=disturbed, layers=ls, profile=prof).iloc[0]
        measured = {
            "site_sqft": float(area_sqft(np.array([site]), ls.crs)[0]),
            "disturbed_sqft": float(area_sqft(np.array([dist]), ls.crs)[0]),
            "disturbed_in_village_sqft": float(res["disturbed_in_village_sqft"]),
            "jurisdiction": str(res["jurisdiction"]), "permit": str(res["permit"]),
            "standards": str(res["standards"]), "sediment_standard": bool(res["sediment_standard"]),
            "steep_disturbed_sqft": float(res["steep_disturbed_sqft"]),
            "protective_disturbed_sqft": float(res["protective_disturbed_sqft"]),
        }  # fmt: skip
    acres = measured.get("disturbed_sqft", 0.0) / SQFT_PER_ACRE
    checks += plan_items(pkg.facts, set(lay), codes, computed_standards=measured.get("standards", "540-7B"),
                         disturbed_acres=acres, profile=prof)  # fmt: skip
    if res is None:
        checks.append(Check("map", "Drawn site and disturbance", "§ 540-9A(3)", "fail",
                            "without site_boundary and disturbed_limits nothing can be measured"))  # fmt: skip
    else:
        checks += _area_checks(pkg.facts, site, dist, measured, prof, ls)
        checks.append(_decision(measured, prof))
        checks += _terrain_water_checks(measured, prof)
        checks += _bmp_checks(lay, site, dist, bmp_geoms, code_arr, ls, prof, ft)
    checks.append(_schedule(pkg.facts, prof))
    worst = next((s for s in ("fail", "look") if any(c.status == s for c in checks)), "pass")
    if pkg.problems and worst == "pass":
        worst = "look"
    return Review(pkg.source, VERDICTS[worst], checks, pkg.problems, pkg.facts, lay, measured)


def _area_checks(facts: dict[str, Any], site: Any, dist: Any, m: dict[str, Any], prof: Profile,
                 ls: LayerSet) -> list[Check]:  # fmt: skip
    out = []
    outside = float(area_sqft(np.array([shapely.difference(dist, site)]), ls.crs)[0])
    sliver = float(prof.entry("policy.sliver").value or 0)
    out.append(Check("limits", "Disturbed limits inside the site boundary", "§ 540-9A(3)",
                     "fail" if outside > sliver else "pass",
                     f"{outside:,.0f} sq ft of the disturbance lies outside the property lines" if outside > sliver
                     else "inside"))  # fmt: skip
    claimed_site = (facts.get("site") or {}).get("site_area_sqft")
    claimed_dist = (facts.get("site") or {}).get("disturbed_area_sqft")
    tol = _pol(prof, "area_tolerance") / 100
    permit = prof.entry("thresholds.permit_area")
    acre = prof.entry("thresholds.sediment_area")
    limits = [(float(prof.area_sqft("thresholds.permit_area")), permit.cite, "the permit threshold"),
              (float(prof.area_sqft("thresholds.sediment_area")), acre.cite,
               "the one-acre sediment standard")]  # fmt: skip
    for label, claimed, drawn, flips in (("site", claimed_site, m["site_sqft"], []),
                                         ("disturbed", claimed_dist, m["disturbed_sqft"], limits)):  # fmt: skip
        code, title = f"area_{label}", f"Claimed {label} area against the drawing"
        if not isinstance(claimed, (int, float)):
            out.append(Check(code, title, "§ 540-9A(4)", "look", f"no claimed {label} area; the drawing shows "
                             f"{drawn:,.0f} sq ft"))  # fmt: skip
            continue
        flipped = [(t, cite, what) for t, cite, what in flips if (claimed >= t) != (drawn >= t)]
        if flipped:
            t, cite, what = flipped[0]
            out.append(Check(code, title, f"§ 540-9A(4); {cite}", "fail",
                             f"the plan says {claimed:,.0f} sq ft; the drawing shows {drawn:,.0f} sq ft, which is on "
                             f"the other side of {what} ({t:,.0f} sq ft)"))  # fmt: skip
        elif abs(claimed - drawn) > tol * max(drawn, 1.0):
            out.append(Check(code, title, "§ 540-9A(4)", "look",
                             f"the plan says {claimed:,.0f} sq ft; the drawing shows {drawn:,.0f} sq ft "
                             f"({(claimed - drawn) / max(drawn, 1.0):+.1%})"))  # fmt: skip
        else:
            out.append(Check(code, title, "§ 540-9A(4)", "pass", f"{claimed:,.0f} sq ft claimed, {drawn:,.0f} drawn"))
    return out


def _decision(m: dict[str, Any], prof: Profile) -> Check:
    if m["jurisdiction"] == "outside":
        return Check("decision", "Screening decision and standards", "§ 540-4B", "look",
                     "the site is outside the Village: the article does not apply here")  # fmt: skip
    sed = " and the sediment standard (one acre or more)" if m["sediment_standard"] else ""
    return Check("decision", "Screening decision and standards", "§ 540-4A; § 540-7", "pass",
                 f"permit {m['permit'].replace('_', ' ')}; § {m['standards']}{sed} apply to "
                 f"{m['disturbed_sqft']:,.0f} sq ft of disturbance")  # fmt: skip


def _terrain_water_checks(m: dict[str, Any], prof: Profile) -> list[Check]:
    steep = m["steep_disturbed_sqft"]
    if np.isnan(steep):
        s_status, s_detail = "look", "no DEM covers the site"
    elif steep > 0:
        s_status = "look"
        s_detail = f"{steep:,.0f} sq ft of the disturbance is on slopes of 20 % or more: the plan must minimise it"
    else:
        s_status, s_detail = "pass", "none"
    s = Check("steep", "Disturbance on slopes of 20 % or more", prof.entry("thresholds.steep_slope").cite,
              s_status, s_detail)  # fmt: skip
    prot = m["protective_disturbed_sqft"]
    p_detail = (f"{prot:,.0f} sq ft of the disturbance is in protective areas: keep the vegetation next to the "
                "water wherever possible") if prot > 0 else "none"  # fmt: skip
    p = Check("protective", "Disturbance in protective areas of waters", "§ 540-7B(3)(a)[3]; § 540-7B(3)(c)[1]",
              "look" if prot > 0 else "pass", p_detail)  # fmt: skip
    return [s, p]


def _bmp_checks(lay: dict[str, gpd.GeoDataFrame], site: Any, dist: Any, bmp: np.ndarray, codes: np.ndarray,
                ls: LayerSet, prof: Profile, ft: float) -> list[Check]:  # fmt: skip
    out = []
    perimeter = bmp[with_role(codes, "perimeter")]
    # Tracking onto streets (§ 540-7B(3)(a)[1]).
    streets = _union(lay.get("streets"))
    title, cite = "Tracking control where the site meets a street", "§ 540-7B(3)(a)[1]"
    if streets is None:
        out.append(Check("tracking", title, cite, "look", "no streets layer: check where vehicles leave the site"))
    else:
        contact = shapely.intersection(shapely.boundary(site),
                                       shapely.buffer(streets, _pol(prof, "street_contact") * ft))  # fmt: skip
        if shapely.is_empty(contact):
            out.append(Check("tracking", title, cite, "n/a", "the site meets no street"))
        else:
            pads = bmp[with_role(codes, "tracking")]
            pad_near = bool(len(pads)) and bool(shapely.dwithin(pads, contact, _pol(prof, "tracking_reach") * ft).any())
            out.append(Check("tracking", title, cite, "pass" if pad_near else "fail",
                             "a tracking control (1057) at the street" if pad_near else
                             "the site meets a street but no tracking control (1057) is drawn there"))  # fmt: skip
    # Inlets (§ 540-7B(3)(a)[2]).
    title, cite = "Inlet protection for inlets in or next to the site", "§ 540-7B(3)(a)[2]"
    inlets = lay.get("inlets")
    if inlets is None:
        out.append(Check("inlets", title, cite, "look", "no inlets layer: check for storm drain inlets near the site"))
    else:
        g = inlets.geometry.to_numpy()
        near = g[shapely.dwithin(g, site, _pol(prof, "inlet_reach") * ft)]
        guards = bmp[with_role(codes, "inlet")]
        bare = [x for x in near if not (len(guards) and shapely.dwithin(guards, x, _pol(prof, "inlet_bmp") * ft).any())]
        if len(near) == 0:
            out.append(Check("inlets", title, cite, "n/a", "no inlet in or next to the site"))
        else:
            out.append(Check("inlets", title, cite, "fail" if bare else "pass",
                             f"{len(bare)} of {len(near)} inlet(s) without inlet protection (1060)" if bare
                             else f"all {len(near)} inlet(s) protected (1060)"))  # fmt: skip
    reach = _pol(prof, "bmp_reach") * ft
    share = _pol(prof, "uncovered_share") / 100
    a, b, normal = edge_segments(np.array([dist]), 10 * ft)
    seg_len = np.hypot(*(b - a).T) / ft
    # Perimeter control on the downslope edges, from the DEM (§ 540-7B(3)(a)[3], [4]).
    title, cite = "Perimeter control on the downslope edges of the disturbance", "§ 540-7B(3)(a)[3]; § 540-7B(3)(a)[4]"
    if ls.dem_path is None:
        out.append(Check("perimeter", title, cite, "look", "no DEM in the layer set: check the downslope edges by eye"))
    else:
        from esc_gis.terrain import sample_dem

        down = downslope(a, b, normal, lambda xy: sample_dem(xy, ls.crs, ls.dem_path), 10 * ft)
        bare = down & ~covered(a, b, perimeter, reach)
        total, open_ft = float(seg_len[down].sum()), float(seg_len[bare].sum())
        if total == 0:
            out.append(Check("perimeter", title, cite, "look", "the DEM shows no downslope edge (flat ground)"))
        else:
            fail = open_ft > share * total
            out.append(Check("perimeter", title, cite, "fail" if fail else "pass",
                             f"{open_ft:,.0f} of {total:,.0f} ft of downslope edge without perimeter control"
                             + (" (shown in red on the map)" if fail else "")))  # fmt: skip
            if open_ft:
                lay["downslope_unprotected"] = gpd.GeoDataFrame(geometry=[segments_geometry(a[bare], b[bare])],
                                                                crs=ls.crs)  # fmt: skip
    # BMPs between the disturbance and any water (§ 540-7B(4)).
    title, cite = "BMPs between the disturbance and waters of the state", "§ 540-7B(4); § 540-7B(3)(a)[3]"
    waters = ls.waters.geometry.to_numpy() if ls.waters is not None and len(ls.waters) else np.empty(0, dtype=object)
    near = waters[shapely.dwithin(waters, dist, _pol(prof, "water_reach") * ft)] if len(waters) else waters
    if len(near) == 0:
        out.append(Check("waters", title, cite, "n/a", f"no water within {_pol(prof, 'water_reach'):g} ft"))
    else:
        wet = shapely.union_all(near)
        mid = (a + b) / 2
        to_water = shapely.get_coordinates(shapely.shortest_line(shapely.points(mid), wet))[1::2] - mid
        dist_ft = np.hypot(*to_water.T) / ft
        facing = ((to_water * normal).sum(axis=1) > 0) & (dist_ft <= _pol(prof, "water_reach"))
        guards = np.concatenate([perimeter, bmp[with_role(codes, "trap") | with_role(codes, "buffer")]])
        bare = facing & ~covered(a, b, guards, reach)
        total, open_ft = float(seg_len[facing].sum()), float(seg_len[bare].sum())
        fail = total > 0 and open_ft > share * total
        out.append(Check("waters", title, cite, "fail" if fail else "pass",
                         f"{open_ft:,.0f} of {total:,.0f} ft of the edge facing the water without a BMP"
                         + (" (shown in red on the map)" if fail else "")))  # fmt: skip
        if open_ft:
            lay["water_edge_unprotected"] = gpd.GeoDataFrame(geometry=[segments_geometry(a[bare], b[bare])], crs=ls.crs)
    # Stockpiles older than 7 days (§ 540-7B(3)(a)[6]).
    title, cite = "Stockpiles existing more than 7 days: cover or perimeter control", "§ 540-7B(3)(a)[6]"
    piles = lay.get("stockpiles")
    if piles is None:
        out.append(Check("stockpiles", title, cite, "n/a", "no stockpiles drawn"))
    else:
        limit = float(prof.entry("deadlines.stockpile").value or 7)
        days = piles["days"].to_numpy(dtype=float) if "days" in piles else np.full(len(piles), np.nan)
        said_cover = (piles["cover"].fillna(False).astype(bool).to_numpy() if "cover" in piles
                      else np.zeros(len(piles), bool))  # fmt: skip
        g = piles.geometry.to_numpy()
        shield = np.concatenate([perimeter, bmp[with_role(codes, "cover")]])
        guarded = (shapely.dwithin(g[:, None], shield[None, :], reach).any(axis=1) if len(shield)
                   else np.zeros(len(g), bool))  # fmt: skip
        long = ~(days <= limit)  # unknown durations count as long
        bare = long & ~(said_cover | guarded)
        out.append(Check("stockpiles", title, cite, "fail" if bare.any() else "pass",
                         f"{int(bare.sum())} of {int(long.sum())} stockpile(s) kept over {limit:g} days (or for an "
                         "unstated time) without cover or perimeter control" if bare.any()
                         else f"{int(long.sum())} long-lived stockpile(s), all covered or fenced"))  # fmt: skip
    return out


def _schedule(facts: dict[str, Any], prof: Profile) -> Check:
    sched = facts.get("schedule") or {}
    start, end = sched.get("start"), sched.get("end")
    title, cite = "Schedule: permit length and inspections", "§ 540-8G; § 540-8E(6)"
    if not isinstance(start, date) or not isinstance(end, date):
        return Check("schedule", title, cite, "n/a", "no dates to check (start = 2027-04-01, end = 2027-09-30)")
    if end < start:
        return Check("schedule", title, cite, "fail", f"the schedule ends ({end}) before it starts ({start})")
    days = (end - start).days
    validity = float(prof.entry("deadlines.permit_validity").value or 180)
    step = float(prof.entry("deadlines.permit_extension").value or 180)
    weeks = int(np.ceil(days / 7))
    text = f"{days} days of work: at least {weeks} weekly inspections plus one within 24 hours of each 0.5-inch rain"
    if days > validity:
        n = int(np.ceil((days - validity) / step))
        return Check("schedule", title, cite, "look",
                     f"{text}; longer than the {validity:g}-day permit: {n} extension(s) or a longer building "
                     "permit needed")  # fmt: skip
    return Check("schedule", title, cite, "pass", f"{text}; within the {validity:g}-day permit")
