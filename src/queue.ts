/**
 * The producer and operator API of one queue: add jobs, pause and resume, remove, retry dead
 * jobs, read counts and rows. Every transition goes through the host steps in `jobs.ts`.
 */
import type { Connection } from "./connector/connection.js";
import { assertValidBrandedId } from "./branded-id.js";
import {
  type AddOptions,
  checkDurability,
  type Durability,
  type EnqueueResult,
  type Payload,
  add,
  addBulk,
  pause,
  remove,
  resume,
  retry,
} from "./jobs.js";
import { assertValidQueue, jobKey, queueKey } from "./keyspace.js";

export type JobState = "pending" | "scheduled" | "active" | "completed" | "dead";

export interface JobCounts {
  pending: number;
  scheduled: number;
  active: number;
  completed: number;
  dead: number;
  paused: boolean;
}

/** A job row as stored (see docs/protocol.md). */
export interface JobInfo {
  id: string;
  state: JobState;
  attempts: number;
  payload: Buffer;
  priority: number;
  maxAttempts?: number;
  result?: Buffer;
  error?: string;
}

export interface QueueOptions {
  /**
   * The durability every `add` / `addBulk` of this queue waits for before it is acknowledged
   * (an add's own `durability` option wins): `{ replicas: n, timeoutMs }` → `WAIT`,
   * `{ aof: { local, replicas }, timeoutMs }` → `WAITAOF`. See `Durability`.
   */
  durability?: Durability;
}

export class Queue {
  /** The queue's default durability (`QueueOptions.durability`), if any. */
  readonly durability: Durability | undefined;

  constructor(
    readonly name: string,
    readonly connection: Connection,
    options: QueueOptions = {},
  ) {
    assertValidQueue(name);
    checkDurability(options?.durability, "durability");
    this.durability = options?.durability;
  }

  /**
   * Adds one job: `priority` (lower runs first, default 0), `delay` in ms, `maxAttempts`, `id`,
   * `durability` (default: the queue's).
   */
  add(payload: Payload, opts: AddOptions = {}): Promise<EnqueueResult> {
    const own = typeof opts === "object" && opts !== null && "durability" in opts;
    const o = this.durability && !own ? { ...opts, durability: this.durability } : opts;
    return add(this.connection, this.name, payload, o);
  }

  /**
   * Adds many jobs in one pipeline (one write, one round trip). Every job is checked before
   * anything is sent; each is its own transition, so a server refusal of one leaves the others.
   * The queue's durability, if set, is waited for once for the whole batch.
   */
  addBulk(jobs: readonly { payload: Payload; opts?: AddOptions }[]): Promise<EnqueueResult[]> {
    return addBulk(this.connection, this.name, jobs, { durability: this.durability });
  }

  /** Stops claims on this queue (running jobs finish). `true` if it was not paused. */
  pause(): Promise<boolean> {
    return pause(this.connection, this.name);
  }

  resume(): Promise<boolean> {
    return resume(this.connection, this.name);
  }

  /** Deletes a job that is not active. `false` when there is no such job. */
  remove(id: string): Promise<boolean> {
    return remove(this.connection, this.name, id);
  }

  /** Moves a dead job back to pending, granting it `extraAttempts` more attempts (default 1). */
  retry(id: string, extraAttempts = 1): Promise<void> {
    return retry(this.connection, this.name, id, extraAttempts);
  }

  /** How many jobs are in each state (one pipelined round trip). */
  async counts(): Promise<JobCounts> {
    const sets = ["pending", "schedule", "active", "done", "dead"] as const;
    const [pending, scheduled, active, completed, dead, paused] = await Promise.all([
      ...sets.map((s) => this.connection.send("ZCARD", [queueKey(this.name, s)])),
      this.connection.send("HGET", [queueKey(this.name, "meta"), "paused"]),
    ]);
    return {
      pending: Number(pending),
      scheduled: Number(scheduled),
      active: Number(active),
      completed: Number(completed),
      dead: Number(dead),
      paused: paused != null && String(paused) === "1",
    };
  }

  /** The job's row, or `null` when there is no such job (deleted by retention or removed). */
  async getJob(id: string): Promise<JobInfo | null> {
    assertValidBrandedId(id);
    // The client turns an HGETALL reply into an object of field → value.
    const reply = (await this.connection.send("HGETALL", [jobKey(this.name, id)])) as Record<string, Buffer>;
    const row = new Map<string, Buffer>(Object.entries(reply));
    if (row.size === 0) return null;
    const text = (field: string) => row.get(field)?.toString();
    const info: JobInfo = {
      id,
      state: text("state") as JobState,
      attempts: Number(text("attempts") ?? 0),
      payload: row.get("payload") ?? Buffer.alloc(0),
      priority: Number(text("priority") ?? 0),
    };
    if (row.has("max_attempts")) info.maxAttempts = Number(text("max_attempts"));
    if (row.has("result")) info.result = row.get("result")!;
    if (row.has("error")) info.error = text("error")!;
    return info;
  }
}
