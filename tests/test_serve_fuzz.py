"""schemathesis runs the OpenAPI document ``esc-gis serve`` publishes against the live server (issue 25, item 4).

Every operation of the document pygeoapi publishes (``/ogc/openapi?f=json``) is called with
requests schemathesis generates from it, on a registry in a GeoPackage and on PostGIS (read
through a login in the reader role), and each answer is checked:

- no 5xx (``not_a_server_error``): a public endpoint never fails on what a client sends;
- the answer matches the schema the document gives it (``response_schema_conformance``), except
  where pygeoapi's document is wrong about pygeoapi's own answer (:data:`PYGEOAPI_QUIRKS`, each
  saying how);
- no answer holds the personal data planted in the registry.

schemathesis builds the screening's request body from OGC's generic execute schema, which rarely
reaches the engine, so the last tests fuzz the screening with GeoJSON polygons of their own.

The run stays on 127.0.0.1 and is bounded: :data:`EXAMPLES` requests at most per operation,
derandomised (the same requests every run), no shrinking and no stateful phase, and it stops
calling new operations once :data:`BUDGET_S` seconds have passed (it says which it left out).

The document refers to the OGC's schemas by URL (schemas.opengis.net, and a raw GitHub file for
``sortby``). Resolving those would reach the network, which tests never do, so
:func:`localise` replaces each remote reference by a local copy of the part the document uses,
written here from the standards (OGC API - Features - Part 1 1.0 and Processes - Part 1 1.0):
their required members and types, not weakened ones (a feature's geometry is checked as far as
its ``type``).
"""

from __future__ import annotations

import copy
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from .service import DEMO_LAYERS, SECRETS, UNPUBLISHED, fill_registry, get, pg_schema, post_screen, public_login, served

schemathesis = pytest.importorskip("schemathesis")
hypothesis = pytest.importorskip("hypothesis")

#: Requests generated per operation, at most.
EXAMPLES = 25
#: The run calls no new operation after this many seconds (per back end); about 25 s on a quiet machine.
BUDGET_S = 75.0
#: Requests that break the document's schemas, per operation where a client's values reach a
#: provider or the screening (:data:`NEGATIVE_OPERATIONS`).
NEGATIVE_EXAMPLES = 40
#: Where a client's text reaches a database or the screening engine: the property filters, ``datetime``,
#: ``sortby``, the id and the process body. Issue 47's 500s were all here, and positive data never reached them.
NEGATIVE_OPERATIONS = (
    "GET /collections/permits/items",
    "GET /collections/permits/items/{featureId}",
    "POST /processes/screen/execution",
)

