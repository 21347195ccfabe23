"""The ordinance profile (``esc_gis/profiles/*.toml``): the model of the file, and its problems in the profile's words.

What a profile may hold is said here once; what the numbers mean stays in the TOML (the law is
data). Rules that look across tables (a trigger's finding is declared, the entries the rules
need are there, a reading is one the entry allows) are :func:`cross_problems`: the model says
what each table holds, those say how the tables fit together.
"""

from __future__ import annotations

__all__ = [
    "PARTIAL_READINGS",
    "READINGS",
    "REQUIRED",
    "TRIGGER_KINDS",
    "UNITS",
    "ProfileFile",
    "profile_problems",
]

from typing import Annotated, Any, Literal, TypeVar, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BaseModel, Field, model_validator

from esc_gis.config._base import Loc, Number, Open, Text, errors, fail, say
from esc_gis.config.calendar import DAY_NAMES, ProfileCalendar, calendar_problems
from esc_gis.findings import BASES, Basis

M = TypeVar("M", bound=BaseModel)

#: Entries the screening rules cannot run without.
REQUIRED = (
    "thresholds.permit_area",
    "thresholds.sediment_area",
    "thresholds.npdes_exempt_area",
    "thresholds.less_stringent_area",
    "thresholds.steep_slope",
    "protective_area.lake",
    "policy.near_threshold",
    "policy.sliver",
)
#: The units the ordinance writes its numbers in.
Unit = Literal[
    "acres",
    "business_days",
    "cuyd",
    "days",
    "ft",
    "hours",
    "inches",
    "pct",
    "pct_of_average_width",
    "sqft",
    "tons_per_acre_year",
]
UNITS: tuple[str, ...] = get_args(Unit)
#: The tables of numbered entries.
GROUPS = ("thresholds", "protective_area", "design_storms", "deadlines", "policy")
#: Readings of § 540-4B (jurisdiction) for a site partly inside the boundary.
PartialReading = Literal["whole", "inside_only"]
PARTIAL_READINGS: tuple[str, ...] = get_args(PartialReading)
#: Entries whose number the ordinance leaves open to two readings: entry -> its readings, the
#: first being the one taken when the profile names none (``reading = "..."`` in the entry).
#: § 540-8E(6) "at least once per week": seven days from the last inspection, or each calendar
#: week; § 540-8G "up to an additional 180 days": each extension, or all of them together.
READINGS: dict[str, tuple[str, ...]] = {
    "deadlines.inspection_interval": ("rolling_7_days", "calendar_week"),
    "deadlines.permit_extension": ("per_extension", "total"),
}
#: What a permit trigger measures, and the site field (or measurement) it reads.
TriggerKind = Literal["disturbed_area", "fill_volume", "utility_length", "steep_disturbed_area", "land_division"]
TRIGGER_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "disturbed_area": ("plan_disturbed_sqft", ("sqft", "acres")),
    "fill_volume": ("fill_cuyd", ("cuyd",)),
    "utility_length": ("utility_ft", ("ft",)),
    "steep_disturbed_area": ("steep_disturbed_sqft", ("sqft", "acres")),
    "land_division": ("land_division", ()),
}


def _cited(v: str) -> str:
    if not v.strip():
        raise fail("")  # worded by the key: has no section
    return v


def _zone(v: str) -> str:
    if v:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise fail(f"timezone {v!r} is not an IANA time zone name (e.g. 'America/Chicago')") from None
    return v


#: A citation: text that is not blank.
Section = Annotated[Text, AfterValidator(_cited)]


