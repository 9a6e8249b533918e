/**
 * What the harness compares, as pure functions: a queue's keyspace dump (every key found under its
 * hashtag, type by type), normalised so the two sides can be compared byte for byte — the queue
 * name taken out of key names, time scores and stream entry ids replaced by tokens once they are
 * matched to the window of server time around their call (a row's `processed_on` as well), the
 * declared `lease_epoch` checked and masked — and typed replies rendered as canonical text.
 */
import type { RawDump, RawValue } from "./dump.js";
import type { Reply } from "./resp.js";
import { TIME_SETS, type TimeSet } from "./verbs.js";
import { queueKey as keyText } from "../src/keyspace.js";

/** A normalised value: its type and its entries as exact text (bytes as latin1), sorted. */
interface NormValue {
  type: string;
  entries: [string, string][];
}
export type NormDump = Map<string, NormValue>;

/** Server time around a call, in ms, both ends inclusive (one instant in MULTI/EXEC). */
export interface Window {
  lo: number;
  hi: number;
}

export interface QueueName {
  /** The queue name on this side (latin1). */
  physical: string;
  /** The name it is compared under. */
  logical: string;
}

interface NormOptions {
  queues: readonly QueueName[];
  /** The step's number: time tokens name the step that wrote the score. */
  step: number;
  /** This side's dump before the step (raw and normalised), for scores the step left as they were. */
  prev?: { raw: RawDump; norm: NormDump } | undefined;
  /** The call's window; absent for plain writes (seeds), whose scores are kept literally. */
  window?: Window | undefined;
  /** The time scores this call may write: set → offset in ms (score = now + offset). */
  offsets?: Partial<Record<TimeSet, number>> | undefined;
  /** Sets whose new scores are kept literally (a time carried from an earlier step). */
  carried?: readonly TimeSet[] | undefined;
  /**
   * The call's own values: a new score equal to one of them is a time the caller gave (`FIRE`'s
   * instant in `schedule`), kept literally and so compared exactly, not against the window.
   */
  given?: ReadonlySet<string> | undefined;
  /** Native side: `lease_epoch` must be the run_id (then it is masked), on every leased row. */
  epoch?: { runId: string; leasedRows: readonly string[] } | undefined;
  /**
   * The rows this call leased on this side (raw keys): only they may take a new `processed_on`,
   * the call's now. Absent: any row may (its value still matched to the window).
   */
  leased?: readonly string[] | undefined;
}

interface Normalized {
  norm: NormDump;
  /** What failed a check while normalising (a time score out of its window, a wrong epoch). */
  issues: string[];
}

const latin1 = (b: Buffer) => b.toString("latin1");

/** Shows bytes readably (JSON-escaped), cut after `max` characters. */
export function show(text: string, max = 120): string {
  const json = JSON.stringify(text);
  return json.length <= max ? json : `${json.slice(0, max)}…(${text.length} bytes)`;
}

/** Replaces a leading `emq:{<physical>}:` by `emq:{<logical>}:`; other keys stay as they are. */
function logicalKey(key: string, queues: readonly QueueName[]): string {
  for (const q of queues) {
    const prefix = keyText(q.physical, "");
    if (key.startsWith(prefix)) return `${keyText(q.logical, "")}${key.slice(prefix.length)}`;
  }
  return key;
}

function timeSetOf(normKey: string, queues: readonly QueueName[]): TimeSet | null {
  for (const q of queues) {
    for (const set of TIME_SETS) if (normKey === keyText(q.logical, set)) return set;
  }
  return null;
}

function isRow(normKey: string, queues: readonly QueueName[]): boolean {
  return queues.some((q) => normKey.startsWith(keyText(q.logical, "job:")));
}

/** The token of a time written at `step`: `T<step>` plus the offset. */
function timeToken(step: number, offset: number): string {
  return offset === 0 ? `T${step}` : `T${step}+${offset}`;
}

