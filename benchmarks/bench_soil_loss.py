"""Benchmark the LS grid and the soil-loss run of issue 16 against SAGA's LS factor.

What it measures
----------------
A synthetic N x N DEM (``--size``, default 4000) is written as users' lidar DEMs come: float32,
tiled 512 x 512, deflate-compressed, nodata -9999, in EPSG:3071 (WTM, metres) with 1 m cells,
centred near 624052 E, 403800 N (the Village of Winneconne). The terrain is a sum of smooth
hills (``HILLS`` Gaussian hills of 2-25 m with spreads of 40-400 m, so a few flanks pass the
method's 33 % limit), a regional fall of 0.5 % to the south-east, and N(0, 3 cm) lidar noise,
which leaves many small pits and flats as real lidar does. It is generated in row blocks.

On that DEM, in one run, each of these runs ``--repeat`` times as its own process (the order
alternating from one repeat to the next), and the driver records the wall time, the CPU time
and the peak RSS (``ru_maxrss`` from ``os.wait4``) of each:

esc
    a worker that reads the DEM with rasterio, runs :func:`esc_gis.soil.ls.ls_grid` on the
    whole grid with the shipped profile's slope limit and slope-length cap (read from the
    profile by :mod:`esc_gis.soil.tables`, which does not import geopandas), and writes LS as
    a float32 GeoTIFF (tiled 512, deflate), a row of tiles at a time. It also reports the
    read, compute and write times, and the tracemalloc peak of ``ls_grid`` alone (bytes a
    cell).
saga (the baseline)
    ``saga_cmd ta_hydrology 25`` ("LS-Factor, Field Based", O. Conrad) with Desmet & Govers
    1996 (``-METHOD 1``) and the aspect-dependent contour length (``-METHOD_AREA 1``), which
    is the closest of SAGA's options to esc's method; it reads the GeoTIFF and writes a
    striped, uncompressed GeoTIFF. SAGA routes by multiple flow directions and has no
    slope-length cap, so its values differ (see the agreement lines).
wbw (if ``whitebox_workflows`` is installed)
    WhiteboxTools' LS equivalent: ``d8_flow_accum`` (specific catchment area), ``slope``
    (degrees) and ``sediment_transport_index`` (Moore & Burch), read and written by
    whitebox-workflows. The ``whitebox`` pip package cannot be used offline: it downloads
    its binary on first use.
pyflwdir (if installed)
    the flow-accumulation floor of a maintained library: ``pyflwdir.from_dem`` (depression
    filling + D8) and ``upstream_area``, timed in-process after a JIT warm-up, without I/O.
sites
    1,000 synthetic sites (rotated rectangles of 0.25-5 acres anywhere on the DEM) through
    :func:`esc_gis.soil.soil_loss.soil_loss` with a two-phase schedule, K 0.3 and a
    benchmark R of 120 (not a source value); also the I/O floor of that run: the same
    window reads and site masks without LS.

The same esc / saga pair then runs on a real 1 m lidar DEM from ``../shared/layers-real/dem``
(``--real``; 400 x 400 cells, so it mostly measures start-up), and both LS rasters of each DEM
are compared: the median LS of each, the median of esc / SAGA per cell, and the correlation
of log LS, over interior cells valid in both and below esc's slope-length cap.

How to run
----------
From the repository root (run by hand; tests never run it)::

    .venv/bin/python benchmarks/bench_soil_loss.py                       # 4000 x 4000, 3 repeats
    .venv/bin/python benchmarks/bench_soil_loss.py --size 2000 --repeat 1 --json /tmp/bsl.json

SAGA comes from Debian (``apt-get install saga``); whitebox-workflows and pyflwdir from PyPI.
Any of them missing is skipped with a note. Files go to ``--work-dir`` (default a temporary
folder) and are deleted unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import WORKER, peak_rss_mb, read_result, worker_command, worker_main  # benchmarks/ is sys.path[0]

# Only the standard library at module level: the driver stays small, because on Linux a
# child's ru_maxrss starts from its parent's peak (see README.md).

ROOT = Path(__file__).resolve().parents[1]
REAL_DEM = ROOT.parent / "shared" / "layers-real" / "dem" / "lidar_pkg_dem_1m_MN.tif"
DEM_CRS = "EPSG:3071"
CENTRE = (624052.0, 403800.0)
CELL_M = 1.0
DEM_NODATA = -9999.0
TILE = 512
GEN_BLOCK_ROWS = 256
#: Hills per 4000 x 4000 cells (scaled with the area).
HILLS = 120
NOISE_M = 0.03
#: The soil-loss run: a benchmark R (NOT a source value: the profile holds none) and one K.
BENCH_R = 120.0
BENCH_K = 0.3
SCHEDULE = (
    {"phase": "grading", "start": "2027-04-01", "end": "2027-06-29", "cover": "bare", "practices": "sediment_trap"},
    {"phase": "seeded", "start": "2027-06-30", "end": "2028-05-31", "cover": "permanent_seeding", "practices": ""},
)

Result = dict[str, Any]


# --------------------------------------------------------------------------------------
# Worker side: each task runs in a fresh interpreter.
# --------------------------------------------------------------------------------------


def task_generate(args: Result) -> Result:
    """Write the synthetic hills DEM, tiled and deflate-compressed, in row blocks."""
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    t0 = time.perf_counter()
    n: int = args["size"]
    rng = np.random.default_rng(args["seed"])
    x0, y0 = CENTRE[0] - n * CELL_M / 2, CENTRE[1] + n * CELL_M / 2
    n_hills = max(4, round(HILLS * (n / 4000) ** 2))
    # (column, row, height m, spread m) of each hill; spreads skew small, as on real ground.
    hills = np.column_stack(
        [
            rng.uniform(0, n, n_hills),
            rng.uniform(0, n, n_hills),
            rng.uniform(2.0, 25.0, n_hills),
            np.exp(rng.uniform(math.log(40.0), math.log(400.0), n_hills)),
        ]
    )
    profile = {
        "driver": "GTiff",
        "width": n,
        "height": n,
        "count": 1,
        "dtype": "float32",
        "nodata": DEM_NODATA,
        "crs": DEM_CRS,
        "transform": from_origin(x0, y0, CELL_M, CELL_M),
        "tiled": True,
        "blockxsize": TILE,
        "blockysize": TILE,
        "compress": "deflate",
        "BIGTIFF": "IF_SAFER",
    }
    cols = (np.arange(n) + 0.5) * CELL_M
    with rasterio.open(args["path"], "w", **profile) as dst:
        for r0 in range(0, n, GEN_BLOCK_ROWS):
            r1 = min(n, r0 + GEN_BLOCK_ROWS)
            rows = ((np.arange(r0, r1) + 0.5) * CELL_M)[:, None]
            z = 250.0 - 0.005 * (rows + cols[None, :]) / math.sqrt(2)  # 0.5 % to the south-east
            for cx, cy, height, spread in hills:
                reach = 4 * spread  # beyond 4 spreads a hill adds < 0.04 % of its height
                c_lo, c_hi = max(0, int(cx - reach)), min(n, int(cx + reach) + 1)
                if cy + reach < r0 or cy - reach > r1 or c_lo >= c_hi:
                    continue
                dx2 = (cols[c_lo:c_hi] - cx) ** 2
                dy2 = (rows - cy) ** 2
                z[:, c_lo:c_hi] += height * np.exp(-(dx2[None, :] + dy2) / (2 * spread**2))
            z += rng.normal(0.0, NOISE_M, z.shape)
            dst.write(z.astype(np.float32), 1, window=Window(0, r0, n, r1 - r0))
    return {"seconds": time.perf_counter() - t0, "hills": int(n_hills), "bytes": os.path.getsize(args["path"])}


def _limits() -> tuple[float, float]:
    """The shipped profile's slope limit and slope-length cap."""
    from esc_gis.profile import load_profile

    try:  # the tables alone: importing soil_loss brings geopandas, ~75 MB of the esc peak
        from esc_gis.soil.tables import soil_loss_tables
    except ImportError:  # before the tables had their own module (commit-to-commit runs)
        from esc_gis.soil.soil_loss import soil_loss_tables

    tables = soil_loss_tables(load_profile())
    return tables.max_slope_pct, tables.max_slope_length_ft


