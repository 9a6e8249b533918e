/**
 * The refusals every verb shares, generated for every job-core verb: shape (wrong count of keys, of
 * values), a numkeys EVAL itself refuses (P1), layout (D3), fence (D4, the node unbranded in
 * dedicated cases), the write guard (over maxmemory and on a read-only replica: compared; on a
 * writable replica: D5), and the checks of `EMQ.INSTALL`.
 */
import { C, type Case, callOf, claimed, enq, J, key, keysFor, NO_EXTRAS, raw, row, wait } from "./build.js";
import type { KeyRef } from "./executors.js";
import type { Action } from "./actions.js";
import { PROTOCOL } from "../src/protocol.js";
import { BRAND, queueKey, rowKey, VERBS, type Verb, VERSION_KEY } from "./verbs.js";

/** A call of each verb that would succeed after `setup`, so a refusal is the refusal's doing. */
const SAMPLES: Record<string, { values: string[]; setup: Action[] }> = {
  ENQUEUE: { values: [J(1), "p"], setup: [] },
  ADD: { values: [J(1), "p", "0", "0", "0", "", ...NO_EXTRAS], setup: [] },
  CLAIM: { values: ["30000"], setup: [enq(J(1))] },
  CLAIMN: { values: ["30000", "2"], setup: [enq(J(1)), enq(J(2))] },
  EXTEND: { values: [J(1), "1", "60000"], setup: claimed(J(1)) },
  COMPLETE: { values: [J(1), "1", "r", "10"], setup: claimed(J(1)) },
  COMPLETENEXT: { values: [J(1), "1", "r", "10", "30000"], setup: [...claimed(J(1)), enq(J(2))] },
  COMPLETEN: { values: ["10", "30000", "1", J(1), "1", "r"], setup: [...claimed(J(1)), enq(J(2))] },
  FAIL: { values: [J(1), "1", "e", "0", "5", "10", "at f (x.js:1:1)"], setup: claimed(J(1)) },
  FAILNEXT: { values: [J(1), "1", "e", "0", "5", "10", "30000", ""], setup: [...claimed(J(1)), enq(J(2))] },
  RETRY: { values: [J(1), "1"], setup: [...claimed(J(1)), C("FAIL", [J(1), "1", "e", "0", "1", "10", ""])] },
  // A due time or a lease of 1 ms, then a wait: the sample finds something to move on both sides.
  PROMOTE: { values: ["100"], setup: [C("ADD", [J(1), "p", "0", "1", "0", "", ...NO_EXTRAS]), wait(5)] },
  REAP: { values: ["100", "5", "10"], setup: [...claimed(J(1), "1"), wait(5)] },
  REMOVE: { values: [J(1)], setup: [enq(J(1))] },
  PAUSE: { values: [], setup: [] },
  RESUME: { values: [], setup: [C("PAUSE", [])] },
  RESCHEDULE: { values: [J(1), "1", "100"], setup: claimed(J(1)) },
  REQUEUE: { values: [J(1), "1", "3"], setup: claimed(J(1)) },
  LANES: { values: ["12"], setup: [] },
  EVENTS: { values: ["100", "3600000"], setup: [] },
  PROGRESS: { values: [J(1), "1", "50"], setup: claimed(J(1)) },
  LOG: { values: [J(1), "1", "a line"], setup: claimed(J(1)) },
  EXPEDITE: { values: [J(1)], setup: [C("ADD", [J(1), "p", "0", "60000", "0", "", ...NO_EXTRAS])] },
  CLEAN: {
    values: ["completed", "0", "100"],
    setup: [...claimed(J(1)), C("COMPLETE", [J(1), "1", "r", "10"])],
  },
  DRAIN: { values: ["100"], setup: [enq(J(1))] },
  OBLITERATE: { values: ["0", "100"], setup: [enq(J(1))] },
  FORGET: { values: ["k"], setup: [C("ADD", [J(1), "p", "0", "0", "0", "", "", "k", "0", "0", "", "", ""])] },
  UPDATE: { values: [J(1), "new"], setup: [enq(J(1))] },
  CANCEL: { values: [J(1)], setup: [enq(J(1))] },
  LIMIT: { values: ["queue", "", "10", "1000", "5"], setup: [] },
  PARENT: { values: [J(1), "p", "0", "0", "2", "fail", "", "", ""], setup: [] },
  SETTLE: {
    values: [J(1), "C", J(2), "completed", "r"],
    setup: [C("PARENT", [J(1), "p", "0", "0", "2", "fail", "", "", ""])],
  },
  ACK: { values: ["e"], setup: [] },
  SCHEDULE: { values: ["n", "{}", "1000", "0", "0", "p", "0", "0", "0", "", ""], setup: [] },
  UNSCHEDULE: {
    values: ["n"],
    setup: [C("SCHEDULE", ["n", "{}", "1000", "0", "0", "p", "0", "0", "0", "", ""])],
  },
  PAUSESCHEDULE: {
    values: ["n"],
    setup: [C("SCHEDULE", ["n", "{}", "1000", "0", "0", "p", "0", "0", "0", "", ""])],
  },
  RESUMESCHEDULE: {
    values: ["n", "5000"],
    setup: [
      C("SCHEDULE", ["n", "{}", "1000", "0", "0", "p", "0", "0", "0", "", ""]),
      C("PAUSESCHEDULE", ["n"]),
    ],
  },
  FIRE: {
    values: [J(1), "n", "1000", "1000", "2000"],
    setup: [C("SCHEDULE", ["n", "{}", "1000", "0", "0", "p", "0", "0", "0", "", ""])],
  },
};

