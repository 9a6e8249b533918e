/**
 * Listing a queue's jobs by state, a page at a time: reads only, bounded by the page (one
 * `ZRANGE` per lane, then one `HGETALL` per listed job, all in one round trip each).
 */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { keyOf, queueKey } from "../keyspace.js";
import {
  assertJobState,
  LISTING,
  type Listed,
  listedOf,
  MAX_LANED_DEPTH,
  mergePage,
  type PageOptions,
  pageOf,
} from "./paging.js";
import { type JobInfo, jobInfo, type JobState } from "./row.js";

/** A listed job: its row, and its score in the state's set. */
export interface ListedJob extends JobInfo {
  /**
   * The job's score in its state's set: the priority (pending), the due time (scheduled), the
   * lease deadline (active), the finish time (completed, dead); times in server ms.
   */
  score: number;
}

/**
 * The page of `state`'s jobs over `lanes` (a plain queue: one lane, itself). A job that left the
 * state between the two reads is listed as it is now; one deleted meanwhile is left out.
 */
export async function listJobs(
  conn: Connection,
  lanes: readonly string[],
  state: JobState,
  opts?: PageOptions,
): Promise<ListedJob[]> {
  const { set, newestFirst } = LISTING[assertJobState(state)];
  const { offset, limit } = pageOf(opts);
  let page: Listed[];
  if (lanes.length === 1) {
    const lane = lanes[0]!;
    page = listedOf(lane, await range(conn, queueKey(lane, set), offset, limit, newestFirst));
  } else {
    if (offset + limit > MAX_LANED_DEPTH) {
      throw new InvalidArgumentError(
        "offset",
        `plus limit must be at most ${MAX_LANED_DEPTH} on a laned queue (each lane is read from its start), got ${offset + limit}`,
      );
    }
    const lists = await Promise.all(
      lanes.map(async (lane) =>
        listedOf(lane, await range(conn, queueKey(lane, set), 0, offset + limit, newestFirst)),
      ),
    );
    page = mergePage(lists, newestFirst, offset, limit);
  }
  const rows = await Promise.all(
    page.map((l) => conn.send("HGETALL", [keyOf(l.lane, "row", l.id)]) as Promise<Record<string, Buffer>>),
  );
  const jobs: ListedJob[] = [];
  page.forEach((l, i) => {
    const info = jobInfo(l.id, l.lane, rows[i]!, l.score);
    if (info) jobs.push({ ...info, score: l.score });
  });
  return jobs;
}

function range(
  conn: Connection,
  key: string,
  offset: number,
  limit: number,
  rev: boolean,
): Promise<unknown[]> {
  const args = [key, String(offset), String(offset + limit - 1), ...(rev ? ["REV"] : []), "WITHSCORES"];
  return conn.send("ZRANGE", args) as Promise<unknown[]>;
}
