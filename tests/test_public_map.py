"""The public map: what it shows, what its legend lists, what it counts, and its clock.

§ 540-8E: the administering authority "may suspend or revoke a permit for violation of a permit
condition, following written notification"; § 540-12A: it "may post a stop-work order". A
suspended permit or a stop-work order halts the work: neither is active work, so neither is
counted as an active permit, but the public may need to know (work seen there should not be
going on), so both are drawn, each in its own class. The map, its legend, the command's count
and the README say the same.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import date, datetime, timezone
from pathlib import Path

import geopandas as gpd
import pytest
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.maps import write_map
from esc_gis.maps.public import ACTIVE_STATUS, PUBLIC_STATUS, public_counts, public_permit_map, stamp_text
from esc_gis.profile import load_profile

from .browser import chromium_page, real_errors
from .conftest import CRS, add_active, square_sqft

README = Path(__file__).resolve().parents[1] / "docs" / "guide" / "registry" / "publishing.md"
AS_OF = datetime(2026, 11, 30, 9, 15, tzinfo=timezone.utc)


def _frame(statuses: list[str]) -> gpd.GeoDataFrame:
    n = len(statuses)
    return gpd.GeoDataFrame(
        {
            "permit_number": [f"ESC-2026-{i + 1:04d}" for i in range(n)],
            "site_address": [f"{i + 1} Main St" for i in range(n)],
            "disturbed_acres": [0.2] * n,
            "status": statuses,
            "expires_on": [date(2027, 3, 19)] * n,
        },
        geometry=[square_sqft(100 + 300 * i, 100, 8000) for i in range(n)],
        crs=CRS,
    )


def _legend(html: str) -> tuple[list[str], str]:
    """The legend's rows (their layer names) and its note, from the page source."""
    box = html[html.index("id='esc-legend'") :]
    box = box[: box.index("</div></div>") + 12]
    note = re.findall(r"<div style='color:#555;margin-top:4px'>([^<]*)</div>", box)
    return re.findall(r"data-layer='([^']*)'", box), (note[0] if note else "")


@pytest.mark.parametrize(
    "statuses, rows, note",
    [
        (
            ["active", "stop_work"],
            ["Active (1)", "Stop-work order (1)"],
            "1 active permit(s); work halted at 1 (1 stop-work order)",
        ),
        (["extended", "extended"], ["Active (extended) (2)"], "2 active permit(s)"),
        (
            ["active", "suspended", "closed"],
            ["Active (1)", "Permit suspended (1)"],
            "1 active permit(s); work halted at 1 (1 permit suspended)",
        ),
        (["suspended"], ["Permit suspended (1)"], "0 active permit(s); work halted at 1 (1 permit suspended)"),
    ],
)
def test_the_legend_lists_only_the_classes_drawn_and_counts_halted_sites_apart(
    layer_set, statuses: list[str], rows: list[str], note: str
) -> None:
    html = public_permit_map(_frame(statuses), as_of=AS_OF, contact="x", layers=layer_set).get_root().render()
    assert _legend(html) == (rows, note)
    assert public_counts(statuses) == note
    # A class with nothing drawn has no legend row and no layer.
    for key, (label, _) in PUBLIC_STATUS.items():
        assert bool(re.search(rf"{re.escape(label)} \(\d", html)) is (key in statuses)


def test_with_nothing_to_show_the_legend_says_so(layer_set) -> None:
    html = public_permit_map(_frame(["closed"]), as_of=AS_OF, contact="x", layers=layer_set).get_root().render()
    assert _legend(html) == ([], "No permit where work is permitted or halted.")


def test_only_active_and_extended_permits_are_counted_as_active() -> None:
    assert ACTIVE_STATUS == ("active", "extended")
    assert public_counts(["active", "extended", "stop_work", "suspended", "revoked", "under_review"]) == (
        "2 active permit(s); work halted at 2 (1 stop-work order, 1 permit suspended)"
    )
    assert public_counts([]) == "0 active permit(s)"


