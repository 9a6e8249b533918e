// Helpers the dashboard's scripts share: the API, messages, table cells, times, the confirmation.
// Every text goes in as text, never HTML.

const token = new URLSearchParams(location.search).get("token");
const headers = token ? { authorization: `Bearer ${token}` } : {};

export const STATES = ["pending", "scheduled", "active", "completed", "dead", "waiting"];
export const $ = (id) => document.getElementById(id);
export const enc = encodeURIComponent;

/**
 * Replaces <body>'s rows with <rows>, keeping the keyboard's place: a control focused in a row
 * (its link or its checkbox) is focused again in the row with the same `data-<key>`, so a live
 * refresh never throws a keyboard user back to the page's start.
 */
export function replaceRows(body, key, rows) {
  const el = document.activeElement;
  const row = el && body.contains(el) ? el.closest("tr") : null;
  const at = row?.dataset[key];
  const control = el?.matches?.("input[type=checkbox]") ? "input[type=checkbox]" : "a";
  body.replaceChildren(...rows);
  if (at === undefined) return;
  const again = rows.find((r) => r.dataset[key] === at)?.querySelector(control);
  again?.focus();
}

export async function api(path, body) {
  const init =
    body === undefined
      ? { headers }
      : {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify(body),
        };
  const res = await fetch(path, init);
  const data = await res.json();
  if (!res.ok) throw new Error(data.error ?? `HTTP ${res.status}`);
  return data;
}

export function say(text, error = false) {
  const el = $("message");
  el.textContent = text;
  el.className = error ? "error" : "";
}

export const fail = (e) => say(e.message, true);

export function cell(row, text, numeric = false) {
  const td = document.createElement("td");
  td.textContent = String(text);
  if (numeric) td.className = "n";
  row.append(td);
  return td;
}

export function age(ms) {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

export const iso = (ms) => new Date(ms).toISOString();

/**
 * A row whose first data cell (`td`) is a link to `href`: Tab reaches it, Enter follows it; a
 * click anywhere else on the row (not on a control of its own) follows it too.
 */
export function linkRow(row, td, href) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = td.textContent;
  td.replaceChildren(a);
  row.addEventListener("click", (ev) => {
    if (ev.target.closest("a, button, input, label")) return;
    a.click();
  });
}

export function confirmAction(text) {
  return new Promise((resolve) => {
    const dialog = $("confirm");
    $("confirm-text").textContent = text;
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
  });
}

/** A definition list's entries, each `dd` tagged with its field name. */
export function fields(dl, entries) {
  dl.replaceChildren();
  for (const [k, v] of entries) {
    if (v === undefined || v === "") continue;
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = String(v);
    dd.dataset.field = k;
    dl.append(dt, dd);
  }
}
