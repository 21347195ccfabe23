"""Layer sets: the Village's reference layers, named by a ``layers.toml`` manifest.

A layer set is a folder holding a manifest and the files it names (paths are relative to
the manifest). These are all the tables and keys a manifest may hold::

    crs = "EPSG:7594"                 # the measuring CRS (the profile's when absent)
    [jurisdiction]                    # required: the Village boundary
    path = "village_boundary.gpkg"
    layer = "places"                  # optional, any layer table: the layer of a multi-layer file
    where = "GEOID = '5587775'"       # optional, any layer table: OGR SQL to pick features
    name_field = "NAME"               # optional: pick the Village by name ...
    name = "Village Name"             # ... (both or neither)
    [waters]                          # waters of the state, polygons or lines
    path = "waters.gpkg"
    class_field = "water_class"       # this name by default
    name_field = "name"               # optional
    channel_width_field = "width_ft"  # optional: a line's channel width, in feet
    piped_field = "piped"             # optional (this name by default): stream in a pipe or culvert
    drainage_field = "drainage_acres" # optional (this name by default): acres a channel drains
    class_map = "wwi_codes.csv"       # optional: the layer's own codes -> water classes
    [dem]                             # optional: elevation raster
    path = "dem.tif"                  # a raster, a .vrt, or a folder of tiles on one grid
    z_unit = "ft"                     # optional: m, ft or us_ft, when the raster does not say
    band = 1                          # the elevation band; required when the raster has several
    [targeted_areas]                  # optional: TMDL / targeted standard areas (§ 540-7B(6))
    path = "targeted.gpkg"
    name_field = "name"               # optional
    [soils]                           # optional: soil polygons with K (SSURGO map units)
    path = "soils.gpkg"
    k_field = "kwfact"                # optional: the field holding K (the profile's, kwfact, by default)

Several waters layers (lakes from one source, streams and wetlands from others) are given
as ``[[waters]]`` tables, each with its own fields and class map.

Any other table or key is an error naming each one with the nearest right one: a typo such
as ``[targeted_area]`` would otherwise switch a check off without a word.

The jurisdiction layer must hold one feature (one place, however many parts it has), or
``where`` or ``name_field``/``name`` must say which: merging every place of a statewide file
into "the Village" is refused. The features a selection picks are taken as the parts of that
one place and merged.

A layer missing from the manifest switches its measurements off (the output column is null
and one run-level finding says why); a layer that is named but unreadable is an error.
Every layer is transformed to the measuring CRS here, once, so nothing downstream transforms
again. A layer far outside the measuring CRS's zone is warned about
(:func:`esc_gis.crs.warn_if_far_from_zone`).
"""

from __future__ import annotations

__all__ = ["LayerSet", "default_manifest", "load_layers"]

import difflib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import shapely

from esc_gis._vsi import beside, is_vsi, missing_reason
from esc_gis.config.layers import Dem, Jurisdiction, Layer, LayersFile, Soils, layers_problems
from esc_gis.crs import measuring_crs, to_measuring_crs, warn_if_far_from_zone
from esc_gis.errors import CRSError, LayerSetError, ValidationError
from esc_gis.io import read_class_map, read_layer
from esc_gis.terrain.dem import DemInfo, open_dem, warn_if_dem_far
from esc_gis.validate import prepare_waters

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
#: Columns looked at first when showing the values a jurisdiction could be picked by.
_NAME_FIELDS = ("name", "namelsad", "muni_name", "place_name", "label")


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
    dem_path : Path, str or None
        The elevation raster, when configured (a str for a GDAL virtual path, ``/vsizip/...``).
    dem_z_unit : str or None
        Its vertical unit from the manifest, when given.
    dem : DemInfo or None
        The DEM's header and settled units, when configured.
    dem_band : int or None
        The elevation band named by ``band`` in ``[dem]``, when given.
    soils : geopandas.GeoDataFrame or None
        Soil polygons with their K field (``soils_k_field``), as read; None when not configured.
        With a DEM, screening adds a bare-soil soil-loss estimate per site
        (:mod:`esc_gis.soil.potential`), and plan review its own soil loss.
    soils_k_field : str or None
        The field of ``soils`` holding K.
    fee_schedule : Path or None
        The office's fee schedule (``[fees]``), which every application fee is checked
        against (:func:`esc_gis.registry.domain.fees.load_fee_schedule` reads it); None when not configured.
    """

    manifest: Path
    crs: CRS
    jurisdiction: shapely.Geometry
    waters: gpd.GeoDataFrame | None = None
    targeted_areas: gpd.GeoDataFrame | None = None
    dem_path: Path | str | None = None
    dem_z_unit: str | None = None
    dem: DemInfo | None = None
    dem_band: int | None = None
    soils: gpd.GeoDataFrame | None = None
    soils_k_field: str | None = None
    fee_schedule: Path | None = None


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
        f'found. Fix: pass layers="PATH/TO/layers.toml", or set {ENV_LAYERS}.'
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


def _check(data: dict[str, Any], manifest: Path) -> LayersFile:
    """Check the manifest against its model, saying every problem at once.

    Unknown tables and keys are said first and alone, each with the nearest known name: a
    misspelt name is the likeliest cause of the rest.

    Raises
    ------
    LayerSetError
        If the manifest holds a table or key no layer set has, lacks ``[jurisdiction]``, or a
        table lacks its path or holds a value of the wrong kind.
    """
    model, unknown, problems = layers_problems(data)
    if unknown:
        lines = "\n".join(f"  - {p}" for p in unknown)
        msg = (
            f"{manifest}: {len(unknown)} unknown name{'s' if len(unknown) != 1 else ''} in the layer-set "
            f"manifest (a misspelt name would silently switch a check off):\n{lines}"
        )
        raise LayerSetError(msg)
    if len(problems) == 1:
        raise LayerSetError(f"{manifest}: {problems[0]}")
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise LayerSetError(f"{manifest}: {len(problems)} problems in the layer-set manifest:\n{lines}")
    assert model is not None
    return model


def _source(sec: Layer | Dem, manifest: Path) -> str:
    """Name the layer in messages as the manifest gives it, beside the manifest's folder."""
    # A GDAL virtual path (/vsizip/w.zip/w.shp) is named as written: its archive is beside the manifest.
    as_written = Path(sec.path).is_absolute() or is_vsi(sec.path)
    return sec.path if as_written else f"{manifest.parent.name}/{sec.path}"


