/**
 * One room per verb family on both sides, named the same (the protocol data's `family`): the host
 * sends a verb only from `src/jobs/<family>.ts` (the fence's own families from the connector and
 * the engine: `install` in src/connector/install.ts, `version` in src/engine/version.ts), and the module's handler is `verbs::<family>::<verb>` (its build.rs registers that
 * path, so a handler in another room does not compile). Read from the data and the tree, so a verb
 * added in the wrong room, or a room renamed on one side only, fails here.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { VERB_SPECS } from "../src/verbs/data.js";

const ROOT = join(import.meta.dirname, "..");

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? tsFiles(join(dir, e.name))
      : e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")
        ? [join(dir, e.name)]
        : [],
  );
}

/** Where the host sends each verb: `call(conn, "VERB"`, `verbCall("VERB"` or a raw `"EMQ.VERB"`. */
function hostSites(): Map<string, Set<string>> {
  const sites = new Map<string, Set<string>>();
  const verbs = [...VERB_SPECS.keys()].join("|");
  const pattern = new RegExp(
    `(?:\\bcall\\(\\s*\\w+,\\s*|\\bverbCall\\(\\s*)"(${verbs})"|"EMQ\\.(${verbs})"`,
    "g",
  );
  for (const file of tsFiles("src")) {
    if (file.startsWith(join("src", "verbs"))) continue; // the generated names and the data's reader
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const m of text.matchAll(pattern)) {
      const verb = m[1] ?? m[2]!;
      const at = sites.get(verb) ?? new Set<string>();
      at.add(relative(ROOT, join(ROOT, file)));
      sites.set(verb, at);
    }
  }
  return sites;
}

/** The fence's families are the connection's, not a queue's: their host side lives there. */
const FENCE_ROOMS: Record<string, string[]> = {
  install: ["src/connector/install.ts"],
  version: ["src/engine/version.ts"],
};

test("the host sends each verb only from the room its family names", () => {
  const sites = hostSites();
  const misplaced: string[] = [];
  for (const [verb, spec] of VERB_SPECS) {
    const allowed = FENCE_ROOMS[spec.family] ?? [`src/jobs/${spec.family}.ts`];
    for (const file of sites.get(verb) ?? []) {
      if (!allowed.includes(file)) misplaced.push(`${verb} (family ${spec.family}) sent from ${file}`);
    }
  }
  assert.deepEqual(misplaced, []);
  // the scan finds the calls it looks for (a scan that matched nothing would pass anything)
  assert.ok(sites.get("COMPLETE")?.has("src/jobs/lease.ts"), "COMPLETE is sent from src/jobs/lease.ts");
});

test("every family has its room on both sides, named the same", () => {
  const families = new Set([...VERB_SPECS.values()].map((s) => s.family));
  const missing: string[] = [];
  for (const family of families) {
    const rust = `module/src/verbs/${family}.rs`;
    if (!existsSync(join(ROOT, rust))) missing.push(rust);
    const host = FENCE_ROOMS[family] ?? [`src/jobs/${family}.ts`];
    for (const file of host) if (!existsSync(join(ROOT, file))) missing.push(file);
  }
  assert.deepEqual(missing, []);
  const mod = readFileSync(join(ROOT, "module/src/verbs/mod.rs"), "utf8");
  const declared = [...mod.matchAll(/^pub mod (\w+);/gm)].map((m) => m[1]).sort();
  assert.deepEqual(declared, [...families].sort(), "module/src/verbs/mod.rs declares one room per family");
});
