"""One site, one answer (issue 34; DESIGN.md "One site, one answer (round 4)"): the chain on the demo.

The demo's sites, disturbed limits and layer set (the ``make demo`` inputs: examples/demo/,
layers/winneconne-demo/) go through ``esc-gis screen``, then ``esc-gis permits import`` and
``permits add`` of the screening into GeoPackage registries, ``esc-gis soil-loss`` and
``esc-gis review`` (of a minimal plan package built here from a demo site, as the demo has none).
Every command takes the site's applicability, disturbed area and decision from the one
screening function: they must agree on every site.

The ordinance text the chain rests on: § 540-4B "This article applies to land-disturbing
construction activity on construction sites located within the boundaries and jurisdiction of
the Village"; § 540-4C "This article is not applicable to activities conducted by a state
agency"; § 540-4A(1)(a) "A permit is required for a construction site with 4,000 square feet or
greater of land disturbing construction activity"; § 540-7B(3)(b) "For sites with one acre or
more of land-disturbing construction activity, the plan shall meet the following sediment
performance standards".
"""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
import shapely
from click.testing import CliRunner

from esc_gis.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo"
DEMO_LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"
LAY = ["--layers", str(DEMO_LAYERS)]
#: Demo sites reviewed as plan packages: under the permit area, required, over an acre, outside the
#: Village, a state agency's (none of them on a common plan, which a lone package cannot show).
REVIEWED = ("S01", "S02", "S04", "S06", "S08")


def _run(*args: str) -> object:
    r = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in r.output, r.output
    return r


