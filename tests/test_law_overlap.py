"""The one rule of intake taking a site once, pure (issue 46): the same site, and what covers it.

The rule is the office's (``[policy.intake_same_site]``, basis ``policy``): the ordinance asks for
"a permit from the administering authority" for "the site" (§ 540-8A) and says nothing of two
drawings of one site. Plain squares in feet, areas checkable by hand.
"""

from __future__ import annotations

from datetime import date

import shapely

from esc_gis.registry.domain.overlap import Earlier, covers, same_parcel, same_site, sort_earlier

TODAY = date(2027, 1, 4)


def test_two_sites_are_one_above_the_share_of_either_and_not_at_it() -> None:
    """The office's rule: overlapping by *more than* 10 % of either site is one site; exactly 10 % is two.

    Policy ("toolkit policy (intake_same_site)"), which the ordinance leaves to the office: it
    requires "a permit from the administering authority" for "the site" (§ 540-8A).
    """
    lot = shapely.box(0, 0, 100, 100)  # 10,000
    assert not same_site(lot, None, shapely.box(90, 0, 190, 100), None, share=0.10)  # exactly 1,000: 10 %
    assert same_site(lot, None, shapely.box(89.9, 0, 189.9, 100), None, share=0.10)  # 1,010: above
    # Of either: a 30 x 30 lot wholly inside a 1,000 x 1,000 site is 0.09 % of the larger one.
    assert same_site(shapely.box(10, 10, 40, 40), None, shapely.box(0, 0, 1000, 1000), None, share=0.10)
    # Touching is no overlap, even at share 0 (enforcement's "lies on the site of").
    assert not same_site(lot, None, shapely.box(100, 0, 200, 100), None, share=0.0)
    assert same_site(lot, None, shapely.box(99, 0, 199, 100), None, share=0.0)
    # The same parcel is the same site wherever drawn; an empty id names no parcel.
    assert same_site(lot, "T-0123", shapely.box(900, 0, 1000, 100), " t-0123 ", share=0.10)
    assert not same_parcel("", "") and not same_parcel(None, "X") and not same_parcel("A", "B")
    assert not same_site(None, None, lot, None, share=0)


def test_what_covers_a_site_undecided_or_issued_in_force_to_its_last_day() -> None:
    """An issued permit covers its site through the last day of its period, "valid for 180 days" (§ 540-8G);
    a disapproved, revoked or closed one, or one past its period, covers nothing."""
    for status in ("application_received", "incomplete", "under_review"):
        assert covers(status, None, TODAY)
    for status in ("approved", "deemed_approved", "active", "extended", "stop_work", "suspended",
                   "final_stabilization"):  # fmt: skip
        assert covers(status, TODAY, TODAY) and not covers(status, date(2027, 1, 3), TODAY)
        assert covers(status, None, TODAY)
    for status in ("disapproved", "revoked", "closed", None):
        assert not covers(status, None, TODAY)


def test_sort_earlier_refuses_on_those_in_force_and_links_the_ended() -> None:
    """One call sorts the records on the site: those in force cover it, those ended are linked."""
    lot = shapely.box(0, 0, 100, 100)
    away = shapely.box(500, 0, 600, 100)
    found = sort_earlier(
        lot,
        "P9",
        [
            Earlier("A", "closed", None, None, lot),
            Earlier("B", "under_review", None, None, away),  # elsewhere: neither
            Earlier("C", "active", date(2027, 1, 3), None, lot),  # expired yesterday: ended
            Earlier("D", "approved", None, "P9", away),  # the same parcel, drawn elsewhere
        ],
        TODAY,
        share=0.10,
    )
    assert (found.covering, found.linked) == (["D"], ["A", "C"])
