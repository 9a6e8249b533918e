/**
 * What the stand compares, node A (wire 4) against node B (wire 6), and the result it reports.
 * Each compared item is a marked row: the lines MONITOR saw (the transition checked against its form in the harness's verb
 * table), the connectors' replies, and the keyspaces as the harness compares them
 * (harness/compare.ts: time scores matched to their call's window, B's `lease_epoch` checked).
 */
import { inWindow, normalize, type NormDump, type Window } from "../harness/compare.js";
import type { RawDump } from "../harness/dump.js";
import { layoutQueue, shapeOf, type Verb } from "../harness/verbs.js";
import { scriptFor, type ClaimedJob, type EnqueueResult } from "../src/protocol.js";
import type { MonitorEntry } from "../test/support/monitor.js";

export type Side = "a" | "b";
export const SIDES: readonly Side[] = ["a", "b"];
type Mark = "equal" | "declared" | "unexpected";

/** One compared item: a MONITOR line, a reply field, a key's field or member, or a finding. */
export interface Row {
  what: string;
  key?: string;
  type?: string;
  field?: string;
  a: string | null;
  b: string | null;
  mark: Mark;
  note: string;
}

/** The lines one node's MONITOR saw during one step. */
interface MonitorCapture {
  /** Every line the connector's socket sent, as arguments. */
  sent: string[][];
  /** The transition lines: `sent` without the connector's one-time NOSCRIPT reload. */
  transition: string[][];
  /** True when the first EVALSHA was answered NOSCRIPT and the connector loaded the source. */
  reloaded: boolean;
}

const lower = (s: string | undefined) => (s ?? "").toLowerCase();
const isLoad = (args: readonly string[] | undefined) =>
  lower(args?.[0]) === "script" && lower(args?.[1]) === "load";

/** The lines of `entries` that the client at `addr` sent. */
export function capture(entries: readonly MonitorEntry[], addr: string): MonitorCapture {
  const sent = entries.filter((e) => e.client === addr).map((e) => e.args);
  // An EVALSHA answered NOSCRIPT is followed by SCRIPT LOAD and the same line again.
  const reloaded = sent.some((args, i) => lower(args[0]) === "evalsha" && isLoad(sent[i + 1]));
  const transition = sent.filter(
    (args, i) => !isLoad(args) && !(lower(args[0]) === "evalsha" && isLoad(sent[i + 1])),
  );
  return { sent, transition, reloaded };
}

/** How many arguments make a line's head: `EVALSHA <sha>`, else the command. */
export const headLength = (args: readonly string[]) => (lower(args[0]) === "evalsha" ? 2 : 1);

/**
 * Pairs the transition lines: host-step lines must be the same on both nodes; exactly one pair is
 * the transition, `EVALSHA <sha of the verb's script>` on A and `EMQ.<VERB>` on B, with the same
 * tail, and that tail must be the verb's form for `queue` (shape and layout, harness/verbs.ts).
 */
export function compareMonitor(verb: Verb, ca: MonitorCapture, cb: MonitorCapture, queue: string): Row[] {
  const rows: Row[] = [];
  const native = `emq.${lower(verb.verb)}`;
  const sha = scriptFor(verb.verb).sha1;
  for (let i = 0; i < Math.max(ca.transition.length, cb.transition.length); i++) {
    const a = ca.transition[i] ?? [];
    const b = cb.transition[i] ?? [];
    const [tailA, tailB] = [a.slice(headLength(a)), b.slice(headLength(b))];
    const problems: string[] = [];
    const isVerb = lower(b[0]) === native;
    if (isVerb && (lower(a[0]) !== "evalsha" || a[1] !== sha))
      problems.push(`A did not send EVALSHA ${sha.slice(0, 8)}… (${verb.script}.lua)`);
    if (!isVerb && lower(a[0]) !== lower(b[0])) problems.push("commands differ");
    if (tailA.join("\0") !== tailB.join("\0")) problems.push("tails differ");
    if (isVerb) {
      const shape = shapeOf(
        verb,
        tailB.map((s) => Buffer.from(s, "latin1")),
      );
      const name = shape.kind === "ok" ? layoutQueue(verb, shape.keys, shape.values) : null;
      if (name?.toString("latin1") !== queue)
        problems.push(`the tail is not ${verb.form} for queue ${queue}`);
    }
    const note = isVerb ? `= same tail after the head: ${verb.form}` : "= same line (host step)";
    rows.push(row(`monitor line ${i + 1}`, a.join(" "), b.join(" "), problems, note));
  }
  const verbs = cb.transition.filter((b) => lower(b[0]) === native).length;
  if (verbs !== 1)
    rows.push(row("monitor lines", null, null, [`B sent EMQ.${verb.verb} ${verbs} times`], ""));
  return rows;
}

