"""``esc-gis permits``: what is due: the agenda, its calendar feed, and the public map of permits.

Thin wrappers over :class:`esc_gis.registry.Registry`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import click

from esc_gis._outputs import reads
from esc_gis.cli._options import (
    FILE,
    basemap_option,
    offline_option,
    output_option,
    overwrite_option,
)
from esc_gis.cli._permits import _LAYERS, _REGISTRY, _basis, _date, _open, _when_text

# The agenda and its feed read the same day and the same rain: one definition of each option.
_ON_DAY = click.option("--on", default=None, help="The day to look from (YYYY-MM-DD); default today.")
_RAIN = click.option(
    "--rain",
    "rain_path",
    type=FILE,
    default=None,
    help="Precipitation CSV (date or date and time, precip_in or NOAA PRCP) for the inspections after "
    "rain; daily totals or timed (hourly) readings.",
)


@click.command(short_help="What is due or overdue: decisions, expiries, notices, inspections.")
@_REGISTRY
@_ON_DAY
@_RAIN
@click.option(
    "--within", default=7, show_default=True, type=click.IntRange(min=0), help="Also list what falls due within DAYS."
)
@click.option(
    "--calendar",
    "calendar_path",
    type=FILE,
    default=None,
    help="Office calendar TOML (holidays, weekend); default the common Wisconsin municipal one.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_LAYERS
def due(
    registry: str,
    on: str | None,
    rain_path: str | None,
    within: int,
    calendar_path: str | None,
    as_json: bool,
    layers_path: str | None,
) -> None:
    """List what is due or overdue in REGISTRY."""
    from esc_gis.registry.domain.calendar import load_calendar
    from esc_gis.registry.views.agenda import agenda, read_rain_csv

    rain = read_rain_csv(rain_path) if rain_path else []
    with _open(registry, layers_path) as reg:
        day = _date(on, "on") or reg.profile.today()
        cal = load_calendar(calendar_path) if calendar_path else reg.calendar
        items = agenda(reg.permits(), on=day, calendar=cal, profile=reg.profile, rain=rain, within_days=within)
        prof = reg.profile
    if as_json:
        click.echo(json.dumps([i.__dict__ for i in items], default=str, indent=2))
        return
    for i in items:
        flag = "OVERDUE" if i.overdue else "due    "
        click.echo(
            f"{flag} {_when_text(i.due, prof):<20} {i.permit_number}  {i.what} ({i.section}; {_basis(i.basis)})  "
            f"[{i.site_address}]"
        )
    click.echo(
        f"{sum(i.overdue for i in items)} overdue, {sum(not i.overdue for i in items)} due by "
        f"{day.fromordinal(day.toordinal() + within)}.",
        err=True,
    )


@click.command(name="calendar", short_help="The deadlines as an iCalendar (.ics) feed for calendar apps.")
@_REGISTRY
@output_option("Output iCalendar file (.ics).")
@_ON_DAY
@_RAIN
@click.option(
    "--within",
    default=365,
    show_default=True,
    type=click.IntRange(min=0),
    help="Include what falls due within DAYS (overdue items are always included).",
)
@click.option(
    "--calendar",
    "calendar_path",
    type=FILE,
    default=None,
    help="Office calendar TOML (holidays, weekend); default the common Wisconsin municipal one.",
)
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "rain_path", "calendar_path", "layers_path")
def calendar_feed(
    registry: str,
    output: str,
    on: str | None,
    rain_path: str | None,
    within: int,
    calendar_path: str | None,
    overwrite: bool,
    layers_path: str | None,
) -> None:
    """Write REGISTRY's deadlines to OUTPUT, one event per deadline (what `permits due --within DAYS` lists).

    UIDs are stable, so importing a re-export updates events instead of duplicating them.
    No personal data: permit numbers, site addresses and the deadlines only.
    """
    from esc_gis._outputs import atomic_output, check_output_file
    from esc_gis.registry.domain.calendar import load_calendar
    from esc_gis.registry.views.agenda import agenda, read_rain_csv
    from esc_gis.registry.views.ical import deadline_calendar, write_ics

    check_output_file(output, suffixes=(".ics",), kind="the deadline feed is written as iCalendar", overwrite=overwrite)
    rain = read_rain_csv(rain_path) if rain_path else []
    with _open(registry, layers_path) as reg:
        day = _date(on, "on") or reg.profile.today()
        cal = load_calendar(calendar_path) if calendar_path else reg.calendar
        items = agenda(reg.permits(), on=day, calendar=cal, profile=reg.profile, rain=rain, within_days=within)
        feed = deadline_calendar(items, profile=reg.profile, on=day)
    with atomic_output(output) as tmp:
        write_ics(feed, tmp)
    click.echo(
        f"Wrote {output}: {len(items)} deadline(s), {sum(i.overdue for i in items)} overdue on {day}, "
        f"through {day.fromordinal(day.toordinal() + within)}."
    )


@click.command(name="map", short_help="The public map of permits: active, stop-work, suspended (no personal data).")
@_REGISTRY
@output_option("Output map (.html).")
@click.option("--public", is_flag=True, help="The public map: active permits, no personal data (required).")
@basemap_option()
@offline_option("Inline Leaflet: the file opens with no network.")
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "layers_path")
def map_(
    registry: str, output: str, public: bool, basemap: str, offline: bool, overwrite: bool, layers_path: str | None
) -> None:
    """Write the public map of REGISTRY's permits where work is permitted or halted to OUTPUT."""
    from esc_gis.maps import check_map_path, write_map
    from esc_gis.maps.public import PUBLIC_STATUS, public_counts, public_frame, public_permit_map, stamp_text

    if not public:
        raise click.UsageError("Only the public map is available: pass --public.")
    check_map_path(output, overwrite=overwrite)
    with _open(registry, layers_path) as reg:
        as_of = datetime.now(timezone.utc)
        frame = reg.frame(reg.permits(status=list(PUBLIC_STATUS)))
        m = public_permit_map(
            frame,
            as_of=as_of,
            contact=reg.profile.contact,
            layers=reg.layers,
            basemap=basemap,
            offline=offline,
            profile=reg.profile,
        )
        # The map's own count and clock, so the message and the legend agree.
        said = f"{public_counts(public_frame(frame)['status'])}, data as of {stamp_text(as_of, reg.profile)}"
    write_map(m, output, overwrite=overwrite)
    click.echo(f"Wrote {output}: {said}.")
