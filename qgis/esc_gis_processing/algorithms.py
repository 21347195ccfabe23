"""The esc_gis commands as Processing algorithms; each builds an ``esc-gis`` command line and runs it.

Parameter names and defaults are the CLI's (``--id-field`` is ``id_field``), so what a user
learned on one side holds on the other. Outputs are always written with ``--overwrite``:
QGIS itself asks before replacing a file the user picked, and its temporary outputs are new.
"""

from qgis.core import (
    QgsProcessing,
    QgsProcessingAlgorithm,
    QgsProcessingException,
    QgsProcessingOutputFile,
    QgsProcessingParameterBand,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterCrs,
    QgsProcessingParameterDefinition,
    QgsProcessingParameterEnum,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterField,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterDestination,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorDestination,
)

from .runner import run_esc_gis

#: Vector formats passed to esc-gis as they are (with their layer name); others are exported first.
NATIVE_VECTOR = ["gpkg", "shp"]
Z_UNITS = ["(from the DEM)", "m", "ft", "us_ft"]
COMPRESSIONS = ["deflate", "zstd", "lzw", "none"]
BASEMAPS = ["osm", "aerial", "none"]
#: The widget QGIS's own GDAL algorithms give their creation options (a GTiff option picker with
#: profiles and validation); only the dialog uses it, qgis_process takes the string as is.
RASTER_OPTIONS_WIDGET = "processing.algs.gdal.ui.RasterOptionsWidget.RasterOptionsWidgetWrapper"


def _option(name):
    """Return the CLI option of a parameter: ``ID_FIELD`` -> ``--id-field``."""
    return "--" + name.lower().replace("_", "-")


