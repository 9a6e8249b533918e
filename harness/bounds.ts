/**
 * The listed cases of the size bounds (docs/protocol.md, "Value grammars": *payload*, *result*,
 * *progress*, *line*, *error*, each at most its `max_bytes`): every bounded value at its bound is
 * kept, one byte over it is refused with nothing written, and where each check stands among the
 * refusals (in the values step, in declared order: after the values before it, before the id
 * gate). The key and name bounds (*label*, *name*: 255 bytes) have their cases beside their verbs.
 */
import { PROTOCOL } from "../src/protocol.js";
import { C, type Case, claimed, enq, J } from "./build.js";
import type { Action } from "./actions.js";
import type { Grammar } from "./verbs.js";

/** A value of `n` bytes (one letter: no `emq.` for the AOF check to find). */
const bytes = (n: number) => Buffer.alloc(n, 0x62);
/** The bound of a size grammar, as the protocol data declares it. */
const max = (grammar: Grammar): number => {
  const bound = PROTOCOL.grammars[grammar].max_bytes;
  if (bound === undefined) throw new Error(`grammar ${grammar} has no max_bytes`);
  return bound;
};

const add = (id: string, payload: Buffer | string, priority = "0") =>
  C("ADD", [id, payload, priority, "0", "0", "", "", "", "0", "0", "", "", ""]);
const parent = (id: string, payload: Buffer | string) =>
  C("PARENT", [id, payload, "0", "0", "2", "fail", "", "", ""]);
const schedule = (payload: Buffer | string, endAt = "0") =>
  C("SCHEDULE", ["n", '{"everyMs":1000}', "1000", "0", endAt, payload, "0", "0", "0", "", ""]);
const complete = (id: string, result: Buffer | string, token = "1") =>
  C("COMPLETE", [id, token, result, "10"]);
const completeNext = (id: string, result: Buffer | string) =>
  C("COMPLETENEXT", [id, "1", result, "10", "30000"]);
const completeMany = (id: string, result: Buffer | string) =>
  C("COMPLETEN", ["10", "30000", "1", id, "1", result]);
const fail = (id: string, error: Buffer | string, token = "1") =>
  C("FAIL", [id, token, error, "0", "5", "10", ""]);
const failStack = (id: string, stack: Buffer | string) => C("FAIL", [id, "1", "e", "0", "5", "10", stack]);
const failNextStack = (id: string, stack: Buffer | string) =>
  C("FAILNEXT", [id, "1", "e", "0", "5", "10", "30000", stack]);
const failNext = (id: string, error: Buffer | string) =>
  C("FAILNEXT", [id, "1", error, "0", "5", "10", "30000", ""]);
const settle = (id: string, value: Buffer | string, outcome = "completed") =>
  C("SETTLE", [id, "c", J(1), outcome, value]);
const progress = (id: string, value: Buffer | string, token = "1") => C("PROGRESS", [id, token, value]);
const log = (id: string, line: Buffer | string, token = "1") => C("LOG", [id, token, line]);

/** One bounded value of a verb: the actions before it, and the call carrying a value of `n` bytes. */
interface Bounded {
  verb: string;
  grammar: Grammar;
  value: string;
  before: Action[];
  call: (value: Buffer) => Action;
}

const BOUNDED: readonly Bounded[] = [
  { verb: "ENQUEUE", grammar: "payload", value: "payload", before: [], call: (v) => enq(J(1), v) },
  { verb: "ADD", grammar: "payload", value: "payload", before: [], call: (v) => add(J(1), v) },
  { verb: "PARENT", grammar: "payload", value: "payload", before: [], call: (v) => parent(J(9), v) },
  { verb: "SCHEDULE", grammar: "payload", value: "payload", before: [], call: (v) => schedule(v) },
  {
    verb: "COMPLETE",
    grammar: "result",
    value: "result",
    before: claimed(J(1)),
    call: (v) => complete(J(1), v),
  },
  {
    verb: "COMPLETENEXT",
    grammar: "result",
    value: "result",
    before: [...claimed(J(1)), enq(J(2))],
    call: (v) => completeNext(J(1), v),
  },
  {
    verb: "COMPLETEN",
    grammar: "result",
    value: "result",
    before: [...claimed(J(1)), enq(J(2))],
    call: (v) => completeMany(J(1), v),
  },
  {
    verb: "SETTLE",
    grammar: "result",
    value: "value",
    before: [parent(J(9), "pp")],
    call: (v) => settle(J(9), v),
  },
  { verb: "FAIL", grammar: "error", value: "error", before: claimed(J(1)), call: (v) => fail(J(1), v) },
  {
    verb: "FAILNEXT",
    grammar: "error",
    value: "error",
    before: [...claimed(J(1)), enq(J(2))],
    call: (v) => failNext(J(1), v),
  },
  { verb: "FAIL", grammar: "stack", value: "stack", before: claimed(J(1)), call: (v) => failStack(J(1), v) },
  {
    verb: "FAILNEXT",
    grammar: "stack",
    value: "stack",
    before: [...claimed(J(1)), enq(J(2))],
    call: (v) => failNextStack(J(1), v),
  },
  {
    verb: "PROGRESS",
    grammar: "progress",
    value: "progress",
    before: claimed(J(1)),
    call: (v) => progress(J(1), v),
  },
  { verb: "LOG", grammar: "line", value: "line", before: claimed(J(1)), call: (v) => log(J(1), v) },
];

export const BOUND_CASES: Case[] = [
  ...BOUNDED.flatMap((b) => [
    {
      name: `${b.verb}: a ${b.value} of ${max(b.grammar)} bytes (the ${b.grammar} bound) is kept`,
      actions: [...b.before, b.call(bytes(max(b.grammar)))],
    },
    {
      name: `${b.verb}: a ${b.value} of ${max(b.grammar) + 1} bytes is refused, nothing written`,
      actions: [...b.before, b.call(bytes(max(b.grammar) + 1))],
    },
  ]),
  {
    name: "LOG: 101 lines at the bound keep the last 100",
    actions: [...claimed(J(1)), ...Array.from({ length: 101 }, (_, i) => log(J(1), bytes(max("line") - i)))],
  },
  /* where each check stands */
  {
    name: "ADD: an over-bound payload is refused before a bad priority",
    actions: [add(J(1), bytes(max("payload") + 1), "-0")],
  },
  {
    name: "ENQUEUE: an over-bound payload is refused before the id gate",
    actions: [enq("job00000000001", bytes(max("payload") + 1))],
  },
  {
    name: "SCHEDULE: a bad end at is refused before an over-bound payload",
    actions: [schedule(bytes(max("payload") + 1), "-1")],
  },
  {
    name: "COMPLETE: a bad lease token is refused before an over-bound result",
    actions: [...claimed(J(1)), complete(J(1), bytes(max("result") + 1), "0")],
  },
  {
    name: "SETTLE: a bad outcome is refused before an over-bound value",
    actions: [parent(J(9), "pp"), settle(J(9), bytes(max("result") + 1), "done")],
  },
  {
    name: "FAIL: an over-bound error is refused before the lease gate",
    actions: [...claimed(J(1)), fail(J(1), bytes(max("error") + 1), "7")],
  },
  {
    name: "PROGRESS: an over-bound value is refused before the id gate",
    actions: [progress("job00000000001", bytes(max("progress") + 1))],
  },
  {
    name: "LOG: a bad lease token is refused before an over-bound line",
    actions: [...claimed(J(1)), log(J(1), bytes(max("line") + 1), "x")],
  },
];
