"""Enforcement on a site that needs no permit, the § 540-4A(1)(c) determination, and § 540-8F conditions
(issue 46, outcomes 1 and 7), on both back ends (the ``reg`` fixture: GeoPackage and PostGIS; its
verify and rebuild stay clean after each test).

One site, one decision: `permits enforce --permit` decides the permit's site with the screening
function `--site-layer` uses (``decide_permit``/``decide_screened``), and a determination or a
condition is an event of the permit's history, folded into its state.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import geopandas as gpd
import pytest

from esc_gis.errors import IllegalTransitionError, ValidationError
from esc_gis.registry import Application
from esc_gis.registry.service.registry import Registry

from .conftest import CRS, square_sqft

ON = date(2026, 11, 20)
#: The words § 540-12A(1) gives ground A1, which the refusal quotes.
A1_WORDS = (
    '"undertaken without a permit and, pursuant to § 540-4A of this article, a permit is required for the '
    'construction site"'
)


def _small(reg: Registry, sqft: float = 3000.0, *, x: float = 100, **kw) -> str:
    """An application received 2026-11-02 on a square of ``sqft`` at local (x, 100), its whole site disturbed."""
    return reg.add(
        Application(f"{x:.0f} Small St", date(2026, 11, 2), square_sqft(x, 100, sqft), CRS, **kw), who="clerk"
    )


def _cases(reg: Registry) -> int:
    with reg.backend.read() as cur:
        cur.execute("SELECT count(*) FROM enforcement_cases")
        return int(cur.fetchone()[0])


# --- § 540-12A(1) on a permit's site that needs no permit ---------------------------------------------


def test_ground_a1_on_a_site_that_needs_no_permit_is_refused_with_the_profiles_words(reg) -> None:
    """§ 540-12A(1): a stop-work order if "Any land-disturbing construction activity is being undertaken
    without a permit and, pursuant to § 540-4A of this article, a permit is required for the construction
    site."; § 540-4A(1)(b): "A permit is not required for a construction site
    with less than 4,000 square feet of land-disturbing construction activity". Nothing is written."""
    small = _small(reg)
    assert reg.get(small).permit_decision == "not_required"
    with pytest.raises(ValidationError) as err:
        reg.enforce(ground="A1", on=ON, reasons="grading", permit_number=small)
    text = str(err.value)
    assert f"the site of permit {small} needs no permit (screening: permit not_required, 3,000 sq ft" in text
    assert A1_WORDS in text and "(§ 540-12A(1); § 540-4A; § 540-8A; basis ordinance)" in text
    assert '§ 540-8A applies "When a permit is required"' in text
    # The fix: the one way such a site needs a permit (Registry.determine; `permits determine` on the CLI).
    assert f"determine permit {small} with on=DATE and reasons=TEXT" in text
    assert _cases(reg) == 0


def test_at_the_threshold_the_site_needs_a_permit_and_ground_a1_fits(reg) -> None:
    """§ 540-4A(1)(a): "A permit is required for a construction site with 4,000 square feet or greater of
    land disturbing construction activity"; the application was never issued, so § 540-8A's "When a permit
    is required, no responsible party may commence ... without receiving prior approval" fits."""
    edge = _small(reg, 4000.01)
    assert reg.get(edge).permit_decision == "required"
    c = reg.enforce(ground="A1", on=ON, reasons="grading before approval", permit_number=edge)
    assert c.permit_number == edge and c.ground == "A1"


def test_the_plans_and_the_conditions_grounds_are_refused_by_a_labelled_reading_and_a4_fits(reg) -> None:
    """§ 540-12A(2) "The erosion and sediment control plan is not being implemented in a good faith manner"
    and (3) "The conditions of the permit are not being met" presuppose a plan and a permit; § 540-4A(1)(b)
    leaves a small site "the performance standards of § 540-7A" only, so (4) "Any land-disturbing
    construction activity is in violation of the article" reaches it. Both are readings (interpretation)."""
    small = _small(reg)
    for ground, section in (("A2", "§ 540-12A(2); § 540-4A(1)(b); § 540-4A(3); § 540-9"), ("A3", "§ 540-12A(3)")):
        with pytest.raises(ValidationError) as err:
            reg.enforce(ground=ground, on=ON, reasons="x", permit_number=small)
        text = str(err.value)
        assert f"ground {ground} does not fit it: reading: the ground presupposes" in text
        assert section in text and "basis interpretation" in text
    c = reg.enforce(ground="A4", on=ON, reasons="sediment tracked onto Main St", permit_number=small)
    assert c.ground == "A4"
    assert _cases(reg) == 1


