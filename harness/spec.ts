/**
 * Executable checks for the verb that has no script twin (`RESCHEDULE`; declared difference D8)
 * and for `EMQ.INSTALL`, written from docs/protocol.md and nothing else: given the
 * keyspace before the call and the server time, each predicts the reply, the writes and the wake.
 * The harness holds the module to the prediction, and applies the same writes to the reference
 * side so both queues stay in step.
 */
import { canon, changes, showReply } from "./compare.js";
import type { RawDump, RawValue } from "./dump.js";
import type { Executors } from "./executors.js";
import type { DerivedKey } from "../src/keyspace.js";
import { formOf, verbSpec } from "../src/protocol.js";
import type { Command, Reply } from "./resp.js";
import {
  accepts,
  BRAND,
  BUS_DEFAULTS,
  STREAM_NODE_ENTRIES,
  emqwire,
  layoutError,
  layoutQueue,
  derivedKey,
  queueKey,
  rowKey,
  type Verb,
  valueError,
  verbOf,
  VERSION_KEY,
  WRONGTYPE,
  wrongKeys,
  wrongValues,
} from "./verbs.js";

interface Prediction {
  reply: Reply;
  /** Plain commands with the effect the verb must have (empty for a refusal). */
  writes: Command[];
  /** The wake messages published on the queue's channel, in order. */
  wakes: string[];
}

const refuse = (text: string): Prediction => ({ reply: { t: "error", v: text }, writes: [], wakes: [] });
const int = (n: number | string): Reply => ({ t: "int", v: String(n) });
const latin1 = (b: Buffer) => b.toString("latin1");

/** Native shape: numkeys is canonical decimal (at most 19 digits) and within the arguments. */
function nativeShape(verb: Verb, tail: readonly Buffer[]): Prediction | { keys: Buffer[]; values: Buffer[] } {
  const first = tail[0];
  const text = first === undefined ? "" : latin1(first);
  if (!/^(0|[1-9][0-9]{0,18})$/.test(text)) return refuse(wrongKeys(verb));
  const n = Number(text);
  if (n > tail.length - 1 || n !== verb.keys.length) return refuse(wrongKeys(verb));
  if (tail.length - 1 - n !== verb.values.length) return refuse(wrongValues(verb));
  return { keys: tail.slice(1, 1 + n), values: tail.slice(1 + n) };
}

/** The native fence on a brand value (absent = undefined). */
export function fence(brand: RawValue | undefined): string | null {
  if (brand === undefined) return emqwire(null);
  if (brand.type !== "string") return WRONGTYPE;
  return latin1(brand.value) === BRAND ? null : emqwire(brand.value);
}

function field(value: RawValue | undefined, name: string): string | undefined {
  if (value?.type !== "hash") return undefined;
  const found = value.fields.find(([f]) => latin1(f) === name);
  return found === undefined ? undefined : latin1(found[1]);
}

function member(value: RawValue | undefined, id: Buffer): boolean {
  return value?.type === "zset" && value.members.some(([m]) => m.equals(id));
}

/**
 * `EMQ.RESCHEDULE`: shape → layout → fence → values → id gate → type gate → row gate → lease
 * gate → writes (docs/protocol.md, "RESCHEDULE", "Shared gates").
 */
