// The EchoMQ dashboard page: reads the JSON API, follows the live stream, and steers through
// the API's actions after a confirmation. No framework. Every view has its own address (the
// URL's hash): `#/` the queues, `#/q/<queue>?state=<s>&offset=<n>` a queue's jobs (`&text=`: a
// payload search), `#/q/<queue>/job/<id>` a job, `#/workers` the workers — so history and
// reload keep the place.
import { listed, selectCell, wireBulk } from "./bulk.js";
import { drawHour } from "./charts.js";
import { showFlow, showFlowControl, showSchedules } from "./extras.js";
import { openJob } from "./job.js";
import { showEditor, wireSteer } from "./steer.js";
import { hideWorkers, showWorkers } from "./workers.js";
import { $, age, api, cell, confirmAction, enc, fail, linkRow, replaceRows, STATES, say } from "./lib.js";

const PAGE = 20;
let hourAt = 0;
const view = {
  queue: null,
  state: "pending",
  offset: 0,
  text: "",
  job: null,
  snapshot: null,
  readOnly: false,
};

/** The place the hash names. */
function place() {
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const parts = (path ?? "").split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query ?? "");
  return { parts, params };
}

/** The hash of a queue's list (and optionally a job), keeping what is not given. */
export function queueHash(queue, { state = "pending", offset = 0, text = "", job } = {}) {
  const params = new URLSearchParams({ state });
  if (offset) params.set("offset", String(offset));
  if (text) params.set("text", text);
  return `#/q/${enc(queue)}${job ? `/job/${enc(job)}` : ""}?${params}`;
}

function go(hash) {
  if (location.hash === hash) show().catch(fail);
  else location.hash = hash;
}

function sparkline(values) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("width", "120");
  svg.setAttribute("height", "24");
  svg.setAttribute("aria-hidden", "true");
  const known = values.map((v) => v ?? 0);
  const max = Math.max(1, ...known);
  const points = known.map(
    (v, i) => `${(i / Math.max(1, known.length - 1)) * 118 + 1},${23 - (v / max) * 22}`,
  );
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", points.join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "#0969da");
  svg.append(line);
  return svg;
}

const LIST = 50;

/** The page of the queue list asked for: offset, filter, and the queue shown (its counts). */
function listQuery() {
  const params = new URLSearchParams({ offset: String((view.list ?? 0) * LIST), limit: String(LIST) });
  const filter = $("queue-filter").value.trim();
  if (filter) params.set("filter", filter);
  if (view.queue) params.set("current", view.queue);
  return params.toString();
}

