"""Decide: the ordinance's rules applied to the measurements, and the result table built.

The third stage of a screening (read -> measure -> decide -> write): :func:`measure_run` takes
the sites :func:`esc_gis.screening.read.read_run` read, has them measured
(:func:`esc_gis.screening.measure.measure`), decided (:func:`esc_gis.rules.decide`) and returns
one row per site with its cited findings (:class:`ScreeningRun`).
"""

from __future__ import annotations

__all__ = [
    "CONTRACT_COLUMNS",
    "DEPRECATED_COLUMNS",
    "EXTRA_COLUMNS",
    "OPTIONAL_COLUMNS",
    "RUN_FINDINGS",
    "ScreeningRun",
    "limits_text",
    "measure_run",
    "run_findings",
]

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from esc_gis.layers import LayerSet
from esc_gis.profile import Profile
from esc_gis.rules import Measurements, decide
from esc_gis.screening.measure import measure
from esc_gis.units import SQFT_PER_ACRE
from esc_gis.validate import REPAIRED_COLUMN, ROW_COLUMN

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyproj import CRS

    from esc_gis.screening.read import ReadRun

#: The screening contract's columns, in output order (DESIGN.md); the geometry follows.
CONTRACT_COLUMNS = (
    "site_id",
    "plan_id",
    "jurisdiction",
    "disturbed_sqft",
    "disturbed_acres",
    "disturbed_in_jurisdiction_sqft",
    "plan_disturbed_sqft",
    "applicability",
    "permit",
    "permit_may_be_required",
    "standards",
    "sediment_standard",
    "steep_disturbed_sqft",
    "protective_disturbed_sqft",
    "nearest_water_ft",
    "findings",
)
#: Further columns esc_gis adds after the contract's.
EXTRA_COLUMNS = (
    "activity",
    "state_agency",
    "npdes_exempt",
    "steep_share",
    "steep_uncovered_sqft",
    "in_water_sqft",
    "nearest_water",
    "protective_waters",
    "targeted_areas",
)
#: Old column names still written, after :data:`EXTRA_COLUMNS`, with the same values as the
#: column they name, for one release (deprecated): ``disturbed_in_village_sqft`` said "village"
#: under every profile, a Town's too. Removing them later moves no other column.
DEPRECATED_COLUMNS = {"disturbed_in_village_sqft": "disturbed_in_jurisdiction_sqft"}

#: Columns added only when the run has what they need: ``bare_soil_loss_tpa`` (after
#: :data:`EXTRA_COLUMNS`) when the layer set has soils and a DEM (:mod:`esc_gis.soil.potential`);
#: ``disturbed_limits`` when disturbed limits were given: each site's measured limits (the union
#: of its polygons) as EWKT, ``SRID=<epsg>;<WKT>``, null for a site with none (measured on its
#: whole site: nothing was drawn, so nothing is written, never the site nor an empty polygon).
#: A text column rather than a second layer: it rides in every format a screening is written to
#: (GeoPackage, GeoParquet, GeoJSON, CSV), whole-file or streamed, needs no file beside it that
#: could go astray, and keeps its own CRS where a GeoJSON's geometry is reprojected to
#: longitude/latitude. ``esc-gis permits add/import`` read it back (issue 34).
OPTIONAL_COLUMNS = ("bare_soil_loss_tpa", "disturbed_limits")


#: Key of the result's ``attrs`` holding the run's own findings (see :func:`run_findings`).
RUN_FINDINGS = "run_findings"


def run_findings(result: pd.DataFrame) -> list[dict[str, str]]:
    """Return the findings about a screening run as a whole, not about one site.

    Today these say which optional layers the layer set lacks, hence which checks were
    made for no site (``{code, section, basis, message, columns}``, ``columns`` naming the
    output columns left null). They are said once per run, never repeated on every row;
    :func:`esc_gis.io.write_run_findings` writes them beside the output.

    Parameters
    ----------
    result : pandas.DataFrame
        What :func:`~esc_gis.screening.screen` returned (they travel in ``result.attrs``).

    Returns
    -------
    list of dict
        Empty when every layer was there, or for a frame not made by :func:`~esc_gis.screening.screen`.
    """
    return list(result.attrs.get(RUN_FINDINGS, []))


