"""Open collections of an OGC API - Features service in a real QGIS (its OAPIF provider) and print what it read, as JSON.

Run by tests/test_serve_clients.py with Debian's /usr/bin/python3 (which has python3-qgis), not
the project's venv: QGIS's Python bindings are built against the system Python and Qt.

    QT_QPA_PLATFORM=offscreen /usr/bin/python3 read_oapif.py http://127.0.0.1:PORT/ogc permits waters_lines
"""

import json
import os
import sys


def _value(value):
    """A QGIS attribute as JSON: dates as ISO text, NULL as None."""
    if value is None or (hasattr(value, "isNull") and value.isNull()):
        return None
    if hasattr(value, "toString") and hasattr(value, "year"):  # QDate, QDateTime
        from qgis.PyQt.QtCore import Qt

        return value.toString(Qt.ISODate)
    return value


def main() -> None:
    from qgis.core import QgsApplication, QgsVectorLayer, QgsWkbTypes

    app = QgsApplication([], False)
    app.initQgis()
    api, names = sys.argv[1], sys.argv[2:]
    out = {}
    for name in names:
        # The URI QGIS's "Add WFS / OGC API - Features layer" dialog writes.
        layer = QgsVectorLayer(f"url='{api}' typename='{name}'", name, "OAPIF")
        info = {"valid": layer.isValid()}
        if layer.isValid():
            fields = [f.name() for f in layer.fields()]
            info["crs"] = layer.crs().authid()
            info["wkb_type"] = QgsWkbTypes.displayString(layer.wkbType())
            info["fields"] = fields
            info["count"] = layer.featureCount()
            info["features"] = [
                {
                    "attributes": {k: _value(v) for k, v in zip(fields, f.attributes(), strict=True)},
                    "wkt": f.geometry().asWkt(9),
                }
                for f in layer.getFeatures()
            ]
        out[name] = info
    print(json.dumps(out, default=str), flush=True)
    # Leave without exitQgis(): QGIS 3.22 crashes tearing down the OAPIF provider offscreen, after the answer is out.
    os._exit(0)


# Run as a script only: pytest imports this file (--doctest-modules) with a Python that has no QGIS.
if __name__ == "__main__":
    main()
