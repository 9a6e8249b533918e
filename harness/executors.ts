/**
 * The two executors, on one scratch server:
 *
 * * the **script side** runs the wire-4 operation exactly as the host performs it: the host's own
 *   round trips first (claim reads `HGET <base>meta paused` and sends nothing on a paused queue),
 *   then `EVAL <pinned body> <numkeys> <keys…> <values…>` — no connector, no wire-4 fence;
 * * the **native side** sends `EMQ.<VERB>` with the same tail, keys built for its own queue.
 *
 * A pair runs either in one MULTI/EXEC with a TIME (`exact`: both read one cached clock) or as
 * `TIME, script, TIME, command, TIME` (`window`: each side's time window is the TIMEs around it).
 */
import type { TimeSet } from "./verbs.js";
import type { Bodies } from "./bodies.js";
import type { Window } from "./compare.js";
import { type Command, ok, type Reply, text, timeMs } from "./resp.js";
import type { RawValue } from "./dump.js";
import { RespClient } from "./resp.js";
import { Keyspace } from "./dump.js";
import { nameInSlot } from "./placement.js";
import type { Scratch } from "./scratch.js";
import type { DerivedKey } from "../src/keyspace.js";
import {
  accepts,
  BRAND,
  derivedKey,
  type KeySlot,
  queueKey,
  rowKey,
  type Verb,
  VERSION_KEY,
} from "./verbs.js";

/** A key in a call or seed: a queue's key (built per side), a row, or the same raw bytes on both sides. */
export type KeyRef =
  | { q: string; slot: Exclude<KeySlot, "row"> }
  | { q: string; row: string | Buffer }
  | { q: string; derived: DerivedKey; param?: string }
  /** Not a key of the data: the base and these bytes (a key of a type no verb takes). */
  | { q: string; suffix: string }
  | { raw: string | Buffer };

export interface Call {
  verb: string;
  /** numkeys as sent; default the number of keys; null sends no numkeys (and no tail at all). */
  numkeys?: string | null;
  keys: KeyRef[];
  values: (string | Buffer)[];
}

export type Mode = "exact" | "window";
export type SideTag = "script" | "native";

/** One side's queue names: logical name → the name on this side. */
export interface Side {
  tag: SideTag;
  name(logical: string): string;
}

/** A fault to inject on the native side (the harness's own tests): the comparison must catch it. */
export interface Fault {
  verb: string;
  /** Rewrites the native reply before it is compared. */
  reply?: (reply: Reply) => Reply;
  /** Extra writes on the native queue after the command, keys from `side`. */
  writes?: (side: Side) => Command[];
}

export function resolveKey(ref: KeyRef, side: Side): Buffer {
  if ("raw" in ref) return Buffer.from(ref.raw);
  if ("row" in ref) return rowKey(side.name(ref.q), ref.row);
  if ("derived" in ref) return derivedKey(side.name(ref.q), ref.derived, ref.param);
  if ("suffix" in ref) return Buffer.concat([queueKey(side.name(ref.q), "base"), Buffer.from(ref.suffix)]);
  return queueKey(side.name(ref.q), ref.slot);
}

/** The logical queue of a call (its first queue key); null when it names none. */
export function queueOf(call: Call): string | null {
  for (const k of call.keys) if ("q" in k) return k.q;
  return null;
}

/** `<numkeys> <keys…> <values…>` for one side. */
export function tail(call: Call, side: Side): Buffer[] {
  if (call.numkeys === null) return [];
  const numkeys = Buffer.from(call.numkeys ?? String(call.keys.length));
  return [numkeys, ...call.keys.map((k) => resolveKey(k, side)), ...call.values.map((v) => Buffer.from(v))];
}

/** Raw keys a call names (the same bytes on both sides), for "nothing written" checks. */
export function rawKeys(call: Call): Buffer[] {
  return call.keys.flatMap((k) => ("raw" in k ? [Buffer.from(k.raw)] : []));
}

