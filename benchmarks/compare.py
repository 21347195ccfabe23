"""Every benchmark on two commits, side by side, each with its baseline in the same run.

``make bench-compare BASE=9c4f08f`` runs this. Nothing compared commit with commit before: a
change could make the screening 25 % slower and every test still passed. This harness does
for esc_gis what ``asv continuous BASE HEAD`` does for shapely, numpy and pandas, with one
thing asv lacks: each case's baseline (the I/O floor, gdaldem, SAGA, rasterio's CLI) runs in
the same rounds, so a ratio to it holds on a machine whose speed drifts.

How it runs
-----------
1. **The commits.** ``git archive COMMIT src`` of each is unpacked under the work folder, and
   every esc_gis step runs with ``PYTHONPATH`` set to it, in this checkout's virtual
   environment (its libraries are the same for both; a commit whose dependencies differ from
   this checkout's is named in the output). ``--head .`` measures the working tree.
2. **The data**, made once by the benchmark scripts' own generators (``bench_screen.py``,
   ``bench_slope.py``, ``bench_soil_loss.py``) into ``--data-dir`` and kept for the next run.
3. **Rounds.** After one untimed run of the baseline (the inputs are then in the page cache),
   each round runs the baseline, BASE and HEAD, each in a fresh process, in an order that
   rotates from round to round. Each figure is the median over the rounds; each ratio is the
   median of the ratios within a round (A/B of two runs a few seconds apart), so a drift in
   the machine's speed cancels.
4. **Noise.** The baseline is the same program in every round, so the spread of its times
   (twice their median absolute deviation over their median) is the noise of this run on this
   machine; so is the spread of the HEAD / BASE ratios round by round around their median. The
   noise is the larger of the two, and at least ``--min-noise`` (5 %).
   HEAD is **slower** when its median time ratio to BASE exceeds 1 + noise, and **larger**
   when its peak memory exceeds BASE's by more than the baseline's peak spread (at least 3 %
   and 5 MB).
5. **Same output.** After the rounds, HEAD's output is digested (a GeoPackage's rows in fid
   order, a raster's cells) and must equal BASE's, or the case fails. ``--same-as REF`` judges
   the rows against another commit instead, when BASE predates a change in what the output
   says (the profile's wording, a new column): speed against one commit, rows against another.
6. **Targets.** Each case carries its targets (a time ratio to its baseline, a peak);
   they are reported as met or not, and fail the run only with ``--strict``.

Exit status: 0 when no case is slower, larger or different; 1 otherwise; 2 for bad arguments.

``python benchmarks/compare.py render RESULT.json`` prints the results table, and
``--docs docs/explanation/benchmarks.md`` writes it between the page's markers, so the page is
made from a measurement (``tests/test_bench_compare.py`` checks it is).

The driver imports the standard library only: on Linux a child's peak memory starts from its
parent's at ``fork``, so a large driver would inflate every figure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
VILLAGE_LAYERS = ROOT / "layers" / "winneconne" / "layers.toml"
MARK_START = "<!-- bench-compare:start (made by benchmarks/compare.py render; do not edit) -->"
MARK_END = "<!-- bench-compare:end -->"

Result = dict[str, Any]


# --------------------------------------------------------------------------------------
# What a case runs
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One measured program: whole processes timed from outside, or a ``_timed.py`` mode.

    ``argv`` lists one or more commands run one after the other (gdaldem, then gdaladdo);
    their times add and the higher peak counts. ``timed`` says the (single) command is a
    ``_timed.py`` run that reports its own time and peak, imports excluded.
    """

    argv: tuple[tuple[str, ...], ...]
    timed: bool = False
    output: str | None = None


