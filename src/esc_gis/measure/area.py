"""Areas in square feet and unions by group (disturbed limits per site, sites per plan)."""

from __future__ import annotations

__all__ = ["area_sqft", "union_by_group"]

from typing import TYPE_CHECKING

import numpy as np
import shapely

from esc_gis.crs import measuring_crs
from esc_gis.units import sqft_per_crs_area_unit

if TYPE_CHECKING:
    import numpy.typing as npt
    from pyproj import CRS


def area_sqft(geoms: npt.ArrayLike, crs: CRS) -> np.ndarray:
    """Planar area in international square feet, in a projected measuring CRS.

    Parameters
    ----------
    geoms : array_like of shapely.Geometry
    crs : pyproj.CRS
        The geometries' CRS: projected, not Mercator.

    Returns
    -------
    numpy.ndarray of float
        Missing or empty geometries measure 0.

    Raises
    ------
    CRSError
        If ``crs`` is geographic or Mercator (areas are never measured in degrees or Web
        Mercator).

    Examples
    --------
    >>> from pyproj import CRS
    >>> area_sqft([shapely.box(0, 0, 100, 40)], CRS("EPSG:2222"))  # intl feet
    array([4000.])
    """
    factor = sqft_per_crs_area_unit(measuring_crs(crs))
    return np.nan_to_num(shapely.area(np.asarray(geoms, dtype=object))) * factor


def union_by_group(geoms: npt.ArrayLike, keys: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Union geometries that share a key (overlaps counted once).

    Parameters
    ----------
    geoms : array_like of shapely.Geometry
    keys : array_like
        One key per geometry (e.g. the site id of each disturbed-limit polygon).

    Returns
    -------
    unique_keys : numpy.ndarray
        Sorted distinct keys.
    unions : numpy.ndarray of shapely.Geometry
        The union of each key's geometries.
    counts : numpy.ndarray of int
        How many geometries each key had.

    Notes
    -----
    Keys with one geometry keep it as is; only keys with several are unioned, so the cost
    follows the number of multi-part groups, not the number of rows.

    Examples
    --------
    >>> keys, u, n = union_by_group([shapely.box(0, 0, 2, 2), shapely.box(1, 0, 3, 2)], ["a", "a"])
    >>> keys.tolist(), shapely.area(u).tolist(), n.tolist()
    (['a'], [6.0], [2])
    """
    geoms = np.asarray(geoms, dtype=object)
    keys = np.asarray(keys, dtype=object)
    order = np.argsort(keys, kind="stable")
    sorted_geoms = geoms[order]  # sorted once: indexing inside the loop made it O(groups x rows)
    uniq, start, counts = np.unique(keys[order], return_index=True, return_counts=True)
    unions = sorted_geoms[start]
    for j in np.flatnonzero(counts > 1):
        unions[j] = shapely.union_all(sorted_geoms[start[j] : start[j] + counts[j]])
    return uniq, unions, counts
