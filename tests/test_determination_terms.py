"""A § 540-4A(1)(c) determination names its purpose, and can be appealed and reversed (§ 540-13A(1)),
on both back ends (the ``reg`` fixture: GeoPackage and PostGIS; verify and rebuild stay clean).

§ 540-4A(1)(c): "a permit is required for a construction site with less than 4,000 square feet of
land-disturbing construction activity if the administering authority determines that permit coverage is
needed in order to improve article compliance, meet targeted performance standards, or protect waters of
the state."
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from esc_gis.errors import ValidationError
from esc_gis.registry import Application
from esc_gis.registry.domain.determinations import named_purposes, purpose_words
from esc_gis.registry.service.registry import Registry

from .conftest import CRS, square_sqft
from .test_appeals import appeal_of

ON = date(2026, 11, 20)
W = {
    "determination_purposes": {
        "compliance": "improve article compliance",
        "targeted": "meet targeted performance standards",
        "waters": "protect waters of the state",
    }
}


def _small(reg: Registry, sqft: float = 3000.0, *, x: float = 100) -> str:
    """An application received 2026-11-02 on a square of ``sqft`` at local (x, 100), its whole site disturbed."""
    return reg.add(Application(f"{x:.0f} Small St", date(2026, 11, 2), square_sqft(x, 100, sqft), CRS), who="clerk")


# --- The purpose: which of § 540-4A(1)(c)'s three ------------------------------------------------------


def test_the_purposes_are_named_once_in_the_ordinances_order_and_words() -> None:
    """§ 540-4A(1)(c) names three purposes: "improve article compliance, meet targeted performance
    standards, or protect waters of the state"; one or more, in any case, each once."""
    assert named_purposes(W, ["Waters", "compliance", "waters"]) == (["compliance", "waters"], [])
    assert purpose_words(W, ["compliance", "waters"]) == "improve article compliance and protect waters of the state"
    assert purpose_words(W, ["targeted"]) == "meet targeted performance standards"
    assert purpose_words(W, []) == ""
    assert purpose_words(W, ["a", "b", "c"]) == "a, b and c"  # a name the profile dropped is shown as recorded
    none, problems = named_purposes(W, [" "])
    assert none == [] and problems[0][0] == "the determination names no purpose."
    assert "compliance (improve article compliance)" in problems[0][1]
    bad, problems = named_purposes(W, ["waters", "beauty"])
    assert bad == [] and problems[0][0] == "purpose 'beauty' is not one the profile names."


def test_a_determination_records_its_purpose_and_is_refused_without_one(reg) -> None:
    """§ 540-4A(1)(c): the administering authority "determines that permit coverage is needed in order to
    improve article compliance, meet targeted performance standards, or protect waters of the state": a
    determination for no named purpose, or another, is not one; nothing is written then."""
    small = _small(reg)
    with pytest.raises(ValidationError, match="the determination names no purpose"):
        reg.determine(small, on=ON, reasons="drains to the river")
    with pytest.raises(ValidationError, match="purpose 'scenic' is not one the profile names"):
        reg.determine(small, on=ON, reasons="drains to the river", purposes=["scenic"])
    assert reg.get(small).state.determination is None and reg.get(small).permit_decision == "not_required"
    p = reg.determine(small, on=ON, reasons="drains to the river", purposes=["waters", "targeted"])
    assert p.state.determination["purposes"] == ["targeted", "waters"]
    assert p.permit_decision == "required"


def test_show_the_certificate_and_review_say_the_purpose(reg, target: str, layers_path, tmp_path: Path) -> None:
    """§ 540-4A(1)(c) "in order to ... protect waters of the state": the purpose is said wherever the
    determination is."""
    from .public_outputs import run_permits as run

    lay = ["--layers", str(layers_path)]
    small = _small(reg)
    r = run("determine", target, small, "--on", "2026-11-10", "--reasons", "drains to the river", *lay)
    assert r.exit_code != 0 and "--purpose" in r.output  # required
    r = run("determine", target, small, "--on", "2026-11-10", "--reasons", "x", "--purpose", "views", *lay)
    assert r.exit_code == 1 and "purpose 'views' is not one the profile names" in r.output, r.output
    args = ("--on", "2026-11-10", "--reasons", "drains to the river", "--purpose", "waters", "--purpose", "compliance")
    r = run("determine", target, small, *args, *lay)
    assert r.exit_code == 0, r.output
    assert "(by determination, to improve article compliance and protect waters of the state)" in r.output
    r = run("show", target, small, *lay)
    assert (
        "determination of 2026-11-10 (to improve article compliance and protect waters of the state): "
        "drains to the river" in r.output
    ), r.output


