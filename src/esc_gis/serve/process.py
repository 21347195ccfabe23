"""The OGC API - Processes ``screen`` process: pygeoapi's plugin around :func:`screen_request`.

Each request is screened in a worker process (a pool of them, each with the layer set and
profile loaded once), so a request that runs past its time limit is stopped by ending its
worker, which the pool replaces (pebble), and the web server's threads never wait on the
GIL of a screening. The process reads its layers and writes nothing: not the registry, not a
file.

A worker is warm before it takes a request: it loads the layers and the profile and screens one
small site of its own (:func:`_warm_up`), so the engine's modules are imported and its layers
read. ``esc-gis serve`` starts the pool and waits for every worker so before it listens
(:func:`start_workers`). The time limit counts the screening only: pebble starts a task's clock
when a warm worker takes it, so neither a worker's start nor its warm-up is counted, and a
worker that replaces one stopped at the limit is warm before it takes the next request.
"""

from __future__ import annotations

__all__ = [
    "PROCESS_METADATA",
    "PublicManager",
    "ScreenProcessor",
    "process_metadata",
    "shutdown_pool",
    "start_pool",
    "start_workers",
]

import multiprocessing
import os
import sys
import threading
import time
import uuid
from concurrent.futures import TimeoutError as FutureTimeout
from http import HTTPStatus
from pathlib import Path
from typing import Any

from pygeoapi.process.base import BaseProcessor, ProcessorExecuteError
from pygeoapi.process.manager.dummy import DummyManager
from pygeoapi.util import JobStatus

from esc_gis.errors import EscGisError, RequestError
from esc_gis.serve.screen_request import Limits
from esc_gis.validate import ACTIVITIES

# Described in place, not by a $ref to schemas.opengis.net: the document must stand alone offline.
_GEOJSON_POLYGON = {
    "type": "object",
    "contentMediaType": "application/geo+json",
    "required": ["type"],
    "properties": {"type": {"type": "string", "enum": ["Polygon", "MultiPolygon", "Feature", "FeatureCollection"]}},
}
_FINDING = {
    "type": "object",
    "properties": {k: {"type": "string"} for k in ("code", "section", "basis", "message")},
    "required": ["code", "section", "basis", "message"],
}

#: The process description pygeoapi publishes at /processes/screen.
PROCESS_METADATA: dict[str, Any] = {
    "version": "1.0.0",
    "id": "screen",
    "title": "Do I need an erosion-control permit?",
    "description": (
        "Screens a construction site against the ordinance, as `esc-gis screen` does: the screening's "
        "answer, every finding with its section and basis, and the areas measured. Geometry is GeoJSON in "
        "longitude/latitude (WGS 84). A screening, not a permit decision."
    ),
    "jobControlOptions": ["sync-execute"],
    "keywords": ["erosion control", "permit", "screening"],
    "links": [],
    "inputs": {
        "site": {
            "title": "Site",
            "description": "The site: a GeoJSON Polygon, MultiPolygon, Feature or FeatureCollection.",
            "schema": _GEOJSON_POLYGON,
            "minOccurs": 1,
            "maxOccurs": 1,
        },
        "disturbed": {
            "title": "Area to be disturbed",
            "description": "The land to be disturbed, the same kinds of GeoJSON; default the whole site.",
            "schema": _GEOJSON_POLYGON,
            "minOccurs": 0,
            "maxOccurs": 1,
        },
        "activity": {
            "title": "Activity",
            # Replaced by the profile's words for each activity (process_metadata).
            "description": "construction (default), agricultural_activity, agricultural_production or silviculture.",
            "schema": {"type": "string", "enum": list(ACTIVITIES)},
            "minOccurs": 0,
            "maxOccurs": 1,
        },
    },
    "outputs": {
        "screening": {
            "title": "Screening",
            "description": (
                "permit (the screening's reading of the ordinance's thresholds, not the office's decision), "
                "applicability, jurisdiction, findings, measured areas, notes for the resident and the notice."
            ),
            "schema": {
                "type": "object",
                "contentMediaType": "application/json",
                "properties": {
                    "permit": {"type": "string", "enum": ["required", "not_required", "not_applicable"]},
                    "findings": {"type": "array", "items": _FINDING},
                    "measured": {"type": "object"},
                    "notice": {"type": "string"},
                },
            },
        }
    },
    "example": {
        "inputs": {
            "site": {  # inside the Village of Winneconne (a test screens it there)
                "type": "Polygon",
                "coordinates": [
                    [[-88.7219, 44.0997], [-88.7215, 44.0997], [-88.7215, 44.1], [-88.7219, 44.1], [-88.7219, 44.0997]]
                ],
            }
        }
    },
}


