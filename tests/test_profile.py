import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import ProfileError
from esc_gis.profile import REQUIRED, load_profile


def test_every_number_has_a_citation():
    p = load_profile()
    assert p.measure_crs == "EPSG:7594"
    for e in p.entries.values():
        assert e.section.strip(), e.key
        assert e.value is not None or "depths" in e.extra


def test_rule_table_numbers():
    p = load_profile()
    v = {k: e.value for k, e in p.entries.items()}
    assert p.area_sqft("thresholds.permit_area") == 4000
    assert p.area_sqft("thresholds.sediment_area") == 43_560
    assert v["thresholds.steep_slope"] == 20
    assert v["thresholds.sediment_load"] == 5
    assert v["protective_area.lake"] == 50
    assert v["protective_area.orw_erw"] == 75
    assert v["protective_area.wetland_highly_susceptible"] == 75
    assert v["protective_area.concentrated_flow_channel"] == 10
    assert p.entry("protective_area.wetland_less_susceptible").extra == {"min_ft": 10, "max_ft": 30}
    assert v["deadlines.decision"] == 20 and p.entry("deadlines.decision").section == "§ 540-8C(1)"
    assert v["deadlines.permit_validity"] == 180
    assert v["deadlines.start_notice"] == 48
    assert v["deadlines.rain_trigger"] == 0.5
    assert v["deadlines.temporary_stabilization"] == 14
    assert v["deadlines.stockpile"] == 7
    assert p.entry("design_storms.tp40_type2").extra["depths"]["100"] == 5.5
    assert p.entry("design_storms.atlas14_mse4").extra["depths"]["2"] == 2.51


def test_bad_profile_lists_every_problem(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(
        '[profile]\nname = "x"\nmeasure_crs = "EPSG:7594"\n'
        '[thresholds.permit_area]\nvalue = "lots"\nunit = "furlongs"\nsection = ""\n'
    )
    with pytest.raises(ProfileError) as exc:
        load_profile(f)
    text = str(exc.value)
    assert "not a number" in text and "furlongs" in text and "no section" in text
    for key in REQUIRED[1:]:
        assert key in text


def test_missing_profile_file(tmp_path):
    with pytest.raises(ProfileError, match="does not exist"):
        load_profile(tmp_path / "nope.toml")


def test_rules_command_prints_table_and_json():
    r = CliRunner().invoke(cli, ["rules"])
    assert r.exit_code == 0, r.output
    assert "540-4A(1)(a)" in r.output and "4,000" in r.output
    r = CliRunner().invoke(cli, ["rules", "--json"])
    data = json.loads(r.output)
    keys = {e["entry"] for e in data["entries"]}
    assert "thresholds.permit_area" in keys and data["measure_crs"] == "EPSG:7594"


def test_every_part_of_a_multi_section_citation_is_marked():
    prof = load_profile()
    assert prof.entry("deadlines.temporary_stabilization").cite == "§ 540-7A(4)(d); § 540-7B(5)(d)"
    # Protective-area widths are NR 151.125's (a technical standard), not Article I's.
    assert prof.entry("protective_area.lake").cite == "NR 151.125(1)(c); § 540-5 PROTECTIVE AREA; § 540-20C(4)"


def test_citations_credit_only_what_the_source_says():
    p = load_profile()
    # The slope-length cap is the toolkit's own (InVEST's default), not WDNR's: policy.
    outside = p.template("soil_loss_outside_method")
    assert outside.basis == "policy" and "toolkit policy" in outside.section
    assert "not a WDNR value" in p.tables["soil_loss"]["max_slope_length_source"]
    # § 540-5 ADMINISTERING AUTHORITY: "... i.e., the Village's Director of Public Works".
    assert "Director of Public Works" in p.contact and "Village Hall" not in p.contact
    assert "Public Works Director" in p.authority
    # The repair tolerance for invalid polygons is the toolkit's own, and says so (issue 46).
    assert p.entry("policy.geometry_repair").extra["basis"] == "policy"


def test_a_reading_the_profile_does_not_name_is_the_first():
    p = load_profile(Path(__file__).parent / "profiles" / "example.toml")
    assert "reading" not in p.entry("deadlines.permit_extension").extra
    assert p.reading("deadlines.permit_extension") == "per_extension"
    assert p.reading("deadlines.inspection_interval") == "rolling_7_days"
    assert p.names()["permit_extension_reading"] == "per extension"
    assert p.names()["business_days"] == "weekdays other than the office's holidays"


def test_a_doubled_brace_in_a_message_is_refused_and_the_shipped_profiles_have_none():
    """A doubled brace printed "{outside_sqft:,.1f} sq ft" to every screen user instead of the number."""
    from esc_gis.findings import FindingTemplate, check_template

    bad = FindingTemplate("disturbed_outside_site", "toolkit policy", "policy", "{{outside_sqft:,.1f}} sq ft outside")
    assert any("doubled brace" in p for p in check_template(bad, ()))
    good = FindingTemplate("disturbed_outside_site", "toolkit policy", "policy", "{outside_sqft:,.1f} sq ft outside")
    assert check_template(good, ()) == []
    assert good.render({"outside_sqft": 1234.56}).message == "1,234.6 sq ft outside"
    for path in (None, Path(__file__).parent / "profiles" / "example.toml"):
        p = load_profile(path)
        msg = p.finding("disturbed_outside_site", outside_sqft=1234.56).message
        assert msg.startswith("1,234.6 sq ft") and "{" not in msg
