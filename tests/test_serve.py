"""``esc-gis serve``: the screening process answers as ``esc-gis screen`` does, bounded; the collections
publish the public view only; the endpoint is safe to face the public. On both back ends.

The service is a real ``esc-gis serve`` process on loopback (tests/service.py); the request
bounds and the guard are also tested in-process, where their edges are cheap to pin.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from datetime import date
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
import shapely.geometry
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import RegistryError, RequestError
from esc_gis.layers import load_layers
from esc_gis.profile import load_profile
from esc_gis.screening import screen
from esc_gis.serve.app import Guard
from esc_gis.serve.config import PERMIT_PROPERTIES, ServiceSettings, check_public_login, prepare_service
from esc_gis.serve.screen_request import Limits, parse_request, screen_request

from .service import (
    CRS,
    DEMO_LAYERS,
    PENDING_ADDRESS,
    SECRETS,
    fill_registry,
    get,
    pg_schema,
    post_screen,
    public_login,
    served,
)

PROFILE = load_profile()


@pytest.fixture(scope="module")
def demo_layers():
    return load_layers(DEMO_LAYERS, profile=PROFILE)


def lonlat(geom: shapely.Geometry) -> dict:
    """``geom`` (WISCRS feet) as a GeoJSON geometry in longitude/latitude, as a browser sends it."""
    g = gpd.GeoSeries([geom], crs=CRS).to_crs("OGC:CRS84").iloc[0]
    return json.loads(json.dumps(shapely.geometry.mapping(g)))  # full precision, as JSON.stringify sends


def square(x: float, y: float, side_ft: float) -> shapely.Polygon:
    return shapely.box(x, y, x + side_ft, y + side_ft)


#: Sites in WISCRS feet on the demo layer set: inside the Village (large and small), across
#: its line, and outside it.
INSIDE = (744_700.0, 503_200.0)
SITES = {
    "required": square(*INSIDE, 100.0),  # 10,000 sq ft
    "not_required": square(*INSIDE, 50.0),  # 2,500 sq ft
    "acre": square(*INSIDE, 220.0),  # 48,400 sq ft: the sediment standard too
}


# --- The answer is the command line's -------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SITES))
def test_screening_answer_equals_esc_gis_screen(name, demo_layers, tmp_path):
    """§ 540-4A(1)(a) "4,000 square feet or more" and the rest, decided by the same engine: the
    service's answer for a geometry is the command line's for the same geometry, finding for finding."""
    site = lonlat(SITES[name])
    answer = screen_request({"site": site}, layers=demo_layers, profile=PROFILE, limits=Limits())
    src = tmp_path / "site.geojson"
    src.write_text(
        json.dumps(
            {
                "type": "FeatureCollection",
                "features": [{"type": "Feature", "properties": {"site_id": "site"}, "geometry": site}],
            }
        )
    )
    out = tmp_path / "out.geojson"
    res = CliRunner().invoke(cli, ["screen", str(src), "--layers", str(DEMO_LAYERS), "-o", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    row = gpd.read_file(out).iloc[0]
    assert answer["permit"] == row["permit"] == ("required" if name != "not_required" else "not_required")
    assert answer["findings"] == json.loads(row["findings"])
    assert answer["measured"]["disturbed_sqft"] == pytest.approx(row["disturbed_sqft"], rel=1e-9)
    assert answer["sediment_standard"] is (name == "acre")


@pytest.mark.parametrize(
    ("site", "disturbed", "activity", "permit"),
    [
        ("required", "not_required", None, "not_required"),  # 10,000 sq ft site, 2,500 sq ft disturbed
        ("acre", "required", "construction", "required"),  # 48,400 sq ft site, 10,000 sq ft disturbed
        ("acre", None, "agricultural_activity", "not_applicable"),  # § 540-4A(2)(a)
        ("acre", None, "silviculture", "not_applicable"),  # § 540-4A(2)(b)
    ],
)
def test_the_process_and_esc_gis_screen_give_one_answer_with_limits_and_activity(
    site, disturbed, activity, permit, demo_layers, tmp_path
):
    """Issue 34, one site, one answer: the service's screen process and ``esc-gis screen`` decide the same
    site, disturbed limits and activity with the one screening function; every decided column and every
    finding agrees ("A permit is not required for a construction site with less than 4,000 square feet
    of land-disturbing construction activity", § 540-4A(1)(b); "This article does not apply to ...
    Nonpoint discharges from agricultural activity areas", § 540-4A(2)(a))."""
    inputs = {"site": lonlat(SITES[site])}
    props = {"site_id": "site"}
    if activity is not None:
        inputs["activity"] = props["activity"] = activity
    args = ["screen", str(tmp_path / "site.geojson"), "--layers", str(DEMO_LAYERS), "-o", str(tmp_path / "o.geojson")]
    if disturbed is not None:
        inputs["disturbed"] = lonlat(SITES[disturbed])
        limits = {"type": "Feature", "properties": {"site_id": "site"}, "geometry": inputs["disturbed"]}
        (tmp_path / "dist.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": [limits]}))
        args += ["--disturbed", str(tmp_path / "dist.geojson")]
    feature = {"type": "Feature", "properties": props, "geometry": inputs["site"]}
    (tmp_path / "site.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": [feature]}))
    answer = screen_request(inputs, layers=demo_layers, profile=PROFILE, limits=Limits())
    res = CliRunner().invoke(cli, [*args, "--quiet"])
    assert res.exit_code == 0, res.output
    row = gpd.read_file(tmp_path / "o.geojson").iloc[0]
    assert answer["permit"] == row["permit"] == permit
    for col in ("applicability", "jurisdiction", "sediment_standard"):
        assert answer[col] == row[col], col
    assert answer["standards"] == (row["standards"] or "")
    assert answer["findings"] == json.loads(row["findings"])
    for col in ("disturbed_sqft", "plan_disturbed_sqft", "disturbed_in_jurisdiction_sqft", "disturbed_in_village_sqft"):
        assert answer["measured"][col] == pytest.approx(row[col], rel=1e-9), col
    # The old name is the new one's deprecated alias, in the answer as in the file.
    assert answer["measured"]["disturbed_in_village_sqft"] == answer["measured"]["disturbed_in_jurisdiction_sqft"]


