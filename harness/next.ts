/**
 * The listed cases of the fused settlements, `COMPLETENEXT` and `FAILNEXT`: a completion (a
 * failure) and, in the same transition, the queue's next job leased — exactly `COMPLETE` (`FAIL`)
 * followed by `CLAIM`, the pause read inside the transition. The cases both share: what they lease
 * under flow control (the queue's concurrency and rate, a group's slot the settlement freed),
 * their refusals (the settlement's: nothing written, nothing leased) and a claim refused after the
 * settlement (it stands, nothing leased). Then each verb's own: `COMPLETENEXT`'s retention and
 * reaped attempts; `FAILNEXT`'s retried job at the head of `pending` (leased again, as a claim
 * after the failure leases it), behind a job of higher priority, held back by its group's rate,
 * sent to `schedule` or `dead`.
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
  NO_EXTRAS,
  limitOf as limit,
  row,
  seed,
  wait,
  wrongType,
} from "./build.js";
import type { Action } from "./actions.js";
import { entry, kinds } from "./bus.js";

/** A fused settlement of `id` under lease `token`, leasing the next job for `lease` ms. */
type Settle = (id: string, token?: string, lease?: string, o?: CallOptions) => Action;

/** `COMPLETENEXT` of `id` (token, keep, lease). */
const next = (id: string, token = "1", keep = "10", lease = "30000", o: CallOptions = {}) =>
  C("COMPLETENEXT", [id, token, "ok", keep, lease], o);
/** `FAILNEXT` of `id`: its values after the token (error, backoff, max attempts, keep), then the lease. */
const failNext = (id: string, token = "1", values = ["boom", "0", "5", "10"], lease = "30000", o = {}) =>
  C("FAILNEXT", [id, token, ...values, lease, ""], o);
/** `id` added with priority `p` and max attempts `max` (0: none of its own). */
const added = (id: string, p: string, max = "0"): Action =>
  C("ADD", [id, "p", p, "0", max, "", ...NO_EXTRAS]);
const pause = C("PAUSE", []);

const SETTLES: [string, Settle][] = [
  ["COMPLETENEXT", (id, token, lease, o) => next(id, token, "10", lease, o)],
  ["FAILNEXT", (id, token, lease, o) => failNext(id, token, undefined, lease, o)],
];

/** The cases `COMPLETENEXT` and `FAILNEXT` share, for one of them. */
function shared(verb: string, settle: Settle): Case[] {
  return [
    { name: `${verb}: nothing else pending`, actions: [...claimed(J(1)), settle(J(1))] },
    { name: `${verb}: the next job leased`, actions: [...claimed(J(1)), enq(J(2)), settle(J(1))] },
    {
      name: `${verb}: lease-exact`,
      actions: [...claimed(J(1)), enq(J(2)), settle(J(1), "1", "30000", exact)],
    },
    { name: `${verb}: largest lease`, actions: [...claimed(J(1)), enq(J(2)), settle(J(1), "1", BIG)] },
    {
      name: `${verb}: paused queue: settled, nothing leased`,
      actions: [...claimed(J(1)), enq(J(2)), pause, settle(J(1))],
    },
    {
      name: `${verb}: paused flag other than 1 leases`,
      actions: [...claimed(J(1)), enq(J(2)), seed(["HSET", key("meta"), "paused", "yes"]), settle(J(1))],
    },
    {
      name: `${verb}: meta not a hash: settled, nothing leased`,
      actions: [
        ...claimed(J(1)),
        enq(J(2)),
        seed(["DEL", key("meta")], ["SET", key("meta"), "x"]),
        settle(J(1)),
      ],
    },
    /* the settlement's refusals: nothing written, nothing leased */
    ...["0", "-1", "01", "1000000000000000", "abc", ""].map((l) => ({
      name: `${verb}: lease ${JSON.stringify(l)} refused before the settlement`,
      actions: [...claimed(J(1)), enq(J(2)), settle(J(1), "1", l)],
    })),
    { name: `${verb}: stale lease token`, actions: [...claimed(J(1)), enq(J(2)), settle(J(1), "3")] },
    { name: `${verb}: job not active`, actions: [enq(J(1)), settle(J(1))] },
    { name: `${verb}: job not found`, actions: [enq(J(2)), settle(J(1))] },
    { name: `${verb}: id without the JOB prefix`, actions: [enq(J(2)), settle("XYZ1")] },
    { name: `${verb}: twice`, actions: [...claimed(J(1)), enq(J(2)), settle(J(1)), settle(J(1))] },
    /* the claim refused after the settlement: it stands, nothing leased */
    {
      name: `${verb}: next head already active: settled, nothing leased`,
      actions: [...claimed(J(1)), enq(J(2)), seed(["ZADD", key("active"), "5", J(2)]), settle(J(1))],
    },
    {
      name: `${verb}: next row without integer attempts: settled, nothing leased`,
      actions: [...claimed(J(1)), enq(J(2)), seed(["HSET", row(J(2)), "attempts", "x"]), settle(J(1))],
    },
    {
      name: `${verb}: orphans ahead of the next job: dropped, counted, the job leased`,
      actions: [
        ...claimed(J(1)),
        enq(J(2)),
        seed(["ZADD", key("pending"), "-1", "XYZ9"], ["ZADD", key("pending"), "-1", J(9)]),
        settle(J(1)),
      ],
    },
    /* flow control: what a settlement followed by a claim obeys */
    {
      name: `${verb}: concurrency full after the settlement: the claim limited, wait 0`,
      actions: [
        enq(J(1)),
        enq(J(2)),
        claim(),
        claim(),
        limit("queue", "", "0", "0", "1"),
        enq(J(3)),
        settle(J(1)),
      ],
    },
    {
      name: `${verb}: concurrency 1: the settlement frees the slot, a job leased`,
      actions: [limit("queue", "", "0", "0", "1"), ...claimed(J(1)), enq(J(2)), settle(J(1))],
    },
    {
      name: `${verb}: rate window full: the claim limited, its wait`,
      actions: [
        limit("queue", "", "1", "60000", "0"),
        enq(J(1)),
        claim("30000", exact),
        enq(J(2)),
        settle(J(1), "1", "30000", exact),
      ],
    },
    {
      name: `${verb}: a group's slot freed by the settlement leases the group's next job`,
      actions: [
        limit("default", "", "0", "0", "1"),
        grouped(J(1), "g"),
        grouped(J(2), "g"),
        claim(),
        claim(),
        settle(J(1)),
      ],
    },
    {
      name: `${verb}: a group at its concurrency: its head parked, another group's job leased`,
      actions: [
        limit("default", "", "0", "0", "1"),
        grouped(J(1), "g"),
        grouped(J(2), "h"),
        grouped(J(3), "h"),
        grouped(J(4), "g"),
        claim(),
        claim(),
        settle(J(1)),
      ],
    },
  ];
}

