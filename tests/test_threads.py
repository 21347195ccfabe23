"""The process-wide cap on esc_gis's own threads (a dask task gets one core)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest
import shapely

from esc_gis._threads import at_most, cap
from esc_gis.measure import overlay


def test_at_most_caps_the_threads_inside_the_block_only() -> None:
    assert cap(4) == 4
    with at_most(1):
        assert cap(4) == 1 and cap(0) == 1
        with at_most(3):  # never looser than the cap around it
            assert cap(4) == 1
        assert cap(4) == 1
    with at_most(3):
        assert cap(4) == 3 and cap(2) == 2
        with at_most(2):
            assert cap(4) == 2
    assert cap(4) == 4
    with pytest.raises(ValueError, match="at least one thread"), at_most(0):
        pass


def test_gdal_threads_follow_the_cap() -> None:
    from esc_gis._threads import gdal_threads

    assert gdal_threads("ALL_CPUS") == "ALL_CPUS" and gdal_threads(3) == "3"
    with at_most(1):
        assert gdal_threads(3) == "1"


def test_each_thread_has_its_own_cap() -> None:
    """Two tasks of one dask worker on threads: one leaving its block does not lift the other's cap."""
    import threading

    inside, left, seen = threading.Event(), threading.Event(), {}

    def task_a() -> None:
        with at_most(1):
            inside.set()
            left.wait(5)
            seen["a"] = cap(4)

    def task_b() -> None:
        inside.wait(5)
        with at_most(2):
            seen["b_inside"] = cap(4)
        seen["b_after"] = cap(4)
        left.set()

    threads = [threading.Thread(target=task_a), threading.Thread(target=task_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": 1, "b_inside": 2, "b_after": 4}
    assert cap(4) == 4


def test_overlays_run_on_one_thread_under_the_cap(monkeypatch) -> None:
    seen = []

    class Pool:  # a thread pool that records being used
        def __init__(self, max_workers: int) -> None:
            seen.append(max_workers)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, fn, *its):
            return map(fn, *its)

    monkeypatch.setattr(overlay, "THREADS", 2)
    monkeypatch.setattr(overlay, "ThreadPoolExecutor", Pool)
    a = np.array([shapely.box(0, 0, 2, 2)] * 10_000)
    b = np.array([shapely.box(1, 1, 3, 3)] * 10_000)
    with at_most(1):
        one = overlay.parallel(shapely.intersection, a, b)
    assert seen == []  # not split at all
    two = overlay.parallel(shapely.intersection, a, b)
    assert seen == [2] and shapely.equals(one, two).all()


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="fork is POSIX only")
def test_a_forked_child_reads_the_dem_without_waiting_on_the_parents_gdal_threads(tmp_path) -> None:
    """multiprocessing forks on Linux; GDAL's pool of decoding threads does not survive it (the child hung)."""
    import os
    import time

    import rasterio
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    from esc_gis.terrain import open_dem
    from esc_gis.terrain.slope import iter_slope_blocks

    # Tiled and compressed, as county lidar is: GDAL decodes such tiles on its thread pool.
    z = np.add.outer(np.arange(600.0), np.arange(600.0)).astype(np.float32)
    dem = tmp_path / "dem.tif"
    profile = {"driver": "GTiff", "width": 600, "height": 600, "count": 1, "dtype": "float32", "crs": "EPSG:7594"}
    tiles = {"tiled": True, "blockxsize": 128, "blockysize": 128, "compress": "deflate"}
    with rasterio.open(dem, "w", transform=from_origin(0, 3000, 5, 5), **profile, **tiles) as dst:
        dst.write(z, 1)
    info = open_dem(dem, z_unit="us_ft")
    assert sum(b.size for _, b in iter_slope_blocks(info, window=Window(0, 0, 600, 300))) == 600 * 300
    pid = os.fork()
    if pid == 0:  # the child: read another window, exit 0 if it could
        n = sum(b.size for _, b in iter_slope_blocks(info, window=Window(0, 300, 600, 300)))
        os._exit(0 if n == 600 * 300 else 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung reading the DEM")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux's")
def test_few_malloc_arenas_is_glibcs_and_leaves_a_users_setting_alone() -> None:
    """The screen command caps glibc's arenas (a million parcels: 600+ MB to about 550), unless the user chose."""
    code = "from esc_gis._threads import few_malloc_arenas; print(few_malloc_arenas())"
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    taken = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    glibc = platform.libc_ver()[0] == "glibc"
    assert taken.stdout.strip() == str(glibc)
    chosen = subprocess.run(
        [sys.executable, "-c", code], env={**env, "MALLOC_ARENA_MAX": "8"}, capture_output=True, text=True, check=True
    )
    assert chosen.stdout.strip() == "False"
