/**
 * The listed cases: every verb's success paths, its domain refusals (gates, wrong types, stale
 * lease tokens), edge values (empty, binary and 1 MiB payloads, priority extremes, a 1 ms lease),
 * lease-exact variants (one MULTI/EXEC), the paused claim (D2, D7) and the native-only verb
 * (D8). The refusals every verb shares — shape, layout (D3), fence (D4), write guard (D5), a
 * numkeys EVAL refuses (P1) — are generated for all verbs in harness/refusals.ts.
 */
import {
  addJob,
  BIG,
  C,
  type Case,
  claim,
  claimed,
  enq,
  exact,
  fail,
  J,
  key,
  NO_EXTRAS,
  promote,
  row,
  seed,
  TRACE,
  wait,
  wrongType,
} from "./build.js";
import { HANDBACK_CASES } from "./handbacks.js";
import { CLAIM_CASES } from "./claims.js";
import type { Action } from "./actions.js";
import { TRACE_CASES } from "./traces.js";

const BINARY = Buffer.from([0, 1, 13, 10, 0, 255, 254, 13, 10, 0x22, 0x5c, 0]);
const MIB = Buffer.alloc(1 << 20, 0);
for (let i = 0; i < MIB.length; i++) MIB[i] = (i * 31 + 7) & 0xff;
// The AOF check looks for "emq." in any case: keep the pattern out of the 1 MiB payload.
for (let i = 0; i + 3 < MIB.length; i++)
  if (
    MIB.subarray(i, i + 4)
      .toString("latin1")
      .toLowerCase() === "emq."
  )
    MIB[i + 3] = 0x20;

const complete = (id: string, token = "1", keep = "10", result: string | Buffer = "ok") =>
  C("COMPLETE", [id, token, result, keep]);
const extend = (id: string, token = "1", lease = "60000", o = {}) => C("EXTEND", [id, token, lease], o);
const reap = (limit = "100", max = "5", keep = "10") => C("REAP", [limit, max, keep]);
const retry = (id: string, extra = "1") => C("RETRY", [id, extra]);
const remove = (id: string) => C("REMOVE", [id]);
const pause = C("PAUSE", []);
const resume = C("RESUME", []);
/** A job claimed then failed to dead (max attempts 1). */
const deadJob = (id: string, keep = "10"): Action[] => [...claimed(id), fail(id, "1", "0", "1", keep)];

