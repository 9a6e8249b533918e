/** The stand's printout: the nodes, then per step the lines received, the replies and the keys. */
import { VERSION_KEY } from "../harness/verbs.js";
import { SCRIPTS } from "../src/protocol.js";
import { headLength, type Row, type StandResult } from "./stand-compare.js";

const EMPTY = "—";

function quote(value: string): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

const pad = (s: string, width: number) => s + " ".repeat(Math.max(0, width - [...s].length));
const markText = (row: Row) => (row.mark === "unexpected" ? `✗ unexpected: ${row.note}` : row.note);

export function render(result: StandResult, out: (line: string) => void): void {
  const { nodes, payload } = result;
  const sources = new Map([...SCRIPTS.values()].map((s) => [s.source, s.name]));
  const ab = (v: string): string => {
    if (v === payload) return "<payload>";
    if (v === nodes.b.runId) return `${quote(v.slice(0, 12))}…`;
    if (/^[0-9a-f]{40}$/.test(v)) return `"${v.slice(0, 8)}…"`;
    const script = sources.get(v);
    if (script) return `<${script}.lua source, ${Buffer.byteLength(v)} B>`;
    return v.length > 48 ? `${quote(v.slice(0, 40))}…(${v.length} B)` : quote(v);
  };
  out(
    `stand: one transition, run twice — queue "${result.queue}", job ${result.id}, lease ${result.leaseMs} ms`,
  );
  for (const n of [nodes.a, nodes.b]) {
    const what = pad(n.module ? "valkey-server + module" : "valkey-server, no module", 26);
    out(
      `  ${pad(n.label, 12)} ${n.host}:${n.port}  ${what}${VERSION_KEY} = ${n.brand}, branded by ${n.brandedBy}`,
    );
  }
  out(`  B's run_id (INFO server) = ${nodes.b.runId}`);
  out(`  <payload> = ${payload.slice(0, 32)}… (${Buffer.byteLength(payload)} B)`);

  for (const [index, step] of result.steps.entries()) {
    out("");
    out(`── step ${index + 1}: ${step.call} ${"─".repeat(Math.max(3, 100 - step.call.length))}`);
    out("  received (MONITOR, the connector's lines)");
    const lineRows = step.rows.filter((r) => r.what.startsWith("monitor line "));
    const [ta, tb] = [step.monitor.a.transition, step.monitor.b.transition];
    for (let i = 0; i < Math.max(ta.length, tb.length); i++) {
      const head = (args: string[]) => args.slice(0, headLength(args)).map(ab).join(" ");
      const width = Math.max([...head(ta[i] ?? [])].length, [...head(tb[i] ?? [])].length);
      const line = (args: string[] = []) =>
        args.length ? `${pad(head(args), width)} ${args.slice(headLength(args)).map(ab).join(" ")}` : EMPTY;
      out(`    A  ${line(ta[i])}`);
      out(`    B  ${line(tb[i])}`);
      if (lineRows[i]) out(`       ${markText(lineRows[i]!)}`);
    }
    if (step.monitor.a.reloaded) {
      out(
        `    A  note: its first EVALSHA was answered NOSCRIPT; the connector sent SCRIPT LOAD and the same line again`,
      );
    }
    for (const row of step.rows.filter((r) => r.what === "monitor lines")) out(`    ${markText(row)}`);

    out("  returned");
    const replyRows = step.rows.filter((r) => r.what.startsWith("reply"));
    const shown = (v: string | null) =>
      v === null ? EMPTY : v === JSON.stringify(payload) ? "<payload>" : v;
    const w = Math.max(10, ...replyRows.map((r) => Math.max(shown(r.a).length, shown(r.b).length)));
    out(`    ${pad("", 10)} ${pad("A (wire 4)", w)}  ${pad("B (wire 6)", w)}`);
    for (const r of replyRows)
      out(`    ${pad(r.field || r.what, 10)} ${pad(shown(r.a), w)}  ${pad(shown(r.b), w)}  ${markText(r)}`);

    out(`  keys emq:{${result.queue}}:* after the step (SCAN, type by type, field by field)`);
    const keyRows = step.rows.filter((r) => r.key !== undefined);
    const cell = (v: string | null, type?: string) =>
      v === null ? EMPTY : type === "zset" ? `@ ${v}` : ab(v);
    const wKey = Math.max(4, ...keyRows.map((r) => [...(r.key ?? "")].length));
    const wField = Math.max(6, ...keyRows.map((r) => (r.field ?? "").length));
    const wVal = Math.max(
      10,
      ...keyRows.map((r) => Math.max(cell(r.a, r.type).length, cell(r.b, r.type).length)),
    );
    out(
      `    ${pad("key", wKey)}  ${pad("type", 5)} ${pad("field", wField)}  ${pad("A", wVal)}  ${pad("B", wVal)}`,
    );
    keyRows.forEach((r, i) => {
      const first = i === 0 || keyRows[i - 1]!.key !== r.key;
      const [key, type] = first ? [r.key ?? "", r.type ?? ""] : ["", ""];
      const values = `${pad(cell(r.a, r.type), wVal)}  ${pad(cell(r.b, r.type), wVal)}`;
      out(`    ${pad(key, wKey)}  ${pad(type, 5)} ${pad(r.field ?? "", wField)}  ${values}  ${markText(r)}`);
    });
    if (keyRows.length === 0) out("    (no keys)");
    for (const r of step.rows.filter((r) => r.what === "keyspace")) out(`    ${markText(r)}`);
  }
  out("");
  out(result.verdict);
  for (const problem of result.unexpected) out(`  - ${problem}`);
}
