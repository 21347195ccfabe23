"""The screening engine: sites in, one row per site out, with decisions and cited findings.

Data flow one way, one module a stage, none reaching back up the flow:

- :mod:`~esc_gis.screening.read`: the sites (and disturbed limits) read, checked and put in
  the measuring CRS (:func:`read_run`);
- :mod:`~esc_gis.screening.measure`: every site's disturbance, jurisdiction, common plan,
  waters, steep slopes and targeted areas, measured at once;
- :mod:`~esc_gis.screening.decide`: the ordinance's rules applied, the result table built
  (:func:`measure_run`, :class:`ScreeningRun`, the output's columns);
- :mod:`~esc_gis.screening.write`: a batch's rows as the output's Arrow table, and the
  writers that take them batch by batch.

Engines drive a layer through those stages:

- :mod:`~esc_gis.screening.engines.whole`: the whole layer at once, in memory
  (:func:`screen`, :func:`screen_run`);
- :mod:`~esc_gis.screening.stream`: a layer of any size a batch at a time, written to a file
  (:func:`~esc_gis.screening.stream.screen_to_file`); its batches are planned by
  :mod:`~esc_gis.screening.batches` (common plans kept together, spatial order by
  :mod:`~esc_gis.screening.order`) and run by :mod:`~esc_gis.screening.engines.local` (this
  process) or :mod:`~esc_gis.screening.engines.dask` (a dask cluster);
- :mod:`~esc_gis.screening.municipalities`: each site under the profile of the municipality
  it lies in.

The names below are today's public API, imported on first use (a module of the package
imports only what it needs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from esc_gis._lazy import lazy_getattr

__all__ = [
    "CONTRACT_COLUMNS",
    "DEPRECATED_COLUMNS",
    "EXTRA_COLUMNS",
    "OPTIONAL_COLUMNS",
    "RUN_FINDINGS",
    "AllSkippedError",
    "ReadRun",
    "ScreeningRun",
    "limits_text",
    "measure_run",
    "read_run",
    "run_findings",
    "screen",
    "screen_run",
]

_LAZY = {
    "AllSkippedError": "esc_gis.screening.read",
    "ReadRun": "esc_gis.screening.read",
    "read_run": "esc_gis.screening.read",
    "CONTRACT_COLUMNS": "esc_gis.screening.decide",
    "DEPRECATED_COLUMNS": "esc_gis.screening.decide",
    "EXTRA_COLUMNS": "esc_gis.screening.decide",
    "OPTIONAL_COLUMNS": "esc_gis.screening.decide",
    "RUN_FINDINGS": "esc_gis.screening.decide",
    "ScreeningRun": "esc_gis.screening.decide",
    "limits_text": "esc_gis.screening.decide",
    "measure_run": "esc_gis.screening.decide",
    "run_findings": "esc_gis.screening.decide",
    "screen": "esc_gis.screening.engines.whole",
    "screen_run": "esc_gis.screening.engines.whole",
}

if TYPE_CHECKING:
    from esc_gis.screening.decide import (
        CONTRACT_COLUMNS,
        DEPRECATED_COLUMNS,
        EXTRA_COLUMNS,
        OPTIONAL_COLUMNS,
        RUN_FINDINGS,
        ScreeningRun,
        limits_text,
        measure_run,
        run_findings,
    )
    from esc_gis.screening.engines.whole import screen, screen_run
    from esc_gis.screening.read import AllSkippedError, ReadRun, read_run

__getattr__ = lazy_getattr(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
