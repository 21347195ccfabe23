"""Shared fixtures: a small Village built in code, with answers checkable by hand.

Coordinates are EPSG:7594 (WISCRS Winnebago County, US survey feet), offset to where
Winneconne really is, so that transforming to EPSG:4326, 3857 or 3071 behaves as real data.

    village  box(0, 0, 2000, 2000) with an enclave hole box(1600, 1600, 1800, 1800)
    lake     box(1800, 0, 2600, 500): its west and north shores are inside the Village

One square US survey foot is K = 1.000004000004 international square feet.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timezone
from pathlib import Path
from urllib.parse import quote

import geopandas as gpd
import pytest
import shapely

# Hypothesis profiles: CI walks a fixed set of examples (derandomized: a red run is the same red
# run again); `make test-deep` walks many more, at random (HYPOTHESIS_PROFILE=deep).
from hypothesis import Phase as _Phase
from hypothesis import settings as _hypothesis_settings

from . import pg_server

_hypothesis_settings.register_profile("dev")
_hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
_hypothesis_settings.register_profile("deep", max_examples=500, deadline=None, print_blob=True)
# To see every failure fast while fixing: no shrinking (HYPOTHESIS_PROFILE=noshrink).
_hypothesis_settings.register_profile(
    "noshrink", derandomize=True, database=None, phases=[_p for _p in _Phase if _p.name != "shrink"]
)
_hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev")
)

X0, Y0 = 745_000.0, 505_000.0
CRS = "EPSG:7594"
#: International square feet per square US survey foot; feet per US survey foot.
K = (1200 / 3937) ** 2 / 0.3048**2
L = (1200 / 3937) / 0.3048


def box(x0: float, y0: float, x1: float, y1: float) -> shapely.Polygon:
    """A box in local feet (offset to the real location)."""
    return shapely.box(X0 + x0, Y0 + y0, X0 + x1, Y0 + y1)


def village_polygon() -> shapely.Polygon:
    return shapely.Polygon(box(0, 0, 2000, 2000).exterior.coords, [box(1600, 1600, 1800, 1800).exterior.coords])


def lake_polygon() -> shapely.Polygon:
    return box(1800, 0, 2600, 500)


#: The test office's fee schedule (§ 540-10): an application fee is checked against one (§ 540-8B).
TEST_FEES = """[schedule]
resolution = "TEST resolution 1 (made up)"
adopted_on = 2000-01-01

