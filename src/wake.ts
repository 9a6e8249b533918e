/**
 * The wake gate: idle worker slots wait here instead of polling the server. A message on the
 * queue's wake channel (published by every verb that makes a job ready) releases one waiter; a
 * slow safety tick releases one waiter too, so a missed message costs at most one tick.
 */
export class WakeGate {
  private readonly waiters: (() => void)[] = [];
  private tick: NodeJS.Timeout | undefined;
  /** Wakes that found no waiter, kept (up to `maxPermits`) so a slot about to wait does not miss them. */
  private permits = 0;

  constructor(
    private readonly safetyTickMs: number,
    private readonly maxPermits: number,
  ) {}

  /** Resolves when woken (or on close). */
  wait(): Promise<void> {
    if (this.permits > 0) {
      this.permits -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.arm();
    });
  }

  get waiting(): number {
    return this.waiters.length;
  }

  wakeOne(): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter();
    else this.permits = Math.min(this.permits + 1, this.maxPermits);
    if (this.waiters.length === 0) this.disarm();
  }

  wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
    this.disarm();
  }

  private tickOnce(): void {
    this.waiters.shift()?.();
    if (this.waiters.length === 0) this.disarm();
  }

  private arm(): void {
    if (this.tick) return;
    this.tick = setInterval(() => this.tickOnce(), this.safetyTickMs);
  }

  private disarm(): void {
    if (this.tick) clearInterval(this.tick);
    this.tick = undefined;
  }
}
