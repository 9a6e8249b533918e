/**
 * How long the next job to run has been ready: the age of the head of `pending` measured from
 * when it last entered `pending`, not from its creation (a retried job keeps its old id, so its
 * id's time would make a healthy queue read minutes of latency).
 *
 * The row records no ready time; the bus does. Every transition that puts a job into `pending`
 * (`added`, `promoted`, `retrying` with no delay, `stalled`, `requeued`, a parent's `ready`)
 * writes an entry naming the job, stamped with server time, and a pending job gets no entry until
 * it leaves `pending`. So the newest entry naming the head is the instant it became ready. It is
 * found by reading the stream backwards (`XREVRANGE <events> + <created>`, `PAGE` entries a read,
 * at most `MAX_SCANNED`), never further back than the head's creation (less a minute, for the
 * skew between the host's clock in ids and the server's in entries). Reads only.
 *
 * When the bus does not hold that entry (the bus is off, the trim passed it, or more than
 * `MAX_SCANNED` entries came after it) the head's creation time is used: the age is then the
 * upper bound the id gives.
 */
import { idTime, isValidBrandedId } from "../branded-id.js";
import type { Connection } from "../connector/connection.js";
import { queueKey } from "../keyspace.js";

/** Entries read per `XREVRANGE`. */
const PAGE = 1000;
/** Entries read per head at most (the bus's default length). */
const MAX_SCANNED = 10_000;
/** How far before the head's creation the read reaches: ids carry the host's clock, entries the server's. */
const SKEW_MS = 60_000;

type Entry = [Buffer, Buffer[]];

/** The server's time in ms (`TIME`). */
async function serverMs(conn: Connection, routeKey?: string): Promise<number> {
  const t = (await conn.send("TIME", [], routeKey)) as Buffer[];
  return Number(String(t[0])) * 1000 + Math.floor(Number(String(t[1])) / 1000);
}

/** The `id` field of an entry, or undefined. */
function entryJob(fields: readonly Buffer[]): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i]!.toString("latin1") === "id") return fields[i + 1]!.toString("latin1");
  }
  return undefined;
}

interface Found {
  /** When the job last became ready (server ms). */
  at: number;
  /** The newest entry id the read saw ("0-0": none), where a later read may start. */
  newest: string;
}

/**
 * When the job `id` of `queue` last became ready (server ms): its newest bus entry, else its
 * creation time (see above); and the newest entry the read saw.
 */
async function scan(conn: Connection, queue: string, id: string): Promise<Found> {
  const created = idTime(id);
  const key = queueKey(queue, "events");
  let end = "+";
  let newest = "0-0";
  for (let scanned = 0; scanned < MAX_SCANNED; scanned += PAGE) {
    const page = (await conn.send(
      "XREVRANGE",
      [key, end, String(Math.max(0, created - SKEW_MS)), "COUNT", String(PAGE)],
      key,
    )) as Entry[];
    if (newest === "0-0" && page[0]) newest = String(page[0][0]);
    for (const [entryId, fields] of page) {
      if (entryJob(fields) === id) return { at: Math.max(created, entryMs(entryId)), newest };
    }
    if (page.length < PAGE) break;
    end = `(${String(page.at(-1)![0])}`;
  }
  return { at: created, newest };
}

const entryMs = (entryId: Buffer | string) => Number(String(entryId).split("-")[0]);

/** When the job `id` of `queue` last became ready (server ms); see above. */
async function readyAt(conn: Connection, queue: string, id: string): Promise<number> {
  return (await scan(conn, queue, id)).at;
}

/** The head of `queue`'s `pending` (null: none, or an orphan the claim drops) and the server's time. */
async function headOf(conn: Connection, queue: string): Promise<{ id: string | null; now: number }> {
  const pending = queueKey(queue, "pending");
  const [head, now] = await Promise.all([
    conn.send("ZRANGE", [pending, 0, 0], pending) as Promise<Buffer[]>,
    serverMs(conn, pending),
  ]);
  const id = head[0]?.toString("latin1");
  return { id: id !== undefined && isValidBrandedId(id) ? id : null, now };
}

/**
 * The ready age (ms) at `now` of the head of `queue`'s `pending`: 0 when nothing is pending, or
 * for a head that is not a branded id (an orphan: the claim drops it).
 */
export async function headReadyAgeMs(conn: Connection, queue: string): Promise<number> {
  const { id, now } = await headOf(conn, queue);
  return id === null ? 0 : Math.max(0, now - (await readyAt(conn, queue, id)));
}

/**
 * `headReadyAgeMs` for a reader that asks again and again (the dashboard's sampler, every
 * second): it remembers each queue's head and the newest entry it read, and while the head stays
 * the same reads only the entries written since — a head that left `pending` and came back (or
 * was deleted and added again) wrote one of them, so the answer stays exact at the cost of the
 * new entries alone.
 */
export class HeadReadiness {
  private readonly known = new Map<string, { id: string } & Found>();

  async ageMs(conn: Connection, queue: string): Promise<number> {
    const { id, now } = await headOf(conn, queue);
    if (id === null) {
      this.known.delete(queue);
      return 0;
    }
    const was = this.known.get(queue);
    const found = was?.id === id ? await this.since(conn, queue, was) : await scan(conn, queue, id);
    this.known.set(queue, { id, ...found });
    return Math.max(0, now - found.at);
  }

  /** Forgets the queues not in `live` (a queue no longer shown). */
  keep(live: ReadonlySet<string>): void {
    for (const queue of this.known.keys()) if (!live.has(queue)) this.known.delete(queue);
  }

  private async since(conn: Connection, queue: string, was: { id: string } & Found): Promise<Found> {
    const key = queueKey(queue, "events");
    const page = (await conn.send(
      "XREVRANGE",
      [key, "+", `(${was.newest}`, "COUNT", String(PAGE)],
      key,
    )) as Entry[];
    if (page.length === PAGE) return scan(conn, queue, was.id);
    const newest = page[0] ? String(page[0][0]) : was.newest;
    for (const [entryId, fields] of page) {
      if (entryJob(fields) === was.id) return { at: Math.max(idTime(was.id), entryMs(entryId)), newest };
    }
    return { at: was.at, newest };
  }
}
