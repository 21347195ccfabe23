"""Operating the service (issue 35, item 5): a quiet log in normal use, and a clean stop on SIGTERM or SIGINT.

A real ``esc-gis serve`` answers the requests a day brings (pages, items, an unknown id, a bad
bbox, a body that is not JSON, a screening) and its log must hold no traceback and no warning;
stopped by SIGTERM (systemd, ``docker stop``) or SIGINT (Ctrl+C) it must leave no state folder.
"""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import pytest

from esc_gis.serve.app import _quiet_pygeoapi

from .service import fill_registry, get, post_screen, served

#: A small site inside the Village, in longitude/latitude.
SITE = {
    "type": "Polygon",
    "coordinates": [
        [[-88.7602, 44.1109], [-88.7598, 44.1109], [-88.7598, 44.1112], [-88.7602, 44.1112], [-88.7602, 44.1109]]
    ],
}
DAY = [
    "/",
    "/ogc?f=json",
    "/ogc?f=html",
    "/ogc/collections?f=html",
    "/ogc/collections/permits/items?f=html",
    "/ogc/collections/permits/items/1?f=html",
    "/ogc/collections/permits/items/999?f=json",  # 404
    "/ogc/collections/nothing?f=json",  # 404
    "/ogc/collections/permits/items?f=json&bbox=1,2",  # 400
    "/ogc/openapi?f=json",
    "/no/such/page",
]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_day_of_requests_logs_nothing_and_a_stop_leaves_no_state_folder(tmp_path: Path, stop: int) -> None:
    reg = tmp_path / "permits.gpkg"
    fill_registry(str(reg), n=2)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    logs: list[str] = []
    with served(str(reg), env={"TMPDIR": str(scratch)}, stop=stop, logs=logs) as base:
        statuses = [get(base + path)[0] for path in DAY]
        assert post_screen(base, SITE)[0] == 200
        bad = get(
            f"{base}/ogc/processes/screen/execution",
            data=b"{not json",
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        assert bad[0] == 400
        assert [p for p in scratch.iterdir() if p.name.startswith("esc_gis_serve_")]  # the state folder, while serving
    assert statuses.count(200) == 7 and sorted(set(statuses)) == [200, 400, 404]
    log = logs[0]
    assert "Traceback" not in log and "WARNING" not in log and "ERROR" not in log, log[-3000:]
    assert not [p for p in scratch.iterdir() if p.name.startswith("esc_gis_serve_")], "the state folder was left"


@pytest.mark.parametrize(
    ("root", "expected"),
    [(logging.WARNING, logging.CRITICAL), (logging.INFO, logging.WARNING), (logging.DEBUG, logging.DEBUG)],
    ids=["default", "-v", "-vv"],
)
def test_pygeoapis_log_opens_with_v(root: int, expected: int) -> None:
    before_root, before = logging.getLogger().level, logging.getLogger("pygeoapi").level
    try:
        logging.getLogger().setLevel(root)
        _quiet_pygeoapi()
        assert logging.getLogger("pygeoapi").level == expected
    finally:
        logging.getLogger().setLevel(before_root)
        logging.getLogger("pygeoapi").setLevel(before)


def test_a_pool_worker_still_alive_when_the_pools_stop_is_ended(tmp_path: Path) -> None:
    # A worker pebble does not know of (one caught starting as the service stops) would outlive
    # the pools' semaphores and print a traceback at exit; shutdown_pool ends it by its name.
    import multiprocessing
    import time

    from pebble.pool.process import WORKERS_NAME

    from esc_gis.serve.process import shutdown_pool

    ctx = multiprocessing.get_context("spawn")
    stray = ctx.Process(name=WORKERS_NAME, target=time.sleep, args=(60,))
    other = ctx.Process(name="not-a-pool-worker", target=time.sleep, args=(60,))
    stray.start()
    other.start()
    try:
        shutdown_pool()
        assert not stray.is_alive()
        assert other.is_alive(), "only the pool's workers are ended"
    finally:
        for proc in (stray, other):
            proc.kill()
            proc.join()