@dataclass
class ScreeningRun:
    """A screening's result, and what of the sites layer it left out and why.

    Attributes
    ----------
    result : geopandas.GeoDataFrame
        One row per screened site (see :func:`~esc_gis.screening.screen`).
    skipped : geopandas.GeoDataFrame
        Every feature of the sites layer skipped as not a site (empty when none), in the
        layer's own CRS: ``feature`` (1-based feature number in the file), ``skip_reason``,
        then the feature's own fields.
    rule : str or None
        The skip rule in force, in words (None when nothing is skipped by rule).
    generated_ids : list of str
        The ``row:<n>`` ids given to sites without an id.
    schema : str or None
        The parcel schema recognised (``"v10"``), if any.
    not_selected : int
        Features of the sites file the ``where`` clause left out (0 without one).
    id_field : str
        The id field used.
    run_findings : list of dict
        The findings about the run as a whole (checks made for no site: an optional layer
        the layer set lacks), ``{code, section, basis, message, columns}``. Returned here,
        where no DataFrame operation can drop them (``result.attrs`` holds a copy).
    """

    result: gpd.GeoDataFrame
    skipped: gpd.GeoDataFrame
    rule: str | None
    generated_ids: list[str]
    schema: str | None
    not_selected: int
    id_field: str
    run_findings: list[dict[str, str]] = field(default_factory=list)


def measure_run(
    read: ReadRun, layers: LayerSet, profile: Profile, *, progress: Callable[[str, float], None] | None = None
) -> ScreeningRun:
    """Measure and decide the sites of ``read`` (:func:`~esc_gis.screening.read.read_run`) under ``profile``.

    Measured against ``layers`` (:func:`esc_gis.screening.measure.measure`), decided by
    :func:`esc_gis.rules.decide`, with the result table's optional columns added.

    Returns
    -------
    ScreeningRun

    Raises
    ------
    LayerSetError, CRSError, ProfileError
        As :func:`~esc_gis.screening.screen`.
    """
    report = progress or (lambda stage, frac: None)
    ls, prof, inp = layers, profile, read
    crs: CRS = ls.crs
    gdf = inp.sites
    measured = measure(inp, ls, prof, progress=report)
    m = measured.measurements
    report("applying the ordinance", 0.85)
    d = decide(m, prof)
    optional: dict[str, np.ndarray] = {}
    if ls.soils is not None and ls.dem is not None:
        report("estimating bare-soil soil loss", 0.9)
        optional["bare_soil_loss_tpa"] = _bare_soil_loss(ls, prof, measured.inside, d)
    if inp.disturbed is not None:
        optional["disturbed_limits"] = limits_text(measured.limits, crs)
    result = gpd.GeoDataFrame(_report(gdf, m, d, optional), geometry=gdf.geometry.to_numpy(), crs=crs)
    result.attrs[RUN_FINDINGS] = d.run_findings
    report("done", 1.0)
    return ScreeningRun(
        result,
        inp.skipped,
        inp.rule,
        inp.generated,
        inp.schema,
        inp.not_selected,
        inp.id_field,
        list(d.run_findings),
    )


def limits_text(geoms: np.ndarray, crs: CRS) -> np.ndarray:
    """Return each geometry as EWKT (``SRID=<epsg>;<WKT>``, full precision); None for an empty one.

    The form of :data:`OPTIONAL_COLUMNS`' ``disturbed_limits``, read back by
    :func:`esc_gis.registry.service.imports.screened_limits`.
    """
    epsg = crs.to_epsg()
    prefix = f"SRID={epsg};" if epsg else ""
    wkt = shapely.to_wkt(geoms, rounding_precision=-1)
    empty = shapely.is_empty(geoms) | shapely.is_missing(geoms)
    return np.array([None if e else prefix + w for w, e in zip(wkt, empty, strict=True)], dtype=object)


