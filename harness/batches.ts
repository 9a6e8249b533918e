/**
 * The listed cases of `CLAIMN`: up to `count` claims in one transition — exactly `CLAIM` that
 * many times in a row, its pause read inside (D12). The run's ends (nothing left, a limited claim's
 * integer), its values, its refusals (the first claim's: nothing written; a later claim's: the
 * jobs before it stand), and flow control claim by claim (the queue's concurrency and rate, a
 * group's concurrency).
 */
import {
  BIG,
  C,
  type Case,
  claim,
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

/** `CLAIMN` of `count` jobs under `lease`. */
const batch = (count: string, lease = "30000", o = {}) => C("CLAIMN", [lease, count], o);
const three = [enq(J(1)), enq(J(2)), enq(J(3))];

export const BATCH_CASES: Case[] = [
  { name: "CLAIMN: empty queue: []", actions: [batch("3")] },
  { name: "CLAIMN: two of three", actions: [...three, batch("2")] },
  { name: "CLAIMN: count past the queue: all three", actions: [...three, batch("5")] },
  { name: "CLAIMN: count 1 is CLAIM's lease", actions: [...three, batch("1"), claim()] },
  { name: "CLAIMN: lease-exact", actions: [...three, batch("3", "30000", exact)] },
  { name: "CLAIMN: lease 1 ms, largest count", actions: [...three, batch("10000", "1")] },
  { name: "CLAIMN: largest lease", actions: [...three, batch("3", BIG)] },
  {
    name: "CLAIMN: priorities: lowest score first",
    actions: [
      C("ADD", [J(1), "p", "5", "0", "0", "", "", "", "0", "0", "", "", ""]),
      C("ADD", [J(2), "p", "-1", "0", "0", "", "", "", "0", "0", "", "", ""]),
      enq(J(3)),
      batch("3"),
    ],
  },
  { name: "CLAIMN: then CLAIM takes the rest", actions: [...three, batch("2"), claim()] },
  {
    name: "CLAIMN: 120 of 130: past the heads taken ahead in one pop, then one pop each",
    actions: [...Array.from({ length: 130 }, (_, i) => enq(J(i + 1))), batch("120")],
  },
  ...["0", "10001", "01", "-1", "x", ""].map((n) => ({
    name: `CLAIMN: count ${JSON.stringify(n)} refused`,
    actions: [...three, batch(n)],
  })),
  ...["0", "01", "1000000000000000", ""].map((l) => ({
    name: `CLAIMN: lease ${JSON.stringify(l)} refused`,
    actions: [...three, batch("2", l)],
  })),
  { name: "CLAIMN: paused queue: []", actions: [...three, C("PAUSE", []), batch("3")] },
  {
    name: "CLAIMN: paused flag other than 1 claims",
    actions: [...three, seed(["HSET", key("meta"), "paused", "yes"]), batch("3")],
  },
  {
    name: "CLAIMN: meta not a hash: WRONGTYPE",
    actions: [...three, seed(["DEL", key("meta")], ["SET", key("meta"), "x"]), batch("3")],
  },
  { name: "CLAIMN: pending not a sorted set", actions: [wrongType("pending"), batch("2")] },
  { name: "CLAIMN: active not a sorted set", actions: [...three, wrongType("active"), batch("2")] },
  /* the first claim's refusal is the reply; a later one's ends the array */
  {
    name: "CLAIMN: first head already active: refused",
    actions: [...three, seed(["ZADD", key("active"), "5", J(1)]), batch("3")],
  },
  {
    name: "CLAIMN: second head already active: the first leased",
    actions: [...three, seed(["ZADD", key("active"), "5", J(2)]), batch("3")],
  },
  {
    name: "CLAIMN: second row without integer attempts: the first leased",
    actions: [...three, seed(["HSET", row(J(2)), "attempts", "x"]), batch("3")],
  },
  {
    name: "CLAIMN: orphans between the jobs: dropped, counted",
    actions: [
      enq(J(1)),
      enq(J(5)),
      seed(["ZADD", key("pending"), "0", "XYZ2"], ["ZADD", key("pending"), "0", J(3)]),
      batch("3"),
    ],
  },
  /* flow control, claim by claim */
  {
    name: "CLAIMN: queue concurrency 2: two leased, then [.., 0]",
    actions: [limit("queue", "", "0", "0", "2"), ...three, batch("3")],
  },
  {
    name: "CLAIMN: queue concurrency full: [0]",
    actions: [limit("queue", "", "0", "0", "1"), ...three, claim(), batch("3")],
  },
  {
    name: "CLAIMN: rate 2 per minute: two leased, then the window's wait",
    actions: [limit("queue", "", "2", "60000", "0"), ...three, batch("3", "30000", exact)],
  },
  {
    name: "CLAIMN: group concurrency 1: one per group, the others parked",
    actions: [
      limit("default", "", "0", "0", "1"),
      grouped(J(1), "g"),
      grouped(J(2), "g"),
      grouped(J(3), "h"),
      grouped(J(4), "h"),
      enq(J(5)),
      batch("5"),
    ],
  },
  {
    name: "CLAIMN: group rate 1 per minute: the group's second delayed",
    actions: [
      limit("default", "", "1", "60000", "0"),
      grouped(J(1), "g"),
      grouped(J(2), "g"),
      enq(J(3)),
      batch("3", "30000", exact),
    ],
  },
  {
    name: "CLAIMN: a later claim whose park meets a wrong type: the jobs before it stand",
    actions: [
      limit("default", "", "0", "0", "1"),
      grouped(J(1), "g"),
      grouped(J(2), "g"),
      enq(J(3)),
      seed(["SET", { q: "A", suffix: "group:g" }, "x"]),
      batch("3"),
    ],
  },
];
