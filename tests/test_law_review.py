"""Plan-review checks pinned at their edges (§ 540-9A, § 540-9C, § 540-7B(3)(b), § 540-8I).

The check functions of :mod:`esc_gis.review.checks` are called directly with small inputs
built here, as :func:`esc_gis.review.plan.review_plan` calls them: ``plan.toml`` as a dict,
the package's layer names, each BMP's standard number, the drawn disturbance in square feet.
Each outcome is checked whole (code, title, section, basis, status, wording, finding,
policy keys), present where it applies and absent one step the other side of its edge, over
both profiles where their numbers differ: the Village's sediment standard and less stringent
requirements start at 1 acre (43,560 sq ft) with a 5 t/ac/yr load, the test profile "Town of
Example"'s at 0.5 acre (21,780 sq ft) with 3 t/ac/yr. The geometric helpers get squares and
triangles in feet, offset to where Winneconne is, whose segments and normals are worked out
by hand.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import shapely

from esc_gis.errors import ProfileError
from esc_gis.profile import Profile, load_profile
from esc_gis.review.checks import (
    PACKAGE_KEYS,
    TITLES,
    Check,
    covered,
    downslope,
    edge_segments,
    make_check,
    plan_items,
    segments_geometry,
)

W = load_profile()
X = load_profile(Path(__file__).parent / "profiles" / "example.toml")
#: Values of a soil-loss comparison: the applicant's 3.1 against the review's 6.4.
SOIL_LOSS_VALUES = {
    "applicant_tpa": 3.1,
    "computed_tpa": 6.4,
    "diff_share": (3.1 - 6.4) / 6.4,
    "soil_loss_tpa": 12.8,
    "window_start": "2027-04-01",
    "window_end": "2028-03-31",
    "r_annual": 120.0,
    "r_from": "the plan",
    "k": 0.28,
    "k_from": "the layer set's soils",
    "ls": 1.2,
    "outside_pct": 0.0,
}

BOTH = pytest.mark.parametrize("prof", [W, X], ids=["winneconne", "example"])
ACRE = 43_560.0  # square feet, written here rather than imported: the test's own arithmetic
X0, Y0 = 745_000.0, 505_000.0  # EPSG:7594 (US survey feet) near Winneconne, as tests/conftest.py

OWNER = {"name": "Ann Owner", "address": "1 Test St", "phone": "920-555-0100"}
DIGGER = {"name": "Dig Co", "address": "2 Test St", "phone": "920-555-0199"}
FACTS: dict[str, Any] = {
    "landowner": OWNER,
    "responsible_parties": [DIGGER],
    "site": {
        "legal_description": "Lot 1, Test Plat",
        "site_area_sqft": 40000,
        "disturbed_area_sqft": 10000.5,
        "performance_standards": ["540-7B"],
    },
    "schedule": {"start": "2027-04-01", "end": "2027-08-01", "sequence": ["fence", "dig"]},
    "narrative": {"text": "Silt fence on the south.", "spill_procedures": "Spill kit on site."},
    "rusle2": {"sediment_tons_per_acre_year": 2.1},
    # § 540-9A(9): "the items specified in the ... Reference Guide and RUSLE2": the plan says it has both.
    "reference_guide": {"included": True},
}
LAYERS = {"site_boundary", "disturbed_limits", "drainage", "bmps"}
CODES: list[str | None] = ["1056", "1057"]


def _facts(**changes: Any) -> dict[str, Any]:
    """FACTS with some top-level tables replaced (a table set to None is dropped)."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in FACTS.items()}
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def _site(prof: Profile, **changes: Any) -> dict[str, Any]:
    site = {**FACTS["site"], "performance_standards": [prof.standards_permitted], **changes}
    return {k: v for k, v in site.items() if v is not None}


def _items(prof: Profile, facts: dict[str, Any] | None = None, **kw: Any) -> dict[str, list[Check]]:
    """Run plan_items on the complete plan (or ``facts``); return the checks by code."""
    args: dict[str, Any] = {
        "layers": LAYERS,
        "bmp_codes": CODES,
        "computed_standards": prof.standards_permitted,
        "disturbed_sqft": 10_000.0,
    }
    args.update(kw)
    if facts is None:
        facts = _facts(site=_site(prof))
    checks = plan_items(
        facts,
        args["layers"],
        args["bmp_codes"],
        computed_standards=args["computed_standards"],
        disturbed_sqft=args["disturbed_sqft"],
        profile=prof,
    )
    out: dict[str, list[Check]] = {}
    for c in checks:
        out.setdefault(c.code, []).append(c)
    return out


def _expected(
    prof: Profile, code: str, status: str, finding: str, policy: tuple[str, ...] = (), **values: Any
) -> Check:
    """The check as the profile words it: its title from the check's title finding."""
    f = prof.finding(finding, **values)
    title = prof.template(TITLES[code]).title
    return Check(code, title, f.section, f.basis, status, f.message, finding, policy, PACKAGE_KEYS[code])


def _one(checks: dict[str, list[Check]], code: str) -> Check:
    assert len(checks[code]) == 1, checks[code]
    return checks[code][0]


# --- The complete plan: every item passes, in the order of § 540-9A -----------------------------


@BOTH
def test_the_complete_plan_passes_every_item_in_order(prof: Profile) -> None:
    checks = plan_items(
        _facts(site=_site(prof)),
        LAYERS,
        ["1057", "1056", "1057"],
        computed_standards=prof.standards_permitted,
        disturbed_sqft=10_000.0,
        profile=prof,
    )
    assert [c.code for c in checks] == [f"plan_item_{n}" for n in range(1, 10)] + ["spill"]
    assert [c.status for c in checks] == ["pass"] * 10
    assert [c.finding for c in checks] == [
        "review_parties_given",
        "review_legal_description_given",
        "review_site_map_given",
        "review_areas_stated",
        "review_standards_match",
        "review_bmps_given",
        "review_narrative_given",
        "review_sequence_given",
        "review_rusle2_given",
        "review_spill_given",
    ]
    assert {c.basis for c in checks} == {"ordinance"}
    assert all(c.policy == () for c in checks)
    s = prof.standards_permitted
    e = {"parties": 1, "party_word": "party"}
    assert checks[0] == _expected(prof, "plan_item_1", "pass", "review_parties_given", **e)
    assert checks[1] == _expected(prof, "plan_item_2", "pass", "review_legal_description_given")
    assert checks[2] == _expected(prof, "plan_item_3", "pass", "review_site_map_given")
    assert checks[3] == _expected(prof, "plan_item_4", "pass", "review_areas_stated")
    assert checks[4] == _expected(prof, "plan_item_5", "pass", "review_standards_match", computed=s)
    e = {"known": 3, "standards": "1056, 1057"}
    assert checks[5] == _expected(prof, "plan_item_6", "pass", "review_bmps_given", **e)
    assert checks[6] == _expected(prof, "plan_item_7", "pass", "review_narrative_given")
    assert checks[7] == _expected(prof, "plan_item_8", "pass", "review_sequence_given")
    e = {"disturbed_acres": 10_000 / ACRE, "load": 2.1}
    assert checks[8] == _expected(prof, "plan_item_9", "pass", "review_rusle2_given", **e)
    assert checks[9] == _expected(prof, "spill", "pass", "review_spill_given")


