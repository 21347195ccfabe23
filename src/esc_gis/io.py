"""Reading and writing vector files: pyogrio (GDAL, Arrow batches) for bulk I/O.

Reading accepts anything GDAL reads, zipped shapefiles and GDAL's virtual paths
(``/vsizip/sites.zip/sites.geojson``, given to GDAL as they are: :mod:`esc_gis._vsi`) included;
problems come back as :class:`~esc_gis.errors.LayerReadError` naming the file. Writing chooses
the format by the output's extension, refuses to overwrite without ``overwrite=True``, and
writes to a temporary file that is renamed into place only when complete, so a failure never
leaves a partial output behind; ``-`` is GeoJSON on standard output. GeoJSON is written as
RFC 7946 asks (EPSG:4326 longitude/latitude); any other format in the layer's CRS, or in
``dst_crs`` (the geometry alone transformed, at the write). A layer mixing single and multi
parts of one kind (Polygon and MultiPolygon) is written all multi (:func:`promote_to_multi`),
so every format declares one geometry type.
"""

from __future__ import annotations

__all__ = [
    "GPKG_VERSION",
    "OUTPUT_FORMATS",
    "RUN_FINDINGS_COLUMNS",
    "check_output_file",
    "check_output_path",
    "csv_output",
    "feature_numbers",
    "prj_path",
    "promote_to_multi",
    "read_class_map",
    "read_layer",
    "run_findings_path",
    "unreadable_message",
    "unreadable_reason",
    "write_csv",
    "write_layer",
    "write_run_findings",
]

import csv
import os
import re
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely

from esc_gis._csvt import csv_table_output, frame_types, write_csvt
from esc_gis._outputs import atomic_output, check_output_file, check_sidecar, check_target, drop_sidecar, sidecar_path
from esc_gis._vsi import is_stdout, is_vsi, layer_stream, missing_reason
from esc_gis.crs import check_coordinates
from esc_gis.errors import CRSError, LayerReadError, LayerSetError, OutputExistsError, OutputFormatError
from esc_gis.findings import findings_text
from esc_gis.styles import STYLE_TABLE, add_layer_style, describe_layer

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Output extension -> what is written.
OUTPUT_FORMATS = {
    ".gpkg": "GeoPackage",
    ".parquet": "GeoParquet",
    ".geoparquet": "GeoParquet",
    ".geojson": "GeoJSON",
    ".json": "GeoJSON",
    ".csv": "CSV (geometry as WKT)",
}

#: The GeoPackage version written: 1.3, which GDAL 3.6 and QGIS 3.22 (Debian 12's) open without
#: the warning GDAL 3.7+'s default, 1.4, gives them; nothing written here needs 1.4. The
#: registry's GeoPackage is 1.3 too (``registry/store/gpkg.py``).
GPKG_VERSION = "1.3"


def read_layer(
    path: str | os.PathLike[str],
    *,
    layer: str | None = None,
    where: str | None = None,
    dates_as_text: bool = False,
) -> gpd.GeoDataFrame:
    """Read one vector layer with pyogrio (Arrow).

    Parameters
    ----------
    path : str or PathLike
        Any file GDAL reads: GeoPackage, shapefile (or a ``.zip`` holding one), GeoJSON,
        FlatGeobuf, GeoParquet, File Geodatabase, ...
    layer : str, optional
        The layer to read from a multi-layer source. Required when there are several.
    where : str, optional
        An OGR SQL ``WHERE`` clause (``"CONAME = 'WINNEBAGO'"``) that GDAL applies while
        reading, so a statewide file is cut down before it reaches memory.
    dates_as_text : bool, default False
        Keep dates as written, so that they can be checked: GDAL's GeoJSON reader would
        otherwise turn "2026-02-30" into 2026-03-02 without a word.

    Returns
    -------
    geopandas.GeoDataFrame
        With a 0-based RangeIndex, so row ``i`` is feature ``i + 1`` of the file.

    Raises
    ------
    LayerReadError
        If the file is missing or unreadable, the layer is ambiguous or absent, the
        ``where`` clause is invalid, or the layer has no features (after ``where``).
    CoordinatesNotInCRSError
        If the coordinates cannot be in the layer's CRS (:func:`esc_gis.crs.check_coordinates`):
        a GeoJSON of feet without its ``crs`` member, metres labelled EPSG:4326.
    """
    name = os.fspath(path)
    p = Path(name)
    # A GDAL virtual path (/vsizip/...) goes to GDAL as given: Path() would fold its "//".
    src: str | Path = name if is_vsi(name) else p
    missing = missing_reason(name) if is_vsi(name) else (None if p.exists() else "no such file. Check the path.")
    if missing is not None:
        msg = f"{name}: {missing}"
        raise LayerReadError(msg)
    try:
        if p.suffix.lower() in (".parquet", ".geoparquet"):
            if where is not None:
                # GDAL here has no Parquet driver, so an SQL filter cannot be pushed down.
                msg = f"{name}: where= is not supported for GeoParquet; filter the file first."
                raise LayerReadError(msg)
            if src is not p:
                # Parquet is read by pyarrow, which has no /vsi file system.
                msg = f"{name}: GeoParquet is read from a file, not from inside an archive; extract it first."
                raise LayerReadError(msg)
            gdf = gpd.read_parquet(p)
        elif p.suffix.lower() == ".csv" and (src is not p or p.is_file()):
            gdf = _read_csv(src, where)
        else:
            if layer is None:
                layer = _only_layer(src, name)
            if dates_as_text:
                # GeoJSON guesses date types (and rolls bad days over); other drivers keep their own.
                opts = {"DATE_AS_STRING": "YES"} if p.suffix.lower() in (".geojson", ".json") else {}
                gdf = pyogrio.read_dataframe(src, layer=layer, where=where, datetime_as_string=True, **opts)
            else:
                gdf = pyogrio.read_dataframe(src, layer=layer, where=where, use_arrow=True)
    except LayerReadError:
        raise
    except Exception as exc:  # GDAL, Arrow and Parquet errors all mean: unreadable input
        if where is not None and _bad_where(src, layer, where):
            msg = (
                f"{name}: the where= clause {where!r} is not valid SQL for this layer ({exc}); "
                "check its field names and quotes."
            )
            raise LayerReadError(msg) from None
        raise LayerReadError(unreadable_message(src, exc)) from None
    if not isinstance(gdf, gpd.GeoDataFrame) or gdf.geometry.name not in gdf:
        msg = f"{name}: has no geometry column; give a layer of polygons."
        raise LayerReadError(msg)
    if len(gdf) == 0:
        picked = f" where {where}" if where else ""
        msg = f"{name}: the layer is empty (no features{picked})."
        raise LayerReadError(msg)
    if gdf.crs is not None:
        # Every command reads through here: a CRS label the numbers contradict is refused
        # once, before anything is measured (a layer without one is checked by assign_crs).
        check_coordinates(gdf.total_bounds, gdf.crs, what=name)
    return gdf.reset_index(drop=True)


