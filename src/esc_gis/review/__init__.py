"""Plan review: check a submitted erosion and sediment control plan and its site map (§ 540-9, § 540-7B).

:mod:`package` reads a plan package, :mod:`bmps` names the WDNR technical standards,
:mod:`checks` holds the checklist's pure checks, :mod:`plan` runs them
(:func:`review_plan`), and :mod:`report` writes the printable HTML page.
"""

from esc_gis.review.plan import Review, review_plan

__all__ = ["Review", "review_plan"]
