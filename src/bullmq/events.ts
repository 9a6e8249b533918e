/**
 * BullMQ's `QueueEvents` over EchoMQ's (src/events/queue-events.ts): each entry of the queue's
 * event bus emitted under BullMQ's name and shape (`completed` with `returnvalue`: the entry's
 * result when it carries one — at most 1 KiB — else read from the row; `failed` once, when no retry is left), in the bus's order, with the entry's id as second
 * argument. An event this entry does not emit is refused by name when listened to.
 */
import { EventEmitter } from "node:events";
import type { Connection } from "../connector/connection.js";
import type { BusEvent, EventKind } from "../events/entry.js";
import { QueueEvents as CoreQueueEvents } from "../events/queue-events.js";
import { jobKey } from "../keyspace.js";
import { decodeValue, reasonOf } from "./codec.js";
import { Link } from "./link.js";
import { checkNames, type ConnectionOptions, refusal } from "./options.js";
import type { Untyped } from "./options.js";
import { entryOf } from "./names.js";

export interface QueueEventsOptions {
  connection?: ConnectionOptions;
  autorun?: boolean;
  lastEventId?: string;
  blockingTimeout?: number;
  [refused: string]: unknown;
}

type Emit = (name: string, payload: Record<string, unknown>) => void;

/** The entry's time (ms), from its id. */
const at = (e: BusEvent) => Number(e.eventId.split("-")[0]);

/** Each bus kind → what BullMQ emits for it (`completed` is read from the row: see below). */
const MAP: Partial<Record<EventKind, (e: BusEvent, emit: Emit) => void>> = {
  added: (e, emit) => {
    emit("added", { jobId: e.jobId });
    emit("waiting", { jobId: e.jobId });
  },
  delayed: (e, emit) => {
    emit("added", { jobId: e.jobId });
    emit("delayed", { jobId: e.jobId, delay: at(e) + (e.delay ?? 0) });
  },
  promoted: (e, emit) => emit("waiting", { jobId: e.jobId, prev: "delayed" }),
  active: (e, emit) => emit("active", { jobId: e.jobId, prev: "waiting" }),
  progress: (e, emit) => emit("progress", { jobId: e.jobId, data: decodeValue(e.data) }),
  retrying: (e, emit) =>
    (e.delay ?? 0) > 0
      ? emit("delayed", { jobId: e.jobId, delay: at(e) + (e.delay ?? 0) })
      : emit("waiting", { jobId: e.jobId, prev: "failed" }),
  dead: (e, emit) =>
    emit("failed", { jobId: e.jobId, failedReason: reasonOf(e.reason ?? ""), prev: "active" }),
  stalled: (e, emit) => emit("stalled", { jobId: e.jobId }),
  requeued: (e, emit) => emit("waiting", { jobId: e.jobId, prev: "active" }),
  removed: (e, emit) => emit("removed", { jobId: e.jobId }),
  paused: (_e, emit) => emit("paused", {}),
  resumed: (_e, emit) => emit("resumed", {}),
  cleaned: (e, emit) => emit("cleaned", { count: e.count }),
  waiting: (e, emit) => {
    emit("added", { jobId: e.jobId });
    emit("waiting-children", { jobId: e.jobId });
  },
  ready: (e, emit) => emit("waiting", { jobId: e.jobId, prev: "waiting-children" }),
};

export class QueueEvents extends EventEmitter {
  private readonly link: Link;
  private reader: Promise<CoreQueueEvents> | undefined;
  private order: Promise<void> = Promise.resolve();
  private readonly start: { lastEventId?: string; blockMs?: number };

  constructor(
    readonly name: string,
    opts: QueueEventsOptions = {},
  ) {
    super();
    const o = checkNames("QueueEvents options", opts, "opts") as QueueEventsOptions;
    this.start = {
      ...(o.lastEventId === undefined ? {} : { lastEventId: o.lastEventId }),
      ...(o.blockingTimeout === undefined ? {} : { blockMs: o.blockingTimeout }),
    };
    this.link = new Link(o.connection);
    if (o.autorun ?? true) void this.run().catch((err: unknown) => this.fault(err));
  }

  /** Listens to a BullMQ event; one this entry does not emit is refused by name. */
  override on(event: string | symbol, listener: (...args: Untyped[]) => void): this {
    if (typeof event === "string" && entryOf("QueueEvents", event)?.status !== "honoured")
      throw refusal("QueueEvents", event);
    return super.on(event, listener);
  }

  /** Starts reading (autorun: false); resolves once the reader is connected. */
  async run(): Promise<void> {
    this.reader ??= this.link.get().then((conn) => this.open(conn));
    await (await this.reader).ready;
  }

  waitUntilReady(): Promise<void> {
    return this.run();
  }

  async close(): Promise<void> {
    const reader = await this.reader?.catch(() => undefined);
    await reader?.close().catch(() => {});
    await this.order;
    await this.link.close();
  }

  private open(conn: Connection): CoreQueueEvents {
    const reader = new CoreQueueEvents(this.name, conn, this.start);
    const emit: Emit = (name, payload) => this.emit(name, payload, current);
    let current = "";
    reader.on("event", (e) => {
      this.order = this.order
        .then(async () => {
          current = e.eventId;
          if (e.kind === "completed") {
            const result =
              e.result ??
              ((await conn.send("HGET", [jobKey(this.name, e.jobId ?? ""), "result"])) as Buffer | null);
            emit("completed", {
              jobId: e.jobId,
              returnvalue: decodeValue(result ?? undefined),
              prev: "active",
            });
          } else MAP[e.kind]?.(e, emit);
        })
        .catch((err: unknown) => this.fault(err));
    });
    reader.on("error", (err) => this.fault(err));
    return reader;
  }

  private fault(err: unknown): void {
    if (this.listenerCount("error") > 0) this.emit("error", err);
  }
}
