/**
 * Completions that are ready together go out together: a plain completion (no next job leased
 * with it) waits only for the current synchronous run to end (one microtask, never a timer); the
 * completions of one lane gathered by then are sent as one `COMPLETEN` when the engine runs it,
 * and a lone one as the `COMPLETE` it always was. A batch handler's results settle in one call.
 * Each completion still answers on its own: its refusal (a stale lease token) is its own error.
 */
import type { Connection } from "../connector/connection.js";
import { complete, completeMany, MAX_COMPLETIONS, type Payload } from "../jobs.js";

interface Waiting {
  id: string;
  token: number;
  result: Payload;
  done: (err: unknown) => void;
}

/** The completions gathered per connection, by lane and keep, until the microtask sends them. */
const gathered = new WeakMap<Connection, Map<string, { lane: string; keep: number; jobs: Waiting[] }>>();

/** Completes a job like `complete`, in one call with the others of its lane ready in the same run. */
export function completeTogether(
  conn: Connection,
  lane: string,
  id: string,
  token: number,
  result: Payload,
  keep: number,
): Promise<void> {
  if (!conn.engine.runs("COMPLETEN")) return complete(conn, lane, id, token, result, keep);
  let byLane = gathered.get(conn);
  if (!byLane) {
    byLane = new Map();
    gathered.set(conn, byLane);
    queueMicrotask(() => flush(conn));
  }
  const key = `${keep}\0${lane}`;
  let group = byLane.get(key);
  if (!group) {
    group = { lane, keep, jobs: [] };
    byLane.set(key, group);
  }
  const jobs = group.jobs;
  return new Promise((resolve, reject) => {
    jobs.push({ id, token, result, done: (err) => (err ? reject(err) : resolve()) });
  });
}

function flush(conn: Connection): void {
  const byLane = gathered.get(conn);
  gathered.delete(conn);
  for (const { lane, keep, jobs } of byLane?.values() ?? []) {
    for (let at = 0; at < jobs.length; at += MAX_COMPLETIONS)
      send(conn, lane, keep, jobs.slice(at, at + MAX_COMPLETIONS));
  }
}

function send(conn: Connection, lane: string, keep: number, jobs: Waiting[]): void {
  const [only] = jobs;
  if (jobs.length === 1 && only) {
    complete(conn, lane, only.id, only.token, only.result, keep).then(() => only.done(null), only.done);
    return;
  }
  // `next` 0: nothing leased, so the lease is not used; any valid one.
  completeMany(conn, lane, jobs, keep, 0, 1).then(
    (got) => {
      for (const [i, job] of jobs.entries()) job.done(got.refused[i] ?? null);
    },
    (err) => {
      for (const job of jobs) job.done(err);
    },
  );
}
