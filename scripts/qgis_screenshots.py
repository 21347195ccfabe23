"""Screenshots of the demo outputs as QGIS draws them, for the README's "In QGIS" section.

Run after ``make demo`` with Debian's Python, which has PyQGIS (not the project's venv)::

    QT_QPA_PLATFORM=offscreen /usr/bin/python3 scripts/qgis_screenshots.py [--out docs/img]

(``make qgis-screenshots`` does both.) Each map is rendered by QGIS's own renderer
(``QgsMapRendererParallelJob``) from the outputs' own styles, the ones QGIS applies when a user
opens the files (``layer_styles`` in each GeoPackage, the ``.qml`` beside the slope raster);
only the context layers (the boundary and the waters, which the toolkit reads but does not
write) are given a plain style here. The legend beside each map lists the entries QGIS's
legend shows for those styles. The Processing dialog of *Screen sites* is the provider's own
dialog, grabbed as a widget image. The demo's waters, targeted area and DEM are made up.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # PyQGIS exists only under QGIS's Python: imported where used
    from qgis.core import QgsMapLayer, QgsMapSettings, QgsRectangle, QgsVectorLayer
    from qgis.PyQt.QtCore import QSize
    from qgis.PyQt.QtGui import QImage

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out"
DEMO = ROOT / "layers" / "winneconne-demo"
VILLAGE = ROOT / "layers" / "winneconne"

#: Size of each screenshot (pixels): the map on the left, the legend in a panel on its right.
WIDTH, HEIGHT, PANEL = 1000, 700, 290
DIALOG_WIDTH = 1200


def vector(path: Path, layer: str, name: str) -> QgsVectorLayer:
    """Return the layer ``layer`` of ``path``, with its default style (the GeoPackage's own) applied.

    Raises
    ------
    SystemExit
        If QGIS cannot open it (run ``make demo`` first).
    """
    from qgis.core import QgsVectorLayer

    lyr = QgsVectorLayer(f"{path}|layername={layer}" if layer else str(path), name, "ogr")
    if not lyr.isValid():
        sys.exit(f"{path}: QGIS cannot open layer {layer!r}; run `make demo` first.")
    return lyr


def context_fill(
    lyr: QgsVectorLayer, fill: str, outline: str, *, width_mm: float = 0.4, style: str = "solid"
) -> QgsVectorLayer:
    """Give a context layer (not an esc-gis output) a plain fill and outline."""
    from qgis.core import QgsFillSymbol, QgsSingleSymbolRenderer

    symbol = QgsFillSymbol.createSimple(
        {
            "color": fill,
            "outline_color": outline,
            "outline_width": str(width_mm),
            "outline_style": style,
            "style": "solid" if fill != "none" else "no",
        }
    )
    lyr.setRenderer(QgsSingleSymbolRenderer(symbol))
    return lyr


def render_map(layers: list[QgsMapLayer], extent: QgsRectangle, size: QSize) -> tuple[QImage, QgsMapSettings]:
    """Render ``layers`` (top first) over ``extent`` with QGIS's map renderer; return the image."""
    from qgis.core import QgsMapRendererParallelJob, QgsMapSettings
    from qgis.PyQt.QtGui import QColor

    settings = QgsMapSettings()
    settings.setLayers(layers)
    settings.setDestinationCrs(layers[0].crs())
    settings.setOutputSize(size)
    settings.setOutputDpi(96)
    settings.setBackgroundColor(QColor("#f4f4f0"))
    settings.setExtent(extent)
    settings.setFlag(QgsMapSettings.DrawLabeling, True)
    settings.setFlag(QgsMapSettings.Antialiasing, True)
    job = QgsMapRendererParallelJob(settings)
    job.start()
    job.waitForFinished()
    return job.renderedImage(), settings


def legend_entries(lyr: QgsMapLayer) -> list[tuple[QImage, str]]:
    """Return (swatch image, label) of each entry QGIS's legend shows for ``lyr``'s style."""
    from qgis.core import QgsRasterLayer
    from qgis.PyQt.QtCore import QSize
    from qgis.PyQt.QtGui import QImage

    if isinstance(lyr, QgsRasterLayer):
        out = []
        for label, colour in lyr.renderer().legendSymbologyItems():
            img = QImage(QSize(18, 14), QImage.Format_ARGB32)
            img.fill(colour)
            out.append((img, label))
        return out
    # A single symbol has no label of its own: QGIS's legend shows the layer's title there.
    return [
        (item.symbol().asImage(QSize(18, 14)), item.label() or lyr.metadata().title() or lyr.name())
        for item in lyr.renderer().legendSymbolItems()
        if item.symbol() is not None
    ]


def compose(
    map_image: QImage, panels: list[tuple[str, list[tuple[QImage, str]]]], title: str, note: str, path: Path
) -> None:
    """Save the map with a legend panel beside it: a title, each layer's entries, a note."""
    from qgis.PyQt.QtCore import QRect, Qt
    from qgis.PyQt.QtGui import QColor, QFont, QImage, QPainter, QPen

    image = QImage(WIDTH, HEIGHT, QImage.Format_RGB32)
    image.fill(QColor("white"))
    p = QPainter(image)
    p.setRenderHint(QPainter.Antialiasing)
    p.drawImage(0, 0, map_image)
    p.setPen(QPen(QColor("#999999")))
    p.drawLine(WIDTH - PANEL, 0, WIDTH - PANEL, HEIGHT)
    x, y = WIDTH - PANEL + 14, 26
    p.setPen(QPen(QColor("black")))
    p.setFont(QFont("DejaVu Sans", 12, QFont.Bold))
    box = QRect(x, y - 18, PANEL - 24, 80)
    y += p.boundingRect(box, Qt.TextWordWrap, title).height() + 4
    p.drawText(box, Qt.TextWordWrap, title)
    for heading, entries in panels:
        p.setFont(QFont("DejaVu Sans", 9, QFont.Bold))
        box = QRect(x, y - 12, PANEL - 24, 40)
        used = p.boundingRect(box, Qt.TextWordWrap, heading)
        p.drawText(box, Qt.TextWordWrap, heading)
        y += used.height() - 4
        p.setFont(QFont("DejaVu Sans", 9))
        for swatch, label in entries:
            p.drawImage(x, y, swatch)
            rect = QRect(x + 26, y - 1, PANEL - 50, 34)
            used = p.boundingRect(rect, Qt.TextWordWrap, label)
            p.drawText(rect, Qt.TextWordWrap, label)
            y += max(20, used.height() + 5)
        y += 14
    p.setFont(QFont("DejaVu Sans", 8))
    p.setPen(QPen(QColor("#555555")))
    p.drawText(QRect(x, HEIGHT - 80, PANEL - 24, 74), Qt.TextWordWrap | Qt.AlignBottom, note)
    p.end()
    if not image.save(str(path), "PNG"):
        sys.exit(f"{path}: could not write the screenshot.")
    print(f"Wrote {path} ({path.stat().st_size // 1024} KB)")


def extent(xmin: float, ymin: float, xmax: float, ymax: float) -> QgsRectangle:
    """Return a QgsRectangle."""
    from qgis.core import QgsRectangle

    return QgsRectangle(xmin, ymin, xmax, ymax)


def screening_shot(out_dir: Path) -> None:
    """Write qgis_screening.png: sites coloured by permit decision, labelled with their ids."""
    from qgis.PyQt.QtCore import QSize

    sites = vector(OUT / "demo_screening.gpkg", "screening", "Screening")
    boundary = context_fill(vector(VILLAGE / "village_boundary.gpkg", "", "Village"), "none", "#444444", style="dash")
    waters = context_fill(vector(DEMO / "waters_illustrative.gpkg", "", "Waters"), "#9ecae1", "#4292c6")
    lake = context_fill(vector(VILLAGE / "waters.gpkg", "", "Lake"), "#9ecae1", "#4292c6")
    image, _ = render_map(
        [sites, boundary, waters, lake], extent(742550, 502950, 746450, 505850), QSize(WIDTH - PANEL, HEIGHT)
    )
    compose(
        image,
        [("demo_screening.gpkg: permit decision", legend_entries(sites))],
        "Screening, as QGIS opens it",
        "Labels: site_id. Dashed: the Village boundary. Blue: waters (the creek and wetlands are "
        "illustrative). Sites and disturbance are made up.",
        out_dir / "qgis_screening.png",
    )


def slope_shot(out_dir: Path) -> None:
    """Write qgis_slope.png: the slope raster in its classes, the steep class in red."""
    from qgis.core import QgsRasterLayer
    from qgis.PyQt.QtCore import QSize

    slope = QgsRasterLayer(str(OUT / "demo_slope_pct.tif"), "Slope (%)")  # loads demo_slope_pct.qml
    if not slope.isValid():
        sys.exit(f"{OUT / 'demo_slope_pct.tif'}: QGIS cannot open it; run `make demo` first.")
    image, _ = render_map([slope], extent(743800, 504800, 748300, 509300), QSize(WIDTH - PANEL, HEIGHT))
    compose(
        image,
        [("demo_slope_pct.tif: slope, percent", legend_entries(slope))],
        "Slope, as QGIS opens it",
        "Its style is demo_slope_pct.qml, written beside it: the classes are cut at the profile's "
        "steep-slope threshold. The DEM is synthetic.",
        out_dir / "qgis_slope.png",
    )


def protective_shot(out_dir: Path) -> None:
    """Write qgis_protective.png: protective areas by water class around the illustrative waters."""
    from qgis.PyQt.QtCore import QSize

    prot = vector(OUT / "demo_protective_areas.gpkg", "protective_areas", "Protective areas")
    waters = context_fill(vector(DEMO / "waters_illustrative.gpkg", "", "Waters"), "#ffffff", "#08519c", width_mm=0.3)
    lake = context_fill(vector(VILLAGE / "waters.gpkg", "", "Lake"), "#ffffff", "#08519c", width_mm=0.3)
    sites = context_fill(vector(OUT / "demo_screening.gpkg", "screening", "Sites"), "none", "#000000", width_mm=0.5)
    image, _ = render_map(
        [sites, waters, lake, prot], extent(742500, 503700, 750000, 506300), QSize(WIDTH - PANEL, HEIGHT)
    )
    present = {f["water_class"] for f in prot.getFeatures()}
    # The classes present in the demo only (the style has a category for every class).
    entries = [
        entry
        for entry, cat in zip(legend_entries(prot), prot.renderer().categories(), strict=True)
        if cat.value() in present
    ]
    compose(
        image,
        [("demo_protective_areas.gpkg: by water class", entries)],
        "Protective areas, as QGIS opens them",
        "White with a blue outline: the waters themselves (left out of the strips). Black outlines: "
        "the demo sites. The creek, wetlands and ditch are illustrative.",
        out_dir / "qgis_protective.png",
    )


def dialog_shot(out_dir: Path) -> None:
    """Write qgis_processing_screen.png: the provider's Screen sites dialog, as the toolbox opens it."""
    plugin_dir = ROOT / "qgis"
    sys.path.insert(0, str(plugin_dir))
    sys.path.insert(0, "/usr/share/qgis/python/plugins")  # QGIS's Processing plugin
    from esc_gis_processing.provider import EscGisProvider
    from processing.core.Processing import Processing
    from processing.gui.AlgorithmDialog import AlgorithmDialog
    from qgis.core import QgsApplication
    from qgis.PyQt.QtWidgets import QSplitter

    Processing.initialize()
    provider = EscGisProvider()
    QgsApplication.processingRegistry().addProvider(provider)
    alg = QgsApplication.processingRegistry().createAlgorithmById("escgis:screen")
    if alg is None:
        sys.exit("escgis:screen is not registered: the provider did not load.")
    dialog = AlgorithmDialog(alg, False, None)
    # Wider than the maps: the parameters' longest label and their buttons fit without scrolling.
    dialog.show()
    QgsApplication.processEvents()
    dialog.resize(DIALOG_WIDTH, HEIGHT)  # after show(): the dialog restores its last size there
    splitter = dialog.findChild(QSplitter)
    if splitter is not None:
        splitter.setSizes([DIALOG_WIDTH - 280, 280])
    for _ in range(3):
        QgsApplication.processEvents()
    path = out_dir / "qgis_processing_screen.png"
    if not dialog.grab().save(str(path), "PNG"):
        sys.exit(f"{path}: could not write the screenshot.")
    print(f"Wrote {path} ({path.stat().st_size // 1024} KB)")
    dialog.close()


def main() -> None:
    """Render the screenshots into ``--out`` (docs/img)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the PNGs")
    args = parser.parse_args()
    if os.environ.get("QT_QPA_PLATFORM") is None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # no display needed
    try:
        from qgis.core import QgsApplication
    except ImportError:
        sys.exit("PyQGIS is missing: run with Debian's /usr/bin/python3 (packages python3-qgis, qgis-providers).")
    args.out.mkdir(parents=True, exist_ok=True)
    app = QgsApplication([], True)  # with the GUI: the Processing dialog is a widget
    app.initQgis()
    screening_shot(args.out)
    slope_shot(args.out)
    protective_shot(args.out)
    dialog_shot(args.out)
    sys.stdout.flush()
    # Leave without exitQgis(): QGIS 3.22 can crash tearing down offscreen, after the work is done.
    os._exit(0)


# Run as a script only; importing it needs no PyQGIS.
if __name__ == "__main__":
    main()
