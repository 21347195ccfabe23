"""A class map (``class_map`` in ``[waters]``, ``protective --class-map``): a layer's own codes -> water classes.

A TOML file holds ``"code" = "class"`` pairs at the top level or under ``[class_map]``; a CSV
holds the same as two columns (:func:`esc_gis.io.read_class_map` reads both). Whether a class
exists is the profile's (its ``[protective_area.*]`` tables), checked where the layer is read.
"""

from __future__ import annotations

__all__ = ["ClassMapFile", "Codes", "class_map_codes"]

from typing import Annotated, Any

from pydantic import Discriminator, Field, RootModel, Tag

from esc_gis.config._base import Open, errors

#: Codes -> water classes, as text.
Codes = Annotated[
    dict[str, str], Field(description="A source code (E2K) = the water class it is (wetland_highly_susceptible).")
]


class ClassMapTable(Open):
    """The codes under a ``[class_map]`` table (other tables of the file are not read)."""

    class_map: Codes


class ClassMapFile(RootModel[Any]):
    """A class map: ``"code" = "class"`` pairs, at the top level or under ``[class_map]``."""

    root: Annotated[
        Annotated[ClassMapTable, Tag("table")] | Annotated[Codes, Tag("pairs")],
        Discriminator(lambda v: "table" if isinstance(v, dict) and "class_map" in v else "pairs"),
    ]


def class_map_codes(data: Any) -> dict[str, str] | None:
    """Return the codes of a class map as parsed from TOML, or None when it is not one.

    Raises
    ------
    TypeError
        Never for bad data: None is returned.

    Examples
    --------
    >>> class_map_codes({"class_map": {"E2K": "wetland"}}), class_map_codes({"E2K": 3})
    ({'E2K': 'wetland'}, None)
    """
    model, _ = errors(ClassMapFile, data)
    if model is None:
        return None
    root = model.root
    return dict(root.class_map if isinstance(root, ClassMapTable) else root)