def test_the_complete_plan_in_the_villages_words() -> None:
    """The wording itself, written out for the Village's profile (the others come from the profile)."""
    c = _items(W, disturbed_sqft=10_000.0)
    assert _one(c, "plan_item_1") == Check(
        "plan_item_1",
        "Names, addresses and phones of the landowner and responsible parties",
        "§ 540-9A(1)",
        "ordinance",
        "pass",
        "landowner and 1 responsible party, each with name, address and phone",
        "review_parties_given",
        (),
        "plan.toml [landowner], [[responsible_parties]]: name, address, phone",
    )
    assert _one(c, "plan_item_5").detail == "§ 540-7B, as the drawing shows"
    assert _one(c, "plan_item_6").detail == "2 BMPs, WDNR technical standards 1056, 1057"
    assert _one(c, "plan_item_9").detail == (
        "RUSLE2 gives 2.1 t/ac/yr; 0.23 acres disturbed, under 1 acre, so the sediment standard of § 540-7B(3)(b) "
        "does not apply; the plan says it includes the Reference Guide's items, which the reviewer checks"
    )
    assert (_one(c, "plan_item_9").section, _one(c, "spill").section) == ("§ 540-9A(9)", "§ 540-7B(3)(c)[4]")
    assert _one(c, "spill").title == "Spill prevention and response procedures"


# --- Item 1: landowner and responsible parties ------------------------------------------------


@pytest.mark.parametrize(
    "owner, parties, finding, detail",
    [
        (
            OWNER,
            [DIGGER],
            "review_parties_given",
            "landowner and 1 responsible party, each with name, address and phone",
        ),
        (
            OWNER,
            [DIGGER, {**DIGGER, "name": "Pipe Co"}],
            "review_parties_given",
            "landowner and 2 responsible parties, each with name, address and phone",
        ),
        (None, None, "review_parties_none", "no landowner or responsible party is named"),
        ({}, [], "review_parties_none", "no landowner or responsible party is named"),
        # § 540-5 RESPONSIBLE PARTY: "Any entity holding fee title to the property": the landowner alone is one.
        (
            OWNER,
            None,
            "review_parties_landowner_only",
            'the landowner, with name, address and phone, is the responsible party (§ 540-5: "any entity holding fee '
            'title to the property"); no other is named',
        ),
        (None, [DIGGER], "review_parties_incomplete", "no landowner"),
        (
            {"name": "Ann Owner"},
            None,
            "review_parties_incomplete",
            "Ann Owner has no address, phone",
        ),
        (
            {"name": "Ann Owner", "address": "  ", "phone": None},
            [{"address": "2 Test St", "phone": "920-555-0199"}],
            "review_parties_incomplete",
            "Ann Owner has no address, phone; (unnamed) has no name",
        ),
        (OWNER, [DIGGER, {**DIGGER, "phone": ""}], "review_parties_incomplete", "Dig Co has no phone"),
        (OWNER, [{**DIGGER, "address": 0}], "review_parties_incomplete", "Dig Co has no address"),
        (None, [{**DIGGER, "phone": None}], "review_parties_incomplete", "no landowner; Dig Co has no phone"),
    ],
    ids=[
        "one party",
        "two parties",
        "nobody",
        "empty tables",
        "the landowner alone",
        "no owner",
        "owner incomplete, no party",
        "both incomplete",
        "second party incomplete",
        "zero is not an address",
        "no owner, party incomplete",
    ],
)
@BOTH
def test_item_1_names_every_missing_party_and_field(
    prof: Profile, owner: dict | None, parties: list | None, finding: str, detail: str
) -> None:
    c = _one(_items(prof, _facts(landowner=owner, responsible_parties=parties)), "plan_item_1")
    detail = detail.replace("§ 540-", prof.template("review_parties_given").section.split("-")[0] + "-")
    status = "pass" if finding in ("review_parties_given", "review_parties_landowner_only") else "fail"
    assert (c.code, c.status, c.finding, c.detail, c.basis, c.policy) == (
        "plan_item_1",
        status,
        finding,
        detail,
        "ordinance",
        (),
    )
    assert c.section == prof.template("review_parties_given").section
    assert c.title == prof.template("review_parties_given").title


@BOTH
def test_item_1_a_blank_name_is_no_name(prof: Profile) -> None:
    c = _one(_items(prof, _facts(landowner=OWNER, responsible_parties=[{**DIGGER, "name": "  "}])), "plan_item_1")
    assert (c.status, c.finding) == ("fail", "review_parties_incomplete")
    assert c.detail.endswith(" has no name")


# --- Items 2, 3, 4, 7, 8 and the spill procedures: given or missing -----------------------------


@pytest.mark.parametrize(
    "table, value, code, finding",
    [
        ("site", {"legal_description": "  "}, "plan_item_2", "review_legal_description_missing"),
        ("site", {"legal_description": None}, "plan_item_2", "review_legal_description_missing"),
        ("narrative", {"spill_procedures": "Spill kit."}, "plan_item_7", "review_narrative_missing"),
        ("narrative", {"text": "Silt fence.", "spill_procedures": " "}, "spill", "review_spill_missing"),
        (
            "schedule",
            {"start": "2027-04-01", "end": "2027-08-01", "sequence": []},
            "plan_item_8",
            "review_sequence_missing",
        ),
        ("schedule", None, "plan_item_8", "review_sequence_missing"),
        ("narrative", None, "plan_item_7", "review_narrative_missing"),
        ("narrative", None, "spill", "review_spill_missing"),
    ],
)
@BOTH
def test_a_missing_fact_fails_its_item_and_only_it(
    prof: Profile, table: str, value: dict | None, code: str, finding: str
) -> None:
    changes: dict[str, Any] = {"site": _site(prof), table: value}
    if table == "site":
        changes["site"] = _site(prof, **value)  # type: ignore[arg-type]
    checks = _items(prof, _facts(**changes))
    assert _one(checks, code) == _expected(prof, code, "fail", finding)
    failed = {c.code for cs in checks.values() for c in cs if c.status != "pass"}
    both = {"plan_item_7", "spill"} if value is None and table == "narrative" else {code}
    assert failed == both


