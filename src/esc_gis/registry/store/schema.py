"""The registry's schema, written once and rendered for each back end, with versioned migrations.

Tables
------
``permits``
    One row per permit: public facts (number, address, status, dates, the disturbed area
    the screening engine computed) and the site boundary as its geometry.
``disturbed_limits``
    The disturbed-limit polygon of each permit (a GeoPackage table holds one geometry
    column, so the second geometry has a table of its own).
``parties``
    Landowner and responsible parties with their contact details: private, never on the
    public map.
``events``
    The append-only history: who did what and when. Triggers refuse UPDATE and DELETE.
``permit_counters``
    The last number issued per year, for numbers in the profile's pattern (``ESC-2026-0001``)
    that two writers cannot both take.
``inspections``
    The site inspection reports (§ 540-8E(6)): when, where on the site (a point, optional),
    the inspector, the assessment of the controls, the BMP work done and the present phase.
    Private (inspectors' notes), never on the public map or in a public export.
``deficiencies``
    What an inspection found wrong, one row each: each opens a repair due within the
    profile's ``deadlines.repair`` of the inspection, or of the notification if one is
    recorded. A child table, not a JSON list: plain SQL on both back ends finds the open ones.
``repairs``
    The closing of a deficiency (one row at most each), by a later inspection or a record of
    the repair.
``inspection_photos``
    Photos taken at an inspection, stored in the registry as blobs with their file name,
    content type and SHA-256: the registry stays one file (or database) that a backup or
    a copy keeps whole, and a checksum proves a photo is the one recorded.
``esc_gis_schema``
    One row per migration applied.

Column kinds are ``text``, ``int``, ``real``, ``bool``, ``date``, ``datetime``, ``blob`` and ``geom``;
dates are ISO text in a GeoPackage (its DATE / DATETIME types) and ``date`` /
``timestamptz`` in PostGIS. Each back end renders the DDL (:func:`create_table`).

Migrations
----------
1. The tables above as first released.
2. ``permits`` gains the common plan and activity the screening engine decides on
   (``plan_id``, ``activity``, ``plan_disturbed_sqft``, § 540-5) and the pause of work
   (``resume_expected_on``, ``work_resumed_on``) that temporary stabilisation turns on
   (§ 540-7A(4)(d)). Nullable, so existing rows stay valid; ``ALTER TABLE ... ADD COLUMN``
   in both dialects.
3. Inspections, their deficiencies, repairs and photos (tables above). Append-only like the
   history: a report, once recorded, is evidence; a repair is a row of its own, not an edit.
4. Enforcement cases (``enforcement_cases``: a site with or without a permit, its ground,
   who opened it and why; private) and their events (``enforcement_events``: stop-work
   order, notice of intent with the office's costs, referral for a cease-and-desist order,
   retraction, closing). A case need not have a permit (activity without a required
   permit), so its history is a table of its own rather than rows of ``events``. Both
   append-only: a case's state is replayed from its events. Appeals (``appeals``: what was
   appealed, by whom, when) and their decisions (``appeal_decisions``: the body that heard
   it, upheld / reversed / variance with conditions, and the effect on the permit), append-only.
5. Fees (``fees``: the application fee and others paid under the Village Board's schedule,
   § 540-8B, § 540-10: kind, amount, date paid, receipt number, who recorded it) and financial
   guarantees (``guarantees``: surety bond, cash escrow or irrevocable letter of credit, its
   amount, date received and a letter of credit's expiry, § 540-8D) with their events
   (``guarantee_events``: a draw for work the office performed, a partial prorated release by
   stage, the final release on as-built plans by a licensed engineer, § 540-8D(1)).
   Append-only and private: a guarantee's balance is replayed from its events.
6. Versions of the erosion and sediment control plan (``plan_versions``, § 540-9B, § 540-8E(2)):
   the original (version 0) and each amendment (1, 2, ...) with its trigger (§ 540-9B(1)-(3)),
   the plan's date, who asked for it, the written permission (date, by whom) that must come
   before the modification takes effect, and an optional plan file with its SHA-256; and the
   office's notices of changes needed (§ 540-9B(3); no version number) that an amended plan
   answers later (``notice_id``). Append-only: a notice is answered by a row of its own.
   Only the current version's date is public.
7. ``appeals`` gains the kind of order or decision appealed.
8. ``history``: one ordered, append-only stream of typed events per permit (and per
   enforcement case without a permit): :mod:`esc_gis.registry.domain.events`. Every state,
   clock and balance is folded from it (:mod:`esc_gis.registry.domain.fold`); the tables above
   are its projections, which ``esc-gis permits verify`` rebuilds and compares. The migration
   replays a registry's existing tables into the history (:mod:`esc_gis.registry.store.replay`).
9. ``inspections`` gains who inspected (``inspected_by``: ``holder`` or ``office``; only the
   holder's complete reports meet the duty of § 540-8E(6)), ``pre_start`` (§ 540-7B(5)(a)),
   ``adjoining_repairs`` (§ 540-8E(5)) and an office inspection's checklist
   (``on_site_documents``, § 540-8E(7); ``certificate_posted``, § 540-8E(8)). Rows before it
   keep NULL: read as the holder's, as they were counted when recorded.
10. ``permits`` gains ``disturbed_acres``, a generated column (``disturbed_sqft`` in acres, to 3
    places), so the public view's acres is a column with a declared type: a GeoPackage view
    column has one only where it names a table's column (a CAST does not give one), and GDAL's
    GeoPackage validator (requirement 5) refuses a feature column without an allowed type.
    Virtual in SQLite (``ALTER TABLE`` cannot add a stored one), stored in PostgreSQL.
11. One writer per table: every table above but the history, the parties, the photos and the
    counters is a projection of the history, written only by its projector
    (:mod:`esc_gis.registry.store.projection`). ``history`` gains ``log`` (the kind of the
    event's line in the clerk's log, NULL where the log shows none); ``decision_clocks`` is
    the projection of each permit's § 540-8C decision clock (the day it runs from and the
    event that started it). The migration completes each event with the facts its rows hold
    (:mod:`esc_gis.registry.store.upcast`), rebuilds every projection from the history and
    refuses to finish if the rebuild differs from the tables in anything but the permits'
    ``updated_at``; on PostgreSQL every reference becomes deferrable, so a rebuild may clear
    a table others refer to within its transaction.
12. ``permits`` gains the screening's facts of the site (``jurisdiction``: inside, partial or
    outside; ``disturbed_in_village_sqft``, the disturbance inside the Village, § 540-4B) and
    ``earlier_permits``, the earlier applications or permits on the same site that a new
    application follows (issue 46). Each comes from the application's ``received`` event (or a
    ``remeasured`` one): the migration fills them from the history where its events carry them;
    a permit received before it has none (NULL: not recorded then), never a value recomputed
    now. The columns are added by :func:`add_permit_columns`, which migration 11's rebuild calls
    too: it writes today's projection, which has them.
13. ``permits_published`` (:data:`PUBLISHED_VIEW`, below): what the web service publishes and
    nothing else (issue 47). No table changes; the version says a registry has the view, so
    ``esc-gis serve`` and every command ask for ``permits init`` on an older one, which makes it.

Outside the migrations
----------------------
``permits_public``
    A view of the permits' public columns: what ``permits export`` writes without
    ``--private`` (:meth:`Registry.frame`), with the site geometry. Remade by every
    ``permits init`` after the migrations (:func:`public_view`), so it always follows the
    ``permits`` table. On PostGIS the reader role of ``permits init --roles`` reads this view
    and the published one only; in a GeoPackage it is a layer QGIS lists, and no protection.
``permits_published``
    The published columns (:data:`esc_gis.publication.PUBLISHED_COLUMNS`, with ``fid`` and the
    site) of the permits in the states the public map shows (:data:`esc_gis.publication.PUBLIC_STATUS`),
    read from ``permits_public``: the one thing the web service reads, so no filter, sort or
    query of a client can reach a column or a permit it does not publish. On PostGIS the reader
    role reads it too; in a GeoPackage it is a layer as the public view is.
``plan_in_effect``
    Each permit's current plan version's date (the highest approved version in effect today
    on the office's clock): the public view joins it, so its ``plan_date`` names a ``DATE``
    column and keeps that type in a GeoPackage.
:data:`GRANTS`
    What each PostGIS role may do on each table (:mod:`esc_gis.registry.store.roles`).
"""

