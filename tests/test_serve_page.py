"""The public page of ``esc-gis serve`` in real headless Chromium: the live permit map, "Do I need a permit?".

A real ``esc-gis serve`` (tests/service.py) serves a GeoPackage registry of five permits inside
the Village (four active, one under a stop-work order); Debian's Chromium, driven by Playwright,
loads the page, draws a site by clicking the map, pastes GeoJSON from the keyboard, and reads the
answer as a resident would. Every request the page makes must stay on 127.0.0.1 (``--basemap
none``), and it must run under its own strict Content-Security-Policy with no console error.

Set ESC_GIS_SCREENSHOTS=1 to write docs/img/serve-page.png (the README's picture) from
:func:`test_the_area_to_be_disturbed_is_screened_not_the_whole_site`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import geopandas as gpd
import numpy as np
import pytest
import shapely
from playwright import sync_api
from pyproj import Transformer

from esc_gis.maps.public import PUBLIC_STATUS
from esc_gis.registry.store.schema import PUBLIC_VIEW

from .browser import ROOT, chromium_browser
from .service import CRS, ORIGIN, PENDING_ADDRESS, fill_registry, get, pg_schema, post_screen, public_login, served

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOT = ROOT / "docs" / "img" / "serve-page.png"
TO_LONLAT = Transformer.from_crs(CRS, "OGC:CRS84", always_xy=True)
#: A 650 x 300 ft site around the first two permits (tests/service.py box(0), box(1)): 195,000 sq ft.
SITE_FT = (ORIGIN[0] - 100, ORIGIN[1] - 100, ORIGIN[0] + 550, ORIGIN[1] + 200)
SITE_SQFT = 650 * 300
#: A site in Milwaukee, 130 km from the Village: far outside it.
FAR_AWAY = {
    "type": "Polygon",
    "coordinates": [[[-87.91, 43.04], [-87.909, 43.04], [-87.909, 43.041], [-87.91, 43.041], [-87.91, 43.04]]],
}


def lonlat(geom: shapely.Geometry) -> shapely.Geometry:
    """A geometry in WISCRS feet, as GeoJSON's longitude/latitude."""
    return shapely.transform(geom, lambda xy: np.column_stack(TO_LONLAT.transform(xy[:, 0], xy[:, 1])))


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("page") / "r.gpkg")
    fill_registry(path)
    return path


@pytest.fixture(scope="module")
def base(registry: str) -> Iterator[str]:
    with served(registry) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium_browser() as b:
        yield b


class Visit:
    """A page of the service in a fresh browser context, with what it logged and requested."""

    def __init__(self, browser: sync_api.Browser, base: str, *, bypass_csp: bool = False) -> None:
        self.base = base
        self.errors: list[str] = []
        self.requested: list[str] = []
        self.left: list[str] = []
        self.context = browser.new_context(viewport={"width": 1100, "height": 760}, bypass_csp=bypass_csp)
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

    def _route(self, route: sync_api.Route) -> None:
        url = route.request.url
        self.requested.append(url)
        if urlsplit(url).hostname == "127.0.0.1":
            route.continue_()
        else:  # nothing may leave the machine: no CDN, no tiles, no fonts
            self.left.append(url)
            route.abort()

    def open(self) -> sync_api.Page:
        self.page.goto(f"{self.base}/")
        self.page.wait_for_selector("body[data-ready=true]", timeout=30_000)
        return self.page

    def answer(self) -> str:
        """Submit the form; wait for the answer or the error; return the answer's text."""
        self.page.locator("#screen-button").click()
        return self.wait_answer()

    def wait_answer(self) -> str:
        self.page.wait_for_selector("#answer h3, #error h3", timeout=60_000)
        return self.page.locator("#answer").inner_text()


@pytest.fixture
def visit(browser: sync_api.Browser, base: str) -> Iterator[Visit]:
    v = Visit(browser, base)
    yield v
    v.context.close()


def legend_counts(page: sync_api.Page) -> dict[str, int]:
    return {
        c.get_attribute("data-status"): int(c.inner_text()) for c in page.locator("#legend .count[data-status]").all()
    }


