"""Every command of every tutorial runs, as a reader would run it (issue 36).

Each page of ``docs/tutorials/`` (its index aside) is run in a new, empty folder holding links
to the clone's ``examples/`` and ``layers/``, as the tutorials' index tells the reader to set it
up. Its fenced blocks run in page order:

- ``sh`` blocks in bash (``set -eo pipefail``): a variable set in one block (``L=...``) is seen
  by the next, as in the reader's shell;
- ``python`` blocks in one namespace per page, in that folder, as in a Python session.

A block that fails fails the test with the page and the line of the block. Blocks fenced as
``text`` are shown, not run. The web administrator's tutorial listens on port 8765; here it gets
a free port instead, so two runs never collide.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import require_tool

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "docs" / "tutorials"
PAGES = sorted(p for p in TUTORIALS.glob("*.md") if p.name != "index.md")
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```\s*$", re.S | re.M)
TUTORIAL_PORT = "8765"


def blocks(page: Path) -> list[tuple[str, int, str]]:
    """The page's runnable blocks: (language, line of the fence, code), in page order."""
    text = page.read_text(encoding="utf-8")
    return [
        (m.group(1), text.count("\n", 0, m.start()) + 1, m.group(2))
        for m in FENCE.finditer(text)
        if m.group(1) in ("sh", "python")
    ]


def _free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def test_every_tutorial_is_in_the_index_and_has_commands() -> None:
    index = (TUTORIALS / "index.md").read_text(encoding="utf-8")
    assert [p.stem for p in PAGES] == sorted(["analyst", "reviewer", "clerk", "web-admin", "developer"])
    for page in PAGES:
        assert f"\n{page.stem}\n" in index, f"{page.name} is not in the tutorials' toctree"
        kinds = {lang for lang, _, _ in blocks(page)}
        assert "sh" in kinds or "python" in kinds, page.name


def test_a_failing_block_is_reported_with_its_page_and_line(tmp_path: Path) -> None:
    """The runner itself: a command that fails is a failure, not a skipped line."""
    page = tmp_path / "broken.md"
    page.write_text("# Broken\n\n```sh\ntrue\nfalse\necho after\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match=r"broken\.md, the block at line 3"):
        run_page(page, tmp_path / "work")


def run_page(page: Path, work: Path) -> None:
    """Run a tutorial page's blocks in ``work`` (a new folder with the shipped data linked in)."""
    work.mkdir()
    for name in ("examples", "layers"):
        (work / name).symlink_to(ROOT / name)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("ESC_GIS_TEST_PG_URL", None)
    port = _free_port()
    state = work / ".tutorial_shell_state"
    namespace: dict[str, object] = {"__name__": "__tutorial__"}
    groups: list[int] = []
    try:
        for lang, line, code in blocks(page):
            code = code.replace(TUTORIAL_PORT, port)
            where = f"{page.name}, the block at line {line}"
            if lang == "sh":
                # set -a exports every assignment, so export -p carries the block's variables to the next.
                script = f"set -a; [ -f {state} ] && . {state}; set -eo pipefail\n{code}\nexport -p > {state}\n"
                out = work / f".block_{line}.log"
                with out.open("w") as log:
                    # Files, not pipes: a server started in the background must not hold the test's pipe.
                    proc = subprocess.Popen(
                        ["bash", "--noprofile", "--norc", "-c", script],
                        cwd=work,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                    groups.append(proc.pid)
                    rc = proc.wait(timeout=600)
                text = out.read_text(errors="replace")
                assert rc == 0, f"{where} failed (exit {rc}):\n{code}\n--- output ---\n{text[-4000:]}"
            else:
                buf = io.StringIO()
                cwd = os.getcwd()
                os.chdir(work)
                try:
                    with contextlib.redirect_stdout(buf):
                        exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
                except Exception as err:
                    raise AssertionError(f"{where} failed: {type(err).__name__}: {err}\n{code}") from err
                finally:
                    os.chdir(cwd)
    finally:
        # Whatever a page left running (a server whose block failed) goes with its shell's group.
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGTERM)


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_tutorial_runs_from_an_empty_folder(page: Path, tmp_path: Path) -> None:
    if page.stem == "web-admin":
        require_tool("curl", "curl")
    run_page(page, tmp_path / "work")