@pytest.mark.parametrize(
    "schedule",
    [{"start": "2027-04-01", "sequence": ["dig"]}, {"end": "2027-08-01", "sequence": ["dig"]}, {"sequence": ["dig"]}],
)
@BOTH
def test_item_8_a_sequence_without_dates_is_looked_at_not_failed(prof: Profile, schedule: dict) -> None:
    # § 540-9A(8) "Construction sequence and construction schedule." names no calendar dates: a
    # sequence in relative weeks may be the schedule, so the missing dates are a reading's "look".
    checks = _items(prof, _facts(site=_site(prof), schedule=schedule))
    c = _one(checks, "plan_item_8")
    assert c == _expected(prof, "plan_item_8", "look", "review_sequence_undated")
    assert c.basis == "interpretation"
    assert not [x for cs in checks.values() for x in cs if x.status == "fail"]


@pytest.mark.parametrize(
    "layers, missing",
    [
        # "A site map with property lines, disturbed limits, and drainage patterns", in those words.
        (set(), "the property lines, the disturbed limits and the drainage patterns"),
        ({"bmps", "drainage"}, "the property lines and the disturbed limits"),
        ({"site_boundary", "disturbed_limits", "bmps"}, "the drainage patterns"),
        ({"site_boundary", "drainage", "bmps"}, "the disturbed limits"),
    ],
)
@BOTH
def test_item_3_lists_the_layers_the_site_map_lacks(prof: Profile, layers: set[str], missing: str) -> None:
    c = _one(_items(prof, layers=layers), "plan_item_3")
    assert c == _expected(prof, "plan_item_3", "fail", "review_site_map_missing", missing_layers=missing)
    assert c.detail == f"the site map does not show {missing}"
    assert c.package_key == "layers site_boundary, disturbed_limits, drainage"  # for staff, in the JSON


@pytest.mark.parametrize(
    "site_area, disturbed_area, status",
    [
        (40000, 10000, "pass"),
        (40000.0, 0, "pass"),
        (None, 10000, "fail"),
        (40000, None, "fail"),
        (None, None, "fail"),
        ("40000", 10000, "fail"),
        (40000, "10,000", "fail"),
        (True, 10000, "fail"),  # a yes/no field is not an area (bool is an int in Python)
        (40000, False, "fail"),
    ],
)
@BOTH
def test_item_4_needs_both_areas_as_numbers(prof: Profile, site_area: Any, disturbed_area: Any, status: str) -> None:
    facts = _facts(site=_site(prof, site_area_sqft=site_area, disturbed_area_sqft=disturbed_area))
    finding = "review_areas_stated" if status == "pass" else "review_areas_missing"
    assert _one(_items(prof, facts), "plan_item_4") == _expected(prof, "plan_item_4", status, finding)


# --- Item 5: the performance standards stated against the computed ones -------------------------


@pytest.mark.parametrize(
    "stated, finding, shown",
    [
        (["540-7B"], "review_standards_match", None),
        (["§ 540-7B"], "review_standards_match", None),
        (["  § 540-7B "], "review_standards_match", None),
        (["540-7A", "§540-7B"], "review_standards_match", None),
        (None, "review_standards_none", None),
        ([], "review_standards_none", None),
        (["540-7A"], "review_standards_differ", "540-7A"),
        (["§ 540-7A", " 540-8 "], "review_standards_differ", "540-7A, 540-8"),
        (["540-7B(3)"], "review_standards_differ", "540-7B(3)"),
        ([7], "review_standards_differ", "7"),
    ],
)
def test_item_5_compares_the_stated_standards_without_the_section_mark(
    stated: list | None, finding: str, shown: str | None
) -> None:
    facts = _facts(site={**FACTS["site"], "performance_standards": stated})
    c = _one(_items(W, facts, computed_standards="540-7B"), "plan_item_5")
    status = "pass" if finding == "review_standards_match" else "fail"
    values = {"computed": "540-7B"} if shown is None else {"computed": "540-7B", "stated": shown}
    assert c == _expected(W, "plan_item_5", status, finding, **values)
    words = {
        "review_standards_match": "§ 540-7B, as the drawing shows",
        "review_standards_none": "none stated; the drawn disturbance makes § 540-7B apply",
        "review_standards_differ": f"the plan states {shown}; the drawn disturbance makes § 540-7B apply",
    }
    assert c.detail == words[finding]


@BOTH
def test_item_5_follows_the_computed_standards(prof: Profile) -> None:
    """A plan stating the permitted site's standards fails when the drawing makes the other ones apply."""
    facts = _facts(site=_site(prof))
    c = _one(_items(prof, facts, computed_standards=prof.standards_unpermitted), "plan_item_5")
    e = {"stated": prof.standards_permitted, "computed": prof.standards_unpermitted}
    assert c == _expected(prof, "plan_item_5", "fail", "review_standards_differ", **e)


# --- Item 6: the BMPs and their WDNR standards ---------------------------------------------------


@pytest.mark.parametrize(
    "layers, codes, status, finding, values",
    [
        (LAYERS, ["1057", "1056", "1057"], "pass", "review_bmps_given", {"known": 3, "standards": "1056, 1057"}),
        (LAYERS, ["1060"], "pass", "review_bmps_given", {"known": 1, "standards": "1060"}),
        (LAYERS - {"bmps"}, ["1056"], "fail", "review_bmps_none", {}),
        (LAYERS, [], "fail", "review_bmps_none", {}),
        (LAYERS, ["1057", None, "1056", None], "look", "review_bmps_unknown", {"known": 2, "unknown": 2}),
        (LAYERS, [None], "look", "review_bmps_unknown", {"known": 0, "unknown": 1}),
    ],
)
@BOTH
def test_item_6_counts_known_and_unknown_bmps(
    prof: Profile, layers: set[str], codes: list, status: str, finding: str, values: dict
) -> None:
    c = _one(_items(prof, layers=layers, bmp_codes=codes), "plan_item_6")
    assert c == _expected(prof, "plan_item_6", status, finding, **values)


def test_item_6_unknown_types_rest_on_the_technical_standards() -> None:
    c = _one(_items(W, bmp_codes=["1057", None, None]), "plan_item_6")
    assert (c.basis, c.policy) == ("technical_standard", ())
    assert c.detail == "1 BMPs of known types; 2 with a type not in the WDNR technical standards"
    assert c.title == "Proposed best management practices"


# --- Item 9: RUSLE2 and the sediment standard at its acre ----------------------------------------


def _sed(prof: Profile) -> tuple[float, float]:
    """The sediment standard's area (sq ft) and load (t/ac/yr), by hand per profile."""
    return {"Village of Winneconne": (ACRE, 5.0), "Town of Example": (ACRE / 2, 3.0)}[prof.name]


def _rusle(prof: Profile, disturbed_sqft: float, rusle2: dict | None) -> list[Check]:
    checks = _items(prof, _facts(site=_site(prof), rusle2=rusle2), disturbed_sqft=disturbed_sqft)
    return checks["plan_item_9"] + checks.get("less_stringent", [])


def _less(prof: Profile, disturbed_sqft: float) -> Check:
    return _expected(prof, "less_stringent", "look", "review_less_stringent", disturbed_acres=disturbed_sqft / ACRE)


