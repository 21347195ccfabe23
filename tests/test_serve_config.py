"""The service's configuration for administrators (issue 35, item 4): overrides, a written
configuration for one's own WSGI server, and the base map on pygeoapi's own pages.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from esc_gis.cli.main import cli
from esc_gis.errors import ServiceConfigError
from esc_gis.serve.config import ServiceSettings, prepare_service, read_overrides
from esc_gis.serve.server import DEFAULT_BASEMAP
from esc_gis.serve.wsgi import SETTINGS_FILE, load_application

from .service import DEMO_LAYERS, fill_registry, free_port, get, pg_schema, public_login


@pytest.fixture
def reg(tmp_path: Path) -> Path:
    path = tmp_path / "permits.gpkg"
    fill_registry(str(path), n=2)
    return path


def _config(state: Path) -> dict:
    return yaml.safe_load((state / "pygeoapi-config.yml").read_text())


def test_pygeoapis_pages_get_the_base_map_and_its_credit(reg: Path, tmp_path: Path) -> None:
    files = prepare_service(
        ServiceSettings(registry=str(reg), state_dir=tmp_path / "s", layers=DEMO_LAYERS, basemap=DEFAULT_BASEMAP)
    )
    conf = _config(files.config.parent)
    assert conf["server"]["map"]["url"] == DEFAULT_BASEMAP
    assert "OpenStreetMap</a> contributors" in conf["server"]["map"]["attribution"]


def test_overrides_add_a_contact_and_a_collection(reg: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra.yml"
    extra.write_text(
        yaml.safe_dump(
            {
                "metadata": {"contact": {"name": "Village Clerk", "email": "clerk@example.org"}},
                "resources": {
                    "parcels": {
                        "type": "collection",
                        "title": "Parcels",
                        "description": "The county's parcels",
                        "keywords": ["parcels"],
                        "extents": {"spatial": {"bbox": [-89, 44, -88, 45]}},
                        "providers": [
                            {
                                "type": "feature",
                                "name": "esc_gis.serve.provider.GeoPackageProvider",
                                "data": str(reg),
                                "id_field": "fid",
                                "table": "permits_public",
                            }
                        ],
                    }
                },
            }
        )
    )
    files = prepare_service(
        ServiceSettings(registry=str(reg), state_dir=tmp_path / "s", layers=DEMO_LAYERS, overrides=extra)
    )
    conf = _config(files.config.parent)
    assert conf["metadata"]["contact"]["email"] == "clerk@example.org"
    assert conf["metadata"]["contact"]["url"]  # the rest of the generated contact is kept
    assert "parcels" in conf["resources"] and "permits" in conf["resources"] and "screen" in conf["resources"]


def test_overrides_may_not_replace_the_permits_or_the_process_manager(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump({"resources": {"permits": {"title": "x"}}, "server": {"manager": None}}))
    with pytest.raises(ServiceConfigError) as err:
        read_overrides(bad)
    assert "resources.permits, server.manager" in str(err.value) and "Fix: remove those keys" in str(err.value)
    for text, words in [("[1, 2]", "must be a mapping"), ("a: [", "are not YAML"), ("resources: 3", "resources")]:
        bad.write_text(text)
        with pytest.raises(ServiceConfigError, match=words):
            read_overrides(bad)
    bad.write_text("")
    assert read_overrides(bad) == {}


def test_the_cli_refuses_bad_overrides_before_serving(reg: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("server:\n  manager: {name: mine}\n")
    res = CliRunner().invoke(
        cli, ["serve", "--registry", str(reg), "--layers", str(DEMO_LAYERS), "--pygeoapi-overrides", str(bad)]
    )
    assert res.exit_code == 1 and "server.manager" in res.output and "Traceback" not in res.output


def test_write_config_writes_a_folder_refuses_to_overwrite_and_never_an_input(reg: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    args = ["serve", "--registry", str(reg), "--layers", str(DEMO_LAYERS), "--write-config", str(out)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "esc_gis.serve.wsgi:application" in res.output
    assert {p.name for p in out.iterdir()} >= {SETTINGS_FILE, "pygeoapi-config.yml", "openapi.json", "layers.gpkg"}
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 1 and "--overwrite" in again.output
    assert CliRunner().invoke(cli, [*args, "--overwrite"]).exit_code == 0
    clash = CliRunner().invoke(
        cli, ["serve", "--registry", str(reg), "--layers", str(DEMO_LAYERS), "--write-config", str(tmp_path)]
    )
    assert clash.exit_code == 0  # the registry is permits.gpkg, not a file the folder gets
    layers_as_registry = out / "layers.gpkg"
    clash = CliRunner().invoke(
        cli, ["serve", "--registry", str(layers_as_registry), "--write-config", str(out), "--overwrite"]
    )
    assert clash.exit_code == 1 and "never replaced" in clash.output


def test_a_written_configuration_without_its_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ServiceConfigError, match=r"lacks esc-gis-service\.json"):
        load_application(tmp_path)


def test_a_written_configuration_serves_under_another_wsgi_server(pg_url: str, tmp_path: Path) -> None:
    """PostGIS through the reader login, written without its password, served by waitress-serve
    (any WSGI server) with the password in the environment."""
    target = pg_schema(pg_url)
    fill_registry(target, n=2)
    out = tmp_path / "deploy"
    with public_login(target) as reader:
        password = reader.split("//", 1)[1].split("@", 1)[0].split(":", 1)[1]
        res = CliRunner().invoke(
            cli, ["serve", "--registry", reader, "--layers", str(DEMO_LAYERS), "--write-config", str(out)]
        )
        assert res.exit_code == 0, res.output
        for f in out.iterdir():
            if f.suffix != ".gpkg":
                assert password not in f.read_text(), f.name
        assert "password" not in json.loads((out / SETTINGS_FILE).read_text())["registry"]
        port = free_port()
        env = dict(os.environ, ESC_GIS_SERVE_CONFIG=str(out), ESC_GIS_SERVE_DB_PASSWORD=password)
        exe = Path(sys.executable).parent / "waitress-serve"
        proc = subprocess.Popen(
            [str(exe), "--listen", f"127.0.0.1:{port}", "esc_gis.serve.wsgi:application"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(100):
                try:
                    if get(f"{base}/health")[0] == 200:
                        break
                except OSError:
                    time.sleep(0.2)
            status, _, body = get(f"{base}/ogc/collections/permits/items?f=json")
            assert status == 200 and len(json.loads(body)["features"]) == 2
            status, headers, _ = get(f"{base}/")
            assert status == 200 and "script-src 'self'" in headers["Content-Security-Policy"]
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=15)
