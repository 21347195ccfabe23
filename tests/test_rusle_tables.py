"""LS against the published tables of Agriculture Handbook 703 (RUSLE), to the tables' precision.

Source: Renard, K.G., Foster, G.R., Weesies, G.A., McCool, D.K., Yoder, D.C. (1997). Predicting
soil erosion by water: a guide to conservation planning with the Revised Universal Soil Loss
Equation (RUSLE). USDA Agriculture Handbook 703, chapter 4: the table "Values for topographic
factor, LS, for moderate ratio of rill to interrill erosion" (horizontal slope length in ft
against slope in %, two decimals). The handbook itself could not be opened offline; the values
below are those of the copy on Michigan State University's Institute of Water Research RUSLE
pages (www.iwr.msu.edu/rusle/lstable.htm, "LS Table"), which gives the rows 0.2 % to 12 % in
full and the 14 % row to 150 ft (the stored copy ends there). The table number is 4-2 in the
handbook as remembered (4-1 low, 4-2 moderate, 4-3 high ratio); that numbering is not
confirmed here, the title is.

What is pinned, and why it is justified:

- For slopes 15 ft or longer the table is L x S with L = (lambda/72.6)^m, m = beta/(1 + beta),
  beta = (sin theta/0.0896)/(3 sin^0.8 theta + 0.56) (McCool et al. 1989) and the long-slope S
  with its 9 % breakpoint (McCool et al. 1987): ``ls_factor`` with the "moderate" class must
  round to every printed value (149 cells). This checks m, beta, S, the breakpoint and the
  72.6 ft unit length together against the handbook's own numbers.
- The columns under 15 ft are not L x S of their length: for slopes under 9 % they repeat the
  15 ft value, and for 10-14 % the "<3 ft" value equals L(15 ft) x the short-slope S
  3.0 sin^0.8 theta + 0.56 to two decimals. That pins ``slope_steepness_s_short`` (whose
  formula domain-reference marks as not re-read) against the table; the 6-12 ft columns
  follow no formula given here and are not pinned.

AH 537 (USLE, Wischmeier & Smith 1978) Table 3 / Figure 4 could not be retrieved offline;
``tests/test_rusle.py`` pins the USLE equation at the unit plot, and the last test here pins the
USLE form at a few points computed by hand from the equation of domain-reference § 3.6 (not
from the table).
"""

from __future__ import annotations

import math

import pytest

from esc_gis.soil.rusle import (
    ls_factor,
    slope_length_exponent_m,
    slope_length_l,
    slope_steepness_s_short,
    usle_ls_factor,
)

#: Horizontal slope length columns of the table, ft ("<3" is written 3).
LENGTHS_FT = (3, 6, 9, 12, 15, 25, 50, 75, 100, 150, 200, 250, 300, 400, 600, 800, 1000)

#: AH 703 ch. 4, LS for a moderate ratio of rill to interrill erosion: slope % -> row.
MODERATE = {
    0.2: (0.05,) * 14 + (0.06,) * 3,
    0.5: (0.07,) * 5 + (0.08,) * 3 + (0.09,) * 5 + (0.10,) * 4,
    1.0: (0.11,) * 5 + (0.12, 0.13, 0.14, 0.14, 0.15, 0.16, 0.17, 0.17, 0.18, 0.19, 0.20, 0.20),
    2.0: (0.17,) * 5 + (0.19, 0.22, 0.25, 0.27, 0.29, 0.31, 0.33, 0.35, 0.37, 0.41, 0.44, 0.47),
    3.0: (0.22,) * 5 + (0.25, 0.32, 0.36, 0.39, 0.44, 0.48, 0.52, 0.55, 0.60, 0.68, 0.75, 0.80),
    4.0: (0.26,) * 5 + (0.31, 0.40, 0.47, 0.52, 0.60, 0.67, 0.72, 0.77, 0.86, 0.99, 1.10, 1.19),
    5.0: (0.30,) * 5 + (0.37, 0.49, 0.58, 0.65, 0.76, 0.85, 0.93, 1.01, 1.13, 1.33, 1.49, 1.63),
    6.0: (0.34,) * 5 + (0.43, 0.58, 0.69, 0.78, 0.93, 1.05, 1.16, 1.25, 1.42, 1.69, 1.91, 2.11),
    8.0: (0.42,) * 5 + (0.53, 0.74, 0.91, 1.04, 1.26, 1.45, 1.62, 1.77, 2.03, 2.47, 2.83, 3.15),
    10.0: (0.46, 0.48, 0.50, 0.51, 0.52, 0.67, 0.97, 1.19, 1.38, 1.71, 1.98, 2.22, 2.44, 2.84, 3.50, 4.06, 4.56),
    12.0: (0.47, 0.53, 0.58, 0.61, 0.64, 0.84, 1.23, 1.53, 1.79, 2.23, 2.61, 2.95, 3.26, 3.81, 4.75, 5.56, 6.28),
    14.0: (0.48, 0.58, 0.65, 0.70, 0.75, 1.00, 1.48, 1.86, 2.19, 2.76),
}

