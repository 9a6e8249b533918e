/**
 * `QueueEvents`: follows one queue's event bus (`emq:{q}:events`) from any process, on a fenced
 * connection of its own (`conn.duplicate()`; on a cluster the stream's key routes every read to
 * the queue's slot), and emits each entry as a typed event — one event per kind, and `event` for
 * every one.
 *
 * Each round is one atomic read (`MULTI`, `XINFO STREAM`, `XREAD COUNT <count> STREAMS <events>
 * <last id>`, `EXEC`): the entries after the last one delivered, and what the stream holds at
 * that instant, from which the reader knows whether the trim passed it (src/events/position.ts).
 * When it has drained the stream it waits with `XREAD BLOCK` for anything newer (the entries are
 * then read by the next atomic round). A watchdog bounds every read: one that has not answered
 * `watchdogMs` after it should have (a blocked read: after its block ended) is taken as lost —
 * a half-open socket after a network fault — and the reader drops that connection and opens a
 * new one, from the last id it delivered.
 *
 * Delivery is honest, not guaranteed: a reader slower than the trim (`Queue.setEvents`) loses
 * the entries trimmed before it read them, and says so with one `gap` event, then goes on from
 * the stream's first entry. Nothing is delivered twice within one reader; a reader resumed with
 * `lastEventId` continues after that id.
 */
import { EventEmitter } from "node:events";
import type { Connection } from "../connector/connection.js";
import {
  ConnectionLostError,
  EchoMQError,
  InvalidArgumentError,
  ServerError,
  WatchdogError,
} from "../errors.js";
import { assertValidQueue, queueKey } from "../keyspace.js";
import { FIXED_KEYSPACE, checkKeys, type KeyType, type OptionTable } from "../option-keys.js";
import { isFatal, retryAfterError } from "../worker/faults.js";
import { type BusEvent, type EventKind, isStreamId, parseEntries } from "./entry.js";
import {
  AT_START,
  advance,
  after,
  atEnd,
  type Gap,
  NO_STREAM,
  type Position,
  type StreamInfo,
} from "./position.js";

export interface QueueEventsOptions {
  /**
   * Where to start: after this entry id (`<ms>-<seq>`, an event's `eventId`: resume where a
   * reader stopped), `"0"` from the stream's first entry, or `"$"` (the default) with what is
   * written from now on.
   */
  lastEventId?: string;
  /** Entries per read, at most. Default 1000. */
  count?: number;
  /** How long one waiting read blocks on the server (ms). Default 5000. */
  blockMs?: number;
  /** How long past its due time a read may stay unanswered before the reader reconnects (ms). Default 5000. */
  watchdogMs?: number;
}

export type QueueEventsEvents = {
  [K in EventKind]: [event: BusEvent];
} & {
  /** Every entry, whatever its kind. */
  event: [event: BusEvent];
  /** The trim passed the reader: entries were lost before it read them (see `Gap`). */
  gap: [gap: Gap];
  /** A read failed (it is retried) or a listener threw; a fatal one stops the reader. */
  error: [error: unknown];
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function positive(name: string, value: unknown, fallback: number, max: number): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > max) {
    throw new InvalidArgumentError(name, `must be an integer from 1 to ${max}, got ${String(value)}`);
  }
  return v;
}

const OPTIONS: OptionTable = {
  of: "QueueEvents",
  keys: {
    lastEventId: "string",
    count: "number",
    blockMs: "number",
    watchdogMs: "number",
  } satisfies Record<keyof QueueEventsOptions, KeyType>,
  foreign: {
    blockingTimeout: "blockMs",
    connection: "QueueEvents reads on a connection of its own: new QueueEvents(queue, connection, options)",
    autorun: "a QueueEvents reads from when it is built; close() stops it",
    prefix: FIXED_KEYSPACE,
  },
};

/**
 * A raw client error as an EchoMQ one: a server reply as `ServerError`, any other client error
 * (a command the client gave up on while the server was unreachable, a dropped socket) as
 * `ConnectionLostError`, keeping it as `cause`.
 */