@dataclass
class Case:
    """A benchmark: its data, its baseline, the esc_gis step for a commit, the targets."""

    name: str
    title: str
    baseline_name: str
    prepare: Callable[[Path], dict[str, str]]
    baseline: Callable[[dict[str, str], Path], Step]
    esc: Callable[[dict[str, str], Path], Step]
    target_ratio: float | None = None
    target_peak_mb: float | None = None
    target_peak_ratio: float | None = None
    needs: tuple[str, ...] = ()
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _worker(script: str, task: str, args: dict[str, Any], data: Path) -> Result:
    """Run a benchmark script's generator task in a fresh interpreter (this checkout's code)."""
    result = data / f".{task}-{os.getpid()}.json"
    cmd = [PY, str(HERE / script), "_worker", task, json.dumps(args), str(result)]
    subprocess.run(cmd, check=True)
    out: Result = json.loads(result.read_text(encoding="utf-8"))
    result.unlink()
    return out


def _made(path: Path, make: Callable[[Path], object]) -> Path:
    """``path``, made by ``make(partial)`` first when absent (a stopped run leaves no half file)."""
    if not path.exists():
        print(f"making {path.name} (kept in {path.parent} for the next run) ...", file=sys.stderr)
        partial = path.with_name(path.stem + ".partial" + path.suffix)
        make(partial)
        partial.rename(path)
    return path


def _parcels(n: int) -> Callable[[Path], dict[str, str]]:
    def prepare(data: Path) -> dict[str, str]:
        path = _made(
            data / f"parcels_{n}.gpkg",
            lambda p: _worker(
                "bench_screen.py", "generate", {"n": n, "seed": 540, "parcel_acres": 0.375, "path": str(p)}, data
            ),
        )
        return {"input": str(path)}

    return prepare


def _plain_dem(size: int, data: Path) -> Path:
    return _made(
        data / f"dem_{size}_plain.tif",
        lambda p: _worker("bench_slope.py", "generate", {"size": size, "seed": 540, "holes": 0, "path": str(p)}, data),
    )


def _slope_dem(size: int, layout: str) -> Callable[[Path], dict[str, str]]:
    def prepare(data: Path) -> dict[str, str]:
        plain = _plain_dem(size, data)
        if layout == "plain":
            return {"dem": str(plain)}
        dem = _made(
            data / f"dem_{size}_deflate.tif",
            lambda p: _worker(
                "bench_slope.py", "layout", {"src": str(plain), "layout": "deflate", "path": str(p)}, data
            ),
        )
        return {"dem": str(dem)}

    return prepare


def _hills_dem(size: int) -> Callable[[Path], dict[str, str]]:
    def prepare(data: Path) -> dict[str, str]:
        dem = _made(
            data / f"hills_{size}.tif",
            lambda p: _worker("bench_soil_loss.py", "generate", {"size": size, "seed": 16, "path": str(p)}, data),
        )
        return {"dem": str(dem)}

    return prepare


def _esc_gis() -> str:
    return str(Path(PY).parent / "esc-gis")


def _screen_esc(inputs: dict[str, str], out: Path) -> Step:
    dst = out / "screened.gpkg"
    args = ("screen", inputs["input"], "--layers", str(VILLAGE_LAYERS), "-o", str(dst), "--overwrite", "--quiet")
    # The command's own imports untimed too, as bench_screen.py's in-process figure (the floor's likewise).
    warm = "+esc_gis.cli._screen_run"
    return Step(((PY, str(HERE / "_timed.py"), "{result}", "cli", warm, *args),), timed=True, output=str(dst))


def _screen_floor(inputs: dict[str, str], out: Path) -> Step:
    dst = out / "floor.gpkg"
    return Step(((PY, str(HERE / "_timed.py"), "{result}", "floor", inputs["input"], str(dst)),), timed=True)


#: gdaldem writing what ``esc-gis slope`` writes: 512-cell tiles, DEFLATE level 1 with the
#: floating-point predictor, then the same overview levels (gdaladdo, average).
SAME_CO = ("TILED=YES", "BLOCKXSIZE=512", "BLOCKYSIZE=512", "COMPRESS=DEFLATE", "PREDICTOR=3", "ZLEVEL=1")


def _overview_levels(size: int) -> list[str]:
    """esc's overview levels for gdaladdo, as bench_slope.py gives them (a standard-library module)."""
    sys.path.insert(0, str(HERE))
    from bench_slope import overview_levels

    return overview_levels(size)