@pytest.mark.parametrize(
    "as_of, stamp",
    [
        (AS_OF, "2026-11-30 03:15 CST (America/Chicago)"),
        (datetime(2026, 7, 1, 15, 0, tzinfo=timezone.utc), "2026-07-01 10:00 CDT (America/Chicago)"),
        # 02:30 UTC on December 1 is still November 30 in the Village.
        (datetime(2026, 12, 1, 2, 30, tzinfo=timezone.utc), "2026-11-30 20:30 CST (America/Chicago)"),
        (datetime(2026, 11, 30, 8, 0), "2026-11-30 08:00 CST (America/Chicago)"),  # naive: read off the Village clock
    ],
)
def test_the_stamp_is_on_the_villages_clock_and_names_the_zone(layer_set, as_of: datetime, stamp: str) -> None:
    assert stamp_text(as_of, load_profile()) == stamp
    html = public_permit_map(_frame(["active"]), as_of=as_of, contact="Q", layers=layer_set).get_root().render()
    assert f"Data as of {stamp} &middot; Questions: Q" in html


def test_a_profile_without_a_clock_gives_the_offset() -> None:
    prof = dataclasses.replace(load_profile(), timezone="")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d \S+ \(UTC[+-]\d{4}\)", stamp_text(AS_OF, prof))


def test_the_villages_contact_is_the_administering_authority() -> None:
    # § 540-5 ADMINISTERING AUTHORITY: "... i.e., the Village's Director of Public Works".
    assert "Director of Public Works" in load_profile().contact


def test_the_command_counts_as_the_legend_does(tmp_path: Path, layers_path: Path, layer_set) -> None:
    from esc_gis.registry import init_registry, open_registry

    target = str(tmp_path / "permits.gpkg")
    init_registry(target, layers=layer_set)
    with open_registry(target, layers=layer_set) as reg:
        numbers = [add_active(reg, x=x, address=f"{x} Test St") for x in (100, 400, 700)]
        reg.transition(
            numbers[1], "suspended", who="clerk", reasons="Written notice of 2026-11-20",
            notified_on=date(2026, 11, 20),
        )  # fmt: skip
        reg.transition(numbers[2], "stop_work", who="clerk", reasons="Order posted at the gate")
    page = tmp_path / "public.html"
    r = CliRunner().invoke(cli, ["permits", "map", target, "--public", "-o", str(page), "--layers", str(layers_path)])
    assert r.exit_code == 0, r.output
    said = "1 active permit(s); work halted at 2 (1 stop-work order, 1 permit suspended)"
    assert f"Wrote {page}: {said}, data as of " in r.output and "(America/Chicago)." in r.output
    html = page.read_text()
    assert _legend(html) == (["Active (1)", "Stop-work order (1)", "Permit suspended (1)"], said)
    assert all(n in html for n in numbers)
    assert "Questions: Village of Winneconne, Director of Public Works" in html


def test_the_docs_say_what_the_map_shows() -> None:
    text = README.read_text(encoding="utf-8")
    para = text[text.index("## The public map") :]
    para = para[: para.index("\n## ", 5)]
    flat = " ".join(para.split())
    for state in ("active", "extended", "stop-work", "suspended"):
        assert state in flat, state
    assert "counted as active" in flat and "revoked" in flat
    assert "Village's clock" in flat and "only the classes drawn" in flat


def test_the_legend_in_chromium(layer_set, tmp_path: Path) -> None:
    path = write_map(
        public_permit_map(_frame(["active", "suspended"]), as_of=AS_OF, contact="Q", layers=layer_set, offline=True),
        tmp_path / "p.html",
    )
    with chromium_page(offline=True) as (page, errors, _):
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        legend = page.inner_text("#esc-legend")
        assert "Active (1)" in legend and "Permit suspended (1)" in legend
        assert "Stop-work order" not in legend and "extended" not in legend
        assert "1 active permit(s); work halted at 1 (1 permit suspended)" in legend
        assert "Data as of 2026-11-30 03:15 CST (America/Chicago)" in page.inner_text("#esc-as-of")
        overlays = page.eval_on_selector_all(
            ".leaflet-control-layers-overlays label", "els => els.map(e => e.innerText.trim())"
        )
        assert "Active (1)" in overlays and "Permit suspended (1)" in overlays and len(overlays) == 3  # + boundary
        assert real_errors(errors) == []
