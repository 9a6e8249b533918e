/**
 * What `new Queue(name, connection, options)` and its adds take: the options, the tables they are
 * checked against (src/option-keys.ts), and what a bulk job carries on to the host step.
 */
import type { AddOptions, Durability } from "./jobs.js";
import { ADD_OPTIONS } from "./jobs/jobs.js";
import { FIXED_KEYSPACE, LIMITS_ARE_THE_QUEUES, type KeyType, type OptionTable } from "./option-keys.js";
import type { TracingOption } from "./observe/tracing-option.js";
import type { SerializerOption } from "./serializer.js";

export interface QueueAddOptions extends AddOptions {
  /**
   * A laned queue: jobs with the same key go to the same lane (their order is kept). Default: the
   * idempotency `key` when one is given (a key is held per lane), else round-robin.
   */
  laneKey?: string;
}

export interface QueueOptions {
  /**
   * The durability every `add` / `addBulk` of this queue waits for before it is acknowledged
   * (an add's own `durability` option wins): `{ replicas: n, timeoutMs }` → `WAIT`,
   * `{ aof: { local, replicas }, timeoutMs }` → `WAITAOF`. See `Durability`.
   */
  durability?: Durability;
  /** Spread the queue's jobs over this many lanes (1 to 256). Default 1: the queue itself. */
  lanes?: number;
  /**
   * OpenTelemetry traces: a `create` span (`add <queue>`, PRODUCER) per job `add` / `addBulk`
   * adds, its context carried in the job (`AddOptions.trace`) for the worker's `process` span to
   * link to. `true`: the global tracer provider's tracer; `{ tracer }`: that tracer. Needs
   * `@opentelemetry/api` installed (else the adds reject with `TracingUnavailableError`).
   * Default false: nothing traced, nothing loaded.
   */
  tracing?: TracingOption;
  /**
   * How a job's data becomes its payload (`add`, `addBulk`) and back (`job.data`, a Worker's
   * default): `"json"` (the default: a string or bytes is stored as it is, any other value as
   * its JSON text; `job.data` parses it), `"raw"` (strings and bytes only; `job.data` is the
   * bytes), or your own `{ serialize(data), deserialize(payload) }`.
   */
  serializer?: SerializerOption;
}

export const QUEUE_OPTIONS: OptionTable = {
  of: "Queue",
  keys: {
    durability: "object",
    lanes: "number",
    tracing: ["boolean", "object"],
    serializer: ["string", "object"],
  } satisfies Record<keyof QueueOptions, KeyType>,
  foreign: {
    connection: "the connection is Queue's second argument: new Queue(name, await connect(…), options)",
    prefix: FIXED_KEYSPACE,
    defaultJobOptions:
      "a queue has no default job options: pass them to each add (durability is the queue's)",
    limiter: LIMITS_ARE_THE_QUEUES,
    streams: "the event bus is set with queue.setEvents({ maxLen, maxAgeMs })",
  },
};

export const OBLITERATE_OPTIONS: OptionTable = { of: "obliterate", keys: { force: "boolean" } };

export const QUEUE_ADD_OPTIONS: OptionTable = {
  ...ADD_OPTIONS,
  of: "Queue.add",
  keys: { ...ADD_OPTIONS.keys, laneKey: "string" },
};

/**
 * A bulk job as the host step takes it: without `laneKey` (the queue's) and, when tracing is on,
 * with its trace context. A job or options that are not objects are left as they are (the add
 * refuses them, naming them).
 */
export function bulkJob<J>(job: J, trace = ""): J {
  if (typeof job !== "object" || job === null) return job;
  const opts = (job as { opts?: unknown }).opts;
  if (opts !== undefined && (typeof opts !== "object" || opts === null || Array.isArray(opts))) return job;
  const { laneKey, ...rest } = (opts ?? {}) as QueueAddOptions;
  if (trace === "" && laneKey === undefined) return job;
  return { ...job, opts: trace === "" ? rest : { ...rest, trace } };
}
