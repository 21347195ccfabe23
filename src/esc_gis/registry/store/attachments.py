"""What a command stores beside its events, outside the history: contact details and photos' bytes.

Neither is a projection (:mod:`.projection`): the history never holds them. Parties are private,
and the inspector's role reads the history; a photo's bytes are evidence kept once, named in its
``inspected`` event by their SHA-256, which :meth:`~esc_gis.registry.Registry.photo` checks.
"""

from __future__ import annotations

__all__ = ["store_parties", "store_photos"]

from collections.abc import Iterable, Sequence
from typing import Any


def store_parties(cur: Any, b: Any, parties: Iterable[tuple[str, Any]]) -> None:
    """Store each (permit number, party) of a received application (after its permit's row is written)."""
    rows = [(n, p.role, p.name.strip(), p.organization, p.phone, p.email, p.address) for n, p in parties]
    if rows:
        cur.executemany(
            "INSERT INTO parties (permit_number, role, name, organization, phone, email, address) "
            f"VALUES ({', '.join([b.ph] * 7)})",
            rows,
        )


def store_photos(cur: Any, b: Any, inspection_id: int, photos: Sequence[Any]) -> None:
    """Store the photos of an inspection report (after its report's row is written)."""
    if photos:
        cur.executemany(
            "INSERT INTO inspection_photos (inspection_id, filename, content_type, sha256, size_bytes, data) "
            f"VALUES ({', '.join([b.ph] * 6)})",
            [(inspection_id, f.filename, f.content_type, f.sha256, f.size_bytes, f.data) for f in photos],
        )
