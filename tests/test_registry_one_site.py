"""Intake takes a site once, and keeps what the screening knew of it (issue 46, items 2 and 6).

The rule is the office's (``[policy.intake_same_site]``, basis ``policy``): the ordinance asks for "a
permit from the administering authority" for "the site" (§ 540-8A) and says nothing of two drawings
of one site. Sites here are squares of the test Village (conftest), in EPSG:7594 ftUS; the
Village is box(0, 0, 2000, 2000) in local feet, so a square centred on x = 2000 lies half
outside it.
"""

from __future__ import annotations

from datetime import date

import geopandas as gpd
import pytest

from esc_gis.errors import ValidationError
from esc_gis.registry import Application

from .conftest import CRS, K, box, square_sqft

# --- Intake ----------------------------------------------------------------------------------


def _app(x: float = 100, *, parcel: str | None = None, status: str = "application_received", **kw) -> Application:
    issued = {"issued_on": date(2026, 11, 3)} if status != "application_received" else {}
    return Application(
        "100 Test St", date(2026, 11, 2), square_sqft(x, 100, 5000.0), CRS, parcel_id=parcel, status=status,
        **issued, **kw,
    )  # fmt: skip


def test_a_second_application_for_a_covered_site_is_refused_naming_the_permit(reg) -> None:
    """The same lot sent twice: the second is refused, naming the open application, and nothing is added.

    Policy: one application or permit for a site at a time (the ordinance's "a permit ... for the
    site", § 540-8A); the refusal names the record that covers it.
    """
    first = reg.add(_app(), who="clerk")
    with pytest.raises(ValidationError) as exc:
        reg.add(_app(x=102), who="clerk")  # the same lot, drawn 2 ft over: 96 % of it
    text = str(exc.value)
    assert first in text and "application_received" in text and "toolkit policy" in text
    assert "permits amend" in text and f"amend the earlier application or permit {first}" in text
    assert "transfer it to the new applicant if the site changed hands" in text
    assert [p.permit_number for p in reg.permits()] == [first]
    # Next door (touching, no overlap) is another site.
    side = (5000.0 / K) ** 0.5
    assert reg.add(_app(x=100 + side), who="clerk") != first


def test_a_site_of_a_closed_or_expired_permit_is_taken_and_linked(reg) -> None:
    """A new application for a site whose earlier permit was closed is taken and linked to it; `show` lists it.

    "Disapproved", "closed" cover nothing: a new submittal is a new application (lifecycle).
    """
    old = reg.add(_app(parcel="T-1", status="approved"), who="clerk")
    with pytest.raises(ValidationError, match=old):  # in force: refused
        reg.add(_app(x=600, parcel="t-1 "), who="clerk")  # the same parcel, drawn elsewhere
    reg.transition(old, "revoked", on=date(2026, 11, 20), reasons="work never began", notified_on=date(2026, 11, 18))
    new = reg.add(_app(parcel="T-1"), who="clerk")
    p = reg.get(new)
    assert p.earlier_permits == old
    received = next(e for e in p.events if e.kind == "received")
    assert f"follows {old} on the same site" in received.detail
    assert reg.frame().set_index("permit_number").loc[new, "earlier_permits"] == old


def test_a_site_whose_permit_expired_is_taken_and_linked(reg, late_clock) -> None:
    """A permit "valid for a period of 180 days, or the length of the building permit or other construction
    authorizations, whichever is longer, from the date of issuance" (§ 540-8G), issued 2026-11-03
    and never extended, has expired by the Village's clock at 2029-12-31: a new application for its
    site is taken, linked to it."""
    old = reg.add(_app(status="approved"), who="clerk")
    assert reg.get(old).expires_on < late_clock
    new = reg.add(_app(x=101), who="clerk")
    assert reg.get(new).earlier_permits == old


def test_import_twice_adds_nothing_and_names_every_row(reg, tmp_path) -> None:
    """The same layer imported twice: the second run refuses every row, naming its permit, and adds nothing.

    Policy: a site takes one application at a time; an import is all or nothing, every problem at once.
    """
    frame = gpd.GeoDataFrame(
        {"site_address": ["1 A St", "2 B St"], "received_on": ["2026-11-02", "2026-11-02"]},
        geometry=[square_sqft(100, 100, 5000.0), square_sqft(400, 100, 5000.0)],
        crs=CRS,
    )
    numbers = reg.import_frame(frame, source="permits.gpkg")
    with pytest.raises(ValidationError) as exc:
        reg.import_frame(frame, source="permits.gpkg")
    rows = {(p.row, p.source) for p in exc.value.problems}
    assert rows == {(1, "permits.gpkg"), (2, "permits.gpkg")}
    assert all(n in str(exc.value) for n in numbers)
    assert len(reg.permits()) == 2


def test_two_rows_of_one_import_on_one_site_are_refused_together(reg) -> None:
    """Rows within one import that are one site count too: the later row names the earlier."""
    frame = gpd.GeoDataFrame(
        {"site_address": ["1 A St", "1 A St", "9 Z St"], "received_on": ["2026-11-02"] * 3,
         "parcel_id": ["P1", None, "P1"]},
        geometry=[square_sqft(100, 100, 5000.0), square_sqft(101, 100, 5000.0), square_sqft(900, 100, 5000.0)],
        crs=CRS,
    )  # fmt: skip
    with pytest.raises(ValidationError) as exc:
        reg.import_frame(frame, source="layer.gpkg")
    got = {p.row: p.message for p in exc.value.problems}
    assert set(got) == {2, 3} and "row 1 of this import" in got[2] and "the same parcel P1" in got[3]
    assert reg.permits() == []