def test_disturbed_limits_and_activity_reach_the_engine(demo_layers):
    """The disturbed limits are measured, not the site: 10,000 sq ft site, 2,500 sq ft disturbed
    is under 4,000 sq ft; and agricultural activity is exempt, § 540-4A(2)(a)."""
    site = lonlat(SITES["required"])
    small = lonlat(square(*INSIDE, 50.0))
    ans = screen_request({"site": site, "disturbed": small}, layers=demo_layers, profile=PROFILE, limits=Limits())
    assert ans["permit"] == "not_required"
    # 50 US survey feet (EPSG:7594's unit) are 50.0001 ft: 2,500.01 sq ft.
    assert ans["measured"]["disturbed_sqft"] == pytest.approx(2500.01, abs=1e-4)
    ans = screen_request(
        {"site": site, "activity": "agricultural_activity"}, layers=demo_layers, profile=PROFILE, limits=Limits()
    )
    assert ans["permit"] == "not_applicable"
    assert "agricultural_activity_exempt" in [f["code"] for f in ans["findings"]]


@pytest.mark.parametrize(
    ("name", "inputs", "codes"),
    [
        # § 540-4A(1)(a): required; what comes next (§ 540-8A, 8B, 8C(1), 8E(1), 8E(8)).
        (
            "required",
            {},
            [
                "service_activity_default",
                "service_whole_site_disturbed",
                "service_common_plan_unknown",
                "service_next_steps",
                "service_exclusions_not_asked",
                "service_other_permits",
            ],
        ),
        # Under 4,000 sq ft the office may still require one: § 540-4A(1)(c).
        (
            "not_required",
            {"activity": "construction"},
            [
                "service_whole_site_disturbed",
                "service_common_plan_unknown",
                "service_may_still_require",
                "service_exclusions_not_asked",
                "service_other_permits",
            ],
        ),
        # An exemption taken as described: the office decides what the land is (§ 540-4A(2)). The
        # article does not apply, so no exclusion "changes what applies": that note is left out (issue 34).
        (
            "required",
            {"activity": "silviculture"},
            [
                "service_activity_as_described",
                "service_whole_site_disturbed",
                "service_other_permits",
            ],
        ),
    ],
)
def test_notes_say_what_the_screening_could_not_know(name, inputs, codes, demo_layers):
    ans = screen_request({"site": lonlat(SITES[name]), **inputs}, layers=demo_layers, profile=PROFILE, limits=Limits())
    assert [n["code"] for n in ans["notes"]] == codes
    assert all(n["section"] and n["basis"] in ("ordinance", "policy") for n in ans["notes"])
    if "service_may_still_require" in codes:
        may = next(n for n in ans["notes"] if n["code"] == "service_may_still_require")
        assert may["section"] == "§ 540-4A(1)(c)" and "if the administering authority determines" in may["message"]


