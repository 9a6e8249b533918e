/**
 * The listed cases of the schedule verbs: `SCHEDULE` (create, unchanged, replace), `UNSCHEDULE`
 * and `FIRE` (the job of one instant: due or ahead, compare-and-set misses, a replay, the row
 * already there, a skip, the ends by limit, by end time and by the last instant, odd records),
 * `PAUSESCHEDULE` / `RESUMESCHEDULE` (hold, re-arm, end on resume, a paused record replaced and
 * missed by `FIRE`), each verb's refusals in order. A job due ahead runs lease-exact (one MULTI/EXEC): its bus entry
 * carries the delay from the server's clock.
 */
import { C, type Case, claim, J, key, row, seed } from "./build.js";
import { kinds } from "./bus.js";
import type { Action } from "./actions.js";
import type { KeyRef } from "./executors.js";

/** 2100-01-01: an instant still ahead whenever the harness runs. */
const AHEAD = "4102444800000";
const record = (name = "n"): KeyRef => ({ q: "A", derived: "repeat", param: name });

interface Sched {
  name?: string;
  spec?: string;
  next?: string;
  limit?: string;
  endAt?: string;
  payload?: string | Buffer;
  priority?: string;
  max?: string;
  timeout?: string;
  jobName?: string;
  backoff?: string;
}
const schedule = (s: Sched = {}) =>
  C("SCHEDULE", [
    s.name ?? "n",
    s.spec ?? '{"everyMs":1000}',
    s.next ?? "1000",
    s.limit ?? "0",
    s.endAt ?? "0",
    s.payload ?? "p",
    s.priority ?? "0",
    s.max ?? "0",
    s.timeout ?? "0",
    s.jobName ?? "",
    s.backoff ?? "",
  ]);
const unschedule = (name = "n") => C("UNSCHEDULE", [name]);
const pause = (name = "n") => C("PAUSESCHEDULE", [name]);
const resume = (next = "5000", name = "n") => C("RESUMESCHEDULE", [name, next]);
const fire = (id: string, expected: string, instant: string, next: string, name = "n", exact = false) =>
  C("FIRE", [id, name, expected, instant, next], exact ? { mode: "exact" } : {});
const wrongType = (ref: Parameters<typeof seed>[0][number]): Action => seed(["SET", ref, "x"]);