def test_page_loads_the_permits_under_its_policy_with_no_request_leaving(visit: Visit, registry: str) -> None:
    page = visit.open()
    assert visit.errors == []
    assert visit.left == []
    assert any(u.endswith("/ogc/collections/permits/items?f=json&limit=1000") for u in visit.requested)
    status, headers, _ = get(f"{visit.base}/")
    assert status == 200
    assert "script-src 'self'" in headers["Content-Security-Policy"]  # the policy the page ran under
    # tests/service.py: five permits, the fifth under a stop-work order; all of them public.
    view = gpd.read_file(registry, layer=PUBLIC_VIEW)
    public = view[view["status"].isin(list(PUBLIC_STATUS))]
    assert len(public) == 5
    counts = legend_counts(page)
    assert counts == {"active": 4, "extended": 0, "stop_work": 1, "suspended": 0}
    assert sum(counts.values()) == len(public)
    assert page.locator("#permit-table tbody tr").count() == 5
    assert PENDING_ADDRESS not in page.locator("#permit-table").inner_text()  # an application is not public
    assert "5 permits are on the map" in page.locator("#map-status").inner_text()
    # On the map: one shape per permit, in its status's colour (the other layers take no clicks).
    fills = page.eval_on_selector_all("path.leaflet-interactive", "ps => ps.map(p => p.getAttribute('fill'))")
    assert sorted(fills) == sorted([PUBLIC_STATUS["active"][1]] * 4 + [PUBLIC_STATUS["stop_work"][1]])
    assert page.locator("html").get_attribute("lang") == "en"
    assert page.locator("#map").get_attribute("aria-label")
    # The waters, two collections of one geometry type each: both loaded, each in the legend with its
    # own swatch (page.css): the streams' a line, the lakes' and wetlands' a filled area.
    for name in ("waters_lines", "waters_polygons"):
        assert any(u.endswith(f"/ogc/collections/{name}/items?f=json&limit=1000") for u in visit.requested), name
        assert page.locator(f"#legend-layers .sw-{name}").count() == 1, name
    style = "e => ((s) => [s.backgroundColor, s.borderTopStyle, s.borderBottomWidth])(getComputedStyle(e))"
    assert page.eval_on_selector("#legend-layers .sw-waters_lines", style) == ["rgba(0, 0, 0, 0)", "none", "3px"]
    assert page.eval_on_selector("#legend-layers .sw-waters_polygons", style)[0] == "rgb(107, 174, 214)"


def test_a_permit_opens_its_popup(visit: Visit) -> None:
    page = visit.open()
    centre = lonlat(shapely.Point(ORIGIN[0] + 75, ORIGIN[1] + 50))  # tests/service.py box(0)
    page.evaluate("ll => escGis.map.setView(ll, 18, {animate: false})", [centre.y, centre.x])
    box = page.locator("#map").bounding_box()
    pt = page.evaluate("ll => escGis.map.latLngToContainerPoint(ll)", [centre.y, centre.x])
    page.mouse.click(box["x"] + pt["x"], box["y"] + pt["y"])
    text = page.locator(".leaflet-popup-content").inner_text()
    assert "Permit ESC-2026-0001" in text
    assert "100 Example St" in text
    assert "Active" in text
    assert "2027-05-02" in text  # expires_on, as the view gives it
    assert visit.errors == []


def click_corners(page: sync_api.Page, corners: list[tuple[float, float]]) -> None:
    """Click the map at each (lon, lat)."""
    box = page.locator("#map").bounding_box()
    for lon, lat in corners:
        pt = page.evaluate("ll => escGis.map.latLngToContainerPoint(ll)", [lat, lon])
        page.mouse.click(box["x"] + pt["x"], box["y"] + pt["y"])


