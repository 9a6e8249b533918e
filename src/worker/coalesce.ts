/**
 * Completions that are ready together go out together: a plain completion (no next job leased
 * with it) waits only for the current synchronous run to end (one microtask, never a timer); the
 * completions of one lane gathered by then are sent as one `COMPLETEN` when the engine runs it,
 * and a lone one as the `COMPLETE` it always was. A batch handler's results settle in one call.
 * Each completion still answers on its own: its refusal (a stale lease token) is its own error.
 *
 * Completions that lease their slot's next job (`completeLeasingTogether`) gather the same way:
 * the ones of a lane ready in the same run go as `COMPLETEN` calls whose `next` is their count
 * (one script call settles and leases for all of its completions), cut so that several calls stay
 * in the pipeline (`leasingCallSize`), and a call of one as the `COMPLETENEXT` it was.
 */
import type { Connection } from "../connector/connection.js";
import {
  type ClaimedJob,
  type ClaimOutcome,
  complete,
  completeMany,
  completeNext,
  MAX_COMPLETIONS,
  type Payload,
} from "../jobs.js";

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

interface Leasing {
  id: string;
  token: number;
  result: Payload;
  done: (err: unknown, next?: ClaimOutcome) => void;
  /** A job leased for this completion's slot that it will not take (its completion was refused). */
  spare: (job: ClaimedJob) => void;
}

/** The leasing completions gathered per connection, by lane, keep and lease, until the microtask sends them. */
const leasing = new WeakMap<
  Connection,
  Map<string, { lane: string; keep: number; leaseMs: number; jobs: Leasing[] }>
>();

/**
 * Completes a job and leases the lane's next job for its slot, like `completeNext`, in one call
 * with the others of its lane ready in the same run: `COMPLETEN` with `next` their count. The
 * jobs leased go to the completions that landed, in order; one a refused completion's place
 * brought goes to `spare` (the worker hands it back). After the jobs, a limited claim's wait
 * goes to each completion left, else nothing (the lane had no job to lease, or is paused).
 */
export function completeLeasingTogether(
  conn: Connection,
  lane: string,
  id: string,
  token: number,
  result: Payload,
  keep: number,
  leaseMs: number,
  spare: (job: ClaimedJob) => void,
): Promise<ClaimOutcome> {
  if (!conn.engine.runs("COMPLETEN")) return completeNext(conn, lane, id, token, result, keep, leaseMs);
  let byLane = leasing.get(conn);
  if (!byLane) {
    byLane = new Map();
    leasing.set(conn, byLane);
    queueMicrotask(() => flushLeasing(conn));
  }
  const key = `${keep}\0${leaseMs}\0${lane}`;
  let group = byLane.get(key);
  if (!group) {
    group = { lane, keep, leaseMs, jobs: [] };
    byLane.set(key, group);
  }
  const jobs = group.jobs;
  return new Promise((resolve, reject) => {
    jobs.push({ id, token, result, spare, done: (err, next) => (err ? reject(err) : resolve(next ?? null)) });
  });
}

/**
 * How many calls a group of leasing completions is cut into, at most: the server runs one while
 * the worker runs the jobs the last one brought. One call for a whole group makes both sides take
 * turns (on 2 cores it lowered every rate); calls of 4 or 8 in a group of 10 cost 20-25% there.
 */
const LEASING_PIPELINE_DEPTH = 8;

/** The completions per call for a group of `ready` leasing completions: ready / depth, at least 1. */
export function leasingCallSize(ready: number): number {
  return Math.min(MAX_COMPLETIONS, Math.max(1, Math.floor(ready / LEASING_PIPELINE_DEPTH)));
}

function flushLeasing(conn: Connection): void {
  const byLane = leasing.get(conn);
  leasing.delete(conn);
  for (const { lane, keep, leaseMs, jobs } of byLane?.values() ?? []) {
    const chunk = leasingCallSize(jobs.length);
    for (let at = 0; at < jobs.length; at += chunk)
      sendLeasing(conn, lane, keep, leaseMs, jobs.slice(at, at + chunk));
  }
}

function sendLeasing(conn: Connection, lane: string, keep: number, leaseMs: number, jobs: Leasing[]): void {
  const [only] = jobs;
  if (jobs.length === 1 && only) {
    completeNext(conn, lane, only.id, only.token, only.result, keep, leaseMs).then(
      (next) => only.done(null, next),
      only.done,
    );
    return;
  }
  completeMany(conn, lane, jobs, keep, jobs.length, leaseMs).then(
    (got) => {
      const leased = got.jobs.values();
      for (const [i, job] of jobs.entries()) {
        const refused = got.refused[i];
        if (refused) continue;
        job.done(null, leased.next().value ?? got.limited);
      }
      // A refused completion's place leased a job too: no slot of this call takes it.
      for (const left of leased) only?.spare(left);
      for (const [i, job] of jobs.entries()) if (got.refused[i]) job.done(got.refused[i]);
    },
    (err) => {
      for (const job of jobs) job.done(err);
    },
  );
}
