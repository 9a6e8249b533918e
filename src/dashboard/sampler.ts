/**
 * The dashboard's sampler: every `sampleMs` it reads each queue's counts and how many jobs
 * completed and failed since the previous sample, and keeps the last `keep` samples per queue
 * (the sparklines). Throughput comes from the queue's event bus (`emq:{q}:events`): the entries
 * after the last one counted, read with `XRANGE … COUNT`, bounded per sample; a queue whose bus
 * is off shows no throughput (`null`), never a guess. The queues are found with `listQueues`
 * (a bounded `SCAN`) every `discoverMs`, or fixed by the caller.
 */
import { EventEmitter } from "node:events";
import type { Connection } from "../connector/connection.js";
import { queueKey } from "../keyspace.js";
import { text } from "../jobs/common.js";
import { HeadReadiness } from "../observe/ready.js";
import { listQueues, type QueueListing } from "../operate/discover.js";
import { type JobCounts, Queue } from "../queue.js";

export interface QueueSample {
  name: string;
  /** The physical queues (the queue itself, or its lanes). */
  physical: string[];
  counts: JobCounts;
  /** Completions per second over each of the last samples, oldest first; `null` entries: no bus. */
  completedPerSec: (number | null)[];
  /** Failed attempts per second, the same way. */
  failedPerSec: (number | null)[];
  /** Completed and failed entries counted on the bus since the sampler's first sample. */
  counted: { completed: number; failed: number };
  /** How long the next job to run has been ready, ms (0 when none is pending; src/observe/ready.ts). */
  oldestPendingMs: number;
}

export interface Snapshot {
  at: number;
  queues: QueueSample[];
  /** False when discovery stopped at its key bound (some queues may be missing). */
  complete: boolean;
}

export interface SamplerOptions {
  sampleMs: number;
  discoverMs: number;
  keep: number;
  /** Fixed queue names; undefined: discover them. */
  queues?: readonly string[];
}

/** Entries counted per physical queue per sample, at most. */
const MAX_ENTRIES = 10_000;

interface Track {
  lastId: string | null;
  counted: { completed: number; failed: number };
  completed: (number | null)[];
  failed: (number | null)[];
}

/** Counts the kinds of an `XRANGE` reply's entries; returns the last id read. */
export function tally(entries: readonly [Buffer | string, readonly (Buffer | string)[]][]): {
  completed: number;
  failed: number;
  lastId: string | null;
} {
  let completed = 0;
  let failed = 0;
  for (const [, fields] of entries) {
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (text(fields[i]!) !== "event") continue;
      const kind = text(fields[i + 1]!);
      if (kind === "completed") completed++;
      else if (kind === "failed") failed++;
      break;
    }
  }
  const last = entries.at(-1);
  return { completed, failed, lastId: last ? text(last[0]) : null };
}

/** Appends `value` keeping at most `keep` values. */
export function pushBounded<T>(list: T[], value: T, keep: number): void {
  list.push(value);
  if (list.length > keep) list.splice(0, list.length - keep);
}

export class Sampler extends EventEmitter<{ snapshot: [Snapshot]; error: [unknown] }> {
  private timer: NodeJS.Timeout | undefined;
  private listing: QueueListing[] = [];
  private complete = true;
  private discoveredAt = 0;
  private lastAt = 0;
  private readonly tracks = new Map<string, Track>();
  private readonly readiness = new HeadReadiness();
  private latest: Snapshot | undefined;
  private running: Promise<void> | undefined;
  private inflight: Promise<void> | undefined;

  constructor(
    private readonly conn: Connection,
    private readonly opts: SamplerOptions,
  ) {
    super();
  }

  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.running = this.sample()
        .catch((err: unknown) => {
          this.emit("error", err);
        })
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, this.opts.sampleMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** The latest snapshot, or a fresh one when none was taken yet. */
  async snapshot(): Promise<Snapshot> {
    if (this.latest) return this.latest;
    await this.sample();
    return this.latest!;
  }

  /** Forgets the discovery, so the next sample lists the queues again (after an operator action). */
  rediscover(): void {
    this.discoveredAt = 0;
  }

