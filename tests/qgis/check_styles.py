"""Load styled esc-gis outputs in a real QGIS (PyQGIS) and print what QGIS made of their styles, as JSON.

Run by tests/test_styles.py with Debian's /usr/bin/python3 (which has python3-qgis), not the
project's venv: QGIS's Python bindings are built against the system Python and Qt.

    QT_QPA_PLATFORM=offscreen /usr/bin/python3 check_styles.py VECTOR.gpkg:LAYER ... RASTER.tif ...
"""

import json
import os
import sys


def main() -> None:
    from qgis.core import (
        QgsApplication,
        QgsExpression,
        QgsExpressionContext,
        QgsExpressionContextUtils,
        QgsRasterLayer,
        QgsVectorLayer,
    )

    app = QgsApplication([], False)
    app.initQgis()
    out = {}
    for arg in sys.argv[1:]:
        if arg.endswith((".tif", ".tiff")):
            layer = QgsRasterLayer(arg, "raster")  # loads the .qml sidecar as its default style
            r = layer.renderer()
            shader = (
                r.shader().rasterShaderFunction() if r is not None and r.type() == "singlebandpseudocolor" else None
            )
            out[arg] = {
                "valid": layer.isValid(),
                "renderer": r.type() if r is not None else None,
                "ramp_type": int(shader.colorRampType()) if shader else None,
                "items": [[i.value, i.label, i.color.name()] for i in shader.colorRampItemList()] if shader else [],
            }
        else:
            path, name = arg.rsplit(":", 1)
            layer = QgsVectorLayer(f"{path}|layername={name}", name, "ogr")  # applies the default style
            r = layer.renderer()
            info = {"valid": layer.isValid(), "renderer": r.type() if r is not None else None}
            if r is not None and r.type() == "categorizedSymbol":
                info["attr"] = r.classAttribute()
                info["categories"] = [[c.value(), c.label(), c.symbol().color().name()] for c in r.categories()]
                # The class each feature falls in, as the renderer's expression gives it.
                expression = QgsExpression(r.classAttribute())
                context = QgsExpressionContext(QgsExpressionContextUtils.globalProjectLayerScopes(layer))
                info["classes"] = []
                for feature in layer.getFeatures():
                    context.setFeature(feature)
                    info["classes"].append(expression.evaluate(context))
            info["labels"] = bool(layer.labelsEnabled()) and layer.labeling() is not None
            if info["labels"]:
                info["label_field"] = layer.labeling().settings().fieldName
            info["aliases"] = {f.name(): f.alias() for f in layer.fields() if f.alias()}
            info["features"] = layer.featureCount()
            # Layer Properties > Metadata edits layer.metadata(); > Information shows htmlMetadata().
            info["title"] = layer.metadata().title()
            info["abstract"] = layer.metadata().abstract()
            info["information"] = layer.htmlMetadata()
            out[arg] = info
    print(json.dumps(out), flush=True)
    # Leave without exitQgis(): QGIS 3.22 can crash tearing down offscreen, after the answer is out.
    os._exit(0)


# Run as a script only: pytest imports this file (--doctest-modules) with a Python that has no QGIS.
if __name__ == "__main__":
    main()
