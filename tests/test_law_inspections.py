"""Inspection reports checked before they are written, pure (§ 540-8E(5)-(8), § 540-7B(5)(a)).

§ 540-8E(6): "Conduct construction site inspections at least once per week and within 24 hours after a
precipitation event ..." and "Weekly inspection reports shall include" the date, time and location, the
inspector, an assessment of the controls, the BMP work done and the present phase. No registry here: a
permit is built in code, and each refusal is pinned with its words, so a mutation of a bound fails a test.
"""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
import shapely

from esc_gis.errors import ProfileError
from esc_gis.profile import load_profile
from esc_gis.registry.domain.fold import InspectionFact, PermitState
from esc_gis.registry.domain.inspections import (
    MAX_PHOTO_BYTES,
    InspectionReport,
    check_report,
    counted_inspections,
    is_day_alone,
    missing_contents,
    read_photo,
    report_contents,
)
from esc_gis.registry.domain.records import Deficiency, Inspection, Permit

PROFILE = load_profile()
UTC = timezone.utc
STARTED = datetime(2026, 6, 1, 8, tzinfo=UTC)
NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def _permit(**kw) -> Permit:
    base = {
        "permit_number": "ESC-1", "parcel_id": None, "site_address": "1 Main St", "legal_description": None,
        "status": "active", "site_sqft": 10000.0, "disturbed_sqft": 5000.0, "permit_decision": None,
        "standards": None, "sediment_standard": None, "building_permit_expires": None,
        "received_on": date(2026, 3, 2), "information_requested_on": None, "information_received_on": None,
        "decided_on": date(2026, 4, 1), "issued_on": date(2026, 4, 1), "expires_on": None,
        "started_at": STARTED, "start_notice_at": None, "work_stopped_on": None, "stockpile_since": None,
        "final_on": None, "updated_at": NOW, "site": shapely.box(0, 0, 100, 100),
    }  # fmt: skip
    return Permit(**{**base, **kw})


def _report(**kw) -> InspectionReport:
    base = {"inspected_at": datetime(2026, 6, 8, 9, tzinfo=UTC), "inspector": "Pat", "assessment": "fence holds"}
    return InspectionReport(**{**base, **kw})


def _said(report: InspectionReport, permit: Permit | None = None, *, none: bool = False) -> list[tuple[str, str]]:
    problems, _ = check_report(report, None if none else (permit or _permit()), "ESC-1", now=NOW)
    assert all(p.source == "ESC-1" and p.row is None for p in problems)
    return [(p.message, p.fix) for p in problems]


# --- photos ---


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBP", "image/webp"),
        (b"\x00\x00\x00\x18ftypheic", "image/heic"),
        (b"\x00\x00\x00\x18ftypheix", "image/heic"),
        (b"\x00\x00\x00\x18ftypmif1", "image/heif"),
        (b"II*\x00", "image/tiff"),
        (b"MM\x00*", "image/tiff"),
    ],
)
def test_a_photo_is_known_by_its_first_bytes_and_hashed(tmp_path: Path, head: bytes, kind: str) -> None:
    p = tmp_path / "x.bin"
    p.write_bytes(head + b"rest")
    photo, err = read_photo(p)
    assert err is None and photo is not None
    assert (photo.filename, photo.content_type) == ("x.bin", kind)
    assert photo.sha256 == hashlib.sha256(head + b"rest").hexdigest()
    assert (photo.data, photo.size_bytes) == (head + b"rest", len(head) + 4)


def test_a_bad_photo_is_a_problem_with_its_fix_never_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "gone.jpg"
    assert read_photo(missing) == (
        None,
        (f"photo {str(missing)!r} does not exist.", "give the path of the photo file."),
    )
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    assert read_photo(empty) == (None, (f"photo {str(empty)!r} is empty.", "give the photo file itself."))
    text = tmp_path / "note.jpg"
    text.write_bytes(b"RIFF\x00\x00\x00\x00WAVE")
    assert read_photo(text) == (
        None,
        (
            f"photo {str(text)!r} is not an image the registry knows (PNG, JPEG, GIF, WebP, HEIC, TIFF).",
            "export it as JPEG or PNG.",
        ),
    )
    folder = tmp_path / "dir.jpg"
    folder.mkdir()
    photo, (problem, fix) = read_photo(folder)
    assert photo is None
    assert problem == f"photo {str(folder)!r} cannot be read: Is a directory."
    assert fix == "check the file and its permissions."


