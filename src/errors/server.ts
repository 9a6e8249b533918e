/**
 * The server's refusals of a transition, typed by its gates (lease, row, the operator verbs'),
 * a full node, a blocking claim the server ended, a call the connection's wire cannot carry, and
 * a durability wait that fell short.
 */

import { tooLargeRefusal } from "./arguments.js";
import { EchoMQError } from "./base.js";

/** The server refused a transition (its reply text is the message; see docs/protocol.md). */
export class ServerError extends EchoMQError {
  readonly reply: string;
  constructor(reply: string, cause?: unknown) {
    super(serverCode(reply), reply, { cause });
    this.reply = reply;
  }
}

function serverCode(reply: string): string {
  const head = reply.split(" ", 1)[0] ?? "ERR";
  return `EMQ_SERVER_${head}`;
}

/**
 * The lease gate refused (`ERR EMQ.<VERB> job is not active` or `… stale lease token`): this
 * worker's lease was reaped (and perhaps claimed again by another worker). It can change nothing
 * about the job any more; drop it. The message is the server's text.
 */
export class LeaseLostError extends ServerError {
  override readonly code: string = "EMQ_LEASE_LOST";
  /** `not active` (the job left `active`) or `stale token` (it was claimed again since). */
  readonly reason: "not active" | "stale token";
  constructor(reply: string, cause?: unknown) {
    super(reply, cause);
    this.reason = reply.endsWith("stale lease token") ? "stale token" : "not active";
  }
}

/** The row gate refused (`ERR EMQ.<VERB> job not found`): no job row under that id. */
export class JobNotFoundError extends ServerError {
  override readonly code: string = "EMQ_JOB_NOT_FOUND";
}

/**
 * The node is over its `maxmemory` and refused an admission (`enqueue`, `add`, `addBulk`,
 * `retry`) before it ran: nothing was written. The message is the server's exact text. Drains
 * (claim, complete, fail, promote, reap, …) keep running on a full node, so workers empty it;
 * retry the admission once memory is freed, or raise `maxmemory`.
 */
export class OutOfMemoryError extends ServerError {
  override readonly code: string = "EMQ_OOM";
}

/**
 * `queue.promote(id)` found the job but not waiting in `schedule` (`ERR EMQ.EXPEDITE job is not
 * scheduled`): it is already pending, running or finished. Nothing was written.
 */
export class JobNotScheduledError extends ServerError {
  override readonly code: string = "EMQ_JOB_NOT_SCHEDULED";
}

/**
 * `queue.retry(id)` found the job but not dead (`ERR EMQ.RETRY job is not dead`): only a dead
 * job can be retried. Nothing was written.
 */
export class JobNotDeadError extends ServerError {
  override readonly code: string = "EMQ_JOB_NOT_DEAD";
}

/**
 * `queue.remove(id)` found the job active (`ERR EMQ.REMOVE job is active`): a worker holds its
 * lease. Nothing was written; remove it once it has finished.
 */
export class JobActiveError extends ServerError {
  override readonly code: string = "EMQ_JOB_ACTIVE";
}

/**
 * `queue.obliterate()` refused (`ERR EMQ.OBLITERATE queue has active jobs`): a worker holds a
 * lease on one of the queue's jobs. Close the workers (or wait), or pass `{ force: true }` to
 * delete running jobs too (their workers then get `JobNotFoundError`/`LeaseLostError`). Jobs
 * deleted by earlier batches of the same call stay deleted.
 */
export class QueueActiveError extends ServerError {
  override readonly code: string = "EMQ_QUEUE_ACTIVE";
}

const SERVER_REFUSAL =
  /^ERR EMQ\.[A-Z]+ (job is not active|stale lease token|job not found|job is not scheduled|job is not dead|job is active|queue has active jobs)$/;

/**
 * The typed error for a server refusal: `OutOfMemoryError` for a reply starting `OOM `,
 * `LeaseLostError` for the lease gate, `JobNotFoundError` for the row gate, `JobNotScheduledError`,
 * `JobNotDeadError`, `JobActiveError` and `QueueActiveError` for the operator verbs' gates,
 * `TooLargeError` for a size bound, else `ServerError`. The message is the server's exact text
 * (`TooLargeError`'s quotes it, in `reply`). An error that is not a plain `ServerError` is
 * returned as it is.
 */
