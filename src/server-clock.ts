/**
 * A queue's server clock as the host estimates it: a `TIME` of the node that holds the queue
 * (on a cluster, its slot's primary), taken again at most every `REFRESH_MS`, and the host's
 * monotonic clock since (so a wall clock set back or forward does not move the estimate). The
 * promoter and the schedule loop sleep until server due times with it; a worker checks with it
 * that a claim's lease has not run out before it starts the handler.
 *
 * A sample is taken again before `REFRESH_MS` when it can no longer be trusted: the host's wall
 * clock and its monotonic clock disagree about the time since it was taken by more than
 * `JUMP_MS` (the host was suspended, which stops the monotonic clock, or its wall clock was set),
 * or its round trip was slower than `SLOW_SAMPLE_MS` (a stall while `TIME` was on its way; retaken
 * once the sample is a second old, so a slow network sends at most one `TIME` a second).
 */
import { performance } from "node:perf_hooks";
import type { Connection } from "./connector/connection.js";
import { queueKey } from "./keyspace.js";

/** How often the estimate is taken again (ms). */
const REFRESH_MS = 60_000;
/** How far the wall and the monotonic clock may drift apart before the estimate is taken again (ms). */
const JUMP_MS = 1000;
/** A sample whose `TIME` took longer than this (ms) is taken again once it is a second old. */
const SLOW_SAMPLE_MS = 250;

interface Sample {
  /** Server time − monotonic time (ms). */
  offset: number;
  /** Half the round trip of its `TIME`: how far off the estimate may be either way (ms). */
  spread: number;
  /** When it was taken: monotonic and wall clock (ms). */
  at: number;
  wallAt: number;
}

export class ServerClock {
  private sample: Sample | undefined;
  /** The `TIME` in flight, shared by every read that wants a new sample meanwhile. */
  private taking: Promise<Sample> | undefined;

  constructor(
    private readonly conn: Connection,
    private readonly queue: string,
  ) {}

  /** The server's time now, in ms (the middle of the estimate). */
  async now(): Promise<number> {
    const { offset } = await this.current();
    return performance.now() + offset;
  }

  /** The latest the server's time may be now (ms): `now()` plus the estimate's uncertainty. */
  async latest(): Promise<number> {
    const { offset, spread } = await this.current();
    return performance.now() + offset + spread;
  }

  /** `latest()` without waiting, while the sample in hand is still good; undefined when it is not. */
  latestNow(): number | undefined {
    const sample = this.sample;
    const now = performance.now();
    if (!sample || stale(sample, now)) return undefined;
    return now + sample.offset + sample.spread;
  }

  private current(): Promise<Sample> {
    const sample = this.sample;
    if (sample && !stale(sample, performance.now())) return Promise.resolve(sample);
    this.taking ??= this.take().finally(() => {
      this.taking = undefined;
    });
    return this.taking;
  }

  private async take(): Promise<Sample> {
    const before = performance.now();
    const [seconds, micros] = (await this.conn.send("TIME", [], queueKey(this.queue, ""))) as Buffer[];
    const after = performance.now();
    const server = Number(String(seconds)) * 1000 + Math.floor(Number(String(micros)) / 1000);
    this.sample = {
      offset: server - (before + after) / 2,
      spread: (after - before) / 2,
      at: after,
      wallAt: Date.now(),
    };
    return this.sample;
  }
}

/** Whether `sample` is to be taken again, `now` being the monotonic clock's time (ms). */
function stale(sample: Sample, now: number): boolean {
  const age = now - sample.at;
  if (age > REFRESH_MS) return true;
  if (Math.abs(Date.now() - sample.wallAt - age) > JUMP_MS) return true;
  return sample.spread * 2 > SLOW_SAMPLE_MS && age > 1000;
}
