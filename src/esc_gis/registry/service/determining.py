"""The administering authority's terms on a permit: a determination that it is needed, and its conditions.

``determine`` records the authority's determination that a site under the permit threshold needs
a permit (§ 540-4A(1)(c)); ``add_condition`` records a condition of an issued permit (§ 540-8F).
Each is one event on the permit's history, folded into its state
(:attr:`~esc_gis.registry.domain.fold.PermitState.determination`,
:attr:`~esc_gis.registry.domain.fold.PermitState.conditions`): no table of their own.
"""

from __future__ import annotations

__all__ = ["add_condition", "determine", "plan_site_problems"]

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from esc_gis.errors import Problem, ValidationError
from esc_gis.registry.domain.dates import EffectiveDate
from esc_gis.registry.domain.determinations import named_purposes
from esc_gis.registry.domain.overlap import same_site
from esc_gis.registry.domain.records import Event, Permit
from esc_gis.registry.service._core import ISSUED, _who
from esc_gis.registry.store.backend import now_utc

if TYPE_CHECKING:
    import shapely

    from esc_gis.registry.service.registry import Registry

#: The states in which a permit's coverage has ended: nothing is determined or conditioned on it.
_ENDED = ("closed", "revoked", "disapproved")


def determine(
    reg: Registry,
    permit_number: str,
    *,
    on: date | None,
    reasons: str | None,
    purposes: Sequence[str] = (),
    who: str | None = None,
) -> Permit:
    """Record that the administering authority determined a permit is needed on a small site (§ 540-4A(1)(c)).

    "A permit is required for a construction site with less than 4,000 square feet ... if the
    administering authority determines that permit coverage is needed in order to improve
    article compliance, meet targeted performance standards, or protect waters of the state."
    The site is decided now by the one function (:meth:`Registry.decide_permit`); the
    determination is refused where the screening already requires a permit, where the article
    does not reach the site, and where § 540-4A(3) exempts it. ``purposes`` names which of the
    three it is made for, one or more, by the profile's names (``[determination_purposes]``:
    ``compliance``, ``targeted``, ``waters``); they are recorded with it. Afterwards the permit is
    ``required`` with the standards of a permitted site: § 540-8 applies to it (enforcement on
    activity without a required permit, the deadlines), and a new measurement keeps it required.

    Raises
    ------
    PermitNotFoundError
    ValidationError
        With every problem at once: no reasons, no purpose or one the profile does not name, no
        day or one after today or before the application's receipt, coverage ended, already
        determined or required, outside the article, exempt.
    ProfileError
        If the profile has no ``[determination_purposes]``.
    """
    who = _who(who)
    p = reg.get(permit_number)
    src = f"permit {permit_number}"
    problems: list[Problem] = []
    if not (reasons or "").strip():
        problems.append(Problem(src, None, "the reasons are empty.", "give the determination's reasons (reasons=)."))
    named, purpose_problems = named_purposes(reg.profile.tables, purposes)
    problems += [Problem(src, None, m, f) for m, f in purpose_problems]
    if on is None:
        problems.append(Problem(src, None, "the determination has no date.", "give on=YYYY-MM-DD."))
    problems += reg._date_problems(src, EffectiveDate("on=", on, p.received_on, "the application's receipt"))
    if p.status in _ENDED:
        problems.append(
            Problem(src, None, f"the permit is {p.status}.", "record the determination on a new application.")
        )
    if p.state is not None and p.state.determination is not None:
        was = p.state.determination
        problems.append(
            Problem(src, None, f"a determination is already recorded ({was['on']}).", "see `esc-gis permits show`.")
        )
    else:
        problems += _decision_problems(reg, p, src)
    if problems:
        raise ValidationError(problems)
    assert on is not None and reasons is not None
    fields = {"permit_decision": "required", "standards": reg.profile.standards_permitted}
    with reg.backend.write() as cur:
        locked = reg._locked(cur, permit_number)
        if locked.state is not None and locked.state.determination is not None:  # recorded meanwhile
            raise ValidationError([Problem(src, None, "a determination was recorded meanwhile.", "see it.")])
        reg._event(
            cur,
            permit_number,
            Event(now_utc(), who, "determination", None, None, on, None, reasons.strip()),
            fields=fields,
            purposes=named,
        )
    return reg.get(permit_number)


