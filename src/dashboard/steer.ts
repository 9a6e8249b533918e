/**
 * The dashboard's writes beyond the queue's and a job's actions: add a job (`Queue.add`, the
 * call the API makes) and replace a waiting job's data (`Queue.updateData`, the `UPDATE` verb).
 * The data is the text the operator typed, stored as it is (the queue's `json` serializer keeps
 * a string as its bytes). Bad input is refused with a 400 naming what was wrong, nothing written.
 */
import type { Connection } from "../connector/connection.js";
import type { EnqueueResult } from "../jobs/jobs.js";
import { recordedLanes } from "../lanes/registry.js";
import { Queue } from "../queue.js";
import { HttpError } from "./http.js";

/** The options the page's form offers, all optional; `Queue.add` checks their values. */
const ADD_KEYS = ["name", "priority", "delay", "maxAttempts", "key"] as const;
/** The states whose jobs are waiting to run: their data may be replaced from the page. */
const EDITABLE = ["pending", "scheduled"] as const;

function dataOf(body: Record<string, unknown>): string {
  if (typeof body.data !== "string") {
    throw new HttpError(400, `data must be a string (the job's data as text), got ${typeof body.data}`);
  }
  return body.data;
}

/** `Queue.add` of the data and options the page sent, on every lane the queue has recorded. */
export async function addJob(
  conn: Connection,
  name: string,
  body: Record<string, unknown>,
): Promise<EnqueueResult> {
  const data = dataOf(body);
  const given = body.opts ?? {};
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw new HttpError(400, "opts must be an object");
  }
  const opts: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(given)) {
    if (!(ADD_KEYS as readonly string[]).includes(k)) {
      throw new HttpError(400, `opts.${k} is not taken here (only ${ADD_KEYS.join(", ")})`);
    }
    if (v !== undefined && v !== null && v !== "") opts[k] = v;
  }
  const lanes = Math.max(1, ...(await recordedLanes(conn, name)));
  return new Queue(name, conn, { lanes }).add(data, opts);
}

/** `Queue.updateData` of a job that is pending or scheduled; another state is refused (409). */
export async function editData(queue: Queue, id: string, body: Record<string, unknown>): Promise<void> {
  const data = dataOf(body);
  const job = await queue.getJob(id);
  if (job === null) throw new HttpError(404, `no job ${id} in queue ${queue.name}`);
  if (!(EDITABLE as readonly string[]).includes(job.state)) {
    throw new HttpError(
      409,
      `job ${id} is ${job.state}: only a waiting job (${EDITABLE.join(" or ")}) has its data edited here`,
    );
  }
  await queue.updateData(id, data);
}
