/**
 * The server-side refusals of the lifecycle verbs, table-driven and the same text on both wires:
 * shape, values (several bad texts each), id gate, type gate, and their order; the keyspace
 * unchanged after each.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  add,
  claim,
  fail,
  newId,
  pause,
  PROTOCOL,
  queueKey,
  type Script,
  scriptFor,
} from "../src/protocol.js";
import {
  COUNT_BAD,
  keysOf,
  LIMIT_BAD,
  NOT_JOB,
  POSITIVE_BAD,
  PRIORITY_BAD,
  refused,
  TRACE,
  TRACE_BAD,
  WRONGTYPE,
} from "./support/lifecycle.js";
import { dumpQueue, forEachWire } from "./support/wires.js";

/* ------------------------------------------------------------------ server refusals, table-driven */

const TRACE_RULE = PROTOCOL.grammars.trace.rule;
const LABEL_RULE = "empty or 1-255 bytes without a control character";
const LABEL_BAD = ["a\tb", "x\u007f", "l".repeat(256)];

interface ValueRule {
  index: number;
  name: string;
  rule: string;
  bad: string[];
}

interface VerbCase {
  verb: string;
  script: Script;
  form: string;
  /** Builds a queue state in which `values` succeed. */
  setup: (q: string) => Promise<{ keys: string[]; values: string[] }>;
  values: ValueRule[];
  /** ARGV index of the id, and KEYS index of a declared row (ADD). */
  id?: number;
  row?: number;
  /** KEYS indexes type-gated as sorted sets / as a hash. */
  sets: number[];
  hash?: number;
}

const positive = (index: number, name: string): ValueRule => ({
  index,
  name,
  rule: "a positive integer",
  bad: POSITIVE_BAD,
});
const count = (index: number, name: string, rule = "a non-negative integer"): ValueRule => ({
  index,
  name,
  rule,
  bad: COUNT_BAD,
});
const limitRule: ValueRule = { index: 0, name: "limit", rule: "an integer from 1 to 10000", bad: LIMIT_BAD };

