"""The deployment recipes in deploy/ agree with `esc-gis serve`: its options, its defaults, its port.

The README tells a Village to run the service from these files, so an option renamed or a
default changed must fail here, not on the Village's server. (Nothing is started: the files are
read as text; the service itself is tested in test_serve.py.)
"""

from __future__ import annotations

import json
import re
import shlex
from configparser import ConfigParser
from pathlib import Path

import pytest

from esc_gis.cli.serve import serve

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def _defaults() -> dict[str, object]:
    return {opt: p.default for p in serve.params for opt in p.opts}


def _options(tokens: list[str]) -> dict[str, str]:
    """``--name value`` pairs of a command line (every serve option used here takes a value)."""
    assert tokens[0].endswith("esc-gis") and tokens[1] == "serve", tokens[:2]
    out = {}
    it = iter(tokens[2:])
    for tok in it:
        assert tok.startswith("--"), f"{tok!r} is not an option"
        out[tok] = next(it)
    return out


@pytest.fixture(scope="module")
def unit() -> ConfigParser:
    cp = ConfigParser(interpolation=None, strict=False)
    cp.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    cp.read_string((DEPLOY / "esc-gis-serve.service").read_text(encoding="utf-8"))
    return cp


@pytest.fixture(scope="module")
def unit_options(unit: ConfigParser) -> dict[str, str]:
    exec_start = unit["Service"]["ExecStart"].replace("\\\n", " ").replace("\\", " ")
    return _options(shlex.split(exec_start))


@pytest.fixture(scope="module")
def container_options() -> dict[str, str]:
    text = (DEPLOY / "Containerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    # JSON form (hadolint's DL3025), a shell only to read the environment: ["/bin/sh", "-c", "exec esc-gis serve ..."].
    (cmd,) = re.findall(r"^CMD (\[.+\])$", text, flags=re.MULTILINE)
    shell, flag, line = json.loads(cmd)
    assert (shell, flag) == ("/bin/sh", "-c") and line.startswith("exec "), cmd
    return _options(shlex.split(line.removeprefix("exec ")))


@pytest.fixture(scope="module")
def nginx() -> str:
    return (DEPLOY / "nginx.conf").read_text(encoding="utf-8")


def test_unit_and_container_use_only_options_serve_has(unit_options, container_options):
    known = set(_defaults())
    assert set(unit_options) <= known, set(unit_options) - known
    assert set(container_options) <= known, set(container_options) - known
    assert {"--registry", "--public-url"} <= set(unit_options) & set(container_options)


def test_the_limits_written_out_are_the_defaults(unit_options, container_options, nginx):
    d = _defaults()
    for opt in ("--max-body-bytes", "--max-vertices", "--max-site-acres", "--timeout"):
        assert float(unit_options[opt]) == float(d[opt]), opt  # type: ignore[arg-type]
    assert int(container_options["--max-body-bytes"]) == d["--max-body-bytes"]
    (body,) = re.findall(r"client_max_body_size\s+(\d+);", nginx)
    assert int(body) == d["--max-body-bytes"] == int(unit_options["--max-body-bytes"])


def test_the_proxy_reaches_the_unit_on_loopback_and_waits_past_the_time_limit(unit_options, nginx):
    assert unit_options["--host"] == "127.0.0.1"
    (upstream,) = re.findall(r"^\s*server\s+([\d.]+:\d+);", nginx, flags=re.MULTILINE)
    assert upstream == f"127.0.0.1:{unit_options['--port']}"
    read_s = int(re.search(r"proxy_read_timeout\s+(\d+)s;", nginx).group(1))  # type: ignore[union-attr]
    assert read_s > float(unit_options["--timeout"])


def test_unit_runs_unprivileged_hardened_and_stops_with_sigint(unit):
    s = unit["Service"]
    assert s["User"] not in ("", "root") and s["Restart"] == "on-failure"
    assert s["KillSignal"] == "SIGINT"  # the service's own way out: its workers stopped, its folder removed
    assert s["NoNewPrivileges"] == "yes" and s["ProtectSystem"] == "strict" and s["PrivateTmp"] == "yes"
    assert s["EnvironmentFile"].startswith("/etc/")


def test_container_is_non_root_and_checks_health_on_its_port(container_options):
    text = (DEPLOY / "Containerfile").read_text(encoding="utf-8")
    users = re.findall(r"^USER\s+(\S+)", text, flags=re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    (exposed,) = re.findall(r"^EXPOSE\s+(\d+)", text, flags=re.MULTILINE)
    assert exposed == container_options["--port"]
    assert f"127.0.0.1:{exposed}/health" in text
    assert re.search(r"^STOPSIGNAL SIGINT$", text, flags=re.MULTILINE)
