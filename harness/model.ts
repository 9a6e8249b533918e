/**
 * The property-based model test: fast-check drives random sequences of verbs over two queues
 * through both executors — valid arguments mostly, adversarial and invalid ones often enough
 * (bad numbers, foreign ids, stale tokens, twisted keys and numkeys, corrupted rows and sets) —
 * and compares after every step (one MULTI/EXEC per step pair, so both sides read one clock).
 * A failing sequence is shrunk by fast-check to a minimal one, which the report prints.
 */
import fc from "fast-check";
import { J, keysFor, raw } from "./build.js";
import type { Call, Executors, KeyRef } from "./executors.js";
import type { Tally } from "./report.js";
import type { SeedArg } from "./actions.js";
import { CaseRun } from "./steps.js";
import { queueKey, rowKey, verbOf } from "./verbs.js";
import {
  type IdChoice,
  type TokenChoice,
  type GenCall,
  BIG,
  queue,
  ID_POOL,
  twist,
  full,
  VERB_ARBS,
  WEIGHTS,
} from "./model-arbitraries.js";

const FIELDS = [
  "attempts",
  "priority",
  "max_attempts",
  "state",
  "payload",
  "parent",
  "children",
  "on_failure",
];
const FIELD_VALUES = [
  ...["x", "0", "1", "2", "-1", "01", "-0", "007", "", BIG, "1000000000000000", `-${BIG}`],
  ...["active", "dead", "pending", "scheduled", "completed", "weird", "waiting", "ignore"],
  "P\0JOB00000000009",
];
const SETS = ["pending", "active", "schedule", "done", "dead", "waiting", "outbox"] as const;

/** Plain writes on both queues: wrong types, malformed fields, orphans, ids in two sets. */
const corruption: fc.Arbitrary<SeedArg[]> = fc.oneof(
  fc
    .tuple(queue, fc.constantFrom(...SETS, "meta" as const))
    .map(([q, slot]): SeedArg[] => ["SET", { q, slot }, "x"]),
  fc
    .tuple(queue, fc.constantFrom(...SETS, "meta" as const))
    .map(([q, slot]): SeedArg[] => ["DEL", { q, slot }]),
  fc
    .tuple(queue, fc.constantFrom(...ID_POOL), fc.constantFrom(...FIELDS), fc.constantFrom(...FIELD_VALUES))
    .map(([q, id, f, v]): SeedArg[] => ["HSET", { q, row: id }, f, v]),
  fc.tuple(queue, fc.constantFrom(...ID_POOL)).map(([q, id]): SeedArg[] => ["DEL", { q, row: id }]),
  fc
    .tuple(
      queue,
      fc.constantFrom(...SETS),
      fc.constantFrom("0", "1", "5", "9000000000000000"),
      fc.constantFrom(...ID_POOL, "XYZ1", "JOB", "JOBx"),
    )
    .map(([q, slot, score, m]): SeedArg[] => ["ZADD", { q, slot }, score, m]),
  fc
    .tuple(queue, fc.constantFrom("0", "1"))
    .map(([q, v]): SeedArg[] => ["HSET", { q, slot: "meta" }, "paused", v]),
  fc
    .tuple(queue, fc.constantFrom("0", "7", "x", "-1", "01", BIG))
    .map(([q, v]): SeedArg[] => ["HSET", { q, slot: "meta" }, "orphans", v]),
  fc
    .tuple(queue, fc.constantFrom("3", "12,1", "3,x,3", "", ",", "01,10001,5", "7,2,7"))
    .map(([q, v]): SeedArg[] => ["HSET", { q, slot: "meta" }, "lanes", v]),
  fc
    .tuple(
      queue,
      fc.constantFrom("events_maxlen", "events_maxage"),
      fc.constantFrom("0", "3", "x", "-1", "01"),
    )
    .map(([q, f, v]): SeedArg[] => ["HSET", { q, slot: "meta" }, f, v]),
  fc
    .tuple(queue, fc.constantFrom("SET", "DEL"))
    .map(([q, cmd]): SeedArg[] =>
      cmd === "SET" ? ["SET", { q, derived: "events" }, "x"] : ["DEL", { q, derived: "events" }],
    ),
  fc
    .tuple(
      queue,
      fc.constantFrom(...ID_POOL),
      fc.constantFrom("logs", "log:1", "progress"),
      fc.constantFrom("x", "99", "0"),
    )
    .map(([q, id, f, v]): SeedArg[] => ["HSET", { q, row: id }, f, v]),
);

/* ------------------------------------------------------------------ commands */

