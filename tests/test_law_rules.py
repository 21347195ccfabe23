"""The screening rules pinned at the law's edges, finding by finding, under both profiles.

A table of sites, each built to sit on one side of one edge, with the exact set of
findings it must get: a finding that appears where it does not belong fails as surely as
one that is missing. Every finding's message is compared with the profile's template
filled in with values worked out here by hand (areas, acres, shares), so a wrong value in
a message fails too. Thresholds are read from each profile, so the same table runs under
the Village's (4,000 sq ft, 1 acre) and the Town of Example's (2,000 sq ft, half an acre).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from esc_gis.errors import ProfileError
from esc_gis.profile import Profile, load_profile
from esc_gis.rules import (
    Measurements,
    applicability,
    counts_toward_plan,
    decide,
    decision_area,
    may_require_permit,
    permit_decision,
    run_findings,
    screening_reasons,
    sediment_standard_reaches,
)
from esc_gis.units import SQFT_PER_ACRE

EXAMPLE = Path(__file__).parent / "profiles" / "example.toml"
PROFILES = {"winneconne": load_profile(), "example": load_profile(EXAMPLE)}
ALL_LAYERS = {"has_waters": True, "has_targeted": True, "has_dem": True}


@pytest.fixture(params=sorted(PROFILES))
def prof(request: pytest.FixtureRequest) -> Profile:
    return PROFILES[request.param]


def thresholds(prof: Profile) -> tuple[float, float, float]:
    """The permit area, the sediment area and the NPDES-exempt area, in sq ft."""
    return (
        prof.area_sqft("thresholds.permit_area"),
        prof.area_sqft("thresholds.sediment_area"),
        prof.area_sqft("thresholds.npdes_exempt_area"),
    )


def got(d: Any, i: int = 0) -> dict[str, dict[str, str]]:
    return {f["code"]: f for f in json.loads(d.findings[i])}


def expect(prof: Profile, code: str, **values: Any) -> dict[str, str]:
    f = prof.finding(code, **values)
    return {"code": code, "section": f.section, "basis": f.basis, "message": f.message}


def plan_values(area: float) -> dict[str, float]:
    return {"plan_sqft": area, "plan_acres": area / SQFT_PER_ACRE}


# --- The table: one site per edge, with every finding it must get and no other -----------------


def cases(prof: Profile) -> list[tuple[str, dict[str, Any], dict[str, dict[str, Any]]]]:
    """(name, measurements, {code: values}) for every edge; values fill the message."""
    p, s, n = thresholds(prof)
    margin = float(prof.entry("policy.near_threshold").value) / 100
    small, big = p / 2, 2 * p  # clearly under and over the permit area, under the sediment area
    inside = {"jurisdiction_inside": {}}

    def area(a: float) -> dict[str, Any]:
        return {"disturbed_area": {"disturbed_sqft": a, "disturbed_acres": a / SQFT_PER_ACRE}}

    def no_permit(a: float) -> dict[str, Any]:
        return {**inside, **area(a), "permit_not_required": plan_values(a)}

    def permit(a: float, *, near: str | None = None) -> dict[str, Any]:
        out = {**inside, **area(a), "permit_required": plan_values(a)}
        out.update({"sediment_standard": plan_values(a)} if a >= s else {"less_stringent_possible": {}})
        if near:
            e = prof.entry(near)
            out["near_threshold"] = {
                "threshold": prof.names()[near.split(".")[1]],
                "margin_pct": margin * 100,
                **plan_values(a),
            }
            assert e.value is not None
        return out

    wet = {"protective_waters": "Mill Creek (stream, 75 ft)", "nearest_water": "Lake Poygan"}
    return [
        ("under the permit area", {"disturbed_sqft": small}, no_permit(small)),
        ("a zero-area site", {"disturbed_sqft": 0.0}, no_permit(0.0)),
        (
            "just outside the near-threshold margin",
            {"disturbed_sqft": p * (1 - margin) * 0.999},
            no_permit(p * (1 - margin) * 0.999),
        ),
        (
            "one ulp under the permit area",
            {"disturbed_sqft": float(np.nextafter(p, 0))},
            {
                **no_permit(float(np.nextafter(p, 0))),
                "near_threshold": {
                    "threshold": prof.names()["permit_area"],
                    "margin_pct": margin * 100,
                    **plan_values(float(np.nextafter(p, 0))),
                },
            },
        ),
        ("exactly the permit area", {"disturbed_sqft": p}, permit(p, near="thresholds.permit_area")),
        ("over the permit area", {"disturbed_sqft": big}, permit(big)),
        ("exactly the sediment area", {"disturbed_sqft": s}, permit(s, near="thresholds.sediment_area")),
        (
            "one ulp under the sediment area",
            {"disturbed_sqft": float(np.nextafter(s, 0))},
            permit(float(np.nextafter(s, 0)), near="thresholds.sediment_area"),
        ),
        ("far over the sediment area", {"disturbed_sqft": 3 * s}, permit(3 * s)),
        (
            "partly inside",
            {"jurisdiction": "partial", "disturbed_sqft": big, "disturbed_in_village_sqft": small},
            {
                **{k: v for k, v in permit(big).items() if k != "jurisdiction_inside"},
                "jurisdiction_partial": {"disturbed_sqft": big, "inside_sqft": small, "outside_sqft": big - small},
            },
        ),
        (
            "outside, with everything that would raise a duty inside",
            {
                "jurisdiction": "outside",
                "disturbed_sqft": 3 * s,
                "protective_disturbed_sqft": 50.0,
                "in_water_sqft": 5.0,
                "steep_disturbed_sqft": 100.0,
                "targeted_areas": "TMDL-1",
                **wet,
            },
            {"outside_jurisdiction": {}},
        ),
        ("a state agency's", {"state_agency": True, "disturbed_sqft": big}, {**inside, "state_agency": {}}),
        (
            "agricultural activity",
            {"activity": "agricultural_activity", "disturbed_sqft": big},
            {**inside, "agricultural_activity_exempt": {}},
        ),
        (
            "silviculture",
            {"activity": "silviculture", "disturbed_sqft": big},
            {**inside, "silviculture_exempt": {}},
        ),
        (
            "an agricultural production area",
            {"activity": "agricultural_production", "disturbed_sqft": big},
            {**permit(big), "agricultural_production_not_exempt": {}},
        ),
        (
            "overlapping limits",
            {"disturbed_sqft": small, "disturbed_parts_sqft": small + 0.01},
            {**no_permit(small), "overlaps_counted_once": {"disturbed_sqft": small, "parts_sqft": small + 0.01}},
        ),
        (
            "limits that touch but do not overlap",
            {"disturbed_sqft": small, "disturbed_parts_sqft": small * (1 + 1e-10)},
            no_permit(small),
        ),
        (
            "a small site in a plan over the permit area",
            {"disturbed_sqft": small, "plan_id": "Oak Ridge", "plan_site_count": 3, "plan_disturbed_sqft": big},
            {
                **inside,
                **area(small),
                "permit_required": plan_values(big),
                "less_stringent_possible": {},
                "common_plan": {"plan_id": "Oak Ridge", "plan_sites": 3, "plan_sites_s": "s", **plan_values(big)},
            },
        ),
        (
            "a plan of one site, some of it farmed",
            {"disturbed_sqft": small, "plan_id": "P1", "plan_site_count": 1, "plan_excluded_sqft": 250.0},
            {
                **no_permit(small),
                "common_plan": {"plan_id": "P1", "plan_sites": 1, "plan_sites_s": "", **plan_values(small)},
                "agricultural_area_not_counted": {"plan_id": "P1", "excluded_sqft": 250.0},
            },
        ),
        (
            "NPDES-exempt, just under its area",
            {"npdes_exempt": True, "disturbed_sqft": float(np.nextafter(n, 0))},
            {
                **inside,
                **area(float(np.nextafter(n, 0))),
                "npdes_exempt_under_1_acre": plan_values(float(np.nextafter(n, 0))),
                **(
                    {
                        "near_threshold": {
                            "threshold": prof.names()["sediment_area"],
                            "margin_pct": margin * 100,
                            **plan_values(float(np.nextafter(n, 0))),
                        }
                    }
                    if abs(n - s) <= margin * s
                    else {}
                ),
            },
        ),
        (
            "NPDES-exempt, exactly its area",
            {"npdes_exempt": True, "disturbed_sqft": n},
            {
                **permit(n, near="thresholds.sediment_area" if abs(n - s) <= margin * s else None),
                "npdes_exemption_not_applicable": plan_values(n),
            },
        ),
        (
            "permitted, in a protective area and in water, measured from a centreline, channel unverified",
            {
                "disturbed_sqft": big,
                "protective_disturbed_sqft": 120.0,
                "in_water_sqft": 7.5,
                "protective_from_centreline": True,
                "channel_unverified": "Ditch 4",
                "nearest_water_ft": 0.0,
                **wet,
            },
            {
                **permit(big),
                "protective_area": {"protective_sqft": 120.0, "waters": wet["protective_waters"]},
                "protective_area_from_centreline": {},
                "protective_channel_class_unverified": {"waters": "Ditch 4"},
                "in_water": {"in_water_sqft": 7.5},
            },
        ),
        (
            "unpermitted, in a protective area: a permit may be required",
            {"disturbed_sqft": small, "protective_disturbed_sqft": 0.5, "nearest_water_ft": 0.0, **wet},
            {
                **no_permit(small),
                "protective_area_if_permit": {"protective_sqft": 0.5, "waters": wet["protective_waters"]},
                "permit_may_be_required": {"reasons": _reason(prof, "reason_protective_area")},
            },
        ),
        (
            "unpermitted, in water and in a targeted area",
            {"disturbed_sqft": small, "in_water_sqft": 3.0, "targeted_areas": "TMDL-1", **wet},
            {
                **no_permit(small),
                "in_water_unpermitted": {"in_water_sqft": 3.0},
                "permit_may_be_required": {
                    "reasons": "; ".join(
                        [
                            _reason(prof, "reason_in_water"),
                            _reason(prof, "reason_targeted_area", areas="TMDL-1"),
                        ]
                    )
                },
            },
        ),
        (
            "NPDES-exempt and small, in water: § 540-8 does not apply, so no permit may be required",
            {"npdes_exempt": True, "disturbed_sqft": small, "in_water_sqft": 3.0, "targeted_areas": "TMDL-1"},
            {
                **inside,
                **area(small),
                "npdes_exempt_under_1_acre": plan_values(small),
                "in_water_unpermitted": {"in_water_sqft": 3.0},
            },
        ),
        (
            "permitted, near water",
            {"disturbed_sqft": big, "nearest_water_ft": 42.4, **wet},
            {**permit(big), "nearest_water": {"water": "Lake Poygan", "distance_ft": 42.4}},
        ),
        (
            "unpermitted, near water",
            {"disturbed_sqft": small, "nearest_water_ft": 900.0, **wet},
            {**no_permit(small), "nearest_water_unpermitted": {"water": "Lake Poygan", "distance_ft": 900.0}},
        ),
        (
            "permitted, in a targeted area",
            {"disturbed_sqft": big, "targeted_areas": "TMDL-1"},
            {**permit(big), "targeted_area": {"areas": "TMDL-1"}},
        ),
        (
            "an empty targeted-area name is no targeted area",
            {"disturbed_sqft": small, "targeted_areas": ""},
            no_permit(small),
        ),
        (
            "permitted, with steep slopes and a little off the DEM",
            {"disturbed_sqft": big, "steep_disturbed_sqft": big / 4, "steep_uncovered_sqft": 1.0},
            {**permit(big), "steep_slopes": {"steep_sqft": big / 4, "steep_share": 0.25}},
        ),
        (
            "permitted, no steep slopes, partly off the DEM",
            {"disturbed_sqft": big, "steep_disturbed_sqft": 0.0, "steep_uncovered_sqft": big / 8},
            {
                **permit(big),
                "no_steep_slopes": {},
                "dem_not_covering": {"uncovered_sqft": big / 8, "uncovered_share": 0.125},
            },
        ),
        (
            "permitted, steep slopes not measured (no DEM cover at all)",
            {"disturbed_sqft": big},
            permit(big),
        ),
        (
            "unpermitted, steep, near a protective area: worded 'if a permit is required'",
            {
                "disturbed_sqft": small,
                "steep_disturbed_sqft": small / 2,
                "steep_uncovered_sqft": small / 2,
                "protective_disturbed_sqft": 10.0,
                **wet,
            },
            {
                **no_permit(small),
                "protective_area_if_permit": {"protective_sqft": 10.0, "waters": wet["protective_waters"]},
                "permit_may_be_required": {"reasons": _reason(prof, "reason_protective_area")},
                "steep_slopes_if_permit": {"steep_sqft": small / 2, "steep_share": 0.5},
                "dem_not_covering": {"uncovered_sqft": small / 2, "uncovered_share": 0.5},
            },
        ),
        (
            "unpermitted and steep: no duty, nothing said",
            {"disturbed_sqft": small, "steep_disturbed_sqft": small / 2, "steep_uncovered_sqft": small / 2},
            no_permit(small),
        ),
        (
            "repaired geometry, limits outside the site, none named",
            {"disturbed_sqft": small, "repaired": True, "disturbed_outside_site_sqft": 1.5, "disturbed_count": 0},
            {
                **no_permit(small),
                "geometry_repaired": {},
                "disturbed_outside_site": {"outside_sqft": 1.5},
                # Taken as the whole site, named with its area (issue 46), never as 0 sq ft.
                "no_disturbed_limits": {"disturbed_sqft": small},
            },
        ),
        (
            "exactly at the near-threshold margin above the permit area",
            {"disturbed_sqft": p * (1 + margin)},
            {
                **permit(p * (1 + margin)),
                "near_threshold": {
                    "threshold": prof.names()["permit_area"],
                    "margin_pct": margin * 100,
                    **plan_values(p * (1 + margin)),
                },
            },
        ),
        (
            "limits overlapping by exactly the tolerance",
            {"disturbed_sqft": small, "disturbed_parts_sqft": small * (1 + 1e-9) + 1e-6},
            no_permit(small),
        ),
        (
            "half a square foot of the plan farmed",
            {"disturbed_sqft": small, "plan_id": "P2", "plan_excluded_sqft": 0.5},
            {
                **no_permit(small),
                "common_plan": {"plan_id": "P2", "plan_sites": 1, "plan_sites_s": "", **plan_values(small)},
                "agricultural_area_not_counted": {"plan_id": "P2", "excluded_sqft": 0.5},
            },
        ),
        (
            "permitted, half a square foot in water",
            {"disturbed_sqft": big, "in_water_sqft": 0.5, "nearest_water_ft": 0.0, **wet},
            {**permit(big), "in_water": {"in_water_sqft": 0.5}},
        ),
        (
            "unpermitted, half a square foot in water",
            {"disturbed_sqft": small, "in_water_sqft": 0.5, "nearest_water_ft": 0.0, **wet},
            {
                **no_permit(small),
                "in_water_unpermitted": {"in_water_sqft": 0.5},
                "permit_may_be_required": {"reasons": _reason(prof, "reason_in_water")},
            },
        ),
        (
            "permitted, half a square foot steep, 1.5 sq ft off the DEM",
            {"disturbed_sqft": big, "steep_disturbed_sqft": 0.5, "steep_uncovered_sqft": 1.5},
            {
                **permit(big),
                "steep_slopes": {"steep_sqft": 0.5, "steep_share": 0.5 / big},
                "dem_not_covering": {"uncovered_sqft": 1.5, "uncovered_share": 1.5 / big},
            },
        ),
        (
            "a permit may be required, no steep slope",
            {"disturbed_sqft": small, "protective_disturbed_sqft": 10.0, "steep_disturbed_sqft": 0.0, **wet},
            {
                **no_permit(small),
                "protective_area_if_permit": {"protective_sqft": 10.0, "waters": wet["protective_waters"]},
                "permit_may_be_required": {"reasons": _reason(prof, "reason_protective_area")},
            },
        ),
        (
            "a permit may be required, half a square foot steep",
            {"disturbed_sqft": small, "protective_disturbed_sqft": 10.0, "steep_disturbed_sqft": 0.5, **wet},
            {
                **no_permit(small),
                "protective_area_if_permit": {"protective_sqft": 10.0, "waters": wet["protective_waters"]},
                "permit_may_be_required": {"reasons": _reason(prof, "reason_protective_area")},
                "steep_slopes_if_permit": {"steep_sqft": 0.5, "steep_share": 0.5 / small},
            },
        ),
        (
            "partly inside by half a square foot, half of it steep",
            {
                "jurisdiction": "partial",
                "disturbed_sqft": big,
                "disturbed_in_village_sqft": 0.5,
                "steep_disturbed_sqft": 0.25,
            },
            {
                **{k: v for k, v in permit(big).items() if k != "jurisdiction_inside"},
                "jurisdiction_partial": {"disturbed_sqft": big, "inside_sqft": 0.5, "outside_sqft": big - 0.5},
                "steep_slopes": {"steep_sqft": 0.25, "steep_share": 0.5},
            },
        ),
        (
            "partly inside by half a square foot, none of it steep",
            {
                "jurisdiction": "partial",
                "disturbed_sqft": big,
                "disturbed_in_village_sqft": 0.5,
                "steep_disturbed_sqft": 0.0,
            },
            {
                **{k: v for k, v in permit(big).items() if k != "jurisdiction_inside"},
                "jurisdiction_partial": {"disturbed_sqft": big, "inside_sqft": 0.5, "outside_sqft": big - 0.5},
                "no_steep_slopes": {},
            },
        ),
        (
            "nothing inside (a share of nothing is 0), steep outside",
            {
                "jurisdiction": "partial",
                "disturbed_sqft": big,
                "disturbed_in_village_sqft": 0.0,
                "steep_disturbed_sqft": 0.5,
            },
            {
                **{k: v for k, v in permit(big).items() if k != "jurisdiction_inside"},
                "jurisdiction_partial": {"disturbed_sqft": big, "inside_sqft": 0.0, "outside_sqft": big},
                "steep_slopes": {"steep_sqft": 0.5, "steep_share": 0.0},
            },
        ),
        (
            "nothing inside, nothing steep: no finding on slopes",
            {
                "jurisdiction": "partial",
                "disturbed_sqft": big,
                "disturbed_in_village_sqft": 0.0,
                "steep_disturbed_sqft": 0.0,
            },
            {
                **{k: v for k, v in permit(big).items() if k != "jurisdiction_inside"},
                "jurisdiction_partial": {"disturbed_sqft": big, "inside_sqft": 0.0, "outside_sqft": big},
            },
        ),
        (
            "limits outside the site by the tolerance only",
            {"disturbed_sqft": small, "disturbed_outside_site_sqft": 1.0},
            no_permit(small),
        ),
    ]


def _reason(prof: Profile, code: str, **values: Any) -> str:
    f = prof.finding(code, **values)
    return f"{f.message} ({f.section})"


def _ids(prof_name: str) -> list[str]:
    return [c[0] for c in cases(PROFILES[prof_name])]


def _stack(ms: list[Measurements]) -> Measurements:
    """One Measurements of all the sites of ``ms`` (each built alone, with its own defaults)."""
    arrays = {
        f.name: np.concatenate([getattr(m, f.name) for m in ms])
        for f in dataclasses.fields(Measurements)
        if f.name not in ("has_waters", "has_targeted", "has_dem", "trigger_fields")
    }
    return Measurements(**arrays, **ALL_LAYERS)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_each_site_gets_exactly_its_findings_with_exact_values(name: str) -> None:
    prof = PROFILES[name]
    table = cases(prof)
    ms = [Measurements.of(1, **ALL_LAYERS, **values) for _, values, _ in table]
    problems = []
    for (label, _, want), m in zip(table, ms, strict=True):
        have = got(decide(m, prof))
        if set(have) != set(want):
            problems.append(f"{label}: extra {sorted(set(have) - set(want))}, missing {sorted(set(want) - set(have))}")
            continue
        for code, values in want.items():
            if have[code] != expect(prof, code, **values):
                problems.append(f"{label}: {code}: {have[code]['message']!r} != {expect(prof, code, **values)!r}")
    assert not problems, "\n".join(problems)
    # All the sites decided together: each row gets what it got alone (no row's values leak into another's).
    together = decide(_stack(ms), prof)
    assert together.findings == [decide(m, prof).findings[0] for m in ms]


# --- The decision columns, by hand --------------------------------------------------------------


def test_decision_columns_at_the_edges(prof: Profile) -> None:
    p, s, n = thresholds(prof)
    m = Measurements.of(
        6,
        disturbed_sqft=[p / 2, p, s, p, p, float(np.nextafter(n, 0))],
        jurisdiction=["inside", "inside", "inside", "outside", "inside", "inside"],
        state_agency=[False, False, False, False, True, False],
        npdes_exempt=[False, False, False, False, False, True],
    )
    d = decide(m, prof)
    assert d.applicability.tolist() == [
        "applies",
        "applies",
        "applies",
        "outside_jurisdiction",
        "excluded_state_agency",
        "applies",
    ]
    assert d.permit.tolist() == [
        "not_required",
        "required",
        "required",
        "not_applicable",
        "not_applicable",
        "not_required",
    ]
    up, pp = prof.standards_unpermitted, prof.standards_permitted
    assert d.standards.tolist() == [up, pp, pp, "", "", up]
    assert d.sediment_standard.tolist() == [False, False, True, False, False, False]
    assert d.decision_sqft.tolist() == [p / 2, p, s, p, p, float(np.nextafter(n, 0))]
    assert d.permit_may_be_required.tolist() == [False] * 6
    assert d.decision_sqft.dtype == float and d.permit.dtype == object and d.standards.dtype == object


def test_the_frame_has_the_screening_columns(prof: Profile) -> None:
    d = decide(Measurements.of(2, disturbed_sqft=[1.0, 3 * thresholds(prof)[1]]), prof)
    df = d.frame(index=pd.Index(["a", "b"]))
    assert list(df.columns) == [
        "applicability",
        "permit",
        "permit_may_be_required",
        "standards",
        "sediment_standard",
        "plan_disturbed_sqft",
        "findings",
    ]
    assert df.index.tolist() == ["a", "b"]
    assert df["permit"].tolist() == ["not_required", "required"]
    assert df["plan_disturbed_sqft"].tolist() == [1.0, 3 * thresholds(prof)[1]]
    assert df["sediment_standard"].tolist() == [False, True]
    assert df["findings"].tolist() == d.findings
    assert d.frame().index.tolist() == [0, 1]


def test_a_frame_of_measurements_decides_as_the_record_does(prof: Profile) -> None:
    p = thresholds(prof)[0]
    df = pd.DataFrame(
        {
            "disturbed_sqft": [p / 2, 2 * p],
            "jurisdiction": ["inside", "partial"],
            "disturbed_in_village_sqft": [p / 2, p / 4],
            "plan_disturbed_sqft": [p / 2, 2 * p],
            "plan_in_village_sqft": [p / 2, p / 4],
            "steep_disturbed_sqft": [0.0, 10.0],
            "not_a_measurement": ["x", "y"],
        }
    )
    m = Measurements.from_frame(df, has_dem=True)
    assert m.has_dem and not m.has_waters and len(m) == 2
    assert m.jurisdiction.tolist() == ["inside", "partial"] and m.steep_disturbed_sqft.tolist() == [0.0, 10.0]
    assert m.plan_in_village_sqft.tolist() == [p / 2, p / 4]
    # Columns named like the layer flags are not measurements: the flags are given apart.
    flagged = df.assign(has_waters=[1, 1], has_targeted=[1, 1], has_dem=[1, 1], trigger_fields=["x", "y"])
    mf = Measurements.from_frame(flagged, has_dem=False)
    assert (mf.has_waters, mf.has_targeted, mf.has_dem, dict(mf.trigger_fields)) == (False, False, False, {})
    a, b = decide(df, prof), decide(Measurements.of(2, **{c: df[c].to_numpy() for c in df.columns[:-1]}), prof)
    assert a.findings == b.findings and a.permit.tolist() == b.permit.tolist() == ["not_required", "required"]


def test_measurements_defaults_are_neutral() -> None:
    m = Measurements.of(2, disturbed_sqft=[10.0, 20.0])
    assert m.jurisdiction.tolist() == ["inside", "inside"] and m.activity.tolist() == ["construction"] * 2
    assert m.state_agency.tolist() == [False, False] and m.npdes_exempt.tolist() == [False, False]
    assert m.plan_id.tolist() == [None, None] and m.plan_site_count.tolist() == [1, 1]
    assert m.disturbed_in_village_sqft.tolist() == m.disturbed_parts_sqft.tolist() == [10.0, 20.0]
    assert m.plan_disturbed_sqft.tolist() == m.plan_in_village_sqft.tolist() == [10.0, 20.0]
    assert m.disturbed_outside_site_sqft.tolist() == [0.0, 0.0] and m.plan_excluded_sqft.tolist() == [0.0, 0.0]
    assert m.disturbed_count.tolist() == [1, 1] and m.disturbed_count.dtype == int
    for name in ("protective_disturbed_sqft", "in_water_sqft", "nearest_water_ft", "steep_disturbed_sqft"):
        assert np.isnan(getattr(m, name)).all(), name
    assert np.isnan(m.steep_uncovered_sqft).all()
    for name in ("nearest_water", "protective_waters", "channel_unverified", "targeted_areas"):
        assert getattr(m, name).tolist() == [None, None] and getattr(m, name).dtype == object, name
    assert m.protective_from_centreline.tolist() == [False, False] and m.repaired.tolist() == [False, False]
    assert (m.has_waters, m.has_targeted, m.has_dem, dict(m.trigger_fields)) == (False, False, False, {})
    for name in ("state_agency", "npdes_exempt", "protective_from_centreline", "repaired"):
        assert getattr(m, name).dtype == bool, name
    assert Measurements.of(1, state_agency=1, repaired=1, protective_from_centreline=1).repaired.dtype == bool
    ints = Measurements.of(1, disturbed_sqft=[5], disturbed_in_village_sqft=[4], steep_disturbed_sqft=[1])
    assert ints.disturbed_sqft.dtype == ints.disturbed_in_village_sqft.dtype == ints.steep_disturbed_sqft.dtype == float
    assert Measurements.of(2).disturbed_sqft.tolist() == Measurements.of(2).disturbed_parts_sqft.tolist() == [0.0, 0.0]
    given = np.array([1.0, 2.0])
    copied = Measurements.of(2, in_water_sqft=given)
    given[0] = 99.0  # the measurements are a copy: changing the input later changes nothing
    assert copied.in_water_sqft.tolist() == [1.0, 2.0]
    inside = Measurements.of(1, disturbed_sqft=100.0, disturbed_in_village_sqft=40.0)
    assert inside.plan_in_village_sqft.tolist() == [40.0] and inside.plan_disturbed_sqft.tolist() == [100.0]
    assert Measurements.of(1, has_dem=1).has_dem is True
    fields = Measurements.of(1, trigger_fields={"fill_cuyd": [5]}).trigger_fields
    assert isinstance(fields["fill_cuyd"], np.ndarray) and fields["fill_cuyd"].tolist() == [5]


# --- The pure functions, one edge each ----------------------------------------------------------


def test_applicability_in_order_of_precedence() -> None:
    jur = np.array(["outside", "outside", "inside", "inside", "inside", "partial", "inside"], dtype=object)
    act = np.array(
        [
            "silviculture",
            "construction",
            "agricultural_activity",
            "silviculture",
            "agricultural_production",
            "agricultural_activity",
            "construction",
        ],
        dtype=object,
    )
    agency = np.array([True, False, True, False, False, False, False])
    assert applicability(jur, act, agency).tolist() == [
        "outside_jurisdiction",  # jurisdiction first
        "outside_jurisdiction",
        "excluded_state_agency",  # then the state agency, before the exemptions
        "exempt_silviculture",
        "applies",  # production areas are not exempt
        "exempt_agricultural",
        "applies",
    ]


def test_counts_toward_plan() -> None:
    act = ["construction", "agricultural_activity", "silviculture", "agricultural_production", None]
    assert counts_toward_plan(np.array(act, dtype=object)).tolist() == [True, False, False, True, True]
    assert counts_toward_plan(act).tolist() == [True, False, False, True, True]


def test_decision_area_follows_the_profiles_reading(prof: Profile) -> None:
    m = Measurements.of(1, disturbed_sqft=100.0, plan_disturbed_sqft=[300], plan_in_village_sqft=[120])
    whole = decision_area(m, prof)
    inside = decision_area(m, dataclasses.replace(prof, partial_jurisdiction="inside_only"))
    assert whole.tolist() == [300.0] and inside.tolist() == [120.0]
    assert whole.dtype == float and inside.dtype == float


def test_permit_decision_without_measurements_uses_the_area(prof: Profile) -> None:
    p, s, n = thresholds(prof)
    # Flags as 0/1 and areas as a list, as a caller may give them.
    d = permit_decision([1, 1, 0, 1], [p, float(np.nextafter(p, 0)), 10 * s, n / 2], [0, 0, 0, 1], prof)
    assert d["permit"].tolist() == ["required", "not_required", "not_applicable", "not_required"]
    assert d["npdes_small"].tolist() == [False, False, False, True]
    assert d["sediment_standard"].tolist() == [False, False, False, False]
    assert {k: v.tolist() for k, v in d["triggers"].items()} == {
        t.name: ([True, False, False, False] if t.kind == "disturbed_area" else [False] * 4) for t in prof.triggers
    }


def test_a_profile_without_triggers_requires_no_permit(prof: Profile) -> None:
    bare = dataclasses.replace(prof, triggers=())
    d = permit_decision(np.array([True, True]), np.array([1.0, 1e9]), np.array([False, False]), bare)
    assert d["permit"].tolist() == ["not_required", "not_required"] and d["triggers"] == {}
    assert d["standards"].tolist() == [prof.standards_unpermitted] * 2


@pytest.mark.parametrize(
    "not_required, npdes_small, prot, water, targ, may_be",
    [
        (True, False, True, False, False, True),
        (True, False, False, True, False, True),
        (True, False, False, False, True, True),
        (True, False, False, False, False, False),
        (True, True, True, True, True, False),  # § 540-4A(3) sites: § 540-8 does not apply
        (False, False, True, True, True, False),  # already permitted, or not applicable
    ],
)
def test_may_require_permit(not_required: bool, npdes_small: bool, prot: bool, water: bool, targ: bool, may_be: bool):
    a = [np.array([x]) for x in (not_required, npdes_small, prot, water, targ)]
    assert may_require_permit(*a).tolist() == [may_be]


def test_run_findings_one_per_absent_layer(prof: Profile) -> None:
    none = run_findings(Measurements.of(1), prof)
    assert [f["code"] for f in none] == ["no_waters_layer", "no_targeted_layer", "steep_not_measured"]
    assert none[0] == {
        **prof.finding("no_waters_layer").to_dict(),
        "columns": "protective_disturbed_sqft, nearest_water_ft, in_water_sqft, nearest_water, protective_waters",
    }
    assert none[1]["columns"] == "targeted_areas"
    assert none[2]["columns"] == "steep_disturbed_sqft, steep_share, steep_uncovered_sqft"
    assert run_findings(Measurements.of(1, **ALL_LAYERS), prof) == []
    assert [f["code"] for f in run_findings(Measurements.of(1, has_targeted=True), prof)] == [
        "no_waters_layer",
        "steep_not_measured",
    ]
    assert decide(Measurements.of(1), prof).run_findings == none


def test_without_layers_no_site_gets_their_findings(prof: Profile) -> None:
    p = thresholds(prof)[0]
    values = {
        "disturbed_sqft": [2 * p, p / 2],
        "protective_disturbed_sqft": 10.0,
        "in_water_sqft": 1.0,
        "nearest_water_ft": 5.0,
        "nearest_water": "Lake",
        "protective_waters": "Lake",
        "targeted_areas": "TMDL",
        "steep_disturbed_sqft": 50.0,
        "steep_uncovered_sqft": 50.0,
    }
    d = decide(Measurements.of(2, **values), prof)
    assert set(got(d, 0)) == {"jurisdiction_inside", "disturbed_area", "permit_required", "less_stringent_possible"}
    # The measurements still make a small site one the authority may want a permit for.
    assert set(got(d, 1)) == {"jurisdiction_inside", "disturbed_area", "permit_not_required", "permit_may_be_required"}


# --- Other permit triggers: every kind at its value ------------------------------------------------

TRIGGERS = """
[permit_triggers.steep]
kind = "steep_disturbed_area"
value = 1000
unit = "sqft"
section = "§ 23-4A(1)(e)"
finding = "permit_required_by_trigger"
label = "Disturbance on steep slopes"

