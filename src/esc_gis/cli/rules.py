"""``esc-gis rules``: print the ordinance profile (every number with its citation)."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from esc_gis.profile import Profile, load_profile


def _value(e_value: float | None, extra: dict) -> str:
    if e_value is not None:
        text = f"{e_value:,g}"
        if "min_ft" in extra or "max_ft" in extra:
            text += f" (min {extra.get('min_ft', 0):g} ft, max {extra.get('max_ft', 0):g} ft)"
        return text
    depths = extra.get("depths", {})
    return ", ".join(f"{k}-yr {v:g}" for k, v in depths.items())


def rules_table(profile: Profile) -> Table:
    """Build the rich table of a profile's entries."""
    table = Table(title=f"{profile.name}: {profile.ordinance}", title_justify="left")
    table.add_column("entry", no_wrap=True)
    table.add_column("value", max_width=34, overflow="fold")
    table.add_column("unit", no_wrap=True)
    table.add_column("section", max_width=30, overflow="fold")
    table.add_column("what it does", min_width=50, overflow="fold")
    for e in profile.entries.values():
        table.add_row(e.key, _value(e.value, e.extra), e.unit, e.cite, e.summary)
    return table


@click.command(short_help="Print the ordinance's numbers with their citations.")
@click.option("--profile", "profile_path", type=click.Path(dir_okay=False), default=None,
              help="Ordinance profile TOML (default: the Village of Winneconne's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def rules(profile_path: str | None, as_json: bool) -> None:
    """Print every threshold, width, design storm and deadline of the ordinance profile."""
    profile = load_profile(profile_path)
    if as_json:
        rows = [{"entry": e.key, "value": e.value, "unit": e.unit, "section": e.section,
                 "summary": e.summary, **e.extra} for e in profile.entries.values()]  # fmt: skip
        click.echo(json.dumps({"profile": profile.name, "measure_crs": profile.measure_crs, "entries": rows}, indent=2))
        return
    console = Console(width=max(Console().width, 170))
    console.print(rules_table(profile))
    console.print(f"Measuring CRS: {profile.measure_crs}.  Source: {profile.source}")