from __future__ import annotations

__all__ = [
    "AMENDMENT_TABLES",
    "APPEND_ONLY",
    "CLOCK_TABLES",
    "ENFORCEMENT_TABLES",
    "FEE_TABLES",
    "GRANTS",
    "HISTORY_TABLES",
    "INSPECTION_COLUMNS_V9",
    "INSPECTION_TABLES",
    "MIGRATIONS",
    "PERMIT_COLUMNS",
    "PERMIT_COLUMNS_V12",
    "PLAN_VIEW",
    "PUBLIC_VIEW",
    "PUBLISHED_VIEW",
    "ROLE_KINDS",
    "SCHEMA_VERSION",
    "TABLES",
    "Migration",
    "add_permit_columns",
    "append_only_triggers",
    "create_table",
    "public_view",
    "published_kinds",
]

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from esc_gis.publication import PUBLIC_STATUS, PUBLISHED_COLUMNS

#: (name, kind, constraint) of each table's columns, in order.
_PERMIT_COLUMNS_V1: tuple[tuple[str, str, str], ...] = (
    ("fid", "serial", "PRIMARY KEY"),  # a GeoPackage feature table needs an integer key
    ("permit_number", "text", "NOT NULL UNIQUE"),
    ("parcel_id", "text", ""),
    ("site_address", "text", "NOT NULL"),
    ("legal_description", "text", ""),
    ("status", "text", "NOT NULL"),
    ("site_sqft", "real", "NOT NULL"),
    ("disturbed_sqft", "real", "NOT NULL"),
    ("permit_decision", "text", ""),
    ("standards", "text", ""),
    ("sediment_standard", "bool", ""),
    ("building_permit_expires", "date", ""),
    ("received_on", "date", "NOT NULL"),
    ("information_requested_on", "date", ""),
    ("information_received_on", "date", ""),
    ("decided_on", "date", ""),
    ("issued_on", "date", ""),
    ("expires_on", "date", ""),
    ("started_at", "datetime", ""),
    ("start_notice_at", "datetime", ""),
    ("work_stopped_on", "date", ""),
    ("stockpile_since", "date", ""),
    ("final_on", "date", ""),
    ("updated_at", "datetime", "NOT NULL"),
    ("geom", "geom", ""),
)
#: Columns migration 2 adds to ``permits`` (appended: a GeoPackage's ALTER TABLE cannot insert).
PERMIT_COLUMNS_V2: tuple[tuple[str, str, str], ...] = (
    ("plan_id", "text", ""),
    ("activity", "text", ""),
    ("plan_disturbed_sqft", "real", ""),
    ("resume_expected_on", "date", ""),
    ("work_resumed_on", "date", ""),
)
#: Columns migration 12 adds to ``permits``: the screening's facts of the site (issue 46), where
#: it lies (``jurisdiction``: inside, partial, outside, § 540-4B) and how much of its disturbance
#: is inside the Village, as the screening engine decided them; and the earlier applications or
#: permits on the same site whose coverage had ended when this one was received (the link a new
#: application carries, :mod:`esc_gis.registry.domain.overlap`), their numbers comma-separated.
PERMIT_COLUMNS_V12: tuple[tuple[str, str, str], ...] = (
    ("jurisdiction", "text", ""),
    ("disturbed_in_village_sqft", "real", ""),
    ("earlier_permits", "text", ""),
)
PERMIT_COLUMNS = _PERMIT_COLUMNS_V1 + PERMIT_COLUMNS_V2 + PERMIT_COLUMNS_V12
#: The tables migration 1 made (later tables arrive by their own migrations).
_V1_TABLES = ("permits", "disturbed_limits", "parties", "events", "permit_counters")
#: The tables migration 3 makes: inspection reports and what hangs off them.
INSPECTION_TABLES = ("inspections", "deficiencies", "repairs", "inspection_photos")
#: The tables migration 4 makes: enforcement cases and their append-only events.
ENFORCEMENT_TABLES = ("enforcement_cases", "enforcement_events", "appeals", "appeal_decisions")
#: The tables migration 5 makes: fees paid and financial guarantees with their events.
FEE_TABLES = ("fees", "guarantees", "guarantee_events")
#: The table migration 6 makes: the plan's versions and the office's notices of changes needed.
AMENDMENT_TABLES = ("plan_versions",)
#: The table migration 8 makes: every stream's typed events (the one home of each fact).
HISTORY_TABLES = ("history",)
#: The table migration 11 makes: each permit's decision clock, a projection of its history.
CLOCK_TABLES = ("decision_clocks",)
#: The column migration 11 adds to the history: the event's line in the clerk's log.
HISTORY_COLUMNS_V11: tuple[tuple[str, str, str], ...] = (("log", "text", ""),)
#: The column migration 7 adds to appeals: what kind of order or decision is appealed.
APPEAL_COLUMNS_V7: tuple[tuple[str, str, str], ...] = (("appealed_kind", "text", ""),)
#: The columns migration 9 adds to inspections (appended: a GeoPackage's ALTER TABLE cannot insert):
#: who inspected (``holder``: the permit holder's own inspection, § 540-8E(6); ``office``: the
#: administering authority's, § 540-8E(7), § 540-11), whether it was made before land disturbance
#: began (§ 540-7B(5)(a)), the repairs of damage to adjoining surfaces the report documents
#: (§ 540-8E(5)), and an office inspection's findings on the documents kept at the site
#: (§ 540-8E(7)) and the posted certificate (§ 540-8E(8)): NULL where not checked.
INSPECTION_COLUMNS_V9: tuple[tuple[str, str, str], ...] = (
    ("inspected_by", "text", ""),
    ("pre_start", "bool", ""),
    ("adjoining_repairs", "text", ""),
    ("on_site_documents", "bool", ""),
    ("certificate_posted", "bool", ""),
)
TABLES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "history": (
        ("id", "serial", "PRIMARY KEY"),
        ("stream", "text", "NOT NULL"),  # the permit number, or the case id of a case without one
        ("seq", "int", "NOT NULL"),  # 1, 2, ... within the stream
        ("kind", "text", "NOT NULL"),
        ("recorded_at", "datetime", "NOT NULL"),
        ("who", "text", "NOT NULL"),
        ("on_date", "date", ""),  # the Village-clock day it took effect
        ("at", "datetime", ""),  # the time it took effect, where hours count
        ("why", "text", ""),
        ("data", "text", "NOT NULL"),  # JSON: the facts of its kind
        *HISTORY_COLUMNS_V11,
    ),
    "decision_clocks": (
        ("fid", "serial", "PRIMARY KEY"),  # a GeoPackage table needs an integer key (requirement 119)
        ("permit_number", "text", "NOT NULL UNIQUE REFERENCES permits(permit_number)"),
        ("starts_on", "date", ""),  # NULL: no clock runs (none yet, or the permit is decided)
        ("seq", "int", ""),  # the history event that started it
        ("event", "text", ""),
    ),
    "permits": PERMIT_COLUMNS,
    "disturbed_limits": (
        ("fid", "serial", "PRIMARY KEY"),
        ("permit_number", "text", "NOT NULL UNIQUE REFERENCES permits(permit_number)"),
        ("geom", "geom", ""),
    ),
    "parties": (
        ("id", "serial", "PRIMARY KEY"),
        ("permit_number", "text", "NOT NULL REFERENCES permits(permit_number)"),
        ("role", "text", "NOT NULL"),
        ("name", "text", "NOT NULL"),
        ("organization", "text", ""),
        ("phone", "text", ""),
        ("email", "text", ""),
        ("address", "text", ""),
    ),
    "events": (
        ("id", "serial", "PRIMARY KEY"),
        ("permit_number", "text", "NOT NULL REFERENCES permits(permit_number)"),
        ("at", "datetime", "NOT NULL"),
        ("who", "text", "NOT NULL"),
        ("kind", "text", "NOT NULL"),
        ("from_status", "text", ""),
        ("to_status", "text", ""),
        ("on_date", "date", ""),
        ("days", "int", ""),
        ("detail", "text", ""),
    ),
    "permit_counters": (
        ("year", "int", "PRIMARY KEY"),
        ("last", "int", "NOT NULL"),
    ),
    "inspections": (
        ("fid", "serial", "PRIMARY KEY"),
        ("permit_number", "text", "NOT NULL REFERENCES permits(permit_number)"),
        ("inspected_at", "datetime", "NOT NULL"),
        ("inspector", "text", "NOT NULL"),
        ("assessment", "text", "NOT NULL"),
        ("work_done", "text", ""),
        ("phase", "text", ""),
        ("recorded_by", "text", "NOT NULL"),
        ("recorded_at", "datetime", "NOT NULL"),
        ("geom", "geom", ""),
        *INSPECTION_COLUMNS_V9,
    ),
    "deficiencies": (
        ("id", "serial", "PRIMARY KEY"),
        ("inspection_id", "int", "NOT NULL REFERENCES inspections(fid)"),
        ("permit_number", "text", "NOT NULL REFERENCES permits(permit_number)"),
        ("description", "text", "NOT NULL"),
        ("notified_at", "datetime", ""),
    ),
    "repairs": (
        ("id", "serial", "PRIMARY KEY"),
        ("deficiency_id", "int", "NOT NULL UNIQUE REFERENCES deficiencies(id)"),
        ("permit_number", "text", "NOT NULL REFERENCES permits(permit_number)"),
        ("repaired_at", "datetime", "NOT NULL"),
        ("inspection_id", "int", "REFERENCES inspections(fid)"),
        ("detail", "text", ""),
        ("recorded_by", "text", "NOT NULL"),
        ("recorded_at", "datetime", "NOT NULL"),
    ),
    "inspection_photos": (
        ("id", "serial", "PRIMARY KEY"),
        ("inspection_id", "int", "NOT NULL REFERENCES inspections(fid)"),
        ("filename", "text", "NOT NULL"),
        ("content_type", "text", "NOT NULL"),
        ("sha256", "text", "NOT NULL"),
        ("size_bytes", "int", "NOT NULL"),
        ("data", "blob", "NOT NULL"),
    ),
    "enforcement_cases": (
        ("fid", "serial", "PRIMARY KEY"),
        ("case_id", "text", "NOT NULL UNIQUE"),
        ("permit_number", "text", "REFERENCES permits(permit_number)"),
        ("site_address", "text", ""),
        ("site_ref", "text", ""),
        ("ground", "text", "NOT NULL"),
        ("opened_on", "date", "NOT NULL"),
        ("reasons", "text", "NOT NULL"),
        ("opened_by", "text", "NOT NULL"),
        ("opened_at", "datetime", "NOT NULL"),
        ("geom", "geom", ""),
    ),
    "enforcement_events": (
        ("id", "serial", "PRIMARY KEY"),
        ("case_id", "text", "NOT NULL REFERENCES enforcement_cases(case_id)"),
        ("at", "datetime", "NOT NULL"),
        ("who", "text", "NOT NULL"),
        ("kind", "text", "NOT NULL"),
        ("on_date", "date", "NOT NULL"),
        ("costs", "real", ""),
        ("costs_from", "text", ""),
        ("detail", "text", ""),
    ),
    "appeals": (
        ("id", "serial", "PRIMARY KEY"),
        ("appeal_id", "text", "NOT NULL UNIQUE"),
        ("permit_number", "text", "REFERENCES permits(permit_number)"),
        ("case_id", "text", "REFERENCES enforcement_cases(case_id)"),
        ("appealed", "text", "NOT NULL"),
        ("appellant", "text", "NOT NULL"),
        ("appellant_kind", "text", "NOT NULL"),
        ("filed_on", "date", "NOT NULL"),
        ("grounds", "text", "NOT NULL"),
        ("recorded_by", "text", "NOT NULL"),
        ("recorded_at", "datetime", "NOT NULL"),
        *APPEAL_COLUMNS_V7,
    ),
    "appeal_decisions": (
        ("id", "serial", "PRIMARY KEY"),
        ("appeal_id", "text", "NOT NULL UNIQUE REFERENCES appeals(appeal_id)"),
        ("decided_on", "date", "NOT NULL"),
        ("body", "text", "NOT NULL"),
        ("outcome", "text", "NOT NULL"),
        ("conditions", "text", ""),
        ("effect", "text", ""),
        ("recorded_by", "text", "NOT NULL"),
        ("recorded_at", "datetime", "NOT NULL"),
    ),
    "fees": (
        ("id", "serial", "PRIMARY KEY"),
        ("permit_number", "text", "NOT NULL REFERENCES permits(permit_number)"),
        ("kind", "text", "NOT NULL"),
        ("amount", "real", "NOT NULL"),
        ("paid_on", "date", "NOT NULL"),
        ("receipt", "text", "NOT NULL UNIQUE"),
        ("schedule_resolution", "text", ""),
        ("recorded_by", "text", "NOT NULL"),
        ("recorded_at", "datetime", "NOT NULL"),
    ),
    "guarantees": (
        ("id", "serial", "PRIMARY KEY"),
        ("permit_number", "text", "NOT NULL REFERENCES permits(permit_number)"),
        ("type", "text", "NOT NULL"),
        ("amount", "real", "NOT NULL"),
        ("received_on", "date", "NOT NULL"),
        ("expires_on", "date", ""),
        ("recorded_by", "text", "NOT NULL"),
        ("recorded_at", "datetime", "NOT NULL"),
    ),
    "guarantee_events": (
        ("id", "serial", "PRIMARY KEY"),
        ("guarantee_id", "int", "NOT NULL REFERENCES guarantees(id)"),
        ("permit_number", "text", "NOT NULL REFERENCES permits(permit_number)"),
        ("kind", "text", "NOT NULL"),
        ("on_date", "date", "NOT NULL"),
        ("amount", "real", ""),
        ("reason", "text", ""),
        ("stage", "text", ""),
        ("engineer", "text", ""),
        ("recorded_by", "text", "NOT NULL"),
        ("recorded_at", "datetime", "NOT NULL"),
    ),
    "plan_versions": (
        ("id", "serial", "PRIMARY KEY"),
        ("permit_number", "text", "NOT NULL REFERENCES permits(permit_number)"),
        ("version", "int", ""),  # 0 the original, 1, 2, ... amendments; NULL for a notice
        ("trigger_code", "text", "NOT NULL"),  # original, B1, B2, B3 (the profile's [amendments.triggers])
        ("status", "text", "NOT NULL"),  # requested (the office's notice) or approved (a version)
        ("description", "text", "NOT NULL"),
        ("plan_date", "date", ""),
        ("requested_by", "text", ""),
        ("requested_on", "date", ""),
        ("permission_on", "date", ""),
        ("permission_by", "text", ""),
        ("effective_on", "date", ""),
        ("notice_id", "int", "REFERENCES plan_versions(id)"),
        ("plan_file", "text", ""),
        ("plan_sha256", "text", ""),
        ("recorded_by", "text", "NOT NULL"),
        ("recorded_at", "datetime", "NOT NULL"),
    ),
}
#: Tables that are GIS layers (features) and their geometry type.
LAYERS = {
    "permits": "MULTIPOLYGON",
    "disturbed_limits": "MULTIPOLYGON",
    "inspections": "POINT",
    "enforcement_cases": "MULTIPOLYGON",
}

