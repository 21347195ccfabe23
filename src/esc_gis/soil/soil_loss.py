"""Soil loss and sediment discharge per site and per construction phase (the WDNR method, in GIS).

For each site (its disturbed area) and each phase of the schedule, cut at the 12-month windows:

- R for the period = annual R x the period's share of the year's erosivity, summed over the
  days of the period as the EPA Low Erosivity Waiver calculator does
  (:func:`~esc_gis.soil.rusle.prorated_r`; domain-reference § 3.5);
- K area-weighted over the disturbed area (:mod:`esc_gis.soil.k`) or one value;
- LS the mean of the per-cell RUSLE LS over the disturbed surface inside the method
  (:func:`~esc_gis.soil.ls.ls_grid` on the DEM window around the site); the representative
  worst-case slope is reported beside it;
- C of the phase's cover, from the profile's ``[soil_loss.cover]`` table;
- soil loss A = R_period x K x LS x C (t/ac over the inside-method area; P = 1, as in Wisconsin
  practice, domain-reference § 3.2);
- sediment discharge = A x (1 - efficiency) of the phase's practices (``[soil_loss.practice]``;
  several practices in one phase combine by the profile's ``practice_combination``, "max":
  only the most efficient counts);
- summed per window; the governing window is the one with the largest discharge, and the site
  passes when it is no more than the profile's standard (``[thresholds.sediment_load]``,
  "no more than": equal passes).

Area steeper than the method's limit (``max_slope_pct``, 33 % in the WDNR tool), or past the
slope-length cap (``max_slope_length_ft``: likely concentrated flow), gets no number: its share is
reported with a finding that prescriptive practices are required there. Every
input not confirmed by a source (a user-given R, the erosivity file, a secondary C, an estimated
efficiency) is listed in one finding, so no estimate passes for a source value.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import rasterio
import rasterio.features
from numpy.typing import ArrayLike, NDArray
from pyproj import CRS
from rasterio.windows import Window as RasterWindow

from esc_gis.crs import reproject
from esc_gis.errors import LayerReadError, Problem, ValidationError
from esc_gis.findings import Finding, findings_json
from esc_gis.measure import area_sqft
from esc_gis.measure.area import union_by_group
from esc_gis.profile import Profile
from esc_gis.rules import NOT_APPLICABLE_FINDING, screening_reasons
from esc_gis.soil.judge import Judgement, judge, no_plan_total_problems
from esc_gis.soil.k import check_k, k_by_site
from esc_gis.soil.ls import LsGrid, ls_grid
from esc_gis.soil.raster import SiteCells, check_raster_paths, write_soil_loss_raster
from esc_gis.soil.rusle import prorated_r
from esc_gis.soil.schedule import Phase, Window, windows
from esc_gis.soil.tables import SoilLossTables, _number, soil_loss_tables
from esc_gis.soil.tables import TableValue as TableValue  # re-exported (soil.potential imports it here)
from esc_gis.terrain.dem import DemInfo, open_dem
from esc_gis.terrain.slope import check_creation_options
from esc_gis.units import sqft_to_acres

__all__ = [
    "SoilLossResult",
    "SoilLossTables",
    "read_ei_distribution",
    "site_ls",
    "site_ls_windows",
    "soil_loss",
    "soil_loss_tables",
]

_FT_M = 0.3048


def read_ei_distribution(path: str | os.PathLike[str]) -> NDArray[np.float64]:
    """Read an erosivity distribution as 365 daily values.

    The file is a CSV whose last column holds numbers, one row per period, with or without a
    header: 365 rows are daily EI (the RUSLE2 ``EI_DAILY_AMOUNT`` record), 24 rows half-month
    shares (days 1-15 and 16 to the month's end), 12 rows monthly shares. Half-month and
    monthly shares are spread evenly over their days (a 365-day year, as the LEW method counts)
    and laid out as LEW reads a record (1 January at element 1); 365 values are taken as the
    RUSLE2 record itself, read with LEW's indexing.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    numpy.ndarray of float64, shape (365,)

    Raises
    ------
    LayerReadError
        If the file cannot be read.
    ValidationError
        If it does not hold 365, 24 or 12 numbers of 0 or more with a positive sum.
    """
    from esc_gis._vsi import read_text

    name = os.fspath(path)  # a path inside an archive (a plan package sent zipped) as written
    try:
        text = read_text(name, encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"{name}: cannot read the erosivity distribution ({exc})."
        raise LayerReadError(msg) from None
    values: list[float] = []
    problems: list[Problem] = []
    for i, row in enumerate(csv.reader(text.splitlines()), start=1):
        if not row or not "".join(row).strip():
            continue
        try:
            values.append(float(row[-1]))
        except ValueError:
            if i == 1:  # a header
                continue
            problems.append(Problem(name, i, f"{row[-1]!r} is not a number.", "put the EI value in the last column."))
    arr = np.asarray(values, dtype=np.float64)
    if not problems and arr.size not in (365, 24, 12):
        problems.append(
            Problem(
                name,
                None,
                f"{arr.size} values: expected 365 daily, 24 half-month or 12 monthly.",
                "give the RUSLE2 EI_DAILY_AMOUNT record (365 values) or half-month/monthly shares.",
            )
        )
    if not problems and (not np.all(np.isfinite(arr)) or (arr < 0).any() or not arr.sum() > 0):
        problems.append(Problem(name, None, "values must be 0 or more with a positive sum.", "correct the values."))
    if problems:
        raise ValidationError(problems)
    if arr.size == 365:
        return arr
    month_days = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    if arr.size == 12:
        daily = np.repeat(arr / month_days, month_days)
    else:
        halves = np.ravel(np.column_stack([np.full(12, 15), month_days - 15]))
        daily = np.repeat(arr / halves, halves)
    # Laid out as the LEW method reads its record (1 January at element 1, 31 December at 0),
    # so prorated_r's default indexing puts each day's share on its own day.
    return np.roll(daily, 1)


def _window_bounds(info: DemInfo, geom: Any) -> RasterWindow | None:
    left, bottom, right, top = geom.bounds
    t = info.transform
    c0, c1 = sorted(((left - t.c) / t.a, (right - t.c) / t.a))
    r0, r1 = sorted(((top - t.f) / t.e, (bottom - t.f) / t.e))
    # Two cells of margin so the slope at the edge of the disturbed area sees real neighbours.
    col0, row0 = max(0, int(np.floor(c0)) - 2), max(0, int(np.floor(r0)) - 2)
    col1, row1 = min(info.width, int(np.ceil(c1)) + 2), min(info.height, int(np.ceil(r1)) + 2)
    if col1 - col0 < 2 or row1 - row0 < 2:
        return None
    return RasterWindow(col0, row0, col1 - col0, row1 - row0)


def site_ls(
    geoms: NDArray[np.object_],
    crs: CRS,
    dem: DemInfo,
    *,
    max_slope_pct: float,
    max_slope_length_ft: float,
    rill_interrill_ratio: float | str = "moderate",
) -> list[LsGrid | None]:
    """LS grid of each site's disturbed area, from the DEM window around it.

    As :func:`site_ls_windows`, without the windows.

    Raises
    ------
    ValidationError
        If the DEM is geographic or its cells are not square.
    """
    return [
        g
        for g, _ in site_ls_windows(
            geoms,
            crs,
            dem,
            max_slope_pct=max_slope_pct,
            max_slope_length_ft=max_slope_length_ft,
            rill_interrill_ratio=rill_interrill_ratio,
        )
    ]


def site_ls_windows(
    geoms: NDArray[np.object_],
    crs: CRS,
    dem: DemInfo,
    *,
    max_slope_pct: float,
    max_slope_length_ft: float,
    rill_interrill_ratio: float | str = "moderate",
) -> list[tuple[LsGrid | None, RasterWindow | None]]:
    """LS grid of each site's disturbed area, from the DEM window around it, and that window.

    Parameters
    ----------
    geoms : numpy.ndarray of shapely.Geometry
        Disturbed areas in ``crs``.
    crs : pyproj.CRS
    dem : DemInfo
        A projected DEM with square cells (:func:`esc_gis.terrain.open_dem`).
    max_slope_pct, max_slope_length_ft : float
        The method's slope limit and the slope-length cap (the profile's).
    rill_interrill_ratio : str or float, default "moderate"

    Returns
    -------
    list of (LsGrid or None, rasterio.windows.Window or None)
        The grid and its window on the DEM; None for a site off the DEM or too small to hold
        a cell.

    Raises
    ------
    ValidationError
        If the DEM is geographic or its cells are not square (LS needs a cell size in feet).
    """
    dx, dy = dem.cell_size
    if dem.geographic or not np.isclose(dx, dy, rtol=1e-6):
        problem = Problem(
            dem.path,
            None,
            "LS needs a projected DEM with square cells"
            + (" (this one is geographic)." if dem.geographic else f" (cells are {dx:g} x {dy:g})."),
            "warp it to the profile's measuring CRS with square cells (gdalwarp -t_srs ... -tr X X).",
        )
        raise ValidationError([problem])
    cell_ft = dx * dem.xy_unit_m / _FT_M
    z_to_ft = dem.z_unit_m / _FT_M
    in_dem = reproject(np.asarray(geoms, dtype=object), crs, dem.crs)
    out: list[tuple[LsGrid | None, RasterWindow | None]] = []
    with dem.open() as src:
        # One read per site (a loop per site, never per cell): sites are far apart on a county DEM.
        for geom in in_dem:
            win = None if geom is None or geom.is_empty else _window_bounds(dem, geom)
            if win is None:
                out.append((None, None))
                continue
            z = src.read(dem.band, window=win, masked=True).astype(np.float64).filled(np.nan)
            transform = rasterio.windows.transform(win, dem.transform)
            inside = rasterio.features.geometry_mask([geom], z.shape, transform, invert=True)
            if not inside.any() or np.isnan(z[inside]).all():
                out.append((None, None))
                continue
            grid = ls_grid(
                z,
                cell_ft,
                max_slope_pct=max_slope_pct,
                z_to_ft=z_to_ft,
                disturbed=inside,
                max_slope_length_ft=max_slope_length_ft,
                rill_interrill_ratio=rill_interrill_ratio,
            )
            out.append((grid, win))
    return out


@dataclass(frozen=True)
class SoilLossResult:
    """Soil loss per site, per phase piece and per window.

    Attributes
    ----------
    sites : geopandas.GeoDataFrame
        One row per site: id, disturbed area, K, LS (mean and representative), share outside
        the method, the governing window's soil loss and discharge, ``passes`` and findings.
    phases : pandas.DataFrame
        One row per site, phase and window piece: dates, R of the period, K, LS, C, efficiency,
        soil loss and sediment discharge (t/ac).
    windows : pandas.DataFrame
        One row per site and window: soil loss and discharge (t/ac), and whether it governs.
    raster : pathlib.Path or None
        The per-cell raster written (``raster=``), or None.
    """

    sites: gpd.GeoDataFrame
    phases: pd.DataFrame
    windows: pd.DataFrame
    raster: Path | None = None


def _efficiency(phase: Phase, tables: SoilLossTables) -> float:
    effs = [tables.practices[p].value for p in phase.practices]
    if not effs:
        return 0.0
    if tables.practice_combination == "series":
        return 1.0 - float(np.prod([1.0 - e for e in effs]))
    return max(effs)


def _pieces(phases: Sequence[Phase], wins: Sequence[Window]) -> list[tuple[int, Phase, dt.date, dt.date]]:
    """Each phase cut at the window boundaries: (window number, phase, start, end)."""
    out = []
    for w_i, w in enumerate(wins):
        for p in phases:
            s, e = max(p.start, w.start), min(p.end, w.end)
            if s <= e:
                out.append((w_i, p, s, e))
    return out


def _check_inputs(
    sites: gpd.GeoDataFrame,
    tables: SoilLossTables,
    *,
    r_annual: float | None,
    r_source: str,
    soils: gpd.GeoDataFrame | None,
    k: float | None,
    id_field: str | None,
    plan_field: str | None = None,
    plan_disturbed_sqft: float | Mapping[str, float] | None = None,
) -> tuple[float, str]:
    """Check R, K, the sites and the common plan's totals together; return R and where it came from."""
    problems: list[Problem] = []
    r_value = r_annual if r_annual is not None else (tables.r_annual.value if tables.r_annual else None)
    if r_annual is None and tables.r_annual is not None:
        r_source = f"profile ({tables.r_annual.status}): {tables.r_annual.source}"
    if r_value is None or not (np.isfinite(r_value) and r_value > 0):
        problems.append(
            Problem(
                "R",
                None,
                f"no usable annual R ({r_value!r}); the profile holds none (not confirmed for the jurisdiction).",
                "pass the annual R factor (US units) with r_annual=, from the WDNR sheet's county table or RUSLE2.",
            )
        )
    if (soils is None) == (k is None):
        problems.append(
            Problem(
                "K",
                None,
                "give either a soils layer or one K, not both or neither.",
                "use soils= or k=, or a layer set's [soils] as the soils layer.",
            )
        )
    if sites.crs is None:
        problems.append(Problem("sites", None, "the sites have no CRS.", "define it (e.g. in QGIS, Set Layer CRS)."))
    if id_field is not None and id_field not in sites.columns:
        problems.append(Problem("sites", None, f"no field {id_field!r}.", "name an existing id field."))
    if plan_field is not None and plan_field not in sites.columns:
        problems.append(Problem("sites", None, f"no field {plan_field!r}.", "name the field holding the plan id."))
    totals = (
        list(plan_disturbed_sqft.items())
        if isinstance(plan_disturbed_sqft, Mapping)
        else ([("plan", plan_disturbed_sqft)] if plan_disturbed_sqft is not None else [])
    )
    for name, v in totals:
        if _number(v) is None or not (np.isfinite(float(v)) and float(v) >= 0):
            problems.append(
                Problem(
                    "plan_disturbed_sqft",
                    None,
                    f"{v!r} for {name} is not an area of 0 sq ft or more.",
                    "give the common plan's disturbed total in square feet.",
                )
            )
    if k is not None:
        try:
            check_k(k, tables.k_max)
        except ValidationError as exc:
            problems += exc.problems
    if problems:
        raise ValidationError(problems)
    assert r_value is not None
    return float(r_value), r_source


