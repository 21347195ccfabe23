"""The demo's made-up sites on the Village's real layers: each rule lands where it should."""

from pathlib import Path

import pytest

from esc_gis import screen

ROOT = Path(__file__).resolve().parents[1]

EXPECTED = {
    "S01": ("inside", "applies", "not_required"),
    "S02": ("inside", "applies", "required"),
    "S03": ("inside", "applies", "not_required"),
    "S04": ("inside", "applies", "required"),
    "S05": ("partial", "applies", "required"),
    "S06": ("outside", "outside_jurisdiction", "not_applicable"),
    "S07": ("outside", "outside_jurisdiction", "not_applicable"),
    "S08": ("inside", "excluded_state_agency", "not_applicable"),
    "S09": ("inside", "exempt_agricultural", "not_applicable"),
    "S10": ("inside", "applies", "required"),
    "S11": ("inside", "exempt_silviculture", "not_applicable"),
    "S12": ("inside", "applies", "not_required"),
    "S13": ("inside", "applies", "required"),
    "S14": ("inside", "applies", "required"),
    "S15": ("inside", "applies", "not_required"),
    "S16": ("inside", "applies", "not_required"),
}


@pytest.fixture(scope="module")
def demo():
    d = ROOT / "examples" / "demo"
    return screen(d / "sites.geojson", disturbed=d / "disturbed.geojson").set_index("site_id")


def test_demo_decisions(demo):
    got = {k: (r.jurisdiction, r.applicability, r.permit) for k, r in demo.iterrows()}
    assert got == EXPECTED


def test_demo_shows_each_rule(demo):
    assert demo.loc["S04", "sediment_standard"]
    assert demo.loc["S13", "plan_disturbed_sqft"] == pytest.approx(5_000, rel=1e-5)
    assert demo.loc["S15", "disturbed_sqft"] == pytest.approx(3_900, rel=1e-5)
    assert demo.loc["S16", "permit_may_be_required"] and demo.loc["S16", "protective_disturbed_sqft"] > 0
    assert demo.loc["S05", "disturbed_in_village_sqft"] < demo.loc["S05", "disturbed_sqft"]
    assert '"near_threshold"' in demo.loc["S03", "findings"]
    assert demo["permit_may_be_required"].sum() == 1


def test_demo_with_the_synthetic_dem_shows_steep_disturbance():
    d = ROOT / "examples" / "demo"
    out = screen(d / "sites.geojson", disturbed=d / "disturbed.geojson",
                 layers=ROOT / "layers" / "winneconne-demo" / "layers.toml").set_index("site_id")  # fmt: skip
    steep = out["steep_disturbed_sqft"]
    assert steep["S04"] > 5_000 and steep["S16"] > 500
    assert (steep.drop(["S04", "S16"]) == 0).all()
    assert '"steep_slopes"' in out.loc["S04", "findings"]
    # The real layer set has no DEM: the column is null there, with a finding.
    assert out.loc["S01", "permit"] == "not_required"
