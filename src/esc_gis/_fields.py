"""Default field names of the inputs, free of heavy imports: the CLI's options show them at start-up."""

from __future__ import annotations

__all__ = ["DRAINAGE_FIELD", "PIPED_FIELD"]

#: Default columns of a waters layer's optional flags (see :func:`esc_gis.validate.prepare_waters`).
PIPED_FIELD = "piped"
DRAINAGE_FIELD = "drainage_acres"
