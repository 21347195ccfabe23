// The overview's and the public map's site layer (esc_gis.maps.compact.CompactPolygons): thousands
// of polygons drawn on one canvas. Read by esc_gis at run time and written once into each map's
// <head>; each layer of a map is then one call of escCompactPolygons. Vanilla JS, no build step.
// Popups, tooltips and labels are text, never markup: ids and lines are user data.
/* global L */
/* exported escCompactPolygons */

/**
 * Make the layer of sites `d` (esc_gis.maps.compact.encode_polygons, with `id`, `lines` and,
 * for labels, `lp`): delta-coded micro-degree rings and their offset tables.
 *
 * @param {object} d the layer's data, read by JSON.parse from its JSON script element: JSON.parse
 *   reads megabytes in milliseconds, where the same object literal in code costs the parser far more
 * @param {object} style Leaflet path options (color, weight, fillColor, fillOpacity)
 * @param {?number} labelZoom from this zoom on, each site in view is labelled with its id; null: never
 * @param {number} labelFew below labelZoom too, when at most this many sites are in view
 * @returns {L.Layer} the layer, with `escSites` (its number of sites) and, once drawn, `escLabels`
 */
function escCompactPolygons(d, style, labelZoom, labelFew) {
  "use strict";
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
}
