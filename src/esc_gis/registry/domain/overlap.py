"""Intake takes a site once: whether a new site is one an earlier application or permit already covers.

The office's rule (basis ``policy``: the ordinance says one permit for a construction site,
§ 540-8A, and nothing of how two drawings of one site are told apart):

- **The same site.** Two sites are one (:func:`same_site`) when both name a parcel and the
  parcel ids are the same (trimmed, in any case), or when their boundaries overlap by more
  than a share of either site's area: the profile's ``[policy.intake_same_site]``. Sites that
  only touch, or overlap by a sliver where two drawings of a lot line disagree, are two; a
  lot inside a larger site (a subdivision's permit) is that site, whatever its share of the
  larger one.
- **Covered.** An earlier application or permit covers its site (:func:`covers`) while it is
  not yet decided (received, incomplete, under review) or issued and in force (approved,
  deemed approved, active, extended, under a stop-work order, suspended, in final
  stabilization, up to the last day of its period of validity). A new application for a
  covered site is refused, naming the permit that covers it.
- **Ended.** One disapproved, revoked or closed, or whose period of validity has run out,
  covers nothing: a new application for its site is taken and linked to it
  (:func:`sort_earlier`'s ``linked``).

The same rule answers `permits enforce --site-layer` ("the site lies on the site of permit ...")
with ``share`` 0, any overlap at all. Pure: geometries in one projected CRS, no tables, no clock.

Examples
--------
>>> import shapely
>>> lot = shapely.box(0, 0, 100, 100)
>>> same_site(lot, None, shapely.box(95, 0, 195, 100), None, share=0.10)  # a 5 % sliver
False
>>> same_site(lot, None, shapely.box(50, 0, 150, 100), None, share=0.10)  # half of it
True
>>> same_site(lot, " 0123 ", shapely.box(500, 0, 600, 100), "0123", share=0.10)  # the same parcel
True
>>> covers("disapproved", None, date(2027, 1, 4)), covers("active", date(2027, 1, 4), date(2027, 1, 4))
(False, True)
"""

from __future__ import annotations

__all__ = ["COVERING", "UNDECIDED", "Earlier", "Overlap", "covers", "same_parcel", "same_site", "sort_earlier"]

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from esc_gis._lazy import lazy_module

#: States of an application not yet decided (§ 540-8C(1)-(4)): it covers its site.
UNDECIDED = ("application_received", "incomplete", "under_review")
#: States of an issued permit: it covers its site until its period of validity ends (§ 540-8G).
ISSUED = ("approved", "deemed_approved", "active", "extended", "stop_work", "suspended", "final_stabilization")
#: Every state that covers a site (an issued one only while in force).
COVERING = (*UNDECIDED, *ISSUED)

if TYPE_CHECKING:
    import shapely
else:
    # Loaded on first use: listing, showing and the due dates read no geometry, and start without it.
    shapely = lazy_module("shapely")


def covers(status: str | None, expires_on: date | None, today: date) -> bool:
    """Whether an application or permit in ``status`` still covers its site on ``today``.

    Undecided: yes. Issued: yes up to and including ``expires_on`` (none recorded: yes).
    Disapproved, revoked, closed, or issued and expired: no.

    Examples
    --------
    >>> covers("under_review", None, date(2027, 1, 4))
    True
    >>> covers("active", date(2027, 1, 3), date(2027, 1, 4))
    False
    >>> covers("closed", None, date(2027, 1, 4))
    False
    """
    if status in UNDECIDED:
        return True
    if status in ISSUED:
        return expires_on is None or today <= expires_on
    return False


def same_parcel(a: str | None, b: str | None) -> bool:
    """Whether two parcel ids name one parcel: both given, equal once trimmed, in any case.

    Examples
    --------
    >>> same_parcel("0123", "0123 "), same_parcel(None, None), same_parcel("", "")
    (True, False, False)
    """
    # casefold, not upper/lower: the comparison Python defines for "equal in any case".
    x, y = (str(v).strip().casefold() if v is not None else "" for v in (a, b))
    return bool(x) and x == y


def same_site(
    site: shapely.Geometry | None,
    parcel: str | None,
    other: shapely.Geometry | None,
    other_parcel: str | None,
    *,
    share: float,
) -> bool:
    """Whether two sites are one: the same parcel, or boundaries overlapping by more than ``share`` of either.

    Parameters
    ----------
    site, other : shapely geometry or None
        The site boundaries, in one projected CRS (None: no boundary, only the parcel decides).
    parcel, other_parcel : str or None
        Their parcel ids.
    share : float
        The share (0 to 1) of either site's area the overlap must exceed: the profile's
        ``policy.intake_same_site`` as a fraction; 0 is any overlap at all.

    Returns
    -------
    bool

    Examples
    --------
    >>> big, lot = shapely.box(0, 0, 1000, 1000), shapely.box(10, 10, 60, 60)  # a lot inside a subdivision
    >>> same_site(lot, None, big, None, share=0.10)
    True
    >>> same_site(shapely.box(0, 0, 10, 10), None, shapely.box(10, 0, 20, 10), None, share=0.0)  # touching
    False
    """
    if same_parcel(parcel, other_parcel):
        return True
    if site is None or other is None:
        return False
    common = shapely.intersection(site, other).area
    # More than the share of either site: of the smaller one, whose share is the larger. Sites
    # that only touch share no area, and 0 is never more than a share, even a share of 0.
    return bool(common > share * min(site.area, other.area))


@dataclass(frozen=True)
class Earlier:
    """An application or permit already in the registry (or earlier in one import), as the rule reads it."""

    number: str
    status: str | None
    expires_on: date | None
    parcel_id: str | None
    site: Any


@dataclass(frozen=True)
class Overlap:
    """What :func:`sort_earlier` found: the records that cover the site, and those it follows."""

    covering: list[str] = field(default_factory=list)
    linked: list[str] = field(default_factory=list)


def sort_earlier(
    site: shapely.Geometry | None,
    parcel: str | None,
    earlier: Iterable[Earlier],
    today: date,
    *,
    share: float,
) -> Overlap:
    """Sort the records on the same site as a new one into those that cover it and those it follows.

    Parameters
    ----------
    site : shapely geometry or None
        The new site's boundary (the registry's CRS).
    parcel : str or None
        Its parcel id.
    earlier : iterable of Earlier
        The records to compare with.
    today : date
        The office's day, for the period of validity.
    share : float
        As :func:`same_site`.

    Returns
    -------
    Overlap
        ``covering``: the numbers of the records that cover it (refuse it); ``linked``: those on
        the same site whose coverage has ended (take it, linked to them). Both in the order given.

    Examples
    --------
    >>> lot = shapely.box(0, 0, 100, 100)
    >>> old = [Earlier("P-1", "closed", None, None, lot), Earlier("P-2", "active", None, None, lot),
    ...        Earlier("P-3", "active", None, None, shapely.box(500, 0, 600, 100))]
    >>> sort_earlier(lot, None, old, date(2027, 1, 4), share=0.1)
    Overlap(covering=['P-2'], linked=['P-1'])
    """
    out = Overlap()
    for e in earlier:
        if not same_site(site, parcel, e.site, e.parcel_id, share=share):
            continue
        (out.covering if covers(e.status, e.expires_on, today) else out.linked).append(e.number)
    return out
