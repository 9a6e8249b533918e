/**
 * The demo: a producer adds a batch of jobs to a Queue, a Worker processes them (some fail once
 * and are retried), with live progress and a closing summary. Uses VALKEY_URL when set, else
 * starts an embedded valkey-server (stopped on exit or Ctrl-C).
 * Usage: demo [jobs] (default 20000). DEMO_WIRE=6 runs on the native module.
 */
import { connect, type Connection, Queue, Worker } from "../src/index.js";
import { optionsFromUrl } from "../src/protocol.js";
import { installModuleBrand } from "../src/admin.js";
import { type EmbeddedValkey, startEmbeddedValkey } from "./embedded-valkey.js";
import { modulePath } from "./module-path.js";

const total = Number(process.argv[2] ?? 20_000);
const wire = process.env.DEMO_WIRE === "6" ? 6 : 4;
const queueName = `demo-${process.pid}`;
const tty = process.stdout.isTTY === true;

let server: EmbeddedValkey | undefined;
let conn: Connection | undefined;
let worker: Worker | undefined;

async function shutdown(code: number): Promise<never> {
  await worker?.close().catch(() => {});
  await conn?.close().catch(() => {});
  await server?.stop().catch(() => {});
  process.exit(code);
}

process.once("SIGINT", () => {
  process.stdout.write("\ninterrupted: closing the worker, the connection and the server\n");
  void shutdown(130);
});

let lastLine = 0;
function progress(label: string, done: number, started: number, final = false): void {
  const now = performance.now();
  if (!final && !tty && now - lastLine < 1000) return;
  lastLine = now;
  const secs = (now - started) / 1000;
  const width = 30;
  const filled = Math.round((done / total) * width);
  const line =
    `${label.padEnd(9)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${String(done).padStart(7)}/${total}` +
    `  ${(done / Math.max(secs, 1e-3)).toFixed(0).padStart(7)} jobs/s`;
  process.stdout.write(tty ? `\r${line}${final ? "\n" : ""}` : `${line}\n`);
}

async function main(): Promise<void> {
  if (!Number.isInteger(total) || total <= 0)
    throw new Error(`jobs must be a positive integer, got ${process.argv[2]}`);
  let target: { host?: string; port?: number; username?: string; password?: string; db?: number };
  if (process.env.VALKEY_URL) {
    target = optionsFromUrl(process.env.VALKEY_URL);
    console.log(`using ${process.env.VALKEY_URL}`);
  } else {
    server = await startEmbeddedValkey(wire === 6 ? { module: modulePath() } : {});
    target = { host: server.host, port: server.port };
    console.log(`started an embedded valkey-server on ${server.host}:${server.port}`);
  }
  if (wire === 6) await installModuleBrand(target); // a module node is branded by EMQ.INSTALL
  conn = await connect({ ...target, wire });
  const queue = new Queue(queueName, conn);
  console.log(`wire ${wire}, queue ${queueName}, ${total} jobs; every 100th job fails once and is retried`);

  const started = performance.now();
  for (let i = 0; i < total; i += 1000) {
    const n = Math.min(1000, total - i);
    await queue.addBulk(Array.from({ length: n }, (_, k) => ({ payload: JSON.stringify({ n: i + k }) })));
    progress("added", i + n, started, i + n === total);
  }

  let processed = 0;
  let retried = 0;
  let checksum = 0;
  const workStart = performance.now();
  const finished = new Promise<void>((resolve) => {
    worker = new Worker(
      queue,
      async (job) => {
        const { n } = job.json<{ n: number }>();
        if (n % 100 === 0 && job.attempts === 1) throw new Error(`job ${n} fails on its first attempt`);
        return n;
      },
      { concurrency: 50, attempts: 3, backoff: { type: "fixed", delayMs: 100 }, promoteEveryMs: 100 },
    );
    worker.on("completed", (_job, result) => {
      processed += 1;
      checksum += result as number;
      progress("processed", processed, workStart);
      if (processed === total) resolve();
    });
    worker.on("retrying", () => {
      retried += 1;
    });
    worker.on("error", (err) => console.error(`worker error: ${String(err)}`));
  });
  await finished;
  progress("processed", processed, workStart, true);
  await worker?.close();

  const secs = (performance.now() - started) / 1000;
  const expected = (total * (total - 1)) / 2;
  const counts = await queue.counts();
  console.log(
    `summary: ${processed} jobs (${retried} retried once) in ${secs.toFixed(2)} s = ${(processed / secs).toFixed(0)} jobs/s end to end;` +
      ` checksum ${checksum === expected ? "ok" : `MISMATCH ${checksum} != ${expected}`};` +
      ` kept ${counts.completed} completed rows (retention), ${counts.pending + counts.active + counts.scheduled} left`,
  );
}

main().then(
  () => shutdown(0),
  (err: unknown) => {
    console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
    return shutdown(1);
  },
);
