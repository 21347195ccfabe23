"""Benchmark ``esc-gis slope`` against ``gdaldem slope -p`` on a synthetic DEM.

What it measures
----------------
For each size N (``--sizes``, default 8000) the script writes a synthetic N x N DEM as a
GeoTIFF: EPSG:3071 (Wisconsin Transverse Mercator, metres), 1 m cells, centred near
624052 E, 403800 N (the Village of Winneconne), float32, nodata -9999, striped (untiled)
and uncompressed. The elevations are 240 m plus four sine waves (12 m at about 1.9 km,
6 m at 0.6 km, 3 m at 0.2 km and 0.8 m at 70 m, each in its own direction) plus N(0, 0.05 m)
noise. The DEM is generated and written in row blocks, so no full float64 grid is ever
held in memory. 8000 x 8000 is 256 MB on disk, 16000 x 16000 is 1 GB.

Each DEM is then laid out as counties deliver them (``--layouts``, default all three):

plain
    the DEM as generated: striped, uncompressed;
deflate
    a copy tiled 512 x 512 and deflate-compressed (no predictor), as county lidar GeoTIFFs;
vrt
    4 x 4 tiles of that kind in a folder, mosaicked by ``gdalbuildvrt`` (both tools read
    the ``.vrt``).

Then, in one run and on the same DEM, each of these runs ``--repeat`` times as its own
subprocess, the order alternating from one repeat to the next:

gdaldem
    ``gdaldem slope -p -q DEM gdaldem.tif``
esc
    ``esc-gis slope DEM -o esc.tif --z-unit m --overwrite --quiet`` (the CLI, so its time
    includes interpreter start-up and imports). It writes a tiled (512), deflate-compressed
    GeoTIFF with overviews; gdaldem's default output is striped and uncompressed, with none.
gdaldem+addo (``--same-output``)
    gdaldem writing esc's layout (``-co TILED=YES -co BLOCKXSIZE=512 -co BLOCKYSIZE=512
    -co COMPRESS=DEFLATE -co PREDICTOR=3 -co ZLEVEL=1``) then ``gdaladdo -r average`` with
    esc's overview levels: the like-for-like figure (two processes, times added).

For each child the script records the wall time, the CPU time (user + system, from the
``rusage`` that ``os.wait4`` returns for that one child) and its peak RSS (``ru_maxrss``,
KiB on Linux). The driver imports only the standard library and holds no data, because on
Linux a child's ``ru_maxrss`` starts from its parent's peak (vfork + exec); generating the
DEM and comparing the outputs run in worker subprocesses.

The two outputs are then compared cell by cell, streaming in row blocks: the number of
cells that differ (anywhere, and on interior cells, i.e. without the one-cell border),
the largest ``|esc - gdaldem|`` over the cells valid in both, and the nodata count of
each. "Identical" means the same float32 value, or nodata in both.

The table shows, per tool, the median and best wall time, Mcells/s (cells / median wall
time), the median CPU time and the highest peak RSS; then the ratio esc / gdaldem of the
median wall times (target <= 1.0) and esc's peak RSS (target < 400 MB at any size).

Diagnostics (optional, in-process, each configuration in a fresh worker process):

``--parts``
    One single-threaded pass over the DEM with the same blocks as ``esc_gis.terrain``
    (1 << 20 cells), timing the reads, the Horn computation, the NaN -> nodata fill and
    the writes separately; plus a plain read-and-write copy of the DEM (the I/O floor
    with rasterio) and the import time of ``esc_gis.cli.main``.
``--sweep``
    ``esc_gis.terrain.slope.iter_slope_blocks`` driven directly, written with rasterio as
    ``write_slope`` does, for each ``block_cells`` in ``--sweep-blocks`` (log2 values,
    default 16,18,20,22) and each ``threads`` in ``--sweep-threads`` (default 1,2):
    wall time, CPU time and peak RSS of each.

How to run
----------
From the repository root (run by hand; tests never run it)::

    .venv/bin/python benchmarks/bench_slope.py                           # 8000 x 8000, 3 repeats
    .venv/bin/python benchmarks/bench_slope.py --sizes 8000,16000 --json out/bench_slope.json
    .venv/bin/python benchmarks/bench_slope.py --sizes 4000 --repeat 5 --parts --sweep

Files go to ``--work-dir`` (default: a temporary folder under ``$TMPDIR`` or /tmp) and are
deleted at the end unless ``--keep`` is given. The script checks the free space first:
each size needs about three times the DEM's size (the DEM and two outputs).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import (  # benchmarks/ is sys.path[0]
    WORKER,
    find_cli,
    peak_rss_mb,
    read_result,
    worker_command,
    worker_main,
)

# Only the standard library is imported at module level: the driver must stay small (see
# the module docstring); numpy, rasterio and esc_gis are imported inside the worker tasks.

ROOT = Path(__file__).resolve().parents[1]
DEM_CRS = "EPSG:3071"  # NAD83(HARN) / Wisconsin Transverse Mercator, metres
CENTRE = (624052.0, 403800.0)  # WTM easting, northing near the Village of Winneconne
CELL_M = 1.0
DEM_NODATA = -9999.0
BASE_M = 240.0
#: (amplitude m, wavelength m, direction of travel in degrees from east) of each sine wave.
WAVES = ((12.0, 1900.0, 20.0), (6.0, 600.0, 115.0), (3.0, 200.0, 63.0), (0.8, 70.0, 160.0))
NOISE_M = 0.05
GEN_BLOCK_CELLS = 1 << 22  # cells per generated block: ~32 MB per float64 temporary
CMP_BLOCK_CELLS = 1 << 22  # cells per compared block
TARGET_RATIO = 1.0
TARGET_PEAK_MB = 400.0
LAYOUTS = ("plain", "deflate", "vrt")
#: Side of the tiled layouts' tiles, and tiles per side of the VRT layout.
TILE = 512
VRT_TILES = 4

Result = dict[str, Any]


# --------------------------------------------------------------------------------------
# Worker side: runs in a fresh interpreter, one task per process.
# --------------------------------------------------------------------------------------


def cpu_seconds() -> float:
    """User + system CPU time of this process so far (all threads)."""
    t = os.times()
    return t.user + t.system


def task_generate(args: dict[str, Any]) -> Result:
    """Write the synthetic N x N DEM to ``args["path"]``, in row blocks."""
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    t0 = time.perf_counter()
    n: int = args["size"]
    holes: int = args.get("holes", 0)
    rng = np.random.default_rng(args["seed"])
    x0 = CENTRE[0] - n * CELL_M / 2
    y0 = CENTRE[1] + n * CELL_M / 2
    profile = {
        "driver": "GTiff",
        "width": n,
        "height": n,
        "count": 1,
        "dtype": "float32",
        "nodata": DEM_NODATA,
        "crs": DEM_CRS,
        "transform": from_origin(x0, y0, CELL_M, CELL_M),
        "tiled": False,
        "compress": "none",
        "BIGTIFF": "IF_SAFER",
    }
    # Optional circular nodata holes (radius 20-80 m), away from the edges.
    hole_xyr = [
        (float(rng.uniform(0.1, 0.9) * n), float(rng.uniform(0.1, 0.9) * n), float(rng.uniform(20, 80)))
        for _ in range(holes)
    ]
    # Cell-centre x of every column (relative to the centre, in metres): shared by all blocks.
    xs = (np.arange(n) + 0.5) * CELL_M + x0 - CENTRE[0]
    rows = max(1, GEN_BLOCK_CELLS // n)
    phases = [float(p) for p in rng.uniform(0, 2 * math.pi, len(WAVES))]
    zmin, zmax = math.inf, -math.inf
    with rasterio.open(args["path"], "w", **profile) as dst:
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            ys = (y0 - (np.arange(r0, r1) + 0.5) * CELL_M - CENTRE[1])[:, None]
            z = np.full((r1 - r0, n), BASE_M)
            for (amp, wavelength, deg), phase in zip(WAVES, phases, strict=True):
                k = 2 * math.pi / wavelength
                kx, ky = k * math.cos(math.radians(deg)), k * math.sin(math.radians(deg))
                z += amp * np.sin(kx * xs[None, :] + ky * ys + phase)
            z += rng.normal(0.0, NOISE_M, z.shape)
            block = z.astype(np.float32)
            del z
            zmin, zmax = min(zmin, float(block.min())), max(zmax, float(block.max()))
            for hc, hr, rad in hole_xyr:
                if hr + rad < r0 or hr - rad > r1:
                    continue
                rr = (np.arange(r0, r1) + 0.5)[:, None] - hr
                cc = (np.arange(n) + 0.5)[None, :] - hc
                block[rr * rr + cc * cc <= (rad / CELL_M) ** 2] = DEM_NODATA
            dst.write(block, 1, window=Window(0, r0, n, r1 - r0))
    with rasterio.open(args["path"]) as src:
        layout = {
            "block_shape": list(src.block_shapes[0]),
            "tiled": bool(src.profile.get("tiled")),
            "compress": src.compression.value if src.compression else "none",
        }
    return {
        "seconds": time.perf_counter() - t0,
        "size": n,
        "cells": n * n,
        "z_range_m": [zmin, zmax],
        "holes": holes,
        "dem_mb": Path(args["path"]).stat().st_size / 2**20,
        "layout": layout,
        "peak_mb": peak_rss_mb(),
    }


def task_layout(args: dict[str, Any]) -> Result:
    """Copy the plain DEM as one tiled deflate GeoTIFF, or as a folder of such tiles."""
    import rasterio
    from rasterio.windows import Window

    t0 = time.perf_counter()
    with rasterio.open(args["src"]) as src:
        n = src.width
        base = {**src.profile, "tiled": True, "blockxsize": TILE, "blockysize": TILE, "compress": "deflate"}
        if args["layout"] == "deflate":
            parts = [(Path(args["path"]), Window(0, 0, n, n))]
        else:
            folder = Path(args["path"])
            folder.mkdir(parents=True, exist_ok=True)
            side = -(-n // VRT_TILES)
            parts = [
                (
                    folder / f"tile_{i}_{j}.tif",
                    Window(j * side, i * side, min(side, n - j * side), min(side, n - i * side)),
                )
                for i in range(VRT_TILES)
                for j in range(VRT_TILES)
                if i * side < n and j * side < n
            ]
        for path, win in parts:
            w, h = int(win.width), int(win.height)
            profile = {**base, "width": w, "height": h, "transform": src.window_transform(win)}
            with rasterio.open(path, "w", **profile) as dst:
                for r0 in range(0, h, TILE):
                    rows = min(TILE, h - r0)
                    block = src.read(1, window=Window(win.col_off, win.row_off + r0, w, rows))
                    dst.write(block, 1, window=Window(0, r0, w, rows))
    size = sum(p.stat().st_size for p, _ in parts)
    return {"seconds": time.perf_counter() - t0, "tiles": len(parts), "mb": size / 2**20, "peak_mb": peak_rss_mb()}


def task_compare(args: dict[str, Any]) -> Result:
    """Compare two slope rasters cell by cell, in row blocks (memory stays flat)."""
    import numpy as np
    import rasterio
    from rasterio.windows import Window

    t0 = time.perf_counter()
    with rasterio.open(args["gdaldem"]) as ga, rasterio.open(args["esc"]) as ea:
        if (ga.width, ga.height) != (ea.width, ea.height):
            msg = f"shapes differ: gdaldem {ga.width} x {ga.height}, esc {ea.width} x {ea.height}"
            raise RuntimeError(msg)
        W, H = ga.width, ga.height
        nd_g = ga.nodata if ga.nodata is not None else DEM_NODATA
        nd_e = ea.nodata if ea.nodata is not None else DEM_NODATA
        meta = {
            "gdaldem": {
                "dtype": ga.dtypes[0],
                "nodata": ga.nodata,
                "crs_equal": ga.crs == ea.crs,
                "transform_equal": ga.transform == ea.transform,
            },
            "esc": {"dtype": ea.dtypes[0], "nodata": ea.nodata},
        }
        rows = max(1, CMP_BLOCK_CELLS // W)
        diff_all = diff_interior = nodata_g = nodata_e = nodata_mismatch = valid_both = 0
        max_abs = 0.0
        first_diff: list[int] | None = None
        for r0 in range(0, H, rows):
            r1 = min(H, r0 + rows)
            win = Window(0, r0, W, r1 - r0)
            g = ga.read(1, window=win)
            e = ea.read(1, window=win)
            ng = (g == np.float32(nd_g)) | np.isnan(g)
            ne = (e == np.float32(nd_e)) | np.isnan(e)
            both = ~ng & ~ne
            # Identical: nodata in both, or the same value in both.
            differ = (ng != ne) | (both & (g != e))
            nodata_g += int(ng.sum())
            nodata_e += int(ne.sum())
            nodata_mismatch += int((ng != ne).sum())
            valid_both += int(both.sum())
            diff_all += int(differ.sum())
            lo, hi = max(r0, 1) - r0, min(r1, H - 1) - r0
            if hi > lo:
                diff_interior += int(differ[lo:hi, 1 : W - 1].sum())
            if both.any():
                d = np.abs(g[both].astype(np.float64) - e[both].astype(np.float64))
                max_abs = max(max_abs, float(d.max()))
            if first_diff is None and differ.any():
                rr, cc = np.argwhere(differ)[0]
                first_diff = [int(rr) + r0, int(cc)]
    interior = (H - 2) * (W - 2)
    return {
        "seconds": time.perf_counter() - t0,
        "cells": W * H,
        "interior_cells": interior,
        "differing_cells": diff_all,
        "differing_interior_cells": diff_interior,
        "nodata_mismatch_cells": nodata_mismatch,
        "valid_in_both": valid_both,
        "max_abs_diff": max_abs,
        "nodata_gdaldem": nodata_g,
        "nodata_esc": nodata_e,
        "first_differing_cell": first_diff,
        "identical_interior": diff_interior == 0,
        "identical_all": diff_all == 0,
        "meta": meta,
        "peak_mb": peak_rss_mb(),
    }


def _dem_blocks(height: int, block_cells: int, width: int) -> list[tuple[int, int]]:
    rows = max(1, min(height, block_cells // max(width, 1)))
    return [(r0, min(height, r0 + rows)) for r0 in range(0, height, rows)]


def _out_profile(src: Any) -> dict[str, Any]:
    """The output profile ``write_slope`` uses (float32 GTiff, nodata -9999, default layout)."""
    return {
        "driver": "GTiff",
        "width": src.width,
        "height": src.height,
        "count": 1,
        "dtype": "float32",
        "nodata": DEM_NODATA,
        "crs": src.crs,
        "transform": src.transform,
        "BIGTIFF": "IF_SAFER",
    }


def task_parts(args: dict[str, Any]) -> Result:
    """Time esc's read, compute, fill and write parts separately, single-threaded.

    The blocks are the ones ``esc_gis.terrain.slope`` uses: whole rows, about
    ``block_cells`` cells each, read with a one-row halo. Also times a plain read + write
    copy of the DEM with rasterio (the I/O floor) and the import of the CLI.
    """
    import importlib

    # What `esc-gis slope` imports before it starts (the CLI may import its commands lazily).
    t_imp = time.perf_counter()
    for name in ("esc_gis.cli.main", "esc_gis.cli.slope", "esc_gis.terrain.slope"):
        importlib.import_module(name)
    import_s = time.perf_counter() - t_imp
    import_peak = peak_rss_mb()
    import numpy as np
    import rasterio
    from rasterio.windows import Window

    from esc_gis.terrain import horn_slope_pct, open_dem
    from esc_gis.terrain import slope as slope_mod

    # The library's own block size unless one is given.
    block_cells: int = args.get("block_cells") or slope_mod.BLOCK_CELLS
    out = Path(args["out"])
    info = open_dem(args["dem"], z_unit="m")
    H, W = info.height, info.width
    ew, ns = info.cell_size
    t = dict.fromkeys(("read", "nodata_to_nan", "pad", "compute", "nan_to_nodata", "write", "close"), 0.0)
    per_block: dict[str, list[float]] = {k: [] for k in t if k != "close"}
    # The library reuses its work arrays from block to block; so does this pass.
    scratch = slope_mod._Scratch(max(1, min(H, block_cells // W)), W)

    # 1. The esc pipeline, one part at a time, one thread.
    t0 = time.perf_counter()
    c0 = cpu_seconds()
    with rasterio.open(args["dem"]) as src, rasterio.open(out, "w", **_out_profile(src)) as dst:
        for r0, r1 in _dem_blocks(H, block_cells, W):
            lo, hi = max(0, r0 - 1), min(H, r1 + 1)
            a = time.perf_counter()
            arr = src.read(1, window=Window(0, lo, W, hi - lo), out_dtype=np.float32)
            b = time.perf_counter()
            arr[arr == np.float32(DEM_NODATA)] = np.nan
            c = time.perf_counter()
            win = np.full((r1 - r0 + 2, W + 2), np.nan, dtype=np.float32)
            win[lo - (r0 - 1) : hi - (r0 - 1), 1 : W + 1] = arr
            d = time.perf_counter()
            block = horn_slope_pct(win, ew, ns, scratch=scratch)
            e = time.perf_counter()
            np.nan_to_num(block, copy=False, nan=DEM_NODATA)
            f = time.perf_counter()
            dst.write(block, 1, window=Window(0, r0, W, r1 - r0))
            g = time.perf_counter()
            for key, dt in (
                ("read", b - a),
                ("nodata_to_nan", c - b),
                ("pad", d - c),
                ("compute", e - d),
                ("nan_to_nodata", f - e),
                ("write", g - f),
            ):
                t[key] += dt
                per_block[key].append(dt)
        t_close = time.perf_counter()
    t["close"] = time.perf_counter() - t_close
    pipeline_s = time.perf_counter() - t0
    pipeline_cpu = cpu_seconds() - c0

    # 2. The I/O floor: the DEM copied unchanged (same blocks, no halo, no compute).
    t0 = time.perf_counter()
    c0 = cpu_seconds()
    floor = {"read": 0.0, "write": 0.0}
    with rasterio.open(args["dem"]) as src, rasterio.open(out, "w", **_out_profile(src)) as dst:
        for r0, r1 in _dem_blocks(H, block_cells, W):
            a = time.perf_counter()
            arr = src.read(1, window=Window(0, r0, W, r1 - r0))
            b = time.perf_counter()
            dst.write(arr, 1, window=Window(0, r0, W, r1 - r0))
            floor["read"] += b - a
            floor["write"] += time.perf_counter() - b
    copy_s = time.perf_counter() - t0
    copy_cpu = cpu_seconds() - c0
    out.unlink(missing_ok=True)
    return {
        "block_cells": block_cells,
        "gdal_cachemax_env": os.environ.get("GDAL_CACHEMAX"),
        "import_cli_s": import_s,
        "import_peak_mb": import_peak,
        "pipeline_s": pipeline_s,
        "pipeline_cpu_s": pipeline_cpu,
        "parts_s": t,
        "blocks": len(per_block["read"]),
        # Median block time x blocks: the time the part would take without the VM's stalls.
        "parts_median_block_s": {k: statistics.median(v) * len(v) for k, v in per_block.items()},
        "parts_max_block_s": {k: max(v) for k, v in per_block.items()},
        "copy_s": copy_s,
        "copy_cpu_s": copy_cpu,
        "copy_parts_s": floor,
        "peak_mb": peak_rss_mb(),
    }


def task_sweep(args: dict[str, Any]) -> Result:
    """``iter_slope_blocks`` with one ``block_cells`` and ``threads``, written as ``write_slope`` does."""
    import numpy as np
    import rasterio
    from rasterio.windows import Window

    from esc_gis.terrain import open_dem
    from esc_gis.terrain.slope import iter_slope_blocks

    out = Path(args["out"])
    out.unlink(missing_ok=True)
    base_mb = peak_rss_mb()
    t0 = time.perf_counter()
    c0 = cpu_seconds()
    info = open_dem(args["dem"], z_unit="m")
    wait_s = write_s = 0.0
    with rasterio.open(args["dem"]) as src:
        profile = _out_profile(src)
    with rasterio.open(out, "w", **profile) as dst:
        blocks = iter_slope_blocks(info, block_cells=args["block_cells"], threads=args["threads"])
        while True:
            a = time.perf_counter()
            item = next(blocks, None)
            b = time.perf_counter()
            wait_s += b - a
            if item is None:
                break
            r0, block = item
            np.nan_to_num(block, copy=False, nan=DEM_NODATA)
            dst.write(block, 1, window=Window(0, r0, info.width, block.shape[0]))
            write_s += time.perf_counter() - b
    seconds = time.perf_counter() - t0
    out.unlink(missing_ok=True)
    return {
        "block_cells": args["block_cells"],
        "threads": args["threads"],
        "seconds": seconds,
        "cpu_s": cpu_seconds() - c0,
        "wait_s": wait_s,
        "write_s": write_s,
        "import_peak_mb": base_mb,
        "peak_mb": peak_rss_mb(),
    }


TASKS: dict[str, Callable[[dict[str, Any]], Result]] = {
    "generate": task_generate,
    "layout": task_layout,
    "compare": task_compare,
    "parts": task_parts,
    "sweep": task_sweep,
}


# --------------------------------------------------------------------------------------
# Driver side: standard library only.
# --------------------------------------------------------------------------------------


def _rusage_result(t0: float, pid: int, what: str) -> Result:
    """Reap ``pid`` with ``os.wait4``: its wall time, CPU time and own peak RSS."""
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        msg = f"{what} failed with exit status {code}"
        raise RuntimeError(msg)
    kib = usage.ru_maxrss
    return {
        "seconds": seconds,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "peak_mb": kib / 2**20 if sys.platform == "darwin" else kib / 1024.0,
    }


def run_child(cmd: list[str], what: str, env: dict[str, str] | None = None) -> Result:
    """Run ``cmd`` as a subprocess; wall time, CPU time and peak RSS from ``os.wait4``.

    ``env`` is added to this process's environment for the child.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env={**os.environ, **env} if env else None)
    result = _rusage_result(t0, proc.pid, what)
    proc.returncode = 0  # reaped by os.wait4
    return result