def test_an_npdes_exempt_site_gets_one_answer_by_permit_and_by_screened_site(reg, tmp_path: Path) -> None:
    """§ 540-4A(3): a site "exempted by federal statutes or regulations from the requirement to have a
    national pollutant discharge elimination system permit ... shall comply with the performance standards
    of § 540-7A if less than one acre ... The performance standards of § 540-7B, permit requirements of
    § 540-8, and plan requirements of § 540-9 are not applicable." Refused through both doors."""
    exempt = _small(reg, 6000.0, npdes_exempt=True)
    p = reg.get(exempt)
    assert p.permit_decision == "not_required"
    with pytest.raises(ValidationError) as err:
        reg.enforce(ground="A1", on=ON, reasons="x", permit_number=exempt)
    assert "6,000 sq ft; exempt from an NPDES permit): ground A1 does not fit it" in str(err.value)
    assert "use another ground (A4)" in str(err.value)
    # The same site screened elsewhere (a lot further east, no permit on it): refused as well.
    frame = gpd.GeoDataFrame(
        {"site_id": ["S1"], "permit": ["not_required"], "npdes_exempt": [True]},
        geometry=[square_sqft(1500, 1000, 6000.0)],
        crs=CRS,
    ).to_crs("EPSG:4326")
    path = tmp_path / "screening.gpkg"
    frame.to_file(path, layer="screening")
    with pytest.raises(
        ValidationError, match=r"S1 does not need a permit \(screening: permit not_required, 6,000 sq ft; exempt"
    ):
        reg.enforce(ground="A1", on=ON, reasons="x", site_layer=path, site_id="S1")
    assert (
        reg.decide_permit(p)["permit_decision"]
        == reg.decide_screened(
            gpd.read_file(path, layer="screening"), gpd.read_file(path, layer="screening").iloc[:0], str(path)
        )["permit_decision"]
    )
    # No determination reaches an exempt site.
    with pytest.raises(ValidationError) as err:
        reg.determine(exempt, on=ON, reasons="near the river", purposes=["waters"])
    text = str(err.value)
    assert '"[T]he performance standards of § 540-7B, permit requirements of § 540-8, and plan requirements of' in text
    # The one-acre condition on § 540-7B, 8 and 9 is the toolkit's reading of § 540-4A(3), and says so.
    assert "reading: that sentence, which names no size, is read as reaching only a site under 1 acre" in text
    assert "(§ 540-4A(1); § 540-4A(3))" in text
    assert reg.get(exempt).state.determination is None


def test_an_order_resting_on_a1_is_refused_once_the_site_needs_no_permit(reg) -> None:
    """§ 540-12A(1): the order rests on "a permit is required for the construction site"; measured anew
    at 3,000 sq ft (§ 540-4A(1)(b)) the site needs none, so neither a stop-work order, a notice to cease nor a
    referral rests on the case any more."""
    p = _small(reg, 5000.0)
    c = reg.enforce(ground="A1", on=ON, reasons="grading before approval", permit_number=p)
    reg.remeasure(p, square_sqft(100, 100, 3000.0), CRS, reasons="limits corrected")
    for kind in ("stop_work", "notified", "referral"):
        with pytest.raises(ValidationError, match=r"needs no permit .*ground A1 does not fit it"):
            reg.case_action(c.case_id, kind, on=date(2026, 11, 21), reasons="posted")
    assert reg.case(c.case_id).events == ()


# --- § 540-4A(1)(c): the administering authority's determination -------------------------------------


