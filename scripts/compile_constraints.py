"""Write deploy/constraints.txt: every package the container installs, pinned with its hashes.

The pins come from pyproject.toml (the project's dependencies and its ``serve`` extra), resolved
by uv for the container's Python and platform (deploy/Containerfile: CPython 3.11 on Debian
bookworm, glibc 2.36, x86_64), wheels only, and as PyPI stood at one moment (``--exclude-newer``,
written in the file's header). The same pyproject.toml and the same moment give the same file,
whenever it is run: that is what makes the container build the same twice, and what lets a test
(tests/test_deploy_container.py) check that the committed file is the one the pins give.

``pip-compile`` (pip-tools) was the other choice: it resolves for the interpreter that runs it
and has no moment, so the same command gives a different file each week and cannot be checked.

Usage (``make constraints`` runs the first)::

    python scripts/compile_constraints.py                 # again at the file's moment (a pin changed)
    python scripts/compile_constraints.py --moment now    # newer releases: the moment moves to now
    python scripts/compile_constraints.py --check         # exit 1 if the file is not what the pins give
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "deploy" / "constraints.txt"
#: The container's interpreter and platform (the base image's CPython 3.11 on Debian bookworm,
#: whose glibc is 2.36). The base image's own Python patch release does not change the markers.
PYTHON_VERSION = "3.11"
PLATFORM = "x86_64-manylinux_2_36"
MOMENT_LINE = "# exclude-newer: "
HEADER = (
    "# The Python packages of the container (deploy/Containerfile), each pinned with its files' hashes.\n"
    "# Made by `make constraints` (scripts/compile_constraints.py) from pyproject.toml's pins: do not edit.\n"
    "# Resolved by uv for CPython {python} on {platform}, wheels only, from PyPI as it stood at this moment:\n"
    "{moment_line}{moment}\n"
)
_ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
_HASH = re.compile(r"--hash=(sha256:[0-9a-f]{64})")


def uv_exe() -> str:
    """The uv binary: the one the running environment installed (dev and test extras), else PATH's."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            sys.exit("uv is not installed: pip install -e '.[dev]' brings it (make constraints does)")
        return found


def current_moment(path: Path = CONSTRAINTS) -> str:
    """The moment written in ``path``'s header (RFC 3339, UTC)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(MOMENT_LINE):
            return line[len(MOMENT_LINE) :].strip()
    sys.exit(f"{path} has no '{MOMENT_LINE.strip()}' line: give --moment (an RFC 3339 time, or now)")


def compile_text(moment: str, uv: str | None = None) -> str:
    """The constraints file for ``moment``: the header, then uv's pins with hashes and their reasons.

    Raises
    ------
    subprocess.CalledProcessError
        uv could not resolve the pins at that moment (its message is on stderr).
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "constraints.txt"
        subprocess.run(
            [
                *(uv or uv_exe(), "pip", "compile", "pyproject.toml", "--extra", "serve"),
                *("--python-version", PYTHON_VERSION, "--python-platform", PLATFORM),
                *("--only-binary", ":all:", "--generate-hashes", "--exclude-newer", moment),
                *("--no-header", "--quiet", "--no-progress", "--output-file", str(out)),
            ],
            check=True,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        body = out.read_text(encoding="utf-8")
    header = HEADER.format(python=PYTHON_VERSION, platform=PLATFORM, moment_line=MOMENT_LINE, moment=moment)
    return header + body


def entries(text: str) -> dict[str, tuple[str, frozenset[str]]]:
    """Each pinned package of a constraints file: its normalized name, its version and its hashes."""
    out: dict[str, tuple[str, frozenset[str]]] = {}
    name = None
    for line in text.splitlines():
        m = _ENTRY.match(line)
        if m:
            name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
            out[name] = (m.group(2), frozenset())
        for h in _HASH.findall(line):
            assert name is not None, f"a hash before any package: {line!r}"
            out[name] = (out[name][0], out[name][1] | {h})
    return out


def differences(old: str, new: str) -> list[str]:
    """What changes from ``old`` to ``new``, package by package (comments are not compared)."""
    a, b = entries(old), entries(new)
    lines = [
        f"{n}: {'absent' if n not in a else a[n][0]} -> {'absent' if n not in b else b[n][0]}"
        for n in sorted(a.keys() | b.keys())
        if a.get(n, ("", frozenset()))[0] != b.get(n, ("", frozenset()))[0]
    ]
    lines += [
        f"{n} {a[n][0]}: other hashes" for n in sorted(a.keys() & b.keys()) if a[n][0] == b[n][0] and a[n][1] != b[n][1]
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moment", help="PyPI as it stood then (RFC 3339, or 'now'); default: the file's own")
    parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    args = parser.parse_args(argv)
    moment = args.moment or current_moment()
    if moment == "now":
        moment = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        text = compile_text(moment)
    except subprocess.CalledProcessError as exc:
        print(exc.stderr, file=sys.stderr)
        print(f"uv could not resolve pyproject.toml's pins as PyPI stood at {moment}", file=sys.stderr)
        return 1
    if args.check:
        diff = differences(CONSTRAINTS.read_text(encoding="utf-8"), text)
        for line in diff:
            print(line)
        if diff:
            print("deploy/constraints.txt is not what pyproject.toml's pins give: run `make constraints`")
        return 1 if diff else 0
    CONSTRAINTS.write_text(text, encoding="utf-8")
    print(f"{CONSTRAINTS.relative_to(ROOT)}: {len(entries(text))} packages, PyPI as at {moment}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
