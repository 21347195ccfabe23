"""Which part of the ordinance a plan's review reaches, from the screening's one answer for its site.

A site outside the Village, or one the article leaves out (§ 540-4B, 4C, 4A(2)), is told so and
nothing else; a site under the permit threshold is checked against § 540-7A only (§ 540-4A(1)(b));
a permitted site is reviewed in full by :mod:`esc_gis.review.plan`. Pure: the screening's row and
the review's measurements in, checks out (issue 34, "one site, one answer").
"""

from __future__ import annotations

__all__ = ["decision_check", "scope_checks"]

import dataclasses
import json
from typing import Any

from esc_gis.profile import Profile
from esc_gis.review.checks import Check, make_check
from esc_gis.rules import NOT_APPLICABLE_FINDING, screening_reasons


def decision_check(m: dict[str, Any], prof: Profile) -> Check:
    """Return the screening's decision on the plan's site as a check: outside, or the permit and standards.

    Parameters
    ----------
    m : dict
        The review's measurements (``jurisdiction``, ``permit``, ``standards``,
        ``sediment_standard``, ``disturbed_sqft`` and, for a common plan, ``plan_disturbed_sqft``;
        ``determined``: the words of a § 540-4A(1)(c) determination that made the site required).
    prof : Profile

    Returns
    -------
    Check

    Raises
    ------
    KeyError
        If ``m`` lacks a measurement, or the profile a finding.
    """
    if m["jurisdiction"] == "outside":
        return make_check(prof, "decision", "look", "review_decision_outside")
    if m.get("determined"):
        # § 540-4A(1)(c): required by the administering authority's determination, not by the area.
        return make_check(
            prof,
            "decision",
            "pass",
            "review_decision_determined",
            standards=m["standards"],
            disturbed_sqft=m.get("plan_disturbed_sqft", m["disturbed_sqft"]),
            determination=m["determined"],
        )
    return make_check(
        prof,
        "decision",
        "pass",
        "review_decision_sediment" if m["sediment_standard"] else "review_decision",
        permit=m["permit"].replace("_", " "),
        standards=m["standards"],
        # The area decided on: the whole common plan's when the site is part of one.
        disturbed_sqft=m.get("plan_disturbed_sqft", m["disturbed_sqft"]),
    )


def scope_checks(res: Any, m: dict[str, Any], prof: Profile) -> list[Check]:
    """Return the checks of a site the article does not reach or that needs no permit; none for a permitted one.

    § 540-4A(1)(b): under the permit threshold only § 540-7A applies, so nothing of § 540-9 or
    § 540-7B is checked and no reason is drafted from them; a site the screening leaves outside
    the article (§ 540-4B, 4C, 4A(2)) is told so, in the screening's words, and nothing else.

    Parameters
    ----------
    res : pandas.Series or None
        The plan site's screening row (None when the package has no site map to screen).
    m : dict
        The review's measurements, the decision possibly re-made on the common plan's total.
    prof : Profile

    Returns
    -------
    list of Check

    Raises
    ------
    KeyError
        If ``m`` lacks a measurement, or the profile a finding.
    """
    if res is None:
        return []
    appl = m["applicability"]
    if appl != "applies":
        found = json.loads(res["findings"] or "[]")
        near = [f for f in found if f.get("code") == "outside_jurisdiction_extraterritorial"]
        if m["jurisdiction"] == "outside" and not near:
            return [make_check(prof, "decision", "look", "review_decision_outside")]
        # Within § 540-5's extraterritorial area "does not apply" is a reading: quoted with its basis.
        codes = screening_reasons(NOT_APPLICABLE_FINDING[appl])
        said = [f for f in found if f.get("code") in codes]
        reason = said[0]["message"] if said else appl.replace("_", " ") + "."
        words = appl.replace("_", " ") + ("; a reading" if near else "")
        code = "review_decision_not_applicable"
        check = make_check(prof, "decision", "look", code, applicability=words, reason=reason)
        # The section and basis are the screening's: which subsection leaves the site out, and
        # whether the text says so or it is a reading.
        return [dataclasses.replace(check, section=said[0]["section"], basis=said[0]["basis"]) if said else check]
    if m["permit"] != "not_required":
        return []
    code = "review_non_permitted_may_require" if m["permit_may_be_required"] else "review_non_permitted"
    # An NPDES-exempt site under the area (§ 540-4A(3)) needs no permit whatever its size: its own section.
    if any(f.get("code") == "npdes_exempt_under_1_acre" for f in json.loads(res["findings"] or "[]")):
        code = "review_non_permitted_npdes"
    plan_sqft = m.get("plan_disturbed_sqft", m["disturbed_sqft"])
    return [decision_check(m, prof), make_check(prof, "non_permitted", "look", code, plan_sqft=plan_sqft)]
