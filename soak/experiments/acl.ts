/**
 * ACL: a user limited to queue `a` — `~emq:{a}:*`, read-only `%R~{emq}:version` for the fence,
 * and the wake channel `&emq:{a}:wake` — works on `a` and cannot touch queue `b` (seeded with
 * jobs in every state by the default user) through any verb:
 *
 * * every verb with `b`'s keys — wire 4: `EVALSHA` of every script (through `Connection.eval`);
 *   wire 6: every `EMQ.*` job-core verb — with real ids and lease tokens of `b`'s jobs, and
 *   mixed variants (the anchor `b`'s and the other keys `a`'s, and the reverse); on wire 6 also
 *   with a `numkeys` that lies (the server checks the declared key positions regardless);
 * * every public host step and `Queue` method on `b`, reads included, and a `Worker` on `b`;
 * * a raw `EVAL` whose body writes `b`'s keys without declaring them.
 *
 * `breaches` = keys of `b` changed + calls not refused with `NOPERM` (inside a script the
 * server's text is `ERR ACL failure in script: …`) + jobs of `b` a worker ran. Calls that declare no key of
 * `b` (wire 4: the script's keys passed as arguments, `numkeys` 0) cannot reach `b` by
 * construction; they must fail (any error) and change nothing. Targets: 0 breaches, every job
 * added on `a` completed (`stuck` counts the others).
 *
 * A note (no target) also shows what a user granted queue `c`'s keys but not its wake channel
 * gets from an add and a Worker.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "iovalkey";
import { type Connection, connect, Queue, type Wire, Worker } from "../../src/index.js";
import {
  SCRIPTS,
  reap,
  promote,
  reschedule,
  extend,
  fail,
  claim,
  complete,
  requeue,
} from "../../src/protocol.js";
import { checkTargets, measure, type Outcome, quietly, startFor, Tally, waitFor } from "./common.js";
import { type Arg, FORMS, type Form, type KeyType, keyOf, Rng } from "./fuzz-calls.js";
import { diff, digests, type SeedJob, seedQueue } from "./seed.js";

interface AclParams {
  /** Jobs the limited user adds and processes on `a`. */
  jobs: number;
  /** Times the whole set of calls on `b` is sent. */
  rounds: number;
  /** 1: the user is also granted `~emq:{b}:*`, to show the checks count the breaches that follow. */
  canary: number;
}

export const aclDefaults = {
  soak: { jobs: 5000, rounds: 20, canary: 0 },
  suite: { jobs: 200, rounds: 1, canary: 0 },
} satisfies Record<string, AclParams>;

const USER = "user u on >pw ~emq:{a}:* %R~{emq}:version &emq:{a}:wake +@all";
/** The same grant on queue c without its wake channel: measured, not a target (see the notes). */
const NO_WAKE = "user v on >pw ~emq:{c}:* %R~{emq}:version +@all";

interface Attempt {
  label: string;
  call: () => Promise<unknown>;
  /** False for calls that declare no key of b: any refusal will do. */
  declaresB: boolean;
}

/** The values of a well-formed call of `form` for `job` (or a fresh id). */
function values(form: Form, job: SeedJob | undefined): Arg[] {
  const id = job?.id ?? "JOB00000000000";
  const v: Record<string, Arg> = {
    id,
    bytes: "x",
    ms: "60000",
    delay: "0",
    count: "100",
    positive: "5",
    token: String(job?.token ?? 1),
    priority: "0",
    limit: "100",
  };
  return form.values.map((kind) => v[kind] as Arg);
}

/** Every form's call on b (each fit job), and with the anchor's queue and the others' crossed. */
function verbCalls(conn: Connection, seed: readonly SeedJob[]): Attempt[] {
  const out: Attempt[] = [];
  const scriptOf = (verb: string) => SCRIPTS.get(verb);
  for (const form of FORMS.filter((f) => f.verb !== "INSTALL")) {
    const fit = ["EXTEND", "COMPLETE", "FAIL", "RESCHEDULE", "REQUEUE"].includes(form.verb)
      ? seed.filter((j) => j.state === "active")
      : form.verb === "RETRY"
        ? seed.filter((j) => j.state === "dead")
        : form.verb === "REMOVE"
          ? seed.filter((j) => j.state !== "active")
          : [undefined];
    for (const job of fit.slice(0, 3)) {
      const vals = values(form, job);
      const id = String(vals[0] ?? "");
      const layouts: [string, (i: number) => string][] = [["b", () => "b"]];
      if (form.keys.length > 1) {
        layouts.push(["anchor b, others a", (i) => (i === form.anchor ? "b" : "a")]);
        layouts.push(["anchor a, others b", (i) => (i === form.anchor ? "a" : "b")]);
      }
      for (const [name, queueAt] of layouts) {
        const keys = form.keys.map((t: KeyType, i) => keyOf(t, queueAt(i), id));
        const label = `${form.verb} (${name})`;
        const script = scriptOf(form.verb);
        if (conn.wire === 4 && script)
          out.push({ label, call: () => conn.eval(script, keys, vals), declaresB: true });
        if (conn.wire === 6) {
          out.push({
            label,
            call: () => conn.send(`EMQ.${form.verb}`, [keys.length, ...keys, ...vals]),
            declaresB: true,
          });
          out.push({
            label: `${label}, numkeys 0`,
            call: () => conn.send(`EMQ.${form.verb}`, [0, ...keys, ...vals]),
            declaresB: true,
          });
        }
        if (conn.wire === 4 && script && name === "b")
          out.push({
            label: `${form.verb} (keys as arguments, numkeys 0)`,
            call: () => conn.send("EVALSHA", [script.sha1, 0, ...keys, ...vals]),
            declaresB: false,
          });
      }
    }
  }
  return out;
}

