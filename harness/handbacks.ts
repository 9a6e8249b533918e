/**
 * The listed cases of the verbs that hand an active job back: `RESCHEDULE` and `REQUEUE` (both
 * executors, compared): success
 * paths, lease-exact variants, stale tokens, wrong types and every refused value.
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
  promote,
  requeue,
  reschedule,
  row,
  seed,
  wrongType,
} from "./build.js";
import { queueKey as keyText } from "../src/keyspace.js";

export const HANDBACK_CASES: Case[] = [
  /* RESCHEDULE (reschedule.lua and EMQ.RESCHEDULE, compared) */
  {
    name: "RESCHEDULE: an active job to schedule (window, explicit check)",
    actions: [
      ...claimed(J(1)),
      reschedule(J(1)),
      {
        kind: "check",
        verb: "RESCHEDULE",
        what: "RESCHEDULE puts the id in schedule at now+delay, state scheduled, attempts unchanged, reply = due",
        fn: (last) => {
          const problems: string[] = [];
          const due = last.reply.t === "int" ? Number(last.reply.v) : Number.NaN;
          if (!(due - 5000 >= last.window.lo && due - 5000 <= last.window.hi))
            problems.push(`reply ${due} not in the window + 5000`);
          const sched = last.after.get(keyText(last.side.name("A"), "schedule"));
          const score =
            sched?.type === "zset" ? sched.members.find(([m]) => m.toString() === J(1))?.[1] : undefined;
          if (Number(score) !== due) problems.push(`schedule score ${score} is not the reply ${due}`);
          const r = last.after.get(keyText(last.side.name("A"), `job:${J(1)}`));
          const f = (n: string) =>
            r?.type === "hash" ? r.fields.find(([k]) => k.toString() === n)?.[1].toString() : undefined;
          if (f("state") !== "scheduled") problems.push(`state ${f("state")}`);
          if (f("attempts") !== "1") problems.push(`attempts ${f("attempts")}`);
          if (last.after.has(keyText(last.side.name("A"), "active")))
            problems.push("active still holds the id");
          return problems;
        },
      },
    ],
  },
  { name: "RESCHEDULE: lease-exact", actions: [...claimed(J(1)), reschedule(J(1), "1", "5000", exact)] },
  {
    name: "RESCHEDULE: delay 0, then promote",
    actions: [...claimed(J(1)), reschedule(J(1), "1", "0"), promote()],
  },
  { name: "RESCHEDULE: stale lease token", actions: [...claimed(J(1)), reschedule(J(1), "2")] },
  { name: "RESCHEDULE: job not active", actions: [enq(J(1)), reschedule(J(1))] },
  { name: "RESCHEDULE: job not found", actions: [reschedule(J(1))] },
  { name: "RESCHEDULE: delay refused", actions: [...claimed(J(1)), reschedule(J(1), "1", "-1")] },
  { name: "RESCHEDULE: token refused", actions: [...claimed(J(1)), reschedule(J(1), "0")] },
  { name: "RESCHEDULE: id without the JOB prefix", actions: [reschedule("XYZ00000000001")] },
  {
    name: "RESCHEDULE: schedule not a sorted set",
    actions: [...claimed(J(1)), wrongType("schedule"), reschedule(J(1))],
  },

  /* REQUEUE */
  {
    name: "REQUEUE: back to pending at the row's priority, the limit raised, wake",
    actions: [addJob(J(1), "7"), claim(), requeue(J(1)), claim()],
  },
  {
    name: "REQUEUE: lease-exact, then claimed again",
    actions: [...claimed(J(1)), C("REQUEUE", [J(1), "1", "3"], exact), claim("30000", exact)],
  },
  {
    name: "REQUEUE: the row's max_attempts wins, and rises by one",
    actions: [
      addJob(J(1), "0", "0", "2"),
      claim(),
      requeue(J(1), "1", "9"),
      claim(),
      requeue(J(1), "2", "9"),
    ],
  },
  {
    name: "REQUEUE: at the last attempt, never dead (the limit rises)",
    actions: [
      addJob(J(1), "0", "0", "1"),
      claim(),
      requeue(J(1), "1", "1"),
      claim(),
      fail(J(1), "2", "0", "1"),
    ],
  },
  ...["0", "-3", "01", "x", "1000000000000000"].map((m) => ({
    name: `REQUEUE: a row max_attempts ${JSON.stringify(m)} is not a positive: the given one is used`,
    actions: [...claimed(J(1)), seed(["HSET", row(J(1)), "max_attempts", m]), requeue(J(1), "1", "4")],
  })),
  {
    name: "REQUEUE: max attempts at the 15-digit limit (the limit becomes 16 digits)",
    actions: [...claimed(J(1)), requeue(J(1), "1", BIG), claim(), requeue(J(1), "2", "3")],
  },
  ...["0", "-1", "01", "x", "", "1000000000000000"].map((m) => ({
    name: `REQUEUE: max attempts ${JSON.stringify(m)} refused`,
    actions: [...claimed(J(1)), requeue(J(1), "1", m)],
  })),
  { name: "REQUEUE: stale lease token", actions: [...claimed(J(1)), requeue(J(1), "9")] },
  { name: "REQUEUE: job not active", actions: [enq(J(1)), requeue(J(1))] },
  {
    name: "REQUEUE: state active but not in active",
    actions: [...claimed(J(1)), seed(["ZREM", key("active"), J(1)]), requeue(J(1))],
  },
  { name: "REQUEUE: job not found", actions: [requeue(J(1))] },
  { name: "REQUEUE: row not a hash", actions: [seed(["SET", row(J(1)), "x"]), requeue(J(1))] },
  { name: "REQUEUE: token refused", actions: [...claimed(J(1)), requeue(J(1), "x")] },
  { name: "REQUEUE: id without the JOB prefix", actions: [requeue("XYZ00000000001")] },
  {
    name: "REQUEUE: pending not a sorted set",
    actions: [...claimed(J(1)), wrongType("pending"), requeue(J(1))],
  },
  { name: "REQUEUE: active not a sorted set", actions: [wrongType("active"), requeue(J(1))] },
  { name: "REQUEUE: twice", actions: [...claimed(J(1)), requeue(J(1)), requeue(J(1))] },
];