/** Renders one page of the queue list as the server sent it (`GET /api/queues?limit=…`). */
function renderQueues(snapshot) {
  view.snapshot = snapshot;
  const body = $("queues").querySelector("tbody");
  const rows = [];
  const shown = snapshot.queues;
  const pages = Math.max(1, Math.ceil(snapshot.total / LIST));
  view.list = Math.floor(snapshot.offset / LIST);
  $("queues-page").textContent =
    `${snapshot.total === 0 ? 0 : snapshot.offset + 1}–${snapshot.offset + shown.length} of ${snapshot.total} queues`;
  $("queues-prev").disabled = view.list === 0;
  $("queues-next").disabled = view.list >= pages - 1;
  for (const q of shown) {
    const row = document.createElement("tr");
    row.dataset.queue = q.name;
    row.className = `${q.name === view.queue ? "selected" : ""}${q.sampled ? "" : " stale"}`;
    const name = cell(row, q.counts.paused ? `${q.name} (paused)` : q.name);
    if (!q.sampled) {
      // Off screen among many: the counts of its last recount, said as such (never as live).
      const counted = q.countedAt > 0;
      for (const s of STATES) cell(row, counted ? q.counts[s] : "…", true).dataset.state = s;
      cell(row, "—", true);
      const when = counted ? `counted ${age(Math.max(0, snapshot.at - q.countedAt))} ago` : "not counted yet";
      cell(row, when).dataset.countedAt = q.countedAt;
      row.title = `${q.name}: ${when}, not followed live`;
      linkRow(row, name, queueHash(q.name));
      rows.push(row);
      continue;
    }
    for (const s of STATES) cell(row, q.counts[s], true).dataset.state = s;
    cell(row, age(q.oldestPendingMs), true);
    const rates = q.completedPerSec;
    const m = q.minute;
    const avg = m && m.seconds > 0 ? m.completed / m.seconds : m ? 0 : null;
    const spark = cell(row, avg === null ? "— " : `${avg.toFixed(1)}/s `);
    spark.dataset.rate = rates.at(-1) ?? "";
    if (m) {
      spark.dataset.minuteCompleted = m.completed;
      spark.dataset.minuteSeconds = m.seconds;
    }
    spark.append(sparkline(rates));
    linkRow(row, name, queueHash(q.name));
    rows.push(row);
  }
  replaceRows(body, "queue", rows);
  $("incomplete").hidden = snapshot.complete;
  const current = [snapshot.current, ...shown].find((q) => q && q.name === view.queue);
  if (current) renderQueueHead(current);
  // A complete snapshot without the queue shown: the server holds none of its keys (drained or
  // removed to nothing), so every count is 0 — not the last counts drawn.
  else if (view.queue && snapshot.complete)
    renderQueueHead({ counts: { ...Object.fromEntries(STATES.map((s) => [s, 0])), paused: false } });
  if (current && Date.now() - hourAt > 10_000) {
    hourAt = Date.now();
    drawHour(view.queue).catch(fail);
  }
}

function renderQueueHead(q) {
  $("queue-paused").hidden = !q.counts.paused;
  const nav = $("states");
  nav.replaceChildren();
  for (const s of STATES) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = `${s} (${q.counts[s]})`;
    b.dataset.state = s;
    if (s === view.state) {
      b.className = "current";
      b.setAttribute("aria-current", "page");
    }
    b.addEventListener("click", () => go(queueHash(view.queue, { state: s })));
    nav.append(b);
  }
}

function jobRow(job) {
  const row = document.createElement("tr");
  row.dataset.id = job.id;
  const id = cell(row, job.id);
  cell(row, job.state);
  cell(row, job.maxAttempts ? `${job.attempts}/${job.maxAttempts}` : job.attempts, true);
  cell(row, new Date(job.createdAt).toISOString());
  cell(row, job.error ?? "");
  selectCell(row, job.id, view.readOnly);
  linkRow(row, id, queueHash(view.queue, { state: view.state, offset: view.offset, job: job.id }));
  return row;
}

async function loadJobs() {
  const q = enc(view.queue);
  const body = $("jobs").querySelector("tbody");
  if (view.text) {
    const found = await api(`/api/queues/${q}/search?state=${view.state}&text=${enc(view.text)}`);
    replaceRows(body, "id", found.jobs.map(jobRow));
    const of = found.complete ? `${found.scanned}` : `the first ${found.scanned}`;
    $("page").textContent = `${found.jobs.length} with "${view.text}" in ${of} ${view.state}`;
    $("prev").disabled = true;
    $("next").disabled = true;
    listed(view.queue, view.state, 0);
    return;
  }
  const page = await api(`/api/queues/${q}/jobs?state=${view.state}&offset=${view.offset}&limit=${PAGE}`);
  replaceRows(body, "id", page.jobs.map(jobRow));
  const end = Math.min(page.total, view.offset + page.jobs.length);
  $("page").textContent = page.total === 0 ? "no jobs" : `${view.offset + 1}–${end} of ${page.total}`;
  $("prev").disabled = view.offset === 0;
  $("next").disabled = end >= page.total;
  listed(view.queue, view.state, page.total);
}