def _load_vector(sec: Layer, manifest: Path, crs: CRS) -> tuple[gpd.GeoDataFrame, str]:
    path = beside(manifest.parent, sec.path)  # a /vsizip/ path's archive too
    source = _source(sec, manifest)
    gdf = read_layer(path, layer=sec.layer, where=sec.where)
    if gdf.crs is None:
        msg = f"{source} (named in {manifest.name}) has no CRS; define it in the file."
        raise CRSError(msg)
    warn_if_far_from_zone(gdf.total_bounds, gdf.crs, crs, what=f"Layer {source}")
    return to_measuring_crs(gdf, crs), source


def _likely_name_field(gdf: gpd.GeoDataFrame) -> str | None:
    """Return the column a person would pick a place by: a known name column, else the first text one."""
    text = [c for c in gdf.columns if c != gdf.geometry.name and pd.api.types.is_string_dtype(gdf[c])]
    by_lower = {c.lower(): c for c in text}
    for name in _NAME_FIELDS:
        if name in by_lower:
            return by_lower[name]
    return text[0] if text else None


def _pick_by_name(gdf: gpd.GeoDataFrame, sec: Jurisdiction, manifest: Path, source: str) -> gpd.GeoDataFrame:
    field, name = sec.name_field, sec.name
    if field is None or name is None:  # both or neither: the model refuses one alone
        return gdf
    if field not in gdf.columns:
        fields = ", ".join(c for c in gdf.columns if c != gdf.geometry.name)
        msg = f"{manifest}: [jurisdiction] name_field {field!r} is not a field of {source}; its fields: {fields}."
        raise LayerSetError(msg)
    values = gdf[field].astype(str)
    picked = gdf[(values == name).to_numpy()]
    if not len(picked):
        close = difflib.get_close_matches(name, sorted(set(values)), n=3)
        hint = f" Nearest: {', '.join(repr(v) for v in close)}." if close else ""
        msg = f"{manifest}: [jurisdiction] no feature of {source} has {field} = {name!r}.{hint}"
        raise LayerSetError(msg)
    return picked


def _load_jurisdiction(sec: Jurisdiction, manifest: Path, crs: CRS) -> shapely.Geometry:
    """Read the jurisdiction: one feature, or the features ``where`` / ``name_field`` pick, merged."""
    path = beside(manifest.parent, sec.path)  # a /vsizip/ path's archive too
    source = _source(sec, manifest)
    gdf = _pick_by_name(read_layer(path, layer=sec.layer, where=sec.where), sec, manifest, source)
    selected = sec.where is not None or sec.name_field is not None
    if len(gdf) > 1 and not selected:
        # Merging a statewide file of places into "the Village" would pass every site as inside.
        field = _likely_name_field(gdf)
        shown = ""
        if field is not None:
            values = gdf[field].dropna().astype(str).unique()
            few = ", ".join(repr(v) for v in values[:5])
            shown = f" Values of {field}: {few}{', ...' if len(values) > 5 else ''} ({len(values)} in all)."
        f = field or "FIELD"
        msg = (
            f"{source} holds {len(gdf)} features, and the jurisdiction must be one place: esc-gis will not "
            f"merge them all into one boundary. Fix: say which in [jurisdiction] of {manifest}, either\n"
            f'  name_field = "{f}"\n  name = "..."\nor\n  where = "{f} = \'...\'"\n'
            f"(several features picked are merged, as the parts of one place).{shown}"
        )
        raise LayerSetError(msg)
    if gdf.crs is None:
        msg = f"{source} (named in {manifest.name}) has no CRS; define it in the file."
        raise CRSError(msg)
    warn_if_far_from_zone(gdf.total_bounds, gdf.crs, crs, what=f"Layer {source}")
    geoms = to_measuring_crs(gdf, crs).geometry.to_numpy()
    if not np.isin(shapely.get_type_id(geoms), (3, 6)).all():
        msg = f"{source}: the jurisdiction layer must hold polygons only."
        raise LayerSetError(msg)
    return shapely.union_all(shapely.make_valid(geoms))


