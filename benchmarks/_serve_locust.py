"""The locustfile of ``bench_serve.py`` (run by it; see README.md): one scenario per run.

Read from the environment the driver sets:

- ``BENCH_SCENARIO``: ``items`` (GET the permits collection), ``screen`` (POST a screening,
  cycling through the sites) or ``static`` (GET the saved copy of the collection's answer);
- ``BENCH_PATH``: the path requested; ``BENCH_BYTES``: the exact size a GET must answer;
- ``BENCH_SITES``: a JSON file of GeoJSON sites (``screen``);
- ``BENCH_MAX_REQUESTS``: the run stops after this many requests, whatever ``--run-time`` says;
- ``BENCH_OUT``: where the raw figures are written when locust quits.

Every user requests again as soon as its answer arrives (no think time): the figures are the
server's capacity, not a model of real visitors. Requests made before every user has started
are not measured. Each response time is kept (ms), so the driver computes exact percentiles
rather than locust's rounded ones.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

import gevent
from locust import FastHttpUser, constant, events, task

SCENARIO = os.environ["BENCH_SCENARIO"]
PATH = os.environ["BENCH_PATH"]
BYTES = int(os.environ.get("BENCH_BYTES", "0"))
MAX_REQUESTS = int(os.environ["BENCH_MAX_REQUESTS"])
OUT = Path(os.environ["BENCH_OUT"])
BODIES = (
    [json.dumps({"inputs": {"site": s}}).encode() for s in json.loads(Path(os.environ["BENCH_SITES"]).read_text())]
    if SCENARIO == "screen"
    else []
)
_next_body = itertools.cycle(BODIES).__next__ if BODIES else None

_state: dict[str, Any] = {"env": None, "t0": None, "t1": None, "seen": 0, "stopping": False}
_times_ms: list[float] = []
_errors: dict[str, int] = {}


@events.init.add_listener
def _init(environment: Any, **_: Any) -> None:
    _state["env"] = environment


@events.spawning_complete.add_listener
def _spawned(user_count: int, **_: Any) -> None:
    _state["t0"] = time.perf_counter()


@events.request.add_listener
def _request(response_time: float, exception: BaseException | None, **_: Any) -> None:
    _state["seen"] += 1
    if _state["t0"] is not None and _state["t1"] is None:
        if exception is None:
            _times_ms.append(float(response_time))
        else:
            key = str(exception)[:120]
            _errors[key] = _errors.get(key, 0) + 1
    if _state["seen"] >= MAX_REQUESTS and not _state["stopping"]:
        # The request bound: stop as the time bound would (quit outside this event handler).
        _state["stopping"] = True
        _state["t1"] = time.perf_counter()
        gevent.spawn(_state["env"].runner.quit)


@events.test_stop.add_listener
def _stopped(**_: Any) -> None:
    if _state["t1"] is None:
        _state["t1"] = time.perf_counter()


@events.quitting.add_listener
def _write(**_: Any) -> None:
    t0, t1 = _state["t0"], _state["t1"]
    seconds = (t1 - t0) if t0 is not None and t1 is not None else 0.0
    OUT.write_text(
        json.dumps({"times_ms": _times_ms, "errors": _errors, "seconds": seconds, "all_requests": _state["seen"]}),
        encoding="utf-8",
    )


class Visitor(FastHttpUser):
    """One client that asks again as soon as it has its answer."""

    wait_time = constant(0)

    @task
    def ask(self) -> None:
        if _next_body is not None:
            with self.client.post(
                PATH, data=_next_body(), headers={"Content-Type": "application/json"}, catch_response=True
            ) as resp:
                if resp.status_code != 200 or b'"permit"' not in (resp.content or b""):
                    resp.failure(f"screen answered {resp.status_code}")
            return
        with self.client.get(PATH, catch_response=True) as resp:
            if resp.status_code != 200 or len(resp.content or b"") != BYTES:
                resp.failure(f"GET answered {resp.status_code} with {len(resp.content or b'')} bytes, not {BYTES}")
