"""Plan-review checks pinned at their edges (filled in by issue 18)."""
