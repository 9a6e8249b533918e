/** The chart: an SVG of grouped bars drawn here, rendered to PNG by resvg. */
import { Resvg } from "@resvg/resvg-js";
import type { BenchReport, ModeReport, SystemSummary } from "./summary.js";
import type { SystemId } from "./systems/types.js";

const COLORS: Record<SystemId, string> = {
  "echomq-w4": "#2a9d8f",
  "echomq-w6": "#264653",
  bullmq: "#e76f51",
  beequeue: "#e9c46a",
};

interface Panel {
  title: string;
  systems: SystemSummary[];
  groups: string[];
  value: (s: SystemSummary, group: number) => number;
  format: (x: number) => string;
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A round tick step (1, 2, 2.5 or 5 × 10^k) giving at most 5 steps up to x. */
function tickStep(x: number): number {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x / 5));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p * 5 >= x) return m * p;
  return 10 * p;
}

function kilo(x: number): string {
  if (!Number.isFinite(x)) return "–";
  return x >= 1000 ? `${(x / 1000).toFixed(x >= 10_000 ? 0 : 1)}k` : String(Math.round(x * 10) / 10);
}

function drawPanel(panel: Panel, x: number, y: number, w: number, h: number): string {
  const parts: string[] = [];
  const systems = panel.systems;
  const left = x + 56;
  const top = y + 34;
  const plotW = w - 70;
  const plotH = h - 70;
  const values = panel.groups.flatMap((_, g) => systems.map((s) => panel.value(s, g)));
  const step = tickStep(Math.max(0, ...values.filter(Number.isFinite)));
  const ticks = Math.max(1, Math.ceil(Math.max(0, ...values.filter(Number.isFinite)) / step));
  const max = step * ticks;
  parts.push(
    `<text x="${x + w / 2}" y="${y + 18}" font-size="15" font-weight="bold" text-anchor="middle">${esc(panel.title)}</text>`,
  );
  for (let i = 0; i <= ticks; i++) {
    const v = step * i;
    const yy = top + plotH - (plotH * i) / ticks;
    parts.push(`<line x1="${left}" y1="${yy}" x2="${left + plotW}" y2="${yy}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${left - 6}" y="${yy + 4}" font-size="11" text-anchor="end" fill="#555">${esc(panel.format(v))}</text>`,
    );
  }
  const groupW = plotW / panel.groups.length;
  const barW = Math.min(28, (groupW * 0.8) / systems.length);
  panel.groups.forEach((label, g) => {
    const gx = left + g * groupW + (groupW - barW * systems.length) / 2;
    systems.forEach((s, i) => {
      const v = panel.value(s, g);
      if (!Number.isFinite(v)) return;
      const bh = (plotH * Math.max(0, v)) / max;
      const bx = gx + i * barW;
      parts.push(
        `<rect x="${bx}" y="${top + plotH - bh}" width="${barW - 2}" height="${bh}" fill="${COLORS[s.system]}"/>`,
      );
      parts.push(
        `<text x="${bx + (barW - 2) / 2}" y="${top + plotH - bh - 3}" font-size="9" text-anchor="middle" fill="#333">${esc(panel.format(v))}</text>`,
      );
    });
    parts.push(
      `<text x="${left + g * groupW + groupW / 2}" y="${top + plotH + 16}" font-size="12" text-anchor="middle">${esc(label)}</text>`,
    );
  });
  parts.push(
    `<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="#333"/>`,
  );
  return parts.join("\n");
}

