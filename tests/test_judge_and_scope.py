"""The two pure decisions that soil-loss and review take from the screening (issue 34), pinned at their edges.

:func:`esc_gis.soil.judge.judge` tests each site's governing window against § 540-7B(3)(b): "For
sites with one acre or more of land-disturbing construction activity, the plan shall meet the
following sediment performance standards", a discharge of "no more than 5 tons per acre per year"
(the profile's ``standard_tpa``). :func:`esc_gis.review.scope.scope_checks` says which part of the
ordinance a plan's review reaches: § 540-4A(1)(b) "... is subject only to the performance standards
for non-permitted sites in § 540-7A", § 540-4A(3) for an NPDES-exempt site, § 540-4B for a site
outside. Inputs are built here; every answer can be checked by hand.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from esc_gis.profile import load_profile
from esc_gis.review.scope import decision_check, scope_checks
from esc_gis.soil.judge import judge

W = load_profile()
ACRE = 43_560.0
STD = 5.0
UNDER = float(np.nextafter(STD, np.inf))  # the smallest discharge over the standard
BELOW_ACRE = float(np.nextafter(ACRE, 0))


# -- judge: "no more than" the standard, from "one acre or more" ------------------------------------


def test_the_governing_window_is_the_largest_discharge_and_its_own_soil_loss_is_reported() -> None:
    # Window 2 discharges most (4.0) though window 1 loses more soil (9.0 before practices).
    j = judge([[3.0, 4.0, 1.0]], [[9.0, 8.0, 2.0]], [ACRE], STD, W)
    assert j.governing.tolist() == [1]
    assert j.discharge_tpa.tolist() == [4.0]
    assert j.soil_loss_tpa.tolist() == [8.0]
    assert j.computed.tolist() == [True]


def test_a_discharge_equal_to_the_standard_passes_and_the_next_float_up_fails() -> None:
    j = judge([[STD], [UNDER]], [[STD], [UNDER]], [ACRE, ACRE], STD, W)
    assert j.passes.tolist() == [True, False]
    assert j.reaches.tolist() == [True, True]


def test_a_site_with_a_window_not_computed_is_not_computed_and_not_passed() -> None:
    j = judge([[1.0, np.nan], [np.nan, np.nan]], [[1.0, np.nan], [np.nan, np.nan]], [ACRE, ACRE], STD, W)
    assert j.computed.tolist() == [False, False]
    assert np.isnan(j.discharge_tpa).all() and np.isnan(j.soil_loss_tpa).all()
    assert j.passes.tolist() == [False, False]
    # The governing window still names the largest number there is (window 1), for the table.
    assert j.governing.tolist()[0] == 0


@pytest.mark.parametrize(("plan_sqft", "reaches"), [(ACRE, True), (BELOW_ACRE, False), (np.nan, False)])
def test_without_a_screening_the_standard_reaches_from_exactly_one_acre(plan_sqft: float, reaches: bool) -> None:
    assert judge([[1.0]], [[1.0]], [plan_sqft], STD, W).reaches.tolist() == [reaches]


@pytest.mark.parametrize(
    ("applicability", "screened", "plan_sqft", "reaches"),
    [
        ("applies", True, BELOW_ACRE, True),  # the screening counted a common plan the layer shows
        ("applies", False, ACRE, True),  # a plan total from outside the layer (the registry's)
        ("applies", False, BELOW_ACRE, False),
        ("exempt_agricultural", True, ACRE, False),  # the article does not apply: nothing reaches
        ("outside_jurisdiction", False, ACRE, False),
    ],
)
def test_with_a_screening_the_standard_reaches_where_the_article_applies(
    applicability: str, screened: bool, plan_sqft: float, reaches: bool
) -> None:
    j = judge([[1.0]], [[1.0]], [plan_sqft], STD, W, [applicability], [screened])
    assert j.reaches.tolist() == [reaches]


def test_a_window_given_as_none_is_not_computed_and_the_numbers_stay_floats() -> None:
    # A missing number (None, as a CSV or a JSON list gives it) is NaN: that window has no number.
    j = judge([[1.0, None], [2.0, 3.0]], [[None, 1.0], [2.0, 4.0]], [ACRE, ACRE], STD, W)
    assert j.computed.tolist() == [False, True]
    assert j.discharge_tpa.dtype == np.float64 and j.soil_loss_tpa.dtype == np.float64
    assert j.soil_loss_tpa[1] == 4.0 and np.isnan(j.soil_loss_tpa[0])


def test_a_screening_without_its_sediment_answer_extends_the_standard_only_by_the_plan_total() -> None:
    # applicability given, sediment_standard not: the screening is taken to say "does not reach".
    j = judge([[1.0], [1.0]], [[1.0], [1.0]], [BELOW_ACRE, ACRE], STD, W, ["applies", "applies"])
    assert j.reaches.tolist() == [False, True]
    j = judge([[1.0]], [[1.0]], [BELOW_ACRE], STD, W, ["applies"], [None])
    assert j.reaches.tolist() == [False]


def test_arrays_that_are_not_sites_by_windows_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\(sites, windows\)"):
        judge([1.0, 2.0], [1.0, 2.0], [ACRE], STD, W)
    with pytest.raises(ValueError, match=r"\(sites, windows\)"):
        judge([[1.0, 2.0]], [[1.0]], [ACRE], STD, W)


# -- scope: what a review reaches ------------------------------------------------------------------


def _m(**kw: object) -> dict[str, object]:
    m: dict[str, object] = {
        "jurisdiction": "inside",
        "applicability": "applies",
        "permit": "required",
        "permit_may_be_required": False,
        "standards": "540-7A, 540-7B",
        "sediment_standard": False,
        "disturbed_sqft": 4_000.0,
    }
    m.update(kw)
    return m


def _res(*findings: dict[str, str]) -> dict[str, str]:
    return {"findings": json.dumps(list(findings))}


def test_a_permitted_site_is_reviewed_in_full_and_a_package_with_no_site_map_too() -> None:
    assert scope_checks(_res(), _m(), W) == []
    assert scope_checks(None, _m(permit="not_required"), W) == []


@pytest.mark.parametrize("empty", ["", None])
def test_a_screening_row_without_findings_is_read_as_none(empty: str | None) -> None:
    res = {"findings": empty}
    (only,) = scope_checks(res, _m(applicability="excluded_state_agency"), W)
    assert only.finding == "review_decision_not_applicable"
    _dec, non = scope_checks(res, _m(permit="not_required"), W)
    assert non.finding == "review_non_permitted"


def test_a_site_under_the_threshold_is_held_to_540_7a_only_on_its_common_plans_area() -> None:
    # § 540-4A(1)(b): "... is subject only to the performance standards for non-permitted sites in § 540-7A".
    m = _m(permit="not_required", standards="540-7A", disturbed_sqft=3_999.0, plan_disturbed_sqft=3_999.5)
    dec, non = scope_checks(_res(), m, W)
    assert (dec.finding, dec.status) == ("review_decision", "pass")
    assert (non.finding, non.status, non.section) == ("review_non_permitted", "look", "§ 540-4A(1)(b); § 540-7A")
    assert "4,000 sq ft" in non.detail  # the plan's 3,999.5, not the lot's 3,999
    assert "4,000 sq ft" in dec.detail


def test_a_site_the_authority_may_still_require_a_permit_of_is_told_so() -> None:
    # § 540-4A(1)(c): the authority may determine that permit coverage is needed.
    _, non = scope_checks(_res(), _m(permit="not_required", permit_may_be_required=True), W)
    assert non.finding == "review_non_permitted_may_require"


def test_an_npdes_exempt_site_under_the_acre_rests_on_540_4a3() -> None:
    res = _res({"code": "npdes_exempt_under_1_acre", "section": "§ 540-4A(3)", "basis": "ordinance", "message": "x"})
    _, non = scope_checks(res, _m(permit="not_required", permit_may_be_required=True), W)
    assert (non.finding, non.section) == ("review_non_permitted_npdes", "§ 540-4A(3); § 540-7A")


def test_a_site_outside_the_village_is_told_so_and_nothing_else() -> None:
    (only,) = scope_checks(_res(), _m(jurisdiction="outside", applicability="outside_jurisdiction"), W)
    assert (only.finding, only.status, only.section) == ("review_decision_outside", "look", "§ 540-4B")


def test_a_site_left_out_by_the_article_quotes_the_screenings_reason_section_and_basis() -> None:
    said = {"code": "agricultural_activity_exempt", "section": "§ 540-4C(1)", "basis": "ordinance", "message": "Farm."}
    (only,) = scope_checks(_res(said), _m(applicability="exempt_agricultural"), W)
    assert (only.finding, only.status) == ("review_decision_not_applicable", "look")
    assert (only.section, only.basis) == ("§ 540-4C(1)", "ordinance")
    assert "(exempt agricultural): Farm. Nothing" in only.detail


def test_a_site_in_the_extraterritorial_area_is_left_out_as_a_reading_with_its_basis() -> None:
    near = {
        "code": "outside_jurisdiction_extraterritorial",
        "section": "§ 540-4B; § 540-5",
        "basis": "interpretation",
        "message": "Near.",
    }
    m = _m(jurisdiction="outside", applicability="outside_jurisdiction")
    (only,) = scope_checks(_res(near), m, W)
    assert only.finding == "review_decision_not_applicable"
    assert (only.section, only.basis) == ("§ 540-4B; § 540-5", "interpretation")
    assert "(outside jurisdiction; a reading): Near." in only.detail


def test_a_left_out_site_whose_reason_the_screening_did_not_word_names_its_applicability() -> None:
    (only,) = scope_checks(_res(), _m(applicability="excluded_state_agency"), W)
    assert only.section == "§ 540-4"  # the profile's own, as nothing more precise was said
    assert "(excluded state agency): excluded state agency. Nothing" in only.detail


def test_the_decision_says_the_permit_and_the_standards_in_words() -> None:
    dec = decision_check(_m(permit="not_required", standards="540-7A"), W)
    assert dec.detail.startswith("permit not required; § 540-7A apply to 4,000 sq ft")
    assert decision_check(_m(), W).detail.startswith("permit required; § 540-7A, 540-7B apply")


def test_a_determined_site_is_decided_by_the_determination_in_its_words() -> None:
    """§ 540-4A(1)(c): "a permit is required for a construction site with less than 4,000 square feet ... if
    the administering authority determines that permit coverage is needed"; then "the responsible party shall
    comply with all applicable provisions of this article for a permitted site"."""
    dec = decision_check(
        _m(determined="2026-11-20: near Mill Creek", standards="540-7A, 540-7B", disturbed_sqft=3_000.0), W
    )
    assert (dec.finding, dec.status, dec.section, dec.basis) == (
        "review_decision_determined",
        "pass",
        "§ 540-4A(1)(c)",
        "ordinance",
    )
    assert dec.detail.startswith(
        "permit required by the administering authority's determination (2026-11-20: near Mill Creek) for 3,000 sq ft"
    )
    assert dec.detail.endswith("so § 540-7A, 540-7B apply and the plan is reviewed in full")
    # The common plan's total, where the site is part of one, is the area decided on.
    plan = decision_check(_m(determined="d", disturbed_sqft=3_000.0, plan_disturbed_sqft=3_500.0), W)
    assert "for 3,500 sq ft" in plan.detail
    # Outside the Village, a determination decides nothing (§ 540-4B).
    out = decision_check(_m(determined="d", jurisdiction="outside"), W)
    assert (out.finding, out.status) == ("review_decision_outside", "look")
    # No determination: the area decides (an empty one is none).
    assert decision_check(_m(determined=""), W).finding == "review_decision"


def test_the_decision_names_the_sediment_standard_from_the_acre_and_outside_is_a_look() -> None:
    assert decision_check(_m(sediment_standard=True), W).finding == "review_decision_sediment"
    assert decision_check(_m(), W).finding == "review_decision"
    out = decision_check(_m(jurisdiction="outside"), W)
    assert (out.finding, out.status) == ("review_decision_outside", "look")