class EscGisAlgorithm(QgsProcessingAlgorithm):
    """Shared parts: help, parameter helpers and the run. Subclasses give ``command``, ``params``, ``args``."""

    command = ""
    title = ""
    help_text = ""
    #: The toolbox group: by task, as QGIS's native algorithms are grouped (not the provider's name).
    task = "Screening"

    def name(self):
        """Return the algorithm's id: the command with ``_`` for spaces and dashes (``soil_loss``)."""
        return self.command.replace(" ", "_").replace("-", "_")

    def displayName(self):
        """Return the name shown in the toolbox."""
        return self.title

    def group(self):
        """Return the toolbox group shown: the task (Screening, Terrain, Soil loss, Maps and review)."""
        return self.task

    def groupId(self):
        """Return the toolbox group's id: the task's name in lower case, without spaces."""
        return self.task.lower().replace(" ", "")

    def shortHelpString(self):
        """Return the help beside the dialog, pointing at the command's own ``--help``."""
        return self.help_text + f"\n\nRuns `esc-gis {self.command}`; see `esc-gis {self.command} --help`."

    def createInstance(self):
        """Return a new instance of the same algorithm (QGIS runs each in its own)."""
        return type(self)()

    # -- parameter helpers -------------------------------------------------------------------
    def add_vector(self, name, description, optional=False, types=None):
        """Add a vector-layer input (polygons unless ``types`` says otherwise)."""
        types = types or [QgsProcessing.TypeVectorPolygon]
        self.addParameter(QgsProcessingParameterFeatureSource(name, description, types, optional=optional))

    def add_field(self, name, description, parent, default=None, optional=True):
        """Add a field picker tied to the ``parent`` layer input, as native algorithms' are.

        Optional even with a default: QGIS 3.22 asks a mandatory field parameter to be given
        whatever its default, and the CLI's default is the same.
        """
        self.addParameter(
            QgsProcessingParameterField(
                name, description, default, parent, QgsProcessingParameterField.Any, False, optional
            )
        )

    def add_string(self, name, description, default=None, optional=True):
        """Add a text input."""
        self.addParameter(QgsProcessingParameterString(name, description, default, optional=optional))

    def add_file(self, name, description, extension="toml"):
        """Add an optional file input, ``extension`` files offered first."""
        self.addParameter(
            QgsProcessingParameterFile(name, description, QgsProcessingParameterFile.File, extension, optional=True)
        )

    def add_bool(self, name, description):
        """Add an optional flag, off by default (as the CLI's)."""
        self.addParameter(QgsProcessingParameterBoolean(name, description, False, optional=True))

    def add_band(self, name, description, parent):
        """Add an optional band picker listing the bands of the ``parent`` raster input, as gdaldem's is.

        Optional: esc-gis takes a one-band DEM's band without being told, and says when a DEM of
        several bands needs one.
        """
        self.addParameter(QgsProcessingParameterBand(name, description, None, parent, True, False))

    def band_args(self, parameters, context, name="BAND"):
        """Return ``--band N`` when a band was picked (none picked: esc-gis's own default)."""
        if parameters.get(name) in (None, ""):
            return []
        band = self.parameterAsInt(parameters, name, context)
        return ["--band", str(band)] if band > 0 else []

    def add_creation_options(self, name="CREATION_OPTIONS"):
        """Add GDAL creation options for a raster output, declared as QGIS's own GDAL algorithms do.

        An advanced, optional string with QGIS's creation-options widget; the value is
        ``NAME=VALUE`` pairs joined by ``|`` (what the widget writes; ``;`` is taken too).
        """
        param = QgsProcessingParameterString(name, "Additional creation options", "", optional=True)
        param.setFlags(param.flags() | QgsProcessingParameterDefinition.FlagAdvanced)
        param.setMetadata({"widget_wrapper": {"class": RASTER_OPTIONS_WIDGET}})
        self.addParameter(param)

    def creation_option_args(self, parameters, context, name="CREATION_OPTIONS"):
        """Return ``--co NAME=VALUE`` for each option given; esc-gis checks each against the driver."""
        text = self.parameterAsString(parameters, name, context) or ""
        pairs = [p.strip() for p in text.replace(";", "|").split("|")]
        return [arg for p in pairs if p for arg in ("--co", p)]

    def add_enum(self, name, description, options, default=0):
        """Add an optional choice among ``options``."""
        self.addParameter(QgsProcessingParameterEnum(name, description, options, False, default, optional=True))

    def vector_args(self, parameters, name, context, feedback, option=None, layer_option=None):
        """Return ``[option, path]`` (+ ``[layer_option, layer]``) of a vector input.

        A layer in a file esc-gis does not read (or no file) is exported to a GeoPackage first.
        """
        if parameters.get(name) in (None, ""):
            return []
        path, layer = self.parameterAsCompatibleSourceLayerPathAndLayerName(
            parameters, name, context, NATIVE_VECTOR, "gpkg", feedback
        )
        if not path:
            raise QgsProcessingException(f"Could not read the layer given as {name}.")
        out = [option, path] if option else [path]
        if layer and layer_option:
            out += [layer_option, layer]
        return out

    def single_layer_args(self, parameters, name, context, feedback, option=None):
        """As ``vector_args`` for a command with no layer option: a file with several layers is exported first."""
        if parameters.get(name) in (None, ""):
            return []
        path, layer = self.parameterAsCompatibleSourceLayerPathAndLayerName(
            parameters, name, context, NATIVE_VECTOR, "gpkg", feedback
        )
        if layer and path.lower().endswith(".gpkg"):
            from osgeo import ogr  # QGIS's own GDAL bindings

            source = ogr.Open(path)
            if source is None or source.GetLayerCount() != 1:
                # esc-gis would ask which layer: hand it a copy of just this one.
                path = self.parameterAsCompatibleSourceLayerPath(parameters, name, context, ["shp"], "gpkg", feedback)
        if not path:
            raise QgsProcessingException(f"Could not read the layer given as {name}.")
        return [option, path] if option else [path]

    def raster_path(self, parameters, name, context):
        """Return the file of a raster input; refuse a raster GDAL does not open (esc-gis could not)."""
        layer = self.parameterAsRasterLayer(parameters, name, context)
        if layer is None:
            raise QgsProcessingException(f"Could not read the raster given as {name}.")
        if layer.providerType() != "gdal":
            raise QgsProcessingException(
                f"{name}: esc-gis reads rasters GDAL opens; save the layer to a GeoTIFF first."
            )
        return layer.source()

    def string_args(self, parameters, context, *names):
        """``--name value`` for each non-empty string parameter (``id_field`` -> ``--id-field``)."""
        out = []
        for name in names:
            if isinstance(self.parameterDefinition(name), QgsProcessingParameterField):
                value = next(iter(self.parameterAsFields(parameters, name, context)), "")
            else:
                value = self.parameterAsString(parameters, name, context)
            if value:
                out += [_option(name), value]
        return out

    def file_args(self, parameters, context, *names):
        """Return ``--name path`` for each file parameter given."""
        out = []
        for name in names:
            value = self.parameterAsFile(parameters, name, context)
            if value:
                out += [_option(name), value]
        return out

    def bool_args(self, parameters, context, *names):
        """Return ``--name`` for each flag that is on."""
        return [_option(n) for n in names if self.parameterAsBool(parameters, n, context)]

    def crs_args(self, parameters, context, *names):
        """Return ``--name AUTHORITY:CODE`` (or WKT) for each CRS parameter given."""
        out = []
        for name in names:
            if parameters.get(name) in (None, ""):
                continue
            crs = self.parameterAsCrs(parameters, name, context)
            if crs.isValid():
                out += [_option(name), crs.authid() or crs.toWkt()]
        return out

    # -- the run ----------------------------------------------------------------------------
    def args(self, parameters, context, feedback):
        """Return (the arguments after ``esc-gis COMMAND``, the results dict)."""
        raise NotImplementedError

    def processAlgorithm(self, parameters, context, feedback):
        """Run ``esc-gis COMMAND ARGS --overwrite``, its output to the log; return the outputs."""
        args, results = self.args(parameters, context, feedback)
        feedback.setProgress(0)
        run_esc_gis([*self.command.split(), *args, "--overwrite"], feedback)
        feedback.setProgress(100)
        return results