def test_a_determination_makes_a_small_site_a_permitted_one(reg) -> None:
    """§ 540-4A(1)(c): "a permit is required for a construction site with less than 4,000 square feet of
    land-disturbing construction activity if the administering authority determines that permit coverage is
    needed in order to improve article compliance, meet targeted performance standards, or protect waters of
    the state. If a permit is required, the responsible party shall comply with all applicable provisions of
    this article for a permitted site, including the performance standards of § 540-7B, permit requirements
    of § 540-8, and plan requirements of § 540-9." Then ground A1 fits, and its order and referral."""
    small = _small(reg)
    p = reg.determine(small, on=date(2026, 11, 10), reasons="drains to the Wolf River", purposes=["waters"], who="dpw")
    assert (p.permit_decision, p.standards) == ("required", reg.profile.standards_permitted)
    assert p.state.determination["on"] == date(2026, 11, 10)
    assert p.state.determination["reasons"] == "drains to the Wolf River"
    assert p.events[-1].kind == "determination" and p.events[-1].who == "dpw"
    # The one decision now says required, through the door enforcement uses.
    assert reg.decide_permit(p)["permit_decision"] == "required" and reg.decide_permit(p)["determined"]
    c = reg.enforce(ground="A1", on=ON, reasons="grading before approval", permit_number=small)
    c = reg.case_action(c.case_id, "stop_work", on=date(2026, 11, 21), reasons="posted at the gate")
    c = reg.case_action(c.case_id, "referral", on=date(2026, 11, 25))
    assert [e.kind for e in c.events] == ["stop_work", "referral"]
    # New limits while undecided: still under the threshold, still required by the determination.
    again = reg.remeasure(small, square_sqft(100, 100, 2000.0), CRS, reasons="smaller")
    assert again.permit_decision == "required" and round(again.disturbed_sqft) == 2000


def test_a_determination_is_refused_where_a_permit_is_required_already_or_twice_or_without_reasons(reg) -> None:
    """§ 540-4A(1)(c) is for "a construction site with less than 4,000 square feet"; at 4,000 or more
    "A permit is required" already (§ 540-4A(1)(a)). Nothing is written on a refusal."""
    big = _small(reg, 4000.01)
    with pytest.raises(ValidationError) as err:
        reg.determine(big, on=ON, reasons="x", purposes=["waters"])
    assert "the screening already decides that a permit is required (4,000 sq ft" in str(err.value)
    assert "(§ 540-4A(1)(a), (c))" in str(err.value)
    small = _small(reg, x=600)
    with pytest.raises(ValidationError, match="the reasons are empty") as err:
        reg.determine(small, on=ON, reasons="  ", purposes=["waters"])
    with pytest.raises(ValidationError, match="is before the application's receipt"):
        reg.determine(small, on=date(2026, 11, 1), reasons="x", purposes=["waters"])
    assert reg.get(small).state.determination is None
    reg.determine(small, on=ON, reasons="targeted area", purposes=["waters"])
    with pytest.raises(ValidationError, match=r"a determination is already recorded \(2026-11-20\)"):
        reg.determine(small, on=ON, reasons="again", purposes=["waters"])


# --- § 540-8F conditions and § 540-12A(3) --------------------------------------------------------------


def _under_review(reg: Registry, sqft: float = 6000.0, *, x: float = 600) -> str:
    """A complete application of ``sqft`` at local (x, 100), paid 2026-11-02, under review from 2026-11-03."""
    p = _small(reg, sqft, x=x)
    reg.record_fee(p, kind="application", amount=1.0, paid_on=date(2026, 11, 2), receipt=f"R-{p}")
    reg.transition(p, "under_review", on=date(2026, 11, 3))
    return p


def test_conditions_are_set_with_the_approval_and_later_and_numbered(reg) -> None:
    """§ 540-8F: "Permits issued under this section may include conditions established by administering
    authority in addition to the requirements set forth in § 540-8E, where needed to assure compliance with
    the performance standards in § 540-7." Each is an event of the permit's history, numbered as recorded."""
    p = _under_review(reg)
    with pytest.raises(ValidationError, match="not issued") as err:
        reg.add_condition(p, "second row of silt fence", on=date(2026, 11, 4))
    assert '"Permits issued under this section may include conditions' in str(err.value)
    with pytest.raises(ValidationError, match="conditions go with an approval, not with disapproved"):
        reg.transition(p, "disapproved", on=date(2026, 11, 5), reasons="r", conditions=["x"])
    a = reg.transition(p, "approved", on=date(2026, 11, 5), conditions=["silt fence on the east line", "sweep daily"])
    assert [c["text"] for c in a.state.permit_conditions] == ["silt fence on the east line", "sweep daily"]
    b = reg.add_condition(p, "stabilize the stockpile", on=date(2026, 11, 6), who="dpw")
    assert [(c["on"], c["source"]) for c in b.state.permit_conditions] == [
        (date(2026, 11, 5), "condition"),
        (date(2026, 11, 5), "condition"),
        (date(2026, 11, 6), "condition"),
    ]
    assert b.events[-1].kind == "condition" and b.events[-1].detail == "stabilize the stockpile"


