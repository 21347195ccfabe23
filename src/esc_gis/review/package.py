"""A submitted plan package: its map layers and its ``plan.toml`` of non-map facts.

A package is one of:

- a GeoPackage ``plan.gpkg`` (or a File Geodatabase ``plan.gdb``) with layers named as in
  :data:`LAYERS`;
- a folder holding one file per layer (``site_boundary.shp``, ``bmps.geojson``, ...);
- a CAD drawing ``plan.dxf`` whose layer names ``plan.toml`` maps to ours (``[dxf.layers]``),
  with the CRS in ``plan.toml`` (DXF carries none).

``plan.toml`` sits in the folder (or beside the file). Reading never fails on what the
package holds: a missing layer, a wrong geometry type, no CRS or an unknown DXF layer
becomes a :class:`~esc_gis.errors.Problem` that the review reports, so a reviewer gets a
report that says what is missing instead of a crash.
"""

from __future__ import annotations

__all__ = ["LAYERS", "PlanPackage", "read_package"]

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pyogrio
import shapely

from esc_gis._vsi import ArchivePath, as_path, is_vsi, missing_reason
from esc_gis.crs import coordinates_refusal
from esc_gis.errors import CoordinatesNotInCRSError, LayerReadError, NotAPlanPackageError, Problem, ValidationError
from esc_gis.styles import STYLE_TABLE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Layer -> (allowed geometry families, required, what it is). What it is reaches the user in a
#: problem, so it cites nothing (the checks' citations are the profile's): the site map's three
#: layers are § 540-9A(3), the BMPs § 540-9A(6), stockpiles, streets and inlets § 540-7B(3)(a).
LAYERS: dict[str, tuple[frozenset[str], bool, str]] = {
    "site_boundary": (frozenset({"polygon"}), True, "the property lines"),
    "disturbed_limits": (frozenset({"polygon"}), True, "the limits of land disturbance"),
    "drainage": (frozenset({"line", "point"}), True, "drainage patterns: flow lines or arrows"),
    "bmps": (frozenset({"point", "line", "polygon"}), True, "the proposed BMPs with a `type`"),
    "stockpiles": (frozenset({"polygon", "point"}), False, "soil stockpiles, with `days`"),
    "streets": (frozenset({"line", "polygon"}), False, "streets the site meets"),
    "inlets": (frozenset({"point", "polygon"}), False, "storm drain inlets"),
}
_FAMILY = {0: "point", 4: "point", 1: "line", 5: "line", 2: "line", 3: "polygon", 6: "polygon"}
_SUFFIXES = (".gpkg", ".shp", ".geojson", ".json", ".fgb", ".zip")


@dataclass
class PlanPackage:
    """What a plan package holds, as read.

    Attributes
    ----------
    source : str
    facts : dict
        ``plan.toml`` as parsed (empty when missing or unreadable).
    layers : dict of str -> GeoDataFrame
        Every layer that could be read, in its own CRS (or the CRS ``plan.toml`` gives).
    problems : list of Problem
        Everything wrong with the package itself.
    folder : str
        The folder ``plan.toml`` sits in: files it names (``[rusle2] schedule_file``) are
        relative to it (:meth:`file`). A folder inside an archive is a GDAL virtual path.
    """

    source: str
    facts: dict[str, Any] = field(default_factory=dict)
    layers: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    folder: str = ""

    def file(self, name: str) -> str:
        """Return the path of a file ``plan.toml`` names, relative to :attr:`folder` unless absolute.

        Inside an archive it stays inside it (``/vsizip//data/plan.zip/plan/phases.csv``):
        :func:`os.path.join` would do too, but a :class:`pathlib.Path` folds the ``//`` of an
        absolute archive, so the join is made here, once.

        Examples
        --------
        >>> PlanPackage("p", folder="/vsizip//data/plan.zip/plan").file("phases.csv")
        '/vsizip//data/plan.zip/plan/phases.csv'
        """
        return os.path.join(self.folder or ".", name)


def _read_facts(path: Path | ArchivePath, pkg: PlanPackage) -> None:
    if not path.exists():
        pkg.problems.append(
            Problem(
                str(path),
                None,
                "is missing: the plan's facts (parties, legal description, "
                "claimed areas, schedule, narrative) are not in the package.",
                "add plan.toml; see examples/plans/README.md.",
            )
        )
        return
    try:
        pkg.facts = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        pkg.problems.append(Problem(str(path), None, f"cannot be read as TOML ({exc}).", "fix the syntax."))