def _bare_soil_loss(ls: LayerSet, prof: Profile, inside: np.ndarray, d: Any) -> np.ndarray:
    """Estimate each site's bare-soil soil loss (its disturbance ``inside`` the Village) and add its findings.

    Not a rule of the ordinance but a measurement with its caveat, so its finding is added here
    (appended to each site's findings) rather than by :func:`esc_gis.rules.decide`; a profile
    without R gets the run finding that the column is null, once.
    """
    from esc_gis.soil.potential import bare_soil_loss

    assert ls.soils is not None and ls.dem is not None  # checked by the caller
    est = bare_soil_loss(inside, ls.crs, ls.dem, ls.soils, profile=prof, k_field=ls.soils_k_field)
    if est.r_annual is None:
        d.run_findings.append(
            {**prof.finding("screening_bare_soil_loss_no_r").to_dict(), "columns": "bare_soil_loss_tpa"}
        )
        return est.tpa
    ok = np.isfinite(est.tpa)
    if ok.any():
        t = prof.template("screening_bare_soil_loss")
        values = {
            **prof.names(),
            "r_annual": est.r_annual.value,
            "r_status": est.r_annual.status.replace("_", " "),
        }
        head = t.json_head()
        for i in np.flatnonzero(ok).tolist():
            msg = t.render(
                {
                    **values,
                    "bare_soil_loss_tpa": est.tpa[i],
                    "k": est.k[i],
                    "k_covered_pct": 100 * est.k_covered_share[i],
                    "ls": est.ls[i],
                    "outside_pct": 100 * est.outside_share[i],
                }
            ).message
            item = head + json.dumps(msg, ensure_ascii=False) + "}"
            f = d.findings[i]
            d.findings[i] = f[:-1] + (", " if f != "[]" else "") + item + "]"
    return est.tpa


def _report(
    gdf: gpd.GeoDataFrame, m: Measurements, d: Any, optional: dict[str, np.ndarray] | None = None
) -> pd.DataFrame:
    """Build the output table: the contract's columns, ours, the deprecated names, the optional ones, the user's."""
    inside = m.disturbed_in_jurisdiction_sqft
    cols: dict[str, Any] = {
        "site_id": gdf["site_id"].to_numpy(dtype=object),
        "plan_id": m.plan_id,
        "jurisdiction": m.jurisdiction,
        "disturbed_sqft": m.disturbed_sqft,
        "disturbed_acres": m.disturbed_sqft / SQFT_PER_ACRE,
        "disturbed_in_jurisdiction_sqft": inside,
        "plan_disturbed_sqft": d.decision_sqft,
        "applicability": d.applicability,
        "permit": d.permit,
        "permit_may_be_required": d.permit_may_be_required,
        "standards": d.standards,
        "sediment_standard": d.sediment_standard,
        "steep_disturbed_sqft": m.steep_disturbed_sqft,
        "protective_disturbed_sqft": m.protective_disturbed_sqft,
        "nearest_water_ft": m.nearest_water_ft,
        "findings": d.findings,
        "activity": m.activity,
        "state_agency": m.state_agency,
        "npdes_exempt": m.npdes_exempt,
        "steep_share": np.where(inside > 0, m.steep_disturbed_sqft / np.where(inside > 0, inside, 1), np.nan),
        "steep_uncovered_sqft": m.steep_uncovered_sqft,
        "in_water_sqft": m.in_water_sqft,
        "nearest_water": m.nearest_water,
        "protective_waters": m.protective_waters,
        "targeted_areas": m.targeted_areas,
    }
    # The old names, the same values, for one release: after ours, so dropping them moves nothing.
    cols.update({old: cols[new] for old, new in DEPRECATED_COLUMNS.items()})
    out = pd.DataFrame({**cols, **(optional or {})})
    # Keep the user's own fields (addresses, parcel numbers, a field named row) after ours;
    # the sites table's own columns never leave.
    internal = {ROW_COLUMN, REPAIRED_COLUMN, gdf.geometry.name}
    for c in [c for c in gdf.columns if c not in out.columns and c not in internal]:
        out[c] = gdf[c].to_numpy()
    return out