def _slope_gdaldem(size: int, overviews: bool = False) -> Callable[[dict[str, str], Path], Step]:
    """gdaldem with esc's creation options; with ``overviews``, gdaladdo adds esc's overview levels too."""

    def step(inputs: dict[str, str], out: Path) -> Step:
        dst = out / "gdaldem.tif"
        co = [x for c in SAME_CO for x in ("-co", c)]
        gdaldem = ("gdaldem", "slope", "-p", "-q", *co, inputs["dem"], str(dst))
        if not overviews:
            return Step((("rm", "-f", str(dst)), gdaldem))
        addo = ("gdaladdo", "-q", "-r", "average", str(dst), *_overview_levels(size))
        return Step((("rm", "-f", str(dst)), gdaldem, addo))

    return step


def _slope_esc(inputs: dict[str, str], out: Path) -> Step:
    dst = out / "slope.tif"
    cmd = (_esc_gis(), "slope", inputs["dem"], "-o", str(dst), "--z-unit", "m", "--overwrite", "--quiet")
    return Step((cmd,), output=str(dst))


def _ls_esc(inputs: dict[str, str], out: Path) -> Step:
    dst = out / "ls.tif"
    args = json.dumps({"dem": inputs["dem"], "out": str(dst)})
    cmd = (PY, str(HERE / "bench_soil_loss.py"), "_worker", "esc", args, str(out / ".ls-result.json"))
    return Step((cmd,), output=str(dst))


def _ls_saga(inputs: dict[str, str], out: Path) -> Step:
    dst = out / "saga.sdat"
    cmd = ("saga_cmd", "-f=q", "ta_hydrology", "25", "-DEM", inputs["dem"], "-LS_FACTOR", str(dst))
    return Step(((*cmd, "-METHOD", "1", "-METHOD_AREA", "1"),))


def _none(data: Path) -> dict[str, str]:
    return {}


def _help_esc(inputs: dict[str, str], out: Path) -> Step:
    return Step(((_esc_gis(), "--help"),))


def _help_rio(inputs: dict[str, str], out: Path) -> Step:
    return Step(((str(Path(PY).parent / "rio"), "--help"),))


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case(
            "start",
            "`esc-gis --help`, whole process",
            "`rio --help`",
            _none,
            _help_rio,
            _help_esc,
            target_ratio=1.5,
            note="the start-up target of 2026-12-04",
        ),
        Case(
            "screen_100k",
            "screen 100,000 parcels end to end (EPSG:3071 GeoPackage, the Village's layers)",
            "I/O floor: pyogrio reads the input and writes it",
            _parcels(100_000),
            _screen_floor,
            _screen_esc,
            target_ratio=4.0,
            target_peak_mb=500.0,
        ),
        Case(
            "screen_1m",
            "screen 1,000,000 parcels, no option (streams by itself)",
            "I/O floor: pyogrio reads the input and writes it",
            _parcels(1_000_000),
            _screen_floor,
            _screen_esc,
            target_ratio=3.0,
            target_peak_mb=600.0,
        ),
        Case(
            "slope_8000",
            "slope of an 8,000 x 8,000 DEM (plain GeoTIFF), like for like (esc also writes overviews)",
            "gdaldem slope -p with esc's tiles and codec",
            _slope_dem(8000, "plain"),
            _slope_gdaldem(8000),
            _slope_esc,
            target_ratio=0.6,
            needs=("gdaldem",),
        ),
        Case(
            "slope_8000_overviews",
            "the same, against the same output: gdaldem's file given esc's overview levels",
            "gdaldem slope -p with esc's tiles and codec, then gdaladdo",
            _slope_dem(8000, "plain"),
            _slope_gdaldem(8000, overviews=True),
            _slope_esc,
            needs=("gdaldem", "gdaladdo"),
        ),
        Case(
            "slope_12000_deflate",
            "slope of a 12,000 x 12,000 DEM, tiled DEFLATE (esc also writes overviews)",
            "gdaldem slope -p with esc's tiles and codec",
            _slope_dem(12000, "deflate"),
            _slope_gdaldem(12000),
            _slope_esc,
            target_ratio=1.0,
            needs=("gdaldem",),
        ),
        Case(
            "ls_4000",
            "LS grid of a 4,000 x 4,000 DEM (tiled DEFLATE), read, computed and written",
            "SAGA LS-Factor, Field Based (saga_cmd ta_hydrology 25)",
            _hills_dem(4000),
            _ls_saga,
            _ls_esc,
            target_peak_ratio=1.0,
            needs=("saga_cmd",),
        ),
    )
}
DEFAULT_CASES = tuple(CASES)


