/**
 * The listed cases of `COMPLETENEXT`: a completion and, in the same transition, the queue's next
 * job leased — exactly `COMPLETE` followed by `CLAIM`, its pause read inside the transition. What
 * it leases under flow control (the queue's concurrency and rate, a group's slot the completion
 * freed), its refusals (the completion's: nothing written, nothing leased) and a claim refused
 * after the completion (the completion stands, nothing leased).
 */
import {
  BIG,
  C,
  type Case,
  claim,
  claimed,
  enq,
  exact,
  J,
  key,
  row,
  seed,
  wait,
  wrongType,
} from "./build.js";
import type { Action } from "./steps.js";

/** `COMPLETENEXT` of `id` (token, keep, lease). */
const next = (id: string, token = "1", keep = "10", lease = "30000", o = {}) =>
  C("COMPLETENEXT", [id, token, "ok", keep, lease], o);
const limit = (scope: string, group: string, max: string, ms: string, concurrency: string) =>
  C("LIMIT", [scope, group, max, ms, concurrency]);
/** `id` added in group `g` (ADD's `<group>`). */
const grouped = (id: string, g: string): Action =>
  C("ADD", [id, "p", "0", "0", "0", "", g, "", "0", "0", ""]);
const pause = C("PAUSE", []);

export const NEXT_CASES: Case[] = [
  { name: "COMPLETENEXT: nothing pending: [1]", actions: [...claimed(J(1)), next(J(1))] },
  { name: "COMPLETENEXT: the next job leased", actions: [...claimed(J(1)), enq(J(2)), next(J(1))] },
  {
    name: "COMPLETENEXT: lease-exact",
    actions: [...claimed(J(1)), enq(J(2)), next(J(1), "1", "10", "30000", exact)],
  },
  {
    name: "COMPLETENEXT: keep 0, lease 1 ms, then the leased job completes its own next",
    actions: [...claimed(J(1)), enq(J(2)), enq(J(3)), next(J(1), "1", "0", "1"), next(J(2), "1", "0")],
  },
  { name: "COMPLETENEXT: largest lease", actions: [...claimed(J(1)), enq(J(2)), next(J(1), "1", "10", BIG)] },
  {
    name: "COMPLETENEXT: a second attempt leased after a reap",
    actions: [
      enq(J(2)),
      claim("1"),
      wait(5),
      C("REAP", ["100", "5", "10"]),
      enq(J(3)),
      ...claimed(J(1)),
      next(J(2), "1"),
    ],
  },
  {
    name: "COMPLETENEXT: paused queue: completed, nothing leased",
    actions: [...claimed(J(1)), enq(J(2)), pause, next(J(1))],
  },
  {
    name: "COMPLETENEXT: paused flag other than 1 leases",
    actions: [...claimed(J(1)), enq(J(2)), seed(["HSET", key("meta"), "paused", "yes"]), next(J(1))],
  },
  {
    name: "COMPLETENEXT: meta not a hash: completed, nothing leased",
    actions: [...claimed(J(1)), enq(J(2)), seed(["DEL", key("meta")], ["SET", key("meta"), "x"]), next(J(1))],
  },
  /* the completion's refusals: nothing written, nothing leased */
  ...["0", "-1", "01", "1000000000000000", "abc", ""].map((l) => ({
    name: `COMPLETENEXT: lease ${JSON.stringify(l)} refused before the completion`,
    actions: [...claimed(J(1)), enq(J(2)), next(J(1), "1", "10", l)],
  })),
  { name: "COMPLETENEXT: keep refused", actions: [...claimed(J(1)), enq(J(2)), next(J(1), "1", "-1")] },
  { name: "COMPLETENEXT: stale lease token", actions: [...claimed(J(1)), enq(J(2)), next(J(1), "3")] },
  { name: "COMPLETENEXT: job not active", actions: [enq(J(1)), next(J(1))] },
  { name: "COMPLETENEXT: job not found", actions: [enq(J(2)), next(J(1))] },
  { name: "COMPLETENEXT: id without the JOB prefix", actions: [enq(J(2)), next("XYZ1")] },
  {
    name: "COMPLETENEXT: done not a sorted set",
    actions: [...claimed(J(1)), enq(J(2)), wrongType("done"), next(J(1))],
  },
  { name: "COMPLETENEXT: twice", actions: [...claimed(J(1)), enq(J(2)), next(J(1)), next(J(1))] },
  /* the claim refused after the completion: the completion stands, nothing leased */
  {
    name: "COMPLETENEXT: next head already active: completed, nothing leased",
    actions: [...claimed(J(1)), enq(J(2)), seed(["ZADD", key("active"), "5", J(2)]), next(J(1))],
  },
  {
    name: "COMPLETENEXT: next row without integer attempts: completed, nothing leased",
    actions: [...claimed(J(1)), enq(J(2)), seed(["HSET", row(J(2)), "attempts", "x"]), next(J(1))],
  },
  {
    name: "COMPLETENEXT: orphans ahead of the next job: dropped, counted, the job leased",
    actions: [
      ...claimed(J(1)),
      enq(J(2)),
      seed(["ZADD", key("pending"), "-1", "XYZ9"], ["ZADD", key("pending"), "-1", J(9)]),
      next(J(1)),
    ],
  },
  /* flow control: what a completion followed by a claim obeys */
  {
    name: "COMPLETENEXT: concurrency full after the completion: [1, 0]",
    actions: [
      enq(J(1)),
      enq(J(2)),
      claim(),
      claim(),
      limit("queue", "", "0", "0", "1"),
      enq(J(3)),
      next(J(1)),
    ],
  },
  {
    name: "COMPLETENEXT: concurrency 1: the completion frees the slot, the next job leased",
    actions: [limit("queue", "", "0", "0", "1"), ...claimed(J(1)), enq(J(2)), next(J(1))],
  },
  {
    name: "COMPLETENEXT: rate window full: [1, <wait>]",
    actions: [
      limit("queue", "", "1", "60000", "0"),
      enq(J(1)),
      claim("30000", exact),
      enq(J(2)),
      next(J(1), "1", "10", "30000", exact),
    ],
  },
  {
    name: "COMPLETENEXT: a group's slot freed by the completion leases the group's next job",
    actions: [
      limit("default", "", "0", "0", "1"),
      grouped(J(1), "g"),
      grouped(J(2), "g"),
      claim(),
      claim(),
      next(J(1)),
    ],
  },
  {
    name: "COMPLETENEXT: a group at its concurrency: its head parked, another group's job leased",
    actions: [
      limit("default", "", "0", "0", "1"),
      grouped(J(1), "g"),
      grouped(J(2), "h"),
      grouped(J(3), "h"),
      grouped(J(4), "g"),
      claim(),
      claim(),
      next(J(1)),
    ],
  },
];
