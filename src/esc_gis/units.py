"""Units: the only place in esc_gis that holds conversion factors.

Areas are reported in international square feet and acres (1 acre = 43,560 sq ft), the
units the ordinance writes its thresholds in. Coordinates may come in US survey feet
(Wisconsin county coordinate systems) or metres; :func:`sqft_per_crs_area_unit` turns a
CRS's own area unit into square feet so that nothing else needs to know which foot it is.
"""

from __future__ import annotations

__all__ = [
    "FT_PER_M",
    "LENGTH_UNITS_M",
    "M_PER_FT",
    "M_PER_US_FT",
    "SQFT_PER_ACRE",
    "SQFT_PER_M2",
    "acres_to_sqft",
    "ft_to_crs_units",
    "length_unit",
    "sqft_per_crs_area_unit",
    "sqft_to_acres",
]

from typing import TYPE_CHECKING

from esc_gis._lazy import lazy_module
from esc_gis.errors import UnitsError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from pyproj import CRS
else:
    # Loaded on first use: the registry reads the constants here and starts without numpy.
    np = lazy_module("numpy")

#: The international foot (1959): exactly 0.3048 m.
M_PER_FT = 0.3048
FT_PER_M = 1.0 / M_PER_FT
#: The US survey foot, still used by WISCRS county data: exactly 1200/3937 m.
M_PER_US_FT = 1200.0 / 3937.0
SQFT_PER_M2 = 1.0 / (M_PER_FT * M_PER_FT)
#: One acre is 43,560 square feet (the ordinance's "one acre").
SQFT_PER_ACRE = 43_560.0
#: Metres per unit of the length units a DEM's elevations may be in.
LENGTH_UNITS_M = {"m": 1.0, "ft": M_PER_FT, "us_ft": M_PER_US_FT}
_LENGTH_ALIASES = {
    "m": "m",
    "metre": "m",
    "meter": "m",
    "metres": "m",
    "meters": "m",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "international foot": "ft",
    "foot (international)": "ft",
    "us_ft": "us_ft",
    "us-ft": "us_ft",
    "ftus": "us_ft",
    "us survey foot": "us_ft",
    "us survey feet": "us_ft",
    "foot_us": "us_ft",
    "us_survey_foot": "us_ft",
}


def length_unit(name: str) -> str:
    """Normalise a length unit's name to ``m``, ``ft`` (international) or ``us_ft``.

    Raises
    ------
    UnitsError
        If the name is not a known length unit.

    Examples
    --------
    >>> length_unit("US survey foot"), length_unit("metre"), length_unit("ft")
    ('us_ft', 'm', 'ft')
    """
    key = _LENGTH_ALIASES.get(str(name).strip().lower())
    if key is None:
        msg = f"{name!r} is not a length unit esc_gis knows; use one of m, ft, us_ft."
        raise UnitsError(msg)
    return key


def sqft_to_acres(area_sqft: float | npt.ArrayLike) -> float | npt.NDArray:
    """Convert square feet to acres.

    Examples
    --------
    >>> float(sqft_to_acres(87_120.0))
    2.0
    """
    return np.divide(area_sqft, SQFT_PER_ACRE)


def acres_to_sqft(area_acres: float) -> float:
    """Convert acres to square feet.

    Examples
    --------
    >>> acres_to_sqft(1)
    43560.0
    """
    return float(area_acres) * SQFT_PER_ACRE


def _metres_per_crs_unit(crs: CRS) -> float:
    """Return metres per horizontal axis unit of a projected CRS.

    Raises
    ------
    UnitsError
        If the CRS axes are not linear or disagree.
    """
    factors = {ax.unit_conversion_factor for ax in crs.axis_info if ax.unit_name != "degree"}
    linear = [ax for ax in crs.axis_info if ax.direction in ("east", "north", "west", "south")]
    if not linear or len(factors) != 1 or any(ax.unit_name == "degree" for ax in linear):
        msg = (
            f"CRS {crs.to_string()!r} has no single linear axis unit; measure in a projected "
            "CRS in feet or metres (the profile's measuring CRS, EPSG:7594 by default)."
        )
        raise UnitsError(msg)
    return float(factors.pop())


def sqft_per_crs_area_unit(crs: CRS) -> float:
    """Return how many international square feet one square CRS unit holds.

    Parameters
    ----------
    crs : pyproj.CRS
        A projected CRS with a linear unit (metre, international foot or US survey foot).

    Returns
    -------
    float
        1.0000040 for US survey feet, 1.0 for international feet, 10.7639 for metres.

    Raises
    ------
    UnitsError
        If the CRS has no single linear unit.

    Examples
    --------
    >>> from pyproj import CRS
    >>> round(sqft_per_crs_area_unit(CRS("EPSG:7594")), 7)
    1.000004
    """
    m = _metres_per_crs_unit(crs)
    return (m * m) * SQFT_PER_M2


def ft_to_crs_units(distance_ft: float, crs: CRS) -> float:
    """Convert a distance in international feet to the linear unit of ``crs``.

    Raises
    ------
    UnitsError
        If the CRS has no single linear unit.

    Examples
    --------
    >>> from pyproj import CRS
    >>> round(ft_to_crs_units(50.0, CRS("EPSG:3071")), 4)
    15.24
    """
    return distance_ft * M_PER_FT / _metres_per_crs_unit(crs)