def test_the_published_example_screens_inside_the_village(demo_layers):
    from esc_gis.serve.process import process_metadata

    meta = process_metadata(None)
    ans = screen_request(meta["example"]["inputs"], layers=demo_layers, profile=PROFILE, limits=Limits())
    assert ans["jurisdiction"] == "inside"
    assert "§ 540-4A(2)(b)" not in meta["inputs"]["activity"]["description"]  # the words, not the sections
    assert (
        "Clearing and grubbing of a construction site is not a silviculture activity"
        in meta["inputs"]["activity"]["description"]
    )


def test_the_services_words_state_their_sections_as_the_ordinance_does():
    """§ 540-4A(2): "This article does not apply to the following: (a) Nonpoint discharges from agricultural
    activity areas. (b) Nonpoint discharges from silviculture activities"; § 540-5 AGRICULTURAL ACTIVITY AREA:
    "The part of the farm where there is planting, growing, cultivating and harvesting of crops for human or
    livestock consumption and pasturing or outside yarding of livestock, including sod farms and silviculture";
    § 540-4A(3): an NPDES-exempt site "shall comply with the performance standards of § 540-7A if less than one
    acre", so it is not outside the article; § 540-7B(6): the authority "may establish numeric water quality
    requirements that are more stringent than those set forth in § 540-7B(3)", "applicable to any permitted
    site, regardless of the size"."""
    from esc_gis.profile import load_profile

    prof = load_profile()
    farm = prof.finding("service_activity_agricultural_activity")
    assert "pasturing or outside yarding of livestock" in farm.message
    assert "for human or livestock consumption" in farm.message
    assert 'does not apply to "Nonpoint discharges from agricultural activity areas"' in farm.message
    assert "exempt" not in farm.message  # the discharges are outside the article, not the farm's construction
    trees = prof.finding("service_activity_silviculture")
    assert 'does not apply to "Nonpoint discharges from silviculture activities"' in trees.message
    line = prof.finding("service_layer_jurisdiction")
    assert "except as § 540-4A(2)-(3)" not in line.message
    # § 540-4A(3): "if less than one acre" qualifies the § 540-7A sentence; "The performance standards of
    # § 540-7B, permit requirements of § 540-8, and plan requirements of § 540-9 are not applicable." names no
    # size, so limiting it to sites under one acre is the toolkit's reading, labelled so.
    assert 'is not outside it: it "shall comply with the performance standards of § 540-7A if less than one acre' in (
        line.message
    )
    assert "reading: that sentence, which names no size, is read as reaching only a site with less than 1 acre" in (
        line.message
    )
    assert line.section == "§ 540-4B; § 540-4A(2); § 540-4A(3); § 540-4C"
    assert line.basis == "interpretation"
    targeted = prof.finding("service_layer_targeted_areas")
    assert "may establish numeric water quality requirements more stringent than those of § 540-7B(3)" in (
        targeted.message
    )
    assert "for any permitted site regardless of its size" in targeted.message
    assert "may set targeted performance standards" not in targeted.message
    assert targeted.section == "§ 540-7B(6); § 540-4A(1)(c)"


