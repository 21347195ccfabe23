"""Layer sets: the Village's reference layers, named by a ``layers.toml`` manifest.

A layer set is a folder holding a manifest and the files it names (paths are relative to
the manifest)::

    crs = "EPSG:7594"                 # the measuring CRS
    [jurisdiction]                    # required: the Village boundary
    path = "village_boundary.gpkg"
    [waters]                          # waters of the state, polygons or lines
    path = "waters.gpkg"
    class_field = "water_class"
    name_field = "name"               # optional
    channel_width_field = "width_ft"  # optional: a line's channel width, in feet
    piped_field = "piped"             # optional (this name by default): stream in a pipe or culvert
    drainage_field = "drainage_acres" # optional (this name by default): acres a channel drains
    class_map = "wwi_codes.csv"       # optional: the layer's own codes -> water classes

Several waters layers (lakes from one source, streams and wetlands from others) are given
as ``[[waters]]`` tables, each with its own fields and class map.
    [dem]                             # optional: elevation raster
    path = "dem.tif"
    z_unit = "ft"
    [targeted_areas]                  # optional: TMDL / targeted standard areas (§ 540-7B(6))
    path = "targeted.gpkg"

A layer missing from the manifest switches its measurements off (the output column is null
and a finding says why); a layer that is named but unreadable is an error. Every layer is
transformed to the measuring CRS here, once, so nothing downstream transforms again.
"""

from __future__ import annotations

__all__ = ["LayerSet", "default_manifest", "load_layers"]

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import shapely

from esc_gis.crs import measuring_crs, to_measuring_crs
from esc_gis.errors import CRSError, LayerSetError, ValidationError
from esc_gis.io import read_class_map, read_layer
from esc_gis.terrain.dem import DemInfo, open_dem
from esc_gis.validate import DRAINAGE_FIELD, PIPED_FIELD, prepare_waters

if TYPE_CHECKING:
    import geopandas as gpd
    from pyproj import CRS

    from esc_gis.profile import Profile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Environment variable naming the default manifest.
ENV_LAYERS = "ESC_GIS_LAYERS"
_Z_UNITS = ("ft", "us_ft", "m")


@dataclass
class LayerSet:
    """Reference layers, all in the measuring CRS.

    Attributes
    ----------
    manifest : Path
        The ``layers.toml`` read.
    crs : pyproj.CRS
        The measuring CRS.
    jurisdiction : shapely.Geometry
        The Village as one (multi)polygon; holes are not Village land.
    waters : geopandas.GeoDataFrame or None
        Columns ``water_class``, ``water_name``, ``channel_width_ft``, ``piped``,
        ``drainage_acres``, ``source_code``,
        ``row``, ``layer`` and the geometry (see :func:`esc_gis.validate.prepare_waters`);
        None when not configured.
    targeted_areas : geopandas.GeoDataFrame or None
        Column ``area_name`` and the geometry; None when not configured.
    dem_path : Path or None
        The elevation raster, when configured.
    dem_z_unit : str or None
        Its vertical unit from the manifest, when given.
    dem : DemInfo or None
        The DEM's header and settled units, when configured.
    """

    manifest: Path
    crs: CRS
    jurisdiction: shapely.Geometry
    waters: gpd.GeoDataFrame | None = None
    targeted_areas: gpd.GeoDataFrame | None = None
    dem_path: Path | None = None
    dem_z_unit: str | None = None
    dem: DemInfo | None = None


def default_manifest() -> Path:
    """Return the manifest used when none is named.

    Looks at ``$ESC_GIS_LAYERS``, then the copy a wheel carries (``esc_gis/layersets/``,
    put there at build time by ``setup.py``), then ``layers/winneconne/layers.toml`` in the
    source tree this package was installed from (an editable install), then under the
    current folder.

    Raises
    ------
    LayerSetError
        If none of those exists.
    """
    candidates = []
    if os.environ.get(ENV_LAYERS):
        candidates.append(Path(os.environ[ENV_LAYERS]))
    candidates.append(Path(__file__).resolve().parent / "layersets" / "winneconne" / "layers.toml")
    candidates.append(Path(__file__).resolve().parents[2] / "layers" / "winneconne" / "layers.toml")
    candidates.append(Path.cwd() / "layers" / "winneconne" / "layers.toml")
    for c in candidates:
        if c.is_file():
            return c
    msg = (
        "No layer set given and the Village's default (layers/winneconne/layers.toml) was not "
        f"found. Fix: pass --layers PATH/TO/layers.toml, or set {ENV_LAYERS}."
    )
    raise LayerSetError(msg)


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        msg = f"Layer-set manifest {str(path)!r} does not exist; give the path of a layers.toml."
        raise LayerSetError(msg) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        msg = f"Layer-set manifest {str(path)!r} is not valid TOML: {exc}"
        raise LayerSetError(msg) from None


def _section(data: dict[str, Any], name: str, manifest: Path, *, required: bool) -> dict[str, Any] | None:
    sec = data.get(name)
    if sec is None:
        if required:
            msg = f"{manifest}: the [{name}] layer is required (path = ...)."
            raise LayerSetError(msg)
        return None
    if not isinstance(sec, dict) or not isinstance(sec.get("path"), str):
        msg = f'{manifest}: [{name}] needs a path = "..." (relative to the manifest).'
        raise LayerSetError(msg)
    return sec


