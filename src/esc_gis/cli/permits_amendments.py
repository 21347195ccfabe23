"""``esc-gis permits``: plan amendments and the office's notices (§ 540-9B).

Thin wrappers over :class:`esc_gis.registry.Registry`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group.
"""

from __future__ import annotations

from typing import Any

import click

from esc_gis.cli._options import (
    FILE,
)
from esc_gis.cli._permits import _LAYERS, _REGISTRY, _WHO, _basis, _date, _open


def _echo_version(v: Any) -> None:
    if v.is_notice:
        click.echo(f"  notice #{v.id}  {v.trigger}  {v.requested_on} by {v.requested_by}: {v.description}")
        return
    label = "original" if v.version == 0 else f"{v.trigger}"
    permission = (
        f"; permission {v.permission_on} by {v.permission_by}, effective {v.effective_on}" if v.permission_on else ""
    )
    answers = f"; answers notice #{v.notice_id}" if v.notice_id is not None else ""
    file = f"; file {v.plan_file} (sha256 {v.plan_sha256[:12]}...)" if v.plan_file and v.plan_sha256 else ""
    click.echo(f"  version {v.version}  {label}  plan dated {v.plan_date}: {v.description}{permission}{answers}{file}")


@click.command(short_help="Record a plan version: the original, an amendment with its written permission, or a notice.")
@_REGISTRY
@click.argument("number")
@click.option(
    "--trigger",
    required=True,
    help="original (the plan approved with the permit), or what makes the plan amended: "
    "B1, B2 or B3 (the profile's [amendments.triggers]).",
)
@click.option(
    "--description", required=True, help="What the version changes (or, with --notified-on, the changes needed)."
)
@click.option("--plan-date", default=None, help="The date on the plan version (YYYY-MM-DD).")
@click.option("--permission-on", default=None, help="Day of the administering authority's written permission.")
@click.option("--permission-by", default=None, help="Who gave the written permission.")
@click.option("--effective-on", default=None, help="Day the modification takes effect (default: the permission's day).")
@click.option("--requested-by", default=None, help="Who asked for the amendment (or who sent the notice).")
@click.option("--notice", "notice_id", type=int, default=None, help="The open notice the amended plan answers.")
@click.option("--plan-file", type=FILE, default=None, help="The plan version's file: its name and SHA-256 are kept.")
@click.option(
    "--notified-on",
    default=None,
    help="Record the office's notice of changes needed, sent on this day (trigger B3), before the amended plan.",
)
@_LAYERS
@_WHO
def amend(
    registry: str,
    number: str,
    trigger: str,
    description: str,
    plan_date: str | None,
    permission_on: str | None,
    permission_by: str | None,
    effective_on: str | None,
    requested_by: str | None,
    notice_id: int | None,
    plan_file: str | None,
    notified_on: str | None,
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record a version of permit NUMBER's erosion and sediment control plan in REGISTRY (private but its date).

    An amendment needs the written permission given before the modification takes effect.
    """
    with _open(registry, layers_path) as reg:
        if notified_on is not None:
            if any(
                x is not None for x in (plan_date, permission_on, permission_by, effective_on, notice_id, plan_file)
            ):
                raise click.ClickException(
                    "a notice (--notified-on) has no plan yet: record the amended plan with its own `permits amend`."
                )
            v = reg.notify_amendment(
                number,
                trigger=trigger,
                description=description,
                notified_on=_date(notified_on, "notified_on"),
                requested_by=requested_by,
                who=who,
            )
        else:
            v = reg.amend(
                number,
                trigger=trigger,
                description=description,
                plan_date=_date(plan_date, "plan_date"),
                permission_on=_date(permission_on, "permission_on"),
                permission_by=permission_by,
                effective_on=_date(effective_on, "effective_on"),
                requested_by=requested_by,
                notice_id=notice_id,
                plan_file=plan_file,
                who=who,
            )
        keep = reg.profile.finding("plan_at_site")
    click.echo(f"{v.permit_number}:")
    _echo_version(v)
    if not v.is_notice:
        click.echo(f"  {keep.message} ({keep.section}).")


@click.command(name="amendments", short_help="List the plan versions, amendments and open notices (private).")
@_REGISTRY
@click.argument("number", required=False)
@_LAYERS
def amendments_(registry: str, number: str | None, layers_path: str | None) -> None:
    """List REGISTRY's plan versions (or permit NUMBER's), with the notices no amended plan answers yet."""
    with _open(registry, layers_path) as reg:
        found = reg.plan_versions(number)
        open_ = reg.open_notices(number)
        notes = [
            reg.profile.finding("amendment_notice_open", notice_id=n.id, notified_on=n.requested_on) for n in open_
        ]
    permits_: dict[str, list[Any]] = {}
    for v in found:
        permits_.setdefault(v.permit_number, []).append(v)
    for n, versions in permits_.items():
        click.echo(n)
        for v in versions:
            _echo_version(v)
    for n, f in zip(open_, notes, strict=True):
        click.echo(f"OPEN {n.permit_number}: {f.message} ({f.section}; {_basis(f.basis)})")
    if not found:
        click.echo("No plan versions recorded.", err=True)
