/**
 * The `version` family's host step asked of a queue's node (module/src/verbs/version.rs on the
 * native side; the fence's own probe of every node is src/engine/fence.ts).
 */
import type { Connection } from "../connector/connection.js";
import { versionAt } from "../engine/version.js";
import { key } from "./common.js";

/**
 * The verbs the module that serves `queue` offers beside the job core (`EMQ.VERSION`'s
 * `extensions`, asked of the node that owns the queue's slot): `[]` from a module before 0.4.0.
 */
export async function moduleExtensions(conn: Connection, queue: string): Promise<string[]> {
  return (await versionAt((c, a, k) => conn.send(c, a, k), key(queue, "pending")))?.extensions ?? [];
}