def test_ground_a3_names_a_condition_of_the_permit(reg) -> None:
    """§ 540-12A(3): a stop-work order if "The conditions of the permit are not being met": the case names
    the condition, one the permit has (§ 540-8F)."""
    p = _under_review(reg)
    reg.transition(p, "approved", on=date(2026, 11, 5))
    with pytest.raises(ValidationError) as err:
        reg.enforce(ground="A3", on=ON, reasons="fence down", permit_number=p)
    text = str(err.value)
    assert '"The conditions of the permit are not being met"' in text and "E6. inspect at least once per week" in text
    assert "(§ 540-12A(3); § 540-8E; § 540-8F)" in text
    reg.add_condition(p, "silt fence on the east line", on=date(2026, 11, 6))
    with pytest.raises(ValidationError, match=r"there is no condition 2; .*1\. silt fence on the east line"):
        reg.enforce(ground="A3", on=ON, reasons="fence down", permit_number=p, condition=2)
    with pytest.raises(ValidationError, match="ground A4 is not about a condition of the permit"):
        reg.enforce(ground="A4", on=ON, reasons="fence down", permit_number=p, condition=1)
    assert _cases(reg) == 0
    c = reg.enforce(ground="A3", on=ON, reasons="fence down", permit_number=p, condition=1)
    assert c.reasons == "condition 1 not met (silt fence on the east line): fence down"


def test_the_revocation_is_appealable_under_both_sections() -> None:
    """§ 540-8E: "An action by the administering authority to suspend or revoke this permit may be appealed
    in accordance with § 540-13"; § 540-12B is the revocation for a violated order."""
    from esc_gis.profile import load_profile

    section = load_profile().tables["appeals"]["appealed"]["revocation"]["section"]
    assert section == "§ 540-12B; § 540-8E"


def test_transition_to_disapproved_takes_no_condition_and_the_move_is_not_made(reg) -> None:
    """§ 540-8F conditions are of "Permits issued": a refused move leaves the application as it was."""
    p = _under_review(reg)
    with pytest.raises((ValidationError, IllegalTransitionError)):
        reg.transition(p, "under_review", on=date(2026, 11, 5), conditions=["x"])
    assert reg.get(p).status == "under_review"


# --- The commands ----------------------------------------------------------------------------------------


def test_cli_determine_condition_show_enforce_and_certificate(reg, target: str, layers_path, tmp_path: Path) -> None:
    """§ 540-8F: "Permits issued under this section may include conditions"; § 540-8E(8): "The permit applicant
    shall post the "Certificate of Permit Coverage" in a conspicuous location at the construction site";
    § 540-12A(1) and (3) through `permits enforce`."""
    from .public_outputs import run_permits as run

    lay = ["--layers", str(layers_path)]
    small = _small(reg)
    r = run("enforce", target, "--permit", small, "--ground", "A1", "--on", "2026-11-20", "--reasons", "x", *lay)
    assert r.exit_code == 1 and "needs no permit" in r.output and A1_WORDS in r.output
    r = run(
        "determine",
        target,
        small,
        "--on",
        "2026-11-10",
        "--reasons",
        "drains to the river",
        "--purpose",
        "waters",
        *lay,
    )
    assert r.exit_code == 0 and "permit required (by determination, to protect waters of the state)" in r.output, (
        r.output
    )
    r = run("determine", target, small, "--on", "2026-11-10", "--reasons", "again", "--purpose", "waters", *lay)
    assert r.exit_code == 1 and "a determination is already recorded" in r.output
    r = run("enforce", target, "--permit", small, "--ground", "A1", "--on", "2026-11-20", "--reasons", "x", *lay)
    assert r.exit_code == 0 and "ENF-2026-0001" in r.output, r.output
    p = _under_review(reg)
    r = run("transition", target, p, "approved", "--on", "2026-11-05", "--condition", "silt fence on the east line",
            "--condition", "sweep Main St daily", *lay)  # fmt: skip
    assert r.exit_code == 0, r.output
    r = run("condition", target, p, "stabilize the stockpile", "--on", "2026-11-06", *lay)
    assert r.exit_code == 0 and "condition 3: stabilize the stockpile" in r.output, r.output
    assert "a condition set after the issuance, while the permit is valid, is read as one of them" in r.output
    assert "(§ 540-8F; basis interpretation)" in r.output
    r = run("show", target, p, *lay)
    assert "conditions of the permit (ground A3 names one by its number, or a standing one by its code E1-E8):" in (
        r.output
    )
    assert "  1. silt fence on the east line (2026-11-05)" in r.output and "  3. stabilize the stockpile" in r.output
    r = run("enforce", target, "--permit", p, "--ground", "A3", "--on", "2026-11-20", "--reasons", "no sweeping",
            "--condition", "2", *lay)  # fmt: skip
    assert r.exit_code == 0 and "condition 2 not met (sweep Main St daily): no sweeping" in r.output, r.output
    out = tmp_path / "certificate.html"
    r = run("certificate", target, p, "-o", str(out), *lay)
    assert r.exit_code == 0 and "(3 condition(s))" in r.output, r.output
    page = out.read_text()
    assert "<h1>Certificate of Permit Coverage</h1>" in page and "§ 540-8E(8)" in page
    assert "<li>silt fence on the east line" in page and "<li>sweep Main St daily" in page and "§ 540-8F" in page
    r = run("certificate", target, small, "-o", str(tmp_path / "small.html"), *lay)
    assert r.exit_code == 1 and "the permit is application_received: a certificate of permit coverage" in r.output


