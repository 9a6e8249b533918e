/**
 * The listed cases of `CLAIM`: leases, values, type and head gates, the paused claim (D2, D7),
 * and the orphans ahead of the head — dropped (at most 100 per call) and counted in `meta`.
 */
import { C, type Case, claim, claimed, enq, J, key, row, seed, wait } from "./build.js";
import type { Action } from "./actions.js";

const BIG = "999999999999999";
const exact = { mode: "exact" as const };
const reap = (limit = "100", max = "5", keep = "10") => C("REAP", [limit, max, keep]);
const pause = C("PAUSE", []);
const resume = C("RESUME", []);
const wrongType = (slot: Parameters<typeof key>[0]) => seed(["SET", key(slot), "not a set"]);

/** Orphans ahead of every job (score -1): ids without the JOB prefix, without a row, with a row that is not a hash. */
const orphans = (n: number, first = 1000): Action =>
  seed(
    ...Array.from({ length: n }, (_, i) => {
      const kind = i % 3;
      const id = kind === 0 ? `XYZ${first + i}` : J(first + i);
      return ["ZADD", key("pending"), "-1", id];
    }),
    ...Array.from({ length: n }, (_, i) => i)
      .filter((i) => i % 3 === 2)
      .map((i) => ["SET", row(J(first + i)), "not a hash"]),
  );

