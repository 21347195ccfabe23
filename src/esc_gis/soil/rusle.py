"""RUSLE / USLE formulas for construction-site soil loss: pure, vectorised numpy.

Every function takes scalars or arrays (broadcast together) in US customary units and returns
float64 arrays (0-d for scalar input). NaN in is NaN out, so nodata cells flow through; values
that cannot be right (a negative slope length, a negative slope) are refused, every problem at
once, in one :class:`~esc_gis.errors.ValidationError`.

Sources (``../shared/domain-reference.md`` § 3 gives the retrieved text and its status):

- A = R · K · LS · C · P: Wischmeier & Smith 1978, Agriculture Handbook 537 (AH 537); Renard et
  al. 1997, Agriculture Handbook 703 (AH 703), ch. 1.
- USLE LS: AH 537 (λ in ft): LS = (λ/72.6)^m (65.41 sin²θ + 4.56 sin θ + 0.065).
- RUSLE S and m: McCool et al. 1987, Trans. ASAE 30(5):1387 (S, 9 % breakpoint) and McCool et
  al. 1989, Trans. ASAE 32(5):1571 (β, m), as used in AH 703 ch. 4.
- Grid L: Desmet & Govers 1996, J. Soil Water Conserv. 51(5):427, in the feet form of the
  InVEST SDR guide's equation.
- Erosivity over a period: the U.S. EPA Low Erosivity Waiver calculator
  (``Eastern-Research-Group/lew``, ``server/controllers/rfactor.js``).

No Winnebago County R value and no Wisconsin erosivity distribution are built in: both are NOT
confirmed (domain-reference § 3.4-3.5) and must be passed in by the caller.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from esc_gis.errors import Problem, ValidationError

__all__ = [
    "DEFAULT_MAX_SLOPE_LENGTH_FT",
    "RILL_INTERRILL_RATIO",
    "UNIT_PLOT_LENGTH_FT",
    "erosivity_share",
    "flow_direction_factor_x",
    "lew_day_index",
    "ls_desmet_govers",
    "ls_factor",
    "mask_outside_method",
    "outside_method",
    "prorated_r",
    "round_r_lew",
    "slope_length_exponent_m",
    "slope_length_l",
    "slope_length_l_desmet_govers",
    "slope_steepness_s",
    "slope_steepness_s_short",
    "soil_loss_tons_per_acre",
    "usle_ls_factor",
    "usle_slope_length_exponent_m",
]

FloatArray = NDArray[np.float64]

#: Length of the USLE unit plot, ft (72.6 ft = 22.13 m; AH 537, AH 703 ch. 4).
UNIT_PLOT_LENGTH_FT: Final = 72.6

#: Multipliers of β for the rill-to-interrill erosion classes of AH 703 ch. 4 (McCool et al.
#: 1989): "moderate" is β as printed (domain-reference § 3.6, confirmed); "low" halves it and
#: "high" doubles it (AH 703, from the handbook's text as remembered, NOT re-read here). AH 703
#: puts freshly graded construction soil in the high class; the default stays "moderate" because
#: that is the only form the project's reference confirms, and the choice is a parameter.
RILL_INTERRILL_RATIO: Final = {"low": 0.5, "moderate": 1.0, "high": 2.0}

#: Slope steepness breakpoint of the RUSLE S equations, percent (McCool et al. 1987).
_S_BREAKPOINT_PCT: Final = 9.0

#: Default cap on slope length, ft: 400 ft ≈ 122 m, InVEST SDR's default cap (domain-reference
#: § 3.6). A reviewer may pass another; the later soil-loss step takes it from the profile.
DEFAULT_MAX_SLOPE_LENGTH_FT: Final = 400.0

#: Days of each month in the EPA LEW calculator (fixed, no leap day).
_LEW_MONTH_DAYS: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_LEW_DAYS_BEFORE_MONTH: Final = tuple(int(v) for v in np.cumsum((0, *_LEW_MONTH_DAYS[:-1])))

_SOURCE = "soil-loss input"


def _as_float(values: ArrayLike) -> FloatArray:
    return np.asarray(values, dtype=np.float64)


def _first_bad(arr: FloatArray, bad: NDArray[np.bool_]) -> str:
    idx = np.argwhere(bad)[0] if arr.ndim else ()
    where = f" at index {tuple(int(i) for i in idx)}" if arr.ndim else ""
    return f"{float(arr[tuple(idx)]):g}{where}"


def _check(
    problems: list[Problem],
    name: str,
    arr: FloatArray,
    *,
    minimum: float = 0.0,
    strict: bool = False,
    fix: str,
) -> None:
    """Append a problem for each kind of bad value in ``arr`` (NaN is allowed: it is nodata)."""
    with np.errstate(invalid="ignore"):
        low = (arr <= minimum) if strict else (arr < minimum)
    inf = np.isinf(arr)
    low &= ~inf
    if low.any():
        op = "0 or less" if strict and minimum == 0 else ("negative" if minimum == 0 else f"below {minimum:g}")
        n = int(np.count_nonzero(low))
        problems.append(
            Problem(
                _SOURCE, None, f"{name} has {n} value{'s' if n != 1 else ''} {op} (first {_first_bad(arr, low)}).", fix
            )
        )
    if inf.any():
        n = int(np.count_nonzero(inf))
        problems.append(
            Problem(
                _SOURCE,
                None,
                f"{name} has {n} infinite value{'s' if n != 1 else ''} (first {_first_bad(arr, inf)}).",
                fix,
            )
        )


def _raise_if(problems: list[Problem]) -> None:
    if problems:
        raise ValidationError(problems)


_SLOPE_FIX = "pass slope steepness in percent (rise/run x 100), 0 or more; use NaN for nodata."
_LENGTH_FIX = "pass horizontal slope lengths in feet, 0 or more; use NaN for nodata."


def _slope(slope_pct: ArrayLike, problems: list[Problem]) -> FloatArray:
    s = _as_float(slope_pct)
    _check(problems, "slope_pct", s, fix=_SLOPE_FIX)
    return s


def _sin_theta(slope_pct: FloatArray) -> FloatArray:
    # θ is the slope angle; slope_pct = 100 tan θ.
    return np.sin(np.arctan(slope_pct / 100.0))


def slope_steepness_s(slope_pct: ArrayLike) -> FloatArray:
    """RUSLE slope steepness factor S for slopes of 15 ft or longer (McCool et al. 1987).

    S = 10.8 sin θ + 0.03 where the slope is under 9 %, and S = 16.8 sin θ - 0.50 at 9 % or
    more (McCool et al. 1987, Trans. ASAE 30(5):1387; AH 703 eqs. 4-4a/4-4b; the 9 % breakpoint
    is confirmed in domain-reference § 3.6). The two branches meet near S = 1.0 at 9 %, the USLE
    unit plot's steepness.

    Parameters
    ----------
    slope_pct : array_like
        Slope steepness, percent (100 · rise / run). NaN is kept NaN.

    Returns
    -------
    numpy.ndarray of float64
        S, dimensionless, in the shape of ``slope_pct``.

    Raises
    ------
    ValidationError
        If any slope is negative or infinite (one message lists every problem).

    Examples
    --------
    >>> float(slope_steepness_s(0.0))
    0.03
    """
    problems: list[Problem] = []
    s = _slope(slope_pct, problems)
    _raise_if(problems)
    sin = _sin_theta(s)
    return np.where(s < _S_BREAKPOINT_PCT, 10.8 * sin + 0.03, 16.8 * sin - 0.50)


def slope_steepness_s_short(slope_pct: ArrayLike) -> FloatArray:
    """RUSLE S for slopes shorter than 15 ft: S = 3.0 (sin θ)^0.8 + 0.56 (McCool et al. 1987).

    This is the AH 703 (eq. 4-5) short-slope form as domain-reference § 3.6 gives it, marked
    there as NOT re-read in the source (§ 7 item 15). It is not used by :func:`ls_factor`; a caller
    who applies it to slopes under 15 ft should say it is unconfirmed.

    Parameters
    ----------
    slope_pct : array_like
        Slope steepness, percent. NaN is kept NaN.

    Returns
    -------
    numpy.ndarray of float64
        S, dimensionless.

    Raises
    ------
    ValidationError
        If any slope is negative or infinite.
    """
    problems: list[Problem] = []
    s = _slope(slope_pct, problems)
    _raise_if(problems)
    return 3.0 * _sin_theta(s) ** 0.8 + 0.56


def _ratio_value(rill_interrill_ratio: float | str) -> float:
    if isinstance(rill_interrill_ratio, str):
        try:
            return RILL_INTERRILL_RATIO[rill_interrill_ratio]
        except KeyError:
            names = ", ".join(RILL_INTERRILL_RATIO)
            problem = Problem(
                _SOURCE,
                None,
                f"rill_interrill_ratio {rill_interrill_ratio!r} is not a class name.",
                f"use one of {names}, or a positive number.",
            )
            raise ValidationError([problem]) from None
    ratio = float(rill_interrill_ratio)
    if not (ratio > 0 and math.isfinite(ratio)):
        problem = Problem(
            _SOURCE, None, f"rill_interrill_ratio {ratio:g} is not a positive number.", "use a number above 0."
        )
        raise ValidationError([problem])
    return ratio


def slope_length_exponent_m(slope_pct: ArrayLike, rill_interrill_ratio: float | str = "moderate") -> FloatArray:
    """RUSLE slope-length exponent m = β / (1 + β) (McCool et al. 1989).

    β = (sin θ / 0.0896) / (3 (sin θ)^0.8 + 0.56), times the rill-to-interrill class multiplier
    of AH 703 ch. 4 (see :data:`RILL_INTERRILL_RATIO`). Source: McCool et al. 1989, Trans. ASAE
    32(5):1571; AH 703 eqs. 4-2, 4-3; domain-reference § 3.6.

    Parameters
    ----------
    slope_pct : array_like
        Slope steepness, percent. NaN is kept NaN.
    rill_interrill_ratio : {"moderate", "low", "high"} or float, default "moderate"
        The class of the ratio of rill to interrill erosion, or β's multiplier itself.
        "moderate" (1.0) is β as printed in the project's reference; AH 703 puts freshly
        graded construction sites in "high" (2.0), which gives a larger m.

    Returns
    -------
    numpy.ndarray of float64
        m, between 0 and 1.

    Raises
    ------
    ValidationError
        If any slope is negative or infinite, or the ratio is not a class name or a positive number.

    Examples
    --------
    >>> round(float(slope_length_exponent_m(9.0)), 3)
    0.501
    """
    ratio = _ratio_value(rill_interrill_ratio)
    problems: list[Problem] = []
    s = _slope(slope_pct, problems)
    _raise_if(problems)
    sin = _sin_theta(s)
    beta = ratio * (sin / 0.0896) / (3.0 * sin**0.8 + 0.56)
    return beta / (1.0 + beta)


def usle_slope_length_exponent_m(slope_pct: ArrayLike) -> FloatArray:
    """USLE slope-length exponent m by slope class (Wischmeier & Smith 1978, AH 537).

    m = 0.5 above 5 %, 0.4 above 3 % up to 5 %, 0.3 above 1 % up to 3 %, 0.2 at 1 % or less, as
    given in domain-reference § 3.6 (from the VFS R package's USLE factors).

    Parameters
    ----------
    slope_pct : array_like
        Slope steepness, percent. NaN is kept NaN.

    Returns
    -------
    numpy.ndarray of float64
        m.

    Raises
    ------
    ValidationError
        If any slope is negative or infinite.
    """
    problems: list[Problem] = []
    s = _slope(slope_pct, problems)
    _raise_if(problems)
    m = np.select([s > 5.0, s > 3.0, s > 1.0, s >= 0.0], [0.5, 0.4, 0.3, 0.2], default=np.nan)
    return np.asarray(m, dtype=np.float64)


def slope_length_l(length_ft: ArrayLike, m: ArrayLike) -> FloatArray:
    """Slope length factor L = (λ / 72.6)^m for a uniform slope (AH 537; AH 703 eq. 4-1).

    Parameters
    ----------
    length_ft : array_like
        Horizontal slope length λ, ft: from the top of the slope (where overland flow starts) to
        where deposition begins or flow concentrates. NaN is kept NaN.
    m : array_like
        Slope-length exponent (:func:`slope_length_exponent_m` or
        :func:`usle_slope_length_exponent_m`).

    Returns
    -------
    numpy.ndarray of float64
        L, dimensionless; 1.0 at the 72.6 ft unit-plot length.

    Raises
    ------
    ValidationError
        If any length or m is negative or infinite.
    """
    problems: list[Problem] = []
    length = _as_float(length_ft)
    mm = _as_float(m)
    _check(problems, "length_ft", length, fix=_LENGTH_FIX)
    _check(problems, "m", mm, fix="pass the slope-length exponent, between 0 and 1.")
    _raise_if(problems)
    return (length / UNIT_PLOT_LENGTH_FT) ** mm


def ls_factor(
    length_ft: ArrayLike, slope_pct: ArrayLike, *, rill_interrill_ratio: float | str = "moderate"
) -> FloatArray:
    """RUSLE topographic factor LS = L · S for a uniform slope (McCool et al. 1987, 1989).

    The representative-slope method of the WDNR soil-loss sheet: one length and one steepness
    stand for the slope. L = (λ/72.6)^m with m from :func:`slope_length_exponent_m`, S from
    :func:`slope_steepness_s` (AH 703 ch. 4). Slopes steeper than the method's limit are not
    refused here; flag them with :func:`mask_outside_method`.

    Parameters
    ----------
    length_ft : array_like
        Horizontal slope length, ft. NaN is kept NaN.
    slope_pct : array_like
        Slope steepness, percent. NaN is kept NaN.
    rill_interrill_ratio : {"moderate", "low", "high"} or float, default "moderate"
        See :func:`slope_length_exponent_m`.

    Returns
    -------
    numpy.ndarray of float64
        LS, in the broadcast shape of the inputs.

    Raises
    ------
    ValidationError
        If any length or slope is negative or infinite (one message for all), or the ratio is bad.

    Examples
    --------
    The USLE unit plot, 72.6 ft at 9 %, has LS close to 1:

    >>> round(float(ls_factor(72.6, 9.0)), 2)
    1.01
    """
    problems: list[Problem] = []
    length = _as_float(length_ft)
    _check(problems, "length_ft", length, fix=_LENGTH_FIX)
    s = _slope(slope_pct, problems)
    _raise_if(problems)
    m = slope_length_exponent_m(s, rill_interrill_ratio)
    return slope_length_l(length, m) * slope_steepness_s(s)


def usle_ls_factor(length_ft: ArrayLike, slope_pct: ArrayLike) -> FloatArray:
    """USLE topographic factor LS = (λ/72.6)^m (65.41 sin²θ + 4.56 sin θ + 0.065) (AH 537).

    Wischmeier & Smith 1978, Agriculture Handbook 537, with m from
    :func:`usle_slope_length_exponent_m` (domain-reference § 3.6). Given beside the RUSLE form
    because the WDNR sheet is a USLE tool and applicants' numbers may come from either.

    Parameters
    ----------
    length_ft : array_like
        Horizontal slope length, ft. NaN is kept NaN.
    slope_pct : array_like
        Slope steepness, percent. NaN is kept NaN.

    Returns
    -------
    numpy.ndarray of float64
        LS.

    Raises
    ------
    ValidationError
        If any length or slope is negative or infinite (one message for all).
    """
    problems: list[Problem] = []
    length = _as_float(length_ft)
    _check(problems, "length_ft", length, fix=_LENGTH_FIX)
    s = _slope(slope_pct, problems)
    _raise_if(problems)
    sin = _sin_theta(s)
    return slope_length_l(length, usle_slope_length_exponent_m(s)) * (65.41 * sin**2 + 4.56 * sin + 0.065)


def flow_direction_factor_x(aspect_deg: ArrayLike) -> FloatArray:
    """Desmet & Govers' contour-width factor x = |sin a| + |cos a| for aspect a.

    x is 1 where flow runs along a grid axis and √2 on a diagonal; the effective contour width
    of a cell is D · x (Desmet & Govers 1996, after Zevenbergen & Thorne; domain-reference § 3.6).

    Parameters
    ----------
    aspect_deg : array_like
        Aspect (direction of steepest descent), degrees, any origin (x is symmetric). NaN is
        kept NaN.

    Returns
    -------
    numpy.ndarray of float64
        x, between 1 and √2.

    Raises
    ------
    ValidationError
        If any aspect is infinite.
    """
    a = _as_float(aspect_deg)
    problems: list[Problem] = []
    _check(problems, "aspect_deg", a, minimum=-math.inf, fix="pass aspect in degrees; use NaN for flat cells.")
    _raise_if(problems)
    rad = np.radians(a)
    return np.abs(np.sin(rad)) + np.abs(np.cos(rad))


def slope_length_l_desmet_govers(
    inlet_area_sqft: ArrayLike,
    cell_size_ft: float,
    m: ArrayLike,
    *,
    x: ArrayLike = 1.0,
    max_slope_length_ft: float = DEFAULT_MAX_SLOPE_LENGTH_FT,
) -> FloatArray:
    """Per-cell slope length factor of Desmet & Govers 1996, in feet.

    L = ((A_in + D²)^(m+1) - A_in^(m+1)) / (D^(m+2) · x^m · 72.6^m) (Desmet & Govers 1996, J. Soil
    Water Conserv. 51(5):427; the InVEST SDR guide's equation with 22.13 m written as 72.6 ft;
    domain-reference § 3.6). With λ = A / (D · x), the unit-contour-width slope length, this is
    (λ_out^(m+1) - λ_in^(m+1)) / ((λ_out - λ_in) · 72.6^m): the mean L of the cell's segment of
    a uniform slope, so on a plane the area-weighted mean over a flow line equals
    :func:`slope_length_l` of its whole length.

    Cap: RUSLE applies to overland flow, which concentrates within a few hundred feet. The cell's
    inlet length λ_in is capped at ``max_slope_length_ft - D/x`` (not below 0), so a cell past it
    the cap gets the L of the last segment of a slope exactly ``max_slope_length_ft`` long, and
    L never grows beyond that. Cells past the cap are most likely concentrated flow, which the
    later steps report as outside the method.

    Parameters
    ----------
    inlet_area_sqft : array_like
        Upslope contributing area at each cell's inlet, sq ft, NOT counting the cell itself (with
        a D8 flow accumulation counting upstream cells, ``accumulation_cells * D²``). Flow
        routing is the caller's job. NaN is kept NaN.
    cell_size_ft : float
        Cell size D, ft (square cells).
    m : array_like
        Slope-length exponent per cell.
    x : array_like, default 1.0
        Contour-width factor per cell, :func:`flow_direction_factor_x`.
    max_slope_length_ft : float, default 400.0
        Cap on the slope length, ft (400 ft ≈ 122 m, InVEST SDR's default).

    Returns
    -------
    numpy.ndarray of float64
        L per cell.

    Raises
    ------
    ValidationError
        If any area or m is negative or infinite, the cell size or cap is not positive, or any x
        is below 1 (one message for all).
    """
    problems: list[Problem] = []
    a_in = _as_float(inlet_area_sqft)
    mm = _as_float(m)
    xx = _as_float(x)
    d = _as_float(cell_size_ft)
    cap = _as_float(max_slope_length_ft)
    _check(problems, "inlet_area_sqft", a_in, fix="pass the upslope area in square feet, 0 or more.")
    _check(problems, "m", mm, fix="pass the slope-length exponent, between 0 and 1.")
    _check(problems, "x", xx, minimum=1.0, fix="pass |sin(aspect)| + |cos(aspect)|, between 1 and 1.415.")
    _check(problems, "cell_size_ft", d, strict=True, fix="pass the DEM's cell size in feet.")
    _check(problems, "max_slope_length_ft", cap, strict=True, fix="pass a slope-length cap in feet above 0.")
    for name, v in (("cell_size_ft", d), ("max_slope_length_ft", cap)):
        if np.isnan(v).any():
            problems.append(Problem(_SOURCE, None, f"{name} is NaN.", "pass a number."))
    _raise_if(problems)
    width_ft = d * xx  # effective contour width of the cell
    step_ft = d * d / width_ft  # λ_out - λ_in = D / x
    lam_in = np.minimum(a_in / width_ft, np.maximum(cap - step_ft, 0.0))
    lam_out = lam_in + step_ft
    return (lam_out ** (mm + 1.0) - lam_in ** (mm + 1.0)) / (step_ft * UNIT_PLOT_LENGTH_FT**mm)


def ls_desmet_govers(
    inlet_area_sqft: ArrayLike,
    cell_size_ft: float,
    slope_pct: ArrayLike,
    *,
    x: ArrayLike = 1.0,
    m: ArrayLike | None = None,
    rill_interrill_ratio: float | str = "moderate",
    max_slope_length_ft: float = DEFAULT_MAX_SLOPE_LENGTH_FT,
) -> FloatArray:
    """Per-cell RUSLE LS: Desmet & Govers 1996 L times McCool et al. 1987 S.

    L from :func:`slope_length_l_desmet_govers` (with its slope-length cap), m from
    :func:`slope_length_exponent_m` unless given, S from :func:`slope_steepness_s`. Flag cells
    beyond the method's slope limit with :func:`mask_outside_method`.

    Parameters
    ----------
    inlet_area_sqft : array_like
        Upslope contributing area at each cell's inlet, sq ft, without the cell itself.
    cell_size_ft : float
        Cell size, ft.
    slope_pct : array_like
        Slope steepness per cell, percent. NaN is kept NaN.
    x : array_like, default 1.0
        Contour-width factor, :func:`flow_direction_factor_x`.
    m : array_like, optional
        Slope-length exponent; computed from ``slope_pct`` when omitted.
    rill_interrill_ratio : {"moderate", "low", "high"} or float, default "moderate"
        Used only when ``m`` is omitted; see :func:`slope_length_exponent_m`.
    max_slope_length_ft : float, default 400.0
        Cap on slope length, ft.

    Returns
    -------
    numpy.ndarray of float64
        LS per cell.

    Raises
    ------
    ValidationError
        If any input is out of range (see :func:`slope_length_l_desmet_govers`) or a slope is
        negative or infinite.
    """
    problems: list[Problem] = []
    s = _slope(slope_pct, problems)
    _raise_if(problems)
    mm = slope_length_exponent_m(s, rill_interrill_ratio) if m is None else m
    length_factor = slope_length_l_desmet_govers(
        inlet_area_sqft, cell_size_ft, mm, x=x, max_slope_length_ft=max_slope_length_ft
    )
    return length_factor * slope_steepness_s(s)


def outside_method(slope_pct: ArrayLike, max_slope_pct: float) -> NDArray[np.bool_]:
    """Cells steeper than the method's slope limit (the WDNR sheet leaves out slopes over 33 %).

    The WDNR Soil Loss & Sediment Discharge tool covers sheet and rill erosion only, not slopes
    steeper than 33 % (domain-reference § 3.2, § 3.7): those areas need prescriptive practices
    and get no soil-loss number. The limit is a parameter (the later steps read it from the
    profile); a slope exactly at the limit is inside. NaN slopes are not flagged.

    Parameters
    ----------
    slope_pct : array_like
        Slope steepness, percent.
    max_slope_pct : float
        Steepest slope the method covers, percent.

    Returns
    -------
    numpy.ndarray of bool
        True where ``slope_pct > max_slope_pct``.

    Raises
    ------
    ValidationError
        If any slope is negative or infinite, or the limit is not a positive number.
    """
    problems: list[Problem] = []
    s = _slope(slope_pct, problems)
    limit = _as_float(max_slope_pct)
    _check(problems, "max_slope_pct", limit, strict=True, fix="pass the method's slope limit in percent.")
    if np.isnan(limit).any():
        problems.append(Problem(_SOURCE, None, "max_slope_pct is NaN.", "pass the method's slope limit in percent."))
    _raise_if(problems)
    with np.errstate(invalid="ignore"):
        return np.asarray(s > limit)


def mask_outside_method(
    values: ArrayLike, slope_pct: ArrayLike, max_slope_pct: float
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Blank (NaN) the values of cells outside the method, and say which they are.

    Parameters
    ----------
    values : array_like
        Per-cell values (LS, soil loss) in the shape of ``slope_pct`` or broadcastable to it.
    slope_pct : array_like
        Slope steepness per cell, percent.
    max_slope_pct : float
        Steepest slope the method covers, percent (see :func:`outside_method`).

    Returns
    -------
    values : numpy.ndarray of float64
        A copy of ``values`` with NaN where the cell is outside the method.
    outside : numpy.ndarray of bool
        True where the cell is outside the method: report its area as needing prescriptive
        practices, not a number.

    Raises
    ------
    ValidationError
        As :func:`outside_method`.
    """
    outside = outside_method(slope_pct, max_slope_pct)
    v, outside = np.broadcast_arrays(_as_float(values), outside)
    return np.where(outside, np.nan, v), np.array(outside)


def soil_loss_tons_per_acre(r: ArrayLike, k: ArrayLike, ls: ArrayLike, c: ArrayLike, p: ArrayLike = 1.0) -> FloatArray:
    """Soil loss A = R · K · LS · C · P, tons per acre for the period of R (AH 537; AH 703 eq. 1-1).

    For a construction phase, pass the period's R (annual R times the period's erosivity share,
    :func:`prorated_r`). Wisconsin practice leaves P at 1: sediment controls are counted later
    as reductions of sediment discharge, not as P (domain-reference § 3.2, § 3.8).

    Parameters
    ----------
    r : array_like
        Rainfall-runoff erosivity for the period, hundreds of ft·tonf·in/(ac·h) (US units).
    k : array_like
        Soil erodibility, t·ac·h/(hundreds of ac·ft·tonf·in).
    ls : array_like
        Topographic factor, dimensionless.
    c : array_like
        Cover-management factor, dimensionless (1.0 for bare graded soil).
    p : array_like, default 1.0
        Support-practice factor, dimensionless.

    Returns
    -------
    numpy.ndarray of float64
        A, t/ac for the period of ``r``.

    Raises
    ------
    ValidationError
        If any factor is negative or infinite (one message for all).

    Examples
    --------
    >>> float(soil_loss_tons_per_acre(150.0, 0.3, 1.0, 1.0))
    45.0
    """
    arrays = {name: _as_float(v) for name, v in (("r", r), ("k", k), ("ls", ls), ("c", c), ("p", p))}
    problems: list[Problem] = []
    for name, arr in arrays.items():
        _check(problems, name, arr, fix=f"pass the RUSLE {name.upper()} factor, 0 or more; use NaN for nodata.")
    _raise_if(problems)
    return arrays["r"] * arrays["k"] * arrays["ls"] * arrays["c"] * arrays["p"]


def lew_day_index(day: dt.date) -> int:
    """Day of the year as the EPA LEW calculator counts it: 1 January is 1, fixed month lengths.

    The day of the month plus the days of the preceding months of a 365-day year, so 29 February
    counts as 60, the same as 1 March (``rfactor.js``, domain-reference § 3.5).

    Parameters
    ----------
    day : datetime.date
        The date.

    Returns
    -------
    int
        1 to 365.

    Raises
    ------
    TypeError
        If ``day`` is not a date.
    """
    if not isinstance(day, dt.date):
        msg = f"expected a datetime.date, got {type(day).__name__}"
        raise TypeError(msg)
    return _LEW_DAYS_BEFORE_MONTH[day.month - 1] + day.day


def _daily_ei(ei_daily: ArrayLike, problems: list[Problem]) -> FloatArray:
    ei = _as_float(ei_daily)
    fix = "pass 365 daily erosivity values (a RUSLE2 EI_DAILY_AMOUNT record or daily shares), 0 or more."
    if ei.shape != (365,):
        problems.append(Problem(_SOURCE, None, f"ei_daily has shape {ei.shape}, not (365,).", fix))
        return ei
    if np.isnan(ei).any():
        problems.append(Problem(_SOURCE, None, f"ei_daily has {int(np.isnan(ei).sum())} NaN values.", fix))
    _check(problems, "ei_daily", ei, fix=fix)
    if not problems and not ei.sum() > 0:
        problems.append(Problem(_SOURCE, None, "ei_daily sums to 0.", fix))
    return ei


def _period_sum(ei: FloatArray, start: dt.date, end: dt.date, lew_day_shift: bool) -> float:
    first = lew_day_index(start)
    last = lew_day_index(end) + 365 * (end.year - start.year)
    # LEW indexes the 365-value record with p mod 365, so 1 Jan reads element 1 and 31 Dec reads
    # element 0 (a one-day shift if the record starts on 1 Jan); lew_day_shift=False starts at 0.
    offset = 0 if lew_day_shift else -1
    idx = (np.arange(first, last + 1) + offset) % 365
    return float(ei[idx].sum())


def _check_dates(start: dt.date, end: dt.date, problems: list[Problem]) -> None:
    bad = [name for name, d in (("start", start), ("end", end)) if not isinstance(d, dt.date)]
    for name in bad:
        value = start if name == "start" else end
        problems.append(Problem(_SOURCE, None, f"{name} {value!r} is not a date.", "pass a datetime.date."))
    if not bad and end < start:
        problems.append(
            Problem(_SOURCE, None, f"end {end.isoformat()} is before start {start.isoformat()}.", "swap the dates.")
        )


def erosivity_share(ei_daily: ArrayLike, start: dt.date, end: dt.date, *, lew_day_shift: bool = True) -> float:
    """Share of the annual erosivity that falls from ``start`` to ``end``, both days included.

    The EPA Low Erosivity Waiver method (``Eastern-Research-Group/lew``,
    ``server/controllers/rfactor.js``; domain-reference § 3.5): sum the daily EI from the start
    day to the end day inclusive, adding 365 days for each calendar year crossed, wrapping
    round the year; divided here by the year's total, so it is the "%R" of the Dane County form
    (as a fraction) and can exceed 1 for periods longer than a year.

    Parameters
    ----------
    ei_daily : array_like, shape (365,)
        Daily erosivity through the year, in any unit (only its shares matter): the RUSLE2
        climate record's EI_DAILY_AMOUNT, or a distribution spread to days.
    start, end : datetime.date
        First and last day of the period.
    lew_day_shift : bool, default True
        Reproduce LEW's indexing (1 January reads element 1, 31 December element 0). False
        reads 1 January from element 0.

    Returns
    -------
    float
        The period's share of the annual erosivity.

    Raises
    ------
    ValidationError
        If ``ei_daily`` is not 365 finite values of 0 or more with a positive sum, a date is not
        a date, or ``end`` is before ``start`` (one message for all).
    """
    problems: list[Problem] = []
    ei = _daily_ei(ei_daily, problems)
    _check_dates(start, end, problems)
    _raise_if(problems)
    return _period_sum(ei, start, end, lew_day_shift) / float(ei.sum())


def prorated_r(
    r_annual: float, ei_daily: ArrayLike, start: dt.date, end: dt.date, *, lew_day_shift: bool = True
) -> float:
    """R for a construction period: annual R times the period's erosivity share (EPA LEW method).

    With ``ei_daily`` the RUSLE2 EI_DAILY_AMOUNT record (which sums to the annual R) and
    ``r_annual`` its sum, this is exactly the LEW calculator's unrounded R; round it with
    :func:`round_r_lew` to compare with LEW output. No R or distribution for Winnebago County is
    built in (domain-reference § 3.4: NOT confirmed).

    Parameters
    ----------
    r_annual : float
        Annual erosivity R, US units.
    ei_daily : array_like, shape (365,)
        Daily erosivity through the year (see :func:`erosivity_share`).
    start, end : datetime.date
        First and last day of the period, both included.
    lew_day_shift : bool, default True
        See :func:`erosivity_share`.

    Returns
    -------
    float
        R for the period, US units.

    Raises
    ------
    ValidationError
        If ``r_annual`` is negative, NaN or infinite, or as :func:`erosivity_share` (one message
        for all).
    """
    problems: list[Problem] = []
    r = _as_float(r_annual)
    _check(problems, "r_annual", r, fix="pass the annual R factor, 0 or more.")
    if np.isnan(r).any():
        problems.append(Problem(_SOURCE, None, "r_annual is NaN.", "pass the annual R factor."))
    ei = _daily_ei(ei_daily, problems)
    _check_dates(start, end, problems)
    _raise_if(problems)
    return float(r) * _period_sum(ei, start, end, lew_day_shift) / float(ei.sum())


def round_r_lew(r: float) -> float:
    """Round an R value as the EPA LEW calculator reports it (``rfactor.js``).

    Under 10: 3 significant figures; 10 to under 99: 4 significant figures; 99 or more: the
    nearest whole number (halves up, as JavaScript's ``Math.round``).

    Parameters
    ----------
    r : float
        R, 0 or more.

    Returns
    -------
    float
        The rounded R.

    Raises
    ------
    ValidationError
        If ``r`` is negative, NaN or infinite.

    Examples
    --------
    >>> round_r_lew(0.35612), round_r_lew(12.3456), round_r_lew(192.5)
    (0.356, 12.35, 193.0)
    """
    value = _as_float(r)
    problems: list[Problem] = []
    _check(problems, "r", value, fix="pass an R value, 0 or more.")
    if np.isnan(value).any():
        problems.append(Problem(_SOURCE, None, "r is NaN.", "pass an R value."))
    _raise_if(problems)
    v = float(value)
    if v < 10:
        return float(f"{v:.3g}")
    if v < 99:
        return float(f"{v:.4g}")
    return float(math.floor(v + 0.5))
