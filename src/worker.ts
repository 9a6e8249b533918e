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
import { InvalidArgumentError } from "./errors.js";
import type { ClaimBatch, ClaimedJob } from "./jobs.js";
import { ConsumerSpans, type Settled } from "./observe/consumer-spans.js";
import type { Queue } from "./queue.js";
import { ScheduleLoop } from "./schedules/loop.js";
import { WakeGate } from "./wake.js";
import { Announcer, WatchedSet } from "./worker/announce.js";
import { BlockingClaim } from "./worker/blocking-claim.js";
import { type Carry, FUSED_VERBS, type Pick } from "./worker/carry.js";
import { withinBound } from "./worker/claims.js";
import type { BatchHandler } from "./worker/batch.js";
import { batchSlot } from "./worker/batch-slot.js";
import { Claimer, MAX_CLAIM_BATCH } from "./worker/claimer.js";
import { Inbox } from "./worker/inbox.js";
import { heldBack, sleep, type WorkerContext, type WorkerEvents } from "./worker/context.js";
import { isFatal, rateLimitedConsole, retryAfterError } from "./worker/faults.js";
import { handBack, handBackLate, handBackLeased } from "./worker/hand-back.js";
import { startHeartbeat } from "./worker/heartbeat.js";
import { type Handler, JobView, type Running } from "./worker/job.js";
import { WorkerLanes } from "./worker/lanes.js";
import { LeaseCheck } from "./worker/lease-check.js";
import {
  type BatchWorkerOptions,
  type ResolvedOptions,
  resolveOptions,
  type WorkerOptions,
} from "./worker/options.js";
import { Retention } from "./worker/retention.js";
import { type Outcome, settle } from "./worker/settle.js";
import { checkSerializer, type Serializer } from "./serializer.js";
import { withinTimeout } from "./worker/timeout.js";

