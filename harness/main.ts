/**
 * `npm run harness` — the differential harness: every listed case, then at least --steps
 * generated steps (default 10000), then the durability checks; prints the report and exits
 * non-zero on any failure (or when the pinned bodies do not verify).
 *
 *   npm run harness -- --steps 2000 --seed 7
 *   npm run harness -- --only 'CLAIM' --steps 0
 *   npm run harness -- --cluster   # on a local cluster of three module primaries
 *   npm run harness:pin            # writes harness/pins.json for HEAD's scripts
 *
 * Flags: --steps N, --seed S, --cluster, --only REGEX (listed cases by name), --no-cases,
 * --no-durability, --report FILE (also write the report there), --bclaim (the native side of
 * every well-formed CLAIM step as EMQ.BCLAIM, the blocking claim's path when a job is ready).
 */
import { writeFileSync } from "node:fs";
import { PINS_FILE, REPO } from "./bodies.js";
import { PinError, pinHead, writePins } from "./pins.js";
import { runHarness } from "./run.js";

interface Flags {
  steps: number;
  seed: number;
  only?: RegExp;
  cases: boolean;
  durability: boolean;
  report?: string;
  pin: boolean;
  cluster: boolean;
  bclaim: boolean;
}

function parse(argv: string[]): Flags {
  const flags: Flags = {
    steps: 10_000,
    seed: Date.now() % 1_000_000,
    cases: true,
    durability: true,
    pin: false,
    cluster: false,
    bclaim: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    const int = () => {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 0) throw new Error(`${arg} must be a non-negative integer`);
      return v;
    };
    if (arg === "--steps") flags.steps = int();
    else if (arg === "--seed") flags.seed = int();
    else if (arg === "--only") flags.only = new RegExp(value());
    else if (arg === "--no-cases") flags.cases = false;
    else if (arg === "--no-durability") flags.durability = false;
    else if (arg === "--report") flags.report = value();
    else if (arg === "--pin") flags.pin = true;
    else if (arg === "--cluster") flags.cluster = true;
    else if (arg === "--bclaim") flags.bclaim = true;
    else throw new Error(`unknown flag ${arg} (see harness/README.md)`);
  }
  return flags;
}

async function main(): Promise<number> {
  const flags = parse(process.argv.slice(2));
  if (flags.pin) {
    const pins = pinHead(REPO);
    writePins(PINS_FILE, pins);
    console.log(`pinned ${Object.keys(pins.scripts).length} scripts at ${pins.commit} → harness/pins.json`);
    console.log("commit harness/pins.json now (git add harness/pins.json && git commit)");
    return 0;
  }
  const result = await runHarness({
    steps: flags.steps,
    seed: flags.seed,
    cases: flags.cases,
    durability: flags.durability,
    cluster: flags.cluster,
    blockingClaim: flags.bclaim,
    ...(flags.only ? { only: flags.only } : {}),
    log: (line) => console.error(`[harness] ${line}`),
  });
  console.log(result.report);
  if (flags.report) writeFileSync(flags.report, `${result.report}\n`);
  return result.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof PinError) console.error(`harness: ${err.message}`);
    else console.error(err);
    process.exit(2);
  },
);
