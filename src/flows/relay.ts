/**
 * The flow relay of one queue (docs/architecture.md, "Flows"): moves the entries a flow's
 * children left in the queue's outbox to their parents. Per entry, in this order: `SETTLE` in
 * the parent's slot (records the child once: a second relay of the same entry answers
 * `duplicate` and changes nothing), then `ACK` in the child's slot. A crash between the two
 * leaves the entry, relayed again later: idempotent, so any number of relays (every worker of
 * the queue runs one) may work one outbox at once.
 *
 * No polling while there is nothing to relay: a round runs when the relay starts, shortly after
 * a poke (the worker pokes after each of its settlements and after its reaper buried a job — the
 * moments an entry may have been written), and otherwise every `everyMs` (±20%) for entries no
 * poke announced (a child the module's timers buried, a relay that died mid-round). A full batch
 * is followed at once by another.
 */
import type { Connection } from "../connector/connection.js";
import { InvalidOutboxEntryError } from "../errors.js";
import { ack, outbox, parseEntry, settle } from "../jobs/flows.js";

interface RelayOptions {
  /** Entries per round. Default 100. */
  batch: number;
  /** A round at least this often (ms). Default 30000. */
  everyMs: number;
  /** How soon after a poke the round runs (ms): pokes meanwhile share it. Default 20. */
  pokeMs: number;
}

export const DEFAULT_RELAY: RelayOptions = { batch: 100, everyMs: 30_000, pokeMs: 20 };

interface RelayEvents {
  /** A round relayed `n` entries. */
  relayed?(n: number): void;
  error(err: unknown): void;
}

export class Relay {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private sleepTimer: NodeJS.Timeout | undefined;
  private poked: NodeJS.Timeout | undefined;
  /** A poke came while a round ran: another round follows it at once. */
  private again = false;

  constructor(
    private readonly conn: Connection,
    private readonly queue: string,
    private readonly opts: RelayOptions,
    private readonly events: RelayEvents,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** An entry may have been written: a round runs within `pokeMs` (one for every poke meanwhile). */
  poke(): void {
    if (this.stopped || this.poked) return;
    this.poked = setTimeout(() => {
      this.poked = undefined;
      if (this.wakeUp) this.wakeUp();
      else this.again = true;
    }, this.opts.pokeMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.poked);
    this.wakeUp?.();
    await this.loop;
  }

  /**
   * One round: the oldest `batch` entries, each settled on its parent and then acknowledged.
   * → how many were relayed, and whether the batch was full with none failing (more may wait).
   */
  async round(): Promise<{ relayed: number; more: boolean }> {
    const entries = await outbox(this.conn, this.queue, this.opts.batch);
    const done = await Promise.all(entries.map((entry) => this.relay(entry)));
    const relayed = done.filter(Boolean).length;
    if (relayed > 0) this.events.relayed?.(relayed);
    return { relayed, more: entries.length === this.opts.batch && relayed === entries.length };
  }

  /** Settles one entry on its parent, then acknowledges it; false (reported) when it stays. */
  private async relay(entry: Buffer): Promise<boolean> {
    try {
      const parsed = parseEntry(entry);
      if (parsed === null) {
        await ack(this.conn, this.queue, entry);
        this.events.error(new InvalidOutboxEntryError(this.queue, entry));
        return false;
      }
      await settle(this.conn, parsed.parent, this.queue, parsed.childId, parsed.outcome, parsed.value);
      await ack(this.conn, this.queue, entry);
      return true;
    } catch (err) {
      if (!this.stopped) this.events.error(err);
      return false;
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let more = false;
      try {
        more = (await this.round()).more;
      } catch (err) {
        if (!this.stopped) this.events.error(err);
      }
      if (more || this.stopped) continue;
      if (this.again) {
        this.again = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(this.sleepTimer);
          this.wakeUp = undefined;
          resolve();
        };
        this.wakeUp = done;
        this.sleepTimer = setTimeout(done, this.opts.everyMs * (0.8 + 0.4 * Math.random()));
      });
    }
  }
}
