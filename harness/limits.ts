/**
 * The listed cases of flow control: `LIMIT` (its scopes, what it writes, its refusals in order,
 * the parked ids it sends back) and every branch it adds to `CLAIM` — the queue's concurrency and
 * rate window (limited replies), a group's concurrency (parked) and rate (to `schedule` at the
 * window's end), the bound on skipped heads — and each release path: `COMPLETE`, `FAIL` (to
 * pending, to schedule, dead), `REAP`, `REQUEUE`. Claims that read or write a rate window run
 * exact (one clock for both sides: the window's start is compared byte for byte).
 */
import { C, type Case, claim, enq, J, key, row, seed, wait } from "./build.js";
import type { Action } from "./actions.js";
import type { DerivedKey } from "../src/keyspace.js";
import type { KeyRef } from "./executors.js";

const exact = { mode: "exact" as const };
const limit = (scope: string, group: string, max: string, ms: string, concurrency: string) =>
  C("LIMIT", [scope, group, max, ms, concurrency]);
const claimX = () => claim("30000", exact);
const derived = (name: DerivedKey, param?: string): KeyRef => ({ q: "A", derived: name, param });
/** `id` added in group `g` (ADD's `<group>`). */
const grouped = (id: string, g: string, priority = "0"): Action[] => [
  C("ADD", [id, "p", priority, "0", "0", "", g, "", "0", "0", "", "", ""]),
];
const complete = (id: string, token = "1") => C("COMPLETE", [id, token, "ok", "10"]);

