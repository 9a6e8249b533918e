/** The cluster measure's section of the Markdown report (bench/cluster.ts): one table, its notes. */
import type { ClusterReport, ClusterSummary, TopologySummary } from "./cluster.js";

function kilo(x: number): string {
  if (!Number.isFinite(x)) return "–";
  return x >= 1000 ? `${(x / 1000).toFixed(1)}k` : x.toFixed(0);
}

const fixed = (digits: number) => (x: number) => (Number.isFinite(x) ? x.toFixed(digits) : "–");

interface Row {
  label: string;
  value?: (s: ClusterSummary) => number;
  format?: (x: number) => string;
  /** A cell of its own making (no ratio). */
  cell?: (s: ClusterSummary) => string;
  /** Ratio to BullMQ in parentheses. */
  ratio?: boolean;
}

const at =
  (topology: "node" | "cluster", f: (t: TopologySummary) => number) =>
  (s: ClusterSummary): number => {
    const t = s[topology];
    return t ? f(t) : Number.NaN;
  };

function rows(report: ClusterReport): Row[] {
  const c = report.config;
  const jobs = kilo(c.shards * c.queuesPerShard * c.jobsPerQueue);
  const baseline = report.summary.some((s) => s.node);
  /** One row per topology: `<label>, one node (<unit>)` and `<label>, N-shard cluster (<unit>)`. */
  const both = (
    label: string,
    unit: string,
    f: (t: TopologySummary) => number,
    format: (x: number) => string,
    ratio = true,
  ): Row[] => [
    ...(baseline ? [{ label: `${label}, one node (${unit})`, value: at("node", f), format, ratio }] : []),
    { label: `${label}, ${c.shards}-shard cluster (${unit})`, value: at("cluster", f), format, ratio },
  ];
  const out: Row[] = [
    ...both(
      `fill ${jobs} jobs, batches of ${c.batch}, ${c.inFlight} in flight`,
      "jobs/s ↑",
      (t) => t.fill,
      kilo,
    ),
    ...both(
      `process ${jobs} waiting, a worker per queue at c=${c.concurrency}`,
      "jobs/s ↑",
      (t) => t.process,
      kilo,
    ),
  ];
  if (baseline)
    out.push({
      label: "… processing, cluster ÷ one node",
      value: (s) => at("cluster", (t) => t.process)(s) / at("node", (t) => t.process)(s),
      format: (x) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "–"),
    });
  out.push(
    ...both(
      "Valkey CPU per processed job, summed over the primaries",
      "µs ↓",
      (t) => t.serverCpuUsPerJob,
      fixed(1),
    ),
    {
      label: `… each primary's share of it (shard 1 / … / ${c.shards}, by slot)`,
      cell: (s) => s.cluster?.shares.map((x) => `${Math.round(x * 100)}%`).join(" / ") ?? "–",
    },
    {
      label: "… each primary's CPU per processed job (µs)",
      cell: (s) => s.cluster?.shardCpuUsPerJob.map((x) => x.toFixed(1)).join(" / ") ?? "–",
    },
    ...(baseline
      ? [
          {
            label: "server-side bound, one node: 1e6 ÷ its µs per job (jobs/s)",
            value: at("node", (t) => t.serverBoundJobsPerSec),
            format: kilo,
          },
        ]
      : []),
    {
      label: `server-side bound, a core per primary: 1e6 ÷ the busiest primary's µs per job (jobs/s)`,
      value: at("cluster", (t) => t.serverBoundJobsPerSec),
      format: kilo,
    },
    ...both("worker CPU per processed job", "µs ↓", (t) => t.workerCpuUsPerJob, fixed(1)),
    ...both("commands per processed job", "↓", (t) => t.commandsPerJob, fixed(1), false),
    ...both("every worker ready after", "ms", (t) => t.readyMs, fixed(0), false),
  );
  return out;
}

function table(report: ClusterReport): string {
  const systems = report.summary;
  const bull = systems.find((s) => s.system === "bullmq");
  const lines = [
    `| measure | ${systems.map((s) => s.label).join(" | ")} |`,
    `|---|${systems.map(() => "---:").join("|")}|`,
  ];
  for (const row of rows(report)) {
    const cells = systems.map((s) => {
      if (row.cell) return row.cell(s);
      const v = row.value!(s);
      let cell = row.format!(v);
      if (row.ratio && bull && s.system !== "bullmq" && Number.isFinite(v)) {
        const b = row.value!(bull);
        if (Number.isFinite(b) && b > 0) cell += ` (${(v / b).toFixed(2)}×)`;
      }
      return cell;
    });
    lines.push(`| ${row.label} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

export function renderCluster(report: ClusterReport): string[] {
  const c = report.config;
  const out: string[] = [];
  out.push(
    `## Valkey Cluster, ${c.shards} primaries on this machine (no persistence, ${c.rounds} round${c.rounds === 1 ? "" : "s"})`,
    "",
  );
  out.push(
    `${c.shards * c.queuesPerShard} queues, ${c.queuesPerShard} per shard (names chosen by slot; BullMQ's with the prefix ` +
      `\`{<name>}\`), ${c.jobsPerQueue} jobs each, added in turn, then one process per system runs a worker per queue at ` +
      `concurrency ${c.concurrency}, no-op handler` +
      (c.baseline
        ? "; the same queues on one node of the same kind, in the same child, as the baseline"
        : "") +
      ". Rates run from the workers' creation to the last completion. Valkey CPU is INFO cpu (user + sys) " +
      "after − before the processing, summed over the primaries; a bound divides one core-second by a " +
      "primary's µs per job (what the server side alone could carry, not a rate). Wire 6 counts only its " +
      "EMQ.* verbs as commands (the module writes keys through the module API, not through commands).",
    "",
  );
  if (report.summary.length > 0) out.push(table(report), "");
  const idle = Object.entries(report.idleCpuMsPerSec)
    .map(([kind, ms]) => `${kind} cluster ${ms} ms/s`)
    .join(", ");
  if (idle) out.push(`Idle cluster (cron, cluster bus), server CPU summed over the primaries: ${idle}.`, "");
  for (const [system, why] of Object.entries(report.notRun)) out.push(`${system}: ${why}.`, "");
  out.push(
    `On one machine the ${c.shards} primaries share its cores with the worker process: the cluster adds no ` +
      "core, so its rate is bounded by the same cores as one node's (a ratio away from 1× here is " +
      "scheduling — and, on a busy machine, more processes taking a larger part of it — not capacity). " +
      "What carries over to machines of their own is the cost: Valkey CPU per job summed over the primaries " +
      "stays near one node's, split about evenly, so each primary carries about 1/" +
      `${c.shards} of it; with a core per primary the server side's bound grows by about the shards ` +
      "(the last two bound rows), provided the workers are spread over machines too (one worker process " +
      "is bounded by 1e6 ÷ its own µs per job).",
  );
  return out;
}