@BOTH
@pytest.mark.parametrize("step", [-0.01, 0.0, 0.01])
@pytest.mark.parametrize(
    "rusle2", [None, {}, {"sediment_tons_per_acre_year": "2.1"}, {"sediment_tons_per_acre_year": True}]
)
def test_item_9_without_a_rusle2_load_fails_whatever_the_size(prof: Profile, step: float, rusle2: dict | None) -> None:
    """Under the acre, the failure gets the less stringent look beside it (§ 540-9C); at it and over, not."""
    area, _ = _sed(prof)
    disturbed = area + step
    item = _expected(prof, "plan_item_9", "fail", "review_rusle2_missing", disturbed_acres=disturbed / ACRE)
    assert _rusle(prof, disturbed, rusle2) == ([item, _less(prof, disturbed)] if step < 0 else [item])


@BOTH
def test_item_9_without_a_load_on_no_disturbance_is_still_a_failure(prof: Profile) -> None:
    item = _expected(prof, "plan_item_9", "fail", "review_rusle2_missing", disturbed_acres=0.0)
    assert _rusle(prof, 0.0, None) == [item, _less(prof, 0.0)]


@BOTH
@pytest.mark.parametrize("over", [0.0, 0.01, 100.0])
def test_item_9_under_the_sediment_area_any_load_passes(prof: Profile, over: float) -> None:
    area, limit = _sed(prof)
    disturbed, load = area - 0.01, limit + over
    rusle2 = {"sediment_tons_per_acre_year": load}
    e = {"disturbed_acres": disturbed / ACRE, "load": load}
    assert _rusle(prof, disturbed, rusle2) == [_expected(prof, "plan_item_9", "pass", "review_rusle2_given", **e)]


@BOTH
@pytest.mark.parametrize("step", [0.0, 0.01])
@pytest.mark.parametrize("below", [0.0, 0.01, None])
def test_item_9_at_the_sediment_area_the_load_meets_the_standard_at_its_limit(
    prof: Profile, step: float, below: float | None
) -> None:
    area, limit = _sed(prof)
    load = 0 if below is None else limit - below  # an integer zero is a load too
    e = {"disturbed_acres": (area + step) / ACRE, "load": load}
    rusle2 = {"sediment_tons_per_acre_year": load, "explanation": ""}
    got = _rusle(prof, area + step, rusle2)
    assert got == [_expected(prof, "plan_item_9", "pass", "review_sediment_load_met", **e)]


@BOTH
@pytest.mark.parametrize("step", [0.0, 0.01])
@pytest.mark.parametrize(
    "explanation, status, finding",
    [
        (None, "fail", "review_sediment_load_over"),
        ("", "fail", "review_sediment_load_over"),
        ("   ", "fail", "review_sediment_load_over"),
        ("Clay soils; two traps already.", "look", "review_sediment_load_explained"),
    ],
)
def test_item_9_over_the_load_fails_unless_explained(
    prof: Profile, step: float, explanation: str | None, status: str, finding: str
) -> None:
    area, limit = _sed(prof)
    load = limit + 0.01
    rusle2: dict[str, Any] = {"sediment_tons_per_acre_year": load}
    if explanation is not None:
        rusle2["explanation"] = explanation
    e = {"disturbed_acres": (area + step) / ACRE, "load": load}
    assert _rusle(prof, area + step, rusle2) == [_expected(prof, "plan_item_9", status, finding, **e)]


def _rusle_guide(prof: Profile, disturbed_sqft: float, rusle2: dict | None, guide: dict | None) -> list[Check]:
    facts = _facts(site=_site(prof), rusle2=rusle2, reference_guide=guide)
    checks = _items(prof, facts, disturbed_sqft=disturbed_sqft)
    return checks["plan_item_9"] + checks.get("less_stringent", [])


@BOTH
@pytest.mark.parametrize("step", [-0.01, 0.0])
@pytest.mark.parametrize(
    ("guide", "status", "finding"),
    [
        (None, "look", "review_reference_guide_unstated"),  # the plan says nothing of the Guide
        ({}, "look", "review_reference_guide_unstated"),
        ({"included": "yes"}, "look", "review_reference_guide_unstated"),  # not a TOML true
        ({"included": False}, "fail", "review_reference_guide_missing"),
    ],
)
def test_item_9_needs_the_reference_guide_as_well_as_rusle2(
    prof: Profile, step: float, guide: dict | None, status: str, finding: str
) -> None:
    """§ 540-9A(9): "The erosion and sediment control plan shall include, at a minimum, the items specified in
    the Village of Winneconne Erosion and Sediment Control Reference Guide and RUSLE2": a RUSLE2 load that
    would pass (under the sediment area, or meeting the standard at it) does not pass without the Guide's
    items. Not stated, it is the reviewer's look (a reading: the Guide is not in the article); stated
    false, a failure. Under the acre the less stringent look comes beside it (§ 540-9C)."""
    area, limit = _sed(prof)
    disturbed = area + step
    e = {"disturbed_acres": disturbed / ACRE}
    got = _rusle_guide(prof, disturbed, {"sediment_tons_per_acre_year": limit}, guide)
    less = [_less(prof, disturbed)] if step < 0 else []
    assert got == [_expected(prof, "plan_item_9", status, finding, **e), *less]
    assert got[0].basis == ("interpretation" if status == "look" else "ordinance")


@BOTH
@pytest.mark.parametrize("guide", [None, {"included": True}])
def test_item_9_without_rusle2_fails_as_missing_whatever_the_guide(prof: Profile, guide: dict | None) -> None:
    """ "... Reference Guide and RUSLE2": the Guide's items alone do not pass either (the edge the other way)."""
    area, _ = _sed(prof)
    item = _expected(prof, "plan_item_9", "fail", "review_rusle2_missing", disturbed_acres=area / ACRE)
    assert _rusle_guide(prof, area, None, guide) == [item]


@BOTH
@pytest.mark.parametrize("rusle2", [None, "over"])
def test_item_9_without_rusle2_or_over_the_load_and_without_the_guide_gives_both_reasons(
    prof: Profile, rusle2: str | None
) -> None:
    """§ 540-8C(3): a disapproval states "the reasons" (all of them): a plan that lacks RUSLE2 (or is over the
    load unexplained) and says it lacks the Guide's items fails on each, and both reasons are drafted."""
    area, limit = _sed(prof)
    acres = area / ACRE
    load = {"sediment_tons_per_acre_year": limit + 1} if rusle2 else None
    first = (
        _expected(prof, "plan_item_9", "fail", "review_sediment_load_over", disturbed_acres=acres, load=limit + 1)
        if rusle2
        else _expected(prof, "plan_item_9", "fail", "review_rusle2_missing", disturbed_acres=acres)
    )
    guide = _expected(prof, "plan_item_9", "fail", "review_reference_guide_missing", disturbed_acres=acres)
    assert _rusle_guide(prof, area, load, {"included": False}) == [first, guide]
    # Under the less stringent area the reviewer's look comes after both.
    below = area - 1
    got = _rusle_guide(prof, below, None, {"included": False})
    assert [c.finding for c in got] == [
        "review_rusle2_missing",
        "review_reference_guide_missing",
        "review_less_stringent",
    ]


