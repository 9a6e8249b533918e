/**
 * What every fault experiment shares: the outcome it returns (the counts of the summary table),
 * bounded waits, a server per wire, and reading a queue's leftovers back from the server.
 *
 * An experiment never throws for a missed target: it counts, and names each missed target in
 * `failures`, so the soak prints a full table and the test suite asserts `failures` is empty.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { modulePath } from "../../tools/module-path.js";
import { type Connection, connect, type Wire } from "../../src/index.js";
import { installModuleBrand } from "../../src/admin.js";
import { queueKey } from "../../src/protocol.js";
import { type StartValkeyOptions, startValkey, type ValkeyServer } from "../../test/support/valkey.js";

export type Params = Record<string, number | string>;

export interface Outcome {
  experiment: string;
  wire: Wire;
  params: Params;
  /** Jobs (or calls) the system acknowledged: the experiment's denominator. */
  acknowledged: number;
  /** Acknowledged jobs never completed and no longer present. */
  lost: number;
  /** Jobs whose handler ran to its end more than once. */
  completedTwice: number;
  /** Acknowledged jobs still present and not completed after the drain timeout. */
  stuck: number;
  /** Server processes that died on their own (or stopped answering). */
  crashes: number;
  /** Broken invariants specific to the experiment (see each one's notes). */
  breaches: number;
  durationMs: number;
  /** Further figures, one phrase each. */
  notes: string[];
  /** Every missed target, in words; empty when the experiment met its targets. */
  failures: string[];
}

function newOutcome(experiment: string, wire: Wire, params: Params): Outcome {
  return {
    experiment,
    wire,
    params,
    acknowledged: 0,
    lost: 0,
    completedTwice: 0,
    stuck: 0,
    crashes: 0,
    breaches: 0,
    durationMs: 0,
    notes: [],
    failures: [],
  };
}

/** Runs `body` on a fresh outcome, times it, and turns a thrown error into a failure. */
export async function measure(
  experiment: string,
  wire: Wire,
  params: Params,
  body: (out: Outcome) => Promise<void>,
): Promise<Outcome> {
  const out = newOutcome(experiment, wire, params);
  const t0 = Date.now();
  try {
    await body(out);
  } catch (err) {
    out.failures.push(`aborted: ${err instanceof Error ? err.message : String(err)}`);
  }
  out.durationMs = Date.now() - t0;
  return out;
}

/** The usual targets: nothing lost, nothing stuck, no crash, no breach. */
export function checkTargets(out: Outcome): void {
  if (out.lost > 0) out.failures.push(`${out.lost} acknowledged jobs lost`);
  if (out.stuck > 0) out.failures.push(`${out.stuck} jobs stuck`);
  if (out.crashes > 0) out.failures.push(`${out.crashes} server crashes`);
  if (out.breaches > 0) out.failures.push(`${out.breaches} breaches`);
}

/** Polls `cond` until it holds or `timeoutMs` passes; returns whether it held. */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 25,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

/** `promise`, or a rejection naming `what` after `ms`. */
export async function within<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A server for `wire`: stock for wire 4, with the module loaded and branded for wire 6. */
export async function startFor(wire: Wire, opts: StartValkeyOptions = {}): Promise<ValkeyServer> {
  const server = await startValkey(wire === 6 ? { ...opts, module: modulePath() } : opts);
  if (wire === 6) await installModuleBrand({ port: server.port });
  return server;
}

/** A fenced connection as the default user. */
export function connectTo(port: number, wire: Wire, name?: string): Promise<Connection> {
  return connect(name === undefined ? { port, wire } : { port, wire, name });
}

/**
 * 1 when the server no longer answers PING or its log holds a crash report (a signal, a bug
 * report, a failed assertion, a Rust panic in the module), else 0.
 */
export async function crashedOnItsOwn(server: ValkeyServer): Promise<number> {
  if (/crashed by signal|BUG REPORT|ASSERTION FAILED|panicked/i.test(server.logTail(100_000))) return 1;
  try {
    return (await server.cli("PING")) === "PONG" ? 0 : 1;
  } catch {
    return 1;
  }
}

/** `crashedOnItsOwn` over every node of a cluster: how many crashed. */
export async function crashedAmong(nodes: readonly ValkeyServer[]): Promise<number> {
  let n = 0;
  for (const node of nodes) n += await crashedOnItsOwn(node);
  return n;
}

/** The span of a list of milliseconds for notes: "12–480 ms", or "none" when it is empty. */
export function msRange(xs: readonly number[]): string {
  if (xs.length === 0) return "none";
  return `${Math.min(...xs)}–${Math.max(...xs)} ms`;
}

/** The per-job state of queue `q` the server holds: id → the set it is in. */
export async function whereAre(conn: Connection, q: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const set of ["pending", "schedule", "active", "done", "dead"] as const) {
    const ids = (await conn.send("ZRANGE", [queueKey(q, set), 0, -1])) as Buffer[];
    for (const id of ids) out.set(String(id), set);
  }
  return out;
}

/** Closes things that may already be broken, ignoring their errors. */
export async function quietly(...steps: (Promise<unknown> | undefined)[]): Promise<void> {
  await Promise.allSettled(steps.filter((s) => s !== undefined));
}

/** A short text of an error for notes (name and first line). */
export function brief(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message.split("\n")[0]}`;
  return String(err);
}

/** Counts of errors by their brief text, for notes: "ConnectionLostError ×12". */
export class Tally {
  private readonly counts = new Map<string, number>();
  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  get total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    return n;
  }
  text(limit = 4): string {
    const top = [...this.counts].sort((a, b) => b[1] - a[1]).slice(0, limit);
    return top.map(([k, n]) => `${k} ×${n}`).join("; ") || "none";
  }
}
