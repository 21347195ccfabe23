"""QGIS plugin entry point: QGIS calls :func:`classFactory` when the plugin is enabled."""


def classFactory(iface):
    """Return the plugin object; ``iface`` is None under qgis_process."""
    from .plugin import EscGisPlugin

    return EscGisPlugin(iface)
