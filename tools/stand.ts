/**
 * The stand: one transition, run twice. Starts two embedded nodes — A plain (the scripts' node,
 * branded by a wire-4 connector) and B with the native module (branded by EMQ.INSTALL) — watches
 * each with MONITOR, sends the same enqueue + claim through a wire-4 connector to A and a wire-6
 * connector to B, and prints what each node received, what each connector returned and the keys
 * each node holds under the queue's hashtag. Every difference is either declared (lease_epoch on
 * B, the lease deadlines) or reported as unexpected.
 *
 * Usage: stand [--json]. Exit 0: keys equal except lease_epoch; 1: unexpected differences;
 * 2: the stand could not run. Ctrl-C stops both servers.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Redis } from "iovalkey";
import {
  claim,
  type ClaimedJob,
  type Connection,
  connect,
  enqueue,
  type EnqueueResult,
  installModuleBrand,
  newId,
} from "../src/index.js";
import { queueKey, SCRIPTS, scriptFor, VERSION_KEY } from "../src/protocol.js";
import { type EmbeddedValkey, startEmbeddedValkey } from "./embedded-valkey.js";
import { modulePath } from "./module-path.js";
import {
  type MonitorEntry as MonitorLine,
  type MonitorHandle as Monitor,
  monitor as openMonitor,
} from "../test/support/monitor.js";

export const QUEUE = "quotes";
export const LEASE_MS = 30_000;
export const PAYLOAD = '{"symbol":"EURUSD","bid":"1.08412","ask":"1.08430","venue":"LDN","seq":1}';
export const VERDICT_OK = "stand: keys equal except lease_epoch";

export type Side = "a" | "b";
export type Mark = "equal" | "expected" | "unexpected";

/** One key under the queue's hashtag, as SCAN/TYPE and the type's read found it (bytes as latin1). */
export interface KeyEntry {
  key: string;
  type: string;
  /** hash: field → value. */
  hash?: Record<string, string>;
  /** zset: members in rank order with their scores. */
  zset?: { member: string; score: number }[];
  /** string value. */
  value?: string;
  /** list items in order, set members sorted. */
  items?: string[];
}
export type Keyspace = KeyEntry[];

/** The lines one node's MONITOR saw during one step. */
export interface MonitorCapture {
  /** Every line the connector's socket sent, as arguments. */
  sent: string[][];
  /** The transition lines: `sent` without the connector's one-time NOSCRIPT reload. */
  transition: string[][];
  /** True when the first EVALSHA was answered NOSCRIPT and the connector loaded the source. */
  reloaded: boolean;
  /** The commands run inside the call: by the script (client `lua`) or the module's handler. */
  inner: string[][];
}

/** One compared item: a MONITOR line's tail, a reply field or a key's field/member. */
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

export interface NodeInfo {
  label: string;
  /** Who wrote the brand. */
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
  reply: Record<Side, unknown>;
  keyspace: Record<Side, Keyspace>;
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
  /** The keyspaces after the last step. */
  keyspaces: Record<Side, Keyspace>;
  unexpected: string[];
}

export interface StandOptions {
  json?: boolean;
  out?: (line: string) => void;
}

/** Cleanups of the runs in progress, so Ctrl-C can stop their servers. */
const running = new Set<() => Promise<void>>();

