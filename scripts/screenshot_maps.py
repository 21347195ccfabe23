"""Screenshot HTML maps to PNG beside them, in Debian's headless Chromium (for `make demo`).

Usage: ``.venv/bin/python scripts/screenshot_maps.py MAP.html [MAP.html ...]``

Leaflet's CDN is answered from node_modules and tile servers are refused, so the pictures
are the same with or without a network. Without chromium, Playwright or node_modules the
script says what is missing and exits 0: screenshots are a convenience of the demo.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from chromium import ARGS, LEAFLET, leaflet_file


def main(paths: list[str]) -> int:
    exe = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None  # type: ignore[assignment]
    needs = (
        ("chromium (apt-get install chromium)", exe),
        ("playwright (pip)", sync_playwright),
        ("node_modules/leaflet (npm ci)", (LEAFLET / "leaflet.js").is_file()),
    )
    missing = [what for what, ok in needs if not ok]
    if missing:
        print(f"screenshots skipped: {', '.join(missing)} not found")
        return 0

    def route(r):
        url = r.request.url
        if url.startswith("file://"):
            return r.continue_()
        local = leaflet_file(url)
        return r.fulfill(path=str(local)) if local else r.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 750})
        page.route("**/*", route)
        for name in paths:
            html = Path(name).resolve()
            page.goto(html.as_uri())
            page.wait_for_load_state("load")
            page.wait_for_timeout(300)
            png = html.with_suffix(".png")
            page.screenshot(path=str(png))
            print(f"wrote {png}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
