/**
 * Keyspace dumps for tests: the harness's dump (`harness/dump.ts`, every key read by its type)
 * as plain values to compare with `deepEqual`.
 */
import { Keyspace, type RawDump, type RawValue } from "../../harness/dump.js";
import { RespClient } from "../../harness/resp.js";

/** Reads a dump through a fresh connection to `port`. */
export async function readDump(port: number, read: (keys: Keyspace) => Promise<RawDump>): Promise<RawDump> {
  const client = await RespClient.connect(port);
  try {
    return await read(new Keyspace(client));
  } finally {
    await client.close();
  }
}

/**
 * A value as plain data, bytes decoded with `encoding`: a hash as an object, a zset as
 * `[member, score, …]` in rank order, a string as text, a list's items, a set's members sorted, a
 * stream's entries in order as `[id, field, value, …]`, another type as its name.
 */
export function plainValue(value: RawValue, encoding: BufferEncoding): unknown {
  const s = (b: Buffer) => b.toString(encoding);
  switch (value.type) {
    case "hash":
      return Object.fromEntries(value.fields.map(([f, v]) => [s(f), s(v)]));
    case "zset":
      return value.members.flatMap(([m, score]) => [s(m), score]);
    case "string":
      return s(value.value);
    case "list":
      return value.items.map(s);
    case "set":
      return value.members.map(s).sort();
    case "stream":
      return value.entries.map(([id, fields]) => [id, ...fields.map(s)]);
    case "other":
      return value.name;
  }
}

/** Key names decoded with `encoding` → `shape(value)`. */
export function plainDump<T>(
  dump: RawDump,
  encoding: BufferEncoding,
  shape: (value: RawValue) => T,
): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [key, value] of dump) out[Buffer.from(key, "latin1").toString(encoding)] = shape(value);
  return out;
}
