"""Benchmark the web service under load: N concurrent clients on the permits, the screening and a static file.

The script builds a registry of made-up permits inside the Village (GeoPackage, or PostGIS with
``--postgis``, served through a login in the reader role only), starts ``esc-gis serve`` on a
free port of 127.0.0.1, and runs locust headless against it, one scenario at a time:

- ``items``: GET /ogc/collections/permits/items?f=json&limit=100 (pygeoapi reads the public view);
- ``screen``: POST /ogc/processes/screen/execution, cycling through a few made-up sites;
- ``css``: the floor of the issue-35 targets: GET the public page's stylesheet from ``esc-gis serve``
  itself (the same process, guard and WSGI stack);
- ``static``: a second floor: GET a copy of ``items``' answer (the same bytes) from a static file
  served by waitress with the same number of threads as ``esc-gis serve``, so the floor is the
  cost of HTTP and the WSGI server on this machine, and a ratio is what pygeoapi and esc_gis add.

Each scenario stops by itself after ``--seconds`` or ``--max-requests``, whichever comes first.
Everything listens on 127.0.0.1 only.

Usage::

    .venv/bin/pip install -e '.[bench]'          # locust
    .venv/bin/python benchmarks/bench_serve.py [--users 20] [--seconds 30] [--json out/bench_serve.json]
    .venv/bin/python benchmarks/bench_serve.py --postgis postgresql://owner@host/db   # a fresh schema there
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, suppress
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import find_cli  # noqa: E402

DEMO_LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"
LOCUSTFILE = Path(__file__).resolve().parent / "_serve_locust.py"
ITEMS_PATH = "/ogc/collections/permits/items?f=json&limit=100"
SCREEN_PATH = "/ogc/processes/screen/execution"
STATIC_PATH = "/permits.json"
#: The measuring CRS of the Village's profile (WISCRS Winnebago, US survey feet).
CRS = "EPSG:7594"
#: The permits' grid starts here, inside the Village (the demo layer set's boundary).
ORIGIN_FT = (744_700.0, 503_200.0)
#: Made-up sites screened by ``screen``, in the same feet: (x, y, width, height), all inside the
#: Village: a 2,000 sq ft shed (no permit), a house on steep ground, a house, a lot by the creek
#: (protective area), a 2-acre subdivision phase (sediment standard).
SCREEN_SITES_FT = (
    (744_700.0, 503_200.0, 50.0, 40.0),
    (744_850.0, 503_300.0, 150.0, 100.0),
    (743_500.0, 503_500.0, 120.0, 80.0),
    (745_500.0, 504_500.0, 100.0, 100.0),
    (746_500.0, 505_500.0, 300.0, 290.0),
)
#: The page's stylesheet, served by esc-gis serve itself: the floor the issue-35 targets are ratios to.
CSS_PATH = "/static/esc/page.css"
SCENARIOS = ("items", "screen", "css", "static")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, data: bytes | None = None) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json"} if data is not None else {}
    req = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


# --- The registry: N permits inside the Village, most of them active --------------------------


def build_registry(target: str, layers: Path, n: int) -> None:
    """Make a registry at ``target`` holding ``n`` made-up permits on a grid inside the Village."""
    import shapely

    from esc_gis.layers import load_layers
    from esc_gis.profile import load_profile
    from esc_gis.registry import Application, Party, init_registry, open_registry

    prof = load_profile()
    ls = load_layers(layers, profile=prof)
    init_registry(target, layers=ls)
    x0, y0, x1, y1 = ls.jurisdiction.bounds
    sites = []
    # A 200 ft grid over the Village; keep the squares wholly inside it, as many as asked.
    for y in range(int(y0), int(y1), 200):
        for x in range(int(x0), int(x1), 200):
            site = shapely.box(x, y, x + 150.0, y + 100.0)
            if ls.jurisdiction.contains(site):
                sites.append(site)
            if len(sites) == n:
                break
        if len(sites) == n:
            break
    if len(sites) < n:
        sys.exit(f"only {len(sites)} sites fit in the Village; ask for fewer permits")
    # Most permits active, the rest spread over the other states the public map shows.
    statuses = ("active",) * 6 + ("under_review", "extended", "stop_work", "application_received")
    apps = []
    for i, site in enumerate(sites):
        status = statuses[i % len(statuses)]
        issued = status in ("active", "extended", "stop_work")
        apps.append(
            Application(
                f"{100 + i} Bench St",
                date(2026, 9, 1),
                site,
                CRS,
                parties=(Party("landowner", f"Owner {i}", phone="920-555-0100", email=f"o{i}@example.com"),),
                status=status,
                issued_on=date(2026, 9, 15) if issued else None,
                started_at=datetime(2026, 9, 20, 14, 0, tzinfo=timezone.utc) if issued else None,
            )
        )
    with open_registry(target, layers=ls) as reg:
        reg.add_many(apps, who="bench")


def screen_sites() -> list[dict[str, Any]]:
    """The made-up sites of ``screen`` as GeoJSON polygons in lon/lat (what a browser sends)."""
    import shapely
    from pyproj import Transformer

    to_lonlat = Transformer.from_crs(CRS, "OGC:CRS84", always_xy=True)
    out = []
    for x, y, w, h in SCREEN_SITES_FT:
        ring = [to_lonlat.transform(px, py) for px, py in shapely.box(x, y, x + w, y + h).exterior.coords]
        out.append({"type": "Polygon", "coordinates": [[[round(a, 7), round(b, 7)] for a, b in ring]]})
    return out


@contextmanager
def postgis_registry(url: str, layers: Path, n: int) -> Iterator[tuple[str, str]]:
    """A fresh schema at ``url`` holding the registry, its roles and a login in the reader role only.

    Yields the login's URL without its password (what a Village gives ``esc-gis serve``) and the
    password; drops it all afterwards.
    """
    import psycopg
    from psycopg import sql

    from esc_gis.registry.store.roles import create_roles

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    sep = "&" if "?" in url else "?"
    target = f"{url}{sep}options={quote(f'-csearch_path={schema},public')}"
    login = f"web_{uuid.uuid4().hex[:8]}"
    password = secrets.token_hex(12)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    roles = None
    try:
        build_registry(target, layers, n)
        roles = create_roles(target)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                    sql.Identifier(login), sql.Literal(password), sql.Identifier(roles.reader)
                )
            )
        parts = urlsplit(target)
        netloc = f"{quote(login)}@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        yield urlunsplit(parts._replace(netloc=netloc)), password
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            for role in (login, *(roles.by_kind().values() if roles else ())):
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                    conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


# --- The servers ------------------------------------------------------------------------------


def _own_group_with_sigint() -> None:
    """In a server child: its own process group (swept at the end), and SIGINT's default action back
    (a shell's background job starts with SIGINT ignored, and Python then installs no Ctrl+C handler)."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def running(cmd: list[str], health_url: str, log: Path, *, env: dict[str, str] | None = None) -> Iterator[int]:
    """Run ``cmd`` until the block ends (SIGINT, then kill its group); yield its pid once ``health_url`` answers."""
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, preexec_fn=_own_group_with_sigint)
        try:
            deadline = time.monotonic() + 120
            while True:
                if proc.poll() is not None:
                    sys.exit(f"{cmd[0]} exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
                with suppress(OSError):
                    if _get(health_url)[0] == 200:
                        break
                if time.monotonic() > deadline:
                    sys.exit(f"{health_url} did not answer within 120 s")
                time.sleep(0.3)
            yield proc.pid
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                with suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=20)
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # the server if still there, and any worker left behind
            proc.wait()