/** The ms offsets of the time scores a call may write, by set (values it gives that parse). */
export function offsetsOf(verb: Verb, values: readonly Buffer[]): Partial<Record<string, number>> {
  const out: Partial<Record<string, number>> = {};
  for (const t of verb.times) {
    if (t.offset === null) {
      out[t.set] = 0;
      continue;
    }
    const text = values[t.offset]?.toString("latin1") ?? "";
    const grammar = verb.values[t.offset]?.grammar;
    if (grammar !== undefined && accepts(grammar, text)) out[t.set] = Number(text);
  }
  return out;
}

/**
 * The sets where a call may write a time carried from an earlier step rather than now + an
 * offset: a claim sends a head over its group's rate to `schedule` at its window's end (the
 * window's start being an earlier claim's time). Kept literally: equal on both sides only when
 * both read one clock, so such cases run exact.
 */
export function carriedOf(verb: Verb): TimeSet[] {
  return ["CLAIM", "CLAIMN", "BCLAIM", "COMPLETENEXT", "COMPLETEN", "FAILNEXT"].includes(verb.verb)
    ? ["schedule"]
    : [];
}

/** How far below the memory the server counts the over-`maxmemory` cases set the limit (bytes). */
const OOM_MARGIN = 64 * 1024;

/**
 * On a cluster, the node an `Executors` runs on: its address, the slots it serves (where its
 * cases' queues are placed) and who serves every other slot (what the server's routing answers).
 */
export interface Shard {
  /** `host:port` of this node. */
  self: string;
  /** The slots this node serves. */
  slots: readonly number[];
  /** `host:port` of the primary serving `slot`. */
  owner(slot: number): string;
}

/**
 * How the native side runs a verb other than as itself. `blockingClaim`: every well-formed
 * `CLAIM` step runs as `EMQ.BCLAIM <tail> 1` (the blocking claim's path when a job is ready is
 * the claim itself; with nothing to claim it waits 1 ms, or inside `MULTI` not at all, and answers
 * nil) — its reply compared as `EMQ.CLAIM`'s: nil as the empty array, `EMQ.BCLAIM` in a refusal as
 * `EMQ.CLAIM`. Everything else — keyspace, events, wake, times — is compared as it is.
 */
export interface Variant {
  blockingClaim?: boolean;
}

interface PairResult {
  /** The script side's reply; undefined when nothing was sent (the host answered itself). */
  script?: Reply;
  native: Reply;
  scriptWindow: Window;
  nativeWindow: Window;
}

export class Executors {
  /** The value of the brand key as the harness last set it (undefined = absent). */
  brandValue: RawValue | undefined = { type: "string", value: Buffer.from(BRAND) };

  /** The key a probe writes to prove the node is over its `maxmemory` (refused there). */
  private readonly probeKey: string;

  /** `shard`: the node is a cluster node (null: the single scratch server). */
  constructor(
    readonly scratch: Scratch,
    readonly bodies: Bodies,
    public fault: Fault | null = null,
    readonly shard: Shard | null = null,
    readonly variant: Variant = {},
  ) {
    this.probeKey = `{${shard ? nameInSlot("emq-harness", shard.slots[0]!) : "emq-harness"}}:oom-probe`;
  }

  /**
   * The physical name of logical queue `q` on a side (`tag` "s" or "n") for case `id`: `h<id><q><tag>`
   * on one node; on a cluster that name in one slot of this node (the case's every queue in it,
   * the cases spread over the node's slots).
   */
  queueName(id: number, q: string, tag: "s" | "n"): string {
    const base = `h${id}${q}${tag}`;
    if (this.shard === null) return base;
    const slots = this.shard.slots;
    return nameInSlot(base, slots[(id * 7919) % slots.length]!);
  }

  private body(verb: Verb): Buffer {
    const body = this.bodies.byVerb.get(verb.verb);
    if (body === undefined) throw new Error(`no pinned body for EMQ.${verb.verb}`);
    return body;
  }

