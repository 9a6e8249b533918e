/**
 * A worker announces itself on its wake subscriber's client name (`src/observe/worker-name.ts`):
 * its id, concurrency, busy slots, host and pid, read by `CLIENT LIST` (`src/observe/workers.ts`).
 * The name changes only when the busy count does, at most once a second (a change within the
 * second is sent when it ends, the latest count only), and the lease heartbeat pings the socket
 * when nothing was sent since its last tick, so `CLIENT LIST`'s `idle` says when it was last
 * heard from. Nothing is written to the keyspace: the announcement ends with the socket (a
 * closed worker, a killed process: the server drops its connection).
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Subscription } from "../connector/connection.js";
import { type Announced, wakeClientName } from "../observe/worker-name.js";

/** A set that says when it changed (the worker's running jobs: the busy count). */
export class WatchedSet<T> extends Set<T> {
  constructor(private readonly onChange: () => void) {
    super();
  }

  override add(value: T): this {
    const had = this.has(value);
    super.add(value);
    if (!had) this.onChange();
    return this;
  }

  override delete(value: T): boolean {
    const deleted = super.delete(value);
    if (deleted) this.onChange();
    return deleted;
  }
}

/** The shortest time between two names sent (ms). */
const ANNOUNCE_EVERY_MS = 1000;

export class Announcer {
  private readonly fixed: Omit<Announced, "busy">;
  private sent = "";
  private sentAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private heard = false;
  private stopped = false;

  constructor(
    private readonly queue: string,
    concurrency: number,
    private readonly busy: () => number,
    private readonly socket: () => Subscription | undefined,
  ) {
    this.fixed = { id: randomBytes(6).toString("hex"), concurrency, host: hostname(), pid: process.pid };
  }

  /** The worker's id, as its name carries it. */
  get id(): string {
    return this.fixed.id;
  }

  /** The name for the busy count now (the wake subscriber's first socket boots with it). */
  name(): string {
    return wakeClientName(this.queue, { ...this.fixed, busy: this.busy() });
  }

  /** The busy count may have changed: sends the name now, or when the second since the last ends. */
  changed(): void {
    if (this.stopped || this.timer) return;
    const wait = this.sentAt + ANNOUNCE_EVERY_MS - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.send();
      }, wait);
      this.timer.unref();
    } else this.send();
  }

  /** The heartbeat's tick: a ping when nothing went out since the last tick. */
  keepAlive(): void {
    if (this.stopped) return;
    if (!this.heard) this.socket()?.ping();
    this.heard = false;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private send(): void {
    if (this.stopped) return;
    const name = this.name();
    if (name === this.sent) return;
    const socket = this.socket();
    if (!socket) return;
    socket.rename(name);
    this.sent = name;
    this.sentAt = Date.now();
    this.heard = true;
  }
}
