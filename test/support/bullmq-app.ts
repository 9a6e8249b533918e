/**
 * The BullMQ app of test/fixtures/bullmq-app.ts for the tests that run it: as written (on BullMQ,
 * which loads iovalkey here as its client) and with only its import changed to `echomq/bullmq`.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createIORedisClient, RedisConnection } from "bullmq";
import { Redis as IOValkey } from "iovalkey";

// BullMQ 6 loads the optional ioredis driver; this repository has iovalkey (its fork, the same
// API), registered as BullMQ's client factory, so the app passes BullMQ plain connection options.
RedisConnection.clientFactory = (opts) => createIORedisClient(new IOValkey(opts as never)) as never;

type App = {
  runApp(connection: Record<string, unknown>, tag: string): Promise<Record<string, unknown>>;
};

const FIXTURE = fileURLToPath(new URL("../fixtures/bullmq-app.ts", import.meta.url));
const ENTRY = fileURLToPath(new URL("../../src/bullmq.ts", import.meta.url));

/** The app as written, importing BullMQ. */
export async function original(): Promise<App> {
  return (await import(pathToFileURL(FIXTURE).href)) as App;
}

/** The app with its one import changed, as a module of its own. */
export async function ported(): Promise<App> {
  const source = readFileSync(FIXTURE, "utf8");
  const changed = source.replace(/from "bullmq";/, `from ${JSON.stringify(ENTRY)};`);
  assert.notEqual(changed, source, "the app imports bullmq");
  const file = join(tmpdir(), `echomq-bullmq-app-${process.pid}-${Date.now()}.ts`);
  writeFileSync(file, changed);
  try {
    return (await import(pathToFileURL(file).href)) as App;
  } finally {
    rmSync(file, { force: true });
  }
}
