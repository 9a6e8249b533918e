/**
 * The summary table of a run: one row per experiment and wire with its parameters and counts,
 * then each row's figures and missed targets.
 */
import type { Outcome } from "./experiments/index.js";

const HEAD = [
  "experiment",
  "wire",
  "parameters",
  "ack",
  "lost",
  "twice",
  "stuck",
  "crashes",
  "breaches",
  "duration",
  "result",
];

function params(o: Outcome): string {
  return Object.entries(o.params)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export function row(o: Outcome): string[] {
  return [
    o.experiment,
    String(o.wire),
    params(o),
    String(o.acknowledged),
    String(o.lost),
    String(o.completedTwice),
    String(o.stuck),
    String(o.crashes),
    String(o.breaches),
    seconds(o.durationMs),
    o.failures.length === 0 ? "ok" : "FAIL",
  ];
}

/** A Markdown table (it reads as plain text too). */
export function table(outcomes: readonly Outcome[]): string {
  const rows = [HEAD, ...outcomes.map(row)];
  const widths = HEAD.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  const numeric = (c: number) => c >= 3 && c <= 9;
  const line = (r: string[]) =>
    `| ${r.map((cell, c) => (numeric(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, c) => (numeric(c) ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
  return [line(HEAD), rule, ...outcomes.map((o) => line(row(o)))].join("\n");
}

/** Each outcome's figures and missed targets, as indented lines. */
export function details(outcomes: readonly Outcome[]): string {
  const out: string[] = [];
  for (const o of outcomes) {
    out.push(`${o.experiment} [wire ${o.wire}]${o.failures.length ? " — FAIL" : ""}`);
    for (const f of o.failures) out.push(`  ✗ ${f}`);
    for (const n of o.notes) out.push(`  · ${n}`);
  }
  return out.join("\n");
}
