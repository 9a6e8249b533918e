/**
 * A full node drains: listed cases run over `maxmemory` (the scratch server's limit set just
 * below the memory it counts, restored after each call) and compared like any other step. The
 * admissions (`ENQUEUE`, `ADD`, `RETRY`) are refused with the server's `OOM` text before any of
 * their own steps, writing nothing, on both sides; every drain and control runs and writes the
 * same on both sides. Each step also checks that the limit held (see `CaseRun.overMaxmemory`).
 */
import {
  addJob,
  C,
  type Case,
  callOf,
  claim,
  claimed,
  enq,
  J,
  key,
  NO_EXTRAS,
  row,
  seed,
  wait,
} from "./build.js";
import type { Action } from "./actions.js";

/** `verb` called over `maxmemory`. */
const full = (verb: string, values: string[]): Action => ({
  kind: "guard",
  guard: "oom",
  call: callOf(verb, values),
});
const failed = (id: string, token: string, backoff = "0", max = "5", keep = "10") =>
  C("FAIL", [id, token, "boom", backoff, max, keep, ""]);

export const DRAIN_CASES: Case[] = [
  /* admissions: refused before any step of their own, nothing written */
  {
    name: "full node: ENQUEUE of a duplicate id is refused too",
    actions: [enq(J(1)), full("ENQUEUE", [J(1), "p"])],
  },
  { name: "full node: ENQUEUE with a bad id is refused OOM first", actions: [full("ENQUEUE", ["XYZ", "p"])] },
  {
    name: "full node: ADD delayed is refused",
    actions: [full("ADD", [J(1), "p", "0", "5000", "0", "", ...NO_EXTRAS])],
  },
  {
    name: "full node: ADD with bad values is refused OOM first",
    actions: [full("ADD", [J(1), "p", "x", "0", "0", "", ...NO_EXTRAS])],
  },
  {
    name: "full node: RETRY of a dead job is refused, it stays dead",
    actions: [
      ...claimed(J(1)),
      failed(J(1), "1", "0", "1"),
      full("RETRY", [J(1), "2"]),
      C("RETRY", [J(1), "2"]),
    ],
  },
  {
    name: "full node: RETRY of a job that is not dead is refused OOM",
    actions: [enq(J(1)), full("RETRY", [J(1), "1"])],
  },

  /* drains and controls: run and write */
  {
    name: "full node: a worker's life — claim, extend, complete",
    actions: [
      enq(J(1)),
      enq(J(2)),
      full("CLAIM", ["30000"]),
      full("EXTEND", [J(1), "1", "60000"]),
      full("COMPLETE", [J(1), "1", "r", "10"]),
      full("CLAIM", ["30000"]),
      full("COMPLETE", [J(2), "1", "r", "0"]),
      full("CLAIM", ["30000"]),
    ],
  },
  {
    name: "full node: FAIL to pending (wake), to schedule, to dead with retention",
    actions: [
      enq(J(1)),
      enq(J(2)),
      enq(J(3)),
      claim(),
      full("FAIL", [J(1), "1", "e", "0", "5", "1", ""]),
      claim(),
      full("FAIL", [J(2), "1", "e", "1000", "5", "1", ""]),
      claim(),
      full("FAIL", [J(3), "1", "e", "0", "1", "1", ""]),
      claim(),
      full("FAIL", [J(1), "2", "e", "0", "2", "1", ""]),
    ],
  },
  {
    name: "full node: CLAIM drops and counts orphans",
    actions: [
      enq(J(1)),
      seed(["ZADD", key("pending"), "-1", "XYZ1"], ["ZADD", key("pending"), "-1", J(9)]),
      full("CLAIM", ["30000"]),
    ],
  },
  {
    name: "full node: PROMOTE and REAP move ids, with their wakes",
    actions: [
      addJob(J(1), "0", "1"),
      addJob(J(2), "0", "1"),
      enq(J(3)),
      enq(J(4)),
      claim("1"),
      claim("1"),
      wait(5),
      full("PROMOTE", ["100"]),
      full("REAP", ["100", "1", "10"]),
    ],
  },
  {
    name: "full node: REAP back to pending",
    actions: [...claimed(J(1), "1"), wait(5), full("REAP", ["100", "5", "10"]), full("CLAIM", ["30000"])],
  },
  {
    name: "full node: REMOVE a job and an orphan",
    actions: [
      enq(J(1)),
      seed(["ZADD", key("dead"), "5", J(9)]),
      full("REMOVE", [J(1)]),
      full("REMOVE", [J(9)]),
      full("REMOVE", [J(8)]),
    ],
  },
  {
    name: "full node: PAUSE and RESUME (the wake names the ready ids)",
    actions: [enq(J(1)), enq(J(2)), full("PAUSE", []), full("CLAIM", ["30000"]), full("RESUME", [])],
  },
  {
    name: "full node: REQUEUE gives the attempt back",
    actions: [...claimed(J(1)), full("REQUEUE", [J(1), "1", "3"]), full("CLAIM", ["30000"])],
  },
  {
    name: "full node: drains keep their own refusals (stale token, not found, bad values)",
    actions: [
      ...claimed(J(1)),
      seed(["HSET", row(J(1)), "priority", "2"]),
      full("COMPLETE", [J(1), "2", "r", "10"]),
      full("EXTEND", [J(7), "1", "1000"]),
      full("CLAIM", ["0"]),
      full("REAP", ["0", "1", "1"]),
    ],
  },
];
