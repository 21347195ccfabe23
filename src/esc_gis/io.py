"""Reading and writing vector files: pyogrio (GDAL, Arrow batches) for bulk I/O.

Reading accepts anything GDAL reads, zipped shapefiles included; problems come back as
:class:`~esc_gis.errors.LayerReadError` naming the file. Writing chooses the format by the
output's extension, refuses to overwrite without ``overwrite=True``, and writes to a
temporary file that is renamed into place only when complete, so a failure never leaves a
partial output behind.
"""

from __future__ import annotations

__all__ = [
    "OUTPUT_FORMATS",
    "RUN_FINDINGS_COLUMNS",
    "check_output_file",
    "check_output_path",
    "read_class_map",
    "read_layer",
    "run_findings_path",
    "write_layer",
    "write_run_findings",
]

import csv
import os
import sys
import tempfile
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
import shapely

from esc_gis._outputs import check_output_file, check_target
from esc_gis.errors import LayerReadError, LayerSetError, OutputFormatError
from esc_gis.findings import findings_text

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
    """
    p = Path(path)
    name = str(path)
    if not p.exists():
        msg = f"{name}: no such file. Check the path."
        raise LayerReadError(msg)
    try:
        if p.suffix.lower() in (".parquet", ".geoparquet"):
            if where is not None:
                # GDAL here has no Parquet driver, so an SQL filter cannot be pushed down.
                msg = f"{name}: --where is not supported for GeoParquet; filter the file first."
                raise LayerReadError(msg)
            gdf = gpd.read_parquet(p)
        else:
            if layer is None:
                layers = pyogrio.list_layers(p)
                if len(layers) > 1:
                    names = ", ".join(str(n) for n in layers[:, 0])
                    msg = f"{name} holds {len(layers)} layers ({names}); name one with --layer NAME."
                    raise LayerReadError(msg)
            if dates_as_text:
                # GeoJSON guesses date types (and rolls bad days over); other drivers keep their own.
                opts = {"DATE_AS_STRING": "YES"} if p.suffix.lower() in (".geojson", ".json") else {}
                gdf = pyogrio.read_dataframe(p, layer=layer, where=where, datetime_as_string=True, **opts)
            else:
                gdf = pyogrio.read_dataframe(p, layer=layer, where=where, use_arrow=True)
    except LayerReadError:
        raise
    except Exception as exc:  # GDAL, Arrow and Parquet errors all mean: unreadable input
        msg = f"{name}: cannot be read as a vector layer ({type(exc).__name__}: {exc})."
        raise LayerReadError(msg) from None
    if not isinstance(gdf, gpd.GeoDataFrame) or gdf.geometry.name not in gdf:
        msg = f"{name}: has no geometry column; give a layer of polygons."
        raise LayerReadError(msg)
    if len(gdf) == 0:
        picked = f" where {where}" if where else ""
        msg = f"{name}: the layer is empty (no features{picked})."
        raise LayerReadError(msg)
    return gdf.reset_index(drop=True)


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
        table = data.get("class_map", data)
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            msg = f'class map {str(path)!r}: expected "code" = "class" pairs of text.'
            raise LayerSetError(msg)
        return {str(k): v for k, v in table.items()}
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


def check_output_path(path: str | os.PathLike[str], *, overwrite: bool = False) -> str:
    """Check an output path before any work is done; return its format's name.

    Raises
    ------
    OutputFormatError
        If the extension is not one of :data:`OUTPUT_FORMATS`.
    OutputExistsError
        If the file exists and ``overwrite`` is false.
    """
    p = Path(path)
    fmt = OUTPUT_FORMATS.get(p.suffix.lower())
    if fmt is None:
        what = p.suffix or "a file without extension"
        msg = f"{str(path)!r}: cannot write {what!r}; use one of {', '.join(OUTPUT_FORMATS)}."
        raise OutputFormatError(msg)
    check_target(p, overwrite=overwrite)
    return fmt


def _to_csv_frame(gdf: gpd.GeoDataFrame) -> pd.DataFrame:
    out = pd.DataFrame(gdf.drop(columns=gdf.geometry.name))
    if "findings" in out.columns and "findings_text" not in out.columns:
        # A spreadsheet shows JSON badly: the findings again as readable lines, right after it.
        text = [findings_text(v) if isinstance(v, str) else "" for v in out["findings"]]
        out.insert(out.columns.get_loc("findings") + 1, "findings_text", text)
    out["geometry"] = shapely.to_wkt(gdf.geometry.values, rounding_precision=-1)
    return out


def write_layer(
    gdf: gpd.GeoDataFrame,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    layer: str = "screening",
) -> Path:
    """Write a layer, choosing the format by extension, atomically.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        What to write.
    path : str or PathLike
        ``.gpkg``, ``.parquet``, ``.geojson`` or ``.csv`` (geometry as WKT).
    overwrite : bool, default False
        Replace an existing file.
    layer : str, default "screening"
        Layer name inside a GeoPackage.

    Returns
    -------
    Path

    Raises
    ------
    OutputFormatError, OutputExistsError
        As :func:`check_output_path`.
    """
    p = Path(path)
    fmt = check_output_path(p, overwrite=overwrite)
    # Write beside the target, then rename: readers never see half a file, and a failure
    # leaves nothing behind (a rename within one folder is atomic).
    fd, tmp_name = tempfile.mkstemp(prefix=f".{p.stem}.", suffix=p.suffix, dir=p.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.unlink()
    try:
        if fmt == "GeoPackage":
            pyogrio.write_dataframe(gdf, tmp, layer=layer, driver="GPKG", use_arrow=True)
        elif fmt == "GeoParquet":
            gdf.to_parquet(tmp, index=False)
        elif fmt == "GeoJSON":
            # Keep findings a JSON *string*, as in every other format (GDAL would inline it).
            pyogrio.write_dataframe(gdf, tmp, driver="GeoJSON", layer_options={"AUTODETECT_JSON_STRINGS": "NO"})
        else:
            _to_csv_frame(gdf).to_csv(tmp, index=False)
        os.replace(tmp, p)
    finally:
        if tmp.exists():
            tmp.unlink()
    return p


#: Columns of the run-findings table written beside a screening output.
RUN_FINDINGS_COLUMNS = ("code", "section", "basis", "message", "columns")


def run_findings_path(path: str | os.PathLike[str]) -> Path:
    """Return where the run findings of the output ``path`` go: ``<stem>.run_findings.csv`` beside it.

    Examples
    --------
    >>> run_findings_path("out/screening.gpkg").as_posix()
    'out/screening.run_findings.csv'
    """
    p = Path(path)
    return p.with_name(f"{p.stem}.run_findings.csv")


def write_run_findings(
    findings: list[dict[str, str]], path: str | os.PathLike[str], *, overwrite: bool = False
) -> Path | None:
    """Write a run's own findings (absent layers, checks not made) beside its output ``path``.

    One CSV for every output format, so a reader of a GeoPackage, a GeoParquet, a GeoJSON or
    a CSV finds them the same way, beside the file, without repeating them on every row:
    columns ``code, section, basis, message, columns`` (``columns``: the output columns left
    null). When there are none, no file is written, and a stale one from an earlier run of
    the same output is removed (with ``overwrite``), so it cannot mislead.

    Parameters
    ----------
    findings : list of dict
        As :func:`esc_gis.screening.run_findings` returns.
    path : str or PathLike
        The screening output they belong to.
    overwrite : bool, default False
        Replace an existing run-findings file.

    Returns
    -------
    Path or None
        The file written, or None when there were no run findings.

    Raises
    ------
    OutputExistsError
        If the file exists and ``overwrite`` is false.
    """
    target = run_findings_path(path)
    check_target(target, overwrite=overwrite)
    if not findings:
        target.unlink(missing_ok=True)
        return None
    table = pd.DataFrame([{c: f.get(c, "") for c in RUN_FINDINGS_COLUMNS} for f in findings])
    table.to_csv(target, index=False)
    return target