def _unconfirmed(
    tables: SoilLossTables, schedule: Sequence[Phase], r_value: float, r_source: str, ei_source: str, *, profile_r: bool
) -> list[str]:
    """Every input used that no source confirms: R, the distribution, secondary C, estimated efficiencies."""
    r_annual = None if profile_r else r_value
    unconfirmed = [f"R annual {r_value:g} ({r_source})", f"erosivity distribution ({ei_source})"]
    if r_annual is None and tables.r_annual is not None and tables.r_annual.status == "confirmed":
        unconfirmed = unconfirmed[1:]
    used_covers = sorted({p.cover for p in schedule})
    used_practices = sorted({pr for p in schedule for pr in p.practices})
    unconfirmed += [
        f"C {tables.covers[c].value:g} for {c} ({tables.covers[c].status})"
        for c in used_covers
        if tables.covers[c].status != "confirmed"
    ]
    unconfirmed += [
        f"efficiency {tables.practices[p].value:g} for {p} ({tables.practices[p].status})"
        for p in used_practices
        if tables.practices[p].status != "confirmed"
    ]

    return unconfirmed


# --- The stages of soil_loss() ------------------------------------------------------------------
#
# soil_loss() reads as its stages: the sites in the measuring CRS and their common plans ->
# K -> LS on the DEM -> R x C (x practices) summed per window -> the governing window against
# the standard, where the standard reaches -> findings -> the tables -> the raster.


