"""A start of ``esc-gis serve`` is quiet and warm, on both back ends.

Quiet: its log holds no warning, and the permits' dates are typed as dates (``string``,
``format: date``) in the queryables and the schema. Warm: every screening worker has loaded the
layer set and screened once before the service listens, so the first screening is as quick as
the next. ``--timeout`` counts the screening, never a worker's start.
"""

from __future__ import annotations

import json
import time

import geopandas as gpd
import pytest
import shapely

from esc_gis.serve.process import ScreenProcessor, _pool, _worker_state, shutdown_pool, start_pool

from .service import CRS, DEMO_LAYERS, fill_registry, get, pg_schema, post_screen, public_login, served

#: Inside the Village on the demo layer set (WISCRS feet): a 100 ft square, 10,000 sq ft.
INSIDE = (744_700.0, 503_200.0)
DATES = ("received_on", "issued_on", "final_on")


def lonlat(geom: shapely.Geometry) -> dict:
    return json.loads(shapely.to_geojson(gpd.GeoSeries([geom], crs=CRS).to_crs("OGC:CRS84").iloc[0]))


SMALL = shapely.box(INSIDE[0], INSIDE[1], INSIDE[0] + 100, INSIDE[1] + 100)


@pytest.fixture(params=["gpkg", "postgis"])
def registry(request, tmp_path):
    """The registry to serve, filled by fill_registry, on each back end (PostGIS through its reader login)."""
    if request.param == "gpkg":
        path = tmp_path / "permits.gpkg"
        fill_registry(str(path))
        yield str(path)
        return
    target = pg_schema(request.getfixturevalue("pg_url"))
    fill_registry(target)
    with public_login(target) as reader:
        yield reader


def test_a_start_logs_no_warning_and_types_the_dates_as_dates(registry):
    """pygeoapi's SQL provider logged "Unsupported column type DATE" for each date column at each build
    of the provider (26 lines a start on PostGIS); the GeoPackage typed a day as a date-time."""
    logs: list[str] = []
    with served(registry, logs=logs) as base:
        status, _, body = get(f"{base}/ogc/collections/permits/queryables?f=json")
        assert status == 200
        queryables = json.loads(body)["properties"]
        status, _, body = get(f"{base}/ogc/collections/permits/schema?f=json")
        assert status == 200
        schema = json.loads(body)["properties"]
        for name in DATES:
            for doc in (queryables, schema):
                assert (doc[name]["type"], doc[name].get("format")) == ("string", "date"), (name, doc[name])
        feature = json.loads(get(f"{base}/ogc/collections/permits/items?f=json&limit=1")[2])["features"][0]
        assert feature["properties"]["issued_on"] == "2026-11-03"  # a day, as typed
    assert len(logs) == 1
    noisy = [line for line in logs[0].splitlines() if "WARNING" in line or "Unsupported" in line]
    assert noisy == []


def test_the_time_limit_does_not_count_a_workers_start_and_every_worker_is_warm(monkeypatch):
    """A cold pool: the worker's start (spawn, imports, layers, warm-up) takes longer than the 1 s limit,
    and the screening, which takes a fraction of it, is answered all the same. Its worker has loaded
    the layers and screened once (the engine imported) before it took the request."""
    monkeypatch.setenv("ESC_GIS_SERVE_WORKERS", "1")
    limits = {"seconds": 1.0}
    processor = ScreenProcessor({"name": "screen", "layers": str(DEMO_LAYERS), "limits": limits})
    try:
        t0 = time.perf_counter()
        media_type, answer = processor.execute({"site": lonlat(SMALL)})
        took = time.perf_counter() - t0
        assert media_type == "application/json" and answer["permit"] == "required"
        assert took > 1.0  # the worker's start was longer than the limit: it was not counted
        assert start_pool(str(DEMO_LAYERS), None, limits, wait_s=60) == 1  # the same pool: every worker warm
        state = _pool(str(DEMO_LAYERS), None, limits).schedule(_worker_state).result(timeout=60)
        assert state["layers"] and state["engine_imported"] and state["warm_up_s"] > 0
    finally:
        shutdown_pool()


def test_the_first_screening_is_quick_and_a_small_timeout_stops_only_a_long_one(tmp_path):
    """The service listens once its workers are warm: the first screening is within 2x the slowest of the
    next five (plus half a second for a busy test machine), not the 5 s of a cold worker. With
    ``--timeout 2`` a small site (a tenth of a second) is answered every time; a site of 40,000 parts
    (6 s and more) is stopped with a 503; the worker that replaces the stopped one is warm."""
    reg = tmp_path / "permits.gpkg"
    fill_registry(str(reg), n=1)
    parts = [
        shapely.box(744_000.0 + i * 25, 502_000.0 + j * 25, 744_010.0 + i * 25, 502_010.0 + j * 25)
        for i in range(200)
        for j in range(200)
    ]
    many = lonlat(shapely.MultiPolygon(parts))
    bounds = ("--timeout", "2", "--max-vertices", "1000000", "--max-body-bytes", "50000000")
    with served(str(reg), *bounds) as base:
        seconds = []
        for _ in range(6):
            t0 = time.perf_counter()
            status, _, answer = post_screen(base, lonlat(SMALL))
            seconds.append(time.perf_counter() - t0)
            assert status == 200 and answer["permit"] == "required"
        first, steady = seconds[0], seconds[1:]
        assert first <= 2 * max(steady) + 0.5, seconds
        status, _, doc = post_screen(base, many)
        assert status == 503 and doc["code"] == "ServiceUnavailable" and "longer than 2 s" in doc["description"]
        for _ in range(3):
            status, _, answer = post_screen(base, lonlat(SMALL))
            assert status == 200 and answer["permit"] == "required"
