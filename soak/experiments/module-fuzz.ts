/**
 * Module fuzzing (wire 6): `calls` random `EMQ.*` calls, pipelined `batch` at a time against a
 * module node, generated from `seed` (printed, so a run can be replayed).
 *
 * Each call is one of:
 * * **malformed** (`fuzz-calls.ts`): unknown verbs, EMQ.VERSION with arguments, bad `numkeys`
 *   (negative, zero, huge, non-numeric), wrong value counts, broken layouts and names, values
 *   outside their grammar, ids without `JOB`, lease-gate refusals, huge and binary arguments,
 *   and well-formed calls sent to a database whose brand is `echomq:4.0.0` (the fence refuses).
 *   They name only the seeded fuzz queues `f1`, `f2` (jobs in every state, real ids and tokens,
 *   so a call that got past its refusal would have something to write), the wrong-typed queue
 *   `wt`, or garbage keys.
 * * **valid**: well-formed calls with random values on queue `live2` (any reply), and a checked
 *   life cycle on queue `live` (ENQUEUE → 1, CLAIM → that job, COMPLETE → 1).
 *
 * Batches alternate between the default user and an ACL user limited to `~emq:*` (so the server
 * extracts the module commands' keys for the ACL check, whatever `numkeys` says).
 *
 * Invariants: 0 crashes (PING answered and the same pid after every batch, no crash report in
 * the log), every malformed call answered with an error, and nothing written by a refused call:
 * after every batch every key of database 0 but `live`'s and `live2`'s, and every key of
 * database 2, must have its starting digest (`DEBUG DIGEST-VALUE`), and no key may appear.
 * `breaches` = malformed calls not refused + keys written + life-cycle replies not as expected.
 */
import { Redis } from "iovalkey";
import { connect, Queue, type Wire } from "../../src/index.js";
import { checkTargets, crashedOnItsOwn, measure, type Outcome, quietly, startFor, Tally } from "./common.js";
import { type Call, FORMS, malformed, Rng, type Target, wellFormed, wrongTyped } from "./fuzz-calls.js";
import { diff, digests, seedQueue } from "./seed.js";

interface ModuleFuzzParams {
  calls: number;
  batch: number;
  /** 0 = pick one (the outcome's params show the seed used). */
  seed: number;
  /** Share of valid calls. */
  validShare: number;
  /** Largest random payload of a valid call (bytes). */
  payloadMax: number;
  /**
   * 1: the first batch also carries one valid write (`EMQ.PAUSE` of `f1`) labelled malformed,
   * to show the checks catch a refused call that writes (it must count 2 breaches).
   */
  canary: number;
}

export const moduleFuzzDefaults = {
  soak: { calls: 1_000_000, batch: 1000, seed: 0, validShare: 0.3, payloadMax: 2048, canary: 0 },
  suite: { calls: 50_000, batch: 1000, seed: 0, validShare: 0.3, payloadMax: 2048, canary: 0 },
} satisfies Record<string, ModuleFuzzParams>;

const FUZZ_QUEUES = ["f1", "f2"];
const LIFECYCLE = 5;
const ACL = ["user fuzzer on >pw ~emq:* ~{emq}:version &* +@all"];

function client(port: number, db: number, user?: string): Redis {
  const opts = user === undefined ? {} : { username: user, password: "pw" };
  const r = new Redis({ host: "127.0.0.1", port, db, maxRetriesPerRequest: 0, ...opts });
  r.on("error", () => {});
  return r;
}

/** The first line of the log that says why the server died (a Rust panic's message, a signal). */
function crashLine(log: string): string {
  const lines = log.split("\n");
  const at = lines.findIndex((l) => /panicked at|crashed by signal|ASSERTION FAILED/.test(l));
  return at < 0
    ? "no crash report in the log"
    : lines
        .slice(at, at + 2)
        .join(" ")
        .trim();
}

/** A COMPLETEN reply whose every per-job outcome is a refusal's text (none is 1). */
function refusedEach(reply: unknown): boolean {
  const outcomes = Array.isArray(reply) ? reply[0] : undefined;
  return Array.isArray(outcomes) && outcomes.length > 0 && outcomes.every((o) => o !== 1);
}

/** Server pid as the server reports it. */
async function serverPid(r: Redis): Promise<number> {
  return Number(/process_id:(\d+)/.exec(await r.info("server"))?.[1]);
}

