"""The service as a WSGI application for a deployment's own server (gunicorn, uWSGI, mod_wsgi).

``esc-gis serve --write-config DIR`` checks the registry and layers and writes pygeoapi's
configuration, the OpenAPI document, the layers and ``esc-gis-service.json`` (the settings,
never a password) into DIR. A WSGI server then loads this module's ``application`` with
``ESC_GIS_SERVE_CONFIG=DIR`` in its environment (and, on PostGIS, the password in
``ESC_GIS_SERVE_DB_PASSWORD`` or libpq's ``PGPASSWORD``/``~/.pgpass``)::

    ESC_GIS_SERVE_CONFIG=/srv/esc-gis gunicorn -w 1 --threads 8 esc_gis.serve.wsgi:application

It is the same application ``esc-gis serve`` runs (page, OGC API, guard, cache); the screening's
worker pool starts in each worker process on first use.
"""

from __future__ import annotations

__all__ = ["SETTINGS_FILE", "application", "load_application", "write_settings"]

import dataclasses
import json
import os
import threading
from pathlib import Path
from typing import Any

from esc_gis.config.service import settings_problems
from esc_gis.errors import ServiceConfigError
from esc_gis.serve.config import PASSWORD_ENV, ServiceFiles, ServiceSettings
from esc_gis.serve.screen_request import Limits

#: The settings file beside pygeoapi's configuration.
SETTINGS_FILE = "esc-gis-service.json"
#: The environment variable naming the folder ``--write-config`` wrote.
CONFIG_ENV = "ESC_GIS_SERVE_CONFIG"


def _without_password(registry: str) -> str:
    from esc_gis.registry.store.backend import is_url

    if not is_url(registry):
        return str(Path(registry).resolve())
    from psycopg.conninfo import make_conninfo

    from esc_gis.registry.store.conninfo import SECRET_KEYS, parse

    return make_conninfo("", **{k: v for k, v in parse(registry).items() if k not in SECRET_KEYS})


def write_settings(settings: ServiceSettings, files: ServiceFiles) -> Path:
    """Write what :func:`load_application` needs beside the configuration; return its path.

    The registry is written without its password: the deployment gives it in the environment.
    """
    plain: dict[str, Any] = {
        k: (str(v) if isinstance(v, Path) else v)
        for k, v in dataclasses.asdict(settings).items()
        if k not in ("limits", "state_dir")
    }
    plain["registry"] = _without_password(settings.registry)
    plain["cors_origins"] = list(settings.cors_origins)
    plain["limits"] = dataclasses.asdict(settings.limits)
    plain["page_settings"] = files.page_settings
    plain["registry_schema"] = files.registry_schema
    path = Path(settings.state_dir) / SETTINGS_FILE
    path.write_text(json.dumps(plain, indent=2), encoding="utf-8")
    return path


def load_application(folder: str | os.PathLike[str]) -> Any:
    """Build the service's WSGI application from a folder ``--write-config`` wrote.

    Raises
    ------
    ServiceConfigError
        If the folder lacks a file ``--write-config`` writes, or its settings cannot be read.
    """
    from esc_gis.serve.app import make_app

    root = Path(folder)
    names = (SETTINGS_FILE, "pygeoapi-config.yml", "openapi.json", "layers.gpkg")
    missing = [n for n in names if not (root / n).is_file()]
    if missing:
        msg = f"{root} lacks {', '.join(missing)}. Fix: run `esc-gis serve --write-config {root} ...` first."
        raise ServiceConfigError(msg)
    fix = "Fix: write it again with `esc-gis serve --write-config`."
    try:
        plain = json.loads((root / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ServiceConfigError(f"Cannot read {root / SETTINGS_FILE}: {exc}. {fix}") from None
    model, problems = settings_problems(plain)
    if model is None:
        raise ServiceConfigError(f"Cannot read {root / SETTINGS_FILE}: {'; '.join(problems)}. {fix}")
    page, schema = model.page_settings, model.registry_schema
    settings = ServiceSettings(
        registry=model.registry,
        state_dir=root,
        layers=None if model.layers is None else Path(model.layers),
        profile=None if model.profile is None else Path(model.profile),
        host=model.host,
        port=model.port,
        public_url=model.public_url,
        cors_origins=tuple(model.cors_origins),
        limits=Limits(**model.limits.model_dump()),
        basemap=model.basemap,
        overrides=None if model.overrides is None else Path(model.overrides),
    )
    password = os.environ.get(PASSWORD_ENV)
    if password and "PGPASSWORD" not in os.environ:
        os.environ["PGPASSWORD"] = password  # the cache's own connection asks the registry's version
    env = {PASSWORD_ENV: password} if password else {}
    files = ServiceFiles(root / "pygeoapi-config.yml", root / "openapi.json", root / "layers.gpkg", page, env, schema)
    return make_app(settings, files, basemap=settings.basemap or None)


def application(environ: dict[str, Any], start_response: Any) -> Any:
    """Answer a request with the application of the folder ``ESC_GIS_SERVE_CONFIG`` names (built on first use).

    Raises
    ------
    ServiceConfigError
        If ``ESC_GIS_SERVE_CONFIG`` is not set, or :func:`load_application` refuses the folder.
    """
    global _APP
    with _BUILDING:  # a threaded server's first requests arrive together: build once
        if _APP is None:
            folder = os.environ.get(CONFIG_ENV)
            if not folder:
                msg = f"Set {CONFIG_ENV} to the folder `esc-gis serve --write-config DIR` wrote."
                raise ServiceConfigError(msg)
            _APP = load_application(folder)
    return _APP(environ, start_response)


_APP: Any = None
_BUILDING = threading.Lock()
