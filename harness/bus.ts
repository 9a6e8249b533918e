/**
 * The listed cases of the event bus, `EVENTS`, `PROGRESS` and `LOG`: every transition's entries on
 * `emq:{q}:events` (compared like any key: same entries, same fields, same order, ids matched to
 * the call's server time), the settings (off, small bounds that trim whole nodes, the age trim of
 * `PROMOTE` and `REAP`, settings that are no count, a `meta` that is not a hash), an events key of
 * another type, the cut reason and progress data, and the lease gates of the two report verbs.
 * A few explicit checks read the entries themselves, so that "both sides wrote nothing" cannot
 * pass for "both sides wrote the same".
 */
import { addJob, C, type Case, claim, claimed, enq, J, key, row, seed, wait } from "./build.js";
import type { RawValue } from "./dump.js";
import type { Action, LastStep } from "./actions.js";
import type { KeyRef } from "./executors.js";
import { queueKey as keyText } from "../src/keyspace.js";

const exact = { mode: "exact" as const };
const events = (q = "A"): KeyRef => ({ q, derived: "events" });
const settings = (maxlen: string, maxage = "86400000", o = {}) => C("EVENTS", [maxlen, maxage], o);
const progress = (id: string, value: string | Buffer, token = "1") => C("PROGRESS", [id, token, value]);
const log = (id: string, line: string, token = "1") => C("LOG", [id, token, line]);
const fail = (id: string, token: string, backoff: string, max: string, error: string | Buffer = "boom") =>
  C("FAIL", [id, token, error, backoff, max, "10", ""]);
const complete = (id: string, token = "1") => C("COMPLETE", [id, token, "ok", "10"]);

/** The native side's stream after the last step: each entry's fields as text. */
function entries(last: LastStep): string[][] {
  const stream: RawValue | undefined = last.after.get(keyText(last.side.name("A"), "events"));
  if (stream === undefined) return [];
  if (stream.type !== "stream") return [[`not a stream: ${stream.type}`]];
  return stream.entries.map(([, fields]) => fields.map((f) => f.toString("latin1")));
}

/** An explicit check of the native stream: the kinds of its entries, in order. */
export const kinds = (verb: string, want: string[]): Action => ({
  kind: "check",
  verb,
  what: `the events stream holds ${JSON.stringify(want)}`,
  fn: (last) => {
    const got = entries(last).map((e) => e[1] ?? "?");
    return JSON.stringify(got) === JSON.stringify(want) ? [] : [`it holds ${JSON.stringify(got)}`];
  },
});

/** An explicit check of one entry (counted from the end: -1 is the last). */
export const entry = (verb: string, at: number, want: string[]): Action => ({
  kind: "check",
  verb,
  what: `entry ${at} is ${JSON.stringify(want)}`,
  fn: (last) => {
    const all = entries(last);
    const got = all[at < 0 ? all.length + at : at];
    return JSON.stringify(got) === JSON.stringify(want) ? [] : [`it is ${JSON.stringify(got)}`];
  },
});

/** An explicit check of how many entries the native stream holds. */
const length = (verb: string, test: (n: number) => boolean, what: string): Action => ({
  kind: "check",
  verb,
  what: `the events stream holds ${what}`,
  fn: (last) => {
    const n = entries(last).length;
    return test(n) ? [] : [`it holds ${n}`];
  },
});

const LONG = Buffer.alloc(300, 0x65);
LONG.write("long error: ", 0);