  evalCommand(verb: Verb, t: readonly Buffer[]): Command {
    return ["EVAL", this.body(verb), ...t];
  }

  nativeCommand(verb: Verb, t: readonly Buffer[]): Command {
    if (this.waitsForClaim(verb, t)) return ["EMQ.BCLAIM", ...t, "1"];
    return [`EMQ.${verb.verb}`, ...t];
  }

  /** Whether this native `CLAIM` step runs as `EMQ.BCLAIM` (see `Variant`): its form's shape. */
  private waitsForClaim(verb: Verb, t: readonly Buffer[]): boolean {
    const n = verb.keys.length;
    return (
      this.variant.blockingClaim === true &&
      verb.verb === "CLAIM" &&
      t.length === 1 + n + verb.values.length &&
      t[0]?.toString("latin1") === String(n)
    );
  }

  /** A native reply as compared: `EMQ.BCLAIM`'s as `EMQ.CLAIM`'s (see `Variant`). */
  asCompared(verb: Verb, reply: Reply): Reply {
    if (this.variant.blockingClaim !== true || verb.verb !== "CLAIM") return reply;
    if (reply.t === "nil") return { t: "array", v: [] };
    if (reply.t === "error") return { t: "error", v: reply.v.replace(/^ERR EMQ\.BCLAIM /, "ERR EMQ.CLAIM ") };
    return reply;
  }

  /**
   * The host's pause read before a claim (src/jobs/jobs.ts `claim`): `HGET <meta> paused`
   * in a round trip of its own. "paused" → the host answers null and sends nothing; an error
   * reply fails the host step with that error; null → the claim is sent.
   */
  async hostPauseRead(meta: Buffer): Promise<"paused" | Reply | null> {
    const flag = await this.scratch.client.one("HGET", meta, "paused");
    if (flag.t === "error") return flag;
    return flag.t === "bulk" && text(flag) === "1" ? "paused" : null;
  }

  /** Both sides of one step; `script` null means the script side sends nothing. */
  async pair(script: Command | null, native: Command, mode: Mode): Promise<PairResult> {
    const client = this.scratch.client;
    if (mode === "exact") {
      const cmds: Command[] = [["MULTI"], ["TIME"], ...(script ? [script] : []), native, ["EXEC"]];
      const replies = await client.call(cmds);
      const exec = ok(replies[replies.length - 1], "EXEC");
      if (exec.t !== "array") throw new Error(`EXEC answered ${JSON.stringify(exec)}`);
      const now = timeMs(exec.v[0]);
      const window = { lo: now, hi: now };
      return {
        ...(script ? { script: exec.v[1]! } : {}),
        native: exec.v[exec.v.length - 1]!,
        scriptWindow: window,
        nativeWindow: window,
      };
    }
    const cmds: Command[] = [["TIME"], ...(script ? [script, ["TIME"]] : []), native, ["TIME"]];
    const r = await client.call(cmds);
    const times = r.filter((_, i) => i % 2 === 0).map(timeMs);
    const [t0, t1, t2] = script ? times : [times[0]!, times[0]!, times[1]!];
    return {
      ...(script ? { script: r[1]! } : {}),
      native: r[r.length - 2]!,
      scriptWindow: { lo: t0!, hi: t1! },
      nativeWindow: { lo: t1!, hi: t2! },
    };
  }

  /** One command alone, with the TIMEs around it. */
  async alone(command: Command): Promise<{ reply: Reply; window: Window }> {
    const [before, reply, after] = await this.scratch.client.call([["TIME"], command, ["TIME"]]);
    return { reply: reply!, window: { lo: timeMs(before), hi: timeMs(after) } };
  }

