/**
 * What the lifecycle tests share (lifecycle, requeue, wake, refusals): value texts each grammar
 * refuses, the declared keys of each verb, exact-refusal assertions, and per-wire helpers — server
 * time windows, leased and dead jobs, the wake channel.
 */
import assert from "node:assert/strict";
import { Redis } from "iovalkey";
import { ServerError } from "../../src/index.js";
import { queueKey, type QueueKeyType, claim, fail, add } from "../../src/protocol.js";
import { dumpQueue, type WireContext } from "./wires.js";
import { until } from "./until.js";
import { keysOf as verbKeys, type VerbName } from "../../src/jobs/calls.js";

export const WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";
export const NOT_JOB = "XYZ0Nb1VTbfnu4";

export const POSITIVE_BAD = [
  "0",
  "-1",
  "01",
  "+1",
  "1.5",
  "1e3",
  " 1",
  "1 ",
  "abc",
  "",
  "0x10",
  "1\u0000",
  "1234567890123456",
];
export const COUNT_BAD = ["-1", "-0", "00", "01", "+0", "1.5", "abc", "", " 0", "0x1", "1234567890123456"];
export const PRIORITY_BAD = [
  "-0",
  "--1",
  "+1",
  "01",
  "-01",
  "1.5",
  "",
  "-",
  "abc",
  "- 1",
  "1234567890123456",
  "-1234567890123456",
];
export const LIMIT_BAD = [
  "0",
  "10001",
  "-1",
  "01",
  "+5",
  "1.0",
  "abc",
  "",
  "99999",
  "999999999999999",
  "1234567890123456",
];

/** A W3C traceparent; `TRACE_512` carries a tracestate up to the 512-byte bound. */
export const TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
export const TRACE_512 = `${TRACE};${"k=v,".repeat(115)}`.slice(0, 512);
export const TRACE_BAD = [
  "x",
  " ",
  TRACE.toUpperCase(),
  `ff${TRACE.slice(2)}`,
  `00-${"0".repeat(32)}-b7ad6b7169203331-01`,
  `${TRACE.slice(0, 36)}${"0".repeat(16)}-01`,
  `${TRACE}0`,
  `${TRACE};`,
  `${TRACE};\n`,
  `${TRACE_512}x`,
];

export const k = (q: string, type: QueueKeyType) => queueKey(q, type);
/** Each verb's keys from its declared key slots (`protocol/verbs/*.json`); none written here. */
const slots =
  (verb: VerbName) =>
  (q: string, id?: string): string[] =>
    verbKeys(verb, q, id);
export const keysOf = {
  add: (q: string, id: string) => verbKeys("ADD", q, id),
  extend: slots("EXTEND"),
  complete: slots("COMPLETE"),
  fail: slots("FAIL"),
  retry: slots("RETRY"),
  promote: slots("PROMOTE"),
  reap: slots("REAP"),
  remove: slots("REMOVE"),
  meta: slots("PAUSE"),
  resume: slots("RESUME"),
  reschedule: slots("RESCHEDULE"),
  requeue: slots("REQUEUE"),
};

export type ErrorClass = abstract new (...args: never[]) => Error;

export async function refused(
  run: () => Promise<unknown>,
  text: string,
  type: ErrorClass = ServerError,
): Promise<void> {
  await assert.rejects(run(), (e: unknown) => {
    assert.ok(e instanceof type, `expected ${type.name}, got ${String(e)}`);
    assert.equal((e as Error).message, text);
    return true;
  });
}

/** The per-wire helpers of a lifecycle suite (call inside `forEachWire`). */
export function lifecycle(ctx: () => WireContext) {
  const cli = (...args: (string | number)[]) => ctx().server.cli(...args);
  const dump = (q: string) => dumpQueue(ctx().server, q);

  async function serverMs(): Promise<number> {
    const [s, us] = (await cli("TIME")) as [string, string];
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  }

  /** Runs `fn` and returns the server-time window around it. */
  async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; lo: number; hi: number }> {
    const lo = await serverMs();
    const value = await fn();
    return { value, lo, hi: await serverMs() };
  }

  function within(score: string | number, lo: number, hi: number, what: string): void {
    const n = Number(score);
    assert.ok(n >= lo && n <= hi, `${what} ${n} within [${lo}, ${hi}]`);
  }

  /**
   * The field a claim adds on wire 6 only: `lease_epoch` (declared difference D1). Both wires add
   * `processed_on` (see `leased`'s `on`).
   */
  async function epoch(): Promise<Record<string, string>> {
    if (ctx().wire !== 6) return {};
    const info = String(await cli("INFO", "server"));
    return { lease_epoch: /run_id:(\w+)/.exec(info)![1]! };
  }

  /** A refusal with the exact text that leaves the queue's keyspace as it was. */
  async function refusedUnchanged(q: string, run: () => Promise<unknown>, text: string, type?: ErrorClass) {
    const before = await dump(q);
    await refused(run, text, type);
    assert.deepEqual(await dump(q), before, `keyspace unchanged after: ${text}`);
  }

  /**
   * Adds one job and claims it: the queue must hold no other ready job. `on`: the row field the
   * lease wrote, `processed_on` = the claim's now (its deadline less the lease).
   */
  async function leased(q: string, payload = "p", opts: Parameters<typeof add>[3] = {}, leaseMs = 30_000) {
    const { id } = await add(ctx().conn, q, payload, opts);
    const job = await claim(ctx().conn, q, leaseMs);
    assert.ok(job && job.id === id, "claimed the job just added");
    const on = { processed_on: String(job.deadline - leaseMs) };
    return { id, token: job.attempts, deadline: job.deadline, on };
  }

  /** A job in `dead`, with one attempt used. */
  async function buried(q: string, opts: Parameters<typeof add>[3] = {}): Promise<string> {
    const { id, token } = await leased(q, "p", opts);
    assert.equal(
      await fail(ctx().conn, q, id, token, "boom", { backoffMs: 0, maxAttempts: 1, keep: 100 }),
      "dead",
    );
    return id;
  }

  /**
   * Subscribes to the queue's wake channel, a shard channel (`SSUBSCRIBE`: the wake is published
   * with `SPUBLISH`); `messages(run)` is what `run` published there. A sentinel `SPUBLISH` on a
   * second shard channel of the same slot, after `run`, marks where its messages end.
   */
  async function wakeCounter(q: string) {
    const sub = new Redis({ port: ctx().server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
    sub.on("error", () => {});
    await sub.connect();
    const wake = queueKey(q, "wake");
    const sentinel = `${queueKey(q, "")}sentinel`;
    const seen: [channel: string, message: string][] = [];
    let sentinels = 0;
    sub.on("smessage", (channel: string, message: string) => seen.push([channel, message]));
    await sub.ssubscribe(wake, sentinel);
    return {
      async messages(run: () => Promise<unknown>): Promise<string[]> {
        const start = seen.length;
        await run();
        await cli("SPUBLISH", sentinel, "x");
        sentinels += 1;
        const want = sentinels;
        await until(
          "the sentinel message",
          () => seen.filter(([c]) => c === sentinel).length >= want,
          5000,
          2,
        );
        return seen
          .slice(start)
          .filter(([c]) => c === wake)
          .map(([, m]) => m);
      },
      async close(): Promise<void> {
        await sub.quit().catch(() => sub.disconnect());
      },
    };
  }

  return { cli, dump, serverMs, timed, within, epoch, refusedUnchanged, leased, buried, wakeCounter };
}
