"""The rules called directly, on hand-built measurements, under two profiles.

Winneconne's shipped profile and a made-up "Town of Example" (tests/profiles/example.toml:
2,000 sq ft, half an acre, § 23-..., a fill-volume trigger) must both drive every decision,
message and citation: nothing of the law is in the code.
"""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from esc_gis.profile import load_profile
from esc_gis.rules import Measurements, decide

EXAMPLE = Path(__file__).parent / "profiles" / "example.toml"
PROFILES = {"winneconne": load_profile(), "example": load_profile(EXAMPLE)}


@pytest.fixture(params=sorted(PROFILES))
def prof(request):
    return PROFILES[request.param]


def findings(d, i=0):
    return {f["code"]: f for f in json.loads(d.findings[i])}


def one(prof, **values):
    return decide(Measurements.of(1, **values), prof)


def below(x):
    return float(np.nextafter(x, 0))


def above(x):
    return float(np.nextafter(x, np.inf))


# --- The permit threshold and the sediment standard, exactly at their values -------------------


def test_permit_area_at_its_exact_value_and_one_ulp_either_side(prof):
    thr = prof.area_sqft("thresholds.permit_area")
    d = decide(Measurements.of(3, disturbed_sqft=[below(thr), thr, above(thr)]), prof)
    assert d.permit.tolist() == ["not_required", "required", "required"]
    assert d.standards.tolist() == [prof.standards_unpermitted, prof.standards_permitted, prof.standards_permitted]
    at, under = findings(d, 1), findings(d, 0)
    trigger = prof.triggers[0]
    assert at["permit_required"]["section"] == trigger.section and at["permit_required"]["basis"] == "ordinance"
    assert prof.names()["permit_area"] in at["permit_required"]["message"]
    assert "permit_not_required" not in at and "permit_required" not in under
    assert under["permit_not_required"]["section"] == prof.template("permit_not_required").section


def test_sediment_standard_at_its_exact_value(prof):
    thr = prof.area_sqft("thresholds.sediment_area")
    d = decide(Measurements.of(2, disturbed_sqft=[below(thr), thr]), prof)
    assert d.sediment_standard.tolist() == [False, True]
    assert "sediment_standard" in findings(d, 1) and "sediment_standard" not in findings(d, 0)
    assert "less_stringent_possible" in findings(d, 0) and "less_stringent_possible" not in findings(d, 1)
    msg = findings(d, 1)["sediment_standard"]["message"]
    assert prof.names()["sediment_area"] in msg and prof.names()["sediment_load"] in msg


def test_npdes_exemption_ends_exactly_at_its_area(prof):
    thr = prof.area_sqft("thresholds.npdes_exempt_area")
    d = decide(Measurements.of(2, disturbed_sqft=[below(thr), thr], npdes_exempt=True), prof)
    assert d.permit.tolist() == ["not_required", "required"]
    small, big = findings(d, 0), findings(d, 1)
    assert "npdes_exempt_under_1_acre" in small and "npdes_exemption_not_applicable" not in small
    assert "npdes_exemption_not_applicable" in big and "npdes_exempt_under_1_acre" not in big
    assert "permit_not_required" not in small  # § 540-4A(3) speaks for it


@pytest.mark.parametrize(("share", "near"), [(0.0, True), (0.999, True), (1.001, False)])
def test_near_threshold_margin_is_the_profiles_policy(prof, share, near):
    thr = prof.area_sqft("thresholds.permit_area")
    margin = prof.entry("policy.near_threshold").value / 100
    f = findings(one(prof, disturbed_sqft=thr * (1 + share * margin)))
    assert ("near_threshold" in f) is near
    if near:
        assert f["near_threshold"]["basis"] == "policy"


# --- Jurisdiction (§ 540-4B): the partial site is a reading -------------------------------------


def test_partial_site_decided_on_the_whole_by_default_and_inside_only_by_switch(prof):
    thr = prof.area_sqft("thresholds.permit_area")
    values = {
        "jurisdiction": "partial",
        "disturbed_sqft": 2.5 * thr,
        "disturbed_in_village_sqft": 0.75 * thr,
        "plan_disturbed_sqft": 2.5 * thr,
        "plan_in_village_sqft": 0.75 * thr,
    }
    whole = one(prof, **values)
    assert whole.permit[0] == "required" and whole.decision_sqft[0] == 2.5 * thr
    f = findings(whole)["jurisdiction_partial"]
    assert f["basis"] == "interpretation" and f["message"].lower().startswith("reading:")
    assert prof.jurisdiction_name in f["message"]
    inside = one(dataclasses.replace(prof, partial_jurisdiction="inside_only"), **values)
    assert inside.permit[0] == "not_required" and inside.decision_sqft[0] == 0.75 * thr
    assert "jurisdiction_partial_inside_only" in findings(inside) and "jurisdiction_partial" not in findings(inside)