_LINK = {
    "type": "object",
    "required": ["href"],
    "properties": {
        "href": {"type": "string"},
        "rel": {"type": "string"},
        "type": {"type": "string"},
        "hreflang": {"type": "string"},
        "title": {"type": "string"},
        "length": {"type": "integer"},
    },
}
# OGC API - Features - Part 1, 1.0: openapi/schemas/exception.yaml.
_FEATURES_EXCEPTION = {
    "type": "object",
    "required": ["code"],
    "properties": {"code": {"type": "string"}, "description": {"type": "string"}},
}
# OGC API - Processes - Part 1, 1.0: openapi/schemas/exception.yaml (RFC 7807 problem details).
_PROCESSES_EXCEPTION = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"},
    },
    "additionalProperties": True,
}
_GEOMETRY = {"type": "object", "nullable": True, "required": ["type"], "properties": {"type": {"type": "string"}}}
_FEATURE = {
    "type": "object",
    "required": ["type", "geometry", "properties"],
    "properties": {
        "type": {"type": "string", "enum": ["Feature"]},
        "geometry": _GEOMETRY,
        "properties": {"type": "object", "nullable": True},
        "id": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "links": {"type": "array", "items": _LINK},
    },
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _geojson(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/geo+json": {"schema": schema}, "text/html": {"schema": {"type": "string"}}},
    }


#: The remote references pygeoapi's document makes, by URL: a local copy of what each names.
REMOTE = {
    # OGC API - Features - Part 1, 1.0 (ogcapi-features-1.yaml).
    "ogcapi-features-1.yaml#/components/parameters/featureId": {
        "name": "featureId",
        "in": "path",
        "description": "local identifier of a feature",
        "required": True,
        "schema": {"type": "string"},
    },
    # The permits' time (time_field, issue 35): an instant or an interval, ".." for an open end.
    "ogcapi-features-1.yaml#/components/parameters/datetime": {
        "name": "datetime",
        "in": "query",
        "description": "Either a date-time or an interval, open or closed.",
        "required": False,
        "schema": {"type": "string"},
        "style": "form",
        "explode": False,
    },
    "ogcapi-features-1.yaml#/components/responses/LandingPage": _json(
        {
            "type": "object",
            "required": ["links"],
            "properties": {
                "title": {"type": "string"},
                "description": {"type": "string"},
                "links": {"type": "array", "items": _LINK},
            },
        },
        "The landing page.",
    ),
    "ogcapi-features-1.yaml#/components/responses/Collection": _json(
        {
            "type": "object",
            "required": ["id", "links"],
            "properties": {
                "id": {"type": "string"},
                "title": {"type": "string"},
                "description": {"type": "string"},
                "links": {"type": "array", "items": _LINK},
                "extent": {"type": "object"},
                "itemType": {"type": "string"},
                "crs": {"type": "array", "items": {"type": "string"}},
            },
        },
        "Information about the feature collection.",
    ),
    "ogcapi-features-1.yaml#/components/responses/Features": _geojson(
        {
            "type": "object",
            "required": ["type", "features"],
            "properties": {
                "type": {"type": "string", "enum": ["FeatureCollection"]},
                "features": {"type": "array", "items": _FEATURE},
                "links": {"type": "array", "items": _LINK},
                "timeStamp": {"type": "string", "format": "date-time"},
                "numberMatched": {"type": "integer", "minimum": 0},
                "numberReturned": {"type": "integer", "minimum": 0},
            },
        },
        "The features.",
    ),
    "ogcapi-features-1.yaml#/components/responses/Feature": _geojson(_FEATURE, "A feature."),
    "ogcapi-features-1.yaml#/components/responses/InvalidParameter": _json(
        _FEATURES_EXCEPTION, "A query parameter has an invalid value."
    ),
    "ogcapi-features-1.yaml#/components/responses/NotFound": {
        "description": "The requested resource does not exist on the server."
    },
    "ogcapi-features-1.yaml#/components/responses/ServerError": _json(_FEATURES_EXCEPTION, "A server error occurred."),
    # OGC API - Processes - Part 1, 1.0.
    "processes/part1/1.0/openapi/responses/ExecuteAsync.yaml": {
        "description": "Started asynchronous execution.",
        "content": {"application/json": {"schema": {"type": "object", "required": ["jobID", "status"]}}},
    },
    "processes/part1/1.0/openapi/responses/NotFound.yaml": _json(
        _PROCESSES_EXCEPTION, "The requested resource does not exist on the server."
    ),
    "processes/part1/1.0/openapi/responses/ServerError.yaml": _json(_PROCESSES_EXCEPTION, "A server error occurred."),
    "processes/part1/1.0/openapi/responses/ProcessList.yaml": _json(
        {
            "type": "object",
            "required": ["processes", "links"],
            "properties": {
                "processes": {"type": "array", "items": {"type": "object", "required": ["id", "version"]}},
                "links": {"type": "array", "items": _LINK},
            },
        },
        "Information about the available processes.",
    ),
    "processes/part1/1.0/openapi/schemas/exception.yaml": _PROCESSES_EXCEPTION,
    "processes/part1/1.0/openapi/schemas/execute.yaml": {
        "type": "object",
        "properties": {
            "inputs": {"type": "object", "additionalProperties": True},
            "outputs": {"type": "object", "additionalProperties": True},
            "response": {"type": "string", "enum": ["raw", "document"], "default": "raw"},
        },
    },
    # OGC API - Tiles - Part 1, 1.0.
    "ogcapi-tiles-1.yaml#/components/schemas/link": _LINK,
    # OGC API - Records - Part 1: parameters/sortby.yaml.
    "ogcapi-records/master/core/openapi/parameters/sortby.yaml": {
        "name": "sortby",
        "in": "query",
        "required": False,
        "schema": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": "[+|-]?[A-Za-z_].*"}},
        "style": "form",
        "explode": False,
    },
}


#: Where pygeoapi's document is wrong about pygeoapi's own answers (not the service's): for these
#: operations, answers whose status the predicate picks are checked for no 5xx but not against
#: the schema the document gives them. Everything else is checked against its schema.
Quirk = tuple[Callable[[int], bool], str]
PYGEOAPI_QUIRKS: dict[str, Quirk] = {
    # pygeoapi 0.21's document gives /conformance the *landing page's* response (which requires
    # `links`); pygeoapi answers it with a conformance declaration ({"conformsTo": [...]}), as
    # OGC API - Features requires.
    "GET /conformance": (lambda status: status == 200, "the landing page's schema for the conformance declaration"),
}


def localise(doc: dict[str, Any]) -> dict[str, Any]:
    """Return ``doc`` with every remote ``$ref`` replaced by its local copy from :data:`REMOTE`.

    Raises
    ------
    KeyError
        If the document makes a remote reference this module has no copy of (a new pygeoapi).
    """

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                key = next((k for k in REMOTE if ref.endswith(k)), None)
                if key is None:
                    raise KeyError(f"no local copy of the remote reference {ref}")
                return copy.deepcopy(REMOTE[key])
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(doc)


def _remote_refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        own = [ref] if isinstance(ref, str) and not ref.startswith("#") else []
        return own + [r for v in node.values() for r in _remote_refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _remote_refs(v)]
    return []


def test_localise_leaves_no_remote_reference_and_keeps_local_ones() -> None:
    doc = {
        "paths": {
            "/a": {
                "get": {
                    "parameters": [
                        {
                            "$ref": "https://schemas.opengis.net/ogcapi/features/part1/1.0/openapi/ogcapi-features-1.yaml"
                            "#/components/parameters/featureId"
                        },
                        {"$ref": "#/components/parameters/f"},
                    ]
                }
            }
        }
    }
    out = localise(doc)
    assert _remote_refs(out) == []
    assert out["paths"]["/a"]["get"]["parameters"] == [
        REMOTE["ogcapi-features-1.yaml#/components/parameters/featureId"],
        {"$ref": "#/components/parameters/f"},
    ]
    with pytest.raises(KeyError, match=r"example\.org"):
        localise({"$ref": "https://example.org/other.yaml"})


def _summary(exc: BaseException) -> str:
    """The failure's own lines (schemathesis's check errors and the curl to reproduce), not the schema dumps."""
    parts = [exc, *getattr(exc, "exceptions", ())]
    lines = []
    for part in parts:
        text = str(part)
        keep = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith((" ", "|"))][:4]
        curl = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("curl ")][:1]
        lines.append(" / ".join(keep + curl))
    return "\n    ".join(lines)