/** Renders the place the hash names. */
async function show() {
  const { parts, params } = place();
  const top = parts[0] === "workers" ? "workers" : "queues";
  for (const t of ["queues", "workers"]) {
    if (t === top) $(`nav-${t}`).setAttribute("aria-current", "page");
    else $(`nav-${t}`).removeAttribute("aria-current");
  }
  $("queues-view").hidden = top === "workers";
  if (top === "workers") {
    view.queue = null;
    view.job = null;
    $("queue").hidden = true;
    $("job").hidden = true;
    await showWorkers(params.get("queue"), fail);
    return;
  }
  hideWorkers();
  if (parts[0] !== "q" || parts[1] === undefined) {
    view.queue = null;
    view.job = null;
    $("queue").hidden = true;
    $("job").hidden = true;
    if (view.snapshot) renderQueues(view.snapshot);
    if (source) follow();
    return;
  }
  view.queue = parts[1];
  view.state = STATES.includes(params.get("state")) ? params.get("state") : "pending";
  view.offset = Math.max(0, Number.parseInt(params.get("offset") ?? "0", 10) || 0);
  view.text = params.get("text") ?? "";
  $("queue").hidden = false;
  $("queue-name").textContent = view.queue;
  $("search-text").value = view.text;
  if (view.snapshot) renderQueues(view.snapshot);
  if (source) follow();
  hourAt = Date.now();
  const hour = drawHour(view.queue).catch(fail);
  const jobs = loadJobs();
  const tab = parts[2] === "schedules" || parts[2] === "limits" ? parts[2] : "jobs";
  $("schedules-view").hidden = tab !== "schedules";
  $("limits-view").hidden = tab !== "limits";
  $("jobs-view").hidden = tab !== "jobs";
  const base = `#/q/${enc(view.queue)}`;
  $("tab-jobs").href = `${base}?state=${view.state}`;
  $("tab-schedules").href = `${base}/schedules`;
  $("tab-limits").href = `${base}/limits`;
  $("tab-workers").href = `#/workers?queue=${enc(view.queue)}`;
  for (const t of ["jobs", "schedules", "limits"]) {
    if (t === tab) $(`tab-${t}`).setAttribute("aria-current", "page");
    else $(`tab-${t}`).removeAttribute("aria-current");
  }
  if (tab === "schedules")
    await showSchedules(view.queue, ...(view.readOnly ? [] : [removeSchedule, toggleSchedule]));
  if (tab === "limits") await showFlowControl(view.queue);
  if (parts[2] === "job" && parts[3]) {
    view.job = await openJob(view.queue, parts[3], view.readOnly);
    showEditor(view.job, view.readOnly);
    await showFlow(view.queue, view.job);
  } else {
    view.job = null;
    $("job").hidden = true;
  }
  await jobs;
  await hour;
}

function removeSchedule(name) {
  return act(
    `Remove schedule ${name} of ${view.queue}?`,
    `/api/queues/${enc(view.queue)}/schedules/${enc(name)}/remove`,
  );
}

function toggleSchedule(name, paused) {
  return act(
    paused
      ? `Resume schedule ${name} of ${view.queue}? It fires again from its next instant (none for the time it was paused).`
      : `Pause schedule ${name} of ${view.queue}? It adds no job until resumed.`,
    `/api/queues/${enc(view.queue)}/schedules/${enc(name)}/${paused ? "resume" : "pause"}`,
  );
}

async function act(text, path, body = {}) {
  if (!(await confirmAction(text))) return;
  try {
    const reply = await api(path, body);
    say(`${text} — done${reply.removed !== undefined ? ` (${reply.removed} removed)` : ""}`);
    if (path.endsWith("/remove") && view.job)
      go(queueHash(view.queue, { state: view.state, offset: view.offset }));
    else await show();
  } catch (e) {
    fail(e);
  }
}

async function findJob(kind, value) {
  if (!view.queue || !value) return;
  if (kind === "text") return go(queueHash(view.queue, { state: view.state, text: value }));
  let id = value;
  if (kind === "key") {
    const found = await api(`/api/queues/${enc(view.queue)}/find?key=${enc(value)}`);
    if (found.id === null) return say(`no job holds idempotency key "${value}" in ${view.queue}`, true);
    id = found.id;
  }
  go(queueHash(view.queue, { state: view.state, offset: view.offset, job: id }));
}