def _check_layer(
    name: str,
    gdf: gpd.GeoDataFrame,
    source: str,
    pkg: PlanPackage,
    crs: Any,
    refused: list[Problem],
    repair_sqft: float = 1.0,
) -> None:
    families, _, what = LAYERS[name]
    if gdf.crs is None and crs is not None:
        gdf = gdf.set_crs(crs)
    if gdf.crs is None:
        pkg.problems.append(
            Problem(
                source,
                None,
                f"layer {name} has no CRS.",
                'define it in your GIS, or give crs = "EPSG:xxxx" in plan.toml.',
            )
        )
        return
    # The readers' one check (esc_gis.crs): feet labelled as degrees would be reviewed as a
    # plan drawn nowhere. Refused like every other reader (exit 1, no report), not drafted as a
    # disapproval: the plan may be right and only its label wrong.
    refusal = coordinates_refusal(gdf.total_bounds, gdf.crs, what=f"{source}: layer {name}")
    if refusal is not None:
        raise CoordinatesNotInCRSError(refusal)
    geoms = gdf.geometry.to_numpy()
    ok = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    kinds = np.array([_FAMILY.get(int(t), "other") for t in shapely.get_type_id(geoms)])
    wrong = ok & ~np.isin(kinds, list(families))
    if wrong.any():
        got = ", ".join(sorted({str(g.geom_type) for g in geoms[wrong]}))
        pkg.problems.append(
            Problem(
                source,
                int(np.flatnonzero(wrong)[0]) + 1,
                f"layer {name} has {int(wrong.sum())} feature(s) of type {got}; it holds {what}, "
                f"as {' or '.join(sorted(families))} features.",
                "redraw those features.",
            )
        )
    # The one rule for an invalid polygon (esc_gis.validate.check_polygons), as `esc-gis screen`
    # applies it: a repair that keeps the shape drawn is made and said; one that would change its
    # area or split it (a bow-tie) is refused with the others at the end of read_package.
    from esc_gis.validate import check_polygons

    checks = check_polygons(np.where(ok & ~wrong, geoms, None), gdf.crs, tolerance_sqft=repair_sqft)
    if checks:
        gdf = gdf.copy()
        fixed = gdf.geometry.to_numpy().copy()
    repaired = []
    for i, c in sorted(checks.items()):
        if c.refused or shapely.is_empty(c.geometry):
            message, fix = c.problem(gdf.crs)
            refused.append(Problem(source, i + 1, f"layer {name}: the feature {message}", fix))
            ok[i] = False
        else:
            fixed[i] = c.geometry
            repaired.append(i + 1)
    if checks:
        gdf[gdf.geometry.name] = fixed
    if repaired:
        pkg.problems.append(
            Problem(
                source,
                repaired[0],
                f"layer {name} has {len(repaired)} invalid geometry(ies) (feature(s) "
                f"{', '.join(map(str, repaired))}); repaired for the review, their area and parts as drawn.",
                "fix them in the drawing.",
            )
        )
    keep = ok & ~wrong
    if keep.any():
        pkg.layers[name] = gdf[keep].reset_index(drop=True)
    elif LAYERS[name][1]:
        pkg.problems.append(Problem(source, None, f"layer {name} has no usable features.", f"draw {what}."))