def test_an_import_of_a_closed_record_and_its_successor_links_them(reg) -> None:
    """A closed permit's record and the new application on its lot, in one import: taken, the new linked."""
    frame = gpd.GeoDataFrame(
        {"site_address": ["1 A St", "1 A St"], "received_on": ["2026-10-01", "2026-11-02"],
         "status": ["closed", "application_received"]},
        geometry=[square_sqft(100, 100, 5000.0), square_sqft(100, 100, 5000.0)],
        crs=CRS,
    )  # fmt: skip
    old, new = reg.import_frame(frame, source="layer.gpkg")
    assert reg.get(new).earlier_permits == old and reg.get(old).earlier_permits is None


# --- The screening's facts --------------------------------------------------------------------


def test_a_partial_site_keeps_its_jurisdiction_and_inside_area(reg) -> None:
    """A site half outside the Village: "partial", 5,000 of 10,000 sq ft inside, kept as the screening decided.

    "This article applies to ... construction sites ... located within the boundaries and
    jurisdiction of the Village" (§ 540-4B); the profile decides a partial site on its whole
    disturbance (an interpretation), and the registry keeps both areas.
    """
    side = 100 / K**0.5  # 100 ft international a side: 10,000 sq ft, half of it east of x = 2000
    site = box(2000 - side / 2, 100, 2000 + side / 2, 100 + side)
    n = reg.add(Application("1 Line Rd", date(2026, 11, 2), site, CRS), who="clerk")
    p = reg.get(n)
    assert p.jurisdiction == "partial"
    assert p.disturbed_sqft == pytest.approx(10_000, abs=0.5)
    assert p.disturbed_in_village_sqft == pytest.approx(5_000, abs=0.5)
    inside = reg.get(reg.add(_app(x=300), who="clerk"))
    assert (inside.jurisdiction, inside.disturbed_in_village_sqft) == ("inside", pytest.approx(5_000, abs=0.5))
    row = reg.frame().set_index("permit_number").loc[n]
    assert row["jurisdiction"] == "partial" and row["disturbed_in_village_sqft"] == pytest.approx(5_000, abs=0.5)
    received = next(e for e in p.events if e.kind == "received")
    assert "site partial (5,000 sq ft disturbed inside" in received.detail


def test_the_public_map_says_a_site_lies_partly_outside(reg) -> None:
    """An active permit on a site across the Village line: its popup on the public map says so."""
    from datetime import datetime, timezone

    from esc_gis.maps.public import public_permit_map

    side = 100 / K**0.5
    site = box(2000 - side / 2, 100, 2000 + side / 2, 100 + side)
    from .conftest import STARTED

    n = reg.add(
        Application("1 Line Rd", date(2026, 11, 2), site, CRS, status="active", issued_on=date(2026, 11, 3),
                    started_at=STARTED),
        who="clerk",
    )  # fmt: skip
    inside = reg.add(_app(x=300, status="active", started_at=STARTED), who="clerk")
    html = public_permit_map(reg.frame(), as_of=datetime(2026, 12, 1, tzinfo=timezone.utc), contact="x")
    text = html.get_root().render()
    assert text.count("Partly outside the") == 1 and n in text and inside in text


def test_the_public_view_and_summary_carry_jurisdiction(reg) -> None:
    """The public view (no personal data) shows where each permit lies; the summary counts them."""
    from esc_gis.registry.views.summary import office_summary

    n = reg.add(_app(x=300), who="clerk")
    with reg.backend.read() as cur:
        cur.execute(
            f"SELECT jurisdiction, disturbed_in_village_sqft FROM permits_public WHERE permit_number = {reg.backend.ph}",
            (n,),
        )
        assert cur.fetchone()[0] == "inside"
    v = {(r.section, r.measure): r.value for r in office_summary(reg, date(2026, 11, 1), date(2026, 11, 30))}
    assert v["permits", "jurisdiction_inside"] == 1 and v["permits", "jurisdiction_partial"] == 0


def test_a_v10_parcel_screening_imported_keeps_the_parcel_id(reg, tmp_path, layers_path) -> None:
    """A V10 parcel layer screened by PARCELID, then imported: each permit's parcel_id is its PARCELID."""
    from click.testing import CliRunner

    from esc_gis.cli.main import cli

    v10 = gpd.GeoDataFrame(
        {"STATEID": ["S1", "S2"], "PARCELID": ["T-0101", "T-0102"], "TAXPARCELID": ["a", "b"],
         "SITEADRESS": ["1 A St", "2 B St"], "CONAME": ["WINNEBAGO", "WINNEBAGO"], "PARCELFIPS": ["139", "139"]},
        geometry=[square_sqft(100, 100, 5000.0), square_sqft(400, 100, 5000.0)],
        crs=CRS,
    )  # fmt: skip
    src = tmp_path / "parcels.gpkg"
    v10.to_file(src)
    out = tmp_path / "screening.gpkg"
    r = CliRunner().invoke(cli, ["screen", str(src), "--id-field", "PARCELID", "--layers", str(layers_path),
                                 "-o", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    frame = gpd.read_file(out)
    numbers = reg.import_frame(frame, source=str(out), fields={"site_address": "SITEADRESS"},
                               received_on=date(2026, 11, 2))  # fmt: skip
    assert [reg.get(n).parcel_id for n in numbers] == ["T-0101", "T-0102"]
    # `permits add --site-layer` takes the site's facts from the same reader.
    from esc_gis.registry.service.imports import screened_site

    assert screened_site(frame.iloc[1:2], str(out))["parcel_id"] == "T-0102"
