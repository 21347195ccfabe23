"""The Processing provider: the esc_gis algorithms and the one setting they need (where esc-gis is)."""

from qgis.core import QgsProcessingProvider

from .algorithms import ALGORITHMS
from .runner import SETTING, default_executable


class EscGisProvider(QgsProcessingProvider):
    """esc_gis's commands as Processing algorithms, run through the installed ``esc-gis``."""

    def id(self):
        """Return the provider's id, the prefix of its algorithms' ids (``escgis:screen``)."""
        return "escgis"

    def name(self):
        """Return the name shown in the toolbox and the options."""
        return "esc_gis"

    def longName(self):
        """Return the name shown in the provider's tooltip."""
        return "esc_gis (erosion-control screening, runs esc-gis)"

    def load(self):
        """Add the executable setting to Processing's options, then the algorithms."""
        # The setting shows in Processing > Options > Providers > esc_gis, stored in QgsSettings
        # under Processing/Configuration/ESC_GIS_EXECUTABLE (what a profile's QGIS3.ini holds).
        try:
            from processing.core.ProcessingConfig import ProcessingConfig, Setting
        except ImportError:  # no Processing plugin: the QgsSettings key is still read
            pass
        else:
            ProcessingConfig.addSetting(
                Setting(
                    self.name(),
                    SETTING,
                    "esc-gis executable (empty: esc-gis on PATH, else the repository's .venv)",
                    default_executable(),
                    valuetype=Setting.FILE,
                )
            )
            ProcessingConfig.readSettings()
        self.refreshAlgorithms()
        return True

    def unload(self):
        """Remove the executable setting from Processing's options."""
        try:
            from processing.core.ProcessingConfig import ProcessingConfig
        except ImportError:
            return
        ProcessingConfig.removeSetting(SETTING)

    def loadAlgorithms(self):
        """Add one instance of each algorithm."""
        for cls in ALGORITHMS:
            self.addAlgorithm(cls())

    def supportedOutputVectorLayerExtensions(self):
        """Return the vector formats esc-gis writes."""
        # What esc-gis writes (the CLI picks the format by the extension).
        return ["gpkg", "geojson", "csv", "parquet"]

    def supportedOutputRasterLayerExtensions(self):
        """Return the raster formats esc-gis writes (GeoTIFF)."""
        return ["tif"]
