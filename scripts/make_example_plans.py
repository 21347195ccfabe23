"""Write the two example plan packages of examples/plans/ (MADE UP: not real plans, people or property).

- ``complete/``: the house of demo site S02, with every § 540-9A item (RUSLE2 included, as
  § 540-9A(9) asks of every plan) and the BMPs the site needs; it reviews cleanly.
- ``flawed/``: the house by Mill Creek of demo site S17, with the mistakes reviewers meet:
  a claimed disturbed area under the 4,000 sq ft threshold where the drawing is over it, no
  legal description, a missing phone, the wrong standards, no spill procedures, no RUSLE2
  (six reasons for disapproval); no tracking pad, no silt fence towards the creek, an
  unprotected inlet, an uncovered stockpile (advisories of the review policy); a schedule
  longer than the permit.
- ``phased/``: the commercial lot of demo site S04 over an acre, whose ``[rusle2]`` carries its
  phased schedule and erosivity file, so the review recomputes its sediment discharge.

Usage: ``.venv/bin/python scripts/make_example_plans.py`` (from the repository root).
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import shapely

from esc_gis.io import GPKG_VERSION  # 1.3: what GDAL 3.6 and QGIS 3.22 open without a warning

ROOT = Path(__file__).resolve().parents[1]
CRS = "EPSG:7594"
MADE_UP = "# MADE UP for the demo: not a real plan, person or property.\n"


def _demo(site_id: str) -> tuple[shapely.Geometry, shapely.Geometry]:
    sites = gpd.read_file(ROOT / "examples/demo/sites.geojson").to_crs(CRS).set_index("site_id")
    limits = gpd.read_file(ROOT / "examples/demo/disturbed.geojson").to_crs(CRS).set_index("site_id")
    # Rounded to 0.01 ft: the drawing a consultant sends, not a reprojection's noise.
    return (
        shapely.set_precision(sites.loc[site_id, "geometry"], 0.01),
        shapely.set_precision(limits.loc[site_id, "geometry"], 0.01),
    )


def _write(folder: Path, layers: dict[str, gpd.GeoDataFrame], toml: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "plan.gpkg"
    path.unlink(missing_ok=True)
    for name, gdf in layers.items():
        gdf.to_file(path, layer=name, engine="pyogrio", VERSION=GPKG_VERSION)
    (folder / "plan.toml").write_text(MADE_UP + toml, encoding="utf-8")


def _gdf(rows: list[dict], geoms: list[shapely.Geometry]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows or [{} for _ in geoms], geometry=geoms, crs=CRS)


def _sqft(g: shapely.Geometry) -> int:
    return round(g.area * (1200 / 3937 / 0.3048) ** 2)


def complete() -> None:
    site, dist = _demo("S02")
    x0, y0, x1, _y1 = site.bounds
    dx0, dy0, dx1, dy1 = dist.bounds
    street = shapely.LineString([(x0 - 200, y0 - 5), (x1 + 200, y0 - 5)])  # along the south lot line
    cx = (dx0 + dx1) / 2
    pad = shapely.box(cx - 10, y0 - 5, cx + 10, dy0)  # from the disturbance to the street
    ring = shapely.get_exterior_ring(dist.buffer(5, join_style="mitre"))
    fence = shapely.difference(ring, shapely.box(cx - 12, dy0 - 20, cx + 12, dy0 + 1))  # a gap for the pad
    pile = shapely.box(dx0 + 8, dy1 - 28, dx0 + 28, dy1 - 8)
    wattle = shapely.get_exterior_ring(pile.buffer(3, join_style="mitre"))
    inlet = shapely.Point(cx + 60, y0 - 5)
    layers = {
        "site_boundary": _gdf([{"parcel_id": "DEMO-S02"}], [site]),
        "disturbed_limits": _gdf([], [dist]),
        "drainage": _gdf([{"note": "sheet flow to the street"}], [shapely.LineString([(cx, dy1 - 5), (cx, dy0 + 5)])]),
        "bmps": _gdf(
            [
                {"type": "1056", "label": "silt fence"},
                {"type": "1057", "label": "stone tracking pad"},
                {"type": "1060", "label": "inlet protection"},
                {"type": "1071", "label": "wattle ring"},
            ],
            [fence, pad, inlet, wattle],
        ),
        "stockpiles": _gdf([{"material": "topsoil", "days": 120}], [pile]),
        "streets": _gdf([{"name": "Example St (MADE UP)"}], [street]),
        "inlets": _gdf([{"id": "IN-1"}], [inlet]),
    }
    toml = f'''crs = "EPSG:7594"

[plan]
title = "New single-family house, 101 Example St"
prepared_by = "Example Engineering LLC"

[landowner]
name = "Pat Example 1"
address = "101 Example St, Winneconne, WI 54986"
phone = "920-555-0110"

[[responsible_parties]]
name = "Example Builders 1 LLC"
address = "1 Contractor Way, Oshkosh, WI 54901"
phone = "920-555-0210"
role = "contractor"

[site]
legal_description = "Lot 1, Example Subdivision, Village of Winneconne, Winnebago County, Wisconsin"
parcel_id = "DEMO-S02"
site_area_sqft = {_sqft(site)}
disturbed_area_sqft = {_sqft(dist)}
performance_standards = ["540-7B"]

[schedule]
start = 2027-04-05
end = 2027-08-27
sequence = [
  "Install the tracking pad, the silt fence and the inlet protection",
  "Strip the topsoil to the stockpile and ring it with wattles",
  "Excavate and pour the foundation; backfill",
  "Frame and enclose the house; rough grade",
  "Final grade, seed and mulch; remove the BMPs after final stabilization",
]

[narrative]
text = """Runoff from the lot sheet-flows south to Example St. Silt fence surrounds the disturbance
except at the stone tracking pad, the only way in and out. The street inlet 60 ft east of the
pad gets an inlet filter before work starts. Topsoil is stockpiled in the north-west corner,
ringed with wattles, and seeded if it stays more than 7 days. BMPs are inspected weekly and
within 24 hours of 0.5 inch of rain, and repaired within 24 hours."""
spill_procedures = "Fuel and concrete washout stay on the pad; spills are contained with the kit on site and reported to the Village."

[rusle2]
sediment_tons_per_acre_year = 1.8

# § 540-9A(9): the plan includes the Reference Guide's items as well as RUSLE2.
[reference_guide]
included = true
'''  # noqa: E501 (a line of the TOML written out; wrapping it would change the file)
    _write(ROOT / "examples/plans/complete", layers, toml)


def flawed() -> None:
    site, dist = _demo("S17")
    x0, _y0, x1, y1 = site.bounds
    dx0, dy0, dx1, dy1 = dist.bounds
    street = shapely.LineString([(x0 - 200, y1 + 5), (x1 + 200, y1 + 5)])  # along the north lot line
    fence = shapely.LineString([(dx0 - 5, dy1 + 5), (dx1 + 5, dy1 + 5)])  # on the street side only
    pile = shapely.box(dx0 + 8, dy0 + 8, dx0 + 28, dy0 + 28)
    inlet = shapely.Point((x0 + x1) / 2 + 30, y1 + 5)
    layers = {
        "site_boundary": _gdf([{"parcel_id": "DEMO-S17"}], [site]),
        "disturbed_limits": _gdf([], [dist]),
        "drainage": _gdf(
            [{"note": "to the creek"}], [shapely.LineString([((dx0 + dx1) / 2, dy1 - 5), ((dx0 + dx1) / 2, dy0 - 40)])]
        ),
        "bmps": _gdf([{"type": "silt fence"}, {"type": "hay"}], [fence, shapely.Point(dx1 + 10, dy0)]),
        "stockpiles": _gdf([{"material": "fill", "days": 45}], [pile]),
        "streets": _gdf([{"name": "Mill Creek Way (MADE UP)"}], [street]),
        "inlets": _gdf([{"id": "IN-7"}], [inlet]),
    }
    toml = f"""crs = "EPSG:7594"

