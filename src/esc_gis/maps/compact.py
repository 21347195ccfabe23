r"""A compact canvas polygon layer for maps of thousands of sites.

folium's ``GeoJson`` writes each feature as pretty GeoJSON with its popup HTML: about 400
bytes per parcel, and a page that takes seconds to parse. This layer writes the rings as
integer micro-degree *deltas* (a parcel's corner is a few digits, not ``-88.724813``),
drops each ring's closing vertex (Leaflet closes rings), keeps per site only its id and
disturbed area, and builds tooltips and popups on demand in the browser.

The browser's half is ``compact.js`` (package data, read at run time by :func:`layer_script`
and written once into each map's ``<head>``; tested in Chromium and linted as the service's
page scripts are). Its popups and tooltips are built with ``textContent``, never ``innerHTML``:
a site id such as ``<img src=x onerror=alert(1)>`` is text by construction. The data goes
into its ``<script type="application/json">`` element through Jinja's ``tojson``
(``maps/compact_data.html.j2``), which escapes ``<``, ``>``, ``&`` and ``'`` as ``\u003c`` etc.
"""

from __future__ import annotations

__all__ = ["CompactPolygons", "encode_polygons", "layer_script"]

from functools import cache
from importlib.resources import files
from typing import Any

import numpy as np
import shapely
from branca.element import Element, Figure
from folium.map import Layer
from jinja2 import Template
from markupsafe import Markup

from esc_gis._templates import render


def encode_polygons(geoms: np.ndarray) -> dict[str, list[int]]:
    """Encode EPSG:4326 (multi)polygons as delta-coded micro-degrees with offset tables.

    Returns a dict of ``c`` (x, y deltas, interleaved; the first pair absolute), ``v``
    (each ring's first vertex), ``r`` (each polygon's first ring) and ``p`` (each feature's
    first polygon), each offset list ending with the total.

    Examples
    --------
    >>> enc = encode_polygons(np.array([shapely.box(-88.5, 44.0, -88.4, 44.1)]))
    >>> enc["c"][:4], enc["v"], enc["r"], enc["p"]
    ([-88400000, 44000000, 0, 100000], [0, 4], [0, 1], [0, 1])
    """
    polys, poly_feat = shapely.get_parts(geoms, return_index=True)
    rings, ring_poly = shapely.get_rings(polys, return_index=True)
    xy, vert_ring = shapely.get_coordinates(rings, return_index=True)
    # Drop each ring's closing vertex: Leaflet closes rings itself.
    last = np.r_[vert_ring[1:] != vert_ring[:-1], True]
    xy, vert_ring = xy[~last], vert_ring[~last]
    micro = np.round(xy * 1e6).astype(np.int64)
    delta = np.diff(micro, axis=0, prepend=np.zeros((1, 2), np.int64))
    return {
        "c": delta.ravel().tolist(),
        "v": np.r_[0, np.cumsum(np.bincount(vert_ring, minlength=len(rings)))].tolist(),
        "r": np.r_[0, np.cumsum(np.bincount(ring_poly, minlength=len(polys)))].tolist(),
        "p": np.r_[0, np.cumsum(np.bincount(poly_feat, minlength=len(geoms)))].tolist(),
    }


class CompactPolygons(Layer):
    """Polygons with an id and a few text lines each, drawn on a canvas of their own.

    The layer projects its rings to Web Mercator once and draws them as one canvas path
    after every move, instead of making a Leaflet path per site (Leaflet allocates objects
    per vertex and per path: seconds for 10,000 parcels on a slow machine). A click opens a
    popup for the site under the pointer (bounding box, then point in polygon), built
    from text nodes.

    Parameters
    ----------
    geoms : numpy.ndarray of shapely.Geometry
        In EPSG:4326.
    ids : sequence of str
        Shown as the tooltip and the popup's title (as text, never markup).
    lines : list of list of str
        Further popup lines per feature (as text).
    style : dict
        Leaflet path options.
    name : str
        The layer's name in the layer control.
    show : bool
    label_zoom : int, optional
        From this zoom on, each site in view is labelled with its id (drawn on the canvas as
        text, at a point inside the site). None: no labels.
    label_few : int, default 30
        Below ``label_zoom`` too, when at most this many of the layer's sites are in view:
        a handful of sites is labelled at any zoom, a village's hundreds only zoomed in.
    """

    # One call per layer: the code is compact.js, written once into the page's <head>
    # (:meth:`render`). folium renders this macro with its own environment; the values are
    # JSON (tojson), which no "</script>" in them can end.
    _template = Template("""
        {% macro script(this, kwargs) %}
        var {{ this.get_name() }} = (function () {
            // The data sits in a JSON script element: JSON.parse reads megabytes in
            // milliseconds, where the same object literal in code costs the parser far more.
            const d = JSON.parse(document.getElementById({{ (this.get_name() ~ "_data")|tojson }}).textContent);
            const style = {{ this.style|tojson }};
            const labelZoom = {{ this.label_zoom|tojson }}, labelFew = {{ this.label_few|tojson }};
            return escCompactPolygons(d, style, labelZoom, labelFew);
        })();
        {% endmacro %}
        """)

    def __init__(
        self,
        geoms: np.ndarray,
        ids: list[str],
        lines: list[list[str]],
        style: dict[str, Any],
        *,
        name: str,
        show: bool = True,
        label_zoom: int | None = None,
        label_few: int = 30,
    ) -> None:
        super().__init__(name=name, overlay=True, control=True, show=show)
        self._name = "CompactPolygons"
        enc = encode_polygons(geoms)
        enc_any: dict[str, Any] = dict(enc)
        enc_any["id"] = [str(v) for v in ids]
        enc_any["lines"] = lines
        if label_zoom is not None:
            # A point inside each site (a bounding box's centre can fall outside an L-shaped lot).
            inner = shapely.get_coordinates(shapely.point_on_surface(geoms))
            enc_any["lp"] = np.round(inner * 1e6).astype(np.int64).ravel().tolist()
        self.data = enc_any
        self.style = dict(style)
        self.label_zoom = None if label_zoom is None else int(label_zoom)
        self.label_few = int(label_few)

    def render(self, **kwargs: Any) -> None:  # type: ignore[override]
        """Put the layer's code in the page's head (once) and its data in the body, then render the layer.

        Raises
        ------
        FileNotFoundError
            If ``compact.js`` is missing from the installed package (a broken install).
        """
        figure = self.get_root()
        assert isinstance(figure, Figure)  # a layer is always rendered inside a map's figure
        # Keyed by name: a map of several layers carries the code once.
        script = render("maps/compact_script.html.j2", code=Markup(layer_script()))
        figure.header.add_child(Element(script), name="esc_compact_js")
        data = render("maps/compact_data.html.j2", name=f"{self.get_name()}_data", data=self.data)
        figure.html.add_child(Element(data), name=f"{self.get_name()}_data")
        super().render(**kwargs)


@cache
def layer_script() -> str:
    """Return the layer's JavaScript, ``compact.js``, read from the installed package (once).

    Returns
    -------
    str
        The source of ``escCompactPolygons(d, style, labelZoom, labelFew)``.

    Raises
    ------
    FileNotFoundError
        If ``compact.js`` is missing from the installed package (a broken install).
    """
    return files("esc_gis.maps").joinpath("compact.js").read_text(encoding="utf-8")