def run_worker(task: str, args: dict[str, Any], tmp: Path, env: dict[str, str] | None = None) -> Result:
    """Run one task in a fresh interpreter; its result, plus the child's rusage figures."""
    cmd, result_path = worker_command(__file__, task, args, tmp)
    usage = run_child(cmd, f"worker {task!r}", env)
    result = read_result(result_path)
    result["process"] = usage
    return result


def git_state() -> dict[str, Any]:
    """The commit being measured, and whether ``src/`` differs from it (None without git)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%h %ad %s", "--date=iso"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"], capture_output=True, text=True, check=True
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return {"head": None, "src_changes": None}
    return {"head": head, "src_changes": [line for line in dirty if line.strip()]}


def require_cli() -> str:
    """The ``esc-gis`` script (:func:`_common.find_cli`), or exit with how to install it."""
    found = find_cli()
    if not found:
        msg = "esc-gis not found next to the interpreter or on PATH; install the package (pip install -e .)"
        raise SystemExit(msg)
    return found


def find_tool(name: str = "gdaldem") -> str:
    """A GDAL program (gdaldem, gdalbuildvrt, gdaladdo) on PATH."""
    found = shutil.which(name)
    if not found:
        msg = f"{name} not found on PATH (Debian: apt-get install gdal-bin)"
        raise SystemExit(msg)
    return found


def gdaldem_version(exe: str) -> str:
    """``gdaldem --version``'s first line (it exits non-zero after printing it)."""
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    return (proc.stdout.splitlines() or ["?"])[0]