[plan]
title = "House by Mill Creek, 17 Mill Creek Way"

[landowner]
name = "Pat Example 7"
address = "17 Mill Creek Way, Winneconne, WI 54986"

[[responsible_parties]]
name = "Example Builders 7 LLC"
address = "7 Contractor Way, Oshkosh, WI 54901"
phone = "920-555-0216"

[site]
parcel_id = "DEMO-S17"
site_area_sqft = {_sqft(site)}
disturbed_area_sqft = 3900
performance_standards = ["540-7A"]

[schedule]
start = 2027-03-01
end = 2027-12-15
sequence = ["Clear", "Build", "Seed"]

[narrative]
text = "Silt fence along the street. Stockpile fill near the creek."
"""
    _write(ROOT / "examples/plans/flawed", layers, toml)


PHASES = """phase,start,end,cover,practices
rough grading,2027-04-01,2027-06-30,bare,sediment_trap;silt_fence
building,2027-07-01,2027-10-31,straw_mulch,sediment_trap
stabilised,2027-11-01,2028-05-31,permanent_seeding,none
"""


def phased() -> None:
    """The commercial lot of demo site S04 (1.4 acres, a ravine through it) with its phased schedule.

    Its [rusle2] names the schedule and the erosivity distribution its %R came from, so the
    review recomputes the sediment discharge on the DEM and soils and compares it with the
    applicant's 3.1 t/ac/yr.
    """
    site, dist = _demo("S04")
    x0, y0, x1, _y1 = site.bounds
    dx0, dy0, dx1, dy1 = dist.bounds
    street = shapely.LineString([(x0 - 200, y0 - 5), (x1 + 200, y0 - 5)])  # along the south lot line
    cx = (dx0 + dx1) / 2
    pad = shapely.box(cx - 12, y0 - 5, cx + 12, dy0)
    ring = shapely.get_exterior_ring(dist.buffer(5, join_style="mitre"))
    fence = shapely.difference(ring, shapely.box(cx - 14, dy0 - 20, cx + 14, dy0 + 1))  # a gap for the pad
    trap = shapely.box(dx1 - 40, dy0 + 5, dx1 - 10, dy0 + 25)
    pile = shapely.box(dx0 + 10, dy1 - 40, dx0 + 40, dy1 - 10)
    wattle = shapely.get_exterior_ring(pile.buffer(3, join_style="mitre"))
    inlet = shapely.Point(cx + 60, y0 - 5)
    layers = {
        "site_boundary": _gdf([{"parcel_id": "DEMO-S04"}], [site]),
        "disturbed_limits": _gdf([], [dist]),
        "drainage": _gdf([{"note": "down the ravine"}], [shapely.LineString([(cx, dy1 - 5), (cx, dy0 + 5)])]),
        "bmps": _gdf(
            [
                {"type": "1056", "label": "silt fence"},
                {"type": "1057", "label": "stone tracking pad"},
                {"type": "1060", "label": "inlet protection"},
                {"type": "1063", "label": "sediment trap"},
                {"type": "1071", "label": "wattle ring"},
            ],
            [fence, pad, inlet, trap, wattle],
        ),
        "stockpiles": _gdf([{"material": "topsoil", "days": 200}], [pile]),
        "streets": _gdf([{"name": "Example Ave (MADE UP)"}], [street]),
        "inlets": _gdf([{"id": "IN-4"}], [inlet]),
    }
    toml = f'''crs = "EPSG:7594"

[plan]
title = "Commercial building and parking, 4 Example Ave"
prepared_by = "Example Engineering LLC"

[landowner]
name = "Pat Example 4"
address = "4 Example Ave, Winneconne, WI 54986"
phone = "920-555-0140"

[[responsible_parties]]
name = "Example Builders 4 LLC"
address = "4 Contractor Way, Oshkosh, WI 54901"
phone = "920-555-0240"
role = "contractor"

[site]
legal_description = "Lot 4, Example Commercial Park, Village of Winneconne, Winnebago County, Wisconsin"
parcel_id = "DEMO-S04"
site_area_sqft = {_sqft(site)}
disturbed_area_sqft = {_sqft(dist)}
performance_standards = ["540-7B"]

[schedule]
start = 2027-04-01
end = 2028-05-31
sequence = [
  "Install the tracking pad, the silt fence, the sediment trap and the inlet protection",
  "Rough grade; strip the topsoil to the stockpile and ring it with wattles",
  "Build; mulch the graded areas",
  "Final grade, seed; remove the BMPs after final stabilization",
]

[narrative]
text = """Runoff runs down the ravine to the sediment trap in the south-east corner. Silt fence
surrounds the disturbance except at the tracking pad. Graded areas are mulched while the building
goes up and seeded in the autumn. BMPs are inspected weekly and within 24 hours of 0.5 inch of
rain, and repaired within 24 hours."""
spill_procedures = "Fuel and concrete washout stay on the pad; spills are contained with the kit on site and reported to the Village."

# The applicant's RUSLE2 figures, and what the review needs to redo them: the phased schedule
# (the format of esc-gis soil-loss --schedule) and the erosivity distribution its %R came from.
# R 120 and the monthly shares are MADE UP placeholders, not source values.
[rusle2]
sediment_tons_per_acre_year = 3.1
ls = 0.8
slope_length_ft = 60
slope_pct = 4
r_annual = 120
schedule_file = "phases.csv"
ei_file = "ei_monthly_made_up.csv"

# § 540-9A(9): the plan includes the Reference Guide's items as well as RUSLE2.
[reference_guide]
included = true
'''  # noqa: E501 (a line of the TOML written out; wrapping it would change the file)
    folder = ROOT / "examples/plans/phased"
    _write(folder, layers, toml)
    (folder / "phases.csv").write_text(PHASES, encoding="utf-8")
    ei = (ROOT / "examples/demo/ei_monthly_made_up.csv").read_text(encoding="utf-8")
    (folder / "ei_monthly_made_up.csv").write_text(ei, encoding="utf-8")


if __name__ == "__main__":
    complete()
    flawed()
    phased()
    print("wrote examples/plans/complete, examples/plans/flawed and examples/plans/phased")
