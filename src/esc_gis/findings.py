"""Findings: the declared records every output carries, rendered from the profile's templates.

A finding is ``{code, section, basis, message}``. Its section, basis and the wording of its
message are the profile's (``[findings.<code>]`` in the TOML), never Python's: this module
only knows which codes exist, which values each may put into its message, and how to fill
a template in. So a reviewer audits the law's wording in one file, and another
municipality's profile changes every message without touching code.

The basis says what a finding rests on:

======================  ==================================================================
``ordinance``           the ordinance's text says so
``interpretation``      the text is silent or ambiguous and the toolkit picks a reading; the
                        message says "reading:"
``policy``              a choice of the toolkit (a near-threshold margin, a review reach)
``technical_standard``  a technical standard the ordinance points to (NR 151, WDNR)
======================  ==================================================================
"""

from __future__ import annotations

__all__ = [
    "BASES",
    "CATALOGUE",
    "RENAMED",
    "Finding",
    "FindingTemplate",
    "findings_frame",
    "findings_json",
    "findings_text",
    "quantity_text",
]

import json
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from esc_gis.errors import ProfileError

#: What a finding may rest on.
#: What a finding or a number rests on (the configuration models take the type, the rest the names).
Basis = Literal["ordinance", "interpretation", "policy", "technical_standard"]
BASES: tuple[str, ...] = get_args(Basis)

#: Marker an interpretation's message must carry, so no reading is taken for the text.
READING_MARK = "reading:"

