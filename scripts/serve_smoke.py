"""Start ``esc-gis serve`` on the demo registry, read the permits and one screening through it (for `make demo`).

Usage: ``.venv/bin/python scripts/serve_smoke.py [--registry out/demo_permits.gpkg] [--out-dir out]``

The service listens on a free port of 127.0.0.1 for a few seconds, with no base map (nothing
leaves the machine). The script GETs the ``permits`` collection as GeoJSON and prints how many
permits it holds and their statuses, POSTs one screening of a made-up site inside the Village
and prints the decision and its finding codes, saves both answers
(``demo_service_permits.geojson``, ``demo_service_screening.json``), and stops the service
(SIGINT, then kill). Any failure exits 1 with a message that says what went wrong.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: A made-up site of about 0.5 acre inside the Village, in lon/lat (GeoJSON's CRS): what a resident
#: would draw on the public page.
SITE = {
    "type": "Polygon",
    "coordinates": [
        [[-88.7219, 44.0997], [-88.7213, 44.0997], [-88.7213, 44.1001], [-88.7219, 44.1001], [-88.7219, 44.0997]]
    ],
}
READY_S = 60.0
STOP_S = 15.0


class SmokeError(RuntimeError):
    """What went wrong, in words for the demo's log."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _esc_gis() -> str:
    beside = Path(sys.executable).parent / "esc-gis"
    found = str(beside) if beside.exists() else shutil.which("esc-gis")
    if found is None:
        raise SmokeError("the esc-gis command was not found (run `make install`)")
    return found


def _request(url: str, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data is not None else {}
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def _json(url: str, body: dict[str, Any] | None = None) -> tuple[Any, bytes]:
    try:
        status, raw = _request(url, body)
    except OSError as exc:  # refused, reset or timed out
        raise SmokeError(f"{'POST' if body else 'GET'} {url} failed: {exc}") from None
    if status != 200:
        raise SmokeError(f"{'POST' if body else 'GET'} {url} answered {status}: {raw[:500].decode(errors='replace')}")
    try:
        return json.loads(raw), raw
    except ValueError:
        raise SmokeError(f"{url} did not answer JSON: {raw[:200]!r}") from None


def _wait_ready(proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
    deadline = time.monotonic() + READY_S
    while True:
        if proc.poll() is not None:
            raise SmokeError(f"esc-gis serve exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            if _request(f"{base}/health")[0] == 200:
                return
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise SmokeError(f"esc-gis serve did not answer {base}/health within {READY_S:.0f} s")
        time.sleep(0.3)


def _own_group_with_sigint() -> None:
    """In the child: a process group of its own (so the screening's workers can be swept with it), and
    SIGINT's default action back (a shell's background job starts with SIGINT ignored, and then
    Python never installs its Ctrl+C handler)."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT (the service stops its worker pool and removes its temporary folder), then kill."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            print(f"esc-gis serve did not stop within {STOP_S:.0f} s of SIGINT: killed", file=sys.stderr)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the server if still there, and any worker it left behind
    proc.wait()


def smoke(registry: Path, layers: Path, out_dir: Path) -> None:
    """Serve ``registry``, read the permits and one screening, save both answers in ``out_dir``.

    Raises
    ------
    SmokeError
        If the service does not start, a request fails, or an answer is not what it should be.
    """
    if not registry.is_file():
        raise SmokeError(f"no registry at {registry} (the demo makes it first: `make demo`)")
    out_dir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [_esc_gis(), "serve", "--registry", str(registry), "--layers", str(layers), "--port", str(port)]
    cmd += ["--basemap", "none"]
    with tempfile.TemporaryDirectory(prefix="esc_gis_smoke_") as tmp:
        log = Path(tmp) / "serve.log"
        with log.open("wb") as log_fh:
            proc = subprocess.Popen(cmd, stdout=log_fh, stderr=subprocess.STDOUT, preexec_fn=_own_group_with_sigint)
            try:
                t0 = time.monotonic()
                _wait_ready(proc, base, log)
                print(f"esc-gis serve answered {base}/health after {time.monotonic() - t0:.1f} s")

                permits, raw = _json(f"{base}/ogc/collections/permits/items?f=json&limit=1000")
                features = permits.get("features")
                if permits.get("type") != "FeatureCollection" or not isinstance(features, list):
                    raise SmokeError("the permits collection is not a GeoJSON FeatureCollection")
                statuses = Counter(str(f.get("properties", {}).get("status")) for f in features)
                shown = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
                print(f"GET /ogc/collections/permits/items: {len(features)} permits ({shown})")
                (out_dir / "demo_service_permits.geojson").write_bytes(raw)

                answer, raw = _json(f"{base}/ogc/processes/screen/execution", {"inputs": {"site": SITE}})
                if answer.get("permit") not in ("required", "not_required", "not_applicable"):
                    raise SmokeError(f"the screening answered no decision: {raw[:300]!r}")
                codes = ", ".join(f["code"] for f in answer.get("findings", []))
                print(f"POST /ogc/processes/screen/execution (a made-up site): permit {answer['permit']}; {codes}")
                (out_dir / "demo_service_screening.json").write_bytes(raw)
            finally:
                _stop(proc)
    print(f"wrote {out_dir / 'demo_service_permits.geojson'} and {out_dir / 'demo_service_screening.json'}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--registry", type=Path, default=ROOT / "out" / "demo_permits.gpkg")
    p.add_argument("--layers", type=Path, default=ROOT / "layers" / "winneconne-demo" / "layers.toml")
    p.add_argument("--out-dir", type=Path, default=ROOT / "out")
    args = p.parse_args(argv)
    try:
        smoke(args.registry, args.layers, args.out_dir)
    except SmokeError as exc:
        print(f"serve_smoke: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