#: The start of files people give by mistake, with what they are (item 4 of issue 34).
_NOT_GIS = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"\xd0\xcf\x11\xe0", "an old Microsoft Office document"),
    (b"PK\x03\x04", "a ZIP archive (a Word or Excel file, or a zipped layer: unzip it first)"),
)
#: The formats a layer may come in, for the fix of every unreadable input.
_LAYER_FORMATS = (
    "a GeoPackage (.gpkg), a shapefile (.shp with its .shx, .dbf and .prj), GeoJSON, FlatGeobuf, "
    "GeoParquet, a CSV with a WKT column, or a File Geodatabase (.gdb)"
)
#: GDAL's advice for a file it does not recognise: of no use to a user of esc-gis.
_GDAL_DRIVER_ADVICE = re.compile(r"[;.]?\s*It might help to specify the correct driver.*$", re.DOTALL)


def unreadable_message(path: str | Path, exc: BaseException | None = None, *, kind: str = "vector layer") -> str:
    """Say, in our words, why a file cannot be read as a layer (or raster), and the fix.

    The one message for every reader (:func:`read_layer`, :func:`feature_numbers`, the
    streamed screening, :func:`esc_gis.terrain.open_dem`, the plan review's package): an
    empty file, an image or a text file given by mistake is named as such; GDAL's advice to
    prefix a driver name and Python's exception names are left out.

    Parameters
    ----------
    path : pathlib.Path
        The input.
    exc : BaseException, optional
        GDAL's error, whose own words are kept when the format was recognised (a damaged
        file, a locked one).
    kind : str, default "vector layer"
        What was expected (``"raster"`` for a DEM).

    Returns
    -------
    str
        ``"<path>: <why>. Fix: <fix>"``.

    Examples
    --------
    >>> unreadable_message(Path("nowhere.gpkg"))
    'nowhere.gpkg: no such file. Fix: check the path.'
    """
    why, fix = unreadable_reason(path, exc, kind=kind)
    return f"{path}: {why} Fix: {fix}"


