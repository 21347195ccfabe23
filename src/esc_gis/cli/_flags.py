"""The Python keywords that library messages name, spelled as the command line's flags.

The library is called from Python as often as from the command line, so its messages name
what a Python caller types: ``Fix: ... assume_crs="EPSG:XXXX"``, ``pass overwrite=True``. The
command line passes the same values as flags, so before it shows a library error or warning
it respells each keyword named there as its flag (``--assume-crs EPSG:XXXX``, ``--overwrite``).
This table is the one place a keyword meets its flag: a message never names a flag itself,
and a keyword missing here reaches the command line as Python wrote it.

A keyword is respelled only as ``name=`` (``name=True``, ``name="value"``, ``name=VALUE`` or
``name=`` alone, as a problem's source), so the words of a message are never touched. A mapping
keyword the command line takes as repeated ``NAME=VALUE`` items is written as a dict
(``fields={"site_address": "COLUMN"}`` becomes ``--field site_address=COLUMN``). A quoted value the
shell would not take as one plain word (a space, a quote, a bracket) keeps its quotes:
``where="site_id = 'S9'"`` becomes ``--where "site_id = 'S9'"``. A boolean the command line
takes as a pair of flags is one keyword, ``True`` or ``False``: ``approves=False`` becomes
``--stands`` (``"approves": "--approves/--stands"``).
"""

from __future__ import annotations

__all__ = ["FLAGS", "cli_text"]

import re

#: Each keyword a library message may name, and the flag the command line takes for it.
#: One keyword, one flag: where two commands spell one value differently, the keyword differs too.
FLAGS: dict[str, str] = {
    # Reading and writing layers (esc_gis.io, esc_gis.crs, esc_gis._outputs).
    "assume_crs": "--assume-crs",
    "overwrite": "--overwrite",
    "update": "--update",
    "layer": "--layer",
    "where": "--where",
    "layers": "--layers",
    "dst_crs": "--dst-crs",
    # Importing and picking sites (esc_gis.registry.service.imports).
    "fields": "--field",
    "disturbed": "--disturbed",
    "disturbed_id": "--disturbed-id",
    # Screening's inputs (esc_gis.validate, esc_gis.parcels, esc_gis.screening).
    "field_map": "--field",
    "id_field": "--id-field",
    "skip_ids": "--skip-ids",
    "profile_by": "--profile-by",
    # Rasters and soils (esc_gis.terrain, esc_gis.soil).
    "band": "--band",
    "z_unit": "--z-unit",
    "creation_options": "--co",
    "soils": "--soils",
    "k": "--k",
    "k_field": "--k-field",
    "r_annual": "--r-annual",
    "plan_field": "--plan-field",
    "plan_disturbed_sqft": "--plan-disturbed-sqft",
    # The registry: dates, inspections, fees and the life cycle.
    "on": "--on",
    "notified_on": "--notified-on",
    "reasons": "--reasons",
    "conditions": "--condition",
    "authorizations": "--authorization",
    "kind": "--kind",
    "amount": "--amount",
    "paid_on": "--paid-on",
    "receipt": "--receipt",
    "schedule": "--fees",
    "received_on": "--received-on",
    "expires_on": "--expires",
    "inspected_at": "--at",
    "notified_at": "--notified",
    "inspector": "--inspector",
    "assessment": "--assessment",
    "deficiencies": "--deficiency",
    "pre_start": "--pre-start",
    "by": "--by",
    "location": "--point",
    "inspected_on": "--inspected",
    "start_notice_at": "--start-notice",
    "work_stopped_on": "--work-stopped",
    "work_resumed_on": "--resumed",
    "stockpile_since": "--stockpile-since",
    "reason": "--reason",
    "notice_on": "--notice-on",
    "stage": "--stage",
    "engineer": "--engineer",
    "description": "--description",
    "plan_date": "--plan-date",
    "permission_on": "--permission-on",
    "permission_by": "--permission-by",
    "effective_on": "--effective-on",
    "notice_id": "--notice",
    # PostGIS roles (esc_gis.registry.store.roles).
    "prefix": "--role-prefix",
    # Enforcement and appeals.
    "permit_number": "--permit",
    "case_id": "--case",
    "site_layer": "--site-layer",
    "site_id": "--site-id",
    "address": "--address",
    "condition": "--condition",
    "costs_from": "--costs-from",
    "guarantee_id": "--guarantee",
    "costs": "--costs",
    "interest": "--interest",
    "purposes": "--purpose",
    "determined": "--determined",
    # Appeals: one keyword, True or False, the command line's pair of flags (``--approves/--stands``).
    "approves": "--approves/--stands",
    "findings": "--finding",
}

