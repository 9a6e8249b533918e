/**
 * The blocking claim's host steps (wire 6): whether a module node offers it, and the claim that
 * waits inside the server (`EMQ.BCLAIM`, docs/protocol.md). A connection that sends it carries
 * nothing else while it waits: give it a connection of its own (the worker does).
 */
import type { Connection } from "../connector/connection.js";
import { parseModuleVersion } from "../engine/fence.js";
import type { RespReply } from "../resp.js";
import { ServerError, WAIT_ENDED, WaitInterruptedError } from "../errors.js";
import { assertValidQueue } from "../keyspace.js";
import { type ClaimOutcome, claimOutcome } from "./admission.js";
import { assertInteger, assertLeaseMs, key, MAX_INTEGER } from "./common.js";
import { call } from "./calls.js";

export { BLOCKING_CLAIM } from "../engine/native.js";

/**
 * The verbs the module that serves `queue` offers beside the job core (`EMQ.VERSION`'s
 * `extensions`, asked of the node that owns the queue's slot): `[]` from a module before 0.4.0.
 */
export async function moduleExtensions(conn: Connection, queue: string): Promise<string[]> {
  const reply = await conn.send("EMQ.VERSION", [], key(queue, "pending"));
  return parseModuleVersion(reply as RespReply)?.extensions ?? [];
}

/**
 * `EMQ.BCLAIM`: claims the next job under a lease of `leaseMs`, waiting inside the server up to
 * `timeoutMs` (a positive integer of ms) for one to be ready; `null` when the wait ended with
 * nothing (a paused queue stays empty to it); a limited claim at once when flow control holds
 * the queue back (it does not wait then). The server may end the wait early
 * (`WaitInterruptedError`: the node turned replica, the slot moved).
 */
export async function claimWaiting(
  conn: Connection,
  queue: string,
  leaseMs: number,
  timeoutMs: number,
): Promise<ClaimOutcome> {
  assertValidQueue(queue);
  assertLeaseMs(leaseMs);
  assertInteger("timeoutMs", timeoutMs, 1, MAX_INTEGER, " of milliseconds");
  let reply: unknown;
  try {
    reply = await call(conn, "BCLAIM", queue, [leaseMs, timeoutMs]);
  } catch (err) {
    if (err instanceof ServerError && WAIT_ENDED.test(err.reply)) {
      throw new WaitInterruptedError(err.reply, err);
    }
    throw err;
  }
  return claimOutcome(reply);
}
