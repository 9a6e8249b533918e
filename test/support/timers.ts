/**
 * What the server-timer tests share: the module's timer counters (`INFO echomq`), polling, the
 * bus entry a timer wrote, and a keyspace seeded in one `MULTI/EXEC` (so a tick sees all of it).
 */
import assert from "node:assert/strict";
import type { RespArg } from "./resp.js";
import { rawCommands } from "./resp.js";
import type { ValkeyServer } from "./valkey.js";
import { queueKey as keyText } from "../../src/keyspace.js";

/** The module's timer counters, from `INFO echomq` (section `echomq_timers`). */
interface TimerStats {
  enabled: number;
  running: number;
  queues: number;
  ticks: number;
  /** Wall time (the OS's preemptions included). */
  longest_tick_us: number;
  last_tick_us: number;
  /** The server thread's CPU time: the tick's own work. */
  longest_tick_cpu_us: number;
  promoted: number;
  requeued: number;
  buried: number;
  refused: number;
}

export async function timerStats(server: { cli: ValkeyServer["cli"] }): Promise<TimerStats> {
  const info = String(await server.cli("INFO", "echomq"));
  const field = (name: string) => {
    const m = new RegExp(`^(?:echomq_)?timers_${name}:(\\d+)`, "m").exec(info);
    assert.ok(m, `INFO echomq has timers_${name}:\n${info}`);
    return Number(m[1]);
  };
  const names = [
    "enabled",
    "running",
    "queues",
    "ticks",
    "longest_tick_us",
    "last_tick_us",
    "longest_tick_cpu_us",
  ] as const;
  const moved = ["promoted", "requeued", "buried", "refused"] as const;
  return Object.fromEntries([...names, ...moved].map((n) => [n, field(n)])) as unknown as TimerStats;
}

/** The ms part of the id of the bus entry `event` for job `id` on queue `q` (when it was written). */
export async function eventAt(server: ValkeyServer, q: string, event: string, id: string): Promise<number> {
  const entries = (await server.cli("XRANGE", keyText(q, "events"), "-", "+")) as [string, string[]][];
  for (const [entryId, fields] of entries) {
    const f = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
    if (f.get("event") === event && f.get("id") === id) return Number(entryId.split("-")[0]);
  }
  assert.fail(`no ${event} entry for ${id} on ${q}`);
}

/** Runs `commands` in one `MULTI/EXEC` on `port`; every reply must be a success. */
export async function inOneExec(port: number, commands: readonly (readonly RespArg[])[]): Promise<void> {
  const replies = await rawCommands(port, [["MULTI"], ...commands, ["EXEC"]], { timeoutMs: 30_000 });
  const exec = replies[replies.length - 1];
  assert.ok(Array.isArray(exec), `EXEC answered ${String(exec)}`);
  for (const r of exec) assert.ok(!(r instanceof Error), String(r));
}

/** A valid job id from a number (`JOB` + 11 digits). */
export const jobId = (n: number) => `JOB${String(n).padStart(11, "0")}`;

/** p50 and p99 of `values` (nearest rank). */
export function percentiles(values: readonly number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { p50: at(50), p99: at(99) };
}
