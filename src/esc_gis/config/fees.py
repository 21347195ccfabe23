"""The fee schedule (``permits fee --fees FILE``): the Village Board's resolution and the amounts it sets (§ 540-10)."""

from __future__ import annotations

__all__ = ["APPLICATION_FEE", "FeeScheduleFile", "fee_problems"]

import datetime as dt
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema

from esc_gis.config._base import Number, Open, errors, fail
from esc_gis.config._fee_kinds import APPLICATION_FEE


def _amount(v: float) -> float:
    if v < 0:
        raise fail("")
    return v


def _toml_date(v: Any) -> Any:
    # A TOML date, unquoted: a quoted "2026-01-12" is text, and a date-time is not a day.
    if isinstance(v, dt.datetime) or not isinstance(v, dt.date):
        raise fail("")
    return v


#: An amount in dollars, 0 or more.
Amount = Annotated[
    Number,
    AfterValidator(_amount),
    WithJsonSchema({"type": "number", "minimum": 0, "description": "Dollars, 0 or more."}),
]


class Resolution(Open):
    """``[schedule]``: the resolution that set the fees."""

    resolution: Annotated[str, Field(min_length=1, pattern=r"\S")] = Field(
        description="The resolution that set the fees, as the office cites it."
    )
    adopted_on: Annotated[dt.date, BeforeValidator(_toml_date)] = Field(
        description="The day it was adopted: a TOML date, unquoted (2026-01-12)."
    )


class Fees(Open):
    """``[fees]``: kind = amount in dollars; the application fee is required."""

    __pydantic_extra__: dict[str, Amount] = Field(init=False)  # every other kind, an amount too

    application: Amount = Field(description="The application fee, without which an application is not complete.")


class FeeScheduleFile(Open):
    """A fee schedule: the resolution and the amounts it sets. The toolkit ships no real amounts."""

    schedule: Resolution = Field(description="The resolution that set the fees.")
    fees: Fees = Field(description="The amounts, by fee kind.")


_WORDS = {
    "resolution": "[schedule] resolution is missing (the resolution that set the fees).",
    "adopted_on": "[schedule] adopted_on is missing or not a date (write 2026-01-12, unquoted).",
}


def fee_problems(data: dict[str, Any]) -> tuple[FeeScheduleFile | None, list[str]]:
    """Check a fee schedule against :class:`FeeScheduleFile`; return it (or None) and every problem.

    Raises
    ------
    TypeError
        Never for bad data: problems are returned.
    """
    model, errs = errors(FeeScheduleFile, data)
    problems, missing = [], []
    for e in errs:
        loc = e["loc"]
        if loc in (("schedule",), ("schedule", "resolution"), ("schedule", "adopted_on")):
            problems += [_WORDS[k] for k in ((loc[1],) if len(loc) > 1 else _WORDS)]
        elif loc in (("fees",), ("fees", APPLICATION_FEE)) and e["type"] in ("missing", "model_type"):
            missing.append(f"[fees] has no {APPLICATION_FEE!r} fee (the application fee).")
        else:
            problems.append(f"[fees] {loc[-1]} = {e['input']!r} is not an amount of 0 or more.")
    return model, problems + missing  # the amounts given first, then the one not given