_TYPES = {
    "sqlite": {
        "text": "TEXT",
        "int": "INTEGER",
        "real": "REAL",
        "bool": "BOOLEAN",
        "date": "DATE",
        "datetime": "DATETIME",
        "blob": "BLOB",
        "serial": "INTEGER",
        "geom": "{gtype}",
    },
    "postgis": {
        "text": "text",
        "int": "integer",
        "real": "double precision",
        "bool": "boolean",
        "date": "date",
        "datetime": "timestamptz",
        "blob": "bytea",
        "serial": "bigserial",
        "geom": "geometry({gtype}, {srid})",
    },
}


def create_table(dialect: str, table: str, srid: int, columns: tuple[tuple[str, str, str], ...] | None = None) -> str:
    """Return the CREATE TABLE statement of ``table`` for ``dialect`` ("sqlite" or "postgis").

    ``columns`` defaults to the table's current columns; a migration passes the ones of its version.
    """
    types = _TYPES[dialect]
    cols = []
    for name, kind, constraint in columns or TABLES[table]:
        sql_type = types[kind].format(gtype=LAYERS.get(table, ""), srid=srid)
        if dialect == "sqlite" and kind == "serial":
            constraint = "PRIMARY KEY AUTOINCREMENT"
        cols.append(f'"{name}" {sql_type} {constraint}'.rstrip())
    return f'CREATE TABLE "{table}" ({", ".join(cols)})'


