"""Build the Village of Winneconne layer set from real public data.

Reads the public source files described in ``SOURCES.md`` of the shared
``layers-real`` directory and writes a small, reproducible layer set for the
erosion-control screener:

``village_boundary.gpkg`` (layer ``village_boundary``)
    US Census TIGER/Line 2019 PLACE polygon for Winneconne village
    (GEOID ``5587900``), reprojected to EPSG:7594. The polygon's interior
    ring (an unincorporated enclave) is kept.
``waters.gpkg`` (layer ``waters``)
    HydroLAKES v1.0 polygon ``Hylak_id`` 762 (the Winnebago pool, which
    includes Lake Winneconne and the Wolf River through the village),
    reprojected to EPSG:7594 and clipped to the Village's bounding box
    expanded by one mile (5,280 ft) on every side.
``layers.toml``
    The layer-set configuration pointing at the two files above. There is
    no DEM and no targeted-area layer; missing layers switch their
    measurements off.

EPSG:7594 is NAD83(2011) / WISCRS Calumet, Fond du Lac, Outagamie and
Winnebago (US survey feet), so areas are in square US survey feet and
1 acre = 43,560 sq ft.

Examples
--------
Regenerate the committed layer set from the repository root::

    .venv/bin/python scripts/prepare_winneconne_layers.py --overwrite
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import geopandas as gpd
import shapely
from shapely.geometry.base import BaseGeometry

from esc_gis.io import GPKG_VERSION  # 1.3: what GDAL 3.6 and QGIS 3.22 open without a warning

REPO_ROOT = Path(__file__).resolve().parent.parent

TARGET_CRS = "EPSG:7594"
SQFT_PER_ACRE = 43_560.0
CLIP_MARGIN_FT = 5_280.0

PLACE_FILE = Path("boundary") / "tl_2019_55_place.shp"
PLACE_GEOID = "5587900"
PLACE_COLUMNS = ["GEOID", "NAME", "NAMELSAD", "ALAND", "AWATER"]
PLACE_SOURCE = "US Census TIGER/Line 2019 PLACE"

LAKES_FILE = Path("hydro") / "WI_hydrolakes.gpkg"
LAKES_LAYER = "WI_hydrolakes"
LAKE_ID = 762
LAKE_DEFAULT_NAME = "Winnebago pool"
LAKE_SOURCE = "HydroLAKES v1.0 (Messager et al. 2016), SWBD shoreline, ~90 m"

BOUNDARY_NAME = "village_boundary"
WATERS_NAME = "waters"
TOML_NAME = "layers.toml"

LAYERS_TOML = f"""\
# Village of Winneconne layer set (real public data; see README.md)
# Built by scripts/prepare_winneconne_layers.py -- do not edit by hand.
#
# No [dem] and no [targeted_areas]: there is no public DEM of Winneconne and
# no targeted-area layer in the shared data. Missing layers switch their
# measurements off (no slope or targeted-area checks for this layer set).
crs = "{TARGET_CRS}"

[jurisdiction]
path = "{BOUNDARY_NAME}.gpkg"