def test_far_outside_the_village_does_not_apply_and_is_not_measured(demo_layers):
    """§ 540-4B: the article applies within the Village. A site in Europe, larger than the area
    limit, gets "does not apply", not an error, and no areas measured in a CRS made for Wisconsin."""
    europe = {"type": "Polygon", "coordinates": [[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]}
    ans = screen_request({"site": europe}, layers=demo_layers, profile=PROFILE, limits=Limits(site_acres=1.0))
    assert ans["permit"] == "not_applicable" and ans["jurisdiction"] == "outside"
    assert [f["code"] for f in ans["findings"]] == ["outside_jurisdiction"]
    assert set(ans["measured"].values()) == {None}
    assert "Not measured" in ans["measured_note"]
    assert "not a permit decision" in ans["notice"]
    assert [n["code"] for n in ans["notes"]] == ["service_activity_default"]


def _east_of_the_village(layers, gap_ft: float) -> shapely.Polygon:
    """A 100 ft square ``gap_ft`` east of the boundary's eastmost point: no point of the boundary is
    nearer (none lies further east), and that point is exactly ``gap_ft`` away (it faces the square)."""
    ring = shapely.get_coordinates(layers.jurisdiction)
    x, y = ring[np.argmax(ring[:, 0])]
    return square(x + gap_ft, y - 50.0, 100.0)


def test_outside_within_the_extraterritorial_area_does_not_apply_as_a_reading(demo_layers):
    """§ 540-4B: "This article applies to land-disturbing construction activity on construction sites located
    within the boundaries and jurisdiction of the Village". § 540-5 EXTRATERRITORIAL: "The unincorporated area
    ... within 1.5 miles of a fourth-class city or Village", which no rule of the article uses. 2,100 ft
    outside: "does not apply" is a reading (basis interpretation) with the caveat, not the ordinance's."""
    site = _east_of_the_village(demo_layers, 2100.0)
    ans = screen_request({"site": lonlat(site)}, layers=demo_layers, profile=PROFILE, limits=Limits())
    assert ans["permit"] == "not_applicable" and ans["jurisdiction"] == "outside"
    (f,) = ans["findings"]
    assert (f["code"], f["basis"], f["section"]) == (
        "outside_jurisdiction_extraterritorial",
        "interpretation",
        "§ 540-4B; § 540-5 EXTRATERRITORIAL",
    )
    assert f["message"].startswith("Reading:") and "2,100 ft outside, within 7,920 ft of its limits" in f["message"]
    assert "may still have a say there" in f["message"]  # the caveat
    # Beyond 1.5 miles (7,920 ft), the ordinance's own "does not apply".
    beyond = {"site": lonlat(_east_of_the_village(demo_layers, 9000.0))}
    far = screen_request(beyond, layers=demo_layers, profile=PROFILE, limits=Limits())
    assert [(f["code"], f["basis"]) for f in far["findings"]] == [("outside_jurisdiction", "ordinance")]
    # One decision: the service's answer is esc-gis screen's for the same site.
    sites = gpd.GeoDataFrame({"site_id": ["near"]}, geometry=[site], crs=CRS)
    row = screen(sites, layers=demo_layers, profile=PROFILE).iloc[0]
    assert json.loads(row["findings"]) == ans["findings"]


def test_a_farm_field_gets_one_answer(demo_layers):
    """§ 540-4A(2): "This article does not apply to the following: (a) Nonpoint discharges from agricultural activity
    areas." A farm field inside the Village is told the article does not apply, and nothing in the answer says it
    applies (no "the article applies to it", no exclusion that would "change what applies")."""
    site = lonlat(SITES["required"])
    ans = screen_request(
        {"site": site, "activity": "agricultural_activity"}, layers=demo_layers, profile=PROFILE, limits=Limits()
    )
    assert ans["permit"] == "not_applicable" and ans["applicability"] == "exempt_agricultural"
    words = " ".join(f["message"] for f in [*ans["findings"], *ans["notes"]])
    assert "applies to it" not in words and "changes what applies" not in words
    codes = [f["code"] for f in ans["findings"]]
    assert "jurisdiction_inside" in codes and "agricultural_activity_exempt" in codes
    assert "service_exclusions_not_asked" not in [n["code"] for n in ans["notes"]]
    # The inside finding says where, not that the article applies; a site it applies to still gets the note.
    inside = next(f for f in ans["findings"] if f["code"] == "jurisdiction_inside")
    assert "within the article's jurisdiction" in inside["message"]
    built = screen_request({"site": site}, layers=demo_layers, profile=PROFILE, limits=Limits())
    assert "service_exclusions_not_asked" in [n["code"] for n in built["notes"]]


def test_far_site_with_disturbed_limits_inside_is_refused_as_layers_apart(demo_layers):
    """A site in Europe whose disturbed limits lie in the Village: the two do not lie together, so no
    answer is drawn on them (issue 46: layers of one run that do not lie together are refused)."""
    europe = {"type": "Polygon", "coordinates": [[[10, 50], [10.001, 50], [10.001, 50.001], [10, 50.001], [10, 50]]]}
    inside = lonlat(SITES["required"])
    with pytest.raises(RequestError, match="reach far outside the area"):
        screen_request({"site": europe, "disturbed": inside}, layers=demo_layers, profile=PROFILE, limits=Limits())


# --- Bounds: exactly at each limit, and one past it ------------------------------------------------


def ring(n: int) -> dict:
    """A polygon of exactly ``n`` vertices (the closing one counted), inside the Village."""
    t = np.linspace(0, 2 * np.pi, n - 1, endpoint=False)
    pts = np.c_[INSIDE[0] + 50 + 40 * np.cos(t), INSIDE[1] + 50 + 40 * np.sin(t)]
    return lonlat(shapely.Polygon(pts))


def test_vertex_limit_exactly(demo_layers):
    assert shapely.get_num_coordinates(shapely.from_geojson(json.dumps(ring(500)))) == 500
    parse_request({"site": ring(500)}, Limits(vertices=500))
    with pytest.raises(RequestError, match="501 vertices; at most 500"):
        parse_request({"site": ring(501)}, Limits(vertices=500))


def test_area_limit_exactly(demo_layers):
    """A 220 ft square is 48,400 sq ft (1.111 acres): screened at a limit just above, refused just below."""
    site = lonlat(SITES["acre"])
    acres = 48_400 / 43_560
    screen_request({"site": site}, layers=demo_layers, profile=PROFILE, limits=Limits(site_acres=acres * 1.0001))
    with pytest.raises(RequestError, match="acres; this service screens sites up to"):
        screen_request({"site": site}, layers=demo_layers, profile=PROFILE, limits=Limits(site_acres=acres * 0.9999))


def test_disturbed_feature_limit():
    one = {"type": "Feature", "properties": {}, "geometry": lonlat(square(*INSIDE, 10.0))}
    fc = {"type": "FeatureCollection", "features": [one] * 3}
    site = lonlat(SITES["required"])
    assert len(parse_request({"site": site, "disturbed": fc}, Limits(disturbed_features=3)).disturbed) == 3
    with pytest.raises(RequestError, match="3 polygons; at most 2"):
        parse_request({"site": site, "disturbed": fc}, Limits(disturbed_features=2))


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({}, "'site' is missing"),
        ({"site": {"type": "Point", "coordinates": [1, 2]}}, "only Polygon and MultiPolygon"),
        ({"site": "not json"}, "is not JSON"),
        ({"site": 5}, "not a GeoJSON object"),
        (
            {
                "site": {
                    "type": "Polygon",
                    "coordinates": [[[744700, 503200], [744800, 503200], [744800, 503300], [744700, 503200]]],
                }
            },
            "off the globe",
        ),
        (
            {"site": {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]}},
            "not a valid polygon",
        ),
        ({"site": {"type": "Polygon", "coordinates": [[0, 0]]}}, "not a well-formed GeoJSON"),
        ({"site": {"type": "FeatureCollection", "features": []}}, "has no polygon"),
        ({"site": {"type": "FeatureCollection"}}, "without a list of features"),
        (
            {"site": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}, "sites": 1},
            "Unknown input(s) 'sites'",
        ),
        (
            {"site": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}, "activity": 3},
            "'activity' must be one of construction",
        ),
        (
            {"site": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}, "activity": "mining"},
            "'activity' is 'mining'; use one of construction, agricultural_activity",
        ),
        ([1, 2], "not a JSON object"),
    ],
)
def test_bad_inputs_are_refused_with_the_fix(data, words):
    with pytest.raises(RequestError) as err:
        parse_request(data, Limits())
    assert words in str(err.value)
    assert "/" not in str(err.value).replace("longitude/latitude", "").replace('{"inputs"', "")


