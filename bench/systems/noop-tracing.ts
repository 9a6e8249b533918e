/**
 * The OpenTelemetry SDK the tracing measure runs EchoMQ with: a global `BasicTracerProvider`
 * (every span sampled and recorded) whose `BatchSpanProcessor` hands the spans to an exporter
 * that drops them — what tracing costs a process, without a collector's cost. Registered once
 * per process.
 */
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";

let exported = 0;

const dropping: SpanExporter = {
  export(spans, done) {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
};

let provider: BasicTracerProvider | undefined;

/** Registers the SDK as the global tracer provider (once). */
export function useNoopTracing(): void {
  if (provider) return;
  provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropping)] });
  trace.setGlobalTracerProvider(provider);
}

/** Exports what is buffered; resolves with the spans exported so far. */
export async function flushTracing(): Promise<number> {
  await provider?.forceFlush();
  return exported;
}
