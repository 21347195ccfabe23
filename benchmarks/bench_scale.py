"""Benchmark how screening scales: 10k, 100k and 1M synthetic parcels, three engines (issue 26).

What it measures
----------------
For each size N (``--sizes``, default 10000,100000,1000000) the script writes, once, into a
work folder (``--out-dir``; ``--keep`` keeps the files and reuses them on the next run):

parcels
    N jittered quadrilaterals around the Village (mean 0.375 acre, 10 % in common plans of
    2-8 neighbours, serpentine file order): ``bench_screen.task_generate``, as a GeoPackage
    in EPSG:3071 (WTM, metres), as counties ship them; the screen reprojects to EPSG:7594.
layer set
    a synthetic jurisdiction covering ``--jurisdiction-share`` (default half) of the parcels'
    square (a wobbly disc of 512 vertices), so the measurements run on a fixed share of the
    parcels at every size; ``--waters-per-parcel`` (default 0.01: 100 waters per 10,000
    parcels, about a real county's density) synthetic waters over the parcels' square
    (streams and channels as lines, wetlands and ponds as polygons:
    ``bench_screen.task_generate_waters``), so protective areas are measured; and one DEM.
DEM
    one GeoTIFF for every size, covering the largest size's parcels, in EPSG:7594 with 10 ft
    cells, float32, tiled 256 x 256, DEFLATE with the floating-point predictor, elevations
    in US survey feet rounded to 1/16 ft (about 2 cm, a LiDAR DEM's precision; the rounding
    is what lets it compress to about 110 MB at 1M parcels). The terrain is a sum of waves
    whose slopes reach about 35 %; the share of cells at 20 % or more is printed.

Then, each in a fresh Python process (peaks never mix):

floor
    ``pyogrio.read_dataframe(IN, use_arrow=True)`` + ``pyogrio.write_dataframe`` of the same
    frame to a new .gpkg (``bench_screen.task_floor``): the I/O no screening can beat.
whole
    ``esc_gis.screening.screen_run(IN, layers=...)`` + ``esc_gis.io.write_layer``: the
    whole-file run. Skipped above ``--whole-max`` parcels (default 100,000): at 1M it holds
    the layer, its measurements and its result at once, several GB (issue 26 measured 551 MB
    at 100k and memory growing with the input).
auto
    ``esc-gis screen IN --layers ... -o OUT.gpkg --quiet`` with no other option, in process
    (``cli.main``): above ``esc_gis.screening.stream.STREAM_ABOVE_ROWS`` (50,000) features it
    streams by itself, in batches of 50,000 (issue 37: its peak memory at 1M).
stream
    ``esc_gis.screening.stream.screen_to_file(IN, OUT.gpkg, batch_rows=--batch-rows)`` (default 50,000).
shuffled
    the same on the same parcels written again in a random order (``--seed``; written once, as
    ``parcels_N_shuffled.gpkg``): the run finds the file not in spatial order and batches it in
    Hilbert order, writing the rows back in the file's order (issue 37: its time over stream's).
dask
    the same with ``engine=dask_engine(scheduler=...)`` on a ``LocalCluster`` of
    ``--dask-workers`` (default 2) worker processes started by the benchmark exactly as
    ``dask_engine(workers=2)`` starts its own (one thread each, loopback), so that the
    workers' peaks can be read before the cluster closes. The time includes starting the
    cluster. Peak memory: the driver's own ``VmHWM``, and each worker's ``VmHWM`` read in the
    worker (``client.run``); the table shows driver + the sum of the workers. The scheduler and
    the nannies run in the driver's process (LocalCluster), so its peak counts them; other
    child processes (multiprocessing's resource tracker) are listed apart in the JSON. CPU
    seconds: the run's ``time.process_time()`` (imports excluded; dask: the driver's, with the
    cluster's start, plus each worker's from the cluster's start, so with the workers' import
    of esc_gis on their first batch).

``--repeat N`` runs every task N times, in rounds (floor, engines, floor_out, then again), so
that a busy spell on a shared machine falls on every engine alike; the median run is reported
(seconds shown as ``median (min-max)``) and the targets use the medians.

Each screened run reports seconds, peak RSS, parcels per second, and counts read back from
its output (rows, permit required, parcels with steep and with protective-area disturbance)
so the engines can be seen to give the same answers. Peak RSS is ``VmHWM`` of
``/proc/self/status``, taken before the counts are read back.

The summary lists the issue's targets, each marked met or not: 1M stream / 100k stream
time <= 11x; 1M stream / 1M floor <= 8x; 1M peak memory < 2 GB (stream, and dask's driver +
workers); dask on 2 workers >= 1.5x faster than stream at 1M; and issue 37's: 1M auto peak
under 1.5 GB; 1M shuffled time at most 1.3x stream's on the ordered file; 1M dask CPU-seconds
a row (driver + workers) at most 1.25x the single process's. ``--cprofile K`` adds the top K
functions of one streamed run at ``--cprofile-size`` (default 100,000).

How to run
----------
From the repository root (run by hand; tests never run it)::

    .venv/bin/python benchmarks/bench_scale.py --out-dir out/scale --keep --json out/scale.json
    .venv/bin/python benchmarks/bench_scale.py --sizes 10000,100000 --engines stream,dask
    .venv/bin/python benchmarks/bench_scale.py --sizes 100000 --engines stream --cprofile 25
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import (  # benchmarks/ is sys.path[0]
    WORKER,
    peak_rss_mb,
    run_task,
    worker_main,
)
from bench_screen import INPUT_CRS, task_floor, task_generate, task_generate_waters

# Only the standard library at module level (bench_screen's too): the driver stays small,
# the heavy libraries are imported inside the worker tasks.

ENGINES = ("whole", "auto", "stream", "shuffled", "dask")
MEASURE_CRS = "EPSG:7594"  # WISCRS Winnebago, US survey feet: the profile's measuring CRS
DEM_CELL_FT = 10.0
DEM_Z_STEP_FT = 1 / 16  # elevations rounded to this: a LiDAR DEM's precision, and it compresses
DEM_TILE = 256
TARGET_GROWTH = 11.0  # 1M / 100k stream time
TARGET_FLOOR = 8.0  # 1M stream / 1M floor
TARGET_PEAK_MB = 2048.0
TARGET_DASK = 1.5  # stream time / dask time at 1M
TARGET_AUTO_PEAK_MB = 1536.0  # issue 37: `esc-gis screen` with no option, 1M parcels
TARGET_SHUFFLED = 1.3  # issue 37: shuffled parcels' time / the same parcels ordered, 1M
TARGET_DASK_CPU = 1.25  # issue 37: dask CPU-seconds a row / the single process's, 1M
BIG, SMALL = 1_000_000, 100_000

Result = dict[str, Any]


# --------------------------------------------------------------------------------------
# Worker side: runs in a fresh interpreter, one task per process.
# --------------------------------------------------------------------------------------


def terrain_ft(x: Any, y: Any) -> Any:
    """Elevation (US ft) at EPSG:7594 coordinates: rolling ground with steep wave faces.

    The three waves' steepest slopes are about 8 %, 11 % and 16 %; where they add up the
    slope passes 20 % on roughly a tenth of the land, in bands a few hundred feet wide.
    """
    import numpy as np

    two_pi = 2 * np.pi
    return (
        760.0
        + 40.0 * np.sin(two_pi * x / 3000.0) * np.cos(two_pi * y / 4100.0)
        + 9.0 * np.sin(two_pi * (x + y) / 700.0)
        + 5.0 * np.sin(two_pi * (x - 2 * y) / 450.0)
    )


def task_dem(args: dict[str, Any]) -> Result:
    """Write the DEM covering the parcels of ``args["parcels"]`` (tiled, DEFLATE), in strips."""
    import numpy as np
    import pyogrio
    import rasterio
    from rasterio.transform import from_origin
    from rasterio.warp import transform_bounds
    from rasterio.windows import Window

    t0 = time.perf_counter()
    bounds = pyogrio.read_info(args["parcels"])["total_bounds"]
    left, bottom, right, top = transform_bounds(INPUT_CRS, MEASURE_CRS, *bounds, densify_pts=51)
    cell, margin = DEM_CELL_FT, 10 * DEM_CELL_FT
    x0 = math.floor((left - margin) / cell) * cell
    y0 = math.ceil((top + margin) / cell) * cell
    width = math.ceil((right + margin - x0) / cell)
    height = math.ceil((y0 - bottom + margin) / cell)
    path = Path(args["path"])
    path.unlink(missing_ok=True)
    profile = {
        "driver": "GTiff",
        "width": width,
        "height": height,
        "count": 1,
        "dtype": "float32",
        "crs": MEASURE_CRS,
        "transform": from_origin(x0, y0, cell, cell),
        "nodata": -9999.0,
        "tiled": True,
        "blockxsize": DEM_TILE,
        "blockysize": DEM_TILE,
        "compress": "deflate",
        "predictor": 3,
        "BIGTIFF": "IF_SAFER",
    }
    xs = x0 + cell * (np.arange(width) + 0.5)
    steep_cells = 0
    with rasterio.Env(GDAL_CACHEMAX=256 * 2**20), rasterio.open(path, "w", **profile) as dst:
        for r0 in range(0, height, DEM_TILE):
            rows = min(DEM_TILE, height - r0)
            ys = y0 - cell * (r0 + np.arange(rows) + 0.5)
            z = terrain_ft(xs[None, :], ys[:, None])
            z = (np.round(z / DEM_Z_STEP_FT) * DEM_Z_STEP_FT).astype(np.float32)
            gy, gx = np.gradient(z.astype(np.float64), cell)
            steep_cells += int((np.hypot(gx, gy) >= 0.20).sum())
            dst.write(z, 1, window=Window(0, r0, width, rows))
    return {
        "seconds": time.perf_counter() - t0,
        "width": width,
        "height": height,
        "cells": width * height,
        "cell_ft": cell,
        "steep_share": steep_cells / (width * height),
        "mb": path.stat().st_size / 2**20,
        "raw_mb": width * height * 4 / 2**20,
    }


def task_layers(args: dict[str, Any]) -> Result:
    """Write a size's layer set: synthetic jurisdiction, waters, and a manifest naming the DEM."""
    import geopandas as gpd
    import numpy as np
    import pyogrio
    import shapely

    folder = Path(args["folder"])
    n_waters = max(1, round(args["n"] * args["waters_per_parcel"]))
    waters = task_generate_waters(
        {"n": n_waters, "seed": args["seed"], "parcels": args["parcels"], "folder": str(folder)}
    )
    # The jurisdiction: a wobbly disc centred on the parcels' square, scaled to cover
    # `share` of it (the wobble keeps its boundary from following the parcel grid).
    x0, y0, x1, y1 = pyogrio.read_info(args["parcels"])["total_bounds"]
    ang = np.linspace(0, 2 * np.pi, 512, endpoint=False)
    r = 1 + 0.12 * np.sin(5 * ang + 0.7) + 0.04 * np.sin(13 * ang + 2.1)
    unit = shapely.Polygon(np.column_stack([r * np.cos(ang), r * np.sin(ang)]))
    scale = math.sqrt(args["share"] * (x1 - x0) * (y1 - y0) / unit.area)
    ring = np.column_stack([(x0 + x1) / 2 + scale * r * np.cos(ang), (y0 + y1) / 2 + scale * r * np.sin(ang)])
    place = shapely.Polygon(ring)
    jur = gpd.GeoDataFrame({"name": ["Synthetic Village"]}, geometry=[place], crs=INPUT_CRS)
    pyogrio.write_dataframe(jur, folder / "jurisdiction.gpkg", layer="jurisdiction", driver="GPKG")
    (folder / "layers.toml").write_text(
        f'crs = "{MEASURE_CRS}"\n'
        '[jurisdiction]\npath = "jurisdiction.gpkg"\n'
        '[waters]\npath = "waters.gpkg"\nclass_field = "water_class"\nname_field = "name"\n'
        'channel_width_field = "channel_width_ft"\n'
        f'[dem]\npath = "{Path(args["dem"]).resolve().as_posix()}"\nz_unit = "us_ft"\n',
        encoding="utf-8",
    )
    return {
        "waters": waters["n"],
        "water_vertices": waters["vertices"],
        "jurisdiction_sq_km": place.area / 1e6,
        "manifest": str(folder / "layers.toml"),
    }