# --- Issue 46's law review: § 540-8E's conditions, permits issued on small sites, dates -------------------


def _active(reg: Registry, sqft: float = 6000.0, *, x: float = 600, conditions: tuple[str, ...] = ()) -> str:
    """An application of ``sqft`` approved 2026-11-05 (with ``conditions``), work started 2026-11-09."""
    p = _under_review(reg, sqft, x=x)
    reg.transition(p, "approved", on=date(2026, 11, 5), conditions=list(conditions))
    reg.transition(p, "active", on=date(2026, 11, 9))
    return p


def _lapsed(reg: Registry, *, x: float = 1000) -> str:
    """A 6,000 sq ft permit received 2026-01-02, approved 2026-01-05: valid to 2026-07-04 (§ 540-8G, 180 days)."""
    p = reg.add(Application(f"{x:.0f} Old St", date(2026, 1, 2), square_sqft(x, 100, 6000.0), CRS), who="clerk")
    reg.record_fee(p, kind="application", amount=1.0, paid_on=date(2026, 1, 2), receipt="R0")
    reg.transition(p, "under_review", on=date(2026, 1, 2))
    reg.transition(p, "approved", on=date(2026, 1, 5))
    reg.transition(p, "active", on=date(2026, 1, 6))
    assert reg.get(p).expires_on == date(2026, 7, 4)
    return p


def test_ground_a3_names_a_condition_of_section_8e_that_every_issued_permit_carries(reg) -> None:
    """§ 540-8E: "All permits issued under this article shall be subject to the following conditions, and
    holders of permits issued under this article shall be deemed to have accepted these conditions", among them
    (6) "Conduct construction site inspections at least once per week"; § 540-12A(3): "The conditions of the
    permit are not being met". An active 6,000 sq ft permit with no condition recorded still has § 540-8E's."""
    p = _active(reg)
    assert reg.get(p).state.permit_conditions == []
    c = reg.enforce(
        ground="A3", on=ON, reasons="no weekly inspection reports", permit_number=p, condition="E6", who="dpw"
    )
    assert c.reasons.startswith("condition E6 not met (inspect at least once per week and within 24 hours after")
    assert c.reasons.endswith("(§ 540-8E(6))): no weekly inspection reports")
    # Its code in any case; the office's own conditions follow, numbered as recorded (§ 540-8F).
    c = reg.enforce(ground="A3", on=ON, reasons="no certificate posted", permit_number=p, condition="e8")
    assert c.reasons.startswith("condition E8 not met (post the Certificate of Permit Coverage")
    with pytest.raises(ValidationError) as err:
        reg.enforce(ground="A3", on=ON, reasons="x", permit_number=p, condition="E9")
    text = str(err.value)
    assert "there is no condition E9; " in text and "E1. notify the administering authority within 48 hours" in text
    assert "(§ 540-12A(3); § 540-8E; § 540-8F)" in text and "E8. post the Certificate" in text
    reg.add_condition(p, "sweep Main St daily", on=date(2026, 11, 10))
    c = reg.enforce(ground="A3", on=ON, reasons="mud on Main St", permit_number=p, condition="1")
    assert c.reasons == "condition 1 not met (sweep Main St daily): mud on Main St"


