"""Elevation rasters: which band holds the elevations, how the file is laid out, and units.

Slope is rise over run, so both must be in one unit. The horizontal unit comes from the
raster's CRS (metres, international feet, US survey feet, or degrees for a geographic DEM
such as USGS 3DEP). The vertical unit comes, in this order, from a vertical part of the CRS
(a compound CRS), the band's unit, or the user (``--z-unit``, the manifest's ``z_unit``). A
DEM whose vertical unit is unknown is refused: Wisconsin county lidar is often in US survey
feet both ways, state data in metres, and a wrong guess makes every slope 3.28x wrong.

A raster with several bands (terrain-analysis stacks: slope, curvature, elevation, ...) is
refused unless the band is named (``--band``, the manifest's ``band``): reading band 1 of
such a stack silently computes the slope of a slope.

A DEM may be one raster of any format GDAL reads (GeoTIFF, COG, ``.vrt``, ...) or a folder
of tiles on one grid, which is mosaicked by a VRT written here (see :func:`tiles_vrt`).
The rows where the source's blocks (tiles, strips) start are recorded, so that the slope
is read in strips that never cut a compressed block in two.
"""

from __future__ import annotations

__all__ = ["TILE_SUFFIXES", "DemInfo", "check_raster_coordinates", "open_dem", "tiles_vrt", "warn_if_dem_far"]

import math
import os
from dataclasses import dataclass
from html import escape as _html_escape
from pathlib import Path
from typing import Any

import numpy as np
import rasterio
from pyproj import CRS
from rasterio.errors import RasterioIOError

from esc_gis.errors import BandError, CRSError, LayerReadError, UnitsError
from esc_gis.units import LENGTH_UNITS_M, length_unit


@dataclass(frozen=True)
class DemInfo:
    """What a DEM is and the units it is in.

    Attributes
    ----------
    path : str
    crs : pyproj.CRS
        The horizontal CRS.
    width, height : int
    transform : affine.Affine
    nodata : float or None
    geographic : bool
        Cells are in degrees; slopes are scaled row by row for latitude.
    xy_unit_m : float
        Metres per horizontal unit (1.0 for degrees: scaled by latitude instead).
    z_unit : str
        ``m``, ``ft`` or ``us_ft``.
    z_unit_source : str
        Where the vertical unit came from (``CRS``, ``band unit``, ``user``).
    ellipsoid : tuple of float
        Semi-major axis (m) and inverse flattening of the CRS's ellipsoid.
    band : int
        The band holding the elevations (1-based).
    band_count : int
        Bands in the raster.
    band_description : str or None
        The band's own description (``elev``), if it has one.
    source : str or None
        What GDAL opens, when not ``path``: the VRT XML mosaicking a folder of tiles.
    block_rows : tuple of int
        Rows where the source's blocks start, and the height: strips cut there decompress
        each block once.
    """

    path: str
    crs: CRS
    width: int
    height: int
    transform: rasterio.Affine
    nodata: float | None
    geographic: bool
    xy_unit_m: float
    z_unit: str
    z_unit_source: str
    ellipsoid: tuple[float, float]
    band: int = 1
    band_count: int = 1
    band_description: str | None = None
    source: str | None = None
    block_rows: tuple[int, ...] = ()

    def open(self, **options: Any) -> rasterio.io.DatasetReader:
        """Open the raster (the mosaic of tiles for a folder) for reading.

        Parameters
        ----------
        **options
            GDAL open options (``NUM_THREADS``).

        Returns
        -------
        rasterio.io.DatasetReader

        Raises
        ------
        rasterio.errors.RasterioIOError
            If the file went away since :func:`open_dem`.
        """
        return rasterio.open(self.source or self.path, **options)

    @property
    def band_label(self) -> str:
        """``band 4 (elev)``: the band used, for messages and the output's metadata."""
        return f"band {self.band}" + (f" ({self.band_description})" if self.band_description else "")

    @property
    def z_unit_m(self) -> float:
        """Metres per vertical unit."""
        return LENGTH_UNITS_M[self.z_unit]

    @property
    def cell_size(self) -> tuple[float, float]:
        """Cell width and height in CRS units (both positive)."""
        return abs(self.transform.a), abs(self.transform.e)


def _vertical_unit(crs: CRS) -> str | None:
    for sub in crs.sub_crs_list or []:
        if sub.is_vertical:
            return length_unit(sub.axis_info[0].unit_name)
    return None


