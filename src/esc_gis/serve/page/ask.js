// "Do I need a permit?": the site (and, if only part of it is disturbed, the area to be
// disturbed) from a drawing, a GeoJSON file or pasted GeoJSON, sent to the OGC API's `screen`
// process; the answer shown in words (answer.js) and on the map.
//
// Each shape's textarea holds its GeoJSON whatever its source: a finished drawing and an
// uploaded file are written into it, so what is sent is always visible and editable by keyboard.
/* global L */
import { renderAnswer, renderError } from "./answer.js";
import { el } from "./dom.js";
import { Sketch } from "./draw.js";

const SHAPE_STYLE = {
  site: { color: "#1a1a1a", weight: 3, fillColor: "#ffd92f", fillOpacity: 0.3 },
  disturbed: { color: "#c51b7d", weight: 3, dashArray: "6 3", fillColor: "#f1b6da", fillOpacity: 0.45 },
};
const NAMES = { site: "the site", disturbed: "the area to be disturbed" };

/** Read GeoJSON text; throw an Error naming the shape and the fix. */
function parseShape(text, kind) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `The text given for ${NAMES[kind]} is not JSON (${err.message}). ` +
        'Give GeoJSON such as {"type": "Polygon", "coordinates": [[[lon, lat], ...]]}.',
    );
  }
  if (!value || typeof value !== "object" || Array.isArray(value) || typeof value.type !== "string") {
    throw new Error(`The JSON given for ${NAMES[kind]} is not a GeoJSON object: it needs a "type".`);
  }
  return value;
}

/** One shape's inputs: draw tools, file, textarea, and its layer on the map. */
class ShapeInput {
  constructor(kind, fieldset, { map, status, drawing }) {
    this.kind = kind;
    this.map = map;
    this.status = status;
    this.text = fieldset.querySelector("textarea");
    this.file = fieldset.querySelector('input[type="file"]');
    this.buttons = {};
    for (const b of fieldset.querySelectorAll("button[data-draw]")) this.buttons[b.dataset.draw] = b;
    this.layer = L.geoJSON(null, { style: SHAPE_STYLE[kind], interactive: false }).addTo(map);
    this.sketch = new Sketch(map, {
      color: SHAPE_STYLE[kind].color,
      onDone: (geom) => this.set(JSON.stringify(geom), `${cap(NAMES[kind])} is drawn.`),
      onChange: (s) => this.tools(s),
    });
    this.buttons.start.addEventListener("click", () => drawing.start(this));
    this.buttons.finish.addEventListener("click", () => this.sketch.finish());
    this.buttons.undo.addEventListener("click", () => this.sketch.undo());
    this.buttons.clear.addEventListener("click", () => this.set("", `${cap(NAMES[kind])} is cleared.`));
    this.file.addEventListener("change", () => this.load());
    let timer;
    this.text.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.show(), 300);
    });
  }

  /** Enable the draw tools that apply now, and say where the drawing stands. */
  tools(sketch) {
    const n = sketch.points.length;
    this.buttons.start.setAttribute("aria-pressed", String(sketch.active));
    this.buttons.finish.disabled = !sketch.active || n < 3;
    this.buttons.undo.disabled = !sketch.active || n === 0;
    if (sketch.active) {
      this.status.textContent =
        `Drawing ${NAMES[this.kind]}: ${n} ${n === 1 ? "corner" : "corners"}. ` +
        (n < 3 ? "Click the map to add corners." : "Click the first corner, press Finish or Enter to close it.");
    }
  }

  /** Replace the shape's GeoJSON text and redraw it. */
  set(text, message) {
    this.sketch.stop();
    this.text.value = text;
    this.show();
    this.status.textContent = message;
  }

  async load() {
    const f = this.file.files[0];
    if (!f) return;
    this.set(await f.text(), `${cap(NAMES[this.kind])} is read from ${f.name}.`);
  }

  /** Draw the textarea's shape on the map, if it reads; a bad text shows nothing until submitted. */
  show() {
    this.layer.clearLayers();
    if (!this.text.value.trim()) return;
    try {
      this.layer.addData(parseShape(this.text.value, this.kind));
    } catch (err) {
      this.layer.clearLayers();
    }
  }

  /** The shape's GeoJSON, or null when none is given. */
  value() {
    return this.text.value.trim() ? parseShape(this.text.value, this.kind) : null;
  }
}