def static_main(folder: str, port: str, threads: str) -> int:
    """``bench_serve.py _static FOLDER PORT THREADS``: serve FOLDER's files with waitress on 127.0.0.1."""
    import waitress

    root = Path(folder).resolve()

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        path = (root / environ.get("PATH_INFO", "/").lstrip("/")).resolve()
        if path.parent != root or not path.is_file():
            start_response("404 Not Found", [("Content-Length", "0")])
            return [b""]
        fh = path.open("rb")  # read from disk (the page cache) on every request, as a static server does
        size = path.stat().st_size
        start_response("200 OK", [("Content-Type", "application/geo+json"), ("Content-Length", str(size))])
        return environ["wsgi.file_wrapper"](fh, 65536)

    waitress.serve(app, host="127.0.0.1", port=int(port), threads=int(threads), ident="static", _quiet=True)
    return 0


# --- Measuring ------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its living descendants (the screening's worker processes)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parent[int(stat.parent.name)] = int(fields[1])
            cpu[int(stat.parent.name)] = (int(fields[11]) + int(fields[12])) / tick
    tree, frontier = {pid}, [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p and c not in tree]
        tree.update(kids)
        frontier.extend(kids)
    return sum(cpu.get(p, 0.0) for p in tree)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (linear interpolation, as numpy's default)."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def run_scenario(
    name: str, base: str, path: str, *, args: argparse.Namespace, tmp: Path, server_pid: int, expect_bytes: int = 0
) -> dict[str, Any]:
    """Run one locust scenario headless; return its figures."""
    locust = Path(sys.executable).parent / "locust"
    out = tmp / f"{name}.json"
    out.unlink(missing_ok=True)
    env = dict(
        os.environ,
        BENCH_SCENARIO=name,
        BENCH_PATH=path,
        BENCH_BYTES=str(expect_bytes),
        BENCH_SITES=str(tmp / "sites.json"),
        BENCH_MAX_REQUESTS=str(args.max_requests),
        BENCH_OUT=str(out),
    )
    cmd = [str(locust), "-f", str(LOCUSTFILE), "--headless", "--host", base, "--users", str(args.users)]
    cmd += ["--spawn-rate", str(args.spawn_rate), "--run-time", f"{args.seconds}s", "--only-summary"]
    cmd += ["--loglevel", "WARNING", "--stop-timeout", "5"]
    load = os.getloadavg()[0]
    cpu0 = cpu_seconds(server_pid)
    t0 = time.perf_counter()
    with (tmp / f"{name}.locust.log").open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            _, _, usage = os.wait4(proc.pid, 0)
        except KeyboardInterrupt:
            proc.kill()
            raise
        proc.returncode = 0  # reaped by wait4; locust exits 1 whenever a request failed: read the figures instead
    wall = time.perf_counter() - t0
    server_cpu = cpu_seconds(server_pid) - cpu0
    if not out.is_file():
        sys.exit(f"locust wrote no figures for {name}:\n{(tmp / f'{name}.locust.log').read_text(errors='replace')}")
    raw = json.loads(out.read_text(encoding="utf-8"))
    times = raw["times_ms"]
    errors = sum(raw["errors"].values())
    requests = len(times) + errors
    seconds = raw["seconds"] or float("nan")
    return {
        "scenario": name,
        "path": path,
        "requests": requests,
        "seconds": round(seconds, 2),
        "rps": requests / seconds,
        "p50_ms": percentile(times, 50),
        "p95_ms": percentile(times, 95),
        "p99_ms": percentile(times, 99),
        "max_ms": max(times, default=float("nan")),
        "errors": errors,
        "error_kinds": raw["errors"],
        "server_cpu_ms_per_request": 1000.0 * server_cpu / max(1, raw["all_requests"]),
        "client_cpu_s": usage.ru_utime + usage.ru_stime,
        "wall_s": wall,
        "load_avg_1min_before": load,
    }


