/**
 * The listed cases of flows: `PARENT` (a parent waits for its children), `SETTLE` (a child's
 * outcome recorded on its parent, once per child: waiting, ready, dead, duplicate, late, gone),
 * `ACK` (a relayed entry leaves the outbox), and the outbox entries `COMPLETE`, `FAIL` (to dead)
 * and `REAP` (to dead) write for a child whose row has a `parent` — with odd queue names in the
 * entries, their refusals in order, and corrupt keys and fields. Explicit checks read the native
 * side's outbox and parent row (both sides are compared byte for byte as every case is).
 */
import { C, type Case, claim, claimed, enq, J, key, row, seed, wait } from "./build.js";
import { entry, kinds } from "./bus.js";
import type { RawValue } from "./dump.js";
import type { Action, LastStep } from "./actions.js";
import { queueKey as keyText } from "../src/keyspace.js";

const exact = { mode: "exact" as const };
const NUL = "\0";
/** A parent reference as a child's row holds it: `<queue>` NUL `<id>`. */
const ref = (queue: string, id: string) => Buffer.from(`${queue}${NUL}${id}`, "utf8");
/** An outbox entry: the parent reference, the child id, the outcome, the value (NUL-joined). */
const entryOf = (parent: Buffer, child: string, outcome: string, value: string) =>
  Buffer.concat([parent, Buffer.from(`${NUL}${child}${NUL}${outcome}${NUL}${value}`, "utf8")]);

/** Queue names the grammar allows that would trip a careless encoding. */
const ODD = ["a b", "ünï ✓", "a:b@c", "x".repeat(255), "job:JOB00000000001", "-"];

const parent = (
  id: string,
  children = "2",
  o: {
    policy?: string;
    priority?: string;
    max?: string;
    parent?: string | Buffer;
    q?: string;
    name?: string;
    backoff?: string;
  } = {},
) =>
  C(
    "PARENT",
    [
      ...[id, "pp", o.priority ?? "0", o.max ?? "0", children, o.policy ?? "fail", o.parent ?? ""],
      ...[o.name ?? "", o.backoff ?? ""],
    ],
    o.q ? { q: o.q } : {},
  );
const settle = (id: string, cq: string, cid: string, outcome = "completed", value = "v", q = "A") =>
  C("SETTLE", [id, cq, cid, outcome, value], { q });
const ack = (entry: string | Buffer, q = "A") => C("ACK", [entry], { q });
const complete = (id: string, keep = "10", result = "ok") => C("COMPLETE", [id, "1", result, keep]);
const failDead = (id: string, keep = "10", error = "boom") => C("FAIL", [id, "1", error, "0", "1", keep, ""]);
/** A job claimed (token 1) whose row names a parent. */
const child = (id: string, parentRef: Buffer, lease = "30000"): Action[] => [
  enq(id),
  seed(["HSET", row(id), "parent", parentRef]),
  claim(lease),
];
const wrongType = (slot: Parameters<typeof key>[0], q = "A") => seed(["SET", key(slot, q), "x"]);

function members(value: RawValue | undefined): Buffer[] {
  return value?.type === "zset" ? value.members.map(([m]) => m) : [];
}

/** An explicit check: the native side's `emq:{A}:outbox` holds exactly `want` (in any order). */
const outboxHolds = (verb: string, want: Buffer[]): Action => ({
  kind: "check",
  verb,
  what: `the outbox holds ${want.length} entr${want.length === 1 ? "y" : "ies"}`,
  fn: (last: LastStep) => {
    const got = members(last.after.get(keyText(last.side.name("A"), "outbox")));
    const sorted = (xs: Buffer[]) => xs.map((b) => b.toString("hex")).sort();
    return JSON.stringify(sorted(got)) === JSON.stringify(sorted(want))
      ? []
      : [`outbox ${JSON.stringify(got.map((b) => b.toString("latin1")))}`];
  },
});

