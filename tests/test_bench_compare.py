"""The commit-against-commit benchmark harness (benchmarks/compare.py) judges what it measures.

The harness is run by hand (``make bench-compare``), never timed by a test; these tests check
its verdicts on runs whose answer is known: a step made slower on one "commit", an output that
differs, and the docs table that must be the render of the committed measurement.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "explanation"


@pytest.fixture(scope="module")
def compare():
    """benchmarks/compare.py as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "benchmarks" / "compare.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_compare"] = module
    spec.loader.exec_module(module)
    return module


def _rounds(baseline, base, head):
    return {"baseline": list(baseline), "base": list(base), "head": list(head)}


def test_same_speed_is_not_a_slowdown(compare):
    times = _rounds([1.0, 1.02, 0.98], [2.0, 2.04, 1.96], [2.02, 2.0, 1.98])
    peaks = _rounds([100, 100, 100], [300, 300, 300], [301, 300, 300])
    v = compare.verdict(times, peaks, 0.05)
    assert not v["slower"] and not v["larger"] and not v["faster"]
    assert v["head_vs_base"] == pytest.approx(1.0, abs=0.02)
    assert v["base_vs_baseline"] == pytest.approx(2.0, abs=0.01)


def test_a_slowdown_beyond_the_noise_is_caught(compare):
    # HEAD takes 25 % longer in every round; the baseline varies by 2 %.
    times = _rounds([1.0, 1.02, 0.98], [2.0, 2.0, 2.0], [2.5, 2.5, 2.5])
    peaks = _rounds([100] * 3, [300] * 3, [300] * 3)
    v = compare.verdict(times, peaks, 0.05)
    assert v["slower"]
    assert v["head_vs_base"] == pytest.approx(1.25)


def test_a_slowdown_within_the_noise_is_not_called_one(compare):
    # The baseline itself moves by about 30 % between rounds: 10 % is within what the run can see.
    times = _rounds([1.0, 1.3, 0.7], [2.0, 2.6, 1.4], [2.2, 2.86, 1.54])
    peaks = _rounds([100] * 3, [300] * 3, [300] * 3)
    v = compare.verdict(times, peaks, 0.05)
    assert v["noise"] >= 0.3
    assert not v["slower"]


def test_one_stalled_run_does_not_hide_a_slowdown(compare):
    # A stall of the baseline in one round (a shared machine) leaves the medians and the verdict alone.
    times = _rounds([1.0, 1.0, 3.0], [2.0, 2.0, 2.0], [2.6, 2.6, 2.6])
    peaks = _rounds([100] * 3, [300] * 3, [300] * 3)
    assert compare.verdict(times, peaks, 0.05)["slower"]


def test_more_memory_is_caught_and_noise_is_not(compare):
    times = _rounds([1.0] * 3, [2.0] * 3, [2.0] * 3)
    larger = compare.verdict(times, _rounds([100] * 3, [400] * 3, [460] * 3), 0.05)
    assert larger["larger"]
    same = compare.verdict(times, _rounds([100] * 3, [400] * 3, [404] * 3), 0.05)
    assert not same["larger"]


def test_targets_are_judged_at_their_edge(compare):
    case = compare.CASES["screen_100k"]
    at_edge = {"head_vs_baseline": 4.0, "peak_mb": {"head": 499.9}, "peak_head_vs_baseline": 1.0}
    assert all(t["met"] for t in compare.targets(case, at_edge))
    over = {"head_vs_baseline": 4.01, "peak_mb": {"head": 500.0}, "peak_head_vs_baseline": 1.0}
    assert not any(t["met"] for t in compare.targets(case, over))


def _fake_case(compare, tmp_path: Path):
    """A case whose esc step sleeps longer on the "slow" commit and writes that commit's name."""
    code = (
        "import os, sys, time; slow = 'slow' in os.environ['PYTHONPATH']; "
        "time.sleep(0.8 if slow else 0.05); open(sys.argv[1], 'w').write(os.environ['PYTHONPATH'].split(os.pathsep)[0][-4:])"
    )

    def esc(inputs, out):
        dst = out / "out.txt"
        return compare.Step(((sys.executable, "-c", code, str(dst)),), output=str(dst))

    def baseline(inputs, out):
        return compare.Step(((sys.executable, "-c", "import time; time.sleep(0.1)"),))

    return compare.Case("fake", "a sleep", "a sleep", lambda data: {}, baseline, esc)


def test_the_harness_finds_the_slower_commit_and_the_other_output(compare, tmp_path):
    case = _fake_case(compare, tmp_path)
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    fast.mkdir(), slow.mkdir()
    v = compare.run_case(case, {"base": fast, "head": slow}, tmp_path, tmp_path / "work", 3, 0.05)
    assert v["slower"], v
    assert v["head_vs_base"] > 1.5
    assert v["output"]["same"] is False
    result = {"cases": {"fake": v}}
    msgs = compare.failures(result)
    assert any("HEAD takes" in m for m in msgs) and any("differs" in m for m in msgs)
    # The same commit on both sides writes the same output (its speed is the machine's to vary:
    # a verdict on two equal programs is not asserted, as no test times anything).
    same = compare.run_case(case, {"base": fast, "head": fast}, tmp_path, tmp_path / "work2", 3, 0.05)
    assert same["output"]["same"]
    assert not any("differs" in m for m in compare.failures({"cases": {"fake": same}}))
    # Speed against one commit, rows against another (--same-as): HEAD writes what "fast" wrote.
    judged = compare.run_case(
        case, {"base": slow, "head": fast, "same_as": fast}, tmp_path, tmp_path / "work3", 3, 0.05
    )
    assert judged["output"]["same"] and judged["faster"] and not judged["slower"]


@pytest.mark.skipif(shutil.which("git") is None, reason="the harness unpacks commits with git")
def test_make_bench_compare_runs_a_case_on_two_commits(compare, tmp_path):
    """The command line, end to end, on the start-up case: HEAD against itself."""
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("not a git checkout (an unpacked sdist): the harness compares commits")
    out = tmp_path / "r.json"
    script = str(ROOT / "benchmarks" / "compare.py")
    argv = [sys.executable, script, "run", "--base", "HEAD", "--head", "HEAD", "--cases", "start", "--rounds", "2"]
    argv += ["--min-noise", "10"]  # no verdict on the speed of two equal programs (no test times anything)
    proc = subprocess.run(
        [*argv, "--json", str(out), "--work-dir", str(tmp_path / "w")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert result["base"]["commit"] == result["head"]["commit"]
    assert "| start |" in proc.stdout
    bad = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "compare.py"), "run", "--base", "HEAD", "--cases", "nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "unknown case" in bad.stdout


def test_the_docs_table_is_the_committed_measurement(compare):
    """docs/explanation/benchmarks.md holds exactly the render of bench-compare.json beside it."""
    result = json.loads((DOCS / "bench-compare.json").read_text(encoding="utf-8"))
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    start = page.index(compare.MARK_START) + len(compare.MARK_START)
    end = page.index(compare.MARK_END)
    assert page[start:end].strip() == compare.render(result).strip()
    assert result["base"]["commit"] and result["head"]["commit"] and result["machine"]["cpus"]
