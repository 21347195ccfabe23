"""Benchmark the office summary's inspection count: N active permits over a year of daily rain.

Baseline, measured in the same run: the agenda of what is due on the year's last day
(``permits due``, :func:`esc_gis.registry.views.agenda.agenda`) for the same permits, which runs
the inspection rules once per permit. The summary replays those rules over the year (a
weekly check per deadline day, and the after-rain rules twice per permit), so the ratio says
what the replay costs. The target is at most 20x.

Usage::

    .venv/bin/python benchmarks/bench_summary.py [--n 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _permits(n: int) -> list:  # type: ignore[type-arg]
    """N active permits started 2026-01-05, inspected every 5-9 days (some weeks missed)."""
    from esc_gis.registry.domain.records import Event, Permit

    rng = random.Random(540)
    start = datetime(2026, 1, 5, 8, tzinfo=timezone.utc)
    out = []
    for i in range(n):
        p = Permit(
            f"ESC-2026-{i:04d}",
            None,
            f"{i} Bench St",
            None,
            "active",
            9000.0,
            6000.0,
            None,
            None,
            None,
            None,
            date(2026, 1, 2),
            None,
            None,
            None,
            date(2026, 1, 3),
            None,
            start,
            start,
            None,
            None,
            None,
            start,
        )
        d = start.date()
        while d < date(2026, 12, 31):
            d += timedelta(days=rng.choice([5, 6, 7, 8, 9]))
            p.events.append(Event(start, "bench", "inspection", None, None, d))
        out.append(p)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from esc_gis.profile import load_profile
    from esc_gis.registry.domain.calendar import OfficeCalendar
    from esc_gis.registry.views.agenda import agenda
    from esc_gis.registry.views.summary import inspection_deadlines

    profile = load_profile()
    rng = random.Random(7)
    rain = [(date(2026, 1, 1) + timedelta(days=i), rng.choice([0, 0, 0, 0.1, 0.3, 0.6])) for i in range(365)]
    permits = _permits(args.n)
    cal = OfficeCalendar()

    def best(fn) -> float:  # type: ignore[no-untyped-def]
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    floor = best(lambda: agenda(permits, on=date(2026, 12, 31), calendar=cal, profile=profile, rain=rain))
    counted: list[int] = []
    full = best(
        lambda: counted.append(
            sum(
                len(inspection_deadlines(p, date(2026, 1, 1), date(2026, 12, 31), rain=rain, profile=profile))
                for p in permits
            )
        )
    )
    print(
        f"{args.n} permits, 365 days of rain: agenda {floor:.3f} s, summary's inspections {full:.3f} s, "
        f"ratio {full / floor:.1f}x (target <= 20x); {counted[-1]} deadlines"
    )


if __name__ == "__main__":
    main()
