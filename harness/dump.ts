/**
 * A keyspace, read as it is: every key found (SCAN MATCH under each queue's hashtag, or the whole
 * server), each read by its type — hash fields and values, zset members and scores in rank order,
 * strings, lists, sets — bytes kept as bytes. The harness compares these dumps (compare.ts), the
 * stand shows them, and the tests read them through test/support/dump.ts.
 */
import { type Command, ok, type Reply, type RespClient, text } from "./resp.js";
import { queueKey as keyText } from "../src/keyspace.js";

export type RawValue =
  | { type: "string"; value: Buffer }
  | { type: "hash"; fields: [Buffer, Buffer][] }
  | { type: "zset"; members: [Buffer, string][] }
  | { type: "list"; items: Buffer[] }
  | { type: "set"; members: Buffer[] }
  /**
   * A stream: its entries in order (id, then field, value, …), and from `XINFO STREAM` its
   * entries-added and last-generated-id (the next id depends on it).
   */
  | { type: "stream"; entries: [string, Buffer[]][]; added: string; last: string }
  | { type: "other"; name: string };

/** Key (latin1) → value, keys sorted. */
export type RawDump = Map<string, RawValue>;

/** Escapes glob characters so a queue name matches itself in SCAN MATCH. */
function escapeGlob(name: string): string {
  return name.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** Reads keyspaces through one connection. */
export class Keyspace {
  constructor(readonly client: RespClient) {}

  /**
   * Every key under each queue's hashtag (SCAN MATCH emq:{<q>}:*; names as latin1 text), plus
   * `extra`, read type by type.
   */
  async dumpQueues(queues: readonly string[], extra: readonly Buffer[] = []): Promise<RawDump> {
    const keys = new Set<string>(extra.map((k) => k.toString("latin1")));
    for (const q of queues) for (const k of await this.scan(`${keyText(escapeGlob(q), "")}*`)) keys.add(k);
    return this.read([...keys].sort());
  }

  /** Every key of the server. */
  async dumpAll(): Promise<RawDump> {
    return this.read((await this.scan("*")).sort());
  }

  private async scan(pattern: string): Promise<string[]> {
    const out: string[] = [];
    let cursor = "0";
    do {
      const reply = ok(
        await this.client.one("SCAN", cursor, "MATCH", Buffer.from(pattern, "latin1"), "COUNT", 100000),
        "SCAN",
      );
      if (reply.t !== "array" || reply.v[1]?.t !== "array") throw new Error("SCAN: unexpected reply");
      cursor = text(reply.v[0]);
      for (const k of reply.v[1].v) out.push(text(k));
    } while (cursor !== "0");
    return out;
  }

  /** TYPE plus the read of each common type in one pipeline, then the rare types. */
  private async read(keys: readonly string[]): Promise<RawDump> {
    const dump: RawDump = new Map();
    if (keys.length === 0) return dump;
    const commands: Command[] = keys.flatMap((key) => {
      const k = Buffer.from(key, "latin1");
      return [
        ["TYPE", k],
        ["HGETALL", k],
        ["ZRANGE", k, 0, -1, "WITHSCORES"],
        ["GET", k],
      ];
    });
    const replies = await this.client.call(commands);
    const rare: { key: string; type: string }[] = [];
    keys.forEach((key, i) => {
      const [type, hash, zset, str] = replies.slice(i * 4, i * 4 + 4) as [Reply, Reply, Reply, Reply];
      // On a cluster a key of a slot another node serves is not here (MOVED): not in this dump.
      if (type.t === "error") return;
      const t = text(type);
      if (t === "none") return;
      if (t === "hash") dump.set(key, { type: "hash", fields: pairs(hash) });
      else if (t === "zset") {
        dump.set(key, {
          type: "zset",
          members: pairs(zset).map(([m, s]): [Buffer, string] => [m, s.toString("latin1")]),
        });
      } else if (t === "string") dump.set(key, { type: "string", value: bulk(str) });
      else rare.push({ key, type: t });
    });
    for (const { key, type } of rare) dump.set(key, await this.readRare(key, type));
    return dump;
  }

  private async readRare(key: string, type: string): Promise<RawValue> {
    const k = Buffer.from(key, "latin1");
    if (type === "list") return { type: "list", items: elements(await this.client.one("LRANGE", k, 0, -1)) };
    if (type === "set") {
      const members = elements(await this.client.one("SMEMBERS", k)).sort(Buffer.compare);
      return { type: "set", members };
    }
    if (type === "stream") {
      const [range, xinfo] = await this.client.call([
        ["XRANGE", k, "-", "+"],
        ["XINFO", "STREAM", k],
      ]);
      const entries = (range?.t === "array" ? range.v : []).map((e): [string, Buffer[]] => {
        const parts = e.t === "array" ? e.v : [];
        return [text(parts[0]!), elements(parts[1]!)];
      });
      const fields = xinfo?.t === "array" ? xinfo.v : [];
      const info = (name: string) => {
        const at = fields.findIndex((f) => f.t === "bulk" && text(f) === name);
        return at >= 0 ? text(fields[at + 1]) : "?";
      };
      return { type: "stream", entries, added: info("entries-added"), last: info("last-generated-id") };
    }
    return { type: "other", name: type };
  }
}

function bulk(reply: Reply): Buffer {
  return reply.t === "bulk" ? reply.v : Buffer.alloc(0);
}

function elements(reply: Reply): Buffer[] {
  return reply.t === "array" ? reply.v.map(bulk) : [];
}

function pairs(reply: Reply): [Buffer, Buffer][] {
  const flat = elements(reply);
  const out: [Buffer, Buffer][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}
