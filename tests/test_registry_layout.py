"""The registry's folders show its design, and its imports flow one way (docs/explanation/registry-design.md).

The domain is pure: it imports nothing of the store, the service or the views. The store keeps
the history and its tables and reaches no higher than the domain.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REGISTRY = Path(__file__).resolve().parents[1] / "src" / "esc_gis" / "registry"


def _registry_imports(path: Path) -> set[str]:
    """Every ``esc_gis.registry.<folder>`` a module imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [node.module]
            if isinstance(node, ast.ImportFrom) and node.module
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["esc_gis", "registry"] and len(parts) > 2:
                found.add(parts[2])
    return found


@pytest.mark.parametrize(("folder", "may"), [("domain", {"domain"}), ("store", {"domain", "store"})])
def test_imports_flow_one_way(folder: str, may: set[str]) -> None:
    modules = sorted((REGISTRY / folder).glob("*.py"))
    assert len(modules) > 5, folder
    reaching = {m.name: _registry_imports(m) - may for m in modules}
    assert {k: v for k, v in reaching.items() if v} == {}


def test_every_module_lives_in_a_folder() -> None:
    assert [p.name for p in REGISTRY.glob("*.py")] == ["__init__.py"]
    assert {p.name for p in REGISTRY.iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        "domain",
        "store",
        "service",
        "views",
    }