/** A time value's token when `value - offset` lies in the window, else null. */
export function inWindow(value: number, offset: number, window: Window): boolean {
  const now = value - offset;
  return Number.isFinite(now) && now >= window.lo && now <= window.hi;
}

function scoreToken(
  set: TimeSet,
  rawKey: string,
  normKey: string,
  member: string,
  score: string,
  o: NormOptions,
  issues: string[],
): string {
  // A score the step left as it was keeps its token (members sorted by time can tie across steps).
  const before = o.prev?.raw.get(rawKey);
  if (before?.type === "zset" && before.members.some(([m, s]) => latin1(m) === member && s === score)) {
    const token = o.prev?.norm.get(normKey)?.entries.find(([m]) => m === member)?.[1];
    if (token !== undefined) return token;
  }
  const offset = o.offsets?.[set];
  if (o.window && offset !== undefined && inWindow(Number(score), offset, o.window)) {
    return timeToken(o.step, offset);
  }
  if (o.window === undefined || o.given?.has(score) || o.carried?.includes(set)) return `=${score}`;
  const expect = offset === undefined ? "no time score in this set" : `now+${offset}`;
  issues.push(
    `${normKey} ${show(member)}: time score ${score} is not ${expect} for now in [${o.window.lo}, ${o.window.hi}]`,
  );
  return `?${score}`;
}