def unreadable_reason(
    path: str | Path, exc: BaseException | None = None, *, kind: str = "vector layer"
) -> tuple[str, str]:
    """Return why a file cannot be read and the fix, as :func:`unreadable_message` words them (a Problem's parts).

    Parameters
    ----------
    path, exc, kind
        As :func:`unreadable_message`.

    Returns
    -------
    tuple of str
        ``(why, fix)``; a file that cannot even be opened is described, never raised about.
    """
    formats = _LAYER_FORMATS if kind == "vector layer" else "a GeoTIFF, or another raster GDAL reads (.vrt, .asc, .img)"
    fix = f"give {formats}; if it is one, it may be cut short or damaged: export it again."
    if is_vsi(path):
        # Inside an archive (or another GDAL virtual file): absent, or GDAL's own words.
        missing = missing_reason(path)
        if missing is not None:
            why, _, how = missing.partition(" Fix: ")
            return why, how
        said = _GDAL_DRIVER_ADVICE.sub("", str(exc or "")).strip().rstrip(".")
        return f"cannot be read as a {kind} ({said or 'GDAL cannot open it'}).", fix
    path = Path(path)
    if not path.exists():
        return "no such file.", "check the path."
    if path.is_dir():
        if kind == "raster":
            return "is a folder esc-gis cannot read as a raster.", fix
        return (
            "is a folder esc-gis cannot read as vector data.",
            "give a file, a File Geodatabase (.gdb) or a folder of shapefiles (with layer=NAME).",
        )
    try:
        with path.open("rb") as f:
            head = f.read(512)
    except OSError as err:
        return f"cannot be opened ({err.strerror or 'permission denied'}).", "check that you may read it."
    if not head:
        return f"cannot be read as a {kind}: the file is empty (0 bytes).", fix
    what = next((label for magic, label in _NOT_GIS if head.startswith(magic)), None)
    if what is None and _is_text(head):
        json_like = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")
        # GDAL says the same of a GeoJSON cut short as of a letter: tell them apart.
        if json_like:
            what = "JSON text that is no readable GeoJSON (cut short, or not GeoJSON)"
        else:
            what = "a text file in no GIS format esc-gis knows"
    said = _GDAL_DRIVER_ADVICE.sub("", str(exc or "")).strip().rstrip(".")
    unknown_format = exc is None or "not recognized as" in said or "not recognised as" in said
    if what is not None or unknown_format:
        return f"cannot be read as a {kind}: it is {what or 'in no format esc-gis knows'}.", fix
    # A format GDAL knew, but could not read (damaged, locked): its own words, without Python's.
    return f"cannot be read as a {kind} ({said}).", fix