export const CLAIM_CASES: Case[] = [
  { name: "CLAIM: empty queue", actions: [claim()] },
  { name: "CLAIM: one job (window)", actions: claimed(J(1)) },
  { name: "CLAIM: lease-exact", actions: [enq(J(1)), claim("30000", exact)] },
  { name: "CLAIM: lease 1 ms", actions: claimed(J(1), "1") },
  { name: "CLAIM: lease 1 ms, lease-exact", actions: [enq(J(1)), claim("1", exact)] },
  { name: "CLAIM: largest lease", actions: claimed(J(1), BIG) },
  { name: "CLAIM: second attempt after reap", actions: [...claimed(J(1), "1"), wait(5), reap(), claim()] },
  ...["0", "-1", "01", "1000000000000000", "abc", "", "1e3"].map((l) => ({
    name: `CLAIM: lease ${JSON.stringify(l)} refused`,
    actions: [enq(J(1)), claim(l)],
  })),
  { name: "CLAIM: pending not a sorted set", actions: [wrongType("pending"), claim()] },
  { name: "CLAIM: active not a sorted set", actions: [enq(J(1)), wrongType("active"), claim()] },
  {
    name: "CLAIM: head already active",
    actions: [enq(J(1)), seed(["ZADD", key("active"), "5", J(1)]), claim()],
  },
  ...["x", "-1", "1.5", "1234567890123456", ""].map((a) => ({
    name: `CLAIM: row attempts ${JSON.stringify(a)} refused`,
    actions: [enq(J(1)), seed(["HSET", row(J(1)), "attempts", a]), claim()],
  })),
  {
    name: "CLAIM: row attempts with leading zeros",
    actions: [enq(J(1)), seed(["HSET", row(J(1)), "attempts", "007"]), claim()],
  },
  {
    name: "CLAIM: row without attempts",
    actions: [enq(J(1)), seed(["HDEL", row(J(1)), "attempts"]), claim()],
  },
  { name: "CLAIM: row without payload", actions: [enq(J(1)), seed(["HDEL", row(J(1)), "payload"]), claim()] },
  {
    name: "CLAIM: paused queue, host step (D2)",
    actions: [pause, enq(J(1)), claim("30000", { expect: "D2" })],
  },
  {
    name: "CLAIM: paused queue, raw EVAL (D2)",
    actions: [pause, enq(J(1)), claim("30000", { host: false, expect: "D2" })],
  },
  { name: "CLAIM: paused queue, bad lease refused first", actions: [pause, enq(J(1)), claim("0")] },
  { name: "CLAIM: resumed queue claims", actions: [pause, enq(J(1)), resume, claim()] },
  { name: "CLAIM: meta not a hash, host step", actions: [enq(J(1)), wrongType("meta"), claim()] },
  {
    name: "CLAIM: meta not a hash, raw EVAL (D7)",
    actions: [enq(J(1)), wrongType("meta"), claim("30000", { host: false, expect: "D7" })],
  },
  {
    name: "CLAIM: paused flag other than 1",
    actions: [enq(J(1)), seed(["HSET", key("meta"), "paused", "yes"]), claim()],
  },

  {
    name: "CLAIM: attempts at the 15-digit limit, then past it",
    actions: [
      enq(J(1)),
      seed(["HSET", row(J(1)), "attempts", BIG]),
      claim("1"),
      wait(5),
      reap("100", BIG),
      claim(),
    ],
  },

  /* orphans ahead of the head */
  { name: "CLAIM: an orphan without the JOB prefix is dropped and counted", actions: [orphans(1), claim()] },
  {
    name: "CLAIM: orphans of every kind ahead of a job: dropped, counted, the job claimed",
    actions: [enq(J(1)), orphans(3), claim(), claim()],
  },
  {
    name: "CLAIM: orphans ahead of a job, lease-exact",
    actions: [enq(J(1)), orphans(5), claim("30000", exact)],
  },
  { name: "CLAIM: only orphans: [] with them dropped and counted", actions: [orphans(7), claim(), claim()] },
  {
    name: "CLAIM: exactly 100 orphans, then a job: all dropped, the job claimed",
    actions: [enq(J(1)), orphans(100), claim()],
  },
  {
    name: "CLAIM: 101 orphans, then a job: 100 dropped and [], the next claim drops one and claims",
    actions: [enq(J(1)), orphans(101), claim(), claim(), claim()],
  },
  {
    name: "CLAIM: 250 orphans: at most 100 per call",
    actions: [orphans(250), claim(), claim(), claim(), claim()],
  },
  {
    name: "CLAIM: orphans counted on top of the count in meta",
    actions: [seed(["HSET", key("meta"), "orphans", "41"]), orphans(2), claim()],
  },
  ...["x", "-1", "01", "", "1234567890123456", "9223372036854775807"].map((v) => ({
    name: `CLAIM: meta orphans ${JSON.stringify(v)} is not a count: it starts over`,
    actions: [seed(["HSET", key("meta"), "orphans", v]), orphans(2), enq(J(1)), claim()],
  })),
  {
    name: "CLAIM: orphans ahead of a head already active: refused, nothing dropped",
    actions: [enq(J(1)), seed(["ZADD", key("active"), "5", J(1)]), orphans(2), claim()],
  },
  {
    name: "CLAIM: orphans ahead of a row with bad attempts: refused, nothing dropped",
    actions: [enq(J(1)), seed(["HSET", row(J(1)), "attempts", "x"]), orphans(2), claim()],
  },
  {
    name: "CLAIM: orphans ahead, active not a sorted set: WRONGTYPE, nothing dropped",
    actions: [enq(J(1)), orphans(2), wrongType("active"), claim()],
  },
  {
    name: "CLAIM: only orphans, active not a sorted set: WRONGTYPE, nothing dropped",
    actions: [orphans(2), wrongType("active"), claim()],
  },
  {
    name: "CLAIM: orphans ahead, meta not a hash, host step",
    actions: [enq(J(1)), orphans(2), wrongType("meta"), claim()],
  },
  {
    name: "CLAIM: orphans ahead, meta not a hash, raw EVAL: WRONGTYPE on both",
    actions: [enq(J(1)), orphans(2), wrongType("meta"), claim("30000", { host: false, expect: "equal" })],
  },
  {
    name: "CLAIM: orphans ahead of a paused queue, host step (D2): nothing dropped",
    actions: [pause, enq(J(1)), orphans(2), claim("30000", { expect: "D2" })],
  },
  {
    name: "CLAIM: a job whose row was deleted is an orphan: dropped, the next job claimed",
    actions: [enq(J(1)), enq(J(2)), seed(["DEL", row(J(1))]), claim(), claim()],
  },
];