def test_drawn_site_needs_a_permit(visit: Visit) -> None:
    page = visit.open()
    site = lonlat(shapely.box(*SITE_FT))
    w, s, e, n = site.bounds
    page.evaluate("b => escGis.map.fitBounds(b, {padding: [90, 90], animate: false})", [[s, w], [n, e]])
    corners = [(w, s), (e, s), (e, n), (w, n)]
    page.get_by_role("button", name="Draw the site on the map").click()
    click_corners(page, [*corners, ((w + e) / 2, n + (n - s))])  # and one stray corner,
    page.locator("#site-fields button[data-draw=undo]").click()  # taken back
    assert "4 corners" in page.locator("#draw-status").inner_text()
    click_corners(page, corners[:1])  # the first corner again closes the shape
    drawn = json.loads(page.locator("#site-text").input_value())
    assert drawn["type"] == "Polygon"
    assert len(drawn["coordinates"][0]) == 5
    assert shapely.Polygon(drawn["coordinates"][0]).exterior.is_ccw  # RFC 7946's winding

    text = visit.answer()
    assert page.locator("#answer-headline").inner_text() == "A permit is required"
    assert "not a permit decision" in text
    findings = page.locator("#answer .findings.decision li").all_inner_texts()
    assert any("§ 540-4A(1)(a)" in f and "4,000 sq ft or more" in f for f in findings)
    assert all(re.search(r"§ 540-\d", f) and "based on" in f for f in findings)
    measured = page.locator("#answer table.measured tr").filter(has_text="Land to be disturbed").inner_text()
    sqft = float(re.search(r"([\d,]+) sq ft", measured).group(1).replace(",", ""))
    assert sqft == pytest.approx(SITE_SQFT, rel=0.01)  # drawn to the pixel, a fraction of a foot
    # The page shows the process's answer for the geometry it sent.
    status, _, answer = post_screen(visit.base, drawn)
    assert status == 200
    assert [f["message"] for f in answer["findings"]] == [t.split("\n")[0] for t in findings]
    # The map of what was measured: the site in view, among every layer it was measured against.
    assert page.evaluate("b => escGis.map.getBounds().contains(b)", [[s, w], [n, e]])
    checked = page.eval_on_selector_all(
        ".leaflet-control-layers-overlays label",
        "ls => ls.map(l => [l.textContent.trim(), l.querySelector('input').checked])",
    )
    layer_titles = [t for t, _ in checked if t not in ("The site you give", "The area to be disturbed")]
    assert len(layer_titles) >= 4
    assert all(on for _, on in checked)
    assert visit.errors == []
    assert visit.left == []


def test_drawing_finishes_by_enter_or_the_finish_button_and_a_file_is_read(visit: Visit, tmp_path: Path) -> None:
    page = visit.open()
    site = lonlat(shapely.box(*SITE_FT))
    w, s, e, n = site.bounds
    page.evaluate("b => escGis.map.fitBounds(b, {padding: [90, 90], animate: false})", [[s, w], [n, e]])
    text = page.locator("#site-text")
    start = page.get_by_role("button", name="Draw the site on the map")
    finish = page.locator("#site-fields button[data-draw=finish]")
    start.click()
    assert start.get_attribute("aria-pressed") == "true"
    click_corners(page, [(w, s), (e, s)])
    assert finish.is_disabled()  # two corners are no area
    click_corners(page, [(e, n)])
    page.keyboard.press("Enter")
    assert len(json.loads(text.input_value())["coordinates"][0]) == 4  # a triangle, closed
    assert start.get_attribute("aria-pressed") == "false"
    start.click()
    click_corners(page, [(w, s), (e, s), (e, n), (w, n)])
    finish.click()
    assert len(json.loads(text.input_value())["coordinates"][0]) == 5
    page.locator("#site-fields button[data-draw=clear]").click()
    assert text.input_value() == ""
    # An uploaded file is read in the browser into the text box, and screened from there.
    path = tmp_path / "site.geojson"
    feature = {"type": "Feature", "properties": {}, "geometry": shapely.geometry.mapping(site)}
    path.write_text(json.dumps({"type": "FeatureCollection", "features": [feature]}), encoding="utf-8")
    page.locator("#site-file").set_input_files(str(path))
    sync_api.expect(page.locator("#draw-status")).to_contain_text("read from site.geojson")
    assert json.loads(text.input_value())["features"][0]["geometry"]["type"] == "Polygon"
    visit.answer()
    assert page.locator("#answer-headline").inner_text() == "A permit is required"
    assert visit.errors == []