def _is_text(head: bytes) -> bool:
    """Whether a file's first bytes look like text (UTF-8 without control bytes but tab and line ends)."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        try:
            text = head[:-3].decode("utf-8")  # a character cut at 512 bytes
        except UnicodeDecodeError:
            return False
    return all(c.isprintable() or c in "\t\r\n\ufeff" for c in text)


def _only_layer(p: str | Path, name: str) -> str | None:
    """Name the one data layer of a source, or None for a single-layer source.

    QGIS's style table (``layer_styles``, written by QGIS and by this toolkit) is not data:
    a GeoPackage holding one layer and its styles is read as that layer.

    Raises
    ------
    LayerReadError
        If the source holds several data layers.
    """
    layers = [str(n) for n in pyogrio.list_layers(p)[:, 0]]
    data = [n for n in layers if n != STYLE_TABLE]
    if len(data) > 1:
        msg = f"{name} holds {len(data)} layers ({', '.join(data)}); name one with layer=NAME."
        raise LayerReadError(msg)
    # Named only when it matters: pyogrio warns about several layers when given none.
    return data[0] if len(layers) > 1 and data else None


def feature_numbers(path: str | os.PathLike[str], *, layer: str | None = None, where: str) -> tuple[np.ndarray, int]:
    """Feature numbers in the file of the features a ``where`` clause picks, and the file's count.

    A layer read with ``where`` keeps the numbering of the file (row ``n`` is the file's
    ``n``-th feature), so messages and generated ids name the same feature with or without
    the clause.

    Parameters
    ----------
    path : str or PathLike
    layer : str, optional
    where : str
        As for :func:`read_layer`.

    Returns
    -------
    numbers : numpy.ndarray of int
        1-based, in the order :func:`read_layer` returns the features.
    total : int
        The number of features in the layer without the clause.

    Raises
    ------
    LayerReadError
        If the file cannot be read.
    """
    try:
        src = os.fspath(path) if is_vsi(path) else Path(path)  # a /vsi path as given (Path folds "//")
        if layer is None:
            layer = _only_layer(src, str(path))
        every = pyogrio.read_dataframe(src, layer=layer, read_geometry=False, columns=[], fid_as_index=True)
        # Fields stay in this read: some drivers (OpenFileGDB) drop the filter on ignored fields.
        picked = pyogrio.read_dataframe(src, layer=layer, where=where, read_geometry=False, fid_as_index=True)
    except LayerReadError:
        raise
    except Exception as exc:  # the same errors read_layer reports
        raise LayerReadError(unreadable_message(os.fspath(path) if is_vsi(path) else Path(path), exc)) from None
    return every.index.get_indexer(picked.index) + 1, len(every)


#: Name endings of columns holding measures (the project names units): read back from CSV as numbers.
_MEASURE_SUFFIXES = ("_sqft", "_acres", "_ft", "_pct", "_share", "_cuyd")


def _read_csv(p: str | Path, where: str | None) -> gpd.GeoDataFrame | pd.DataFrame:
    """Read a CSV layer: geometry as WKT in ``geometry`` (or ``WKT``), its CRS in a ``crs`` column.

    A CSV with a ``.csvt`` beside it (every CSV esc-gis writes: :mod:`esc_gis._csvt`) is read
    with the types it names, as GDAL reads it: text stays text (ids keep their leading zeros),
    numbers are numbers, and booleans with a null come back as GDAL gives them from a
    GeoPackage too (1.0, 0.0, NaN). Without one, everything is read as text, so ids keep their
    leading zeros; then columns named for a measure (``*_sqft``, ``*_ft``, ...) become numbers
    and columns holding only True/False become booleans: a screening CSV reads back with the
    types it was written with either way.
    """
    raw = pyogrio.read_dataframe(
        p, where=where, GEOM_POSSIBLE_NAMES="geometry,WKT", KEEP_GEOM_COLUMNS="NO", EMPTY_STRING_AS_NULL="YES"
    )
    for col in [c for c in raw.columns if c != getattr(raw, "_geometry_column_name", None)]:
        values = raw[col]
        if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
            continue
        present = values.dropna().astype(str)
        if str(col).lower().endswith(_MEASURE_SUFFIXES):
            numbers = pd.to_numeric(values, errors="coerce")
            if numbers.notna().sum() == len(present):
                raw[col] = numbers.astype(float)
        elif len(present) and present.isin(["True", "False"]).all() and values.notna().all():
            raw[col] = present.eq("True").to_numpy()
    if isinstance(raw, gpd.GeoDataFrame) and raw.crs is not None:
        raw = raw.set_crs(_with_code(raw.crs), allow_override=True)
    if not isinstance(raw, gpd.GeoDataFrame) or "crs" not in raw.columns:
        return raw
    crs_values = sorted({str(v).strip() for v in raw["crs"].dropna() if str(v).strip()})
    if len(crs_values) > 1:
        msg = f"{p}: the crs column holds several CRSs ({', '.join(crs_values[:3])}); give one CRS per file."
        raise LayerReadError(msg)
    gdf = raw.drop(columns="crs")
    if crs_values and gdf.crs is None:
        gdf = gdf.set_crs(crs_values[0])
    return gdf


def _with_code(crs: Any) -> Any:
    """Return ``crs`` as its EPSG definition when a ``.prj`` (ESRI WKT, which drops codes) is one.

    GDAL reads a CSV's ``.prj`` as ESRI WKT without its code; the same CRS by its code reads
    back as written (``EPSG:7594``), and nothing moves: it is used only when equal.
    """
    from pyproj import CRS

    found = crs.to_authority(min_confidence=70)
    if found is None:
        return crs
    coded = CRS.from_authority(*found)
    return coded if coded.equals(crs, ignore_axis_order=True) else crs


def _bad_where(path: str | Path, layer: str | None, where: str) -> bool:
    """Whether GDAL refuses ``where`` itself (not the file): the same read without it succeeds."""
    try:
        pyogrio.read_info(path, layer=layer)
    except Exception:
        return False
    try:
        pyogrio.read_dataframe(path, layer=layer, where=where, read_geometry=False, max_features=1)
    except Exception:
        return True
    return False


def read_class_map(path: str | os.PathLike[str]) -> dict[str, str]:
    r"""Read a table of source codes to water classes.

    Two forms are read: a TOML file of ``"code" = "class"`` pairs (at the top level or
    under ``[class_map]``), or a CSV whose first two columns are the code and the class
    (a header row naming them ``code,class`` is skipped).

    Parameters
    ----------
    path : path
        ``.toml`` or ``.csv``.

    Returns
    -------
    dict of str to str

    Raises
    ------
    LayerSetError
        If the file is missing, unreadable, or not one of the two forms.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "wwi.csv"
    >>> _ = p.write_text("code,class\nE2K,wetland_highly_susceptible\nT3K,wetland\n")
    >>> read_class_map(p)
    {'E2K': 'wetland_highly_susceptible', 'T3K': 'wetland'}
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        msg = f"class map {str(path)!r} cannot be read ({exc.strerror or exc}); give a .toml or .csv file."
        raise LayerSetError(msg) from None
    if p.suffix.lower() == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            msg = f"class map {str(path)!r} is not valid TOML: {exc}"
            raise LayerSetError(msg) from None
        from esc_gis.config.class_map import class_map_codes

        codes = class_map_codes(data)
        if codes is None:
            msg = f'class map {str(path)!r}: expected "code" = "class" pairs of text.'
            raise LayerSetError(msg)
        return codes
    if p.suffix.lower() == ".csv":
        rows = [r for r in csv.reader(text.splitlines()) if any(c.strip() for c in r)]
        if rows and [c.strip().lower() for c in rows[0][:2]] == ["code", "class"]:
            rows = rows[1:]
        short = [i + 1 for i, r in enumerate(rows) if len(r) < 2 or not r[0].strip() or not r[1].strip()]
        if short:
            msg = f"class map {str(path)!r}: rows {short[:10]} need a code and a class."
            raise LayerSetError(msg)
        return {r[0].strip(): r[1].strip() for r in rows}
    msg = f"class map {str(path)!r}: give a .toml or .csv file."
    raise LayerSetError(msg)


