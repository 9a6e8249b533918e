/**
 * OpenTelemetry traces, optional. `@opentelemetry/api` is an optional peer dependency: nothing
 * here loads it until a `Queue` or a `Worker` is made with `tracing` on, and then once per
 * process (a cached dynamic `import()`); when it is absent, the first traced call rejects with
 * `TracingUnavailableError`. The spans follow the OpenTelemetry messaging conventions: span name
 * `<operation name> <queue>`, `messaging.system = "echomq"`, the queue as
 * `messaging.destination.name` (a lane as `echomq.lane`), `messaging.operation.type` and
 * `.name`, `messaging.message.id`, plus `echomq.*` extras. The spans of a job's consumption are
 * made in `consumer-spans.ts`; this file loads the API and makes the producer's.
 */
import type * as Otel from "@opentelemetry/api";
import { TracingUnavailableError } from "../errors.js";
import { formatTraceContext, parseTraceContext } from "./trace-context.js";
import type { CheckedTracing } from "./tracing-option.js";

export type Api = typeof Otel;
export type Span = Otel.Span;
export type SpanContext = Otel.SpanContext;
export type Attributes = Otel.Attributes;

/** What a traced `Queue` or `Worker` uses: the API and its tracer. */
export interface Loaded {
  api: Api;
  tracer: Otel.Tracer;
}

const API_PACKAGE = "@opentelemetry/api";
/** The tracer `tracing: true` takes from the global provider: this package, at its version. */
const TRACER_NAME = "echomq";
const TRACER_VERSION = "0.1.0";

let api: Promise<Api> | undefined;

/** `@opentelemetry/api`, imported once; `TracingUnavailableError` when it cannot be. */
function loadApi(): Promise<Api> {
  api ??= importApi(API_PACKAGE);
  return api;
}

/** Imports the OpenTelemetry API; any failure is `TracingUnavailableError`, its cause kept. */
async function importApi(specifier: string): Promise<Api> {
  try {
    const mod = (await import(specifier)) as Api & { default?: Api };
    return typeof mod.trace?.getTracer === "function" ? mod : (mod.default as Api);
  } catch (cause) {
    throw new TracingUnavailableError(specifier, cause);
  }
}

/** Loads the API for a checked option; the promise is handled, so an absent API waits for a use. */
export function load(checked: CheckedTracing): Promise<Loaded> {
  const loaded = loadApi().then((otel) => ({
    api: otel,
    tracer: (checked.tracer as Otel.Tracer | undefined) ?? otel.trace.getTracer(TRACER_NAME, TRACER_VERSION),
  }));
  loaded.catch(() => {});
  return loaded;
}

/** The attributes every span of a queue's job carries. */
export function messaging(
  queue: string,
  lane: string,
  type: "create" | "receive" | "process" | "settle",
  name: string,
  wire: number,
): Attributes {
  const attributes: Attributes = {
    "messaging.system": "echomq",
    "messaging.destination.name": queue,
    "messaging.operation.type": type,
    "messaging.operation.name": name,
    "echomq.wire": wire,
  };
  if (lane !== queue) attributes["echomq.lane"] = lane;
  return attributes;
}

/** Records `error` on `span`: an `exception` event and status ERROR. */
export function recordError(otel: Api, span: Span, error: unknown): void {
  const err = error instanceof Error ? error : new Error(String(error));
  span.recordException(err);
  span.setStatus({ code: otel.SpanStatusCode.ERROR, message: err.message });
}

/** The trace context a span's job carries (`""` for a span of a no-op tracer: nothing to carry). */
function contextOf(otel: Api, span: Span): string {
  const ctx = span.spanContext();
  if (!otel.trace.isSpanContextValid(ctx)) return "";
  const parent = { traceId: ctx.traceId, spanId: ctx.spanId, traceFlags: ctx.traceFlags };
  const state = ctx.traceState?.serialize();
  return formatTraceContext(state ? { ...parent, traceState: state } : parent);
}

/** The span context a job's trace context names (remote), or undefined. */
export function spanContextOf(otel: Api, trace: string): Otel.SpanContext | undefined {
  const parent = parseTraceContext(trace);
  if (!parent) return undefined;
  const ctx: Otel.SpanContext = {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.traceFlags,
    isRemote: true,
  };
  if (parent.traceState) ctx.traceState = otel.createTraceState(parent.traceState);
  return ctx;
}

/** An add's result, as the producer's spans read it. */
interface Added {
  id: string;
  duplicate: boolean;
}

/**
 * The producer's spans: one `create` span (PRODUCER, `add <queue>`) per job added, its context
 * carried in the job (`AddOptions.trace`), ended when the add's reply came back.
 */
export class ProducerSpans {
  private readonly ready: Promise<Loaded>;

  constructor(
    private readonly queue: string,
    checked: CheckedTracing,
  ) {
    this.ready = load(checked);
  }

  /** Adds `count` jobs through `send`, which gets each job's trace context, each in a span. */
  async many<R extends Added>(
    lane: string,
    wire: number,
    count: number,
    send: (traces: string[]) => Promise<R[]>,
  ): Promise<R[]> {
    const { api: otel, tracer } = await this.ready;
    const options: Otel.SpanOptions = {
      kind: otel.SpanKind.PRODUCER,
      attributes: messaging(this.queue, lane, "create", "add", wire),
    };
    const parent = otel.context.active();
    const spans = Array.from({ length: count }, () => tracer.startSpan(`add ${this.queue}`, options, parent));
    try {
      const results = await send(spans.map((span) => contextOf(otel, span)));
      results.forEach((added, i) => {
        spans[i]?.setAttributes({
          "messaging.message.id": added.id,
          "echomq.outcome": added.duplicate ? "duplicate" : "added",
        });
      });
      return results;
    } catch (error) {
      for (const span of spans) recordError(otel, span, error);
      throw error;
    } finally {
      for (const span of spans) span.end();
    }
  }

  /** Adds one job through `send`, in a span. */
  async one<R extends Added>(lane: string, wire: number, send: (trace: string) => Promise<R>): Promise<R> {
    const [added] = await this.many(lane, wire, 1, async ([trace]) => [await send(trace ?? "")]);
    return added as R;
  }
}
