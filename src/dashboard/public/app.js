// The EchoMQ dashboard page: reads the JSON API, follows the live stream, and steers through
// the API's actions after a confirmation. No framework; every text goes in as text, never HTML.

const token = new URLSearchParams(location.search).get("token");
const headers = token ? { authorization: `Bearer ${token}` } : {};
const STATES = ["pending", "scheduled", "active", "completed", "dead", "waiting"];
const PAGE = 20;

const view = { queue: null, state: "pending", offset: 0, job: null, snapshot: null, readOnly: false };
const $ = (id) => document.getElementById(id);

async function api(path, body) {
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

function say(text, error = false) {
  const el = $("message");
  el.textContent = text;
  el.className = error ? "error" : "";
}

function cell(row, text, numeric = false) {
  const td = document.createElement("td");
  td.textContent = String(text);
  if (numeric) td.className = "n";
  row.append(td);
  return td;
}

function age(ms) {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

function sparkline(values) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("width", "120");
  svg.setAttribute("height", "24");
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

function renderQueues(snapshot) {
  view.snapshot = snapshot;
  const body = $("queues").querySelector("tbody");
  body.replaceChildren();
  for (const q of snapshot.queues) {
    const row = document.createElement("tr");
    row.dataset.queue = q.name;
    if (q.name === view.queue) row.className = "selected";
    cell(row, q.counts.paused ? `${q.name} (paused)` : q.name);
    for (const s of STATES) cell(row, q.counts[s], true).dataset.state = s;
    cell(row, age(q.oldestPendingMs), true);
    const rates = q.completedPerSec;
    const last = rates.at(-1);
    const spark = cell(row, last === null || last === undefined ? "— " : `${last.toFixed(1)}/s `);
    spark.dataset.rate = last ?? "";
    spark.append(sparkline(rates));
    row.addEventListener("click", () => openQueue(q.name));
    body.append(row);
  }
  $("incomplete").hidden = snapshot.complete;
  const current = snapshot.queues.find((q) => q.name === view.queue);
  if (current) renderQueueHead(current);
}

function renderQueueHead(q) {
  $("queue-paused").hidden = !q.counts.paused;
  const nav = $("states");
  nav.replaceChildren();
  for (const s of STATES) {
    const b = document.createElement("button");
    b.textContent = `${s} (${q.counts[s]})`;
    b.dataset.state = s;
    if (s === view.state) b.className = "current";
    b.addEventListener("click", () => {
      view.state = s;
      view.offset = 0;
      renderQueueHead(q);
      loadJobs().catch((e) => say(e.message, true));
    });
    nav.append(b);
  }
}

async function openQueue(name) {
  view.queue = name;
  view.state = "pending";
  view.offset = 0;
  $("queue").hidden = false;
  $("queue-name").textContent = name;
  if (view.snapshot) renderQueues(view.snapshot);
  await loadJobs();
}

async function loadJobs() {
  const q = encodeURIComponent(view.queue);
  const page = await api(`/api/queues/${q}/jobs?state=${view.state}&offset=${view.offset}&limit=${PAGE}`);
  const body = $("jobs").querySelector("tbody");
  body.replaceChildren();
  for (const job of page.jobs) {
    const row = document.createElement("tr");
    row.dataset.id = job.id;
    cell(row, job.id);
    cell(row, job.state);
    cell(row, job.maxAttempts ? `${job.attempts}/${job.maxAttempts}` : job.attempts, true);
    cell(row, new Date(job.createdAt).toISOString());
    cell(row, job.error ?? "");
    row.addEventListener("click", () => openJob(job.id).catch((e) => say(e.message, true)));
    body.append(row);
  }
  const end = Math.min(page.total, view.offset + page.jobs.length);
  $("page").textContent = page.total === 0 ? "no jobs" : `${view.offset + 1}–${end} of ${page.total}`;
  $("prev").disabled = view.offset === 0;
  $("next").disabled = end >= page.total;
}

function bytes(v) {
  if (v === undefined || v === null) return "";
  return v.text ?? `(base64, ${v.bytes} bytes) ${v.base64}`;
}

async function openJob(id) {
  const { job } = await api(`/api/queues/${encodeURIComponent(view.queue)}/jobs/${encodeURIComponent(id)}`);
  view.job = job;
  $("job").hidden = false;
  $("job-id").textContent = job.id;
  const dl = $("job-fields");
  dl.replaceChildren();
  const fields = {
    state: job.state,
    attempts: job.maxAttempts ? `${job.attempts} of ${job.maxAttempts}` : job.attempts,
    priority: job.priority,
    lane: job.lane,
    created: new Date(job.createdAt).toISOString(),
    progress: bytes(job.progress),
  };
  for (const [k, v] of Object.entries(fields)) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = String(v);
    dd.dataset.field = k;
    dl.append(dt, dd);
  }
  $("job-payload").textContent = bytes(job.payload);
  $("job-result").textContent = bytes(job.result);
  $("job-error").textContent = job.error ?? "";
  $("job-logs").textContent = job.logs.join("\n");
  const ol = $("job-timeline");
  ol.replaceChildren();
  for (const e of job.timeline) {
    const li = document.createElement("li");
    const extra = [
      e.attempt !== undefined ? `attempt ${e.attempt}` : "",
      e.reason ?? "",
      e.delay ? `in ${e.delay} ms` : "",
    ];
    li.textContent = `${new Date(e.at).toISOString()} ${e.kind} ${extra.filter(Boolean).join(", ")}`;
    ol.append(li);
  }
  $("job-retry").disabled = view.readOnly || job.state !== "dead";
  $("job-promote").disabled = view.readOnly || job.state !== "scheduled";
  $("job-remove").disabled = view.readOnly || job.state === "active";
}

function confirmAction(text) {
  return new Promise((resolve) => {
    const dialog = $("confirm");
    $("confirm-text").textContent = text;
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
  });
}

async function act(text, path, body = {}) {
  if (!(await confirmAction(text))) return;
  try {
    const reply = await api(path, body);
    say(`${text} — done${reply.removed !== undefined ? ` (${reply.removed} removed)` : ""}`);
    if (view.queue) await loadJobs();
    if (view.job && path.includes("/jobs/") && !path.endsWith("/remove")) await openJob(view.job.id);
    if (path.endsWith("/remove")) $("job").hidden = true;
  } catch (e) {
    say(e.message, true);
  }
}

function wire() {
  const q = () => `/api/queues/${encodeURIComponent(view.queue)}`;
  const j = () => `${q()}/jobs/${encodeURIComponent(view.job.id)}`;
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
  $("prev").addEventListener("click", () => {
    view.offset = Math.max(0, view.offset - PAGE);
    loadJobs().catch((e) => say(e.message, true));
  });
  $("next").addEventListener("click", () => {
    view.offset += PAGE;
    loadJobs().catch((e) => say(e.message, true));
  });
  $("search").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const id = $("search-id").value.trim();
    if (view.queue && id) openJob(id).catch((e) => say(e.message, true));
  });
}

function follow() {
  const live = $("live");
  const source = new EventSource("/api/stream"); // the token, if any, rides in the page's cookie
  source.addEventListener("snapshot", (ev) => {
    live.textContent = "live";
    live.className = "badge on";
    renderQueues(JSON.parse(ev.data));
  });
  source.addEventListener("error", () => {
    live.textContent = "reconnecting…";
    live.className = "badge off";
  });
}

async function main() {
  const config = await api("/api/config");
  view.readOnly = config.readOnly;
  $("server").textContent =
    `wire ${config.wire}${config.cluster ? ", cluster" : ""} · echomq ${config.version}`;
  $("mode").hidden = !config.readOnly;
  for (const el of document.querySelectorAll("[data-steer]")) el.hidden = config.readOnly;
  wire();
  renderQueues(await api("/api/queues"));
  follow();
}

main().catch((e) => say(e.message, true));