class ScreenAlgorithm(EscGisAlgorithm):
    """``esc-gis screen``: one row per site with its permit decision, written with its QGIS style."""

    command = "screen"
    title = "Screen sites"
    help_text = (
        "Screen sites or parcels against the ordinance: one row per site with jurisdiction, disturbed "
        "area, permit decision, standards, protective-area overlap, distance to water and findings."
    )

    def initAlgorithm(self, config=None):
        """Declare ``esc-gis screen``'s parameters, with the CLI's names and defaults."""
        self.add_vector("INPUT", "Sites (polygons)")
        self.add_vector("DISTURBED", "Disturbed limits, carrying the site id (default: the whole site)", True)
        self.add_file("LAYERS", "Layer-set manifest (layers.toml; default: the bundled set)")
        self.add_file("PROFILE", "Ordinance profile TOML (default: the one shipped with esc_gis)")
        self.add_field("ID_FIELD", "Field holding the unique site id", "INPUT", "site_id")
        self.add_string("FIELD", "Contract fields NAME=SOURCE, separated by ';' (e.g. activity=LANDUSE)")
        self.addParameter(QgsProcessingParameterCrs("ASSUME_CRS", "CRS for inputs that have none", None, True))
        self.addParameter(
            QgsProcessingParameterCrs(
                "DST_CRS", "CRS of the output (areas measured in the profile's; default: it)", None, True
            )
        )
        self.add_string("WHERE", "OGR SQL WHERE clause picking the sites to read")
        self.add_string("DISTURBED_WHERE", "OGR SQL WHERE clause for the disturbed limits")
        self.add_string("SKIP_IDS", "Features that are not sites, by id: auto, none or a REGEX", "auto", False)
        self.add_bool("OFFLINE", "With a map: inline Leaflet so it opens with no network")
        self.addParameter(QgsProcessingParameterVectorDestination("OUTPUT", "Screening"))
        self.addParameter(
            QgsProcessingParameterFileDestination("MAP", "Overview map", "HTML files (*.html)", None, True, False)
        )

    def args(self, parameters, context, feedback):
        """Return ``esc-gis screen``'s arguments from the parameters, and the outputs' paths."""
        out = self.parameterAsOutputLayer(parameters, "OUTPUT", context)
        args = self.vector_args(parameters, "INPUT", context, feedback, layer_option="--layer")
        args += self.vector_args(parameters, "DISTURBED", context, feedback, "--disturbed", "--disturbed-layer")
        args += self.file_args(parameters, context, "LAYERS", "PROFILE")
        args += self.string_args(parameters, context, "ID_FIELD", "WHERE", "DISTURBED_WHERE", "SKIP_IDS")
        for pair in (self.parameterAsString(parameters, "FIELD", context) or "").split(";"):
            if pair.strip():
                args += ["--field", pair.strip()]
        args += self.crs_args(parameters, context, "ASSUME_CRS", "DST_CRS")
        args += ["-o", out]
        results = {"OUTPUT": out}
        map_path = self.parameterAsFileOutput(parameters, "MAP", context)
        if map_path:
            args += ["--map", map_path, *self.bool_args(parameters, context, "OFFLINE")]
            results["MAP"] = map_path
        return args, results


