"""The fee kind an application needs, kept apart from the fee schedule's model.

The registry's listing commands fold every permit's history with it, and they start without
pydantic; :mod:`esc_gis.config.fees` (the schedule's model) imports it from here.
"""

from __future__ import annotations

__all__ = ["APPLICATION_FEE"]

#: The fee kind without which an application is not complete (§ 540-8B, § 540-8C).
APPLICATION_FEE = "application"
