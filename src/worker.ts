/**
 * A worker: claims up to `concurrency` jobs of one queue, renews each lease while its handler
 * runs, completes with the handler's result or fails with its error (retry after a backoff, dead
 * when attempts are exhausted), and runs the queue's timers. Idle slots wait on the queue's wake
 * channel, not by polling. Errors are retried with backoff and reported; an error no retry can
 * cure stops the worker, once and loudly. `close()` stops claiming, waits for running handlers
 * up to a grace period, and hands unfinished jobs back without consuming their attempt.
 */
import { EventEmitter } from "node:events";
import type { Connection } from "./connector/connection.js";
import { InvalidArgumentError, LeaseLostError, ServerError } from "./errors.js";
import {
  type ClaimedJob,
  type ClaimOutcome,
  claimVerb,
  complete,
  completeNext,
  extend,
  fail,
  isPaused,
  requeue,
} from "./jobs.js";
import { withinTimeout } from "./worker/timeout.js";
import { ConsumerSpans, type Settled } from "./observe/consumer-spans.js";
import type { Queue } from "./queue.js";
import { ScheduleLoop } from "./schedules/loop.js";
import { WakeGate } from "./wake.js";
import { isFatal, rateLimitedConsole, retryAfterError } from "./worker/faults.js";
import { abandonable, withinBound } from "./worker/claims.js";
import { type Carry, FUSED_VERB, type Pick } from "./worker/carry.js";
import { type Handler, type Job, JobView, type Running } from "./worker/job.js";
import { WorkerLanes } from "./worker/lanes.js";
import { LeaseCheck } from "./worker/lease-check.js";
import { type ResolvedOptions, resolveOptions, type WorkerOptions } from "./worker/options.js";
import { encodeResult, errorText, retryDelay } from "./worker/outcome.js";
import { type ClaimWatcher, openWatcher } from "./worker/watcher.js";

export type { Handler, Job } from "./worker/job.js";
export type { WorkerLogger, WorkerOptions } from "./worker/options.js";

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
  error: [error: unknown];
}