class SlopeAlgorithm(EscGisAlgorithm):
    """``esc-gis slope``: a slope-percent GeoTIFF, with its ``.qml`` style beside it."""

    task = "Terrain"
    command = "slope"
    title = "Slope (percent)"
    help_text = "Slope of a DEM in percent (Horn's method, the values of gdaldem slope -p), float32, nodata -9999."

    def initAlgorithm(self, config=None):
        """Declare ``esc-gis slope``'s parameters, with the CLI's names and defaults."""
        self.addParameter(QgsProcessingParameterRasterLayer("INPUT", "DEM"))
        self.add_enum("Z_UNIT", "Unit of the elevations when the DEM's CRS and band do not say", Z_UNITS)
        self.add_bool("COMPUTE_EDGES", "Compute edge cells and cells next to nodata (gdaldem -compute_edges)")
        self.add_band("BAND", "Band holding the elevations", "INPUT")
        self.add_bool("COG", "Write a Cloud Optimized GeoTIFF")
        self.add_enum("COMPRESS", "Output compression", COMPRESSIONS)
        self.add_creation_options()
        self.addParameter(QgsProcessingParameterRasterDestination("OUTPUT", "Slope (percent)"))

    def dem_args(self, parameters, context):
        """Return the DEM and the options reading it (``--z-unit``, ``--band``, ``--compute-edges``)."""
        args = [self.raster_path(parameters, "INPUT", context)]
        z = self.parameterAsEnum(parameters, "Z_UNIT", context)
        if z:
            args += ["--z-unit", Z_UNITS[z]]
        args += self.band_args(parameters, context)
        return args + self.bool_args(parameters, context, "COMPUTE_EDGES")

    def args(self, parameters, context, feedback):
        """Return ``esc-gis slope``'s arguments from the parameters, and the outputs' paths."""
        out = self.parameterAsOutputLayer(parameters, "OUTPUT", context)
        args = self.dem_args(parameters, context) + self.bool_args(parameters, context, "COG")
        args += ["--compress", COMPRESSIONS[self.parameterAsEnum(parameters, "COMPRESS", context)]]
        args += [*self.creation_option_args(parameters, context), "-o", out]
        return args, {"OUTPUT": out}


class SteepAlgorithm(SlopeAlgorithm):
    """``esc-gis steep``: dissolved polygons of land at or above the slope threshold."""

    command = "steep"
    title = "Steep land"
    help_text = (
        "Dissolved polygons of land at or above a slope threshold (default: the profile's steep-slope threshold)."
    )

    def initAlgorithm(self, config=None):
        """Declare ``esc-gis steep``'s parameters, with the CLI's names and defaults."""
        self.addParameter(QgsProcessingParameterRasterLayer("INPUT", "DEM"))
        self.addParameter(
            QgsProcessingParameterNumber(
                "THRESHOLD_PCT",
                "Slope threshold in percent (default: the profile's)",
                QgsProcessingParameterNumber.Double,
                None,
                True,
                0,
            )
        )
        self.addParameter(
            QgsProcessingParameterNumber(
                "MIN_AREA_SQFT", "Drop smaller specks (sq ft)", QgsProcessingParameterNumber.Double, 0.0, True, 0
            )
        )
        self.add_enum("Z_UNIT", "Unit of the elevations when the DEM does not say", Z_UNITS)
        self.addParameter(
            QgsProcessingParameterCrs("DST_CRS", "CRS of the output (default: the profile's)", None, True)
        )
        self.add_bool("COMPUTE_EDGES", "As gdaldem -compute_edges")
        self.add_band("BAND", "Band holding the elevations", "INPUT")
        self.addParameter(
            QgsProcessingParameterVectorDestination("OUTPUT", "Steep land", QgsProcessing.TypeVectorPolygon)
        )

    def args(self, parameters, context, feedback):
        """Return ``esc-gis steep``'s arguments from the parameters, and the outputs' paths."""
        out = self.parameterAsOutputLayer(parameters, "OUTPUT", context)
        args = self.dem_args(parameters, context)
        if parameters.get("THRESHOLD_PCT") not in (None, ""):
            args += ["--threshold-pct", repr(self.parameterAsDouble(parameters, "THRESHOLD_PCT", context))]
        args += ["--min-area-sqft", repr(self.parameterAsDouble(parameters, "MIN_AREA_SQFT", context))]
        args += [*self.crs_args(parameters, context, "DST_CRS"), "-o", out]
        return args, {"OUTPUT": out}


