"""The web service's configuration: what it publishes, checked, written as pygeoapi's YAML.

``esc-gis serve`` runs pygeoapi (the OSGeo reference implementation of OGC API) on a
configuration this module writes into a folder of its own (the *state folder*):

- collection ``permits``: the registry's published view (:data:`~esc_gis.registry.store.schema.PUBLISHED_VIEW`),
  which holds the published columns (:data:`PERMIT_PROPERTIES`) of the permits the public map
  shows and nothing else, so no filter or sort of a client reaches another column or permit.
  On PostGIS it is read by pygeoapi's PostgreSQL provider through a login that may read it and
  the public view and nothing else (:func:`check_public_login` refuses any other); on a
  GeoPackage by :class:`esc_gis.serve.provider.GeoPackageProvider`, which opens the file read-only;
- collections ``jurisdiction``, ``waters_lines`` and ``waters_polygons`` (the waters drawn as lines
  and as polygons: :func:`split_waters`), ``protective_areas``, ``steep_slopes`` (with a DEM)
  and ``targeted_areas`` (with one), from the layer set, written once at start-up in CRS84 to
  ``layers.gpkg`` in the state folder, so the service never reads the layer set's files again;
- process ``screen`` (:mod:`esc_gis.serve.process`): the "Do I need a permit?" screening.

A database password never goes into the YAML: it is written ``${ESC_GIS_SERVE_DB_PASSWORD}``,
which pygeoapi reads from the environment the service sets.
"""

from __future__ import annotations

__all__ = [
    "PASSWORD_ENV",
    "PERMIT_PROPERTIES",
    "WATERS_COLLECTIONS",
    "ServiceFiles",
    "ServiceSettings",
    "check_public_login",
    "prepare_service",
    "split_waters",
]

import json
import os
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd

from esc_gis.config.service import PROTECTED as _PROTECTED
from esc_gis.config.service import overrides_problems
from esc_gis.errors import RegistryError, ServiceConfigError
from esc_gis.layers import LayerSet, load_layers
from esc_gis.profile import Profile, load_profile
from esc_gis.publication import PUBLISHED_COLUMNS
from esc_gis.registry.store.backend import is_url
from esc_gis.registry.store.conninfo import Login, effective_login, parse, redact, scrub
from esc_gis.registry.store.schema import PUBLIC_VIEW, PUBLISHED_VIEW, SCHEMA_VERSION
from esc_gis.serve.screen_request import Limits
from esc_gis.validate import ACTIVITIES

#: The environment variable the PostGIS password travels in (never the YAML on disk).
PASSWORD_ENV = "ESC_GIS_SERVE_DB_PASSWORD"
#: The permit columns the service publishes (:data:`esc_gis.publication.PUBLISHED_COLUMNS`).
PERMIT_PROPERTIES = PUBLISHED_COLUMNS
#: PostGIS's own catalogue, readable by everyone on every PostGIS database (not the registry's).
_POSTGIS_CATALOGUE = ("spatial_ref_sys", "geometry_columns", "geography_columns", "raster_columns", "raster_overviews")
CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"


@dataclass(frozen=True)
class ServiceSettings:
    """What ``esc-gis serve`` was asked to publish, and how.

    Parameters
    ----------
    registry : str
        The registry: a GeoPackage path or a ``postgresql://`` URL whose login may read the
        public view only.
    state_dir : Path
        The folder the configuration, the OpenAPI document and the layers are written to.
    layers, profile : Path, optional
        The layer set and ordinance profile; default the Village's.
    host, port : str, int
        Where the server listens.
    public_url : str, optional
        The address clients use (behind a reverse proxy); default ``http://host:port``.
    cors_origins : tuple of str
        Origins other web sites may call the API from (``*`` for any); none by default.
    limits : Limits
        The bounds of a public request.
    basemap : str
        The tile URL template of the base map, on the public page and pygeoapi's own pages; "" for none.
    overrides : Path, optional
        A YAML file merged into pygeoapi's generated configuration (:func:`merge_overrides`).
    """

    registry: str
    state_dir: Path
    layers: Path | None = None
    profile: Path | None = None
    host: str = "127.0.0.1"
    port: int = 5000
    public_url: str | None = None
    cors_origins: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    basemap: str = ""
    overrides: Path | None = None

    @property
    def url(self) -> str:
        """The service's root as clients see it, without a trailing slash."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def api_url(self) -> str:
        """The OGC API's root: the public page is at ``/``, the API under ``/ogc``."""
        return f"{self.url}/ogc"


