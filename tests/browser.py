"""Real headless Chromium (Debian's) driven by Playwright, with the CDN served from npm packages."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright import sync_api

from .conftest import require_tool

# One definition of the flags and the local Leaflet, shared with the demo's screenshots and
# the map benchmark (scripts/chromium.py, standard library only).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from chromium import ARGS, LEAFLET, leaflet_file
from chromium import ROOT as ROOT  # re-exported: test_maps reads files of the repository


def require_leaflet() -> Path:
    """The npm Leaflet package; skip when missing, but fail in CI (CI=true), which runs npm ci."""
    if not (LEAFLET / "leaflet.js").is_file():
        msg = "node_modules/leaflet is not installed (run npm ci); .ci/run installs it"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{msg}, and CI=true: a missing part is a failure here.")
        pytest.skip(msg)
    return LEAFLET


@contextmanager
def chromium_page(*, offline: bool = False) -> Iterator[tuple[object, list[str], list[str]]]:
    """A page in headless Chromium; yields (page, console errors, requested URLs).

    Leaflet's CDN URLs are answered from node_modules; tile servers are refused, as on a
    machine whose basemap cannot load. With ``offline``, every request but the page's own
    file is refused.
    """
    exe = require_tool("chromium", "chromium")
    require_leaflet()
    errors: list[str] = []
    requested: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 750})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
        page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))

        def route(r: object) -> None:
            url = r.request.url  # type: ignore[attr-defined]
            requested.append(url)
            if url.startswith("file://"):
                r.continue_()  # type: ignore[attr-defined]
            elif not offline and (local := leaflet_file(url)) is not None:
                r.fulfill(path=str(local))  # type: ignore[attr-defined]
            else:
                r.abort()  # type: ignore[attr-defined]

        page.route("**/*", route)
        try:
            yield page, errors, requested
        finally:
            browser.close()


def real_errors(errors: list[str]) -> list[str]:
    """Console errors other than the refused tile requests (the basemap may not load)."""
    return [e for e in errors if "net::ERR_FAILED" not in e]


@contextmanager
def chromium_browser() -> Iterator[sync_api.Browser]:
    """Debian's Chromium, headless through Playwright, for a module of page tests (skips without it)."""
    exe = require_tool("chromium", "chromium")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=ARGS)
        yield b
        b.close()
