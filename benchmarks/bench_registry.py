"""Benchmark the permit registry: importing N permits, listing them, and the agenda of what is due.

Baseline, measured in the same run: pyogrio writing the same N sites to a plain GeoPackage
layer (no validation, no screening, no history). The registry does more per permit (it
screens each site to measure the disturbed area, checks every row, writes the history), so
the ratio says what that costs.

Usage::

    .venv/bin/python benchmarks/bench_registry.py [--n 1000] [--pg postgresql://...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import shapely

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))


def _frame(n: int) -> gpd.GeoDataFrame:
    """N square sites of 3,000-9,000 sq ft on a grid inside the Village's real boundary."""
    from esc_gis.layers import load_layers
    from esc_gis.profile import load_profile

    ls = load_layers(profile=load_profile())
    x0, y0, x1, y1 = ls.jurisdiction.bounds
    xs, ys = np.meshgrid(np.arange(x0, x1, 150.0), np.arange(y0, y1, 150.0))
    rng = np.random.default_rng(540)
    side = np.sqrt(rng.uniform(3000, 9000, xs.size))
    boxes = shapely.box(xs.ravel(), ys.ravel(), xs.ravel() + side, ys.ravel() + side)
    inside = boxes[shapely.contains_properly(ls.jurisdiction, boxes)][:n]
    if len(inside) < n:
        sys.exit(f"only {len(inside)} grid sites fit in the Village; ask for fewer")
    return gpd.GeoDataFrame(
        {
            "site_address": [f"{i} Bench St" for i in range(n)],
            "received_on": ["2026-11-02"] * n,
            "landowner_name": [f"Owner {i}" for i in range(n)],
            "landowner_email": [f"o{i}@example.com" for i in range(n)],
        },
        geometry=inside,
        crs=ls.crs,
    )


def _time(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(target: str, frame: gpd.GeoDataFrame) -> dict[str, float]:
    from esc_gis.profile import load_profile
    from esc_gis.registry import init_registry, open_registry
    from esc_gis.registry.views.agenda import agenda

    init_registry(target)
    prof = load_profile()
    with open_registry(target, profile=prof) as reg:
        out = {"import": _time(lambda: reg.import_frame(frame, source="bench", who="bench"))}
        permits: list = []
        out["list"] = _time(lambda: permits.extend(reg.permits()))
        out["due"] = _time(lambda: agenda(permits, on=date(2026, 12, 31), calendar=reg.calendar, profile=prof))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--pg", default=None, help="also a PostGIS registry at this URL (an empty database or schema)")
    args = p.parse_args()
    frame = _frame(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        # GDAL's first write pays for loading the driver: warm it up, then take the best of three.
        pyogrio.write_dataframe(frame, Path(tmp) / "warm.gpkg", layer="sites")
        base = min(
            _time(lambda k=k: pyogrio.write_dataframe(frame, Path(tmp) / f"plain{k}.gpkg", layer="sites"))
            for k in range(3)
        )
        rows = [("GeoPackage", run(str(Path(tmp) / "permits.gpkg"), frame))]
        if args.pg:
            rows.append(("PostGIS", run(args.pg, frame)))
    print(f"{args.n:,} permits; baseline (pyogrio writes the sites to a GeoPackage): {base:.3f} s")
    for name, t in rows:
        per = t["import"] / args.n * 1000
        print(
            f"{name:<11} import {t['import']:.2f} s ({t['import'] / base:.0f}x baseline, {per:.1f} ms/permit)  "
            f"list {t['list']:.2f} s  due {t['due']:.3f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
