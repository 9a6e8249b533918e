/**
 * The schedule loop every worker runs for its queue: read the soonest entries of `repeats`, sleep
 * until the first falls due (a wake `0` on the queue's channel — a schedule added or replaced —
 * cuts the sleep short; `REREAD_MS` bounds it), then bring every due schedule up to now with
 * `FIRE` calls (`plan`). Any number of loops may run at once, in any number of processes: each
 * `FIRE` is a compare-and-set on the record's next instant, so one of them adds an instant's job
 * and the others miss. No leader.
 */
import { ServerClock } from "../server-clock.js";
import type { Connection } from "../connector/connection.js";
import { fireInstant, readRecord, soonest } from "../jobs/repeat.js";
import { Instants, plan } from "./instants.js";
import { instantId, parseSpec } from "./options.js";

/**
 * The longest sleep between two reads of `repeats` (ms). A new or replaced schedule is seen at
 * once (`SCHEDULE` publishes wake `0`, and a worker that subscribes again pokes the loop too), so
 * this only bounds how late a schedule can be seen whose wake message was lost; it is long so
 * that an idle worker of a queue without schedules costs one read per half minute.
 */
const REREAD_MS = 30_000;
/** How soon after a wake `0` the loop reads `repeats` again (ms). */
const POKE_MS = 10;
/** Due entries handled per round; a full round is followed at once by another. */
const BATCH = 10;
/** How long after an instant the loop wakes (ms), so the server's clock has passed it. */
const AFTER_MS = 2;

interface ScheduleLoopEvents {
  /** A job was added for `instant` of schedule `name`. */
  fired?(name: string, id: string, instant: number): void;
  error(err: unknown): void;
}

export class ScheduleLoop {
  private stopped = false;
  private running: Promise<void> | undefined;
  private sleeping: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private poking: NodeJS.Timeout | undefined;
  /** A poke that came while the loop was reading or firing: the round it ends may be stale. */
  private pokedAwake = false;
  /** Parsed specs by record text, so a round does not parse a cron pattern again. */
  private readonly instants = new Map<string, Instants>();

  /** The server's clock, estimated (due times are server times). */
  private readonly serverClock: ServerClock;

  constructor(
    private readonly conn: Connection,
    private readonly queue: string,
    private readonly events: ScheduleLoopEvents,
  ) {
    this.serverClock = new ServerClock(conn, queue);
  }

  start(): void {
    this.running ??= this.loop();
  }

  /**
   * A due time changed (wake `0`: a schedule added or replaced, or a delayed job): the loop, asleep
   * until the instant it knew, reads `repeats` again within `POKE_MS` — a burst of delayed adds
   * costs one read, not one per add.
   */
  poke(): void {
    if (!this.sleeping) {
      this.pokedAwake = true; // the round under way may have read `repeats` before the change
      return;
    }
    if (this.poking) return;
    const sleep = this.sleeping;
    this.poking = setTimeout(() => {
      this.poking = undefined;
      sleep.resolve();
    }, POKE_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.poking);
    this.sleeping?.resolve();
    await this.running;
  }

  /** One round: fires what is due; says how long to sleep before the next. */
  async once(): Promise<number> {
    const head = await soonest(this.conn, this.queue, BATCH);
    const now = await this.serverClock.now();
    let sleep = REREAD_MS;
    for (const [name, next] of head) {
      if (next > now) {
        sleep = Math.min(sleep, next - now + AFTER_MS);
        break;
      }
      try {
        sleep = Math.min(sleep, await this.bringUp(name, now));
      } catch (err) {
        if (!this.stopped) this.events.error(err); // one bad record holds up no other schedule
      }
    }
    return sleep;
  }

  /**
   * The `FIRE` calls that bring schedule `name` up to `now`, stopping at the first miss. Returns
   * how long the loop may sleep for this schedule: `0` when it moved on (read again at once, to
   * its new next instant), the time to its record's next instant when the record is ahead of the
   * entry just read (another loop moved it meanwhile), `REREAD_MS` when there is no record.
   */
  private async bringUp(name: string, now: number): Promise<number> {
    const record = await readRecord(this.conn, this.queue, name);
    if (record === null || record.paused) return REREAD_MS; // a paused one waits at the paused score
    let instants = this.instants.get(record.spec);
    if (!instants) {
      instants = new Instants(parseSpec(record.spec));
      if (this.instants.size > 1000) this.instants.clear();
      this.instants.set(record.spec, instants);
    }
    const calls = plan(instants, record.next, now);
    if (calls.length === 0) return Math.max(record.next - now + AFTER_MS, 0);
    for (const call of calls) {
      const id = instantId(this.queue, name, call.instant || call.expected);
      const outcome = await fireInstant(this.conn, this.queue, name, id, call);
      if (outcome === "miss") return 0; // another loop moved it on
      if (outcome === "added" || outcome === "added-ended") this.events.fired?.(name, id, call.instant);
    }
    return 0;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let sleep = REREAD_MS;
      this.pokedAwake = false;
      try {
        sleep = await this.once();
      } catch (err) {
        if (!this.stopped) this.events.error(err);
      }
      if (this.pokedAwake) sleep = Math.min(sleep, POKE_MS);
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
}
