"""``esc-gis permits``: inspections and repairs (§ 540-8E(6)).

Thin wrappers over :class:`esc_gis.registry.Registry`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group.
"""

from __future__ import annotations

import click

from esc_gis.cli._permits import _LAYERS, _REGISTRY, _WHO, _open, _time, _when_text


@click.command(short_help="Record a site inspection report: deficiencies open 24-hour repairs; photos kept.")
@_REGISTRY
@click.argument("number")
@click.option("--at", "at", required=True, help="Date and time of the inspection (YYYY-MM-DDTHH:MM, local time).")
@click.option("--inspector", required=True, help="Name of the individual who inspected.")
@click.option("--assessment", required=True, help="Assessment of the condition of the erosion and sediment controls.")
@click.option("--work-done", default=None, help="BMP implementation and maintenance performed.")
@click.option("--phase", default=None, help="The present phase of land-disturbing construction activity.")
@click.option("--deficiency", "deficiencies", multiple=True, help="A deficiency found (repeatable); opens a repair.")
@click.option(
    "--notified", default=None, help="When the permittee was notified of the deficiencies (YYYY-MM-DDTHH:MM)."
)
@click.option("--repaired", "repaired", multiple=True, type=int, help="Number of an open deficiency found repaired.")
@click.option("--photo", "photos", multiple=True, help="A photo file (PNG, JPEG, ...), stored in the registry.")
@click.option("--point", nargs=2, type=float, default=None, help="Where on the site: X Y in the layer set's CRS.")
@click.option(
    "--location",
    "location_words",
    default=None,
    help="Where on the site, in words (instead of or with --point), e.g. 'north silt fence'.",
)
@click.option(
    "--by",
    "by",
    type=click.Choice(["holder", "office"]),
    required=True,
    help="Who inspected (required, so an office visit is never taken for the holder's): the permit holder "
    "(whose weekly and after-rain inspections are the permit's duty) or the office (its own inspection, "
    "which never meets the holder's duty).",
)
@click.option(
    "--adjoining-repairs",
    default=None,
    help="Repairs of siltation or erosion damage to adjoining surfaces and drainageways the report documents.",
)
@click.option(
    "--pre-start",
    is_flag=True,
    help="An inspection before land disturbance began (the practices installed first), on an issued permit.",
)
@click.option(
    "--on-site-documents",
    type=click.Choice(["yes", "no"]),
    default=None,
    help="Office inspection: the plan, amendments, weekly reports and permit kept at the site?",
)
@click.option(
    "--certificate-posted",
    type=click.Choice(["yes", "no"]),
    default=None,
    help="Office inspection: the certificate of permit coverage posted in a conspicuous location?",
)
@_LAYERS
@_WHO
def inspect(
    registry: str,
    number: str,
    at: str,
    inspector: str,
    assessment: str,
    work_done: str | None,
    phase: str | None,
    deficiencies: tuple[str, ...],
    notified: str | None,
    repaired: tuple[int, ...],
    photos: tuple[str, ...],
    point: tuple[float, float] | None,
    location_words: str | None,
    by: str,
    adjoining_repairs: str | None,
    pre_start: bool,
    on_site_documents: str | None,
    certificate_posted: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record an inspection of permit NUMBER in REGISTRY (the weekly report's contents).

    Each --deficiency opens a repair, due within the profile's repair period of the
    inspection or of --notified, whichever came first, listed by `permits due` until a later
    inspection (--repaired ID) or `permits repaired` closes it. Only the permit holder's inspections
    (--by holder, the default) whose report holds every item the profile's
    [inspections.report_contents] requires (--point or --location, --work-done, --phase) meet the
    weekly and after-rain duty; an incomplete one, or a day alone (`permits update --inspected`), is
    listed by `permits due` with what it lacks. An office inspection (--by office) may record the
    site checklist; a "no" is listed by `permits due` until a later office inspection records
    "yes". Inspectors' notes and photos are private: never on the public map or in a public export.
    """
    import shapely

    from esc_gis.registry.domain.inspections import InspectionReport

    report = InspectionReport(
        inspected_at=_time(at, "at"),
        inspector=inspector,
        assessment=assessment,
        work_done=work_done,
        phase=phase,
        deficiencies=deficiencies,
        photos=photos,
        location=shapely.Point(point) if point else None,
        location_words=location_words,
        notified_at=_time(notified, "notified") if notified else None,
        repaired=repaired,
        by=by,
        pre_start=pre_start,
        adjoining_repairs=adjoining_repairs,
        on_site_documents=None if on_site_documents is None else on_site_documents == "yes",
        certificate_posted=None if certificate_posted is None else certificate_posted == "yes",
    )
    with _open(registry, layers_path) as reg:
        r = reg.inspect(number, report, who=who)
    opened = ", ".join(f"#{d.id}" for d in r.deficiencies)
    click.echo(
        f"{number}: inspection #{r.id} recorded ({_when_text(r.inspected_at, reg.profile)}, {r.inspector}, "
        f"{r.by}{', pre-start' if r.pre_start else ''}); "
        f"{len(r.deficiencies)} deficiency(ies){f' ({opened}) open repairs' if opened else ''}, "
        f"{len(r.photos)} photo(s)."
    )


@click.command(short_help="Record the repair of inspection deficiencies: closes their repairs.")
@_REGISTRY
@click.argument("number")
@click.option("--deficiency", "ids", multiple=True, type=int, required=True, help="Deficiency number (repeatable).")
@click.option("--on", "on", required=True, help="When the repair was done (YYYY-MM-DDTHH:MM, local time).")
@click.option("--detail", default=None, help="What was repaired or replaced.")
@_LAYERS
@_WHO
def repaired(
    registry: str,
    number: str,
    ids: tuple[int, ...],
    on: str,
    detail: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record in REGISTRY that deficiencies of permit NUMBER were repaired."""
    when = _time(on, "on")
    assert when is not None
    with _open(registry, layers_path) as reg:
        p = reg.repaired(number, ids, on=when, who=who, detail=detail)
    click.echo(f"{number}: repaired {', '.join(f'#{i}' for i in ids)}; {len(p.open_repairs)} repair(s) still open.")
