"""Every HTML output is a Jinja2 template with autoescaping on (issue 37): no hand-called escape,
no HTML built in f-strings, and a value such as ``<script>alert(1)</script>`` or ``&`` comes out
as text in each of them: the plan-review report, a permit's inspection reports, the inspection
log, the office summary, the maps' popups, legends and notes, and the service's page.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
import sys
from datetime import date, datetime, timezone
from pathlib import Path

import geopandas as gpd
import jinja2
import pytest

from esc_gis import screen
from esc_gis._templates import environment, render_string
from esc_gis.profile import load_profile

from .conftest import CRS, add_active, box, sites, square_sqft

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "esc_gis"
#: A value that must come out as text: markup, and an ampersand.
XSS = "<script>alert(1)</script> & co"
#: ... as the pages write it (the environment's escaping: markupsafe's).
SHOWN = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"
#: ... and as JSON in a <script> element writes it (tojson).
IN_JSON = "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e \\u0026 co"
#: Modules that escape text for a format that is not HTML (with the reason).
NOT_HTML = {
    # A GDAL VRT is XML; xml.sax.saxutils would import urllib, 80 ms of every CLI start.
    "terrain/dem.py",
}
#: An HTML element's opening or closing tag.
TAG = re.compile(r"<(/?)(div|table|tr|td|th|p|span|b|i|br|ul|ol|li|h[1-6]|img|figure|iframe|article|body)\b", re.I)


# --- The environment ----------------------------------------------------------------------------


def test_the_environment_escapes_every_template_and_refuses_an_undefined_name() -> None:
    env = environment()
    assert env.autoescape is True
    assert env.undefined is jinja2.StrictUndefined
    assert render_string("<p>{{ x }}</p>", x=XSS) == f"<p>{SHOWN}</p>"
    assert render_string("<script>const v = {{ x|tojson }};</script>", x=XSS) == (
        f'<script>const v = "{IN_JSON}";</script>'
    )
    with pytest.raises(jinja2.UndefinedError):
        render_string("<p>{{ misspelt }}</p>")


def test_every_template_compiles_and_is_package_data() -> None:
    """A template the wheel would leave out (a name no package-data glob matches) fails here, not in an office."""
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"][
        "esc_gis"
    ]
    names = environment().list_templates()
    assert len(names) >= 10
    for name in names:
        environment().get_template(name)
        assert any(fnmatch.fnmatch(f"templates/{name}", g) for g in globs), name


# --- No HTML by hand ----------------------------------------------------------------------------


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (p.relative_to(PACKAGE).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(PACKAGE.rglob("*.py"))
    ]


def _escapes(tree: ast.Module) -> list[int]:
    """Lines that call html.escape or markupsafe's escape (by any import of them)."""
    names: set[str] = set()  # local names bound to an HTML escape
    modules: set[str] = set()  # local names of the html / markupsafe modules
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("html", "markupsafe"):
            names |= {a.asname or a.name for a in node.names if a.name in ("escape", "escape_silent")}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name in ("html", "markupsafe")}
    hits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in names:
            hits.append(node.lineno)
        elif isinstance(f, ast.Attribute) and f.attr in ("escape", "escape_silent"):
            owner = f.value
            if isinstance(owner, ast.Name) and (owner.id in modules or owner.id == "Markup"):
                hits.append(node.lineno)
    return hits


def test_no_module_escapes_html_by_hand() -> None:
    """HTML is escaped by the template environment only: a hand-called escape is a page built by hand."""
    found = {name: lines for name, tree in _modules() if (lines := _escapes(tree)) and name not in NOT_HTML}
    assert found == {}
    # The check sees the forms it forbids.
    for src in ("import html\nhtml.escape(x)", "from markupsafe import escape as e\ne(x)", "Markup.escape(x)"):
        assert _escapes(ast.parse(src)) == [len(src.splitlines())], src


def test_no_module_builds_html_in_an_f_string() -> None:
    found = [
        f"{name}:{node.lineno}"
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        and TAG.search("".join(v.value for v in node.values if isinstance(v, ast.Constant)))
    ]
    assert found == []


# --- Every output escapes what it is given ------------------------------------------------------


def _assert_escaped(page: str, *, json_too: bool = False) -> None:
    assert "<script>alert(1)" not in page
    assert SHOWN in page or (json_too and IN_JSON in page)


def test_plan_review_report_escapes_the_package_text() -> None:
    from esc_gis.errors import Problem
    from esc_gis.review.checks import Check
    from esc_gis.review.plan import Review
    from esc_gis.review.report import render_report

    checks = [
        Check("plan_item_1", f"Landowner {XSS}", "§ 540-9A(1)", "ordinance", "fail", f"phone {XSS}"),
        Check("perimeter", "Perimeter", "§ 540-7B(1)", "policy", "fail", XSS, policy=("policy.review_bmp_reach",)),
    ]
    review = Review(
        source=f"/somewhere/{XSS}",
        verdict="disapprove",
        checks=checks,
        problems=[Problem("plan.toml", None, f"says {XSS}", "fix it")],
        facts={"plan": {"title": XSS}},
        profile=load_profile(),
    )
    page = render_report(review, map_html=f"<!DOCTYPE html><p title='{XSS}'>map</p>")
    _assert_escaped(page)
    assert f"<title>Plan review: {SHOWN}</title>" in page
    assert page.count(SHOWN) >= 6  # title twice, the item, its finding, the reason, the advisory, the problem
    # The map is a whole document in an attribute: escaped as an attribute value, quotes too.
    assert 'srcdoc="&lt;!DOCTYPE html&gt;&lt;p title=&#39;&lt;script&gt;' in page