# --- An appeal of the determination: § 540-13A(1) -------------------------------------------------------

ZBA = "zoning_board_of_appeals"


def _appeal(reg: Registry, n: str | None, on: date = date(2026, 11, 25)) -> str:
    """An appeal of the determination recorded on permit ``n`` (the appeals tests' helper)."""
    return appeal_of(reg, n, kind="determination", on=on, appealed="determination of 2026-11-20")


def test_a_determination_reversed_on_appeal_is_withdrawn_and_the_site_decided_without_it(reg) -> None:
    """§ 540-13A(1): the Zoning Board of Appeals "Shall hear and decide appeals where it is alleged that there is
    error in any order, decision or determination made by the administering authority in administering this
    article". Reversed, the § 540-4A(1)(c) determination is withdrawn: the 3,000 sq ft site is decided as
    § 540-4A(1)(b) decides it, "A permit is not required", and ground A1 no longer fits; a new determination may
    be recorded."""
    small = _small(reg)
    reg.determine(small, on=ON, reasons="drains to the river", purposes=["waters"])
    assert reg.enforce(ground="A1", on=date(2026, 11, 21), reasons="grading", permit_number=small).case_id
    a = _appeal(reg, small)
    d = reg.decide_appeal(a, body=ZBA, outcome="reversed", on=date(2026, 12, 1)).decision
    assert d is not None and d.effect == "determination withdrawn; permit not_required"
    p = reg.get(small)
    assert p.state.determination is None
    assert (p.permit_decision, p.standards) == ("not_required", reg.decide_permit(p)["standards"])
    assert reg.decide_permit(p)["determined"] is False
    assert "determination_reversed" in [e.kind for e in reg.history(small)]
    with pytest.raises(ValidationError, match="needs no permit"):
        reg.enforce(ground="A1", on=date(2026, 12, 2), reasons="grading", permit_number=small)
    again = reg.determine(small, on=date(2026, 12, 3), reasons="new survey", purposes=["compliance"])
    assert again.permit_decision == "required" and again.state.determination["purposes"] == ["compliance"]


def test_a_determination_upheld_or_not_reversed_stays(reg) -> None:
    """§ 540-13A(1) "hear and decide appeals": an appeal upheld leaves the determination, and the permit
    required under § 540-4A(1)(c), as they were."""
    small = _small(reg)
    reg.determine(small, on=ON, reasons="drains to the river", purposes=["waters"])
    d = reg.decide_appeal(_appeal(reg, small), body=ZBA, outcome="upheld", on=date(2026, 12, 1)).decision
    assert d is not None and d.effect == "permit state unchanged"
    p = reg.get(small)
    assert p.state.determination is not None and p.permit_decision == "required"


def test_an_appeal_of_a_determination_needs_one_recorded(reg) -> None:
    """§ 540-13A(1) "any order, decision or determination made by the administering authority": the appeal of a
    determination is of one recorded on the permit; none recorded, or no permit named, it is refused and
    nothing is written."""
    small = _small(reg)
    with pytest.raises(ValidationError) as err:
        _appeal(reg, small)
    assert f"permit {small} has no determination that a permit is needed to appeal" in str(err.value)
    assert reg.appeals() == []
    reg.determine(small, on=ON, reasons="drains to the river", purposes=["waters"])
    assert _appeal(reg, small)


def test_the_determination_is_an_appealable_kind_citing_both_sections() -> None:
    """§ 540-13A(1) "any order, decision or determination"; § 540-4A(1)(c) "if the administering authority
    determines"."""
    from esc_gis.profile import load_profile
    from esc_gis.registry.domain.appeals import DETERMINATION, appealed_kinds

    kind = appealed_kinds(load_profile().tables)["determination"]
    assert (kind.section, kind.undoes, kind.not_heard) == ("§ 540-13A(1); § 540-4A(1)(c)", DETERMINATION, None)