#: Files taken as tiles from a folder (GeoTIFF and Erdas Imagine, as counties deliver them).
TILE_SUFFIXES = (".tif", ".tiff", ".img")
#: GDAL's names of numpy's dtypes, for the VRT of a folder of tiles.
_GDAL_TYPES = {
    "uint8": "Byte",
    "int8": "Int8",
    "uint16": "UInt16",
    "int16": "Int16",
    "uint32": "UInt32",
    "int32": "Int32",
    "uint64": "UInt64",
    "int64": "Int64",
    "float32": "Float32",
    "float64": "Float64",
}


def escape(text: str) -> str:
    """Escape text for XML (``xml.sax.saxutils`` would import urllib: 80 ms of every CLI start)."""
    return _html_escape(text, quote=False)


def _bands_listing(descriptions: tuple[str | None, ...]) -> str:
    return ", ".join(f"{i} ({d})" if d else str(i) for i, d in enumerate(descriptions, start=1))


def _choose_band(name: str, band: int | None, descriptions: tuple[str | None, ...]) -> int:
    """Return the band to read: ``band``, or 1 for a single-band raster; a multi-band raster must say."""
    count = len(descriptions)
    if band is None:
        if count == 1:
            return 1
        msg = (
            f"{name}: the raster has {count} bands: {_bands_listing(descriptions)}. Say which holds the "
            "elevations with band=N (band = N in layers.toml's [dem]); band 1 is not assumed."
        )
        raise BandError(msg)
    if not 1 <= band <= count:
        msg = f"{name}: band {band} does not exist; the raster has {count} band(s): {_bands_listing(descriptions)}."
        raise BandError(msg)
    return band


def _tile_meta(path: Path) -> dict[str, Any]:
    with rasterio.open(path) as src:
        return {
            "path": path,
            "crs": src.crs,
            "t": src.transform,
            "w": src.width,
            "h": src.height,
            "count": src.count,
            "dtype": src.dtypes[0],
            "dtypes": set(src.dtypes),
            "nodata": src.nodatavals,
            "block": src.block_shapes[0],
            "descriptions": src.descriptions,
            "units": src.units,
        }


def _place_on_grid(root: Path, metas: list[dict[str, Any]]) -> None:
    """Give each tile its ``col``/``row`` on the first tile's grid; refuse tiles off that grid."""
    ref = metas[0]
    a, e = ref["t"].a, ref["t"].e
    problems = []
    for m in metas:
        t = m["t"]
        col, row = (t.c - ref["t"].c) / a, (t.f - ref["t"].f) / e
        if m["crs"] != ref["crs"]:
            problems.append(f"{m['path'].name} is in another CRS than {ref['path'].name}")
        elif t.b != 0 or t.d != 0:
            problems.append(f"{m['path'].name} is rotated")
        elif not (math.isclose(t.a, a, rel_tol=1e-9) and math.isclose(t.e, e, rel_tol=1e-9)):
            problems.append(f"{m['path'].name} has {t.a:g} x {-t.e:g} cells, {ref['path'].name} {a:g} x {-e:g}")
        elif abs(col - round(col)) > 1e-6 or abs(row - round(row)) > 1e-6:
            problems.append(f"{m['path'].name} is off {ref['path'].name}'s grid by a fraction of a cell")
        elif m["count"] != ref["count"] or m["dtypes"] != ref["dtypes"] or len(m["dtypes"]) != 1:
            problems.append(f"{m['path'].name} has other bands or data types than {ref['path'].name}")
        m["col"], m["row"] = round(col), round(row)
    if problems:
        msg = (
            f"{root}: the tiles are not on one grid ({'; '.join(problems)}). Warp them to one grid first "
            "(gdalwarp), or give one mosaic (.vrt, .tif)."
        )
        raise CRSError(msg)


