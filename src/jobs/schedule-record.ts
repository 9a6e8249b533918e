/**
 * A schedule as a record keeps it: the instants' part (the spec) and what its jobs carry, and
 * the spec's one text form. Checked and read by `schedules/options.ts`; written by the
 * transitions (`repeat.ts`).
 */
import type { Payload } from "./common.js";

/** What to do with instants that passed while no worker ran (see `plan`). */
export type MissedPolicy = "skip" | "catch-up";

/** The instants' part of a schedule, as the record's `spec` keeps it. */
export interface ScheduleSpec {
  cron?: string;
  everyMs?: number;
  tz?: string;
  startAt?: number;
  endAt?: number;
  limit?: number;
  missed: MissedPolicy;
  graceMs: number;
}

/** A checked schedule: its spec and what its jobs carry. */
export interface CheckedSchedule {
  spec: ScheduleSpec;
  payload: Payload;
  priority: number;
  maxAttempts: number;
  timeoutMs: number;
  /** The jobs' row `name` (the record's `job_name`); `""` for none. */
  jobName: string;
  /** The jobs' own backoff as the row keeps it (`fixed:<ms>`, `exponential:…`); `""` for none. */
  backoff: string;
}

/** The spec as the record keeps it: JSON with its keys in one order, so equal specs are equal text. */
export function specText(spec: ScheduleSpec): string {
  const order = ["cron", "everyMs", "tz", "startAt", "endAt", "limit", "missed", "graceMs"] as const;
  const out: Record<string, unknown> = {};
  for (const k of order) if (spec[k] !== undefined) out[k] = spec[k];
  return JSON.stringify(out);
}