def test_the_plans_and_the_conditions_grounds_fit_a_permit_issued_on_a_small_site(reg) -> None:
    """§ 540-8E: "All permits issued under this article shall be subject to the following conditions"; a 3,000 sq
    ft site needs no permit (§ 540-4A(1)(b): "A permit is not required for a construction site with less than
    4,000 square feet"), but one was issued on it, with a plan approved and a condition set: § 540-12A(2) "The
    erosion and sediment control plan is not being implemented in a good faith manner" and (3) "The conditions
    of the permit are not being met" fit the permit (the profile's fits_issued, a reading). A1 still does not:
    its order rests on "a permit is required for the construction site"."""
    p = _active(reg, 3000.0, conditions=("silt fence on the east line",))
    assert reg.get(p).permit_decision == "not_required"
    c = reg.enforce(ground="A3", on=ON, reasons="fence down", permit_number=p, condition=1)
    assert c.reasons == "condition 1 not met (silt fence on the east line): fence down"
    assert reg.enforce(ground="A2", on=ON, reasons="no BMPs installed", permit_number=p).ground == "A2"
    with pytest.raises(ValidationError, match=r"needs no permit .*ground A1 does not fit it"):
        reg.enforce(ground="A1", on=ON, reasons="x", permit_number=p)
    # Absence: the same small site's application, never issued, takes neither (nothing issued to be subject to).
    other = _under_review(reg, 3000.0, x=1200)
    for ground in ("A2", "A3"):
        with pytest.raises(ValidationError, match=f"ground {ground} does not fit it: reading"):
            reg.enforce(
                ground=ground, on=ON, reasons="x", permit_number=other, condition="E6" if ground == "A3" else None
            )


def test_sections_of_a2_and_a4_name_the_npdes_exempt_site_they_also_apply_to() -> None:
    """§ 540-4A(3): a site exempt from an NPDES permit "shall comply with the performance standards of § 540-7A if
    less than one acre of land disturbing construction activity. The performance standards of § 540-7B, permit
    requirements of § 540-8, and plan requirements of § 540-9 are not applicable." The entries on sites that need
    no permit are applied to those sites too, so they cite it."""
    from esc_gis.profile import load_profile
    from esc_gis.registry.domain.enforcement import where_no_permit_required

    rules = where_no_permit_required(load_profile().tables)
    assert "§ 540-4A(3)" in rules["A2"].section and "§ 540-4A(3)" in rules["A4"].section
    assert rules["A4"].section == "§ 540-12A(4); § 540-4A(1)(b); § 540-4A(3); § 540-7A"


def test_a1_is_refused_before_the_day_of_the_determination(reg) -> None:
    """§ 540-4A(1)(c): "a permit is required for a construction site with less than 4,000 square feet of
    land-disturbing construction activity if the administering authority determines that permit coverage is
    needed"; § 540-12A(1): "a permit is required for the construction site". Determined 2026-11-20: on 2026-11-10
    none was required, so a case of that day is refused; one of the determination's own day fits."""
    small = _small(reg)
    reg.determine(small, on=date(2026, 11, 20), reasons="drains to the Wolf River", purposes=["waters"])
    with pytest.raises(ValidationError) as err:
        reg.enforce(ground="A1", on=date(2026, 11, 10), reasons="grading", permit_number=small)
    text = str(err.value)
    assert "determined that it needs one only on 2026-11-20, after 2026-11-10" in text
    assert "(§ 540-4A(1)(c); § 540-12A(1))" in text and "ground A1 does not fit it" in text
    assert "date the case on or after 2026-11-20" in text
    assert _cases(reg) == 0
    c = reg.enforce(ground="A1", on=date(2026, 11, 20), reasons="grading", permit_number=small)
    assert c.ground == "A1"


