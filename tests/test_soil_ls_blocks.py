"""ls_grid computes its local steps in row blocks: the result must not depend on the block size.

The blocks exist to bound memory on large windows (benchmarks/bench_soil_loss.py); a cell's
slope, gradient and receivers read its neighbours in the rows above and below, so a block edge
that cut a 3 x 3 window or a receiver wrongly would show up as a difference here. The terrain is
rough (noise on a dome) with a nodata hole, a disturbed area that is not the whole window, a
band of nodata rows and slopes past the method's limit, so every branch crosses a block edge.
"""

from __future__ import annotations

import numpy as np
import pytest

import esc_gis.soil.ls as ls_module
from esc_gis.soil.ls import accumulate_cardinal, ls_grid

FIELDS = ("slope_pct", "inlet_area_sqft", "ls", "surface", "outside_method", "capped")
SCALARS = (
    "mean_ls",
    "outside_share",
    "representative_length_ft",
    "representative_slope_pct",
    "representative_ls",
    "representative_cell",
)


def rough_dem(rows: int = 47, cols: int = 53) -> np.ndarray:
    rng = np.random.default_rng(16)
    r, c = np.mgrid[0:rows, 0:cols]
    z = 30.0 - 0.02 * ((r - 20.0) ** 2 + (c - 25.0) ** 2) + rng.normal(0, 0.3, (rows, cols))
    z[30:34, 5:9] = np.nan  # a hole
    return z


def run(block_cells: int, monkeypatch: pytest.MonkeyPatch) -> ls_module.LsGrid:
    monkeypatch.setattr(ls_module, "_BLOCK_CELLS", block_cells)
    z = rough_dem()
    r, c = np.mgrid[0 : z.shape[0], 0 : z.shape[1]]
    disturbed = (r - 23) ** 2 + (c - 26) ** 2 < 22**2
    nodata = np.zeros(z.shape, dtype=bool)
    nodata[12, :] = True
    return ls_grid(z, 3.0, max_slope_pct=33.0, nodata_mask=nodata, disturbed=disturbed, max_slope_length_ft=20.0)


@pytest.mark.parametrize("block_cells", [1, 53, 3 * 53 + 7, 20 * 53])
def test_block_size_does_not_change_a_bit(block_cells: int, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = run(10**9, monkeypatch)
    got = run(block_cells, monkeypatch)
    # The case exercises what it claims to: slopes past the limit, capped cells, a hole.
    assert whole.outside_method.any() and whole.capped.any() and np.isnan(whole.slope_pct).any()
    for name in FIELDS:
        a, b = getattr(whole, name), getattr(got, name)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b, err_msg=name)  # NaN equal to NaN, nothing else
    for name in SCALARS:
        assert getattr(whole, name) == getattr(got, name) or (
            np.isnan(getattr(whole, name)) and np.isnan(getattr(got, name))
        ), name


def test_accumulate_takes_int32_receivers_and_sums_in_order() -> None:
    # 0 -> 1 (all), 1 -> 2 (half) and 3 (half), 2 -> 3; cell 4 is off the surface.
    receivers = np.array([[1, 2, 3, -1, -1], [-1, 3, -1, -1, -1]], dtype=np.int32)
    shares = np.array([[1.0, 0.5, 1.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0, 0.0]])
    surface = np.array([True, True, True, True, False])
    values = np.array([[1.0, 1.0, 1.0, 1.0, 1.0], [10.0, 20.0, 30.0, 40.0, 50.0]])
    got = accumulate_cardinal(receivers, shares, surface, values)  # type: ignore[arg-type]
    # Inflow to 1 = 1; to 2 = (1 + 1)/2 = 1; to 3 = (1 + 1)/2 + (1 + 1) = 3. Same for the
    # second quantity: to 1 = 10, to 2 = (10 + 20)/2 = 15, to 3 = 15 + (15 + 30) = 60.
    np.testing.assert_array_equal(got, [[0.0, 1.0, 1.0, 3.0, 0.0], [0.0, 10.0, 15.0, 60.0, 0.0]])
