// A queue's schedules and its flow control, and a job's flow (its parent, its children).
import { $, api, cell, enc, fields, iso } from "./lib.js";

const jobHash = (queue, id) => `#/q/${enc(queue)}/job/${enc(id)}`;

function link(text, href) {
  const a = document.createElement("a");
  a.textContent = text;
  a.href = href;
  return a;
}

/**
 * The schedules of `queue`; `remove(name)` asks to remove one, `toggle(name, paused)` to pause or
 * resume it (both absent: read-only).
 */
export async function showSchedules(queue, remove, toggle) {
  const { schedules } = await api(`/api/queues/${enc(queue)}/schedules`);
  const body = $("schedules").querySelector("tbody");
  body.replaceChildren();
  for (const s of schedules) {
    const row = document.createElement("tr");
    row.dataset.schedule = s.name;
    cell(row, s.name);
    cell(
      row,
      s.spec.cron !== undefined
        ? `cron ${s.spec.cron}${s.spec.tz ? ` (${s.spec.tz})` : ""}`
        : `every ${s.spec.everyMs} ms`,
    );
    cell(row, s.paused ? "paused" : s.next.map(iso).join("\n")).className = "instants";
    cell(row, s.fired, true).dataset.field = "fired";
    cell(row, s.lastFired === undefined ? "—" : iso(s.lastFired));
    const td = cell(row, "");
    if (toggle) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = s.paused ? "Resume" : "Pause";
      b.setAttribute("aria-label", `${s.paused ? "resume" : "pause"} schedule ${s.name}`);
      b.addEventListener("click", () => toggle(s.name, s.paused));
      td.append(b, " ");
    }
    if (remove) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "danger";
      b.textContent = "Remove";
      b.setAttribute("aria-label", `remove schedule ${s.name}`);
      b.addEventListener("click", () => remove(s.name));
      td.append(b);
    }
    body.append(row);
  }
  $("schedules-none").hidden = schedules.length > 0;
}

/** The flow control of `queue`: limits as stored, groups active or parked, parked jobs. */
export async function showFlowControl(queue) {
  const { limits, groups } = await api(`/api/queues/${enc(queue)}/flow-control`);
  fields($("limits-fields"), [
    ["concurrency", limits.concurrency ?? "none"],
    ["rate", limits.rate ? `${limits.rate.max} per ${limits.rate.durationMs} ms` : "none"],
    ["group defaults", limits.group ? JSON.stringify(limits.group) : "none"],
    ["groups with own limits", Object.keys(limits.groups).length],
  ]);
  const body = $("groups").querySelector("tbody");
  body.replaceChildren();
  for (const g of groups) {
    const row = document.createElement("tr");
    row.dataset.group = g.group;
    cell(row, g.group);
    cell(row, g.active, true).dataset.field = "active";
    cell(row, g.parked, true).dataset.field = "parked";
    cell(row, limits.groups[g.group] ? JSON.stringify(limits.groups[g.group]) : "defaults");
    const td = cell(row, "");
    td.dataset.field = "parked-ids";
    g.parkedIds.forEach((id, i) => {
      if (i) td.append(" ");
      td.append(link(id, jobHash(queue, id)));
    });
    body.append(row);
  }
  $("groups-none").hidden = groups.length > 0;
}

/** A job's flow: its parent, or its children as its row records them. */
export async function showFlow(queue, job) {
  const box = $("job-flow");
  if (!job.parent && job.childrenLeft === undefined) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const parent = $("job-parent");
  parent.replaceChildren();
  if (job.parent)
    parent.append(
      "child of ",
      link(`${job.parent.queue} / ${job.parent.id}`, jobHash(job.parent.queue, job.parent.id)),
    );
  const body = $("job-children").querySelector("tbody");
  body.replaceChildren();
  if (job.childrenLeft === undefined) {
    $("job-children").hidden = true;
    return;
  }
  const flow = await api(`/api/queues/${enc(queue)}/jobs/${enc(job.id)}/flow`);
  $("job-children").hidden = false;
  const u = flow.unsettled;
  const scan =
    flow.childrenLeft === 0
      ? ""
      : ` (${u.children.length} found in ${u.queues} queue${u.queues === 1 ? "" : "s"}, ${u.scanned} jobs read${u.complete ? "" : "; the scan stopped at its bound"})`;
  $("job-children-left").textContent = `${flow.childrenLeft} not settled yet${scan}, ${flow.settled} settled`;
  for (const c of u.children) {
    const row = document.createElement("tr");
    row.dataset.child = c.id;
    row.dataset.settled = "no";
    const td = cell(row, "");
    td.append(link(`${c.queue} / ${c.id}`, jobHash(c.queue, c.id)));
    cell(row, c.state).dataset.field = "state";
    cell(row, "not settled yet").className = "muted";
    body.append(row);
  }
  for (const c of flow.children) {
    const row = document.createElement("tr");
    row.dataset.child = c.id;
    row.dataset.settled = "yes";
    const td = cell(row, "");
    td.append(link(`${c.queue} / ${c.id}`, jobHash(c.queue, c.id)));
    cell(row, c.state).dataset.field = "state";
    cell(row, c.error ?? c.result ?? "");
    body.append(row);
  }
}