type Outcome = { ok: true; result: unknown } | { ok: false; error: unknown };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Worker extends EventEmitter<WorkerEvents> {
  /** Resolves when the worker is subscribed and its slots run; rejects if it stopped before. */
  readonly ready: Promise<void>;
  /**
   * Settles when the worker has stopped: resolves after `close()`, rejects with the error when a
   * fatal error (fence refusal, credentials, `NOPERM`, a closed connection) stopped it.
   */
  readonly closed: Promise<void>;
  private readonly conn: Connection;
  private readonly name: string;
  private readonly opts: ResolvedOptions;
  private readonly gate: WakeGate;
  private readonly running = new Set<Running>();
  private readonly lanes: WorkerLanes;
  private readonly logger;
  private slots: Promise<void>[] = [];
  private closing: Promise<void> | undefined;
  private fatalError: unknown;
  private settleClosed!: (error?: unknown) => void;
  /** Claims sent and not yet answered: close() lets them land before it hands jobs back. */
  private readonly claims = new Set<Promise<ClaimOutcome>>();
  /** The pause read in flight per lane, shared by every slot that wants to claim there meanwhile. */
  private readonly pauseReads = new Map<string, Promise<boolean>>();
  /** Completions and failures sent and not yet answered. */
  private readonly settling = new Set<Promise<Settled>>();
  /** The spans of each job, when `tracing` is on. */
  private readonly spans: ConsumerSpans | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private transient = 0;
  /** The blocking claim (wire 6, a queue without lanes, a module that offers it), if used. */
  private watcher: ClaimWatcher | undefined;
  /** True while a slot waits on the blocking claim (or backs off between its waits). */
  private watchHeld = false;
  /** A wait is in the server and no wake has been charged to it yet (it takes that job itself). */
  private waitTakesOne = false;
  /** The check a claim passes before its handler starts: is its lease still this worker's? */
  private readonly leaseCheck: LeaseCheck;
  /** The queue's schedule loop (a queue without lanes): adds the jobs of due schedules. */
  private readonly schedules: ScheduleLoop | undefined;

  constructor(
    queue: Queue,
    private readonly handler: Handler,
    options: WorkerOptions = {},
  ) {
    super();
    if (typeof handler !== "function") {
      throw new InvalidArgumentError("handler", "must be a function");
    }
    this.conn = queue.connection;
    this.name = queue.name;
    this.opts = resolveOptions(options);
    this.logger = this.opts.logger ?? rateLimitedConsole();
    this.spans = this.opts.tracing ? new ConsumerSpans(this.name, this.opts.tracing) : undefined;
    this.gate = new WakeGate(this.opts.idleCheckMs, this.opts.concurrency);
    this.leaseCheck = new LeaseCheck(this.conn, this.opts.leaseMs, (err) => void this.fault(err));
    const timers = {
      promoteEveryMs: this.opts.promoteEveryMs,
      reapEveryMs: this.opts.reapEveryMs,
      batch: 1000,
      maxAttempts: this.opts.attempts,
      keepDead: this.opts.keepDead,
      hostTimers: this.opts.hostTimers,
    };
    this.lanes = new WorkerLanes(
      this.conn,
      this.name,
      queue.lanes,
      timers,
      this.opts.idleCheckMs,
      this.opts.reapEveryMs,
      {
        wake: (lane, n) => {
          this.lanes.set.woke(lane);
          // The slot waiting in the server takes one job of the first wake itself.
          const others = this.waitTakesOne ? n - 1 : n;
          this.waitTakesOne = false;
          if (others > 0) this.gate.wake(others);
        },
        dueChanged: () => this.schedules?.poke(),
        resubscribed: () => {
          this.schedules?.poke();
          this.lanes.set.wokeAll();
          this.gate.wakeAll();
        },
        stalled: (requeued, dead) => this.emit("stalled", requeued, dead),
        fault: (err) => void this.fault(err),
      },
    );
    this.schedules =
      queue.lanes === 1
        ? new ScheduleLoop(this.conn, this.name, { error: (err) => void this.fault(err) })
        : undefined;
    this.closed = new Promise<void>((resolve, reject) => {
      this.settleClosed = (error?: unknown) => (error === undefined ? resolve() : reject(error));
    });
    this.closed.catch(() => {}); // surfaced through `error` / the logger; awaiting it still rejects
    this.ready = this.start();
    this.ready.catch(() => {});
  }

  /** The queue this worker runs. */
  get queue(): string {
    return this.name;
  }

  /** Jobs whose handlers are running now. */
  get activeCount(): number {
    return this.running.size;
  }

  /** Errors met and retried so far (lost connections, a loading or busy server, …). */
  get transientErrors(): number {
    return this.transient;
  }

  /**
   * Stops claiming, waits up to `closeGraceMs` for running handlers, then hands every unfinished
   * job back to `pending` (`REQUEUE`, both wires: the attempt it held is given back), and stops
   * the timers. Resolves as `closed` does (rejects with the fatal error that stopped the worker).
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown().then(
      () => this.settleClosed(this.fatalError),
      (err) => this.settleClosed(err),
    );
    return this.closed;
  }

  /**
   * Joins the queue's lanes — records a laned queue's lane count, subscribes to every lane's wake
   * channel, starts their timers (retrying what passes with time) — then starts the slots.
   */
  private async start(): Promise<void> {
    for (let failures = 1; !this.closing; failures++) {
      try {
        await this.spans?.ready; // tracing on: @opentelemetry/api loads first (absent: fatal)
        await this.lanes.start();
        break;
      } catch (err) {
        if (this.fault(err)) throw err;
        await sleep(retryAfterError(failures));
      }
    }
    if (this.closing) return;
    this.schedules?.start();
    await Promise.all([this.startWatcher(), this.leaseCheck.warm(this.lanes.set.all())]);
    if (this.closing) return;
    this.heartbeat = setInterval(() => this.renewLeases(), Math.max(Math.floor(this.opts.leaseMs / 3), 1));
    this.slots = Array.from({ length: this.opts.concurrency }, () => this.slot());
  }

  private async slot(): Promise<void> {
    let failures = 0;
    // What the slot's last job left it: the job its completion leased, a limited claim's wait,
    // or the lane set's pick made at the completion.
    let carry: Carry;
    while (!this.closing) {
      const left = carry;
      carry = undefined;
      if (left && "job" in left) {
        this.gate.releaseOne(); // the queue may hold more: one more idle slot looks
        carry = await this.process(left.job, left.lane, left.claimedAt);
        continue;
      }
      if (left && "waitMs" in left) {
        await this.heldBack(left.waitMs);
        continue;
      }
      const pick = left ? left.pick : this.lanes.set.next();
      if (!pick) {
        // No lane may hold work: one slot waits inside the server (the blocking claim), the
        // others for a wake (or the safety tick, which probes every lane, when none waits there).
        if (this.watcher && !this.watchHeld) {
          const watched = await this.watch(this.watcher);
          if (watched === true) return;
          carry = watched;
          continue;
        }
        await this.gate.wait();
        continue;
      }
      let claimed: ClaimOutcome;
      const claimedAt = this.spans ? Date.now() : 0;
      try {
        // Bounded: a claim its connection never answers is abandoned, not waited on for ever.
        const sent = abandonable(this.claimNext(pick.lane), pick.lane, (late) =>
          this.handBackLate(pick.lane, late),
        );
        this.claims.add(sent);
        try {
          claimed = await sent;
        } finally {
          this.claims.delete(sent);
        }
        failures = 0;
      } catch (err) {
        if (this.fault(err)) return;
        // Back off, but a wake or a peer's successful claim releases this slot early.
        if (!this.closing) await this.gate.wait(retryAfterError(++failures));
        continue;
      }
      if (!claimed) {
        // The lane is empty: look at the next one (none may hold work → the slot waits above).
        this.lanes.set.empty(pick.lane, pick.epoch);
        continue;
      }
      if ("limited" in claimed) {
        await this.heldBack(claimed.waitMs);
        continue;
      }
      this.gate.releaseOne(); // the queue may hold more: one more idle slot looks
      carry = await this.process(claimed, pick.lane, claimedAt);
    }
    // Closing: a job the last completion leased goes back to `pending`, its attempt given back.
    if (carry && "job" in carry) this.handBackLeased(carry.lane, carry.job);
  }

  /** The blocking claim, when this worker may use it (`openWatcher`); else the safety tick stays. */
  private async startWatcher(): Promise<void> {
    try {
      this.watcher = await openWatcher(this.conn, this.name, this.lanes.set.all(), this.opts.blockMs);
    } catch (err) {
      this.report(err);
    }
    if (this.watcher) this.gate.setTicking(false);
  }

  /** Back to the wake channel's safety tick (lanes joined, or the node lacks `EMQ.BCLAIM`). */
  private retireWatcher(): void {
    const watcher = this.watcher;
    this.watcher = undefined;
    this.gate.setTicking(true);
    void watcher?.close();
  }

  /**
   * This slot waits inside the server for the queue's next job (`EMQ.BCLAIM`, again after each
   * timeout), then runs it — releasing one more idle slot first, since more may follow. Errors
   * back off and wait again; a fatal one returns true (the worker stops). Else what the job it
   * ran left the slot (`Carry`).
   */
  private async watch(watcher: ClaimWatcher): Promise<true | Carry> {
    this.watchHeld = true;
    let held = true;
    try {
      for (let failures = 0; !this.closing && this.watcher === watcher; ) {
        const lanes = this.lanes.set.all();
        if (lanes.length !== 1) {
          this.retireWatcher();
          return undefined;
        }
        const lane = lanes[0]!;
        let claimed: ClaimOutcome;
        const claimedAt = Date.now(); // the claim span's start, when traced
        try {
          const sent = watcher.claim(lane, this.opts.leaseMs);
          this.claims.add(sent);
          this.waitTakesOne = true;
          try {
            claimed = await sent;
          } finally {
            this.claims.delete(sent);
            this.waitTakesOne = false;
          }
          failures = 0;
        } catch (err) {
          if (err instanceof ServerError && /^ERR unknown command/.test(err.reply)) {
            this.report(err);
            this.retireWatcher();
            return undefined;
          }
          if (this.fault(err)) return true;
          await sleep(retryAfterError(++failures));
          continue;
        }
        if (!claimed) continue;
        if ("limited" in claimed) {
          await this.heldBack(claimed.waitMs);
          continue;
        }
        // Another idle slot may wait in the server now, while this one runs the job.
        held = false;
        this.watchHeld = false;
        this.lanes.set.woke(lane);
        this.gate.releaseOne();
        return await this.process(claimed, lane, claimedAt);
      }
      return undefined;
    } finally {
      if (held) this.watchHeld = false;
    }
  }

  /**
   * Flow control held a claim back: wait until the rate window opens (`waitMs`), or for a wake
   * (a job left active: the queue's concurrency has room again) with the safety tick's bound.
   */
  private heldBack(waitMs: number): Promise<void> {
    return this.gate.wait(waitMs > 0 ? waitMs : this.opts.idleCheckMs);
  }

  /**
   * The host's pause read, then the claim — unless the engine's claim reads the flag itself (the
   * native `EMQ.CLAIM`, D2). Slots that want to claim while a pause read is out join it instead
   * of sending their own, so at high concurrency one `HGET` serves many claims. The read a claim
   * acts on is then at most one round trip older than the claim's request — the same window every
   * scripted claim already has between its read and its script (docs/architecture.md, "Pause").
   */
  private async claimNext(lane: string): Promise<ClaimOutcome> {
    if (!this.conn.engine.claimReadsPause) {
      let read = this.pauseReads.get(lane);
      if (!read) {
        read = isPaused(this.conn, lane).finally(() => this.pauseReads.delete(lane));
        this.pauseReads.set(lane, read);
      }
      if (await read) return null;
    }
    return claimVerb(this.conn, lane, this.opts.leaseMs);
  }

  /**
   * Runs the handler — once the claim's lease is known to be still this worker's (`LeaseCheck`);
   * a claim that reached it too late is not run (`leaseLost`) and handed back. Then it settles
   * the job: a completion whose slot's next pick is this same lane leases that lane's next job in
   * its own transition (`COMPLETENEXT`, when the engine runs it: one round trip for both) and
   * hands it to the slot. Otherwise the complete / fail is sent without waiting for the reply, so
   * the slot's next claim shares that round trip. `settling` tracks the replies still on their way.
   */
  private async process(claimed: ClaimedJob, lane: string, claimedAt: number): Promise<Carry> {
    const job = new JobView(this.name, lane, claimed, this.conn);
    const entry: Running = {
      job,
      lane,
      leasedAt: Date.now(),
      handedBack: false,
      leaseLost: false,
      settled: false,
    };
    this.running.add(entry);
    const spans = this.spans ? await this.spans.received(this.conn, lane, claimed, claimedAt) : undefined;
    const verdict = entry.handedBack ? undefined : await this.leaseCheck.before(lane, claimed);
    if (!verdict?.start || entry.handedBack) {
      // close() handed the job back while its trace context or its lease was read (it runs
      // elsewhere); or its lease is over, someone else's, or cannot be vouched for: not run.
      spans?.end(entry.handedBack ? "handed-back" : "lease-lost");
      this.running.delete(entry);
      if (entry.handedBack || !verdict || verdict.start) return undefined;
      if (verdict.handBack) this.handBackLate(lane, claimed);
      if (verdict.error) this.emit("leaseLost", job, verdict.error);
      return undefined;
    }
    entry.leasedAt = verdict.leasedAt; // the heartbeat renews it on time
    this.emit("active", job);
    let outcome: Outcome;
    try {
      const run = spans ? spans.run(() => this.handler(job)) : this.handler(job);
      outcome = { ok: true, result: await withinTimeout(Promise.resolve(run), job, claimed.timeoutMs) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // An extend sent from now on would reach the server after this job's complete / fail and be
    // refused ("job is not active"): a job that finished must not be reported as a lost lease.
    entry.settled = true;
    // The slot's next pick, made now: the same lane → the completion leases its next job.
    const pick =
      outcome.ok && !this.closing && this.conn.engine.runs(FUSED_VERB) ? this.lanes.set.next() : null;
    const fused = pick !== null && pick.lane === lane ? pick : null;
    let leased: Carry;
    const onNext = fused ? (next: Carry) => (leased = next) : undefined;
    const settle = spans
      ? spans.settle(outcome.ok ? "complete" : "fail", () => this.settle(entry, outcome, onNext))
      : this.settle(entry, outcome, onNext);
    this.settling.add(settle);
    void settle.finally(() => this.settling.delete(settle));
    if (!fused) return pick ? { pick } : undefined;
    await settle;
    return leased ?? (await this.nothingLeased(fused));
  }

  /** The completion leased nothing: the lane is empty (paused, or refused: its claim tells). */
  private async nothingLeased(pick: Pick): Promise<Carry> {
    this.lanes.set.empty(pick.lane, pick.epoch);
    return undefined;
  }

  /**
   * `COMPLETENEXT`: the completion, and the lane's next job leased in the same transition —
   * bounded like a claim (an unanswered one is abandoned; a job it brings late is handed back).
   */
  private async completeLeasing(job: JobView, result: string | Uint8Array, onNext: (next: Carry) => void) {
    const claimedAt = Date.now();
    const sent = completeNext(
      this.conn,
      job.lane,
      job.id,
      job.attempts,
      result,
      this.opts.keepCompleted,
      this.opts.leaseMs,
    );
    const bounded = abandonable(sent, job.lane, (late) => this.handBackLeased(job.lane, late));
    this.claims.add(bounded);
    let next: Awaited<typeof sent>;
    try {
      next = await bounded;
    } finally {
      this.claims.delete(bounded);
    }
    if (next && "id" in next) {
      if (this.closing) this.handBackLeased(job.lane, next);
      else onNext({ job: next, lane: job.lane, claimedAt });
    } else if (next) onNext({ waitMs: next.waitMs });
  }

  /**
   * Sends the job's complete or fail. A send that fails in a way that passes with time is sent
   * again (leases and tokens make that safe) until the lease would have run out; a repeat that
   * finds the job no longer active means the first send landed. Resolves with how it ended.
   */
  private async settle(entry: Running, outcome: Outcome, onNext?: (next: Carry) => void): Promise<Settled> {
    const { job } = entry;
    let resent = false;
    try {
      for (let failures = 1; ; failures++) {
        if (entry.handedBack) return "handed-back";
        if (entry.leaseLost) return "lease-lost";
        try {
          // A send again is the plain completion: the first may have leased a job already.
          return await this.settleOnce(job, outcome, resent ? undefined : onNext);
        } catch (err) {
          if (err instanceof LeaseLostError && resent && err.reason === "not active") {
            this.emit(outcome.ok ? "completed" : "failed", job, outcome.ok ? outcome.result : outcome.error);
            return "landed";
          }
          if (err instanceof LeaseLostError) {
            this.emit("leaseLost", job, err);
            return "lease-lost";
          }
          if (this.fault(err)) return "unsettled";
          if (Date.now() >= entry.leasedAt + this.opts.leaseMs) return "unsettled"; // the reaper takes it back
          resent = true;
          await sleep(retryAfterError(failures));
        }
      }
    } finally {
      this.running.delete(entry);
    }
  }

  private async settleOnce(job: JobView, outcome: Outcome, onNext?: (next: Carry) => void): Promise<Settled> {
    if (outcome.ok) {
      let result: string | Uint8Array;
      try {
        result = encodeResult(outcome.result);
      } catch (problem) {
        this.report(problem);
        return this.failJob(job, problem);
      }
      if (onNext) await this.completeLeasing(job, result, onNext);
      else await complete(this.conn, job.lane, job.id, job.attempts, result, this.opts.keepCompleted);
      this.lanes.settled(job.lane);
      this.emit("completed", job, outcome.result);
      return "completed";
    }
    const failed = await this.failJob(job, outcome.error);
    if (failed === "dead") this.lanes.settled(job.lane);
    return failed;
  }

  /**
   * One timer renews every running lease a third of the way through it (a job claimed less than
   * a sixth of a lease ago waits for the next tick). A lease found lost aborts its job's signal.
   */
  private renewLeases(): void {
    const fresh = Date.now() - this.opts.leaseMs / 6;
    for (const entry of this.running) {
      if (entry.handedBack || entry.leaseLost || entry.settled || entry.leasedAt > fresh) continue;
      const { job } = entry;
      const asked = Date.now();
      extend(this.conn, entry.lane, job.id, job.attempts, this.opts.leaseMs).then(
        () => {
          entry.leasedAt = asked;
        },
        (err) => {
          if (!(err instanceof LeaseLostError)) return void this.fault(err);
          // Settled: its complete / fail meets the same refusal and reports it once.
          if (entry.leaseLost || entry.handedBack || entry.settled) return;
          entry.leaseLost = true;
          job.abort(err);
          this.emit("leaseLost", job, err);
        },
      );
    }
  }

  /** Fails the attempt with the backoff for it; a backoff that gives no usable delay fails it with none. */
  private async failJob(job: JobView, error: unknown): Promise<"pending" | "scheduled" | "dead"> {
    const { delayMs, problem } = retryDelay(this.opts.backoff, job.attempts, error);
    if (problem) this.report(problem);
    const state = await fail(this.conn, job.lane, job.id, job.attempts, errorText(error), {
      backoffMs: delayMs,
      maxAttempts: this.opts.attempts,
      keep: this.opts.keepDead,
    });
    this.emit("failed", job, error);
    if (state === "dead") this.emit("dead", job, error);
    else this.emit("retrying", job, error, state);
    return state;
  }

  private async shutdown(): Promise<void> {
    await this.ready.catch(() => {});
    this.gate.wakeAll();
    void this.watcher?.interrupt(this.conn);
    const finished = Promise.all(this.slots);
    let timer: NodeJS.Timeout | undefined;
    const grace = this.fatalError === undefined ? this.opts.closeGraceMs : 0;
    await Promise.race([finished, new Promise((r) => (timer = setTimeout(r, grace)))]);
    clearTimeout(timer);
    clearInterval(this.heartbeat);
    // A claim still in flight brings one more job. Its slot awaits the reply first, so it has put
    // the job in `running` by the time this await resumes: it is handed back with the others.
    // Every claim here is bounded (`abandonable`, the watcher's watchdog): this cannot hang.
    await Promise.allSettled([...this.claims]);
    const unfinished = [...this.running].filter((e) => !e.handedBack && !e.leaseLost && !e.settled);
    for (const entry of unfinished) entry.handedBack = true;
    // Hand-backs and settlements in flight get a reply's bound too: on a half-open socket nothing
    // answers them, and a job whose reply never came goes back to `pending` when its lease ends.
    await withinBound(Promise.all(unfinished.map((entry) => this.handBack(entry))));
    // Handlers still running are told to stop; their jobs are already back in the queue, so
    // close() does not wait for them (a handler that ignores its signal cannot hold it up).
    for (const entry of unfinished) entry.job.abort(new Error("worker closed"));
    await withinBound(Promise.allSettled([...this.settling]));
    await this.watcher?.close();
    await this.schedules?.stop();
    await this.lanes.stop();
  }

  /** `REQUEUE`: pending now, with the attempt it held given back (its limit rises by one). */
  private async handBack(entry: Running): Promise<void> {
    const { id, attempts } = entry.job;
    try {
      await requeue(this.conn, entry.lane, id, attempts, this.opts.attempts);
    } catch (err) {
      if (!(err instanceof LeaseLostError) && this.fatalError === undefined) this.report(err);
    }
  }

  /**
   * A job no slot runs — a claim answered after its slot abandoned it, or too late to start — goes
   * back to `pending` (`REQUEUE` under its token: refused, and ignored, when another worker holds
   * it now; a job whose hand-back is lost goes back when its lease expires).
   */
  private handBackLate(lane: string, claimed: ClaimedJob): void {
    requeue(this.conn, lane, claimed.id, claimed.attempts, this.opts.attempts).catch(() => {}); // else the reaper
  }

  /** A job a completion leased that no slot will run (closing, or abandoned): back to `pending`. */
  private handBackLeased(lane: string, leased: ClaimedJob): void {
    const back = requeue(this.conn, lane, leased.id, leased.attempts, this.opts.attempts).then(
      () => "handed-back" as const,
      () => "handed-back" as const, // else the reaper
    );
    this.settling.add(back);
    void back.finally(() => this.settling.delete(back));
  }

  /**
   * Handles an error met while working: a fatal one stops the worker (reported once), any other
   * is counted and reported. Returns true when the worker is stopping because of it.
   */
  private fault(err: unknown): boolean {
    if (this.fatalError !== undefined) return true;
    if (isFatal(err, this.conn)) {
      this.fatalError = err;
      this.report(err);
      void this.close();
      return true;
    }
    this.transient += 1;
    this.report(err);
    return false;
  }

  private report(err: unknown): void {
    if (this.listenerCount("error") > 0) this.emit("error", err);
    else this.logger.warn(`echomq worker on queue ${JSON.stringify(this.name)}`, err);
  }
}
