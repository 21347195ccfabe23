"""``esc-gis rules``: print the ordinance profile: every number, trigger and finding with its citation and basis."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from esc_gis.cli._catalogue import short_help
from esc_gis.cli._console import console as console_for_tables
from esc_gis.cli._options import profile_option
from esc_gis.findings import CATALOGUE
from esc_gis.profile import Profile, load_profile

#: The profile's tables of citations besides numbers and findings: the life cycle's written
#: reasons, enforcement, appeals, plan amendments, the office calendar, and the inspection
#: report's required contents and the pre-start inspection.
CITED_TABLES = ("lifecycle", "enforcement", "appeals", "amendments", "calendar", "inspections")


def _value(e_value: float | None, extra: dict) -> str:
    if e_value is not None:
        text = f"{e_value:,g}"
        if "min_ft" in extra or "max_ft" in extra:
            text += f" (min {extra.get('min_ft', 0):g} ft, max {extra.get('max_ft', 0):g} ft)"
        if "reading" in extra:  # a number the text leaves open to two readings: the one taken
            text += f" ({extra['basis'] if 'basis' in extra else 'reading'}: {extra['reading']})"
        return text
    depths = extra.get("depths", {})
    return ", ".join(f"{k}-yr {v:g}" for k, v in depths.items())


def citation_rows(profile: Profile) -> list[dict[str, str]]:
    """List every citation in the profile's :data:`CITED_TABLES`: table, key, section, basis and words.

    A leaf is a table with a ``section`` (its ``basis``, else ``ordinance``; its ``text`` or
    ``words``, else its key in words) or a plain string, which is the section itself.

    Examples
    --------
    >>> rows = citation_rows(load_profile())
    >>> [r for r in rows if r["key"] == "stop_work" and r["table"] == "lifecycle.written_reasons"][0]["basis"]
    'policy'
    """
    out: list[dict[str, str]] = []

    def walk(path: str, key: str, node: object) -> None:
        if isinstance(node, dict) and "section" not in node:
            for k, v in node.items():
                walk(f"{path}.{key}" if key else path, str(k), v)
            return
        key = key or path.rsplit(".", 1)[-1]  # a cited table of its own ([calendar])
        if isinstance(node, dict):
            words = str(node.get("text") or node.get("words") or key.replace("_", " "))
            if path.endswith("written_reasons"):
                words = f"written reasons needed for {key}"
            if node.get("undoes"):
                words += f" (a reversal undoes {node['undoes']})"
            if isinstance(node.get("holidays"), (str, list)):
                words += f"; holidays: {node['holidays']}"
            if isinstance(node.get("states"), list):  # [amendments.coverage_ends]: what the reading takes
                words += f"; states: {', '.join(map(str, node['states']))}; expiry: {node.get('expiry')}"
            out.append(
                {
                    "table": path,
                    "key": key,
                    "section": str(node["section"]),
                    "basis": str(node.get("basis", "ordinance")),
                    "words": words,
                }
            )
            # A cited table may hold a cited table of its own ([appeals.approval.recorded]): listed too.
            for k, v in node.items():
                if isinstance(v, dict) and "section" in v:
                    walk(f"{path}.{key}" if path != key else path, str(k), v)
        elif isinstance(node, str):
            out.append(
                {"table": path, "key": key, "section": node, "basis": "ordinance", "words": key.replace("_", " ")}
            )

    for name in CITED_TABLES:
        if name in profile.tables:
            walk(name, "", profile.tables[name])
    return out


def citations_table(profile: Profile) -> Table:
    """Build the rich table of the life cycle's, enforcement's, appeals', amendments' and calendar's citations."""
    table = Table(
        title="Registry citations (written reasons, enforcement, appeals, amendments, business days)",
        title_justify="left",
        expand=True,
    )
    table.add_column("table", overflow="fold", ratio=3)
    table.add_column("key", overflow="fold", ratio=2)
    table.add_column("section", overflow="fold", ratio=3)
    table.add_column("basis", overflow="fold", ratio=2)
    table.add_column("words", overflow="fold", ratio=6)
    for r in citation_rows(profile):
        table.add_row(escape(f"[{r['table']}]"), escape(r["key"]), escape(r["section"]), r["basis"], escape(r["words"]))
    return table