@dataclass(frozen=True)
class ServiceFiles:
    """What :func:`prepare_service` wrote, and the password the service needs in its environment."""

    config: Path
    openapi: Path
    layers_gpkg: Path
    page_settings: dict[str, Any]
    environment: dict[str, str]
    #: On PostGIS, the schema the public view is in (the cache asks it for the registry's version).
    registry_schema: str = ""


def check_public_login(url: str) -> tuple[Login, str]:
    """Refuse a PostGIS login that may read or change more than the registry's published and public views.

    The service answers anyone, so the login it holds must be harmless if stolen: a member of
    the registry's reader role (``esc-gis permits init --roles``), not the office's.

    Returns
    -------
    (Login, str)
        The login as the live connection used it (:func:`esc_gis.registry.store.conninfo.effective_login`),
        which pygeoapi is then given, and the schema the published view was found in.

    Raises
    ------
    RegistryError
        If the server cannot be reached, the login cannot read the published view, is a superuser,
        or may read or write any other table or view (each named), with the fix.
    """
    import psycopg

    parse(url)  # a string libpq would misread (a password not percent-encoded) is refused with the fix first
    try:
        conn = psycopg.connect(url, connect_timeout=10)
    except psycopg.Error as exc:
        msg = f"Cannot connect to the registry for the service ({redact(url)}): {scrub(str(exc).strip(), url)}"
        raise RegistryError(msg) from None
    try:
        login = effective_login(conn, url)
        with conn.cursor() as cur:
            cur.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            (superuser,) = cur.fetchone() or (False,)
            cur.execute(
                # Every role the login may SET ROLE to counts (a member need not inherit), and
                # column grants count too (a role may read or update some columns of a table).
                "SELECT n.nspname, c.relname, bool_or(has_any_column_privilege(r.oid, c.oid, 'SELECT')), "
                "bool_or(has_any_column_privilege(r.oid, c.oid, 'INSERT') "
                "OR has_any_column_privilege(r.oid, c.oid, 'UPDATE') "
                "OR has_table_privilege(r.oid, c.oid, 'DELETE') OR has_table_privilege(r.oid, c.oid, 'TRUNCATE')) "
                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "CROSS JOIN (SELECT oid FROM pg_roles WHERE pg_has_role(current_user, oid, 'MEMBER')) r "
                "WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') "
                "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%' "
                "GROUP BY n.nspname, c.relname"
            )
            rows = cur.fetchall()
            cur.execute("SELECT current_user, current_schema()")
            user, schema = cur.fetchone() or ("", "")
    finally:
        conn.close()
    # The reader role reads the public view too (QGIS opens it): the service reads the published one.
    views = (PUBLISHED_VIEW, PUBLIC_VIEW)
    view_ok = any(rel == PUBLISHED_VIEW and nsp == schema and can_read for nsp, rel, can_read, _ in rows)
    extra = sorted(
        f"{nsp}.{rel}"
        for nsp, rel, can_read, can_write in rows
        if can_write or (can_read and not (rel in views and nsp == schema) and rel not in _POSTGIS_CATALOGUE)
    )
    fix = (
        "Fix: run `esc-gis permits init REGISTRY --roles` as the registry's owner, then give the service a login "
        "of its own in the reader role: CREATE ROLE village_web LOGIN PASSWORD '...' IN ROLE <prefix>_reader."
    )
    if superuser:
        msg = f"The service's login {user!r} is a superuser: it could read every party's phone number. {fix}"
        raise RegistryError(msg)
    if extra:
        shown = ", ".join(extra[:8]) + (f" and {len(extra) - 8} more" if len(extra) > 8 else "")
        msg = (
            f"The service's login {user!r} may read or change more than the views {PUBLISHED_VIEW} and "
            f"{PUBLIC_VIEW}: {shown}. {fix}"
        )
        raise RegistryError(msg)
    if not view_ok:
        msg = (
            f"The service's login {user!r} cannot read {schema}.{PUBLISHED_VIEW}: is this a registry at schema "
            f"version {SCHEMA_VERSION} (`permits init` upgrades it)? {fix}"
        )
        raise RegistryError(msg)
    return login, str(schema)