function typed(err: unknown): unknown {
  if (err instanceof EchoMQError || !(err instanceof Error)) return err;
  return err.name === "ReplyError" ? new ServerError(err.message, err) : new ConnectionLostError(err);
}

export class QueueEvents extends EventEmitter<QueueEventsEvents> {
  /** Resolves when the reader is connected and knows where it starts; rejects on a fatal error. */
  readonly ready: Promise<void>;
  /** Settles when the reader has stopped: after `close()`, or on a fatal error (rejects with it). */
  readonly closed: Promise<void>;
  private readonly key: string;
  private readonly count: number;
  private readonly blockMs: number;
  private readonly watchdogMs: number;
  private readonly start: string;
  private position: Position | undefined;
  private conn: Connection | undefined;
  private stopped = false;
  private paused: { resume: () => void; done: Promise<void> } | undefined;

  constructor(
    readonly queue: string,
    private readonly source: Connection,
    options: QueueEventsOptions = {},
  ) {
    super();
    assertValidQueue(queue);
    checkKeys(options, OPTIONS);
    this.key = queueKey(queue, "events");
    this.count = positive("count", options.count, 1000, 100_000);
    this.blockMs = positive("blockMs", options.blockMs, 5000, 3_600_000);
    this.watchdogMs = positive("watchdogMs", options.watchdogMs, 5000, 3_600_000);
    const start = options.lastEventId ?? "$";
    if (start !== "$" && !isStreamId(start)) {
      throw new InvalidArgumentError(
        "lastEventId",
        `must be "$", "0" or a stream id <ms>-<seq> (each at most 2^64-1), got ${start}`,
      );
    }
    this.start = start;
    let began!: () => void;
    let failed!: (err: unknown) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      began = resolve;
      failed = reject;
    });
    this.ready.catch(() => {});
    this.closed = this.run(began, failed);
    this.closed.catch(() => {});
  }

  /** The id of the last entry delivered (or where the reader starts, before the first). */
  get lastEventId(): string {
    return this.position?.lastId ?? this.start;
  }

  /**
   * Stops reading after the read in flight. A paused reader is a slow one: when the trim passes
   * it meanwhile, `resume()` delivers a `gap` first.
   */
  pause(): void {
    if (this.paused || this.stopped) return;
    let resume!: () => void;
    const done = new Promise<void>((r) => (resume = r));
    this.paused = { resume, done };
  }

  resume(): void {
    const paused = this.paused;
    this.paused = undefined;
    paused?.resume();
  }

  /** Stops the reader (a blocked read is cut short) and closes its connection. */
  async close(): Promise<void> {
    this.stopped = true;
    this.resume();
    this.drop();
    await this.closed.catch(() => {});
  }

  private async run(began: () => void, failed: (err: unknown) => void): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      if (this.paused) {
        await this.paused.done;
        continue;
      }
      try {
        this.conn ??= await this.source.duplicate();
        if (this.stopped) break;
        this.position ??= await this.begin(this.conn);
        began();
        const full = await this.round(this.conn);
        failures = 0;
        if (!full && !this.stopped && !this.paused) await this.wait(this.conn);
      } catch (err) {
        if (this.stopped) break;
        const error = this.conn?.fatal ?? typed(err);
        if (isFatal(error, this.conn) || isFatal(err)) {
          this.stopped = true;
          this.drop();
          failed(error);
          this.report(error);
          throw error;
        }
        this.report(error);
        this.drop();
        await sleep(retryAfterError(++failures));
      }
    }
    this.drop();
    began();
  }

  /** Where the reader starts: at the stream's end (`$`, read now), its start (`0`), or after an id. */
  private async begin(conn: Connection): Promise<Position> {
    if (this.start === "0" || this.start === "0-0") return AT_START;
    if (this.start !== "$") return after(this.start);
    const reply = await this.bounded(conn.client.xinfo("STREAM", this.key).catch(noStream), this.watchdogMs);
    return atEnd(reply === null ? NO_STREAM : streamInfo(reply));
  }

  /** One atomic read: the gap, if the trim passed the reader, then the entries. True when full. */
  private async round(conn: Connection): Promise<boolean> {
    const pos = this.position!;
    const read = conn.client
      .multi()
      .xinfo("STREAM", this.key)
      .xreadBuffer("COUNT", this.count, "STREAMS", this.key, pos.lastId)
      .exec();
    const replies = await this.bounded(read, this.watchdogMs);
    if (!replies) throw new Error("the read's transaction was aborted");
    const [[infoErr, info], [readErr, streams]] = replies as [
      [Error | null, unknown],
      [Error | null, unknown],
    ];
    if (readErr) throw readErr;
    if (infoErr && !/no such key/i.test(infoErr.message)) throw infoErr;
    const entries = entriesOf(streams);
    const last = entries[entries.length - 1]?.[0] ?? null;
    const { position, gap } = advance(
      pos,
      infoErr ? NO_STREAM : streamInfo(info),
      { count: entries.length, lastRead: last },
      this.count,
    );
    this.position = position;
    if (gap) this.deliver("gap", gap);
    for (const [eventId, fields] of entries) {
      for (const event of parseEntries(eventId, fields)) {
        this.deliver(event.kind, event);
        this.deliver("event", event);
      }
    }
    return entries.length >= this.count;
  }

  /** Waits until the stream holds an entry after the last one delivered (or the block ends). */
  private async wait(conn: Connection): Promise<void> {
    const blocked = conn.client.xreadBuffer(
      "COUNT",
      1,
      "BLOCK",
      this.blockMs,
      "STREAMS",
      this.key,
      this.position!.lastId,
    );
    await this.bounded(blocked, this.blockMs + this.watchdogMs);
  }

  /** `promise`, or a `WatchdogError` when it is still unanswered after `ms`. */
  private bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const watchdog = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WatchdogError(`a read of ${this.key}`, ms)), ms);
    });
    return Promise.race([promise, watchdog]).finally(() => clearTimeout(timer));
  }

  /** Drops the reader's connection at once (a blocked read cannot hold a QUIT up). */
  private drop(): void {
    const conn = this.conn;
    this.conn = undefined;
    if (!conn) return;
    conn.client.disconnect();
    void conn.close().catch(() => {});
  }

  /** Emits to the listeners; one that throws is reported, and the reader goes on. */
  private deliver<K extends keyof QueueEventsEvents>(name: K, ...args: QueueEventsEvents[K]): void {
    try {
      (this.emit as (n: K, ...a: QueueEventsEvents[K]) => boolean)(name, ...args);
    } catch (err) {
      this.report(err);
    }
  }

  private report(err: unknown): void {
    if (this.listenerCount("error") > 0) this.emit("error", err);
  }
}

/** `XINFO STREAM` on a stream that does not exist: no stream. */
function noStream(err: unknown): null {
  if (err instanceof Error && /no such key/i.test(err.message)) return null;
  throw err;
}

/** The fields of `XINFO STREAM` the reader needs. */
function streamInfo(reply: unknown): StreamInfo {
  const flat = Array.isArray(reply) ? reply : [];
  const get = (name: string): unknown => {
    const at = flat.findIndex((v, i) => i % 2 === 0 && String(v) === name);
    return at >= 0 ? flat[at + 1] : undefined;
  };
  const first = get("first-entry");
  return {
    length: Number(get("length") ?? 0),
    added: Number(get("entries-added") ?? 0),
    first: Array.isArray(first) ? String(first[0]) : null,
    lastGenerated: String(get("last-generated-id") ?? "0-0"),
  };
}

/** An `XREAD` reply (bulk strings as Buffers) → the entries of its one stream. */
function entriesOf(reply: unknown): [string, Buffer[]][] {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  const [, entries] = reply[0] as [Buffer, [Buffer, Buffer[]][]];
  return (entries ?? []).map(([id, fields]) => [id.toString("latin1"), fields ?? []]);
}