/** The `completed` entry of `id` (attempt 1, result `ok`), with `next` and its attempt when given. */
const completedEntry = (id: string, ...lease: string[]) => [
  "event",
  "completed",
  "id",
  id,
  "attempt",
  "1",
  "result",
  "ok",
  ...(lease.length === 0 ? [] : ["next", lease[0]!, "next_attempt", lease[1]!]),
];

const COMPLETENEXT_CASES: Case[] = [
  /* the bus: one entry for the completion and the lease that followed it */
  {
    name: "COMPLETENEXT: one entry, the completion with the job leased (next)",
    actions: [
      ...claimed(J(1)),
      enq(J(2)),
      next(J(1)),
      kinds("COMPLETENEXT", ["added", "active", "added", "completed"]),
      entry("COMPLETENEXT", -1, completedEntry(J(1), J(2), "1")),
    ],
  },
  {
    name: "COMPLETENEXT: nothing pending: the completion's entry alone",
    actions: [...claimed(J(1)), next(J(1)), entry("COMPLETENEXT", -1, completedEntry(J(1)))],
  },
  {
    name: "COMPLETENEXT: paused: the completion's entry alone",
    actions: [
      ...claimed(J(1)),
      enq(J(2)),
      pause,
      next(J(1)),
      entry("COMPLETENEXT", -1, completedEntry(J(1))),
    ],
  },
  {
    name: "COMPLETENEXT: the claim limited: the completion's entry alone",
    actions: [
      limit("queue", "", "1", "60000", "0"),
      enq(J(1)),
      claim("30000", exact),
      enq(J(2)),
      next(J(1), "1", "10", "30000", exact),
      entry("COMPLETENEXT", -1, completedEntry(J(1))),
    ],
  },
  {
    name: "COMPLETENEXT: a result over 1 KiB: no result field, the lease on the entry",
    actions: [
      ...claimed(J(1)),
      enq(J(2)),
      C("COMPLETENEXT", [J(1), "1", "x".repeat(1025), "0", "30000"]),
      entry("COMPLETENEXT", -1, [
        "event",
        "completed",
        "id",
        J(1),
        "attempt",
        "1",
        "next",
        J(2),
        "next_attempt",
        "1",
      ]),
    ],
  },
  {
    name: "COMPLETENEXT: the bus off: no entry, the job leased",
    actions: [C("EVENTS", ["0", "0"]), ...claimed(J(1)), enq(J(2)), next(J(1)), kinds("COMPLETENEXT", [])],
  },
  {
    name: "COMPLETENEXT: keep 0, lease 1 ms, then the leased job completes its own next",
    actions: [...claimed(J(1)), enq(J(2)), enq(J(3)), next(J(1), "1", "0", "1"), next(J(2), "1", "0")],
  },
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
  { name: "COMPLETENEXT: keep refused", actions: [...claimed(J(1)), enq(J(2)), next(J(1), "1", "-1")] },
  {
    name: "COMPLETENEXT: done not a sorted set",
    actions: [...claimed(J(1)), enq(J(2)), wrongType("done"), next(J(1))],
  },
  {
    name: "COMPLETENEXT: keep 0 with done not a sorted set: completed, the next job leased (done untouched)",
    actions: [...claimed(J(1)), enq(J(2)), wrongType("done"), next(J(1), "1", "0")],
  },
  {
    name: "COMPLETE: keep 0 with done not a sorted set: completed (done untouched); keep 10 refused",
    actions: [
      ...claimed(J(1)),
      ...claimed(J(2)),
      wrongType("done"),
      C("COMPLETE", [J(1), "1", "ok", "0"]),
      C("COMPLETE", [J(2), "1", "ok", "10"]),
    ],
  },
];

