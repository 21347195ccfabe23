"""The ordinance lives in the profile: no user-facing string in src/ may hold its wording.

Walks the AST of every module of ``esc_gis`` and fails on a string literal (including the
parts of f-strings, click help and HTML) that holds a citation mark, a section number of
Chapter 540, the Village's name or the threshold figures. Docstrings and comments may cite
sections: they document the code, they are not what a user reads.
"""

import ast
from pathlib import Path

import esc_gis

FORBIDDEN = ("§", "540-", "Winneconne", "4,000", "1 acre")
SRC = Path(esc_gis.__file__).parent


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def law_literals(source: str, name: str = "<src>") -> list[str]:
    tree = ast.parse(source, filename=name)
    skip = _docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            found = [w for w in FORBIDDEN if w in node.value]
            if found:
                hits.append(f"{name}:{node.lineno}: {found[0]!r} in {node.value[:70]!r}")
    return hits


def test_the_checker_finds_what_it_must_and_spares_docstrings():
    src = '''"""Module doc: § 540-4B."""
def f():
    """Cites § 540-7B."""
    x = f"{1} is 4,000 sq ft or more"  # § 540-4A in a comment is fine
    return "inside the Village of Winneconne"
'''
    hits = law_literals(src)
    assert len(hits) == 2 and {h.split(":")[1] for h in hits} == {"4", "5"}


def test_no_ordinance_literal_in_user_facing_strings():
    hits = []
    for path in sorted(SRC.rglob("*.py")):
        hits += law_literals(path.read_text(encoding="utf-8"), str(path.relative_to(SRC)))
    assert not hits, "ordinance wording in code; move it to the profile:\n" + "\n".join(hits)
