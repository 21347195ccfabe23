"""esc_gis: the Village of Winneconne's construction-site erosion-control ordinance on a map.

Chapter 540, Article I of the Village Code, as GIS answers: which sites need an erosion
control permit, which standards apply, and why, with a § citation on every finding.

The names below are imported on first use, so ``esc-gis slope`` does not pay for pandas and
geopandas, which only screening needs.

>>> import esc_gis
>>> sorted(esc_gis.__all__)  # doctest: +NORMALIZE_WHITESPACE
['LayerSet', 'Profile', 'ScreeningRun', '__version__', 'findings_frame', 'load_layers',
 'load_profile', 'screen', 'screen_run']
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from esc_gis._lazy import lazy_getattr

__version__ = "0.1.0"
__all__ = [
    "LayerSet",
    "Profile",
    "ScreeningRun",
    "__version__",
    "findings_frame",
    "load_layers",
    "load_profile",
    "screen",
    "screen_run",
]

_LAZY = {
    "LayerSet": "esc_gis.layers",
    "load_layers": "esc_gis.layers",
    "Profile": "esc_gis.profile",
    "load_profile": "esc_gis.profile",
    "screen": "esc_gis.screening",
    "screen_run": "esc_gis.screening",
    "ScreeningRun": "esc_gis.screening",
    "findings_frame": "esc_gis.findings",
}

if TYPE_CHECKING:
    from esc_gis.findings import findings_frame
    from esc_gis.layers import LayerSet, load_layers
    from esc_gis.profile import Profile, load_profile
    from esc_gis.screening import ScreeningRun, screen, screen_run

logging.getLogger(__name__).addHandler(logging.NullHandler())


__getattr__ = lazy_getattr(__name__, _LAZY)
