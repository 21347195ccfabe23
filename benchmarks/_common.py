"""Helpers shared by the benchmark scripts (run by hand; see README.md)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def peak_rss_mb() -> float:
    """This process's peak resident set size, in MiB."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / (1024.0 * 1024.0) if sys.platform == "darwin" else kib / 1024.0


# --- The worker protocol: a benchmark re-runs its own script as `SCRIPT _worker TASK ARGS OUT`,
# --- so every measurement has a fresh interpreter and its own peak memory.

#: argv[1] that makes a benchmark script run one task instead of its driver.
WORKER = "_worker"


def worker_main(tasks: dict[str, Callable[[dict[str, Any]], dict[str, Any]]], argv: Sequence[str]) -> int:
    """``SCRIPT _worker TASK ARGS_JSON RESULT_PATH``: run one task, write its result as JSON."""
    task, args_json, result_path = argv
    result = tasks[task](json.loads(args_json))
    Path(result_path).write_text(json.dumps(result), encoding="utf-8")
    return 0


def worker_command(script: str, task: str, args: dict[str, Any], tmp: Path) -> tuple[list[str], Path]:
    """The command that runs ``task`` of ``script`` in a fresh interpreter, and its result file."""
    result_path = tmp / f".{task}-result.json"
    result_path.unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(script).resolve()), WORKER, task, json.dumps(args), str(result_path)]
    return cmd, result_path


def read_result(result_path: Path) -> dict[str, Any]:
    """Read and remove a worker's result file."""
    result: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
    result_path.unlink()
    return result


def run_task(script: str, task: str, args: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Run ``task`` of ``script`` in a fresh interpreter and return its result (its peaks its own)."""
    import subprocess

    cmd, result_path = worker_command(script, task, args, tmp)
    proc = subprocess.run(cmd, check=False)
    if proc.returncode != 0:
        msg = f"worker {task!r} failed with exit status {proc.returncode}"
        raise RuntimeError(msg)
    return read_result(result_path)


def find_cli() -> str | None:
    """The ``esc-gis`` script next to this interpreter, else on PATH (None when neither)."""
    beside = Path(sys.executable).parent / "esc-gis"
    return str(beside) if beside.exists() else shutil.which("esc-gis")