def process_metadata(profile: str | None) -> dict[str, Any]:
    """Return :data:`PROCESS_METADATA` with the profile's words for each activity.

    Raises
    ------
    ProfileError
        If the profile cannot be read or lacks a ``service_activity_*`` finding.
    """
    import copy

    from esc_gis.profile import load_profile

    prof = load_profile(profile)
    meta = copy.deepcopy(PROCESS_METADATA)
    words = " ".join(prof.finding(f"service_activity_{a}").message for a in ACTIVITIES)
    meta["inputs"]["activity"]["description"] = f"How you describe the land; the office decides. {words}"
    return meta


class BadInput(ProcessorExecuteError):
    """A refused input: HTTP 400, OGC ``InvalidParameterValue``, the message as the toolkit wrote it."""

    http_status_code = HTTPStatus.BAD_REQUEST
    ogc_exception_code = "InvalidParameterValue"


class TooLong(ProcessorExecuteError):
    """A screening stopped at its time limit: HTTP 503, so a client may try again later."""

    http_status_code = HTTPStatus.SERVICE_UNAVAILABLE
    ogc_exception_code = "ServiceUnavailable"


# Each worker process's layer set and profile, loaded once by _init_worker.
_WORKER: dict[str, Any] = {}
_POOLS: dict[tuple[Any, ...], Any] = {}
#: Each pool's count of workers warmed (shared with them) and its number of workers.
_READY: dict[tuple[Any, ...], tuple[Any, int]] = {}
_POOL_LOCK = threading.Lock()
#: The side of the warm-up's square site in the measuring CRS's units (20 ft in the Village's: under any threshold).
_WARM_UP_SIDE = 20.0


def _init_worker(layers: str | None, profile: str | None, limits: dict[str, Any], ready: Any = None) -> None:
    """Load the layer set and profile, warm up, and count this worker in ``ready`` (a shared integer)."""
    from esc_gis.layers import load_layers
    from esc_gis.profile import load_profile

    prof = load_profile(profile)
    _WORKER.update(layers=load_layers(layers, profile=prof), profile=prof, limits=Limits(**limits))
    _warm_up()
    if ready is not None:
        with ready.get_lock():
            ready.value += 1


def _warm_up() -> None:
    """Screen one small square inside the jurisdiction, as a request would, and forget the answer.

    A worker's first screening imported the engine and read its layers' files for the first
    time: 0.4 s against 0.1 s for the next, so a short ``--timeout`` stopped every first
    screening, and every worker that replaced a stopped one was cold again. Any fault here is
    left for a real request to meet and report: the warm-up only loads.
    """
    import json

    import geopandas as gpd
    import shapely

    from esc_gis.serve.screen_request import GEOJSON_CRS, screen_request

    start = time.perf_counter()
    ls = _WORKER["layers"]
    try:
        corner = ls.jurisdiction.representative_point()
        square = shapely.box(corner.x, corner.y, corner.x + _WARM_UP_SIDE, corner.y + _WARM_UP_SIDE)
        site = json.loads(shapely.to_geojson(gpd.GeoSeries([square], crs=ls.crs).to_crs(GEOJSON_CRS).iloc[0]))
        screen_request({"site": site}, layers=ls, profile=_WORKER["profile"], limits=Limits())
    except Exception:  # only a warm-up: the request that meets the fault reports it
        pass
    _WORKER["warm_up_s"] = time.perf_counter() - start


def _worker_state() -> dict[str, Any]:
    """Return what a worker holds (for the tests and the benchmark): its pid, layers, warm-up and engine."""
    return {
        "pid": os.getpid(),
        "layers": "layers" in _WORKER,
        "warm_up_s": _WORKER.get("warm_up_s"),
        "engine_imported": "esc_gis.screening" in sys.modules,
    }


