/**
 * The schedule loop every worker runs for its queue: read the soonest entries of `repeats`, sleep
 * until the first falls due (at most `REREAD_MS`, so a schedule added meanwhile is seen within
 * it), then bring every due schedule up to now with `FIRE` calls (`plan`). Any number of loops
 * may run at once, in any number of processes: each `FIRE` is a compare-and-set on the record's
 * next instant, so one of them adds an instant's job and the others miss. No leader.
 */
import type { Connection } from "../connector/connection.js";
import { fireInstant, readRecord, soonest } from "../jobs/repeat.js";
import { queueKey } from "../keyspace.js";
import { Instants, plan } from "./instants.js";
import { instantId, parseSpec } from "./options.js";

/** The longest sleep between two reads of `repeats` (ms): how soon a new schedule is seen. */
export const REREAD_MS = 1000;
/** Due entries handled per round; a full round is followed at once by another. */
const BATCH = 10;
/** How long after an instant the loop wakes (ms), so the server's clock has passed it. */
const AFTER_MS = 2;
/** How often the estimate of the server's clock is taken again (ms). */
const CLOCK_REFRESH_MS = 60_000;

export interface ScheduleLoopEvents {
  /** A job was added for `instant` of schedule `name`. */
  fired?(name: string, id: string, instant: number): void;
  error(err: unknown): void;
}

export class ScheduleLoop {
  private stopped = false;
  private running: Promise<void> | undefined;
  private sleeping: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private clock: { offset: number; at: number } | undefined;
  /** Parsed specs by record text, so a round does not parse a cron pattern again. */
  private readonly instants = new Map<string, Instants>();

  constructor(
    private readonly conn: Connection,
    private readonly queue: string,
    private readonly events: ScheduleLoopEvents,
  ) {}

  start(): void {
    this.running ??= this.loop();
  }

  /** Wakes the loop now (a schedule was added by this process). */
  poke(): void {
    this.sleeping?.resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    await this.running;
  }

  /** One round: fires what is due; says how long to sleep before the next. */
  async once(): Promise<number> {
    const head = await soonest(this.conn, this.queue, BATCH);
    if (head.length === 0) return REREAD_MS;
    const now = await this.serverNow();
    let moved = false;
    let due = false;
    for (const [name, next] of head) {
      if (next > now) break;
      due = true;
      try {
        if (await this.bringUp(name, now)) moved = true;
      } catch (err) {
        if (!this.stopped) this.events.error(err); // one bad record holds up no other schedule
      }
    }
    // A schedule moved on: read again at once (to the new head). Due entries that did not move
    // (a record this host cannot read, an entry without a record) are looked at again later.
    if (moved) return 0;
    return due ? REREAD_MS : Math.min(REREAD_MS, head[0]![1] - now + AFTER_MS);
  }

  /**
   * The `FIRE` calls that bring schedule `name` up to `now`, stopping at the first miss; false
   * when there was nothing to bring up (no record, or one not due).
   */
  private async bringUp(name: string, now: number): Promise<boolean> {
    const record = await readRecord(this.conn, this.queue, name);
    if (record === null) return false;
    let instants = this.instants.get(record.spec);
    if (!instants) {
      instants = new Instants(parseSpec(record.spec));
      if (this.instants.size > 1000) this.instants.clear();
      this.instants.set(record.spec, instants);
    }
    const calls = plan(instants, record.next, now);
    if (calls.length === 0) return false; // the record is ahead of its entry (it moves on a FIRE)
    for (const call of calls) {
      const id = instantId(this.queue, name, call.instant || call.expected);
      const outcome = await fireInstant(this.conn, this.queue, name, id, call);
      if (outcome === "miss") return true; // another loop moved it on
      if (outcome === "added" || outcome === "added-ended") this.events.fired?.(name, id, call.instant);
    }
    return true;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let sleep = REREAD_MS;
      try {
        sleep = await this.once();
      } catch (err) {
        if (!this.stopped) this.events.error(err);
      }
      if (sleep > 0 && !this.stopped) await this.sleep(sleep);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(entry.timer);
        if (this.sleeping === entry) this.sleeping = undefined;
        resolve();
      };
      const entry = { timer: setTimeout(done, ms), resolve: done };
      this.sleeping = entry;
    });
  }

  /** The server's clock: a `TIME` taken at most a minute ago, and the local clock since. */
  private async serverNow(): Promise<number> {
    const local = Date.now();
    if (!this.clock || local - this.clock.at > CLOCK_REFRESH_MS) {
      const [seconds, micros] = (await this.conn.send("TIME", [], queueKey(this.queue, ""))) as Buffer[];
      const after = Date.now();
      const server = Number(String(seconds)) * 1000 + Math.floor(Number(String(micros)) / 1000);
      this.clock = { offset: server - (local + after) / 2, at: after };
    }
    return Date.now() + this.clock.offset;
  }
}
