"""The console summaries print to: as wide as the terminal, 100 columns in a log.

A table wider than its console is cropped by rich, so its width is settled here once:
``$COLUMNS`` when set, the terminal's width on a terminal, else 100 columns (a log or a
pipe has no width of its own; 100 fits a log viewer and a printed page in landscape).
"""

from __future__ import annotations

__all__ = ["LOG_WIDTH", "console"]

import os
import sys

from rich.console import Console

#: Columns assumed when output goes to a file or a pipe and ``$COLUMNS`` is not set.
LOG_WIDTH = 100


def console() -> Console:
    """Return a console for standard output, as wide as its terminal (or ``$COLUMNS``, or 100)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return Console(width=int(columns))
    return Console() if sys.stdout.isatty() else Console(width=LOG_WIDTH)
