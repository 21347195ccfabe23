"""``esc-gis permits``: the life cycle: transitions, retraction and reinstatement, extensions.

Thin wrappers over :class:`esc_gis.registry.Registry`; :mod:`esc_gis.cli.permits` adds them to the
``permits`` group.
"""

from __future__ import annotations

import click

from esc_gis.cli._permits import _LAYERS, _REGISTRY, _WHO, _date, _describe, _open, _when


@click.command(short_help="Move a permit through its life cycle.")
@_REGISTRY
@click.argument("number")
@click.argument("state")
@click.option(
    "--on", "on", default=None, help="When (YYYY-MM-DD, or YYYY-MM-DDTHH:MM for the start of work); default now."
)
@click.option(
    "--reasons",
    default=None,
    help="Written reasons: required where the profile's [lifecycle.written_reasons] says (disapproved, "
    "suspended and revoked by the ordinance; stop_work, and closed before a decision -- withdrawn or "
    "the information never came -- by the office's policy).",
)
@click.option(
    "--notified-on",
    default=None,
    help="Day of the written notification of the responsible party (YYYY-MM-DD), on or before the move: "
    "required for suspended and revoked.",
)
@click.option(
    "--condition",
    "conditions",
    multiple=True,
    help="With approved: a condition of the permit the office sets with its approval (repeatable).",
)
@_LAYERS
@_WHO
def transition(
    registry: str,
    number: str,
    state: str,
    on: str | None,
    reasons: str | None,
    notified_on: str | None,
    conditions: tuple[str, ...],
    layers_path: str | None,
    who: str | None,
) -> None:
    """Move permit NUMBER of REGISTRY to STATE.

    An application leaves review by a decision (an incomplete one may be disapproved with written
    reasons) or is closed undecided with written reasons: withdrawn, or the information requested
    never came.
    """
    with _open(registry, layers_path) as reg:
        p = reg.transition(
            number,
            state,
            who=who,
            on=_when(on, "on"),
            reasons=reasons,
            notified_on=_date(notified_on, "notified_on"),
            conditions=conditions,
        )
    click.echo(_describe(p))


def _back_command(move: str, short: str, doc: str) -> click.Command:
    """Make ``permits retract`` / ``permits reinstate``: back to the state before, with written reasons."""

    @click.command(name=move, short_help=short, help=doc)
    @_REGISTRY
    @click.argument("number")
    @click.option("--reasons", required=True, help="Written reasons, the text of the written notification.")
    @click.option("--on", default=None, help="Day of the decision (YYYY-MM-DD); default today.")
    @_LAYERS
    @_WHO
    def command(
        registry: str, number: str, reasons: str, on: str | None, layers_path: str | None, who: str | None
    ) -> None:
        with _open(registry, layers_path) as reg:
            method = reg.retract if move == "retract" else reg.reinstate
            p = method(number, reasons=reasons, who=who, on=_date(on, "on"))
        click.echo(_describe(p))

    return command


retract = _back_command(
    "retract",
    "Retract a stop-work order or a revocation: back to the state before.",
    "Retract the stop-work order or revocation of permit NUMBER of REGISTRY; it goes back to the state "
    "it was in before.",
)


reinstate = _back_command(
    "reinstate",
    "Lift a suspension: back to the state before.",
    "Reinstate the suspended permit NUMBER of REGISTRY; it goes back to the state it was in before.",
)


@click.command(short_help="Extend a permit (each extension up to the profile's longest).")
@_REGISTRY
@click.argument("number")
@click.argument("days", type=click.IntRange(min=1))
@click.option("--on", default=None, help="Day of the decision (YYYY-MM-DD); default today.")
@click.option("--reasons", default=None, help="Reasons of the extension.")
@click.option(
    "--condition", "conditions", multiple=True, help="An additional BMP required as a condition (repeatable)."
)
@click.option(
    "--authorization",
    "authorizations",
    multiple=True,
    help="Another construction authorization the extension rests on (repeatable).",
)
@_LAYERS
@_WHO
def extend(
    registry: str,
    number: str,
    days: int,
    on: str | None,
    reasons: str | None,
    conditions: tuple[str, ...],
    authorizations: tuple[str, ...],
    layers_path: str | None,
    who: str | None,
) -> None:
    """Extend permit NUMBER of REGISTRY by DAYS (approved, active, extended, or under a stop-work order)."""
    with _open(registry, layers_path) as reg:
        p = reg.extend(
            number,
            days,
            who=who,
            on=_date(on, "on"),
            reasons=reasons,
            conditions=conditions,
            authorizations=authorizations,
        )
    click.echo(_describe(p))


@click.command(short_help="Record the office's determination that a site under the permit threshold needs a permit.")
@_REGISTRY
@click.argument("number")
@click.option("--on", "on", required=True, help="Day of the determination (YYYY-MM-DD).")
@click.option(
    "--reasons",
    required=True,
    help="Why permit coverage is needed on this site, in words (what was found).",
)
@click.option(
    "--purpose",
    "purposes",
    multiple=True,
    required=True,
    metavar="NAME",
    help="What coverage is needed for, by the profile's names ([determination_purposes]), repeatable: for the "
    "Village, compliance, targeted (targeted performance standards) or waters (waters of the state).",
)
@_LAYERS
@_WHO
def determine(
    registry: str,
    number: str,
    on: str,
    reasons: str,
    purposes: tuple[str, ...],
    layers_path: str | None,
    who: str | None,
) -> None:
    """Record that a permit is needed for NUMBER of REGISTRY, a site under the permit threshold.

    The site is decided now as every command decides it; the determination is refused where a permit
    is required already, where the article does not reach the site, and where it is exempt. Afterwards
    the permit is required: enforcement for work without a required permit fits it, and `review
    --registry REGISTRY --determined NUMBER` reviews its plan in full.
    """
    with _open(registry, layers_path) as reg:
        from esc_gis.registry.domain.determinations import purpose_words

        p = reg.determine(number, on=_date(on, "on"), reasons=reasons, purposes=purposes, who=who)
        words = purpose_words(reg.profile.tables, p.state.determination["purposes"])
    click.echo(f"{_describe(p)}  permit {p.permit_decision} (by determination, to {words})")


@click.command(short_help="Record a condition of an issued permit, set by the office.")
@_REGISTRY
@click.argument("number")
@click.argument("text")
@click.option("--on", "on", required=True, help="Day the condition was set (YYYY-MM-DD).")
@_LAYERS
@_WHO
def condition(registry: str, number: str, text: str, on: str, layers_path: str | None, who: str | None) -> None:
    """Record TEXT as a condition of the issued permit NUMBER of REGISTRY (`permits show` numbers them)."""
    with _open(registry, layers_path) as reg:
        p = reg.add_condition(number, text, on=_date(on, "on"), who=who)
    n = len(p.state.permit_conditions)
    click.echo(f"{_describe(p)}  condition {n}: {text.strip()}")
    # Set after the issuance, not with the approval: say that this is a reading, with its basis.
    f = reg.profile.finding("condition_after_issuance")
    click.echo(f"  {f.message} ({f.section}; basis {f.basis})")