const byFirst = (a: [string, string], b: [string, string]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

export function normalize(raw: RawDump, o: NormOptions): Normalized {
  const norm: NormDump = new Map();
  const issues: string[] = [];
  for (const [key, value] of raw) {
    const normKey = logicalKey(key, o.queues);
    let entries: [string, string][];
    switch (value.type) {
      case "string":
        entries = [["", latin1(value.value)]];
        break;
      case "hash":
        entries = value.fields.map(([f, v]) => [latin1(f), latin1(v)]);
        if (o.epoch && isRow(normKey, o.queues)) entries = maskEpoch(normKey, entries, o.epoch, issues);
        if (isRow(normKey, o.queues)) entries = leaseTime(key, normKey, entries, o, issues);
        break;
      case "zset": {
        const set = timeSetOf(normKey, o.queues);
        entries = value.members.map(([m, score]) => {
          const member = latin1(m);
          if (set === null) return [member, score];
          return [member, scoreToken(set, key, normKey, member, score, o, issues)];
        });
        break;
      }
      case "list":
        entries = value.items.map((item, i) => [String(i), latin1(item)]);
        break;
      case "set":
        entries = value.members.map((m) => [latin1(m), ""]);
        break;
      case "stream":
        entries = streamEntries(key, normKey, value, o, issues);
        break;
      default:
        entries = [];
    }
    const type = value.type === "other" ? value.name : value.type;
    norm.set(normKey, { type, entries: ordered(value.type) ? entries : entries.sort(byFirst) });
  }
  if (o.epoch) {
    for (const row of o.epoch.leasedRows) {
      const normRow = logicalKey(row, o.queues);
      const r = raw.get(row);
      const epoch = r?.type === "hash" ? r.fields.find(([f]) => latin1(f) === "lease_epoch")?.[1] : undefined;
      if (epoch === undefined || latin1(epoch) !== o.epoch.runId) {
        issues.push(
          `D1: ${normRow} was leased by this call but lease_epoch is ${epoch === undefined ? "absent" : show(latin1(epoch))}, expected the run_id ${o.epoch.runId}`,
        );
      }
    }
  }
  return { norm, issues };
}

/** Lists and streams are compared in order; every other type by its sorted entries. */
const ordered = (type: string) => type === "list" || type === "stream";

/**
 * A stream's entries in order, `[<index>, "<id token> <fields as JSON>"]`, then `["added",
 * <entries-added>]`. An entry id is server time (`<ms>-<seq>`): an entry the step left keeps its
 * earlier token; a new one must have its `<ms>` in the call's window and becomes `T<step>` (its
 * sequence number masked: the two sides' streams are separate, so their sequences differ when
 * their milliseconds do). Without a window (seeds, plain reads) ids are kept literally.
 */
function streamEntries(
  rawKey: string,
  normKey: string,
  value: Extract<RawValue, { type: "stream" }>,
  o: NormOptions,
  issues: string[],
): [string, string][] {
  const before = o.prev?.raw.get(rawKey);
  const earlier = o.prev?.norm.get(normKey)?.entries;
  const tokenOf = (id: string): string => {
    if (before?.type === "stream" && earlier) {
      const at = before.entries.findIndex(([x]) => x === id);
      const token = at >= 0 ? earlier[at]?.[1].split(" ", 1)[0] : undefined;
      if (token !== undefined) return token;
    }
    if (o.window === undefined) return `=${id}`;
    const ms = Number(id.split("-", 1)[0]);
    if (inWindow(ms, 0, o.window)) return `T${o.step}`;
    issues.push(`${normKey}: entry id ${id} is not of a now in [${o.window.lo}, ${o.window.hi}]`);
    return `?${id}`;
  };
  const entries = value.entries.map(([id, fields], i): [string, string] => [
    String(i),
    `${tokenOf(id)} ${JSON.stringify(fields.map(latin1))}`,
  ]);
  return [...entries, ["added", value.added]];
}

/** D1: a row's `lease_epoch` must be the run_id; it is then masked (the scripts write none). */
function maskEpoch(
  normKey: string,
  entries: [string, string][],
  epoch: { runId: string },
  issues: string[],
): [string, string][] {
  return entries.filter(([field, value]) => {
    if (field !== "lease_epoch") return true;
    if (value === epoch.runId) return false;
    issues.push(`D1: ${normKey} lease_epoch is ${show(value)}, expected the run_id ${epoch.runId}`);
    return true;
  });
}

/** The row field a lease writes with the call's now (docs/protocol.md, "The job row"). */
const PROCESSED_ON = "processed_on";

/**
 * A row's `processed_on` (server time, like a time score): a value the step left as it was keeps
 * its token; a new one, on a row this call leased, must be a now in the call's window and becomes
 * `T<step>`. Without a window (seeds, plain reads) a new value is kept literally.
 */
function leaseTime(
  rawKey: string,
  normKey: string,
  entries: [string, string][],
  o: NormOptions,
  issues: string[],
): [string, string][] {
  return entries.map(([field, value]): [string, string] => {
    if (field !== PROCESSED_ON) return [field, value];
    const before = o.prev?.raw.get(rawKey);
    const kept =
      before?.type === "hash" && before.fields.some(([f, v]) => latin1(f) === field && latin1(v) === value);
    if (kept) {
      const token = o.prev?.norm.get(normKey)?.entries.find(([f]) => f === field)?.[1];
      if (token !== undefined) return [field, token];
    }
    if (o.window === undefined) return [field, `=${value}`];
    const leased = o.leased === undefined || o.leased.includes(rawKey);
    if (leased && /^[0-9]+$/.test(value) && inWindow(Number(value), 0, o.window))
      return [field, `T${o.step}`];
    issues.push(
      leased
        ? `${normKey} ${PROCESSED_ON} ${show(value)} is not a now in [${o.window.lo}, ${o.window.hi}]`
        : `${normKey} ${PROCESSED_ON} became ${show(value)} on a row this call did not lease`,
    );
    return [field, `?${value}`];
  });
}

/** Every difference between two normalised dumps, readable; empty when they are equal. */
export function diffDumps(
  a: NormDump,
  b: NormDump,
  labels: [string, string] = ["script", "native"],
): string[] {
  const out: string[] = [];
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
  for (const key of keys) {
    const x = a.get(key);
    const y = b.get(key);
    if (x === undefined || y === undefined) {
      out.push(`${key}: only on the ${x ? labels[0] : labels[1]} side (${(x ?? y)!.type})`);
      continue;
    }
    if (x.type !== y.type) {
      out.push(`${key}: type ${x.type} (${labels[0]}) vs ${y.type} (${labels[1]})`);
      continue;
    }
    const xs = new Map(x.entries);
    const ys = new Map(y.entries);
    if (x.type === "list" && JSON.stringify(x.entries) !== JSON.stringify(y.entries)) {
      out.push(`${key}: list ${show(JSON.stringify(x.entries))} vs ${show(JSON.stringify(y.entries))}`);
      continue;
    }
    if (x.type === "stream" && JSON.stringify(x.entries) !== JSON.stringify(y.entries)) {
      out.push(...streamDiff(key, x.entries, y.entries, labels));
      continue;
    }
    for (const field of [...new Set([...xs.keys(), ...ys.keys()])].sort()) {
      const u = xs.get(field);
      const v = ys.get(field);
      if (u === v) continue;
      const what = x.type === "zset" ? "member" : x.type === "hash" ? "field" : "value";
      const render = (s: string | undefined) => (s === undefined ? "absent" : show(s));
      out.push(`${key} ${what} ${show(field, 60)}: ${labels[0]} ${render(u)} vs ${labels[1]} ${render(v)}`);
    }
  }
  return out;
}

/** Where two streams' normalised entries part: the first entry that differs, and the counts. */
function streamDiff(
  key: string,
  a: [string, string][],
  b: [string, string][],
  labels: [string, string],
): string[] {
  const at = a.findIndex(([, v], i) => b[i]?.[1] !== v);
  const i = at === -1 ? a.length : at;
  const render = (e: [string, string] | undefined) =>
    e === undefined ? "none" : show(`${e[0]}: ${e[1]}`, 160);
  return [
    `${key} stream (${a.length - 1} vs ${b.length - 1} entries) differs at entry ${i}: ${labels[0]} ${render(a[i])} vs ${labels[1]} ${render(b[i])}`,
  ];
}

/** Differences between two dumps of the same side ("nothing written", predicted vs actual). */
export function changes(
  before: RawDump,
  after: RawDump,
  labels: [string, string] = ["before", "after"],
): string[] {
  const plain = (raw: RawDump) => normalize(raw, { queues: [], step: 0 }).norm;
  return diffDumps(plain(before), plain(after), labels);
}

/* ------------------------------------------------------------------ replies */

/** A typed reply as canonical text: `:1`, `+OK`, `-ERR …`, `"bytes"`, `nil`, `*nil`, `[…]`. */
export function canon(reply: Reply): string {
  switch (reply.t) {
    case "int":
      return `:${reply.v}`;
    case "status":
      return `+${reply.v}`;
    case "error":
      return `-${reply.v}`;
    case "bulk":
      return JSON.stringify(reply.v.toString("latin1"));
    case "nil":
      return "nil";
    case "nilarray":
      return "*nil";
    case "array":
      return `[${reply.v.map(canon).join(", ")}]`;
  }
}

/** `canon`, cut for messages. */
export function showReply(reply: Reply, max = 160): string {
  const text = canon(reply);
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`;
}

/**
 * Replaces a time in a reply (an integer at `index`, or the reply itself when `index` is null)
 * by its token when it is now + offset for a now in the window; otherwise reports it.
 */
export function tokenizeReply(
  reply: Reply,
  at: { index: number | null; offset: number },
  window: Window,
  step: number,
  issues: string[],
): Reply {
  const swap = (r: Reply): Reply => {
    if (r.t !== "int") return r;
    if (inWindow(Number(r.v), at.offset, window)) return { t: "int", v: timeToken(step, at.offset) };
    issues.push(`reply time ${r.v} is not now+${at.offset} for now in [${window.lo}, ${window.hi}]`);
    return { t: "int", v: `?${r.v}` };
  };
  if (at.index === null) return swap(reply);
  if (reply.t !== "array" || reply.v.length <= at.index) return reply;
  return { t: "array", v: reply.v.map((r, i) => (i === at.index ? swap(r) : r)) };
}