def test_a_photo_is_taken_up_to_25_mib_and_refused_a_byte_over(tmp_path: Path) -> None:
    assert MAX_PHOTO_BYTES == 25 * 1024 * 1024
    p = tmp_path / "big.jpg"
    with p.open("wb") as fh:
        fh.write(b"\xff\xd8\xff")
        fh.truncate(MAX_PHOTO_BYTES)
    photo, err = read_photo(p)
    assert err is None and photo is not None and photo.size_bytes == MAX_PHOTO_BYTES
    with p.open("r+b") as fh:
        fh.truncate(26_350_000)  # 26.35 MB: the size said to a tenth, rounded
    assert read_photo(p)[1] == (
        f"photo {str(p)!r} is 26.4 MB, over the 26 MB limit.",
        "resize it (a photo of a site reads well at 2-3 MB).",
    )
    with p.open("r+b") as fh:
        fh.truncate(MAX_PHOTO_BYTES + 1)
    assert read_photo(p) == (
        None,
        (f"photo {str(p)!r} is 26.2 MB, over the 26 MB limit.", "resize it (a photo of a site reads well at 2-3 MB)."),
    )


# --- the report ---


def test_a_complete_report_after_the_start_is_accepted_with_its_photos(tmp_path: Path) -> None:
    p = tmp_path / "a.png"
    p.write_bytes(PNG)
    problems, photos = check_report(_report(photos=[p]), _permit(), "ESC-1", now=NOW)
    assert problems == []
    assert [ph.filename for ph in photos] == ["a.png"]


def test_every_problem_of_a_report_is_reported_at_once(tmp_path: Path) -> None:
    bad = _report(
        inspected_at=None,
        inspector=" ",
        assessment="",
        deficiencies=["ok", " "],
        photos=[tmp_path / "gone.png"],
        by="neighbour",
        location=shapely.Point(1, 2),
    )
    assert _said(bad, none=True) == [
        ("there is no such permit in the registry.", "check the number (`esc-gis permits list`)."),
        ("the inspection has no date and time.", "give inspected_at=YYYY-MM-DDTHH:MM."),
        ("the inspector is empty.", "give the name of who inspected (inspector=)."),
        ("the assessment is empty.", "give the assessment of the controls' condition (assessment=)."),
        ("deficiency 2 is empty.", "describe what is wrong, or leave it out."),
        (f"photo {str(tmp_path / 'gone.png')!r} does not exist.", "give the path of the photo file."),
        ("who inspected is 'neighbour'.", "give one of holder, office (by=)."),
    ]
    assert _said(_report(inspector=None, assessment=None), none=True)[1:] == [
        ("the inspector is empty.", "give the name of who inspected (inspector=)."),
        ("the assessment is empty.", "give the assessment of the controls' condition (assessment=)."),
    ]
    assert _said(_report(deficiencies=[None]))[0][0] == "deficiency 1 is empty."


def test_a_report_may_be_five_minutes_ahead_of_the_clock() -> None:
    assert _said(_report(inspected_at=NOW + timedelta(minutes=5))) == []
    assert _said(_report(inspected_at=NOW + timedelta(minutes=5, seconds=1))) == [
        (
            "inspected_at=2026-06-15 12:05 UTC is later than now on the Village's clock (2026-06-15 12:00 UTC): "
            "give the time it happened.",
            "",
        )
    ]


def test_a_notification_needs_a_deficiency_and_comes_no_earlier_than_the_inspection() -> None:
    at = datetime(2026, 6, 8, 9, tzinfo=UTC)
    assert _said(_report(deficiencies=["torn fence"], notified_at=at)) == []
    assert _said(_report(notified_at=at)) == [
        ("a notification time is given, but no deficiency.", "give the deficiencies (deficiencies=).")
    ]
    assert _said(_report(deficiencies=["torn fence"], notified_at=at - timedelta(minutes=1))) == [
        (
            "notified_at=2026-06-08 08:59 UTC is before the inspection (2026-06-08 09:00 UTC): "
            "give the time it happened, on or after 2026-06-08 09:00 UTC.",
            "",
        )
    ]
    assert _said(_report(inspected_at=None, deficiencies=["x"], notified_at=at), none=True)[1:] == [
        ("the inspection has no date and time.", "give inspected_at=YYYY-MM-DDTHH:MM.")
    ]