def task_esc(args: Result) -> Result:
    """Read the DEM, ls_grid on the whole grid, write LS: times, tracemalloc peak, summary."""
    import tracemalloc

    import numpy as np
    import rasterio
    from rasterio.windows import Window

    from esc_gis.soil.ls import ls_grid

    t_start = time.perf_counter()
    max_slope_pct, cap_ft = _limits()
    t0 = time.perf_counter()
    with rasterio.open(args["dem"]) as src:
        z = src.read(1, masked=True)
        profile = src.profile
        cell_m = src.res[0]
        unit_m = src.crs.linear_units_factor[1]
    nodata = np.ma.getmaskarray(z)
    z = z.filled(np.nan)
    t_read = time.perf_counter() - t0
    ft = unit_m / 0.3048
    tracemalloc.start()
    t0 = time.perf_counter()
    g = ls_grid(z, cell_m * ft, max_slope_pct=max_slope_pct, z_to_ft=ft, nodata_mask=nodata, max_slope_length_ft=cap_ft)
    t_compute = time.perf_counter() - t0
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del z, nodata
    t0 = time.perf_counter()
    profile.update(dtype="float32", nodata=np.nan, tiled=True, blockxsize=TILE, blockysize=TILE, compress="deflate")
    with rasterio.open(args["out"], "w", **profile) as dst:
        # A row of tiles at a time: a float32 copy of the whole grid would be 4 bytes a cell
        # at the peak (the file is the same byte for byte).
        for r0 in range(0, g.ls.shape[0], TILE):
            band = g.ls[r0 : r0 + TILE]
            dst.write(band.astype(np.float32), 1, window=Window(0, r0, band.shape[1], band.shape[0]))
    t_write = time.perf_counter() - t0
    return {
        "read_s": t_read,
        "compute_s": t_compute,
        "write_s": t_write,
        "in_worker_s": time.perf_counter() - t_start,
        "traced_peak_mb": traced_peak / 2**20,
        "traced_bytes_per_cell": traced_peak / g.ls.size,
        "worker_peak_mb": peak_rss_mb(),
        "mean_ls": g.mean_ls,
        "outside_share": g.outside_share,
        "capped_share": float(np.count_nonzero(g.capped)) / max(1, int(np.count_nonzero(g.surface))),
        "representative": [g.representative_length_ft, g.representative_slope_pct, g.representative_ls],
    }