export function typedServerError(err: unknown): unknown {
  if (!(err instanceof ServerError) || err.constructor !== ServerError) return err;
  const cause = err.cause ?? err;
  if (err.reply.startsWith("OOM ")) return new OutOfMemoryError(err.reply, cause);
  const match = SERVER_REFUSAL.exec(err.reply);
  if (!match) return tooLargeRefusal(err.reply, cause) ?? err;
  switch (match[1]) {
    case "job not found":
      return new JobNotFoundError(err.reply, cause);
    case "job is not scheduled":
      return new JobNotScheduledError(err.reply, cause);
    case "queue has active jobs":
      return new QueueActiveError(err.reply, cause);
    case "job is not dead":
      return new JobNotDeadError(err.reply, cause);
    case "job is active":
      return new JobActiveError(err.reply, cause);
    default:
      return new LeaseLostError(err.reply, cause);
  }
}

/**
 * The server ended a blocking claim (`EMQ.BCLAIM`) before a job or its timeout: the node turned
 * replica (`UNBLOCKED …`, after which the server closes the connection), or on a cluster the
 * queue's slot is served elsewhere now (`MOVED …`) or the cluster is down (`CLUSTERDOWN …`).
 * Nothing was claimed. It passes with time: claim again where the queue is served now (a worker
 * does, after a short backoff).
 */
export class WaitInterruptedError extends ServerError {
  override readonly code: string = "EMQ_WAIT_INTERRUPTED";
  /** `unblocked` (the node turned replica), `moved` (the slot moved), `clusterdown`. */
  readonly reason: "unblocked" | "moved" | "clusterdown";
  constructor(reply: string, cause?: unknown) {
    super(reply, cause);
    this.reason = reply.startsWith("UNBLOCKED")
      ? "unblocked"
      : reply.startsWith("MOVED")
        ? "moved"
        : "clusterdown";
    this.message = `the blocking claim was ended by the server (${this.reason}): ${reply}. Nothing was claimed; claim again where the queue is served now`;
  }
}

/** The replies with which the server ends a blocking command early (see `WaitInterruptedError`). */
export const WAIT_ENDED = /^(UNBLOCKED|MOVED|CLUSTERDOWN)\b/;

/** A wire-6 connector refused a script that declares neither a native verb nor `read`. */
export class WireRefusalError extends EchoMQError {
  constructor(script: string) {
    super(
      "EMQ_WIRE_REFUSED",
      `script ${script} declares no native verb and is not a read: wire 6 refuses to send a Lua write to a module node`,
    );
  }
}

/**
 * A verb only the native module runs (`RESCHEDULE`) was called on wire 4. The message says what
 * to do instead.
 */
export class NativeOnlyVerbError extends WireRefusalError {
  override readonly code: string = "EMQ_NATIVE_ONLY";
  readonly verb: string;
  constructor(verb: string, instead: string) {
    super(verb.toLowerCase());
    this.verb = verb;
    this.message = `EMQ.${verb} is native-only: wire 4 has no script for it. ${instead}`;
  }
}

/**
 * A `durability` wait after an add timed out or fell short (or could not run): the job(s) exist
 * on the primary — they were added and will run — but are not known to be on as many replicas
 * or AOFs as asked, so a failover or crash in this window may lose them. `ids` are the jobs the
 * wait covered. Check the replicas (`INFO replication`) and AOF settings, raise `timeoutMs`, or
 * ask for less.
 */
export class DurabilityError extends EchoMQError {
  readonly ids: readonly string[];
  constructor(ids: readonly string[], what: string, cause?: unknown) {
    super(
      "EMQ_DURABILITY",
      `durability not reached for ${ids.length === 1 ? `job ${ids[0]}` : `${ids.length} jobs (${ids.slice(0, 3).join(", ")}${ids.length > 3 ? ", …" : ""})`}: ${what}. ` +
        "The job exists on the primary but is not known to be safe: check the replicas (INFO replication) and AOF, raise timeoutMs, or ask for less.",
      { cause },
    );
    this.ids = ids;
  }
}