# Every finding code the toolkit can emit, with the row values its message may use (besides
# the profile-wide names of :meth:`esc_gis.profile.Profile.names`). Wording lives in the profile.
_AREA = ("plan_sqft", "plan_acres")
#: A common plan across the Village line: the whole plan, its part inside and outside, the sites outside.
_PLAN_ACROSS = ("plan_id", "plan_sites", "plan_sites_s", *_AREA, "inside_sqft", "outside_sqft", "outside_sites")
SCREENING: dict[str, tuple[str, ...]] = {
    "jurisdiction_inside": (),
    "jurisdiction_partial": ("disturbed_sqft", "inside_sqft", "outside_sqft"),
    "jurisdiction_partial_inside_only": ("disturbed_sqft", "inside_sqft", "outside_sqft"),
    "outside_jurisdiction": (),
    "outside_jurisdiction_extraterritorial": ("distance_ft",),
    "state_agency": (),
    "agricultural_activity_exempt": (),
    "agricultural_production_not_exempt": (),
    "agricultural_area_not_counted": ("plan_id", "excluded_sqft"),
    "silviculture_exempt": (),
    "disturbed_area": ("disturbed_sqft", "disturbed_acres"),
    "overlaps_counted_once": ("disturbed_sqft", "parts_sqft"),
    "common_plan": ("plan_id", "plan_sites", "plan_sites_s", *_AREA),
    "common_plan_partial": _PLAN_ACROSS,
    "common_plan_inside_only": _PLAN_ACROSS,
    "permit_required": _AREA,
    "permit_required_by_trigger": ("trigger", "measured", "threshold"),
    "permit_not_required": _AREA,
    "npdes_exempt_under_1_acre": _AREA,
    "npdes_exemption_not_applicable": _AREA,
    "near_threshold": ("threshold", "margin_pct", *_AREA),
    "sediment_standard": _AREA,
    "less_stringent_possible": _AREA,
    "protective_area": ("protective_sqft", "waters"),
    "protective_area_if_permit": ("protective_sqft", "waters"),
    "protective_area_from_centreline": (),
    "protective_channel_class_unverified": ("waters",),
    "in_water": ("in_water_sqft",),
    "in_water_unpermitted": ("in_water_sqft",),
    "nearest_water": ("water", "distance_ft"),
    "nearest_water_unpermitted": ("water", "distance_ft"),
    "no_waters_layer": (),
    "targeted_area": ("areas",),
    "no_targeted_layer": (),
    "permit_may_be_required": ("reasons",),
    "steep_not_measured": (),
    "steep_slopes": ("steep_sqft", "steep_share"),
    "steep_slopes_if_permit": ("steep_sqft", "steep_share"),
    "no_steep_slopes": (),
    "dem_not_covering": ("uncovered_sqft", "uncovered_share"),
    "geometry_repaired": (),
    "disturbed_outside_site": ("outside_sqft",),
    "no_disturbed_limits": ("disturbed_sqft",),
    # --profile-by: a site no profiled municipality covers (esc_gis.screening.municipalities).
    "not_covered": (),
}
#: Reasons listed inside ``permit_may_be_required`` (§ 540-4A(1)(c)); each a template too.
MAY_REQUIRE: dict[str, tuple[str, ...]] = {
    "reason_protective_area": (),
    "reason_in_water": (),
    "reason_targeted_area": ("areas",),
}
#: What the permit registry says: its agenda (deadlines) and the refusals that cite the law.
REGISTRY: dict[str, tuple[str, ...]] = {
    "decision_due": (),
    "decision_due_after_information": (),
    "deemed_approved": ("due",),
    "deemed_approval_too_early": ("day", "due"),
    "deemed_approval_not_complete": ("fee",),
    "decision_period_ran_out": ("move", "day", "due"),
    "information_unanswered": ("requested",),
    "permit_expires": (),
    "extension_too_long": ("days", "extended_days"),
    "extension_after_expiry": ("day", "expired"),
    "start_notice": (),
    "weekly_inspection": (),
    "rain_inspection": ("inches", "event_start", "event_end"),
    "report_incomplete": ("inspection_id", "at", "missing"),
    "report_day_alone": ("at",),
    "site_documents_missing": ("inspection_id", "at"),
    "certificate_not_posted": ("inspection_id", "at"),
    "pre_start_inspection": ("issued",),
    "temporary_stabilization": ("stopped", "resume_expected"),
    "temporary_stabilization_unknown_resume": ("stopped",),
    "temporary_stabilization_pause_overran": ("stopped", "resume_expected"),
    "stockpile": ("since",),
    "registry_outside_jurisdiction": (),
    "registry_not_governed": ("reason",),
    "registry_remeasure_decided": ("status",),
    "registry_remeasure_deemed": ("due",),
    "registry_site_covered": ("covering", "why"),
    "registry_site_in_import": ("row", "why"),
    "work_before_permit": ("started", "issued"),
    "repair_due": ("ids", "counted_from", "from_time"),
    "guarantee_expiry": ("guarantee_id", "amount"),
    "amendment_before_permission": ("effective", "permission"),
    "amendment_notice_open": ("notice_id", "notified_on"),
    "amendment_after_coverage": ("ended",),
    "amendment_notice_after_coverage": ("ended",),
    "application_fee_no_schedule": ("amount",),
    "fee_schedule_not_in_force": ("kind", "paid_on", "resolution", "adopted_on"),
    "plan_at_site": (),
    "appeal_not_heard": ("kind",),
    "referral_not_notified": (),
    "referral_no_order": (),
    "deemed_approval_in_force": ("due", "action"),
    "special_assessment_over_due": ("amount", "due"),
    "registry_determined": (),
    "enforcement_assumed_area": ("ground", "sqft"),
    "determination_not_needed": ("sqft",),
    "determination_exempt": ("sqft",),
    "condition_not_issued": ("status",),
    "enforcement_no_condition": ("listed",),
    "enforcement_not_in_force": (
        "ground",
        "ground_text",
        "ground_section",
        "permit",
        "day",
        "state",
        "without",
        "without_section",
    ),
    "enforcement_site_undecided": ("ground", "ground_section"),
    "permit_certificate": (),
    "certificate_conditions": (),
    "certificate_not_issued": ("status",),
    "certificate_expired": ("expired", "today"),
    "certificate_no_conditions": (),
    "condition_after_period": ("expired", "day"),
    "condition_after_issuance": (),
    "determination_later": ("determined", "day"),
}
#: code -> row values, over every part of the toolkit that emits findings.
#: Plan review (``esc-gis review``): one finding per outcome of each check of
#: :mod:`esc_gis.review.checks`, plus the report's headings. The first finding of a check carries
#: its title (``title`` in the profile); its other outcomes may leave it out.
_FLIP = ("claimed_sqft", "drawn_sqft")
_EDGE = ("open_ft", "total_ft")
_SOIL_LOSS_REVIEW = (
    "applicant_tpa",
    "computed_tpa",
    "diff_share",
    "soil_loss_tpa",
    "window_start",
    "window_end",
    "r_annual",
    "r_from",
    "k",
    "k_from",
    "ls",
    "outside_pct",
)
REVIEW: dict[str, tuple[str, ...]] = {
    # § 540-9A(1)-(9) and the spill procedures of § 540-7B(3)(c)[4]: what the plan states.
    "review_parties_given": ("parties", "party_word"),
    "review_parties_none": (),
    "review_parties_landowner_only": (),
    "review_parties_incomplete": ("lacking",),
    "review_legal_description_given": (),
    "review_legal_description_missing": (),
    "review_site_map_given": (),
    "review_site_map_missing": ("missing_layers",),
    "review_areas_stated": (),
    "review_areas_missing": (),
    "review_standards_match": ("computed",),
    "review_standards_none": ("computed",),
    "review_standards_differ": ("stated", "computed"),
    "review_bmps_given": ("known", "standards"),
    "review_bmps_none": (),
    "review_bmps_unknown": ("known", "unknown"),
    "review_narrative_given": (),
    "review_narrative_missing": (),
    "review_sequence_given": (),
    "review_sequence_missing": (),
    "review_sequence_undated": (),
    "review_rusle2_given": ("disturbed_acres", "load"),
    "review_rusle2_missing": ("disturbed_acres",),
    "review_reference_guide_missing": ("disturbed_acres",),
    "review_reference_guide_unstated": ("disturbed_acres",),
    "review_sediment_load_met": ("disturbed_acres", "load"),
    "review_sediment_load_over": ("disturbed_acres", "load"),
    "review_sediment_load_explained": ("disturbed_acres", "load"),
    "review_less_stringent": ("disturbed_acres",),
    "review_spill_given": (),
    "review_spill_missing": (),
    # The drawing against itself and against the claims.
    "review_map_missing": (),
    "review_limits_inside": (),
    "review_limits_outside": ("outside_sqft",),
    "review_site_area_agrees": _FLIP,
    "review_site_area_differs": (*_FLIP, "diff_share"),
    "review_site_area_no_claim": ("drawn_sqft",),
    "review_disturbed_area_agrees": _FLIP,
    "review_disturbed_area_differs": (*_FLIP, "diff_share"),
    "review_disturbed_area_no_claim": ("drawn_sqft",),
    "review_disturbed_area_flips_permit": _FLIP,
    "review_disturbed_area_flips_sediment": _FLIP,
    # The screening's decision, terrain and waters.
    "review_common_plan": ("plan_id", "plan_sqft", "plan_acres"),
    "review_decision": ("permit", "standards", "disturbed_sqft"),
    "review_decision_sediment": ("permit", "standards", "disturbed_sqft"),
    "review_decision_outside": (),
    "review_decision_determined": ("standards", "disturbed_sqft", "determination"),
    "review_decision_not_applicable": ("applicability", "reason"),
    "review_non_permitted": ("plan_sqft",),
    "review_non_permitted_may_require": ("plan_sqft",),
    "review_non_permitted_npdes": ("plan_sqft",),
    "review_steep": ("steep_sqft",),
    "review_steep_none": (),
    "review_steep_not_measured": (),
    "review_protective": ("protective_sqft",),
    "review_protective_none": (),
    # The BMPs on the map, tested with the review reaches of [policy].
    "review_tracking_pad": (),
    "review_tracking_missing": (),
    "review_tracking_no_street": (),
    "review_tracking_no_layer": (),
    "review_inlets_protected": ("inlets",),
    "review_inlets_unprotected": ("bare", "inlets"),
    "review_inlets_none_near": (),
    "review_inlets_no_layer": (),
    "review_perimeter_covered": _EDGE,
    "review_perimeter_open": _EDGE,
    "review_perimeter_flat": (),
    "review_perimeter_no_dem": (),
    "review_waters_covered": _EDGE,
    "review_waters_open": _EDGE,
    "review_waters_none_near": (),
    "review_stockpiles_covered": ("long",),
    "review_stockpiles_bare": ("bare", "long"),
    "review_stockpiles_none": (),
    # The schedule against the permit's length and the inspections it implies.
    "review_schedule_within": ("days", "weeks"),
    "review_schedule_long": ("days", "weeks", "extensions"),
    "review_schedule_reversed": ("start", "end"),
    "review_schedule_no_dates": (),
    # The applicant's RUSLE2 LS / slope length / steepness against LS on the DEM.
    "review_rusle_ls_compared": ("applicant", "dem_ls", "rep_ls", "rep_slope_pct", "rep_length_ft", "outside_pct"),
    "review_rusle_ls_not_computed": ("reason",),
    # The applicant's sediment discharge against the review's own, on the package's schedule.
    "review_soil_loss_agrees": _SOIL_LOSS_REVIEW,
    "review_soil_loss_differs": _SOIL_LOSS_REVIEW,
    "review_soil_loss_over_standard": _SOIL_LOSS_REVIEW,
    "review_soil_loss_not_computed": ("reason",),
    # The report's headings: the draft reasons and the advisories.
    "review_reasons": (),
    "review_advisories": (),
}
# Soil loss and sediment discharge per site (esc_gis.soil.soil_loss).
_WINDOW = ("discharge_tpa", "soil_loss_tpa", "window_start", "window_end", "windows")
SOIL_LOSS: dict[str, tuple[str, ...]] = {
    "soil_loss_meets": _WINDOW,
    "soil_loss_exceeds": _WINDOW,
    "soil_loss_standard_not_applicable": ("plan_sqft", "plan_acres"),
    # The screening's answer taken (issue 34): the article does not reach the site, or was not screened.
    "soil_loss_article_not_applicable": ("applicability", "reason"),
    "soil_loss_applicability_not_screened": (),
    "soil_loss_for_information": _WINDOW,
    "soil_loss_outside_method": ("outside_sqft", "outside_pct", "max_slope_pct", "max_slope_length_ft"),
    "soil_loss_not_computed": ("reason",),
    "soil_loss_dem_partial": ("missing_sqft", "missing_pct"),
    "soil_loss_not_confirmed": ("values",),
    # Screening's bare-soil estimate (esc_gis.soil.potential): per site, and the run's "no R".
    "screening_bare_soil_loss": (
        "bare_soil_loss_tpa",
        "r_annual",
        "r_status",
        "k",
        "k_covered_pct",
        "ls",
        "outside_pct",
    ),
    "screening_bare_soil_loss_no_r": (),
}
#: code -> row values, over every part of the toolkit that emits findings.
#: The web service (``esc-gis serve``): what every public screening answer adds for a resident
#: (the notice, what was not asked), the activities offered, and the collections' titles
#: (``title``) and descriptions (``message``).
SERVICE: dict[str, tuple[str, ...]] = {
    "service_notice": (),
    "service_activity_default": (),
    "service_activity_as_described": ("activity",),
    "service_whole_site_disturbed": (),
    "service_common_plan_unknown": (),
    "service_may_still_require": (),
    "service_next_steps": (),
    "service_other_permits": (),
    "service_exclusions_not_asked": (),
    "service_activity_construction": (),
    "service_activity_agricultural_activity": (),
    "service_activity_agricultural_production": (),
    "service_activity_silviculture": (),
    "service_layer_permits": (),
    "service_layer_jurisdiction": (),
    "service_layer_waters_lines": (),
    "service_layer_waters_polygons": (),
    "service_layer_protective_areas": (),
    "service_layer_steep_slopes": (),
    "service_layer_targeted_areas": (),
    "service_publication": (),
}
CATALOGUE: dict[str, tuple[str, ...]] = {**SCREENING, **MAY_REQUIRE, **REGISTRY, **REVIEW, **SOIL_LOSS, **SERVICE}
#: Old code -> the codes it became. A profile declaring the old one still loads for one release (its
#: wording stands in for each new code it lacks, with a warning naming them), and is refused after.
RENAMED: dict[str, tuple[str, ...]] = {
    # The service's waters became two collections, lines and polygons: one geometry type each.
    "service_layer_waters": ("service_layer_waters_lines", "service_layer_waters_polygons"),
}


