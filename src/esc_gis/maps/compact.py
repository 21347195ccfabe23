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

    _template = Template("""
        {% macro script(this, kwargs) %}
        var {{ this.get_name() }} = (function () {
            // The data sits in a JSON script element: JSON.parse reads megabytes in
            // milliseconds, where the same object literal in code costs the parser far more.
            const d = JSON.parse(document.getElementById("{{ this.get_name() }}_data").textContent);
            const style = {{ this.style }};
            const labelZoom = {{ this.label_zoom }}, labelFew = {{ this.label_few }};
            // Decode once: Web Mercator unit coordinates (0..1) in typed arrays, a bounding
            // box per site for clicks. Drawing then needs no Leaflet object per vertex.
            const nv = d.c.length / 2, mx = new Float64Array(nv), my = new Float64Array(nv);
            const lat = new Float64Array(nv), lng = new Float64Array(nv);
            const box = new Float64Array(4 * d.id.length);
            let x = 0, y = 0, ring = 0, vert = 0, poly = 0;
            for (let i = 0; i < d.id.length; i++) {
                let w = Infinity, s = Infinity, e = -Infinity, n = -Infinity;
                for (; poly < d.p[i + 1]; poly++) {
                    for (; ring < d.r[poly + 1]; ring++) {
                        for (; vert < d.v[ring + 1]; vert++) {
                            x += d.c[2 * vert]; y += d.c[2 * vert + 1];
                            const la = y / 1e6, lo = x / 1e6, sin = Math.sin(la * Math.PI / 180);
                            lat[vert] = la; lng[vert] = lo;
                            mx[vert] = (lo + 180) / 360;
                            my[vert] = 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI);
                            if (lo < w) w = lo; if (lo > e) e = lo; if (la < s) s = la; if (la > n) n = la;
                        }
                    }
                }
                box.set([w, s, e, n], 4 * i);
            }
            // Label points (micro-degrees, absolute) in Web Mercator units, as the rings.
            const lx = new Float64Array(d.id.length), ly = new Float64Array(d.id.length);
            for (let i = 0; labelZoom !== null && i < d.id.length; i++) {
                const la = d.lp[2 * i + 1] / 1e6, sin = Math.sin(la * Math.PI / 180);
                lx[i] = (d.lp[2 * i] / 1e6 + 180) / 360;
                ly[i] = 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI);
            }
            function inside(pt, i) {  // even-odd rule over every ring of site i (holes too)
                let c = false;
                for (let p = d.p[i]; p < d.p[i + 1]; p++) {
                    for (let r = d.r[p]; r < d.r[p + 1]; r++) {
                        const a0 = d.v[r], a1 = d.v[r + 1];
                        for (let a = a0, b = a1 - 1; a < a1; b = a++) {
                            if ((lat[a] > pt.lat) !== (lat[b] > pt.lat) &&
                                pt.lng < (lng[b] - lng[a]) * (pt.lat - lat[a]) / (lat[b] - lat[a]) + lng[a]) c = !c;
                        }
                    }
                }
                return c;
            }
            function text(tag, value, parent) {  // text, never markup: ids are user data
                const el = document.createElement(tag);
                el.textContent = value;
                if (parent) parent.appendChild(el);
                return el;
            }
            // One canvas for the whole layer, redrawn after each move.
            const Sites = L.Layer.extend({
                onAdd: function (map) {
                    this._canvas = L.DomUtil.create("canvas", "esc-sites");
                    this._canvas.style.pointerEvents = "none";
                    map.getPane("overlayPane").appendChild(this._canvas);
                    map.on("moveend resize", this._draw, this);
                    map.on("zoomstart", this._hide, this);
                    map.on("click", this._click, this);
                    this._draw();
                },
                onRemove: function (map) {
                    L.DomUtil.remove(this._canvas);
                    map.off("moveend resize", this._draw, this);
                    map.off("zoomstart", this._hide, this);
                    map.off("click", this._click, this);
                },
                getBounds: function () {
                    let w = Infinity, s = Infinity, e = -Infinity, n = -Infinity;
                    for (let i = 0; i < box.length; i += 4) {
                        w = Math.min(w, box[i]); s = Math.min(s, box[i + 1]);
                        e = Math.max(e, box[i + 2]); n = Math.max(n, box[i + 3]);
                    }
                    return L.latLngBounds([s, w], [n, e]);
                },
                _hide: function () { this._canvas.style.visibility = "hidden"; },
                _draw: function () {
                    const map = this._map, size = map.getSize(), dpr = window.devicePixelRatio || 1;
                    const cv = this._canvas, topLeft = map.containerPointToLayerPoint([0, 0]);
                    L.DomUtil.setPosition(cv, topLeft);
                    cv.width = size.x * dpr; cv.height = size.y * dpr;
                    cv.style.width = size.x + "px"; cv.style.height = size.y + "px";
                    cv.style.visibility = "visible";
                    const scale = 256 * Math.pow(2, map.getZoom()), org = map.getPixelOrigin();
                    const ox = org.x + topLeft.x, oy = org.y + topLeft.y;
                    const ctx = cv.getContext("2d");
                    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
                    ctx.fillStyle = style.fillColor;
                    ctx.lineWidth = style.weight;
                    ctx.strokeStyle = style.color;
                    // A path per polygon (its holes with it): one path of every ring makes
                    // the rasteriser sort all edges at once, 100 times slower here.
                    for (let p = 0; p + 1 < d.r.length; p++) {
                        ctx.beginPath();
                        for (let r = d.r[p]; r < d.r[p + 1]; r++) {
                            const a0 = d.v[r], a1 = d.v[r + 1];
                            ctx.moveTo(mx[a0] * scale - ox, my[a0] * scale - oy);
                            for (let a = a0 + 1; a < a1; a++) ctx.lineTo(mx[a] * scale - ox, my[a] * scale - oy);
                            ctx.closePath();
                        }
                        ctx.globalAlpha = style.fillOpacity;
                        ctx.fill("evenodd");
                        ctx.globalAlpha = 1;
                        ctx.stroke();
                    }
                    this.escLabels = this._label(ctx, scale, ox, oy, size);
                },
                // Site ids as canvas text (never markup), only those in view, and only zoomed in
                // or when few are in view: thousands of labels at a county's zoom would be a grey smear.
                _label: function (ctx, scale, ox, oy, size) {
                    if (labelZoom === null) return 0;
                    if (this._map.getZoom() < labelZoom) {
                        let seen = 0;
                        for (let i = 0; i < d.id.length && seen <= labelFew; i++) {
                            const px = lx[i] * scale - ox, py = ly[i] * scale - oy;
                            if (px >= 0 && py >= 0 && px <= size.x && py <= size.y) seen++;
                        }
                        if (seen > labelFew) return 0;
                    }
                    ctx.font = "bold 12px sans-serif";
                    ctx.textAlign = "center";
                    ctx.textBaseline = "middle";
                    ctx.lineJoin = "round";
                    ctx.lineWidth = 3;
                    ctx.strokeStyle = "#ffffff";
                    ctx.fillStyle = "#111111";
                    let n = 0;
                    for (let i = 0; i < d.id.length; i++) {
                        const px = lx[i] * scale - ox, py = ly[i] * scale - oy;
                        if (px < -100 || py < -20 || px > size.x + 100 || py > size.y + 20) continue;
                        ctx.strokeText(d.id[i], px, py);
                        ctx.fillText(d.id[i], px, py);
                        n++;
                    }
                    return n;
                },
                _click: function (ev) {
                    const pt = ev.latlng;
                    for (let i = 0; i < d.id.length; i++) {
                        if (pt.lng < box[4 * i] || pt.lng > box[4 * i + 2] || pt.lat < box[4 * i + 1] ||
                            pt.lat > box[4 * i + 3] || !inside(pt, i)) continue;
                        const div = document.createElement("div");
                        text("b", d.id[i], div);
                        for (const line of d.lines[i]) {
                            div.appendChild(document.createElement("br"));
                            text("span", line, div);
                        }
                        L.popup().setLatLng(pt).setContent(div).openOn(this._map);
                        return;
                    }
                },
            });
            const layer = new Sites();
            layer.escSites = d.id.length;
            return layer;
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
        self.data = script_json(enc_any)
        self.style = script_json(style)
        self.label_zoom = "null" if label_zoom is None else str(int(label_zoom))
        self.label_few = str(int(label_few))

    def render(self, **kwargs: Any) -> None:  # type: ignore[override]
        """Put the data in the page's body as a JSON script element, then render the layer."""
        figure = self.get_root()
        assert isinstance(figure, Figure)  # a layer is always rendered inside a map's figure
        element = Element(f'<script type="application/json" id="{self.get_name()}_data">{self.data}</script>')
        figure.html.add_child(element, name=f"{self.get_name()}_data")
        super().render(**kwargs)