#: The tables no row of is ever changed or removed by a command: the history and the evidence
#: tables (a rebuild of the projections lifts and restores their triggers, never the history's).
APPEND_ONLY = ("events", *INSPECTION_TABLES, *ENFORCEMENT_TABLES, *FEE_TABLES, *AMENDMENT_TABLES, *HISTORY_TABLES)


def append_only_triggers(dialect: str, tables: Collection[str], *, drop: bool = False) -> list[str]:
    """Return the statements that make ``tables`` append-only (or, with ``drop``, lift that).

    PostgreSQL's trigger function is made once, with the history (migration 1).
    """
    if dialect == "sqlite":
        if drop:
            return [f"DROP TRIGGER IF EXISTS {t}_no_{op}" for t in tables for op in ("update", "delete")]
        return [
            f"CREATE TRIGGER {t}_no_{op.lower()} BEFORE {op} ON {t} "
            "BEGIN SELECT RAISE(ABORT, 'the permit history is append-only'); END"
            for t in tables
            for op in ("UPDATE", "DELETE")
        ]
    if drop:
        return [f"DROP TRIGGER IF EXISTS {t}_append_only ON {t}" for t in tables]
    return [
        f"CREATE TRIGGER {t}_append_only BEFORE UPDATE OR DELETE ON {t} "
        "FOR EACH ROW EXECUTE FUNCTION esc_gis_append_only()"
        for t in tables
    ]


