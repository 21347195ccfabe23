"""The plugin object: it only registers (and unregisters) the Processing provider."""

from qgis.core import QgsApplication

from .provider import EscGisProvider


class EscGisPlugin:
    """Adds the esc_gis provider to the Processing registry (also under qgis_process, which has no GUI)."""

    def __init__(self, iface):
        self.iface = iface
        self.provider = None

    def initProcessing(self):
        """Register the provider; qgis_process calls this for plugins with hasProcessingProvider=yes."""
        if self.provider is None:
            self.provider = EscGisProvider()
            QgsApplication.processingRegistry().addProvider(self.provider)

    def initGui(self):
        """Register the provider when QGIS's desktop loads the plugin."""
        self.initProcessing()

    def unload(self):
        """Remove the provider when the plugin is unloaded or uninstalled."""
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
