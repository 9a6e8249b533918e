/**
 * A job's data and its payload: `Queue.add` stores `serialize(data)` as the job's payload, the
 * handler's `job.data` is `deserialize(payload)`. Pure.
 *
 * `json` (the default): a string or bytes is the payload itself, already encoded, stored as it is
 * (what `add` always took); any other value is stored as its JSON text. `job.data` is the payload
 * parsed as JSON. `raw`: the payload is a string or bytes, stored as it is, and `job.data` is its
 * bytes (a `Buffer`). Or your own `{ serialize, deserialize }` (MessagePack, compression, …).
 */
import { InvalidArgumentError } from "./errors.js";
import { kindOf } from "./option-keys.js";

export interface Serializer {
  /** The payload `add` stores for `data`: a string (stored as UTF-8) or bytes. */
  serialize(data: unknown): string | Uint8Array;
  /** The data the payload holds (`job.data`); throw when it cannot be read. */
  deserialize(payload: Buffer): unknown;
}

/** A `serializer` option: `"json"` (the default), `"raw"`, or your own. */
export type SerializerOption = "json" | "raw" | Serializer;

type Payload = string | Uint8Array;

const isPayload = (v: unknown): v is Payload => typeof v === "string" || v instanceof Uint8Array;

export const JSON_SERIALIZER: Serializer = {
  serialize(data) {
    if (isPayload(data)) return data;
    const json = JSON.stringify(data);
    if (json === undefined) throw new Error(`JSON has no form for ${kindOf(data)}`);
    return json;
  },
  deserialize: (payload) => JSON.parse(payload.toString("utf8")),
};

export const RAW_SERIALIZER: Serializer = {
  serialize(data) {
    if (isPayload(data)) return data;
    throw new Error(`serializer "raw" stores a string or bytes, got ${kindOf(data)}`);
  },
  deserialize: (payload) => payload,
};

/** A `serializer` option checked (typed error naming `name`); absent is `json`. */
export function checkSerializer(value: unknown, name = "serializer"): Serializer {
  if (value === undefined || value === "json") return JSON_SERIALIZER;
  if (value === "raw") return RAW_SERIALIZER;
  const o = value as Partial<Serializer> | null;
  if (
    typeof o !== "object" ||
    o === null ||
    typeof o.serialize !== "function" ||
    typeof o.deserialize !== "function"
  ) {
    throw new InvalidArgumentError(
      name,
      `must be "json", "raw" or { serialize(data), deserialize(payload) }, got ${kindOf(value)}`,
    );
  }
  return o as Serializer;
}

/**
 * `data` as the payload `serializer` makes of it; what it refuses (or a payload that is not a
 * string or bytes) is an `InvalidArgumentError` naming `name`, before anything is sent.
 */
export function encodeData(serializer: Serializer, data: unknown, name = "data"): Payload {
  let payload: unknown;
  try {
    payload = serializer.serialize(data);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const refusal = new InvalidArgumentError(name, `cannot be serialized: ${reason.replace(/\s+/g, " ")}`);
    refusal.cause = err;
    throw refusal;
  }
  if (!isPayload(payload)) {
    throw new InvalidArgumentError(name, `the serializer gave ${kindOf(payload)}, not a string or bytes`);
  }
  return payload;
}