[permit_triggers.utility]
kind = "utility_length"
value = 300
unit = "ft"
section = "§ 23-4A(1)(f)"
finding = "permit_required_by_trigger"
label = "Utility or ditch work"

[permit_triggers.division]
kind = "land_division"
section = "§ 23-4A(1)(g)"
finding = "permit_required_by_trigger"
label = "Land division"
"""


@pytest.fixture(scope="module")
def more_triggers(tmp_path_factory: pytest.TempPathFactory) -> Profile:
    text = EXAMPLE.read_text(encoding="utf-8")
    at = text.index("# --- Applicability and permits")
    path = tmp_path_factory.mktemp("profile") / "triggers.toml"
    path.write_text(text[:at] + TRIGGERS + "\n" + text[at:], encoding="utf-8")
    return load_profile(path)


def test_every_trigger_kind_at_its_value(more_triggers: Profile) -> None:
    prof = more_triggers
    fields = {
        "fill_cuyd": np.array([0.0, 400.0, 0.0, 0.0, 0.0, 0.0, np.nan]),
        "utility_ft": np.array([0.0, 0.0, 299.99, 300.0, 0.0, 0.0, np.nan]),
        "land_division": np.array([False, False, False, False, True, False, False]),
    }
    steep = [0.0, 0.0, 0.0, 0.0, 0.0, 1000.0, np.nan]
    m = Measurements.of(7, disturbed_sqft=100.0, steep_disturbed_sqft=steep, has_dem=True, trigger_fields=fields)
    d = decide(m, prof)
    assert d.permit.tolist() == [
        "not_required",
        "required",
        "not_required",
        "required",
        "required",
        "required",
        "not_required",
    ]
    hits = [{k: f for k, f in got(d, i).items() if k == "permit_required_by_trigger"} for i in range(7)]
    assert [h.get("permit_required_by_trigger", {}).get("section") for h in hits] == [
        None,
        "§ 23-4A(1)(d)",
        None,
        "§ 23-4A(1)(f)",
        "§ 23-4A(1)(g)",
        "§ 23-4A(1)(e)",
        None,
    ]
    messages = [h["permit_required_by_trigger"]["message"] for h in hits if h]
    assert messages == [
        prof.finding(
            "permit_required_by_trigger",
            trigger="Fill or excavation",
            measured="400 cubic yards",
            threshold="400 cubic yards",
        ).message,
        prof.finding(
            "permit_required_by_trigger", trigger="Utility or ditch work", measured="300 ft", threshold="300 ft"
        ).message,
        prof.finding(
            "permit_required_by_trigger", trigger="Land division", measured="Land division", threshold="Land division"
        ).message,
        prof.finding(
            "permit_required_by_trigger",
            trigger="Disturbance on steep slopes",
            measured="1,000 sq ft",
            threshold="1,000 sq ft",
        ).message,
    ]


def test_a_trigger_whose_field_the_sites_lack_is_not_met(more_triggers: Profile) -> None:
    d = decide(Measurements.of(2, disturbed_sqft=100.0), more_triggers)
    assert d.permit.tolist() == ["not_required", "not_required"]
    # A field read from a file with empty cells (None in an object column) counts as 0.
    fields = {"fill_cuyd": np.array([None, 400], dtype=object), "utility_ft": np.array([None, "300"], dtype=object)}
    d = decide(Measurements.of(2, disturbed_sqft=100.0, trigger_fields=fields), more_triggers)
    assert d.permit.tolist() == ["not_required", "required"]
    codes = [f["code"] for f in json.loads(d.findings[1])]
    assert codes.count("permit_required_by_trigger") == 2  # the fill and the utility work, each cited


def test_an_acre_trigger_shows_the_measured_area_in_square_feet(more_triggers: Profile, tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    at = text.index("# --- Applicability and permits")
    acres = TRIGGERS.split("[permit_triggers.utility]")[0].replace(
        'value = 1000\nunit = "sqft"', 'value = 0.5\nunit = "acres"'
    )
    path = tmp_path / "acres.toml"
    path.write_text(text[:at] + acres + "\n" + text[at:], encoding="utf-8")
    prof = load_profile(path)
    m = Measurements.of(2, disturbed_sqft=100.0, steep_disturbed_sqft=[21780.0, 21779.0], has_dem=True)
    d = decide(m, prof)
    assert d.permit.tolist() == ["required", "not_required"]
    assert (
        got(d, 0)["permit_required_by_trigger"]["message"]
        == prof.finding(
            "permit_required_by_trigger",
            trigger="Disturbance on steep slopes",
            measured="21,780 sq ft",
            threshold="0.5 acre",
        ).message
    )


def test_findings_json_keeps_the_section_mark_readable(prof: Profile) -> None:
    # The findings column is read by people in QGIS and spreadsheets: "§", not "\\u00a7".
    d = decide(Measurements.of(1, disturbed_sqft=2 * thresholds(prof)[0]), prof)
    assert "§" in got(d)["permit_required"]["message"]
    assert "\\u00a7" not in d.findings[0] and "§" in d.findings[0]
    # A message with no per-site value is encoded once for all its sites: the same holds.
    agency = decide(Measurements.of(2, state_agency=True), prof)
    assert "§" in got(agency, 1)["state_agency"]["message"].replace(got(agency, 1)["state_agency"]["section"], "")
    assert all("\\u00a7" not in row for row in agency.findings)


def _verbose(prof: Profile, *codes: str) -> Profile:
    """The profile with these findings' messages naming every value the catalogue allows them."""
    from esc_gis.findings import CATALOGUE

    verbose = {
        c: dataclasses.replace(prof.template(c), message=" ".join(f"{k}={{{k}}}" for k in sorted(CATALOGUE[c])))
        for c in codes
    }
    return dataclasses.replace(prof, findings={**prof.findings, **verbose})