class ProtectiveAlgorithm(EscGisAlgorithm):
    """``esc-gis protective``: protective-area polygons by governing class and width."""

    command = "protective"
    title = "Protective areas"
    help_text = (
        "Protective areas of waters (widths from the profile), by governing class and width: of a waters "
        "layer, or of the layer set's waters when no layer is given."
    )

    def initAlgorithm(self, config=None):
        """Declare ``esc-gis protective``'s parameters, with the CLI's names and defaults."""
        self.add_vector("INPUT", "Waters (default: the layer set's)", True, [QgsProcessing.TypeVectorAnyGeometry])
        self.add_file("LAYERS", "Layer-set manifest (layers.toml) whose waters to use instead")
        self.add_field("CLASS_FIELD", "Field holding each feature's water class", "INPUT", "water_class")
        self.add_string("CLASS_MAP", "Class map: a .toml/.csv file or CODE=CLASS pairs, separated by ';'")
        self.add_field("NAME_FIELD", "Field holding the water's name", "INPUT")
        self.add_field("CHANNEL_WIDTH_FIELD", "Field holding a line's channel width in feet", "INPUT")
        self.add_field("PIPED_FIELD", "Field flagging a piped stream (used when present)", "INPUT", "piped")
        self.add_field(
            "DRAINAGE_FIELD", "Field holding a channel's drainage acres (used when present)", "INPUT", "drainage_acres"
        )
        self.addParameter(QgsProcessingParameterCrs("ASSUME_CRS", "CRS for waters if they have none", None, True))
        self.addParameter(
            QgsProcessingParameterCrs(
                "DST_CRS", "CRS of the output (widths measured in the profile's; default: it)", None, True
            )
        )
        self.add_file("PROFILE", "Ordinance profile TOML (default: the bundled profile)")
        self.addParameter(
            QgsProcessingParameterVectorDestination("OUTPUT", "Protective areas", QgsProcessing.TypeVectorPolygon)
        )

    def args(self, parameters, context, feedback):
        """Return ``esc-gis protective``'s arguments from the parameters, and the outputs' paths."""
        out = self.parameterAsOutputLayer(parameters, "OUTPUT", context)
        args = self.vector_args(parameters, "INPUT", context, feedback, layer_option="--layer")
        args += self.file_args(parameters, context, "LAYERS", "PROFILE")
        args += self.string_args(
            parameters, context, "CLASS_FIELD", "NAME_FIELD", "CHANNEL_WIDTH_FIELD", "PIPED_FIELD", "DRAINAGE_FIELD"
        )
        for item in (self.parameterAsString(parameters, "CLASS_MAP", context) or "").split(";"):
            if item.strip():
                args += ["--class-map", item.strip()]
        args += [*self.crs_args(parameters, context, "ASSUME_CRS", "DST_CRS"), "-o", out]
        return args, {"OUTPUT": out}


class MapAlgorithm(EscGisAlgorithm):
    """``esc-gis map``: the web map of a screening, the overview or one site."""

    task = "Maps and review"
    command = "map"
    title = "Map of a screening"
    help_text = "A web map (HTML) of a screening: the overview, or one site with its surroundings."

    def initAlgorithm(self, config=None):
        """Declare ``esc-gis map``'s parameters, with the CLI's names and defaults."""
        self.add_vector("INPUT", "Screening (output of Screen sites)")
        self.add_string("WHERE", "OGR SQL WHERE clause picking the rows to map")
        self.add_string("SITE", "Map this one site with its surroundings (default: overview)")
        self.add_file("LAYERS", "Layer set for the boundary, waters, protective and targeted areas")
        self.add_vector("DISTURBED", "Disturbed limits, for a site", True)
        self.add_vector("STEEP", "Steep-land polygons (Steep land), for a site", True)
        self.add_enum("BASEMAP", "Basemap shown first", BASEMAPS)
        self.add_bool("OFFLINE", "Inline Leaflet: the file opens with no network")
        self.add_file("PROFILE", "Ordinance profile TOML (default: the bundled profile)")
        self.addParameter(QgsProcessingParameterFileDestination("OUTPUT", "Map", "HTML files (*.html)"))

    def args(self, parameters, context, feedback):
        """Return ``esc-gis map``'s arguments from the parameters, and the outputs' paths."""
        out = self.parameterAsFileOutput(parameters, "OUTPUT", context)
        args = self.vector_args(parameters, "INPUT", context, feedback)
        args += self.string_args(parameters, context, "WHERE", "SITE")
        args += self.file_args(parameters, context, "LAYERS", "PROFILE")
        args += self.vector_args(parameters, "DISTURBED", context, feedback, "--disturbed")
        args += self.vector_args(parameters, "STEEP", context, feedback, "--steep")
        args += ["--basemap", BASEMAPS[self.parameterAsEnum(parameters, "BASEMAP", context)]]
        args += [*self.bool_args(parameters, context, "OFFLINE"), "-o", out]
        return args, {"OUTPUT": out}