def check_output_path(
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    update: bool = False,
    layer: str | None = None,
    dst_crs: Any | None = None,
) -> str:
    """Check an output path before any work is done; return its format's name.

    With ``update``, an existing GeoPackage is to receive the new ``layer`` beside its own (as
    ``ogr2ogr -update -nln``): a layer of that name already there is refused, unless
    ``overwrite`` is given too, which replaces that one layer (``ogr2ogr -update -overwrite``).
    ``dst_crs``, the CRS the layer is to be written in, is checked too (any CRS; a GeoJSON
    output's is EPSG:4326 only, as RFC 7946 says).

    Raises
    ------
    CRSError
        If ``dst_crs`` names no CRS, or is not EPSG:4326 for a GeoJSON output.
    OutputFormatError
        If the extension is not one of :data:`OUTPUT_FORMATS`, or ``update`` is asked of a
        format that holds one layer.
    OutputExistsError
        If the file exists and neither ``overwrite`` nor ``update`` is given, or ``update``
        without ``overwrite`` meets a layer of the same name.
    LayerReadError
        If ``update`` is given a file that is not a GeoPackage GDAL can open.
    """
    if is_stdout(path):
        # Standard output (-, /vsistdout/): one GeoJSON layer, nothing to overwrite, no file beside it.
        if update:
            msg = 'update=True adds a layer to a GeoPackage; standard output ("-") takes one GeoJSON layer.'
            raise OutputFormatError(msg)
        if dst_crs is not None:
            _check_dst_crs(dst_crs, "GeoJSON")
        return "GeoJSON"
    p = Path(path)
    fmt = OUTPUT_FORMATS.get(p.suffix.lower())
    if fmt is None:
        what = p.suffix or "a file without extension"
        msg = f"{str(path)!r}: cannot write {what!r}; use one of {', '.join(OUTPUT_FORMATS)}."
        raise OutputFormatError(msg)
    if dst_crs is not None:
        _check_dst_crs(dst_crs, fmt)
    if update:
        if fmt != "GeoPackage":
            msg = f"{str(path)!r}: update=True adds a layer to a GeoPackage (.gpkg); a {fmt} file holds one layer."
            raise OutputFormatError(msg)
        if p.exists():
            _check_new_layer(p, layer or "screening", replace=overwrite)
            check_target(p, overwrite=True)  # still never an input, in a folder that can be written
            return fmt
    check_target(p, overwrite=overwrite)
    if fmt.startswith("CSV"):
        _check_prj(p, overwrite=overwrite)
    return fmt


def _check_dst_crs(dst_crs: Any, fmt: str) -> Any:
    """Return ``dst_crs`` as a pyproj CRS, refused if it names none, or is not EPSG:4326 for GeoJSON.

    Raises
    ------
    CRSError
    """
    from esc_gis.crs import parse_crs

    crs = parse_crs(dst_crs, what="Output CRS")
    if fmt == "GeoJSON" and not crs.equals("EPSG:4326", ignore_axis_order=True):
        msg = (
            f"GeoJSON is written in longitude/latitude (EPSG:4326, as RFC 7946 says), not {dst_crs}; "
            "drop dst_crs=, or write .gpkg, .parquet or .csv."
        )
        raise CRSError(msg)
    return crs


def _check_new_layer(path: Path, layer: str, *, replace: bool = False) -> str | None:
    """Refuse to add ``layer`` to the GeoPackage ``path`` when it has a layer of that name (any case, as SQLite).

    Parameters
    ----------
    path : pathlib.Path
    layer : str
    replace : bool, default False
        A layer of that name is to be replaced (``--update --overwrite``): allowed, unless it
        is the file's QGIS style table, which is no layer of data.

    Returns
    -------
    str or None
        The name, as the file spells it, of the layer to be replaced; None when there is none.

    Raises
    ------
    LayerReadError
        If ``path`` is not a GeoPackage GDAL can open.
    OutputExistsError
        If the layer is already there and ``replace`` is false (or it is the style table).
    """
    try:
        names = [str(n) for n, _ in pyogrio.list_layers(path)]
    except Exception as exc:  # pyogrio's DataSourceError and kin: not a GeoPackage
        msg = f"{str(path)!r}: cannot add a layer to it ({unreadable_reason(path, exc)[0]}); give a GeoPackage."
        raise LayerReadError(msg) from None
    same = next((n for n in names if n.lower() == layer.lower()), None)
    if same is None:
        return None
    if replace and same.lower() != STYLE_TABLE.lower():
        return same
    msg = (
        f"{str(path)!r} already has a layer {layer!r}; give the new one another name, or replace "
        "that layer with update=True and overwrite=True."
    )
    if same.lower() == STYLE_TABLE.lower():
        msg = f"{str(path)!r}: {layer!r} is the file's QGIS style table; give the layer another name."
    raise OutputExistsError(msg)


def prj_path(csv_path: str | os.PathLike[str]) -> Path:
    """Return where a CSV's CRS goes: ``<stem>.prj``, the name GDAL and QGIS read beside it.

    Examples
    --------
    >>> prj_path("out/screening.csv").as_posix()
    'out/screening.prj'
    """
    return Path(csv_path).with_suffix(".prj")


def _check_prj(csv_path: Path, *, overwrite: bool) -> None:
    """Check a CSV's ``.prj`` before any work: never a shapefile's; a stale one (its CSV gone) is replaced.

    Raises
    ------
    OutputExistsError
        If a shapefile of the same stem is beside it (its ``.prj`` would be replaced), even
        with ``overwrite``.
    """
    prj, shp = prj_path(csv_path), csv_path.with_suffix(".shp")
    if prj.exists() and shp.exists():
        msg = f"{str(prj)!r} is the projection of the shapefile {str(shp)!r}; name the CSV otherwise."
        raise OutputExistsError(msg)
    check_target(prj, overwrite=overwrite or not csv_path.exists())