def _vrt_band(b: int, metas: list[dict[str, Any]], row0: int, col0: int, gaps: bool, breaks: set[int]) -> str:
    """One ``VRTRasterBand`` of the tiles' mosaic; adds the rows where tiles' blocks start to ``breaks``."""
    ref = metas[0]
    dtype = ref["dtype"]
    own = [m["nodata"][b - 1] for m in metas if m["nodata"][b - 1] is not None]
    if own:
        nodata: float | None = own[0]
    elif dtype.startswith("float"):
        nodata = math.nan
    else:  # integers, no nodata anywhere: only gaps between tiles need one
        nodata = float(np.iinfo(dtype).max) if gaps else None
    desc = ref["descriptions"][b - 1]
    unit = ref["units"][b - 1]
    parts = [f'  <VRTRasterBand dataType="{_GDAL_TYPES[dtype]}" band="{b}">']
    if desc:
        parts.append(f"    <Description>{escape(desc)}</Description>")
    if nodata is not None:
        parts.append(f"    <NoDataValue>{nodata!r}</NoDataValue>")
    if unit:
        parts.append(f"    <UnitType>{escape(unit)}</UnitType>")
    for m in metas:
        bh, bw = m["block"]
        r, c = m["row"] - row0, m["col"] - col0
        breaks.update(range(r, r + m["h"], bh))
        breaks.add(r + m["h"])
        tile_nd = m["nodata"][b - 1]
        parts += [
            "    <ComplexSource>",
            f'      <SourceFilename relativeToVRT="0">{escape(str(m["path"].resolve()))}</SourceFilename>',
            f"      <SourceBand>{b}</SourceBand>",
            f'      <SourceProperties RasterXSize="{m["w"]}" RasterYSize="{m["h"]}" '
            f'DataType="{_GDAL_TYPES[dtype]}" BlockXSize="{bw}" BlockYSize="{bh}" />',
            f'      <SrcRect xOff="0" yOff="0" xSize="{m["w"]}" ySize="{m["h"]}" />',
            f'      <DstRect xOff="{c}" yOff="{r}" xSize="{m["w"]}" ySize="{m["h"]}" />',
        ]
        if tile_nd is not None:
            parts.append(f"      <NODATA>{tile_nd!r}</NODATA>")
        parts.append("    </ComplexSource>")
    parts.append("  </VRTRasterBand>")
    return "\n".join(parts)


def tiles_vrt(folder: str | os.PathLike[str]) -> tuple[str, tuple[int, ...]]:
    """Mosaic a folder of DEM tiles on one grid into a VRT (XML text), as gdalbuildvrt would.

    The VRT is written here rather than by ``gdalbuildvrt``: that tool is not installed with
    the Python packages, and it resamples tiles of mixed resolutions silently, which would
    change slopes. Tiles must share the CRS, cell size, band count and data type, and lie on
    one grid (offsets whole cells apart); anything else is refused, naming the tile.

    Parameters
    ----------
    folder : path
        A folder of ``.tif`` / ``.tiff`` / ``.img`` tiles (other files are ignored).

    Returns
    -------
    tuple of (str, tuple of int)
        The VRT's XML (source paths absolute), and the rows where the tiles' blocks start.

    Raises
    ------
    LayerReadError
        If the folder holds no tile, or a tile cannot be read.
    CRSError
        If the tiles are not on one grid (CRS, cell size, alignment, rotation).
    """
    root = Path(folder)
    files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in TILE_SUFFIXES)
    if not files:
        msg = f"{root}: a folder of DEM tiles, but it holds no {' / '.join(TILE_SUFFIXES)} file."
        raise LayerReadError(msg)
    metas = []
    for f in files:
        try:
            metas.append(_tile_meta(f))
        except RasterioIOError as exc:
            msg = f"{f}: a tile of {root} cannot be read as a raster ({exc})."
            raise LayerReadError(msg) from None
    _place_on_grid(root, metas)
    ref = metas[0]
    a, e = ref["t"].a, ref["t"].e
    col0, row0 = min(m["col"] for m in metas), min(m["row"] for m in metas)
    width = max(m["col"] + m["w"] for m in metas) - col0
    height = max(m["row"] + m["h"] for m in metas) - row0
    x0, y0 = ref["t"].c + col0 * a, ref["t"].f + row0 * e
    gaps = sum(m["w"] * m["h"] for m in metas) < width * height
    breaks = {0, height}
    bands = []
    for b in range(1, ref["count"] + 1):
        bands.append(_vrt_band(b, metas, row0, col0, gaps, breaks))
    xml = "\n".join(
        [
            f'<VRTDataset rasterXSize="{width}" rasterYSize="{height}">',
            f"  <SRS>{escape(ref['crs'].to_wkt())}</SRS>",
            f"  <GeoTransform>{x0!r}, {a!r}, 0.0, {y0!r}, 0.0, {e!r}</GeoTransform>",
            *bands,
            "</VRTDataset>",
        ]
    )
    return xml, tuple(sorted(breaks))


