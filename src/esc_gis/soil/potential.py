"""Screening's bare-soil soil-loss estimate: what a site would lose left bare for a year.

Screening has no construction schedule, so it cannot do the WDNR calculation the sediment
standard asks for (soil loss per phase, reduced by the practices, summed per 12-month window:
:mod:`esc_gis.soil.soil_loss`). What a screener can defend without one is the worst case of
cover and practices: the disturbed area left bare for 12 months, C = 1, no sediment controls:

    bare_soil_loss_tpa = R_annual x K x LS

in t/ac/yr. Any 12 consecutive months hold the whole year's erosivity, so R is the annual R
and no erosivity distribution is needed. K is area-weighted over the disturbed area from the
layer set's soils (polygons with no usable K, such as SSURGO's water units, are left out, and
the share of the disturbed area with a K is reported); LS is the mean per-cell RUSLE LS over
the disturbed surface inside the method, as :func:`esc_gis.soil.soil_loss.soil_loss` computes
it; cells outside the method (steeper than its limit, or past the slope-length cap) are left out
and their share reported.

It is a screening estimate (finding ``screening_bare_soil_loss``, basis ``policy``), never a
pass or fail of the sediment standard, which applies to the discharge after BMPs over the
plan's schedule. R comes only from the profile (``[soil_loss.r_annual] value``, with its
status); when the profile holds none the column is null and the run says why
(``screening_bare_soil_loss_no_r``): no R is ever assumed.
"""

from __future__ import annotations

__all__ = ["BareSoilLoss", "bare_soil_loss"]

from dataclasses import dataclass

import geopandas as gpd
import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pyproj import CRS

from esc_gis.profile import Profile
from esc_gis.soil.k import k_by_site
from esc_gis.soil.soil_loss import TableValue, site_ls, soil_loss_tables
from esc_gis.terrain.dem import DemInfo

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class BareSoilLoss:
    """The estimate per site, with its factors.

    Attributes
    ----------
    tpa : numpy.ndarray of float64
        R x K x LS, t/ac/yr; NaN where not computed (no R, no DEM cell or no K).
    k, ls, outside_share, k_covered_share : numpy.ndarray of float64
        Area-weighted K, mean LS inside the method, share of the disturbed surface outside the
        method, share of the disturbed area with a K.
    r_annual : TableValue or None
        The profile's annual R, or None when it holds none.
    """

    tpa: FloatArray
    k: FloatArray
    ls: FloatArray
    outside_share: FloatArray
    k_covered_share: FloatArray
    r_annual: TableValue | None


def bare_soil_loss(
    geoms: NDArray[np.object_],
    crs: CRS,
    dem: DemInfo,
    soils: gpd.GeoDataFrame,
    *,
    profile: Profile,
    k_field: str | None = None,
) -> BareSoilLoss:
    """Estimate each disturbed area's soil loss left bare for 12 months (see the module notes).

    Parameters
    ----------
    geoms : numpy.ndarray of shapely.Geometry
        Disturbed areas in ``crs`` (empty ones get NaN).
    crs : pyproj.CRS
        A projected CRS; ``soils`` must be in it.
    dem : DemInfo
    soils : geopandas.GeoDataFrame
        Soil polygons with K in ``k_field``.
    profile : Profile
        Gives R (or none), the method's limits and K's range.
    k_field : str, optional
        The profile's ``k_field`` (``kwfact``) when omitted.

    Returns
    -------
    BareSoilLoss

    Raises
    ------
    ProfileError
        If the profile's ``[soil_loss]`` tables are missing or malformed.
    ValidationError
        If the DEM is geographic or its cells are not square.
    """
    tables = soil_loss_tables(profile)
    n = len(geoms)
    nan = np.full(n, np.nan)
    r = tables.r_annual
    if r is None or not (np.isfinite(r.value) and r.value > 0):
        return BareSoilLoss(nan, nan.copy(), nan.copy(), nan.copy(), nan.copy(), None)
    field = k_field or tables.k_field
    k_raw = np.asarray(pd.to_numeric(soils[field], errors="coerce"), dtype=np.float64)
    # A screening estimate over the Village's own layer: a polygon without a usable K (water,
    # pits) is left out, not refused, and the share with a K is reported beside the value.
    usable = (k_raw > 0) & (k_raw <= tables.k_max)
    site_k = k_by_site(geoms, soils[usable], k_field=field, k_max=tables.k_max, source="soils")
    grids = site_ls(geoms, crs, dem, max_slope_pct=tables.max_slope_pct, max_slope_length_ft=tables.max_slope_length_ft)
    ls = np.array([g.mean_ls if g is not None else np.nan for g in grids])
    outside = np.array([g.outside_share if g is not None else np.nan for g in grids])
    tpa = r.value * site_k.k * ls  # C = 1 for the whole year, no practices
    return BareSoilLoss(tpa, site_k.k, ls, outside, site_k.covered_share, r)