def basemap_credit(basemap: str) -> str:
    """Return the credit a base map's tiles need: OpenStreetMap's own words, else the tile server's host.

    The public page words it the same way (``page.js``). The words are the template
    ``serve/basemap_credit.html.j2`` (the host escaped).

    Raises
    ------
    jinja2.TemplateNotFound
        If the template is missing from the installed package (a broken install).

    Examples
    --------
    >>> basemap_credit("https://tile.openstreetmap.org/{z}/{x}/{y}.png")
    '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors'
    >>> basemap_credit("https://tiles.example.org/{z}/{x}/{y}.png")
    'Base map: tiles.example.org'
    >>> basemap_credit("")
    ''
    """
    from urllib.parse import urlsplit

    from esc_gis._templates import render

    if not basemap:
        return ""
    host = urlsplit(basemap.replace("{", "").replace("}", "")).hostname or ""
    osm = host == "openstreetmap.org" or host.endswith(".openstreetmap.org")
    return render("serve/basemap_credit.html.j2", osm=osm, host=host)


def _pg_srid(url: str) -> int:
    """Return the SRID of the published view's geometry (the registry's CRS), as PostGIS's catalogue lists it.

    Raises
    ------
    RegistryError
        If the catalogue does not list the view's geometry.
    """
    import psycopg

    with psycopg.connect(url, connect_timeout=10) as conn:
        row = conn.execute(
            "SELECT srid FROM geometry_columns WHERE f_table_schema = current_schema() "
            "AND f_table_name = %s AND f_geometry_column = 'geom'",
            (PUBLISHED_VIEW,),
        ).fetchone()
    if row is None or not row[0]:
        msg = f"PostGIS does not list the CRS of {PUBLISHED_VIEW}.geom. Fix: run `esc-gis permits init REGISTRY` first."
        raise RegistryError(msg)
    return int(row[0])


def _check_gpkg(path: Path) -> None:
    """Refuse a file that is not a registry at this esc_gis's schema version, without writing to it."""
    if not path.is_file():
        msg = f"No registry at {path}. Fix: make one with `esc-gis permits init {path}`."
        raise RegistryError(msg)
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            version = conn.execute("SELECT max(version) FROM esc_gis_schema").fetchone()[0]
            view = conn.execute(
                "SELECT count(*) FROM gpkg_contents WHERE table_name = ?", (PUBLISHED_VIEW,)
            ).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        msg = f"{path} is not a permit registry (no esc_gis_schema table). Fix: give the file `permits init` made."
        raise RegistryError(msg) from None
    if version != SCHEMA_VERSION or not view:
        msg = (
            f"The registry {path} is at schema version {version}; this esc_gis serves version {SCHEMA_VERSION}. "
            f"Fix: run `esc-gis permits init {path}` first (it applies pending migrations)."
        )
        raise RegistryError(msg)


def _titled(prof: Profile, code: str) -> tuple[str, str]:
    """Return the (title, description) the profile words a collection with (``service_layer_*``)."""
    names = prof.names()
    return prof.template(code).title.format(**names), prof.finding(code).message


