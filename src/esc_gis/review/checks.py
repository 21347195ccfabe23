"""The plan-review checks: pure functions from a package's facts and measurements to findings.

Each check returns a :class:`Check` with a status:

``pass``   the plan shows it;
``fail``   the plan does not meet the article: a written reason for disapproval (§ 540-8C(3));
``look``   the reviewer must decide (a judgement, or data the package lacks);
``n/a``    the item does not apply to this site.

The geometric helpers (:func:`edge_segments`, :func:`downslope`, :func:`covered`) work on
the disturbed limits cut into short segments, vectorised over the segments.
"""

from __future__ import annotations

__all__ = ["STATUSES", "Check", "edge_segments", "plan_items"]

from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from esc_gis.profile import Profile

STATUSES = ("fail", "look", "pass", "n/a")


@dataclass(frozen=True)
class Check:
    """One line of the review's checklist."""

    code: str
    title: str
    section: str
    status: str
    detail: str


def _has(d: dict[str, Any], *keys: str) -> bool:
    return all(str(d.get(k) or "").strip() for k in keys)


def plan_items(facts: dict[str, Any], layers: set[str], bmp_codes: list[str | None], *, computed_standards: str,
               disturbed_acres: float, profile: Profile) -> list[Check]:  # fmt: skip
    """Check the nine items of § 540-9A against the package.

    Parameters
    ----------
    facts : dict
        ``plan.toml``.
    layers : set of str
        The usable layers of the package.
    bmp_codes : list
        Each BMP's standard number (:func:`esc_gis.review.bmps.classify`); None when unknown.
    computed_standards : str
        The standards the screening engine found ("540-7A" or "540-7B").
    disturbed_acres : float
        The drawn disturbance, for the sediment standard of § 540-7B(3)(b).
    profile : Profile

    Returns
    -------
    list of Check
    """
    out = []
    owner = facts.get("landowner") or {}
    parties = facts.get("responsible_parties") or []
    people = [owner, *parties] if owner else list(parties)
    complete = [p for p in people if _has(p, "name", "address", "phone")]
    if owner and parties and len(complete) == len(people):
        status, detail = "pass", f"landowner and {len(parties)} responsible part{'y' if len(parties) == 1 else 'ies'}"
    elif not people:
        status, detail = "fail", "no landowner or responsible party is named"
    else:
        lacking = [f"{p.get('name') or '(unnamed)'} has no "
                   f"{', '.join(k for k in ('name', 'address', 'phone') if not _has(p, k))}"
                   for p in people if p not in complete]  # fmt: skip
        missing = ([] if owner else ["no landowner"]) + ([] if parties else ["no responsible party"])
        status, detail = "fail", "; ".join(missing + lacking)
    out.append(Check("540-9A(1)", "Names, addresses and phones of the landowner and responsible parties",
                     "§ 540-9A(1)", status, detail))  # fmt: skip
    site = facts.get("site") or {}
    out.append(Check("540-9A(2)", "Legal description of the property", "§ 540-9A(2)",
                     "pass" if _has(site, "legal_description") else "fail",
                     "given" if _has(site, "legal_description") else "no legal_description in [site]"))  # fmt: skip
    need = ["site_boundary", "disturbed_limits", "drainage"]
    lacking_layers = [n for n in need if n not in layers]
    out.append(Check("540-9A(3)", "Site map: property lines, disturbed limits, drainage patterns", "§ 540-9A(3)",
                     "fail" if lacking_layers else "pass",
                     f"missing {', '.join(lacking_layers)}" if lacking_layers else "all three drawn"))  # fmt: skip
    claimed = [k for k in ("site_area_sqft", "disturbed_area_sqft") if isinstance(site.get(k), (int, float))]
    out.append(Check("540-9A(4)", "Total site area and area to be disturbed", "§ 540-9A(4)",
                     "pass" if len(claimed) == 2 else "fail",
                     "both stated (compared with the drawing below)" if len(claimed) == 2
                     else "state site_area_sqft and disturbed_area_sqft in [site]"))  # fmt: skip
    stated = [str(s).replace("§", "").strip() for s in (site.get("performance_standards") or [])]
    if not stated:
        out.append(Check("540-9A(5)", "Performance standards applicable to the site", "§ 540-9A(5)", "fail",
                         f"none stated; the drawn disturbance makes § {computed_standards} apply"))  # fmt: skip
    elif computed_standards not in stated:
        out.append(Check("540-9A(5)", "Performance standards applicable to the site", "§ 540-9A(5)", "fail",
                         f"the plan states {', '.join(stated)}; the drawn disturbance makes § {computed_standards} "
                         "apply"))  # fmt: skip
    else:
        out.append(Check("540-9A(5)", "Performance standards applicable to the site", "§ 540-9A(5)", "pass",
                         f"§ {computed_standards}, as the drawing shows"))  # fmt: skip
    known = [c for c in bmp_codes if c is not None]
    unknown = len(bmp_codes) - len(known)
    if "bmps" not in layers or not bmp_codes:
        status, detail = "fail", "no BMPs drawn"
    elif unknown:
        status, detail = "look", f"{len(known)} BMPs of known types; {unknown} with a type not in the WDNR standards"
    else:
        status, detail = "pass", f"{len(known)} BMPs, standards {', '.join(sorted(set(known)))}"
    out.append(Check("540-9A(6)", "Proposed best management practices", "§ 540-9A(6)", status, detail))
    narrative = facts.get("narrative") or {}
    out.append(Check("540-9A(7)", "Erosion and sediment control plan narrative", "§ 540-9A(7)",
                     "pass" if _has(narrative, "text") else "fail",
                     "given" if _has(narrative, "text") else "no [narrative] text"))  # fmt: skip
    schedule = facts.get("schedule") or {}
    has_sched = bool(schedule.get("start")) and bool(schedule.get("end")) and bool(schedule.get("sequence"))
    out.append(Check("540-9A(8)", "Construction sequence and schedule", "§ 540-9A(8)",
                     "pass" if has_sched else "fail",
                     "start, end and sequence given" if has_sched
                     else "[schedule] needs start, end and sequence"))  # fmt: skip
    out.append(_rusle(facts, disturbed_acres, profile))
    spill = _has(narrative, "spill_procedures")
    out.append(Check("540-7B(3)(c)[4]", "Spill prevention and response procedures", "§ 540-7B(3)(c)[4]",
                     "pass" if spill else "fail",
                     "given" if spill else "no spill_procedures in [narrative]"))  # fmt: skip
    return out