export const CASES: Case[] = [
  /* ENQUEUE */
  { name: "ENQUEUE: a new job", actions: [enq(J(1))] },
  { name: "ENQUEUE: duplicate id answers 0, writes nothing", actions: [enq(J(1)), enq(J(1), "other")] },
  { name: "ENQUEUE: empty payload", actions: [enq(J(1), ""), claim()] },
  { name: "ENQUEUE: binary payload with NUL and CRLF", actions: [enq(J(1), BINARY), claim()] },
  { name: "ENQUEUE: 1 MiB payload", actions: [enq(J(1), MIB), claim()] },
  { name: "ENQUEUE: id without the JOB prefix", actions: [enq("XYZ00000000001")] },
  { name: "ENQUEUE: a bare JOB prefix passes the id gate", actions: [enq("JOB"), claim()] },
  { name: "ENQUEUE: pending not a sorted set", actions: [wrongType("pending"), enq(J(1))] },
  {
    name: "ENQUEUE: row exists as a string (duplicate)",
    actions: [seed(["SET", row(J(1)), "x"]), enq(J(1))],
  },
  { name: "ENQUEUE: equal priority is FIFO by id", actions: [enq(J(2)), enq(J(1)), claim(), claim()] },

  /* ADD */
  { name: "ADD: ready now, defaults", actions: [addJob(J(1))] },
  {
    name: "ADD: priority extremes order claims",
    actions: [addJob(J(1), BIG), addJob(J(2), `-${BIG}`), addJob(J(3), "7"), claim(), claim(), claim()],
  },
  { name: "ADD: delayed into schedule (window)", actions: [addJob(J(1), "0", "5000")] },
  {
    name: "ADD: delayed, lease-exact",
    actions: [C("ADD", [J(1), "p", "3", "5000", "2", TRACE, ...NO_EXTRAS], exact)],
  },
  { name: "ADD: max delay", actions: [addJob(J(1), "0", BIG, BIG)] },
  { name: "ADD: max_attempts kept on the row", actions: [addJob(J(1), "-4", "0", "3")] },
  { name: "ADD: duplicate id", actions: [addJob(J(1)), addJob(J(1), "5")] },
  ...["-0", "01", "+1", "1000000000000000", "-1000000000000000", "abc", "", "1.5", " 1"].map((p) => ({
    name: `ADD: priority ${JSON.stringify(p)} refused`,
    actions: [addJob(J(1), p)],
  })),
  ...["-1", "01", "1.5", "1000000000000000", "x"].map((d) => ({
    name: `ADD: delay ${JSON.stringify(d)} refused`,
    actions: [addJob(J(1), "0", d)],
  })),
  ...["-1", "01", "x"].map((m) => ({
    name: `ADD: max attempts ${JSON.stringify(m)} refused`,
    actions: [addJob(J(1), "0", "0", m)],
  })),
  ...TRACE_CASES,
  { name: "ADD: id without the JOB prefix", actions: [addJob("job00000000001")] },
  { name: "ADD: schedule not a sorted set", actions: [wrongType("schedule"), addJob(J(1), "0", "10")] },
  { name: "ADD: pending not a sorted set", actions: [wrongType("pending"), addJob(J(1))] },

  ...CLAIM_CASES,

  /* EXTEND */
  { name: "EXTEND: renews the lease (window)", actions: [...claimed(J(1)), extend(J(1))] },
  { name: "EXTEND: lease-exact", actions: [...claimed(J(1)), extend(J(1), "1", "60000", exact)] },
  { name: "EXTEND: lease 1 ms", actions: [...claimed(J(1)), extend(J(1), "1", "1")] },
  { name: "EXTEND: job not active (pending)", actions: [enq(J(1)), extend(J(1))] },
  { name: "EXTEND: stale lease token", actions: [...claimed(J(1)), extend(J(1), "2")] },
  {
    name: "EXTEND: token is text-compared",
    actions: [...claimed(J(1)), seed(["HSET", row(J(1)), "attempts", "01"]), extend(J(1), "1")],
  },
  { name: "EXTEND: job not found", actions: [extend(J(1))] },
  { name: "EXTEND: row not a hash", actions: [seed(["SET", row(J(1)), "x"]), extend(J(1))] },
  {
    name: "EXTEND: state active but not in active",
    actions: [...claimed(J(1)), seed(["ZREM", key("active"), J(1)]), extend(J(1))],
  },
  { name: "EXTEND: id without the JOB prefix", actions: [extend("XOB00000000001")] },
  ...["0", "01", "-1", "x"].map((t) => ({
    name: `EXTEND: token ${JSON.stringify(t)} refused`,
    actions: [...claimed(J(1)), extend(J(1), t)],
  })),
  ...["0", "-5", "1000000000000000"].map((l) => ({
    name: `EXTEND: lease ${JSON.stringify(l)} refused`,
    actions: [...claimed(J(1)), extend(J(1), "1", l)],
  })),
  { name: "EXTEND: active not a sorted set", actions: [wrongType("active"), extend(J(1))] },

  /* COMPLETE */
  { name: "COMPLETE: kept in done", actions: [...claimed(J(1)), complete(J(1))] },
  {
    name: "COMPLETE: lease-exact",
    actions: [...claimed(J(1)), C("COMPLETE", [J(1), "1", "r", "10"], exact)],
  },
  { name: "COMPLETE: keep 0 deletes the row", actions: [...claimed(J(1)), complete(J(1), "1", "0")] },
  { name: "COMPLETE: binary result", actions: [...claimed(J(1)), complete(J(1), "1", "10", BINARY)] },
  { name: "COMPLETE: empty result", actions: [...claimed(J(1)), complete(J(1), "1", "10", "")] },
  {
    name: "COMPLETE: retention keeps the newest",
    actions: [
      enq(J(1)),
      enq(J(2)),
      enq(J(3)),
      claim(),
      claim(),
      claim(),
      complete(J(1), "1", "1"),
      complete(J(2), "1", "1"),
      complete(J(3), "1", "1"),
    ],
  },
  {
    name: "COMPLETE: retention removes at most 10 per call",
    actions: [
      seed(
        ...Array.from({ length: 15 }, (_, i) => ["ZADD", key("done"), String(i + 1), J(100 + i)]),
        ...Array.from({ length: 15 }, (_, i) => ["HSET", row(J(100 + i)), "state", "completed"]),
      ),
      ...claimed(J(1)),
      complete(J(1), "1", "1"),
    ],
  },
  { name: "COMPLETE: job not active", actions: [enq(J(1)), complete(J(1))] },
  { name: "COMPLETE: stale lease token", actions: [...claimed(J(1)), complete(J(1), "3")] },
  { name: "COMPLETE: job not found", actions: [complete(J(1))] },
  { name: "COMPLETE: keep refused", actions: [...claimed(J(1)), complete(J(1), "1", "-1")] },
  { name: "COMPLETE: done not a sorted set", actions: [...claimed(J(1)), wrongType("done"), complete(J(1))] },
  { name: "COMPLETE: twice", actions: [...claimed(J(1)), complete(J(1)), complete(J(1))] },

  /* FAIL */
  {
    name: "FAIL: back to pending at the row's priority",
    actions: [addJob(J(1), "5"), claim(), fail(J(1), "1")],
  },
  { name: "FAIL: scheduled after a backoff (window)", actions: [...claimed(J(1)), fail(J(1), "1", "1000")] },
  {
    name: "FAIL: scheduled, lease-exact",
    actions: [...claimed(J(1)), C("FAIL", [J(1), "1", "e", "1000", "5", "10", ""], exact)],
  },
  { name: "FAIL: dead at max attempts", actions: deadJob(J(1)) },
  { name: "FAIL: dead, keep 0 deletes the row", actions: deadJob(J(1), "0") },
  {
    name: "FAIL: the row's max_attempts wins",
    actions: [addJob(J(1), "0", "0", "1"), claim(), fail(J(1), "1", "0", "5")],
  },
  {
    name: "FAIL: a malformed row max_attempts is ignored",
    actions: [...claimed(J(1)), seed(["HSET", row(J(1)), "max_attempts", "0"]), fail(J(1), "1", "0", "5")],
  },
  {
    name: "FAIL: max attempts 0 is dead now, over the row's own",
    actions: [addJob(J(1), "0", "0", "9"), claim(), fail(J(1), "1", "1000", "0")],
  },
  { name: "FAIL: dead retention", actions: [...deadJob(J(1), "1"), ...deadJob(J(2), "1")] },
  { name: "FAIL: binary error text", actions: [...claimed(J(1)), fail(J(1), "1", "0", "5", "10", BINARY)] },
  { name: "FAIL: stale lease token", actions: [...claimed(J(1)), fail(J(1), "2")] },
  { name: "FAIL: job not active", actions: [enq(J(1)), fail(J(1), "1")] },
  { name: "FAIL: job not found", actions: [fail(J(1), "1")] },
  ...(
    [
      ["backoff", "-1", "5", "10"],
      ["max attempts", "0", "-1", "10"],
      ["keep", "0", "5", "01"],
    ] as const
  ).map(([what, b, m, k]) => ({
    name: `FAIL: ${what} refused`,
    actions: [...claimed(J(1)), fail(J(1), "1", b, m, k)],
  })),
  { name: "FAIL: dead not a sorted set", actions: [...claimed(J(1)), wrongType("dead"), fail(J(1), "1")] },

  /* RETRY */
  { name: "RETRY: dead back to pending", actions: [...deadJob(J(1)), retry(J(1), "2"), claim()] },
  {
    name: "RETRY: keeps the row's priority",
    actions: [addJob(J(1), "-3"), claim(), fail(J(1), "1", "0", "1"), retry(J(1))],
  },
  {
    name: "RETRY: extra attempts at the limit (a 16-digit max_attempts reads as absent)",
    actions: [...deadJob(J(1)), retry(J(1), BIG), claim(), fail(J(1), "2", "0", "5")],
  },
  { name: "RETRY: job not dead", actions: [enq(J(1)), retry(J(1))] },
  {
    name: "RETRY: in dead but state pending",
    actions: [enq(J(1)), seed(["ZADD", key("dead"), "1", J(1)]), retry(J(1))],
  },
  {
    name: "RETRY: state dead but not in dead",
    actions: [...deadJob(J(1)), seed(["ZREM", key("dead"), J(1)]), retry(J(1))],
  },
  { name: "RETRY: job not found", actions: [retry(J(1))] },
  {
    name: "RETRY: malformed attempts count as 0",
    actions: [...deadJob(J(1)), seed(["HSET", row(J(1)), "attempts", "x"]), retry(J(1), "3")],
  },
  { name: "RETRY: extra attempts refused", actions: [...deadJob(J(1)), retry(J(1), "0")] },
  { name: "RETRY: pending not a sorted set", actions: [...deadJob(J(1)), wrongType("pending"), retry(J(1))] },

  /* PROMOTE */
  {
    name: "PROMOTE: due ids move to pending",
    actions: [addJob(J(1), "2", "1"), addJob(J(2), "0", "1"), wait(5), promote(), claim()],
  },
  { name: "PROMOTE: nothing due", actions: [addJob(J(1), "0", "100000"), promote()] },
  {
    name: "PROMOTE: three due ids, one wake naming 3",
    actions: [addJob(J(1), "0", "1"), addJob(J(2), "0", "1"), addJob(J(3), "4", "1"), wait(5), promote()],
  },
  {
    // Lease-exact: due times that tie on one side and not on the other would order differently.
    name: "PROMOTE: limit 1, oldest first (lease-exact)",
    actions: [
      C("ADD", [J(3), "p", "0", "1", "0", "", ...NO_EXTRAS], exact),
      C("ADD", [J(2), "p", "0", "1", "0", "", ...NO_EXTRAS], exact),
      C("ADD", [J(1), "p", "0", "2", "0", "", ...NO_EXTRAS], exact),
      wait(5),
      C("PROMOTE", ["1"], exact),
      C("PROMOTE", ["1"], exact),
      C("PROMOTE", ["1"], exact),
    ],
  },
  {
    name: "PROMOTE: orphan and non-JOB ids removed, not counted",
    actions: [seed(["ZADD", key("schedule"), "1", J(9)], ["ZADD", key("schedule"), "1", "XYZ"]), promote()],
  },
  ...["0", "10001", "x", "-1"].map((l) => ({
    name: `PROMOTE: limit ${JSON.stringify(l)} refused`,
    actions: [promote(l)],
  })),
  { name: "PROMOTE: limit 10000", actions: [addJob(J(1), "0", "1"), wait(3), promote("10000")] },
  { name: "PROMOTE: pending not a sorted set", actions: [wrongType("pending"), promote()] },
  {
    name: "PROMOTE: a malformed row priority reads as 0",
    actions: [addJob(J(1), "0", "1"), seed(["HSET", row(J(1)), "priority", "01"]), wait(3), promote()],
  },

  /* REAP */
  { name: "REAP: an expired lease back to pending", actions: [...claimed(J(1), "1"), wait(5), reap()] },
  { name: "REAP: exhausted to dead", actions: [...claimed(J(1), "1"), wait(5), reap("100", "1")] },
  {
    name: "REAP: exhausted, keep 0 deletes the row",
    actions: [...claimed(J(1), "1"), wait(5), reap("100", "1", "0")],
  },
  {
    name: "REAP: the row's max_attempts wins",
    actions: [addJob(J(1), "0", "0", "1"), claim("1"), wait(5), reap("100", "9")],
  },
  {
    name: "REAP: dead retention",
    actions: [...deadJob(J(2)), ...claimed(J(1), "1"), wait(5), reap("100", "1", "1")],
  },
  {
    name: "REAP: limit 1",
    actions: [enq(J(1)), enq(J(2)), claim("1"), claim("1"), wait(5), reap("1"), reap("1")],
  },
  {
    name: "REAP: an orphan in active is removed",
    actions: [seed(["ZADD", key("active"), "1", J(9)], ["ZADD", key("active"), "1", "XYZ"]), reap()],
  },
  { name: "REAP: a live lease stays", actions: [...claimed(J(1)), reap()] },
  {
    name: "REAP: two back and one dead in one call, one wake naming 2",
    actions: [
      enq(J(1)),
      enq(J(2)),
      addJob(J(3), "0", "0", "1"),
      claim("1"),
      claim("1"),
      claim("1"),
      wait(5),
      reap(),
    ],
  },
  ...(
    [
      ["limit", "0", "5", "10"],
      ["max attempts", "100", "0", "10"],
      ["keep", "100", "5", "-1"],
    ] as const
  ).map(([what, l, m, k]) => ({ name: `REAP: ${what} refused`, actions: [reap(l, m, k)] })),
  { name: "REAP: dead not a sorted set", actions: [wrongType("dead"), reap()] },

  /* REMOVE */
  { name: "REMOVE: a pending job", actions: [enq(J(1)), remove(J(1))] },
  { name: "REMOVE: a scheduled job", actions: [addJob(J(1), "0", "100000"), remove(J(1))] },
  { name: "REMOVE: a completed job", actions: [...claimed(J(1)), complete(J(1)), remove(J(1))] },
  { name: "REMOVE: a dead job", actions: [...deadJob(J(1)), remove(J(1))] },
  { name: "REMOVE: an active job is refused", actions: [...claimed(J(1)), remove(J(1))] },
  { name: "REMOVE: no such job", actions: [remove(J(1))] },
  {
    name: "REMOVE: an orphan in pending, done and dead is removed from all three",
    actions: [
      seed(
        ["ZADD", key("pending"), "0", J(9)],
        ["ZADD", key("done"), "5", J(9)],
        ["ZADD", key("dead"), "6", J(9)],
      ),
      remove(J(9)),
    ],
  },
  {
    name: "REMOVE: an orphan in schedule",
    actions: [seed(["ZADD", key("schedule"), "5", J(9)]), remove(J(9)), remove(J(9))],
  },
  {
    name: "REMOVE: an orphan only in active stays (REAP drops it): 0",
    actions: [seed(["ZADD", key("active"), "5", J(9)]), remove(J(9))],
  },
  {
    name: "REMOVE: a job whose row was deleted leaves no trace",
    actions: [enq(J(1)), seed(["DEL", row(J(1))]), remove(J(1)), claim()],
  },
  { name: "REMOVE: row not a hash", actions: [seed(["SET", row(J(1)), "x"]), remove(J(1))] },
  {
    name: "REMOVE: unknown state",
    actions: [enq(J(1)), seed(["HSET", row(J(1)), "state", "weird"]), remove(J(1))],
  },
  { name: "REMOVE: id without the JOB prefix", actions: [remove("NOT00000000001")] },
  { name: "REMOVE: done not a sorted set", actions: [wrongType("done"), remove(J(1))] },

  /* LANES */
  {
    name: "LANES: record, again, another, the list ascending",
    actions: [C("LANES", ["12"]), C("LANES", ["12"]), C("LANES", ["3"]), C("LANES", ["1"])],
  },
  {
    name: "LANES: recorded tokens that are no count are skipped, repeats counted once",
    actions: [
      seed(["HSET", key("meta"), "lanes", "7,x,,01,7,10001,2"]),
      C("LANES", ["7"]),
      C("LANES", ["5"]),
    ],
  },
  { name: "LANES: bad counts", actions: [C("LANES", ["0"]), C("LANES", ["10001"]), C("LANES", ["01"])] },
  { name: "LANES: meta not a hash", actions: [wrongType("meta"), C("LANES", ["3"])] },

  /* PAUSE / RESUME */
  { name: "PAUSE/RESUME: pause, again, resume, again", actions: [pause, pause, resume, resume] },
  { name: "PAUSE: meta not a hash", actions: [wrongType("meta"), pause] },
  { name: "RESUME: meta not a hash", actions: [wrongType("meta"), resume] },
  {
    name: "RESUME: the wake names the ids ready in pending",
    actions: [pause, enq(J(1)), addJob(J(2), "3"), addJob(J(3), "0", "100000"), resume],
  },
  { name: "RESUME: nothing ready, no wake", actions: [pause, addJob(J(1), "0", "100000"), resume] },
  { name: "RESUME: pending not a sorted set, paused", actions: [pause, wrongType("pending"), resume] },
  { name: "RESUME: pending not a sorted set, not paused", actions: [wrongType("pending"), resume] },
  {
    name: "PAUSE/RESUME: a paused flag other than 1",
    actions: [
      seed(["HSET", key("meta"), "paused", "0"]),
      pause,
      seed(["HSET", key("meta"), "paused", "0"]),
      resume,
    ],
  },

  ...HANDBACK_CASES,

  /* a worker's life, both queues */
  {
    name: "lifecycle: two queues, retries, completion",
    actions: [
      enq(J(1)),
      enq(J(2), "x", "B"),
      claim("30000", { q: "B" }),
      ...claimed(J(3)),
      fail(J(1), "1", "0", "3"),
      claim(),
      complete(J(1), "2"),
      C("COMPLETE", [J(2), "1", "b", "10"], { q: "B" }),
    ],
  },
];