/** The keys of `verb` for a literal queue name (the same bytes on both sides). */
function literalKeys(verb: Verb, name: string, id: string): KeyRef[] {
  return verb.keys.map((slot) => raw(slot === "row" ? rowKey(name, id) : queueKey(name, slot)));
}

function shapeCases(verb: Verb): Case[] {
  const { values, setup } = SAMPLES[verb.verb]!;
  const n = verb.keys.length;
  const keys = keysFor(verb.verb, "A", values[0] ?? "");
  const variants: [string, Action][] = [
    [`numkeys ${n - 1}`, C(verb.verb, values, { numkeys: String(n - 1), keys })],
    [`numkeys ${n + 1}`, C(verb.verb, values, { numkeys: String(n + 1), keys })],
    ["one value more", C(verb.verb, [...values, "x"], { keys })],
    ["numkeys 0", C(verb.verb, values, { numkeys: "0", keys })],
  ];
  if (values.length > 0) variants.push(["one value less", C(verb.verb, values.slice(0, -1), { keys })]);
  for (const bad of ["x", "-1", "03", "+3", "99", "18446744073709551616"]) {
    variants.push([`numkeys ${JSON.stringify(bad)} (P1)`, C(verb.verb, values, { numkeys: bad, keys })]);
  }
  variants.push(["no numkeys at all (P1)", C(verb.verb, [], { numkeys: null, keys: [] })]);
  return variants.map(([what, action]) => ({
    name: `${verb.verb} shape: ${what}`,
    actions: [...setup, action],
  }));
}

function layoutCases(verb: Verb): Case[] {
  const { values, setup } = SAMPLES[verb.verb]!;
  const id = values[0] ?? "";
  const good = keysFor(verb.verb, "A", id);
  const expect = verb.script === null ? ("D8" as const) : ("D3" as const);
  const at = (i: number, ref: KeyRef) => good.map((k, j) => (j === i ? ref : k));
  const variants: [string, KeyRef[]][] = [
    ["anchor of another type", at(verb.anchor, { q: "A", suffix: "nope" })],
    ["anchor without the emq:{ prefix", at(verb.anchor, raw(`foo:${verb.keys[verb.anchor]}`))],
    ["anchor without }: after the name", at(verb.anchor, raw(`emq:{h-open-${verb.keys[verb.anchor]}`))],
    ["empty queue name", literalKeys(verb, "", id)],
    ["queue name with {", literalKeys(verb, "a{b", id)],
    ["queue name with NUL", literalKeys(verb, "a\0b", id)],
    ["queue name with a control byte", literalKeys(verb, "a\x7fb", id)],
    ["queue name of 256 bytes", literalKeys(verb, "q".repeat(256), id)],
  ];
  verb.keys.forEach((slot, i) => {
    if (i === verb.anchor) return;
    variants.push([`${slot} of another queue`, at(i, slot === "row" ? row(id, "B") : key(slot, "B"))]);
    if (slot === "row") variants.push(["row of another id", at(i, row(J(2)))]);
  });
  if (good.length > 1) variants.push(["first two keys swapped", [good[1]!, good[0]!, ...good.slice(2)]]);
  return variants.map(([what, keys]) => ({
    name: `${verb.verb} layout: ${what} (${expect})`,
    actions: [...setup, C(verb.verb, values, { keys, expect })],
  }));
}