@BOTH
def test_item_9_over_the_load_and_explained_stays_a_look_but_fails_without_the_guide(prof: Profile) -> None:
    """An explained load over the standard is a look (§ 540-7B(3)(b)[3]); without the Guide's items, it fails,
    and the look stays beside the failure: the maximum extent practicable is shown "to the administering
    authority's satisfaction" (§ 540-5), so the reviewer is still told."""
    area, limit = _sed(prof)
    rusle2 = {"sediment_tons_per_acre_year": limit + 1, "explanation": "Clay soils."}
    e = {"disturbed_acres": area / ACRE, "load": limit + 1}
    look = _expected(prof, "plan_item_9", "look", "review_sediment_load_explained", **e)
    assert _rusle_guide(prof, area, rusle2, None) == [look]
    fail = _expected(prof, "plan_item_9", "fail", "review_reference_guide_missing", disturbed_acres=area / ACRE)
    assert _rusle_guide(prof, area, rusle2, {"included": False}) == [look, fail]


def test_item_9_in_the_villages_words() -> None:
    over = _rusle(W, ACRE, {"sediment_tons_per_acre_year": 5.5})
    assert [(c.status, c.section, c.detail) for c in over] == [
        (
            "fail",
            "§ 540-9A(9); § 540-7B(3)(b)[1], [3]",
            "RUSLE2 gives 5.5 t/ac/yr for 1.00 acres disturbed, over 5 tons per acre per year, with no written "
            "site-specific explanation of why the standard cannot be met",
        )
    ]
    missing = _rusle(W, 21_780.0, None)
    assert [(c.code, c.status, c.title, c.section, c.detail) for c in missing] == [
        (
            "plan_item_9",
            "fail",
            "Reference Guide items and RUSLE2 (sediment load)",
            "§ 540-9A(9)",
            "no RUSLE2 sediment load (tons per acre per year) is given: every plan shall include the items of "
            "the Reference Guide and RUSLE2, whatever its size (0.50 acres disturbed)",
        ),
        (
            "less_stringent",
            "look",
            "Less stringent requirements for a site under the acre threshold",
            "§ 540-8I; § 540-9C",
            "0.50 acres disturbed, under 1 acre: the Village Public Works Director may prescribe less stringent "
            "requirements, so whether the plan may go without what the item above lacks is the reviewer's decision",
        ),
    ]


def _with_entry(prof: Profile, key: str, value: float) -> Profile:
    entries = {**prof.entries, key: dataclasses.replace(prof.entries[key], value=value)}
    return dataclasses.replace(prof, entries=entries, _names={})


@pytest.mark.parametrize(
    "disturbed, rusle2, findings",
    [
        # Between the sediment acre and a 2-acre less stringent threshold: a failed load gets the look.
        (
            2 * ACRE - 0.01,
            {"sediment_tons_per_acre_year": 5.01},
            ["review_sediment_load_over", "review_less_stringent"],
        ),
        (2 * ACRE, {"sediment_tons_per_acre_year": 5.01}, ["review_sediment_load_over"]),
        (
            2 * ACRE - 0.01,
            {"sediment_tons_per_acre_year": 6, "explanation": "Clay."},
            ["review_sediment_load_explained", "review_less_stringent"],
        ),
        # A pass never gets it.
        (2 * ACRE - 0.01, {"sediment_tons_per_acre_year": 5}, ["review_sediment_load_met"]),
        (ACRE - 0.01, {"sediment_tons_per_acre_year": 9}, ["review_rusle2_given"]),
        (ACRE, None, ["review_rusle2_missing", "review_less_stringent"]),
    ],
)
def test_less_stringent_has_its_own_threshold(disturbed: float, rusle2: dict | None, findings: list[str]) -> None:
    prof = _with_entry(W, "thresholds.less_stringent_area", 2)
    got = _rusle(prof, disturbed, rusle2)
    assert [c.finding for c in got] == findings
    if len(got) == 2:
        assert got[1] == _less(prof, disturbed)
        assert "under 2 acres" in got[1].detail


def test_the_sediment_load_comes_from_the_profile() -> None:
    prof = _with_entry(W, "thresholds.sediment_load", 0.5)
    assert _rusle(prof, ACRE, {"sediment_tons_per_acre_year": 0.5})[0].finding == "review_sediment_load_met"
    assert _rusle(prof, ACRE, {"sediment_tons_per_acre_year": 0.51})[0].finding == "review_sediment_load_over"


def test_a_zero_sediment_load_is_a_limit_too() -> None:
    """A profile may set the load to 0 t/ac/yr: only a plan discharging none meets it."""
    prof = _with_entry(W, "thresholds.sediment_load", 0)
    assert _rusle(prof, ACRE, {"sediment_tons_per_acre_year": 0})[0].finding == "review_sediment_load_met"
    assert _rusle(prof, ACRE, {"sediment_tons_per_acre_year": 0.5})[0].finding == "review_sediment_load_over"


# --- make_check: the profile's words, the title, the policy keys ---------------------------------


@pytest.mark.parametrize(
    "check, status, finding, values, basis, policy",
    [
        ("limits", "pass", "review_limits_inside", {}, "ordinance", ()),
        ("limits", "fail", "review_limits_outside", {"outside_sqft": 12.0}, "interpretation", ("policy.sliver",)),
        ("area_site", "look", "review_site_area_differs", {"claimed_sqft": 1, "drawn_sqft": 2, "diff_share": -0.5},
         "policy", ("policy.review_area_tolerance",)),
        ("area_site", "look", "review_site_area_no_claim", {"drawn_sqft": 2}, "ordinance", ()),
        ("tracking", "pass", "review_tracking_pad", {}, "policy",
         ("policy.review_street_contact", "policy.review_tracking_reach")),
        ("tracking", "look", "review_tracking_no_layer", {}, "ordinance", ()),
        ("waters", "fail", "review_waters_open", {"open_ft": 30.0, "total_ft": 100.0}, "policy",
         ("policy.review_water_reach", "policy.review_uncovered_share", "policy.review_bmp_reach")),
        ("protective", "look", "review_protective", {"protective_sqft": 5.0}, "technical_standard", ()),
        ("plan_item_6", "look", "review_bmps_unknown", {"known": 1, "unknown": 1}, "technical_standard", ()),
        ("soil_loss", "look", "review_soil_loss_differs", SOIL_LOSS_VALUES, "technical_standard",
         ("policy.review_soil_loss_tolerance",)),
        ("soil_loss", "pass", "review_soil_loss_agrees", SOIL_LOSS_VALUES, "technical_standard",
         ("policy.review_soil_loss_tolerance",)),
        # Nothing computed, or the ordinance's own number tested: the tolerance plays no part.
        ("soil_loss", "n/a", "review_soil_loss_not_computed", {"reason": "x"}, "technical_standard", ()),
        ("soil_loss", "look", "review_soil_loss_over_standard", SOIL_LOSS_VALUES, "technical_standard", ()),
    ],
)  # fmt: skip
@BOTH
def test_make_check_names_the_policy_an_outcome_rests_on(
    prof: Profile, check: str, status: str, finding: str, values: dict, basis: str, policy: tuple
) -> None:
    """Policy keys only when the outcome's basis is not the ordinance, and only for checks that have them."""
    c = make_check(prof, check, status, finding, **values)
    assert c == _expected(prof, check, status, finding, policy, **values)
    assert (c.basis, c.policy) == (basis, policy)


