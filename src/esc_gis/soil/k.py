"""Soil erodibility K per site: area-weighted over the disturbed area from a soils layer, or one value.

The soils layer is polygons with a K field: SSURGO map units with the surface horizon's
``kwfact`` joined on (SSURGO keeps K in the ``chorizon`` table, often as text such as ``".32"``;
numbers written as text are read), or any field named by the caller. Each site's K is the mean
of the polygons' K weighted by the area each shares with the site's disturbed area, computed
with one STRtree query and shapely's vectorised intersection (no loop per polygon).

K must be above 0 and at most the profile's ``k_max`` (0.7: SSURGO's kwfact values run .02 to
.64): anything else is refused, every offending polygon listed at once. A polygon meeting the
disturbed area with no K (SSURGO leaves water and some miscellaneous areas blank) is refused too:
the fix is to give it a K or cut it out of the disturbed area.
"""

from __future__ import annotations

from dataclasses import dataclass

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from numpy.typing import NDArray
from shapely import STRtree

from esc_gis.errors import Problem, ValidationError

__all__ = ["SiteK", "check_k", "k_by_site"]


@dataclass(frozen=True)
class SiteK:
    """K per site and the share of each site's disturbed area the soils layer covers.

    Attributes
    ----------
    k : numpy.ndarray of float64
        Area-weighted K per site (NaN where no soils polygon meets the site).
    covered_share : numpy.ndarray of float64
        Share (0 to 1) of each site's disturbed area covered by soils polygons.
    """

    k: NDArray[np.float64]
    covered_share: NDArray[np.float64]


def check_k(value: float, k_max: float, *, source: str = "k=") -> None:
    """Refuse a single K that is not above 0 and at most ``k_max``.

    Raises
    ------
    ValidationError
        If ``value`` is out of range or not a number.
    """
    if not (np.isfinite(value) and 0 < value <= k_max):
        problem = Problem(
            source,
            None,
            f"K {value!r} is out of range (above 0, at most {k_max:g}).",
            "give the soil erodibility factor K in US units (t ac h / (100 ac ft tonf in)), e.g. 0.28.",
        )
        raise ValidationError([problem])


def _k_values(soils: gpd.GeoDataFrame, k_field: str, k_max: float, source: str) -> NDArray[np.float64]:
    if k_field not in soils.columns:
        fields = ", ".join(str(c) for c in soils.columns if c != soils.geometry.name) or "none"
        problem = Problem(
            source,
            None,
            f"the soils layer has no field {k_field!r} (its fields: {fields}).",
            "join the surface horizon's kwfact from SSURGO's chorizon table to the map units, name the K field "
            "with k_field=, or give one K with k=.",
        )
        raise ValidationError([problem])
    return np.asarray(pd.to_numeric(soils[k_field], errors="coerce"), dtype=np.float64)


def k_by_site(
    disturbed: NDArray[np.object_],
    soils: gpd.GeoDataFrame,
    *,
    k_field: str,
    k_max: float,
    source: str = "soils",
) -> SiteK:
    """Area-weighted K of each site's disturbed area from a soils polygon layer.

    Parameters
    ----------
    disturbed : numpy.ndarray of shapely.Geometry
        Each site's disturbed area, in a projected CRS (the soils layer must be in the same).
    soils : geopandas.GeoDataFrame
        Soil polygons with the K field, in the CRS of ``disturbed``.
    k_field : str
        Field holding K (``kwfact`` for SSURGO).
    k_max : float
        Largest K accepted (the profile's ``k_max``).
    source : str, default "soils"
        Name of the layer, for messages.

    Returns
    -------
    SiteK

    Raises
    ------
    ValidationError
        If the field is missing, or any polygon meeting a disturbed area has a K that is blank,
        not a number, 0 or less, or above ``k_max`` (one message, every polygon by its row).
    """
    k = _k_values(soils, k_field, k_max, source)
    geoms = np.asarray(soils.geometry.to_numpy(), dtype=object)
    disturbed = np.asarray(disturbed, dtype=object)
    tree = STRtree(geoms)
    site_idx, soil_idx = tree.query(disturbed, predicate="intersects")
    overlap = shapely.area(shapely.intersection(disturbed[site_idx], geoms[soil_idx]))
    keep = overlap > 0
    site_idx, soil_idx, overlap = site_idx[keep], soil_idx[keep], overlap[keep]

    problems: list[Problem] = []
    bad_rows = np.unique(soil_idx[~(k[soil_idx] > 0) | (k[soil_idx] > k_max) | np.isnan(k[soil_idx])])
    for j in bad_rows:
        raw = soils[k_field].iloc[int(j)]
        what = "no K" if pd.isna(raw) or np.isnan(k[j]) else f"K {raw if isinstance(raw, str) else f'{k[j]:g}'}"
        problems.append(
            Problem(
                source,
                int(j) + 1,
                f"{what} in {k_field!r} where the polygon meets a disturbed area (K must be above 0 and at most "
                f"{k_max:g}).",
                "correct the K (kwfact of the surface horizon), or cut the polygon (water, pits) out of the "
                "disturbed area.",
            )
        )
    if problems:
        raise ValidationError(problems)

    n = len(disturbed)
    weight = np.bincount(site_idx, weights=overlap, minlength=n)
    weighted = np.bincount(site_idx, weights=overlap * k[soil_idx], minlength=n)
    site_area = shapely.area(disturbed)
    with np.errstate(invalid="ignore", divide="ignore"):
        k_site = np.where(weight > 0, weighted / weight, np.nan)
        covered = np.where(site_area > 0, np.minimum(weight / site_area, 1.0), 0.0)
    return SiteK(k_site, covered)
