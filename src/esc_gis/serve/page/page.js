// The public page: the live map of active permits (the OGC API's `permits` collection), the
// Village's layers, and "Do I need a permit?" (ask.js). Vanilla JS, no build step; the page's
// Content-Security-Policy allows no inline script or style, so every element is built with the
// DOM and colours are set through element.style (the CSSOM), never a style attribute.
/* global L */
import { startAsk } from "./ask.js";
import { el, getJSON } from "./dom.js";

// The service writes its settings as JSON in a <script type="application/json"> element, with
// <, > and & escaped as \u003c, \u003e, \u0026 (a script element's text is not HTML-decoded).
const settings = JSON.parse(document.getElementById("settings").textContent);
const api = `/${settings.api}`;

// How each of the Village's layers is drawn; the jurisdiction as an outline. Their legend
// swatches are the `sw-<name>` classes of page.css.
const LAYER_STYLE = {
  jurisdiction: { color: "#1a1a1a", weight: 2.5, dashArray: "8 5", fill: false },
  // The waters come as two collections, one geometry type each: streams as lines, lakes and wetlands as areas.
  waters_lines: { color: "#08519c", weight: 2.5 },
  waters_polygons: { color: "#08519c", weight: 1, fillColor: "#6baed6", fillOpacity: 0.55 },
  protective_areas: { color: "#006d2c", weight: 1.5, dashArray: "4 3", fillColor: "#74c476", fillOpacity: 0.2 },
  steep_slopes: { color: "#8c510a", weight: 0.5, fillColor: "#bf812d", fillOpacity: 0.5 },
  targeted_areas: { color: "#ae017e", weight: 1.5, dashArray: "2 4", fill: false },
};
// Shown on the map from the start; the others once a site is screened, or from the layer control.
const SHOWN_AT_START = new Set(["jurisdiction"]);

function items(name) {
  return getJSON(`${api}/collections/${encodeURIComponent(name)}/items?f=json&limit=1000`);
}

function acres(value) {
  return typeof value === "number" ? value.toLocaleString("en-US", { maximumFractionDigits: 2 }) : null;
}

function makeMap() {
  const map = L.map("map", { zoomSnap: 0.5 });
  const [w, s, e, n] = settings.bbox;
  map.fitBounds([[s, w], [n, e]]);
  if (settings.basemap) {
    const host = new URL(settings.basemap.replace(/[{}]/g, "")).host;
    const osm = host.endsWith("openstreetmap.org");
    const credit = osm
      ? '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors'
      : `Base map: ${host}`; // a URL's host holds no markup
    L.tileLayer(settings.basemap, { maxZoom: 19, attribution: credit }).addTo(map);
  }
  map.attributionControl.addAttribution(el("span", settings.village).innerHTML); // as text, escaped
  return map;
}

function popup(p, label) {
  const box = el("div", null, "popup");
  box.append(el("h3", `Permit ${p.permit_number}`));
  const dl = el("dl");
  const rows = [
    ["Site", p.site_address],
    ["Status", label],
    ["Expires on", p.expires_on || "not set"],
    ["Disturbed", acres(p.disturbed_acres) === null ? "not given" : `${acres(p.disturbed_acres)} acres`],
  ];
  for (const [k, v] of rows) dl.append(el("dt", k), el("dd", v));
  box.append(dl);
  return box;
}

function legendItem(label, swatch) {
  const li = el("li");
  li.append(swatch, el("span", label, "legend-label"));
  return li;
}

function showPermits(map, control, data, isDrawing) {
  const status = settings.public_status;
  const shown = data.features.filter((f) => f.properties && status[f.properties.status]);
  const layer = L.geoJSON(
    { type: "FeatureCollection", features: shown },
    {
      style: (f) => {
        const colour = status[f.properties.status][1];
        return { color: colour, weight: 2, fillColor: colour, fillOpacity: 0.45 };
      },
      onEachFeature: (f, lyr) => {
        lyr.on("click", (e) => {
          if (isDrawing()) return; // the click is a corner of the site being drawn
          L.popup().setLatLng(e.latlng).setContent(popup(f.properties, status[f.properties.status][0])).openOn(map);
        });
      },
    },
  ).addTo(map);
  control.addOverlay(layer, "Erosion-control permits");

  const counts = {};
  for (const f of shown) counts[f.properties.status] = (counts[f.properties.status] || 0) + 1;
  const legend = document.getElementById("legend");
  for (const [key, [label, colour]] of Object.entries(status)) {
    const swatch = el("span", null, "swatch");
    swatch.style.backgroundColor = colour; // CSSOM: allowed by the page's CSP
    const li = legendItem(`${label}: `, swatch);
    const count = el("span", counts[key] || 0, "count");
    count.dataset.status = key;
    li.append(count, el("span", (counts[key] || 0) === 1 ? " permit" : " permits"));
    legend.append(li);
  }
  const tbody = document.querySelector("#permit-table tbody");
  for (const f of shown) {
    const p = f.properties;
    const tr = el("tr");
    const values = [p.permit_number, p.site_address, status[p.status][0], p.expires_on || "not set", acres(p.disturbed_acres) ?? "not given"];
    tr.append(el("th", values[0]), ...values.slice(1).map((v) => el("td", v)));
    tr.firstChild.scope = "row";
    tbody.append(tr);
  }
  const n = shown.length;
  // The service serves at most 1,000 features a request: say so if there are more.
  const more = data.numberMatched > data.features.length ? ` (the first ${data.features.length} of ${data.numberMatched})` : "";
  document.getElementById("map-status").textContent =
    `${n} ${n === 1 ? "permit is" : "permits are"} on the map${more}. ` +
    "Select a permit for its details, or open the table below the legend.";
}

async function addLayers(map, control) {
  const layers = {};
  const legend = document.getElementById("legend-layers");
  await Promise.all(
    settings.layers.map(async ({ name, title }) => {
      const style = LAYER_STYLE[name] || { color: "#444444", weight: 1, fillOpacity: 0.2 };
      try {
        const data = await items(name);
        layers[name] = L.geoJSON(data, { style, interactive: false });
      } catch (err) {
        document.getElementById("map-status").textContent = `The layer "${title}" could not be loaded.`;
      }
    }),
  );
  for (const { name, title } of settings.layers) {
    if (!layers[name]) continue;
    control.addOverlay(layers[name], title);
    if (SHOWN_AT_START.has(name)) layers[name].addTo(map);
    legend.append(legendItem(title, el("span", null, `swatch sw-${name}`)));
  }
  return layers;
}

async function main() {
  if (settings.contact) document.getElementById("contact").textContent = ` (${settings.contact})`;
  document.getElementById("publication").textContent = settings.publication || "";
  const map = makeMap();
  // Collapsed: it opens on hover, focus or Enter, and leaves the map visible on a phone.
  const control = L.control.layers(null, null, { collapsed: true }).addTo(map);
  const layers = addLayers(map, control);
  const ask = startAsk({
    map,
    settings,
    api,
    control,
    // After an answer: the map of what was measured, the site among the layers it was measured against.
    showMeasured: async (bounds) => {
      for (const layer of Object.values(await layers)) layer.addTo(map);
      map.fitBounds(bounds, { padding: [30, 30], maxZoom: 18 });
    },
  });
  window.escGis = { map, settings }; // for the browser tests (tests/test_serve_page.py)
  try {
    showPermits(map, control, await items("permits"), ask.isDrawing);
  } catch (err) {
    document.getElementById("map-status").textContent = "The permits could not be loaded. Please reload the page.";
  }
  await layers;
  document.body.dataset.ready = "true";
}

main();
