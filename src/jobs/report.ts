/**
 * The `report` family's host steps (module/src/verbs/report.rs on the native side): an active job
 * reports its `progress` and appends to its `log`, under the lease token like every lease step.
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { assertPayload, assertSize, type Payload, toArg, typeOf } from "./common.js";
import { call } from "./calls.js";
import { leased } from "./lease.js";

/**
 * Records an active job's progress: its row keeps `value` (bytes; the latest replaces the one
 * before), and the queue's event bus announces it (`progress`, with the value as `data` when it
 * is at most 200 bytes). A stale worker's call is refused with `LeaseLostError`.
 */
export async function progress(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  value: Payload,
): Promise<void> {
  leased(queue, id, token);
  assertPayload(value, "value", "progress");
  await call(conn, "PROGRESS", queue, [id, String(token), toArg(value)]);
}

/**
 * Appends a line to an active job's log, kept on its row (the last 100 lines); returns the
 * line's number (from 1 over the job's life). A stale worker's call is refused with
 * `LeaseLostError`.
 */
export async function log(
  conn: Connection,
  queue: string,
  id: string,
  token: number,
  line: string,
): Promise<number> {
  leased(queue, id, token);
  if (typeof line !== "string") {
    throw new InvalidArgumentError("line", `must be a string, got ${typeOf(line)}`);
  }
  assertSize("line", line, "line");
  return (await call(conn, "LOG", queue, [id, String(token), line])) as number;
}