def read_package(path: str | os.PathLike[str], *, repair_sqft: float = 1.0) -> PlanPackage:
    """Read a plan package, collecting every problem instead of raising.

    Parameters
    ----------
    path : path-like
        A ``.gpkg``, a File Geodatabase ``.gdb``, a ``.dxf`` or a folder (see the module's
        description).

    Returns
    -------
    PlanPackage

    Raises
    ------
    LayerReadError
        If ``path`` does not exist (what it holds is never raised, but reported); for a
        path inside an archive (``/vsizip/plan.zip/plan.gpkg``, read as GDAL reads it),
        if the archive or the member is absent.
    NotAPlanPackageError
        If ``path`` cannot be a plan package: an empty file, a file GDAL cannot open (a picture
        renamed ``.gpkg``), or a dataset or folder holding none of the plan's layers.
    CoordinatesNotInCRSError
        If a layer's coordinates cannot be in the CRS it is labelled with (esc_gis.crs).
    ValidationError
        If a polygon is invalid and a repair would change its area or split it (a bow-tie):
        every such feature, naming its layer, row, where it crosses itself and the fix
        (:func:`esc_gis.validate.check_polygons`, the rule of every command).
    """
    # A GDAL virtual path (a package sent as a zip) is walked in its archive, given to GDAL as written.
    p = as_path(path)
    _check_there(p)
    inner = _the_one_dataset(p)
    if inner is not None:
        # A folder holding the plan's one GeoPackage (or .gdb, .dxf) beside plan.toml, as
        # applicants send it: that file is the package.
        return read_package(inner, repair_sqft=repair_sqft)
    pkg = PlanPackage(str(p))
    dataset = p.is_file() or p.suffix.lower() == ".gdb"  # a File Geodatabase is a folder GDAL opens
    if p.is_file() and p.stat().st_size == 0:
        raise _not_a_package(p, "the file is empty")
    folder = p.parent if dataset else p
    pkg.folder = str(folder)
    _read_facts(folder / "plan.toml", pkg)
    crs = pkg.facts.get("crs")
    found: dict[str, tuple[gpd.GeoDataFrame, str]] = {}
    reading = p  # the file being read, for the message if it cannot be
    try:
        if not dataset:
            files: list[Path | ArchivePath] = sorted(p.iterdir(), key=os.fspath)
            for f in files:
                if f.suffix.lower() in _SUFFIXES and f.stem in LAYERS and f.stem not in found:
                    reading = f
                    found[f.stem] = (pyogrio.read_dataframe(f), f.name)
        elif p.suffix.lower() == ".dxf":
            found = _read_dxf(p, pkg)
        else:
            found = _read_dataset_layers(p, pkg)
    except Exception as exc:  # GDAL errors of every kind mean: not a readable package
        from esc_gis.io import unreadable_reason

        # The readers' own words (an empty file, an image renamed .gpkg), never GDAL's or Python's.
        why, _ = unreadable_reason(os.fspath(reading), exc)  # a path inside an archive as written
        raise _not_a_package(p, f"{reading.name} {why.rstrip('.')}") from exc
    if not found and p.suffix.lower() != ".dxf":  # a DXF without its layer map is a package, said below
        raise _not_a_package(p, "it holds none of the plan's layers" if dataset else "the folder holds none of them")
    refused: list[Problem] = []
    for name, (required, what) in ((n, (v[1], v[2])) for n, v in LAYERS.items()):
        if name in found:
            gdf, source = found[name]
            _check_layer(name, gdf, source, pkg, crs, refused, repair_sqft)
        elif required:
            pkg.problems.append(Problem(str(p), None, f"has no {name} layer: {what}.", f"add a layer named {name}."))
    if refused:
        # No review of a shape nobody drew: every such feature of every layer, at once.
        raise ValidationError(refused)
    return pkg


def _check_there(p: Path | ArchivePath) -> None:
    """Refuse a package path that names nothing: a mistyped path is not a broken package.

    Raises
    ------
    LayerReadError
        If ``p`` is absent; inside an archive, naming the archive or the member that is.
    """
    if is_vsi(p) and (missing := missing_reason(p)) is not None:
        raise LayerReadError(f"{str(p)!r}: {missing}")
    if not p.exists():
        # A report disapproving a package that is not there would mislead.
        msg = f"{str(p)!r}: no such plan package; give the plan's .gpkg, .gdb, .dxf or folder."
        raise LayerReadError(msg)


def _read_dataset_layers(p: Path | ArchivePath, pkg: PlanPackage) -> dict[str, tuple[gpd.GeoDataFrame, str]]:
    """Return the plan's layers of GeoPackage or File Geodatabase ``p``; layers it does not use go to ``pkg.problems``.

    Raises
    ------
    Exception
        Whatever GDAL raises for a file it cannot read (:func:`read_package` words it).
    """
    # QGIS's style table (a package saved from QGIS with its styles) is not a plan layer.
    names = [str(n) for n in pyogrio.list_layers(p)[:, 0] if str(n) != STYLE_TABLE]
    found = {name: (pyogrio.read_dataframe(p, layer=name), f"{p.name}:{name}") for name in names if name in LAYERS}
    unknown = [n for n in names if n not in LAYERS]
    if unknown:
        pkg.problems.append(
            Problem(
                str(p),
                None,
                f"has layers the review does not use: {', '.join(unknown)}.",
                f"name layers {', '.join(LAYERS)}.",
            )
        )
    return found


