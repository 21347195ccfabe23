"""Print the mutation score per module from mutmut's results, and the survivors nobody explained.

Run by ``make mutation`` after ``mutmut run``. A mutant counts as killed when a test failed
or timed out on it; every other outcome (survived, no tests, suspicious) counts against the
score. Each survivor must be explained in ``docs/explanation/mutation-survivors.md`` (its name in
backticks under its module's heading, and why it is equivalent); the script lists those that are not,
and exits 1 when a module is under the target or a survivor is unexplained.

Usage::

    python scripts/mutation_report.py [--target 90] [--survivors docs/explanation/mutation-survivors.md]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KILLED = {"killed", "timeout"}
#: mutmut names a mutant ``<module>.x_<function>__mutmut_<n>`` or ``<module>.xǁ<Class>ǁ<method>__mutmut_<n>``.
_NAME = re.compile(r"^(?P<module>[\w.]+?)\.x(?:_|ǁ)(?P<function>.+)__mutmut_\d+$")


def results(mutmut: str) -> dict[str, str]:
    """Return mutant name -> status, as ``mutmut results --all true`` prints them."""
    out = subprocess.run([mutmut, "results", "--all", "true"], capture_output=True, text=True, check=True, cwd=ROOT)
    status = {}
    for line in out.stdout.splitlines():
        name, sep, state = line.strip().rpartition(": ")
        if sep and _NAME.match(name):
            status[name] = state.strip()
    return status


def explained(path: Path) -> set[str]:
    """Return the mutant names that ``path`` explains.

    A line explains the backticked ``...__mutmut_<n>`` names before its first `` (``; a name
    without its module (``x_f__mutmut_3``) is in the module of the ``## <module>`` heading above.
    """
    if not path.exists():
        return set()
    names, module = set(), ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            module = line[3:].strip()
            continue
        named = line.split(" (", 1)[0]  # the names come first; the explanation may mention others
        for name in re.findall(r"`([^`\s]+__mutmut_\d+)`", named):
            names.add(name if name.startswith("esc_gis.") else f"{module}.{name}")
    return names


def main(argv: list[str] | None = None) -> int:
    """Print the table; return 1 if a module is under target or a survivor is unexplained."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=float, default=90.0, help="minimum score per module, in percent")
    ap.add_argument("--survivors", type=Path, default=ROOT / "docs" / "explanation" / "mutation-survivors.md")
    ap.add_argument("--mutmut", default=str(Path(sys.executable).with_name("mutmut")))
    args = ap.parse_args(argv)

    status = results(args.mutmut)
    if not status:
        print("No mutmut results: run `mutmut run` first (make mutation does both).")
        return 1
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    survivors: list[str] = []
    for name, state in sorted(status.items()):
        m = _NAME.match(name)
        assert m is not None  # results() kept only names that match
        by_module[m["module"]][state] += 1
        if state not in KILLED:
            survivors.append(name)
    failed = False
    print(f"{'module':<34} {'mutants':>8} {'killed':>7} {'score':>7}  other")
    for module, counts in sorted(by_module.items()):
        if set(counts) == {"not checked"}:  # left out of this run (make mutation MUTANTS=...)
            print(f"{module:<34} {'not run':>8}")
            survivors = [s for s in survivors if not s.startswith(f"{module}.")]
            continue
        total = sum(counts.values())
        killed = sum(counts[k] for k in KILLED)
        score = 100.0 * killed / total
        other = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k not in KILLED)
        flag = "" if score >= args.target else f"  < {args.target:g} %"
        failed |= bool(flag)
        print(f"{module:<34} {total:>8} {killed:>7} {score:>6.1f}%  {other}{flag}")
    known = explained(args.survivors)
    unexplained = [s for s in survivors if s not in known]
    if unexplained:
        failed = True
        rel = args.survivors.relative_to(ROOT) if args.survivors.is_relative_to(ROOT) else args.survivors
        print(f"\n{len(unexplained)} surviving mutant(s) not explained in {rel} (see each with `mutmut show NAME`):")
        for name in unexplained:
            print(f"  {name}: {status[name]}")
    ran = [m for m, counts in by_module.items() if set(counts) != {"not checked"}]
    stale = sorted(k for k in known - set(survivors) if any(k.startswith(f"{m}.") for m in ran))
    if stale:
        print(f"\n{len(stale)} explained mutant(s) no longer survive (remove them from the file): {', '.join(stale)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