function wire() {
  const q = () => `/api/queues/${enc(view.queue)}`;
  const j = () => `${q()}/jobs/${enc(view.job.id)}`;
  $("pause").addEventListener("click", () => act(`Pause ${view.queue}?`, `${q()}/pause`));
  $("resume").addEventListener("click", () => act(`Resume ${view.queue}?`, `${q()}/resume`));
  $("drain").addEventListener("click", () =>
    act(`Remove every waiting job of ${view.queue}?`, `${q()}/drain`),
  );
  $("clean-completed").addEventListener("click", () =>
    act(`Remove the completed jobs of ${view.queue}?`, `${q()}/clean`, { state: "completed" }),
  );
  $("clean-dead").addEventListener("click", () =>
    act(`Remove the dead jobs of ${view.queue}?`, `${q()}/clean`, { state: "dead" }),
  );
  $("job-retry").addEventListener("click", () => act(`Retry job ${view.job.id}?`, `${j()}/retry`));
  $("job-promote").addEventListener("click", () => act(`Run job ${view.job.id} now?`, `${j()}/promote`));
  $("job-remove").addEventListener("click", () => act(`Remove job ${view.job.id}?`, `${j()}/remove`));
  $("prev").addEventListener("click", () =>
    go(queueHash(view.queue, { state: view.state, offset: Math.max(0, view.offset - PAGE) })),
  );
  $("next").addEventListener("click", () =>
    go(queueHash(view.queue, { state: view.state, offset: view.offset + PAGE })),
  );
  $("search").addEventListener("submit", (ev) => {
    ev.preventDefault();
    findJob($("search-by").value, $("search-text").value.trim()).catch(fail);
  });
  $("queue-filter").addEventListener("input", () => {
    view.list = 0;
    follow();
  });
  $("queues-prev").addEventListener("click", () => {
    view.list = Math.max(0, view.list - 1);
    follow();
  });
  $("queues-next").addEventListener("click", () => {
    view.list += 1;
    follow();
  });
  $("home").addEventListener("click", (ev) => {
    ev.preventDefault();
    go("#/");
  });
  wireBulk(() => show());
  wireSteer({
    queue: () => view.queue,
    job: () => view.job,
    opened: (queue, id) => go(queueHash(queue, { state: view.state, job: id })),
    shown: () => show(),
  });
  window.addEventListener("hashchange", () => show().catch(fail));
}

let source = null;
let following = "";

/**
 * Follows the live stream of the page of queues shown (reopened when the page, the filter or
 * the queue shown changes: the server sends that page only, and samples its queues each time).
 */
function follow() {
  const query = listQuery();
  if (source && query === following) return;
  source?.close();
  following = query;
  const live = $("live");
  source = new EventSource(`/api/stream?${query}`); // the token, if any, rides in the page's cookie
  source.addEventListener("snapshot", (ev) => {
    live.textContent = "live";
    live.className = "badge on";
    renderQueues(JSON.parse(ev.data));
    // For a browser bench or test: when the first live data was drawn (performance marks).
    if (performance.getEntriesByName("echomq:live").length === 0) performance.mark("echomq:live");
  });
  source.addEventListener("error", () => {
    live.textContent = "reconnecting…";
    live.className = "badge off";
  });
}

async function main() {
  const { parts } = place();
  if (parts[0] === "q" && parts[1] !== undefined) view.queue = parts[1];
  // The first page of queues is asked for with the configuration: one round before the first paint.
  const [config, first] = await Promise.all([api("/api/config"), api(`/api/queues?${listQuery()}`)]);
  view.readOnly = config.readOnly;
  $("server").textContent =
    `wire ${config.wire}${config.cluster ? ", cluster" : ""} · echomq ${config.version}`;
  $("mode").hidden = !config.readOnly;
  for (const el of document.querySelectorAll("[data-steer]")) el.hidden = config.readOnly;
  wire();
  renderQueues(first);
  performance.mark("echomq:queues"); // the queue table drawn, from the latest snapshot
  follow();
  await show();
}

main().catch(fail);