def test_every_value_a_message_may_use_is_given_right(prof: Profile) -> None:
    p = thresholds(prof)[0]
    v = _verbose(prof, "common_plan", "less_stringent_possible", "permit_required", "near_threshold")
    a = p  # at the permit area: required, near it, under the sediment area
    m = Measurements.of(1, disturbed_sqft=a / 4, plan_id="P", plan_site_count=2, plan_disturbed_sqft=a)
    f = got(decide(m, v))
    acres = a / SQFT_PER_ACRE
    assert f["common_plan"]["message"] == f"plan_acres={acres} plan_id=P plan_sites=2 plan_sites_s=s plan_sqft={a}"
    assert f["less_stringent_possible"]["message"] == f"plan_acres={acres} plan_sqft={a}"
    assert f["permit_required"]["message"] == f"plan_acres={acres} plan_sqft={a}"
    margin = float(prof.entry("policy.near_threshold").value)
    assert f["near_threshold"]["message"] == (
        f"margin_pct={margin} plan_acres={acres} plan_sqft={a} threshold={prof.names()['permit_area']}"
    )


def test_an_area_trigger_cites_its_own_section(prof: Profile) -> None:
    trig = tuple(
        dataclasses.replace(t, section="§ 99-1(a)") if t.kind == "disturbed_area" else t for t in prof.triggers
    )
    f = got(
        decide(Measurements.of(1, disturbed_sqft=2 * thresholds(prof)[0]), dataclasses.replace(prof, triggers=trig))
    )
    assert f["permit_required"]["section"] == "§ 99-1(a)"


