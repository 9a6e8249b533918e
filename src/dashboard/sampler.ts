/**
 * The dashboard's sampler: every `sampleMs` it reads queues' counts and how many jobs completed
 * and failed since the previous sample, and keeps the last `keep` samples per queue (the
 * sparklines). Throughput comes from the queue's event bus (`emq:{q}:events`): the entries after
 * the last one counted, read with `XRANGE … COUNT`, bounded per sample; a queue whose bus is off
 * shows no throughput (`null`), never a guess.
 *
 * The queues are found with `listQueues` (a bounded `SCAN`) every `discoverMs`, or fixed by the
 * caller, in the background: a sample never waits for a discovery but the very first, and the
 * listing is swapped when one ends. Each sample is bounded whatever the queue count: beyond
 * `sampleAll` queues only those a page shows (`watch`, at most `MAX_WATCH`) are sampled, plus
 * the counts of the next `RECOUNT` physical queues round-robin (the others keep their last
 * counts and when they were read). A sample sends every read in one tick (one pipelined round
 * per shard).
 */
import { EventEmitter } from "node:events";
import type { Connection } from "../connector/connection.js";
import { queueKey } from "../keyspace.js";
import { text } from "../jobs/common.js";
import { HeadReadiness } from "../observe/ready.js";
import { listQueues, type QueueListing } from "../operate/discover.js";
import { type JobCounts, Queue } from "../queue.js";
import { readCounts } from "./counts.js";
import { type Bucket, type MinuteFigures, QueueSeries } from "./series.js";

interface QueueSample {
  name: string;
  /** The physical queues (the queue itself, or its lanes). */
  physical: string[];
  counts: JobCounts;
  /** Completions per second over each of the last samples, oldest first; `null` entries: no bus. */
  completedPerSec: (number | null)[];
  /** Failed attempts per second, the same way. */
  failedPerSec: (number | null)[];
  /**
   * The last minute: completions and failed attempts counted, and the seconds they span (their
   * average rate is the page's "completed/s (last minute)"); `null`: no bus.
   */
  minute: MinuteFigures | null;
  /** Completed and failed entries counted on the bus since the sampler's first sample. */
  counted: { completed: number; failed: number };
  /** How long the next job to run has been ready, ms (0 when none is pending; src/observe/ready.ts). */
  oldestPendingMs: number;
  /**
   * False for a queue not on any page's screen among many (`sampleAll`): its counts are those
   * read at its last round-robin recount (`countedAt`), its throughput not followed.
   */
  sampled: boolean;
  /** When its counts were read (ms); 0: not counted yet (its counts are zeros, not read). */
  countedAt: number;
}

export interface Snapshot {
  at: number;
  queues: QueueSample[];
  /** False when discovery stopped at its key bound (some queues may be missing). */
  complete: boolean;
}

interface SamplerOptions {
  sampleMs: number;
  discoverMs: number;
  keep: number;
  /** Fixed queue names; undefined: discover them. */
  queues?: readonly string[];
  /**
   * Every queue is sampled each time while there are at most this many; beyond, only the
   * queues a page has on screen (`watch`), and `RECOUNT` others' counts round-robin. Default 100.
   */
  sampleAll?: number;
}

/** How long a page's `watch` holds, ms: it repeats it while it shows the queues. */
const WATCH_MS = 30_000;
/** Queues watched at most, over every page (and what one `watch` call names at most). */
export const MAX_WATCH = 200;
/** Physical queues whose counts a sample reads besides the watched ones (round-robin), at most. */
const RECOUNT = 50;

/** Entries counted per physical queue per sample, at most. */
const MAX_ENTRIES = 10_000;

interface Track {
  lastId: string | null;
  counted: { completed: number; failed: number };
  completed: (number | null)[];
  failed: (number | null)[];
  series: QueueSeries;
  /** When this queue was last sampled (ms; 0: never). */
  at: number;
}

