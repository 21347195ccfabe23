"""Soil loss: RUSLE / USLE formulas (:mod:`esc_gis.soil.rusle`), LS from a DEM (:mod:`esc_gis.soil.ls`),
construction schedules (:mod:`esc_gis.soil.schedule`), K from soils (:mod:`esc_gis.soil.k`) and soil
loss per site and phase (:mod:`esc_gis.soil.soil_loss`).

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
    "Phase",
    "SoilLossResult",
    "Window",
    "k_by_site",
    "read_ei_distribution",
    "read_schedule",
    "soil_loss",
    "soil_loss_tables",
    "validate_schedule",
    "windows",
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
_OTHER = {
    "Phase": "schedule",
    "Window": "schedule",
    "read_schedule": "schedule",
    "validate_schedule": "schedule",
    "windows": "schedule",
    "k_by_site": "k",
    "SoilLossResult": "soil_loss",
    "read_ei_distribution": "soil_loss",
    "soil_loss": "soil_loss",
    "soil_loss_tables": "soil_loss",
}
_LAZY = {
    name: f"esc_gis.soil.{_OTHER[name]}"
    if name in _OTHER
    else ("esc_gis.soil.ls" if name in _LS_NAMES else "esc_gis.soil.rusle")
    for name in __all__
}

if TYPE_CHECKING:
    from esc_gis.soil.k import k_by_site
    from esc_gis.soil.schedule import Phase, Window, read_schedule, validate_schedule, windows
    from esc_gis.soil.soil_loss import SoilLossResult, read_ei_distribution, soil_loss, soil_loss_tables
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
