/**
 * The spans of a job's consumption by a worker with `tracing` on: `claim <queue>` (receive,
 * CLIENT) once a claim brought the job, `process <queue>` (CONSUMER, a child of the claim) around
 * the handler, and `complete <queue>` / `fail <queue>` (settle, CLIENT, children of the process
 * span). The claim and the process span link to the job's creation context — the `create` span
 * of the producer, read from the row's `trace` field (one `HGET` per claimed job whose
 * consumption is traced: only when the claim span records), so a trace viewer leads from the
 * job's consumption to where it was added. A consumption sampled out costs one span start.
 */
import type { Connection } from "../connector/connection.js";
import { jobKey } from "../keyspace.js";
import type { CheckedTracing } from "./tracing-option.js";
import {
  type Api,
  type Attributes,
  type Loaded,
  load,
  messaging,
  recordError,
  type Span,
  type SpanContext,
  spanContextOf,
} from "./tracing.js";

/**
 * How a job's settle ended, as the worker saw it: completed; failed into `pending`, `scheduled`
 * or `dead`; `landed` (a repeat found the first send had landed); the lease lost; handed back on
 * close; or `unsettled` (an error, or the lease ran out while retrying: the reaper takes it back).
 */
export type Settled =
  | "completed"
  | "pending"
  | "scheduled"
  | "dead"
  | "landed"
  | "lease-lost"
  | "handed-back"
  | "unsettled";

/** What a job claimed by this worker carries into its spans. */
interface ClaimedFor {
  id: string;
  payload: Buffer;
  attempts: number;
}

/** The worker's tracing: the API once loaded, and the spans of each job it claims. */
export class ConsumerSpans {
  /** Resolves when the API is loaded; rejects with `TracingUnavailableError` when it cannot be. */
  readonly ready: Promise<Loaded>;
  private loaded: Loaded | undefined;

  constructor(
    private readonly queue: string,
    checked: CheckedTracing,
  ) {
    this.ready = load(checked).then((loaded) => (this.loaded = loaded));
    this.ready.catch(() => {});
  }

  /**
   * A claim (sent at `claimedAt`, ms since the epoch) brought `job` from `lane`: records the
   * `claim` span and starts `process`, both linked to the job's creation context (a failed read
   * of it only costs the link). A claim span that does not record — the consumption sampled out,
   * or a tracer without an SDK — ends there: no read, no process or settle span (`undefined`; the
   * job runs untraced, as its trace would drop them anyway).
   */
  async received(
    conn: Connection,
    lane: string,
    job: ClaimedFor,
    claimedAt: number,
  ): Promise<JobSpans | undefined> {
    const loaded = this.loaded ?? (await this.ready);
    const { api: otel, tracer } = loaded;
    const base = (type: "receive" | "process", name: string): Attributes => ({
      ...messaging(this.queue, lane, type, name, conn.wire),
      "messaging.message.id": job.id,
      "echomq.attempt": job.attempts,
    });
    const receive = tracer.startSpan(
      `claim ${this.queue}`,
      { kind: otel.SpanKind.CLIENT, attributes: base("receive", "claim"), startTime: claimedAt },
      // A root: the worker's loops carry whatever context was active when it was made.
      otel.ROOT_CONTEXT,
    );
    if (!receive.isRecording()) {
      receive.end();
      return undefined;
    }
    const created = await creation(otel, conn, lane, job.id);
    const links = created ? [{ context: created }] : [];
    if (created && typeof receive.addLink === "function") receive.addLink({ context: created });
    receive.end();
    const process = tracer.startSpan(
      `process ${this.queue}`,
      {
        kind: otel.SpanKind.CONSUMER,
        attributes: { ...base("process", "process"), "messaging.message.body.size": job.payload.length },
        links,
      },
      otel.trace.setSpan(otel.ROOT_CONTEXT, receive),
    );
    return new JobSpans(otel, loaded, this.queue, lane, job.id, conn.wire, process);
  }
}

/** The creation context a job's row carries (`HGET <row> trace`), if any; a failed read is none. */
async function creation(
  otel: Api,
  conn: Connection,
  lane: string,
  id: string,
): Promise<SpanContext | undefined> {
  try {
    const stored = await conn.send("HGET", [jobKey(lane, id), "trace"]);
    return stored == null ? undefined : spanContextOf(otel, String(stored));
  } catch {
    return undefined; // the job runs all the same; its spans lack the link
  }
}

/** One claimed job's `process` span and, when it settles, its `settle` span. */
class JobSpans {
  constructor(
    private readonly otel: Api,
    private readonly loaded: Loaded,
    private readonly queue: string,
    private readonly lane: string,
    private readonly id: string,
    private readonly wire: number,
    private readonly process: Span,
  ) {}

  /** Runs the handler inside the `process` span (its spans are children of it); records a throw. */
  async run<T>(handler: () => T): Promise<Awaited<T>> {
    const ctx = this.otel.trace.setSpan(this.otel.ROOT_CONTEXT, this.process);
    try {
      return await this.otel.context.with(ctx, handler);
    } catch (error) {
      recordError(this.otel, this.process, error);
      throw error;
    }
  }

  /**
   * Records the job's settle — `complete` or `fail` (a result that cannot be stored turns a
   * `complete` into a `fail`) — as a child of `process`, then ends both; the outcome goes on each
   * as `echomq.outcome`. A settle that did not land (lease lost, an error) has status ERROR.
   */
  async settle(op: "complete" | "fail", settle: () => Promise<Settled>): Promise<Settled> {
    const { otel, loaded } = this;
    const span = loaded.tracer.startSpan(
      `${op} ${this.queue}`,
      {
        kind: otel.SpanKind.CLIENT,
        attributes: {
          ...messaging(this.queue, this.lane, "settle", op, this.wire),
          "messaging.message.id": this.id,
        },
      },
      otel.trace.setSpan(otel.ROOT_CONTEXT, this.process),
    );
    let settled: Settled = "unsettled";
    try {
      settled = await settle();
      return settled;
    } finally {
      if (op === "complete" && (settled === "pending" || settled === "scheduled" || settled === "dead")) {
        span.updateName(`fail ${this.queue}`);
        span.setAttribute("messaging.operation.name", "fail");
      }
      if (settled === "lease-lost" || settled === "unsettled") {
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: `the job was not settled (${settled})` });
      }
      const outcome = settled === "pending" || settled === "scheduled" ? "retrying" : settled;
      span.setAttribute("echomq.outcome", outcome);
      this.process.setAttribute("echomq.outcome", outcome);
      span.end();
      this.process.end();
    }
  }

  /** Ends `process` for a job that did not run here (handed back on close before it started). */
  end(outcome: Settled): void {
    this.process.setAttribute("echomq.outcome", outcome);
    this.process.end();
  }
}