def _append_only(dialect: str, tables: tuple[str, ...] = ("events",)) -> list[str]:
    """Triggers that make ``tables`` append-only: a row is never changed or removed.

    PostgreSQL's trigger function is made once, with the history (migration 1).
    """
    function = (
        [
            "CREATE FUNCTION esc_gis_append_only() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'the permit history is append-only'; END $$"
        ]
        if dialect == "postgis" and "events" in tables
        else []
    )
    return function + append_only_triggers(dialect, tables)


def _v1(dialect: str, srid: int) -> list[str]:
    # Version 1's columns, frozen: later columns arrive by their own migrations.
    tables = [create_table(dialect, t, srid, _PERMIT_COLUMNS_V1 if t == "permits" else None) for t in _V1_TABLES]
    indexes = [
        "CREATE INDEX events_permit ON events (permit_number, id)",
        "CREATE INDEX parties_permit ON parties (permit_number)",
        "CREATE INDEX permits_status ON permits (status)",
    ]
    return tables + indexes + _append_only(dialect)


def _v2(dialect: str, srid: int) -> list[str]:
    types = _TYPES[dialect]
    return [f'ALTER TABLE permits ADD COLUMN "{name}" {types[kind]}' for name, kind, _ in PERMIT_COLUMNS_V2]


def _new_tables(
    dialect: str,
    srid: int,
    tables: tuple[str, ...],
    indexes: list[str],
    columns: dict[str, tuple[tuple[str, str, str], ...]] | None = None,
) -> list[str]:
    """Create append-only ``tables`` with their ``indexes``: every migration since the third is this.

    ``columns`` gives a table's columns as of this migration, where a later one adds some.
    """
    made = [create_table(dialect, t, srid, (columns or {}).get(t)) for t in tables]
    return made + indexes + _append_only(dialect, tables)


def _v3(dialect: str, srid: int) -> list[str]:
    return _new_tables(
        dialect,
        srid,
        INSPECTION_TABLES,
        [
            "CREATE INDEX inspections_permit ON inspections (permit_number, inspected_at)",
            "CREATE INDEX deficiencies_permit ON deficiencies (permit_number)",
            "CREATE INDEX deficiencies_inspection ON deficiencies (inspection_id)",
            "CREATE INDEX photos_inspection ON inspection_photos (inspection_id)",
        ],
        # Inspections as migration 3 made them: migration 9 adds who inspected and the checklist.
        {"inspections": TABLES["inspections"][: -len(INSPECTION_COLUMNS_V9)]},
    )


def _v4(dialect: str, srid: int) -> list[str]:
    return _new_tables(
        dialect,
        srid,
        ENFORCEMENT_TABLES,
        [
            "CREATE INDEX enforcement_cases_permit ON enforcement_cases (permit_number)",
            "CREATE INDEX enforcement_events_case ON enforcement_events (case_id, id)",
            "CREATE INDEX appeals_permit ON appeals (permit_number)",
        ],
        # Appeals as migration 4 made them: migration 7 adds what kind of order is appealed.
        {"appeals": TABLES["appeals"][: -len(APPEAL_COLUMNS_V7)]},
    )


def _v5(dialect: str, srid: int) -> list[str]:
    return _new_tables(
        dialect,
        srid,
        FEE_TABLES,
        [
            "CREATE INDEX fees_permit ON fees (permit_number)",
            "CREATE INDEX guarantees_permit ON guarantees (permit_number)",
            "CREATE INDEX guarantee_events_guarantee ON guarantee_events (guarantee_id, id)",
        ],
    )


