/**
 * What a worker meets while it runs jobs: claims unanswered, a lease ended before the handler
 * could start, a handler past its timeout, a result or a backoff it cannot use, a flow's outbox
 * entry it drops, reaping bounds it could not record, tracing it could not load.
 */

import { EchoMQError } from "./base.js";

/**
 * A blocking claim got no answer within its watchdog (the server's timeout plus a grace): the
 * socket is taken as lost — half-open after a network fault or a failover that sent no reset —
 * and dropped; the claim is sent again on a new one. A job the server leased to the lost socket
 * meanwhile goes back to `pending` when its lease expires (the reaper).
 */
export class ClaimWatchdogError extends EchoMQError {
  readonly ms: number;
  constructor(queue: string, ms: number) {
    super(
      "EMQ_CLAIM_WATCHDOG",
      `the blocking claim on queue ${JSON.stringify(queue)} got no reply within ${ms} ms: its connection is dropped and opened again`,
    );
    this.ms = ms;
  }
}

/**
 * A worker's non-blocking claim got no answer within its bound (`CLAIM_WATCHDOG_MS`): its
 * connection carries nothing back (half-open after a network fault, or held by a proxy). The slot
 * abandons that claim and goes on, so neither it nor `close()` can wait on it for ever; a job the
 * late reply still brings is handed back, and one leased to a reply that never comes goes back to
 * `pending` when its lease expires (the reaper).
 */
export class ClaimUnansweredError extends EchoMQError {
  readonly ms: number;
  constructor(queue: string, ms: number) {
    super(
      "EMQ_CLAIM_UNANSWERED",
      `a claim on queue ${JSON.stringify(queue)} got no reply within ${ms} ms: the slot abandoned it`,
    );
    this.ms = ms;
  }
}

/**
 * A claim's reply reached its worker after the lease it granted had ended (the process was
 * stalled — stopped, swapped out, a long garbage collection — or the reply held up on its way):
 * the job may be someone else's by now. The handler is not started; the job is handed back
 * (`REQUEUE` under its token, which the server refuses when another worker holds it now).
 * Reported with the worker's `leaseLost` event; nothing ran, so there is nothing to undo.
 */
export class LeaseExpiredError extends EchoMQError {
  /** How long before the handler would have started the lease had ended (ms, by the server's clock as the worker estimates it). */
  readonly lateMs: number;
  constructor(queue: string, id: string, lateMs: number, leaseMs: number) {
    super(
      "EMQ_LEASE_EXPIRED",
      `job ${id} of queue ${JSON.stringify(queue)} reached its worker ${lateMs} ms after its ` +
        `${leaseMs} ms lease had ended (the worker was stalled or the reply held up): handed back, ` +
        "its handler not started",
    );
    this.lateMs = lateMs;
  }
}

/**
 * A handler ran past its job's `timeoutMs`: the handler's `signal` was aborted with this error
 * and the attempt failed with it (retried by the backoff like any failure). A handler that
 * ignores its signal keeps running, but its slot is free and its result is not reported.
 */
export class TimeoutError extends EchoMQError {
  readonly jobId: string;
  readonly timeoutMs: number;
  constructor(jobId: string, timeoutMs: number) {
    super(
      "EMQ_TIMEOUT",
      `job ${jobId} ran past its timeout of ${timeoutMs} ms: its handler's signal was aborted`,
    );
    this.jobId = jobId;
    this.timeoutMs = timeoutMs;
  }
}

/** A handler returned a value that cannot be stored as a job's result; the attempt fails with it. */
export class InvalidResultError extends EchoMQError {
  constructor(reason: string, cause?: unknown) {
    super(
      "EMQ_INVALID_RESULT",
      `the handler's result cannot be stored: ${reason}. Return a string, bytes, or a JSON-serializable value.`,
      { cause },
    );
  }
}

/**
 * A batch handler (`Worker` option `batch`) returned something other than one entry per job: every
 * job of the batch fails its attempt with this error (retried under its attempts).
 */
export class InvalidBatchResultError extends EchoMQError {
  constructor(reason: string) {
    super(
      "EMQ_INVALID_BATCH_RESULT",
      `the batch handler's return cannot settle its jobs: ${reason}. Return nothing (every job completes), or an array with one entry per job, in order: its result, or failed(error) for a job that failed.`,
    );
  }
}

/** The backoff (option or function) gave no usable delay; the attempt was retried without one. */
export class InvalidBackoffError extends EchoMQError {
  constructor(reason: string, max: number, cause?: unknown) {
    super(
      "EMQ_INVALID_BACKOFF",
      `the backoff gave no usable delay (${reason}): the job was failed with no delay. A backoff must give 0 to ${max} ms.`,
      { cause },
    );
  }
}

/** An outbox entry that is not `<queue>` NUL `<id>` NUL `<id>` NUL `<outcome>` NUL `<value>`: dropped. */
export class InvalidOutboxEntryError extends EchoMQError {
  constructor(
    readonly queue: string,
    readonly entry: Buffer,
  ) {
    super(
      "EMQ_INVALID_OUTBOX_ENTRY",
      `queue ${queue}: an outbox entry is not <parent queue> NUL <parent id> NUL <child id> NUL <outcome> NUL <value> (${JSON.stringify(entry.subarray(0, 80).toString("latin1"))}); it was dropped. A child's parent field is written by add's parent option.`,
    );
  }
}

/**
 * A worker could not record its reaping bounds (`max_attempts`, `keep_dead`) in a lane's `meta`
 * for the node's own timers (often an ACL without `HSET` on the queue's keys). Not fatal: the
 * worker runs its own promote and reap loops for that lane instead, as on wire 4.
 */
export class ReapBoundsError extends EchoMQError {
  readonly lane: string;
  constructor(lane: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      "EMQ_REAP_BOUNDS",
      `could not record the reaping bounds in emq:{${lane}}:meta (${why}); this worker runs its own ` +
        "promote and reap loops for that lane (grant HSET on the queue's keys to leave them to the node)",
      { cause },
    );
    this.lane = lane;
  }
}

/**
 * Tracing was turned on (`tracing` of a `Queue` or a `Worker`) but `@opentelemetry/api` could not
 * be loaded: it is an optional peer dependency, installed by the application that wants traces.
 * `cause` is the loader's error.
 */
export class TracingUnavailableError extends EchoMQError {
  readonly specifier: string;
  constructor(specifier: string, cause: unknown) {
    super(
      "EMQ_TRACING_UNAVAILABLE",
      `tracing is on but ${specifier} could not be loaded: install it (npm install ${specifier}, ` +
        "and an OpenTelemetry SDK to export the spans), or turn tracing off",
      { cause },
    );
    this.specifier = specifier;
  }
}

/**
 * Job `jobId` was cancelled (`queue.cancel(id)`) while this worker ran it: the cancel ended its
 * lease at once and the job is dead with the error `cancelled`. The handler's `signal` is aborted
 * with this error at the worker's next heartbeat; whatever the handler returns or throws after
 * the cancel is not recorded (reported with the worker's `cancelled` event).
 */
export class JobCancelledError extends EchoMQError {
  readonly jobId: string;
  constructor(queue: string, jobId: string) {
    super(
      "EMQ_JOB_CANCELLED",
      `job ${jobId} of queue ${JSON.stringify(queue)} was cancelled while it ran: it is dead (error "cancelled"), ` +
        "its handler's signal aborted; what the handler returns now is not recorded",
    );
    this.jobId = jobId;
  }
}