function row(what: string, a: string | null, b: string | null, problems: string[], note: string): Row {
  return { what, a, b, mark: problems.length ? "unexpected" : "equal", note: problems.join("; ") || note };
}

/** A connector's reply as plain data (the payload as latin1 text). */
export function describeReply(reply: EnqueueResult | ClaimedJob | null): Record<string, unknown> | null {
  if (reply === null) return null;
  if ("duplicate" in reply) return { id: reply.id, duplicate: reply.duplicate };
  const { id, attempts, deadline } = reply;
  return { id, payload: reply.payload.toString("latin1"), attempts, deadline };
}

/** Field by field; a time in the reply (`deadline`) must be now + `offset` within its node's window. */
export function compareReplies(
  reply: Record<Side, Record<string, unknown> | null>,
  windows: Record<Side, Window>,
  offset: number | undefined,
): Row[] {
  const fields = [...new Set([...Object.keys(reply.a ?? {}), ...Object.keys(reply.b ?? {})])];
  if (reply.a === null || reply.b === null) fields.splice(0, fields.length, "");
  return fields.map((field) => {
    const [a, b] = SIDES.map((s) => JSON.stringify(field ? reply[s]?.[field] : reply[s]) ?? null);
    const timed = field === "deadline" && offset !== undefined;
    const out: Row = { what: `reply ${field}`.trim(), field, a: a!, b: b!, mark: "equal", note: "=" };
    if (timed && SIDES.every((s) => inWindow(Number(reply[s]?.[field]), offset, windows[s]))) {
      if (a !== b) Object.assign(out, { mark: "declared", note: `~ now + ${offset}, each node's own clock` });
    } else if (a !== b || timed) {
      Object.assign(out, {
        mark: "unexpected",
        note: timed ? "not now + lease on its node" : "values differ",
      });
    }
    return out;
  });
}

export interface KeyspaceContext {
  queue: string;
  /** The row the step leased (its `lease_epoch` must be B's run_id), if any. */
  leased: string | null;
  runIdB: string;
  windows: Record<Side, Window>;
  /** The time scores the step may write: set → offset (ms). */
  offsets: Partial<Record<string, number>>;
  /**
   * Each node's keyspace after the step before, raw and normalised: what the step left (a time
   * score, an events entry) keeps that step's token.
   */
  prev?: Record<Side, { raw: RawDump; norm: NormDump }>;
}

/**
 * Each node's keyspace normalised as the harness normalises it: time scores and the leased row's
 * `processed_on` within their node's window, B's `lease_epoch` = its run_id on that row, masked.
 */
function normalizeBoth(rawA: RawDump, rawB: RawDump, ctx: KeyspaceContext) {
  const queues = [{ physical: ctx.queue, logical: ctx.queue }];
  const leased = ctx.leased ? [`emq:{${ctx.queue}}:job:${ctx.leased}`] : [];
  const epoch = { runId: ctx.runIdB, leasedRows: leased };
  const norm = (raw: RawDump, side: Side) =>
    normalize(raw, {
      queues,
      step: ctx.prev ? 2 : 1,
      window: ctx.windows[side],
      offsets: ctx.offsets,
      prev: ctx.prev?.[side],
      leased,
      ...(side === "b" ? { epoch } : {}),
    });
  return { a: norm(rawA, "a"), b: norm(rawB, "b") };
}