/** The refusal without what varies (verb, form, value found), for counting. */
function errorClass(err: Error): string {
  const m = err.message;
  if (/unknown command/.test(m)) return "ERR unknown command";
  if (/wrong number of arguments for/.test(m)) return "ERR wrong number of arguments";
  return m
    .replace(/^ERR EMQ\.[A-Z]+ /, "ERR EMQ.<VERB> ")
    .replace(/: EMQ\..*/, "")
    .replace(/found .*/, "found …")
    .replace(/ must be .*/, " must be …")
    .slice(0, 60);
}

export function moduleFuzz(wire: Wire, p: ModuleFuzzParams): Promise<Outcome> {
  const seed = p.seed === 0 ? (Date.now() ^ Math.floor(Math.random() * 2 ** 31)) >>> 0 : p.seed;
  return measure("module fuzz", wire, { ...p, seed }, async (out) => {
    if (wire !== 6) throw new Error("module fuzzing runs on wire 6 only");
    const server = await startFor(6, { acl: ACL });
    const rs: Redis[] = [];
    const open = (db: number, user?: string) => {
      const r = client(server.port, db, user);
      rs.push(r);
      return r;
    };
    try {
      const conn = await connect({ port: server.port, wire: 6 });
      const targets: Target[] = [];
      for (const q of FUZZ_QUEUES) targets.push({ q, jobs: await seedQueue(conn, q) });
      await new Queue("f2", conn).pause();
      await conn.close();
      const admin0 = open(0);
      const admin2 = open(2);
      // Every set a verb declares holds a string (flows' and schedules' sets too): each call refused.
      for (const t of ["pending", "active", "schedule", "done", "dead", "waiting", "outbox", "repeats"])
        await admin0.set(`emq:{wt}:${t}`, "x");
      await admin0.zadd("emq:{wt}:meta", 1, "paused");
      // Database 2: the same fuzz keys, under a wire-4 brand: the native fence refuses there.
      for (const key of await admin0.keys("emq:*")) await admin0.copy(key, key, "DB", 2);
      await admin2.set("{emq}:version", "echomq:4.0.0");
      const fuzzKey = (k: string) => !k.startsWith("emq:{live}:") && !k.startsWith("emq:{live2}:");
      const start0 = await digests(admin0, fuzzKey);
      const start2 = await digests(admin2, () => true);
      const pid = server.pid;
      const conns = [open(0), open(0, "fuzzer")];
      const fuzz2 = open(2);
      const rng = new Rng(seed);
      const kinds = new Tally();
      const refusals = new Tally();
      const examples: string[] = [];
      const liveTarget: Target = { q: "live2", jobs: [] };
      let malformedCount = 0;
      let notRefused = 0;
      let keysWritten = 0;
      let lifecycleBad = 0;
      let sent = 0;

      try {
        for (let b = 0; sent < p.calls; b++) {
          const n = Math.min(p.batch, p.calls - sent);
          const calls: Call[] = [];
          const lifeIds = Array.from({ length: LIFECYCLE }, () =>
            wellFormed(rng, FORMS[0]!, { q: "live", jobs: [] }, 8),
          );
          for (let i = 0; i < n - 3 * LIFECYCLE; i++) {
            if (rng.chance(p.validShare))
              calls.push(wellFormed(rng, rng.pick(FORMS), liveTarget, p.payloadMax));
            else if (rng.chance(0.05)) calls.push(wrongTyped(rng, "wt", p.payloadMax));
            else calls.push(malformed(rng, rng.pick(targets), FUZZ_QUEUES, p.payloadMax));
          }
          if (b === 0 && p.canary === 1)
            calls.push({ verb: "EMQ.PAUSE", args: ["1", "emq:{f1}:meta"], malformed: true, kind: "canary" });
          // The checked life cycle, in order, at random places among the others.
          const life: Call[] = [
            ...lifeIds.map((c) => ({ ...c, kind: "life:enqueue" })),
            ...lifeIds.map(() => ({
              verb: "EMQ.CLAIM",
              args: ["3", "emq:{live}:pending", "emq:{live}:active", "emq:{live}:", "60000"],
              malformed: false,
              kind: "life:claim",
            })),
            ...lifeIds.map((c) => ({
              verb: "EMQ.COMPLETE",
              args: ["3", "emq:{live}:active", "emq:{live}:done", "emq:{live}:", c.args[3]!, "1", "ok", "0"],
              malformed: false,
              kind: "life:complete",
            })),
          ];
          const positions = Array.from({ length: life.length }, () => rng.int(calls.length + 1)).sort(
            (x, y) => x - y,
          );
          positions.forEach((at, i) => {
            calls.splice(at + i, 0, life[i]!);
          });

          const main = conns[b % 2]!;
          const pipe0 = main.pipeline();
          const pipe2 = fuzz2.pipeline();
          const order0: Call[] = [];
          const order2: Call[] = [];
          for (const c of calls) {
            (c.db2 ? pipe2 : pipe0).call(c.verb, ...c.args);
            (c.db2 ? order2 : order0).push(c);
          }
          let results: [Error | null, unknown][][];
          try {
            results = (await Promise.all([pipe0.exec(), pipe2.exec()])) as [Error | null, unknown][][];
          } catch (err) {
            out.notes.push(`batch ${b}: the pipeline failed: ${String(err)}`);
            out.crashes += 1;
            break;
          }
          sent += calls.length;
          const lifeIdList = lifeIds.map((c) => String(c.args[3]));
          let claimed = 0;
          [order0, order2].forEach((order, side) => {
            order.forEach((c, i) => {
              const [err, reply] = results[side]![i]!;
              if (c.malformed) {
                malformedCount += 1;
                kinds.add(c.kind);
                // COMPLETEN answers each job's refusal inside its reply: refused when every job was.
                const perJob = c.verb === "EMQ.COMPLETEN" && !err && refusedEach(reply);
                if (err) refusals.add(errorClass(err));
                else if (perJob) refusals.add("COMPLETEN: every job refused in its reply");
                else {
                  notRefused += 1;
                  if (examples.length < 5)
                    examples.push(
                      `${c.kind}: ${c.verb} ${c.args.map((a) => String(a).slice(0, 30)).join(" ")} → ${String(reply)}`,
                    );
                }
              } else if (c.kind.startsWith("life:")) {
                const ok =
                  c.kind === "life:claim"
                    ? !err &&
                      Array.isArray(reply) &&
                      String(reply[0]) === lifeIdList[claimed++] &&
                      Number(reply[2]) === 1
                    : !err && Number(reply) === 1;
                if (!ok) {
                  lifecycleBad += 1;
                  if (examples.length < 5)
                    examples.push(`${c.kind} → ${err ? err.message : JSON.stringify(reply)}`);
                }
              }
            });
          });
          if (lifecycleBad > 0) for (const k of await admin0.keys("emq:{live}:*")) await admin0.del(k);

          const changed0 = diff(start0, await digests(admin0, fuzzKey));
          const changed2 = diff(start2, await digests(admin2, () => true));
          if (changed0.length + changed2.length > 0) {
            keysWritten += changed0.length + changed2.length;
            out.notes.push(
              `batch ${b}: keys written by refused calls: ${[...changed0, ...changed2].slice(0, 5).join(", ")}`,
            );
            break; // the keyspace is no longer the seeded one: later batches would not tell
          }
          if ((await admin0.ping()) !== "PONG" || (await serverPid(admin0)) !== pid) {
            out.crashes += 1;
            break;
          }
        }
      } catch (err) {
        // A check after a batch lost its connection: the server went away (a crash is counted
        // below, with the module's panic line); anything else is the experiment's own failure.
        if ((await crashedOnItsOwn(server)) === 0) throw err;
      }
      const crashed = await crashedOnItsOwn(server);
      if (crashed > 0) out.notes.push(`the server crashed: ${crashLine(server.logTail(100_000))}`);
      out.crashes += crashed;
      out.acknowledged = sent;
      out.breaches = notRefused + keysWritten + lifecycleBad;
      out.notes.push(
        `seed ${seed}; ${sent} calls, ${malformedCount} malformed (${kinds.text(12)})`,
        `refusals: ${refusals.text(8)}`,
        `malformed not refused ${notRefused}; keys written by refused calls ${keysWritten}; life-cycle replies wrong ${lifecycleBad}`,
        ...examples,
      );
      checkTargets(out);
    } finally {
      await quietly(...rs.map((r) => r.quit().catch(() => r.disconnect())));
      await server.stop();
    }
  });
}
