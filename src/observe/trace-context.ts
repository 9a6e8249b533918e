/**
 * The trace context a job carries (the `trace` field of its row, the `<trace>` value of `ADD`):
 * a W3C `traceparent`, optionally followed by `;` and the `tracestate`, at most 512 bytes — the
 * protocol's `trace` grammar (docs/protocol.md, "Value grammars"). Pure text functions; nothing
 * here needs OpenTelemetry.
 */

/** The longest trace context a job carries, in bytes. */
const MAX_TRACE = 512;

/** A span context as the W3C `traceparent` spells it (lower-case hex). */
interface TraceParent {
  traceId: string;
  spanId: string;
  /** The trace flags byte (bit 0: sampled). */
  traceFlags: number;
  /** The `tracestate` header value, when one was carried. */
  traceState?: string;
}

const PARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const PRINTABLE = /^[\x20-\x7e]+$/;
const ZEROS = /^0+$/;

/** The trace context in `text`, or null when `text` is empty or not in the `trace` grammar. */
export function parseTraceContext(text: string): TraceParent | null {
  if (text.length === 0 || Buffer.byteLength(text) > MAX_TRACE) return null;
  const semi = text.indexOf(";");
  const head = semi === -1 ? text : text.slice(0, semi);
  const m = PARENT.exec(head);
  if (!m) return null;
  const [, version, traceId, spanId, flags] = m as unknown as [string, string, string, string, string];
  if (version === "ff" || ZEROS.test(traceId) || ZEROS.test(spanId)) return null;
  const parent: TraceParent = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
  if (semi === -1) return parent;
  const state = text.slice(semi + 1);
  if (!PRINTABLE.test(state)) return null;
  parent.traceState = state;
  return parent;
}

/** Whether `text` is in the `trace` grammar: empty, or a trace context `parseTraceContext` reads. */
export function isTraceContext(text: string): boolean {
  return text === "" || parseTraceContext(text) !== null;
}

/**
 * The trace context of a span (`00-<trace id>-<span id>-<flags>`, then `;<tracestate>` when there
 * is one and it fits), or `""` for an invalid span context (a no-op tracer's): nothing to carry.
 */
export function formatTraceContext(parent: TraceParent): string {
  const flags = (parent.traceFlags & 0xff).toString(16).padStart(2, "0");
  const head = `00-${parent.traceId}-${parent.spanId}-${flags}`;
  if (parseTraceContext(head) === null) return "";
  const state = parent.traceState;
  if (!state) return head;
  const full = `${head};${state}`;
  return parseTraceContext(full) === null ? head : full;
}
