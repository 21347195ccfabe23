"""The construction schedule (``soil-loss --schedule``, plan.toml's ``schedule_file``): phases, CSV rows or TOML.

A row is a phase: its name, first and last day, cover and practices. Which covers and practices
exist is the profile's (``[soil_loss.cover.*]``, ``[soil_loss.practice.*]``), and how phases
follow each other is the schedule's: both are checked by
:func:`esc_gis.soil.schedule.validate_schedule`, which words every problem.
"""

from __future__ import annotations

__all__ = ["COLUMNS", "REQUIRED_COLUMNS", "Day", "PhaseRow", "Practices", "ScheduleFile"]

import datetime as dt
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from esc_gis.config._base import Open, fail

#: The columns of a schedule, and those every phase must fill in.
COLUMNS = ("phase", "start", "end", "cover", "practices")
REQUIRED_COLUMNS = ("phase", "start", "end", "cover")


def _given(v: Any) -> Any:
    # An empty CSV cell is a value not given, as a missing column is.
    if v is None or v == "":
        raise PydanticCustomError("blank", "not given")
    return v


def _day(v: Any) -> dt.date:
    v = _given(v)
    if isinstance(v, dt.datetime):
        return v.date()
    if isinstance(v, dt.date):
        return v
    try:
        return dt.date.fromisoformat(str(v).strip())
    except ValueError:
        raise fail("") from None  # worded by the reader: start '...' is not a date


def _practices(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    items = [str(x) for x in v] if isinstance(v, (list, tuple)) else str(v).replace("+", ";").split(";")
    return tuple(s.strip() for s in items if s.strip() and s.strip().lower() != "none")


Day = Annotated[dt.date, BeforeValidator(_day)]
Given = Annotated[str, BeforeValidator(lambda v: str(_given(v)).strip() or _given(""))]


#: Practice names: a TOML list, or text separated by ``;`` or ``+`` (a CSV cell); ``none`` for none.
Practices = Annotated[
    tuple[str, ...],
    BeforeValidator(_practices),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}),
]


class PhaseRow(Open):
    """One phase of a construction schedule: a CSV row, or a ``[[phase]]`` table of a TOML schedule."""

    phase: Given = Field(description="The phase's name (rough grading).")
    start: Day = Field(description="The phase's first day, YYYY-MM-DD (included).")
    end: Day = Field(description="The phase's last day, YYYY-MM-DD (included).")
    cover: Given = Field(description="A cover of the profile's [soil_loss.cover.*] tables (bare, mulch, ...).")
    practices: Practices = Field(
        (),
        description=(
            "Practices of the profile's [soil_loss.practice.*] tables: a list in TOML, separated by ; or + in a "
            "CSV; empty (or none) for none."
        ),
    )


class ScheduleFile(Open):
    """A construction schedule: one phase per row (CSV, with a header naming the columns) or ``[[phase]]`` table."""

    phase: list[PhaseRow] = Field(description="The phases, from initial grading to final stabilisation.")