def test_a_zero_near_threshold_margin_flags_only_the_exact_value(prof: Profile) -> None:
    p = thresholds(prof)[0]
    e = dataclasses.replace(prof.entry("policy.near_threshold"), value=0)
    zero = dataclasses.replace(prof, entries={**prof.entries, "policy.near_threshold": e})
    d = decide(Measurements.of(2, disturbed_sqft=[p, p * 1.005]), zero)
    assert "near_threshold" in got(d, 0) and "near_threshold" not in got(d, 1)


def test_a_zero_permit_area_is_shown_as_zero(prof: Profile) -> None:
    # A municipality may require a permit for any disturbance: a threshold of 0 is a threshold.
    e = dataclasses.replace(prof.entry("thresholds.permit_area"), value=0, unit="sqft")
    zero = dataclasses.replace(prof, entries={**prof.entries, "thresholds.permit_area": e})
    f = got(decide(Measurements.of(1, disturbed_sqft=0.0), zero))
    assert (
        f["near_threshold"]["message"]
        == zero.finding(
            "near_threshold",
            threshold="0 sq ft",
            margin_pct=float(prof.entry("policy.near_threshold").value),
            **plan_values(0.0),
        ).message
    )


def test_a_bad_message_fails_with_the_findings_name(prof: Profile) -> None:
    t = prof.template("disturbed_area")
    broken = dataclasses.replace(t, message="{disturbed_sqft:,.1f} sq ft {disturbed_sqft[0]}")
    bad = dataclasses.replace(prof, findings={**prof.findings, "disturbed_area": broken})
    with pytest.raises((ProfileError, TypeError)):
        decide(Measurements.of(1, disturbed_sqft=10.0), bad)


