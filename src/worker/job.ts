/** A claimed job as the handler sees it. */
import type { ClaimedJob } from "../jobs.js";

export interface Job {
  readonly id: string;
  /** The queue the job was added to. */
  readonly queue: string;
  /** The physical queue the job lives in: the queue itself, or one of its lanes. */
  readonly lane: string;
  readonly payload: Buffer;
  /** This attempt's number (1 for the first run); also the lease token. */
  readonly attempts: number;
  /** When the handler started (ms since the epoch, this host's clock). */
  readonly startedAt: number;
  /** Aborted when the lease is lost or the worker closes before the handler finished. */
  readonly signal: AbortSignal;
  text(): string;
  json<T = unknown>(): T;
}

export type Handler = (job: Job) => unknown;

/** The handler's view of a claimed job; its `signal` is made only when a handler asks for it. */
export class JobView implements Job {
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private aborted = false;

  readonly startedAt = Date.now();

  constructor(
    readonly queue: string,
    readonly lane: string,
    private readonly claimed: ClaimedJob,
  ) {}

  get id(): string {
    return this.claimed.id;
  }
  get payload(): Buffer {
    return this.claimed.payload;
  }
  get attempts(): number {
    return this.claimed.attempts;
  }
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.aborted && !this.controller.signal.aborted) this.controller.abort(this.abortReason);
    return this.controller.signal;
  }
  text(): string {
    return this.claimed.payload.toString("utf8");
  }
  json<T = unknown>(): T {
    return JSON.parse(this.claimed.payload.toString("utf8")) as T;
  }
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}