def _v6(dialect: str, srid: int) -> list[str]:
    # Unique indexes, not a check in Python alone: two writers cannot both take version 2,
    # nor both answer one notice.
    return _new_tables(
        dialect,
        srid,
        AMENDMENT_TABLES,
        [
            "CREATE UNIQUE INDEX plan_versions_version ON plan_versions (permit_number, version)",
            "CREATE UNIQUE INDEX plan_versions_notice ON plan_versions (notice_id)",
        ],
    )


def _v7(dialect: str, srid: int) -> list[str]:
    # Appeals recorded before it have no kind (NULL): their decisions keep the old reading.
    types = _TYPES[dialect]
    return [f'ALTER TABLE appeals ADD COLUMN "{name}" {types[kind]}' for name, kind, _ in APPEAL_COLUMNS_V7]


def _v8(dialect: str, srid: int) -> list[str]:
    # (stream, seq) unique: two writers cannot both append an event at one place in a stream.
    return _new_tables(
        dialect,
        srid,
        HISTORY_TABLES,
        ["CREATE UNIQUE INDEX history_stream ON history (stream, seq)", "CREATE INDEX history_kind ON history (kind)"],
        # The history as migration 8 made it: migration 11 adds each event's line in the clerk's log.
        {"history": TABLES["history"][: -len(HISTORY_COLUMNS_V11)]},
    )


def _v8_replay(backend: Any, cur: Any) -> None:
    # A registry written before the history: its tables replayed into events, in the order recorded.
    from esc_gis.registry.store.replay import replay_into_history

    replay_into_history(backend, cur)


def _v9(dialect: str, srid: int) -> list[str]:
    # Inspections recorded before it say nothing of who inspected (NULL): the fold reads them as
    # the permit holder's (esc_gis.registry.domain.fold.UNRECORDED_BY), as they were counted then.
    types = _TYPES[dialect]
    return [f'ALTER TABLE inspections ADD COLUMN "{name}" {types[kind]}' for name, kind, _ in INSPECTION_COLUMNS_V9]


def _v10(dialect: str, srid: int) -> list[str]:
    from esc_gis.units import SQFT_PER_ACRE

    acres = {
        "sqlite": f"REAL GENERATED ALWAYS AS (round(disturbed_sqft / {SQFT_PER_ACRE!r}, 3)) VIRTUAL",
        "postgis": (
            f"double precision GENERATED ALWAYS AS (round((disturbed_sqft / {SQFT_PER_ACRE!r})::numeric, 3)"
            "::double precision) STORED"
        ),
    }[dialect]
    return [f'ALTER TABLE permits ADD COLUMN "disturbed_acres" {acres}']


def _v11(dialect: str, srid: int) -> list[str]:
    types = _TYPES[dialect]
    log = [f'ALTER TABLE history ADD COLUMN "{name}" {types[kind]}' for name, kind, _ in HISTORY_COLUMNS_V11]
    return [*log, *(create_table(dialect, t, srid) for t in CLOCK_TABLES)]


def _v11_upcast(backend: Any, cur: Any) -> None:
    # Every event completed with the facts of its rows, then every projection rebuilt from them,
    # by today's projectors: they write the permits' columns of migration 12 too.
    from esc_gis.registry.store.upcast import upcast_and_rebuild

    add_permit_columns(backend, cur)
    upcast_and_rebuild(backend, cur)


def _v13(dialect: str, srid: int) -> list[str]:
    return []  # the view is made with the public view, after the migrations (public_view)


def _permit_columns_there(backend: Any, cur: Any) -> set[str]:
    if backend.dialect == "sqlite":
        cur.execute("SELECT name FROM pragma_table_info('permits')")
    else:
        # The catalog by table name (information_schema.columns scans every schema's tables).
        cur.execute(
            "SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 'permits' "
            "AND c.relnamespace = current_schema()::regnamespace AND a.attnum > 0 AND NOT a.attisdropped"
        )
    return {str(r[0]) for r in cur.fetchall()}


def add_permit_columns(backend: Any, cur: Any) -> None:
    """Add the columns of migration 12 to ``permits`` where they are not there yet.

    Migration 11 rebuilds every projection with today's projectors, which write them, so it
    adds them first; migration 12 then finds them there. ``ALTER TABLE ... ADD COLUMN`` in
    both dialects (appended: a GeoPackage's cannot insert).
    """
    there = _permit_columns_there(backend, cur)
    types = _TYPES[backend.dialect]
    for name, kind, _ in PERMIT_COLUMNS_V12:
        if name not in there:
            cur.execute(f'ALTER TABLE permits ADD COLUMN "{name}" {types[kind]}')


def _v12(dialect: str, srid: int) -> list[str]:
    return []  # the columns: add_permit_columns, in the data step (migration 11 may have added them)


def _v12_facts(backend: Any, cur: Any) -> None:
    # The columns, then their values where the history carries them (the application's received
    # event, a remeasurement): the projector's reading, never a value recomputed now.
    import json

    add_permit_columns(backend, cur)
    names = [n for n, _, _ in PERMIT_COLUMNS_V12]
    cur.execute("SELECT stream, kind, data FROM history WHERE kind IN ('received', 'remeasured') ORDER BY id")
    found: dict[str, dict[str, Any]] = {}
    for stream, kind, data in cur.fetchall():
        d = json.loads(data) if data else {}
        facts = d.get("permit") if kind == "received" else d.get("fields")
        for n in names:
            if isinstance(facts, dict) and n in facts:
                found.setdefault(str(stream), {})[n] = facts[n]
    ph = backend.ph
    for stream, values in found.items():
        sets = ", ".join(f'"{n}" = {ph}' for n in values)
        params = [backend.dump(_PERMIT_KINDS[n], v) for n, v in values.items()]
        cur.execute(f"UPDATE permits SET {sets} WHERE permit_number = {ph}", (*params, stream))


_PERMIT_KINDS = {n: k for n, k, _ in PERMIT_COLUMNS_V12}