def task_wbw(args: Result) -> Result:
    """WhiteboxTools' LS equivalent (D8 SCA, slope, sediment transport index), its own I/O."""
    import whitebox_workflows as wb

    t0 = time.perf_counter()
    env = wb.WbEnvironment()
    env.verbose = False
    dem = env.read_raster(args["dem"])
    t_read = time.perf_counter() - t0
    t1 = time.perf_counter()
    # whitebox-workflows 2 reaches its tools by category only (the flat methods are disabled).
    sca = env.hydrology.flow_routing.d8_flow_accum(input=dem, out_type="sca")
    t_accum = time.perf_counter() - t1
    slope = env.terrain.derivatives.slope(input=dem, units="degrees")
    sti = env.hydrology.hydrologic_indices.sediment_transport_index(sca=sca, slope=slope)
    t_compute = time.perf_counter() - t1
    t1 = time.perf_counter()
    env.write_raster(sti, args["out"])
    return {
        "read_s": t_read,
        "accum_s": t_accum,
        "compute_s": t_compute,
        "write_s": time.perf_counter() - t1,
        "worker_peak_mb": peak_rss_mb(),
    }


def task_pyflwdir(args: Result) -> Result:
    """The accumulation floor: pyflwdir's fill + D8 and upstream area, after a JIT warm-up."""
    import numpy as np
    import pyflwdir
    import rasterio

    with rasterio.open(args["dem"]) as src:
        z = src.read(1)
        transform = src.transform
        nodata = src.nodata
    # Warm-up on a corner of the same DEM (same dtype), so numba's compilation is not timed.
    warm = pyflwdir.from_dem(np.ascontiguousarray(z[:64, :64]), nodata=nodata, transform=transform, latlon=False)
    warm.upstream_area(unit="cell")
    t0 = time.perf_counter()
    flw = pyflwdir.from_dem(z, nodata=nodata, transform=transform, latlon=False)
    t_dem = time.perf_counter() - t0
    t1 = time.perf_counter()
    flw.upstream_area(unit="cell")
    t_acc = time.perf_counter() - t1
    return {"from_dem_s": t_dem, "accum_s": t_acc, "total_s": t_dem + t_acc, "worker_peak_mb": peak_rss_mb()}


