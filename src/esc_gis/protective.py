"""The protective-area layer: waters in, dissolved strips with their governing class out.

This is the pipeline behind ``esc-gis protective`` (load -> classes -> CRS -> measure): it
reads a waters layer, maps its codes to water classes, moves it to the measuring CRS and
dissolves the protective areas by the class and width that govern each part
(:func:`esc_gis.waters.governing_parts`), for analysts to load in QGIS.
"""

from __future__ import annotations

__all__ = ["protective_layer"]

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geopandas as gpd

from esc_gis.crs import assign_crs, measuring_crs, to_measuring_crs, warn_if_far_from_zone
from esc_gis.errors import LayerReadError, LayerSetError, ValidationError
from esc_gis.io import read_class_map, read_layer
from esc_gis.layers import load_layers
from esc_gis.profile import Profile, load_profile
from esc_gis.validate import DRAINAGE_FIELD, PIPED_FIELD, prepare_waters
from esc_gis.waters import governing_parts

if TYPE_CHECKING:
    from collections.abc import Mapping


def protective_layer(
    waters: str | os.PathLike[str] | gpd.GeoDataFrame | None = None,
    *,
    layers: str | os.PathLike[str] | None = None,
    profile: str | os.PathLike[str] | Profile | None = None,
    crs: Any | None = None,
    class_field: str = "water_class",
    name_field: str | None = None,
    channel_width_field: str | None = None,
    piped_field: str = PIPED_FIELD,
    drainage_field: str = DRAINAGE_FIELD,
    class_map: Mapping[str, str] | str | os.PathLike[str] | None = None,
    layer: str | None = None,
    assume_crs: Any | None = None,
) -> gpd.GeoDataFrame:
    """Dissolved protective areas of a waters layer, with the class and width governing each part.

    Parameters
    ----------
    waters : path or geopandas.GeoDataFrame, optional
        Waters of the state: polygons or lines, any CRS.
    layers : path, optional
        A layer-set manifest whose waters (every ``[[waters]]`` layer, with its own fields
        and class map) are used instead of ``waters``; its CRS is the measuring CRS.
    profile : path or Profile, optional
        The ordinance profile (widths by class); default the bundled one.
    crs : optional
        The measuring and output CRS; default the profile's (EPSG:7594).
    class_field, name_field, channel_width_field, piped_field, drainage_field : str
        As :func:`esc_gis.validate.prepare_waters`: piped streams get no strip, and
        concentrated-flow channels draining too little none either.
    class_map : dict or path, optional
        Source codes to water classes, or a ``.toml`` / ``.csv`` file of them.
    layer : str, optional
        Layer of ``waters`` to read, if it has several.
    assume_crs : optional
        CRS for a layer that has none. Never overrides a layer's own CRS.

    Returns
    -------
    geopandas.GeoDataFrame
        See :func:`esc_gis.waters.governing_parts`.

    Raises
    ------
    LayerReadError
        If the layer cannot be read or is empty.
    LayerSetError
        If a named field is not in the layer, the class map cannot be read, or neither
        ``waters`` nor a layer set with waters is given.
    ValidationError
        With every bad row (unknown class, bad geometry or width) and bad map entry at once.
    CRSError
        If the layer has no CRS and none is assumed, or ``crs`` is not a measuring CRS.

    Examples
    --------
    A 100 ft square pond classed as a lake has a 50 ft strip around it:

    >>> import shapely
    >>> square = shapely.box(700_000, 500_000, 700_100, 500_100)  # in Arizona East's zone, which it measures in
    >>> pond = gpd.GeoDataFrame({"water_class": ["lake"]}, geometry=[square], crs="EPSG:2222")
    >>> out = protective_layer(pond, crs="EPSG:2222")
    >>> out[["water_class", "width_ft"]].to_dict("records")
    [{'water_class': 'lake', 'width_ft': 50.0}]
    """
    prof = profile if isinstance(profile, Profile) else load_profile(None if profile is None else Path(profile))
    if waters is None:
        if layers is None:
            msg = "Give a waters layer, or a layer set (layers=) whose [waters] to use."
            raise LayerSetError(msg)
        ls = load_layers(Path(layers), profile=prof)
        if ls.waters is None or len(ls.waters) == 0:
            msg = f"{layers}: the layer set has no [waters] layer."
            raise LayerSetError(msg)
        return governing_parts(ls.waters, prof, ls.crs)
    target = measuring_crs(crs if crs is not None else prof.measure_crs)
    if isinstance(waters, gpd.GeoDataFrame):
        gdf, source = waters.reset_index(drop=True), "waters"
    else:
        gdf, source = read_layer(waters, layer=layer), os.fspath(waters)
    if len(gdf) == 0:
        msg = f"{source}: the layer is empty (no features)."
        raise LayerReadError(msg)
    gdf = assign_crs(gdf, assume_crs=assume_crs, source=source)
    warn_if_far_from_zone(gdf.total_bounds, gdf.crs, target, what=f"Waters {source}")
    mapping = read_class_map(class_map) if isinstance(class_map, (str, os.PathLike)) else class_map
    prepared, problems = prepare_waters(
        gdf,
        source,
        allowed_classes=prof.water_classes(),
        class_field=class_field,
        name_field=name_field,
        channel_width_field=channel_width_field,
        piped_field=piped_field,
        drainage_field=drainage_field,
        class_map=dict(mapping) if mapping is not None else None,
    )
    if problems:
        raise ValidationError(problems)
    return governing_parts(to_measuring_crs(prepared, target), prof, target)
