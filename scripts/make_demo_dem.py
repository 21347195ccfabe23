"""Make the demo's SYNTHETIC elevation model of the Winneconne area.

There is no public DEM of Winneconne on these machines, so this script invents a plausible
one for the demo: a lake plain near 750 ft rising gently away from the water, the lake and
river flat at 746 ft, steep banks along part of the shore, two ravines cut back from the
shore, and a steep-sided mound. A ravine and a bank are placed through two of the made-up
demo sites so that `make demo` shows steep disturbed area. None of this is real terrain.

Output: layers/winneconne-demo/dem_synthetic.tif (EPSG:7594, US survey feet both ways, 10 ft
cells, float32, DEFLATE). Run from the repository root:
``.venv/bin/python scripts/make_demo_dem.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import geopandas as gpd
import numpy as np
import rasterio
import shapely
from pyproj import CRS
from rasterio.transform import from_origin

ROOT = Path(__file__).resolve().parents[1]
CELL_FT = 10.0
MARGIN_FT = 1500.0
WATER_FT = 746.0


def smoothstep(t: np.ndarray) -> np.ndarray:
    t = np.clip(t, 0.0, 1.0)
    return t * t * (3 - 2 * t)


def ravine(
    x: np.ndarray,
    y: np.ndarray,
    start: tuple[float, float],
    end: tuple[float, float],
    depth_ft: float,
    half_width_ft: float,
) -> np.ndarray:
    """Depth to cut for a V-shaped ravine from ``start`` (deep, at the shore) to ``end`` (head)."""
    (x0, y0), (x1, y1) = start, end
    vx, vy = x1 - x0, y1 - y0
    length = np.hypot(vx, vy)
    t = ((x - x0) * vx + (y - y0) * vy) / length**2
    across = np.abs((x - x0) * vy - (y - y0) * vx) / length
    along = smoothstep((1 - t) / 0.3) * (t >= 0)  # full depth from the shore, fading out near the head
    return depth_ft * along * np.clip(1 - across / half_width_ft, 0, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "layers" / "winneconne-demo" / "dem_synthetic.tif")
    args = ap.parse_args()
    village = gpd.read_file(ROOT / "layers/winneconne/village_boundary.gpkg").geometry.union_all()
    lake = gpd.read_file(ROOT / "layers/winneconne/waters.gpkg").geometry.union_all()
    sites = gpd.read_file(ROOT / "examples/demo/sites.geojson").to_crs("EPSG:7594").set_index("site_id")

    x0, y0, x1, y1 = village.bounds
    x0, y0, x1, y1 = x0 - MARGIN_FT, y0 - MARGIN_FT, x1 + MARGIN_FT, y1 + MARGIN_FT
    width, height = int((x1 - x0) / CELL_FT), int((y1 - y0) / CELL_FT)
    xs = x0 + (np.arange(width) + 0.5) * CELL_FT
    ys = y1 - (np.arange(height) + 0.5) * CELL_FT
    X, Y = np.meshgrid(xs, ys)

    pts = shapely.points(X.ravel(), Y.ravel())
    shapely.prepare(lake)
    dist = shapely.distance(lake, pts).reshape(X.shape)  # 0 on the water

    # Lake plain: 748 ft at the shore rising 0.4 % inland, with gentle swells.
    z = 748.0 + 0.004 * np.minimum(dist, 3000) + 1.5 * np.sin(X / 900) * np.cos(Y / 1300)
    # A bluff north of the Village centre: the plain stands up to 14 ft above the water there,
    # reached by a steep bank (14 ft over 40 ft) at the shore; it grows over 2,000 ft of shore.
    cx, cy = village.centroid.x, village.centroid.y
    bluff = 14.0 * smoothstep((Y - cy + 1000) / 2000)
    bank_zone = bluff > 7
    z += np.where(dist > 0, bluff * smoothstep(dist / 40.0), 0.0)
    # A second bank behind the demo's shoreline path (S16).
    s16 = sites.loc["S16"].geometry.centroid
    near16 = np.hypot(X - s16.x, Y - s16.y) < 250
    z += np.where(near16 & ~bank_zone & (dist > 0), 10.0 * smoothstep(dist / 30.0), 0.0)
    # Two ravines cut back from the shore; one runs through the demo's commercial lot (S04).
    s04 = sites.loc["S04"].geometry.centroid
    shore = shapely.get_coordinates(shapely.shortest_line(lake, s04))[0]
    head = (s04.x + (s04.x - shore[0]) * 0.5, s04.y + (s04.y - shore[1]) * 0.5)
    z -= ravine(X, Y, (shore[0], shore[1]), head, 16.0, 55.0)
    z -= ravine(X, Y, (cx - 2500, cy - 1200), (cx - 2500, cy - 2600), 12.0, 45.0)
    # A steep-sided mound (an old spoil pile) west of the centre.
    r = np.hypot(X - (cx - 1800), Y - (cy + 400))
    z += 18.0 * smoothstep((140 - r) / 70.0)
    # Ravine floors stop just above the water; the lake and river are flat.
    z = np.where(dist == 0, WATER_FT, np.maximum(z, WATER_FT + 0.5))
    z = np.round(z, 2).astype(np.float32)  # 0.01 ft: plenty, and it compresses

    args.out.parent.mkdir(parents=True, exist_ok=True)
    crs = CRS("EPSG:7594")
    profile = {
        "driver": "GTiff",
        "width": width,
        "height": height,
        "count": 1,
        "dtype": "float32",
        "crs": crs.to_wkt(),
        "transform": from_origin(x0, y1, CELL_FT, CELL_FT),
        "nodata": -9999.0,
        "compress": "deflate",
        "predictor": 3,
        "tiled": True,
        "blockxsize": 256,
        "blockysize": 256,
    }
    with rasterio.open(args.out, "w", **profile) as dst:
        dst.write(z, 1)
        dst.update_tags(SYNTHETIC="yes: made up for the esc_gis demo; not real terrain", Z_UNIT="us_ft")
        dst.units = ("US survey foot",)
    print(
        f"wrote {args.out}: {width} x {height} cells of {CELL_FT:g} ft, "
        f"{z.min():.1f}-{z.max():.1f} ft, {args.out.stat().st_size / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
