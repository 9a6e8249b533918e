// Bulk actions: retry, promote or remove the jobs selected on the page, or every job of the
// state shown — one confirmation that states the count, then requests of at most a page each
// until that count is reached (the server bounds each request).
import { $, api, confirmAction, enc, fail, say } from "./lib.js";

const ALL = {
  retry: ["dead"],
  promote: ["scheduled"],
  remove: ["pending", "scheduled", "completed", "dead"],
};
const VERB = { retry: "Retry", promote: "Promote", remove: "Remove" };
const selected = new Set();

/** The selection checkbox of a job's row. */
export function selectCell(row, id, readOnly) {
  const td = document.createElement("td");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.checked = selected.has(id);
  box.disabled = readOnly;
  box.setAttribute("aria-label", `select job ${id}`);
  box.addEventListener("click", (ev) => ev.stopPropagation());
  box.addEventListener("keydown", (ev) => ev.stopPropagation());
  box.addEventListener("change", () => {
    if (box.checked) selected.add(id);
    else selected.delete(id);
    update();
  });
  td.append(box);
  row.prepend(td);
}

let current = { queue: null, state: null, total: 0 };

/** The list shown changed: a new queue or state clears the selection. */
export function listed(queue, state, total) {
  if (queue !== current.queue || state !== current.state) selected.clear();
  current = { queue, state, total };
  update();
}

function update() {
  $("selected-count").textContent = selected.size ? `${selected.size} selected` : "";
  for (const action of Object.keys(ALL)) {
    $(`bulk-${action}`).disabled = selected.size === 0;
    $(`all-${action}`).disabled = !ALL[action].includes(current.state) || current.total === 0;
  }
}

async function run(action, body, count, reload) {
  const path = `/api/queues/${enc(current.queue)}/bulk`;
  let done = 0;
  const refused = [];
  if (body.ids) {
    for (let i = 0; i < body.ids.length; i += 100) {
      const r = await api(path, { action, ids: body.ids.slice(i, i + 100) });
      done += r.done;
      refused.push(...r.refused);
    }
  } else {
    while (done < count) {
      const r = await api(path, { action, state: body.state, max: count - done });
      done += r.done;
      refused.push(...r.refused);
      if (r.done === 0 || r.left === 0) break;
    }
  }
  selected.clear();
  say(
    `${VERB[action]}: ${done} of ${count} done${refused.length ? `, ${refused.length} refused (${refused[0].error})` : ""}`,
  );
  await reload();
}

/** Wires the bulk buttons; `reload` shows the list again after an action. */
export function wireBulk(reload) {
  for (const action of Object.keys(ALL)) {
    $(`bulk-${action}`).addEventListener("click", async () => {
      const ids = [...selected];
      const text = `${VERB[action]} ${ids.length} selected job${ids.length === 1 ? "" : "s"} of ${current.queue}?`;
      if (await confirmAction(text)) await run(action, { ids }, ids.length, reload).catch(fail);
    });
    $(`all-${action}`).addEventListener("click", async () => {
      const { queue, state, total } = current;
      const text = `${VERB[action]} all ${total} ${state} job${total === 1 ? "" : "s"} of ${queue}?`;
      if (await confirmAction(text)) await run(action, { state }, total, reload).catch(fail);
    });
  }
  update();
}