/** An explicit check: the native side's reply is the bulk string `want`. */
const replied = (verb: string, want: string): Action => ({
  kind: "check",
  verb,
  what: `the reply is ${want}`,
  fn: (last: LastStep) =>
    last.reply.t === "bulk" && last.reply.v?.toString("latin1") === want
      ? []
      : [`reply ${JSON.stringify(last.reply)}`],
});

const P = ref("P", J(9));

export const FLOW_CASES: Case[] = [
  /* PARENT */
  { name: "PARENT: a parent waits for 2 children", actions: [parent(J(1)), claim()] },
  {
    name: "PARENT: every optional field (priority, max attempts, ignore, its own parent)",
    actions: [parent(J(1), "3", { priority: "-4", max: "2", policy: "ignore", parent: P })],
  },
  {
    name: "PARENT: name and backoff kept on the row",
    actions: [parent(J(1), "2", { name: "send-email é", backoff: "exponential:1000:60000:0.2" })],
  },
  {
    name: "PARENT: a 255-byte name, a fixed backoff, with its own parent",
    actions: [parent(J(1), "1", { name: "n".repeat(255), backoff: "fixed:0", parent: P })],
  },
  ...(
    [
      ["name of 256 bytes", { name: "n".repeat(256) }],
      ["name with a tab", { name: "a\tb" }],
      ["name with NUL", { name: "a\0b" }],
      ["backoff with DEL", { backoff: "fixed:1\x7f" }],
      ["backoff of 256 bytes", { backoff: "b".repeat(256) }],
      ["name bad before on failure", { name: "a\nb", policy: "FAIL" }],
      ["backoff bad before parent", { backoff: "\x01", parent: "nope" }],
    ] as [string, { name?: string; backoff?: string; policy?: string; parent?: string }][]
  ).map(([what, o]) => ({ name: `PARENT: ${what} refused`, actions: [parent(J(1), "2", o)] })),
  {
    name: "PARENT: a named parent made ready by its child keeps its name",
    actions: [parent(J(1), "1", { name: "report", backoff: "fixed:250" }), settle(J(1), "C", J(5)), claim()],
  },
  { name: "PARENT: duplicate id answers 0", actions: [parent(J(1)), parent(J(1), "5")] },
  { name: "PARENT: duplicate of a job row", actions: [enq(J(1)), parent(J(1))] },
  { name: "PARENT: children 0", actions: [parent(J(1), "0")] },
  { name: "PARENT: children not a number", actions: [parent(J(1), "x")] },
  { name: "PARENT: bad priority", actions: [parent(J(1), "2", { priority: "-0" })] },
  { name: "PARENT: bad max attempts", actions: [parent(J(1), "2", { max: "-1" })] },
  { name: "PARENT: on failure neither fail nor ignore", actions: [parent(J(1), "2", { policy: "FAIL" })] },
  ...[
    ["no NUL", "PJOB1"],
    ["empty queue", `${NUL}${J(9)}`],
    ["a brace in the queue", `a{b${NUL}${J(9)}`],
    ["a control byte in the queue", `a\tb${NUL}${J(9)}`],
    ["a 256-byte queue", `${"q".repeat(256)}${NUL}${J(9)}`],
    ["no JOB prefix", `P${NUL}XYZ1`],
    ["a second NUL", `P${NUL}${J(9)}${NUL}`],
  ].map(([what, value]) => ({
    name: `PARENT: parent refused: ${what}`,
    actions: [parent(J(1), "2", { parent: value! })],
  })),
  { name: "PARENT: id without the JOB prefix", actions: [parent("XYZ00000000001")] },
  { name: "PARENT: waiting not a sorted set", actions: [wrongType("waiting"), parent(J(1))] },
  {
    name: "PARENT: odd names in its own parent",
    actions: ODD.map((q, i) => parent(J(i + 1), "1", { parent: ref(q, J(9)) })),
  },

  /* SETTLE */
  {
    name: "SETTLE: two children, the second readies the parent, which is claimed",
    actions: [
      parent(J(1), "2", { priority: "3" }),
      settle(J(1), "C", J(5)),
      replied("SETTLE", "waiting"),
      settle(J(1), "D", J(5), "completed", "w"),
      replied("SETTLE", "ready"),
      claim(),
    ],
  },
  {
    name: "SETTLE: a child relayed twice counts once",
    actions: [
      parent(J(1), "2"),
      settle(J(1), "C", J(5)),
      settle(J(1), "C", J(5)),
      replied("SETTLE", "duplicate"),
      settle(J(1), "C", J(5), "failed", "e"),
      replied("SETTLE", "duplicate"),
      settle(J(1), "C", J(6)),
      replied("SETTLE", "ready"),
    ],
  },
  {
    name: "SETTLE: a failed child kills the parent (fail)",
    actions: [parent(J(1), "3"), settle(J(1), "C", J(5)), settle(J(1), "C", J(6), "failed", "boom")],
  },
  {
    name: "SETTLE: a killed parent with a parent of its own leaves an outbox entry",
    actions: [
      parent(J(1), "2", { parent: P }),
      settle(J(1), "C", J(5), "failed", "boom"),
      replied("SETTLE", "dead"),
      outboxHolds("SETTLE", [entryOf(P, J(1), "failed", `child C:${J(5)} failed: boom`)]),
    ],
  },
  {
    name: "SETTLE: a failed child counts as settled (ignore)",
    actions: [
      parent(J(1), "2", { policy: "ignore" }),
      settle(J(1), "C", J(5), "failed", "boom"),
      settle(J(1), "C", J(6)),
      replied("SETTLE", "ready"),
      claim(),
    ],
  },
  {
    name: "SETTLE: late children are recorded on a dead parent",
    actions: [
      parent(J(1), "2"),
      settle(J(1), "C", J(5), "failed", "boom"),
      settle(J(1), "C", J(6)),
      replied("SETTLE", "late"),
      settle(J(1), "C", J(6)),
      replied("SETTLE", "duplicate"),
    ],
  },
  {
    name: "SETTLE: no parent row answers gone",
    actions: [settle(J(1), "C", J(5)), replied("SETTLE", "gone")],
  },
  {
    name: "SETTLE: a parent row of another type answers gone",
    actions: [seed(["SET", row(J(1)), "x"]), settle(J(1), "C", J(5))],
  },
  {
    name: "SETTLE: odd child queue names, each its own field",
    actions: [parent(J(1), String(ODD.length)), ...ODD.map((q) => settle(J(1), q, J(5), "completed", q))],
  },
  {
    name: "SETTLE: a stored children count that is not a count reads as 1",
    actions: [parent(J(1), "5"), seed(["HSET", row(J(1)), "children", "x"]), settle(J(1), "C", J(5))],
  },
  {
    name: "SETTLE: the parent's odd priority reads as 0",
    actions: [parent(J(1), "1"), seed(["HSET", row(J(1)), "priority", "01"]), settle(J(1), "C", J(5))],
  },
  {
    name: "SETTLE: binary values",
    actions: [
      parent(J(1), "2"),
      settle(J(1), "C", J(5), "completed", "a\0b\r\n"),
      settle(J(1), "C", J(6), "completed", ""),
    ],
  },
  { name: "SETTLE: id without the JOB prefix", actions: [settle("XYZ00000000001", "C", J(5))] },
  ...[
    ["empty", ""],
    ["a brace", "a}b"],
    ["a NUL", "a\0b"],
    ["DEL", "a\x7fb"],
    ["256 bytes", "q".repeat(256)],
  ].map(([what, q]) => ({
    name: `SETTLE: child queue refused: ${what}`,
    actions: [parent(J(1)), settle(J(1), q!, J(5))],
  })),
  { name: "SETTLE: child id without the JOB prefix", actions: [parent(J(1)), settle(J(1), "C", "XYZ1")] },
  {
    name: "SETTLE: outcome neither completed nor failed",
    actions: [parent(J(1)), settle(J(1), "C", J(5), "dead")],
  },
  {
    name: "SETTLE: refusals in order (id before child queue before child id before outcome)",
    actions: [settle("X", "", "X", "x"), settle(J(1), "", "X", "x"), settle(J(1), "C", "X", "x")],
  },
  ...(["waiting", "pending", "dead", "outbox"] as const).map((slot) => ({
    name: `SETTLE: ${slot} not a sorted set`,
    actions: [parent(J(1)), wrongType(slot), settle(J(1), "C", J(5))],
  })),

  /* the outbox entries of COMPLETE, FAIL, REAP */
  {
    name: "COMPLETE: a child's completion leaves its outbox entry",
    actions: [
      ...child(J(1), P),
      complete(J(1), "10", "the result"),
      outboxHolds("COMPLETE", [entryOf(P, J(1), "completed", "the result")]),
    ],
  },
  {
    name: "COMPLETE: keep 0 deletes the row and still leaves the entry",
    actions: [...child(J(1), P), complete(J(1), "0", "r")],
  },
  {
    name: "COMPLETE: odd parent queue names and a binary result",
    actions: ODD.flatMap((q, i) => [...child(J(i + 1), ref(q, J(9))), complete(J(i + 1), "10", "a\0b")]),
  },
  {
    name: "COMPLETE: an empty parent writes no entry",
    actions: [...child(J(1), Buffer.alloc(0)), complete(J(1))],
  },
  { name: "COMPLETE: no parent, no entry", actions: [...claimed(J(1)), complete(J(1))] },
  {
    name: "COMPLETE: outbox not a sorted set",
    actions: [...child(J(1), P), wrongType("outbox"), complete(J(1))],
  },
  {
    name: "COMPLETE: outbox not a sorted set, job not active",
    actions: [enq(J(1)), wrongType("outbox"), complete(J(1))],
  },
  {
    name: "FAIL: a child that dies leaves its outbox entry",
    actions: [
      ...child(J(1), P),
      failDead(J(1), "10", "bad"),
      outboxHolds("FAIL", [entryOf(P, J(1), "failed", "bad")]),
    ],
  },
  { name: "FAIL: a child that dies, keep 0", actions: [...child(J(1), P), failDead(J(1), "0")] },
  {
    name: "FAIL: a child that will retry leaves no entry",
    actions: [...child(J(1), P), C("FAIL", [J(1), "1", "e", "0", "3", "10", ""]), outboxHolds("FAIL", [])],
  },
  {
    name: "FAIL: a child waiting out its backoff leaves no entry",
    actions: [...child(J(1), P), C("FAIL", [J(1), "1", "e", "60000", "3", "10", ""])],
  },
  {
    name: "FAIL: outbox not a sorted set",
    actions: [...child(J(1), P), wrongType("outbox"), failDead(J(1))],
  },
  {
    name: "REAP: a child whose lease expired with no attempts left leaves its entry",
    actions: [
      ...child(J(1), P, "1"),
      ...child(J(2), ref("Q", J(8)), "1"),
      wait(5),
      C("REAP", ["100", "1", "10"], exact),
      outboxHolds("REAP", [
        entryOf(P, J(1), "failed", "lease expired"),
        entryOf(ref("Q", J(8)), J(2), "failed", "lease expired"),
      ]),
    ],
  },
  {
    name: "REAP: a child back in pending leaves no entry; keep 0 still leaves it",
    actions: [
      ...child(J(1), P, "1"),
      wait(5),
      C("REAP", ["100", "5", "10"], exact),
      claim("1"),
      wait(5),
      C("REAP", ["100", "2", "0"], exact),
    ],
  },
  { name: "REAP: outbox not a sorted set", actions: [wrongType("outbox"), C("REAP", ["100", "5", "10"])] },

  /* REMOVE of a waiting parent */
  {
    name: "REMOVE: a waiting parent leaves waiting with its row",
    actions: [parent(J(1)), parent(J(2)), C("REMOVE", [J(1)])],
  },
  {
    name: "REMOVE: a waiting parent, waiting not a sorted set",
    actions: [parent(J(1)), wrongType("waiting"), C("REMOVE", [J(1)])],
  },
  {
    name: "REMOVE: a parent's children settle on nothing (gone)",
    actions: [parent(J(1)), C("REMOVE", [J(1)]), settle(J(1), "C", J(5)), replied("SETTLE", "gone")],
  },

  /* OBLITERATE */
  {
    name: "OBLITERATE: waiting parents go with the queue, and the outbox with the last call",
    actions: [
      parent(J(1)),
      parent(J(2)),
      ...child(J(3), P),
      complete(J(3)),
      enq(J(4)),
      C("OBLITERATE", ["0", "2"]),
      C("OBLITERATE", ["0", "2"]),
      C("OBLITERATE", ["0", "2"]),
    ],
  },
  {
    name: "OBLITERATE: waiting not a sorted set",
    actions: [parent(J(1)), wrongType("waiting"), C("OBLITERATE", ["1", "10"])],
  },
  {
    name: "OBLITERATE: only an outbox left",
    actions: [...child(J(1), P), complete(J(1), "0"), C("OBLITERATE", ["0", "10"])],
  },

  /* the bus */
  {
    name: "BUS: a flow's parent: waiting, then ready, then active",
    actions: [
      parent(J(1), "1"),
      settle(J(1), "C", J(5)),
      claim(),
      kinds("CLAIM", ["waiting", "ready", "active"]),
      entry("CLAIM", 1, ["event", "ready", "id", J(1), "attempt", "0"]),
    ],
  },
  {
    name: "BUS: a parent killed by its child: dead with the reason",
    actions: [
      parent(J(1), "2"),
      settle(J(1), "C", J(5), "failed", "x".repeat(300)),
      entry("SETTLE", -1, [
        "event",
        "dead",
        "id",
        J(1),
        "attempt",
        "0",
        "reason",
        `child C:${J(5)} failed: ${"x".repeat(300)}`.slice(0, 200),
      ]),
    ],
  },
  {
    name: "BUS: the bus off (events_maxlen 0): no entries",
    actions: [seed(["HSET", key("meta"), "events_maxlen", "0"]), parent(J(1), "1"), settle(J(1), "C", J(5))],
  },

  /* ACK */
  {
    name: "ACK: a relayed entry leaves the outbox; a second ACK answers 0",
    actions: [
      ...child(J(1), P),
      complete(J(1)),
      ack(entryOf(P, J(1), "completed", "ok")),
      ack(entryOf(P, J(1), "completed", "ok")),
      outboxHolds("ACK", []),
    ],
  },
  {
    name: "ACK: another entry is left alone",
    actions: [...child(J(1), P), complete(J(1)), ack(entryOf(P, J(1), "completed", "ok!"))],
  },
  { name: "ACK: outbox not a sorted set", actions: [wrongType("outbox"), ack("x")] },
  { name: "ACK: an empty entry", actions: [ack("")] },

  {
    name: "ADD: a child added with its parent leaves its entry when it completes, and when it dies",
    actions: [
      C("ADD", [J(1), "p", "0", "0", "0", "", "", "", "0", "0", P, "", ""]),
      C("ADD", [J(2), "p", "0", "0", "1", "", "", "", "0", "0", ref("a b:c@é", J(8)), "", ""]),
      claim(),
      complete(J(1), "0", "r"),
      claim(),
      failDead(J(2), "10", "e"),
      outboxHolds("FAIL", [
        entryOf(P, J(1), "completed", "r"),
        entryOf(ref("a b:c@é", J(8)), J(2), "failed", "e"),
      ]),
    ],
  },

  /* a whole flow in one slot */
  {
    name: "FLOW: a parent in B, children in A: completion, relay, ack, parent claimed",
    queues: ["A", "B"],
    actions: [
      parent(J(1), "2", { q: "B" }),
      ...child(J(2), ref("B", J(1))),
      complete(J(2)),
      settle(J(1), "A", J(2), "completed", "ok", "B"),
      ack(entryOf(ref("B", J(1)), J(2), "completed", "ok")),
      ...child(J(3), ref("B", J(1))),
      C("FAIL", [J(3), "1", "e", "0", "1", "10", ""]),
      settle(J(1), "A", J(3), "failed", "e", "B"),
      ack(entryOf(ref("B", J(1)), J(3), "failed", "e")),
      claim("30000", { q: "B" }),
    ],
  },
];