/** The public host steps and Queue methods on b, reads included. */
function apiCalls(conn: Connection, seed: readonly SeedJob[]): Attempt[] {
  const q = new Queue("b", conn);
  const active = seed.find((j) => j.state === "active")!;
  const dead = seed.find((j) => j.state === "dead")!;
  const pending = seed.find((j) => j.state === "pending")!;
  const calls: [string, () => Promise<unknown>][] = [
    ["Queue.add", () => q.add("no")],
    ["Queue.add delayed", () => q.add("no", { delay: 1000, priority: 1 })],
    ["Queue.addBulk", () => q.addBulk([{ payload: "no" }, { payload: "no" }])],
    ["Queue.pause", () => q.pause()],
    ["Queue.resume", () => q.resume()],
    ["Queue.remove", () => q.remove(pending.id)],
    ["Queue.retry", () => q.retry(dead.id)],
    ["Queue.counts", () => q.counts()],
    ["Queue.getJob", () => q.getJob(pending.id)],
    ["claim", () => claim(conn, "b", 60_000)],
    ["extend", () => extend(conn, "b", active.id, active.token, 60_000)],
    ["complete", () => complete(conn, "b", active.id, active.token, "r", 100)],
    ["fail", () => fail(conn, "b", active.id, active.token, "e", { backoffMs: 0, maxAttempts: 9, keep: 10 })],
    ["promote", () => promote(conn, "b", 100)],
    ["reap", () => reap(conn, "b", { limit: 100, maxAttempts: 9, keep: 10 })],
    ["requeue", () => requeue(conn, "b", active.id, active.token, 9)],
  ];
  if (conn.wire === 6) {
    calls.push(["reschedule", () => reschedule(conn, "b", active.id, active.token, 1000)]);
  }
  return calls.map(([label, call]) => ({ label, call, declaresB: true }));
}

/** Raw EVAL bodies that write b's keys without declaring them. */
function evalCalls(conn: Connection, seed: readonly SeedJob[]): Attempt[] {
  const pending = seed.find((j) => j.state === "pending")!;
  const bodies = [
    `return redis.call('ZADD', 'emq:{b}:pending', 0, 'JOB00000000000')`,
    `return redis.call('DEL', 'emq:{b}:job:${pending.id}')`,
    `return redis.call('HSET', 'emq:{b}:meta', 'paused', '1')`,
    `return redis.call('ZPOPMIN', 'emq:{b}:pending')`,
  ];
  return bodies.map((body) => ({
    label: `EVAL ${body.slice(14, 40)}…`,
    call: () => conn.send("EVAL", [body, 0]),
    declaresB: true,
  }));
}

/** The server's ACL refusal: `NOPERM …`, or inside a script `ERR ACL failure in script: …`. */
const isNoperm = (err: unknown) =>
  err instanceof Error && /^NOPERM|^ERR ACL failure in script/.test(err.message);

function shuffled<T>(xs: readonly T[], rng: Rng): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * A user granted a queue's keys but not its wake channel: what an add and a Worker get. The wake
 * is a notice (scripts publish it with `redis.pcall`), so the add works on both wires; the
 * Worker cannot subscribe and stops with NOPERM.
 */
async function withoutWakeChannel(port: number, wire: Wire, admin: Connection): Promise<string> {
  const v = await connect({ port, wire, username: "v", password: "pw" });
  const text = (err: unknown) => (err instanceof Error ? err.message.slice(0, 70) : String(err));
  try {
    const add = await new Queue("c", v).add("x").then(
      () => "ok",
      (err: unknown) => text(err),
    );
    const rows = Number(await admin.send("ZCARD", ["emq:{c}:pending"]));
    const w = new Worker(new Queue("c", v), () => {});
    w.on("error", () => {});
    const ready = await w.ready.then(
      () => "ok",
      (err: unknown) => text(err),
    );
    await quietly(w.close());
    return `user without &emq:{c}:wake: add → ${add}; jobs written ${rows}; Worker.ready → ${ready}`;
  } finally {
    await quietly(v.close());
  }
}