# --------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------


def git(*args: str) -> str:
    """``git ARGS`` in the checkout, its output stripped."""
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def checkout_src(commit: str, work: Path) -> tuple[str, Path]:
    """The full hash of ``commit`` and a folder holding its ``src`` (``.``: the working tree)."""
    if commit == ".":
        return "working tree", ROOT / "src"
    sha = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    folder = work / f"src-{sha[:12]}"
    if not (folder / "src" / "esc_gis").is_dir():
        partial = work / f"src-{sha[:12]}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha, "src"], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(partial)], input=archive.stdout, check=True)
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
    return sha, folder / "src"


def dependencies(commit: str) -> str:
    """The ``dependencies`` block of a commit's pyproject.toml (``.``: the working tree's)."""
    text = (ROOT / "pyproject.toml").read_text() if commit == "." else git("show", f"{commit}:pyproject.toml")
    start = text.find("dependencies = [")
    return text[start : text.find("]", start)] if start >= 0 else ""


def run_step(step: Step, src: Path | None, out: Path) -> Result:
    """Run ``step`` once with ``src`` first on PYTHONPATH: its seconds, CPU seconds and peak MB."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), str(HERE)])
    result_file = out / ".step-result.json"
    seconds = cpu = peak = 0.0
    for argv in step.argv:
        cmd = [a.replace("{result}", str(result_file)) for a in argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read()
        proc.stderr.close()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            tail = err.decode(errors="replace").strip().splitlines()[-15:]
            msg = f"{' '.join(cmd)} exited {proc.returncode}:\n  " + "\n  ".join(tail)
            raise RuntimeError(msg)
        seconds += wall
        cpu += usage.ru_utime + usage.ru_stime
        peak = max(peak, usage.ru_maxrss / 1024.0)
    if step.timed:
        own = json.loads(result_file.read_text(encoding="utf-8"))
        result_file.unlink()
        return {"seconds": own["seconds"], "cpu_s": own["cpu_s"], "peak_mb": own["peak_mb"], "process_s": seconds}
    return {"seconds": seconds, "cpu_s": cpu, "peak_mb": peak}


def digest(path: str, src: Path) -> Result:
    """``_timed.py digest`` of an output, read with the given commit's environment."""
    out = Path(path).parent
    step = Step(((PY, str(HERE / "_timed.py"), "{result}", "digest", path),))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(HERE)]))
    result_file = out / ".digest.json"
    cmd = [a.replace("{result}", str(result_file)) for a in step.argv[0]]
    subprocess.run(cmd, env=env, check=True)
    value: Result = json.loads(result_file.read_text(encoding="utf-8"))
    result_file.unlink()
    return value


def spread(values: Sequence[float]) -> float:
    """Twice the median absolute deviation over the median: how far runs of one program fall apart.

    Robust to one stalled run in three (a shared machine stalls now and then), as the medians
    the verdict compares are.
    """
    mid = statistics.median(values)
    if mid <= 0:
        return 0.0
    return 2.0 * statistics.median(abs(x - mid) for x in values) / mid


