"""Soil loss: RUSLE / USLE formulas (:mod:`esc_gis.soil.rusle`) and LS from a DEM (:mod:`esc_gis.soil.ls`).

Names are imported on first use, as in the other subpackages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from esc_gis._lazy import lazy_getattr

__all__ = [
    "DEFAULT_MAX_SLOPE_LENGTH_FT",
    "RILL_INTERRILL_RATIO",
    "UNIT_PLOT_LENGTH_FT",
    "LsGrid",
    "accumulate_cardinal",
    "erosivity_share",
    "flow_direction_factor_x",
    "lew_day_index",
    "ls_desmet_govers",
    "ls_factor",
    "ls_grid",
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

_LS_NAMES = ("LsGrid", "accumulate_cardinal", "ls_grid")
_LAZY = {name: "esc_gis.soil.ls" if name in _LS_NAMES else "esc_gis.soil.rusle" for name in __all__}

if TYPE_CHECKING:
    from esc_gis.soil.ls import LsGrid, accumulate_cardinal, ls_grid
    from esc_gis.soil.rusle import (
        DEFAULT_MAX_SLOPE_LENGTH_FT,
        RILL_INTERRILL_RATIO,
        UNIT_PLOT_LENGTH_FT,
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

__getattr__ = lazy_getattr(__name__, _LAZY)