@pytest.fixture(scope="module", params=["gpkg", "postgis"])
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A served registry (GeoPackage, or PostGIS through a reader login); yield its base URL."""
    if request.param == "gpkg":
        registry = str(tmp_path_factory.mktemp("fuzz") / "permits.gpkg")
        fill_registry(registry)
        with served(registry) as base:
            yield base
        return
    target = pg_schema(request.getfixturevalue("pg_url"))
    fill_registry(target)
    with public_login(target) as login, served(login) as base:
        yield base


def _fuzz(operation: Any, api: str, statuses: Counter[int], *, negative: bool = False) -> None:
    """Call ``operation`` with the requests schemathesis generates; raise on the first failure.

    ``negative``: requests that break the document's schemas (a number where it wants a date, a
    string where it wants a number...), checked for no 5xx only: their answer is a refusal.
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import response_schema_conformance

    quirk = PYGEOAPI_QUIRKS.get(operation.label)
    mode = GenerationMode.NEGATIVE if negative else GenerationMode.POSITIVE

    @settings(
        max_examples=NEGATIVE_EXAMPLES if negative else EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(mode))
    def run(case: Any) -> None:
        response = case.call(base_url=api, timeout=30)
        statuses[response.status_code] += 1
        leaked = [s for s in (*SECRETS, *UNPUBLISHED.values()) if s in response.text]
        assert not leaked, f"{case.method} {case.formatted_path}: personal data in the answer: {leaked}"
        if negative or (quirk is not None and quirk[0](response.status_code)):
            case.validate_response(response, checks=[not_a_server_error])
        else:
            case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])

    run()