function panels(none: ModeReport | undefined, aof: ModeReport | undefined): Panel[] {
  const out: Panel[] = [];
  const fmt = kilo;
  if (none) {
    const systems = none.summary;
    const cs = none.config.concurrencies;
    const added = none.config.addSeqJobs + none.config.addParallelJobs + none.config.bulkJobs > 0;
    if (added)
      out.push({
        title: "Add (jobs/s, higher is better)",
        systems,
        groups: [
          "1 producer",
          `${none.config.addParallelProducers} producers`,
          `bulk ${none.config.bulkBatch}`,
        ],
        value: (s, g) => [s.addSeq, s.addParallel, s.bulk][g] ?? Number.NaN,
        format: fmt,
      });
    if (cs.length > 0)
      out.push({
        title: `Process ${kilo(none.config.processJobs)} waiting jobs (jobs/s)`,
        systems,
        groups: cs.map((c) => `concurrency ${c}`),
        value: (s, g) => s.process[String(cs[g])] ?? Number.NaN,
        format: fmt,
      });
    if (none.config.latency)
      out.push({
        title: `Latency add→handler at ${kilo(none.config.latency.rate)}/s (ms, lower is better)`,
        systems,
        groups: ["p50", "p99", "max"],
        value: (s, g) => (s.latency ? [s.latency.p50, s.latency.p99, s.latency.max][g]! : Number.NaN),
        format: (x) => String(Math.round(x * 10) / 10),
      });
    const { ramp, burst } = none.config;
    if (ramp || burst)
      out.push({
        title: `Drain ÷ ideal, ${kilo((ramp ?? burst)!.jobs)} jobs, c=${(ramp ?? burst)!.concurrency} (lower is better)`,
        systems,
        groups: [...(ramp ? ["resume ramp"] : []), ...(burst ? ["delayed burst"] : [])],
        value: (s, g) =>
          [...(ramp ? [s.ramp?.drainRatio] : []), ...(burst ? [s.burst?.drainRatio] : [])][g] ?? Number.NaN,
        format: (x) => String(Math.round(x * 100) / 100),
      });
    if (cs.length > 0) {
      out.push({
        title: `CPU per job at c=${Math.max(...cs)} (µs, lower is better)`,
        systems,
        groups: ["Valkey", "worker process"],
        value: (s, g) => [s.serverCpuUsPerJob, s.workerCpuUsPerJob][g] ?? Number.NaN,
        format: (x) => String(Math.round(x)),
      });
      out.push({
        title: "Per job: commands, memory waiting (lower is better)",
        systems,
        groups: ["commands to process", "commands to add (bulk)", "bytes waiting / 10"],
        value: (s, g) =>
          [s.processCommandsPerJob, s.addCommandsPerJob, s.bytesPerWaitingJob / 10][g] ?? Number.NaN,
        format: (x) => String(Math.round(x)),
      });
    }
  }
  if (aof) {
    const systems = aof.summary;
    const cs = aof.config.concurrencies;
    out.push({
      title: "With AOF everysec (jobs/s)",
      systems,
      groups: [
        "add x1",
        `add x${aof.config.addParallelProducers}`,
        "bulk",
        ...cs.map((c) => `process c=${c}`),
      ],
      value: (s, g) =>
        [s.addSeq, s.addParallel, s.bulk, ...cs.map((c) => s.process[String(c)] ?? Number.NaN)][g] ??
        Number.NaN,
      format: fmt,
    });
  }
  return out;
}

function renderSvg(report: BenchReport): string {
  const none = report.modes.find((m) => m.mode === "none");
  const aof = report.modes.find((m) => m.mode === "aof");
  const systems = (none ?? aof)?.summary ?? [];
  const list = panels(none, aof);
  const rounds = none?.config.rounds ?? aof?.config.rounds ?? 0;
  const traffic = (none?.config.ramp ?? none?.config.burst)?.handlerMs;
  const cols = 2;
  const pw = 620;
  const ph = 300;
  const head = 70;
  const W = cols * pw + 20;
  const H = head + Math.ceil(list.length / cols) * ph + 20;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans, sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="16" y="28" font-size="20" font-weight="bold">EchoMQ vs BullMQ vs bee-queue${report.smoke ? " (smoke run)" : ""}</text>`,
    `<text x="16" y="50" font-size="12" fill="#444">${esc(
      `${report.machine.cpu}, ${report.machine.cores} cores · Valkey ${report.versions.valkey} · Node ${report.versions.node} · ${rounds === 1 ? "1 round" : `medians of ${rounds} rounds`} · 100-byte payloads, no-op handlers${traffic ? ` (ramp and burst: ${traffic} ms)` : ""}`,
    )}</text>`,
  ];
  let lx = W - 16;
  for (const s of [...systems].reverse()) {
    const tw = s.label.length * 7.2 + 22;
    lx -= tw;
    parts.push(`<rect x="${lx}" y="18" width="12" height="12" fill="${COLORS[s.system]}"/>`);
    parts.push(`<text x="${lx + 16}" y="29" font-size="12">${esc(s.label)}</text>`);
  }
  list.forEach((panel, i) => {
    const x = 10 + (i % cols) * pw;
    const y = head + Math.floor(i / cols) * ph;
    parts.push(drawPanel(panel, x, y, pw - 10, ph - 10));
  });
  parts.push("</svg>");
  return parts.join("\n");
}

export function renderChart(report: BenchReport): Buffer {
  const resvg = new Resvg(renderSvg(report), {
    background: "white",
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
  });
  return resvg.render().asPng();
}