def summarize(runs: list[Result]) -> Result:
    """Median and best wall time, median CPU time and the highest peak over the runs."""
    secs = [r["seconds"] for r in runs]
    return {
        "median_s": statistics.median(secs),
        "best_s": min(secs),
        "all_s": secs,
        "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "all_cpu_s": [r["cpu_s"] for r in runs],
        "peak_mb": max(r["peak_mb"] for r in runs),
        "all_peak_mb": [r["peak_mb"] for r in runs],
    }


def check_space(work_dir: Path, sizes: Sequence[int]) -> None:
    """Refuse to start when ``work_dir`` lacks room for the largest size (DEM, a copy, 3 outputs)."""
    need = 5 * max(sizes) ** 2 * 4 * 1.4
    free = shutil.disk_usage(work_dir).free
    if free < need * 1.1:
        msg = f"{work_dir}: {free / 2**30:.1f} GiB free, {need / 2**30:.1f} GiB needed; use --work-dir"
        raise SystemExit(msg)


def make_layout(size: int, layout: str, plain: Path, work: Path) -> tuple[Path, list[Path], Result | None]:
    """The DEM to read for ``layout``, the files to delete afterwards, and how it was made."""
    if layout == "plain":
        return plain, [], None
    print(f"[{size}] laying the DEM out as {layout} ...", file=sys.stderr)
    if layout == "deflate":
        dem = work / f"dem_{size}_deflate.tif"
        made = run_worker("layout", {"src": str(plain), "layout": "deflate", "path": str(dem)}, work)
        return dem, [dem], made
    folder = work / f"dem_{size}_tiles"
    made = run_worker("layout", {"src": str(plain), "layout": "vrt", "path": str(folder)}, work)
    vrt = work / f"dem_{size}_tiles.vrt"
    tiles = sorted(folder.glob("*.tif"))
    subprocess.run([find_tool("gdalbuildvrt"), "-q", str(vrt), *map(str, tiles)], check=True)
    return vrt, [vrt, *tiles, folder], made