interface Real {
  run: CaseRun;
  steps: number;
}

const latin1 = (b: Buffer) => b.toString("latin1");

function resolveId(choice: IdChoice | undefined, run: CaseRun, q: string): string {
  if (choice === undefined) return "";
  if ("id" in choice) return choice.id;
  const set = run.scriptState.get(latin1(queueKey(run.script.name(q), choice.head)));
  const first = set?.type === "zset" ? set.members["at" in choice ? (choice.at ?? 0) : 0]?.[0] : undefined;
  return first ? latin1(first) : J(1);
}

function resolveToken(choice: TokenChoice | undefined, run: CaseRun, q: string, id: string): string {
  if (choice === undefined) return "";
  if (typeof choice === "object") return choice.text;
  const r = run.scriptState.get(latin1(rowKey(run.script.name(q), Buffer.from(id, "latin1"))));
  const attempts = r?.type === "hash" ? r.fields.find(([f]) => latin1(f) === "attempts")?.[1] : undefined;
  const text = attempts ? latin1(attempts) : "";
  const current = /^[1-9][0-9]{0,14}$/.test(text) ? text : "1";
  return choice === "current" ? current : String(Number(current) + 1);
}

/** The concrete call a symbolic one stands for, on the run's current state. */
function resolve(g: GenCall, run: CaseRun): Call {
  const verb = verbOf(g.verb);
  const id = resolveId(g.id, run, g.q);
  const head = g.id === undefined ? [] : [Buffer.from(id, "latin1")];
  const tok = g.token === undefined ? [] : [resolveToken(g.token, run, g.q, id)];
  // Every form lists the id first, then the lease token, then the rest.
  const values: (string | Buffer)[] = [...head, ...tok, ...g.values];
  for (const m of g.many ?? []) {
    const mid = resolveId(m.id, run, g.q);
    values.push(Buffer.from(mid, "latin1"), resolveToken(m.token, run, g.q, mid), m.result);
  }
  let keys: KeyRef[] = keysFor(g.verb, g.q, Buffer.from(id, "latin1"));
  let numkeys: string | undefined;
  const t = g.twist;
  if (t === "value-more") values.push("x");
  else if (t === "value-less") values.pop();
  else if (typeof t === "object" && "numkeys" in t) numkeys = t.numkeys;
  else if (typeof t === "object") {
    const a = verb.anchor;
    const other = g.q === "A" ? "B" : "A";
    if (t.key === "anchor-type") keys = keys.map((k, i) => (i === a ? { q: g.q, suffix: "nope" } : k));
    if (t.key === "no-prefix") keys = keys.map((k, i) => (i === a ? raw("foo:pending") : k));
    if (t.key === "empty-name")
      keys = verb.keys.map((s) => raw(s === "row" ? rowKey("", id) : queueKey("", s)));
    if (t.key === "other-queue") {
      const i = keys.length > 1 ? (a + 1) % keys.length : a;
      keys = keys.map((k, j) => (j === i && "q" in k ? { ...k, q: other } : k));
    }
  }
  return { verb: g.verb, keys, values, ...(numkeys !== undefined ? { numkeys } : {}) };
}

function describe(g: GenCall): string {
  const parts = [g.q];
  if (g.id) parts.push("id" in g.id ? JSON.stringify(g.id.id) : `${g.id.head}-head`);
  if (g.token)
    parts.push(typeof g.token === "object" ? `token=${JSON.stringify(g.token.text)}` : `token=${g.token}`);
  for (const v of g.values) parts.push(JSON.stringify(latin1(Buffer.from(v))).slice(0, 30));
  for (const m of g.many ?? []) {
    const id = "id" in m.id ? JSON.stringify(m.id.id) : `${m.id.head}-${m.id.at ?? 0}`;
    const tok = typeof m.token === "object" ? JSON.stringify(m.token.text) : m.token;
    parts.push(`[${id} ${tok} ${JSON.stringify(latin1(m.result)).slice(0, 20)}]`);
  }
  if (g.twist !== "none") parts.push(`twist=${JSON.stringify(g.twist)}`);
  if (g.full) parts.push("over maxmemory");
  return `${g.verb}(${parts.join(", ")})`;
}