/** Counts the kinds of an `XRANGE` reply's entries; returns the last id read. */
function tally(entries: readonly [Buffer | string, readonly (Buffer | string)[]][]): {
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
function pushBounded<T>(list: T[], value: T, keep: number): void {
  list.push(value);
  if (list.length > keep) list.splice(0, list.length - keep);
}

export class Sampler extends EventEmitter<{ snapshot: [Snapshot]; error: [unknown] }> {
  private timer: NodeJS.Timeout | undefined;
  private listing: QueueListing[] | undefined;
  private complete = true;
  private discoveredAt = 0;
  private discovering: Promise<void> | undefined;
  /** A discovery asked for while one runs (after an operator action): run again once it ends. */
  private again = false;
  /** Where the next round-robin recount starts, an index into the listing. */
  private cursor = 0;
  private readonly tracks = new Map<string, Track>();
  /** The queues on screen, each until when (insertion order: the least recently watched first). */
  private readonly watched = new Map<string, number>();
  private readonly lastCounts = new Map<string, { counts: JobCounts; at: number }>();
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
    this.again = false;
    await this.running;
    await this.discovering;
  }

  /** The latest snapshot, or a fresh one when none was taken yet (it waits for the first discovery). */
  async snapshot(): Promise<Snapshot> {
    if (this.latest) return this.latest;
    await this.sample();
    return this.latest!;
  }

  /** The hour kept of queue `name` (one-minute buckets, oldest first); null for a queue not sampled. */
  hour(name: string): Bucket[] | null {
    return this.tracks.get(name)?.series.hour() ?? null;
  }

  /**
   * A page shows these queues: sample them each time for the next `WATCH_MS`. At most
   * `MAX_WATCH` are watched over every page: the least recently named leave first.
   */
  watch(names: readonly string[]): void {
    const until = Date.now() + WATCH_MS;
    for (const name of names.slice(0, MAX_WATCH)) {
      this.watched.delete(name);
      this.watched.set(name, until);
    }
    for (const name of this.watched.keys()) {
      if (this.watched.size <= MAX_WATCH) break;
      this.watched.delete(name);
    }
  }

  /**
   * Lists the queues again now, in the background (after an operator action); the promise
   * settles once the listing is swapped (a failure is emitted as `error`).
   */
  rediscover(): Promise<void> {
    if (this.discovering) this.again = true;
    return (this.discovering ?? this.discover()).catch((err: unknown) => {
      this.emit("error", err);
    });
  }

  /** Takes one sample; a call while one runs shares it (two at once would count entries twice). */
  sample(): Promise<void> {
    this.inflight ??= this.take().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /**
   * Lists the queues (a bounded `SCAN`, or the fixed names' lanes) and swaps the listing once
   * done; one at a time. Samples never wait for it, but the very first.
   */
  private discover(): Promise<void> {
    this.discovering ??= (async () => {
      try {
        do {
          this.again = false;
          const started = Date.now();
          if (this.opts.queues) {
            this.listing = await Promise.all(
              this.opts.queues.map(async (name) => ({
                name,
                physical: await new Queue(name, this.conn).lanesInUse(),
              })),
            );
          } else {
            const found = await listQueues(this.conn);
            this.listing = found.queues;
            this.complete = found.complete;
          }
          this.discoveredAt = started;
        } while (this.again);
      } finally {
        this.discovering = undefined;
      }
    })();
    return this.discovering;
  }

  /**
   * The queues recounted this sample besides those sampled: the next ones round-robin from
   * `cursor`, up to `RECOUNT` physical queues (at least one queue).
   */
  private recount(listing: readonly QueueListing[], full: (q: QueueListing) => boolean): QueueListing[] {
    const out: QueueListing[] = [];
    let physical = 0;
    const from = this.cursor;
    for (let seen = 0; seen < listing.length && physical < RECOUNT; seen++) {
      const at = (from + seen) % listing.length;
      const q = listing[at]!;
      if (full(q)) continue;
      if (out.length > 0 && physical + q.physical.length > RECOUNT) break;
      out.push(q);
      physical += q.physical.length;
      this.cursor = (at + 1) % listing.length;
    }
    return out;
  }

  private async take(): Promise<void> {
    if (this.listing === undefined) await this.discover();
    const now = Date.now();
    if (!this.discovering && now - this.discoveredAt >= this.opts.discoverMs) {
      void this.discover().catch((err: unknown) => this.emit("error", err));
    }
    const listing = this.listing ?? [];
    for (const [name, until] of this.watched) if (until <= now) this.watched.delete(name);
    const all = listing.length <= (this.opts.sampleAll ?? 100);
    const full = (q: QueueListing) => all || this.watched.has(q.name);
    const others = all ? [] : this.recount(listing, full);
    // One tick: every read of this sample leaves together (one pipelined round per shard).
    const [sampled] = await Promise.all([
      Promise.all(listing.filter(full).map((q) => this.sampleQueue(q, now))),
      Promise.all(
        others.map(async (q) =>
          this.lastCounts.set(q.name, { counts: await readCounts(this.conn, q.physical), at: now }),
        ),
      ),
    ]);
    const byName = new Map(sampled.map((q) => [q.name, q]));
    const queues = listing.map((q) => byName.get(q.name) ?? this.unsampled(q));
    const live = new Set(listing.flatMap((q) => [q.name, ...q.physical.map((p) => `bus:${p}`)]));
    for (const name of this.tracks.keys()) if (!live.has(name)) this.tracks.delete(name);
    for (const name of this.lastCounts.keys()) if (!live.has(name)) this.lastCounts.delete(name);
    this.readiness.keep(new Set(listing.flatMap((q) => q.physical)));
    this.latest = { at: now, queues, complete: this.complete };
    this.emit("snapshot", this.latest);
  }

  /** A queue off screen: the counts of its last recount, nothing followed. */
  private unsampled(q: QueueListing): QueueSample {
    const last = this.lastCounts.get(q.name);
    return {
      name: q.name,
      physical: q.physical,
      counts: last?.counts ?? {
        pending: 0,
        scheduled: 0,
        active: 0,
        completed: 0,
        dead: 0,
        waiting: 0,
        paused: false,
      },
      completedPerSec: [],
      failedPerSec: [],
      minute: null,
      counted: { ...(this.tracks.get(q.name)?.counted ?? { completed: 0, failed: 0 }) },
      oldestPendingMs: 0,
      sampled: false,
      countedAt: last?.at ?? 0,
    };
  }

  private async sampleQueue(q: QueueListing, now: number): Promise<QueueSample> {
    const track = this.trackOf(q.name);
    // Since this queue's own last sample (it may have been off screen meanwhile).
    const elapsed = track.at === 0 ? 0 : (now - track.at) / 1000;
    track.at = now;
    const counts = await readCounts(this.conn, q.physical);
    this.lastCounts.set(q.name, { counts, at: now });
    const rates = await Promise.all(q.physical.map((p) => this.rate(p, elapsed)));
    const ages = await Promise.all(q.physical.map((p) => this.oldestPending(p)));
    const known = rates.filter((r) => r !== null);
    const sum = (pick: (r: { completed: number; failed: number }) => number) =>
      elapsed === 0 || known.length === 0 ? null : known.reduce((s, r) => s + pick(r), 0) / elapsed;
    for (const r of known) {
      track.counted.completed += r.completed;
      track.counted.failed += r.failed;
    }
    const latencyMs = Math.max(0, ...ages);
    const total = (pick: (r: { completed: number; failed: number }) => number) =>
      known.length === 0 ? null : known.reduce((s, r) => s + pick(r), 0);
    track.series.add({
      at: now,
      seconds: elapsed,
      completed: total((r) => r.completed),
      failed: total((r) => r.failed),
      latencyMs,
    });
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
      minute: track.series.minute(),
      counted: { ...track.counted },
      oldestPendingMs: latencyMs,
      sampled: true,
      countedAt: now,
    };
  }

  private trackOf(name: string): Track {
    let track = this.tracks.get(name);
    if (!track) {
      track = {
        lastId: null,
        counted: { completed: 0, failed: 0 },
        completed: [],
        failed: [],
        series: new QueueSeries(),
        at: 0,
      };
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