[fees]
application = 1.0
plan_amendment = 1.0
"""


def pay_application_fee(
    reg, number: str, amount: float, *, paid_on=None, receipt: str = "R-1", who: str | None = "clerk"
):
    """Record ``number``'s application fee of ``amount`` against a schedule setting exactly that fee (§ 540-8B).

    Paid 2026-11-02 unless ``paid_on`` says otherwise: the registry tests' usual complete application.
    """
    return reg.record_fee(
        number,
        kind="application",
        amount=float(amount),
        schedule=fees_at(amount),
        paid_on=paid_on or date(2026, 11, 2),
        receipt=receipt,
        who=who,
    )


def fees_at(application: float, **others: float):
    """A fee schedule setting the application fee at ``application``, and ``others`` (§ 540-10: the Board's)."""
    from esc_gis.registry.domain.fees import FeeSchedule

    amounts = {"application": float(application), **{k: float(v) for k, v in others.items()}}
    return FeeSchedule("TEST resolution 2 (made up)", date(2000, 1, 1), amounts, Path("fees"))


def write_layer_set(
    folder: Path,
    *,
    waters: gpd.GeoDataFrame | None = None,
    extra: str = "",
    with_waters: bool = True,
    fees: bool = False,
) -> Path:
    """Write the test Village as a real layer set (GeoPackages + layers.toml); return the manifest.

    ``fees``: name the test office's fee schedule (:data:`TEST_FEES`, application fee 1.00) in ``[fees]``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    gpd.GeoDataFrame({"name": ["Testville"]}, geometry=[village_polygon()], crs=CRS).to_file(
        folder / "village.gpkg", engine="pyogrio"
    )
    text = f'crs = "{CRS}"\n[jurisdiction]\npath = "village.gpkg"\n'
    if with_waters:
        if waters is None:
            waters = gpd.GeoDataFrame(
                {"water_class": ["lake"], "name": ["Test Lake"]}, geometry=[lake_polygon()], crs=CRS
            )
        waters.to_file(folder / "waters.gpkg", engine="pyogrio")
        text += '[waters]\npath = "waters.gpkg"\nclass_field = "water_class"\nname_field = "name"\n'
    if fees:
        (folder / "fees.toml").write_text(TEST_FEES)
        text += '[fees]\npath = "fees.toml"\n'
    manifest = folder / "layers.toml"
    manifest.write_text(text + extra)
    return manifest


@pytest.fixture(scope="session")
def layers_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_layer_set(tmp_path_factory.mktemp("layers"), fees=True)


@pytest.fixture(scope="session")
def layer_set(layers_path: Path):
    from esc_gis import load_layers, load_profile

    return load_layers(layers_path, profile=load_profile())


def sites(rows: list[dict], crs: str = CRS) -> gpd.GeoDataFrame:
    """Sites from dicts with a 'geometry' in EPSG:7594, transformed to ``crs``."""
    gdf = gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)
    return gdf if crs == CRS else gdf.to_crs(crs)


def square_sqft(x: float, y: float, area_sqft: float) -> shapely.Polygon:
    """A square with its lower-left corner at local (x, y) and the given area in square feet."""
    side = (area_sqft / K) ** 0.5
    return box(x, y, x + side, y + side)


def require_tool(name: str, package: str) -> str:
    """Path of a system tool; skip when missing, but fail in CI (CI=true), which installs it."""
    import os
    import shutil

    path = shutil.which(name)
    if path is None:
        msg = f"{name} is not installed (Debian package {package}); .ci/run installs it"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: a missing system part is a failure here.")
        pytest.skip(msg)
    return path


def write_dem(
    path: Path,
    z,
    *,
    crs: str = CRS,
    x0: float = X0,
    y0: float = Y0 + 1000,
    cell: float = 5.0,
    cell_y: float | None = None,
    nodata: float | None = -9999.0,
    units: str | None = None,
) -> Path:
    """Write a DEM GeoTIFF; ``z`` rows run north to south from (x0, y0), the top-left corner."""
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin

    z = np.asarray(z)
    profile = {
        "driver": "GTiff",
        "width": z.shape[1],
        "height": z.shape[0],
        "count": 1,
        "dtype": z.dtype.name,
        "crs": crs,
        "transform": from_origin(x0, y0, cell, cell_y or cell),
        "nodata": nodata,
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(z, 1)
        if units:
            dst.units = (units,)
    return path


# --- Permit registries on both back ends ------------------------------------------------
# The PostGIS server is the one .ci/run starts (ESC_GIS_TEST_PG_URL), or one started here on
# loopback from the Debian packages; without them the PostGIS half skips, except in CI.


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PostgreSQL + PostGIS server: CI's, or a throwaway one started here."""
    url = os.environ.get("ESC_GIS_TEST_PG_URL")
    if url:
        yield url
        return
    with throwaway_pg() as url:
        yield url


@contextmanager
def throwaway_pg(*, tls: bool = False) -> Iterator[str]:
    """A PostgreSQL + PostGIS cluster of this test run's own (:mod:`tests.pg_server`); its URL, then it is stopped.

    Skips where PostgreSQL, PostGIS (or, with ``tls``, openssl) is missing, except in CI.
    """
    folder = Path("/tmp") / f"esc_pg_{uuid.uuid4().hex[:8]}"  # short: the socket path has a length limit
    try:
        url = pg_server.start(folder, tls=tls)
    except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
        msg = f"no PostgreSQL + PostGIS server{' with TLS' if tls else ''} ({exc}); .ci/run installs and starts one"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: a missing system part is a failure here.")
        pytest.skip(msg)
    try:
        yield url
    finally:
        pg_server.stop(folder)


@pytest.fixture(params=["gpkg", "postgis"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A registry location on each back end (not yet created); a PostGIS schema is dropped afterwards."""
    if request.param == "gpkg":
        yield str(tmp_path / "permits.gpkg")
        return
    url = request.getfixturevalue("pg_url")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        conn.execute(f"CREATE SCHEMA {schema}")
    yield f"{url}{'&' if '?' in url else '?'}options={quote(f'-csearch_path={schema},public')}"
    # Thousands of schemas left behind make every catalog query of the run slower; a connection a test
    # left open must not hang the run, so the drop waits 2 s at most and is otherwise left undone.
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET lock_timeout = '2s'")
        try:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
        except psycopg.Error:
            pass


# --- The permit registry's tests: one registry per back end, and an active permit on it ---------

#: Work began on Monday 2026-11-09 at 08:00 UTC (02:00 in the Village: the same day).
STARTED = datetime(2026, 11, 9, 8, 0, tzinfo=timezone.utc)


@pytest.fixture
def reg(target: str, layer_set):
    """A new registry on each back end, with an office calendar without holidays (weekdays only)."""
    from esc_gis.registry import init_registry, open_registry
    from esc_gis.registry.domain.calendar import OfficeCalendar

    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as r:
        yield r
        # After every scenario, the tables people open equal the history's fold (issue 23), and
        # rebuilding every one from the history leaves nothing for verify to find (issue 37).
        assert [str(d) for d in r.verify()] == []
        r.rebuild()
        assert [str(d) for d in r.verify()] == []


def add_active(reg, *, x: float = 100, address: str = "100 Test St", started: datetime = STARTED) -> str:
    """Add an active permit on a 5,000 sq ft square at local (x, 100), issued 2026-11-03."""
    from esc_gis.registry import Application

    return reg.add(
        Application(
            address,
            date(2026, 11, 2),
            square_sqft(x, 100, 5000.0),
            CRS,
            status="active",
            issued_on=date(2026, 11, 3),
            started_at=started,
        ),
        who="clerk",
    )


@pytest.fixture
def active(reg) -> str:
    """An active permit at local (100, 100), work started :data:`STARTED`."""
    return add_active(reg)


#: A day well after every day the registry's scenarios walk through.
LATE = date(2029, 12, 31)


@pytest.fixture
def late_clock(monkeypatch: pytest.MonkeyPatch) -> date:
    """The Village's clock set to :data:`LATE`, for a scenario that walks the law past the day it runs.

    No effective date may be after today on the Village's clock (``domain/dates.py``); a scenario
    dated December 2026 to 2028 (an extension's day, a deemed approval) would otherwise be refused
    by the calendar it happens to run on, not by the law it tests.
    """
    from esc_gis.profile import Profile

    monkeypatch.setattr(Profile, "today", lambda self: LATE)
    return LATE


def written_by_an_earlier_esc_gis(target: str, layer_set, write, tmp_path: Path):
    """Put into ``target`` (a registry at an earlier schema version) the rows ``write`` makes.

    Since one projector per table writes the rows (issue 37), today's commands write only into
    today's schema: ``write(reg)`` runs on a scratch registry of today's, and every row of each
    table ``target`` has is copied over, in the columns it has. That is what the esc_gis of its
    version wrote for the same commands: the same rows, without what later migrations added
    (the history, the decision clocks, later columns). Returns what ``write`` returned.
    """
    from esc_gis.registry import init_registry, open_registry
    from esc_gis.registry.domain.calendar import OfficeCalendar
    from esc_gis.registry.store.backend import open_backend
    from esc_gis.registry.store.schema import TABLES

    scratch = tmp_path / f"today_{uuid.uuid4().hex[:8]}.gpkg"
    init_registry(scratch, layers=layer_set)
    with open_registry(scratch, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as r:
        out = write(r)
    src, dst = open_backend(scratch), open_backend(target)
    try:
        copied: list[str] = []
        with src.read() as scur, dst.write() as dcur:
            # Parents first: decision_clocks (schema 11) refers to permits, and comes before it in TABLES.
            for table, columns in sorted(TABLES.items(), key=lambda t: t[0] != "permits"):
                if dst.dialect == "sqlite":
                    dcur.execute("SELECT name FROM pragma_table_info(?)", (table,))
                else:
                    dcur.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                        "AND table_name = %s",
                        (table,),
                    )
                have = {r[0] for r in dcur.fetchall()}
                cols = [(c, k) for c, k, _ in columns if c in have]
                if not cols:
                    continue  # a table that version did not have
                copied.append(table)
                shown = [src.geom_column(f'"{c}"', c) if k == "geom" else f'"{c}"' for c, k in cols]
                scur.execute(f'SELECT {", ".join(shown)} FROM "{table}"')
                for row in scur.fetchall():
                    values = [
                        dst.dump_geom(src.load_geom(v))
                        if k == "geom"
                        else dst.dump("int" if k == "serial" else k, src.load("int" if k == "serial" else k, v))
                        for (c, k), v in zip(cols, row, strict=True)
                    ]
                    params = [dst.geom_param() if k == "geom" else dst.ph for _, k in cols]
                    dcur.execute(
                        f'INSERT INTO "{table}" ({", ".join(chr(34) + c + chr(34) for c, _ in cols)}) '
                        f"VALUES ({', '.join(params)})",
                        values,
                    )
            if dst.dialect == "postgis":  # the copied keys are taken: the sequences go on from them
                for table in copied:
                    for c, k, _ in TABLES[table]:
                        if k == "serial":
                            dcur.execute(
                                f'SELECT setval(pg_get_serial_sequence(%s, %s), COALESCE((SELECT MAX("{c}") '
                                f'FROM "{table}"), 0) + 1, false)',
                                (table, c),
                            )
    finally:
        src.close()
        dst.close()
    return out