def _warm_up(base: str, static_base: str, sites: list[dict[str, Any]]) -> tuple[int, float]:
    """A few requests of each scenario, so no measurement pays for a first import; return the features
    and the seconds of the first screening after start (the service warms its workers before it
    listens: issue 47 asks that one within 2x the screening's steady p95)."""
    status, body = _get(base + ITEMS_PATH)
    if status != 200:
        sys.exit(f"GET {ITEMS_PATH} answered {status}: {body[:300]!r}")
    features = len(json.loads(body)["features"])
    for _ in range(3):
        _get(base + ITEMS_PATH)
        _get(static_base + STATIC_PATH)
    first_s = float("nan")
    for i, site in enumerate(sites):
        t0 = time.perf_counter()
        status, answer = _get(base + SCREEN_PATH, json.dumps({"inputs": {"site": site}}).encode())
        if i == 0:
            first_s = time.perf_counter() - t0
        if status != 200:  # measured all the same: the scenario counts it as an error
            print(
                f"warning: site {i} answered {status} after {time.perf_counter() - t0:.1f} s: {answer[:200]!r}",
                file=sys.stderr,
            )
    return features, first_s


def _commit() -> str:
    with suppress(OSError, subprocess.CalledProcessError):
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "src"], capture_output=True, text=True)
        return sha.stdout.strip() + (" (src/ modified)" if dirty.stdout.strip() else "")
    return "unknown"