export function predictNative(
  verbName: "RESCHEDULE",
  tail: readonly Buffer[],
  state: RawDump,
  brand: RawValue | undefined,
  now: number,
): Prediction {
  const verb = verbOf(verbName);
  const shape = nativeShape(verb, tail);
  if ("reply" in shape) return shape;
  const { keys, values } = shape;
  const q = layoutQueue(verb, keys, values);
  if (q === null) return refuse(layoutError(verb.verb));
  const fenced = fence(brand);
  if (fenced !== null) return refuse(fenced);
  for (const [i, slot] of verb.values.entries()) {
    if (slot.grammar && !accepts(slot.grammar, latin1(values[i]!))) {
      return refuse(valueError(verb.verb, slot.name!, slot.grammar));
    }
  }
  const id = values[0]!;
  const token = latin1(values[1]!);
  if (!latin1(id).startsWith("JOB")) return refuse(`ERR EMQ.${verb.verb} id must start with JOB`);
  const active = queueKey(q, "active");
  const target = queueKey(q, "schedule");
  for (const set of [active, target]) {
    const t = state.get(latin1(set))?.type;
    if (t !== undefined && t !== "zset") return refuse(WRONGTYPE);
  }
  const row = rowKey(q, id);
  const fields = state.get(latin1(row));
  if (fields?.type !== "hash") return refuse(`ERR EMQ.${verb.verb} job not found`);
  if (field(fields, "state") !== "active" || !member(state.get(latin1(active)), id)) {
    return refuse(`ERR EMQ.${verb.verb} job is not active`);
  }
  if (field(fields, "attempts") !== token) return refuse(`ERR EMQ.${verb.verb} stale lease token`);

  const due = now + Number(latin1(values[2]!));
  const event = ["event", "delayed", "id", id, "attempt", token, "delay", values[2]!];
  const released = release(state, q, field(fields, "group"));
  return {
    reply: int(due),
    writes: [
      ["ZREM", active, id],
      ...released.writes,
      ["HSET", row, "state", "scheduled"],
      ["ZADD", target, String(due), id],
      ...busEntry(state, q, event, now),
    ],
    wakes: [...released.wakes, "0"],
  };
}

/**
 * Flow control's release when one job of group `g` (or none) leaves active (docs/protocol.md,
 * "Flow control"): the group's active count drops by one (HDEL from 1), its lowest parked id
 * goes back to pending; wake <moved>, or wake 1 when none moved and the queue has limits (its
 * meta's flag) with a concurrency. Keys of another type are passed over.
 */
function release(state: RawDump, q: Buffer, g: string | undefined): { writes: Command[]; wakes: string[] } {
  const at = (name: DerivedKey, param = "") => derivedKey(q, name, Buffer.from(param, "latin1"));
  const writes: Command[] = [];
  let moved = 0;
  if (g !== undefined && g !== "") {
    const groups = at("groups");
    const counts = state.get(latin1(groups));
    if (counts === undefined || counts.type === "hash") {
      const n = field(counts, g);
      if (n !== undefined && accepts("count", n) && Number(n) > 1)
        writes.push(["HSET", groups, g, String(Number(n) - 1)]);
      else if (n !== undefined) writes.push(["HDEL", groups, g]);
    }
    const parked = at("group", g);
    const set = state.get(latin1(parked));
    const pending = state.get(latin1(queueKey(q, "pending")));
    if (
      set?.type === "zset" &&
      set.members.length > 0 &&
      (pending === undefined || pending.type === "zset")
    ) {
      const [first, score] = [...set.members].sort(
        ([a, x], [b, y]) => Number(x) - Number(y) || Buffer.compare(a, b),
      )[0]!;
      writes.push(["ZADD", queueKey(q, "pending"), score, first], ["ZREM", parked, first]);
      if (set.members.length === 1 && state.get(latin1(at("parked")))?.type === "zset") {
        writes.push(["ZREM", at("parked"), g]);
      }
      moved = 1;
    }
  }
  if (moved > 0) return { writes, wakes: [String(moved)] };
  if (field(state.get(latin1(queueKey(q, "meta"))), "limits") !== "1") return { writes, wakes: [] };
  const limit = field(state.get(latin1(at("limits"))), "concurrency");
  return { writes, wakes: limit !== undefined && accepts("count", limit) && limit !== "0" ? ["1"] : [] };
}

/**
 * The event bus's `XADD` of one entry at server time `now` (docs/protocol.md, "The event bus"):
 * `events_maxlen` read from the queue's `meta` (a count, else the default; a `meta` that is not a
 * hash reads as the defaults); none when it is `0` or the events key holds another type. The id
 * is the one the server makes at `now` (so the same write can be applied elsewhere later).
 */