class VerbCommand implements fc.AsyncCommand<object, Real> {
  constructor(readonly g: GenCall) {}
  check(): boolean {
    return true;
  }
  async run(_m: object, r: Real): Promise<void> {
    const call = resolve(this.g, r.run);
    const outcome = await r.run.run(
      this.g.full ? { kind: "guard", guard: "oom", call } : { kind: "call", call, mode: "exact" },
    );
    r.steps += 1;
    if (outcome?.verdict === "failed") {
      throw new Error(`EMQ.${call.verb} differs at step ${r.run.step}:\n  ${outcome.problems.join("\n  ")}`);
    }
  }
  toString(): string {
    return describe(this.g);
  }
}

class CorruptCommand implements fc.AsyncCommand<object, Real> {
  constructor(readonly command: SeedArg[]) {}
  check(): boolean {
    return true;
  }
  async run(_m: object, r: Real): Promise<void> {
    await r.run.run({ kind: "seed", commands: [this.command], tolerant: true });
  }
  toString(): string {
    return `seed(${this.command.map((a) => (typeof a === "object" && !Buffer.isBuffer(a) ? JSON.stringify(a) : String(a))).join(" ")})`;
  }
}

class WaitCommand implements fc.AsyncCommand<object, Real> {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  async run(): Promise<void> {
    await new Promise((r) => setTimeout(r, this.ms));
  }
  toString(): string {
    return `wait(${this.ms} ms)`;
  }
}

const COMMANDS = [
  ...Object.entries(VERB_ARBS).map(([verb, arb]) =>
    fc
      .tuple(arb, queue, twist, verbOf(verb).script === null ? fc.constant(false) : full)
      .map(
        ([a, q, t, f]) =>
          new VerbCommand({ ...a, verb, q, twist: t, full: f }) as fc.AsyncCommand<object, Real>,
      ),
  ),
  ...Array.from({ length: 2 }, () =>
    corruption.map((c) => new CorruptCommand(c) as fc.AsyncCommand<object, Real>),
  ),
  fc.constantFrom(2, 4).map((ms) => new WaitCommand(ms) as fc.AsyncCommand<object, Real>),
];
// fc.commands picks among its arbitraries uniformly: repeat each verb by its weight.
const WEIGHTED = COMMANDS.flatMap((arb, i) => {
  const verb = Object.keys(VERB_ARBS)[i];
  return Array.from({ length: verb ? (WEIGHTS[verb] ?? 1) : 1 }, () => arb);
});

/* ------------------------------------------------------------------ the run */

interface ModelOptions {
  steps: number;
  seed: number;
  /** Commands per sequence at most (default 40). */
  maxCommands?: number;
  log?: (line: string) => void;
}

/**
 * Runs generated sequences until at least `steps` verb steps ran, in batches of fast-check runs
 * with seeds seed, seed+1, … Each sequence gets fresh queues, on the executors `pick` gives (on a
 * cluster, the primaries in turn); a failure is shrunk and recorded.
 * Steps of shrinking re-runs are not counted.
 */
export async function runModel(pick: () => Executors, tally: Tally, o: ModelOptions): Promise<void> {
  let shrinking = false;
  let previous: CaseRun | null = null;
  const property = fc.asyncProperty(
    fc.commands(WEIGHTED, { maxCommands: o.maxCommands ?? 60, size: "large" }),
    async (cmds) => {
      if (previous !== null) await previous.dispose();
      const run = new CaseRun(pick(), `generated sequence ${tally.generatedRuns + 1}`);
      run.scriptOnLayout = false;
      previous = run;
      const real: Real = { run, steps: 0 };
      try {
        await fc.asyncModelRun(() => ({ model: {}, real }), cmds);
      } finally {
        if (!shrinking) {
          tally.generatedRuns += 1;
          tally.generatedSteps += real.steps;
          for (const outcome of run.outcomes) tally.add(outcome);
          if (run.failed) shrinking = true;
        }
      }
    },
  );
  for (let batch = 0; tally.generatedSteps < o.steps; batch++) {
    const before = tally.generatedSteps;
    const details = await fc.check(property, { seed: o.seed + batch, numRuns: 20 });
    if (details.failed) {
      // One shrunk counterexample is the finding; more batches would mostly find it again.
      const error =
        details.errorInstance instanceof Error
          ? details.errorInstance.message
          : String(details.errorInstance);
      tally.counterexamples.push(
        `${fc.defaultReportMessage(details) ?? ""}\n\nThe shrunk sequence's failure: ${error}`,
      );
      o.log?.(`generated: a sequence failed at batch ${batch} (seed ${o.seed + batch}); shrunk, stopping`);
      return;
    }
    o.log?.(`generated: ${tally.generatedSteps} steps (batch ${batch}, seed ${o.seed + batch})`);
    if (tally.generatedSteps === before) throw new Error("the model ran no steps");
  }
}
