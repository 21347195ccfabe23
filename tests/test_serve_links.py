"""Links and queries on the permits collection (issue 35, item 4), on both back ends.

An item page's ``prev``/``next`` links lead only to permits the public map shows: the undecided
application beside them (in the public view, never served) is never named, not even by its id.
``datetime=`` filters by the day a permit was issued (``time_field``): every test permit was
issued on 2026-11-03 (tests/service.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from .service import fill_registry, get, pg_schema, public_login, served


@pytest.fixture(scope="module", params=["gpkg", "postgis"])
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if request.param == "gpkg":
        registry = str(tmp_path_factory.mktemp("links") / "permits.gpkg")
        fill_registry(registry, n=3)
        with served(registry) as url:
            yield url
        return
    target = pg_schema(request.getfixturevalue("pg_url"))
    fill_registry(target, n=3)
    with public_login(target) as reader, served(reader) as url:
        yield url


def _items(base: str, query: str = "") -> dict:
    status, _, body = get(f"{base}/ogc/collections/permits/items?f=json&limit=100{query}")
    assert status == 200, body[:300]
    return json.loads(body)


def test_item_links_lead_only_to_permits_the_map_shows(base: str) -> None:
    ids = sorted(int(f["id"]) for f in _items(base)["features"])
    assert len(ids) == 3  # three permits; the undecided application (the highest id) is not served
    hidden = ids[-1] + 1  # the application was added last: its id is the next one
    assert get(f"{base}/ogc/collections/permits/items/{hidden}?f=json")[0] == 404
    for i in ids:
        status, _, body = get(f"{base}/ogc/collections/permits/items/{i}?f=json")
        assert status == 200
        links = {link["rel"]: link["href"] for link in json.loads(body)["links"] if link["rel"] in ("prev", "next")}
        named = {int(href.split("/items/")[1].split("?")[0]) for href in links.values()}
        assert named <= set(ids), (i, links)
        assert f"/items/{hidden}?" not in body.decode()


@pytest.mark.parametrize(
    ("when", "count"),
    [
        ("2026-11-03", 3),  # the day they were issued
        ("2026-11-04", 0),
        ("2026-11-01/2026-11-30", 3),
        ("2026-11-03/2026-11-03", 3),  # an interval includes both ends
        ("../2026-11-02", 0),
        ("2026-11-03/..", 3),
        ("2026-11-04/..", 0),
        ("../..", 3),
    ],
)
def test_datetime_filters_by_the_day_a_permit_was_issued(base: str, when: str, count: int) -> None:
    assert len(_items(base, f"&datetime={when}")["features"]) == count


def test_a_datetime_that_is_not_one_is_a_400(base: str) -> None:
    status, _, body = get(f"{base}/ogc/collections/permits/items?f=json&datetime=soon")
    assert status == 400 and "Traceback" not in body.decode()