def _plan_across(thr: float, *, sites: int, outside: object) -> dict[str, object]:
    """A lot inside the Village of half the permit area, of plan P1 (1.5 x it) whose half lies outside."""
    return {
        "jurisdiction": "inside",
        "plan_id": "P1",
        "plan_site_count": sites,
        "disturbed_sqft": 0.5 * thr,
        "disturbed_in_village_sqft": 0.5 * thr,
        "plan_disturbed_sqft": 1.5 * thr,
        "plan_in_village_sqft": 0.75 * thr,
        "plan_outside_sites": outside,
    }


def test_a_plan_partly_outside_says_which_part_decides_it(prof):
    """§ 540-4B: "This article applies to land-disturbing construction activity on construction sites located
    within the boundaries and jurisdiction of the Village of Winneconne"; § 540-5 CONSTRUCTION SITE: "An area
    upon which one or more land disturbing construction activities occur, including areas that are part of a
    larger common plan of development". Whether lots outside the line count is not said: one rule decides it by
    the profile's reading, labelled an interpretation under either, and names the part outside and its sites."""
    thr = prof.area_sqft("thresholds.permit_area")
    values = _plan_across(thr, sites=3, outside="L2, L3")
    d = one(prof, **values)
    whole = findings(d)
    # The default reading: the whole plan decides the lot inside, and says so as a reading.
    assert d.permit[0] == "required" and d.decision_sqft[0] == 1.5 * thr
    assert "common_plan" not in whole and "common_plan_inside_only" not in whole
    g = whole["common_plan_partial"]
    assert g["basis"] == "interpretation" and "Reading:" in g["message"]
    assert g["section"].startswith(prof.template("jurisdiction_partial").section)
    assert f"{0.75 * thr:,.1f} sq ft of its {1.5 * thr:,.1f} sq ft of disturbance is outside" in g["message"]
    assert "wholly outside: L2, L3)" in g["message"] and prof.jurisdiction_name in g["message"]
    # Every other finding of the decision rests on the ordinance; only the plan's reading is one.
    assert {f["basis"] for c, f in whole.items() if c != "common_plan_partial"} <= {"ordinance", "policy"}
    inside_only = dataclasses.replace(prof, partial_jurisdiction="inside_only")
    d = one(inside_only, **values)
    f = findings(d)
    assert d.permit[0] == "not_required" and d.decision_sqft[0] == 0.75 * thr
    assert "common_plan" not in f and "common_plan_partial" not in f
    g = f["common_plan_inside_only"]
    assert g["basis"] == "interpretation" and "Reading: only the" in g["message"]
    assert f"{1.5 * thr:,.1f} sq ft" in g["message"] and f"{0.75 * thr:,.1f} sq ft" in g["message"]
    assert "wholly outside: L2, L3)" in g["message"]
    # A plan wholly inside: the plain finding, the ordinance's, under either reading.
    inside = {**values, "plan_in_village_sqft": 1.5 * thr}
    for p in (prof, inside_only):
        got = findings(one(p, **inside))
        assert got["common_plan"]["basis"] == "ordinance"
        assert "common_plan_inside_only" not in got and "common_plan_partial" not in got


@pytest.mark.parametrize(("outside", "across"), [(1.0, False), (1.0 + 1e-6, True)])
def test_a_plan_is_across_the_line_only_past_the_boundary_sliver(prof, outside, across):
    """A part outside no larger than the sliver (1 sq ft: the same line digitised twice) is none, as it is
    for one site's jurisdiction; a millionth of a square foot more and the plan lies across the line."""
    assert prof.area_sqft("policy.sliver") == 1.0
    thr = prof.area_sqft("thresholds.permit_area")
    values = {"plan_id": "P1", "plan_site_count": 2, "disturbed_sqft": 0.5 * thr, "plan_disturbed_sqft": 1.5 * thr}
    got = findings(one(prof, **values, plan_in_village_sqft=1.5 * thr - outside))
    assert ("common_plan_partial" in got) is across and ("common_plan" in got) is not across


def test_a_site_without_a_plan_has_no_plan_finding_whatever_lies_outside(prof):
    """No plan, no plan reading: a site partly outside is the site's own reading (jurisdiction_partial)."""
    thr = prof.area_sqft("thresholds.permit_area")
    got = findings(
        one(
            prof,
            jurisdiction="partial",
            disturbed_sqft=2 * thr,
            disturbed_in_village_sqft=thr,
            plan_in_village_sqft=thr,
        )
    )
    assert "jurisdiction_partial" in got
    assert not {"common_plan", "common_plan_partial", "common_plan_inside_only"} & set(got)


# --- Where a section does not apply, it is not cited --------------------------------------------

