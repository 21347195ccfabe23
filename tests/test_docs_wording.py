"""The user documentation speaks to users: no internal issue numbers, no links to pages that moved.

The pages under ``docs/`` (and every file a page pulls in with a MyST ``{include}`` or
``{literalinclude}``, such as ``benchmarks/README.md``) are read by people who have never seen
the project's issue tracker: "issue 36" or "(issue 37)" tells them nothing. A change is dated
by its day (or release) and a target is just a target. The pages generated at build time
(``docs/ordinance/generated``, ``docs/reference/generated``) are checked too when a build has
written them; ``docs/_build`` is not a page.

A relative link to a page that moved is caught here as well (``[text](../guide/x.md)``,
``{doc}`...```, and a ``docs/....md`` path named in the text), so ``make test`` finds it
without a Sphinx build. Headings' anchors are left to the build (``sphinx -W``), which checks
them with MyST's own slugs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# "issue 23", "(issue 37)", "Issue 46's", "issue-35", "issue #12", "issues 26 and 37"; the word
# must start at a word boundary, so "issued" and "tissue 3" are not caught.
ISSUE_MENTION = re.compile(r"\bissues?[ -]#?\d+|\bissues? \d+\s*(?:and|or|,)\s*\d+", re.IGNORECASE)
INCLUDE = re.compile(r"^(`{3,}|~{3,})\{(?:literal)?include\}\s+(\S+)", re.MULTILINE)
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
MD_LINK = re.compile(r"\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
DOC_ROLE = re.compile(r"\{doc\}`([^`]+)`")
DOCS_PATH = re.compile(r"(?<![\w./-])docs/[\w./-]+?\.md\b")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def doc_pages() -> list[Path]:
    """Every Markdown page of the documentation, ``docs/_build`` aside."""
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.relative_to(DOCS).parts)


def included_files(pages: list[Path]) -> dict[Path, Path]:
    """Each file a page pulls in with ``{include}`` or ``{literalinclude}``, mapped to that page.

    The directive's path is relative to the page. A target missing on disk is left out: the
    generated ones exist only after a build, and a wrong path fails the build itself.
    """
    found: dict[Path, Path] = {}
    for page in pages:
        for m in INCLUDE.finditer(page.read_text(encoding="utf-8")):
            target = (page.parent / m.group(2)).resolve()
            if target.is_file() and target not in found:
                found[target] = page
    return found


def checked_files() -> dict[Path, Path]:
    """Every file the test reads, mapped to the page its links resolve against.

    An included file's Markdown links are resolved by MyST as part of the page that includes it,
    so they are checked against that page's folder.
    """
    pages = doc_pages()
    files = {p.resolve(): p.resolve() for p in pages}
    for target, page in included_files(pages).items():
        files.setdefault(target, page.resolve())
    return files


def issue_mentions(path: Path) -> list[str]:
    """``file:line: text`` for each line of ``path`` that cites an issue number."""
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return [
        f"{rel}:{n}: {line.strip()}"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ISSUE_MENTION.search(line)
    ]


def _blank(m: re.Match[str]) -> str:
    """The match with every character but newlines blanked, so line numbers stay right."""
    return re.sub(r"[^\n]", " ", m.group(0))


def broken_links(path: Path, page: Path) -> list[str]:
    """``file:line: target`` for each relative link or named ``docs/`` page that does not exist.

    Markdown links and ``{doc}`` roles are read outside code (fenced blocks and inline spans);
    a ``docs/....md`` path is read everywhere, code included, since a layout drawn in a code block
    points readers at it too.
    """
    text = path.read_text(encoding="utf-8")
    # A role's target is itself in backticks ({doc}`x`), so roles are read before inline code is blanked.
    outside_fences = FENCE.sub(_blank, text)
    prose = INLINE_CODE.sub(_blank, outside_fences)
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    bad: list[str] = []
    lines = zip(prose.splitlines(), outside_fences.splitlines(), text.splitlines(), strict=True)
    for n, (line, unfenced, raw) in enumerate(lines, 1):
        for m in MD_LINK.finditer(line):
            target = m.group(1).split("#", 1)[0]
            if target and not URL.match(target) and not (page.parent / target).exists():
                bad.append(f"{rel}:{n}: {m.group(1)}")
        for m in DOC_ROLE.finditer(unfenced):
            name = re.sub(r"^.*<(.+)>$", r"\1", m.group(1).strip())
            base = DOCS / name.lstrip("/") if name.startswith("/") else page.parent / name
            if not (base.with_name(base.name + ".md").exists() or base.exists()):
                bad.append(f"{rel}:{n}: {{doc}}`{m.group(1)}`")
        for m in DOCS_PATH.finditer(raw):
            if "_build" not in m.group(0) and not (ROOT / m.group(0)).exists():
                bad.append(f"{rel}:{n}: {m.group(0)}")
    return bad


def test_the_pattern_catches_issue_numbers_and_nothing_else() -> None:
    """The check cannot pass for a pattern that matches nothing (or everything)."""
    for text in ("issue 23", "(issue 37)", "issues 26 and 37", "Issue 46's run", "issue-35 targets", "issue #12"):
        assert ISSUE_MENTION.search(text), text
    for text in ("issued", "tissue 3", "the permit issued on 2026-12-05", "an issue with the DEM"):
        assert not ISSUE_MENTION.search(text), text


def test_the_pages_and_their_includes_are_found() -> None:
    """The scan reaches the pages, and benchmarks/README.md through the benchmarks page."""
    pages = doc_pages()
    assert len(pages) >= 30, pages
    assert DOCS / "index.md" in pages
    assert DOCS / "explanation" / "registry-design.md" in pages
    assert not any("_build" in p.parts for p in pages)
    assert (ROOT / "benchmarks" / "README.md").resolve() in included_files(pages)


def test_user_pages_cite_no_internal_issue_numbers() -> None:
    found = [hit for path in checked_files() for hit in issue_mentions(path)]
    assert not found, (
        "User pages must not cite internal issue numbers (readers do not know our issue tracker): "
        "drop the reference, or date the change instead (the day or release it landed).\n" + "\n".join(found)
    )


def test_no_link_points_at_a_page_that_is_not_there() -> None:
    bad = [hit for path, page in checked_files().items() for hit in broken_links(path, page)]
    assert not bad, "Links to pages that do not exist (moved or renamed?):\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("See [the guide](guide/qgis.md).\n", []),
        ("See [the guide](guide/moved.md#part).\n", ["guide/moved.md#part"]),
        ("See {doc}`the guide <guide/gone>`.\n", ["{doc}`the guide <guide/gone>`"]),
        ("`docs/registry-design.md` says how.\n", ["docs/registry-design.md"]),
        ("```python\nx = a[0](b.md)\n```\n", []),
        ("[a site](https://example.org/x.md) and [here](#top)\n", []),
    ],
)
def test_the_link_check_sees_a_missing_page(tmp_path: Path, text: str, expected: list[str]) -> None:
    page = DOCS / "index.md"
    path = tmp_path / "page.md"
    path.write_text(text, encoding="utf-8")
    assert [hit.split(": ", 1)[1] for hit in broken_links(path, page)] == expected