[waters]
path = "{WATERS_NAME}.gpkg"
class_field = "water_class"
name_field = "name"
"""


def acres(geom: BaseGeometry) -> float:
    """Return the planar area of ``geom`` in acres (CRS units: US survey ft)."""
    return float(geom.area) / SQFT_PER_ACRE


def polygonal_part(geom: BaseGeometry) -> BaseGeometry:
    """Return ``geom`` made valid, keeping only its polygonal parts.

    Parameters
    ----------
    geom
        Any shapely geometry (typically the result of a clip).

    Returns
    -------
    BaseGeometry
        A valid ``Polygon`` or ``MultiPolygon`` (possibly empty).
    """
    if not geom.is_valid:
        geom = shapely.make_valid(geom)
    parts = [p for p in shapely.get_parts(geom) if p.geom_type in ("Polygon", "MultiPolygon") and not p.is_empty]
    polys = [q for p in parts for q in shapely.get_parts(p)]
    if not polys:
        return shapely.MultiPolygon()
    if len(polys) == 1:
        return polys[0]
    return shapely.MultiPolygon(polys)


def read_village(shared: Path) -> gpd.GeoDataFrame:
    """Read the Winneconne village polygon and reproject it to EPSG:7594.

    Parameters
    ----------
    shared
        The shared ``layers-real`` directory.

    Returns
    -------
    geopandas.GeoDataFrame
        One row with ``GEOID, NAME, NAMELSAD, ALAND, AWATER, source``.
    """
    src = gpd.read_file(shared / PLACE_FILE, engine="pyogrio", where=f"GEOID = '{PLACE_GEOID}'")
    if len(src) != 1:
        raise ValueError(f"expected 1 place with GEOID {PLACE_GEOID}, got {len(src)}")
    rings_before = len(src.geometry.iloc[0].interiors)
    if rings_before < 1:
        raise ValueError("expected the village polygon to have an interior ring")
    village = src[[*PLACE_COLUMNS, "geometry"]].copy()
    village.insert(len(PLACE_COLUMNS), "source", PLACE_SOURCE)
    village = village.to_crs(TARGET_CRS)
    geom = village.geometry.iloc[0]
    assert geom.geom_type == "Polygon" and geom.is_valid, geom.geom_type
    assert len(geom.interiors) == rings_before, "interior ring lost in reprojection"
    return village


def read_waters(shared: Path, village: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Read HydroLAKES polygon 762, reproject it and clip it near the village.

    Parameters
    ----------
    shared
        The shared ``layers-real`` directory.
    village
        The village boundary in EPSG:7594 (from :func:`read_village`).

    Returns
    -------
    geopandas.GeoDataFrame
        One row with ``water_class, name, hylak_id, source``.
    """
    src = gpd.read_file(
        shared / LAKES_FILE,
        layer=LAKES_LAYER,
        engine="pyogrio",
        where=f"Hylak_id = {LAKE_ID}",
    )
    if len(src) != 1:
        raise ValueError(f"expected 1 lake with Hylak_id {LAKE_ID}, got {len(src)}")
    lake = src.to_crs(TARGET_CRS)
    xmin, ymin, xmax, ymax = village.total_bounds
    m = CLIP_MARGIN_FT
    clipped = shapely.clip_by_rect(lake.geometry.iloc[0], xmin - m, ymin - m, xmax + m, ymax + m)
    geom = polygonal_part(clipped)
    if geom.is_empty:
        raise ValueError("the lake polygon does not reach the village clip box")
    name = str(src["Lake_name"].iloc[0] or "").strip() or LAKE_DEFAULT_NAME
    return gpd.GeoDataFrame(
        {
            "water_class": ["lake"],
            "name": [name],
            "hylak_id": [int(src["Hylak_id"].iloc[0])],
            "source": [LAKE_SOURCE],
        },
        geometry=[geom],
        crs=TARGET_CRS,
    )


def write_gpkg(gdf: gpd.GeoDataFrame, path: Path, layer: str) -> None:
    """Write ``gdf`` as a single-layer GeoPackage, replacing any old file."""
    path.unlink(missing_ok=True)
    gdf.to_file(path, layer=layer, driver="GPKG", engine="pyogrio", VERSION=GPKG_VERSION)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description="Build the Village of Winneconne layer set from real public data.")
    parser.add_argument(
        "--shared",
        type=Path,
        default=REPO_ROOT / ".." / "shared" / "layers-real",
        help="shared layers-real directory (default: ../shared/layers-real relative to the repository root)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT / "layers" / "winneconne",
        help="output directory (default: layers/winneconne in the repository)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace existing output files")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Build the layer set; return a process exit code."""
    args = parse_args(argv)
    shared: Path = args.shared.resolve()
    out: Path = args.out.resolve()
    outputs = {
        "boundary": out / f"{BOUNDARY_NAME}.gpkg",
        "waters": out / f"{WATERS_NAME}.gpkg",
        "toml": out / TOML_NAME,
    }
    existing = [p for p in outputs.values() if p.exists()]
    if existing and not args.overwrite:
        names = ", ".join(str(p) for p in existing)
        print(f"refusing to overwrite {names} (use --overwrite)", file=sys.stderr)
        return 1

    # Fixed GeoPackage timestamps so reruns give byte-identical files.
    os.environ.setdefault("OGR_CURRENT_DATE", "2000-01-01T00:00:00.000Z")

    village = read_village(shared)
    waters = read_waters(shared, village)

    out.mkdir(parents=True, exist_ok=True)
    write_gpkg(village, outputs["boundary"], BOUNDARY_NAME)
    write_gpkg(waters, outputs["waters"], WATERS_NAME)
    outputs["toml"].write_text(LAYERS_TOML, encoding="utf-8")

    vgeom = village.geometry.iloc[0]
    enclave = shapely.Polygon(vgeom.interiors[0])
    wgeom = waters.geometry.iloc[0]
    print(f"wrote {outputs['boundary']}")
    print(
        f"  village: {acres(vgeom):,.1f} acres (land + water, excluding enclave), "
        f"enclave {acres(enclave):,.1f} acres, "
        f"{shapely.get_num_coordinates(vgeom)} vertices, "
        f"{len(vgeom.interiors)} interior ring(s)"
    )
    print(f"wrote {outputs['waters']}")
    print(
        f"  lake {waters['name'].iloc[0]!r} (Hylak_id {LAKE_ID}) clipped: "
        f"{acres(wgeom):,.1f} acres, {shapely.get_num_coordinates(wgeom)} vertices; "
        f"inside village: {acres(wgeom.intersection(vgeom)):,.1f} acres"
    )
    print(f"wrote {outputs['toml']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