def _rusle(facts: dict[str, Any], disturbed_acres: float, profile: Profile) -> Check:
    """§ 540-9A(9): the Reference Guide's items and RUSLE2; at one acre, the sediment standard."""
    e = profile.entry("thresholds.sediment_load")
    limit = float(e.value or 0)
    load = (facts.get("rusle2") or {}).get("sediment_tons_per_acre_year")
    title = "Reference Guide items and RUSLE2 (sediment load)"
    if disturbed_acres < 1.0:
        return Check("540-9A(9)", title, "§ 540-9A(9); § 540-7B(3)(b)", "pass",
                     f"{disturbed_acres:.2f} acres disturbed: under one acre, so no RUSLE2 sediment load "
                     "is needed")  # fmt: skip
    if not isinstance(load, (int, float)):
        return Check("540-9A(9)", title, f"§ 540-9A(9); {e.cite}", "fail",
                     f"{disturbed_acres:.2f} acres disturbed: give the RUSLE2 sediment load "
                     f"([rusle2] sediment_tons_per_acre_year) to show {limit:g} t/ac/yr is met")  # fmt: skip
    if load > limit and not str((facts.get("rusle2") or {}).get("explanation") or "").strip():
        return Check("540-9A(9)", title, f"§ 540-9A(9); {e.cite}", "fail",
                     f"RUSLE2 gives {load:g} t/ac/yr, over {limit:g}, with no site-specific explanation "
                     "(§ 540-7B(3)(b)[3])")  # fmt: skip
    status = "pass" if load <= limit else "look"
    return Check("540-9A(9)", title, f"§ 540-9A(9); {e.cite}", status,
                 f"RUSLE2 gives {load:g} t/ac/yr (standard {limit:g})"
                 + ("" if status == "pass" else "; the explanation needs a look"))  # fmt: skip


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