#: The waters' collections by geometry: GDAL and QGIS declare one geometry type per collection
#: (a collection mixing lines and polygons is "Unknown" to GDAL, and Polygon holding LineStrings to QGIS).
WATERS_COLLECTIONS = {"waters_lines": "LineString", "waters_polygons": "Polygon"}


def split_waters(waters: gpd.GeoDataFrame) -> list[tuple[str, gpd.GeoDataFrame]]:
    """Split the waters into the streams drawn as lines and the lakes and wetlands drawn as polygons.

    Each part has one geometry type: single and multi parts are written together, which the
    GeoPackage declares as the multi type. A layer set whose waters are all of one kind gets that
    one collection: an empty collection has no geometry type to declare.

    Parameters
    ----------
    waters : geopandas.GeoDataFrame
        The layer set's waters (lines and polygons: :func:`esc_gis.validate.prepare_waters`).

    Returns
    -------
    list of (str, geopandas.GeoDataFrame)
        ``("waters_lines", lines)`` and ``("waters_polygons", polygons)``, each only when it has a feature.

    Examples
    --------
    >>> import shapely
    >>> w = gpd.GeoDataFrame(geometry=[shapely.box(0, 0, 1, 1), shapely.LineString([(0, 0), (1, 1)])])
    >>> [(name, len(part)) for name, part in split_waters(w)]
    [('waters_lines', 1), ('waters_polygons', 1)]
    >>> [name for name, _ in split_waters(w.iloc[:1])]
    ['waters_polygons']
    """
    kinds = waters.geom_type.str.removeprefix("Multi").to_numpy()  # MultiLineString counts as LineString
    out = []
    for name, kind in WATERS_COLLECTIONS.items():
        picked = kinds == kind
        if picked.any():
            out.append((name, waters[picked]))
    return out


def _write_layers(ls: LayerSet, prof: Profile, layers_path: Path | None, out: Path) -> list[tuple[str, str, str]]:
    """Write the layer set's public layers in CRS84 to ``out``; return (name, title, description) of each."""
    import pyogrio

    from esc_gis.io import GPKG_VERSION
    from esc_gis.protective import protective_layer

    written: list[tuple[str, str, str]] = []
    village = prof.names()["jurisdiction_name"]

    def put(frame: gpd.GeoDataFrame, name: str) -> None:
        # GeoPackage 1.3, as every GeoPackage esc_gis writes (GDAL 3.6 warns on opening a 1.4); a layer
        # mixing single and multi parts is written as the multi type (pyogrio's default), so one type.
        created = {} if out.exists() else {"dataset_options": {"VERSION": GPKG_VERSION}}
        pyogrio.write_dataframe(frame.reset_index(drop=True).to_crs(CRS84), out, layer=name, driver="GPKG", **created)
        written.append((name, *_titled(prof, f"service_layer_{name}")))

    put(gpd.GeoDataFrame({"name": [village]}, geometry=[ls.jurisdiction], crs=ls.crs), "jurisdiction")
    if ls.waters is not None:
        cols = [c for c in ("water_name", "water_class") if c in ls.waters.columns]
        for name, part in split_waters(ls.waters[[*cols, "geometry"]]):
            put(part, name)
        if layers_path is not None:
            prot = protective_layer(layers=layers_path, profile=prof)
            cols = [c for c in ("water_class", "width_ft", "section", "area_sqft") if c in prot.columns]
            put(prot[[*cols, "geometry"]], "protective_areas")
    if ls.targeted_areas is not None:
        cols = [c for c in ls.targeted_areas.columns if c in ("name",)]
        put(ls.targeted_areas[[*cols, "geometry"]], "targeted_areas")
    if ls.dem is not None and ls.dem_path is not None:
        from esc_gis.terrain.steep import steep_polygons

        threshold = float(prof.entry("thresholds.steep_slope").value or 20)  # screening's own default
        steep = steep_polygons(
            ls.dem_path,
            crs=ls.crs,
            threshold_pct=threshold,
            min_area_sqft=prof.area_sqft("policy.service_steep_min_area"),
            z_unit=ls.dem_z_unit,
        )
        if len(steep):
            put(steep, "steep_slopes")
    return written


