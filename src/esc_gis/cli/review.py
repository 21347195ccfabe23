"""``esc-gis review``: check a submitted erosion and sediment control plan (§ 540-9, § 540-7B).

The command's help names no section: the checks' citations are the profile's.
"""

from __future__ import annotations

import click

from esc_gis._outputs import reads
from esc_gis.cli._catalogue import short_help
from esc_gis.cli._options import (
    FILE,
    VECTOR,
    basemap_option,
    layers_option,
    offline_option,
    output_option,
    overwrite_option,
    quiet_option,
)


@click.command(name="review", short_help=short_help("review"))
@click.argument("plan", type=VECTOR)
@output_option("The report (.html).")
@click.option(
    "--json",
    "json_path",
    type=FILE,
    default=None,
    help="Also write the findings as JSON (each check with its section and basis).",
)
@click.option(
    "--registry",
    default=None,
    help="Permit registry (GeoPackage or postgresql:// URL): the plan's [site] plan_id takes the registry's plan "
    "total.",
)
@click.option(
    "--determined",
    "determined_permit",
    default=None,
    help="With --registry: the permit whose site the plan is for, on which `permits determine` recorded that a "
    "permit is needed; a site under the permit threshold is then reviewed in full.",
)
@layers_option("Layer set: boundary, waters, DEM (default: the profile's own).")
@basemap_option()
@offline_option("Inline Leaflet in the map: the report opens with no network.")
@overwrite_option("Replace the outputs if they exist.")
@quiet_option("No summary.")
@reads("plan", "layers_path")
def review(
    plan: str,
    output: str,
    json_path: str | None,
    registry: str | None,
    determined_permit: str | None,
    layers_path: str | None,
    basemap: str,
    offline: bool,
    overwrite: bool,
    quiet: bool,
) -> None:
    """Review PLAN (a .gpkg, a .dxf or a folder, with plan.toml) and write the report to OUTPUT.

    A broken package still gets a report, saying what is missing; something that is not a plan
    package at all (an empty file or folder, a picture renamed .gpkg, none of the plan's layers)
    is refused with exit status 1 and no report, as is a package whose layers do not lie together
    (a layer 157 km from the site boundary: a wrong CRS label, named) or with a polygon a repair
    would change (a bow-tie). Only failures of what the
    ordinance requires are reasons for disapproval; failures of the toolkit's review policy or
    of a technical standard are advisories. The exit status is 0 whatever the verdict: the
    verdict is in the report, the JSON and the summary line. With --determined, a plan whose site
    boundary is not the permit's site is refused (exit 1, no report).
    """
    from esc_gis._outputs import check_output_file
    from esc_gis.layers import load_layers
    from esc_gis.maps import check_map_path
    from esc_gis.maps.render import _figure
    from esc_gis.maps.review import review_map
    from esc_gis.profile import load_profile
    from esc_gis.review import review_plan
    from esc_gis.review.report import write_report

    check_map_path(output, overwrite=overwrite)
    if json_path:
        check_output_file(json_path, suffixes=(".json",), kind="findings are written as JSON", overwrite=overwrite)
    prof = load_profile()
    ls = load_layers(layers_path, profile=prof)
    totals = None
    if registry is not None:
        from esc_gis.cli._soil_loss_run import registry_plan_totals

        totals = registry_plan_totals(registry, layers_path)
    determined = _determination(registry, determined_permit, layers_path) if determined_permit else None
    result = review_plan(plan, layers=ls, profile=prof, plan_totals=totals, determined=determined)
    if determined_permit:
        _check_site(registry, determined_permit, layers_path, result, plan)
    page = _figure(
        review_map(result.layers, layers=ls, basemap=basemap, offline=offline, checks=result.checks)
    ).render()
    write_report(result, output, map_html=page, json_path=json_path)
    if not quiet:
        fails = sum(c.status == "fail" for c in result.checks)
        looks = sum(c.status == "look" for c in result.checks)
        click.echo(
            f"{plan}: {result.verdict} ({fails} failing: {len(result.reasons)} reason(s) for disapproval, "
            f"{len(result.advisories)} advisory; {looks} to look at). Wrote {output}"
            f"{f' and {json_path}' if json_path else ''}."
        )


def _determination(registry: str | None, number: str, layers_path: str | None) -> str:
    """Return the registry's record of the determination on permit ``number``, in words (its one home).

    Raises
    ------
    click.BadParameter
        Without --registry, or if the permit has no determination recorded.
    """
    if registry is None:
        raise click.BadParameter("give the registry that records it (--registry).", param_hint="--determined")
    from esc_gis.registry import open_registry

    with open_registry(registry, layers=layers_path) as reg:
        p = reg.get(number)
    d = p.state.determination if p.state is not None else None
    if d is None:
        from esc_gis.registry.store.conninfo import shown

        msg = (
            f"permit {number} has no determination that a permit is needed; record it first "
            f"(esc-gis permits determine {shown(registry)} {number} --on DATE --reasons TEXT)."
        )
        raise click.BadParameter(msg, param_hint="--determined")
    from esc_gis.registry.domain.determinations import purpose_words

    to = purpose_words(reg.profile.tables, d.get("purposes") or ())
    return f"permit {number}, {d['on']}" + (f", to {to}" if to else "") + f": {d['reasons']}"


def _check_site(registry: str | None, number: str, layers_path: str | None, result: object, plan: str) -> None:
    """Refuse a plan whose site boundary is not the site of permit ``number`` (the determination's).

    Raises
    ------
    ValidationError
        If the boundaries are not one site, or the plan has none (exit 1, no report written).
    """
    import shapely

    from esc_gis.errors import ValidationError
    from esc_gis.registry import open_registry

    layers = getattr(result, "layers", {}) or {}
    boundary = layers.get("site_boundary")
    site = None if boundary is None or boundary.empty else shapely.union_all(boundary.geometry.to_numpy())
    crs = None if boundary is None else boundary.crs
    assert registry is not None  # _determination refused the option without it
    with open_registry(registry, layers=layers_path) as reg:
        problems = reg.plan_site_problems(reg.get(number), site, crs, str(plan))
    if problems:
        raise ValidationError(problems)
