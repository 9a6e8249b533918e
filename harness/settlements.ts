/**
 * The listed cases of `COMPLETEN`: `COMPLETE` for each of its triples in order, then up to `next`
 * claims (`CLAIM`'s, min(`next`, triples) at most) — exactly the single transitions in a row, the
 * pause read inside (D13). A job's refusal is its outcome (its text), the others settled; the
 * values are checked first, all of them; flow control claim by claim after every completion.
 */
import {
  BIG,
  C,
  type Case,
  type CallOptions,
  claim,
  claimed,
  enq,
  exact,
  grouped,
  J,
  key,
  limitOf as limit,
  row,
  seed,
  wrongType,
} from "./build.js";
import type { Action } from "./actions.js";

/** A triple: id, lease token, result. */
type Triple = [string, string, string];
const t = (id: string, token = "1", result = "ok"): Triple => [id, token, result];
/** `COMPLETEN` of `triples` (keep, lease, next). */
const many = (triples: Triple[], next = "0", keep = "10", lease = "30000", o: CallOptions = {}) =>
  C("COMPLETEN", [keep, lease, next, ...triples.flat()], o);
/** `n` jobs leased one by one (J(1)…J(n), each token 1). */
/** `n` jobs added and leased; `exactly`: each claim lease-exact (a rate window's start is its time). */
const leased = (n: number, exactly = false): Action[] => [
  ...Array.from({ length: n }, (_, i) => enq(J(i + 1))),
  ...Array.from({ length: n }, () => (exactly ? claim("30000", exact) : claim())),
];
const three = [t(J(1)), t(J(2)), t(J(3))];