def overview_levels(size: int) -> list[str]:
    """esc's overview levels (``esc_gis.terrain.slope.overview_factors``), for gdaladdo."""
    out, f = [], 2
    while size / f >= 256:
        out.append(str(f))
        f *= 2
    return out


def run_gdaldem_same(cmd: list[str], addo: list[str]) -> Result:
    """gdaldem writing esc's layout, then gdaladdo: times added, the higher peak."""
    a, b = run_child(cmd, "gdaldem (same output)"), run_child(addo, "gdaladdo")
    return {
        "seconds": a["seconds"] + b["seconds"],
        "cpu_s": a["cpu_s"] + b["cpu_s"],
        "peak_mb": max(a["peak_mb"], b["peak_mb"]),
        "parts_s": [a["seconds"], b["seconds"]],
    }


def bench_size(
    size: int, layout: str, plain: Path, gen: Result, args: argparse.Namespace, work: Path, gdaldem: str, esc: str
) -> Result:
    """Time the tools on one layout of one DEM, compare the outputs, run the diagnostics."""
    out_g = work / f"gdaldem_{size}.tif"
    out_s = work / f"gdaldem_same_{size}.tif"
    out_e = work / f"esc_{size}.tif"
    out_x = work / f"sweep_{size}.tif"
    dem, made_files, made = make_layout(size, layout, plain, work)
    files = [out_g, out_s, out_e, out_x, *made_files]
    fig: Result = {"size": size, "layout": layout, "cells": size * size, "dem": str(dem), "generate": gen}
    fig["layout_made"] = made
    try:
        cmds = {
            "gdaldem": [gdaldem, "slope", "-p", "-q", str(dem), str(out_g)],
            "esc": [
                esc,
                "slope",
                str(dem),
                "-o",
                str(out_e),
                "--z-unit",
                "m",
                "--overwrite",
                "--quiet",
                "--compress",
                args.compress,
            ],
        }
        # gdaldem writing what esc writes: the same tiles, codec and level.
        codec = {
            "deflate": ["COMPRESS=DEFLATE", "PREDICTOR=3", "ZLEVEL=1"],
            "zstd": ["COMPRESS=ZSTD", "PREDICTOR=3", "ZSTD_LEVEL=1"],
            "lzw": ["COMPRESS=LZW", "PREDICTOR=3"],
            "none": [],
        }[args.compress]
        same_co = ["TILED=YES", f"BLOCKXSIZE={TILE}", f"BLOCKYSIZE={TILE}", *codec]
        same = [gdaldem, "slope", "-p", "-q", *(x for co in same_co for x in ("-co", co))]
        addo = [find_tool("gdaladdo"), "-q", "-r", "average", str(out_s), *overview_levels(size)]
        outs = {"gdaldem": out_g, "esc": out_e, "gdaldem+addo": out_s}
        runs: dict[str, list[Result]] = {name: [] for name in outs if name != "gdaldem+addo" or args.same_output}
        order: list[list[str]] = []
        for i in range(args.repeat):
            names = list(runs) if i % 2 == 0 else list(reversed(runs))
            order.append(names)
            for name in names:
                # gdaldem refuses nothing, but starts from a fresh file like esc (--overwrite).
                outs[name].unlink(missing_ok=True)
                if name == "gdaldem+addo":
                    r = run_gdaldem_same([*same, str(dem), str(out_s)], addo)
                else:
                    r = run_child(cmds[name], name)
                runs[name].append(r)
                print(
                    f"[{size} {layout}] run {i + 1}/{args.repeat} {name:<12} {r['seconds']:6.2f} s wall, "
                    f"{r['cpu_s']:6.2f} s CPU, {r['peak_mb']:7.1f} MB peak",
                    file=sys.stderr,
                )
        fig["order"] = order
        fig["runs"] = runs
        for name in runs:
            fig[name] = summarize(runs[name])
            fig[name]["mcells_per_s"] = size * size / fig[name]["median_s"] / 1e6
        fig["ratio"] = fig["esc"]["median_s"] / fig["gdaldem"]["median_s"]
        fig["ratio_best"] = fig["esc"]["best_s"] / fig["gdaldem"]["best_s"]
        if "gdaldem+addo" in fig:
            fig["ratio_same_output"] = fig["esc"]["median_s"] / fig["gdaldem+addo"]["median_s"]
            out_s.unlink(missing_ok=True)
        print(f"[{size}] comparing the outputs ...", file=sys.stderr)
        fig["compare"] = run_worker("compare", {"gdaldem": str(out_g), "esc": str(out_e)}, work)
        out_g.unlink(missing_ok=True)
        out_e.unlink(missing_ok=True)
        if args.parts:
            print(f"[{size}] timing the parts of the esc pipeline ...", file=sys.stderr)
            parts = [
                run_worker(
                    "parts",
                    {"dem": str(dem), "out": str(out_x), "block_cells": args.parts_block_cells},
                    work,
                    {"GDAL_CACHEMAX": str(args.parts_cachemax)} if args.parts_cachemax else None,
                )
                for _ in range(args.repeat)
            ]
            fig["parts"] = _median_parts(parts)
        if args.sweep:
            fig["sweep"] = []
            for cache_mb, log2, threads in itertools.product(
                args.sweep_cachemax, args.sweep_blocks, args.sweep_threads
            ):
                cache = f"GDAL_CACHEMAX={cache_mb}" if cache_mb else "GDAL's default cache"
                print(f"[{size}] sweep block_cells=1<<{log2} threads={threads} {cache} ...", file=sys.stderr)
                env = {"GDAL_CACHEMAX": str(cache_mb)} if cache_mb else None
                task_args = {"dem": str(dem), "out": str(out_x), "block_cells": 1 << log2, "threads": threads}
                rs = [run_worker("sweep", task_args, work, env) for _ in range(args.repeat)]
                fig["sweep"].append(
                    {
                        "gdal_cachemax_mb": cache_mb,
                        "log2_block_cells": log2,
                        "threads": threads,
                        "median_s": statistics.median(r["seconds"] for r in rs),
                        "best_s": min(r["seconds"] for r in rs),
                        "median_cpu_s": statistics.median(r["cpu_s"] for r in rs),
                        "median_wait_s": statistics.median(r["wait_s"] for r in rs),
                        "median_write_s": statistics.median(r["write_s"] for r in rs),
                        "import_peak_mb": max(r["import_peak_mb"] for r in rs),
                        "peak_mb": max(r["peak_mb"] for r in rs),
                    }
                )
    finally:
        if not args.keep:
            for f in files:
                if f.is_dir():
                    f.rmdir()  # the tiles' folder, emptied before (listed after its tiles)
                else:
                    f.unlink(missing_ok=True)
    return fig


