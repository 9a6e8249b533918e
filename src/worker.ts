/**
 * A worker: claims up to `concurrency` jobs of one queue, renews each lease while its handler
 * runs, completes with the handler's result or fails with its error (retry after a backoff, dead
 * when attempts are exhausted), and runs the queue's timers. Idle slots wait on the queue's wake
 * channel, not by polling. `close()` stops claiming, waits for running handlers up to a grace
 * period, and hands unfinished jobs back.
 */
import { EventEmitter } from "node:events";
import { assertBackoff, type BackoffOption, backoffDelay, DEFAULT_BACKOFF } from "./backoff.js";
import type { Connection } from "./connector/connection.js";
import { InvalidArgumentError, LeaseLostError } from "./errors.js";
import { type ClaimedJob, claimVerb, complete, extend, fail, isPaused, requeue } from "./jobs.js";
import { queueKey } from "./keyspace.js";
import type { Queue } from "./queue.js";
import { Timers } from "./timers.js";
import { WakeGate } from "./wake.js";

export interface WorkerOptions {
  /** Jobs run at once. Default 1. */
  concurrency?: number;
  /** Lease per claim, renewed every third of it while the handler runs (ms). Default 30000. */
  leaseMs?: number;
  /** Attempts before a job is dead (a row's own `maxAttempts` wins). Default 3. */
  attempts?: number;
  /** Delay before a retry. Default exponential from 1 s, ±20% jitter, capped at 1 h. */
  backoff?: BackoffOption;
  /** Completed jobs kept for inspection; 0 deletes each at once. Default 1000. */
  keepCompleted?: number;
  /** Dead jobs kept; 0 deletes each at once. Default 10000. */
  keepDead?: number;
  /** How long `close()` waits for running handlers before handing their jobs back (ms). Default 5000. */
  closeGraceMs?: number;
  /** Promote due scheduled jobs every … ms. Default 1000. */
  promoteEveryMs?: number;
  /** Reap expired leases every … ms. Default 5000. */
  reapEveryMs?: number;
  /** An idle worker re-checks the queue at most this often without a wake message (ms). Default 2000. */
  idleCheckMs?: number;
}

/** A claimed job as the handler sees it. */
export interface Job {
  readonly id: string;
  readonly queue: string;
  readonly payload: Buffer;
  /** This attempt's number (1 for the first run); also the lease token. */
  readonly attempts: number;
  /** Aborted when the lease is lost or the worker closes before the handler finished. */
  readonly signal: AbortSignal;
  text(): string;
  json<T = unknown>(): T;
}

export type Handler = (job: Job) => unknown;

export interface WorkerEvents {
  completed: [job: Job, result: unknown];
  failed: [job: Job, error: unknown];
  retrying: [job: Job, error: unknown, state: "pending" | "scheduled"];
  dead: [job: Job, error: unknown];
  /** Expired leases the timers took back: to pending, or dead when out of attempts. */
  stalled: [requeued: string[], dead: string[]];
  /** This worker lost a job's lease (reaped, maybe claimed elsewhere); its result is dropped. */
  leaseLost: [job: Job, error: unknown];
  error: [error: unknown];
}

interface Running {
  readonly job: JobView;
  readonly claimedAt: number;
  handedBack: boolean;
  leaseLost: boolean;
  /** The handler returned or threw: its complete / fail is on the way and the lease needs no renewal. */
  settled: boolean;
}

/** The handler's view of a claimed job; its `signal` is made only when a handler asks for it. */
class JobView implements Job {
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private aborted = false;

  constructor(
    readonly queue: string,
    private readonly claimed: ClaimedJob,
  ) {}

  get id(): string {
    return this.claimed.id;
  }
  get payload(): Buffer {
    return this.claimed.payload;
  }
  get attempts(): number {
    return this.claimed.attempts;
  }
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.aborted && !this.controller.signal.aborted) this.controller.abort(this.abortReason);
    return this.controller.signal;
  }
  text(): string {
    return this.claimed.payload.toString("utf8");
  }
  json<T = unknown>(): T {
    return JSON.parse(this.claimed.payload.toString("utf8")) as T;
  }
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}

function positiveInt(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min) {
    throw new InvalidArgumentError(name, `must be an integer >= ${min}, got ${String(value)}`);
  }
  return v;
}

