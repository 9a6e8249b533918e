/**
 * `npm run soak`: the fault experiments at soak size (or suite size with `--suite`), each on the
 * wires it supports, then a summary table. Exits 1 when any experiment missed a target.
 *
 *   npm run soak -- --wire 4|6|both --only server-crash,acl --adds 20000 --seed 42 --json out.json
 *
 * `--<param> <number>` sets that parameter in every selected experiment that has it (see the
 * table's parameters column for the names).
 */
import { writeFile } from "node:fs/promises";
import type { Wire } from "../src/index.js";
import {
  EXPERIMENTS,
  type Experiment,
  experimentNamed,
  type Outcome,
  type Params,
  type Size,
} from "./experiments/index.js";
import { valkeyMajor } from "../tools/embedded-valkey.js";
import { details, row, table } from "./table.js";

interface Plan {
  wires: readonly Wire[];
  experiments: readonly Experiment[];
  size: Size;
  overrides: Params;
  json: string | undefined;
}

const USAGE = `usage: npm run soak -- [--wire 4|6|both] [--only name,…] [--suite] [--json file] [--<param> n …]
experiments: ${EXPERIMENTS.map((e) => `${e.name} (${e.title})`).join("\n             ")}`;

function parse(argv: readonly string[]): Plan {
  let wires: readonly Wire[] = [4, 6];
  let experiments: readonly Experiment[] = EXPERIMENTS;
  let size: Size = "soak";
  let json: string | undefined;
  const overrides: Params = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    if (flag === "--help" || flag === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else if (flag === "--wire") {
      const v = value();
      if (!["4", "6", "both"].includes(v)) throw new Error(`--wire is 4, 6 or both, not ${v}`);
      wires = v === "both" ? [4, 6] : [Number(v) as Wire];
    } else if (flag === "--only") experiments = value().split(",").map(experimentNamed);
    else if (flag === "--suite") size = "suite";
    else if (flag === "--json") json = value();
    else if (flag.startsWith("--")) {
      const name = flag.slice(2);
      const v = Number(value());
      if (!Number.isFinite(v)) throw new Error(`${flag} needs a number`);
      overrides[name] = v;
    } else throw new Error(`unknown argument ${flag}\n${USAGE}`);
  }
  for (const name of Object.keys(overrides)) {
    if (!experiments.some((e) => name in e.defaults[size]))
      throw new Error(`no selected experiment has a parameter ${name}`);
  }
  return { wires, experiments, size, overrides, json };
}

async function main(): Promise<void> {
  const plan = parse(process.argv.slice(2));
  const outcomes: Outcome[] = [];
  const t0 = Date.now();
  for (const e of plan.experiments) {
    const params: Params = { ...e.defaults[plan.size] };
    for (const [k, v] of Object.entries(plan.overrides)) if (k in params) params[k] = v;
    if (valkeyMajor() < e.minValkey) {
      console.log(
        `[soak] ${e.name} skipped: needs Valkey ${e.minValkey} (ECHOMQ_VALKEY_SERVER=.valkey9/valkey-server)`,
      );
      continue;
    }
    for (const wire of e.wires.filter((w) => plan.wires.includes(w))) {
      process.stdout.write(`[soak] ${e.name} on wire ${wire} … `);
      const o = await e.run(wire, params);
      outcomes.push(o);
      const r = row(o);
      console.log(
        `${r[10]} in ${r[9]} (ack ${o.acknowledged}, lost ${o.lost}, stuck ${o.stuck}, breaches ${o.breaches})`,
      );
    }
  }
  console.log(`\n${table(outcomes)}\n\n${details(outcomes)}\n`);
  console.log(`[soak] ${outcomes.length} runs in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (plan.json) await writeFile(plan.json, `${JSON.stringify(outcomes, null, 2)}\n`);
  process.exit(outcomes.some((o) => o.failures.length > 0) ? 1 : 0);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(2);
});