export const SETTLEMENT_CASES: Case[] = [
  { name: "COMPLETEN: one job, nothing pending", actions: [...claimed(J(1)), many([t(J(1))], "1")] },
  { name: "COMPLETEN: three jobs, nothing leased (next 0)", actions: [...leased(3), enq(J(4)), many(three)] },
  {
    name: "COMPLETEN: three jobs, three next leased",
    actions: [...leased(3), enq(J(4)), enq(J(5)), enq(J(6)), enq(J(7)), many(three, "3")],
  },
  {
    name: "COMPLETEN: next past the triples: one claim per triple",
    actions: [...leased(2), enq(J(4)), enq(J(5)), enq(J(6)), many([t(J(1)), t(J(2))], BIG)],
  },
  {
    name: "COMPLETEN: lease-exact",
    actions: [...leased(2), enq(J(4)), enq(J(5)), many([t(J(1)), t(J(2))], "2", "10", "30000", exact)],
  },
  { name: "COMPLETEN: keep 0 deletes the rows", actions: [...leased(3), many(three, "0", "0")] },
  { name: "COMPLETEN: keep 1 keeps the last", actions: [...leased(3), many(three, "0", "1")] },
  /* a job's refusal is its outcome; the others settle */
  {
    name: "COMPLETEN: a stale token among three: refused by name, the others completed",
    actions: [...leased(3), enq(J(4)), many([t(J(1)), t(J(2), "2"), t(J(3))], "3")],
  },
  {
    name: "COMPLETEN: the same job twice: the second is not active",
    actions: [...leased(2), many([t(J(1)), t(J(1)), t(J(2))], "1")],
  },
  {
    name: "COMPLETEN: an id without the JOB prefix, a job not found",
    actions: [...leased(2), many([t("XYZ1"), t(J(1)), t(J(8)), t(J(2))], "2")],
  },
  {
    name: "COMPLETEN: a pending job is not active",
    actions: [...leased(1), enq(J(5)), many([t(J(5)), t(J(1))], "1")],
  },
  {
    name: "COMPLETEN: done not a sorted set: each refused",
    actions: [...leased(2), wrongType("done"), many([t(J(1)), t(J(2))], "2")],
  },
  {
    name: "COMPLETEN: active not a sorted set",
    actions: [...leased(1), wrongType("active"), many([t(J(1))], "1")],
  },
  /* the values, all checked before any gate */
  ...[
    ["keep", ["-1", "30000", "1"]],
    ["lease", ["10", "0", "1"]],
    ["next", ["10", "30000", "01"]],
  ].map(([what, fixed]) => ({
    name: `COMPLETEN: ${what} refused, nothing written`,
    actions: [...leased(1), C("COMPLETEN", [...(fixed as string[]), J(1), "1", "ok"])],
  })),
  ...["0", "x", "", "01"].map((bad) => ({
    name: `COMPLETEN: the second triple's token ${JSON.stringify(bad)} refused, the first not completed`,
    actions: [...leased(2), many([t(J(1)), t(J(2), bad)], "1")],
  })),
  {
    name: "COMPLETEN: a partial triple: wrong number of values",
    actions: [...leased(1), C("COMPLETEN", ["10", "30000", "1", J(1), "1", "ok", J(2)])],
  },
  {
    name: "COMPLETEN: no triple: wrong number of values",
    actions: [...leased(1), C("COMPLETEN", ["10", "30000", "1"])],
  },
  {
    name: "COMPLETEN: 1000 triples, the most",
    actions: [
      ...leased(2),
      many([t(J(1)), ...Array.from({ length: 998 }, (_, i) => t(J(100 + i))), t(J(2))], "2"),
    ],
  },
  {
    name: "COMPLETEN: 1001 triples: wrong number of values",
    actions: [...leased(1), many(Array.from({ length: 1001 }, () => t(J(1))))],
  },
  /* the pause read, after the completions */
  {
    name: "COMPLETEN: paused queue: completed, nothing leased",
    actions: [...leased(2), enq(J(4)), C("PAUSE", []), many([t(J(1)), t(J(2))], "2")],
  },
  {
    name: "COMPLETEN: meta not a hash: completed, nothing leased",
    actions: [
      ...leased(1),
      enq(J(4)),
      seed(["DEL", key("meta")], ["SET", key("meta"), "x"]),
      many([t(J(1))], "1"),
    ],
  },
  /* flow control, claim by claim, after every completion */
  {
    name: "COMPLETEN: queue concurrency 2: both slots taken again",
    actions: [
      limit("queue", "", "0", "0", "2"),
      ...leased(2),
      enq(J(4)),
      enq(J(5)),
      enq(J(6)),
      many([t(J(1)), t(J(2))], "2"),
    ],
  },
  {
    name: "COMPLETEN: queue concurrency 2, one job completed, two claims: one leased, then the limit",
    actions: [
      limit("queue", "", "0", "0", "2"),
      ...leased(2),
      enq(J(4)),
      enq(J(5)),
      many([t(J(1)), t(J(8))], "2"),
    ],
  },
  {
    name: "COMPLETEN: rate 3 per minute: one leased, then the window's wait",
    actions: [
      limit("queue", "", "3", "60000", "0"),
      ...leased(2, true),
      enq(J(4)),
      enq(J(5)),
      many([t(J(1)), t(J(2))], "2", "10", "30000", exact),
    ],
  },
  {
    name: "COMPLETEN: group concurrency 1: the freed group's parked job leased",
    actions: [
      limit("default", "", "0", "0", "1"),
      grouped(J(1), "g"),
      grouped(J(2), "g"),
      grouped(J(3), "h"),
      grouped(J(4), "h"),
      claim(),
      claim(),
      many([t(J(1)), t(J(3))], "2"),
    ],
  },
  /* the claims' heads taken in one pop (a queue without limits): what is not leased goes back */
  {
    name: "COMPLETEN: three claims, two pending: both leased, pending empty",
    actions: [...leased(3), enq(J(4)), enq(J(5)), many(three, "3")],
  },
  {
    name: "COMPLETEN: two claims, five pending: the three not leased stay at their scores",
    actions: [
      ...leased(2),
      ...[3, 4, 5, 6, 7].map((n) => enq(J(n))),
      seed(["ZADD", key("pending"), "-7", J(7)]),
      many([t(J(1)), t(J(2))], "2"),
    ],
  },
  ...(
    [
      ["already active", ["ZADD", key("active"), "5", J(5)]],
      ["without integer attempts", ["HSET", row(J(5)), "attempts", "x"]],
    ] as const
  ).map(([what, write]) => ({
    name: `COMPLETEN: the second head ${what}: the first leased, the heads after it back`,
    actions: [...leased(3), enq(J(4)), enq(J(5)), enq(J(6)), seed([...write]), many(three, "3")],
  })),
  {
    name: "COMPLETEN: an orphan and a grouped job among the heads: back before the claim reads pending",
    actions: [
      ...leased(3),
      enq(J(4)),
      seed(["ZADD", key("pending"), "0", J(5)], ["ZADD", key("pending"), "0", "XYZ5"]),
      grouped(J(6), "g"),
      enq(J(7)),
      many(three, "3"),
    ],
  },
  {
    name: "COMPLETEN: a claim refused after the completions: they stand",
    actions: [...leased(1), enq(J(4)), seed(["ZADD", key("active"), "5", J(4)]), many([t(J(1))], "1")],
  },
];