def _counts(path: Path) -> dict[str, int]:
    """Rows of a screened output, and how many need a permit / touch steep land / a protective area."""
    import pyogrio

    cols = ["permit", "jurisdiction", "steep_disturbed_sqft", "protective_disturbed_sqft"]
    df = pyogrio.read_dataframe(path, layer="screening", columns=cols, read_geometry=False, use_arrow=True)
    return {
        "rows": len(df),
        "permit_required": int((df["permit"] == "required").sum()),
        "not_outside": int((df["jurisdiction"] != "outside").sum()),
        "steep": int((df["steep_disturbed_sqft"].fillna(0) > 0).sum()),
        "protective": int((df["protective_disturbed_sqft"].fillna(0) > 0).sum()),
    }


def _done(seconds: float, cpu0: float, out: Path, extra: dict[str, Any] | None = None) -> Result:
    """A run's figures: peak taken first, then the output's counts (which read it back)."""
    cpu = time.process_time() - cpu0
    res: Result = {"seconds": seconds, "cpu_s": cpu, "peak_mb": peak_rss_mb(), **(extra or {})}
    res["output_mb"] = out.stat().st_size / 2**20
    res["counts"] = _counts(out)
    return res


def task_floor_out(args: dict[str, Any]) -> Result:
    """The issue's I/O floor: read the input and write the *output's* rows and columns with pyogrio alone.

    The screened output (read back first, outside the timing) is what a run must write: its
    text columns make it several times the input's size.
    """
    import pyogrio

    frame = pyogrio.read_dataframe(args["screened"], layer="screening", use_arrow=True)
    out = Path(args["out"])
    out.unlink(missing_ok=True)
    t0 = time.perf_counter()
    pyogrio.read_dataframe(args["input"], use_arrow=True)
    t1 = time.perf_counter()
    pyogrio.write_dataframe(frame, out, layer="screening", driver="GPKG", use_arrow=True)
    t2 = time.perf_counter()
    res = {"seconds": t2 - t0, "read_s": t1 - t0, "write_s": t2 - t1, "rows": len(frame)}
    res["output_mb"] = out.stat().st_size / 2**20
    out.unlink()
    return res


