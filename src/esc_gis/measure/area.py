"""Areas in square feet and unions by group (disturbed limits per site, sites per plan)."""

from __future__ import annotations

__all__ = ["area_sqft", "disturbed_by_site_sqft", "union_by_group"]

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


def disturbed_by_site_sqft(
    site_geoms: npt.ArrayLike,
    site_ids: npt.ArrayLike,
    disturbed_geoms: npt.ArrayLike,
    crs: CRS,
    disturbed_ids: npt.ArrayLike | None = None,
) -> np.ndarray:
    """Each site's whole disturbed area in square feet, parts past the site line included.

    With ``disturbed_ids``, a site's disturbance is the union of the disturbed polygons that
    carry its id (as screening matches them). Without, it is the union of the disturbed
    polygons that touch the site, each whole: a limit drawn past the site line is still that
    site's land-disturbing activity (§ 540-5 CONSTRUCTION SITE: where the activity occurs).

    Parameters
    ----------
    site_geoms, site_ids : array_like
        The sites and their ids, in ``crs``.
    disturbed_geoms : array_like of shapely.Geometry
        The disturbed limits, in ``crs``.
    crs : pyproj.CRS
        A projected CRS.
    disturbed_ids : array_like, optional
        The site id of each disturbed polygon.

    Returns
    -------
    numpy.ndarray of float
        One area per site; 0 where no disturbed polygon is its.

    Raises
    ------
    esc_gis.errors.CRSError
        As :func:`area_sqft`, for a geographic or unusable CRS.
    """
    sites = np.asarray(site_geoms, dtype=object)
    disturbed = np.asarray(disturbed_geoms, dtype=object)
    out = np.zeros(len(sites))
    if disturbed_ids is not None:
        keys, unions, _ = union_by_group(disturbed, np.asarray(disturbed_ids, dtype=object).astype(str))
        if len(keys):
            where = np.searchsorted(keys, np.asarray(site_ids, dtype=object).astype(str))
            where = np.clip(where, 0, len(keys) - 1)
            found = keys[where] == np.asarray(site_ids, dtype=object).astype(str)
            out[found] = area_sqft(unions[where[found]], crs)
        return out
    # STRtree: pairs (site, disturbed polygon) that touch, then one union per site.
    site_i, dist_i = shapely.STRtree(disturbed).query(sites, predicate="intersects")
    if site_i.size:
        keys, unions, _ = union_by_group(disturbed[dist_i], site_i)
        out[keys.astype(int)] = area_sqft(unions, crs)
    return out