LABEL = {
    "items": "(a) permits, 100 items",
    "screen": "(b) screen process",
    "css": "(c) the page's stylesheet, same process (floor)",
    "static": "(d) items' bytes from a bare waitress",
}


def measure(args: argparse.Namespace, scenarios: list[str], cli: str) -> dict[str, Any]:
    """Build the registry, start both servers, run the scenarios; return every figure."""
    with tempfile.TemporaryDirectory(prefix="bench_serve_") as tmp_name:
        tmp = Path(tmp_name)
        sites = screen_sites()
        (tmp / "sites.json").write_text(json.dumps(sites), encoding="utf-8")
        t0 = time.perf_counter()
        if args.postgis:
            registry_cm: Any = postgis_registry(args.postgis, args.layers, args.permits)
            backend = "PostGIS (a login in the reader role)"
        else:
            build_registry(str(tmp / "permits.gpkg"), args.layers, args.permits)
            registry_cm = nullcontext(None)  # nothing to clean up: the folder goes
            backend = "GeoPackage"
        with registry_cm as pg_login:
            registry, serve_env = str(tmp / "permits.gpkg"), None
            if pg_login:
                # As the README tells a Village: the password in PGPASSWORD, off the command line.
                registry, password = pg_login
                serve_env = dict(os.environ, PGPASSWORD=password)
            build_s = time.perf_counter() - t0
            port, static_port = _free_port(), _free_port()
            base, static_base = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{static_port}"
            serve_cmd = [cli, "serve", "--registry", registry, "--layers", str(args.layers), "--port", str(port)]
            serve_cmd += ["--basemap", "none", "--threads", str(args.threads)]
            static_dir = tmp / "static"
            static_dir.mkdir()
            static_cmd = [sys.executable, str(Path(__file__).resolve()), "_static", str(static_dir)]
            static_cmd += [str(static_port), str(args.threads)]
            with running(serve_cmd, f"{base}/health", tmp / "serve.log", env=serve_env) as serve_pid:
                status, body = _get(base + ITEMS_PATH)
                if status != 200:
                    sys.exit(f"GET {ITEMS_PATH} answered {status}: {body[:300]!r}")
                (static_dir / STATIC_PATH.lstrip("/")).write_bytes(body)
                with running(static_cmd, static_base + STATIC_PATH, tmp / "static.log") as static_pid:
                    features, first_screen_s = _warm_up(base, static_base, sites)
                    targets = {
                        "items": (base, ITEMS_PATH, serve_pid),
                        "screen": (base, SCREEN_PATH, serve_pid),
                        "css": (base, CSS_PATH, serve_pid),
                        "static": (static_base, STATIC_PATH, static_pid),
                    }
                    css_bytes = len(_get(base + CSS_PATH)[1])
                    results = []
                    for name in scenarios:
                        target, path, pid = targets[name]
                        print(f"running {name}: {args.users} users, {args.seconds} s ...", file=sys.stderr, flush=True)
                        expect = {"screen": 0, "css": css_bytes}.get(name, len(body))
                        results.append(
                            run_scenario(name, target, path, args=args, tmp=tmp, server_pid=pid, expect_bytes=expect)
                        )
    by = {r["scenario"]: r for r in results}
    ratios: dict[str, dict[str, float]] = {}
    # The floor is a static file served by the same process in the same run (issue 35): the page's
    # stylesheet; without that scenario, the bare waitress serving the items' bytes.
    floor_name = "css" if "css" in by else "static" if "static" in by else None
    if floor_name is not None:
        floor = by[floor_name]
        for name in ("items", "screen"):
            if name in by:
                ratios[name] = {q: by[name][f"{q}_ms"] / floor[f"{q}_ms"] for q in ("p50", "p95") if floor[f"{q}_ms"]}
    return {
        "backend": backend,
        "permits": args.permits,
        "build_s": build_s,
        "features": features,
        "first_screen_ms": 1000 * first_screen_s,
        "items_bytes": len(body),
        "users": args.users,
        "spawn_rate": args.spawn_rate,
        "seconds": args.seconds,
        "max_requests": args.max_requests,
        "threads": args.threads,
        "cpus": os.cpu_count(),
        "commit": _commit(),
        "results": results,
        "ratios_to_floor": ratios,
        "floor": floor_name,
    }


