"""The shipped nginx front (``deploy/nginx.conf``) checked and run for real (issue 35, item 6).

``nginx -t`` accepts the file as shipped (only its certificate paths point at a self-signed
certificate made here), and a real nginx with that configuration, on free loopback ports, puts
TLS in front of a real ``esc-gis serve``: a screening sent over HTTPS gets the service's answer,
the API's links name the public https address, and an oversized body is refused by nginx.
"""

from __future__ import annotations

import json
import re
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

from .conftest import require_tool
from .service import CRS, fill_registry, free_port, served

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "deploy" / "nginx.conf"
#: 100 x 100 ft inside the Village (tests/test_serve.py's INSIDE), as a browser sends it: 10,000 sq ft needs a permit.
SITE = json.loads(
    gpd.GeoSeries([shapely.box(744_700.0, 503_200.0, 744_800.0, 503_300.0)], crs=CRS).to_crs("OGC:CRS84").to_json()
)["features"][0]["geometry"]


def _certificate(folder: Path) -> tuple[Path, Path]:
    openssl = require_tool("openssl", "openssl")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def _sub(text: str, pattern: str, repl: str, count: int) -> str:
    """Replace ``pattern`` exactly ``count`` times: the shipped file changing shape fails here, not silently."""
    out, n = re.subn(pattern, repl, text)
    assert n == count, f"{pattern!r} found {n} times in deploy/nginx.conf, expected {count}"
    return out


def _main_conf(folder: Path, site: str) -> Path:
    """nginx's main file around the site (deploy/nginx.conf is read inside the http block), all in ``folder``."""
    (folder / "site.conf").write_text(site)
    temp = "".join(
        f"{kind}_temp_path {folder / kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    main = folder / "nginx.conf"
    main.write_text(
        f"daemon off;\nmaster_process on;\nworker_processes 1;\npid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'} warn;\nevents {{ worker_connections 64; }}\n"
        f"http {{\naccess_log off;\n{temp}include {folder / 'site.conf'};\n}}\n"
    )
    return main


def _nginx_test(nginx: str, main: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [nginx, "-t", "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(main)],
        capture_output=True,
        text=True,
    )


def test_nginx_accepts_the_shipped_front(tmp_path: Path) -> None:
    nginx = require_tool("nginx", "nginx-light")
    cert, key = _certificate(tmp_path)
    site = SHIPPED.read_text()
    site = _sub(site, r"/etc/letsencrypt/live/permits\.example\.org/fullchain\.pem", str(cert), 1)
    site = _sub(site, r"/etc/letsencrypt/live/permits\.example\.org/privkey\.pem", str(key), 1)
    res = _nginx_test(nginx, _main_conf(tmp_path, site), tmp_path)
    assert res.returncode == 0, res.stderr
    assert "test is successful" in res.stderr


@pytest.fixture
def front(tmp_path: Path) -> Iterator[tuple[str, ssl.SSLContext]]:
    """esc-gis serve behind the shipped nginx front with TLS on 127.0.0.1; yields (https base, client context)."""
    nginx = require_tool("nginx", "nginx-light")
    cert, key = _certificate(tmp_path)
    http_port, https_port, app_port = free_port(), free_port(), free_port()
    reg = tmp_path / "permits.gpkg"
    fill_registry(str(reg), n=2)
    public = f"https://127.0.0.1:{https_port}"
    # The service's own port is chosen by served(): the proxy is pointed at it once it listens.
    with served(str(reg), "--public-url", public, "--max-body-bytes", "1000000") as base:
        app_port = int(base.rsplit(":", 1)[1])
        site = SHIPPED.read_text()
        site = _sub(site, r"/etc/letsencrypt/live/permits\.example\.org/fullchain\.pem", str(cert), 1)
        site = _sub(site, r"/etc/letsencrypt/live/permits\.example\.org/privkey\.pem", str(key), 1)
        site = _sub(site, r"server 127\.0\.0\.1:5000;", f"server 127.0.0.1:{app_port};", 1)
        site = _sub(site, r"listen 80;", f"listen 127.0.0.1:{http_port};", 1)
        site = _sub(site, r"listen 443 ssl;", f"listen 127.0.0.1:{https_port} ssl;", 1)
        site = _sub(site, r"\n\s*listen \[::\]:\d+( ssl)?;", "", 2)  # loopback IPv4 only here
        main = _main_conf(tmp_path, site)
        assert _nginx_test(nginx, main, tmp_path).returncode == 0
        proc = subprocess.Popen(
            [nginx, "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(main)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        ctx = ssl.create_default_context(cafile=str(cert))
        try:
            for _ in range(100):
                try:
                    urllib.request.urlopen(f"{public}/health", context=ctx, timeout=5).read()
                    break
                except OSError:
                    time.sleep(0.1)
            yield public, ctx
        finally:
            proc.terminate()
            proc.wait(timeout=15)


def _post(url: str, body: bytes, ctx: ssl.SSLContext) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=60) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_a_screening_goes_through_nginx_with_tls(front: tuple[str, ssl.SSLContext]) -> None:
    public, ctx = front
    status, body = _post(
        f"{public}/ogc/processes/screen/execution", json.dumps({"inputs": {"site": SITE}}).encode(), ctx
    )
    assert status == 200, body[:300]
    answer = json.loads(body)
    assert (answer["applicability"], answer["permit"]) == ("applies", "required")
    with urllib.request.urlopen(f"{public}/ogc?f=json", context=ctx, timeout=30) as resp:
        assert resp.headers["Strict-Transport-Security"] == "max-age=31536000"
        links = [link["href"] for link in json.loads(resp.read())["links"]]
    assert links and all(h.startswith(public) for h in links)  # --public-url: every link is the https address


def test_nginx_refuses_a_body_over_the_limit(front: tuple[str, ssl.SSLContext]) -> None:
    public, ctx = front
    status, _ = _post(f"{public}/ogc/processes/screen/execution", b"x" * 1_000_001, ctx)
    assert status == 413
