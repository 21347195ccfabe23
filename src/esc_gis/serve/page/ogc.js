// pygeoapi's own HTML pages (under /ogc), run under the service's Content-Security-Policy:
// the two inline scripts of pygeoapi's templates, here as a file (esc_gis/serve/pygeoapi_templates/_base.html).
// 1. Every page embeds its JSON-LD for search engines, as pygeoapi's _base.html does.
// 2. A collection, its items and one item draw their map, as pygeoapi's collection.html,
//    items/index.html and items/item.html do, from the JSON island the template writes
//    (<, > and & escaped as \u003c, \u003e, \u0026). The base map is the public page's.
//    A popup's link is built with the DOM (its title as text), not from a string of HTML.
/* global L */
"use strict";

(function embedJsonLd() {
  const path = `${window.location.protocol}//${window.location.host}${window.location.pathname}?f=jsonld`;
  fetch(path, { headers: { Accept: "application/ld+json" } })
    .then((resp) => (resp.ok ? resp.text() : null))
    .then((text) => {
      if (text === null) return;
      const block = document.createElement("script");
      block.type = "application/ld+json";
      // pygeoapi removes the context path: search engines do not expect it here, pyld requires it.
      block.textContent = text.replace("docs/jsonldcontext.jsonld", "");
      document.head.appendChild(block);
    })
    .catch(() => {}); // JSON-LD is for search engines: the page works without it
})();

(function drawMap() {
  const island = document.getElementById("esc-map-data");
  const container = document.getElementById("collection-map") || document.getElementById("items-map");
  if (!island || !container || typeof L === "undefined") return;
  const data = JSON.parse(island.textContent);
  const map = L.map(container).setView([0, 0], 1);
  if (data.tiles) {
    map.addLayer(L.tileLayer(data.tiles, { maxZoom: 18, attribution: data.attribution || "" }));
  }
  if (data.kind === "collection") {
    const [minx, miny, maxx, maxy] = data.bbox;
    const box = L.polygon([
      [miny, minx],
      [maxy, minx],
      [maxy, maxx],
      [miny, maxx],
    ]);
    map.addLayer(box);
    map.fitBounds(box.getBounds(), { maxZoom: 10 });
    return;
  }
  const items = L.geoJSON(data.features, {
    onEachFeature(feature, layer) {
      if (data.kind !== "items") return;
      const link = document.createElement("a");
      link.href = `${data.items_path}/${encodeURIComponent(feature.id)}?f=html`;
      const title = data.title_field ? (feature.properties || {})[data.title_field] : feature.id;
      link.textContent = String(title ?? feature.id);
      layer.bindPopup(link);
    },
  });
  if (data.kind === "items") {
    // pygeoapi's clustering: many items as clusters, each one from zoom 9.
    const markers = L.markerClusterGroup({ disableClusteringAtZoom: 9, chunkedLoading: true, chunkInterval: 500 });
    markers.addLayer(items);
    map.addLayer(markers);
    map.fitBounds(items.getBounds());
  } else {
    map.addLayer(items);
    map.fitBounds(items.getBounds(), { maxZoom: 15 });
  }
})();
