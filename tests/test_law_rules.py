"""Rules pinned at the law's edges (filled in by issue 18)."""
