/**
 * The wire contract as data: `protocol/verbs/<verb>.json` (one file per command) and
 * `protocol/protocol.json`, read once at load. The host's verb table, the scripts registry, the
 * harness's forms, the module's registration (its `build.rs`) and the verb tables of
 * `docs/protocol.md` are all made from these files; nothing restates them by hand.
 */
import { readdirSync, readFileSync } from "node:fs";
import { SRC } from "../here.js";

/** A key slot: a queue key type, the job row, the queue's base, or the brand key. */
export type KeySlot =
  | "row"
  | "pending"
  | "active"
  | "schedule"
  | "done"
  | "dead"
  | "meta"
  | "waiting"
  | "outbox"
  | "base"
  | "repeats"
  | "version";
/**
 * Value grammars: numbers (decimal text); text: `trace` (a W3C trace context or empty), `label`
 * (empty or 1–255 bytes, no control byte), `parent` (empty or queue NUL id), `name` (1–255 bytes,
 * no control byte), and the size bounds of any bytes: `payload`, `result`, `progress`, `line`,
 * `error` (each at most its `max_bytes`).
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
  | "error";
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
  /** Time scores the verb writes: the set, and the value its offset comes from (null = now). */
  times: { set: TimeSet; offset: string | null }[];
  /** A time in the reply: the array index (null = the reply itself) and its offset's value. */
  reply_time?: { index: number | null; offset: string };
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
  key_slots: Record<KeySlot, string>;
  key_flags: string[];
}

/** The protocol folder: `protocol/` beside `src/` (and beside `dist/src/` in the package). */
const folder = new URL("../protocol/", SRC);

function readJson<T>(url: URL): T {
  return JSON.parse(readFileSync(url, "utf8")) as T;
}

export const PROTOCOL: ProtocolSpec = readJson(new URL("protocol.json", folder));

/** Every command described, by token. */
export const VERB_SPECS: ReadonlyMap<string, VerbSpec> = new Map(
  readdirSync(new URL("verbs/", folder))
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => {
      const spec = readJson<Omit<VerbSpec, "core">>(new URL(`verbs/${file}`, folder));
      return [spec.verb, { ...spec, core: PROTOCOL.job_core.includes(spec.verb) }] as const;
    }),
);
