/**
 * The call generator of the module fuzz: a seeded PRNG, every `EMQ.*` form of docs/protocol.md,
 * well-formed calls built from a form, and malformations that each make a call one the protocol
 * must refuse (so its reply must be an error and it must write nothing).
 */
import { anchorOf, JOB_CORE, newId, PROTOCOL, type ValueSpec, verbSpec } from "../../src/protocol.js";
import type { SeedJob } from "./seed.js";

/** sfc32: small, fast, seeded; the same seed gives the same calls. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(readonly seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 16; i++) this.next();
  }
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

export type KeyType =
  | "row"
  | "pending"
  | "schedule"
  | "active"
  | "done"
  | "dead"
  | "meta"
  | "base"
  | "repeats"
  | "version";
type ValueKind =
  | "id"
  | "bytes"
  | "ms"
  | "delay"
  | "count"
  | "positive"
  | "token"
  | "priority"
  | "limit"
  | "trace"
  | "label"
  | "parent"
  | "name"
  | SizeKind;

/** The size-bounded grammars: any bytes, at most their `max_bytes` (docs/protocol.md). */
type SizeKind = "payload" | "result" | "progress" | "line" | "error" | "stack";
const SIZE_KINDS: readonly SizeKind[] = ["payload", "result", "progress", "line", "error", "stack"];
const isSized = (kind: ValueKind): kind is SizeKind => (SIZE_KINDS as readonly string[]).includes(kind);

export interface Form {
  verb: string;
  keys: readonly KeyType[];
  values: readonly ValueKind[];
  /** Index of the key the module recovers the queue name from. */
  anchor: number;
}

/** What a value of a spec is, to the fuzzer: an id, the token, bytes, or a grammar. */
function kindOf(value: ValueSpec): ValueKind {
  if (value.slot === "id") return "id";
  if (value.slot === "token") return "token";
  return value.grammar ?? "bytes";
}

/** Every form of the protocol data, EMQ.VERSION (no arguments) aside. */
export const FORMS: readonly Form[] = [...JOB_CORE, verbSpec("INSTALL")].map((spec) => ({
  verb: spec.verb,
  keys: spec.keys.map((k) => k.slot as KeyType),
  values: spec.values.map(kindOf),
  anchor: anchorOf(spec),
}));

export type Arg = string | Buffer;

export interface Call {
  verb: string;
  args: Arg[];
  /** Must be refused (error reply, nothing written). */
  malformed: boolean;
  /** The malformation, for the notes. */
  kind: string;
  /** Sent on the connection to the unbranded database (the fence refuses there). */
  db2?: boolean;
}

export function keyOf(type: KeyType, q: string, id: string): string {
  if (type === "version") return "{emq}:version";
  if (type === "base") return `emq:{${q}}:`;
  if (type === "row") return `emq:{${q}}:job:${id}`;
  return `emq:{${q}}:${type}`;
}

/** A valid value of `kind`; `job` gives ids and tokens. */
function validValue(rng: Rng, kind: ValueKind, job: SeedJob | undefined, payloadMax: number): Arg {
  switch (kind) {
    case "id":
      return job?.id ?? newId();
    case "token":
      return String(job?.token ?? 1 + rng.int(5));
    case "bytes":
    case "payload":
    case "result":
    case "progress":
    case "line":
    case "error":
    case "stack":
      return rng.chance(0.2) ? "" : rng.chance(0.5) ? rng.bytes(rng.int(payloadMax)) : `v${rng.int(1e6)}`;
    case "ms":
      return String(rng.pick([1, 1000, 60_000, 999_999_999_999_999]));
    case "delay":
    case "count":
      return String(rng.pick([0, 0, 1, 10, 1000, 999_999_999_999_999]));
    case "positive":
      return String(rng.pick([1, 3, 10, 999_999_999_999_999]));
    case "priority":
      return String(rng.pick([0, -1, 5, -999_999_999_999_999, 999_999_999_999_999]));
    case "limit":
      return String(rng.pick([1, 10, 1000, 10_000]));
    case "trace":
      return rng.pick(["", "", TRACE, `${TRACE};k=v`]);
    case "label":
      return rng.pick(["", "", "g1", "order 42: é", "l".repeat(255)]);
    case "parent":
      return rng.pick(["", "", `parent q\u0000${newId()}`]);
    case "name":
      return rng.pick(["a", "nightly", "n".repeat(255)]);
  }
}

