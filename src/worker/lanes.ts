/**
 * A worker's lanes at run time: which physical queues it serves (the lanes of its queue's lane
 * count and of every count the queue has recorded — lanes of a count no longer used drain too),
 * a wake subscription and housekeeping timers per lane (unless the node runs them: wire 6), a flow
 * relay per lane (always: the node does not relay), and the registry read again now and then so
 * lanes recorded later join. A queue without lanes is one lane: the queue itself.
 */
import { laneClientName } from "./client-name.js";
import type { Connection, Subscription } from "../connector/connection.js";
import { DEFAULT_RELAY, Relay } from "../flows/relay.js";
import { recordLanes } from "../jobs.js";
import { queueKey } from "../keyspace.js";
import { lanesOf, recordedLanes } from "../lanes/registry.js";
import { LaneSet } from "../lanes/set.js";
import { Timers, type TimerOptions } from "../timers.js";
import { wakeCount } from "../wake.js";
import { serverRunsTimers } from "./housekeeping.js";

interface LaneEvents {
  /** `n` jobs became ready on `lane`. */
  wake(lane: string, n: number): void;
  /** A due time changed on `lane` (wake `0`: a delayed job, a schedule added or replaced). */
  dueChanged?(lane: string): void;
  /** Subscribed again: wakes may have been missed on every lane. */
  resubscribed(): void;
  stalled(requeued: string[], dead: string[]): void;
  fault(err: unknown): void;
}

export class WorkerLanes {
  readonly set: LaneSet;
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly timers = new Map<string, Timers>();
  private readonly relays = new Map<string, Relay>();
  private refresher: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The lane whose subscriber carries the worker's announcement (the queue's first lane). */
  private wakeLane: string | undefined;

  constructor(
    private readonly conn: Connection,
    private readonly queue: string,
    private readonly lanes: number,
    private readonly timerOptions: TimerOptions,
    probeEveryMs: number,
    private readonly refreshEveryMs: number,
    private readonly events: LaneEvents,
    /** The name of the queue's first lane's subscriber: the worker's announcement, as it is now. */
    private readonly wakeName: () => string,
  ) {
    this.set = new LaneSet([], probeEveryMs);
  }

  /** Records this worker's lane count (laned queues), subscribes to every lane, starts the timers. */
  async start(): Promise<void> {
    const counts =
      this.lanes > 1
        ? await recordLanes(this.conn, this.queue, this.lanes)
        : await recordedLanes(this.conn, this.queue);
    await this.join(lanesOf(this.queue, [this.lanes, ...counts]));
    this.refresher = setInterval(() => void this.refresh(), this.refreshEveryMs);
  }

  /** The subscription that carries the worker's announcement, while it runs. */
  wakeSubscription(): Subscription | undefined {
    return this.wakeLane === undefined ? undefined : this.subscriptions.get(this.wakeLane);
  }

  /** The timers of a lane (its promoter is told when a due time changed). */
  timersOf(lane: string): Timers | undefined {
    return this.timers.get(lane);
  }

  /**
   * A flow child of `lane` may have settled (completed, or dead): its outbox entry is relayed to
   * its parent shortly.
   */
  settled(lane: string): void {
    this.relays.get(lane)?.poke();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.refresher);
    await Promise.all([...this.relays.values()].map((r) => r.stop()));
    await Promise.all([...this.timers.values()].map((t) => t.stop()));
    await Promise.all([...this.subscriptions.values()].map((s) => s.close()));
  }

  /** Reads the registry again; lanes recorded since join (their jobs drain like the others). */
  private async refresh(): Promise<void> {
    try {
      const counts = await recordedLanes(this.conn, this.queue);
      await this.join(lanesOf(this.queue, [this.lanes, ...counts]));
    } catch (err) {
      if (!this.stopped) this.events.fault(err);
    }
  }

  private async join(lanes: readonly string[]): Promise<void> {
    const added = this.set.add(lanes);
    await Promise.all(added.map((lane) => this.subscribe(lane)));
    if (this.stopped) return;
    for (const lane of added) {
      if (this.stopped) return;
      const relay = new Relay(this.conn, lane, DEFAULT_RELAY, { error: (err) => this.events.fault(err) });
      this.relays.set(lane, relay);
      relay.start();
      if (!this.timerOptions.hostTimers && (await this.serverRuns(lane))) continue;
      if (this.stopped) return;
      const timers = new Timers(this.conn, lane, this.timerOptions, {
        stalled: (requeued, dead) => {
          if (dead.length > 0) relay.poke();
          this.events.stalled(requeued, dead);
        },
        error: (err) => this.events.fault(err),
      });
      this.timers.set(lane, timers);
      timers.start();
    }
  }

  /** Whether the lane's node runs its timers; when asking fails, the worker runs its own (reported). */
  private async serverRuns(lane: string): Promise<boolean> {
    try {
      return await serverRunsTimers(this.conn, lane, this.timerOptions);
    } catch (err) {
      this.events.fault(err);
      return false;
    }
  }

  /**
   * `SSUBSCRIBE emq:{lane}:wake` on a fenced socket of its own (on a cluster, on the primary that
   * owns the lane's slot, following it when it moves). The queue's first lane's socket is named
   * `emq-wake-<queue>…` with what the worker announces (`wakeName`), so a worker counts once per
   * queue in `CLIENT LIST`.
   */
  private async subscribe(lane: string): Promise<void> {
    const first = this.subscriptions.size === 0 && lane === this.set.all()[0];
    if (first) this.wakeLane = lane;
    const subscription = await this.conn.subscribeShard(queueKey(lane, "wake"), {
      name: first ? this.wakeName() : laneClientName(lane),
      onMessage: (message) => {
        const ready = wakeCount(message);
        if (ready === 0) {
          this.timers.get(lane)?.scheduleChanged();
          this.events.dueChanged?.(lane);
        } else this.events.wake(lane, ready);
      },
      onResubscribed: () => this.events.resubscribed(),
      onFatal: (err) => this.events.fault(err),
    });
    if (this.stopped) await subscription.close();
    else this.subscriptions.set(lane, subscription);
  }
}
