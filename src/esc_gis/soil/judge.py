"""Judge each site's soil loss against the sediment standard: the governing window, and pass or fail.

§ 540-7B(3)(b) sets the standard ("no more than" the profile's tons per acre) for sites of the
profile's sediment area or more, counting the common plan. Where the screening has decided a
site's reach, whether the article applies is taken from it and never re-decided (issue 34, "one
site, one answer"); a plan total from outside the layer (the registry's common plan) can only
extend the sediment standard to a site the article applies to, never to one it does not. Pure:
arrays in, a :class:`Judgement` out.
"""

from __future__ import annotations

__all__ = ["Judgement", "judge", "no_plan_total_problems", "plan_total_problems"]

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from esc_gis.errors import Problem
from esc_gis.profile import Profile
from esc_gis.rules import sediment_standard_reaches


@dataclass(frozen=True)
class Judgement:
    """The governing window of each site and, where the standard reaches, whether it meets it."""

    computed: NDArray[np.bool_]
    governing: NDArray[np.intp]
    discharge_tpa: NDArray[np.float64]
    soil_loss_tpa: NDArray[np.float64]
    reaches: NDArray[np.bool_]  # the sediment standard reaches the site (§ 540-7B(3)(b))
    passes: NDArray[np.bool_]  # meaningful only where computed & reaches


def judge(
    discharge_tpa: ArrayLike,
    soil_loss_tpa: ArrayLike,
    plan_sqft: ArrayLike,
    standard_tpa: float,
    profile: Profile,
    applicability: ArrayLike | None = None,
    sediment_standard: ArrayLike | None = None,
) -> Judgement:
    """Pick each site's governing window (the largest discharge) and test it where the standard reaches.

    Parameters
    ----------
    discharge_tpa, soil_loss_tpa : array-like, shape (sites, windows)
        Each site's discharge and soil loss (tons per acre) in each window; NaN where not computed.
    plan_sqft : array-like, shape (sites,)
        The disturbed area each site is decided on (its common plan's total where it has one).
    standard_tpa : float
        The sediment standard, tons per acre.
    profile : Profile
        The ordinance profile; its sediment area decides where the standard reaches.
    applicability, sediment_standard : array-like, optional
        The screening's answer for each site (:func:`esc_gis.screening.screen`). With them, the
        standard reaches where the article applies and either the screening or ``plan_sqft`` (a
        plan total from outside the layer) reaches the sediment area.

    Returns
    -------
    Judgement
        "No more than" the standard: a discharge equal to it passes. A site is computed only
        when every window has a number.

    Raises
    ------
    ValueError
        If the arrays' shapes disagree.
    """
    win_dis = np.asarray(discharge_tpa, dtype=float)
    win_loss = np.asarray(soil_loss_tpa, dtype=float)
    if win_dis.ndim != 2 or win_loss.shape != win_dis.shape:
        raise ValueError(
            f"discharge and soil loss must both be (sites, windows); got {win_dis.shape} and {win_loss.shape}"
        )
    n = win_dis.shape[0]
    rows = np.arange(n)
    computed: NDArray[np.bool_] = np.isfinite(win_dis).all(axis=1)
    gov = np.argmax(np.where(np.isfinite(win_dis), win_dis, -np.inf), axis=1)
    gov_dis = np.where(computed, win_dis[rows, gov], np.nan)
    gov_loss = np.where(computed, win_loss[rows, gov], np.nan)
    passes: NDArray[np.bool_] = computed & (gov_dis <= standard_tpa)
    reaches: NDArray[np.bool_] = sediment_standard_reaches(plan_sqft, profile)
    if applicability is not None:
        # The screening decided the article's reach; a plan total from outside the layer (the
        # registry's) can extend the standard only to sites the article applies to.
        # No sediment answer (None) is False: np.asarray(None, dtype=bool) is.
        scr_reaches = np.asarray(sediment_standard, dtype=bool)
        reaches = (np.asarray(applicability) == "applies") & (scr_reaches | reaches)
    return Judgement(computed, gov, gov_dis, gov_loss, reaches, passes)


