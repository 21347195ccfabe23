"""Maps: display-only EPSG:4326, escaping, offline inlining, the CLI; and in real Chromium."""

from __future__ import annotations

import json
import re
import time

import pandas as pd
import pytest
from click.testing import CliRunner

from esc_gis import screen
from esc_gis.cli.main import cli
from esc_gis.errors import MapAssetsError, OutputExistsError, ValidationError
from esc_gis.maps import overview_map, site_map, write_map
from esc_gis.maps.assets import LEAFLET_VERSION

from .browser import ROOT, chromium_page, real_errors
from .conftest import box, sites

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def results(layers_path):
    rows = [
        {"site_id": "A", "name": "House", "geometry": box(100, 100, 180, 160)},  # 4,800 sq ftUS: required
        {"site_id": XSS, "name": XSS, "geometry": box(1760, 100, 1790, 150)},  # by the lake: may be required
        {"site_id": "C", "name": "Shed", "geometry": box(300, 300, 320, 320)},  # 400: not required
        {"site_id": "D", "name": "Barn", "geometry": box(3000, 3000, 3100, 3100)},  # outside
    ]
    return screen(sites(rows), layers=layers_path)


@pytest.fixture(scope="module")
def layer_set_obj(layers_path):
    from esc_gis import load_layers, load_profile

    return load_layers(layers_path, profile=load_profile())


def _html(m) -> str:
    return m.get_root().render()


def test_package_json_pins_the_leaflet_the_maps_load():
    pinned = json.loads((ROOT / "package.json").read_text())["dependencies"]["leaflet"]
    assert pinned == LEAFLET_VERSION


def test_overview_escapes_user_text_and_loads_only_leaflet(results, layer_set_obj):
    page = _html(overview_map(results, layers=layer_set_obj))
    # JSON made safe for <script> (\u003c); the browser shows it with textContent.
    assert XSS not in page and "\\u003cimg src=x onerror=alert(1)\\u003e" in page
    scripts = re.findall(r'<script src="([^"]+)"', page) + re.findall(r'<link rel="stylesheet" href="([^"]+)"', page)
    assert scripts and all(f"leaflet@{LEAFLET_VERSION}" in s for s in scripts)
    assert "Permit required (1)" in page and "Not applicable (outside, exempt or excluded) (1)" in page


def html_escaped(text: str) -> str:
    import html

    return html.escape(text)


def test_display_is_the_only_place_in_degrees(results, layer_set_obj):
    page = _html(overview_map(results, layers=layer_set_obj))
    coords = [float(v) for v in re.findall(r"-?\d+\.\d+", page[page.find('"coordinates"') :][:400])]
    lon, lat = coords[0], coords[1]
    assert -89.0 < lon < -88.5 and 44.0 < lat < 44.3  # Winneconne, in EPSG:4326
    assert len(str(abs(lon)).split(".")[1]) <= 6  # rounded for display
    assert results.crs.to_epsg() == 7594  # the results themselves stay in feet


def test_site_map_has_every_layer_and_cited_findings(results, layer_set_obj):
    page = _html(site_map(results, XSS, layers=layer_set_obj))
    for name in ("Village boundary", "Protective areas (NR 151.125 widths)", "Waters of the state", "Site"):
        assert name in page
    assert "§ 540-4A(1)(c)" in page and XSS not in page
    with pytest.raises(ValidationError, match="no site 'nope'"):
        site_map(results, "nope")


