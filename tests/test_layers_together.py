"""Layers of one package or one run that do not lie together are refused, naming the layer and the likely CRS mistake.

Issue 46, item 4: the complete example plan with its disturbed limits labelled EPSG:3071 (county
feet read as WTM metres) puts the limits 157 km from the property lines; `review` answered
"needs a look" with exit 0. A `screen --disturbed` whose limits all lie kilometres from their
sites was measured. Both are now refused (exit 1), never decided.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import geopandas as gpd
import pytest
import shapely
from click.testing import CliRunner
from pyproj import CRS as PyCRS

from esc_gis import screen
from esc_gis.cli.main import cli
from esc_gis.errors import FarFromZoneWarning, ValidationError
from esc_gis.together import APART_KM, apart, apart_message

from .conftest import CRS, box, sites

ROOT = Path(__file__).resolve().parents[1]
COMPLETE = ROOT / "examples" / "plans" / "complete"
DEMO_LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"


def _relabel(path: Path, layer: str, crs: str) -> None:
    gdf = gpd.read_file(path, layer=layer).set_crs(crs, allow_override=True)
    gdf.to_file(path, layer=layer, engine="pyogrio")


@pytest.fixture
def mislabelled_plan(tmp_path: Path) -> Path:
    """The complete example plan with its disturbed limits labelled EPSG:3071 (their numbers are EPSG:7594's)."""
    plan = tmp_path / "plan"
    shutil.copytree(COMPLETE, plan)
    _relabel(plan / "plan.gpkg", "disturbed_limits", "EPSG:3071")
    return plan


def test_review_refuses_a_plan_whose_limits_do_not_lie_with_its_property_lines(mislabelled_plan: Path) -> None:
    """§ 540-9A(3) asks for "A site map with property lines, disturbed limits, and drainage patterns": limits
    157 km from the property lines are no such map; the review names the layer and the CRS that puts it on the site
    (exit 1, no report), where it answered "needs a look" with exit 0."""
    from esc_gis.review import review_plan

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FarFromZoneWarning)  # warned as well: 81 km outside the county zone
        with pytest.raises(ValidationError) as err:
            review_plan(mislabelled_plan, layers=DEMO_LAYERS)
        (p,) = err.value.problems
        assert "layer disturbed_limits (labelled EPSG:3071)" in p.message and "from layer site_boundary" in p.message
        assert "most likely their coordinates are in EPSG:7594, US survey feet read as metres" in p.message
        assert "ogr2ogr -a_srs EPSG:7594" in p.fix
        out = mislabelled_plan.parent / "review.html"
        r = CliRunner().invoke(cli, ["review", str(mislabelled_plan), "-o", str(out), "--layers", str(DEMO_LAYERS)])
    assert r.exit_code == 1 and "layer disturbed_limits" in r.output and "Traceback" not in r.output
    assert not out.exists()


def test_the_complete_plan_as_shipped_is_reviewed(tmp_path: Path) -> None:
    """Absence: layers that lie together are not refused."""
    from esc_gis.review import review_plan

    r = review_plan(COMPLETE, layers=DEMO_LAYERS)
    assert r.verdict in ("approve", "needs a look", "disapprove") and r.checks


def _run_files(tmp_path: Path, limits_crs: str) -> tuple[Path, Path]:
    s, d = tmp_path / "sites.gpkg", tmp_path / "limits.gpkg"
    sites([{"site_id": k, "geometry": box(x, 100, x + 150, 220)} for k, x in (("A", 100), ("B", 300))]).to_file(s)
    limits = sites([{"site_id": k, "geometry": box(x + 10, 110, x + 90, 170)} for k, x in (("A", 100), ("B", 300))])
    limits.set_crs(limits_crs, allow_override=True).to_file(d)
    return s, d


@pytest.mark.parametrize("batch", [None, "1"])
def test_screen_refuses_limits_that_lie_far_from_every_site(
    tmp_path: Path, layers_path: Path, batch: str | None
) -> None:
    s, d = _run_files(tmp_path, "EPSG:3071")
    out = tmp_path / "out.gpkg"
    args = ["screen", str(s), "--disturbed", str(d), "--layers", str(layers_path), "-o", str(out)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FarFromZoneWarning)
        r = CliRunner().invoke(cli, args + (["--batch-rows", batch] if batch else []))
    text = " ".join(r.output.split())
    assert r.exit_code == 1 and not out.exists(), r.output
    assert text.count("1 problem found") == 1 and text.count("lie 15") == 1  # once, however many batches found it
    assert f"{d}: the disturbed limits (labelled EPSG:3071) lie 15" in text
    assert "most likely their coordinates are in EPSG:7594" in text


def test_limits_in_another_crs_that_lie_on_their_sites_are_measured(layer_set) -> None:
    """Absence: limits sent in degrees, and one limit keyed to a site far from it, are not refused."""
    s = sites([{"site_id": k, "geometry": box(x, 100, x + 150, 220)} for k, x in (("A", 100), ("B", 300))])
    d = sites(
        [
            {"site_id": "A", "geometry": box(110, 110, 190, 170)},
            {"site_id": "B", "geometry": box(5000, 100, 5010, 110)},
        ],
        "EPSG:4326",
    )  # B's one limit is 4,550 ft off its site (a keying slip), A's on it: the layers lie together
    out = screen(s, disturbed=d, layers=layer_set).set_index("site_id")
    assert out.loc["A", "disturbed_sqft"] == pytest.approx(4_800, rel=1e-4)


def test_the_reach_is_pinned_at_one_kilometre() -> None:
    """1 km = 3,280.83 US survey feet: limits 3,280 ftUS from their site lie with it, 3,282 ftUS do not."""
    crs = PyCRS.from_user_input(CRS)
    site = box(0, 0, 100, 100)
    assert APART_KM == 1.0
    assert apart([box(3380, 0, 3400, 20)], CRS, [site], crs) is None  # 3,280 ftUS
    found = apart([box(3382, 0, 3400, 20)], CRS, [site], crs)  # 3,282 ftUS
    assert found is not None and found.km == pytest.approx(3282 * 1200 / 3937 / 1000, rel=1e-9)
    assert found.likely is None  # no other label puts it on the site: the message says to check
    message, fix = apart_message("the disturbed limits", "their own sites", found)
    assert message.endswith("so a CRS label is wrong.") and fix.startswith("check which layer's CRS label")


def test_a_gap_of_one_site_is_said_by_its_nearest_feature() -> None:
    """One feature near is enough: a layer lies with its partner when any of its features is within reach."""
    crs = PyCRS.from_user_input(CRS)
    far, near = box(90_000, 0, 90_100, 100), box(150, 0, 200, 50)
    assert apart([far, near], CRS, [box(0, 0, 100, 100)] * 2, crs) is None
    assert apart([far], CRS, [shapely.box(0, 0, 1, 1)], crs) is not None


def test_a_mislabelled_site_boundary_is_named_when_every_other_layer_lies_together(tmp_path: Path) -> None:
    """The property lines labelled EPSG:3071 and every other layer right: the site boundary is named, not each layer."""
    from esc_gis.review import review_plan

    plan = tmp_path / "plan"
    shutil.copytree(COMPLETE, plan)
    _relabel(plan / "plan.gpkg", "site_boundary", "EPSG:3071")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FarFromZoneWarning)
        with pytest.raises(ValidationError) as err:
            review_plan(plan, layers=DEMO_LAYERS)
    (p,) = err.value.problems
    assert "layer site_boundary (labelled EPSG:3071)" in p.message and "from the plan's other layers" in p.message
    assert "most likely their coordinates are in EPSG:7594" in p.message
