/**
 * The folder layering check (`npm test`): every import between two of src/'s units — a folder,
 * with the root file of the same name (`src/worker.ts` is the `worker` unit), or a root file on
 * its own — is an edge of the folder graph; the check fails on a cycle in that graph and on an
 * edge that `scripts/layers.json` does not allow (each unit's layer; an import goes to a lower
 * layer, or within a layer to a unit named in `same`). `--graph` prints the edges.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SRC = join(ROOT, "src");

interface Rules {
  layers: string[][];
  same: Record<string, string[]>;
}

/** Every .ts file under `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The unit of a file under src/: its first folder, or its root file's name. */
function unitOf(path: string): string {
  const [head = "", ...rest] = relative(SRC, path).split("/");
  return rest.length > 0 ? head : head.replace(/(\.cjs)?\.ts$/, "");
}

/** The folder graph: unit → the units it imports (relative imports only). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of files(SRC)) {
    const from = unitOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^"']*?from\s+["'](\.[^"']+)["']/g)) {
      const target = join(file, "..", m[1] ?? "");
      if (!target.startsWith(SRC)) continue;
      const to = unitOf(target.replace(/\.js$/, ".ts"));
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/** The cycles of `graph` (each as the units on it, first repeated at the end). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (unit: string) => {
    state.set(unit, "open");
    stack.push(unit);
    for (const next of graph.get(unit) ?? []) {
      if (state.get(next) === "open") found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(unit, "done");
  };
  for (const unit of [...graph.keys()].sort()) if (!state.has(unit)) visit(unit);
  return found;
}

/** The edges `rules` does not allow, as `from → to (why)`. */
function violations(graph: Map<string, Set<string>>, rules: Rules): string[] {
  const layer = new Map<string, number>();
  rules.layers.forEach((units, i) => {
    for (const unit of units) layer.set(unit, i);
  });
  const bad: string[] = [];
  for (const [from, edges] of graph) {
    const own = layer.get(from);
    if (own === undefined) {
      bad.push(`${from}: no layer in scripts/layers.json`);
      continue;
    }
    for (const to of edges) {
      const theirs = layer.get(to);
      if (theirs === undefined || theirs < own) continue;
      if (theirs === own && (rules.same[from] ?? []).includes(to)) continue;
      bad.push(`${from} → ${to} (layer ${own} imports layer ${theirs})`);
    }
  }
  return bad.sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const graph = folderGraph();
  if (process.argv.includes("--graph")) {
    for (const [from, edges] of [...graph].sort()) console.log(`${from} → ${[...edges].sort().join(", ")}`);
  }
  const rules = JSON.parse(readFileSync(join(ROOT, "scripts/layers.json"), "utf8")) as Rules;
  const loops = cycles(graph);
  const bad = violations(graph, rules);
  for (const loop of loops) console.error(`folder cycle: ${loop.join(" → ")}`);
  for (const line of bad) console.error(`layer rule broken: ${line}`);
  if (loops.length > 0 || bad.length > 0) process.exit(1);
  console.log(`folder layering: ${graph.size} units, no cycle, every edge downward`);
}
