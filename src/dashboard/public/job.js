// A job's view: its row, when it started and finished, who holds it while active, its timeline.
import { $, age, api, enc, fields, iso } from "./lib.js";

function bytes(v) {
  if (v === undefined || v === null) return "";
  return v.text ?? `(base64, ${v.bytes} bytes) ${v.base64}`;
}

const span = (ms) => (ms === undefined ? undefined : age(ms));

/** Opens job `id` of `queue`; returns the job as the API sent it. */
export async function openJob(queue, id, readOnly) {
  const { job } = await api(`/api/queues/${enc(queue)}/jobs/${enc(id)}`);
  $("job").hidden = false;
  $("job-id").textContent = job.id;
  const t = job.times;
  fields($("job-fields"), [
    ["state", job.state],
    ["name", job.name],
    ["attempts", job.maxAttempts ? `${job.attempts} of ${job.maxAttempts}` : job.attempts],
    ["priority", job.priority],
    ["lane", job.lane],
    ["group", job.group],
    ["timeout", job.timeoutMs === undefined ? undefined : `${job.timeoutMs} ms`],
    ["parent", job.parent ? `${job.parent.queue} / ${job.parent.id}` : undefined],
    ["children left", job.childrenLeft],
    ["created", iso(t.createdAt)],
    ["started", t.startedAt === undefined ? undefined : iso(t.startedAt)],
    ["finished", t.finishedAt === undefined ? undefined : iso(t.finishedAt)],
    ["waited", span(t.waitMs)],
    ["ran", span(t.runMs)],
    ["held by", t.lease ? `the worker holding lease token ${t.lease.token}` : undefined],
    ["held since", t.lease?.since === undefined ? undefined : iso(t.lease.since)],
    ["lease until", t.lease ? iso(t.lease.deadline) : undefined],
    ["progress", bytes(job.progress)],
  ]);
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
    li.textContent = `${iso(e.at)} ${e.kind} ${extra.filter(Boolean).join(", ")}`;
    ol.append(li);
  }
  $("job-retry").disabled = readOnly || job.state !== "dead";
  $("job-promote").disabled = readOnly || job.state !== "scheduled";
  $("job-remove").disabled = readOnly || job.state === "active";
  return job;
}