/** `FAILNEXT` with the values after the token. */
const failWith = (id: string, values: string[], token = "1", o = {}) =>
  failNext(id, token, values, "30000", o);

const FAILNEXT_CASES: Case[] = [
  /* the retried job is a pending job like any other: leased again when it is the claim's head */
  {
    name: "FAILNEXT: the retried job alone: leased again, attempt 2",
    actions: [...claimed(J(1)), failNext(J(1))],
  },
  {
    name: "FAILNEXT: the retried job ahead of a later id: leased again, lease-exact",
    actions: [...claimed(J(1)), enq(J(2)), failNext(J(1), "1", undefined, "30000", exact)],
  },
  {
    name: "FAILNEXT: a retried job leased again fails its own next, then dies",
    actions: [
      ...claimed(J(1)),
      enq(J(2)),
      failWith(J(1), ["e1", "0", "2", "10"]),
      failWith(J(1), ["e2", "0", "2", "10"], "2"),
    ],
  },
  {
    name: "FAILNEXT: a job ahead by priority: it is leased, the retried job waits in pending",
    actions: [added(J(1), "5"), claim(), enq(J(2)), failNext(J(1))],
  },
  {
    name: "FAILNEXT: backoff: the job scheduled, the next job leased",
    actions: [...claimed(J(1)), enq(J(2)), failWith(J(1), ["e", "60000", "5", "10"])],
  },
  {
    name: "FAILNEXT: backoff, nothing else pending: scheduled, nothing leased",
    actions: [...claimed(J(1)), failWith(J(1), ["e", "1000", "5", "10"])],
  },
  {
    name: "FAILNEXT: attempts exhausted: dead, the next job leased",
    actions: [...claimed(J(1)), enq(J(2)), failWith(J(1), ["e", "0", "1", "10"])],
  },
  {
    name: "FAILNEXT: dead with keep 0: the row deleted, the next job leased",
    actions: [...claimed(J(1)), enq(J(2)), failWith(J(1), ["e", "0", "1", "0"])],
  },
  {
    name: "FAILNEXT: the row's own max attempts wins: dead",
    actions: [added(J(1), "0", "1"), claim(), enq(J(2)), failNext(J(1))],
  },
  {
    name: "FAILNEXT: max attempts 0 is dead now, over the row's own: the next job leased",
    actions: [added(J(1), "0", "9"), claim(), enq(J(2)), failWith(J(1), ["e", "1000", "0", "10"])],
  },
  {
    name: "FAILNEXT: a paused queue: the retried job stays pending",
    actions: [...claimed(J(1)), pause, failNext(J(1))],
  },
  {
    name: "FAILNEXT: its group at concurrency 1: the release frees the slot, the job leased again",
    actions: [
      limit("default", "", "0", "0", "1"),
      grouped(J(1), "g"),
      grouped(J(2), "g"),
      claim(),
      failNext(J(1)),
    ],
  },
  {
    name: "FAILNEXT: its group's rate window full: the job held in schedule, another group's leased",
    actions: [
      limit("default", "", "1", "60000", "0"),
      grouped(J(1), "g"),
      grouped(J(2), "h"),
      claim("30000", exact),
      failNext(J(1), "1", undefined, "30000", exact),
    ],
  },
  /* the failure's own refusals, before any gate */
  {
    name: "FAILNEXT: backoff refused",
    actions: [...claimed(J(1)), enq(J(2)), failWith(J(1), ["e", "-1", "5", "10"])],
  },
  {
    name: "FAILNEXT: max attempts refused",
    actions: [...claimed(J(1)), enq(J(2)), failWith(J(1), ["e", "0", "0", "10"])],
  },
  {
    name: "FAILNEXT: keep refused",
    actions: [...claimed(J(1)), enq(J(2)), failWith(J(1), ["e", "0", "5", "x"])],
  },
  {
    name: "FAILNEXT: dead not a sorted set",
    actions: [...claimed(J(1)), enq(J(2)), wrongType("dead"), failNext(J(1))],
  },
  {
    name: "FAILNEXT: schedule not a sorted set",
    actions: [...claimed(J(1)), enq(J(2)), wrongType("schedule"), failNext(J(1))],
  },
];

export const NEXT_CASES: Case[] = [
  ...SETTLES.flatMap(([verb, settle]) => shared(verb, settle)),
  ...COMPLETENEXT_CASES,
  ...FAILNEXT_CASES,
];