def _median_parts(runs: list[Result]) -> Result:
    """Median of every timing over the runs of the ``parts`` task; highest peak."""
    out: Result = {
        "block_cells": runs[0]["block_cells"],
        "gdal_cachemax_env": runs[0]["gdal_cachemax_env"],
        "peak_mb": max(r["peak_mb"] for r in runs),
    }
    out["import_peak_mb"] = max(r["import_peak_mb"] for r in runs)
    for key in ("import_cli_s", "pipeline_s", "pipeline_cpu_s", "copy_s", "copy_cpu_s"):
        out[key] = statistics.median(r[key] for r in runs)
    out["blocks"] = runs[0]["blocks"]
    for key in ("parts_s", "copy_parts_s", "parts_median_block_s", "parts_max_block_s"):
        out[key] = {k: statistics.median(r[key][k] for r in runs) for k in runs[0][key]}
    return out


def _row(label: str, gd: str, es: str, target: str = "") -> str:
    return f"  {label:<34}{gd:>14}{es:>14}  {target}".rstrip()


def _verdict(good: bool) -> str:
    return "ok" if good else "MISSED"


def report_size(fig: Result, repeat: int) -> str:
    """The printed table of one size."""
    n, gen, cmp_ = fig["size"], fig["generate"], fig["compare"]
    gd, es = fig["gdaldem"], fig["esc"]
    lo, hi = gen["z_range_m"]
    holes = f", {gen['holes']} nodata holes" if gen["holes"] else ""
    made = fig.get("layout_made")
    layout = {
        "plain": f"striped {gen['layout']['block_shape']}, compress {gen['layout']['compress']}",
        "deflate": f"tiled {TILE} x {TILE}, deflate",
        "vrt": f"a .vrt (gdalbuildvrt) of {made['tiles'] if made else '?'} tiles, each tiled {TILE} x {TILE}, deflate",
    }[fig.get("layout", "plain")]
    size_mb = made["mb"] if made else gen["dem_mb"]
    lines = [
        f"slope benchmark: {n:,} x {n:,} DEM = {n * n / 1e6:,.1f} Mcells, float32, {DEM_CRS}, 1 m cells",
        f"  DEM ({fig.get('layout', 'plain')}): {size_mb:,.0f} MB, {layout}, "
        f"z {lo:.1f}..{hi:.1f} m{holes} (generated in {gen['seconds']:.1f} s)",
        f"  {repeat} run(s) of each tool, alternating order; wall and CPU from os.wait4 of each child",
        "",
        _row("measure", "gdaldem", "esc-gis", "target"),
        _row("-" * 34, "-" * 14, "-" * 14, "-" * 20),
        _row("wall, median", f"{gd['median_s']:.2f} s", f"{es['median_s']:.2f} s"),
        _row("wall, best", f"{gd['best_s']:.2f} s", f"{es['best_s']:.2f} s"),
        _row("Mcells/s (cells / median wall)", f"{gd['mcells_per_s']:.1f}", f"{es['mcells_per_s']:.1f}"),
        _row("CPU (user + sys), median", f"{gd['median_cpu_s']:.2f} s", f"{es['median_cpu_s']:.2f} s"),
        _row(
            "peak RSS (highest run)",
            f"{gd['peak_mb']:,.1f} MB",
            f"{es['peak_mb']:,.1f} MB",
            f"esc < {TARGET_PEAK_MB:g} MB  {_verdict(es['peak_mb'] < TARGET_PEAK_MB)}",
        ),
        "",
        f"  every run, wall s: gdaldem {' '.join(f'{v:.2f}' for v in gd['all_s'])}; "
        f"esc {' '.join(f'{v:.2f}' for v in es['all_s'])} (order: {' | '.join(' '.join(o) for o in fig['order'])})",
        f"  every run, peak MB: gdaldem {' '.join(f'{v:.0f}' for v in gd['all_peak_mb'])}; "
        f"esc {' '.join(f'{v:.0f}' for v in es['all_peak_mb'])}",
        "",
        f"  ratio esc / gdaldem, median wall: {fig['ratio']:.2f}   (best / best: {fig['ratio_best']:.2f})"
        f"   target <= {TARGET_RATIO:g}  {_verdict(fig['ratio'] <= TARGET_RATIO)}",
    ]
    if "gdaldem+addo" in fig:
        sa = fig["gdaldem+addo"]
        lines += [
            f"  like for like (gdaldem -co TILED/DEFLATE/PREDICTOR=3/ZLEVEL=1 + gdaladdo -r average): "
            f"{sa['median_s']:.2f} s median wall, {sa['median_cpu_s']:.2f} s CPU, {sa['peak_mb']:,.0f} MB; "
            f"ratio esc / that {fig['ratio_same_output']:.2f}",
        ]
    lines += [
        "",
        f"  identical on every interior cell: {'yes' if cmp_['identical_interior'] else 'NO'}"
        f"   (all cells: {'yes' if cmp_['identical_all'] else 'no'})",
        f"  differing cells: {cmp_['differing_cells']:,} of {cmp_['cells']:,}; interior: "
        f"{cmp_['differing_interior_cells']:,} of {cmp_['interior_cells']:,}; "
        f"nodata in one only: {cmp_['nodata_mismatch_cells']:,}",
        f"  max |esc - gdaldem| over {cmp_['valid_in_both']:,} cells valid in both: {cmp_['max_abs_diff']:.3g}",
        f"  nodata cells: gdaldem {cmp_['nodata_gdaldem']:,}, esc {cmp_['nodata_esc']:,}",
    ]
    if cmp_["first_differing_cell"]:
        lines.append(f"  first differing cell (row, col): {tuple(cmp_['first_differing_cell'])}")
    if "parts" in fig:
        p = fig["parts"]
        pt = p["parts_s"]
        total = sum(pt.values())
        lines += [
            "",
            f"  esc pipeline by part, one thread, block_cells = {p['block_cells']:,}, {p['blocks']} blocks, "
            f"GDAL_CACHEMAX {p['gdal_cachemax_env'] or 'default'} (median of {repeat} runs):",
        ]
        lines.append(f"    {'part':<16}{'total':>9}{'share':>6}{'median block x n':>18}{'slowest block':>15}")
        med, mx = p["parts_median_block_s"], p["parts_max_block_s"]
        lines += [
            f"    {k:<16}{v:>7.2f} s{v / total:>6.0%}" + (f"{med[k]:>16.2f} s{mx[k]:>13.2f} s" if k in med else "")
            for k, v in pt.items()
        ]
        lines += [
            f"    {'sum':<16}{total:>7.2f} s   (loop wall {p['pipeline_s']:.2f} s, CPU {p['pipeline_cpu_s']:.2f} s)",
            f"    I/O floor, rasterio copy of the DEM: {p['copy_s']:.2f} s (read {p['copy_parts_s']['read']:.2f}, "
            f"write {p['copy_parts_s']['write']:.2f}; CPU {p['copy_cpu_s']:.2f} s)",
            f"    import of esc-gis slope's modules: {p['import_cli_s']:.2f} s, {p['import_peak_mb']:,.0f} MB; "
            f"worker peak {p['peak_mb']:,.0f} MB",
        ]
    if fig.get("sweep"):
        lines += [
            "",
            f"  iter_slope_blocks + rasterio write, in process (median of {repeat}):",
            f"    {'cache MB':<9}{'block_cells':<13}{'threads':>8}{'wall s':>9}{'best s':>9}{'CPU s':>8}"
            f"{'wait s':>8}{'write s':>9}{'peak MB':>9}{'Δ MB':>7}",
        ]
        for s in fig["sweep"]:
            cache = str(s["gdal_cachemax_mb"]) if s["gdal_cachemax_mb"] else "default"
            lines.append(
                f"    {cache:<9}{'1<<' + str(s['log2_block_cells']):<13}{s['threads']:>8}{s['median_s']:>9.2f}"
                f"{s['best_s']:>9.2f}{s['median_cpu_s']:>8.2f}{s['median_wait_s']:>8.2f}"
                f"{s['median_write_s']:>9.2f}{s['peak_mb']:>9.0f}{s['peak_mb'] - s['import_peak_mb']:>7.0f}"
            )
        lines.append(
            "    (wait: consumer blocked on the next block; write: nan_to_num + dst.write; "
            "Δ MB: peak above the peak after imports)"
        )
    return "\n".join(lines)