def plan_total_problems(
    given_sqft: float,
    site_ids: Sequence[str],
    plan_ids: ArrayLike,
    measured_sqft: ArrayLike,
    profile: Profile,
    *,
    what: str = "plan_disturbed_sqft=",
) -> list[Problem]:
    """Say why one common plan's disturbed total given for every site cannot be theirs; empty when it can.

    A site is decided on its own disturbance unless it is part of a larger common plan (the
    construction site "including areas that are part of a larger common plan of development",
    in the profile's ``common_plan`` finding): a plan total from outside the layer belongs to
    sites that name a plan (:func:`no_plan_total_problems`, the one rule for the option and the
    field), all the same one, and cannot be less than what the plan's sites in
    the layer already disturb (more than the boundary sliver, ``policy.sliver``, less). Every
    conflict is said at once.

    Parameters
    ----------
    given_sqft : float
        The total given (square feet).
    site_ids : sequence of str
        The sites' ids, in order.
    plan_ids : array-like
        Each site's plan id as the screening read it (None or NaN for none).
    measured_sqft : array-like
        Each site's decided area as the screening measured it (its plan's total where it has one).
    profile : Profile
        Gives the sliver.
    what : str, default "--plan-disturbed-sqft"
        The option, for the messages.

    Returns
    -------
    list of Problem
    """
    plans = _plans(plan_ids)
    measured = np.asarray(measured_sqft, dtype=float)
    problems = no_plan_total_problems(np.full(len(plans), given_sqft), site_ids, plans, measured, profile, what=what)
    named = sorted({p for p in plans if p is not None})
    if len(named) > 1:
        problems.append(
            Problem(
                what,
                None,
                f"one total is given for every site, but the sites name {len(named)} common plans "
                f"({', '.join(named)}).",
                "give the sites of one plan, or each site its plan's total in a plan_disturbed_sqft field.",
            )
        )
    sliver = profile.area_sqft("policy.sliver")
    for plan in named:
        most = float(np.nanmax(np.where([p == plan for p in plans], measured, np.nan)))
        if most > given_sqft + sliver:
            problems.append(
                Problem(
                    what,
                    None,
                    f"{given_sqft:,.1f} sq ft is less than the {most:,.1f} sq ft common plan {plan!r} already "
                    "disturbs in this layer, as measured: the total disagrees with the plan's own sites.",
                    "give the plan's whole disturbed total (at least what its sites here disturb), or leave the "
                    "option out.",
                )
            )
    return problems


def no_plan_total_problems(
    totals_sqft: ArrayLike,
    site_ids: Sequence[str],
    plan_ids: ArrayLike,
    own_sqft: ArrayLike,
    profile: Profile,
    *,
    what: str = "plan_disturbed_sqft=",
    per_row: bool = False,
) -> list[Problem]:
    """Say which sites that name no common plan were given a plan's total; empty when none was.

    The one rule for a disturbed total given from outside the layer, whether one option for every
    site or a ``plan_disturbed_sqft`` field per row: it is a common plan's (the construction site
    "including areas that are part of a larger common plan of development", § 540-5 in the profile's
    ``common_plan`` finding), so a site that names no plan is decided on its own disturbance, and a
    total larger than that (by more than the boundary sliver, ``policy.sliver``) cannot be its own.
    A total no larger is the site's own area (a screening output's field carries it for every row)
    and is no conflict. Every site is said at once.

    Parameters
    ----------
    totals_sqft : array-like
        The total given for each site (NaN where none is).
    site_ids : sequence of str
        The sites' ids, in order.
    plan_ids : array-like
        Each site's plan id (None, NaN or blank for none).
    own_sqft : array-like
        Each site's own decided disturbance (the screening's, or as measured).
    profile : Profile
        Gives the sliver.
    what : str, default "--plan-disturbed-sqft"
        The option or field, for the messages.
    per_row : bool, default False
        The totals are a field of the sites (each problem names its row and says to empty the
        field), not one option (each names the site and says to leave the option out).

    Returns
    -------
    list of Problem
    """
    plans = _plans(plan_ids)
    totals = np.asarray(totals_sqft, dtype=float)
    own = np.asarray(own_sqft, dtype=float)
    sliver = profile.area_sqft("policy.sliver")
    field = what.removesuffix("=")  # per row, the layer's field of the keyword's name: no keyword there
    problems = []
    for i, (sid, plan, total, mine) in enumerate(zip(site_ids, plans, totals, own, strict=True)):
        # NaN compares False: no total given, or no own area known (nothing to hold it against).
        if plan is not None or not total > (mine if np.isfinite(mine) else 0.0) + sliver:
            continue
        rule = "a site that is not part of a larger plan is decided on its own disturbance."
        if per_row:
            problems.append(
                Problem(
                    "sites",
                    i + 1,
                    f"its {field} field gives {total:,.1f} sq ft, a common plan's total, but the site names no common "
                    f"plan (its plan_id is empty) and disturbs {mine:,.1f} sq ft itself: {rule}",
                    f"give the site its plan_id (or plan_field=), or empty its {field} field.",
                    site_id=str(sid),
                )
            )
        else:
            problems.append(
                Problem(
                    what,
                    None,
                    f"{total:,.1f} sq ft is a common plan's total, but site {sid!r} names no common plan (its plan_id "
                    f"is empty): {rule}",
                    "give the site its plan_id (or plan_field=), or leave the option out.",
                )
            )
    return problems


def _plans(plan_ids: ArrayLike) -> list[str | None]:
    """Return each plan id as text, None for none (None, NaN or blank)."""
    return [None if pd.isna(p) or not str(p).strip() else str(p) for p in np.asarray(plan_ids, dtype=object)]