  /** Whether the native fence passes: on a cluster node always (its configuration); on one
   * node when it carries the module's brand. */
  get brand(): "ok" | "other" {
    if (this.shard !== null) return "ok";
    const b = this.brandValue;
    return b?.type === "string" && b.value.toString("latin1") === BRAND ? "ok" : "other";
  }

  /** Sets the brand key: a string, absent (null), or a hash (a value that is not a string). */
  async setBrand(value: string | null | "hash"): Promise<void> {
    const cmds: Command[] = [["DEL", VERSION_KEY]];
    if (value === "hash") cmds.push(["HSET", VERSION_KEY, "brand", BRAND]);
    else if (value !== null) cmds.push(["SET", VERSION_KEY, value]);
    for (const r of await this.scratch.client.call(cmds)) ok(r, "setting the brand");
    this.brandValue =
      value === null
        ? undefined
        : value === "hash"
          ? { type: "hash", fields: [[Buffer.from("brand"), Buffer.from(BRAND)]] }
          : { type: "string", value: Buffer.from(value) };
  }

  /** Reads the brand key back into `brandValue`. */
  async readBrand(): Promise<void> {
    const dump = await this.scratch.keys.dumpQueues([], [Buffer.from(VERSION_KEY)]);
    this.brandValue = dump.get(VERSION_KEY);
  }

  /**
   * Runs `body` with the scratch server over its `maxmemory`: the limit is set just below the
   * memory the server counts against it (`used_memory` − `mem_not_counted_for_evict`, less
   * {@link OOM_MARGIN}), policy `noeviction`, and proven by a probe (`SET` is refused with the
   * `OOM` text; a probe that got through is deleted and the limit lowered); no limit afterwards.
   */
  async overMaxmemory<T>(body: () => Promise<T>): Promise<T> {
    const client = this.scratch.client;
    ok(await client.one("CONFIG", "SET", "maxmemory-policy", "noeviction"), "CONFIG SET");
    try {
      for (let margin = OOM_MARGIN; ; margin *= 4) {
        const info = text(ok(await client.one("INFO", "memory"), "INFO memory"));
        const field = (name: string) =>
          Number(new RegExp(`^${name}:(\\d+)`, "m").exec(info)?.[1] ?? Number.NaN);
        const counted = field("used_memory") - field("mem_not_counted_for_evict");
        if (!Number.isFinite(counted)) throw new Error("INFO memory: no used_memory");
        ok(await client.one("CONFIG", "SET", "maxmemory", Math.max(1, counted - margin)), "CONFIG SET");
        const probe = await client.one("SET", this.probeKey, "x");
        if (probe.t === "error" && probe.v.startsWith("OOM ")) break;
        ok(await client.one("DEL", this.probeKey), "DEL");
        if (margin > counted)
          throw new Error(`cannot bring the scratch server over maxmemory: ${JSON.stringify(probe)}`);
      }
      return await body();
    } finally {
      ok(await client.one("CONFIG", "SET", "maxmemory", "0"), "CONFIG SET");
    }
  }

  /** Runs `body` on a fresh replica of the scratch server (read-only, or `writable`), stopped afterwards. */
  async onReplica<T>(writable: boolean, body: (keys: Keyspace) => Promise<T>): Promise<T> {
    const replica = await this.scratch.startReplica(writable);
    const conn = await RespClient.connect(replica.port);
    try {
      return await body(new Keyspace(conn));
    } finally {
      await conn.close();
      await replica.stop();
    }
  }

  /**
   * The native reply as compared (`asCompared`), and the fault, when it targets `verb`: the
   * rewritten reply, after running its extra writes.
   */
  async injectFault(verb: Verb, reply: Reply, side: Side): Promise<Reply> {
    const native = this.asCompared(verb, reply);
    const fault = this.fault;
    if (fault === null || fault.verb !== verb.verb) return native;
    if (fault.writes)
      for (const r of await this.scratch.client.call(fault.writes(side))) ok(r, "fault write");
    return fault.reply ? fault.reply(native) : native;
  }
}
