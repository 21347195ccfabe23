// Small DOM and fetch helpers shared by the page's modules.

/** A new element with its text (set as text, never parsed as HTML) and classes. */
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/** GET a URL's JSON; throw an Error with a readable message on failure. */
export async function getJSON(url) {
  const resp = await fetch(url, { headers: { Accept: "application/geo+json, application/json" } });
  if (!resp.ok) throw new Error(`${url} answered ${resp.status}`);
  return resp.json();
}