class ReviewAlgorithm(EscGisAlgorithm):
    """``esc-gis review``: the HTML report (and optionally JSON findings) of a plan package."""

    task = "Maps and review"
    command = "review"
    title = "Review a plan package"
    help_text = (
        "Review a plan package (.gpkg, .dxf or a folder, with plan.toml): plan checklist, BMP checks, HTML report."
    )

    def initAlgorithm(self, config=None):
        """Declare ``esc-gis review``'s parameters, with the CLI's names and defaults."""
        # One parameter cannot be a file or a folder, so a folder package has its own; exactly one is given.
        self.addParameter(QgsProcessingParameterFile("INPUT", "Plan package (.gpkg, .dxf)", optional=True))
        self.addParameter(
            QgsProcessingParameterFile(
                "INPUT_FOLDER",
                "Or a plan package folder (with plan.toml)",
                QgsProcessingParameterFile.Folder,
                optional=True,
            )
        )
        self.add_file("LAYERS", "Layer set: boundary, waters, DEM (default: the profile's own)")
        self.add_enum("BASEMAP", "Basemap shown first", BASEMAPS)
        self.add_bool("OFFLINE", "Inline Leaflet: the report opens with no network")
        self.addParameter(QgsProcessingParameterFileDestination("OUTPUT", "Report", "HTML files (*.html)"))
        self.addParameter(
            QgsProcessingParameterFileDestination("JSON", "Findings as JSON", "JSON files (*.json)", None, True, False)
        )

    def args(self, parameters, context, feedback):
        """Return ``esc-gis review``'s arguments from the parameters, and the outputs' paths."""
        out = self.parameterAsFileOutput(parameters, "OUTPUT", context)
        plans = [p for p in (self.parameterAsFile(parameters, n, context) for n in ("INPUT", "INPUT_FOLDER")) if p]
        if len(plans) != 1:
            raise QgsProcessingException("Give the plan package as a file (plan) or a folder (plan_folder), not both.")
        args = [plans[0], "-o", out]
        args += self.file_args(parameters, context, "LAYERS")
        args += ["--basemap", BASEMAPS[self.parameterAsEnum(parameters, "BASEMAP", context)]]
        args += self.bool_args(parameters, context, "OFFLINE")
        results = {"OUTPUT": out}
        json_path = self.parameterAsFileOutput(parameters, "JSON", context)
        if json_path:
            args += ["--json", json_path]
            results["JSON"] = json_path
        return args, results