/** A W3C traceparent (ADD's `<trace>`). */
const TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/** Texts each grammar refuses (docs/protocol.md, value grammars). */
const COMMON_BAD = ["", "abc", "1.5", " 1", "1 ", "1e3", "0x10", "+1", "\0", "1\0", "١"];
const BAD_VALUES: Record<Exclude<ValueKind, "id" | "bytes" | SizeKind>, readonly string[]> = {
  ms: [...COMMON_BAD, "0", "-1", "01", "00", "-0", "1000000000000000", "9".repeat(100)],
  delay: [...COMMON_BAD, "-1", "01", "00", "-0", "1000000000000000", "9".repeat(40)],
  count: [...COMMON_BAD, "-1", "01", "00", "-0", "1000000000000000", "18446744073709551616"],
  positive: [...COMMON_BAD, "0", "-1", "01", "00", "1000000000000000"],
  token: [...COMMON_BAD, "0", "-1", "01", "1000000000000000"],
  priority: [...COMMON_BAD, "-0", "--1", "-", "01", "-01", "1000000000000000", "-1000000000000000"],
  limit: [...COMMON_BAD, "0", "-1", "01", "10001", "99999", "1000000000000000"],
  trace: [
    ...COMMON_BAD.slice(1),
    TRACE.toUpperCase(),
    `ff${TRACE.slice(2)}`,
    `${TRACE};`,
    `${TRACE};${"x".repeat(457)}`,
  ],
  label: ["\u0000", "a\tb", "x\u007f", "l".repeat(256)],
  parent: ["x", "\u0000JOB00000000001", "q\u0000job00000000001", "{q}\u0000JOB00000000001", "q\u0000JOB1\n"],
  name: ["", "\u0000", "a\tb", "x\u007f", "n".repeat(256)],
};

const BAD_NUMKEYS = [
  "",
  "-1",
  "-2",
  "x",
  "+2",
  "02",
  " 2",
  "2 ",
  "2.0",
  "1e1",
  "0x2",
  "\0",
  "9223372036854775807",
  "9223372036854775808",
  "-9223372036854775808",
  "18446744073709551615",
  "99999999999999999999999",
  "2147483648",
  "4294967297",
];

const UNKNOWN_VERBS = [
  "EMQ.",
  "EMQ.FOO",
  "EMQ.ENQUEUEX",
  "EMQ.VERSIONS",
  "EMQ.ENQ",
  "EMQ.CLAIM2",
  "EMQ..CLAIM",
  "EMQ.\0",
];

export interface Target {
  /** A queue name whose keys exist (seeded); well-formed calls on it must succeed or refuse. */
  q: string;
  jobs: readonly SeedJob[];
}

/** A job of `target` fit for `form` (an active one for lease verbs, a dead one for RETRY). */
function jobFor(rng: Rng, form: Form, target: Target): SeedJob | undefined {
  const want =
    form.verb === "RETRY"
      ? "dead"
      : ["EXTEND", "COMPLETE", "FAIL", "RESCHEDULE", "REQUEUE"].includes(form.verb)
        ? "active"
        : null;
  const fit = want === null ? target.jobs : target.jobs.filter((j) => j.state === want);
  return fit.length === 0 || rng.chance(0.1) ? undefined : rng.pick(fit);
}

/** A well-formed call of `form` on queue `target.q`. */
export function wellFormed(rng: Rng, form: Form, target: Target, payloadMax: number): Call {
  const job = jobFor(rng, form, target);
  const values = form.values.map((kind) => validValue(rng, kind, job, payloadMax));
  const id = form.values[0] === "id" ? String(values[0]) : "";
  const keys = form.keys.map((type) => keyOf(type, target.q, id));
  return {
    verb: `EMQ.${form.verb}`,
    args: [String(keys.length), ...keys, ...values],
    malformed: false,
    kind: "valid",
  };
}

