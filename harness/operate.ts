/**
 * The listed cases of the operator verbs: `UPDATE` (a job's payload replaced, in any state),
 * `EXPEDITE` (a scheduled job runs now), `CLEAN`
 * (finished jobs older than a grace), `DRAIN` (waiting jobs) and `OBLITERATE` (the whole
 * queue) — success paths, bounded batches, their refusals in order, corrupt sets and rows, and
 * their entries on the bus. Time-dependent picks run lease-exact (one MULTI/EXEC).
 */
import { addJob, C, type Case, claim, claimed, enq, J, key, row, seed } from "./build.js";
import { entry, kinds } from "./bus.js";
import type { Action } from "./actions.js";

const exact = { mode: "exact" as const };
const BIG = "999999999999999";
const expedite = (id: string) => C("EXPEDITE", [id]);
const update = (id: string, payload: string | Buffer = "new") => C("UPDATE", [id, payload]);
const clean = (state: string, grace = "0", limit = "100") => C("CLEAN", [state, grace, limit], exact);
const drain = (limit = "100") => C("DRAIN", [limit]);
const obliterate = (force = "0", limit = "100") => C("OBLITERATE", [force, limit]);
const complete = (id: string, token = "1") => C("COMPLETE", [id, token, "ok", "10"]);
const dead = (id: string, token = "1") => C("FAIL", [id, token, "boom", "0", "1", "10", ""]);
const delayed = (id: string, delay = "60000", priority = "0") => addJob(id, priority, delay);
const wrongType = (slot: Parameters<typeof key>[0]) => seed(["SET", key(slot), "x"]);
/** Three jobs finished at times 1, 2 and 3 in `set` (rows as the transitions write them). */
const finished = (set: "done" | "dead"): Action =>
  seed(
    ...[1, 2, 3].flatMap((n) => [
      ["ZADD", key(set), String(n), J(n)],
      ["HSET", row(J(n)), "state", set === "done" ? "completed" : "dead", "attempts", "1", "payload", "p"],
    ]),
  );