#: ``name=`` and what follows it: True, a quoted value, a bare value, or nothing.
_KEYWORD = re.compile(
    r"(?<![\w.-])(?P<name>" + "|".join(sorted(FLAGS, key=len, reverse=True)) + r")="
    r"(?P<value>True\b|False\b|\{[^{}]*\}|\"[^\"]*\"|'[^']*'|[^\s,;)`]*)"
)


#: A value the message quotes (a user's SQL, a file name): an opening quote not inside a word
#: (``layer's`` is no quote), to the same quote not followed by a word character.
_QUOTED = re.compile(r"(?<!\w)(?:'[^']*'|\"[^\"]*\")(?!\w)")
#: One pair of a dict value: ``"NAME": "VALUE"`` (either quote, or none).
_ITEM = re.compile(r"""["']?([\w.-]+)["']?\s*:\s*["']?([^"',}]*)["']?""")
#: A value the shell takes as one word without quotes (``EPSG:7594``, ``office``, ``a.gpkg:profile``).
_SHELL_SAFE = re.compile(r"[\w.:/@+,-]*")
#: A flag already spelled out just before: what follows it is its value (``--field received_on=COL``).
_AFTER_FLAG = re.compile(r"--[\w-]+\s+$")


def _flag(m: re.Match[str], quoted: list[tuple[int, int]]) -> str:
    # A user's value quoted in the message (their where clause, a file name) is theirs, not a keyword.
    if any(start < m.start() < end for start, end in quoted) or _AFTER_FLAG.search(m.string, 0, m.start()):
        return m.group()
    flag, value = FLAGS[m.group("name")], m.group("value")
    # A bare value ending a sentence or a problem's source keeps its full stop or colon outside it.
    tail = ""
    if value[-1:] in (".", ":") and not value.startswith(("'", '"')):
        value, tail = value[:-1], value[-1]
    if "/" in flag:
        # A boolean the command line gives as a pair of flags: True the first, False the second.
        on, off = flag.split("/")
        if value in ("True", "False"):
            return (on if value == "True" else off) + tail
    if value in ("", "True"):
        return flag + tail
    if value.startswith("{"):
        # One NAME=VALUE item per pair, each after its own flag, as the command line repeats them.
        items = _ITEM.findall(value)
        return " ".join(f"{flag} {name}={item}" for name, item in items) + tail
    if value[0] in "'\"" and value[-1] == value[0] and _SHELL_SAFE.fullmatch(value[1:-1]):
        value = value[1:-1]
    return f"{flag} {value}{tail}"


def cli_text(message: str) -> str:
    r"""Respell the Python keywords a library message names as the command line's flags.

    Parameters
    ----------
    message : str
        A library error's or warning's text, naming keywords as ``name=...``.

    Returns
    -------
    str
        The same text with each keyword of :data:`FLAGS` as its flag.

    Examples
    --------
    >>> cli_text('Fix: give assume_crs="EPSG:XXXX" (e.g. EPSG:7594).')
    'Fix: give --assume-crs EPSG:XXXX (e.g. EPSG:7594).'
    >>> cli_text("'out.gpkg' exists; pass overwrite=True to replace it.")
    "'out.gpkg' exists; pass --overwrite to replace it."
    >>> cli_text("the fee has no date paid (paid_on=YYYY-MM-DD).")
    'the fee has no date paid (--paid-on YYYY-MM-DD).'
    >>> cli_text("on=: a date in the future; the layer's owner= and a field=x stay.")
    "--on: a date in the future; the layer's owner= and a field=x stay."

    What the user typed, quoted back to them, and a value given after a flag stay as they are:

    >>> cli_text("--where \"site_id='S9'\" matches nothing; map it with --field received_on=COLUMN.")
    '--where "site_id=\'S9\'" matches nothing; map it with --field received_on=COLUMN.'
    >>> cli_text("the where= clause 'kind=1' is not valid SQL; give by=\"office\".")
    "the --where clause 'kind=1' is not valid SQL; give --by office."

    A mapping becomes one flag per item; a value the shell would split or expand keeps its quotes:

    >>> cli_text('map it with fields={"site_address": "COLUMN"}.')
    'map it with --field site_address=COLUMN.'
    >>> cli_text("where=\"site_id = 'S9'\" matches no feature.")
    '--where "site_id = \'S9\'" matches no feature.'

    """
    quoted = [qm.span() for qm in _QUOTED.finditer(message)]
    return _KEYWORD.sub(lambda m: _flag(m, quoted), message)
