"""Real GIS clients read ``esc-gis serve`` (issue 25, item 4): GDAL's OAPIF driver and QGIS's OAPIF provider.

"QGIS, ArcGIS Pro, GDAL's OAPIF driver and Leaflet all read it" is the issue's promise: here the
real ``ogrinfo`` and ``ogr2ogr`` (Debian gdal-bin) and a real QGIS (Debian python3-qgis) read
the ``permits`` collection of a served registry, on a GeoPackage and on PostGIS (through a login
in the reader role), and must find every permit the public map shows (the public view's rows in
those states, never the undecided application beside them), exactly the published
fields (:data:`~esc_gis.serve.config.PERMIT_PROPERTIES`: no party, phone, fee or note), and each
permit where it is on the ground (within a metre, measured in the registry's CRS).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import pyogrio
import pytest
import shapely

from esc_gis.maps.public import PUBLIC_STATUS
from esc_gis.registry.store.schema import PUBLIC_VIEW
from esc_gis.serve.config import PERMIT_PROPERTIES

from .conftest import require_tool
from .service import CRS, DEMO_LAYERS, PENDING_ADDRESS, SECRETS, box, fill_registry, pg_schema, public_login, served
from .test_styles import require_pyqgis

READ_OAPIF = Path(__file__).parent / "qgis" / "read_oapif.py"
#: A metre in the registry's unit (EPSG:7594 is in US survey feet: 1 ft = 1200/3937 m).
METRE_FT = 3937 / 1200
#: What no published field may be named after: the public view leaves these in the registry.
PRIVATE = ("party", "parties", "name", "phone", "email", "fee", "note", "reason", "receipt", "photo")


@dataclass(frozen=True)
class Live:
    """A served registry: the service's root, its permits in order, and the public view's rows in a shown state.

    ``view_all`` counts every row of the view, the undecided application too, which is never served.
    """

    base: str
    numbers: list[str]
    view_rows: int
    view_all: int


@pytest.fixture(scope="module", params=["gpkg", "postgis"])
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """The test registry (5 permits, the last under a stop-work order) served from a GeoPackage or PostGIS."""
    if request.param == "gpkg":
        registry = str(tmp_path_factory.mktemp("clients") / "permits.gpkg")
        numbers = fill_registry(registry)
        status = pyogrio.read_dataframe(registry, layer=PUBLIC_VIEW, columns=["status"], read_geometry=False)["status"]
        with served(registry) as base:
            yield Live(base, numbers, int(status.isin(list(PUBLIC_STATUS)).sum()), len(status))
        return
    import psycopg

    target = pg_schema(request.getfixturevalue("pg_url"))
    numbers = fill_registry(target)
    with public_login(target) as login:
        with psycopg.connect(login) as conn:  # counted as the service's own login sees the view
            counts = conn.execute(
                f"SELECT count(*) FILTER (WHERE status = ANY(%s)), count(*) FROM {PUBLIC_VIEW}", (list(PUBLIC_STATUS),)
            ).fetchone()
        assert counts is not None
        with served(login) as base:
            yield Live(base, numbers, int(counts[0]), int(counts[1]))


def _ogr(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    exe = require_tool(tool, "gdal-bin")
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def _fields(ogrinfo_summary: str) -> dict[str, str]:
    """The ``name: Type (width.precision)`` lines of ``ogrinfo -so``: field name -> OGR type."""
    kinds = "String|Real|Integer|Integer64|Date|DateTime|Time|Binary"
    return dict(re.findall(rf"^(\w+): ({kinds}) \(", ogrinfo_summary, flags=re.MULTILINE))


def _within_a_metre(lonlat: shapely.Geometry, i: int) -> bool:
    """Whether a geometry read in longitude/latitude lies within a metre of permit ``i``'s site."""
    site = gpd.GeoSeries([lonlat], crs="EPSG:4326").to_crs(CRS).iloc[0]
    return bool(site.hausdorff_distance(box(i)) < METRE_FT)


def test_ogrinfo_counts_every_permit_and_lists_only_the_published_fields(live: Live) -> None:
    r = _ogr("ogrinfo", "-ro", "-so", f"OAPIF:{live.base}/ogc", "permits")
    count = re.search(r"^Feature Count: (\d+)$", r.stdout, flags=re.MULTILINE)
    assert count is not None, r.stdout
    # Every permit the public map shows; not the undecided application, which is in the view too.
    assert int(count.group(1)) == live.view_rows == len(live.numbers) == 5
    assert live.view_all == 6
    assert "Geometry: Multi Polygon" in r.stdout
    fields = _fields(r.stdout)
    assert set(fields) == set(PERMIT_PROPERTIES)
    assert not [f for f in fields if any(word in f for word in PRIVATE)]
    assert fields["disturbed_sqft"] == fields["disturbed_acres"] == "Real"
    assert fields["issued_on"] == fields["expires_on"] == "Date"


