"""``esc-gis serve``: publish the permits, the layers and the screening as OGC API, with a public page."""

from __future__ import annotations

from pathlib import Path

import click

from esc_gis.cli._catalogue import short_help
from esc_gis.cli._options import layers_option, overwrite_option, profile_option


@click.command(short_help=short_help("serve"))
@click.option(
    "--registry",
    required=True,
    help="The registry: a GeoPackage, or a postgresql:// URL whose login reads the public view only.",
)
@layers_option()
@profile_option()
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on (a reverse proxy faces the public)."
)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option(
    "--public-url", default=None, help="The address clients use, behind a reverse proxy (https://permits.example.org)."
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    help="A web origin allowed to call the API from a browser (repeatable; * for any). None by default.",
)
@click.option(
    "--basemap",
    default=None,
    help="Tile URL template for the page's base map; 'none' for none. Default: OpenStreetMap.",
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the written configuration here (default: a temporary folder, removed on exit).",
)
@click.option(
    "--max-body-bytes", default=1_000_000, show_default=True, type=click.IntRange(1), help="Largest request body."
)
@click.option(
    "--max-vertices", default=20_000, show_default=True, type=click.IntRange(1), help="Most vertices in one screening."
)
@click.option(
    "--max-site-acres",
    default=640.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Largest site screened.",
)
@click.option(
    "--timeout",
    "timeout_s",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a screening may run.",
)
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1, 64), help="Server threads.")
@click.option(
    "--pygeoapi-overrides",
    "overrides",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A YAML file merged into pygeoapi's configuration (a collection, a contact, a logo); "
    "it may not replace the permits collection or the process manager.",
)
@click.option(
    "--write-config",
    "write_config",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Check everything, write the configuration into this folder for your own WSGI server "
    "(esc_gis.serve.wsgi:application with ESC_GIS_SERVE_CONFIG=DIR), and exit without serving.",
)
@overwrite_option("With --write-config: replace a configuration already in the folder.")
def serve(
    registry: str,
    layers_path: str | None,
    profile_path: str | None,
    host: str,
    port: int,
    public_url: str | None,
    cors_origins: tuple[str, ...],
    basemap: str | None,
    state_dir: Path | None,
    max_body_bytes: int,
    max_vertices: int,
    max_site_acres: float,
    timeout_s: float,
    threads: int,
    overrides: Path | None,
    write_config: Path | None,
    overwrite: bool,
) -> None:
    """Serve the registry's public view, the Village's layers and the screening process.

    OGC API - Features and Processes (pygeoapi) under /ogc, read by QGIS, ArcGIS Pro, GDAL
    (OAPIF:http://HOST:PORT/ogc) and Leaflet; the public page ("Do I need a permit?") at /.
    Stops with Ctrl+C.
    """
    from esc_gis.serve.config import ServiceSettings
    from esc_gis.serve.screen_request import Limits
    from esc_gis.serve.server import DEFAULT_BASEMAP, run_service

    limits = Limits(body_bytes=max_body_bytes, vertices=max_vertices, site_acres=max_site_acres, seconds=timeout_s)

    def settings(tmp: Path) -> ServiceSettings:
        return ServiceSettings(
            registry=registry,
            state_dir=state_dir or tmp,
            layers=None if layers_path is None else Path(layers_path),
            profile=None if profile_path is None else Path(profile_path),
            host=host,
            port=port,
            public_url=public_url,
            cors_origins=cors_origins,
            limits=limits,
            overrides=overrides,
        )

    def ready(url: str) -> None:
        click.echo(f"Serving {url}/ (public page) and {url}/ogc (OGC API); Ctrl+C stops.", err=True)

    tiles = None if basemap == "none" else (basemap or DEFAULT_BASEMAP)
    if write_config is not None:
        from esc_gis.serve.server import write_service_config

        written = write_service_config(settings(write_config), basemap=tiles, overwrite=overwrite)
        click.echo(
            f"Wrote {written}. Serve it with your WSGI server, e.g.\n"
            f"  ESC_GIS_SERVE_CONFIG={write_config} gunicorn -w 1 --threads {threads} esc_gis.serve.wsgi:application\n"
            "with the database password, if any, in ESC_GIS_SERVE_DB_PASSWORD or PGPASSWORD.",
            err=True,
        )
        return
    run_service(settings, basemap=tiles, threads=threads, on_ready=ready)