@pytest.mark.parametrize("field", ["body_bytes", "vertices", "disturbed_features", "site_acres", "seconds"])
@pytest.mark.parametrize("value", [0, -1, float("nan")])
def test_limits_must_be_positive(field, value):
    with pytest.raises(RequestError, match=field):
        Limits(**{field: value}).check()


# --- The guard, in-process ---------------------------------------------------------------------------


def _guarded(app=None, **kw):
    from werkzeug.test import Client
    from werkzeug.wrappers import Response

    def ok(environ, start_response):
        return Response(json.dumps({"ok": True}), mimetype="application/json")(environ, start_response)

    return Client(Guard(app or ok, body_bytes=kw.pop("body_bytes", 100), **kw))


def test_guard_body_limit_exactly():
    c = _guarded()
    assert c.post("/x", data=b"a" * 100).status_code == 200
    r = c.post("/x", data=b"a" * 101)
    assert r.status_code == 413 and r.json["code"] == "PayloadTooLarge"


def test_guard_methods_and_headers():
    c = _guarded()
    r = c.put("/x")
    assert r.status_code == 405 and r.headers["Allow"] == "GET, HEAD, POST, OPTIONS"
    r = c.get("/x")
    for name in ("X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy", "Content-Security-Policy"):
        assert name in r.headers
    assert r.headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert "Access-Control-Allow-Origin" not in c.get("/x", headers={"Origin": "https://a.example"}).headers