@dataclass(frozen=True)
class Finding:
    """One finding: what, where in the law (or policy) it rests, on what basis, and its message."""

    code: str
    section: str
    basis: str
    message: str

    def to_dict(self) -> dict[str, str]:
        """Return ``{code, section, basis, message}``."""
        return asdict(self)

    def text(self) -> str:
        """One readable line: ``section (basis): message``."""
        return f"{self.section} ({self.basis.replace('_', ' ')}): {self.message}"


@dataclass(frozen=True)
class FindingTemplate:
    """A finding as the profile declares it: code, section, basis and a message template.

    The message is a :meth:`str.format` template: ``{plan_sqft:,.1f}`` takes a row value,
    ``{permit_area}`` a profile-wide name (see :meth:`esc_gis.profile.Profile.names`).
    """

    code: str
    section: str
    basis: str
    message: str
    title: str = ""

    def fields(self) -> set[str]:
        """Return the names the message uses."""
        return {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(self.message) if f}

    def render(self, values: Mapping[str, Any]) -> Finding:
        """Fill the template in.

        Raises
        ------
        ProfileError
            If the message names a value that is not given.
        """
        try:
            message = self.message.format_map(values)
        except (KeyError, IndexError, ValueError) as exc:
            msg = f"Profile finding {self.code!r}: its message cannot be filled in ({exc!r}); check its placeholders."
            raise ProfileError(msg) from None
        return Finding(self.code, self.section, self.basis, message)

    def positional(self, fixed: Mapping[str, Any], per_row: Sequence[str]) -> str | None:
        """Return the message with ``fixed`` filled in and each ``per_row`` name as a positional field.

        ``{plan_sqft:,.1f}`` becomes ``{0:,.1f}`` when ``plan_sqft`` is ``per_row[0]``, so a
        column of rows is rendered by ``map(template.format, *columns)``, with no dictionary a
        row. None when a field is more than a name (``{a.b}``, ``{a[0]}``, a nested spec): the
        caller then renders row by row.

        Raises
        ------
        KeyError
            If a field is neither in ``fixed`` nor in ``per_row``.
        """
        out = []
        for literal, name, spec, conversion in string.Formatter().parse(self.message):
            out.append(_escape_braces(literal))
            if name is None:
                continue
            spec = spec or ""
            if not name.isidentifier() or "{" in spec:
                return None
            tail = (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            if name in per_row:
                out.append("{" + str(per_row.index(name)) + tail)
            else:
                out.append(_escape_braces(("{0" + tail).format(fixed[name])))
        return "".join(out)

    def json_head(self) -> str:
        """Return the finding's JSON up to its message (shared by every row it is rendered for)."""
        return (
            f'{{"code": {json.dumps(self.code)}, "section": {json.dumps(self.section, ensure_ascii=False)}, '
            f'"basis": {json.dumps(self.basis)}, "message": '
        )


def _escape_braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def check_template(t: FindingTemplate, names: Iterable[str]) -> list[str]:
    """Return the problems of one declared finding (empty when it is usable)."""
    problems = []
    where = f"[findings.{t.code}]"
    if t.code not in CATALOGUE:
        problems.append(f"{where} is not a finding esc_gis emits; known codes: {', '.join(sorted(CATALOGUE))}")
        return problems
    if t.basis not in BASES:
        problems.append(f"{where} basis {t.basis!r} is not one of {', '.join(BASES)}")
    if not t.section.strip():
        problems.append(f"{where} has no section: every finding says what it rests on")
    if t.basis == "interpretation" and READING_MARK not in t.message.lower():
        problems.append(f"{where} is an interpretation: its message must say {READING_MARK!r}")
    if "{{" in t.message or "}}" in t.message:
        # str.format prints a doubled brace as one: the reader would see "{outside_sqft:,.1f}".
        problems.append(f"{where} message has a doubled brace: a value is written {{name}}, not {{{{name}}}}")
    try:
        unknown = t.fields() - set(CATALOGUE[t.code]) - set(names)
    except ValueError as exc:
        return [*problems, f"{where} message is not a valid template: {exc}"]
    if unknown:
        allowed = ", ".join(sorted(CATALOGUE[t.code])) or "none"
        problems.append(
            f"{where} message uses {', '.join(sorted(unknown))}; its own values are: {allowed} "
            "(plus the profile-wide names)"
        )
    return problems


def findings_json(findings: Iterable[Finding]) -> str:
    """Encode findings as the JSON list of the ``findings`` column."""
    return json.dumps([f.to_dict() for f in findings], ensure_ascii=False)


def findings_text(findings_column: str | None) -> str:
    """Turn a ``findings`` JSON list into readable lines, one per finding (the CSV's ``findings_text``).

    Examples
    --------
    >>> findings_text('[{"code": "x", "section": "s 1", "basis": "policy", "message": "Hello."}]')
    's 1 (policy): Hello.'
    """
    if not findings_column:
        return ""
    items = json.loads(findings_column)
    return "\n".join(Finding(i["code"], i["section"], i.get("basis", ""), i["message"]).text() for i in items)


def findings_frame(result: Any, *, id_field: str = "site_id") -> Any:
    """Return a screening's findings as a table: one row per site and finding.

    The ``findings`` column holds each site's findings as a JSON list (one column that every
    format keeps); this unfolds it for pandas, a spreadsheet or a join back to the sites.

    Parameters
    ----------
    result : pandas.DataFrame
        What :func:`esc_gis.screen` returned (or a screening output read back), with
        ``id_field`` and ``findings``.
    id_field : str, default "site_id"
        The column naming each site.

    Returns
    -------
    pandas.DataFrame
        Columns ``id_field``, ``code``, ``section``, ``basis`` and ``message``, in the sites'
        order and each site's findings' order; a site without findings has no row.

    Raises
    ------
    KeyError
        If ``result`` has no ``id_field`` or no ``findings`` column.

    Examples
    --------
    >>> import pandas as pd
    >>> sites = pd.DataFrame({"site_id": ["A", "B"], "findings": [
    ...     '[{"code": "permit_required", "section": "s 4", "basis": "ordinance", "message": "Yes."}]', "[]"]})
    >>> findings_frame(sites)[["site_id", "code", "basis"]].to_dict("records")
    [{'site_id': 'A', 'code': 'permit_required', 'basis': 'ordinance'}]
    """
    import pandas as pd

    columns = [id_field, "code", "section", "basis", "message"]
    for name in (id_field, "findings"):
        if name not in result.columns:
            raise KeyError(f"the screening has no {name!r} column; give the result of esc_gis.screen")
    rows = [
        (site, f["code"], f["section"], f.get("basis", ""), f["message"])
        for site, text in zip(result[id_field], result["findings"], strict=True)
        if isinstance(text, str) and text
        for f in json.loads(text)
    ]
    return pd.DataFrame(rows, columns=columns)


_UNIT_TEXT = {
    "sqft": ("sq ft", "sq ft"),
    "acres": ("acre", "acres"),
    "ft": ("ft", "ft"),
    "pct": ("%", "%"),
    "days": ("day", "days"),
    "business_days": ("business day", "business days"),
    "hours": ("hour", "hours"),
    "inches": ("inch", "inches"),
    "tons_per_acre_year": ("ton per acre per year", "tons per acre per year"),
    "cuyd": ("cubic yard", "cubic yards"),
    "pct_of_average_width": ("% of the average width", "% of the average width"),
}


def quantity_text(value: float, unit: str) -> str:
    """Write a profile number the way the ordinance does: ``4,000 sq ft``, ``1 acre``, ``20 %``.

    Examples
    --------
    >>> quantity_text(4000, "sqft"), quantity_text(1, "acres"), quantity_text(0.5, "inches")
    ('4,000 sq ft', '1 acre', '0.5 inch')
    """
    one, many = _UNIT_TEXT.get(unit, (unit, unit))
    # The ordinance writes "one acre", "0.5 inch": singular at one and below.
    word = one if abs(value) <= 1 else many
    return f"{value:,g} {word}"