def test_the_sediment_standard_reaches_one_acre_or_more_and_never_a_missing_area() -> None:
    # § 540-7B(3)(b): "For sites with one acre or more of land-disturbing construction activity, the plan
    # shall meet the following sediment performance standards". A missing area (None, as a table's empty
    # cell arrives) is NaN and reaches nothing.
    got = sediment_standard_reaches(
        [None, SQFT_PER_ACRE - 0.1, SQFT_PER_ACRE, 2 * SQFT_PER_ACRE], PROFILES["winneconne"]
    )
    assert got.dtype == bool
    assert got.tolist() == [False, False, True, True]


# --- § 540-5 EXTRATERRITORIAL: outside, within 1.5 miles, "does not apply" is a reading (issue 34) ---


W_PROFILE = load_profile()


@pytest.mark.parametrize(
    ("gap_ft", "code", "basis"),
    [
        (0.0, "outside_jurisdiction_extraterritorial", "interpretation"),
        (2100.0, "outside_jurisdiction_extraterritorial", "interpretation"),
        (7920.0, "outside_jurisdiction_extraterritorial", "interpretation"),  # "within 1.5 miles": the edge is in
        (7920.01, "outside_jurisdiction", "ordinance"),
        (float("nan"), "outside_jurisdiction", "ordinance"),  # not measured: the ordinance's own words
    ],
)
def test_outside_the_village_within_the_extraterritorial_area_is_a_reading(
    gap_ft: float, code: str, basis: str
) -> None:
    """§ 540-4B: "This article applies to land-disturbing construction activity on construction sites located
    within the boundaries and jurisdiction of the Village". § 540-5 EXTRATERRITORIAL: "The unincorporated area
    ... within 1.5 miles of a fourth-class city or Village", defined but used by no rule of the article: within
    it, "does not apply" is a reading with the caveat; beyond it, the ordinance's. Pinned at 7,920 ft."""
    d = decide(Measurements.of(1, jurisdiction="outside", disturbed_sqft=10_000.0, boundary_gap_ft=gap_ft), W_PROFILE)
    assert d.permit.tolist() == ["not_applicable"]
    f = got(d)
    assert [k for k in f if k.startswith("outside_jurisdiction")] == [code] and f[code]["basis"] == basis
    if code == "outside_jurisdiction_extraterritorial":
        assert f[code] == expect(W_PROFILE, code, distance_ft=gap_ft)
        # "The unincorporated area": the distance alone does not put a site in it (a neighbouring city's or
        # village's land is not), so the message says the definition's condition rather than assert it.
        assert "the extraterritorial area the article defines (where the land is unincorporated)" in f[code]["message"]


