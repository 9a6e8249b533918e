/**
 * The listed cases of `CANCEL` (an operator's cancel: a job that has not finished is dead at once
 * with the error `cancelled`): from each state it cancels, the holder's refusals after it, the
 * states it leaves alone, flow control's release and parked ids, a flow's child, its refusals in
 * order and its entries on the bus. Cancels that write a time run lease-exact (one MULTI/EXEC).
 */
import { addJob, C, type Case, claimed, enq, exact, grouped, J, key, limitOf, row, seed } from "./build.js";
import { entry, kinds } from "./bus.js";

const cancel = (id: string, o = exact) => C("CANCEL", [id], o);
const complete = (id: string, token = "1") => C("COMPLETE", [id, token, "ok", "10"]);
const fail = (id: string, token = "1", max = "5") => C("FAIL", [id, token, "boom", "0", max, "10"]);
const claimX = () => C("CLAIM", ["30000"], exact);
const groupKey = (g: string) => ({ q: "A", derived: "group" as const, param: g });
const parked = { q: "A", derived: "parked" as const };

export const CANCEL_CASES: Case[] = [
  {
    name: "CANCEL: a pending job is dead, nothing left to claim",
    actions: [enq(J(1)), cancel(J(1)), claimX()],
  },
  { name: "CANCEL: a scheduled job", actions: [addJob(J(1), "0", "100000"), cancel(J(1))] },
  {
    name: "CANCEL: a job waiting out a retry's backoff (attempt 1 on its events)",
    actions: [...claimed(J(1)), C("FAIL", [J(1), "1", "boom", "5000", "5", "10"]), cancel(J(1))],
  },
  {
    name: "CANCEL: an active job; its holder's extend, complete and fail are refused",
    actions: [
      ...claimed(J(1)),
      cancel(J(1)),
      C("EXTEND", [J(1), "1", "30000"]),
      complete(J(1)),
      fail(J(1)),
      claimX(),
    ],
  },
  {
    name: "CANCEL: the events of an active job cancelled",
    actions: [
      ...claimed(J(1)),
      cancel(J(1)),
      kinds("CANCEL", ["added", "active", "failed", "dead"]),
      entry("CANCEL", -1, ["event", "dead", "id", J(1), "attempt", "1", "reason", "cancelled"]),
    ],
  },
  {
    name: "CANCEL: a completed job is left (reply completed)",
    actions: [...claimed(J(1)), complete(J(1)), cancel(J(1))],
  },
  {
    name: "CANCEL: a dead job is left; a second cancel answers dead",
    actions: [...claimed(J(1)), fail(J(1), "1", "1"), cancel(J(1)), enq(J(2)), cancel(J(2)), cancel(J(2))],
  },
  {
    name: "CANCEL: a retried job cancelled again",
    actions: [enq(J(1)), cancel(J(1)), C("RETRY", [J(1), "1"]), cancel(J(1))],
  },
  { name: "CANCEL: no such job", actions: [cancel(J(1))] },
  {
    name: "CANCEL: an orphan id in pending is not found, left",
    actions: [seed(["ZADD", key("pending"), "0", J(9)]), cancel(J(9))],
  },
  { name: "CANCEL: row a string", actions: [seed(["SET", row(J(1)), "x"]), cancel(J(1))] },
  { name: "CANCEL: id without the JOB prefix", actions: [cancel("XYZ00000000001"), cancel("")] },
  {
    name: "CANCEL: unknown state and no state are left",
    actions: [
      enq(J(1)),
      seed(["HSET", row(J(1)), "state", "weird"]),
      cancel(J(1)),
      enq(J(2)),
      seed(["HDEL", row(J(2)), "state"]),
      cancel(J(2)),
    ],
  },
  {
    name: "CANCEL: attempts not a count → attempt 0",
    actions: [enq(J(1)), seed(["HSET", row(J(1)), "attempts", "x"]), cancel(J(1))],
  },
  {
    name: "CANCEL: dead not a sorted set",
    actions: [enq(J(1)), seed(["SET", key("dead"), "x"]), cancel(J(1))],
  },
  {
    name: "CANCEL: active not a sorted set",
    actions: [enq(J(1)), seed(["SET", key("active"), "x"]), cancel(J(1))],
  },
  {
    name: "CANCEL: outbox not a sorted set",
    actions: [enq(J(1)), seed(["SET", key("outbox"), "x"]), cancel(J(1))],
  },
  {
    name: "CANCEL: a flow's child posts its failure to the outbox",
    actions: [
      C("ADD", [J(1), "p", "0", "0", "0", "", "", "", "0", "0", "P\u0000JOB00000000009", "", ""]),
      cancel(J(1)),
    ],
  },
  {
    name: "CANCEL: a flow's waiting parent is left",
    actions: [C("PARENT", [J(1), "p", "0", "0", "2", "fail", "", "", ""]), cancel(J(1))],
  },
  {
    name: "CANCEL: an active job of a group releases its slot: the parked id back in pending, claimed",
    actions: [
      limitOf("default", "", "0", "0", "1"),
      grouped(J(1), "g1"),
      grouped(J(2), "g1"),
      claimX(),
      claimX(),
      cancel(J(1)),
      claimX(),
    ],
  },
  {
    name: "CANCEL: a parked id leaves its group's set, the group leaves parked",
    actions: [
      limitOf("default", "", "0", "0", "1"),
      grouped(J(1), "g1"),
      grouped(J(2), "g1"),
      grouped(J(3), "g1"),
      claimX(),
      claimX(),
      cancel(J(2)),
      cancel(J(3)),
      complete(J(1)),
    ],
  },
  {
    name: "CANCEL: a grouped pending id, its group's set of another type",
    actions: [grouped(J(1), "g1"), seed(["SET", groupKey("g1"), "x"]), cancel(J(1))],
  },
  {
    name: "CANCEL: a parked id, parked of another type",
    actions: [
      limitOf("default", "", "0", "0", "1"),
      grouped(J(1), "g1"),
      grouped(J(2), "g1"),
      claimX(),
      claimX(),
      seed(["SET", parked, "x"]),
      cancel(J(2)),
    ],
  },
  {
    name: "CANCEL: an active job with the queue's concurrency wakes one",
    actions: [limitOf("queue", "", "0", "0", "1"), enq(J(1)), enq(J(2)), claimX(), cancel(J(1)), claimX()],
  },
];
