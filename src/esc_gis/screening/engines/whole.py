"""The whole-file engine: a layer read, measured and decided at once, in this process.

:func:`screen` and :func:`screen_run` hold the layer, its measurements and its result at once;
a layer above :data:`esc_gis.screening.stream.STREAM_ABOVE_ROWS` features is screened a batch
at a time by :func:`esc_gis.screening.stream.screen_to_file` (``esc-gis screen`` switches by
itself). Never prints and never writes files; the ``esc-gis screen`` command wraps it.
"""

from __future__ import annotations

__all__ = ["screen", "screen_run"]

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np

from esc_gis.layers import LayerSet, load_layers
from esc_gis.profile import Profile, load_profile
from esc_gis.screening.decide import ScreeningRun, measure_run
from esc_gis.screening.read import read_run
from esc_gis.validate import repair_tolerance_sqft

if TYPE_CHECKING:
    from collections.abc import Callable


def screen(
    sites: str | os.PathLike[str] | gpd.GeoDataFrame,
    *,
    disturbed: str | os.PathLike[str] | gpd.GeoDataFrame | None = None,
    layers: str | os.PathLike[str] | LayerSet | None = None,
    profile: str | os.PathLike[str] | Profile | None = None,
    id_field: str = "site_id",
    field_map: dict[str, str] | None = None,
    assume_crs: Any | None = None,
    sites_layer: str | None = None,
    disturbed_layer: str | None = None,
    sites_where: str | None = None,
    disturbed_where: str | None = None,
    skip_ids: str | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> gpd.GeoDataFrame:
    """Screen construction sites against Chapter 540, Article I.

    Parameters
    ----------
    sites : path or geopandas.GeoDataFrame
        Site (or parcel) polygons with a unique id and, optionally, ``plan_id``,
        ``activity``, ``state_agency`` and ``npdes_exempt``. Any CRS.
    disturbed : path or geopandas.GeoDataFrame, optional
        Disturbed-limit polygons carrying the site id. Without it, each whole site is
        taken as disturbed (parcel screening).
    layers : path or LayerSet, optional
        The layer-set manifest; default the Village's (``layers/winneconne/layers.toml``).
    profile : path or Profile, optional
        The ordinance profile; default the Village's.
    id_field : str, default "site_id"
        The id field of ``sites`` (and of ``disturbed``, which may also use ``site_id``).
    field_map : dict, optional
        Contract field -> field in the file, e.g. ``{"activity": "LANDUSE"}``.
    assume_crs : optional
        CRS for input layers that have none. Never overrides a layer's own CRS.
    sites_layer, disturbed_layer : str, optional
        Layer names in multi-layer files.
    sites_where, disturbed_where : str, optional
        OGR SQL ``WHERE`` clauses picking the features to read (GDAL applies them while
        reading). Rows keep their feature numbers in the file.
    skip_ids : str, optional
        Which features of ``sites`` are not sites: ``None``/``"auto"`` (the schema's rule:
        for a Wisconsin V10 parcel layer, :data:`esc_gis.parcels.V10_NON_PARCEL` on the
        id; for other layers, nothing), ``"none"``, or a regular expression the whole id
        must match. While a rule is in force, a site without an id gets ``row:<n>``. The
        skipped features are returned by :func:`screen_run`, which this wraps.
    progress : callable, optional
        Called as ``progress(stage, fraction_done)`` as the run advances.

    Returns
    -------
    geopandas.GeoDataFrame
        One row per site, in input order: the columns of
        :data:`~esc_gis.screening.CONTRACT_COLUMNS`, then :data:`~esc_gis.screening.EXTRA_COLUMNS`,
        then :data:`~esc_gis.screening.OPTIONAL_COLUMNS` when the layer set has what they need,
        then the sites' other fields; geometry is the site in the measuring CRS. Findings about
        the run as a whole (absent layers) are in ``attrs["run_findings"]``, read with
        :func:`~esc_gis.screening.run_findings`.

    Raises
    ------
    LayerReadError
        If an input file is missing, unreadable or empty.
    ValidationError
        With every problem in the inputs (no CRS, missing or duplicate ids, unknown
        activities, bad flags, non-polygon or empty geometry), all at once.
    LayerSetError, CRSError, ProfileError
        If the layer set or profile is unusable.

    Examples
    --------
    >>> import geopandas as gpd, shapely
    >>> prof = load_profile()
    >>> x, y = 745_000, 505_000  # the Village, in WISCRS Winnebago feet
    >>> village = gpd.GeoDataFrame(geometry=[shapely.box(x, y, x + 1000, y + 1000)], crs="EPSG:7594")
    >>> ls = LayerSet(manifest=None, crs=village.crs, jurisdiction=village.geometry[0])
    >>> site = shapely.box(x + 10, y + 10, x + 110, y + 60)
    >>> sites = gpd.GeoDataFrame({"site_id": ["a"]}, geometry=[site], crs="EPSG:7594")
    >>> row = screen(sites, layers=ls).iloc[0]
    >>> row["jurisdiction"], round(row["disturbed_sqft"]), row["permit"]
    ('inside', 5000, 'required')
    """
    return screen_run(
        sites,
        disturbed=disturbed,
        layers=layers,
        profile=profile,
        id_field=id_field,
        field_map=field_map,
        assume_crs=assume_crs,
        sites_layer=sites_layer,
        disturbed_layer=disturbed_layer,
        sites_where=sites_where,
        disturbed_where=disturbed_where,
        skip_ids=skip_ids,
        progress=progress,
    ).result


def screen_run(
    sites: str | os.PathLike[str] | gpd.GeoDataFrame,
    *,
    disturbed: str | os.PathLike[str] | gpd.GeoDataFrame | None = None,
    layers: str | os.PathLike[str] | LayerSet | None = None,
    profile: str | os.PathLike[str] | Profile | None = None,
    id_field: str = "site_id",
    field_map: dict[str, str] | None = None,
    assume_crs: Any | None = None,
    sites_layer: str | None = None,
    disturbed_layer: str | None = None,
    sites_where: str | None = None,
    disturbed_where: str | None = None,
    skip_ids: str | None = None,
    progress: Callable[[str, float], None] | None = None,
    feature_numbers: np.ndarray | None = None,
    sites_name: str | None = None,
) -> ScreeningRun:
    """Screen as :func:`screen` does; return the result with what was skipped and why.

    Parameters
    ----------
    sites, disturbed, layers, profile, id_field, field_map, assume_crs, sites_layer, disturbed_layer, \
sites_where, disturbed_where, skip_ids, progress
        As for :func:`screen`.
    feature_numbers : numpy.ndarray of int, optional
        For ``sites`` given as a GeoDataFrame cut from a file (a batch of
        :func:`esc_gis.screening.stream.screen_to_file`): each row's 1-based feature number in that file.
    sites_name : str, optional
        That file's name, for messages.

    Returns
    -------
    ScreeningRun

    Raises
    ------
    LayerReadError, ValidationError, LayerSetError, CRSError, ProfileError
        As :func:`screen`; LayerReadError also when every feature is skipped.
    """
    report = progress or (lambda stage, frac: None)
    prof = profile if isinstance(profile, Profile) else load_profile(None if profile is None else Path(profile))
    report("reading layers", 0.0)
    ls = layers if isinstance(layers, LayerSet) else load_layers(None if layers is None else Path(layers), profile=prof)
    read = read_run(
        sites,
        disturbed,
        crs=ls.crs,
        assume_crs=assume_crs,
        id_field=id_field,
        field_map=field_map,
        sites_layer=sites_layer,
        disturbed_layer=disturbed_layer,
        sites_where=sites_where,
        disturbed_where=disturbed_where,
        skip_ids=skip_ids,
        feature_numbers=feature_numbers,
        sites_name=sites_name,
        repair_sqft=repair_tolerance_sqft(prof),
    )
    return measure_run(read, ls, prof, progress=report)