def test_a_profile_without_an_extraterritorial_area_keeps_the_ordinances_finding() -> None:
    """A town has no extraterritorial area (§ 540-5 defines it for cities and villages): the example profile has
    no ``thresholds.extraterritorial``, so every site outside gets the ordinance's "does not apply"."""
    town = load_profile(Path(__file__).parent / "profiles" / "example.toml")
    d = decide(Measurements.of(1, jurisdiction="outside", disturbed_sqft=10_000.0, boundary_gap_ft=0.0), town)
    assert "outside_jurisdiction" in got(d) and "outside_jurisdiction_extraterritorial" not in got(d)


def test_measurements_without_a_boundary_gap_keep_the_ordinances_finding_outside() -> None:
    """Measurements built without ``boundary_gap_ft`` (None: the distance was not measured) put no site
    in the extraterritorial area: a site outside gets § 540-4B's own "does not apply", as for NaN."""
    m = dataclasses.replace(
        Measurements.of(2, jurisdiction=["outside", "inside"], disturbed_sqft=10_000.0), boundary_gap_ft=None
    )
    d = decide(m, W_PROFILE)
    assert d.permit.tolist() == ["not_applicable", "required"]
    f = got(d)
    assert "outside_jurisdiction" in f and "outside_jurisdiction_extraterritorial" not in f
    assert f["outside_jurisdiction"]["basis"] == "ordinance"