@dataclass(frozen=True)
class Migration:
    """One schema version: what it changes, the statements per dialect, and a data step if any."""

    version: int
    description: str
    statements: Callable[[str, int], list[str]]
    data: Callable[[Any, Any], None] | None = None


#: Every migration, oldest first; a registry records each one it has applied.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "permits, disturbed limits, parties, append-only events, permit counters", _v1),
    Migration(2, "permits: common plan, activity, plan total; expected and actual resumption of work", _v2),
    Migration(3, "inspections (point), deficiencies, repairs, inspection photos; append-only", _v3),
    Migration(
        4, "enforcement cases (with or without a permit) and their events; appeals and decisions; append-only", _v4
    ),
    Migration(5, "fees paid; financial guarantees and their draws and releases; append-only", _v5),
    Migration(6, "plan versions (original, amendments with written permission) and notices; append-only", _v6),
    Migration(7, "appeals: the kind of order or decision appealed (the board does not hear some)", _v7),
    Migration(
        8, "history: one append-only stream of typed events per permit or case; tables are projections", _v8, _v8_replay
    ),
    Migration(9, "inspections: who inspected (holder or office), pre-start, adjoining repairs, site checklist", _v9),
    Migration(10, "permits: disturbed acres, generated from the square feet (the public view's typed column)", _v10),
    Migration(
        11,
        "one writer per table: events completed with their rows' facts, projections rebuilt; decision clocks",
        _v11,
        _v11_upcast,
    ),
    Migration(
        12,
        "permits: the screening's jurisdiction and disturbance inside the Village; earlier permits on the site",
        _v12,
        _v12_facts,
    ),
    Migration(13, "permits_published: the columns and permits the web service publishes, and nothing else", _v13),
)
SCHEMA_VERSION = MIGRATIONS[-1].version
#: The generated column migration 10 adds to ``permits``: not in :data:`PERMIT_COLUMNS`, which
#: the registry writes and reads, since no one writes it.
DISTURBED_ACRES = "disturbed_acres"


# --- Outside the migrations: the public view and the roles' privileges ----------------------------

#: The view of the permits' public columns (PostGIS), which the reader role may read (and :data:`PUBLISHED_VIEW`).
PUBLIC_VIEW = "permits_public"
#: The view the web service reads: the published columns of the permits in the states shown (migration 13).
PUBLISHED_VIEW = "permits_published"
#: The view of each permit's plan date in effect today, which :data:`PUBLIC_VIEW` joins.
PLAN_VIEW = "plan_in_effect"
#: The PostGIS group roles of ``permits init --roles``: the public reader, the inspector, the clerk.
ROLE_KINDS = ("reader", "inspector", "clerk")
#: What each role may do on each table or view, one line per table: privileges as SQL's GRANT
#: writes them (a column list limits one to those columns). A role not named gets nothing, and a
#: table not (yet) in the database is skipped, so a new table is one line here; a test checks
#: every table of :data:`TABLES` has its line. INSERT also grants the use of the table's id sequence.
#: The inspector records inspections, deficiencies, repairs and photos and reads the permits to
#: find them; it may touch ``permits.updated_at`` only (the row lock of a write needs an UPDATE
#: privilege on some column), never the status, and never reads the parties or the office's
#: money. The clerk does the office's work; the migrations stay with the registry's owner.
GRANTS: dict[str, dict[str, str]] = {
    PUBLIC_VIEW: {"reader": "SELECT", "inspector": "SELECT", "clerk": "SELECT"},
    PUBLISHED_VIEW: {"reader": "SELECT", "inspector": "SELECT", "clerk": "SELECT"},
    "esc_gis_schema": {"inspector": "SELECT", "clerk": "SELECT"},
    "permits": {"inspector": "SELECT, UPDATE (updated_at)", "clerk": "SELECT, INSERT, UPDATE"},
    # UPDATE: an undecided application's limits are measured anew (`permits update --disturbed`).
    "disturbed_limits": {"inspector": "SELECT", "clerk": "SELECT, INSERT, UPDATE"},
    "parties": {"clerk": "SELECT, INSERT"},
    "events": {"inspector": "SELECT, INSERT", "clerk": "SELECT, INSERT"},
    "history": {"inspector": "SELECT, INSERT", "clerk": "SELECT, INSERT"},
    # The projection of the decision clock: each received application writes its row.
    "decision_clocks": {"inspector": "SELECT", "clerk": "SELECT, INSERT, UPDATE"},
    "permit_counters": {"clerk": "SELECT, INSERT, UPDATE"},
    "inspections": {"inspector": "SELECT, INSERT", "clerk": "SELECT, INSERT"},
    "deficiencies": {"inspector": "SELECT, INSERT", "clerk": "SELECT, INSERT"},
    "repairs": {"inspector": "SELECT, INSERT", "clerk": "SELECT, INSERT"},
    "inspection_photos": {"inspector": "SELECT, INSERT", "clerk": "SELECT, INSERT"},
    "enforcement_cases": {"clerk": "SELECT, INSERT"},
    "enforcement_events": {"clerk": "SELECT, INSERT"},
    "appeals": {"clerk": "SELECT, INSERT"},
    "appeal_decisions": {"clerk": "SELECT, INSERT"},
    "fees": {"clerk": "SELECT, INSERT"},
    "guarantees": {"clerk": "SELECT, INSERT"},
    "guarantee_events": {"clerk": "SELECT, INSERT"},
    "plan_versions": {"clerk": "SELECT, INSERT"},
}


