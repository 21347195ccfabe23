"""The Processing provider: the esc_gis algorithms and the one setting they need (where esc-gis is)."""

from qgis.core import QgsProcessingProvider

from .algorithms import ALGORITHMS
from .runner import SETTING, default_executable


class EscGisProvider(QgsProcessingProvider):
    """esc_gis's commands as Processing algorithms, run through the installed ``esc-gis``."""

    def id(self):
        return "escgis"

    def name(self):
        return "esc_gis"

    def longName(self):
        return "esc_gis (erosion-control screening, runs esc-gis)"

    def load(self):
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
        try:
            from processing.core.ProcessingConfig import ProcessingConfig
        except ImportError:
            return
        ProcessingConfig.removeSetting(SETTING)

    def loadAlgorithms(self):
        for cls in ALGORITHMS:
            self.addAlgorithm(cls())

    def supportedOutputVectorLayerExtensions(self):
        # What esc-gis writes (the CLI picks the format by the extension).
        return ["gpkg", "geojson", "csv", "parquet"]

    def supportedOutputRasterLayerExtensions(self):
        return ["tif"]
