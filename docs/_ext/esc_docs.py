"""Pages generated at build time from the profile and the code, so the site cannot disagree with them.

- ``ordinance/generated/*.md``: every number, permit trigger, finding and registry citation of
  the shipped profile, with its section and basis (what ``esc-gis rules`` prints);
- ``guide/registry/generated/states.dot``: the permit's life cycle, drawn from
  :data:`esc_gis.registry.domain.lifecycle.TRANSITIONS` and its moves back.

The files are written before Sphinx reads the sources and are not kept in git.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

BASIS = {
    "ordinance": "the ordinance's text",
    "interpretation": "an interpretation where the text is silent",
    "policy": "the toolkit's own policy",
    "technical_standard": "a technical standard",
}


def _cell(text: object) -> str:
    """One Markdown table cell: pipes escaped, line breaks folded."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(head: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def ordinance_pages() -> dict[str, str]:
    """Render the shipped profile as Markdown pages: numbers, triggers, findings and citations."""
    from esc_gis.cli.rules import _value, citation_rows
    from esc_gis.profile import load_profile

    p = load_profile()
    title = f"{p.name}: {p.ordinance}"
    intro = (
        f"Generated from the profile that `esc-gis rules` prints ({title}); measuring CRS "
        f"{p.measure_crs}. A basis says what an entry rests on: "
        + "; ".join(f"`{k}`, {v}" for k, v in BASIS.items())
        + ".\n\n"
    )
    numbers = _table(
        ["entry", "value", "unit", "section", "what it does"],
        [[f"`{e.key}`", _value(e.value, e.extra), e.unit, e.cite, e.summary] for e in p.entries.values()],
    )
    triggers = _table(
        ["trigger", "kind", "threshold", "section", "finding"],
        [
            [t.name, t.kind, "" if t.value is None else f"{t.value:,g} {t.unit}", t.section, f"`{t.finding}`"]
            for t in p.triggers
        ],
    )
    findings = _table(
        ["finding", "basis", "section", "wording (`{name}`: a value filled in per site)"],
        [[f"`{t.code}`", t.basis, t.section, t.message] for t in p.findings.values()],
    )
    citations = _table(
        ["table", "key", "section", "basis", "words"],
        [[f"`[{r['table']}]`", r["key"], r["section"], r["basis"], r["words"]] for r in citation_rows(p)],
    )
    readings = [e for e in p.entries.values() if "reading" in e.extra]
    readings_md = _table(
        ["entry", "reading taken", "section", "basis"],
        [[f"`{e.key}`", e.extra["reading"], e.cite, e.extra.get("basis", "interpretation")] for e in readings],
    )
    counts = {b: sum(t.basis == b for t in p.findings.values()) for b in BASIS}
    summary = ", ".join(f"{n} {b}" for b, n in counts.items() if n)
    return {
        "numbers.md": f"# Numbers and permit triggers\n\n{intro}## Numbers\n\n{numbers}\n## Permit triggers\n\n"
        f"A permit is required when any is met.\n\n{triggers}",
        "readings.md": "# Readings the toolkit takes\n\n"
        f"{intro}Where the text is open to more than one reading, the profile names the one taken "
        f"(`partial_jurisdiction`: {p.partial_jurisdiction}, § 540-4B), and every finding that rests "
        "on a reading has the basis `interpretation` ([Findings](findings.md)).\n\n"
        f"{readings_md}",
        "findings.md": f"# Findings\n\n{intro}{len(p.findings)} findings: {summary}.\n\n{findings}",
        "citations.md": "# Registry citations\n\n"
        f"{intro}The moves that need written reasons, the enforcement grounds and actions, the appeals, "
        f"the plan-amendment triggers, the business days and the inspection reports' contents.\n\n{citations}",
    }


def states_dot() -> str:
    """Draw the permit's life cycle as a Graphviz digraph, from the code's transition table."""
    from esc_gis.registry.domain.lifecycle import BACK, ON_APPEAL, STATES, TRANSITIONS

    lines = [
        "digraph lifecycle {",
        # Top to bottom: the page's column is narrow, and the states read in the order they happen.
        "  rankdir=TB; nodesep=0.3; ranksep=0.45;",
        '  node [shape=box, style="rounded", fontname="sans-serif", fontsize=16];',
        '  edge [fontname="sans-serif", fontsize=13, color="#555555"];',
    ]
    lines += [f'  "{s}";' for s in STATES]
    for src, targets in TRANSITIONS.items():
        lines += [f'  "{src}" -> "{dst}";' for dst in targets]
    for state, move in BACK.items():
        lines.append(f'  "{state}" -> "(state before)" [style=dashed, label="{move}"];')
    if BACK:
        lines.append('  "(state before)" [shape=plaintext];')
    for state, to in ON_APPEAL.items():
        lines.append(f'  "{state}" -> "{to}" [style=dotted, label="on appeal"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    """Write only when the text changed, so Sphinx rebuilds only what did."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate(app: Sphinx) -> None:
    """Write the generated pages into the source folder before Sphinx reads it."""
    src = Path(app.srcdir)
    for name, text in ordinance_pages().items():
        _write(src / "ordinance" / "generated" / name, text)
    _write(src / "guide" / "registry" / "generated" / "states.dot", states_dot())


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the generator with Sphinx."""
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