/** Stops everything the runs in progress started (connections, monitors, both servers). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((cleanup) => cleanup()));
}

// ---------------------------------------------------------------------------------------------
// Inspecting a node (a plain client of its own, outside the connectors and their fences)

type Inspector = Redis;

async function openInspector(host: string, port: number): Promise<Inspector> {
  const client = new Redis({
    host,
    port,
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => {});
  await client.connect();
  return client;
}

async function call(client: Inspector, command: string, ...args: (string | number)[]): Promise<unknown> {
  return client.callBuffer(command, args);
}

const str = (value: unknown): string => (Buffer.isBuffer(value) ? value.toString("latin1") : String(value));
const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(str) : []);

async function serverTimeMs(client: Inspector): Promise<number> {
  const [secs, micros] = list(await call(client, "TIME"));
  return Number(secs) * 1000 + Math.floor(Number(micros) / 1000);
}

async function runId(client: Inspector): Promise<string> {
  const info = str(await call(client, "INFO", "server"));
  const found = /^run_id:(\S+)/m.exec(info);
  if (!found) throw new Error("INFO server has no run_id");
  return found[1]!;
}

/** Every key matching `emq:{q}:*`, sorted, each read by its type. */
async function readKeyspace(client: Inspector, queue: string): Promise<Keyspace> {
  const keys = new Set<string>();
  let cursor = "0";
  do {
    const [next, batch] = (await call(
      client,
      "SCAN",
      cursor,
      "MATCH",
      `${queueKey(queue, "")}*`,
      "COUNT",
      100,
    )) as [Buffer, Buffer[]];
    cursor = str(next);
    for (const key of batch) keys.add(str(key));
  } while (cursor !== "0");
  const entries: Keyspace = [];
  for (const key of [...keys].sort()) {
    const type = str(await call(client, "TYPE", key));
    const entry: KeyEntry = { key, type };
    if (type === "hash") {
      const flat = list(await call(client, "HGETALL", key));
      entry.hash = {};
      for (let i = 0; i + 1 < flat.length; i += 2) entry.hash[flat[i]!] = flat[i + 1]!;
    } else if (type === "zset") {
      const flat = list(await call(client, "ZRANGE", key, 0, -1, "WITHSCORES"));
      entry.zset = [];
      for (let i = 0; i + 1 < flat.length; i += 2)
        entry.zset.push({ member: flat[i]!, score: Number(flat[i + 1]) });
    } else if (type === "string") {
      entry.value = str(await call(client, "GET", key));
    } else if (type === "list") {
      entry.items = list(await call(client, "LRANGE", key, 0, -1));
    } else if (type === "set") {
      entry.items = list(await call(client, "SMEMBERS", key)).sort();
    }
    entries.push(entry);
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// MONITOR: which lines a step sent

const lower = (s: string | undefined) => (s ?? "").toLowerCase();

/** The client address the server sees for a connection (CLIENT INFO), to pick its MONITOR lines. */
async function clientAddr(conn: Connection): Promise<string> {
  const info = str(await conn.send("CLIENT", ["INFO"]));
  const found = /\baddr=(\S+)/.exec(info);
  if (!found) throw new Error("CLIENT INFO has no addr");
  return found[1]!;
}

function capture(lines: readonly MonitorLine[], addr: string): MonitorCapture {
  const sent = lines.filter((l) => l.client === addr).map((l) => l.args);
  const transition: string[][] = [];
  let reloaded = false;
  for (let i = 0; i < sent.length; i++) {
    const args = sent[i]!;
    const next = sent[i + 1];
    if (lower(args[0]) === "script" && lower(args[1]) === "load") continue;
    if (lower(args[0]) === "evalsha" && next && lower(next[0]) === "script" && lower(next[1]) === "load") {
      reloaded = true; // answered NOSCRIPT; the connector loads the source and sends the same line again
      continue;
    }
    transition.push(args);
  }
  const inner = lines.filter(isInner).map((l) => l.args);
  return { sent, transition, reloaded, inner };
}

/** A line run inside a call: the script's client is `lua`; a module handler's calls carry no address. */
function isInner(line: MonitorLine): boolean {
  return line.client === "lua" || line.client === "";
}

/**
 * Waits until MONITOR has fed every line the node executed before now: a marker sent on the
 * inspector is executed after everything already answered, so once it shows up, the rest has.
 */
async function settle(monitor: Monitor, inspector: Inspector, marker: string): Promise<number> {
  const seen = monitor.waitFor((l) => lower(l.args[0]) === "echo" && l.args[1] === marker);
  await call(inspector, "ECHO", marker);
  const line = await seen;
  return monitor.entries().indexOf(line);
}

// ---------------------------------------------------------------------------------------------
// Comparing

function describeReply(reply: EnqueueResult | ClaimedJob | null): unknown {
  if (reply === null) return null;
  if ("duplicate" in reply) return { id: reply.id, duplicate: reply.duplicate };
  return {
    id: reply.id,
    payload: reply.payload.toString("latin1"),
    attempts: reply.attempts,
    deadline: reply.deadline,
  };
}

export interface DeadlineCheck {
  /** Each node's claim reply deadline and the server-time window (ms) around its call. */
  reply: Record<Side, number>;
  window: Record<Side, [number, number]>;
}

function deadlineRow(what: string, a: number, b: number, check: DeadlineCheck, lease: number): Row {
  const problems: string[] = [];
  for (const [side, score] of [
    ["a", a],
    ["b", b],
  ] as const) {
    const [from, to] = check.window[side];
    if (score !== check.reply[side])
      problems.push(`${side.toUpperCase()} score ${score} ≠ its claim reply ${check.reply[side]}`);
    if (score - lease < from || score - lease > to)
      problems.push(`${side.toUpperCase()} deadline − lease ${score - lease} outside its node's time window`);
  }
  const delta = b - a;
  if (problems.length > 0) {
    return { what, a: String(a), b: String(b), mark: "unexpected", note: problems.join("; ") };
  }
  return {
    what,
    a: String(a),
    b: String(b),
    mark: "expected",
    note: `~ deadline: B − A = ${delta >= 0 ? "+" : ""}${delta} ms (expected: each claim read its own node's clock)`,
  };
}

/** Compares two keyspaces key by key, type by type, field by field; every row is marked. */
export function compareKeyspaces(
  ka: Keyspace,
  kb: Keyspace,
  ctx: {
    queue: string;
    leased: string | null;
    runIdB: string;
    deadlines: DeadlineCheck | null;
    lease: number;
  },
): Row[] {
  const rows: Row[] = [];
  const byKey = (ks: Keyspace) => new Map(ks.map((e) => [e.key, e]));
  const ma = byKey(ka);
  const mb = byKey(kb);
  const active = queueKey(ctx.queue, "active");
  const leasedRow = ctx.leased === null ? null : queueKey(ctx.queue, "job:") + ctx.leased;
  for (const key of [...new Set([...ma.keys(), ...mb.keys()])].sort()) {
    const ea = ma.get(key);
    const eb = mb.get(key);
    const row = (
      field: string,
      a: string | null,
      b: string | null,
      mark: Mark,
      note: string,
      type?: string,
    ) =>
      rows.push({
        what: `${key} ${field}`.trim(),
        key,
        type: type ?? ea?.type ?? eb?.type,
        field,
        a,
        b,
        mark,
        note,
      });
    if (!ea || !eb) {
      row("", ea ? ea.type : null, eb ? eb.type : null, "unexpected", `key only on ${ea ? "A" : "B"}`);
      continue;
    }
    if (ea.type !== eb.type) {
      row("", ea.type, eb.type, "unexpected", "types differ");
      continue;
    }
    if (ea.type === "hash") {
      const ha = ea.hash ?? {};
      const hb = eb.hash ?? {};
      // The leased row is checked for lease_epoch even when neither side holds it.
      const declared = key === leasedRow ? ["lease_epoch"] : [];
      for (const field of [...new Set([...Object.keys(ha), ...Object.keys(hb), ...declared])].sort()) {
        const a = ha[field] ?? null;
        const b = hb[field] ?? null;
        if (field === "lease_epoch" && key === leasedRow) {
          if (a === null && b === ctx.runIdB) {
            row(field, a, b, "expected", "≠ lease_epoch (declared: native claim adds run_id; = B's run_id)");
          } else {
            const why = a !== null ? "present on A" : b === null ? "absent on B" : `B's is not its run_id`;
            row(field, a, b, "unexpected", `lease_epoch ${why}`);
          }
        } else if (a === b) {
          row(field, a, b, "equal", "=");
        } else {
          row(
            field,
            a,
            b,
            "unexpected",
            a === null || b === null ? `field only on ${a ? "A" : "B"}` : "values differ",
          );
        }
      }
    } else if (ea.type === "zset") {
      const za = new Map((ea.zset ?? []).map((m) => [m.member, m.score]));
      const zb = new Map((eb.zset ?? []).map((m) => [m.member, m.score]));
      const orderA = (ea.zset ?? []).map((m) => m.member).join(" ");
      const orderB = (eb.zset ?? []).map((m) => m.member).join(" ");
      for (const member of [...new Set([...za.keys(), ...zb.keys()])].sort()) {
        const a = za.get(member);
        const b = zb.get(member);
        if (a === undefined || b === undefined) {
          row(
            member,
            a === undefined ? null : `@ ${a}`,
            b === undefined ? null : `@ ${b}`,
            "unexpected",
            "member only on one node",
          );
        } else if (key === active && member === ctx.leased && ctx.deadlines) {
          const r = deadlineRow(`${key} ${member}`, a, b, ctx.deadlines, ctx.lease);
          rows.push({ ...r, key, type: "zset", field: member, a: `@ ${a}`, b: `@ ${b}` });
        } else if (a === b) {
          row(member, `@ ${a}`, `@ ${b}`, "equal", "=");
        } else {
          row(member, `@ ${a}`, `@ ${b}`, "unexpected", "scores differ");
        }
      }
      if (orderA !== orderB) row("(order)", orderA, orderB, "unexpected", "members ranked differently");
    } else if (ea.type === "string") {
      const same = ea.value === eb.value;
      row(
        "",
        ea.value ?? null,
        eb.value ?? null,
        same ? "equal" : "unexpected",
        same ? "=" : "values differ",
      );
    } else if (ea.type === "list" || ea.type === "set") {
      const a = (ea.items ?? []).join(" ");
      const b = (eb.items ?? []).join(" ");
      row("", a, b, a === b ? "equal" : "unexpected", a === b ? "=" : "items differ");
    } else {
      row("", ea.type, eb.type, "unexpected", `type ${ea.type} is not compared by the stand`);
    }
  }
  return rows;
}

/** The head of a transition line: `EVALSHA <sha>` on wire 4, `EMQ.<VERB>` on wire 6, else the command. */
function headLength(args: readonly string[]): number {
  return lower(args[0]) === "evalsha" ? 2 : 1;
}

/** Pairs the transition lines of one step: EVALSHA on A against EMQ.<VERB> on B, tail by tail. */
export function compareMonitor(
  step: "enqueue" | "claim",
  ca: MonitorCapture,
  cb: MonitorCapture,
  queue: string,
): Row[] {
  const rows: Row[] = [];
  const script = scriptFor(step.toUpperCase());
  const verb = lower(script.command ?? "");
  const meta = queueKey(queue, "meta");
  const expectA = step === "claim" ? ["hget", "evalsha"] : ["evalsha"];
  const expectB = step === "claim" ? ["hget", verb] : [verb];
  const shape = (c: MonitorCapture) => c.transition.map((args) => lower(args[0]));
  if (shape(ca).join(" ") !== expectA.join(" ") || shape(cb).join(" ") !== expectB.join(" ")) {
    rows.push({
      what: "monitor lines",
      a: shape(ca).join(", "),
      b: shape(cb).join(", "),
      mark: "unexpected",
      note: `expected A: ${expectA.join(", ")}; B: ${expectB.join(", ")}`,
    });
  }
  const n = Math.max(ca.transition.length, cb.transition.length);
  for (let i = 0; i < n; i++) {
    const a = ca.transition[i];
    const b = cb.transition[i];
    if (!a || !b) continue;
    const problems: string[] = [];
    const tailA = a.slice(headLength(a));
    const tailB = b.slice(headLength(b));
    if (lower(a[0]) === "evalsha") {
      if (a[1] !== script.sha1) problems.push(`A's sha ${a[1]} is not ${script.name}.lua's ${script.sha1}`);
      if (lower(b[0]) !== verb) problems.push(`B sent ${b[0]} where ${verb.toUpperCase()} was expected`);
    } else {
      if (lower(a[0]) !== lower(b[0])) problems.push("commands differ");
      if (lower(a[0]) === "hget" && (a[1] !== meta || a[2] !== "paused"))
        problems.push("not the host step's pause read");
    }
    const sameTail = tailA.length === tailB.length && tailA.every((arg, k) => arg === tailB[k]);
    if (!sameTail) problems.push("tails differ");
    rows.push({
      what: `monitor line ${i + 1}`,
      a: a.join(" "),
      b: b.join(" "),
      mark: problems.length ? "unexpected" : "equal",
      note: problems.length
        ? problems.join("; ")
        : lower(a[0]) === "evalsha"
          ? "= same tail after the head"
          : "= same line",
    });
  }
  return rows;
}

function compareReplies(
  step: "enqueue" | "claim",
  ra: unknown,
  rb: unknown,
  deadlines: DeadlineCheck | null,
  lease: number,
): Row[] {
  const rows: Row[] = [];
  const fa = (ra ?? {}) as Record<string, unknown>;
  const fb = (rb ?? {}) as Record<string, unknown>;
  if (ra === null || rb === null) {
    return [
      {
        what: "reply",
        a: JSON.stringify(ra),
        b: JSON.stringify(rb),
        mark: "unexpected",
        note: `${step} returned nothing`,
      },
    ];
  }
  for (const field of [...new Set([...Object.keys(fa), ...Object.keys(fb)])]) {
    const a = JSON.stringify(fa[field]);
    const b = JSON.stringify(fb[field]);
    if (field === "deadline" && deadlines) {
      rows.push({
        ...deadlineRow("reply deadline", Number(fa[field]), Number(fb[field]), deadlines, lease),
        field,
      });
    } else {
      rows.push({
        what: `reply ${field}`,
        field,
        a,
        b,
        mark: a === b ? "equal" : "unexpected",
        note: a === b ? "=" : "values differ",
      });
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Printing

const EMPTY = "—";

function quote(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.charCodeAt(0);
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code > 0x7e) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

function abbreviate(value: string, payload: string, runIdB: string): string {
  if (value === payload) return "<payload>";
  if (value === runIdB) return `${quote(value.slice(0, 12))}…`;
  if (/^[0-9a-f]{40}$/.test(value)) return `"${value.slice(0, 8)}…"`;
  for (const script of [...SCRIPTS.values()]) {
    if (value === script.source) return `<${script.name}.lua source, ${Buffer.byteLength(value)} B>`;
  }
  return value.length > 48 ? `${quote(value.slice(0, 40))}…(${value.length} B)` : quote(value);
}

function pad(s: string, width: number): string {
  return s + " ".repeat(Math.max(0, width - [...s].length));
}

function render(result: StandResult, out: (line: string) => void): void {
  const { nodes, payload } = result;
  const ab = (v: string) => abbreviate(v, payload, nodes.b.runId);
  const shownPayload = payload.length > 32 ? `${payload.slice(0, 32)}…` : payload;
  out(
    `stand: one transition, run twice — queue "${result.queue}", job ${result.id}, lease ${result.leaseMs} ms`,
  );
  for (const node of [nodes.a, nodes.b]) {
    out(
      `  ${pad(node.label, 12)} ${node.host}:${node.port}  ${pad(node.module ? "valkey-server + module" : "valkey-server, no module", 26)}` +
        `${VERSION_KEY} = ${node.brand}, branded by ${node.brandedBy}`,
    );
  }
  out(`  B's run_id (INFO server) = ${nodes.b.runId}`);
  out(`  <payload> = ${shownPayload} (${Buffer.byteLength(payload)} B)`);

  for (const [index, step] of result.steps.entries()) {
    out("");
    out(`── step ${index + 1}: ${step.call} ${"─".repeat(Math.max(3, 100 - step.call.length))}`);
    // MONITOR, side by side with the heads padded so the tails line up
    out("  received (MONITOR, the connector's lines)");
    const ta = step.monitor.a.transition;
    const tb = step.monitor.b.transition;
    const monitorRows = step.rows.filter((r) => r.what.startsWith("monitor line"));
    for (let i = 0; i < Math.max(ta.length, tb.length); i++) {
      const a = ta[i] ?? [];
      const b = tb[i] ?? [];
      const head = (args: string[]) => args.slice(0, headLength(args)).map(ab).join(" ");
      const width = Math.max([...head(a)].length, [...head(b)].length);
      const line = (args: string[]) =>
        `${pad(head(args), width)} ${args.slice(headLength(args)).map(ab).join(" ")}`;
      out(`    A  ${a.length ? line(a) : EMPTY}`);
      out(`    B  ${b.length ? line(b) : EMPTY}`);
      const row = monitorRows[i];
      if (row) out(`       ${row.mark === "unexpected" ? `✗ unexpected: ${row.note}` : row.note}`);
    }
    if (step.monitor.a.reloaded) {
      out(
        `    A  note: its first "evalsha" was answered NOSCRIPT; the connector sent "script" "LOAD" <${scriptFor(step.name.toUpperCase()).name}.lua source> and the same line again`,
      );
    }
    const names = (lines: string[][]) => lines.map((args) => (args[0] ?? "").toUpperCase()).join(" ");
    const inside = "    inside the call (not compared): ";
    out(`${inside}A's script ran  ${names(step.monitor.a.inner)}`);
    out(`${" ".repeat(inside.length)}B's handler ran ${names(step.monitor.b.inner)}`);
    for (const row of step.rows.filter((r) => r.what === "monitor lines"))
      out(`    ✗ unexpected: ${row.note} (A: ${row.a}; B: ${row.b})`);

    out("  returned");
    const replyRows = step.rows.filter((r) => r.what.startsWith("reply"));
    const shown = (v: string | null) =>
      v === null ? EMPTY : v === JSON.stringify(payload) ? "<payload>" : v;
    const replyWidth = Math.max(8, ...replyRows.map((r) => Math.max(shown(r.a).length, shown(r.b).length)));
    out(`    ${pad("", 10)} ${pad("A (wire 4)", replyWidth)}  ${pad("B (wire 6)", replyWidth)}`);
    for (const row of replyRows) {
      out(
        `    ${pad(row.field ?? row.what, 10)} ${pad(shown(row.a), replyWidth)}  ${pad(shown(row.b), replyWidth)}  ${markText(row)}`,
      );
    }

    out(`  keys ${queueKey(result.queue, "")}* after the step (SCAN, type by type, field by field)`);
    const keyRows = step.rows.filter((r) => r.key !== undefined);
    const cell = (v: string | null, type: string | undefined) =>
      v === null ? EMPTY : type === "zset" ? v : type === "hash" || type === "string" ? ab(v) : v;
    const wKey = Math.max(4, ...keyRows.map((r) => [...(r.key ?? "")].length));
    const wField = Math.max(6, ...keyRows.map((r) => (r.field ?? "").length));
    const wVal = Math.max(
      10,
      ...keyRows.map((r) => Math.max(cell(r.a, r.type).length, cell(r.b, r.type).length)),
    );
    out(
      `    ${pad("key", wKey)}  ${pad("type", 5)} ${pad("field", wField)}  ${pad("A", wVal)}  ${pad("B", wVal)}`,
    );
    let lastKey = "";
    for (const row of keyRows) {
      const first = row.key !== lastKey;
      lastKey = row.key ?? "";
      out(
        `    ${pad(first ? (row.key ?? "") : "", wKey)}  ${pad(first ? (row.type ?? "") : "", 5)} ${pad(row.field ?? "", wField)}  ` +
          `${pad(cell(row.a, row.type), wVal)}  ${pad(cell(row.b, row.type), wVal)}  ${markText(row)}`,
      );
    }
    if (keyRows.length === 0) out(`    (no keys)`);
  }
  out("");
  out(result.verdict);
  for (const problem of result.unexpected) out(`  - ${problem}`);
}

function markText(row: Row): string {
  if (row.mark === "unexpected") return `✗ unexpected: ${row.note}`;
  return row.note;
}

// ---------------------------------------------------------------------------------------------
// The run

export async function runStand(opts: StandOptions = {}): Promise<StandResult> {
  const sink = opts.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const out = (line: string) => sink(line.trimEnd());
  const queue = QUEUE;
  // What this run started, stopped in this order: clients (monitors, connectors, inspectors), then servers.
  const clients: (() => Promise<void>)[] = [];
  const servers: (() => Promise<void>)[] = [];
  let cleaned: Promise<void> | null = null;
  const cleanup = () => {
    cleaned ??= (async () => {
      await Promise.all(clients.map((stop) => stop().catch(() => {})));
      await Promise.all(servers.map((stop) => stop().catch(() => {})));
    })();
    return cleaned;
  };
  /** Keeps a resource for the cleanup; one started after an interrupt is stopped at once. */
  const own = async <T>(
    list: (() => Promise<void>)[],
    resource: T,
    stop: (r: T) => Promise<void>,
  ): Promise<T> => {
    if (cleaned) {
      await stop(resource).catch(() => {});
      throw new Error("interrupted");
    }
    list.push(() => stop(resource));
    return resource;
  };
  const ownServer = (server: EmbeddedValkey) => own(servers, server, (s) => s.stop());
  const ownConnection = (conn: Connection) => own(clients, conn, (c) => c.close());
  const ownInspector = (insp: Inspector) =>
    own(clients, insp, async (i) => {
      i.disconnect();
    });
  const ownMonitor = (monitor: Monitor) =>
    own(clients, monitor, async (m) => {
      m.stop();
    });
  running.add(cleanup);
  try {
    // Node A: plain, branded by the wire-4 connector (SET NX on the absent key).
    const a = await ownServer(await startEmbeddedValkey());
    const connA = await ownConnection(await connect({ host: a.host, port: a.port, wire: 4 }));
    // Node B: the module, branded by EMQ.INSTALL; the wire-6 connector only reads the brand.
    const b = await ownServer(await startEmbeddedValkey({ module: modulePath() }));
    const installed = await installModuleBrand({ host: b.host, port: b.port });
    const connB = await ownConnection(await connect({ host: b.host, port: b.port, wire: 6 }));

    const inspA = await ownInspector(await openInspector(a.host, a.port));
    const inspB = await ownInspector(await openInspector(b.host, b.port));
    const nodes: Record<Side, NodeInfo> = {
      a: {
        label: "node A",
        brandedBy: "the wire-4 connector (SET NX)",
        host: a.host,
        port: a.port,
        wire: 4,
        module: false,
        brand: str(await call(inspA, "GET", VERSION_KEY)),
        runId: await runId(inspA),
      },
      b: {
        label: "node B",
        brandedBy: `EMQ.INSTALL (replied ${installed})`,
        host: b.host,
        port: b.port,
        wire: 6,
        module: true,
        brand: str(await call(inspB, "GET", VERSION_KEY)),
        runId: await runId(inspB),
      },
    };
    const addr: Record<Side, string> = { a: await clientAddr(connA), b: await clientAddr(connB) };
    const monA = await ownMonitor(await openMonitor(a.port, { host: a.host }));
    const monB = await ownMonitor(await openMonitor(b.port, { host: b.host }));

    const id = newId();
    const steps: StepResult[] = [];
    const unexpected: string[] = [];
    let from: Record<Side, number> = { a: 0, b: 0 };
    const finishStep = async (
      name: "enqueue" | "claim",
      callText: string,
      reply: Record<Side, unknown>,
      leased: string | null,
      deadlines: DeadlineCheck | null,
    ) => {
      const endA = await settle(monA, inspA, `stand:${name}:done`);
      const endB = await settle(monB, inspB, `stand:${name}:done`);
      const monitor = {
        a: capture(monA.entries().slice(from.a, endA), addr.a),
        b: capture(monB.entries().slice(from.b, endB), addr.b),
      };
      from = { a: endA + 1, b: endB + 1 };
      const keyspace = { a: await readKeyspace(inspA, queue), b: await readKeyspace(inspB, queue) };
      const rows = [
        ...compareMonitor(name, monitor.a, monitor.b, queue),
        ...compareReplies(name, reply.a, reply.b, deadlines, LEASE_MS),
        ...compareKeyspaces(keyspace.a, keyspace.b, {
          queue,
          leased,
          runIdB: nodes.b.runId,
          deadlines,
          lease: LEASE_MS,
        }),
      ];
      for (const row of rows) {
        if (row.mark === "unexpected") unexpected.push(`step ${name}: ${row.what}: ${row.note}`);
      }
      steps.push({ name, call: callText, monitor, reply, keyspace, rows });
    };

    // Step 1: enqueue the same id on both.
    const enqueued = {
      a: describeReply(await enqueue(connA, queue, PAYLOAD, { id })),
      b: describeReply(await enqueue(connB, queue, PAYLOAD, { id })),
    };
    await finishStep(
      "enqueue",
      `enqueue(conn, "${queue}", <payload>, { id: "${id}" })`,
      enqueued,
      null,
      null,
    );

    // Step 2: claim it on both, reading each node's clock around its call.
    const window: Record<Side, [number, number]> = { a: [0, 0], b: [0, 0] };
    const claimOn = async (side: Side, conn: Connection, insp: Inspector) => {
      const before = await serverTimeMs(insp);
      const job = await claim(conn, queue, LEASE_MS);
      window[side] = [before, await serverTimeMs(insp)];
      return job;
    };
    const jobA = await claimOn("a", connA, inspA);
    const jobB = await claimOn("b", connB, inspB);
    const deadlines: DeadlineCheck = { reply: { a: jobA?.deadline ?? -1, b: jobB?.deadline ?? -1 }, window };
    await finishStep(
      "claim",
      `claim(conn, "${queue}", ${LEASE_MS})`,
      { a: describeReply(jobA), b: describeReply(jobB) },
      id,
      deadlines,
    );

    const ok = unexpected.length === 0;
    const last = steps[steps.length - 1]!;
    const result: StandResult = {
      ok,
      verdict: ok ? VERDICT_OK : `stand: ${unexpected.length} unexpected difference(s)`,
      queue,
      id,
      leaseMs: LEASE_MS,
      payload: PAYLOAD,
      nodes,
      steps,
      keyspaces: last.keyspace,
      unexpected,
    };
    if (opts.json) out(JSON.stringify(result, null, 2));
    else render(result, out);
    return result;
  } finally {
    await cleanup();
    running.delete(cleanup);
  }
}

// ---------------------------------------------------------------------------------------------
// The command

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  let interrupted = false;
  const run = runStand({ json: process.argv.includes("--json") });
  process.once("SIGINT", () => {
    interrupted = true;
    process.stdout.write("\ninterrupted: stopping both servers\n");
    // Stop what is running now; a server still starting is stopped by the run as it comes up.
    setTimeout(() => process.exit(130), 10_000).unref();
    void stopAll()
      .then(() => run.catch(() => {}))
      .finally(() => process.exit(130));
  });
  run.then(
    (result) => {
      if (!interrupted) process.exit(result.ok ? 0 : 1);
    },
    (err: unknown) => {
      if (interrupted) return; // the SIGINT handler exits once both servers are stopped
      const message = err instanceof Error ? err.message : String(err);
      const hint = /lacks verbs/.test(message)
        ? "\n  the module build is older than the host's scripts: rebuild it (bash scripts/setup.sh)"
        : "";
      process.stderr.write(`stand failed: ${message}${hint}\n`);
      process.exit(2);
    },
  );
}
