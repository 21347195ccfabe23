"""esc_gis: the Village of Winneconne's construction-site erosion-control ordinance on a map.

Chapter 540, Article I of the Village Code, as GIS answers: which sites need an erosion
control permit, which standards apply, and why, with a § citation on every finding.

>>> import esc_gis
>>> sorted(esc_gis.__all__)
['LayerSet', 'Profile', '__version__', 'load_layers', 'load_profile', 'screen']
"""

from __future__ import annotations

import logging

from esc_gis.layers import LayerSet, load_layers
from esc_gis.profile import Profile, load_profile
from esc_gis.screen import screen

__version__ = "0.1.0"
__all__ = ["LayerSet", "Profile", "__version__", "load_layers", "load_profile", "screen"]

logging.getLogger(__name__).addHandler(logging.NullHandler())
