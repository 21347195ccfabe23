r"""A compact canvas polygon layer for maps of thousands of sites.

folium's ``GeoJson`` writes each feature as pretty GeoJSON with its popup HTML: about 400
bytes per parcel, and a page that takes seconds to parse. This layer writes the rings as
integer micro-degree *deltas* (a parcel's corner is a few digits, not ``-88.724813``),
drops each ring's closing vertex (Leaflet closes rings), keeps per site only its id and
disturbed area, and builds tooltips and popups on demand in the browser.

Popups and tooltips are built with ``textContent``, never ``innerHTML``: a site id such as
``<img src=x onerror=alert(1)>`` is text by construction. The JSON is also made safe to
sit inside ``<script>`` (``<``, ``>`` and ``&`` escaped as ``\\u003c`` etc.).
"""

from __future__ import annotations

__all__ = ["CompactPolygons", "encode_polygons"]

import json
from typing import Any

import numpy as np
import shapely
from branca.element import Element, Figure
from folium.map import Layer
from jinja2 import Template


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


def script_json(obj: Any) -> str:
    """JSON that is safe inside ``<script>``: no ``<``, ``>`` or ``&`` survives literally."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class CompactPolygons(Layer):
    """Polygons with an id and a few text lines each, drawn on the map's canvas as few paths.

    A click opens a popup for the site under the pointer (found by bounding box, then
    point in polygon), built from text nodes.

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
    """

    _template = Template("""
        {% macro script(this, kwargs) %}
        var {{ this.get_name() }} = (function () {
            // The data sits in a JSON script element: JSON.parse reads 1 MB in milliseconds,
            // where the same object literal in code costs the JavaScript parser far more.
            const d = JSON.parse(document.getElementById("{{ this.get_name() }}_data").textContent);
            const style = {{ this.style }};
            // Sites are drawn as a few Leaflet paths, a multipolygon per CHUNK sites: 10,000
            // separate paths cost Leaflet seconds of bookkeeping; a click finds its site.
            const all = [], first = [], box = [];
            let x = 0, y = 0, ring = 0, vert = 0, poly = 0;
            for (let i = 0; i < d.id.length; i++) {
                first.push(all.length);
                let w = Infinity, s = Infinity, e = -Infinity, n = -Infinity;
                for (; poly < d.p[i + 1]; poly++) {
                    const rings = [];
                    for (; ring < d.r[poly + 1]; ring++) {
                        const pts = [];
                        for (; vert < d.v[ring + 1]; vert++) {
                            x += d.c[2 * vert]; y += d.c[2 * vert + 1];
                            const lat = y / 1e6, lng = x / 1e6;
                            pts.push([lat, lng]);
                            if (lng < w) w = lng; if (lng > e) e = lng; if (lat < s) s = lat; if (lat > n) n = lat;
                        }
                        rings.push(pts);
                    }
                    all.push(rings);
                }
                box.push([w, s, e, n]);
            }
            first.push(all.length);
            // A path per CHUNK sites: one path for all would be one huge redraw per pan.
            const CHUNK = 2000, shape = L.featureGroup();
            for (let i = 0; i < d.id.length; i += CHUNK) {
                const part = L.polygon(all.slice(first[i], first[Math.min(i + CHUNK, d.id.length)]), style);
                part.escFirst = i;
                part.escSites = Math.min(CHUNK, d.id.length - i);
                shape.addLayer(part);
            }
            function inside(pt, rings) {  // even-odd rule over every ring (holes included)
                let c = false;
                for (const r of rings) {
                    for (let a = 0, b = r.length - 1; a < r.length; b = a++) {
                        if ((r[a][0] > pt.lat) !== (r[b][0] > pt.lat) &&
                            pt.lng < (r[b][1] - r[a][1]) * (pt.lat - r[a][0]) / (r[b][0] - r[a][0]) + r[a][1]) c = !c;
                    }
                }
                return c;
            }
            function siteAt(pt, from) {
                for (let i = from; i < Math.min(from + CHUNK, box.length); i++) {
                    const b = box[i];
                    if (pt.lng < b[0] || pt.lng > b[2] || pt.lat < b[1] || pt.lat > b[3]) continue;
                    for (let k = first[i]; k < first[i + 1]; k++) if (inside(pt, all[k])) return i;
                }
                return -1;
            }
            function text(tag, value, parent) {  // text, never markup: ids are user data
                const el = document.createElement(tag);
                el.textContent = value;
                if (parent) parent.appendChild(el);
                return el;
            }
            shape.on("click", function (ev) {
                const i = siteAt(ev.latlng, ev.layer.escFirst);
                if (i < 0) return;
                const div = document.createElement("div");
                text("b", d.id[i], div);
                for (const line of d.lines[i]) {
                    div.appendChild(document.createElement("br"));
                    text("span", line, div);
                }
                L.popup().setLatLng(ev.latlng).setContent(div).openOn(shape._map);
            });
            shape.escSites = d.id.length;
            return shape;
        })();
        {% endmacro %}
        """)  # fmt: skip

    def __init__(self, geoms: np.ndarray, ids: list[str], lines: list[list[str]], style: dict[str, Any], *,
                 name: str, show: bool = True) -> None:  # fmt: skip
        super().__init__(name=name, overlay=True, control=True, show=show)
        self._name = "CompactPolygons"
        enc = encode_polygons(geoms)
        enc_any: dict[str, Any] = dict(enc)
        enc_any["id"] = [str(v) for v in ids]
        enc_any["lines"] = lines
        self.data = script_json(enc_any)
        self.style = script_json(style)

    def render(self, **kwargs: Any) -> None:  # type: ignore[override]
        """Put the data in the page's body as a JSON script element, then render the layer."""
        figure = self.get_root()
        assert isinstance(figure, Figure)  # a layer is always rendered inside a map's figure
        element = Element(f'<script type="application/json" id="{self.get_name()}_data">{self.data}</script>')
        figure.html.add_child(element, name=f"{self.get_name()}_data")
        super().render(**kwargs)