def test_no_condition_once_the_permits_period_has_ended(reg) -> None:
    """§ 540-8G: "Permits issued under this section shall be valid for a period of 180 days ... from the date of
    issuance"; § 540-8F: "Permits issued under this section may include conditions established by administering
    authority". That one may be added after the issuance, while the period runs, is a reading (interpretation).
    Valid to 2026-07-04: a condition of that day is taken, one of 2026-11-20 refused."""
    p = _lapsed(reg)
    with pytest.raises(ValidationError) as err:
        reg.add_condition(p, "second row of silt fence", on=ON)
    text = str(err.value)
    assert "its period ended on 2026-07-04, before 2026-11-20" in text
    assert "(§ 540-8F; § 540-8G; basis interpretation)" in text
    assert reg.get(p).state.permit_conditions == []
    assert len(reg.add_condition(p, "second row of silt fence", on=date(2026, 7, 4)).state.permit_conditions) == 1


def test_no_certificate_for_a_permit_past_its_period(reg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """§ 540-8G: "Permits issued under this section shall be valid for a period of 180 days, or the length of the
    building permit or other construction authorizations, whichever is longer, from the date of issuance";
    § 540-8E(8): the "Certificate of Permit Coverage". Valid to 2026-07-04 but still active: on its last day the
    certificate is printed; the day after it is refused."""
    from esc_gis.profile import Profile
    from esc_gis.registry.views.reports import write_certificate

    p = _lapsed(reg)
    monkeypatch.setattr(Profile, "today", lambda self: date(2026, 7, 4))
    write_certificate(reg, p, tmp_path / "c.html")
    page = (tmp_path / "c.html").read_text()
    assert "None beyond the conditions of § 540-8E, to which" in page
    monkeypatch.setattr(Profile, "today", lambda self: date(2026, 7, 5))
    with pytest.raises(ValidationError) as err:
        write_certificate(reg, p, tmp_path / "late.html")
    text = str(err.value)
    assert "the permit's period ended on 2026-07-04 (today is 2026-07-05)" in text
    assert '"shall be valid for a period of 180 days' in text and "(§ 540-8E(8); § 540-8G)" in text
    assert not (tmp_path / "late.html").exists()


# --- A ground on an area nobody measured (issue 46's law review) ------------------------------------------


def test_a1_on_a_site_decided_on_its_whole_area_says_the_area_was_assumed(reg, target: str, layers_path) -> None:
    """§ 540-12A(1) rests an order on "pursuant to § 540-4A of this article, a permit is required for the
    construction site", and § 540-4A(1)(a) on "4,000 square feet or greater of land disturbing construction
    activity". With no disturbed limits drawn, the registry takes the whole site as disturbed (toolkit policy):
    the case opens, and says its ground rests on that assumed area. Drawn limits, a ground that fits a site
    needing no permit (A4), or a determination leave no such note."""
    from .public_outputs import run_permits as run

    whole = _small(reg, 5000.0)
    c = reg.enforce(ground="A1", on=ON, reasons="grading before approval", permit_number=whole)
    (note,) = c.notes
    assert note.startswith("ground A1 rests on the site needing a permit, decided on its whole site (5,000 sq ft)")
    assert note.endswith("(toolkit policy (input quality); § 540-4A(1); basis policy).")
    assert reg.case(c.case_id).notes == ()  # said when the case opens, not a fact of the case
    assert reg.enforce(ground="A4", on=ON, reasons="mud on Main St", permit_number=whole).notes == ()
    drawn = reg.add(
        Application(
            "700 Drawn St",
            date(2026, 11, 2),
            square_sqft(700, 100, 6000.0),
            CRS,
            disturbed=square_sqft(700, 100, 5000.0),
        ),
        who="clerk",
    )
    assert reg.enforce(ground="A1", on=ON, reasons="grading", permit_number=drawn).notes == ()
    small = _small(reg, x=1300)
    reg.determine(small, on=date(2026, 11, 10), reasons="drains to the river", purposes=["waters"])
    assert reg.enforce(ground="A1", on=ON, reasons="grading", permit_number=small).notes == ()
    lay = ["--layers", str(layers_path)]
    r = run("enforce", target, "--permit", whole, "--ground", "A1", "--on", "2026-11-21", "--reasons", "again", *lay)
    assert r.exit_code == 0 and "  note: ground A1 rests on the site needing a permit" in r.output, r.output
