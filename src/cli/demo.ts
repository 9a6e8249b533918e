/**
 * The demo: enqueue a batch of jobs, claim and process them, show live progress, end with a
 * summary. Uses VALKEY_URL when set, else starts an embedded valkey-server (stopped on exit or
 * Ctrl-C). Usage: demo [jobs] (default 20000); DEMO_WIRE=6 runs on the native module.
 */
import { claim, connect, type Connection, enqueue, installModuleBrand, optionsFromUrl } from "../index.js";
import { type EmbeddedValkey, startEmbeddedValkey } from "./embedded-valkey.js";
import { modulePath } from "./module-path.js";

const total = Number(process.argv[2] ?? 20_000);
const wire = process.env.DEMO_WIRE === "6" ? 6 : 4;
const queue = `demo-${process.pid}`;
const CONCURRENCY = 50;

let server: EmbeddedValkey | undefined;
let conn: Connection | undefined;
let stopping = false;

async function shutdown(code: number): Promise<never> {
  stopping = true;
  await conn?.close().catch(() => {});
  await server?.stop().catch(() => {});
  process.exit(code);
}

process.once("SIGINT", () => {
  process.stdout.write("\ninterrupted: closing the connection and stopping the server\n");
  void shutdown(130);
});

function progress(label: string, done: number, started: number): void {
  const secs = (performance.now() - started) / 1000;
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stdout.write(
    `\r${label.padEnd(9)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${String(done).padStart(7)}/${total}` +
      `  ${(done / Math.max(secs, 1e-3)).toFixed(0).padStart(7)} jobs/s`,
  );
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
  console.log(`wire ${wire}, queue ${queue}, ${total} jobs, ${CONCURRENCY} concurrent claimers`);

  const started = performance.now();
  let added = 0;
  const batch = 500;
  for (let i = 0; i < total && !stopping; i += batch) {
    const n = Math.min(batch, total - i);
    await Promise.all(
      Array.from({ length: n }, (_, k) => enqueue(conn!, queue, JSON.stringify({ n: i + k }))),
    );
    added += n;
    progress("enqueued", added, started);
  }
  process.stdout.write("\n");

  const claimStart = performance.now();
  let processed = 0;
  let checksum = 0;
  const worker = async () => {
    while (!stopping) {
      const job = await claim(conn!, queue, 30_000);
      if (!job) return;
      checksum += (JSON.parse(job.payload.toString()) as { n: number }).n;
      processed += 1;
      if (processed % 250 === 0) progress("processed", processed, claimStart);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  progress("processed", processed, claimStart);
  process.stdout.write("\n");

  const secs = (performance.now() - started) / 1000;
  const expected = (total * (total - 1)) / 2;
  console.log(
    `summary: ${processed} jobs in ${secs.toFixed(2)} s = ${(processed / secs).toFixed(0)} jobs/s end to end` +
      ` (checksum ${checksum === expected ? "ok" : `MISMATCH ${checksum} != ${expected}`})`,
  );
}

main().then(
  () => shutdown(0),
  (err: unknown) => {
    console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
    return shutdown(1);
  },
);