forEachWire("server-side refusals of the lifecycle verbs (same text on both wires)", (ctx) => {
  let n = 0;
  const fresh = (verb: string) => `${verb.toLowerCase()}${n++}`;

  async function job(q: string, leaseMs = 30_000) {
    const { id } = await add(ctx().conn, q, "x");
    const got = await claim(ctx().conn, q, leaseMs);
    return { id, token: String(got!.attempts) };
  }

  const cases: VerbCase[] = [
    {
      verb: "ADD",
      script: scriptFor("ADD"),
      form: "EMQ.ADD 3 <row> <pending> <schedule> <id> <payload> <priority> <delay> <max_attempts> <trace> <group> <key> <key_ttl> <timeout> <parent> <name> <backoff>",
      setup: async (q) => {
        const id = newId();
        return {
          keys: keysOf.add(q, id),
          values: [
            id,
            "payload",
            "0",
            "0",
            "0",
            TRACE,
            "g",
            "k",
            "60000",
            "500",
            `p\u0000${id}`,
            "n",
            "fixed:5",
          ],
        };
      },
      values: [
        { index: 2, name: "priority", rule: "an integer", bad: PRIORITY_BAD },
        count(3, "delay", "a non-negative integer of milliseconds"),
        count(4, "max attempts"),
        { index: 5, name: "trace", rule: TRACE_RULE, bad: TRACE_BAD },
        { index: 6, name: "group", rule: LABEL_RULE, bad: LABEL_BAD },
        { index: 7, name: "key", rule: LABEL_RULE, bad: LABEL_BAD },
        count(8, "key ttl", "a non-negative integer of milliseconds"),
        count(9, "timeout", "a non-negative integer of milliseconds"),
        {
          index: 10,
          name: "parent",
          rule: "empty or a queue name, a NUL byte and an id with the JOB prefix",
          bad: ["x", "\u0000JOB1", "q\u0000job1", "{q}\u0000JOB1"],
        },
        { index: 11, name: "name", rule: LABEL_RULE, bad: LABEL_BAD },
        { index: 12, name: "backoff", rule: LABEL_RULE, bad: LABEL_BAD },
      ],
      id: 0,
      row: 0,
      sets: [1, 2],
    },
    {
      verb: "REQUEUE",
      script: scriptFor("REQUEUE"),
      form: "EMQ.REQUEUE 3 <active> <pending> <base> <id> <token> <max_attempts>",
      setup: async (q) => {
        const { id, token } = await job(q);
        return { keys: keysOf.requeue(q), values: [id, token, "3"] };
      },
      values: [positive(1, "lease token"), positive(2, "max attempts")],
      id: 0,
      sets: [0, 1],
    },
    {
      verb: "EXTEND",
      script: scriptFor("EXTEND"),
      form: "EMQ.EXTEND 2 <active> <base> <id> <token> <lease_ms>",
      setup: async (q) => {
        const { id, token } = await job(q);
        return { keys: keysOf.extend(q), values: [id, token, "1000"] };
      },
      values: [
        positive(1, "lease token"),
        { index: 2, name: "lease", rule: "a positive integer of milliseconds", bad: POSITIVE_BAD },
      ],
      id: 0,
      sets: [0],
    },
    {
      verb: "COMPLETE",
      script: scriptFor("COMPLETE"),
      form: "EMQ.COMPLETE 3 <active> <done> <base> <id> <token> <result> <keep>",
      setup: async (q) => {
        const { id, token } = await job(q);
        return { keys: keysOf.complete(q), values: [id, token, "result", "5"] };
      },
      values: [positive(1, "lease token"), count(3, "keep")],
      id: 0,
      sets: [0, 1],
    },
    {
      verb: "FAIL",
      script: scriptFor("FAIL"),
      form: "EMQ.FAIL 5 <active> <pending> <schedule> <dead> <base> <id> <token> <error> <backoff> <max_attempts> <keep> <stack>",
      setup: async (q) => {
        const { id, token } = await job(q);
        return { keys: keysOf.fail(q), values: [id, token, "boom", "0", "3", "5", ""] };
      },
      values: [
        positive(1, "lease token"),
        count(3, "backoff", "a non-negative integer of milliseconds"),
        count(4, "max attempts"),
        count(5, "keep"),
      ],
      id: 0,
      sets: [0, 1, 2, 3],
    },
    {
      verb: "RETRY",
      script: scriptFor("RETRY"),
      form: "EMQ.RETRY 3 <dead> <pending> <base> <id> <extra_attempts>",
      setup: async (q) => {
        const { id, token } = await job(q);
        await fail(ctx().conn, q, id, Number(token), "e", { backoffMs: 0, maxAttempts: 1, keep: 5 });
        return { keys: keysOf.retry(q), values: [id, "1"] };
      },
      values: [positive(1, "extra attempts")],
      id: 0,
      sets: [0, 1],
    },
    {
      verb: "PROMOTE",
      script: scriptFor("PROMOTE"),
      form: "EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>",
      setup: async (q) => {
        await add(ctx().conn, q, "x", { delay: 1 });
        await sleep(3);
        return { keys: keysOf.promote(q), values: ["10"] };
      },
      values: [limitRule],
      sets: [0, 1],
    },
    {
      verb: "REAP",
      script: scriptFor("REAP"),
      form: "EMQ.REAP 4 <active> <pending> <dead> <base> <limit> <max_attempts> <keep>",
      setup: async (q) => {
        await job(q, 1);
        await sleep(3);
        return { keys: keysOf.reap(q), values: ["10", "3", "5"] };
      },
      values: [limitRule, positive(1, "max attempts"), count(2, "keep")],
      sets: [0, 1, 2],
    },
    {
      verb: "REMOVE",
      script: scriptFor("REMOVE"),
      form: "EMQ.REMOVE 5 <pending> <schedule> <done> <dead> <base> <id>",
      setup: async (q) => {
        const { id } = await add(ctx().conn, q, "x");
        return { keys: keysOf.remove(q), values: [id] };
      },
      values: [],
      id: 0,
      sets: [0, 1, 2, 3],
    },
    {
      verb: "PAUSE",
      script: scriptFor("PAUSE"),
      form: "EMQ.PAUSE 1 <meta>",
      setup: async (q) => ({ keys: keysOf.meta(q), values: [] }),
      values: [],
      sets: [],
      hash: 0,
    },
    {
      verb: "RESUME",
      script: scriptFor("RESUME"),
      form: "EMQ.RESUME 2 <meta> <pending>",
      setup: async (q) => {
        await pause(ctx().conn, q);
        return { keys: keysOf.resume(q), values: [] };
      },
      values: [],
      sets: [1],
      hash: 0,
    },
  ];

  for (const c of cases) {
    test(`${c.verb}: shape, values, id gate, type gate, gate order — exact texts, keyspace unchanged`, async () => {
      const { conn, server } = ctx();
      const q = fresh(c.verb);
      const { keys, values } = await c.setup(q);
      const send = (ks: string[], vs: string[]) => () => conn.eval(c.script, ks, vs);
      const expect = async (ks: string[], vs: string[], text: string, queue = q) => {
        const before = await dumpQueue(server, queue);
        await refused(send(ks, vs), text);
        assert.deepEqual(await dumpQueue(server, queue), before, `unchanged after ${text}`);
      };
      const wrongKeys = `ERR EMQ.${c.verb} wrong number of keys: ${c.form}`;
      const wrongValues = `ERR EMQ.${c.verb} wrong number of values: ${c.form}`;

      // shape
      await expect(keys.slice(0, -1), values, wrongKeys);
      await expect([...keys, keys[0]!], values, wrongKeys);
      if (values.length > 0) await expect(keys, values.slice(0, -1), wrongValues);
      await expect(keys, [...values, "1"], wrongValues);

      // values, each with several bad texts
      for (const rule of c.values) {
        const text = `ERR EMQ.${c.verb} ${rule.name} must be ${rule.rule}`;
        for (const bad of rule.bad) {
          const vs = [...values];
          vs[rule.index] = bad;
          await expect(keys, vs, text);
        }
        // shape beats values
        const vs = [...values];
        vs[rule.index] = rule.bad[0]!;
        await expect(keys.slice(0, -1), vs, wrongKeys);
      }

      // id gate (after values)
      if (c.id !== undefined) {
        const idText = `ERR EMQ.${c.verb} id must start with JOB`;
        for (const badId of [NOT_JOB, "job0Nb1VTbfnu4", "JO", "", "JOb0Nb1VTbfnu4"]) {
          const vs = [...values];
          vs[c.id] = badId;
          const ks = [...keys];
          if (c.row !== undefined) ks[c.row] = queueKey(q, "job:") + badId;
          await expect(ks, vs, idText);
          if (c.values[0]) {
            const both = [...vs];
            both[c.values[0].index] = c.values[0].bad[0]!;
            await expect(ks, both, `ERR EMQ.${c.verb} ${c.values[0].name} must be ${c.values[0].rule}`);
          }
        }
      }

      // type gate: a string where a sorted set / hash is expected, each declared key in turn
      const typed = [
        ...c.sets.map((i) => [i, "zset"] as const),
        ...(c.hash !== undefined ? [[c.hash, "hash"] as const] : []),
      ];
      for (const [index, kind] of typed) {
        for (const wrong of kind === "zset"
          ? [
              ["SET", "x"],
              ["HSET", "f", "v"],
            ]
          : [
              ["SET", "x"],
              ["ZADD", "1", "m"],
            ]) {
          const tq = fresh(c.verb);
          const t = await c.setup(tq);
          await server.cli("DEL", t.keys[index]!);
          await server.cli(wrong[0]!, t.keys[index]!, ...wrong.slice(1));
          await expect(t.keys, t.values, WRONGTYPE, tq);
          if (c.id !== undefined) {
            // the id gate comes first
            const vs = [...t.values];
            vs[c.id] = NOT_JOB;
            const ks = [...t.keys];
            if (c.row !== undefined) ks[c.row] = queueKey(tq, "job:") + NOT_JOB;
            await expect(ks, vs, `ERR EMQ.${c.verb} id must start with JOB`, tq);
          }
        }
      }

      // the state was valid all along: the right call succeeds
      await send(keys, values)();
    });
  }
});