def _package(folder: Path, site: pd.Series, limits: gpd.GeoDataFrame) -> Path:
    """A minimal plan package for one demo site: its polygon, its limits, one flow line, a silt fence.

    ``[site]`` carries the demo site's contract facts (activity, state agency, NPDES exemption),
    as a screening's sites layer does.
    """
    folder.mkdir(parents=True)
    path = folder / "plan.gpkg"
    crs = limits.crs
    dist = shapely.union_all(limits.geometry.to_numpy())
    c = dist.centroid
    g = {
        "site_boundary": gpd.GeoDataFrame(geometry=[site.geometry], crs=crs),
        "disturbed_limits": gpd.GeoDataFrame(geometry=[dist], crs=crs),
        "drainage": gpd.GeoDataFrame(geometry=[shapely.LineString([(c.x, c.y), (c.x, c.y - 1e-5)])], crs=crs),
        "bmps": gpd.GeoDataFrame({"type": ["1056"]}, geometry=[shapely.LineString(dist.exterior.coords)], crs=crs),
    }
    for name, gdf in g.items():
        gdf.to_file(path, layer=name, engine="pyogrio")
    flag = {True: "true", False: "false"}
    (folder / "plan.toml").write_text(
        "[site]\n"
        f'activity = "{site["activity"]}"\n'
        f"state_agency = {flag[bool(site['state_agency'])]}\n"
        f"npdes_exempt = {flag[bool(site['npdes_exempt'])]}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """Run the chain once: screen, import, add, soil-loss, review; return each output per site."""
    tmp = tmp_path_factory.mktemp("chain")
    sites, limits = str(DEMO / "sites.geojson"), str(DEMO / "disturbed.geojson")
    r = _run("screen", sites, "--disturbed", limits, *LAY, "-o", str(tmp / "screening.gpkg"), "--quiet")
    assert r.exit_code == 0, r.output
    screening = gpd.read_file(tmp / "screening.gpkg", layer="screening").set_index("site_id")

    reg = str(tmp / "permits.gpkg")
    assert _run("permits", "init", reg, *LAY).exit_code == 0
    r = _run(
        "permits", "import", reg, str(tmp / "screening.gpkg"), "--where", "applicability = 'applies'",
        "--field", "site_address=name", "--field", "parcel_id=site_id", "--received-on", "2026-11-02", *LAY,
    )  # fmt: skip
    assert r.exit_code == 0 and "WARNING" not in r.output, r.output
    shown = []
    for i in range(1, int((screening["applicability"] == "applies").sum()) + 1):
        r = _run("permits", "show", reg, f"ESC-2026-{i:04d}", "--json", *LAY)
        assert r.exit_code == 0, r.output
        shown.append(json.loads(r.output))
    imported = pd.DataFrame(shown).set_index("parcel_id")

    # `permits add` of single sites from the screening into a second registry: S02 is added; the
    # state agency's S08 and the outside S06 are refused with the screening's reason.
    second = str(tmp / "second.gpkg")
    assert _run("permits", "init", second, *LAY).exit_code == 0
    added: dict[str, object] = {}
    for sid in ("S02", "S06", "S08"):
        added[sid] = _run(
            "permits", "add", second, "--site-layer", str(tmp / "screening.gpkg"), "--site-id", sid,
            "--address", f"{sid} St", "--received", "2026-11-02", *LAY,
        )  # fmt: skip

    out = tmp / "soil_loss.gpkg"
    r = _run(
        "soil-loss", sites, "--disturbed", limits, "--dem", str(ROOT / "layers/winneconne-demo/dem_synthetic.tif"),
        "--soils", str(ROOT / "layers/winneconne-demo/soils_made_up.gpkg"),
        "--schedule", str(DEMO / "schedule_made_up.csv"), "--ei-file", str(DEMO / "ei_monthly_made_up.csv"),
        "--r-annual", "120", *LAY, "-o", str(out), "--quiet",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    soil = gpd.read_file(out, layer="soil_loss").set_index("site_id")

    demo_sites = gpd.read_file(sites).set_index("site_id")
    demo_limits = gpd.read_file(limits)
    reviews = {}
    for sid in REVIEWED:
        pkg = _package(tmp / f"plan_{sid}", demo_sites.loc[sid], demo_limits[demo_limits["site_id"] == sid])
        js = tmp / f"review_{sid}.json"
        r = _run("review", str(pkg), "-o", str(tmp / f"review_{sid}.html"), "--json", str(js), *LAY, "--quiet")
        assert r.exit_code == 0, r.output
        reviews[sid] = json.loads(js.read_text(encoding="utf-8"))
    return {"screening": screening, "imported": imported, "added": added, "soil": soil, "reviews": reviews}


def test_screen_import_add_soil_loss_and_review_give_each_demo_site_one_answer(chain) -> None:
    screening, imported, soil, reviews = chain["screening"], chain["imported"], chain["soil"], chain["reviews"]
    assert len(screening) == 21 and sorted(soil.index) == sorted(screening.index)
    # The demo's mix: every reason the article may not apply is there, and sites it reaches.
    assert set(screening["applicability"]) == {
        "applies",
        "outside_jurisdiction",
        "excluded_state_agency",
        "exempt_agricultural",
        "exempt_silviculture",
    }
    for sid, s in screening.iterrows():
        # soil-loss: the screening's applicability, permit, area decided on and sediment standard.
        sl = soil.loc[sid]
        assert (sl["applicability"], sl["permit"]) == (s["applicability"], s["permit"]), sid
        assert sl["plan_disturbed_sqft"] == pytest.approx(s["plan_disturbed_sqft"], abs=0.01), sid
        assert sl["disturbed_sqft"] == pytest.approx(s["disturbed_sqft"], abs=0.01), sid  # limits inside the sites
        assert bool(sl["sediment_standard"]) == bool(s["sediment_standard"]), sid
        codes = [f["code"] for f in json.loads(sl["findings"])]
        judged = "soil_loss_meets" in codes or "soil_loss_exceeds" in codes
        assert judged == bool(s["sediment_standard"]), sid
        assert ("soil_loss_article_not_applicable" in codes) == (s["applicability"] != "applies"), sid
        # The registry: exactly the sites the article reaches, with the screening's numbers and decision.
        if s["applicability"] == "applies":
            p = imported.loc[sid]
            assert p["disturbed_sqft"] == pytest.approx(s["disturbed_sqft"], abs=0.01), sid
            assert p["plan_disturbed_sqft"] == pytest.approx(s["plan_disturbed_sqft"], abs=0.01), sid
            assert (p["permit_decision"], p["standards"]) == (s["permit"], s["standards"]), sid
            assert bool(p["sediment_standard"]) == bool(s["sediment_standard"]), sid
        else:
            assert sid not in imported.index
    assert sorted(imported.index) == sorted(screening.index[screening["applicability"] == "applies"])
    # The one site over an acre is judged by soil-loss; the sites the article does not reach never are.
    assert soil.loc["S04", "sediment_standard"] and not pd.isna(soil.loc["S04", "passes"])
    # review of a package drawn from a demo site: the screening's answer for the same polygons.
    for sid, rv in reviews.items():
        s, m = screening.loc[sid], rv["measured"]
        assert (m["applicability"], m["permit"]) == (s["applicability"], s["permit"]), sid
        assert m["disturbed_sqft"] == pytest.approx(s["disturbed_sqft"], abs=0.01), sid
        assert m["plan_disturbed_sqft"] == pytest.approx(s["plan_disturbed_sqft"], abs=0.01), sid
        assert bool(m["sediment_standard"]) == bool(s["sediment_standard"]), sid
        sections = " ".join(c["section"] for c in rv["checks"])
        if s["permit"] != "required":
            # Under the threshold or outside the article: nothing of § 540-9 or § 540-7B, and no verdict
            # of disapproval (§ 540-4A(1)(b): "only § 540-7A").
            assert rv["verdict"] != "disapprove" and rv["reasons"] == [], sid
            assert "540-9" not in sections and "540-7B" not in sections, sid
        else:
            assert "540-9A" in sections, sid  # reviewed in full
    assert reviews["S01"]["measured"]["permit"] == "not_required"
    assert [c["finding"] for c in reviews["S08"]["checks"]] == ["review_decision_not_applicable"]


def test_permits_add_of_a_demo_site_takes_or_refuses_it_as_the_screening_decided(chain) -> None:
    added, screening = chain["added"], chain["screening"]
    assert added["S02"].exit_code == 0, added["S02"].output
    assert screening.loc["S02", "permit"] == "required"
    for sid in ("S06", "S08"):
        assert screening.loc[sid, "permit"] == "not_applicable"
        assert added[sid].exit_code == 1, added[sid].output
