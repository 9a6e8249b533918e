/**
 * The report: one row per verb — cases run, equal, declared-different (by declaration), failed —
 * the generated steps and the durability checks, and every failure with what differed.
 */
import { DECLARATIONS } from "./declared.js";
import { JOB_CORE_VERBS } from "../src/scripts/index.js";

type Verdict = "equal" | "declared" | "failed";

export interface Outcome {
  verb: string;
  verdict: Verdict;
  /** The declaration a declared-different step was judged against (D2, D3, …). */
  declared?: string;
  /** Where it ran: the case name, or the generated sequence. */
  label: string;
  /** What differed (failed) or what was checked (declared). */
  problems: string[];
  /** The cluster's routing refused the call on at least one side (harness/routing.ts). */
  routed?: boolean;
}

interface Row {
  run: number;
  equal: number;
  declared: number;
  failed: number;
  /** Declared-different counts by declaration. */
  by: Record<string, number>;
}

/** The verbs in report order; other rows (INSTALL, durability) follow. */
const REPORT_ORDER: readonly string[] = [...JOB_CORE_VERBS, "INSTALL"];

export class Tally {
  readonly rows = new Map<string, Row>();
  readonly failures: Outcome[] = [];
  generatedSteps = 0;
  generatedRuns = 0;
  listedCases = 0;
  /** Shrunk counterexamples of the property-based model test. */
  counterexamples: string[] = [];
  /** Lines printed under the counts: where the run ran, what it did not run there. */
  readonly notes: string[] = [];
  /** Steps the cluster's routing refused on at least one side: all, and those equal. */
  readonly routed = { steps: 0, equal: 0 };

  add(o: Outcome): void {
    let row = this.rows.get(o.verb);
    if (row === undefined) {
      row = { run: 0, equal: 0, declared: 0, failed: 0, by: {} };
      this.rows.set(o.verb, row);
    }
    row.run += 1;
    row[o.verdict] += 1;
    if (o.verdict === "declared" && o.declared) row.by[o.declared] = (row.by[o.declared] ?? 0) + 1;
    if (o.verdict === "failed") this.failures.push(o);
    if (o.routed) {
      this.routed.steps += 1;
      if (o.verdict === "equal") this.routed.equal += 1;
    }
  }

  get failed(): number {
    let n = 0;
    for (const row of this.rows.values()) n += row.failed;
    return n + this.counterexamples.length;
  }

  /** The per-verb table (Markdown). */
  table(): string {
    const names = [
      ...REPORT_ORDER.filter((v) => this.rows.has(v)),
      ...[...this.rows.keys()].filter((v) => !REPORT_ORDER.includes(v)).sort(),
    ];
    const lines = ["| verb | cases run | equal | declared-different | failed |", "|---|---:|---:|---:|---:|"];
    const total: Row = { run: 0, equal: 0, declared: 0, failed: 0, by: {} };
    for (const name of names) {
      const r = this.rows.get(name)!;
      const by = Object.entries(r.by)
        .sort()
        .map(([d, n]) => `${d} ${n}`)
        .join(", ");
      lines.push(`| ${name} | ${r.run} | ${r.equal} | ${r.declared}${by ? ` (${by})` : ""} | ${r.failed} |`);
      total.run += r.run;
      total.equal += r.equal;
      total.declared += r.declared;
      total.failed += r.failed;
    }
    lines.push(`| **total** | ${total.run} | ${total.equal} | ${total.declared} | ${total.failed} |`);
    return lines.join("\n");
  }

  /** The whole report: the table, the counts, every failure. */
  render(extra: { seconds: number; seed: number; commit: string }): string {
    const out = [
      `# EchoMQ differential harness — scripts pinned at ${extra.commit.slice(0, 12)}`,
      "",
      this.table(),
      "",
      `listed cases: ${this.listedCases}; generated steps: ${this.generatedSteps} in ${this.generatedRuns} sequences (seed ${extra.seed}); ${extra.seconds.toFixed(1)} s`,
      ...this.notes,
      ...(this.routed.steps > 0
        ? [
            `refused by the cluster's routing before either executor ran: ${this.routed.steps} steps (both sides alike, equal: ${this.routed.equal}; the readings differed, C1: ${this.routed.steps - this.routed.equal})`,
          ]
        : []),
      "",
      "Declared differences (judged against their declaration, never against the script):",
      ...Object.entries(DECLARATIONS).map(([id, text]) => `* ${id} — ${text}`),
    ];
    if (this.failures.length > 0) {
      out.push("", `## Failures (${this.failures.length})`);
      for (const f of this.failures.slice(0, 50)) {
        out.push("", `* EMQ.${f.verb} — ${f.label}`, ...f.problems.slice(0, 12).map((p) => `  - ${p}`));
      }
      if (this.failures.length > 50) out.push(`… and ${this.failures.length - 50} more`);
    }
    for (const c of this.counterexamples) out.push("", "## Shrunk counterexample", "", c);
    out.push("", this.failed === 0 ? "RESULT: zero failures" : `RESULT: ${this.failed} failure(s)`);
    return out.join("\n");
  }
}