def _bbox(ls: LayerSet) -> list[float]:
    box = gpd.GeoSeries([ls.jurisdiction], crs=ls.crs).to_crs(CRS84).total_bounds
    return [round(float(v), 6) for v in box]


def crs_uri(crs: Any) -> str | None:
    """Return the OGC URI of a CRS with an EPSG code (pygeoapi's ``crs`` list names CRSs so), else None.

    Examples
    --------
    >>> crs_uri("EPSG:7594")
    'http://www.opengis.net/def/crs/EPSG/0/7594'
    >>> crs_uri('LOCAL_CS["a grid of my own",UNIT["metre",1]]') is None
    True
    """
    from pyproj import CRS

    authority = CRS.from_user_input(crs).to_authority()
    if authority is None or authority[0] != "EPSG":
        return None
    return f"http://www.opengis.net/def/crs/EPSG/0/{authority[1]}"


def offered_crs(crs: Any) -> dict[str, Any]:
    """Return the ``crs`` a GeoPackage provider lists: CRS84 and ``crs`` (the layer set's or the registry's).

    The provider keeps its features in CRS84 (:mod:`esc_gis.serve.provider`); pygeoapi transforms
    them to the other on ``?crs=`` and a ``bbox-crs`` bbox to CRS84, as it does on PostGIS, whose
    view is stored in the registry's CRS: both back ends offer the same two.
    """
    uri = crs_uri(crs) if crs is not None else None
    return {"crs": [CRS84, uri] if uri and uri != CRS84 else [CRS84]}


def _gpkg_crs(path: Path) -> Any:
    """Return the CRS of the registry's published view (a GeoPackage), as PostGIS's catalogue gives its SRID."""
    import pyogrio

    return pyogrio.read_info(path, layer=PUBLISHED_VIEW)["crs"]


def _collection(title: str, description: str, bbox: list[float], provider: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "collection",
        "title": title,
        "description": description,
        "keywords": ["erosion control", "construction site"],
        "extents": {"spatial": {"bbox": bbox, "crs": CRS84}},
        "providers": [provider],
    }


#: The permits' time for OGC API's ``datetime=``: the day a permit was issued.
TIME_FIELD = "issued_on"
#: What the service's own sessions add to libpq's ``options``: a slow query is cancelled by the
#: server after 10 s, and nothing the service runs may write.
SESSION_OPTIONS = "-c statement_timeout=10000 -c default_transaction_read_only=on"


def _pg_provider(login: Login, schema: str, srid: int) -> tuple[dict[str, Any], dict[str, str]]:
    """Return the PostGIS ``permits`` provider for pygeoapi, logging in exactly as ``login`` did.

    Host, port, database and user are the live connection's (after libpq's defaults, a service
    file and ``PG*`` variables), so pygeoapi's libpq cannot fall back to other ones; every other
    keyword of the connection string (``sslmode``, ``sslrootcert``, ``hostaddr``, ``options``...)
    reaches pygeoapi's connection unchanged, ``options`` followed by :data:`SESSION_OPTIONS`.
    The password travels in the environment (:data:`PASSWORD_ENV`), never in the YAML.
    """
    data: dict[str, Any] = {
        "host": login.host,
        "port": login.port,
        "dbname": login.dbname,
        "user": login.user,
        "search_path": [schema, "public"] if schema != "public" else ["public"],
    }
    if login.password:
        data["password"] = "${" + PASSWORD_ENV + "}"
    options = dict(login.keywords)
    options["options"] = f"{options['options']} {SESSION_OPTIONS}" if options.get("options") else SESSION_OPTIONS
    # The view's geometry is in the registry's CRS: pygeoapi must be told, or it serves those
    # feet as longitude/latitude and compares a client's bbox with them (found by schemathesis).
    storage = f"http://www.opengis.net/def/crs/EPSG/0/{srid}"
    provider = {
        "type": "feature",
        "name": "esc_gis.serve.provider.PublicPermitsProvider",
        "data": data,
        # ``datetime=`` filters the permits by the day they were issued (came into force).
        "time_field": TIME_FIELD,
        "id_field": "fid",
        "table": PUBLISHED_VIEW,
        "geom_field": "geom",
        "storage_crs": storage,
        "crs": [CRS84, storage],
        "properties": list(PERMIT_PROPERTIES),
        "options": options,
    }
    return provider, ({PASSWORD_ENV: login.password} if login.password else {})