def _the_one_dataset(p: Path | ArchivePath) -> Path | ArchivePath | None:
    """Return the one plan file (``.gpkg``, ``.gdb``, ``.dxf``) in folder ``p``, when the folder holds no layer files.

    Raises
    ------
    NotAPlanPackageError
        If the folder holds several such files and no layer files: which one is meant is not said.
    """
    if not p.is_dir() or p.suffix.lower() == ".gdb":
        return None
    entries: list[Path | ArchivePath] = list(p.iterdir())
    if any(f.suffix.lower() in _SUFFIXES and f.stem in LAYERS for f in entries):
        return None  # a folder package: one file per layer
    found = sorted(
        (f for f in entries if f.suffix.lower() in (".gpkg", ".dxf") or (f.suffix.lower() == ".gdb" and f.is_dir())),
        key=os.fspath,
    )
    if len(found) > 1:
        names = ", ".join(f.name for f in found)
        raise _not_a_package(p, f"the folder holds {len(found)} plan files ({names}); give the one to review")
    return found[0] if found else None


def _not_a_package(p: Path | ArchivePath, why: str) -> NotAPlanPackageError:
    """Say that ``p`` is not a plan package, why, and what one is."""
    required = ", ".join(n for n, v in LAYERS.items() if v[1])
    optional = ", ".join(n for n, v in LAYERS.items() if not v[1])
    return NotAPlanPackageError(
        f"{str(p)!r}: this is not a plan package ({why}). Expected a GeoPackage (.gpkg), File Geodatabase "
        f"(.gdb) or DXF drawing, or a folder of shapefiles/GeoJSON, holding the layers {required} "
        f"(and optionally {optional}), with plan.toml beside it; no report is written."
    )


def _read_dxf(p: Path | ArchivePath, pkg: PlanPackage) -> dict[str, tuple[gpd.GeoDataFrame, str]]:
    """Split a DXF's entities into our layers by the ``[dxf.layers]`` map of plan.toml.

    The map goes from CAD layer to package layer; ``"bmps:1056"`` also gives the BMP type,
    since CAD layers carry a type in their name, not in an attribute.
    """
    mapping = (pkg.facts.get("dxf") or {}).get("layers") or {}
    if not mapping:
        pkg.problems.append(
            Problem(
                str(p),
                None,
                "is a DXF but plan.toml has no [dxf.layers] map.",
                'add e.g. [dxf.layers] "C-PROP" = "site_boundary", "C-ESC-SILT" = "bmps:1056".',
            )
        )
        return {}
    entities = pyogrio.read_dataframe(p)
    cad = entities["Layer"].astype(str).to_numpy()
    unknown = sorted(set(cad) - set(mapping))
    if unknown:
        pkg.problems.append(
            Problem(
                str(p),
                None,
                f"has CAD layers the map does not name: {', '.join(unknown)}; they are left out of the review.",
                'map them in [dxf.layers] (or to "ignore").',
            )
        )
    found: dict[str, tuple[gpd.GeoDataFrame, str]] = {}
    for target in sorted({str(v).split(":")[0] for v in mapping.values()} - {"ignore"}):
        if target not in LAYERS:
            pkg.problems.append(
                Problem(
                    str(p),
                    None,
                    f"[dxf.layers] maps to {target!r}, which is not a plan layer.",
                    f"use one of {', '.join(LAYERS)}.",
                )
            )
            continue
        cad_layers = [k for k, v in mapping.items() if str(v).split(":")[0] == target]
        # CAD draws areas as closed polylines: a polygon layer's closed lines become polygons.
        rows = entities[np.isin(cad, cad_layers)].copy()
        if "polygon" in LAYERS[target][0] and "line" not in LAYERS[target][0]:
            geoms = rows.geometry.to_numpy().copy()
            closed = np.zeros(len(geoms), dtype=bool)
            lines = shapely.get_type_id(geoms) == 1
            closed[lines] = shapely.is_closed(geoms[lines])
            if closed.any():
                coords, index = shapely.get_coordinates(geoms[closed], return_index=True)
                geoms[closed] = shapely.polygons(shapely.linearrings(coords, indices=index))
            rows = rows.set_geometry(geoms)
        if target == "bmps":
            rows["type"] = [str(mapping[c]).split(":", 1)[1] if ":" in str(mapping[c]) else None for c in rows["Layer"]]
        found[target] = (gpd.GeoDataFrame(rows, geometry=rows.geometry.name, crs=pkg.facts.get("crs")), f"{p.name}")
    return found
