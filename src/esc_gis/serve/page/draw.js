// Drawing a polygon on a Leaflet map by clicking its corners (Leaflet's core has no draw tool).
//
// A Sketch collects clicked corners, shows them as a dashed outline with a handle per corner,
// and closes the shape when the first corner is clicked again, finish() is called, or the
// Enter key is pressed. It hands the closed ring to onDone as a GeoJSON Polygon in
// longitude/latitude (RFC 7946: counter-clockwise outer ring, first corner repeated last).
/* global L */

const HANDLE = { radius: 6, weight: 2, color: "#1a1a1a", fillColor: "#ffffff", fillOpacity: 1, bubblingMouseEvents: false };

export class Sketch {
  /**
   * @param {L.Map} map
   * @param {{color: string, onDone: function(object): void, onChange: function(Sketch): void}} options
   */
  constructor(map, { color, onDone, onChange }) {
    this.map = map;
    this.color = color;
    this.onDone = onDone;
    this.onChange = onChange;
    this.points = [];
    this.active = false;
    this.layer = L.layerGroup();
    this._click = (e) => this.add(e.latlng);
    this._key = (e) => this._onKey(e);
  }

  /** Start collecting corners (a new shape). */
  start() {
    this.points = [];
    this.active = true;
    this.layer.addTo(this.map);
    this.map.on("click", this._click);
    this.map.doubleClickZoom.disable(); // two quick corners are not a zoom
    this.map.getContainer().classList.add("drawing");
    document.addEventListener("keydown", this._key);
    this._redraw();
  }

  /** Stop collecting corners without a shape. */
  stop() {
    this.active = false;
    this.points = [];
    this.map.off("click", this._click);
    this.map.doubleClickZoom.enable();
    this.map.getContainer().classList.remove("drawing");
    document.removeEventListener("keydown", this._key);
    this._redraw();
  }

  /** Add a corner. */
  add(latlng) {
    if (!this.active) return;
    this.points.push(latlng);
    this._redraw();
  }

  /** Remove the last corner. */
  undo() {
    this.points.pop();
    this._redraw();
  }

  /** Close the shape: hand it to onDone if it has three corners or more; true if it did. */
  finish() {
    if (this.points.length < 3) return false;
    const ring = this.points.map((p) => [round(p.lng), round(p.lat)]);
    if (signedArea(ring) < 0) ring.reverse();
    ring.push(ring[0].slice());
    this.stop();
    this.onDone({ type: "Polygon", coordinates: [ring] });
    return true;
  }

  _onKey(e) {
    const typing = e.target.closest && e.target.closest("textarea, input, select");
    if (typing) return;
    if (e.key === "Enter" && this.points.length >= 3) {
      e.preventDefault();
      this.finish();
    } else if (e.key === "Escape") {
      this.stop();
    } else if (e.key === "Backspace" && this.points.length) {
      e.preventDefault();
      this.undo();
    }
  }

  _redraw() {
    this.layer.clearLayers();
    if (this.points.length > 1) {
      L.polyline(this.points, { color: this.color, weight: 3, dashArray: "6 4", interactive: false }).addTo(this.layer);
    }
    this.points.forEach((p, i) => {
      const handle = L.circleMarker(p, HANDLE).addTo(this.layer);
      if (i === 0) {
        handle.setStyle({ fillColor: this.color, radius: 8 });
        handle.on("click", () => this.finish());
      }
    });
    if (this.onChange) this.onChange(this);
  }
}

function round(v) {
  return Math.round(v * 1e7) / 1e7; // 1e-7 degree is about a centimetre
}

function signedArea(ring) {
  let a = 0;
  for (let i = 0; i < ring.length; i++) {
    const [x1, y1] = ring[i];
    const [x2, y2] = ring[(i + 1) % ring.length];
    a += x1 * y2 - x2 * y1;
  }
  return a / 2;
}
