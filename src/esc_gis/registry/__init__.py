"""The permit registry: the office calendar, the permit life cycle and the ordinance's deadlines.

This first part is pure (no storage yet): :mod:`calendar` counts business days,
:mod:`lifecycle` holds the states and allowed transitions, :mod:`deadlines` computes what
is due from a permit's dates.
"""