def verdict(times: dict[str, list[float]], peaks: dict[str, list[float]], min_noise: float) -> Result:
    """Ratios, noise and the verdict of one case from its rounds' times and peaks.

    ``times`` and ``peaks`` map ``baseline``, ``base`` and ``head`` to one figure per round.
    """
    rounds = len(times["baseline"])
    pair = {
        key: statistics.median(times[a][i] / times[b][i] for i in range(rounds))
        for key, (a, b) in {
            "base_vs_baseline": ("base", "baseline"),
            "head_vs_baseline": ("head", "baseline"),
            "head_vs_base": ("head", "base"),
        }.items()
    }
    # The baseline's runs differ only by the machine; so do the head/base pairs, around their median.
    ratios = [times["head"][i] / times["base"][i] for i in range(rounds)]
    noise = max(min_noise, spread(times["baseline"]), spread(ratios))
    peak = {k: max(v) for k, v in peaks.items()}
    # Peak memory barely moves between runs; the baseline's own spread (at least 3 % and 5 MB) is its noise.
    peak_noise_mb = max(5.0, peak["base"] * max(0.03, spread(peaks["baseline"])))
    return {
        **pair,
        "noise": noise,
        "seconds": {k: statistics.median(v) for k, v in times.items()},
        "seconds_all": times,
        "peak_mb": peak,
        "peak_mb_all": peaks,
        "peak_head_vs_base": peak["head"] / peak["base"],
        "peak_head_vs_baseline": peak["head"] / peak["baseline"],
        "peak_noise_mb": peak_noise_mb,
        "slower": pair["head_vs_base"] > 1.0 + noise,
        "faster": pair["head_vs_base"] < 1.0 - noise,
        "larger": peak["head"] > peak["base"] + peak_noise_mb,
    }


def targets(case: Case, v: Result) -> list[Result]:
    """The case's targets, each with HEAD's figure and whether it is met."""
    out = []
    if case.target_ratio is not None:
        got = v["head_vs_baseline"]
        out.append(
            {"what": "time / baseline", "target": case.target_ratio, "got": got, "met": got <= case.target_ratio}
        )
    if case.target_peak_mb is not None:
        got = v["peak_mb"]["head"]
        out.append({"what": "peak MB", "target": case.target_peak_mb, "got": got, "met": got < case.target_peak_mb})
    if case.target_peak_ratio is not None:
        got = v["peak_head_vs_baseline"]
        met = got <= case.target_peak_ratio
        out.append({"what": "peak / baseline", "target": case.target_peak_ratio, "got": got, "met": met})
    return out


def run_case(case: Case, srcs: dict[str, Path], data: Path, work: Path, rounds: int, min_noise: float) -> Result:
    """Warm up, run the rounds, compare outputs and judge one case."""
    missing = [tool for tool in case.needs if shutil.which(tool) is None]
    if missing:
        return {"skipped": f"needs {', '.join(missing)} on PATH"}
    inputs = case.prepare(data)
    outs = {name: work / case.name / name for name in ("baseline", "base", "head")}
    for folder in outs.values():
        folder.mkdir(parents=True, exist_ok=True)
    steps = {
        "baseline": case.baseline(inputs, outs["baseline"]),
        "base": case.esc(inputs, outs["base"]),
        "head": case.esc(inputs, outs["head"]),
    }
    src_of = {"baseline": None, "base": srcs["base"], "head": srcs["head"]}
    run_step(steps["baseline"], None, outs["baseline"])  # warm-up: the inputs into the page cache
    times: dict[str, list[float]] = {k: [] for k in steps}
    peaks: dict[str, list[float]] = {k: [] for k in steps}
    order = ["baseline", "base", "head"]
    orders = []
    for i in range(rounds):
        names = order[i % 3 :] + order[: i % 3]
        orders.append(names)
        for name in names:
            r = run_step(steps[name], src_of[name], outs[name])
            times[name].append(r["seconds"])
            peaks[name].append(r["peak_mb"])
            print(
                f"[{case.name}] round {i + 1}/{rounds} {name:<8} {r['seconds']:7.2f} s {r['peak_mb']:7.0f} MB",
                file=sys.stderr,
            )
    v = verdict(times, peaks, min_noise)
    v["order"] = orders
    v["targets"] = targets(case, v)
    if steps["head"].output:
        ref = steps["base"]
        if srcs.get("same_as") not in (None, srcs["base"]):
            # Rows are judged against another commit (BASE predates a change of the law's wording).
            folder = work / case.name / "same_as"
            folder.mkdir(parents=True, exist_ok=True)
            ref = case.esc(inputs, folder)
            run_step(ref, srcs["same_as"], folder)
        d_ref = digest(str(ref.output), srcs["head"])
        d_head = digest(str(steps["head"].output), srcs["head"])
        v["output"] = {"ref": d_ref, "head": d_head, "same": d_ref["digest"] == d_head["digest"]}
    return v


