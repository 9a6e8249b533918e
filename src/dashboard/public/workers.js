// The workers view (`#/workers`, `#/workers?queue=<q>`): who is connected now, per queue and one
// by one — concurrency, busy slots, connected for, last seen — read again every 2 s while shown
// (`GET /api/workers`: `CLIENT LIST` on every primary). A worker that stops leaves the list.
import { $, age, api, cell, enc, iso } from "./lib.js";

const REFRESH_MS = 2000;
let timer = null;
let shownQueue = null;

const dash = (v) => (v === null || v === undefined ? "—" : v);

function render({ at, workers, queues }) {
  const only = shownQueue;
  const list = only === null ? workers : workers.filter((w) => w.queue === only);
  const sums = only === null ? queues : queues.filter((q) => q.queue === only);
  $("workers-title").textContent = only === null ? "Workers" : `Workers of ${only}`;
  $("workers-all").hidden = only === null;
  const qb = $("worker-queues").querySelector("tbody");
  qb.replaceChildren();
  for (const q of sums) {
    const row = document.createElement("tr");
    row.dataset.queue = q.queue;
    const name = cell(row, "");
    const a = document.createElement("a");
    a.href = `#/q/${enc(q.queue)}?state=active`;
    a.textContent = q.queue;
    name.append(a);
    cell(row, q.workers, true).dataset.field = "workers";
    cell(row, q.concurrency, true).dataset.field = "concurrency";
    cell(row, q.busy, true).dataset.field = "busy";
    qb.append(row);
  }
  const wb = $("workers").querySelector("tbody");
  wb.replaceChildren();
  for (const w of list) {
    const row = document.createElement("tr");
    row.dataset.worker = w.id ?? w.addr;
    row.dataset.queue = w.queue;
    cell(row, w.queue);
    cell(row, dash(w.id)).dataset.field = "id";
    cell(row, `${dash(w.host)} / ${dash(w.pid)}`);
    cell(row, dash(w.concurrency), true).dataset.field = "concurrency";
    cell(row, dash(w.busy), true).dataset.field = "busy";
    cell(row, age(w.connectedMs), true);
    const seen = cell(row, w.idleMs < 1000 ? "now" : `${age(w.idleMs)} ago`);
    seen.title = iso(w.lastSeenAt);
    cell(row, w.node);
    wb.append(row);
  }
  $("workers-none").hidden = list.length > 0;
  $("workers-at").textContent = `as of ${iso(at)}: ${list.length} connected`;
}

async function refresh() {
  render(await api("/api/workers"));
}

/** Shows the workers (of `queue` only, when given) and follows them until `hideWorkers()`. */
export async function showWorkers(queue, fail) {
  shownQueue = queue;
  $("workers-view").hidden = false;
  clearInterval(timer);
  timer = setInterval(() => refresh().catch(fail), REFRESH_MS);
  await refresh();
}

export function hideWorkers() {
  clearInterval(timer);
  timer = null;
  $("workers-view").hidden = true;
}
