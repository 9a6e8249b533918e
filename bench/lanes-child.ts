/**
 * One worker process of the lanes measure (bench/lanes.ts): a `Worker` on the laned queue of a
 * local cluster (`connect({ nodes, wire })`, no-op handler, completed jobs deleted), running until
 * the queue is empty on every lane. Reports what it processed, when it finished and its CPU.
 */
import { connect, type LanedCounts, Queue, Worker } from "echomq";
import type { Endpoint } from "./systems/types.js";

export interface LanesChildPlan {
  kind: "lanes";
  system: string;
  wire: 4 | 6;
  nodes: Endpoint[];
  queue: string;
  lanes: number;
  concurrency: number;
  /** Bound of the whole run (ms). */
  timeoutMs: number;
}

export interface LanesChildResult {
  processed: number;
  /** Date.now() when this worker saw the queue empty. */
  finishedAt: number;
  cpuUs: number;
}

export async function runLanesChild(plan: LanesChildPlan): Promise<LanesChildResult> {
  const conn = await connect({ nodes: plan.nodes, wire: plan.wire, name: `emq-bench-lanes-${process.pid}` });
  const queue = new Queue(plan.queue, conn, { lanes: plan.lanes });
  let processed = 0;
  const worker = new Worker(queue, () => {}, { concurrency: plan.concurrency, keepCompleted: 0 });
  worker.on("completed", () => {
    processed += 1;
  });
  await worker.ready;
  const cpu0 = process.cpuUsage();
  const deadline = Date.now() + plan.timeoutMs;
  let started = false;
  for (;;) {
    const counts = (await queue.counts()) as LanedCounts;
    const left = counts.pending + counts.scheduled + counts.active;
    // The queue is filled (and paused) before the workers start: empty only once it ran.
    if (!counts.paused && left === 0 && (started || processed > 0)) break;
    if (!counts.paused) started = true;
    if (Date.now() > deadline) throw new Error(`lanes child: ${left} jobs left after ${plan.timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const finishedAt = Date.now();
  const cpu = process.cpuUsage(cpu0);
  await worker.close();
  await conn.close();
  return { processed, finishedAt, cpuUs: cpu.user + cpu.system };
}
