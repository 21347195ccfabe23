"""Make the demo's sample sites: made-up projects placed on the Village's real layers.

The sites are illustrative, not real projects. Each exercises one rule of the ordinance;
they are placed by a deterministic search on the real Village boundary and lake (in
EPSG:7594 feet), then written in EPSG:4326, as a web form would send them:

    examples/demo/sites.geojson       site (lot) polygons with the screening attributes
    examples/demo/disturbed.geojson   disturbed-limit polygons carrying site_id
    layers/winneconne-demo/waters_illustrative.gpkg    made-up stream, wetlands and ditch
    layers/winneconne-demo/targeted_illustrative.gpkg  a made-up targeted-standard area

The illustrative waters and targeted area sit next to sites S17-S21 so the demo shows every
protective-area case; they live only in the demo layer set, never in layers/winneconne/.

Run from the repository root: ``.venv/bin/python scripts/make_demo_sites.py``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely

from esc_gis.io import GPKG_VERSION  # 1.3: what GDAL 3.6 and QGIS 3.22 open without a warning

ROOT = Path(__file__).resolve().parents[1]
CRS = "EPSG:7594"


def square(cx: float, cy: float, area_sqft: float) -> shapely.Polygon:
    """A square of the given area (EPSG:7594 ftUS, so scale by the ftUS->ft factor)."""
    side = math.sqrt(area_sqft / 1.000004000004)  # sq ftUS per sq ft (intl)
    return shapely.box(cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)


def rect(cx: float, cy: float, w: float, h: float) -> shapely.Polygon:
    return shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def anchors(village: shapely.Geometry, lake: shapely.Geometry) -> dict[str, list[tuple[float, float]]]:
    """Candidate centres: deep inside, on the shore, on the boundary, outside, in the enclave."""
    x0, y0, x1, y1 = village.bounds
    xs, ys = np.meshgrid(np.arange(x0, x1, 450.0), np.arange(y0, y1, 450.0))
    pts = shapely.points(xs.ravel(), ys.ravel())
    boxes = shapely.buffer(pts, 220, cap_style="square")
    inside = shapely.contains_properly(village, boxes) & (shapely.distance(lake, boxes) > 300)
    deep = [(p.x, p.y) for p in pts[inside]]

    strip = shapely.difference(shapely.intersection(village, shapely.buffer(lake, 50)), lake)
    parts = sorted(shapely.get_parts(strip), key=lambda g: -g.area)
    shore = shapely.get_coordinates(parts[0].representative_point())[0]

    ring = shapely.LineString(village.exterior.coords)
    cand = shapely.line_interpolate_point(ring, np.linspace(0, ring.length, 400))
    far = cand[shapely.distance(lake, cand) > 600]
    edge = shapely.get_coordinates(far[len(far) // 3])[0]

    out_pts = pts[(shapely.distance(village, boxes) > 800) & (shapely.distance(lake, boxes) > 500)]
    enclave = shapely.Polygon(village.interiors[0]).representative_point()
    return {
        "deep": deep,
        "shore": [tuple(shore)],
        "edge": [tuple(edge)],
        "outside": [(out_pts[0].x, out_pts[0].y)],
        "enclave": [(enclave.x, enclave.y)],
    }


def build(village: shapely.Geometry, lake: shapely.Geometry) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
    a = anchors(village, lake)
    deep = iter(a["deep"])
    sites, dist = [], []

    def add(
        site_id: str,
        name: str,
        centre: tuple[float, float],
        lot: tuple[float, float],
        disturbed: list[shapely.Polygon],
        **attrs: object,
    ) -> None:
        cx, cy = centre
        sites.append(
            {
                "site_id": site_id,
                "name": name,
                "plan_id": attrs.get("plan_id"),
                "activity": attrs.get("activity", "construction"),
                "state_agency": bool(attrs.get("state_agency", False)),
                "npdes_exempt": bool(attrs.get("npdes_exempt", False)),
                "note": "MADE UP for the demo; not a real project",
                "geometry": rect(cx, cy, *lot),
            }
        )
        dist.extend({"site_id": site_id, "geometry": g} for g in disturbed)

    def deep_site(site_id: str, name: str, area: float, lot: tuple[float, float] = (120, 150), **attrs: object) -> None:
        c = next(deep)
        add(site_id, name, c, lot, [square(*c, area)], **attrs)

    deep_site("S01", "Garage addition", 3_000)
    deep_site("S02", "New single-family house", 4_800)
    deep_site("S03", "Deck and patio (close to the line)", 3_980)
    deep_site("S04", "Commercial lot", 62_500, lot=(300, 300))
    c = a["edge"][0]
    add("S05", "Driveway across the Village line", c, (160, 160), [square(*c, 10_000)])
    c = a["outside"][0]
    add("S06", "Barn in the Town of Winneconne", c, (200, 200), [square(*c, 9_000)])
    c = a["enclave"][0]
    add("S07", "Shed in the unincorporated enclave", c, (80, 80), [square(*c, 1_600)])
    deep_site("S08", "State highway ramp (WisDOT)", 20_000, lot=(200, 200), state_agency=True)
    deep_site("S09", "Field drainage tiling", 30_000, lot=(220, 220), activity="agricultural_activity")
    deep_site("S10", "Manure storage structure", 6_000, activity="agricultural_production")
    deep_site("S11", "Woodlot thinning", 25_000, lot=(200, 200), activity="silviculture")
    deep_site("S12", "Federally NPDES-exempt project", 20_000, lot=(200, 200), npdes_exempt=True)
    c = next(deep)
    add("S13", "Maple Ridge, lot 1", (c[0] - 60, c[1]), (110, 150), [square(c[0] - 60, c[1], 2_500)], plan_id="MR")
    add("S14", "Maple Ridge, lot 2", (c[0] + 60, c[1]), (110, 150), [square(c[0] + 60, c[1], 2_500)], plan_id="MR")
    c = next(deep)
    # Two 50 x 50 ft limits overlapping by 22 x 50 ft: union 3,900 sq ft, sum 5,000 sq ft.
    add(
        "S15",
        "Overlapping disturbed limits",
        c,
        (150, 150),
        [rect(c[0] - 14, c[1], 50, 50), rect(c[0] + 14, c[1], 50, 50)],
    )
    c = a["shore"][0]
    add("S16", "Shoreline path", c, (80, 80), [square(*c, 1_500)])

    # Sites next to the ILLUSTRATIVE waters and targeted area (layers/winneconne-demo), each
    # on an anchor at least 700 ft from every other site, so no other result changes.
    used = [shapely.Point(r["geometry"].centroid) for r in sites]

    def far() -> tuple[float, float]:
        for c in deep:
            if min(shapely.distance(shapely.Point(c), u) for u in used) >= 700:
                used.append(shapely.Point(c))
                return c
        raise RuntimeError("no anchor far enough from the other sites")

    waters, targeted = [], []
    cx, cy = far()  # a 4,800 sq ft house whose disturbance comes within 25 ft of a creek
    waters.append(
        (
            "perennial_stream",
            "Mill Creek (ILLUSTRATIVE)",
            None,
            shapely.LineString([(cx - 400, cy - 60), (cx - 100, cy - 70), (cx + 400, cy - 55)]),
        )
    )
    add("S17", "House by Mill Creek", (cx, cy), (120, 150), [square(cx, cy, 4_800)])
    cx, cy = far()  # 2,000 sq ft, 53 ft from a sedge meadow: inside its 75 ft, outside 50 ft
    waters.append(
        ("wetland_highly_susceptible", "Sedge meadow (ILLUSTRATIVE)", None, rect(cx, cy + 75 + 22.36 + 53, 300, 150))
    )
    add("S18", "Shed near a sedge meadow", (cx, cy), (100, 100), [square(cx, cy, 2_000)])
    cx, cy = far()  # 1,200 sq ft, 5 ft from a 400 x 60 ft degraded wetland (strip: 10 ft)
    waters.append(
        (
            "wetland_less_susceptible",
            "Reed canary grass wetland (ILLUSTRATIVE)",
            None,
            rect(cx, cy + 17.32 + 5 + 30, 400, 60),
        )
    )
    add("S19", "Fence by a degraded wetland", (cx, cy), (80, 80), [square(cx, cy, 1_200)])
    cx, cy = far()  # 1,000 sq ft in a targeted performance standard area
    targeted.append(("Upper Fox-Wolf TMDL focus area (ILLUSTRATIVE)", rect(cx, cy, 600, 600)))
    add("S20", "Garden in the TMDL focus area", (cx, cy), (80, 80), [square(cx, cy, 1_000)])
    cx, cy = far()  # 1,500 sq ft across a 12 ft drainage ditch: in the water and its strip
    waters.append(
        (
            "intermittent_stream",
            "Drainage ditch (ILLUSTRATIVE)",
            12.0,
            shapely.LineString([(cx - 350, cy), (cx + 350, cy)]),
        )
    )
    add("S21", "Culvert repair on the drainage ditch", (cx, cy), (80, 80), [rect(cx, cy, 50, 30)])
    s = gpd.GeoDataFrame(sites, crs=CRS)
    d = gpd.GeoDataFrame(dist, crs=CRS)
    w = gpd.GeoDataFrame(
        [
            {
                "water_class": c,
                "name": n,
                "channel_width_ft": cw,
                "geometry": g,
                "note": "ILLUSTRATIVE, made up for the demo; not a real water",
            }
            for c, n, cw, g in waters
        ],
        crs=CRS,
    )
    t = gpd.GeoDataFrame(
        [{"name": n, "geometry": g, "note": "ILLUSTRATIVE, not the real TMDL boundary"} for n, g in targeted], crs=CRS
    )
    return s, d, w, t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "examples" / "demo")
    args = ap.parse_args()
    village = gpd.read_file(ROOT / "layers/winneconne/village_boundary.gpkg").to_crs(CRS).geometry.union_all()
    lake = gpd.read_file(ROOT / "layers/winneconne/waters.gpkg").to_crs(CRS).geometry.union_all()
    sites, disturbed, waters, targeted = build(village, lake)
    demo_layers = ROOT / "layers" / "winneconne-demo"
    for gdf, name in ((waters, "waters_illustrative.gpkg"), (targeted, "targeted_illustrative.gpkg")):
        path = demo_layers / name
        if path.exists():
            path.unlink()
        gdf.to_file(path, engine="pyogrio", layer=path.stem, VERSION=GPKG_VERSION)
        print(f"wrote {path} ({len(gdf)} features)")
    args.out.mkdir(parents=True, exist_ok=True)
    for gdf, name in ((sites, "sites.geojson"), (disturbed, "disturbed.geojson")):
        path = args.out / name
        if path.exists():
            path.unlink()
        # 7 decimals of a degree is ~1 cm: plenty, and keeps the files small.
        gdf.to_crs("EPSG:4326").to_file(
            path, driver="GeoJSON", engine="pyogrio", layer_options={"COORDINATE_PRECISION": 8, "RFC7946": "YES"}
        )
        print(f"wrote {path} ({len(gdf)} features)")


if __name__ == "__main__":
    main()
