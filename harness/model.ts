/**
 * The property-based model test: fast-check drives random sequences of verbs over two queues
 * through both executors — valid arguments mostly, adversarial and invalid ones often enough
 * (bad numbers, foreign ids, stale tokens, twisted keys and numkeys, corrupted rows and sets) —
 * and compares after every step (one MULTI/EXEC per step pair, so both sides read one clock).
 * A failing sequence is shrunk by fast-check to a minimal one, which the report prints.
 */
import fc from "fast-check";
import { BAD_TRACES, J, keysFor, raw, TRACE } from "./build.js";
import type { Call, Executors, KeyRef } from "./executors.js";
import type { Tally } from "./report.js";
import { CaseRun, type SeedArg } from "./steps.js";
import { queueKey, rowKey, verbOf } from "./verbs.js";

/* ------------------------------------------------------------------ symbolic arguments */

/** An id: a fixed one, or one read at run time from the script side's state. */
type IdChoice = { id: string } | { head: "active" | "dead" | "schedule" | "pending" };
/** A lease token: the row's current attempts, one more (stale), or literal text. */
type TokenChoice = "current" | "stale" | { text: string };
type Twist =
  | "none"
  | { numkeys: string }
  | "value-more"
  | "value-less"
  | { key: "anchor-type" | "other-queue" | "empty-name" | "no-prefix" };

interface GenCall {
  verb: string;
  q: string;
  /** Run over `maxmemory` (window mode): admissions refused on both sides, drains run. */
  full: boolean;
  id?: IdChoice;
  token?: TokenChoice;
  values: (string | Buffer)[];
  twist: Twist;
}

const BIG = "999999999999999";
const pick = <T>(common: readonly T[], rare: readonly T[], weight = 10): fc.Arbitrary<T> =>
  fc.oneof(
    { weight, arbitrary: fc.constantFrom(...common) },
    { weight: 1, arbitrary: fc.constantFrom(...rare) },
  );

const queue = fc.oneof(
  { weight: 4, arbitrary: fc.constant("A") },
  { weight: 1, arbitrary: fc.constant("B") },
);
const ID_POOL = Array.from({ length: 8 }, (_, i) => J(i + 1));
const FOREIGN_IDS = ["XYZ00000000001", "JOB", "", "JOB\r\n\0x", "job00000000001"];
/** Ids for a verb: mostly the head of the set the verb acts on (`prefer`), else the pool. */
const idChoice = (prefer: "active" | "dead" | "schedule" | null): fc.Arbitrary<IdChoice> =>
  fc.oneof(
    { weight: prefer ? 2 : 8, arbitrary: fc.constantFrom(...ID_POOL).map((id) => ({ id })) },
    ...(prefer ? [{ weight: 7, arbitrary: fc.constant({ head: prefer }) }] : []),
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("active" as const, "dead" as const, "schedule" as const, "pending" as const)
        .map((head) => ({ head })),
    },
    { weight: 1, arbitrary: fc.constantFrom(...FOREIGN_IDS).map((id) => ({ id })) },
  );
const token: fc.Arbitrary<TokenChoice> = fc.oneof(
  { weight: 8, arbitrary: fc.constant("current" as const) },
  { weight: 1, arbitrary: fc.constant("stale" as const) },
  { weight: 1, arbitrary: fc.constantFrom("0", "01", "-1", "x", BIG, "").map((text) => ({ text })) },
);
const noEmqDot = (b: Buffer) => !/emq\./i.test(b.toString("latin1"));
const bytes: fc.Arbitrary<Buffer> = fc
  .oneof(
    fc.constant(Buffer.alloc(0)),
    fc.string({ maxLength: 12 }).map((s) => Buffer.from(s)),
    fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a)),
    fc.constant(Buffer.from("a\r\nb\0c")),
  )
  .filter(noEmqDot);