function encodeResult(result: unknown): string | Uint8Array {
  if (result === undefined || result === null) return "";
  if (typeof result === "string" || result instanceof Uint8Array) return result;
  return JSON.stringify(result);
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export class Worker extends EventEmitter<WorkerEvents> {
  /** Resolves when the worker is subscribed and its slots run. */
  readonly ready: Promise<void>;
  private readonly conn: Connection;
  private readonly name: string;
  private readonly opts: Required<Omit<WorkerOptions, "backoff">> & { backoff: BackoffOption };
  private readonly gate: WakeGate;
  private readonly running = new Set<Running>();
  private readonly timers: Timers;
  private subscriber: Connection | undefined;
  private slots: Promise<void>[] = [];
  private closing: Promise<void> | undefined;
  /** Claims sent and not yet answered: close() lets them land before it hands jobs back. */
  private readonly claims = new Set<Promise<ClaimedJob | null>>();
  /** Wire 4: the pause read in flight, shared by every slot that wants to claim meanwhile. */
  private pauseRead: Promise<boolean> | null = null;
  /** Completions and failures sent and not yet answered. */
  private readonly settling = new Set<Promise<void>>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    queue: Queue,
    private readonly handler: Handler,
    options: WorkerOptions = {},
  ) {
    super();
    if (typeof handler !== "function") throw new InvalidArgumentError("handler", "must be a function");
    this.conn = queue.connection;
    this.name = queue.name;
    const backoff = options.backoff ?? DEFAULT_BACKOFF;
    assertBackoff(backoff);
    this.opts = {
      concurrency: positiveInt("concurrency", options.concurrency, 1),
      leaseMs: positiveInt("leaseMs", options.leaseMs, 30_000, 10),
      attempts: positiveInt("attempts", options.attempts, 3),
      backoff,
      keepCompleted: positiveInt("keepCompleted", options.keepCompleted, 1000, 0),
      keepDead: positiveInt("keepDead", options.keepDead, 10_000, 0),
      closeGraceMs: positiveInt("closeGraceMs", options.closeGraceMs, 5000, 0),
      promoteEveryMs: positiveInt("promoteEveryMs", options.promoteEveryMs, 1000),
      reapEveryMs: positiveInt("reapEveryMs", options.reapEveryMs, 5000),
      idleCheckMs: positiveInt("idleCheckMs", options.idleCheckMs, 2000),
    };
    this.gate = new WakeGate(this.opts.idleCheckMs, this.opts.concurrency);
    this.timers = new Timers(
      this.conn,
      this.name,
      {
        promoteEveryMs: this.opts.promoteEveryMs,
        reapEveryMs: this.opts.reapEveryMs,
        batch: 1000,
        maxAttempts: this.opts.attempts,
        keepDead: this.opts.keepDead,
      },
      { stalled: (requeued, dead) => this.emit("stalled", requeued, dead), error: (err) => this.report(err) },
    );
    this.ready = this.start();
    this.ready.catch((err) => this.report(err));
  }

  /** Jobs whose handlers are running now. */
  get activeCount(): number {
    return this.running.size;
  }

  /**
   * Stops claiming, waits up to `closeGraceMs` for running handlers, then hands every unfinished
   * job back — wire 6: `REQUEUE` (pending now); wire 4: its lease is cut to 1 ms and reaped, so it
   * is pending again (or dead if that was its last attempt) — and stops the timers.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async start(): Promise<void> {
    this.subscriber = await this.conn.duplicate({ name: `emq-wake-${this.name}` });
    this.subscriber.client.on("message", () => this.gate.wakeOne());
    await this.subscriber.client.subscribe(queueKey(this.name, "wake"));
    if (this.closing) return;
    this.timers.start();
    this.heartbeat = setInterval(() => this.renewLeases(), Math.max(Math.floor(this.opts.leaseMs / 3), 1));
    this.slots = Array.from({ length: this.opts.concurrency }, () => this.slot());
  }

  private async slot(): Promise<void> {
    while (!this.closing) {
      let claimed: ClaimedJob | null;
      try {
        const sent = this.claimNext();
        this.claims.add(sent);
        try {
          claimed = await sent;
        } finally {
          this.claims.delete(sent);
        }
      } catch (err) {
        this.report(err);
        if (!this.closing) await this.gate.wait();
        continue;
      }
      if (!claimed) {
        // close() may have woken the idle slots while this claim was out: it must not wait again.
        if (!this.closing) await this.gate.wait();
        continue;
      }
      await this.process(claimed);
    }
  }

  /**
   * Wire 4: the host's pause read, then the claim. Slots that want to claim while a pause read is
   * out join it instead of sending their own, so at high concurrency one `HGET` serves many
   * claims. The read a claim acts on is then at most one round trip older than the claim's
   * request — the same window every wire-4 claim already has between its read and its script
   * (docs/architecture.md, "Pause on wire 4"). Wire 6: `EMQ.CLAIM` reads the flag itself (D2).
   */
  private async claimNext(): Promise<ClaimedJob | null> {
    if (this.conn.wire === 4) {
      this.pauseRead ??= isPaused(this.conn, this.name).finally(() => {
        this.pauseRead = null;
      });
      if (await this.pauseRead) return null;
    }
    return claimVerb(this.conn, this.name, this.opts.leaseMs);
  }

  /**
   * Runs the handler; its complete / fail is sent without waiting for the reply, so the slot's
   * next claim shares that round trip. `settling` tracks the replies still on their way.
   */
  private async process(claimed: ClaimedJob): Promise<void> {
    const job = new JobView(this.name, claimed);
    const entry: Running = {
      job,
      claimedAt: Date.now(),
      handedBack: false,
      leaseLost: false,
      settled: false,
    };
    this.running.add(entry);
    let outcome: { ok: true; result: unknown } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, result: await this.handler(job) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // An extend sent from now on would reach the server after this job's complete / fail and be
    // refused ("job is not active"): a job that finished must not be reported as a lost lease.
    entry.settled = true;
    const settle = this.settle(entry, outcome);
    this.settling.add(settle);
    void settle.finally(() => this.settling.delete(settle));
  }

  private async settle(
    entry: Running,
    outcome: { ok: true; result: unknown } | { ok: false; error: unknown },
  ): Promise<void> {
    const { job } = entry;
    try {
      if (entry.handedBack || entry.leaseLost) return;
      if (outcome.ok) {
        await complete(
          this.conn,
          this.name,
          job.id,
          job.attempts,
          encodeResult(outcome.result),
          this.opts.keepCompleted,
        );
        this.emit("completed", job, outcome.result);
      } else {
        await this.failJob(job, outcome.error);
      }
    } catch (err) {
      if (err instanceof LeaseLostError) this.emit("leaseLost", job, err);
      else this.report(err);
    } finally {
      this.running.delete(entry);
    }
  }

  /**
   * One timer renews every running lease a third of the way through it (a job claimed less than
   * a sixth of a lease ago waits for the next tick). A lease found lost aborts its job's signal.
   */
  private renewLeases(): void {
    const fresh = Date.now() - this.opts.leaseMs / 6;
    for (const entry of this.running) {
      if (entry.handedBack || entry.leaseLost || entry.settled || entry.claimedAt > fresh) continue;
      const { job } = entry;
      extend(this.conn, this.name, job.id, job.attempts, this.opts.leaseMs).catch((err) => {
        if (!(err instanceof LeaseLostError)) return this.report(err);
        // Settled: its complete / fail meets the same refusal and reports it once.
        if (entry.leaseLost || entry.handedBack || entry.settled) return;
        entry.leaseLost = true;
        job.abort(err);
        this.emit("leaseLost", job, err);
      });
    }
  }

  private async failJob(job: Job, error: unknown): Promise<void> {
    const backoffMs = backoffDelay(this.opts.backoff, job.attempts, error);
    const state = await fail(this.conn, this.name, job.id, job.attempts, errorText(error), {
      backoffMs,
      maxAttempts: this.opts.attempts,
      keep: this.opts.keepDead,
    });
    this.emit("failed", job, error);
    if (state === "dead") this.emit("dead", job, error);
    else this.emit("retrying", job, error, state);
  }

  private async shutdown(): Promise<void> {
    await this.ready.catch(() => {});
    this.gate.wakeAll();
    const finished = Promise.all(this.slots);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise((r) => (timer = setTimeout(r, this.opts.closeGraceMs)))]);
    clearTimeout(timer);
    clearInterval(this.heartbeat);
    // A claim still in flight brings one more job. Its slot awaits the reply first, so it has put
    // the job in `running` by the time this await resumes: it is handed back with the others.
    await Promise.allSettled([...this.claims]);
    const unfinished = [...this.running].filter((e) => !e.handedBack && !e.leaseLost && !e.settled);
    for (const entry of unfinished) entry.handedBack = true;
    await Promise.all(unfinished.map((entry) => this.handBack(entry)));
    if (unfinished.length > 0 && this.conn.wire === 4) {
      await new Promise((r) => setTimeout(r, 5));
      await this.timers.reapOnce().catch((err) => this.report(err));
    }
    // Handlers still running are told to stop; their jobs are already back in the queue, so
    // close() does not wait for them (a handler that ignores its signal cannot hold it up).
    for (const entry of unfinished) entry.job.abort(new Error("worker closed"));
    await Promise.allSettled([...this.settling]);
    await this.timers.stop();
    await this.subscriber?.close();
  }

  private async handBack(entry: Running): Promise<void> {
    const { id, attempts } = entry.job;
    try {
      if (this.conn.wire === 6) await requeue(this.conn, this.name, id, attempts, this.opts.attempts);
      else await extend(this.conn, this.name, id, attempts, 1);
    } catch (err) {
      if (!(err instanceof LeaseLostError)) this.report(err);
    }
  }

  private report(err: unknown): void {
    if (this.listenerCount("error") > 0) this.emit("error", err);
  }
}