def test_an_npdes_exempt_site_of_an_acre_or_more_is_decided_as_any_other_on_a_labelled_reading() -> None:
    """§ 540-4A(3): an NPDES-exempt site "shall comply with the performance standards of § 540-7A if less than one
    acre ... The performance standards of § 540-7B, permit requirements of § 540-8, and plan requirements of § 540-9
    are not applicable." Whether that last sentence reaches a site of an acre or more the text does not say: that it
    does not is a reading, labelled so, never the ordinance's word."""
    acre = W_PROFILE.area_sqft("thresholds.npdes_exempt_area")
    d = decide(Measurements.of(1, jurisdiction="inside", disturbed_sqft=acre, npdes_exempt=True), W_PROFILE)
    f = got(d)
    assert d.permit.tolist() == ["required"]
    assert f["npdes_exemption_not_applicable"]["basis"] == "interpretation"
    assert f["npdes_exemption_not_applicable"]["message"].split(" (reading: ")[1].startswith("§ 540-4A(3) sets")
    small = decide(Measurements.of(1, jurisdiction="inside", disturbed_sqft=acre - 1, npdes_exempt=True), W_PROFILE)
    assert "npdes_exemption_not_applicable" not in got(small)
    assert got(small)["npdes_exempt_under_1_acre"]["basis"] == "ordinance"


