/**
 * What the module tests share: brands, ids and exact refusal texts, raw calls to a module server,
 * the keys and arguments of `EMQ.ENQUEUE` / `EMQ.CLAIM`, whole-keyspace dumps, replication and
 * INFO helpers.
 */
import assert from "node:assert/strict";
import { type RespArg, type RespReply, rawCommands } from "./resp.js";
import { PROTOCOL } from "../../src/protocol.js";
import { keysOf } from "../../src/jobs/calls.js";
import { type KeyType, keyOf, queueKey } from "../../src/keyspace.js";
import { plainDump, plainValue, readDump } from "./dump.js";
import type { ValkeyServer } from "./valkey.js";
import { until } from "./until.js";

export const V = PROTOCOL.brands.key;
export const WIRE6 = PROTOCOL.brands.wire6;
export const WIRE4 = PROTOCOL.brands.wire4;
export const ID_A = "JOB0000000000A";
export const ID_B = "JOB0000000000B";
export const LAYOUT = (verb: string) => `ERR EMQ.${verb} keys do not match the wire-4 layout`;
export const ENQUEUE_FORM = "EMQ.ENQUEUE 2 <row> <pending> <id> <payload>";
export const CLAIM_FORM = "EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>";
export const WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";
export const READONLY = "READONLY You can't write against a read only replica.";
export const OOM = "OOM command not allowed when used memory > 'maxmemory'.";
/** The verbs these tests drive; a wire-6 connector here requires just these. */
export const VERBS = ["ENQUEUE", "CLAIM"];
/** The job-core verb tokens, from the protocol data (protocol/protocol.json). */
export const JOB_CORE: readonly string[] = PROTOCOL.job_core;

/* ------------------------------------------------------------------ helpers */

interface Auth {
  user?: string;
  password?: string;
}

/** One command on a fresh socket; a server error comes back as an Error value. */
export async function call(port: number, args: readonly RespArg[], auth: Auth = {}): Promise<RespReply> {
  const [reply] = await rawCommands(port, [args], auth);
  return reply ?? null;
}

/** The server's error text of a reply that must be an error. */
export function refusalOf(reply: RespReply): string {
  assert.ok(reply instanceof Error, `expected an error reply, got ${JSON.stringify(reply)}`);
  return reply.message;
}

/** Keys from the data (`protocol.json`): a queue key of a type, a row (the id taken as given). */
export const k = (q: string, type: KeyType) => queueKey(q, type);
export const row = (q: string, id: string) => keyOf(q, "row", id);
export const enqueueArgs = (q: string, id: string, payload: RespArg = "p"): RespArg[] => [
  "EMQ.ENQUEUE",
  2,
  row(q, id),
  k(q, "pending"),
  id,
  payload,
];
export const claimKeys = (q: string) => keysOf("CLAIM", q);
export const claimArgs = (q: string, lease: RespArg = 30000): RespArg[] => [
  "EMQ.CLAIM",
  3,
  ...claimKeys(q),
  lease,
];

/** Writes a pending job the way enqueue does, with plain commands (no fence involved). */
export async function seedJob(port: number, q: string, id: string, payload = "p"): Promise<void> {
  const replies = await rawCommands(port, [
    ["HSET", row(q, id), "state", "pending", "attempts", "0", "payload", payload],
    ["ZADD", k(q, "pending"), "0", id],
  ]);
  for (const r of replies) assert.ok(!(r instanceof Error), String(r));
}

type Dump = Record<string, { type: string; value: unknown }>;

/** Every key of the current db with its type and full value (bytes as latin1), for equality checks. */
export async function dumpAll(port: number): Promise<Dump> {
  const dump = await readDump(port, (keys) => keys.dumpAll());
  return plainDump(dump, "latin1", (value) => ({
    type: value.type === "other" ? value.name : value.type,
    value: plainValue(value, "latin1"),
  }));
}

/** The server's dirty counter: it moves on every write, even one that rewrites the same value. */
export async function dirty(port: number): Promise<number> {
  const info = String(await call(port, ["INFO", "persistence"]));
  const m = /^rdb_changes_since_last_save:(\d+)/m.exec(info);
  assert.ok(m, "INFO persistence has rdb_changes_since_last_save");
  return Number(m[1]);
}

export async function runId(port: number): Promise<string> {
  const m = /^run_id:([0-9a-f]+)/m.exec(String(await call(port, ["INFO", "server"])));
  assert.ok(m, "INFO server has run_id");
  return m[1]!;
}

export function infoNumber(info: RespReply, field: string): number {
  const m = new RegExp(`^${field}:(\\d+)`, "m").exec(String(info));
  return m ? Number(m[1]) : Number.NaN;
}

/** Waits until the replica has processed everything the primary has sent (offsets equal). */
export async function replicated(primary: ValkeyServer, replica: ValkeyServer): Promise<void> {
  let want = 0;
  let have = 0;
  await until(
    () => `the replica's offset ${have} to reach the primary's ${want}`,
    async () => {
      want = infoNumber(await primary.cli("INFO", "replication"), "master_repl_offset");
      have = infoNumber(await replica.cli("INFO", "replication"), "slave_repl_offset");
      return want > 0 && have === want;
    },
  );
}

/** Server time in ms, as the scripts compute it. */
export async function serverMs(port: number): Promise<number> {
  const [sec, usec] = (await call(port, ["TIME"])) as string[];
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

/** Runs `args`, asserts the refusal text and that nothing was written (keyspace and dirty counter). */
export async function assertRefusedUnchanged(
  port: number,
  args: readonly RespArg[],
  text: string,
  auth: Auth = {},
): Promise<void> {
  const before = await dumpAll(port);
  const d0 = await dirty(port);
  assert.equal(refusalOf(await call(port, args, auth)), text, `reply to ${args.slice(0, 2).join(" ")}`);
  assert.deepEqual(await dumpAll(port), before, "the keyspace is unchanged");
  assert.equal(await dirty(port), d0, "nothing was written (dirty counter)");
}

export async function resetTo(server: ValkeyServer, brand: string | null): Promise<void> {
  await server.cli("FLUSHALL", "SYNC");
  if (brand !== null) await server.cli("SET", V, brand);
}

/** `[k1, v1, k2, v2, …]` → `[[k1, v1], [k2, v2], …]`. */
export function chunk(flat: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i] as string, flat[i + 1] as string]);
  return pairs;
}
