// The screening's answer in plain words: the decision, every finding with its section and the
// kind of source it rests on, the measured numbers with their units, and the notice that a
// screening is not a permit decision. Built as DOM text: nothing of the answer is parsed as HTML.
import { el } from "./dom.js";

const HEADLINE = {
  required: "A permit is required",
  not_required: "No permit is required by the area screened",
  not_applicable: "The ordinance does not apply here",
};
// Why it does not apply, when the reason is the land's use or who works, not the place.
const NOT_APPLICABLE = {
  exempt_agricultural: "The ordinance does not apply to this activity",
  exempt_silviculture: "The ordinance does not apply to this activity",
  excluded_state_agency: "The ordinance does not apply to this work",
};
// A finding's basis in words (DESIGN.md: a reading is never presented as the law).
const BASIS = {
  ordinance: "the ordinance (its text)",
  interpretation: "an interpretation (a reading where the ordinance's text is silent)",
  policy: "policy (this service's own practice, not the ordinance)",
  technical_standard: "a technical standard (not the ordinance's own words)",
  standard: "a technical standard (not the ordinance's own words)",
};
const SQFT_PER_ACRE = 43560;

function sqft(v) {
  const acres = (v / SQFT_PER_ACRE).toLocaleString("en-US", { maximumFractionDigits: 3 });
  return `${Math.round(v).toLocaleString("en-US")} sq ft (${acres} acres)`;
}

function feet(v) {
  return `${Math.round(v).toLocaleString("en-US")} ft`;
}

/** The rows of the measured table: [key, label, format]. */
function measuredRows(village) {
  return [
    ["disturbed_sqft", "Land to be disturbed", sqft],
    ["disturbed_in_jurisdiction_sqft", `Disturbed inside the ${village}`, sqft],
    ["plan_disturbed_sqft", "Disturbed by the whole common plan", sqft],
    ["protective_disturbed_sqft", "Disturbed inside protective areas", sqft],
    ["in_water_sqft", "Disturbed inside waters", sqft],
    ["steep_disturbed_sqft", "Disturbed on steep slopes", sqft],
    ["nearest_water_ft", "Nearest water, from the disturbance", feet],
  ];
}

function findingList(findings, className) {
  const list = el("ul", null, className);
  for (const f of findings) {
    const li = el("li", null, `finding basis-${f.basis}`);
    li.append(el("p", f.message, "message"));
    const cite = el("p", null, "cite");
    cite.append(el("span", f.section, "section"), document.createTextNode(" · based on "));
    cite.append(el("span", BASIS[f.basis] || f.basis, "basis"));
    li.append(cite);
    list.append(li);
  }
  return list;
}

/**
 * Show an answer of the `screen` process in `box`.
 * @param {HTMLElement} box
 * @param {object} answer the process's JSON answer
 * @param {string} village
 */
export function renderAnswer(box, answer, village) {
  box.replaceChildren();
  const words = (answer.permit === "not_applicable" && NOT_APPLICABLE[answer.applicability]) || HEADLINE[answer.permit];
  // A "does not apply" resting on readings alone (a site outside the Village but inside the
  // extraterritorial area the ordinance defines) says so: a reading is never presented as the law.
  const findings = answer.findings || [];
  const onReading =
    answer.permit === "not_applicable" && findings.length > 0 && findings.every((f) => f.basis === "interpretation");
  const said = onReading ? `${words}, on a reading of the ordinance` : words;
  const headline = el("h3", said || answer.permit, `headline permit-${answer.permit}`);
  headline.id = "answer-headline";
  box.append(headline);
  const notice = el("p", null, "notice");
  notice.append(el("strong", "A screening, not a permit decision. "), document.createTextNode(answer.notice));
  box.append(notice);

  box.append(el("h4", "Why: the findings"), findingList(answer.findings || [], "findings decision"));

  box.append(el("h4", "What was measured"));
  const table = el("table", null, "measured");
  table.append(el("caption", answer.measured_note || ""));
  const body = el("tbody");
  for (const [key, label, format] of measuredRows(village)) {
    const v = answer.measured ? answer.measured[key] : null;
    const tr = el("tr");
    const th = el("th", label);
    th.scope = "row";
    tr.append(th, el("td", typeof v === "number" ? format(v) : "not measured"));
    body.append(tr);
  }
  table.append(body);
  box.append(table);

  if (answer.notes && answer.notes.length) {
    box.append(el("h4", "What else to know"), findingList(answer.notes, "findings notes"));
  }
  if (answer.run_findings && answer.run_findings.length) {
    box.append(el("h4", "About this screening"), findingList(answer.run_findings, "findings run-findings"));
  }
}

/** Show an error in `box`: the service's OGC exception, or what went wrong in the browser. */
export function renderError(box, message) {
  box.replaceChildren(el("h3", "The site could not be screened"), el("p", message));
}