def machine() -> Result:
    """What the figures were measured on."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    gdal = subprocess.run(["gdalinfo", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory_gb": round(mem_gb, 1),
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "gdal": gdal or "not found",
    }


def compare(
    base: str,
    head: str,
    cases: Sequence[str],
    rounds: int,
    data: Path,
    work: Path,
    min_noise: float,
    same_as: str | None = None,
) -> Result:
    """Run ``cases`` on ``base`` and ``head``; every figure, as the JSON the table is made from.

    HEAD's outputs must equal those of ``same_as`` (default: BASE).
    """
    base_sha, base_src = checkout_src(base, work)
    head_sha, head_src = checkout_src(head, work)
    same_sha, same_src = checkout_src(same_as, work) if same_as else (base_sha, base_src)
    srcs = {"base": base_src, "head": head_src, "same_as": same_src}
    warnings = []
    if dependencies(base) != dependencies(head):
        warnings.append(f"{base} and {head} list different dependencies; both ran in this checkout's environment")
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    results: Result = {}
    for name in cases:
        print(f"== {name}: {CASES[name].title}", file=sys.stderr)
        results[name] = run_case(CASES[name], srcs, data, work, rounds, min_noise)
        results[name]["title"] = CASES[name].title
        results[name]["baseline_name"] = CASES[name].baseline_name
    return {
        "base": {"ref": base, "commit": base_sha},
        "head": {"ref": head, "commit": head_sha},
        "same_as": {"ref": same_as or base, "commit": same_sha},
        "started": started.isoformat(timespec="seconds"),
        "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "load": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
        "rounds": rounds,
        "warnings": warnings,
        "cases": results,
    }


def failures(result: Result, strict: bool = False) -> list[str]:
    """What makes the run fail: a case slower, larger or writing other output (and, strict, a target)."""
    out = []
    for name, v in result["cases"].items():
        if "skipped" in v:
            continue
        if v["slower"]:
            out.append(f"{name}: HEAD takes {v['head_vs_base']:.2f}x BASE's time (noise {v['noise']:.0%})")
        if v["larger"]:
            out.append(f"{name}: HEAD peaks at {v['peak_mb']['head']:.0f} MB, BASE at {v['peak_mb']['base']:.0f} MB")
        if v.get("output") and not v["output"]["same"]:
            ref = result.get("same_as", {}).get("ref", "BASE")
            out.append(f"{name}: HEAD's output differs from {ref}'s ({v['output']['head']['kind']})")
        if strict:
            out += [f"{name}: {t['what']} {t['got']:.2f}, target {t['target']}" for t in v["targets"] if not t["met"]]
    return out


# --------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------


def _short(ref: Result) -> str:
    return ref["commit"][:7] if ref["commit"] != "working tree" else "working tree"


def _target_text(v: Result) -> str:
    parts = []
    for t in v["targets"]:
        unit = "x" if "/" in t["what"] else " MB"
        op = "<" if unit == " MB" else "≤"
        mark = "met" if t["met"] else "**not met**"
        parts.append(f"{t['what']} {op} {t['target']:g}{unit}: {t['got']:.2f}{unit.strip()} {mark}")
    return "; ".join(parts) or "none"


def render(result: Result) -> str:
    """The results table (Markdown) of one harness run, with its commits, machine and load."""
    b, h = _short(result["base"]), _short(result["head"])
    same = result.get("same_as", result["base"])
    m = result["machine"]
    lines = [
        f"Measured by `benchmarks/compare.py` from {result['started']} to {result['finished']}: "
        f"BASE `{b}` against HEAD `{h}`, {result['rounds']} rounds, on {m['cpus']} CPUs ({m['cpu']}), "
        f"{m['memory_gb']} GB, {m['system']}, Python {m['python']}, {m['gdal']}; load average "
        f"{result['load']['before'][0]} before and {result['load']['after'][0]} after.",
        "",
        f"| case | baseline | baseline s | {b} s | {h} s | {b} / baseline | {h} / baseline "
        f"| {h} / {b} (noise) | peak MB baseline / {b} / {h} | same output as {_short(same)} | targets (HEAD) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for name, v in result["cases"].items():
        if "skipped" in v:
            lines.append(f"| {name} | skipped: {v['skipped']} | | | | | | | | | |")
            continue
        s, p = v["seconds"], v["peak_mb"]
        change = f"{v['head_vs_base']:.2f}x (±{v['noise']:.0%})"
        if v["slower"]:
            change += " **slower**"
        elif v["faster"]:
            change += " faster"
        same = "n/a" if not v.get("output") else ("yes" if v["output"]["same"] else "**no**")
        lines.append(
            f"| {name} | {v['baseline_name']} | {s['baseline']:.2f} | {s['base']:.2f} | {s['head']:.2f} "
            f"| {v['base_vs_baseline']:.2f}x | {v['head_vs_baseline']:.2f}x | {change} "
            f"| {p['baseline']:.0f} / {p['base']:.0f} / {p['head']:.0f} | {same} | {_target_text(v)} |"
        )
    for w in result.get("warnings", []):
        lines += ["", f"Note: {w}."]
    return "\n".join(lines) + "\n"


def write_docs(result: Result, page: Path) -> None:
    """Put the table between the page's markers (the rest of the page is left as it is)."""
    text = page.read_text(encoding="utf-8")
    start, end = text.find(MARK_START), text.find(MARK_END)
    if start < 0 or end < start:
        msg = f"{page} has no markers; add the two lines\n{MARK_START}\n{MARK_END}"
        raise SystemExit(msg)
    new = text[: start + len(MARK_START)] + "\n\n" + render(result) + "\n" + text[end:]
    page.write_text(new, encoding="utf-8")


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The two sub-commands: ``run`` (the default) and ``render``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = p.add_subparsers(dest="command")
    r = sub.add_parser("run", help="measure BASE against HEAD")
    r.add_argument("--base", required=True, help="the commit to compare against (any git revision)")
    r.add_argument("--head", default="HEAD", help="the commit measured (default HEAD; '.' is the working tree)")
    r.add_argument(
        "--cases", default=",".join(DEFAULT_CASES), help=f"comma-separated (default: all of {', '.join(CASES)})"
    )
    r.add_argument("--same-as", default=None, help="the commit whose rows and cells HEAD must write (default BASE)")
    r.add_argument("--rounds", type=int, default=3, help="rounds of baseline, BASE and HEAD (default 3)")
    r.add_argument("--data-dir", type=Path, default=ROOT / "out" / "bench-data", help="generated inputs, kept")
    r.add_argument("--work-dir", type=Path, default=None, help="outputs and unpacked commits (default: temporary)")
    r.add_argument("--min-noise", type=float, default=0.05, help="the least noise assumed (default 0.05 = 5 %%)")
    r.add_argument("--json", type=Path, default=ROOT / "out" / "bench-compare.json", help="where the figures go")
    r.add_argument("--strict", action="store_true", help="also fail when a target is not met")
    d = sub.add_parser("render", help="print (or write into a page) the table of a run's JSON")
    d.add_argument("result", type=Path)
    d.add_argument("--docs", type=Path, default=None, help="write the table between this page's markers")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison or render a table; see the module docstring for the exit status."""
    args = parse_args(argv)
    if args.command == "render":
        result = json.loads(args.result.read_text(encoding="utf-8"))
        if args.docs:
            write_docs(result, args.docs)
        else:
            sys.stdout.write(render(result))
        return 0
    if args.command != "run":
        parse_args(["--help"])
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown or args.rounds < 2:
        print(f"unknown case(s) {unknown}; known: {', '.join(CASES)}" if unknown else "--rounds: at least 2")
        return 2
    args.data_dir = args.data_dir.resolve()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        work = args.work_dir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        try:
            result = compare(
                args.base, args.head, cases, args.rounds, args.data_dir, work, args.min_noise, args.same_as
            )
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            print(f"bench-compare: {exc}", file=sys.stderr)
            return 2
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(render(result))
    bad = failures(result, args.strict)
    for line in bad:
        print(f"FAIL {line}")
    print(f"figures: {args.json}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