def task_whole(args: dict[str, Any]) -> Result:
    """The whole-file run: ``screen_run`` + ``write_layer``."""
    from esc_gis.io import write_layer
    from esc_gis.screening import screen_run

    out = Path(args["out"])
    out.unlink(missing_ok=True)
    t0, cpu0 = time.perf_counter(), time.process_time()
    r = screen_run(args["input"], layers=args["layers"])
    write_layer(r.result, out, overwrite=True)
    return _done(time.perf_counter() - t0, cpu0, out)


def task_stream(args: dict[str, Any]) -> Result:
    """The streamed run on this process: ``screen_to_file`` in batches."""
    from esc_gis.screening.stream import screen_to_file

    out = Path(args["out"])
    t0, cpu0 = time.perf_counter(), time.process_time()
    run = screen_to_file(args["input"], out, layers=args["layers"], batch_rows=args["batch_rows"], overwrite=True)
    return _done(time.perf_counter() - t0, cpu0, out, {"batches": run.batches, "spatial": run.spatial})


def _status_kb(pid: int, key: str) -> int:
    """A ``/proc/PID/status`` field in kB (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _own_hwm_mb() -> float:
    return _status_kb(os.getpid(), "VmHWM") / 1024.0


def task_auto(args: dict[str, Any]) -> Result:
    """``esc-gis screen IN --layers L -o OUT --quiet``, no other option, in this process: what a user gets."""
    from esc_gis.cli.main import cli

    out = Path(args["out"])
    out.unlink(missing_ok=True)
    t0, cpu0 = time.perf_counter(), time.process_time()
    cli.main(["screen", args["input"], "--layers", args["layers"], "-o", str(out), "--quiet"], standalone_mode=False)
    return _done(time.perf_counter() - t0, cpu0, out)


def task_shuffle(args: dict[str, Any]) -> Result:
    """Write the parcels again in a random order (a layer sorted by owner, or shuffled by an export)."""
    import numpy as np
    import pyogrio

    t0 = time.perf_counter()
    frame = pyogrio.read_dataframe(args["parcels"], use_arrow=True)
    frame = frame.iloc[np.random.default_rng(args["seed"]).permutation(len(frame))].reset_index(drop=True)
    pyogrio.write_dataframe(frame, args["path"], driver="GPKG", use_arrow=True)
    return {"seconds": time.perf_counter() - t0}


def task_shuffled(args: dict[str, Any]) -> Result:
    """The streamed run on the shuffled parcels (batched spatially by itself, written in file order)."""
    return task_stream(args)


def task_dask(args: dict[str, Any]) -> Result:
    """The streamed run on a local dask cluster; the workers' peaks are read before it closes."""
    import psutil
    from distributed import Client

    from esc_gis.screening.engines.dask import dask_engine, local_cluster
    from esc_gis.screening.stream import screen_to_file

    out = Path(args["out"])
    t0, cpu0 = time.perf_counter(), time.process_time()
    # The cluster dask_engine(workers=N) starts, started here so its workers' peaks can be read.
    cluster = local_cluster(args["workers"])
    try:
        t1 = time.perf_counter()
        with Client(cluster) as client:  # the workers' CPU so far (start-up) is not the run's
            workers_cpu0 = client.run(time.process_time)
        engine = dask_engine(cluster.scheduler_address)
        run = screen_to_file(
            args["input"], out, layers=args["layers"], batch_rows=args["batch_rows"], overwrite=True, engine=engine
        )
        seconds = time.perf_counter() - t0
        with Client(cluster) as client:
            workers = client.run(_own_hwm_mb)  # {address: MB}, each read in the worker itself
            worker_pids = set(client.run(os.getpid).values())
            workers_cpu = client.run(time.process_time)
        others = [
            _status_kb(p.pid, "VmHWM") / 1024.0
            for p in psutil.Process().children(recursive=True)
            if p.pid not in worker_pids
        ]
        driver = peak_rss_mb()
        driver_cpu = time.process_time() - cpu0
    finally:
        cluster.close()
    w = list(workers.values())
    res = {
        "seconds": seconds,
        "cluster_start_s": t1 - t0,
        "driver_peak_mb": driver,
        "workers_peak_mb": w,
        "workers_sum_mb": sum(w),
        "workers_max_mb": max(w),
        "other_children_peak_mb": others,
        "driver_cpu_s": driver_cpu,
        "workers_cpu_s": [workers_cpu[a] - workers_cpu0.get(a, 0.0) for a in workers_cpu],
        "cpu_s": driver_cpu + sum(workers_cpu[a] - workers_cpu0.get(a, 0.0) for a in workers_cpu),
        "peak_mb": driver + sum(w),
        "batches": run.batches,
    }
    res["output_mb"] = out.stat().st_size / 2**20
    res["counts"] = _counts(out)
    return res


