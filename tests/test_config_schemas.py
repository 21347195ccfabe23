"""The configuration's models and their JSON Schemas (issue 37): shipped schemas never drift from the
models, and every configuration file esc_gis ships is valid against its schema (jsonschema) and its
model (pydantic) alike.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

import esc_gis
from esc_gis.config import FORMATS, model, schema, schema_text
from esc_gis.config._base import to_json

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = Path(esc_gis.__file__).parent / "schemas"


def _toml(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _csv_schedule(path: Path) -> dict:
    rows = csv.DictReader(path.read_text(encoding="utf-8-sig").splitlines())
    return {"phase": [{(k or "").strip().lower(): v for k, v in r.items()} for r in rows]}


#: Every configuration file shipped, with its format and how it is read.
SHIPPED = [
    *[("profile", p, _toml) for p in sorted((ROOT / "src" / "esc_gis" / "profiles").glob("*.toml"))],
    ("profile", ROOT / "tests" / "profiles" / "example.toml", _toml),
    *[("layers", p, _toml) for p in sorted((ROOT / "layers").glob("**/layers.toml"))],
    *[("plan", p, _toml) for p in sorted((ROOT / "examples").glob("**/plan.toml"))],
    ("schedule", ROOT / "examples" / "demo" / "schedule_made_up.csv", _csv_schedule),
    ("schedule", ROOT / "examples" / "plans" / "phased" / "phases.csv", _csv_schedule),
    ("fees", ROOT / "examples" / "fee-schedule.example.toml", _toml),
    ("calendar", ROOT / "examples" / "office-calendar.example.toml", _toml),
    *[
        ("pygeoapi-overrides", p, lambda p: yaml.safe_load(p.read_text(encoding="utf-8")))
        for p in sorted((ROOT / "deploy").glob("*overrides*.yml"))
    ],
]


@pytest.mark.parametrize("name", list(FORMATS))
def test_the_shipped_schema_is_the_models(name: str) -> None:
    shipped = SCHEMAS / f"{name}.schema.json"
    assert shipped.read_text(encoding="utf-8") == schema_text(name), (
        f"{shipped.name} differs from its model: run `PYTHONPATH=src python scripts/write_schemas.py`"
    )
    jsonschema.Draft202012Validator.check_schema(json.loads(shipped.read_text(encoding="utf-8")))


def test_every_schema_is_shipped_and_no_other() -> None:
    assert sorted(p.name for p in SCHEMAS.glob("*.schema.json")) == sorted(f"{n}.schema.json" for n in FORMATS)


def test_every_format_has_a_shipped_example() -> None:
    # The service's settings file is written by --write-config, and a class map is the layer set's own.
    assert {f for f, _, _ in SHIPPED} >= set(FORMATS) - {"service-settings", "class-map"}


@pytest.mark.parametrize(("name", "path", "read"), SHIPPED, ids=[str(p.relative_to(ROOT)) for _, p, _ in SHIPPED])
def test_every_shipped_file_is_valid_against_its_schema_and_its_model(name: str, path: Path, read) -> None:
    data = read(path)
    jsonschema.Draft202012Validator(schema(name)).validate(to_json(data))
    model(name).model_validate(data)


def test_the_schema_refuses_what_the_reader_refuses() -> None:
    # A misspelt table would switch a check off: the editor says so as the reader does.
    bad = {"jurisdiction": {"path": "v.gpkg"}, "targeted_area": {"path": "t.gpkg"}}
    errors = list(jsonschema.Draft202012Validator(schema("layers")).iter_errors(bad))
    assert any("targeted_area" in e.message for e in errors)
    fees = {"schedule": {"resolution": "R 1", "adopted_on": "2026-01-12"}, "fees": {"review": -1}}
    messages = " ".join(e.message for e in jsonschema.Draft202012Validator(schema("fees")).iter_errors(fees))
    assert "'application' is a required property" in messages and "-1 is less than the minimum of 0" in messages


def test_the_trigger_kinds_the_model_takes_are_those_the_rules_know() -> None:
    from typing import get_args

    from esc_gis.config.profile import TRIGGER_KINDS, TriggerKind

    assert get_args(TriggerKind) == tuple(TRIGGER_KINDS)
