"""Reading the profile's cited code tables (``code = {section, text, ...}``), checked the same way everywhere."""

from __future__ import annotations

__all__ = ["cited_codes"]

from collections.abc import Mapping
from typing import Any

from esc_gis.errors import ProfileError


def cited_codes(tables: Mapping[str, Any], group: str, name: str, purpose: str) -> dict[str, dict[str, Any]]:
    """Return the profile's ``[group.name]`` table: code -> its entry, each with a section and a text.

    Parameters
    ----------
    tables : mapping
        The profile's tables.
    group, name : str
        Where the table is (``[enforcement.grounds]``).
    purpose : str
        What the table is for, for the message when it is missing ("for enforcement cases").

    Raises
    ------
    ProfileError
        If the table is missing or empty, or an entry lacks its section or its text.

    Examples
    --------
    >>> cited_codes({"a": {"b": {"X": {"section": "s 1", "text": "t"}}}}, "a", "b", "for tests")
    {'X': {'section': 's 1', 'text': 't'}}
    """
    where = f"[{group}.{name}]"
    raw = (tables.get(group) or {}).get(name)
    if not isinstance(raw, dict) or not raw:
        msg = f"The profile has no {where} table (code = {{section, text}}) {purpose}."
        raise ProfileError(msg)
    bad = [k for k, v in raw.items() if not isinstance(v, dict) or not v.get("section") or not v.get("text")]
    if bad:
        msg = f"{where} entries {', '.join(map(repr, bad))} need a section and a text."
        raise ProfileError(msg)
    return {str(k): dict(v) for k, v in raw.items()}
