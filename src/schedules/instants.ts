/**
 * A schedule's instants, computed on the host (the server keeps the spec and compares instants,
 * it computes none), and the plan of `FIRE` calls that brings a due schedule up to now under its
 * missed-instant policy.
 *
 * * `everyMs`: the instants `anchor + k·everyMs`, the anchor being `startAt` when given, else the
 *   epoch (so every process computes the same instants: an `everyMs: 60_000` schedule fires on
 *   the minute).
 * * `cron`: croner's instants in the schedule's time zone (UTC unless `tz`). Across a DST change
 *   a wall-clock time that does not exist (spring forward) fires at the first time after the gap;
 *   one that occurs twice (fall back) fires once, at its first occurrence; an hourly pattern
 *   fires once per real hour.
 *
 * Either way no instant is before `startAt` or after `endAt`.
 */
import { Cron } from "croner";
import type { ScheduleSpec } from "./options.js";

/** The most missed instants a `catch-up` schedule adds jobs for: the most recent ones. */
export const MAX_CATCH_UP = 1000;
/** The most cron instants looked at when planning one round (a per-second cron: ~28 hours). */
const MAX_SCAN = 100_000;

export class Instants {
  private readonly cron: Cron | undefined;

  constructor(readonly spec: ScheduleSpec) {
    this.cron = spec.cron !== undefined ? new Cron(spec.cron, { timezone: spec.tz ?? "UTC" }) : undefined;
  }

  /** The first instant strictly after `t` (ms), or null when there is none (past `endAt`). */
  after(t: number): number | null {
    const { startAt, endAt, everyMs } = this.spec;
    const from = startAt !== undefined ? Math.max(t, startAt - 1) : t;
    let next: number | null;
    if (everyMs !== undefined) {
      const anchor = startAt ?? 0;
      next = from < anchor ? anchor : anchor + (Math.floor((from - anchor) / everyMs) + 1) * everyMs;
    } else {
      next = this.cron!.nextRun(new Date(from))?.getTime() ?? null;
    }
    return next === null || (endAt !== undefined && next > endAt) ? null : next;
  }

  /** The first instant at or after `t`. */
  atOrAfter(t: number): number | null {
    return this.after(t - 1);
  }
}

/** One `FIRE`: compare the record's next instant with `expected`, add `instant`'s job, store `next`. */
interface Fire {
  expected: number;
  /** `0`: no job (the instants up to `next` are skipped). */
  instant: number;
  /** `0`: no instant after it (the schedule ends). */
  next: number;
}

/**
 * The `FIRE` calls, in order, that bring a schedule whose record says `next` up to the server
 * time `now`: none when `next` is still ahead. Each call's `expected` is the previous call's
 * `next`, so they run one after the other and stop at the first compare-and-set miss (another
 * worker is on it).
 *
 * * `skip`: instants at most `graceMs` late fire, in order; older ones are skipped (no job).
 *   When every due instant is older, one call skips them all and stores the first instant
 *   after `now`.
 * * `catch-up`: every due instant fires, in order, at most the `MAX_CATCH_UP` most recent
 *   (older ones are skipped).
 */
export function plan(instants: Instants, next: number, now: number): Fire[] {
  if (next > now) return [];
  const { missed, graceMs } = instants.spec;
  const from = missed === "skip" ? Math.max(next, now - graceMs) : next;
  const due = dueFrom(instants, next, from, now);
  const fires: Fire[] = [];
  let expected = next;
  for (const instant of due) {
    const after = instants.after(instant) ?? 0;
    fires.push({ expected, instant, next: after });
    if (after === 0) return fires;
    expected = after;
  }
  if (fires.length === 0) fires.push({ expected: next, instant: 0, next: instants.after(now) ?? 0 });
  return fires;
}

/** The instants from `from` (at or after `next`) to `now`, at most the last `MAX_CATCH_UP`. */
function dueFrom(instants: Instants, next: number, from: number, now: number): number[] {
  const { everyMs } = instants.spec;
  if (everyMs !== undefined && from === next) {
    // Arithmetic: the backlog may be large (a 1 ms schedule after a day down).
    const last = next + Math.floor((now - next) / everyMs) * everyMs;
    const first = Math.max(next, last - (MAX_CATCH_UP - 1) * everyMs);
    return boundedList(instants, first, now);
  }
  return boundedList(instants, from === next ? next : instants.atOrAfter(from), now);
}

/** The instants from `first` to `now`, keeping the last `MAX_CATCH_UP`, scanning `MAX_SCAN` at most. */
function boundedList(instants: Instants, first: number | null, now: number): number[] {
  const out: number[] = [];
  let t = first;
  for (let scanned = 0; t !== null && t <= now && scanned < MAX_SCAN; scanned++) {
    out.push(t);
    t = instants.after(t);
  }
  return out.length > MAX_CATCH_UP ? out.slice(-MAX_CATCH_UP) : out;
}