def test_the_area_to_be_disturbed_is_screened_not_the_whole_site(visit: Visit) -> None:
    page = visit.open()
    # Across the illustrative perennial stream of the demo layer set (y = 504,560 ft) and its
    # protective area: a 700 x 500 ft site, of which 450 x 300 ft = 135,000 sq ft is disturbed.
    site = shapely.box(745_000, 504_300, 745_700, 504_800)
    disturbed = shapely.box(745_050, 504_350, 745_500, 504_650)
    page.locator("#site-text").fill(json.dumps(shapely.geometry.mapping(lonlat(site))))
    page.locator("#disturbed-part").check()
    page.locator("#disturbed-text").fill(json.dumps(shapely.geometry.mapping(lonlat(disturbed))))
    visit.answer()
    assert page.locator("#answer-headline").inner_text() == "A permit is required"
    rows = dict(r.split("\t", 1) for r in page.locator("#answer table.measured tr").all_inner_texts())
    assert rows["Land to be disturbed"].startswith("135,001 sq ft (3.099 acres)")  # 135,000 to the foot
    # The part inside, read under its neutral name (disturbed_in_jurisdiction_sqft): all of it here.
    inside = [v for k, v in rows.items() if k.startswith("Disturbed inside the ")]
    assert len(inside) == 1 and inside[0].startswith("135,001 sq ft"), rows
    assert rows["Disturbed inside protective areas"] != "0 sq ft (0 acres)"
    assert rows["Nearest water, from the disturbance"] == "0 ft"  # the stream crosses it
    # Both shapes are on the map, the site beneath the area to be disturbed.
    assert page.locator(".leaflet-overlay-pane path[stroke='#c51b7d']").count() == 1
    assert visit.errors == []
    assert visit.left == []
    if os.environ.get("ESC_GIS_SCREENSHOTS") == "1":  # the README's picture
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.locator("#answer").evaluate("a => a.scrollIntoView()")  # the map stays in view beside it
        page.screenshot(path=str(SCREENSHOT))
        assert SCREENSHOT.stat().st_size < 200_000


def test_a_site_far_outside_the_village_gets_does_not_apply(visit: Visit) -> None:
    page = visit.open()
    page.locator("#site-text").fill(json.dumps(FAR_AWAY))
    text = visit.answer()
    assert page.locator("#answer-headline").inner_text() == "The ordinance does not apply here"
    assert "not measured" in text
    assert page.locator("#error").inner_text() == ""


def test_a_site_in_the_extraterritorial_area_is_told_it_is_a_reading(visit: Visit) -> None:
    """§ 540-5 EXTRATERRITORIAL ("within 1.5 miles of a ... Village") is defined but never used: 2,100 ft outside,
    "does not apply" is a reading, and the headline says so (the finding's basis is shown in words)."""
    from esc_gis.layers import load_layers
    from esc_gis.profile import load_profile

    from .service import DEMO_LAYERS

    ring = shapely.get_coordinates(load_layers(DEMO_LAYERS, profile=load_profile()).jurisdiction)
    x, y = ring[np.argmax(ring[:, 0])]
    page = visit.open()
    site = lonlat(shapely.box(x + 2100, y - 50, x + 2200, y + 50))  # its west edge 2,100 ft east of the Village
    page.locator("#site-text").fill(json.dumps(shapely.geometry.mapping(site)))
    visit.answer()
    headline = page.locator("#answer-headline").inner_text()
    assert headline == "The ordinance does not apply here, on a reading of the ordinance"
    decision = page.locator("#answer .findings.decision").inner_text()
    assert "2,100 ft outside" in decision and "an interpretation" in decision
    assert visit.errors == []


def test_the_activity_chosen_is_screened(visit: Visit) -> None:
    page = visit.open()
    about = page.locator("#activity-about")
    assert page.locator("#activity").input_value() == "construction"  # the default
    page.locator("#activity").select_option("silviculture")
    assert about.inner_text().startswith("silviculture: tree nursery")  # the profile's words
    page.locator("#site-text").fill(json.dumps(shapely.geometry.mapping(lonlat(shapely.box(*SITE_FT)))))
    visit.answer()
    # "This article does not apply to ... Nonpoint discharges from silviculture activities." (§ 540-4A(2)(b))
    assert page.locator("#answer-headline").inner_text() == "The ordinance does not apply to this activity"
    assert "§ 540-4A(2)(b)" in page.locator("#answer .findings.decision").inner_text()


