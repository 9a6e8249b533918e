/**
 * The dashboard's views beside a queue's jobs: its schedules (the next instants, how many jobs
 * each added, when it last fired, paused), a flow's parent with its children as its row records them, and flow control (the
 * limits stored, the groups with jobs active or parked, a parked group's first jobs). Reads only,
 * each bounded.
 */
import type { Connection } from "../connector/connection.js";
import { keyOf } from "../keyspace.js";
import { text } from "../jobs/common.js";
import type { Queue } from "../queue.js";
import { Instants } from "../schedules/instants.js";
import { type Bytes, bytesView } from "./views.js";
import { type UnsettledScan, unsettledChildren } from "./flow-children.js";

/** Next instants listed per schedule. */
const NEXT_INSTANTS = 5;
/** Children of a parent, and parked jobs of a group, listed at most. */
const LISTED = 100;

export async function schedulesView(queue: Queue) {
  return (await queue.schedules()).map((s) => {
    const instants = new Instants(s.spec);
    const next: number[] = s.paused ? [] : [s.next]; // a paused one has no instant until resumed
    while (next.length > 0 && next.length < NEXT_INSTANTS) {
      const after = instants.after(next.at(-1)!);
      if (after === null) break;
      next.push(after);
    }
    return {
      name: s.name,
      spec: s.spec,
      next,
      fired: s.fired,
      paused: s.paused,
      ...(s.lastFired !== null ? { lastFired: s.lastFired } : {}),
      payload: bytesView(s.payload) as Bytes,
    };
  });
}

/**
 * A flow's parent as its row records its children: those settled (`child:` results and
 * `failed:` errors, each child's state read from its own row), how many have not settled, and
 * those found by a bounded scan of the queues `listed` (`flow-children.ts`).
 */
export async function flowView(
  conn: Connection,
  queue: Queue,
  id: string,
  listed: readonly { name: string; physical: string[] }[],
) {
  const job = await queue.getJob(id);
  if (job === null) return null;
  const recorded = (await queue.getChildren(id)) ?? { values: {}, failures: {} };
  const names = [...new Set([...Object.keys(recorded.values), ...Object.keys(recorded.failures)])];
  const children = await Promise.all(
    names.slice(0, LISTED).map(async (name) => {
      const at = name.lastIndexOf(":");
      const [childQueue, childId] = [name.slice(0, at), name.slice(at + 1)];
      const state = await conn.send("HGET", [keyOf(childQueue, "row", childId), "state"]);
      return {
        queue: childQueue,
        id: childId,
        state: state === null || state === undefined ? "gone" : text(state as Buffer),
        ...(name in recorded.values ? { result: recorded.values[name] } : {}),
        ...(name in recorded.failures ? { error: recorded.failures[name] } : {}),
      };
    }),
  );
  const childrenLeft = job.childrenLeft ?? 0;
  const unsettled: UnsettledScan =
    childrenLeft > 0
      ? await unsettledChildren(conn, queue.name, id, childrenLeft, listed)
      : { children: [], scanned: 0, queues: 0, complete: true };
  return {
    id,
    state: job.state,
    childrenLeft,
    children,
    settled: names.length,
    unsettled,
    ...(job.parent ? { parent: job.parent } : {}),
  };
}

/** The queue's limits, its groups with jobs active or parked, and each parked group's first jobs. */
export async function flowControlView(conn: Connection, queue: Queue) {
  const lane = (await queue.lanesInUse())[0] ?? queue.name;
  const [limits, groups] = await Promise.all([queue.limits(), queue.groups()]);
  const parked = await Promise.all(
    Object.entries(groups).map(async ([group, state]) => {
      const ids =
        state.parked === 0
          ? []
          : ((await conn.send("ZRANGE", [keyOf(lane, "group", group), 0, LISTED - 1])) as Buffer[]).map((b) =>
              text(b),
            );
      return { group, ...state, parkedIds: ids };
    }),
  );
  return { limits, groups: parked };
}