export function acl(wire: Wire, p: AclParams): Promise<Outcome> {
  return measure("acl", wire, { ...p }, async (out) => {
    const server = await startFor(wire, { acl: [p.canary === 1 ? `${USER} ~emq:{b}:*` : USER, NO_WAKE] });
    let admin: Connection | undefined;
    let u: Connection | undefined;
    const workers: Worker[] = [];
    try {
      admin = await connect({ port: server.port, wire }); // wire 4: brands the node (SET NX)
      const seed = await seedQueue(admin, "b");
      for (const script of [...SCRIPTS.values()]) await admin.send("SCRIPT", ["LOAD", script.source]);
      u = await connect({ port: server.port, wire, username: "u", password: "pw", name: "emq-limited" });

      // 1. The limited user works on a: add, process, pause and resume.
      const aQueue = new Queue("a", u);
      const ids = new Set<string>();
      for (let i = 0; i < p.jobs; i += 500)
        for (const r of await aQueue.addBulk(
          Array.from({ length: Math.min(500, p.jobs - i) }, () => ({ payload: "a" })),
        ))
          ids.add(r.id);
      out.acknowledged = ids.size;
      const done = new Set<string>();
      const aErrors = new Tally();
      const wa = new Worker(aQueue, (job) => void done.add(job.id), { concurrency: 10, keepCompleted: 0 });
      workers.push(wa);
      wa.on("error", (err) => aErrors.add(err instanceof Error ? err.message.slice(0, 60) : String(err)));
      await wa.ready;
      await waitFor(() => done.size >= ids.size, 60_000, 20);
      const pauseOk = (await aQueue.pause()) === true && (await aQueue.resume()) === true;
      out.stuck = [...ids].filter((id) => !done.has(id)).length;
      if (!pauseOk) out.failures.push("the limited user could not pause and resume a");

      // 2. Everything on b, `rounds` times; then b's keys against their starting digests.
      const dump = (admin.client as Redis).duplicate();
      const isB = (k: string) => k.startsWith("emq:{b}:");
      const before = await digests(dump, isB);
      const attempts = [...verbCalls(u, seed), ...apiCalls(u, seed), ...evalCalls(u, seed)];
      const notRefused = new Tally();
      const otherRefusals = new Tally();
      let refused = 0;
      let sent = 0;
      for (let r = 0; r < p.rounds; r++) {
        const rng = new Rng(r + 1);
        for (const a of shuffled(attempts, rng)) {
          sent += 1;
          try {
            await a.call();
            notRefused.add(`${a.label}: accepted`);
          } catch (err) {
            if (isNoperm(err)) refused += 1;
            else if (a.declaresB)
              notRefused.add(`${a.label}: ${err instanceof Error ? err.message.slice(0, 50) : String(err)}`);
            else otherRefusals.add(err instanceof Error ? err.message.slice(0, 50) : String(err));
          }
        }
      }
      // A worker of the limited user on b runs nothing.
      let ranOnB = 0;
      const wb = new Worker(
        new Queue("b", u),
        () => {
          ranOnB += 1;
        },
        {
          concurrency: 5,
          idleCheckMs: 100,
        },
      );
      workers.push(wb);
      wb.on("error", () => {});
      await Promise.race([wb.ready.catch(() => {}), sleep(1000)]);
      await sleep(500);
      await quietly(wb.close());
      const changed = diff(before, await digests(dump, isB));
      dump.disconnect();

      // 3. a still works afterwards.
      const probe = await aQueue.add("probe");
      if (!(await waitFor(() => done.has(probe.id), 10_000, 20)))
        out.failures.push("a stopped working after the calls on b");

      out.notes.push(await withoutWakeChannel(server.port, wire, admin));

      const declared = attempts.filter((a) => a.declaresB).length * p.rounds;
      out.breaches = changed.length + notRefused.total + ranOnB;
      out.notes.push(
        `${sent} calls on b (${declared} declaring b's keys, ${attempts.length} distinct): ${refused} refused with NOPERM`,
        `not refused with NOPERM: ${notRefused.text(4)}`,
        `keys of b changed ${changed.length}${changed.length ? ` (${changed.slice(0, 3).join(", ")})` : ""}; jobs of b a worker ran ${ranOnB}`,
        `calls declaring no key of b refused by: ${otherRefusals.text(2)}`,
        `on a: ${[...ids].filter((id) => done.has(id)).length}/${ids.size} completed, pause/resume ${pauseOk ? "ok" : "refused"}; worker errors: ${aErrors.text(2)}`,
      );
      checkTargets(out);
    } finally {
      await quietly(...workers.map((w) => w.close()));
      await quietly(u?.close(), admin?.close());
      await server.stop();
    }
  });
}
