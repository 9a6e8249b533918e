/**
 * The reader's position and its gaps (src/events/position.ts), as pure functions; and the typed
 * entries (src/events/entry.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compareIds, isStreamId, parseEntry } from "../src/events/entry.js";
import { AT_START, advance, after, atEnd, NO_STREAM, type StreamInfo } from "../src/events/position.js";

const info = (length: number, added: number, first: string | null, lastGenerated: string): StreamInfo => ({
  length,
  added,
  first,
  lastGenerated,
});

describe("the reader's position", () => {
  test("a reader that keeps up: its offset follows, no gap", () => {
    const start = atEnd(info(3, 3, "1-0", "3-0"));
    assert.deepEqual(start, { lastId: "3-0", offset: 3 });
    const next = advance(start, info(5, 5, "1-0", "5-0"), { count: 2, lastRead: "5-0" }, 100);
    assert.deepEqual(next, { position: { lastId: "5-0", offset: 5 }, gap: null });
  });

  test("the trim passed the reader: the exact count missed, then it follows from the first entry", () => {
    const pos = { lastId: "5-0", offset: 5 };
    // 200 written since, 100 trimmed from the head (5 of them seen): 95 missed.
    const { position, gap } = advance(
      pos,
      info(105, 205, "101-0", "205-0"),
      { count: 100, lastRead: "200-0" },
      100,
    );
    assert.deepEqual(gap, { after: "5-0", resumedAt: "101-0", missed: 95, exact: true });
    assert.deepEqual(position, { lastId: "200-0", offset: 200 });
  });

  test("the reader's own last entry trimmed, nothing after it: no gap", () => {
    const { gap } = advance(
      { lastId: "5-0", offset: 5 },
      info(3, 8, "6-0", "8-0"),
      { count: 3, lastRead: "8-0" },
      100,
    );
    assert.equal(gap, null);
  });

  test("a reader from the start is owed every entry: a trimmed head is an exact gap", () => {
    const { gap, position } = advance(
      AT_START,
      info(4, 10, "7-0", "10-0"),
      { count: 4, lastRead: "10-0" },
      100,
    );
    assert.deepEqual(gap, { after: "0-0", resumedAt: "7-0", missed: 6, exact: true });
    assert.deepEqual(position, { lastId: "10-0", offset: 10 });
  });

  test("a resumed reader behind the first entry: at most the trimmed count; then it knows its offset", () => {
    const { gap, position } = advance(
      after("3-0"),
      info(4, 10, "7-0", "10-0"),
      { count: 2, lastRead: "8-0" },
      2,
    );
    assert.deepEqual(gap, { after: "3-0", resumedAt: "7-0", missed: 6, exact: false });
    assert.deepEqual(position, { lastId: "8-0", offset: 8 });
  });

  test("a resumed reader ahead of the trim learns its offset when it drains the stream", () => {
    const full = advance(after("7-0"), info(4, 10, "7-0", "10-0"), { count: 2, lastRead: "9-0" }, 2);
    assert.deepEqual(full, { position: { lastId: "9-0", offset: null }, gap: null });
    const drained = advance(full.position, info(4, 10, "7-0", "10-0"), { count: 1, lastRead: "10-0" }, 2);
    assert.deepEqual(drained, { position: { lastId: "10-0", offset: 10 }, gap: null });
  });

  test("a stream emptied by the age trim, or made anew", () => {
    const emptied = advance(
      { lastId: "5-0", offset: 5 },
      info(0, 9, null, "9-0"),
      { count: 0, lastRead: null },
      10,
    );
    assert.deepEqual(emptied.gap, { after: "5-0", resumedAt: null, missed: 4, exact: true });
    const anew = advance(
      { lastId: "5-0", offset: 5 },
      info(1, 1, "20-0", "20-0"),
      { count: 1, lastRead: "20-0" },
      10,
    );
    assert.deepEqual(anew, { position: { lastId: "20-0", offset: 1 }, gap: null });
    assert.deepEqual(atEnd(NO_STREAM), { lastId: "0-0", offset: 0 });
  });
});

describe("the entries", () => {
  const b = (...fields: string[]) => fields.map((f) => Buffer.from(f));
  test("typed fields, and null for a kind no transition writes", () => {
    assert.deepEqual(
      parseEntry("1-0", b("event", "failed", "id", "JOB1", "attempt", "2", "reason", "boom")),
      {
        eventId: "1-0",
        kind: "failed",
        jobId: "JOB1",
        attempt: 2,
        reason: "boom",
      },
    );
    assert.deepEqual(parseEntry("2-0", b("event", "paused")), { eventId: "2-0", kind: "paused" });
    const progress = parseEntry("3-0", b("event", "progress", "id", "JOB1", "attempt", "1", "data", "50"));
    assert.equal(progress?.data?.toString(), "50");
    assert.equal(parseEntry("4-0", b("event", "exploded")), null);
    assert.equal(parseEntry("5-0", b("id", "JOB1")), null);
  });

  test("ids: order and grammar", () => {
    assert.equal(compareIds("1-0", "1-1"), -1);
    assert.equal(compareIds("2-0", "1-99"), 1);
    assert.equal(compareIds("18446744073709551615-0", "18446744073709551614-5"), 1);
    assert.equal(compareIds("7", "7-0"), 0);
    for (const ok of ["0", "0-0", "1700000000000-3"]) assert.equal(isStreamId(ok), true, ok);
    for (const bad of ["$", "-", "01", "1-", "x", "", "1-2-3"]) assert.equal(isStreamId(bad), false, bad);
  });
});
