"""A body over the limit is a 413 every client receives, not a reset connection (issue 35, item 3).

``curl`` saw the 413; Python's ``urllib``, ``requests`` and Chromium's ``fetch`` saw
``ConnectionResetError``/``BrokenPipeError``, because waitress answered and closed before reading
the body. The service now reads and discards a bounded amount
(:data:`esc_gis.serve.server.DISCARD_BYTES`) so the answer arrives. A real ``esc-gis serve`` on
loopback, limited to 50,000 bytes, gets a 200,000-byte screening from each client.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from playwright import sync_api

from esc_gis.serve.server import DISCARD_BYTES, reading_limit

from .browser import ARGS
from .conftest import require_tool
from .service import fill_registry, served

LIMIT = 50_000
#: Four times the limit: a resident's large drawing, well within what is read and discarded.
BODY = json.dumps({"inputs": {"site": {"type": "Polygon", "coordinates": []}, "pad": "x" * 200_000}}).encode()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    registry = str(tmp_path_factory.mktemp("refusals") / "permits.gpkg")
    fill_registry(registry, n=1)
    with served(registry, "--max-body-bytes", str(LIMIT)) as url:
        yield url


def _screen_url(base: str) -> str:
    return f"{base}/ogc/processes/screen/execution"


def _is_413(status: int, body: bytes) -> None:
    assert status == 413
    answer = json.loads(body)
    assert answer["code"] == "PayloadTooLarge"
    assert f"{len(BODY):,} bytes" in answer["description"] and f"{LIMIT:,}" in answer["description"]


def test_urllib_receives_the_413(base: str) -> None:
    req = urllib.request.Request(
        _screen_url(base), data=BODY, headers={"Content-Type": "application/json"}, method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=60)
    _is_413(err.value.code, err.value.read())


def test_requests_receives_the_413_and_the_connection_serves_on(base: str) -> None:
    requests = pytest.importorskip("requests")
    with requests.Session() as s:
        r = s.post(_screen_url(base), data=BODY, headers={"Content-Type": "application/json"}, timeout=60)
        _is_413(r.status_code, r.content)
        # The body was read: the same kept-alive connection answers the next request.
        assert s.get(f"{base}/ogc?f=json", timeout=60).status_code == 200


def test_a_chunked_upload_is_refused_by_its_size_too(base: str) -> None:
    requests = pytest.importorskip("requests")
    pieces = (BODY[i : i + 8192] for i in range(0, len(BODY), 8192))  # a generator: sent chunked
    r = requests.post(_screen_url(base), data=pieces, headers={"Content-Type": "application/json"}, timeout=60)
    _is_413(r.status_code, r.content)


def test_chromiums_fetch_receives_the_413(base: str) -> None:
    exe = require_tool("chromium", "chromium")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{base}/")  # the public page, whose policy lets it fetch from its own origin
            got = page.evaluate(
                """async ([url, n]) => {
                    const body = JSON.stringify({inputs: {site: {type: "Polygon", coordinates: []},
                                                          pad: "x".repeat(n)}});
                    const r = await fetch(url, {method: "POST", body, headers: {"Content-Type": "application/json"}});
                    return [r.status, await r.text()];
                }""",
                [_screen_url(base), 200_000],
            )
        finally:
            browser.close()
    assert got[0] == 413 and json.loads(got[1])["code"] == "PayloadTooLarge"


def test_what_is_read_and_discarded_is_bounded() -> None:
    """waitress cuts a body at its limit or more (``>=``): one byte past the discard allowance."""
    assert reading_limit(LIMIT) == LIMIT + DISCARD_BYTES + 1
    assert DISCARD_BYTES == 16 * 1024 * 1024