def test_ogr2ogr_copies_each_permit_to_where_it_is_with_its_public_values(live: Live, tmp_path: Path) -> None:
    out = tmp_path / "permits.gpkg"
    _ogr("ogr2ogr", "-f", "GPKG", str(out), f"OAPIF:{live.base}/ogc/collections/permits")
    copied = pyogrio.read_dataframe(out)
    assert copied.crs.to_epsg() == 4326
    assert list(copied["permit_number"]) == live.numbers
    for i, row in copied.iterrows():
        assert _within_a_metre(row.geometry, int(i)), row["permit_number"]
    assert list(copied["status"]) == ["active"] * 4 + ["stop_work"]
    assert list(copied["site_address"]) == [f"{100 + i} Example St" for i in range(5)]
    assert str(copied["issued_on"][0])[:10] == "2026-11-03"
    assert copied["disturbed_sqft"][0] == pytest.approx(15_000, rel=1e-5)  # 150 x 100 ft
    data = out.read_bytes()
    assert not [s for s in (*SECRETS, PENDING_ADDRESS) if s.encode() in data]


def test_ogr_follows_the_next_links_page_by_page(live: Live) -> None:
    """Pages of two: GDAL reads all five permits by following the service's ``next`` links."""
    base = f"{live.base}/ogc/collections/permits"
    r = _ogr("ogrinfo", "-ro", "-al", "-q", "-oo", "PAGE_SIZE=2", f"OAPIF:{base}", "--debug", "on")
    assert re.findall(r"permit_number \(String\) = (\S+)", r.stdout) == live.numbers
    fetched = re.findall(r"Fetch\((\S+)\)", r.stderr)
    assert f"{base}/items?offset=2&limit=2" in fetched and f"{base}/items?offset=4&limit=2" in fetched


def _qgis_read(live: Live, tmp_path: Path, *names: str) -> dict:
    python = require_pyqgis()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": "/tmp", "HOME": str(tmp_path)}
    r = subprocess.run(
        [python, str(READ_OAPIF), f"{live.base}/ogc", *names], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.stdout.strip(), r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_ogrinfo_declares_one_geometry_type_for_each_waters_collection(live: Live) -> None:
    """The demo's waters mix lines (streams) and polygons (lakes, wetlands): served as two collections,
    GDAL declares each one type, where the one mixed collection was "Unknown"."""
    for name, kind, n in (("waters_lines", "Line String", 2), ("waters_polygons", "Polygon", 3)):
        r = _ogr("ogrinfo", "-ro", "-so", f"OAPIF:{live.base}/ogc", name)
        assert f"Geometry: {kind}\n" in r.stdout, r.stdout
        assert re.search(rf"^Feature Count: {n}$", r.stdout, flags=re.MULTILINE), r.stdout
    assert "waters_lines" in _ogr("ogrinfo", "-ro", "-q", f"OAPIF:{live.base}/ogc").stdout


def test_qgis_reads_the_permits_and_the_waters_through_its_oapif_provider(live: Live, tmp_path: Path) -> None:
    from esc_gis.layers import load_layers
    from esc_gis.profile import load_profile

    got = _qgis_read(live, tmp_path, "permits", "waters_lines", "waters_polygons")
    permits = got["permits"]
    assert permits["valid"] and permits["crs"] == "EPSG:4326"
    assert permits["count"] == live.view_rows == len(permits["features"]) == 5
    assert set(permits["fields"]) == set(PERMIT_PROPERTIES)
    first = {f["attributes"]["permit_number"]: f for f in permits["features"]}[live.numbers[0]]
    values = first["attributes"]
    assert values["site_address"] == "100 Example St" and values["status"] == "active"
    assert (values["received_on"], values["issued_on"], values["expires_on"]) == (
        "2026-11-02",
        "2026-11-03",
        "2027-05-02",
    )
    assert values["disturbed_acres"] == 0.344 and values["final_on"] is None
    assert _within_a_metre(shapely.from_wkt(first["wkt"]), 0)
    assert not [s for s in (*SECRETS, PENDING_ADDRESS) if s in json.dumps(permits)]

    # The waters, two collections of one geometry type each: QGIS declares each its own type
    # (one mixed collection was declared Polygon with two LineStrings inside).
    layer_waters = load_layers(DEMO_LAYERS, profile=load_profile()).waters
    names = set()
    for name, kind in (("waters_lines", "LineString"), ("waters_polygons", "Polygon")):
        waters = got[name]
        expected = layer_waters[layer_waters.geom_type.str.removeprefix("Multi") == kind]
        assert waters["valid"] and waters["count"] == len(expected) == len(waters["features"]) > 0, name
        assert waters["wkb_type"].removeprefix("Multi") == kind, name
        assert {shapely.from_wkt(f["wkt"]).geom_type for f in waters["features"]} == {waters["wkb_type"]}, name
        assert set(waters["fields"]) == {"water_name", "water_class"}
        assert {f["attributes"]["water_name"] for f in waters["features"]} == set(expected["water_name"])
        names |= {f["attributes"]["water_name"] for f in waters["features"]}
    assert names == set(layer_waters["water_name"])  # every water, in one collection or the other
