"""Sphinx configuration of esc_gis's documentation site (``make docs``; issue 36).

MyST Markdown pages, the CLI reference from the click commands (sphinx-click), the Python API
from the numpy docstrings (autodoc + numpydoc), and the ordinance's pages and the permit's
state diagram generated from the profile and the code at build time (``_ext/esc_docs.py``), so
they cannot disagree with what the toolkit does. Built with warnings as errors.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import esc_gis  # noqa: E402

project = "esc_gis"
author = "esc_gis developers"
copyright = "2026, esc_gis developers (MIT licence)"
release = version = esc_gis.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "sphinx.ext.graphviz",
    "sphinx_click",
    "esc_docs",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
# reference/generated is read by reference/config.md's include, not a page of its own.
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "reference/generated"]
myst_enable_extensions = ["colon_fence", "deflist"]
# Links to a page's headings (`page.md#a-heading`), as GitHub renders them.
myst_heading_anchors = 3

# numpydoc: no autosummary tables of members (the pages list what matters); the API is the
# public functions' docstrings.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autosummary_generate = False
numpydoc_validation_checks: set[str] = set()
autodoc_typehints = "none"
autodoc_member_order = "bysource"

graphviz_output_format = "svg"

html_theme = "furo"
html_title = f"esc_gis {release}"
html_static_path: list[str] = []
# The site is read offline too (a Village's intranet): no fonts or scripts from a CDN.
html_theme_options = {"navigation_with_keys": True}
