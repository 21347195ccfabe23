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


def run(block_cells: int, monkeypatch: pytest.MonkeyPatch, wave_cells: int = 10**9) -> ls_module.LsGrid:
    monkeypatch.setattr(ls_module, "_BLOCK_CELLS", block_cells)
    monkeypatch.setattr(ls_module, "_WAVE_CELLS", wave_cells)
    z = rough_dem()
    r, c = np.mgrid[0 : z.shape[0], 0 : z.shape[1]]
    disturbed = (r - 23) ** 2 + (c - 26) ** 2 < 22**2
    nodata = np.zeros(z.shape, dtype=bool)
    nodata[12, :] = True
    return ls_grid(z, 3.0, max_slope_pct=33.0, nodata_mask=nodata, disturbed=disturbed, max_slope_length_ft=20.0)


@pytest.mark.parametrize(("block_cells", "wave_cells"), [(1, 10**9), (53, 1), (3 * 53 + 7, 7), (20 * 53, 100)])
def test_block_size_does_not_change_a_bit(block_cells: int, wave_cells: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Row blocks of the local passes and chunks of the wavefronts alike.
    whole = run(10**9, monkeypatch)
    got = run(block_cells, monkeypatch, wave_cells)
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


def _receivers_and_shares(z: np.ndarray, surface: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's two cardinal receivers and shares, stored whole-grid, as ls_grid routed before
    it recomputed the shares per wavefront (the routing rules of the module notes, written out)."""
    h, w = z.shape
    zp = ls_module._padded_rows(z, 1.0, 0, h)
    g_col, g_row = ls_module._gradients(zp, d)
    sp = np.zeros((h + 2, w + 2), dtype=bool)
    sp[1:-1, 1:-1] = surface
    base = np.arange(h * w).reshape(h, w)
    recv = np.full((2, h, w), -1)
    weight = np.zeros((2, h, w))
    axes = (
        (g_col, zp[1:-1, 2:], sp[1:-1, 2:], zp[1:-1, :-2], sp[1:-1, :-2], 1),
        (g_row, zp[2:, 1:-1], sp[2:, 1:-1], zp[:-2, 1:-1], sp[:-2, 1:-1], w),
    )
    with np.errstate(invalid="ignore"):
        for k, (g, z_fwd, on_fwd, z_back, on_back, delta) in enumerate(axes):
            fwd = g < 0
            target_on = np.where(fwd, on_fwd, on_back)
            downhill = surface & (g != 0)
            leaves = downhill & ~target_on
            ok = downhill & target_on & (np.where(fwd, z_fwd, z_back) < zp[1:-1, 1:-1])
            recv[k] = np.where(ok, base + np.where(fwd, delta, -delta), -1)
            weight[k] = np.where(ok | leaves, np.abs(g), 0.0)
    total = weight.sum(axis=0)
    shares = np.zeros((2, h, w))
    np.divide(weight, total, out=shares, where=total > 0)
    shares[recv < 0] = 0.0
    return recv.reshape(2, -1), shares.reshape(2, -1)


def test_wavefront_shares_are_the_stored_shares_to_the_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    # The shares are recomputed from gathered gradients when a cell's wavefront comes, edge
    # cells and holes included: the inflow must be what stored receivers and shares give.
    # The whole window routed (no disturbed area), so the grid's edge cells send too.
    monkeypatch.setattr(ls_module, "_WAVE_CELLS", 5)
    z = rough_dem()
    z[12, :] = np.nan
    z[0, 10:14] = np.nan  # holes on the edge
    z[20:23, -1] = np.nan
    res = ls_grid(z, 3.0, max_slope_pct=33.0, max_slope_length_ft=20.0)
    assert res.surface[[0, -1]].any() and res.surface[:, [0, -1]].any()
    recv, shares = _receivers_and_shares(z, res.surface, 3.0)
    slope = np.nan_to_num(res.slope_pct.reshape(-1)) * 9.0
    values = np.vstack([np.full(z.size, 9.0), slope])
    inflow = accumulate_cardinal(recv, shares, res.surface.reshape(-1), values)
    on = res.surface.reshape(-1)
    np.testing.assert_array_equal(res.inlet_area_sqft.reshape(-1)[on], inflow[0][on])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_the_callers_dem_is_read_not_written(dtype: type) -> None:
    z = (rough_dem() * 10).astype(np.float64)
    z[np.isnan(z)] = -1.0
    dem = z.astype(dtype)
    before = dem.copy()
    hole = dem < 50
    got = ls_grid(dem, 3.0, max_slope_pct=33.0, nodata_mask=hole, z_to_ft=0.1)
    np.testing.assert_array_equal(dem, before)
    # The same as a float64 copy with the hole made NaN.
    ref = dem.astype(np.float64)
    ref[hole] = np.nan
    want = ls_grid(ref, 3.0, max_slope_pct=33.0, z_to_ft=0.1)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    assert got.mean_ls == want.mean_ls


@pytest.mark.parametrize("n", [1, 7, 128, 129, 1000, 70_001])
def test_mean_by_pieces_is_numpys_mean(n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.random(n) * np.exp(rng.normal(scale=4.0, size=n))
    assert ls_module._pairwise_is_numpys()
    for pieces in (3, 17):
        assert ls_module._mean_of_pieces(n, np.array_split(a, pieces)) == a.mean()