function cap(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Read the process's error: OGC exception JSON {code, description}, or the HTTP status. */
async function errorText(resp) {
  try {
    const body = await resp.json();
    if (body && body.description) return String(body.description).replace(/^Error executing process: /, "");
  } catch (err) {
    // not JSON: say the status below
  }
  return `The service answered ${resp.status} ${resp.statusText}. Please try again later.`;
}

/**
 * Wire the form. Returns {isDrawing}: whether a shape is being drawn (map clicks are corners).
 * @param {{map: L.Map, settings: object, api: string, control: L.Control.Layers, showMeasured: function}} ctx
 */
export function startAsk({ map, settings, api, control, showMeasured }) {
  const status = document.getElementById("draw-status");
  const answerBox = document.getElementById("answer");
  const errorBox = document.getElementById("error");
  const button = document.getElementById("screen-button");
  let current = null;
  const drawing = {
    start(input) {
      if (input.sketch.active) return input.sketch.stop(); // the button toggles drawing
      for (const s of shapes) s.sketch.stop();
      current = input;
      input.sketch.start();
      map.closePopup();
    },
  };
  const site = new ShapeInput("site", document.getElementById("site-fields"), { map, status, drawing });
  const disturbed = new ShapeInput("disturbed", document.getElementById("disturbed-inputs"), { map, status, drawing });
  const shapes = [site, disturbed];
  control.addOverlay(site.layer, "The site you give");
  control.addOverlay(disturbed.layer, "The area to be disturbed");

  // Each activity's words are the profile's: "name: what it covers"; the select shows the name,
  // the text under it what the chosen one covers.
  const select = document.getElementById("activity");
  const about = document.getElementById("activity-about");
  for (const { value, label } of settings.activities) {
    const opt = el("option", label.split(":")[0]);
    opt.value = value;
    opt.dataset.about = label;
    select.append(opt);
  }
  const describe = () => {
    about.textContent = select.selectedOptions[0] ? select.selectedOptions[0].dataset.about : "";
  };
  select.value = "construction";
  if (!select.value && select.options.length) select.selectedIndex = 0;
  describe();
  select.addEventListener("change", describe);

  const part = document.getElementById("disturbed-part");
  const partInputs = document.getElementById("disturbed-inputs");
  for (const radio of document.querySelectorAll('input[name="disturbed"]')) {
    radio.addEventListener("change", () => {
      partInputs.hidden = !part.checked;
      if (!part.checked) disturbed.set("", "The whole site is taken as disturbed.");
    });
  }

  document.getElementById("screen-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    errorBox.replaceChildren();
    const inputs = { activity: select.value };
    try {
      inputs.site = site.value();
      if (!inputs.site) throw new Error("Give the site first: draw it on the map, upload a GeoJSON file or paste GeoJSON.");
      if (part.checked) {
        inputs.disturbed = disturbed.value();
        if (!inputs.disturbed) throw new Error('Give the area to be disturbed, or choose "The whole site".');
      }
    } catch (err) {
      renderError(errorBox, err.message);
      return;
    }
    button.disabled = true;
    answerBox.setAttribute("aria-busy", "true");
    answerBox.replaceChildren(el("p", "Screening the site…"));
    try {
      const resp = await fetch(`${api}/processes/screen/execution`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ inputs }),
      });
      if (!resp.ok) {
        answerBox.replaceChildren();
        renderError(errorBox, await errorText(resp));
        return;
      }
      renderAnswer(answerBox, await resp.json(), settings.village);
      answerBox.focus();
      for (const s of shapes) s.show(); // the text as sent, even if typed a moment ago
      const bounds = site.layer.getBounds();
      if (bounds.isValid()) await showMeasured(bounds);
    } catch (err) {
      answerBox.replaceChildren();
      renderError(errorBox, "The service could not be reached. Check your connection and try again.");
    } finally {
      button.disabled = false;
      answerBox.removeAttribute("aria-busy");
    }
  });

  return { isDrawing: () => Boolean(current && current.sketch.active) };
}
