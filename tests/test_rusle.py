"""RUSLE / USLE formulas (esc_gis.soil.rusle) against published values and hand arithmetic.

Published anchors: the USLE unit plot (AH 537: 72.6 ft at 9 % has LS = 1), the RUSLE S
equations and their 9 % breakpoint (McCool et al. 1987; AH 703 ch. 4), the EPA Low Erosivity
Waiver calculator's tests (Eastern-Research-Group/lew, app/app/tests/routes/rfactor.test.js) and
rules (server/controllers/rfactor.js). The AH 537 / AH 703 LS tables are not in
../shared/domain-reference.md, so other LS values are worked by hand in the comments.
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from esc_gis.errors import EscGisError, ValidationError
from esc_gis.soil import (
    erosivity_share,
    flow_direction_factor_x,
    lew_day_index,
    ls_desmet_govers,
    ls_factor,
    mask_outside_method,
    outside_method,
    prorated_r,
    round_r_lew,
    slope_length_exponent_m,
    slope_length_l,
    slope_length_l_desmet_govers,
    slope_steepness_s,
    slope_steepness_s_short,
    soil_loss_tons_per_acre,
    usle_ls_factor,
    usle_slope_length_exponent_m,
)

# sin(atan(0.09)) = 0.09 / sqrt(1.0081) = 0.0896377...
SIN_9 = 0.09 / math.sqrt(1.0081)


# --- the unit plot and the 9 % breakpoint -------------------------------------------------------


def test_usle_unit_plot_has_ls_one():
    # AH 537: the unit plot is 72.6 ft long at 9 % and has LS = 1 by definition.
    # 65.41 * 0.0896377^2 + 4.56 * 0.0896377 + 0.065 = 0.52556 + 0.40875 + 0.065 = 0.99931
    assert float(usle_ls_factor(72.6, 9.0)) == pytest.approx(0.99931, abs=1e-5)


def test_rusle_unit_plot_ls_is_close_to_one():
    # RUSLE at 72.6 ft: L = 1 exactly whatever m; S = 16.8 * 0.0896377 - 0.50 = 1.00591 (McCool 1987).
    assert float(slope_length_l(72.6, 0.5)) == 1.0
    assert float(ls_factor(72.6, 9.0)) == pytest.approx(1.00591, abs=1e-5)
    assert float(ls_factor(72.6, 9.0)) == pytest.approx(1.0, abs=0.01)


def test_s_takes_the_steep_branch_at_9_pct_and_the_gentle_one_just_below():
    # McCool et al. 1987 (AH 703 eq. 4-4): s < 9 %: 10.8 sin + 0.03; s >= 9 %: 16.8 sin - 0.50.
    below = np.nextafter(9.0, 0.0)
    s = slope_steepness_s([below, 9.0])
    assert s[0] == pytest.approx(10.8 * SIN_9 + 0.03, rel=1e-9)  # 0.99809
    assert s[1] == pytest.approx(16.8 * SIN_9 - 0.50, rel=1e-9)  # 1.00591
    assert s[0] == pytest.approx(0.99809, abs=1e-5) and s[1] == pytest.approx(1.00591, abs=1e-5)
    # both branches give S ~ 1 at the unit plot's steepness, and S rises through the breakpoint
    assert s[0] < s[1]
    # on flat land S is the gentle branch's constant
    assert float(slope_steepness_s(0.0)) == pytest.approx(0.03)


def test_m_at_9_pct_is_about_one_half():
    # McCool 1989: beta = (0.0896377/0.0896) / (3 * 0.0896377^0.8 + 0.56)
    #            = 1.000421 / (3 * 0.145209 + 0.56) = 1.000421 / 0.995626 = 1.004816; m = 0.50120
    assert float(slope_length_exponent_m(9.0)) == pytest.approx(0.50120, abs=1e-5)
    assert float(slope_length_exponent_m(0.0)) == 0.0


def test_short_slope_s():
    # AH 703 eq. 4-5 as domain-reference gives it (unconfirmed): 3.0 sin^0.8 + 0.56 at 9 %
    # = 3 * 0.145209 + 0.56 = 0.99563
    assert float(slope_steepness_s_short(9.0)) == pytest.approx(0.99563, abs=1e-5)


# --- LS worked by hand ------------------------------------------------------------------------


def test_rusle_ls_100_ft_at_20_pct_by_hand():
    # sin(atan 0.2) = 0.2 / sqrt(1.04) = 0.196116; S = 16.8 * 0.196116 - 0.5 = 2.79475
    # beta = (0.196116/0.0896) / (3 * 0.196116^0.8 + 0.56) = 2.18880 / (3 * 0.271651 + 0.56) = 1.59191
    # m = 1.59191 / 2.59191 = 0.61418; L = (100/72.6)^0.61418 = 1.21734; LS = 3.40215
    assert float(slope_steepness_s(20.0)) == pytest.approx(2.79475, abs=1e-5)
    assert float(slope_length_exponent_m(20.0)) == pytest.approx(0.61418, abs=1e-5)
    assert float(ls_factor(100.0, 20.0)) == pytest.approx(3.40215, abs=1e-5)


def test_rusle_ls_200_ft_at_5_pct_by_hand():
    # sin(atan 0.05) = 0.05 / sqrt(1.0025) = 0.0499376; S = 10.8 * 0.0499376 + 0.03 = 0.569326
    # beta = (0.0499376/0.0896) / (3 * 0.0499376^0.8 + 0.56) = 0.557339 / (3 * 0.0909373 + 0.56)
    #      = 0.557339 / 0.832812 = 0.669226; m = 0.669226 / 1.669226 = 0.400920
    # L = (200/72.6)^0.400920 = exp(0.400920 * 1.013352) = 1.501213; LS = 0.85468
    assert float(ls_factor(200.0, 5.0)) == pytest.approx(0.85468, abs=1e-5)


def test_rill_interrill_class_scales_beta():
    # "high" doubles beta: at 20 %, beta = 3.18382, m = 3.18382 / 4.18382 = 0.76098
    assert float(slope_length_exponent_m(20.0, "high")) == pytest.approx(0.76098, abs=1e-5)
    assert float(slope_length_exponent_m(20.0, 2.0)) == float(slope_length_exponent_m(20.0, "high"))
    low, mod, high = (float(ls_factor(300.0, 20.0, rill_interrill_ratio=r)) for r in ("low", "moderate", "high"))
    assert low < mod < high  # longer than the unit plot: a larger m gives a larger L


@pytest.mark.parametrize(
    ("slope_pct", "m"),
    [(0.0, 0.2), (1.0, 0.2), (1.01, 0.3), (3.0, 0.3), (3.01, 0.4), (5.0, 0.4), (5.01, 0.5), (40.0, 0.5)],
)
def test_usle_m_classes_at_their_edges(slope_pct, m):
    # domain-reference 3.6 (AH 537 via VFS): 0.5 above 5 %, 0.4 above 3 %, 0.3 above 1 %, else 0.2
    assert float(usle_slope_length_exponent_m(slope_pct)) == m


# --- Desmet & Govers on a plane --------------------------------------------------------------


def _planar_column(n_cells: int, cell_ft: float) -> np.ndarray:
    # A plane tilted along a grid axis: D8 sends each cell's flow to the next one downslope, so
    # cell j (0 at the top) receives j cells' area at its inlet.
    return np.arange(n_cells) * cell_ft**2


@pytest.mark.parametrize(("n_cells", "cell_ft", "slope_pct"), [(10, 10.0, 12.0), (30, 5.0, 4.0), (4, 25.0, 30.0)])
def test_tilted_plane_mean_equals_uniform_slope_l(n_cells, cell_ft, slope_pct):
    a_in = _planar_column(n_cells, cell_ft)
    slope = np.full(n_cells, slope_pct)
    ls = ls_desmet_govers(a_in, cell_ft, slope, max_slope_length_ft=1e9)
    # the per-cell L telescopes: mean over the flow line = (N D)^(m+1) / (N D 72.6^m) = (N D / 72.6)^m
    assert ls.mean() == pytest.approx(float(ls_factor(n_cells * cell_ft, slope_pct)), rel=1e-12)
    assert np.all(np.diff(ls) > 0)  # L grows downslope


def test_top_cell_is_a_slope_one_cell_long():
    m = 0.5
    assert float(slope_length_l_desmet_govers(0.0, 10.0, m)) == pytest.approx(float(slope_length_l(10.0, m)))
    # on a diagonal the contour width is D * sqrt(2), so the top cell's slope is D / sqrt(2) long
    x = float(flow_direction_factor_x(45.0))
    assert x == pytest.approx(math.sqrt(2))
    assert float(slope_length_l_desmet_govers(0.0, 10.0, m, x=x)) == pytest.approx(
        float(slope_length_l(10.0 / math.sqrt(2), m))
    )


def test_slope_length_cap():
    cell_ft, m = 10.0, 0.5
    a_in = _planar_column(10, cell_ft)  # 100 ft of slope
    capped = slope_length_l_desmet_govers(a_in, cell_ft, m, max_slope_length_ft=50.0)
    free = slope_length_l_desmet_govers(a_in, cell_ft, m, max_slope_length_ft=1e9)
    # cells 0-4 (outlets at 10..50 ft) are inside the cap and unchanged ...
    assert np.array_equal(capped[:5], free[:5])
    # ... cells past it get the L of the 40-50 ft segment:
    # (50^1.5 - 40^1.5) / (10 * 72.6^0.5) = (353.553 - 252.982) / 85.206 = 1.18033
    expected = (50**1.5 - 40**1.5) / (10 * math.sqrt(72.6))
    assert np.allclose(capped[5:], expected) and expected == pytest.approx(1.18033, abs=1e-5)
    assert np.all(free[5:] > capped[5:])
    # the default cap is 400 ft: a 1000 ft column stops growing after 40 cells
    long_l = slope_length_l_desmet_govers(_planar_column(100, cell_ft), cell_ft, m)
    assert np.all(np.diff(long_l[:40]) > 0) and np.all(long_l[39:] == long_l[39])


# --- arrays, NaN and bad input ---------------------------------------------------------------


def test_arrays_broadcast_and_nan_stays_nan():
    lengths = np.array([[72.6, np.nan], [100.0, 200.0]])
    slopes = np.array([[9.0, 9.0], [np.nan, 5.0]])
    ls = ls_factor(lengths, slopes)
    assert ls.shape == (2, 2)
    assert np.isnan(ls[0, 1]) and np.isnan(ls[1, 0])
    assert ls[0, 0] == pytest.approx(1.00591, abs=1e-5) and ls[1, 1] == pytest.approx(0.85468, abs=1e-5)
    a = soil_loss_tons_per_acre(np.array([100.0, np.nan]), 0.3, ls[0], 1.0)
    assert a[0] == pytest.approx(100 * 0.3 * ls[0, 0]) and np.isnan(a[1])
    dg = ls_desmet_govers(np.array([0.0, np.nan, 100.0]), 10.0, np.array([10.0, 10.0, np.nan]))
    assert np.isfinite(dg[0]) and np.isnan(dg[1:]).all()


def test_bad_lengths_and_slopes_refused_in_one_message():
    with pytest.raises(ValidationError) as info:
        ls_factor(np.array([100.0, -5.0, -1.0]), np.array([10.0, -2.0, np.inf]))
    err = info.value
    assert isinstance(err, EscGisError) and isinstance(err, ValueError)
    text = str(err)
    assert text.startswith("3 problems")
    assert "length_ft has 2 values negative (first -5 at index (1,))" in text
    assert "slope_pct has 1 value negative (first -2 at index (1,))" in text
    assert "slope_pct has 1 infinite value" in text


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: slope_steepness_s(-0.1), "slope_pct has 1 value negative"),
        (lambda: slope_length_l(-1.0, 0.5), "length_ft"),
        (lambda: slope_length_exponent_m(5.0, "steep"), "'steep' is not a class name"),
        (lambda: slope_length_exponent_m(5.0, 0.0), "not a positive number"),
        (lambda: slope_length_l_desmet_govers(0.0, 0.0, 0.5), "cell_size_ft has 1 value 0 or less"),
        (lambda: slope_length_l_desmet_govers(0.0, 10.0, 0.5, x=0.5), "x has 1 value below 1"),
        (lambda: soil_loss_tons_per_acre(100, -0.1, 1, 1), "k has 1 value negative"),
        (lambda: outside_method(10.0, 0.0), "max_slope_pct"),
    ],
)
def test_each_bad_input_is_named(call, fragment):
    with pytest.raises(ValidationError, match="problem") as info:
        call()
    assert fragment in str(info.value)


def test_zero_length_and_zero_slope_are_allowed():
    assert float(ls_factor(0.0, 10.0)) == 0.0  # no slope length, no L
    assert float(ls_factor(50.0, 0.0)) == pytest.approx(0.03)  # flat: m = 0, L = 1, S = 0.03


# --- outside the method ----------------------------------------------------------------------


def test_steeper_than_the_limit_is_flagged_not_numbered():
    # WDNR tool: slopes steeper than 33 % are outside it (domain-reference 3.2, 3.7); 33 % itself is in.
    slope = np.array([10.0, 33.0, 33.01, 60.0, np.nan])
    ls = ls_factor(100.0, slope)
    assert np.isfinite(ls[:4]).all()  # the formula itself has a value everywhere ...
    values, outside = mask_outside_method(ls, slope, 33.0)
    assert outside.tolist() == [False, False, True, True, False]
    assert np.array_equal(values[:2], ls[:2])
    assert np.isnan(values[2:]).all()  # ... but cells outside the method get no number
    assert outside.dtype == bool and values.shape == slope.shape


# --- R over a period: EPA LEW ----------------------------------------------------------------


def _ei(total: float, feb21: float) -> np.ndarray:
    # A made-up daily record summing to `total` with `feb21` on the LEW index of 21 Feb (52).
    ei = np.full(365, (total - feb21) / 364)
    ei[52] = feb21
    return ei


def test_lew_day_index():
    # rfactor.js: day of month + days of the preceding months of a 365-day year; 1 Jan = 1.
    assert lew_day_index(dt.date(2019, 1, 1)) == 1
    assert lew_day_index(dt.date(2019, 2, 21)) == 52
    assert lew_day_index(dt.date(2019, 12, 31)) == 365
    assert lew_day_index(dt.date(2020, 2, 29)) == lew_day_index(dt.date(2020, 3, 1)) == 60


def test_lew_multi_year_examples():
    # rfactor.test.js, point (-76.4899, 38.4401): 21 Feb to 21 Feb over 2, 3 and 5 calendar years
    # gives R = 193, 385 and 963. LEW sums n whole years plus the end day again (both ends are
    # included): n R + EI(21 Feb). Those three outputs pin R to 192.33-192.75 and EI(21 Feb) to
    # about 0.5; the site's real daily record is not stored here, so a made-up one with R = 192.4
    # and EI(21 Feb) = 0.55 stands in (without the inclusive end day it would give 192 and 962).
    ei = _ei(192.4, 0.55)
    r_annual = float(ei.sum())
    cases = [
        ((2018, 2, 21), (2019, 2, 21), 193),
        ((2017, 2, 21), (2019, 2, 21), 385),
        ((2013, 2, 21), (2018, 2, 21), 963),
    ]
    for start, end, published in cases:
        r = prorated_r(r_annual, ei, dt.date(*start), dt.date(*end))
        assert round_r_lew(r) == published


def test_lew_kenosha_week_sums_the_eight_days_21_to_28_feb():
    # rfactor.test.js: Kenosha County WI, 21-28 Feb 2019 gives 0.356 (3 significant figures).
    # The county record is not stored here; the sum must be of LEW elements 52..59 exactly.
    ei = np.arange(1.0, 366.0)  # element i holds i + 1, so each day is told apart
    share = erosivity_share(ei, dt.date(2019, 2, 21), dt.date(2019, 2, 28))
    assert share * ei.sum() == pytest.approx(ei[52:60].sum())
    assert round_r_lew(0.35612) == 0.356


def test_lew_one_day_shift_and_year_wrap():
    ei = np.zeros(365)
    ei[0] = 1.0  # LEW reads element 0 for 31 Dec (p mod 365), a one-day shift from 1 Jan
    jan1, dec31 = dt.date(2019, 1, 1), dt.date(2019, 12, 31)
    assert erosivity_share(ei, jan1, jan1) == 0.0
    assert erosivity_share(ei, dec31, dec31) == 1.0
    assert erosivity_share(ei, jan1, jan1, lew_day_shift=False) == 1.0
    # a period across New Year wraps round the record: 30 Dec 2019 to 2 Jan 2020
    assert erosivity_share(ei, dt.date(2019, 12, 30), dt.date(2020, 1, 2)) == 1.0


def test_lew_rounding():
    # rfactor.js: < 10 to 3 significant figures, 10 to < 99 to 4, >= 99 to a whole number
    assert round_r_lew(4.5678) == 4.57
    assert round_r_lew(98.76543) == 98.77
    assert round_r_lew(99.4) == 99.0
    assert round_r_lew(192.5) == 193.0


def test_period_r_is_a_share_of_annual_r():
    # uniform record: a 73-day period is 73/365 = 20 % of the annual R; 150 (Dane County) -> 30
    ei = np.ones(365)
    r = prorated_r(150.0, ei, dt.date(2024, 3, 1), dt.date(2024, 5, 12))
    assert r == pytest.approx(30.0)


def test_bad_period_inputs_in_one_message():
    with pytest.raises(ValidationError) as info:
        prorated_r(-1.0, np.ones(364), dt.date(2020, 5, 1), dt.date(2020, 4, 1))
    text = str(info.value)
    assert text.startswith("3 problems")
    assert "r_annual has 1 value negative" in text
    assert "ei_daily has shape (364,), not (365,)" in text
    assert "end 2020-04-01 is before start 2020-05-01" in text
    with pytest.raises(ValidationError, match="sums to 0"):
        erosivity_share(np.zeros(365), dt.date(2020, 1, 1), dt.date(2020, 1, 2))
