/**
 * Sums V8 CPU profiles (`.cpuprofile`, as `ECHOMQ_BENCH_CPU_PROF=<dir>` has the bench's children
 * write them): self time per function and per file, the largest first.
 *
 *   node --import tsx bench/profile.ts <dir or file>… [--top=30]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time (µs) by key, over every sample of `profile`. */
function selfTimes(profile: Profile, keyOf: (node: ProfileNode) => string): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  for (const [i, id] of profile.samples.entries()) {
    const node = byId.get(id);
    if (!node) continue;
    const key = keyOf(node);
    out.set(key, (out.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  return out;
}

function shortUrl(url: string): string {
  const at = url.search(/\/(dist|src|node_modules|bench)\//);
  return at >= 0 ? url.slice(at + 1) : url || "(native)";
}

const byFunction = (n: ProfileNode) =>
  `${n.callFrame.functionName || "(anonymous)"} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const byFile = (n: ProfileNode) => shortUrl(n.callFrame.url);

function files(paths: string[]): string[] {
  return paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((f) => f.endsWith(".cpuprofile"))
          .map((f) => join(p, f))
      : [p],
  );
}

function table(title: string, sums: Map<string, number>, top: number): void {
  const total = [...sums.values()].reduce((a, b) => a + b, 0);
  console.log(`\n## ${title} (${(total / 1e6).toFixed(2)} s sampled)\n`);
  console.log("| self ms | share | where |\n|---:|---:|---|");
  for (const [key, us] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`| ${(us / 1000).toFixed(1)} | ${((100 * us) / total).toFixed(1)}% | ${key} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 30);
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  for (const path of files(args.filter((a) => !a.startsWith("--")))) {
    const profile = JSON.parse(readFileSync(path, "utf8")) as Profile;
    for (const [k, v] of selfTimes(profile, byFunction)) fn.set(k, (fn.get(k) ?? 0) + v);
    for (const [k, v] of selfTimes(profile, byFile)) file.set(k, (file.get(k) ?? 0) + v);
  }
  table("by file", file, top);
  table("by function", fn, top);
}