function busEntry(state: RawDump, q: Buffer, fields: (string | Buffer)[], now: number): Command[] {
  const stored = field(state.get(latin1(queueKey(q, "meta"))), "events_maxlen");
  const maxlen = stored !== undefined && accepts("count", stored) ? stored : String(BUS_DEFAULTS.maxlen);
  const events = derivedKey(q, "events");
  const current = state.get(latin1(events));
  if (maxlen === "0" || (current !== undefined && current.type !== "stream")) return [];
  return [["XADD", events, "MAXLEN", "~", maxlen, nextId(current?.last, now), ...fields]];
}

/** The id `XADD … *` makes at server time `now` after the stream's last id. */
function nextId(last: string | undefined, now: number): string {
  const [ms, seq] = (last ?? "0-0").split("-").map(Number) as [number, number];
  return now > ms ? `${now}-0` : `${ms}-${seq + 1}`;
}

/** `EMQ.INSTALL 1 <version>` (the brand key) (docs/protocol.md, "EMQ.INSTALL"). */
function predictInstall(tail: readonly Buffer[], brand: RawValue | undefined): Prediction {
  const verb: Verb = {
    verb: "INSTALL",
    script: null,
    form: formOf(verbSpec("INSTALL")),
    keys: ["meta"],
    anchor: 0,
    values: [],
    times: [],
    admission: true,
  };
  const shape = nativeShape(verb, tail);
  if ("reply" in shape) return shape;
  if (latin1(shape.keys[0]!) !== VERSION_KEY) return refuse(layoutError("INSTALL"));
  if (brand === undefined) return { reply: int(1), writes: [["SET", VERSION_KEY, BRAND]], wakes: [] };
  if (brand.type !== "string") return refuse(WRONGTYPE);
  if (latin1(brand.value) === BRAND) return { reply: int(0), writes: [], wakes: [] };
  return refuse(emqwire(brand.value));
}

/**
 * `EMQ.RESCHEDULE` held to {@link predictNative}: the server time in `window` at which the
 * prediction matches the native reply and keyspace (`state.before` → `state.after`), or, when
 * none does, the window's first with what differed there.
 */
export function fitNative(
  verbName: "RESCHEDULE",
  tail: readonly Buffer[],
  state: { before: RawDump; after: RawDump },
  brand: RawValue | undefined,
  window: { lo: number; hi: number },
  native: Reply,
): { now: number; problems: string[] } {
  let first: { now: number; problems: string[] } | null = null;
  for (let t = window.lo; t <= window.hi; t++) {
    const p = predictNative(verbName, tail, state.before, brand, t);
    const problems = [
      ...(canon(p.reply) === canon(native)
        ? []
        : [`reply: expected ${showReply(p.reply)}, native ${showReply(native)}`]),
      ...changes(applyWrites(state.before, p.writes, t), state.after, ["predicted", "native"]).map(
        (d) => `keyspace vs the executable check: ${d}`,
      ),
    ];
    if (problems.length === 0) return { now: t, problems };
    first ??= { now: t, problems };
  }
  return first ?? { now: window.lo, problems: [] };
}

/**
 * `EMQ.INSTALL` with the tail `t` on the scratch server branded `brand`, held to
 * {@link predictInstall}: the problems found (empty when it holds). The harness's brand is read
 * back afterwards.
 */
export async function checkInstall(
  ex: Executors,
  brand: string | null | "hash",
  t: string[],
): Promise<string[]> {
  await ex.setBrand(brand);
  const key = [Buffer.from(VERSION_KEY)];
  const before = await ex.scratch.keys.dumpQueues([], key);
  const { reply } = await ex.alone(["EMQ.INSTALL", ...t]);
  const after = await ex.scratch.keys.dumpQueues([], key);
  await ex.readBrand();
  const p = predictInstall(
    t.map((x) => Buffer.from(x)),
    before.get(VERSION_KEY),
  );
  return [
    ...(canon(p.reply) === canon(reply)
      ? []
      : [`reply: expected ${showReply(p.reply)}, got ${showReply(reply)}`]),
    ...changes(applyWrites(before, p.writes), after, ["predicted", "native"]).map(
      (d) => `brand vs the executable check: ${d}`,
    ),
  ];
}