def task_cprofile(args: dict[str, Any]) -> Result:
    """One streamed run (this process) under cProfile: top functions by own and cumulative time."""
    import cProfile
    import pstats

    from esc_gis.screening.stream import screen_to_file

    prof = cProfile.Profile()
    prof.enable()
    screen_to_file(args["input"], args["out"], layers=args["layers"], batch_rows=args["batch_rows"], overwrite=True)
    prof.disable()
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = pstats.Stats(prof).stats  # type: ignore[attr-defined]

    def name(key: tuple[str, int, str]) -> str:
        filename, line, func = key
        if filename == "~":
            return func
        parts = Path(filename).parts
        short = "/".join(parts[parts.index("site-packages") + 1 :] if "site-packages" in parts else parts[-2:])
        return f"{short}:{line}({func})"

    def top(index: int) -> list[tuple[str, int, float, float]]:
        rows = sorted(raw.items(), key=lambda kv: -kv[1][index])[: args["top"]]
        return [(name(k), v[1], v[2], v[3]) for k, v in rows]

    return {"by_tottime": top(2), "by_cumtime": top(3)}


TASKS: dict[str, Callable[[dict[str, Any]], Result]] = {
    "generate": task_generate,
    "layers": task_layers,
    "dem": task_dem,
    "floor": task_floor,
    "floor_out": task_floor_out,
    "whole": task_whole,
    "stream": task_stream,
    "auto": task_auto,
    "shuffle": task_shuffle,
    "shuffled": task_shuffled,
    "dask": task_dask,
    "cprofile": task_cprofile,
}


