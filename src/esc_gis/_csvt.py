"""The types of a CSV's columns, written beside it as GDAL's ``.csvt``: numbers read as numbers.

A CSV holds only text, so GDAL's CSV driver (``ogrinfo``, ``ogr2ogr``, QGIS's Add Layer,
pyogrio) reads every column as ``String`` unless a ``<stem>.csvt`` beside the file names each
column's type: one line, one quoted type per column in the header's order
(``"Integer64","Real","String","WKT"``). Every CSV esc-gis writes gets one, put in place with
it (:func:`csv_table_output`), checked with it before any work (:func:`esc_gis._outputs.check_target`
checks a CSV's ``.csvt``), and never left behind from an earlier run.

The types come from one place, :func:`column_kinds` / :func:`frame_types` for a pandas frame and
:func:`row_types` for rows of Python values, so every writer types its columns alike:

===================================  ====================  =======================
values                               ``.csvt`` type        written as
===================================  ====================  =======================
64-bit integers (pandas' default)    ``Integer64``         ``12``
integers of 32 bits or fewer         ``Integer``           ``12``
floats, or integers mixed with them  ``Real``              ``12.5``
booleans                             ``Integer(Boolean)``  ``True`` / ``False``
dates                                ``Date``              ``2024-05-01``
dates with a time                    ``DateTime``          ``2024-05-01 10:00:00``
the geometry (the ``WKT`` column)    ``WKT``               ``POLYGON ((...))``
anything else, or only empty cells   ``String``            text
===================================  ====================  =======================

Kept free of heavy imports (pandas is imported only to type a frame): the registry's CSVs use it
without loading numpy.
"""

from __future__ import annotations

__all__ = [
    "column_kinds",
    "csv_table_output",
    "csvt_text",
    "frame_types",
    "merge_kinds",
    "row_types",
    "types_of",
    "write_csvt",
]

import datetime as dt
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from esc_gis._outputs import atomic_output, csvt_path, drop_sidecar

#: A column's kind (what its values are) -> its type in a ``.csvt``, as GDAL's CSV driver names it.
#: ``None`` (no value seen: every cell empty) is written as String.
CSVT_TYPES = {
    "integer": "Integer",
    "integer64": "Integer64",
    "real": "Real",
    "boolean": "Integer(Boolean)",
    "date": "Date",
    "datetime": "DateTime",
    "wkt": "WKT",
    "string": "String",
}

#: pandas' ``infer_dtype`` names of an object column's values -> their kind.
_INFERRED = {
    "string": "string",
    "boolean": "boolean",
    "integer": "integer64",
    "floating": "real",
    "mixed-integer-float": "real",
    "decimal": "real",
    "date": "date",
    "datetime": "datetime",
    "datetime64": "datetime",
    "empty": None,
}

#: Kinds that widen to another when a column holds both (a batch of integers, one of floats: Real).
_WIDER = {
    frozenset({"integer", "integer64"}): "integer64",
    frozenset({"integer", "real"}): "real",
    frozenset({"integer64", "real"}): "real",
    frozenset({"date", "datetime"}): "datetime",
}


def merge_kinds(a: str | None, b: str | None) -> str | None:
    """Return the kind of a column holding values of kinds ``a`` and ``b`` (None: no value yet).

    Examples
    --------
    >>> merge_kinds(None, "real"), merge_kinds("integer64", "real"), merge_kinds("date", "real")
    ('real', 'real', 'string')
    """
    if a is None or a == b:
        return b
    if b is None:
        return a
    return _WIDER.get(frozenset({a, b}), "string")


def _value_kind(value: object) -> str | None:
    """Return the kind of one Python value as a CSV writer writes it (None for an empty cell)."""
    if value is None or value == "" or (isinstance(value, float) and value != value):  # NaN: written empty
        return None
    if isinstance(value, bool):  # before int: a bool is an int
        return "boolean"
    if isinstance(value, int):
        return "integer64"
    if isinstance(value, float):
        return "real"
    if isinstance(value, dt.datetime):  # before date: a datetime is a date
        return "datetime"
    if isinstance(value, dt.date):
        return "date"
    return "string"


