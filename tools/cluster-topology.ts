/**
 * Reading a cluster's topology from its nodes' own answers, for the local cluster
 * (tools/local-cluster.ts): `CLUSTER NODES` lines, `CLUSTER SLOTS` ranges, `INFO` fields, and
 * `INFO errorstats` counts.
 */
import type { RespReply } from "../test/support/resp.js";

/** Where a node stands, as one `CLUSTER NODES` line says. */
export interface Place {
  id: string;
  role: "primary" | "replica";
  /** Slot ranges it serves, [first, last] inclusive (slots being migrated or imported left out). */
  slots: [number, number][];
  primaryId: string | undefined;
}

/** `CLUSTER NODES` parsed: per node address (`host:port`), its place; and the flags seen. */
export function parseClusterNodes(text: string): Map<string, Place & { flags: string[] }> {
  const out = new Map<string, Place & { flags: string[] }>();
  for (const line of text.split("\n")) {
    const f = line.trim().split(" ");
    if (f.length < 8) continue;
    const [id, address, flags, primary] = f as [string, string, string, string];
    const addr = address.split("@")[0]!;
    const flagList = flags.split(",");
    const slots: [number, number][] = [];
    for (const range of f.slice(8)) {
      if (range.startsWith("[")) continue; // a slot being migrated or imported
      const [lo, hi] = range.split("-").map(Number);
      slots.push([lo!, hi ?? lo!]);
    }
    const role = flagList.includes("slave") ? "replica" : "primary";
    out.set(addr, { id, role, slots, primaryId: primary === "-" ? undefined : primary, flags: flagList });
  }
  return out;
}

/** One `CLUSTER SLOTS` range: its slots, the primary's port, the replicas' ports. */
interface SlotRange {
  lo: number;
  hi: number;
  primary: number;
  replicas: number[];
}

export function parseClusterSlots(reply: RespReply): SlotRange[] {
  return (reply as RespReply[][]).map((r) => ({
    lo: Number(r[0]),
    hi: Number(r[1]),
    primary: Number((r[2] as RespReply[])[1]),
    replicas: (r.slice(3) as RespReply[][]).map((n) => Number(n[1])),
  }));
}

/** A slot map as one comparable text: `lo-hi:port` per range, in slot order. */
export function slotMapText(ranges: readonly SlotRange[]): string {
  return ranges
    .map((r) => `${r.lo}-${r.hi}:${r.primary}`)
    .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10))
    .join(",");
}

/** A field of an `INFO` reply. */
export function infoField(info: RespReply, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, "m").exec(String(info))?.[1]?.trim();
}

/** `INFO errorstats` as counts per error code (`MOVED`, `ASK`, `TRYAGAIN`, …). */
export function parseErrorstats(info: RespReply): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of String(info).split(/\r?\n/)) {
    const m = /^errorstat_(\w+):count=(\d+)/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}