WET = {
    "has_waters": True,
    "protective_disturbed_sqft": 500.0,
    "in_water_sqft": 0.0,
    "nearest_water_ft": 0.0,
    "protective_waters": "Lake (lake, 50 ft)",
    "nearest_water": "Lake",
}
STEEP = {"has_dem": True, "steep_disturbed_sqft": 300.0, "steep_uncovered_sqft": 0.0}


def _cites_section_7(f):
    return any(f"{prof_sec}-7" in x["section"] for x in f.values() for prof_sec in ("540", "23"))


@pytest.mark.parametrize(
    "site",
    [
        {"state_agency": True},
        {"activity": "agricultural_activity"},
        {"activity": "silviculture"},
        {"jurisdiction": "outside"},
    ],
)
def test_excluded_and_exempt_sites_get_no_section_7_duty(prof, site):
    d = one(prof, disturbed_sqft=10 * prof.area_sqft("thresholds.permit_area"), **WET, **STEEP, **site)
    f = findings(d)
    assert d.permit[0] == "not_applicable" and d.standards[0] == ""
    assert not _cites_section_7(f), f
    assert not {"steep_slopes", "protective_area", "nearest_water", "in_water"} & set(f)


def test_section_7b_duties_only_for_permitted_sites(prof):
    thr = prof.area_sqft("thresholds.permit_area")
    big = findings(one(prof, disturbed_sqft=2 * thr, **WET, **STEEP))
    assert {"steep_slopes", "protective_area"} <= set(big)
    assert big["steep_slopes"]["section"] == prof.entry("thresholds.steep_slope").cite
    assert big["protective_area"]["basis"] == "technical_standard"
    assert big["protective_area"]["section"].startswith("NR 151.125")
    # Under the threshold, near water: a permit may be required, and the duties are worded so.
    small = findings(one(prof, disturbed_sqft=0.5 * thr, **WET, **STEEP))
    assert {"steep_slopes_if_permit", "protective_area_if_permit", "permit_may_be_required"} <= set(small)
    assert not {"steep_slopes", "protective_area", "no_steep_slopes"} & set(small)
    # Under the threshold, far from water: § 540-7A only; the steep measurement carries no duty.
    dry = findings(
        one(
            prof,
            disturbed_sqft=0.5 * thr,
            has_waters=True,
            protective_disturbed_sqft=0.0,
            in_water_sqft=0.0,
            nearest_water_ft=900.0,
            nearest_water="Lake",
            **STEEP,
        )
    )
    assert not {"steep_slopes", "steep_slopes_if_permit", "no_steep_slopes", "permit_may_be_required"} & set(dry)
    assert "nearest_water_unpermitted" in dry and "nearest_water" not in dry
    assert dry["nearest_water_unpermitted"]["section"] == prof.template("nearest_water_unpermitted").section


def test_zero_steep_and_zero_protective_area_raise_no_duty(prof):
    thr = prof.area_sqft("thresholds.permit_area")
    f = findings(
        one(
            prof,
            disturbed_sqft=2 * thr,
            has_dem=True,
            steep_disturbed_sqft=0.0,
            steep_uncovered_sqft=0.0,
            has_waters=True,
            protective_disturbed_sqft=0.0,
            in_water_sqft=0.0,
            nearest_water_ft=80.0,
            nearest_water="Lake",
        )
    )
    assert "no_steep_slopes" in f and "steep_slopes" not in f
    assert "protective_area" not in f and "in_water" not in f and "nearest_water" in f


def test_targeted_area_cites_7b6_only_for_a_permitted_site(prof):
    thr = prof.area_sqft("thresholds.permit_area")
    big = findings(one(prof, disturbed_sqft=2 * thr, has_targeted=True, targeted_areas="TMDL"))
    small = findings(one(prof, disturbed_sqft=0.5 * thr, has_targeted=True, targeted_areas="TMDL"))
    assert big["targeted_area"]["section"] == prof.template("targeted_area").section
    assert "targeted_area" not in small and "TMDL" in small["permit_may_be_required"]["message"]


# --- Common plans: exempt activity never counts ---------------------------------------------------


def test_plan_finding_only_when_exempt_area_was_left_out(prof):
    d = decide(
        Measurements.of(
            2,
            disturbed_sqft=1000.0,
            plan_id="P",
            plan_site_count=2,
            plan_disturbed_sqft=1000.0,
            plan_excluded_sqft=[800.0, 0.0],
        ),
        prof,
    )
    assert "agricultural_area_not_counted" in findings(d, 0) and "agricultural_area_not_counted" not in findings(d, 1)
    assert "common_plan" in findings(d, 1)


# --- Other permit triggers (the example profile's fill volume) ------------------------------------