def test_soil_loss_check_in_the_villages_words() -> None:
    c = make_check(W, "soil_loss", "look", "review_soil_loss_differs", **SOIL_LOSS_VALUES)
    assert (c.title, c.section, c.basis) == (
        "Applicant's sediment discharge against the DEM and soils",
        "§ 540-7B(3)(b); § 540-9A(9); WDNR EGAD 3800-2017-03",
        "technical_standard",
    )
    assert c.detail.startswith(
        "applicant 3.1 t/ac/yr, the DEM and soils give 6.4 (-52%, more than 25 %) in the governing window "
        "2027-04-01 to 2028-03-31 (soil loss 12.8 t/ac; R 120 from the plan, K 0.28 from the layer set's soils, "
        "mean LS 1.20, 0 % outside the method); the standard is 5 tons per acre per year"
    )
    agrees = make_check(W, "soil_loss", "pass", "review_soil_loss_agrees", **SOIL_LOSS_VALUES)
    assert "within 25 %" in agrees.detail and agrees.title == c.title


def test_make_check_in_the_villages_words() -> None:
    c = make_check(W, "limits", "fail", "review_limits_outside", outside_sqft=1234.4)
    assert (c.code, c.title, c.section, c.status, c.finding) == (
        "limits",
        "Disturbed limits inside the site boundary",
        "§ 540-9A(3)",
        "fail",
        "review_limits_outside",
    )
    assert c.detail.startswith("reading: 1,234 sq ft of the disturbance lies outside the property lines")


def _titles(prof: Profile, **titles: str) -> Profile:
    findings = {**prof.findings}
    for code, title in titles.items():
        findings[code] = dataclasses.replace(findings[code], title=title)
    return dataclasses.replace(prof, findings=findings)


def test_an_outcome_with_its_own_title_keeps_it() -> None:
    prof = _titles(W, review_parties_none="Nobody named")
    assert make_check(prof, "plan_item_1", "fail", "review_parties_none").title == "Nobody named"
    assert make_check(prof, "plan_item_1", "fail", "review_parties_incomplete", lacking="x").title == (
        "Names, addresses and phones of the landowner and responsible parties"
    )


@pytest.mark.parametrize("source", ["my.toml", ""])
def test_a_check_without_a_title_is_a_profile_error_naming_the_fix(source: str) -> None:
    prof = dataclasses.replace(_titles(W, review_tracking_pad=""), source=source)
    name = "'my.toml'" if source else "'Village of Winneconne'"
    for finding in ("review_tracking_pad", "review_tracking_missing"):
        with pytest.raises(ProfileError) as err:
            make_check(prof, "tracking", "fail", finding)
        assert str(err.value) == (
            f"Profile {name}: [findings.review_tracking_pad] needs a title (the checklist's name of the 'tracking' check)."
        )


def test_an_undeclared_finding_is_a_profile_error() -> None:
    with pytest.raises(ProfileError, match="review_nonesuch"):
        make_check(W, "limits", "pass", "review_nonesuch")


def test_check_to_dict_is_json_ready() -> None:
    c = make_check(W, "tracking", "fail", "review_tracking_missing")
    assert c.to_dict() == {
        "code": "tracking",
        "title": "Tracking control where the site meets a street",
        "section": "§ 540-7B(3)(a)[1]",
        "basis": "policy",
        "status": "fail",
        "detail": c.detail,
        "finding": "review_tracking_missing",
        "policy": ["policy.review_street_contact", "policy.review_tracking_reach"],
        # Where the package holds it: for staff, in the JSON; the detail names no key.
        "package_key": "layers streets, bmps (type)",
    }
    assert c.policy == ("policy.review_street_contact", "policy.review_tracking_reach")  # the check itself unchanged


# --- Edges of the disturbance: segments, normals, downslope, cover -------------------------------


def _box(x0: float, y0: float, x1: float, y1: float, *, ccw: bool = True) -> shapely.Polygon:
    return shapely.box(X0 + x0, Y0 + y0, X0 + x1, Y0 + y1, ccw=ccw)


def _segs(a: np.ndarray, b: np.ndarray) -> set[tuple[float, float, float, float]]:
    return {(float(p[0] - X0), float(p[1] - Y0), float(q[0] - X0), float(q[1] - Y0)) for p, q in zip(a, b, strict=True)}


def _square_segments() -> set[tuple[float, float, float, float]]:
    """box(0, 0, 20, 20) cut into 10 ft segments, counter-clockwise."""
    pts = [(0, 0), (10, 0), (20, 0), (20, 10), (20, 20), (10, 20), (0, 20), (0, 10), (0, 0)]
    return {(x0, y0, x1, y1) for (x0, y0), (x1, y1) in itertools.pairwise(pts)}


@pytest.mark.parametrize("ccw", [True, False])
def test_edge_segments_are_counter_clockwise_with_outward_normals(ccw: bool) -> None:
    a, b, normal = edge_segments(np.array([_box(0, 0, 20, 20, ccw=ccw)]), 10.0)
    assert a.shape == b.shape == normal.shape == (8, 2)
    assert _segs(a, b) == _square_segments()
    mid = (a + b) / 2 - [X0, Y0]
    # Outward: south edge (0, -1), east (1, 0), north (0, 1), west (-1, 0).
    want = np.where(
        mid[:, 1:2] == 0, [0, -1], np.where(mid[:, 0:1] == 20, [1, 0], np.where(mid[:, 1:2] == 20, [0, 1], [-1, 0]))
    )
    np.testing.assert_array_equal(normal, want)


def test_edge_segments_of_a_diagonal_edge_have_a_unit_normal() -> None:
    tri = shapely.Polygon([(X0, Y0), (X0 + 30, Y0), (X0, Y0 + 40)])
    a, b, normal = edge_segments(np.array([tri]), 100.0)
    assert _segs(a, b) == {(0, 0, 30, 0), (30, 0, 0, 40), (0, 40, 0, 0)}
    by_start = {(float(p[0] - X0), float(p[1] - Y0)): tuple(n) for p, n in zip(a, normal, strict=True)}
    assert by_start[(30.0, 0.0)] == pytest.approx((0.8, 0.6))
    assert by_start[(0.0, 0.0)] == pytest.approx((0.0, -1.0))
    assert by_start[(0.0, 40.0)] == pytest.approx((-1.0, 0.0))