def _sites(args: Result) -> Any:
    """The synthetic sites: rotated rectangles of 0.25-5 acres anywhere on the DEM."""
    import geopandas as gpd
    import numpy as np
    import shapely

    n, size = args["n_sites"], args["size"]
    rng = np.random.default_rng(args["seed"] + 1)
    x0, y0 = CENTRE[0] - size * CELL_M / 2, CENTRE[1] - size * CELL_M / 2
    area_m2 = rng.uniform(0.25, 5.0, n) * 4046.8564224
    aspect = rng.uniform(1.0, 3.0, n)
    w, h = np.sqrt(area_m2 * aspect), np.sqrt(area_m2 / aspect)
    margin = 0.5 * np.hypot(w, h) + 5
    cx = x0 + margin + rng.uniform(0, 1, n) * (size * CELL_M - 2 * margin)
    cy = y0 + margin + rng.uniform(0, 1, n) * (size * CELL_M - 2 * margin)
    theta = rng.uniform(0, math.pi, n)
    corners = np.array([(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)])
    px = corners[None, :, 0] * w[:, None]
    py = corners[None, :, 1] * h[:, None]
    c, s = np.cos(theta)[:, None], np.sin(theta)[:, None]
    xy = np.stack([cx[:, None] + px * c - py * s, cy[:, None] + px * s + py * c], axis=-1)
    geoms = shapely.polygons(xy)
    return gpd.GeoDataFrame({"site": [f"B{i + 1:04d}" for i in range(n)]}, geometry=geoms, crs=DEM_CRS)


def task_sites(args: Result) -> Result:
    """soil_loss() on the synthetic sites; with args["floor"], only its window reads and masks."""
    import tracemalloc

    import geopandas as gpd
    import numpy as np
    import rasterio
    import rasterio.features
    import rasterio.windows

    from esc_gis.profile import load_profile
    from esc_gis.soil.schedule import validate_schedule
    from esc_gis.soil.soil_loss import _window_bounds, soil_loss, soil_loss_tables
    from esc_gis.terrain.dem import open_dem

    sites = _sites(args)
    profile = load_profile()
    tables = soil_loss_tables(profile)
    info = open_dem(args["dem"], z_unit="m")
    if args["floor"]:
        # What site_ls does besides LS: reproject, one window read and one mask per site.
        t0 = time.perf_counter()
        geoms = sites.to_crs(profile.measure_crs).geometry.to_numpy()
        in_dem = gpd.GeoSeries(geoms, crs=profile.measure_crs).to_crs(info.crs).to_numpy()
        cells = 0
        with info.open() as src:
            for geom in in_dem:
                win = _window_bounds(info, geom)
                if win is None:
                    continue
                z = src.read(info.band, window=win, masked=True).astype(np.float64).filled(np.nan)
                t = rasterio.windows.transform(win, info.transform)
                cells += int(rasterio.features.geometry_mask([geom], z.shape, t, invert=True).sum())
        return {"seconds": time.perf_counter() - t0, "site_cells": cells, "worker_peak_mb": peak_rss_mb()}
    schedule = validate_schedule([dict(r) for r in SCHEDULE], tables.covers, tables.practices)
    tracemalloc.start()
    t0 = time.perf_counter()
    res = soil_loss(sites, info, schedule=schedule, profile=profile, ei_daily=np.ones(365), r_annual=BENCH_R, k=BENCH_K)
    seconds = time.perf_counter() - t0
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out = res.sites
    return {
        "seconds": seconds,
        "traced_peak_mb": traced_peak / 2**20,
        "worker_peak_mb": peak_rss_mb(),
        "sites": len(out),
        "computed": int(np.isfinite(out["discharge_tpa"]).sum()),
        "passes": int(out["passes"].sum()),
        "with_outside_area": int((out["outside_share"] > 0).sum()),
        "median_ls_mean": float(np.nanmedian(out["ls_mean"])),
        "median_discharge_tpa": float(np.nanmedian(out["discharge_tpa"])),
        "disturbed_acres": float(out["disturbed_acres"].sum()),
    }


