/**
 * OpenTelemetry traces (`tracing` of a Queue and a Worker), on both wires, with the SDK's
 * in-memory exporter: span names, kinds and attributes of `create`, `receive`, `process` and
 * `settle`; the trace context a job carries (its row's `trace`) and the link from `process` to
 * `create` across processes; a failure recorded on the span; nothing traced when tracing is off;
 * a bad trace refused by the host; and, in a process without `@opentelemetry/api`, nothing
 * loaded until tracing is on, then `TracingUnavailableError`.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, beforeEach, describe, test } from "node:test";
import { promisify } from "node:util";
import { context, type Link, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { connect, InvalidArgumentError, Queue, Worker } from "../src/index.js";
import { jobKey } from "../src/protocol.js";
import { monitor } from "./support/monitor.js";
import { forEachWire } from "./support/wires.js";
import { startValkey, type ValkeyServer } from "./support/valkey.js";
import { until } from "./support/until.js";

const run = promisify(execFile);

/** A tracer provider of its own, exporting to memory. */
function memoryTracer(name: string) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer(name) };
}

const named = (spans: readonly ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const one = (spans: readonly ReadableSpan[], name: string) => {
  const found = named(spans, name);
  assert.equal(found.length, 1, `one span ${name}, got ${spans.map((s) => s.name).join(", ")}`);
  return found[0]!;
};
const traceparent = (span: ReadableSpan) =>
  `00-${span.spanContext().traceId}-${span.spanContext().spanId}-0${span.spanContext().traceFlags}`;

/** Waits until `exporter` holds a span named `name` (settle spans end after the job's event). */
async function spansWith(exporter: InMemorySpanExporter, name: string, count = 1): Promise<ReadableSpan[]> {
  await until(
    () => `${count}× ${name}, got ${exporter.getFinishedSpans().map((s) => s.name)}`,
    () => named(exporter.getFinishedSpans(), name).length >= count,
  );
  return exporter.getFinishedSpans();
}

/** Runs a worker on `queue` until `n` jobs settled, then closes it. */
async function work(queue: Queue, handler: () => unknown, n: number, tracing?: unknown): Promise<void> {
  let settled = 0;
  await new Promise<void>((resolve, reject) => {
    const worker = new Worker(queue, handler, {
      leaseMs: 5000,
      attempts: 2,
      backoff: () => 0,
      ...(tracing === undefined ? {} : { tracing: tracing as { tracer: never } }),
    });
    const done = () => {
      settled += 1;
      if (settled === n) void worker.close().then(resolve, reject);
    };
    worker.on("completed", done);
    worker.on("failed", done);
    worker.on("error", reject);
  });
}

forEachWire("tracing", (ctx) => {
  test("add and addBulk: one create span per job (PRODUCER, add <queue>), its context on the row", async () => {
    const { conn, server, wire } = ctx();
    const { exporter, tracer } = memoryTracer("producer");
    const queue = new Queue("tq", conn, { tracing: { tracer } });
    const { id } = await queue.add("one");
    const bulk = await queue.addBulk([
      { payload: "a" },
      { payload: "b", opts: { priority: 2 } },
      { payload: "c" },
    ]);
    const again = await queue.add("dup", { id });
    assert.equal(again.duplicate, true);
    const spans = named(exporter.getFinishedSpans(), "add tq");
    assert.equal(spans.length, 5);
    for (const span of spans) {
      assert.equal(span.kind, SpanKind.PRODUCER);
      assert.equal(span.attributes["messaging.system"], "echomq");
      assert.equal(span.attributes["messaging.destination.name"], "tq");
      assert.equal(span.attributes["messaging.operation.type"], "create");
      assert.equal(span.attributes["messaging.operation.name"], "add");
      assert.equal(span.attributes["echomq.wire"], wire);
      assert.equal(span.attributes["echomq.lane"], undefined);
    }
    const ids = [id, ...bulk.map((r) => r.id)];
    for (const [i, jobId] of ids.entries()) {
      const span = spans[i]!;
      assert.equal(span.attributes["messaging.message.id"], jobId);
      assert.equal(span.attributes["echomq.outcome"], "added");
      assert.equal(await server.cli("HGET", jobKey("tq", jobId), "trace"), traceparent(span));
    }
    assert.equal(new Set(spans.map((s) => s.spanContext().spanId)).size, 5);
    assert.equal(spans[4]!.attributes["echomq.outcome"], "duplicate");
    assert.equal((await queue.getJob(id))?.trace, traceparent(spans[0]!));
  });

  test("a worker's spans: claim (CLIENT) → process (CONSUMER, linked to create in another process) → complete", async () => {
    const { server, wire } = ctx();
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "test/fixtures/traced-add.ts", String(server.port), String(wire), "far"],
      { timeout: 30_000 },
    );
    const produced = JSON.parse(stdout) as {
      id: string;
      spans: { name: string; kind: number; traceId: string; spanId: string }[];
    };
    const create = produced.spans[0]!;
    assert.equal(create.name, "add far");
    assert.equal(create.kind, SpanKind.PRODUCER);

    const conn = await connect({ port: server.port, wire });
    try {
      const { exporter, tracer } = memoryTracer("worker");
      await work(new Queue("far", conn), () => "ok", 1, { tracer });
      const spans = await spansWith(exporter, "complete far");
      const claim = one(spans, "claim far");
      const processed = one(spans, "process far");
      const settle = one(spans, "complete far");
      const link = (span: ReadableSpan): Link => {
        assert.equal(span.links.length, 1, span.name);
        return span.links[0]!;
      };
      for (const span of [claim, processed]) {
        assert.equal(link(span).context.traceId, create.traceId);
        assert.equal(link(span).context.spanId, create.spanId);
        assert.equal(span.attributes["messaging.message.id"], produced.id);
        assert.equal(span.attributes["echomq.attempt"], 1);
        assert.equal(span.attributes["messaging.destination.name"], "far");
        assert.equal(span.attributes["messaging.system"], "echomq");
        assert.equal(span.attributes["echomq.wire"], wire);
      }
      assert.equal(claim.kind, SpanKind.CLIENT);
      assert.equal(claim.attributes["messaging.operation.type"], "receive");
      assert.equal(claim.attributes["messaging.operation.name"], "claim");
      assert.equal(processed.kind, SpanKind.CONSUMER);
      assert.equal(processed.attributes["messaging.operation.type"], "process");
      assert.equal(processed.attributes["messaging.message.body.size"], "from another process".length);
      assert.equal(processed.attributes["echomq.outcome"], "completed");
      assert.equal(processed.parentSpanContext?.spanId, claim.spanContext().spanId);
      assert.equal(processed.status.code, SpanStatusCode.UNSET);
      assert.equal(settle.kind, SpanKind.CLIENT);
      assert.equal(settle.attributes["messaging.operation.type"], "settle");
      assert.equal(settle.attributes["messaging.operation.name"], "complete");
      assert.equal(settle.attributes["echomq.outcome"], "completed");
      assert.equal(settle.parentSpanContext?.spanId, processed.spanContext().spanId);
      assert.equal(settle.spanContext().traceId, processed.spanContext().traceId);
    } finally {
      await conn.close();
    }
  });

  test("a failing handler: the error on the process span (status ERROR, exception event); fail spans", async () => {
    const { conn } = ctx();
    const { exporter, tracer } = memoryTracer("both");
    const queue = new Queue("boom", conn, { tracing: { tracer } });
    await queue.add("x");
    await work(
      queue,
      () => {
        throw new TypeError("it broke");
      },
      2,
      { tracer },
    );
    const spans = await spansWith(exporter, "fail boom", 2);
    const processes = named(spans, "process boom");
    assert.equal(processes.length, 2);
    for (const span of processes) {
      assert.equal(span.status.code, SpanStatusCode.ERROR);
      assert.equal(span.status.message, "it broke");
      const event = span.events.find((e) => e.name === "exception");
      assert.ok(event, "an exception event");
      assert.equal(event.attributes?.["exception.type"], "TypeError");
      assert.equal(event.attributes?.["exception.message"], "it broke");
    }
    const outcomes = named(spans, "fail boom").map((s) => s.attributes["echomq.outcome"]);
    assert.deepEqual(outcomes, ["retrying", "dead"]);
    assert.deepEqual(
      processes.map((s) => s.attributes["echomq.attempt"]),
      [1, 2],
    );
    const create = one(spans, "add boom");
    for (const span of processes) assert.equal(span.links[0]?.context.spanId, create.spanContext().spanId);
  });

  test("a laned queue: the queue is the destination, the lane echomq.lane", async () => {
    const { conn, server } = ctx();
    const { exporter, tracer } = memoryTracer("lanes");
    const queue = new Queue("wide", conn, { lanes: 2, tracing: { tracer } });
    const added = await queue.addBulk([{ payload: "a" }, { payload: "b" }]);
    await work(queue, () => {}, 2, { tracer });
    const spans = await spansWith(exporter, "complete wide", 2);
    const lanes = new Set<unknown>();
    for (const span of spans) {
      assert.equal(span.attributes["messaging.destination.name"], "wide");
      assert.ok(String(span.attributes["echomq.lane"]).startsWith("wide"), span.name);
      lanes.add(span.attributes["echomq.lane"]);
    }
    assert.equal(lanes.size, 2);
    assert.equal(named(spans, "add wide").length, 2);
    assert.equal(named(spans, "process wide").length, 2);
    for (const { id } of added) assert.equal(await server.cli("EXISTS", jobKey("wide", id)), 0);
  });

  test("the trace context is read (one HGET) only for a consumption that records: not when sampled out", async () => {
    const { conn, server } = ctx();
    const { tracer } = memoryTracer("producer");
    const queue = new Queue("sampled", conn, { tracing: { tracer } });
    await queue.add("a");
    const hgets = (args: string[][]) =>
      args.filter((a) => a[0]?.toUpperCase() === "HGET" && a[2] === "trace");
    const off = new InMemorySpanExporter();
    const sampledOut = new BasicTracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new SimpleSpanProcessor(off)],
    }).getTracer("worker");
    let mon = await monitor(server.port);
    await work(new Queue("sampled", conn), () => {}, 1, { tracer: sampledOut });
    assert.deepEqual(hgets(mon.commands()), []);
    assert.equal(off.getFinishedSpans().length, 0);
    await mon.stop();
    await queue.add("b");
    const { exporter, tracer: recording } = memoryTracer("worker");
    mon = await monitor(server.port);
    await work(new Queue("sampled", conn), () => {}, 1, { tracer: recording });
    assert.equal(hgets(mon.commands()).length, 1);
    await mon.stop();
    await spansWith(exporter, "complete sampled");
  });

  test("with a context manager: create is the caller's span's child, the handler's spans are process's", async () => {
    const { conn } = ctx();
    const { exporter, tracer } = memoryTracer("nested");
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    try {
      const queue = new Queue("nest", conn, { tracing: { tracer } });
      await tracer.startActiveSpan("request", async (request) => {
        await queue.add("x");
        request.end();
      });
      // A worker made inside a span: its jobs' spans are not that span's children.
      await tracer.startActiveSpan("setup", async (setup) => {
        await work(
          queue,
          async () => {
            await new Promise((r) => setTimeout(r, 1));
            tracer.startSpan("send email").end();
          },
          1,
          { tracer },
        );
        setup.end();
      });
      const spans = await spansWith(exporter, "complete nest");
      const request = one(spans, "request");
      const create = one(spans, "add nest");
      assert.equal(create.parentSpanContext?.spanId, request.spanContext().spanId);
      assert.equal(create.spanContext().traceId, request.spanContext().traceId);
      const processed = one(spans, "process nest");
      const inner = one(spans, "send email");
      assert.equal(one(spans, "claim nest").parentSpanContext, undefined);
      assert.equal(inner.parentSpanContext?.spanId, processed.spanContext().spanId);
      assert.equal(processed.links[0]?.context.spanId, create.spanContext().spanId);
    } finally {
      context.disable();
    }
  });

  test("tracing off: no span, no trace on the row; tracing: true takes the global tracer; a bad trace is refused", async () => {
    const { conn, server } = ctx();
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    try {
      const queue = new Queue("quiet", conn);
      const { id } = await queue.add("x");
      await work(queue, () => {}, 1);
      assert.equal(exporter.getFinishedSpans().length, 0);
      assert.equal(await server.cli("HGET", jobKey("quiet", id), "trace"), null);

      const traced = new Queue("quiet", conn, { tracing: true });
      await traced.add("y");
      assert.equal(named(exporter.getFinishedSpans(), "add quiet").length, 1);
    } finally {
      trace.disable();
    }
    const before = await server.cli("KEYS", "emq:{bad}:*");
    await assert.rejects(new Queue("bad", conn).add("x", { trace: "not a traceparent" }), (err: unknown) => {
      assert.ok(err instanceof InvalidArgumentError);
      assert.match(err.message, /invalid trace: must be empty or a W3C traceparent/);
      return true;
    });
    assert.throws(() => new Queue("bad", conn, { tracing: "yes" as never }), InvalidArgumentError);
    assert.throws(() => new Worker(new Queue("bad", conn), () => {}, { tracing: { tracer: 1 as never } }));
    assert.deepEqual(await server.cli("KEYS", "emq:{bad}:*"), before);
  });
});

describe("tracing without @opentelemetry/api", () => {
  let server: ValkeyServer;
  before(async () => {
    server = await startValkey();
  });
  after(async () => {
    await server.stop();
  });
  beforeEach(async () => {
    await server.cli("FLUSHALL", "SYNC");
  });

  test("nothing loads it until tracing is on; then TracingUnavailableError names the package", async () => {
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "test/fixtures/without-otel.ts", String(server.port), "plain"],
      { timeout: 30_000 },
    );
    const got = JSON.parse(stdout) as {
      added: string;
      processed: string;
      add: { name: string; code: string; message: string } | null;
      worker: { name: string; code: string; message: string } | null;
    };
    assert.equal(got.processed, got.added);
    for (const err of [got.add, got.worker]) {
      assert.equal(err?.name, "TracingUnavailableError");
      assert.equal(err?.code, "EMQ_TRACING_UNAVAILABLE");
      assert.match(err?.message ?? "", /npm install @opentelemetry\/api/);
    }
  });
});
