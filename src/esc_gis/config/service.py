"""The web service's configuration (``esc-gis serve``): the settings ``--write-config`` writes, and pygeoapi overrides.

``esc-gis-service.json`` (:class:`ServiceSettingsFile`) is what a WSGI server needs to start the
service from a folder ``--write-config`` wrote; ``--pygeoapi-overrides`` (:class:`ServiceOverrides`)
is a YAML file merged into pygeoapi's configuration that may add, but not replace, what the
service checks (the permits collection and the process manager).
"""

from __future__ import annotations

__all__ = ["PROTECTED", "ServiceOverrides", "ServiceSettingsFile", "overrides_problems", "settings_problems"]

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from esc_gis.config._base import Number, Open, Strict, errors, fail, say

#: What an overrides file may not replace: the permits collection (its login and the states it
#: shows are checked) and the process manager (it bounds every screening).
PROTECTED = (("resources", "permits"), ("server", "manager"))


class LimitsTable(Strict):
    """The bounds of a public request (``esc-gis serve`` options)."""

    body_bytes: int = Field(1_000_000, description="Largest request body, in bytes (--max-body-bytes).")
    vertices: int = Field(20_000, description="Most vertices in the site and the disturbed limits (--max-vertices).")
    disturbed_features: int = Field(100, description="Most disturbed-limit polygons.")
    site_acres: Number = Field(640.0, description="Largest site screened, in acres (--max-site-acres).")
    seconds: Number = Field(30.0, description="Longest a screening may run, in seconds (--timeout).")


class ServiceSettingsFile(Strict):
    """``esc-gis-service.json``: what ``esc-gis serve --write-config`` was asked to publish, and how."""

    registry: str = Field(description="The registry: a GeoPackage path or a postgresql:// URL (no password).")
    layers: str | None = Field(None, description="The layer set's layers.toml; default the Village's.")
    profile: str | None = Field(None, description="The ordinance profile; default the Village's.")
    host: str = Field("127.0.0.1", description="Where the server listens.")
    port: int = Field(5000, description="The port it listens on.")
    public_url: str | None = Field(
        None, description="The address clients use (behind a proxy); default http://host:port."
    )
    cors_origins: list[str] = Field([], description="Origins other web sites may call the API from (* for any).")
    limits: LimitsTable = Field(
        default_factory=lambda: LimitsTable.model_validate({}), description="The bounds of a public request."
    )
    basemap: str = Field("", description="The base map's tile URL template; empty for none.")
    overrides: str | None = Field(None, description="A YAML file merged into pygeoapi's configuration.")
    page_settings: dict[str, Any] = Field(description="What the public page is given (written by --write-config).")
    registry_schema: str = Field("", description="On PostGIS, the schema the public view is in.")


class ServerTable(Open):
    """``server:``: added to pygeoapi's; its process manager is the service's own."""

    model_config = ConfigDict(json_schema_extra={"not": {"required": ["manager"]}})

    @model_validator(mode="after")
    def _untouched(self) -> ServerTable:
        if "manager" in (self.model_extra or {}):
            raise fail("server.manager")
        return self


class ResourcesTable(Open):
    """``resources:``: collections added to pygeoapi's; the permits collection is the service's own."""

    model_config = ConfigDict(json_schema_extra={"not": {"required": ["permits"]}})

    @model_validator(mode="after")
    def _untouched(self) -> ResourcesTable:
        if "permits" in (self.model_extra or {}):
            raise fail("resources.permits")
        return self


class ServiceOverrides(Open):
    """A pygeoapi overrides file (``--pygeoapi-overrides``): merged key by key into the generated configuration."""

    # Given, each is a table (null too would replace the generated one); absent, the generated one stays.
    server: ServerTable = Field(None, description="pygeoapi's server settings (not its manager).")  # type: ignore[assignment]
    metadata: Any = Field(None, description="The service's metadata: identification, contact, license.")
    resources: ResourcesTable = Field(None, description="Collections and processes to add (not permits).")  # type: ignore[assignment]


def overrides_problems(data: dict[str, Any]) -> list[str]:
    """Return what an overrides file may not replace (``resources.permits``, ``server.manager``, a non-table).

    Raises
    ------
    TypeError
        Never for bad data: problems are returned.
    """
    _, errs = errors(ServiceOverrides, data)
    said = [say(e, {}) if e["type"] == "esc" else str(e["loc"][0]) for e in errs]
    # The protected keys first, in the order PROTECTED names them, as the service always said them.
    order = [".".join(k) for k in PROTECTED]
    return sorted(said, key=lambda s: order.index(s) if s in order else len(order))


def settings_problems(data: Any) -> tuple[ServiceSettingsFile | None, list[str]]:
    """Check a settings file; return it (or None) and every problem, named by its key.

    Raises
    ------
    TypeError
        Never for bad data: problems are returned.
    """
    model, errs = errors(ServiceSettingsFile, data)
    return model, [f"{'.'.join(map(str, e['loc'])) or 'the file'}: {e['msg'].lower()}" for e in errs]
