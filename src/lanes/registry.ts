/**
 * The lane counts a queue is used with, as recorded in its `meta` (`LANES` writes them), and the
 * lanes they make: what a worker drains and what the operator calls act on.
 */
import type { Connection } from "../connector/connection.js";
import { queueKey } from "../keyspace.js";
import { laneNames } from "./naming.js";

/** The lane counts recorded in `emq:{queue}:meta` field `lanes` (a read; nothing written). */
export async function recordedLanes(conn: Connection, queue: string): Promise<number[]> {
  const text = await conn.send("HGET", [queueKey(queue, "meta"), "lanes"]);
  if (text == null) return [];
  return String(text)
    .split(",")
    .filter((t) => /^[1-9]\d{0,3}$/.test(t))
    .map(Number);
}

/** The lanes of every count in `counts`, lane 0 of each first, without repeats. */
export function lanesOf(queue: string, counts: readonly number[]): string[] {
  const all = new Set<string>();
  for (const k of [...new Set([1, ...counts])].sort((a, b) => a - b)) {
    for (const lane of laneNames(queue, k)) all.add(lane);
  }
  return [...all];
}