@dataclass(frozen=True)
class _Sites:
    """The sites in the measuring CRS: ids, disturbed areas, and the area the acre test is decided on."""

    geoms: NDArray[np.object_]
    ids: NDArray[np.str_]
    disturbed_sqft: NDArray[np.float64]
    plan_id: NDArray[np.object_]  # None without a plan
    plan_sqft: NDArray[np.float64]  # the construction site's disturbance: the whole common plan's


@dataclass(frozen=True)
class _Screened:
    """The screening's answer for each site (:func:`esc_gis.screening.screen`), taken, never re-decided."""

    applicability: NDArray[np.object_]
    permit: NDArray[np.object_]
    sediment_standard: NDArray[np.bool_]
    plan_sqft: NDArray[np.float64]  # the area the screening decided on (the whole common plan's)
    reason: list[Finding | None]  # why the article does not apply, in the screening's words


@dataclass(frozen=True)
class _Ls:
    """LS of each site on the DEM, with the windows it was read from."""

    grids_windows: list[tuple[LsGrid | None, RasterWindow | None]]
    mean: NDArray[np.float64]
    outside_share: NDArray[np.float64]
    dem_covered: NDArray[np.float64]

    @property
    def grids(self) -> list[LsGrid | None]:
        return [g for g, _ in self.grids_windows]

    def rep(self, attr: str) -> NDArray[np.float64]:
        """Return one representative-slope attribute per site (NaN without a grid)."""
        return np.array([getattr(g, attr) if g is not None else np.nan for g in self.grids])


