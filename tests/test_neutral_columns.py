"""The disturbance inside the jurisdiction has a name that fits every profile, the old one kept a release.

``disturbed_in_village_sqft`` said "village" under a Town's profile too. The screening now writes
``disturbed_in_jurisdiction_sqft`` (in the contract's place) and, for one release, the old name
as a deprecated column after esc_gis's own, with the same values: under the Town of Example's
test profile (tests/profiles/example.toml) and the shipped Village's alike, in the library result,
every written format, the web service's answer and the review's measurements.

The site: 100 x 100 ftUS straddling the test Village's west edge (x = 0), 30 x 100 of it inside,
so the part inside (3,000 sq ftUS) differs from the whole (10,000): a column holding the whole
disturbance, or 0, fails.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyogrio
import pytest

from esc_gis import screen
from esc_gis.profile import load_profile
from esc_gis.rules import DEPRECATED_MEASUREMENTS, Measurements
from esc_gis.screening import CONTRACT_COLUMNS, DEPRECATED_COLUMNS, EXTRA_COLUMNS

from .conftest import K, box, sites
from .test_outputs import _run as run

EXAMPLE = Path(__file__).parent / "profiles" / "example.toml"
NEW, OLD = "disturbed_in_jurisdiction_sqft", "disturbed_in_village_sqft"
INSIDE_SQFT = 30 * 100 * K
WHOLE_SQFT = 100 * 100 * K
PROFILES = {"town": EXAMPLE, "village": None}


def _sites():
    return sites(
        [{"site_id": "S", "geometry": box(-70, 100, 30, 200)}, {"site_id": "I", "geometry": box(500, 500, 520, 520)}]
    )


def test_the_neutral_name_takes_the_contracts_place_and_the_old_one_follows_ours():
    assert NEW in CONTRACT_COLUMNS and OLD not in CONTRACT_COLUMNS and OLD not in EXTRA_COLUMNS
    assert CONTRACT_COLUMNS.index(NEW) == CONTRACT_COLUMNS.index("disturbed_acres") + 1
    assert DEPRECATED_COLUMNS == {OLD: NEW}


@pytest.mark.parametrize("which", PROFILES)
def test_library_result_has_both_names_with_equal_values(layer_set, which):
    prof = load_profile(PROFILES[which]) if PROFILES[which] else load_profile()
    out = screen(_sites(), layers=layer_set, profile=prof).set_index("site_id")
    assert prof.name == {"town": "Town of Example", "village": "Village of Winneconne"}[which]
    cols = list(out.columns)
    assert cols.index(OLD) == cols.index(EXTRA_COLUMNS[-1]) + 1  # after ours, before the user's
    assert out.loc["S", "jurisdiction"] == "partial"
    assert out.loc["S", NEW] == pytest.approx(INSIDE_SQFT, rel=1e-6)
    assert out.loc["S", "disturbed_sqft"] == pytest.approx(WHOLE_SQFT, rel=1e-6)
    assert out.loc["I", NEW] == pytest.approx(20 * 20 * K, rel=1e-6)
    assert out[NEW].tolist() == out[OLD].tolist()
    # No column under any profile names the Village but the deprecated one.
    assert [c for c in cols if "village" in c] == [OLD]


@pytest.mark.parametrize("suffix", [".csv", ".gpkg", ".geojson", ".parquet"])
@pytest.mark.parametrize("which", PROFILES)
def test_every_written_format_has_both_names_with_equal_values(layers_path, tmp_path, which, suffix):
    src = tmp_path / "sites.gpkg"
    _sites().to_file(src)
    out = tmp_path / f"out{suffix}"
    args = ["screen", src, "--layers", layers_path, "-o", out, "-q"]
    args += ["--profile", PROFILES[which]] if PROFILES[which] else []
    run(*args)
    run(*args, "--overwrite")  # every write run twice
    if suffix == ".csv":
        got = pd.read_csv(out)
    elif suffix == ".parquet":
        got = pd.read_parquet(out)
    else:
        got = pyogrio.read_dataframe(out, layer="screening" if suffix == ".gpkg" else None)
    got = got.set_index("site_id")
    assert got.loc["S", NEW] == pytest.approx(INSIDE_SQFT, rel=1e-6)
    assert got[NEW].tolist() == got[OLD].tolist()


def test_measurements_take_and_give_the_old_names_for_a_release():
    """Code that built or read measurements under the old names keeps working (rules, tests, scripts)."""
    old = Measurements.of(1, disturbed_sqft=100.0, disturbed_in_village_sqft=40.0, plan_in_village_sqft=40.0)
    new = Measurements.of(1, disturbed_sqft=100.0, disturbed_in_jurisdiction_sqft=40.0)
    assert old.disturbed_in_jurisdiction_sqft.tolist() == new.disturbed_in_jurisdiction_sqft.tolist() == [40.0]
    assert old.disturbed_in_village_sqft.tolist() == [40.0] and new.plan_in_village_sqft.tolist() == [40.0]
    frame = pd.DataFrame({"disturbed_sqft": [100.0], OLD: [25.0]})  # a screening output of an earlier release
    assert Measurements.from_frame(frame).disturbed_in_jurisdiction_sqft.tolist() == [25.0]
    both = pd.DataFrame({"disturbed_sqft": [100.0], NEW: [30.0], OLD: [30.0]})
    assert Measurements.from_frame(both).disturbed_in_jurisdiction_sqft.tolist() == [30.0]
    assert set(DEPRECATED_MEASUREMENTS) == {OLD, "plan_in_village_sqft"}