def test_guard_cors_only_for_the_origins_given():
    c = _guarded(cors_origins=("https://village.example",))
    assert c.get("/x", headers={"Origin": "https://village.example"}).headers["Access-Control-Allow-Origin"] == (
        "https://village.example"
    )
    assert "Access-Control-Allow-Origin" not in c.get("/x", headers={"Origin": "https://evil.example"}).headers
    pre = c.options("/x", headers={"Origin": "https://village.example", "Access-Control-Request-Method": "POST"})
    assert pre.status_code == 204 and "POST" in pre.headers["Access-Control-Allow-Methods"]


def test_guard_hides_the_traceback():
    def broken(environ, start_response):
        raise RuntimeError("secret path /srv/village/config.yml")

    r = _guarded(broken).get("/x")
    assert r.status_code == 500 and r.json["code"] == "NoApplicableCode"
    assert "/srv" not in r.get_data(as_text=True) and "Traceback" not in r.get_data(as_text=True)


# --- What the service checks before it listens ---------------------------------------------------


def test_a_file_that_is_not_a_registry_is_refused(tmp_path):
    not_reg = tmp_path / "x.gpkg"
    gpd.GeoDataFrame(geometry=[shapely.box(0, 0, 1, 1)], crs=CRS).to_file(not_reg)
    with pytest.raises(RegistryError, match="not a permit registry"):
        prepare_service(ServiceSettings(registry=str(not_reg), state_dir=tmp_path / "s", layers=DEMO_LAYERS))
    with pytest.raises(RegistryError, match="No registry at"):
        prepare_service(ServiceSettings(registry=str(tmp_path / "none.gpkg"), state_dir=tmp_path / "s"))


def test_a_registry_before_the_published_view_is_refused_until_init_upgrades_it(tmp_path):
    """Migration 13 made the view the service reads; an older registry is refused with the fix, then served."""
    from esc_gis.registry import init_registry
    from esc_gis.registry.store.schema import PUBLISHED_VIEW

    reg = tmp_path / "permits.gpkg"
    fill_registry(str(reg), n=1)
    with sqlite3.connect(reg) as conn:  # as the esc_gis of schema version 12 left it
        conn.execute("DELETE FROM gpkg_geometry_columns WHERE table_name = ?", (PUBLISHED_VIEW,))
        conn.execute("DELETE FROM gpkg_contents WHERE table_name = ?", (PUBLISHED_VIEW,))
        conn.execute(f"DROP VIEW {PUBLISHED_VIEW}")
        conn.execute("DELETE FROM esc_gis_schema WHERE version = 13")
    settings = ServiceSettings(registry=str(reg), state_dir=tmp_path / "s", layers=DEMO_LAYERS)
    with pytest.raises(RegistryError, match=r"schema version 12; this esc_gis serves version 13.*permits init"):
        prepare_service(settings)
    assert init_registry(str(reg), layers=DEMO_LAYERS) == [13]
    prepare_service(settings)
    with sqlite3.connect(reg) as conn:
        statuses = {r[0] for r in conn.execute(f"SELECT status FROM {PUBLISHED_VIEW}")}
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({PUBLISHED_VIEW})")]
    assert statuses == {"stop_work"}  # the one permit, under a stop-work order; not the application
    assert columns == ["fid", *PERMIT_PROPERTIES, "geom"]


def test_the_office_login_is_refused_and_the_reader_accepted(pg_url):
    """The service answers anyone: its login must read the published view (and the public one) and nothing else."""
    target = pg_schema(pg_url)
    fill_registry(target, n=1)
    with pytest.raises(RegistryError, match="is a superuser"):
        check_public_login(target)  # the test server's owner
    with public_login(target, "clerk") as clerk, pytest.raises(RegistryError) as err:
        check_public_login(clerk)
    assert "may read or change more than the views permits_published and permits_public" in str(err.value)
    assert ".appeal_decisions" in str(err.value) and "more. Fix:" in str(err.value)
    assert "IN ROLE <prefix>_reader" in str(err.value)
    with public_login(target, "inspector") as inspector, pytest.raises(RegistryError, match="inspections"):
        check_public_login(inspector)  # it may update one column of permits and write inspections
    with public_login(target) as reader:
        check_public_login(reader)
        # A login that may SET ROLE to the clerk is the clerk, whether or not it inherits.
        import psycopg

        user = reader.split("//", 1)[1].split(":", 1)[0]
        schema = re.search(r"search_path%3D(\w+)", target).group(1)
        clerk = next(r for r in _roles_of(target) if r.endswith(f"{schema}_clerk"))
        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute(f'ALTER ROLE "{user}" NOINHERIT')
            conn.execute(f'GRANT "{clerk}" TO "{user}"')
        with pytest.raises(RegistryError, match="more than the views"):
            check_public_login(reader)


