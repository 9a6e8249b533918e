/**
 * What the fused settlements' tests share (test/completenext, test/failnext): what clients (not
 * scripts) sent, read from `MONITOR`; a call whose reply is cut; a job taken back by the reaper.
 */
import assert from "node:assert/strict";
import { type Queue, type Wire, Worker } from "../../src/index.js";
import { scriptFor } from "../../src/scripts/index.js";
import { type MonitorHandle, monitor } from "./monitor.js";
import { connectResp } from "./resp.js";
import { until } from "./until.js";

/**
 * How many times a client (not a script) sent `verb`: `EMQ.<VERB>`, or `EVALSHA` of its script
 * (on wire 4 a script's first `EVALSHA` on a node meets `NOSCRIPT` and is sent again once).
 */
export function sent(mons: MonitorHandle[], verb: string): number {
  const sha = scriptFor(verb).sha1;
  return mons
    .flatMap((m) => m.entries())
    .filter((e) => e.client !== "lua")
    .filter((e) => {
      const name = e.args[0]?.toUpperCase();
      return name === `EMQ.${verb}` || (name === "EVALSHA" && e.args[1] === sha);
    }).length;
}

/** The host's pause reads: `HGET emq:{q}:meta paused`. */
function pauseReads(mons: MonitorHandle[]): number {
  return mons
    .flatMap((m) => m.entries())
    .filter((e) => e.client !== "lua" && e.args[0]?.toUpperCase() === "HGET" && e.args[2] === "paused")
    .length;
}

/** Runs `work` with `MONITOR` on every port in `ports`; its result, and the monitors (stopped). */
export async function watched<T>(ports: number[], work: () => Promise<T>): Promise<[T, MonitorHandle[]]> {
  const mons = await Promise.all(ports.map((port) => monitor(port)));
  try {
    return [await work(), mons];
  } finally {
    await Promise.all(mons.map((m) => m.stop()));
  }
}

/**
 * A busy slot's `n` settlements each leased its next job: `fused` sent once a job (n, or n + 1
 * with wire 4's one `NOSCRIPT` resend), `plain` never, and no more than the first job's claim and
 * pause read of their own (two each, a resend counted).
 */
export function assertOneCallPerJob(mons: MonitorHandle[], fused: string, plain: string, n: number): void {
  const count = sent(mons, fused);
  assert.ok(count === n || count === n + 1, `${fused} sent ${count} times for ${n} jobs`);
  assert.equal(sent(mons, plain), 0, `${plain} sent`);
  assert.ok(sent(mons, "CLAIM") <= 2, `claims of their own: ${sent(mons, "CLAIM")}`);
  assert.ok(pauseReads(mons) <= 2, `pause reads: ${pauseReads(mons)}`);
}

/**
 * Sends `verb` (`keys`, then `values`) on a socket of its own, closed before the reply is read:
 * the call reaches the server, its reply is lost.
 */
export async function sendAndCut(port: number, wire: Wire, verb: string, keys: string[], values: string[]) {
  const raw = await connectResp(port);
  const tail = [...keys, ...values];
  const head = wire === 6 ? [`EMQ.${verb}`] : ["EVAL", scriptFor(verb).source];
  const lost = raw.send([...head, keys.length, ...tail]).catch(() => null);
  await raw.close();
  await lost;
}

/** A worker takes `id` back when its lease ends (the reaper), and completes it. */
export async function completesAfterLease(q: Queue, id: string): Promise<void> {
  const completed: string[] = [];
  const worker = new Worker(q, () => "ok", {
    logger: { warn: () => {} },
    reapEveryMs: 100,
    promoteEveryMs: 50,
  });
  worker.on("completed", (j) => completed.push(j.id));
  await until(`${id} completed`, () => completed.includes(id), 15_000);
  await worker.close();
}
