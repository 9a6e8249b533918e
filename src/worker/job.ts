/** A claimed job as the handler sees it. */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError } from "../errors.js";
import { type ClaimedJob, log, progress } from "../jobs.js";
import { encodeResult } from "./outcome.js";
import { inCallWords } from "../jobs/refusals.js";

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
  /**
   * Records the job's progress: its row keeps the latest value (a string or bytes as they are,
   * anything else as JSON; read it with `Queue.getJob`), and the queue's event bus announces it
   * (`progress`). Rejects with `LeaseLostError` when this worker no longer holds the lease.
   */
  progress(value: unknown): Promise<void>;
  /**
   * Appends a line to the job's log, kept on its row (the last 100 lines, over every attempt;
   * `Queue.getJob` reads them). Resolves with the line's number. Rejects with `LeaseLostError`
   * when this worker no longer holds the lease.
   */
  log(line: string): Promise<number>;
}

export type Handler = (job: Job) => unknown;

/** A job a worker runs, and what it knows of its lease. */
export interface Running {
  readonly job: JobView;
  /** The physical queue the job lives in (the queue itself unless laned). */
  readonly lane: string;
  /** When the lease was last granted or renewed (local clock): the settle retries stop at its end. */
  leasedAt: number;
  handedBack: boolean;
  leaseLost: boolean;
  /** The handler returned or threw: its complete / fail is on the way and the lease needs no renewal. */
  settled: boolean;
}

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
    private readonly conn: Connection,
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
  progress(value: unknown): Promise<void> {
    let bytes: string | Uint8Array;
    try {
      bytes = encodeResult(value);
    } catch (err) {
      return Promise.reject(
        new InvalidArgumentError("value", `cannot be stored as progress: ${(err as Error).message}`),
      );
    }
    return inCallWords("progress()", this.conn, this.where(), () =>
      progress(this.conn, this.lane, this.id, this.attempts, bytes),
    );
  }
  log(line: string): Promise<number> {
    return inCallWords("log()", this.conn, this.where(), () =>
      log(this.conn, this.lane, this.id, this.attempts, line),
    );
  }
  private where() {
    return { queue: this.queue, lane: this.lane, id: this.id };
  }
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}