def test_a_fill_volume_trigger_requires_a_permit_at_its_value():
    prof = PROFILES["example"]
    d = decide(Measurements.of(3, disturbed_sqft=100.0, trigger_fields={"fill_cuyd": np.array([399.99, 400, 0])}), prof)
    assert d.permit.tolist() == ["not_required", "required", "not_required"]
    f = findings(d, 1)["permit_required_by_trigger"]
    assert f["section"] == "§ 23-4A(1)(d)" and "400 cubic yards" in f["message"]
    # Winneconne's text is area-only: the same field is ignored there.
    w = decide(
        Measurements.of(1, disturbed_sqft=100.0, trigger_fields={"fill_cuyd": np.array([5000.0])}),
        PROFILES["winneconne"],
    )
    assert w.permit.tolist() == ["not_required"]


# --- Every finding follows its profile ----------------------------------------------------------


def test_every_finding_is_the_profiles_record_and_fully_worded(prof):
    thr = prof.area_sqft("thresholds.permit_area")
    d = decide(
        Measurements.of(
            6,
            disturbed_sqft=[0.5 * thr, 2 * thr, 40 * thr, 2 * thr, 2 * thr, 2 * thr],
            jurisdiction=["inside", "partial", "inside", "outside", "inside", "inside"],
            activity=[
                "construction",
                "construction",
                "agricultural_production",
                "construction",
                "silviculture",
                "construction",
            ],
            state_agency=[False, False, False, False, False, True],
            plan_id=[None, "P", None, None, None, None],
            repaired=[True, False, False, False, False, False],
            **WET,
            **STEEP,
        ),
        prof,
    )
    seen = set()
    for row in d.findings:
        for f in json.loads(row):
            t = prof.template(f["code"])
            assert (f["section"], f["basis"]) == (t.section, t.basis)
            assert "{" not in f["message"] and f["message"]
            if prof is PROFILES["example"]:
                assert "540" not in f["message"] + f["section"] and "Winneconne" not in f["message"]
            seen.add(f["code"])
    assert {
        "jurisdiction_partial",
        "agricultural_production_not_exempt",
        "silviculture_exempt",
        "state_agency",
        "outside_jurisdiction",
        "geometry_repaired",
        "common_plan",
    } <= seen


def test_a_message_is_rendered_alike_column_wise_and_row_by_row():
    """The column-wise rendering (positional fields) gives what ``str.format_map`` gives a row at a time."""
    from esc_gis.findings import FindingTemplate
    from esc_gis.rules import _Findings

    prof = PROFILES["winneconne"]
    t = FindingTemplate(
        "x", "§ 1", "policy", 'At {sqft:,.1f} sq ft of {site!r} in {village}, {sqft:.0f} {{"a"}}: "é"\\'
    )
    assert t.positional({"village": "the {Village}"}, ["sqft", "site"]) == (
        """At {0:,.1f} sq ft of {1!r} in the {{Village}}, {0:.0f} {{"a"}}: "é"\\"""
    )
    # A field that is more than a name is rendered row by row.
    assert FindingTemplate("x", "§ 1", "policy", "{sqft.real:.1f}").positional({}, ["sqft"]) is None
    with pytest.raises(KeyError):
        t.positional({}, ["sqft", "site"])
    rows = {"sqft": np.array([4000.0, 1234567.891]), "site": np.array(["a", 'b"}'], dtype=object)}
    for message in ['At {sqft:,.1f} sq ft of {site!r}: "é" {jurisdiction_name}\\', "{sqft.real:,.1f} of {site}"]:
        # A section with braces: they are the JSON head's, not placeholders.
        tpl = FindingTemplate("disturbed_area", "§ 540-5 {a}", "ordinance", message)
        f = _Findings(2, dataclasses.replace(prof, findings={**prof.findings, "disturbed_area": tpl}))
        f.add(np.array([True, True]), "disturbed_area", **rows)
        got = [json.loads(r)[0]["message"] for r in f.json()]
        assert {json.loads(r)[0]["section"] for r in f.json()} == {"§ 540-5 {a}"}
        names = {**prof.names(), "sqft": 0.0, "site": ""}
        want = [message.format_map({**names, "sqft": s, "site": w}) for s, w in zip(*rows.values(), strict=True)]
        assert got == want


@pytest.mark.parametrize("named", [None, "", float("nan")])
def test_a_plan_across_the_line_whose_outside_sites_are_unnamed_says_so(prof, named):
    """The finding names the part of the plan outside the line and its sites; where the screening could name
    none (no id), it says "?" rather than a blank or "None"."""
    values = _plan_across(prof.area_sqft("thresholds.permit_area"), sites=2, outside=named)
    g = findings(one(prof, **values))["common_plan_partial"]
    assert "wholly outside: ?)" in g["message"] and "None" not in g["message"] and "nan" not in g["message"]
