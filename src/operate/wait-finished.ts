/**
 * `Queue.waitUntilFinished`: one job's outcome, as a `QueueEvents` of its queue sees it, or as its
 * row already holds it. Host-only reads: the bus says when, the row says what (the bus carries a
 * result only up to 1 KiB, and only the first 200 bytes of an error).
 */
import { type Connection, MAX_TIMER_MS } from "../connector/connection.js";
import { InvalidArgumentError, JobFailedError, WaitUntilFinishedError } from "../errors.js";
import { assertInteger } from "../jobs/common.js";
import { jobKey } from "../keyspace.js";
import { RAW_SERIALIZER, type Serializer } from "../serializer.js";

/** What the wait needs of a bus event and of a `QueueEvents` (src/events/: a layer above). */
interface BusEvent {
  jobId?: string;
  reason?: string;
  result?: Buffer;
}
export interface FinishEvents {
  readonly queue: string;
  readonly ready: Promise<void>;
  on(kind: "completed" | "dead" | "removed", listener: (event: BusEvent) => void): this;
  off(kind: "completed" | "dead" | "removed", listener: (event: BusEvent) => void): this;
}

/**
 * A stored result as a value: the bytes under the `raw` serializer; else its JSON parsed, or its
 * text when it is not JSON (a handler's string). Empty (a handler's `undefined` / `null`): null.
 */
function resultOf(bytes: Buffer | null | undefined, serializer: Serializer): unknown {
  if (bytes == null) return undefined;
  if (serializer === RAW_SERIALIZER) return bytes;
  if (bytes.length === 0) return null;
  const text = bytes.toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function waitUntilFinished(
  conn: Connection,
  lane: string,
  id: string,
  events: FinishEvents,
  serializer: Serializer,
  ttlMs?: number,
): Promise<unknown> {
  if (ttlMs !== undefined) assertInteger("ttlMs", ttlMs, 1, MAX_TIMER_MS, " of milliseconds");
  if (events?.queue !== lane) {
    throw new InvalidArgumentError("events", `must be a QueueEvents of queue ${JSON.stringify(lane)}`);
  }
  const row = jobKey(lane, id);
  const read = async () => {
    const reply = await conn.send("HMGET", [row, "state", "result", "error", "stack"]);
    const [state, result, error, stack] = reply as (Buffer | null)[];
    return {
      state: state?.toString("latin1"),
      result,
      error: error?.toString("utf8"),
      stack: stack?.toString("utf8"),
    };
  };
  return new Promise<unknown>((resolve, reject) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      events.off("completed", onCompleted).off("dead", onDead).off("removed", onRemoved);
      settle();
    };
    const fail = (err: unknown) => finish(() => reject(err));
    const mine = (event: BusEvent) => event.jobId === id;
    const onCompleted = (event: BusEvent) => {
      if (!mine(event)) return;
      // A small result rides on the entry (at most 1 KiB): no row read, and retention cannot race it.
      const carried = event.result;
      if (carried !== undefined) finish(() => resolve(resultOf(carried, serializer)));
      else read().then((r) => finish(() => resolve(resultOf(r.result, serializer))), fail);
    };
    const onDead = (event: BusEvent) => {
      if (!mine(event)) return;
      read().then((r) => fail(new JobFailedError(id, r.error ?? event.reason ?? "", r.stack)), fail);
    };
    const onRemoved = (event: BusEvent) => {
      if (mine(event)) fail(new WaitUntilFinishedError(id, "it was removed before it finished"));
    };
    events.on("completed", onCompleted).on("dead", onDead).on("removed", onRemoved);
    if (ttlMs !== undefined) {
      timer = setTimeout(
        () => fail(new WaitUntilFinishedError(id, `it had not finished within ${ttlMs} ms`)),
        ttlMs,
      );
    }
    // A job that finished before the listeners: its row tells (unless retention deleted it).
    events.ready.then(read).then((r) => {
      if (r.state === "completed") finish(() => resolve(resultOf(r.result, serializer)));
      else if (r.state === "dead") fail(new JobFailedError(id, r.error ?? "", r.stack));
      else if (r.state === undefined)
        fail(
          new WaitUntilFinishedError(
            id,
            `no such job in queue ${JSON.stringify(lane)} (removed, or finished and deleted by retention)`,
          ),
        );
    }, fail);
  });
}
