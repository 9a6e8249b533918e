/** A claimed job as the handler sees it. */
import type { Connection } from "../connector/connection.js";
import { InvalidArgumentError, InvalidDataError } from "../errors.js";
import { encodeData, JSON_SERIALIZER, type Serializer } from "../serializer.js";
import { type ClaimedJob, log, progress, reschedule, updateData } from "../jobs.js";
import { encodeResult } from "./outcome.js";
import { inCallWords } from "../jobs/refusals.js";

export interface Job {
  readonly id: string;
  /** The queue the job was added to. */
  readonly queue: string;
  /** The physical queue the job lives in: the queue itself, or one of its lanes. */
  readonly lane: string;
  /** The payload as stored: the bytes `add` wrote (see `data`). */
  readonly payload: Buffer;
  /**
   * The job's data: its payload read by the worker's serializer (default `json`: the payload
   * parsed as JSON; `raw`: its bytes). Read once, on first use; a payload the serializer cannot
   * read throws `InvalidDataError` (the attempt fails with it when the handler lets it through).
   */
  readonly data: unknown;
  /** This attempt's number (1 for the first run); also the lease token. */
  readonly attempts: number;
  /** Attempts that ended before this one (`attempts - 1`). */
  readonly attemptsMade: number;
  /** When this attempt's claim leased the job (server ms: the lease deadline less the lease). */
  readonly processedOn: number;
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
  /**
   * Replaces the job's data on its row (`UPDATE`, through the worker's serializer) and here: the
   * job's later attempts read it. No lease token is asked (as `Queue.updateData`).
   */
  updateData(data: unknown): Promise<void>;
  /**
   * Moves the job to `scheduled`, due at `timestamp` (ms since the epoch; one already past is due
   * now), and releases its lease (`RESCHEDULE`, both wires): no error is written and `attempts` is
   * unchanged, so the snoozed attempt counts toward max attempts. The worker then neither
   * completes nor fails it — throw `DelayedError` to leave the handler (BullMQ's shape). Rejects
   * with `LeaseLostError` when this worker no longer holds the lease.
   */
  moveToDelayed(timestamp: number): Promise<void>;
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
  private decoded: { data: unknown } | undefined;
  private updated: Buffer | undefined;
  /** `moveToDelayed` handed the job back to `schedule`: the worker settles nothing. */
  moved = false;

  readonly startedAt = Date.now();

  constructor(
    readonly queue: string,
    readonly lane: string,
    private readonly claimed: ClaimedJob,
    private readonly conn: Connection,
    private readonly serializer: Serializer = JSON_SERIALIZER,
    private readonly leaseMs = 0,
  ) {}

  get attemptsMade(): number {
    return this.claimed.attempts - 1;
  }
  get processedOn(): number {
    return this.claimed.deadline - this.leaseMs;
  }

  get data(): unknown {
    if (this.decoded) return this.decoded.data;
    let data: unknown;
    try {
      data = this.serializer.deserialize(this.payload);
    } catch (err) {
      throw new InvalidDataError(this.id, err instanceof Error ? err.message : String(err), err);
    }
    this.decoded = { data };
    return data;
  }

  get id(): string {
    return this.claimed.id;
  }
  get payload(): Buffer {
    return this.updated ?? this.claimed.payload;
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
    return this.payload.toString("utf8");
  }
  json<T = unknown>(): T {
    return JSON.parse(this.payload.toString("utf8")) as T;
  }
  async updateData(data: unknown): Promise<void> {
    const payload = encodeData(this.serializer, data);
    await inCallWords("updateData()", this.conn, this.where(), () =>
      updateData(this.conn, this.lane, this.id, payload),
    );
    this.updated = Buffer.from(payload);
    this.decoded = { data };
  }
  async moveToDelayed(timestamp: number): Promise<void> {
    if (typeof timestamp !== "number" || !Number.isSafeInteger(timestamp) || timestamp < 0) {
      throw new InvalidArgumentError(
        "timestamp",
        `must be a non-negative integer of ms since the epoch, got ${String(timestamp)}`,
      );
    }
    const delayMs = Math.max(0, timestamp - Date.now());
    await inCallWords("moveToDelayed()", this.conn, this.where(), () =>
      reschedule(this.conn, this.lane, this.id, this.attempts, delayMs),
    );
    this.moved = true;
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