const lease = pick(
  ["1", "5", "30000", "30000", "30000", "60000", "60000", BIG],
  ["0", "-1", "01", "", "x", "1000000000000000", "1.5"],
);
const delay = pick(["0", "0", "0", "1", "3", "100000", BIG], ["-1", "01", "x"]);
const priority = pick(["0", "0", "1", "-1", "5", `-${BIG}`, BIG], ["-0", "01", "+1", "x"]);
const count = pick(["0", "0", "1", "2", "3"], ["-1", "x"]);
const keep = pick(["0", "1", "2", "10", BIG], ["-1", "01"]);
const backoff = pick(["0", "0", "1", "1000"], ["-1", "x"]);
const maxAttempts = pick(["1", "1", "2", "3", "5"], ["0", "x"]);
const limit = pick(["1", "2", "100", "10000"], ["0", "10001", "x"]);
const extra = pick(["1", "2", BIG], ["0", "-1"]);
const lanes = pick(["1", "3", "12", "10000"], ["0", "10001", "01", "x"]);
// The bus: small bounds trim after a few entries (stream nodes of 4 in the harness); an age bound
// of an hour or more trims nothing a sequence wrote (its steps over maxmemory run in window mode,
// where the two sides' entry ids differ by a few ms).
const maxlen = pick(["0", "1", "2", "5", "10000"], ["-1", "01", "x"]);
const maxage = pick(["0", "3600000", "86400000", BIG], ["-1", "x"]);
// The operator verbs: a grace of 0 or an hour or more (steps over maxmemory run in window mode,
// where the two sides' finish times differ by a few ms: a grace of a few ms could split them).
const finishedState = pick(["completed", "dead"], ["pending", "", "x"]);
const grace = pick(["0", "0", "3600000", BIG], ["-1", "01", "x"]);
const force = pick(["0", "0", "1"], ["2", "", "x"]);
const trace = pick(["", "", "", TRACE, `${TRACE};k=v`], BAD_TRACES);
// ADD's extras: a group, an idempotency key (few names, so keys are held and answered), its ttl
// (none or an hour: a ttl of a few ms could expire between the two sides), a timeout, a parent.
const group = pick(["", "", "", "g1", "g2"], ["a\tb", "l".repeat(256)]);
const idemKey = pick(["", "", "", "", "k1", "k2"], ["\u0000", "x\u007f"]);
const keyTtl = pick(["0", "3600000"], ["-1", "x"]);
const timeout = pick(["0", "0", "0", "1", "5000"], ["-1", "01"]);
const parentRef = pick(
  ["", "", "", "", "P\u0000JOB00000000009", "a b\u0000JOBx"],
  ["P", "\u0000JOB1", "P\u0000job1"],
);
const children = pick(["1", "1", "2", "3"], ["0", "x", "01"]);
const onFailure = pick(["fail", "fail", "ignore"], ["", "FAIL", "x"]);
const flowParent = pick(
  ["", "", "P\0JOB00000000009", "a b:c@\u00e9\0JOB00000000009"],
  ["P", "\0JOB1", "P\0XYZ1"],
);
const childQueue = pick(["C", "C", "D", "a b:c"], ["", "a{b", "a\0b"]);
const childId = pick(["JOB00000000005", "JOB00000000006", "JOB00000000007"], ["XYZ1", ""]);
const outcome = pick(["completed", "completed", "failed"], ["dead", ""]);
const outboxEntry = pick(
  ["P\0JOB00000000009\0JOB00000000001\0completed\0ok", "P\0JOB00000000009\0JOB00000000002\0failed\0boom"],
  ["", "x"],
);
// Schedules: two names; instants long past (a job is due at once on both sides: an instant ahead
// would put a server-clock delay on the bus, which differs by a few ms between the two sides).
const schedName = pick(["s1", "s1", "s2"], ["", "a\tb"]);
const spec = fc.constantFrom('{"everyMs":1000}', '{"cron":"* * * * *"}', "");
const instant = pick(["1000", "2000", "3000"], ["0", "-1", "x"]);
const fireAt = pick(["0", "1000", "2000", "3000"], ["-1", "01"]);
const fireNext = pick(["0", "2000", "3000", "4000"], ["x"]);
const endAt = pick(["0", "0", "2500"], ["-1"]);
const longBytes = fc.constantFrom(Buffer.alloc(199, 0x61), Buffer.alloc(200, 0x62), Buffer.alloc(201, 0x63));

const twist: fc.Arbitrary<Twist> = fc.oneof(
  { weight: 40, arbitrary: fc.constant("none" as const) },
  { weight: 1, arbitrary: fc.constantFrom("x", "-1", "03", "99").map((numkeys) => ({ numkeys })) },
  { weight: 1, arbitrary: fc.constantFrom("value-more" as const, "value-less" as const) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        "anchor-type" as const,
        "other-queue" as const,
        "empty-name" as const,
        "no-prefix" as const,
      )
      .map((key) => ({ key })),
  },
);

/** One verb step in 20 runs over `maxmemory`. */
const full = fc.oneof(
  { weight: 19, arbitrary: fc.constant(false) },
  { weight: 1, arbitrary: fc.constant(true) },
);

