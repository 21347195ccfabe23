"""Pages generated at build time from the profile and the code, so the site cannot disagree with them.

- ``ordinance/generated/*.md``: every number, permit trigger, finding and registry citation of
  the shipped profile, with its section and basis (what ``esc-gis rules`` prints);
- ``guide/registry/generated/states.dot``: the permit's life cycle, drawn from
  :data:`esc_gis.registry.domain.lifecycle.TRANSITIONS` and its moves back;
- ``reference/generated/config-keys.md``: every key of every configuration file, with its type,
  default and description, from the JSON Schemas shipped in ``esc_gis/schemas`` (themselves
  written from the models of :mod:`esc_gis.config`).

The files are written before Sphinx reads the sources and are not kept in git.
"""

from __future__ import annotations

import json
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


def _ref(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow a ``$ref`` into the schema's ``$defs``."""
    while "$ref" in node:
        node = {**schema["$defs"][node["$ref"].rsplit("/", 1)[1]], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _type(schema: dict[str, Any], node: dict[str, Any]) -> str:
    """Say a value's type as the reference does: ``text``, ``list of date``, ``one of a, b``, ``table``."""
    node = _ref(schema, node)
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            kinds = [_type(schema, n) for n in node[key] if n.get("type") != "null"]
            return " or ".join(dict.fromkeys(kinds))
    kind = node.get("type")
    if kind == "array":
        return "list of " + _type(schema, node.get("items", {}))
    if kind == "object" or "properties" in node:
        return "table"
    names = {"string": "text", "number": "number", "integer": "integer", "boolean": "true/false"}
    text = names.get(str(kind), "any")
    if node.get("format") == "date":
        text = "date (YYYY-MM-DD)"
    return text


def _rows(schema: dict[str, Any], node: dict[str, Any], prefix: str) -> list[list[object]]:
    """One row per key under ``node``, its tables' keys after it (``[[waters]]`` and ``<name>`` tables too)."""
    node = _ref(schema, node)
    rows: list[list[object]] = []
    required = set(node.get("required", []))
    for key, sub in node.get("properties", {}).items():
        path = f"{prefix}{key}"
        full = _ref(schema, sub)
        default = "required" if key in required else f"`{json.dumps(full['default'])}`" if "default" in full else ""
        rows.append([f"`{path}`", _type(schema, sub), default, full.get("description", "")])
        rows += _nested(schema, full, path)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and extra:
        inner = _ref(schema, extra)
        if "properties" in inner:
            rows += _rows(schema, inner, f"{prefix}<name>.")
        else:
            rows.append([f"`{prefix}<name>`", _type(schema, extra), "", inner.get("description", "")])
    return rows


def _nested(schema: dict[str, Any], node: dict[str, Any], path: str) -> list[list[object]]:
    """Return the keys of the tables a key holds: a table, a table of named tables, a list of tables."""
    for key in ("anyOf", "oneOf"):
        for option in node.get(key, []):
            option = _ref(schema, option)
            if "properties" in option or isinstance(option.get("additionalProperties"), dict):
                return _rows(schema, option, f"{path}.")
            if option.get("type") == "array" and "properties" in _ref(schema, option.get("items", {})):
                return _rows(schema, option["items"], f"{path}[].")
    if "properties" in node or isinstance(node.get("additionalProperties"), dict):
        return _rows(schema, node, f"{path}.")
    if node.get("type") == "array" and "properties" in _ref(schema, node.get("items", {})):
        return _rows(schema, node["items"], f"{path}[].")
    return []


def config_reference() -> str:
    """Render every configuration file's keys from the shipped JSON Schemas (one section per file)."""
    from importlib import resources

    from esc_gis.config import FORMATS

    parts = [
        "Generated from the JSON Schemas esc_gis ships (`esc_gis/schemas/NAME.schema.json`), which are written "
        "from the models of `esc_gis.config`: a key is here when, and as, esc_gis reads it. `<name>` stands for a "
        "name of your choice (an entry, a finding code, a fee kind), `[]` for each table of a list. A key marked "
        "required must be given; the others take the default shown.\n"
    ]
    for name, (_, _, what) in FORMATS.items():
        text = (resources.files("esc_gis") / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8")
        schema = json.loads(text)
        title = what[0].upper() + what[1:]
        keys = "unknown keys are refused" if schema.get("additionalProperties") is False else "other keys are kept"
        parts.append(
            f"## {title}\n\n{_cell(schema.get('description', ''))} Schema: `{name}.schema.json` ({keys}).\n\n"
            + _table(["key", "type", "default", "what it is"], _rows(schema, schema, ""))
        )
    return "\n".join(parts)


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
    _write(src / "reference" / "generated" / "config-keys.md", config_reference())


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the generator with Sphinx."""
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
