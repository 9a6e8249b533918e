/**
 * Every error EchoMQ throws is one of these classes. Each has a stable `code`, keeps the original
 * `cause`, and says what was wrong and what to do.
 */

export class EchoMQError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A queue name that would break the `emq:{q}:<type>` grammar (a brace or NUL), or not a string. */
export class InvalidQueueNameError extends EchoMQError {
  readonly queue: unknown;
  constructor(queue: unknown, rule: string) {
    super("EMQ_INVALID_QUEUE", `invalid queue name ${describe(queue)}: ${rule}`);
    this.queue = queue;
  }
}

/** An id that is not a branded id (`JOB` + 11 Base62 characters). */
export class InvalidIdError extends EchoMQError {
  readonly id: unknown;
  constructor(id: unknown, rule: string) {
    super("EMQ_INVALID_ID", `invalid job id ${describe(id)}: ${rule}`);
    this.id = id;
  }
}

/** A caller-supplied argument (lease, payload, option) of the wrong type or range. */
export class InvalidArgumentError extends EchoMQError {
  readonly argument: string;
  constructor(argument: string, message: string) {
    super("EMQ_INVALID_ARGUMENT", `invalid ${argument}: ${message}`);
    this.argument = argument;
  }
}

/**
 * The node's `{emq}:version` brand does not admit this connector. Fatal: the connector stops for
 * good and every pending call fails with this error. `got` is the value found (`"absent"` when
 * the key does not exist). On a cluster, `node` names the node (`host:port`) that refused: the
 * one whose role is wrong, or the one holding the cluster's intent record.
 */
export class VersionFenceError extends EchoMQError {
  readonly got: string;
  readonly expected: string;
  readonly detail: string | undefined;
  readonly node: string | undefined;
  constructor(expected: string, got: string, detail?: string, node?: string) {
    super(
      "EMQ_VERSION_FENCE",
      node === undefined
        ? `version fence: this connector needs a node branded ${expected}, found ${got}` +
            (detail ? ` (${detail})` : "") +
            ". A node serves one role: connect with the matching wire, or use another node."
        : `version fence at ${node}: this connector needs ${expected}, found ${got}` +
            (detail ? ` (${detail})` : "") +
            ". Every node of a cluster serves one role: load the echomq module on every node (wire 6) or on none (wire 4), and connect with the matching wire.",
    );
    this.expected = expected;
    this.got = got;
    this.detail = detail;
    this.node = node;
  }

