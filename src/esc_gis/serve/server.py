"""Run the web service: check and write its configuration, then serve it with waitress.

waitress is a production WSGI server in pure Python (Linux, Windows, macOS), with the bounds a
public endpoint needs: a body-size limit, a timeout for idle or slow clients, a fixed number
of threads. Put a reverse proxy (nginx, Caddy, IIS) in front of it for TLS (docs/guide/service.md).
"""

from __future__ import annotations

__all__ = ["DEFAULT_BASEMAP", "run_service", "write_service_config"]

import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path

from esc_gis.errors import EscGisError, install_hint
from esc_gis.serve.config import ServiceSettings, prepare_service

#: How much more than the body limit waitress reads (to a temporary file) before it cuts a client off.
#: A body up to that size is read and discarded so the client, still uploading, receives the
#: service's 413; closing with unread data would reset the connection, and Python's ``urllib``
#: and a browser's ``fetch`` then see a reset, not the answer (issue 35). Beyond it, the cut.
DISCARD_BYTES = 16 * 1024 * 1024


def reading_limit(body_bytes: int) -> int:
    """Return waitress's ``max_request_body_size`` for a service taking at most ``body_bytes``.

    waitress refuses a body of its limit or more (``>=``); the service's :class:`~esc_gis.serve.app.Guard`
    answers 413 for one over ``body_bytes``, once waitress has read it.

    Examples
    --------
    >>> reading_limit(1_000_000) - 1_000_000 == DISCARD_BYTES + 1
    True
    """
    return body_bytes + DISCARD_BYTES + 1


#: OpenStreetMap's standard tiles (their tile usage policy applies; a Village may give its own).
DEFAULT_BASEMAP = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"


class ServeDependencyError(EscGisError, ImportError):
    """Raised when the ``serve`` extra (pygeoapi, waitress, pebble) is not installed."""


def _require() -> None:
    missing = []
    for module in ("pygeoapi", "waitress", "pebble", "yaml"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        msg = f"`esc-gis serve` needs {', '.join(missing)}, which this installation lacks. " + install_hint(
            "serve", "pygeoapi waitress pebble PyYAML"
        )
        raise ServeDependencyError(msg)


def write_service_config(settings: ServiceSettings, *, basemap: str | None, overwrite: bool = False) -> Path:
    """Check and write the service's configuration into ``settings.state_dir`` for a WSGI server of one's own.

    Parameters
    ----------
    settings : ServiceSettings
        ``state_dir`` is the folder written.
    basemap : str, optional
        The base map's tile URL template; None for none.
    overwrite : bool
        Replace a configuration already in the folder.

    Returns
    -------
    Path
        The folder.

    Raises
    ------
    OutputExistsError
        If the folder holds a configuration and ``overwrite`` is false.
    OutputIsInputError
        If the registry (a GeoPackage) or the overrides file is one of the files written.
    RegistryError, LayerSetError, ProfileError, LayerReadError, RequestError, ServiceConfigError
        As :func:`esc_gis.serve.config.prepare_service`.
    """
    from esc_gis.errors import OutputExistsError, OutputIsInputError
    from esc_gis.serve.wsgi import SETTINGS_FILE, write_settings

    _require()
    folder = Path(settings.state_dir)
    outputs = [folder / n for n in (SETTINGS_FILE, "pygeoapi-config.yml", "openapi.json", "layers.gpkg")]
    inputs = [Path(settings.registry), *([settings.overrides] if settings.overrides else [])]
    clash = [str(i) for i in inputs if any(i.resolve() == o.resolve() for o in outputs)]
    if clash:
        msg = (
            f"{', '.join(clash)} would be written over: write the configuration into another folder (inputs are never "
            "replaced)."
        )
        raise OutputIsInputError(msg)
    present = [o.name for o in outputs if o.exists()]
    if present and not overwrite:
        msg = (
            f"{folder} already holds a configuration ({', '.join(present)}). Fix: pass overwrite=True, or give "
            "another folder."
        )
        raise OutputExistsError(msg)
    conf = dataclasses.replace(settings, basemap=basemap or "")
    # A configuration is written whole or not at all: a refusal half way (a login pygeoapi cannot
    # use, a layer that cannot be read) leaves the folder as it was, an earlier configuration included.
    made = not folder.exists()
    kept = {o: o.with_name(f".{o.name}.previous") for o in outputs if o.exists()}
    for out, old in kept.items():
        out.replace(old)
    try:
        files = prepare_service(conf)
        write_settings(conf, files)
    except BaseException:
        for out in outputs:
            out.unlink(missing_ok=True)
        for out, old in kept.items():
            old.replace(out)
        if made and folder.exists() and not any(folder.iterdir()):
            folder.rmdir()
        raise
    for old in kept.values():
        old.unlink(missing_ok=True)
    return folder


class _Stopped(SystemExit):
    """Raised in the main thread on SIGTERM, so the state folder and the worker pool are cleaned up."""


def _stop_on_sigterm() -> None:
    """Make SIGTERM (systemd, docker stop, kill) unwind like Ctrl+C instead of ending the process at once.

    Python's default for SIGTERM ends the process without running ``finally`` blocks or context
    managers: the temporary state folder (configuration, layers) was left behind. Only the main
    thread may set a handler; elsewhere (an embedding application) the default stays.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, frame: object) -> None:
        raise _Stopped(0)

    signal.signal(signal.SIGTERM, stop)


def run_service(
    settings: ServiceSettings | Callable[[Path], ServiceSettings],
    *,
    basemap: str | None = DEFAULT_BASEMAP,
    threads: int = 8,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Check, configure and serve until interrupted.

    Parameters
    ----------
    settings : ServiceSettings, or a callable making them from a state folder
        With a callable, the state folder is a temporary one, removed when the service stops.
    basemap : str, optional
        The page's tile URL template; None for no base map.
    threads : int
        waitress's worker threads.
    on_ready : callable, optional
        Called with the service's address when it is about to listen.

    Raises
    ------
    ServeDependencyError
        If the ``serve`` extra is missing.
    RegistryError, LayerSetError, ProfileError, LayerReadError, RequestError
        As :func:`esc_gis.serve.config.prepare_service`, before anything listens.
    """
    _require()
    _stop_on_sigterm()
    with tempfile.TemporaryDirectory(prefix="esc_gis_serve_") as tmp:
        conf = settings(Path(tmp)) if callable(settings) else settings
        conf = dataclasses.replace(conf, basemap=basemap or "")
        files = prepare_service(conf)
        import waitress

        from esc_gis.serve.app import make_app
        from esc_gis.serve.process import shutdown_pool, start_workers

        app = make_app(conf, files, basemap=basemap)
        try:
            # Warm screening workers before anything listens: the first screening is as fast as the
            # next (a cold worker took 5 s), and /health answers once a screening would be quick.
            start_workers(files.config)
            if on_ready is not None:
                on_ready(conf.url)
            waitress.serve(
                app,
                host=conf.host,
                port=conf.port,
                threads=threads,
                ident="esc-gis",
                max_request_body_size=reading_limit(conf.limits.body_bytes),
                channel_timeout=max(30, int(conf.limits.seconds) + 5),
                connection_limit=200,
                clear_untrusted_proxy_headers=True,
                _quiet=True,
            )
        finally:
            shutdown_pool()