class Head(Open):
    """``[profile]``: whose ordinance this is, its measuring CRS, and the office's numbering and clock."""

    name: str = Field(description="The jurisdiction's name.")
    measure_crs: str = Field(description="The projected CRS areas and distances are measured in (EPSG:7594).")
    ordinance: Text = Field("", description="The ordinance's title, as cited.")
    adopted: Text = Field("", description="When the ordinance was adopted (YYYY-MM-DD).")
    contact: Text = Field("", description="Who the public map names as the contact (never a permit holder).")
    jurisdiction_name: Text | None = Field(None, description="The jurisdiction in findings; default: name.")
    authority: Text = Field("", description="Who administers the ordinance (the administering authority).")
    authority_section: Text = Field("", description="The sections naming the authority.")
    permit_number: Text = Field(
        "{year}-{seq:04d}", description="Permit numbers: {year} and {seq}, the year's running number."
    )
    case_number: Text = Field("ENF-{year}-{seq:04d}", description="Enforcement case numbers, the same way.")
    appeal_number: Text = Field("APL-{year}-{seq:04d}", description="Appeal numbers, the same way.")
    timezone: Annotated[Text, AfterValidator(_zone)] = Field(
        "", description="The office's clock, an IANA zone name (America/Chicago); empty: the machine's."
    )
    standards_permitted: Text = Field("", description="The standards code of a permitted site.")
    standards_unpermitted: Text = Field("", description="The standards code of a site without a permit.")
    partial_jurisdiction: PartialReading = Field(
        "whole",
        description=(
            "The reading of the jurisdiction for a site partly inside: whole decides it on its whole disturbance, "
            "inside_only measures only the part inside."
        ),
    )


class Entry(Open):
    """One number of the ordinance with its unit and citation (``[thresholds.permit_area]``, ...)."""

    value: Number | None = Field(None, description="The number (omitted for a table such as depths).")
    unit: Unit = Field(description="The unit the ordinance writes it in.")
    section: Section = Field(description="The citation, with its section mark.")
    summary: Text = Field("", description="One line saying what it does.")
    basis: Basis | None = Field(None, description="What the number rests on, when not the ordinance's text.")
    depths: dict[str, Number] | None = Field(None, description="A design storm's depths by return period (years).")
    reading: str | None = Field(
        None, description="The reading taken of a number open to two; default: the first the entry allows."
    )
    readings: dict[str, str] | None = Field(None, description="Each reading of the entry, in words.")
    week_starts: str | None = Field(None, description="The day a calendar week starts (sunday), for calendar_week.")

    @model_validator(mode="after")
    def _has_value(self) -> Entry:
        if self.value is None and self.depths is None:
            raise fail("has no value")
        return self


class FindingWords(Open):
    """``[findings.CODE]``: one finding's wording, section and basis."""

    message: str = Field(description="The finding's words; {name} is filled in per site.")
    section: Text = Field("", description="The section the finding rests on.")
    basis: Text = Field("", description="ordinance, interpretation, policy or technical_standard.")
    title: Text = Field("", description="A short title (reports and the map's legend).")


class TriggerTable(Open):
    """``[permit_triggers.NAME]``: one thing that makes a permit required."""

    kind: TriggerKind = Field(description="What the trigger measures.")
    threshold: str | None = Field(None, description="An entry (thresholds.permit_area) giving value, unit and section.")
    value: Number | None = Field(None, description="The threshold, when no entry gives it.")
    unit: str | None = Field(None, description="Its unit: sqft or acres (areas), cuyd (fill), ft (utility length).")
    section: Text | None = Field(None, description="The citation, when no entry gives it.")
    finding: Text = Field("", description="The finding (a [findings] code) said when the trigger is met.")
    label: Text | None = Field(None, description="What the trigger is, in words; default: its name.")


class ProfileFile(Open):
    """An ordinance profile: every number, trigger, finding and citation of the law, as data.

    Other tables (``[soil_loss]``, ``[appeals]``, ``[inspections]``, ...) are kept as they are and
    read by the parts of esc_gis that use them.
    """

    profile: Head = Field(description="Whose ordinance this is.")
    thresholds: dict[str, Entry] = Field({}, description="Areas, volumes and slopes that decide what applies.")
    protective_area: dict[str, Entry] = Field({}, description="Protective-area widths, by water class.")
    design_storms: dict[str, Entry] = Field({}, description="Design storms and their depths.")
    deadlines: dict[str, Entry] = Field({}, description="Deadlines, in the units the ordinance counts them.")
    policy: dict[str, Entry] = Field({}, description="The toolkit's own tolerances (near a threshold, a sliver).")
    calendar: ProfileCalendar | None = Field(None, description="The office's days: what a business day is taken to be.")
    findings: dict[str, FindingWords] = Field({}, description="The wording of every finding esc_gis can emit.")
    permit_triggers: dict[str, TriggerTable] = Field({}, description="What makes a permit required (any one).")