def _prj_text(crs: Any) -> str:
    """Return ``crs`` as a ``.prj`` holds it: ESRI's WKT 1 (what ArcGIS, QGIS and GDAL read), else GDAL's."""
    from pyproj import CRS

    c = CRS.from_user_input(crs)
    return c.to_wkt("WKT1_ESRI") or c.to_wkt("WKT1_GDAL")


@contextmanager
def csv_output(path: str | os.PathLike[str], crs: Any | None, *, private: bool = False) -> Iterator[Path]:
    """Yield where to write a CSV layer; on success put it, its ``.prj`` (its CRS) and ``.csvt`` in place, together.

    GDAL's CSV driver (so ``ogrinfo``, QGIS's Add Layer and pyogrio) reads the geometry from the
    ``WKT`` column, the CRS from the ``.prj`` and the column types from the ``.csvt`` beside the
    file (the writer writes the types: :func:`write_csv`). All are written by
    :func:`~esc_gis._outputs.atomic_output`: if the writing fails, none appears. A layer
    without a CRS gets no ``.prj``, and a stale one of the same stem is removed.

    Raises
    ------
    OutputIsInputError, OutputFolderError
        As :func:`~esc_gis._outputs.atomic_output`.
    """
    p = Path(path)
    prj = prj_path(p)
    if crs is None:
        with csv_table_output(p, private=private) as tmp:
            yield tmp
        drop_sidecar(prj)
        return
    with csv_table_output(p, private=private) as tmp, atomic_output(prj) as tmp_prj:
        yield tmp
        tmp_prj.write_text(_prj_text(crs), encoding="utf-8")


def write_csv(frame: pd.DataFrame, path: str | os.PathLike[str], *, wkt: str | None = None) -> None:
    """Write ``frame`` as CSV at ``path`` (without its index) and its column types in the ``.csvt`` beside it.

    ``path`` is where :func:`csv_output` or :func:`esc_gis._csvt.csv_table_output` yielded, so
    both are put in place together. ``wkt`` names the geometry column (GDAL's type ``WKT``).
    """
    frame.to_csv(path, index=False)
    write_csvt(path, frame_types(frame, wkt=wkt))


def _to_csv_frame(gdf: gpd.GeoDataFrame) -> pd.DataFrame:
    out = pd.DataFrame(gdf.drop(columns=gdf.geometry.name))
    if "findings" in out.columns and "findings_text" not in out.columns:
        # A spreadsheet shows JSON badly: the findings again as readable lines, right after it.
        text = [findings_text(v) if isinstance(v, str) else "" for v in out["findings"]]
        out.insert(out.columns.get_loc("findings") + 1, "findings_text", text)
    # GDAL's CSV driver takes a column named WKT for the geometry (and the .prj beside the file
    # for its CRS: csv_output), so ogrinfo, QGIS and pyogrio see a layer, not a table.
    out["WKT"] = shapely.to_wkt(gdf.geometry.values, rounding_precision=-1)
    return out


#: shapely's type ids of the single types (Point, LineString, Polygon) and of their multi types.
_MULTI_OF = {0: 4, 1: 5, 3: 6}
_MAKE_MULTI = {0: shapely.multipoints, 1: shapely.multilinestrings, 3: shapely.multipolygons}


def promote_to_multi(geoms: np.ndarray) -> np.ndarray:
    """Return the geometries with each single part made a multi of one, when they mix both of one kind.

    A layer of Polygons and MultiPolygons (sites drawn as both, a dissolve's output) is
    declared "Unknown" by GDAL's GeoJSON driver and by QGIS, and GDAL's GeoPackage refuses the
    mix: written all MultiPolygon, as ``ogr2ogr -nlt PROMOTE_TO_MULTI`` writes it, every format
    declares one type. A layer all single parts is returned as it is (a Polygon layer stays
    Polygon), and so is one mixing kinds (points and polygons), which no promotion makes one type.
    Missing geometries stay missing; Z is kept.

    Parameters
    ----------
    geoms : numpy.ndarray of shapely geometries (or None)

    Returns
    -------
    numpy.ndarray
        ``geoms`` itself when nothing is promoted, else a new array.

    Examples
    --------
    >>> mixed = np.array([shapely.box(0, 0, 1, 1), shapely.MultiPolygon([shapely.box(2, 2, 3, 3)]), None])
    >>> [g.geom_type if g is not None else None for g in promote_to_multi(mixed)]
    ['MultiPolygon', 'MultiPolygon', None]
    >>> single = np.array([shapely.box(0, 0, 1, 1)])
    >>> promote_to_multi(single) is single
    True
    """
    geoms = np.asarray(geoms, dtype=object)
    ids = shapely.get_type_id(geoms)
    present = {int(i) for i in np.unique(ids[ids >= 0])}
    single = next((s for s, m in _MULTI_OF.items() if present == {s, m}), None)
    if single is None:
        return geoms
    out = geoms.copy()
    mask = ids == single
    out[mask] = _MAKE_MULTI[single](geoms[mask][:, np.newaxis])  # each one a multi of one part
    return out