@dataclass(frozen=True)
class _WindowSums:
    """Soil loss and discharge per site and window, the phase pieces' rows, and the R x C sums for the raster."""

    wins: list[Window]
    loss: NDArray[np.float64]  # (sites, windows)
    discharge: NDArray[np.float64]
    rc: NDArray[np.float64]  # per window: sum of R_period x C
    rce: NDArray[np.float64]  # per window: sum of R_period x C x (1 - efficiency)
    phase_rows: list[dict[str, Any]]


def _plan_totals(
    sites: gpd.GeoDataFrame, plan_field: str | None, plan_disturbed_sqft: float | Mapping[str, float] | None
) -> tuple[NDArray[np.object_], NDArray[np.float64], NDArray[np.float64]]:
    """Each site's common plan id, its plan's total from outside the layer (NaN if none), and the field as read.

    The outside total is, per site, the largest of: the sites layer's own ``plan_disturbed_sqft``
    (a screening output carries it) where the site names a plan, one total given for every site,
    the total given for the site's plan id (the registry's). The field's value is returned as read
    too, for every row: one that names no plan is checked against its own area
    (:func:`esc_gis.soil.judge.no_plan_total_problems`), never counted.
    """
    n = len(sites)
    field_name = plan_field or ("plan_id" if "plan_id" in sites.columns else None)
    if field_name is None:
        plan_ids = np.full(n, None, dtype=object)
    else:
        # pandas may hold missing text as NaN or None, and a blank is no plan either.
        text = [str(v).strip() if pd.notna(v) else "" for v in sites[field_name].to_numpy(dtype=object)]
        plan_ids = np.array([t or None for t in text], dtype=object)
    given = np.full(n, np.nan)
    field = np.full(n, np.nan)
    if "plan_disturbed_sqft" in sites.columns:
        field = pd.to_numeric(sites["plan_disturbed_sqft"], errors="coerce").to_numpy(dtype=float)
        # A plan's total, so only for a site of a plan (§ 540-5 CONSTRUCTION SITE): a site that names
        # none is decided on its own disturbance, whatever the field says.
        given = np.fmax(given, np.where(pd.notna(plan_ids), field, np.nan))
    if isinstance(plan_disturbed_sqft, Mapping):
        by_plan = np.array([plan_disturbed_sqft.get(p, np.nan) if p is not None else np.nan for p in plan_ids])
        given = np.fmax(given, by_plan.astype(float))
    elif plan_disturbed_sqft is not None:
        given = np.fmax(given, float(plan_disturbed_sqft))
    return plan_ids, given, field


def _screened(screening: pd.DataFrame, ids: NDArray[np.str_], profile: Profile) -> _Screened:
    """Take each site's applicability, permit and sediment standard from its screening row (by ``site_id``).

    Where the article does not apply, the reason is the screening's own finding (its section
    and words: § 540-4B, § 540-4C, § 540-4A(2)), quoted in ``soil_loss_article_not_applicable``.

    Raises
    ------
    ValidationError
        If the screening lacks its contract columns or a site (every missing site named).
    """
    need = ("site_id", "applicability", "permit", "sediment_standard", "plan_disturbed_sqft", "findings")
    missing = [c for c in need if c not in screening.columns]
    if missing:
        raise ValidationError(
            [Problem("screening", None, f"lacks the column(s) {', '.join(missing)}.", "pass what screen() returned.")]
        )
    by_id = screening.assign(site_id=screening["site_id"].astype(str)).drop_duplicates("site_id").set_index("site_id")
    absent = [str(i) for i in ids if str(i) not in by_id.index]
    if absent:
        raise ValidationError(
            [
                Problem("screening", None, f"has no row for site {i!r}.", "screen the same sites with the same ids.")
                for i in absent
            ]
        )
    rows = by_id.loc[[str(i) for i in ids]]
    appl = rows["applicability"].to_numpy(dtype=object)
    reasons: list[Finding | None] = []
    for a, fs in zip(appl, rows["findings"].to_numpy(dtype=object), strict=True):
        code = NOT_APPLICABLE_FINDING.get(str(a))
        if code is None:
            reasons.append(None)
            continue
        said = [f for f in json.loads(fs or "[]") if f.get("code") in screening_reasons(code)]
        reason = said[0]["message"] if said else str(a).replace("_", " ") + "."
        words = str(a).replace("_", " ")
        if said and said[0]["basis"] != "ordinance":
            words += "; a reading"
        f = profile.finding("soil_loss_article_not_applicable", applicability=words, reason=reason)
        # The section and basis are the screening's, which say which subsection leaves the site out and
        # whether that is the ordinance's words or a reading (the extraterritorial area, § 540-5).
        reasons.append(dataclasses.replace(f, section=said[0]["section"], basis=said[0]["basis"]) if said else f)
    return _Screened(
        appl,
        rows["permit"].to_numpy(dtype=object),
        rows["sediment_standard"].fillna(False).astype(bool).to_numpy(),
        pd.to_numeric(rows["plan_disturbed_sqft"], errors="coerce").to_numpy(dtype=float),
        reasons,
    )