export const REPEAT_CASES: Case[] = [
  /* SCHEDULE */
  { name: "SCHEDULE: creates a record and its entry", actions: [schedule()] },
  { name: "SCHEDULE: the same again is unchanged", actions: [schedule(), schedule()] },
  {
    name: "SCHEDULE: a new spec replaces it, next reset, count kept",
    actions: [
      schedule(),
      seed(["HSET", record(), "fired", "3"]),
      schedule({ spec: '{"everyMs":5}', next: "2000" }),
    ],
  },
  ...(
    [
      ["payload", { payload: "q" }],
      ["priority", { priority: "-3" }],
      ["max attempts", { max: "4" }],
      ["timeout", { timeout: "500" }],
      ["limit", { limit: "2" }],
      ["end at", { endAt: "9000" }],
      ["job name", { jobName: "send" }],
      ["backoff", { backoff: "fixed:100" }],
    ] as [string, Sched][]
  ).map(([what, change]) => ({
    name: `SCHEDULE: another ${what} replaces it`,
    actions: [schedule(), schedule(change)],
  })),
  { name: "SCHEDULE: only next differs: unchanged", actions: [schedule(), schedule({ next: "5000" })] },
  {
    name: "SCHEDULE: the same job name and backoff again is unchanged",
    actions: [
      schedule({ jobName: "send", backoff: "fixed:5" }),
      schedule({ jobName: "send", backoff: "fixed:5" }),
    ],
  },
  {
    name: "SCHEDULE: a job name and backoff dropped replaces it",
    actions: [schedule({ jobName: "send", backoff: "fixed:5" }), schedule()],
  },
  {
    name: "SCHEDULE: an older record without job name and backoff reads them as empty: unchanged",
    actions: [schedule(), seed(["HDEL", record(), "job_name", "backoff"]), schedule()],
  },
  {
    name: "SCHEDULE: an older record without job name and backoff, a name given: replaced",
    actions: [schedule(), seed(["HDEL", record(), "job_name", "backoff"]), schedule({ jobName: "send" })],
  },
  { name: "SCHEDULE: binary payload", actions: [schedule({ payload: Buffer.from([0, 255, 13, 10]) })] },
  { name: "SCHEDULE: two schedules", actions: [schedule(), schedule({ name: "m", next: "500" })] },
  {
    name: "SCHEDULE: a record missing fields is replaced",
    actions: [seed(["HSET", record(), "spec", '{"everyMs":1000}']), schedule()],
  },
  ...(
    [
      ["name empty", { name: "" }],
      ["name with a tab", { name: "a\tb" }],
      ["name with DEL", { name: "a\x7f" }],
      ["name of 256 bytes", { name: "n".repeat(256) }],
      ["next 0", { next: "0" }],
      ["next 01", { next: "01" }],
      ["limit -1", { limit: "-1" }],
      ["end at x", { endAt: "x" }],
      ["priority -0", { priority: "-0" }],
      ["max attempts 1.5", { max: "1.5" }],
      ["timeout 16 digits", { timeout: "1000000000000000" }],
      ["name and next both bad", { name: "", next: "0" }],
      ["job name of 256 bytes", { jobName: "j".repeat(256) }],
      ["job name with a tab", { jobName: "a\tb" }],
      ["backoff with NUL", { backoff: "fixed:1\0" }],
      ["timeout and job name both bad", { timeout: "x", jobName: "\x7f" }],
      ["job name and backoff both bad", { jobName: "\x01", backoff: "\x02" }],
    ] as [string, Sched][]
  ).map(([what, bad]) => ({ name: `SCHEDULE: ${what} refused`, actions: [schedule(bad)] })),
  { name: "SCHEDULE: name of 255 bytes", actions: [schedule({ name: "n".repeat(255) })] },
  { name: "SCHEDULE: repeats not a sorted set", actions: [wrongType(key("repeats")), schedule()] },
  { name: "SCHEDULE: the record a string", actions: [wrongType(record()), schedule()] },

  /* UNSCHEDULE */
  {
    name: "UNSCHEDULE: removes record and entry",
    actions: [schedule(), schedule({ name: "m" }), unschedule()],
  },
  { name: "UNSCHEDULE: no such schedule", actions: [unschedule()] },
  {
    name: "UNSCHEDULE: a record without its entry",
    actions: [seed(["HSET", record(), "next", "1"]), unschedule()],
  },
  {
    name: "UNSCHEDULE: an entry without its record",
    actions: [seed(["ZADD", key("repeats"), "1", "n"]), unschedule()],
  },
  {
    name: "UNSCHEDULE: jobs it added stay",
    actions: [schedule(), fire(J(1), "1000", "1000", "2000"), unschedule()],
  },
  { name: "UNSCHEDULE: name empty refused", actions: [schedule(), unschedule("")] },
  { name: "UNSCHEDULE: name with NUL refused", actions: [schedule(), unschedule("a\0b")] },
  { name: "UNSCHEDULE: repeats not a sorted set", actions: [wrongType(key("repeats")), unschedule()] },
  { name: "UNSCHEDULE: the record a string", actions: [wrongType(record()), unschedule()] },

  /* FIRE */
  {
    name: "FIRE: a due instant adds a pending job and moves on",
    actions: [schedule(), fire(J(1), "1000", "1000", "2000"), kinds("FIRE", ["added"]), claim()],
  },
  {
    name: "FIRE: the job carries priority, max attempts, timeout",
    actions: [
      schedule({ priority: "-7", max: "3", timeout: "2500" }),
      fire(J(1), "1000", "1000", "2000"),
      claim(),
    ],
  },
  {
    name: "FIRE: the job carries the schedule's job name and backoff",
    actions: [
      schedule({ jobName: "nightly é", backoff: "exponential:100:5000:0.5", priority: "2" }),
      fire(J(1), "1000", "1000", "2000"),
      claim(),
    ],
  },
  {
    name: "FIRE: an older record without job name and backoff: a job without them",
    actions: [
      schedule(),
      seed(["HDEL", record(), "job_name", "backoff"]),
      fire(J(1), "1000", "1000", "2000"),
    ],
  },
  {
    name: "FIRE: a stored job name or backoff outside the label grammar reads as empty",
    actions: [
      schedule({ jobName: "ok" }),
      seed(["HSET", record(), "job_name", "a\tb", "backoff", "b".repeat(256)]),
      fire(J(1), "1000", "1000", "2000"),
    ],
  },
  {
    name: "FIRE: an instant ahead waits in schedule (exact)",
    actions: [schedule({ next: AHEAD }), fire(J(1), AHEAD, AHEAD, "4102444801000", "n", true)],
  },
  {
    name: "FIRE: three instants in turn, then a claim of each",
    actions: [
      schedule(),
      fire(J(1), "1000", "1000", "2000"),
      fire(J(2), "2000", "2000", "3000"),
      fire(J(3), "3000", "3000", "4000"),
      claim(),
      claim(),
      claim(),
    ],
  },
  {
    name: "FIRE: expected is not the record's next (miss)",
    actions: [schedule(), fire(J(1), "999", "999", "2000")],
  },
  { name: "FIRE: no record (miss)", actions: [fire(J(1), "1000", "1000", "2000")] },
  {
    name: "FIRE: a replay of the same instant misses",
    actions: [schedule(), fire(J(1), "1000", "1000", "2000"), fire(J(1), "1000", "1000", "2000")],
  },
  {
    name: "FIRE: the row exists: no job, moves on, count kept",
    actions: [
      schedule(),
      seed(["HSET", row(J(1)), "state", "completed"]),
      fire(J(1), "1000", "1000", "2000"),
    ],
  },
  { name: "FIRE: instant 0 skips to next", actions: [schedule(), fire(J(1), "1000", "0", "7000")] },
  {
    name: "FIRE: a later instant skips the ones before",
    actions: [schedule(), fire(J(5), "1000", "5000", "6000")],
  },
  {
    name: "FIRE: limit 1 ends after the job",
    actions: [schedule({ limit: "1" }), fire(J(1), "1000", "1000", "2000")],
  },
  {
    name: "FIRE: limit 2, the second ends it",
    actions: [
      schedule({ limit: "2" }),
      fire(J(1), "1000", "1000", "2000"),
      fire(J(2), "2000", "2000", "3000"),
    ],
  },
  {
    name: "FIRE: limit already reached ends it without a job",
    actions: [
      schedule({ limit: "2" }),
      seed(["HSET", record(), "fired", "2"]),
      fire(J(1), "1000", "1000", "2000"),
    ],
  },
  { name: "FIRE: next 0 ends after the job", actions: [schedule(), fire(J(1), "1000", "1000", "0")] },
  {
    name: "FIRE: next after end at ends after the job",
    actions: [schedule({ endAt: "1500" }), fire(J(1), "1000", "1000", "2000")],
  },
  {
    name: "FIRE: next at end at goes on",
    actions: [schedule({ endAt: "2000" }), fire(J(1), "1000", "1000", "2000")],
  },
  {
    name: "FIRE: instant after end at ends it without a job",
    actions: [schedule({ endAt: "1500" }), fire(J(2), "1000", "2000", "3000")],
  },
  { name: "FIRE: skip and end (instant 0, next 0)", actions: [schedule(), fire(J(1), "1000", "0", "0")] },
  {
    name: "FIRE: odd stored numbers read as 0",
    actions: [
      schedule(),
      seed([
        "HSET",
        record(),
        "fired",
        "x",
        "priority",
        "01",
        "max_attempts",
        "-1",
        "timeout",
        "1.5",
        "limit",
        "y",
      ]),
      fire(J(1), "1000", "1000", "2000"),
    ],
  },
  {
    name: "FIRE: a record without payload adds an empty one",
    actions: [seed(["HSET", record(), "next", "1000"]), fire(J(1), "1000", "1000", "2000")],
  },
  {
    name: "FIRE: the bus off (events_maxlen 0)",
    actions: [
      schedule(),
      seed(["HSET", key("meta"), "events_maxlen", "0"]),
      fire(J(1), "1000", "1000", "2000"),
    ],
  },
  { name: "FIRE: name empty refused", actions: [schedule(), fire(J(1), "1000", "1000", "2000", "")] },
  { name: "FIRE: expected 0 refused", actions: [schedule(), fire(J(1), "0", "1000", "2000")] },
  { name: "FIRE: instant -1 refused", actions: [schedule(), fire(J(1), "1000", "-1", "2000")] },
  { name: "FIRE: next x refused", actions: [schedule(), fire(J(1), "1000", "1000", "x")] },
  {
    name: "FIRE: name checked before the id",
    actions: [schedule(), fire("XYZ00000000001", "1000", "1000", "2000", "")],
  },
  {
    name: "FIRE: id without the JOB prefix",
    actions: [schedule(), fire("XYZ00000000001", "1000", "1000", "2000")],
  },
  {
    name: "FIRE: pending not a sorted set",
    actions: [schedule(), wrongType(key("pending")), fire(J(1), "1000", "1000", "2000")],
  },
  {
    name: "FIRE: schedule not a sorted set",
    actions: [schedule(), wrongType(key("schedule")), fire(J(1), "1000", "1000", "2000")],
  },
  {
    name: "FIRE: repeats not a sorted set",
    actions: [wrongType(key("repeats")), fire(J(1), "1000", "1000", "2000")],
  },
  { name: "FIRE: the record a string", actions: [wrongType(record()), fire(J(1), "1000", "1000", "2000")] },
  {
    name: "FIRE: the row a string: no job, moves on",
    actions: [schedule(), seed(["SET", row(J(1)), "x"]), fire(J(1), "1000", "1000", "2000")],
  },

  /* PAUSESCHEDULE, RESUMESCHEDULE */
  { name: "PAUSESCHEDULE: holds the record, entry at the paused score", actions: [schedule(), pause()] },
  { name: "PAUSESCHEDULE: twice: the second writes nothing", actions: [schedule(), pause(), pause()] },
  { name: "PAUSESCHEDULE: no such schedule", actions: [pause()] },
  {
    name: "PAUSESCHEDULE: an entry without its record",
    actions: [seed(["ZADD", key("repeats"), "1", "n"]), pause()],
  },
  { name: "PAUSESCHEDULE: name empty refused", actions: [schedule(), pause("")] },
  { name: "PAUSESCHEDULE: repeats not a sorted set", actions: [wrongType(key("repeats")), pause()] },
  { name: "PAUSESCHEDULE: the record a string", actions: [wrongType(record()), pause()] },
  {
    name: "PAUSESCHEDULE: FIRE misses a paused record",
    actions: [schedule(), pause(), fire(J(1), "1000", "1000", "2000")],
  },
  {
    name: "PAUSESCHEDULE: a paused schedule replaced stays paused",
    actions: [schedule(), pause(), schedule({ spec: '{"everyMs":5}', next: "2000" })],
  },
  {
    name: "PAUSESCHEDULE: unchanged on a paused schedule",
    actions: [schedule(), pause(), schedule()],
  },
  {
    name: "RESUMESCHEDULE: re-arms at next, then FIRE adds",
    actions: [schedule(), pause(), resume("5000"), fire(J(5), "5000", "5000", "6000"), claim()],
  },
  { name: "RESUMESCHEDULE: not paused", actions: [schedule(), resume()] },
  { name: "RESUMESCHEDULE: no such schedule", actions: [resume()] },
  { name: "RESUMESCHEDULE: next 0 ends it", actions: [schedule(), pause(), resume("0")] },
  {
    name: "RESUMESCHEDULE: next after end at ends it",
    actions: [schedule({ endAt: "4000" }), pause(), resume("5000")],
  },
  {
    name: "RESUMESCHEDULE: next at end at goes on",
    actions: [schedule({ endAt: "5000" }), pause(), resume("5000")],
  },
  {
    name: "RESUMESCHEDULE: odd end at reads as 0",
    actions: [schedule(), pause(), seed(["HSET", record(), "end_at", "x"]), resume("5000")],
  },
  {
    name: "RESUMESCHEDULE: paused not 1 is not paused",
    actions: [schedule(), seed(["HSET", record(), "paused", "yes"]), resume()],
  },
  {
    name: "RESUMESCHEDULE: last fired kept across pause and resume",
    actions: [schedule(), fire(J(1), "1000", "1000", "2000"), pause(), resume("7000")],
  },
  { name: "RESUMESCHEDULE: next x refused", actions: [schedule(), pause(), resume("x")] },
  { name: "RESUMESCHEDULE: next -1 refused", actions: [schedule(), pause(), resume("-1")] },
  { name: "RESUMESCHEDULE: name with a tab refused", actions: [schedule(), pause(), resume("5000", "a\tb")] },
  { name: "RESUMESCHEDULE: repeats not a sorted set", actions: [wrongType(key("repeats")), resume()] },
  { name: "RESUMESCHEDULE: the record a string", actions: [wrongType(record()), resume()] },
];
