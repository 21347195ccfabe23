"""Benchmark how fast the commands start, against ``rio --help`` in the same run (issues 36 and 49).

A clerk's day is dozens of short commands, and the QGIS provider and the tests pay the start on
every call. Each command below is run as a whole process, alternating with ``rio --help`` (the
baseline: rasterio's CLI in the same environment), ``--runs`` times after one warm-up; the
figures are the median wall time and peak memory of each, and the median of the pairwise
ratios (so a drift in the machine's speed cancels). Targets: every ``--help`` within 1.5x, the
registry's reading commands (``permits list``, ``show``, ``due``) within 1.0x; a ratio over its
target is marked ``over`` and the script exits 1.

The registry's reading commands run on a small GeoPackage registry made here (the demo's seven
made-up permits, inside the demo layer set), as a clerk's would be.

Usage::

    .venv/bin/python benchmarks/bench_start.py [--runs 9] [--json out/bench_start.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEMO = ROOT / "examples" / "demo"
LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"
#: The median ratio to ``rio --help`` each kind of command must stay within.
HELP_TARGET, REGISTRY_TARGET = 1.5, 1.0
COMMANDS = ["screen", "slope", "steep", "protective", "map", "rules", "permits", "review", "soil-loss", "serve"]


def timed(argv: list[str]) -> tuple[float, float]:
    """Run ``argv`` once; return its wall seconds and peak resident memory (MB)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return wall, usage.ru_maxrss / 1024


def pair(a: list[str], b: list[str], runs: int) -> dict[str, float]:
    """Time ``a`` and ``b`` in turn (A B A B ...) after one warm-up of each."""
    timed(a), timed(b)
    wa, wb, ma, mb, ratios = [], [], [], [], []
    for _ in range(runs):
        ta, pa = timed(a)
        tb, pb = timed(b)
        wa.append(ta), wb.append(tb), ma.append(pa), mb.append(pb), ratios.append(ta / tb)
    return {
        "wall_s": statistics.median(wa),
        "baseline_wall_s": statistics.median(wb),
        "ratio": statistics.median(ratios),
        "ratio_max": max(ratios),
        "peak_mb": statistics.median(ma),
        "baseline_peak_mb": statistics.median(mb),
    }


def registry(folder: Path) -> Path:
    """A registry of the demo's permits (made up), in a GeoPackage."""
    reg = folder / "permits.gpkg"
    esc = str(BIN / "esc-gis")
    subprocess.run([esc, "permits", "init", str(reg), "--layers", str(LAYERS)], check=True, capture_output=True)
    subprocess.run(
        [esc, "permits", "import", str(reg), str(DEMO / "permits.geojson"), "--layers", str(LAYERS), "--who", "bench"],
        check=True,
        capture_output=True,
    )
    return reg


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=9, help="counted pairs per command (default 9)")
    p.add_argument("--json", type=Path, default=None, help="write every figure to this file")
    args = p.parse_args()
    esc, rio = str(BIN / "esc-gis"), [str(BIN / "rio"), "--help"]
    with tempfile.TemporaryDirectory() as tmp:
        reg = str(registry(Path(tmp)))
        cases = {"esc-gis --help": [esc, "--help"]}
        cases |= {f"esc-gis {c} --help": [esc, c, "--help"] for c in COMMANDS}
        cases |= {
            "esc-gis permits list REG": [esc, "permits", "list", reg, "--layers", str(LAYERS)],
            "esc-gis permits show REG N": [esc, "permits", "show", reg, "ESC-2026-0101", "--layers", str(LAYERS)],
            "esc-gis permits due REG": [esc, "permits", "due", reg, "--on", "2026-11-30", "--layers", str(LAYERS)],
        }
        results = {name: pair(argv, rio, args.runs) for name, argv in cases.items()}
    for name, r in results.items():
        r["target"] = REGISTRY_TARGET if name.startswith("esc-gis permits ") and "--help" not in name else HELP_TARGET
    load = os.getloadavg()[0]
    print(f"\nrio --help as the baseline, {args.runs} pairs each, {os.cpu_count()} CPUs, load {load:.2f}\n")
    print("| command | wall s | rio --help s | ratio (median, max) | target | peak MB | rio peak MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        mark = "" if r["ratio"] <= r["target"] else " over"
        print(
            f"| `{name}` | {r['wall_s']:.2f} | {r['baseline_wall_s']:.2f} | {r['ratio']:.2f}x, {r['ratio_max']:.2f}x "
            f"| {r['target']:.1f}x{mark} | {r['peak_mb']:.0f} | {r['baseline_peak_mb']:.0f} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    if any(r["ratio"] > r["target"] for r in results.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