def _int_list(text: str) -> list[int]:
    try:
        return [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers separated by commas, got {text!r}") from None


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--size", type=int, default=None, help="DEM side in cells (default 8000)")
    p.add_argument(
        "--sizes",
        type=_int_list,
        default=None,
        metavar="N,N,...",
        help="several DEM sides in one go, e.g. 8000,16000 (the 4x larger memory check)",
    )
    p.add_argument("--repeat", type=int, default=3, help="runs of each tool (default 3); medians are reported")
    p.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="folder for the DEM and the outputs (default: a new temporary folder)",
    )
    p.add_argument("--keep", action="store_true", help="keep the generated DEMs and the outputs")
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the figures as JSON")
    p.add_argument("--seed", type=int, default=540, help="random seed of the noise and phases (default 540)")
    p.add_argument("--holes", type=int, default=0, help="circular nodata holes in the DEM (default 0)")
    p.add_argument(
        "--layouts",
        default=",".join(LAYOUTS),
        metavar="L,...",
        help="DEM layouts to time: plain (striped, uncompressed), deflate (tiled 512, deflate), "
        "vrt (4 x 4 such tiles, gdalbuildvrt); default all",
    )
    p.add_argument(
        "--same-output",
        action="store_true",
        help="also time gdaldem writing esc's output layout, plus gdaladdo (the like-for-like figure)",
    )
    p.add_argument(
        "--compress",
        choices=("deflate", "zstd", "lzw", "none"),
        default="deflate",
        help="esc-gis slope --compress (and gdaldem's with --same-output); default deflate",
    )
    p.add_argument("--parts", action="store_true", help="also time esc's read / compute / write parts in process")
    p.add_argument(
        "--parts-block-cells",
        type=int,
        default=None,
        metavar="CELLS",
        help="block size of --parts (default: esc_gis.terrain.slope.BLOCK_CELLS)",
    )
    p.add_argument(
        "--parts-cachemax",
        type=int,
        default=0,
        metavar="MB",
        help="GDAL_CACHEMAX (MB) of the --parts worker; 0 = GDAL's default (5%% of RAM)",
    )
    p.add_argument("--sweep", action="store_true", help="also run iter_slope_blocks over block_cells x threads")
    p.add_argument(
        "--sweep-blocks",
        type=_int_list,
        default=[16, 18, 20, 22],
        metavar="LOG2,...",
        help="log2 of the block_cells values of --sweep (default 16,18,20,22)",
    )
    p.add_argument(
        "--sweep-threads",
        type=_int_list,
        default=[1, 2],
        metavar="T,...",
        help="threads values of --sweep (default 1,2)",
    )
    p.add_argument(
        "--sweep-cachemax",
        type=_int_list,
        default=[0],
        metavar="MB,...",
        help="GDAL_CACHEMAX values (MB) of the --sweep workers; 0 = GDAL's default",
    )
    args = p.parse_args(argv)
    if args.size is not None and args.sizes is not None:
        p.error("give --size or --sizes, not both")
    args.sizes = args.sizes or [args.size or 8000]
    args.layouts = [v for v in args.layouts.replace(" ", "").split(",") if v]
    if not args.layouts or set(args.layouts) - set(LAYOUTS):
        p.error(f"--layouts takes some of {','.join(LAYOUTS)}")
    if min(args.sizes) < 3 or args.repeat < 1:
        p.error("sizes must be at least 3 and --repeat at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Generate each DEM, run both tools on it in their own processes, print the table."""
    args = parse_args(argv)
    gdaldem, esc = find_tool("gdaldem"), require_cli()
    made_dir = args.work_dir is None
    work: Path = Path(tempfile.mkdtemp(prefix="esc_gis_bench_slope_")) if made_dir else args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    fig: Result = {
        "sizes": args.sizes,
        "repeat": args.repeat,
        "seed": args.seed,
        "holes": args.holes,
        "python": sys.version.split()[0],
        "gdaldem": gdaldem_version(gdaldem),
        "cpus": os.cpu_count(),
        "targets": {"ratio_max": TARGET_RATIO, "esc_peak_mb_max": TARGET_PEAK_MB},
        "results": [],
    }
    # src/ may change between sizes (someone working on it): the state is recorded per size too.
    fig["git"] = git_state()
    head = fig["git"]["head"] or "unknown (no git)"
    dirty = f", {len(fig['git']['src_changes'])} uncommitted change(s) in src/" if fig["git"]["src_changes"] else ""
    print(f"esc_gis at {head}{dirty}; {fig['gdaldem']}; {os.cpu_count()} CPUs", flush=True)
    try:
        check_space(work, args.sizes)
        for size in args.sizes:
            plain = work / f"dem_{size}.tif"
            print(f"[{size}] generating a {size} x {size} DEM in {work} ...", file=sys.stderr)
            gen = run_worker(
                "generate", {"size": size, "seed": args.seed, "holes": args.holes, "path": str(plain)}, work
            )
            try:
                for layout in args.layouts:
                    res = bench_size(size, layout, plain, gen, args, work, gdaldem, esc)
                    res["git"] = git_state()
                    fig["results"].append(res)
                    print(report_size(res, args.repeat), flush=True)
                    print(flush=True)
            finally:
                if not args.keep:
                    plain.unlink(missing_ok=True)
        if len(fig["results"]) > 1:
            print("summary:")
            for r in fig["results"]:
                same = f", like-for-like {r['ratio_same_output']:.2f}" if "ratio_same_output" in r else ""
                print(
                    f"  {r['size']:>6} ^2 {r['layout']:<8}: ratio {r['ratio']:.2f}{same}, "
                    f"esc {r['esc']['mcells_per_s']:.1f} Mcells/s "
                    f"({r['esc']['peak_mb']:,.0f} MB), gdaldem {r['gdaldem']['mcells_per_s']:.1f} Mcells/s "
                    f"({r['gdaldem']['peak_mb']:,.0f} MB), interior identical: "
                    f"{'yes' if r['compare']['identical_interior'] else 'NO'}"
                )
        fig["all_targets_met"] = all(
            r["ratio"] <= TARGET_RATIO and r["esc"]["peak_mb"] < TARGET_PEAK_MB and r["compare"]["identical_interior"]
            for r in fig["results"]
        )
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(fig, indent=2), encoding="utf-8")
            print(f"figures written to {args.json}")
        if args.keep:
            print(f"files kept in {work}")
    finally:
        if made_dir and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == WORKER:
        sys.exit(worker_main(TASKS, sys.argv[2:]))
    sys.exit(main())
