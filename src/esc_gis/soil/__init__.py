"""Soil loss: RUSLE formulas, LS from a DEM, schedules, K and soil loss per site.

:mod:`esc_gis.soil.rusle` (formulas), :mod:`esc_gis.soil.ls` (LS from a DEM),
:mod:`esc_gis.soil.schedule` (construction schedules), :mod:`esc_gis.soil.k` (K from soils) and
:mod:`esc_gis.soil.soil_loss` (soil loss per site and phase).

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
    "accumulate_cardinal",
    "erosivity_share",
    "flow_direction_factor_x",
    "k_by_site",
    "lew_day_index",
    "ls_desmet_govers",
    "ls_factor",
    "ls_grid",
    "mask_outside_method",
    "outside_method",
    "prorated_r",
    "read_ei_distribution",
    "read_schedule",
    "round_r_lew",
    "slope_length_exponent_m",
    "slope_length_l",
    "slope_length_l_desmet_govers",
    "slope_steepness_s",
    "slope_steepness_s_short",
    "soil_loss",
    "soil_loss_tables",
    "soil_loss_tons_per_acre",
    "usle_ls_factor",
    "usle_slope_length_exponent_m",
    "validate_schedule",
    "windows",
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
    "soil_loss_tables": "tables",  # without the site machinery's geopandas
}
_LAZY = {
    name: f"esc_gis.soil.{_OTHER[name]}"
    if name in _OTHER
    else ("esc_gis.soil.ls" if name in _LS_NAMES else "esc_gis.soil.rusle")
    for name in __all__
}

if TYPE_CHECKING:
    from esc_gis.soil.k import k_by_site
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
    from esc_gis.soil.schedule import Phase, Window, read_schedule, validate_schedule, windows
    from esc_gis.soil.soil_loss import SoilLossResult, read_ei_distribution, soil_loss
    from esc_gis.soil.tables import soil_loss_tables

__getattr__ = lazy_getattr(__name__, _LAZY)
