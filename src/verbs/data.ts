/**
 * The wire contract as data: `protocol/verbs/<verb>.json` (one file per command) and
 * `protocol/protocol.json`, read once at load and validated against `protocol/schema.json` —
 * the one reader of these files: the host, the harness, the scripts, the tests and the bench
 * all load the data through `parseProtocol`. The host's verb table, the scripts registry, the
 * harness's forms, the module's registration (its `build.rs`) and the verb tables of
 * `docs/protocol.md` are all made from these files; nothing restates them by hand.
 */
import { readdirSync, readFileSync } from "node:fs";
import { SRC } from "../here.js";
import type { DerivedKey, KeySlot } from "./names.js";
import { type Schema, validate } from "./schema.js";

export type { DerivedKey, KeySlot, KeyPrefix, QueueKeyType } from "./names.js";

/**
 * Value grammars: numbers (decimal text); text: `trace` (a W3C trace context or empty), `label`
 * (empty or 1–255 bytes, no control byte), `parent` (empty or queue NUL id), `name` (1–255 bytes,
 * no control byte), and the size bounds of any bytes: `payload`, `result`, `progress`, `line`,
 * `error`, `stack` (each at most its `max_bytes`).
 */
export type Grammar =
  | "ms"
  | "delay"
  | "count"
  | "positive"
  | "priority"
  | "limit"
  | "trace"
  | "label"
  | "parent"
  | "name"
  | "payload"
  | "result"
  | "progress"
  | "line"
  | "error"
  | "stack";
/** Admission: refused over `maxmemory`; drain: runs over it; read: reads only. */
export type VerbClass = "admission" | "drain" | "read";
export type TimeSet = "active" | "schedule" | "done" | "dead" | "waiting" | "outbox";

export interface KeySpec {
  slot: KeySlot;
  /** The key the module recovers the queue name from. */
  anchor?: boolean;
  /** Key-spec flags the module declares (RW, RO, ACCESS, INSERT, DELETE, UPDATE, NOT_KEY). */
  flags: string[];
  about?: string;
}

export interface ValueSpec {
  slot: string;
  /** Checked values: the grammar they are checked against and the name refusals use. */
  grammar?: Grammar;
  name?: string;
  about?: string;
}

export interface VerbSpec {
  /** Upper-case token; the native command is `EMQ.<verb>`. */
  verb: string;
  summary: string;
  /**
   * One of the job-core verbs (`EMQ.VERSION` lists them): not stated in the verb's file but
   * derived at load from `protocol.json` `job_core`, where membership is stated once.
   */
  core: boolean;
  /** Listed by `EMQ.VERSION` under `extensions`: a capability beside the job core (`BCLAIM`). */
  extension?: boolean;
  /** The command may wait inside the server (module command flag `blocking`). */
  blocking?: boolean;
  /** The module's verb family (`module/src/verbs/<family>.rs`). */
  family: string;
  /** The Lua twin `src/scripts/<script>.lua`; null for a native-only command. */
  script: string | null;
  class: VerbClass;
  keys: KeySpec[];
  values: ValueSpec[];
  /**
   * The last `last` values repeat: the form takes them once, or up to `max` times in a row
   * (COMPLETEN's `<id> <token> <result>` triples).
   */
  repeat?: { last: number; max: number };
  /** Time scores the verb writes: the set, and the value its offset comes from (null = now). */
  times: { set: TimeSet; offset: string | null }[];
  /** A time in the reply: the array index (null = the reply itself) and its offset's value. */
  /**
   * `each`: the reply is a list of replies, the time at `index` in each (CLAIMN's); `after`: the
   * list starts after that many leading elements (COMPLETEN's outcomes).
   */
  reply_time?: { index: number | null; offset: string; each?: boolean; after?: number };
  wake: string;
  /** The entries the verb writes on its queue's event bus (docs/protocol.md, "The event bus"). */
  events: string;
  /** The rows of the verb's table in docs/protocol.md after KEYS and ARGV. */
  doc: [string, string][];
}

export interface ProtocolSpec {
  about: string;
  /** The job-core verbs, in the order `EMQ.VERSION` lists them. */
  job_core: string[];
  brands: { wire4: string; wire6: string; key: string };
  classes: Record<VerbClass, { flags: string; shebang: string | null; about: string }>;
  /**
   * Each grammar's refusal rule and accepted text; `text`: not a number (`trace`); `max_bytes`:
   * the most bytes a value in a text grammar may have (the server refuses a longer one).
   */
  grammars: Record<Grammar, { rule: string; accepts: string; text?: boolean; max_bytes?: number }>;
  /** The keys a verb may declare: the whole key's pattern, its Valkey type, what it holds. */
  key_slots: Record<KeySlot, KeyTypeSpec>;
  /** The keys a transition derives from a declared base: the pattern relative to the base. */
  derived_keys: Record<DerivedKey, KeyTypeSpec & { verbs: string[] }>;
  key_flags: string[];
}

