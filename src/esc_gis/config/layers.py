"""The layer-set manifest (``layers.toml``): the model of the file, and its problems in the manifest's words.

Every table refuses keys it does not know (a typo such as ``[targeted_area]`` would otherwise
switch a check off without a word), and each unknown one is named with the nearest right one.
What needs the layers themselves (a field that is not in the file, a DEM that does not exist)
is checked by :func:`esc_gis.layers.load_layers` when it reads them.
"""

from __future__ import annotations

__all__ = [
    "Dem",
    "FeeSchedulePath",
    "Jurisdiction",
    "LayersFile",
    "Soils",
    "TargetedAreas",
    "Waters",
    "layers_problems",
]

import difflib
from typing import Annotated, Any, Literal, get_args

from pydantic import Discriminator, Field, StrictInt, Tag, model_validator

from esc_gis._fields import DRAINAGE_FIELD, PIPED_FIELD
from esc_gis.config._base import Loc, Strict, errors, fail, say

#: The vertical units a DEM may be given in.
ZUnit = Literal["ft", "us_ft", "m"]
Z_UNITS: tuple[str, ...] = get_args(ZUnit)


class Layer(Strict):
    """A vector layer: its file, and which layer and features of it."""

    path: str = Field(description="The file, relative to the manifest (or absolute).")
    layer: str | None = Field(None, description="The layer of a multi-layer file (a GeoPackage's table).")
    where: str | None = Field(None, description="OGR SQL picking the features to use (NAME = 'Name').")


class Jurisdiction(Layer):
    """``[jurisdiction]`` (required): the Village's boundary, one place (or the features picked, merged)."""

    name_field: str | None = Field(None, description="The field to pick the Village by (with name).")
    name: str | None = Field(None, description="The value of name_field that is the Village (with name_field).")

    @model_validator(mode="after")
    def _both_or_neither(self) -> Jurisdiction:
        if (self.name_field is None) != (self.name is None):
            raise fail("")  # worded by the manifest: needs both name_field and name
        return self


#: The codes of a waters layer mapped to water classes: a file beside the manifest, or the table itself.
ClassMap = Annotated[
    Annotated[str, Tag("file")] | Annotated[dict[str, str], Tag("codes")],
    Discriminator(lambda v: "codes" if isinstance(v, dict) else "file"),
    Field(description="The layer's own codes -> water classes: a .toml or .csv file, or a table of codes."),
]


class Waters(Layer):
    """``[waters]`` (or several ``[[waters]]``): waters of the state, polygons or lines."""

    class_field: str = Field("water_class", description="The field holding each feature's water class (or code).")
    name_field: str | None = Field(None, description="The field holding the water's name.")
    channel_width_field: str | None = Field(None, description="A line's channel width, in feet.")
    piped_field: str = Field(PIPED_FIELD, description="The field saying a stream runs in a pipe or culvert.")
    drainage_field: str = Field(DRAINAGE_FIELD, description="The field holding the acres a channel drains.")
    class_map: ClassMap | None = None


class Dem(Strict):
    """``[dem]``: the elevation raster (a file, a .vrt, or a folder of tiles on one grid)."""

    path: str = Field(description="The raster, relative to the manifest.")
    z_unit: ZUnit | None = Field(None, description="The vertical unit, when the raster does not say.")
    band: Annotated[StrictInt, Field(ge=1)] | None = Field(
        None, description="The elevation band; required when the raster has several."
    )


class TargetedAreas(Layer):
    """``[targeted_areas]``: TMDL or targeted standard areas (§ 540-7B(6))."""

    name_field: str | None = Field(None, description="The field holding each area's name.")


class Soils(Layer):
    """``[soils]``: soil polygons with K (SSURGO map units)."""

    k_field: str | None = Field(None, description="The field holding K; default the profile's (kwfact).")


class FeeSchedulePath(Strict):
    """``[fees]``: the fee schedule the Village Board established (§ 540-10); application fees are checked by it."""

    path: str = Field(
        description="The fee schedule (TOML, as `permits fee --fees` reads it), relative to the manifest."
    )


def _one_or_many(v: Any) -> str:
    return "tables" if isinstance(v, list) else "table"


class LayersFile(Strict):
    """A layer set: the reference layers screening measures against, and the measuring CRS."""

    crs: str | StrictInt | None = Field(None, description="The measuring CRS (EPSG:7594); default the profile's.")
    jurisdiction: Jurisdiction
    waters: (
        Annotated[
            Annotated[Waters, Tag("table")] | Annotated[list[Waters], Tag("tables")],
            Discriminator(_one_or_many),
        ]
        | None
    ) = Field(None, description="Waters of the state: one [waters] table, or several [[waters]] tables.")
    dem: Dem | None = None
    targeted_areas: TargetedAreas | None = None
    soils: Soils | None = None
    fees: FeeSchedulePath | None = None


