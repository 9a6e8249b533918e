// Adding a job to the queue shown, and replacing a waiting job's data — each behind one
// confirmation, through the API's own calls (`Queue.add`, `Queue.updateData`).
import { $, api, confirmAction, enc, fail, say } from "./lib.js";

const EDITABLE = ["pending", "scheduled"];

/** The add form's options: only those filled in, numbers as numbers. */
function addOptions() {
  const opts = {};
  const name = $("add-name").value.trim();
  if (name) opts.name = name;
  for (const k of ["priority", "delay", "maxAttempts"]) {
    const raw = $(`add-${k}`).value.trim();
    if (raw !== "") opts[k] = Number(raw);
  }
  return opts;
}

/**
 * Wires the add form (on the queue `queue()` names) and the job's data editor (on the job
 * `job()` is); `opened(queue, id)` opens a job, `shown()` renders the place again.
 */
export function wireSteer({ queue, job, opened, shown }) {
  $("add-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const q = queue();
    const data = $("add-data").value;
    if (!(await confirmAction(`Add a job to ${q} (${new Blob([data]).size} bytes of data)?`))) return;
    try {
      const added = await api(`/api/queues/${enc(q)}/add`, { data, opts: addOptions() });
      say(`Added job ${added.id} to ${q}${added.duplicate ? " (a duplicate: the job already held)" : ""}`);
      $("add-data").value = "";
      opened(q, added.id);
    } catch (e) {
      fail(e);
    }
  });
  $("edit-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const j = job();
    if (!(await confirmAction(`Replace the data of job ${j.id} (${j.state})?`))) return;
    try {
      await api(`/api/queues/${enc(queue())}/jobs/${enc(j.id)}/data`, { data: $("edit-data").value });
      say(`Replaced the data of job ${j.id}`);
      await shown();
    } catch (e) {
      fail(e);
    }
  });
}

/** The data editor of an opened job: shown for a waiting job whose data is text, and not read-only. */
export function showEditor(job, readOnly) {
  const editable = !readOnly && EDITABLE.includes(job.state) && job.payload.text !== undefined;
  $("edit-form").hidden = !editable;
  if (editable) $("edit-data").value = job.payload.text;
}
