"""What the rasters are written as, kept free of heavy imports: the CLI's options list it at start-up."""

from __future__ import annotations

__all__ = ["COMPRESSIONS"]

#: Compressions of the rasters written (``--compress``); the first is the default.
COMPRESSIONS = ("deflate", "zstd", "lzw", "none")
