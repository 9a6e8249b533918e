/**
 * What the bench feeds every system, and the bounds around it: the adapter of a system id, the
 * 100-byte payload, the producer loops (one job per call, batches), and time bounds.
 */
import { round } from "./stats.js";
import { beequeueAdapter } from "./systems/beequeue.js";
import { bullmqAdapter } from "./systems/bullmq.js";
import { type EchoOptions, echomqAdapter } from "./systems/echomq.js";
import type { Endpoint, JobData, Producer, SystemAdapter, SystemId } from "./systems/types.js";

/** Payloads are 100 bytes as JSON: `{"t":<ms>,"pad":"…"}`. */
const PAYLOAD_BYTES = 100;

/**
 * `busOff`: EchoMQ with its queue's event bus turned off (the bus measure's baseline);
 * `bullmqBenchDefaults`: BullMQ as its own bullmq-bench sets it (bench/bullmq-bench.ts).
 */
export function adapterFor(
  system: SystemId,
  endpoint: Endpoint,
  o: EchoOptions & { bullmqBenchDefaults?: boolean } = {},
): SystemAdapter {
  switch (system) {
    case "echomq-w4":
      return echomqAdapter(endpoint, 4, o);
    case "echomq-w6":
      return echomqAdapter(endpoint, 6, o);
    case "bullmq":
      return bullmqAdapter(endpoint, { benchDefaults: o.bullmqBenchDefaults === true });
    case "beequeue":
      return beequeueAdapter(endpoint);
  }
}

export interface Rate {
  jobs: number;
  seconds: number;
  rate: number;
  /** An add phase run several times: every run's rate, in order (the fields above are the median run's). */
  runs?: number[];
}

const PAD_TEMPLATE = "x".repeat(PAYLOAD_BYTES);

/** A job whose JSON is exactly PAYLOAD_BYTES long (t is a float of ms; the pad absorbs its length). */
export function jobData(t = performance.now()): JobData {
  const head = `{"t":${t},"pad":""}`.length;
  return { t, pad: PAD_TEMPLATE.slice(0, Math.max(0, PAYLOAD_BYTES - head)) };
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** How long one close (a producer, a worker) may take before the phase records it as hung. */
export const CLOSE_BOUND_MS = 30_000;

export function rate(jobs: number, seconds: number): Rate {
  return { jobs, seconds: round(seconds, 4), rate: round(jobs / seconds, 0) };
}

/** `producers` concurrent loops on one producer, each awaiting one add per call, `jobs` in all. */
export async function addOnePerCall(producer: Producer, jobs: number, producers: number): Promise<Rate> {
  let next = 0;
  const loop = async () => {
    while (next < jobs) {
      next += 1;
      await producer.add(jobData());
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(producers, jobs) }, loop));
  return rate(jobs, (performance.now() - t0) / 1000);
}

/**
 * Batches of `batch`, `inFlight` batches at a time (1 for the bulk-add measure). With `dueAt`
 * (epoch ms) every job is delayed to fall due at that instant.
 */
export async function addBatches(
  producer: Producer,
  jobs: number,
  batch: number,
  inFlight: number,
  dueAt?: number,
): Promise<Rate> {
  let next = 0;
  const loop = async () => {
    while (next < jobs) {
      const n = Math.min(batch, jobs - next);
      next += n;
      await producer.addBulk(
        Array.from({ length: n }, () => jobData()),
        dueAt,
      );
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, loop));
  return rate(jobs, (performance.now() - t0) / 1000);
}
