"""Plan review of a site under the permit threshold that the administering authority determined needs a
permit (§ 540-4A(1)(c); issue 46): the plan is then reviewed in full, from the registry's record."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.review import review_plan

from .conftest import CRS, square_sqft
from .test_review import _sized, _status, review_layers  # noqa: F401 (review_layers: the fixture)

WORDS = "permit coverage is needed"


def test_a_determined_3000_sq_ft_plan_is_reviewed_in_full(tmp_path: Path, review_layers: Path) -> None:  # noqa: F811
    """§ 540-4A(1)(c): "a permit is required for a construction site with less than 4,000 square feet ... if
    the administering authority determines that permit coverage is needed ... If a permit is required, the
    responsible party shall comply with all applicable provisions of this article for a permitted site,
    including the performance standards of § 540-7B, permit requirements of § 540-8, and plan requirements of
    § 540-9." Without the determination the same plan is held to § 540-7A only (§ 540-4A(1)(b))."""
    plain = review_plan(_sized(tmp_path / "plain", 3_000.0), layers=review_layers)
    assert plain.measured["permit"] == "not_required" and [c.code for c in plain.checks if c.code == "non_permitted"]
    r = review_plan(_sized(tmp_path / "det", 3_000.0), layers=review_layers, determined="permit P-1, 2026-11-10: river")
    assert r.measured["permit"] == "required" and r.measured["standards"] == plain.profile.standards_permitted
    assert not [c for c in r.checks if c.code == "non_permitted"]
    status, detail = _status(r, "decision")
    assert status == "pass" and "permit required by the administering authority's determination" in detail
    assert "(permit P-1, 2026-11-10: river)" in detail and "the plan is reviewed in full" in detail
    [decision] = [c for c in r.checks if c.code == "decision"]
    assert (decision.section, decision.basis) == ("§ 540-4A(1)(c)", "ordinance")
    # In full: § 540-9A(9) is asked (no RUSLE2 figure in this package), which § 540-7A alone never asks.
    assert any("540-9" in c.section for c in r.checks)


def test_a_determination_changes_no_site_that_needs_a_permit_or_is_exempt(tmp_path: Path, review_layers: Path) -> None:  # noqa: F811
    """§ 540-4A(1): the article applies "unless the site is otherwise exempt under § 540-4A(2) or (3)";
    § 540-4A(3): for an NPDES-exempt site under an acre "permit requirements of § 540-8, and plan requirements
    of § 540-9 are not applicable". At 4,000 sq ft a permit is required already (§ 540-4A(1)(a))."""
    exempt = review_plan(_sized(tmp_path / "n", 3_000.0, npdes_exempt=True), layers=review_layers, determined="x")
    assert exempt.measured["permit"] == "not_required" and "determined" not in exempt.measured
    big = review_plan(_sized(tmp_path / "b", 4_000.0), layers=review_layers, determined="x")
    assert big.measured["permit"] == "required" and "determined" not in big.measured
    assert "determination" not in _status(big, "decision")[1]


def test_review_reads_the_determination_from_the_registry(tmp_path: Path, review_layers: Path) -> None:  # noqa: F811
    """The determination's one home is the permit's history (`permits determine`); `review --registry R
    --determined P` reads it there, and refuses a permit without one."""
    from esc_gis.registry import Application, init_registry, open_registry

    reg_path = tmp_path / "reg.gpkg"
    init_registry(reg_path, layers=review_layers)
    with open_registry(reg_path, layers=review_layers) as reg:
        number = reg.add(Application("250 Small St", date(2026, 11, 2), square_sqft(250, 1210, 3000.0), CRS))
    plan = _sized(tmp_path / "p", 3_000.0)
    out = tmp_path / "r.html"
    args = ["review", str(plan), "--layers", str(review_layers), "-o", str(out), "--json", str(tmp_path / "r.json")]
    r = CliRunner().invoke(cli, [*args, "--registry", str(reg_path), "--determined", number])
    assert r.exit_code == 2 and f"permit {number} has no determination that a permit is needed" in r.output
    r = CliRunner().invoke(cli, [*args, "--determined", number])
    assert r.exit_code == 2 and "give the registry that records it (--registry)" in r.output
    d = CliRunner().invoke(
        cli,
        ["permits", "determine", str(reg_path), number, "--on", "2026-11-10", "--reasons", "drains to Test Creek", "--purpose", "waters",
         "--layers", str(review_layers)],
    )  # fmt: skip
    assert d.exit_code == 0, d.output
    assert "permit required (by determination, to protect waters of the state)" in d.output
    r = CliRunner().invoke(cli, [*args, "--registry", str(reg_path), "--determined", number, "--overwrite"])
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["measured"]["permit"] == "required"
    [decision] = [c for c in data["checks"] if c["code"] == "decision"]
    assert f"permit {number}, 2026-11-10, to protect waters of the state: drains to Test Creek" in decision["detail"]
    shown = CliRunner().invoke(cli, ["permits", "show", str(reg_path), number, "--layers", str(review_layers)])
    assert "determination of 2026-11-10 (to protect waters of the state): drains to Test Creek" in shown.output
    assert WORDS in shown.output and "(§ 540-4A(1)(c); basis ordinance)" in shown.output


def test_review_refuses_a_determination_recorded_on_another_permits_site(tmp_path: Path, review_layers: Path) -> None:  # noqa: F811
    """§ 540-4A(1)(c): "a permit is required for a construction site with less than 4,000 square feet ... if the
    administering authority determines that permit coverage is needed": the determination is of one site, the
    permit's. A plan for 250 Small St reviewed under the determination recorded on 900 Far St (a lot 600 ft
    away) is refused, exit 1, with no report; under its own permit's it is reviewed in full."""
    from esc_gis.registry import Application, init_registry, open_registry

    reg_path = tmp_path / "reg.gpkg"
    init_registry(reg_path, layers=review_layers)
    with open_registry(reg_path, layers=review_layers) as reg:
        own = reg.add(Application("250 Small St", date(2026, 11, 2), square_sqft(250, 1210, 3000.0), CRS))
        far = reg.add(Application("900 Far St", date(2026, 11, 2), square_sqft(900, 1210, 3000.0), CRS))
        for number in (own, far):
            reg.determine(number, on=date(2026, 11, 10), reasons="drains to Test Creek", purposes=["waters"])
    plan = _sized(tmp_path / "p", 3_000.0)
    out = tmp_path / "r.html"
    args = ["review", str(plan), "--layers", str(review_layers), "-o", str(out), "--registry", str(reg_path)]
    r = CliRunner().invoke(cli, [*args, "--determined", far])
    assert r.exit_code == 1, r.output
    assert f"the plan's site boundary is not the site of permit {far} (900 Far St)" in r.output
    assert "give --determined the permit whose site the plan is for" in r.output
    assert not out.exists()
    r = CliRunner().invoke(cli, [*args, "--determined", own])
    assert r.exit_code == 0, r.output
    assert out.exists()
