"""QGIS plugin entry point: QGIS calls :func:`classFactory` when the plugin is enabled."""


def classFactory(iface):  # noqa: N802 (the name QGIS looks for)
    """Return the plugin object; ``iface`` is None under qgis_process."""
    from .plugin import EscGisPlugin

    return EscGisPlugin(iface)