  /** The same refusal, naming the node it happened at. */
  at(node: string): VersionFenceError {
    return new VersionFenceError(this.expected, this.got, this.detail, node);
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

/**
 * The connection could not carry a command. Retryable (`retryable`); `sent` says whether the
 * command may have been written:
 * * `sent: true` — it was sent and the connection dropped before its reply: it may or may not
 *   have run on the server, and it was not re-sent. Check the job's state before acting again;
 *   an add retried with the same `id` or `key` is exact (a duplicate writes nothing).
 * * `sent: false` — the server was unreachable (the connection was down and reconnecting, or
 *   the reconnect failed before the command went out): it was never sent, nothing was written,
 *   and it is safe to send again.
 */
export class ConnectionLostError extends EchoMQError {
  readonly sent: boolean;
  readonly retryable = true;
  constructor(cause?: unknown, sent = true, down?: string) {
    super(
      "EMQ_CONNECTION_LOST",
      sent
        ? "connection lost, outcome unknown: the command was sent and the connection dropped before its reply (it may have been written); it was not re-sent. Check before acting again: an add retried with the same id or key is exact"
        : `connection down, nothing written: ${down ?? "the server could not be reached"}, so the command was not sent. Send it again once the server is back`,
      { cause },
    );
    this.sent = sent;
  }
}

/**
 * The server refused the credentials (`WRONGPASS`, `NOAUTH`, an AUTH error). Fatal like a fence
 * refusal: the connection stops and every pending call fails with it. Check `username` /
 * `password` (or the URL's `user:password@`) against the server's ACL.
 */
export class AuthError extends EchoMQError {
  readonly reply: string;
  readonly host: string;
  readonly port: number;
  constructor(host: string, port: number, reply: string) {
    super(
      "EMQ_AUTH",
      `${AuthError.refused(host, port, reply)}: check connect()'s username and password options (or the URL's user:password@) against the server's ACL`,
    );
    this.reply = reply;
    this.host = host;
    this.port = port;
  }

  /** `valkey at host:port refused the credentials (<reply without its final period>)`. */
  static refused(host: string, port: number, reply: string): string {
    return `valkey at ${host}:${port} refused the credentials (${reply.replace(/\.+$/, "")})`;
  }
}

/** The server could not be reached (refused, timed out, or the connector was closed). */
export class ConnectionError extends EchoMQError {
  constructor(message: string, cause?: unknown) {
    super("EMQ_CONNECTION", message, { cause });
  }
}

/** The connection was closed (by `close()`): nothing more can be sent on it. */
export class ConnectionClosedError extends ConnectionError {
  override readonly code: string = "EMQ_CONNECTION_CLOSED";
  constructor(cause?: unknown) {
    super("the connection is closed: open a new one with connect()", cause);
  }
}

/** The server refused a transition (its reply text is the message; see docs/protocol.md). */
export class ServerError extends EchoMQError {
  readonly reply: string;
  constructor(reply: string, cause?: unknown) {
    super(serverCode(reply), reply, { cause });
    this.reply = reply;
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
 * `queue.obliterate()` refused (`ERR EMQ.OBLITERATE queue has active jobs`): a worker holds a
 * lease on one of the queue's jobs. Close the workers (or wait), or pass `{ force: true }` to
 * delete running jobs too (their workers then get `JobNotFoundError`/`LeaseLostError`). Jobs
 * deleted by earlier batches of the same call stay deleted.
 */
export class QueueActiveError extends ServerError {
  override readonly code: string = "EMQ_QUEUE_ACTIVE";
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

function serverCode(reply: string): string {
  const head = reply.split(" ", 1)[0] ?? "ERR";
  return `EMQ_SERVER_${head}`;
}

function describe(value: unknown): string {
  if (typeof value === "string") {
    if (value.length <= 80) return JSON.stringify(value);
    return `${JSON.stringify(value.slice(0, 40))}… (${value.length} characters)`;
  }
  if (value instanceof Uint8Array) return `<${value.length} bytes>`;
  return `(${value === null ? "null" : typeof value})`;
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

/**
 * A flow `FlowProducer.add` refuses for its shape, before anything is sent: a job id used twice
 * in one queue (the second would be a duplicate, and its parent would wait for it forever), a
 * node object used twice (a cycle, or a child shared by two parents), or more jobs than a flow
 * may hold. `argument` names the job (`flow.children[2]`, or `flow` for the bound).
 */
export class InvalidFlowError extends InvalidArgumentError {
  override readonly code: string = "EMQ_INVALID_FLOW";
}

/**
 * A value over its size bound (docs/protocol.md, "Value grammars": a payload or a result at most
 * 8 MiB, a progress value 64 KiB, a log line or an error text 16 KiB, each as the protocol data
 * declares): refused before it is sent, or by the server (`ERR EMQ.<VERB> <name> must be at most
 * <max> bytes`, then `reply` is its text and `bytes` is unknown). Nothing was written. Keep large
 * data elsewhere (a blob store, a table) and put a reference in the job.
 */
export class TooLargeError extends InvalidArgumentError {
  override readonly code: string = "EMQ_TOO_LARGE";
  /** The value's size in bytes (`undefined` when the server refused it). */
  readonly bytes: number | undefined;
  /** Its bound, in bytes. */
  readonly maxBytes: number;
  /** The server's refusal, when the server refused it. */
  readonly reply: string | undefined;
  constructor(
    argument: string,
    bytes: number | undefined,
    maxBytes: number,
    reply?: string,
    cause?: unknown,
  ) {
    super(
      argument,
      `${bytes === undefined ? `the server refused it (${reply})` : `${bytes} bytes`}, over its bound of ` +
        `${maxBytes} bytes: nothing was written. Keep large data elsewhere and pass a reference`,
    );
    if (cause !== undefined) this.cause = cause;
    this.bytes = bytes;
    this.maxBytes = maxBytes;
    this.reply = reply;
  }
}

const TOO_LARGE = /^ERR EMQ\.[A-Z]+ (.+) must be at most (\d+) bytes$/;

/** The typed error for a size-bound refusal of the server, or `null` for any other reply. */
export function tooLargeRefusal(reply: string, cause: unknown): TooLargeError | null {
  const match = TOO_LARGE.exec(reply);
  return match ? new TooLargeError(match[1] ?? "value", undefined, Number(match[2]), reply, cause) : null;
}

/**
 * The endpoint answered, but not in RESP: it is not a Valkey server (an HTTP server, a TLS port
 * dialled without `tls`, another service). Fatal like a fence refusal: no reconnect can fix it.
 * `sent` is the start of what it sent (printable ASCII, at most 60 characters).
 */
export class NotValkeyError extends ConnectionError {
  override readonly code: string = "EMQ_NOT_VALKEY";
  readonly address: string;
  readonly sent: string;
  constructor(address: string, sent: string, cause?: unknown) {
    super(
      `the server at ${address} did not answer as Valkey (it sent ${JSON.stringify(sent)}): check the host and port (and tls)`,
      cause,
    );
    this.address = address;
    this.sent = sent;
  }
}

/**
 * `connect()` found no server it could reach: refused, reset, or no answer within
 * `connectTimeoutMs`, on every try (`tries`; more than one with `waitForServerMs`). The message
 * says what happened, where, and how long it took. Start the server, check host and port, or
 * pass `waitForServerMs` to wait for a server that is still starting.
 */
export class ServerUnreachableError extends ConnectionError {
  override readonly code: string = "EMQ_UNREACHABLE";
  /** `host:port` (on a cluster: the seeds, comma-separated). */
  readonly address: string;
  readonly cluster: boolean;
  /** What happened on the last try: refused, reset, no answer within `connectTimeoutMs`, … */
  readonly reason: string;
  readonly tries: number;
  readonly elapsedMs: number;
  constructor(
    address: string,
    what: string,
    tries: number,
    elapsedMs: number,
    cause?: unknown,
    cluster = false,
  ) {
    super(
      `cannot reach ${cluster ? "the valkey cluster" : "valkey"} at ${address}: ${what}; ${tries === 1 ? "tried once" : `tried ${tries} times`} in ${elapsedMs} ms. ` +
        "Is the server running there? connect({ waitForServerMs }) waits for one that is still starting",
      cause,
    );
    this.cluster = cluster;
    this.address = address;
    this.reason = what;
    this.tries = tries;
    this.elapsedMs = elapsedMs;
  }
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

/** A read that outlived its bound: the connection is taken as lost. */
export class WatchdogError extends EchoMQError {
  constructor(what: string, ms: number) {
    super("EMQ_WATCHDOG", `${what} got no reply within ${ms} ms: the reader reconnects`);
  }
}

/** The command line is wrong: unknown command or option, a missing or malformed argument. */
export class UsageError extends EchoMQError {
  constructor(
    message: string,
    /** The command whose usage to show (`--help` names it). */
    readonly command?: string,
  ) {
    super("EMQ_CLI_USAGE", message);
  }
}

/** An operation that found nothing to act on (`job <queue> <id>` of no such job). */
export class NotFoundError extends EchoMQError {
  constructor(message: string) {
    super("EMQ_CLI_NOT_FOUND", message);
  }
}