def test_an_inspection_is_after_the_work_started_unless_it_is_a_pre_start_one() -> None:
    """§ 540-7B(5)(a): practices "shall be constructed or installed before land-disturbing construction
    activities begin"."""
    assert _said(_report(inspected_at=STARTED)) == []
    assert _said(_report(inspected_at=STARTED - timedelta(minutes=1))) == [
        (
            "the inspection 2026-06-01 07:59 is before the work started (2026-06-01 08:00).",
            "give the real date and time.",
        )
    ]
    assert _said(_report(), _permit(started_at=None, status="approved")) == [
        (
            "an inspection cannot be recorded before work starts.",
            "move the permit to active first, or record a pre-start inspection (pre_start=True).",
        )
    ]
    assert _said(_report(inspected_at=None))[1:] == []


@pytest.mark.parametrize("status", ["approved", "deemed_approved", "active", "extended"])
def test_a_pre_start_inspection_is_on_an_issued_permit_before_the_work(status: str) -> None:
    before = _report(pre_start=True, inspected_at=STARTED - timedelta(minutes=1))
    assert _said(before, _permit(status=status)) == []
    assert _said(_report(pre_start=True), _permit(status=status, started_at=None)) == []
    assert _said(_report(pre_start=True, inspected_at=STARTED), _permit(status=status)) == [
        (
            "a pre-start inspection at 2026-06-01 08:00 is not before the work started (2026-06-01 08:00).",
            "give the real time, or leave out pre_start=True.",
        )
    ]
    assert _said(_report(pre_start=True, inspected_at=None), _permit(status=status))[1:] == []


@pytest.mark.parametrize(
    ("status", "issued"), [("under_review", None), ("stop_work", date(2026, 4, 1)), ("approved", None)]
)
def test_a_pre_start_inspection_needs_an_issued_permit_not_yet_started(status: str, issued) -> None:
    assert _said(_report(pre_start=True), _permit(status=status, issued_on=issued, started_at=None)) == [
        (
            f"a pre-start inspection needs an issued permit whose work has not started (it is {status}).",
            "record it as a regular inspection (leave out pre_start=True).",
        )
    ]


def test_only_the_office_reports_the_checklist_of_documents_and_certificate() -> None:
    """§ 540-8E(7) documents kept at the site; § 540-8E(8) the certificate posted."""
    office = _report(by="office", on_site_documents=False, certificate_posted=True)
    assert office.checklist == {"on_site_documents": False, "certificate_posted": True}
    assert _report().checklist == {}
    assert _said(office) == []
    assert _said(dataclasses.replace(office, by="holder")) == [
        (
            "the checklist of documents on site and the posted certificate is the office's finding.",
            'record it with an office inspection (by="office").',
        )
    ]
    assert (
        _said(_report(by="holder", certificate_posted=False))[0][1]
        == 'record it with an office inspection (by="office").'
    )
    assert _said(_report(by="office")) == []


def test_the_location_is_a_finite_point_on_the_site() -> None:
    assert _said(_report(location=shapely.Point(0, 0))) == []  # on the boundary: covered
    assert _said(_report(location=shapely.Point(50, 50)), _permit(site=None)) == []
    not_point = ("the location is not a point.", "give a point (location=) in the registry's CRS.")
    for loc in (
        shapely.box(0, 0, 1, 1),
        shapely.Point(),
        shapely.Point(float("nan"), 1),
        shapely.Point(1, float("inf")),
        shapely.Point(float("-inf"), 1),
    ):
        assert _said(_report(location=loc)) == [not_point]
    assert _said(_report(location=shapely.Point(100.05, 3.04))) == [
        (
            "the location (100.0, 3.0) is not on the site.",
            "give a point on the site, in the registry's CRS (the layer set's).",
        )
    ]
    assert _said(_report(location=shapely.Point(500, 5)), none=True)[1:] == []


def _with_deficiencies(*defs: Deficiency) -> Permit:
    insp = Inspection(1, datetime(2026, 6, 3, tzinfo=UTC), "Pat", "a", None, None, "clerk", deficiencies=defs)
    return _permit(reports=[insp])


def test_a_repair_closes_an_open_deficiency_of_this_permit_found_before() -> None:
    found = datetime(2026, 6, 8, 9, tzinfo=UTC)
    permit = _with_deficiencies(
        Deficiency(1, 1, "torn fence", found),
        Deficiency(2, 1, "washout", found - timedelta(days=1), repaired_at=found),
    )
    see = "see the open ones with `esc-gis permits show`."
    assert _said(_report(inspected_at=found, repaired=[1]), permit) == []
    assert _said(_report(inspected_at=found - timedelta(seconds=1), repaired=[1]), permit) == [
        ("deficiency #1 was found after this time.", "give the real time.")
    ]
    assert _said(_report(repaired=[2, 3]), permit) == [
        ("deficiency #2 was already repaired (2026-06-08 09:00:00+00:00).", see),
        ("deficiency #3 is not one of this permit's.", see),
    ]
    assert _said(_report(inspected_at=None, repaired=[1]), permit)[1:] == []