def test_bad_geojson_gets_a_readable_message(visit: Visit) -> None:
    page = visit.open()
    error = page.locator("#error")
    assert error.get_attribute("role") == "alert"
    page.locator("#site-text").fill("{not json")
    page.locator("#screen-button").click()
    assert "is not JSON" in error.inner_text()
    line = {"type": "LineString", "coordinates": [[-88.72, 44.11], [-88.71, 44.11]]}
    page.locator("#site-text").fill(json.dumps(line))
    page.locator("#screen-button").click()
    sync_api.expect(error).to_contain_text("only Polygon and MultiPolygon are screened", timeout=60_000)
    bowtie = {
        "type": "Polygon",
        "coordinates": [[[-88.72, 44.11], [-88.71, 44.111], [-88.71, 44.11], [-88.72, 44.111], [-88.72, 44.11]]],
    }
    page.locator("#site-text").fill(json.dumps(bowtie))
    page.locator("#screen-button").click()
    sync_api.expect(error).to_contain_text("not a valid polygon", timeout=60_000)
    assert "Error executing process" not in error.inner_text()  # pygeoapi's wording, taken off
    assert page.locator("#answer").inner_text() == ""
    # Chromium logs each 400 answer as a failed resource; nothing else may be logged.
    assert [e for e in visit.errors if "status of 400" not in e] == []


def _tab_to(page, element_id: str, what: str, presses: int) -> None:
    """Press Tab until the element ``element_id`` has the focus, at most ``presses`` times."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == element_id:
            return
    pytest.fail(f"Tab never reached {what}")


def test_keyboard_only(visit: Visit) -> None:
    page = visit.open()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to the content"
    _tab_to(page, "site-text", "the GeoJSON text box", 60)
    site = lonlat(shapely.box(*SITE_FT))
    page.keyboard.type(json.dumps(shapely.geometry.mapping(site)))
    _tab_to(page, "screen-button", "the Screen button", 20)
    page.keyboard.press("Enter")
    visit.wait_answer()
    assert page.locator("#answer-headline").inner_text() == "A permit is required"
    assert page.evaluate("document.activeElement.id") == "answer"  # the answer is read next
    assert visit.errors == []


def test_no_serious_accessibility_violation(browser: sync_api.Browser, base: str) -> None:
    if not AXE.is_file():
        msg = "node_modules/axe-core is not installed (run npm ci); .ci/run installs it"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: a missing part is a failure here.")
        pytest.skip(msg)
    # axe is injected as an inline script, which the page's own policy rightly refuses: this
    # test alone runs without it (the others run under it).
    v = Visit(browser, base, bypass_csp=True)
    try:
        page = v.open()
        page.locator("#site-text").fill(json.dumps(shapely.geometry.mapping(lonlat(shapely.box(*SITE_FT)))))
        v.answer()
        page.add_script_tag(path=str(AXE))
        result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        bad = [
            f"{r['id']} ({r['impact']}): {r['help']} at {[n['target'] for n in r['nodes']][:3]}"
            for r in result["violations"]
            if r["impact"] in ("serious", "critical")
        ]
        assert bad == []
        assert v.left == []
    finally:
        v.context.close()


def test_postgis_page_smoke(browser: sync_api.Browser, pg_url: str, tmp_path: Path) -> None:
    target = pg_schema(pg_url)
    fill_registry(target)
    with public_login(target) as login, served(login) as url:
        v = Visit(browser, url)
        try:
            page = v.open()
            assert legend_counts(page) == {"active": 4, "extended": 0, "stop_work": 1, "suspended": 0}
            assert v.errors == []
            assert v.left == []
        finally:
            v.context.close()


def test_a_basemap_loads_its_tiles_under_the_policy(browser: sync_api.Browser, registry: str) -> None:
    # Tiles are the one thing the page may fetch from elsewhere (the policy's img-src names their
    # host); here they are requested and refused at the browser, as on a machine with no network.
    # The "&" travels HTML-escaped in the page's settings: the tiles' URLs must have it back.
    with served(registry, "--basemap", "https://tile.openstreetmap.org/{z}/{x}/{y}.png?a=1&b=2") as url:
        v = Visit(browser, url)
        try:
            page = v.open()
            assert v.left and all(u.startswith("https://tile.openstreetmap.org/") for u in v.left)
            assert all(u.endswith(".png?a=1&b=2") for u in v.left)
            assert "OpenStreetMap" in page.locator(".leaflet-control-attribution").inner_text()
            assert [e for e in v.errors if "ERR_FAILED" not in e] == []  # no refusal by the page's policy
        finally:
            v.context.close()
