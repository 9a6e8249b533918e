/**
 * The operator measure: what the operator's reads and bulk actions cost on a queue of `jobs`
 * waiting jobs (a fifth of them scheduled), on both wires, one bench node each.
 *
 *   npx tsx bench/operate.ts [jobs]        # default 100,000
 *
 * Per wire: `listQueues` (the SCAN over every key), a `getJobs` page deep in `pending`, `drain()`
 * (wall time, calls, and the server's time per call of the transition from `INFO commandstats`:
 * the longest a bulk call holds the server), then the same jobs again and `obliterate()`.
 */
import { connect, Queue, type Wire } from "../src/index.js";
import { installModuleBrand, listQueues } from "../src/admin.js";
import { modulePath } from "../tools/module-path.js";
import { parseInfo, startServer } from "./server.js";

const jobs = Number(process.argv[2] ?? 100_000);

async function fill(q: Queue): Promise<void> {
  for (let done = 0; done < jobs; done += 1000) {
    const n = Math.min(1000, jobs - done);
    await q.addBulk(
      Array.from({ length: n }, (_, i) => ({
        payload: `job ${done + i}`,
        opts: (done + i) % 5 === 0 ? { delay: 3_600_000 } : {},
      })),
    );
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const value = await fn();
  return [value, performance.now() - t];
}

const rows: string[] = [];
for (const wire of [4, 6] as Wire[]) {
  const server = await startServer({ aof: false, ...(wire === 6 ? { module: modulePath() } : {}) });
  if (wire === 6) await installModuleBrand({ port: server.port });
  const conn = await connect({ port: server.port, wire });
  const q = new Queue("measured", conn);
  await fill(q);
  const [found, scanMs] = await timed(() => listQueues(conn));
  const [, pageMs] = await timed(() => q.getJobs("pending", { offset: Math.floor(jobs / 2), limit: 50 }));
  await conn.send("CONFIG", ["RESETSTAT"]);
  const [drained, drainMs] = await timed(() => q.drain());
  const stats = parseInfo(String(await conn.send("INFO", ["commandstats"])));
  const stat = stats.get(wire === 6 ? "cmdstat_emq.drain" : "cmdstat_evalsha") ?? "";
  const calls = Number(/calls=(\d+)/.exec(stat)?.[1]);
  const usPerCall = Number(/usec_per_call=([\d.]+)/.exec(stat)?.[1]);
  await fill(q);
  const [gone, obliterateMs] = await timed(() => q.obliterate());
  rows.push(
    `| ${wire} | ${jobs} | ${found.scanned} keys, ${scanMs.toFixed(0)} ms | ${pageMs.toFixed(1)} ms | ${drained} in ${drainMs.toFixed(0)} ms, ${calls} calls, ${(usPerCall / 1000).toFixed(1)} ms each | ${gone} in ${obliterateMs.toFixed(0)} ms |`,
  );
  await conn.close();
  await server.stop();
}
console.log("| wire | jobs | listQueues | getJobs page at the middle | drain() | obliterate() |");
console.log("|---|---:|---|---:|---|---|");
for (const r of rows) console.log(r);