def public_view(
    dialect: str,
    *,
    present: Collection[str] | None = None,
    plan_versions: bool = True,
    timezone: str = "",
    sqft_per_acre: float = 43_560.0,
) -> list[str]:
    """Return the statements that (re)make :data:`PUBLIC_VIEW`: the permits' public columns and the site.

    The columns are those :meth:`esc_gis.registry.Registry.frame` gives without ``private``:
    every ``permits`` column, ``disturbed_acres`` (to 3 places) and ``plan_date``, the date of
    the highest approved plan version in effect today on the office's clock; then ``geom``.
    ``fid`` comes first, so QGIS takes it as the view's key. Built from :data:`PERMIT_COLUMNS`,
    so a column added to ``permits`` is public here too, as it is in the export.

    Parameters
    ----------
    dialect : str
        "postgis" or "sqlite". In a GeoPackage the view is a convenience, not a protection:
        whoever has the file reads every table (the public should get an export).
    present : collection of str, optional
        The columns ``permits`` has (default all of :data:`PERMIT_COLUMNS`): a registry part-way
        through its migrations gets a view of those it has.
    plan_versions : bool
        Whether the ``plan_versions`` table exists; without it ``plan_date`` is empty.
    timezone : str
        The office's IANA time zone (the profile's); '' for the server's. SQLite knows no time
        zones: a GeoPackage's "today" is the reading machine's.
    sqft_per_acre : float
        Square feet per acre (:data:`esc_gis.units.SQFT_PER_ACRE`).

    Raises
    ------
    KeyError
        If ``dialect`` is neither.
    """
    published = [_published_view()] if present is None or set(_PUBLISHED_SOURCES) <= set(present) else []
    zone = timezone.replace("'", "''")
    today = {
        "postgis": f"(now() AT TIME ZONE '{zone}')::date" if timezone else "current_date",
        "sqlite": "date('now', 'localtime')",  # dates are ISO text there: they compare as text
    }[dialect]
    # Each value names a column (a generated one, a view's), so a GeoPackage view keeps its
    # declared type (GDAL's validator, requirement 5); the expressions are for a registry
    # part-way through its migrations, which the view outlives only until they end.
    if present is None or DISTURBED_ACRES in present:
        acres = f"p.{DISTURBED_ACRES}"
    else:
        acres = {
            "postgis": f"round((p.disturbed_sqft / {sqft_per_acre!r})::numeric, 3)::double precision",
            "sqlite": f"round(p.disturbed_sqft / {sqft_per_acre!r}, 3)",
        }[dialect]
    names = [n for n, _, _ in PERMIT_COLUMNS if n != "geom" and (present is None or n in present)]
    # The published view reads the public view: dropped before it, made after it.
    drop = [
        f"DROP VIEW IF EXISTS {PUBLISHED_VIEW}",
        f"DROP VIEW IF EXISTS {PUBLIC_VIEW}",
        f"DROP VIEW IF EXISTS {PLAN_VIEW}",
    ]
    cols = ", ".join(f"p.{chr(34)}{n}{chr(34)}" for n in names)
    if not plan_versions:
        no_date = "NULL::date" if dialect == "postgis" else "NULL"
        return [*drop, f"CREATE VIEW {PUBLIC_VIEW} AS SELECT {cols}, {acres} AS disturbed_acres, "
                f"{no_date} AS plan_date, p.geom FROM permits p", *published]  # fmt: skip

    def in_effect(t: str) -> str:  # an approved version of table alias t, in effect today
        return f"{t}.status = 'approved' AND ({t}.effective_on IS NULL OR {t}.effective_on <= {today})"

    return [
        *drop,
        f"CREATE VIEW {PLAN_VIEW} AS SELECT v.permit_number AS permit_number, v.plan_date AS plan_date "
        f"FROM plan_versions v WHERE {in_effect('v')} AND NOT EXISTS (SELECT 1 FROM plan_versions w "
        f"WHERE w.permit_number = v.permit_number AND w.version > v.version AND {in_effect('w')})",
        # A join in SQLite, where only a column reference keeps a declared type; a subquery in
        # PostgreSQL, where the view stays one table's: its writes are refused as privileges,
        # not as a join no one may update (the reader role's test).
        f"CREATE VIEW {PUBLIC_VIEW} AS SELECT {cols}, {acres} AS disturbed_acres, c.plan_date AS plan_date, p.geom "
        f"FROM permits p LEFT JOIN {PLAN_VIEW} c ON c.permit_number = p.permit_number"
        if dialect == "sqlite"
        else f"CREATE VIEW {PUBLIC_VIEW} AS SELECT {cols}, {acres} AS disturbed_acres, (SELECT c.plan_date "
        f"FROM {PLAN_VIEW} c WHERE c.permit_number = p.permit_number) AS plan_date, p.geom FROM permits p",
        *published,
    ]


#: The columns of ``permits`` the published view reads (the others are the public view's own).
_PUBLISHED_SOURCES = tuple(n for n in ("fid", *PUBLISHED_COLUMNS) if n not in (DISTURBED_ACRES, "plan_date"))


def _published_view() -> str:
    """Return the statement that makes :data:`PUBLISHED_VIEW` from :data:`PUBLIC_VIEW`.

    Each column names the public view's, so a GeoPackage keeps its declared type; the states
    are literals of :data:`esc_gis.publication.PUBLIC_STATUS` (code, not a client's text).
    """
    cols = ", ".join(f'"{n}"' for n in ("fid", *PUBLISHED_COLUMNS, "geom"))
    states = ", ".join("'" + s.replace("'", "''") + "'" for s in PUBLIC_STATUS)
    return f"CREATE VIEW {PUBLISHED_VIEW} AS SELECT {cols} FROM {PUBLIC_VIEW} WHERE status IN ({states})"


def published_kinds() -> dict[str, str]:
    """Return each column of :data:`PUBLISHED_VIEW` but the site, with its kind (``serial``, ``text``, ``date``...).

    The web service checks a client's filters by them before any database reads one.

    Examples
    --------
    >>> kinds = published_kinds()
    >>> kinds["fid"], kinds["issued_on"], kinds["disturbed_sqft"], kinds["disturbed_acres"], kinds["plan_date"]
    ('serial', 'date', 'real', 'real', 'date')
    >>> "parcel_id" in kinds
    False
    """
    kinds = {n: k for n, k, _ in PERMIT_COLUMNS}
    kinds.update({DISTURBED_ACRES: "real", "plan_date": "date"})
    return {n: kinds[n] for n in ("fid", *PUBLISHED_COLUMNS)}