export const LIMIT_CASES: Case[] = [
  /* LIMIT: scopes and writes */
  {
    name: "LIMIT: queue limits set, replaced, cleared (0 deletes the field)",
    actions: [
      limit("queue", "", "10", "1000", "5"),
      limit("queue", "", "0", "0", "5"),
      limit("queue", "", "0", "0", "0"),
    ],
  },
  {
    name: "LIMIT: group defaults, a group's own (0 kept), ungroup",
    actions: [
      limit("default", "", "3", "500", "2"),
      limit("group", "g1", "0", "0", "0"),
      limit("group", "g:2 x", "7", "100", "1"),
      limit("ungroup", "g1", "0", "0", "0"),
      limit("ungroup", "nobody", "0", "0", "0"),
    ],
  },
  {
    name: "LIMIT: refusals in order",
    actions: [
      limit("queues", "", "1", "1", "1"),
      limit("queue", "g", "1", "1", "1"),
      limit("default", "g", "x", "1", "1"),
      limit("group", "", "1", "1", "1"),
      limit("group", "a\nb", "1", "1", "1"),
      limit("group", "a\x7f", "1", "1", "1"),
      limit("ungroup", "x".repeat(256), "1", "1", "1"),
      limit("group", "x".repeat(255), "-1", "1", "1"),
      limit("queue", "", "01", "1", "1"),
      limit("queue", "", "1", "x", "1"),
      limit("queue", "", "1", "1", "-1"),
      limit("queue", "", "1", "0", "1"),
      limit("queue", "", "0", "5", "1"),
      C("LIMIT", ["queue", "", "1", "1"]),
    ],
  },
  {
    name: "LIMIT: limits not a hash",
    actions: [seed(["SET", derived("limits"), "x"]), limit("queue", "", "0", "0", "1")],
  },
  {
    name: "LIMIT: pending not a sorted set",
    actions: [seed(["SET", key("pending"), "x"]), limit("queue", "", "0", "0", "1")],
  },
  {
    name: "LIMIT: parked not a sorted set",
    actions: [seed(["SET", derived("parked"), "x"]), limit("queue", "", "0", "0", "1")],
  },

  /* CLAIM: the queue's concurrency */
  {
    name: "CLAIM: queue concurrency full → 0, nothing written; a completion opens a slot (wake)",
    actions: [
      enq(J(1)),
      enq(J(2)),
      limit("queue", "", "0", "0", "1"),
      claim(),
      claim(),
      complete(J(1)),
      claim(),
      claim(),
    ],
  },
  {
    name: "CLAIM: queue concurrency, an empty queue answers limited first",
    actions: [enq(J(1)), limit("queue", "", "0", "0", "1"), claim(), claim()],
  },

  /* CLAIM: the queue's rate window */
  {
    name: "CLAIM: rate 2 per minute: two claims, then the wait until the window opens",
    actions: [
      enq(J(1)),
      enq(J(2)),
      enq(J(3)),
      limit("queue", "", "2", "60000", "0"),
      claimX(),
      claimX(),
      claimX(),
    ],
  },
  {
    name: "CLAIM: a rate window that ended starts again",
    actions: [
      enq(J(1)),
      enq(J(2)),
      enq(J(3)),
      limit("queue", "", "1", "5", "0"),
      claimX(),
      wait(10),
      claimX(),
      claimX(),
    ],
  },
  {
    name: "CLAIM: an odd window (start not a count, count not a count) reads as none / 0",
    actions: [
      enq(J(1)),
      enq(J(2)),
      limit("queue", "", "1", "60000", "0"),
      seed(["HSET", derived("rate"), "start", "x", "count", "9"]),
      claimX(),
      seed(["HSET", derived("rate"), "count", "y"]),
      claimX(),
    ],
  },
  { name: "CLAIM: limits not a hash", actions: [enq(J(1)), seed(["SET", derived("limits"), "x"]), claim()] },
  {
    name: "CLAIM: rate not a hash",
    actions: [enq(J(1)), limit("queue", "", "1", "1000", "0"), seed(["SET", derived("rate"), "x"]), claim()],
  },

  /* CLAIM: groups */
  {
    name: "CLAIM: group concurrency parks the group's next head, other groups pass; release unparks",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1", "-3"),
      ...grouped(J(3), "g2"),
      enq(J(4)),
      limit("default", "", "0", "0", "1"),
      claim(),
      claim(),
      claim(),
      claim(),
      complete(J(2)),
      claim(),
    ],
  },
  {
    name: "CLAIM: a group's own concurrency (0: none) beats the default",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1"),
      ...grouped(J(3), "g2"),
      ...grouped(J(4), "g2"),
      limit("default", "", "0", "0", "1"),
      limit("group", "g2", "0", "0", "0"),
      claim(),
      claim(),
      claim(),
      claim(),
    ],
  },
  {
    name: "CLAIM: group rate sends the head to schedule at the window's end",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1"),
      ...grouped(J(3), "g2"),
      limit("group", "g1", "1", "60000", "0"),
      claimX(),
      claimX(),
      claimX(),
    ],
  },
  {
    name: "CLAIM: default group rate, then the window ends and promote brings the job back",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1"),
      limit("default", "", "1", "5", "0"),
      claimX(),
      claimX(),
      wait(10),
      C("PROMOTE", ["100"], exact),
      claimX(),
    ],
  },
  {
    name: "CLAIM: a group's active count not a count reads as 0; groups not a hash",
    actions: [
      ...grouped(J(1), "g1"),
      limit("default", "", "0", "0", "1"),
      seed(["HSET", derived("groups"), "g1", "x"]),
      claim(),
      ...grouped(J(2), "g2"),
      seed(["SET", derived("groups"), "x"]),
      claim(),
    ],
  },
  {
    name: "CLAIM: 100 heads parked and more behind → 1; the next claim passes them",
    actions: [
      seed(
        ["HSET", derived("groups"), "g", "1"],
        ...Array.from({ length: 101 }, (_, i) => [
          ["ZADD", key("pending"), "0", J(i + 1)],
          ["HSET", row(J(i + 1)), "state", "pending", "attempts", "0", "payload", "p", "group", "g"],
        ]).flat(),
        ["ZADD", key("pending"), "0", J(200)],
        ["HSET", row(J(200)), "state", "pending", "attempts", "0", "payload", "p"],
      ),
      limit("default", "", "0", "0", "1"),
      claim(),
      claim(),
    ],
  },
  {
    name: "CLAIM: orphans and parked heads together",
    actions: [
      ...grouped(J(3), "g1"),
      ...grouped(J(4), "g1"),
      enq(J(5)),
      seed(["ZADD", key("pending"), "-1", "XYZ1"], ["HSET", derived("groups"), "g1", "1"]),
      limit("default", "", "0", "0", "1"),
      claim(),
    ],
  },

  /* releases */
  {
    name: "release: FAIL to pending, to schedule and to dead each unpark one",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1"),
      ...grouped(J(3), "g1"),
      ...grouped(J(4), "g1"),
      limit("default", "", "0", "0", "1"),
      claim(),
      claim(),
      C("FAIL", [J(1), "1", "e", "0", "5", "10", ""]),
      claim(),
      C("FAIL", [J(2), "1", "e", "60000", "5", "10", ""]),
      claim(),
      C("FAIL", [J(3), "1", "e", "0", "1", "10", ""]),
      claim(),
    ],
  },
  {
    name: "release: REAP of expired leases unparks (one per group), wakes",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1"),
      ...grouped(J(3), "g2"),
      ...grouped(J(4), "g2"),
      limit("default", "", "0", "0", "1"),
      claim("1"),
      claim("1"),
      claim("1"),
      wait(5),
      C("REAP", ["100", "5", "10"], exact),
      claim(),
    ],
  },
  {
    name: "release: REQUEUE unparks; COMPLETE keep 0 too",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1"),
      limit("default", "", "0", "0", "1"),
      claim(),
      claim(),
      C("REQUEUE", [J(1), "1", "3"]),
      claim(),
      C("COMPLETE", [J(1), "2", "r", "0"]),
      claim(),
    ],
  },
  {
    name: "release: a queue concurrency limit wakes on every completion",
    actions: [enq(J(1)), limit("queue", "", "0", "0", "5"), claim(), complete(J(1))],
  },
  {
    name: "release: a parked set or groups of another type is passed over",
    actions: [
      ...grouped(J(1), "g1"),
      claim(),
      seed(["SET", derived("group", "g1"), "x"], ["SET", derived("groups"), "x"]),
      complete(J(1)),
    ],
  },
  {
    name: "LIMIT: parked ids go back to pending with their scores",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1", "4"),
      ...grouped(J(3), "g2"),
      ...grouped(J(4), "g2"),
      limit("default", "", "0", "0", "1"),
      claim(),
      claim(),
      claim(),
      limit("default", "", "0", "0", "0"),
      claim(),
    ],
  },

  /* OBLITERATE: flow control goes with the queue */
  {
    name: "OBLITERATE: force deletes a limited queue with parked jobs, windows and counts",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1"),
      enq(J(3)),
      limit("default", "", "0", "0", "1"),
      limit("queue", "", "5", "60000", "0"),
      claimX(),
      claimX(),
      C("OBLITERATE", ["1", "1"]),
      C("OBLITERATE", ["1", "100"]),
    ],
  },
  {
    name: "OBLITERATE: a queue with only its limits left deletes them",
    actions: [
      limit("queue", "", "0", "0", "3"),
      C("OBLITERATE", ["0", "100"]),
      C("OBLITERATE", ["0", "100"]),
    ],
  },
  {
    name: "OBLITERATE: a parked set of another type is deleted, its ids unread",
    actions: [
      limit("queue", "", "0", "0", "3"),
      seed(["ZADD", derived("parked"), "0", "g"], ["SET", derived("group", "g"), "x"]),
      C("OBLITERATE", ["0", "100"]),
    ],
  },
  /* DRAIN: parked jobs are waiting jobs */
  {
    name: "DRAIN: parked jobs go after pending and schedule, bounded, group by group",
    actions: [
      ...grouped(J(1), "g1"),
      ...grouped(J(2), "g1"),
      ...grouped(J(3), "g1"),
      ...grouped(J(4), "g2"),
      ...grouped(J(5), "g2"),
      C("ADD", [J(6), "p", "0", "60000", "0", "", "", "", "0", "0", "", "", ""]),
      enq(J(7)),
      limit("default", "", "0", "0", "1"),
      claim(),
      claim(),
      claim(),
      claim(),
      C("DRAIN", ["3"]),
      C("DRAIN", ["100"]),
      C("DRAIN", ["100"]),
    ],
  },
  {
    name: "DRAIN: a parked set of another type holds none",
    actions: [
      seed(["ZADD", derived("parked"), "0", "g"], ["SET", derived("group", "g"), "x"]),
      C("DRAIN", ["100"]),
    ],
  },
];
