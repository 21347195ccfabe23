"""Benchmark the overview map against a plain folium map of the same screened parcels.

What it measures
----------------
N synthetic parcels (the screening benchmark's generator) are screened with the Village's
layer set, then drawn two ways (three with ``--canvas``):

plain
    ``folium.Map()`` + ``folium.GeoJson(results in EPSG:4326, tooltip=site_id and permit)``:
    what a user writes first. Coordinates keep full precision; SVG rendering.
plain-canvas
    the same with ``prefer_canvas=True``.
esc
    ``esc_gis.maps.overview_map``: simplified, delta-coded micro-degrees in a JSON script
    element, one canvas path per permit class, popups found by click, Leaflet only.
empty
    ``overview_map`` of one site: the fixed cost of any page on this machine (Leaflet,
    refused tiles, controls), to tell the data's cost from the page's.

For each: the HTML size, and the load time in Debian's headless Chromium (Playwright,
``executable_path``), from navigation start to the end of the ``load`` event, median of
``--repeat`` fresh pages. Leaflet is answered from ``node_modules`` (as the tests do);
every other host (tiles, folium's jQuery/Bootstrap/fonts for the plain map) fails in
Chromium's resolver, so the network never decides the figure. Ratios are esc / plain,
measured in the same run.

How to run (by hand, never from the tests)::

    .venv/bin/python benchmarks/bench_maps.py --n 10000
    .venv/bin/python benchmarks/bench_maps.py --n 10000,100000 --repeat 3 --json out/bench_maps.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from chromium import ARGS, LEAFLET

TARGET_MB, TARGET_LOAD_S = 3.0, 0.5


def build_maps(n: int, folder: Path) -> dict[str, Path]:
    """Screen ``n`` synthetic parcels and write the maps; return name -> HTML path."""
    import folium

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_screen

    import esc_gis
    from esc_gis.maps import overview_map, write_map

    parcels = folder / f"parcels_{n}.gpkg"
    bench_screen.task_generate({"n": n, "seed": 540, "parcel_acres": 0.375, "path": str(parcels)})
    results = esc_gis.screen(parcels)
    ll = results[["site_id", "permit", "geometry"]].to_crs("EPSG:4326")
    out: dict[str, Path] = {}
    for name, canvas in (("plain", False), ("plain-canvas", True)):
        m = folium.Map(prefer_canvas=canvas)
        folium.GeoJson(ll, tooltip=folium.GeoJsonTooltip(["site_id", "permit"])).add_to(m)
        m.fit_bounds(m.get_bounds())
        out[name] = folder / f"{name}_{n}.html"
        m.save(str(out[name]))
    # The fixed cost of any page: Leaflet, the tiles (refused) and the controls, one site.
    out["empty"] = write_map(overview_map(results.iloc[:1]), folder / f"empty_{n}.html", overwrite=True)
    t0 = time.perf_counter()
    out["esc"] = write_map(overview_map(results), folder / f"esc_{n}.html", overwrite=True)
    print(f"[{n}] esc overview_map + write_map: {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    return out


def load_seconds(paths: dict[str, Path], repeat: int) -> dict[str, list[float]]:
    """Seconds from navigation start to the end of ``load``, per map, in fresh pages (alternating)."""
    from playwright.sync_api import sync_playwright

    # Only Leaflet's two files go through Playwright (answered from memory); every other
    # host fails in Chromium's own resolver, instantly, without a round trip to Python
    # (routing every tile and folium asset through Playwright cost seconds per page).
    body = {name: (LEAFLET / name).read_bytes() for name in ("leaflet.js", "leaflet.css")}

    def route(r: Any) -> None:
        name = r.request.url.rsplit("/", 1)[1]
        r.fulfill(body=body[name], content_type="text/css" if name.endswith(".css") else "text/javascript")

    args = [*ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE cdn.jsdelivr.net"]
    times: dict[str, list[float]] = {k: [] for k in paths}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=args)
        for i in range(repeat):
            for name in list(paths) if i % 2 == 0 else list(reversed(paths)):
                page = browser.new_page(viewport={"width": 1100, "height": 750})
                page.route("https://cdn.jsdelivr.net/npm/leaflet@*/dist/leaflet.*", route)
                page.goto(paths[name].as_uri(), timeout=600_000)
                page.wait_for_load_state("load")
                ms = page.evaluate(
                    "() => { const t = performance.getEntriesByType('navigation')[0];"
                    " return t.loadEventEnd - t.startTime; }"
                )
                times[name].append(ms / 1000)
                page.close()
        browser.close()
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="10000", help="parcel counts, comma-separated (default 10000)")
    ap.add_argument("--repeat", type=int, default=3, help="page loads of each map (default 3)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    args = ap.parse_args()
    if not shutil.which("chromium") or not (LEAFLET / "leaflet.js").is_file():
        print("needs Debian's chromium and node_modules/leaflet (npm ci)", file=sys.stderr)
        return 2
    figures = {}
    with tempfile.TemporaryDirectory(prefix="esc_gis_bench_maps_") as tmp:
        for n in (int(v) for v in args.n.split(",")):
            paths = build_maps(n, Path(tmp))
            times = load_seconds(paths, args.repeat)
            fig = {
                k: {"mb": paths[k].stat().st_size / 2**20, "load_s": statistics.median(v), "all_s": v}
                for k, v in times.items()
            }
            figures[n] = fig
            print(f"\noverview map of {n:,} screened parcels (median of {args.repeat} loads in headless Chromium)")
            print(f"  {'map':<14}{'HTML MB':>10}{'load s':>10}")
            for k, f in fig.items():
                print(f"  {k:<14}{f['mb']:>10.2f}{f['load_s']:>10.2f}")
            esc, plain = fig["esc"], fig["plain"]
            ok_mb, ok_s = esc["mb"] < TARGET_MB, esc["load_s"] < TARGET_LOAD_S
            base = fig["empty"]["load_s"]
            print(
                f"  esc / plain: size {esc['mb'] / plain['mb']:.2f}, load {esc['load_s'] / plain['load_s']:.2f}"
                f"   (esc / plain-canvas load {esc['load_s'] / fig['plain-canvas']['load_s']:.2f})"
            )
            print(
                f"  load above an empty map's {base:.2f} s: esc {esc['load_s'] - base:.2f} s, plain "
                f"{plain['load_s'] - base:.2f} s, ratio {(esc['load_s'] - base) / (plain['load_s'] - base):.2f}"
            )
            print(
                f"  targets: < {TARGET_MB:g} MB {'ok' if ok_mb else 'MISSED'}, "
                f"< {TARGET_LOAD_S:g} s {'ok' if ok_s else 'MISSED'}"
            )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