def _where(loc: Loc) -> str:
    return "[" + ".".join(str(k) for k in loc) + "]"


_ENTRY_WORDS = {
    "value": "value {input!r} is not a number",
    "unit": "unit {input!r} is not one of " + str(sorted(UNITS)),
    "section": "has no section: every number needs its citation",
    "basis": "basis {input!r} is not one of " + ", ".join(BASES),
}
_HEAD_WORDS = {
    "name": "needs a string 'name'",
    "measure_crs": "needs a string 'measure_crs'",
    "partial_jurisdiction": "partial_jurisdiction {input!r} is not one of " + ", ".join(PARTIAL_READINGS),
}


def _table_problem(top: str, loc: Loc, err: dict[str, Any]) -> str:
    """Word an error inside one table of the profile (``loc`` from the top of the file)."""
    if top in GROUPS:
        if err["type"] == "esc" and err["ctx"]["text"] and len(loc) == 2:
            return f"{_where(loc)} {err['ctx']['text']}"  # an entry's own problem (has no value)
        if len(loc) <= 2:
            return f"{_where(loc)} must be a table with value, unit, section, summary"
        return f"{_where(loc[:2])} {say(err, _ENTRY_WORDS)}"
    if top == "findings":
        return f"{_where(loc[:2])} must be a table with section, basis and a message string"
    if top == "permit_triggers":
        if len(loc) <= 2:
            return f"{_where(loc)} must be a table with kind, value, unit, section, finding"
        words = {"kind": f"kind {{input!r}} is not one of {', '.join(TRIGGER_KINDS)}", "value": "needs a numeric value"}
        return f"{_where(loc[:2])} {say(err, words)}"
    if top == "profile":
        return f"[profile] {say(err, _HEAD_WORDS)}"
    return f"{_where(loc[:-1] or loc)} {say(err, {})}"


def profile_problems(data: dict[str, Any]) -> tuple[ProfileFile, list[str]]:
    """Check a profile against :class:`ProfileFile` and across its tables; return the model and every problem.

    Returns
    -------
    ProfileFile, list of str
        The model, and the problems (none when the profile is usable). A refused profile's model
        holds the tables that are usable, so the checks across tables (a trigger's finding, a
        finding's wording) still run on them: every problem is said in one pass.

    Raises
    ------
    TypeError
        Never for bad data: problems are returned.
    """
    model, errs = errors(ProfileFile, data)
    problems: list[str] = []
    calendar_errs = []
    for e in errs:
        loc = e["loc"]
        if loc[0] == "calendar":
            if len(loc) == 1:
                problems.append("[calendar] must be a table with holidays, weekend, section, basis and words")
            else:
                calendar_errs.append({**e, "loc": loc[1:]})
        elif loc == ("profile",):
            problems += [f"[profile] needs a string {k!r}" for k in ("name", "measure_crs")]
        else:
            problems.append(_table_problem(str(loc[0]), loc, e))
    problems += [f"[calendar] {p}" for p in calendar_problems(calendar_errs, data.get("calendar"), whole_weekend=True)]
    tables = [(g, data[g]) for g in GROUPS if isinstance(data.get(g), dict)]
    present = {f"{g}.{n}" for g, group in tables for n, t in group.items() if isinstance(t, dict)}
    problems += [f"missing entry [{k}]" for k in REQUIRED if k not in present]
    usable = model if model is not None else _usable_parts(data)
    problems += _reading_problems(usable) + _trigger_problems(usable, declared=bool(data.get("permit_triggers")))
    return usable, problems