def _load_vector(sec: dict[str, Any], manifest: Path, crs: CRS) -> tuple[gpd.GeoDataFrame, str]:
    path = (manifest.parent / sec["path"]).resolve()
    source = f"{manifest.parent.name}/{sec['path']}"
    gdf = read_layer(path, layer=sec.get("layer"))
    if gdf.crs is None:
        msg = f"{source} (named in {manifest.name}) has no CRS; define it in the file."
        raise CRSError(msg)
    return to_measuring_crs(gdf, crs), source


def _waters_sections(data: dict[str, Any], manifest: Path) -> list[dict[str, Any]]:
    """``[waters]`` as one table, or ``[[waters]]`` as several (lakes, streams, wetlands...)."""
    raw = data.get("waters")
    if raw is None:
        return []
    secs = raw if isinstance(raw, list) else [raw]
    for k, sec in enumerate(secs):
        if not isinstance(sec, dict) or not isinstance(sec.get("path"), str):
            which = "[waters]" if not isinstance(raw, list) else f"[[waters]] number {k + 1}"
            msg = f'{manifest}: {which} needs a path = "..." (relative to the manifest).'
            raise LayerSetError(msg)
    return secs


def _load_waters(data: dict[str, Any], manifest: Path, crs: CRS, profile: Profile) -> gpd.GeoDataFrame | None:
    """Read every waters layer, map its codes to classes, and report every bad row at once."""
    secs = _waters_sections(data, manifest)
    if not secs:
        return None
    frames, problems = [], []
    for sec in secs:
        gdf, source = _load_vector(sec, manifest, crs)
        class_map = sec.get("class_map")
        if isinstance(class_map, str):  # a file beside the manifest
            class_map = read_class_map((manifest.parent / class_map).resolve())
        elif class_map is not None and not isinstance(class_map, dict):
            msg = f"{manifest}: class_map of {sec['path']!r} must be a table of codes or a .toml/.csv path."
            raise LayerSetError(msg)
        waters, found = prepare_waters(
            gdf,
            source,
            allowed_classes=profile.water_classes(),
            class_field=sec.get("class_field", "water_class"),
            name_field=sec.get("name_field"),
            channel_width_field=sec.get("channel_width_field"),
            piped_field=sec.get("piped_field", PIPED_FIELD),
            drainage_field=sec.get("drainage_field", DRAINAGE_FIELD),
            class_map=class_map,
        )
        frames.append(waters.assign(layer=source))
        problems += found
    if problems:
        raise ValidationError(problems)
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def load_layers(manifest: str | Path | None = None, *, profile: Profile) -> LayerSet:
    """Read a layer set and bring every layer into the measuring CRS.

    Parameters
    ----------
    manifest : str or Path, optional
        The ``layers.toml``; default :func:`default_manifest`.
    profile : Profile
        The ordinance profile: its measuring CRS is used when the manifest names none, and
        its water classes are the allowed ``class_field`` values.

    Returns
    -------
    LayerSet

    Raises
    ------
    LayerSetError
        If the manifest is missing or malformed.
    LayerReadError
        If a named layer cannot be read.
    CRSError
        If a layer has no CRS, or the measuring CRS is geographic or Mercator.
    UnitsError
        If the DEM's vertical unit is unknown (give ``z_unit`` in ``[dem]``).
    ValidationError
        If waters carry unknown classes (every bad row listed).
    """
    path = Path(manifest) if manifest is not None else default_manifest()
    if path.is_dir():
        path = path / "layers.toml"
    data = _read_manifest(path)
    crs = measuring_crs(data.get("crs", profile.measure_crs))

    jsec = _section(data, "jurisdiction", path, required=True)
    jur, jsource = _load_vector(jsec, path, crs)  # type: ignore[arg-type]
    geoms = jur.geometry.to_numpy()
    poly = np.isin(shapely.get_type_id(geoms), (3, 6))
    if not poly.all():
        msg = f"{jsource}: the jurisdiction layer must hold polygons only."
        raise LayerSetError(msg)
    jurisdiction = shapely.union_all(shapely.make_valid(geoms))
    layers = LayerSet(manifest=path, crs=crs, jurisdiction=jurisdiction)

    layers.waters = _load_waters(data, path, crs, profile)

    tsec = _section(data, "targeted_areas", path, required=False)
    if tsec is not None:
        targeted, _ = _load_vector(tsec, path, crs)
        name_field = tsec.get("name_field")
        names = targeted[name_field].astype(object) if name_field in targeted.columns else None
        layers.targeted_areas = targeted[[targeted.geometry.name]].assign(
            area_name=names.to_numpy() if names is not None else None
        )

    dsec = _section(data, "dem", path, required=False)
    if dsec is not None:
        dem = (path.parent / dsec["path"]).resolve()
        if not dem.is_file():
            msg = f"{path}: [dem] names {dsec['path']!r}, which does not exist."
            raise LayerSetError(msg)
        z = dsec.get("z_unit")
        if z is not None and z not in _Z_UNITS:
            msg = f"{path}: [dem] z_unit {z!r} is not one of {', '.join(_Z_UNITS)}."
            raise LayerSetError(msg)
        layers.dem_path, layers.dem_z_unit = dem, z
        # Opened now, so an unreadable DEM or an unknown vertical unit fails before any work.
        layers.dem = open_dem(dem, z_unit=z)
    return layers