def test_edge_segments_cut_long_edges_to_at_most_the_step() -> None:
    a, b, _ = edge_segments(np.array([_box(0, 0, 25, 10)]), 10.0)
    length = np.hypot(*(b - a).T)
    assert len(a) == 8  # 25 ft edges in three, 10 ft edges whole
    assert length.max() <= 10.0
    assert length.sum() == pytest.approx(70.0)


def test_edge_segments_keep_parts_apart_skip_holes_and_other_geometries() -> None:
    holed = shapely.Polygon(_box(0, 0, 20, 20).exterior.coords, [_box(5, 5, 15, 15).exterior.coords])
    far = shapely.MultiPolygon([_box(100, 0, 110, 10)])
    line = shapely.LineString([(X0 - 50, Y0), (X0 - 50, Y0 + 50)])
    a, b, normal = edge_segments(np.array([holed, line, far, shapely.Point(X0, Y0)], dtype=object), 10.0)
    assert _segs(a, b) == _square_segments() | {
        (100, 0, 110, 0),
        (110, 0, 110, 10),
        (110, 10, 100, 10),
        (100, 10, 100, 0),
    }
    assert len(a) == 12  # no segment joins the two parts
    np.testing.assert_allclose(np.hypot(*normal.T), 1.0)


def test_edge_segments_drop_zero_length_segments() -> None:
    poly = shapely.Polygon([(X0, Y0), (X0 + 10, Y0), (X0 + 10, Y0), (X0 + 10, Y0 + 10), (X0, Y0)])
    a, b, normal = edge_segments(np.array([poly]), 100.0)
    assert _segs(a, b) == {(0, 0, 10, 0), (10, 0, 10, 10), (10, 10, 0, 0)}
    assert not np.isnan(normal).any()


def test_edge_segments_keep_edges_shorter_than_a_foot() -> None:
    a, b, normal = edge_segments(np.array([_box(0, 0, 0.5, 0.25)]), 10.0)
    assert _segs(a, b) == {(0, 0, 0.5, 0), (0.5, 0, 0.5, 0.25), (0.5, 0.25, 0, 0.25), (0, 0.25, 0, 0)}
    np.testing.assert_allclose(np.hypot(*normal.T), 1.0)


@pytest.mark.parametrize("polygons", [[], np.array([shapely.Point(X0, Y0)], dtype=object)], ids=["none", "a point"])
def test_edge_segments_of_nothing_are_empty(polygons: Any) -> None:
    a, b, normal = edge_segments(polygons, 10.0)
    assert a.shape == b.shape == normal.shape == (0, 2)


def _plane(xy: np.ndarray) -> np.ndarray:
    """Ground falling 5 % to the south (z rises with y), NaN (off the DEM) west of x = 0."""
    z = 100 + 0.05 * (xy[:, 1] - Y0)
    return np.where(xy[:, 0] < X0, np.nan, z)


def test_downslope_edges_are_those_the_ground_falls_across() -> None:
    a, b, normal = edge_segments(np.array([_box(0, 0, 20, 20)]), 10.0)
    down = downslope(a, b, normal, _plane, 1.0)
    assert down.dtype == bool
    south = (a[:, 1] == Y0) & (b[:, 1] == Y0)
    # South falls outward; north rises; east and west are level (west also half off the DEM).
    np.testing.assert_array_equal(down, south)