def report(fig: dict[str, Any]) -> None:
    """Print the figures as a markdown table, and the ratios to the floor."""
    print(
        f"\n{fig['backend']} registry of {fig['permits']} permits (built in {fig['build_s']:.1f} s); the collection's "
        f"answer: {fig['features']} features, {fig['items_bytes']:,} bytes. {fig['users']} users (spawn rate "
        f"{fig['spawn_rate']:g}/s), no think time, {fig['seconds']} s or {fig['max_requests']:,} requests per "
        f"scenario; esc-gis serve and the static server: waitress, {fig['threads']} threads; {fig['cpus']} CPUs; "
        f"esc_gis {fig['commit']}.\n"
    )
    print(
        "| scenario | requests | rps | p50 ms | p95 ms | p99 ms | errors | server CPU ms/req | locust CPU "
        "| load avg before |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in fig["results"]:
        print(
            f"| {LABEL[r['scenario']]} | {r['requests']:,} | {r['rps']:.1f} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} "
            f"| {r['p99_ms']:.0f} | {r['errors']} | {r['server_cpu_ms_per_request']:.1f} "
            f"| {100 * r['client_cpu_s'] / r['wall_s']:.0f} % | {r['load_avg_1min_before']:.2f} |"
        )
    print()
    for name, q in fig["ratios_to_floor"].items():
        p50, p95 = q.get("p50", float("nan")), q.get("p95", float("nan"))
        print(f"{LABEL[name]} / {LABEL[fig['floor']]}: p50 {p50:.1f}x, p95 {p95:.1f}x")
    steady = next((r for r in fig["results"] if r["scenario"] == "screen"), None)
    if steady is not None and steady["p95_ms"]:
        first = fig["first_screen_ms"]
        print(
            f"the first screening after start: {first:.0f} ms, {first / steady['p95_ms']:.1f}x the screening's "
            f"p95 under load (target: within 2x)"
        )
    for r in fig["results"]:
        if r["errors"]:
            print(f"errors in {r['scenario']}: {r['error_kinds']}")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_static":
        return static_main(*sys.argv[2:5])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--permits", type=int, default=200, help="permits in the registry (default 200)")
    p.add_argument("--users", type=int, default=20, help="concurrent clients (default 20)")
    p.add_argument("--spawn-rate", type=float, default=20.0, help="clients started per second (default 20)")
    p.add_argument("--seconds", type=int, default=30, help="each scenario's length (default 30)")
    p.add_argument("--max-requests", type=int, default=100_000, help="each scenario stops after this many requests")
    p.add_argument("--threads", type=int, default=8, help="waitress threads of both servers (esc-gis serve's default)")
    p.add_argument("--layers", type=Path, default=DEMO_LAYERS, help="layer set (default: the demo's)")
    p.add_argument("--postgis", default=None, help="serve a registry in a fresh schema at this URL (an owner's login)")
    p.add_argument("--scenarios", default=",".join(SCENARIOS), help="which to run, in order (default all four)")
    p.add_argument("--json", type=Path, default=None, help="write every figure to this file")
    args = p.parse_args()
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    if bad := set(scenarios) - set(SCENARIOS):
        p.error(f"unknown scenario(s) {', '.join(sorted(bad))}; use {', '.join(SCENARIOS)}")
    if not (Path(sys.executable).parent / "locust").exists():
        sys.exit("locust is not installed here. Fix: .venv/bin/pip install -e '.[bench]'")
    cli = find_cli()
    if cli is None:
        sys.exit("esc-gis is not installed here. Fix: make install")
    fig = measure(args, scenarios, cli)
    report(fig)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(fig, indent=2), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
