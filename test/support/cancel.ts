/**
 * What the cancel tests (`test/cancel*.test.ts`) watch: a handler that waits for its job's
 * signal, and a worker's outcome events by kind.
 */
import type { Job, Worker } from "../../src/index.js";

/** A handler that waits for its signal, and what it saw. */
export function awaitsSignal() {
  const seen: { started: Job[]; reasons: unknown[] } = { started: [], reasons: [] };
  const handler = (job: Job) =>
    new Promise<never>((_, reject) => {
      seen.started.push(job);
      job.signal.addEventListener("abort", () => {
        seen.reasons.push(job.signal.reason);
        reject(job.signal.reason);
      });
    });
  return { seen, handler };
}

/** A worker's outcome events, by kind. */
export function outcomes(worker: Worker) {
  const got: Record<string, unknown[]> = {};
  for (const kind of ["completed", "failed", "retrying", "dead", "leaseLost", "cancelled"] as const) {
    worker.on(kind as "completed", (...args: unknown[]) => {
      got[kind] = [...(got[kind] ?? []), args[1]];
    });
  }
  return got;
}
