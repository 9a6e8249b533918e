/**
 * Paging a state's jobs: which set and order each state lists, the bounds of a page, and the
 * merge of a laned queue's lanes into one page. Pure.
 */
import { InvalidArgumentError } from "../errors.js";
import type { QueueKeyType } from "../keyspace.js";
import { checkKeys, type KeyType } from "../option-keys.js";
import type { JobState } from "./row.js";

/** The most jobs one page lists. */
const MAX_PAGE = 1000;
/** A laned queue reads `offset + limit` ids of every lane to merge them: at most this many. */
export const MAX_LANED_DEPTH = 10_000;

export interface PageOptions {
  /** Jobs skipped from the start of the order (default 0). */
  offset?: number;
  /** Jobs listed at most (1 to 1000, default 50). */
  limit?: number;
}

/**
 * Each state's set and order: pending in claim order (priority, then id), scheduled by due time,
 * active by lease deadline (soonest first), completed and dead newest first.
 */
export const LISTING: Record<JobState, { set: QueueKeyType; newestFirst: boolean }> = {
  pending: { set: "pending", newestFirst: false },
  scheduled: { set: "schedule", newestFirst: false },
  active: { set: "active", newestFirst: false },
  completed: { set: "done", newestFirst: true },
  dead: { set: "dead", newestFirst: true },
  waiting: { set: "waiting", newestFirst: false },
};

export function assertJobState(state: unknown): JobState {
  if (typeof state !== "string" || !Object.hasOwn(LISTING, state)) {
    throw new InvalidArgumentError(
      "state",
      `must be one of ${Object.keys(LISTING).join(", ")}, got ${typeof state === "string" ? JSON.stringify(state) : typeof state}`,
    );
  }
  return state as JobState;
}

/** The page's bounds, checked: `offset` ≥ 0, `limit` 1 to 1000. */
export function pageOf(opts: PageOptions | undefined): { offset: number; limit: number } {
  const keys = { offset: "number", limit: "number" } satisfies Record<keyof PageOptions, KeyType>;
  checkKeys(opts, { of: "getJobs", keys, foreign: { start: "offset", end: "limit (how many)" } });
  const offset = opts?.offset ?? 0;
  const limit = opts?.limit ?? 50;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new InvalidArgumentError("offset", `must be a non-negative integer, got ${String(offset)}`);
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new InvalidArgumentError("limit", `must be an integer from 1 to ${MAX_PAGE}, got ${String(limit)}`);
  }
  return { offset, limit };
}

/** One listed id: where it is, and its score in the state's set. */
export interface Listed {
  id: string;
  lane: string;
  score: number;
}

/** `ZRANGE … WITHSCORES` as a flat reply `[member, score, …]` → listed ids of `lane`. */
export function listedOf(lane: string, flat: readonly unknown[]): Listed[] {
  const out: Listed[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    out.push({ id: String(flat[i]), lane, score: Number(String(flat[i + 1])) });
  }
  return out;
}

/**
 * The page `[offset, offset + limit)` of several lanes' lists, each already in the state's
 * order and holding at least its first `offset + limit`: merged as the sets order (score, then
 * id; both descending for newest first).
 */
export function mergePage(
  lists: readonly Listed[][],
  newestFirst: boolean,
  offset: number,
  limit: number,
): Listed[] {
  const sign = newestFirst ? -1 : 1;
  const all = lists.flat();
  all.sort((a, b) => sign * (a.score - b.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  return all.slice(offset, offset + limit);
}