# --------------------------------------------------------------------------------------
# Driver side: standard library only.
# --------------------------------------------------------------------------------------


def run_worker(task: str, args: dict[str, Any], tmp: Path) -> Result:
    """Run one task in a fresh interpreter and return its result."""
    return run_task(__file__, task, args, tmp)


def _load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def prepare(args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    """Write (or, with --keep, reuse) the parcels, the DEM and each size's layer set."""
    sizes = args.sizes
    gen: dict[str, Any] = {"sizes": {}}
    inputs = {n: out_dir / f"parcels_{n}.gpkg" for n in sizes}
    for n in sizes:
        if not (args.keep and inputs[n].exists()):
            print(f"generating {n:,} parcels ...", file=sys.stderr)
            g = run_worker(
                "generate",
                {"n": n, "seed": args.seed, "parcel_acres": 0.375, "path": str(inputs[n])},
                out_dir,
            )
            gen["sizes"][str(n)] = {"parcels_s": g["seconds"], "input_mb": g["input_mb"], "square_km": g["square_km"]}
    dem = out_dir / f"dem_{max(sizes)}.tif"
    if not (args.keep and dem.exists()):
        print(f"writing the DEM for {max(sizes):,} parcels ...", file=sys.stderr)
        gen["dem"] = run_worker("dem", {"parcels": str(inputs[max(sizes)]), "path": str(dem)}, out_dir)
    for n in sizes:
        folder = out_dir / f"layers_{n}"
        marker = folder / ".dem"  # the DEM this layer set names (a run of other sizes writes another)
        if not (args.keep and (folder / "layers.toml").exists() and marker.exists() and marker.read_text() == str(dem)):
            print(f"writing the layer set for {n:,} parcels ...", file=sys.stderr)
            lay = run_worker(
                "layers",
                {
                    "n": n,
                    "seed": args.seed,
                    "parcels": str(inputs[n]),
                    "folder": str(folder),
                    "share": args.jurisdiction_share,
                    "waters_per_parcel": args.waters_per_parcel,
                    "dem": str(dem),
                },
                out_dir,
            )
            marker.write_text(str(dem), encoding="utf-8")
            gen["sizes"].setdefault(str(n), {}).update(lay)
    if "shuffled" in args.engines:
        for n in sizes:
            shuffled = out_dir / f"parcels_{n}_shuffled.gpkg"
            if not (args.keep and shuffled.exists()):
                print(f"shuffling {n:,} parcels ...", file=sys.stderr)
                sh = run_worker(
                    "shuffle", {"parcels": str(inputs[n]), "path": str(shuffled), "seed": args.seed}, out_dir
                )
                gen["sizes"].setdefault(str(n), {})["shuffle_s"] = sh["seconds"]
    gen["shuffled"] = {str(n): str(out_dir / f"parcels_{n}_shuffled.gpkg") for n in sizes}
    gen["inputs"] = {str(n): str(p) for n, p in inputs.items()}
    gen["manifests"] = {str(n): str(out_dir / f"layers_{n}" / "layers.toml") for n in sizes}
    return gen


def measure(args: argparse.Namespace, out_dir: Path, gen: dict[str, Any]) -> dict[str, dict[str, Result]]:
    """Run the floor and every engine at every size, each in its own process."""
    runs: dict[str, dict[str, Result]] = {}
    for n in args.sizes:
        key = str(n)
        src, manifest = gen["inputs"][key], gen["manifests"][key]
        runs[key] = {}
        plan: list[tuple[str, dict[str, Any]]] = [("floor", {"input": src, "out": str(out_dir / f"floor_{n}.gpkg")})]
        for engine in args.engines:
            if engine == "whole" and n > args.whole_max:
                runs[key]["whole"] = {"skipped": f"above --whole-max {args.whole_max:,}"}
                continue
            plan.append(
                (
                    engine,
                    {
                        "input": gen["shuffled"][key] if engine == "shuffled" else src,
                        "layers": manifest,
                        "out": str(out_dir / f"screened_{engine}_{n}.gpkg"),
                        "batch_rows": args.batch_rows,
                        "workers": args.dask_workers,
                    },
                )
            )
        screened = [Path(t["out"]) for task, t in plan if task not in ("floor", "shuffled")]
        if screened:  # the floor writes the output's rows: one engine's output, read back
            out = str(out_dir / f"floor_out_{n}.gpkg")
            plan.append(("floor_out", {"input": src, "screened": str(screened[0]), "out": out}))
        tries: dict[str, list[Result]] = {task: [] for task, _ in plan}
        for round_ in range(args.repeat):  # rounds interleave the engines: a busy spell hits each alike
            for task, targs in plan:
                print(f"{n:,} parcels: {task}, run {round_ + 1} (load {_load()}) ...", file=sys.stderr)
                res = run_worker(task, targs, out_dir)
                res["load_after"] = _load()
                tries[task].append(res)
        for task, got in tries.items():
            # The median run (the lower middle of an even count) stands for the task; every time is kept.
            got = sorted(got, key=lambda r: r["seconds"])
            runs[key][task] = {**got[(len(got) - 1) // 2], "all_seconds": [r["seconds"] for r in got]}
        for _, targs in plan:
            Path(targs["out"]).unlink(missing_ok=True)
            Path(targs["out"] + ".run_findings.csv").unlink(missing_ok=True)  # the CLI's (auto) sidecar
    return runs


def targets(runs: dict[str, dict[str, Result]]) -> list[tuple[str, str, str, bool | None]]:
    """The issue's targets: (what, measured, target, met or None when not measured)."""

    def secs(n: int, engine: str) -> float | None:
        r = runs.get(str(n), {}).get(engine)
        return r.get("seconds") if r else None

    out: list[tuple[str, str, str, bool | None]] = []
    s_big, s_small, d_big = secs(BIG, "stream"), secs(SMALL, "stream"), secs(BIG, "dask")
    floor_big = secs(BIG, "floor_out")
    if s_big and s_small:
        g = s_big / s_small
        out.append(("1M stream time / 100k stream time", f"{g:.1f}x", f"<= {TARGET_GROWTH:g}x", g <= TARGET_GROWTH))
    else:
        out.append(("1M stream time / 100k stream time", "not run", f"<= {TARGET_GROWTH:g}x", None))
    if s_big and floor_big:
        f = s_big / floor_big
        label = "1M stream time / 1M I/O floor (read input + write output)"
        out.append((label, f"{f:.1f}x", f"<= {TARGET_FLOOR:g}x", f <= TARGET_FLOOR))
    else:
        out.append(("1M stream time / 1M I/O floor", "not run", f"<= {TARGET_FLOOR:g}x", None))
    for engine, label in (("stream", "1M peak memory, stream"), ("dask", "1M peak memory, dask driver + workers")):
        r = runs.get(str(BIG), {}).get(engine)
        if r and "peak_mb" in r:
            out.append((label, f"{r['peak_mb']:,.0f} MB", f"< {TARGET_PEAK_MB:,.0f} MB", r["peak_mb"] < TARGET_PEAK_MB))
        else:
            out.append((label, "not run", f"< {TARGET_PEAK_MB:,.0f} MB", None))
    auto = runs.get(str(BIG), {}).get("auto")
    want = f"< {TARGET_AUTO_PEAK_MB:,.0f} MB"
    if auto and "peak_mb" in auto:
        got = f"{auto['peak_mb']:,.0f} MB"
        out.append(("1M peak memory, no option (auto)", got, want, auto["peak_mb"] < TARGET_AUTO_PEAK_MB))
    else:
        out.append(("1M peak memory, no option (auto)", "not run", want, None))
    sh_big = secs(BIG, "shuffled")
    if s_big and sh_big:
        f = sh_big / s_big
        out.append(
            ("1M shuffled time / ordered (stream)", f"{f:.2f}x", f"<= {TARGET_SHUFFLED:g}x", f <= TARGET_SHUFFLED)
        )
    else:
        out.append(("1M shuffled time / ordered (stream)", "not run", f"<= {TARGET_SHUFFLED:g}x", None))
    s_r, d_r = runs.get(str(BIG), {}).get("stream"), runs.get(str(BIG), {}).get("dask")
    if s_r and d_r and "cpu_s" in s_r and "cpu_s" in d_r:
        # The same rows both: CPU-seconds a row compare as the totals do.
        c = d_r["cpu_s"] / s_r["cpu_s"]
        got = f"{c:.2f}x ({1e6 * d_r['cpu_s'] / BIG:.0f} vs {1e6 * s_r['cpu_s'] / BIG:.0f} CPU-µs a row)"
        out.append(("1M dask CPU a row / single process", got, f"<= {TARGET_DASK_CPU:g}x", c <= TARGET_DASK_CPU))
    else:
        out.append(("1M dask CPU a row / single process", "not run", f"<= {TARGET_DASK_CPU:g}x", None))
    if s_big and d_big:
        sp = s_big / d_big
        out.append(
            ("dask (2 workers) speed-up over stream, 1M", f"{sp:.2f}x", f">= {TARGET_DASK:g}x", sp >= TARGET_DASK)
        )
    else:
        out.append(("dask (2 workers) speed-up over stream, 1M", "not run", f">= {TARGET_DASK:g}x", None))
    return out


def _spread(r: Result) -> str:
    """`` (min-max)`` of a task run several times (--repeat), else nothing."""
    times = r.get("all_seconds", [])
    return f" ({min(times):.2f}-{max(times):.2f})" if len(times) > 1 else ""


def report(fig: dict[str, Any]) -> str:
    """The printed markdown: the table, the targets, the set-up."""
    runs = fig["runs"]
    lines = [
        f"bench_scale {fig['date']} on {fig['machine']}; load average before {fig['load_before']}, "
        f"after {fig['load_after']}; batch {fig['batch_rows']:,}, dask {fig['dask_workers']} workers",
        "",
        "| parcels | engine | seconds | cpu s | x floor (in / out) | peak MB | rows/s | rows | permit req. | steep "
        "| protective |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, by in runs.items():
        n = int(key)
        floor = by.get("floor", {}).get("seconds")
        floor_out = by.get("floor_out", {}).get("seconds")
        for engine in ("floor", "floor_out", *ENGINES):
            r = by.get(engine)
            if r is None:
                continue
            if "skipped" in r:
                lines.append(f"| {n:,} | {engine} | skipped ({r['skipped']}) | | | | | | | | |")
                continue
            s = r["seconds"]
            peak = f"{r['peak_mb']:,.0f}" if "peak_mb" in r else ""
            if engine == "dask":
                peak = f"{r['driver_peak_mb']:,.0f} + {r['workers_sum_mb']:,.0f}"
            c = r.get("counts", {"rows": r.get("rows", n)})
            cells = [
                f"{n:,}",
                engine,
                f"{s:.2f}" + _spread(r),
                f"{r['cpu_s']:.1f}" if "cpu_s" in r else "",
                f"{s / floor:.1f} / {s / floor_out:.1f}" if floor and floor_out and engine in ENGINES else "",
                peak,
                f"{n / s:,.0f}",
                f"{c['rows']:,}",
                f"{c['permit_required']:,}" if "permit_required" in c else "",
                f"{c['steep']:,}" if "steep" in c else "",
                f"{c['protective']:,}" if "protective" in c else "",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "dask peak = driver + the sum of the workers' VmHWM (each read in the worker); "
        "the scheduler and nannies live in the driver's process. cpu s = process CPU time (dask: driver + workers). "
        "x floor: the run's time over `floor` (read input + write the input's frame) / over `floor_out` "
        "(read input + write the screened output's frame: the issue's floor).",
        "",
        "| target | measured | target | met |",
        "|---|---:|---:|---|",
    ]
    for what, got, want, met in fig["targets"]:
        lines.append(f"| {what} | {got} | {want} | {'-' if met is None else 'yes' if met else 'NO'} |")
    gen = fig["generate"]
    if "dem" in gen:
        d = gen["dem"]
        lines += [
            "",
            f"DEM: {d['width']:,} x {d['height']:,} cells of {d['cell_ft']:g} ft, {d['mb']:.0f} MB on disk "
            f"({d['raw_mb']:.0f} MB raw), {d['steep_share']:.0%} of cells at >= 20 %, written in {d['seconds']:.0f} s",
        ]
    for key, g in gen["sizes"].items():
        if "waters" in g:
            lines.append(
                f"{int(key):,} parcels: {g['waters']:,} waters ({g['water_vertices']:,} vertices), "
                f"jurisdiction {g['jurisdiction_sq_km']:.1f} km²"
            )
    cp = fig.get("cprofile")
    if cp:
        head = f"  {'calls':>10}{'tottime':>9}{'cumtime':>9}  function"
        for k, title in (("by_tottime", "by own time"), ("by_cumtime", "by cumulative time")):
            lines += ["", f"cProfile, stream at {fig['cprofile_size']:,} parcels, {title}:", head]
            lines += [f"  {c:>10,}{tt:>9.2f}{ct:>9.2f}  {nm}" for nm, c, tt, ct in cp[k]]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--sizes", default="10000,100000,1000000", help="parcel counts, comma-separated")
    p.add_argument("--engines", default=",".join(ENGINES), help=f"{', '.join(ENGINES)} (comma-separated)")
    p.add_argument("--out-dir", type=Path, default=None, help="work folder (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the generated files, and reuse them when present")
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write every figure as JSON")
    p.add_argument("--batch-rows", type=int, default=50_000, help="stream and dask batch size (default 50000)")
    p.add_argument("--dask-workers", type=int, default=2, help="local cluster processes (default 2)")
    p.add_argument("--whole-max", type=int, default=100_000, help="skip the whole-file run above this many parcels")
    p.add_argument("--jurisdiction-share", type=float, default=0.5, help="share of the parcels' square inside")
    p.add_argument("--waters-per-parcel", type=float, default=0.01, help="synthetic waters per parcel (0.01)")
    p.add_argument("--seed", type=int, default=540)
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run every task this many times, in interleaved rounds; the median run is reported (default 1)",
    )
    p.add_argument("--cprofile", type=int, default=0, metavar="K", help="profile one stream run, list top K")
    p.add_argument(
        "--cprofile-size",
        type=int,
        default=None,
        help="parcels of the profiled run (default 100000, or the largest size)",
    )
    args = p.parse_args(argv)
    try:
        args.sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        p.error("--sizes takes whole numbers, e.g. 10000,100000")
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    bad = [e for e in args.engines if e not in ENGINES]
    if bad or not args.sizes or min(args.sizes) < 1:
        p.error(f"--engines takes {', '.join(ENGINES)}; --sizes positive numbers")
    if args.cprofile_size is None:
        args.cprofile_size = SMALL if SMALL in args.sizes else max(args.sizes)
    if args.cprofile and args.cprofile_size not in args.sizes:
        p.error("--cprofile-size must be one of --sizes")
    if args.repeat < 1:
        p.error("--repeat must be 1 or more")
    if not 0 < args.jurisdiction_share <= 0.7:
        p.error("--jurisdiction-share must be in (0, 0.7] (the disc must fit in the square)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Generate the data, run every measurement in its own process, print the tables."""
    args = parse_args(argv)
    made_dir = args.out_dir is None
    out_dir: Path = Path(tempfile.mkdtemp(prefix="esc_gis_scale_")) if made_dir else args.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        uname = os.uname()
        fig: dict[str, Any] = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{uname.sysname} {uname.machine}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
            "batch_rows": args.batch_rows,
            "dask_workers": args.dask_workers,
            "jurisdiction_share": args.jurisdiction_share,
            "waters_per_parcel": args.waters_per_parcel,
        }
        fig["generate"] = prepare(args, out_dir)
        fig["load_before"] = _load()
        fig["runs"] = measure(args, out_dir, fig["generate"])
        fig["load_after"] = _load()
        fig["targets"] = targets(fig["runs"])
        if args.cprofile:
            print(f"profiling a stream run of {args.cprofile_size:,} parcels ...", file=sys.stderr)
            key = str(args.cprofile_size)
            out = out_dir / f"profiled_{key}.gpkg"
            fig["cprofile_size"] = args.cprofile_size
            fig["cprofile"] = run_worker(
                "cprofile",
                {
                    "input": fig["generate"]["inputs"][key],
                    "layers": fig["generate"]["manifests"][key],
                    "out": str(out),
                    "batch_rows": args.batch_rows,
                    "top": args.cprofile,
                },
                out_dir,
            )
            out.unlink(missing_ok=True)
        print(report(fig))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(fig, indent=2), encoding="utf-8")
            print(f"\nfigures written to {args.json}")
        if args.keep:
            print(f"files kept in {out_dir}")
    finally:
        if not args.keep:
            if made_dir:
                shutil.rmtree(out_dir, ignore_errors=True)
            else:
                for n in args.sizes:
                    (out_dir / f"parcels_{n}.gpkg").unlink(missing_ok=True)
                    (out_dir / f"parcels_{n}_shuffled.gpkg").unlink(missing_ok=True)
                    shutil.rmtree(out_dir / f"layers_{n}", ignore_errors=True)
                (out_dir / f"dem_{max(args.sizes)}.tif").unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == WORKER:
        sys.exit(worker_main(TASKS, sys.argv[2:]))
    sys.exit(main())