# --- what counts toward the holder's weekly duty (§ 540-8E(6)) ---


def test_a_reports_contents_are_the_items_it_holds() -> None:
    assert _report().contents == []
    full = _report(location=shapely.Point(1, 1), work_done="fixed fence", phase="grading")
    assert full.contents == ["location", "work_done", "phase"]
    assert _report(work_done=" ", phase="").contents == []


def test_the_profile_lists_the_report_contents_the_ordinance_names() -> None:
    table = report_contents(PROFILE)
    assert set(table) == {"location", "work_done", "phase"}
    assert table["phase"]["words"] == (
        "a description of the present phase of land disturbing construction activity at the construction site"
    )
    assert PROFILE.source
    for odd_table in ({}, {"report_contents": ["location"]}, {"report_contents": {}}):
        odd = dataclasses.replace(PROFILE, tables={**PROFILE.tables, "inspections": odd_table})
        with pytest.raises(ProfileError) as e:
            report_contents(odd)
        assert str(e.value).startswith(f"Profile {PROFILE.source!r} has no [inspections.report_contents]: the items")
    two = dataclasses.replace(
        PROFILE, tables={**PROFILE.tables, "inspections": {"report_contents": {"weather": {}, "mood": {}}}}
    )
    with pytest.raises(ProfileError) as e:
        report_contents(two)
    assert str(e.value) == (
        "[inspections.report_contents] weather, mood: give items of location, work_done, phase with words."
    )
    empty = dataclasses.replace(PROFILE, tables={**PROFILE.tables, "inspections": {}})
    with pytest.raises(ProfileError, match=r"has no \[inspections\.report_contents\]: the items a weekly inspection"):
        report_contents(empty)
    none = dataclasses.replace(PROFILE, tables={k: v for k, v in PROFILE.tables.items() if k != "inspections"})
    with pytest.raises(ProfileError, match=r"has no \[inspections\.report_contents\]"):
        report_contents(none)
    for bad in ({"weather": {"words": "w"}}, {"phase": "w"}, {"phase": {"section": "s"}}):
        odd = dataclasses.replace(PROFILE, tables={**PROFILE.tables, "inspections": {"report_contents": bad}})
        with pytest.raises(
            ProfileError,
            match=r"^\[inspections\.report_contents\] .*: give items of location, work_done, phase with words\.$",
        ):
            report_contents(odd)


def test_only_the_holders_complete_reports_after_the_start_count() -> None:
    """§ 540-8E(6) is the holder's duty; "Weekly inspection reports shall include" every item."""
    full = ("location", "work_done", "phase")
    day = date(2026, 6, 2)
    facts = [
        InspectionFact(datetime(2026, 6, 3, tzinfo=UTC), "holder", contents=full),
        InspectionFact(datetime(2026, 6, 4, tzinfo=UTC), "office", contents=full),
        InspectionFact(datetime(2026, 6, 5, tzinfo=UTC), "holder", contents=("location", "phase")),
        InspectionFact(datetime(2026, 5, 30, tzinfo=UTC), "holder", contents=full, pre_start=True),
        InspectionFact(day, "holder"),
    ]
    state = PermitState("ESC-1", inspections=facts)
    # A day alone (`update --inspected`) holds none of what the reports "shall include: date, time
    # and location of the construction site inspection", ...: recorded, not counted (a reading,
    # [findings.report_day_alone]).
    assert counted_inspections(state, PROFILE) == [datetime(2026, 6, 3, tzinfo=UTC)]
    assert counted_inspections(None, PROFILE) == []
    assert missing_contents(facts[2], PROFILE) == ["work_done"]
    assert missing_contents(facts[4], PROFILE) == ["location", "work_done", "phase"]
    assert missing_contents(InspectionFact(day, "holder", contents=()), PROFILE) == ["location", "work_done", "phase"]


@pytest.mark.parametrize(
    "inspection_id, contents, alone",
    [
        (None, None, True),  # `permits update --inspected`: a day, no report in the registry
        (7, None, False),  # a report was recorded (its id), though it names none of the items
        (None, ("location",), False),  # the event holds the report's items
        (7, ("location", "work_done", "phase"), False),
    ],
)
def test_a_day_alone_is_one_without_any_report_recorded(inspection_id, contents, alone: bool) -> None:
    fact = InspectionFact(datetime(2026, 6, 3, tzinfo=UTC), "holder", inspection_id=inspection_id, contents=contents)
    assert is_day_alone(fact) is alone
