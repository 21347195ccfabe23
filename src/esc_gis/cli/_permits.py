"""What the ``esc-gis permits`` commands share: the registry argument, opening it, dates, messages."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import date, datetime
from typing import Any

import click

from esc_gis.cli._options import (
    layers_option,
)
from esc_gis.errors import EscGisError, Problem, ValidationError

_REGISTRY = click.argument("registry")


_LAYERS = layers_option("Layer set (default: the Village's); sites are measured in its CRS.")


_WHO = click.option("--who", default=None, help="Who makes the change (default: your login name).")


def _date(value: str | None, name: str) -> date | None:
    from esc_gis.registry.domain.records import parse_date

    d, err = parse_date(value, name)
    if err:
        raise click.BadParameter(err, param_hint=f"--{name.replace('_', '-')}")
    return d


def _when(value: str | None, name: str) -> date | datetime | None:
    """Parse a date (YYYY-MM-DD) or a date and time (YYYY-MM-DDTHH:MM)."""
    if value is None or len(value.strip()) == 10:
        return _date(value, name)
    from esc_gis.registry.domain.records import parse_datetime

    t, err = parse_datetime(value, name, as_typed=True)  # the registry puts it on the office's clock
    if err:
        raise click.BadParameter(err, param_hint=f"--{name}")
    return t


def _when_text(due: Any, profile: Any) -> str:
    """Return a due day as it is, a due time on the office's clock with its zone."""
    if isinstance(due, datetime):
        t = profile.local(due) if due.tzinfo is not None else due
        return f"{t:%Y-%m-%d %H:%M %Z}".strip()
    return str(due)


@contextmanager
def _open(registry: str, layers_path: str | None) -> Iterator[Any]:
    """Open REGISTRY; a refused value of an enumerated option (state, ground, trigger, ...) gets its nearest."""
    from esc_gis.registry import open_registry

    reg = open_registry(registry, layers=layers_path)
    try:
        yield reg
    except ValidationError as exc:
        problems = [_suggested_problem(p) for p in exc.problems]
        if problems == exc.problems:
            raise
        raise ValidationError(problems) from None
    except EscGisError as exc:
        hint = _nearest_hint(str(exc))
        if not hint or len(exc.args) != 1:
            raise
        raise type(exc)(f"{exc}{hint}") from None
    finally:
        reg.close()


#: "one of a, b", "use a, b", "the states are a, b", "(a, b)": the options a refused value was checked against.
_OPTIONS = re.compile(
    r"(?:(?:one of|the states are|use)\s+(?P<opts>[\w-]+(?:,\s*[\w-]+)+))|\((?P<listed>[\w-]+(?:,\s*[\w-]+)+)\)"
)


_QUOTED = re.compile(r"'([^']*)'")


def _nearest_hint(text: str) -> str:
    """Return `` Did you mean 'x'?`` for the first quoted value of ``text`` near one of the options it lists.

    Click suggests the nearest option *name* (``--stauts``); option *values* are checked by the
    registry and the profile, whose messages quote the value and list the options.

    Examples
    --------
    >>> _nearest_hint("'aproved' is not a permit state; the states are approved, active.")
    " Did you mean 'approved'?"
    >>> _nearest_hint("'xyz' is not a permit state; the states are approved, active.")
    ''
    >>> _nearest_hint("'aplication' is not a fee in the schedule (application, reinspection).")
    " Did you mean 'application'?"
    """
    found, value = _OPTIONS.search(text), _QUOTED.search(text)
    if not found or not value:
        return ""
    # Case aside, as a typed 'a1' is meant as the ground 'A1'.
    listed = found.group("opts") or found.group("listed")
    options = {o.strip().lower(): o.strip() for o in listed.split(",")}
    typed = value.group(1)
    near = difflib.get_close_matches(typed.lower(), list(options), n=1)
    return f" Did you mean {options[near[0]]!r}?" if near and options[near[0]] != typed else ""


def _suggested_problem(p: Problem) -> Problem:
    hint = "" if "Did you mean" in p.fix else _nearest_hint(f"{p.message} {p.fix}")
    return replace(p, fix=f"{p.fix}{hint}" if p.fix else hint.strip()) if hint else p


class _Choice(click.Choice):
    """A click choice whose refusal names the nearest choice (click names the choices only)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            near = difflib.get_close_matches(str(value), [str(c) for c in self.choices], n=1)
            if not near:
                raise
            self.fail(f"{exc.message} Did you mean {near[0]!r}?", param, ctx)


def _basis(basis: str) -> str:
    """Write a finding's basis as words: ``technical_standard`` -> ``technical standard``."""
    return basis.replace("_", " ")


def _describe(p: Any) -> str:
    return (
        f"{p.permit_number}  {p.status:<20} {p.site_address}  {p.disturbed_sqft:,.0f} sq ft"
        f"{f'  expires {p.expires_on}' if p.expires_on else ''}"
    )


def _echo_cases(cases: list[Any]) -> None:
    if cases:
        click.echo("\nenforcement (private):")
    for c in cases:
        _echo_case(c)


def _case_json(c: Any) -> dict[str, Any]:
    out = {k: v for k, v in c.__dict__.items() if k not in ("site", "events", "notes")}
    return {
        **out,
        "state": c.state,
        "costs_total": c.costs_total,
        "assessed_total": c.assessed_total,
        "paid_total": c.paid_total,
        "events": [e.__dict__ for e in c.events],
    }


def _echo_case(c: Any) -> None:
    where = c.permit_number or c.site_ref or c.site_address
    costs = f", costs {c.costs_total:,.2f}" if c.costs_total else ""
    costs += f", paid {c.paid_total:,.2f}" if c.paid_total else ""
    costs += f", on the tax rolls {c.assessed_total:,.2f}" if c.assessed_total else ""
    click.echo(f"  {c.case_id}  {c.state:<10} {where}  ground {c.ground} opened {c.opened_on}{costs}: {c.reasons}")
    for e in c.events:
        money = f" {e.costs:,.2f}" + (f" ({e.costs_from})" if e.costs_from else "") if e.costs is not None else ""
        click.echo(f"      {e.on_date} {e.kind}{money} by {e.who}" + (f": {e.detail}" if e.detail else ""))


def _report_json(r: Any) -> dict[str, Any]:
    return {
        **{k: v for k, v in r.__dict__.items() if k not in ("location", "deficiencies", "photos")},
        "location": None if r.location is None else [r.location.x, r.location.y],
        "deficiencies": [d.__dict__ for d in r.deficiencies],
        "photos": [{k: v for k, v in ph.__dict__.items() if k != "data"} for ph in r.photos],
    }


def _time(value: str | None, name: str) -> datetime | None:
    """Parse a date and time (YYYY-MM-DDTHH:MM; a day alone is refused: the repair clock runs in hours)."""
    from esc_gis.registry.domain.records import parse_datetime

    if value is not None and len(value.strip()) == 10:
        raise click.BadParameter(f"{value!r} has no time of day; give YYYY-MM-DDTHH:MM.", param_hint=f"--{name}")
    t, err = parse_datetime(value, name, as_typed=True)  # the registry puts it on the office's clock
    if err:
        raise click.BadParameter(err, param_hint=f"--{name}")
    return t