/** Each node's keyspace after a step, raw and normalised as `compareKeyspaces` normalised it. */
export function normalised(rawA: RawDump, rawB: RawDump, ctx: KeyspaceContext): Record<Side, NormDump> {
  const { a, b } = normalizeBoth(rawA, rawB, ctx);
  return { a: a.norm, b: b.norm };
}

/** A dump as written (no tokens, nothing masked): key → type and sorted entries. */
export const literal = (raw: RawDump): NormDump => normalize(raw, { queues: [], step: 0 }).norm;

/**
 * Key by key, field by field: equal as written; declared when equal once normalised as the
 * harness normalises (time scores and the leased row's `processed_on` within their node's window;
 * B's `lease_epoch` = its run_id on the leased row, then masked); unexpected otherwise, and for
 * every issue normalising found.
 */
export function compareKeyspaces(rawA: RawDump, rawB: RawDump, ctx: KeyspaceContext): Row[] {
  const { a: na, b: nb } = normalizeBoth(rawA, rawB, ctx);
  const [la, lb] = [literal(rawA), literal(rawB)];
  const rows: Row[] = [];
  for (const key of [...new Set([...la.keys(), ...lb.keys()])].sort()) {
    const [ea, eb] = [la.get(key), lb.get(key)];
    const type = (ea ?? eb)!.type;
    if (!ea || !eb || ea.type !== eb.type) {
      const note = !ea || !eb ? `key only on ${ea ? "A" : "B"}` : "types differ";
      rows.push({ what: key, key, type, a: ea?.type ?? null, b: eb?.type ?? null, mark: "unexpected", note });
      continue;
    }
    const [ma, mb, xa, xb] = [ea, eb, na.norm.get(key), nb.norm.get(key)].map((v) => new Map(v?.entries));
    for (const field of [...new Set([...ma!.keys(), ...mb!.keys()])].sort()) {
      const [a, b] = [ma!.get(field) ?? null, mb!.get(field) ?? null];
      const declared =
        field === "lease_epoch"
          ? "≠ lease_epoch (declared: native claim adds run_id; = B's run_id)"
          : type === "stream"
            ? "~ entry id: its node's time (the same entry, fields and order)"
            : field === "processed_on"
              ? `~ processed_on: B − A = ${Number(b) - Number(a)} ms (each lease read its own node's clock)`
              : `~ deadline: B − A = ${Number(b) - Number(a)} ms (each claim read its own node's clock)`;
      const differ = a === null || b === null ? `only on ${a === null ? "B" : "A"}` : "values differ";
      const [mark, note]: [Mark, string] =
        xa!.get(field) !== xb!.get(field)
          ? ["unexpected", differ]
          : a === b
            ? ["equal", "="]
            : ["declared", declared];
      rows.push({ what: `${key} ${field}`.trim(), key, type, field, a, b, mark, note });
    }
  }
  for (const issue of [...na.issues, ...nb.issues])
    rows.push({ what: "keyspace", a: null, b: null, mark: "unexpected", note: issue });
  return rows;
}

/* ------------------------------------------------------------------ the result */

/** One key as written: its type and its entries (field → value, member → score), sorted. */
export interface KeyEntry {
  key: string;
  type: string;
  entries: [string, string][];
}

export interface NodeInfo {
  label: string;
  brandedBy: string;
  host: string;
  port: number;
  wire: 4 | 6;
  module: boolean;
  brand: string;
  runId: string;
}

export interface StepResult {
  name: "enqueue" | "claim";
  call: string;
  monitor: Record<Side, MonitorCapture>;
  reply: Record<Side, Record<string, unknown> | null>;
  keyspace: Record<Side, KeyEntry[]>;
  rows: Row[];
}

export interface StandResult {
  ok: boolean;
  verdict: string;
  queue: string;
  id: string;
  leaseMs: number;
  payload: string;
  nodes: Record<Side, NodeInfo>;
  steps: StepResult[];
  unexpected: string[];
}
