/**
 * A queue's server clock as the host estimates it: a `TIME` of the node that holds the queue
 * (on a cluster, its slot's primary), taken again at most every `REFRESH_MS`, and the local clock
 * since. The promoter and the schedule loop sleep until server due times with it.
 */
import type { Connection } from "./connector/connection.js";
import { queueKey } from "./keyspace.js";

/** How often the estimate is taken again (ms). */
const REFRESH_MS = 60_000;

export class ServerClock {
  /** Server time − local time (ms), and when it was measured. */
  private clock: { offset: number; at: number } | undefined;

  constructor(
    private readonly conn: Connection,
    private readonly queue: string,
  ) {}

  /** The server's time now, in ms. */
  async now(): Promise<number> {
    const local = Date.now();
    if (!this.clock || local - this.clock.at > REFRESH_MS) {
      const [seconds, micros] = (await this.conn.send("TIME", [], queueKey(this.queue, ""))) as Buffer[];
      const after = Date.now();
      const server = Number(String(seconds)) * 1000 + Math.floor(Number(String(micros)) / 1000);
      this.clock = { offset: server - (local + after) / 2, at: after };
    }
    return Date.now() + this.clock.offset;
  }
}