  /** Takes one sample; a call while one runs shares it (two at once would count entries twice). */
  sample(): Promise<void> {
    this.inflight ??= this.take().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async take(): Promise<void> {
    const now = Date.now();
    if (this.opts.queues) {
      this.listing = await Promise.all(
        this.opts.queues.map(async (name) => ({
          name,
          physical: await new Queue(name, this.conn).lanesInUse(),
        })),
      );
    } else if (now - this.discoveredAt >= this.opts.discoverMs) {
      const found = await listQueues(this.conn);
      this.listing = found.queues;
      this.complete = found.complete;
      this.discoveredAt = now;
    }
    const elapsed = this.lastAt === 0 ? 0 : (now - this.lastAt) / 1000;
    this.lastAt = now;
    const queues = await Promise.all(this.listing.map((q) => this.sampleQueue(q, elapsed)));
    const live = new Set(this.listing.flatMap((q) => [q.name, ...q.physical.map((p) => `bus:${p}`)]));
    for (const name of this.tracks.keys()) if (!live.has(name)) this.tracks.delete(name);
    this.readiness.keep(new Set(this.listing.flatMap((q) => q.physical)));
    this.latest = { at: now, queues, complete: this.complete };
    this.emit("snapshot", this.latest);
  }

  private async sampleQueue(q: QueueListing, elapsed: number): Promise<QueueSample> {
    const counts = (await new Queue(q.name, this.conn).counts()) as JobCounts;
    const rates = await Promise.all(q.physical.map((p) => this.rate(p, elapsed)));
    const ages = await Promise.all(q.physical.map((p) => this.oldestPending(p)));
    const track = this.trackOf(q.name);
    const known = rates.filter((r) => r !== null);
    const sum = (pick: (r: { completed: number; failed: number }) => number) =>
      elapsed === 0 || known.length === 0 ? null : known.reduce((s, r) => s + pick(r), 0) / elapsed;
    for (const r of known) {
      track.counted.completed += r.completed;
      track.counted.failed += r.failed;
    }
    pushBounded(
      track.completed,
      sum((r) => r.completed),
      this.opts.keep,
    );
    pushBounded(
      track.failed,
      sum((r) => r.failed),
      this.opts.keep,
    );
    const { name, physical } = q;
    return {
      name,
      physical,
      counts: {
        pending: counts.pending,
        scheduled: counts.scheduled,
        active: counts.active,
        completed: counts.completed,
        dead: counts.dead,
        waiting: counts.waiting,
        paused: counts.paused,
      },
      completedPerSec: [...track.completed],
      failedPerSec: [...track.failed],
      counted: { ...track.counted },
      oldestPendingMs: Math.max(0, ...ages),
    };
  }

  private trackOf(name: string): Track {
    let track = this.tracks.get(name);
    if (!track) {
      track = { lastId: null, counted: { completed: 0, failed: 0 }, completed: [], failed: [] };
      this.tracks.set(name, track);
    }
    return track;
  }

  /** Completed and failed entries since the last sample on one physical queue's bus; null: no bus. */
  private async rate(
    physical: string,
    elapsed: number,
  ): Promise<{ completed: number; failed: number } | null> {
    const key = queueKey(physical, "events");
    const track = this.trackOf(`bus:${physical}`);
    if (track.lastId === null || elapsed === 0) {
      const last = (await this.conn.send("XREVRANGE", [key, "+", "-", "COUNT", 1], key)) as [
        Buffer,
        Buffer[],
      ][];
      track.lastId = last[0] ? text(last[0][0]) : "0-0";
      return last.length === 0 ? null : { completed: 0, failed: 0 };
    }
    const entries = (await this.conn.send(
      "XRANGE",
      [key, `(${track.lastId}`, "+", "COUNT", MAX_ENTRIES],
      key,
    )) as [string, string[]][];
    const t = tally(entries);
    if (t.lastId !== null) track.lastId = t.lastId;
    return { completed: t.completed, failed: t.failed };
  }

  /** How long the job at the head of one physical queue's `pending` has been ready (src/observe/ready.ts). */
  private oldestPending(physical: string): Promise<number> {
    return this.readiness.ageMs(this.conn, physical);
  }
}