/** Broken variants of a key (each one the layout step refuses). */
function brokenKey(
  rng: Rng,
  key: string,
  type: KeyType,
  q: string,
  other: string,
  n: number,
): string | Buffer {
  if (type === "version")
    return rng.pick(["{emq}:versio", "{emq}:version ", "{EMQ}:version", "emq:{q}:version", ""]);
  const suffix = key.slice(`emq:{${q}}:`.length);
  const wrongType = rng.pick(
    ["pending", "active", "schedule", "done", "dead", "meta", "", "job:", "pendingx"].filter(
      (t) => t !== suffix,
    ),
  );
  const variants: (() => string | Buffer)[] = [
    () => key.replace("emq:{", "emq:"),
    () => key.replace("emq:{", "EMQ:{"),
    () => key.replace("}:", ":"),
    // Another queue's key: refused beside the anchor; as the anchor of a one-key form it would
    // be a valid call on that queue, so there the key gets a wrong type instead.
    () => (n === 1 ? `emq:{${q}}:${wrongType}` : `emq:{${other}}:${suffix}`),
    () => `emq:{${q}}:${wrongType}`,
    () => `emq:{${q}}`,
    () => "",
    () => rng.bytes(1 + rng.int(40)),
    () => `emq:{${q}}:${suffix}${"x".repeat(65536)}`,
    () => (type === "row" ? `emq:{${q}}:job:${newId()}` : `${key}:`),
  ];
  return rng.pick(variants)();
}