def _gpkg_provider(registry: str) -> dict[str, Any]:
    """Return the GeoPackage ``permits`` provider: the published view, as on PostGIS.

    The view holds permits in force and sites where work is halted (:data:`esc_gis.publication.PUBLIC_STATUS`);
    never an application, a disapproval or a closed file, whose address would name a resident
    who has no permit posted at the site.
    """
    return {
        "type": "feature",
        "name": "esc_gis.serve.provider.GeoPackageProvider",
        "data": str(Path(registry).resolve()),
        "id_field": "fid",
        "table": PUBLISHED_VIEW,
        "properties": list(PERMIT_PROPERTIES),
        # ``datetime=`` filters the permits by the day they were issued (came into force).
        "time_field": TIME_FIELD,
    }


#: Who a session is, as both the check's connection and pygeoapi's see it.
_WHO = (
    "SELECT current_user, session_user, current_database(), inet_server_addr()::text, inet_server_port(), "
    "current_setting('default_transaction_read_only'), "
    "coalesce((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false)"
)


def _who_psycopg(url: str) -> tuple[Any, ...]:
    import psycopg

    with psycopg.connect(url, connect_timeout=10) as conn:
        return tuple(conn.execute(_WHO).fetchone() or ())


def check_pygeoapi_login(provider: dict[str, Any], env: dict[str, str], url: str) -> None:
    """Refuse to serve if pygeoapi's connection is not the login checked, or may write.

    pygeoapi's own PostgreSQL provider is built from ``provider`` (its ``${...}`` filled from
    ``env``), as the service will build it, and asked who it is; so is a connection from ``url``.

    Raises
    ------
    RegistryError
        If pygeoapi's connection fails, reaches another user, database or server, differs in
        encryption, or is not read-only, naming both sides (never a password).
    """
    from pygeoapi.plugin import load_plugin
    from sqlalchemy import text

    filled = json.loads(json.dumps(provider))
    if "password" in filled["data"]:
        filled["data"]["password"] = env.get(PASSWORD_ENV, "")
    checked = _who_psycopg(url)
    try:
        plugin = load_plugin("provider", filled)
        # pygeoapi keeps its engine private; the check must ask that very engine, not a copy.
        with plugin._engine.connect() as conn:
            served = tuple(conn.execute(text(_WHO)).fetchone() or ())
    except Exception as exc:
        msg = f"pygeoapi cannot connect as the checked login ({redact(url)}): {scrub(str(exc).strip(), url)}"
        raise RegistryError(msg) from None
    names = ("user", "session user", "database", "server address", "server port", "read-only", "TLS")
    differ = [
        f"{n} {a!r} (checked) vs {b!r} (pygeoapi)"
        for n, a, b in zip(names[:5], checked[:5], served[:5], strict=True)
        if a != b
    ]
    if checked[6] != served[6]:
        differ.append(f"TLS {checked[6]} (checked) vs {served[6]} (pygeoapi)")
    if served[5] != "on":
        differ.append("pygeoapi's session is not read-only")
    if differ:
        msg = (
            "The service refuses to start: pygeoapi would not connect with the login that was checked: "
            + "; ".join(differ)
            + ". Fix: give every connection setting in the registry's connection string (or report this as a bug)."
        )
        raise RegistryError(msg)


