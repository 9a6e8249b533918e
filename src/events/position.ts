/**
 * Where a reader of a queue's event bus stands, and the gap it owes its listeners when the
 * stream was trimmed past it. Pure functions over what one atomic read saw (`MULTI`, `XINFO
 * STREAM`, `XREAD COUNT n STREAMS <events> <last id>`, `EXEC`).
 *
 * The bus only ever trims from the head (`MAXLEN ~`, `MINID ~`: whole nodes), never deletes an
 * entry in the middle, so the entries deleted so far are exactly the first `added - length` ever
 * written. A reader that knows its **offset** — how many entries had been written up to and
 * including the last one it saw — knows exactly how many it missed: `(added - length) - offset`
 * when that is positive. It learns its offset when it starts at the stream's end or at its very
 * beginning, and whenever a read drains the stream to its end; a reader resumed from an id it
 * was given does not know it until then, and a gap found meanwhile is an upper bound.
 */
import { compareIds } from "./entry.js";

/** What `XINFO STREAM` said in the same transaction as the read (an absent stream: all zero). */
export interface StreamInfo {
  length: number;
  /** `entries-added`: every entry ever written, trimmed ones included. */
  added: number;
  /** The first entry's id; null when the stream is empty. */
  first: string | null;
  /** `last-generated-id`. */
  lastGenerated: string;
}

export const NO_STREAM: StreamInfo = { length: 0, added: 0, first: null, lastGenerated: "0-0" };

export interface Position {
  /** The last entry id seen (`0-0`: before the first entry). */
  lastId: string;
  /** How many entries had been written up to `lastId`, when known. */
  offset: number | null;
}

/** Entries the reader may have missed: trimmed before it read them. */
export interface Gap {
  /** The last id the reader saw before the gap. */
  after: string;
  /** The first entry after the gap (the stream's first now), or null if the stream is empty. */
  resumedAt: string | null;
  /** How many entries were missed (`exact`), or at most how many (an offset not known yet). */
  missed: number;
  exact: boolean;
}

/** A reader starting at the stream's end (`$`): it sees what is written from now on. */
export function atEnd(info: StreamInfo): Position {
  return { lastId: info.lastGenerated, offset: info.added };
}

/** A reader starting before the stream's first entry ever (`0`): every entry is owed. */
export const AT_START: Position = { lastId: "0-0", offset: 0 };

/** A reader resumed after `lastId` (an id it saw before): its offset is not known yet. */
export function after(lastId: string): Position {
  return { lastId, offset: null };
}

/**
 * The position after one atomic read that returned `read` entries (`lastRead`: the last one's
 * id) of the `asked` at most, with `info` as `XINFO` saw the stream in the same transaction; and
 * the gap found, if any.
 */
export function advance(
  pos: Position,
  info: StreamInfo,
  read: { count: number; lastRead: string | null },
  asked: number,
): { position: Position; gap: Gap | null } {
  const trimmed = info.added - info.length;
  // A stream written fewer times than the reader's offset was deleted and made anew.
  let offset = pos.offset !== null && info.added < pos.offset ? null : pos.offset;
  let gap: Gap | null = null;
  const resumedAt = info.first;
  if (offset !== null) {
    if (trimmed > offset) {
      gap = { after: pos.lastId, resumedAt, missed: trimmed - offset, exact: true };
      offset = trimmed;
    }
  } else {
    // Behind the first entry (or, the stream emptied, behind its last id): entries written after
    // the reader's last id may be among the trimmed ones — how many is not known.
    const behind = compareIds(pos.lastId, info.first ?? info.lastGenerated) < 0;
    if (behind && trimmed > 0) {
      gap = { after: pos.lastId, resumedAt, missed: trimmed, exact: false };
      offset = trimmed;
    }
  }
  const lastId = read.lastRead ?? pos.lastId;
  if (offset !== null) return { position: { lastId, offset: offset + read.count }, gap };
  // Drained to the end: the last entry read is the stream's last, written `added`-th.
  return { position: { lastId, offset: read.count < asked ? info.added : null }, gap };
}