def task_compare(args: Result) -> Result:
    """esc's LS against SAGA's on interior cells valid in both and under esc's cap."""
    import numpy as np
    import rasterio

    from esc_gis.soil.ls import ls_grid

    with rasterio.open(args["esc"]) as a, rasterio.open(args["saga"]) as b:
        e = a.read(1, masked=True).astype(np.float64).filled(np.nan)
        s = b.read(1, masked=True).astype(np.float64).filled(np.nan)
    # esc's cap flag, recomputed (cheaper than writing it): cells below the cap only.
    with rasterio.open(args["dem"]) as src:
        z = src.read(1, masked=True)
        cell_m = src.res[0]
        unit_m = src.crs.linear_units_factor[1]
    ft = unit_m / 0.3048
    max_slope_pct, cap_ft = _limits()
    capped = ls_grid(
        z.filled(np.nan),
        cell_m * ft,
        max_slope_pct=max_slope_pct,
        z_to_ft=ft,
        nodata_mask=np.ma.getmaskarray(z),
        max_slope_length_ft=cap_ft,
    ).capped
    inner = np.zeros(e.shape, dtype=bool)
    inner[2:-2, 2:-2] = True
    both = inner & np.isfinite(e) & np.isfinite(s) & (e > 0) & (s > 0)
    under = both & ~capped
    ratio = e[under] / s[under]
    return {
        "cells_compared": int(under.sum()),
        "median_ls_esc": float(np.median(e[both])),
        "median_ls_saga": float(np.median(s[both])),
        "p90_ls_esc": float(np.percentile(e[both], 90)),
        "p90_ls_saga": float(np.percentile(s[both], 90)),
        "median_ratio_under_cap": float(np.median(ratio)),
        "p10_p90_ratio_under_cap": [float(v) for v in np.percentile(ratio, [10, 90])],
        "corr_log_ls_under_cap": float(np.corrcoef(np.log(e[under]), np.log(s[under]))[0, 1]),
    }


TASKS = {
    "generate": task_generate,
    "esc": task_esc,
    "wbw": task_wbw,
    "pyflwdir": task_pyflwdir,
    "sites": task_sites,
    "compare": task_compare,
}


# --------------------------------------------------------------------------------------
# Driver side: standard library only.
# --------------------------------------------------------------------------------------


def run_child(cmd: list[str], what: str, quiet: bool = False) -> Result:
    """Run ``cmd``; its wall time, CPU time and own peak RSS from ``os.wait4``."""
    t0 = time.perf_counter()
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(cmd, stdout=out, stderr=out)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = 0  # reaped by os.wait4
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        msg = f"{what} failed with exit status {code}"
        raise RuntimeError(msg)
    return {
        "seconds": seconds,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024.0,
    }


def run_worker(task: str, args: Result, tmp: Path) -> Result:
    """One task in a fresh interpreter: its result plus the child's rusage figures."""
    cmd, result_path = worker_command(__file__, task, args, tmp)
    usage = run_child(cmd, f"worker {task!r}")
    result = read_result(result_path)
    result["process"] = usage
    return result


def has_module(name: str) -> bool:
    """Whether ``name`` imports in this interpreter's environment (checked in a child)."""
    probe = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, check=False)
    return probe.returncode == 0