/** One key of the keyspace as the data describes it (`docs/protocol.md`, "Keyspace"). */
export interface KeyTypeSpec {
  /** `emq:{q}:pending`, `emq:{q}:job:<id>`; a derived key relative to the base: `<base>limits`. */
  pattern: string;
  /** The Valkey type: `sorted set`, `hash`, `stream`, `string`; `channel` and `none` are not keys. */
  type: string;
  holds: string;
}

/** The protocol folder: `protocol/` beside `src/` (and beside `dist/src/` in the package). */
const PROTOCOL_FOLDER = new URL("../protocol/", SRC);

/** The protocol's files as text: `protocol.json`, each `verbs/<verb>.json` (by file name), the schema. */
export interface ProtocolFiles {
  protocol: string;
  verbs: ReadonlyMap<string, string>;
  /** `schema.json`; without it (the data at an old commit) the files are parsed unchecked. */
  schema?: string;
}

/** The protocol as loaded: the shared data and every command by token. */
interface Protocol {
  protocol: ProtocolSpec;
  verbs: ReadonlyMap<string, VerbSpec>;
}

/** Reads the protocol folder's files (`folder` defaults to the package's own). */
export function readProtocolFiles(folder: URL = PROTOCOL_FOLDER): ProtocolFiles {
  const verbs = new Map<string, string>();
  for (const file of readdirSync(new URL("verbs/", folder))
    .filter((f) => f.endsWith(".json"))
    .sort())
    verbs.set(file, readFileSync(new URL(`verbs/${file}`, folder), "utf8"));
  return {
    protocol: readFileSync(new URL("protocol.json", folder), "utf8"),
    verbs,
    schema: readFileSync(new URL("schema.json", folder), "utf8"),
  };
}

/** What the schema cannot say: each reference names something the data declares. */
function references(protocol: ProtocolSpec, verbs: ReadonlyMap<string, VerbSpec>): string[] {
  const problems: string[] = [];
  const known = (what: string, name: string, set: object) => {
    if (!(name in set)) problems.push(`${what}: ${name} is not declared in protocol.json`);
  };
  for (const spec of verbs.values()) {
    for (const key of spec.keys) known(`verbs ${spec.verb}: slot`, key.slot, protocol.key_slots);
    for (const value of spec.values)
      if (value.grammar !== undefined) known(`verbs ${spec.verb}: grammar`, value.grammar, protocol.grammars);
    if (spec.repeat && spec.repeat.last > spec.values.length)
      problems.push(`verbs ${spec.verb}: repeat.last ${spec.repeat.last} is more than its values`);
  }
  for (const verb of protocol.job_core)
    if (!verbs.has(verb)) problems.push(`job_core: ${verb} is no verb file`);
  if (new Set(protocol.job_core).size !== protocol.job_core.length) problems.push("job_core: a verb twice");
  for (const [name, key] of Object.entries(protocol.derived_keys))
    for (const verb of key.verbs)
      if (!verbs.has(verb)) problems.push(`derived_keys.${name}: ${verb} is no verb file`);
  return problems;
}

/**
 * The one reader of the protocol data: parses the files, validates each against `schema.json`
 * (when given) and every cross-reference, and derives each verb's job-core membership from
 * `job_core`. Throws naming every problem found.
 */
export function parseProtocol(files: ProtocolFiles): Protocol {
  const schema = files.schema === undefined ? undefined : (JSON.parse(files.schema) as Schema);
  const defs = schema?.$defs as Record<string, Schema> | undefined;
  const problems: string[] = [];
  const parse = <T>(name: string, text: string, def: string): T => {
    const value = JSON.parse(text) as T;
    if (schema && defs) problems.push(...validate(schema, defs[def]!, value, name));
    return value;
  };
  const protocol = parse<ProtocolSpec>("protocol.json", files.protocol, "protocol");
  const verbs = new Map<string, VerbSpec>();
  for (const [file, text] of files.verbs) {
    const spec = parse<Omit<VerbSpec, "core">>(`verbs/${file}`, text, "verb");
    verbs.set(spec.verb, { ...spec, core: protocol.job_core.includes(spec.verb) });
  }
  if (schema) problems.push(...references(protocol, verbs));
  if (problems.length > 0) throw new Error(`the protocol data is inconsistent:\n  ${problems.join("\n  ")}`);
  return { protocol, verbs };
}

const LOADED = parseProtocol(readProtocolFiles());

export const PROTOCOL: ProtocolSpec = LOADED.protocol;

/** Every command described, by token. */
export const VERB_SPECS: ReadonlyMap<string, VerbSpec> = LOADED.verbs;