def _roles_of(target: str) -> list[str]:
    import psycopg

    with psycopg.connect(target) as conn:
        return [r for (r,) in conn.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE '%\\_clerk'")]


@pytest.fixture(params=["gpkg", "postgis"])
def registry(request, tmp_path):
    """(registry to serve, the office's own access to it) on each back end, filled by fill_registry."""
    if request.param == "gpkg":
        path = tmp_path / "permits.gpkg"
        fill_registry(str(path))
        yield str(path), str(path)
        return
    target = pg_schema(request.getfixturevalue("pg_url"))
    fill_registry(target)
    with public_login(target) as reader:
        yield reader, target


def _history_rows(office: str) -> int:
    if office.startswith("postgresql"):
        import psycopg

        with psycopg.connect(office) as conn:
            return int(conn.execute("SELECT count(*) FROM history").fetchone()[0])
    with sqlite3.connect(office) as conn:
        return int(conn.execute("SELECT count(*) FROM history").fetchone()[0])


def _digest(office: str) -> str:
    return hashlib.sha256(Path(office).read_bytes()).hexdigest() if not office.startswith("postgresql") else ""


def _crawl(base: str) -> list[tuple[str, bytes]]:
    """Fetch every page the API links to (JSON and HTML) from the landing page, and the public page."""
    seen: dict[str, bytes] = {}
    todo = [f"{base}/ogc?f=json", f"{base}/", f"{base}/ogc/openapi?f=json"]
    while todo and len(seen) < 200:
        url = todo.pop()
        if url in seen or not url.startswith(base):
            continue
        status, _, body = get(url)
        seen[url] = body
        if status != 200 or "f=json" not in url:
            continue
        try:
            doc = json.loads(body)
        except ValueError:
            continue
        for link in re.findall(r'"href":\s*"([^"]+)"', json.dumps(doc)):
            if link.startswith(base) and "{" not in link:
                bare = re.sub(r"[?&]f=[a-z]+", "", link)
                sep = "&" if "?" in bare else "?"
                todo += [f"{bare}{sep}f=json", f"{bare}{sep}f=html"]  # pygeoapi's HTML pages too
    return list(seen.items())


def test_service_publishes_the_public_view_only_and_never_writes(registry):
    """Every response, JSON or HTML, from every link: no party, phone, e-mail, reason or note; the
    permits' fields are the published ones; screening writes nothing to the registry."""
    served_reg, office = registry
    before = (_history_rows(office), _digest(office))
    with served(served_reg) as base:
        status, _, body = get(f"{base}/ogc/collections/permits/items?f=json&limit=1000")
        assert status == 200
        items = json.loads(body)
        assert items["numberMatched"] == 5  # the undecided application is not served
        for feat in items["features"]:
            assert set(feat["properties"]) <= set(PERMIT_PROPERTIES)
            assert {"permit_number", "site_address", "status"} <= set(feat["properties"])
        assert sorted(f["properties"]["status"] for f in items["features"]) == ["active"] * 4 + ["stop_work"]
        collections = {c["id"] for c in json.loads(get(f"{base}/ogc/collections?f=json")[2])["collections"]}
        assert {
            "permits",
            "jurisdiction",
            "waters_lines",
            "waters_polygons",
            "protective_areas",
            "steep_slopes",
            "targeted_areas",
        } <= collections
        status, _, answer = post_screen(base, lonlat(SITES["required"]))
        assert status == 200 and answer["permit"] == "required"
        pages = _crawl(base)
        assert len(pages) > 20
        for url, page in pages:
            # An undecided application's address is not published either: no permit is posted there.
            for secret in (*SECRETS, PENDING_ADDRESS):
                assert secret.encode() not in page, f"{secret!r} in {url}"
    assert (_history_rows(office), _digest(office)) == before


def test_the_map_is_live_a_move_shows_at_once(registry):
    """The public map must not be stale the moment a permit moves: the next request shows the move."""
    from esc_gis.registry import open_registry

    served_reg, office = registry
    with served(served_reg) as base:
        url = f"{base}/ogc/collections/permits/items?f=json&limit=1000"
        before = {
            f["properties"]["permit_number"]: f["properties"]["status"] for f in json.loads(get(url)[2])["features"]
        }
        number = sorted(n for n, s in before.items() if s == "active")[0]
        with open_registry(office, layers=DEMO_LAYERS) as reg:
            reg.transition(number, "stop_work", on=date(2026, 11, 25), reasons="Silt fence down", who="clerk")
        after = {
            f["properties"]["permit_number"]: f["properties"]["status"] for f in json.loads(get(url)[2])["features"]
        }
    assert after == {**before, number: "stop_work"}


def test_errors_are_ogc_json_without_paths(tmp_path):
    reg = tmp_path / "permits.gpkg"
    fill_registry(str(reg), n=1)
    with served(str(reg), "--max-vertices", "10") as base:
        checks = [
            get(f"{base}/ogc/collections/nothing/items?f=json"),
            get(f"{base}/ogc/collections/permits/items/999999?f=json"),
            get(
                f"{base}/ogc/processes/screen/execution",
                data=b"{not json",
                method="POST",
                headers={"Content-Type": "application/json"},
            ),
            get(
                f"{base}/ogc/processes/screen/execution",
                data=json.dumps({"inputs": {"site": ring(11)}}).encode(),
                method="POST",
                headers={"Content-Type": "application/json"},
            ),
            get(f"{base}/no/such/page"),
            get(f"{base}/static/esc/../../config.py"),
        ]
        for status, headers, body in checks:
            assert 400 <= status < 500, (status, body)
            doc = json.loads(body)
            assert set(doc) >= {"code", "description"}
            assert str(tmp_path) not in body.decode() and "Traceback" not in body.decode()
            assert headers["X-Content-Type-Options"] == "nosniff"
        assert "11 vertices; at most 10" in json.loads(checks[3][2])["description"]
        status, headers, _ = get(f"{base}/")
        assert status == 200 and "script-src 'self'" in headers["Content-Security-Policy"]


def test_a_screening_past_its_time_limit_is_stopped_and_the_service_goes_on(tmp_path):
    reg = tmp_path / "permits.gpkg"
    fill_registry(str(reg), n=1)
    with served(str(reg), "--timeout", "0.001") as base:
        status, _, doc = post_screen(base, lonlat(SITES["required"]))
        assert status == 503 and doc["code"] == "ServiceUnavailable" and "longer than" in doc["description"]
        assert get(f"{base}/ogc/collections/permits/items?f=json")[0] == 200


def test_no_callback_url_is_ever_called(tmp_path):
    """OGC API - Processes lets a request name URLs the server calls back: a public service must not."""
    reg = tmp_path / "permits.gpkg"
    fill_registry(str(reg), n=1)
    with served(str(reg)) as base:
        body = {"inputs": {"site": lonlat(SITES["required"])}, "subscriber": {"successUri": "http://127.0.0.1:9/x"}}
        status, _, raw = get(
            f"{base}/ogc/processes/screen/execution",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        assert status == 400 and "calls back no URL" in json.loads(raw)["description"]


def test_the_office_login_cannot_start_the_service(pg_url, tmp_path):
    target = pg_schema(pg_url)
    fill_registry(target, n=1)
    res = CliRunner().invoke(
        cli, ["serve", "--registry", target, "--layers", str(DEMO_LAYERS), "--state-dir", str(tmp_path)]
    )
    assert res.exit_code == 1
    assert "reader role" in res.output and "Traceback" not in res.output


def test_the_words_follow_the_profile(tmp_path):
    """Another municipality is a new TOML: the collections' titles, the publication line and the
    activities' words are the profile's, not the code's."""
    import yaml

    reg = tmp_path / "permits.gpkg"
    fill_registry(str(reg), n=1)
    example = Path(__file__).parent / "profiles" / "example.toml"
    files = prepare_service(
        ServiceSettings(registry=str(reg), state_dir=tmp_path / "s", layers=DEMO_LAYERS, profile=example)
    )
    conf = yaml.safe_load(files.config.read_text())
    titles = {k: v.get("title") for k, v in conf["resources"].items()}
    assert titles["jurisdiction"] == "Town of Example: boundary"
    assert titles["permits"] == "Town of Example: erosion-control permits"
    assert "(§ 23-4B)" in conf["resources"]["jurisdiction"]["description"]
    assert conf["metadata"]["license"]["name"].startswith("Published by the Town of Example")
    assert files.page_settings["activities"][0]["value"] == "construction"
    assert "§" not in files.page_settings["activities"][0]["label"]