def _one_geometry_type(gdf: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Return ``gdf`` with its geometry promoted to multi when it mixes single and multi (:func:`promote_to_multi`)."""
    geoms = np.asarray(gdf.geometry.values, dtype=object)
    promoted = promote_to_multi(geoms)
    if promoted is geoms:
        return gdf
    gdf = gdf.copy()
    gdf[gdf.geometry.name] = gpd.GeoSeries(promoted, index=gdf.index, crs=gdf.crs)
    return gdf


def write_layer(
    gdf: gpd.GeoDataFrame,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    layer: str = "screening",
    private: bool = False,
    update: bool = False,
    kind: str | None = None,
    dst_crs: Any | None = None,
) -> Path:
    """Write a layer, choosing the format by extension, atomically.

    GeoJSON follows RFC 7946: the geometry is reprojected to EPSG:4326 (longitude,
    latitude), no ``crs`` member is written, and the collection is named ``layer``. The
    attributes (the measurements, made in the projected CRS) are written unchanged.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        What to write.
    path : str or PathLike
        ``.gpkg`` (GeoPackage 1.3: :data:`GPKG_VERSION`), ``.parquet``, ``.geojson`` or
        ``.csv`` (geometry as WKT in a ``WKT`` column, the CRS in a ``.prj`` beside it, as
        GDAL's CSV driver reads them; :func:`read_layer` reads them back); ``"-"`` or
        ``"/vsistdout/"``: GeoJSON on standard output (as fio and rio pipelines take it).
    overwrite : bool, default False
        Replace an existing file.
    layer : str, default "screening"
        Layer name inside a GeoPackage, and the ``name`` of a GeoJSON feature collection.
    private : bool, default False
        The layer holds personal data: the file is made readable by its owner only (``0o600``);
        otherwise it gets the user's umask, as any file they create.
    update : bool, default False
        Add ``layer`` to an existing GeoPackage, keeping its other layers (``ogr2ogr -update
        -nln``); a layer of that name is refused, or with ``overwrite`` replaced, and nothing
        else in the file touched (``ogr2ogr -update -overwrite``). The file is copied, the
        layer written in the copy and the copy put in place, so a failure leaves the file as it
        was (for a large file the copy costs its size in time and disk). A file only its owner
        reads stays so.
    kind : str, optional
        What the layer is when ``layer`` is the user's name for it (``--output-layer``): its
        QGIS style and title are ``kind``'s (``"screening"``, ``"steep"``). Default ``layer``.
    dst_crs : optional
        The CRS to write the geometry in (``--dst-crs``), any CRS pyproj reads, geographic
        too: the geometry is transformed here, at the write, and the attributes (measured
        before, in the measuring CRS) are written as they are. Default ``gdf``'s own CRS.

    Notes
    -----
    A layer mixing single and multi parts of one kind is written all multi
    (:func:`promote_to_multi`): one declared geometry type in every format.

    Returns
    -------
    Path

    Raises
    ------
    OutputFormatError, OutputExistsError
        As :func:`check_output_path`.
    CRSError
        If a GeoJSON output or ``dst_crs`` is asked for a layer without a CRS (it cannot be
        reprojected), or ``dst_crs`` is refused by :func:`check_output_path`.
    """
    gdf = _one_geometry_type(gdf)
    if is_stdout(path):
        check_output_path(path, update=update, dst_crs=dst_crs)
        _write_stdout(gdf, layer=layer)
        return Path(os.fspath(path))
    p = Path(path)
    fmt = check_output_path(p, overwrite=overwrite, update=update, layer=layer, dst_crs=dst_crs)
    if dst_crs is not None:
        if gdf.crs is None:
            msg = f"{p.name}: the layer has no CRS, so it cannot be written in {dst_crs}."
            raise CRSError(msg)
        # Only how the output is written: measuring was done before, in the measuring CRS.
        gdf = gdf.to_crs(_check_dst_crs(dst_crs, fmt))
    if update and p.exists():
        # Replaced under the name the file spells it with (GDAL matches layer names exactly).
        layer = _check_new_layer(p, layer, replace=overwrite) or layer
        private = private or not p.stat().st_mode & 0o044  # never widen who may read it
        with atomic_output(p, private=private) as tmp:
            shutil.copy2(p, tmp)
            # pyogrio deletes a layer of that name before writing it (append=False): the others stay.
            pyogrio.write_dataframe(gdf, tmp, layer=layer, driver="GPKG", use_arrow=True, append=False)
            add_layer_style(tmp, layer, [c for c in gdf.columns if c != gdf.geometry.name], kind=kind)
            describe_layer(tmp, layer, kind)
        return p
    # Written whole under the final name, then renamed into place: readers never see half a
    # file, and a failure leaves nothing behind.
    if fmt.startswith("CSV"):
        with csv_output(p, gdf.crs, private=private) as tmp:
            write_csv(_to_csv_frame(gdf), tmp, wkt="WKT")
        return p
    with atomic_output(p, private=private) as tmp:
        if fmt == "GeoPackage":
            pyogrio.write_dataframe(
                gdf, tmp, layer=layer, driver="GPKG", use_arrow=True, dataset_options={"VERSION": GPKG_VERSION}
            )
            # Its QGIS style and its title go in before the rename: the file appears whole or not at all.
            add_layer_style(tmp, layer, [c for c in gdf.columns if c != gdf.geometry.name], kind=kind)
            describe_layer(tmp, layer, kind)
        elif fmt == "GeoParquet":
            gdf.to_parquet(tmp, index=False)
        else:
            _write_geojson(gdf, tmp, layer=layer)
    return p


def _write_stdout(gdf: gpd.GeoDataFrame, *, layer: str) -> None:
    """Write the layer as RFC 7946 GeoJSON to standard output, whole: written to a file first, then copied.

    GDAL's own ``/vsistdout/`` would write through C's buffer beside Python's, and a failure
    half-way would leave half a collection in the pipe; a file written whole and then copied
    gives the reader all of it or nothing.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix=".esc-gis-stdout.") as folder:
        tmp = Path(folder) / f"{layer}.geojson"
        _write_geojson(gdf, tmp, layer=layer)
        out = layer_stream()
        with tmp.open("rb") as f:
            shutil.copyfileobj(f, out)
        out.flush()


def _write_geojson(gdf: gpd.GeoDataFrame, path: Path, *, layer: str) -> None:
    """Write RFC 7946 GeoJSON: WGS 84 longitude/latitude, no ``crs`` member, named ``layer``.

    Raises
    ------
    CRSError
        If the layer has no CRS.
    """
    # Checked here rather than left to GDAL, which takes a layer without a CRS for WGS 84 and
    # would write feet as if they were degrees.
    if gdf.crs is None:
        msg = f"{path.name}: GeoJSON is written in longitude/latitude, and this layer has no CRS to reproject from."
        raise CRSError(msg)
    wgs84 = gdf.to_crs("EPSG:4326")
    options = {
        # Keep findings a JSON *string*, as in every other format (GDAL would inline it).
        "AUTODETECT_JSON_STRINGS": "NO",
        # Counter-clockwise outer rings, antimeridian cutting, 7 decimals (1 cm), no crs member.
        "RFC7946": "YES",
    }
    pyogrio.write_dataframe(wgs84, path, layer=layer, driver="GeoJSON", layer_options=options)


#: Columns of the run-findings table written beside a screening output.
RUN_FINDINGS_COLUMNS = ("code", "section", "basis", "message", "columns")


def run_findings_path(path: str | os.PathLike[str], layer: str | None = None) -> Path:
    """Return where the run findings of the output ``path`` go: ``<name>.run_findings.csv`` beside it.

    Named after the whole output, so a GeoPackage and a CSV of one result side by side keep
    their own (:func:`esc_gis._outputs.sidecar_path`).

    Examples
    --------
    >>> run_findings_path("out/screening.gpkg").as_posix()
    'out/screening.gpkg.run_findings.csv'
    """
    # A layer added to a GeoPackage (--update) has its own: <output>.<layer>.run_findings.csv.
    return sidecar_path(path, f"{layer}.run_findings" if layer else "run_findings", ".csv")


def write_run_findings(
    findings: list[dict[str, str]],
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    layer: str | None = None,
) -> Path | None:
    """Write a run's own findings (absent layers, checks not made) beside its output ``path``.

    One CSV for every output format, so a reader of a GeoPackage, a GeoParquet, a GeoJSON or
    a CSV finds them the same way, beside the file, without repeating them on every row:
    columns ``code, section, basis, message, columns`` (``columns``: the output columns left
    null). When there are none, no file is written, and a stale one from an earlier run of
    the same output is removed, so it cannot mislead.

    Parameters
    ----------
    findings : list of dict
        As :func:`esc_gis.screening.run_findings` returns.
    path : str or PathLike
        The screening output they belong to.
    overwrite : bool, default False
        Replace an existing run-findings file even when ``path`` has not been written yet.
        Written after its output, the file follows it: the output's check (with
        :func:`esc_gis._outputs.check_sidecar` for this file, before the work) decided.
    layer : str, optional
        The output's layer when it is not the command's default (``--output-layer``): the file
        is then the layer's own (:func:`run_findings_path`).

    Returns
    -------
    Path or None
        The file written, or None when there were no run findings.

    Raises
    ------
    OutputExistsError
        If the file exists, ``path`` does not, and ``overwrite`` is false.
    OutputIsInputError
        If the file is one of the command's inputs.
    """
    target = run_findings_path(path, layer)
    # Beside an output that now exists, the file is that output's: replaced with it.
    check_sidecar(target, path, overwrite=overwrite or Path(path).exists())
    if not findings:
        drop_sidecar(target)
        return None
    table = pd.DataFrame([{c: f.get(c, "") for c in RUN_FINDINGS_COLUMNS} for f in findings])
    with csv_table_output(target) as tmp:
        write_csv(table, tmp)
    return target
