"""The files esc_gis reads, as typed models: one home for what each may hold.

One module per file format, each with a pydantic model that says what the file may hold (its
keys, types, defaults and descriptions) and a function that words its problems as esc_gis
always has, raised by the file's owner as its own error (:class:`~esc_gis.errors.ProfileError`,
:class:`~esc_gis.errors.LayerSetError`, ...). The models are kept apart from their owners so the
JSON Schemas (``esc_gis/schemas``), the configuration reference and editors can read them
without importing geopandas, and so no owner holds a rule another needs (``[calendar]`` is read
by three).

The law stays in the profile's TOML: the models say where a number goes, never what it is.
"""

from __future__ import annotations

__all__ = ["FORMATS", "model", "schema", "schema_text"]

import importlib
import json
from typing import Any

#: Every file format: its name (and schema file ``esc_gis/schemas/<name>.schema.json``) -> the
#: module and model that describe it, and what the file is, for the reference.
FORMATS: dict[str, tuple[str, str, str]] = {
    "profile": ("profile", "ProfileFile", "the ordinance profile (`--profile FILE`, `esc_gis/profiles/*.toml`)"),
    "layers": ("layers", "LayersFile", "a layer set's manifest (`--layers layers.toml`)"),
    "calendar": ("calendar", "CalendarFile", "an office calendar file (`--calendar FILE`)"),
    "fees": ("fees", "FeeScheduleFile", "the fee schedule (`permits fee --fees FILE`)"),
    "schedule": ("schedule", "ScheduleFile", "a construction schedule (`soil-loss --schedule`, TOML or CSV)"),
    "plan": ("plan", "PlanFile", "a plan package's `plan.toml` (`esc-gis review`)"),
    "class-map": ("class_map", "ClassMapFile", "a waters layer's class map (`class_map`, `--class-map`)"),
    "service-settings": (
        "service",
        "ServiceSettingsFile",
        "the service's settings (`esc-gis-service.json`, written by `esc-gis serve --write-config`)",
    ),
    "pygeoapi-overrides": ("service", "ServiceOverrides", "pygeoapi overrides (`esc-gis serve --pygeoapi-overrides`)"),
}

#: The JSON Schema dialect pydantic writes.
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def model(name: str) -> Any:
    """Return the model of file format ``name`` (a key of :data:`FORMATS`), imported on first use.

    Raises
    ------
    KeyError
        If esc_gis reads no such format.
    """
    module, cls, _ = FORMATS[name]
    return getattr(importlib.import_module(f"esc_gis.config.{module}"), cls)


def schema(name: str) -> dict[str, Any]:
    """Return the JSON Schema of file format ``name``, as shipped in ``esc_gis/schemas``.

    Raises
    ------
    KeyError
        If esc_gis reads no such format.

    Examples
    --------
    >>> schema("layers")["required"]
    ['jurisdiction']
    """
    from esc_gis.config._base import describe_fields

    described = model(name)
    describe_fields(described)
    return {"$schema": DIALECT, **described.model_json_schema()}


def schema_text(name: str) -> str:
    """Return the text of ``esc_gis/schemas/<name>.schema.json``: the model's keys in its order (the reference's).

    Raises
    ------
    KeyError
        If esc_gis reads no such format.
    """
    return json.dumps(schema(name), indent=2, ensure_ascii=False) + "\n"
