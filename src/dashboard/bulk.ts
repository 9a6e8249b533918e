/**
 * The dashboard's bulk actions: retry, promote or remove many jobs — the ids selected on the
 * page, or every job of a state — through the same `Queue` calls the CLI's `retry`, `promote`
 * and `remove` make, one job at a time. Each request acts on `BULK_PAGE` jobs at most; the page
 * calls again until the count it confirmed is reached or the state is empty (the host loops in
 * pages), so one request never holds the server or the dashboard long.
 */
import { isValidBrandedId } from "../branded-id.js";
import type { JobState, Queue } from "../queue.js";
import { HttpError } from "./http.js";

/** Jobs one bulk request acts on, at most. */
const BULK_PAGE = 100;

/** Each action, and the states it takes jobs from. */
const BULK: Record<string, readonly JobState[]> = {
  retry: ["dead"],
  promote: ["scheduled"],
  remove: ["pending", "scheduled", "completed", "dead"],
};

interface BulkReply {
  /** Jobs the action was applied to. */
  done: number;
  /** Jobs it was refused for (moved on meanwhile, removed), each with the refusal. */
  refused: { id: string; error: string }[];
  /** The state's jobs left after this request (`state` requests only). */
  left?: number;
}

async function apply(queue: Queue, action: string, id: string): Promise<boolean> {
  if (action === "retry") await queue.retry(id);
  else if (action === "promote") await queue.promote(id);
  else return queue.remove(id);
  return true;
}

/**
 * One bulk request: `{ action, ids }` (at most `BULK_PAGE` ids) or `{ action, state, max }` (the
 * first `min(max, BULK_PAGE)` jobs of the state, in its listing order).
 */
export async function bulk(queue: Queue, body: Record<string, unknown>): Promise<BulkReply> {
  const action = body.action;
  if (typeof action !== "string" || !Object.hasOwn(BULK, action)) {
    throw new HttpError(
      400,
      `action must be one of ${Object.keys(BULK).join(", ")}, got ${JSON.stringify(action)}`,
    );
  }
  let ids: string[];
  let state: JobState | undefined;
  if (body.ids !== undefined) {
    if (!Array.isArray(body.ids) || body.ids.length === 0 || body.ids.length > BULK_PAGE) {
      throw new HttpError(
        400,
        `ids must be an array of 1 to ${BULK_PAGE} job ids; send more in further requests`,
      );
    }
    const bad = body.ids.find((id) => typeof id !== "string" || !isValidBrandedId(id));
    if (bad !== undefined) throw new HttpError(400, `not a job id: ${JSON.stringify(bad)}; nothing was done`);
    ids = body.ids as string[];
  } else {
    const allowed = BULK[action]!;
    if (typeof body.state !== "string" || !allowed.includes(body.state as JobState)) {
      throw new HttpError(
        400,
        `${action} takes the jobs of ${allowed.join(", ")}, got ${JSON.stringify(body.state)}`,
      );
    }
    state = body.state as JobState;
    const max = body.max;
    if (typeof max !== "number" || !Number.isInteger(max) || max < 1) {
      throw new HttpError(
        400,
        `max must be the count confirmed, an integer of at least 1, got ${JSON.stringify(max)}`,
      );
    }
    ids = (await queue.getJobs(state, { offset: 0, limit: Math.min(max, BULK_PAGE) })).map((j) => j.id);
  }
  const reply: BulkReply = { done: 0, refused: [] };
  for (const id of ids) {
    try {
      if (await apply(queue, action, id)) reply.done++;
      else reply.refused.push({ id, error: `no job ${id} in queue ${queue.name}` });
    } catch (err) {
      reply.refused.push({ id, error: err instanceof Error ? err.message : String(err) });
    }
  }
  if (state !== undefined) reply.left = (await queue.counts())[state];
  return reply;
}