def _usable_parts(data: dict[str, Any]) -> ProfileFile:
    """Return a profile of the tables that are usable on their own (no check: the rest is refused already)."""

    def usable(model: type[M], table: Any) -> dict[str, M]:
        items = table.items() if isinstance(table, dict) else ()
        return {name: m for name, raw in items if (m := errors(model, raw)[0]) is not None}

    raw_head: dict[str, Any] = data["profile"] if isinstance(data.get("profile"), dict) else {}
    # The head's text as given, for the names findings may use; its refused values are left out.
    text = {k: v for k, v in raw_head.items() if k in Head.model_fields and isinstance(v, str)}
    text = {**text, "timezone": "", "partial_jurisdiction": "whole"}
    head = errors(Head, raw_head)[0] or Head.model_construct(None, **{"name": "", "measure_crs": "", **text})

    def entries(table: Any) -> dict[str, Entry]:
        # A refused entry is still the entry its triggers and findings name (its problem is said once).
        items = table.items() if isinstance(table, dict) else ()
        blank = {"value": None, "unit": None, "section": "", "summary": ""}
        return {
            name: errors(Entry, raw)[0] or Entry.model_construct(None, **{**blank, **raw})
            for name, raw in items
            if isinstance(raw, dict)
        }

    return ProfileFile.model_construct(
        None,
        profile=head,
        **{g: entries(data.get(g)) for g in GROUPS},
        findings=usable(FindingWords, data.get("findings")),
        permit_triggers=usable(TriggerTable, data.get("permit_triggers")),
    )


def _reading_problems(m: ProfileFile) -> list[str]:
    """Check each entry's ``reading`` (and its ``readings`` words, ``week_starts``) against :data:`READINGS`."""
    problems = []
    for key, known in READINGS.items():
        group, name = key.split(".", 1)
        e = getattr(m, group).get(name)
        if e is None:
            continue
        reading = e.reading or known[0]
        if reading not in known:
            problems.append(f"[{key}] reading {reading!r} is not one of {', '.join(known)}")
        words = e.readings or {}
        if not isinstance(words, dict) or any(k not in known or not str(v).strip() for k, v in words.items()):
            problems.append(f"[{key}] readings must be a table of {', '.join(known)} = words")
        if e.week_starts is not None and str(e.week_starts).lower()[:3] not in DAY_NAMES:
            problems.append(f"[{key}] week_starts {e.week_starts!r} is not a day name (e.g. 'sunday')")
    return problems


def _trigger_problems(m: ProfileFile, *, declared: bool) -> list[str]:
    """Check that each trigger's entry, unit, section and finding are there (they are in other tables)."""
    problems = []
    entries = {f"{g}.{n}": e for g in GROUPS for n, e in getattr(m, g).items()}
    for name, t in m.permit_triggers.items():
        where = f"[permit_triggers.{name}]"
        if t.threshold is not None:  # value, unit and section from a numbered entry
            e = entries.get(t.threshold)
            if e is None:
                problems.append(f"{where} threshold {t.threshold!r} is not an entry of this profile")
                continue
            given = t.model_fields_set
            t = t.model_copy(update={k: getattr(e, k) for k in ("value", "unit", "section") if k not in given})
        units = TRIGGER_KINDS[t.kind][1]
        if units and (isinstance(t.value, bool) or not isinstance(t.value, (int, float))):
            problems.append(f"{where} needs a numeric value")
        if units and t.unit not in units:
            problems.append(f"{where} unit {t.unit!r} is not one of {', '.join(units)} for {t.kind}")
        if not (t.section or "").strip():
            problems.append(f"{where} has no section")
        if t.finding not in m.findings:
            problems.append(f"{where} finding {t.finding!r} is not declared under [findings]")
    if not declared:
        problems.append("[permit_triggers] declares no trigger: name at least the disturbed area")
    return problems