def column_kinds(frame: Any, *, wkt: str | None = None) -> list[str | None]:
    """Return the kind of each column of a pandas ``frame``, as its ``to_csv`` writes them.

    Parameters
    ----------
    frame : pandas.DataFrame
        What is written. Object columns are typed by their values (text, or Python numbers,
        booleans and dates); a column with no value has kind None.
    wkt : str, optional
        The column holding the geometry as WKT.

    Returns
    -------
    list of str or None
    """
    import pandas as pd

    kinds: list[str | None] = []
    for name, dtype in frame.dtypes.items():
        col = frame[name]
        if name == wkt:
            kinds.append("wkt")
        elif pd.api.types.is_bool_dtype(dtype):
            kinds.append("boolean" if col.notna().any() else None)
        elif pd.api.types.is_integer_dtype(dtype):
            small = dtype.itemsize < 4 or (dtype.itemsize == 4 and pd.api.types.is_signed_integer_dtype(dtype))
            kinds.append(("integer" if small else "integer64") if col.notna().any() else None)
        elif pd.api.types.is_float_dtype(dtype):
            kinds.append("real" if col.notna().any() else None)
        elif pd.api.types.is_datetime64_any_dtype(dtype):
            kinds.append("datetime" if col.notna().any() else None)
        elif isinstance(dtype, pd.CategoricalDtype):
            kinds.append("string" if col.notna().any() else None)
        elif pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            kinds.append(_INFERRED.get(pd.api.types.infer_dtype(col, skipna=True), "string"))
        else:  # durations, periods, intervals: text GDAL has no type for
            kinds.append("string")
    return kinds


def types_of(kinds: Iterable[str | None]) -> list[str]:
    """Return the ``.csvt`` types of columns of ``kinds`` (an empty column is String)."""
    return [CSVT_TYPES[k or "string"] for k in kinds]


def frame_types(frame: Any, *, wkt: str | None = None) -> list[str]:
    """Return the ``.csvt`` type of each column of a pandas ``frame`` (see :func:`column_kinds`).

    Examples
    --------
    >>> import pandas as pd
    >>> frame_types(pd.DataFrame({"n": [1, None], "sqft": [2.5, 3], "ok": [True, False], "id": ["a", None]}))
    ['Real', 'Real', 'Integer(Boolean)', 'String']
    >>> frame_types(pd.DataFrame({"n": pd.array([1, None], dtype="Int64"), "WKT": ["POINT (1 2)", ""]}), wkt="WKT")
    ['Integer64', 'WKT']
    """
    return types_of(column_kinds(frame, wkt=wkt))


def row_types(n_columns: int, rows: Iterable[Sequence[object]]) -> list[str]:
    """Return the ``.csvt`` type of each of ``n_columns`` columns of ``rows`` of Python values.

    Give the values as they are (numbers, dates), not as the text written for them.

    Examples
    --------
    >>> row_types(4, [(1, 2.5, "a", dt.date(2024, 5, 1)), (2, 3, None, None)])
    ['Integer64', 'Real', 'String', 'Date']
    """
    kinds: list[str | None] = [None] * n_columns
    for row in rows:
        for i, value in enumerate(row):
            kinds[i] = merge_kinds(kinds[i], _value_kind(value))
    return types_of(kinds)


def csvt_text(types: Iterable[str]) -> str:
    r"""Return a ``.csvt``'s line: each type quoted, separated by commas.

    Examples
    --------
    >>> csvt_text(["Integer64", "Real", "WKT"])
    '"Integer64","Real","WKT"\n'
    """
    return ",".join(f'"{t}"' for t in types) + "\n"


def write_csvt(csv_file: str | os.PathLike[str], types: Iterable[str]) -> Path:
    """Write the ``.csvt`` of ``csv_file`` (where :func:`csv_table_output` yielded it): ``<stem>.csvt`` beside it.

    Returns
    -------
    pathlib.Path
    """
    p = csvt_path(csv_file)
    p.write_text(csvt_text(types), encoding="utf-8")
    return p


@contextmanager
def csv_table_output(path: str | os.PathLike[str], *, private: bool = False) -> Iterator[Path]:
    """Yield where to write a CSV; on success put it and its ``.csvt`` in place, together.

    The writer writes the CSV at the yielded path and its types with :func:`write_csvt` on that
    path. Both are written by :func:`~esc_gis._outputs.atomic_output`: if the writing fails,
    neither appears; a writer that wrote no types leaves no ``.csvt`` (an earlier run's is removed).

    Raises
    ------
    OutputIsInputError, OutputFolderError
        As :func:`~esc_gis._outputs.atomic_output`.
    """
    p = Path(path)
    with atomic_output(p, private=private) as tmp:
        yield tmp
        staged = csvt_path(tmp)
        if staged.exists():
            with atomic_output(csvt_path(p), private=private) as tmp_csvt:
                os.replace(staged, tmp_csvt)
        else:
            drop_sidecar(csvt_path(p))