def _vrt_block_rows(xml_text: str, band: int, height: int) -> tuple[int, ...]:
    """Rows where the sources' blocks start, read from a VRT's XML (gdalbuildvrt writes them).

    Sources without ``SourceProperties``, or resampled (SrcRect and DstRect of different
    heights), add only their own first and last rows.
    """
    import xml.etree.ElementTree as ET

    breaks = {0, height}
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return tuple(sorted(breaks))
    for vband in root.iter("VRTRasterBand"):
        if vband.get("band") != str(band):
            continue
        for src in vband:
            dst, srect, props = src.find("DstRect"), src.find("SrcRect"), src.find("SourceProperties")
            if dst is None:
                continue
            try:
                dy, dh = round(float(dst.get("yOff", "0"))), round(float(dst.get("ySize", "0")))
                breaks.update((min(max(dy, 0), height), min(max(dy + dh, 0), height)))
                if srect is None or props is None:
                    continue
                sy, sh = round(float(srect.get("yOff", "0"))), round(float(srect.get("ySize", "0")))
                bh = int(props.get("BlockYSize", "0"))
            except ValueError:
                continue
            if bh <= 0 or sh != dh:
                continue
            first = -(-sy // bh) * bh  # the first block start at or after the source rect's top
            breaks.update(dy + k - sy for k in range(first, sy + sh, bh) if 0 <= dy + k - sy <= height)
    return tuple(sorted(breaks))


def _block_rows(src: rasterio.io.DatasetReader, source: str, band: int) -> tuple[int, ...]:
    if src.driver == "VRT":
        text = source if source.lstrip().startswith("<") else None
        if text is None:
            try:
                text = Path(source).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
        return _vrt_block_rows(text, band, src.height)
    bh = src.block_shapes[band - 1][0]
    return tuple(sorted({*range(0, src.height, bh), src.height}))


def warn_if_dem_far(info: DemInfo, crs: CRS | None = None, *, what: str | None = None) -> float | None:
    """Warn when a DEM lies far outside the area of use of the CRS it is measured in (its own by default).

    The one distance check of :func:`esc_gis.crs.warn_if_far_from_zone`, given a DEM's
    extent: ``steep`` and ``soil-loss`` measure in the profile's CRS, ``slope`` in the DEM's
    own (a Utah DEM labelled with a Wisconsin county grid is caught there).

    Parameters
    ----------
    info : DemInfo
    crs : pyproj.CRS, optional
        The measuring CRS; default the DEM's own.
    what : str, optional
        The DEM, for the message; default ``DEM <file name>``.

    Returns
    -------
    float or None
        As :func:`esc_gis.crs.warn_if_far_from_zone`.

    Raises
    ------
    CRSError
        If the DEM's CRS cannot be read.
    """
    from rasterio.transform import array_bounds

    from esc_gis.crs import warn_if_far_from_zone

    bounds = array_bounds(info.height, info.width, info.transform)  # west, south, east, north
    label = what or f"DEM {Path(info.path).name}"
    return warn_if_far_from_zone(bounds, info.crs, crs or info.crs, what=label)


def check_raster_coordinates(height: int, width: int, transform: Any, crs: Any, *, what: str) -> None:
    """Refuse a raster whose extent cannot be in its CRS: the readers' one check, for grids.

    Every raster reader (:func:`open_dem`, :func:`esc_gis.terrain.sample_dem`) calls it, so
    metres labelled as degrees are refused rather than read as a flat world (issue 34).

    Parameters
    ----------
    height, width : int
        The grid's size in cells.
    transform : affine.Affine
        Its geotransform.
    crs : Any
        The CRS it is labelled with (the horizontal one of a compound CRS).
    what : str
        The raster, for the message (its file name).

    Raises
    ------
    CoordinatesNotInCRSError
        If the extent cannot be in ``crs`` (:func:`esc_gis.crs.check_coordinates`).
    CRSError
        If ``crs`` names no CRS.
    """
    from rasterio.transform import array_bounds

    from esc_gis.crs import FIX_RASTER, check_coordinates

    west, south, east, north = array_bounds(height, width, transform)
    check_coordinates((west, south, east, north), crs, what=what, fix=FIX_RASTER)


def open_dem(path: str | os.PathLike[str], *, z_unit: str | None = None, band: int | None = None) -> DemInfo:
    """Open a DEM's header, settle its band and its units.

    Parameters
    ----------
    path : str or PathLike
        Any raster GDAL reads (GeoTIFF, COG, ``.vrt``, ...), or a folder of tiles on one
        grid (mosaicked by :func:`tiles_vrt`).
    z_unit : {"m", "ft", "us_ft"}, optional
        The elevations' unit, when the raster does not say.
    band : int, optional
        The band holding the elevations; required when the raster has more than one.

    Returns
    -------
    DemInfo

    Raises
    ------
    LayerReadError
        If the file is missing or not a raster, or a folder holds no readable tile.
    BandError
        If the raster has several bands and ``band`` is not given, or has no band ``band``.
    CRSError
        If the raster has no CRS, or is rotated or south-up, or its tiles are not on one grid.
    CoordinatesNotInCRSError
        If its extent cannot be in its CRS (:func:`esc_gis.crs.check_coordinates`): projected
        coordinates labelled EPSG:4326 would give every slope as nearly flat.
    UnitsError
        If the vertical unit is unknown, or ``z_unit`` contradicts the raster's own.
    """
    name = os.fspath(path)
    source, breaks = name, None
    if os.path.isdir(name):
        source, breaks = tiles_vrt(name)
    try:
        with rasterio.open(source) as src:
            band = _choose_band(name, band, tuple(src.descriptions))
            if src.crs is None:
                msg = f"{name}: the DEM has no CRS; define it (gdal_edit.py -a_srs EPSG:XXXX) and try again."
                raise CRSError(msg)
            crs = CRS.from_wkt(src.crs.to_wkt())
            t = src.transform
            if t.b != 0 or t.d != 0:
                msg = f"{name}: the DEM's grid is rotated; warp it to a north-up grid first (gdalwarp)."
                raise CRSError(msg)
            if t.a <= 0 or t.e >= 0:
                # Rows from south to north (some ASCII and NetCDF grids): the slope and coverage
                # code reads rows from the north, and would find no site on the grid.
                msg = (
                    f"{name}: the DEM's rows run from south to north (or its columns from east to "
                    "west); warp it to a north-up grid first (gdalwarp)."
                )
                raise CRSError(msg)
            band_unit = src.units[band - 1] or None
            info = {
                "width": src.width,
                "height": src.height,
                "transform": t,
                "nodata": src.nodatavals[band - 1],
                "band": band,
                "band_count": src.count,
                "band_description": src.descriptions[band - 1] or None,
                "source": source if source != name else None,
                "block_rows": breaks or _block_rows(src, source, band),
            }
    except RasterioIOError as exc:
        from esc_gis.io import unreadable_message

        raise LayerReadError(unreadable_message(Path(name), exc, kind="raster")) from None

    horizontal = crs.sub_crs_list[0] if crs.is_compound else crs
    check_raster_coordinates(info["height"], info["width"], info["transform"], horizontal, what=name)
    geographic = horizontal.is_geographic
    if geographic:
        xy_unit_m = 1.0
    else:
        factors = {ax.unit_conversion_factor for ax in horizontal.axis_info}
        if len(factors) != 1:
            msg = f"{name}: the DEM's CRS has no single horizontal unit."
            raise UnitsError(msg)
        xy_unit_m = float(factors.pop())

    given = length_unit(z_unit) if z_unit is not None else None
    own, source = _vertical_unit(crs), "CRS"
    if own is None and band_unit:
        try:
            own, source = length_unit(band_unit), "band unit"
        except UnitsError:
            own = None
    if own is not None and given is not None and own != given:
        msg = f"{name}: z_unit={given} contradicts the DEM's own vertical unit ({own}, from its {source})."
        raise UnitsError(msg)
    if own is None and given is None:
        msg = (
            f"{name}: the unit of the elevations is unknown (the raster's CRS has no vertical part and "
            "its band has no unit). Fix: give it with z_unit=m|ft|us_ft (or z_unit in layers.toml); "
            "Wisconsin county lidar is often us_ft, state and USGS data m."
        )
        raise UnitsError(msg)
    ell = horizontal.ellipsoid
    if ell is None:
        msg = f"{name}: the DEM's CRS names no ellipsoid."
        raise CRSError(msg)
    return DemInfo(
        path=name,
        crs=horizontal,
        geographic=geographic,
        xy_unit_m=xy_unit_m,
        z_unit=own or given or "m",
        z_unit_source=source if own else "user",
        ellipsoid=(float(ell.semi_major_metre), float(ell.inverse_flattening or np.inf)),
        **info,
    )