def rules_table(profile: Profile) -> Table:
    """Build the rich table of a profile's entries."""
    # Shares of the console's width, not fixed widths: every column wraps (long keys fold), so
    # the table fits a 100-column log whole instead of being cropped on the right.
    table = Table(title=f"{profile.name}: {profile.ordinance}", title_justify="left", expand=True)
    table.add_column("entry", overflow="fold", ratio=4)
    table.add_column("value", overflow="fold", ratio=2)
    table.add_column("unit", overflow="fold", ratio=2)
    table.add_column("section", overflow="fold", ratio=3)
    table.add_column("what it does", overflow="fold", ratio=6)
    for e in profile.entries.values():
        table.add_row(e.key, _value(e.value, e.extra), e.unit, escape(e.cite), escape(e.summary))
    return table


def triggers_table(profile: Profile) -> Table:
    """Build the rich table of what makes a permit required."""
    table = Table(title="Permit triggers (a permit is required when any is met)", title_justify="left")
    for col in ("trigger", "kind", "threshold", "section", "finding"):
        table.add_column(col, overflow="fold")
    for t in profile.triggers:
        table.add_row(t.name, t.kind, "" if t.value is None else f"{t.value:,g} {t.unit}", escape(t.section), t.finding)
    return table


def findings_table(profile: Profile) -> Table:
    """Build the rich table of every finding: code, basis, section and message template."""
    table = Table(
        title="Findings (wording, citation and basis of everything esc-gis says)", title_justify="left", expand=True
    )
    table.add_column("finding", overflow="fold", ratio=3)
    table.add_column("basis", overflow="fold", ratio=2)
    table.add_column("section", overflow="fold", ratio=2)
    table.add_column("message template", overflow="fold", ratio=6)
    for t in profile.findings.values():
        table.add_row(t.code, t.basis, escape(t.section), escape(t.message))
    return table


def _finding_rows(profile: Profile) -> list[dict[str, object]]:
    return [
        {
            "code": t.code,
            "section": t.section,
            "basis": t.basis,
            "message": t.message,
            "values": list(CATALOGUE.get(t.code, ())),
        }
        for t in profile.findings.values()
    ]


@click.command(short_help=short_help("rules"))
@profile_option("Ordinance profile TOML (default: the one shipped with esc_gis).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def rules(profile_path: str | None, as_json: bool) -> None:
    """Print every threshold, width, design storm, deadline, permit trigger, finding and registry citation.

    Each finding shows its basis: ordinance (the text says so), interpretation (a reading
    where the text is silent), policy (the toolkit's choice) or technical_standard. So does
    each citation of the registry's tables: the moves that need written reasons, enforcement
    grounds and actions, appeals, plan-amendment triggers and the office calendar.
    """
    profile = load_profile(profile_path)
    if as_json:
        rows = [
            {"entry": e.key, "value": e.value, "unit": e.unit, "section": e.section, "summary": e.summary, **e.extra}
            for e in profile.entries.values()
        ]
        triggers = [
            {
                "name": t.name,
                "kind": t.kind,
                "value": t.value,
                "unit": t.unit,
                "section": t.section,
                "finding": t.finding,
            }
            for t in profile.triggers
        ]
        doc = {
            "profile": profile.name,
            "jurisdiction": profile.jurisdiction_name,
            "authority": profile.authority,
            "measure_crs": profile.measure_crs,
            "partial_jurisdiction": profile.partial_jurisdiction,
            "entries": rows,
            "permit_triggers": triggers,
            "findings": _finding_rows(profile),
            "citations": citation_rows(profile),
        }
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    console = console_for_tables()
    console.print(rules_table(profile))
    console.print(triggers_table(profile))
    console.print(findings_table(profile))
    console.print(citations_table(profile))
    console.print(f"Measuring CRS: {profile.measure_crs}.  Source: {profile.source}")