#: What an overrides file may not replace (its model, esc_gis.config.service, refuses them).
PROTECTED = _PROTECTED


def read_overrides(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a YAML file of additions to pygeoapi's configuration, refusing what it may not change.

    An administrator adds a collection, a contact or a logo here instead of editing the
    generated YAML that every start rewrites, e.g.::

        metadata:
          contact: {name: Village Clerk, email: clerk@example.org}
        resources:
          parcels: {type: collection, ...}

    Raises
    ------
    ServiceConfigError
        If the file cannot be read, is not a YAML mapping, or touches any of :data:`PROTECTED`
        (every such key named at once, with the fix).
    """
    import yaml

    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"Cannot read the pygeoapi overrides {p}: {exc}. Fix: give a readable YAML file."
        raise ServiceConfigError(msg) from None
    except yaml.YAMLError as exc:
        msg = f"The pygeoapi overrides {p} are not YAML: {str(exc).splitlines()[0]}. Fix: check the file's syntax."
        raise ServiceConfigError(msg) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        msg = (
            f"The pygeoapi overrides {p} must be a mapping (server:, metadata:, resources:), not {type(data).__name__}."
        )
        raise ServiceConfigError(msg)
    touched = overrides_problems(data)
    if touched:
        msg = (
            f"The pygeoapi overrides {p} may not replace {', '.join(touched)}: esc-gis serve checks the permits "
            "collection's login and bounds every screening through its process manager. Fix: remove those keys."
        )
        raise ServiceConfigError(msg)
    return data


def merge_overrides(config: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Return ``config`` with ``overrides`` merged in: mappings key by key, anything else replaced.

    Examples
    --------
    >>> merge_overrides({"a": {"b": 1, "c": [1]}}, {"a": {"c": [2], "d": 3}})
    {'a': {'b': 1, 'c': [2], 'd': 3}}
    """
    out = dict(config)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_overrides(out[key], value)
        else:
            out[key] = value
    return out


def prepare_service(settings: ServiceSettings) -> ServiceFiles:
    """Check what the service will publish and write its configuration into ``settings.state_dir``.

    Parameters
    ----------
    settings : ServiceSettings

    Returns
    -------
    ServiceFiles

    Raises
    ------
    RegistryError
        If the registry is missing, not at this schema version, or (PostGIS) its login may read
        more than the public view (:func:`check_public_login`).
    LayerSetError, ProfileError, LayerReadError
        If the layer set or profile cannot be used.
    RequestError
        If a limit is not a positive number.
    """
    import yaml
    from pygeoapi.openapi import get_oas

    settings.limits.check()
    overrides = read_overrides(settings.overrides) if settings.overrides is not None else {}
    env: dict[str, str] = {}
    schema = ""
    if is_url(settings.registry):
        login, schema = check_public_login(settings.registry)
        permits, env = _pg_provider(login, schema, _pg_srid(settings.registry))
        check_pygeoapi_login(permits, env, settings.registry)
    else:
        _check_gpkg(Path(settings.registry))
        permits = _gpkg_provider(settings.registry)
        permits.update(offered_crs(_gpkg_crs(Path(settings.registry))))
    prof = load_profile(settings.profile)
    ls = load_layers(settings.layers, profile=prof)
    state = Path(settings.state_dir)
    state.mkdir(parents=True, exist_ok=True)
    layers_gpkg = state / "layers.gpkg"
    layers_gpkg.unlink(missing_ok=True)
    written = _write_layers(ls, prof, ls.manifest or settings.layers, layers_gpkg)
    bbox = _bbox(ls)
    names = prof.names()
    village = names["jurisdiction_name"]
    resources: dict[str, Any] = {"permits": _collection(*_titled(prof, "service_layer_permits"), bbox, permits)}
    for name, title, description in written:
        resources[name] = _collection(
            title,
            description,
            bbox,
            {
                "type": "feature",
                "name": "esc_gis.serve.provider.GeoPackageProvider",
                "data": str(layers_gpkg),
                "id_field": "fid",
                "table": name,
                **offered_crs(ls.crs),
            },
        )
    processor: dict[str, Any] = {"name": "esc_gis.serve.process.ScreenProcessor", "limits": asdict(settings.limits)}
    if ls.manifest is not None:
        processor["layers"] = str(Path(ls.manifest).resolve())
    if settings.profile is not None:
        processor["profile"] = str(Path(settings.profile).resolve())
    resources["screen"] = {"type": "process", "processor": processor}
    config = {
        "server": {
            "bind": {"host": settings.host, "port": settings.port},
            "url": settings.api_url,
            "mimetype": "application/json; charset=UTF-8",
            "encoding": "utf-8",
            "gzip": False,
            "languages": ["en-US"],
            "cors": False,  # the service's own middleware answers CORS (esc_gis.serve.app)
            "pretty_print": False,
            "limits": {"default_items": 100, "max_items": 1000},
            # pygeoapi's own HTML pages get the public page's base map (and its credit).
            "map": {"url": settings.basemap, "attribution": basemap_credit(settings.basemap)},
            # Its pages' frame, with Bootstrap and Leaflet from the service: they run under its CSP (esc_gis.serve.app).
            "templates": {"path": str(Path(__file__).resolve().parent / "pygeoapi_templates")},
            "manager": {"name": "esc_gis.serve.process.PublicManager", "connection": None, "output_dir": None},
        },
        "logging": {"level": "ERROR"},
        "metadata": {
            "identification": {
                "title": f"{village}: construction-site erosion control",
                "description": (
                    "Active erosion-control permits and the layers the ordinance is screened against, "
                    "and a screening process: does a project need a permit? A screening, not a permit decision."
                ),
                "keywords": ["erosion control", "permits", "stormwater"],
                "keywords_type": "theme",
                "terms_of_service": "",
                "url": settings.url,
            },
            "license": {"name": prof.finding("service_publication").message, "url": settings.url},
            "provider": {"name": village, "url": settings.url},
            "contact": {"name": prof.contact or names["authority"], "position": "", "email": "", "url": settings.url},
        },
        "resources": resources,
    }
    if overrides:
        config = merge_overrides(config, overrides)
    config_path = state / "pygeoapi-config.yml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    os.environ.update(env)  # the ${...} in the YAML is read from the environment
    # pygeoapi fills ${...} only when it reads the YAML; the OpenAPI document is made from this
    # dict, whose providers connect: they get the password itself (it is written nowhere).
    openapi = get_oas(_filled(config, env), fail_on_invalid_collection=True)
    openapi_path = state / "openapi.json"
    openapi_path.write_text(json.dumps(openapi, default=str), encoding="utf-8")
    page = {
        "api": "ogc",
        "village": village,
        "authority": names.get("authority", village),
        "bbox": bbox,
        "layers": [{"name": n, "title": t} for n, t, _ in written],
        "public_status": _public_status(),
        "activities": [{"value": a, "label": prof.finding(f"service_activity_{a}").message} for a in ACTIVITIES],
        "contact": prof.contact,
        "publication": prof.finding("service_publication").message,
    }
    return ServiceFiles(config_path, openapi_path, layers_gpkg, page, env, schema)


def _filled(config: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """Return a copy of ``config`` with each ``${NAME}`` of ``env`` replaced, as pygeoapi's YAML reader does."""
    text = json.dumps(config)
    for name, value in env.items():
        text = text.replace("${" + name + "}", json.dumps(value)[1:-1])
    return dict(json.loads(text))


def _public_status() -> dict[str, list[str]]:
    from esc_gis.maps.public import PUBLIC_STATUS

    return {k: [label, colour] for k, (label, colour) in PUBLIC_STATUS.items()}