/** Each verb's arguments: the id and token slots stay symbolic until the step runs. */
const VERB_ARBS: Record<string, fc.Arbitrary<Omit<GenCall, "verb" | "twist" | "q" | "full">>> = {
  ENQUEUE: fc.record({ id: idChoice(null), values: fc.tuple(bytes) }),
  ADD: fc.record({
    id: idChoice(null),
    values: fc.tuple(bytes, priority, delay, count, trace, group, idemKey, keyTtl, timeout, parentRef),
  }),
  CLAIM: fc.record({ values: fc.tuple(lease) }),
  EXTEND: fc.record({ id: idChoice("active"), token, values: fc.tuple(lease) }),
  COMPLETE: fc.record({ id: idChoice("active"), token, values: fc.tuple(bytes, keep) }),
  COMPLETENEXT: fc.record({ id: idChoice("active"), token, values: fc.tuple(bytes, keep, lease) }),
  FAIL: fc.record({ id: idChoice("active"), token, values: fc.tuple(bytes, backoff, maxAttempts, keep) }),
  RETRY: fc.record({ id: idChoice("dead"), values: fc.tuple(extra) }),
  PROMOTE: fc.record({ values: fc.tuple(limit) }),
  REAP: fc.record({ values: fc.tuple(limit, maxAttempts, keep) }),
  REMOVE: fc.record({ id: idChoice(null), values: fc.constant([] as string[]) }),
  PAUSE: fc.record({ values: fc.constant([] as string[]) }),
  RESUME: fc.record({ values: fc.constant([] as string[]) }),
  RESCHEDULE: fc.record({ id: idChoice("active"), token, values: fc.tuple(delay) }),
  REQUEUE: fc.record({ id: idChoice("active"), token, values: fc.tuple(maxAttempts) }),
  LANES: fc.record({ values: fc.tuple(lanes) }),
  EVENTS: fc.record({ values: fc.tuple(maxlen, maxage) }),
  PROGRESS: fc.record({ id: idChoice("active"), token, values: fc.tuple(fc.oneof(bytes, longBytes)) }),
  LOG: fc.record({ id: idChoice("active"), token, values: fc.tuple(bytes) }),
  EXPEDITE: fc.record({ id: idChoice("schedule"), values: fc.constant([] as string[]) }),
  CLEAN: fc.record({ values: fc.tuple(finishedState, grace, limit) }),
  DRAIN: fc.record({ values: fc.tuple(limit) }),
  OBLITERATE: fc.record({ values: fc.tuple(force, limit) }),
  FORGET: fc.record({ values: fc.tuple(idemKey) }),
  PARENT: fc.record({
    id: idChoice(null),
    values: fc.tuple(bytes, priority, count, children, onFailure, flowParent),
  }),
  SETTLE: fc.record({ id: idChoice(null), values: fc.tuple(childQueue, childId, outcome, bytes) }),
  ACK: fc.record({ values: fc.tuple(outboxEntry) }),
  SCHEDULE: fc.record({
    values: fc.tuple(schedName, spec, instant, count, endAt, bytes, priority, count, timeout),
  }),
  UNSCHEDULE: fc.record({ values: fc.tuple(schedName) }),
  FIRE: fc.record({ id: idChoice(null), values: fc.tuple(schedName, instant, fireAt, fireNext) }),
};
const WEIGHTS: Record<string, number> = {
  ENQUEUE: 7,
  ADD: 3,
  CLAIM: 8,
  EXTEND: 1,
  COMPLETE: 2,
  COMPLETENEXT: 3,
  FAIL: 3,
  RETRY: 2,
  PROMOTE: 2,
  REAP: 2,
  REMOVE: 2,
  PAUSE: 1,
  RESUME: 2,
  RESCHEDULE: 1,
  REQUEUE: 1,
  LANES: 1,
  EVENTS: 1,
  PROGRESS: 1,
  LOG: 1,
  EXPEDITE: 2,
  CLEAN: 1,
  DRAIN: 1,
  OBLITERATE: 1,
  FORGET: 1,
  PARENT: 2,
  SETTLE: 3,
  ACK: 1,
  SCHEDULE: 2,
  UNSCHEDULE: 1,
  FIRE: 3,
};

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
      cmd === "SET" ? ["SET", { q, suffix: "events" }, "x"] : ["DEL", { q, suffix: "events" }],
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
  const first = set?.type === "zset" ? set.members[0]?.[0] : undefined;
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

export interface ModelOptions {
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
