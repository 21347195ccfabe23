"""``esc-gis permits report | summary | export-inspections``: the office's printed and exported records.

Thin wrappers over :mod:`esc_gis.registry.views.reports`, :mod:`esc_gis.registry.views.summary` and
:mod:`esc_gis.registry.views.private_export`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group. Everything but the summary holds inspectors' notes or photos and is
written readable by its owner only.
"""

from __future__ import annotations

from datetime import date

import click

from esc_gis._outputs import reads
from esc_gis.cli._options import FILE, layers_option, output_option, overwrite_option

_REGISTRY = click.argument("registry")
_LAYERS = layers_option("Layer set (default: the Village's); its CRS is the registry's.")
_FROM = click.option("--from", "start", default=None, help="First day of the period (YYYY-MM-DD), included.")
_TO = click.option("--to", "end", default=None, help="Last day of the period (YYYY-MM-DD), included.")


def _day(value: str | None, name: str) -> date | None:
    from esc_gis.cli._permits import _date

    return _date(value, name)


@click.command(short_help="Print a site's inspection reports (.html/.pdf), or the office's log for a period.")
@_REGISTRY
@click.argument("number", required=False)
@output_option(".html or .pdf (one printed page per report); the log also .csv")
@_FROM
@_TO
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "layers_path")
def report(
    registry: str,
    number: str | None,
    output: str,
    start: str | None,
    end: str | None,
    overwrite: bool,
    layers_path: str | None,
) -> None:
    """With NUMBER: write that permit's inspection reports (all, or those from --from to --to) to OUTPUT.

    Each report shows the date, time and location of the inspection, the inspector, the
    assessment of the controls, the BMP work done, the phase, the deficiencies with their
    repairs (due, closed) and the photos. Without NUMBER: the inspection log of every permit
    for the period (--from and --to required). PDF is printed by headless Chromium.
    Private (inspectors' notes, photos): written readable by you only.
    """
    from esc_gis.cli._permits import _open
    from esc_gis.registry.views.reports import write_inspection_log, write_permit_report

    first, last = _day(start, "from"), _day(end, "to")
    if number is None and (first is None or last is None):
        raise click.UsageError("give a permit NUMBER, or --from and --to for the office's inspection log.")
    with _open(registry, layers_path) as reg:
        if number is not None:
            n = write_permit_report(reg, number, output, start=first, end=last, overwrite=overwrite)
            click.echo(f"Wrote {n} inspection report(s) of {number} to {output} (private).")
        else:
            n = write_inspection_log(reg, output, start=first, end=last, overwrite=overwrite)
            click.echo(f"Wrote the inspection log {first} to {last}: {n} inspection(s), to {output} (private).")


@click.command(short_help="Print a permit's certificate of coverage (.html/.pdf), with its conditions.")
@_REGISTRY
@click.argument("number")
@output_option(".html or .pdf")
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "layers_path")
def certificate(registry: str, number: str, output: str, overwrite: bool, layers_path: str | None) -> None:
    """Write the certificate of coverage of the issued permit NUMBER to OUTPUT, to post at the site.

    It shows the permit, its period and standards, a determination that a permit is needed (if one
    was recorded) and the permit's conditions, numbered as `permits show` numbers them. A permit
    not issued, no longer in force, or past its period (its valid-to day before today) gets none.
    """
    from esc_gis.cli._permits import _open
    from esc_gis.registry.views.reports import write_certificate

    with _open(registry, layers_path) as reg:
        p = write_certificate(reg, number, output, overwrite=overwrite)
    n = len(p.state.permit_conditions) if p.state is not None else 0
    click.echo(f"Wrote the certificate of {number} ({n} condition(s)) to {output}.")


@click.command(short_help="The office summary for a period (.csv or .html): permits, inspections, repairs, money.")
@_REGISTRY
@output_option(".csv (section, measure, value) or .html")
@_FROM
@_TO
@click.option(
    "--rain",
    "rain_path",
    type=FILE,
    default=None,
    help="Precipitation CSV, as for `permits due`: the inspections due after rain.",
)
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "rain_path", "layers_path")
def summary(
    registry: str,
    output: str,
    start: str | None,
    end: str | None,
    rain_path: str | None,
    overwrite: bool,
    layers_path: str | None,
) -> None:
    """Write the office's summary of REGISTRY from --from to --to (both included) to OUTPUT.

    Permits by state at the period's end, inspections done and missed (the weekly and
    after-rain deadlines that fell due in the period), open and overdue repairs,
    enforcement cases, appeals, guarantees held and fees received. Counts and totals
    only: no names or notes.
    """
    from esc_gis._outputs import check_output_file
    from esc_gis.cli._permits import _open
    from esc_gis.registry.views.agenda import read_rain_csv
    from esc_gis.registry.views.summary import SUFFIXES, office_summary, write_summary

    first, last = _day(start, "from"), _day(end, "to")
    if first is None or last is None:
        raise click.UsageError("give the period: --from YYYY-MM-DD --to YYYY-MM-DD.")
    check_output_file(
        output, suffixes=SUFFIXES, kind="the office summary is written as CSV or HTML", overwrite=overwrite
    )
    rain = read_rain_csv(rain_path) if rain_path else []
    with _open(registry, layers_path) as reg:
        rows = office_summary(reg, first, last, rain=rain)
        write_summary(rows, output, start=first, end=last, profile=reg.profile, overwrite=overwrite)
    click.echo(f"Wrote the office summary {first} to {last} ({len(rows)} measures) to {output}.")


@click.command(
    name="export-inspections",
    short_help="Export inspections, deficiencies, repairs and photos (with SHA-256) to a .zip (private).",
)
@_REGISTRY
@output_option(".zip")
@overwrite_option("Replace OUTPUT if it exists.")
@_LAYERS
@reads("registry", "layers_path")
def export_inspections(registry: str, output: str, overwrite: bool, layers_path: str | None) -> None:
    """Write every inspection report of REGISTRY, with deficiencies, repairs and photo files, to OUTPUT.

    The archive holds inspections.csv, deficiencies.csv, photos.csv (each photo's file name
    in the archive and its SHA-256) and the photos' bytes, each checked against its
    recorded checksum on the way out, plus SHA256SUMS (``sha256sum -c`` checks it). Free text
    that a spreadsheet would run as a formula (=, +, -, @ first) starts with ' in the CSVs, as
    in the inspection log. Private: written readable by you only.
    """
    from esc_gis.cli._permits import _open
    from esc_gis.registry.views.private_export import export_inspections as export

    with _open(registry, layers_path) as reg:
        n_reports, n_photos = export(reg, output, overwrite=overwrite)
    click.echo(f"Wrote {n_reports} inspection report(s) and {n_photos} photo(s) to {output} (private).")