def _run(data: dict[str, Any]) -> tuple[str, Any, float]:
    """Screen in the worker; return ("ok", answer, s) or ("refused", message, s): errors cross processes as text.

    ``s`` is the seconds the screening took in the worker: pebble's watcher notices a timeout only
    at its next look (a tenth of a second apart), so a screening that ends past the limit between
    two looks is caught by the caller from this figure, and the limit holds to the letter.
    """
    from esc_gis.serve.screen_request import screen_request

    start = time.perf_counter()
    try:
        answer = screen_request(data, layers=_WORKER["layers"], profile=_WORKER["profile"], limits=_WORKER["limits"])
        return "ok", answer, time.perf_counter() - start
    except (RequestError, EscGisError) as err:
        return "refused", str(err), time.perf_counter() - start


def _key(layers: str | None, profile: str | None, limits: dict[str, Any]) -> tuple[Any, ...]:
    return (layers, profile, tuple(sorted(limits.items())))


def _pool(layers: str | None, profile: str | None, limits: dict[str, Any]) -> Any:
    from pebble import ProcessPool

    key = _key(layers, profile, limits)
    with _POOL_LOCK:
        if key not in _POOLS:
            workers = int(os.environ.get("ESC_GIS_SERVE_WORKERS", "0")) or max(1, min(4, os.cpu_count() or 1))
            # Spawned, not forked: a forked worker inherits GDAL's thread pool without its threads
            # (the server read the DEM with NUM_THREADS at start-up) and hangs on its next DEM read.
            context = multiprocessing.get_context("spawn")
            ready = context.Value("i", 0)
            _POOLS[key] = ProcessPool(
                max_workers=workers,
                initializer=_init_worker,
                initargs=(layers, profile, limits, ready),
                context=context,
            )
            _READY[key] = (ready, workers)
        return _POOLS[key]


def _noop() -> None:
    """Nothing: scheduling it makes pebble start the pool's workers."""


def start_pool(layers: str | None, profile: str | None, limits: dict[str, Any], *, wait_s: float = 300.0) -> int:
    """Start the screening's workers and wait until each is warm (:func:`_init_worker`) or ``wait_s`` passed.

    Parameters
    ----------
    layers, profile : str, optional
        The layer set's manifest and the profile, as the ``screen`` process is configured.
    limits : dict
        The :class:`Limits` fields, as configured.
    wait_s : float
        The longest to wait; then the service starts all the same, and a request waits for a warm worker.

    Returns
    -------
    int
        How many workers are warm.
    """
    pool = _pool(layers, profile, limits)
    ready, workers = _READY[_key(layers, profile, limits)]
    pool.schedule(_noop)  # pebble starts every worker with the pool's first task
    deadline = time.monotonic() + wait_s
    while ready.value < workers and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(min(ready.value, workers))


def start_workers(config: str | os.PathLike[str], *, wait_s: float = 300.0) -> int:
    """Start and warm the worker pool of the ``screen`` process of a pygeoapi configuration file.

    The pool is the one :class:`ScreenProcessor` uses: the same layers, profile and limits, read
    from the same file pygeoapi reads.

    Returns
    -------
    int
        How many workers are warm (0 if the configuration has no ``screen`` process).

    Raises
    ------
    OSError, yaml.YAMLError
        If the configuration cannot be read (the service wrote it a moment before).
    """
    import yaml

    doc = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
    warm = 0
    for resource in (doc.get("resources") or {}).values():
        if not isinstance(resource, dict) or resource.get("type") != "process":
            continue
        processor = resource.get("processor") or {}
        if processor.get("name") == f"{__name__}.ScreenProcessor":
            limits = dict(processor.get("limits") or {})
            warm += start_pool(processor.get("layers"), processor.get("profile"), limits, wait_s=wait_s)
    return warm


def shutdown_pool() -> None:
    """Stop every worker (the server calls this on its way out)."""
    with _POOL_LOCK:
        for pool in _POOLS.values():
            pool.stop()
            pool.join(timeout=5)
        _POOLS.clear()
        _READY.clear()
    _end_stray_workers()