def _decision_problems(reg: Registry, p: Permit, src: str) -> list[Problem]:
    """Return why no determination fits ``p``'s site as the one decision decides it now (empty: it fits)."""
    try:
        d = reg.decide_permit(p)
    except ValidationError as exc:
        return [Problem(src, None, x.message, x.fix or "check the site.") for x in exc.problems]
    sqft = float(d["plan_disturbed_sqft"])
    if d["permit_decision"] == "required":
        f = reg.profile.finding("determination_not_needed", sqft=sqft)
        return [Problem(src, None, f"{f.message} ({f.section}).", "nothing to record: a permit is required already.")]
    if d.get("npdes_small"):
        f = reg.profile.finding("determination_exempt", sqft=sqft)
        return [Problem(src, None, f"{f.message} ({f.section}).", "record nothing: no permit can be required here.")]
    return []


def add_condition(reg: Registry, permit_number: str, text: str, *, on: date | None, who: str | None = None) -> Permit:
    """Record a condition of an issued permit established by the administering authority (§ 540-8F).

    "Permits issued under this section may include conditions established by administering
    authority in addition to the requirements set forth in § 540-8E, where needed to assure
    compliance with the performance standards in § 540-7." Only on an issued permit in force, on a
    day within its period (that a condition may be added after the issuance, while the period
    runs, is a reading: finding ``condition_after_period``); conditions set with the approval go
    with it (`transition ... approved --condition`). A stop-work order for "The conditions of the
    permit are not being met" (§ 540-12A(3)) names one of them, or one of § 540-8E's.

    Raises
    ------
    PermitNotFoundError
    ValidationError
        With every problem at once: no text, no day or one after today or before the issuance,
        a permit not issued or no longer in force, a day after the permit's period ended.
    """
    who = _who(who)
    p = reg.get(permit_number)
    src = f"permit {permit_number}"
    problems: list[Problem] = []
    if not (text or "").strip():
        problems.append(Problem(src, None, "the condition is empty.", "give its text."))
    if on is None:
        problems.append(Problem(src, None, "the condition has no date.", "give on=YYYY-MM-DD."))
    problems += reg._date_problems(src, EffectiveDate("on=", on, p.issued_on, "the permit's issuance"))
    if p.status not in ISSUED or p.status == "final_stabilization":
        f = reg.profile.finding("condition_not_issued", status=p.status)
        problems.append(Problem(src, None, f"{f.message} ({f.section}).", "check the permit's state."))
    elif on is not None and p.expires_on is not None and on > p.expires_on:
        # The state alone does not end the period: a permit left active past its expiry has none
        # left to condition (a reading, labelled so in the profile).
        f = reg.profile.finding("condition_after_period", expired=p.expires_on, day=on)
        problems.append(
            Problem(src, None, f"{f.message} ({f.section}; basis {f.basis}).", "extend the permit while it runs.")
        )
    if problems:
        raise ValidationError(problems)
    assert on is not None
    with reg.backend.write() as cur:
        reg._locked(cur, permit_number)
        reg._event(
            cur,
            permit_number,
            Event(now_utc(), who, "condition", None, None, on, None, text.strip()),
            condition=text.strip(),
        )
    return reg.get(permit_number)


def plan_site_problems(
    reg: Registry, permit: Permit, site: shapely.Geometry | None, crs: Any, source: str
) -> list[Problem]:
    """Return why a plan's site boundary ``site`` (in ``crs``) is not ``permit``'s site (empty: it is).

    A determination is recorded on one permit's site (§ 540-4A(1)(c)); a plan reviewed under it
    (``review --registry R --determined P``) must be for that site. One site is the intake's rule
    (:func:`~esc_gis.registry.domain.overlap.same_site`, the profile's ``policy.intake_same_site``):
    boundaries overlapping by more than that share of either.
    """
    import geopandas as gpd

    number = permit.permit_number
    if site is None or site.is_empty:
        return [
            Problem(
                source,
                None,
                f"the plan has no site boundary to compare with the site of permit {number}.",
                "add the site_boundary layer, or review the plan without determined=.",
            )
        ]
    if crs is not None and reg.crs is not None and str(crs) != str(reg.crs):
        site = gpd.GeoSeries([site], crs=crs).to_crs(reg.crs).iloc[0]
    share = float(reg.profile.entry("policy.intake_same_site").value or 0) / 100
    if same_site(site, None, permit.site, None, share=share):
        return []
    return [
        Problem(
            source,
            None,
            f"the plan's site boundary is not the site of permit {number} ({permit.site_address}): they overlap "
            f"by no more than {share:.0%} of either, so the determination recorded on that permit is not this "
            "site's.",
            "give determined= the permit whose site the plan is for, or review the plan without it.",
        )
    ]