def _sites(
    sites: gpd.GeoDataFrame,
    measure: CRS,
    id_field: str | None,
    plan_field: str | None,
    plan_disturbed_sqft: float | Mapping[str, float] | None,
    screening: pd.DataFrame | None = None,
    profile: Profile | None = None,
) -> tuple[_Sites, _Screened | None]:
    """Put the sites in the measuring CRS; add each common plan's disturbance up (§ 540-5 CONSTRUCTION SITE).

    Sites of the layer that share a plan id count as one disturbance (their union: overlaps
    once, as screening adds plans up); a total given from outside the layer (a field, a number,
    the registry's plan) counts when it is larger, as the plan holds lots this layer lacks.

    With a ``screening``, the area decided on is the screening's (its common plan, its reading of
    a site partly outside the jurisdiction), and only a total from outside the layer adds to it.

    Raises
    ------
    ValidationError
        If a site that names no plan has a ``plan_disturbed_sqft`` field larger than its own
        disturbance (every such row named, :func:`esc_gis.soil.judge.no_plan_total_problems`),
        or the screening lacks a site.
    """
    geoms = sites.to_crs(measure).geometry.to_numpy()
    n = len(geoms)
    ids = sites[id_field].astype(str).to_numpy() if id_field else np.array([str(i + 1) for i in range(n)])
    disturbed_sqft = area_sqft(geoms, measure)
    plan_ids, given, field = _plan_totals(sites, plan_field, plan_disturbed_sqft)
    plan_sqft = disturbed_sqft.copy()
    rows = np.flatnonzero(pd.notna(plan_ids))
    if rows.size:
        keys, unions, _ = union_by_group(geoms[rows], plan_ids[rows])
        k = pd.Index(keys).get_indexer(plan_ids[rows])
        plan_sqft[rows] = np.fmax(plan_sqft[rows], area_sqft(unions, measure)[k])
    scr = None
    if screening is not None:
        assert profile is not None
        scr = _screened(screening, ids, profile)
        plan_sqft = scr.plan_sqft
    if profile is not None:
        # A site's own disturbance: as measured here, or the screening's where it decided more
        # (limits drawn past the site line).
        own = np.fmax(disturbed_sqft, scr.plan_sqft) if scr is not None else disturbed_sqft
        problems = no_plan_total_problems(field, ids, plan_ids, own, profile, what="plan_disturbed_sqft", per_row=True)
        if problems:
            raise ValidationError(problems)
    plan_sqft = np.fmax(plan_sqft, given)
    return _Sites(geoms, ids, disturbed_sqft, plan_ids, plan_sqft), scr