class SoilLossAlgorithm(EscGisAlgorithm):
    """``esc-gis soil-loss``: soil loss per site, with the per-phase and per-window CSVs."""

    task = "Soil loss"
    command = "soil-loss"
    title = "Soil loss"
    help_text = (
        "Soil loss and sediment discharge per site over its construction schedule (RUSLE, the WDNR method): "
        "one row per site with its governing 12-month window; the phases and windows are written beside "
        "the output as OUTPUT.phases.csv and OUTPUT.windows.csv (e.g. soil_loss.gpkg.phases.csv)."
    )

    def initAlgorithm(self, config=None):
        """Declare ``esc-gis soil-loss``'s parameters, with the CLI's names and defaults."""
        self.add_vector("INPUT", "Sites (polygons)")
        self.addParameter(QgsProcessingParameterRasterLayer("DEM", "DEM (default: the layer set's)", None, True))
        self.add_vector("SOILS", "Soil polygons with K (SSURGO map units with kwfact)", True)
        self.add_field("K_FIELD", "Field of the soils holding K (default: the profile's, kwfact)", "SOILS")
        self.addParameter(
            QgsProcessingParameterNumber(
                "K", "One K for every site, instead of soils", QgsProcessingParameterNumber.Double, None, True, 0
            )
        )
        self.addParameter(
            QgsProcessingParameterFile(
                "SCHEDULE", "Construction schedule (.csv, .toml)", fileFilter="Schedules (*.csv *.toml)"
            )
        )
        self.add_vector("DISTURBED", "Disturbed areas; each site's is its part of them", True)
        self.addParameter(
            QgsProcessingParameterNumber(
                "R_ANNUAL",
                "Annual R factor, US units (default: the profile's)",
                QgsProcessingParameterNumber.Double,
                None,
                True,
                0,
            )
        )
        self.addParameter(
            QgsProcessingParameterFile(
                "EI_FILE",
                "Erosivity distribution CSV: 365 daily, 24 half-month or 12 monthly values",
                QgsProcessingParameterFile.File,
                "csv",
            )
        )
        self.add_field("ID_FIELD", "Field of the sites naming each site (default: row numbers)", "INPUT")
        self.add_enum("Z_UNIT", "Unit of the elevations when the DEM does not say", Z_UNITS)
        self.add_band("BAND", "Band of the DEM holding the elevations", "DEM")
        self.add_file("LAYERS", "Layer-set manifest (layers.toml) giving the DEM when none is given")
        self.add_file("PROFILE", "Ordinance profile TOML (default: the one shipped with esc_gis)")
        self.addParameter(
            QgsProcessingParameterCrs(
                "DST_CRS", "CRS of the output (soil loss computed in the profile's; default: it)", None, True
            )
        )
        self.addParameter(QgsProcessingParameterVectorDestination("OUTPUT", "Soil loss per site"))
        # Optional and off by default, as --raster is: the per-cell raster costs a pass over the DEM.
        self.addParameter(
            QgsProcessingParameterRasterDestination(
                "RASTER", "Soil loss per cell (governing window)", None, True, createByDefault=False
            )
        )
        self.addOutput(QgsProcessingOutputFile("PHASES", "Soil loss per phase (CSV)"))
        self.addOutput(QgsProcessingOutputFile("WINDOWS", "Sediment discharge per 12-month window (CSV)"))

    def args(self, parameters, context, feedback):
        """Return ``esc-gis soil-loss``'s arguments from the parameters, and the outputs' paths."""
        out = self.parameterAsOutputLayer(parameters, "OUTPUT", context)
        # esc-gis soil-loss has no --layer options: every vector goes as a one-layer file.
        args = self.single_layer_args(parameters, "INPUT", context, feedback)
        if parameters.get("DEM") not in (None, ""):
            args += ["--dem", self.raster_path(parameters, "DEM", context)]
        args += self.single_layer_args(parameters, "SOILS", context, feedback, "--soils")
        args += self.single_layer_args(parameters, "DISTURBED", context, feedback, "--disturbed")
        args += self.string_args(parameters, context, "K_FIELD", "ID_FIELD")
        for name in ("K", "R_ANNUAL"):
            if parameters.get(name) not in (None, ""):
                args += [_option(name), repr(self.parameterAsDouble(parameters, name, context))]
        args += ["--schedule", self.parameterAsFile(parameters, "SCHEDULE", context)]
        args += ["--ei-file", self.parameterAsFile(parameters, "EI_FILE", context)]
        z = self.parameterAsEnum(parameters, "Z_UNIT", context)
        if z:
            args += ["--z-unit", Z_UNITS[z]]
        args += self.band_args(parameters, context)
        args += self.file_args(parameters, context, "LAYERS", "PROFILE")
        args += [*self.crs_args(parameters, context, "DST_CRS"), "-o", out]
        # The CLI's sidecar names, after the whole output: OUT.phases.csv and OUT.windows.csv beside OUT.
        results = {"OUTPUT": out, "PHASES": f"{out}.phases.csv", "WINDOWS": f"{out}.windows.csv"}
        raster = self.parameterAsOutputLayer(parameters, "RASTER", context) if parameters.get("RASTER") else None
        if raster:
            args += ["--raster", raster]
            results["RASTER"] = raster
        return args, results


ALGORITHMS = [
    ScreenAlgorithm,
    SlopeAlgorithm,
    SteepAlgorithm,
    ProtectiveAlgorithm,
    MapAlgorithm,
    ReviewAlgorithm,
    SoilLossAlgorithm,
]