export const BUS_CASES: Case[] = [
  /* EVENTS */
  {
    name: "EVENTS: settings written, then changed",
    actions: [settings("100", "3600000"), settings("0", "0"), settings("999999999999999", "999999999999999")],
  },
  ...(
    [
      ["-1", "0"],
      ["01", "0"],
      ["x", "0"],
      ["1000000000000000", "0"],
      ["5", "-1"],
      ["5", "1.5"],
      ["5", ""],
    ] as const
  ).map(([maxlen, maxage]) => ({
    name: `EVENTS: maxlen ${JSON.stringify(maxlen)}, max age ${JSON.stringify(maxage)} refused`,
    actions: [settings(maxlen, maxage)],
  })),
  { name: "EVENTS: meta not a hash", actions: [seed(["SET", key("meta"), "x"]), settings("5")] },

  /* every transition's entries */
  {
    name: "bus: a job's life, one entry per event",
    actions: [
      enq(J(1)),
      claim(),
      progress(J(1), "50"),
      log(J(1), "half way"),
      complete(J(1)),
      kinds("COMPLETE", ["added", "active", "progress", "completed"]),
      entry("COMPLETE", 0, ["event", "added", "id", J(1), "attempt", "0"]),
      entry("COMPLETE", 2, ["event", "progress", "id", J(1), "attempt", "1", "data", "50"]),
      entry("COMPLETE", -1, ["event", "completed", "id", J(1), "attempt", "1", "result", "ok"]),
    ],
  },
  ...[1024, 1025].map((n) => ({
    name: `bus: COMPLETE of a ${n}-byte result: ${n > 1024 ? "no result field" : "the result on the entry"}`,
    actions: [
      enq(J(1)),
      claim(),
      C("COMPLETE", [J(1), "1", "r".repeat(n), "10"]),
      entry("COMPLETE", -1, [
        "event",
        "completed",
        "id",
        J(1),
        "attempt",
        "1",
        ...(n > 1024 ? [] : ["result", "r".repeat(n)]),
      ]),
    ],
  })),
  {
    name: "bus: COMPLETE of an empty result: an empty result field, keep 0 too",
    actions: [
      enq(J(1)),
      claim(),
      C("COMPLETE", [J(1), "1", "", "0"]),
      entry("COMPLETE", -1, ["event", "completed", "id", J(1), "attempt", "1", "result", ""]),
    ],
  },
  {
    name: "bus: delayed, promoted, failed then retrying (scheduled), dead",
    actions: [
      addJob(J(1), "0", "1"),
      wait(5),
      C("PROMOTE", ["100"]),
      claim(),
      fail(J(1), "1", "1000", "2"),
      entry("FAIL", -2, ["event", "failed", "id", J(1), "attempt", "1", "reason", "boom"]),
      entry("FAIL", -1, ["event", "retrying", "id", J(1), "attempt", "1", "delay", "1000"]),
      seed(["ZADD", key("schedule"), "1", J(1)]),
      C("PROMOTE", ["100"]),
      claim(),
      fail(J(1), "2", "0", "2"),
      kinds("FAIL", [
        "delayed",
        "promoted",
        "active",
        "failed",
        "retrying",
        "promoted",
        "active",
        "failed",
        "dead",
      ]),
      entry("FAIL", -1, ["event", "dead", "id", J(1), "attempt", "2", "reason", "boom"]),
    ],
  },
  {
    name: "bus: retrying at once (backoff 0), retried from dead, requeued, removed",
    actions: [
      ...claimed(J(1)),
      fail(J(1), "1", "0", "1"),
      C("RETRY", [J(1), "2"]),
      entry("RETRY", -1, ["event", "retrying", "id", J(1), "attempt", "1", "delay", "0"]),
      claim(),
      C("REQUEUE", [J(1), "2", "3"]),
      C("REMOVE", [J(1)]),
      kinds("REMOVE", ["added", "active", "failed", "dead", "retrying", "active", "requeued", "removed"]),
      entry("REMOVE", -1, ["event", "removed", "id", J(1), "attempt", "2"]),
    ],
  },
  {
    name: "bus: stalled back to pending, and stalled then dead (lease expired)",
    actions: [
      enq(J(1)),
      addJob(J(2), "0", "0", "1"),
      claim("1"),
      claim("1"),
      wait(5),
      C("REAP", ["100", "5", "10"]),
      kinds("REAP", ["added", "added", "active", "active", "stalled", "stalled", "dead"]),
      entry("REAP", -1, ["event", "dead", "id", J(2), "attempt", "1", "reason", "lease expired"]),
    ],
  },
  {
    name: "bus: paused and resumed only when the flag changes",
    actions: [
      C("PAUSE", []),
      C("PAUSE", []),
      C("RESUME", []),
      C("RESUME", []),
      kinds("RESUME", ["paused", "resumed"]),
    ],
  },
  {
    name: "bus: no entry for an orphan removed, promoted or reaped",
    actions: [
      seed(
        ["ZADD", key("pending"), "0", J(7)],
        ["ZADD", key("schedule"), "1", J(8)],
        ["ZADD", key("active"), "1", J(9)],
      ),
      C("REMOVE", [J(7)]),
      C("PROMOTE", ["100"]),
      C("REAP", ["100", "5", "10"]),
      length("REAP", (n) => n === 0, "no entry"),
    ],
  },
  {
    name: "bus: the reschedule of an active job is delayed",
    actions: [...claimed(J(1)), C("RESCHEDULE", [J(1), "1", "250"])],
  },

  /* settings */
  {
    name: "bus: off (maxlen 0) writes no entry; on again",
    actions: [
      settings("0"),
      ...claimed(J(1)),
      complete(J(1)),
      C("PAUSE", []),
      length("PAUSE", (n) => n === 0, "no entry"),
      settings("10"),
      C("RESUME", []),
    ],
  },
  {
    name: "bus: maxlen 3 keeps whole nodes of the newest entries",
    actions: [
      settings("3"),
      ...Array.from({ length: 13 }, (_, i) => enq(J(i + 1))),
      length("ENQUEUE", (n) => n >= 3 && n < 8, "3 to 7 entries (whole nodes of 4 trimmed)"),
      entry("ENQUEUE", -1, ["event", "added", "id", J(13), "attempt", "0"]),
    ],
  },
  {
    name: "bus: maxlen 1, a promote of 10 ids trims as it adds",
    actions: [
      settings("1"),
      ...Array.from({ length: 10 }, (_, i) => addJob(J(i + 1), "0", "1")),
      wait(5),
      C("PROMOTE", ["100"]),
      length("PROMOTE", (n) => n >= 1 && n <= 4, "1 to 4 entries"),
    ],
  },
  {
    name: "bus: settings that are no count read as the defaults",
    actions: [
      seed(["HSET", key("meta"), "events_maxlen", "x", "events_maxage", "-1"]),
      enq(J(1)),
      C("PROMOTE", ["100"]),
      seed(["HSET", key("meta"), "events_maxlen", "01"]),
      enq(J(2)),
      length("ENQUEUE", (n) => n === 2, "2 entries"),
    ],
  },
  {
    name: "bus: a meta that is not a hash reads as the defaults (the verbs that declare no meta)",
    actions: [
      seed(["SET", key("meta"), "x"]),
      enq(J(1)),
      addJob(J(2), "0", "100000"),
      C("PROMOTE", ["100"]),
      length("PROMOTE", (n) => n === 2, "2 entries"),
    ],
  },
  {
    name: "bus: an events key of another type gets no entry, the transitions run",
    actions: [
      seed(["SET", events(), "not a stream"]),
      ...claimed(J(1)),
      complete(J(1)),
      C("PROMOTE", ["100"]),
      C("REAP", ["100", "5", "10"]),
    ],
  },
  {
    name: "bus: an events key of another type, then deleted: entries again",
    actions: [
      seed(["HSET", events(), "f", "v"]),
      enq(J(1)),
      seed(["DEL", events()]),
      enq(J(2)),
      kinds("ENQUEUE", ["added"]),
    ],
  },

  /* the age trim (lease-exact throughout: entry ids and the trim's bound are server time) */
  {
    name: "bus: the age trim of PROMOTE, once per call, even when nothing is due (lease-exact)",
    actions: [
      settings("10000", "200", exact),
      ...Array.from({ length: 6 }, (_, i) => C("ENQUEUE", [J(i + 1), "p"], exact)),
      wait(300),
      C("PROMOTE", ["100"], exact),
      length("PROMOTE", (n) => n === 0, "no entry (every node older than the bound)"),
      C("ENQUEUE", [J(9), "p"], exact),
      C("PROMOTE", ["100"], exact),
      length("PROMOTE", (n) => n === 1, "the newest entry"),
    ],
  },
  {
    name: "bus: the age trim of REAP keeps a node that holds a newer entry (lease-exact)",
    actions: [
      settings("10000", "200", exact),
      ...Array.from({ length: 6 }, (_, i) => C("ENQUEUE", [J(i + 1), "p"], exact)),
      wait(300),
      C("ENQUEUE", [J(7), "p"], exact),
      C("REAP", ["100", "5", "10"], exact),
      length("REAP", (n) => n === 3, "3 entries (the second node)"),
    ],
  },
  {
    name: "bus: no age bound (max age 0) trims nothing (lease-exact)",
    actions: [
      settings("10000", "0", exact),
      C("ENQUEUE", [J(1), "p"], exact),
      wait(3),
      C("PROMOTE", ["100"], exact),
      length("PROMOTE", (n) => n === 1, "1 entry"),
    ],
  },

  /* reasons and data */
  {
    name: "bus: the reason is the error's first 200 bytes",
    actions: [
      ...claimed(J(1)),
      fail(J(1), "1", "0", "5", LONG),
      entry("FAIL", -2, [
        "event",
        "failed",
        "id",
        J(1),
        "attempt",
        "1",
        "reason",
        LONG.subarray(0, 200).toString("latin1"),
      ]),
    ],
  },
  {
    name: "bus: a binary error's reason",
    actions: [...claimed(J(1)), fail(J(1), "1", "0", "1", Buffer.from([0, 13, 10, 255, 0]))],
  },
  {
    name: "PROGRESS: data up to 200 bytes rides along, a longer value does not",
    actions: [
      ...claimed(J(1)),
      progress(J(1), Buffer.alloc(200, 0x61)),
      progress(J(1), Buffer.alloc(201, 0x62)),
      progress(J(1), ""),
      entry("PROGRESS", -2, ["event", "progress", "id", J(1), "attempt", "1"]),
      entry("PROGRESS", -1, ["event", "progress", "id", J(1), "attempt", "1", "data", ""]),
    ],
  },
  {
    name: "PROGRESS: a JSON value, twice: the latest kept",
    actions: [...claimed(J(1)), progress(J(1), '{"done":1}'), progress(J(1), '{"done":2}')],
  },

  /* LOG */
  {
    name: "LOG: lines numbered from 1",
    actions: [...claimed(J(1)), log(J(1), "one"), log(J(1), ""), log(J(1), "three")],
  },
  {
    name: "LOG: 103 lines keep the last 100",
    actions: [...claimed(J(1)), ...Array.from({ length: 103 }, (_, i) => log(J(1), `line ${i + 1}`))],
  },
  {
    name: "LOG: a logs field that is no count starts over at 1",
    actions: [...claimed(J(1)), seed(["HSET", row(J(1)), "logs", "x"]), log(J(1), "again")],
  },
  {
    name: "LOG: the count goes on across attempts",
    actions: [
      ...claimed(J(1)),
      log(J(1), "first"),
      fail(J(1), "1", "0", "5"),
      claim(),
      log(J(1), "second", "2"),
    ],
  },

  /* the lease gate of PROGRESS and LOG */
  ...(["PROGRESS", "LOG"] as const).flatMap((verb) => {
    const call = (id: string, token = "1") => C(verb, [id, token, "x"]);
    return [
      { name: `${verb}: stale lease token`, actions: [...claimed(J(1)), call(J(1), "2")] },
      { name: `${verb}: job not active`, actions: [enq(J(1)), call(J(1))] },
      { name: `${verb}: job not found`, actions: [call(J(1))] },
      { name: `${verb}: row not a hash`, actions: [seed(["SET", row(J(1)), "x"]), call(J(1))] },
      {
        name: `${verb}: state active but not in active`,
        actions: [...claimed(J(1)), seed(["ZREM", key("active"), J(1)]), call(J(1))],
      },
      {
        name: `${verb}: state active, not in active, stale token`,
        actions: [...claimed(J(1)), seed(["ZREM", key("active"), J(1)]), call(J(1), "2")],
      },
      { name: `${verb}: active not a sorted set`, actions: [seed(["SET", key("active"), "x"]), call(J(1))] },
      { name: `${verb}: id without the JOB prefix`, actions: [call("XYZ00000000001")] },
      ...["0", "01", "-1", "x", ""].map((t) => ({
        name: `${verb}: token ${JSON.stringify(t)} refused`,
        actions: [...claimed(J(1)), call(J(1), t)],
      })),
      { name: `${verb}: after complete`, actions: [...claimed(J(1)), complete(J(1)), call(J(1))] },
    ];
  }),
];