export const OPERATE_CASES: Case[] = [
  /* UPDATE */
  {
    name: "UPDATE: a pending job's payload replaced, then claimed",
    actions: [enq(J(1)), update(J(1)), claim()],
  },
  { name: "UPDATE: an active job, no token asked", actions: [...claimed(J(1)), update(J(1), "")] },
  {
    name: "UPDATE: a dead job",
    actions: [...claimed(J(1)), dead(J(1)), update(J(1), Buffer.from([0, 255]))],
  },
  { name: "UPDATE: a delayed job keeps its place", actions: [delayed(J(1)), update(J(1))] },
  { name: "UPDATE: no such job", actions: [update(J(1))] },
  { name: "UPDATE: row a string", actions: [seed(["SET", row(J(1)), "x"]), update(J(1))] },
  { name: "UPDATE: id without the JOB prefix", actions: [update("XYZ00000000001")] },
  {
    name: "UPDATE: pending not a sorted set (not read)",
    actions: [enq(J(1)), wrongType("pending"), update(J(1))],
  },

  /* EXPEDITE */
  {
    name: "EXPEDITE: a delayed job runs now, with its priority, and is claimed",
    actions: [
      delayed(J(1), "60000", "5"),
      delayed(J(2)),
      expedite(J(1)),
      kinds("EXPEDITE", ["delayed", "delayed", "promoted"]),
      entry("EXPEDITE", -1, ["event", "promoted", "id", J(1), "attempt", "0"]),
      claim(),
    ],
  },
  {
    name: "EXPEDITE: a retry waiting out its backoff runs now",
    actions: [
      ...claimed(J(1)),
      C("FAIL", [J(1), "1", "boom", "60000", "3", "10", ""]),
      expedite(J(1)),
      claim(),
    ],
  },
  { name: "EXPEDITE: a pending job is not scheduled", actions: [enq(J(1)), expedite(J(1))] },
  { name: "EXPEDITE: an active job is not scheduled", actions: [...claimed(J(1)), expedite(J(1))] },
  { name: "EXPEDITE: a dead job is not scheduled", actions: [...claimed(J(1)), dead(J(1)), expedite(J(1))] },
  { name: "EXPEDITE: no such job", actions: [expedite(J(1))] },
  { name: "EXPEDITE: id without the JOB prefix", actions: [delayed(J(1)), expedite("XYZ00000000001")] },
  { name: "EXPEDITE: schedule not a sorted set", actions: [wrongType("schedule"), expedite(J(1))] },
  {
    name: "EXPEDITE: pending not a sorted set",
    actions: [delayed(J(1)), wrongType("pending"), expedite(J(1))],
  },
  { name: "EXPEDITE: row a string", actions: [seed(["SET", row(J(1)), "x"]), expedite(J(1))] },
  {
    name: "EXPEDITE: state scheduled but not in schedule",
    actions: [seed(["HSET", row(J(1)), "state", "scheduled", "attempts", "0"]), expedite(J(1))],
  },
  {
    name: "EXPEDITE: in schedule but state pending",
    actions: [enq(J(1)), seed(["ZADD", key("schedule"), "5", J(1)]), expedite(J(1))],
  },
  {
    name: "EXPEDITE: a row's odd priority and attempts read as 0",
    actions: [delayed(J(1)), seed(["HSET", row(J(1)), "priority", "01", "attempts", "x"]), expedite(J(1))],
  },

  /* CLEAN */
  {
    name: "CLEAN: every completed job (grace 0), one entry",
    actions: [
      ...claimed(J(1)),
      complete(J(1)),
      ...claimed(J(2)),
      complete(J(2)),
      clean("completed"),
      entry("CLEAN", -1, ["event", "cleaned", "state", "completed", "count", "2"]),
    ],
  },
  {
    name: "CLEAN: dead jobs, not the completed ones",
    actions: [...claimed(J(1)), dead(J(1)), ...claimed(J(2)), complete(J(2)), clean("dead")],
  },
  {
    name: "CLEAN: the oldest first, limit 2 of 3",
    actions: [finished("done"), clean("completed", "0", "2")],
  },
  {
    name: "CLEAN: dead, limit 1 then the rest",
    actions: [finished("dead"), clean("dead", "0", "1"), clean("dead")],
  },
  {
    name: "CLEAN: a grace keeps the recent ones",
    actions: [finished("done"), ...claimed(J(5)), complete(J(5)), clean("completed", "3600000")],
  },
  {
    name: "CLEAN: grace 15 digits keeps everything",
    actions: [finished("dead"), clean("dead", BIG, "10000")],
  },
  { name: "CLEAN: nothing to clean answers 0, no entry", actions: [clean("completed"), kinds("CLEAN", [])] },
  {
    name: "CLEAN: orphan ids and ids without JOB are deleted too",
    actions: [seed(["ZADD", key("done"), "1", J(9)], ["ZADD", key("done"), "2", "XYZ1"]), clean("completed")],
  },
  ...["pending", "", "Completed", "done"].map((state) => ({
    name: `CLEAN: state ${JSON.stringify(state)} refused`,
    actions: [finished("done"), clean(state)],
  })),
  ...[
    ["-1", "100"],
    ["01", "100"],
    ["0", "0"],
    ["0", "10001"],
    ["x", "0"],
  ].map(([grace, limit]) => ({
    name: `CLEAN: grace ${JSON.stringify(grace)}, limit ${JSON.stringify(limit)} refused`,
    actions: [finished("done"), clean("completed", grace, limit)],
  })),
  { name: "CLEAN: a bad state is refused before a bad limit", actions: [clean("x", "0", "0")] },
  { name: "CLEAN: done not a sorted set", actions: [wrongType("done"), clean("dead")] },
  {
    name: "CLEAN: dead not a sorted set",
    actions: [finished("done"), wrongType("dead"), clean("completed")],
  },

  /* DRAIN */
  {
    name: "DRAIN: pending and scheduled deleted, the active job left",
    actions: [
      ...claimed(J(1)),
      enq(J(2)),
      delayed(J(3)),
      drain(),
      entry("DRAIN", -1, ["event", "drained", "count", "2"]),
      complete(J(1)),
    ],
  },
  {
    name: "DRAIN: claim order first, then due order, a limit at a time",
    actions: [
      addJob(J(1), "5"),
      addJob(J(2), "-5"),
      delayed(J(3), "70000"),
      delayed(J(4), "60000"),
      drain("1"),
      drain("2"),
      drain("1"),
      drain("1"),
      kinds("DRAIN", ["added", "added", "delayed", "delayed", "drained", "drained", "drained"]),
    ],
  },
  { name: "DRAIN: nothing waiting answers 0", actions: [...claimed(J(1)), drain()] },
  {
    name: "DRAIN: orphans and an id in both sets",
    actions: [
      seed(
        ["ZADD", key("pending"), "0", J(7)],
        ["ZADD", key("schedule"), "1", J(7)],
        ["ZADD", key("schedule"), "2", "x"],
      ),
      drain(),
    ],
  },
  { name: "DRAIN: limit 0 refused", actions: [enq(J(1)), drain("0")] },
  { name: "DRAIN: limit 10001 refused", actions: [enq(J(1)), drain("10001")] },
  { name: "DRAIN: limit 10000", actions: [enq(J(1)), drain("10000")] },
  { name: "DRAIN: pending not a sorted set", actions: [wrongType("pending"), drain()] },
  { name: "DRAIN: schedule not a sorted set", actions: [enq(J(1)), wrongType("schedule"), drain()] },

  /* OBLITERATE */
  {
    name: "OBLITERATE: every job of every set, then meta and events",
    actions: [
      enq(J(1)),
      delayed(J(2)),
      ...claimed(J(3)),
      complete(J(3)),
      ...claimed(J(4)),
      dead(J(4)),
      C("PAUSE", []),
      C("EVENTS", ["100", "3600000"]),
      obliterate(),
    ],
  },
  { name: "OBLITERATE: refused while a job is active", actions: [enq(J(1)), ...claimed(J(2)), obliterate()] },
  {
    name: "OBLITERATE: force deletes active jobs too",
    actions: [enq(J(1)), ...claimed(J(2)), obliterate("1")],
  },
  {
    name: "OBLITERATE: a limit at a time; meta and events go with the last",
    actions: [
      enq(J(1)),
      enq(J(2)),
      delayed(J(3)),
      ...claimed(J(4)),
      complete(J(4)),
      obliterate("0", "2"),
      obliterate("0", "1"),
      obliterate("0", "1"),
      obliterate("0", "1"),
    ],
  },
  { name: "OBLITERATE: only meta left", actions: [C("PAUSE", []), obliterate()] },
  { name: "OBLITERATE: nothing at all answers [0, 0]", actions: [obliterate()] },
  {
    name: "OBLITERATE: an events key of another type and a meta string are deleted",
    actions: [seed(["SET", { q: "A", derived: "events" }, "x"], ["SET", key("meta"), "x"]), obliterate()],
  },
  {
    name: "OBLITERATE: orphans and an id in two sets",
    actions: [
      seed(
        ["ZADD", key("pending"), "0", J(7)],
        ["ZADD", key("done"), "1", J(7)],
        ["ZADD", key("dead"), "1", "x"],
      ),
      obliterate("0", "2"),
      obliterate(),
    ],
  },
  ...[
    ["2", "100"],
    ["", "100"],
    ["true", "100"],
    ["0", "0"],
    ["1", "10001"],
    ["x", "0"],
  ].map(([force, limit]) => ({
    name: `OBLITERATE: force ${JSON.stringify(force)}, limit ${JSON.stringify(limit)} refused`,
    actions: [enq(J(1)), obliterate(force, limit)],
  })),
  { name: "OBLITERATE: active not a sorted set", actions: [enq(J(1)), wrongType("active"), obliterate("1")] },
  { name: "OBLITERATE: dead not a sorted set", actions: [enq(J(1)), wrongType("dead"), obliterate()] },
];