def git_head() -> str:
    """The commit measured, and whether src/ differs from it."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git)"
    return head[:70] + (" (+ uncommitted changes in src/)" if dirty else "")


def summarize(runs: list[Result], key: str = "seconds") -> Result:
    """Median and best of ``key`` over runs of one tool, the median CPU and the highest peak."""
    procs = [r.get("process", r) for r in runs]
    secs = [p[key] for p in procs]
    return {
        "median_s": statistics.median(secs),
        "best_s": min(secs),
        "all_s": secs,
        "median_cpu_s": statistics.median(p["cpu_s"] for p in procs),
        "peak_mb": max(p["peak_mb"] for p in procs),
    }


def bench_dem(label: str, dem: Path, cells: int, args: argparse.Namespace, work: Path, saga: str | None) -> Result:
    """esc, SAGA and (if present) whitebox-workflows on one DEM, alternating; then compare."""
    runs: dict[str, list[Result]] = {"esc": [], "saga": [], "wbw": []}
    esc_out, saga_out, wbw_out = work / f"{label}_esc.tif", work / f"{label}_saga.tif", work / f"{label}_wbw.tif"
    use_wbw = args.wbw and has_module("whitebox_workflows")
    for rep in range(args.repeat):
        order = ["esc", "saga", "wbw"] if rep % 2 == 0 else ["wbw", "saga", "esc"]
        for tool in order:
            if tool == "esc":
                print(f"[{label}] esc ls_grid, run {rep + 1} ...", file=sys.stderr)
                runs["esc"].append(run_worker("esc", {"dem": str(dem), "out": str(esc_out)}, work))
            elif tool == "saga" and saga:
                print(f"[{label}] SAGA LS-Factor, Field Based, run {rep + 1} ...", file=sys.stderr)
                cmd = [saga, "ta_hydrology", "25", "-DEM", str(dem), "-LS_FACTOR", str(saga_out)]
                runs["saga"].append(run_child([*cmd, "-METHOD", "1", "-METHOD_AREA", "1"], "saga_cmd", quiet=True))
            elif tool == "wbw" and use_wbw:
                print(f"[{label}] whitebox-workflows, run {rep + 1} ...", file=sys.stderr)
                runs["wbw"].append(run_worker("wbw", {"dem": str(dem), "out": str(wbw_out)}, work))
    res: Result = {"label": label, "dem": str(dem), "cells": cells, "runs": runs}
    res["esc"] = summarize(runs["esc"])
    res["esc"]["compute_s"] = statistics.median(r["compute_s"] for r in runs["esc"])
    res["esc"]["read_s"] = statistics.median(r["read_s"] for r in runs["esc"])
    res["esc"]["write_s"] = statistics.median(r["write_s"] for r in runs["esc"])
    res["esc"]["traced_peak_mb"] = max(r["traced_peak_mb"] for r in runs["esc"])
    res["esc"]["traced_bytes_per_cell"] = max(r["traced_bytes_per_cell"] for r in runs["esc"])
    res["esc_summary"] = {k: runs["esc"][0][k] for k in ("mean_ls", "outside_share", "capped_share", "representative")}
    if runs["saga"]:
        res["saga"] = summarize(runs["saga"])
        res["ratio_vs_saga"] = res["esc"]["median_s"] / res["saga"]["median_s"]
        res["compare"] = run_worker("compare", {"esc": str(esc_out), "saga": str(saga_out), "dem": str(dem)}, work)
    if runs["wbw"]:
        res["wbw"] = summarize(runs["wbw"])
        res["wbw"]["compute_s"] = statistics.median(r["compute_s"] for r in runs["wbw"])
        res["wbw"]["accum_s"] = statistics.median(r["accum_s"] for r in runs["wbw"])
        res["ratio_vs_wbw"] = res["esc"]["median_s"] / res["wbw"]["median_s"]
    if args.pyflwdir and has_module("pyflwdir"):
        print(f"[{label}] pyflwdir floor ...", file=sys.stderr)
        pf = [run_worker("pyflwdir", {"dem": str(dem)}, work) for _ in range(args.repeat)]
        res["pyflwdir"] = {
            "median_total_s": statistics.median(r["total_s"] for r in pf),
            "median_accum_s": statistics.median(r["accum_s"] for r in pf),
            "median_from_dem_s": statistics.median(r["from_dem_s"] for r in pf),
            "peak_mb": max(r["process"]["peak_mb"] for r in pf),
        }
        res["compute_vs_pyflwdir"] = res["esc"]["compute_s"] / res["pyflwdir"]["median_total_s"]
    return res


def bench_sites(dem: Path, size: int, args: argparse.Namespace, work: Path) -> Result:
    """soil_loss() on n synthetic sites, and its read-and-mask floor, alternating."""
    full: list[Result] = []
    floor: list[Result] = []
    base = {"dem": str(dem), "size": size, "n_sites": args.sites, "seed": args.seed}
    for rep in range(args.repeat):
        for which in ("full", "floor") if rep % 2 == 0 else ("floor", "full"):
            print(f"[sites] {which}, run {rep + 1} ...", file=sys.stderr)
            r = run_worker("sites", {**base, "floor": which == "floor"}, work)
            (full if which == "full" else floor).append(r)
    res: Result = {"full_runs": full, "floor_runs": floor}
    res["full_s"] = statistics.median(r["seconds"] for r in full)
    res["floor_s"] = statistics.median(r["seconds"] for r in floor)
    res["ratio"] = res["full_s"] / res["floor_s"]
    res["peak_mb"] = max(r["process"]["peak_mb"] for r in full)
    res["traced_peak_mb"] = max(r["traced_peak_mb"] for r in full)
    res["site_cells"] = floor[0]["site_cells"]
    res["summary"] = {k: full[0][k] for k in full[0] if k not in ("seconds", "process", "traced_peak_mb")}
    return res


def _line(name: str, s: Result, extra: str = "") -> str:
    return (
        f"  {name:<26} {s['median_s']:8.2f} s (best {s['best_s']:.2f})  CPU {s['median_cpu_s']:7.2f} s  "
        f"peak {s['peak_mb']:7,.0f} MB{extra}"
    )


def report_dem(r: Result, repeat: int) -> str:
    """The table of one DEM."""
    mc = r["cells"] / 1e6
    e = r["esc"]
    lines = [
        f"{r['label']}: {r['dem']} ({mc:.2f} Mcells); {repeat} run(s) each, alternating; process wall/CPU/peak",
        _line("esc ls_grid (read+LS+write)", e, f"  ({mc / e['median_s']:.2f} Mcells/s)"),
        f"    of which read {e['read_s']:.2f} s, ls_grid {e['compute_s']:.2f} s, write {e['write_s']:.2f} s; "
        f"ls_grid traced peak {e['traced_peak_mb']:,.0f} MB = {e['traced_bytes_per_cell']:.0f} B/cell",
    ]
    if "saga" in r:
        lines.append(_line("SAGA LS-Factor (baseline)", r["saga"], f"  ({mc / r['saga']['median_s']:.2f} Mcells/s)"))
    else:
        lines.append("  SAGA: not found (apt-get install saga): no baseline")
    if "wbw" in r:
        w = r["wbw"]
        lines.append(
            _line("whitebox-workflows STI", w, f"  (D8 accum {w['accum_s']:.2f} s, all tools {w['compute_s']:.2f} s)")
        )
    if "pyflwdir" in r:
        p = r["pyflwdir"]
        lines.append(
            f"  pyflwdir floor (in-process) {p['median_total_s']:8.2f} s  (from_dem fill+D8 "
            f"{p['median_from_dem_s']:.2f} s, upstream_area {p['median_accum_s']:.2f} s)"
        )
    if "ratio_vs_saga" in r:
        lines.append(f"  ratio esc / SAGA (wall)      {r['ratio_vs_saga']:.2f}")
    if "ratio_vs_wbw" in r:
        lines.append(f"  ratio esc / whitebox (wall)  {r['ratio_vs_wbw']:.2f}")
    if "compute_vs_pyflwdir" in r:
        lines.append(f"  ls_grid / pyflwdir floor     {r['compute_vs_pyflwdir']:.2f}")
    s = r["esc_summary"]
    lines.append(
        f"  esc: mean LS {s['mean_ls']:.3f}, {100 * s['outside_share']:.2f} % over the slope limit, "
        f"{100 * s['capped_share']:.2f} % at the length cap; representative "
        f"{s['representative'][0]:.0f} ft at {s['representative'][1]:.1f} %, LS {s['representative'][2]:.2f}"
    )
    if "compare" in r:
        c = r["compare"]
        lines.append(
            f"  agreement on {c['cells_compared']:,} interior cells under the cap: median LS esc "
            f"{c['median_ls_esc']:.3f} / SAGA {c['median_ls_saga']:.3f}; esc/SAGA median "
            f"{c['median_ratio_under_cap']:.2f} (p10-p90 {c['p10_p90_ratio_under_cap'][0]:.2f}-"
            f"{c['p10_p90_ratio_under_cap'][1]:.2f}); r(log LS) {c['corr_log_ls_under_cap']:.3f}"
        )
    return "\n".join(lines)


def report_sites(r: Result, n: int) -> str:
    """The table of the soil-loss run."""
    s = r["summary"]
    return "\n".join(
        [
            f"soil_loss() on {n:,} sites ({s['disturbed_acres']:,.0f} acres, {r['site_cells']:,} DEM cells "
            "inside them), 2 phases, K 0.3, R 120 (a benchmark value)",
            f"  full run                   {r['full_s']:8.2f} s  ({1000 * r['full_s'] / n:.1f} ms a site); "
            f"peak {r['peak_mb']:,.0f} MB (traced {r['traced_peak_mb']:,.0f} MB)",
            f"  floor: reads + masks only  {r['floor_s']:8.2f} s",
            f"  ratio full / floor         {r['ratio']:.2f}",
            f"  computed {s['computed']}, pass {s['passes']}, with area over the slope limit "
            f"{s['with_outside_area']}; median LS {s['median_ls_mean']:.3f}, median discharge "
            f"{s['median_discharge_tpa']:.2f} t/ac",
        ]
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--size", type=int, default=4000, help="DEM side in cells (default 4000)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each tool (default 3)")
    p.add_argument("--sites", type=int, default=1000, help="sites in the soil-loss run (default 1000; 0 skips)")
    p.add_argument("--seed", type=int, default=16, help="terrain and sites (default 16)")
    p.add_argument("--real", type=Path, default=REAL_DEM, help="a real DEM to run too ('' skips)")
    p.add_argument("--no-wbw", dest="wbw", action="store_false", help="skip whitebox-workflows")
    p.add_argument("--no-pyflwdir", dest="pyflwdir", action="store_false", help="skip the pyflwdir floor")
    p.add_argument("--work-dir", type=Path, default=None, help="where the DEM and outputs go")
    p.add_argument("--keep", action="store_true", help="keep the files")
    p.add_argument("--json", type=Path, default=None, help="write every figure to this file")
    args = p.parse_args(argv)
    if args.size < 10 or args.repeat < 1 or args.sites < 0:
        p.error("--size must be at least 10, --repeat at least 1 and --sites 0 or more")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Generate the DEM, run every tool on it and on the real DEM, then the sites; print."""
    args = parse_args(argv)
    saga = shutil.which("saga_cmd")
    made = args.work_dir is None
    work: Path = Path(tempfile.mkdtemp(prefix="esc_gis_bench_soil_loss_")) if made else args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    fig: Result = {
        "size": args.size,
        "repeat": args.repeat,
        "seed": args.seed,
        "git": git_head(),
        "cpus": os.cpu_count(),
    }
    print(f"esc_gis at {fig['git']}; {os.cpu_count()} CPUs; saga_cmd: {saga or 'not found'}", flush=True)
    try:
        dem = work / f"hills_{args.size}.tif"
        print(f"[synthetic] generating a {args.size} x {args.size} DEM in {work} ...", file=sys.stderr)
        fig["generate"] = run_worker("generate", {"size": args.size, "seed": args.seed, "path": str(dem)}, work)
        fig["synthetic"] = bench_dem("synthetic", dem, args.size**2, args, work, saga)
        print(report_dem(fig["synthetic"], args.repeat), "\n", flush=True)
        if str(args.real) and args.real.is_file():
            probe = run_worker_cells(args.real, work)
            fig["real"] = bench_dem("real", args.real, probe, args, work, saga)
            print(report_dem(fig["real"], args.repeat), "\n", flush=True)
        if args.sites:
            fig["sites"] = bench_sites(dem, args.size, args, work)
            print(report_sites(fig["sites"], args.sites), flush=True)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(fig, indent=2), encoding="utf-8")
            print(f"figures written to {args.json}")
        if args.keep:
            print(f"files kept in {work}")
    finally:
        if made and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def run_worker_cells(dem: Path, work: Path) -> int:
    """The number of cells of a DEM (read in a child: the driver imports no rasterio)."""
    probe = subprocess.run(
        [sys.executable, "-c", f"import rasterio; s = rasterio.open({str(dem)!r}); print(s.width * s.height)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=work,
    )
    return int(probe.stdout.strip())


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == WORKER:
        sys.exit(worker_main(TASKS, sys.argv[2:]))
    sys.exit(main())
