"""Parcel layers as they are delivered: the schema, its non-parcel features, rows without an id.

Wisconsin's statewide parcel layers follow the V10 schema (``STATEID``, ``PARCELID``,
``TAXPARCELID``, ``SITEADRESS``, ``CONAME``, ``PARCELFIPS``, ...). Besides parcels they
carry features that are not parcels at all, whose ids repeat: rights of way (``ROW``),
hydrography (``HYDRO``), railroads (``RAIL``), gaps and overlaps between surveys (``GAP``),
sometimes prefixed with the county code (``123ROW``) or numbered (``ROW006``). Some parcels
have no id.

This is the toolkit's data policy, not the ordinance: which features are skipped is a
documented, overridable rule (:data:`V10_NON_PARCEL`; ``--skip-ids``), every skipped
feature is kept in a side table with its reason, and a row without a usable id is screened
under the generated id ``row:<n>``, ``n`` being its 1-based feature number in the file.
"""

from __future__ import annotations

__all__ = [
    "GENERATED_ID_PREFIX",
    "SHAPEFILE_NAME_CHARS",
    "V10_FIELDS",
    "V10_ID_FIELD",
    "V10_NON_PARCEL",
    "SkipRule",
    "detect_schema",
    "skip_rule",
]

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from esc_gis.errors import Problem, ValidationError

#: Fields whose presence (all of them, any case) marks a layer as the Wisconsin V10 parcel schema.
V10_FIELDS = ("STATEID", "PARCELID", "TAXPARCELID", "SITEADRESS", "CONAME", "PARCELFIPS")
#: The longest field name a shapefile (dBase) holds: GDAL and ArcGIS cut longer names to it,
#: so a V10 layer delivered as a shapefile has ``TAXPARCELI`` for ``TAXPARCELID``.
SHAPEFILE_NAME_CHARS = 10
#: The V10 schema's parcel id: named as the id field, it brings the schema's non-parcel rule
#: even when the layer carries too few of :data:`V10_FIELDS` to be recognised.
V10_ID_FIELD = "PARCELID"
#: The default non-parcel rule for the V10 schema, matched against the whole id (any case,
#: spaces trimmed): the schema's standard non-parcel words, optionally after a county code
#: or before a number.
V10_NON_PARCEL = r"\d*[-_ ]?(ROW|RROW|HYDRO|WATER|RAIL|GAP|OVERLAP)([-_ ]?\d+)?"
#: Prefix of the ids given to rows without one.
GENERATED_ID_PREFIX = "row:"


@dataclass(frozen=True)
class SkipRule:
    """Which features of a sites layer are not sites, and why.

    Attributes
    ----------
    pattern : str
        A regular expression the whole id must match (case-insensitive) for the feature to
        be skipped.
    field : str
        The id field it is matched against.
    origin : str
        Where the rule comes from, for the summary ("the V10 parcel schema's default",
        "--skip-ids").
    """

    pattern: str
    field: str
    origin: str

    def describe(self) -> str:
        """Say the rule in one line, as the summary shows it."""
        return f"{self.field} matches '{self.pattern}' ({self.origin})"

    def mask(self, values: pd.Series) -> np.ndarray:
        """Boolean mask of the rows the rule skips (missing ids are never skipped)."""
        text = values.astype(object).where(values.notna(), "").astype(str).str.strip()
        hit = text.str.fullmatch(self.pattern, case=False)
        return (hit.fillna(False).to_numpy(dtype=bool)) & (text != "").to_numpy()


def detect_schema(columns: list[str] | pd.Index) -> str | None:
    """Name the known parcel schema of a layer's fields, or None.

    A field is recognised by its name in any case (PostGIS and GeoJSON deliver lower case)
    and by its shapefile form, cut to :data:`SHAPEFILE_NAME_CHARS` characters.

    Examples
    --------
    >>> detect_schema(["STATEID", "PARCELID", "TAXPARCELID", "SITEADRESS", "CONAME", "PARCELFIPS", "geometry"])
    'v10'
    >>> detect_schema(["stateid", "parcelid", "taxparceli", "siteadress", "coname", "parcelfips"])
    'v10'
    >>> detect_schema(["site_id", "geometry"]) is None
    True
    """
    upper = {str(c).upper() for c in columns}
    found = all(f in upper or f[:SHAPEFILE_NAME_CHARS] in upper for f in V10_FIELDS)
    return "v10" if found else None


def skip_rule(skip_ids: str | None, *, columns: list[str], id_field: str, source: str) -> SkipRule | None:
    """Choose the rule that skips non-parcel features.

    Parameters
    ----------
    skip_ids : str or None
        ``None`` or ``"auto"``: the schema's default (for the V10 schema, or any layer whose
        id field is :data:`V10_ID_FIELD`, :data:`V10_NON_PARCEL` on the id field; for other
        layers, none). ``"none"``: skip nothing. Anything else: a
        regular expression the whole id must match.
    columns : list of str
        The layer's fields.
    id_field : str
        The id field the rule is matched against.
    source : str
        The file, for messages.

    Returns
    -------
    SkipRule or None

    Raises
    ------
    ValidationError
        If the expression is not a valid regular expression.
    """
    field = next((c for c in columns if str(c).lower() == id_field.lower()), id_field)
    if skip_ids is None or skip_ids.strip().lower() == "auto":
        if detect_schema(columns) == "v10":
            return SkipRule(V10_NON_PARCEL, field, "the V10 parcel schema's default; change it with skip_ids=")
        if field.upper() == V10_ID_FIELD:
            # A cut-down export of V10 parcels (a few fields kept) still has its ROW and HYDRO rows.
            origin = f"the V10 parcel schema's default for {V10_ID_FIELD}; change it with skip_ids="
            return SkipRule(V10_NON_PARCEL, field, origin)
        return None
    if skip_ids.strip().lower() == "none":
        return None
    try:
        re.compile(skip_ids)
    except re.error as exc:
        fix = "give a regular expression, e.g. 'ROW|HYDRO', or 'none' to skip nothing."
        raise ValidationError([Problem(source, None, f"skip_ids={skip_ids!r} is not valid ({exc}).", fix)]) from None
    return SkipRule(skip_ids, field, "skip_ids=")