@pytest.fixture
def target(tmp_path: Path) -> str:
    """A GeoPackage registry (conftest's ``reg`` on one back end: escaping is not the store's business)."""
    return str(tmp_path / "permits.gpkg")


def test_inspection_reports_log_and_summary_escape_what_the_office_typed(reg, tmp_path: Path) -> None:
    from esc_gis.registry.domain.inspections import InspectionReport
    from esc_gis.registry.views.reports import log_html, log_rows, permit_report_html
    from esc_gis.registry.views.summary import SummaryRow, write_summary

    number = add_active(reg, address=f"1 {XSS} St")
    at = datetime(2026, 11, 16, 15, 30, tzinfo=timezone.utc)
    reg.inspect(
        number,
        InspectionReport(at, f"Pat {XSS}", f"fence {XSS}", work_done=XSS, phase=XSS, deficiencies=[XSS]),
        who="ina",
    )
    permit = reg.get(number)
    page = permit_report_html(permit, permit.reports, profile=reg.profile, crs=reg.crs, photos={})
    _assert_escaped(page)
    assert f"<tr><th>Inspector</th><td>Pat {SHOWN}</td></tr>" in page and f"<td>{SHOWN}</td>" in page
    log = log_html(log_rows(reg.permits(), None, None, reg.profile), None, None, profile=reg.profile)
    _assert_escaped(log)
    assert f"<td>1 {SHOWN} St</td>" in log and f"<td>fence {SHOWN}</td>" in log
    out = tmp_path / "summary.html"
    row = SummaryRow(XSS, XSS, 1)
    write_summary([row], out, start=date(2026, 11, 1), end=date(2026, 11, 30), profile=reg.profile)
    summary = out.read_text(encoding="utf-8")
    _assert_escaped(summary)
    assert f"<tr><td>{SHOWN}</td>" in summary


@pytest.fixture(scope="module")
def results(layers_path):
    rows = [
        {"site_id": XSS, "name": XSS, "geometry": box(100, 100, 180, 160)},
        {"site_id": "B", "name": "Shed", "geometry": box(300, 300, 320, 320)},
    ]
    return screen(sites(rows), layers=layers_path)


def test_site_map_popups_tooltips_and_legend_escape_the_site(results) -> None:
    from esc_gis.maps import site_map

    page = site_map(results, XSS, basemap="none").get_root().render()
    _assert_escaped(page)
    # Popups and tooltips are GeoJSON properties (folium writes them as JSON, then inserts them as HTML).
    props = [json.loads(f'"{v}"') for v in re.findall(r'"(?:info|tip)": "((?:[^"\\]|\\.)*)"', page)]
    assert props[-2].startswith(f"<b>{SHOWN}</b> - {SHOWN}<br>") and props[-1] == SHOWN  # the site's popup, tooltip
    assert not [p for p in props if "<script>" in p]
    assert f"<b>Site {SHOWN}</b>" in page  # the legend's title


def test_overview_puts_ids_in_its_data_as_json_and_the_legend_as_text(results) -> None:
    from esc_gis.maps import overview_map

    page = overview_map(results, basemap="none").get_root().render()
    _assert_escaped(page, json_too=True)
    assert IN_JSON in page  # the compact layer's data (tojson); the browser shows it with textContent
    assert page.count("function escCompactPolygons(") == 1  # compact.js, once however many layers


def test_public_map_escapes_the_address_and_the_contact() -> None:
    from esc_gis.maps.public import public_permit_map

    permits = gpd.GeoDataFrame(
        {
            "permit_number": [f"ESC-{XSS}"],
            "site_address": [f"1 {XSS} St"],
            "disturbed_acres": [0.2],
            "status": ["active"],
            "expires_on": [date(2027, 3, 19)],
        },
        geometry=[square_sqft(100, 100, 8000)],
        crs=CRS,
    )
    at = datetime(2026, 11, 30, 9, 15, tzinfo=timezone.utc)
    page = public_permit_map(permits, as_of=at, contact=XSS, basemap="none").get_root().render()
    _assert_escaped(page, json_too=True)
    assert f"Questions: {SHOWN}</div>" in page  # the note, as HTML text
    assert f'"1 {IN_JSON} St"' in page and f'"Questions: {IN_JSON}"' in page  # the popup lines, as JSON


def test_service_page_and_credit_escape_the_village() -> None:
    from esc_gis.serve.app import page_html
    from esc_gis.serve.config import basemap_credit

    page = page_html({"village": XSS, "api": "ogc"})
    _assert_escaped(page)
    assert f"<title>{SHOWN}: erosion-control permits" in page
    assert f'"village":"{IN_JSON}"' in page  # the settings island (JSON, not HTML)
    assert basemap_credit("https://a&b.example/{z}/{x}/{y}.png") == "Base map: a&amp;b.example"
