/**
 * The `block` family's host step (module/src/verbs/block.rs on the native side, wire 6): the claim that
 * waits inside the server (`EMQ.BCLAIM`, docs/protocol.md). A connection that sends it carries
 * nothing else while it waits: give it a connection of its own (the worker does).
 */
import type { Connection } from "../connector/connection.js";
import { ServerError, WAIT_ENDED, WaitInterruptedError } from "../errors.js";
import { assertValidQueue } from "../keyspace.js";
import { type ClaimOutcome, claimOutcome } from "./jobs.js";
import { assertInteger, assertLeaseMs, MAX_INTEGER } from "./common.js";
import { call } from "./calls.js";

export { BLOCKING_CLAIM } from "../engine/native.js";

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