LONG_CELLS = [
    pytest.param(slope, length, value, id=f"{slope:g}pct-{length}ft")
    for slope, row in MODERATE.items()
    for length, value in zip(LENGTHS_FT, row, strict=False)
    if length >= 15
]


def test_the_table_copy_is_whole() -> None:
    # 11 full rows of 17 columns and the 14 % row's 10: a typo in a row length would shift
    # every value after it onto the wrong column.
    assert [len(r) for r in MODERATE.values()] == [17] * 11 + [10]
    assert len(LONG_CELLS) == 11 * 13 + 6


@pytest.mark.parametrize(("slope_pct", "length_ft", "table"), LONG_CELLS)
def test_rusle_ls_rounds_to_the_ah703_moderate_table(slope_pct: float, length_ft: int, table: float) -> None:
    got = float(ls_factor(length_ft, slope_pct, rill_interrill_ratio="moderate"))
    # The table prints two decimals: the formula must be within half a unit of the last place.
    assert abs(got - table) <= 0.005 + 1e-12, f"LS {got:.4f} at {length_ft} ft, {slope_pct} %; table {table}"


def test_the_table_is_not_the_low_or_high_class() -> None:
    # The same cells with beta halved or doubled miss the table: the test above can tell the
    # classes apart (400 ft at 8 %: 2.03 in the table).
    assert float(ls_factor(400, 8.0, rill_interrill_ratio="low")) < 2.03 - 0.1
    assert float(ls_factor(400, 8.0, rill_interrill_ratio="high")) > 2.03 + 0.1


@pytest.mark.parametrize("slope_pct", [10.0, 12.0, 14.0])
def test_short_slope_s_gives_the_tables_shortest_column(slope_pct: float) -> None:
    # At 9 % or steeper the "<3 ft" column is the short-slope S with L held at its 15 ft value.
    m = slope_length_exponent_m(slope_pct)
    got = float(slope_length_l(15.0, m) * slope_steepness_s_short(slope_pct))
    assert round(got, 2) == MODERATE[slope_pct][0]


@pytest.mark.parametrize("slope_pct", [0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0])
def test_under_9_pct_short_columns_repeat_the_15_ft_value(slope_pct: float) -> None:
    # So a slope shorter than 15 ft under 9 % takes LS at 15 ft, which ls_factor(15, s) gives.
    row = MODERATE[slope_pct]
    assert row[:5] == (row[4],) * 5
    assert round(float(ls_factor(15.0, slope_pct)), 2) == row[4]


# (length ft, slope %, LS): USLE by hand from LS = (lambda/72.6)^m (65.41 sin^2 + 4.56 sin + 0.065),
# AH 537 as given in domain-reference § 3.6; m = 0.5 above 5 %, 0.3 from 1 to 3 %.
def _usle_by_hand(length_ft: float, slope_pct: float, m: float) -> float:
    sin = math.sin(math.atan(slope_pct / 100))
    return (length_ft / 72.6) ** m * (65.41 * sin**2 + 4.56 * sin + 0.065)


@pytest.mark.parametrize(
    ("length_ft", "slope_pct", "expected"),
    [
        (400.0, 10.0, 2.7378),  # sin 0.099504: 0.64763 + 0.45374 + 0.065 = 1.16637; x (400/72.6)^0.5 = 2.34726
        (200.0, 2.0, 0.2471),  # sin 0.019996: 0.02615 + 0.09118 + 0.065 = 0.18234; x (200/72.6)^0.3 = 1.35528
        (50.0, 20.0, 2.8839),  # sin 0.196116: 2.51577 + 0.89429 + 0.065 = 3.47506; x (50/72.6)^0.5 = 0.82988
    ],
)
def test_usle_ls_by_hand(length_ft: float, slope_pct: float, expected: float) -> None:
    got = float(usle_ls_factor(length_ft, slope_pct))
    assert got == pytest.approx(expected, abs=1e-4)
    m = 0.5 if slope_pct > 5 else 0.3
    assert _usle_by_hand(length_ft, slope_pct, m) == pytest.approx(expected, abs=1e-4)