def _site_k(
    s: _Sites,
    measure: CRS,
    tables: SoilLossTables,
    *,
    soils: gpd.GeoDataFrame | None,
    k: float | None,
    k_field: str | None,
    soils_source: str,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """K of each site (area-weighted over its disturbed area, or the one K given) and the share the soils cover."""
    n = len(s.geoms)
    if soils is None:
        return np.full(n, float(k)), np.ones(n)  # type: ignore[arg-type]
    if soils.crs is None:
        raise ValidationError(
            [Problem(soils_source, None, "the soils layer has no CRS.", "define it (Set Layer CRS).")]
        )
    site_k = k_by_site(
        s.geoms, soils.to_crs(measure), k_field=k_field or tables.k_field, k_max=tables.k_max, source=soils_source
    )
    return site_k.k, site_k.covered_share


def _site_ls_stage(
    s: _Sites, measure: CRS, info: DemInfo, tables: SoilLossTables, rill_interrill_ratio: float | str
) -> _Ls:
    """LS of each site on the DEM, and the share of its disturbed area the DEM covers."""
    grids_windows = site_ls_windows(
        s.geoms,
        measure,
        info,
        max_slope_pct=tables.max_slope_pct,
        max_slope_length_ft=tables.max_slope_length_ft,
        rill_interrill_ratio=rill_interrill_ratio,
    )
    grids = [g for g, _ in grids_windows]
    nan = float("nan")
    # Cells of the DEM inside the disturbed area over its measured area: below 1 where the site
    # runs off the DEM or onto nodata (approximate: cells are counted by centre); none without a
    # disturbed area.
    dem_covered = np.array(
        [
            (min(g.surface_area_sqft / a, 1.0) if g is not None else 0.0) if a > 0 else nan
            for g, a in zip(grids, s.disturbed_sqft, strict=True)
        ]
    )
    return _Ls(
        grids_windows,
        np.array([g.mean_ls if g is not None else nan for g in grids]),
        np.array([g.outside_share if g is not None else nan for g in grids]),
        dem_covered,
    )


def _window_sums(
    schedule: Sequence[Phase],
    tables: SoilLossTables,
    r_value: float,
    ei: NDArray[np.float64],
    ids: NDArray[np.str_],
    k_arr: NDArray[np.float64],
    ls_mean: NDArray[np.float64],
) -> _WindowSums:
    """Sum A = R_period x K x LS x C per phase piece, and the discharge A x (1 - efficiency), per window."""
    n = len(ids)
    wins = windows(schedule, tables.window_months)
    n_win = len(wins)
    win_loss = np.zeros((n, n_win))
    win_dis = np.zeros((n, n_win))
    # Sum of R_period x C (x (1 - efficiency)) per window: times K and LS, a cell's t/ac.
    win_rc = np.zeros(n_win)
    win_rce = np.zeros(n_win)
    phase_rows: list[dict[str, Any]] = []
    for w_i, phase, s, e in _pieces(schedule, wins):
        r_period = prorated_r(r_value, ei, s, e)
        c = tables.covers[phase.cover].value
        eff = _efficiency(phase, tables)
        win_rc[w_i] += r_period * c
        win_rce[w_i] += r_period * c * (1.0 - eff)
        loss = r_period * k_arr * ls_mean * c  # vectorised over sites
        dis = loss * (1.0 - eff)
        win_loss[:, w_i] += loss
        win_dis[:, w_i] += dis
        for i in range(n):
            phase_rows.append(
                {
                    "site_id": ids[i],
                    "phase": phase.name,
                    "window": w_i + 1,
                    "start": s.isoformat(),
                    "end": e.isoformat(),
                    "cover": phase.cover,
                    "practices": ";".join(phase.practices),
                    "r_period": r_period,
                    "k": k_arr[i],
                    "ls": ls_mean[i],
                    "c": c,
                    "efficiency": eff,
                    "soil_loss_tpa": loss[i],
                    "discharge_tpa": dis[i],
                }
            )
    return _WindowSums(wins, win_loss, win_dis, win_rc, win_rce, phase_rows)


def _window_table(sums: _WindowSums, ids: NDArray[np.str_], j: Judgement) -> pd.DataFrame:
    """One row per site and window: its soil loss and discharge, and whether it governs."""
    return pd.DataFrame(
        [
            {
                "site_id": ids[i],
                "window": w_i + 1,
                "start": w.start.isoformat(),
                "end": w.end.isoformat(),
                "soil_loss_tpa": sums.loss[i, w_i],
                "discharge_tpa": sums.discharge[i, w_i],
                "governs": bool(j.computed[i] and j.governing[i] == w_i),
            }
            for i in range(len(ids))
            for w_i, w in enumerate(sums.wins)
        ]
    )


def _not_computed_reason(s: _Sites, ls: _Ls, j: Judgement, i: int) -> str | None:
    """Say why site ``i`` has no number, or None when it has one."""
    if not s.disturbed_sqft[i] > 0:
        return "the site has no disturbed area (no part of the disturbed layer lies in it)"
    if ls.grids[i] is None:
        return "the disturbed area is off the DEM or smaller than a cell"
    if not j.computed[i]:
        return "no DEM cell of the disturbed area is inside the method"
    return None


def _site_findings(
    profile: Profile,
    tables: SoilLossTables,
    s: _Sites,
    ls: _Ls,
    wins: Sequence[Window],
    j: Judgement,
    unconfirmed: list[str],
    scr: _Screened | None = None,
) -> list[str]:
    """Return the findings JSON of each site, worded by the profile.

    Where the sediment standard does not reach a site (under the profile's sediment area,
    counting its common plan), the site is not judged against it: the finding says the
    standard does not apply, and its numbers, if any, are given for information. Where the
    screening says the article does not apply, its reason is the finding; without a screening,
    a finding says the article's reach was not screened.
    """
    n_win = len(wins)
    # Cells are counted by centre, so a site wholly on the DEM can read a little under 1.
    gap_pct = float(profile.entry("policy.soil_loss_dem_gap").value or 0)
    findings_col: list[str] = []
    for i in range(len(s.ids)):
        fs: list[Finding] = []
        plan = {"plan_sqft": s.plan_sqft[i], "plan_acres": float(sqft_to_acres(s.plan_sqft[i]))}
        reason = _not_computed_reason(s, ls, j, i)
        if reason is not None:
            fs.append(profile.finding("soil_loss_not_computed", reason=reason))
        outside = scr.reason[i] if scr is not None else None
        if outside is not None:
            fs.append(outside)
        elif not j.reaches[i]:
            fs.append(profile.finding("soil_loss_standard_not_applicable", **plan))
        if reason is None:
            w = wins[int(j.governing[i])]
            code = (
                "soil_loss_for_information"
                if not j.reaches[i]
                else ("soil_loss_meets" if j.passes[i] else "soil_loss_exceeds")
            )
            fs.append(
                profile.finding(
                    code,
                    discharge_tpa=j.discharge_tpa[i],
                    soil_loss_tpa=j.soil_loss_tpa[i],
                    window_start=w.start.isoformat(),
                    window_end=w.end.isoformat(),
                    windows=n_win,
                )
            )
        outside = ls.outside_share[i]
        if np.isfinite(outside) and outside > 0:
            fs.append(
                profile.finding(
                    "soil_loss_outside_method",
                    outside_sqft=outside * s.disturbed_sqft[i],
                    outside_pct=100.0 * outside,
                    max_slope_pct=tables.max_slope_pct,
                    max_slope_length_ft=tables.max_slope_length_ft,
                )
            )
        covered = ls.dem_covered[i]
        if j.computed[i] and np.isfinite(covered) and 100.0 * (1.0 - covered) > gap_pct:
            # The numbers rest on the part of the site the DEM covers: say how much is missing.
            fs.append(
                profile.finding(
                    "soil_loss_dem_partial",
                    missing_sqft=(1.0 - covered) * s.disturbed_sqft[i],
                    missing_pct=100.0 * (1.0 - covered),
                )
            )
        fs.append(profile.finding("soil_loss_not_confirmed", values="; ".join(unconfirmed)))
        if scr is None:
            fs.append(profile.finding("soil_loss_applicability_not_screened"))
        findings_col.append(findings_json(fs))
    return findings_col


def _site_table(
    s: _Sites,
    measure: CRS,
    tables: SoilLossTables,
    k_arr: NDArray[np.float64],
    k_cover: NDArray[np.float64],
    ls: _Ls,
    n_win: int,
    j: Judgement,
    findings_col: list[str],
    scr: _Screened | None = None,
) -> gpd.GeoDataFrame:
    """One row per site: the measured factors, the governing window, the standard where it reaches."""
    judged = j.computed & j.reaches
    return gpd.GeoDataFrame(
        {
            "site_id": s.ids,
            "disturbed_sqft": s.disturbed_sqft,
            "disturbed_acres": sqft_to_acres(s.disturbed_sqft),
            "plan_id": pd.array(s.plan_id, dtype=object),
            # The construction site's disturbance the acre test is decided on: the whole common plan's.
            "plan_disturbed_sqft": s.plan_sqft,
            # The screening's answer (null when the sites were not screened).
            "applicability": pd.array(scr.applicability if scr is not None else [None] * len(s.ids), dtype=object),
            "permit": pd.array(scr.permit if scr is not None else [None] * len(s.ids), dtype=object),
            "sediment_standard": j.reaches,
            "k": k_arr,
            "k_covered_share": k_cover,
            "ls_mean": ls.mean,
            "ls_rep": ls.rep("representative_ls"),
            "rep_length_ft": ls.rep("representative_length_ft"),
            "rep_slope_pct": ls.rep("representative_slope_pct"),
            "dem_covered_share": ls.dem_covered,
            "outside_share": ls.outside_share,
            "outside_sqft": np.nan_to_num(ls.outside_share) * s.disturbed_sqft,
            "windows": n_win,
            # Null where nothing was computed: a site without a number neither passes nor fails.
            "governing_window": pd.array(
                [int(g) + 1 if c else None for g, c in zip(j.governing, j.computed, strict=True)], dtype="Int64"
            ),
            "soil_loss_tpa": j.soil_loss_tpa,
            "discharge_tpa": j.discharge_tpa,
            "standard_tpa": tables.standard_tpa,
            # Null too where the standard does not reach the site: it is not judged against it.
            "passes": pd.array(
                [bool(p) if ok else None for p, ok in zip(j.passes, judged, strict=True)], dtype="boolean"
            ),
            "findings": findings_col,
        },
        geometry=s.geoms,
        crs=measure,
    )


def _raster(
    raster: str | os.PathLike[str],
    info: DemInfo,
    s: _Sites,
    ls: _Ls,
    sums: _WindowSums,
    j: Judgement,
    k_arr: NDArray[np.float64],
    tables: SoilLossTables,
    profile: Profile,
    *,
    r_value: float,
    r_source: str,
    overwrite: bool,
    creation_options: Mapping[str, str] | None = None,
) -> Path | None:
    """Write the per-cell raster of the governing windows, styled by whether the standard reaches its sites."""
    nan = float("nan")
    on_dem = [(i, g, win) for i, (g, win) in enumerate(ls.grids_windows) if g is not None and win is not None]
    cells = [
        SiteCells(
            win,
            g,
            float(k_arr[i] * sums.rc[j.governing[i]]) if j.computed[i] else nan,
            float(k_arr[i] * sums.rce[j.governing[i]]) if j.computed[i] else nan,
        )
        for i, g, win in on_dem
    ]
    not_reached = [str(s.ids[i]) for i, _, _ in on_dem if not j.reaches[i]]
    tags = {
        "R_ANNUAL": f"{r_value:g} ({r_source})",
        "PROFILE": Path(profile.source).name if profile.source else profile.name,
    }
    if not_reached:
        tags["SEDIMENT_STANDARD_NOT_APPLICABLE"] = ", ".join(not_reached)
    reached = len(on_dem) - len(not_reached)
    return write_soil_loss_raster(
        raster,
        info,
        cells,
        standard_tpa=tables.standard_tpa,
        standard_reaches="all" if not not_reached else ("none" if reached == 0 else "some"),
        overwrite=overwrite,
        tags=tags,
        creation_options=creation_options,
    )


def soil_loss(
    sites: gpd.GeoDataFrame,
    dem: str | os.PathLike[str] | DemInfo,
    *,
    schedule: Sequence[Phase],
    profile: Profile,
    ei_daily: ArrayLike,
    r_annual: float | None = None,
    soils: gpd.GeoDataFrame | None = None,
    k: float | None = None,
    k_field: str | None = None,
    id_field: str | None = None,
    plan_field: str | None = None,
    plan_disturbed_sqft: float | Mapping[str, float] | None = None,
    z_unit: str | None = None,
    band: int | None = None,
    r_source: str = "given by the user",
    ei_source: str = "given by the user",
    soils_source: str = "soils",
    rill_interrill_ratio: float | str = "moderate",
    raster: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    screening: pd.DataFrame | None = None,
    raster_options: Mapping[str, str] | None = None,
) -> SoilLossResult:
    """Soil loss and sediment discharge of each site over its construction schedule.

    The sediment standard is applied only where it reaches: sites of the profile's
    ``thresholds.sediment_area`` or more of disturbance, the whole common plan's when the site
    is part of one (:func:`esc_gis.rules.sediment_standard_reaches`). Elsewhere ``passes`` is
    null and a finding says the standard does not apply; the numbers are still computed.

    Parameters
    ----------
    sites : geopandas.GeoDataFrame
        One polygon per site: its disturbed area. Any CRS (measured in the profile's).
    dem : path or DemInfo
        Elevations (projected, square cells).
    schedule : sequence of Phase
        Checked phases (:func:`esc_gis.soil.schedule.read_schedule`), applied to every site.
    profile : Profile
        Gives the standard, the tables and the findings' wording.
    ei_daily : array_like, shape (365,)
        Daily erosivity (:func:`read_ei_distribution`).
    r_annual : float, optional
        Annual R; the profile's when omitted (the shipped profile has none: not confirmed).
    soils : geopandas.GeoDataFrame, optional
        Soil polygons with K (``k_field``, default the profile's ``kwfact``); or give ``k``.
    k : float, optional
        One K for every site.
    k_field : str, optional
    id_field : str, optional
        Site id column; row numbers (from 1) when omitted.
    plan_field : str, optional
        The sites' common-plan column; default ``plan_id`` when the sites have one. Sites
        sharing a plan are added up (their union), as screening does.
    plan_disturbed_sqft : float or mapping of str to float, optional
        The common plan's disturbed total known from outside the layer: one number (every site
        is part of that plan), or one per plan id (the permit registry's). A
        ``plan_disturbed_sqft`` column of the sites (a screening output's) counts too, for
        the sites that name a plan; one that names none is decided on its own disturbance,
        and a field larger than that is refused. The largest of these and the plan's own
        sites decides the acre test.
    z_unit, band : optional
        As :func:`esc_gis.terrain.open_dem`.
    r_source, ei_source, soils_source : str
        Where R, the distribution and the soils came from, for the findings and messages.
    rill_interrill_ratio : str or float, default "moderate"
    raster : path, optional
        Also write the per-cell raster of the governing window's sediment discharge, soil loss
        and method class, with its QGIS style (:mod:`esc_gis.soil.raster`); checked before any
        work. Not written when no site lies on the DEM (``SoilLossResult.raster`` is None).
    overwrite : bool, default False
        Replace ``raster`` and its style if they exist.
    raster_options : mapping, optional
        GDAL GTiff creation options of ``raster`` (``--co NAME=VALUE``), checked before any work.
    screening : pandas.DataFrame, optional
        What :func:`esc_gis.screening.screen` returned for these sites (matched by
        ``site_id`` to ``id_field``): the article's reach (jurisdiction, § 540-4C, § 540-4A(2)),
        the permit and the sediment standard are taken from it, never decided here. Where the
        article does not apply, the site is not judged and the finding gives the screening's
        reason. Without it, every row says the reach was not screened
        (``soil_loss_applicability_not_screened``) and only the acre test decides.

    Returns
    -------
    SoilLossResult

    Raises
    ------
    OutputExistsError, OutputFormatError
        If ``raster`` (or its ``.qml``) exists without ``overwrite``, or is not a ``.tif``.
    ValidationError
        If R is missing or out of range, neither or both of ``soils`` and ``k`` are given, K
        is out of range or the soils lack the field, the sites have no CRS or lack a field
        named, a plan total is not a number of 0 or more, a site that names no common plan has a
        ``plan_disturbed_sqft`` field larger than its own disturbance (a plan's total: every such
        row named), the DEM is not usable for LS, or
        ``screening`` lacks a site (every problem of one kind at once).
    ProfileError
        If the profile's ``[soil_loss]`` tables are missing or malformed.
    """
    if raster is not None:
        check_raster_paths(raster, overwrite=overwrite)  # before any work
        check_creation_options(raster_options)
    tables = soil_loss_tables(profile)
    r_value, r_source = _check_inputs(
        sites,
        tables,
        r_annual=r_annual,
        r_source=r_source,
        soils=soils,
        k=k,
        id_field=id_field,
        plan_field=plan_field,
        plan_disturbed_sqft=plan_disturbed_sqft,
    )
    ei = np.asarray(ei_daily, dtype=np.float64)
    measure = CRS.from_user_input(profile.measure_crs)

    s, scr = _sites(sites, measure, id_field, plan_field, plan_disturbed_sqft, screening, profile)
    k_arr, k_cover = _site_k(s, measure, tables, soils=soils, k=k, k_field=k_field, soils_source=soils_source)
    info = dem if isinstance(dem, DemInfo) else open_dem(dem, z_unit=z_unit, band=band)
    ls = _site_ls_stage(s, measure, info, tables, rill_interrill_ratio)
    sums = _window_sums(schedule, tables, r_value, ei, s.ids, k_arr, ls.mean)
    j = judge(
        sums.discharge,
        sums.loss,
        s.plan_sqft,
        tables.standard_tpa,
        profile,
        scr.applicability if scr is not None else None,
        scr.sediment_standard if scr is not None else None,
    )
    unconfirmed = _unconfirmed(tables, schedule, r_value, r_source, ei_source, profile_r=r_annual is None)
    findings_col = _site_findings(profile, tables, s, ls, sums.wins, j, unconfirmed, scr)
    out = _site_table(s, measure, tables, k_arr, k_cover, ls, len(sums.wins), j, findings_col, scr)
    written = None
    if raster is not None:
        written = _raster(
            raster,
            info,
            s,
            ls,
            sums,
            j,
            k_arr,
            tables,
            profile,
            r_value=r_value,
            r_source=r_source,
            overwrite=overwrite,
            creation_options=raster_options,
        )
    return SoilLossResult(out, pd.DataFrame(sums.phase_rows), _window_table(sums, s.ids, j), written)
