/**
 * The `tracing` option of a `Queue` and a `Worker`, and its check. Types only of its own: this
 * file names nothing of `@opentelemetry/api`, so the package's types need it as little as its
 * code does (`tracing.ts` loads it when tracing is on).
 */
import { InvalidArgumentError } from "../errors.js";

/** What `tracing: { tracer }` takes: an OpenTelemetry `Tracer` (from `@opentelemetry/api`). */
export interface TracerLike {
  startSpan(name: string, options?: unknown, context?: unknown): unknown;
}

/**
 * The `tracing` option: `true` traces with the tracer `echomq` of the global tracer provider,
 * `{ tracer }` with that tracer. Default `false`: nothing traced, `@opentelemetry/api` not loaded.
 */
export type TracingOption = boolean | { tracer?: TracerLike };

/** A `tracing` option that is on: the tracer to use (`undefined`: the global provider's). */
export interface CheckedTracing {
  tracer: TracerLike | undefined;
}

/** The option checked: `null` when tracing is off; `InvalidArgumentError` for anything else. */
export function checkTracing(option: unknown): CheckedTracing | null {
  if (option === undefined || option === false) return null;
  if (option === true) return { tracer: undefined };
  const tracer =
    typeof option === "object" && option !== null ? (option as { tracer?: unknown }).tracer : null;
  if (tracer === null || (tracer !== undefined && typeof (tracer as TracerLike).startSpan !== "function")) {
    throw new InvalidArgumentError(
      "tracing",
      "must be true, false or { tracer } with an OpenTelemetry Tracer (from @opentelemetry/api)",
    );
  }
  return { tracer: tracer as TracerLike | undefined };
}
