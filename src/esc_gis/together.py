"""Layers of one run that do not lie together: a plan's limits 81 km from its site, a limits file far from its sites.

Each layer's label may pass the readers' own check (:mod:`esc_gis.crs`: coordinates that can be
in the CRS they are labelled with) and still be wrong: county feet labelled as WTM metres
(EPSG:3071) land 81 km from the site, on the globe and in Wisconsin. Alone nothing says so;
beside the layer they belong with, the gap does. :func:`apart` measures that gap in the
measuring CRS and, when it is past :data:`APART_KM`, looks for the likely mistake: the label
that would put the layer on its partner (the partner's own CRS first, then the CRSs Wisconsin
data come in). :func:`apart_message` words it, naming the layer, the gap, the likely CRS and
the fix; the callers refuse with it (``screen --disturbed``, ``review``), never decide on it.
"""

from __future__ import annotations

__all__ = ["APART_KM", "Apart", "apart", "apart_message"]

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from pyproj import CRS, Transformer

#: Layers of one run whose nearest features are farther apart than this do not lie together. A
#: plan's BMPs, streets and inlets, and a site's disturbed limits, are on the site or beside it;
#: 1 km leaves room for a long street or a haul road, and the mistakes it catches are tens of
#: kilometres (county feet read as WTM metres: 81 km at Winneconne) or continents.
APART_KM = 1.0

#: The CRSs Wisconsin layers come in, tried (after the partner layer's own) for the likely
#: mistake: the county grid, WTM, longitude/latitude, web maps, UTM 16N, the State Plane zones.
LIKELY_CRS = ("EPSG:7594", "EPSG:3071", "EPSG:4326", "EPSG:3857", "EPSG:26916", "EPSG:2288", "EPSG:2289")

_FT_PER_KM = 1000 / 0.3048


@dataclass(frozen=True)
class Apart:
    """A layer that does not lie with its partner.

    Attributes
    ----------
    km : float
        The gap between the nearest features, in kilometres.
    label : str
        The layer's CRS as labelled.
    likely : str or None
        A CRS that would put the layer on its partner, if one of those tried does.
    """

    km: float
    label: str
    likely: str | None


def _name(crs: CRS) -> str:
    auth = crs.to_authority()
    return f"{auth[0]}:{auth[1]}" if auth else crs.name


_PLURAL = {"metre": "metres", "foot": "feet", "US survey foot": "US survey feet", "degree": "degrees"}


def _unit(crs: CRS) -> str:
    axes = crs.axis_info
    name = axes[0].unit_name if axes else ""
    return _PLURAL.get(name, name)


def _gap_ft(geoms: np.ndarray, partners: np.ndarray, crs: CRS) -> float:
    """Return the smallest distance (ft) between each geometry and its partner, in the measuring ``crs``."""
    from esc_gis.units import ft_to_crs_units

    with np.errstate(invalid="ignore"):
        d = np.asarray(shapely.distance(geoms, partners), dtype=float)
    d = d[np.isfinite(d)]
    return float(d.min()) / ft_to_crs_units(1.0, crs) if len(d) else float("inf")


def _as(geoms: np.ndarray, src: CRS, dst: CRS) -> np.ndarray:
    tr = Transformer.from_crs(src, dst, always_xy=True)
    with np.errstate(invalid="ignore", over="ignore"):
        return shapely.transform(geoms, lambda xy: np.column_stack(tr.transform(xy[:, 0], xy[:, 1])))


def apart(
    geoms: Sequence[Any] | np.ndarray,
    label: Any,
    partners: Sequence[Any] | np.ndarray,
    crs: CRS,
    *,
    partner_crs: Any = None,
    reach_km: float = APART_KM,
) -> Apart | None:
    """Tell whether a layer lies apart from the layer it belongs with, and the likely CRS mistake.

    Parameters
    ----------
    geoms : array_like of shapely geometries
        The layer's features, in their own CRS (as labelled).
    label : Any
        That CRS.
    partners : array_like of shapely geometries
        Each feature's partner (its own site), or one geometry for all (a plan's site
        boundary), in the measuring CRS.
    crs : pyproj.CRS
        The measuring CRS.
    partner_crs : Any, optional
        The partner layer's own CRS as it was labelled: the first CRS tried for the mistake.
    reach_km : float, default APART_KM

    Returns
    -------
    Apart or None
        None when some feature lies within ``reach_km`` of its partner.

    Examples
    --------
    >>> site = shapely.box(743819, 503199, 743939, 503349)  # EPSG:7594, ftUS
    >>> a = apart([shapely.box(743844, 503239, 743914, 503308)], "EPSG:3071", [site], CRS("EPSG:7594"))
    >>> round(a.km), a.likely
    (157, 'EPSG:7594')
    """
    geoms = np.asarray(geoms, dtype=object)
    partners = np.asarray(partners, dtype=object)
    if partners.size == 1 and geoms.size != 1:
        partners = np.full(len(geoms), partners.reshape(-1)[0], dtype=object)
    if not len(geoms):
        return None
    src = CRS.from_user_input(label)
    reach_ft = reach_km * _FT_PER_KM
    gap = _gap_ft(_as(geoms, src, crs) if not src.equals(crs) else geoms, partners, crs)
    if gap <= reach_ft:
        return None
    tried = [partner_crs] if partner_crs is not None else []
    likely = None
    for candidate in (*tried, crs, *LIKELY_CRS):
        c = CRS.from_user_input(candidate)
        if c.equals(src):
            continue
        try:
            moved = _as(geoms, c, crs) if not c.equals(crs) else geoms
        except Exception:
            continue
        if _gap_ft(moved, partners, crs) <= reach_ft:
            likely = _name(c)
            break
    return Apart(gap / _FT_PER_KM, _name(src), likely)


def apart_message(what: str, partner: str, found: Apart) -> tuple[str, str]:
    """Word a layer that does not lie with its partner: ``(message, fix)``.

    Parameters
    ----------
    what : str
        The layer (``"layer disturbed_limits"``, ``"the disturbed limits"``).
    partner : str
        What it should lie with (``"layer site_boundary"``, ``"their sites"``).
    found : Apart

    Returns
    -------
    tuple of str
    """
    message = (
        f"{what} (labelled {found.label}) lie {found.km:,.1f} km from {partner}: the layers of one run lie "
        "together, so a CRS label is wrong"
    )
    if found.likely is not None:
        unit_was, unit_is = _unit(CRS.from_user_input(found.label)), _unit(CRS.from_user_input(found.likely))
        units = f", {unit_is} read as {unit_was}" if unit_was and unit_is and unit_was != unit_is else ""
        message += (
            f"; read as {found.likely} they lie on it: most likely their coordinates are in {found.likely}{units}."
        )
        fix = (
            f"label them {found.likely} (in your GIS, or ogr2ogr -a_srs {found.likely}), or export every layer "
            "in one CRS; nothing was measured on layers that do not lie together."
        )
    else:
        message += "."
        fix = (
            "check which layer's CRS label is wrong and correct it; nothing was measured on layers that do not "
            "lie together."
        )
    return message, fix
