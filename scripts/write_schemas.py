"""Write the JSON Schema of every configuration file into src/esc_gis/schemas (from esc_gis.config's models).

Run after changing a model; tests/test_config_schemas.py fails while a shipped schema differs
from its model's::

    PYTHONPATH=src python scripts/write_schemas.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from esc_gis.config import FORMATS, schema_text

OUT = Path(__file__).resolve().parents[1] / "src" / "esc_gis" / "schemas"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in FORMATS:
        path = OUT / f"{name}.schema.json"
        new = schema_text(name)
        if not path.exists() or path.read_text(encoding="utf-8") != new:
            path.write_text(new, encoding="utf-8")
            print(f"wrote {path.relative_to(OUT.parents[2])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
