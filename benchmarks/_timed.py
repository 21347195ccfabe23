"""One measured step of ``compare.py``, run in a fresh interpreter of the commit under test.

``compare.py`` runs this script with ``PYTHONPATH`` set to a commit's ``src`` folder, so
``esc_gis`` is that commit's. Each mode writes a JSON result to ``RESULT``:

``python _timed.py RESULT cli [+MODULE ...] ARG ...``
    ``esc-gis ARG ...`` in this process. The imports are done before the clock starts, as in
    ``bench_screen.py`` and ``bench_scale.py``: the figure is the work, not Python's start.
    A command imports its work's modules when it runs (so ``--help`` starts at once); each
    ``+MODULE`` is imported before the clock starts too.
``python _timed.py RESULT floor IN OUT``
    The I/O floor of the screening: read ``IN`` with pyogrio (Arrow) and write the frame to
    ``OUT`` as a GeoPackage, as ``bench_screen.py``'s floor does; geopandas (which pyogrio
    imports on the first read) is imported before the clock starts.
``python _timed.py RESULT digest PATH``
    A digest of what ``PATH`` holds: a GeoPackage's feature rows in fid order (every column's
    bytes, geometry included), a raster's cells, any other file's bytes. Two commits that
    write the same rows or cells give the same digest.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any


def _hwm_mb() -> float:
    """This process's peak resident memory (VmHWM), in MiB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def run_cli(args: list[str]) -> dict[str, Any]:
    """``esc-gis ARGS`` in this process, imports untimed (``+MODULE`` arguments first)."""
    import importlib

    from esc_gis.cli.main import cli

    while args and args[0].startswith("+"):
        importlib.import_module(args.pop(0)[1:])

    t0, cpu0 = time.perf_counter(), time.process_time()
    cli.main(args, standalone_mode=False)
    return {"seconds": time.perf_counter() - t0, "cpu_s": time.process_time() - cpu0, "peak_mb": _hwm_mb()}


def run_floor(src: str, dst: str) -> dict[str, Any]:
    """Read ``src`` and write it to ``dst``: what any screen must at least do."""
    import geopandas  # noqa: F401  (pyogrio's reader imports it on first use)
    import pyogrio

    Path(dst).unlink(missing_ok=True)
    t0, cpu0 = time.perf_counter(), time.process_time()
    frame = pyogrio.read_dataframe(src, use_arrow=True)
    pyogrio.write_dataframe(frame, dst, driver="GPKG", use_arrow=True)
    return {"seconds": time.perf_counter() - t0, "cpu_s": time.process_time() - cpu0, "peak_mb": _hwm_mb()}


def _gpkg_rows(path: Path) -> tuple[str, int]:
    """A digest of every feature table's rows, in fid order."""
    h = hashlib.sha256()
    rows = 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        tables = [
            r[0] for r in con.execute("SELECT table_name FROM gpkg_contents WHERE data_type = 'features' ORDER BY 1")
        ]
        for table in tables:
            h.update(table.encode())
            names = [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]
            h.update(repr(names).encode())
            for row in con.execute(f'SELECT * FROM "{table}" ORDER BY 1'):
                h.update(repr(row).encode())
                rows += 1
    return h.hexdigest(), rows


def _raster_cells(path: Path) -> tuple[str, int]:
    """A digest of a raster's cells (every band), its nodata, shape and transform."""
    import numpy as np
    import rasterio

    h = hashlib.sha256()
    with rasterio.open(path) as src:
        h.update(repr((src.count, src.width, src.height, src.dtypes, src.nodatavals, tuple(src.transform))).encode())
        for _, win in src.block_windows(1):
            block = src.read(window=win)
            h.update(repr((win.row_off, win.col_off)).encode())
            h.update(np.ascontiguousarray(block).tobytes())
        cells = src.width * src.height
    return h.hexdigest(), cells


def digest(path: str) -> dict[str, Any]:
    """What ``path`` holds, as a digest that ignores how it was packed."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".gpkg":
        value, count = _gpkg_rows(p)
        return {"digest": value, "rows": count, "kind": "GeoPackage rows"}
    if suffix in (".tif", ".tiff"):
        value, count = _raster_cells(p)
        return {"digest": value, "cells": count, "kind": "raster cells"}
    return {"digest": hashlib.sha256(p.read_bytes()).hexdigest(), "kind": "file bytes"}


def main(argv: list[str]) -> int:
    """Run one mode and write its result (see the module docstring)."""
    result_path, mode, *rest = argv
    if mode == "cli":
        result = run_cli(rest)
    elif mode == "floor":
        result = run_floor(*rest)
    elif mode == "digest":
        result = digest(*rest)
    else:
        msg = f"unknown mode {mode!r}: cli, floor or digest"
        raise SystemExit(msg)
    Path(result_path).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