def _end_stray_workers(grace_s: float = 3.0) -> None:
    """End any pool worker still alive after the pools were stopped.

    At the interpreter's exit multiprocessing removes the pools' semaphores *before* it waits
    for the children left, so a worker caught starting then fails to unpickle its channel's
    lock and prints a traceback into the service's log (seen once in CI after a SIGTERM, not
    reproduced since). pebble stops the workers it knows; this ends any other, by its name,
    so that no worker outlives the service whatever started it.
    """
    from pebble.pool.process import WORKERS_NAME

    stray = [p for p in multiprocessing.active_children() if p.name == WORKERS_NAME]
    for proc in stray:
        proc.terminate()
    for proc in stray:
        proc.join(grace_s)
        if proc.is_alive():  # SIGTERM can be lost between fork and exec; SIGKILL cannot
            proc.kill()
            proc.join()


class ScreenProcessor(BaseProcessor):
    """pygeoapi's ``screen`` process.

    Parameters
    ----------
    processor_def : dict
        From the configuration (:func:`esc_gis.serve.config.prepare_service`): ``layers`` and
        ``profile`` (paths; default the Village's) and ``limits`` (:class:`Limits` fields).
    """

    def __init__(self, processor_def: dict[str, Any]) -> None:
        super().__init__(processor_def, process_metadata(processor_def.get("profile")))
        self.layers = processor_def.get("layers")
        self.profile = processor_def.get("profile")
        self.limits = dict(processor_def.get("limits") or {})

    def execute(self, data: dict[str, Any], outputs: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Screen the request's site; return ``("application/json", answer)``.

        Raises
        ------
        BadInput
            HTTP 400 for a refused input, with the reason and the fix.
        TooLong
            HTTP 503 when the screening ran past the time limit and was stopped.
        """
        seconds = float(Limits(**self.limits).seconds)
        # pebble starts the clock when a worker takes the task, and a worker takes none before it is
        # warm (_init_worker): the limit counts the screening, never a worker's start.
        future = _pool(self.layers, self.profile, self.limits).schedule(_run, args=(data,), timeout=seconds)
        msg = f"The screening took longer than {seconds:g} s and was stopped. Try a simpler polygon, or later."
        try:
            status, answer, took = future.result()
        except FutureTimeout:
            raise TooLong(msg, user_msg=msg) from None
        except Exception:
            failed = "The screening failed on the server. Please try again; if it persists, tell the office."
            raise ProcessorExecuteError(failed, user_msg=failed) from None
        if took > seconds:  # ended past the limit between two looks of pebble's watcher
            raise TooLong(msg, user_msg=msg)
        if status != "ok":
            raise BadInput(answer, user_msg=answer)
        return "application/json", answer

    def __repr__(self) -> str:
        return "<ScreenProcessor> screen"


class PublicManager(DummyManager):
    """pygeoapi's process manager for a public endpoint: synchronous, keeping no job, calling back no URL.

    pygeoapi's Dummy manager would turn every refusal into a 400 and would call the
    ``subscriber`` URLs a request names, from the server: a way to make it reach any address
    (server-side request forgery). This one refuses ``subscriber`` and lets each refusal keep
    its own status (400 for bad input, 503 past the time limit).
    """

    def execute_process(
        self,
        process_id: str,
        data_dict: dict[str, Any],
        execution_mode: Any = None,
        requested_outputs: dict[str, Any] | None = None,
        subscriber: Any = None,
        requested_response: str | None = "raw",
    ) -> tuple[str, str, Any, JobStatus, dict[str, str] | None]:
        """Run the process now and return pygeoapi's (job id, media type, outputs, status, headers).

        Raises
        ------
        BadInput
            If the request names a ``subscriber`` (callback URLs), or the process refuses its input.
        TooLong
            If the process ran past its time limit.
        """
        if subscriber is not None:
            msg = "This service calls back no URL: leave 'subscriber' out; the answer comes in the response."
            raise BadInput(msg, user_msg=msg)
        processor = self.get_processor(process_id)
        media_type, outputs = processor.execute(data_dict, outputs=requested_outputs)
        if requested_response == "document":
            outputs = {"outputs": [outputs]}
        headers = {"Preference-Applied": "wait"} if execution_mode is not None else None
        return str(uuid.uuid1()), media_type, outputs, JobStatus.successful, headers
