/**
 * The listed cases of `ADD`'s extras — `<group> <key> <key_ttl> <timeout> <parent>` — and of the
 * `<timeout>` a claim hands back: each kept on the row (or, the key, in its own record), the
 * idempotency key's gate (held → the first id, nothing written; another type → WRONGTYPE; before
 * the duplicate-id gate), every kind of value the grammars refuse, and where those checks stand.
 */
import { C, type Case, claim, J, seed } from "./build.js";
import type { KeyRef } from "./executors.js";

/** `ADD` of `id` with the extras given (the rest at their defaults). */
const add = (
  id: string,
  extras: {
    group?: string;
    key?: string;
    ttl?: string;
    timeout?: string;
    parent?: string | Buffer;
    name?: string;
    backoff?: string;
  },
  delay = "0",
  q = "A",
) =>
  C(
    "ADD",
    [
      id,
      "p",
      "0",
      delay,
      "0",
      "",
      extras.group ?? "",
      extras.key ?? "",
      extras.ttl ?? "0",
      extras.timeout ?? "0",
      extras.parent ?? "",
      extras.name ?? "",
      extras.backoff ?? "",
    ],
    { q },
  );
const forget = (k: string | Buffer, q = "A") => C("FORGET", [k], { q });
const record = (k: string, q = "A"): KeyRef => ({ q, derived: "record", param: k });
const parent = (queue: string | Buffer, id = J(9)) =>
  Buffer.concat([Buffer.from(queue), Buffer.from([0]), Buffer.from(id)]);

const BAD_LABELS: readonly (string | Buffer)[] = [
  "a\tb",
  "\u0000",
  "x\u007f",
  "l".repeat(256),
  Buffer.from([0x61, 0x0a]),
];
const BAD_PARENTS: readonly (string | Buffer)[] = [
  "orders",
  parent(""),
  parent("a{b}"),
  parent("a\tb"),
  parent("q", "job00000000001"),
  parent("q", `${J(1)}\n`),
  Buffer.concat([parent("q"), Buffer.from([0])]),
  parent("q".repeat(256)),
];
const show = (v: string | Buffer) => JSON.stringify(Buffer.from(v).toString("latin1").slice(0, 40));

export const EXTRAS_CASES: Case[] = [
  {
    name: "ADD: group, timeout and parent kept on the row",
    actions: [add(J(1), { group: "tenant-7", timeout: "5000", parent: parent("flows:parent") })],
  },
  {
    name: "ADD: extras on a delayed job",
    actions: [add(J(1), { group: "g é {x}", timeout: "1", parent: parent("a b@c") }, "5000")],
  },
  {
    name: "ADD: name and backoff kept on the row",
    actions: [add(J(1), { name: "send-email é", backoff: "exponential:1000:60000:0.2", group: "g" }, "5000")],
  },
  { name: "ADD: a 255-byte name", actions: [add(J(1), { name: "n".repeat(255), backoff: "fixed:0" })] },
  {
    name: "ADD: a 255-byte group and key",
    actions: [add(J(1), { group: "g".repeat(255), key: "k".repeat(255) })],
  },
  { name: "ADD: a parent in a 255-byte queue", actions: [add(J(1), { parent: parent("q".repeat(255)) })] },
  { name: "ADD: idempotency key kept (no expiry)", actions: [add(J(1), { key: "order-1" })] },
  {
    name: "ADD: idempotency key kept with a ttl",
    actions: [add(J(1), { key: "order-1", ttl: "3600000" }, "10")],
  },
  {
    name: "ADD: a held key answers the first id, nothing written",
    actions: [
      add(J(1), { key: "order-1", ttl: "3600000" }),
      add(J(2), { key: "order-1", ttl: "3600000", group: "g" }),
    ],
  },
  {
    name: "ADD: a held key wins over a duplicate id",
    actions: [add(J(1), { key: "k" }), add(J(1), { key: "k" })],
  },
  {
    name: "ADD: a duplicate id with a new key: 0, no record",
    actions: [add(J(1), {}), add(J(1), { key: "fresh" })],
  },
  {
    name: "ADD: keys are per queue",
    queues: ["A", "B"],
    actions: [add(J(1), { key: "k" }, "0", "A"), add(J(2), { key: "k" }, "0", "B")],
  },
  {
    name: "ADD: the key record of another type → WRONGTYPE",
    actions: [seed(["HSET", record("k"), "f", "v"]), add(J(1), { key: "k" })],
  },
  {
    name: "ADD: a key record set by hand is answered",
    actions: [seed(["SET", record("k"), "anything"]), add(J(1), { key: "k" })],
  },
  ...BAD_LABELS.map((v) => ({
    name: `ADD: group ${show(v)} refused`,
    actions: [add(J(1), { group: v as string })],
  })),
  ...BAD_LABELS.map((v) => ({
    name: `ADD: key ${show(v)} refused`,
    actions: [add(J(1), { key: v as string })],
  })),
  ...BAD_LABELS.map((v) => ({
    name: `ADD: name ${show(v)} refused`,
    actions: [add(J(1), { name: v as string })],
  })),
  ...BAD_LABELS.slice(0, 2).map((v) => ({
    name: `ADD: backoff ${show(v)} refused`,
    actions: [add(J(1), { backoff: v as string })],
  })),
  ...["-1", "01", "x", "1.5", ""].map((v) => ({
    name: `ADD: key ttl ${show(v)} refused`,
    actions: [add(J(1), { key: "k", ttl: v })],
  })),
  ...["-1", "01", "x", ""].map((v) => ({
    name: `ADD: timeout ${show(v)} refused`,
    actions: [add(J(1), { timeout: v })],
  })),
  ...BAD_PARENTS.map((v) => ({
    name: `ADD: parent ${show(v)} refused`,
    actions: [add(J(1), { parent: v })],
  })),
  {
    name: "ADD: a bad group is refused before a bad timeout",
    actions: [add(J(1), { group: "\t", timeout: "x" })],
  },
  {
    name: "ADD: a bad parent is refused before the id gate",
    actions: [add("job00000000001", { parent: "x" })],
  },
  {
    name: "ADD: the id gate before the key record",
    actions: [seed(["HSET", record("k"), "f", "v"]), add("job00000000001", { key: "k" })],
  },
  {
    name: "FORGET: a held key is released",
    actions: [add(J(1), { key: "k", ttl: "3600000" }), forget("k"), add(J(2), { key: "k" })],
  },
  { name: "FORGET: a key not held answers 0", actions: [add(J(1), { key: "k" }), forget("other")] },
  { name: "FORGET: the empty key", actions: [forget("")] },
  {
    name: "FORGET: pending of another type → WRONGTYPE",
    actions: [seed(["SET", { q: "A", slot: "pending" }, "x"]), forget("k")],
  },
  {
    name: "FORGET: a record of another type → WRONGTYPE",
    actions: [seed(["ZADD", record("k"), "1", "m"]), forget("k")],
  },
  ...BAD_LABELS.map((v) => ({
    name: `FORGET: key ${show(v)} refused`,
    actions: [add(J(1), { key: "k" }), forget(v)],
  })),
  { name: "CLAIM: the job's timeout in the reply", actions: [add(J(1), { timeout: "2500" }), claim()] },
  {
    name: "CLAIM: a row timeout that is not a count reads as 0",
    actions: [add(J(1), {}), add(J(2), {}), seed(["HSET", { q: "A", row: J(1) }, "timeout", "-5"]), claim()],
  },
];
