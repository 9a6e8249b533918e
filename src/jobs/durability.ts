/**
 * Durability: an add acknowledged only once it is known to be on replicas (`WAIT`) or in AOFs
 * (`WAITAOF`), on the node that took it (docs/cluster.md, "Durability").
 */
import type { Connection } from "../connector/connection.js";
import { DurabilityError, InvalidArgumentError } from "../errors.js";
import { checkKeys, type OptionTable } from "../option-keys.js";
import { assertInteger, key, typeOf } from "./common.js";

const DURABILITY: OptionTable = {
  of: "durability",
  keys: { replicas: "number", aof: "object", timeoutMs: "number" },
};
const AOF: OptionTable = { of: "durability.aof", keys: { local: "boolean", replicas: "number" } };

/**
 * How sure an add must be before it is acknowledged. Replication and AOF writes are
 * asynchronous: a primary acknowledges an add before its replicas (or its disk) have it, and a
 * primary that dies in that window takes the add with it. With `durability`, every add is
 * followed, on the same node connection, by
 *
 * * `{ replicas: n, timeoutMs }` → `WAIT n timeoutMs`: at least `n` replicas acknowledged every
 *   write this connection made to that node so far;
 * * `{ aof: { local, replicas: n }, timeoutMs }` → `WAITAOF <local ? 1 : 0> n timeoutMs`: the
 *   node's own AOF (`local`, needs `appendonly yes`) and at least `n` replicas' AOFs have them
 *   fsynced.
 *
 * A wait that times out, falls short or cannot run rejects with `DurabilityError` carrying the
 * id(s): the job exists on the primary (it will run) but is not known to be safe. Works on one
 * node and on a cluster (there the wait goes to the primary that owns the queue's slot).
 *
 * The wait holds the connection it runs on: commands sent after it on the same node connection
 * wait behind it on the server for up to `timeoutMs`. Give producers that ask for durability a
 * connection of their own, apart from workers.
 */
export type Durability =
  | { replicas: number; timeoutMs: number }
  | { aof: { local: boolean; replicas: number }; timeoutMs: number };

/** A checked `durability`: the command and its arguments, and what the reply must reach. */
export interface DurabilityWait {
  command: "WAIT" | "WAITAOF";
  args: number[];
  /** Replicas (and for WAITAOF, first the local fsync) the reply must count at least. */
  need: number[];
}

/** The longest wait: a day (WAIT's 0 would block the connection for good, so it is refused). */
const MAX_WAIT_MS = 86_400_000;
const MAX_REPLICAS = 1000;

/** `durability` checked (typed errors naming the option); `undefined` when it is not set. */
export function checkDurability(value: unknown, name = "durability"): DurabilityWait | undefined {
  if (value === undefined) return undefined;
  const d = checkKeys(value, DURABILITY, name, `${name}.`);
  const timeoutMs = assertInteger(`${name}.timeoutMs`, d.timeoutMs, 1, MAX_WAIT_MS, " of milliseconds");
  if ("aof" in d === "replicas" in d) {
    throw new InvalidArgumentError(
      name,
      "must have either replicas (WAIT) or aof (WAITAOF), not both or neither",
    );
  }
  if (d.aof === undefined) {
    const replicas = assertInteger(`${name}.replicas`, d.replicas, 0, MAX_REPLICAS);
    return { command: "WAIT", args: [replicas, timeoutMs], need: [replicas] };
  }
  const aof = checkKeys(d.aof ?? null, AOF, `${name}.aof`, `${name}.aof.`);
  if (typeof aof.local !== "boolean") {
    throw new InvalidArgumentError(`${name}.aof.local`, `must be a boolean, got ${typeOf(aof.local)}`);
  }
  const replicas = assertInteger(`${name}.aof.replicas`, aof.replicas, 0, MAX_REPLICAS);
  const local = aof.local ? 1 : 0;
  return { command: "WAITAOF", args: [local, replicas, timeoutMs], need: [local, replicas] };
}

/**
 * Waits until the writes this connection made to the node holding `queue` are as durable as
 * asked; rejects with `DurabilityError` for `ids` when they are not.
 */
export async function awaitDurable(
  conn: Connection,
  queue: string,
  ids: readonly string[],
  wait: DurabilityWait,
): Promise<void> {
  const line = `${wait.command} ${wait.args.join(" ")}`;
  let reply: unknown;
  try {
    reply = await conn.send(wait.command, wait.args, key(queue, ""));
  } catch (err) {
    throw new DurabilityError(ids, `${line} failed: ${(err as Error).message}`, err);
  }
  const got = (Array.isArray(reply) ? reply : [reply]).map(Number);
  const [timeoutMs] = wait.args.slice(-1);
  if (wait.command === "WAIT" && got[0]! < wait.need[0]!) {
    throw new DurabilityError(
      ids,
      `${line}: ${got[0]} of ${wait.need[0]} replicas acknowledged within ${timeoutMs} ms`,
    );
  }
  if (wait.command === "WAITAOF" && (got[0]! < wait.need[0]! || got[1]! < wait.need[1]!)) {
    const local = wait.need[0] ? `local AOF ${got[0] ? "fsynced" : "not fsynced"}, ` : "";
    throw new DurabilityError(
      ids,
      `${line}: ${local}${got[1]} of ${wait.need[1]} replica AOFs fsynced within ${timeoutMs} ms`,
    );
  }
}
