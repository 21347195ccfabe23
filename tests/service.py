"""The web service for the tests: a real ``esc-gis serve`` process on loopback, and registries to serve.

Each served registry holds made-up permits inside the Village (the demo layer set: the real
boundary and lake) and, planted where the public must never see it, personal data
(:data:`SECRETS`): a party's name, phone and e-mail, written reasons, a fee receipt and an
inspector's notes. The tests grep every response for them.
"""

from __future__ import annotations

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
from contextlib import contextmanager
from datetime import date, datetime, timezone
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import shapely

ROOT = Path(__file__).resolve().parents[1]
DEMO_LAYERS = ROOT / "layers" / "winneconne-demo" / "layers.toml"
CRS = "EPSG:7594"
#: Personal and office-only data planted in every served registry; no response may contain any.
SECRETS = (
    "Zebulon Qwertyhouse",
    "920-555-0147",
    "zebulon@private.example",
    "SECRET-REASON-4471",
    "RCPT-SECRET-8812",
    "INSPECTOR-NOTE-5521",
)
#: Columns the registry keeps of the first permit and the service does not publish: no answer may
#: hold them, and no filter, sort or CQL query may tell a right guess of them from a wrong one.
UNPUBLISHED = {"parcel_id": "PARCEL-UNPUB-3301", "legal_description": "LOT 7 UNPUBLISHED-6610"}
#: The address of the one application :func:`fill_registry` adds that is not yet decided.
PENDING_ADDRESS = "999 Pending Application Rd"
#: Inside the Village, in WISCRS Winnebago feet: a 150 x 100 ft square per permit, ten to a row
#: (boxes 0 to 149 lie inside the boundary: up to 149 permits and the undecided application).
ORIGIN = (746_250.0, 507_500.0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def esc_gis_exe() -> str:
    """The ``esc-gis`` script of the running interpreter's environment."""
    exe = Path(sys.executable).parent / "esc-gis"
    return str(exe) if exe.exists() else "esc-gis"


def get(url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None, method: str | None = None):
    """Return (status, headers, body bytes) without raising for HTTP errors."""
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def screen_body(site: dict, **inputs: object) -> bytes:
    return json.dumps({"inputs": {"site": site, **inputs}}).encode()


def post_screen(base: str, site: dict, **inputs: object):
    """POST a screening; return (status, headers, parsed JSON)."""
    status, headers, body = get(
        f"{base}/ogc/processes/screen/execution",
        data=screen_body(site, **inputs),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    return status, headers, json.loads(body)


@contextmanager
def served(
    registry: str,
    *args: str,
    layers: Path = DEMO_LAYERS,
    timeout_s: float = 90,
    env: dict[str, str] | None = None,
    stop: int = signal.SIGINT,
    logs: list[str] | None = None,
) -> Iterator[str]:
    """Run ``esc-gis serve`` on a free loopback port until the block ends; yield its base URL.

    ``env`` is added to its environment, ``stop`` is the signal that ends it, and its output
    (stdout and stderr) is appended to ``logs`` once it has ended.
    """
    port = free_port()
    cmd = [esc_gis_exe(), "serve", "--registry", registry, "--layers", str(layers), "--port", str(port)]
    cmd += ["--basemap", "none", *args]
    env = dict(os.environ, ESC_GIS_SERVE_WORKERS="2", **(env or {}))
    # Its output goes to a file: a pipe nobody reads would block the server once full (a fuzz run logs).
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"esc-gis serve exited {proc.returncode}:\n{log.read()}")
            try:
                if get(f"{base}/health")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("esc-gis serve did not answer within the time limit")
            time.sleep(0.3)
        yield base
    finally:
        proc.send_signal(stop)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if logs is not None:
            log.seek(0)
            logs.append(log.read())
        log.close()


def box(i: int) -> shapely.Polygon:
    x, y = ORIGIN[0] + 300 * (i % 10), ORIGIN[1] + 200 * (i // 10)
    return shapely.box(x, y, x + 150, y + 100)


def fill_registry(target: str, *, n: int = 5) -> list[str]:
    """Make a registry at ``target`` with ``n`` permits (the last under a stop-work order), one
    undecided application (:data:`PENDING_ADDRESS`) and the planted :data:`SECRETS`; return the permits' numbers."""
    from esc_gis.layers import load_layers
    from esc_gis.profile import load_profile
    from esc_gis.registry import Application, Party, init_registry, open_registry

    prof = load_profile()
    ls = load_layers(DEMO_LAYERS, profile=prof)
    init_registry(target, layers=ls)
    numbers = []
    with open_registry(target, layers=ls) as reg:
        for i in range(n):
            parties, unpublished = (), {}
            if i == 0:
                parties = (Party("landowner", SECRETS[0], phone=SECRETS[1], email=SECRETS[2]),)
                unpublished = UNPUBLISHED
            numbers.append(
                reg.add(
                    Application(
                        f"{100 + i} Example St",
                        date(2026, 11, 2),
                        box(i),
                        CRS,
                        parties=parties,
                        status="active",
                        issued_on=date(2026, 11, 3),
                        started_at=datetime(2026, 11, 9, 14, 0, tzinfo=timezone.utc),
                        **unpublished,
                    ),
                    who="clerk",
                )
            )
        reg.transition(numbers[-1], "stop_work", on=date(2026, 11, 20), reasons=SECRETS[3], who="clerk")
        # An application not yet decided: in the public view, never on the public map or service.
        reg.add(Application(PENDING_ADDRESS, date(2026, 11, 24), box(n), CRS), who="clerk")
    return numbers


def pg_schema(pg_url: str) -> str:
    """A fresh schema on the test server; the URL to it."""
    import psycopg

    schema = f"s_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        conn.execute(f"CREATE SCHEMA {schema}")
    return f"{pg_url}{'&' if '?' in pg_url else '?'}options={quote(f'-csearch_path={schema},public')}"


def as_login(url: str, user: str, password: str) -> str:
    parts = urlsplit(url)
    netloc = f"{quote(user)}:{quote(password)}@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


@contextmanager
def public_login(target: str, kind: str = "reader") -> Iterator[str]:
    """Make the registry's roles and a login in its ``kind`` role (reader by default); yield its URL; drop them after."""
    import psycopg

    from esc_gis.registry.store.roles import create_roles

    roles = create_roles(target)
    name = f"web_{uuid.uuid4().hex[:8]}"
    password = secrets.token_hex(12)
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                psycopg.sql.Identifier(name),
                psycopg.sql.Literal(password),
                psycopg.sql.Identifier(getattr(roles, kind)),
            )
        )
    try:
        yield as_login(target, name, password)
    finally:
        with psycopg.connect(target, autocommit=True) as conn:
            for role in (name, *roles.by_kind().values()):
                ident = psycopg.sql.Identifier(role)
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    conn.execute(psycopg.sql.SQL("DROP OWNED BY {}").format(ident))
                    conn.execute(psycopg.sql.SQL("DROP ROLE {}").format(ident))