#: What the fuzzer found as a PostGIS 500 (issue 46's CI run), and its neighbours: each is a 400 on both back ends.
BAD_QUERIES = [
    "bbox=-1.79e-283,65.41,-3.357e%2B16,-6.26e%2B92,9.07e%2B193,3.75e%2B16&offset=2684249407",
    "bbox=nan,nan,nan,nan",
    "bbox=1,2",
    "bbox=-88.7,44.2,-88.6,44.1",
    "offset=2684249407",
    "offset=-1",
    "limit=0",
    "limit=x",
]


@pytest.mark.parametrize("query", BAD_QUERIES)
def test_a_query_no_collection_can_answer_is_a_400_on_every_back_end(live: str, query: str) -> None:
    status, _, body = get(f"{live}/ogc/collections/permits/items?f=json&{query}")
    assert status == 400, body
    assert json.loads(body)["code"] == "InvalidParameterValue"


@pytest.mark.slow  # 25-40 s per back end on 2 cores
def test_schemathesis_finds_no_server_error_and_no_answer_off_its_schema(live: str) -> None:
    assert urlsplit(live).hostname == "127.0.0.1"  # the fuzzer calls the loopback server only
    status, _, body = get(f"{live}/ogc/openapi?f=json")
    assert status == 200
    published = json.loads(body)
    assert _remote_refs(published)  # pygeoapi refers to the OGC's schemas by URL...
    doc = localise(published)
    assert _remote_refs(doc) == []  # ...and the copy run here refers to none
    schema = schemathesis.openapi.from_dict(doc)
    api = f"{live}/ogc"

    failures: list[str] = []
    statuses: Counter[int] = Counter()
    started = time.monotonic()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 20
    left_out = []
    for operation in operations:
        if time.monotonic() - started > BUDGET_S:  # bounded: a slow machine calls fewer, never for ever
            left_out.append(operation.label)
            continue
        try:
            _fuzz(operation, api, statuses)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # schemathesis raises a BaseExceptionGroup; report every operation's
            failures.append(f"{operation.label}: {_summary(exc)}")
    elapsed = time.monotonic() - started
    print(
        f"\nschemathesis: {len(operations)} operations, {statuses.total()} calls in {elapsed:.1f} s: {dict(statuses)}"
    )
    if left_out:
        print(f"time budget spent; not called: {', '.join(left_out)}")
    assert not failures, "\n\n".join(failures)
    # It reached the service's answers, not just its refusals: features, the screening, and 4xx.
    assert statuses[200] > 100 and statuses[400] > 0 and statuses[404] > 0


@pytest.mark.slow  # about 10 s per back end on 2 cores
def test_schemathesis_with_data_off_the_schema_finds_no_server_error(live: str) -> None:
    """Issue 47: PostGIS answered 500 to ``issued_on=x``, ``disturbed_sqft=abc``, ``datetime=2026-01-01'--``
    and the screening to a body ``[]``; schemathesis's positive data keeps to the schemas, so it never sent them."""
    doc = localise(json.loads(get(f"{live}/ogc/openapi?f=json")[2]))
    schema = schemathesis.openapi.from_dict(doc)
    operations = [r.ok() for r in schema.get_all_operations() if r.ok().label in NEGATIVE_OPERATIONS]
    assert sorted(o.label for o in operations) == sorted(NEGATIVE_OPERATIONS)
    statuses: Counter[int] = Counter()
    failures = []
    started = time.monotonic()
    for operation in operations:
        try:
            _fuzz(operation, f"{live}/ogc", statuses, negative=True)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # schemathesis raises a BaseExceptionGroup; report every operation's
            failures.append(f"{operation.label}: {_summary(exc)}")
    print(f"\nschemathesis, negative: {statuses.total()} calls in {time.monotonic() - started:.1f} s: {dict(statuses)}")
    assert not failures, "\n\n".join(failures)
    assert statuses[400] > 30  # it reached the checks