export type { Handler, Job } from "./worker/job.js";
export type { BatchHandler, BatchOption } from "./worker/batch.js";
export { failed, JobFailed } from "./worker/batch.js";
export type { BatchWorkerOptions, Retention, WorkerLogger, WorkerOptions } from "./worker/options.js";
export type { WorkerEvents } from "./worker/context.js";

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
  /** How a job's payload is read as its `data` (the option, else the queue's). */
  private readonly serializer: Serializer;
  private readonly gate: WakeGate;
  /** Jobs whose handlers run (or are about to); each change may change the announcement. */
  private readonly running = new WatchedSet<Running>(() => this.announcer.changed());
  /** What the worker announces on its wake subscriber's name (`CLIENT LIST` reads it). */
  private readonly announcer: Announcer;
  private readonly lanes: WorkerLanes;
  private readonly logger;
  private slots: Promise<void>[] = [];
  private closing: Promise<void> | undefined;
  private fatalError: unknown;
  private settleClosed!: (error?: unknown) => void;
  /** Claims sent and not yet answered: close() lets them land before it hands jobs back. */
  private readonly claims = new Set<Promise<unknown>>();
  /** How the slots claim: many jobs in one call where the engine runs it. */
  private readonly claimer: Claimer;
  /** Jobs a slot's claim leased for the other free slots. */
  private readonly inbox = new Inbox();
  /** A wake of this tick released a slot (or left a permit): it serves the tick's other wakes too. */
  private wakeQueued = false;
  /** Completions and failures sent and not yet answered. */
  private readonly settling = new Set<Promise<Settled>>();
  /** The spans of each job, when `tracing` is on. */
  private readonly spans: ConsumerSpans | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private transient = 0;
  /** What the worker's parts share (the settlement, the hand-backs, the blocking claim). */
  private readonly ctx: WorkerContext;
  /** The blocking claim (wire 6, a queue without lanes, a module that offers it). */
  private readonly blocking: BlockingClaim;
  /** The check a claim passes before its handler starts: is its lease still this worker's? */
  private readonly leaseCheck: LeaseCheck;
  /** The queue's schedule loop (a queue without lanes): adds the jobs of due schedules. */
  private readonly schedules: ScheduleLoop | undefined;
  /** Retention by age (`keepCompleted` / `keepDead` with an `age`): deletes old finished jobs. */
  private readonly retention: Retention;

  private readonly handler: Handler;

  /** One job per handler call; with `batch`, the handler takes the batch's jobs (`BatchHandler`). */
  constructor(queue: Queue, handler: BatchHandler, options: BatchWorkerOptions);
  constructor(queue: Queue, handler: Handler, options?: WorkerOptions);
  constructor(
    queue: Queue,
    handler: Handler | BatchHandler,
    options: WorkerOptions | BatchWorkerOptions = {},
  ) {
    super();
    if (typeof handler !== "function") {
      throw new InvalidArgumentError("handler", "must be a function");
    }
    this.handler = handler as Handler;
    this.conn = queue.connection;
    this.name = queue.name;
    this.opts = resolveOptions(options);
    this.serializer =
      options.serializer === undefined ? queue.serializer : checkSerializer(options.serializer);
    this.logger = this.opts.logger ?? rateLimitedConsole();
    this.spans = this.opts.tracing ? new ConsumerSpans(this.name, this.opts.tracing) : undefined;
    this.gate = new WakeGate(this.opts.idleCheckMs, this.opts.concurrency);
    this.announcer = new Announcer(
      this.name,
      this.opts.concurrency,
      () => this.running.size,
      () => this.lanes.wakeSubscription(),
    );
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
          const others = this.blocking.othersOf(n);
          if (others <= 0) return;
          if (!this.claimer.batches) return this.gate.wake(others);
          // A batch claim serves every waiting slot: one released slot claims for them all, and
          // the wakes read with this one (the same tick, before its claim is sent) release no other.
          if (this.wakeQueued) return;
          this.wakeQueued = true;
          queueMicrotask(() => (this.wakeQueued = false));
          this.gate.wake(1);
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
      () => this.announcer.name(),
    );
    this.ctx = {
      conn: this.conn,
      name: this.name,
      opts: this.opts,
      gate: this.gate,
      lanes: this.lanes,
      running: this.running,
      claims: this.claims,
      settling: this.settling,
      closing: () => this.closing !== undefined,
      fatalError: () => this.fatalError,
      emit: this.emit.bind(this),
      fault: (err) => this.fault(err),
      report: (err) => this.report(err),
    };
    this.blocking = new BlockingClaim(this.ctx);
    this.claimer = new Claimer(this.ctx);
    this.schedules =
      queue.lanes === 1
        ? new ScheduleLoop(this.conn, this.name, { error: (err) => void this.fault(err) })
        : undefined;
    this.retention = new Retention(
      this.conn,
      () => this.lanes.set.all(),
      this.opts.ages,
      (err) => this.fault(err),
    );
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
    this.retention.start();
    // Batch slots keep the gate's safety tick: none waits inside the server.
    const blocking = this.opts.batch ? undefined : this.blocking.open();
    await Promise.all([blocking, this.leaseCheck.warm(this.lanes.set.all())]);
    if (this.closing) return;
    this.heartbeat = startHeartbeat(this.ctx, () => this.announcer.keepAlive());
    const { batch } = this.opts;
    this.slots = Array.from({ length: this.opts.concurrency }, (_, i) =>
      batch
        ? batchSlot({
            ctx: this.ctx,
            batch,
            handler: this.handler as unknown as BatchHandler,
            leaseCheck: this.leaseCheck,
            claim: (lane, count) => this.claimer.lease(lane, count),
          })
        : // The others start (and wait) first: the last slot's first claim asks for them all.
          this.slot(i === this.opts.concurrency - 1),
    );
  }

  private async slot(first: boolean): Promise<void> {
    // With batch claims one slot claims for the others at the start: they begin waiting.
    if (!first && this.claimer.batches) await this.gate.wait();
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
      const handed = this.inbox.take(); // a job another slot's claim leased for this one
      if (handed) {
        carry = await this.process(handed.job, handed.lane, handed.claimedAt);
        continue;
      }
      if (left && "waitMs" in left) {
        await heldBack(this.ctx, left.waitMs);
        continue;
      }
      const pick = left ? left.pick : this.lanes.set.next();
      if (!pick) {
        // No lane may hold work: one slot waits inside the server (the blocking claim), the
        // others for a wake (or the safety tick, which probes every lane, when none waits there).
        if (this.blocking.free) {
          const watched = await this.blocking.watch((job, lane, at) => this.process(job, lane, at));
          if (watched === true) return;
          carry = watched;
          continue;
        }
        await this.gate.wait();
        continue;
      }
      // For this slot and every slot waiting idle that no leased job or claim on its way serves.
      const count = this.claimer.batches ? this.inbox.countFor(this.gate.waiting, MAX_CLAIM_BATCH) : 1;
      const claimedAt = this.spans ? Date.now() : 0;
      const landed = this.inbox.sent(count);
      let got: ClaimBatch;
      try {
        got = await this.claimer.lease(pick.lane, count);
        failures = 0;
      } catch (err) {
        if (this.fault(err)) return;
        // Back off, but a wake or a peer's successful claim releases this slot early.
        if (!this.closing) await this.gate.wait(retryAfterError(++failures));
        continue;
      } finally {
        landed();
      }
      const [mine, ...others] = got.jobs;
      if (!mine) {
        if (got.limited) await heldBack(this.ctx, got.limited.waitMs);
        // The lane is empty: look at the next one (none may hold work → the slot waits above).
        else this.lanes.set.empty(pick.lane, pick.epoch);
        continue;
      }
      for (const job of others) {
        this.inbox.put({ job, lane: pick.lane, claimedAt });
        this.gate.releaseOne();
      }
      // Fewer than asked for: the lane is empty now; else it may hold more: one more slot looks.
      if (got.jobs.length < count && !got.limited) this.lanes.set.empty(pick.lane, pick.epoch);
      else this.gate.releaseOne();
      carry = await this.process(mine, pick.lane, claimedAt);
    }
    // Closing: a job the last completion leased goes back to `pending`, its attempt given back.
    if (carry && "job" in carry) handBackLeased(this.ctx, carry.lane, carry.job);
  }

  /**
   * Runs the handler — once the claim's lease is known to be still this worker's (`LeaseCheck`);
   * a claim that reached it too late is not run (`leaseLost`) and handed back. Then it settles
   * the job: a completion or a failure whose slot's next pick is this same lane leases that
   * lane's next job in its own transition (`COMPLETENEXT`, `FAILNEXT`, when the engine runs it:
   * one round trip for both) and hands it to the slot — the failed job itself when a claim after
   * the failure would lease it. Otherwise the complete / fail is sent without waiting for the
   * reply, so the slot's next claim shares that round trip. `settling` tracks the replies still on their way.
   */
  private async process(claimed: ClaimedJob, lane: string, claimedAt: number): Promise<Carry> {
    const job = new JobView(this.name, lane, claimed, this.conn, this.serializer, this.opts.leaseMs);
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
      if (verdict.handBack) handBackLate(this.ctx, lane, claimed);
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
    // The slot's next pick, made now: the same lane → the settlement leases its next job.
    // (Not while a job another claim leased waits for a free slot: this one takes it.)
    const fusedVerb = FUSED_VERBS[outcome.ok ? "complete" : "fail"];
    const fusable = !this.closing && this.inbox.size === 0 && this.conn.engine.runs(fusedVerb);
    const pick = fusable ? this.lanes.set.next() : null;
    const fused = pick !== null && pick.lane === lane ? pick : null;
    let leased: Carry;
    let answered = false;
    const onNext = fused
      ? (next: Carry) => {
          answered = true;
          leased = next;
        }
      : undefined;
    const settled = spans
      ? spans.settle(outcome.ok ? "complete" : "fail", () => settle(this.ctx, entry, outcome, onNext))
      : settle(this.ctx, entry, outcome, onNext);
    this.settling.add(settled);
    void settled.finally(() => this.settling.delete(settled));
    if (!fused) return pick ? { pick } : undefined;
    await settled;
    if (leased) return leased;
    // No reply to the fused call (cut, abandoned; a resend completed the job alone): nothing says
    // the lane is empty, so the slot claims there next. Marking it empty would idle the slot until
    // a wake or the safety tick (idleCheckMs) — every slot of the worker, after a cut.
    return answered ? this.nothingLeased(fused) : { pick: fused };
  }

  /** The settlement's reply leased nothing: the lane is empty (paused, or refused: its claim tells). */
  private async nothingLeased(pick: Pick): Promise<Carry> {
    this.lanes.set.empty(pick.lane, pick.epoch);
    return undefined;
  }

  private async shutdown(): Promise<void> {
    await this.ready.catch(() => {});
    this.gate.wakeAll();
    this.blocking.interrupt();
    const finished = Promise.all(this.slots);
    let timer: NodeJS.Timeout | undefined;
    const grace = this.fatalError === undefined ? this.opts.closeGraceMs : 0;
    await Promise.race([finished, new Promise((r) => (timer = setTimeout(r, grace)))]);
    clearTimeout(timer);
    clearInterval(this.heartbeat);
    this.announcer.stop();
    // A claim still in flight brings one more job. Its slot awaits the reply first, so it has put
    // the job in `running` by the time this await resumes: it is handed back with the others.
    // Every claim here is bounded (`abandonable`, the watcher's watchdog): this cannot hang.
    await Promise.allSettled([...this.claims]);
    // Jobs a batch claim leased for slots that will not take them now: back to `pending`.
    for (const left of this.inbox.drain()) handBackLeased(this.ctx, left.lane, left.job);
    const unfinished = [...this.running].filter(
      (e) => !e.handedBack && !e.leaseLost && !e.settled && !e.job.moved,
    );
    for (const entry of unfinished) entry.handedBack = true;
    // Hand-backs and settlements in flight get a reply's bound too: on a half-open socket nothing
    // answers them, and a job whose reply never came goes back to `pending` when its lease ends.
    await withinBound(Promise.all(unfinished.map((entry) => handBack(this.ctx, entry))));
    // Handlers still running are told to stop; their jobs are already back in the queue, so
    // close() does not wait for them (a handler that ignores its signal cannot hold it up).
    for (const entry of unfinished) entry.job.abort(new Error("worker closed"));
    await withinBound(Promise.allSettled([...this.settling]));
    await this.blocking.close();
    await this.schedules?.stop();
    await this.retention.stop();
    await this.lanes.stop();
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
