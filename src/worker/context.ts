/**
 * What a worker's parts share: its connection, options, wake gate and lanes, the jobs it runs and
 * the replies still on their way, and its hooks (events, faults, reports). The worker builds it
 * once; its slot loop, the blocking claim, the settlement and the hand-backs read it.
 */
import type { Connection } from "../connector/connection.js";
import type { Settled } from "../observe/consumer-spans.js";
import type { WakeGate } from "../wake.js";
import type { Job, Running } from "./job.js";
import type { WorkerLanes } from "./lanes.js";
import type { ResolvedOptions } from "./options.js";

export interface WorkerEvents {
  /** A claimed job's handler starts. */
  active: [job: Job];
  completed: [job: Job, result: unknown];
  failed: [job: Job, error: unknown];
  retrying: [job: Job, error: unknown, state: "pending" | "scheduled"];
  dead: [job: Job, error: unknown];
  /** Expired leases the timers took back: to pending, or dead when out of attempts. */
  stalled: [requeued: string[], dead: string[]];
  /**
   * This worker lost a job's lease (reaped, maybe claimed elsewhere): its result is dropped
   * (`LeaseLostError`), or its handler never started — the claim reached it after the lease had
   * ended (`LeaseExpiredError`) or its renewal before the start was refused.
   */
  leaseLost: [job: Job, error: unknown];
  /**
   * The job was cancelled while this worker ran it (`queue.cancel(id)`): it is dead with the error
   * `cancelled`, its signal aborted with the `JobCancelledError`; what the handler returns or
   * throws is not recorded. Reported once per job, instead of `leaseLost`.
   */
  cancelled: [job: Job, error: unknown];
  error: [error: unknown];
}

export interface WorkerContext {
  readonly conn: Connection;
  readonly name: string;
  readonly opts: ResolvedOptions;
  readonly gate: WakeGate;
  readonly lanes: WorkerLanes;
  /** Jobs whose handlers run (or are about to). */
  readonly running: Set<Running>;
  /** Claims sent and not yet answered: close() lets them land before it hands jobs back. */
  readonly claims: Set<Promise<unknown>>;
  /** Completions and failures sent and not yet answered. */
  readonly settling: Set<Promise<Settled>>;
  /** True once close() has begun. */
  closing(): boolean;
  /** The fatal error that stopped the worker, if one did. */
  fatalError(): unknown;
  emit<K extends keyof WorkerEvents>(event: K, ...args: WorkerEvents[K]): void;
  /** A fatal error stops the worker (returns true); any other is counted and reported. */
  fault(err: unknown): boolean;
  report(err: unknown): void;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Flow control held a claim back: wait until the rate window opens (`waitMs`), or for a wake
 * (a job left active: the queue's concurrency has room again) with the safety tick's bound.
 */
export function heldBack(ctx: WorkerContext, waitMs: number): Promise<void> {
  return ctx.gate.wait(waitMs > 0 ? waitMs : ctx.opts.idleCheckMs);
}
