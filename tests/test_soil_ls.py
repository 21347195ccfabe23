"""LS from a DEM window (esc_gis.soil.ls) on planes whose answer is worked by hand.

Hand formulas used below (domain-reference § 3.6; feet):

- S = 16.8 sin θ - 0.50 at 9 % or more, 10.8 sin θ + 0.03 below; sin θ = s / sqrt(1 + s²).
- m = β / (1 + β), β = (sin θ / 0.0896) / (3 sin θ^0.8 + 0.56) (McCool et al. 1989).
- Desmet & Govers per cell, slope length λ_in at the inlet and λ_out = λ_in + D / x at the
  outlet: L = (λ_out^(m+1) - λ_in^(m+1)) / ((λ_out - λ_in) 72.6^m). Along a flow line these
  telescope, so the mean L of the cells of a line of length λ is (λ / 72.6)^m: the uniform-slope
  L of the whole line.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from esc_gis.errors import ValidationError
from esc_gis.soil import ls_factor
from esc_gis.soil.ls import accumulate_cardinal, ls_grid

D = 5.0  # cell size, ft
LIMIT = 33.0  # method's slope limit, percent (the profile's value in the later steps)
# Horn's slope is rounded to float32, as gdaldem's: 10 % comes back within ~1e-6 relative.
REL = 1e-5


def hand_m(slope_pct: float) -> float:
    sin = (slope_pct / 100) / math.sqrt(1 + (slope_pct / 100) ** 2)
    beta = (sin / 0.0896) / (3 * sin**0.8 + 0.56)
    return beta / (1 + beta)


def hand_s(slope_pct: float) -> float:
    sin = (slope_pct / 100) / math.sqrt(1 + (slope_pct / 100) ** 2)
    return 16.8 * sin - 0.5 if slope_pct >= 9 else 10.8 * sin + 0.03


def hand_ls_cell(lam_in: float, step: float, slope_pct: float) -> float:
    m = hand_m(slope_pct)
    lam_out = lam_in + step
    return (lam_out ** (m + 1) - lam_in ** (m + 1)) / (step * 72.6**m) * hand_s(slope_pct)


def row_plane(rows: int = 10, cols: int = 40, drop_ft: float = 0.5) -> np.ndarray:
    """Elevations falling eastwards by ``drop_ft`` per 5 ft cell (0.5 ft: 10 %), ft."""
    return np.tile(drop_ft * (cols - np.arange(cols, dtype=np.float64)), (rows, 1))


def test_row_plane_matches_hand_values_cell_by_cell() -> None:
    # 10 % plane, 40 cells of 5 ft: 200 ft long; flow runs along the rows, straight downslope.
    res = ls_grid(row_plane(), D, max_slope_pct=LIMIT)
    np.testing.assert_allclose(res.slope_pct, 10.0, rtol=REL)
    # Inlet area of column j: the j cells above it in its row, 25 sq ft each.
    np.testing.assert_array_equal(res.inlet_area_sqft, np.tile(np.arange(40) * 25.0, (10, 1)))
    expected = [hand_ls_cell(j * D, D, 10.0) for j in range(40)]
    np.testing.assert_allclose(res.ls, np.tile(expected, (10, 1)), rtol=REL)
    # Top cell by hand: sin θ = 0.09950, β = 1.0743, m = 0.5179, S = 1.1717:
    # LS = (5/72.6)^m * S = 0.2502 * 1.1717 = 0.2931.
    assert res.ls[0, 0] == pytest.approx(0.2931, abs=2e-4)
    # The area-weighted mean is the uniform-slope LS of the whole 200 ft (LS 1.980).
    assert res.mean_ls == pytest.approx(float(ls_factor(200.0, 10.0)), rel=REL)
    assert res.mean_ls == pytest.approx(1.980, abs=1e-3)
    assert res.outside_share == 0.0
    assert not res.outside_method.any()
    assert not res.capped.any()
    # The representative (worst-case) slope is the whole plane: 200 ft at 10 %.
    assert res.representative_length_ft == pytest.approx(200.0)
    assert res.representative_slope_pct == pytest.approx(10.0, rel=REL)
    assert res.representative_ls == pytest.approx(float(ls_factor(200.0, 10.0)), rel=REL)
    assert res.representative_cell is not None and res.representative_cell[1] == 39


def test_metres_convert_with_z_to_ft() -> None:
    feet = ls_grid(row_plane(), D, max_slope_pct=LIMIT)
    metres = ls_grid(row_plane() * 0.3048, D, max_slope_pct=LIMIT, z_to_ft=1 / 0.3048)
    np.testing.assert_allclose(metres.ls, feet.ls, rtol=REL)
    # Without the conversion the same numbers read as feet are a 3 % slope: a different LS.
    assert ls_grid(row_plane() * 0.3048, D, max_slope_pct=LIMIT).mean_ls < 0.6 * feet.mean_ls


def diagonal_plane(n: int) -> np.ndarray:
    """Elevations falling 0.5 ft per cell both east and south: 14.14 % towards the south-east."""
    i, j = np.indices((n, n))
    return -0.5 * (i + j).astype(np.float64)


def test_diagonal_plane_matches_hand_values_cell_by_cell() -> None:
    # Disturbed below the anti-diagonal i + j = K: the slope starts on that line. Cells on the
    # band i + j = n are D/√2 apart along the flow; each has x = √2 (contour width D√2), so its
    # inlet area is (n - K) cells and λ_in = (n - K) D / √2.
    k = 30
    z = diagonal_plane(k + 1)
    i, j = np.indices(z.shape)
    disturbed = i + j >= k
    slope = 100 * math.hypot(0.1, 0.1)  # 14.142 %
    res = ls_grid(z, D, max_slope_pct=LIMIT, disturbed=disturbed)
    np.testing.assert_allclose(res.slope_pct[disturbed], slope, rtol=REL)
    band = np.where(disturbed, i + j - k, 0)
    np.testing.assert_allclose(res.inlet_area_sqft[disturbed], (band * D * D)[disturbed], rtol=1e-12)
    step = D / math.sqrt(2)
    expected = np.vectorize(lambda b: hand_ls_cell(b * step, step, slope))(band)
    np.testing.assert_allclose(res.ls[disturbed], expected[disturbed], rtol=REL)
    assert np.isnan(res.ls[~disturbed]).all()
    # The longest line runs from the ridge to the far corner: 31 bands of D/√2 = 109.6 ft.
    assert res.representative_length_ft == pytest.approx((k + 1) * step)
    assert res.representative_cell == (k, k)
    assert res.representative_ls == pytest.approx(float(ls_factor((k + 1) * step, slope)), rel=REL)


def test_diagonal_strip_mean_is_the_uniform_slope_ls() -> None:
    # A strip of B bands below the ridge i + j = K; flow leaves it at the band K + B. Taking
    # the two cells of each band nearest the grid's diagonal (i - j in {-1, 0}) gives every
    # band the same weight, so their mean L telescopes to (λ/72.6)^m, λ = B D/√2 (70.7 ft).
    b = 20
    k = b
    z = diagonal_plane(k + b)
    i, j = np.indices(z.shape)
    disturbed = (i + j >= k) & (i + j < k + b)
    res = ls_grid(z, D, max_slope_pct=LIMIT, disturbed=disturbed)
    line = disturbed & np.isin(i - j, (-1, 0))
    assert np.count_nonzero(line) == b  # one cell per band
    slope = 100 * math.hypot(0.1, 0.1)
    assert float(res.ls[line].mean()) == pytest.approx(float(ls_factor(b * D / math.sqrt(2), slope)), rel=REL)
    # Cells near the grid's edges, whose upslope runs off the grid, have less area: the strip's
    # overall mean is lower, by 7 % here (a documented tolerance, not an error of the method).
    uniform = float(ls_factor(b * D / math.sqrt(2), slope))
    assert 0.9 * uniform < res.mean_ls < uniform


def test_half_plane_half_flat_area_weights() -> None:
    # Rows 0-9: the 10 % plane (200 ft); rows 10-19: flat. Horn's 3 x 3 window mixes the two
    # in rows 9 and 10, so the site is rows 0-8 (plane) and 11-19 (flat): 9 rows of each.
    z = np.vstack([row_plane(10), np.zeros((10, 40))])
    rows = np.arange(20)[:, None]
    site = np.broadcast_to((rows <= 8) | (rows >= 11), z.shape)
    res = ls_grid(z, D, max_slope_pct=LIMIT, disturbed=site)
    # Flat: slope 0, m = 0 so L = 1, S = 0.03: LS 0.03 everywhere, no flow.
    np.testing.assert_allclose(res.ls[11:], 0.03, rtol=1e-12)
    np.testing.assert_array_equal(res.inlet_area_sqft[11:], 0.0)
    plane = float(ls_factor(200.0, 10.0))
    assert res.mean_ls == pytest.approx((plane + 0.03) / 2, rel=REL)
    assert res.surface_area_sqft == 18 * 40 * 25.0
    assert np.isnan(res.ls[9:11]).all()  # not in the site


def test_disturbed_mask_limits_the_contributing_area() -> None:
    z = row_plane()
    cols = np.arange(40)[None, :]
    lower_half = np.broadcast_to(cols >= 20, z.shape)
    whole = ls_grid(z, D, max_slope_pct=LIMIT)
    part = ls_grid(z, D, max_slope_pct=LIMIT, disturbed=lower_half)
    # Column 20 is the top of the disturbed slope: nothing flows in from the undisturbed half.
    np.testing.assert_array_equal(part.inlet_area_sqft[:, 20], 0.0)
    assert (whole.inlet_area_sqft[:, 20] == 20 * 25.0).all()
    # The disturbed half is a 100 ft plane: cell for cell the first 100 ft of the whole plane.
    np.testing.assert_allclose(part.ls[:, 20:], whole.ls[:, :20], rtol=1e-12)
    assert np.isnan(part.ls[:, :20]).all()
    assert part.mean_ls == pytest.approx(float(ls_factor(100.0, 10.0)), rel=REL)
    assert part.representative_length_ft == pytest.approx(100.0)
    assert part.surface_area_sqft == 10 * 20 * 25.0


def test_a_steep_band_is_outside_the_method() -> None:
    # Drops of 0.5 ft (10 %) from cells 0-19, 2 ft (40 %) from cells 20-29, 0.5 ft from 30-39.
    drops = np.r_[np.full(20, 0.5), np.full(10, 2.0), np.full(10, 0.5)]
    z = np.tile(drops[::-1].cumsum()[::-1], (6, 1))
    res = ls_grid(z, D, max_slope_pct=LIMIT)
    # Horn at column j: (drop[j-1] + drop[j]) / 10 ft: 40 % at 21-29, 25 % at 20 and 30.
    np.testing.assert_allclose(res.slope_pct[:, 21:30], 40.0, rtol=REL)
    np.testing.assert_allclose(res.slope_pct[:, [20, 30]], 25.0, rtol=REL)
    assert res.outside_method[:, 21:30].all()
    assert not res.outside_method[:, :21].any() and not res.outside_method[:, 30:].any()
    assert np.isnan(res.ls[:, 21:30]).all()
    assert np.isfinite(res.ls[:, :21]).all() and np.isfinite(res.ls[:, 30:]).all()
    assert res.outside_share == pytest.approx(9 / 40)
    assert res.outside_area_sqft == 6 * 9 * 25.0
    # The mean is over the area inside the method only.
    inside = ~res.outside_method
    assert res.mean_ls == pytest.approx(float(np.mean(res.ls[inside])))
    # The worst-case slope's contributing area averages to 33 % or less.
    assert res.representative_slope_pct <= LIMIT
    # At a limit of 45 % the band is inside and gets a number.
    assert not ls_grid(z, D, max_slope_pct=45.0).outside_method.any()


@pytest.mark.parametrize("how", ["nan", "mask"])
def test_nodata_cells_are_excluded(how: str) -> None:
    z = row_plane()
    hole = np.zeros(z.shape, dtype=bool)
    hole[4, 10:13] = True
    if how == "nan":
        z[hole] = np.nan
        res = ls_grid(z, D, max_slope_pct=LIMIT)
    else:
        z[hole] = -9999.0
        res = ls_grid(z, D, max_slope_pct=LIMIT, nodata_mask=hole)
    assert not res.surface[hole].any()
    assert np.isnan(res.ls[hole]).all() and np.isnan(res.slope_pct[hole]).all()
    # Flow does not cross the hole: the cell below it starts a new slope.
    assert res.inlet_area_sqft[4, 13] == 0.0
    # Rows whose Horn window misses the hole keep their whole row above them; rows beside it
    # lose a little into it (a nodata neighbour takes the centre's value, tilting the gradient
    # towards the hole, and flow into nodata leaves the surface).
    assert res.inlet_area_sqft[2, 13] == res.inlet_area_sqft[6, 13] == 13 * 25.0
    assert 0 < res.inlet_area_sqft[3, 13] < 13 * 25.0
    assert np.isfinite(res.mean_ls)
    assert res.surface_area_sqft == (400 - 3) * 25.0


def test_pit_and_flat_do_not_crash() -> None:
    # A bowl: every cell drains to the centre, which takes all the others' area.
    i, j = np.indices((21, 21))
    bowl = 0.05 * ((i - 10.0) ** 2 + (j - 10.0) ** 2)
    res = ls_grid(bowl, D, max_slope_pct=LIMIT)
    assert res.inlet_area_sqft[10, 10] == pytest.approx((21 * 21 - 1) * 25.0)
    assert np.isfinite(res.ls[res.surface & ~res.outside_method]).all()
    # A flat window: no flow, LS 0.03 everywhere.
    flat = ls_grid(np.full((8, 8), 700.0), D, max_slope_pct=LIMIT)
    np.testing.assert_array_equal(flat.inlet_area_sqft, 0.0)
    np.testing.assert_allclose(flat.ls, 0.03)
    assert flat.representative_length_ft == pytest.approx(D)


def test_long_slopes_are_capped() -> None:
    # 120 cells of 5 ft: 600 ft, past a 400 ft cap.
    res = ls_grid(row_plane(3, 120), D, max_slope_pct=LIMIT, max_slope_length_ft=400.0)
    # Column 79 has λ_in = 395 ft, exactly cap - D: the last uncapped cell.
    assert res.capped[:, 80:].all() and not res.capped[:, :80].any()
    np.testing.assert_allclose(res.ls[:, 100], res.ls[:, 79], rtol=1e-12)
    assert res.representative_length_ft == pytest.approx(400.0)


def test_everything_outside_gives_nan_summaries() -> None:
    res = ls_grid(row_plane(), D, max_slope_pct=LIMIT, disturbed=np.zeros((10, 40), dtype=bool))
    assert math.isnan(res.mean_ls) and math.isnan(res.outside_share)
    assert res.representative_cell is None and math.isnan(res.representative_ls)


def test_bad_input_lists_every_problem() -> None:
    with pytest.raises(ValidationError) as exc:
        ls_grid(np.zeros(5), -1.0, max_slope_pct=LIMIT, z_to_ft=0.0, disturbed=np.ones((2, 2), dtype=bool))
    text = str(exc.value)
    for needle in ("shape (5,)", "cell_size_ft", "z_to_ft", "disturbed has shape"):
        assert needle in text
    with pytest.raises(ValidationError, match="infinite"):
        ls_grid(np.full((3, 3), np.inf), D, max_slope_pct=LIMIT)
    with pytest.raises(ValidationError, match="max_slope_pct"):
        ls_grid(row_plane(), D, max_slope_pct=0.0)


def test_accumulate_refuses_a_cycle() -> None:
    receivers = np.array([[1, 0]])  # two cells draining into each other
    with pytest.raises(ValueError, match="cycle"):
        accumulate_cardinal(receivers, np.ones((1, 2)), np.ones(2, dtype=bool), np.ones((1, 2)))
