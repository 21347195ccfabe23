"""The WDNR construction-site technical standards (Subchapter V of NR 151) that a plan's BMPs name.

A BMP's ``type`` may be the standard's number ("1056"), its name ("silt fence"), or one of
the common names below; :func:`classify` turns any of them into the number. The roles say
what a BMP can do for the checks of :mod:`esc_gis.review.checks`: stop sediment at the
perimeter, control tracking onto streets, protect an inlet, trap sediment, or cover soil.
"""

from __future__ import annotations

__all__ = ["STANDARDS", "classify", "with_role"]

import re

import numpy as np

#: Number -> (name, roles).
STANDARDS: dict[str, tuple[str, frozenset[str]]] = {
    "1050": ("Land application of additives for erosion control", frozenset({"cover"})),
    "1051": ("Water application of additives for sediment control", frozenset({"trap"})),
    "1052": ("Non-channel erosion mat", frozenset({"cover"})),
    "1053": ("Channel erosion mat", frozenset({"channel"})),
    "1054": ("Vegetative buffer for construction sites", frozenset({"perimeter", "buffer"})),
    "1055": ("Sediment bale barrier (non-channel)", frozenset({"perimeter"})),
    "1056": ("Silt fence", frozenset({"perimeter"})),
    "1057": ("Trackout control practices (stone tracking pad, tire washing)", frozenset({"tracking"})),
    "1058": ("Mulching for construction sites", frozenset({"cover"})),
    "1059": ("Seeding for construction site erosion control", frozenset({"cover"})),
    "1060": ("Storm drain inlet protection for construction sites", frozenset({"inlet"})),
    "1061": ("Dewatering", frozenset({"dewatering"})),
    "1062": ("Ditch check (channel)", frozenset({"channel"})),
    "1063": ("Sediment trap", frozenset({"trap"})),
    "1064": ("Sediment basin", frozenset({"trap"})),
    "1066": ("Construction site diversion", frozenset({"diversion"})),
    "1067": ("Temporary grading practices", frozenset({"cover"})),
    "1068": ("Dust control on construction sites", frozenset()),
    "1069": ("Turbidity barrier", frozenset({"in_water"})),
    "1070": ("Silt curtain", frozenset({"in_water"})),
    "1071": ("Interim manufactured perimeter control and slope interruption products", frozenset({"perimeter"})),
}
_ALIASES = {
    "silt fence": "1056",
    "siltfence": "1056",
    "tracking pad": "1057",
    "stone tracking pad": "1057",
    "construction entrance": "1057",
    "tire wash": "1057",
    "trackout": "1057",
    "inlet protection": "1060",
    "sediment trap": "1063",
    "sediment basin": "1064",
    "erosion mat": "1052",
    "mulch": "1058",
    "mulching": "1058",
    "seeding": "1059",
    "seed": "1059",
    "ditch check": "1062",
    "vegetative buffer": "1054",
    "bale barrier": "1055",
    "straw bales": "1055",
    "diversion": "1066",
    "wattle": "1071",
    "fiber roll": "1071",
    "sediment log": "1071",
    "dewatering": "1061",
    "turbidity barrier": "1069",
    "silt curtain": "1070",
    "dust control": "1068",
    "tarp": "cover",
    "cover": "cover",
    "plastic cover": "cover",
}
_NUMBER = re.compile(r"\b(10[5-7]\d)\b")


def classify(value: object) -> str | None:
    """Return the standard's number for a BMP type, "cover" for a sheet cover, or None if unknown.

    Examples
    --------
    >>> classify("1056"), classify("Silt Fence"), classify("WDNR 1057 tracking pad"), classify("hay")
    ('1056', '1056', '1057', None)
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    text = str(value).strip().lower()
    if text.endswith(".0") and text[:-2].isdigit():  # a number read from a spreadsheet
        text = text[:-2]
    m = _NUMBER.search(text)
    if m and m.group(1) in STANDARDS:
        return m.group(1)
    for alias in sorted(_ALIASES, key=len, reverse=True):
        if alias in text:
            return _ALIASES[alias]
    for number, (name, _) in STANDARDS.items():
        if name.lower() in text:
            return number
    return None


def with_role(codes: np.ndarray, role: str) -> np.ndarray:
    """Return a boolean mask of the BMP codes (from :func:`classify`) that play ``role``."""
    roles = {c: r for c, (_, r) in STANDARDS.items()} | {"cover": frozenset({"cover"})}
    return np.array([c is not None and role in roles.get(c, frozenset()) for c in codes], dtype=bool)