def _load_waters(m: LayersFile, manifest: Path, crs: CRS, profile: Profile) -> gpd.GeoDataFrame | None:
    """Read every waters layer, map its codes to classes, and report every bad row at once."""
    secs = m.waters if isinstance(m.waters, list) else [] if m.waters is None else [m.waters]
    if not secs:
        return None
    frames, problems = [], []
    for sec in secs:
        gdf, source = _load_vector(sec, manifest, crs)
        class_map = sec.class_map
        if isinstance(class_map, str):  # a file beside the manifest
            class_map = read_class_map((manifest.parent / class_map).resolve())
        waters, found = prepare_waters(
            gdf,
            source,
            allowed_classes=profile.water_classes(),
            class_field=sec.class_field,
            name_field=sec.name_field,
            channel_width_field=sec.channel_width_field,
            piped_field=sec.piped_field,
            drainage_field=sec.drainage_field,
            class_map=class_map,
        )
        frames.append(waters.assign(layer=source))
        problems += found
    if problems:
        raise ValidationError(problems)
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _load_soils(sec: Soils, manifest: Path, crs: CRS, profile: Profile) -> tuple[gpd.GeoDataFrame, str]:
    """Read the soils layer and check that its K field is there (K values are checked where used)."""
    soils, source = _load_vector(sec, manifest, crs)
    raw = profile.tables.get("soil_loss")
    default = str(raw.get("k_field", "kwfact")) if isinstance(raw, dict) else "kwfact"
    k_field = sec.k_field or default
    if k_field not in soils.columns:
        fields = ", ".join(str(c) for c in soils.columns if c != soils.geometry.name) or "none"
        msg = (
            f"{manifest}: [soils] {source} has no K field {k_field!r} (its fields: {fields}); name it with "
            "k_field = \"...\" in [soils], or join the surface horizon's kwfact from SSURGO's chorizon table."
        )
        raise LayerSetError(msg)
    return soils, k_field


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
        If the manifest is missing or malformed, or the soils layer lacks its K field.
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
    m = _check(_read_manifest(path), path)
    crs = measuring_crs(m.crs or profile.measure_crs)

    jurisdiction = _load_jurisdiction(m.jurisdiction, path, crs)
    layers = LayerSet(manifest=path, crs=crs, jurisdiction=jurisdiction)

    layers.waters = _load_waters(m, path, crs, profile)

    tsec = m.targeted_areas
    if tsec is not None:
        targeted, _ = _load_vector(tsec, path, crs)
        name_field = tsec.name_field
        names = targeted[name_field].astype(object) if name_field in targeted.columns else None
        layers.targeted_areas = targeted[[targeted.geometry.name]].assign(
            area_name=names.to_numpy() if names is not None else None
        )

    if m.soils is not None:
        layers.soils, layers.soils_k_field = _load_soils(m.soils, path, crs, profile)

    if m.fees is not None:
        # Read when a fee is recorded (the registry), not here: screening never needs it.
        layers.fee_schedule = (path.parent / m.fees.path).resolve()

    dsec = m.dem
    if dsec is not None:
        where = beside(path.parent, dsec.path)
        # A GDAL virtual path (/vsizip/dem.zip/dem.tif) stays text: Path() would fold its "//".
        dem: str | Path = where if is_vsi(where) else Path(where)
        missing = missing_reason(where) if is_vsi(where) else None
        if missing is not None:
            msg = f"{path}: [dem] names {dsec.path!r}: {missing}"
            raise LayerSetError(msg)
        if isinstance(dem, Path) and not dem.exists():  # a file, or a folder of tiles
            msg = f"{path}: [dem] names {dsec.path!r}, which does not exist."
            raise LayerSetError(msg)
        z, band = dsec.z_unit, dsec.band
        layers.dem_path, layers.dem_z_unit, layers.dem_band = dem, z, band
        # Opened now, so an unreadable DEM, a multi-band one without `band`, or an unknown
        # vertical unit fails before any work.
        layers.dem = open_dem(dem, z_unit=z, band=band)
        warn_if_dem_far(layers.dem, crs, what=f"DEM {_source(dsec, path)}")
    return layers