_TABLES = ("jurisdiction", "waters", "dem", "targeted_areas", "soils", "fees")
_TOP = ("crs", *_TABLES)


def _keys(model: type[Strict]) -> tuple[str, ...]:
    return tuple(model.model_fields)


_TABLE_KEYS = {
    "jurisdiction": _keys(Jurisdiction),
    "waters": _keys(Waters),
    "dem": _keys(Dem),
    "targeted_areas": _keys(TargetedAreas),
    "soils": _keys(Soils),
    "fees": _keys(FeeSchedulePath),
}


def _place(loc: Loc) -> tuple[str, Loc]:
    """Name the table an error is in as the manifest writes it, and the rest of the location."""
    top = str(loc[0])
    if top == "waters" and len(loc) > 1 and loc[1] in ("table", "tables"):
        if loc[1] == "tables" and len(loc) > 2 and isinstance(loc[2], int):
            return f"[[waters]] number {loc[2] + 1}", loc[3:]
        loc = (top, *loc[2:])
    return f"[{top}]", loc[1:]


def _unknown(loc: Loc, value: Any) -> str:
    if len(loc) == 1:
        top = str(loc[0])
        is_table = isinstance(value, (dict, list))
        shown = f"[{top}]" if is_table else repr(top)
        close = difflib.get_close_matches(top, _TOP, n=1, cutoff=0.6)
        if close:
            hint = f"did you mean {'[' + close[0] + ']' if close[0] in _TABLES else repr(close[0])}?"
        else:
            hint = "known: 'crs', " + ", ".join(f"[{k}]" for k in _TABLES) + "."
        return f"unknown {'table' if is_table else 'key'} {shown}; {hint}"
    where, rest = _place(loc)
    key, known = str(rest[-1]), _TABLE_KEYS[str(loc[0])]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(known)}."
    return f"{where}: unknown key {key!r}; {hint}"


def _problem(err: dict[str, Any], data: dict[str, Any]) -> str:
    loc = err["loc"]
    if loc == ("jurisdiction",) and err["type"] == "missing":
        return "the [jurisdiction] layer is required (path = ...)."
    if loc[0] == "crs":  # as esc_gis.crs.measuring_crs says it
        return f"crs {err['input']!r} is not a coordinate reference system; use e.g. 'EPSG:7594'."
    where, rest = _place(loc)
    key = str(rest[0]) if rest else ""
    if where == "[jurisdiction]" and (key in ("name_field", "name") or (not rest and err["type"] == "esc")):
        return '[jurisdiction] needs both name_field = "FIELD" and name = "VALUE" (text), or neither.'
    if not rest or key == "path":
        return f'{where} needs a path = "..." (relative to the manifest).'
    if key == "class_map":
        table = data["waters"][loc[2]] if loc[1] == "tables" else data["waters"]
        return f"class_map of {table.get('path')!r} must be a table of codes or a .toml/.csv path."
    words = {
        "where": "where must be OGR SQL text, e.g. where = \"NAME = 'Name'\".",
        "z_unit": f"z_unit {{input!r}} is not one of {', '.join(Z_UNITS)}.",
        "band": "band {input!r} is not a band number (1, 2, ...).",
    }
    return f"{where} {say({**err, 'loc': rest[:1]}, words)}"


def layers_problems(data: dict[str, Any]) -> tuple[LayersFile | None, list[str], list[str]]:
    """Check a manifest against :class:`LayersFile`.

    Returns
    -------
    LayersFile or None, list of str, list of str
        The model (None when refused), the unknown names (each with the nearest known one), and
        every other problem.

    Raises
    ------
    TypeError
        Never for bad data: problems are returned.
    """
    model, errs = errors(LayersFile, data)
    # In the file's order, as a reader meets them.
    tops = list(data)
    errs.sort(key=lambda e: tops.index(e["loc"][0]) if e["loc"] and e["loc"][0] in tops else len(tops))
    unknown = [_unknown(e["loc"], e["input"]) for e in errs if e["type"] == "extra_forbidden"]
    others = [_problem(e, data) for e in errs if e["type"] != "extra_forbidden"]
    return model, unknown, list(dict.fromkeys(others))  # a problem said once (the union's branches, a pair)
