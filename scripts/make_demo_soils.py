"""Make the demo's MADE-UP soils layer: three soil map units with a K factor (``kwfact``).

There is no SSURGO extract of Winneconne on these machines, so this script invents three map
units for ``esc-gis soil-loss`` in ``make demo``: three north-south bands across the demo DEM's
extent, so every demo site lies on one or two of them. The names, symbols and K values are
made up (plausible for silt loams and sandy loams, not taken from any soil survey). Do not use
them for any real calculation: use the county's SSURGO map units (``kwfact``) instead.

Output: layers/winneconne-demo/soils_made_up.gpkg (EPSG:7594). Deterministic. Run from the
repository root: ``.venv/bin/python scripts/make_demo_soils.py``.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import rasterio
import shapely

from esc_gis.io import GPKG_VERSION  # 1.3: what GDAL 3.6 and QGIS 3.22 open without a warning

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "layers" / "winneconne-demo"

# (symbol, name, kwfact, share of the extent's width, west to east)
UNITS = (
    ("XA", "Made-up silt loam, 0-6 % slopes (MADE UP)", 0.37, 0.40),
    ("XB", "Made-up loamy sand, 2-12 % slopes (MADE UP)", 0.17, 0.25),
    ("XC", "Made-up silty clay loam, 0-3 % slopes (MADE UP)", 0.43, 0.35),
)


def main() -> None:
    with rasterio.open(DEMO / "dem_synthetic.tif") as src:
        b = src.bounds
        crs = src.crs
    x0 = b.left
    geoms, rows = [], []
    for sym, name, k, share in UNITS:
        x1 = x0 + share * (b.right - b.left)
        geoms.append(shapely.box(x0, b.bottom, x1, b.top))
        rows.append({"musym": sym, "muname": name, "kwfact": k, "note": "MADE UP for the demo; not a soil survey"})
        x0 = x1
    gdf = gpd.GeoDataFrame(rows, geometry=geoms, crs=crs)
    out = DEMO / "soils_made_up.gpkg"
    gdf.to_file(out, layer="soils_made_up", driver="GPKG", engine="pyogrio", VERSION=GPKG_VERSION)
    print(f"Wrote {out}")


if __name__ == "__main__":
    main()
