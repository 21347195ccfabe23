"""The administering authority's determination that a small site needs a permit (§ 540-4A(1)(c)): its purposes.

"[A] permit is required for a construction site with less than 4,000 square feet of land-disturbing
construction activity if the administering authority determines that permit coverage is needed in
order to improve article compliance, meet targeted performance standards, or protect waters of the
state." A determination names which of the three it is made for; the names and the ordinance's
words are the profile's (``[determination_purposes]``). Pure.
"""

from __future__ import annotations

__all__ = ["determination_purposes", "named_purposes", "purpose_words"]

from collections.abc import Mapping, Sequence
from typing import Any

from esc_gis.errors import ProfileError


def determination_purposes(tables: Mapping[str, Any]) -> dict[str, str]:
    """Return the profile's ``[determination_purposes]``: name -> the ordinance's words (§ 540-4A(1)(c)).

    Raises
    ------
    ProfileError
        If the table is missing or empty.
    """
    raw = tables.get("determination_purposes")
    if not isinstance(raw, dict) or not raw:
        msg = "The profile has no [determination_purposes] table (name = the ordinance's words) for determinations."
        raise ProfileError(msg)
    return {str(k): str(v) for k, v in raw.items()}


def purpose_words(tables: Mapping[str, Any], names: Sequence[str]) -> str:
    """Return the purposes ``names`` in the ordinance's words, joined ("protect waters of the state"); "" for none.

    A name the profile no longer lists is shown as recorded.
    """
    known = determination_purposes(tables)
    words = [known.get(n, n) for n in names]
    return ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + (words[-1] if words else "")


def named_purposes(tables: Mapping[str, Any], purposes: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Return the purposes named, each once, in the profile's order, and the problems as (message, fix).

    A determination names at least one, each one the profile names (in any case); otherwise
    nothing is named and the problem says which to give.

    Raises
    ------
    ProfileError
        If the profile has no ``[determination_purposes]``.
    """
    known = determination_purposes(tables)
    given = {str(x).strip().lower() for x in purposes if str(x).strip()}
    choices = ", ".join(f"{k} ({v})" for k, v in known.items())
    if not given:
        return [], [("the determination names no purpose.", f"give purposes= one or more of: {choices}.")]
    unknown = sorted(given - set(known))
    if unknown:
        return [], [(f"purpose {', '.join(map(repr, unknown))} is not one the profile names.", f"use {choices}.")]
    return [k for k in known if k in given], []