const BRANDS: [string, string | null | "hash"][] = [
  ["absent", null],
  [PROTOCOL.brands.wire4, PROTOCOL.brands.wire4],
  ["another string", `${BRAND} `],
  ["not a string", "hash"],
];

function fenceCases(verb: Verb): Case[] {
  const { values, setup } = SAMPLES[verb.verb]!;
  const expect = verb.script === null ? ("D8" as const) : ("D4" as const);
  const brand = (value: string | null | "hash"): Action => ({ kind: "brand", value });
  const cases = BRANDS.map(([what, value]) => ({
    name: `${verb.verb} fence: brand ${what} (${expect})`,
    actions: [...setup, brand(value), C(verb.verb, values, { expect }), brand(BRAND)],
  }));
  const id = values[0] ?? "";
  cases.push(
    {
      name: `${verb.verb} fence: layout is refused before the fence`,
      actions: [
        ...setup,
        brand(null),
        C(verb.verb, values, { keys: literalKeys(verb, "", id), expect: verb.script ? "D3" : "D8" }),
        brand(BRAND),
      ],
    },
    {
      name: `${verb.verb} fence: shape is refused before the fence`,
      actions: [
        ...setup,
        brand(null),
        C(verb.verb, [...values, "x"], {
          keys: keysFor(verb.verb, "A", id),
          expect: verb.script ? "equal" : "D8",
        }),
        brand(BRAND),
      ],
    },
  );
  return cases;
}

function guardCases(): Case[] {
  const guarded = (guard: "oom" | "replica" | "writable-replica", verb: string): Case => {
    const { values, setup } = SAMPLES[verb]!;
    const what = {
      oom: "over maxmemory",
      replica: "read-only replica",
      "writable-replica": "writable replica (D5)",
    };
    return {
      name: `${verb} write guard: ${what[guard]}`,
      actions: [...setup, { kind: "guard", guard, call: callOf(verb, values) }],
    };
  };
  return [
    // Every verb with a script twin (the native-only one has no script side to hold it to).
    ...VERBS.filter((v) => v.script !== null).map((v) => guarded("oom", v.verb)),
    ...["ENQUEUE", "CLAIM", "COMPLETE", "PAUSE", "REQUEUE"].map((v) => guarded("replica", v)),
    ...["ENQUEUE", "CLAIM", "COMPLETE", "COMPLETENEXT", "FAILNEXT", "CLAIMN", "COMPLETEN"].map((v) =>
      guarded("writable-replica", v),
    ),
  ];
}

function installCases(): Case[] {
  const install = (brand: string | null | "hash", tail?: string[]): Action => ({
    kind: "install",
    brand,
    ...(tail ? { tail } : {}),
  });
  const restore: Action = { kind: "brand", value: BRAND };
  return [
    { name: "INSTALL: absent brand is written", actions: [install(null), restore] },
    { name: "INSTALL: already branded answers 0", actions: [install(BRAND)] },
    { name: "INSTALL: the scripts' brand is refused", actions: [install(PROTOCOL.brands.wire4), restore] },
    { name: "INSTALL: another string is refused", actions: [install("other"), restore] },
    { name: "INSTALL: a brand that is not a string", actions: [install("hash"), restore] },
    { name: "INSTALL: another key", actions: [install(BRAND, ["1", "{emq}:other"])] },
    { name: "INSTALL: a value too many", actions: [install(BRAND, ["1", VERSION_KEY, BRAND])] },
    { name: "INSTALL: no key", actions: [install(BRAND, ["0"])] },
    { name: "INSTALL: numkeys not a number", actions: [install(BRAND, ["x", VERSION_KEY])] },
  ];
}

export const REFUSAL_CASES: Case[] = [
  ...VERBS.flatMap((v) => [...shapeCases(v), ...layoutCases(v), ...fenceCases(v)]),
  ...guardCases(),
  ...installCases(),
];
