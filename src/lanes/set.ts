/**
 * The lanes a worker claims from, and which one it claims from next. Pure bookkeeping, no I/O.
 *
 * Fairness: claims rotate over the lanes that may hold work — each claim starts looking at the
 * lane after the one the previous claim took — so while several lanes hold jobs, each gets one
 * claim in turn, however full the others are. A lane whose claim came back empty is skipped until
 * a wake on its channel says it holds work again (or a probe round, at most once per probe
 * interval, looks at every lane once): empty lanes are never polled in a loop.
 */
export class LaneSet {
  private readonly lanes: string[] = [];
  private readonly ready = new Map<string, boolean>();
  /** Bumped by every wake of a lane: an empty answer to a claim sent before it proves nothing. */
  private readonly epochs = new Map<string, number>();
  private cursor = 0;
  private lastProbe: number;

  constructor(
    lanes: readonly string[],
    private readonly probeEveryMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastProbe = now();
    this.add(lanes);
  }

  /** Every lane, in the order they were added. */
  all(): readonly string[] {
    return this.lanes;
  }

  /** Adds lanes not yet in the set (they may hold work). Returns the ones that were new. */
  add(lanes: readonly string[]): string[] {
    const added = lanes.filter((lane) => !this.ready.has(lane));
    for (const lane of added) {
      this.lanes.push(lane);
      this.ready.set(lane, true);
      this.epochs.set(lane, 0);
    }
    return added;
  }

  /**
   * The lane the next claim should try, and its epoch (hand it back to `empty`), or null when no
   * lane may hold work. When none may and a probe is due, every lane is looked at once again.
   */
  next(): { lane: string; epoch: number } | null {
    const n = this.lanes.length;
    for (let pass = 0; pass < 2; pass++) {
      for (let step = 0; step < n; step++) {
        const at = (this.cursor + step) % n;
        const lane = this.lanes[at]!;
        if (this.ready.get(lane)) {
          this.cursor = (at + 1) % n;
          return { lane, epoch: this.epochs.get(lane)! };
        }
      }
      if (pass === 0 && !this.probe()) return null;
    }
    return null;
  }

  /** A claim sent at `epoch` found `lane` empty: skip it until it is woken (unless woken since). */
  empty(lane: string, epoch: number): void {
    if (this.epochs.get(lane) === epoch) this.ready.set(lane, false);
  }

  /** A wake on `lane`'s channel: it may hold work. */
  woke(lane: string): void {
    if (!this.ready.has(lane)) return;
    this.ready.set(lane, true);
    this.epochs.set(lane, this.epochs.get(lane)! + 1);
  }

  /** Every lane may hold work (after a reconnect, when wakes may have been missed). */
  wokeAll(): void {
    for (const lane of this.lanes) this.woke(lane);
  }

  /** Marks every lane ready when the last probe round is at least `probeEveryMs` old. */
  private probe(): boolean {
    if (this.now() - this.lastProbe < this.probeEveryMs) return false;
    this.lastProbe = this.now();
    this.wokeAll();
    return true;
  }
}