def test_downslope_samples_the_ground_offset_inside_and_outside_each_midpoint() -> None:
    seen: list[np.ndarray] = []

    def z(xy: np.ndarray) -> np.ndarray:
        seen.append(xy.copy())
        return np.zeros(len(xy)) if len(seen) == 1 else np.array([-1.0, 0.0, 1.0, np.nan])

    a = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    b = np.array([[10.0, 0.0], [10.0, 10.0], [0.0, 10.0], [0.0, 0.0]])
    normal = np.array([[0.0, -1.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    down = downslope(a, b, normal, z, 2.5)
    np.testing.assert_array_equal(seen[0], [[5.0, 2.5], [7.5, 5.0], [5.0, 7.5], [2.5, 5.0]])  # inside
    np.testing.assert_array_equal(seen[1], [[5.0, -2.5], [12.5, 5.0], [5.0, 12.5], [-2.5, 5.0]])  # outside
    np.testing.assert_array_equal(down, [True, False, False, False])


def test_covered_at_the_reach_and_a_step_beyond() -> None:
    a = np.array([[X0, Y0], [X0 + 10, Y0]])
    b = np.array([[X0 + 10, Y0], [X0 + 20, Y0]])
    # 20 ft south of the first midpoint: exactly at the reach; 20.25 ft from the second's.
    at = shapely.Point(X0 + 5, Y0 - 20)
    beyond = shapely.Point(X0 + 15, Y0 - 20.25)
    got = covered(a, b, np.array([at, beyond]), 20.0)
    assert got.dtype == bool
    np.testing.assert_array_equal(got, [True, False])
    np.testing.assert_array_equal(covered(a, b, np.array([beyond]), 20.25), [False, True])
    np.testing.assert_array_equal(covered(a[:1], b[:1], np.array([at]), 20.0), [True])
    np.testing.assert_array_equal(covered(a[1:], b[1:], np.array([at]), 20.0), [False])


def test_covered_with_no_segments_or_no_bmps() -> None:
    a = np.array([[X0, Y0]])
    b = np.array([[X0 + 10, Y0]])
    none = covered(a, b, np.empty(0, dtype=object), 20.0)
    assert none.dtype == bool
    np.testing.assert_array_equal(none, [False])
    empty = covered(np.empty((0, 2)), np.empty((0, 2)), np.array([shapely.Point(X0, Y0)]), 20.0)
    assert (empty.dtype, empty.shape) == (np.dtype(bool), (0,))


def test_segments_geometry_merges_touching_segments() -> None:
    a = np.array([[0.0, 0.0], [10.0, 0.0], [50.0, 0.0]])
    b = np.array([[10.0, 0.0], [10.0, 10.0], [60.0, 0.0]])
    g = segments_geometry(a, b)
    assert g.geom_type == "MultiLineString"
    want = shapely.MultiLineString([[(0, 0), (10, 0), (10, 10)], [(50, 0), (60, 0)]])
    assert shapely.equals_exact(shapely.normalize(g), shapely.normalize(want), tolerance=0)
    one = segments_geometry(a[:1], b[:1])
    assert one.equals(shapely.LineString([(0, 0), (10, 0)]))


def test_segments_geometry_of_no_segments_is_an_empty_multilinestring() -> None:
    g = segments_geometry(np.empty((0, 2)), np.empty((0, 2)))
    assert (g.geom_type, g.is_empty) == ("MultiLineString", True)


# --- The common plan decides the acre tests (§ 540-5 CONSTRUCTION SITE) --------------------------


@BOTH
@pytest.mark.parametrize("rusle2", [None, {"sediment_tons_per_acre_year": 99.0}])
def test_a_lot_under_the_acre_in_a_larger_plan_is_decided_on_the_plan(prof: Profile, rusle2: dict | None) -> None:
    """A construction site includes "areas that are part of a larger common plan of development".

    A 0.6-acre lot in a 5-acre subdivision: "For sites with one acre or more" reaches it (its load
    is tested), and § 540-9C's "less than one acre" does not (no less stringent look).
    """
    facts = _facts(site=_site(prof), rusle2=rusle2)
    lot, plan = 0.6 * ACRE, 5 * ACRE
    got = plan_items(
        facts,
        LAYERS,
        CODES,
        computed_standards=prof.standards_permitted,
        disturbed_sqft=lot,
        profile=prof,
        plan_disturbed_sqft=plan,
    )
    item9 = [c for c in got if c.code in ("plan_item_9", "less_stringent")]
    finding = "review_rusle2_missing" if rusle2 is None else "review_sediment_load_over"
    assert [c.finding for c in item9] == [finding]
    # One step under the sediment area, the plan alone decides: the lot is under it too.
    area, _ = _sed(prof)
    under = plan_items(
        facts,
        LAYERS,
        CODES,
        computed_standards=prof.standards_permitted,
        disturbed_sqft=lot / 10,
        profile=prof,
        plan_disturbed_sqft=area - 0.01,
    )
    assert [c.finding for c in under if c.code in ("plan_item_9", "less_stringent")] == (
        ["review_rusle2_missing", "review_less_stringent"] if rusle2 is None else ["review_rusle2_given"]
    )


# --- Where the package holds each check's facts: for staff, never in the applicant's words ------------


def _format_block() -> str:
    """The plan.toml format as examples/plans/README.md documents it to applicants' designers."""
    text = (Path(__file__).parents[1] / "examples" / "plans" / "README.md").read_text(encoding="utf-8")
    return text[text.index("## plan.toml") :]


def test_every_check_names_where_the_package_holds_it_and_only_real_keys() -> None:
    from esc_gis.review.checks import PACKAGE_KEYS
    from esc_gis.review.package import LAYERS as PACKAGE_LAYERS

    assert set(PACKAGE_KEYS) == set(TITLES)
    fmt = _format_block()
    for check, where in PACKAGE_KEYS.items():
        for part in where.split(";"):
            part = part.split(" (or ")[0].strip()
            if part.startswith("layer"):
                names = part.split(" ", 1)[1].split(" (")[0]
                assert {n.strip() for n in names.split(",")} <= set(PACKAGE_LAYERS), (check, part)
                continue
            assert part.startswith("plan.toml ["), (check, part)
            tables, keys = part.removeprefix("plan.toml ").split("]", 1) if ":" not in part else part.split(":")
            for table in tables.replace("plan.toml", "").replace("[", "").replace("]", "").split(","):
                assert f"[{table.strip()}]" in fmt, (check, table)
            for key in keys.replace("]", "").split(","):
                assert f"{key.strip()} =" in fmt, (check, key)


def test_the_applicants_words_hold_no_package_key() -> None:
    """What § 540-9A asks for, in its words: "A legal description of the property", not a TOML key."""
    facts = _facts(site={"performance_standards": ["540-7B"]}, narrative={}, schedule={}, rusle2=None)
    checks = _items(W, facts, layers={"bmps"})
    text = " ".join(c.detail for cs in checks.values() for c in cs)
    for key in ("[site]", "[narrative]", "[rusle2]", "[schedule]", "legal_description", "spill_procedures",
                "sediment_tons_per_acre_year", "site_area_sqft", "site_boundary", "disturbed_limits"):  # fmt: skip
        assert key not in text, (key, text)
    assert _one(checks, "plan_item_2").detail == "no legal description of the property is given"
    assert _one(checks, "plan_item_2").package_key == "plan.toml [site] legal_description"


def test_a_non_permitted_sites_checks_quote_section_7a_and_4a1c_as_written() -> None:
    """§ 540-7A(2): "BMPs shall be used to prevent or reduce all of the following" (not "prevent" alone), and
    (g) "into waters of the state or off-site separate storm sewers"; § 540-4A(1)(c): a permit is required under
    4,000 sq ft "if the administering authority determines that permit coverage is needed in order to improve
    article compliance, meet targeted performance standards, or protect waters of the state" (all three)."""
    plain = make_check(W, "non_permitted", "look", "review_non_permitted", plan_sqft=3_000.0)
    assert (plain.section, plain.basis) == ("§ 540-4A(1)(b); § 540-7A", "ordinance")
    assert '"BMPs shall be used to prevent or reduce"' in plain.detail and "must prevent" not in plain.detail
    # (b)-(d): sediment goes "from disturbed areas into stormwater inlets" and "into adjacent waters of the state",
    # but (d) is sediment "from drainage ways that flow off the site", not into them.
    assert "from disturbed areas into stormwater inlets and adjacent waters of the state" in plain.detail
    assert '"sediment from drainage ways that flow off the site"' in plain.detail
    assert "into inlets, adjacent waters and drainage ways" not in plain.detail
    assert "waters of the state or off-site separate storm sewers (§ 540-7A(2))" in plain.detail
    may = make_check(W, "non_permitted", "look", "review_non_permitted_may_require", plan_sqft=3_000.0)
    assert (may.section, may.basis) == ("§ 540-4A(1)(b), (c); § 540-7A", "ordinance")
    assert '"to improve article compliance, meet targeted performance standards, or protect waters of the state"' in (
        may.detail
    )
    assert "of the performance standards only § 540-7A applies" in may.detail


@BOTH
def test_a_plan_without_schedule_dates_is_not_given_dates_it_does_not_have(prof: Profile) -> None:
    """§ 540-9A(8): the plan holds a "Construction sequence and construction schedule". Without its start and
    end the schedule's length (§ 540-8G) is not checked, and the line says so and what to give: no example
    dates printed as if they were the plan's. The item names no calendar dates (a schedule by relative weeks
    may meet it), so asking for dates is a reading, labelled so."""
    from esc_gis.review.plan import _schedule

    for facts in ({}, {"schedule": {"start": "2027-04-01"}}, {"schedule": {"sequence": ["dig"]}}):
        c = _schedule(facts, prof)
        assert (c.status, c.finding) == ("n/a", "review_schedule_no_dates")
        assert "2027" not in c.detail and "no construction start and end dates" in c.detail
        assert '"Construction sequence and construction schedule"' in c.detail
        assert c.section.startswith(f"{'§ 540-' if prof is W else '§ 23-'}9A(8); ")
        assert c.basis == "interpretation" and "reading:" in c.detail and "relative weeks" in c.detail