def test_offline_map_inlines_leaflet_and_says_which(results, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no node_modules needed, wherever esc_gis runs from
    out = write_map(overview_map(results, offline=True), tmp_path / "off.html")
    page = out.read_text()
    assert "<script src=" not in page and 'rel="stylesheet" href' not in page
    assert f'content="leaflet {LEAFLET_VERSION} (npm), inlined"' in page
    assert "url(data:image/png;base64," in page and "images/layers.png" not in page
    with pytest.raises(OutputExistsError):
        write_map(overview_map(results), out)
    monkeypatch.setattr("esc_gis.maps.assets.BUNDLED", tmp_path / "nowhere")
    with pytest.raises(MapAssetsError, match="reinstall esc_gis"):
        overview_map(results, offline=True)


def test_map_command(results, layers_path, tmp_path):
    res = tmp_path / "r.gpkg"
    results.to_file(res, engine="pyogrio")
    out = tmp_path / "m.html"
    r = CliRunner().invoke(cli, ["map", str(res), "-o", str(out), "--layers", str(layers_path)])
    assert r.exit_code == 0, r.output
    assert "4 sites" in r.output and out.stat().st_size > 1000
    r = CliRunner().invoke(cli, ["map", str(res), "-o", str(out), "--layers", str(layers_path)])
    assert r.exit_code == 1 and "--overwrite" in r.output
    r = CliRunner().invoke(cli, ["map", str(res), "-o", str(tmp_path / "m.png")])
    assert r.exit_code == 1 and ".html" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(
        cli,
        [
            "map",
            str(res),
            "-o",
            str(tmp_path / "s.html"),
            "--site",
            "A",
            "--layers",
            str(layers_path),
            "--basemap",
            "aerial",
        ],
    )
    assert r.exit_code == 0, r.output


# ----- in real headless Chromium ---------------------------------------------------------

_COUNT_JS = """() => {
  const m = Object.values(window).find(v => v instanceof L.Map);
  let paths = 0; m.eachLayer(l => { if (l.escSites) paths += l.escSites; else if (l instanceof L.Path) paths++; });
  // Drawn, not only loaded: painted pixels on the sites' canvases.
  let painted = 0;
  for (const cv of document.querySelectorAll('canvas.esc-sites')) {
    const px = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    for (let i = 3; i < px.length; i += 4) if (px[i]) painted++;
  }
  return {paths, painted, canvas: document.querySelectorAll('canvas').length,
          legend: !!document.getElementById('esc-legend'),
          overlays: [...document.querySelectorAll('.leaflet-control-layers-overlays label')].map(e => e.innerText.trim())};
}"""

_CLICK_JS = """([lat, lng]) => {
  const m = Object.values(window).find(v => v instanceof L.Map);
  const p = m.latLngToContainerPoint([lat, lng]);
  const r = m.getContainer().getBoundingClientRect();
  return [r.left + p.x, r.top + p.y];
}"""


def _inside_point(results, site_id) -> list[float]:
    """A point inside a site, as [lat, lng] (display only)."""
    g = results[results["site_id"] == site_id].to_crs("EPSG:4326").geometry.iloc[0]
    p = g.representative_point()
    return [p.y, p.x]


def _load(page, path) -> float:
    t0 = time.perf_counter()
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return time.perf_counter() - t0


def test_overview_in_chromium_draws_every_site_with_legend_and_safe_popup(results, layer_set_obj, tmp_path):
    path = write_map(overview_map(results, layers=layer_set_obj), tmp_path / "ov.html")
    with chromium_page() as (page, errors, _):
        _load(page, path)
        got = page.evaluate(_COUNT_JS)
        assert got["paths"] == 4 + 1 + 1  # four sites, the Village boundary and the lake, drawn on a canvas
        assert got["canvas"] >= 2 and got["painted"] > 100 and got["legend"]
        assert any(o.startswith("Permit required (1)") for o in got["overlays"])
        # The XSS site: click it; its popup shows the text, runs nothing, adds no image.
        x, y = page.evaluate(_CLICK_JS, _inside_point(results, XSS))
        page.mouse.click(x, y)
        page.wait_for_selector(".leaflet-popup-content")
        assert XSS in page.inner_text(".leaflet-popup-content")
        assert page.locator(".leaflet-popup-content img").count() == 0
        assert real_errors(errors) == []


def test_site_popup_lists_findings_with_sections(results, layer_set_obj, tmp_path):
    path = write_map(site_map(results, "A", layers=layer_set_obj), tmp_path / "a.html")
    with chromium_page() as (page, errors, _):
        _load(page, path)
        x, y = page.evaluate(_CLICK_JS, _inside_point(results, "A"))
        page.mouse.click(x, y)
        text = page.inner_text(".leaflet-popup-content")
        assert "Permit required" in text and "(§ 540-4A(1)(a))" in text
        assert real_errors(errors) == []


def test_offline_map_works_with_every_request_blocked(results, layer_set_obj, tmp_path):
    path = write_map(site_map(results, XSS, layers=layer_set_obj, offline=True), tmp_path / "off.html")
    with chromium_page(offline=True) as (page, errors, requested):
        _load(page, path)
        got = page.evaluate(_COUNT_JS)
        assert got["paths"] >= 4  # boundary, strip, lake, site
        assert not any("jsdelivr" in u for u in requested)
        assert real_errors(errors) == []


def test_screen_writes_the_overview_map_in_the_same_run(layers_path, tmp_path):
    src = tmp_path / "sites.gpkg"
    sites([{"site_id": "A", "geometry": box(100, 100, 180, 160)}]).to_file(src, engine="pyogrio")
    out, page = tmp_path / "r.gpkg", tmp_path / "r.html"
    args = ["screen", str(src), "--layers", str(layers_path), "-o", str(out), "--map", str(page), "-q"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert out.exists() and "esc-legend" in page.read_text()
    r = CliRunner().invoke(cli, [*args[:-3], "-o", str(tmp_path / "r2.gpkg"), "--map", str(page), "-q"])
    assert r.exit_code == 1 and "--overwrite" in r.output and not (tmp_path / "r2.gpkg").exists()


def _other_profile(tmp_path):
    """The bundled profile with another jurisdiction's name and map labels."""
    from pathlib import Path

    from esc_gis import load_profile
    from esc_gis.profile import __file__ as profile_py

    text = (Path(profile_py).parent / "profiles" / "winneconne.toml").read_text()
    text = text.replace('jurisdiction_name = "Village of Winneconne"', 'jurisdiction_name = "Town of Example"')
    # Replace the [labels] values in place: findings declared after the table must stay.
    for a, b in (
        (
            'may_be_required = "Not required, but may be required (§ 540-4A(1)(c))"',
            'may_be_required = "Maybe (§ 23-4C)"',
        ),
        ('jurisdiction_boundary = "Village boundary"', 'jurisdiction_boundary = "Town line"'),
        (
            'targeted_areas = "Targeted performance standard areas (§ 540-7B(6))"',
            'targeted_areas = "Targeted (§ 23-7F)"',
        ),
        ('targeted_areas_section = "§ 540-7B(6)"', 'targeted_areas_section = "§ 23-7F"'),
    ):
        assert a in text, a
        text = text.replace(a, b)
    (tmp_path / "other.toml").write_text(text)
    return load_profile(tmp_path / "other.toml")


def test_map_wording_comes_from_the_profile(results, layer_set_obj, tmp_path):
    prof = _other_profile(tmp_path)
    page = _html(overview_map(results, layers=layer_set_obj, profile=prof))
    assert "Maybe (§ 23-4C) (1)" in page and "Town line" in page and "Town of Example" in page
    assert "Winneconne" not in page and "540-" not in page
    site = _html(site_map(results, "A", layers=layer_set_obj, profile=prof))
    assert "Town line" in site and "Disturbed inside Town of Example" in site
    # The bundled profile words the same map with its own names and citations.
    page = _html(overview_map(results, layers=layer_set_obj))
    assert "Not required, but may be required (§ 540-4A(1)(c))" in page and "Village of Winneconne" in page


def test_steep_layer_is_named_by_the_threshold_drawn(results, layer_set_obj):
    import geopandas as gpd

    steep = gpd.GeoDataFrame(
        {"threshold_pct": [20.0], "area_sqft": [100.0]}, geometry=[box(110, 110, 120, 120)], crs=results.crs
    )
    page = _html(site_map(results, "A", layers=layer_set_obj, steep=steep))
    assert "Land at 20 % slope or more (§ 540-7B(3)(c)[3])" in page
    page = _html(site_map(results, "A", layers=layer_set_obj, steep=steep.assign(threshold_pct=15.0)))
    assert "Land at 15 % slope or more" in page and "Land at 20 %" not in page


# ----- legends name what is drawn; the overview orients a reviewer --------------------------


def _drawn_and_legend(m) -> tuple[list[str], list[str]]:
    """The overlay layers on the map (as the layer control lists them) and the legend's entries."""
    import html

    import folium

    drawn = [
        c.layer_name
        for c in m._children.values()
        if isinstance(c, folium.map.Layer) and c.overlay and not isinstance(c, folium.TileLayer)
    ]
    legend = [html.unescape(v) for v in re.findall(r"data-layer='([^']*)'", _html(m))]
    return drawn, legend


def test_site_map_legend_lists_exactly_the_layers_drawn(results, layer_set_obj):
    import geopandas as gpd

    # Site A is 1,600 ft from the lake: no water, no protective area, no steep land, no disturbance.
    drawn, legend = _drawn_and_legend(site_map(results, "A", layers=layer_set_obj))
    assert sorted(drawn) == sorted(legend) == ["Site", "Village boundary"]
    # The XSS site is by the lake: its water and protective area are drawn, and so named.
    steep = gpd.GeoDataFrame({"threshold_pct": [20.0]}, geometry=[box(1765, 110, 1770, 115)], crs=results.crs)
    disturbed = gpd.GeoDataFrame({"site_id": [XSS]}, geometry=[box(1765, 105, 1785, 145)], crs=results.crs)
    drawn, legend = _drawn_and_legend(site_map(results, XSS, layers=layer_set_obj, steep=steep, disturbed=disturbed))
    assert sorted(drawn) == sorted(legend)
    assert {"Waters of the state", "Protective areas (NR 151.125 widths)", "Disturbed limits"} <= set(legend)
    assert any(n.startswith("Land at 20 %") for n in legend)
    # Without a layer set: only the site, and no boundary, water or protective entry.
    drawn, legend = _drawn_and_legend(site_map(results, "A"))
    assert drawn == legend == ["Site"]


def test_overview_draws_the_waters_labels_sites_and_lists_only_classes_present(results, layer_set_obj):
    m = overview_map(results, layers=layer_set_obj)
    drawn, legend = _drawn_and_legend(m)
    assert sorted(drawn) == sorted(legend)
    assert "Waters of the state" in drawn and "Village boundary" in drawn
    page = _html(m)
    assert "Test Lake" in page  # the lake's name is its tooltip
    assert (
        "const labelZoom = 16, labelFew = 30;" in page
        and '"lp":[' in page
        and "Site ids show from zoom 16, or when 30 or fewer of a class are in view." in page
    )
    # One class present: one class in the legend, none of the others.
    only_a = results[results["site_id"] == "A"]
    drawn, legend = _drawn_and_legend(overview_map(only_a, layers=layer_set_obj))
    assert sorted(legend) == sorted(drawn) == ["Permit required (1)", "Village boundary"]  # the lake is far off
    assert "Not required" not in _html(overview_map(only_a, layers=layer_set_obj)).split("esc-legend")[1]


def test_overview_reads_results_in_degrees(results, layer_set_obj):
    # A screening read back from GeoJSON is in EPSG:4326; the waters are still framed in feet.
    drawn, _ = _drawn_and_legend(overview_map(results.to_crs("EPSG:4326"), layers=layer_set_obj))
    assert "Waters of the state" in drawn


_LABELS_JS = """async (views) => {
  const m = Object.values(window).find(v => v instanceof L.Map);
  const count = () => { let n = 0; m.eachLayer(l => { if (l.escSites) n += l.escLabels || 0; }); return n; };
  const got = [];
  for (const [lat, lng, zoom] of views) {
    await new Promise(done => { m.once('moveend', done); m.setView([lat, lng], zoom, {animate: false}); });
    got.push(count());
  }
  return got;
}"""


def test_overview_labels_sites_only_when_zoomed_in(results, layer_set_obj, tmp_path):
    path = write_map(overview_map(results, layers=layer_set_obj), tmp_path / "ov.html")
    with chromium_page() as (page, errors, _):
        _load(page, path)
        lat, lng = _inside_point(results, "A")
        far, near = page.evaluate(_LABELS_JS, [[lat, lng, 13], [lat, lng, 18]])
        assert far == len(results)  # a few sites: labelled even at a whole village's zoom
        assert 1 <= near < 4  # zoomed on A: A labelled, not the sites out of view
        assert real_errors(errors) == []


def test_overview_labels_many_sites_only_when_zoomed_in(results, layer_set_obj, tmp_path):
    # 40 copies of site A, 60 ft apart: more than 30 of one class in view.
    a = results[results["site_id"] == "A"]
    many = pd.concat(
        [a.assign(site_id=f"A{k}", geometry=a.geometry.translate(60.0 * (k % 8), 60.0 * (k // 8))) for k in range(40)],
        ignore_index=True,
    )
    path = write_map(overview_map(many, layers=layer_set_obj), tmp_path / "many.html")
    with chromium_page() as (page, errors, _):
        _load(page, path)
        lat, lng = _inside_point(many, "A0")
        far, near = page.evaluate(_LABELS_JS, [[lat, lng, 15], [lat, lng, 19]])
        assert far == 0  # below zoom 16 with 40 in view: no labels
        assert near == 40  # zoomed in: all 40 are labelled (they fit in the view at zoom 19)
        assert real_errors(errors) == []
