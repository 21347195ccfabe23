"""Every registry GeoPackage, fresh or migrated, passes GDAL's GeoPackage validator (issue 37).

``validate_gpkg.py`` ships with Debian's ``python3-gdal`` (.ci/run installs it) and runs under the
system Python, which has GDAL's bindings; it exits 0 and prints nothing for a conforming file.
The first test shows it fails on what it should: the public view as the registry made it before
migration 10, whose ``disturbed_acres`` was an expression (requirement 5: a feature column of an
allowed type).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from datetime import date, datetime, timezone
from pathlib import Path

import pytest
from tests.conftest import CRS, add_active, pay_application_fee, square_sqft
from tests.test_inspections import tiny_png

from esc_gis.registry import Application, init_registry, open_registry
from esc_gis.registry.domain.calendar import OfficeCalendar
from esc_gis.registry.domain.inspections import InspectionReport
from esc_gis.registry.store import backend, schema
from esc_gis.registry.store.schema import SCHEMA_VERSION

VALIDATOR = Path("/usr/lib/python3/dist-packages/osgeo_utils/samples/validate_gpkg.py")
FIXTURE = Path(__file__).parent / "data" / "registry_v7" / "registry_v7.gpkg"
DEMO_LAYERS = Path(__file__).parents[1] / "layers" / "winneconne-demo" / "layers.toml"


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    """Run GDAL's validator on ``path`` with the system Python (GDAL's bindings live there)."""
    if not VALIDATOR.exists() or shutil.which("python3", path="/usr/bin") is None:
        msg = "GDAL's validate_gpkg.py is not installed (Debian package python3-gdal); .ci/run installs it"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: a missing system part is a failure here.")
        pytest.skip(msg)
    return subprocess.run(
        ["/usr/bin/python3", str(VALIDATOR), str(path)], capture_output=True, text=True, timeout=120, check=False
    )


def assert_valid(path: Path) -> None:
    r = validate(path)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]


def test_the_validator_refuses_a_view_column_without_a_declared_type(tmp_path: Path) -> None:
    path = tmp_path / "old_view.gpkg"
    init_registry(path, layers=DEMO_LAYERS)
    with sqlite3.connect(path) as conn:  # the public view as migration 9's registry made it
        conn.execute("DROP VIEW permits_public")
        conn.execute(
            "CREATE VIEW permits_public AS SELECT p.fid, p.permit_number, "
            "CAST(round(p.disturbed_sqft / 43560.0, 3) AS REAL) AS disturbed_acres, p.geom FROM permits p"
        )
    r = validate(path)
    assert r.returncode != 0 and "Req 5" in r.stdout + r.stderr and "disturbed_acres" in r.stdout + r.stderr


def test_a_new_registry_is_a_valid_geopackage(tmp_path: Path) -> None:
    path = tmp_path / "new.gpkg"
    assert init_registry(path, layers=DEMO_LAYERS) == list(range(1, SCHEMA_VERSION + 1))
    assert_valid(path)


def test_a_registry_in_use_is_a_valid_geopackage_and_its_view_keeps_its_types(tmp_path: Path, layer_set) -> None:
    """Permits, their limits, an inspection with a location and a photo, a fee, a plan version, a case."""
    path = tmp_path / "used.gpkg"
    init_registry(path, layers=layer_set)
    with open_registry(path, layers=layer_set, calendar=OfficeCalendar(holidays=frozenset())) as reg:
        n = add_active(reg)
        reg.add(
            Application("200 Test St", date(2026, 11, 2), square_sqft(300, 100, 50_000.0), CRS,
                        disturbed=square_sqft(300, 100, 43_560.0)),
            who="clerk",
        )  # fmt: skip
        pay_application_fee(reg, n, 150.0)
        photo = tmp_path / "fence.png"
        photo.write_bytes(tiny_png())
        reg.inspect(
            n,
            InspectionReport(
                datetime(2026, 11, 10, 15, tzinfo=timezone.utc), "Ina Inspector", "silt fence sagging",
                deficiencies=["fence down"], photos=[photo], location=reg.get(n).site.centroid,
            ),
        )  # fmt: skip
        reg.amend(n, trigger="original", description="Plan as approved", plan_date=date(2026, 10, 28))
        reg.enforce(ground="A4", on=date(2026, 11, 20), reasons="no permit", address="1 A St")
    assert_valid(path)
    with sqlite3.connect(path) as conn:
        types = {r[1]: r[2] for r in conn.execute("PRAGMA table_info(permits_public)")}
        acres = dict(conn.execute("SELECT site_address, disturbed_acres FROM permits_public").fetchall())
        plan = dict(conn.execute("SELECT permit_number, plan_date FROM permits_public").fetchall())
    assert types["disturbed_acres"] == "REAL" and types["plan_date"] == "DATE"
    assert acres["200 Test St"] == 1.0  # 43,560 sq ft, to 3 places
    assert plan[n] == "2026-10-28"  # the original plan's date, in effect today


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_an_empty_registry_of_every_earlier_version_migrates_to_a_valid_geopackage(
    tmp_path: Path, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / f"v{version}.gpkg"
    with monkeypatch.context() as m:  # the esc_gis of that schema version
        m.setattr(backend, "MIGRATIONS", schema.MIGRATIONS[:version])
        m.setattr(backend, "SCHEMA_VERSION", version)
        assert init_registry(path, layers=DEMO_LAYERS) == list(range(1, version + 1))
    assert init_registry(path, layers=DEMO_LAYERS) == list(range(version + 1, SCHEMA_VERSION + 1))
    assert_valid(path)


def test_the_schema_7_registry_in_use_migrates_to_a_valid_geopackage(tmp_path: Path) -> None:
    """Every permit state, guarantees, photos and cases (tests/data/registry_v7)."""
    path = tmp_path / "registry.gpkg"
    shutil.copy(FIXTURE, path)
    assert init_registry(path, layers=DEMO_LAYERS) == list(range(8, SCHEMA_VERSION + 1))
    assert_valid(path)