@pytest.mark.parametrize(
    "finding, reasons",
    [
        # § 540-4B "within the boundaries and jurisdiction of the Village": outside, the screening says
        # either the ordinance's finding or, within § 540-5's extraterritorial area, the reading.
        ("outside_jurisdiction", ("outside_jurisdiction", "outside_jurisdiction_extraterritorial")),
        ("state_agency", ("state_agency",)),  # § 540-4C: one finding only
        ("agricultural_activity_exempt", ("agricultural_activity_exempt",)),
    ],
)
def test_the_screening_reasons_a_not_applicable_answer_may_quote(finding: str, reasons: tuple) -> None:
    assert screening_reasons(finding) == reasons
    assert all(code in W_PROFILE.findings for code in reasons)  # each a finding the Village's profile declares


def test_readings_and_policies_of_the_screening_say_so_not_the_law() -> None:
    """§ 540-4A(2): "This article does not apply to the following: (a) Nonpoint discharges from agricultural
    activity areas. (b) Nonpoint discharges from silviculture activities." It does not say such land is left out
    of a common plan's total: that is a reading. § 540-4A(1)(c): a permit is required under 4,000 sq ft "if the
    administering authority determines that permit coverage is needed in order to improve article compliance,
    meet targeted performance standards, or protect waters of the state": which sites the screening flags for
    that look is the toolkit's own policy, and a targeted area is a reason under § 540-4A(1)(c), not § 540-7B(6).
    § 540-7B(3)(a)[3]: "adjacent waters of the state", with no distance: the nearest water is not called adjacent."""
    prof = PROFILES["winneconne"]
    ag = prof.finding("agricultural_area_not_counted", plan_id="P1", excluded_sqft=250.0)
    assert (ag.basis, ag.section) == ("interpretation", "§ 540-4A(2)")
    assert '"Nonpoint discharges" the article "does not apply to"' in ag.message and "reading:" in ag.message
    may = prof.finding("permit_may_be_required", permit_area="4,000 sq ft", authority="x", reasons="r")
    assert (may.basis, may.section) == ("policy", "§ 540-4A(1)(c)")
    assert "meet targeted performance standards, or protect waters of the state" in may.message
    assert "toolkit policy" in may.message
    targeted = prof.finding("reason_targeted_area", areas="TMDL-1")
    assert targeted.section == "§ 540-4A(1)(c)" and "(§ 540-7B(6))" in targeted.message
    for key in ("nearest_water", "nearest_water_unpermitted"):
        near = prof.finding(key, water="Lake Poygan", distance_ft=2_000.0)
        assert near.message.startswith("Nearest water of the state: Lake Poygan, 2,000 ft from the disturbance. Where")
        assert 'no distance for "adjacent"' in near.message


@pytest.mark.parametrize(
    "permit, npdes_small, determined, want_permitted",
    [
        ("not_required", False, True, True),  # the one case a determination changes
        ("not_required", False, False, False),
        ("not_required", True, True, False),  # § 540-4A(3): exempt, no permit can be required
        ("required", False, True, False),  # already required: its standards stand as screened
    ],
)
def test_a_determination_changes_only_a_small_site_that_is_not_exempt(
    prof: Profile, permit: str, npdes_small: bool, determined: bool, want_permitted: bool
) -> None:
    """§ 540-4A(1)(c): "a permit is required for a construction site with less than 4,000 square feet of
    land-disturbing construction activity if the administering authority determines that permit coverage is
    needed ... If a permit is required, the responsible party shall comply with ... the performance standards
    of § 540-7B, permit requirements of § 540-8, and plan requirements of § 540-9"; § 540-4A(1) applies
    "unless the site is otherwise exempt under § 540-4A(2) or (3)"."""
    from esc_gis.rules import determined_decision

    got = determined_decision(permit, "as screened", npdes_small, determined, prof)
    if want_permitted:
        assert got == ("required", prof.standards_permitted)
    else:
        assert got == (permit, "as screened")
