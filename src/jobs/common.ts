/**
 * What every host step shares: argument checks (typed errors, before anything is sent), the
 * keys of a queue, and the one place a server refusal becomes a typed error.
 */
import { assertValidBrandedId } from "../branded-id.js";
import type { Arg, Connection } from "../connector/connection.js";
import { InvalidArgumentError, InvalidIdError, TooLargeError } from "../errors.js";
import { jobKey, type QueueKeyType, queueKey } from "../keyspace.js";
import { isTraceContext } from "../observe/trace-context.js";
import { PROTOCOL } from "../verbs/index.js";

export type Payload = string | Uint8Array;

/** The largest integer the protocol's value grammars take (15 decimal digits). */
export const MAX_INTEGER = 999_999_999_999_999;
/** The largest lease the protocol takes (15 decimal digits). */
export const MAX_LEASE_MS = MAX_INTEGER;
/** The largest `limit` of `promote` / `reap`. */
export const MAX_LIMIT = 10_000;

/** The values the protocol bounds in size (docs/protocol.md, "Value grammars"). */
type SizeBound = "payload" | "result" | "progress" | "line" | "error" | "stack";

/** The most bytes a value of a bounded text grammar may have, as the protocol data declares it. */
export function maxBytes(grammar: SizeBound | "label" | "name" | "trace"): number {
  const max = PROTOCOL.grammars[grammar].max_bytes;
  if (max === undefined) throw new Error(`the protocol data gives grammar ${grammar} no max_bytes`);
  return max;
}

/** The size of a value as sent: UTF-8 bytes of a string, or the bytes given. */
function byteSize(value: Payload): number {
  return typeof value === "string" ? Buffer.byteLength(value, "utf8") : value.byteLength;
}

/**
 * Bytes or a string, at most its size bound (`payload` unless another is named): else
 * `TooLargeError` before anything is sent (the server refuses it too).
 */
export function assertPayload(
  payload: unknown,
  name = "payload",
  bound: SizeBound = "payload",
): asserts payload is Payload {
  if (typeof payload !== "string" && !(payload instanceof Uint8Array)) {
    throw new InvalidArgumentError(
      name,
      `must be a string or bytes (Uint8Array/Buffer), got ${typeOf(payload)}`,
    );
  }
  assertSize(name, payload, bound);
}

/** A value at most its size bound, else `TooLargeError` (nothing sent). */
export function assertSize(name: string, value: Payload, bound: SizeBound): void {
  const max = maxBytes(bound);
  // A string has at least as many bytes as code units and at most three times as many.
  if (typeof value === "string" && value.length * 3 <= max) return;
  const bytes = byteSize(value);
  if (bytes > max) throw new TooLargeError(name, bytes, max);
}

/** An integer from `min` to `max`; the error names the option and the range. */
export function assertInteger(name: string, value: unknown, min: number, max: number, unit = ""): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      name,
      `must be an integer${unit} from ${min} to ${max}, got ${describe(value)}`,
    );
  }
  return value;
}

export function assertLeaseMs(leaseMs: unknown, name = "leaseMs"): asserts leaseMs is number {
  if (typeof leaseMs !== "number" || !Number.isInteger(leaseMs) || leaseMs <= 0 || leaseMs > MAX_LEASE_MS) {
    throw new InvalidArgumentError(
      name,
      `must be a positive integer of milliseconds up to ${MAX_LEASE_MS}, got ${describe(leaseMs)}`,
    );
  }
}

/** A job's trace context (`AddOptions.trace`): absent is `""` (none); else the `trace` grammar. */
export function assertTrace(name: string, value: unknown): string {
  if (value === undefined) return "";
  if (typeof value !== "string" || !isTraceContext(value)) {
    const got = typeof value === "string" ? JSON.stringify(value.slice(0, 80)) : typeOf(value);
    throw new InvalidArgumentError(name, `must be ${PROTOCOL.grammars.trace.rule}, got ${got}`);
  }
  return value;
}

/** A lease token: the `attempts` a claim returned (a positive integer). */
export function assertToken(token: unknown): number {
  return assertInteger("token", token, 1, MAX_INTEGER);
}

/** A full branded id in the `JOB` namespace. */
export function assertJobId(id: unknown): asserts id is string {
  assertValidBrandedId(id);
  if (!id.startsWith("JOB")) throw new InvalidIdError(id, "a job id is in the JOB namespace");
}

/** An options argument: absent or a plain object. */
export function assertOptions(opts: unknown, name = "options"): Record<string, unknown> {
  if (opts === undefined) return {};
  if (typeof opts !== "object" || opts === null || Array.isArray(opts)) {
    throw new InvalidArgumentError(name, `must be an object, got ${typeOf(opts)}`);
  }
  return opts as Record<string, unknown>;
}

/**
 * A payload as a command argument: a string goes as it is (the client writes it as UTF-8 into
 * the command's one buffer, with no copy of its own); bytes as a Buffer over the same memory.
 */
export function toArg(payload: Payload): string | Buffer {
  if (typeof payload === "string" || Buffer.isBuffer(payload)) return payload;
  return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
}

/** A queue's declared key (`emq:{q}:<type>`); `""` is the base. */
export function key(queue: string, type: QueueKeyType): string {
  return queueKey(queue, type);
}

export function row(queue: string, id: string): string {
  return jobKey(queue, id);
}

/**
 * Runs a protocol verb on the connection's engine (wire 4 its script, wire 6 its native command);
 * a refusal is thrown as its typed error.
 */
export function run(
  conn: Connection,
  verb: string,
  keys: readonly string[],
  values: readonly Arg[],
): Promise<unknown> {
  return conn.engine.run(verb, keys, values);
}

/** A bulk-string reply as text (ids and states are ASCII). */
export function text(reply: unknown): string {
  return Buffer.isBuffer(reply) ? reply.toString("latin1") : String(reply);
}

export function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function describe(value: unknown): string {
  return typeof value === "number" || typeof value === "bigint" ? String(value) : typeOf(value);
}