def test_found_by_schemathesis_a_bbox_and_a_foreign_id_are_answered(live: str) -> None:
    """On PostGIS, any bbox was a 500 (the view in feet met a bbox in degrees) and /items/abc a 500."""
    items = f"{live}/ogc/collections/permits/items"
    # The first permit (ORIGIN, 150 x 100 ft) lies in this box of longitude/latitude; the second does not.
    status, _, body = get(f"{items}?f=json&bbox=-88.7162,44.1114,-88.7154,44.1119")
    assert status == 200
    assert [f["properties"]["permit_number"] for f in json.loads(body)["features"]] == ["ESC-2026-0001"]
    status, _, body = get(f"{items}?f=json&bbox=0,0,0,0")
    assert (status, json.loads(body)["numberMatched"]) == (200, 0)
    for foreign in ("abc", "1.5", "99999999999999999999", "%21%F1%B3%A4%8D"):
        status, _, body = get(f"{items}/{foreign}?f=json")
        assert (status, json.loads(body)["code"]) == (404, "NotFound"), foreign
    status, _, body = get(f"{items}/1?f=json")
    assert (status, json.loads(body)["properties"]["permit_number"]) == (200, "ESC-2026-0001")


def test_an_error_the_service_makes_matches_both_ogc_exception_schemas() -> None:
    """schemathesis found the guard's own errors (405 for DELETE /jobs/{jobId}) without the `type`
    OGC API - Processes' exception requires, which the published document gives that path."""
    import jsonschema

    from esc_gis.serve.app import Guard

    def never(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        raise AssertionError("the guard answers a refused method itself")

    seen: list[str] = []
    body = b"".join(
        Guard(never, body_bytes=1000)(
            {"REQUEST_METHOD": "DELETE", "PATH_INFO": "/ogc/jobs/0"}, lambda status, headers, *a: seen.append(status)
        )
    )
    assert seen == ["405 Method Not Allowed"]
    answer = json.loads(body)
    jsonschema.validate(answer, _PROCESSES_EXCEPTION)
    jsonschema.validate(answer, _FEATURES_EXCEPTION)
    assert answer["code"] == answer["type"] == "MethodNotAllowed"


# --- The screening process fuzzed with polygons ------------------------------------------------------
# schemathesis generates the execute body from OGC's generic schema (any JSON object), which rarely
# reaches the screening engine; these tests draw GeoJSON polygons, from a square foot in the Village
# to half the globe, and call the screening as the process's worker does.


def _square(x: float, y: float, side: float) -> dict[str, Any]:
    return {"type": "Polygon", "coordinates": [[[x, y], [x + side, y], [x + side, y + side], [x, y + side], [x, y]]]}


def _ring(*xy: tuple[float, float]) -> dict[str, Any]:
    return {"type": "Polygon", "coordinates": [[*xy, xy[0]]]}


@pytest.fixture(scope="module")
def screening_parts() -> tuple[Any, Any]:
    from esc_gis.layers import load_layers
    from esc_gis.profile import load_profile

    prof = load_profile()
    return load_layers(DEMO_LAYERS, profile=prof), prof


#: Inputs fuzzing found as server errors ("The screening failed on the server"): polygons reaching
#: far past the zone WISCRS is made for.
REACHING_FAR = {
    # From the Village to the Gulf of Guinea: its area in WISCRS is NaN, which passed the acre limit.
    "site_to_the_equator": {"site": _ring((-88.75, 1e-308), (1e-243, 1e-308), (1e-243, 44.0697), (-88.75, 44.0697))},
    # A square foot in the Village, disturbing from Russia to the Atlantic: GEOS cannot overlay it.
    "disturbed_continent": {
        "site": _square(-88.720001, 44.129999, 2e-6),
        "disturbed": _ring((37.8, 59.2), (0.0, -10.7), (-32.8, 0.0), (0.0, 19.8)),
    },
    "disturbed_across_the_pacific": {
        "site": _square(-88.68, 44.1041, 1e-4),
        "disturbed": _ring((158.66, -88.75), (180.0, -88.75), (180.0, 44.576), (158.66, 44.576)),
    },
}


@pytest.mark.parametrize("inputs", list(REACHING_FAR.values()), ids=list(REACHING_FAR))
def test_polygons_reaching_far_past_the_zone_are_refused_not_a_server_error(inputs, screening_parts) -> None:
    from esc_gis.errors import RequestError
    from esc_gis.serve.screen_request import Limits, screen_request

    layers, prof = screening_parts
    with pytest.raises(RequestError, match=r"reach far outside the area NAD83.2011. / WISCRS .* is made for"):
        screen_request(inputs, layers=layers, profile=prof, limits=Limits())


@pytest.mark.parametrize("name", list(REACHING_FAR))
def test_the_service_refuses_them_with_a_400_saying_why(live: str, name: str) -> None:
    inputs = REACHING_FAR[name]
    status, _, answer = post_screen(live, inputs["site"], **{k: v for k, v in inputs.items() if k != "site"})
    assert (status, answer["code"]) == (400, "InvalidParameterValue")
    assert "reach far outside the area" in answer["description"] and "Fix:" in answer["description"]


def test_a_far_site_of_ordinary_size_still_gets_does_not_apply(screening_parts) -> None:
    """The refusal is for polygons that cannot be measured, not for sites far away ("does not apply")."""
    from esc_gis.serve.screen_request import Limits, screen_request

    layers, prof = screening_parts
    answer = screen_request({"site": _square(10.0, 50.0, 0.001)}, layers=layers, profile=prof, limits=Limits())
    assert (answer["permit"], answer["measured"]["disturbed_sqft"]) == ("not_applicable", None)


@pytest.mark.slow  # about 6 s
def test_the_screening_answers_or_refuses_any_polygon(screening_parts) -> None:
    """Any GeoJSON polygon, valid or not, near or on the far side of the globe: an answer or a RequestError."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from esc_gis.errors import RequestError
    from esc_gis.serve.screen_request import Limits, screen_request

    layers, prof = screening_parts
    anywhere = st.tuples(st.floats(-180, 180), st.floats(-90, 90))
    near = st.tuples(st.floats(-88.9, -88.5), st.floats(44.0, 44.2))

    @st.composite
    def polygons(draw: Any) -> dict[str, Any]:
        if draw(st.booleans()):  # a small square in or near the Village
            side = draw(st.sampled_from([1e-5, 1e-4, 1e-3]))
            return _square(draw(st.floats(-88.75, -88.68)), draw(st.floats(44.09, 44.13)), side)
        points = draw(st.lists(st.one_of(anywhere, near), min_size=3, max_size=6))
        if draw(st.booleans()):  # the box of the first two points: valid, of any size
            (x0, y0), (x1, y1) = points[:2]
            points = [(min(x0, x1), min(y0, y1)), (max(x0, x1), min(y0, y1)), (max(x0, x1), max(y0, y1))]
            points.append((min(x0, x1), max(y0, y1)))
        return _ring(*points)

    answers: Counter[str] = Counter()

    @settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(st.fixed_dictionaries({"site": polygons()}, optional={"disturbed": polygons()}))
    def run(inputs: dict[str, Any]) -> None:
        try:
            answer = screen_request(inputs, layers=layers, profile=prof, limits=Limits())
        except RequestError:
            answers["refused"] += 1
            return
        json.dumps(answer, allow_nan=False)  # JSON, without NaN
        answers[answer["permit"]] += 1

    run()
    assert answers["refused"] and answers["not_applicable"] and answers["required"], answers