/** A call the protocol must refuse, built from a well-formed one on `target`. */
export function malformed(rng: Rng, target: Target, others: readonly string[], payloadMax: number): Call {
  const form = rng.pick(FORMS);
  const base = wellFormed(rng, form, target, payloadMax);
  const n = form.keys.length;
  const args = [...base.args];
  const kinds = ["numkeys", "count", "layout", "name", "verb", "version"];
  if (form.values.some((v) => v in BAD_VALUES)) kinds.push("value", "value");
  if (form.values[0] === "id") kinds.push("id");
  if (form.values.includes("token") || form.verb === "RETRY" || form.verb === "REMOVE") kinds.push("gate");
  if (form.verb !== "INSTALL") kinds.push("fence");
  // Huge arguments are rare: each costs the wire 100 KB or more (one over a size bound, up to 8 MiB).
  const sized = form.values.flatMap((v, i) => (isSized(v) ? [i] : []));
  const kind = rng.chance(0.005)
    ? "huge"
    : sized.length > 0 && rng.chance(0.002)
      ? "oversize"
      : rng.pick(kinds);
  const call = (verb: string, a: Arg[], extra: Partial<Call> = {}): Call => ({
    verb,
    args: a,
    malformed: true,
    kind,
    ...extra,
  });
  switch (kind) {
    case "numkeys": {
      const bad = rng.chance(0.5)
        ? rng.pick(BAD_NUMKEYS)
        : String(rng.pick([0, n - 1, n + 1, n + 2, n + 5, 1_000_000].filter((k) => k !== n && k >= 0)));
      args[0] = bad;
      return call(base.verb, args);
    }
    case "count": {
      const total = args.length;
      const variants: (() => Arg[])[] = [
        () => [],
        () => args.slice(0, total - 1),
        () => [...args, "extra"],
        () => [...args, ...Array.from({ length: 1 + rng.int(50) }, () => rng.bytes(rng.int(8)))],
        () => args.slice(0, 1 + n),
        () => [args[0] as Arg, ...args.slice(2)],
      ];
      const a = rng.pick(variants)();
      return call(base.verb, a.length === total ? [...a, "x"] : a);
    }
    case "layout": {
      const i = rng.int(n);
      const type = form.keys[i] as KeyType;
      const other = rng.pick(others.filter((o) => o !== target.q));
      args[1 + i] = brokenKey(rng, String(args[1 + i]), type, target.q, other, n);
      return call(base.verb, args);
    }
    case "name": {
      if (form.verb === "INSTALL") return call(base.verb, ["1", "emq:{}:version"]);
      const name = rng.pick(["", "a{b", "a}b", "a\0b", "{", "}", "}:"]);
      const id = form.values[0] === "id" ? String(args[1 + n]) : "";
      for (let i = 0; i < n; i++) args[1 + i] = keyOf(form.keys[i] as KeyType, name, id);
      return call(base.verb, args);
    }
    case "verb":
      return call(rng.pick(UNKNOWN_VERBS), args);
    case "version":
      return call(
        "EMQ.VERSION",
        Array.from({ length: 1 + rng.int(3) }, () => (rng.chance(0.5) ? "1" : rng.bytes(4))),
      );
    case "huge": {
      // A huge value where a number is expected, or a huge numkeys with huge keys.
      const where = 1 + n + rng.int(Math.max(1, form.values.length));
      if (form.values.length === 0 || rng.chance(0.3)) args[0] = "9".repeat(1 + rng.int(5000));
      else args[where] = rng.chance(0.5) ? "9".repeat(100_000) : rng.bytes(100_000);
      // Only the values a grammar checks are sure to be refused; a huge payload alone is valid.
      const checked = form.values[where - 1 - n];
      const unsure = checked === undefined || checked === "bytes" || checked === "id" || isSized(checked);
      if (args[0] === base.args[0] && unsure) args[0] = "-1";
      return call(base.verb, args);
    }
    case "oversize": {
      // One byte over the value's size bound (its grammar's `max_bytes`).
      const i = rng.pick(sized);
      const max = PROTOCOL.grammars[form.values[i] as SizeKind].max_bytes ?? 0;
      args[1 + n + i] = Buffer.alloc(max + 1, 0x78);
      return call(base.verb, args);
    }
    case "value": {
      const numeric = form.values.flatMap((v, i) => (v in BAD_VALUES ? [i] : []));
      const i = rng.pick(numeric);
      args[1 + n + i] = rng.pick(BAD_VALUES[form.values[i] as keyof typeof BAD_VALUES]);
      return call(base.verb, args);
    }
    case "id": {
      const bad = rng.pick([
        "",
        "JO",
        "job00000000000",
        "XYZ00000000000",
        "\0JOB",
        "JOBX".slice(1),
        rng.bytes(14).toString("latin1"),
      ]);
      const badId = bad.startsWith("JOB") ? `X${bad}` : bad;
      args[1 + n] = badId;
      const r = form.keys.indexOf("row");
      if (r >= 0) args[1 + r] = keyOf("row", target.q, badId);
      return call(base.verb, args);
    }
    case "gate": {
      // RETRY of a job that is not dead, REMOVE of an active one: their state gates refuse.
      const refusedBy =
        form.verb === "RETRY" ? (j: SeedJob) => j.state !== "dead" : (j: SeedJob) => j.state === "active";
      if (form.verb === "RETRY" || form.verb === "REMOVE") {
        const fit = target.jobs.filter(refusedBy);
        args[1 + n] = fit.length > 0 ? rng.pick(fit).id : "XYZ"; // no such job: the id gate refuses
        return call(base.verb, args);
      }
      // A lease verb on a job that is not active, or with a stale token: the lease gate refuses.
      const notActive = target.jobs.filter((j) => j.state !== "active");
      const active = target.jobs.filter((j) => j.state === "active");
      const t = 1 + form.keys.length + form.values.indexOf("token");
      if (rng.chance(0.5) && active.length > 0) {
        const job = rng.pick(active);
        args[1 + n] = job.id;
        args[t] = String(job.token + 1 + rng.int(3));
      } else if (notActive.length > 0) {
        const job = rng.pick(notActive);
        args[1 + n] = job.id;
        args[t] = String(job.token);
      } else args[1 + n] = newId();
      return call(base.verb, args);
    }
    default:
      // fence: the same well-formed call, on the database whose brand is a wire-4 brand.
      return call(base.verb, args, { db2: true });
  }
}

/** Every well-formed call on a queue whose keys all have the wrong type must be refused. */
export function wrongTyped(rng: Rng, q: string, payloadMax: number): Call {
  const form = rng.pick(FORMS.filter((f) => f.verb !== "INSTALL"));
  const call = wellFormed(rng, form, { q, jobs: [] }, payloadMax);
  return { ...call, malformed: true, kind: "wrongtype" };
}