/* ------------------------------------------------------------------ applying writes to a dump */

const asText = (arg: Command[number]) => (Buffer.isBuffer(arg) ? latin1(arg) : String(arg));
const asBuf = (arg: Command[number]) => (Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg), "latin1"));

/**
 * The state after `writes` (ZADD, ZREM, HSET, HDEL, DEL, SET with one member/field set each, and
 * `XADD <key> MAXLEN ~ <n> * <fields…>` at server time `now`).
 */
export function applyWrites(state: RawDump, writes: readonly Command[], now = 0): RawDump {
  const out: RawDump = new Map(state);
  for (const [cmd, keyArg, ...rest] of writes) {
    const key = asText(keyArg!);
    const current = out.get(key);
    switch (String(cmd).toUpperCase()) {
      case "DEL":
        out.delete(key);
        break;
      case "SET":
        out.set(key, { type: "string", value: asBuf(rest[0]!) });
        break;
      case "ZADD": {
        const members = current?.type === "zset" ? [...current.members] : [];
        const m = asBuf(rest[1]!);
        const score = String(Number(asText(rest[0]!)));
        const kept = members.filter(([x]) => !x.equals(m));
        out.set(key, { type: "zset", members: [...kept, [m, score]] });
        break;
      }
      case "ZREM": {
        if (current?.type !== "zset") break;
        const m = asBuf(rest[0]!);
        const members = current.members.filter(([x]) => !x.equals(m));
        if (members.length === 0) out.delete(key);
        else out.set(key, { type: "zset", members });
        break;
      }
      case "HSET": {
        const fields = current?.type === "hash" ? [...current.fields] : [];
        for (let i = 0; i + 1 < rest.length; i += 2) {
          const f = asBuf(rest[i]!);
          const at = fields.findIndex(([x]) => x.equals(f));
          const entry: [Buffer, Buffer] = [f, asBuf(rest[i + 1]!)];
          if (at >= 0) fields[at] = entry;
          else fields.push(entry);
        }
        out.set(key, { type: "hash", fields });
        break;
      }
      case "HDEL": {
        if (current?.type !== "hash") break;
        const fields = current.fields.filter(([x]) => !rest.some((f) => x.equals(asBuf(f))));
        if (fields.length === 0) out.delete(key);
        else out.set(key, { type: "hash", fields });
        break;
      }
      case "XADD": {
        if (current !== undefined && current.type !== "stream") break;
        const [, , maxlen, id, ...fields] = rest.map(asBuf);
        const at = latin1(id!) === "*" ? nextId(current?.last, now) : latin1(id!);
        out.set(key, xadd(current, Number(latin1(maxlen!)), at, fields));
        break;
      }
      default:
        throw new Error(`applyWrites: ${String(cmd)} is not modelled`);
    }
  }
  return out;
}

/**
 * `XADD … MAXLEN ~ <maxlen> <id> <fields…>` on a stream (or none), then the approximate trim —
 * whole nodes from the head,
 * while what is left keeps at least `maxlen` entries, at most 100 nodes' worth — with the
 * harness's nodes of {@link STREAM_NODE_ENTRIES} entries, counted from the stream's first entry
 * ever (every trim removes whole nodes).
 */
function xadd(
  current: Extract<RawValue, { type: "stream" }> | undefined,
  maxlen: number,
  id: string,
  fields: Buffer[],
): RawValue {
  const added = Number(current?.added ?? 0) + 1;
  let entries: [string, Buffer[]][] = [...(current?.entries ?? []), [id, fields]];
  const limit = 100 * STREAM_NODE_ENTRIES;
  for (let deleted = 0; entries.length > maxlen; ) {
    const first = added - entries.length;
    const inNode = Math.min(
      entries.length,
      (Math.floor(first / STREAM_NODE_ENTRIES) + 1) * STREAM_NODE_ENTRIES - first,
    );
    if (deleted + inNode > limit || entries.length - inNode < maxlen) break;
    entries = entries.slice(inNode);
    deleted += inNode;
  }
  return { type: "stream", entries, added: String(added), last: id };
}
